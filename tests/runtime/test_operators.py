"""Each non-join operator of the local runtime on small hand-built physical plans."""

from __future__ import annotations

import pyarrow as pa
import pytest

from ember import types as T
from ember.errors import ArithmeticError_
from ember.expressions.aggregates import AggregateExpression, Count, Sum
from ember.expressions.arithmetic import Add, Divide
from ember.expressions.base import Alias, Literal, SortOrder
from ember.expressions.predicates import GreaterThan
from ember.physical.nodes import (
    AggregateMode,
    BroadcastExchangeExec,
    CollectLimitExec,
    ExpandExec,
    FilterExec,
    GlobalLimitExec,
    HashAggregateExec,
    LocalLimitExec,
    OneRowRelationExec,
    ProjectExec,
    RangeExec,
    SetOperationExec,
    ShuffleExchangeExec,
    SortExec,
    TakeOrderedAndProjectExec,
    UnionExec,
)
from ember.physical.partitioning import (
    HashPartitioning,
    IdentityBroadcastMode,
    RangePartitioning,
    SinglePartition,
)
from ember.runtime.local import LocalRuntime
from tests.runtime.conftest import attrs, make_conf, scan

T1 = pa.table({"a": pa.array([1, 2, 3, 4, 5, None], pa.int64()),
               "s": pa.array(["x", "y", "x", None, "z", "y"])})


def rows(t: pa.Table) -> list[tuple]:
    return [tuple(r.values()) for r in t.to_pylist()]


def run(plan, conf) -> list[tuple]:
    return rows(LocalRuntime(conf).collect(plan))


def test_local_table_scan(conf):
    assert run(scan(T1), conf) == rows(T1)


def test_local_table_scan_splits_large_data_keeping_order(conf):
    t = pa.table({"x": pa.array(range(5000), pa.int64())})
    rt = LocalRuntime(conf, parallelism=4)
    node = scan(t)
    assert len(rt.execute(node)) == 4
    assert rt.collect(node).column(0).to_pylist() == list(range(5000))


def test_project_and_filter(conf):
    s = scan(T1)
    a, col_s = s.output
    plus = Alias(Add(a, Literal(10, T.LONG)), "b")
    plan = ProjectExec((plus, col_s), FilterExec(GreaterThan(a, Literal(2, T.LONG)), s))
    assert run(plan, conf) == [(13, "x"), (14, None), (15, "z")]


def test_filter_error_propagates_unchanged(conf):
    s = scan(T1)
    plan = FilterExec(GreaterThan(Divide(Literal(1.0, T.DOUBLE), Literal(0.0, T.DOUBLE)),
                                  Literal(0.0, T.DOUBLE)), s)
    with pytest.raises(ArithmeticError_) as e:
        run(plan, conf)
    assert e.value.error_class == "DIVIDE_BY_ZERO"


def test_range(conf):
    out = attrs(id=T.LONG)
    node = RangeExec(0, 10, 3, 2, out)
    rt = LocalRuntime(conf)
    assert len(rt.execute(node)) == 2
    assert rt.collect(node).column(0).to_pylist() == [0, 3, 6, 9]
    assert run(RangeExec(10, 0, -4, 3, attrs(id=T.LONG)), conf) == [(10,), (6,), (2,)]
    assert run(RangeExec(0, 0, 1, 2, attrs(id=T.LONG)), conf) == []


def test_one_row_relation(conf):
    plan = ProjectExec((Alias(Literal(7, T.INT), "x"),), OneRowRelationExec())
    assert run(plan, conf) == [(7,)]


def test_expand(conf):
    s = scan(T1.slice(0, 2))
    a, col_s = s.output
    out = attrs(a=T.LONG, g=T.INT)
    plan = ExpandExec(((a, Literal(0, T.INT)), (Literal(None, T.LONG), Literal(1, T.INT))),
                      out, s)
    assert sorted(run(plan, conf), key=str) == sorted(
        [(1, 0), (None, 1), (2, 0), (None, 1)], key=str)


def test_union_keeps_child_partitions(conf):
    l, r = scan(T1.slice(0, 2)), scan(T1.slice(4, 2))
    plan = UnionExec((l, r))
    rt = LocalRuntime(conf)
    assert len(rt.execute(plan)) == 2
    assert rows(rt.collect(plan)) == rows(T1.slice(0, 2)) + rows(T1.slice(4, 2))


def test_limits(conf):
    s = scan(T1)
    assert run(LocalLimitExec(2, s), conf) == rows(T1.slice(0, 2))
    assert run(GlobalLimitExec(5, s, offset=3), conf) == rows(T1.slice(3, 2))
    assert run(GlobalLimitExec(2, s, offset=3), conf) == []
    assert run(CollectLimitExec(3, s), conf) == rows(T1.slice(0, 3))
    assert run(CollectLimitExec(-1, s, offset=4), conf) == rows(T1.slice(4))
    assert run(GlobalLimitExec(0, s), conf) == []


def test_take_ordered_and_project(conf):
    t = pa.table({"x": pa.array([5, 1, None, 4, 2, 3, 1], pa.int64())})
    parts = UnionExec((scan(t.slice(0, 3)), scan(t.slice(3))))
    x = parts.output[0]
    # both scans have their own attribute: sort by the union's output
    plan = TakeOrderedAndProjectExec(3, (SortOrder(x, False),),
                                     (Alias(Add(x, Literal(1, T.LONG)), "y"),), parts)
    assert run(plan, conf) == [(6,), (5,), (4,)]
    plan = TakeOrderedAndProjectExec(4, (SortOrder(x, True),), (x,), parts, offset=1)
    assert run(plan, conf) == [(1,), (1,), (2,)]


def test_set_operations(conf):
    l = scan(pa.table({"v": pa.array([1, 1, 1, 2, None, None], pa.int64())}))
    r = scan(pa.table({"v": pa.array([1, 1, None, 3], pa.int64())}))
    assert sorted(run(SetOperationExec("intersect", True, l, r), conf), key=str) == \
        sorted([(1,), (1,), (None,)], key=str)
    assert sorted(run(SetOperationExec("except", True, l, r), conf), key=str) == \
        sorted([(1,), (2,), (None,)], key=str)
    assert run(SetOperationExec("except", False, l, r), conf) == [(2,)]


def _agg_plan(t: pa.Table, n: int, mode=AggregateMode.COMPLETE):
    s = scan(t)
    k, v = s.output
    ex = ShuffleExchangeExec(HashPartitioning((k,), n), s)
    total = AggregateExpression(Sum(v))
    cnt = AggregateExpression(Count((Literal(1, T.INT),)))
    return HashAggregateExec(mode, (k,), (total, cnt),
                             (k, Alias(total, "total"), Alias(cnt, "cnt")), ex, (k,))


def test_hash_aggregate_complete_over_exchange(conf):
    t = pa.table({"k": pa.array(["a", "b", "a", None, "c", "b", None], pa.string()),
                  "v": pa.array([1, 2, 3, 4, 5, 6, None], pa.int64())})
    got = run(_agg_plan(t, 200), conf)
    assert sorted(got, key=str) == sorted(
        [("a", 4, 2), ("b", 8, 2), ("c", 5, 1), (None, 4, 2)], key=str)


def test_hash_aggregate_global_has_one_row(conf):
    s = scan(pa.table({"v": pa.array([], pa.int64())}))
    v = s.output[0]
    total = AggregateExpression(Sum(v))
    cnt = AggregateExpression(Count((Literal(1, T.INT),)))
    plan = HashAggregateExec(AggregateMode.COMPLETE, (), (total, cnt),
                             (Alias(total, "t"), Alias(cnt, "c")),
                             ShuffleExchangeExec(SinglePartition(), s), ())
    assert run(plan, conf) == [(None, 0)]


def test_global_sort_via_range_exchange(conf):
    vals = [5, None, 3, 9, 1, None, 7, 3, 0, -2]
    t = pa.table({"x": pa.array(vals, pa.int64()), "i": pa.array(range(10), pa.int64())})
    s = UnionExec((scan(t.slice(0, 5)), scan(t.slice(5))))
    x = s.output[0]
    for asc in (True, False):
        order = (SortOrder(x, asc),)
        plan = SortExec(order, True, ShuffleExchangeExec(RangePartitioning(order, 4), s))
        rt = LocalRuntime(make_conf(conf.batch_size,
                                    **{"ember.execution.coalescePartitions.enabled": "false"}))
        got = [r[0] for r in rows(rt.collect(plan))]
        nn = sorted(v for v in vals if v is not None)
        assert got == ([None, None] + nn if asc else nn[::-1] + [None, None])
        assert len(rt.execute(plan)) == 4


def test_local_sort_per_partition(conf):
    t = pa.table({"x": pa.array([3, 1, 2, 9, 8, 7], pa.int64())})
    s = UnionExec((scan(t.slice(0, 3)), scan(t.slice(3))))
    plan = SortExec((SortOrder(s.output[0], True),), False, s)
    assert run(plan, conf) == [(1,), (2,), (3,), (7,), (8,), (9,)]


def test_broadcast_once(conf):
    s = scan(T1)
    b = BroadcastExchangeExec(IdentityBroadcastMode(), s)
    rt = LocalRuntime(conf)
    v1 = rt.broadcast(b)
    assert rt.broadcast(b) is v1
    assert rows(v1.table) == rows(T1)
    assert rt.metrics[b].build_size > 0
    assert rows(rt.collect(b)) == rows(T1)


def test_metrics_rows(conf):
    s = scan(T1)
    f = FilterExec(GreaterThan(s.output[0], Literal(2, T.LONG)), s)
    rt = LocalRuntime(conf)
    rt.collect(f)
    assert rt.metrics[f].output_rows == 3
    assert rt.metrics[s].output_rows == 6
    assert rt.metrics[f].time_ns > 0
