"""HashedRelation's fast paths against a brute-force multimap: the int32 direct table with its
trailing -1 (unique keys; first row per key for ``ignores_duplicated_key``), the per-group
tables of non-unique keys (dense and sparse code ranges), the sorted-bits dictionaries, and the
range probe -- with NULLs, all-NULL and empty builds, duplicates, negative keys, keys at the
int64 extremes, floats with NaN / -0.0 and probe keys of another integer width."""

from __future__ import annotations

import math

import numpy as np
import pyarrow as pa
import pytest

from ember import types as T
from ember.expressions.base import BoundReference
from ember.runtime.local.joins.hashed_relation import HashedRelation

I64_MIN, I64_MAX = -(1 << 63), (1 << 63) - 1
_TYPES = {pa.int64(): T.LONG, pa.int32(): T.INT, pa.int16(): T.SHORT, pa.float64(): T.DOUBLE,
          pa.float32(): T.FLOAT, pa.string(): T.STRING}


def _canon(v):
    if isinstance(v, float):
        return "nan" if math.isnan(v) else v + 0.0
    return v


def _expected(build_cols, probe_cols, ignores: bool):
    """(stream row, build row) pairs by brute force; build rows numbered after NULL-key rows
    are dropped, in insertion order."""
    rows = list(zip(*[c.to_pylist() for c in build_cols]))
    kept = [r for r in rows if all(v is not None for v in r)]
    index: dict = {}
    for i, r in enumerate(kept):
        index.setdefault(tuple(_canon(v) for v in r), []).append(i)
    out = []
    for si, r in enumerate(zip(*[c.to_pylist() for c in probe_cols])):
        if any(v is None for v in r):
            continue
        hits = index.get(tuple(_canon(v) for v in r), [])
        out.extend((si, b) for b in (hits[:1] if ignores else hits))
    return out


def _check(build_cols, probe_cols, ignores=False):
    batch = pa.record_batch({f"k{i}": c for i, c in enumerate(build_cols)})
    keys = tuple(BoundReference(i, _TYPES[c.type], True) for i, c in enumerate(build_cols))
    rel = HashedRelation.build(batch, keys, allows_null_key=False,
                               ignores_duplicated_key=ignores)
    si, bi = rel.probe(probe_cols)
    got = list(zip(si.tolist(), bi.tolist()))
    assert got == _expected(build_cols, probe_cols, ignores)
    return rel


@pytest.mark.parametrize("ignores", [False, True])
@pytest.mark.parametrize("span", [300, 10_000_000])  # dense range codes / sorted bits
def test_random_int_keys_with_nulls_and_duplicates(ignores, span):
    rng = np.random.default_rng(span)
    for n, dup in ((0, 1), (1, 1), (500, 1), (500, 20)):
        vals = rng.choice(np.arange(-span, span), n, replace=False) if dup == 1 else \
            rng.integers(-span, span, n // dup).repeat(dup)
        rng.shuffle(vals)
        build = pa.array(vals, pa.int64(), mask=rng.random(n) < 0.1)
        probe = pa.array(np.concatenate([vals[: n // 2], rng.integers(-span, span, 300)]),
                         pa.int64(), mask=rng.random(n // 2 + 300) < 0.1)
        rel = _check([build], [probe], ignores)
        assert rel.key_is_unique == (len(set(build.drop_null().to_pylist())) ==
                                     len(build.drop_null()))


def test_sparse_non_unique_keys_use_small_group_tables():
    # codes span a wide range (range kind) but few keys: per-group arrays, not per-code ones
    build = pa.array([0, 1_000_000, 0, 5, 1_000_000, 0], pa.int64())
    rel = _check([build], [pa.array([0, 5, 7, 1_000_000, None, -1, 2_000_000], pa.int64())])
    assert not rel.key_is_unique and rel.num_keys == 3
    assert len(rel._group_first_ext) == 4  # three keys + the trailing "no row" group
    assert rel.estimated_size() < 8 * 1_000_000


def test_first_row_per_key_when_ignoring_duplicates():
    build = pa.array([7, 3, 7, 3, 9, 7], pa.int64())
    rel = _check([build], [pa.array([3, 7, 9, 4], pa.int64())], ignores=True)
    assert rel.match is not None and rel.num_keys == 3
    assert rel.lookup([pa.array([7, 3, 9, 4], pa.int64())]).match.tolist() == [0, 1, 4, -1]


@pytest.mark.parametrize("ignores", [False, True])
def test_int64_extremes_and_negative_keys(ignores):
    build = pa.array([I64_MIN, I64_MAX, -1, 0, I64_MIN, None], pa.int64())
    probe = pa.array([I64_MAX, I64_MIN, 0, 1, -1, None, I64_MAX - 1, I64_MIN + 1], pa.int64())
    _check([build], [probe], ignores)
    # a small range right at the top / bottom: offsets must not overflow into a match
    for base in (I64_MAX - 10, I64_MIN):
        b = pa.array([base + i for i in (0, 3, 3, 10)], pa.int64())
        p = pa.array([base + 3, base + 10, I64_MIN, I64_MAX, 0, base], pa.int64())
        _check([b], [p], ignores)


def test_all_null_and_empty_builds():
    for build in (pa.array([None, None], pa.int64()), pa.array([], pa.int64())):
        rel = _check([build], [pa.array([1, None, 0], pa.int64())])
        assert rel.num_rows == 0 and rel.num_keys == 0
        assert rel.lookup([pa.array([1, None], pa.int64())]).counts.tolist() == [0, 0]


def test_probe_with_other_integer_width():
    build = pa.array([-3, 100, 7, 7], pa.int32())
    _check([build], [pa.array([7, -3, 1 << 40, -(1 << 40) - 3, 100, None], pa.int64())])
    build64 = pa.array([-3, 100, 7, 1 << 40], pa.int64())
    _check([build64], [pa.array([7, -3, 100, None, 0], pa.int16())])


@pytest.mark.parametrize("t", [pa.float64(), pa.float32()])
def test_float_keys_nan_and_negative_zero(t):
    nan = float("nan")
    build = pa.array([nan, -0.0, 1.5, None, 0.0, -nan, 2.5], t)
    probe = pa.array([0.0, -0.0, nan, 1.5, None, 3.0, 2.5], t)
    _check([build], [probe])
    _check([build], [probe], ignores=True)


def test_multi_column_keys_with_duplicates():
    rng = np.random.default_rng(3)
    a = pa.array(rng.integers(-5, 5, 400), pa.int64(), mask=rng.random(400) < 0.05)
    b = pa.array([f"s{x}" for x in rng.integers(0, 4, 400)])
    pa_ = pa.array(rng.integers(-6, 6, 300), pa.int64())
    pb = pa.array([f"s{x}" for x in rng.integers(0, 5, 300)])
    _check([a, b], [pa_, pb])
    _check([a, b], [pa_, pb], ignores=True)
