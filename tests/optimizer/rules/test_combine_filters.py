from ember import types as T
from ember.expressions.base import Expression
from ember.expressions.predicates import And, GreaterThan, LessThan
from ember.optimizer.rules.combine_filters import CombineFilters
from ember.plans.logical.nodes import Filter

from ..dsl import col, lit
from ._util import same_rows, t1


class _NonDet:
    """Makes an expression report non-determinism (Ember has no rand())."""


def nondet(e: Expression) -> Expression:
    from dataclasses import dataclass

    cls = type(e)
    sub = type("NonDet" + cls.__name__, (cls,), {
        "deterministic": property(lambda self: False), "__slots__": ()})
    return sub(e.left, e.right)


def test_two_filters_combined_lower_first():
    r = t1()
    p, q = GreaterThan(col(r, "a"), lit(1)), LessThan(col(r, "b"), lit(30))
    plan = Filter(q, Filter(p, r))
    out = CombineFilters()(plan)
    assert out == Filter(And(p, q), r)
    assert same_rows(plan, out)


def test_duplicate_conjuncts_dropped():
    r = t1()
    p, q = GreaterThan(col(r, "a"), lit(1)), LessThan(col(r, "b"), lit(30))
    plan = Filter(And(p, q), Filter(p, r))
    assert CombineFilters()(plan) == Filter(And(p, q), r)
    only_dup = Filter(p, Filter(p, r))
    assert CombineFilters()(only_dup) == Filter(p, r)


def test_non_deterministic_lower_not_combined_and_upper_kept_on_top():
    r = t1()
    p, q = GreaterThan(col(r, "a"), lit(1)), LessThan(col(r, "b"), lit(30))
    nd = nondet(q)
    plan = Filter(p, Filter(nd, r))
    assert CombineFilters()(plan) is plan
    plan2 = Filter(And(nd, p), Filter(q, r))
    out = CombineFilters()(plan2)
    assert out == Filter(nd, Filter(And(q, p), r))
    plan3 = Filter(nd, Filter(q, r))
    assert CombineFilters()(plan3) is plan3
