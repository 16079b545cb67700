"""File relations: the :class:`~ember.plans.logical.nodes.FileRelation` over some files, their
schema (Parquet's own; CSV's header and, with ``inferSchema``, Spark's inferred types; JSON's
``JsonInferSchema``) and Hive-style partition columns (``ember.execution.file_index``).
``session.read`` (:mod:`ember.readers`), ``CREATE TEMP VIEW ... USING``, the catalog's tables
and the streaming file source build their relations here.

This module knows no DataFrame, so the catalog commands (which build the relation of a table)
and the table writers (which ``DataFrame`` imports) can import it at module level.

>>> rel = file_relation("parquet", "orders/")                      # doctest: +SKIP
"""

from __future__ import annotations

import glob
import os
from collections.abc import Sequence
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from ember import types as T
from ember.errors import AnalysisError, UnsupportedError
from ember.expressions.base import AttributeReference
from ember.plans.logical.nodes import FileRelation
from ember.analysis.rules.resolve_sql_on_file import register_file_source
from ember.conf import COLUMN_NAME_OF_CORRUPT_RECORD, PARTITION_TYPE_INFERENCE
from ember.execution.file_index import BASE_PATH_OPTION, discover_partitions
from ember.execution.json_source import check_corrupt_column, infer_json_schema
from ember.execution.scan import read_csv_strings, PARTITION_OPTION
from ember.execution.text_source import TEXT_SCHEMA, check_text_schema
from ember.expressions.csv_functions import csv_value_types, merge_csv_types
from ember.streaming.sinks.file import committed_files
from ember.execution.file_commit import recover

__all__ = ["file_relation", "infer_file_schema", "expand_paths", "option_string"]

_FORMATS = ("parquet", "csv", "json", "text")


def option_string(v: Any) -> str:
    return str(v).lower() if isinstance(v, bool) else str(v)


def _options_dict(options: Sequence[tuple[str, str]] | dict[str, Any]) -> dict[str, str]:
    items = options.items() if isinstance(options, dict) else options
    return {str(k).lower(): option_string(v) for k, v in items}


def _hidden(name: str) -> bool:
    """Spark's filter of data files: names starting with ``_`` or ``.`` are metadata (``_SUCCESS``,
    ``.crc`` files), except ``_``-names holding ``=`` (partition directories)."""
    return name.startswith(".") or (name.startswith("_") and "=" not in name)


def expand_paths(paths: Sequence[str], fmt: str, must_exist: bool = True) -> tuple[str, ...]:
    """Files of ``paths``: directories list their data files recursively (sorted; hidden files
    and directories skipped), globs expand; raises ``PATH_NOT_FOUND`` for a path that matches
    nothing and (if ``must_exist``) ``UNABLE_TO_INFER_SCHEMA`` when there are no files."""
    out: list[str] = []
    for p in paths:
        p = os.path.expanduser(str(p))
        recover(p)  # finish or undo a write whose process died (ember.execution.file_commit)
        if os.path.isdir(p):
            files = []
            for root, dirs, names in os.walk(p):
                dirs[:] = sorted(d for d in dirs if not _hidden(d))
                files.extend(os.path.join(root, f) for f in names if not _hidden(f))
            out.extend(sorted(files))
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
            for m in matches:
                out.extend(expand_paths([m], fmt, must_exist=False) if os.path.isdir(m) else [m])
    if not out and must_exist:
        raise AnalysisError(
            f"Unable to infer schema for {fmt.upper() if fmt == 'csv' else fmt.capitalize()}. "
            "It must be specified manually.",
            error_class="UNABLE_TO_INFER_SCHEMA",
            parameters={"format": fmt.upper() if fmt == "csv" else fmt.capitalize()},
        )
    return tuple(out)


def _csv_schema(paths: Sequence[str], opts: dict[str, str]) -> list[tuple[str, T.DataType]]:
    names, table, _malformed = read_csv_strings(paths, opts)
    if opts.get("inferschema", "false") != "true":
        return [(n, T.STRING) for n in names]
    out = []
    for n, col in zip(names, table.columns):
        values = pc.unique(col.drop_null())
        out.append((n, merge_csv_types(csv_value_types(values))))
    return out


# -- Hive-style partition directories ----------------------------------------------------------


def _partition_schema(roots: Sequence[str], files: Sequence[str]) -> list[tuple[str, T.DataType]]:
    """Partition columns of ``files`` under the directories ``roots`` (see
    ``ember.execution.file_index.discover_partitions``)."""
    return discover_partitions(roots, files)


def _parquet_schema(path: str) -> list[tuple[str, T.DataType]]:
    """Columns of a Parquet file as Spark's ``ParquetToSparkSchemaConverter`` types them: an
    INT96 column (Spark's default ``outputTimestampType``) is a TIMESTAMP (an instant), an
    INT64 timestamp with ``isAdjustedToUTC=false`` a TIMESTAMP_NTZ
    (``spark.sql.parquet.inferTimestampNTZ.enabled``, on by default); Arrow reads both as
    timestamps without a zone."""
    file = pq.ParquetFile(path)
    int96 = {c.path.split(".")[0] for c in (file.schema.column(i)
                                             for i in range(len(file.schema)))
             if c.physical_type == "INT96"}
    return [(f.name, T.TIMESTAMP if f.name in int96 and pa.types.is_timestamp(f.type)
             else T.from_arrow(f.type)) for f in file.schema_arrow]


def infer_file_schema(fmt: str, paths: Sequence[str],
                      options: Sequence[tuple[str, str]] | dict[str, Any] = ()) -> list[
                          tuple[str, T.DataType]]:
    """Column names and SQL types of the files ``paths`` (already expanded) of format ``fmt``."""
    opts = _options_dict(options)
    fmt = fmt.lower()
    if fmt == "parquet":

        return _parquet_schema(paths[0])
    if fmt == "csv":
        return _csv_schema(paths, opts)
    if fmt == "json":
        return infer_json_schema(paths, opts)
    if fmt == "text":
        return list(TEXT_SCHEMA)
    raise UnsupportedError(
        f"The data source '{fmt}' is not supported by Ember (supported: parquet, csv, json, "
        "text).",
        error_class="DATA_SOURCE_NOT_FOUND",
        parameters={"provider": fmt},
    )


def _sink_output_files(paths: Sequence[str]) -> tuple[str, ...] | None:
    """The committed files of a streaming file sink's output directory (a single directory with
    a ``_spark_metadata`` log, read as Spark's ``MetadataLogFileIndex`` does), else None."""
    if len(paths) != 1:
        return None

    files = committed_files(os.path.expanduser(str(paths[0])))
    return None if files is None else tuple(sorted(files))


def file_relation(fmt: str, paths: Sequence[str] | str,
                  options: Sequence[tuple[str, str]] | dict[str, Any] = (),
                  schema: T.StructType | None = None, conf: Any = None) -> FileRelation:
    """A ``FileRelation`` over ``paths`` with attributes from ``schema`` (a user-specified
    schema, as ``DataFrameReader.schema``) or else from the files' schema, followed by the
    partition columns of Hive-style ``key=value`` directories (``ember.execution.file_index``;
    a partition column that is also a data column keeps the data column's place, as in
    Spark's ``HadoopFsRelation``). Every attribute is nullable, as Spark reports for file
    sources. ``conf``: the session's ``SQLConf`` (partition type inference, the default
    corrupt-record column name)."""

    fmt = fmt.lower()
    if fmt not in _FORMATS:
        raise UnsupportedError(
            f"The data source '{fmt}' is not supported by Ember (supported: parquet, csv, json, "
            "text).",
            error_class="DATA_SOURCE_NOT_FOUND",
            parameters={"provider": fmt},
        )
    if isinstance(paths, str):
        paths = (paths,)
    opts = _options_dict(options)
    opts.pop(PARTITION_OPTION.lower(), None)
    files = _sink_output_files(paths)
    if files is None:
        files = expand_paths(paths, fmt, must_exist=schema is None and fmt != "text")
    elif not files and schema is None:
        expand_paths((), fmt)  # UNABLE_TO_INFER_SCHEMA, as for an empty directory
    if fmt == "json" and "columnnameofcorruptrecord" not in opts:
        opts["columnnameofcorruptrecord"] = COLUMN_NAME_OF_CORRUPT_RECORD.read(conf)
    parts = discover_partitions(paths, files, opts.get(BASE_PATH_OPTION),
                                PARTITION_TYPE_INFERENCE.read(conf)) if files else []
    if schema is not None:
        cols = [(f.name, f.data_type) for f in schema.fields]
        if fmt == "text":
            check_text_schema(cols)
        if parts:  # partition columns last, with the user schema's types where it names them
            given = {n.lower(): (n, t) for n, t in cols}
            names = {n.lower() for n, _ in parts}
            cols = [c for c in cols if c[0].lower() not in names] + \
                [given.get(n.lower(), (n, t)) for n, t in parts]
    else:
        cols = infer_file_schema(fmt, files, opts)
        if parts:
            typed = {n.lower(): (n, t) for n, t in parts}
            cols = [typed.pop(c[0].lower(), c) for c in cols] + list(typed.values())
    if parts:
        opts[PARTITION_OPTION.lower()] = ",".join(n for n, _ in parts)
    attrs = tuple(AttributeReference(n, t, True) for n, t in cols)
    if fmt == "json":
        check_corrupt_column(attrs, opts)
    return FileRelation(attrs, fmt, files, tuple(sorted(opts.items())))


register_file_source(file_relation)
