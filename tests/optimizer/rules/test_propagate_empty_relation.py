from ember import types as T
from ember.expressions.aggregates import AggregateExpression, Count
from ember.expressions.base import Alias, Literal
from ember.expressions.predicates import EqualTo, GreaterThan
from ember.optimizer.rules.propagate_empty_relation import (
    PropagateEmptyRelation,
    is_empty_relation,
)
from ember.plans.logical.join_type import JoinType
from ember.plans.logical.nodes import (
    Aggregate, Filter, Join, LocalRelation, Project, Sort, Union,
)

from ..dsl import col, lit, relation
from ._util import same_rows, t1


def empty_like_t1():
    return relation("e", [("a", T.INT), ("b", T.INT)], []).child


def rule(p):
    return PropagateEmptyRelation()(p)


def cond(l, r):
    return EqualTo(col(l, "a"), r.output[0])


def test_unary_operators_over_empty():
    e = empty_like_t1()
    for plan in (Project((Alias(col(e, "a"), "x"),), e), Filter(GreaterThan(col(e, "a"), lit(1)), e),
                 Sort((), True, e),
                 Aggregate((col(e, "a"),), (col(e, "a"),), e)):
        out = rule(plan)
        assert is_empty_relation(out) and out.output == plan.output
        assert same_rows(plan, out)
    # a global aggregate returns one row: kept
    glob = Aggregate((), (Alias(AggregateExpression(Count((lit(1),))), "n"),), e)
    assert rule(glob) is glob


def test_joins_with_empty_side():
    l, e = t1(), empty_like_t1()
    for jt in (JoinType.INNER, JoinType.CROSS, JoinType.LEFT_SEMI, JoinType.RIGHT_OUTER):
        plan = Join(l, e, jt, cond(l, e))
        out = rule(plan)
        assert is_empty_relation(out), jt
        assert same_rows(plan, out)
    plan = Join(l, e, JoinType.LEFT_OUTER, cond(l, e))
    out = rule(plan)
    assert isinstance(out, Project) and out.child is l
    assert out.project_list[2].child == Literal(None, T.INT)
    assert same_rows(plan, out)
    plan = Join(l, e, JoinType.FULL_OUTER, cond(l, e))
    assert same_rows(plan, rule(plan))
    plan = Join(l, e, JoinType.LEFT_ANTI, cond(l, e))
    assert rule(plan) is l
    plan = Join(e, l, JoinType.RIGHT_OUTER, EqualTo(e.output[0], col(l, "a")))
    out = rule(plan)
    assert isinstance(out, Project) and out.child is l and same_rows(plan, out)
    plan = Join(e, l, JoinType.LEFT_OUTER, EqualTo(e.output[0], col(l, "a")))
    assert is_empty_relation(rule(plan))


def test_false_condition_and_non_empty_right_without_condition():
    l, r = t1(), relation("r", [("c", T.INT)], [(1,)]).child
    false = Literal(False, T.BOOLEAN)
    assert is_empty_relation(rule(Join(l, r, JoinType.INNER, false)))
    lo = Join(l, r, JoinType.LEFT_OUTER, false)
    assert same_rows(lo, rule(lo)) and isinstance(rule(lo), Project)
    assert rule(Join(l, r, JoinType.LEFT_SEMI)) is l
    anti = Join(l, r, JoinType.LEFT_ANTI)
    assert is_empty_relation(rule(anti)) and same_rows(anti, rule(anti))


def test_union_drops_empty_children_keeping_output_ids():
    l, e = t1(), empty_like_t1()
    l2 = relation("t3", [("a", T.INT), ("b", T.INT)], [(9, 9)]).child
    plan = Union((e, l, l2))
    out = rule(plan)
    assert isinstance(out, Project) and isinstance(out.child, Union)
    assert out.output == plan.output or [a.id for a in out.output] == [a.id for a in plan.output]
    assert same_rows(plan, out)
    assert is_empty_relation(rule(Union((e, e))))
    assert rule(Union((l, e))) is l


def test_bottom_up_chain_and_identity():
    l, e = t1(), empty_like_t1()
    plan = Project((col(l, "a"),), Join(l, Filter(GreaterThan(col(e, "a"), lit(0)), e),
                                        JoinType.INNER, cond(l, e)))
    assert is_empty_relation(rule(plan))
    assert rule(l) is l
    j = Join(l, l, JoinType.INNER)
    assert rule(j) is j
