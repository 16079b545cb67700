"""Shared plan-shape extractors (ember.plans.logical.patterns) and the join semantics tables
the optimizer rules read (ember.plans.logical.join_type)."""

from __future__ import annotations

import pytest

from ember import types as T
from ember.expressions.predicates import And, EqualTo, GreaterThan, IsNull, Or
from ember.optimizer.rules.push_down_predicates import PushDownPredicates
from ember.plans.logical.join_type import JoinHint, JoinType
from ember.plans.logical.nodes import Filter, Join
from ember.plans.logical.patterns import (
    extract_filters_and_inner_joins,
    extract_null_aware_anti_join_keys,
    null_aware_anti_join_condition,
)

from .dsl import bag, col, fixed_point, lit, relation, run


def rels():
    r1 = relation("t1", [("a", T.INT)], [(1,), (2,), (None,)])
    r2 = relation("t2", [("b", T.INT)], [(1,), (3,)])
    r3 = relation("t3", [("c", T.INT)], [(1,)])
    return r1, r2, r3


def test_null_aware_condition_is_what_the_extractor_recognizes():
    r1, r2, _ = rels()
    a, b = col(r1, "a"), col(r2, "b")
    cond = null_aware_anti_join_condition(a, b)
    assert cond == Or(EqualTo(a, b), IsNull(EqualTo(a, b)))
    assert extract_null_aware_anti_join_keys(Join(r1, r2, JoinType.LEFT_ANTI, cond)) == (a, b)
    # sides swapped in the condition: keys still come back (left key, right key)
    swapped = null_aware_anti_join_condition(b, a)
    assert extract_null_aware_anti_join_keys(Join(r1, r2, JoinType.LEFT_ANTI, swapped)) == (a, b)
    assert extract_null_aware_anti_join_keys(Join(r1, r2, JoinType.LEFT_SEMI, cond)) is None
    assert extract_null_aware_anti_join_keys(Join(r1, r2, JoinType.LEFT_ANTI, EqualTo(a, b))) is None


def test_extract_filters_and_inner_joins_flattens_in_from_order():
    r1, r2, r3 = rels()
    on = EqualTo(col(r1, "a"), col(r2, "b"))
    where = And(EqualTo(col(r2, "b"), col(r3, "c")), GreaterThan(col(r1, "a"), lit(0)))
    plan = Filter(where, Join(Join(r1, r2, JoinType.INNER, on), r3, JoinType.CROSS))
    items, conds = extract_filters_and_inner_joins(plan)
    assert items == [(r1, JoinType.INNER), (r2, JoinType.INNER), (r3, JoinType.CROSS)]
    assert conds == [on, EqualTo(col(r2, "b"), col(r3, "c")), GreaterThan(col(r1, "a"), lit(0))]


def test_extract_filters_and_inner_joins_stops_at_outer_joins_and_hints():
    r1, r2, r3 = rels()
    outer = Join(r1, r2, JoinType.LEFT_OUTER, EqualTo(col(r1, "a"), col(r2, "b")))
    # as Spark's unapply: a non-inner join is one item (ReorderJoin's size guard ignores it)
    assert extract_filters_and_inner_joins(outer) == ([(outer, JoinType.INNER)], [])
    items, _ = extract_filters_and_inner_joins(Join(outer, r3, JoinType.INNER))
    assert items == [(outer, JoinType.INNER), (r3, JoinType.INNER)]
    hinted = Join(r1, r2, JoinType.INNER, hint=JoinHint(right=("BROADCAST",)))
    assert extract_filters_and_inner_joins(hinted) is None
    assert extract_filters_and_inner_joins(r1) is None


@pytest.mark.parametrize(
    "jt, left, right",
    [
        (JoinType.INNER, False, False),
        (JoinType.CROSS, False, False),
        (JoinType.LEFT_OUTER, True, False),
        (JoinType.RIGHT_OUTER, False, True),
        (JoinType.FULL_OUTER, True, True),
        (JoinType.LEFT_SEMI, False, False),
        (JoinType.LEFT_ANTI, True, False),
        (JoinType.EXISTENCE, True, False),
    ],
)
def test_keeps_unmatched_tables(jt, left, right):
    assert jt.keeps_unmatched_left is left
    assert jt.keeps_unmatched_right is right


def test_left_only_on_conjunct_of_anti_join_is_not_pushed():
    # t1 LEFT ANTI JOIN t2 ON a = b AND a > 1: rows with a <= 1 have no match, so they stay.
    r1, r2, _ = rels()
    on = And(EqualTo(col(r1, "a"), col(r2, "b")), GreaterThan(col(r1, "a"), lit(1)))
    plan = Join(r1, r2, JoinType.LEFT_ANTI, on)
    assert fixed_point(PushDownPredicates(), plan) is plan
    assert bag(run(plan)) == bag([(1,), (2,), (None,)])


def test_left_only_on_conjunct_of_semi_join_is_pushed():
    r1, r2, _ = rels()
    on = And(EqualTo(col(r1, "a"), col(r2, "b")), GreaterThan(col(r1, "a"), lit(1)))
    plan = Join(r1, r2, JoinType.LEFT_SEMI, on)
    out = fixed_point(PushDownPredicates(), plan)
    assert isinstance(out.left, Filter) and out.left.condition == GreaterThan(col(r1, "a"), lit(1))
    assert out.condition == EqualTo(col(r1, "a"), col(r2, "b"))
    assert bag(run(out)) == bag(run(plan)) == bag([])
