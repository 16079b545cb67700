"""``df.cache()`` / ``df.persist()``: Spark's ``CacheManager`` for a session.

A cached DataFrame registers its analyzed plan.  Every later query replaces each subtree that
computes the same rows as a cached plan (:func:`same_plan`, Spark's ``sameResult``) with an
``InMemoryRelation`` over that entry (Spark's ``CacheManager.useCachedData``, run by
``QueryExecution`` before optimizing), so the cached rows are computed once and reused:

- on the local runtime the entry holds the computed Arrow table, built the first time a query
  reads it (``QueryExecution`` materializes it, as Spark fills its cache during the first
  action) and scanned as ``InMemoryTableScan``;
- on the Spark runtime the entry holds a PySpark DataFrame over the plan, persisted with
  Spark's own cache at the chosen storage level (``DataFrame.persist``), which Spark fills in
  the first job that reads it.

>>> import ember
>>> spark = ember.Session()
>>> df = spark.range(3).cache()
>>> "InMemoryTableScan" in df.where("id > 0")._qe.explain_string("simple")
True
"""

from __future__ import annotations

import threading
from typing import Any

import pyarrow as pa

from ember.plans.logical.nodes import InMemoryRelation, LocalRelation, LogicalPlan, Project

__all__ = ["CacheManager", "CachedData", "StorageLevel", "same_plan"]


class StorageLevel:
    """PySpark's ``StorageLevel`` (where a cache keeps its data), with its constants; Ember's
    local runtime keeps every cache in memory, as Arrow, whatever the level says."""

    def __init__(self, useDisk: bool, useMemory: bool, useOffHeap: bool,  # noqa: N803
                 deserialized: bool, replication: int = 1) -> None:
        self.useDisk = useDisk
        self.useMemory = useMemory
        self.useOffHeap = useOffHeap
        self.deserialized = deserialized
        self.replication = replication

    def _key(self) -> tuple[bool, bool, bool, bool, int]:
        return (self.useDisk, self.useMemory, self.useOffHeap, self.deserialized,
                self.replication)

    def __eq__(self, other: object) -> bool:
        keys = ("useDisk", "useMemory", "useOffHeap", "deserialized", "replication")
        return all(hasattr(other, k) for k in keys) and self._key() == tuple(
            getattr(other, k) for k in keys)

    def __hash__(self) -> int:
        return hash(self._key())

    def __repr__(self) -> str:
        return "StorageLevel({}, {}, {}, {}, {})".format(*self._key())

    def __str__(self) -> str:
        parts = ["Disk " if self.useDisk else "", "Memory " if self.useMemory else "",
                 "OffHeap " if self.useOffHeap else "",
                 "Deserialized " if self.deserialized else "Serialized "]
        return "".join(parts) + f"{self.replication}x Replicated"

    def spark_string(self) -> str:
        """Scala's ``StorageLevel.toString`` (in ``InMemoryRelation``'s plan line)."""
        flags = [n for n, on in (("disk", self.useDisk), ("memory", self.useMemory),
                                 ("offheap", self.useOffHeap),
                                 ("deserialized", self.deserialized)) if on]
        return f"StorageLevel({', '.join(flags + [f'{self.replication} replicas'])})"


StorageLevel.NONE = StorageLevel(False, False, False, False)  # type: ignore[attr-defined]
StorageLevel.DISK_ONLY = StorageLevel(True, False, False, False)  # type: ignore[attr-defined]
StorageLevel.DISK_ONLY_2 = StorageLevel(True, False, False, False, 2)  # type: ignore[attr-defined]
StorageLevel.DISK_ONLY_3 = StorageLevel(True, False, False, False, 3)  # type: ignore[attr-defined]
StorageLevel.MEMORY_ONLY = StorageLevel(False, True, False, False)  # type: ignore[attr-defined]
StorageLevel.MEMORY_ONLY_2 = StorageLevel(False, True, False, False, 2)  # type: ignore[attr-defined]
StorageLevel.MEMORY_AND_DISK = StorageLevel(True, True, False, False)  # type: ignore[attr-defined]
StorageLevel.MEMORY_AND_DISK_2 = StorageLevel(  # type: ignore[attr-defined]
    True, True, False, False, 2)
StorageLevel.OFF_HEAP = StorageLevel(True, True, True, False, 1)  # type: ignore[attr-defined]
StorageLevel.MEMORY_AND_DISK_DESER = StorageLevel(  # type: ignore[attr-defined]
    True, True, False, True)


def same_plan(a: LogicalPlan, b: LogicalPlan) -> bool:
    """Spark's ``sameResult`` of two analyzed plans, where local data (a ``LocalRelation``, which
    canonicalizes without its rows) must also be the same object."""
    if not a.same_result(b):
        return False

    def local(p: LogicalPlan) -> list[int]:
        return [id(r.data) for r in p.collect(
            lambda n: n if isinstance(n, LocalRelation) else None)]

    return local(a) == local(b)


class CachedData:
    """One cache entry: the cached plan, its storage level, and its rows once computed (an
    Arrow ``table``) or the persisted PySpark DataFrame (``frame``, Spark runtime)."""

    __slots__ = ("plan", "storage_level", "table", "frame", "lock")

    def __init__(self, plan: LogicalPlan, storage_level: StorageLevel,
                 frame: Any = None) -> None:
        self.plan = plan
        self.storage_level = storage_level
        self.table: pa.Table | None = None
        self.frame = frame
        self.lock = threading.Lock()


class CacheManager:
    """The session's cache entries (Spark's ``CacheManager``)."""

    def __init__(self) -> None:
        self._entries: list[CachedData] = []
        self._lock = threading.Lock()

    def lookup(self, plan: LogicalPlan, exclude: CachedData | None = None) -> CachedData | None:
        """The entry caching ``plan``'s rows, if any (``exclude`` left out). A projection of
        exactly its child's columns (``df.select("*")``) finds its child's entry, as in
        Spark."""
        with self._lock:
            entries = list(self._entries)
        if not entries:
            return None
        while isinstance(plan, Project) and plan.project_list == plan.child.output:
            plan = plan.child
        return next((e for e in entries if e is not exclude and same_plan(e.plan, plan)), None)

    def cache_query(self, plan: LogicalPlan, storage_level: StorageLevel,
                    frame: Any = None) -> CachedData:
        """Cache ``plan`` (a plan already cached keeps its entry, as in Spark)."""
        with self._lock:
            hit = next((e for e in self._entries if same_plan(e.plan, plan)), None)
            if hit is None:
                hit = CachedData(plan, storage_level, frame)
                self._entries.append(hit)
            return hit

    def uncache_query(self, plan: LogicalPlan) -> list[CachedData]:
        """Drop the entries caching ``plan``'s rows; returns them."""
        with self._lock:
            gone = [e for e in self._entries if same_plan(e.plan, plan)]
            self._entries = [e for e in self._entries if all(e is not g for g in gone)]
        return gone

    def clear(self) -> list[CachedData]:
        """Drop every entry; returns them."""
        with self._lock:
            gone, self._entries = self._entries, []
        return gone

    def use_cached_data(self, plan: LogicalPlan,
                        exclude: CachedData | None = None) -> LogicalPlan:
        """``plan`` with every subtree that a cache entry computes replaced by an
        ``InMemoryRelation`` over the entry (outermost first, as Spark's ``useCachedData``)."""
        with self._lock:
            if not self._entries:
                return plan

        def rule(node: LogicalPlan) -> LogicalPlan | None:
            if isinstance(node, InMemoryRelation):
                return None
            entry = self.lookup(node, exclude)
            if entry is None:
                return None
            return InMemoryRelation(node.output, entry)

        return plan.transform_down(rule)
