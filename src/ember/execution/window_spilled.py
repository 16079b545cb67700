"""Window evaluation over one window partition too large for the memory budget, read back from
disk batch by batch (Spark's ``WindowExec`` keeps such a partition in an
``ExternalAppendOnlyUnsafeRowArray`` that spills, and iterates it per frame).

The partition's rows (sorted by the order keys) are stored as numbered batches (``source``:
``offsets`` -- ``B + 1`` row offsets -- and ``batch(k)``; the local runtime's operator writes them
to an Arrow IPC spill file).  :class:`SpilledWindow` evaluates the window expressions one stored
batch of output rows (a *chunk*) at a time, reading only the stored batches the chunk's frames
touch, with every position *global* (a row's offset in the partition), so results are those of
:func:`ember.execution.window.evaluate_windows` over the whole partition:

- **Peers** (rank, RANGE ``CURRENT ROW``): each chunk's peer-group starts come from comparing
  adjacent order keys (the previous chunk's last row included); the start of the group running
  into the chunk is carried from the previous chunk, and the end of the group running out of it
  is found by reading ahead until the keys change (remembered, so a peer group spanning many
  batches is read ahead once).  ``dense_rank`` carries the number of groups before the chunk;
  ``percent_rank`` / ``cume_dist`` / ``ntile`` use the partition size, known once it is stored.
- **Frames**: ROWS bounds are arithmetic on global positions; RANGE offset bounds search the
  order key: first among the stored batches' last keys (kept in memory, one per batch), then
  inside the one batch the bound falls in.  The bounds' running maxima (Spark's frames only move
  forward) carry across chunks.
- **lag / lead / nth_value** read the rows at their global positions from the batches holding
  them; with IGNORE NULLS the non-NULL count per stored batch (one pass, kept) locates the k-th
  non-NULL row before / after a position or inside a frame.
- **Aggregates**: one aggregation buffer per stored batch (one pass of ``update``, kept); a
  frame ``[lo, hi)`` is the part of ``lo``'s batch from ``lo``, the whole batches between
  (answered by a segment tree over the per-batch buffers), and the part of ``hi``'s batch before
  ``hi``; the two partial batches are answered by a segment tree over their rows.  The (up to)
  three buffers of each row are merged in order with the aggregate protocol's ``merge``, then
  ``evaluate``d.  So every frame kind -- running, whole-partition, sliding, suffix -- reads at
  most the chunk's own batch and the batches where its frames start and end: memory stays
  within a few batches plus the kept per-batch values, whatever the partition size.

A floating ``sum`` / ``avg`` over running frames (from the partition start, incl. the whole
partition) adds in row order as Spark does, carrying the row-order total before each stored
batch.  Limit: over other frames it merges per-batch partial sums, whose last bits may differ
from Spark's per-frame addition (as the in-memory segment tree's may).  An aggregate function
without an aggregation buffer (no two-phase form; in memory it works over whole-partition frames
only) raises ``UnsupportedError`` over a spilled partition.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable, Iterator, Sequence
from types import SimpleNamespace
from typing import Any, Protocol

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from ember.errors import InternalError, UnsupportedError
from ember.execution.aggregate_buffers import merge_buffers, update_buffers
from ember.execution.kernels.batches import conform
from ember.execution.kernels.keys import encode_arrays
from ember.execution.prepare import prepare
from ember.execution.window import (
    _bound_expression,
    _end_pos,
    _float_values,
    _fold,
    _int_literal,
    _running_float_kind,
    _running_float_result,
    _search,
    _sort_words,
    ranking_values,
    segment_tree_buffers,
)
from ember.expressions.aggregates import AggregateExpression
from ember.expressions.base import Alias, Expression, Literal, SortOrder
from ember.expressions.common import eval_where, to_array, to_mask
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

__all__ = ["BatchSource", "SpilledWindow"]

_RANKING = (RowNumber, Rank, DenseRank, PercentRank, CumeDist, NTile)


class BatchSource(Protocol):
    """A window partition stored as numbered batches."""

    offsets: np.ndarray  # row offset of each batch, then the row count (length B + 1)

    def batch(self, k: int) -> pa.RecordBatch: ...


class SpilledWindow:
    """Chunked evaluation of window functions over one stored window partition (see the module
    docstring).  ``reserve`` / ``release`` account the bytes held in memory (batches read back,
    per-batch values kept) against the memory budget."""

    CACHED_BATCHES = 4

    def __init__(self, source: BatchSource, attrs: Sequence, order_spec: Sequence[SortOrder],
                 time_zone: str, reserve: Callable[[int], None],
                 release: Callable[[int], None]) -> None:
        self.source = source
        self.attrs = attrs
        self.off = np.asarray(source.offsets, dtype=np.int64)
        self.B = len(self.off) - 1
        self.N = int(self.off[-1])
        self.order_spec = list(order_spec)
        self.bound_order = [prepare(o.child, attrs) for o in order_spec]
        self.tz = time_zone
        self._reserve, self._release = reserve, release
        self.held = 0
        self.peak = 0
        self._cache: OrderedDict[int, tuple[pa.RecordBatch, dict, list[int]]] = OrderedDict()
        self._kept: dict[Any, Any] = {}  # per-partition values (per-batch buffers, counts)
        self._bound: dict[int, tuple[Expression, Expression]] = {}
        # peer-group state carried from chunk to chunk
        self._prev_keys: list[pa.Array] | None = None
        self._last_start = 0
        self._groups_before = 0
        self._group_end: tuple[int, int] | None = None  # (start, end) of a group read ahead
        self._frame_carry: dict[SpecifiedWindowFrame, tuple[int, int]] = {}

    # -- memory -------------------------------------------------------------------------------

    def _hold(self, nbytes: int) -> None:
        self._reserve(nbytes)
        self.held += nbytes
        self.peak = max(self.peak, self.held)

    def close(self) -> None:
        self._release(self.held)
        self.held = 0
        self._cache.clear()
        self._kept.clear()

    def _prepare(self, e: Expression) -> Expression:
        """``e`` bound to ``attrs``, once per expression (cached values are keyed by it)."""
        got = self._bound.get(id(e))
        if got is None:
            got = self._bound[id(e)] = (e, prepare(e, self.attrs))
        return got[1]

    # -- stored batches -----------------------------------------------------------------------

    def _entry(self, k: int) -> tuple[pa.RecordBatch, dict, list[int]]:
        e = self._cache.get(k)
        if e is not None:
            self._cache.move_to_end(k)
            return e
        while len(self._cache) >= self.CACHED_BATCHES:
            _, (_, _, size) = self._cache.popitem(last=False)
            self._release(size[0])
            self.held -= size[0]
        b = self.source.batch(k)
        nb = b.nbytes
        self._hold(nb)
        e = (b, {}, [nb])
        self._cache[k] = e
        return e

    def _column(self, k: int, expr: Expression) -> pa.Array:
        """``expr`` (bound to ``attrs``) evaluated over stored batch ``k`` (cached with it)."""
        b, cols, size = self._entry(k)
        key = id(expr)
        got = cols.get(key)
        if got is None:
            got = cols[key] = (expr, to_array(expr.eval(b), b.num_rows))
            self._hold(got[1].nbytes)
            size[0] += got[1].nbytes
        return got[1]

    def _batch_of(self, pos: np.ndarray) -> np.ndarray:
        return np.clip(np.searchsorted(self.off, pos, side="right") - 1, 0, max(self.B - 1, 0))

    def _by_batch(self, pos: np.ndarray) -> Iterator[tuple[int, np.ndarray, np.ndarray]]:
        """``(k, selection, local positions)`` for each stored batch holding some of the global
        positions ``pos`` (monotone positions touch few batches per chunk)."""
        b = self._batch_of(pos)
        for k in np.unique(b):
            sel = np.flatnonzero(b == k)
            yield int(k), sel, pos[sel] - self.off[k]

    def _gather(self, expr: Expression, pos: np.ndarray, ok: np.ndarray,
                t: pa.DataType) -> pa.Array:
        """``expr``'s value at global row ``pos`` where ``ok``, NULL elsewhere."""
        n = len(pos)
        rows = np.flatnonzero(ok)
        if not len(rows):
            return pa.nulls(n, t)
        vals, where = [], []
        for k, sel, local in self._by_batch(pos[rows]):
            vals.append(conform(self._column(k, expr), t).take(pa.array(local)))
            where.append(rows[sel])
        at = np.zeros(n, dtype=np.int64)
        at[np.concatenate(where)] = np.arange(len(rows), dtype=np.int64)
        return pa.concat_arrays(vals).take(pa.array(at, mask=~ok))

    # -- non-NULL counts (IGNORE NULLS) -------------------------------------------------------

    def _valid(self, k: int, expr: Expression) -> np.ndarray:
        return np.asarray(self._column(k, expr).is_valid().to_numpy(zero_copy_only=False),
                          dtype=bool)

    def _nonnull_prefix(self, expr: Expression) -> np.ndarray:
        key = ("nn", id(expr))
        if key not in self._kept:
            p = np.zeros(self.B + 1, dtype=np.int64)
            for k in range(self.B):
                p[k + 1] = p[k] + int(self._valid(k, expr).sum())
            self._hold(p.nbytes)
            self._kept[key] = p
        return self._kept[key]

    def _nonnull_before(self, expr: Expression, x: np.ndarray) -> np.ndarray:
        """Per global position ``x`` (0..N), the non-NULL values of ``expr`` before it."""
        p = self._nonnull_prefix(expr)
        out = np.full(len(x), p[-1], dtype=np.int64)
        inside = np.flatnonzero(x < self.N)
        for k, sel, local in self._by_batch(x[inside]):
            c = np.zeros(int(self.off[k + 1] - self.off[k]) + 1, dtype=np.int64)
            np.cumsum(self._valid(k, expr), out=c[1:])
            out[inside[sel]] = p[k] + c[local]
        return out

    def _nth_nonnull(self, expr: Expression, j: np.ndarray) -> np.ndarray:
        """The global position of the ``j``-th (0-based) non-NULL value (``j`` < their count)."""
        p = self._nonnull_prefix(expr)
        out = np.zeros(len(j), dtype=np.int64)
        b = np.searchsorted(p, j, side="right") - 1
        for k in np.unique(b):
            sel = np.flatnonzero(b == k)
            nn = np.flatnonzero(self._valid(int(k), expr))
            out[sel] = self.off[k] + nn[j[sel] - p[k]]
        return out

    # -- peers --------------------------------------------------------------------------------

    def _keys(self, k: int) -> list[pa.Array]:
        return [self._column(k, e) for e in self.bound_order]

    def _peers(self, j: int, n: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Chunk ``j``'s global peer starts / ends and its local group-start flags."""
        c0 = int(self.off[j])
        flag = np.zeros(n, dtype=bool)
        if j == 0:
            flag[0] = True
        if self.bound_order:
            keys = self._keys(j)
            if self._prev_keys is None:
                codes = encode_arrays(keys, nulls_equal=True)[0]
                flag[1:] = codes[1:] != codes[:-1]
            else:
                cat = [pa.concat_arrays([p, k]) for p, k in zip(self._prev_keys, keys)]
                codes = encode_arrays(cat, nulls_equal=True)[0]
                flag |= codes[1:] != codes[:-1]
            self._prev_keys = [k.slice(n - 1) for k in keys]
        local = np.maximum.accumulate(np.where(flag, np.arange(n, dtype=np.int64), -1))
        start = np.where(local >= 0, c0 + local, self._last_start)
        end = c0 + _end_pos(flag)
        last = int(start[-1])
        end[end == c0 + n] = self._end_of_group(j, last)
        self._last_start = last
        return start, end, flag

    def _end_of_group(self, j: int, start: int) -> int:
        """The end of the peer group starting at ``start`` that runs to the end of chunk ``j``:
        the stored batches after ``j`` are read until the order keys change."""
        if not self.bound_order:
            return self.N
        if self._group_end is not None and self._group_end[0] == start:
            return self._group_end[1]
        last = [k.slice(len(k) - 1) for k in self._keys(j)]
        end = self.N
        for k in range(j + 1, self.B):
            cat = [pa.concat_arrays([a, b]) for a, b in zip(last, self._keys(k))]
            codes = encode_arrays(cat, nulls_equal=True)[0]
            diff = np.flatnonzero(codes[1:] != codes[0])
            if len(diff):
                end = int(self.off[k] + diff[0])
                break
        self._group_end = (start, end)
        return end

    # -- frames -------------------------------------------------------------------------------

    def _frame(self, frame: SpecifiedWindowFrame, j: int, chunk: pa.RecordBatch,
               peers: tuple[np.ndarray, np.ndarray, np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
        n = chunk.num_rows
        idx = self.off[j] + np.arange(n, dtype=np.int64)

        def bound(b: Expression, upper: bool) -> np.ndarray:
            if isinstance(b, UnboundedPreceding):
                return np.zeros(n, dtype=np.int64)
            if isinstance(b, UnboundedFollowing):
                return np.full(n, self.N, dtype=np.int64)
            if isinstance(b, CurrentRow):
                if frame.frame_type is FrameType.ROWS:
                    return idx + 1 if upper else idx.copy()
                return peers[1].copy() if upper else peers[0].copy()
            if frame.frame_type is FrameType.ROWS:
                k = _int_literal(b, "ROWS frame")
                return idx + k + 1 if upper else idx + k
            return self._range_bound(b, upper, chunk)

        lo = np.clip(bound(frame.lower, False), 0, self.N)
        hi = np.clip(bound(frame.upper, True), 0, self.N)
        clo, chi = self._frame_carry.get(frame, (0, 0))
        hi = np.maximum.accumulate(np.maximum(hi, chi))  # as evaluate_windows: running maxima
        lo = np.maximum.accumulate(np.maximum(np.minimum(lo, hi), clo))
        self._frame_carry[frame] = (int(lo[-1]), int(hi[-1]))
        return lo, hi

    def _range_bound(self, offset: Expression, upper: bool, chunk: pa.RecordBatch) -> np.ndarray:
        order, key_expr = self.order_spec[0], self.bound_order[0]
        value = _fold(offset)
        if value is None:
            raise InternalError(f"RANGE frame offset {offset.sql()} is NULL")
        off = Literal(value if order.ascending else -value, offset.data_type)
        n = chunk.num_rows
        target = to_array(_bound_expression(key_expr, off, self.tz).eval(chunk), n)
        key_type = self._column(0, key_expr).type
        needles = _sort_words(conform(target, key_type), order)
        lasts_key = ("last", id(key_expr))
        if lasts_key not in self._kept:
            lasts = pa.concat_arrays([self._column(k, key_expr).slice(
                int(self.off[k + 1] - self.off[k]) - 1) for k in range(self.B)])
            words = _sort_words(lasts, order)
            self._hold(sum(w.nbytes for w in words))
            self._kept[lasts_key] = words
        lasts = self._kept[lasts_key]
        kb = _search(np.zeros(self.B, np.int64), lasts, np.zeros(n, np.int64), needles,
                     strict=upper)
        pos = np.full(n, self.N, dtype=np.int64)
        for k in np.unique(kb[kb < self.B]):
            sel = np.flatnonzero(kb == k)
            data = _sort_words(self._column(int(k), key_expr), order)
            local = _search(np.zeros(len(data[0]), np.int64), data,
                            np.zeros(len(sel), np.int64), [w[sel] for w in needles], upper)
            pos[sel] = self.off[k] + local
        return pos

    # -- aggregates ---------------------------------------------------------------------------

    def _agg_args(self, agg: AggregateExpression, k: int
                  ) -> tuple[list[pa.Array], np.ndarray | None]:
        b, cols, size = self._entry(k)
        key = ("agg", id(agg))
        got = cols.get(key)
        if got is None:
            n = b.num_rows
            mask = None
            if agg.filter is not None:
                mask = to_mask(to_array(prepare(agg.filter, self.attrs).eval(b), n))
            args = []
            for c in agg.func.children:
                e = prepare(c, self.attrs)
                arr = to_array(e.eval(b), n) if mask is None else eval_where(e, b, mask)
                args.append(conform(arr, c.data_type.to_arrow()))
            got = cols[key] = (args, mask)
            nb = sum(a.nbytes for a in args)
            self._hold(nb)
            size[0] += nb
        return got

    def _block_buffers(self, agg: AggregateExpression) -> list[pa.Array]:
        """One aggregation buffer per stored batch (kept for the partition)."""
        key = ("blocks", id(agg))
        if key not in self._kept:
            func = agg.func
            per = []
            for k in range(self.B):
                args, mask = self._agg_args(agg, k)
                n = int(self.off[k + 1] - self.off[k])
                per.append(update_buffers(func, args, mask, np.zeros(n, np.int64), 1))
            cols = []
            for f in range(len(per[0])):
                t = per[0][f].type
                cols.append(pa.concat_arrays([p[f] if p[f].type == t else p[f].cast(t)
                                              for p in per]))
            self._hold(sum(c.nbytes for c in cols))
            self._kept[key] = cols
        return self._kept[key]

    def _running_float(self, agg: AggregateExpression, hi: np.ndarray, with_count: bool
                       ) -> list[pa.Array]:
        """A floating sum / avg over running frames ``[0, hi)`` added in row order, as Spark
        (and :func:`ember.execution.window._running_float_buffers`) does: the row-order total
        before each stored batch is kept (one pass), then the rows up to ``hi`` are added to
        it."""
        key = ("seq", id(agg))
        if key not in self._kept:
            seq = np.zeros(self.B + 1, dtype=np.float64)
            cnt = np.zeros(self.B + 1, dtype=np.int64)
            for k in range(self.B):
                x, valid = _float_values(*self._float_args(agg, k))
                seq[k + 1] = np.cumsum(np.concatenate([[seq[k]], x]))[-1]
                cnt[k + 1] = cnt[k] + int(valid.sum())
            self._hold(seq.nbytes + cnt.nbytes)
            self._kept[key] = (seq, cnt)
        seq, cnt = self._kept[key]
        n = len(hi)
        total = np.zeros(n, dtype=np.float64)
        count = np.zeros(n, dtype=np.int64)
        rows = np.flatnonzero(hi > 0)
        for k, sel, local in self._by_batch(hi[rows] - 1):
            x, valid = _float_values(*self._float_args(agg, k))
            total[rows[sel]] = np.cumsum(np.concatenate([[seq[k]], x]))[local + 1]
            count[rows[sel]] = cnt[k] + np.cumsum(valid)[local]
        return _running_float_result(total, count, with_count)

    def _float_args(self, agg: AggregateExpression, k: int
                    ) -> tuple[pa.Array, np.ndarray | None]:
        args, mask = self._agg_args(agg, k)
        return args[0], mask

    def _aggregate(self, agg: AggregateExpression, lo: np.ndarray, hi: np.ndarray) -> pa.Array:
        func = agg.func
        if not func.supports_buffers:
            raise UnsupportedError(
                f"The aggregate function {func.pretty_name} over a window partition larger "
                "than the memory budget is not supported yet")
        n = len(lo)
        with_count = _running_float_kind(func) if func.children else None
        if with_count is not None and not (lo > 0).any():
            return func.evaluate(self._running_float(agg, hi, with_count))
        blocks = self._block_buffers(agg)
        rows = np.arange(n, dtype=np.int64)
        some = lo < hi
        bl = self._batch_of(lo)
        bh = self._batch_of(np.maximum(hi - 1, 0))
        two = some & (bl != bh)
        pieces: list[tuple[np.ndarray, int, list[pa.Array]]] = []  # (rows, slot, buffers)
        # the partial batches: [lo, hi) within one batch, or lo's batch from lo / hi's before hi
        q_rows = np.concatenate([rows[some], rows[two]])
        q_batch = np.concatenate([bl[some], bh[two]])
        q_lo = np.concatenate([lo[some], self.off[bh[two]]])
        q_hi = np.concatenate([np.where(two, self.off[bl + 1], hi)[some], hi[two]])
        q_slot = np.concatenate([np.zeros(int(some.sum()), np.int64),
                                 np.full(int(two.sum()), 2, np.int64)])
        for k in np.unique(q_batch):
            sel = np.flatnonzero(q_batch == k)
            args, mask = self._agg_args(agg, int(k))
            m = int(self.off[k + 1] - self.off[k])
            leaves = update_buffers(func, args, mask, np.arange(m, dtype=np.int64), m)
            got = segment_tree_buffers(func, leaves, q_lo[sel] - self.off[k],
                                       q_hi[sel] - self.off[k])
            for slot in (0, 2):
                s = np.flatnonzero(q_slot[sel] == slot)
                if len(s):
                    idx = pa.array(s)
                    pieces.append((q_rows[sel][s], slot, [c.take(idx) for c in got]))
        mid = two & (bh > bl + 1)
        if mid.any():
            got = segment_tree_buffers(func, blocks, bl[mid] + 1, bh[mid])
            pieces.append((rows[mid], 1, got))
        if not pieces:
            empty = [c.slice(0, 0) for c in blocks]
            return func.evaluate(merge_buffers(func, empty, np.zeros(0, np.int64), n))
        gids = np.concatenate([p[0] for p in pieces])
        slots = np.concatenate([np.full(len(p[0]), p[1], np.int64) for p in pieces])
        cols = []
        for f in range(len(blocks)):
            t = blocks[f].type
            cols.append(pa.concat_arrays([p[2][f] if p[2][f].type == t else p[2][f].cast(t)
                                          for p in pieces]))
        order = np.lexsort([slots, gids])  # per row: left piece, whole batches, right piece
        idx = pa.array(order)
        merged = merge_buffers(func, [c.take(idx) for c in cols], gids[order], n)
        return func.evaluate(merged)

    # -- functions ----------------------------------------------------------------------------

    def _offset(self, fn: FrameLessOffsetWindowFunction, j: int, chunk: pa.RecordBatch
                ) -> pa.Array:
        n = chunk.num_rows
        t = fn.data_type.to_arrow()
        k = _int_literal(fn.row_offset, fn.function_name)
        idx = self.off[j] + np.arange(n, dtype=np.int64)
        values = self._prepare(fn.input)
        if not fn.ignore_nulls or k == 0:
            pos = idx + k
            ok = (pos >= 0) & (pos < self.N)
        else:
            total = self._nonnull_prefix(values)[-1]
            jj = (self._nonnull_before(values, idx + 1) + k - 1 if k > 0
                  else self._nonnull_before(values, idx) + k)
            ok = (jj >= 0) & (jj < total)
            pos = np.zeros(n, dtype=np.int64)
            pos[ok] = self._nth_nonnull(values, jj[ok])
        got = self._gather(values, pos, ok, t)
        default = conform(to_array(prepare(fn.default, self.attrs).eval(chunk), n), t)
        if default.null_count == len(default):
            return got
        return pc.if_else(pa.array(ok), got, default)

    def _nth_value(self, fn: NthValue, lo: np.ndarray, hi: np.ndarray) -> pa.Array:
        nth = _int_literal(fn.offset, "nth_value")
        values = self._prepare(fn.input)
        t = fn.data_type.to_arrow()
        if not fn.ignore_nulls:
            pos = lo + nth - 1
            return self._gather(values, pos, (pos >= lo) & (pos < hi), t)
        total = self._nonnull_prefix(values)[-1]
        jj = self._nonnull_before(values, lo) + nth - 1
        ok = jj < total
        pos = np.zeros(len(lo), dtype=np.int64)
        pos[ok] = self._nth_nonnull(values, jj[ok])
        ok &= (pos >= lo) & (pos < hi)
        return self._gather(values, pos, ok, t)

    def _ranking(self, fn: Expression, j: int, n: int,
                 peers: tuple[np.ndarray, np.ndarray, np.ndarray]) -> np.ndarray:
        if isinstance(fn, DenseRank):
            return (self._groups_before + np.cumsum(peers[2])).astype(np.int32)
        c0 = int(self.off[j])
        lay = SimpleNamespace(n=n, part_start=np.full(n, -c0, np.int64),
                              part_end=np.full(n, self.N - c0, np.int64),
                              part_size=np.full(n, self.N, np.int64),
                              peer_start=peers[0] - c0, peer_end=peers[1] - c0)
        return ranking_values(fn, lay)  # type: ignore[arg-type]

    def chunks(self, functions: Sequence[Expression]
               ) -> Iterator[tuple[pa.RecordBatch, list[pa.Array | np.ndarray]]]:
        """Per stored batch: the batch and each function's values over its rows; a function is
        an ``Alias(WindowExpression(...))`` / ``WindowExpression`` or a bare ranking function
        (values as a NumPy array)."""
        for j in range(self.B):
            chunk = self._entry(j)[0]
            n = chunk.num_rows
            peers = self._peers(j, n)
            bounds: dict[SpecifiedWindowFrame, tuple[np.ndarray, np.ndarray]] = {}
            out: list[pa.Array | np.ndarray] = []
            for f in functions:
                we = f.child if isinstance(f, Alias) else f
                if not isinstance(we, WindowExpression):
                    out.append(self._ranking(we, j, n, peers))
                    continue
                fn = we.window_function
                if isinstance(fn, _RANKING):
                    col: pa.Array = pa.array(self._ranking(fn, j, n, peers))
                elif isinstance(fn, FrameLessOffsetWindowFunction):
                    col = self._offset(fn, j, chunk)
                else:
                    frame = we.spec.frame
                    if frame not in bounds:
                        bounds[frame] = self._frame(frame, j, chunk, peers)
                    lo, hi = bounds[frame]
                    if isinstance(fn, NthValue):
                        col = self._nth_value(fn, lo, hi)
                    elif isinstance(fn, AggregateExpression):
                        col = self._aggregate(fn, lo, hi)
                    else:
                        raise UnsupportedError(f"The window function {fn.sql()} is not supported")
                out.append(conform(col, we.data_type.to_arrow()))
            self._groups_before += int(peers[2].sum())
            yield chunk, out
