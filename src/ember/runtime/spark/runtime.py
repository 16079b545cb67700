"""The Spark runtime: Ember's physical plans executed on a SparkSession, as RDDs.

Ember's optimizer and planner decide the plan; Spark runs it.  The plan is cut into *regions*
at Spark's RDD boundaries, and each boundary becomes an RDD of Arrow IPC blobs (one record batch
each, :mod:`.worker`):

- ``ShuffleExchangeExec``: the child region's tasks cut their output by target partition
  (:class:`~.worker.ShuffleSink`: Ember's row hash, so both sides of a join agree) and
  ``RDD.partitionBy(n)`` shuffles the pieces with Spark's shuffle: the same keys and count as
  the plan says, so co-partitioned inputs stay co-partitioned.  Range partitioning first samples
  the (persisted) child for its bounds, as Spark's RangePartitioner does.
- ``BroadcastExchangeExec``: the child's rows are collected once on the driver and shipped with
  ``SparkContext.broadcast``; each Python worker builds the hashed relation once and reuses it
  for every task of the query (:class:`~.worker.TaskRuntime`).
- ``UnionExec``: ``SparkContext.union`` (narrow: Spark pipelines it into the next stage).
- ``CartesianProductExec``: ``RDD.cartesian`` over the two sides, one partition each.
- leaves: files through Spark's own readers with the columns and filters Ember pushes down
  (:mod:`.sources`), in-memory tables shipped as Arrow, ranges generated on the executors.

Every other operator runs inside a Spark task: a region (a subtree between boundaries) is
shipped to ``mapPartitionsWithIndex`` and runs on the local runtime's operators over that task's
partition of each input.  A region reading several co-partitioned inputs (a sort-merge or
shuffled hash join) gets them through ``RDD.zip`` of one-element partitions: Spark's
``zipPartitions``, as seed 001's ShuffledHashJoin and SortMergeJoin are written.  Only the
result (``collect``) and broadcast relations reach the driver.

The same walk, without a SparkContext, describes the Spark stages for EXPLAIN
(:func:`describe_stages`).
"""

from __future__ import annotations

import functools
import uuid
from dataclasses import dataclass, field
from typing import Any

import pyarrow as pa

from ember.conf import SQLConf
from ember.errors import InternalError
from ember.execution.kernels.batches import schema_of
from ember.physical.nodes import (BroadcastExchangeExec, CartesianProductExec, CollectLimitExec,
                                  FileSourceScanExec, LocalLimitExec, LocalTableScanExec,
                                  OneRowRelationExec, RangeExec, ReusedExchangeExec,
                                  ShuffleExchangeExec, SparkPlan, TakeOrderedAndProjectExec,
                                  UnionExec)
from ember.physical.partitioning import RangePartitioning, SinglePartition
from ember.runtime.spark import worker
from ember.runtime.spark.errors import task_errors
from ember.runtime.spark.nodes import SparkInputExec

__all__ = ["SparkRuntime", "prepare_for_spark", "BOUNDARIES", "SOURCES"]

#: Leaves that become source RDDs.
SOURCES = (LocalTableScanExec, FileSourceScanExec, RangeExec, OneRowRelationExec)
#: Nodes that start a new RDD (everything else runs inside the region above them).
BOUNDARIES = (ShuffleExchangeExec, UnionExec, CartesianProductExec, *SOURCES)

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
        if isinstance(node, BOUNDARIES) or isinstance(node, ReusedExchangeExec):
            region.inputs.append(node)
            return SparkInputExec(len(region.inputs) - 1, node.output, node.simple_string(),
                                  node.output_partitioning, node.output_ordering)
        kids = node.children
        if not kids:
            raise InternalError(f"The Spark runtime cannot run {node.simple_string()}")
        return node.with_children([cut(c) for c in kids])

    region.plan = cut(root)
    return region


class SparkRuntime:
    """Runs physical plans on ``spark`` (a ``pyspark.sql.SparkSession``) with ``conf``'s
    settings.  One runtime runs one query: ``collect`` (Arrow on the driver) or ``rdd``
    (blobs, for ``to_spark``); ``close`` releases its broadcasts and persisted RDDs."""

    def __init__(self, spark: Any, conf: SQLConf) -> None:
        self.spark = spark
        self.sc = spark.sparkContext
        self.conf = conf
        self._tasks: dict[int, int] = {}
        self._conf_items = tuple(conf.items())
        self._rdds: dict[int, Any] = {}
        self._broadcasts: dict[int, Any] = {}
        self._release: list[Any] = []

    # -- public ----------------------------------------------------------------------------------
    def collect(self, plan: SparkPlan) -> pa.Table:
        """Every row of ``plan`` as one Arrow table (partitions in order)."""
        plan = prepare_for_spark(plan)
        rdd = self.rdd(plan)
        with task_errors("collecting the result"):
            blobs = rdd.collect()
        return worker.table_of(blobs, schema_of(plan.output))

    def rdd(self, plan: SparkPlan) -> Any:
        """``plan``'s output partitions as an RDD of Arrow IPC blobs (lazy; ``plan`` as
        :func:`prepare_for_spark` returns it)."""
        from ember.runtime.spark.coalesce import task_counts

        self._tasks = task_counts(plan, self.conf, self.sc.defaultParallelism)
        return self._region_rdd(plan, worker.blobs)

    def close(self) -> None:
        for item in self._release:
            try:
                item.unpersist()
            except Exception:  # noqa: BLE001 - the context may already be stopped
                pass
        self._release.clear()

    def __enter__(self) -> "SparkRuntime":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    # -- regions ---------------------------------------------------------------------------------
    def _region_rdd(self, root: SparkPlan, sink: Any) -> Any:
        """The RDD of ``sink``'s elements over ``root``'s output partitions."""
        if sink is worker.blobs and isinstance(root, (*BOUNDARIES, ReusedExchangeExec)):
            return self._boundary(root)
        region = cut_region(root)
        inputs = [self._boundary(n) for n in region.inputs]
        spec = worker.RegionSpec(
            region.plan, self._conf_items,
            tuple((b.plan_id, self._broadcast(b)) for b in region.broadcasts),
            root.simple_string())
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

    def _boundary(self, node: SparkPlan) -> Any:
        """The RDD of blobs of a boundary node (memoized: a reused exchange reads the same
        shuffle)."""
        if isinstance(node, ReusedExchangeExec):
            return self._boundary(node.child)
        hit = self._rdds.get(id(node))
        if hit is not None:
            return hit
        from ember.runtime.spark import sources

        match node:
            case ShuffleExchangeExec():
                rdd = self._shuffle(node)
            case UnionExec(inputs=inputs):
                rdd = self.sc.union([self._region_rdd(c, worker.blobs) for c in inputs])
            case CartesianProductExec(left=left, right=right):
                rdd = self._cartesian(node, left, right)
            case LocalTableScanExec():
                rdd = sources.local_table(self, node)
            case RangeExec():
                rdd = sources.range_rdd(self, node)
            case OneRowRelationExec():
                rdd = sources.one_row(self)
            case FileSourceScanExec():
                rdd = sources.file_scan(self, node)
            case _:
                raise InternalError(f"The Spark runtime cannot run {node.simple_string()}")
        self._rdds[id(node)] = rdd
        return rdd

    def _shuffle(self, node: ShuffleExchangeExec) -> Any:
        part = node.output_partitioning
        n = max(1, part.num_partitions)
        tasks = self._tasks.get(id(node), n)
        header = node.copy(child=SparkInputExec(-1, node.child.output, "exchange input"))
        rows = int(self.conf.get("ember.execution.batchSize") or 8192) * 8
        if isinstance(part, RangePartitioning) and n > 1:
            child = self._region_rdd(node.child, worker.blobs).persist()
            self._release.append(child)
            per_partition = max(20, 100 * n // max(1, child.getNumPartitions()))
            sampler = worker.SampleSink(header, node.child.output, per_partition)
            spec = worker.RegionSpec(SparkInputExec(0, node.child.output, "exchange input"),
                                     self._conf_items, (), node.simple_string())
            with task_errors(f"sampling {node.simple_string()}"):
                samples = child.mapPartitionsWithIndex(
                    functools.partial(worker.run_one, spec, sampler)).collect()
            bounds = None
            if samples:
                keys = pa.Table.from_batches(
                    [b for blob in samples for b in worker.decode(blob)]).combine_chunks()
                from ember.runtime.local.exchange import bounds_from_sample

                bounds = tuple(bounds_from_sample(part, [c.chunk(0) if c.num_chunks else
                                                         pa.array([], c.type)
                                                         for c in keys.columns]))
            sink = worker.ShuffleSink(header, node.child.output, bounds, rows, tasks)
            pairs = child.mapPartitionsWithIndex(functools.partial(worker.run_one, spec, sink))
        else:
            sink = worker.ShuffleSink(header, node.child.output, None, rows, tasks)
            pairs = self._region_rdd(node.child, sink)
        return pairs.partitionBy(tasks, worker.target_of).map(worker.first_of_pair)

    def _cartesian(self, node: CartesianProductExec, left: SparkPlan, right: SparkPlan) -> Any:
        lr = self._region_rdd(left, worker.blobs).mapPartitions(worker.as_one)
        rr = self._region_rdd(right, worker.blobs).mapPartitions(worker.as_one)
        plan = node.copy(left=SparkInputExec(0, left.output, left.simple_string()),
                         right=SparkInputExec(1, right.output, right.simple_string()))
        spec = worker.RegionSpec(plan, self._conf_items, (), node.simple_string())
        return lr.cartesian(rr).mapPartitionsWithIndex(
            functools.partial(worker.run_pair, spec, worker.blobs))

    def _broadcast(self, node: BroadcastExchangeExec) -> Any:
        """The Spark broadcast variable of ``node``'s rows (collected once per run)."""
        hit = self._broadcasts.get(id(node))
        if hit is not None:
            return hit
        rdd = self._region_rdd(node.child, worker.blobs)
        with task_errors(f"building {node.simple_string()}"):
            blobs = rdd.collect()
        table = worker.table_of(blobs, schema_of(node.child.output))
        payload = worker.encode_table(table)
        bc = self.sc.broadcast((uuid.uuid4().hex, payload))
        self._release.append(bc)
        self._broadcasts[id(node)] = bc
        return bc
