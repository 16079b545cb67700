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
lives in the run context the runtime is (:class:`~ember.runtime.local.context.RunContext`), never
on the (immutable, shareable) plan nodes.  A ``LocalRuntime`` runs one query; create a new one per
query.

>>> # rt = LocalRuntime(conf); table = rt.collect(physical_plan); rt.metrics[node].output_rows
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator, Sequence
from typing import Any, TypeVar

import pyarrow as pa

from ember.execution.kernels.batches import conform_batch, make_batch, schema_of
from ember.physical.nodes import ReusedExchangeExec
from ember.runtime.local import adaptive, exchange
from ember.runtime.local.context import BroadcastValue, RunContext
from ember.runtime.local.node_state import NodeState
from ember.runtime.local.pruning import read_columns
from ember.runtime.local.registry import PartitionFn, lookup
from ember.runtime.local.scan_cache import ScanCache
from ember.runtime.local.scheduler import run_stage

__all__ = ["LocalRuntime", "BroadcastValue", "PartitionFn"]

R = TypeVar("R")


class LocalRuntime(RunContext):
    """Runs physical plans in process, partitions in parallel (see module docstring); the
    :class:`~ember.runtime.local.context.RunContext` its operators receive.

    ``conf``: the session's :class:`~ember.conf.SQLConf` (batch size, memory budget, shuffle
    coalescing, progress bar).  ``parallelism``: the number of cores to size coalesced partitions
    for (default ``os.cpu_count()``).
    """

    # -- running plans ---------------------------------------------------------------------------
    def execute(self, node: Any) -> list[PartitionFn]:
        """The output partitions of ``node`` (computed once per node and run)."""
        hit = self.executed.get(node)
        if hit is not None:
            return hit
        exchange.analyze(node, self)
        self.executing.add(node)
        try:
            if self.relied_upon is not None and self.logical_links is not None:
                new = adaptive.convert_join(node, self)
                if new is not None:
                    self.metrics.replaced[node] = new
                    if id(new) not in self.logical_links and id(node) in self.logical_links:
                        self.logical_links[id(new)] = self.logical_links[id(node)]
                    return self.executed.setdefault(node, self.execute(new))
            parts = lookup(node)(node, self)
            return self.executed.setdefault(node, self._instrument(node, parts))
        finally:
            self.executing.discard(node)

    def collect(self, node: Any) -> pa.Table:
        """Every row of ``node`` as one table (partitions in order), with ``node.output``'s
        schema even when empty."""
        schema = schema_of(node.output)
        if self.logical_links is not None and self.relied_upon is None:
            self.relied_upon = adaptive.relied_upon(node)
        if self.plan_root is None:
            self.plan_root = node
        # before anything runs; a runtime runs one query (a later collect prunes nothing more)
        self.column_needs = read_columns(node) if not self.executed else NodeState()
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
        if isinstance(node, ReusedExchangeExec):
            return self.broadcast(node.child)
        hit = self.broadcasts.get(node)
        if hit is not None:
            return hit
        with self.node_lock(node):
            hit = self.broadcasts.get(node)
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
            self.broadcasts[node] = value
            return value

    def drop_broadcast(self, node: Any) -> None:
        """Forget the materialized broadcast ``node`` (its rows were moved elsewhere)."""
        self.broadcasts.pop(node)

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
    def _instrument(self, node: Any, parts: list[PartitionFn]) -> list[PartitionFn]:
        m = self.metrics.node(node)
        m.add(num_partitions=len(parts))
        metrics = self.metrics
        check_deadline = self.check_deadline

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
                    check_deadline()
                    yield b
                    t0 = clock()

            return run

        return [wrap(p) for p in parts]


def _drain(p: PartitionFn) -> Callable[[], list[pa.RecordBatch]]:
    return lambda: list(p())
