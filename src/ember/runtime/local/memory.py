"""The memory budget of a local run and spill files.

``ember.execution.memoryBudget`` (bytes) bounds what blocking operators (sort buffers, exchange
partition buffers, join build sides) hold at once, summed over the partitions running in parallel.
An operator asks :meth:`MemoryManager.try_acquire` before keeping a batch; when the budget says no,
it spills what it holds to disk (Arrow IPC files under a per-run temporary directory) and releases
it.  A single batch larger than the whole budget is still accepted (:meth:`force_acquire`), so a
run always finishes; the budget is a target, not a hard limit on Arrow allocations.
"""

from __future__ import annotations

import itertools
import os
import shutil
import tempfile
import threading
import weakref
from collections.abc import Iterable, Iterator

import pyarrow as pa
import pyarrow.ipc as ipc

__all__ = ["MemoryManager", "SpillDir", "SpillFile", "batch_bytes"]


def batch_bytes(batch: pa.RecordBatch) -> int:
    """Bytes held by ``batch`` (its buffers, as Arrow counts them; slices share parents)."""
    try:
        return batch.get_total_buffer_size()
    except AttributeError:  # pragma: no cover - old pyarrow
        return batch.nbytes


class MemoryManager:
    """A thread-safe byte counter against a budget.

    Holders of buffers that can be written out on request (an exchange's finished map outputs)
    register as *spillable*: when a reservation does not fit, the largest of them is asked to
    spill first (Spark's TaskMemoryManager does the same with its consumers).
    """

    def __init__(self, budget: int) -> None:
        self.budget = max(1, int(budget))
        self.used = 0
        self.peak = 0
        self._lock = threading.Lock()
        self._spillables: list = []

    def register_spillable(self, holder) -> None:
        """``holder`` has ``spillable_bytes() -> int`` and ``spill() -> int`` (bytes released,
        after calling :meth:`release` itself)."""
        with self._lock:
            self._spillables.append(holder)

    def try_acquire(self, nbytes: int, requester=None) -> bool:
        """Reserve ``nbytes`` if that stays within the budget (after asking registered
        spillable holders other than ``requester`` to spill); False (nothing reserved) else."""
        while True:
            with self._lock:
                if self.used + nbytes <= self.budget:
                    self.used += nbytes
                    if self.used > self.peak:
                        self.peak = self.used
                    return True
                candidates = [h for h in self._spillables if h is not requester]
            sizes = [(h.spillable_bytes(), i) for i, h in enumerate(candidates)]
            sizes = [s for s in sizes if s[0] > 0]
            if not sizes:
                return False
            _, i = max(sizes)
            if candidates[i].spill() <= 0:
                return False

    def force_acquire(self, nbytes: int) -> None:
        """Reserve ``nbytes`` even past the budget (a batch that must be held to make progress)."""
        with self._lock:
            self.used += nbytes
            if self.used > self.peak:
                self.peak = self.used

    def release(self, nbytes: int) -> None:
        with self._lock:
            self.used = max(0, self.used - nbytes)


class SpillFile:
    """One Arrow IPC file of spilled batches; ``read(i)`` / iteration read them back.

    By default batches are read into memory (freed with the batch), not memory-mapped: the
    pages a mapping touched stay resident -- and count in the process's RSS -- for as long as
    the mapping lives, so reading a whole spill run through one mapping would hold all of it
    again.  ``reader(mapped=True)`` maps the file (zero-copy; only the pages read are loaded):
    for reading a slice of a batch, copied out, with the mapping dropped right after."""

    __slots__ = ("path", "num_batches", "nbytes", "schema")

    def __init__(self, path: str, schema: pa.Schema, num_batches: int, nbytes: int) -> None:
        self.path = path
        self.schema = schema
        self.num_batches = num_batches
        self.nbytes = nbytes

    def reader(self, mapped: bool = False) -> ipc.RecordBatchFileReader:
        return ipc.open_file(pa.memory_map(self.path, "r") if mapped
                             else pa.OSFile(self.path, "rb"))

    def __iter__(self) -> Iterator[pa.RecordBatch]:
        r = self.reader()
        for i in range(r.num_record_batches):
            yield r.get_batch(i)


class SpillDir:
    """A temporary directory for one run's spill files, removed when the run is closed or
    garbage collected."""

    def __init__(self) -> None:
        self._path: str | None = None
        self._lock = threading.Lock()
        self._ids = itertools.count()
        self._finalizer: weakref.finalize | None = None
        self.bytes_written = 0

    @property
    def path(self) -> str:
        if self._path is None:
            with self._lock:
                if self._path is None:
                    p = tempfile.mkdtemp(prefix="ember-spill-")
                    self._finalizer = weakref.finalize(self, shutil.rmtree, p, True)
                    self._path = p
        return self._path

    def write(self, batches: Iterable[pa.RecordBatch], schema: pa.Schema,
              prefix: str = "spill") -> SpillFile:
        """Write ``batches`` (of ``schema``) to a new IPC file."""
        path = os.path.join(self.path, f"{prefix}-{next(self._ids)}.arrow")
        n = 0
        with pa.OSFile(path, "wb") as sink, ipc.new_file(sink, schema) as w:
            for b in batches:
                w.write_batch(b)
                n += 1
        size = os.path.getsize(path)
        with self._lock:
            self.bytes_written += size
        return SpillFile(path, schema, n, size)

    def cleanup(self) -> None:
        if self._finalizer is not None:
            self._finalizer()
        self._path = None
