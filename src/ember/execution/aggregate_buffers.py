"""Aggregation buffers: Spark's two-phase (partial / merge / final) form of every aggregate.

Spark computes an aggregate function in three steps over an *aggregation buffer* (its
``aggBufferAttributes``): **update** folds raw input rows into per-group buffers (Partial mode,
the only place FILTER applies), **merge** folds buffers into buffers (PartialMerge / Final), and
**evaluate** turns a buffer into the result (Final).  Here each step is a grouped, vectorized
kernel over integer group ids (``gids``, ``0 <= gid < n_groups``), built from the kernels of the
COMPLETE path (:mod:`ember.execution.aggregate`), so that update -> merge -> evaluate gives the
COMPLETE result bit for bit (floating sums: exactly when the association is the same, i.e. over
one partition; Spark's sums also depend on the partitioning).

Buffers (names as Spark 4 prints them in ``HashAggregate(... output=[k#1, sum#10L])``):

=========================  ======================================  ===========================
function                   buffer                                  note
=========================  ======================================  ===========================
count, count_if            count: bigint (0)                       count_if is Spark's
                                                                   count(nullif(p, false))
sum(integral)              sum: bigint                             ANSI overflow in update
                                                                   (running sums) and merge;
                                                                   legacy (ansi=False) wraps
sum(float/double)          sum: double
sum(decimal(p,s))          sum: decimal(p+10,s) (0), isEmpty       sum NULL and not isEmpty =
                                                                   overflow (raised at
                                                                   evaluate, as Spark 4;
                                                                   legacy: the result NULL)
avg                        sum: double / decimal(p+10,s), count    decimal: overflow as sum
min, max                   min / max: input type                   first of equal values wins
bool_and, bool_or          min / max: boolean                      Spark replaces them by
                                                                   min/max
first, any_value           first: input type, valueSet: boolean    any_value is Spark's first
last                       last: input type, valueSet: boolean
max_by, min_by             valueWithExtremumOrdering,              ties: the later row/buffer
                           extremumOrdering
=========================  ======================================  ===========================

Buffer rows of a partition keep the partition's order, and merge takes the first (last) buffer
where the COMPLETE path takes the first (last) row, so order-sensitive functions (first/last,
max_by/min_by ties, ``-0.0`` vs ``0.0`` in min/max) agree with it when partitions hold
consecutive rows -- and with Spark, which merges in the same way.

Functions without buffers (:func:`supports_buffers` is False; none among Ember's today) keep the
single COMPLETE aggregate in the physical plan.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from decimal import Decimal

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from ember import types as T
from ember.errors import InternalError
from ember.execution.aggregate import (
    AVG_OVERFLOW,
    SUM_OVERFLOW,
    _bool,
    _count_non_null,
    _counts,
    _decimal_array,
    _decimal_averages,
    _decimal_sums,
    _first_pos,
    _float_averages,
    _float_values,
    _group_add,
    _last_pos,
    _min_max,
    _overflow,
    _sel,
    _sum,
    _take_or_null,
    _true_mask,
    _valid,
    _valid_or_none,
    by_positions,
    out_of_precision,
)
from ember.expressions.aggregates import (
    AggregateFunction,
    AnyValue,
    Average,
    BoolAnd,
    BoolOr,
    Count,
    CountIf,
    First,
    Last,
    Max,
    MaxBy,
    Min,
    MinBy,
    Sum,
    average_sum_type,
)
from ember.expressions.base import AttributeReference

__all__ = [
    "BufferField",
    "buffer_fields",
    "buffer_attributes",
    "supports_buffers",
    "update_buffers",
    "merge_buffers",
    "evaluate_buffers",
]

@dataclass(frozen=True, slots=True)
class BufferField:
    """One column of an aggregation buffer (Spark's ``aggBufferAttributes`` entry)."""

    name: str
    data_type: T.DataType
    nullable: bool = True


# ---------------------------------------------------------------------------------------------
# Layout


def buffer_fields(func: AggregateFunction) -> tuple[BufferField, ...] | None:
    """The buffer layout of ``func``, or None when it has no two-phase implementation.

    >>> from ember.expressions.base import AttributeReference
    >>> [f.name for f in buffer_fields(Average(AttributeReference("v", T.LONG)))]
    ['sum', 'count']
    """
    match func:
        case Count() | CountIf():
            return (BufferField("count", T.LONG, False),)
        case Sum():
            rt = func.data_type
            if isinstance(rt, T.DecimalType):
                return (BufferField("sum", rt), BufferField("isEmpty", T.BOOLEAN, False))
            return (BufferField("sum", rt),)
        case Average():
            return (BufferField("sum", average_sum_type(func.child.data_type)),
                    BufferField("count", T.LONG, False))
        case Min():
            return (BufferField("min", func.data_type),)
        case Max():
            return (BufferField("max", func.data_type),)
        case BoolAnd():
            return (BufferField("min", T.BOOLEAN),)
        case BoolOr():
            return (BufferField("max", T.BOOLEAN),)
        case First() | AnyValue():
            return (BufferField("first", func.data_type), BufferField("valueSet", T.BOOLEAN, False))
        case Last():
            return (BufferField("last", func.data_type), BufferField("valueSet", T.BOOLEAN, False))
        case MaxBy() | MinBy():
            return (BufferField("valueWithExtremumOrdering", func.value.data_type),
                    BufferField("extremumOrdering", func.ordering.data_type))
        case _:
            return None


def supports_buffers(func: AggregateFunction) -> bool:
    """True when ``func`` can run as Partial -> Final (see the module docstring)."""
    return buffer_fields(func) is not None


def buffer_attributes(func: AggregateFunction) -> tuple[AttributeReference, ...]:
    """Fresh attributes for one aggregate's buffer (printed ``sum#10L, count#11L``)."""
    fields = buffer_fields(func)
    if fields is None:
        raise InternalError(f"{func.pretty_name} has no aggregation buffer")
    return tuple(AttributeReference(f.name, f.data_type, f.nullable) for f in fields)


# ---------------------------------------------------------------------------------------------
# Update: raw rows -> buffers


def update_buffers(func: AggregateFunction, args: Sequence[pa.Array], mask: np.ndarray | None,
                   gids: np.ndarray, n_groups: int) -> list[pa.Array]:
    """Per-group buffers of ``func`` over raw argument columns ``args`` (one per child of
    ``func``, one value per row); ``mask`` (FILTER) selects the rows that count, None = all.

    DISTINCT is not handled here: the one-distinct plan feeds distinct functions rows that are
    already unique per group.
    """
    args = list(args)
    if mask is not None:
        rows = np.flatnonzero(mask)
        if len(rows) != len(gids):
            idx = pa.array(rows, type=pa.int64())
            args = [a.take(idx) for a in args]
            gids = gids[rows]
    if _is_identity(gids, n_groups):
        fast = _identity_update(func, args)
        if fast is not None:
            return fast
    match func:
        case Count():
            return [_count_array(_count_non_null(args, gids, n_groups))]
        case CountIf():
            m = _true_mask(args[0])
            return [_count_array(np.bincount(gids[m], minlength=n_groups))]
        case Sum():
            return _sum_update(func, args[0], gids, n_groups)
        case Average():
            return _avg_update(func, args[0], gids, n_groups)
        case Min() | Max() | BoolAnd() | BoolOr() | First() | AnyValue() | Last() | MaxBy() | \
                MinBy():
            return _combine(func, args, None, gids, n_groups)
        case _:
            raise InternalError(f"{func.pretty_name} has no aggregation buffer")


def _is_identity(gids: np.ndarray, n_groups: int) -> bool:
    """Whether row ``i`` is group ``i`` for every row (every row its own group, in order: a
    partial aggregate passing rows through, or a merge of unique keys)."""
    n = len(gids)
    if n != n_groups or n < 2:
        return False
    if int(gids[0]) != 0 or int(gids[-1]) != n - 1:
        return False
    return bool((np.diff(gids) == 1).all())


def _identity_update(func: AggregateFunction, args: list[pa.Array]) -> list[pa.Array] | None:
    """:func:`update_buffers` when every row is its own group, straight from the values (the
    grouped kernels give the same); None when ``func`` has no such shortcut."""
    match func:
        case Count():
            valid = np.ones(len(args[0]), dtype=bool) if args else None
            for a in args:
                if pa.types.is_null(a.type) or a.null_count:
                    valid &= _valid(a)
            return [_count_array(valid.astype(np.int64))] if valid is not None else None
        case CountIf():
            return [_count_array(_true_mask(args[0]).astype(np.int64))]
        case Min() | Max() | BoolAnd() | BoolOr():
            return [args[0]]
        case Sum() | Average():
            st = func.data_type if isinstance(func, Sum) else \
                average_sum_type(func.child.data_type)
            arr = args[0]
            t = arr.type
            if not (isinstance(st, T.DecimalType) and pa.types.is_decimal128(t)
                    and t.scale == st.scale and t.precision <= st.precision):
                return None
            valid = _valid(arr)
            total = arr.cast(st.to_arrow())
            if arr.null_count:
                total = pc.fill_null(total, pa.scalar(Decimal(0), type=st.to_arrow()))
            if isinstance(func, Sum):
                return [total, pa.array(~valid)]
            return [total, _count_array(valid.astype(np.int64))]
    return None


def _identity_merge(func: AggregateFunction, buffers: list[pa.Array]) -> list[pa.Array] | None:
    """:func:`merge_buffers` when every buffer row is its own group: the buffers themselves
    for the functions whose one-buffer merge is the identity (no NULL markers to normalise);
    None otherwise."""
    match func:
        case Count() | CountIf():
            return buffers if buffers[0].null_count == 0 else None
        case Min() | Max() | BoolAnd() | BoolOr():
            return buffers
        case Sum():
            if isinstance(func.data_type, T.DecimalType):
                ok = buffers[0].null_count == 0 and buffers[1].null_count == 0
                return buffers if ok else None
            return buffers if pa.types.is_integer(buffers[0].type) else None
        case Average():
            if isinstance(average_sum_type(func.child.data_type), T.DecimalType):
                ok = buffers[0].null_count == 0 and buffers[1].null_count == 0
                return buffers if ok else None
    return None


def _count_array(c: np.ndarray) -> pa.Array:
    return pa.array(c.astype(np.int64, copy=False), type=pa.int64())


def _sum_update(func: Sum, arr: pa.Array, gids: np.ndarray, n_groups: int) -> list[pa.Array]:
    rt = func.data_type
    if isinstance(rt, T.DecimalType):
        return _decimal_sum_buffers(arr, gids, n_groups, rt, None)
    return [_sum(arr, gids, n_groups, rt, func.ansi)]


def _avg_update(func: Average, arr: pa.Array, gids: np.ndarray, n_groups: int) -> list[pa.Array]:
    st = average_sum_type(func.child.data_type)
    if isinstance(st, T.DecimalType):
        total, _ = _decimal_sum_buffers(arr, gids, n_groups, st, None)
        return [total, _count_array(_nonnull_counts(arr, gids, n_groups))]
    cnt = _nonnull_counts(arr, gids, n_groups)
    if pa.types.is_null(arr.type) or len(gids) == 0:
        sums = np.zeros(n_groups)
    else:
        valid = _valid_or_none(arr)
        sums = np.bincount(_sel(gids, valid), weights=_sel(_float_values(arr), valid),
                           minlength=n_groups)
    return [pa.array(sums, type=pa.float64()), _count_array(cnt)]


def _nonnull_counts(arr: pa.Array, gids: np.ndarray, n_groups: int) -> np.ndarray:
    if pa.types.is_null(arr.type):
        return np.zeros(n_groups, dtype=np.int64)
    return _counts(_sel(gids, _valid_or_none(arr)), n_groups)


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


def _zero_where(totals: np.ndarray | list[int], m: np.ndarray) -> np.ndarray | list[int]:
    if isinstance(totals, np.ndarray):
        return np.where(m, 0, totals)
    return [0 if x else t for t, x in zip(totals, m.tolist())]


# ---------------------------------------------------------------------------------------------
# Merge: buffers -> buffers


def merge_buffers(func: AggregateFunction, buffers: Sequence[pa.Array], gids: np.ndarray,
                  n_groups: int) -> list[pa.Array]:
    """Per-group buffers of ``func`` merged from input buffer rows (``buffers``: one column per
    buffer field), in row order."""
    buffers = list(buffers)
    if _is_identity(gids, n_groups):
        fast = _identity_merge(func, buffers)
        if fast is not None:
            return fast
    match func:
        case Count() | CountIf():
            c = buffers[0].to_numpy(zero_copy_only=False).astype(np.int64, copy=False)
            return [_count_array(_group_add(c, gids, n_groups) if len(c) else
                                 np.zeros(n_groups, dtype=np.int64))]
        case Sum():
            rt = func.data_type
            if isinstance(rt, T.DecimalType):
                return _merge_decimal_sums(buffers[0], _bool_np(buffers[1]), gids, n_groups, rt)
            return [_sum(buffers[0], gids, n_groups, rt, func.ansi)]
        case Average():
            st = average_sum_type(func.child.data_type)
            c = buffers[1].to_numpy(zero_copy_only=False).astype(np.int64, copy=False)
            cnt = _group_add(c, gids, n_groups) if len(c) else np.zeros(n_groups, np.int64)
            if isinstance(st, T.DecimalType):
                total, _ = _merge_decimal_sums(buffers[0], c == 0, gids, n_groups, st)
                return [total, _count_array(cnt)]
            v = _float_values(buffers[0])
            sums = np.bincount(gids, weights=v, minlength=n_groups) if len(v) else \
                np.zeros(n_groups)
            return [pa.array(sums, type=pa.float64()), _count_array(cnt)]
        case Min() | Max() | BoolAnd() | BoolOr() | First() | AnyValue() | Last() | MaxBy() | \
                MinBy():
            return _combine(func, buffers, buffers, gids, n_groups)
        case _:
            raise InternalError(f"{func.pretty_name} has no aggregation buffer")


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


def _combine(func: AggregateFunction, args: list[pa.Array], buffers: list[pa.Array] | None,
             gids: np.ndarray, n_groups: int) -> list[pa.Array]:
    """Update (``buffers`` None, ``args`` raw columns) or merge (``args`` = ``buffers``) of the
    selection functions, whose merge is their update over the buffer values."""
    match func:
        case Min():
            return [_min_max(args[0], gids, n_groups, largest=False)]
        case Max():
            return [_min_max(args[0], gids, n_groups, largest=True)]
        case BoolAnd():
            return [_bool(args[0], gids, n_groups, conj=True)]
        case BoolOr():
            return [_bool(args[0], gids, n_groups, conj=False)]
        case First(ignore_nulls=ign) | AnyValue(ignore_nulls=ign) | Last(ignore_nulls=ign):
            values = args[0]
            if buffers is not None:  # merge: the buffers whose value is set
                rows = np.flatnonzero(_bool_np(buffers[1]))
            elif ign:
                rows = np.flatnonzero(_valid(values))
            else:
                rows = np.arange(len(gids), dtype=np.int64)
            pick = _last_pos if isinstance(func, Last) else _first_pos
            pos = pick(gids[rows], rows, n_groups)
            return [_take_or_null(values, pos), pa.array(pos >= 0)]
        case MaxBy() | MinBy():
            pos = by_positions(args[1], gids, n_groups, largest=isinstance(func, MaxBy))
            return [_take_or_null(args[0], pos), _take_or_null(args[1], pos)]
        case _:
            raise InternalError(f"{func.pretty_name} has no aggregation buffer")


# ---------------------------------------------------------------------------------------------
# Evaluate: buffers -> result


def evaluate_buffers(func: AggregateFunction, buffers: Sequence[pa.Array]) -> pa.Array:
    """The result of ``func`` for each group from its final buffers (Arrow type
    ``func.data_type.to_arrow()``); raises Spark's ANSI errors (decimal sum overflow,
    decimal average out of range)."""
    match func:
        case Sum():
            rt = func.data_type
            if isinstance(rt, T.DecimalType):
                total, is_empty = buffers
                empty = _bool_np(is_empty)
                if func.ansi and ((~empty) & ~_valid(total)).any():
                    raise _overflow(SUM_OVERFLOW)  # legacy: the NULL overflow marker stays
                if empty.any():
                    total = pc.if_else(pa.array(empty), pa.nulls(len(total), total.type), total)
                return total
            return buffers[0]
        case Average():
            rt = func.data_type
            total, count = buffers
            cnt = count.to_numpy(zero_copy_only=False).astype(np.int64, copy=False)
            if isinstance(rt, T.DecimalType):
                over = (cnt != 0) & ~_valid(total)
                if func.ansi and over.any():
                    raise _overflow(AVG_OVERFLOW)
                return _decimal_averages(_unscaled(total), np.where(over, 0, cnt),
                                         func.child.data_type.scale, rt, func.ansi)
            return _float_averages(_float_values(total), cnt, rt.to_arrow())
        case First() | AnyValue() | Last() | MaxBy() | MinBy():
            return buffers[0]
        case Count() | CountIf() | Min() | Max() | BoolAnd() | BoolOr():
            return buffers[0]
    raise InternalError(f"{func.pretty_name} has no aggregation buffer")


def _unscaled(arr: pa.Array) -> np.ndarray | list[int]:
    """The unscaled integer values of a decimal128 array (0 for NULL): an int64 array when every
    value fits 64 bits, else Python integers."""
    from ember.execution.aggregate import _decimal_words

    words = _decimal_words(arr)
    valid = _valid(arr)
    if np.array_equal(words[:, 1], words[:, 0] >> 63):
        return np.where(valid, words[:, 0], 0)
    lo = words[:, 0].tolist()
    hi = words[:, 1].tolist()
    return [((h << 64) | (lw & 0xFFFFFFFFFFFFFFFF)) if v else 0
            for lw, h, v in zip(lo, hi, valid.tolist())]
