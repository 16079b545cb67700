"""``approx_count_distinct``: HyperLogLog++ as Spark's ``HyperLogLogPlusPlus``.

Each value is hashed with Spark's ``XxHash64Function`` (XXH64, seed 42: the ``xxhash64`` of
:mod:`ember.expressions.hashes`), so the registers -- and the estimate -- are Spark's.  With
``p = ceil(2 * log2(1.106 / relativeSD))`` index bits (9 for the default 0.05), a value lands in
register ``hash >>> (64 - p)`` and raises it to the number of leading zeros of
``hash << p | 1 << (p - 1)`` plus one.

The estimate is Spark's: linear counting ``m * ln(m / V)`` (V zero registers) while it is at most
the HLL++ threshold for ``p`` or the raw estimate is at most ``2.5 m``, which makes the answer
exact for small cardinalities (no two values in one register); otherwise the raw HLL estimate
``alpha * m^2 / sum(2^-M)``.  Spark also subtracts an empirical bias (tables from the HLL++ paper)
from raw estimates below ``5 m``; Ember does not carry those tables, so in that band (about
2.5 to 5 times the register count) its answer may differ from Spark's by that bias, well within
the requested relative error.

The buffer holds each group's non-zero registers only, as a list of ints ``index * 64 + value``
(Spark keeps all ``m`` registers packed six bits each into ``ceil(m / 10)`` longs, ``MS[0]``
...): a batch touches only the registers its rows set, however many groups it has.  Update and
merge keep the largest value per (group, index) with one ``np.lexsort``; the estimate sums
``2^-M`` per group with ``np.bincount`` (the zero registers add 1 each; the sum may round
differently in its last bit from Spark's register-order loop).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import field
from typing import Any, ClassVar

import numpy as np
import pyarrow as pa

from ember import types as T
from ember.errors import AnalysisError
from ember.expressions.aggregates.base import AggregateFunction, BufferField
from ember.expressions.aggregates.collect import flatten_lists
from ember.expressions.aggregates.kernels import _valid
from ember.expressions.base import Expression, Literal
from ember.expressions.hashes import xxhash64
from ember.trees import node

def _bit_length(x: np.ndarray) -> np.ndarray:
    """Bits needed for each uint64 (64 - leading zeros), by a six-step binary search."""
    n = np.zeros(len(x), dtype=np.int64)
    for shift in (32, 16, 8, 4, 2, 1):
        hi = x >> np.uint64(shift)
        up = hi != 0
        n += np.where(up, shift, 0)
        x = np.where(up, hi, x)
    return n + (x != 0)


def spark_xxhash64(arr: pa.Array, t: T.DataType) -> np.ndarray:
    """Spark's ``XxHash64Function.hash(value, t, 42)`` of each value as uint64 (NULL rows:
    arbitrary): ``xxhash64(col)`` of :mod:`ember.expressions.hashes`."""
    if isinstance(arr, pa.ChunkedArray):
        arr = arr.combine_chunks()
    return xxhash64([arr], [t]).view(np.uint64)


#: Spark's ``HyperLogLogPlusPlusHelper`` linear-counting thresholds, for p = 4 .. 18
_THRESHOLDS = (10, 20, 40, 80, 220, 400, 900, 1800, 3100, 6500, 11500, 20000, 50000, 120000,
               350000)


def register_bits(relative_sd: float) -> int:
    """``p``: the index bits Spark's HLL++ uses for ``relativeSD``."""
    return int(math.ceil(2.0 * math.log(1.106 / relative_sd) / math.log(2.0)))


@node
class ApproxCountDistinct(AggregateFunction):
    """``approx_count_distinct(x [, relativeSD])`` (Spark's ``HyperLogLogPlusPlus``): the
    estimated number of distinct non-NULL values, bigint, never NULL (0 on empty input); named
    ``approx_count_distinct(x)`` whatever ``relativeSD`` (default 0.05).  See the module
    docstring."""

    child: Expression
    relative_sd: float = 0.05
    fn_name: str | None = field(default=None, compare=False)

    default_name: ClassVar[str] = "approx_count_distinct"
    default_result: ClassVar[Any] = 0
    duplicate_agnostic: ClassVar[bool] = True

    @property
    def data_type(self) -> T.DataType:
        return T.LONG

    @property
    def nullable(self) -> bool:
        return False

    @property
    def p(self) -> int:
        return register_bits(self.relative_sd)

    @property
    def m(self) -> int:
        return 1 << self.p

    def buffer_fields(self) -> tuple[BufferField, ...] | None:
        return (BufferField("registers", T.ArrayType(T.INT, False), False),)

    def _codes(self, args: Sequence[pa.Array], g: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(group, register code) of every non-NULL row: code = index * 64 + value."""
        arr = args[0]
        p = self.p
        if pa.types.is_null(arr.type) or len(arr) == 0:
            return np.zeros(0, np.int64), np.zeros(0, np.int64)
        valid = _valid(arr)
        h = spark_xxhash64(arr, self.child.data_type)[valid]
        idx = (h >> np.uint64(64 - p)).astype(np.int64)
        w = (h << np.uint64(p)) | np.uint64(1 << (p - 1))
        pw = 65 - _bit_length(w)  # leading zeros of w (never 0) + 1
        return g[valid], idx * 64 + pw

    def _registers(self, grp: np.ndarray, codes: np.ndarray, n_groups: int) -> pa.Array:
        """Per group the set registers (the largest value of each index) as a list of codes,
        ascending."""
        order = np.lexsort((codes, grp))
        sg, sc = grp[order], codes[order]
        last = np.ones(len(order), dtype=bool)  # the largest code of each (group, index)
        last[:-1] = (sg[1:] != sg[:-1]) | ((sc[1:] >> 6) != (sc[:-1] >> 6))
        sg, sc = sg[last], sc[last]
        offsets = np.zeros(n_groups + 1, dtype=np.int64)
        np.cumsum(np.bincount(sg, minlength=n_groups), out=offsets[1:])
        return pa.LargeListArray.from_arrays(pa.array(offsets), pa.array(sc.astype(np.int32)))

    def update(self, args: Sequence[pa.Array], g: np.ndarray, n_groups: int) -> list[pa.Array]:
        return [self._registers(*self._codes(args, g), n_groups)]

    def merge(self, buffers: Sequence[pa.Array], g: np.ndarray, n_groups: int
              ) -> list[pa.Array]:
        flat, parents = flatten_lists(buffers[0])
        codes = np.asarray(flat.to_numpy(zero_copy_only=False), dtype=np.int64)
        return [self._registers(g[parents], codes, n_groups)]

    @property
    def chunk_mergeable(self) -> bool:
        return True

    def evaluate(self, buffers: Sequence[pa.Array]) -> pa.Array:
        flat, parents = flatten_lists(buffers[0])
        codes = np.asarray(flat.to_numpy(zero_copy_only=False), dtype=np.int64)
        return pa.array(self._estimate(parents, codes & 63, len(buffers[0])), type=pa.int64())

    def aggregate(self, args: Sequence[pa.Array], g: np.ndarray, n_groups: int) -> pa.Array:
        return self.evaluate(self.update(args, g, n_groups))

    def _estimate(self, grp: np.ndarray, values: np.ndarray, n_groups: int) -> np.ndarray:
        """Spark's ``HyperLogLogPlusPlusHelper.query`` (without the empirical bias term; see the
        module docstring) per group, from its set registers (``grp``, ``values``; every other
        register is 0)."""
        p, m = self.p, float(self.m)
        if p == 4:
            alpha_m2 = 0.673 * m * m
        elif p == 5:
            alpha_m2 = 0.697 * m * m
        elif p == 6:
            alpha_m2 = 0.709 * m * m
        else:
            alpha_m2 = (0.7213 / (1.0 + 1.079 / m)) * m * m
        zeros = m - np.bincount(grp, minlength=n_groups).astype(np.float64)
        z_inverse = zeros + np.bincount(grp, weights=np.ldexp(1.0, -values),
                                        minlength=n_groups)
        e = alpha_m2 / z_inverse
        with np.errstate(divide="ignore"):
            h = m * np.log(m / zeros)
        threshold = _THRESHOLDS[p - 4] if p < 19 else -1.0
        linear = (zeros > 0) & ((h <= threshold) | (e <= 2.5 * m))
        est = np.where(linear, h, e)
        return np.floor(est + 0.5).astype(np.int64)


def approx_count_distinct(args: tuple[Expression, ...]) -> ApproxCountDistinct:
    """The call ``approx_count_distinct(x [, relativeSD])``, with Spark's argument errors."""
    if len(args) == 1:
        return ApproxCountDistinct(args[0])
    rsd = args[1]
    if not (isinstance(rsd, Literal) and isinstance(rsd.data_type, (T.DoubleType, T.DecimalType,
                                                                     T.FloatType))
            and rsd.value is not None):
        raise AnalysisError("The second argument should be a double literal.",
                            error_class="_LEGACY_ERROR_TEMP_1104", parameters={})
    value = float(rsd.value)
    if not value > 0 or register_bits(value) < 4:
        raise AnalysisError(
            "Failed preparing of the function `approx_count_distinct` for call. Please, double "
            "check function's arguments.",
            error_class="FAILED_FUNCTION_CALL",
            parameters={"funcName": "`approx_count_distinct`"})
    return ApproxCountDistinct(args[0], value)
