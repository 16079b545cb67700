"""What plan statistics are: Spark's ``Statistics``, ``ColumnStat``, ``HintInfo`` and
``CatalogStatistics`` (here :class:`TableStats`), the row widths of ``EstimationUtils``, the
column statistics ANALYZE computes from Arrow data, and :class:`TableStatisticsSource`, the
interface through which estimation reads a session's table statistics.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from decimal import ROUND_HALF_UP, Decimal, localcontext
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, Protocol

import pyarrow as pa
import pyarrow.compute as pc

from ember import types as T
from ember.expressions.base import AttributeReference

if TYPE_CHECKING:
    from ember.plans.logical.nodes import LogicalPlan

LONG_MAX = (1 << 63) - 1
_EMPTY: Mapping[int, "ColumnStat"] = MappingProxyType({})
#: Types whose column statistics have a min and max (Spark's ``Range`` of ``EstimationUtils``).
_RANGE_TYPES = (T.NumericType, T.DateType, T.TimestampType, T.BooleanType)


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
    if abs(n) < 1000:
        return str(n)
    with localcontext() as ctx:
        ctx.prec = 3
        ctx.rounding = ROUND_HALF_UP
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


def product_of(stats: list[Statistics], hints: HintInfo, with_rows: bool = False) -> Statistics:
    """Spark's ``default`` for non-leaf nodes: the product of the children's sizes (and of their
    row counts in the CBO visitor, ``with_rows``); sizes and counts of 0 are left out."""
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
    return Statistics(size, rows, hints=hints)


def _ceil(x: float | Decimal) -> int:
    return int(math.ceil(x))


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



class TableStatisticsSource(Protocol):
    """A session's table statistics, as estimation reads them: Spark's ``CatalogStatistics``,
    which the ``SessionCatalog`` keeps on each table and ``toPlanStats`` turns into a leaf's
    statistics.  The session catalog implements it (``ember.analysis.table_statistics``); the
    session's configuration carries it to :func:`plan_stats` (``SQLConf.table_statistics``).

    ``epoch`` changes whenever recorded statistics change, so statistics cached on plan nodes
    are recomputed.
    """

    @property
    def epoch(self) -> int: ...

    def analyzed(self, leaf: "LogicalPlan") -> TableStats | None:
        """The ANALYZE TABLE statistics recorded for the relation of ``leaf``, if any."""

    def automatic(self, leaf: "LogicalPlan") -> tuple[int, Mapping[str, ColumnStat]] | None:
        """Statistics gathered without ANALYZE (``ember.cbo.autoStats.enabled``): the row count
        and column statistics by lower-case column name, None when the relation has none."""
