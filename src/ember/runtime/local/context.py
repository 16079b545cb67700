"""The run context: everything an operator of the local runtime receives besides its node.

One query run owns one :class:`RunContext` (a :class:`~ember.runtime.local.LocalRuntime`, or a
Spark task's ``TaskRuntime``): the session's configuration and its execution settings, the memory
budget and spill files, the run's SQL metrics, the progress bar, the registries of materialized
broadcasts and exchanges, and the per-node state of the run.  It is Spark's ``TaskContext``
(configuration, memory, metrics of one task) together with ``SparkPlan``'s per-node metrics and
the driver's ``BroadcastManager`` / shuffle registry, for a runtime where the whole plan runs in
one process.  An operator ``run(node, rt: RunContext)`` reads its children with
``rt.execute(child)``; every field below always exists (``None`` only where the docstring says
what ``None`` means), so no operator probes the context.

Per-node state lives in :class:`~.node_state.NodeState` / :class:`~.node_state.NodeSet` stores
keyed by the physical node, never on the (immutable, shareable) plan nodes and never in bare dicts
keyed by ``id(node)``.
"""

from __future__ import annotations

import threading
from abc import ABC, abstractmethod
import time
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, TypeVar

import pyarrow as pa

from ember.conf import EXECUTION_TIMEOUT, MEMORY_BUDGET, PROGRESS_ENABLED, SQLConf
from ember.errors import ExecutionError
from ember.execution.context import ExecContext
from ember.execution.prepare import prepare
from ember.physical.partitioning import HashedRelationBroadcastMode
from ember.runtime.local.exchange import ExchangeState
from ember.runtime.local.joins.hashed_relation import HashedRelation
from ember.runtime.local.memory import MemoryManager, SpillDir
from ember.runtime.local.metrics import RunMetrics
from ember.runtime.local.node_state import NodeSet, NodeState
from ember.runtime.local.progress import ProgressBar
from ember.runtime.local.registry import PartitionFn
from ember.runtime.local.runtime_filters import RuntimeFilters
from ember.runtime.local.scheduler import default_parallelism

if TYPE_CHECKING:
    from ember.physical.nodes import SparkPlan
    from ember.runtime.local.scan_cache import ScanCache

__all__ = ["RunContext", "BroadcastValue", "timeout_error"]

R = TypeVar("R")


class BroadcastValue:
    """A materialized ``BroadcastExchangeExec``: ``table`` holds every row of its child;
    ``relation`` (HashedRelationBroadcastMode only) is the hashed relation, built once on first
    use and shared by every partition."""

    def __init__(self, node: Any, table: pa.Table, rt: "RunContext") -> None:
        self.node = node
        self.table = table
        self._rt = rt
        self._relation: Any = None
        self._lock = threading.Lock()

    @property
    def relation(self) -> Any:
        if self._relation is None:
            with self._lock:
                if self._relation is None:
                    mode = self.node.mode
                    if not isinstance(mode, HashedRelationBroadcastMode):
                        raise TypeError(f"{mode.simple_string()} has no hashed relation")
                    keys = tuple(prepare(k, self.node.child.output) for k in mode.keys)
                    t0 = time.perf_counter_ns()
                    self._relation = HashedRelation.build(
                        self.table, keys, allows_null_key=False, null_aware=mode.is_null_aware,
                        shared=True)
                    self._rt.metrics.node(self.node).add(
                        stage_time_ns=time.perf_counter_ns() - t0)
        return self._relation


def timeout_error(conf: SQLConf) -> ExecutionError:
    """The error of a query cancelled past ``ember.execution.timeout`` (both runtimes):
    Spark's ``OPERATION_CANCELED``."""
    ms = int(conf.get(EXECUTION_TIMEOUT))
    return ExecutionError(f"Operation has been canceled: the query ran longer than "
                          f"ember.execution.timeout ({ms} ms).", error_class="OPERATION_CANCELED")


class RunContext(ABC):
    """The state of one run that operators read and write (see the module docstring).

    ``conf``: the session's :class:`~ember.conf.SQLConf` (``ctx``: the execution settings read
    from it -- batch size, time zone, ANSI).  ``parallelism``: the cores coalesced partitions are
    sized for.  ``logical_links``: ``{id(physical node): logical plan}`` from
    ``ember.planning.plan_query_with_links``, or None: enables adaptive join conversion
    (:mod:`.adaptive`).

    The runtime (:class:`~ember.runtime.local.LocalRuntime`) implements :meth:`execute`,
    :meth:`broadcast`, :meth:`drop_broadcast` and :meth:`run_stage`.
    """

    def __init__(self, conf: SQLConf | None = None, *, parallelism: int | None = None,
                 progress: ProgressBar | None = None,
                 logical_links: dict[int, Any] | None = None) -> None:
        self.conf: SQLConf = conf if conf is not None else SQLConf()
        self.ctx = ExecContext(self.conf)
        self.metrics = RunMetrics()
        #: the index of this run's first partition (a Spark task's partition; 0 locally)
        self.partition_offset = 0
        self.memory = MemoryManager(int(self.conf.get(MEMORY_BUDGET)))
        timeout_ms = int(self.conf.get(EXECUTION_TIMEOUT))
        #: ``time.monotonic()`` past which the run is cancelled (``ember.execution.timeout``;
        #: None: no limit), checked between batches by :meth:`check_deadline`
        self.deadline: float | None = (time.monotonic() + timeout_ms / 1000
                                       if timeout_ms > 0 else None)
        self.spill_dir = SpillDir()
        self.parallelism: int = parallelism or default_parallelism()
        #: the index of this run's first partition in the whole job (a Spark task's index, for
        #: Spark's partition-dependent functions: spark_partition_id(), rand(seed) ...)
        self.partition_base: int = 0
        self.progress = progress if progress is not None else ProgressBar(
            enabled=bool(self.conf.get(PROGRESS_ENABLED)))
        #: the output partitions of every node executed in this run
        self.executed: NodeState[list[PartitionFn]] = NodeState()
        #: the nodes whose ``execute`` is under way (:func:`.adaptive.preconvert` looks for
        #: joins not yet reached)
        self.executing = NodeSet()
        #: the materialized broadcast exchanges
        self.broadcasts: NodeState[BroadcastValue] = NodeState()
        #: the shuffle exchanges' coalesce groups, map outputs and partitions (:mod:`.exchange`)
        self.exchanges = ExchangeState()
        self._node_locks: NodeState[threading.Lock] = NodeState()
        self.logical_links = logical_links
        #: data filters a Parquet scan applied exactly, per ``FileSourceScanExec``
        self.scan_exact_filters: NodeState[tuple[Any, ...]] = NodeState()
        #: the runtime join filters registered per ``FileSourceScanExec`` (:mod:`.runtime_filters`)
        self.runtime_filters = RuntimeFilters()
        #: the nodes whose partitioning / ordering is relied upon (set by ``collect`` when
        #: adaptive conversion is on; None: no adaptive conversion)
        self.relied_upon: tuple[NodeSet, NodeSet] | None = None
        #: Parquet column chunks shared by this run's scans (``collect`` creates and clears it;
        #: None: no sharing)
        self.scan_cache: ScanCache | None = None
        #: the plan ``collect`` runs, and each of its nodes' parent (built on first use by
        #: :mod:`.adaptive`)
        self.plan_root: SparkPlan | None = None
        self.plan_parents: NodeState[SparkPlan] | None = None
        #: the expr ids of each node's output read by its parents (``pruning.read_columns``,
        #: set by ``collect``; empty: nothing is pruned): joins and filters skip gathering the
        #: columns nobody reads
        self.column_needs: NodeState[frozenset[int] | None] = NodeState()

    # -- implemented by the runtime ------------------------------------------------------------
    @abstractmethod
    def execute(self, node: Any) -> list[PartitionFn]:
        """The output partitions of ``node`` (computed once per node and run)."""

    @abstractmethod
    def broadcast(self, node: Any) -> BroadcastValue:
        """The materialized ``BroadcastExchangeExec`` ``node`` (computed once per run)."""

    @abstractmethod
    def drop_broadcast(self, node: Any) -> None:
        """Forget the materialized broadcast ``node`` (its rows were moved elsewhere)."""

    @abstractmethod
    def run_stage(self, name: str, tasks: Sequence[Callable[[], R]]) -> list[R]:
        """Run ``tasks`` (in parallel), results in task order."""

    def check_deadline(self) -> None:
        """Cancel the run (``OPERATION_CANCELED``, Spark's class for a cancelled operation) once
        it is past ``ember.execution.timeout``."""
        if self.deadline is not None and time.monotonic() > self.deadline:
            raise timeout_error(self.conf)

    # -- per-node helpers ------------------------------------------------------------------------
    def node_lock(self, node: Any) -> threading.Lock:
        """A lock of ``node``'s own in this run (materializing it once)."""
        return self._node_locks.get_or_create(node, threading.Lock)
