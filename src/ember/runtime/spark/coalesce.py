"""How many Spark tasks each shuffle of a plan runs as (the Spark runtime's partition
coalescing).

A ``ShuffleExchangeExec`` of ``n`` partitions keeps its ``n`` (rows are hashed or range-cut into
the same ``n`` partitions as on the local runtime), but Spark reads them as ``m <= n`` tasks,
task ``j`` holding the adjacent partitions ``[j*n/m, (j+1)*n/m)``, as Spark's adaptive
CoalesceShufflePartitions groups them.  ``m`` is sized from the bytes of the source data under the shuffle
(:func:`input_bytes`) to ``ember.execution.advisoryPartitionSizeInBytes``;
shuffles read by the same region (the two sides of a join) form one group and share one ``m``,
so they stay co-partitioned.  A shuffle over data of unknown size (remote files) keeps ``m = n``.
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from typing import Any

from ember.conf import ADVISORY_PARTITION_SIZE, COALESCE_MIN_PARTITION_SIZE, SPARK_COALESCE_PARTITIONS
from ember.physical.nodes import (
    CartesianProductExec, CoalesceExec, ReusedExchangeExec, ShuffleExchangeExec, SparkPlan, UnionExec,
    FileSourceScanExec, LocalTableScanExec, OneRowRelationExec, RangeExec, SparkDataFrameScanExec,
)
from ember.runtime.local.node_state import NodeState
from ember.plans.logical.statistics import spark_frame_stats
from ember.runtime.spark.runtime import cut_region

__all__ = ["task_counts", "region_roots"]


def region_roots(plan: SparkPlan) -> Iterator[tuple[SparkPlan, Any]]:
    """Every region of ``plan`` as ``(root, cut region)``, each once, parents first."""

    seen: set[int] = set()
    stack = [plan]
    while stack:
        root = stack.pop()
        if id(root) in seen:
            continue
        seen.add(id(root))
        region = cut_region(root)
        yield root, region
        for b in region.broadcasts:
            stack.append(b.child)
        for node in region.inputs:
            if isinstance(node, ReusedExchangeExec):
                node = node.child
            match node:
                case ShuffleExchangeExec(child=child):
                    stack.append(child)
                case UnionExec(inputs=inputs):
                    stack.extend(inputs)
                case CoalesceExec(child=child):
                    stack.append(child)
                case CartesianProductExec(left=left, right=right):
                    stack.extend((left, right))


def task_counts(plan: SparkPlan, conf: Any, parallelism: int) -> NodeState[int]:
    """The Spark tasks reading each shuffle exchange of ``plan``."""
    exchanges: dict[int, ShuffleExchangeExec] = {}
    parent: dict[int, int] = {}

    def find(x: int) -> int:
        while parent[x] != x:
            parent[x] = parent[parent[x]]
            x = parent[x]
        return x

    for _, region in region_roots(plan):
        members = []
        for node in region.inputs:
            if isinstance(node, ReusedExchangeExec):
                node = node.child
            if isinstance(node, ShuffleExchangeExec):
                exchanges[id(node)] = node
                parent.setdefault(id(node), id(node))
                members.append(id(node))
        for m in members[1:]:
            parent[find(m)] = find(members[0])
    groups: dict[int, list[ShuffleExchangeExec]] = {}
    for key, node in exchanges.items():
        groups.setdefault(find(key), []).append(node)
    out: NodeState[int] = NodeState()
    memo: dict[int, int | None] = {}
    enabled = bool(conf.get(SPARK_COALESCE_PARTITIONS))
    for members in groups.values():
        n = max(m.output_partitioning.num_partitions for m in members)
        sizes = [input_bytes(m.child, memo) for m in members]
        if not enabled or n <= 1 or any(s is None for s in sizes):
            m_count = n
        else:
            total = sum(sizes)  # type: ignore[arg-type]
            target = max(min(int(conf.get(ADVISORY_PARTITION_SIZE)),
                             math.ceil(total / max(1, parallelism))),
                         int(conf.get(COALESCE_MIN_PARTITION_SIZE)), 1)
            m_count = max(1, min(n, math.ceil(total / target)))
        for m in members:
            out[m] = min(m_count, m.output_partitioning.num_partitions) or 1
    return out


def input_bytes(node: SparkPlan, memo: dict[int, int | None] | None = None) -> int | None:
    """Bytes of the source data under ``node`` (in-memory tables, files on a local file system,
    ranges, Spark's estimate of a registered PySpark DataFrame), or None when a source's size is unknown: rows through a shuffle rarely outgrow
    the data they come from, so this sizes the shuffle's tasks."""

    memo = {} if memo is None else memo
    key = id(node)
    if key in memo:
        return memo[key]
    total: int | None
    match node:
        case LocalTableScanExec(data=data):
            total = 0 if data is None else int(data.nbytes)
        case RangeExec(start=start, end=end, step=step):
            total = 8 * max(0, (end - start) // step if step else 0)
        case OneRowRelationExec():
            total = 0
        case FileSourceScanExec(relation=rel):
            try:
                total = sum(_path_bytes(p) for p in rel.paths)
            except OSError:
                total = None
        case SparkDataFrameScanExec(frame=frame):

            size = spark_frame_stats(frame)[0]
            total = size if size is not None and size < (1 << 62) else None
        case ReusedExchangeExec(child=child):
            total = input_bytes(child, memo)
        case _:
            parts = [input_bytes(c, memo) for c in node.children]
            total = None if any(x is None for x in parts) else sum(parts)  # type: ignore[misc]
    memo[key] = total
    return total


def _path_bytes(path: str) -> int:
    import os

    if "://" in path and not path.startswith("file://"):
        raise OSError(f"size of {path} unknown")
    path = path.removeprefix("file://")
    if os.path.isdir(path):
        return sum(os.path.getsize(os.path.join(d, f)) for d, _, fs in os.walk(path) for f in fs)
    return os.path.getsize(path)
