"""The local runtime: executes a physical plan (:mod:`ember.physical`) in process.

Model
-----
``rt.execute(node)`` returns one :data:`PartitionFn` per output partition of ``node``: a callable
yielding that partition's record batches (typed like ``node.output``) when called.  Operators
(registered with :func:`ember.runtime.local.registry.operator`) build their partitions from their
children's, so a chain of narrow operators is one pipelined iterator per partition (a Spark
*stage*).  Calling a ``PartitionFn`` again recomputes the partition (a cartesian product reads its
right side once per left partition), except below an exchange or broadcast, whose results are
materialized once per run.

Stage boundaries are exchanges: a ``ShuffleExchangeExec`` runs its child's partitions in parallel
on the thread pool (:mod:`.scheduler`) and repartitions their batches in process (:mod:`.exchange`),
then coalesces adjacent partitions to a target size; exchanges feeding the same co-partitioned
operator (shuffled joins) are coalesced with one shared grouping, so partition ``i`` of both sides
still holds the same keys.  ``rt.broadcast(node)`` materializes a ``BroadcastExchangeExec`` once
per run and builds its hashed relation on first use.  A ``ReusedExchangeExec`` (an exchange
identical to an earlier one) reads that exchange's materialized output: computed once, read twice.

Per-run state -- materialized exchanges and broadcasts, spill files, the memory budget, metrics --
lives on the runtime, never on the (immutable, shareable) plan nodes.  A ``LocalRuntime`` runs one
query; create a new one per query.

>>> # rt = LocalRuntime(conf); table = rt.collect(physical_plan); rt.metrics[node].output_rows
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator, Sequence
from typing import Any, TypeVar

import pyarrow as pa

from ember.conf import MEMORY_BUDGET, PROGRESS_ENABLED, SQLConf
from ember.execution.context import ExecContext
from ember.execution.kernels.batches import conform_batch, make_batch, schema_of
from ember.runtime.local.memory import MemoryManager, SpillDir
from ember.runtime.local.metrics import RunMetrics
from ember.runtime.local.progress import ProgressBar
from ember.runtime.local.registry import PartitionFn, lookup
from ember.runtime.local.scheduler import default_parallelism, run_stage

__all__ = ["LocalRuntime", "BroadcastValue", "PartitionFn"]

R = TypeVar("R")


class BroadcastValue:
    """A materialized ``BroadcastExchangeExec``: ``table`` holds every row of its child;
    ``relation`` (HashedRelationBroadcastMode only) is the hashed relation, built once on first
    use and shared by every partition."""

    def __init__(self, node: Any, table: pa.Table, rt: "LocalRuntime") -> None:
        self.node = node
        self.table = table
        self._rt = rt
        self._relation: Any = None
        self._lock = threading.Lock()

    @property
    def relation(self) -> Any:
        from ember.physical.partitioning import HashedRelationBroadcastMode

        if self._relation is None:
            with self._lock:
                if self._relation is None:
                    mode = self.node.mode
                    if not isinstance(mode, HashedRelationBroadcastMode):
                        raise TypeError(f"{mode.simple_string()} has no hashed relation")
                    from ember.execution.prepare import prepare
                    from ember.runtime.local.joins.hashed_relation import HashedRelation

                    keys = tuple(prepare(k, self.node.child.output) for k in mode.keys)
                    t0 = time.perf_counter_ns()
                    self._relation = HashedRelation.build(
                        self.table, keys, allows_null_key=False, null_aware=mode.is_null_aware,
                        shared=True)
                    self._rt.metrics.node(self.node).add(
                        stage_time_ns=time.perf_counter_ns() - t0)
        return self._relation


class LocalRuntime:
    """Runs physical plans in process, partitions in parallel (see module docstring).

    ``conf``: the session's :class:`~ember.conf.SQLConf` (batch size, memory budget, shuffle
    coalescing, progress bar).  ``parallelism``: the number of cores to size coalesced partitions
    for (default ``os.cpu_count()``).
    """

    def __init__(self, conf: SQLConf | None = None, *, parallelism: int | None = None,
                 progress: ProgressBar | None = None,
                 logical_links: dict[int, Any] | None = None) -> None:
        self.conf = conf if conf is not None else SQLConf()
        self.ctx = ExecContext(self.conf)
        self.metrics = RunMetrics()
        self.memory = MemoryManager(int(self.conf.get(MEMORY_BUDGET)))
        self.spill_dir = SpillDir()
        self.parallelism = parallelism or default_parallelism()
        self.progress = progress if progress is not None else ProgressBar(
            enabled=bool(self.conf.get(PROGRESS_ENABLED)))
        self._lock = threading.RLock()
        self._executed: dict[int, tuple[Any, list[PartitionFn]]] = {}
        self._broadcasts: dict[int, BroadcastValue] = {}
        self._node_locks: dict[int, threading.Lock] = {}
        # exchange bookkeeping (see ember.runtime.local.exchange)
        self.exchange_state: Any = None
        #: ``{id(physical node): logical plan}`` from ``ember.planning.plan_query_with_links``;
        #: enables adaptive join conversion (:mod:`.adaptive`)
        self.logical_links = logical_links
        #: data filters a Parquet scan applied exactly, by id(FileSourceScanExec)
        self.scan_exact_filters: dict[int, tuple[Any, ...]] = {}
        #: ids of the nodes whose partitioning / ordering is relied upon (set by ``collect``)
        self.relied_upon: tuple[set[int], set[int]] | None = None
        #: Parquet column chunks shared by this run's scans (``collect`` creates and clears it)
        self.scan_cache: Any = None
        #: the plan ``collect`` runs, and the ids of the nodes whose ``execute`` is under way
        #: (:func:`.adaptive.preconvert` looks for joins not yet reached)
        self.plan_root: Any = None
        self.plan_parents: dict[int, Any] | None = None
        self.executing: set[int] = set()
        #: ``{id(node): expr ids of its output read by its parents}`` (``pruning.read_columns``,
        #: set by ``collect``): joins and filters skip gathering the columns nobody reads
        self.column_needs: dict[int, Any] | None = None

    # -- running plans ---------------------------------------------------------------------------
    def execute(self, node: Any) -> list[PartitionFn]:
        """The output partitions of ``node`` (computed once per node and run)."""
        hit = self._executed.get(id(node))
        if hit is not None:
            return hit[1]
        from ember.runtime.local import adaptive, exchange

        exchange.analyze(node, self)
        self.executing.add(id(node))
        try:
            if self.relied_upon is not None and self.logical_links is not None:
                new = adaptive.convert_join(node, self)
                if new is not None:
                    self.metrics.replaced[id(node)] = new
                    if id(new) not in self.logical_links and id(node) in self.logical_links:
                        self.logical_links[id(new)] = self.logical_links[id(node)]
                    parts = self.execute(new)
                    with self._lock:
                        hit = self._executed.setdefault(id(node), (node, parts))
                    return hit[1]
            parts = lookup(node)(node, self)
            parts = self._instrument(node, parts)
            with self._lock:
                hit = self._executed.setdefault(id(node), (node, parts))
            return hit[1]
        finally:
            self.executing.discard(id(node))

    def collect(self, node: Any) -> pa.Table:
        """Every row of ``node`` as one table (partitions in order), with ``node.output``'s
        schema even when empty."""
        schema = schema_of(node.output)
        if self.logical_links is not None and self.relied_upon is None:
            from ember.runtime.local.adaptive import relied_upon

            self.relied_upon = relied_upon(node)
        if self.plan_root is None:
            self.plan_root = node
        from ember.runtime.local.pruning import read_columns

        # before anything runs; a runtime runs one query (a later collect prunes nothing more)
        first = self.column_needs is None and not self._executed
        self.column_needs = read_columns(node) if first else {}
        from ember.runtime.local.scan_cache import ScanCache

        self.scan_cache = ScanCache.for_plan(node, self)
        with self.progress:
            parts = self.execute(node)
            results = self.run_stage("result", [_drain(p) for p in parts])
        if self.scan_cache is not None:
            self.scan_cache.clear()
        self.metrics.peak_budget_used = self.memory.peak
        self.metrics.spill_size = self.spill_dir.bytes_written
        batches = [conform_batch(b, schema) for r in results for b in r if b.num_rows]
        if not len(schema):
            n = sum(b.num_rows for b in batches)
            return pa.Table.from_batches([make_batch([], schema, n)]) if n else \
                pa.Table.from_batches([], schema=schema)
        return pa.Table.from_batches(batches, schema=schema)

    def broadcast(self, node: Any) -> BroadcastValue:
        """The materialized ``BroadcastExchangeExec`` ``node`` (computed once per run; a
        ``ReusedExchangeExec`` of a broadcast answers its exchange's value: same rows and
        positions, the exchange's column names)."""
        from ember.physical.nodes import ReusedExchangeExec

        if isinstance(node, ReusedExchangeExec):
            return self.broadcast(node.child)
        hit = self._broadcasts.get(id(node))
        if hit is not None:
            return hit
        with self._node_lock(node):
            hit = self._broadcasts.get(id(node))
            if hit is not None:
                return hit
            m = self.metrics.node(node)
            t0 = time.perf_counter_ns()
            schema = schema_of(node.child.output)
            parts = self.execute(node.child)
            results = self.run_stage(f"broadcast {node.plan_id}", [_drain(p) for p in parts])
            batches = [conform_batch(b, schema) for r in results for b in r if b.num_rows]
            if len(schema):
                table = pa.Table.from_batches(batches, schema=schema)
            else:
                n = sum(b.num_rows for b in batches)
                table = pa.Table.from_batches([make_batch([], schema, n)] if n else [],
                                              schema=schema)
            m.add(stage_time_ns=time.perf_counter_ns() - t0, build_size=table.nbytes,
                  peak_memory=table.nbytes, output_rows=table.num_rows)
            value = BroadcastValue(node, table, self)
            self._broadcasts[id(node)] = value
            return value

    def drop_broadcast(self, node: Any) -> None:
        """Forget the materialized broadcast ``node`` (its rows were moved elsewhere)."""
        self._broadcasts.pop(id(node), None)

    def run_stage(self, name: str, tasks: Sequence[Callable[[], R]]) -> list[R]:
        """Run ``tasks`` on the thread pool, results in task order (progress-tracked)."""
        return run_stage(name, tasks, self.progress)

    def close(self) -> None:
        """Delete this run's spill files (and drop its shared scan columns)."""
        self.spill_dir.cleanup()
        if self.scan_cache is not None:
            self.scan_cache.clear()

    def __enter__(self) -> "LocalRuntime":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    # -- helpers ---------------------------------------------------------------------------------
    def _node_lock(self, node: Any) -> threading.Lock:
        with self._lock:
            lock = self._node_locks.get(id(node))
            if lock is None:
                lock = self._node_locks[id(node)] = threading.Lock()
            return lock

    def _instrument(self, node: Any, parts: list[PartitionFn]) -> list[PartitionFn]:
        m = self.metrics.node(node)
        m.add(num_partitions=len(parts))
        metrics = self.metrics

        def wrap(fn: PartitionFn) -> PartitionFn:
            def run() -> Iterator[pa.RecordBatch]:
                clock = time.perf_counter_ns
                t0 = clock()
                it = iter(fn())
                while True:
                    try:
                        b = next(it)
                    except StopIteration:
                        m._count(0, clock() - t0)
                        return
                    m._count(b.num_rows, clock() - t0)
                    metrics.sample_memory()
                    yield b
                    t0 = clock()

            return run

        return [wrap(p) for p in parts]


def _drain(p: PartitionFn) -> Callable[[], list[pa.RecordBatch]]:
    return lambda: list(p())
