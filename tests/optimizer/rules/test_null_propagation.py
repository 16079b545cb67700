from ember import types as T
from ember.expressions.aggregates import AggregateExpression, Count, Sum
from ember.expressions.arithmetic import Add
from ember.expressions.base import Alias, AttributeReference, Literal
from ember.expressions.cast import Cast
from ember.expressions.conditional import Coalesce
from ember.expressions.predicates import EqualNullSafe, EqualTo, In, IsNotNull, IsNull
from ember.optimizer.rules.null_propagation import NullPropagation, scan_null_intolerant_attributes
from ember.plans.logical.nodes import Aggregate, Project

from ..dsl import col, lit
from ._util import same_rows, t1

NULL_INT = Literal(None, T.INT)


def proj(r, *exprs):
    return Project(tuple(Alias(e, f"c{i}") for i, e in enumerate(exprs)), r)


def items(p):
    return [e.child for e in p.project_list]


def test_null_intolerant_with_null_literal_becomes_null():
    r = t1()
    a = col(r, "a")
    plan = proj(r, Add(a, NULL_INT), EqualTo(a, NULL_INT), In(NULL_INT, (lit(1),)))
    out = NullPropagation()(plan)
    assert items(out) == [NULL_INT, Literal(None, T.BOOLEAN), Literal(None, T.BOOLEAN)]
    assert same_rows(plan, out)


def test_null_checks_on_non_nullable_and_null_safe_equality():
    r = t1()
    a = col(r, "a")
    nn = Add(lit(1), lit(2))  # not nullable
    plan = proj(r, IsNull(nn), IsNotNull(nn), EqualNullSafe(NULL_INT, a), EqualNullSafe(a, NULL_INT),
                IsNull(a))
    out = NullPropagation()(plan)
    assert items(out) == [Literal(False, T.BOOLEAN), Literal(True, T.BOOLEAN), IsNull(a), IsNull(a),
                          IsNull(a)]
    assert same_rows(plan, out)


def test_coalesce():
    r = t1()
    a, b = col(r, "a"), col(r, "b")
    plan = proj(r, Coalesce((NULL_INT, a, NULL_INT, b)), Coalesce((a, lit(0), b)),
                Coalesce((NULL_INT, NULL_INT)), Coalesce((NULL_INT, a)))
    out = NullPropagation()(plan)
    assert items(out) == [Coalesce((a, b)), Coalesce((a, lit(0))), NULL_INT, a]
    assert same_rows(plan, out)


def test_count_rewrites():
    r = t1()
    a = col(r, "a")
    nn = Add(lit(1), lit(2))
    plan = Aggregate((a,), (a, Alias(AggregateExpression(Count((NULL_INT,))), "n0"),
                            Alias(AggregateExpression(Count((nn,))), "n1"),
                            Alias(AggregateExpression(Count((nn,)), is_distinct=True), "n2"),
                            Alias(AggregateExpression(Sum(a)), "s")), r)
    out = NullPropagation()(plan)
    e = out.aggregate_expressions
    assert e[1].child == Cast(Literal(0, T.LONG), T.LONG)
    assert e[2].child.func == Count((Literal(1, T.INT),))
    assert e[3].child.func == Count((nn,))  # DISTINCT untouched
    assert e[4] is plan.aggregate_expressions[4]
    assert same_rows(plan, out)


def test_unchanged_returns_same_object():
    r = t1()
    plan = proj(r, Add(col(r, "a"), lit(1)))
    assert NullPropagation()(plan) is plan


def test_scan_null_intolerant_attributes():
    r = t1()
    a, b = col(r, "a"), col(r, "b")
    assert scan_null_intolerant_attributes(EqualTo(Add(a, lit(1)), b)) == [a, b]
    assert scan_null_intolerant_attributes(Coalesce((a, b))) == []
    assert scan_null_intolerant_attributes(EqualNullSafe(a, b)) == []
    assert isinstance(scan_null_intolerant_attributes(a)[0], AttributeReference)
