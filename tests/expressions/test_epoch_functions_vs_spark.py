"""timestamp_seconds / timestamp_millis / timestamp_micros and unix_seconds / unix_millis /
unix_micros (Spark's SecondsToTimestamp, MillisToTimestamp, MicrosToTimestamp, UnixSeconds,
UnixMillis, UnixMicros) against PySpark 4.3 on both runtimes: names, types, rows and error
classes (DATETIME_OVERFLOW past the long range of microseconds, UNEXPECTED_INPUT_TYPE)."""

from __future__ import annotations

from typing import Any

import pytest

from tests.conformance.ember_adapter import RUNTIMES, new_session
from tests.differential.compare import Failed, sql_outcome

#: every column holds a NULL, so Spark's nullability (child.nullable) is True everywhere
VIEW = ("CREATE OR REPLACE TEMPORARY VIEW e AS SELECT * FROM VALUES "
        "(1230219000, 1230219000123, 1.5D, CAST(1.25 AS FLOAT), 1.000001BD, "
        "TIMESTAMP'2020-01-01 00:00:01.9', CAST(7 AS TINYINT)), "
        "(-1, -1, -1.0000005D, CAST('NaN' AS FLOAT), -0.5BD, "
        "TIMESTAMP'1969-12-31 23:59:59.5', CAST(-7 AS TINYINT)), "
        "(0, 0, CAST('Infinity' AS DOUBLE), CAST(-2.5 AS FLOAT), 0.000000BD, "
        "TIMESTAMP'1969-12-31 23:59:59.9995', CAST(0 AS TINYINT)), "
        "(NULL, NULL, NULL, NULL, NULL, NULL, NULL) AS e(l, ms, d, f, dec, ts, b)")

QUERIES = {
    "from_epoch": "SELECT timestamp_seconds(l), timestamp_seconds(d), timestamp_seconds(f), "
                  "timestamp_seconds(dec), timestamp_seconds(b), timestamp_millis(ms), "
                  "timestamp_micros(ms), timestamp_millis(b) FROM e",
    "to_epoch": "SELECT unix_seconds(ts), unix_millis(ts), unix_micros(ts), "
                "unix_micros(timestamp_seconds(d * 1e300D)), unix_seconds(timestamp_seconds(l)) "
                "FROM e",
    "seconds_overflow": "SELECT timestamp_seconds(l * 10000000L) FROM e",
    "decimal_overflow": "SELECT timestamp_seconds(CAST(l AS DECIMAL(20, 0)) * 10000000000) FROM e",
    "millis_overflow": "SELECT timestamp_millis(9223372036854775807L + ms * 0) FROM e",
    "string_seconds": "SELECT timestamp_seconds('1') FROM e",
    "decimal_millis": "SELECT timestamp_millis(dec) FROM e",
    "date_unix_seconds": "SELECT unix_seconds(DATE'2020-01-01') FROM e",
}


@pytest.fixture(scope="module")
def spark_outcomes(spark: Any) -> dict[str, Any]:
    session = spark.newSession()
    session.sql(VIEW)
    return {name: sql_outcome(session.sql, sql, is_spark=True) for name, sql in QUERIES.items()}


@pytest.mark.differential
@pytest.mark.parametrize("runtime", RUNTIMES)
@pytest.mark.parametrize("name", sorted(QUERIES))
def test_epoch_function_matches_spark(spark_outcomes: dict[str, Any], name: str,
                                      runtime: str) -> None:
    session = new_session(runtime=runtime)
    session.sql(VIEW)
    expected = spark_outcomes[name]
    actual = sql_outcome(session.sql, QUERIES[name], is_spark=False)
    if isinstance(expected, Failed) or isinstance(actual, Failed):
        assert isinstance(expected, Failed) and isinstance(actual, Failed), (expected, actual)
        assert expected.cls == actual.cls, (expected, actual)
    else:
        assert expected == actual, f"Spark: {expected!r}\nEmber: {actual!r}"


def test_oracle_answers_rows_and_overflows(spark_outcomes: dict[str, Any]) -> None:
    assert not isinstance(spark_outcomes["from_epoch"], Failed)
    assert spark_outcomes["seconds_overflow"].cls == "DATETIME_OVERFLOW"
