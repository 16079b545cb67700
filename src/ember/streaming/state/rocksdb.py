"""The RocksDB state store provider (Spark's ``RocksDBStateStoreProvider``), on ``rocksdict``.

The working database lives in a local temporary directory.  Keys and values are rows in the
binary encoding of :mod:`.rows` (keys canonical), computed for a whole batch at once; writes go
through one ``WriteBatch`` per call and reads through one multi-get.  Feeding a batch's byte
strings to ``WriteBatch.put`` is done with ``map`` (a C-level loop, no Python bytecode per row):
rocksdict has no bulk put.

Each commit of version ``v`` flushes the memtable and takes a RocksDB checkpoint (hard links to
the immutable SST files where the file system allows, copies otherwise) into
``<store dir>/<v>.checkpoint/``, written under a temporary name and renamed, together with
``ember-metadata.json`` (the number of keys).  Opening version ``v`` reuses the working database
when it already holds exactly ``v`` with no uncommitted change; otherwise it copies
``<v>.checkpoint`` into a fresh working directory (version 0 is an empty database).  Uncommitted
writes therefore vanish on abort or crash.  Maintenance keeps the newest
``spark.sql.streaming.minBatchesToRetain`` checkpoints.
"""

from __future__ import annotations

import collections
import json
import os
import re
import shutil
import tempfile
import uuid

import numpy as np
import pandas as pd
import pyarrow as pa
from rocksdict import Checkpoint, Options, Rdict, WriteBatch

from ember.streaming.crash import crash_point
from ember.streaming.state.rows import RowCodec
from ember.streaming.state.store import (
    StateStore, StateStoreConf, StateStoreId, StateStoreProvider, cannot_load, empty_table,
)
from ember.errors import InternalError

__all__ = ["RocksDBStateStoreProvider"]

_CKPT_RE = re.compile(r"^(\d+)\.checkpoint$")
_META = "ember-metadata.json"


def _options() -> Options:
    opts = Options(raw_mode=True)
    opts.create_if_missing(True)
    return opts


def _consume(it) -> None:
    collections.deque(it, maxlen=0)


class RocksDBStateStoreProvider(StateStoreProvider):
    """See the module docstring."""

    def __init__(self, store_id: StateStoreId, key_schema: pa.Schema, value_schema: pa.Schema,
                 conf: StateStoreConf) -> None:
        super().__init__(store_id, key_schema, value_schema, conf)
        self.key_codec = RowCodec(key_schema)
        self.value_codec = RowCodec(value_schema)
        self.db: Rdict | None = None
        self.work_dir: str | None = None
        self.loaded_version = -1  # version held by the working db when it is clean
        self.num_keys = 0

    # -- files ------------------------------------------------------------------------------
    def _checkpoints(self) -> list[int]:
        return sorted(int(m.group(1)) for m in map(_CKPT_RE.match, os.listdir(self.path)) if m)

    def _ckpt_dir(self, version: int) -> str:
        return os.path.join(self.path, f"{version}.checkpoint")

    def latest_version(self) -> int:
        c = self._checkpoints()
        return c[-1] if c else 0

    # -- the working database ---------------------------------------------------------------
    def _close_db(self) -> None:
        if self.db is not None:
            self.db.close()
            self.db = None
        if self.work_dir is not None:
            shutil.rmtree(self.work_dir, ignore_errors=True)
            self.work_dir = None
        self.loaded_version = -1

    def _load(self, version: int) -> None:
        self._close_db()
        work = tempfile.mkdtemp(prefix="ember-rocksdb-")
        db_dir = os.path.join(work, "db")
        if version == 0:
            num_keys = 0
        else:
            src = self._ckpt_dir(version)
            if not os.path.isdir(src):
                shutil.rmtree(work, ignore_errors=True)
                raise cannot_load(self.store_id, version, f"the checkpoint {src} does not exist")
            shutil.copytree(src, db_dir)
            with open(os.path.join(db_dir, _META)) as f:
                num_keys = int(json.load(f)["numKeys"])
            os.remove(os.path.join(db_dir, _META))
        self.work_dir = work
        self.db = Rdict(db_dir, _options())
        self.num_keys = num_keys
        self.loaded_version = version

    def get_store(self, version: int) -> StateStore:
        with self.lock:
            if version < 0:
                raise cannot_load(self.store_id, version, "negative version")
            if self.db is None or self.loaded_version != version:
                self._load(version)
            self.loaded_version = -1  # dirty until committed
            return _RocksDBStore(self, version)

    def commit_version(self, version: int, num_keys: int) -> None:
        with self.lock:
            assert self.db is not None
            self.db.flush()
            tmp = os.path.join(self.path, f".{version}.checkpoint.{uuid.uuid4().hex}.tmp")
            Checkpoint(self.db).create_checkpoint(tmp)
            with open(os.path.join(tmp, _META), "w") as f:
                json.dump({"numKeys": num_keys}, f)
                f.flush()
                os.fsync(f.fileno())
            final = self._ckpt_dir(version)
            if os.path.exists(final):  # left by an earlier run of the same batch
                trash = os.path.join(self.path, f".{version}.trash.{uuid.uuid4().hex}")
                os.replace(final, trash)
                os.replace(tmp, final)
                shutil.rmtree(trash, ignore_errors=True)
            else:
                os.replace(tmp, final)
            self.num_keys = num_keys
            self.loaded_version = version
            crash_point("state_commit")
            self.do_maintenance()

    def abort_version(self) -> None:
        with self.lock:
            self._close_db()

    def do_maintenance(self) -> None:
        with self.lock:
            versions = self._checkpoints()
            if not versions:
                return
            earliest = versions[-1] - self.conf.min_versions_to_retain
            for v in versions:
                if v < earliest:
                    shutil.rmtree(self._ckpt_dir(v), ignore_errors=True)
            for name in os.listdir(self.path):  # temporaries of crashed commits
                if name.startswith(".") and (".tmp" in name or ".trash." in name):
                    shutil.rmtree(os.path.join(self.path, name), ignore_errors=True)

    def close(self) -> None:
        with self.lock:
            self._close_db()


class _RocksDBStore(StateStore):
    def __init__(self, provider: RocksDBStateStoreProvider, version: int) -> None:
        self.provider = provider
        self.key_schema = provider.key_schema
        self.value_schema = provider.value_schema
        self._version = version
        self._num_keys = provider.num_keys
        self._state = "open"

    @property
    def version(self) -> int:
        return self._version

    @property
    def committed(self) -> bool:
        return self._state == "committed"

    @property
    def db(self) -> Rdict:
        if self._state != "open" or self.provider.db is None:
            raise InternalError(f"State store {self.provider.store_id} version {self._version} "
                                f"is already {self._state}")
        return self.provider.db

    def _key_bytes(self, keys: pa.Table) -> list[bytes]:
        enc = self.provider.key_codec.encode(keys.columns, keys.num_rows, canonical=True)
        return enc.to_pylist()

    def _multi_get(self, kb: list[bytes]) -> pa.Array:
        if not kb:
            return pa.array([], pa.binary())
        return pa.array(self.db.get(kb), type=pa.binary())

    def get(self, keys: pa.Table) -> tuple[np.ndarray, pa.Table]:
        raw = self._multi_get(self._key_bytes(keys))
        found = np.asarray(raw.is_valid().to_numpy(zero_copy_only=False), dtype=bool)
        cols = self.provider.value_codec.decode(raw)
        return found, pa.Table.from_arrays(cols, schema=self.value_schema)

    def put(self, keys: pa.Table, values: pa.Table) -> None:
        if not keys.num_rows:
            return
        kb = self._key_bytes(keys)
        vb = self.provider.value_codec.encode(values.columns, values.num_rows).to_pylist()
        # numKeys: keys new to the store (a key repeated in the batch counts once).
        existed = self._multi_get(kb).is_valid().to_numpy(zero_copy_only=False)
        fresh = np.asarray(kb, dtype=object)[~np.asarray(existed, dtype=bool)]
        self._num_keys += len(pd.unique(fresh)) if len(fresh) else 0
        wb = WriteBatch(raw_mode=True)
        _consume(map(wb.put, kb, vb))
        self.db.write(wb)

    def remove(self, keys: pa.Table) -> None:
        if not keys.num_rows:
            return
        kb = list(pd.unique(np.asarray(self._key_bytes(keys), dtype=object)))
        existed = self._multi_get(kb).is_valid().to_numpy(zero_copy_only=False)
        self._num_keys -= int(existed.sum())
        wb = WriteBatch(raw_mode=True)
        _consume(map(wb.delete, kb))
        self.db.write(wb)

    def scan(self) -> tuple[pa.Table, pa.Table]:
        db = self.db
        kb = list(db.keys())
        vb = list(db.values())
        if not kb:
            return empty_table(self.key_schema), empty_table(self.value_schema)
        kcols = self.provider.key_codec.decode(pa.array(kb, type=pa.binary()))
        vcols = self.provider.value_codec.decode(pa.array(vb, type=pa.binary()))
        return (pa.Table.from_arrays(kcols, schema=self.key_schema),
                pa.Table.from_arrays(vcols, schema=self.value_schema))

    def num_keys(self) -> int:
        return self._num_keys

    def commit(self) -> int:
        self.db  # noqa: B018 - raises unless open
        new_version = self._version + 1
        self.provider.commit_version(new_version, self._num_keys)
        self._state = "committed"
        return new_version

    def abort(self) -> None:
        if self._state == "open":
            self._state = "aborted"
            self.provider.abort_version()

    def metrics(self) -> dict[str, int]:
        db = self.provider.db
        mem = 0
        if db is not None:
            try:
                mem = int(db.property_int_value("rocksdb.cur-size-all-mem-tables") or 0)
            except Exception:  # noqa: BLE001 - a metric only
                mem = 0
        return {"numKeys": self._num_keys, "memoryUsedBytes": mem}
