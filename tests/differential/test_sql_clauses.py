"""Every clause sqlglot parses in Spark SQL either works as in Spark or is refused by name
(issue 18 item 5: PIVOT and UNPIVOT were parsed and then dropped, returning the input rows).

For each clause below, Ember (both runtimes) must return PySpark's columns and rows (a multiset),
or raise the same error class as PySpark, or raise ``UNSUPPORTED_FEATURE`` naming the clause.
It must never return rows that differ from Spark's. The mechanical side of the same promise (any
sqlglot arg the AST builder does not read is refused) is ``tests/sql/test_clause_guard.py``.

Refused for now: TABLESAMPLE PERCENT / BUCKET (Spark's sampler is seeded per partition, not
reproducible here; ``n ROWS`` is Spark's Limit and works) and TRANSFORM.
"""

from __future__ import annotations

from typing import Any

import pytest

from tests.conformance.ember_adapter import RUNTIMES, new_session
from tests.differential.compare import Failed, sql_outcome

T = "SELECT * FROM VALUES (3, 1, 'x'), (1, 2, 'y'), (2, 3, NULL), (1, 5, 'y') AS t(a, b, s)"

#: clause -> (query over the view ``t``, the words UNSUPPORTED_FEATURE must name if refused)
CLAUSES: dict[str, tuple[str, str]] = {
    "tablesample_percent": ("SELECT * FROM t TABLESAMPLE (50 PERCENT)", "TABLESAMPLE"),
    "tablesample_rows": ("SELECT * FROM t TABLESAMPLE (2 ROWS)", "TABLESAMPLE"),
    "tablesample_rows_alias": ("SELECT x.a FROM t TABLESAMPLE (3 ROWS) AS x WHERE x.a > 1",
                               "TABLESAMPLE"),
    "tablesample_bucket": ("SELECT * FROM t TABLESAMPLE (BUCKET 1 OUT OF 2)", "TABLESAMPLE"),
    "tablesample_subquery": ("SELECT * FROM (SELECT * FROM t) TABLESAMPLE (50 PERCENT)",
                             "TABLESAMPLE"),
    "distribute_by": ("SELECT * FROM t DISTRIBUTE BY a", "DISTRIBUTE BY"),
    "cluster_by": ("SELECT * FROM t CLUSTER BY a", "CLUSTER BY"),
    "distribute_by_sort_by": ("SELECT * FROM t DISTRIBUTE BY a SORT BY b DESC", "DISTRIBUTE BY"),
    "distribute_by_expressions": ("SELECT * FROM t DISTRIBUTE BY a + 1, s", "DISTRIBUTE BY"),
    "distribute_by_under_aggregate":
        ("SELECT s, count(*) FROM (SELECT * FROM t DISTRIBUTE BY b) GROUP BY s", "DISTRIBUTE BY"),
    "order_by_with_distribute_by": ("SELECT * FROM t ORDER BY a DISTRIBUTE BY a", "DISTRIBUTE"),
    "cluster_by_with_sort_by": ("SELECT * FROM t CLUSTER BY a SORT BY b", "CLUSTER BY"),
    "sort_by": ("SELECT * FROM t SORT BY a DESC, b", "SORT BY"),
    "limit_all": ("SELECT * FROM t LIMIT ALL", "LIMIT ALL"),
    "limit_offset": ("SELECT * FROM t ORDER BY b LIMIT 2 OFFSET 1", "OFFSET"),
    "hint_repartition": ("SELECT /*+ REPARTITION(3) */ * FROM t", "hints"),
    "hint_broadcast": ("SELECT /*+ BROADCAST(u) */ * FROM t JOIN t AS u USING (a)", "hints"),
    "lateral_view": ("SELECT a, y FROM t LATERAL VIEW explode(array(a, b)) x AS y",
                     "LATERAL VIEW"),
    "lateral_view_outer": ("SELECT a, y FROM t LATERAL VIEW OUTER explode(array(a)) x AS y",
                           "LATERAL VIEW"),
    "window_clause": ("SELECT a, sum(b) OVER w FROM t WINDOW w AS (ORDER BY a)", "window"),
    "unused_window_clause": ("SELECT a FROM t WINDOW w AS (ORDER BY a)", "WINDOW clause"),
    "window_function": ("SELECT a, row_number() OVER (ORDER BY b) FROM t", "window"),
    "qualify": ("SELECT a, b FROM t QUALIFY row_number() OVER (PARTITION BY a ORDER BY b) = 1",
                "QUALIFY"),
    "transform": ("SELECT TRANSFORM(a) USING 'cat' AS (x) FROM t", "TRANSFORM"),
    "group_by_with_rollup": ("SELECT a, count(*) FROM t GROUP BY a WITH ROLLUP",
                             "GROUP BY ROLLUP"),
    "group_by_with_cube": ("SELECT a, count(*) FROM t GROUP BY a WITH CUBE", "GROUP BY CUBE"),
    "group_by_rollup": ("SELECT a, count(*) FROM t GROUP BY ROLLUP(a)", "ROLLUP"),
    "group_by_cube": ("SELECT a, count(*) FROM t GROUP BY CUBE(a)", "CUBE"),
    "grouping_sets": ("SELECT a, count(*) FROM t GROUP BY GROUPING SETS ((a), ())",
                      "GROUPING SETS"),
    "group_by_all": ("SELECT a, count(*) FROM t GROUP BY ALL", "GROUP BY ALL"),
    "pivot": ("SELECT * FROM t PIVOT (sum(b) FOR a IN (1, 3))", "PIVOT"),
    "unpivot": ("SELECT * FROM (SELECT a, b FROM t) UNPIVOT (v FOR c IN (a, b))", "UNPIVOT"),
    "time_travel_version": ("SELECT * FROM t VERSION AS OF 1", "time travel"),
    "time_travel_timestamp": ("SELECT * FROM t TIMESTAMP AS OF '2020-01-01'", "time travel"),
    "star_except": ("SELECT * EXCEPT (a) FROM t", "EXCEPT"),
    "lateral_subquery": ("SELECT * FROM t, LATERAL (SELECT t.a + 1 AS c)", "Lateral"),
    "fetch_first": ("SELECT * FROM t ORDER BY b FETCH FIRST 2 ROWS ONLY", "FETCH"),
    "table_valued_function": ("SELECT * FROM range(3)", "table-valued"),
}


#: Clauses Ember implements: they must give Spark's rows (or Spark's error), never be refused.
IMPLEMENTED = {"distribute_by", "cluster_by", "distribute_by_sort_by", "distribute_by_expressions",
               "distribute_by_under_aggregate", "order_by_with_distribute_by",
               "cluster_by_with_sort_by", "sort_by", "limit_all", "limit_offset",
               "hint_repartition", "hint_broadcast", "pivot", "unpivot", "tablesample_rows",
               "tablesample_rows_alias", "group_by_with_rollup", "group_by_with_cube",
               "group_by_rollup", "group_by_cube", "grouping_sets", "group_by_all",
               "table_valued_function", "window_clause", "unused_window_clause",
               "window_function", "qualify", "lateral_view", "lateral_view_outer",
               "lateral_subquery"}


@pytest.fixture(scope="module")
def spark_outcomes(spark: Any) -> dict[str, Any]:
    session = spark.newSession()
    session.sql(T).createOrReplaceTempView("t")
    return {name: sql_outcome(session.sql, sql, is_spark=True)
            for name, (sql, _) in CLAUSES.items()}


@pytest.mark.differential
@pytest.mark.parametrize("runtime", RUNTIMES)
@pytest.mark.parametrize("name", sorted(CLAUSES))
def test_clause_is_spark_or_refused_by_name(spark_outcomes: dict[str, Any], name: str,
                                            runtime: str) -> None:
    sql, words = CLAUSES[name]
    session = new_session(runtime=runtime)
    session.sql(T).createOrReplaceTempView("t")
    expected, actual = spark_outcomes[name], sql_outcome(session.sql, sql, is_spark=False)
    if name in IMPLEMENTED:
        assert not (isinstance(actual, Failed) and actual.cls == "UNSUPPORTED_FEATURE"), actual
    if isinstance(actual, Failed) and actual.cls == "UNSUPPORTED_FEATURE":
        assert words.lower() in actual.message.lower(), (
            f"{name}: UNSUPPORTED_FEATURE does not name the clause ({words!r}): {actual.message}")
        return
    if name.startswith("tablesample") and name not in IMPLEMENTED and not isinstance(
            actual, Failed):
        pytest.fail(f"{name}: Ember returned rows for a sample; Spark's are random: {actual!r}")
    if isinstance(expected, Failed) or isinstance(actual, Failed):
        assert isinstance(expected, Failed) and isinstance(actual, Failed) and (
            expected.cls == actual.cls), f"{name}\nSpark: {expected!r}\nEmber: {actual!r}"
        return
    assert expected == actual, f"{name}\nSpark: {expected!r}\nEmber: {actual!r}"
