"""The in-memory state store provider with delta and snapshot files (Spark's
``HDFSBackedStateStoreProvider``, the default).

Memory: each version's map is an immutable :class:`_Map` of Arrow tables (the key rows and the
value rows, aligned) plus the canonical binary encoding of every key (:mod:`.rows`) and a pandas
hash index over those bytes for batched lookups; a write builds a new map with ``take`` /
``concat`` (no Python dicts of rows).  The provider keeps the two newest versions' maps in memory
(Spark's ``spark.sql.streaming.maxBatchesToRetainInMemory`` = 2), so a query running batch after
batch never rereads its files.

Files in the store directory (Arrow IPC):

- ``<v>.delta``: the changes that made version ``v`` from ``v - 1``, one record batch per
  ``put``/``remove`` call in call order: ``op`` (0 put, 1 remove), ``key`` (struct of the key
  columns), ``value`` (struct of the value columns, NULL for removes);
- ``<v>.snapshot``: the whole map of version ``v`` (``key``, ``value``).

Loading version ``v`` reads the newest snapshot at or below ``v`` and replays the deltas after it.
After each commit, maintenance writes a snapshot of the newest version once more than
``spark.sql.streaming.stateStore.minDeltasForSnapshot`` deltas follow the last snapshot, and
deletes the files no longer needed to rebuild any of the last
``spark.sql.streaming.minBatchesToRetain`` versions (Spark's ``doSnapshot`` and ``cleanup``).
"""

from __future__ import annotations

import os
import re

import numpy as np
import pandas as pd
import pyarrow as pa

from ember.streaming.crash import crash_point
from ember.streaming.state.rows import RowCodec
from ember.streaming.state.store import (
    StateStore, StateStoreConf, StateStoreId, StateStoreProvider, atomic_write, cannot_load,
    empty_table,
)
from ember.errors import InternalError

__all__ = ["HDFSBackedStateStoreProvider"]

_FILE_RE = re.compile(r"^(\d+)\.(delta|snapshot)$")
_PUT, _REMOVE = 0, 1
_MAPS_IN_MEMORY = 2


class _Map:
    """One version's contents (immutable): aligned key/value tables and key bytes."""

    __slots__ = ("keys", "values", "bins", "_index")

    def __init__(self, keys: pa.Table, values: pa.Table, bins: np.ndarray) -> None:
        self.keys = keys
        self.values = values
        self.bins = bins
        self._index: pd.Index | None = None

    @property
    def index(self) -> pd.Index:
        if self._index is None:
            self._index = pd.Index(self.bins, dtype=object)
        return self._index

    def __len__(self) -> int:
        return len(self.bins)

    def positions(self, bins: np.ndarray) -> np.ndarray:
        if not len(self.bins) or not len(bins):
            return np.full(len(bins), -1, dtype=np.int64)
        return self.index.get_indexer(bins).astype(np.int64, copy=False)

    def put(self, keys: pa.Table, values: pa.Table, bins: np.ndarray) -> "_Map":
        if not len(bins):
            return self
        dup = pd.Index(bins, dtype=object).duplicated(keep="last")
        if dup.any():
            keep = np.flatnonzero(~dup)
            keys, values, bins = keys.take(keep), values.take(keep), bins[keep]
        pos = self.positions(bins)
        old = len(self.bins)
        existing = pos >= 0
        fresh = np.flatnonzero(~existing)
        # Rows of concat(old, new): old rows in place (overwritten ones point at the new row),
        # then the new keys appended.
        order = np.arange(old, dtype=np.int64)
        order[pos[existing]] = old + np.flatnonzero(existing)
        order = np.concatenate([order, old + fresh])
        new_values = pa.concat_tables([self.values, values]).take(order)
        if len(fresh):
            new_keys = pa.concat_tables([self.keys, keys.take(fresh)])
            new_bins = np.concatenate([self.bins, bins[fresh]])
            index = self._index
            out = _Map(new_keys, new_values, new_bins)
            if index is not None:
                out._index = index.append(pd.Index(bins[fresh], dtype=object))
            return out
        out = _Map(self.keys, new_values, self.bins)
        out._index = self._index
        return out

    def remove(self, bins: np.ndarray) -> "_Map":
        pos = self.positions(bins)
        pos = pos[pos >= 0]
        if not len(pos):
            return self
        keep = np.ones(len(self.bins), dtype=bool)
        keep[pos] = False
        idx = np.flatnonzero(keep)
        return _Map(self.keys.take(idx), self.values.take(idx), self.bins[idx])


def _struct(table: pa.Table) -> pa.Array:
    cols = [c.combine_chunks() if isinstance(c, pa.ChunkedArray) else c for c in table.columns]
    if not cols:
        return pa.array([{}] * table.num_rows, type=pa.struct([]))
    return pa.StructArray.from_arrays(cols, fields=list(table.schema))


def _unstruct(arr: pa.Array | pa.ChunkedArray, schema: pa.Schema) -> pa.Table:
    if isinstance(arr, pa.ChunkedArray):
        arr = arr.combine_chunks() if arr.num_chunks else pa.array([], arr.type)
    cols = [arr.field(i) for i in range(arr.type.num_fields)]
    return pa.Table.from_arrays(cols, schema=schema)


class HDFSBackedStateStoreProvider(StateStoreProvider):
    """See the module docstring."""

    def __init__(self, store_id: StateStoreId, key_schema: pa.Schema, value_schema: pa.Schema,
                 conf: StateStoreConf) -> None:
        super().__init__(store_id, key_schema, value_schema, conf)
        self.key_codec = RowCodec(key_schema)
        self.file_schema = pa.schema([
            pa.field("op", pa.int8()),
            pa.field("key", pa.struct(list(key_schema))),
            pa.field("value", pa.struct(list(value_schema))),
        ])
        self.loaded: dict[int, _Map] = {}

    # -- files ------------------------------------------------------------------------------
    def _files(self) -> list[tuple[int, bool]]:
        """``(version, is_snapshot)`` of the files present, sorted (delta before snapshot)."""
        out = []
        for name in os.listdir(self.path):
            m = _FILE_RE.match(name)
            if m:
                out.append((int(m.group(1)), m.group(2) == "snapshot"))
        return sorted(out)

    def _file(self, version: int, snapshot: bool) -> str:
        return os.path.join(self.path, f"{version}.{'snapshot' if snapshot else 'delta'}")

    def latest_version(self) -> int:
        files = self._files()
        return files[-1][0] if files else 0

    def bins_of(self, keys: pa.Table) -> np.ndarray:
        enc = self.key_codec.encode(keys.columns, keys.num_rows, canonical=True)
        return enc.to_numpy(zero_copy_only=False)

    def _read(self, path: str) -> pa.Table:
        with pa.memory_map(path) as src:
            return pa.ipc.open_file(src).read_all()

    def _write(self, path: str, batches: list[pa.RecordBatch]) -> None:
        def write(f) -> None:
            with pa.ipc.new_file(f, self.file_schema) as w:
                for b in batches:
                    w.write_batch(b)
        atomic_write(path, write)

    def _batch(self, op: int, keys: pa.Table, values: pa.Table | None) -> pa.RecordBatch:
        n = keys.num_rows
        if values is None:
            value = pa.nulls(n, self.file_schema.field("value").type)
        else:
            value = _struct(values)
        return pa.RecordBatch.from_arrays(
            [pa.array(np.full(n, op, dtype=np.int8)), _struct(keys), value],
            schema=self.file_schema)

    # -- loading ----------------------------------------------------------------------------
    def _empty_map(self) -> _Map:
        return _Map(empty_table(self.key_schema), empty_table(self.value_schema),
                    np.empty(0, dtype=object))

    def load_map(self, version: int) -> _Map:
        with self.lock:
            if version in self.loaded:
                return self.loaded[version]
            if version == 0:
                return self._empty_map()
            snapshots = [v for v, s in self._files() if s and v <= version]
            cached = [v for v in self.loaded if v <= version]
            start = max(snapshots + cached, default=0)
            if start in self.loaded:
                m = self.loaded[start]
            elif start in snapshots:
                t = self._read(self._file(start, True))
                keys = _unstruct(t.column("key"), self.key_schema)
                m = _Map(keys, _unstruct(t.column("value"), self.value_schema), self.bins_of(keys))
            else:
                m = self._empty_map()
            for v in range(start + 1, version + 1):
                path = self._file(v, False)
                if not os.path.exists(path):
                    raise cannot_load(self.store_id, version, f"the delta file {path} does not "
                                      "exist")
                m = self._replay(m, self._read(path))
            self._cache(version, m)
            return m

    def _replay(self, m: _Map, delta: pa.Table) -> _Map:
        # One record batch per logged call, replayed in order (a batch at a time).
        for b in delta.to_batches():
            keys = _unstruct(b.column(1), self.key_schema)
            bins = self.bins_of(keys)
            if b.column(0)[0].as_py() == _PUT:
                m = m.put(keys, _unstruct(b.column(2), self.value_schema), bins)
            else:
                m = m.remove(bins)
        return m

    def _cache(self, version: int, m: _Map) -> None:
        self.loaded[version] = m
        for v in sorted(self.loaded)[:-_MAPS_IN_MEMORY]:
            del self.loaded[v]

    def get_store(self, version: int) -> StateStore:
        if version < 0:
            raise cannot_load(self.store_id, version, "negative version")
        return _MemoryStore(self, version, self.load_map(version))

    # -- commit and maintenance -------------------------------------------------------------
    def commit_version(self, version: int, m: _Map, batches: list[pa.RecordBatch]) -> None:
        with self.lock:
            self._write(self._file(version, False), batches)
            stale = self._file(version, True)
            if os.path.exists(stale):  # left by an earlier run of the same batch
                os.remove(stale)
            self._cache(version, m)
            crash_point("state_commit")
            self.do_maintenance()

    def do_maintenance(self) -> None:
        with self.lock:
            self._snapshot()
            self._cleanup()

    def _for_version(self, files: list[tuple[int, bool]], version: int) -> list[tuple[int, bool]]:
        """The files needed to rebuild ``version``: its newest snapshot and the deltas after."""
        snaps = [v for v, s in files if s and v <= version]
        base = max(snaps, default=0)
        out = [(base, True)] if snaps else []
        out += [(v, s) for v, s in files if not s and base < v <= version]
        return out

    def _snapshot(self) -> None:
        files = self._files()
        if not files:
            return
        last = files[-1][0]
        deltas = [f for f in self._for_version(files, last) if not f[1]]
        if len(deltas) > self.conf.min_deltas_for_snapshot and last in self.loaded:
            m = self.loaded[last]
            batch = pa.RecordBatch.from_arrays(
                [pa.array(np.zeros(len(m), dtype=np.int8)), _struct(m.keys), _struct(m.values)],
                schema=self.file_schema)
            self._write(self._file(last, True), [batch])

    def _cleanup(self) -> None:
        files = self._files()
        if not files:
            return
        earliest = files[-1][0] - self.conf.min_versions_to_retain
        if earliest <= 0:
            return
        needed = self._for_version(files, earliest)
        if not needed:
            return
        first = needed[0][0]
        for v, s in files:
            if v < first:
                os.remove(self._file(v, s))


class _MemoryStore(StateStore):
    def __init__(self, provider: HDFSBackedStateStoreProvider, version: int, m: _Map) -> None:
        self.provider = provider
        self.key_schema = provider.key_schema
        self.value_schema = provider.value_schema
        self._version = version
        self._map = m
        self._log: list[pa.RecordBatch] = []
        self._state = "open"

    @property
    def version(self) -> int:
        return self._version

    @property
    def committed(self) -> bool:
        return self._state == "committed"

    def _check_open(self) -> None:
        if self._state != "open":
            raise InternalError(f"State store {self.provider.store_id} version {self._version} "
                                f"is already {self._state}")

    def get(self, keys: pa.Table) -> tuple[np.ndarray, pa.Table]:
        pos = self._map.positions(self.provider.bins_of(keys))
        found = pos >= 0
        idx = pa.array(pos, mask=~found)
        return found, self._map.values.take(idx)

    def put(self, keys: pa.Table, values: pa.Table) -> None:
        self._check_open()
        if not keys.num_rows:
            return
        keys = keys.cast(self.key_schema) if keys.schema != self.key_schema else keys
        values = values.cast(self.value_schema) if values.schema != self.value_schema else values
        self._map = self._map.put(keys, values, self.provider.bins_of(keys))
        self._log.append(self.provider._batch(_PUT, keys, values))

    def remove(self, keys: pa.Table) -> None:
        self._check_open()
        if not keys.num_rows:
            return
        keys = keys.cast(self.key_schema) if keys.schema != self.key_schema else keys
        self._map = self._map.remove(self.provider.bins_of(keys))
        self._log.append(self.provider._batch(_REMOVE, keys, None))

    def scan(self) -> tuple[pa.Table, pa.Table]:
        return self._map.keys, self._map.values

    def num_keys(self) -> int:
        return len(self._map)

    def commit(self) -> int:
        self._check_open()
        new_version = self._version + 1
        self.provider.commit_version(new_version, self._map, self._log)
        self._state = "committed"
        return new_version

    def abort(self) -> None:
        if self._state == "open":
            self._state = "aborted"
            self._log = []

    def metrics(self) -> dict[str, int]:
        m = self._map
        return {"numKeys": len(m),
                "memoryUsedBytes": int(m.keys.nbytes + m.values.nbytes + 64 * len(m))}
