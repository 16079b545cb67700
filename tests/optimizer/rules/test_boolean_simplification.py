from ember import types as T
from ember.expressions.base import Alias, Literal
from ember.expressions.conditional import If
from ember.expressions.predicates import (
    And, EqualTo, GreaterThan, GreaterThanOrEqual, IsNotNull, IsNull, LessThan, LessThanOrEqual,
    Not, Or,
)
from ember.optimizer.rules.boolean_simplification import (
    BooleanSimplification,
    simplify_boolean,
)
from ember.plans.logical.nodes import Filter, Project

from ..dsl import col, fixed_point, lit
from ._util import same_rows, t1

TRUE, FALSE, NULLB = Literal(True, T.BOOLEAN), Literal(False, T.BOOLEAN), Literal(None, T.BOOLEAN)


def preds():
    r = t1()
    a, b = col(r, "a"), col(r, "b")
    return r, GreaterThan(a, lit(1)), LessThan(b, lit(30)), EqualTo(a, lit(2))


def test_true_false_elimination():
    _, p, q, _ = preds()
    assert simplify_boolean(And(TRUE, p)) == p
    assert simplify_boolean(And(p, TRUE)) == p
    assert simplify_boolean(Or(FALSE, p)) == p
    assert simplify_boolean(And(p, FALSE)) == FALSE
    assert simplify_boolean(Or(TRUE, q)) == TRUE
    assert simplify_boolean(Not(TRUE)) == FALSE


def test_a_and_not_a():
    _, p, _, _ = preds()
    assert simplify_boolean(And(p, Not(p))) == If(IsNull(p), NULLB, FALSE)
    assert simplify_boolean(Or(p, Not(p))) == If(IsNull(p), NULLB, TRUE)


def test_idempotence_and_commutative_semantics():
    r, p, q, _ = preds()
    a = col(r, "a")
    assert simplify_boolean(And(p, p)) == p
    # a > 1 is semantically 1 < a
    assert GreaterThan(a, lit(1)).semantic_equals(LessThan(lit(1), a))
    assert EqualTo(a, lit(2)).semantic_equals(EqualTo(lit(2), a))
    assert simplify_boolean(Or(p, LessThan(lit(1), a))) == p


def test_common_factor_of_disjunction_and_conjunction():
    _, p, q, s = preds()
    assert simplify_boolean(Or(And(p, q), And(p, s))) == And(p, Or(q, s))
    assert simplify_boolean(Or(And(p, q), p)) == p
    assert simplify_boolean(And(Or(p, q), Or(p, s))) == Or(p, And(q, s))
    assert simplify_boolean(And(And(p, q), p)) == And(p, q)


def test_not_pushdown():
    r, p, q, _ = preds()
    a, b = col(r, "a"), col(r, "b")
    assert simplify_boolean(Not(GreaterThan(a, b))) == LessThanOrEqual(a, b)
    assert simplify_boolean(Not(GreaterThanOrEqual(a, b))) == LessThan(a, b)
    assert simplify_boolean(Not(LessThan(a, b))) == GreaterThanOrEqual(a, b)
    assert simplify_boolean(Not(LessThanOrEqual(a, b))) == GreaterThan(a, b)
    assert simplify_boolean(Not(Not(p))) == p
    assert simplify_boolean(Not(IsNull(a))) == IsNotNull(a)
    assert simplify_boolean(Not(IsNotNull(a))) == IsNull(a)
    # NOT (p OR q): first step only (bottom-up, once); the fixed point pushes further
    assert simplify_boolean(Not(Or(p, q))) == And(Not(p), Not(q))
    plan = Filter(Not(Or(p, q)), r)
    assert fixed_point(BooleanSimplification(), plan).condition == And(
        LessThanOrEqual(a, lit(1)), GreaterThanOrEqual(b, lit(30)))


def test_non_nullable_absorption():
    r, p, q, _ = preds()
    from ember.expressions.base import AttributeReference

    nn = AttributeReference("f", T.BOOLEAN, False)  # not nullable
    assert simplify_boolean(And(nn, Or(Not(nn), q))) == And(nn, q)
    # nullable operand: not simplified by that case
    r_a = col(r, "a")
    assert simplify_boolean(And(p, Or(Not(p), q))) == And(p, Or(LessThanOrEqual(r_a, lit(1)), q))


def test_rule_on_plan_keeps_rows_and_identity():
    r, p, q, s = preds()
    cond = Or(And(p, And(q, TRUE)), And(Not(Not(p)), s))
    plan = Project((Alias(Or(p, Not(p)), "x"),), Filter(cond, r))
    out = fixed_point(BooleanSimplification(), plan)
    assert out.child.condition == And(p, Or(q, s))
    assert same_rows(plan, out)
    assert BooleanSimplification()(out) is out
    assert fixed_point(BooleanSimplification(), out) is out
