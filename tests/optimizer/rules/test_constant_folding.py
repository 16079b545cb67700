from ember import types as T
from ember.expressions.arithmetic import Add, Divide, Multiply
from ember.expressions.base import Alias, Literal
from ember.expressions.cast import Cast
from ember.expressions.predicates import GreaterThan
from ember.optimizer.rules.constant_folding import ConstantFolding
from ember.plans.logical.nodes import Filter, Project

from ..dsl import col, lit
from ._util import same_rows, t1


def test_folds_arithmetic_in_filter_and_project():
    r = t1()
    a = col(r, "a")
    plan = Project((Alias(Add(a, Multiply(lit(2), lit(3))), "x"),),
                   Filter(GreaterThan(a, Add(lit(0), lit(1))), r))
    out = ConstantFolding()(plan)
    assert out.project_list[0].child == Add(a, lit(6))
    assert out.project_list[0].id == plan.project_list[0].id
    assert out.child.condition == GreaterThan(a, lit(1))
    assert same_rows(plan, out)


def test_folds_casts_of_literals():
    r = t1()
    e = Cast(Literal("1.5", T.STRING), T.DOUBLE)
    plan = Project((Alias(e, "x"),), r)
    out = ConstantFolding()(plan)
    assert out.project_list[0].child == Literal(1.5, T.DOUBLE)
    assert type(out.project_list[0].child) is Literal


def test_errors_are_not_folded_and_still_raise_at_run_time():
    import pytest

    from ember.errors import EmberError
    from ..dsl import run

    r = t1()
    bad = Divide(Literal(1.0, T.DOUBLE), Literal(0.0, T.DOUBLE))
    bad_cast = Cast(Literal("x", T.STRING), T.INT)
    plan = Project((Alias(Add(bad, Add(Literal(1.0, T.DOUBLE), Literal(2.0, T.DOUBLE))), "x"),
                    Alias(bad_cast, "y")), r)
    out = ConstantFolding()(plan)
    # 1.0 / 0.0 raises under ANSI: kept; its folding sibling is folded
    assert out.project_list[0].child == Add(bad, Literal(3.0, T.DOUBLE))
    assert out.project_list[1].child == bad_cast
    with pytest.raises(EmberError):
        run(out)


def test_nothing_foldable_returns_same_object():
    r = t1()
    plan = Filter(GreaterThan(col(r, "a"), lit(1)), r)
    assert ConstantFolding()(plan) is plan


def test_null_result_folds_to_typed_null():
    r = t1()
    plan = Project((Alias(Add(Literal(None, T.INT), lit(1)), "x"),), r)
    out = ConstantFolding()(plan)
    assert out.project_list[0].child == Literal(None, T.INT)
    assert same_rows(plan, out)
