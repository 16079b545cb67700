"""TIMESTAMP literals and the session time zone, against PySpark 4.3 on both runtimes.

Spark reads ``TIMESTAMP '2024-03-10 01:30:00'`` when the query is parsed, as a wall time in the
session time zone of that moment (a DST gap moves it forward, an overlap takes the earlier
offset); a literal with a zone (``UTC``, ``Z``, ``+05:30``, a region) is that instant.  Values are
compared as strings (rendered in the session zone), epoch seconds and collected datetimes, and the
auto-generated column name of a literal shows it in the session zone.
"""

from __future__ import annotations

import datetime as dt

import pytest

from ember import functions as F
from ember.errors import EmberError
from tests.conformance.ember_adapter import RUNTIMES, new_session

pytestmark = pytest.mark.spark

TZ_KEY = "spark.sql.session.timeZone"
ZONES = ("America/Los_Angeles", "Europe/Berlin")

_LITERALS = [
    "TIMESTAMP'2024-03-10 01:30:00'",   # no zone: the session zone
    "TIMESTAMP'2024-03-10 02:30:00'",   # in the US DST gap
    "TIMESTAMP'2024-11-03 01:30:00'",   # in the US DST overlap
    "TIMESTAMP'2024-03-31 02:30:00'",   # in the EU DST gap
    "TIMESTAMP'2024-10-27 02:30:00.25'",  # in the EU DST overlap
    "TIMESTAMP'2024-03-10'",
    "TIMESTAMP_LTZ'2024-03-10 01:30'",
    "TIMESTAMP'2024-03-10 01:30:00 UTC'",
    "TIMESTAMP'2024-03-10 01:30:00Z'",
    "TIMESTAMP'2024-03-10 01:30:00+05:30'",
    "TIMESTAMP'2024-03-10 01:30:00 America/New_York'",
    "CAST('2024-03-10 02:30:00' AS TIMESTAMP)",
    "to_timestamp('2024-03-31 02:30:00')",
]

QUERIES = [
    "SELECT " + ", ".join(f"CAST({e} AS STRING) AS s{i}, CAST({e} AS LONG) AS l{i}, {e} AS t{i}"
                          for i, e in enumerate(_LITERALS)),
    "SELECT CAST(ts AS STRING) AS s, ts FROM VALUES (TIMESTAMP'2024-03-10 01:30:00'), "
    "(TIMESTAMP'2024-03-10 01:30:00 UTC') AS t(ts)",
    # the auto-generated names show the literals in the session time zone
    "SELECT TIMESTAMP'2024-03-10 01:30:00', TIMESTAMP'2024-03-10 01:30:00 UTC', "
    "TIMESTAMP'2024-11-03 01:30:00.5', TIMESTAMP'2024-03-10 01:30:00' + INTERVAL 1 HOUR",
    "SELECT count(*) AS n FROM VALUES (1) AS t(x) "
    "WHERE TIMESTAMP'2024-03-10 01:30:00' = CAST('2024-03-10 01:30:00' AS TIMESTAMP)",
]

ERRORS = [
    "SELECT TIMESTAMP'2024-13-01 00:00:00'",
    "SELECT TIMESTAMP'2024-03-10 01:30:00 Mars/Olympus'",
]


@pytest.fixture(scope="module", params=ZONES)
def spark_tz(request, spark):
    session = spark.newSession()
    session.conf.set(TZ_KEY, request.param)
    return request.param, session


def _rows(df) -> list[tuple]:
    return [tuple(r) for r in df.collect()]


@pytest.mark.parametrize("runtime", RUNTIMES)
def test_timestamp_literals_follow_the_session_time_zone(spark_tz, runtime):
    zone, spark = spark_tz
    session = new_session({TZ_KEY: zone}, runtime)
    for sql in QUERIES:
        got, expected = session.sql(sql), spark.sql(sql)
        assert got.columns == expected.columns, sql
        assert _rows(got) == _rows(expected), sql


@pytest.mark.parametrize("runtime", RUNTIMES)
def test_invalid_timestamp_literals_raise_sparks_class(spark_tz, runtime):
    zone, spark = spark_tz
    session = new_session({TZ_KEY: zone}, runtime)
    for sql in ERRORS:
        with pytest.raises(Exception) as s_err:
            spark.sql(sql).collect()
        with pytest.raises(EmberError) as e_err:
            session.sql(sql).collect()
        assert e_err.value.error_class == s_err.value.getCondition(), sql


@pytest.mark.parametrize("runtime", RUNTIMES)
def test_dataframe_side_follows_the_session_time_zone(spark_tz, runtime):
    """``expr`` / ``selectExpr`` / ``filter`` text is parsed in the session zone; a Python naive
    ``datetime`` (``lit``, ``createDataFrame``) and ``to_timestamp`` of a string as in PySpark."""
    from pyspark.sql import functions as PF

    zone, spark = spark_tz
    session = new_session({TZ_KEY: zone}, runtime)
    naive = dt.datetime(2024, 3, 10, 1, 30)
    lit = "TIMESTAMP'2024-03-10 01:30:00'"

    def results(s, fns) -> list:
        def shown(df):
            return _rows(df.select(fns.col("x").cast("string"), fns.col("x").cast("long"),
                                   fns.col("x")))

        to_ts = fns.to_timestamp(fns.lit("2024-03-10 02:30:00"))
        return [
            shown(s.range(1).select(fns.expr(lit).alias("x"))),
            shown(s.range(1).selectExpr(f"{lit} AS x")),
            _rows(s.range(1).filter(f"{lit} = CAST('2024-03-10 01:30:00' AS TIMESTAMP)")),
            shown(s.range(1).select(fns.lit(naive).alias("x"))),
            shown(s.createDataFrame([(naive,)], "x timestamp")),
            shown(s.range(1).select(to_ts.alias("x"))),
            s.range(1).select(fns.lit(naive)).columns,
        ]

    assert results(session, F) == results(spark, PF)
