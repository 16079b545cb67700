"""Fast paths of hash aggregation: integer group ids (direct table / sort / hash), min/max of
dates, timestamps and narrow decimals over their integers, identity update / merge (every row its
own group), and the adaptive pass-through of high-cardinality partial aggregates.  Each fast path
is compared with the general path it replaces."""

from __future__ import annotations

import datetime as dt
from decimal import Decimal

import numpy as np
import pyarrow as pa
import pytest

import ember
from ember import types as T
from ember.errors import ArithmeticError_
import ember.execution.aggregate as A
import ember.execution.aggregate_buffers as B
import ember.expressions.aggregates.kernels as K
import ember.runtime.local.operators.aggregate_modes as M
from ember.expressions.aggregates import Average, Count, Max, Min, Sum
from ember.expressions.base import AttributeReference
from ember.physical.nodes import HashAggregateExec
from ember.planning import plan_query
from ember.runtime.local import LocalRuntime


def _ref_group_ids(cols: list[pa.Array]) -> tuple[np.ndarray, np.ndarray]:
    """First-appearance numbering in plain Python (NULL one value)."""
    seen: dict[tuple, int] = {}
    ids, first = [], []
    for i, key in enumerate(zip(*[c.to_pylist() for c in cols])):
        if key not in seen:
            seen[key] = len(seen)
            first.append(i)
        ids.append(seen[key])
    return np.array(ids), np.array(first)


def _check_ids(cols: list[pa.Array]) -> None:
    ids, first = A.group_ids(cols, len(cols[0]))
    rids, rfirst = _ref_group_ids(cols)
    assert ids.dtype == np.int64 and first.dtype == np.int64
    assert ids.tolist() == rids.tolist() and first.tolist() == rfirst.tolist()


@pytest.mark.parametrize("kind", ["dense", "wide_runs", "wide_random", "nulls", "negative"])
def test_integer_group_ids_match_reference(kind):
    rng = np.random.default_rng(7)
    n = 5000
    if kind == "dense":
        v = rng.integers(0, 3000, n)
    elif kind == "wide_runs":  # few ascending runs over a range far wider than 16 x rows
        v = np.concatenate([np.sort(rng.integers(0, 10**12, n // 4)) for _ in range(4)])
        v[::7] = v[::7][0]  # duplicates
    elif kind == "wide_random":
        v = rng.integers(-10**15, 10**15, n)
        v[::3] = 42
    elif kind == "nulls":
        v = rng.integers(0, 10**10, n)
        v[::5] = 17
    else:
        v = rng.integers(-(2**62), 2**62, n)
        v[1::2] = -(2**62)
    mask = (np.arange(n) % 11 == 3) if kind == "nulls" else None
    _check_ids([pa.array(v, pa.int64(), mask=mask)])


def test_integer_group_ids_extremes_and_types():
    big = pa.array([2**63 - 1, -(2**63), None, 2**63 - 1, 0, -(2**63)], pa.int64())
    _check_ids([big])  # span beyond 2**62: general encoding
    _check_ids([pa.array([3, None, 3, None, 1], pa.int8())])
    _check_ids([pa.array([dt.date(2020, 1, 1), None, dt.date(1970, 1, 1), dt.date(2020, 1, 1)])])
    _check_ids([pa.array([5, 10**15, None, 5, 10**15], pa.timestamp("us", tz="UTC"))])
    _check_ids([pa.array([2**64 - 1, 0, 2**64 - 1], pa.uint64())])
    _check_ids([pa.array([None, None, None], pa.int32())])


def test_multi_column_keys_with_high_cardinality_integers():
    rng = np.random.default_rng(3)
    n = 3000
    a = pa.array(rng.integers(0, 10**12, n) // 7 * 7 % (10**12), pa.int64(),
                 mask=np.arange(n) % 13 == 0)
    b = pa.array(rng.choice(["x", "y", None], n))
    c = pa.array(rng.integers(0, 3, n), pa.int32())
    _check_ids([a, b, c])
    _check_ids([c, a])


def test_dense_by_first_all_paths_agree():
    rng = np.random.default_rng(11)
    codes = np.concatenate([np.sort(rng.integers(0, 400, 300)) for _ in range(3)])
    direct = A._dense_by_first(codes, 400)
    by_sort = A._dense_by_sort(codes)
    hashed = A._dense_by_first(rng.permutation(codes)[:0].astype(np.int64))  # empty is fine
    assert len(hashed[0]) == 0
    ref = _ref_group_ids([pa.array(codes)])
    for ids, first in (direct, by_sort):
        assert ids.tolist() == ref[0].tolist() and first.tolist() == ref[1].tolist()
    shuffled = rng.permutation(codes)
    ref = _ref_group_ids([pa.array(shuffled)])
    for ids, first in (A._dense_by_first(shuffled, None), A._dense_by_sort(shuffled),
                       A._dense_by_first(shuffled, 400)):
        assert ids.tolist() == ref[0].tolist() and first.tolist() == ref[1].tolist()


@pytest.mark.parametrize("arr", [
    pa.array([dt.date(2020, 1, 3), None, dt.date(2019, 1, 1), None, dt.date(2021, 5, 5),
              dt.date(2022, 1, 1)]),
    pa.array([3, None, -1, None, 5, 9], pa.timestamp("us", tz="UTC")),
    pa.array([Decimal("1.50"), None, Decimal("-2.25"), None, Decimal("9.99"), Decimal("0.01")],
             pa.decimal128(15, 2)),
    pa.array([Decimal(10**17), None, Decimal(-10**17), None, Decimal(1), Decimal(0)],
             pa.decimal128(18, 0)),
])
def test_integer_like_min_max_match_hash_grouping(arr):
    g = np.array([0, 1, 0, 3, 1, 0])  # group 2 has no rows, group 3 only NULL
    for largest in (False, True):
        got = K._min_max(arr, g, 4, largest=largest)
        fn = "max" if largest else "min"
        tbl = pa.table({"g": g, "v": arr}).group_by("g", use_threads=False).aggregate([("v", fn)])
        exp = dict(zip(tbl.column(0).to_pylist(), tbl.column(1).to_pylist()))
        assert got.type == arr.type
        assert got.to_pylist() == [exp.get(k) for k in range(4)]


# ---------------------------------------------------------------------------------------------
# Identity update / merge


def _generic(monkeypatch, fn):
    with monkeypatch.context() as m:
        m.setattr(B, "_is_identity", lambda g, n: False)
        return fn()


_DEC = pa.array([Decimal("1.25"), None, Decimal("-99999999.99"), Decimal("0.00")],
                pa.decimal128(10, 2))


@pytest.mark.parametrize("func,arr", [
    (Count((AttributeReference("m", T.DecimalType(10, 2)),)), _DEC),
    (Sum(AttributeReference("m", T.DecimalType(10, 2))), _DEC),
    (Average(AttributeReference("m", T.DecimalType(10, 2))), _DEC),
    (Min(AttributeReference("m", T.DecimalType(10, 2))), _DEC),
    (Max(AttributeReference("d", T.DOUBLE)), pa.array([-0.0, None, float("nan"), 1.0])),
    (Sum(AttributeReference("l", T.LONG)), pa.array([2**62, None, -5, 2**62], pa.int64())),
])
def test_identity_update_and_merge_equal_generic(monkeypatch, func, arr):
    gids = np.arange(len(arr), dtype=np.int64)
    fields = func.buffer_fields()
    fast = B.update_buffers(func, [arr], None, gids, len(arr))
    slow = _generic(monkeypatch, lambda: B.update_buffers(func, [arr], None, gids, len(arr)))
    conform = lambda bs: [A._conform(b, f.data_type) for b, f in zip(bs, fields)]  # noqa: E731
    assert [repr(b.to_pylist()) for b in conform(fast)] == \
        [repr(b.to_pylist()) for b in conform(slow)]
    bufs = conform(slow)
    fast_m = B.merge_buffers(func, bufs, gids, len(arr))
    slow_m = _generic(monkeypatch, lambda: B.merge_buffers(func, bufs, gids, len(arr)))
    assert [repr(b.to_pylist()) for b in conform(fast_m)] == \
        [repr(b.to_pylist()) for b in conform(slow_m)]


def test_identity_detection():
    assert B._is_identity(np.arange(5), 5)
    assert not B._is_identity(np.array([0, 2, 1]), 3)
    assert not B._is_identity(np.array([0, 1, 1]), 3)
    assert not B._is_identity(np.arange(4), 5)


# ---------------------------------------------------------------------------------------------
# Decimal sums near and beyond the int64 bound


@pytest.mark.parametrize("values", [
    [10**17, 10**17, -(10**17), 9 * 10**17],          # bound * rows beyond int64: split sums
    [999999999999999999] * 9 + [1],                    # total beyond int64: Python ints
    [-999999999999999999] * 10,
    [2**62 // 10] * 10,                                # right at the int64 bound
])
def test_decimal_sums_near_int64_bound(values):
    arr = pa.array([Decimal(v) for v in values] + [None], pa.decimal128(18, 0))
    g = np.array([0] * len(values) + [1])
    got = K._sum(arr, g, 2, T.DecimalType(28, 0)).to_pylist()
    assert got == [Decimal(sum(values)), None]


# ---------------------------------------------------------------------------------------------
# Adaptive pass-through


def _session(table: pa.Table, *, batch_size: int | None = None, pass_through: bool = True,
             ratio: float = 0.5) -> ember.Session:
    s = ember.Session()
    s.sql_conf.set("ember.execution.progress.enabled", "false")
    s.sql_conf.set("spark.sql.shuffle.partitions", "3")
    s.sql_conf.set("ember.execution.partialAggregation.passThrough.enabled",
                   "true" if pass_through else "false")
    s.sql_conf.set("ember.execution.partialAggregation.passThrough.minGroupRatio", str(ratio))
    if batch_size is not None:
        s.sql_conf.set("ember.execution.batchSize", str(batch_size))
    n = table.num_rows
    names = []
    for i in range(2):
        s.createDataFrame(table.slice(i * n // 2, n // 2)).createOrReplaceTempView(f"p{i}")
        names.append(f"select * from p{i}")
    s.sql(" union all ".join(names)).createOrReplaceTempView("t")
    return s


def _table(n: int = 600) -> pa.Table:
    rng = np.random.default_rng(5)
    k = rng.integers(0, 10**9, n)
    k[n // 2:] = k[: n - n // 2]  # every key twice (once in each partition half... or not)
    k[::17] = 3
    return pa.table({
        "k": pa.array(k, pa.int64(), mask=np.arange(n) % 29 == 0),
        "m": pa.array([None if i % 7 == 0 else Decimal(int(x)).scaleb(-2)
                       for i, x in enumerate(rng.integers(-10**6, 10**6, n))],
                      pa.decimal128(12, 2)),
        "d": pa.array(rng.integers(-4, 4, n) * 0.5),
        "s": pa.array([None if i % 5 == 0 else f"s{x}" for i, x in
                       enumerate(rng.integers(0, 50, n))]),
        "dt": pa.array([dt.date(2000, 1, 1) + dt.timedelta(days=int(x))
                        for x in rng.integers(0, 9000, n)]),
        "b": pa.array(rng.integers(0, 2, n) == 1),
    })


def _rows(t: pa.Table) -> list:
    cols = [c.to_pylist() for c in t.columns]
    return sorted((tuple(repr(v) for v in r) for r in zip(*cols)))


def _run(s: ember.Session, q: str) -> tuple[list, int]:
    plan = plan_query(s.sql(q)._qe.optimized, s.sql_conf)
    rt = LocalRuntime(s.sql_conf, parallelism=2)
    got = rt.collect(plan)
    passed = sum(m.as_dict().get("partial_pass_through_rows", 0)
                 for node, m in rt.metrics.items() if isinstance(node, HashAggregateExec))
    return _rows(got), passed


_PT_QUERY = ("select k, count(*), count(m), sum(m), avg(m), min(d), max(d), min(s), max(dt), "
             "first(s), last(s, true), bool_or(b), count_if(b), "
             "sum(m) filter (where b), min(s) filter (where d > 0) from t group by k")


@pytest.mark.parametrize("batch_size", [2, 7, None])
def test_pass_through_same_rows(monkeypatch, batch_size):
    monkeypatch.setattr(M, "_CHUNK_ROWS", 32)
    table = _table()
    on, passed = _run(_session(table, batch_size=batch_size), _PT_QUERY)
    off, none = _run(_session(table, batch_size=batch_size, pass_through=False), _PT_QUERY)
    # default batch size: a partition is one batch, the first chunk is everything: no switch
    assert (passed > 0) == (batch_size is not None) and none == 0
    assert on == off
    complete = _rows(_session(table, pass_through=False).sql(_PT_QUERY).to_arrow())
    assert on == complete


def test_pass_through_threshold_and_distinct(monkeypatch):
    monkeypatch.setattr(M, "_CHUNK_ROWS", 32)
    table = _table()
    # every chunk has > 1 group per 2 rows but not more than 1 per row: ratio 1 never switches
    _, passed = _run(_session(table, ratio=1.0), _PT_QUERY)
    assert passed == 0
    q = "select k, count(distinct s), sum(distinct m) from t group by k"
    on, passed = _run(_session(table), q)
    off, _ = _run(_session(table, pass_through=False), q)
    assert on == off
    q = "select distinct k, s from t"
    on, _ = _run(_session(table), q)
    off, _ = _run(_session(table, pass_through=False), q)
    assert on == off and len(on) == len(set(on))


def test_pass_through_not_for_inexact_merges(monkeypatch):
    """Integral / float sums (running-sum overflow checks, rounding) and capped decimal sums
    (a partition's partial sum may overflow) keep aggregating."""
    monkeypatch.setattr(M, "_CHUNK_ROWS", 32)
    table = _table()
    for q in ("select k, sum(d) from t group by k", "select k, sum(cast(k as int)) from t "
              "group by k", "select k, sum(cast(m as decimal(30, 2))) from t group by k"):
        on, passed = _run(_session(table), q)
        off, _ = _run(_session(table, pass_through=False), q)
        assert passed == 0 and on == off


def test_pass_through_keeps_ansi_decimal_overflow(monkeypatch):
    monkeypatch.setattr(M, "_CHUNK_ROWS", 4)
    n = 40
    table = pa.table({
        "k": pa.array([i // 2 for i in range(n)], pa.int64()),
        "m": pa.array([Decimal("9" * 18)] * n, pa.decimal128(18, 0)),
    })
    q = "select k, sum(m) from t group by k"
    on, passed = _run(_session(table, ratio=0.4, batch_size=2), q)
    assert passed > 0 and on == _run(_session(table, pass_through=False),
                                      "select k, sum(m) from t group by k")[0]
    big = pa.table({"k": pa.array(list(range(20)) + [0] * 20, pa.int64()),
                    "m": pa.array([Decimal("9" * 38)] * 40, pa.decimal128(38, 0))})
    with pytest.raises(ArithmeticError_) as e:
        _run(_session(big, batch_size=2), "select k, sum(m) from t group by k")
    assert e.value.error_class == "ARITHMETIC_OVERFLOW"
