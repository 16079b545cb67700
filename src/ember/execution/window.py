"""Vectorized evaluation of window functions over a batch of whole window partitions.

The input batch holds complete window partitions, sorted by the partition keys and then the
order keys (what ``WindowExec`` requires of its child).  Everything is array arithmetic over
all rows of all partitions at once; no Python loop runs per row or per partition.

1. **Partitions and peers.**  The partition keys (then partition + order keys) are encoded into
   int64 codes with Spark's equality (``kernels.keys``: NULL equals NULL, NaNs equal, ``-0.0``
   equals ``0.0``); a row starts a partition (a peer group) where its code differs from the
   previous row's.  ``np.maximum.accumulate`` of the start positions gives each row its
   partition start and peer-group start; the ends follow from the reversed arrays.
2. **Ranking** (Spark's ``RowNumber``, ``Rank``, ``DenseRank``, ``PercentRank``, ``CumeDist``,
   ``NTile``): arithmetic on those positions.
3. **Offsets**: ``lag`` / ``lead`` read row ``i + offset`` when it lies in the partition, else
   the default (evaluated on the current row, as Spark's ``FrameLessOffsetWindowFunctionFrame``);
   with IGNORE NULLS the k-th non-NULL value before / after the row, found through the positions
   of the non-NULL rows and their running count.  ``nth_value`` and ``first_value`` /
   ``last_value`` (``First`` / ``Last``) index into each row's frame the same way.
4. **Frames** (:func:`frame_bounds`): each row's frame as ``[lo, hi)`` row positions, clipped to
   its partition.  ROWS offsets are position arithmetic; RANGE ``CURRENT ROW`` is the peer
   group; RANGE offsets compute the bound value ``key + offset`` with Spark's expression for
   the key's type (``DateAdd``, ``DateAddYMInterval``, ``TimestampAddInterval`` with the
   session time zone -- a day is a calendar day across DST --, ``TimestampAddYMInterval``,
   ``Add``; the offset negated for a descending key, as Spark's ``WindowExecBase``) and find
   the first row not before (lower) / after (upper) it by one vectorized merge of the sorted
   keys with the bounds, per partition via the partition id as the leading sort key.  A NULL
   key's bound is NULL, so its frame is the NULL peer group; NaN sorts last and equals NaN.
   As Spark's frames only move forward, the bounds are running maxima (this matters where
   ``key + 1 day`` goes backwards across a DST change).
5. **Aggregates over frames** through the aggregate protocol
   (:class:`~ember.expressions.aggregates.AggregateFunction`): a frame spanning whole
   partitions is one grouped ``aggregate`` broadcast back to the rows; any other frame reads
   a segment tree of aggregation buffers: the leaves are ``update`` with one group per row
   (FILTER applied), each level above is one ``merge`` of pairs (group ``i // 2``), and each
   row's ``[lo, hi)`` is covered by at most two nodes per level, gathered left to right (the
   order merge needs for order-sensitive functions) and merged in one ``merge`` call with the
   row as the group, then ``evaluate``.  Cost O(n log n) whatever the frame sizes; an empty
   frame gets the initial buffer (``count`` 0, ``sum`` NULL).  A floating ``sum`` / ``avg``
   over running frames (from the partition start) adds in row order instead, exactly as
   Spark's running frame does (:func:`_sequential_prefix`); over sliding frames the tree
   associates the additions differently from Spark's per-frame re-aggregation, so their last
   bits may differ.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from ember import types as T
from ember.errors import InternalError, UnsupportedError
from ember.execution.aggregate_buffers import merge_buffers, update_buffers
from ember.execution.kernels.batches import conform
from ember.execution.kernels.keys import canonicalize_floats, encode_arrays
from ember.execution.prepare import prepare
from ember.expressions.aggregates import AggregateExpression, AggregateFunction
from ember.expressions.aggregates.first_last import First, Last
from ember.expressions.aggregates.sum_avg import Average, Sum
from ember.expressions.arithmetic import Add
from ember.expressions.base import Alias, Expression, Literal, SortOrder
from ember.expressions.cast import Cast
from ember.expressions.common import eval_where, to_array, to_mask
from ember.expressions.interval_arithmetic import TimestampAddInterval, TimestampAddYMInterval
from ember.expressions.intervals import DateAddYMInterval
from ember.expressions.registry import lookup_function
from ember.expressions.windows import (
    CumeDist,
    CurrentRow,
    DenseRank,
    FrameLessOffsetWindowFunction,
    FrameType,
    NthValue,
    NTile,
    PercentRank,
    Rank,
    RowNumber,
    SpecifiedWindowFrame,
    UnboundedFollowing,
    UnboundedPreceding,
    WindowExpression,
)

__all__ = ["WindowLayout", "evaluate_windows", "frame_bounds", "ranking_values",
           "segment_tree_aggregate", "segment_tree_buffers"]


# ---------------------------------------------------------------------------------------------
# Partitions and peer groups


def _starts(codes: np.ndarray | None, n: int) -> np.ndarray:
    """``True`` where a row starts a new run of equal codes (row 0 always)."""
    flag = np.zeros(n, dtype=bool)
    if n:
        flag[0] = True
        if codes is not None and n > 1:
            flag[1:] = codes[1:] != codes[:-1]
    return flag


def _start_pos(flag: np.ndarray) -> np.ndarray:
    """Per row, the position of the start of its run."""
    n = len(flag)
    return np.maximum.accumulate(np.where(flag, np.arange(n, dtype=np.int64), 0))


def _end_pos(flag: np.ndarray) -> np.ndarray:
    """Per row, the (exclusive) end of its run."""
    n = len(flag)
    nxt = np.empty(n, dtype=bool)
    if n:
        nxt[:-1] = flag[1:]
        nxt[-1] = True
    ends = np.where(nxt, np.arange(1, n + 1, dtype=np.int64), n + 1)
    return np.minimum.accumulate(ends[::-1])[::-1]


class WindowLayout:
    """Partition and peer-group positions of a batch of sorted window partitions:
    ``part_start`` / ``part_end`` (exclusive) / ``part_id`` per row, ``n_parts``, and
    ``peer_start`` / ``peer_end`` / ``peer_flag`` (rows equal on partition and order keys)."""

    def __init__(self, part_keys: Sequence[pa.Array], order_keys: Sequence[pa.Array],
                 n: int) -> None:
        self.n = n
        pcodes = encode_arrays(list(part_keys), nulls_equal=True)[0] if part_keys else None
        pflag = _starts(pcodes, n)
        self.part_flag = pflag
        self.part_id = np.cumsum(pflag) - 1
        self.n_parts = int(pflag.sum())
        self.part_start = _start_pos(pflag)
        self.part_end = _end_pos(pflag)
        if order_keys:
            ocodes = encode_arrays(list(order_keys), nulls_equal=True)[0]
            peer = pflag.copy()
            if n > 1:
                peer[1:] |= ocodes[1:] != ocodes[:-1]
        else:
            peer = pflag
        self.peer_flag = peer
        self.peer_start = _start_pos(peer)
        self.peer_end = _end_pos(peer)

    @property
    def part_size(self) -> np.ndarray:
        return self.part_end - self.part_start


# ---------------------------------------------------------------------------------------------
# Ranking functions


def ranking_values(fn: Expression, lay: WindowLayout) -> np.ndarray:
    """The ranking function ``fn``'s value per row, as a NumPy array."""
    n = lay.n
    idx = np.arange(n, dtype=np.int64)
    if isinstance(fn, RowNumber):
        return (idx - lay.part_start + 1).astype(np.int32)
    if isinstance(fn, Rank):
        return (lay.peer_start - lay.part_start + 1).astype(np.int32)
    if isinstance(fn, DenseRank):
        cs = np.cumsum(lay.peer_flag)
        return (cs - cs[lay.part_start] + 1).astype(np.int32)
    if isinstance(fn, PercentRank):
        rank = (lay.peer_start - lay.part_start).astype(np.float64)
        denom = (lay.part_size - 1).astype(np.float64)
        return np.where(denom > 0, rank / np.where(denom > 0, denom, 1.0), 0.0)
    if isinstance(fn, CumeDist):
        return (lay.peer_end - lay.part_start) / lay.part_size.astype(np.float64)
    if isinstance(fn, NTile):
        buckets = _int_literal(fn.buckets, "ntile")
        size = lay.part_size
        r = idx - lay.part_start
        q = size // buckets
        rem = size % buckets
        big = (q + 1) * rem  # rows in the first ``rem`` buckets, one row more each
        out = np.where(r < big, r // (q + 1) + 1,
                       rem + (r - big) // np.maximum(q, 1) + 1)
        return out.astype(np.int32)
    raise InternalError(f"not a ranking function: {fn}")


def _int_literal(e: Expression, what: str) -> int:
    v = _fold(e)
    if not isinstance(v, int) or isinstance(v, bool):
        raise InternalError(f"{what}: the argument {e.sql()} is not a constant integer")
    return v


def _fold(e: Expression) -> Any:
    """The value of a foldable expression (a literal after constant folding)."""
    if isinstance(e, Literal):
        return e.value
    arr = to_array(prepare(e, ()).eval(pa.RecordBatch.from_pydict({"_": [0]})), 1)
    return arr[0].as_py()


# ---------------------------------------------------------------------------------------------
# Offsets: lag / lead / nth_value / first / last


def _nonnull_positions(values: pa.Array) -> tuple[np.ndarray, np.ndarray]:
    """``(positions of the non-NULL rows, C)`` with ``C[i]`` = non-NULL rows before row ``i``
    (length n + 1)."""
    valid = np.asarray(values.is_valid().to_numpy(zero_copy_only=False), dtype=bool)
    c = np.zeros(len(valid) + 1, dtype=np.int64)
    np.cumsum(valid, out=c[1:])
    return np.flatnonzero(valid), c


def _gather(values: pa.Array, pos: np.ndarray, ok: np.ndarray) -> pa.Array:
    """``values[pos]`` where ``ok``, NULL elsewhere."""
    idx = pa.array(np.where(ok, pos, 0), type=pa.int64(), mask=~ok)
    if len(values) == 0:
        return pa.nulls(len(pos), values.type)
    return values.take(idx)


def _frameless_offset(fn: FrameLessOffsetWindowFunction, values: pa.Array, default: pa.Array,
                      lay: WindowLayout) -> pa.Array:
    """``lag`` / ``lead``: the value ``offset`` rows away within the partition, else
    ``default``; with IGNORE NULLS the ``|offset|``-th non-NULL value before / after the row."""
    k = _int_literal(fn.row_offset, fn.function_name)
    n = lay.n
    idx = np.arange(n, dtype=np.int64)
    if not fn.ignore_nulls or k == 0:
        pos = idx + k
        ok = (pos >= lay.part_start) & (pos < lay.part_end)
    else:
        nn, c = _nonnull_positions(values)
        if k > 0:  # the k-th non-NULL row after i: index c[i + 1] + k - 1 among them
            j = c[idx + 1] + k - 1
            inside = j < len(nn)
            pos = np.where(inside, nn[np.minimum(j, max(len(nn) - 1, 0))] if len(nn) else 0, 0)
            ok = inside & (pos < lay.part_end)
        else:  # the |k|-th non-NULL row before i: index c[i] + k
            j = c[idx] + k
            inside = j >= 0
            pos = np.where(inside, nn[np.maximum(j, 0)] if len(nn) else 0, 0)
            ok = inside & (pos >= lay.part_start)
    got = _gather(values, pos, ok)
    if default.null_count == len(default):
        return got
    return pc.if_else(pa.array(ok), got, default)


def _nth_in_frame(values: pa.Array, lo: np.ndarray, hi: np.ndarray, nth: int,
                  ignore_nulls: bool, from_end: bool = False) -> pa.Array:
    """The ``nth`` (1-based) value of each frame ``[lo, hi)`` (counting from the end when
    ``from_end``), counting only non-NULL values when ``ignore_nulls``; NULL when there is
    none."""
    if not ignore_nulls:
        pos = hi - nth if from_end else lo + nth - 1
        ok = (pos >= lo) & (pos < hi)
        return _gather(values, pos, ok)
    nn, c = _nonnull_positions(values)
    j = c[hi] - nth if from_end else c[lo] + nth - 1
    inside = (j >= 0) & (j < len(nn))
    pos = nn[np.clip(j, 0, max(len(nn) - 1, 0))] if len(nn) else np.zeros(len(lo), np.int64)
    ok = inside & (pos >= lo) & (pos < hi)
    return _gather(values, pos, ok)


# ---------------------------------------------------------------------------------------------
# Frames


def frame_bounds(frame: SpecifiedWindowFrame, lay: WindowLayout,
                 order: Sequence[SortOrder], order_keys: Sequence[pa.Array],
                 batch: pa.RecordBatch, bound_order: Sequence[Expression], time_zone: str
                 ) -> tuple[np.ndarray, np.ndarray]:
    """Each row's frame ``[lo, hi)`` (row positions in the batch), within its partition;
    ``lo == hi`` for an empty frame."""
    n = lay.n
    idx = np.arange(n, dtype=np.int64)
    ps, pe = lay.part_start, lay.part_end

    def bound(b: Expression, upper: bool) -> np.ndarray:
        if isinstance(b, UnboundedPreceding):
            return ps.copy()
        if isinstance(b, UnboundedFollowing):
            return pe.copy()
        if isinstance(b, CurrentRow):
            if frame.frame_type is FrameType.ROWS:
                return idx + 1 if upper else idx.copy()
            return lay.peer_end.copy() if upper else lay.peer_start.copy()
        if frame.frame_type is FrameType.ROWS:
            k = _int_literal(b, "ROWS frame")
            return idx + k + 1 if upper else idx + k
        return _range_bound(b, upper, lay, order[0], order_keys[0], batch, bound_order[0],
                            time_zone)

    lo = np.clip(bound(frame.lower, False), ps, pe)
    hi = np.clip(bound(frame.upper, True), ps, pe)
    # Spark's frames move forward only (Sliding / UnboundedPreceding / UnboundedFollowing
    # WindowFunctionFrame add rows up to the upper bound, then drop rows below the lower bound
    # from the rows added): where ``key + offset`` is not monotonic in the key (a day added
    # across a DST change), a row keeps the previous row's bounds when its own are behind.
    # Earlier partitions' positions never exceed a partition's start, so one running maximum
    # over the batch serves every partition.
    hi = np.maximum.accumulate(hi)
    lo = np.maximum.accumulate(np.minimum(lo, hi))
    return lo, hi


def _range_bound(offset: Expression, upper: bool, lay: WindowLayout, order: SortOrder,
                 key: pa.Array, batch: pa.RecordBatch, bound_key: Expression,
                 time_zone: str) -> np.ndarray:
    """RANGE ``offset`` boundary: the first row whose key is not before (lower) / is after
    (upper) ``key + offset`` in the sort order (Spark's ``RangeBoundOrdering``)."""
    value = _fold(offset)
    if value is None:
        raise InternalError(f"RANGE frame offset {offset.sql()} is NULL")
    off = Literal(value if order.ascending else -value, offset.data_type)
    expr = _bound_expression(bound_key, off, time_zone)
    target = to_array(expr.eval(batch), lay.n)
    data = _sort_words(key, order)
    needles = _sort_words(conform(target, key.type), order)
    return _search(lay.part_id, data, lay.part_id, needles, strict=upper)


def _bound_expression(key: Expression, offset: Expression, time_zone: str) -> Expression:
    """Spark's ``WindowExecBase.createBoundOrdering`` bound value: ``key + offset`` by type."""
    kt, ot = key.data_type, offset.data_type
    if isinstance(kt, T.DateType) and isinstance(ot, T.IntegralType):
        return lookup_function("date_add", (key, offset))
    if isinstance(kt, T.DateType) and isinstance(ot, T.YearMonthIntervalType):
        return DateAddYMInterval(key, offset)
    if isinstance(kt, (T.TimestampType, T.TimestampNTZType)) and isinstance(
            ot, T.DayTimeIntervalType):
        return TimestampAddInterval(key, offset, time_zone)
    if isinstance(kt, (T.TimestampType, T.TimestampNTZType)) and isinstance(
            ot, T.YearMonthIntervalType):
        return TimestampAddYMInterval(key, offset, time_zone)
    if isinstance(kt, T.NumericType) and ot != kt:
        offset = Cast(offset, kt)  # Spark's WindowFrameCoercion
    return Add(key, offset)


def _int64(arr: pa.Array) -> np.ndarray:
    """Integer-like values (ints, dates, timestamps, intervals) as int64 (NULL slots 0)."""
    t = arr.type
    if pa.types.is_date32(t) or pa.types.is_time32(t):
        arr = arr.cast(pa.int32())
    elif (pa.types.is_timestamp(t) or pa.types.is_duration(t) or pa.types.is_date64(t)
          or pa.types.is_time64(t)):
        arr = arr.cast(pa.int64())
    arr = pc.fill_null(arr, 0) if arr.null_count else arr
    return arr.to_numpy(zero_copy_only=False).astype(np.int64, copy=False)


def _decimal_words(arr: pa.Array) -> tuple[np.ndarray, np.ndarray]:
    """A decimal128 array's unscaled values as (signed high word, unsigned low word)."""
    arr = pc.fill_null(arr, pa.scalar(0, arr.type)) if arr.null_count else arr
    buf = np.frombuffer(arr.buffers()[1], dtype=np.uint64)
    words = buf[2 * arr.offset: 2 * (arr.offset + len(arr))].reshape(-1, 2)
    return words[:, 1].view(np.int64).copy(), words[:, 0].copy()


def _sort_words(arr: pa.Array, order: SortOrder) -> list[np.ndarray]:
    """Keys whose lexicographic order is ``order``'s (Spark's ordering: NULLs first or last,
    NaN after every number, ``-0.0 == 0.0``): a class word (NULL / value / NaN) and value
    words, negated for a descending order."""
    n = len(arr)
    valid = np.asarray(arr.is_valid().to_numpy(zero_copy_only=False), dtype=bool)
    cls = np.zeros(n, dtype=np.int8)
    t = arr.type
    words: list[np.ndarray]
    if pa.types.is_floating(t):
        v = canonicalize_floats(arr).cast(pa.float64())
        v = (pc.fill_null(v, 0.0) if v.null_count else v).to_numpy(zero_copy_only=False)
        nan = np.isnan(v)
        cls[nan] = 1
        v = np.where(nan, 0.0, v)
        words = [v if order.ascending else -v]
    elif pa.types.is_decimal(t):
        hi, lo = _decimal_words(arr)
        if not order.ascending:  # two's complement negation of the 128-bit value
            lo2 = ~lo + np.uint64(1)
            hi = ~hi + (lo2 == 0).astype(np.int64)
            lo = lo2
        words = [hi, lo]
    elif pa.types.is_boolean(t) or pa.types.is_string(t) or pa.types.is_binary(t):
        raise UnsupportedError(f"RANGE frame offsets over {t} order keys")
    else:
        v = _int64(arr)
        words = [v if order.ascending else -v]
    if not order.ascending:
        cls = -cls  # NaN is the largest value: first when descending
    null_cls = -2 if order.effective_nulls_first else 2
    cls = np.where(valid, cls, null_cls).astype(np.int8)
    words = [np.where(valid, w, w.dtype.type(0)) for w in words]
    return [cls, *words]


def _search(data_part: np.ndarray, data: list[np.ndarray], needle_part: np.ndarray,
            needles: list[np.ndarray], strict: bool) -> np.ndarray:
    """Per needle, the number of data rows (sorted by ``(part, *data)``) before it: the first
    row ``>= needle`` (``strict``: ``> needle``) within the needle's partition, as a position.
    One lexsort of data and needles together, needles placed before (after, when ``strict``)
    equal data rows."""
    nd, nn = len(data_part), len(needle_part)
    tie = np.concatenate([np.full(nd, 0 if strict else 1, dtype=np.int8),
                          np.full(nn, 1 if strict else 0, dtype=np.int8)])
    cols = [np.concatenate([d, x]) for d, x in zip(data, needles)]
    part = np.concatenate([data_part, needle_part])
    order = np.lexsort([tie, *reversed(cols), part])
    is_data = order < nd
    before = np.cumsum(is_data) - is_data
    out = np.empty(nn, dtype=np.int64)
    needle_at = ~is_data
    out[order[needle_at] - nd] = before[needle_at]
    return out


# ---------------------------------------------------------------------------------------------
# Aggregates over frames


def segment_tree_aggregate(func: AggregateFunction, args: Sequence[pa.Array],
                           mask: np.ndarray | None, lo: np.ndarray, hi: np.ndarray
                           ) -> pa.Array:
    """``func`` over each row's frame ``[lo, hi)`` of the argument rows (``mask``: FILTER),
    through a segment tree of aggregation buffers (see the module docstring)."""
    n = len(lo)
    leaves = update_buffers(func, args, mask, np.arange(n, dtype=np.int64), n)
    return func.evaluate(segment_tree_buffers(func, leaves, lo, hi))


def segment_tree_buffers(func: AggregateFunction, leaves: Sequence[pa.Array], lo: np.ndarray,
                         hi: np.ndarray) -> list[pa.Array]:
    """The merged aggregation buffers of each query range ``[lo, hi)`` over the buffer rows
    ``leaves`` (one group per query, in query order; the initial buffer for an empty range),
    through a segment tree of merges."""
    n = len(lo)
    m = len(leaves[0])
    levels = [list(leaves)]
    while m > 1:
        g = np.arange(m, dtype=np.int64) // 2
        m = (m + 1) // 2
        levels.append(merge_buffers(func, levels[-1], g, m))
    rows = np.arange(n, dtype=np.int64)
    left: list[tuple[np.ndarray, int, np.ndarray]] = []
    right: list[tuple[np.ndarray, int, np.ndarray]] = []
    lft, rgt = lo.copy(), hi.copy()
    for level in range(len(levels)):
        active = lft < rgt
        if not active.any():
            break
        take_l = active & ((lft & 1) == 1)
        if take_l.any():
            left.append((rows[take_l], level, lft[take_l]))
        lft = lft + take_l
        take_r = (lft < rgt) & ((rgt & 1) == 1)
        rgt = rgt - take_r
        if take_r.any():
            right.append((rows[take_r], level, rgt[take_r]))
        lft >>= 1
        rgt >>= 1
    parts = left + right[::-1]
    if not parts:
        empty = [c.slice(0, 0) for c in levels[0]]
        return merge_buffers(func, empty, np.zeros(0, dtype=np.int64), n)
    gids = np.concatenate([p[0] for p in parts])
    cols = []
    for f in range(len(levels[0])):
        pieces = [levels[lv][f].take(pa.array(nodes)) for _, lv, nodes in parts]
        t = pieces[0].type
        cols.append(pa.concat_arrays([p if p.type == t else p.cast(t) for p in pieces]))
    # merge reads each group's buffers in row order: sort stably by row, keeping the left to
    # right order of each row's nodes
    order = np.argsort(gids, kind="stable")
    idx = pa.array(order)
    return merge_buffers(func, [c.take(idx) for c in cols], gids[order], n)


def _sequential_prefix(values: np.ndarray, lay: WindowLayout) -> np.ndarray:
    """Per row ``i``, ``((0.0 + x[ps]) + x[ps + 1]) + ... + x[i]`` added in row order from its
    partition start ``ps``, as Spark's running frames add doubles.  Partitions are laid out as
    rows of a matrix (one matrix per power-of-two size class, so the matrices hold at most
    twice the rows) and each matrix is summed by ``cumsum`` along its rows, which accumulates
    strictly in order."""
    n = lay.n
    out = np.empty(n, dtype=np.float64)
    starts = np.flatnonzero(lay.part_flag)
    sizes = lay.part_end[starts] - starts
    size_class = np.ceil(np.log2(np.maximum(sizes, 1))).astype(np.int64)
    row_class = size_class[lay.part_id]
    pos = np.arange(n, dtype=np.int64) - lay.part_start
    for c in np.unique(size_class):
        parts = np.flatnonzero(size_class == c)
        rows = np.flatnonzero(row_class == c)
        local = np.searchsorted(parts, lay.part_id[rows])
        m = np.zeros((len(parts), (1 << int(c)) + 1), dtype=np.float64)
        m[local, pos[rows] + 1] = values[rows]
        out[rows] = np.cumsum(m, axis=1)[local, pos[rows] + 1]
    return out


def _running_float_kind(func: AggregateFunction) -> bool | None:
    """For a floating ``sum`` (False) / ``avg`` (True: its buffer has a count), which Spark's
    running frames add in row order; None for any other function or type."""
    if isinstance(func, Sum) and isinstance(func.data_type, T.DoubleType):
        return False
    if isinstance(func, Average) and isinstance(func.sum_type, T.DoubleType):
        return True
    return None


def _float_values(arg: pa.Array, mask: np.ndarray | None) -> tuple[np.ndarray, np.ndarray]:
    """``(values as float64 with 0.0 where not counted, counted)`` of a sum's argument."""
    valid = np.asarray(arg.is_valid().to_numpy(zero_copy_only=False), dtype=bool)
    if mask is not None:
        valid &= mask
    x = arg.cast(pa.float64())
    x = (pc.fill_null(x, 0.0) if x.null_count else x).to_numpy(zero_copy_only=False)
    return np.where(valid, x, 0.0), valid  # adding 0.0 changes no running sum (never -0.0)


def _running_float_result(total: np.ndarray, count: np.ndarray, with_count: bool
                          ) -> list[pa.Array]:
    """The sum / avg buffers of running totals and counts of counted rows."""
    total = np.where(count > 0, total, 0.0)
    if with_count:
        return [pa.array(total, type=pa.float64()), pa.array(count, type=pa.int64())]
    return [pa.array(total, type=pa.float64(), mask=count == 0)]


def _running_float_buffers(func: AggregateFunction, arg: pa.Array, mask: np.ndarray | None,
                           lay: WindowLayout, hi: np.ndarray) -> list[pa.Array] | None:
    """The buffers of a floating ``sum`` / ``avg`` over running frames ``[partition start,
    hi)``, added in row order as Spark does (a segment tree would associate the additions
    differently, changing the last bits); None for any other function or type."""
    with_count = _running_float_kind(func)
    if with_count is None:
        return None
    x, valid = _float_values(arg, mask)
    prefix = _sequential_prefix(x, lay)
    c = np.zeros(lay.n + 1, dtype=np.int64)
    np.cumsum(valid, out=c[1:])
    count = c[hi] - c[lay.part_start]
    return _running_float_result(prefix[np.maximum(hi - 1, 0)], count, with_count)


def _aggregate_over_frames(agg: AggregateExpression, batch: pa.RecordBatch, attrs: Sequence,
                           lay: WindowLayout, lo: np.ndarray, hi: np.ndarray) -> pa.Array:
    func = agg.func
    n = lay.n
    mask = None
    if agg.filter is not None:
        mask = to_mask(to_array(prepare(agg.filter, attrs).eval(batch), n))
    args = []
    for c in func.children:
        e = prepare(c, attrs)
        arr = to_array(e.eval(batch), n) if mask is None else eval_where(e, batch, mask)
        args.append(conform(arr, c.data_type.to_arrow()))
    if type(func) in (First, Last) and mask is None:
        return _nth_in_frame(args[0], lo, hi, 1, func.ignore_nulls,
                             from_end=isinstance(func, Last))
    whole = bool(np.array_equal(lo, lay.part_start) and np.array_equal(hi, lay.part_end))
    if whole:
        g = lay.part_id
        sel_args = args
        if mask is not None:
            rows = pa.array(np.flatnonzero(mask))
            sel_args = [a.take(rows) for a in args]
            g = g[mask]
        res = func.aggregate(sel_args, g, lay.n_parts)
        return res.take(pa.array(lay.part_id))
    if np.array_equal(lo, lay.part_start):
        running = _running_float_buffers(func, args[0], mask, lay, hi) if args else None
        if running is not None:
            return func.evaluate(running)
    if not func.supports_buffers:
        raise UnsupportedError(
            f"The aggregate function {func.pretty_name} over a window frame smaller than the "
            "partition is not supported yet")
    return segment_tree_aggregate(func, args, mask, lo, hi)


# ---------------------------------------------------------------------------------------------
# Entry point


def evaluate_windows(batch: pa.RecordBatch, attrs: Sequence, window_expressions: Sequence,
                     partition_spec: Sequence[Expression], order_spec: Sequence[SortOrder],
                     time_zone: str) -> list[pa.Array]:
    """The column of each window expression (``Alias(WindowExpression(...))``) over ``batch``
    (columns ``attrs``): whole window partitions, sorted by ``partition_spec`` then
    ``order_spec``."""
    n = batch.num_rows
    part_keys = [to_array(prepare(e, attrs).eval(batch), n) for e in partition_spec]
    bound_order = [prepare(o.child, attrs) for o in order_spec]
    order_keys = [to_array(e.eval(batch), n) for e in bound_order]
    lay = WindowLayout(part_keys, order_keys, n)
    bounds: dict[SpecifiedWindowFrame, tuple[np.ndarray, np.ndarray]] = {}
    out = []
    for ne in window_expressions:
        we = ne.child if isinstance(ne, Alias) else ne
        if not isinstance(we, WindowExpression):
            raise InternalError(f"not a window expression: {ne}")
        fn = we.window_function
        col = _evaluate_one(fn, we, batch, attrs, lay, order_spec, order_keys, bound_order,
                            time_zone, bounds)
        out.append(conform(col, we.data_type.to_arrow()))
    return out


def _evaluate_one(fn: Expression, we: WindowExpression, batch: pa.RecordBatch, attrs: Sequence,
                  lay: WindowLayout, order_spec: Sequence[SortOrder],
                  order_keys: Sequence[pa.Array], bound_order: Sequence[Expression],
                  time_zone: str, bounds: dict[SpecifiedWindowFrame, tuple[np.ndarray, np.ndarray]]
                  ) -> pa.Array:
    """One window expression's column; ``bounds`` caches each frame's ``[lo, hi)`` over the
    batch (window expressions of one node often share frames)."""
    n = lay.n
    if isinstance(fn, (RowNumber, Rank, DenseRank, PercentRank, CumeDist, NTile)):
        return pa.array(ranking_values(fn, lay))
    if isinstance(fn, FrameLessOffsetWindowFunction):
        values = to_array(prepare(fn.input, attrs).eval(batch), n)
        default = to_array(prepare(fn.default, attrs).eval(batch), n)
        t = fn.data_type.to_arrow()
        return _frameless_offset(fn, conform(values, t), conform(default, t), lay)
    frame = we.spec.frame
    if frame not in bounds:
        bounds[frame] = frame_bounds(frame, lay, order_spec, order_keys, batch, bound_order,
                                     time_zone)
    lo, hi = bounds[frame]
    if isinstance(fn, NthValue):
        values = conform(to_array(prepare(fn.input, attrs).eval(batch), n),
                         fn.data_type.to_arrow())
        return _nth_in_frame(values, lo, hi, _int_literal(fn.offset, "nth_value"),
                             fn.ignore_nulls)
    if isinstance(fn, AggregateExpression):
        return _aggregate_over_frames(fn, batch, attrs, lay, lo, hi)
    raise UnsupportedError(f"The window function {fn.sql()} is not supported")
