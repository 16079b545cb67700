"""to_date / to_timestamp with a pattern parse as strictly as Spark's DateTimeFormatter, against
PySpark on both runtimes, ANSI on (CANNOT_PARSE_TIMESTAMP) and off (NULL): a field of the wrong
width, text around the value, and dates that do not exist (rolled over by a lenient parser) are
rejected; one-letter fields take one or two digits."""

from __future__ import annotations

from typing import Any

import pytest

from tests.conformance.ember_adapter import RUNTIMES, check_outcome, new_session, run_sql
from tests.conformance.generate import run_statement

CASES = [
    ("2020-1-2", "yyyy-MM-dd"), ("2020-01-2", "yyyy-MM-d"), ("2020-02-30", "yyyy-MM-dd"),
    ("2020-2-3", "yyyy-M-d"), ("2020-12-31", "yyyy-M-d"), ("20-02-03", "yy-MM-dd"),
    (" 2020-01-01", "yyyy-MM-dd"), ("2020-01-01 ", "yyyy-MM-dd"), ("2020-01-011", "yyyy-MM-dd"),
    ("2021-02-29", "yyyy-MM-dd"), ("2020-02-29", "yyyy-MM-dd"), ("2020/01/01", "yyyy-MM-dd"),
    ("12020-01-01", "yyyy-MM-dd"), ("2020-13-01", "yyyy-MM-dd"), ("2020 001", "yyyy DDD"),
    ("2020-01-01 25:00:00", "yyyy-MM-dd HH:mm:ss"), ("2020-04-31 10:00:00", "yyyy-MM-dd HH:mm:ss"),
    ("2020-01-01 1:2:3", "yyyy-MM-dd H:m:s"), ("2020-01-01 01:02:03", "yyyy-MM-dd H:m:s"),
    ("2020-01-01 1:02:03", "yyyy-MM-dd HH:mm:ss"), ("2020-01-01T10:00:00", "yyyy-MM-dd'T'HH:mm:ss"),
    ("20200131", "yyyyMMdd"), ("20200231", "yyyyMMdd"),
]


def _sql(value: str, pattern: str) -> str:
    fn = "to_timestamp" if "H" in pattern else "to_date"
    return f'SELECT {fn}("{value}", "{pattern}") AS r'


@pytest.fixture(scope="module")
def oracles(spark: Any) -> dict[str, Any]:
    out = {}
    for ansi in ("true", "false"):
        session = spark.newSession()
        session.conf.set("spark.sql.ansi.enabled", ansi)
        out[ansi] = session
    return out


@pytest.mark.parametrize("runtime", RUNTIMES)
@pytest.mark.parametrize("ansi", ["true", "false"])
@pytest.mark.parametrize("value,pattern", CASES)
def test_pattern_parse_as_spark(oracles: dict[str, Any], value: str, pattern: str, ansi: str,
                                runtime: str) -> None:
    sql = _sql(value, pattern)
    expected = run_statement(oracles[ansi], sql)
    actual = run_sql(new_session({"spark.sql.ansi.enabled": ansi}, runtime), sql)
    problem = check_outcome(expected, actual)
    assert problem is None, f"{sql} (ansi={ansi}, {runtime}):\n{problem}"


def test_a_column_of_mixed_texts(spark: Any) -> None:
    """One vectorized parse over many rows: good and bad texts side by side (ANSI off)."""
    values = ", ".join(f'("{v}")' for v, p in CASES if p == "yyyy-MM-dd")
    sql = f'SELECT v, to_date(v, "yyyy-MM-dd") AS d FROM VALUES {values} AS t(v)'
    session = spark.newSession()
    session.conf.set("spark.sql.ansi.enabled", "false")
    expected = run_statement(session, sql)
    actual = run_sql(new_session({"spark.sql.ansi.enabled": "false"}), sql)
    assert check_outcome(expected, actual) is None
