from ember import types as T
from ember.expressions.aggregates import AggregateExpression, Sum
from ember.expressions.arithmetic import Add, Multiply
from ember.expressions.base import Alias
from ember.expressions.predicates import EqualTo
from ember.optimizer.rules.collapse_project import (
    CollapseProject,
    RemoveNoopOperators,
    RemoveRedundantAliases,
)
from ember.plans.logical.join_type import JoinType
from ember.plans.logical.nodes import Aggregate, Join, Limit, LocalRelation, Project

from ..dsl import col, lit
from ._util import same_rows, t1, t2


def test_collapse_two_projects_substituting_aliases():
    r = t1()
    a, b = col(r, "a"), col(r, "b")
    x = Alias(Multiply(a, lit(2)), "x")
    lower = Project((x, b), r)
    y = Alias(Add(x.to_attribute(), lit(1)), "y")
    plan = Project((y, b), lower)
    out = CollapseProject()(plan)
    assert isinstance(out, Project) and out.child is r
    assert out.project_list == (Alias(Add(Multiply(a, lit(2)), lit(1)), "y", y.id), b)
    assert same_rows(plan, out)
    # a top-level reference becomes the lower alias itself (renamed to the reference's name)
    plan = Project((x.to_attribute().with_name("X"), b), lower)
    out = CollapseProject()(plan)
    assert out.child is r and out.project_list == (Alias(x.child, "X", x.id), b)
    assert same_rows(plan, out)


def test_expensive_alias_referenced_twice_not_collapsed_unless_always_inline():
    from ember.conf import SQLConf

    r = t1()
    x = Alias(Multiply(col(r, "a"), lit(2)), "x")
    xa = x.to_attribute()
    plan = Project((Alias(Add(xa, xa), "y"),), Project((x,), r))
    assert CollapseProject()(plan) is plan
    conf = SQLConf({"spark.sql.optimizer.collapseProjectAlwaysInline": "true"})
    out = CollapseProject()(plan, conf)
    assert out.child is r and same_rows(plan, out)
    # cheap producer (an attribute alias) is inlined even when used twice
    z = Alias(col(r, "a"), "z")
    za = z.to_attribute()
    plan2 = Project((Alias(Add(za, za), "y"),), Project((z,), r))
    assert CollapseProject()(plan2).child is r


def test_project_over_aggregate():
    r = t1()
    a, b = col(r, "a"), col(r, "b")
    s = Alias(AggregateExpression(Sum(b)), "s")
    agg = Aggregate((a,), (a, s), r)
    plan = Project((a, Alias(Add(s.to_attribute(), lit(1)), "s1")), agg)
    out = CollapseProject()(plan)
    assert isinstance(out, Aggregate)
    assert out.aggregate_expressions[1].child == Add(s.child, lit(1))
    assert same_rows(plan, out)


def test_renaming_project_over_limit():
    r = t1()
    a, b = col(r, "a"), col(r, "b")
    plan = Project((Alias(a, "a2"), b), Limit(lit(2), Project((a, b), r)))
    out = CollapseProject()(plan)
    assert isinstance(out, Limit) and isinstance(out.child, Project)
    assert out.child.project_list == plan.project_list
    assert [c.name for c in out.output] == ["a2", "b"]


def test_remove_noop_project():
    r = t1()
    plan = Project(r.output, r)
    assert RemoveNoopOperators()(plan) is r
    renamed = Project((r.output[0].with_name("A"), r.output[1]), r)
    assert RemoveNoopOperators()(renamed) is renamed  # names would change
    inner = Project((Alias(col(r, "a"), "x"),), r)
    outer = Project((inner.output[0].with_name("y"),), inner)
    out = RemoveNoopOperators()(outer)
    assert isinstance(out, Project) and out.child is r and out.output[0].name == "y"
    assert RemoveNoopOperators()(inner) is inner


def test_remove_redundant_aliases_rewires_parents_but_keeps_root_output():
    r = t1()
    a, b = col(r, "a"), col(r, "b")
    al = Alias(a, "a")
    lower = Project((al, b), r)
    plan = Project((Alias(Add(al.to_attribute(), lit(1)), "z"),), lower)
    out = RemoveRedundantAliases()(plan)
    assert out.child.project_list == (a, b)
    assert out.project_list[0].child == Add(a, lit(1))
    assert same_rows(plan, out)
    # at the root the alias produces the plan's output: kept
    assert RemoveRedundantAliases()(lower) is lower


def test_remove_redundant_aliases_respects_self_join():
    r = t1()
    a = col(r, "a")
    al = Alias(a, "a")
    right = Project((al,), r)
    j = Join(r, right, JoinType.INNER, EqualTo(a, al.to_attribute()))
    plan = Project((Alias(a, "k"),), j)
    out = RemoveRedundantAliases()(plan)
    assert out.child.right.project_list == (al,)  # would clash with the left side's a
    assert isinstance(out.child.left, LocalRelation)
