"""The shuffle map side's fast paths: partition ids from one multiplicative hash of per-column
words (equal keys -> equal targets across batches, integer widths, NULLs, NaN / -0.0), and the
counting-sort reorder of each batch by target (row order inside a target kept)."""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pytest

from ember.physical.nodes import ShuffleExchangeExec
from ember.physical.partitioning import HashPartitioning
from ember.runtime.local import LocalRuntime
from ember.runtime.local.hashing import partition_ids
from tests.runtime.conftest import make_conf, scan

NO_COALESCE = {"ember.execution.coalescePartitions.enabled": "false"}
I64_MIN, I64_MAX = -(1 << 63), (1 << 63) - 1


@pytest.mark.parametrize("n", [2, 7, 200, 300, 40_000])
def test_partition_ids_in_range_and_batch_independent(n):
    rng = np.random.default_rng(n)
    k = pa.array(rng.integers(-10**12, 10**12, 5000), pa.int64(), mask=rng.random(5000) < 0.1)
    s = pa.array([f"v{x}" for x in rng.integers(0, 300, 5000)])
    ids = partition_ids([k, s], n)
    assert ids.dtype == np.int64 and ids.min() >= 0 and ids.max() < n
    assert (partition_ids([k.slice(1234), s.slice(1234)], n) == ids[1234:]).all()
    if n <= 300:
        assert len(np.unique(partition_ids([k], n))) == n  # every target gets keys


def test_equal_keys_equal_targets_across_integer_widths():
    vals = [-128, -1, 0, 1, 7, 127]
    ref = partition_ids([pa.array(vals, pa.int64())], 13)
    for t in (pa.int8(), pa.int16(), pa.int32(), pa.int64()):
        assert (partition_ids([pa.array(vals, t)], 13) == ref).all()
    big = pa.array([I64_MIN, I64_MAX, I64_MIN, I64_MAX, None, None], pa.int64())
    ids = partition_ids([big], 5)
    assert ids[0] == ids[2] and ids[1] == ids[3] and ids[4] == ids[5]
    # a NULL slot's junk value does not matter: NULL always lands on the same target
    no_valid = pa.py_buffer(np.packbits([0, 0], bitorder="little"))
    junk = pa.Array.from_buffers(pa.int64(), 2,
                                 [no_valid, pa.py_buffer(np.array([5, 9], np.int64))])
    assert (partition_ids([junk], 5) == ids[4]).all()


def test_float_keys_canonicalized_and_dates():
    nan = float("nan")
    a = pa.array([0.0, -0.0, nan, -nan, None, 1.5], pa.float64())
    ids = partition_ids([a], 11)
    assert ids[0] == ids[1] and ids[2] == ids[3]
    assert (partition_ids([a.cast(pa.float32())], 11) == ids).all()
    d = pa.array([0, 19000, None], pa.int32()).cast(pa.date32())
    assert (partition_ids([d], 11) == partition_ids([pa.array([0, 19000, None], pa.int64())],
                                                    11)).all()


@pytest.mark.parametrize("n", [7, 300])  # 8-bit and 16-bit counting sort keys
@pytest.mark.parametrize("bs", [2, 1000])
def test_exchange_keeps_row_order_within_each_target(n, bs):
    rng = np.random.default_rng(n)
    m = 3000
    t = pa.table({"k": pa.array(rng.integers(-50, 50, m), pa.int64(), mask=rng.random(m) < 0.1),
                  "row": pa.array(np.arange(m), pa.int64()),
                  "s": pa.array([f"x{i}" if i % 5 else None for i in range(m)], pa.large_string())})
    s = scan(t)
    ex = ShuffleExchangeExec(HashPartitioning((s.output[0],), n), s)
    rt = LocalRuntime(make_conf(bs, **NO_COALESCE))
    parts = rt.execute(ex)
    assert len(parts) == n
    ids = partition_ids([t.column("k").combine_chunks()], n)
    for p, fn in enumerate(parts):
        got = pa.Table.from_batches(list(fn()), schema=t.schema)
        want = t.take(pa.array(np.flatnonzero(ids == p)))
        assert got.equals(want)
