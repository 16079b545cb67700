"""``approx_count_distinct``: HyperLogLog++ as Spark's ``HyperLogLogPlusPlus``.

Each value is hashed with Spark's ``XxHash64Function`` (XXH64, seed 42, over the value's bytes
as Spark lays them out: 4-byte ints, 8-byte longs, float/double bits with ``-0.0`` as 0 and NaN
canonical, UTF-8 strings, binary, decimals up to 18 digits as their unscaled long), so the
registers -- and the estimate -- are Spark's.  With ``p = ceil(2 * log2(1.106 / relativeSD))``
index bits (9 for the default 0.05), a value lands in register ``hash >>> (64 - p)`` and
raises it to the number of leading zeros of ``hash << p | 1 << (p - 1)`` plus one.

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
import pyarrow.compute as pc

from ember import types as T
from ember.errors import AnalysisError, UnsupportedError
from ember.expressions.aggregates.base import AggregateFunction, BufferField
from ember.expressions.aggregates.collect import flatten_lists
from ember.expressions.aggregates.kernels import _valid
from ember.expressions.base import Expression, Literal
from ember.trees import node

_P1 = np.uint64(0x9E3779B185EBCA87)
_P2 = np.uint64(0xC2B2AE3D27D4EB4F)
_P3 = np.uint64(0x165667B19E3779F9)
_P4 = np.uint64(0x85EBCA77C2B2AE63)
_P5 = np.uint64(0x27D4EB2F165667C5)
_SEED = np.uint64(42)


def _rotl(x: np.ndarray, r: int) -> np.ndarray:
    return (x << np.uint64(r)) | (x >> np.uint64(64 - r))


def _fmix(h: np.ndarray) -> np.ndarray:
    h = h ^ (h >> np.uint64(33))
    h = h * _P2
    h = h ^ (h >> np.uint64(29))
    h = h * _P3
    return h ^ (h >> np.uint64(32))


def _round(acc: np.ndarray, lane: np.ndarray) -> np.ndarray:
    acc = acc + lane * _P2
    return _rotl(acc, 31) * _P1


def xxhash64_rows(data: np.ndarray) -> np.ndarray:
    """XXH64 (seed 42, Spark's ``XxHash64.hashUnsafeBytes``) of each row of an ``(n, L)`` uint8
    matrix (every value ``L`` bytes long), as uint64."""
    n, length = data.shape
    with np.errstate(over="ignore"):
        off = 0
        if length >= 32:
            v1 = np.full(n, _SEED + _P1 + _P2, dtype=np.uint64)
            v2 = np.full(n, _SEED + _P2, dtype=np.uint64)
            v3 = np.full(n, _SEED, dtype=np.uint64)
            v4 = np.full(n, _SEED - _P1, dtype=np.uint64)
            while off <= length - 32:
                lanes = np.ascontiguousarray(data[:, off:off + 32]).view("<u8")
                v1 = _round(v1, lanes[:, 0])
                v2 = _round(v2, lanes[:, 1])
                v3 = _round(v3, lanes[:, 2])
                v4 = _round(v4, lanes[:, 3])
                off += 32
            h = _rotl(v1, 1) + _rotl(v2, 7) + _rotl(v3, 12) + _rotl(v4, 18)
            for v in (v1, v2, v3, v4):
                h = (h ^ _round(np.zeros(n, dtype=np.uint64), v)) * _P1 + _P4
        else:
            h = np.full(n, _SEED + _P5, dtype=np.uint64)
        h = h + np.uint64(length)
        while off <= length - 8:
            k = np.ascontiguousarray(data[:, off:off + 8]).view("<u8")[:, 0]
            h = h ^ _round(np.zeros(n, dtype=np.uint64), k)
            h = _rotl(h, 27) * _P1 + _P4
            off += 8
        if off <= length - 4:
            k = np.ascontiguousarray(data[:, off:off + 4]).view("<u4")[:, 0].astype(np.uint64)
            h = h ^ (k * _P1)
            h = _rotl(h, 23) * _P2 + _P3
            off += 4
        while off < length:
            h = h ^ (data[:, off].astype(np.uint64) * _P5)
            h = _rotl(h, 11) * _P1
            off += 1
        return _fmix(h)


def _bit_length(x: np.ndarray) -> np.ndarray:
    """Bits needed for each uint64 (64 - leading zeros), by a six-step binary search."""
    n = np.zeros(len(x), dtype=np.int64)
    for shift in (32, 16, 8, 4, 2, 1):
        hi = x >> np.uint64(shift)
        up = hi != 0
        n += np.where(up, shift, 0)
        x = np.where(up, hi, x)
    return n + (x != 0)


def _fixed(values: np.ndarray) -> np.ndarray:
    """XXH64 of fixed-width little-endian values (int32 -> 4 bytes, int64 -> 8 bytes)."""
    v = np.ascontiguousarray(values)
    return xxhash64_rows(v.view(np.uint8).reshape(len(v), v.dtype.itemsize))


def _var_bytes(arr: pa.Array) -> np.ndarray:
    """XXH64 of each (non-NULL) string / binary value: rows of one length hashed together."""
    arr = arr.cast(pa.large_binary()) if not pa.types.is_large_binary(arr.type) else arr
    offsets = np.frombuffer(arr.buffers()[1], dtype=np.int64)[arr.offset:arr.offset + len(arr) + 1]
    data_buf = arr.buffers()[2]
    data = np.frombuffer(data_buf, dtype=np.uint8) if data_buf is not None \
        else np.zeros(0, np.uint8)
    starts, lengths = offsets[:-1], np.diff(offsets)
    out = np.zeros(len(arr), dtype=np.uint64)
    for length in np.unique(lengths):  # one pass per distinct length, not per row
        rows = np.flatnonzero(lengths == length)
        idx = starts[rows][:, None] + np.arange(int(length))[None, :]
        out[rows] = xxhash64_rows(data[idx] if length else np.zeros((len(rows), 0), np.uint8))
    return out


def spark_xxhash64(arr: pa.Array, t: T.DataType) -> np.ndarray:
    """Spark's ``XxHash64Function.hash(value, t, 42)`` of each value (NULL rows: arbitrary)."""
    if isinstance(arr, pa.ChunkedArray):
        arr = arr.combine_chunks()
    if isinstance(t, T.BooleanType):
        return _fixed(np.asarray(pc.fill_null(arr, False).to_numpy(zero_copy_only=False),
                                 dtype=np.int32))
    if isinstance(t, (T.ByteType, T.ShortType, T.IntegerType, T.DateType,
                      T.YearMonthIntervalType)):
        if pa.types.is_date32(arr.type):
            arr = arr.view(pa.int32())
        return _fixed(np.asarray(pc.fill_null(arr.cast(pa.int32()), 0)
                                 .to_numpy(zero_copy_only=False), dtype=np.int32))
    if isinstance(t, (T.LongType, T.TimestampType, T.DayTimeIntervalType)):
        if not pa.types.is_integer(arr.type):
            arr = arr.view(pa.int64())
        return _fixed(np.asarray(pc.fill_null(arr, 0).to_numpy(zero_copy_only=False),
                                 dtype=np.int64))
    if isinstance(t, T.FloatType):
        v = np.asarray(pc.fill_null(arr, 0.0).to_numpy(zero_copy_only=False), dtype=np.float32)
        bits = np.where(np.isnan(v), np.int32(0x7FC00000), (v + np.float32(0.0)).view(np.int32))
        return _fixed(bits.astype(np.int32))
    if isinstance(t, T.DoubleType):
        v = np.asarray(pc.fill_null(arr, 0.0).to_numpy(zero_copy_only=False), dtype=np.float64)
        bits = np.where(np.isnan(v), np.int64(0x7FF8000000000000), (v + 0.0).view(np.int64))
        return _fixed(bits.astype(np.int64))
    if isinstance(t, T.DecimalType) and t.precision <= 18:
        words = np.frombuffer(arr.buffers()[1], dtype=np.int64)
        words = words[2 * arr.offset:2 * (arr.offset + len(arr))].reshape(-1, 2)[:, 0]
        return _fixed(words.copy())
    if isinstance(t, (T.StringType, T.BinaryType)):
        return _var_bytes(arr)
    raise UnsupportedError(f"approx_count_distinct over {t.simple_string()} values is not "
                           "supported yet")


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
