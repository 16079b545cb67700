"""SQL metrics of one local run: per physical node and for the whole run.

Per node (Spark's SQL metrics): output rows and batches, time, number of partitions, build size
and spill size (joins, sorts, exchanges), and the peak number of bytes the operator held in its
buffers.  ``time_ns`` is *inclusive* wall time summed over partitions (a pipelined operator's time
includes its children's work done while it pulled their batches); ``stage_time_ns`` is the time
of the tasks that materialized an exchange or broadcast before anyone read it (including its
child's pipeline); :meth:`RunMetrics.self_time_ns` = both minus the children's ``time_ns``.  For the run: the peak of Arrow's allocated bytes sampled between
batches, and the peak of the memory budget in use.

All updates are thread safe (partitions run on a thread pool).
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from typing import Any, TypeVar

import pyarrow as pa

from ember.runtime.local.node_state import NodeState

__all__ = ["NodeMetrics", "RunMetrics"]

A = TypeVar("A")


@dataclass(slots=True, eq=False)
class NodeMetrics:
    """Counters of one physical node in one run."""

    node: Any
    output_rows: int = 0
    output_batches: int = 0
    time_ns: int = 0
    stage_time_ns: int = 0
    num_partitions: int = 0
    build_size: int = 0
    spill_size: int = 0
    peak_memory: int = 0
    extra: dict[str, int] = field(default_factory=dict)
    #: ``{type: accumulator}`` (:meth:`accumulator`)
    accumulators: dict[type, Any] = field(default_factory=dict, repr=False)
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def add(self, **counts: int) -> None:
        """Add to counters by name (``build_size=..., spill_size=...``); unknown names go to
        ``extra``.  ``peak_memory`` is a maximum, not a sum."""
        with self._lock:
            for k, v in counts.items():
                if k == "peak_memory":
                    if v > self.peak_memory:
                        self.peak_memory = v
                elif k in _SUMMED:
                    setattr(self, k, getattr(self, k) + v)
                else:
                    self.extra[k] = self.extra.get(k, 0) + v

    def accumulator(self, cls: type[A]) -> A:
        """The node's accumulator of type ``cls`` in this run (Spark's ``AccumulatorV2`` an
        operator registers, e.g. ``EventTimeWatermarkExec``'s event-time statistics), created
        with ``cls()`` on first use; the driver reads it after the run."""
        acc = self.accumulators.get(cls)
        if acc is None:
            with self._lock:
                acc = self.accumulators.setdefault(cls, cls())
        return acc

    def record_memory(self, nbytes: int) -> None:
        """The operator currently holds ``nbytes`` in buffers (keeps the maximum)."""
        if nbytes > self.peak_memory:
            with self._lock:
                if nbytes > self.peak_memory:
                    self.peak_memory = nbytes

    def _count(self, rows: int, ns: int) -> None:
        with self._lock:
            self.output_rows += rows
            self.output_batches += 1 if rows else 0
            self.time_ns += ns

    def as_dict(self) -> dict[str, int]:
        d = {"output_rows": self.output_rows, "output_batches": self.output_batches,
             "time_ns": self.time_ns, "stage_time_ns": self.stage_time_ns,
             "num_partitions": self.num_partitions,
             "build_size": self.build_size, "spill_size": self.spill_size,
             "peak_memory": self.peak_memory}
        d.update(self.extra)
        return d


_SUMMED = frozenset({"output_rows", "output_batches", "time_ns", "stage_time_ns",
                     "num_partitions", "build_size", "spill_size"})


class RunMetrics:
    """Metrics of every node executed by one :class:`LocalRuntime`, per node
    (:class:`~ember.runtime.local.node_state.NodeState`: two equal subtrees at different places
    of a plan keep separate counters)."""

    def __init__(self) -> None:
        self._nodes: NodeState[NodeMetrics] = NodeState()
        self.peak_memory = 0  # peak Arrow allocation observed during the run (bytes)
        self.peak_budget_used = 0  # peak bytes reserved from the memory budget
        self.spill_size = 0  # bytes written to spill files during the run
        #: adaptive re-planning: the node that ran instead of a planned node
        #: (:mod:`ember.runtime.local.adaptive`)
        self.replaced: NodeState[Any] = NodeState()

    def node(self, node: Any) -> NodeMetrics:
        """The (created on first use) metrics of ``node``."""
        m = self._nodes.get(node)
        return m if m is not None else self._nodes.get_or_create(node, lambda: NodeMetrics(node))

    __getitem__ = node

    def get(self, node: Any) -> NodeMetrics | None:
        """The metrics of ``node`` if it ran, else None."""
        return self._nodes.get(node)

    def __contains__(self, node: Any) -> bool:
        return node in self._nodes

    def items(self) -> list[tuple[Any, NodeMetrics]]:
        return self._nodes.items()

    def self_time_ns(self, node: Any) -> int:
        """``node``'s own time: its inclusive and stage time minus its children's inclusive
        time (never negative)."""
        m = self.get(node)
        if m is None:
            return 0
        kids = sum(c.time_ns for c in (self.get(k) for k in node.children) if c is not None)
        return max(0, m.time_ns + m.stage_time_ns - kids)

    def sample_memory(self) -> None:
        """Record the current Arrow allocation in the run's peak."""
        n = pa.total_allocated_bytes()
        if n > self.peak_memory:
            self.peak_memory = n
