"""Runtime join filters: a broadcast hash join's build keys skip the stream side's Parquet row
groups and rows that cannot match, in the scan (Spark's runtime filters, ``InjectRuntimeFilter``,
and the min/max pruning its scans do with them).

When a ``BroadcastHashJoinExec`` runs (:func:`register`, before its stream side is executed),
each join key pair ``(build column, stream column)`` of the same integer type whose stream column
is a column of a ``FileSourceScanExec`` reached through row-preserving operators (filters,
projects passing the column on, sorts, the stream sides of other broadcast hash joins:
:func:`scan_of`) registers a :class:`RuntimeFilter` for that scan.  Only joins whose stream-side
rows without a match never reach the output qualify (Inner, LeftSemi, ...:
``JoinType.keeps_unmatched`` is False for the stream side) with a selective build side
(:func:`selective`: a whole dimension table would keep every row), and only scans nothing else
reads (:func:`shared_nodes`).  Such a row -- a key outside the build keys, or NULL -- only leads to rows
the join drops, since every operator on the path handles each row on its own.

The filter's values are the build side's distinct non-NULL keys, taken from the materialized
broadcast when the scan's partitions are made (:func:`prune_splits`, called by the scan's
operator): the broadcast is built at that moment, before the join would build it (nested stages
run inline, :mod:`.scheduler`), so that the scan can plan its splits over the row groups it
keeps -- as many partitions as without the filter, of equal size.  The scan then

- skips every row group whose Parquet min/max statistics of the column lie outside
  ``[min, max]`` of the build keys (TPC-DS fact tables are stored in date order, so a join with
  a few dates reads a few row groups), telling the run's ``ScanCache`` that it will not read
  them, and groups the others into splits (``split_units``);
- drops the rows outside ``[min, max]`` (unless the statistics show every row inside), and,
  when the build keys are few (``MAX_IN_VALUES``) and do not fill their range, the rows whose
  key is not among them -- on the fetched Arrow columns, before dictionary strings are decoded
  and before any operator above sees them.

``ENABLED`` (module flag) turns the filters off for same-process comparisons and tests.  The
scan's metrics count ``runtime_filtered_row_groups``.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from ember.execution.scan import ParquetSplit, file_columns_of, split_units
from ember.expressions.base import AttributeReference
from ember.expressions.predicate_helper import split_conjunctive_predicates
from ember.expressions.predicates import IsNotNull
from ember.physical.nodes import (BroadcastExchangeExec, BroadcastHashJoinExec, BuildSide,
                                  FileSourceScanExec, FilterExec, ProjectExec, ReusedExchangeExec,
                                  ShuffleExchangeExec, SortExec, SparkPlan)
from ember.runtime.local.node_state import NodeSet, NodeState

if TYPE_CHECKING:
    from ember.runtime.local.context import RunContext

__all__ = ["ENABLED", "RuntimeFilter", "RuntimeFilters", "register", "filters_of", "prune_splits",
           "shared_nodes", "scan_of"]

#: switch for tests and same-process A/B runs: False registers no filter
ENABLED = True
#: at most this many distinct build keys also filter rows by membership (beyond the range)
MAX_IN_VALUES = 1 << 14


@dataclass(eq=False)
class RuntimeFilter:
    """The scan's output column ``attr_id`` keeps the values of column ``position`` of the
    broadcast ``build``'s rows (resolved once, on first use)."""

    attr_id: int
    build: SparkPlan
    position: int
    _lock: threading.Lock = field(default_factory=threading.Lock)
    _resolved: tuple[int, int, pa.Array | None] | None = None
    _empty: bool = False

    def resolve(self, rt: RunContext) -> tuple[int, int, pa.Array | None] | None:
        """``(min, max, values or None)`` of the build keys (``values`` only when there are at
        most ``MAX_IN_VALUES`` and they do not fill ``[min, max]``); None when there is no
        build key (no row of the scan can match).  Builds the broadcast if not built yet."""
        with self._lock:
            if self._resolved is None and not self._empty:
                col = rt.broadcast(self.build).table.column(self.position)
                values = pc.unique(col.combine_chunks().drop_null())
                if len(values) == 0:
                    self._empty = True
                else:
                    mm = pc.min_max(values)
                    lo, hi = mm["min"].as_py(), mm["max"].as_py()
                    dense = len(values) == hi - lo + 1
                    self._resolved = (lo, hi, None if dense or len(values) > MAX_IN_VALUES
                                      else values)
        return None if self._empty else self._resolved


class RuntimeFilters:
    """The run's registered filters per scan node, the plan's shared nodes (computed once) and
    the Parquet footers the filters read statistics from."""

    def __init__(self) -> None:
        self.by_scan: NodeState[list[RuntimeFilter]] = NodeState()
        self._shared: NodeSet | None = None
        self._metadata: dict[str, pq.FileMetaData] = {}
        self._lock = threading.Lock()

    def metadata(self, path: str) -> pq.FileMetaData:
        md = self._metadata.get(path)
        if md is None:
            md = self._metadata[path] = pq.read_metadata(path)
        return md

    def shared(self, root: SparkPlan) -> NodeSet:
        with self._lock:
            if self._shared is None:
                self._shared = shared_nodes(root)
            return self._shared


def register(node: BroadcastHashJoinExec, rt: RunContext) -> None:
    """Register the filters ``node``'s build keys put on the scans of its stream side (module
    docstring); call before the stream side is executed."""
    if not ENABLED or rt.plan_root is None:
        return
    stream_side = node.build_side.other
    if node.join_type.keeps_unmatched(stream_side):
        return
    build = node.build_plan
    exchange = build.child if isinstance(build, ReusedExchangeExec) else build
    if not isinstance(exchange, BroadcastExchangeExec) or not selective(exchange.child):
        return
    ids = [a.id for a in build.output]
    if node.build_side is BuildSide.RIGHT:
        bkeys, skeys = node.right_keys, node.left_keys
    else:
        bkeys, skeys = node.left_keys, node.right_keys
    shared = rt.runtime_filters.shared(rt.plan_root)
    for bk, sk in zip(bkeys, skeys):
        if not (isinstance(bk, AttributeReference) and isinstance(sk, AttributeReference)
                and bk.id in ids and bk.data_type == sk.data_type
                and pa.types.is_integer(sk.data_type.to_arrow())):
            continue
        # not through exchanges: their map stages may run before the join (adaptive
        # conversion), and the scan's partitions would then be made before the filter
        scan = scan_of(node.streamed_plan, sk.id, shared, exchanges=False)
        if scan is None:
            continue
        name = next(a.name for a in scan.output if a.id == sk.id)
        if [a.name.lower() for a in scan.output].count(name.lower()) != 1:
            continue
        with rt.runtime_filters._lock:
            rt.runtime_filters.by_scan.setdefault(scan, []).append(
                RuntimeFilter(sk.id, build, ids.index(bk.id)))


def filters_of(rt: RunContext, scan: FileSourceScanExec) -> list[RuntimeFilter]:
    """The filters registered for ``scan`` so far in the run of ``rt``."""
    return list(rt.runtime_filters.by_scan.get(scan, ()))


# ---------------------------------------------------------------------------------------------
# Applying resolved filters to Parquet row groups and rows


Resolved = list[tuple[str, tuple[int, int, pa.Array | None]]]


def prune_splits(rt: RunContext, scan: FileSourceScanExec, splits: list[ParquetSplit]
                 ) -> tuple[list[ParquetSplit], dict[str, Callable[[pa.Table], pa.Array | None]]]:
    """``splits`` of ``scan`` without the row groups its registered filters prune, regrouped
    into as many splits of equal bytes (``split_units``), and the row mask per file (module
    docstring).  The
    run's ``ScanCache`` learns which row groups the scan skips.  Resolving the filters builds
    their broadcasts now, before the scan's partitions are made."""
    flts = filters_of(rt, scan)
    if not flts or not splits:
        return splits, {}
    units: list[tuple[str, int, int, int]] = []
    masks: dict[str, Callable[[pa.Table], pa.Array | None]] = {}
    skipped = 0
    for sp in splits:
        md = rt.runtime_filters.metadata(sp.path)
        fcols = file_columns_of(md.schema.to_arrow_schema(), scan.output)
        resolved: Resolved | None = []
        for f in flts:
            fc = fcols.get(f.attr_id)
            if fc is None or not pa.types.is_integer(fc[1]):
                continue
            r = f.resolve(rt)
            if r is None:  # no build key: no row can match
                resolved = None
                break
            resolved.append((fc[0], r))
        keep = [] if resolved is None else [
            g for g in sp.row_groups if keeps_row_group(md, g, resolved)]
        if resolved and not all(values is None and _inside(md, g, name, lo, hi)
                                for name, (lo, hi, values) in resolved for g in keep):
            masks[sp.path] = row_mask(resolved)
        if len(keep) < len(sp.row_groups):
            gone = [g for g in sp.row_groups if g not in set(keep)]
            skipped += len(gone)
            if rt.scan_cache is not None:
                rt.scan_cache.skip(scan, sp.path, gone)
        units.extend((sp.path, g, md.row_group(g).num_rows, md.row_group(g).total_byte_size)
                     for g in keep)
    if not skipped:
        return splits, masks
    rt.metrics.node(scan).add(runtime_filtered_row_groups=skipped)
    # as many splits as planned: the rows left are as spread over the cores as before
    return split_units(units, rt.parallelism, count=len(splits)), masks


def keeps_row_group(md: Any, g: int, resolved: Resolved) -> bool:
    """Whether row group ``g`` of the file ``md`` describes may hold a row every filter keeps
    (by the file column's min/max statistics; ``resolved``: ``(file column, (min, max,
    values))``)."""
    rg = md.row_group(g)
    for name, (lo, hi, _values) in resolved:
        for j in range(rg.num_columns):
            col = rg.column(j)
            if col.path_in_schema != name:
                continue
            st = col.statistics
            if st is None or not st.has_min_max:
                break
            if st.null_count == col.num_values:
                return False  # all NULL: no row matches
            smin, smax = st.min, st.max
            if isinstance(smin, int) and isinstance(smax, int) and (smax < lo or smin > hi):
                return False
            break
    return True


def _inside(md: Any, g: int, name: str, lo: int, hi: int) -> bool:
    """Whether every value of the file column ``name`` in row group ``g`` lies in
    ``[lo, hi]`` by its statistics (then a range mask keeps every row there)."""
    rg = md.row_group(g)
    for j in range(rg.num_columns):
        col = rg.column(j)
        if col.path_in_schema == name:
            st = col.statistics
            return (st is not None and st.has_min_max and st.null_count == 0
                    and isinstance(st.min, int) and isinstance(st.max, int)
                    and lo <= st.min and st.max <= hi)
    return False


def row_mask(resolved: Resolved) -> Callable[[pa.Table], pa.Array | None]:
    """A function of a fetched table (file column names) giving the rows every filter keeps (a
    boolean array, NULL as false), or None when it keeps every row."""

    def mask(t: pa.Table) -> pa.Array | None:
        out = None
        for name, (lo, hi, values) in resolved:
            col = t.column(name)
            if values is not None:
                m = pc.is_in(col, value_set=values.cast(col.type))
            else:
                m = pc.and_(pc.greater_equal(col, pa.scalar(lo, col.type)),
                            pc.less_equal(col, pa.scalar(hi, col.type)))
            out = m if out is None else pc.and_(out, m)
        if out is None:
            return None
        if isinstance(out, pa.ChunkedArray):
            out = out.combine_chunks()
        if out.null_count == 0 and out.true_count == len(out):
            return None
        return out

    return mask


# ---------------------------------------------------------------------------------------------
# Plan analysis (shared with the Spark runtime's dynamic filters)


def selective(build: SparkPlan) -> bool:
    """Whether the build side keeps only some of its input's keys: it filters on something
    other than NOT NULL, or joins (otherwise, e.g. a whole dimension table, the filter would
    keep every row it sees)."""

    return build.find(lambda n: isinstance(n, BroadcastHashJoinExec) or (
        isinstance(n, FilterExec) and not all(
            isinstance(c, IsNotNull) for c in split_conjunctive_predicates(n.condition)))
    ) is not None


def shared_nodes(plan: SparkPlan) -> NodeSet:
    """The nodes more than one consumer reads: exchanges a ``ReusedExchangeExec`` reads again,
    and nodes (with their subtrees) found at several places of the tree."""
    seen: NodeState[int] = NodeState()

    def visit(n: SparkPlan) -> None:
        seen[n] = seen.get(n, 0) + 1
        if isinstance(n, ReusedExchangeExec):  # its exchange's subtree is read once more
            n.child.foreach(visit)

    plan.foreach(visit)
    return NodeSet(n for n, count in seen.items() if count > 1)


def scan_of(node: SparkPlan, attr_id: int, shared: NodeSet, exchanges: bool = True
            ) -> FileSourceScanExec | None:
    """The file scan producing column ``attr_id`` through row-preserving operators only, none
    of them read by another consumer (``shared``); through shuffle exchanges only with
    ``exchanges``."""
    while True:
        if attr_id not in {a.id for a in node.output} or node in shared:
            return None
        match node:
            case FileSourceScanExec():
                return node
            case ShuffleExchangeExec() if not exchanges:
                return None
            case FilterExec() | SortExec() | ShuffleExchangeExec():
                node = node.child
            case ProjectExec(project_list=items):
                if not any(isinstance(e, AttributeReference) and e.id == attr_id for e in items):
                    return None  # computed here (an alias is a new column)
                node = node.child
            case BroadcastHashJoinExec(build_side=side, left=left, right=right):
                node = left if side is BuildSide.RIGHT else right
            case _:
                return None

