from ember import types as T
from ember.expressions.predicates import EqualTo, GreaterThan
from ember.optimizer.rules.eliminate_subquery_aliases import (
    EliminateResolvedHint,
    EliminateSubqueryAliases,
)
from ember.plans.logical.join_type import JoinHint, JoinType
from ember.plans.logical.nodes import (
    Except, Filter, Join, LocalRelation, Project, ResolvedHint, SubqueryAlias, View,
)

from ..dsl import col, lit, relation
from ._util import same_rows


def test_removes_subquery_alias_and_view():
    r = relation("t", [("a", T.INT)], [(1,), (2,)])
    plan = Project((col(r, "a"),), SubqueryAlias(("x",), View("v", r)))
    out = EliminateSubqueryAliases()(plan)
    assert isinstance(out, Project) and isinstance(out.child, LocalRelation)
    assert out.find(lambda p: isinstance(p, (SubqueryAlias, View))) is None
    assert same_rows(plan, out)


def test_no_alias_returns_same_object():
    r = relation("t", [("a", T.INT)], [(1,)]).child
    plan = Filter(GreaterThan(col(r, "a"), lit(0)), r)
    assert EliminateSubqueryAliases()(plan) is plan
    assert EliminateResolvedHint()(plan) is plan


def test_removes_aliases_inside_subquery_plans():
    from ember.expressions.subquery import Exists

    r = relation("t", [("a", T.INT)], [(1,)])
    s = relation("s", [("b", T.INT)], [(1,)])
    plan = Filter(Exists(s, ()), r.child)
    out = EliminateSubqueryAliases()(plan)
    assert isinstance(out.condition.plan, LocalRelation)


def test_hint_moves_into_join_hint_through_unary_nodes():
    l = relation("l", [("a", T.INT)], [(1,), (2,)])
    r = relation("r", [("b", T.INT)], [(2,), (3,)])
    right = ResolvedHint(("BROADCAST",), Filter(GreaterThan(col(r, "b"), lit(0)), r))
    left = Project((col(l, "a"),), ResolvedHint(("SHUFFLE_HASH",), l))
    plan = Join(left, right, JoinType.INNER, EqualTo(col(l, "a"), col(r, "b")))
    out = EliminateResolvedHint()(plan)
    assert out.hint == JoinHint(("SHUFFLE_HASH",), ("BROADCAST",))
    assert out.find(lambda p: isinstance(p, ResolvedHint)) is None
    assert "leftHint=(strategy=shuffle_hash), rightHint=(strategy=broadcast)" in out.simple_string()
    assert same_rows(plan, out)


def test_outermost_hint_wins_and_hint_without_join_dropped():
    r = relation("r", [("b", T.INT)], [(2,)])
    l = relation("l", [("a", T.INT)], [(2,)])
    stacked = ResolvedHint(("SHUFFLE_MERGE",), ResolvedHint(("BROADCAST",), r))
    plan = Join(l, stacked, JoinType.INNER)
    assert EliminateResolvedHint()(plan).hint == JoinHint((), ("SHUFFLE_MERGE",))
    lone = ResolvedHint(("BROADCAST",), l)
    assert EliminateResolvedHint()(lone) is l


def test_hint_through_left_side_of_except_and_existing_join_hint_kept():
    l = relation("l", [("a", T.INT)], [(2,)])
    r = relation("r", [("b", T.INT)], [(2,)])
    x = relation("x", [("c", T.INT)], [(2,)])
    left = Except(ResolvedHint(("BROADCAST",), l), x)
    plan = Join(left, r, JoinType.INNER)
    out = EliminateResolvedHint()(plan)
    assert out.hint == JoinHint(("BROADCAST",), ())
    hinted = Join(l, ResolvedHint(("BROADCAST",), r), JoinType.INNER, hint=JoinHint(("MERGE",)))
    out2 = EliminateResolvedHint()(hinted)
    assert out2.hint == JoinHint(("MERGE",)) and out2.right is r
