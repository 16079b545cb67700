"""The vectorized decimal ``avg`` (int64) equals the exact per-group path bit for bit."""

from __future__ import annotations

import numpy as np
import pytest

from ember import types as T
from ember.expressions.aggregates.kernels import (
    _decimal_average,
    _decimal_averages,
    _int64_decimal_averages,
)


@pytest.mark.parametrize("in_scale, out_type", [
    (2, T.DecimalType(19, 6)),   # avg(decimal(15,2)) as Spark types it
    (0, T.DecimalType(14, 4)),
    (4, T.DecimalType(38, 8)),
    (10, T.DecimalType(38, 14)),
])
def test_fast_average_equals_exact(in_scale, out_type):
    rng = np.random.default_rng(1)
    totals = rng.integers(-10**9, 10**9, 5000)
    totals[:5] = [0, 1, -1, 5, -5]
    cnt = rng.integers(0, 7, 5000)            # counts of 0 give NULL
    cnt[1:5] = [2, 2, 3, 3]                   # exact halves and thirds: rounding ties
    empty = cnt == 0
    fast = _int64_decimal_averages(totals, cnt, empty, in_scale, out_type)
    assert fast is not None
    exact = [_decimal_average(int(t), int(c), in_scale, out_type) if c else 0
             for t, c in zip(totals, cnt)]
    assert fast.tolist() == exact
    arr = _decimal_averages(totals, cnt, in_scale, out_type)
    assert arr.null_count == int(empty.sum())


def test_fast_average_declines_where_it_cannot_be_exact():
    cnt = np.array([1, 2])
    empty = cnt == 0
    big = np.array([2**62, 1])
    assert _int64_decimal_averages(big, cnt, empty, 2, T.DecimalType(19, 6)) is None
    # a result scale of 20 or more: Spark's double rounding may differ from one rounding
    assert _int64_decimal_averages(np.array([1, 2]), cnt, empty, 16, T.DecimalType(38, 20)) is None
    # out of the result precision: the exact path must raise Spark's error
    assert _int64_decimal_averages(np.array([10**9, 1]), cnt, empty, 0,
                                   T.DecimalType(5, 0)) is None
