"""InferFiltersFromConstraints and the constraint machinery (ember.optimizer.constraints)."""

from __future__ import annotations

import pytest

from ember import types as T
from ember.conf import SQLConf
from ember.expressions.arithmetic import Add
from ember.expressions.base import Alias, Literal
from ember.expressions.cast import Cast
from ember.expressions.conditional import Coalesce
from ember.expressions.predicates import (
    And,
    EqualNullSafe,
    EqualTo,
    GreaterThan,
    IsNotNull,
    LessThan,
)
from ember.optimizer.constraints import (
    ConstraintPropagation,
    ExpressionSet,
    infer_additional_constraints,
    scan_null_intolerant_attributes,
)
from ember.optimizer.rules.infer_filters import InferFiltersFromConstraints
from ember.plans.logical.dsl import attr, relation
from ember.plans.logical.join_type import JoinType
from ember.plans.logical.nodes import Filter, Join, Project, Union

from ._pdp_util import norm, same_rows


def lit(v):
    return Literal(v, T.INT)


@pytest.fixture
def t():
    return relation("t", [(1, 1, "x"), (2, None, "y"), (None, 3, None), (4, 4, "z"), (5, 5, "y")],
                    a="int", b="int", c="string")


@pytest.fixture
def u():
    return relation("u", [(1, 1, "x"), (2, None, "y"), (None, 3, None), (5, 5, "w"), (4, 2, "q")],
                    x="int", y="int", z="string")


def test_expression_set_dedups_semantically(t):
    a, b = attr(t, "a"), attr(t, "b")
    s = ExpressionSet([EqualTo(a, b), EqualTo(b, a), GreaterThan(a, b), LessThan(b, a),
                       IsNotNull(a), IsNotNull(a.with_nullability(False))])
    assert [e.simple_string() for e in s] == [
        f"({a} = {b})", f"({a} > {b})", f"isnotnull({a})"]
    assert LessThan(b, a) in s and EqualTo(a, lit(1)) not in s


def test_null_intolerant_scan(t):
    a, b = attr(t, "a"), attr(t, "b")
    assert scan_null_intolerant_attributes(GreaterThan(Add(a, b), lit(1))) == [a, b]
    assert scan_null_intolerant_attributes(GreaterThan(Cast(a, T.STRING), lit(1))) == [a]
    assert scan_null_intolerant_attributes(GreaterThan(Coalesce((a, b)), lit(1))) == []
    assert scan_null_intolerant_attributes(EqualNullSafe(a, b)) == []


def test_filter_gets_isnotnull_in_spark_order(t):
    a, b = attr(t, "a"), attr(t, "b")
    plan = Filter(And(GreaterThan(a, lit(1)), EqualTo(b, lit(2))), t)
    out = InferFiltersFromConstraints()(plan)
    # Spark 4: Filter ((isnotnull(a#0) AND isnotnull(b#1)) AND ((a#0 > 1) AND (b#1 = 2)))
    assert norm(out).splitlines()[0] == (
        "Filter ((isnotnull(a) AND isnotnull(b)) AND ((a > 1) AND (b = 2)))")
    assert same_rows(plan, out)
    assert InferFiltersFromConstraints()(out) is out


def test_transitivity_in_filter(t):
    a, b = attr(t, "a"), attr(t, "b")
    plan = Filter(And(EqualTo(a, b), GreaterThan(a, lit(3))), t)
    out = InferFiltersFromConstraints()(plan)
    # Spark 4: ((((b > 3) AND isnotnull(a)) AND isnotnull(b)) AND ((a = b) AND (a > 3)))
    assert norm(out).splitlines()[0] == (
        "Filter ((((b > 3) AND isnotnull(a)) AND isnotnull(b)) AND ((a = b) AND (a > 3)))")
    assert same_rows(plan, out)


def test_no_inference_through_coalesce(t):
    a, b = attr(t, "a"), attr(t, "b")
    plan = Filter(GreaterThan(Coalesce((a, b)), lit(1)), t)
    assert InferFiltersFromConstraints()(plan) is plan


def test_join_transitivity_to_other_side(t, u):
    a, x = attr(t, "a"), attr(u, "x")
    plan = Join(Filter(EqualTo(a, lit(5)), t), u, JoinType.INNER, EqualTo(a, x))
    out = InferFiltersFromConstraints()(plan)
    # Spark 4 (after PushDownPredicates): right side Filter ((x = 5) AND isnotnull(x))
    assert norm(out.right).splitlines()[0] == "Filter ((x = 5) AND isnotnull(x))"
    assert norm(out.left).splitlines()[0] == "Filter (isnotnull(a) AND (a = 5))"
    assert same_rows(plan, out)


# join type -> (left gets a filter, right gets a filter)
_SIDES = {
    JoinType.INNER: (True, True),
    JoinType.CROSS: (True, True),
    JoinType.LEFT_SEMI: (True, True),
    JoinType.LEFT_OUTER: (False, True),
    JoinType.LEFT_ANTI: (False, True),
    JoinType.RIGHT_OUTER: (True, False),
    JoinType.FULL_OUTER: (False, False),
}


@pytest.mark.parametrize("jt", list(_SIDES))
def test_join_sides_per_type(t, u, jt):
    a, x = attr(t, "a"), attr(u, "x")
    plan = Join(t, u, jt, EqualTo(a, x))
    out = InferFiltersFromConstraints()(plan)
    assert (isinstance(out.left, Filter), isinstance(out.right, Filter)) == _SIDES[jt]
    if _SIDES[jt] == (False, False):
        assert out is plan
    assert same_rows(plan, out)


def test_existence_join_untouched(t, u):
    from ember.expressions.base import AttributeReference

    ex = AttributeReference("exists", T.BOOLEAN, False)
    plan = Join(t, u, JoinType.EXISTENCE, EqualTo(attr(t, "a"), attr(u, "x")), existence_attr=ex)
    assert InferFiltersFromConstraints()(plan) is plan


def test_constraints_flow_through_project_alias(t, u):
    a, b, x = attr(t, "a"), attr(t, "b"), attr(u, "x")
    bb = Alias(Add(b, lit(1)), "bb")
    one = Alias(lit(1), "one")
    proj = Project((a, bb, one), Filter(GreaterThan(Add(b, lit(1)), lit(2)), t))
    cons = [c.simple_string() for c in ConstraintPropagation().constraints(proj)]
    assert f"({bb.to_attribute()} > 2)" in cons
    assert f"({one.to_attribute()} <=> 1)" in cons
    plan = Join(proj, u, JoinType.INNER, EqualTo(bb.to_attribute(), x))
    out = InferFiltersFromConstraints()(plan)
    # x = bb and bb > 2 give x > 2 on the right
    assert norm(out.right).splitlines()[0] == "Filter ((x > 2) AND isnotnull(x))"
    assert same_rows(plan, out)


def test_left_outer_constraints_only_from_left(t, u):
    a, x, y = attr(t, "a"), attr(u, "x"), attr(u, "y")
    j = Join(t, Filter(GreaterThan(y, lit(1)), u), JoinType.LEFT_OUTER, EqualTo(a, x))
    cons = ConstraintPropagation().constraints(j)
    assert not any(c.references & u.output_set for c in cons)


def test_union_constraints_merge(t, u):
    a, x = attr(t, "a"), attr(u, "x")
    left = Project((a,), Filter(GreaterThan(a, lit(1)), t))
    right = Project((x,), Filter(GreaterThan(x, lit(2)), u))
    cons = [c.simple_string() for c in ConstraintPropagation().constraints(Union((left, right)))]
    assert f"isnotnull({a})" in cons
    assert f"(({a} > 1) OR ({a} > 2))" in cons


def test_infer_additional_constraints_eq_null_safe_excluded(t):
    a, b = attr(t, "a"), attr(t, "b")
    s = ExpressionSet([EqualTo(a, b), EqualNullSafe(a, b)])
    assert len(infer_additional_constraints(s)) == 0


def test_disabled_by_conf(t):
    plan = Filter(GreaterThan(attr(t, "a"), lit(1)), t)
    conf = SQLConf({"spark.sql.constraintPropagation.enabled": "false"})
    assert InferFiltersFromConstraints()(plan, conf) is plan
    assert InferFiltersFromConstraints()(plan) is not plan
