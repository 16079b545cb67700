from ember import types as T
from ember.expressions.aggregates import AggregateExpression, Count, Max
from ember.expressions.base import Alias
from ember.expressions.conditional import Coalesce
from ember.expressions.predicates import (
    And, EqualNullSafe, EqualTo, GreaterThan, IsNotNull, IsNull, Or,
)
from ember.optimizer.rules.eliminate_outer_join import EliminateOuterJoin, can_filter_out_null
from ember.plans.logical.join_type import JoinType
from ember.plans.logical.nodes import Aggregate, Filter, Join, Project

from ..dsl import col, lit
from ._util import same_rows, t1, t2


def join(jt):
    l, r = t1(), t2()
    return l, r, Join(l, r, jt, EqualTo(col(l, "a"), col(r, "c")))


def jt_after(plan):
    return EliminateOuterJoin()(plan).child.join_type


def test_left_outer_with_right_predicate_becomes_inner():
    l, r, j = join(JoinType.LEFT_OUTER)
    plan = Filter(GreaterThan(col(r, "c"), lit(1)), j)
    out = EliminateOuterJoin()(plan)
    assert out.child.join_type is JoinType.INNER
    assert same_rows(plan, out)


def test_predicates_that_keep_nulls_do_not_convert():
    l, r, j = join(JoinType.LEFT_OUTER)
    for cond in (IsNull(col(r, "c")), Or(GreaterThan(col(r, "c"), lit(1)), IsNull(col(r, "d"))),
                 GreaterThan(col(l, "a"), lit(1)),
                 EqualTo(Coalesce((col(r, "c"), lit(0))), lit(0))):
        plan = Filter(cond, j)
        assert EliminateOuterJoin()(plan) is plan


def test_full_outer_to_left_right_inner():
    l, r, j = join(JoinType.FULL_OUTER)
    lp, rp = GreaterThan(col(l, "a"), lit(1)), IsNotNull(col(r, "d"))
    for cond, expected in ((lp, JoinType.LEFT_OUTER), (rp, JoinType.RIGHT_OUTER),
                           (And(lp, rp), JoinType.INNER)):
        plan = Filter(cond, j)
        out = EliminateOuterJoin()(plan)
        assert out.child.join_type is expected
        assert same_rows(plan, out)


def test_right_outer_and_inferred_is_not_null_from_two_sided_predicate():
    l, r, j = join(JoinType.RIGHT_OUTER)
    plan = Filter(GreaterThan(col(l, "b"), lit(0)), j)
    assert jt_after(plan) is JoinType.INNER
    l, r, j = join(JoinType.FULL_OUTER)
    # l.b = r.c  ==> isnotnull(l.b) and isnotnull(r.c): both sides
    plan = Filter(EqualTo(col(l, "b"), col(r, "c")), j)
    out = EliminateOuterJoin()(plan)
    assert out.child.join_type is JoinType.INNER
    assert same_rows(plan, out)
    plan2 = Filter(EqualNullSafe(col(l, "b"), col(r, "c")), j)
    assert EliminateOuterJoin()(plan2) is plan2


def test_can_filter_out_null():
    l = t1()
    a = col(l, "a")
    assert can_filter_out_null(GreaterThan(a, lit(1)))
    assert can_filter_out_null(IsNotNull(a))
    assert not can_filter_out_null(IsNull(a))
    assert can_filter_out_null(EqualNullSafe(a, lit(1)))  # NULL <=> 1 is false
    assert not can_filter_out_null(EqualNullSafe(a, lit(None)))


def test_aggregate_over_left_outer_join_reading_left_only():
    l, r, j = join(JoinType.LEFT_OUTER)
    a, b = col(l, "a"), col(l, "b")
    plan = Aggregate((a,), (a, Alias(AggregateExpression(Max(b)), "m")), j)
    out = EliminateOuterJoin()(plan)
    assert out.child is l
    assert same_rows(plan, out)
    counting = Aggregate((a,), (a, Alias(AggregateExpression(Count((b,))), "n")), j)
    assert EliminateOuterJoin()(counting) is counting
    proj = Aggregate((a,), (a,), Project((a, b), j))
    out2 = EliminateOuterJoin()(proj)
    assert out2.child.child is l and same_rows(proj, out2)
    reads_right = Aggregate((col(r, "c"),), (col(r, "c"),), j)
    assert EliminateOuterJoin()(reads_right) is reads_right
