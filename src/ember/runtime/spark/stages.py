"""How a physical plan maps to Spark jobs and stages on the Spark runtime (for EXPLAIN).

The Spark runtime (:mod:`.runtime`) turns each region into a ``mapPartitionsWithIndex`` over its
inputs; Spark then cuts stages at shuffles only, so one Spark stage holds a region plus every
region it reaches through narrow RDD edges (a union's inputs, a cartesian product's sides, the
sources).  A broadcast exchange is its own job (its rows are collected, then broadcast) run
before the job that reads it.  :func:`describe_stages` walks the plan the way the runtime
builds it and prints, per stage: its kind, its tasks, the operators it runs and the shuffles
it reads::

    == Spark Stages ==
    Job 1 (collect the result)
      Stage 2 (result, 1 task): reads the shuffles of stages 0, 1 (read together per partition)
          -> Sort, Sort -> SortMergeJoin -> Project
      Stage 0 (shuffle map, 1 task): LocalTableScan -> Filter -> Project
          -> Exchange hashpartitioning(id#3, 4) map side (4 partitions read as 1 task)
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import Any

from ember.conf import FILES_MAX_PARTITION_BYTES, FILES_MIN_PARTITION_NUM, FILES_OPEN_COST
from ember.execution.file_index import file_splits
from ember.execution.scan import multi_line
from ember.physical.nodes import (
    BroadcastExchangeExec, BroadcastNestedLoopJoinExec, CartesianProductExec, ReusedExchangeExec,
    ShuffleExchangeExec, SparkPlan, UnionExec, CoalesceExec, BuildSide, FileSourceScanExec, LocalTableScanExec,
    RangeExec,
)
from ember.runtime.local.node_state import NodeSet, NodeState
from ember.runtime.spark.nodes import SparkInputExec
from ember.runtime.spark.runtime import (
    cogrouped, global_nested_loop, unioned, cut_region, prepare_for_spark, reused_exchanges,
)
from ember.runtime.local.operators.basic import local_scan_bounds
from ember.runtime.spark.coalesce import task_counts

__all__ = ["describe_stages"]


@dataclass
class _Stage:
    id: int
    kind: str
    tasks: int
    ops: list[str] = field(default_factory=list)
    reads: list[int] = field(default_factory=list)
    zipped: bool = False
    unioned: bool = False
    cogrouped: bool = False
    sink: str = ""


@dataclass
class _Job:
    title: str
    stages: list[_Stage] = field(default_factory=list)


class _Describer:
    def __init__(self, task_counts: NodeState[int], reused: NodeSet, parallelism: int,
                 conf: Any) -> None:
        self.tasks = task_counts
        self.reused = reused
        self.parallelism = parallelism
        self.conf = conf
        self.jobs: list[_Job] = []
        self.next_stage = 0
        self.map_stage: NodeState[_Stage] = NodeState()  # per shuffle exchange

    def job(self, root: SparkPlan, title: str) -> None:
        job = _Job(title)
        stage = self.stage(root, "result", job)
        stage.sink = ("collect" if title.startswith("collect") else
                      "Spark's file writer" if title.startswith("write") else
                      "collect to the driver")
        self.jobs.append(job)

    def stage(self, root: SparkPlan, kind: str, job: _Job) -> _Stage:
        st = _Stage(-1, kind, 0)
        st.tasks = self.fill(root, st, job)
        st.id = self.next_stage
        self.next_stage += 1
        job.stages.append(st)
        return st

    def fill(self, root: SparkPlan, st: _Stage, job: _Job) -> int:
        """Add ``root``'s region (and the narrow regions below it) to ``st``; its tasks."""

        region = cut_region(root)
        for b in region.broadcasts:
            self.job(b.child, f"broadcast {b.simple_string()}")
        if cogrouped(region, self.reused, self.tasks):
            return self.cogroup(region, st, job)
        counts = [self.input(node, st, job) for node in region.inputs]
        ops = _ops(region.plan)
        if ops:
            st.ops.append(" -> ".join(ops))
        if len(counts) > 1:
            if unioned(region, self.tasks):
                st.unioned = True
            else:
                st.zipped = True
        return counts[0] if counts else 1

    def read_as(self, exchange: ShuffleExchangeExec) -> str:
        n = exchange.output_partitioning.num_partitions
        m = self.tasks.get(exchange, n)
        return f" ({n} partitions read as {m} task{'s' if m != 1 else ''})" if m != n else ""

    def cogroup(self, region: Any, st: _Stage, job: _Job) -> int:
        """A region whose input shuffles are one Spark shuffle: one map stage runs every
        input's map side."""
        producer = _Stage(-1, "shuffle map", 0)
        sinks = []
        for x in region.inputs:
            producer.tasks += self.fill(x.child, producer, job)
            sinks.append(f"{x.simple_string()} map side{self.read_as(x)}")
        producer.sink = "; ".join(sinks) + " (one shuffle, pieces tagged by input)"
        producer.id = self.next_stage
        self.next_stage += 1
        job.stages.append(producer)
        st.reads.append(producer.id)
        st.cogrouped = True
        ops = _ops(region.plan)
        if ops:
            st.ops.append(" -> ".join(ops))
        return self.tasks.get(region.inputs[0], 1)

    def input(self, node: SparkPlan, st: _Stage, job: _Job) -> int:
        reused = isinstance(node, ReusedExchangeExec)
        if reused:
            node = node.child
        match node:
            case ShuffleExchangeExec(child=child):
                producer = self.map_stage.get(node)
                if producer is None:
                    producer = self.stage(child, "shuffle map", job)
                    producer.sink = f"{node.simple_string()} map side{self.read_as(node)}"
                    self.map_stage[node] = producer
                st.reads.append(producer.id)
                return self.tasks.get(node, node.output_partitioning.num_partitions)
            case UnionExec(inputs=inputs):
                return sum(self.fill(c, st, job) for c in inputs)
            case CoalesceExec(num_partitions=n, child=child):
                st.ops.append(f"{node.simple_string()} (RDD.coalesce)")
                return min(n, self.fill(child, st, job))
            case BroadcastNestedLoopJoinExec() if global_nested_loop(node):

                build_left = node.build_side is BuildSide.LEFT
                stream = node.right if build_left else node.left
                build = node.left if build_left else node.right
                if isinstance(build, ReusedExchangeExec):
                    build = build.child
                self.job(build.child, f"broadcast {build.simple_string()}")
                self.job(stream, f"matched build rows of {node.simple_string()}")
                tasks = 0 if node.join_type.is_left_existence else self.fill(stream, st, job)
                st.ops.append(f"{node.node_name} (pairs per stream partition, plus one task "
                              "for the unmatched build rows)")
                return tasks + 1
            case CartesianProductExec(left=left, right=right):
                tasks = self.fill(left, st, job) * self.fill(right, st, job)
                st.ops.append(f"{node.node_name} (RDD.cartesian)")
                return tasks
            case _:
                st.ops.append(node.simple_string())
                return _source_tasks(node, self.parallelism, self.conf)


def _ops(plan: SparkPlan) -> list[str]:
    """The region's operators bottom-up (siblings joined by ``, ``), inputs left out."""
    levels: list[list[str]] = []

    def walk(node: SparkPlan, depth: int) -> None:
        if isinstance(node, SparkInputExec):
            return
        while len(levels) <= depth:
            levels.append([])
        levels[depth].append(node.node_name)
        if isinstance(node, BroadcastExchangeExec):
            return
        for c in node.children:
            walk(c, depth + 1)

    walk(plan, 0)
    return [", ".join(level) for level in reversed(levels) if level]


def _source_tasks(node: SparkPlan, parallelism: int, conf: Any) -> int:
    match node:
        case RangeExec(num_slices=k):
            return max(1, k)
        case LocalTableScanExec(data=data):

            return len(local_scan_bounds(0 if data is None else data.num_rows, parallelism)) - 1
        case FileSourceScanExec(relation=rel):
            return _file_splits(rel.paths, parallelism, conf, not multi_line(rel))
    return 1  # a registered PySpark DataFrame: as many as its own plan has (not known here)


def _file_splits(paths: tuple[str, ...], parallelism: int, conf: Any,
                 splittable: bool = True) -> int:
    """How many partitions Spark's file reader makes of local files (``FilePartition``:
    ``spark.sql.files.maxPartitionBytes``, ``openCostInBytes``, ``minPartitionNum`` or the
    cores); for files Ember cannot see, one per file."""
    local = [p.removeprefix("file://").removeprefix("file:") for p in paths]
    if any("://" in p or not os.path.isfile(p) for p in local):
        return max(1, len(paths))
    return max(1, len(file_splits(local, splittable, conf.get(FILES_MAX_PARTITION_BYTES),
                                  conf.get(FILES_OPEN_COST),
                                  conf.get(FILES_MIN_PARTITION_NUM) or parallelism)))


def describe_stages(plan: SparkPlan, conf: Any, parallelism: int,
                    title: str = "collect the result") -> str:
    """The ``== Spark Stages ==`` section of EXPLAIN for ``plan`` on the Spark runtime
    (``title``: what its result job does; ``write files`` for the query of a write, whose last
    stage feeds Spark's file writer)."""

    plan = prepare_for_spark(plan)
    d = _Describer(task_counts(plan, conf, parallelism), reused_exchanges(plan), parallelism,
                   conf)
    d.job(plan, title)
    lines = ["== Spark Stages =="]
    for i, job in enumerate(d.jobs):
        lines.append(f"Job {i} ({job.title})")
        for st in sorted(job.stages, key=lambda s: -s.id):
            head = f"  Stage {st.id} ({st.kind}, {st.tasks} task{'s' if st.tasks != 1 else ''}): "
            parts = []
            if st.reads:
                how = (" (zipped per partition)" if st.zipped
                       else " (read together per partition)" if st.unioned
                       else " (all inputs co-grouped)" if st.cogrouped else "")
                parts.append(f"reads the shuffle{'s' if len(st.reads) > 1 else ''} of stage"
                             f"{'s' if len(st.reads) > 1 else ''} "
                             f"{', '.join(map(str, st.reads))}{how}")
            parts.extend(st.ops)
            if st.sink:
                parts.append(st.sink)
            lines.append(head + "\n      -> ".join(parts))
    return "\n".join(lines)
