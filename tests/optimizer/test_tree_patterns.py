"""Tree patterns (``ember.trees``: ``tree_bits`` / ``contains``, Spark's TreePatternBits) and the
rule pruning built on them: ``Rule.patterns`` in the optimizer's executor and
``RULE_PATTERNS`` in the analyzer skip rules on plans that hold none of the node kinds they
rewrite, so the plans must be exactly those of running every rule."""

from __future__ import annotations

import re

import pytest

import ember
from bench.tpcds import datagen
from ember.analysis.analyzer import RULE_PATTERNS, _batches
from ember.expressions.base import Alias, AttributeReference, Expression, Literal
from ember.expressions.subquery import ScalarSubquery, SubqueryExpression
from ember.expressions.windows import WindowExpression
from ember.optimizer.optimizer import default_batches
from ember.optimizer.rule_executor import Batch, FixedPoint, Rule, RuleExecutor
from ember.plans.logical.nodes import (
    Aggregate, Filter, Join, LocalRelation, LogicalPlan, Project, Window,
)

QUERIES = [
    "SELECT a, sum(b) OVER (PARTITION BY a ORDER BY b) AS s FROM t WHERE b > 1",
    "SELECT a FROM t WHERE b > (SELECT max(b) FROM t t2 WHERE t2.a = t.a)",
    "SELECT x.a, count(*) FROM t x JOIN t y ON x.a = y.a GROUP BY x.a",
    "SELECT a FROM t WHERE EXISTS (SELECT 1 FROM t t2 WHERE t2.b = t.a) "
    "INTERSECT SELECT b FROM t",
    "SELECT DISTINCT a + 1 AS c FROM t ORDER BY 1",
]
CLASSES = [Alias, AttributeReference, Literal, WindowExpression, SubqueryExpression,
           ScalarSubquery, Window, Join, Aggregate, Filter, Project, LocalRelation, Expression,
           LogicalPlan]


@pytest.fixture(scope="module")
def session():
    s = ember.Session()
    s.sql("CREATE OR REPLACE TEMP VIEW t AS SELECT * FROM VALUES (1, 2), (3, 4) AS v(a, b)")
    return s


def _walk(plan: LogicalPlan):
    """Every plan node, and every expression node of each, in the plan and its subqueries."""
    stack = [plan]
    while stack:
        p = stack.pop()
        yield p
        for e in p.expressions():
            stack_e = [e]
            while stack_e:
                x = stack_e.pop()
                yield x
                stack_e.extend(x.children)
        stack.extend(p.children)
        stack.extend(p.subqueries())


def _exists_in_plan(p: LogicalPlan, cls: tuple[type, ...]) -> bool:
    return p.exists(lambda n: isinstance(n, cls) or any(
        e.exists(lambda x: isinstance(x, cls)) for e in n.expressions()))


@pytest.mark.parametrize("query", QUERIES)
def test_contains_is_exists(session, query):
    qe = session.sql(query)._qe
    for plan in (qe.analyzed, qe.optimized):
        for node in _walk(plan):
            for cls in CLASSES:
                if isinstance(node, LogicalPlan):
                    want = _exists_in_plan(node, (cls,))
                else:
                    want = node.exists(lambda x: isinstance(x, cls))
                assert node.contains(cls) == want, (node, cls)
            assert node.contains(Window, Join) == (node.contains(Window) or node.contains(Join))


def test_contains_anywhere_sees_subquery_plans(session):
    plan = session.sql(QUERIES[1])._qe.analyzed
    inner = plan.collect(lambda p: p.subqueries() or None)[0][0]
    assert inner.contains(Aggregate)
    assert plan.contains_anywhere(Aggregate)
    assert not plan.contains(Aggregate)  # not counting the subquery's plan
    assert not plan.contains_anywhere(Window)


class _Counting(Rule):
    rule_name = "Counting"
    patterns = (Window,)

    def __init__(self) -> None:
        self.calls = 0

    def apply(self, plan, conf):
        self.calls += 1
        return plan


@pytest.mark.parametrize("query, runs", [(QUERIES[0], True), (QUERIES[2], False),
                                         ("SELECT a FROM t WHERE b IN (SELECT max(b) OVER () "
                                          "FROM t)", True)])
def test_executor_skips_rules_without_their_patterns(session, query, runs):
    rule = _Counting()
    plan = session.sql(query)._qe.analyzed
    RuleExecutor([Batch("B", FixedPoint(3), (rule,))]).execute(plan)
    assert (rule.calls > 0) == runs


def test_pattern_names_are_rules():
    names = {name for b in _batches() for name, _ in b.rules}
    assert set(RULE_PATTERNS) <= names
    assert any(r.patterns for b in default_batches(ember.Session().sql_conf) for r in b.rules)


def _without_pruning(monkeypatch):
    import ember.analysis.analyzer as analyzer

    monkeypatch.setattr(analyzer, "RULE_PATTERNS", {})
    for b in default_batches(ember.Session().sql_conf):
        for r in b.rules:
            monkeypatch.setattr(type(r), "patterns", (), raising=False)


@pytest.fixture(scope="module")
def tpcds_paths(tmp_path_factory) -> dict[str, str]:
    return datagen.generate(tmp_path_factory.mktemp("tpcds_sf001"), 0.01)


def _norm(text: str) -> str:
    """``text`` with expression and plan ids renumbered by first appearance (process-wide
    counters: the two runs differ in ids)."""
    ids: dict[str, str] = {}
    text = re.sub(r"#\d+", lambda m: ids.setdefault(m.group(0), f"#{len(ids)}"), text)
    return re.sub(r"plan_id=\d+", lambda m: ids.setdefault(m.group(0), f"plan_id={len(ids)}"),
                  text)


@pytest.mark.parametrize("n", [1, 5, 12, 14, 35, 44, 47, 70, 83, 95])
def test_pruned_plans_equal_unpruned(monkeypatch, tpcds_paths, n):
    """The analyzed, optimized and physical plans of TPC-DS queries are the same with and
    without pruning."""

    def plans() -> str:
        s = ember.Session()
        datagen.register(s, tpcds_paths)
        return _norm(s.sql(datagen.spark_queries()[n])._qe.explain_string("extended"))

    pruned = plans()
    with monkeypatch.context() as m:
        _without_pruning(m)
        assert plans() == pruned
