"""Versioned state stores: the contract, the configuration and the provider registry.

A state store holds the state of one stateful operator for one partition under one name
(Spark's ``StateStoreId(checkpointRootLocation, operatorId, partitionId, storeName)``), persisted at
``<checkpoint>/state/<operatorId>/<partitionId>/<storeName>/``, Spark's layout.  Batch
``N`` opens version ``N`` (the state after batch ``N - 1``; version 0 is empty) and its
:meth:`StateStore.commit` makes version ``N + 1``.  Any committed version can be reopened; writes
that were never committed vanish, and every file is written to a temporary name and renamed, so a
crash at any point leaves only whole committed versions behind.

Unlike Spark's row-at-a-time ``get``/``put``, every operation takes a *batch* of rows as Arrow
tables (keys of ``key_schema``, values of ``value_schema``): the operators above it are
vectorized, and so are the stores.

Providers (``spark.sql.streaming.stateStore.providerClass``, Spark's class names accepted):

=========================================================  ====================================
``...state.HDFSBackedStateStoreProvider`` (Spark default)  :mod:`.memory`: in-memory Arrow maps,
                                                           a delta file per version, snapshots
``...state.RocksDBStateStoreProvider``                     :mod:`.rocksdb`: RocksDB (rocksdict),
                                                           a RocksDB checkpoint per version
=========================================================  ====================================

Providers are kept per store directory in a process-wide registry (Spark's executor-side
``StateStore.loadedProviders``) so that the next batch finds the previous version in memory; call
:func:`unload_all_providers` to forget them (tests use it to simulate a restart).
"""

from __future__ import annotations

import os
import threading
import uuid
from abc import ABC, abstractmethod
from dataclasses import dataclass
from typing import Any

import numpy as np
import pyarrow as pa

from ember.conf import (
    STREAM_MIN_BATCHES_TO_RETAIN,
    STREAM_SKIP_NULLS_FOR_JOINS,
    STREAM_STATE_MIN_DELTAS_FOR_SNAPSHOT,
    STREAM_STATE_PROVIDER,
)
from ember.errors import AnalysisError, ExecutionError

__all__ = [
    "StateStoreId", "StateStoreConf", "StateStore", "StateStoreProvider", "get_state_store",
    "unload_all_providers", "atomic_write", "PROVIDER_CLASS_KEY", "HDFS_PROVIDER_CLASS",
    "ROCKSDB_PROVIDER_CLASS", "MIN_DELTAS_FOR_SNAPSHOT_KEY", "MIN_BATCHES_TO_RETAIN_KEY",
    "SKIP_NULLS_KEY",
]

PROVIDER_CLASS_KEY = STREAM_STATE_PROVIDER.key
HDFS_PROVIDER_CLASS = STREAM_STATE_PROVIDER.default
ROCKSDB_PROVIDER_CLASS = ("org.apache.spark.sql.execution.streaming.state."
                          "RocksDBStateStoreProvider")
MIN_DELTAS_FOR_SNAPSHOT_KEY = STREAM_STATE_MIN_DELTAS_FOR_SNAPSHOT.key
MIN_BATCHES_TO_RETAIN_KEY = STREAM_MIN_BATCHES_TO_RETAIN.key
SKIP_NULLS_KEY = STREAM_SKIP_NULLS_FOR_JOINS.key


@dataclass(frozen=True, slots=True)
class StateStoreId:
    """Where one store lives: ``<checkpoint_location>/<operator_id>/<partition_id>/<store_name>``
    (``checkpoint_location`` is the query's ``<checkpoint>/state``)."""

    checkpoint_location: str
    operator_id: int
    partition_id: int
    store_name: str = "default"

    @property
    def path(self) -> str:
        return os.path.join(self.checkpoint_location, str(self.operator_id),
                            str(self.partition_id), self.store_name)


@dataclass(frozen=True, slots=True)
class StateStoreConf:
    """The state store settings of one query (Spark's ``StateStoreConf``)."""

    provider: str = "memory"  # "memory" (HDFS-backed) or "rocksdb"
    min_deltas_for_snapshot: int = 10
    min_versions_to_retain: int = 100
    skip_nulls_for_stream_stream_joins: bool = False

    @staticmethod
    def from_conf(conf: Any) -> "StateStoreConf":
        """Read Spark's keys from a session conf (``SQLConf``), a dict or None (defaults)."""
        return StateStoreConf(
            provider=_provider_kind(STREAM_STATE_PROVIDER.read(conf)),
            min_deltas_for_snapshot=STREAM_STATE_MIN_DELTAS_FOR_SNAPSHOT.read(conf),
            min_versions_to_retain=STREAM_MIN_BATCHES_TO_RETAIN.read(conf),
            skip_nulls_for_stream_stream_joins=STREAM_SKIP_NULLS_FOR_JOINS.read(conf),
        )


def _provider_kind(value: Any) -> str:
    if value is None or str(value).strip() == "":
        return "memory"
    v = str(value).strip()
    short = v.rsplit(".", 1)[-1].lower()
    if short in ("hdfsbackedstatestoreprovider", "memory", "hdfs"):
        return "memory"
    if short in ("rocksdbstatestoreprovider", "rocksdb"):
        return "rocksdb"
    raise AnalysisError(
        f"Unknown state store provider class {v!r}: Ember supports {HDFS_PROVIDER_CLASS} and "
        f"{ROCKSDB_PROVIDER_CLASS}.")


class StateStore(ABC):
    """One open version of a store: batched reads and writes, then :meth:`commit` or
    :meth:`abort`.  Reads see this version's own uncommitted writes."""

    key_schema: pa.Schema
    value_schema: pa.Schema

    @property
    @abstractmethod
    def version(self) -> int:
        """The version this store was opened at."""

    @abstractmethod
    def get(self, keys: pa.Table) -> tuple[np.ndarray, pa.Table]:
        """``(found, values)``: a boolean mask over ``keys`` and their values (NULL rows where
        not found)."""

    @abstractmethod
    def put(self, keys: pa.Table, values: pa.Table) -> None:
        """Insert or overwrite; for a key repeated within ``keys`` the last row wins."""

    @abstractmethod
    def remove(self, keys: pa.Table) -> None:
        """Remove the keys (absent keys are ignored)."""

    @abstractmethod
    def scan(self) -> tuple[pa.Table, pa.Table]:
        """All ``(keys, values)`` of this version (in no particular order)."""

    @abstractmethod
    def num_keys(self) -> int:
        ...

    @abstractmethod
    def commit(self) -> int:
        """Persist this version's changes as version ``version + 1`` and return it."""

    @abstractmethod
    def abort(self) -> None:
        """Forget the uncommitted changes."""

    @property
    def committed(self) -> bool:
        return False

    def metrics(self) -> dict[str, int]:
        return {"numKeys": self.num_keys()}


class StateStoreProvider(ABC):
    """Owns one store directory: loads versions, writes files, snapshots and cleans up."""

    def __init__(self, store_id: StateStoreId, key_schema: pa.Schema, value_schema: pa.Schema,
                 conf: StateStoreConf) -> None:
        self.store_id = store_id
        self.key_schema = key_schema
        self.value_schema = value_schema
        self.conf = conf
        self.path = store_id.path
        self.lock = threading.RLock()
        os.makedirs(self.path, exist_ok=True)

    @abstractmethod
    def get_store(self, version: int) -> StateStore:
        """Open ``version`` for reading and writing."""

    @abstractmethod
    def latest_version(self) -> int:
        """The newest committed version found in the directory (0 when none)."""

    def do_maintenance(self) -> None:
        """Snapshot and clean up old files (Spark runs it periodically in the background; Ember
        runs it after each commit, which keeps the files deterministic)."""

    def close(self) -> None:
        pass


_registry: dict[tuple[str, str], StateStoreProvider] = {}
_registry_lock = threading.Lock()


def get_state_store(store_id: StateStoreId, key_schema: pa.Schema, value_schema: pa.Schema,
                    version: int, conf: StateStoreConf | Any = None) -> StateStore:
    """Open ``version`` of the store ``store_id`` with the provider chosen by ``conf``."""
    sconf = conf if isinstance(conf, StateStoreConf) else StateStoreConf.from_conf(conf)
    key = (os.path.abspath(store_id.path), sconf.provider)
    with _registry_lock:
        provider = _registry.get(key)
        if provider is not None and (provider.key_schema != key_schema
                                     or provider.value_schema != value_schema):
            provider.close()
            provider = None
        if provider is None:
            if sconf.provider == "rocksdb":
                # imported here: at module level it would close the import cycle
                # streaming.state.store -> streaming.state.rocksdb -> streaming.state.store
                from ember.streaming.state.rocksdb import RocksDBStateStoreProvider as P
            else:
                # imported here: at module level it would close the import cycle
                # streaming.state.store -> streaming.state.memory -> streaming.state.store
                from ember.streaming.state.memory import HDFSBackedStateStoreProvider as P
            provider = P(store_id, key_schema, value_schema, sconf)
            _registry[key] = provider
    return provider.get_store(version)


def unload_all_providers() -> None:
    """Close and forget every loaded provider (their in-memory caches and open databases)."""
    with _registry_lock:
        providers = list(_registry.values())
        _registry.clear()
    for p in providers:
        p.close()


def atomic_write(path: str, write) -> None:
    """Write a file through ``write(file)`` to a temporary name, fsync it, then rename it over
    ``path``: readers (and a restart after a crash) see the old file or the whole new one."""
    d = os.path.dirname(path)
    tmp = os.path.join(d, f".{os.path.basename(path)}.{uuid.uuid4().hex}.tmp")
    try:
        with open(tmp, "wb") as f:
            write(f)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.remove(tmp)
        raise


def cannot_load(store_id: StateStoreId, version: int, why: str) -> ExecutionError:
    """Spark's ``CANNOT_LOAD_STATE_STORE`` error."""
    return ExecutionError(
        f"An error occurred during loading state. Cannot load version {version} of the state "
        f"store {store_id.path}: {why}", error_class="CANNOT_LOAD_STATE_STORE.UNCATEGORIZED")


def empty_table(schema: pa.Schema) -> pa.Table:
    return pa.Table.from_batches([], schema=schema)


def nulls_table(schema: pa.Schema, n: int) -> pa.Table:
    return pa.Table.from_arrays([pa.nulls(n, f.type) for f in schema], schema=schema)
