"""``df.write``: PySpark's ``DataFrameWriter`` for files (paths; tables are written through
``saveAsTable`` / ``insertInto``, which build on the same command).

``save(path)`` builds the command Spark's ``DataSource.planForWriting`` builds -- an
``InsertIntoHadoopFsRelationCommand`` over the DataFrame's analyzed plan, its partition columns
resolved against the plan's output -- and runs it (:meth:`QueryExecution.execute_write`):

>>> df.write.mode("overwrite").partitionBy("day").parquet("/tmp/out")     # doctest: +SKIP
>>> df.write.format("csv").option("header", True).save("/tmp/csv")        # doctest: +SKIP
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any

from ember import types as T
from ember.conf import CASE_SENSITIVE, DEFAULT_DATA_SOURCE, PARTITION_OVERWRITE_MODE
from ember.errors import AnalysisError, UnsupportedError
from ember.execution.file_commit import JobOutcome
from ember.expressions.common import sql_type
from ember.execution.write import WRITE_FORMATS, check_writable
from ember.plans.logical.writes import (PARTITION_COLUMNS_OPTION, InsertIntoHadoopFsRelationCommand,
                                        SaveMode, partition_columns_option)
from ember.query_execution import QueryExecution
from ember.streaming.sinks.file import uri_to_path
from ember.table_writes import insert_into, save_as_table

if TYPE_CHECKING:  # pragma: no cover
    from ember.dataframe import DataFrame

__all__ = ["DataFrameWriter", "insert_into_path", "path_write_command"]


def _opt_str(v: Any) -> str:
    return str(v).lower() if isinstance(v, bool) else str(v)


class DataFrameWriter:
    """PySpark's ``DataFrameWriter`` (``df.write``): ``format``, ``mode``, ``option(s)``,
    ``partitionBy``, then ``save`` / ``parquet`` / ``csv`` / ``json`` / ``text``."""

    def __init__(self, df: "DataFrame") -> None:
        self._df = df
        self._format: str | None = None
        self._mode: SaveMode = SaveMode.ERROR_IF_EXISTS
        self._options: dict[str, str] = {}
        self._partition_by: list[str] | None = None

    def format(self, source: str) -> "DataFrameWriter":
        self._format = source
        return self

    def mode(self, saveMode: str | None) -> "DataFrameWriter":  # noqa: N803 - PySpark's name
        """``error`` / ``errorifexists`` (the default), ``append``, ``overwrite``, ``ignore``."""
        if saveMode is not None:
            self._mode = SaveMode.parse(saveMode)
        return self

    def option(self, key: str, value: Any) -> "DataFrameWriter":
        self._options[str(key)] = _opt_str(value)
        return self

    def options(self, **options: Any) -> "DataFrameWriter":
        for k, v in options.items():
            self.option(k, v)
        return self

    def partitionBy(self, *cols: str | list[str]) -> "DataFrameWriter":  # noqa: N802
        if len(cols) == 1 and isinstance(cols[0], (list, tuple)):
            cols = tuple(cols[0])
        self._partition_by = [str(c) for c in cols]
        return self

    def _set_options(self, **options: Any) -> None:
        for k, v in options.items():
            if v is not None:
                self.option(k, v)

    def _apply(self, format: str | None, mode: str | None, partition_by: Any,  # noqa: A002
               options: dict[str, Any]) -> None:
        """The settings an action's arguments give (``save(path, format, mode, ...)``)."""
        if format is not None:
            self.format(format)
        self.mode(mode)
        if partition_by is not None:
            self.partitionBy(partition_by)
        self._set_options(**options)

    # -- actions -------------------------------------------------------------------------------
    def save(self, path: str | None = None, format: str | None = None,  # noqa: A002
             mode: str | None = None, partitionBy: Any = None,  # noqa: N803
             **options: Any) -> None:
        self._apply(format, mode, partitionBy, options)
        if path is None:
            path = next((v for k, v in self._options.items() if k.lower() == "path"), None)
        if path is None:
            raise AnalysisError("'path' is not specified.", error_class="_LEGACY_ERROR_TEMP_2047")
        session = self._df.sparkSession
        fmt = (self._format or session.sql_conf.get(DEFAULT_DATA_SOURCE)).lower()
        insert_into_path(self._df, str(path), fmt, self._mode, self._options,
                         self._partition_by or [])

    def parquet(self, path: str, mode: str | None = None, partitionBy: Any = None,  # noqa: N803
                compression: str | None = None) -> None:
        self.save(path, "parquet", mode, partitionBy, compression=compression)

    def json(self, path: str, mode: str | None = None, compression: str | None = None,
             dateFormat: str | None = None, timestampFormat: str | None = None,  # noqa: N803
             lineSep: str | None = None, encoding: str | None = None,  # noqa: N803
             ignoreNullFields: Any = None) -> None:  # noqa: N803
        self.save(path, "json", mode, None, compression=compression, dateFormat=dateFormat,
                  timestampFormat=timestampFormat, lineSep=lineSep, encoding=encoding,
                  ignoreNullFields=ignoreNullFields)

    def csv(self, path: str, mode: str | None = None, compression: str | None = None,
            sep: str | None = None, quote: str | None = None, escape: str | None = None,
            header: Any = None, nullValue: str | None = None,  # noqa: N803
            escapeQuotes: Any = None, quoteAll: Any = None,  # noqa: N803
            dateFormat: str | None = None, timestampFormat: str | None = None,  # noqa: N803
            ignoreLeadingWhiteSpace: Any = None,  # noqa: N803
            ignoreTrailingWhiteSpace: Any = None,  # noqa: N803
            charToEscapeQuoteEscaping: str | None = None,  # noqa: N803
            encoding: str | None = None, emptyValue: str | None = None,  # noqa: N803
            lineSep: str | None = None) -> None:  # noqa: N803
        self.save(path, "csv", mode, None, compression=compression, sep=sep, quote=quote,
                  escape=escape, header=header, nullValue=nullValue, escapeQuotes=escapeQuotes,
                  quoteAll=quoteAll, dateFormat=dateFormat, timestampFormat=timestampFormat,
                  ignoreLeadingWhiteSpace=ignoreLeadingWhiteSpace,
                  ignoreTrailingWhiteSpace=ignoreTrailingWhiteSpace,
                  charToEscapeQuoteEscaping=charToEscapeQuoteEscaping, encoding=encoding,
                  emptyValue=emptyValue, lineSep=lineSep)

    def saveAsTable(self, name: str, format: str | None = None,  # noqa: N802,A002
                    mode: str | None = None, partitionBy: Any = None,  # noqa: N803
                    **options: Any) -> None:
        """Write the rows into catalog table ``name`` (:func:`ember.table_writes.save_as_table`)."""
        self._apply(format, mode, partitionBy, options)
        save_as_table(self._df, name, self._format, self._mode, self._options,
                      self._partition_by)

    def insertInto(self, tableName: str, overwrite: bool | None = None) -> None:  # noqa: N802,N803
        """``INSERT [OVERWRITE]`` the rows into ``tableName`` by position
        (:func:`ember.table_writes.insert_into`); ``overwrite`` None: the writer's mode."""
        if overwrite is None:
            overwrite = self._mode is SaveMode.OVERWRITE
        insert_into(self._df, tableName, overwrite, self._partition_by)

    def text(self, path: str, compression: str | None = None,
             lineSep: str | None = None) -> None:  # noqa: N803
        self.save(path, "text", None, None, compression=compression, lineSep=lineSep)


def _target_path(path: str) -> str:
    """The absolute local directory of ``path`` (a ``file:`` URI too); another URI
    (``hdfs://``, ``s3a://``) as it is, for the Spark runtime."""
    if path.startswith("file:"):
        return os.path.abspath(uri_to_path(path))
    if "://" in path:
        return path
    return os.path.abspath(os.path.expanduser(path))


def _partition_attrs(query: Any, names: list[str], case_sensitive: bool) -> tuple[Any, ...]:
    """``partitionBy``'s names resolved against ``query``'s output (Spark's
    ``PartitioningUtils.validatePartitionColumn``)."""
    out = []
    seen: set[str] = set()
    for name in names:
        key = name if case_sensitive else name.lower()
        if key in seen:
            raise AnalysisError(f"The column `{key}` already exists. Choose another name or "
                                "rename the existing column.", error_class="COLUMN_ALREADY_EXISTS",
                                parameters={"columnName": f"`{key}`"})
        seen.add(key)
        found = [a for a in query.output
                 if (a.name if case_sensitive else a.name.lower()) == key]
        if not found:
            schema = ",".join(f"{a.name}:{a.data_type.simple_string()}" for a in query.output)
            raise AnalysisError(f"Partition column `{name}` not found in schema struct<{schema}>.",
                                error_class="_LEGACY_ERROR_TEMP_1155",
                                parameters={"partColumn": name})
        if isinstance(found[0].data_type, (T.ArrayType, T.StructType)):
            shown = sql_type(found[0].data_type)
            raise AnalysisError(f"Cannot use {shown} for partition column.",
                                error_class="INVALID_PARTITION_COLUMN_DATA_TYPE",
                                parameters={"type": shown})
        out.append(found[0])
    if out and len(out) == len(query.output):
        raise AnalysisError("Cannot use all columns for partition columns.",
                            error_class="ALL_PARTITION_COLUMNS_NOT_ALLOWED")
    return tuple(out)


def insert_into_path(df: "DataFrame", path: str, fmt: str, mode: SaveMode,
                     options: dict[str, str], partition_by: list[str]) -> JobOutcome | None:
    """Write ``df``'s rows under ``path`` (Spark's ``DataSource.planForWriting`` +
    ``InsertIntoHadoopFsRelationCommand.run``)."""
    cmd = path_write_command(df, path, fmt, mode, options, partition_by)
    return QueryExecution(df.sparkSession, cmd).execute_write()


def path_write_command(df: "DataFrame", path: str, fmt: str, mode: SaveMode | str,
                       options: dict[str, str], partition_by: list[str]
                       ) -> InsertIntoHadoopFsRelationCommand:
    """The command ``df.write`` runs (Spark's ``DataSource.planForWriting``): ``df``'s analyzed
    plan, the partition columns resolved against it, the options as Spark shows them."""
    mode = SaveMode.parse(mode)
    if fmt not in WRITE_FORMATS:
        if fmt in ("orc", "avro", "xml"):
            raise UnsupportedError(f"Ember writes {', '.join(WRITE_FORMATS)} files, not {fmt}.")
        raise AnalysisError(
            f"Failed to find the data source: {fmt}. Make sure the provider name is correct and "
            "the package is properly registered and compatible with your Spark version.",
            error_class="DATA_SOURCE_NOT_FOUND", parameters={"provider": fmt})
    session = df.sparkSession
    conf = session.sql_conf
    query = df._qe.analyzed
    if query.is_streaming:
        raise AnalysisError("'write' can not be called on streaming Dataset/DataFrame.",
                            error_class="CALL_ON_STREAMING_DATASET_UNSUPPORTED",
                            parameters={"methodName": "write"})
    parts = _partition_attrs(query, partition_by, bool(conf.get(CASE_SENSITIVE)))
    opts = {k.lower(): v for k, v in options.items() if k.lower() != "path"}
    part_ids = {a.id for a in parts}
    data = [a for a in query.output if a.id not in part_ids]
    check_writable(fmt, tuple(a.name for a in data), tuple(a.data_type for a in data), opts)
    shown = [(k, v) for k, v in options.items() if k.lower() != "path"]
    if parts:
        shown.append((PARTITION_COLUMNS_OPTION, partition_columns_option(partition_by)))
    shown.append(("path", path))
    overwrite_mode = opts.get("partitionoverwritemode", conf.get(PARTITION_OVERWRITE_MODE))
    dynamic = (mode is SaveMode.OVERWRITE and bool(parts)
               and str(overwrite_mode).upper() == "DYNAMIC")
    target = _target_path(path)
    return InsertIntoHadoopFsRelationCommand(
        target, (), False, parts, fmt, tuple(shown), query,
        mode, None, tuple(a.name for a in query.output), dynamic)
