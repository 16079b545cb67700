"""Which column a HAVING / ORDER BY / GROUP BY name means when it is both a select-list alias and
a column (issue 18, item 2), checked against PySpark on both runtimes.

Spark 4's order (``ResolveReferences`` / ``ResolveAggregateFunctions`` / ``ResolveReferencesInSort``):

- HAVING: the aggregate's input first (SPARK-31519), kept where it is an aggregate's argument or a
  grouping expression; elsewhere the name resolves again against the select list (the alias).
  A subquery in HAVING sees the input before the aliases too.
- ORDER BY over an aggregate: the select list first (aliases win), then the input (grouping
  columns and aggregate arguments).
- ORDER BY over a plain SELECT: the select list first, then the columns it dropped.
- GROUP BY: columns first, aliases only for names no column has (``spark.sql.groupByAliases``).

Each query runs on the ``spark`` fixture and on Ember (local and Spark runtimes): same schema,
rows (in order where the query is ordered) or error class.
"""

from __future__ import annotations

from typing import Any

import pytest

from tests.conformance.ember_adapter import RUNTIMES, check_outcome, new_session, run_sql
from tests.conformance.generate import run_statement

VIEW = ("CREATE OR REPLACE TEMPORARY VIEW T AS SELECT * FROM VALUES "
        "(1, 10, 'x'), (2, 20, 'y'), (3, 20, 'x') AS T(a, b, c)")

QUERIES = [
    # -- HAVING: alias = grouping column -> the grouping column (the repro first)
    "SELECT SUM(a) AS b, CAST('2020-01-01' AS DATE) AS fake FROM VALUES (1, 10), (2, 20) AS T(a, b) "
    "GROUP BY b HAVING b > 10",
    "SELECT SUM(a) AS b FROM T GROUP BY b HAVING b > 3",
    "SELECT SUM(a) AS b FROM T GROUP BY b HAVING b > 10 AND SUM(a) > 1",
    "SELECT b, SUM(a) AS b FROM T GROUP BY b HAVING b > 10",
    "SELECT c, count(*) AS c FROM T GROUP BY c HAVING c = 'x'",
    "SELECT count(*) AS c FROM T GROUP BY c HAVING c = 'x'",
    "SELECT count(*) AS c FROM T GROUP BY c HAVING c > 1",  # the string column: CAST_INVALID_INPUT
    "SELECT a AS b, b AS a FROM T GROUP BY a, b HAVING a > 10",
    "SELECT a AS b, b AS a FROM T GROUP BY a, b HAVING b > 2",
    "SELECT -SUM(a) AS b FROM T GROUP BY b HAVING T.b > 10",
    "SELECT b % 3 AS b, count(*) AS n FROM T GROUP BY b % 3 HAVING b % 3 > 1",
    "SELECT b % 3 AS b, count(*) AS n FROM T GROUP BY b % 3 HAVING b > 1",
    "SELECT b AS k, sum(a) AS b FROM T GROUP BY b HAVING b = 20 ORDER BY k",
    # -- HAVING: alias = an input column that is not grouped -> the alias
    "SELECT SUM(b) AS a FROM T GROUP BY c HAVING a > 25",
    "SELECT c, max(a) AS a FROM T GROUP BY c HAVING a > 2 OR min(a) > 1",
    "SELECT SUM(a) AS a FROM T HAVING a > 5",
    # (typed as the input column first, then the alias: Spark's coercion makes 'x' a bigint)
    "SELECT c AS a, max(a) AS m FROM T GROUP BY c HAVING a = 'x'",
    # -- HAVING: inside an aggregate function -> the input column
    "SELECT c, SUM(b) AS a FROM T GROUP BY c HAVING SUM(a) > 3",
    "SELECT c, SUM(b) AS a FROM T GROUP BY c HAVING max(a) > 2",
    "SELECT b AS b, max(a) AS a FROM T GROUP BY b HAVING max(a) > 2 AND a > 2",
    # -- HAVING: alias of an aggregate, no column of that name; unknown names
    "SELECT c, SUM(b) AS s FROM T GROUP BY c HAVING s > 25",
    "SELECT c FROM T GROUP BY c HAVING a > 1",
    # -- HAVING with subqueries: the input column first there too
    "SELECT SUM(a) AS b FROM T GROUP BY b HAVING b IN (SELECT 20)",
    "SELECT SUM(a) AS b FROM T GROUP BY b HAVING EXISTS (SELECT 1 WHERE b > 10)",
    "SELECT SUM(a) AS b FROM T GROUP BY b HAVING (SELECT max(b) FROM T) = b",
    "SELECT SUM(a) AS s FROM T GROUP BY c HAVING EXISTS (SELECT 1 WHERE s > 3)",
    "SELECT SUM(a) AS b FROM T GROUP BY c HAVING EXISTS (SELECT 1 WHERE b > 10)",
    # -- ORDER BY after aggregation: the alias shadows the grouping column
    "SELECT -SUM(a) AS b, b AS x FROM T GROUP BY b ORDER BY b",
    "SELECT -SUM(a) AS b, b AS x FROM T GROUP BY b ORDER BY b + 0",
    "SELECT -SUM(a) AS b FROM T GROUP BY b ORDER BY T.b DESC",
    "SELECT c, -SUM(b) AS a FROM T GROUP BY c ORDER BY a",
    "SELECT c, -SUM(b) AS a FROM T GROUP BY c ORDER BY SUM(a)",  # the alias inside: MISSING_ATTRIBUTES
    "SELECT -SUM(a) AS b, b AS x FROM T GROUP BY b HAVING b > 10 ORDER BY b",
    "SELECT SUM(a) AS b FROM T GROUP BY b HAVING b > 10 ORDER BY b",
    "SELECT count(*) AS b FROM T GROUP BY b HAVING max(b) > 15 ORDER BY b",
    "SELECT sum(a) AS a FROM T GROUP BY b HAVING a > 1 ORDER BY a",
    # -- ORDER BY over a HAVING that added hidden aggregates (a Project over the Filter): Spark
    #    resolves only output columns there
    "SELECT c AS g, max(a) AS m FROM T GROUP BY c HAVING count(*) > 1 ORDER BY max(a)",
    "SELECT c AS g, max(a) AS m FROM T GROUP BY c HAVING count(*) > 0 ORDER BY count(*)",
    "SELECT c AS g, max(a) AS m FROM T GROUP BY c HAVING min(a) > 0 ORDER BY min(a)",
    "SELECT c AS g, max(a) AS m FROM T GROUP BY c HAVING count(*) > 0 ORDER BY m DESC",
    "SELECT c AS g, max(a) AS m FROM T GROUP BY c HAVING max(a) > 0 ORDER BY max(a)",
    # -- GROUP BY alias: a column of that name wins
    "SELECT a + 1 AS a, count(*) AS n FROM T GROUP BY a ORDER BY 1",
    "SELECT a + 1 AS a, count(*) AS n FROM T GROUP BY a HAVING a > 2 ORDER BY 1",
    "SELECT b + 1 AS x, count(*) AS n FROM T GROUP BY x HAVING x > 15 ORDER BY x DESC",
    "SELECT a + 1 AS b, count(*) FROM T GROUP BY b HAVING b > 2",  # MISSING_AGGREGATION
    # -- ORDER BY over a plain SELECT: the alias shadows the column
    "SELECT a AS b, b AS a FROM T ORDER BY a DESC, b",
    "SELECT -a AS a FROM T ORDER BY a",
    "SELECT -a AS a, b FROM T ORDER BY a + 0",
    "SELECT -a AS a FROM T ORDER BY T.a",
    "SELECT -a AS x FROM T ORDER BY a",
    "SELECT DISTINCT -a AS a FROM T ORDER BY a",
]

_sessions: dict[str, Any] = {}


def _spark_session(spark: Any) -> Any:
    if "oracle" not in _sessions:
        session = spark.newSession()
        session.sql(VIEW)
        _sessions["oracle"] = session
    return _sessions["oracle"]


def _ember_session(runtime: str) -> Any:
    if runtime not in _sessions:
        session = new_session({}, runtime)
        session.sql(VIEW)
        _sessions[runtime] = session
    return _sessions[runtime]


@pytest.mark.parametrize("runtime", RUNTIMES)
@pytest.mark.parametrize("sql", QUERIES, ids=[f"q{i:02d}" for i in range(len(QUERIES))])
def test_names_resolve_as_in_spark(spark: Any, runtime: str, sql: str) -> None:
    expected = run_statement(_spark_session(spark), sql)
    problem = check_outcome(expected, run_sql(_ember_session(runtime), sql))
    assert problem is None, f"{sql}\n{problem}"


@pytest.mark.parametrize("runtime", RUNTIMES)
def test_having_name_is_the_grouping_column_not_the_alias(runtime: str) -> None:
    # issue 18's repro; PySpark 4.3 returns one row (2, 2020-01-01)
    import datetime

    df = _ember_session(runtime).sql(QUERIES[0])
    assert [tuple(r.values()) for r in df.to_arrow().to_pylist()] == [
        (2, datetime.date(2020, 1, 1))]
