"""RewritePredicateSubquery: EXISTS / IN / NOT IN -> semi, anti and existence joins.

Expected rows come from PySpark 4.3 runs of the conformance files (not-in-unit-tests-*.sql,
exists-joins-and-set-ops.sql) and of the queries quoted in each test.
"""

from __future__ import annotations

import pytest

from ember import types as T
from ember.expressions.base import Alias, Literal
from ember.expressions.predicates import (
    And,
    EqualTo,
    GreaterThan,
    IsNotNull,
    IsNull,
    LessThan,
    Not,
    Or,
)
from ember.expressions.subquery import Exists, InSubquery
from ember.optimizer.rules.rewrite_subquery import rewrite_subqueries
from ember.plans.logical.join_type import JoinType
from ember.plans.logical.nodes import Filter, Join, Project

from .dsl import bag, col, has_subquery, outer, relation, rewrite_for_execution, run

DEC = T.DoubleType()


def m_rel():
    return relation("m", [("a", T.INT), ("b", DEC)], [(None, 1.0), (2, 3.0), (4, 5.0)])


def s_rel():
    return relation("s", [("c", T.INT), ("d", DEC)], [(None, 1.0), (2, 3.0), (6, 7.0)])


def d(v: float) -> Literal:
    return Literal(v, DEC)


def check(plan, rewritten):
    assert not has_subquery(rewritten)
    assert [a.id for a in rewritten.output] == [a.id for a in plan.output]
    assert rewritten.resolved


def joins(plan) -> list[Join]:
    return plan.collect(lambda p: p if isinstance(p, Join) else None)


# ---------------------------------------------------------------------------------------------
# Shapes


def test_plan_without_subqueries_is_returned_unchanged():
    m = m_rel()
    plan = Project((col(m, "a"),), Filter(GreaterThan(col(m, "a"), Literal(1, T.INT)), m))
    assert rewrite_subqueries(plan) is plan
    assert rewrite_for_execution(plan) is plan


def test_correlated_exists_becomes_left_semi_join_with_pulled_predicate():
    m, s = m_rel(), s_rel()
    sub = Filter(And(EqualTo(col(s, "c"), outer(m, "a")), IsNotNull(col(s, "d"))), s)
    plan = Filter(And(Exists(sub, (col(m, "a"),)), GreaterThan(col(m, "b"), d(0.0))), m)
    out = rewrite_subqueries(plan)
    check(plan, out)
    [j] = joins(out)
    assert j.join_type is JoinType.LEFT_SEMI
    assert j.condition == EqualTo(col(s, "c"), col(m, "a"))
    # the local conjunct stays in the subquery, the outer one below the join
    assert isinstance(j.right, Filter) and j.right.condition == IsNotNull(col(s, "d"))
    assert isinstance(j.left, Filter) and j.left.condition == GreaterThan(col(m, "b"), d(0.0))
    assert "Join LeftSemi" in out.tree_string()


def test_not_exists_becomes_left_anti_join():
    m, s = m_rel(), s_rel()
    sub = Filter(EqualTo(col(s, "c"), outer(m, "a")), s)
    plan = Filter(Not(Exists(sub, (col(m, "a"),))), m)
    out = rewrite_subqueries(plan)
    check(plan, out)
    [j] = joins(out)
    assert j.join_type is JoinType.LEFT_ANTI
    assert bag(run(out)) == bag([(None, 1.0), (4, 5.0)])


def test_in_subquery_becomes_semi_join_on_equality():
    m, s = m_rel(), s_rel()
    sub = Project((col(s, "c"),), s)
    plan = Filter(InSubquery((col(m, "a"),), sub), m)
    out = rewrite_subqueries(plan)
    check(plan, out)
    [j] = joins(out)
    assert j.join_type is JoinType.LEFT_SEMI
    assert j.condition == EqualTo(col(m, "a"), col(s, "c"))
    assert bag(run(out)) == bag([(2, 3.0)])


def test_not_in_becomes_null_aware_anti_join():
    m, s = m_rel(), s_rel()
    sub = Project((col(s, "c"),), Filter(EqualTo(col(s, "d"), d(7.0)), s))
    plan = Filter(Not(InSubquery((col(m, "a"),), sub)), m)
    out = rewrite_subqueries(plan)
    check(plan, out)
    [j] = joins(out)
    eq = EqualTo(col(m, "a"), col(s, "c"))
    assert j.join_type is JoinType.LEFT_ANTI
    assert j.condition == Or(eq, IsNull(eq))
    assert "Join LeftAnti, ((a#" in out.tree_string()


# ---------------------------------------------------------------------------------------------
# not-in-unit-tests-single-column.sql (rows from Spark)


def _not_in_single(sub_filter, outer_filter=None):
    m, s = m_rel(), s_rel()
    sub = Project((col(s, "c"),), Filter(sub_filter(s, m), s))
    cond = Not(InSubquery((col(m, "a"),), sub))
    if outer_filter is not None:
        cond = And(outer_filter(m), cond)
    return Filter(cond, m)


SINGLE = [
    ("case1-empty", lambda s, m: GreaterThan(col(s, "d"), d(10.0)), None,
     [(None, 1.0), (2, 3.0), (4, 5.0)]),
    ("case2-null-in-subquery", lambda s, m: EqualTo(col(s, "d"), d(1.0)), None, []),
    ("case3-probe-null", lambda s, m: EqualTo(col(s, "d"), d(3.0)),
     lambda m: EqualTo(col(m, "b"), d(1.0)), []),
    ("case4-match", lambda s, m: EqualTo(col(s, "d"), d(3.0)),
     lambda m: EqualTo(col(m, "b"), d(3.0)), []),
    ("case5-no-match", lambda s, m: EqualTo(col(s, "d"), d(7.0)),
     lambda m: EqualTo(col(m, "b"), d(3.0)), [(2, 3.0)]),
]


@pytest.mark.parametrize("batch_size", [2, 65536])
@pytest.mark.parametrize("name,sub_filter,outer_filter,expected", SINGLE, ids=[c[0] for c in SINGLE])
def test_not_in_single_column(name, sub_filter, outer_filter, expected, batch_size):
    plan = _not_in_single(sub_filter, outer_filter)
    out = rewrite_subqueries(plan)
    check(plan, out)
    assert bag(run(out, batch_size)) == bag(expected)


def _correlated_b_plus_10(outer_filter):
    """``a NOT IN (SELECT c FROM s WHERE d = b + 10)``: correlated, matches no row."""
    from ember.expressions.arithmetic import Add  # noqa: F401  (present once expressions land)

    m, s = m_rel(), s_rel()
    cond_sub = EqualTo(col(s, "d"), Add(outer(m, "b"), d(10.0)))
    sub = Project((col(s, "c"),), Filter(cond_sub, s))
    cond = Not(InSubquery((col(m, "a"),), sub, (col(m, "b"),)))
    if outer_filter is not None:
        cond = And(outer_filter(m), cond)
    return Filter(cond, m)


@pytest.mark.parametrize("outer_filter,expected", [
    (None, [(None, 1.0), (2, 3.0), (4, 5.0)]),
    (lambda m: EqualTo(col(m, "b"), d(1.0)), [(None, 1.0)]),
    (lambda m: EqualTo(col(m, "b"), d(3.0)), [(2, 3.0)]),
])
def test_not_in_correlated_reduces_to_empty_subquery(outer_filter, expected):
    pytest.importorskip("ember.expressions.arithmetic")
    plan = _correlated_b_plus_10(outer_filter)
    out = rewrite_subqueries(plan)
    check(plan, out)
    [j] = joins(out)
    assert j.join_type is JoinType.LEFT_ANTI
    assert bag(run(out)) == bag(expected)


# ---------------------------------------------------------------------------------------------
# not-in-unit-tests-multi-column.sql (rows from Spark)


def m2_rel():
    return relation("m", [("a", T.INT), ("b", DEC)],
                    [(None, None), (None, 1.0), (2, 3.0), (4, 5.0)])


def s2_rel():
    return relation("s", [("c", T.INT), ("d", DEC)],
                    [(None, None), (0, 1.0), (2, 3.0), (4, None)])


MULTI = [
    ("case1", lambda s: GreaterThan(col(s, "d"), d(5.0)), None,
     [(None, None), (None, 1.0), (2, 3.0), (4, 5.0)]),
    ("case2", lambda s: And(IsNull(col(s, "c")), IsNull(col(s, "d"))), None, []),
    ("case3", lambda s: IsNotNull(col(s, "c")),
     lambda m: And(IsNull(col(m, "a")), IsNull(col(m, "b"))), []),
    ("case4", lambda s: IsNotNull(col(s, "c")), lambda m: EqualTo(col(m, "b"), d(1.0)), []),
    ("case5", lambda s: EqualTo(col(s, "c"), Literal(2, T.INT)),
     lambda m: EqualTo(col(m, "b"), d(1.0)), [(None, 1.0)]),
    ("case6", lambda s: EqualTo(col(s, "c"), Literal(2, T.INT)),
     lambda m: EqualTo(col(m, "b"), d(3.0)), []),
    ("case7", lambda s: EqualTo(col(s, "c"), Literal(2, T.INT)),
     lambda m: EqualTo(col(m, "b"), d(5.0)), [(4, 5.0)]),
]


@pytest.mark.parametrize("name,sub_filter,outer_filter,expected", MULTI, ids=[c[0] for c in MULTI])
def test_not_in_multi_column(name, sub_filter, outer_filter, expected):
    m, s = m2_rel(), s2_rel()
    sub = Filter(sub_filter(s), s)
    cond = Not(InSubquery((col(m, "a"), col(m, "b")), sub))
    if outer_filter is not None:
        cond = And(outer_filter(m), cond)
    plan = Filter(cond, m)
    out = rewrite_subqueries(plan)
    check(plan, out)
    [j] = joins(out)
    assert j.join_type is JoinType.LEFT_ANTI
    eq1, eq2 = EqualTo(col(m, "a"), col(s, "c")), EqualTo(col(m, "b"), col(s, "d"))
    assert j.condition == And(Or(eq1, IsNull(eq1)), Or(eq2, IsNull(eq2)))
    assert bag(run(out)) == bag(expected)
    assert bag(run(out, 2)) == bag(expected)


# ---------------------------------------------------------------------------------------------
# Existence joins (nested predicates, projections)


def test_exists_under_or_uses_existence_join():
    m, s = m_rel(), s_rel()
    sub = Filter(EqualTo(col(s, "c"), outer(m, "a")), s)
    plan = Filter(Or(GreaterThan(col(m, "b"), d(4.0)), Exists(sub, (col(m, "a"),))), m)
    out = rewrite_subqueries(plan)
    check(plan, out)
    [j] = joins(out)
    assert j.join_type is JoinType.EXISTENCE and j.existence_attr is not None
    assert "ExistenceJoin(exists#" in out.tree_string()
    # SELECT * FROM m WHERE b > 4 OR EXISTS (SELECT * FROM s WHERE s.c = m.a)
    assert bag(run(out)) == bag([(2, 3.0), (4, 5.0)])


def test_in_and_not_in_in_projection_are_two_valued_like_spark():
    # Spark 4.3: select a, a in (select c from s) x, a not in (select c from s) y from m
    #   -> (None, False, False), (2, True, False), (4, False, False)
    m, s = m_rel(), s_rel()
    sub = Project((col(s, "c"),), s)
    x = Alias(InSubquery((col(m, "a"),), sub), "x")
    y = Alias(Not(InSubquery((col(m, "a"),), sub)), "y")
    plan = Project((col(m, "a"), x, y), m)
    out = rewrite_subqueries(plan)
    check(plan, out)
    assert [j.join_type for j in joins(out)] == [JoinType.EXISTENCE, JoinType.EXISTENCE]
    assert bag(run(out)) == bag([(None, False, False), (2, True, False), (4, False, False)])


def test_not_in_without_nulls_in_projection():
    # select a, a not in (select c from s where c is not null) y from m
    #   -> (None, False), (2, False), (4, True)
    m, s = m_rel(), s_rel()
    sub = Project((col(s, "c"),), Filter(IsNotNull(col(s, "c")), s))
    y = Alias(Not(InSubquery((col(m, "a"),), sub)), "y")
    plan = Project((col(m, "a"), y), m)
    out = rewrite_subqueries(plan)
    check(plan, out)
    assert bag(run(out)) == bag([(None, False), (2, False), (4, True)])


def test_exists_in_inner_join_condition_becomes_filter():
    m, s = m_rel(), s_rel()
    s2 = s_rel()
    sub = Filter(EqualTo(col(s2, "c"), outer(m, "a")), s2)
    cond = And(EqualTo(col(m, "a"), col(s, "c")), Exists(sub, (col(m, "a"),)))
    plan = Join(m, s, JoinType.INNER, cond)
    out = rewrite_subqueries(plan)
    check(plan, out)
    assert bag(run(out)) == bag([(2, 3.0, 2, 3.0)])


def test_self_reference_gets_fresh_ids():
    # The subquery reads the very same relation (same attribute ids) as the outer query.
    m = m_rel()
    sub = Project((col(m, "a"),), Filter(GreaterThan(col(m, "b"), d(2.0)), m))
    plan = Filter(InSubquery((col(m, "a"),), sub), m)
    out = rewrite_subqueries(plan)
    check(plan, out)
    [j] = joins(out)
    assert not (j.left.output_set & j.right.output_set)
    assert bag(run(out)) == bag([(2, 3.0), (4, 5.0)])


def test_nested_subquery_is_rewritten_first():
    # SELECT * FROM m WHERE a IN (SELECT c FROM s WHERE EXISTS (SELECT 1 FROM m2 WHERE m2.b = s.d))
    m, s, m2 = m_rel(), s_rel(), m_rel()
    inner = Filter(EqualTo(col(m2, "b"), outer(s, "d")), m2)
    sub = Project((col(s, "c"),), Filter(Exists(inner, (col(s, "d"),)), s))
    plan = Filter(InSubquery((col(m, "a"),), sub), m)
    out = rewrite_subqueries(plan)
    check(plan, out)
    assert [j.join_type for j in joins(out)] == [JoinType.LEFT_SEMI, JoinType.LEFT_SEMI]
    assert bag(run(out)) == bag([(2, 3.0)])


def test_correlated_exists_over_uncorrelated_set_operation():
    # SELECT * FROM m WHERE EXISTS (SELECT c FROM s WHERE c < 3 INTERSECT SELECT c FROM s WHERE c > 3)
    from ember.plans.logical.nodes import Intersect

    m, s1, s2 = m_rel(), s_rel(), s_rel()
    left = Project((col(s1, "c"),), Filter(LessThan(col(s1, "c"), Literal(3, T.INT)), s1))
    right = Project((col(s2, "c"),), Filter(GreaterThan(col(s2, "c"), Literal(3, T.INT)), s2))
    plan = Filter(Exists(Intersect(left, right)), m)
    out = rewrite_subqueries(plan)
    check(plan, out)
    assert run(out) == []
    plan2 = Filter(Not(Exists(Intersect(left, right))), m)
    assert bag(run(rewrite_subqueries(plan2))) == bag([(None, 1.0), (2, 3.0), (4, 5.0)])
