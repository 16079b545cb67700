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

Memory: buffered batches are reserved from the run's memory budget; a window partition larger
than the budget is still held whole (``force_acquire``, as a sort buffer's single oversized
batch is): window frames may reach any row of their partition, and there is no spilling of a
single partition yet.  Without PARTITION BY the whole (single) input partition is one window
partition.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING

import numpy as np
import pyarrow as pa

from ember.execution.kernels.batches import concat, make_batch, schema_of, slices, take
from ember.execution.kernels.keys import encode_arrays
from ember.execution.prepare import prepare
from ember.execution.window import WindowLayout, evaluate_windows, ranking_values
from ember.expressions.common import to_array
from ember.physical.nodes import WindowExec, WindowGroupLimitExec
from ember.runtime.local.registry import PartitionFn, operator

if TYPE_CHECKING:
    from ember.runtime.local.context import RunContext

__all__ = ["window_chunks"]


def _last_start(keys: list[pa.Array], prev: list[pa.Array] | None) -> int | None:
    """The position in this batch of the last row starting a new partition (compared with the
    previous row, ``prev`` holding the previous batch's last row), or None."""
    n = len(keys[0])
    cols = keys if prev is None else [pa.concat_arrays([p, k]) for p, k in zip(prev, keys)]
    codes = encode_arrays(cols, nulls_equal=True)[0]
    diff = np.flatnonzero(codes[1:] != codes[:-1])  # row j + 1 of cols starts a partition
    if prev is not None:
        return int(diff[-1]) if len(diff) else None
    return int(diff[-1]) + 1 if len(diff) else (0 if n else None)


def window_chunks(batches: Iterator[pa.RecordBatch], attrs: Sequence,
                  partition_spec: Sequence, rt: RunContext, metrics
                  ) -> Iterator[pa.RecordBatch]:
    """The rows of ``batches`` (sorted by ``partition_spec`` first) regrouped into batches of
    complete window partitions, each at least the batch size unless it is the last."""
    schema = schema_of(attrs)
    bound = [prepare(e, attrs) for e in partition_spec]
    mem = rt.memory
    min_rows = rt.ctx.batch_size
    buf: list[pa.RecordBatch] = []
    held = 0
    buf_rows = 0
    complete = 0  # rows of ``buf`` before the last partition start seen
    prev: list[pa.Array] | None = None
    try:
        for b in batches:
            n = b.num_rows
            if not n:
                continue
            nb = b.nbytes
            if not mem.try_acquire(nb):
                mem.force_acquire(nb)
            held += nb
            metrics.record_memory(held)
            if bound:
                keys = [to_array(e.eval(b), n) for e in bound]
                start = _last_start(keys, prev)
                prev = [k.slice(n - 1) for k in keys]
                if start is not None:
                    complete = buf_rows + start
            buf.append(b)
            buf_rows += n
            if complete >= min_rows:
                whole = concat(buf, schema)
                yield whole.slice(0, complete)
                rest = whole.slice(complete)
                buf, buf_rows, complete = [rest], rest.num_rows, 0
                keep = rest.nbytes
                mem.release(max(0, held - keep))
                held = min(held, keep)
        if buf_rows:
            yield concat(buf, schema)
    finally:
        mem.release(held)


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
            n = chunk.num_rows
            lay = WindowLayout([to_array(e.eval(chunk), n) for e in bound_part],
                               [to_array(e.eval(chunk), n) for e in bound_order], n)
            rank = ranking_values(node.rank_like_function, lay)
            keep = np.flatnonzero(rank <= node.limit)
            if len(keep):
                yield from slices(take(chunk, keep) if len(keep) < n else chunk, size)

    return [(lambda fn=p: run(fn)) for p in parts]
