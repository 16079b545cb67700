"""Spark's ``plan.stats`` (``LogicalPlanStats``) and its size-only estimator
(``SizeInBytesOnlyStatsPlanVisitor``), shared by the optimizer (star detection, cost-based join
reorder) and the physical planner (JoinSelection's broadcast choice).

``plan_stats(plan, conf)`` returns :class:`~ember.plans.logical.statistics.model.Statistics`
(``size_in_bytes``, ``row_count``, ``attribute_stats`` keyed by attribute id, ``hints``), cached on
the plan node (per configuration flags, per session's table statistics and their epoch).

Two estimators, as Spark's: with ``spark.sql.cbo.enabled``, ``BasicStatsPlanVisitor``
(:mod:`~ember.plans.logical.statistics.cbo_estimation`) first, falling back to this module's
size-only one where it has no estimate; otherwise ``SizeInBytesOnlyStatsPlanVisitor`` alone.
Leaves use their own statistics; a unary node's size is ``child size * outputRowWidth /
childRowWidth`` (row width = 8 + the types' ``defaultSize``: boolean/tinyint 1, smallint 2,
int/float/date 4, bigint/double/timestamp 8, decimal 8 when precision <= 18 else 16, string 20,
binary 100, array/struct the elements'), and no row count; Filter keeps the size; Aggregate
without grouping is one row; Limit is ``min(rows, n) * width``; Expand multiplies by the
projection count; Union sums; Intersect takes the smaller side, Except the left; LeftSemi/LeftAnti
joins have the left's statistics; an inner or outer equi-join where one side is unique on its join
keys (a distinct key of that side, :mod:`ember.plans.logical.distinct_keys`, is a subset of its
join keys: e.g. an Aggregate grouped by them) the *sum* of the children's sizes larger than 1
(Spark 4's ``visitJoin``; off with ``spark.sql.optimizer.propagateDistinctKeys.enabled=false``),
every other join (Cross and ExistenceJoin included) the *product* of the children's sizes; Sort
and other nodes the product of their children's sizes.

Leaves (what PySpark 4.3 classic, ``local[1]``, reports for
``df._jdf.queryExecution().optimizedPlan().stats()``; see tests/statistics/goldens.json):

* ``spark.createDataFrame(list of tuples/Rows)`` is a ``LogicalRDD``: size
  ``spark.sql.defaultSizeInBytes`` (Long.MaxValue), no row count -- never broadcast.  Ember's
  createDataFrame from Python rows builds a LocalRelation flagged ``unknown_size``, which reports
  the same.
* ``createDataFrame(pandas)`` (with or without Arrow) and ``createDataFrame(pyarrow.Table)``, SQL
  ``VALUES`` / inline tables: ``LocalRelation``, size ``rows * rowWidth``, row count = rows
  (3 rows of (bigint, string): 3 * (8 + 8 + 20) = 108).
* ``spark.range(...)``: ``Range``, size ``8 * n``, row count n, and column statistics for ``id``
  (distinct n, min, max, no NULLs); an empty range has size 0.
* Parquet / CSV: ``LogicalRelation`` over ``HadoopFsRelation``: the sum of the data files' sizes
  on disk (hidden ``_``/``.`` files excluded) times ``spark.sql.sources.fileCompressionFactor``
  (1.0), no row count.
* ``OneRowRelation``: size 1.  Unknown leaves: ``spark.sql.defaultSizeInBytes``.
* A PySpark DataFrame registered in Ember (``SparkDataFrameRelation``): Spark's own estimate of
  the frame (:func:`spark_frame_stats`), asked once per frame.

Table statistics come from the session (``SQLConf.table_statistics``, a
:class:`~ember.plans.logical.statistics.model.TableStatisticsSource`: the session catalog's).
ANALYZE TABLE statistics apply to every leaf over the analyzed relation; as Spark's
``CatalogStatistics.toPlanStats``, their row count and column statistics appear in plan statistics
only when ``spark.sql.cbo.enabled`` or ``spark.sql.cbo.planStats.enabled`` is set (the size then
becomes ``rows * rowWidth`` with the columns' average lengths).  Automatic statistics
(``ember.cbo.autoStats.enabled``, beyond Spark) are surfaced regardless of
``spark.sql.cbo.enabled`` (the leaf size stays Spark's), so star detection and cost-based
reordering work without ANALYZE.
"""

from __future__ import annotations

import os
import threading
import weakref
from collections.abc import Mapping
from dataclasses import dataclass, replace
from types import MappingProxyType
from typing import TYPE_CHECKING, Any

from ember.conf import (
    AUTO_STATS_ENABLED,
    CBO_ENABLED,
    DEFAULT_SIZE_IN_BYTES,
    FILE_COMPRESSION_FACTOR,
    PLAN_STATS_ENABLED,
)
from ember.expressions.base import Expression, Literal
from ember.plans.logical.distinct_keys import propagate_distinct_keys, unique_on_join_keys
from ember.plans.logical.join_type import JoinType
from ember.plans.logical.nodes import (
    Aggregate,
    Distinct,
    Except,
    Expand,
    FileRelation,
    Filter,
    Intersect,
    Join,
    LeafNode,
    Limit,
    LocalRelation,
    LogicalPlan,
    Offset,
    OneRowRelation,
    Project,
    Range,
    ResolvedHint,
    Sort,
    SparkDataFrameRelation,
    SubqueryAlias,
    Union,
    View,
    spark_range_elements,
)
from ember.plans.logical.statistics import cbo_estimation
from ember.plans.logical.statistics.model import (
    _EMPTY,
    LONG_MAX,
    ColumnStat,
    HintInfo,
    Statistics,
    TableStatisticsSource,
    output_size,
    product_of,
    size_per_row,
)

if TYPE_CHECKING:
    from ember.conf import SQLConf

__all__ = ["plan_stats", "relation_size_in_bytes", "spark_frame_stats"]


# ---------------------------------------------------------------------------------------------
# Configuration and caching

_LOCK = threading.RLock()


@dataclass(frozen=True, slots=True)
class _Flags:
    cbo: bool
    plan_stats: bool
    auto: bool
    default_size: int
    compression: float
    # The session's table statistics (compared by identity) and their epoch: cached plan
    # statistics are recomputed when either changes.
    tables: TableStatisticsSource | None
    epoch: int
    distinct_keys: bool = True

    @property
    def table_stats_visible(self) -> bool:
        return self.cbo or self.plan_stats

    def stats(self, plan: LogicalPlan) -> Statistics:
        """The statistics of ``plan`` under these flags (``cbo_estimation.ChildStats``)."""
        return _stats(plan, self)


def _flags(conf: "SQLConf | None") -> _Flags:
    tables = None if conf is None else conf.table_statistics
    return _Flags(
        CBO_ENABLED.read(conf),
        PLAN_STATS_ENABLED.read(conf),
        AUTO_STATS_ENABLED.read(conf),
        DEFAULT_SIZE_IN_BYTES.read(conf),
        FILE_COMPRESSION_FACTOR.read(conf),
        tables,
        0 if tables is None else tables.epoch,
        propagate_distinct_keys(conf),
    )


def plan_stats(plan: LogicalPlan, conf: "SQLConf | None" = None) -> Statistics:
    """Spark's ``plan.stats``: the estimated statistics of ``plan`` under ``conf`` (cached on the
    node).

    >>> # plan_stats(Range(0, 10, 1, None, (id,)), conf).size_in_bytes -> 80
    """
    return _stats(plan, _flags(conf))


def _stats(plan: LogicalPlan, flags: _Flags) -> Statistics:
    try:
        cached = plan._stats  # type: ignore[attr-defined]
    except AttributeError:
        cached = None
    if cached is not None and cached[0] == flags:
        return cached[1]
    st = _visit(plan, flags)
    try:
        object.__setattr__(plan, "_stats", (flags, st))
    except (AttributeError, TypeError):  # a node class without the cache slot
        pass
    return st



# ---------------------------------------------------------------------------------------------
# Visitors


def _visit(p: LogicalPlan, f: _Flags) -> Statistics:
    if f.cbo:
        st = cbo_estimation.visit(p, f)
        if st is not None:
            return st
    return _visit_size_only(p, f)


def _hints_of(p: LogicalPlan, f: _Flags) -> HintInfo:
    children = p.children
    return _stats(children[0], f).hints if len(children) == 1 else HintInfo()


def _unary(p: LogicalPlan, f: _Flags) -> Statistics:
    child = p.children[0]
    cs = _stats(child, f)
    size = cs.size_in_bytes * size_per_row(p.output) // size_per_row(child.output)
    return Statistics(max(size, 1), hints=cs.hints)


def _product(p: LogicalPlan, f: _Flags) -> Statistics:
    return product_of([_stats(c, f) for c in p.children], _hints_of(p, f))


def _limit_value(e: Expression) -> int | None:
    if isinstance(e, Literal) and e.value is not None:
        return int(e.value)
    return None


_UNIQUE_SUM_JOINS = (JoinType.INNER, JoinType.LEFT_OUTER, JoinType.RIGHT_OUTER, JoinType.FULL_OUTER)


def _visit_size_only(p: LogicalPlan, f: _Flags) -> Statistics:
    match p:
        case LeafNode():
            return _leaf_stats(p, f)
        case SubqueryAlias(child=c) | View(child=c):
            return _stats(c, f)
        case ResolvedHint(strategies=strategies, child=c):
            s = _stats(c, f)
            return replace(s, hints=HintInfo(strategies[0] if strategies else None))
        case Project() | Filter() | Distinct():
            return _unary(p, f)
        case Aggregate(grouping_expressions=()):
            return Statistics(output_size(p.output, 1), 1, hints=_hints_of(p, f))
        case Aggregate():
            return _unary(p, f)
        case Expand(projections=projs):
            s = _unary(p, f)
            return Statistics(s.size_in_bytes * len(projs), hints=s.hints)
        case Limit(limit=n, child=c):
            limit = _limit_value(n)
            cs = _stats(c, f)
            if limit is None:
                return Statistics(cs.size_in_bytes, hints=cs.hints)
            if limit == 0:  # LocalLimit 0
                return Statistics(1, 0, hints=cs.hints)
            rows = limit if cs.row_count is None else min(cs.row_count, limit)
            return Statistics(output_size(p.output, rows), rows, hints=cs.hints)
        case Offset(offset=n, child=c):
            off = _limit_value(n)
            cs = _stats(c, f)
            if off is None or cs.row_count is None:
                return Statistics(cs.size_in_bytes, hints=cs.hints)
            rows = max(cs.row_count - off, 0)
            return Statistics(output_size(p.output, rows), rows, hints=cs.hints)
        case Join(join_type=jt, left=l) if jt in (JoinType.LEFT_SEMI, JoinType.LEFT_ANTI):
            return replace(_stats(l, f), hints=HintInfo())
        case Join(join_type=jt, left=l, right=r) if jt in _UNIQUE_SUM_JOINS and \
                f.distinct_keys and any(unique_on_join_keys(p) or ()):
            # One side matches each row of the other at most once: the sum, not the product
            # (sizes of 0 or 1 are left out: ``size * 1`` is not ``size + 1``).
            return Statistics(sum(s for s in (_stats(l, f).size_in_bytes,
                                              _stats(r, f).size_in_bytes) if s > 1))
        case Union(inputs=inputs):
            return Statistics(sum(_stats(c, f).size_in_bytes for c in inputs))
        case Intersect(left=l, right=r):
            return Statistics(min(_stats(l, f).size_in_bytes, _stats(r, f).size_in_bytes))
        case Except(left=l):
            return replace(_stats(l, f), hints=HintInfo())
        case Sort(child=c):
            return _stats(c, f)
        case _:
            return _product(p, f)



# ---------------------------------------------------------------------------------------------
# Leaves


def relation_size_in_bytes(leaf: LogicalPlan, conf: "SQLConf | None") -> int:
    """The size-only estimate of a relation, without its table statistics: what ANALYZE TABLE
    records as the table's ``sizeInBytes``."""
    return _base_leaf_stats(leaf, _flags(conf)).size_in_bytes


def _leaf_stats(p: LogicalPlan, f: _Flags) -> Statistics:
    """A leaf's statistics: its own (:func:`_base_leaf_stats`), replaced by the session's table
    statistics as Spark's ``CatalogStatistics.toPlanStats`` (module docstring)."""
    if isinstance(p, SparkDataFrameRelation):
        return _base_leaf_stats(p, f)
    base = _base_leaf_stats(p, f)
    table = None if f.tables is None else f.tables.analyzed(p)
    if table is not None:
        if f.table_stats_visible and table.row_count is not None:
            attr_stats = _attr_stats_by_name(p.output, table.col_stats)
            return Statistics(output_size(p.output, table.row_count, attr_stats), table.row_count,
                              attr_stats)
        return base
    if f.auto and f.tables is not None:
        auto = f.tables.automatic(p)
        if auto is not None:
            rows, cols = auto
            attr_stats = dict(base.attribute_stats)
            attr_stats.update(_attr_stats_by_name(p.output, cols))
            return Statistics(base.size_in_bytes, rows, MappingProxyType(attr_stats))
    return base


def _base_leaf_stats(p: LogicalPlan, f: _Flags) -> Statistics:
    match p:
        case LocalRelation():
            if _unknown_size(p):
                base = Statistics(f.default_size)
            else:
                base = Statistics(size_per_row(p.output) * p.num_rows, p.num_rows)
        case Range():
            base = _range_stats(p)
        case FileRelation():
            base = Statistics(int(_files_size(p.paths) * f.compression))
        case OneRowRelation():
            base = Statistics(1)
        case SparkDataFrameRelation(frame=frame):
            size, rows = spark_frame_stats(frame)
            return Statistics(f.default_size if size is None else size, rows)
        case _:
            return Statistics(f.default_size)
    return base


# PySpark DataFrame: id(frame) -> (weakref to the frame, (size in bytes, row count))
_SPARK_FRAME_STATS: dict[int, tuple[Any, tuple[int | None, int | None]]] = {}


def spark_frame_stats(frame: Any) -> tuple[int | None, int | None]:
    """Spark's own estimate for a PySpark DataFrame (``optimizedPlan().stats()``: size in bytes,
    row count if known), asked once per frame, so JoinSelection broadcasts the frames Spark
    would (a ``createDataFrame(pandas)`` LocalRelation, a small range) and not the others (a
    ``LogicalRDD`` of Python rows reports Long.MaxValue).  ``(None, None)`` when the frame has no
    JVM plan (Spark Connect)."""
    key = id(frame)
    got = _SPARK_FRAME_STATS.get(key)
    if got is not None and got[0]() is frame:
        return got[1]
    try:
        st = frame._jdf.queryExecution().optimizedPlan().stats()
        size = int(str(st.sizeInBytes()))
        rows = int(str(st.rowCount().get())) if st.rowCount().isDefined() else None
        result: tuple[int | None, int | None] = (size, rows)
    except Exception:  # noqa: BLE001 - no JVM plan: unknown size
        result = (None, None)

    def _drop(_ref: Any, key: int = key) -> None:
        item = _SPARK_FRAME_STATS.get(key)
        if item is not None and item[0]() is None:
            _SPARK_FRAME_STATS.pop(key, None)

    try:
        ref = weakref.ref(frame, _drop)
    except TypeError:  # not weak-referenceable: do not cache
        return result
    with _LOCK:
        _SPARK_FRAME_STATS[key] = (ref, result)
    return result


def _unknown_size(p: LocalRelation) -> bool:
    """A LocalRelation standing for Spark's LogicalRDD (``createDataFrame`` of Python rows)."""
    return bool(getattr(p, "unknown_size", False))


def _range_stats(p: Range) -> Statistics:
    n = spark_range_elements(p.start, p.end, p.step)
    if n == 0:
        return Statistics(0, 0)
    last = p.start + (n - 1) * p.step
    lo, hi = (p.start, last) if p.step > 0 else (last, p.start)
    cs = ColumnStat(n, lo, hi, 0, 8, 8)
    return Statistics(8 * n, n, MappingProxyType({p.output[0].id: cs}))


def _hidden(name: str) -> bool:
    return name.startswith(".") or (name.startswith("_") and "=" not in name)


def _files_size(paths: tuple[str, ...]) -> int:
    """Sum of the data files' sizes under ``paths`` (directories walked, hidden files skipped)."""
    total = 0
    for p in paths:
        try:
            if os.path.isdir(p):
                for root, dirs, names in os.walk(p):
                    dirs[:] = [d for d in dirs if not _hidden(d)]
                    total += sum(os.path.getsize(os.path.join(root, n)) for n in names
                                 if not _hidden(n))
            else:
                total += os.path.getsize(p)
        except OSError:
            continue
    return total


def _attr_stats_by_name(attrs, cols: Mapping[str, ColumnStat]) -> Mapping[int, ColumnStat]:
    if not cols:
        return _EMPTY
    out = {a.id: cols[a.name.lower()] for a in attrs if a.name.lower() in cols}
    return MappingProxyType(out)

