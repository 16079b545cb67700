"""SQL-level checks: the simple rules together (to a fixed point) keep every query's rows, and
produce Spark's shapes on a few queries (Spark 4 EXPLAIN EXTENDED, AQE off)."""

from __future__ import annotations

import re

import pytest

import ember
from ember.optimizer.rule_executor import ONCE, Batch, FixedPoint, RuleExecutor
from ember.optimizer.rules.boolean_simplification import BooleanSimplification
from ember.optimizer.rules.collapse_project import (
    CollapseProject, RemoveNoopOperators, RemoveRedundantAliases,
)
from ember.optimizer.rules.combine_filters import CombineFilters
from ember.optimizer.rules.constant_folding import ConstantFolding
from ember.optimizer.rules.convert_to_local_relation import ConvertToLocalRelation
from ember.optimizer.rules.eliminate_outer_join import EliminateOuterJoin
from ember.optimizer.rules.eliminate_subquery_aliases import (
    EliminateResolvedHint, EliminateSubqueryAliases,
)
from ember.optimizer.rules.null_propagation import NullPropagation
from ember.optimizer.rules.propagate_empty_relation import PropagateEmptyRelation
from ember.optimizer.rules.replace_operators import (
    ReplaceDistinctWithAggregate, ReplaceExceptWithAntiJoin, ReplaceIntersectWithSemiJoin,
)

from ..dsl import bag

EXECUTOR = RuleExecutor([
    Batch("Finish Analysis", ONCE, (EliminateResolvedHint(), EliminateSubqueryAliases())),
    Batch("Replace Operators", FixedPoint(100), (
        ReplaceIntersectWithSemiJoin(), ReplaceExceptWithAntiJoin(),
        ReplaceDistinctWithAggregate())),
    Batch("Operator Optimization", FixedPoint(100), (
        CombineFilters(), CollapseProject(), RemoveNoopOperators(), EliminateOuterJoin(),
        NullPropagation(), ConstantFolding(), BooleanSimplification(),
        PropagateEmptyRelation(), RemoveRedundantAliases())),
    Batch("LocalRelation", FixedPoint(100), (ConvertToLocalRelation(), PropagateEmptyRelation())),
])


@pytest.fixture(scope="module")
def session():
    s = ember.Session()
    s.sql("create or replace temp view t as select * from values "
          "(1, 10, 'a'), (2, 20, 'b'), (3, null, 'c'), (null, 40, null), (2, 20, 'b') as t(a, b, s)")
    s.sql("create or replace temp view u as select * from values "
          "(2, 'x'), (3, 'y'), (null, 'z'), (7, null) as u(c, d)")
    s.sql("create or replace temp view e as select * from t where 1 = 0")
    return s


QUERIES = [
    "select a + (1 + 2) as x, b from t where a > 1 + 0",
    "select * from (select a, b * 2 as b2 from t) where b2 > 20 and a is not null",
    "select t.a, u.d from t left join u on t.a = u.c where u.d is not null",
    "select t.a, u.d from t full join u on t.a = u.c where t.b > 10",
    "select t.a, u.d from t right join u on t.a = u.c where t.a = u.c",
    "select a from t intersect select c from u",
    "select a from t except select c from u",
    "select distinct a, s from t",
    "select a, count(b), count(null), count(1) from t group by a",
    "select * from t join e on t.a = e.a",
    "select * from t left join e on t.a = e.a",
    "select a from t union all select a from e union all select c from u",
    "select a, max(b) from (select t.a, t.b from t left join u on t.a = u.c) group by a",
    "select coalesce(null, a, 0) c, a <=> null n from t",
    "select a from t where not (a > 1 or b < 15) or (a = 2 and s = 'b') or (a = 2 and b = 20)",
    "select /*+ broadcast(u) */ t.a from t join u on t.a = u.c",
    "select a from t where a > 1 intersect select a from t where a < 3",
    "select a, b from t except select a, b from t where b > 15",
    "select x from (select a as a, b from t) as q(x, y) where y is not null limit 2",
]


def _rows(session, plan):
    from ember.optimizer.optimizer import MinimalOptimizer
    from tests.local_run import run_plan

    executable = MinimalOptimizer().execute(plan, session.sql_conf)  # subqueries become joins
    table = run_plan(executable, session.sql_conf)
    return bag(list(zip(*[c.to_pylist() for c in table.columns])))


@pytest.mark.parametrize("query", QUERIES)
def test_optimized_and_unoptimized_return_same_rows(session, query):
    from ember.query_execution import QueryExecution

    analyzed = QueryExecution(session, session.sql(query)._plan).analyzed
    optimized = EXECUTOR.execute(analyzed, session.sql_conf)
    assert [a.id for a in optimized.output] == [a.id for a in analyzed.output]
    assert _rows(session, optimized) == _rows(session, analyzed)


def _optimized(session, query):
    from ember.query_execution import QueryExecution

    analyzed = QueryExecution(session, session.sql(query)._plan).analyzed
    return EXECUTOR.execute(analyzed, session.sql_conf)


def _norm(s: str) -> str:
    return re.sub(r"#\d+", "#", s)


def test_shape_left_join_with_right_filter_becomes_inner(session):
    # Spark: Join Inner, (a#0 = c#1) -- the outer join is eliminated by isnotnull(d)
    out = _optimized(session, "select t.a, u.d from t left join u on t.a = u.c "
                               "where u.d is not null")
    j = out.find(lambda p: type(p).__name__ == "Join")
    assert str(j.join_type) == "Inner"


def test_shape_intersect(session):
    out = _optimized(session, "select a from t intersect select c from u")
    text = _norm(out.tree_string())
    assert "Aggregate [a#], [a#]" in text
    assert "Join LeftSemi, (a# <=> c#)" in text


def test_shape_empty_join_and_constants(session):
    out = _optimized(session, "select * from t join e on t.a = e.a")
    assert type(out).__name__ == "LocalRelation" and out.num_rows == 0
    out = _optimized(session, "select a + (1 + 2) as x from t")
    assert type(out).__name__ == "LocalRelation" and out.num_rows == 5


def test_hint_survives_in_join(session):
    out = _optimized(session, "select /*+ broadcast(u) */ t.a from t join u on t.a = u.c")
    j = out.find(lambda p: type(p).__name__ == "Join")
    assert j.hint.right == ("BROADCAST",)
