"""CheckCartesianProducts (``spark.sql.crossJoin.enabled=false``) against PySpark, on both
runtimes: implicit cartesian products (no condition, or no conjunct relating the two sides, also
after pushdown) fail with Spark's ``_LEGACY_ERROR_TEMP_1211``; explicit CROSS JOINs, equi-joins,
``ON false``, existence joins and subqueries run; with the default (true) every query runs."""

from __future__ import annotations

from typing import Any

import pytest

from tests.conformance.ember_adapter import RUNTIMES, check_outcome, new_session, run_sql
from tests.conformance.generate import run_statement

SETUP = [
    "CREATE OR REPLACE TEMPORARY VIEW a AS SELECT * FROM VALUES (1, 'p'), (2, 'q') AS a(x, s)",
    "CREATE OR REPLACE TEMPORARY VIEW b AS SELECT * FROM VALUES (1), (3), (NULL) AS b(y)",
]

QUERIES = [
    "SELECT * FROM a, b",
    "SELECT * FROM a JOIN b",
    "SELECT * FROM a CROSS JOIN b",
    "SELECT * FROM a JOIN b ON true",
    "SELECT * FROM a JOIN b ON x = y",
    "SELECT * FROM a JOIN b ON false",
    "SELECT * FROM a JOIN b ON NULL",
    "SELECT * FROM a LEFT JOIN b ON x > 0",
    "SELECT * FROM a RIGHT JOIN b ON y > 0",
    "SELECT * FROM a FULL JOIN b ON x = y",
    "SELECT * FROM a FULL JOIN b ON x > 1",
    "SELECT * FROM a JOIN b ON x + 1 > 0 AND y > 0",
    "SELECT * FROM a JOIN b ON x + y > 2",
    "SELECT * FROM a, b WHERE x = y",
    "SELECT * FROM a, b WHERE x = 1 AND y = 1",
    "SELECT * FROM a LEFT SEMI JOIN b",
    "SELECT * FROM a LEFT ANTI JOIN b ON y > 5",
    "SELECT * FROM a WHERE EXISTS (SELECT 1 FROM b)",
    "SELECT * FROM a WHERE x IN (SELECT y FROM b)",
    "SELECT x, (SELECT max(y) FROM b) AS m FROM a",
    "SELECT x, (SELECT y FROM b WHERE y = 1) AS m FROM a",
    "SELECT x, (SELECT max(y) FROM b GROUP BY y HAVING y = 3) AS m FROM a",
    "SELECT x, (SELECT max(y) FROM b WHERE b.y = a.x) AS m FROM a",
    "SELECT x, (SELECT max(y) FROM b WHERE a.x > 1) AS m FROM a",
    "SELECT * FROM a JOIN b ON x = y JOIN a a2",
    "SELECT * FROM a JOIN b ON x = y CROSS JOIN a a2",
]


@pytest.fixture(scope="module")
def oracles(spark: Any) -> dict[str, Any]:
    sessions = {}
    for enabled in ("true", "false"):
        session = spark.newSession()
        session.conf.set("spark.sql.crossJoin.enabled", enabled)
        for statement in SETUP:
            session.sql(statement)
        sessions[enabled] = session
    return sessions


@pytest.mark.parametrize("runtime", RUNTIMES)
@pytest.mark.parametrize("enabled", ["false", "true"])
@pytest.mark.parametrize("sql", QUERIES)
def test_cross_join_enabled_as_spark(oracles: dict[str, Any], sql: str, enabled: str,
                                     runtime: str) -> None:
    expected = run_statement(oracles[enabled], sql)
    session = new_session({"spark.sql.crossJoin.enabled": enabled}, runtime)
    for statement in SETUP:
        session.sql(statement)
    actual = run_sql(session, sql)
    problem = check_outcome(expected, actual)
    assert problem is None, f"{sql} (crossJoin.enabled={enabled}, {runtime}):\n{problem}"


def test_some_queries_are_refused_and_some_run(oracles: dict[str, Any]) -> None:
    """The list above exercises both outcomes of the check (Spark's, not Ember's, decides)."""
    outcomes = [run_statement(oracles["false"], sql) for sql in QUERIES]
    refused = [o for o in outcomes if o.get("error", {}).get("errorClass") == "_LEGACY_ERROR_TEMP_1211"
               or "_LEGACY_ERROR_TEMP_1211" in str(o.get("error"))]
    assert 5 <= len(refused) < len(QUERIES) - 5
