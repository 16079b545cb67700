"""RewriteCorrelatedScalarSubquery: scalar subqueries -> left outer joins, COUNT bug handled.

Expected rows come from PySpark 4.3 (the queries are quoted in each test; count.sql's last four
queries and group-by-filter.sql's subquery queries are the conformance goldens).
These tests need the aggregate functions and conditional expressions of the expression and
aggregation areas; they are skipped until those modules exist.
"""

from __future__ import annotations

import pytest

from ember import types as T
from ember.errors import ExecutionError
from ember.expressions.base import Alias, Literal, SortOrder
from ember.expressions.predicates import EqualTo, GreaterThan, Not
from ember.expressions.subquery import Exists, InSubquery, ScalarSubquery
from ember.optimizer.rules.rewrite_subquery import rewrite_subqueries
from ember.plans.logical.join_type import JoinType
from ember.plans.logical.nodes import Aggregate, Filter, Join, Limit, Project, Sort, SubqueryAlias

from .dsl import bag, col, has_subquery, outer, relation, resolved, run

agg_mod = pytest.importorskip("ember.expressions.aggregates")
pytest.importorskip("ember.expressions.conditional")
AggregateExpression, Count, Sum, Max, Average = (
    agg_mod.AggregateExpression, agg_mod.Count, agg_mod.Sum, agg_mod.Max, agg_mod.Average)

DBL = T.DOUBLE


def count_star(name="count(1)"):
    return Alias(AggregateExpression(Count((Literal(1, T.INT),))), name)


def m_rel():
    return relation("m", [("a", T.INT), ("b", DBL)], [(None, 1.0), (2, 3.0), (4, 5.0)])


def s_rel():
    return relation("s", [("c", T.INT), ("d", DBL)],
                    [(None, 1.0), (2, 3.0), (6, 7.0), (2, 9.0)])


def check(plan, out):
    assert not has_subquery(out)
    assert [a.id for a in out.output] == [a.id for a in plan.output]
    assert resolved(out)


def rows(plan):
    out = rewrite_subqueries(plan)
    check(plan, out)
    r = run(out)
    assert bag(run(out, 2)) == bag(r)
    return out, r


def test_correlated_count_is_fixed_for_missing_groups():
    # select a, (select count(*) from s where s.c = m.a) cnt,
    #           (select count(*) + 1 from s where s.c = m.a) c1 from m
    from ember.expressions.arithmetic import Add

    m, s1, s2 = m_rel(), s_rel(), s_rel()
    q1 = Aggregate((), (count_star(),), Filter(EqualTo(col(s1, "c"), outer(m, "a")), s1))
    c = AggregateExpression(Count((Literal(1, T.INT),)))
    q2 = Aggregate((), (Alias(Add(c, Literal(1, T.LONG)), "x"),),
                   Filter(EqualTo(col(s2, "c"), outer(m, "a")), s2))
    plan = Project((col(m, "a"), Alias(ScalarSubquery(q1, (col(m, "a"),)), "cnt"),
                    Alias(ScalarSubquery(q2, (col(m, "a"),)), "c1")), m)
    out, r = rows(plan)
    assert bag(r) == bag([(None, 0, 1), (2, 2, 3), (4, 0, 1)])
    text = out.tree_string()
    assert "alwaysTrue" in text and "Join LeftOuter" in text


def test_correlated_count_in_filter():
    # select a from m where (select count(*) from s where s.c = m.a) = 0  -> None, 4
    m, s = m_rel(), s_rel()
    q = Aggregate((), (count_star(),), Filter(EqualTo(col(s, "c"), outer(m, "a")), s))
    plan = Project((col(m, "a"),),
                   Filter(EqualTo(ScalarSubquery(q, (col(m, "a"),)), Literal(0, T.LONG)), m))
    _, r = rows(plan)
    assert bag(r) == bag([(None,), (4,)])


def test_correlated_sum_needs_no_count_bug_fix():
    # select a, (select sum(d) from s where s.c = m.a) x from m -> (None,None),(2,12.0),(4,None)
    m, s = m_rel(), s_rel()
    q = Aggregate((), (Alias(AggregateExpression(Sum(col(s, "d"))), "sum(d)"),),
                  Filter(EqualTo(col(s, "c"), outer(m, "a")), s))
    plan = Project((col(m, "a"), Alias(ScalarSubquery(q, (col(m, "a"),)), "x")), m)
    out, r = rows(plan)
    assert bag(r) == bag([(None, None), (2, 12.0), (4, None)])
    assert "alwaysTrue" not in out.tree_string()


def test_having_above_count_is_pulled_above_the_join():
    # select a, (select count(*) from s where s.c = m.a having count(*) > 1) x from m
    #   -> (None, None), (2, 2), (4, None)
    # ... having count(*) < 2 -> (None, 0), (2, None), (4, 0)
    from ember.expressions.predicates import LessThan

    for op, expected in ((GreaterThan, [(None, None), (2, 2), (4, None)]),
                         (LessThan, [(None, 0), (2, None), (4, 0)])):
        m, s = m_rel(), s_rel()
        agg = Aggregate((), (count_star(),), Filter(EqualTo(col(s, "c"), outer(m, "a")), s))
        q = Filter(op(agg.output[0], Literal(1, T.LONG) if op is GreaterThan
                      else Literal(2, T.LONG)), agg)
        plan = Project((col(m, "a"), Alias(ScalarSubquery(q, (col(m, "a"),)), "x")), m)
        _, r = rows(plan)
        assert bag(r) == bag(expected), op


def test_non_equality_correlation_uses_a_domain_join():
    # select a, (select max(c) from s where d > m.b) from m -> 6 for every row
    # select a, (select count(*) from s where s.d > m.b) x from m -> (None,3),(2,2),(4,2)
    m, s = m_rel(), s_rel()
    q = Aggregate((), (Alias(AggregateExpression(Max(col(s, "c"))), "max(c)"),),
                  Filter(GreaterThan(col(s, "d"), outer(m, "b")), s))
    plan = Project((col(m, "a"), Alias(ScalarSubquery(q, (col(m, "b"),)), "x")), m)
    _, r = rows(plan)
    assert bag(r) == bag([(None, 6), (2, 6), (4, 6)])
    m, s = m_rel(), s_rel()
    q = Aggregate((), (count_star(),), Filter(GreaterThan(col(s, "d"), outer(m, "b")), s))
    plan = Project((col(m, "a"), Alias(ScalarSubquery(q, (col(m, "b"),)), "x")), m)
    _, r = rows(plan)
    assert bag(r) == bag([(None, 3), (2, 2), (4, 2)])


def test_uncorrelated_scalar_subquery_rows_and_too_many_rows():
    # select (select c from s where c = 6) -> 6 ; c = 7 -> NULL ; no filter -> error
    from ember.plans.logical.nodes import OneRowRelation

    for cond, expected in ((EqualTo, [(6,)]), (None, None)):
        s = s_rel()
        sub = Project((col(s, "c"),), Filter(EqualTo(col(s, "c"), Literal(6, T.INT)), s)
                      if cond else s)
        plan = Project((Alias(ScalarSubquery(sub), "scalarsubquery()"),), OneRowRelation())
        out = rewrite_subqueries(plan)
        check(plan, out)
        if expected is None:
            with pytest.raises(ExecutionError) as e:
                run(out)
            assert e.value.error_class == "SCALAR_SUBQUERY_TOO_MANY_ROWS"
        else:
            assert run(out) == expected
    s = s_rel()
    sub = Project((col(s, "c"),), Filter(EqualTo(col(s, "c"), Literal(7, T.INT)), s))
    plan = Project((Alias(ScalarSubquery(sub), "x"),), OneRowRelation())
    assert run(rewrite_subqueries(plan)) == [(None,)]


def test_correlated_non_aggregated_scalar_subquery():
    # select a, (select c from s where s.c = m.a) from m -> (None,None),(2,error? no: 2 rows!)
    # s has c = 2 twice, so Spark raises SCALAR_SUBQUERY_TOO_MANY_ROWS for a = 2; with a
    # single c = 2 row: (None, None), (2, 2), (4, None).
    m = m_rel()
    s = relation("s", [("c", T.INT), ("d", DBL)], [(None, 1.0), (2, 3.0), (6, 7.0)])
    sub = Project((col(s, "c"),), Filter(EqualTo(col(s, "c"), outer(m, "a")), s))
    plan = Project((col(m, "a"), Alias(ScalarSubquery(sub, (col(m, "a"),)), "x")), m)
    _, r = rows(plan)
    assert bag(r) == bag([(None, None), (2, 2), (4, None)])
    s = s_rel()
    sub = Project((col(s, "c"),), Filter(EqualTo(col(s, "c"), outer(m, "a")), s))
    plan = Project((col(m, "a"), Alias(ScalarSubquery(sub, (col(m, "a"),)), "x")), m)
    with pytest.raises(ExecutionError) as e:
        run(rewrite_subqueries(plan))
    assert e.value.error_class == "SCALAR_SUBQUERY_TOO_MANY_ROWS"


# ---------------------------------------------------------------------------------------------
# count.sql: the four count-bug queries (goldens: [2, 0], [1, 1], [0, None], [4, 0])


def t_rels():
    t1 = relation("t1", [("a1", T.INT), ("a2", T.INT)], [(0, 1), (1, 2)])
    t2 = relation("t2", [("b1", T.INT), ("b2", T.INT)], [(0, 2), (0, 3)])
    t3 = relation("t3", [("c1", T.INT), ("c2", T.INT)], [(0, 2), (0, 3)])
    return t1, t2, t3


def _inner_count(t1, t, key, having=False):
    agg = Aggregate((), (count_star("cnt"),), Filter(EqualTo(outer(t1, "a1"), col(t, key)), t))
    if having:
        return Filter(EqualTo(agg.output[0], Literal(0, T.LONG)), agg)
    return agg


def _top(t1, sub):
    a = Alias(ScalarSubquery(sub, (col(t1, "a1"),)), "a")
    proj = Project((a,), t1)
    return Sort((SortOrder(a.to_attribute(), ascending=False),), True, proj)


def test_count_bug_nested_sum_of_count():
    t1, t2, _ = t_rels()
    inner = SubqueryAlias(("__auto",), _inner_count(t1, t2, "b1"))
    sub = Aggregate((), (Alias(AggregateExpression(Sum(inner.output[0])), "sum(cnt)"),), inner)
    out, r = rows(_top(t1, sub))
    assert run(out) == [(2,), (0,)]


def test_count_bug_nested_count_of_count():
    t1, t2, _ = t_rels()
    inner = SubqueryAlias(("__auto",), _inner_count(t1, t2, "b1"))
    sub = Aggregate((), (count_star("count(1)"),), inner)
    out, _ = rows(_top(t1, sub))
    assert run(out) == [(1,), (1,)]


@pytest.mark.parametrize("having,expected", [(True, [(0,), (None,)]), (False, [(4,), (0,)])])
def test_count_bug_join_of_two_counts(having, expected):
    from ember.expressions.arithmetic import Add

    t1, t2, t3 = t_rels()
    l = SubqueryAlias(("l",), _inner_count(t1, t2, "b1", having))
    r = SubqueryAlias(("r",), _inner_count(t1, t3, "c1", having))
    j = Join(l, r, JoinType.INNER, EqualTo(l.output[0], r.output[0]))
    s = Alias(AggregateExpression(Sum(Add(l.output[0], r.output[0]))), "sum((cnt + cnt))")
    sub = Aggregate((), (s,), j)
    out, _ = rows(_top(t1, sub))
    assert run(out) == expected


# ---------------------------------------------------------------------------------------------
# group-by-filter.sql: subqueries inside aggregate FILTER clauses


def emp_dept():
    emp = relation("emp", [("id", T.INT), ("salary", DBL), ("dept_id", T.INT)], [
        (100, 100.0, 10), (100, 100.0, 10), (200, 200.0, 10), (300, 300.0, 20),
        (400, 400.0, 30), (500, 400.0, None), (600, 400.0, 100), (700, 400.0, 100),
        (800, 150.0, 70)])
    dept = relation("dept", [("dept_id", T.INT), ("state", T.STRING)], [
        (10, "CA"), (20, "NY"), (30, "TX"), (40, "OR"), (50, "NJ"), (70, "FL")])
    return emp, dept


def _filtered_agg(emp, fn, pred):
    did = col(emp, "dept_id")
    return Aggregate((did,), (did,
                              Alias(AggregateExpression(fn(col(emp, "salary"))), "plain"),
                              Alias(AggregateExpression(fn(col(emp, "salary")), filter=pred),
                                    "filtered")), emp)


def test_exists_in_aggregate_filter():
    emp, dept = emp_dept()
    sub = Project((col(dept, "state"),),
                  Filter(EqualTo(col(dept, "dept_id"), outer(emp, "dept_id")), dept))
    plan = _filtered_agg(emp, Average, Exists(sub, (col(emp, "dept_id"),)))
    out, r = rows(plan)
    assert any(isinstance(j, Join) and j.join_type is JoinType.EXISTENCE
               for j in out.collect(lambda p: p))
    third = 133.33333333333334
    assert bag(r) == bag([(None, 400.0, None), (10, third, third), (20, 300.0, 300.0),
                          (30, 400.0, 400.0), (70, 150.0, 150.0), (100, 400.0, None)])


def test_not_exists_in_aggregate_filter():
    emp, dept = emp_dept()
    sub = Project((col(dept, "state"),),
                  Filter(EqualTo(col(dept, "dept_id"), outer(emp, "dept_id")), dept))
    plan = _filtered_agg(emp, Sum, Not(Exists(sub, (col(emp, "dept_id"),))))
    _, r = rows(plan)
    assert bag(r) == bag([(None, 400.0, 400.0), (10, 400.0, None), (20, 300.0, None),
                          (30, 400.0, None), (70, 150.0, None), (100, 800.0, 800.0)])


def test_in_and_not_in_in_aggregate_filter():
    from ember.plans.logical.nodes import Distinct

    emp, dept = emp_dept()
    sub = Distinct(Project((col(dept, "dept_id"),), dept))
    plan = _filtered_agg(emp, Average, InSubquery((col(emp, "dept_id"),), sub))
    _, r = rows(plan)
    third = 133.33333333333334
    assert bag(r) == bag([(None, 400.0, None), (10, third, third), (20, 300.0, 300.0),
                          (30, 400.0, 400.0), (70, 150.0, 150.0), (100, 400.0, None)])
    emp, dept = emp_dept()
    sub = Distinct(Project((col(dept, "dept_id"),), dept))
    plan = _filtered_agg(emp, Sum, Not(InSubquery((col(emp, "dept_id"),), sub)))
    _, r = rows(plan)
    assert bag(r) == bag([(None, 400.0, None), (10, 400.0, None), (20, 300.0, None),
                          (30, 400.0, None), (70, 150.0, None), (100, 800.0, 800.0)])


def test_scalar_subquery_in_aggregate_filter():
    # avg(salary) FILTER (WHERE emp.dept_id = (SELECT dept_id FROM dept LIMIT 1))
    emp, dept = emp_dept()
    sub = Limit(Literal(1, T.INT), Project((col(dept, "dept_id"),), dept))
    pred = EqualTo(col(emp, "dept_id"), ScalarSubquery(sub))
    plan = _filtered_agg(emp, Average, pred)
    _, r = rows(plan)
    third = 133.33333333333334
    assert bag(r) == bag([(None, 400.0, None), (10, third, third), (20, 300.0, None),
                          (30, 400.0, None), (70, 150.0, None), (100, 400.0, None)])


def test_uncorrelated_scalar_subquery_outside_aggregate_functions_is_grouped():
    # select sum(b), (select max(c) from s) from m -> (9.0, 6)
    m, s = m_rel(), s_rel()
    q = Aggregate((), (Alias(AggregateExpression(Max(col(s, "c"))), "max(c)"),), s)
    plan = Aggregate((), (Alias(AggregateExpression(Sum(col(m, "b"))), "sum(b)"),
                          Alias(ScalarSubquery(q), "x")), m)
    out, r = rows(plan)
    [agg] = out.collect(lambda p: p if isinstance(p, Aggregate) and p.child.output_set
                        >= m.output_set else None)
    assert len(agg.grouping_expressions) == 1  # the subquery's value column
    assert r == [(9.0, 6)]


def test_in_over_correlated_count_sees_zero_for_missing_groups():
    # select a, a in (select count(*) from s where s.c = m.a) x from m   (bigint columns)
    # Spark: m.a in (NULL, 2, 4) -> (None, False), (2, True), (4, False); with a = 0 the
    # missing group counts 0, so 0 IN (0) is True.
    m = relation("m", [("a", T.LONG), ("b", DBL)], [(None, 1.0), (2, 3.0), (4, 5.0), (0, 6.0)])
    s = relation("s", [("c", T.LONG), ("d", DBL)],
                 [(None, 1.0), (2, 3.0), (6, 7.0), (2, 9.0)])
    q = Aggregate((), (count_star(),), Filter(EqualTo(col(s, "c"), outer(m, "a")), s))
    plan = Project((col(m, "a"), Alias(InSubquery((col(m, "a"),), q, (col(m, "a"),)), "x")), m)
    out, r = rows(plan)
    assert bag(r) == bag([(None, False), (2, True), (4, False), (0, True)])


def test_exists_over_global_aggregate_with_having():
    # select a, exists(select max(c) from s where s.c = m.a having max(c) > 0) e from m
    #   -> (None, False), (2, True), (4, False)
    m, s = m_rel(), s_rel()
    agg = Aggregate((), (Alias(AggregateExpression(Max(col(s, "c"))), "max(c)"),),
                    Filter(EqualTo(col(s, "c"), outer(m, "a")), s))
    q = Filter(GreaterThan(agg.output[0], Literal(0, T.INT)), agg)
    plan = Project((col(m, "a"), Alias(Exists(q, (col(m, "a"),)), "e")), m)
    _, r = rows(plan)
    assert bag(r) == bag([(None, False), (2, True), (4, False)])


def test_exists_over_global_aggregate_is_always_true():
    # select a, exists(select max(c) from s where s.c = m.a) e from m -> all True
    m, s = m_rel(), s_rel()
    q = Aggregate((), (Alias(AggregateExpression(Max(col(s, "c"))), "max(c)"),),
                  Filter(EqualTo(col(s, "c"), outer(m, "a")), s))
    plan = Project((col(m, "a"), Alias(Exists(q, (col(m, "a"),)), "e")), m)
    _, r = rows(plan)
    assert bag(r) == bag([(None, True), (2, True), (4, True)])
