"""The word-packing sort kernel against a Python reference with Spark's ordering rules (NULLS
FIRST/LAST, NaN greatest, -0.0 == 0.0, bytewise strings, stable), and SortExec with spills."""

from __future__ import annotations

import datetime as dt
import functools
import math
from decimal import Decimal

import numpy as np
import pyarrow as pa
import pytest

from ember.execution.kernels import sort as sort_kernel
from ember.execution.kernels.sort import sort_indices


def _cmp_value(a, b) -> int:
    if isinstance(a, float):
        a_nan, b_nan = math.isnan(a), math.isnan(b)
        if a_nan or b_nan:
            return (a_nan > b_nan) - (a_nan < b_nan)
    if isinstance(a, str):
        a, b = a.encode(), b.encode()
    if isinstance(a, dict):
        for x, y in zip(a.values(), b.values()):
            c = _cmp_key(x, y, True, True)
            if c:
                return c
        return 0
    return (a > b) - (a < b)


def _cmp_key(a, b, asc: bool, nulls_first: bool) -> int:
    if a is None or b is None:
        if a is None and b is None:
            return 0
        return (-1 if a is None else 1) * (1 if nulls_first else -1)
    c = _cmp_value(a, b)
    return c if asc else -c


def _reference(cols, asc, nf) -> list[int]:
    rows = list(zip(*[c.to_pylist() for c in cols]))

    def cmp(i, j):
        for x, y, a, f in zip(rows[i], rows[j], asc, nf):
            c = _cmp_key(x, y, a, f)
            if c:
                return c
        return 0

    return sorted(range(len(rows)), key=functools.cmp_to_key(cmp))  # stable


def _column(kind: str, n: int, rng: np.random.Generator) -> pa.Array:
    nulls = rng.random(n) < 0.2
    if kind == "int":
        return pa.array(rng.integers(-5, 5, n), mask=nulls)
    if kind == "bigint":
        return pa.array(rng.integers(-2**63, 2**63 - 1, n, dtype=np.int64), mask=nulls)
    if kind == "wide":  # ranges needing a split word
        return pa.array(rng.choice([-2**62, 0, 2**62, 7, 2**40 + 3], n), mask=nulls)
    if kind == "double":
        vals = rng.choice([0.0, -0.0, math.nan, -math.nan, math.inf, -math.inf, 1.5, -2.0, 1e300], n)
        return pa.array(vals, mask=nulls)
    if kind == "float":
        vals = rng.choice([0.0, -0.0, math.nan, math.inf, -1.0, 3.25], n).astype(np.float32)
        return pa.array(vals, type=pa.float32(), mask=nulls)
    if kind == "string":
        pool = ["", "a", "ab", "a\x00", "abcdefgh", "abcdefghi", "abcdefgh\x00", "zz", "é", "Z",
                "abcdefghijklmnopq", "abcdefghijklmnopr", "\U0001f600"]
        return pa.array([None if m else pool[i] for m, i in
                         zip(nulls, rng.integers(0, len(pool), n))], type=pa.string())
    if kind == "binary":
        return pa.array([None if m else bytes(rng.integers(0, 256, int(k)).astype(np.uint8))
                         for m, k in zip(nulls, rng.integers(0, 11, n))], type=pa.binary())
    if kind == "decimal":
        return pa.array([None if m else Decimal(int(v)) / 100 for m, v in
                         zip(nulls, rng.integers(-10**6, 10**6, n))], type=pa.decimal128(10, 2))
    if kind == "bigdecimal":
        return pa.array([None if m else Decimal(int(v)) * 10**20 + 7 for m, v in
                         zip(nulls, rng.integers(-50, 50, n))], type=pa.decimal128(38, 0))
    if kind == "date":
        return pa.array([None if m else dt.date(2000, 1, 1) + dt.timedelta(days=int(d))
                         for m, d in zip(nulls, rng.integers(-800, 800, n))], type=pa.date32())
    if kind == "timestamp":
        return pa.array(rng.integers(-10**15, 10**15, n), type=pa.int64(),
                        mask=nulls).cast(pa.timestamp("us", tz="UTC"))
    if kind == "bool":
        return pa.array(rng.random(n) < 0.5, mask=nulls)
    if kind == "struct":
        a = pa.array(rng.integers(0, 3, n), mask=rng.random(n) < 0.3)
        b = pa.array(rng.choice(["x", "y"], n), mask=rng.random(n) < 0.3)
        return pa.StructArray.from_arrays([a, b], names=["a", "b"], mask=pa.array(nulls))
    raise AssertionError(kind)


KINDS = ["int", "bigint", "wide", "double", "float", "string", "binary", "decimal", "bigdecimal",
         "date", "timestamp", "bool", "struct"]


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("asc,nf", [(True, True), (True, False), (False, True), (False, False)])
def test_single_key_matches_reference(kind, asc, nf):
    rng = np.random.default_rng(hash((kind, asc, nf)) % 2**32)
    col = _column(kind, 300, rng)
    got = sort_indices([col], [asc], [nf]).tolist()
    assert got == _reference([col], [asc], [nf])


@pytest.mark.parametrize("seed", range(12))
def test_multi_key_matches_reference(seed):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(0, 400))
    kinds = rng.choice(KINDS, int(rng.integers(1, 4)))
    cols = [_column(k, n, rng) for k in kinds]
    asc = [bool(x) for x in rng.random(len(cols)) < 0.5]
    nf = [bool(x) for x in rng.random(len(cols)) < 0.5]
    assert sort_indices(cols, asc, nf).tolist() == _reference(cols, asc, nf)


def test_sliced_and_chunked_inputs():
    rng = np.random.default_rng(3)
    s = _column("string", 500, rng).slice(37, 300)
    i = _column("bigint", 500, rng).slice(11, 300)
    d = _column("decimal", 500, rng).slice(5, 300)
    want = _reference([s, i, d], [False, True, True], [True, False, True])
    got = sort_indices([pa.chunked_array([s[:100], s[100:]]), i, d], [False, True, True],
                       [True, False, True])
    assert got.tolist() == want


def test_large_input_paths_agree_with_arrow(monkeypatch):
    """Parallel chunked sort, split words and lexsort fallback give the stable Arrow order."""
    import pyarrow.compute as pc

    rng = np.random.default_rng(5)
    n = 50_000
    a = pa.array(rng.integers(0, 40, n))
    b = pa.array(rng.integers(-2**63, 2**63 - 1, n, dtype=np.int64))
    c = pa.array(rng.integers(0, 3, n))
    want = pc.sort_indices(pa.table({"a": a, "c": c, "b": b}),
                           sort_keys=[("a", "descending"), ("c", "ascending"),
                                      ("b", "ascending")]).to_numpy()
    monkeypatch.setattr(sort_kernel, "_PARALLEL_MIN_ROWS", 1000)
    monkeypatch.setattr(sort_kernel, "_CORES", 3)
    got = sort_indices([a, c, b], [False, True, True], [True, True, True])
    assert np.array_equal(got, want)


def test_empty_and_constant():
    assert sort_indices([pa.array([], pa.int64())], [True], [True]).tolist() == []
    assert sort_indices([pa.array([7] * 5)], [False], [True]).tolist() == [0, 1, 2, 3, 4]
    assert sort_indices([pa.nulls(4)], [True], [True]).tolist() == [0, 1, 2, 3]


@pytest.mark.parametrize("batch_size,n", [(2, 600), (4096, 20000)])
def test_sort_exec_spill_matches_reference(batch_size, n):
    """SortExec past the memory budget (sorted runs + merge) equals the stable Python reference,
    by a string key DESC NULLS LAST then a double key ASC NULLS FIRST."""
    from ember.expressions.base import SortOrder
    from ember.physical.nodes import ShuffleExchangeExec, SinglePartition, SortExec, UnionExec
    from ember.runtime.local import LocalRuntime
    from tests.runtime.conftest import make_conf, scan

    rng = np.random.default_rng(n)
    s = _column("string", n, rng)
    f = _column("double", n, rng)
    t = pa.table({"s": s, "f": f, "i": pa.array(np.arange(n), pa.int64())})
    src = UnionExec(tuple(scan(t.slice(o, 250)) for o in range(0, n, 250)))
    order = (SortOrder(src.output[0], False, False), SortOrder(src.output[1], True, True))
    plan = SortExec(order, True, ShuffleExchangeExec(SinglePartition(), src))
    conf = make_conf(batch_size, **{"ember.execution.memoryBudget": str(t.nbytes // 3)})
    with LocalRuntime(conf) as rt:
        out = rt.collect(plan)
        assert rt.metrics[plan].spill_size > 0
    assert out.column("i").to_pylist() == _reference([s, f], [False, True], [False, True])
