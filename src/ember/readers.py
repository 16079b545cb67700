"""File sources: ``session.read`` (PySpark's DataFrameReader) and ``CREATE TEMP VIEW ... USING``.

Both build a :class:`~ember.plans.logical.nodes.FileRelation` whose attributes come from the files'
schema: Parquet's own schema, or for CSV the header (``header``, else ``_c0``, ``_c1`` ...) and,
with ``inferSchema``, types inferred from the data the way Spark does for the common cases
(``int`` when every value fits 32 bits, else ``bigint``; ``double``; ``boolean``; ``date``;
``timestamp``; ``string`` otherwise). The executor (``ember.execution.scan``) reads the files and
casts the columns to those types.

>>> df = session.read.csv("people.csv", header=True, inferSchema=True)   # doctest: +SKIP
>>> df = session.read.format("parquet").load("orders/")                  # doctest: +SKIP
"""

from __future__ import annotations

import glob
import os
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import pyarrow as pa

from ember import types as T
from ember.errors import AnalysisError, UnsupportedError
from ember.expressions.base import AttributeReference
from ember.plans.logical.nodes import FileRelation

if TYPE_CHECKING:  # pragma: no cover
    from ember.dataframe import DataFrame
    from ember.session import Session

__all__ = ["DataFrameReader", "file_relation", "infer_file_schema", "expand_paths"]

_FORMATS = ("parquet", "csv")


def _opt_str(v: Any) -> str:
    return str(v).lower() if isinstance(v, bool) else str(v)


def _options_dict(options: Sequence[tuple[str, str]] | dict[str, Any]) -> dict[str, str]:
    items = options.items() if isinstance(options, dict) else options
    return {str(k).lower(): _opt_str(v) for k, v in items}


def expand_paths(paths: Sequence[str], fmt: str) -> tuple[str, ...]:
    """Files of ``paths``: directories list their data files (sorted, hidden files skipped),
    globs expand; raises ``PATH_NOT_FOUND`` for a path that matches nothing."""
    out: list[str] = []
    for p in paths:
        p = os.path.expanduser(str(p))
        if os.path.isdir(p):
            files = sorted(
                os.path.join(root, f)
                for root, _dirs, names in os.walk(p)
                for f in names
                if not f.startswith((".", "_"))
            )
            out.extend(files)
        elif os.path.exists(p):
            out.append(p)
        else:
            matches = sorted(glob.glob(p))
            if not matches:
                raise AnalysisError(
                    f"Path does not exist: file:{os.path.abspath(p)}.",
                    error_class="PATH_NOT_FOUND",
                    parameters={"path": f"file:{os.path.abspath(p)}"},
                )
            out.extend(matches)
    if not out:
        raise AnalysisError(
            f"Unable to infer schema for {fmt.capitalize()}. It must be specified manually.",
            error_class="UNABLE_TO_INFER_SCHEMA",
            parameters={"format": fmt.capitalize()},
        )
    return tuple(out)


def _csv_table(paths: Sequence[str], opts: dict[str, str], infer: bool) -> pa.Table:
    import pyarrow.csv as pacsv

    header = opts.get("header", "false") == "true"
    sep = opts.get("sep", opts.get("delimiter", ","))
    tables = []
    for p in paths:
        read = pacsv.ReadOptions(autogenerate_column_names=not header)
        parse = pacsv.ParseOptions(delimiter=sep)
        if infer:
            convert = pacsv.ConvertOptions(strings_can_be_null=True, null_values=[""],
                                           quoted_strings_can_be_null=False)
        else:
            # Only the header is needed: read a small block and make every column a string.
            read.block_size = 1 << 16
            convert = pacsv.ConvertOptions()
            with pacsv.open_csv(p, read_options=read, parse_options=parse) as reader:
                schema = reader.schema
            names = schema.names if header else [f"_c{i}" for i in range(len(schema))]
            return pa.schema([pa.field(n, pa.large_string()) for n in names]).empty_table()
        t = pacsv.read_csv(p, read_options=read, parse_options=parse, convert_options=convert)
        if not header:
            t = t.rename_columns([f"_c{i}" for i in range(t.num_columns)])
        tables.append(t)
    if len(tables) == 1:
        return tables[0]
    return pa.concat_tables(tables, promote_options="permissive")


def _csv_type(col: pa.ChunkedArray) -> T.DataType:
    t = col.type
    if pa.types.is_null(t):
        return T.STRING  # Spark infers string for a column of only empty fields
    if pa.types.is_integer(t):
        import pyarrow.compute as pc

        mm = pc.min_max(col)
        lo, hi = mm["min"].as_py(), mm["max"].as_py()
        if lo is None or (T.INT.min_value <= lo and hi <= T.INT.max_value):
            return T.INT
        return T.LONG
    if pa.types.is_floating(t) or pa.types.is_decimal(t):
        return T.DOUBLE
    if pa.types.is_boolean(t):
        return T.BOOLEAN
    if pa.types.is_date(t):
        return T.DATE
    if pa.types.is_timestamp(t):
        return T.TIMESTAMP
    return T.STRING


def infer_file_schema(fmt: str, paths: Sequence[str],
                      options: Sequence[tuple[str, str]] | dict[str, Any] = ()) -> list[
                          tuple[str, T.DataType]]:
    """Column names and SQL types of the files ``paths`` (already expanded) of format ``fmt``."""
    opts = _options_dict(options)
    fmt = fmt.lower()
    if fmt == "parquet":
        import pyarrow.parquet as pq

        schema = pq.read_schema(paths[0])
        return [(f.name, T.from_arrow(f.type)) for f in schema]
    if fmt == "csv":
        infer = opts.get("inferschema", "false") == "true"
        table = _csv_table(paths, opts, infer)
        if not infer:
            return [(n, T.STRING) for n in table.column_names]
        return [(n, _csv_type(table.column(i))) for i, n in enumerate(table.column_names)]
    raise UnsupportedError(
        f"The data source '{fmt}' is not supported by Ember (supported: parquet, csv).",
        error_class="DATA_SOURCE_NOT_FOUND",
        parameters={"provider": fmt},
    )


def file_relation(fmt: str, paths: Sequence[str] | str,
                  options: Sequence[tuple[str, str]] | dict[str, Any] = ()) -> FileRelation:
    """A ``FileRelation`` over ``paths`` with attributes from the files' schema."""
    fmt = fmt.lower()
    if fmt not in _FORMATS:
        raise UnsupportedError(
            f"The data source '{fmt}' is not supported by Ember (supported: parquet, csv).",
            error_class="DATA_SOURCE_NOT_FOUND",
            parameters={"provider": fmt},
        )
    if isinstance(paths, str):
        paths = (paths,)
    files = expand_paths(paths, fmt)
    opts = _options_dict(options)
    schema = infer_file_schema(fmt, files, opts)
    attrs = tuple(AttributeReference(n, t, True) for n, t in schema)
    return FileRelation(attrs, fmt, files, tuple(sorted(opts.items())))


class DataFrameReader:
    """``session.read``: ``.parquet(path)``, ``.csv(path, header=..., inferSchema=...)``,
    ``.format(f).option(k, v).load(path)``.

    >>> session.read.option("header", True).csv("data.csv")   # doctest: +SKIP
    """

    def __init__(self, session: "Session") -> None:
        self._session = session
        self._format = "parquet"
        self._options: dict[str, str] = {}

    def format(self, source: str) -> "DataFrameReader":
        self._format = source.lower()
        return self

    def option(self, key: str, value: Any) -> "DataFrameReader":
        self._options[key.lower()] = _opt_str(value)
        return self

    def options(self, **options: Any) -> "DataFrameReader":
        for k, v in options.items():
            if v is not None:
                self.option(k, v)
        return self

    def schema(self, schema: Any) -> "DataFrameReader":
        raise UnsupportedError("DataFrameReader.schema(): user-specified schemas are not supported "
                               "yet; Ember reads the files' own schema")

    def load(self, path: str | list[str] | None = None, format: str | None = None,  # noqa: A002
             **options: Any) -> "DataFrame":
        if format is not None:
            self.format(format)
        self.options(**options)
        if path is None:
            path = self._options.get("path")
        if path is None:
            raise AnalysisError("'path' is not specified", error_class="UNABLE_TO_INFER_SCHEMA")
        paths = [path] if isinstance(path, str) else list(path)
        from ember.dataframe import DataFrame

        return DataFrame(self._session, file_relation(self._format, paths, self._options))

    def parquet(self, *paths: str, **options: Any) -> "DataFrame":
        """Read Parquet files or directories."""
        return self.format("parquet").load(list(paths), **options)

    def csv(self, path: str | list[str], schema: Any = None, sep: str | None = None,
            header: bool | str | None = None, inferSchema: bool | str | None = None,  # noqa: N803
            **options: Any) -> "DataFrame":
        """Read CSV files (Spark's defaults: no header, every column a string)."""
        if schema is not None:
            self.schema(schema)
        self.options(sep=sep, header=header, inferSchema=inferSchema, **options)
        return self.format("csv").load(path)
