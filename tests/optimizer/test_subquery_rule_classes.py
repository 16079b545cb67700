"""The subquery rewrites as Rule classes: RewriteCorrelatedScalarSubquery (operator-optimization
batch) and RewritePredicateSubquery (late "RewriteSubquery" batch), each applied alone and after
other rules have reshaped the plan (predicates pushed down, joins reordered, columns pruned).

Rows are compared with the one-shot ``rewrite_subqueries`` of the analyzed plan and with
PySpark 4.3 (rows quoted per query); join skeletons with Spark 4.3's optimized plans
(``spark.sql.adaptive.enabled=false``), ids removed.
"""

from __future__ import annotations

import re
from collections import Counter

import pytest

from ember.conf import SQLConf
from ember.expressions.subquery import ScalarSubquery, SubqueryExpression
from ember.optimizer.rule_executor import ONCE, Batch, FixedPoint, RuleExecutor
from ember.optimizer.rules.rewrite_subquery import (
    RewriteCorrelatedScalarSubquery,
    RewritePredicateSubquery,
    rewrite_subqueries,
)
from ember.plans.logical.join_type import JoinType
from ember.plans.logical.nodes import Join, LogicalPlan
from tests.local_run import run_plan


@pytest.fixture(scope="module")
def session():
    import ember

    s = ember.Session()
    for st in ("create or replace temp view t1(a1, a2) as values (0, 1), (1, 2), (2, null), (null, 4)",
               "create or replace temp view t2(b1, b2) as values (0, 2), (0, 3), (2, 5), (null, 1)",
               "create or replace temp view t3(c1, c2) as values (0, 2), (1, 3), (5, null)"):
        s.sql(st).to_arrow()
    return s


def rows(session, plan: LogicalPlan) -> Counter:
    t = run_plan(plan, session.sql_conf)
    return Counter(zip(*[c.to_pylist() for c in t.columns]))


def has(plan: LogicalPlan, kind: type) -> bool:
    return plan.find(lambda p: any(e.find(lambda x: isinstance(x, kind)) is not None
                                   for e in p.expressions())) is not None


def joins(plan: LogicalPlan) -> list[str]:
    return plan.collect(
        lambda p: re.sub(r"#\d+L?", "", p.simple_string()) if isinstance(p, Join) else None)


def pipeline() -> RuleExecutor:
    """Spark's batch order in miniature: scalar decorrelation inside the operator batch,
    predicate subqueries last."""
    from ember.optimizer.rules.collapse_project import CollapseProject, RemoveNoopOperators
    from ember.optimizer.rules.column_pruning import ColumnPruning
    from ember.optimizer.rules.combine_filters import CombineFilters
    from ember.optimizer.rules.infer_filters import InferFiltersFromConstraints
    from ember.optimizer.rules.push_down_predicates import PushDownPredicates
    from ember.optimizer.rules.reorder_join import ReorderJoin

    ops = (PushDownPredicates(), ColumnPruning(), CombineFilters(), CollapseProject(),
           RemoveNoopOperators())
    return RuleExecutor([
        Batch("Operator Optimization", FixedPoint(20), ops + (RewriteCorrelatedScalarSubquery(),)),
        Batch("Infer Filters", ONCE, (InferFiltersFromConstraints(),)),
        Batch("Operator Optimization after Inferring Filters", FixedPoint(20), ops),
        Batch("Join Reorder", FixedPoint(1), (ReorderJoin(), PushDownPredicates())),
        Batch("RewriteSubquery", ONCE, (RewritePredicateSubquery(), PushDownPredicates(),
                                        ColumnPruning(), CollapseProject(),
                                        RemoveNoopOperators())),
    ])


# (query, Spark 4.3 rows, Spark 4.3 optimized-plan joins with ids removed, or None when other
# rules Ember lacks (EliminateOuterJoin ...) make Spark's differ)
CASES = [
    ("select * from t1 where exists (select 1 from t2 where b1 = a1)",
     [(0, 1), (2, None)], ["Join LeftSemi, (b1 = a1)"]),
    ("select * from t1 where not exists (select 1 from t2 where b1 = a1 and b2 > 2)",
     [(1, 2), (None, 4)], ["Join LeftAnti, (b1 = a1)"]),
    ("select * from t1 where a1 in (select b1 from t2)",
     [(0, 1), (2, None)], ["Join LeftSemi, (a1 = b1)"]),
    ("select * from t1 where a1 not in (select b1 from t2 where b2 > 1)",
     [(1, 2)], ["Join LeftAnti, ((a1 = b1) OR isnull((a1 = b1)))"]),
    ("select * from t1 where a1 > 0 or exists (select 1 from t2 where b1 = a1)",
     [(0, 1), (1, 2), (2, None)], ["Join ExistenceJoin(exists), (b1 = a1)"]),
    ("select a1, a1 in (select b1 from t2) from t1",
     [(0, True), (1, False), (2, True), (None, False)], ["Join ExistenceJoin(exists), (a1 = b1)"]),
    ("select a1, (select max(b2) from t2 where b1 = a1) from t1",
     [(0, 3), (1, None), (2, 5), (None, None)], ["Join LeftOuter, (b1 = a1)"]),
    ("select a1, (select count(*) from t2 where b1 = a1) c from t1",
     [(0, 2), (1, 0), (2, 1), (None, 0)], ["Join LeftOuter, (b1 = a1)"]),
    ("select * from t1 join t3 on a1 = c1 where exists (select 1 from t2 where b1 = c1)",
     [(0, 1, 0, 2)], ["Join Inner, (a1 = c1)", "Join LeftSemi, (b1 = c1)"]),
    ("select * from t1, t3, t2 where a1 = c1 and c1 = b1 and "
     "exists (select 1 from t2 x where x.b2 = t3.c2)",
     [(0, 1, 0, 2, 0, 2), (0, 1, 0, 2, 0, 3)],
     ["Join Inner, (c1 = b1)", "Join Inner, (a1 = c1)", "Join LeftSemi, (b2 = c2)"]),
    ("select * from t1, t3 where a1 = c1 and a2 > (select min(b2) from t2 where b1 = c1)",
     [], None),
    ("select * from t1, t3 where a1 = c1 and not exists "
     "(select 1 from t2 where b1 = c1 and b2 = a2)",
     [(0, 1, 0, 2), (1, 2, 1, 3)],
     ["Join LeftAnti, ((b1 = c1) AND (b2 = a2))", "Join Inner, (a1 = c1)"]),
    ("select a1, sum(a2) from t1 where a1 in (select b1 from t2 where "
     "b2 < (select max(c2) from t3 where c1 = b1)) group by a1", [], None),
    ("select * from t1 where (select count(*) from t2 where b1 = a1) > 0 and "
     "exists (select 1 from t3 where c1 = a1)", [(0, 1)], None),
    ("select a2 from (select a1, a2 from t1 where a2 > 0) s where "
     "exists (select 1 from t2 where b1 = s.a1)", [(1,)], ["Join LeftSemi, (b1 = a1)"]),
]


def test_rule_metadata():
    assert RewritePredicateSubquery.rule_name == "RewritePredicateSubquery"
    assert RewriteCorrelatedScalarSubquery.rule_name == "RewriteCorrelatedScalarSubquery"
    assert RewritePredicateSubquery.excludable is False
    assert RewriteCorrelatedScalarSubquery.excludable is False


@pytest.mark.parametrize("sql,expected,spark_joins", CASES)
def test_after_other_rules(session, sql, expected, spark_joins):
    analyzed = session.sql(sql)._qe.analyzed
    conf = SQLConf({"spark.sql.optimizer.excludedRules":
                    "RewritePredicateSubquery,RewriteCorrelatedScalarSubquery"})
    out = pipeline().execute(analyzed, conf)  # non-excludable: they run anyway
    assert not has(out, SubqueryExpression)
    assert out.output == analyzed.output or [a.id for a in out.output] == [
        a.id for a in analyzed.output]
    assert rows(session, out) == Counter(expected)
    assert rows(session, rewrite_subqueries(analyzed)) == Counter(expected)
    if spark_joins is not None:
        assert joins(out) == spark_joins


@pytest.mark.parametrize("sql,expected,spark_joins", CASES)
def test_scalar_rule_alone_leaves_predicates(session, sql, expected, spark_joins):
    analyzed = session.sql(sql)._qe.analyzed
    had_predicate = analyzed.find(lambda p: any(
        e.find(lambda x: isinstance(x, SubqueryExpression) and not isinstance(x, ScalarSubquery))
        is not None for e in p.expressions())) is not None
    out = RewriteCorrelatedScalarSubquery()(analyzed)
    assert not has(out, ScalarSubquery)
    assert [a.id for a in out.output] == [a.id for a in analyzed.output]
    assert has(out, SubqueryExpression) == had_predicate
    if not has(analyzed, ScalarSubquery):
        assert out is analyzed
    final = RewritePredicateSubquery()(out)
    assert not has(final, SubqueryExpression)
    assert rows(session, final) == Counter(expected)


def test_predicate_rule_alone_rewrites_everything(session):
    sql = ("select a1, (select count(*) from t2 where b1 = a1) c from t1 "
           "where exists (select 1 from t3 where c1 = a1)")
    analyzed = session.sql(sql)._qe.analyzed
    out = RewritePredicateSubquery()(analyzed)
    assert not has(out, SubqueryExpression)
    kinds = [j.join_type for j in out.collect(lambda p: p if isinstance(p, Join) else None)]
    assert sorted(str(k) for k in kinds) == sorted(str(k) for k in (JoinType.LEFT_OUTER,
                                                                    JoinType.LEFT_SEMI))
    assert rows(session, out) == Counter([(0, 2), (1, 0)])  # PySpark 4.3


def test_no_subquery_returns_same_object(session):
    analyzed = session.sql("select a1 from t1 where a2 > 1")._qe.analyzed
    assert RewritePredicateSubquery()(analyzed) is analyzed
    assert RewriteCorrelatedScalarSubquery()(analyzed) is analyzed


def test_correlated_exists_survives_pushdown_through_join(session):
    """The EXISTS reads t3.c2 only: pushdown must put it on t3's side (its ``references``
    include the outer columns), and the rewrite then joins it there."""
    from ember.optimizer.rules.push_down_predicates import PushDownPredicates

    sql = ("select * from t1 join t3 on a1 = c1 where "
           "exists (select 1 from t2 where b2 = c2)")
    analyzed = session.sql(sql)._qe.analyzed
    pushed = PushDownPredicates()(analyzed)
    out = RewritePredicateSubquery()(pushed)
    semi = out.find(lambda p: isinstance(p, Join) and p.join_type == JoinType.LEFT_SEMI)
    assert semi is not None
    assert {a.name for a in semi.left.output} >= {"c1", "c2"}
    assert "a1" not in {a.name for a in semi.left.output}
    assert rows(session, out) == Counter([(0, 1, 0, 2), (1, 2, 1, 3)])
