"""Fast paths of hash aggregation against the general paths they shortcut:

- PARTIAL aggregation chunk by chunk, then a merge of the chunks' buffers
  (``aggregate_modes._chunked``), against one pass over the whole partition;
- group ids of key codes that arrive sorted (runs) against the hash / direct-address numbering;
- int64 decimal ``*``, ``+``, ``-``, ``/`` (``decimals.int64_multiply`` / ``int64_add_sub`` /
  ``int64_divide``) against the exact Python-int kernels, overflow errors included.
"""

from __future__ import annotations

import random
from decimal import Decimal

import numpy as np
import pyarrow as pa
import pytest

import ember
from ember import types as T
from ember.errors import ArithmeticError_
from ember.execution import aggregate as A
from ember.expressions import decimals as D
from ember.runtime.local.operators import aggregate_modes as M


def _table(n: int, seed: int = 0) -> pa.Table:
    rng = random.Random(seed)
    keys = [rng.choice([1, 2, 3, None]) for _ in range(n)]
    return pa.table({
        "k": pa.array(keys, pa.int32()),
        "s": pa.array([rng.choice(["a", "bb", None]) for _ in range(n)], pa.string()),
        "m": pa.array([None if rng.random() < 0.2 else Decimal(rng.randint(-10**6, 10**6)) / 100
                       for _ in range(n)], pa.decimal128(15, 2)),
        "w": pa.array([Decimal(rng.randint(-10**5, 10**5)) / 1000 for _ in range(n)],
                      pa.decimal128(38, 3)),
        "d": pa.array([rng.choice([0.0, -0.0, 1.5, float("nan"), None]) for _ in range(n)],
                      pa.float64()),
        "i": pa.array([rng.randint(-5, 5) for _ in range(n)], pa.int64()),
    })


_QUERY = """select k, s, sum(m), avg(m), count(*), count(m), sum(w), avg(w), min(d), max(d),
                   first(d), last(d), min(s), max(i), sum(i), sum(d), avg(d),
                   sum(m * (1 - m)), sum(m * w)
            from t group by k, s"""


def _run(table: pa.Table, q: str) -> list[tuple]:
    s = ember.Session()
    s.sql_conf.set("ember.execution.progress.enabled", "false")
    s.sql_conf.set("ember.execution.batchSize", "7")
    s.createDataFrame(table).createOrReplaceTempView("t")
    out = s.sql(q).to_arrow()
    return sorted((tuple(repr(v) for v in r.values()) for r in out.to_pylist()))


def test_chunked_partial_equals_one_pass(monkeypatch):
    t = _table(500)
    monkeypatch.setattr(M, "_chunkable", lambda aggs: False)
    expected = _run(t, _QUERY)
    monkeypatch.undo()
    calls = []
    orig = M._chunked
    monkeypatch.setattr(M, "_CHUNK_ROWS", 20)
    monkeypatch.setattr(M, "_chunked", lambda *a: calls.append(1) or orig(*a))
    got = _run(t, "select k, s, sum(m), avg(m), count(*), count(m), sum(w), avg(w), min(d), "
                  "max(d), first(d), last(d), min(s), max(i) from t group by k, s")
    assert calls, "the chunked path was not taken"
    exp_cols = [r[:14] for r in expected]
    assert got == sorted(exp_cols)
    # non-mergeable functions (integral / float sums) keep the one-pass path and its answer
    assert _run(t, _QUERY) == expected


def test_chunk_overflow_falls_back_to_one_pass(monkeypatch):
    # chunks of decimal(38, 0) whose partial sums overflow 38 digits while the total does not
    big = Decimal(9 * 10**37)
    t = pa.table({"k": pa.array([1] * 4, pa.int32()),
                  "w": pa.array([big, big, -big, -big], pa.decimal128(38, 0))})
    monkeypatch.setattr(M, "_CHUNK_ROWS", 2)
    assert _run(t, "select k, sum(w) from t group by k") == [("1", "Decimal('0')")]
    with pytest.raises(ArithmeticError_) as e:
        _run(pa.table({"k": pa.array([1, 1], pa.int32()),
                       "w": pa.array([big, big], pa.decimal128(38, 0))}),
             "select k, sum(w) from t group by k")
    assert e.value.error_class == "ARITHMETIC_OVERFLOW"


@pytest.mark.parametrize("codes", [
    [3, 3, 5, 5, 5, 9], [0], [1, 2, 3], [7, 7, 7], [5, 1, 5, 2, 1],
])
def test_sorted_runs_group_ids(codes):
    c = np.array(codes, dtype=np.int64)
    ids, first = A._dense_by_first(c, None)
    # reference: numbering by first appearance
    order = {}
    for x in codes:
        order.setdefault(x, len(order))
    assert ids.tolist() == [order[x] for x in codes]
    assert first.tolist() == [codes.index(x) for x in order]


def _dec(vals, p, s):
    return pa.array([None if v is None else Decimal(v) for v in vals], pa.decimal128(p, s))


@pytest.mark.parametrize("op", ["*", "+", "-"])
def test_int64_decimal_kernels_match_exact(op):
    rng = random.Random(1)
    cases = [(15, 2, 16, 2, T.DecimalType(32, 4)), (32, 4, 16, 2, T.DecimalType(38, 6)),
             (10, 3, 10, 5, T.DecimalType(21, 8)), (38, 10, 38, 10, T.DecimalType(38, 6))]
    if op != "*":
        cases = [(15, 2, 16, 2, T.DecimalType(17, 2)), (32, 4, 16, 2, T.DecimalType(33, 4)),
                 (10, 3, 10, 5, T.DecimalType(13, 5)), (38, 10, 38, 6, T.DecimalType(38, 7)),
                 (18, 9, 18, 9, T.DecimalType(19, 9))]
    for lp, ls, rp, rs, out in cases:
        lv = [None if rng.random() < 0.1 else
              str(Decimal(rng.randint(-10**7, 10**7)).scaleb(-ls)) for _ in range(200)]
        rv = [None if rng.random() < 0.1 else
              str(Decimal(rng.randint(-10**7, 10**7)).scaleb(-rs)) for _ in range(200)]
        left, right = _dec(lv, lp, ls), _dec(rv, rp, rs)
        fast = D.int64_multiply(left, right, out) if op == "*" else \
            D.int64_add_sub(op, left, right, out)
        assert fast is not None
        lu, lvalid = D.unscaled(left)
        ru, rvalid = D.unscaled(right)
        if op == "*":
            exact = D.rescale(lu * ru, ls + rs, out.scale)
        else:
            sc = max(ls, rs)
            a, b = D.rescale(lu, ls, sc), D.rescale(ru, rs, sc)
            exact = D.rescale(a + b if op == "+" else a - b, sc, out.scale)
        ref = D.from_unscaled(exact, lvalid & rvalid, out)
        assert fast.equals(ref), (lp, ls, rp, rs, out)


def test_int64_decimal_divide_matches_exact():
    """``decimals.int64_divide`` (HALF_UP, scale shifts both ways, signs, NULLs) against the
    exact Python-int path of ``Divide``."""
    rng = random.Random(2)
    cases = [(7, 2, 7, 2, T.DecimalType(18, 8)), (12, 2, 1, 0, T.DecimalType(16, 6)),
             (9, 4, 9, 0, T.DecimalType(12, 2)), (5, 5, 9, 1, T.DecimalType(38, 6)),
             (9, 0, 5, 4, T.DecimalType(20, 0))]
    hits = 0
    for lp, ls, rp, rs, out in cases:
        lv = [None if rng.random() < 0.1 else rng.randint(-10**lp + 1, 10**lp - 1)
              for _ in range(300)]
        rv = [None if rng.random() < 0.1 else
              rng.choice([rng.randint(-10**rp + 1, 10**rp - 1), 1, -1, 2, 3]) or 1
              for _ in range(300)]
        left = _dec([None if v is None else str(Decimal(v).scaleb(-ls)) for v in lv], lp, ls)
        right = _dec([None if v is None else str(Decimal(v).scaleb(-rs)) for v in rv], rp, rs)
        fast = D.int64_divide(left, right, out)
        if fast is None:
            continue
        hits += 1
        lu, lvalid = D.unscaled(left)
        ru, rvalid = D.unscaled(right)
        valid = lvalid & rvalid
        shift = out.scale + rs - ls
        num = lu * 10 ** shift if shift >= 0 else lu
        den = ru if shift >= 0 else ru * 10 ** -shift
        ref = D.from_unscaled(D.div_half_up(num, np.where(valid & (den != 0), den, 1)), valid,
                              out)
        assert fast.equals(ref), (lp, ls, rp, rs, out)
    assert hits == len(cases)
    # a quotient beyond the output precision: declined, so the exact path raises Spark's error
    assert D.int64_divide(_dec(["9.99"], 3, 2), _dec(["0.01"], 3, 2), T.DecimalType(3, 1)) is None


def test_int64_decimal_kernels_decline_overflow():
    big = _dec([10**17, 1], 18, 0)
    # the product could overflow int64: declined (the exact path decides)
    assert D.int64_multiply(big, big, T.DecimalType(37, 0)) is None
    # results beyond the output precision: declined, so the exact path raises Spark's error
    v = _dec(["9.99"], 3, 2)
    assert D.int64_multiply(v, v, T.DecimalType(3, 2)) is None
    assert D.int64_add_sub("+", v, v, T.DecimalType(3, 2)) is None
    assert D.int64_add_sub("-", v, _dec(["-9.99"], 3, 2), T.DecimalType(3, 2)) is None


def test_short_string_keys_match_general_encoding():
    from ember.execution.kernels.keys import encode_arrays

    rng = random.Random(3)
    pool = ["A", "N", "R", "", None, "\x7f", "\x00"]
    for n_cols, typ in [(1, pa.string()), (2, pa.large_string()), (2, pa.binary())]:
        cols = []
        for _ in range(n_cols):
            vals = [rng.choice(pool) for _ in range(300)]
            if typ == pa.binary():
                vals = [None if v is None else v.encode() for v in vals]
                arr = pa.array([b"zz"] * 5 + vals, typ).slice(5)
            else:
                arr = pa.array(["zz"] * 5 + vals, typ).slice(5)  # non-zero offset
            cols.append(arr)
        short = A._short_string_keys(cols)
        assert short is not None
        ids, first = A._dense_by_first(*short)
        codes, card = encode_arrays(cols, nulls_equal=True)
        ref_ids, ref_first = A._dense_by_first(codes, card)
        assert ids.tolist() == ref_ids.tolist() and first.tolist() == ref_first.tolist()
    assert A._short_string_keys([pa.array(["ab", "a"])]) is None
    assert A._short_string_keys([pa.array([1, 2])]) is None
