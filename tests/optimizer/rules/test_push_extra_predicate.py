"""PushExtraPredicateThroughJoin (Spark 4's rule; shapes checked against PySpark 4.3)."""

from __future__ import annotations

import pytest

from ember import types as T
from ember.expressions.base import AttributeReference
from ember.expressions.predicates import And, EqualTo, GreaterThan, LessThan, Not, Or
from ember.optimizer.rule_executor import Batch, FixedPoint, RuleExecutor, RuleMetrics
from ember.optimizer.rules.push_down_predicates import PushDownPredicates
from ember.optimizer.rules.push_extra_predicate import (
    PushExtraPredicateThroughJoin,
    extract_predicates_within_output_set,
)
from ember.plans.logical.dsl import attr, relation
from ember.plans.logical.join_type import JoinType
from ember.plans.logical.nodes import Join, Project

from ._pdp_util import NonDet, lit, norm, same_rows


@pytest.fixture
def t():
    return relation("t", [(1, 1), (2, None), (None, 3), (3, 4), (2, 5), (1, 7)], a="int", b="int")


@pytest.fixture
def u():
    return relation("u", [(1, 2), (2, None), (None, 3), (5, 4), (2, 2), (3, 9)], x="int", y="int")


def _or_cond(t, u):
    """``(a = 1 AND x = 2) OR (a = 2 AND x = 1)``: each side has an extract."""
    a, x = attr(t, "a"), attr(u, "x")
    return Or(And(EqualTo(a, lit(1)), EqualTo(x, lit(2))),
              And(EqualTo(a, lit(2)), EqualTo(x, lit(1))))


def _existence_attr():
    return AttributeReference("exists", T.BOOLEAN, False)


#: Join type -> (left filtered, right filtered), Spark's PushExtraPredicateThroughJoin.
_SIDES = {
    JoinType.INNER: (True, True),
    JoinType.CROSS: (True, True),
    JoinType.LEFT_SEMI: (True, True),
    JoinType.RIGHT_OUTER: (True, False),
    JoinType.LEFT_OUTER: (False, True),
    JoinType.LEFT_ANTI: (False, True),
    JoinType.EXISTENCE: (False, True),
    JoinType.FULL_OUTER: (False, False),
}


@pytest.mark.parametrize("jt", list(_SIDES), ids=lambda j: j.name)
def test_sides_filtered_per_join_type(t, u, jt):
    cond = And(EqualTo(attr(t, "b"), attr(u, "y")), _or_cond(t, u))
    ex = _existence_attr() if jt is JoinType.EXISTENCE else None
    plan = Join(t, u, jt, cond, existence_attr=ex)
    out = PushExtraPredicateThroughJoin()(plan)
    push_left, push_right = _SIDES[jt]
    if not (push_left or push_right):
        assert out is plan
        return
    assert isinstance(out, Join)
    assert out.condition is cond  # the join keeps its whole condition, unchanged
    assert out.join_type is jt and out.existence_attr is ex
    if push_left:
        assert norm(out.left) == "Filter ((a = 1) OR (a = 2))\n+- LocalRelation [a, b]\n"
    else:
        assert out.left is t
    if push_right:
        assert norm(out.right) == "Filter ((x = 2) OR (x = 1))\n+- LocalRelation [x, y]\n"
    else:
        assert out.right is u
    assert out.processed_condition is not None and out.processed_condition.condition is cond
    assert same_rows(plan, out)


def test_no_condition_or_single_side_conjuncts_untouched(t, u):
    a, x = attr(t, "a"), attr(u, "x")
    plain = Join(t, u, JoinType.INNER, None)
    assert PushExtraPredicateThroughJoin()(plain) is plain
    # equi-condition and one-side conjuncts: nothing *extra* to extract
    plan = Join(t, u, JoinType.INNER, And(EqualTo(a, x), GreaterThan(a, lit(1))))
    assert PushExtraPredicateThroughJoin()(plan) is plan


def test_or_branch_not_extractable_pushes_nothing_to_that_side(t, u):
    a, b, x = attr(t, "a"), attr(t, "b"), attr(u, "x")
    # (a = 1 AND x = 2) OR (x = 3): the right branch says nothing about t -> no left filter;
    # both branches constrain u -> right filter (x = 2) OR (x = 3).
    cond = Or(And(EqualTo(a, lit(1)), EqualTo(x, lit(2))), EqualTo(x, lit(3)))
    plan = Join(t, u, JoinType.INNER, cond)
    out = PushExtraPredicateThroughJoin()(plan)
    assert out.left is t
    assert norm(out.right) == "Filter ((x = 2) OR (x = 3))\n+- LocalRelation [x, y]\n"
    assert same_rows(plan, out)
    # neither side extracts from either branch: rule does not apply at all
    cond2 = Or(EqualTo(a, x), LessThan(b, x))
    plan2 = Join(t, u, JoinType.INNER, cond2)
    assert PushExtraPredicateThroughJoin()(plan2) is plan2


def test_extract_helper():
    t = relation("t", a="int", b="int")
    u = relation("u", x="int")
    a, b, x = attr(t, "a"), attr(t, "b"), attr(u, "x")
    ids = t.output_set
    p1, p2, q1 = EqualTo(a, lit(1)), EqualTo(b, lit(2)), EqualTo(x, lit(3))
    # And keeps the parts that extract
    assert extract_predicates_within_output_set(And(p1, q1), ids) == p1
    assert extract_predicates_within_output_set(And(p1, p2), ids) == And(p1, p2)
    assert extract_predicates_within_output_set(And(q1, q1), ids) is None
    # Or: both branches or nothing; (a1 AND a2) OR (b1 AND b2) -> a1 OR b1
    assert extract_predicates_within_output_set(Or(p1, q1), ids) is None
    assert extract_predicates_within_output_set(
        Or(And(p1, q1), And(p2, q1)), ids) == Or(p1, p2)
    # anything else: whole or nothing (Not is not looked into)
    assert extract_predicates_within_output_set(Not(And(p1, q1)), ids) is None
    assert extract_predicates_within_output_set(Not(p1), ids) == Not(p1)
    assert extract_predicates_within_output_set(NonDet(), ids) is None


def test_non_deterministic_conjunct_not_used(t, u):
    a, x = attr(t, "a"), attr(u, "x")
    # non-deterministic conjunct referencing both sides: never used
    cond = Or(And(EqualTo(a, lit(1)), NonDet()), And(EqualTo(a, lit(2)), EqualTo(x, lit(1))))
    assert not cond.deterministic
    plan = Join(t, u, JoinType.INNER, And(EqualTo(attr(t, "b"), attr(u, "y")), cond))
    assert PushExtraPredicateThroughJoin()(plan) is plan
    # ...while a deterministic sibling conjunct still is
    plan2 = Join(t, u, JoinType.INNER, And(cond, _or_cond(t, u)))
    out = PushExtraPredicateThroughJoin()(plan2)
    assert norm(out.left) == "Filter ((a = 1) OR (a = 2))\n+- LocalRelation [a, b]\n"


def test_processed_join_is_skipped_and_mark_ignored_by_equality(t, u):
    plan = Join(t, u, JoinType.INNER, _or_cond(t, u))
    out = PushExtraPredicateThroughJoin()(plan)
    assert out is not plan
    # the mark survives copy() (as PushDownPredicates rebuilds joins) and the rule skips it
    again = out.copy(left=t, right=u)
    assert again.processed_condition is out.processed_condition
    assert again == plan and hash(again) == hash(plan)  # the mark is not part of equality
    assert PushExtraPredicateThroughJoin()(again) is again
    # a changed condition is processed again
    changed = again.copy(condition=And(_or_cond(t, u), EqualTo(attr(t, "b"), attr(u, "y"))))
    assert PushExtraPredicateThroughJoin()(changed) is not changed
    # the mark is not one of the join's expressions (rules never rewrite it)
    assert out.expressions() == (out.condition,)
    assert "processed" not in out.tree_string()


def _batch_executor():
    return RuleExecutor([Batch("Push extra predicate through join", FixedPoint(100),
                               (PushExtraPredicateThroughJoin(), PushDownPredicates()))])


def test_fixed_point_terminates_with_filters_pushed_once(t, u):
    # the extras go through a Project and below: without the mark the batch would re-add them
    # every iteration and only stop at the iteration limit
    a, b = attr(t, "a"), attr(t, "b")
    left = Project((a, b), t)
    plan = Project((a,), Join(left, u, JoinType.INNER,
                              And(EqualTo(b, attr(u, "y")), _or_cond(t, u))))
    metrics = RuleMetrics()
    out = _batch_executor().execute(plan, metrics=metrics)
    stat = metrics.stats["PushExtraPredicateThroughJoin"]
    assert stat.effective == 1
    assert stat.invocations <= 3
    assert norm(out) == (
        "Project [a]\n"
        "+- Join Inner, ((b = y) AND (((a = 1) AND (x = 2)) OR ((a = 2) AND (x = 1))))\n"
        "   :- Project [a, b]\n"
        "   :  +- Filter ((a = 1) OR (a = 2))\n"
        "   :     +- LocalRelation [a, b]\n"
        "   +- Filter ((x = 2) OR (x = 1))\n"
        "      +- LocalRelation [x, y]\n")
    assert same_rows(plan, out)


def test_nested_joins_each_processed_once(t, u):
    v = relation("v", [(1, 1), (2, 2), (7, None)], p="int", q="int")
    a, x, pp = attr(t, "a"), attr(u, "x"), attr(v, "p")
    inner = Join(t, u, JoinType.INNER, _or_cond(t, u))
    top_cond = Or(And(EqualTo(a, lit(1)), EqualTo(pp, lit(1))),
                  And(EqualTo(x, lit(1)), EqualTo(pp, lit(2))))
    plan = Join(inner, v, JoinType.LEFT_OUTER, top_cond)
    metrics = RuleMetrics()
    out = _batch_executor().execute(plan, metrics=metrics)
    assert metrics.stats["PushExtraPredicateThroughJoin"].invocations <= 3
    # LeftOuter: only the right (v) side is filtered; the left input is not, except by the
    # inner join's own extras
    assert norm(out) == (
        "Join LeftOuter, (((a = 1) AND (p = 1)) OR ((x = 1) AND (p = 2)))\n"
        ":- Join Inner, (((a = 1) AND (x = 2)) OR ((a = 2) AND (x = 1)))\n"
        ":  :- Filter ((a = 1) OR (a = 2))\n"
        ":  :  +- LocalRelation [a, b]\n"
        ":  +- Filter ((x = 2) OR (x = 1))\n"
        ":     +- LocalRelation [x, y]\n"
        "+- Filter ((p = 1) OR (p = 2))\n"
        "   +- LocalRelation [p, q]\n")
    assert same_rows(plan, out)


def test_optimizer_batch_runs_the_rule():
    from ember.conf import SQLConf
    from ember.optimizer.optimizer import default_batches

    batch = next(b for b in default_batches(SQLConf())
                 if b.name == "Push extra predicate through join")
    assert [r.rule_name for r in batch.rules] == [
        "PushExtraPredicateThroughJoin", "PushDownPredicates"]
