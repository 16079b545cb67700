"""Scan sharing within one query run: Parquet column chunks that several scans of the run read
are decoded once.

At the start of a run (``LocalRuntime.collect``) :meth:`ScanCache.for_plan` walks the physical
plan, plans the splits of every Parquet ``FileSourceScanExec`` (the same
``ember.execution.scan.plan_parquet_splits`` result ``run_file_scan`` then uses, so a scan is
planned once) and counts, for every *(file, row group, file column)*, the distinct scan nodes
that will read it.  Only the keys read by two or more scans are *shared*.  A split holding a shared
key is read row group by row group through :meth:`ScanCache.fetch`: the first scan to reach a
shared key decodes it and, if other scans are still to read it and the memory budget
(:class:`~ember.runtime.local.memory.MemoryManager`) grants its bytes, keeps the (immutable) Arrow
column; every later scan takes it instead of decoding; the entry is dropped, and its bytes
released, as soon as the last scan that planned to read it has taken it.  Each scan still applies
its own pushed row filter to the shared columns.  When the reservation fails, the column is simply
not kept (the other scans decode it again); the cache is also registered as a spillable holder, so
an operator short of budget makes it drop its entries rather than spill.  Whatever is left (a scan
that stopped early or never ran) is dropped when the run ends (:meth:`ScanCache.clear`).  Nothing
is shared between runs.

Scans of one stage run at the same time: a scan needing a shared column another scan is decoding
waits for it (after decoding its own columns, so no two scans wait on each other).  A scan that
re-reads a split (a cartesian product re-runs its right side) takes a kept column if it is still
there and decodes it otherwise.  ``ENABLED`` (module flag) turns sharing off.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import pyarrow as pa
import pyarrow.parquet as pq

from ember.conf import FILES_MAX_PARTITION_BYTES, FILES_OPEN_COST
from ember.runtime.local.memory import MemoryManager
from ember.runtime.local.node_state import NodeState
from ember.execution import scan
from ember.execution.scan import decode_row_group, open_parquet
from ember.physical.nodes import FileSourceScanExec

if TYPE_CHECKING:
    from ember.runtime.local.context import RunContext

__all__ = ["ScanCache", "ENABLED"]

#: whether :meth:`ScanCache.for_plan` builds a cache at all (tests switch it off)
ENABLED = True

Key = tuple[str, int, str]  # path, row group, file column name


class ScanCache:
    """Decoded Parquet columns shared by the scans of one run (see module docstring)."""

    def __init__(self, memory: MemoryManager | None = None) -> None:
        self._memory = memory
        self._lock = threading.Lock()
        #: planned (splits, filters) per FileSourceScanExec
        self._plans: NodeState[tuple[list, dict]] = NodeState()
        #: shared keys -> ids of the scans still to read them (scans ``_plans`` keeps alive)
        self._pending: dict[Key, set[int]] = {}
        #: kept columns and their reserved bytes
        self._entries: dict[Key, tuple[pa.ChunkedArray, int]] = {}
        #: shared keys being decoded right now (by the scan that first needed them)
        self._loading: dict[Key, threading.Event] = {}
        #: (path, row group) pairs holding a shared key, per scan id
        self._shared_groups: dict[int, set[tuple[str, int]]] = {}
        self._metadata: dict[str, Any] = {}
        self.held = 0
        #: column chunks decoded by :meth:`fetch` / served from the cache (for tests and metrics)
        self.decoded = 0
        self.hits = 0

    # -- building ------------------------------------------------------------------------------
    @classmethod
    def for_plan(cls, root: Any, rt: RunContext) -> "ScanCache | None":
        """The cache for running ``root`` on ``rt`` (None when disabled or no Parquet scan)."""
        if not ENABLED:
            return None

        nodes: dict[int, Any] = {}

        def visit(n: Any) -> None:
            if isinstance(n, FileSourceScanExec) and scan.parquet_scan_supported(n.relation):
                nodes.setdefault(id(n), n)

        root.foreach(visit)
        if not nodes:
            return None
        cache = cls(rt.memory)
        readers: dict[Key, set[int]] = {}
        schemas: dict[str, pa.Schema] = {}
        for nid, n in nodes.items():
            try:
                planned = scan.plan_parquet_splits(
                    n.relation, n.output, n.data_filters, rt.parallelism,
                    rt.ctx.conf.get(FILES_MAX_PARTITION_BYTES), rt.ctx.conf.get(FILES_OPEN_COST))
                keys = []
                for sp in planned[0]:
                    if sp.path not in schemas:
                        schemas[sp.path] = pq.read_schema(sp.path)
                    cols = scan.file_column_names(schemas[sp.path], n.output)
                    keys.extend((sp.path, g, c) for g in sp.row_groups for c in cols)
            except Exception:  # noqa: BLE001 - the scan reports it (as before) when it runs
                continue
            cache._plans[n] = planned
            for k in keys:
                readers.setdefault(k, set()).add(nid)
        cache._pending = {k: v for k, v in readers.items() if len(v) > 1}
        for (path, g, _c), ids in cache._pending.items():
            for nid in ids:
                cache._shared_groups.setdefault(nid, set()).add((path, g))
        if cache._pending and cache._memory is not None:
            cache._memory.register_spillable(cache)
        return cache

    def planned(self, node: Any) -> tuple[list, dict] | None:
        """``plan_parquet_splits``'s result for ``node``, planned by :meth:`for_plan`."""
        return self._plans.get(node)

    def fetcher(self, node: Any, split: Any) -> Callable[[str, int, list[str]], pa.Table] | None:
        """A ``fetch(path, row_group, columns)`` for ``node`` reading ``split``, or None when the
        split reads no shared column (read it the ordinary way)."""
        nid = id(node)
        groups = self._shared_groups.get(nid)
        if not groups or not any((split.path, g) in groups for g in split.row_groups):
            return None
        return lambda path, g, cols: self.fetch(nid, path, g, cols)

    def skip(self, node: Any, path: str, groups: list[int]) -> None:
        """``node`` will not read row groups ``groups`` of ``path`` (a runtime filter pruned
        them): the columns kept for it there are dropped once no other scan is to read them."""
        nid = id(node)
        drop = {(path, g) for g in groups}
        with self._lock:
            for k in [k for k in self._pending if (k[0], k[1]) in drop]:
                self._taken(k, nid)

    # -- reading -------------------------------------------------------------------------------
    def fetch(self, nid: int, path: str, g: int, cols: list[str]) -> pa.Table:
        """Row group ``g`` of ``path`` as the file columns ``cols`` (in that order), shared
        columns taken from / put into the cache on behalf of the scan ``nid``.

        A shared column another scan is decoding right now is waited for (after decoding this
        call's own columns, so two scans never wait on each other) rather than decoded twice."""
        got: dict[str, pa.ChunkedArray] = {}
        mine: list[str] = []
        owned: list[tuple[Key, threading.Event]] = []
        waits: list[tuple[str, threading.Event]] = []
        with self._lock:
            for c in cols:
                k = (path, g, c)
                hit = self._entries.get(k)
                if hit is not None:
                    got[c] = hit[0]
                    self.hits += 1
                    self._taken(k, nid)
                elif k in self._loading:
                    waits.append((c, self._loading[k]))
                else:
                    mine.append(c)
                    if k in self._pending:
                        ev = self._loading[k] = threading.Event()
                        owned.append((k, ev))
        try:
            if mine:
                self._decode_into(got, nid, path, g, mine)
        finally:
            with self._lock:
                for k, ev in owned:
                    self._loading.pop(k, None)
                    ev.set()
        late: list[str] = []
        for c, ev in waits:
            ev.wait()
            k = (path, g, c)
            with self._lock:
                hit = self._entries.get(k)
                if hit is not None:
                    got[c] = hit[0]
                    self.hits += 1
                    self._taken(k, nid)
                else:
                    late.append(c)
        if late:  # the other scan could not keep it (budget): decode it here
            self._decode_into(got, nid, path, g, late)
        return pa.Table.from_arrays([got[c] for c in cols], names=list(cols))

    def _decode_into(self, got: dict, nid: int, path: str, g: int, cols: list[str]) -> None:
        t = self._decode(path, g, cols)
        with self._lock:
            self.decoded += len(cols)
        for c in cols:
            col = t.column(c)
            got[c] = col
            self._offer((path, g, c), nid, col)

    def _decode(self, path: str, g: int, cols: list[str]) -> pa.Table:
        known = self._metadata.get(path)
        f, as_dict = open_parquet(path, *(known or ()))
        if known is None:
            self._metadata[path] = (f.metadata, as_dict)
        return decode_row_group(f, g, cols, as_dict)

    def _taken(self, k: Key, nid: int) -> None:
        """(Lock held) scan ``nid`` has read ``k``: drop the entry once nobody else will."""
        pend = self._pending.get(k)
        if pend is not None:
            pend.discard(nid)
            if not pend:
                del self._pending[k]
        if pend is None or not pend:
            e = self._entries.pop(k, None)
            if e is not None:
                self._release(e[1])

    def _offer(self, k: Key, nid: int, col: pa.ChunkedArray) -> None:
        """Scan ``nid`` decoded ``k``: keep it if other scans are still to read it and the
        budget grants its bytes."""
        with self._lock:
            pend = self._pending.get(k)
            if pend is None or not (pend - {nid}) or k in self._entries:
                self._taken(k, nid)
                return
        nbytes = col.nbytes
        ok = self._memory is None or self._memory.try_acquire(nbytes, requester=self)
        with self._lock:
            pend = self._pending.get(k)
            if pend is not None:
                pend.discard(nid)
            if ok and pend and k not in self._entries:
                self._entries[k] = (col, nbytes)
                self.held += nbytes
                return
            if pend is not None and not pend:
                del self._pending[k]
        if ok and self._memory is not None:
            self._memory.release(nbytes)

    def _release(self, nbytes: int) -> None:
        self.held -= nbytes
        if self._memory is not None:
            self._memory.release(nbytes)

    # -- lifetime ------------------------------------------------------------------------------
    @property
    def num_entries(self) -> int:
        """Columns currently kept."""
        return len(self._entries)

    def spillable_bytes(self) -> int:
        return self.held

    def spill(self) -> int:
        """Drop every kept column (the scans still to read them decode them again)."""
        with self._lock:
            freed = self.held
            for _col, nbytes in self._entries.values():
                self._release(nbytes)
            self._entries.clear()
        return freed

    def clear(self) -> None:
        """Drop everything (end of the run)."""
        self.spill()
        with self._lock:
            self._pending.clear()
            self._shared_groups.clear()
            self._plans.clear()
            self._metadata.clear()
