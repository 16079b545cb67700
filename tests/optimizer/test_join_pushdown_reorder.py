"""PushDownPredicates, ReorderJoin and BooleanSimplification (common conjuncts out of OR)."""

from __future__ import annotations

from ember import types as T
from ember.expressions.predicates import And, EqualTo, GreaterThan, Or
from ember.optimizer.rules.boolean_simplification import (
    BooleanSimplification,
    simplify_boolean,
)
from ember.optimizer.rules.push_down_predicates import PushDownPredicates
from ember.optimizer.rules.reorder_join import ReorderJoin
from ember.plans.logical.join_type import JoinType
from ember.plans.logical.nodes import Filter, Join, Project

from .dsl import bag, col, fixed_point, lit, relation, rewrite_for_execution, run


def t1():
    return relation("t1", [("a", T.INT), ("x", T.INT)], [(1, 10), (2, 20), (3, 30)])


def t2():
    return relation("t2", [("b", T.INT)], [(1,), (2,), (4,)])


def t3():
    return relation("t3", [("c", T.INT)], [(1,), (2,), (2,)])


def joins(plan):
    return plan.collect(lambda p: p if isinstance(p, Join) else None)


def test_filter_over_cross_join_becomes_equi_join_with_pushed_side_filter():
    r1, r2 = t1(), t2()
    cond = And(EqualTo(col(r1, "a"), col(r2, "b")), GreaterThan(col(r1, "x"), lit(10)))
    plan = Filter(cond, Join(r1, r2, JoinType.INNER))
    out = fixed_point(PushDownPredicates(), plan)
    assert isinstance(out, Join) and out.join_type is JoinType.INNER
    assert out.condition == EqualTo(col(r1, "a"), col(r2, "b"))
    assert isinstance(out.left, Filter) and out.left.condition == GreaterThan(col(r1, "x"), lit(10))
    assert out.right is r2
    assert out.output == plan.output
    assert bag(run(out)) == bag(run(plan)) == bag([(2, 20, 2)])


def test_left_outer_join_keeps_right_only_filter_above_and_pushes_on_condition():
    r1, r2 = t1(), t2()
    on = And(EqualTo(col(r1, "a"), col(r2, "b")), GreaterThan(col(r2, "b"), lit(1)))
    above = And(GreaterThan(col(r1, "x"), lit(10)), EqualTo(col(r2, "b"), lit(2)))
    plan = Filter(above, Join(r1, r2, JoinType.LEFT_OUTER, on))
    out = fixed_point(PushDownPredicates(), plan)
    # right-only conjunct of the WHERE stays above (it would change NULL padding below)
    assert isinstance(out, Filter) and out.condition == EqualTo(col(r2, "b"), lit(2))
    j = out.child
    assert isinstance(j.left, Filter)  # x > 10 pushed to the preserved side
    assert isinstance(j.right, Filter) and j.right.condition == GreaterThan(col(r2, "b"), lit(1))
    assert j.condition == EqualTo(col(r1, "a"), col(r2, "b"))
    assert bag(run(out)) == bag(run(plan))


def test_filter_pushed_through_project_with_alias_substituted():
    r1 = t1()
    from ember.expressions.base import Alias

    al = Alias(col(r1, "x"), "y")
    proj = Project((col(r1, "a"), al), r1)
    plan = Filter(GreaterThan(al.to_attribute(), lit(15)), proj)
    out = fixed_point(PushDownPredicates(), plan)
    assert isinstance(out, Project)
    assert out.child.condition == GreaterThan(col(r1, "x"), lit(15))
    assert run(out) == run(plan) == [(2, 20), (3, 30)]


def test_nothing_to_push_returns_same_object():
    r1 = t1()
    plan = Project((col(r1, "a"),), Filter(GreaterThan(col(r1, "a"), lit(1)), r1))
    assert fixed_point(PushDownPredicates(), plan) is plan
    assert ReorderJoin()(plan) is plan
    assert fixed_point(BooleanSimplification(), plan) is plan


def test_reorder_join_avoids_cartesian_product():
    # FROM t1, t2, t3 WHERE a = c AND b = c: t1 x t2 have no condition, so t3 comes second
    r1, r2, r3 = t1(), t2(), t3()
    cond = And(EqualTo(col(r1, "a"), col(r3, "c")), EqualTo(col(r2, "b"), col(r3, "c")))
    plan = Filter(cond, Join(Join(r1, r2, JoinType.INNER), r3, JoinType.INNER))
    out = rewrite_for_execution(plan)
    assert [a.id for a in out.output] == [a.id for a in plan.output]
    js = joins(out)
    assert len(js) == 2 and all(j.condition is not None for j in js)
    assert bag(run(out)) == bag(run(plan)) == bag([(1, 10, 1, 1), (2, 20, 2, 2), (2, 20, 2, 2)])


def test_reorder_join_restores_output_order_with_project():
    r1, r2, r3 = t1(), t2(), t3()
    cond = And(EqualTo(col(r1, "a"), col(r3, "c")), EqualTo(col(r2, "b"), col(r3, "c")))
    plan = Filter(cond, Join(Join(r1, r2, JoinType.INNER), r3, JoinType.INNER))
    out = ReorderJoin()(plan)
    assert isinstance(out, Project) and out.output == plan.output


def test_simplify_boolean_out_of_or():
    r1, r2 = t1(), t2()
    key = EqualTo(col(r1, "a"), col(r2, "b"))
    p, q = GreaterThan(col(r1, "x"), lit(15)), GreaterThan(col(r1, "x"), lit(25))
    assert simplify_boolean(Or(And(key, p), And(key, q))) == And(key, Or(p, q))
    assert simplify_boolean(Or(And(key, p), key)) == key
    assert simplify_boolean(Or(p, q)) == Or(p, q)


def test_or_of_join_conditions_becomes_equi_join():
    r1, r2 = t1(), t2()
    key = EqualTo(col(r1, "a"), col(r2, "b"))
    cond = Or(And(key, GreaterThan(col(r1, "x"), lit(15))), And(key, EqualTo(col(r2, "b"), lit(1))))
    plan = Filter(cond, Join(r1, r2, JoinType.INNER))
    out = rewrite_for_execution(plan)
    j = joins(out)[0]
    from ember.plans.logical.patterns import split_join_condition

    assert split_join_condition(j.condition, j.left, j.right) is not None
    assert bag(run(out)) == bag(run(plan)) == bag([(1, 10, 1), (2, 20, 2)])
