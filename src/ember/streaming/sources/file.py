"""The file source (Spark's ``FileStreamSource``): a directory (or glob) of Parquet, CSV or JSON
files read as they appear.

Each ``latest_offset()`` lists the files (hidden ``_``/``.`` names skipped, sub-directories walked;
a directory written by Ember's or Spark's file sink is listed through its ``_spark_metadata`` log),
sorted by modification time then name (``latestFirst``: newest first), keeps the files not seen
before and not older than ``maxFileAge`` relative to the newest file seen (Spark's
``SeenFilesMap``), takes at most ``maxFilesPerTrigger`` files (or ``maxBytesPerTrigger`` bytes; the
files left over are kept for the next batches instead of listing again, Spark's ``maxCachedFiles`` /
``discardCachedInputRatio``), and records them as the next batch of the source metadata log
(``<checkpoint>/sources/<n>/<logOffset>``: ``v1`` then ``{"path","timestamp","batchId"}`` per file,
compacted every ``spark.sql.streaming.fileSource.log.compactInterval`` batches as Spark's
``FileStreamSourceLog``). The offset is Spark's ``{"logOffset": n}``; ``get_batch(start, end)``
reads the files of log batches ``start + 1 .. end`` with Ember's batch readers
(``ember.file_relations.file_relation`` + ``ember.execution.scan``; JSON lines through ``pyarrow.json``). A
restarted source reloads the log, so files seen once are never re-read.

Schema: required, as in Spark, unless ``spark.sql.streaming.schemaInference`` is true (then it is
inferred from the files present at start). ``cleanSource``: ``off`` (default), ``delete`` or
``archive`` (with ``sourceArchiveDir``; a file keeps its absolute path under the archive
directory) once a batch is committed. ``fileNameOnly`` identifies files by name alone. Reader
options (``header``, ``sep``, ``multiLine`` ...) pass through to the batch readers. JSON: one
object per line through ``pyarrow.json`` (date/time fields cast from text with Spark's rules);
``multiLine`` files are parsed whole by Python's ``json`` (rows converted per file, not
vectorized), as Spark reads such a file as one value.
"""

from __future__ import annotations

import dataclasses
import glob
import os
import shutil
from typing import TYPE_CHECKING, Any

import pyarrow as pa

from ember import types as T
from ember.conf import STREAM_FILE_SOURCE_LOG_COMPACT, STREAM_SCHEMA_INFERENCE
from ember.errors import AnalysisError, ExecutionError, UnsupportedError
from ember.streaming.sinks.file import (CompactibleFileStreamLog, committed_files, path_to_uri,
                                        uri_to_path)
from ember.streaming.sources.rate import time_string_as_ms
from ember.execution.scan import PARTITION_OPTION, scan_file_relation
from ember.expressions.cast import cast_array
from ember.file_relations import file_relation, expand_paths, _partition_schema

if TYPE_CHECKING:  # pragma: no cover
    from ember.session import Session

__all__ = ["FileStreamSource", "FileStreamSourceLog", "SeenFilesMap"]

_FORMATS = ("parquet", "csv", "json")
_LONG_MAX = (1 << 63) - 1


class FileStreamSourceLog(CompactibleFileStreamLog):
    """``<checkpoint>/sources/<n>``: the files of each source batch (entries carry ``batchId``,
    so a compaction file's own batch is the entries with that id)."""

    def batch(self, batch_id: int) -> list[dict] | None:
        got = self.get(batch_id)
        return None if got is None else [e for e in got if e["batchId"] == batch_id]


class SeenFilesMap:
    """Spark's ``SeenFilesMap``: files already taken, forgotten once older than ``max_age_ms``
    before the newest file seen (a file older than the last purge is never new again)."""

    def __init__(self, max_age_ms: int, file_name_only: bool) -> None:
        self.max_age_ms = max_age_ms
        self.file_name_only = file_name_only
        self._map: dict[str, int] = {}
        self.latest_timestamp = 0
        self.last_purge_timestamp = 0

    def _key(self, uri: str) -> str:
        return uri.rstrip("/").rsplit("/", 1)[-1] if self.file_name_only else uri

    def add(self, uri: str, timestamp: int) -> None:
        self._map[self._key(uri)] = timestamp
        self.latest_timestamp = max(self.latest_timestamp, timestamp)

    def is_new_file(self, uri: str, timestamp: int) -> bool:
        return timestamp >= self.last_purge_timestamp and self._key(uri) not in self._map

    def purge(self) -> int:
        self.last_purge_timestamp = self.latest_timestamp - self.max_age_ms
        old = [k for k, ts in self._map.items() if ts < self.last_purge_timestamp]
        for k in old:
            del self._map[k]
        return len(old)

    def __len__(self) -> int:
        return len(self._map)


def _bool_option(opts: dict[str, str], name: str, default: bool) -> bool:
    raw = opts.get(name.lower())
    if raw is None:
        return default
    if raw.strip().lower() not in ("true", "false"):
        raise AnalysisError(f"Invalid value '{raw}' for option '{name}', must be 'true' or 'false'")
    return raw.strip().lower() == "true"


def _positive_option(opts: dict[str, str], name: str) -> int | None:
    raw = opts.get(name.lower())
    if raw is None:
        return None
    try:
        v = int(raw)
    except ValueError:
        v = 0
    if v <= 0:
        raise AnalysisError(
            f"Invalid value '{raw}' for option '{name}', must be a positive integer")
    return v


def _non_negative_option(opts: dict[str, str], name: str, default: int) -> int:
    raw = opts.get(name.lower())
    if raw is None:
        return default
    try:
        v = int(raw)
    except ValueError:
        v = -1
    if v < 0:
        raise AnalysisError(f"Invalid value '{raw}' for option '{name}', must be an integer "
                            "greater than or equal to 0")
    return v


def _is_glob(path: str) -> bool:
    return any(c in path for c in "*?[{")


class FileStreamSource:
    """``session.readStream.schema(s).format("csv").option("maxFilesPerTrigger", 1).load(dir)``.

    >>> src = FileStreamSource(session, schema, {"header": "true"}, "/data/in", fmt="csv",
    ...                        metadata_path="/ckpt/sources/0")                # doctest: +SKIP
    >>> end = src.latest_offset(); src.get_batch(None, end)                  # doctest: +SKIP
    """

    def __init__(self, session: "Session", schema: T.StructType | None,
                 options: dict[str, Any] | None, path: str | None, *, fmt: str | None = None,
                 metadata_path: str | None = None) -> None:
        opts = {str(k).lower(): str(v) for k, v in (options or {}).items()}
        fmt = (fmt or opts.pop("__format", None) or opts.get("format") or "parquet").lower()
        metadata_path = metadata_path or opts.pop("__metadatapath", None)
        if fmt not in _FORMATS:
            raise UnsupportedError(
                f"The data source '{fmt}' is not supported by Ember's file stream source "
                "(supported: parquet, csv, json).",
                error_class="DATA_SOURCE_NOT_FOUND", parameters={"provider": fmt})
        if path is None:
            path = opts.get("path")
        if path is None:
            raise AnalysisError("'path' is not specified", error_class="_LEGACY_ERROR_TEMP_1139")
        for banned in ("modifiedbefore", "modifiedafter"):
            if banned in opts:
                name = "modifiedBefore" if banned == "modifiedbefore" else "modifiedAfter"
                raise AnalysisError(f"option '{name}' is not allowed in file stream sources")
        self.session = session
        self.format = fmt
        self.path = os.path.abspath(os.path.expanduser(str(path)))
        self.options = opts
        self.max_files_per_trigger = _positive_option(opts, "maxFilesPerTrigger")
        self.max_bytes_per_trigger = _positive_option(opts, "maxBytesPerTrigger")
        if self.max_files_per_trigger and self.max_bytes_per_trigger:
            raise AnalysisError("Options 'maxFilesPerTrigger' and 'maxBytesPerTrigger' can't be "
                                "both set at the same time")
        self.latest_first = _bool_option(opts, "latestFirst", False)
        self.file_name_only = _bool_option(opts, "fileNameOnly", False)
        max_age = time_string_as_ms(opts.get("maxfileage", "7d"))
        if self.latest_first and (self.max_files_per_trigger or self.max_bytes_per_trigger):
            max_age = _LONG_MAX  # Spark: maxFileAge is ignored then (SPARK-19813)
        self.max_cached_files = _non_negative_option(opts, "maxCachedFiles", 10000)
        ratio = opts.get("discardcachedinputratio", "0.2")
        try:
            self.discard_cached_ratio = float(ratio)
        except ValueError:
            self.discard_cached_ratio = -1.0
        if not 0 <= self.discard_cached_ratio <= 1:
            raise AnalysisError(f"Invalid value '{ratio}' for option 'discardCachedInputRatio', "
                                "must be a positive float between 0 and 1")
        self.clean_source = opts.get("cleansource", "off").lower()
        if self.clean_source not in ("off", "delete", "archive"):
            raise AnalysisError(f"Invalid mode for clean source option Some({opts['cleansource']})."
                                " Must be one of ARCHIVE,DELETE,OFF")
        self.archive_dir = opts.get("sourcearchivedir")
        if self.clean_source == "archive" and not self.archive_dir:
            raise AnalysisError("Archive mode must be used with 'sourceArchiveDir' option.")
        if self.archive_dir and self.clean_source == "archive":
            self.archive_dir = os.path.abspath(os.path.expanduser(self.archive_dir))
            if self.archive_dir == self.path or self.archive_dir.startswith(self.path + os.sep):
                raise AnalysisError(
                    "Base archive path cannot be set to the path where archived path can possibly "
                    "match with source pattern. Ensure the base archive path doesn't match with "
                    "source pattern in depth, where the depth is minimum of depth on both paths.")
        self.schema = self._resolve_schema(schema)
        interval = STREAM_FILE_SOURCE_LOG_COMPACT.read(getattr(session, "sql_conf", None))
        self.metadata_path = metadata_path
        self.log = FileStreamSourceLog(metadata_path, interval) if metadata_path else None
        self._memory_log: dict[int, list[dict]] = {}
        self.seen = SeenFilesMap(max_age, self.file_name_only)
        latest = self.log.latest_batch_id() if self.log is not None else None
        self.log_offset = -1 if latest is None else latest
        if self.log is not None:
            for e in self.log.all_entries():
                self.seen.add(e["path"], e["timestamp"])
        self.seen.purge()
        self._available_now: list[tuple[str, int, int]] | None = None
        #: files listed but not taken by the last batch (Spark's ``unreadFiles`` cache)
        self._unread: list[tuple[str, int, int]] = []

    # -- schema ---------------------------------------------------------------------------------
    def _resolve_schema(self, schema: T.StructType | None) -> T.StructType:
        if not _is_glob(self.path) and not os.path.exists(self.path):
            raise AnalysisError(f"Path does not exist: {self.path}.",
                                error_class="PATH_NOT_FOUND", parameters={"path": self.path})
        if schema is not None:
            return schema
        if not STREAM_SCHEMA_INFERENCE.read(getattr(self.session, "sql_conf", None)):
            raise AnalysisError(
                "Schema must be specified when creating a streaming source DataFrame. If some "
                "files already exist in the directory, then depending on the file format you may "
                "be able to create a static DataFrame on that directory with "
                "'spark.read.load(directory)' and infer schema from it.",
                error_class="_LEGACY_ERROR_TEMP_2048")
        files = [p for p, _, _ in self._list_files()]
        if self.format == "json":
            table = _read_json(files, None, self.options) if files else None
            if table is None or not table.num_columns:
                raise AnalysisError("Unable to infer schema for JSON. It must be specified "
                                    "manually.", error_class="UNABLE_TO_INFER_SCHEMA",
                                    parameters={"format": "JSON"})
            return T.StructType(tuple(T.StructField(f.name, _sql_type(f.type), True)
                                      for f in table.schema))

        rel = file_relation(self.format, [self.path] if not _is_glob(self.path) else files,
                            self.options)
        return T.StructType(tuple(T.StructField(a.name, a.data_type, True) for a in rel.attrs))

    # -- listing ---------------------------------------------------------------------------------
    def _list_files(self) -> list[tuple[str, int, int]]:
        """(path, size, modification ms) of every data file, sorted by time then name."""

        files = committed_files(self.path) if not _is_glob(self.path) else None
        if files is None:
            if not _is_glob(self.path) and not os.path.exists(self.path):
                files = []
            else:
                files = list(expand_paths([self.path], self.format, must_exist=False)) \
                    if not _is_glob(self.path) or glob.glob(self.path) else []
        out = []
        for f in files:
            try:
                st = os.stat(f)
            except FileNotFoundError:
                continue  # removed since listing
            out.append((os.path.abspath(f), st.st_size, int(st.st_mtime * 1000)))
        if self.latest_first:
            out.sort(key=lambda e: (-e[2], e[0]))
        else:
            out.sort(key=lambda e: (e[2], e[0]))
        return out

    def prepare_for_trigger_available_now(self) -> None:
        """``Trigger.AvailableNow``: only the files present now are ever read."""
        self._available_now = self._list_files()

    # -- Source API ------------------------------------------------------------------------------
    def latest_offset(self) -> dict | None:
        """Take the next new files into a new log batch; ``{"logOffset": n}`` (None before the
        first file)."""
        if self._unread:
            candidates = self._unread  # Spark reuses the files left over by the last listing
        else:
            listed = self._available_now if self._available_now is not None \
                else self._list_files()
            candidates = [e for e in listed if self.seen.is_new_file(path_to_uri(e[0]), e[2])]
        cache = not self.latest_first and self._available_now is None
        rest: list[tuple[str, int, int]] = []
        if self.max_files_per_trigger:
            limit = self.max_files_per_trigger
            new, rest = candidates[:limit], candidates[limit:]
            if len(rest) < limit * self.discard_cached_ratio:
                rest = []  # too few to make a batch: list again next time
        elif self.max_bytes_per_trigger:
            limit = self.max_bytes_per_trigger
            new, size = [], 0
            for e in candidates:  # Spark's takeFilesUntilMax: the first file always goes in
                if new and size + e[1] > limit:
                    break
                new.append(e)
                size += e[1]
            rest = candidates[len(new):]
            if sum(e[1] for e in rest) < limit * self.discard_cached_ratio:
                rest = []
        else:
            new = candidates
        self._unread = rest[: self.max_cached_files] if cache else []
        for p, _, ts in new:
            self.seen.add(path_to_uri(p), ts)
        self.seen.purge()
        if new:
            self.log_offset += 1
            entries = [{"path": path_to_uri(p), "timestamp": ts, "batchId": self.log_offset}
                       for p, _, ts in new]
            if self.log is not None:
                if not self.log.add(self.log_offset, entries):
                    raise ExecutionError("Concurrent update to the log. Multiple streaming jobs "
                                         f"detected for {self.log_offset}")
            else:
                self._memory_log[self.log_offset] = entries
        return None if self.log_offset == -1 else {"logOffset": self.log_offset}

    def _batch_entries(self, batch_id: int) -> list[dict]:
        got = self.log.batch(batch_id) if self.log is not None else \
            self._memory_log.get(batch_id)
        if got is None:
            raise ExecutionError(f"The file source log has no batch {batch_id} "
                                 f"({self.metadata_path}).")
        return got

    def files_between(self, start: dict | None, end: dict) -> list[str]:
        lo = _log_offset(start) if start is not None else -1
        hi = _log_offset(end)
        if lo > hi:
            raise ExecutionError(f"The start offset {lo} is after the end offset {hi}.")
        return [uri_to_path(e["path"]) for b in range(lo + 1, hi + 1)
                for e in self._batch_entries(b)]

    def get_batch(self, start: dict | None, end: dict) -> pa.Table:
        """The rows of the files recorded in log batches ``(start, end]``."""
        files = self.files_between(start, end)
        arrow_schema = pa.schema([pa.field(f.name, f.data_type.to_arrow())
                                  for f in self.schema.fields])
        if not files:
            return arrow_schema.empty_table()
        if self.format == "json":
            conf = getattr(self.session, "sql_conf", None)
            return _read_json(files, self.schema, self.options,
                              conf.time_zone if conf is not None else "UTC")
        return self._read_with_batch_reader(files, arrow_schema)

    def _read_with_batch_reader(self, files: list[str], arrow_schema: pa.Schema) -> pa.Table:
        rel = file_relation(self.format, files, self.options, self.schema)
        if self.format == "parquet" and not _is_glob(self.path):
            # partition columns of the user schema come from the key=value directories below
            # the source path (Spark passes the path as basePath)
            names = {f.name.lower() for f in self.schema.fields}
            parts = [n for n, _ in _partition_schema([self.path], files) if n.lower() in names]
            if parts:
                rel = dataclasses.replace(rel, options=tuple(sorted(
                    dict(rel.options, **{PARTITION_OPTION.lower(): ",".join(parts)}).items())))
        conf = getattr(self.session, "sql_conf", None)
        tz = conf.time_zone if conf is not None else "UTC"
        batch_size = conf.batch_size if conf is not None else 65536
        batches = list(scan_file_relation(rel, batch_size, tz))
        return pa.Table.from_batches(batches, schema=arrow_schema) if batches \
            else arrow_schema.empty_table()

    def commit(self, end: dict) -> None:
        """Spark's commit: with ``cleanSource``, delete or archive the files of batch ``end``."""
        if self.clean_source == "off":
            return
        for e in self._batch_entries(_log_offset(end)):
            src = uri_to_path(e["path"])
            try:
                if self.clean_source == "delete":
                    os.remove(src)
                else:
                    dest = self.archive_dir.rstrip(os.sep) + src
                    os.makedirs(os.path.dirname(dest), exist_ok=True)
                    shutil.move(src, dest)
            except OSError:
                # Spark logs a warning and goes on: cleaning must not fail the query
                continue

    def stop(self) -> None:
        """Nothing to close (cleaning runs inline in ``commit``)."""

    def __repr__(self) -> str:
        return f"FileStreamSource[file:{self.path}]"


def _log_offset(offset: Any) -> int:
    if isinstance(offset, dict):
        return int(offset["logOffset"])
    return int(offset)


def _sql_type(t: pa.DataType) -> T.DataType:
    if pa.types.is_timestamp(t):
        return T.TIMESTAMP
    if pa.types.is_integer(t):
        return T.LONG  # Spark infers JSON integers as bigint
    if pa.types.is_floating(t):
        return T.DOUBLE
    if pa.types.is_boolean(t):
        return T.BOOLEAN
    if pa.types.is_null(t) or pa.types.is_string(t) or pa.types.is_large_string(t):
        return T.STRING
    return T.from_arrow(t)


def _read_json(files: list[str], schema: T.StructType | None, opts: dict[str, str],
               tz: str = "UTC") -> pa.Table:
    """JSON files (one object per line; ``multiLine``: one value or array per file) as a table
    typed like ``schema`` (fields matched by name; missing ones NULL), or as inferred."""
    import json

    import pyarrow.json as pajson


    tables = []
    for f in files:
        if opts.get("multiline", "false").lower() == "true":
            with open(f, encoding="utf-8") as fh:
                doc = json.load(fh)
            # one conversion per file (multiLine files are read whole, as Spark does)
            tables.append(pa.Table.from_pylist(doc if isinstance(doc, list) else [doc]))
        elif os.path.getsize(f):
            # date/time fields are read as text and cast with Spark's rules below (a time
            # without zone is in the session time zone, a "Z" or offset is honoured)
            as_text = [pa.field(fld.name, pa.string()) for fld in (schema.fields if schema else ())
                       if isinstance(fld.data_type, (T.TimestampType, T.DateType))]
            parse = pajson.ParseOptions(explicit_schema=pa.schema(as_text)) if as_text else None
            tables.append(pajson.read_json(f, parse_options=parse))
    if not tables:
        table = pa.table({})
    else:
        table = pa.concat_tables(tables, promote_options="permissive")
    if schema is None:
        return table
    cols = []
    by_name = {n: i for i, n in enumerate(table.column_names)}
    for fld in schema.fields:
        target = fld.data_type.to_arrow()
        i = by_name.get(fld.name)
        if i is None:
            cols.append(pa.nulls(table.num_rows, target))
            continue
        col = table.column(i).combine_chunks()
        if col.type == target:
            cols.append(col)
        elif pa.types.is_timestamp(col.type) and pa.types.is_timestamp(target):
            if col.type.tz is None:  # a time without zone is in the session time zone (Spark)
                import pyarrow.compute as pc

                col = pc.assume_timezone(col, tz)
            cols.append(col.cast(target))
        elif pa.types.is_null(col.type):
            cols.append(pa.nulls(table.num_rows, target))
        else:
            src_type = _sql_type(col.type)
            try:
                cols.append(cast_array(col, src_type, fld.data_type, ansi=False, time_zone=tz)
                            .cast(target))
            except Exception as e:  # noqa: BLE001 - re-raised with the file context
                raise ExecutionError(f"Cannot read JSON field {fld.name} of type {col.type} as "
                                     f"{fld.data_type.simple_string()}: {e}",
                                     error_class="FAILED_READ_FILE.NO_HINT") from e
    arrow_schema = pa.schema([pa.field(f.name, f.data_type.to_arrow()) for f in schema.fields])
    return pa.Table.from_arrays(cols, schema=arrow_schema)
