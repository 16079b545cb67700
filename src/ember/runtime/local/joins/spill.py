"""Spilling helpers of the joins: memory reservations against the run's budget, spill buckets
(Arrow IPC files of the run's :class:`~ember.runtime.local.memory.SpillDir`), and hash
partitioning of join keys for the grace hash join.

The budget is the runtime's :class:`~ember.runtime.local.memory.MemoryManager`
(``ember.execution.memoryBudget``, shared by every partition running in parallel).  An operator
reserves the bytes of each batch it holds with :meth:`Reservation.try_add`; when that fails it spills
and releases.  Tests and callers without a runtime pass a ``MemoryManager`` of their own.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence

import numpy as np
import pyarrow as pa

from ember.runtime.local.hashing import hash_columns
from ember.runtime.local.memory import MemoryManager, SpillDir, SpillFile, batch_bytes


class Reservation:
    """Bytes one operator partition holds against the shared budget."""

    def __init__(self, memory: MemoryManager) -> None:
        self.memory = memory
        self.held = 0

    def try_add(self, nbytes: int) -> bool:
        if self.memory.try_acquire(nbytes, self):
            self.held += nbytes
            return True
        return False

    def force_add(self, nbytes: int) -> None:
        self.memory.force_acquire(nbytes)
        self.held += nbytes

    def release_all(self) -> None:
        if self.held:
            self.memory.release(self.held)
            self.held = 0


class SpillBucket:
    """Rows destined for one spill partition: buffered up to ``flush_bytes`` then written as one
    IPC file of the run's spill directory (a bucket may hold several files)."""

    def __init__(self, spill_dir: SpillDir, schema: pa.Schema, flush_bytes: int,
                 prefix: str) -> None:
        self.spill_dir = spill_dir
        self.schema = schema
        self.flush_bytes = max(1, flush_bytes)
        self.prefix = prefix
        self.pending: list[pa.RecordBatch] = []
        self.pending_bytes = 0
        self.files: list[SpillFile] = []
        self.num_rows = 0
        self.bytes_written = 0

    def add(self, batch: pa.RecordBatch) -> None:
        if not batch.num_rows:
            return
        self.pending.append(batch)
        self.pending_bytes += batch_bytes(batch)
        self.num_rows += batch.num_rows
        if self.pending_bytes >= self.flush_bytes:
            self.flush()

    def flush(self) -> None:
        if self.pending:
            f = self.spill_dir.write(self.pending, self.schema, prefix=self.prefix)
            self.files.append(f)
            self.bytes_written += f.nbytes
            self.pending = []
            self.pending_bytes = 0

    def read(self) -> Iterator[pa.RecordBatch]:
        for f in self.files:
            yield from f
        yield from self.pending

    def delete(self) -> None:
        import os

        for f in self.files:
            try:
                os.remove(f.path)
            except OSError:
                pass
        self.files = []
        self.pending = []


_M = np.uint64(0x9E3779B97F4A7C15)


def key_partition_ids(keys: Sequence[pa.Array], num_partitions: int, level: int) -> np.ndarray:
    """Grace partition of each row at recursion ``level`` (equal keys -- both join sides --
    always land in the same partition; each level uses different hash bits, and not the low
    bits the shuffle exchange partitioned by)."""
    h = hash_columns(keys)
    with np.errstate(over="ignore"):
        h = h ^ (np.uint64(level + 1) * _M)
        h = h ^ (h >> np.uint64(29))
        h = h * np.uint64(0xBF58476D1CE4E5B9)
        h = h ^ (h >> np.uint64(32))
    return (h % np.uint64(num_partitions)).astype(np.int64)


def split_batch(batch: pa.RecordBatch, pids: np.ndarray,
                num_partitions: int) -> list[tuple[int, pa.RecordBatch]]:
    """``batch`` cut into the rows of each partition id (only non-empty parts; row order kept
    within a part)."""
    if batch.num_rows == 0:
        return []
    order = np.argsort(pids, kind="stable")
    bounds = np.searchsorted(pids[order], np.arange(num_partitions + 1))
    sorted_batch = batch.take(pa.array(order, type=pa.int64()))
    out = []
    for p in range(num_partitions):
        lo, hi = int(bounds[p]), int(bounds[p + 1])
        if hi > lo:
            out.append((p, sorted_batch.slice(lo, hi - lo)))
    return out
