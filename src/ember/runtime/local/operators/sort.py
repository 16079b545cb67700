"""SortExec: per-partition sort with Spark's ordering rules (``execution.kernels.sort``), spilling
sorted runs to disk past the memory budget and merging them.

A global sort (``is_global``) runs after a range-partitioning exchange (or on a single
partition): sorting each partition then yields a totally ordered result.  Should the child's
partitions not be range partitioned by the sort order, they are sorted as one partition.

Spilling.  Input batches are reserved from the run's memory budget as they arrive; when a
reservation fails, the buffered batches are sorted and written as one *run* (an Arrow IPC file in
chunks of bounded size) and released.  At the end the runs are merged, vectorized: each step
concatenates the current chunk of every run, sorts it (stable, runs in input order), and emits
every row up to the earliest position of a "last loaded row" among runs that still have chunks on
disk -- no unread row can sort before it.  Runs whose chunk was emitted entirely load their next
chunk.  Ties keep input order exactly as an in-memory stable sort would: among equal keys, rows of
earlier runs come first, and within a run their order is kept.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING

import numpy as np
import pyarrow as pa

from ember.execution.kernels.batches import concat, schema_of, slices, take
from ember.execution.kernels.sort import sort_indices
from ember.execution.prepare import prepare
from ember.expressions.base import SortOrder
from ember.expressions.common import to_array
from ember.physical.nodes import SortExec
from ember.physical.partitioning import OrderedDistribution
from ember.runtime.local.memory import SpillFile
from ember.runtime.local.operators.basic import chain
from ember.runtime.local.registry import PartitionFn, operator

if TYPE_CHECKING:
    from ember.runtime.local.context import RunContext

__all__ = ["sort_batches", "merge_runs"]


def _perm(batch: pa.RecordBatch, bound: Sequence, orders: Sequence[SortOrder]) -> np.ndarray:
    keys = [to_array(e.eval(batch), batch.num_rows) for e in bound]
    return sort_indices(keys, [o.ascending for o in orders],
                        [o.effective_nulls_first for o in orders])


def _chunk_rows(batch: pa.RecordBatch, budget: int, batch_size: int) -> int:
    per_row = max(1, batch.nbytes // max(1, batch.num_rows))
    return int(min(max(budget // (16 * per_row), 64, min(batch_size, 4096)), 1 << 16))


#: a sort emits its buffered rows in this many groups at least: each group is gathered from the
#: buffered batches on its own, so sorting a buffer holds about ``1 + 2 / _GROUPS`` times it
_GROUPS = 8


def sorted_groups(buf: Sequence[pa.RecordBatch], schema: pa.Schema, bound: Sequence,
                  orders: Sequence[SortOrder]) -> Iterator[pa.RecordBatch]:
    """The rows of ``buf`` sorted (stable), in about ``_GROUPS`` consecutive batches, without
    concatenating ``buf``: only the sort keys are concatenated; each group takes its rows from
    every buffered batch (one ``take`` each, rows in batch order) and puts them in sorted order
    with one more ``take``."""
    if len(buf) == 1 or not len(schema):
        whole = concat(buf, schema)
        yield take(whole, _perm(whole, bound, orders))
        return
    keys = [pa.concat_arrays([to_array(e.eval(b), b.num_rows) for b in buf]) for e in bound]
    perm = sort_indices(keys, [o.ascending for o in orders],
                        [o.effective_nulls_first for o in orders])
    del keys
    starts = np.cumsum([0] + [b.num_rows for b in buf[:-1]]).astype(np.int64)
    step = max(1, -(-len(perm) // _GROUPS))
    for lo in range(0, len(perm), step):
        idx = perm[lo:lo + step]
        which = np.searchsorted(starts, idx, side="right") - 1
        by_batch = np.argsort(which, kind="stable")
        cuts = np.searchsorted(which[by_batch], np.arange(len(buf) + 1))
        pieces = [take(buf[j], idx[by_batch[cuts[j]:cuts[j + 1]]] - starts[j])
                  for j in range(len(buf)) if cuts[j + 1] > cuts[j]]
        gathered = concat(pieces, schema)
        del pieces
        back = np.empty(len(idx), dtype=np.int64)
        back[by_batch] = np.arange(len(idx), dtype=np.int64)
        yield take(gathered, back)


def sort_batches(batches: Iterator[pa.RecordBatch], attrs: Sequence, orders: Sequence[SortOrder],
                 rt: RunContext, metrics) -> Iterator[pa.RecordBatch]:
    """All of ``batches`` (columns ``attrs``) sorted by ``orders``, in batches of the run's batch
    size, spilling past the memory budget (see module docstring)."""
    schema = schema_of(attrs)
    bound = [prepare(o.child, attrs) for o in orders]
    mem = rt.memory
    size = rt.ctx.batch_size
    buf: list[pa.RecordBatch] = []
    held = 0
    runs: list[SpillFile] = []

    def spill() -> None:
        nonlocal buf, held
        rows = _chunk_rows(buf[0], mem.budget, size)
        pieces = (p for g in sorted_groups(buf, schema, bound, orders) for p in slices(g, rows))
        f = rt.spill_dir.write(pieces, schema, prefix="sort")
        runs.append(f)
        metrics.add(spill_size=f.nbytes)
        mem.release(held)
        buf, held = [], 0

    try:
        for b in batches:
            if not b.num_rows:
                continue
            nb = b.nbytes
            if not mem.try_acquire(nb):
                if buf and len(schema):
                    spill()
                if not mem.try_acquire(nb):
                    mem.force_acquire(nb)
            buf.append(b)
            held += nb
            metrics.record_memory(held)
        if not runs:
            if not buf:
                return
            for g in sorted_groups(buf, schema, bound, orders):
                yield from slices(g, size)
            return
        if buf:
            spill()
        yield from merge_runs(runs, bound, orders, schema, size)
    finally:
        mem.release(held)


def merge_runs(runs: Sequence[SpillFile], bound: Sequence, orders: Sequence[SortOrder],
               schema: pa.Schema, batch_size: int) -> Iterator[pa.RecordBatch]:
    """Merge sorted spill ``runs`` into one sorted stream (vectorized, chunk by chunk)."""
    readers = [f.reader() for f in runs]
    nb = [r.num_record_batches for r in readers]
    pos = [0] * len(runs)
    bufs: list[pa.RecordBatch | None] = [None] * len(runs)
    pending: list[pa.RecordBatch] = []
    pending_rows = 0
    while True:
        for r in range(len(runs)):
            while (bufs[r] is None or bufs[r].num_rows == 0) and pos[r] < nb[r]:
                bufs[r] = readers[r].get_batch(pos[r])
                pos[r] += 1
        active = [r for r in range(len(runs)) if bufs[r] is not None and bufs[r].num_rows]
        if not active:
            break
        parts = [bufs[r] for r in active]
        lengths = np.array([p.num_rows for p in parts], dtype=np.int64)
        ends = np.cumsum(lengths)
        cat = concat(parts, schema)
        perm = _perm(cat, bound, orders)
        more = [i for i, r in enumerate(active) if pos[r] < nb[r]]
        if more:
            inv = np.empty(len(perm), dtype=np.int64)
            inv[perm] = np.arange(len(perm), dtype=np.int64)
            cut = int(min(inv[ends[i] - 1] for i in more)) + 1
        else:
            cut = len(perm)
        chosen = perm[:cut]
        run_of = np.searchsorted(ends, chosen, side="right")
        taken = np.bincount(run_of, minlength=len(active))
        for i, r in enumerate(active):
            bufs[r] = bufs[r].slice(int(taken[i]))  # type: ignore[union-attr]
        out = take(cat, chosen)
        pending.append(out)
        pending_rows += out.num_rows
        if pending_rows >= batch_size:
            yield from slices(concat(pending, schema), batch_size)
            pending, pending_rows = [], 0
    if pending:
        yield from slices(concat(pending, schema), batch_size)


@operator(SortExec)
def run_sort(node: SortExec, rt: RunContext) -> list[PartitionFn]:
    child = node.child
    parts = rt.execute(child)
    metrics = rt.metrics.node(node)
    if node.is_global and len(parts) > 1 and not child.output_partitioning.satisfies(
            OrderedDistribution(node.sort_order)):
        whole = list(parts)
        parts = [lambda: chain(whole)]

    def part(fn: PartitionFn) -> PartitionFn:
        return lambda: sort_batches(fn(), child.output, node.sort_order, rt, metrics)

    return [part(p) for p in parts]
