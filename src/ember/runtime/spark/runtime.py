"""The Spark runtime: Ember's physical plans executed on a SparkSession, as RDDs.

Ember's optimizer and planner decide the plan; Spark runs it.  The plan is cut into *regions*
at Spark's RDD boundaries, and each boundary becomes an RDD of Arrow IPC blobs (one record batch
each, :mod:`.worker`):

- ``ShuffleExchangeExec``: the child region's tasks cut their output by target partition
  (:class:`~.worker.ShuffleSink`: Ember's row hash, so both sides of a join agree) and
  ``RDD.partitionBy(n)`` shuffles the pieces with Spark's shuffle: the same keys and count as
  the plan says, so co-partitioned inputs stay co-partitioned.  Range partitioning first samples
  the (persisted) child for its bounds, as Spark's RangePartitioner does; a child the sample
  shows to be under the advisory partition size is read by one task in place, without a
  shuffle, as Spark's adaptive execution coalesces a small shuffle.
- ``BroadcastExchangeExec``: the child's rows are collected once on the driver (by one task
  when the child reads only shuffles the adaptive conversion measured) and shipped with
  ``SparkContext.broadcast``; each Python worker builds the hashed relation once and reuses it
  for every task of the query (:class:`~.worker.TaskRuntime`).
- ``UnionExec``: ``SparkContext.union`` (narrow: Spark pipelines it into the next stage).
- ``CartesianProductExec``: ``RDD.cartesian`` over the two sides, one partition each.
- leaves: files through Spark's own readers with the columns and filters Ember pushes down
  (:mod:`.sources`), in-memory tables shipped as Arrow, ranges generated on the executors.

Every other operator runs inside a Spark task: a region (a subtree between boundaries) is
shipped to ``mapPartitionsWithIndex`` and runs on the local runtime's operators over that task's
partition of each input.  A region reading several co-partitioned inputs (a sort-merge or
shuffled hash join) gets them in one of three ways: when they are shuffles nothing else reads,
through ONE shuffle of all their map outputs, each piece tagged with its input (Spark's
CoGroupedRDD: one Python pass per task); when they are hash shuffles some other consumer reuses,
through ``SparkContext.union`` of their shuffled RDDs, which share one partitioner, so Spark's
``PartitionerAwareUnionRDD`` hands task ``i`` partition ``i`` of each in the JVM (what Spark's
``zipPartitions`` gives its ShuffledHashJoin and SortMergeJoin); otherwise (inputs that are not
hash shuffles) through ``RDD.zip`` of one-element partitions.  Either way a task holds its
partition of each input as Arrow bytes before the join starts.  Only the result (``collect``) and broadcast relations reach the
driver.

The same walk, without a SparkContext, describes the Spark stages for EXPLAIN
(:func:`describe_stages`).
"""

from __future__ import annotations

import functools
import threading
import uuid
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pyarrow as pa

from ember.conf import (ADAPTIVE_ENABLED, ADVISORY_PARTITION_SIZE, EXECUTION_TIMEOUT,
                         SPARK_COALESCE_PARTITIONS, SPARK_DYNAMIC_FILTER_MIN_SCAN,
                         SPARK_DYNAMIC_FILTER_VALUES, SQLConf)
from ember.errors import InternalError
from ember.execution.kernels.batches import schema_of
from ember.physical.nodes import (BroadcastExchangeExec, BroadcastNestedLoopJoinExec, BuildSide,
                                  CartesianProductExec, CoalesceExec, CollectLimitExec,
                                  FileSourceScanExec, LocalLimitExec, LocalTableScanExec,
                                  OneRowRelationExec, RangeExec, ReusedExchangeExec,
                                  ShuffleExchangeExec,
                                  SparkDataFrameScanExec, SparkPlan, TakeOrderedAndProjectExec,
                                  UnionExec)
from ember.physical.partitioning import HashPartitioning, RangePartitioning, SinglePartition
from ember.runtime.local.context import timeout_error
from ember.runtime.local.node_state import NodeSet, NodeState
from ember.runtime.spark import worker, sources
from ember.runtime.spark.errors import task_errors
from ember.runtime.spark.nodes import NestedLoopPartExec, SparkInputExec
from ember.runtime.local.exchange import bounds_from_sample
from ember.runtime.local.joins.nested_loop_join import is_streamed_path
from ember.runtime.spark.adaptive import convert_joins, premeasure

__all__ = ["SparkRuntime", "prepare_for_spark", "BOUNDARIES", "SOURCES"]

#: Leaves that become source RDDs.
SOURCES = (LocalTableScanExec, FileSourceScanExec, RangeExec, OneRowRelationExec,
           SparkDataFrameScanExec)
#: Nodes that start a new RDD (everything else runs inside the region above them).
BOUNDARIES = (ShuffleExchangeExec, UnionExec, CartesianProductExec, CoalesceExec, *SOURCES)

def prepare_for_spark(plan: SparkPlan) -> SparkPlan:
    """``plan`` with the operators that gather many partitions into one (CollectLimit,
    TakeOrderedAndProject) split into a per-partition step, a single-partition shuffle and the
    final step, as Spark runs them; nothing else changes."""
    def split(node: SparkPlan) -> SparkPlan | None:
        match node:
            case CollectLimitExec(child=child) if not _single(child):
                pre = LocalLimitExec(node.limit, child) if node.limit >= 0 else child
                return node.copy(child=ShuffleExchangeExec(SinglePartition(), pre))
            case TakeOrderedAndProjectExec(child=child) if not _single(child):
                pre = TakeOrderedAndProjectExec(node.limit, node.sort_order, child.output, child)
                return node.copy(child=ShuffleExchangeExec(SinglePartition(), pre))
        return None

    return plan.transform_up(split)


def _single(node: SparkPlan) -> bool:
    return isinstance(node.output_partitioning, SinglePartition) and not isinstance(
        node, SOURCES)


@dataclass
class _Region:
    """A region as cut from the plan: its task plan, inputs and broadcasts."""

    root: SparkPlan
    plan: SparkPlan
    inputs: list[SparkPlan] = field(default_factory=list)
    broadcasts: list[BroadcastExchangeExec] = field(default_factory=list)


def global_nested_loop(node: SparkPlan) -> bool:
    """Whether ``node`` is a broadcast nested loop join whose result needs every stream
    partition at once (the runtime runs it in parts, :class:`NestedLoopPartExec`)."""

    return isinstance(node, BroadcastNestedLoopJoinExec) and not is_streamed_path(
        node.join_type, node.build_side is BuildSide.LEFT)


def cut_region(root: SparkPlan) -> _Region:
    """The operators of ``root``'s region, its boundary inputs (in input order) and the
    broadcast exchanges it reads."""
    region = _Region(root, root)

    def cut(node: SparkPlan) -> SparkPlan:
        if isinstance(node, BroadcastExchangeExec):
            region.broadcasts.append(node)
            return node.copy(child=SparkInputExec(-1, node.child.output, "broadcast"))
        if isinstance(node, ReusedExchangeExec) and isinstance(node.child, BroadcastExchangeExec):
            return node.copy(child=cut(node.child))
        if isinstance(node, SparkInputExec):
            return node
        if isinstance(node, (*BOUNDARIES, ReusedExchangeExec)) or global_nested_loop(node):
            region.inputs.append(node)
            return SparkInputExec(len(region.inputs) - 1, node.output, node.simple_string(),
                                  node.output_partitioning, node.output_ordering)
        kids = node.children
        if not kids:
            raise InternalError(f"The Spark runtime cannot run {node.simple_string()}")
        return node.with_children([cut(c) for c in kids])

    region.plan = cut(root)
    return region


def reused_exchanges(plan: SparkPlan) -> NodeSet:
    """The exchanges of ``plan`` that a ``ReusedExchangeExec`` reads again."""
    return NodeSet(n.child for n in plan.collect(
        lambda n: n if isinstance(n, ReusedExchangeExec) else None))


def _one_task_count(exchanges: list[SparkPlan], tasks: NodeState[int]) -> bool:
    """Whether every one of ``exchanges`` (two or more) is read by the same number of tasks."""
    return len(exchanges) > 1 and len(
        {tasks.get(x, x.output_partitioning.num_partitions) for x in exchanges}) == 1


def unioned(region: _Region, tasks: NodeState[int]) -> bool:
    """Whether ``region``'s inputs are two or more hash shuffles (some read elsewhere too)
    read by the same number of tasks: their shuffled RDDs share one partitioner, and Spark's
    partitioner-aware union gives a task its partition of each (as Spark's ``zipPartitions``,
    with no Python step per input)."""
    ins = [x.child if isinstance(x, ReusedExchangeExec) else x for x in region.inputs]
    return all(type(x) is ShuffleExchangeExec
               and isinstance(x.output_partitioning, HashPartitioning)
               for x in ins) and _one_task_count(ins, tasks)


def cogrouped(region: _Region, reused: NodeSet, tasks: NodeState[int]) -> bool:
    """Whether ``region``'s inputs travel through one tagged shuffle: two or more shuffles,
    read by nothing else, into the same number of tasks."""
    ins = region.inputs
    return all(type(x) is ShuffleExchangeExec and x not in reused
               for x in ins) and _one_task_count(ins, tasks)


def run_map_stage(sc: Any, shuffled: Any) -> None:
    """Runs the map stage of ``shuffled`` (an ``RDD.partitionBy`` result) and keeps its map
    outputs, as Spark's adaptive execution materializes a shuffle query stage
    (``SparkContext.submitMapStage``): no reduce task runs.  Where that method is unavailable,
    a JVM ``count`` of the shuffled RDD runs the map stage and reads it back once."""
    rdd = shuffled._jrdd.rdd()
    try:
        dep = rdd.dependencies().head().rdd().dependencies().head()
        ok = dep.getClass().getName() == "org.apache.spark.ShuffleDependency"
    except Exception:  # noqa: BLE001 - another RDD shape than PySpark's partitionBy makes
        ok = False
    if ok:
        from py4j.protocol import Py4JError, Py4JJavaError

        try:
            future = sc._jsc.sc().submitMapStage(dep)
        except Py4JJavaError:
            raise
        except Py4JError:  # no such method in this Spark
            ok = False
        else:
            future.get()
    if not ok:
        shuffled._jrdd.count()


class SparkRuntime:
    """Runs physical plans on ``spark`` (a ``pyspark.sql.SparkSession``) with ``conf``'s
    settings.  One runtime runs one query: ``collect`` (Arrow on the driver) or ``rdd``
    (blobs, for ``to_spark``); ``close`` releases its broadcasts and persisted RDDs."""

    def __init__(self, spark: Any, conf: SQLConf,
                 logical_links: dict[int, Any] | None = None) -> None:
        self.spark = spark
        self.sc = spark.sparkContext
        self.conf = conf
        #: ``{id(physical node): logical plan}`` (``plan_query_with_links``), for the adaptive
        #: join conversion (:mod:`.adaptive`): hints and size estimates
        self.logical_links = dict(logical_links) if logical_links else None
        self._measured: NodeState[int] = NodeState()
        #: ``(planned join, join that ran)`` for each adaptive conversion of :meth:`collect`
        self.adaptive_log: list[tuple[SparkPlan, SparkPlan]] = []
        #: the plan :meth:`collect` ran (after the adaptive conversions)
        self.final_plan: SparkPlan | None = None
        self._tasks: NodeState[int] = NodeState()
        self._reused = NodeSet()
        self._conf_items = tuple(conf.items())
        self._rdds: NodeState[Any] = NodeState()
        self._broadcasts: NodeState[Any] = NodeState()
        self._broadcast_rows: NodeState[int] = NodeState()
        self._broadcast_tables: NodeState[pa.Table] = NodeState()
        #: the dynamic filters of each file scan (:mod:`.dynamic_filters`)
        self.scan_filters: NodeState[list[Any]] = NodeState()
        #: per measured exchange: ``{key position: distinct values per task, or None}``
        self._shuffle_keys: NodeState[dict[int, Any]] = NodeState()
        self._key_limit = 0
        self._shared = NodeSet()
        #: per hash or range exchange: its shuffled pairs, measured or not (JVM RDDs, no
        #: Python step yet)
        self._partitioned: NodeState[Any] = NodeState()
        #: per exchange, a tag: every shuffle piece ``(task, (tag, blob))`` names the
        #: exchange it belongs to, so a task reading several shuffles together sorts them out
        self._tags: NodeState[int] = NodeState()
        self._broadcast_locks: NodeState[threading.Lock] = NodeState()
        self._release: list[Any] = []

    # -- public ----------------------------------------------------------------------------------
    def collect(self, plan: SparkPlan) -> pa.Table:
        """Every row of ``plan`` as one Arrow table (partitions in order)."""

        plan = prepare_for_spark(plan)
        self._start(plan)
        # the broadcasts no conversion can change (no shuffle below them) first, together: the
        # adaptive conversion measures shuffles whose regions read them, and their keys filter
        # the scans feeding the joins' stream sides (:mod:`.dynamic_filters`)
        # -- while the scans no dynamic filter can change are made (the broadcasts' own scans
        # are made by their builds)
        from concurrent.futures import ThreadPoolExecutor

        # imported here: at module level it would close the import cycle
        # runtime.spark.runtime -> runtime.spark.dynamic_filters -> runtime.spark.coalesce ->
        #   runtime.spark.runtime
        from ember.runtime.spark.dynamic_filters import (candidate_scans, scan_filters,
                                                         shared_nodes, shuffle_candidate_scans)

        max_values = int(self.conf.get(SPARK_DYNAMIC_FILTER_VALUES))
        min_scan = int(self.conf.get(SPARK_DYNAMIC_FILTER_MIN_SCAN))
        later = candidate_scans(plan, min_scan) if max_values > 0 else NodeSet()
        # scans a measured side of a shuffled join may filter: made after the measurements
        deferred = (shuffle_candidate_scans(plan, min_scan)
                    if max_values > 0 and self._adaptive() else NodeSet())
        self._key_limit = max_values if deferred else 0
        self._shared = shared_nodes(plan) if deferred else NodeSet()
        later.update(deferred)
        later.update(NodeSet(n for b in plan.collect(
            lambda b: b if isinstance(b, BroadcastExchangeExec) else None)
            for n in b.collect(lambda n: n if isinstance(n, FileSourceScanExec) else None)))
        with ThreadPoolExecutor(1) as pool:
            early = pool.submit(self._prefetch_scans, plan, lambda n: n not in later)
            self._prefetch_broadcasts(plan, lambda b: b.child.find(
                lambda n: isinstance(n, (ShuffleExchangeExec, ReusedExchangeExec))) is None)
            early.result()
        if max_values > 0:
            self.scan_filters = scan_filters(
                plan, lambda b: self._broadcast_tables.get(b), max_values, min_scan)
        self._prefetch_scans(plan, lambda n: n not in deferred)
        premeasure(plan, self)
        plan = self.final_plan = convert_joins(plan, self)
        self._prefetch_scans(plan)
        self._prefetch_broadcasts(plan)
        last = self._driver_region(plan)
        if last is not None:
            return last
        rdd = self._region_rdd(plan, worker.blobs)
        with task_errors("collecting the result"):
            blobs = rdd.collect()
        return worker.table_of(blobs, schema_of(plan.output))

    def _driver_region(self, plan: SparkPlan) -> pa.Table | None:
        """The result of a plan whose last region reads one single-partition shuffle (a global
        aggregate's final step, a global limit, an unpartitioned window): the shuffle's input
        is collected and the region runs on the driver, which receives the rows anyway,
        instead of a shuffle stage and one more Spark task (each a round of Python workers).
        None for other plans."""
        if isinstance(plan, (*BOUNDARIES, ReusedExchangeExec)) or global_nested_loop(plan):
            return None
        region = cut_region(plan)
        if len(region.inputs) != 1 or region.broadcasts:
            return None
        ex = region.inputs[0]
        if not isinstance(ex, ShuffleExchangeExec) or not isinstance(
                ex.output_partitioning, SinglePartition) or ex in self._partitioned or \
                ex in self._measured or ex in self._reused:
            return None
        rdd = self._region_rdd(ex.child, worker.blobs)
        with task_errors("collecting the result"):
            blobs = rdd.collect()
        spec = worker.RegionSpec(region.plan, self._conf_items, (), plan.simple_string())
        batches = list(worker.execute_region(spec, SQLConf(dict(self._conf_items)),
                                             [worker.decode_all(blobs)], 0))
        return pa.Table.from_batches(batches, schema_of(plan.output))

    def rdd(self, plan: SparkPlan) -> Any:
        """``plan``'s output partitions as an RDD of Arrow IPC blobs (lazy; ``plan`` as
        :func:`prepare_for_spark` returns it; the static plan: no adaptive conversion, so
        nothing runs before an action)."""
        self._start(plan)
        return self._region_rdd(plan, worker.blobs)

    def shuffle_bytes(self, exchange: SparkPlan) -> int:
        """Runs the map stage of a hash ``exchange`` (or of the exchange a reused one reads) and
        returns the Arrow bytes its map tasks wrote; the query's jobs then read that shuffle
        (its map outputs are kept) instead of shuffling again."""
        if isinstance(exchange, ReusedExchangeExec):
            exchange = exchange.child
        hit = self._measured.get(exchange)
        if hit is not None:
            return hit
        self.measure_all([exchange])
        return self._measured[exchange]

    def measure_all(self, exchanges: list[SparkPlan]) -> None:
        """:meth:`shuffle_bytes` of each of ``exchanges``: their RDDs are made one after the
        other, and their map stages run as concurrent Spark jobs."""
        todo: dict[int, SparkPlan] = {}
        for ex in exchanges:
            ex = ex.child if isinstance(ex, ReusedExchangeExec) else ex
            if ex in self._measured:
                continue
            if ex in self._rdds:
                raise InternalError(f"{ex.simple_string()} was planned before it was measured")
            todo.setdefault(id(ex), ex)
        jobs = []
        keys: dict[int, Any] = {}
        for ex in todo.values():
            counter = self.sc.accumulator(0)
            if self._key_limit > 0 and isinstance(ex.output_partitioning, HashPartitioning):
                keys[id(ex)] = self.sc.accumulator({}, worker.KeySetParam())
            pairs = self._shuffle_pairs(ex, keys.get(id(ex))).map(
                functools.partial(worker.count_blob_bytes, counter))
            jobs.append((ex, counter, pairs.partitionBy(self.tasks_of(ex), worker.target_of)))

        def run(job: tuple[SparkPlan, Any, Any]) -> None:
            ex, _, shuffled = job
            with task_errors(f"running the map stage of {ex.simple_string()}"):
                run_map_stage(self.sc, shuffled)

        if len(jobs) == 1:
            run(jobs[0])
        elif jobs:
            from concurrent.futures import ThreadPoolExecutor

            with ThreadPoolExecutor(len(jobs)) as pool:
                for _ in pool.map(run, jobs):
                    pass
        for ex, counter, shuffled in jobs:
            self._rdds[ex] = shuffled.map(worker.value_of_pair)
            self._partitioned[ex] = shuffled
            self._reused.add(ex)  # read through its own shuffle from now on
            self._measured[ex] = int(counter.value)
            if id(ex) in keys:
                self._shuffle_keys[ex] = keys[id(ex)].value

    def filter_other_side(self, join: SparkPlan, measured: BuildSide) -> None:
        """Once the map stage of ``join``'s ``measured`` side has run, the file scans of its
        other side that are not made yet keep only rows whose join key is among the measured
        side's distinct keys (:func:`.dynamic_filters.shuffle_targets`)."""
        # imported here: at module level it would close the import cycle
        # runtime.spark.runtime -> runtime.spark.dynamic_filters -> runtime.spark.coalesce ->
        #   runtime.spark.runtime
        from ember.runtime.spark.dynamic_filters import distinct_keys

        for ex, position, scan, name in self._pending_targets(join, measured):
            values = distinct_keys(self._shuffle_keys.get(ex, {}).get(position),
                                   self._key_limit)
            if values is not None:
                self.scan_filters.setdefault(scan, []).append((name, values))

    def can_filter_other_side(self, join: SparkPlan, side: BuildSide) -> bool:
        """Whether :meth:`filter_other_side` after measuring ``side`` could filter a scan."""
        return bool(self._pending_targets(join, side))

    def _pending_targets(self, join: SparkPlan, side: BuildSide) -> list[Any]:
        """The dynamic-filter targets of ``join``'s ``side`` whose scan RDD is not made yet."""
        # imported here: at module level it would close the import cycle
        # runtime.spark.runtime -> runtime.spark.dynamic_filters -> runtime.spark.coalesce ->
        #   runtime.spark.runtime
        from ember.runtime.spark.dynamic_filters import shuffle_targets

        if self._key_limit <= 0:
            return []
        min_scan = int(self.conf.get(SPARK_DYNAMIC_FILTER_MIN_SCAN))
        return [t for t in shuffle_targets(join, side, min_scan, self._shared)
                if t[2] not in self._rdds]

    def _adaptive(self) -> bool:
        return bool(self.conf.get(ADAPTIVE_ENABLED)) and bool(self.logical_links)

    def carry_over(self, old: SparkPlan, new: SparkPlan) -> None:
        """``new`` replaces ``old`` (its subtree was re-planned): what the runtime keeps by node
        id -- the logical link, the Spark tasks reading a shuffle, reuse -- carries over."""
        if self.logical_links is not None and id(old) in self.logical_links:
            self.logical_links[id(new)] = self.logical_links[id(old)]
        if old in self._tasks:
            self._tasks[new] = self._tasks[old]
        if old in self._reused:
            self._reused.add(new)

    def tasks_of(self, exchange: SparkPlan) -> int:
        """How many Spark tasks read ``exchange``'s shuffle (:mod:`.coalesce`)."""
        return self._tasks.get(exchange, max(1, exchange.output_partitioning.num_partitions))

    def close(self) -> None:
        for item in self._release:
            try:
                item.unpersist()
            except Exception:  # noqa: BLE001 - the context may already be stopped
                pass
        self._release.clear()

    def __enter__(self) -> "SparkRuntime":
        """Runs the query's jobs (those started from this thread) in a job group of their own,
        cancelled on ``KeyboardInterrupt`` or once ``ember.execution.timeout`` has passed (then
        the query fails with ``OPERATION_CANCELED``, as on the local runtime); the SparkContext
        stays usable."""
        self._group = f"ember-query-{uuid.uuid4().hex}"
        self._timed_out = threading.Event()
        self.sc.setJobGroup(self._group, "Ember query", interruptOnCancel=True)
        ms = int(self.conf.get(EXECUTION_TIMEOUT))
        self._timer = None
        if ms > 0:
            def expire() -> None:
                self._timed_out.set()
                self.sc.cancelJobGroup(self._group)

            self._timer = threading.Timer(ms / 1000, expire)
            self._timer.daemon = True
            self._timer.start()
        return self

    def __exit__(self, exc_type: Any, exc: Any, tb: Any) -> None:
        if self._timer is not None:
            self._timer.cancel()
        try:
            if exc_type is not None and issubclass(exc_type, KeyboardInterrupt):
                self.sc.cancelJobGroup(self._group)
            self.sc._jsc.clearJobGroup()  # PySpark has no clearJobGroup of its own
        finally:
            self.close()
        if exc is not None and self._timed_out.is_set() and not isinstance(
                exc, KeyboardInterrupt):
            raise timeout_error(self.conf) from exc

    # -- regions ---------------------------------------------------------------------------------
    def _start(self, plan: SparkPlan) -> None:
        # imported here: at module level it would close the import cycle
        # runtime.spark.runtime -> runtime.spark.coalesce -> runtime.spark.runtime
        from ember.runtime.spark.coalesce import task_counts

        self._tasks = task_counts(plan, self.conf, self.sc.defaultParallelism)
        self._reused = reused_exchanges(plan)

    def _region_rdd(self, root: SparkPlan, sink: Any, one_task: bool = False) -> Any:
        """The RDD of ``sink``'s elements over ``root``'s output partitions (``one_task``: in
        one partition, when every input is a measured shuffle)."""
        if sink is worker.blobs and (isinstance(root, (*BOUNDARIES, ReusedExchangeExec))
                                     or global_nested_loop(root)):
            if one_task:
                return self._one_task_input(root)
            return self._boundary(root)
        region = cut_region(root)
        spec = worker.RegionSpec(
            region.plan, self._conf_items,
            tuple((b.plan_id, self._broadcast(b)) for b in region.broadcasts),
            root.simple_string())
        if not one_task and cogrouped(region, self._reused, self._tasks):
            return self._cogrouped(region, spec, sink)
        if not one_task and unioned(region, self._tasks):
            rdd = self._unioned(region, spec, sink)
            if rdd is not None:
                return rdd
        inputs = [self._one_task_input(n) if one_task else self._boundary(n)
                  for n in region.inputs]
        if len(inputs) == 1:
            fn = functools.partial(worker.run_one, spec, sink)
            return inputs[0].mapPartitionsWithIndex(fn)
        counts = {r.getNumPartitions() for r in inputs}
        if len(counts) != 1:
            raise InternalError(
                f"{root.simple_string()}: inputs are not co-partitioned "
                f"({[r.getNumPartitions() for r in inputs]} partitions)")
        zipped = inputs[0].mapPartitions(worker.as_one)
        for r in inputs[1:]:
            zipped = zipped.zip(r.mapPartitions(worker.as_one))
        fn = functools.partial(worker.run_zipped, spec, sink, len(inputs))
        return zipped.mapPartitionsWithIndex(fn)

    def _one_task_input(self, node: SparkPlan) -> Any:
        """A measured shuffle read by one task: its partitions coalesced in the JVM before
        any Python step, so one Python worker reads them all (coalescing after the Python step
        would run it once per shuffle partition, each a round trip to a worker)."""
        ex = node.child if isinstance(node, ReusedExchangeExec) else node
        return self._partitioned[ex].coalesce(1).map(worker.value_of_pair)

    def _boundary(self, node: SparkPlan) -> Any:
        """The RDD of blobs of a boundary node (memoized: a reused exchange reads the same
        shuffle)."""
        if isinstance(node, ReusedExchangeExec):
            return self._boundary(node.child)
        hit = self._rdds.get(node)
        if hit is not None:
            return hit

        match node:
            case ShuffleExchangeExec():
                rdd = self._shuffle(node)
            case UnionExec(inputs=inputs):
                rdd = self.sc.union([self._region_rdd(c, worker.blobs) for c in inputs])
            case CoalesceExec(num_partitions=n, child=child):  # Spark's CoalesceExec
                rdd = self._region_rdd(child, worker.blobs).coalesce(n)
            case CartesianProductExec(left=left, right=right):
                rdd = self._cartesian(node, left, right)
            case BroadcastNestedLoopJoinExec():
                rdd = self._nested_loop(node)
            case LocalTableScanExec():
                rdd = sources.local_table(self, node)
            case RangeExec():
                rdd = sources.range_rdd(self, node)
            case OneRowRelationExec():
                rdd = sources.one_row(self)
            case FileSourceScanExec():
                rdd = sources.file_scan(self, node)
            case SparkDataFrameScanExec():
                rdd = sources.spark_dataframe(self, node)
            case _:
                raise InternalError(f"The Spark runtime cannot run {node.simple_string()}")
        self._rdds[node] = rdd
        return rdd

    def _shuffle_pairs(self, node: ShuffleExchangeExec, keys_to: Any = None) -> Any:
        """The map side of ``node``: ``(task, blob)`` pairs for ``RDD.partitionBy``
        (``keys_to``: an accumulator given the distinct values of its hash keys)."""
        part = node.output_partitioning
        if isinstance(part, RangePartitioning) and part.num_partitions > 1:
            return self._range_pairs(node, *self._range_input(node))
        header = node.copy(child=SparkInputExec(-1, node.child.output, "exchange input"))
        sink = worker.ShuffleSink(header, node.child.output, self._tag(node), None,
                                  self._piece_rows(), self.tasks_of(node), keys_to,
                                  self._key_limit)
        return self._region_rdd(node.child, sink)

    def _tag(self, exchange: SparkPlan) -> int:
        return self._tags.setdefault(exchange, len(self._tags))

    def _piece_rows(self) -> int:
        """Rows a shuffle piece merges up to before it is encoded."""
        return self.conf.batch_size * 8

    def _range_pairs(self, node: ShuffleExchangeExec, child: Any, bounds: tuple | None) -> Any:
        """The map side of a range exchange over its persisted input ``child``."""
        header = node.copy(child=SparkInputExec(-1, node.child.output, "exchange input"))
        sink = worker.ShuffleSink(header, node.child.output, self._tag(node), bounds,
                                  self._piece_rows(), self.tasks_of(node))
        spec = worker.RegionSpec(SparkInputExec(0, node.child.output, "exchange input"),
                                 self._conf_items, (), node.simple_string())
        return child.mapPartitionsWithIndex(functools.partial(worker.run_one, spec, sink))

    def _range_input(self, node: ShuffleExchangeExec) -> tuple[Any, tuple | None]:
        """The (persisted) input of a range exchange and its partition bounds, from a sample of
        every input partition's sort keys, as Spark's RangePartitioner samples.  The sample
        also counts the input's Arrow bytes: an input under
        ``ember.execution.advisoryPartitionSizeInBytes`` is read by one task (the bounds are
        then None), as Spark's adaptive execution coalesces the partitions of a small
        shuffle (unless ``ember.spark.coalescePartitions.enabled`` is off)."""
        part = node.output_partitioning
        n = max(1, part.num_partitions)
        child = self._region_rdd(node.child, worker.blobs).persist()
        self._release.append(child)
        per_partition = max(20, 100 * n // max(1, child.getNumPartitions()))
        sampler = worker.SampleSink(node, node.child.output, per_partition)
        spec = worker.RegionSpec(SparkInputExec(0, node.child.output, "exchange input"),
                                 self._conf_items, (), node.simple_string())
        with task_errors(f"sampling {node.simple_string()}"):
            samples = child.mapPartitionsWithIndex(
                functools.partial(worker.run_one, spec, sampler)).collect()
        batches = [b for blob in samples for b in worker.decode(blob)]
        size = sum(int((b.schema.metadata or {}).get(b"bytes", 0)) for b in batches)
        if self.conf.get(SPARK_COALESCE_PARTITIONS) and size <= int(
                self.conf.get(ADVISORY_PARTITION_SIZE)):
            self._tasks[node] = 1
            return child, None
        keys = pa.Table.from_batches(batches).combine_chunks()

        bounds = tuple(bounds_from_sample(part, [c.chunk(0) if c.num_chunks else
                                                 pa.array([], c.type)
                                                 for c in keys.columns]))
        return child, bounds

    def _shuffle(self, node: ShuffleExchangeExec) -> Any:
        part = node.output_partitioning
        if isinstance(part, RangePartitioning) and part.num_partitions > 1:
            child, bounds = self._range_input(node)
            if bounds is None:
                # small: one task reads every input partition in place (a narrow coalesce of
                # the sampled, persisted input; no shuffle)
                return child.coalesce(1)
            pairs = self._range_pairs(node, child, bounds)
        else:
            pairs = self._shuffle_pairs(node)
        shuffled = pairs.partitionBy(self.tasks_of(node), worker.target_of)
        self._partitioned[node] = shuffled
        return shuffled.map(worker.value_of_pair)

    def _cogrouped(self, region: _Region, spec: worker.RegionSpec, sink: Any) -> Any:
        """A region reading only shuffles that nothing else reads: one Spark shuffle of all
        their map outputs, each piece tagged with its input (Spark's CoGroupedRDD), instead
        of one shuffle per input zipped afterwards."""
        tagged = [self._shuffle_pairs(x) for x in region.inputs]
        inputs_of = {self._tag(x): (i,) for i, x in enumerate(region.inputs)}
        tasks = self.tasks_of(region.inputs[0])
        return self.sc.union(tagged).partitionBy(tasks, worker.target_of).mapPartitionsWithIndex(
            functools.partial(worker.run_tagged, spec, sink, inputs_of, len(region.inputs)))

    def _unioned(self, region: _Region, spec: worker.RegionSpec, sink: Any) -> Any:
        """A region reading hash shuffles of which some are read elsewhere too (so they cannot
        be one shuffle, :meth:`_cogrouped`): each input's shuffled RDD partitioned alike, and
        ``SparkContext.union`` of them is Spark's ``PartitionerAwareUnionRDD``, whose task
        ``i`` reads partition ``i`` of every input in the JVM; the pieces' tags sort them out.
        None when the shuffled RDDs are not partitioned alike (the caller zips them)."""
        exchanges = [x.child if isinstance(x, ReusedExchangeExec) else x for x in region.inputs]
        unique: dict[int, Any] = {}
        inputs_of: dict[int, tuple[int, ...]] = {}
        for i, ex in enumerate(exchanges):
            self._boundary(ex)
            shuffled = self._partitioned.get(ex)
            if shuffled is None:
                return None
            unique.setdefault(id(ex), shuffled)
            tag = self._tag(ex)
            inputs_of[tag] = (*inputs_of.get(tag, ()), i)
        rdds = list(unique.values())
        if len({r.getNumPartitions() for r in rdds}) != 1:
            return None
        union = rdds[0] if len(rdds) == 1 else self.sc.union(rdds)
        if len(rdds) > 1 and union._jrdd.rdd().getClass().getSimpleName() != (
                "PartitionerAwareUnionRDD"):
            return None  # a plain union would concatenate the partitions, not align them
        return union.mapPartitionsWithIndex(
            functools.partial(worker.run_tagged, spec, sink, inputs_of, len(exchanges)))

    def _cartesian(self, node: CartesianProductExec, left: SparkPlan, right: SparkPlan) -> Any:
        lr = self._region_rdd(left, worker.blobs).mapPartitions(worker.as_one)
        rr = self._region_rdd(right, worker.blobs).mapPartitions(worker.as_one)
        plan = node.copy(left=SparkInputExec(0, left.output, left.simple_string()),
                         right=SparkInputExec(1, right.output, right.simple_string()))
        spec = worker.RegionSpec(plan, self._conf_items, (), node.simple_string())
        return lr.cartesian(rr).mapPartitionsWithIndex(
            functools.partial(worker.run_pair, spec, worker.blobs))

    def _nested_loop(self, node: BroadcastNestedLoopJoinExec) -> Any:
        """A nested loop join needing every stream partition, as Spark runs it: one job finds
        the build rows each stream partition matches (OR-ed here), then the pairs per stream
        partition (the stream side evaluated again) and one task for the unmatched build
        rows."""
        build_left = node.build_side is BuildSide.LEFT
        stream = node.right if build_left else node.left
        stream_rdd = self._region_rdd(stream, worker.blobs)
        placeholder = SparkInputExec(0, stream.output, stream.simple_string())
        region = cut_region(node.left if build_left else node.right)  # the broadcast
        if region.inputs or len(region.broadcasts) != 1:
            raise InternalError(f"{node.simple_string()}: the build side is not a broadcast")
        region.plan = node.copy(**{"left": region.plan, "right": placeholder} if build_left
                                else {"left": placeholder, "right": region.plan})
        broadcasts = tuple((b.plan_id, self._broadcast(b)) for b in region.broadcasts)

        def spec(part: str, bits: bytes = b"", n: int = 0) -> worker.RegionSpec:
            return worker.RegionSpec(NestedLoopPartExec(part, region.plan, bits, n),
                                     self._conf_items, broadcasts, node.simple_string())

        with task_errors(f"matching the build rows of {node.simple_string()}"):
            parts = stream_rdd.mapPartitionsWithIndex(
                functools.partial(worker.run_one, spec("bits"), worker.blobs)).collect()
        arrays = [b.column(0).to_numpy(zero_copy_only=False)
                  for b in worker.decode_all(parts)]
        bits = functools.reduce(np.logical_or, arrays) if arrays else None
        if bits is None:  # no stream partition ran: nothing matched
            bits = np.zeros(self._broadcast_rows[region.broadcasts[0]], dtype=bool)
        unmatched = self.sc.parallelize([], 1).mapPartitionsWithIndex(functools.partial(
            worker.run_one, spec("unmatched", np.packbits(bits).tobytes(), len(bits)),
            worker.blobs))
        if node.join_type.is_left_existence:
            return unmatched
        pairs = stream_rdd.mapPartitionsWithIndex(
            functools.partial(worker.run_one, spec("pairs"), worker.blobs))
        return self.sc.union([pairs, unmatched])

    def _prefetch_scans(self, plan: SparkPlan, which: Any = None) -> None:
        """Makes the RDDs of ``plan``'s file scans (those ``which`` accepts) concurrently (each
        plans a Spark query in the JVM; :func:`.sources.file_scans`)."""

        found = plan.collect(lambda n: n if isinstance(n, FileSourceScanExec)
                             and (which is None or which(n)) else None)
        todo = [n for n in {id(n): n for n in found}.values() if n not in self._rdds]
        if not todo:
            return
        for node, rdd in zip(todo, sources.file_scans(self, todo)):
            self._rdds[node] = rdd

    def _prefetch_broadcasts(self, plan: SparkPlan, which: Any = None) -> None:
        """Builds ``plan``'s broadcast relations (those ``which`` accepts) concurrently, one
        Spark job each (a broadcast's job is often a single task: run one after the other they
        leave cores idle), as Spark builds them asynchronously.  Nested ones wait for each other
        (:meth:`_broadcast`)."""
        found = plan.collect(lambda n: n if isinstance(n, BroadcastExchangeExec)
                             and (which is None or which(n)) else None)
        unique = list({id(b): b for b in found}.values())
        if len(unique) < 2:
            for b in unique:
                self._broadcast(b)
            return
        from concurrent.futures import ThreadPoolExecutor

        with ThreadPoolExecutor(min(len(unique), 16)) as pool:
            for _ in pool.map(self._broadcast, unique):
                pass

    def broadcast_table(self, node: BroadcastExchangeExec) -> pa.Table | None:
        """The rows of the broadcast ``node`` (built now if it is not yet), for the dynamic
        partition pruning of a scan (:func:`.sources.file_scan`)."""
        self._broadcast(node)
        return self._broadcast_tables.get(node)

    def _broadcast(self, node: BroadcastExchangeExec) -> Any:
        """The Spark broadcast variable of ``node``'s rows (collected once per run, also when
        several threads ask for it)."""
        with self._broadcast_locks.setdefault(node, threading.Lock()):
            hit = self._broadcasts.get(node)
            if hit is not None:
                return hit
            return self._build_broadcast(node)

    def _build_broadcast(self, node: BroadcastExchangeExec) -> Any:
        inputs = cut_region(node.child).inputs
        # reads only shuffles measured small enough to broadcast (an adaptive conversion): one
        # task reads them all, not one per shuffle partition
        one_task = bool(inputs) and all((x.child if isinstance(x, ReusedExchangeExec) else x)
                                        in self._measured for x in inputs)
        rdd = self._region_rdd(node.child, worker.blobs, one_task)
        with task_errors(f"building {node.simple_string()}"):
            blobs = rdd.collect()
        table = worker.table_of(blobs, schema_of(node.child.output))
        payload = worker.encode_table(table)
        self._broadcast_rows[node] = table.num_rows
        self._broadcast_tables[node] = table
        bc = self.sc.broadcast((uuid.uuid4().hex, payload))
        self._release.append(bc)
        self._broadcasts[node] = bc
        return bc
