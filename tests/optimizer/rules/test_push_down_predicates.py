"""PushDownPredicates / PushPredicateThroughNonJoin / PushPredicateThroughJoin (Spark 4 shapes)."""

from __future__ import annotations

import pytest

from ember import types as T
from ember.expressions.aggregates import AggregateExpression, Count, Sum
from ember.expressions.arithmetic import Add
from ember.expressions.base import Alias, Literal, SortOrder
from ember.expressions.predicates import And, EqualTo, GreaterThan, LessThan
from ember.optimizer.rules.push_down_predicates import (
    PushDownPredicates,
    PushPredicateThroughJoin,
    PushPredicateThroughNonJoin,
)
from ember.plans.logical.dsl import attr, relation
from ember.plans.logical.join_type import JoinType
from ember.plans.logical.nodes import (
    Aggregate,
    Distinct,
    Filter,
    Join,
    Limit,
    Project,
    Sort,
    Union,
)

from ..dsl import fixed_point
from ._pdp_util import NonDet, lit, norm, same_rows


@pytest.fixture
def t():
    return relation("t", [(1, 1, "x"), (2, None, "y"), (None, 3, None), (4, 4, "z"), (2, 5, "y")],
                    a="int", b="int", c="string")


@pytest.fixture
def u():
    return relation("u", [(1, 1, "x"), (2, None, "y"), (None, 3, None), (5, 4, "w"), (2, 2, "q")],
                    x="int", y="int", z="string")


def test_filter_through_project_replaces_aliases(t):
    a, b = attr(t, "a"), attr(t, "b")
    xx = Alias(Add(a, lit(1)), "xx")
    proj = Project((xx, b), t)
    plan = Filter(GreaterThan(xx.to_attribute(), lit(3)), proj)
    out = PushPredicateThroughNonJoin()(plan)
    assert norm(out) == (
        "Project [(a + 1) AS xx, b]\n"
        "+- Filter ((a + 1) > 3)\n"
        "   +- LocalRelation [a, b, c]\n")
    assert same_rows(plan, out)


def test_filter_not_pushed_through_non_deterministic_project(t):
    proj = Project((attr(t, "a"), Alias(NonDet(), "r")), t)
    plan = Filter(GreaterThan(attr(t, "a"), lit(1)), proj)
    assert PushPredicateThroughNonJoin()(plan) is plan


def test_filter_through_aggregate_grouping_conjuncts_only(t):
    a = attr(t, "a")
    cnt = Alias(AggregateExpression(Count((lit(1),))), "cnt")
    agg = Aggregate((a,), (a, cnt), t)
    plan = Filter(And(GreaterThan(a, lit(1)), GreaterThan(cnt.to_attribute(), Literal(1, T.LONG))),
                  agg)
    out = PushDownPredicates()(plan)
    assert norm(out) == (
        "Filter (cnt > 1)\n"
        "+- Aggregate [a], [a, count(1) AS cnt]\n"
        "   +- Filter (a > 1)\n"
        "      +- LocalRelation [a, b, c]\n")
    assert same_rows(plan, out)


def test_filter_through_aggregate_alias_of_grouping_expression(t):
    a, b = attr(t, "a"), attr(t, "b")
    k = Alias(Add(a, lit(1)), "k")
    s = Alias(AggregateExpression(Sum(b)), "s")
    agg = Aggregate((Add(a, lit(1)),), (k, s), t)
    plan = Filter(LessThan(k.to_attribute(), lit(4)), agg)
    out = PushDownPredicates()(plan)
    assert isinstance(out, Aggregate)
    assert norm(out).splitlines()[1] == "+- Filter ((a + 1) < 4)"
    assert same_rows(plan, out)


def test_filter_not_pushed_through_global_aggregate(t):
    cnt = Alias(AggregateExpression(Count((lit(1),))), "cnt")
    plan = Filter(GreaterThan(cnt.to_attribute(), Literal(0, T.LONG)), Aggregate((), (cnt,), t))
    assert PushDownPredicates()(plan) is plan


def test_filter_through_union_renames_per_branch(t, u):
    union = Union((Project((attr(t, "a"), attr(t, "b")), t), Project((attr(u, "x"), attr(u, "y")), u)))
    a, b = union.output
    plan = Filter(And(GreaterThan(a, lit(1)), And(LessThan(b, lit(5)), NonDet())), union)
    out = PushDownPredicates()(plan)
    assert norm(out) == (
        "Filter nondet()\n"
        "+- Union false, false\n"
        "   :- Project [a, b]\n"
        "   :  +- Filter ((a > 1) AND (b < 5))\n"
        "   :     +- LocalRelation [a, b, c]\n"
        "   +- Project [x, y]\n"
        "      +- Filter ((x > 1) AND (y < 5))\n"
        "         +- LocalRelation [x, y, z]\n")
    det = Filter(And(GreaterThan(a, lit(1)), LessThan(b, lit(5))), union)
    assert same_rows(det, PushDownPredicates()(det))


def test_filter_through_sort_and_distinct_not_limit(t):
    a = attr(t, "a")
    sort = Sort((SortOrder(attr(t, "b"), True, True),), True, t)
    out = PushDownPredicates()(Filter(GreaterThan(a, lit(1)), sort))
    assert isinstance(out, Sort) and isinstance(out.child, Filter)
    out = PushDownPredicates()(Filter(GreaterThan(a, lit(1)), Distinct(t)))
    assert isinstance(out, Distinct) and isinstance(out.child, Filter)
    plan = Filter(GreaterThan(a, lit(1)), Limit(lit(2), t))
    assert PushDownPredicates()(plan) is plan


def test_combine_filters_inside_push_down(t):
    a, b = attr(t, "a"), attr(t, "b")
    plan = Filter(GreaterThan(a, lit(1)), Filter(LessThan(b, lit(5)), t))
    out = PushDownPredicates()(plan)
    assert norm(out) == "Filter ((b < 5) AND (a > 1))\n+- LocalRelation [a, b, c]\n"


# -- joins ------------------------------------------------------------------------------------

# join type -> (left conjunct pushed, right conjunct pushed) for a Filter above the join
_FILTER_ABOVE = {
    JoinType.INNER: (True, True),
    JoinType.CROSS: (True, True),
    JoinType.LEFT_OUTER: (True, False),
    JoinType.RIGHT_OUTER: (False, True),
    JoinType.FULL_OUTER: (False, False),
}
# join type -> (left conjunct pushed, right conjunct pushed) for join condition conjuncts
_IN_CONDITION = {
    JoinType.INNER: (True, True),
    JoinType.CROSS: (True, True),
    JoinType.LEFT_SEMI: (True, True),
    JoinType.LEFT_OUTER: (False, True),
    JoinType.RIGHT_OUTER: (True, False),
    JoinType.LEFT_ANTI: (False, True),
    JoinType.FULL_OUTER: (False, False),
}


def _side_filtered(side) -> bool:
    return isinstance(side, Filter)


@pytest.mark.parametrize("jt", list(_FILTER_ABOVE))
def test_filter_above_join_respects_preserved_sides(t, u, jt):
    a, b, x, y = attr(t, "a"), attr(t, "b"), attr(u, "x"), attr(u, "y")
    join = Join(t, u, jt, EqualTo(a, x))
    plan = Filter(And(GreaterThan(b, lit(1)), LessThan(y, lit(4))), join)
    out = PushPredicateThroughJoin()(plan)
    j = out.find(lambda p: isinstance(p, Join))
    assert (_side_filtered(j.left), _side_filtered(j.right)) == _FILTER_ABOVE[jt]
    assert out.output == plan.output
    assert same_rows(plan, out)


@pytest.mark.parametrize("jt", [JoinType.LEFT_SEMI, JoinType.LEFT_ANTI])
def test_filter_above_left_existence_join(t, u, jt):
    a, b, x = attr(t, "a"), attr(t, "b"), attr(u, "x")
    plan = Filter(GreaterThan(b, lit(1)), Join(t, u, jt, EqualTo(a, x)))
    out = PushPredicateThroughJoin()(plan)
    assert isinstance(out, Join) and isinstance(out.left, Filter) and out.right is u
    assert same_rows(plan, out)


@pytest.mark.parametrize("jt", list(_IN_CONDITION))
def test_join_condition_respects_preserved_sides(t, u, jt):
    a, b, x, y = attr(t, "a"), attr(t, "b"), attr(u, "x"), attr(u, "y")
    cond = And(And(EqualTo(a, x), GreaterThan(b, lit(1))), LessThan(y, lit(4)))
    plan = Join(t, u, jt, cond)
    out = PushPredicateThroughJoin()(plan)
    if _IN_CONDITION[jt] == (False, False):
        assert out is plan
    else:
        assert (_side_filtered(out.left), _side_filtered(out.right)) == _IN_CONDITION[jt]
    assert same_rows(plan, out)


def test_inner_join_common_conjunct_joins_condition_spark_order(t, u):
    a, b, x, y = attr(t, "a"), attr(t, "b"), attr(u, "x"), attr(u, "y")
    plan = Filter(And(GreaterThan(Add(a, y), lit(2)), GreaterThan(b, lit(1))),
                  Join(t, u, JoinType.INNER, EqualTo(a, x)))
    out = PushDownPredicates()(plan)
    assert norm(out) == (
        "Join Inner, (((a + y) > 2) AND (a = x))\n"
        ":- Filter (b > 1)\n"
        ":  +- LocalRelation [a, b, c]\n"
        "+- LocalRelation [x, y, z]\n")
    assert same_rows(plan, out)


def test_cross_join_keeps_its_type(t, u):
    plan = Filter(EqualTo(attr(t, "a"), attr(u, "x")), Join(t, u, JoinType.CROSS))
    out = PushDownPredicates()(plan)
    assert isinstance(out, Join) and out.join_type is JoinType.CROSS
    assert out.condition is not None
    assert same_rows(plan, out)


def test_non_deterministic_conjunct_stays_above_join(t, u):
    a, b, x = attr(t, "a"), attr(t, "b"), attr(u, "x")
    plan = Filter(And(NonDet(), GreaterThan(b, lit(1))), Join(t, u, JoinType.INNER, EqualTo(a, x)))
    out = PushDownPredicates()(plan)
    assert norm(out) == (
        "Filter nondet()\n"
        "+- Join Inner, (a = x)\n"
        "   :- Filter (b > 1)\n"
        "   :  +- LocalRelation [a, b, c]\n"
        "   +- LocalRelation [x, y, z]\n")


def test_deep_push_through_project_and_join(t, u):
    a, x, y = attr(t, "a"), attr(u, "x"), attr(u, "y")
    proj = Project((a, y), Join(t, u, JoinType.INNER, EqualTo(a, x)))
    plan = Filter(And(GreaterThan(a, lit(1)), LessThan(y, lit(4))), proj)
    out = PushDownPredicates()(plan)
    assert norm(out) == (
        "Project [a, y]\n"
        "+- Join Inner, (a = x)\n"
        "   :- Filter (a > 1)\n"
        "   :  +- LocalRelation [a, b, c]\n"
        "   +- Filter (y < 4)\n"
        "      +- LocalRelation [x, y, z]\n")
    assert same_rows(plan, out)


def test_no_change_returns_same_object(t, u):
    plan = Project((attr(t, "a"),), Join(t, u, JoinType.INNER, EqualTo(attr(t, "a"), attr(u, "x"))))
    assert PushDownPredicates()(plan) is plan
    assert fixed_point(PushDownPredicates(), plan) is plan


def test_legacy_entry_point_reaches_fixed_point(t, u):
    a, b, x = attr(t, "a"), attr(t, "b"), attr(u, "x")
    plan = Filter(EqualTo(a, x), Filter(GreaterThan(b, lit(1)), Join(t, u, JoinType.CROSS)))
    out = fixed_point(PushDownPredicates(), plan)
    assert isinstance(out, Join) and out.condition == EqualTo(a, x)
    assert isinstance(out.left, Filter)
    assert fixed_point(PushDownPredicates(), out) is out
    assert same_rows(plan, out)
