"""Two-phase aggregation: Partial over several partitions -> Exchange -> Final (and the 4-operator
one-distinct plan) must give exactly the COMPLETE path's results, errors included.

Queries run twice: through the physical planner + local runtime (``plan_query`` +
``LocalRuntime.collect``, the input split into several partitions by a UNION ALL of slices) and
with each Aggregate computed in one step by the COMPLETE kernels (``execute_aggregate``).  Floats are compared by
``repr`` (NaN equals NaN, ``-0.0`` differs from ``0.0``); multi-partition float sums use dyadic
values so that the association of the additions cannot change the result.
"""

from __future__ import annotations

import datetime as dt
from decimal import Decimal

import numpy as np
import pyarrow as pa
import pytest

import ember
from ember import types as T
from ember.errors import ArithmeticError_
from ember.execution.aggregate import execute_aggregate
from ember.execution.aggregate_buffers import merge_buffers, update_buffers
from ember.expressions.aggregates import AggregateExpression, Sum
from ember.expressions.base import AttributeReference
from ember.physical.nodes import AggregateMode, HashAggregateExec
from ember.planning import plan_query
from ember.plans.logical.nodes import Aggregate, LocalRelation
from ember.runtime.local import LocalRuntime

NAN, INF = float("nan"), float("inf")

# k: 1..3 mixed; 4: every value NULL; 5: removed by the FILTER of the views below (empty after
# WHERE in some queries); NULL key.
_ROWS = [
    # k, i, l, d, m, s, b, dt, o
    (1, 1, 10, 1.5, "1.25", "x", True, dt.date(2020, 1, 1), 3.0),
    (2, 2, -20, NAN, "2.50", "y", False, dt.date(2021, 5, 1), 1.0),
    (1, None, 30, -0.0, None, None, None, None, 3.0),
    (3, 4, 40, 0.0, "-7.75", "a", True, dt.date(2019, 2, 2), None),
    (1, 5, None, 0.0, "0.01", "zz", False, dt.date(2020, 1, 2), 0.0),
    (2, 6, 60, 2.0, "99.99", "", True, dt.date(2022, 1, 1), NAN),
    (None, 7, 70, INF, "1.00", "n", True, dt.date(2000, 1, 1), 2.0),
    (4, None, None, None, None, None, None, None, None),
    (3, 9, 90, -INF, "5.50", "b", False, dt.date(2018, 1, 1), -0.0),
    (1, 10, -100, 4.5, "3.00", "x", True, dt.date(2020, 1, 1), 3.0),
    (2, 11, 110, 0.5, "2.50", "y", None, dt.date(2021, 5, 1), NAN),
    (4, None, None, None, None, None, None, None, None),
    (3, 13, 130, -0.0, "0.00", "a", True, dt.date(2019, 2, 2), 0.0),
    (5, 14, 140, 8.0, "1.00", "q", True, dt.date(2001, 1, 1), 1.0),
    (1, 15, 150, NAN, "4.25", "x", False, dt.date(2020, 3, 3), 3.0),
    (None, None, 160, 16.0, "8.00", None, False, None, 5.0),
]


def _table(rows=_ROWS) -> pa.Table:
    cols = list(zip(*rows)) if rows else [()] * 9
    return pa.table({
        "k": pa.array(cols[0], pa.int32()),
        "i": pa.array(cols[1], pa.int32()),
        "l": pa.array(cols[2], pa.int64()),
        "d": pa.array(cols[3], pa.float64()),
        "m": pa.array([None if v is None else Decimal(v) for v in cols[4]], pa.decimal128(10, 2)),
        "s": pa.array(cols[5], pa.string()),
        "b": pa.array(cols[6], pa.bool_()),
        "dt": pa.array(cols[7], pa.date32()),
        "o": pa.array(cols[8], pa.float64()),
    })


def _session(table: pa.Table, n_parts: int, batch_size: int | None = None, *,
             optimize: bool = True) -> ember.Session:
    """A session with view ``t`` = ``table`` split into ``n_parts`` partitions.  With
    ``optimize=False`` only the required rewrites run (no empty-relation folding, no
    RewriteDistinctAggregates), so the planner sees the Aggregate as written."""
    s = ember.Session()
    s.sql_conf.set("ember.optimizer.enabled", "true" if optimize else "false")
    s.sql_conf.set("ember.execution.progress.enabled", "false")
    s.sql_conf.set("spark.sql.shuffle.partitions", "3")
    if batch_size is not None:
        s.sql_conf.set("ember.execution.batchSize", str(batch_size))
    n = table.num_rows
    bounds = [(i * n) // n_parts for i in range(n_parts + 1)]
    names = []
    for i in range(n_parts):
        s.createDataFrame(table.slice(bounds[i], bounds[i + 1] - bounds[i])) \
            .createOrReplaceTempView(f"p{i}")
        names.append(f"select * from p{i}")
    s.sql(" union all ".join(names)).createOrReplaceTempView("t")
    return s


def _norm(v):
    if isinstance(v, float):
        return repr(v)
    if isinstance(v, dict):
        return tuple((k, _norm(x)) for k, x in v.items())
    if isinstance(v, list):
        return tuple(_norm(x) for x in v)
    return v


def _rows(table: pa.Table) -> list[tuple]:
    cols = [c.to_pylist() for c in table.columns]  # positional: names may repeat
    return sorted((tuple(_norm(v) for v in r) for r in zip(*cols)), key=repr)


def _physical(s: ember.Session, q: str):
    return plan_query(s.sql(q)._qe.optimized, s.sql_conf)


def _complete(s: ember.Session, q: str) -> pa.Table:
    """The answer with every Aggregate of the optimized plan computed in one step by the COMPLETE
    kernels (``execute_aggregate``) over its child's rows (the child run by the runtime)."""
    from ember.execution.context import ExecContext
    from ember.plans.logical.nodes import Aggregate, LocalRelation
    from tests.local_run import run_plan

    def complete(p):
        if not isinstance(p, Aggregate):
            return p
        child = run_plan(p.child, s.sql_conf)
        schema = pa.schema([pa.field(a.name, a.data_type.to_arrow()) for a in p.output])
        out = execute_aggregate(p, iter(child.to_batches()), ExecContext(s.sql_conf))
        return LocalRelation(p.output, pa.Table.from_batches(list(out), schema=schema))

    return run_plan(s.sql(q)._qe.optimized.transform_up(complete), s.sql_conf)


def _run_both(s: ember.Session, q: str) -> tuple[list[tuple], list[tuple]]:
    plan = _physical(s, q)
    got = LocalRuntime(s.sql_conf, parallelism=4).collect(plan)
    assert _rows(s.sql(q).to_arrow()) == _rows(got)  # the session's physical path
    return _rows(got), _rows(_complete(s, q))


def _modes(plan) -> list[AggregateMode]:
    return plan.collect(lambda n: n.mode if isinstance(n, HashAggregateExec) else None)


_FUNCTIONS = [
    "count(i)", "count(*)", "count(i, s)", "count_if(b)",
    "sum(i)", "sum(l)", "sum(m)", "sum(cast(d as decimal(12, 1)))",
    "avg(i)", "avg(l)", "avg(m)",
    "min(i)", "max(l)", "min(d)", "max(d)", "min(s)", "max(s)", "min(m)", "max(dt)", "min(b)",
    "min(named_struct('a', k, 'b', s))",
    "first(i)", "first(i, true)", "last(s)", "last(s, true)", "any_value(d)", "first(d)",
    "bool_and(b)", "bool_or(b)",
    "sum(i) filter (where b)", "count(*) filter (where d > 0)", "first(s) filter (where i > 4)",
    "avg(m) filter (where s = 'x')",
]


@pytest.mark.parametrize("n_parts", [1, 3])
@pytest.mark.parametrize("fn", _FUNCTIONS)
def test_grouped_two_phase_equals_complete(fn, n_parts):
    s = _session(_table(), n_parts)
    q = f"select k, {fn} from t group by k"
    assert _modes(_physical(s, q)) == [AggregateMode.FINAL, AggregateMode.PARTIAL]
    got, exp = _run_both(s, q)
    assert got == exp


@pytest.mark.parametrize("n_parts", [1, 4])
def test_float_sums_two_phase(n_parts):
    s = _session(_table(), n_parts)
    got, exp = _run_both(s, "select k, sum(d), avg(d), sum(o), avg(i + 0.5D) from t group by k")
    assert got == exp


@pytest.mark.parametrize("batch_size", [2, None])
def test_all_functions_global_and_batch_sizes(batch_size):
    s = _session(_table(), 3, batch_size)
    q = "select " + ", ".join(_FUNCTIONS) + " from t"
    assert _modes(_physical(s, q)) == [AggregateMode.FINAL, AggregateMode.PARTIAL]
    got, exp = _run_both(s, q)
    assert got == exp and len(got) == 1


def test_empty_input_global_and_grouped():
    s = _session(_table(), 2, optimize=False)
    fns = ", ".join(_FUNCTIONS)
    got, exp = _run_both(s, f"select {fns} from t where k > 100")
    assert got == exp and len(got) == 1 and got[0][:4] == (0, 0, 0, 0)
    got, exp = _run_both(s, f"select k, {fns} from t where k > 100 group by k")
    assert got == exp == []


def test_all_null_and_filtered_out_groups():
    s = _session(_table(), 3)
    got, exp = _run_both(
        s, "select k, sum(i), avg(m), min(s), first(i), first(i, true), "
           "sum(m) filter (where k = 1), count(i) filter (where k = 1), "
           "bool_or(b) filter (where false) from t group by k")
    assert got == exp
    row4 = [r for r in got if r[0] == 4][0]
    assert row4[1:] == (None, None, None, None, None, None, 0, None)


def test_grouping_by_expression_and_float_keys():
    s = _session(_table(), 3)
    got, exp = _run_both(s, "select d, count(*), sum(i) from t group by d")
    assert got == exp
    # NaN is one group, -0.0 and 0.0 are one group
    assert len(got) == len({r[0] for r in got}) and "'nan'" in repr(got)
    got, exp = _run_both(s, "select k + 1, s, max(l) + 1 from t group by k + 1, s")
    assert got == exp


# -- one distinct argument set: the 4-operator plan ------------------------------------------


_DISTINCT_QUERIES = [
    "select k, count(distinct i), sum(l) from t group by k",
    # (no order-sensitive functions -- first/last, min/max of +-0.0 -- next to a distinct one:
    # the shuffle on (G, D) reorders their rows, in Spark too)
    "select k, count(distinct i), sum(distinct i), avg(distinct i), max(l), "
    "min(s), bool_and(b) from t group by k",
    "select count(distinct i), sum(m) filter (where k > 1), min(s) from t",
    "select k, sum(distinct i + 1), avg(distinct i + 1) from t group by k",
    "select k, count(distinct i, s) from t group by k",
    "select k, count(distinct d), sum(distinct d), count(*) from t group by k",
    "select k, count(distinct 1), count(distinct i) filter (where true) from t group by k",
    "select count(distinct k) from t where k > 100",
    "select k, count(distinct m), avg(distinct m), last(s) from t where k > 100 group by k",
]


@pytest.mark.parametrize("q", _DISTINCT_QUERIES)
def test_rewritten_distinct_aggregates(q):
    """With the optimizer (RewriteDistinctAggregates) the aggregates above Expand run in
    Partial/Final mode too."""
    s = _session(_table(), 3)
    got, exp = _run_both(s, q)
    assert got == exp


@pytest.mark.parametrize("n_parts", [1, 3])
@pytest.mark.parametrize("q", _DISTINCT_QUERIES)
def test_one_distinct_four_phase(q, n_parts):
    s = _session(_table(), n_parts, optimize=False)
    plan = _physical(s, q)
    if "filter (where true)" not in q:
        assert _modes(plan) == [AggregateMode.FINAL, AggregateMode.PARTIAL,
                                AggregateMode.PARTIAL_MERGE, AggregateMode.PARTIAL]
    got, exp = _run_both(s, q)
    assert got == exp


def test_distinct_plans_fall_back_to_complete():
    s = _session(_table(), 2, optimize=False)
    for q in ["select k, count(distinct i), count(distinct s) from t group by k",
              "select k, count(distinct i) filter (where b) from t group by k",
              "select count(distinct 1) from t"]:
        assert _modes(_physical(s, q)) == [AggregateMode.COMPLETE]
        got, exp = _run_both(s, q)
        assert got == exp


# -- ANSI errors -------------------------------------------------------------------------------


def _error_class(fn) -> str | None:
    try:
        fn()
    except ArithmeticError_ as e:
        return e.error_class
    return None


@pytest.mark.parametrize("q", [
    "select sum(l) from t",
    "select k, sum(l) from t group by k",
    "select sum(m) from t",
    "select avg(m) from t",
    "select k, count(distinct i), sum(l) from t group by k",
])
def test_overflow_errors_match(q):
    big = 9223372036854775000
    rows = [(1, 1, big, 1.0, "1", "a", True, None, 1.0)] * 3
    t = pa.table({
        **{c: _table(rows).column(c) for c in ("k", "i", "l", "d", "s", "b", "dt", "o")},
        "m": pa.array([Decimal("9" * 38)] * 3, pa.decimal128(38, 0)),
    })
    s = _session(t, 3)
    df = s.sql(q)
    plan = _physical(s, q)
    complete = _error_class(df.to_arrow)
    two_phase = _error_class(lambda: LocalRuntime(s.sql_conf).collect(plan))
    assert complete == two_phase == "ARITHMETIC_OVERFLOW"


def test_no_overflow_when_running_sums_stay_in_range():
    big = 9223372036854775000
    rows = [(1, 1, v, 1.0, "1", "a", True, None, 1.0) for v in (big, -big, big, -5)]
    s = _session(_table(rows), 2)
    got, exp = _run_both(s, "select sum(l), avg(l) from t")
    assert got == exp and got[0][0] == big - 5


# -- kernels directly ---------------------------------------------------------------------------


def test_decimal_sum_buffer_overflow_marker():
    """A partial decimal sum beyond the buffer precision is NULL with isEmpty false; merging it
    keeps the overflow, and evaluating raises ARITHMETIC_OVERFLOW (Spark 4's Sum)."""
    v = AttributeReference("v", T.DecimalType(38, 0))
    func = Sum(v)
    assert [f.name for f in func.buffer_fields()] == ["sum", "isEmpty"]
    arr = pa.array([Decimal("9" * 38)] * 2 + [None], pa.decimal128(38, 0))
    g = np.array([0, 0, 1], dtype=np.int64)
    total, empty = update_buffers(func, [arr], None, g, 2)
    assert total.to_pylist() == [None, Decimal(0)] and empty.to_pylist() == [False, True]
    merged = merge_buffers(func, [total, empty], np.array([0, 1]), 2)
    assert merged[0].to_pylist()[0] is None and merged[1].to_pylist() == [False, True]
    with pytest.raises(ArithmeticError_) as e:
        func.evaluate(merged)
    assert e.value.error_class == "ARITHMETIC_OVERFLOW"
    # only the empty group: NULL
    ok = func.evaluate([m.slice(1) for m in merged])
    assert ok.to_pylist() == [None]


@pytest.mark.parametrize("seed", range(4))
def test_random_kernels_partitioned(seed):
    """Random int/decimal columns, many groups, random contiguous partitions: update each,
    merge the concatenated buffers, evaluate == the COMPLETE aggregate."""
    rng = np.random.default_rng(seed)
    n, n_groups = 500, 37
    g = rng.integers(0, n_groups, n)
    vals = rng.integers(-10 ** 6, 10 ** 6, n)
    nulls = rng.random(n) < 0.2
    k = AttributeReference("k", T.LONG)
    x = AttributeReference("x", T.LONG)
    m = AttributeReference("m", T.DecimalType(12, 3))
    table = pa.table({"k": pa.array(g), "x": pa.array(vals, mask=nulls),
                      "m": pa.array([Decimal(int(v)).scaleb(-3) for v in vals],
                                    pa.decimal128(12, 3), mask=nulls[::-1].copy())})
    from ember.expressions.aggregates import Average, Count, First, Last, Max, MaxBy, Min, MinBy
    funcs = [Sum(x), Sum(m), Average(x), Average(m), Min(m), Max(x), Count((x, m)),
             First(x, True), Last(m), MaxBy(m, x), MinBy(x, m)]
    aggs = [AggregateExpression(f) for f in funcs]
    plan = Aggregate((k,), (k, *[a for a in aggs]), LocalRelation((k, x, m), table))
    plan = Aggregate((k,), tuple([k] + [_alias(a, i) for i, a in enumerate(aggs)]), plan.child)
    exp = pa.Table.from_batches(list(execute_aggregate(plan, iter(table.to_batches()))))
    cuts = sorted(rng.choice(np.arange(1, n), 3, replace=False).tolist())
    bounds = [0, *cuts, n]
    from ember.execution.aggregate import group_ids
    # per partition: local group ids -> buffers, keys
    part_keys, part_bufs = [], [[] for _ in funcs]
    for lo, hi in zip(bounds, bounds[1:]):
        part = table.slice(lo, hi - lo)
        gid, first = group_ids([part.column("k").combine_chunks()], part.num_rows)
        part_keys.append(part.column("k").combine_chunks().take(pa.array(first)))
        for j, f in enumerate(funcs):
            args = [part.column(c.name).combine_chunks() for c in f.children]
            part_bufs[j].append(update_buffers(f, args, None, gid, len(first)))
    keys = pa.concat_arrays(part_keys)
    gid, first = group_ids([keys], len(keys))
    out_keys = keys.take(pa.array(first))
    got = {"k": out_keys}
    for j, f in enumerate(funcs):
        bufs = [pa.concat_arrays([b[i] for b in part_bufs[j]])
                for i in range(len(f.buffer_fields()))]
        got[f"a{j}"] = f.evaluate(merge_buffers(f, bufs, gid, len(first)))
    got_rows = _rows(pa.table(got))
    exp_rows = _rows(pa.Table.from_arrays(exp.columns, names=list(got)))
    assert got_rows == exp_rows


def _alias(a, i):
    from ember.expressions.base import Alias

    return Alias(a, f"a{i}")
