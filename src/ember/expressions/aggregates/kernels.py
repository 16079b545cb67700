"""Grouped, vectorized kernels of the aggregate functions (over NumPy / Arrow, no operator state).

Every kernel takes argument columns (one value per row) and integer group ids ``g``
(``0 <= g < n_groups``, one per row) and returns one value per group; the aggregate functions of
:mod:`ember.expressions.aggregates` build their COMPLETE result and their update / merge /
evaluate steps from them.  Nothing here loops in Python per row or per group, except the exact
decimal paths over Python integers when a sum leaves 64 bits.

Exactness:

- ``sum`` of integral types checks every running prefix in input order (Spark adds row by row with
  ANSI overflow checks, so ``MAX, 1, -1`` overflows); decimals are summed exactly (int64 when the
  bound ``max|v| * rows`` allows it, else 32-bit limbs) and checked once against the result
  precision (Spark checks decimal sums only at the end).
- ``avg`` of decimals divides the exact sum by the count, rounding HALF_UP to the result scale.
- Float sums and averages accumulate sequentially in input order (``np.bincount``), as Spark does in
  one partition.
- min/max: ``np.minimum.at``/``np.maximum.at`` over integers, dates, timestamps and decimals of
  precision <= 18, pyarrow hash min/max otherwise (numpy for floats: NaN is largest, the first of
  equal values wins, so ``-0.0``/``0.0`` come out as Spark's; dense ranks for structs);
  first/last by position.

Rows per group (:func:`_counts`) are asked for by several aggregates over the same rows; inside
:func:`group_counts_scope` (one aggregation run) the counts of the last group-id array are
reused.  Nothing is cached outside such a scope, so no state outlives a query.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from decimal import Decimal

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from ember import types as T
from ember.errors import ArithmeticError_
from ember.expressions.common import to_mask


def _valid(arr: pa.Array) -> np.ndarray:
    if pa.types.is_null(arr.type):
        return np.zeros(len(arr), dtype=bool)
    if arr.null_count == 0:
        return np.ones(len(arr), dtype=bool)
    return np.asarray(arr.is_valid().to_numpy(zero_copy_only=False), dtype=bool)


def _valid_or_none(arr: pa.Array) -> np.ndarray | None:
    """The validity mask of ``arr``, or None when every value is valid (callers then skip
    boolean indexing, which copies)."""
    if not pa.types.is_null(arr.type) and arr.null_count == 0:
        return None
    return _valid(arr)


def _sel(x: np.ndarray, valid: np.ndarray | None) -> np.ndarray:
    return x if valid is None else x[valid]


def _take_or_null(values: pa.Array, positions: np.ndarray) -> pa.Array:
    """``values[positions]`` with NULL where ``positions < 0``."""
    missing = positions < 0
    idx = pa.array(np.where(missing, 0, positions), type=pa.int64(),
                   mask=missing if missing.any() else None)
    if len(values) == 0:
        return pa.nulls(len(positions), type=values.type)
    return values.take(idx)



def _integer_values(arr: pa.Array) -> tuple[np.ndarray, np.ndarray | None] | None:
    """``(int64 values, validity mask or None)`` of an integer-like column (integers, dates,
    times, timestamps, durations; NULL slots hold an arbitrary valid value), or None for other
    types."""
    t = arr.type
    if isinstance(arr, pa.ChunkedArray):
        arr = arr.combine_chunks()
    if pa.types.is_integer(t):
        pass
    elif pa.types.is_date32(t) or pa.types.is_time32(t):
        arr = arr.view(pa.int32())
    elif (pa.types.is_date64(t) or pa.types.is_time64(t) or pa.types.is_timestamp(t)
          or pa.types.is_duration(t)):
        arr = arr.view(pa.int64())
    else:
        return None
    n = len(arr)
    if n == 0 or arr.null_count == n:
        return None
    if pa.types.is_uint64(arr.type):
        return None  # values above int64 would wrap
    valid = None
    if arr.null_count:
        valid = _valid(arr)
        fill = pc.min(arr).as_py()
        arr = pc.fill_null(arr, fill)
    v = arr.to_numpy(zero_copy_only=False).astype(np.int64, copy=False)
    return v, valid



def _hash_groupable(t: pa.DataType) -> bool:
    return not (pa.types.is_nested(t) or pa.types.is_null(t) or pa.types.is_dictionary(t))



def _count_non_null(args: Sequence[pa.Array], g: np.ndarray, n_groups: int) -> np.ndarray:
    """Rows per group where no column of ``args`` is NULL (``count(a, b)``)."""
    valid = None
    for a in args:
        va = _valid_or_none(a)
        if va is not None:
            valid = va if valid is None else valid & va
    return _counts(_sel(g, valid), n_groups)


def _true_mask(arr: pa.Array) -> np.ndarray:
    if pa.types.is_null(arr.type):
        return np.zeros(len(arr), dtype=bool)
    return to_mask(arr)


#: ``[g, n_groups, counts]`` of the last full-input count in the current aggregation run (see
#: :func:`group_counts_scope`); None outside a run.  A context variable: partitions aggregate on
#: several threads, each in its own scope.
_LAST_COUNTS: ContextVar[list | None] = ContextVar("ember_group_counts", default=None)


@contextmanager
def group_counts_scope() -> Iterator[None]:
    """Within this scope (one aggregation run over fixed group ids), :func:`_counts` remembers
    the counts of the last group-id array, which several aggregates over the same rows ask for;
    the memory ends with the scope."""
    token = _LAST_COUNTS.set([])
    try:
        yield
    finally:
        _LAST_COUNTS.reset(token)


def _counts(g: np.ndarray, n_groups: int) -> np.ndarray:
    """Rows per group.  Inside :func:`group_counts_scope` the counts of the last large ``g`` are
    remembered, as several aggregates over the same rows ask for the same counts."""
    last = _LAST_COUNTS.get()
    if last and last[0] is g and last[1] == n_groups:
        return last[2]
    out = np.bincount(g, minlength=n_groups)
    if last is not None and len(g) >= 1 << 16:
        last[:] = [g, n_groups, out]
    return out


SUM_OVERFLOW = ("Overflow in sum of decimals. Use 'try_sum' to tolerate overflow and return "
                "NULL instead.")
AVG_OVERFLOW = ("Overflow in sum of decimals. Use 'try_avg' to tolerate overflow and return "
                "NULL instead.")


def _overflow(message: str) -> ArithmeticError_:
    return ArithmeticError_(
        message + ' If necessary set "spark.sql.ansi.enabled" to "false" to bypass this error.',
        error_class="ARITHMETIC_OVERFLOW",
        parameters={"message": message.split(".")[0], "alternative": "",
                    "config": '"spark.sql.ansi.enabled"'},
    )


def _sum(arr: pa.Array, g: np.ndarray, n_groups: int, out_type: T.DataType,
         ansi: bool = True) -> pa.Array:
    """Per-group ``sum``; ``ansi=False`` is Spark's legacy sum: integral sums wrap, a decimal
    sum out of the result precision is NULL."""
    at = out_type.to_arrow()
    if pa.types.is_null(arr.type):
        return pa.nulls(n_groups, type=at)
    valid = _valid_or_none(arr)
    gv = _sel(g, valid)
    cnt = _counts(gv, n_groups)
    empty = cnt == 0
    t = arr.type
    if pa.types.is_decimal(t):
        totals = _decimal_sums(arr, valid, gv, n_groups)
        if not ansi:
            return _decimal_array(*_null_overflow(totals, empty, out_type.precision), at)
        _check_decimal(totals, out_type.precision, SUM_OVERFLOW)
        return _decimal_array(totals, empty, at)
    if pa.types.is_integer(t):
        v = arr.to_numpy(zero_copy_only=False) if arr.null_count == 0 else \
            pc.fill_null(arr, 0).to_numpy(zero_copy_only=False)
        v = _sel(v.astype(np.int64, copy=False), valid)
        sums = _int_sums(v, gv, n_groups) if ansi else _group_add(v, gv, n_groups)
        return pa.array(sums, type=at, mask=empty if empty.any() else None)
    v = _sel(_float_values(arr), valid)
    sums = np.bincount(gv, weights=v, minlength=n_groups)
    return pa.array(sums, type=at, mask=empty if empty.any() else None)


def _float_values(arr: pa.Array) -> np.ndarray:
    a = arr if pa.types.is_float64(arr.type) else arr.cast(pa.float64(), safe=False)
    if a.null_count:
        a = pc.fill_null(a, 0.0)
    return a.to_numpy(zero_copy_only=False)


_I64_MAX = (1 << 63) - 1


def _int_sums(v: np.ndarray, g: np.ndarray, n_groups: int) -> np.ndarray:
    """Per-group int64 sums, raising ARITHMETIC_OVERFLOW when any running sum (in row order)
    leaves the int64 range, as Spark's ANSI ``sum`` does."""
    out, overflowed = running_int_sums(v, g, n_groups)
    if overflowed.any():
        raise _overflow("overflow. Use 'try_add' to tolerate overflow and return NULL instead.")
    return out


def running_int_sums(v: np.ndarray, g: np.ndarray, n_groups: int
                     ) -> tuple[np.ndarray, np.ndarray]:
    """Per-group int64 sums and, per group, whether a running sum (in row order) left the
    int64 range (that group's sum is then meaningless)."""
    out = np.zeros(n_groups, dtype=np.int64)
    overflowed = np.zeros(n_groups, dtype=bool)
    if len(v) == 0:
        return out, overflowed
    bound = max(abs(int(v.max())), abs(int(v.min())))
    if bound * len(v) <= _I64_MAX:  # no running sum can leave the int64 range
        return _group_add(v, g, n_groups), overflowed
    # Exact running sums: split values into signed high and unsigned low 32-bit halves.
    order = np.argsort(g, kind="stable")
    gs, vs = g[order], v[order]
    hi = vs >> 32
    lo = vs & 0xFFFFFFFF
    c_hi = np.cumsum(hi)
    c_lo = np.cumsum(lo)
    starts = np.flatnonzero(np.r_[True, gs[1:] != gs[:-1]])
    seg = np.cumsum(np.r_[False, gs[1:] != gs[:-1]])
    base_hi = np.where(starts > 0, c_hi[starts - 1], 0)[seg]
    base_lo = np.where(starts > 0, c_lo[starts - 1], 0)[seg]
    p_hi = c_hi - base_hi
    p_lo = c_lo - base_lo
    p_hi = p_hi + (p_lo >> 32)
    p_lo = p_lo & 0xFFFFFFFF
    bad = (p_hi < -(1 << 31)) | (p_hi > (1 << 31) - 1)
    overflowed[gs[bad]] = True
    ends = np.r_[starts[1:] - 1, len(gs) - 1]
    totals = (p_hi[ends] << 32) + p_lo[ends]
    out[gs[starts]] = totals
    return out, overflowed


def _decimal_words(arr: pa.Array) -> np.ndarray:
    """The unscaled values of a decimal array as ``(n, 2)`` int64 words (low, high), a
    zero-copy view of the decimal128 data buffer."""
    if not pa.types.is_decimal128(arr.type):
        arr = arr.cast(pa.decimal128(38, arr.type.scale))
    buf = arr.buffers()[1]
    words = np.frombuffer(buf, dtype=np.int64, count=2 * (arr.offset + len(arr)))
    return words[2 * arr.offset:].reshape(-1, 2)


def _group_add(v: np.ndarray, g: np.ndarray, n_groups: int) -> np.ndarray:
    """Per-group int64 sums of ``v`` (the caller guarantees they cannot overflow)."""
    if n_groups == 1:
        return np.array([v.sum(dtype=np.int64)], dtype=np.int64)
    out = np.zeros(n_groups, dtype=np.int64)
    np.add.at(out, g, v)
    return out


def _decimal_sums(arr: pa.Array, valid: np.ndarray | None, gv: np.ndarray,
                  n_groups: int) -> np.ndarray | list[int]:
    """Exact per-group sums of the unscaled values: an int64 array when every value fits in
    64 bits and every sum provably fits too, else Python ints (one per group).

    Values that fit in int64 (always so for precision <= 18) are summed directly when
    ``max|v| * rows`` fits in int64, else as signed-high/unsigned-low 32-bit halves; wider values
    as four 32-bit limbs (low to high, the top one signed).  Limb sums are exact below 2**31 rows.
    """
    if len(gv) == 0:
        return np.zeros(n_groups, dtype=np.int64)
    words = _decimal_words(arr)
    lo = _sel(words[:, 0], valid)
    narrow = arr.type.precision <= 18 or np.array_equal(_sel(words[:, 1], valid), lo >> 63)
    if narrow:
        bound = max(abs(int(lo.max())), abs(int(lo.min())))
        if bound * len(lo) <= _I64_MAX:
            return _group_add(lo, gv, n_groups)
        s_lo = _group_add(lo & 0xFFFFFFFF, gv, n_groups)
        s_hi = _group_add(lo >> 32, gv, n_groups)
        approx = s_hi.astype(np.float64) * 2.0 ** 32 + s_lo.astype(np.float64)
        if np.abs(approx).max() < 2.0 ** 62:  # the exact total fits: combine in int64
            return (s_hi << 32) + s_lo
        return [(h << 32) + lw for h, lw in zip(s_hi.tolist(), s_lo.tolist())]
    hi = _sel(words[:, 1], valid)
    limbs = [lo & 0xFFFFFFFF, (lo >> 32) & 0xFFFFFFFF, hi & 0xFFFFFFFF, hi >> 32]
    sums = [_group_add(limb, gv, n_groups).tolist() for limb in limbs]
    return [
        (s3 << 96) + (s2 << 64) + (s1 << 32) + s0
        for s0, s1, s2, s3 in zip(*sums)
    ]


def out_of_precision(totals: np.ndarray | list[int], precision: int) -> np.ndarray:
    """Which unscaled totals have more than ``precision`` digits (int64 totals never have more
    than 18 + 1)."""
    limit = 10 ** precision
    if isinstance(totals, np.ndarray):
        if precision > 18:
            return np.zeros(len(totals), dtype=bool)
        return (totals >= limit) | (totals <= -limit)
    return np.array([t >= limit or t <= -limit for t in totals], dtype=bool)


def _null_overflow(totals: np.ndarray | list[int], null: np.ndarray, precision: int
                   ) -> tuple[np.ndarray | list[int], np.ndarray]:
    """Legacy (non-ANSI) decimal sums: totals out of ``precision`` become NULL (and 0)."""
    over = out_of_precision(totals, precision)
    if not over.any():
        return totals, null
    return _zero_where(totals, over), null | over


def _check_decimal(values: np.ndarray | list[int], precision: int, message: str) -> None:
    limit = 10 ** precision
    if isinstance(values, np.ndarray):
        if precision <= 18 and len(values) and (
                int(values.max()) >= limit or int(values.min()) <= -limit):
            raise _overflow(message)
        return
    for v in values:
        if v >= limit or v <= -limit:
            raise _overflow(message)


def _decimal_array(unscaled: np.ndarray | list[int], null: np.ndarray,
                   at: pa.DataType) -> pa.Array:
    """A decimal128 array from unscaled values (NULL where ``null``): an int64 array (written
    as sign-extended 128-bit words) or Python ints."""
    n = len(unscaled)
    validity = None
    if null.any():
        validity = pa.array(~null).buffers()[1]
    if isinstance(unscaled, np.ndarray) and pa.types.is_decimal128(at):
        t = (np.where(null, 0, unscaled) if validity is not None else
             unscaled).astype(np.int64, copy=False)
        words = np.empty((n, 2), dtype=np.int64)
        words[:, 0] = t
        words[:, 1] = t >> 63
        return pa.Array.from_buffers(at, n, [validity, pa.py_buffer(words)])
    if isinstance(unscaled, np.ndarray):
        unscaled = unscaled.tolist()
    data = b"".join(
        (0 if isnull else v).to_bytes(16, "little", signed=True)
        for v, isnull in zip(unscaled, null.tolist())
    )
    return pa.Array.from_buffers(at, n, [validity, pa.py_buffer(data)])


def _avg(arr: pa.Array, g: np.ndarray, n_groups: int, out_type: T.DataType,
         sum_type: T.DataType, ansi: bool = True) -> pa.Array:
    """Per-group ``avg`` (``sum_type``: the type of its running sum, Spark's ``sumDataType``);
    ``ansi=False``: a decimal sum or average out of range is NULL."""
    at = out_type.to_arrow()
    if pa.types.is_null(arr.type):
        return pa.nulls(n_groups, type=at)
    valid = _valid_or_none(arr)
    gv = _sel(g, valid)
    cnt = _counts(gv, n_groups)
    if pa.types.is_decimal(arr.type):
        in_scale = arr.type.scale
        totals = _decimal_sums(arr, valid, gv, n_groups)
        if not ansi:
            totals, over = _null_overflow(totals, np.zeros(n_groups, bool), sum_type.precision)
            return _decimal_averages(totals, np.where(over, 0, cnt), in_scale, out_type, ansi)
        _check_decimal(totals, sum_type.precision, AVG_OVERFLOW)
        return _decimal_averages(totals, cnt, in_scale, out_type)
    v = _sel(_float_values(arr), valid)
    sums = np.bincount(gv, weights=v, minlength=n_groups)
    return _float_averages(sums, cnt, at)


def _float_averages(sums: np.ndarray, cnt: np.ndarray, at: pa.DataType) -> pa.Array:
    """``sums / cnt`` per group; NULL where the count is 0."""
    empty = cnt == 0
    with np.errstate(invalid="ignore", divide="ignore"):
        res = sums / np.where(empty, 1, cnt)
    return pa.array(res, type=at, mask=empty if empty.any() else None)


def _decimal_averages(totals: np.ndarray | list[int], cnt: np.ndarray, in_scale: int,
                      out_type: T.DecimalType, ansi: bool = True) -> pa.Array:
    """Decimal ``avg`` per group from unscaled sums at ``in_scale`` and counts; NULL where the
    count is 0 (see :func:`_decimal_average`).  Vectorized when the totals are an int64 array
    and the quotient at the result scale fits int64 (:func:`_int64_decimal_averages`); exact
    Python integers otherwise."""
    empty = cnt == 0
    if isinstance(totals, np.ndarray):
        fast = _int64_decimal_averages(totals, cnt, empty, in_scale, out_type)
        if fast is not None:
            return _decimal_array(fast, empty, out_type.to_arrow())
        totals = totals.tolist()
    out = [_decimal_average(t, c, in_scale, out_type, ansi) if c else 0
           for t, c in zip(totals, cnt.tolist())]
    if not ansi:  # legacy: an average out of range is NULL
        over = np.array([v is None for v in out], dtype=bool)
        if over.any():
            out, empty = [0 if v is None else v for v in out], empty | over
    return _decimal_array(out, empty, out_type.to_arrow())


def _int64_decimal_averages(totals: np.ndarray, cnt: np.ndarray, empty: np.ndarray,
                            in_scale: int, out_type: T.DecimalType) -> np.ndarray | None:
    """``round_half_up(total * 10**(out_scale - in_scale) / cnt)`` in int64, or None when that
    is not provably what :func:`_decimal_average` gives.

    Spark rounds twice (HALF_UP at scale 39, then at the result scale).  The two roundings agree
    with one HALF_UP at the result scale unless the exact fraction lies within ``10**-(39 -
    out_scale)`` below one half, which needs a count above ``10**(39 - out_scale)``: impossible
    for an int64 count when the result scale is below 20.  Results out of the result precision
    return None so the exact path raises Spark's error."""
    shift = out_type.scale - in_scale
    if not 0 <= shift <= 18 or out_type.scale >= 20 or not len(totals):
        return None
    factor = 10 ** shift
    mag = np.abs(totals)
    if int(mag.max()) >= (2 ** 62) // factor:
        return None
    c = np.where(empty, 1, cnt).astype(np.int64, copy=False)
    x = mag * factor
    q = x // c
    q += (2 * (x - q * c) >= c)
    if out_type.precision <= 18 and int(q.max()) >= 10 ** out_type.precision:
        return None
    return np.where(empty, 0, np.where(totals < 0, -q, q))


_DIV_SCALE = T.DecimalType.MAX_SCALE + 1


def _decimal_average(total: int, count: int, in_scale: int, out_type: T.DecimalType,
                     ansi: bool = True) -> int | None:
    """Unscaled ``total / count`` as Spark computes a decimal ``avg``: the quotient at scale 39
    (``Decimal./``, HALF_UP), then rounded HALF_UP to the result scale; out of range raises
    ``NUMERIC_VALUE_OUT_OF_RANGE`` (is None with ``ansi=False``)."""
    q, r = divmod(abs(total) * 10 ** (_DIV_SCALE - in_scale), count)
    if 2 * r >= count:
        q += 1
    unit = 10 ** (_DIV_SCALE - out_type.scale)
    q2, r2 = divmod(q, unit)
    if 2 * r2 >= unit:
        q2 += 1
    if q2 >= 10 ** out_type.precision and not ansi:
        return None
    if q2 >= 10 ** out_type.precision:
        text = str(q).rjust(_DIV_SCALE + 1, "0")
        text = ("-" if total < 0 else "") + text[:-_DIV_SCALE] + "." + text[-_DIV_SCALE:]
        p, sc = out_type.precision, out_type.scale
        raise ArithmeticError_(
            f"{text} cannot be represented as Decimal({p}, {sc}). If necessary set "
            '"spark.sql.ansi.enabled" to "false" to bypass this error, and return NULL instead.',
            error_class="NUMERIC_VALUE_OUT_OF_RANGE.WITH_SUGGESTION",
            parameters={"value": text, "precision": str(p), "scale": str(sc),
                        "config": '"spark.sql.ansi.enabled"'},
        )
    return -q2 if total < 0 else q2


def _ranks(arr: pa.Array) -> np.ndarray:
    """Dense ascending ranks of the values (NULLs get arbitrary ranks: callers skip them).
    Floating NaN ranks above every number and ``-0.0`` ties with ``0.0``, as in Spark."""
    t = arr.type
    if pa.types.is_floating(t):
        v = arr.to_numpy(zero_copy_only=False).astype(np.float64)  # NULL -> NaN (skipped)
        nan = np.isnan(v)
        _, dense = np.unique(np.where(nan, 0.0, v) + 0.0, return_inverse=True)
        dense = dense.reshape(-1).astype(np.int64)
        if nan.any():
            dense = np.where(nan, int(dense.max()) + 1, dense)
        return dense
    if pa.types.is_boolean(t):
        return np.asarray(pc.fill_null(arr, False).to_numpy(zero_copy_only=False), dtype=np.int64)
    if pa.types.is_struct(t):
        return _struct_ranks(arr)
    if pa.types.is_large_list(t) or pa.types.is_list(t):
        return list_order_ranks(arr)
    r = pc.rank(arr, sort_keys="ascending", tiebreaker="dense")
    return r.to_numpy(zero_copy_only=False).astype(np.int64)


def _flatten_for_order(arr: pa.Array, out: list[pa.Array]) -> None:
    """Columns whose lexicographic order (NULLs first) is Spark's struct order."""
    if pa.types.is_struct(arr.type):
        out.append(pa.array(_valid(arr).astype(np.int8)))
        for i in range(arr.type.num_fields):
            f = arr.field(i)
            if arr.null_count:
                f = pc.if_else(arr.is_valid(), f, pa.nulls(len(f), type=f.type))
            _flatten_for_order(f, out)
    else:
        out.append(arr)


def _struct_ranks(arr: pa.Array) -> np.ndarray:
    """Dense ranks of struct values: ordered by their flattened columns (NULLs first), equal
    where every column is (NULL equal to NULL; floats by :func:`_ranks`, so every NaN is equal
    and above every number, and ``-0.0`` is ``0.0``, as Spark's struct ordering)."""
    cols: list[pa.Array] = []
    _flatten_for_order(arr, cols)
    n = len(arr)
    keys = []
    for c in cols:
        if pa.types.is_null(c.type):
            continue  # every value NULL: splits no tie
        code = _ranks(c) + 1
        keys.append(np.where(_valid(c), code, 0) if c.null_count else code)
    if not keys or not n:
        return np.zeros(n, dtype=np.int64)
    perm = np.lexsort(keys[::-1])
    step = np.zeros(n - 1, dtype=bool)
    for k in keys:
        sk = k[perm]
        step |= sk[1:] != sk[:-1]
    ranks = np.empty(n, dtype=np.int64)
    ranks[perm] = np.cumsum(np.r_[0, step.astype(np.int64)])
    return ranks


def list_order_ranks(arr: pa.Array) -> np.ndarray:
    """Dense ranks of array values in Spark's array order: element by element (a NULL element
    first, elements by :func:`_ranks`), a list that is a prefix of another first.  The lists
    are laid out as a (rows x longest list) matrix of element codes, 0 past a list's end."""
    n = len(arr)
    if not n:
        return np.zeros(0, dtype=np.int64)
    lengths = np.asarray(pc.fill_null(pc.list_value_length(arr), 0)
                         .to_numpy(zero_copy_only=False), dtype=np.int64)
    width = int(lengths.max())
    if not width:
        return np.zeros(n, dtype=np.int64)
    values = pc.list_flatten(arr)  # the non-NULL lists' elements, in row order
    codes = np.zeros(len(values), dtype=np.int64) if pa.types.is_null(values.type) else \
        _ranks(values) + 2
    if values.null_count:
        codes = np.where(_valid(values), codes, 1)
    rows = np.repeat(np.arange(n), lengths)
    starts = np.cumsum(lengths) - lengths
    matrix = np.zeros((n, width), dtype=np.int64)
    matrix[rows, np.arange(len(rows)) - starts[rows]] = codes
    perm = np.lexsort(matrix.T[::-1])
    sm = matrix[perm]
    step = (sm[1:] != sm[:-1]).any(axis=1)
    ranks = np.empty(n, dtype=np.int64)
    ranks[perm] = np.cumsum(np.r_[0, step.astype(np.int64)])
    return ranks


def _first_pos(g: np.ndarray, rows: np.ndarray, n_groups: int) -> np.ndarray:
    """Per group, the smallest of ``rows`` (grouped by ``g``), -1 for groups without rows."""
    pos = np.full(n_groups, np.iinfo(np.int64).max, dtype=np.int64)
    np.minimum.at(pos, g, rows)
    pos[pos == np.iinfo(np.int64).max] = -1
    return pos


def _last_pos(g: np.ndarray, rows: np.ndarray, n_groups: int) -> np.ndarray:
    """Per group, the largest of ``rows`` (grouped by ``g``), -1 for groups without rows."""
    pos = np.full(n_groups, -1, dtype=np.int64)
    np.maximum.at(pos, g, rows)
    return pos


def _min_max(arr: pa.Array, g: np.ndarray, n_groups: int, *, largest: bool) -> pa.Array:
    """Per group, the extreme value; for floats the first row holding it (Spark keeps the first
    of equal values, which tells ``-0.0`` from ``0.0``) with NaN above every number."""
    t = arr.type
    if pa.types.is_null(t):
        return pa.nulls(n_groups, type=t)
    fast = _numeric_extreme(arr, g, n_groups, largest)
    if fast is not None:
        return fast
    valid = _valid(arr)
    if pa.types.is_floating(t):
        return _take_or_null(arr, _float_extreme_pos(arr, valid, g, n_groups, largest))
    rows = np.flatnonzero(valid)
    if _hash_groupable(t):
        # pyarrow's hash_min/hash_max: equal values are identical here, so any row will do.
        fn = "max" if largest else "min"
        table = pa.table({"g": pa.array(g[rows]), "v": arr.take(pa.array(rows))})
        res = table.group_by(["g"], use_threads=False).aggregate([("v", fn)])
        slot = np.full(n_groups, -1, dtype=np.int64)
        slot[res.column("g").to_numpy(zero_copy_only=False)] = np.arange(res.num_rows)
        return _take_or_null(res.column(f"v_{fn}").combine_chunks(), slot)
    pos = np.full(n_groups, -1, dtype=np.int64)
    if len(rows):
        gv = g[rows]
        hit = _holds_group_extreme(_ranks(arr)[rows], gv, n_groups, largest=largest)
        pos = _first_pos(gv[hit], rows[hit], n_groups)
    return _take_or_null(arr, pos)


def _numeric_extreme(arr: pa.Array, g: np.ndarray, n_groups: int,
                     largest: bool) -> pa.Array | None:
    """min/max of integers, and of floats without NaN or ``-0.0`` (where equal values are
    identical, so which row holds the extreme does not matter), by ``np.minimum.at`` /
    ``np.maximum.at``; None for other inputs (the general paths handle them)."""
    t = arr.type
    is_float = pa.types.is_floating(t) and not pa.types.is_float16(t)
    if not (pa.types.is_integer(t) or is_float):
        return _integer_like_extreme(arr, g, n_groups, largest)
    valid = _valid_or_none(arr)
    v = (arr if valid is None else pc.fill_null(arr, 0)).to_numpy(zero_copy_only=False)
    v, gv = _sel(v, valid), _sel(g, valid)
    if is_float:
        if np.isnan(v).any() or np.signbit(v[v == 0]).any():
            return None
        init = -np.inf if largest else np.inf
    else:
        info = np.iinfo(v.dtype)
        init = info.min if largest else info.max
    ext = np.full(n_groups, init, dtype=v.dtype)
    (np.maximum if largest else np.minimum).at(ext, gv, v)
    empty = _counts(gv, n_groups) == 0
    return pa.array(ext, type=t, mask=empty if empty.any() else None)


def _integer_like_extreme(arr: pa.Array, g: np.ndarray, n_groups: int,
                          largest: bool) -> pa.Array | None:
    """min/max of dates, times, timestamps, durations (their int64 view) and decimals whose
    unscaled values fit int64 (precision <= 18): equal values are identical, so
    ``np.minimum.at`` / ``np.maximum.at`` over the integers; None for other types."""
    t = arr.type
    if pa.types.is_decimal128(t) and t.precision <= 18:
        valid = _valid_or_none(arr)
        v = _decimal_words(arr)[:, 0]
    else:
        got = _integer_values(arr)
        if got is None:
            return None
        v, valid = got
    v, gv = _sel(v, valid), _sel(g, valid)
    info = np.iinfo(np.int64)
    ext = np.full(n_groups, info.min if largest else info.max, dtype=np.int64)
    (np.maximum if largest else np.minimum).at(ext, gv, v)
    empty = _counts(gv, n_groups) == 0
    if pa.types.is_decimal(t):
        return _decimal_array(ext, empty, t)
    # Rebuild the array in its own type from the integer values.
    width = pa.int32() if t.bit_width == 32 else pa.int64()
    ints = pa.array(ext.astype(width.to_pandas_dtype(), copy=False), type=width,
                    mask=empty if empty.any() else None)
    return ints.view(t)


def _float_extreme_pos(arr: pa.Array, valid: np.ndarray, g: np.ndarray, n_groups: int,
                       largest: bool) -> np.ndarray:
    v = arr.to_numpy(zero_copy_only=False).astype(np.float64, copy=False)
    nan = np.isnan(v) & valid
    num = valid & ~nan
    has_nan = np.bincount(g[nan], minlength=n_groups) > 0
    if largest:
        ext = np.full(n_groups, -np.inf)
        np.maximum.at(ext, g[num], v[num])
        hit = (nan & has_nan[g]) | (num & ~has_nan[g] & (v == ext[g]))
    else:
        ext = np.full(n_groups, np.inf)
        np.minimum.at(ext, g[num], v[num])
        only_nan = has_nan & (np.bincount(g[num], minlength=n_groups) == 0)
        hit = (num & (v == ext[g])) | (nan & only_nan[g])
    return _first_pos(g[hit], np.flatnonzero(hit), n_groups)


def _first_last(arr: pa.Array, g: np.ndarray, n_groups: int, ignore_nulls: bool, *,
                last: bool) -> pa.Array:
    return _take_or_null(arr, _first_last_positions(arr, None, ignore_nulls, g, n_groups,
                                                    last=last))


def _bool(arr: pa.Array, g: np.ndarray, n_groups: int, *, conj: bool) -> pa.Array:
    valid = _valid(arr)
    cnt = _counts(g[valid], n_groups)
    vals = _true_mask(arr)
    if conj:
        any_false = np.bincount(g[valid & ~vals], minlength=n_groups) > 0
        res = ~any_false
    else:
        res = np.bincount(g[valid & vals], minlength=n_groups) > 0
    empty = cnt == 0
    return pa.array(res, type=pa.bool_(), mask=empty if empty.any() else None)


def _holds_group_extreme(ranks: np.ndarray, gv: np.ndarray, n_groups: int, *,
                         largest: bool) -> np.ndarray:
    """Mask of the rows whose rank is their group's maximum (``largest``) or minimum."""
    if largest:
        ext = np.full(n_groups, np.iinfo(np.int64).min, dtype=np.int64)
        np.maximum.at(ext, gv, ranks)
    else:
        ext = np.full(n_groups, np.iinfo(np.int64).max, dtype=np.int64)
        np.minimum.at(ext, gv, ranks)
    return ranks == ext[gv]


def _by(value: pa.Array, ordering: pa.Array, g: np.ndarray, n_groups: int, *,
        largest: bool) -> pa.Array:
    """``max_by``/``min_by``: the value at the last row holding the extreme ordering."""
    return _take_or_null(value, by_positions(ordering, g, n_groups, largest=largest))


def by_positions(ordering: pa.Array, g: np.ndarray, n_groups: int, *,
                 largest: bool) -> np.ndarray:
    """Per group, the last row holding the largest (smallest) non-NULL ``ordering``; -1 for
    groups without one (shared with the max_by/min_by buffers)."""
    rows = np.flatnonzero(_valid(ordering))
    pos = np.full(n_groups, -1, dtype=np.int64)
    if len(rows):
        gv = g[rows]
        hit = _holds_group_extreme(_ranks(ordering)[rows], gv, n_groups, largest=largest)
        hg, hrows = gv[hit], rows[hit]
        ug, idx = np.unique(hg[::-1], return_index=True)
        pos[ug] = hrows[::-1][idx]
    return pos


# ---------------------------------------------------------------------------------------------
# Buffer helpers (the update / merge / evaluate steps of the aggregates' buffers)


def _count_array(c: np.ndarray) -> pa.Array:
    return pa.array(c.astype(np.int64, copy=False), type=pa.int64())


def _merge_counts(counts: pa.Array, g: np.ndarray, n_groups: int) -> pa.Array:
    """Per-group sums of count buffers."""
    c = counts.to_numpy(zero_copy_only=False).astype(np.int64, copy=False)
    return _count_array(_group_add(c, g, n_groups) if len(c) else
                        np.zeros(n_groups, dtype=np.int64))


def _nonnull_counts(arr: pa.Array, gids: np.ndarray, n_groups: int) -> np.ndarray:
    if pa.types.is_null(arr.type):
        return np.zeros(n_groups, dtype=np.int64)
    return _counts(_sel(gids, _valid_or_none(arr)), n_groups)


def _float_sum_buffer(values: pa.Array, gids: np.ndarray, n_groups: int) -> pa.Array:
    """Per-group double sums of the non-NULL ``values``, in row order (0 for no rows)."""
    if pa.types.is_null(values.type) or len(gids) == 0:
        sums = np.zeros(n_groups)
    else:
        valid = _valid_or_none(values)
        sums = np.bincount(_sel(gids, valid), weights=_sel(_float_values(values), valid),
                           minlength=n_groups)
    return pa.array(sums, type=pa.float64())


def _decimal_sum_buffers(arr: pa.Array, gids: np.ndarray, n_groups: int, st: T.DecimalType,
                         overflowed: np.ndarray | None) -> list[pa.Array]:
    """``[sum, isEmpty]`` of the non-NULL values of a decimal column (or of decimal sum buffers,
    ``overflowed`` marking groups where some input buffer had overflowed).  A sum outside
    ``st``'s precision is NULL with isEmpty false: Spark's overflow marker."""
    at = st.to_arrow()
    if pa.types.is_null(arr.type):
        return [_decimal_array(np.zeros(n_groups, dtype=np.int64), np.zeros(n_groups, bool), at),
                pa.array(np.ones(n_groups, dtype=bool))]
    valid = _valid_or_none(arr)
    gv = _sel(gids, valid)
    empty = _counts(gv, n_groups) == 0
    totals = _decimal_sums(arr, valid, gv, n_groups)
    over = out_of_precision(totals, st.precision)
    if overflowed is not None:
        over = over | overflowed
    return [_decimal_array(totals if not over.any() else _zero_where(totals, over), over, at),
            pa.array(empty)]


def _identity_decimal_sum(arr: pa.Array, st: T.DataType) -> tuple[pa.Array, np.ndarray] | None:
    """The decimal sum buffer of one row per group (the values themselves at ``st``, NULL as 0)
    and the rows' validity; None unless ``arr`` is a decimal that fits ``st`` at its scale."""
    t = arr.type
    if not (isinstance(st, T.DecimalType) and pa.types.is_decimal128(t)
            and t.scale == st.scale and t.precision <= st.precision):
        return None
    valid = _valid(arr)
    total = arr.cast(st.to_arrow())
    if arr.null_count:
        total = pc.fill_null(total, pa.scalar(Decimal(0), type=st.to_arrow()))
    return total, valid


def _zero_where(totals: np.ndarray | list[int], m: np.ndarray) -> np.ndarray | list[int]:
    if isinstance(totals, np.ndarray):
        return np.where(m, 0, totals)
    return [0 if x else t for t, x in zip(totals, m.tolist())]


def _bool_np(arr: pa.Array) -> np.ndarray:
    return np.asarray(pc.fill_null(arr, False).to_numpy(zero_copy_only=False), dtype=bool)


def _merge_decimal_sums(sums: pa.Array, is_empty: np.ndarray, gids: np.ndarray, n_groups: int,
                        st: T.DecimalType) -> list[pa.Array]:
    overflow_rows = ~is_empty & ~_valid(sums)
    overflowed = np.bincount(gids[overflow_rows], minlength=n_groups) > 0
    total, _ = _decimal_sum_buffers(sums, gids, n_groups, st, overflowed)
    # isEmpty: every merged buffer was empty (Spark: isEmpty.left && isEmpty.right).
    non_empty = np.bincount(gids[~is_empty], minlength=n_groups) > 0
    return [total, pa.array(~non_empty)]


def _overflow_marked(total: pa.Array, non_empty: pa.Array) -> bool:
    """Whether a decimal sum buffer holds Spark's overflow marker (NULL sum of a non-empty
    group)."""
    if total.null_count == 0:
        return False
    return bool(pc.any(pc.and_(non_empty, total.is_null())).as_py())


def _unscaled(arr: pa.Array) -> np.ndarray | list[int]:
    """The unscaled integer values of a decimal128 array (0 for NULL): an int64 array when every
    value fits 64 bits, else Python integers."""
    words = _decimal_words(arr)
    valid = _valid(arr)
    if np.array_equal(words[:, 1], words[:, 0] >> 63):
        return np.where(valid, words[:, 0], 0)
    lo = words[:, 0].tolist()
    hi = words[:, 1].tolist()
    return [((h << 64) | (lw & 0xFFFFFFFFFFFFFFFF)) if v else 0
            for lw, h, v in zip(lo, hi, valid.tolist())]


def _first_last_positions(values: pa.Array, value_set: pa.Array | None, ignore_nulls: bool,
                          g: np.ndarray, n_groups: int, *, last: bool) -> np.ndarray:
    """Per group, the position of the first (last) row that counts, -1 without one: rows whose
    ``value_set`` buffer is TRUE (merge), else the non-NULL rows (``ignore_nulls``) or every
    row."""
    if value_set is not None:
        rows = np.flatnonzero(_bool_np(value_set))
    elif ignore_nulls:
        rows = np.flatnonzero(_valid(values))
    else:
        rows = np.arange(len(g), dtype=np.int64)
    return (_last_pos if last else _first_pos)(g[rows], rows, n_groups)
