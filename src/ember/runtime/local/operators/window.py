"""WindowExec and WindowGroupLimitExec on the local runtime.

Both read a partition whose rows arrive sorted by the partition keys, then the order keys
(EnsureRequirements' Sort; for WindowExec and a Final WindowGroupLimitExec the partition also
holds whole window partitions, after the exchange).  :func:`window_chunks` cuts the stream
into chunks of *complete* window partitions: each incoming batch's partition keys are compared
with the previous row's (one key encoding per batch), and once the buffered rows before the
last partition start reach the batch size they go out as one chunk, the incomplete last
partition staying behind.  Each chunk is evaluated at once, vectorized over all its partitions
(:func:`ember.execution.window.evaluate_windows`), so small partitions are batched together
and memory holds at most the largest window partition plus a batch.

Memory: buffered batches are reserved from the run's memory budget.  When a reservation fails,
the complete partitions held go out first; if the rows of one incomplete partition still do
not fit, that partition -- what is held and its rows still to come -- is written to a spill
file in batches of about a sixteenth of the budget and comes out as a
:class:`SpilledPartition`, which the operators evaluate chunk by chunk
(:class:`~ember.execution.window_spilled.SpilledWindow`, reading back a few batches at a time).
Without PARTITION BY the whole (single) input partition is one window partition.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import TYPE_CHECKING

import numpy as np
import pyarrow as pa

from ember.execution.kernels.batches import concat, make_batch, schema_of, slices, take
from ember.execution.kernels.keys import encode_arrays
from ember.execution.prepare import prepare
from ember.execution.window import WindowLayout, evaluate_windows, ranking_values
from ember.execution.window_spilled import SpilledWindow
from ember.expressions.common import to_array
from ember.physical.nodes import WindowExec, WindowGroupLimitExec
from ember.runtime.local.memory import SpillFile
from ember.runtime.local.registry import PartitionFn, operator

if TYPE_CHECKING:
    from ember.runtime.local.context import RunContext

__all__ = ["SpilledPartition", "window_chunks"]


def _starts(keys: list[pa.Array], prev: list[pa.Array] | None) -> np.ndarray:
    """The positions in this batch of the rows starting a new partition (compared with the
    previous row, ``prev`` holding the previous batch's last row; row 0 of the first batch
    starts one)."""
    cols = keys if prev is None else [pa.concat_arrays([p, k]) for p, k in zip(prev, keys)]
    codes = encode_arrays(cols, nulls_equal=True)[0]
    diff = np.flatnonzero(codes[1:] != codes[:-1])  # row j + 1 of cols starts a partition
    if prev is not None:
        return diff
    return np.concatenate([[0], diff + 1]).astype(np.int64)


class SpilledPartition:
    """One window partition written to a spill file in batches (``offsets``: each batch's
    first row, then the row count), read back by :class:`~ember.execution.window_spilled.
    SpilledWindow`."""

    def __init__(self, file: SpillFile, counts: list[int]) -> None:
        self.file = file
        self.offsets = np.concatenate([[0], np.cumsum(counts)]).astype(np.int64)
        self._reader = file.reader()

    def batch(self, k: int) -> pa.RecordBatch:
        return self._reader.get_batch(k)


def _spill_rows(per_row: int, budget: int, batch_size: int) -> int:
    """Rows per spilled batch: about a sixteenth of the budget, so the few batches read back
    at once stay well within it."""
    return int(max(8, min(batch_size, budget // (16 * max(1, per_row)))))


def window_chunks(batches: Iterator[pa.RecordBatch], attrs: Sequence,
                  partition_spec: Sequence, rt: RunContext, metrics
                  ) -> Iterator[pa.RecordBatch | SpilledPartition]:
    """The rows of ``batches`` (sorted by ``partition_spec`` first) regrouped into batches of
    complete window partitions, each at least the batch size unless it is the last; a window
    partition that does not fit the memory budget comes as a :class:`SpilledPartition`."""
    schema = schema_of(attrs)
    bound = [prepare(e, attrs) for e in partition_spec]
    mem = rt.memory
    min_rows = rt.ctx.batch_size
    buf: list[pa.RecordBatch] = []
    held = 0
    buf_rows = 0
    complete = 0  # rows of ``buf`` before the last partition start seen
    prev: list[pa.Array] | None = None
    source = iter(batches)
    # the rest of a batch cut where a spilled partition ended, with its partition starts
    pending: list[tuple[pa.RecordBatch, np.ndarray]] = []

    def next_batch() -> tuple[pa.RecordBatch, np.ndarray] | None:
        if pending:
            return pending.pop()
        b = next(source, None)
        while b is not None and not b.num_rows:
            b = next(source, None)
        return None if b is None else (b, starts_of(b))

    def starts_of(b: pa.RecordBatch) -> np.ndarray:
        nonlocal prev
        n = b.num_rows
        if not bound:  # one window partition
            first = prev is None
            prev = []
            return np.zeros(1 if first else 0, dtype=np.int64)
        keys = [to_array(e.eval(b), n) for e in bound]
        st = _starts(keys, prev)
        prev = [k.slice(n - 1) for k in keys]
        return st

    def spill(first: pa.RecordBatch, first_starts: np.ndarray) -> SpilledPartition:
        """Write ``buf`` (one incomplete partition) and the rows of that partition still to
        come, from ``first`` on, to a spill file."""
        nonlocal buf, buf_rows
        per_row = max(1, sum(b.nbytes for b in buf) // max(1, buf_rows))
        rows = _spill_rows(per_row, mem.budget, min_rows)
        counts: list[int] = []

        def rows_of_partition() -> Iterator[pa.RecordBatch]:
            nonlocal held
            for b in buf:
                yield b
            mem.release(held)
            held = 0
            got: tuple[pa.RecordBatch, np.ndarray] | None = (first, first_starts)
            while got is not None:
                b, st = got
                if len(st):
                    cut = int(st[0])
                    if cut:
                        yield b.slice(0, cut)
                    pending.append((b.slice(cut), st - cut))
                    return
                yield b
                got = next_batch()

        def sliced() -> Iterator[pa.RecordBatch]:  # batches of ``rows`` rows (the last fewer)
            acc: list[pa.RecordBatch] = []
            acc_rows = 0
            for b in rows_of_partition():
                acc.append(b)
                acc_rows += b.num_rows
                if acc_rows >= rows:
                    whole = concat(acc, schema)
                    full = acc_rows // rows * rows
                    for s in slices(whole.slice(0, full), rows):
                        counts.append(s.num_rows)
                        yield s
                    acc, acc_rows = [whole.slice(full)], acc_rows - full
            if acc_rows:
                counts.append(acc_rows)
                yield concat(acc, schema)

        f = rt.spill_dir.write(sliced(), schema, prefix="window")
        metrics.add(spill_size=f.nbytes, spill_count=1)
        buf, buf_rows = [], 0
        return SpilledPartition(f, counts)

    def emit_complete() -> Iterator[pa.RecordBatch]:
        """The complete partitions held, released once evaluated."""
        nonlocal buf, buf_rows, complete, held
        whole = concat(buf, schema)
        yield whole.slice(0, complete)
        rest = whole.slice(complete)
        buf, buf_rows, complete = [rest], rest.num_rows, 0
        keep = rest.nbytes
        mem.release(max(0, held - keep))
        held = min(held, keep)

    try:
        while True:
            got = next_batch()
            if got is None:
                break
            b, st = got
            n = b.num_rows
            if len(st) and st[0] == 0:
                complete = buf_rows  # the partitions held are complete
            nb = b.nbytes
            if not mem.try_acquire(nb):
                if complete:  # emit the complete partitions held, then try again
                    yield from emit_complete()
                if buf_rows and not mem.try_acquire(nb):
                    # the partition held so far does not fit: spill it with its remaining rows
                    yield spill(b, st)
                    continue
                if not buf_rows and not mem.try_acquire(nb):
                    mem.force_acquire(nb)
            held += nb
            metrics.record_memory(held)
            if len(st):
                complete = buf_rows + int(st[-1])
            buf.append(b)
            buf_rows += n
            if complete >= min_rows:
                yield from emit_complete()
        if buf_rows:
            yield concat(buf, schema)
    finally:
        mem.release(held)


@contextmanager
def _spilled_window(part: SpilledPartition, attrs: Sequence, order_spec: Sequence,
                    rt: RunContext, metrics) -> Iterator[SpilledWindow]:
    mem = rt.memory

    def reserve(nbytes: int) -> None:
        if not mem.try_acquire(nbytes):
            mem.force_acquire(nbytes)

    sw = SpilledWindow(part, attrs, order_spec, rt.ctx.time_zone, reserve, mem.release)
    try:
        yield sw
    finally:
        metrics.record_memory(sw.peak)
        sw.close()


@operator(WindowExec)
def run_window(node: WindowExec, rt: RunContext) -> list[PartitionFn]:
    child = node.child
    parts = rt.execute(child)
    metrics = rt.metrics.node(node)
    attrs = child.output
    schema = schema_of(node.output)
    size = rt.ctx.batch_size
    tz = rt.ctx.time_zone

    def run(fn: PartitionFn) -> Iterator[pa.RecordBatch]:
        for chunk in window_chunks(fn(), attrs, node.partition_spec, rt, metrics):
            if isinstance(chunk, SpilledPartition):
                with _spilled_window(chunk, attrs, node.order_spec, rt, metrics) as sw:
                    for part, cols in sw.chunks(node.window_expressions):
                        yield make_batch(list(part.columns) + cols, schema, part.num_rows)
                continue
            cols = evaluate_windows(chunk, attrs, node.window_expressions, node.partition_spec,
                                    node.order_spec, tz)
            out = make_batch(list(chunk.columns) + cols, schema, chunk.num_rows)
            yield from slices(out, size)

    return [(lambda fn=p: run(fn)) for p in parts]


@operator(WindowGroupLimitExec)
def run_window_group_limit(node: WindowGroupLimitExec, rt: RunContext) -> list[PartitionFn]:
    child = node.child
    parts = rt.execute(child)
    metrics = rt.metrics.node(node)
    attrs = child.output
    size = rt.ctx.batch_size

    def run(fn: PartitionFn) -> Iterator[pa.RecordBatch]:
        bound_part = [prepare(e, attrs) for e in node.partition_spec]
        bound_order = [prepare(o.child, attrs) for o in node.order_spec]
        for chunk in window_chunks(fn(), attrs, node.partition_spec, rt, metrics):
            if isinstance(chunk, SpilledPartition):
                with _spilled_window(chunk, attrs, node.order_spec, rt, metrics) as sw:
                    for part, (rank,) in sw.chunks([node.rank_like_function]):
                        keep = np.flatnonzero(rank <= node.limit)
                        if len(keep):
                            yield take(part, keep)
                continue
            n = chunk.num_rows
            lay = WindowLayout([to_array(e.eval(chunk), n) for e in bound_part],
                               [to_array(e.eval(chunk), n) for e in bound_order], n)
            rank = ranking_values(node.rank_like_function, lay)
            keep = np.flatnonzero(rank <= node.limit)
            if len(keep):
                yield from slices(take(chunk, keep) if len(keep) < n else chunk, size)

    return [(lambda fn=p: run(fn)) for p in parts]
