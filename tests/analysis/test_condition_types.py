"""Conditions that are not boolean (issue 18, item 8), checked against PySpark on both runtimes.

Spark's CheckAnalysis raises ``JOIN_CONDITION_IS_NOT_BOOLEAN_TYPE`` for a join condition and
``DATATYPE_MISMATCH.FILTER_NOT_BOOLEAN`` for a WHERE condition (after the expressions' own type
checks); its parser casts a HAVING condition that is not a predicate to boolean
(``withHavingClause``), so ``HAVING sum(x)`` runs and ``HAVING 'x'`` fails at run time with
``CAST_INVALID_INPUT``.  An aggregate's ``FILTER (WHERE ...)`` is ``INVALID_AGGREGATE_FILTER``.
"""

from __future__ import annotations

from typing import Any

import pytest

from tests.conformance.ember_adapter import RUNTIMES, check_outcome, new_session, run_sql
from tests.conformance.generate import run_statement

VIEWS = ("CREATE OR REPLACE TEMPORARY VIEW ti AS SELECT * FROM VALUES (1), (2) AS ti(id)",
         "CREATE OR REPLACE TEMPORARY VIEW ts AS SELECT * FROM VALUES ('1'), ('x') AS ts(id)")

JOINS = [
    "SELECT * FROM ti JOIN ts ON ti.id || ts.id",  # the repro
    "SELECT * FROM ti JOIN ts ON ti.id",
    "SELECT * FROM ti JOIN ts ON 1",
    "SELECT * FROM ti JOIN ts ON NULL",
    "SELECT * FROM ti JOIN ts ON 'true'",
    "SELECT * FROM ti LEFT JOIN ts ON ti.id + 1",
    "SELECT * FROM ti LEFT SEMI JOIN ts ON ts.id",
    "SELECT * FROM ti FULL JOIN ts ON CAST(ti.id AS string)",
    "SELECT * FROM ti CROSS JOIN ts ON ti.id || ts.id",
]

OTHERS = [
    "SELECT * FROM ti JOIN ts ON ti.id = ts.id AND ti.id",  # the AND is checked first
    "SELECT * FROM ti JOIN ts ON ti.id = (SELECT 1)",
    "SELECT * FROM ti WHERE id",
    "SELECT * FROM ti WHERE 'x'",
    "SELECT * FROM ti WHERE NULL",
    "SELECT * FROM ti WHERE id + 1",
    "SELECT * FROM ti JOIN ts USING (id) WHERE 'x'",
    "SELECT sum(id) FROM ti GROUP BY id HAVING sum(id)",
    "SELECT sum(id) FROM ti GROUP BY id HAVING id",
    "SELECT sum(id) FROM ti GROUP BY id HAVING 'x'",
    "SELECT sum(id) FROM ti GROUP BY id HAVING 'true'",
    "SELECT sum(id) FROM ti GROUP BY id HAVING NULL",
    "SELECT sum(id) FROM ti GROUP BY id HAVING max(id) - 1",
    "SELECT sum(id) AS s FROM ti HAVING s",
    "SELECT count(*) FILTER (WHERE id) FROM ti",
    "SELECT CASE WHEN id THEN 1 END FROM ti",
]

_sessions: dict[str, Any] = {}


def _session(key: str, make: Any) -> Any:
    if key not in _sessions:
        session = make()
        for v in VIEWS:
            session.sql(v)
        _sessions[key] = session
    return _sessions[key]


def _spark_outcome(spark: Any, sql: str) -> dict[str, Any]:
    return run_statement(_session("oracle", spark.newSession), sql)


@pytest.mark.parametrize("runtime", RUNTIMES)
@pytest.mark.parametrize("sql", JOINS + OTHERS, ids=[f"q{i:02d}" for i in range(len(JOINS + OTHERS))])
def test_condition_as_in_spark(spark: Any, runtime: str, sql: str) -> None:
    expected = _spark_outcome(spark, sql)
    problem = check_outcome(expected, run_sql(_session(runtime, lambda: new_session({}, runtime)), sql))
    assert problem is None, f"{sql}\n{problem}"


@pytest.mark.parametrize("sql", JOINS)
def test_join_condition_error_parameters(spark: Any, sql: str) -> None:
    expected = _spark_outcome(spark, sql)["error"]
    assert expected["error_class"] == "JOIN_CONDITION_IS_NOT_BOOLEAN_TYPE"
    actual = run_sql(_session("local", lambda: new_session({}, "local")), sql)
    assert actual.error_class == expected["error_class"]
    assert actual.error.parameters == expected["message_parameters"]
