from ember import types as T
from ember.expressions.predicates import And, EqualNullSafe
from ember.optimizer.rules.replace_operators import (
    ReplaceDistinctWithAggregate,
    ReplaceExceptWithAntiJoin,
    ReplaceIntersectWithSemiJoin,
)
from ember.plans.logical.join_type import JoinType
from ember.plans.logical.nodes import Aggregate, Distinct, Except, Intersect, Join

from ..dsl import relation
from ._util import same_rows, t1


def other():
    return relation("u", [("x", T.INT), ("y", T.INT)],
                    [(2, 20), (3, None), (None, 40), (7, 7)]).child


def test_distinct_becomes_aggregate():
    r = t1()
    plan = Distinct(r)
    out = ReplaceDistinctWithAggregate()(plan)
    assert isinstance(out, Aggregate)
    assert out.grouping_expressions == r.output and out.aggregate_expressions == r.output
    assert same_rows(plan, out)


def test_intersect_becomes_distinct_left_semi_join_on_null_safe_equality():
    l, r = t1(), other()
    plan = Intersect(l, r)
    out = ReplaceIntersectWithSemiJoin()(plan)
    assert isinstance(out, Distinct) and isinstance(out.child, Join)
    j = out.child
    assert j.join_type is JoinType.LEFT_SEMI
    assert j.condition == And(EqualNullSafe(l.output[0], r.output[0]),
                              EqualNullSafe(l.output[1], r.output[1]))
    assert same_rows(plan, out)
    assert same_rows(plan, ReplaceDistinctWithAggregate()(out))


def test_except_becomes_distinct_left_anti_join():
    l, r = t1(), other()
    plan = Except(l, r)
    out = ReplaceExceptWithAntiJoin()(plan)
    assert isinstance(out, Distinct) and out.child.join_type is JoinType.LEFT_ANTI
    assert same_rows(plan, out)


def test_all_variants_untouched():
    l, r = t1(), other()
    for plan in (Intersect(l, r, True), Except(l, r, True)):
        assert ReplaceIntersectWithSemiJoin()(plan) is plan
        assert ReplaceExceptWithAntiJoin()(plan) is plan
    assert ReplaceDistinctWithAggregate()(l) is l
