"""The aggregate operator's fast kernels agree with exact Python references: direct-address
group ids (first-appearance order), int64/limb decimal sums, numpy min/max (and the fallback for
NaN / -0.0), count(1) without argument columns."""

from __future__ import annotations

import decimal
import math
import random
from decimal import Decimal

import numpy as np
import pyarrow as pa
import pytest

from ember import types as T
from ember.errors import ArithmeticError_
from ember.execution import aggregate as A
from ember.execution.aggregate import execute_aggregate
from ember.execution.context import ExecContext
from ember.expressions.aggregates import kernels as K
from ember.expressions.aggregates import AggregateExpression, Count, Max, Min, Sum
from ember.expressions.base import Alias, AttributeReference, Literal
from ember.expressions.predicates import GreaterThan
from ember.plans.logical.nodes import Aggregate, LocalRelation


def relation(columns):
    attrs = tuple(AttributeReference(n, t) for n, (t, _) in columns.items())
    data = pa.table({n: pa.array(v, type=t.to_arrow()) for n, (t, v) in columns.items()})
    return LocalRelation(attrs, data), {a.name: a for a in attrs}


def run(plan, batch_size=1000):
    data = plan.child.data
    out = list(execute_aggregate(plan, iter(data.to_batches(max_chunksize=batch_size)),
                                 ExecContext()))
    t = pa.Table.from_batches(out) if out else None
    return [] if t is None else list(zip(*[c.to_pylist() for c in t.columns]))


def agg(func, filt=None):
    return AggregateExpression(func, False, filt)


@pytest.mark.parametrize("bs", [2, 1000])
def test_groups_in_order_of_first_appearance(bs):
    r, c = relation({"k": (T.LONG, [5, 3, 5, 1, None, 3, 1000]), "v": (T.INT, [1] * 7)})
    plan = Aggregate((c["k"],), (c["k"], Alias(agg(Count((Literal(1, T.INT),))), "n")), r)
    assert run(plan, bs) == [(5, 2), (3, 2), (1, 1), (None, 1), (1000, 1)]


def test_count_literal_with_filter():
    r, c = relation({"k": (T.INT, [1, 1, 2, 2, 2]), "v": (T.INT, [1, 5, 5, None, 7])})
    cond = GreaterThan(c["v"], Literal(2, T.INT))
    plan = Aggregate((c["k"],), (c["k"], Alias(agg(Count((Literal(1, T.INT),)), cond), "n"),
                                 Alias(agg(Count((Literal(None, T.INT),))), "z")), r)
    assert run(plan, 2) == [(1, 1, 0), (2, 2, 0)]


@pytest.mark.parametrize("values,dtype", [
    ([1.5, -2.0, None, 3.25, float("inf")], T.DOUBLE),
    ([1.5, -0.0, 0.0, None, 2.0], T.DOUBLE),          # -0.0: the first of equal values wins
    ([1.5, float("nan"), None, -1.0, 2.0], T.DOUBLE),  # NaN is largest
    ([3, None, -7, 2**62, -(2**62)], T.LONG),
    ([3, None, -7, 12, 1], T.INT),
])
def test_min_max_match_reference(values, dtype):
    keys = [i % 2 for i in range(len(values))] + [2]
    vals = values + [None]  # group 2 has only NULL
    r, c = relation({"g": (T.INT, keys), "v": (dtype, vals)})
    plan = Aggregate((c["g"],), (c["g"], Alias(agg(Min(c["v"])), "mn"),
                                 Alias(agg(Max(c["v"])), "mx")), r)
    got = {g: (mn, mx) for g, mn, mx in run(plan)}

    def key(x):
        return (1, 0.0) if isinstance(x, float) and math.isnan(x) else (0, x)

    for g in (0, 1, 2):
        vs = [v for k, v in zip(keys, vals) if k == g and v is not None]
        if not vs:
            assert got[g] == (None, None)
            continue
        mn = min(vs, key=key)  # min/max return the first of equal values
        mx = max(vs, key=key)
        for want, have in zip((mn, mx), got[g]):
            if isinstance(want, float) and math.isnan(want):
                assert math.isnan(have)
            else:
                assert have == want and math.copysign(1, have) == math.copysign(1, want)


@pytest.mark.parametrize("precision,scale,magnitude", [
    (18, 2, 10**9),         # int64 sums directly
    (18, 0, 10**17),        # int64 values, sums beyond int64: 32-bit halves
    (38, 0, 10**17),        # wide type, narrow values
    (38, 0, 10**30),        # four limbs
])
def test_decimal_sums_exact(precision, scale, magnitude):
    with decimal.localcontext(decimal.Context(prec=80)):
        _decimal_sums_exact(precision, scale, magnitude)


def _decimal_sums_exact(precision, scale, magnitude):
    rng = random.Random(precision * 7 + scale + magnitude % 97)
    n = 300
    units = [rng.randrange(-magnitude, magnitude) for _ in range(n)]
    units[3] = None
    keys = [rng.randrange(4) for _ in range(n)]
    q = Decimal(1).scaleb(-scale)
    vals = [None if u is None else (Decimal(u) * q) for u in units]
    r, c = relation({"g": (T.INT, keys), "d": (T.DecimalType(precision, scale), vals)})
    plan = Aggregate((c["g"],), (c["g"], Alias(agg(Sum(c["d"])), "s")), r)
    got = dict(run(plan, 64))
    for g in range(4):
        want = sum(u for k, u in zip(keys, units) if k == g and u is not None)
        assert got[g] == Decimal(want) * q
    plan1 = Aggregate((), (Alias(agg(Sum(c["d"])), "s"),), r)
    assert run(plan1)[0][0] == Decimal(sum(u for u in units if u is not None)) * q


def test_decimal_check_and_array_from_int64():
    with pytest.raises(ArithmeticError_):
        K._check_decimal(np.array([5, 10**5], dtype=np.int64), 5, "Overflow")
    K._check_decimal(np.array([99999, -99999], dtype=np.int64), 5, "Overflow")
    arr = K._decimal_array(np.array([-5, 7, 0], dtype=np.int64), np.array([False, False, True]),
                           pa.decimal128(10, 2))
    assert arr.to_pylist() == [Decimal("-0.05"), Decimal("0.07"), None]


def test_dense_by_first_paths_agree():
    rng = np.random.default_rng(1)
    codes = rng.integers(0, 50, 1000)
    a = A._dense_by_first(codes, 50)
    b = A._dense_by_first(codes)
    assert np.array_equal(a[0], b[0]) and np.array_equal(a[1], b[1])
    assert np.all(np.diff(a[1]) > 0)
