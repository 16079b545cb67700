"""SortMergeJoinExec (Spark's, with its ``SortMergeJoinScanner``), block-wise.

Each partition's children arrive sorted ascending on their keys (EnsureRequirements inserts the
sorts).  RightOuter streams the right side and buffers the left; every other type streams left and
buffers right.  Instead of advancing row iterators, the scanner works on *windows* of pending rows:

1. the pending key columns of both sides are ranked jointly (:func:`joint_codes`: Spark's
   ordering via ``ember.execution.kernels.sort``, equality via the key encoder, so NaN == NaN and
   ``-0.0 == 0.0``); NULL keys get -1 and never match, and since inputs are sorted the codes of the
   non-NULL rows are non-decreasing on each side;
2. a streamed row whose key is below the buffered side's last pending key (or any row once the
   buffered side is exhausted) can be joined now: its whole buffered group is pending.  Its group
   is a run found with ``searchsorted`` and the join-type semantics (residual on pairs, NULL
   padding, semi/anti/existence) are the shared :class:`~ember.runtime.local.joins.kernel.JoinKernel`'s,
   stream-major, so the output keeps the streamed side's order;
3. a buffered row can be released once the streamed side has moved past its key; for FullOuter a
   released buffered row that never matched is emitted NULL-padded (a matched bitset follows the
   pending buffered rows);
4. when nothing can move, the buffered side (or the empty streamed side) reads its next input
   rows: whole input batches coalesced into a window of up to ``16 * batch_size`` rows
   (:data:`WINDOW_ROWS` at most; at most 1/16 of the memory budget in bytes), so the per-window
   costs (key coding, searches, kernel calls) are paid per large window.

NULL keys: streamed rows with a NULL key match nothing (inner/semi: skipped; outer/anti/existence:
emitted as unmatched); buffered rows with a NULL key are skipped, except for FullOuter where they
come out NULL-padded.

Spilling: the buffered side only accumulates rows of one key group (everything below it is
released).  When that group no longer fits the run's memory budget it is written to Arrow IPC
spill files and the streamed rows of that key are joined against it chunk by chunk as it is read
back (any number of times), with the matched bits kept in memory (one bit per row).
Metrics: ``spill_size``, ``peak_memory`` (buffered bytes).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from ember.errors import InternalError
from ember.execution.kernels.batches import concat, conform_batch, schema_of
from ember.execution.kernels.keys import encode_arrays, unify_types
from ember.execution.kernels.sort import sort_indices
from ember.expressions.base import Expression
from ember.physical.nodes import SortMergeJoinExec
from ember.plans.logical.join_type import BuildSide, ExistenceOutput, JoinType
from ember.runtime.local.joins.common import NodeMetricsSink, bind_all, layout_of, runtime_memory
from ember.runtime.local.joins.hashed_relation import eval_keys
from ember.runtime.local.joins.kernel import Candidates, JoinKernel, JoinLayout
from ember.runtime.local.joins.spill import Reservation, SpillBucket
from ember.runtime.local.memory import MemoryManager, SpillDir
from ember.runtime.local.registry import PartitionFn, operator

if TYPE_CHECKING:
    from ember.runtime.local.context import RunContext

_INF = np.iinfo(np.int64).max
#: Input batches are coalesced into windows of at least this many rows (bytes permitting).
WINDOW_ROWS = 1 << 17


def joint_codes(a_keys: Sequence[pa.Array], b_keys: Sequence[pa.Array]
                ) -> tuple[np.ndarray, np.ndarray]:
    """Order-preserving dense codes of two sides' key rows (equal keys <=> equal codes; a row
    with a NULL key column gets -1)."""
    na = len(a_keys[0]) if a_keys else 0
    fast = _integer_codes(a_keys, b_keys)
    if fast is not None:
        return fast[:na], fast[na:]
    cols = []
    for x, y in zip(a_keys, b_keys):
        x, y = unify_types(x, y)
        cols.append(pa.concat_arrays([x, y]))
    n = len(cols[0]) if cols else 0
    valid = np.ones(n, dtype=bool)
    for c in cols:
        if c.null_count:
            valid &= np.asarray(c.is_valid().to_numpy(zero_copy_only=False), dtype=bool)
    codes = np.full(n, -1, dtype=np.int64)
    idx = np.flatnonzero(valid)
    if len(idx):
        sub = cols if len(idx) == n else [c.take(pa.array(idx, type=pa.int64())) for c in cols]
        eq, _ = encode_arrays(sub, nulls_equal=True)
        order = sort_indices(sub, [True] * len(sub), [True] * len(sub))
        se = eq[order]
        new = np.ones(len(se), dtype=bool)
        new[1:] = se[1:] != se[:-1]
        ranks = np.empty(len(se), dtype=np.int64)
        ranks[order] = np.cumsum(new) - 1
        codes[idx] = ranks
    return codes[:na], codes[na:]


def _integer_codes(a_keys: Sequence[pa.Array], b_keys: Sequence[pa.Array]) -> np.ndarray | None:
    """One integer-like key column (same type both sides): its values shifted to start at 0 are
    already order-preserving codes -- no sort.  None when not applicable."""
    if len(a_keys) != 1:
        return None
    x, y = a_keys[0], b_keys[0]
    t = x.type
    if t != y.type:
        return None
    if pa.types.is_integer(t) and not pa.types.is_uint64(t):
        pass
    elif pa.types.is_date32(t):
        x, y = x.view(pa.int32()), y.view(pa.int32())
    elif pa.types.is_timestamp(t) or pa.types.is_date64(t):
        x, y = x.view(pa.int64()), y.view(pa.int64())
    else:
        return None
    arrs = []
    valid_parts = []
    for a in (x, y):
        if a.null_count:
            valid_parts.append(np.asarray(a.is_valid().to_numpy(zero_copy_only=False), bool))
            a = pc.fill_null(a, 0)
        else:
            valid_parts.append(None)
        arrs.append(np.asarray(a.to_numpy(zero_copy_only=False), dtype=np.int64))
    v = np.concatenate(arrs)
    if any(p is not None for p in valid_parts):
        valid = np.concatenate([p if p is not None else np.ones(len(a), bool)
                                for p, a in zip(valid_parts, arrs)])
    else:
        valid = None
    if not len(v):
        return v
    vv = v if valid is None else v[valid]
    if not len(vv):
        return np.full(len(v), -1, dtype=np.int64)
    lo, hi = int(vv.min()), int(vv.max())
    if hi - lo >= (1 << 62):
        return None
    codes = v - np.int64(lo)
    if valid is not None:
        codes[~valid] = -1
    return codes


def _first_at_least(codes: np.ndarray, bound: int) -> int:
    """Index of the first non-NULL code >= ``bound`` (len when none)."""
    hit = np.flatnonzero((codes >= 0) & (codes >= bound))
    return int(hit[0]) if len(hit) else len(codes)


def _last_code(codes: np.ndarray) -> int:
    nn = codes[codes >= 0]
    return int(nn[-1]) if len(nn) else -1


class _Pending:
    """The not yet released rows of one sorted input, with their evaluated keys."""

    def __init__(self, batches: Iterable[pa.RecordBatch], keys: Sequence[Expression],
                 schema: pa.Schema, window_rows: int = 1, window_bytes: int = 1 << 62) -> None:
        self.it = iter(batches)
        self.window_rows = max(1, window_rows)
        self.window_bytes = max(1, window_bytes)
        self.key_exprs = keys
        self.schema = schema
        self.batch: pa.RecordBatch = pa.RecordBatch.from_arrays(
            [pa.array([], type=f.type) for f in schema], schema=schema) if len(schema) else \
            pa.RecordBatch.from_struct_array(pa.array([], type=pa.struct([])))
        self.keys: list[pa.Array] = eval_keys(keys, self.batch)
        self.exhausted = False

    @property
    def num_rows(self) -> int:
        return self.batch.num_rows

    def next_batch(self) -> pa.RecordBatch | None:
        for b in self.it:
            if b.num_rows:
                return conform_batch(b, self.schema)
        self.exhausted = True
        return None

    def read(self) -> pa.RecordBatch | None:
        """Append the next input rows (None when exhausted): whole input batches, coalesced up
        to ``window_rows`` rows or ``window_bytes`` bytes, so that the per-window costs of the
        scanner (key coding, searches, kernel calls) are paid per large window, not per small
        input batch."""
        got: list[pa.RecordBatch] = []
        rows = nbytes = 0
        while rows < self.window_rows and nbytes < self.window_bytes:
            b = self.next_batch()
            if b is None:
                break
            got.append(b)
            rows += b.num_rows
            nbytes += b.nbytes
        if not got:
            return None
        b = got[0] if len(got) == 1 else concat(got, got[0].schema)
        self.append(b)
        return b

    def append(self, b: pa.RecordBatch) -> None:
        k = eval_keys(self.key_exprs, b)
        if self.batch.num_rows == 0:
            self.batch, self.keys = b, k
        else:
            self.batch = concat((self.batch, b), self.batch.schema)
            self.keys = [pa.concat_arrays([x, y]) for x, y in zip(self.keys, k)]

    def drop(self, n: int) -> None:
        if n:
            m = self.batch.num_rows - n
            self.batch = self.batch.slice(n, m)
            self.keys = [k.slice(n, m) for k in self.keys]

    def replace(self, batch: pa.RecordBatch) -> None:
        self.batch = batch
        self.keys = eval_keys(self.key_exprs, batch)


class SortMergeJoinScanner:
    """One partition of a sort-merge join (see the module docstring)."""

    def __init__(self, node_join_type: JoinType, layout: JoinLayout,
                 streamed: Iterable[pa.RecordBatch], buffered: Iterable[pa.RecordBatch],
                 streamed_keys: Sequence[Expression], buffered_keys: Sequence[Expression],
                 streamed_schema: pa.Schema, buffered_schema: pa.Schema,
                 memory: MemoryManager, spill_dir: SpillDir,
                 metrics: NodeMetricsSink | None = None) -> None:
        self.jt = node_join_type
        self.layout = layout
        # small batch sizes (tests) keep small windows: the window logic still runs many times
        rows = max(layout.batch_size, min(WINDOW_ROWS, 16 * layout.batch_size))
        cap = max(1, memory.budget // 16)
        self.S = _Pending(streamed, streamed_keys, streamed_schema, rows, cap)
        self.B = _Pending(buffered, buffered_keys, buffered_schema, rows, cap)
        # the buffered side is preserved too (FullOuter): its unmatched rows come out padded
        self.full = node_join_type.pads_unmatched(node_join_type.merge_streamed_side.other)
        self.memory = memory
        self.spill_dir = spill_dir
        self.metrics = metrics or NodeMetricsSink()
        self.res = Reservation(memory)
        self.over_budget = False
        self.b_matched = np.zeros(0, dtype=bool)
        # only matches matter: stop once the buffered side is exhausted and released
        self.matches_only = node_join_type.emits_matches_only

    # -- helpers -----------------------------------------------------------------------------

    def _reserve_buffered(self) -> None:
        want = self.B.batch.nbytes
        if want > self.res.held:
            if not self.res.try_add(want - self.res.held):
                self.over_budget = True
                self.res.force_add(want - self.res.held)
        elif want < self.res.held:
            self.memory.release(self.res.held - want)
            self.res.held = want
            self.over_budget = False
        self.metrics.record_memory(want)

    def _read_buffered(self) -> None:
        b = self.B.read()
        if b is not None:
            self.b_matched = np.concatenate([self.b_matched, np.zeros(b.num_rows, dtype=bool)])
            self._reserve_buffered()

    def _emit_buffered_unmatched(self, rows: np.ndarray) -> Iterator[pa.RecordBatch]:
        """FullOuter: buffered rows ``rows`` of the pending batch, NULL-padded."""
        if not len(rows):
            return
        none = np.full(len(rows), -1, dtype=np.int64)
        yield from self.layout.emit(None, self.B.batch, none, rows)

    def _release_buffered(self, n: int) -> Iterator[pa.RecordBatch]:
        if not n:
            return
        if self.full:
            rows = np.arange(n, dtype=np.int64)
            yield from self._emit_buffered_unmatched(rows[~self.b_matched[:n]])
        self.B.drop(n)
        self.b_matched = self.b_matched[n:]
        self._reserve_buffered()

    # -- main loop -----------------------------------------------------------------------------

    def run(self) -> Iterator[pa.RecordBatch]:
        try:
            yield from self._run()
        finally:
            self.res.release_all()

    def _run(self) -> Iterator[pa.RecordBatch]:
        S, B = self.S, self.B
        while True:
            if S.num_rows == 0 and not S.exhausted:
                S.read()
                continue
            if S.num_rows == 0 and S.exhausted:
                if not self.full:
                    return
                if B.num_rows == 0 and B.exhausted:
                    return
            if B.num_rows == 0 and B.exhausted and self.matches_only:
                return
            if B.num_rows == 0 and not B.exhausted and S.num_rows:
                self._read_buffered()
                continue
            scodes, bcodes = joint_codes(S.keys, B.keys) if S.keys else (
                np.zeros(S.num_rows, np.int64), np.zeros(B.num_rows, np.int64))
            lim_s = _INF if S.exhausted else _last_code(scodes)
            lim_b = _INF if B.exhausted else _last_code(bcodes)
            s_cut = S.num_rows if B.exhausted else _first_at_least(scodes, lim_b)
            b_cut = _first_at_least(bcodes, min(lim_s, lim_b))
            if S.exhausted and B.exhausted:
                b_cut = B.num_rows
            if s_cut:
                yield from self._join_window(S.batch.slice(0, s_cut), scodes[:s_cut], bcodes)
                S.drop(s_cut)
            if b_cut:
                yield from self._release_buffered(b_cut)
            if s_cut or b_cut:
                continue
            if S.exhausted and B.exhausted:
                return
            if not B.exhausted:
                bnn = bcodes[bcodes >= 0]
                if self.over_budget and len(bnn) and bnn[0] == bnn[-1]:
                    yield from self._spilled_group(bcodes)
                else:
                    self._read_buffered()
            elif not S.exhausted:
                S.read()

    def _join_window(self, sbatch: pa.RecordBatch, scodes: np.ndarray,
                     bcodes: np.ndarray) -> Iterator[pa.RecordBatch]:
        bidx = np.flatnonzero(bcodes >= 0)
        bc = bcodes[bidx]
        if len(bc):
            # one search over the distinct buffered codes (runs), not two over every row
            new = np.empty(len(bc), dtype=bool)
            new[0] = True
            np.not_equal(bc[1:], bc[:-1], out=new[1:])
            starts = np.flatnonzero(new)
            vals = bc[starts]
            sizes = np.diff(starts, append=len(bc))
            pos = np.minimum(np.searchsorted(vals, scodes), len(vals) - 1)
            hit = (scodes >= 0) & (vals[pos] == scodes)
            counts = np.where(hit, sizes[pos], 0).astype(np.int64)
            lo = starts[pos].astype(np.int64)
        else:
            counts = np.zeros(len(scodes), dtype=np.int64)
            lo = counts
        order = None if len(bidx) == len(bcodes) else bidx.astype(np.int64)
        cand = Candidates(counts, lo, order)
        kernel = JoinKernel(self.layout, self.B.batch)
        if self.full:
            kernel.build_matched = self.b_matched
        yield from kernel.process(sbatch, cand)

    # -- a buffered key group larger than the budget ---------------------------------------------

    def _spilled_group(self, bcodes: np.ndarray) -> Iterator[pa.RecordBatch]:
        S, B = self.S, self.B
        layout = self.layout
        first = int(np.flatnonzero(bcodes >= 0)[0])
        rep = [k.slice(first, 1) for k in B.keys]
        bucket = SpillBucket(self.spill_dir, B.schema, max(1 << 16, self.memory.budget // 8),
                             "smj-group")
        try:
            # 1. The group: the pending buffered rows (NULL-key rows go out now / are dropped) ...
            valid = bcodes >= 0
            if self.full and not valid.all():
                yield from self._emit_buffered_unmatched(np.flatnonzero(~valid))
            grp = B.batch.filter(pa.array(valid)) if not valid.all() else B.batch
            bucket.add(grp)
            B.replace(B.batch.slice(0, 0))
            self.b_matched = np.zeros(0, dtype=bool)
            self._reserve_buffered()
            # ... plus the following rows of the same key.
            while True:
                b = B.next_batch()
                if b is None:
                    break
                rc, c = joint_codes(rep, eval_keys(B.key_exprs, b))
                r = int(rc[0])
                end = _first_at_least(c, r + 1)
                nulls_in = np.flatnonzero(c[:end] < 0)
                if self.full and len(nulls_in):
                    none = np.full(len(nulls_in), -1, dtype=np.int64)
                    yield from layout.emit(None, b, none, nulls_in)
                keep = np.flatnonzero(c[:end] >= 0)
                if len(keep):
                    bucket.add(b.take(pa.array(keep, type=pa.int64())))
                if end < b.num_rows:
                    B.append(b.slice(end))
                    self.b_matched = np.zeros(B.num_rows, dtype=bool)
                    self._reserve_buffered()
                    break
            bucket.flush()
            self.metrics.add(spill_size=bucket.bytes_written)
            group_matched = np.zeros(bucket.num_rows, dtype=bool)
            # 2. The streamed rows of that key (and NULL keys before them), chunk by chunk.
            while True:
                if S.num_rows == 0:
                    if S.read() is None:
                        break
                sc, rc = joint_codes(S.keys, rep)
                r = int(rc[0])
                end = _first_at_least(sc, r + 1)
                if end:
                    yield from self._join_group(S.batch.slice(0, end), sc[:end] == r, bucket,
                                                group_matched)
                    S.drop(end)
                if S.num_rows:
                    break
            # 3. FullOuter: the group rows never matched.
            if self.full and not group_matched.all():
                off = 0
                for gb in bucket.read():
                    n = gb.num_rows
                    rows = np.flatnonzero(~group_matched[off:off + n])
                    if len(rows):
                        yield from layout.emit(None, gb, np.full(len(rows), -1, np.int64), rows)
                    off += n
        finally:
            bucket.delete()

    def _join_group(self, sbatch: pa.RecordBatch, in_group: np.ndarray, bucket: SpillBucket,
                    group_matched: np.ndarray) -> Iterator[pa.RecordBatch]:
        """Streamed rows ``sbatch`` (``in_group``: key equal to the spilled group's) against every
        row of the spilled group."""
        layout = self.layout
        n = sbatch.num_rows
        stream_matched = np.zeros(n, dtype=bool)
        off = 0
        for gb in bucket.read():
            m = gb.num_rows
            kernel = JoinKernel(layout, gb)
            cand = Candidates(np.where(in_group, m, 0).astype(np.int64))
            for si, bi, _ in cand.chunks(kernel.max_pairs):
                mask = kernel._mask(sbatch, si, bi)
                if mask is not None:
                    si, bi = si[mask], bi[mask]
                stream_matched[si] = True
                group_matched[off + bi] = True
                if kernel.emits_pairs and len(si):
                    yield from kernel._out(sbatch, si, bi)
            off += m
        rows = np.arange(n, dtype=np.int64)
        jt = self.jt
        kept = jt.existence_output
        if layout.join_type.outputs_right:
            if jt.pads_unmatched(jt.merge_streamed_side):  # the streamed side is kept
                un = rows[~stream_matched]
                none = np.full(len(un), -1, dtype=np.int64)
                if layout.build_left:
                    yield from layout.emit(None, sbatch, none, un)
                else:
                    yield from layout.emit(sbatch, None, un, none)
        elif kept is ExistenceOutput.MATCHED:
            yield from layout.emit(sbatch, None, rows[stream_matched], None)
        elif kept is ExistenceOutput.UNMATCHED:
            yield from layout.emit(sbatch, None, rows[~stream_matched], None)
        else:
            yield from layout.emit(sbatch, None, rows, None, exists=stream_matched)


def sort_merge_join_partition(
    node: Any, left: Iterable[pa.RecordBatch], right: Iterable[pa.RecordBatch], batch_size: int,
    memory: MemoryManager, spill_dir: SpillDir, metrics: NodeMetricsSink | None = None,
    rt: RunContext | None = None,
) -> Iterator[pa.RecordBatch]:
    """One partition of ``node`` (a SortMergeJoinExec) over its sorted children's batches
    (``rt``: the run, whose parents' reads let unread output columns go ungathered)."""
    jt: JoinType = node.join_type
    stream_right = jt.merge_streamed_side is BuildSide.RIGHT
    layout = layout_of(node, batch_size, build_left=stream_right, rt=rt)
    lkeys = bind_all(node.left_keys, node.left.output)
    rkeys = bind_all(node.right_keys, node.right.output)
    lschema, rschema = schema_of(node.left.output), schema_of(node.right.output)
    if stream_right:
        scanner = SortMergeJoinScanner(jt, layout, right, left, rkeys, lkeys, rschema, lschema,
                                       memory, spill_dir, metrics)
    else:
        scanner = SortMergeJoinScanner(jt, layout, left, right, lkeys, rkeys, lschema, rschema,
                                       memory, spill_dir, metrics)
    return scanner.run()


@operator(SortMergeJoinExec)
def run_sort_merge_join(node: SortMergeJoinExec, rt: RunContext) -> list[PartitionFn]:
    """One partition per co-partition of the (sorted) children."""
    lparts = rt.execute(node.left)
    rparts = rt.execute(node.right)
    if len(lparts) != len(rparts):
        raise InternalError(
            f"SortMergeJoin: children have {len(lparts)} and {len(rparts)} partitions")
    memory, spill_dir = runtime_memory(rt)
    metrics = NodeMetricsSink(rt, node)
    size = rt.ctx.batch_size

    def run(lp: PartitionFn, rp: PartitionFn) -> PartitionFn:
        return lambda: sort_merge_join_partition(node, lp(), rp(), size, memory, spill_dir,
                                                 metrics, rt)

    return [run(lp, rp) for lp, rp in zip(lparts, rparts)]
