"""HashedRelation's hash-table path (``_KeyTable`` for sparse fixed-width keys and densified
multi-column codes, radix grouping of build rows) against the previous path (sorted distinct
keys + binary search, numpy's stable argsort) kept behind the module flags: identical candidates
for every stream row, for sparse / clustered / negative / extreme / date / int32 keys, multi-column
keys, NULLs, duplicates, empty builds and probes, absent keys; plus a join at batch size 2."""

from __future__ import annotations

import datetime

import numpy as np
import pyarrow as pa
import pytest

from ember import types as T
from ember.expressions.base import BoundReference
from ember.runtime.local.joins import hashed_relation as H
from ember.runtime.local.joins.hashed_relation import HashedRelation, _KeyTable

I64_MIN, I64_MAX = -(1 << 63), (1 << 63) - 1
_TYPES = {pa.int64(): T.LONG, pa.int32(): T.INT, pa.date32(): T.DATE, pa.string(): T.STRING,
          pa.float64(): T.DOUBLE}


@pytest.fixture
def flags(monkeypatch):
    def set_(on: bool) -> None:
        monkeypatch.setattr(H, "HASH_TABLE", on)
        monkeypatch.setattr(H, "RADIX_GROUPING", on)
    yield set_


def _rel(build_cols, *, ignores=False, allows_null_key=False):
    batch = pa.record_batch({f"k{i}": c for i, c in enumerate(build_cols)})
    keys = tuple(BoundReference(i, _TYPES[c.type], True) for i, c in enumerate(build_cols))
    return HashedRelation.build(batch, keys, allows_null_key=allows_null_key,
                                ignores_duplicated_key=ignores)


def _pairs(rel, probe_cols):
    cand = rel.lookup(probe_cols)
    si, bi = rel.probe(probe_cols)
    return cand.counts.tolist(), list(zip(si.tolist(), bi.tolist()))


def _same(flags, build_cols, probe_cols, *, ignores=False, allows_null_key=False, kind=None):
    """Old and new paths give the same candidates; returns the new relation."""
    out = {}
    rels = {}
    for on in (False, True):
        flags(on)
        rels[on] = rel = _rel(build_cols, ignores=ignores, allows_null_key=allows_null_key)
        out[on] = _pairs(rel, probe_cols)
        assert rel.key_is_unique == rels[False].key_is_unique
        assert rel.num_keys == rels[False].num_keys
        assert rel.null_key_rows == rels[False].null_key_rows
    assert out[True] == out[False]
    if kind is not None:
        col = rels[True].encoder.columns[0]
        assert col.kind == kind and (col.table is not None) == (kind == "bits")
    return rels[True], out[True]


def _brute(build, probe):
    """Expected (stream, build) pairs of a single nullable column (NULL never matches)."""
    idx: dict = {}
    for i, v in enumerate(x for x in build if x is not None):
        idx.setdefault(v, []).append(i)
    return [(s, b) for s, v in enumerate(probe) if v is not None for b in idx.get(v, [])]


@pytest.mark.parametrize("ignores", [False, True])
@pytest.mark.parametrize("dup", [1, 3])
def test_random_sparse_keys(flags, ignores, dup):
    rng = np.random.default_rng(dup)
    for n in (0, 1, 2, 700, 20_000):
        vals = rng.integers(-(1 << 40), 1 << 40, max(n // dup, 1))[: n // dup].repeat(dup)
        rng.shuffle(vals)
        build = pa.array(vals, pa.int64(), mask=rng.random(len(vals)) < 0.05)
        probe_vals = np.concatenate([vals[: len(vals) // 2],
                                     rng.integers(-(1 << 40), 1 << 40, 500)])
        probe = pa.array(probe_vals, pa.int64(), mask=rng.random(len(probe_vals)) < 0.05)
        rel, (_, pairs) = _same(flags, [build], [probe], ignores=ignores,
                                kind="bits" if n > 1 else None)
        if not ignores:
            assert pairs == _brute(build.to_pylist(), probe.to_pylist())


def test_clustered_and_sorted_keys(flags):
    # runs of equal adjacent keys (file order clustered by key), sorted probes, and gaps
    keys = (np.arange(1, 40_000) * 1009).repeat(3)
    build = pa.array(keys, pa.int64())
    probe = pa.array(np.arange(0, 40_000 * 1009, 97), pa.int64())
    rel, (_, pairs) = _same(flags, [build], [probe], kind="bits")
    assert not rel.key_is_unique and rel.num_keys == 39_999
    assert pairs == _brute(build.to_pylist(), probe.to_pylist())
    # clustered in a few dense blocks far apart
    blocks = np.concatenate([np.arange(b, b + 500) for b in (-(1 << 50), 0, 1 << 33, 1 << 60)])
    _same(flags, [pa.array(blocks, pa.int64())],
          [pa.array(np.concatenate([blocks - 1, blocks, blocks + 1]), pa.int64())], kind="bits")


@pytest.mark.parametrize("ignores", [False, True])
def test_negative_and_extreme_keys(flags, ignores):
    build = [I64_MIN, I64_MAX, -1, 0, I64_MIN, None, 1 << 62, -(1 << 62), I64_MAX]
    probe = [I64_MAX, I64_MIN, 0, 1, -1, None, I64_MAX - 1, I64_MIN + 1, 1 << 62, -(1 << 62)]
    b, p = pa.array(build, pa.int64()), pa.array(probe, pa.int64())
    _, (_, pairs) = _same(flags, [b], [p], ignores=ignores, kind="bits")
    if not ignores:
        assert pairs == _brute(build, probe)


def test_int32_and_date_keys(flags):
    rng = np.random.default_rng(7)
    v = rng.integers(-(1 << 31), (1 << 31) - 1, 3000)
    b32 = pa.array(v, pa.int32())
    p32 = pa.array(np.concatenate([v[::3], rng.integers(-(1 << 31), (1 << 31) - 1, 500)]),
                   pa.int32())
    _same(flags, [b32], [p32], kind="bits")
    # int32 build probed with wider int64 values (no cast: compared as int64 values)
    _same(flags, [b32], [pa.array([int(v[0]), 1 << 40, -(1 << 40), None], pa.int64())])
    days = [datetime.date(1970, 1, 1) + datetime.timedelta(days=int(d))
            for d in rng.integers(-100_000, 100_000, 2000)]
    bd = pa.array(days + [None], pa.date32())
    pd_ = pa.array(days[::2] + [datetime.date(2500, 1, 1), None, datetime.date(1, 1, 1)],
                   pa.date32())
    _, (_, pairs) = _same(flags, [bd], [pd_], kind="bits")
    assert pairs == _brute(bd.to_pylist(), pd_.to_pylist())


@pytest.mark.parametrize("ignores", [False, True])
def test_multi_column_keys_densified(flags, ignores):
    rng = np.random.default_rng(11)
    n = 5000
    a = pa.array(rng.integers(0, 10_000, n), pa.int64(), mask=rng.random(n) < 0.05)
    b = pa.array(rng.integers(0, 200_000, n), pa.int64())  # product > 1<<20: densified
    c = pa.array(rng.integers(-(1 << 40), 1 << 40, n) // (1 << 30) * (1 << 30), pa.int64())
    pa_ = pa.array(np.concatenate([a.fill_null(0).to_numpy()[:2000], rng.integers(0, 10_000, 500)]),
                   pa.int64())
    pb = pa.array(np.concatenate([b.to_numpy()[:2000], rng.integers(0, 200_000, 500)]), pa.int64())
    pc_ = pa.array(np.concatenate([c.to_numpy()[:2000], c.to_numpy()[2000:2500]]), pa.int64())
    rel, _ = _same(flags, [a, b], [pa_, pb], ignores=ignores)
    assert any(isinstance(arg, _KeyTable) for _, arg in rel.encoder.steps)
    _same(flags, [a, b, c], [pa_, pb, pc_], ignores=ignores)
    s = pa.array([f"s{x}" for x in rng.integers(0, 7, n)])
    ps = pa.array([f"s{x}" for x in rng.integers(0, 8, 2500)])
    _same(flags, [c, s], [pc_, ps], ignores=ignores)


def test_null_keys_kept_for_outer_builds(flags):
    # allows_null_key keeps NULL-key rows in the relation; they still never match
    build = pa.array([5 << 40, None, 5 << 40, None, 7, -(9 << 40)], pa.int64())
    probe = pa.array([None, 5 << 40, 7, 8, -(9 << 40)], pa.int64())
    rel, (counts, pairs) = _same(flags, [build], [probe], allows_null_key=True, kind="bits")
    assert rel.num_rows == 6 and rel.null_key_rows == 2
    assert counts == [0, 2, 1, 0, 1]
    assert pairs == [(1, 0), (1, 2), (2, 4), (4, 5)]


def test_null_safe_key_pairs(flags):
    # <=> keys arrive as (coalesce(k, default), isnull(k)): never NULL, NULL rows match each other
    k = [1 << 40, None, 3, None]
    build_c = pa.array([x if x is not None else 0 for x in k], pa.int64())
    build_n = pa.array([int(x is None) for x in k], pa.int64())
    pk = [None, 3, 0, 1 << 40]
    probe_c = pa.array([x if x is not None else 0 for x in pk], pa.int64())
    probe_n = pa.array([int(x is None) for x in pk], pa.int64())
    _, (_, pairs) = _same(flags, [build_c, build_n], [probe_c, probe_n])
    assert pairs == [(0, 1), (0, 3), (1, 2), (3, 0)]


def test_empty_and_all_null(flags):
    sparse = pa.array([1 << 40, 1 << 50], pa.int64())
    for build in (pa.array([], pa.int64()), pa.array([None, None], pa.int64())):
        rel, (counts, pairs) = _same(flags, [build], [pa.array([1, None, 0], pa.int64())])
        assert counts == [0, 0, 0] and pairs == []
    rel, (counts, pairs) = _same(flags, [sparse], [pa.array([], pa.int64())], kind="bits")
    assert counts == [] and pairs == []
    # probes of absent keys only
    _, (counts, _) = _same(flags, [sparse], [pa.array([0, 1 << 41, I64_MIN, None], pa.int64())])
    assert counts == [0, 0, 0, 0]


def test_key_table_direct():
    rng = np.random.default_rng(5)
    vals = rng.integers(I64_MIN, I64_MAX, 10_000, dtype=np.int64).repeat(2)
    rng.shuffle(vals)
    table, codes = _KeyTable.build(vals)
    assert table is not None and table.card == 10_000
    # codes are dense, equal exactly for equal keys
    assert sorted(set(codes.tolist())) == list(range(10_000))
    first = {}
    for v, c in zip(vals.tolist(), codes.tolist()):
        assert first.setdefault(v, c) == c
    probe = np.concatenate([vals, rng.integers(I64_MIN, I64_MAX, 5000, dtype=np.int64)])
    got = table.lookup(probe)
    assert (got[: len(vals)] == codes).all()
    absent = ~np.isin(probe[len(vals):], vals)
    assert (got[len(vals):][absent] == -1).all()
    # bounded: a power of two >= 2x and <= 4x the distinct keys (after the duplicate rebuild)
    assert 2 * 10_000 <= len(table.keys) <= 4 * 10_000


def test_colliding_keys_fall_back_to_binary_search(flags, monkeypatch):
    # keys that all share their high bits collide under a tiny visit budget: the build gives up
    # and the column falls back to the sorted distinct keys (same answers)
    flags(True)
    monkeypatch.setattr(H, "_MAX_VISITS_PER_KEY", 0)
    vals = np.arange(0, 3000, dtype=np.int64) << 44
    table, _ = _KeyTable.build(vals)
    assert table is None
    build = pa.array(vals, pa.int64())
    probe = pa.array(np.concatenate([vals[::2], vals[:5] + 1]), pa.int64())
    rel = _rel([build])
    col = rel.encoder.columns[0]
    assert col.kind == "bits" and col.table is None and col.uniq is not None
    _, pairs = _pairs(rel, [probe])
    assert pairs == _brute(build.to_pylist(), probe.to_pylist())


def test_estimated_size_counts_the_table(flags):
    build = pa.array(np.arange(50_000, dtype=np.int64) * (1 << 30), pa.int64())
    flags(True)
    rel = _rel([build])
    table = rel.encoder.columns[0].table
    assert table is not None
    assert rel.estimated_size() >= rel.batch.nbytes + table.nbytes + rel._match_ext.nbytes
    assert table.nbytes <= 12 * 4 * 50_000


@pytest.mark.parametrize("batch_size", [2, 1024])
def test_join_over_sparse_keys_at_batch_sizes(batch_size):
    import ember

    rng = np.random.default_rng(9)
    lk = rng.integers(0, 1 << 40, 300).repeat(2)
    rk = np.concatenate([lk[::3], rng.integers(0, 1 << 40, 50)])
    s = ember.Session()
    s.sql(f"SET ember.execution.batchSize={batch_size}")
    s.createDataFrame(pa.table({"a": pa.array(lk, pa.int64()), "x": np.arange(len(lk))})) \
        .createOrReplaceTempView("l")
    s.createDataFrame(pa.table({"b": pa.array(rk, pa.int64()), "y": np.arange(len(rk))})) \
        .createOrReplaceTempView("r")
    got = s.sql("SELECT x, y FROM l JOIN r ON a = b").to_arrow()
    exp = sorted((x, y) for x, a in enumerate(lk.tolist()) for y, b in enumerate(rk.tolist())
                 if a == b)
    assert sorted(zip(got["x"].to_pylist(), got["y"].to_pylist())) == exp


def test_radix_grouping_is_stable():
    rng = np.random.default_rng(13)
    for card in (3, 1 << 16, (1 << 16) + 1, 1 << 20, 1 << 32, (1 << 32) + 9):
        for n in (0, 1, 300, 50_000):
            codes = rng.integers(0, card, n)
            assert (H._stable_argsort(codes, card) == np.argsort(codes, kind="stable")).all()


def test_many_keys_with_duplicates_rows_in_insertion_order(flags):
    # > 2**16 distinct codes (two radix passes), each key's rows must stay in insertion order
    rng = np.random.default_rng(17)
    vals = rng.integers(0, 150_000, 120_000)
    sparse = vals * 100_003
    for v in (vals, sparse):
        build = pa.array(v, pa.int64())
        probe = pa.array(rng.permutation(v)[:30_000], pa.int64())
        rel, (_, pairs) = _same(flags, [build], [probe])
        assert not rel.key_is_unique and rel.num_keys > 1 << 16


@pytest.mark.parametrize("dup", (False, True))
@pytest.mark.parametrize("nulls", (False, True))
def test_shared_relation_codes_sparse_keys_directly(dup, nulls):
    # 20K keys over 6M values: sorted distinct keys for a partition's relation, a direct table
    # for a broadcast's (shared) one -- the same candidates either way
    rng = np.random.default_rng(3)
    keys = rng.choice(6_000_000, 20_000, replace=False)
    if dup:
        keys = np.concatenate([keys, keys[:5000]])
    build = pa.array(keys, pa.int64(), mask=(np.arange(len(keys)) % 97 == 0) if nulls else None)
    probe = [pa.array(np.concatenate([keys[:3000], rng.integers(-5, 6_000_005, 3000)]),
                      pa.int64())]
    batch = pa.record_batch({"k0": build})
    key = (BoundReference(0, T.LONG, True),)
    own = HashedRelation.build(batch, key, allows_null_key=False)
    shared = HashedRelation.build(batch, key, allows_null_key=False, shared=True)
    assert own.encoder.columns[0].kind != "range" and "densify" not in [
        s for s, _ in shared.encoder.steps]
    assert shared.encoder.columns[0].kind == "range"
    assert _pairs(own, probe) == _pairs(shared, probe)
