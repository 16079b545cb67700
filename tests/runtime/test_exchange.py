"""Exchanges: hash partitioning correctness, coalescing (and co-partitioned alignment),
spilling, determinism under parallel execution."""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pytest

from ember.expressions.base import SortOrder
from ember.physical.nodes import (
    ShuffleExchangeExec,
    SortMergeJoinExec,
    UnionExec,
)
from ember.physical.partitioning import (
    HashPartitioning,
    RoundRobinPartitioning,
    SinglePartition,
)
from ember.plans.logical.join_type import JoinType
from ember.runtime.local import LocalRuntime
from ember.runtime.local.exchange import analyze, coalesce_ranges
from ember.runtime.local.hashing import hash_columns
from tests.runtime.conftest import make_conf, scan

NO_COALESCE = {"ember.execution.coalescePartitions.enabled": "false"}


def _keys_table(n: int, seed: int = 0) -> pa.Table:
    rng = np.random.default_rng(seed)
    k = rng.integers(0, 50, n)
    mask = rng.random(n) < 0.1
    return pa.table({"k": pa.array(k, pa.int64(), mask=mask),
                     "s": pa.array([f"v{x}" for x in k]),
                     "d": pa.array(k * 0.5)})


def _partitions(rt, node) -> list[pa.Table]:
    schema = rt.collect(node).schema
    return [pa.Table.from_batches(list(p()), schema=schema) for p in rt.execute(node)]


@pytest.mark.parametrize("col", ["k", "s", "d"])
def test_hash_partitioning_places_each_key_once(col):
    t = _keys_table(3000)
    s = UnionExec((scan(t.slice(0, 1000)), scan(t.slice(1000))))
    key = s.output[t.schema.names.index(col)]
    ex = ShuffleExchangeExec(HashPartitioning((key,), 7), s)
    rt = LocalRuntime(make_conf(100, **NO_COALESCE))
    parts = _partitions(rt, ex)
    assert len(parts) == 7
    seen: dict = {}
    for i, p in enumerate(parts):
        for v in set(p.column(col).to_pylist()):
            assert seen.setdefault(v, i) == i
    assert sum(p.num_rows for p in parts) == 3000
    assert sorted(rt.collect(ex).column("k").to_pylist(), key=str) == \
        sorted(t.column("k").to_pylist(), key=str)


def test_hash_is_batch_independent_and_normalizes_floats():
    a = pa.array([0.0, -0.0, float("nan"), None, 1.5])
    h = hash_columns([a])
    assert h[0] == h[1]
    assert (hash_columns([a.slice(2)]) == h[2:]).all()
    s = pa.array(["abc", "", None, "abc"], pa.string())
    ls = s.cast(pa.large_string())
    assert (hash_columns([s]) == hash_columns([ls])).all()


def test_small_data_coalesces_to_one_partition():
    t = _keys_table(500)
    s = scan(t)
    ex = ShuffleExchangeExec(HashPartitioning((s.output[0],), 200), s)
    rt = LocalRuntime(make_conf(2))
    assert len(rt.execute(ex)) == 1
    assert rt.collect(ex).num_rows == 500


def test_coalesce_ranges_target_size():
    rt = LocalRuntime(make_conf(**{"ember.execution.advisoryPartitionSizeInBytes": "100",
                                   "ember.execution.coalescePartitions.minPartitionSize": "1"}),
                      parallelism=2)
    rows = np.array([1, 0, 5, 5, 0, 0, 1])
    nbytes = np.array([40, 0, 60, 60, 0, 0, 90])
    r = coalesce_ranges(rows, nbytes, rt)
    assert r[0][0] == 0 and r[-1][1] == 7
    assert all(a[1] == b[0] for a, b in zip(r, r[1:]))
    assert len(r) > 1


def test_copartitioned_exchanges_share_one_grouping():
    """Both sides of a shuffled join are coalesced with the same partition grouping, although
    their size profiles differ (the right side is skewed)."""
    left = _keys_table(4000, seed=1)
    rk = np.concatenate([np.full(3000, 7), np.arange(1000) % 50])
    right = pa.table({"k": pa.array(rk, pa.int64()), "w": pa.array(np.arange(4000))})
    ls, rs = scan(left), scan(right)
    n = 16
    lex = ShuffleExchangeExec(HashPartitioning((ls.output[0],), n), ls)
    rex = ShuffleExchangeExec(HashPartitioning((rs.output[0],), n), rs)
    join = SortMergeJoinExec((ls.output[0],), (rs.output[0],), JoinType.INNER, None, lex, rex)
    conf = make_conf(64, **{"ember.execution.advisoryPartitionSizeInBytes": "4k",
                            "ember.execution.coalescePartitions.minPartitionSize": "1k"})
    rt = LocalRuntime(conf, parallelism=4)
    analyze(join, rt)
    lp, rp = _partitions(rt, lex), _partitions(rt, rex)
    assert 1 < len(lp) < n
    assert len(lp) == len(rp)
    where: dict = {}
    for i, p in enumerate(lp):
        for v in set(p.column("k").to_pylist()) - {None}:
            where[v] = i
    for i, p in enumerate(rp):
        for v in set(p.column("k").to_pylist()):
            assert where.get(v, i) == i
    # alone, the skewed side would have been grouped differently
    rt2 = LocalRuntime(conf, parallelism=4)
    alone_l = rt2.execute(ShuffleExchangeExec(HashPartitioning((ls.output[0],), n), ls))
    alone_r = rt2.execute(ShuffleExchangeExec(HashPartitioning((rs.output[0],), n), rs))
    assert len(alone_l) != len(alone_r) or len(alone_l) != len(lp)


def test_round_robin_and_single():
    t = _keys_table(100)
    s = scan(t)
    rt = LocalRuntime(make_conf(7, **NO_COALESCE))
    parts = _partitions(rt, ShuffleExchangeExec(RoundRobinPartitioning(4), s))
    assert [p.num_rows for p in parts] == [25, 25, 25, 25]
    single = ShuffleExchangeExec(SinglePartition(), UnionExec((s, scan(t))))
    assert len(rt.execute(single)) == 1
    assert rt.collect(single).num_rows == 200


def test_exchange_spills_past_budget_and_stays_correct():
    t = _keys_table(20000, seed=3)
    s = UnionExec((scan(t.slice(0, 10000)), scan(t.slice(10000))))
    ex = ShuffleExchangeExec(HashPartitioning((s.output[0],), 8), s)
    budget = t.nbytes // 3
    rt = LocalRuntime(make_conf(1000, **{"ember.execution.memoryBudget": str(budget)}, **NO_COALESCE))
    out = rt.collect(ex)
    assert rt.metrics[ex].spill_size > 0
    assert sorted(out.column("s").to_pylist()) == sorted(t.column("s").to_pylist())


def test_parallel_execution_is_deterministic():
    t = _keys_table(20000, seed=5)
    parts = tuple(scan(t.slice(i * 2000, 2000)) for i in range(10))
    s = UnionExec(parts)
    k = s.output[0]
    ex = ShuffleExchangeExec(HashPartitioning((k,), 13), s)
    from ember.physical.nodes import SortExec
    plan = SortExec((SortOrder(s.output[1], True),), False, ex)
    first = None
    for _ in range(5):
        out = LocalRuntime(make_conf(64, **NO_COALESCE), parallelism=4).collect(plan)
        if first is None:
            first = out
        assert out.equals(first)
