"""Reading file relations (Parquet, CSV, JSON) into record batches typed like the relation's
attributes. JSON is read by ``ember.execution.json_source`` (split by lines as
``ember.execution.file_index.file_splits`` cuts the files); the partition columns of every format
come from the files' ``key=value`` directories (``ember.execution.file_index``).

CSV follows Spark's DataFrameReader options (case-insensitive names): ``header`` (default false;
without it columns are ``_c0``, ``_c1`` ...), ``sep``/``delimiter`` (``,``), ``quote`` (``"``;
an empty string disables quoting), ``escape`` (``\\``), ``multiLine``, ``nullValue`` (``""``),
``emptyValue`` (``""``), ``ignoreLeadingWhiteSpace`` / ``ignoreTrailingWhiteSpace`` (false) and
``mode`` (``PERMISSIVE``: a record with too few fields is padded with NULLs, extra fields are
dropped, a value that does not parse as its column's type is NULL; ``DROPMALFORMED``: such
records are dropped; ``FAILFAST``: reading fails with ``FAILED_READ_FILE.NO_HINT``).
Null semantics are Spark's: an unquoted empty field is NULL; a quoted empty field reads as
``emptyValue``; any value equal to ``nullValue`` is NULL.

Known differences from Spark: records with the wrong number of fields come after the other records
of their file; values are converted with Spark's (lenient) CAST rules, so e.g. ``" 1"`` reads as
int 1 under a user schema where Spark's CSV parser gives NULL.

Parquet columns are matched by name (case-insensitively); Hive-style partition directories
(``key=value``) become the columns listed in the relation's ``__partition_columns`` option.

Parquet splits (``plan_parquet_splits`` / ``read_parquet_split``, used by the local runtime's
scan) read only the required columns, skip row groups by their statistics, and apply the pushed
data filters row by row.  Fast path (``ROW_GROUP_READS``, on by default): a split is decoded row
group by row group with ``ParquetFile.read_row_group`` (pre-buffered; on the main thread only --
a serial run or a one-task stage -- the next row group is read ahead on a helper thread, while
pool workers, which already run splits in parallel, decode inline, ``READ_THREADS``), and the pushed filter is applied with
``pyarrow.compute`` kernels (``to_arrow_filter(..., kernel=True)``) instead of an Acero plan per
batch; string columns whose chunks are all dictionary-encoded and small per value
(``dictionary_columns``) are decoded as Arrow dictionaries, filtered as such (the comparison and
IN kernels take dictionaries), and only the surviving rows cast back to strings, which is 2-3x
cheaper than Arrow's direct decode and skips the cast of the rows the filter drops;
``IS NOT NULL`` of a column whose statistics show no NULL in the file is not evaluated at all.
The row-group reads are also what the run's scan sharing (``ember.runtime.local.scan_cache``)
plugs into through ``read_parquet_split``'s ``fetch``.  With ``ROW_GROUP_READS`` off, splits are
read through the ``pyarrow.dataset`` API with the filter expression (the former path).
A file's footer (schema, row-group statistics, dictionary columns) is read once per version of
the file (:func:`parquet_footer`, keyed by path, modification time and size), not once per scan.
"""

from __future__ import annotations

import io
import os
import threading
from collections import OrderedDict
from collections.abc import Callable, Iterator, Sequence
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.csv as pacsv
import pyarrow.parquet as pq

from ember import types as T
from ember.errors import ExecutionError, UnsupportedError
from ember.execution.kernels.batches import conform, make_batch, schema_of
from ember.expressions import predicates as Pr
from ember.expressions.base import AttributeReference, Literal
from ember.expressions.cast import cast_array
from ember.expressions.csv_functions import parse_csv_record
from ember.expressions.predicates import IsNotNull
from ember.execution.file_index import (HIVE_NULL, PARTITION_OPTION, FileSplit, partition_columns,
                                        partition_values, read_lines)
from ember.execution.json_source import read_json
from ember.execution.text_source import read_text, splittable

__all__ = ["scan_file_relation", "read_csv_strings", "partition_values", "PARTITION_OPTION",
           "HIVE_NULL"]

def _options(options: Sequence[tuple[str, str]] | dict) -> dict[str, str]:
    items = options.items() if isinstance(options, dict) else options
    return {str(k).lower(): str(v) for k, v in items}


def _flag(opts: dict[str, str], key: str, default: bool = False) -> bool:
    v = opts.get(key.lower())
    return default if v is None else v.strip().lower() == "true"


def _char(opts: dict[str, str], key: str, default: str) -> str | bool:
    v = opts.get(key, default)
    return False if v == "" else v


# ---------------------------------------------------------------------------------------------
# CSV


def _csv_parse_options(opts: dict[str, str], on_invalid) -> pacsv.ParseOptions:
    quote, escape = _char(opts, "quote", '"'), _char(opts, "escape", "\\")
    return pacsv.ParseOptions(
        delimiter=opts.get("sep", opts.get("delimiter", ",")),
        quote_char=quote,
        escape_char=False if escape == quote else escape,
        double_quote=escape == quote,  # escape '"': RFC 4180 doubled quotes
        newlines_in_values=_flag(opts, "multiLine"),
        invalid_row_handler=on_invalid,
    )


def _first_record(path: str, opts: dict[str, str]) -> list[str] | None:
    """The first record of ``path`` as strings (None for an empty file)."""
    parse = _csv_parse_options(opts, lambda row: "skip")
    read = pacsv.ReadOptions(autogenerate_column_names=True, block_size=1 << 20)
    try:
        with pacsv.open_csv(path, read_options=read, parse_options=parse,
                            convert_options=pacsv.ConvertOptions(
                                column_types={}, strings_can_be_null=False,
                                auto_dict_encode=False)) as reader:
            for batch in reader:
                if batch.num_rows:
                    return [str(c[0].as_py()) if c[0].is_valid else "" for c in
                            batch.cast(pa.schema([pa.field(f.name, pa.string())
                                                  for f in batch.schema])).columns]
            return [""] * len(reader.schema) if len(reader.schema) else None
    except pa.ArrowInvalid as e:
        if "Empty CSV file" in str(e):
            return None
        raise


def _header_names(first: list[str]) -> list[str]:
    """Spark's column names from a header record: blanks -> ``_c<i>``, duplicates get their
    position appended (``a,a`` -> ``a0,a1``)."""
    names = [n if n else f"_c{i}" for i, n in enumerate(first)]
    lower = [n.lower() for n in names]
    return [f"{n}{i}" if lower.count(n.lower()) > 1 else n for i, n in enumerate(names)]


def _spark_nulls(col: pa.ChunkedArray | pa.Array, opts: dict[str, str]) -> pa.ChunkedArray:
    """Apply trimming, ``emptyValue`` and ``nullValue`` to a string column whose unquoted empty
    fields are already NULL (quoted empty fields are ``""``)."""
    if _flag(opts, "ignoreLeadingWhiteSpace"):
        col = pc.utf8_ltrim_whitespace(col)
    if _flag(opts, "ignoreTrailingWhiteSpace"):
        col = pc.utf8_rtrim_whitespace(col)
    empty_value = opts.get("emptyvalue", "")
    null_value = opts.get("nullvalue", "")
    if empty_value != "":
        col = pc.if_else(pc.equal(col, ""), pa.scalar(empty_value, col.type), col)
    return pc.if_else(pc.equal(col, null_value), pa.scalar(None, col.type), col)


def read_csv_strings(paths: Sequence[str], opts: Sequence[tuple[str, str]] | dict,
                     splits: Sequence[FileSplit] | None = None
                     ) -> tuple[list[str], pa.Table, pa.ChunkedArray]:
    """Read CSV files (or ``splits``: byte ranges of them, read by whole lines as Hadoop's
    ``LineRecordReader`` does; the header is the first line of a file's first split) as string
    columns with Spark's null semantics.

    Returns (column names, table of ``large_string`` columns, boolean ``malformed`` column: the
    record had a different number of fields than the first record of the first file). The
    names come from the first file's header (``header``) or are ``_c0``, ``_c1`` ...
    """
    opts = _options(opts)
    header = _flag(opts, "header")
    first = None
    for p in paths:
        first = _first_record(p, opts)
        if first is not None:
            break
    if first is None:
        return [], pa.table({}), pa.chunked_array([], pa.bool_())
    width = len(first)
    names = _header_names(first) if header else [f"_c{i}" for i in range(width)]
    internal = [f"f{i}" for i in range(width)]
    tables, flags = [], []
    units = splits if splits is not None else [FileSplit(p, 0, -1) for p in paths]
    for u in units:
        bad: list[str] = []

        def on_invalid(row, bad=bad) -> str:
            bad.append(row.text)
            return "skip"

        if u.length < 0:
            if _first_record(u.path, opts) is None:
                continue
            source: Any = u.path
        else:
            data = read_lines(u)
            if not data.strip():
                continue
            source = io.BytesIO(data)
        read = pacsv.ReadOptions(column_names=internal,
                                 skip_rows=1 if header and u.start == 0 else 0)
        convert = pacsv.ConvertOptions(
            column_types={n: pa.large_string() for n in internal}, strings_can_be_null=True,
            null_values=[""], quoted_strings_can_be_null=False)
        try:
            t = pacsv.read_csv(source, read_options=read,
                               parse_options=_csv_parse_options(opts, on_invalid),
                               convert_options=convert)
        except pa.ArrowInvalid as e:
            if "Empty CSV file" in str(e):  # a split holding only the header
                continue
            raise
        tables.append(t)
        flags.append(pa.nulls(t.num_rows, pa.bool_()).fill_null(False))
        if bad:
            recs = [parse_csv_record(b, opts) for b in bad]
            recs = [(r + [None] * width)[:width] for r in recs]
            extra = pa.table({n: pa.array([r[i] for r in recs], pa.large_string())
                              for i, n in enumerate(internal)})
            tables.append(extra)
            flags.append(pa.nulls(len(recs), pa.bool_()).fill_null(True))
    if not tables:
        return names, pa.table({n: pa.array([], pa.large_string()) for n in names}), \
            pa.chunked_array([], pa.bool_())
    table = pa.concat_tables(tables)
    cols = [_spark_nulls(c, opts) for c in table.columns]
    out = pa.Table.from_arrays(cols, names=[f"f{i}" for i in range(width)]).rename_columns(names) \
        if cols else table
    return names, out, pa.chunked_array(flags, pa.bool_())


def _scan_csv(rel, opts: dict[str, str], time_zone: str,
              splits: Sequence[FileSplit] | None = None) -> pa.Table:
    _names, table, malformed = read_csv_strings(rel.paths, opts, splits)
    mode = opts.get("mode", "PERMISSIVE").upper()
    cols = []
    bad = malformed.combine_chunks() if table.num_rows else pa.array([], pa.bool_())
    for pos, a in enumerate(rel.attrs):
        if pos < table.num_columns:
            src = table.column(pos).combine_chunks()
        else:
            src = pa.nulls(table.num_rows, pa.large_string())
        if isinstance(a.data_type, T.StringType):
            col = src
        else:
            col = cast_array(src, T.STRING, a.data_type, ansi=False, time_zone=time_zone)
            bad = pc.or_(bad, pc.and_(src.is_valid(), col.is_null()))
        cols.append(col)
    if mode == "FAILFAST" and pc.any(bad).as_py():
        raise ExecutionError(
            f"Encountered error while reading file {', '.join(rel.paths)}. [MALFORMED_RECORD_IN_PARSING.WITHOUT_SUGGESTION] Malformed records are detected in "
            "record parsing. Parse Mode: FAILFAST. To process malformed records as null result, "
            "try setting the option 'mode' as 'PERMISSIVE'.",
            error_class="FAILED_READ_FILE.NO_HINT",
            parameters={"path": ", ".join(rel.paths)},
        )
    schema = schema_of(rel.attrs)
    out = pa.Table.from_arrays([c.cast(f.type) for c, f in zip(cols, schema)], schema=schema) \
        if cols else pa.table({"_": pa.nulls(table.num_rows)}).drop(["_"])
    if mode == "DROPMALFORMED" and table.num_rows:
        out = out.filter(pc.invert(bad))
    return out


def _scan_csv_partitioned(rel, opts: dict[str, str], time_zone: str,
                          splits: Sequence[FileSplit] | None = None) -> pa.Table:
    """``_scan_csv`` of ``rel``'s data columns (or ``splits`` of its files), with its partition
    columns (file by file)."""
    parts = {a.id for a in partition_columns(rel)}
    if not parts:
        return _scan_csv(rel, opts, time_zone, splits)
    schema = schema_of(rel.attrs)
    names = [a.name for a in rel.attrs if a.id in parts]
    tables = []
    units = splits if splits is not None else [FileSplit(p, 0, -1) for p in rel.paths]
    for u in units:
        p = u.path
        t = _scan_csv(rel.copy(attrs=tuple(a for a in rel.attrs if a.id not in parts),
                               paths=(p,)), opts, time_zone, None if u.length < 0 else [u])
        vals = partition_values(p, names)
        cols, k = [], 0
        for a in rel.attrs:
            if a.id in parts:
                cols.append(_partition_column(a, vals.get(a.name.lower()), t.num_rows, time_zone))
            else:
                cols.append(t.column(k))
                k += 1
        tables.append(pa.Table.from_arrays([c.cast(f.type) for c, f in zip(cols, schema)],
                                           schema=schema))
    return pa.concat_tables(tables) if tables else schema.empty_table()


# ---------------------------------------------------------------------------------------------
# Parquet


def _scan_parquet(rel, opts: dict[str, str], time_zone: str) -> pa.Table:
    part_cols = [n for n in opts.get(PARTITION_OPTION.lower(), "").split(",") if n]
    tables = []
    for p in rel.paths:
        t = pq.read_table(p)
        if part_cols:
            vals = partition_values(p, part_cols)
            for n in part_cols:
                t = t.append_column(f"__part_{n}", pa.array([vals.get(n.lower())] * t.num_rows,
                                                             pa.large_string()))
        tables.append(t)
    table = pa.concat_tables(tables, promote_options="permissive") if len(tables) > 1 \
        else tables[0]
    by_lower = {n.lower(): i for i, n in enumerate(table.column_names)}
    for n in part_cols:
        by_lower[n.lower()] = table.column_names.index(f"__part_{n}")
    cols = []
    for a in rel.attrs:
        i = by_lower.get(a.name.lower())
        target = a.data_type.to_arrow()
        if i is None:  # a user-schema column absent from the files: NULL, as in Spark
            cols.append(pa.nulls(table.num_rows, target))
            continue
        col = table.column(i)
        if a.name.lower() in {n.lower() for n in part_cols}:
            col = pa.nulls(table.num_rows, target) if isinstance(a.data_type, T.NullType) \
                else cast_array(col.combine_chunks(), T.STRING, a.data_type, ansi=False,
                                time_zone=time_zone)
        elif col.type != target:
            col = col.cast(target)
        cols.append(col)
    schema = schema_of(rel.attrs)
    if not cols:
        return pa.table({"_": pa.nulls(table.num_rows)}).drop(["_"])
    return pa.Table.from_arrays(cols, schema=schema)


def _partition_column(a, value: str | None, n: int, time_zone: str) -> pa.Array:
    """The constant column of the partition column ``a`` (``value``: its directory value)."""
    raw = pa.array([value], pa.large_string())
    if isinstance(a.data_type, T.NullType):
        one = pa.nulls(1, pa.null())
    elif isinstance(a.data_type, T.StringType):
        one = raw
    else:
        one = cast_array(raw, T.STRING, a.data_type, ansi=False, time_zone=time_zone)
    return pa.repeat(one.cast(a.data_type.to_arrow())[0], n) if n else \
        pa.array([], a.data_type.to_arrow())


def multi_line(rel) -> bool:
    """Whether ``rel``'s files are read whole (``multiLine``; for text ``wholetext`` or a
    ``lineSep``), not splittable by lines."""
    opts = _options(rel.options)
    if rel.format.lower() == "text":
        return not splittable(opts)
    return _flag(opts, "multiLine")


def _scan_json(rel, opts: dict[str, str], time_zone: str,
               splits: Sequence[FileSplit] | None = None) -> pa.Table:
    """``rel``'s JSON files (or ``splits`` of them) with their partition columns."""
    return _scan_lines(rel, opts, time_zone, splits, _flag(opts, "multiLine"),
                       lambda path, data_attrs, data: read_json(path, data_attrs, opts,
                                                                time_zone, data=data))


def _scan_text(rel, opts: dict[str, str], time_zone: str,
               splits: Sequence[FileSplit] | None = None) -> pa.Table:
    """``rel``'s text files (or ``splits`` of them) with their partition columns."""
    def read(path, data_attrs, data):
        values = read_text(path, opts, data)
        return pa.table([values] * len(data_attrs), names=[a.name for a in data_attrs]) \
            if data_attrs else pa.table({"_": pa.nulls(len(values))}).drop(["_"])

    return _scan_lines(rel, opts, time_zone, splits, not splittable(opts), read)


def _scan_lines(rel, opts: dict[str, str], time_zone: str,
                splits: Sequence[FileSplit] | None, whole: bool,
                read: Callable[[str, list, bytes | None], pa.Table]) -> pa.Table:
    """``rel``'s files of a line-based format (or ``splits`` of them, unless read ``whole``),
    each read by ``read(path, data attributes, its lines or None)``, with the partition
    columns."""
    parts = {a.id for a in partition_columns(rel)}
    data_attrs = [a for a in rel.attrs if a.id not in parts]
    units = splits if splits is not None else [FileSplit(p, 0, -1) for p in rel.paths]
    schema = schema_of(rel.attrs)
    tables = []
    for u in units:
        data = None if whole or u.length < 0 else read_lines(u)
        t = read(u.path, data_attrs, data)
        n = t.num_rows
        if parts:
            vals = partition_values(u.path, [a.name for a in rel.attrs if a.id in parts])
            cols, k = [], 0
            for a in rel.attrs:
                if a.id in parts:
                    cols.append(_partition_column(a, vals.get(a.name.lower()), n, time_zone))
                else:
                    cols.append(t.column(k))
                    k += 1
        else:
            cols = list(t.columns)
        if not cols:
            tables.append(pa.table({"_": pa.nulls(n)}).drop(["_"]))
            continue
        tables.append(pa.Table.from_arrays([conform(c, f.type) if isinstance(c, pa.Array)
                                            else c.cast(f.type) for c, f in zip(cols, schema)],
                                           schema=schema))
    if not tables:
        return schema.empty_table()
    if not rel.attrs:
        return pa.table({"_": pa.nulls(sum(t.num_rows for t in tables))}).drop(["_"])
    return pa.concat_tables(tables)


def scan_file_relation(rel, batch_size: int, time_zone: str = "UTC",
                       splits: Sequence[FileSplit] | None = None) -> Iterator[pa.RecordBatch]:
    """Batches of a ``FileRelation`` with columns cast to its attributes' Arrow types
    (``splits``: only these byte ranges of its files, for a splittable format)."""
    opts = _options(rel.options)
    schema = schema_of(rel.attrs)
    fmt = rel.format.lower()
    if not rel.paths:  # an empty table's directory: no rows
        return
    try:
        if fmt == "parquet":
            table = _scan_parquet(rel, opts, time_zone)
        elif fmt == "csv":
            table = _scan_csv_partitioned(rel, opts, time_zone, splits)
        elif fmt == "json":
            table = _scan_json(rel, opts, time_zone, splits)
        elif fmt == "text":
            table = _scan_text(rel, opts, time_zone, splits)
        else:
            raise UnsupportedError(f"Data source {rel.format} is not supported")
    except FileNotFoundError as e:
        raise ExecutionError(f"Path does not exist: {e}", error_class="PATH_NOT_FOUND",
                             parameters={"path": str(e)}) from e
    if not rel.attrs:
        n = table.num_rows
        for s in range(0, n, max(1, batch_size)):
            yield make_batch([], schema, min(batch_size, n - s))
        return
    for b in table.to_batches(max_chunksize=max(1, batch_size)):
        if b.num_rows:
            yield make_batch([conform(c, f.type) for c, f in zip(b.columns, schema)], schema,
                             b.num_rows)


# ---------------------------------------------------------------------------------------------
# Parquet splits: column projection, pushed filters, row-group parallelism

#: a split holds about this many (uncompressed) bytes of row groups at most (Spark's
#: ``spark.sql.files.maxPartitionBytes``) ...
MAX_SPLIT_BYTES = 128 * 1024 * 1024
#: ... and at least this many (Spark's ``spark.sql.files.openCostInBytes``), unless the file is
#: smaller; between the two, ``total / (2 * parallelism)`` so every core gets work.
MIN_SPLIT_BYTES = 4 * 1024 * 1024

_CMP = {"EqualTo": "==", "LessThan": "<", "LessThanOrEqual": "<=", "GreaterThan": ">",
        "GreaterThanOrEqual": ">="}
_FLIP = {"==": "==", "<": ">", "<=": ">=", ">": "<", ">=": "<="}


def _pushable_type(t: "T.DataType") -> bool:
    """Types whose Arrow comparison equals Spark's (no floats: NaN orders differently)."""
    return isinstance(t, (T.ByteType, T.ShortType, T.IntegerType, T.LongType, T.DateType,
                          T.StringType, T.DecimalType, T.BooleanType))


def _same_family(file_type: pa.DataType, target: pa.DataType) -> bool:
    if pa.types.is_string(file_type) or pa.types.is_large_string(file_type):
        return pa.types.is_string(target) or pa.types.is_large_string(target)
    return file_type.equals(target)


class _ExprBuild:
    """Builds ``pyarrow.dataset`` expressions (for row-group pruning and dataset scans)."""

    @staticmethod
    def field(name):
        import pyarrow.dataset as ds

        return ds.field(name)

    @staticmethod
    def cmp(op, a, b):
        return {"==": a == b, "<": a < b, "<=": a <= b, ">": a > b, ">=": a >= b}[op]

    is_valid = staticmethod(lambda a: a.is_valid())
    is_null = staticmethod(lambda a: a.is_null())
    isin = staticmethod(lambda a, values: a.isin(values))
    and_ = staticmethod(lambda a, b: a & b)
    or_ = staticmethod(lambda a, b: a | b)


_KERNEL_CMP = {"==": pc.equal, "<": pc.less, "<=": pc.less_equal, ">": pc.greater,
               ">=": pc.greater_equal}


class _KernelBuild:
    """Builds ``fn(table) -> boolean array`` closures evaluating the same predicate with
    ``pyarrow.compute`` kernels (no Acero plan per call: cheaper on one row group)."""

    @staticmethod
    def field(name):
        return lambda t: t.column(name)

    @staticmethod
    def cmp(op, a, b):
        k = _KERNEL_CMP[op]
        if callable(b):
            return lambda t: k(a(t), b(t))
        return lambda t: k(a(t), b)

    @staticmethod
    def is_valid(a):
        return lambda t: pc.is_valid(a(t))

    @staticmethod
    def is_null(a):
        return lambda t: pc.is_null(a(t))

    @staticmethod
    def isin(a, values):
        return lambda t: pc.is_in(a(t), value_set=values)

    @staticmethod
    def and_(a, b):
        return lambda t: pc.and_kleene(a(t), b(t))

    @staticmethod
    def or_(a, b):
        return lambda t: pc.or_kleene(a(t), b(t))


def to_arrow_filter(expr, columns: dict[int, tuple[str, pa.DataType]], partial: bool = True,
                    kernel: bool = False):
    """A ``pyarrow.compute.Expression`` selecting a superset of the rows where the (Spark)
    predicate ``expr`` is TRUE, or None when nothing can be translated.  With ``kernel``, the
    same predicate as a function ``fn(table) -> boolean array`` (NULL = not selected) over a
    table of the file columns, computed with ``pyarrow.compute`` kernels.

    ``columns`` maps attribute ids to (file column name, file column type).  Only comparisons of a
    column with a non-NULL literal of the column's own type or with another column of the same
    type, IS [NOT] NULL, IN lists of such literals, AND and OR are translated (exactly: with
    ``partial=False``, a non-None result selects exactly the rows where ``expr`` is TRUE); with ``partial``, an AND keeps its translatable side
    (a weaker filter; the FilterExec above evaluates the whole condition anyway)."""

    B = _KernelBuild if kernel else _ExprBuild

    def column(e):
        if isinstance(e, AttributeReference) and e.id in columns and _pushable_type(e.data_type):
            name, ftype = columns[e.id]
            if _same_family(ftype, e.data_type.to_arrow()):
                return B.field(name), ftype
        return None

    def lit(e, t, ftype):
        if isinstance(e, Literal) and e.value is not None and e.data_type == t:
            try:
                return pa.scalar(e.value, type=ftype)
            except (pa.ArrowInvalid, pa.ArrowTypeError, TypeError, ValueError):
                return None
        return None

    def go(e, partial: bool):
        name = type(e).__name__
        if isinstance(e, Pr.And):
            lft, rgt = go(e.left, partial), go(e.right, partial)
            if lft is not None and rgt is not None:
                return B.and_(lft, rgt)
            return (lft if lft is not None else rgt) if partial else None
        if isinstance(e, Pr.Or):
            lft, rgt = go(e.left, False), go(e.right, False)
            return B.or_(lft, rgt) if lft is not None and rgt is not None else None
        if isinstance(e, (Pr.IsNull, Pr.IsNotNull)):
            c = column(e.child)
            if c is None:
                return None
            return B.is_valid(c[0]) if isinstance(e, Pr.IsNotNull) else B.is_null(c[0])
        if isinstance(e, Pr.In):
            c = column(e.value)
            if c is None or not e.items:
                return None
            vals = [lit(i, e.value.data_type, c[1]) for i in e.items]
            if any(v is None for v in vals):
                return None
            return B.isin(c[0], pa.array([v.as_py() for v in vals], type=c[1]))
        op = _CMP.get(name)
        if op is not None and type(e).__module__ == Pr.__name__:
            ca, cb = column(e.left), column(e.right)
            if ca is not None and cb is not None and e.left.data_type == e.right.data_type \
                    and ca[1].equals(cb[1]):
                return B.cmp(op, ca[0], cb[0])
            for a, b, o in ((e.left, e.right, op), (e.right, e.left, _FLIP[op])):
                c = column(a)
                if c is None:
                    continue
                v = lit(b, a.data_type, c[1])
                if v is None:
                    continue
                return B.cmp(o, c[0], v)
        return None

    return go(expr, partial)


def _fragment(path: str, row_groups: list[int] | None = None):
    import pyarrow.dataset as ds
    import pyarrow.fs as pafs

    return ds.ParquetFileFormat().make_fragment(
        os.path.abspath(path), filesystem=pafs.LocalFileSystem(), row_groups=row_groups)


class ParquetFooter:
    """What one version of a Parquet file's footer tells, read once (:func:`parquet_footer`):
    the whole-file ``fragment`` (its row-group statistics loaded), the file ``schema`` (the
    fragment's physical schema), the ``metadata``, and -- each computed on first use -- the
    columns read as dictionaries (:func:`dictionary_columns`) and the columns with no NULL in
    any row group (:func:`_null_free_columns`)."""

    __slots__ = ("fragment", "schema", "metadata", "_as_dict", "_null_free")

    def __init__(self, path: str) -> None:
        self.fragment = _fragment(path)
        self.schema = self.fragment.physical_schema
        self.fragment.ensure_complete_metadata()
        self.metadata = self.fragment.metadata
        self._as_dict: dict[str, pa.DataType] | None = None
        self._null_free: set[str] | None = None

    @property
    def as_dict(self) -> dict[str, pa.DataType]:
        if self._as_dict is None:
            self._as_dict = {n: self.schema.field(n).type
                             for n in dictionary_columns(self.metadata, self.schema)}
        return self._as_dict

    @property
    def null_free(self) -> set[str]:
        if self._null_free is None:
            self._null_free = _null_free_columns(self.metadata)
        return self._null_free


#: how many file versions :func:`parquet_footer` keeps (least recently used dropped first)
FOOTER_CACHE_ENTRIES = 1024
_FOOTERS: OrderedDict[tuple[str, int, int], ParquetFooter] = OrderedDict()
_FOOTERS_LOCK = threading.Lock()


def parquet_footer(path: str) -> ParquetFooter:
    """The footer of the Parquet file ``path``, read once per version of the file: cached by
    absolute path, modification time (ns) and size, so a rewritten file is read again (every
    query used to re-read the footer of every file it scans).  A file that cannot be stat-ed is
    not cached (reading it raises pyarrow's error, as before)."""
    full = os.path.abspath(path)
    try:
        st = os.stat(full)
    except OSError:
        return ParquetFooter(full)
    key = (full, st.st_mtime_ns, st.st_size)
    with _FOOTERS_LOCK:
        hit = _FOOTERS.get(key)
        if hit is not None:
            _FOOTERS.move_to_end(key)
            return hit
    footer = ParquetFooter(full)
    with _FOOTERS_LOCK:
        _FOOTERS[key] = footer
        while len(_FOOTERS) > FOOTER_CACHE_ENTRIES:
            _FOOTERS.popitem(last=False)
    return footer


def _is_not_null_of(e, columns: dict[int, tuple[str, pa.DataType]]) -> bool:
    return isinstance(e, IsNotNull) and isinstance(e.child, AttributeReference) \
        and e.child.id in columns


def _null_free_columns(md: pq.FileMetaData) -> set[str]:
    """Top-level columns whose statistics show no NULL in any row group of the file."""
    if md.num_row_groups == 0:
        return set()
    out = None
    for i in range(md.num_row_groups):
        rg = md.row_group(i)
        here = set()
        for j in range(rg.num_columns):
            c = rg.column(j)
            st = c.statistics
            if "." not in c.path_in_schema and st is not None and st.has_null_count \
                    and st.null_count == 0:
                here.add(c.path_in_schema)
        out = here if out is None else out & here
        if not out:
            break
    return out or set()


def file_column_names(schema: pa.Schema, attrs) -> list[str]:
    """The distinct file columns (of the file schema ``schema``) that reading ``attrs`` decodes,
    in attribute order."""
    fcols = _file_columns(schema, attrs)
    return list(dict.fromkeys(fcols[a.id][0] for a in attrs if a.id in fcols))


#: key of :func:`plan_parquet_splits`'s filter map listing the exactly applied data filters
EXACT_KEY = "\x00exact"
#: read every Parquet split row group by row group (``ParquetFile.read_row_group``, filtered by
#: kernel masks) rather than through the dataset API
ROW_GROUP_READS = True
#: read ahead / decode on extra threads: True, False, or None (auto: only when the scan runs on
#: the main thread -- a serial run or a one-task stage -- since pool workers already keep every
#: core busy, where nested decode threads measured slower)
READ_THREADS: bool | None = None


def _read_threads() -> bool:
    if READ_THREADS is not None:
        return READ_THREADS
    import threading

    t = threading.current_thread()
    return t is threading.main_thread() or t.name.startswith(_READAHEAD)


_READAHEAD = "ember-parquet-readahead"

#: key of :func:`plan_parquet_splits`'s filter map holding the row filters as kernel functions
MASK_KEY = "\x00mask"


class ParquetSplit:
    """Some row groups of one Parquet file, read as the relation's required columns."""

    __slots__ = ("path", "row_groups", "num_rows")

    def __init__(self, path: str, row_groups: list[int], num_rows: int) -> None:
        self.path = path
        self.row_groups = row_groups
        self.num_rows = num_rows


def _file_columns(schema: pa.Schema, attrs) -> dict[int, tuple[str, pa.DataType]]:
    by_lower = {n.lower(): (n, schema.field(n).type) for n in schema.names}
    return {a.id: by_lower[a.name.lower()] for a in attrs if a.name.lower() in by_lower}


#: ``{attr id: (file column name, file type)}`` of the attributes found in a file's schema
file_columns_of = _file_columns


def parquet_scan_supported(rel) -> bool:
    """Whether :func:`plan_parquet_splits` can read ``rel`` (Parquet without Hive partition
    columns)."""
    opts = _options(rel.options)
    return rel.format.lower() == "parquet" and not opts.get(PARTITION_OPTION.lower()) \
        and bool(rel.paths)


def plan_parquet_splits(rel, attrs, data_filters, parallelism: int,
                        max_bytes: int = MAX_SPLIT_BYTES, min_bytes: int = MIN_SPLIT_BYTES
                        ) -> tuple[list[ParquetSplit], Any]:
    """The splits reading ``attrs`` of ``rel``: row groups whose statistics may satisfy
    ``data_filters``, grouped into about ``2 * parallelism`` contiguous splits (at least
    ``min_bytes``, at most ``max_bytes`` each: ``spark.sql.files.openCostInBytes`` and
    ``maxPartitionBytes``).  Also returns the per-path row
    filter (a ``pyarrow.compute.Expression`` or None) :func:`read_parquet_split` applies, and
    under ``EXACT_KEY`` the data filters every path's row filter applies exactly (a Filter above
    the scan need not evaluate those again), and under ``MASK_KEY`` ``{path: the same row filter
    as a kernel function`` (``to_arrow_filter(..., kernel=True)``) ``or None}``.

    ``IS NOT NULL`` of a column whose Parquet statistics show no NULL in any row group of a file
    is TRUE on every row there: it counts as applied exactly without being evaluated."""
    units: list[tuple[str, int, int, int]] = []  # path, row group, rows, bytes
    filters: dict[str, Any] = {}
    masks: dict[str, Any] = {}
    exact: set[int] | None = None  # positions of the conjuncts applied exactly on every path
    for path in rel.paths:
        try:
            footer = parquet_footer(path)
            frag, schema = footer.fragment, footer.schema
        except FileNotFoundError as e:
            raise ExecutionError(f"Path does not exist: {e}", error_class="PATH_NOT_FOUND",
                                 parameters={"path": str(e)}) from e
        cols = _file_columns(schema, rel.attrs)
        parts, here = [], set()
        null_free: set[str] | None = None
        for i, c in enumerate(data_filters):
            f = to_arrow_filter(c, cols, partial=False)
            if f is not None:
                here.add(i)
                if _is_not_null_of(c, cols):
                    if null_free is None:
                        null_free = footer.null_free
                    if cols[c.child.id][0] in null_free:
                        continue  # TRUE on every row of this file: nothing to evaluate
                kf = to_arrow_filter(c, cols, partial=False, kernel=True)
            else:
                f = to_arrow_filter(c, cols)
                kf = to_arrow_filter(c, cols, kernel=True) if f is not None else None
            if f is not None:
                parts.append((f, kf))
        flt = kflt = None
        for f, kf in parts:
            flt = f if flt is None else flt & f
            kflt = kf if kflt is None else _KernelBuild.and_(kflt, kf)
        filters[path] = flt
        masks[path] = kflt
        groups = None
        if flt is not None:
            try:
                groups = [(g.row_groups[0].id, g.row_groups[0].num_rows,
                           g.row_groups[0].total_byte_size)
                          for g in frag.split_by_row_group(flt, schema=schema)]
            except (pa.ArrowInvalid, pa.ArrowNotImplementedError, pa.ArrowTypeError):
                filters[path] = masks[path] = None
                here = set()
        exact = here if exact is None else exact & here
        if groups is None:
            md = footer.metadata
            groups = [(i, md.row_group(i).num_rows, md.row_group(i).total_byte_size)
                      for i in range(md.num_row_groups)]
        units.extend((path, g, r, b) for g, r, b in groups)
    filters[EXACT_KEY] = tuple(data_filters[i] for i in sorted(exact or ()))
    filters[MASK_KEY] = masks
    return split_units(units, parallelism, max_bytes=max_bytes, min_bytes=min_bytes), filters


def split_units(units: Sequence[tuple[str, int, int, int]], parallelism: int,
                count: int | None = None, max_bytes: int = MAX_SPLIT_BYTES,
                min_bytes: int = MIN_SPLIT_BYTES) -> list[ParquetSplit]:
    """Row groups ``(path, row group, rows, bytes)`` grouped into about ``2 * parallelism``
    contiguous splits of one file each (at least ``min_bytes``, at most ``max_bytes`` each:
    ``spark.sql.files.openCostInBytes`` and ``maxPartitionBytes``), or into about ``count``
    splits of equal bytes when given."""
    total = sum(u[3] for u in units)
    if count is not None:
        target = max(1, -(-total // max(1, count)))
    else:
        target = min(max_bytes, max(min_bytes, -(-total // max(1, 2 * parallelism))))
    splits: list[ParquetSplit] = []
    cur: ParquetSplit | None = None
    held = 0
    for path, g, r, b in units:
        if cur is None or cur.path != path or (held + b > target and cur.row_groups):
            cur = ParquetSplit(path, [], 0)
            splits.append(cur)
            held = 0
        cur.row_groups.append(g)
        cur.num_rows += r
        held += b
    return splits


def read_parquet_split(split: ParquetSplit, attrs, row_filter, batch_size: int,
                       fetch: Callable[[str, int, list[str]], pa.Table] | None = None,
                       row_mask: Callable[[pa.Table], Any] | None = None,
                       runtime_mask: Callable[[pa.Table], Any] | None = None
                       ) -> Iterator[pa.RecordBatch]:
    """Batches of ``attrs`` (typed like the attributes) from ``split``'s row groups, rows
    failing ``row_filter`` (see :func:`to_arrow_filter`) already dropped.

    With ``fetch(path, row_group, file_columns) -> pa.Table`` (the run's shared decoded columns,
    ``ember.runtime.local.scan_cache``), the row groups are read one by one through it and the
    row filter applied to the fetched table (by ``row_mask``, the same filter as a kernel
    function, when given); otherwise through the dataset API.  ``runtime_mask`` (a function of
    the fetched file columns giving the rows to keep, or None for all; the local runtime's
    runtime join filters) drops rows first."""

    schema = schema_of(attrs)
    size = max(1, batch_size)
    if not attrs:
        n = split.num_rows
        if row_filter is not None:  # pragma: no cover - a filter references columns
            n = _fragment(split.path, split.row_groups).count_rows(filter=row_filter)
        for s in range(0, n, size):
            yield make_batch([], schema, min(size, n - s))
        return
    file_schema = parquet_footer(split.path).schema
    fcols = _file_columns(file_schema, attrs)
    names = [fcols[a.id][0] for a in attrs if a.id in fcols]
    wanted = list(dict.fromkeys(names))
    if fetch is None and ROW_GROUP_READS:
        fetch = _file_fetch(split.path)
    if fetch is not None:
        batches = _fetched_batches(split, fetch, wanted, row_filter, row_mask, size,
                                   file_schema, runtime_mask)
    else:
        frag = _fragment(split.path, split.row_groups)
        batches = frag.to_batches(columns=wanted, filter=row_filter, batch_size=size,
                                  use_threads=True)
        if runtime_mask is not None:
            batches = (_masked(pa.Table.from_batches([b]), runtime_mask).combine_chunks()
                       .to_batches()[0] if b.num_rows else b for b in batches)
    for b in batches:
        n = b.num_rows
        if not n:
            continue
        cols = []
        for a, f in zip(attrs, schema):
            c = fcols.get(a.id)
            cols.append(conform(b.column(c[0]), f.type) if c is not None
                        else pa.nulls(n, f.type))
        yield make_batch(cols, schema, n)


#: a string column whose chunks all have a dictionary page and average at most this many
#: uncompressed bytes per value (dictionary included) is decoded as an Arrow dictionary and then
#: cast to plain strings -- 2-3x cheaper than Arrow's direct decode of dictionary-encoded pages.
#: PLAIN-encoded strings (a dictionary fallback) take at least 4 bytes per non-NULL value (the
#: length prefix) and are decoded directly: hashing them into a dictionary would be slower.
DICT_BYTES_PER_VALUE = 3


def dictionary_columns(md: pq.FileMetaData, schema: pa.Schema) -> list[str]:
    """The top-level string/binary columns of a file read faster as dictionaries (see
    ``DICT_BYTES_PER_VALUE``)."""
    if md.num_row_groups == 0:
        return []
    out = []
    for j in range(md.num_columns):
        c0 = md.row_group(0).column(j)
        name = c0.path_in_schema
        if "." in name or name not in schema.names:
            continue
        t = schema.field(name).type
        if not (pa.types.is_string(t) or pa.types.is_large_string(t) or pa.types.is_binary(t)
                or pa.types.is_large_binary(t)):
            continue
        for i in range(md.num_row_groups):
            c = md.row_group(i).column(j)
            if not c.has_dictionary_page or \
                    c.total_uncompressed_size > DICT_BYTES_PER_VALUE * max(1, c.num_values):
                break
        else:
            out.append(name)
    return out


def decode_row_group(f: pq.ParquetFile, g: int, cols: list[str],
                     as_dict: dict[str, pa.DataType]) -> pa.Table:
    """Row group ``g`` of ``f`` as the file columns ``cols``; ``f`` was opened with
    ``read_dictionary=as_dict``, and those columns stay Arrow dictionaries: the reader filters
    first and decodes only the surviving rows (:func:`plain_columns`)."""
    return f.read_row_group(g, columns=cols, use_threads=_read_threads())


def plain_columns(t: pa.Table, file_schema: pa.Schema | None = None) -> pa.Table:
    """``t`` with its dictionary columns (:func:`decode_row_group`) cast back to their type in
    ``file_schema`` (their value type when not given or not found there)."""
    for i, c in enumerate(t.column_names):
        typ = t.column(i).type
        if pa.types.is_dictionary(typ):
            j = file_schema.get_field_index(c) if file_schema is not None else -1
            target = file_schema.field(j).type if j >= 0 else typ.value_type
            t = t.set_column(i, c, t.column(i).cast(target))
    return t


def open_parquet(path: str, md: pq.FileMetaData | None = None,
                 as_dict: dict[str, pa.DataType] | None = None
                 ) -> tuple[pq.ParquetFile, dict[str, pa.DataType]]:
    """``path`` opened for :func:`decode_row_group` (pre-buffered reads, the dictionary
    columns ``as_dict`` -- by default :func:`dictionary_columns` -- with their file types; the
    footer from :func:`parquet_footer` unless ``md`` is given)."""
    if as_dict is None:
        footer = parquet_footer(path)
        md, as_dict = footer.metadata, footer.as_dict
    return pq.ParquetFile(path, metadata=md, pre_buffer=True,
                          read_dictionary=sorted(as_dict) or None), as_dict


def _file_fetch(path: str) -> Callable[[str, int, list[str]], pa.Table]:
    """A ``fetch`` decoding row groups of ``path`` directly (one open file per split)."""
    f, as_dict = open_parquet(path)
    return lambda _p, g, cols: decode_row_group(f, g, cols, as_dict)


def _masked(t: pa.Table, mask_of: Callable[[pa.Table], Any]) -> pa.Table:
    """``t``'s rows ``mask_of(t)`` keeps (every row when it answers None)."""
    m = mask_of(t)
    return t if m is None else t.filter(m)


def _fetched_batches(split: ParquetSplit, fetch, wanted: list[str], row_filter, row_mask,
                     size: int, file_schema: pa.Schema | None = None,
                     runtime_mask: Callable[[pa.Table], Any] | None = None
                     ) -> Iterator[pa.RecordBatch]:
    """The split's row groups through ``fetch``, filtered and sliced.  On the main thread (a
    serial run, a one-task stage: a core is otherwise idle) the next row group is decoded and
    filtered on a helper thread while the caller consumes the current one, as the dataset API's
    read-ahead did (with Arrow's decode threads); pool workers decode inline."""
    import threading

    groups = split.row_groups

    def load(g: int) -> pa.Table:
        t = fetch(split.path, g, wanted)
        if runtime_mask is not None:
            t = _masked(t, runtime_mask)
        if row_filter is not None:
            t = _filter_table(t, row_filter, row_mask, file_schema)
        # after the filter: only the surviving rows are decoded
        return plain_columns(t, file_schema)

    def tables() -> Iterator[pa.Table]:
        if len(groups) < 2 or not _read_threads() or threading.current_thread().name.startswith(
                _READAHEAD):
            for g in groups:
                yield load(g)
            return
        from concurrent.futures import ThreadPoolExecutor

        ex = ThreadPoolExecutor(1, thread_name_prefix=_READAHEAD)
        try:
            nxt = ex.submit(load, groups[0])
            for i in range(len(groups)):
                t = nxt.result()
                if i + 1 < len(groups):
                    nxt = ex.submit(load, groups[i + 1])
                yield t
        finally:
            ex.shutdown(wait=False, cancel_futures=True)

    for t in tables():
        yield from t.to_batches(max_chunksize=size)


def _filter_table(t: pa.Table, row_filter, row_mask,
                  file_schema: pa.Schema | None = None) -> pa.Table:
    """``t``'s rows selected by the row filter: the kernel mask when there is one (a table or
    array filter, no Acero plan), else the dataset expression."""
    if row_mask is not None:
        errors = (pa.ArrowInvalid, pa.ArrowNotImplementedError, pa.ArrowTypeError)
        try:
            mask = row_mask(t)
        except errors:  # a kernel without a dictionary variant: decode and retry
            t = plain_columns(t, file_schema)
            try:
                mask = row_mask(t)
            except errors:
                mask = None
        if mask is not None:
            if isinstance(mask, pa.ChunkedArray) and mask.num_chunks == 1:
                mask = mask.chunk(0)
            if isinstance(mask, pa.Array) and not mask.null_count \
                    and mask.true_count == t.num_rows:
                return t
            return t.filter(mask)  # NULL: not selected
    return plain_columns(t, file_schema).filter(row_filter)
