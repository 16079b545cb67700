"""Plan statistics: Spark's ``plan.stats`` (``LogicalPlanStats``), shared by the optimizer (star
detection, cost-based join reorder) and the physical planner (JoinSelection's broadcast choice).

``plan_stats(plan, conf)`` returns :class:`Statistics` (``size_in_bytes``, ``row_count``,
``attribute_stats`` keyed by attribute id, ``hints``), cached on the plan node (per configuration
flags and per catalog-statistics epoch).

Two estimators, as Spark's:

* CBO off (default): ``SizeInBytesOnlyStatsPlanVisitor``.  Leaves use their own statistics; a
  unary node's size is ``child size * outputRowWidth / childRowWidth`` (row width = 8 + the
  types' ``defaultSize``: boolean/tinyint 1, smallint 2, int/float/date 4, bigint/double/timestamp
  8, decimal 8 when precision <= 18 else 16, string 20, binary 100, array/struct the elements'),
  and no row count; Filter keeps the size; Aggregate without grouping is one row; Limit is
  ``min(rows, n) * width``; Expand multiplies by the projection count; Union sums; Intersect takes
  the smaller side, Except the left; LeftSemi/LeftAnti joins have the left's statistics; an
  inner or outer equi-join where one side is unique on its join keys (a distinct key of that
  side, :mod:`ember.plans.logical.distinct_keys`, is a subset of its join keys: e.g. an
  Aggregate grouped by them) the *sum* of the children's sizes larger than 1 (Spark 4's
  ``visitJoin``; off with ``spark.sql.optimizer.propagateDistinctKeys.enabled=false``), every
  other join (Cross and ExistenceJoin included) the *product* of the children's sizes; Sort and
  other nodes the product of their children's sizes.
* ``spark.sql.cbo.enabled``: ``BasicStatsPlanVisitor`` with Spark's FilterEstimation (``=``,
  ``<=>``, ``<``, ``<=``, ``>``, ``>=`` against a literal, ``IN`` of literals, ``IS [NOT] NULL``
  directly over a leaf, AND/OR/NOT; uniform distribution, no histograms, column-to-column
  comparisons unsupported -> selectivity 1), JoinEstimation (inner/cross/outer equi-joins:
  ``|L|*|R| / max(ndv)`` of the key pair with the largest NDV, at most ``|R|`` when the left
  side is unique on its join keys, ``|L|`` when the right is (distinct keys), 0 for disjoint key
  ranges, outer joins at least the preserved side; semi/anti = left; no equi keys = cartesian),
  AggregateEstimation (product of the grouping columns' NDV, +1 per column with NULLs, capped by
  the child's rows) and ProjectEstimation (column statistics follow aliases).

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

Table statistics (``ANALYZE TABLE v COMPUTE STATISTICS [NOSCAN | FOR COLUMNS c, .. | FOR ALL
COLUMNS]``, :func:`analyze_table`) are kept per underlying relation (the data object of a
LocalRelation, the files of a FileRelation, the bounds of a Range) and apply to every leaf over
it.  As Spark's ``CatalogStatistics.toPlanStats``, the row count and column statistics appear in
plan statistics only when ``spark.sql.cbo.enabled`` or ``spark.sql.cbo.planStats.enabled`` is set
(the size then becomes ``rows * rowWidth`` with the columns' average lengths).  Spark accepts
ANALYZE only for tables and *cached* temporary views; Ember (which has only views) accepts any view
whose plan is a plain relation, possibly under column projections, renames and aliases.

Beyond Spark, ``ember.cbo.autoStats.enabled`` (default false) gathers table statistics without
ANALYZE: exact row counts, distinct counts (``pyarrow.compute.count_distinct``), NULL counts and
min/max for in-memory relations (cached per Arrow table object); for Parquet files the row count
and NULL counts/min/max from the footers and distinct counts from a sampled scan (GEE estimator
over the first rows), cached per file path, size and modification time.  Auto statistics are
surfaced regardless of ``spark.sql.cbo.enabled`` (the leaf size stays Spark's), so star detection
and cost-based reordering work without ANALYZE.
"""

from __future__ import annotations

import datetime as _dt
import math
import os
import threading
import weakref
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from decimal import Decimal
from types import MappingProxyType
from typing import TYPE_CHECKING, Any

import pyarrow as pa
import pyarrow.compute as pc

from ember import types as T
from ember.conf import (
    AUTO_STATS_ENABLED,
    CBO_ENABLED,
    DEFAULT_SIZE_IN_BYTES,
    FILE_COMPRESSION_FACTOR,
    PLAN_STATS_ENABLED,
)
from ember.expressions.base import Alias, AttributeReference, Expression, Literal
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
)

if TYPE_CHECKING:
    from ember.conf import SQLConf

__all__ = [
    "ColumnStat",
    "HintInfo",
    "Statistics",
    "plan_stats",
    "default_size",
    "column_size",
    "size_per_row",
    "output_size",
    "compute_column_stats",
    "analyze_table",
    "table_statistics",
    "clear_table_statistics",
    "condition_selectivity",
]

LONG_MAX = (1 << 63) - 1
_EMPTY: Mapping[int, "ColumnStat"] = MappingProxyType({})


# ---------------------------------------------------------------------------------------------
# Data


@dataclass(frozen=True, slots=True)
class ColumnStat:
    """Spark's ``ColumnStat`` (every field optional).  ``min``/``max`` are Python values of the
    column's type (none for strings and binary, as Spark)."""

    distinct_count: int | None = None
    min: Any = None
    max: Any = None
    null_count: int | None = None
    avg_len: int | None = None
    max_len: int | None = None

    @property
    def has_count_stats(self) -> bool:
        return self.distinct_count is not None and self.null_count is not None

    @property
    def has_min_max(self) -> bool:
        return self.min is not None and self.max is not None


@dataclass(frozen=True, slots=True)
class HintInfo:
    """The join strategy hint on a plan (``BROADCAST``, ``SHUFFLE_MERGE``, ``SHUFFLE_HASH``,
    ``SHUFFLE_REPLICATE_NL``), None without one."""

    strategy: str | None = None

    def __str__(self) -> str:
        return "" if self.strategy is None else f"(strategy={self.strategy.lower()})"


@dataclass(frozen=True, slots=True)
class Statistics:
    """Spark's ``Statistics``: estimated output size, row count (None when unknown), column
    statistics by attribute id, and the hint on the plan."""

    size_in_bytes: int
    row_count: int | None = None
    attribute_stats: Mapping[int, ColumnStat] = field(default_factory=lambda: _EMPTY)
    hints: HintInfo = HintInfo()

    def simple_string(self) -> str:
        """Spark's ``Statistics.simpleString`` (EXPLAIN COST): ``sizeInBytes=80.0 B, rowCount=10``."""
        parts = [f"sizeInBytes={bytes_to_string(self.size_in_bytes)}"]
        if self.row_count is not None:
            parts.append(f"rowCount={_three_digits(self.row_count)}")
        return ", ".join(parts)


def bytes_to_string(size: int) -> str:
    """Spark's ``Utils.bytesToString`` (``80.0 B``, ``1.5 KiB``, ``8.0 EiB``)."""
    units = (("EiB", 60), ("PiB", 50), ("TiB", 40), ("GiB", 30), ("MiB", 20), ("KiB", 10))
    if size >= 2 * (1 << 10):
        for name, shift in units:
            if size >= 2 * (1 << shift) or name == "KiB":
                return f"{size / (1 << shift):.1f} {name}"
    return f"{float(size):.1f} B"


def _three_digits(n: int) -> str:
    """``BigDecimal(n, MathContext(3, HALF_UP)).toString`` (``10``, ``1.23E+5``)."""
    import decimal

    if abs(n) < 1000:
        return str(n)
    with decimal.localcontext() as ctx:
        ctx.prec = 3
        ctx.rounding = decimal.ROUND_HALF_UP
        return str(+Decimal(n))


# ---------------------------------------------------------------------------------------------
# Sizes


def default_size(t: T.DataType) -> int:
    """Spark's ``DataType.defaultSize``."""
    match t:
        case T.NullType() | T.BooleanType() | T.ByteType():
            return 1
        case T.ShortType():
            return 2
        case T.IntegerType() | T.FloatType() | T.DateType() | T.YearMonthIntervalType():
            return 4
        case T.LongType() | T.DoubleType() | T.TimestampType() | T.DayTimeIntervalType():
            return 8
        case T.DecimalType(precision=p):
            return 8 if p <= 18 else 16
        case T.StringType():
            return 20
        case T.BinaryType():
            return 100
        case T.ArrayType(element_type=e):
            return default_size(e)
        case T.StructType(fields=fs):
            return sum(default_size(f.data_type) for f in fs)
    name = type(t).__name__
    if name == "MapType":  # key + value, if a map type is ever added
        return default_size(t.key_type) + default_size(t.value_type)  # type: ignore[attr-defined]
    return 8


def size_per_row(attrs: tuple[AttributeReference, ...] | list,
                 attr_stats: Mapping[int, ColumnStat] = _EMPTY) -> int:
    """Spark's ``EstimationUtils.getSizePerRow``: 8 bytes of row overhead plus each column's
    average length (strings: + 12) when known, else its type's default size."""
    total = 8
    for a in attrs:
        cs = attr_stats.get(a.id) if attr_stats else None
        total += column_size(a.data_type, None if cs is None else cs.avg_len)
    return total


def column_size(dtype: T.DataType, avg_len: int | None) -> int:
    """One column's bytes per row in ``getSizePerRow``: its average length (strings: + 12) when
    known, else the type's :func:`default_size`."""
    if avg_len is not None:
        return avg_len + 12 if isinstance(dtype, T.StringType) else avg_len
    return default_size(dtype)


def output_size(attrs, row_count: int, attr_stats: Mapping[int, ColumnStat] = _EMPTY) -> int:
    """Spark's ``EstimationUtils.getOutputSize`` (never 0: 1 for an empty output)."""
    return row_count * size_per_row(attrs, attr_stats) if row_count > 0 else 1


def _ceil(x: float | Decimal) -> int:
    return int(math.ceil(x))


# ---------------------------------------------------------------------------------------------
# Configuration and caching

_EPOCH = [0]  # bumped when table statistics change: invalidates cached plan statistics
_LOCK = threading.RLock()


@dataclass(frozen=True, slots=True)
class _Flags:
    cbo: bool
    plan_stats: bool
    auto: bool
    default_size: int
    compression: float
    epoch: int
    distinct_keys: bool = True

    @property
    def table_stats_visible(self) -> bool:
        return self.cbo or self.plan_stats


def _flags(conf: "SQLConf | None") -> _Flags:
    return _Flags(
        CBO_ENABLED.read(conf),
        PLAN_STATS_ENABLED.read(conf),
        AUTO_STATS_ENABLED.read(conf),
        DEFAULT_SIZE_IN_BYTES.read(conf),
        FILE_COMPRESSION_FACTOR.read(conf),
        _EPOCH[0],
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
        st = _visit_cbo(p, f)
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


def _product(p: LogicalPlan, f: _Flags, with_rows: bool = False) -> Statistics:
    """Spark's ``default`` for non-leaf nodes: the product of the children's sizes (row counts in
    the CBO visitor)."""
    stats = [_stats(c, f) for c in p.children]
    size = 1
    for s in stats:
        if s.size_in_bytes > 0:
            size *= s.size_in_bytes
    rows = None
    if with_rows and stats and all(s.row_count is not None for s in stats):
        rows = 1
        for s in stats:
            if s.row_count > 0:  # type: ignore[operator]
                rows *= s.row_count  # type: ignore[operator]
    return Statistics(size, rows, hints=_hints_of(p, f))


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


def _visit_cbo(p: LogicalPlan, f: _Flags) -> Statistics | None:
    """``BasicStatsPlanVisitor``: None falls back to the size-only estimate."""
    match p:
        case LeafNode() | SubqueryAlias() | View() | ResolvedHint():
            return None
        case Filter():
            return _estimate_filter(p, f)
        case Project():
            return _estimate_project(p, f)
        case Aggregate():
            return _estimate_aggregate(p, f)
        case Join():
            return _estimate_join(p, f)
        case Union(inputs=inputs):
            stats = [_stats(c, f) for c in inputs]
            rows = None if any(s.row_count is None for s in stats) else \
                sum(s.row_count for s in stats)  # type: ignore[misc]
            return Statistics(sum(s.size_in_bytes for s in stats), rows)
        case Intersect(left=l, right=r):
            stats = [_stats(l, f), _stats(r, f)]
            rows = None if any(s.row_count is None for s in stats) else \
                min(s.row_count for s in stats)  # type: ignore[type-var]
            return Statistics(min(s.size_in_bytes for s in stats), rows)
        case Distinct():
            return _product(p, f, with_rows=True)
        case _:
            return None


# ---------------------------------------------------------------------------------------------
# Leaves


def _leaf_stats(p: LogicalPlan, f: _Flags) -> Statistics:
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
    table = _lookup_table_stats(p)
    if table is not None:
        if f.table_stats_visible and table.row_count is not None:
            attr_stats = _attr_stats_by_name(p.output, table.col_stats)
            return Statistics(output_size(p.output, table.row_count, attr_stats), table.row_count,
                              attr_stats)
        return base
    if f.auto:
        auto = _auto_stats(p)
        if auto is not None:
            rows, cols = auto
            attr_stats = dict(base.attribute_stats)
            attr_stats.update(_attr_stats_by_name(p.output, cols))
            return Statistics(base.size_in_bytes, rows, MappingProxyType(attr_stats))
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


def spark_range_elements(start: int, end: int, step: int) -> int:
    """Spark's ``Range.numElements`` (Scala BigInt arithmetic, truncating division): negative for
    a range running against its step (``range(10, 0)`` -> -10), which Spark's statistics then
    report as they are."""
    span = end - start
    q = abs(span) // abs(step) * (1 if (span >= 0) == (step > 0) else -1)
    rem = abs(span) % abs(step)
    if rem == 0 or (end > start) != (step > 0):
        return q
    return q + 1


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


# ---------------------------------------------------------------------------------------------
# CBO: Project, Aggregate, Filter, Join


def _output_map(stats: Mapping[int, ColumnStat], output) -> dict[int, ColumnStat]:
    return {a.id: stats[a.id] for a in output if a.id in stats}


def _alias_stats(exprs, stats: Mapping[int, ColumnStat]) -> dict[int, ColumnStat]:
    out: dict[int, ColumnStat] = {}
    for e in exprs:
        if isinstance(e, Alias) and isinstance(e.child, AttributeReference) and e.child.id in stats:
            out[e.id] = stats[e.child.id]
    return out


def _estimate_project(p: Project, f: _Flags) -> Statistics | None:
    cs = _stats(p.child, f)
    if cs.row_count is None:
        return None
    inputs = dict(cs.attribute_stats)
    inputs.update(_alias_stats(p.project_list, cs.attribute_stats))
    out = _output_map(inputs, p.output)
    return Statistics(output_size(p.output, cs.row_count, out), cs.row_count,
                      MappingProxyType(out), cs.hints)


def _estimate_aggregate(p: Aggregate, f: _Flags) -> Statistics | None:
    cs = _stats(p.child, f)
    if cs.row_count is None:
        return None
    rows = 1
    for g in p.grouping_expressions:
        st = cs.attribute_stats.get(g.id) if isinstance(g, AttributeReference) else None
        if st is None or not st.has_count_stats:
            return None
        rows *= st.distinct_count + (1 if st.null_count > 0 else 0)  # type: ignore[operator]
    rows = 1 if not p.grouping_expressions else min(rows, cs.row_count)
    inputs = dict(cs.attribute_stats)
    inputs.update(_alias_stats(p.aggregate_expressions, cs.attribute_stats))
    out = _output_map(inputs, p.output)
    return Statistics(output_size(p.output, rows, out), rows, MappingProxyType(out))


def _to_double(v: Any) -> float | None:
    """Spark's ``EstimationUtils.toDouble`` for min/max/literal values."""
    if v is None:
        return None
    if isinstance(v, bool):
        return 1.0 if v else 0.0
    if isinstance(v, (int, float, Decimal)):
        return float(v)
    if isinstance(v, _dt.datetime):
        if v.tzinfo is None:
            v = v.replace(tzinfo=_dt.timezone.utc)
        return (v - _dt.datetime(1970, 1, 1, tzinfo=_dt.timezone.utc)) / _dt.timedelta(
            microseconds=1)
    if isinstance(v, _dt.date):
        return float((v - _dt.date(1970, 1, 1)).days)
    return None


_RANGE_TYPES = (T.NumericType, T.DateType, T.TimestampType, T.BooleanType)
# The comparison with its operands swapped: ``lit < a`` is ``a > lit``.
_MIRRORED = {"<": ">", "<=": ">=", ">": "<", ">=": "<="}


class _FilterEstimation:
    """Spark's ``FilterEstimation`` without histograms (see the module docstring)."""

    def __init__(self, plan: Filter, child: Statistics) -> None:
        self.plan = plan
        self.child = child
        self.rows = child.row_count or 0
        self.original = dict(child.attribute_stats)
        self.updated: dict[int, ColumnStat] = {}
        self.child_is_leaf = isinstance(plan.child, LeafNode)

    def stat(self, attr: AttributeReference) -> ColumnStat | None:
        return self.updated.get(attr.id, self.original.get(attr.id))

    def estimate(self) -> Statistics:
        sel = self.selectivity(self.plan.condition, True)
        sel = 1.0 if sel is None else sel
        rows = _ceil(Decimal(self.rows) * Decimal(repr(sel)))
        if rows == 0:
            out: dict[int, ColumnStat] = {}
        else:
            out = {}
            for aid, ori in self.original.items():
                cs = self.updated.get(aid, ori)
                ndv = cs.distinct_count
                if ndv is not None and ndv > 1 and ori.distinct_count is not None:
                    ndv = _update_ndv(self.rows, rows, ori.distinct_count)
                out[aid] = replace(cs, distinct_count=ndv)
        out = _output_map(out, self.plan.output)
        return Statistics(output_size(self.plan.output, rows, out), rows, MappingProxyType(out),
                          self.child.hints)

    def selectivity(self, cond: Expression, update: bool) -> float | None:
        from ember.expressions.predicates import And, Not, Or

        match cond:
            case And(left=a, right=b):
                p1 = self.selectivity(a, update)
                p2 = self.selectivity(b, update)
                return (1.0 if p1 is None else p1) * (1.0 if p2 is None else p2)
            case Or(left=a, right=b):
                p1 = self.selectivity(a, False)
                p2 = self.selectivity(b, False)
                p1 = 1.0 if p1 is None else p1
                p2 = 1.0 if p2 is None else p2
                return p1 + p2 - p1 * p2
            case Not(child=And(left=a, right=b)):
                return self.selectivity(Or(Not(a), Not(b)), False)
            case Not(child=Or(left=a, right=b)):
                return self.selectivity(And(Not(a), Not(b)), False)
            case Not(child=c):
                p = self.selectivity(c, False)
                return None if p is None else 1.0 - p
            case _:
                return self.single(cond, update)

    def single(self, cond: Expression, update: bool) -> float | None:
        from ember.expressions import predicates as P

        match cond:
            case P.EqualTo(left=AttributeReference() as a, right=Literal() as lit) | \
                    P.EqualNullSafe(left=AttributeReference() as a, right=Literal() as lit) | \
                    P.EqualTo(left=Literal() as lit, right=AttributeReference() as a) | \
                    P.EqualNullSafe(left=Literal() as lit, right=AttributeReference() as a):
                return self.equality(a, lit, update)
            case P.LessThan() | P.LessThanOrEqual() | P.GreaterThan() | P.GreaterThanOrEqual():
                match cond:
                    case P.BinaryComparison(left=AttributeReference() as a,
                                            right=Literal() as lit):
                        return self.binary(cond.symbol, a, lit, update)
                    case P.BinaryComparison(left=Literal() as lit,
                                            right=AttributeReference() as a):
                        # ``lit < a`` is ``a > lit``
                        return self.binary(_MIRRORED[cond.symbol], a, lit, update)
                    case _:
                        return None
            case P.In(value=AttributeReference() as a, items=items) if all(
                    isinstance(i, Literal) for i in items):
                return self.in_set(a, [i.value for i in items], update)  # type: ignore[attr-defined]
            case P.IsNull(child=AttributeReference() as a) if self.child_is_leaf:
                return self.null_check(a, True, update)
            case P.IsNotNull(child=AttributeReference() as a) if self.child_is_leaf:
                return self.null_check(a, False, update)
            case _:
                return None

    def null_check(self, a: AttributeReference, is_null: bool, update: bool) -> float | None:
        cs = self.stat(a)
        if cs is None:
            return None
        null_pct = 0.0 if self.rows == 0 or cs.null_count is None else cs.null_count / self.rows
        if update:
            self.updated[a.id] = replace(cs, distinct_count=0, min=None, max=None) if is_null \
                else replace(cs, null_count=0)
        return null_pct if is_null else 1.0 - null_pct

    def equality(self, a: AttributeReference, lit: Literal, update: bool) -> float | None:
        cs = self.stat(a)
        if cs is None or cs.distinct_count is None:
            return None
        if lit.value is None:
            return 0.0
        is_str = isinstance(a.data_type, (T.StringType, T.BinaryType))
        if not is_str and isinstance(a.data_type, _RANGE_TYPES):
            if not cs.has_min_max:
                return 0.0  # Spark's NullValueInterval contains nothing
            v, lo, hi = _to_double(lit.value), _to_double(cs.min), _to_double(cs.max)
            if v is None or lo is None or hi is None or not (lo <= v <= hi):
                return 0.0
        if update:
            self.updated[a.id] = replace(cs, distinct_count=1, null_count=0) if is_str else \
                replace(cs, distinct_count=1, min=lit.value, max=lit.value, null_count=0)
        return 0.0 if cs.distinct_count == 0 else 1.0 / cs.distinct_count

    def in_set(self, a: AttributeReference, values: list, update: bool) -> float | None:
        cs = self.stat(a)
        if cs is None or cs.distinct_count is None:
            return None
        ndv = cs.distinct_count
        if isinstance(a.data_type, (T.StringType, T.BinaryType)):
            if ndv == 0:
                return 0.0
            new_ndv = min(ndv, len(set(values)))
            if update:
                self.updated[a.id] = replace(cs, distinct_count=new_ndv, null_count=0)
        elif isinstance(a.data_type, _RANGE_TYPES):
            if ndv == 0 or not cs.has_min_max:
                return 0.0
            lo, hi = _to_double(cs.min), _to_double(cs.max)
            valid = {v for v in values if v is not None
                     and lo <= (_to_double(v) or math.nan) <= hi}  # type: ignore[operator]
            if not valid:
                return 0.0
            new_ndv = min(ndv, len(valid))
            if update:
                self.updated[a.id] = replace(
                    cs, distinct_count=new_ndv, min=min(valid, key=_to_double),
                    max=max(valid, key=_to_double), null_count=0)
        else:
            return None
        return new_ndv / ndv

    def binary(self, op: str, a: AttributeReference, lit: Literal, update: bool) -> float | None:
        cs = self.stat(a)
        if cs is None or not isinstance(a.data_type, _RANGE_TYPES):
            return None
        if cs.distinct_count is None or not cs.has_min_max:
            return None
        if lit.value is None:
            return 0.0
        lo, hi, v = _to_double(cs.min), _to_double(cs.max), _to_double(lit.value)
        if lo is None or hi is None or v is None:
            return None
        ndv = float(cs.distinct_count)
        no_overlap, complete = {
            "<": (v <= lo, v > hi), "<=": (v < lo, v >= hi),
            ">": (v >= hi, v < lo), ">=": (v > hi, v <= lo),
        }[op]
        if no_overlap:
            return 0.0
        if complete:
            return 1.0
        if hi <= lo or ndv == 0:
            return 1.0
        if op == "<":
            pct = 1.0 - 1.0 / ndv if v == hi else (v - lo) / (hi - lo)
        elif op == "<=":
            pct = 1.0 / ndv if v == lo else (v - lo) / (hi - lo)
        elif op == ">":
            pct = 1.0 - 1.0 / ndv if v == lo else (hi - v) / (hi - lo)
        else:
            pct = 1.0 / ndv if v == hi else (hi - v) / (hi - lo)
        if update:
            new_min, new_max = (lit.value, cs.max) if op in (">", ">=") else (cs.min, lit.value)
            self.updated[a.id] = replace(cs, distinct_count=_ceil(ndv * pct), min=new_min,
                                         max=new_max, null_count=0)
        return pct


def condition_selectivity(cond: Expression, row_count: int,
                          attribute_stats: Mapping[int, ColumnStat]) -> float | None:
    """The selectivity FilterEstimation gives ``cond`` over rows described by
    ``attribute_stats`` (``row_count`` rows), without a plan: used by the join-order search for
    conditions spanning several tables (e.g. ``(n1.x = 'A' AND n2.x = 'B') OR ...``).  None when
    the condition is not supported (column-to-column comparisons, LIKE, ...)."""
    est = _FilterEstimation.__new__(_FilterEstimation)
    est.plan, est.child, est.rows = None, None, row_count  # type: ignore[assignment]
    est.original, est.updated, est.child_is_leaf = dict(attribute_stats), {}, True
    return est.selectivity(cond, False)


def _update_ndv(old_rows: int, new_rows: int, old_ndv: int) -> int:
    if new_rows < old_rows and old_rows > 0:
        return _ceil(Decimal(old_ndv) * Decimal(new_rows) / Decimal(old_rows))
    return old_ndv


def _estimate_filter(p: Filter, f: _Flags) -> Statistics | None:
    cs = _stats(p.child, f)
    if cs.row_count is None:
        return None
    return _FilterEstimation(p, cs).estimate()


def _estimate_join(p: Join, f: _Flags) -> Statistics | None:
    jt = p.join_type
    ls, rs = _stats(p.left, f), _stats(p.right, f)
    if jt in (JoinType.LEFT_SEMI, JoinType.LEFT_ANTI):
        if ls.row_count is None:
            return None
        out = _output_map(ls.attribute_stats, p.output)
        return Statistics(output_size(p.output, ls.row_count, out), ls.row_count,
                          MappingProxyType(out))
    if not isinstance(jt, JoinType) or jt is JoinType.EXISTENCE:
        return None
    if ls.row_count is None or rs.row_count is None:
        return None
    lrows, rrows = ls.row_count, rs.row_count
    inputs = dict(ls.attribute_stats)
    inputs.update(rs.attribute_stats)
    from ember.plans.logical.patterns import extract_equi_join_keys

    keys = extract_equi_join_keys(p) if p.condition is not None else None
    if keys is None or not keys[0]:
        out = _output_map(inputs, p.output)
        rows = lrows * rrows
        return Statistics(output_size(p.output, rows, out), rows, MappingProxyType(out))
    # Spark normalizes floating-point keys (NormalizeFloatingNumbers wraps them in
    # knownfloatingpointnormalized(...)), so they never count as attribute keys there.
    pairs = [(lk, rk) for lk, rk in zip(keys[0], keys[1])
             if isinstance(lk, AttributeReference) and isinstance(rk, AttributeReference)
             and not isinstance(lk.data_type, (T.FloatType, T.DoubleType))
             and not isinstance(rk.data_type, (T.FloatType, T.DoubleType))
             and _has_counts(ls, lk) and _has_counts(rs, rk)]
    # Selectivity: 1 / the largest max(ndv) over the key pairs; 0 for disjoint ranges.
    denom = -1
    for lk, rk in pairs:
        lst, rst = ls.attribute_stats[lk.id], rs.attribute_stats[rk.id]
        if _intersects(lst, rst):
            denom = max(denom, max(lst.distinct_count, rst.distinct_count))  # type: ignore[type-var]
        else:
            denom = 0
            break
    # A side unique on its join keys (distinct keys) matches each row of the other at most once:
    # the estimate starts from the other side's rows (the smaller of both when both are unique).
    unique = unique_on_join_keys(p) if f.distinct_keys else None
    start = {(True, True): min(lrows, rrows), (True, False): rrows,
             (False, True): lrows}.get(unique or (False, False), lrows * rrows)
    if denom < 0:
        inner = start
    elif denom == 0:
        inner = 0
    else:
        inner = min(start, _ceil(Decimal(lrows * rrows) / Decimal(denom)))
    if jt is JoinType.LEFT_OUTER:
        rows = max(lrows, inner)
    elif jt is JoinType.RIGHT_OUTER:
        rows = max(rrows, inner)
    elif jt is JoinType.FULL_OUTER:
        rows = max(lrows, inner) + max(rrows, inner) - inner
    else:
        rows = inner
    # Column statistics of the output.
    key_stats: dict[int, ColumnStat] = {}
    if inner == 0:
        for lk, rk in pairs:
            if jt is JoinType.LEFT_OUTER:
                key_stats[lk.id] = inputs[lk.id]
                key_stats[rk.id] = _null_stat(rk.data_type, lrows)
            elif jt is JoinType.RIGHT_OUTER:
                key_stats[rk.id] = inputs[rk.id]
                key_stats[lk.id] = _null_stat(lk.data_type, rrows)
            elif jt is JoinType.FULL_OUTER:
                a, b = inputs[lk.id], inputs[rk.id]
                key_stats[lk.id] = replace(a, distinct_count=a.distinct_count + rrows)
                key_stats[rk.id] = replace(b, distinct_count=b.distinct_count + lrows)
    else:
        for lk, rk in pairs:
            a, b = inputs[lk.id], inputs[rk.id]
            if _intersects(a, b):
                ndv = min(a.distinct_count, b.distinct_count)  # type: ignore[type-var]
                lo, hi = _intersect_range(a, b)
                key_stats[lk.id] = replace(a, distinct_count=ndv, min=lo, max=hi, null_count=0)
                key_stats[rk.id] = replace(b, distinct_count=ndv, min=lo, max=hi, null_count=0)
    with_stats = [a for a in p.output if a.id in inputs]
    left_ids = p.left.output_set
    from_left = [a for a in with_stats if a.id in left_ids]
    from_right = [a for a in with_stats if a.id not in left_ids]

    def updated(attrs) -> dict[int, ColumnStat]:
        res: dict[int, ColumnStat] = {}
        if rows == lrows * rrows:
            return {a.id: inputs[a.id] for a in attrs}
        if rows == 0:
            return res
        lratio = Decimal(rows) / Decimal(lrows) if lrows else Decimal(0)
        rratio = Decimal(rows) / Decimal(rrows) if rrows else Decimal(0)
        for a in attrs:
            if a.id in key_stats:
                res[a.id] = key_stats[a.id]
                continue
            old = inputs[a.id]
            ndv = old.distinct_count
            if ndv is not None:
                if a.id in left_ids and lratio < 1:
                    ndv = _ceil(Decimal(ndv) * lratio)
                elif a.id not in left_ids and rratio < 1:
                    ndv = _ceil(Decimal(ndv) * rratio)
            res[a.id] = replace(old, distinct_count=ndv)
        return res

    if jt is JoinType.LEFT_OUTER:
        out = {a.id: inputs[a.id] for a in from_left}
        out.update(updated(from_right))
    elif jt is JoinType.RIGHT_OUTER:
        out = updated(from_left)
        out.update({a.id: inputs[a.id] for a in from_right})
    elif jt is JoinType.FULL_OUTER:
        out = {a.id: inputs[a.id] for a in with_stats}
    else:
        out = updated(with_stats)
    return Statistics(output_size(p.output, rows, out), rows, MappingProxyType(out))


def _has_counts(s: Statistics, a: AttributeReference) -> bool:
    cs = s.attribute_stats.get(a.id)
    return cs is not None and cs.has_count_stats


def _intersects(a: ColumnStat, b: ColumnStat) -> bool:
    """Spark's ``Range.isIntersected``: ranges unknown (strings, missing min/max) intersect."""
    if not (a.has_min_max and b.has_min_max):
        return True
    amin, amax, bmin, bmax = (_to_double(a.min), _to_double(a.max), _to_double(b.min),
                              _to_double(b.max))
    if None in (amin, amax, bmin, bmax):
        return True
    return not (amax < bmin or bmax < amin)  # type: ignore[operator]


def _intersect_range(a: ColumnStat, b: ColumnStat) -> tuple[Any, Any]:
    if not (a.has_min_max and b.has_min_max):
        return a.min, a.max
    lo = a.min if _to_double(a.min) >= _to_double(b.min) else b.min  # type: ignore[operator]
    hi = a.max if _to_double(a.max) <= _to_double(b.max) else b.max  # type: ignore[operator]
    return lo, hi


def _null_stat(t: T.DataType, rows: int) -> ColumnStat:
    d = default_size(t)
    return ColumnStat(0, None, None, rows, d, d)


# ---------------------------------------------------------------------------------------------
# Column statistics of Arrow data (ANALYZE TABLE, auto statistics)


def stats_supported(t: T.DataType) -> bool:
    """Types Spark computes column statistics for (atomic types)."""
    return isinstance(t, (T.NumericType, T.BooleanType, T.DateType, T.TimestampType,
                          T.StringType, T.BinaryType))


def compute_column_stats(column: pa.Array | pa.ChunkedArray, dtype: T.DataType) -> ColumnStat:
    """Spark's ANALYZE column statistics of one column, vectorized: exact distinct count (Spark:
    HyperLogLog++), NULL count, min/max (not for strings/binary), average length (ceil) and max
    length (strings: characters, binary: bytes; other types: the default size)."""
    n = len(column)
    nulls = column.null_count
    ndv = pc.count_distinct(column, mode="only_valid").as_py() if n > nulls else 0
    lo = hi = None
    d = default_size(dtype)
    avg_len, max_len = d, d
    if isinstance(dtype, (T.StringType, T.BinaryType)):
        if n > nulls:
            lengths = pc.utf8_length(column) if isinstance(dtype, T.StringType) else \
                pc.binary_length(column)
            avg_len = _ceil(pc.mean(lengths).as_py())
            max_len = int(pc.max(lengths).as_py())
    elif n > nulls and isinstance(dtype, _RANGE_TYPES):
        mm = pc.min_max(column)
        lo, hi = mm["min"].as_py(), mm["max"].as_py()
        if isinstance(dtype, (T.FloatType, T.DoubleType)) and lo is not None:
            lo, hi = float(lo), float(hi)
    return ColumnStat(ndv, lo, hi, nulls, avg_len, max_len)


# ---------------------------------------------------------------------------------------------
# Table statistics (ANALYZE TABLE)


@dataclass(frozen=True, slots=True)
class TableStats:
    """Spark's ``CatalogStatistics``: size, row count (None after NOSCAN) and column statistics
    by lower-case column name of the relation."""

    size_in_bytes: int
    row_count: int | None = None
    col_stats: Mapping[str, ColumnStat] = field(default_factory=dict)


# LocalRelation data: id(table) -> (weakref to the table, stats)
_LOCAL_TABLE_STATS: dict[int, tuple[Any, TableStats]] = {}
# FileRelation / Range: a key of the relation -> stats
_KEYED_TABLE_STATS: dict[tuple, TableStats] = {}


def _relation_key(leaf: LogicalPlan) -> tuple | None:
    match leaf:
        case FileRelation(format=fmt, paths=paths, options=opts):
            return ("file", fmt, tuple(paths), tuple(opts))
        case Range(start=s, end=e, step=st):
            return ("range", s, e, st)
    return None


def _lookup_table_stats(leaf: LogicalPlan) -> TableStats | None:
    if isinstance(leaf, LocalRelation):
        if leaf.data is None:
            return None
        got = _LOCAL_TABLE_STATS.get(id(leaf.data))
        if got is not None and got[0]() is leaf.data:
            return got[1]
        return None
    key = _relation_key(leaf)
    return None if key is None else _KEYED_TABLE_STATS.get(key)


def table_statistics(leaf: LogicalPlan) -> TableStats | None:
    """The ANALYZE statistics recorded for the relation of ``leaf``, if any."""
    return _lookup_table_stats(leaf)


def _store_table_stats(leaf: LogicalPlan, stats: TableStats) -> None:
    with _LOCK:
        if isinstance(leaf, LocalRelation):
            data = leaf.data
            key = id(data)

            def _drop(_ref: Any, key: int = key) -> None:
                got = _LOCAL_TABLE_STATS.get(key)
                if got is not None and got[0]() is None:
                    _LOCAL_TABLE_STATS.pop(key, None)

            _LOCAL_TABLE_STATS[key] = (weakref.ref(data, _drop), stats)
        else:
            key2 = _relation_key(leaf)
            if key2 is None:
                return
            _KEYED_TABLE_STATS[key2] = stats
        _EPOCH[0] += 1


def clear_table_statistics() -> None:
    """Forget every recorded table statistic and automatically gathered one (tests)."""
    with _LOCK:
        _LOCAL_TABLE_STATS.clear()
        _KEYED_TABLE_STATS.clear()
        _AUTO_LOCAL.clear()
        _AUTO_FILES.clear()
        _EPOCH[0] += 1


def _trace_to_leaf(plan: LogicalPlan) -> tuple[LogicalPlan, dict[int, str]] | None:
    """The base relation under a view's plan and, for each output attribute id of ``plan``, the
    leaf column name it is (through projections of columns and aliases of columns); None when the
    plan is not such a plain relation access."""
    mapping: dict[int, int] = {a.id: a.id for a in plan.output}  # plan attr id -> current id
    node = plan
    while True:
        match node:
            case SubqueryAlias(child=c) | View(child=c) | ResolvedHint(child=c):
                node = c
            case Project(project_list=items, child=c):
                step: dict[int, int] = {}
                for e in items:
                    if isinstance(e, AttributeReference):
                        step[e.id] = e.id
                    elif isinstance(e, Alias) and isinstance(e.child, AttributeReference):
                        step[e.id] = e.child.id
                    else:
                        step[e.id] = -1  # type: ignore[attr-defined]
                mapping = {k: step.get(v, -1) for k, v in mapping.items()}
                node = c
            case LocalRelation() | FileRelation() | Range():
                names = {a.id: a.name for a in node.output}
                return node, {k: names[v] for k, v in mapping.items() if v in names}
            case _:
                return None


def analyze_table(session: Any, name_parts: tuple[str, ...], *, no_scan: bool = False,
                  columns: tuple[str, ...] | None = None, all_columns: bool = False) -> None:
    """Run ``ANALYZE TABLE name COMPUTE STATISTICS [NOSCAN | FOR COLUMNS .. | FOR ALL COLUMNS]``
    on the session's view ``name``: records the relation's size, row count (unless NOSCAN) and
    the requested columns' statistics (merged with earlier ones), as Spark's AnalyzeTableCommand
    and AnalyzeColumnCommand.

    >>> # spark.sql("ANALYZE TABLE t COMPUTE STATISTICS FOR COLUMNS a, b")
    """
    from ember.analysis.catalog import table_not_found
    from ember.errors import AnalysisError
    from ember.execution.context import ExecContext
    from ember.execution.executor import collect

    catalog = session.session_catalog
    plan = catalog.try_lookup(tuple(name_parts))
    if plan is None:
        raise table_not_found(tuple(name_parts))
    traced = _trace_to_leaf(plan)
    if traced is None:
        raise AnalysisError(
            "The feature is not supported: The ANALYZE TABLE command does not support views "
            f"over queries (`{'.'.join(name_parts)}` is not a plain relation).",
            error_class="UNSUPPORTED_FEATURE.ANALYZE_VIEW",
            parameters={},
        )
    leaf, col_names = traced
    output = plan.output
    case_sensitive = bool(getattr(session.sql_conf, "case_sensitive", False))
    wanted: list[AttributeReference] = []
    if all_columns:
        wanted = [a for a in output if stats_supported(a.data_type)]
    elif columns is not None:
        for c in columns:
            hits = [a for a in output
                    if (a.name == c if case_sensitive else a.name.lower() == c.lower())]
            if not hits:
                raise AnalysisError(
                    f"The column `{c}` cannot be found. Verify the spelling and correctness of "
                    "the column name according to the SQL config \"spark.sql.caseSensitive\".",
                    error_class="COLUMN_NOT_FOUND",
                    parameters={"colName": f"`{c}`",
                                "caseSensitiveConfig": "\"spark.sql.caseSensitive\""},
                )
            a = hits[0]
            if not stats_supported(a.data_type):
                raise AnalysisError(
                    f"The feature is not supported: The ANALYZE TABLE FOR COLUMNS command does "
                    f"not support the type {a.data_type.simple_string()} of the column `{a.name}` "
                    f"in the table `{'.'.join(name_parts)}`.",
                    error_class="UNSUPPORTED_FEATURE.ANALYZE_UNSUPPORTED_COLUMN_TYPE",
                    parameters={"columnType": f'"{a.data_type.simple_string().upper()}"',
                                "columnName": f"`{a.name}`",
                                "tableName": f"`{'.'.join(name_parts)}`"},
                )
            wanted.append(a)
    size = _leaf_stats(leaf, replace(_flags(session.sql_conf), auto=False, cbo=False,
                                     plan_stats=False)).size_in_bytes
    old = _lookup_table_stats(leaf)
    col_stats: dict[str, ColumnStat] = dict(old.col_stats) if old is not None else {}
    row_count = old.row_count if old is not None else None
    if not no_scan or wanted:
        ctx = ExecContext(session.sql_conf)
        if wanted:
            data = collect(leaf, ctx)
            row_count = data.num_rows
            leaf_pos = {a.name: i for i, a in enumerate(leaf.output)}
            for a in wanted:
                leaf_name = col_names.get(a.id)
                if leaf_name is None:
                    continue
                col = data.column(leaf_pos[leaf_name])
                col_stats[leaf_name.lower()] = compute_column_stats(col, a.data_type)
        else:
            row_count = _count_rows(leaf, ctx)
    _store_table_stats(leaf, TableStats(size, row_count, MappingProxyType(col_stats)))


def _count_rows(leaf: LogicalPlan, ctx: Any) -> int:
    match leaf:
        case LocalRelation():
            return leaf.num_rows
        case Range():
            return leaf.num_elements
    from ember.execution.executor import execute

    return sum(b.num_rows for b in execute(leaf, ctx))


# ---------------------------------------------------------------------------------------------
# Automatic statistics (beyond Spark; ember.cbo.autoStats.enabled)

_AUTO_LOCAL: dict[int, tuple[Any, tuple[int, dict[str, ColumnStat]]]] = {}
_AUTO_FILES: dict[tuple, tuple[int | None, dict[str, ColumnStat]]] = {}
#: Rows read per Parquet relation to estimate distinct counts.
AUTO_STATS_SAMPLE_ROWS = 100_000


def _auto_stats(leaf: LogicalPlan) -> tuple[int, Mapping[str, ColumnStat]] | None:
    match leaf:
        case LocalRelation(data=data) if data is not None:
            return _auto_local(leaf)
        case FileRelation(format="parquet"):
            got = _auto_parquet(leaf)
            if got is None or got[0] is None:
                return None
            return got  # type: ignore[return-value]
    return None


def _auto_local(leaf: LocalRelation) -> tuple[int, Mapping[str, ColumnStat]]:
    data = leaf.data
    assert data is not None
    key = id(data)
    got = _AUTO_LOCAL.get(key)
    if got is not None and got[0]() is data:
        return got[1]
    cols: dict[str, ColumnStat] = {}
    for a, col in zip(leaf.attrs, data.columns):
        if stats_supported(a.data_type):
            cols[a.name.lower()] = compute_column_stats(col, a.data_type)
    result = (data.num_rows, cols)
    with _LOCK:
        def _drop(_ref: Any, key: int = key) -> None:
            g = _AUTO_LOCAL.get(key)
            if g is not None and g[0]() is None:
                _AUTO_LOCAL.pop(key, None)

        _AUTO_LOCAL[key] = (weakref.ref(data, _drop), result)
    return result


def _file_signature(paths: tuple[str, ...]) -> tuple:
    sig = []
    for p in paths:
        try:
            st = os.stat(p)
            sig.append((p, st.st_size, st.st_mtime_ns))
        except OSError:
            sig.append((p, -1, -1))
    return tuple(sig)


def _gee_ndv(sample: pa.ChunkedArray | pa.Array, total_rows: int) -> int:
    """Distinct count of a column from a sample: exact when the sample is the whole column, else
    the GEE estimator ``sqrt(N/n) * f1 + sum(f_j, j >= 2)`` (f1: values seen once)."""
    valid = pc.drop_null(sample)
    n = len(valid)
    if n == 0:
        return 0
    counts = pc.value_counts(valid).field("counts")
    d = len(counts)
    if n >= total_rows:
        return d
    f1 = pc.sum(pc.equal(counts, 1)).as_py() or 0
    est = math.sqrt(total_rows / n) * f1 + (d - f1)
    return int(min(max(d, round(est)), total_rows))


def _auto_parquet(leaf: FileRelation) -> tuple[int | None, dict[str, ColumnStat]] | None:
    import pyarrow.parquet as pq

    key = (_file_signature(tuple(leaf.paths)), tuple((a.name, str(a.data_type))
                                                      for a in leaf.attrs))
    got = _AUTO_FILES.get(key)
    if got is not None:
        return got
    total = 0
    nulls: dict[str, int] = {}
    mins: dict[str, Any] = {}
    maxs: dict[str, Any] = {}
    no_minmax: set[str] = set()
    sample_tables = []
    sampled = 0
    try:
        for path in leaf.paths:
            pf = pq.ParquetFile(path)
            md = pf.metadata
            total += md.num_rows
            names = [md.schema.column(i).path for i in range(md.num_columns)]
            for rg in range(md.num_row_groups):
                g = md.row_group(rg)
                for i, nm in enumerate(names):
                    s = g.column(i).statistics
                    key_nm = nm.lower()
                    if s is None or not s.has_null_count:
                        nulls[key_nm] = -(1 << 62)
                    else:
                        nulls[key_nm] = nulls.get(key_nm, 0) + s.null_count
                    if s is None or not s.has_min_max:
                        no_minmax.add(key_nm)
                    else:
                        try:
                            lo, hi = s.min, s.max
                            mins[key_nm] = lo if key_nm not in mins else min(mins[key_nm], lo)
                            maxs[key_nm] = hi if key_nm not in maxs else max(maxs[key_nm], hi)
                        except TypeError:
                            no_minmax.add(key_nm)
            if sampled < AUTO_STATS_SAMPLE_ROWS:
                for batch in pf.iter_batches(batch_size=min(65536, AUTO_STATS_SAMPLE_ROWS)):
                    sample_tables.append(pa.Table.from_batches([batch]))
                    sampled += batch.num_rows
                    if sampled >= AUTO_STATS_SAMPLE_ROWS:
                        break
    except Exception:  # noqa: BLE001 -- unreadable footers: no automatic statistics
        _AUTO_FILES[key] = (None, {})
        return _AUTO_FILES[key]
    sample = pa.concat_tables(sample_tables, promote_options="permissive") if sample_tables \
        else None
    cols: dict[str, ColumnStat] = {}
    sample_names = {n.lower(): n for n in (sample.column_names if sample is not None else [])}
    for a in leaf.attrs:
        nm = a.name.lower()
        if not stats_supported(a.data_type) or nm not in sample_names:
            continue
        col = sample.column(sample_names[nm])  # type: ignore[union-attr]
        nc = nulls.get(nm)
        null_count = nc if nc is not None and nc >= 0 else None
        ndv = _gee_ndv(col, total)
        if null_count is not None:
            ndv = min(ndv, total - null_count)
        lo = hi = None
        if (nm not in no_minmax and nm in mins and isinstance(
                a.data_type, (T.IntegralType, T.FloatType, T.DoubleType, T.DateType))):
            lo, hi = mins[nm], maxs[nm]
            if isinstance(a.data_type, T.DateType) and isinstance(lo, int):
                lo = _dt.date(1970, 1, 1) + _dt.timedelta(days=lo)
                hi = _dt.date(1970, 1, 1) + _dt.timedelta(days=hi)
        base = compute_column_stats(col, a.data_type)
        cols[nm] = ColumnStat(ndv, lo, hi, null_count, base.avg_len, base.max_len)
    result = (total, cols)
    if len(_AUTO_FILES) > 256:
        _AUTO_FILES.clear()
    _AUTO_FILES[key] = result
    return result
