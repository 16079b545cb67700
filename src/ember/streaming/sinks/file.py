"""The Parquet file sink (Spark's ``FileStreamSink``) and the file-stream metadata logs.

Layout (Spark's, so Spark reads Ember's output and the other way round)::

    <path>/part-00000-<uuid>-c000.snappy.parquet        data files (or <col>=<value>/... dirs)
    <path>/_spark_metadata/<batchId>                    "v1", then one JSON per file:
        {"path":"file:///...","size":..,"isDir":false,"modificationTime":..,
         "blockReplication":1,"blockSize":33554432,"action":"add"}
    <path>/_spark_metadata/<batchId>.compact            every 10th batch (9, 19, ...): all files
                                                        so far (``CompactibleFileStreamLog``)

Exactly-once: ``add_batch`` skips a batch id at or below the log's latest one (Spark's check).
Otherwise it writes each file under a hidden temporary name, renames it into place, and only then
writes the batch's log file (atomically: a temp file linked to its final name, which fails if a
concurrent writer got there first). A crash before the log entry leaves renamed files that no
log lists; readers that honour ``_spark_metadata`` (Spark's ``MetadataLogFileIndex``, Ember's
``session.read.parquet(path)`` through :func:`committed_files`) never see them, and the re-run
batch writes new files under new names, so the visible output has no duplicates.

``CompactibleFileStreamLog`` is shared with the file source's ``FileStreamSourceLog``
(``ember.streaming.sources.file``). Compaction follows Spark: batch ``b`` is a compaction batch
when ``(b + 1) % interval == 0``; its file holds the entries of the previous compaction batch and
every batch after it; readers start at the latest compaction batch. The interval is
``spark.sql.streaming.fileSink.log.compactInterval`` / ``fileSource.log.compactInterval``
(default 10), or derived from existing ``.compact`` files like Spark does. Expired logs are not
deleted (Spark's ``fileSink.log.deletion`` cleanup is optional and omitted).

An empty batch writes one empty Parquet file (schema only), as Spark does.
Options: ``partitionBy`` (Hive-style ``col=value`` directories, values escaped as Spark's
``escapePathName``, NULL as ``__HIVE_DEFAULT_PARTITION__``), ``maxRecordsPerFile``.
"""

from __future__ import annotations

import json
import os
import re
import uuid
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any
from urllib.parse import quote, unquote, urlparse

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from ember.conf import STREAM_FILE_SINK_LOG_COMPACT
from ember.errors import AnalysisError, ExecutionError, UnsupportedError
from ember.streaming.crash import crash_point
from ember import types as T
from ember.expressions.cast import cast_array
from ember.execution.scan import HIVE_NULL
from ember.execution.write import escape_path_name

if TYPE_CHECKING:  # pragma: no cover
    from ember.session import Session

__all__ = ["CompactibleFileStreamLog", "FileStreamSinkLog", "FileStreamSink", "committed_files",
           "METADATA_DIR", "path_to_uri", "uri_to_path"]

METADATA_DIR = "_spark_metadata"
COMPACT_SUFFIX = ".compact"
#: Hadoop's local file system block size (``fs.local.block.size``), as Spark records it.
LOCAL_BLOCK_SIZE = 33554432


def path_to_uri(path: str) -> str:
    """Spark's ``SparkPath.urlEncoded`` of a local file: ``file:///abs/path`` with URI escapes."""
    return "file://" + quote(os.path.abspath(path), safe="/=,;:$&+@!*'()")


def uri_to_path(uri: str) -> str:
    """The local path of a log entry (``file:/a``, ``file:///a`` or a plain path)."""
    if uri.startswith("file:"):
        return unquote(urlparse(uri).path)
    return uri


def _is_compaction(batch_id: int, interval: int) -> bool:
    return (batch_id + 1) % interval == 0


def _derive_interval(default: int, latest_compact: int) -> int:
    """Spark's ``deriveCompactInterval``: an interval compatible with an existing compact batch."""
    if latest_compact + 1 <= default:
        return latest_compact + 1
    if default < (latest_compact + 1) // 2:
        for d in range(default, (latest_compact + 1) // 2 + 1):
            if (latest_compact + 1) % d == 0:
                return d
    return latest_compact + 1


class CompactibleFileStreamLog:
    """Spark's ``CompactibleFileStreamLog``: one file per batch (``v<version>`` then one JSON
    object per line), compacted every ``interval`` batches into ``<id>.compact``.

    >>> log = FileStreamSinkLog("/tmp/out/_spark_metadata")   # doctest: +SKIP
    >>> log.add(0, [{"path": "file:///tmp/out/a.parquet", ...}])  # doctest: +SKIP
    True
    """

    version = 1

    def __init__(self, path: str, default_interval: int = 10) -> None:
        if default_interval <= 0:
            raise AnalysisError(f"The compact interval must be positive (was {default_interval}).")
        self.path = path
        compacts = sorted((b for b, name in self._batch_files() if name.endswith(COMPACT_SUFFIX)),
                          reverse=True)
        if len(compacts) >= 2:
            self.interval = compacts[0] - compacts[1]
        elif compacts:
            self.interval = _derive_interval(default_interval, compacts[0])
        else:
            self.interval = default_interval

    # -- files ---------------------------------------------------------------------------------
    def _batch_files(self) -> list[tuple[int, str]]:
        if not os.path.isdir(self.path):
            return []
        out = []
        for name in os.listdir(self.path):
            m = re.fullmatch(r"([0-9]+)(\.compact)?", name)
            if m:
                out.append((int(m.group(1)), name))
        return out

    def batch_path(self, batch_id: int) -> str:
        suffix = COMPACT_SUFFIX if _is_compaction(batch_id, self.interval) else ""
        return os.path.join(self.path, f"{batch_id}{suffix}")

    def latest_batch_id(self) -> int | None:
        ids = [b for b, _ in self._batch_files()]
        return max(ids) if ids else None

    def _read(self, batch_id: int) -> list[dict] | None:
        p = self.batch_path(batch_id)
        if not os.path.exists(p):
            # a log written with another interval may name this batch either way
            alt = os.path.join(self.path, str(batch_id)) if p.endswith(COMPACT_SUFFIX) \
                else p + COMPACT_SUFFIX
            if not os.path.exists(alt):
                return None
            p = alt
        with open(p, encoding="utf-8") as f:
            lines = f.read().split("\n")
        if not lines or not lines[0].startswith("v"):
            raise ExecutionError(f"Log file was malformed: failed to detect the log file version "
                                 f"line. ({p})")
        version = int(lines[0][1:])
        if version > self.version:
            raise ExecutionError(
                "The log file was produced by a newer version of Spark and cannot be read by "
                "this version. Please upgrade. (UnsupportedLogVersion: maximum supported log "
                f"version is v{self.version}, but encountered v{version})")
        return [json.loads(line) for line in lines[1:] if line.strip()]

    def get(self, batch_id: int) -> list[dict] | None:
        """The entries stored in ``batch_id``'s file (a compaction file holds all earlier ones)."""
        return self._read(batch_id)

    def _write_new(self, batch_id: int, entries: Iterable[dict]) -> bool:
        """Write ``batch_id``'s file atomically; False if it already exists (HDFSMetadataLog)."""
        os.makedirs(self.path, exist_ok=True)
        final = self.batch_path(batch_id)
        if os.path.exists(final):
            return False
        tmp = os.path.join(self.path, f".{batch_id}.{uuid.uuid4().hex}.tmp")
        body = f"v{self.version}" + "".join(
            "\n" + json.dumps(e, separators=(",", ":")) for e in entries)
        with open(tmp, "w", encoding="utf-8") as f:
            f.write(body)
            f.flush()
            os.fsync(f.fileno())
        try:
            os.link(tmp, final)  # fails if the name exists: no overwrite
        except FileExistsError:
            return False
        finally:
            os.unlink(tmp)
        return True

    def should_retain(self, entry: dict) -> bool:
        return True

    def add(self, batch_id: int, entries: list[dict]) -> bool:
        """Record ``entries`` as batch ``batch_id``; a compaction batch also carries every entry
        since the previous compaction. False if the batch was already written."""
        if _is_compaction(batch_id, self.interval):
            prior: list[dict] = []
            for b in range(max(0, batch_id - self.interval), batch_id):
                got = self._read(b)
                if got is None:
                    raise ExecutionError(f"{self.batch_path(b)} doesn't exist when compacting "
                                         f"batch {batch_id} (compactInterval: {self.interval})")
                prior.extend(got)
            entries = [e for e in prior + list(entries) if self.should_retain(e)]
        return self._write_new(batch_id, entries)

    def all_entries(self) -> list[dict]:
        """Every entry up to the latest batch: the latest compaction file plus later batches."""
        latest = self.latest_batch_id()
        if latest is None:
            return []
        start = max(0, (latest + 1) // self.interval * self.interval - 1)
        out: list[dict] = []
        for b in range(start, latest + 1):
            got = self._read(b)
            if got is None:
                raise ExecutionError(f"{self.batch_path(b)} doesn't exist (latestId: {latest}, "
                                     f"compactInterval: {self.interval})")
            out.extend(e for e in got if self.should_retain(e))
        return out


class FileStreamSinkLog(CompactibleFileStreamLog):
    """``<path>/_spark_metadata``: ``SinkFileStatus`` entries; files whose action is ``delete``
    are not visible."""

    def all_files(self) -> list[dict]:
        entries = self.all_entries()
        deleted = {e["path"] for e in entries if e.get("action") == "delete"}
        return [e for e in entries if e.get("action") != "delete" and e["path"] not in deleted]


def committed_files(path: str) -> list[str] | None:
    """The data files a file sink committed under directory ``path`` (Spark's
    ``MetadataLogFileIndex``), or None when ``path`` has no ``_spark_metadata`` log."""
    meta = os.path.join(path, METADATA_DIR)
    if not (os.path.isdir(path) and os.path.isdir(meta)):
        return None
    return [uri_to_path(e["path"]) for e in FileStreamSinkLog(meta).all_files()
            if not e.get("isDir")]


def _partition_strings(col: pa.ChunkedArray | pa.Array, time_zone: str) -> list[str | None]:
    """A partition column's values as Spark casts them to strings (one per distinct group)."""

    arr = col.combine_chunks() if isinstance(col, pa.ChunkedArray) else col
    dt = T.from_arrow(arr.type)
    if isinstance(dt, T.StringType):
        return arr.to_pylist()
    return cast_array(arr, dt, T.STRING, ansi=False, time_zone=time_zone).to_pylist()


class FileStreamSink:
    """``df.writeStream.format("parquet").option("checkpointLocation", c).start(path)``.

    >>> sink = FileStreamSink(session, {"partitionBy": "day"}, "/tmp/out")   # doctest: +SKIP
    >>> sink.add_batch(0, table)                                                # doctest: +SKIP
    """

    def __init__(self, session: "Session", options: dict[str, Any] | None, path: str | None,
                 *, fmt: str = "parquet") -> None:
        opts = {str(k).lower(): v for k, v in (options or {}).items()}
        if path is None:
            path = opts.get("path")
        if path is None:
            raise AnalysisError("'path' is not specified", error_class="_LEGACY_ERROR_TEMP_1139")
        if fmt.lower() != "parquet":
            raise UnsupportedError(f"The streaming file sink writes Parquet only (not {fmt}).")
        self.session = session
        self.path = os.path.abspath(os.path.expanduser(str(path)))
        # DataStreamWriter.partitionBy: a list, a comma-separated string, or Spark's
        # "__partition_columns" option (a JSON array)
        part = opts.get("partitionby", opts.get("__partition_columns"))
        if isinstance(part, str):
            part = json.loads(part) if part.startswith("[") else \
                [c.strip() for c in part.split(",") if c.strip()]
        self.partition_by: list[str] = list(part or [])
        self.max_records_per_file = int(opts.get("maxrecordsperfile", 0) or 0)
        conf = getattr(session, "sql_conf", None)
        interval = STREAM_FILE_SINK_LOG_COMPACT.read(conf)
        self.time_zone = conf.time_zone if conf is not None else "UTC"
        self.log = FileStreamSinkLog(os.path.join(self.path, METADATA_DIR),
                                     interval)

    def add_batch(self, batch_id: int, data: pa.Table) -> None:
        latest = self.log.latest_batch_id()
        if latest is not None and batch_id <= latest:
            return  # Spark: "Skipping already committed batch"
        os.makedirs(self.path, exist_ok=True)
        files = self._write_files(batch_id, data)
        crash_point("sink_files_written")
        entries = []
        for f in files:
            st = os.stat(f)
            entries.append({"path": path_to_uri(f), "size": st.st_size, "isDir": False,
                            "modificationTime": int(st.st_mtime * 1000), "blockReplication": 1,
                            "blockSize": LOCAL_BLOCK_SIZE, "action": "add"})
        if not self.log.add(batch_id, entries):
            for f in files:  # another writer committed this batch: ours are garbage
                os.unlink(f)
            raise ExecutionError(f"Race while writing batch {batch_id}")

    def _write_files(self, batch_id: int, data: pa.Table) -> list[str]:
        job = uuid.uuid4()
        names = {n.lower(): n for n in data.column_names}
        missing = [c for c in self.partition_by if c.lower() not in names]
        if missing:
            raise AnalysisError(
                f"Partition column `{missing[0]}` not found in schema "
                f"{', '.join(data.column_names)}.",
                error_class="_LEGACY_ERROR_TEMP_2252")
        part_cols = [names[c.lower()] for c in self.partition_by]
        if not part_cols or data.num_rows == 0:
            # an empty batch still writes one (empty) file with the schema, as Spark's
            # FileFormatWriter does; a partitioned empty batch writes nothing
            groups = [("", data)] if not part_cols else []
        else:
            groups = []
            keys = data.select(part_cols).group_by(part_cols, use_threads=False).aggregate([])
            strings = [_partition_strings(keys.column(c), self.time_zone) for c in part_cols]
            body = data.drop_columns(part_cols)
            # one filter per distinct partition value (bounded by the number of partitions)
            for i in range(keys.num_rows):
                mask = None
                for c in part_cols:
                    v = keys.column(c)[i]
                    m = pc.is_null(data.column(c)) if not v.is_valid else \
                        pc.equal(data.column(c), v)
                    mask = m if mask is None else pc.and_(mask, m)
                sub = os.path.join(*(
                    f"{escape_path_name(c)}="
                    f"{HIVE_NULL if s[i] is None else escape_path_name(s[i])}"
                    for c, s in zip(part_cols, strings)))
                groups.append((sub, body.filter(mask)))
        out = []
        seq = 0
        for sub, table in groups:
            step = self.max_records_per_file or table.num_rows or 1
            for start in range(0, max(table.num_rows, 1), step):
                chunk = table.slice(start, step)
                folder = os.path.join(self.path, sub) if sub else self.path
                os.makedirs(folder, exist_ok=True)
                name = f"part-{seq:05d}-{job}-c000.snappy.parquet"
                seq += 1
                tmp = os.path.join(folder, f".{name}.{batch_id}.tmp")
                pq.write_table(chunk, tmp, compression="snappy")
                final = os.path.join(folder, name)
                os.replace(tmp, final)
                out.append(final)
        return out

    def __repr__(self) -> str:
        return f"FileSink[{self.path}]"
