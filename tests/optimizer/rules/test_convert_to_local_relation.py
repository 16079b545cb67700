import pytest

from ember import types as T
from ember.errors import EmberError
from ember.expressions.arithmetic import Add, Divide
from ember.expressions.base import Alias, Literal
from ember.expressions.predicates import GreaterThan
from ember.optimizer.rules.convert_to_local_relation import ConvertToLocalRelation
from ember.plans.logical.nodes import Filter, Limit, LocalRelation, Project

from ..dsl import col, lit, run
from ._util import same_rows, t1


def test_project_filter_limit_computed():
    r = t1()
    a, b = col(r, "a"), col(r, "b")
    plan = Limit(lit(2), Project((Alias(Add(a, b), "s"), a),
                                Filter(GreaterThan(a, lit(1)), r)))
    rule = ConvertToLocalRelation()
    out = plan
    for _ in range(5):
        out = rule(out)
    assert isinstance(out, LocalRelation)
    assert [x.id for x in out.output] == [x.id for x in plan.output]
    assert run(out) == run(plan)
    assert same_rows(plan, out)


def test_errors_left_for_run_time():
    r = t1()
    plan = Project((Alias(Divide(Literal(1.0, T.DOUBLE), Literal(0.0, T.DOUBLE)), "x"),), r)
    assert ConvertToLocalRelation()(plan) is plan
    with pytest.raises(EmberError):
        run(plan)


def test_not_local_relation_or_unevaluable_untouched():
    from ember.expressions.subquery import ScalarSubquery

    r = t1()
    plan = Project((Alias(ScalarSubquery(Project((col(r, "a"),), r), ()), "x"),), r)
    assert ConvertToLocalRelation()(plan) is plan
    p2 = Project((col(r, "a"),), Filter(GreaterThan(col(r, "a"), lit(1)), r))
    out = ConvertToLocalRelation()(p2)
    assert isinstance(out, Project) and isinstance(out.child, LocalRelation)
    assert ConvertToLocalRelation()(r) is r
