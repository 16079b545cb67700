"""Dynamic filters: a broadcast hash join's build keys applied inside Spark to the scan feeding
its stream side, as Spark's runtime filters and dynamic partition pruning push a join's small
side into a scan, so that Spark converts to Arrow (and Ember's operators see) only rows that can
match.

For a ``BroadcastHashJoinExec`` of type Inner (either build side) or LeftSemi (BuildRight) whose
broadcast has been built, each stream-side key that is a column of a ``FileSourceScanExec``
reached through filters, projects passing the column on, sorts, exchanges and the stream sides of
other broadcast hash joins gets the filter "key among the build side's key values".  It is exact:
each operator on that path carries the column unchanged and handles every row on its own, so a
row whose key is not among the build keys (or is NULL) only leads to rows the join drops.  The
filter runs in Spark as a broadcast left semi join of the scan with the distinct build keys
(Spark's own operator computing the same thing), when there are at most
``ember.spark.dynamicFilters.maxValues`` of them, the key is an integer or string column of the
same type on both sides, the build side is selective (it filters on more than NOT NULL, or
joins: a whole dimension table would keep every row) and the scan reads at least
``ember.spark.dynamicFilters.minScanBytes`` of files (the filter costs Spark a small broadcast join
to plan and run).

The same filter comes from a shuffled join (``SortMergeJoinExec`` / ``ShuffledHashJoinExec``)
once the adaptive join conversion (:mod:`.adaptive`) has run the map stage of one side: that
side's map tasks also collect the distinct values of its integer and string partitioning keys
(the join keys; up to ``maxValues`` per task), and the other side's file scan, when its RDD is
not made yet, keeps only rows whose key is among them -- whether the join then stays shuffled
or becomes a broadcast join.  The filtered side must be one whose unmatched rows never reach the
output: either side of an inner or left semi join, the right side of a left outer, left anti
or existence join, the left side of a right outer join (Spark's runtime filters,
``InjectRuntimeFilter``, take the same sides).  Such scans (:func:`shuffle_candidate_scans`)
are made after the measurements, not with the query's other scans.

A scan is filtered only when nothing else reads it: no exchange on the path from the join to
the scan is read again by a ``ReusedExchangeExec``, and no node on it appears twice in the plan.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc

from ember.expressions.base import AttributeReference
from ember.physical.nodes import (BroadcastExchangeExec, BroadcastHashJoinExec, BuildSide,
                                  FileSourceScanExec, ReusedExchangeExec,
                                  ShuffledHashJoinExec, ShuffleExchangeExec,
                                  SortMergeJoinExec, SparkPlan)
from ember.runtime.local.node_state import NodeSet, NodeState
from ember.runtime.local.adaptive import _side_of
from ember.runtime.local.runtime_filters import scan_of, selective as _selective, shared_nodes
from ember.runtime.spark.coalesce import _path_bytes
from ember.runtime.spark.worker import distinct_values

__all__ = ["ScanFilter", "scan_filters", "candidate_scans", "shuffle_candidate_scans",
           "shuffle_targets", "ShuffleTarget", "distinct_keys", "shared_nodes"]

#: ``(scan column name, distinct key values)``: the scan keeps rows whose column is among them
ScanFilter = tuple[str, pa.Array]
#: ``(measured exchange, position of the key among its partitioning expressions, scan, scan
#: column name)``: the exchange's distinct key values may filter the scan
ShuffleTarget = tuple[ShuffleExchangeExec, int, FileSourceScanExec, str]


def scan_filters(plan: SparkPlan, built: Callable[[BroadcastExchangeExec], pa.Table | None],
                 max_values: int, min_scan_bytes: int) -> NodeState[list[ScanFilter]]:
    """The filters of each scan from the broadcast hash joins of ``plan`` whose broadcast
    ``built`` returns the rows of (None: not built), for scans of at least ``min_scan_bytes``
    of files (a filter costs Spark a small broadcast join to plan and run)."""
    out: NodeState[list[ScanFilter]] = NodeState()
    tables: NodeState[pa.Table | None] = NodeState()
    for exchange, position, scan, name in _targets(plan, min_scan_bytes):
        if exchange not in tables:
            tables[exchange] = built(exchange)
        table = tables[exchange]
        if table is None:
            continue
        col = table.column(position)
        if not (pa.types.is_integer(col.type) or pa.types.is_string(col.type)
                or pa.types.is_large_string(col.type)):
            continue
        values = pc.unique(col.combine_chunks().drop_null())
        if len(values) <= max_values:
            out.setdefault(scan, []).append((name, values))
    return out


def candidate_scans(plan: SparkPlan, min_scan_bytes: int) -> NodeSet:
    """The scans :func:`scan_filters` may filter, whatever the broadcasts hold (the others can
    be made before the broadcasts are built)."""
    return NodeSet(scan for _, _, scan, _ in _targets(plan, min_scan_bytes))


def _targets(plan: SparkPlan, min_scan_bytes: int
             ) -> Iterator[tuple[BroadcastExchangeExec, int, FileSourceScanExec, str]]:
    """``(broadcast, build key position, scan, scan column name)`` of each join key whose build
    values could filter a scan: the plan's side of :func:`scan_filters`."""
    shared = shared_nodes(plan)
    joins = plan.collect(lambda n: n if isinstance(n, BroadcastHashJoinExec) else None)
    for join in {id(j): j for j in joins}.values():
        build_right = join.build_side is BuildSide.RIGHT
        if not join.join_type.can_prune(join.build_side.other):  # the streamed side
            continue
        build, stream = (join.right, join.left) if build_right else (join.left, join.right)
        bkeys, skeys = ((join.right_keys, join.left_keys) if build_right
                        else (join.left_keys, join.right_keys))
        exchange = build.child if isinstance(build, ReusedExchangeExec) else build
        if not isinstance(exchange, BroadcastExchangeExec) or not _selective(exchange.child):
            continue
        ids = [a.id for a in exchange.child.output]
        for bk, sk in zip(bkeys, skeys):
            if not (isinstance(bk, AttributeReference) and isinstance(sk, AttributeReference)
                    and bk.id in ids and bk.data_type == sk.data_type):
                continue
            found = _scan_column(stream, sk.id, shared, min_scan_bytes)
            if found is not None:
                yield exchange, ids.index(bk.id), *found


def _file_bytes(scan: FileSourceScanExec) -> float:
    """Bytes of the scan's files (unknown, e.g. a remote store: taken as large)."""

    try:
        return sum(_path_bytes(p) for p in scan.relation.paths)
    except OSError:
        return float("inf")


def shuffle_candidate_scans(plan: SparkPlan, min_scan_bytes: int) -> NodeSet:
    """The scans a measured side of a shuffled join may filter (:func:`shuffle_targets`
    of every such join, both sides taken as measured)."""
    joins = plan.collect(lambda n: n if isinstance(n, SortMergeJoinExec | ShuffledHashJoinExec)
                         else None)
    shared = shared_nodes(plan)
    return NodeSet(t[2] for j in {id(j): j for j in joins}.values()
                   for side in (BuildSide.LEFT, BuildSide.RIGHT)
                   for t in shuffle_targets(j, side, min_scan_bytes, shared))


def shuffle_targets(join: SparkPlan, measured: BuildSide, min_scan_bytes: int,
                    shared: NodeSet) -> list[ShuffleTarget]:
    """The scans of ``join``'s other side that the distinct keys of its ``measured`` side's
    exchange may filter (module docstring); ``shared``: the plan's nodes read more
    than once (:func:`shared_nodes`)."""

    target = BuildSide.RIGHT if measured is BuildSide.LEFT else BuildSide.LEFT
    if join.join_type.keeps_unmatched(target):  # the target's unmatched rows reach the output
        return []
    source, other = ((join.left, join.right) if measured is BuildSide.LEFT
                     else (join.right, join.left))
    skeys, tkeys = ((join.left_keys, join.right_keys) if measured is BuildSide.LEFT
                    else (join.right_keys, join.left_keys))
    side = _side_of(source)
    if (side is None or not isinstance(side.exchange, ShuffleExchangeExec)
            or not _selective(side.exchange.child)):
        return []
    exprs = side.exchange.output_partitioning.expressions
    out: list[ShuffleTarget] = []
    for sk, tk in zip(skeys, tkeys):
        if not (isinstance(sk, AttributeReference) and isinstance(tk, AttributeReference)
                and sk.data_type == tk.data_type):
            continue
        position = next((i for i, e in enumerate(exprs)
                         if isinstance(e, AttributeReference) and e.id == sk.id), None)
        if position is None:
            continue
        found = _scan_column(other, tk.id, shared, min_scan_bytes)
        if found is not None:
            out.append((side.exchange, position, *found))
    return out


def _scan_column(node: SparkPlan, attr_id: int, shared: NodeSet, min_scan_bytes: int
                 ) -> tuple[FileSourceScanExec, str] | None:
    """The file scan below ``node`` producing column ``attr_id`` through row-preserving
    operators (:func:`_scan_of`), of at least ``min_scan_bytes`` of files, and the column's
    name there (None: no such scan, or the name is ambiguous in it)."""
    scan = scan_of(node, attr_id, shared)
    if scan is None or _file_bytes(scan) < min_scan_bytes:
        return None
    name = next(a.name for a in scan.output if a.id == attr_id)
    if [a.name.lower() for a in scan.output].count(name.lower()) != 1:
        return None
    return scan, name


def distinct_keys(parts: Sequence[pa.Array] | None, max_values: int) -> pa.Array | None:
    """The distinct values the map tasks of a measured exchange collected for one key (None:
    some task held more than ``max_values``, or none held any row), when at most
    ``max_values``."""

    if not parts:
        return None
    values = distinct_values(parts)
    return values if len(values) <= max_values else None


#: integer key sets up to this size filter as one ``IN`` list (Spark's ``InSet``, a hash set in
#: the generated code) instead of a broadcast semi join, whose broadcast is one more Spark job
#: run while the scan's RDD is made
INLINE_MAX_VALUES = 4096


def apply(df: Any, filters: list[ScanFilter]) -> Any:
    """``df`` (a PySpark DataFrame of a scan's columns) keeping the rows whose column is among
    each filter's values: an ``IN`` list for a small integer key set, otherwise a broadcast
    left semi join with the values."""
    from pyspark.sql import functions as F

    spark = df.sparkSession
    for i, (name, values) in enumerate(filters):
        if pa.types.is_integer(values.type) and len(values) <= INLINE_MAX_VALUES:
            listed = ",".join(map(str, values.to_numpy(zero_copy_only=False).tolist()))
            df = df.where(f"`{name}` IN ({listed})" if listed else "false")
            continue
        key = f"__ember_dynamic_key_{i}"
        keys = spark.createDataFrame(pa.table({key: values}))
        df = df.join(F.broadcast(keys), df[f"`{name}`"] == keys[key], "left_semi")
    return df
