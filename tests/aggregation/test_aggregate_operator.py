"""The aggregate operator (``execute_aggregate``) on hand-built plans.

Every expected value below comes from running the same query on PySpark 4 (ANSI on); the query is
quoted next to each test.  Each test runs at batch size 2 and at a large batch size: results must
not depend on how the input is split.
"""

from __future__ import annotations

import datetime
import math
import random
from decimal import Decimal

import pyarrow as pa
import pytest

from ember import types as T
from ember.errors import ArithmeticError_
from ember.execution.aggregate import execute_aggregate
from ember.execution.context import ExecContext
from ember.expressions.aggregates import (
    AggregateExpression,
    Average,
    BoolAnd,
    BoolOr,
    Count,
    CountIf,
    First,
    Last,
    Max,
    MaxBy,
    Min,
    MinBy,
    Sum,
)
from ember.expressions.base import Alias, AttributeReference, Literal
from ember.plans.logical.nodes import Aggregate, LocalRelation

BATCH_SIZES = [2, 1000]
ONE = Literal(1, T.INT)


def ae(func, distinct=False, filter=None):
    return AggregateExpression(func, distinct, filter)


def cmp(cls, left, right):
    from ember.expressions import predicates as P

    return getattr(P, cls)(left, right)


def relation(columns: dict[str, tuple[T.DataType, list]]):
    attrs = tuple(AttributeReference(n, t) for n, (t, _) in columns.items())
    data = pa.table({n: pa.array(v, type=t.to_arrow()) for n, (t, v) in columns.items()})
    return LocalRelation(attrs, data), {a.name: a for a in attrs}


def run(plan: Aggregate, batch_size: int) -> list[tuple]:
    data = plan.child.data
    batches = iter(data.to_batches(max_chunksize=batch_size)) if data.num_rows else iter(())
    out = list(execute_aggregate(plan, batches, ExecContext()))
    schema = pa.schema([pa.field(a.name, a.data_type.to_arrow()) for a in plan.output])
    for b in out:
        assert b.schema.types == schema.types
        assert b.num_rows <= ExecContext().batch_size
    table = pa.Table.from_batches(out, schema=schema)
    return list(zip(*[col.to_pylist() for col in table.columns])) if table.num_columns else []


def named(*exprs):
    return tuple(e if isinstance(e, (Alias, AttributeReference)) else Alias(e, e.sql())
                 for e in exprs)


def _key(v):
    if v is None:
        return (0, "")
    if isinstance(v, float) and math.isnan(v):
        return (2, "")
    return (1, repr(v))


def normalize(rows):
    def fix(v):
        return "NaN" if isinstance(v, float) and math.isnan(v) else v

    return sorted((tuple(fix(v) for v in r) for r in rows), key=lambda r: tuple(map(_key, r)))


def check(plan, expected, batch_size):
    assert normalize(run(plan, batch_size)) == normalize(expected)


# ---------------------------------------------------------------------------------------------
# Data sets (as in the PySpark runs)

# t(a, b, salary, s, d) = (1, 1, 10.5BD, 'x', 1.5D), (1, 2, 20.25BD, 'y', 2.5D),
#   (2, 1, NULL, NULL, NULL), (1, 1, 1.00BD, 'x', -0.0D), (null, 2, 3.33BD, 'z', 0.0D),
#   (1, null, 5.5BD, 'x', NaN), (null, null, 7BD, NULL, NULL)
T_DATA = {
    "a": (T.INT, [1, 1, 2, 1, None, 1, None]),
    "b": (T.INT, [1, 2, 1, 1, 2, None, None]),
    "salary": (T.DecimalType(4, 2), [Decimal("10.50"), Decimal("20.25"), None, Decimal("1.00"),
                                     Decimal("3.33"), Decimal("5.50"), Decimal("7.00")]),
    "s": (T.STRING, ["x", "y", None, "x", "z", "x", None]),
    "d": (T.DOUBLE, [1.5, 2.5, None, -0.0, 0.0, float("nan"), None]),
}

# group-by-filter.sql testData(a, b)
TD2 = {
    "a": (T.INT, [1, 1, 2, 2, 3, 3, None, 3, None]),
    "b": (T.INT, [1, 2, 1, 2, 1, 2, 1, None, None]),
}

# group-by-filter.sql EMP(id, emp_name, hiredate, salary, dept_id)
_D = datetime.date
EMP = {
    "id": (T.INT, [100, 100, 200, 300, 400, 500, 600, 700, 800]),
    "emp_name": (T.STRING, ["emp 1", "emp 1", "emp 2", "emp 3", "emp 4", "emp 5",
                            "emp 6 - no dept", "emp 7", "emp 8"]),
    "hiredate": (T.DATE, [_D(2005, 1, 1), _D(2005, 1, 1), _D(2003, 1, 1), _D(2002, 1, 1),
                          _D(2005, 1, 1), _D(2001, 1, 1), _D(2001, 1, 1), _D(2010, 1, 1),
                          _D(2016, 1, 1)]),
    "salary": (T.DOUBLE, [100.0, 100.0, 200.0, 300.0, 400.0, 400.0, 400.0, 400.0, 150.0]),
    "dept_id": (T.INT, [10, 10, 10, 20, 30, None, 100, 100, 70]),
}


# ---------------------------------------------------------------------------------------------
# Global aggregation


@pytest.mark.parametrize("bs", BATCH_SIZES)
def test_global_mixed(bs):
    # SELECT count(*), count(DISTINCT a), sum(DISTINCT salary), first(a, true), count(a, b),
    #        count_if(a > 1), avg(b), first(a), last(a), last(a, true) FROM t
    # -> (7, 2, 47.58, 1, 4, 1, 1.4, 1, None, 1)
    rel, c = relation(T_DATA)
    a, b, sal = c["a"], c["b"], c["salary"]
    plan = Aggregate((), named(
        ae(Count((ONE,))), ae(Count((a,)), True), ae(Sum(sal), True), ae(First(a, True)),
        ae(Count((a, b))), ae(CountIf(cmp("GreaterThan", a, ONE))), ae(Average(b)),
        ae(First(a)), ae(Last(a)), ae(Last(a, True)),
    ), rel)
    assert run(plan, bs) == [(7, 2, Decimal("47.58"), 1, 4, 1, 1.4, 1, None, 1)]


@pytest.mark.parametrize("bs", BATCH_SIZES)
def test_global_types(bs):
    # SELECT mean(b), min(s), max(s), sum(b), sum(d), avg(d), sum(salary), avg(salary),
    #        min(salary), max(d), min(d), count(DISTINCT a, b) FROM t
    # -> (1.4, 'x', 'z', 7, nan, nan, 47.58, 7.930000, 1.00, nan, -0.0, 3)
    rel, c = relation(T_DATA)
    a, b, sal, s, d = (c[k] for k in ("a", "b", "salary", "s", "d"))
    plan = Aggregate((), named(
        ae(Average(b)), ae(Min(s)), ae(Max(s)), ae(Sum(b)), ae(Sum(d)), ae(Average(d)),
        ae(Sum(sal)), ae(Average(sal)), ae(Min(sal)), ae(Max(d)), ae(Min(d)),
        ae(Count((a, b)), True),
    ), rel)
    [row] = run(plan, bs)
    assert row[:4] == (1.4, "x", "z", 7)
    assert math.isnan(row[4]) and math.isnan(row[5])
    assert row[6:9] == (Decimal("47.58"), Decimal("7.930000"), Decimal("1.00"))
    assert math.isnan(row[9])
    assert row[10] == 0.0 and math.copysign(1, row[10]) == -1  # -0.0 (first of -0.0, 0.0)
    assert row[11] == 3
    out_types = [x.data_type for x in plan.output]
    assert out_types[6] == T.DecimalType(14, 2) and out_types[7] == T.DecimalType(8, 6)


@pytest.mark.parametrize("bs", BATCH_SIZES)
def test_global_empty_input_yields_one_row(bs):
    # SELECT count(*), sum(a), avg(a), min(a), first(a), count_if(a > 1), count(DISTINCT a),
    #        sum(DISTINCT b), count(DISTINCT a, b) FROM t WHERE a > 100
    # -> (0, None, None, None, None, 0, 0, None, 0)
    rel, c = relation({k: (t, []) for k, (t, _) in T_DATA.items()})
    a, b = c["a"], c["b"]
    plan = Aggregate((), named(
        ae(Count((ONE,))), ae(Sum(a)), ae(Average(a)), ae(Min(a)), ae(First(a)),
        ae(CountIf(cmp("GreaterThan", a, ONE))), ae(Count((a,)), True), ae(Sum(b), True),
        ae(Count((a, b)), True),
    ), rel)
    assert run(plan, bs) == [(0, None, None, None, None, 0, 0, None, 0)]


@pytest.mark.parametrize("bs", BATCH_SIZES)
def test_grouped_empty_input_yields_no_rows(bs):
    # SELECT a, count(*) FROM t WHERE a > 100 GROUP BY a -> no rows
    rel, c = relation({k: (t, []) for k, (t, _) in T_DATA.items()})
    plan = Aggregate((c["a"],), (c["a"],) + named(ae(Count((ONE,)))), rel)
    assert run(plan, bs) == []


@pytest.mark.parametrize("bs", BATCH_SIZES)
def test_count_null_and_distinct_literals(bs):
    # SELECT count(null), count(DISTINCT null), count(DISTINCT 1) FROM t -> (0, 0, 1)
    rel, _ = relation(T_DATA)
    null = Literal(None, T.NULL)
    plan = Aggregate((), named(ae(Count((null,))), ae(Count((null,)), True),
                               ae(Count((ONE,)), True)), rel)
    assert run(plan, bs) == [(0, 0, 1)]


@pytest.mark.parametrize("bs", BATCH_SIZES)
def test_filter_and_distinct_filter_global(bs):
    # SELECT count(b) FILTER (WHERE a >= 2), sum(b) FILTER (WHERE a > 1),
    #        count(DISTINCT b) FILTER (WHERE a > 1), count(DISTINCT a) FILTER (WHERE b > 1),
    #        sum(DISTINCT b) FILTER (WHERE b > 1) FROM t -> (1, 1, 1, 1, 2)
    rel, c = relation(T_DATA)
    a, b = c["a"], c["b"]
    two = Literal(2, T.INT)
    plan = Aggregate((), named(
        ae(Count((b,)), filter=cmp("GreaterThanOrEqual", a, two)),
        ae(Sum(b), filter=cmp("GreaterThan", a, ONE)),
        ae(Count((b,)), True, cmp("GreaterThan", a, ONE)),
        ae(Count((a,)), True, cmp("GreaterThan", b, ONE)),
        ae(Sum(b), True, cmp("GreaterThan", b, ONE)),
    ), rel)
    assert run(plan, bs) == [(1, 1, 1, 1, 2)]


@pytest.mark.parametrize("bs", BATCH_SIZES)
def test_filter_with_null_predicate_counts_nothing(bs):
    # SELECT count(a) FILTER (WHERE b > NULL-valued) ...: NULL filter rows never contribute.
    rel, c = relation(T_DATA)
    a, b = c["a"], c["b"]
    pred = cmp("GreaterThan", b, Literal(None, T.INT))
    plan = Aggregate((), named(ae(Count((a,)), filter=pred), ae(Sum(a), filter=pred)), rel)
    assert run(plan, bs) == [(0, None)]


# ---------------------------------------------------------------------------------------------
# Grouped aggregation


@pytest.mark.parametrize("bs", BATCH_SIZES)
def test_null_keys_form_one_group_with_filter(bs):
    # SELECT a, COUNT(b) FILTER (WHERE a >= 2) FROM testData GROUP BY a
    rel, c = relation(TD2)
    a, b = c["a"], c["b"]
    plan = Aggregate((a,), (a,) + named(
        ae(Count((b,)), filter=cmp("GreaterThanOrEqual", a, Literal(2, T.INT)))), rel)
    check(plan, [(2, 2), (None, 0), (1, 0), (3, 2)], bs)


@pytest.mark.parametrize("bs", BATCH_SIZES)
def test_output_without_grouping_columns(bs):
    # SELECT COUNT(a) FILTER (WHERE a >= 0), COUNT(b) FILTER (WHERE a >= 3)
    #   FROM testData GROUP BY a -> (2, 0), (0, 0), (2, 0), (3, 2)
    rel, c = relation(TD2)
    a, b = c["a"], c["b"]
    plan = Aggregate((a,), named(
        ae(Count((a,)), filter=cmp("GreaterThanOrEqual", a, Literal(0, T.INT))),
        ae(Count((b,)), filter=cmp("GreaterThanOrEqual", a, Literal(3, T.INT))),
    ), rel)
    check(plan, [(2, 0), (0, 0), (2, 0), (3, 2)], bs)


@pytest.mark.parametrize("bs", BATCH_SIZES)
def test_float_keys_nan_and_negative_zero(bs):
    # SELECT d, count(*) FROM t GROUP BY d -> (None, 2), (0.0, 2), (1.5, 1), (2.5, 1), (nan, 1)
    rel, c = relation(T_DATA)
    d = c["d"]
    plan = Aggregate((d,), (d,) + named(ae(Count((ONE,)))), rel)
    rows = run(plan, bs)
    check(plan, [(None, 2), (0.0, 2), (1.5, 1), (2.5, 1), (float("nan"), 1)], bs)
    zero = [r[0] for r in rows if r[0] == 0.0]
    assert math.copysign(1, zero[0]) == 1  # the group key is normalised to 0.0


@pytest.mark.parametrize("bs", BATCH_SIZES)
def test_float_min_max_distinct_per_group(bs):
    # SELECT k, max(d), min(d), count(DISTINCT d), sum(DISTINCT d) FROM VALUES
    #   (1, -0.0D), (1, 0.0D), (1, NaN), (2, 0.0D), (2, -0.0D), (3, NULL) AS v(k, d) GROUP BY k
    # -> (2, 0.0, 0.0, 1, 0.0), (1, nan, -0.0, 2, nan), (3, None, None, 0, None)
    nan = float("nan")
    rel, c = relation({"k": (T.INT, [1, 1, 1, 2, 2, 3]),
                       "d": (T.DOUBLE, [-0.0, 0.0, nan, 0.0, -0.0, None])})
    k, d = c["k"], c["d"]
    plan = Aggregate((k,), (k,) + named(ae(Max(d)), ae(Min(d)), ae(Count((d,)), True),
                                        ae(Sum(d), True)), rel)
    rows = {r[0]: r for r in run(plan, bs)}
    assert rows[2] == (2, 0.0, 0.0, 1, 0.0)
    assert math.copysign(1, rows[2][1]) == 1 and math.copysign(1, rows[2][2]) == 1
    assert math.isnan(rows[1][1]) and rows[1][3] == 2 and math.isnan(rows[1][4])
    assert rows[1][2] == 0.0 and math.copysign(1, rows[1][2]) == -1
    assert rows[3] == (3, None, None, 0, None)


@pytest.mark.parametrize("bs", BATCH_SIZES)
def test_grouping_expression_in_output(bs):
    # SELECT a + 1, count(*) FROM t GROUP BY a + 1 -> (2, 4), (None, 2), (3, 1)
    from ember.expressions.arithmetic import Add

    rel, c = relation(T_DATA)
    g = Add(c["a"], ONE)
    plan = Aggregate((g,), named(Add(c["a"], ONE), ae(Count((ONE,)))), rel)
    check(plan, [(2, 4), (None, 2), (3, 1)], bs)


@pytest.mark.parametrize("bs", BATCH_SIZES)
def test_expression_over_grouping_expression(bs):
    # SELECT a + 1 + 1, COUNT(b) FILTER (WHERE b > 0) FROM testData GROUP BY a + 1
    # -> (3, 2), (5, 2), (None, 1), (4, 2)
    from ember.expressions.arithmetic import Add

    rel, c = relation(TD2)
    a, b = c["a"], c["b"]
    plan = Aggregate((Add(a, ONE),), named(
        Add(Add(a, ONE), ONE),
        ae(Count((b,)), filter=cmp("GreaterThan", b, Literal(0, T.INT))),
    ), rel)
    check(plan, [(3, 2), (5, 2), (None, 1), (4, 2)], bs)


@pytest.mark.parametrize("bs", BATCH_SIZES)
def test_arithmetic_over_aggregates(bs):
    # SELECT b, sum(a) + 1, count(*) * 2, max(a) - min(a) FROM testData GROUP BY b
    # -> (2, 7, 6, 2), (None, 4, 4, 0), (1, 7, 8, 2)
    from ember.expressions.arithmetic import Add, Multiply, Subtract

    rel, c = relation(TD2)
    a, b = c["a"], c["b"]
    plan = Aggregate((b,), (b,) + named(
        Add(ae(Sum(a)), Literal(1, T.LONG)),
        Multiply(ae(Count((ONE,))), Literal(2, T.LONG)),
        Subtract(ae(Max(a)), ae(Min(a))),
    ), rel)
    check(plan, [(2, 7, 6, 2), (None, 4, 4, 0), (1, 7, 8, 2)], bs)


@pytest.mark.parametrize("bs", BATCH_SIZES)
def test_same_aggregate_twice_is_computed_once(bs):
    rel, c = relation(TD2)
    b = c["b"]
    s1, s2 = ae(Sum(b)), ae(Sum(b))
    assert s1.id != s2.id
    plan = Aggregate((), (Alias(s1, "x"), Alias(s2, "y")), rel)
    assert run(plan, bs) == [(10, 10)]


# ---------------------------------------------------------------------------------------------
# DISTINCT, several distinct sets, DISTINCT + FILTER (EMP queries of group-by-filter.sql)


def _emp():
    rel, c = relation(EMP)
    return rel, c


@pytest.mark.parametrize("bs", BATCH_SIZES)
def test_two_distinct_sets_and_filtered_sum(bs):
    # select dept_id, count(distinct emp_name), count(distinct hiredate), sum(salary),
    #   sum(salary) filter (where id > 200) from emp group by dept_id
    rel, c = _emp()
    plan = Aggregate((c["dept_id"],), (c["dept_id"],) + named(
        ae(Count((c["emp_name"],)), True), ae(Count((c["hiredate"],)), True),
        ae(Sum(c["salary"])),
        ae(Sum(c["salary"]), filter=cmp("GreaterThan", c["id"], Literal(200, T.INT))),
    ), rel)
    check(plan, [(10, 2, 2, 400.0, None), (70, 1, 1, 150.0, 150.0), (None, 1, 1, 400.0, 400.0),
                 (20, 1, 1, 300.0, 300.0), (30, 1, 1, 400.0, 400.0),
                 (100, 2, 2, 800.0, 800.0)], bs)


@pytest.mark.parametrize("bs", BATCH_SIZES)
def test_distinct_with_filters_on_two_sets(bs):
    # select dept_id, count(distinct emp_name) filter (where id > 200),
    #   count(distinct hiredate) filter (where hiredate > date "2003-01-01"),
    #   sum(salary) filter (where salary < 400.00D), sum(salary) filter (where id > 200)
    #   from emp group by dept_id
    rel, c = _emp()
    id_gt = cmp("GreaterThan", c["id"], Literal(200, T.INT))
    plan = Aggregate((c["dept_id"],), (c["dept_id"],) + named(
        ae(Count((c["emp_name"],)), True, id_gt),
        ae(Count((c["hiredate"],)), True,
           cmp("GreaterThan", c["hiredate"], Literal(_D(2003, 1, 1), T.DATE))),
        ae(Sum(c["salary"]), filter=cmp("LessThan", c["salary"], Literal(400.0, T.DOUBLE))),
        ae(Sum(c["salary"]), filter=id_gt),
    ), rel)
    check(plan, [(10, 0, 1, 400.0, None), (70, 1, 1, 150.0, 150.0), (None, 1, 0, None, 400.0),
                 (20, 1, 0, 300.0, 300.0), (30, 1, 1, None, 400.0),
                 (100, 2, 1, None, 800.0)], bs)


@pytest.mark.parametrize("bs", BATCH_SIZES)
def test_same_distinct_set_with_and_without_filter(bs):
    # select dept_id, count(distinct emp_name), count(distinct emp_name) filter (where id > 200),
    #   sum(salary), sum(salary) filter (where id > 200) from emp group by dept_id
    rel, c = _emp()
    id_gt = cmp("GreaterThan", c["id"], Literal(200, T.INT))
    plan = Aggregate((c["dept_id"],), (c["dept_id"],) + named(
        ae(Count((c["emp_name"],)), True), ae(Count((c["emp_name"],)), True, id_gt),
        ae(Sum(c["salary"])), ae(Sum(c["salary"]), filter=id_gt),
    ), rel)
    check(plan, [(70, 1, 1, 150.0, 150.0), (10, 2, 0, 400.0, None), (None, 1, 1, 400.0, 400.0),
                 (20, 1, 1, 300.0, 300.0), (30, 1, 1, 400.0, 400.0),
                 (100, 2, 2, 800.0, 800.0)], bs)


@pytest.mark.parametrize("bs", BATCH_SIZES)
def test_distinct_sum_avg_first_last_string_date(bs):
    # SELECT dept_id, SUM(DISTINCT salary),
    #   SUM(DISTINCT salary) FILTER (WHERE hiredate > date "2001-01-01"), avg(DISTINCT salary),
    #   first(emp_name), last(emp_name), max(emp_name), min(hiredate) FROM emp GROUP BY dept_id
    rel, c = _emp()
    sal = c["salary"]
    plan = Aggregate((c["dept_id"],), (c["dept_id"],) + named(
        ae(Sum(sal), True),
        ae(Sum(sal), True, cmp("GreaterThan", c["hiredate"], Literal(_D(2001, 1, 1), T.DATE))),
        ae(Average(sal), True), ae(First(c["emp_name"])), ae(Last(c["emp_name"])),
        ae(Max(c["emp_name"])), ae(Min(c["hiredate"])),
    ), rel)
    check(plan, [
        (None, 400.0, None, 400.0, "emp 5", "emp 5", "emp 5", _D(2001, 1, 1)),
        (10, 300.0, 300.0, 150.0, "emp 1", "emp 2", "emp 2", _D(2003, 1, 1)),
        (20, 300.0, 300.0, 300.0, "emp 3", "emp 3", "emp 3", _D(2002, 1, 1)),
        (30, 400.0, 400.0, 400.0, "emp 4", "emp 4", "emp 4", _D(2005, 1, 1)),
        (70, 150.0, 150.0, 150.0, "emp 8", "emp 8", "emp 8", _D(2016, 1, 1)),
        (100, 400.0, 400.0, 400.0, "emp 6 - no dept", "emp 7", "emp 7", _D(2001, 1, 1)),
    ], bs)


@pytest.mark.parametrize("bs", BATCH_SIZES)
def test_global_distinct_and_distinct_filter(bs):
    # SELECT SUM(salary), COUNT(DISTINCT id), COUNT(DISTINCT id) FILTER
    #   (WHERE hiredate = date "2001-01-01") FROM emp -> (2450.0, 8, 2)
    rel, c = _emp()
    plan = Aggregate((), named(
        ae(Sum(c["salary"])), ae(Count((c["id"],)), True),
        ae(Count((c["id"],)), True, cmp("EqualTo", c["hiredate"], Literal(_D(2001, 1, 1), T.DATE))),
    ), rel)
    assert run(plan, bs) == [(2450.0, 8, 2)]


@pytest.mark.parametrize("bs", BATCH_SIZES)
def test_many_distinct_sets_with_filter(bs):
    # SELECT k, sum(DISTINCT v) FILTER (WHERE v > 1), count(DISTINCT v), count(DISTINCT w), sum(v)
    #   FROM VALUES (1, 1, 'a'), (1, 2, 'a'), (1, 2, 'b'), (2, 3, 'c'), (2, 3, NULL),
    #   (NULL, 5, 'z') AS v(k, v, w) GROUP BY k -> (2, 3, 1, 1, 6), (None, 5, 1, 1, 5), (1, 2, 2, 2, 5)
    rel, c = relation({"k": (T.INT, [1, 1, 1, 2, 2, None]), "v": (T.INT, [1, 2, 2, 3, 3, 5]),
                       "w": (T.STRING, ["a", "a", "b", "c", None, "z"])})
    k, v, w = c["k"], c["v"], c["w"]
    plan = Aggregate((k,), (k,) + named(
        ae(Sum(v), True, cmp("GreaterThan", v, ONE)), ae(Count((v,)), True),
        ae(Count((w,)), True), ae(Sum(v)),
    ), rel)
    check(plan, [(2, 3, 1, 1, 6), (None, 5, 1, 1, 5), (1, 2, 2, 2, 5)], bs)


# ---------------------------------------------------------------------------------------------
# Structs


STRUCT_T = T.StructType((T.StructField("a", T.INT), T.StructField("b", T.INT)))


@pytest.mark.parametrize("bs", BATCH_SIZES)
def test_struct_count_distinct_min_max(bs):
    # SELECT count(DISTINCT (a, b)), count((a, b)), max((a, b)), min((a, b)) FROM testData
    # -> (9, 9, {a: 3, b: 2}, {a: None, b: None})
    rows = [{"a": a, "b": b} for a, b in zip(TD2["a"][1], TD2["b"][1])]
    rel, c = relation({"ab": (STRUCT_T, rows)})
    ab = c["ab"]
    plan = Aggregate((), named(ae(Count((ab,)), True), ae(Count((ab,))), ae(Max(ab)),
                               ae(Min(ab))), rel)
    assert run(plan, bs) == [(9, 9, {"a": 3, "b": 2}, {"a": None, "b": None})]


@pytest.mark.parametrize("bs", BATCH_SIZES)
def test_group_by_struct_key(bs):
    rows = [{"a": 1, "b": None}, {"a": 1, "b": None}, None, {"a": 2, "b": 1}, None]
    rel, c = relation({"ab": (STRUCT_T, rows)})
    plan = Aggregate((c["ab"],), (c["ab"],) + named(ae(Count((ONE,)))), rel)
    got = run(plan, bs)
    assert sorted(got, key=repr) == sorted(
        [({"a": 1, "b": None}, 2), (None, 2), ({"a": 2, "b": 1}, 1)], key=repr)


# ---------------------------------------------------------------------------------------------
# Other functions


@pytest.mark.parametrize("bs", BATCH_SIZES)
def test_min_max_other_types(bs):
    # min/max of ('a', 'B', 'é', 'z') -> ('B', 'é'); of (true, false, null) -> (false, true);
    # of (X'01', X'0203') -> (X'01', X'0203')
    rel, c = relation({
        "s": (T.STRING, ["a", "B", "é", "z"]),
        "f": (T.BOOLEAN, [True, False, None, None]),
        "bin": (T.BINARY, [b"\x01", b"\x02\x03", None, None]),
        "ts": (T.TIMESTAMP, [None, datetime.datetime(2020, 1, 1, tzinfo=datetime.timezone.utc),
                             datetime.datetime(2019, 1, 1, tzinfo=datetime.timezone.utc), None]),
    })
    plan = Aggregate((), named(ae(Min(c["s"])), ae(Max(c["s"])), ae(Min(c["f"])),
                               ae(Max(c["f"])), ae(Min(c["bin"])), ae(Max(c["bin"])),
                               ae(Max(c["ts"]))), rel)
    [row] = run(plan, bs)
    assert row[:6] == ("B", "é", False, True, b"\x01", b"\x02\x03")
    assert row[6] == datetime.datetime(2020, 1, 1, tzinfo=datetime.timezone.utc)


@pytest.mark.parametrize("bs", BATCH_SIZES)
def test_bool_and_or(bs):
    # SELECT bool_and(a > 0), bool_or(a > 0) FROM t -> (true, true); bool_and over (true,
    # false, null) is false, bool_or true, both NULL over only NULLs.
    rel, c = relation({"k": (T.INT, [1, 1, 1, 2, 3, 3]),
                       "f": (T.BOOLEAN, [True, False, None, None, True, True])})
    plan = Aggregate((c["k"],), (c["k"],) + named(ae(BoolAnd(c["f"])), ae(BoolOr(c["f"]))), rel)
    check(plan, [(1, False, True), (2, None, None), (3, True, True)], bs)


@pytest.mark.parametrize("bs", BATCH_SIZES)
def test_max_by_min_by_ties_take_last(bs):
    # SELECT max_by(a, b), min_by(a, b), max_by(x, y) FROM VALUES (1, 1, 'p', 2), (2, 1, 'q', 2),
    #   (3, NULL, 'r', 1) AS v(a, b, x, y) -> (2, 2, 'q')
    rel, c = relation({"a": (T.INT, [1, 2, 3]), "b": (T.INT, [1, 1, None]),
                       "x": (T.STRING, ["p", "q", "r"]), "y": (T.INT, [2, 2, 1])})
    plan = Aggregate((), named(ae(MaxBy(c["a"], c["b"])), ae(MinBy(c["a"], c["b"])),
                               ae(MaxBy(c["x"], c["y"]))), rel)
    assert run(plan, bs) == [(2, 2, "q")]


@pytest.mark.parametrize("bs", BATCH_SIZES)
def test_max_by_nan_is_largest(bs):
    # SELECT max_by(a, b) FROM VALUES (1, NaN), (2, 1D) AS v(a, b) -> 1
    rel, c = relation({"a": (T.INT, [1, 2]), "b": (T.DOUBLE, [float("nan"), 1.0])})
    plan = Aggregate((), named(ae(MaxBy(c["a"], c["b"]))), rel)
    assert run(plan, bs) == [(1,)]


@pytest.mark.parametrize("bs", BATCH_SIZES)
def test_first_last_ignore_nulls_per_group(bs):
    rel, c = relation({"k": (T.INT, [1, 1, 1, 2, 2, 3]),
                       "v": (T.STRING, [None, "x", None, "y", "z", None])})
    k, v = c["k"], c["v"]
    plan = Aggregate((k,), (k,) + named(ae(First(v)), ae(First(v, True)), ae(Last(v)),
                                        ae(Last(v, True))), rel)
    check(plan, [(1, None, "x", None, "x"), (2, "y", "y", "z", "z"),
                 (3, None, None, None, None)], bs)


@pytest.mark.parametrize("bs", BATCH_SIZES)
def test_small_integer_types(bs):
    # SELECT sum(col), avg(col), min(col), max(col), count(col) FROM VALUES (1Y), (2Y)
    # -> (3, 1.5, 1, 2, 2) typed bigint, double, tinyint, tinyint, bigint
    rel, c = relation({"col": (T.BYTE, [1, 2]), "f": (T.FLOAT, [1.5, 2.0])})
    col = c["col"]
    plan = Aggregate((), named(ae(Sum(col)), ae(Average(col)), ae(Min(col)), ae(Max(col)),
                               ae(Count((col,))), ae(Sum(c["f"])), ae(Average(c["f"]))), rel)
    assert run(plan, bs) == [(3, 1.5, 1, 2, 2, 3.5, 1.75)]
    assert [a.data_type for a in plan.output[:5]] == [T.LONG, T.DOUBLE, T.BYTE, T.BYTE, T.LONG]


# ---------------------------------------------------------------------------------------------
# Integer overflow (ANSI)

LMAX, LMIN = 2**63 - 1, -(2**63)


@pytest.mark.parametrize("bs", BATCH_SIZES)
@pytest.mark.parametrize("values", [[LMAX, 1], [LMAX, 1, -1], [LMIN, -1], [1, LMAX, 0]])
def test_bigint_sum_overflow_raises(bs, values):
    # SELECT sum(col) FROM VALUES (9223372036854775807L), (1L), (-1L) AS v(col)
    # -> [ARITHMETIC_OVERFLOW] overflow. Use 'try_add' ... (running sums are checked row by row)
    rel, c = relation({"col": (T.LONG, values)})
    plan = Aggregate((), named(ae(Sum(c["col"]))), rel)
    with pytest.raises(ArithmeticError_) as ei:
        run(plan, bs)
    assert ei.value.error_class == "ARITHMETIC_OVERFLOW"
    assert "try_add" in str(ei.value)


@pytest.mark.parametrize("bs", BATCH_SIZES)
def test_big_sums_without_overflow(bs):
    # Large values whose running sums stay in range are exact (slow path of the check), per group.
    rel, c = relation({"k": (T.INT, [1, 2, 1, 2, 1]),
                       "col": (T.LONG, [LMAX, LMIN, -5, 7, 3])})
    plan = Aggregate((c["k"],), (c["k"],) + named(ae(Sum(c["col"]))), rel)
    check(plan, [(1, LMAX - 2), (2, LMIN + 7)], bs)


@pytest.mark.parametrize("bs", BATCH_SIZES)
def test_int_sum_widens_and_long_avg_is_double(bs):
    # SELECT sum(col), avg(col) FROM VALUES (2147483647), (2147483647) -> (4294967294, 2147483647.0)
    # SELECT avg(col) FROM VALUES (9223372036854775807L) x2 -> 9.223372036854776e+18
    rel, c = relation({"i": (T.INT, [2147483647, 2147483647]), "l": (T.LONG, [LMAX, LMAX])})
    plan = Aggregate((), named(ae(Sum(c["i"])), ae(Average(c["i"])), ae(Average(c["l"]))), rel)
    assert run(plan, bs) == [(4294967294, 2147483647.0, 9.223372036854776e18)]


# ---------------------------------------------------------------------------------------------
# Decimals


def dec_rel(p, s, values):
    return relation({"col": (T.DecimalType(p, s), [Decimal(v) for v in values])})


@pytest.mark.parametrize("bs", BATCH_SIZES)
@pytest.mark.parametrize("p, s, values, sum_expected, avg_expected", [
    (3, 2, ["1.00", "2.00", "2.00"], "5.00", "1.666667"),
    (3, 2, ["0.05", "0.05", "0.06"], "0.16", "0.053333"),
    (3, 2, ["-0.05", "-0.05", "-0.06"], "-0.16", "-0.053333"),
    (10, 2, ["-1", "-2", "-2", "-0.01"], "-5.01", "-1.252500"),
    (38, 18, ["1", "2", "2"], "5", "1.6666666666666666666667"),
    (38, 36, ["0.00005", "0.00001", "0.00001"], "0.00007",
     "0.00002333333333333333333333333333333333"),
    (38, 38, ["0.00000000000000000000000000000000000005", "0"],
     "0.00000000000000000000000000000000000005", "3E-38"),
    (30, 2, ["9999999999999999999999999999.99"] * 2, "19999999999999999999999999999.98",
     "9999999999999999999999999999.990000"),
    (28, 0, ["99999999999999999999999999"] * 2, "199999999999999999999999998",
     "99999999999999999999999999.0000"),
    (38, 0, ["1000000000000000000000000000000000"] * 2, "2000000000000000000000000000000000",
     "1000000000000000000000000000000000.0000"),
    (38, 0, ["99999999999999999999999999999999999999", "1", "-1"],
     "99999999999999999999999999999999999999", None),
])
def test_decimal_sum_and_avg(bs, p, s, values, sum_expected, avg_expected):
    rel, c = dec_rel(p, s, values)
    exprs = [ae(Sum(c["col"]))] + ([ae(Average(c["col"]))] if avg_expected else [])
    plan = Aggregate((), named(*exprs), rel)
    [row] = run(plan, bs)
    assert row[0] == Decimal(sum_expected)
    if avg_expected:
        assert row[1] == Decimal(avg_expected)
        assert row[1].as_tuple().exponent == -plan.output[1].data_type.scale


@pytest.mark.parametrize("bs", BATCH_SIZES)
@pytest.mark.parametrize("p, s, values, fn, error_class, text", [
    (38, 0, ["99999999999999999999999999999999999999", "1"], Sum, "ARITHMETIC_OVERFLOW",
     "Overflow in sum of decimals. Use 'try_sum'"),
    (38, 10, ["9999999999999999999999999999.9999999999", "1"], Sum, "ARITHMETIC_OVERFLOW",
     "Overflow in sum of decimals. Use 'try_sum'"),
    (38, 0, ["99999999999999999999999999999999999999", "1"], Average, "ARITHMETIC_OVERFLOW",
     "Overflow in sum of decimals. Use 'try_avg'"),
    (38, 0, ["10000000000000000000000000000000000000"] * 2, Average,
     "NUMERIC_VALUE_OUT_OF_RANGE.WITH_SUGGESTION",
     "10000000000000000000000000000000000000.000000000000000000000000000000000000000 cannot be "
     "represented as Decimal(38, 4)"),
])
def test_decimal_overflow(bs, p, s, values, fn, error_class, text):
    rel, c = dec_rel(p, s, values)
    plan = Aggregate((), named(ae(fn(c["col"]))), rel)
    with pytest.raises(ArithmeticError_) as ei:
        run(plan, bs)
    assert ei.value.error_class == error_class
    assert text in str(ei.value)


@pytest.mark.parametrize("bs", BATCH_SIZES)
def test_decimal_grouped_with_nulls(bs):
    rel, c = relation({"k": (T.STRING, ["x", "y", "x", "z", "y"]),
                       "v": (T.DecimalType(5, 2), [Decimal("1.10"), None, Decimal("-3.25"),
                                                   None, Decimal("999.99")])})
    plan = Aggregate((c["k"],), (c["k"],) + named(ae(Sum(c["v"])), ae(Average(c["v"])),
                                                  ae(Min(c["v"])), ae(Max(c["v"]))), rel)
    check(plan, [("x", Decimal("-2.15"), Decimal("-1.075000"), Decimal("-3.25"), Decimal("1.10")),
                 ("y", Decimal("999.99"), Decimal("999.990000"), Decimal("999.99"),
                  Decimal("999.99")),
                 ("z", None, None, None, None)], bs)


# ---------------------------------------------------------------------------------------------
# Batch-size independence on a random data set (reference computed in plain Python)


def test_random_data_matches_reference_at_every_batch_size():
    rng = random.Random(7)
    n = 600
    ks = [rng.choice([None, 1, 2, 3, 4, 5]) for _ in range(n)]
    vs = [rng.choice([None] + list(range(-20, 20))) for _ in range(n)]
    ws = [rng.choice([None, "a", "b", "c"]) for _ in range(n)]
    rel, c = relation({"k": (T.INT, ks), "v": (T.LONG, vs), "w": (T.STRING, ws)})
    k, v, w = c["k"], c["v"], c["w"]
    zero = Literal(0, T.LONG)
    plan = Aggregate((k,), (k,) + named(
        ae(Count((ONE,))), ae(Sum(v)), ae(Count((v,)), True), ae(Count((v, w)), True),
        ae(Sum(v), filter=cmp("GreaterThan", v, zero)), ae(Min(w)), ae(Max(v)),
        ae(First(w)), ae(Last(w, True)), ae(Count((w,)), True, cmp("LessThan", v, zero)),
    ), rel)
    expected = []
    for key in sorted({x for x in ks}, key=lambda x: (x is None, x)):
        rows = [(vv, ww) for kk, vv, ww in zip(ks, vs, ws) if kk == key]
        nn = [vv for vv, _ in rows if vv is not None]
        pos = [vv for vv in nn if vv > 0]
        expected.append((
            key, len(rows), sum(nn) if nn else None, len(set(nn)),
            len({(vv, ww) for vv, ww in rows if vv is not None and ww is not None}),
            sum(pos) if pos else None,
            min((ww for _, ww in rows if ww is not None), default=None),
            max(nn, default=None), rows[0][1],
            [ww for _, ww in rows if ww is not None][-1] if any(ww for _, ww in rows) else None,
            len({ww for vv, ww in rows if vv is not None and vv < 0 and ww is not None}),
        ))
    for bs in (1, 2, 7, 1000):
        assert normalize(run(plan, bs)) == normalize(expected)
