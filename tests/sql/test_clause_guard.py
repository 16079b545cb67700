"""The AST builder never drops a clause without a word (issue 18 item 5).

sqlglot parses more than Ember implements, and hangs each clause on its node's ``args``; a
clause the builder never reads would be ignored, and the query would return rows as if it were
not there (PIVOT did exactly that). The builder records the args it reads and refuses any other
with ``UNSUPPORTED_FEATURE`` naming the clause. The systematic test below sets, one at a time,
every arg sqlglot declares on every node of a corpus of queries, and checks that the builder
either reads it or fails: no arg can be silently dropped.
"""

from __future__ import annotations

import pytest
import sqlglot
from sqlglot import exp

from ember.errors import UnsupportedError
from ember.sql import parse_statement
from ember.sql.ast_builder import _MEANINGLESS_ARGS, AstBuilder
from ember.sql.dialect import EmberSpark

CORPUS = [
    "SELECT DISTINCT a, count(*) AS n FROM t AS x WHERE a > 1 GROUP BY a HAVING n > 0 "
    "ORDER BY 1 DESC NULLS LAST LIMIT 5",
    "SELECT * FROM t JOIN u ON t.a = u.a LEFT JOIN v USING (a) WHERE EXISTS (SELECT 1 FROM w)",
    "WITH c AS (SELECT 1 AS one) SELECT one FROM c UNION ALL SELECT 2 ORDER BY 1",
    "SELECT CAST(a AS INT), CASE WHEN a IN (1, 2) THEN 'x' ELSE NULL END, a BETWEEN 1 AND 2, "
    "b LIKE 'a%', -a, sum(a) FILTER (WHERE a > 0) FROM VALUES (1, 'a') AS v(a, b)",
    "SELECT * FROM (SELECT a, b FROM t) PIVOT (sum(b) AS s FOR a IN (1 AS one, 2))",
    "SELECT * FROM t UNPIVOT INCLUDE NULLS (v FOR c IN (a AS x, b))",
    "SELECT /*+ BROADCAST(u) */ * FROM t, u WHERE t.a = u.a LIMIT ALL",
    "SELECT * FROM t, LATERAL (SELECT t.a) s(x) LEFT JOIN LATERAL (SELECT x + 1 AS y) ON y > 0",
    "SELECT * FROM t, LATERAL explode(array(t.a)) e(v)",
]


def _build(tree: exp.Expr, sql: str) -> None:
    builder = AstBuilder(sql)
    builder.build(tree, builder.query)


def _meaningless(n: exp.Expr, key: str) -> bool:
    """An arg the builder is allowed to skip (``_MEANINGLESS_ARGS``: identifier quoting, the
    names sqlglot derives for PIVOT), or any arg of a node below one."""
    if key in _MEANINGLESS_ARGS.get(type(n), ()):
        return True
    while n.parent is not None:
        if n.arg_key in _MEANINGLESS_ARGS.get(type(n.parent), ()):
            return True
        n = n.parent
    return False


def _nodes(tree: exp.Expr) -> list[tuple[int, str]]:
    """(position in walk order, arg key) of every arg each node declares and does not set."""
    out = []
    for i, n in enumerate(tree.walk()):
        for key in type(n).arg_types:
            if not n.args.get(key) and not _meaningless(n, key):
                out.append((i, key))
    return out


@pytest.mark.parametrize("sql", CORPUS)
def test_every_unset_arg_is_read_or_refused(sql: str) -> None:
    base = sqlglot.parse_one(sql, read=EmberSpark)
    _build(base.copy(), sql)  # the query itself builds
    silent = []
    for i, key in _nodes(base):
        tree = base.copy()
        node = list(tree.walk())[i]
        value = exp.Literal.number(7)
        is_list = isinstance(node.args.get(key), list) or key in ("expressions", "joins",
                                                                   "laterals", "pivots")
        node.set(key, [value] if is_list else value)
        try:
            _build(tree, sql)
        except Exception:  # noqa: BLE001 - refused (by name, or by failing to make sense of it)
            continue
        if key not in node.args.read:
            silent.append(f"{type(node).__name__}.{key}")
    assert not silent, f"args the builder drops without a word: {silent}"


def test_an_unread_arg_is_refused_by_name() -> None:
    sql = "SELECT a FROM t"
    tree = sqlglot.parse_one(sql, read=EmberSpark)
    tree.set("settings", [exp.Literal.number(1)])  # a ClickHouse clause the builder ignores
    with pytest.raises(UnsupportedError) as e:
        _build(tree, sql)
    assert e.value.error_class == "UNSUPPORTED_FEATURE"
    assert "SETTINGS" in e.value.message


@pytest.mark.parametrize("sql, words", [
    ("SELECT * FROM t TABLESAMPLE (10 PERCENT)", "TABLESAMPLE"),
    ("SELECT * FROM (SELECT a FROM t) TABLESAMPLE (BUCKET 1 OUT OF 2)", "TABLESAMPLE"),
    ("SELECT TRANSFORM(a) USING 'cat' FROM t", "TRANSFORM"),
    ("SELECT * EXCEPT (a) FROM t", "* EXCEPT"),
])
def test_unsupported_clauses_are_named_with_their_position(sql: str, words: str) -> None:
    with pytest.raises(UnsupportedError) as e:
        parse_statement(sql)
    assert words in e.value.message
    assert e.value.origin is not None and e.value.origin.line == 1


def test_distribute_and_cluster_by_repartition() -> None:
    assert "RepartitionByExpression ['a]" in parse_statement(
        "SELECT a FROM t DISTRIBUTE BY a").tree_string()
    plan = parse_statement("SELECT a FROM t CLUSTER BY a").tree_string()
    assert "Sort ['a ASC NULLS FIRST], false" in plan and "RepartitionByExpression" in plan


def test_tablesample_rows_is_a_limit() -> None:
    assert "GlobalLimit 2" in parse_statement("SELECT a FROM t TABLESAMPLE (2 ROWS)").tree_string()


def test_limit_all_is_no_limit() -> None:
    assert "Limit" not in parse_statement("SELECT a FROM t LIMIT ALL").tree_string()


def test_pivot_and_unpivot_become_plan_nodes() -> None:
    plan = parse_statement("SELECT * FROM t PIVOT (sum(b) FOR a IN (1, 2 AS two)) "
                           "UNPIVOT (v FOR c IN (`1`, two))").tree_string()
    assert "Pivot" in plan and "Unpivot" in plan
