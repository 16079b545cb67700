"""Glue shared by the join operators: binding a physical join node to kernels, metrics access,
and the ordered thread-pool map that spreads one partition's stream batches over idle cores."""

from __future__ import annotations

import threading
from collections import deque
from collections.abc import Callable, Iterable, Iterator, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from typing import TYPE_CHECKING, Any

import pyarrow as pa

from ember.conf import MEMORY_BUDGET, SQLConf
from ember.execution.kernels.batches import conform_batch, schema_of
from ember.execution.prepare import prepare
from ember.expressions.base import AttributeReference, Expression
from ember.runtime.local.joins.kernel import JoinLayout
from ember.runtime.local.memory import MemoryManager, SpillDir
from ember.runtime.local.pruning import output_mask
from ember.runtime.local.scheduler import default_parallelism

if TYPE_CHECKING:
    from ember.runtime.local.context import RunContext


def bind_all(exprs: Sequence[Expression], attrs: Sequence[AttributeReference]) -> tuple[Expression, ...]:
    """``exprs`` bound to (and constant-folded over) ``attrs``."""
    return tuple(prepare(e, attrs) for e in exprs)


def layout_of(node: Any, batch_size: int, *, build_left: bool,
              condition: Expression | None = None, use_condition: bool = True,
              rt: RunContext | None = None) -> JoinLayout:
    """The :class:`JoinLayout` of a physical join node (``node.output`` order); with the run
    ``rt``, the output columns no parent reads are not gathered (:mod:`..pruning`)."""
    cond = node.condition if use_condition and condition is None else condition
    return JoinLayout.of(node.join_type, build_left, node.left.output, node.right.output,
                         node.output, cond, batch_size, keep=output_mask(rt, node))


def conformed(batches: Iterable[pa.RecordBatch], attrs: Sequence[AttributeReference]
              ) -> Iterator[pa.RecordBatch]:
    """``batches`` relabelled to ``attrs``' schema (children may name columns differently)."""
    schema = schema_of(attrs)
    for b in batches:
        yield conform_batch(b, schema)


class NodeMetricsSink:
    """Where an operator partition reports build size / time / spill size; a no-op without a
    runtime (kernel-level tests)."""

    def __init__(self, rt: RunContext | None = None, node: Any = None) -> None:
        self._m = rt.metrics.node(node) if rt is not None and node is not None else None

    def add(self, **counts: int) -> None:
        if self._m is not None:
            self._m.add(**counts)

    def record_memory(self, nbytes: int) -> None:
        if self._m is not None:
            self._m.record_memory(nbytes)


def runtime_memory(rt: RunContext | None) -> tuple[MemoryManager, SpillDir]:
    """The run's MemoryManager and SpillDir (fresh ones, budget from the default conf, without a
    run context: kernel-level tests)."""
    if rt is not None:
        return rt.memory, rt.spill_dir
    return MemoryManager(int(SQLConf().get(MEMORY_BUDGET))), SpillDir()


# ---------------------------------------------------------------------------------------------
# Intra-partition parallelism

_pool: Any = None
_pool_lock = threading.Lock()


def _join_pool() -> ThreadPoolExecutor:
    """A pool of its own (not the stage scheduler's), so a partition running on a scheduler
    worker can wait on it without deadlocking."""
    global _pool
    if _pool is None:
        with _pool_lock:
            if _pool is None:
                _pool = ThreadPoolExecutor(max_workers=default_parallelism(),
                                           thread_name_prefix="ember-join")
    return _pool


def intra_partition_workers(rt: RunContext | None, num_partitions: int) -> int:
    """Threads one partition may use to process its stream batches: the cores left idle when
    the operator has fewer partitions than cores (1 = sequential)."""
    cores = rt.parallelism if rt is not None else 1
    if num_partitions <= 0 or num_partitions >= cores:
        return 1
    return max(1, cores // num_partitions)


def map_batches_ordered(fn: Callable[[pa.RecordBatch], list[pa.RecordBatch]],
                        batches: Iterable[pa.RecordBatch], workers: int
                        ) -> Iterator[pa.RecordBatch]:
    """``fn`` applied to each input batch on ``workers`` threads, outputs in input order.

    The input iterator is advanced on the calling thread; at most ``2 * workers`` batches are in
    flight.  ``fn`` must be safe to call concurrently (the join kernels only share read-only
    build data and idempotent matched-bit writes); its numpy/pyarrow kernels release the GIL.
    """
    if workers <= 1:
        for b in batches:
            yield from fn(b)
        return
    pool = _join_pool()
    pending: deque[Future] = deque()
    try:
        for b in batches:
            pending.append(pool.submit(fn, b))
            while len(pending) >= 2 * workers or (pending and pending[0].done()):
                yield from pending.popleft().result()
        while pending:
            yield from pending.popleft().result()
    finally:
        for f in pending:
            f.cancel()
        for f in pending:  # let running tasks end before the caller releases their inputs
            if not f.cancelled():
                try:
                    f.result()
                except BaseException:  # noqa: BLE001 - the consumer is gone or already failing
                    pass
