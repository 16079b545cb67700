"""ANSI intervals against PySpark 4.3: the same SQL on Ember and Spark, column names, types and
rows compared (day-time intervals collect as ``datetime.timedelta`` on both; year-month
intervals are compared through CAST AS STRING because PySpark cannot collect them).

Many expressions share one query to keep Spark time to a few seconds.
"""

from __future__ import annotations

import datetime as dt

import pyarrow as pa
import pytest

import ember
from ember.errors import EmberError

QUERIES = [
    # literals: single unit, quoted or not, fractional seconds, negatives, multi-unit
    "SELECT INTERVAL 8 MINUTES, INTERVAL '1' HOUR, INTERVAL 30 SECONDS, INTERVAL '1.5' SECOND, "
    "INTERVAL '1 02:03:04.5' DAY TO SECOND, INTERVAL 1 DAY 2 HOURS, INTERVAL '1 day 2 hours', "
    "INTERVAL -3 DAYS, INTERVAL '-1' HOUR, - INTERVAL '1' HOUR, INTERVAL 100 HOURS, "
    "INTERVAL 0 SECONDS, INTERVAL 2 WEEKS, INTERVAL 3 MILLISECONDS, "
    "INTERVAL 1 day 3 microseconds, INTERVAL 1 DAY 2 HOURS 3 MINUTES 4.5 SECONDS",
    # unit TO unit forms
    "SELECT INTERVAL '02:03' HOUR TO MINUTE, INTERVAL '1 02' DAY TO HOUR, "
    "INTERVAL '1 02:03' DAY TO MINUTE, INTERVAL '02:03:04.123456' HOUR TO SECOND, "
    "INTERVAL '03:04.5' MINUTE TO SECOND, INTERVAL '-1 02:03:04' DAY TO SECOND, "
    "INTERVAL -'1 02:03:04' DAY TO SECOND, INTERVAL '25:00' HOUR TO MINUTE, "
    "INTERVAL '1' DAY + '2' HOUR",
    # year-month values (as strings) and their arithmetic
    "SELECT CAST(INTERVAL '1-2' YEAR TO MONTH AS STRING), "
    "CAST(INTERVAL 1 YEAR 2 MONTHS AS STRING), "
    "CAST(INTERVAL '-1-11' YEAR TO MONTH AS STRING), CAST(INTERVAL '-11' MONTH AS STRING), "
    "CAST(INTERVAL '-2' YEAR AS STRING), CAST(INTERVAL '1' YEAR * 3 AS STRING), "
    "CAST(INTERVAL '3' YEAR * 1.5 AS STRING), CAST(INTERVAL '2' MONTH / 3 AS STRING), "
    "CAST(INTERVAL '-2' MONTH / 4 AS STRING), CAST(INTERVAL '1' YEAR * 0.3D AS STRING), "
    "CAST(INTERVAL '1' YEAR - INTERVAL '1-6' YEAR TO MONTH AS STRING), "
    "CAST(INTERVAL '1' YEAR + INTERVAL '2' MONTH AS STRING), "
    "CAST(- INTERVAL '1-1' YEAR TO MONTH AS STRING)",
    # datetime +/- interval, timestamp/date differences
    "SELECT TIMESTAMP'2024-01-01 10:00:00' + INTERVAL 8 MINUTES, "
    "TIMESTAMP'2024-01-01 10:00:00' - INTERVAL '1' HOUR, "
    "INTERVAL '1' DAY + TIMESTAMP'2024-01-01 10:00:00', "
    "DATE'2024-01-01' + INTERVAL 2 HOURS, "
    "DATE'2024-01-01' - INTERVAL '1 02:03:04.5' DAY TO SECOND, "
    "TIMESTAMP'2024-01-31 10:00:00' + INTERVAL '1' MONTH, "
    "TIMESTAMP'2024-03-31 10:00:00' - INTERVAL '1-1' YEAR TO MONTH, "
    "TIMESTAMP'2024-01-02 10:00:00' - TIMESTAMP'2024-01-01 08:30:00', "
    "DATE'2024-01-05' - DATE'2024-01-01', DATE'2024-01-05' + INTERVAL 3 DAYS, "
    "TIMESTAMP'2024-01-01 10:00:00' - DATE'2024-01-01', '2024-01-01 10:00:00' + INTERVAL '1' HOUR, "
    "TIMESTAMP'2024-01-01 10:00:00' + INTERVAL 1 DAY 2 HOURS",
    # interval arithmetic, multiply/divide (HALF_UP), NULLs
    "SELECT INTERVAL '1' DAY + INTERVAL '2' HOUR, INTERVAL '1' HOUR - INTERVAL 30 MINUTES, "
    "INTERVAL '1' HOUR * 3, 2 * INTERVAL '1' MINUTE, INTERVAL '1' HOUR / 7, "
    "INTERVAL '-1' HOUR / 7, "
    "INTERVAL '1' HOUR * 1.5, INTERVAL '1' HOUR * 0.3D, INTERVAL '1' DAY / 2.5D, "
    "INTERVAL 10 SECONDS * -0.15D, INTERVAL '1' DAY / 2.5BD, INTERVAL '1' SECOND * 1.0000005BD, "
    "- INTERVAL '1 02:03' DAY TO MINUTE, NULL + INTERVAL '1' HOUR, INTERVAL '1' HOUR - NULL",
    # comparisons across fields, casts
    "SELECT INTERVAL '1' HOUR < INTERVAL 61 MINUTES, INTERVAL '1' HOUR = INTERVAL 60 MINUTES, "
    "INTERVAL '1' DAY > INTERVAL '23' HOUR, INTERVAL '1' YEAR = INTERVAL '12' MONTH, "
    "INTERVAL '1' YEAR >= INTERVAL '13' MONTH, greatest(INTERVAL '1' HOUR, INTERVAL '2' MINUTE), "
    "INTERVAL '1' HOUR IN (INTERVAL 60 MINUTES), "
    "CAST(INTERVAL '1 02:03:04.5' DAY TO SECOND AS STRING), "
    "CAST(INTERVAL -'0 00:00:01.5' DAY TO SECOND AS STRING), CAST(INTERVAL '0' SECOND AS STRING), "
    "CAST(INTERVAL '12.000100' SECOND AS STRING), "
    "CAST(INTERVAL '-100:02' HOUR TO MINUTE AS STRING), "
    "CAST('1 02:03:04.5' AS INTERVAL DAY TO SECOND), CAST('INTERVAL ''3'' HOUR' AS INTERVAL HOUR), "
    "CAST('10' AS INTERVAL MINUTE), CAST(INTERVAL '90' MINUTE AS INTERVAL HOUR), "
    "CAST(CAST('1-2' AS INTERVAL YEAR TO MONTH) AS STRING)",
    # NULL operands, abs, make_dt_interval / make_ym_interval
    "SELECT TIMESTAMP'2024-01-01 00:00:00' + NULL, TIMESTAMP'2024-01-01 00:00:00' - NULL, "
    "DATE'2024-01-01' - NULL, NULL - INTERVAL '1' HOUR, abs(INTERVAL '-1' HOUR), "
    "CAST(abs(INTERVAL '-1' MONTH) AS STRING), make_dt_interval(1, 2, 3, 4.5), "
    "make_dt_interval(1), make_dt_interval(), CAST(make_ym_interval(1, 2) AS STRING), "
    "CAST(make_ym_interval(3) AS STRING)",
    # intervals to numbers: a count of the end field's units (truncated; seconds keep their
    # fraction in a decimal)
    "SELECT CAST(INTERVAL '1' DAY AS INT), CAST(INTERVAL '36' HOUR AS BIGINT), "
    "CAST(INTERVAL '1 02' DAY TO HOUR AS INT), CAST(INTERVAL '-25' HOUR AS SMALLINT), "
    "CAST(INTERVAL '-1.5' SECOND AS INT), CAST(INTERVAL '1.5' SECOND AS DECIMAL(5, 2)), "
    "CAST(INTERVAL '3' DAY AS DECIMAL(5, 1)), CAST(INTERVAL '2' YEAR AS TINYINT), "
    "CAST(INTERVAL '-1-11' YEAR TO MONTH AS INT), CAST(INTERVAL '-13' MONTH AS BIGINT)",
]

ERRORS = [
    "SELECT INTERVAL 1.5 HOURS",
    "SELECT INTERVAL 1 MONTH 2 DAYS",
    "SELECT INTERVAL '1:2' DAY TO SECOND",
    "SELECT INTERVAL '1 25:00' DAY TO MINUTE",
    "SELECT INTERVAL '1' HOUR TO DAY",
    "SELECT INTERVAL '1 day 2 bananas'",
    "SELECT INTERVAL '1' HOUR < INTERVAL '1' MONTH",
    "SELECT INTERVAL '1' MONTH + INTERVAL '2' DAY",
    "SELECT INTERVAL '1' HOUR + 1",
    "SELECT INTERVAL '1' HOUR * INTERVAL '1' HOUR",
    "SELECT INTERVAL '1' HOUR / 0",
    "SELECT INTERVAL '106751991' DAY * 2",
    "SELECT INTERVAL '106751991' DAY + INTERVAL '106751991' DAY",
    "SELECT - (INTERVAL '-178956970-8' YEAR TO MONTH)",
    "SELECT CAST('abc' AS INTERVAL DAY)",
    "SELECT CAST('1 day' AS INTERVAL DAY)",
    "SELECT make_dt_interval(106751992)",
    "SELECT CAST(INTERVAL '200' DAY AS TINYINT)",
    "SELECT CAST(INTERVAL '1' DAY AS DOUBLE)",
]


@pytest.fixture(scope="module")
def session():
    return ember.Session()


def _ember(session, sql):
    df = session.sql(sql)
    schema = [(f.name, f.data_type.simple_string()) for f in df.schema.fields]
    return schema, [tuple(r) for r in df.collect()]


def _spark(spark, sql):
    df = spark.sql(sql)
    schema = [(f.name, f.dataType.simpleString()) for f in df.schema.fields]
    return schema, [tuple(r) for r in df.collect()]


def _spark_class(e: Exception) -> str | None:
    for attr in ("getCondition", "getErrorClass"):
        fn = getattr(e, attr, None)
        if fn is not None:
            try:
                return fn()
            except Exception:  # noqa: BLE001 - py4j errors without a class
                return None
    return None


def test_queries_match_spark(spark, session):
    for sql in QUERIES:
        e_schema, e_rows = _ember(session, sql)
        s_schema, s_rows = _spark(spark, sql)
        assert e_schema == s_schema, sql
        assert e_rows == s_rows, sql


def test_errors_match_spark(spark, session):
    for sql in ERRORS:
        with pytest.raises(Exception) as s_err:
            spark.sql(sql).collect()
        with pytest.raises(EmberError) as e_err:
            session.sql(sql).collect()
        s_class = _spark_class(s_err.value)
        e_class = e_err.value.error_class
        if s_class is None:  # a bare Java exception (Math.multiplyExact: "long overflow")
            assert e_class is None, sql
            assert e_err.value.message.split(":")[-1].strip() in str(s_err.value), sql
        elif s_class.startswith("_LEGACY_ERROR") or s_class == "PARSE_SYNTAX_ERROR":
            # legacy parse errors: compare the message text
            assert e_err.value.message in str(s_err.value), sql
        else:
            assert e_class == s_class, sql


ROWS = [
    (1, dt.datetime(2024, 1, 1, 10, 0), dt.timedelta(minutes=8)),
    (2, dt.datetime(2024, 1, 1, 10, 30), dt.timedelta(days=-1, seconds=5)),
    (3, dt.datetime(2024, 1, 1, 12, 0), None),
    (4, None, dt.timedelta(hours=1, microseconds=7)),
]


def test_interval_columns_and_time_range_join_match_spark(spark, session):
    """A duration column from Arrow, interval expressions over columns, and the time-range
    join condition of stream-stream joins."""
    table = pa.table({
        "id": pa.array([r[0] for r in ROWS], pa.int32()),
        "t": pa.array([r[1] for r in ROWS], pa.timestamp("us", tz="UTC")),
        "d": pa.array([r[2] for r in ROWS], pa.duration("us")),
    })
    session.createDataFrame(table).createOrReplaceTempView("iv")
    spark.createDataFrame(ROWS, "id int, t timestamp, d interval day to second") \
        .createOrReplaceTempView("iv")
    queries = [
        "SELECT id, d, t + d, t - d, d * 2, d / 4, -d, CAST(d AS STRING), d > INTERVAL 1 MINUTE, "
        "t - TIMESTAMP'2024-01-01 00:00:00', d + INTERVAL '1' DAY FROM iv ORDER BY id",
        "SELECT d, count(*) FROM iv GROUP BY d ORDER BY d",
        "SELECT l.id, r.id FROM iv l JOIN iv r ON l.t > r.t - INTERVAL 8 MINUTES "
        "AND l.t < r.t + INTERVAL 1 HOUR ORDER BY l.id, r.id",
    ]
    for sql in queries:
        e_schema, e_rows = _ember(session, sql)
        s_schema, s_rows = _spark(spark, sql)
        assert e_schema == s_schema, sql
        assert e_rows == s_rows, sql
    # show() text (Spark prints an interval cell as its CAST to STRING)
    from ember import types as T
    from ember.expressions.intervals import python_interval_string

    _, rows = _spark(spark, "SELECT d, CAST(d AS STRING) FROM iv WHERE d IS NOT NULL")
    for d, text in rows:
        assert python_interval_string(d, T.DayTimeIntervalType(0, 3)) == text


def test_month_arithmetic_in_session_time_zone(spark, session):
    """``ts +/- year-month interval`` works on the local date-time (DST and month ends), while
    ``ts + day-time interval`` adds microseconds."""
    sql = ("SELECT CAST(CAST('2024-01-31 01:30:00' AS TIMESTAMP) + INTERVAL '1' MONTH AS STRING), "
           "CAST(CAST('2024-03-31 01:30:00' AS TIMESTAMP) - INTERVAL '1' MONTH AS STRING), "
           "CAST(CAST('2024-03-09 02:30:00' AS TIMESTAMP) + INTERVAL '1' DAY AS STRING), "
           "CAST(CAST('2024-03-09 12:00:00' AS TIMESTAMP) + INTERVAL '1' DAY AS STRING), "
           "CAST(CAST('2024-02-10 02:30:00' AS TIMESTAMP) + INTERVAL '1' MONTH AS STRING), "
           "CAST(CAST('2024-10-03 01:30:00' AS TIMESTAMP) + INTERVAL '1' MONTH AS STRING), "
           "CAST(CAST('2024-03-10 12:00:00' AS TIMESTAMP) - "
           "CAST('2024-03-09 12:00:00' AS TIMESTAMP) AS STRING)")
    key = "spark.sql.session.timeZone"
    before = spark.conf.get(key)
    spark.conf.set(key, "America/Los_Angeles")
    try:
        expected = _spark(spark, sql)
    finally:
        spark.conf.set(key, before)
    local = ember.Session()
    local.conf.set(key, "America/Los_Angeles")
    assert _ember(local, sql) == expected


def test_expr_goes_through_the_parser(session):
    from ember import functions as F

    df = session.createDataFrame(pa.table({"t": pa.array([dt.datetime(2024, 1, 1)],
                                                         pa.timestamp("us", tz="UTC"))}))
    out = df.select(F.expr("t + INTERVAL 1 HOUR 30 MINUTES").alias("e")).collect()
    assert out[0][0] == dt.datetime(2024, 1, 1, 1, 30)


def test_stream_join_watermark_algebra_reads_the_interval_nodes(session):
    """The state watermark of ``lt > rt - INTERVAL 8 MINUTES AND lt < rt + INTERVAL 1 HOUR``
    (Spark's StreamingJoinHelper): left evicts below W - 8 min, right below W - 1 h."""
    from ember.physical.streaming.state_watermark import state_value_watermark

    def frame(name):
        ts = pa.array([dt.datetime(2024, 1, 1)], pa.timestamp("us", tz="UTC"))
        session.createDataFrame(pa.table({name: ts})).createOrReplaceTempView(name.upper())

    frame("lt")
    frame("rt")
    plan = session.sql("SELECT * FROM LT JOIN RT ON lt > rt - INTERVAL 8 MINUTES "
                       "AND lt < rt + INTERVAL '1' HOUR")._qe.analyzed
    while type(plan).__name__ != "Join":
        plan = plan.children[0]
    marked = {a.expr_id: a.copy(watermark_delay_ms=0)
              for child in plan.children for a in child.output}
    cond = plan.condition.transform_up(
        lambda e: marked.get(e.expr_id) if type(e).__name__ == "AttributeReference" else None)
    left = [marked[a.expr_id] for a in plan.children[0].output]
    right = [marked[a.expr_id] for a in plan.children[1].output]
    w = 10_000_000
    assert state_value_watermark(left, right, cond, w) == w - 8 * 60 * 1000
    assert state_value_watermark(right, left, cond, w) == w - 60 * 60 * 1000
