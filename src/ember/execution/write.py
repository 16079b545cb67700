"""File writers: one write task's rows as Parquet, CSV, JSON Lines or text files, laid out as
Spark's ``FileFormatWriter`` lays them out.

Layout (checked against PySpark 4.3)::

    <dir>/part-00000-<job uuid>-c000.snappy.parquet          unpartitioned: "-c000"
    <dir>/p=1/q=a%2Fb/part-00003-<job uuid>.c000.csv.gz      partitioned: ".c000", one
                                                             directory level per column
    <dir>/p=__HIVE_DEFAULT_PARTITION__/...                   NULL (and '') partition values

``part-NNNNN`` is the task (input partition) number, ``cNNN`` the task's file counter within one
directory (a new file every ``maxRecordsPerFile`` rows), then the codec's and the format's
extensions.  Partition values are the values cast to strings (Spark's ``Cast`` in the session time
zone), escaped as Spark's ``ExternalCatalogUtils.escapePathName``; partition columns are left out
of the files.  Task 0 of an unpartitioned write writes a file even when it has no rows (so an
empty result keeps its schema); other empty tasks write nothing.

Encodings are vectorized over Arrow: CSV and JSON rows are built column by column with Arrow's
string kernels (nested JSON values through their list offsets), never a Python loop per row; a
file is written batch by batch (bounded memory).  Values are formatted as Spark's
``UnivocityGenerator`` (CSV) and ``JacksonGenerator`` (JSON) write them: Java's
``Double.toString``, plain decimals, timestamps in ``timestampFormat`` (default
``yyyy-MM-dd'T'HH:mm:ss.SSSXXX``) in the session time zone, NULL fields left out of JSON
objects unless ``ignoreNullFields`` is false.
"""

from __future__ import annotations

import bz2
import gzip
import os
import zlib
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import Any, BinaryIO

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from ember import types as T
from ember.conf import (
    JSON_IGNORE_NULL_FIELDS,
    MAX_RECORDS_PER_FILE,
    MEMORY_BUDGET,
    PARQUET_COMPRESSION,
)
from ember.errors import AnalysisError, UnsupportedError
from ember.execution.scan import HIVE_NULL
from ember.expressions.cast import cast_array
from ember.expressions.common import sql_type
from ember.expressions.text_format import (
    DEFAULT_TIMESTAMP_FORMAT, CsvGenerator, JsonGenerator,
)

__all__ = ["WriteJob", "write_task", "escape_path_name", "partition_directory",
           "check_writable", "WRITE_FORMATS", "DEFAULT_TIMESTAMP_FORMAT"]

WRITE_FORMATS = ("parquet", "csv", "json", "text")
#: Arrow bytes a Parquet writer buffers before it writes them as one row group
ROW_GROUP_BYTES = 64 << 20

#: Parquet codecs: option value -> (pyarrow codec, file-name extension)
_PARQUET_CODECS = {"none": ("none", ""), "uncompressed": ("none", ""),
                   "snappy": ("snappy", ".snappy"), "gzip": ("gzip", ".gz"),
                   "zstd": ("zstd", ".zstd"), "lz4raw": ("lz4", ".lz4raw"),
                   "lz4_raw": ("lz4", ".lz4raw")}
#: text codecs (CSV, JSON, text): option value -> file-name extension
_TEXT_CODECS = {"none": "", "uncompressed": "", "gzip": ".gz", "bzip2": ".bz2",
                "deflate": ".deflate", "zstd": ".zst"}
_EXTENSIONS = {"parquet": ".parquet", "csv": ".csv", "json": ".json", "text": ".txt"}


# -- partition directories (Spark's ExternalCatalogUtils.escapePathName) -----------------------

_ESCAPED = set('"#%\'*/:=?\\\x7f{[]^') | {chr(c) for c in range(1, 32)}


def escape_path_name(s: str) -> str:
    """Spark's ``escapePathName``: the characters a path segment cannot hold as ``%XX``."""
    return "".join(f"%{ord(c):02X}" if c in _ESCAPED else c for c in s)


def partition_directory(names: Iterable[str], values: Iterable[str | None]) -> str:
    """``a=1/b=x%2Fy``: one level per partition column (NULL and '' as Hive's default)."""
    return "/".join(_segment(n, v) for n, v in zip(names, values))


def _segment(name: str, value: str | None) -> str:
    return f"{escape_path_name(name)}={HIVE_NULL if not value else escape_path_name(value)}"


# -- the job --------------------------------------------------------------------------------

@dataclass(frozen=True)
class WriteJob:
    """What every task of one write needs: the format and its options (lower-case keys), the
    directory tasks write into, the job's id (in every file name), which input columns are data
    and which name directories, the session time zone and the rows per file (0: no limit)."""

    job_id: str
    directory: str
    file_format: str
    options: tuple[tuple[str, str], ...]
    data_columns: tuple[int, ...]
    data_names: tuple[str, ...]
    data_types: tuple[T.DataType, ...]
    partition_columns: tuple[int, ...] = ()
    partition_names: tuple[str, ...] = ()
    partition_types: tuple[T.DataType, ...] = ()
    time_zone: str = "UTC"
    max_records_per_file: int = 0
    default_parquet_codec: str = "snappy"
    ignore_null_fields: bool = True
    #: bytes a Parquet task buffers per row group (:data:`ROW_GROUP_BYTES`, less under a small
    #: ``ember.execution.memoryBudget``: each running task holds one such buffer)
    row_group_bytes: int = ROW_GROUP_BYTES

    @property
    def option_map(self) -> dict[str, str]:
        return dict(self.options)

    def file_name(self, task: int, counter: int) -> str:
        opts = self.option_map
        fmt = self.file_format
        codec = opts.get("compression", opts.get("codec"))
        if fmt == "parquet":
            ext = _parquet_codec(codec or self.default_parquet_codec)[1] + ".parquet"
        else:
            ext = _EXTENSIONS[fmt] + _TEXT_CODECS[_text_codec(codec)]
        sep = "." if self.partition_columns else "-"
        return f"part-{task:05d}-{self.job_id}{sep}c{counter:03d}{ext}"


#: the codecs Spark 4.3 lists as available, in its order (some Ember cannot write)
_SPARK_PARQUET_CODECS = ("brotli", "uncompressed", "lzo", "snappy", "lz4_raw", "none", "zstd",
                         "lz4", "gzip")
_SPARK_TEXT_CODECS = ("bzip2", "deflate", "uncompressed", "snappy", "none", "lz4", "gzip")


def _parquet_codec(name: str) -> tuple[str, str]:
    found = _PARQUET_CODECS.get(name.lower())
    if found is None:
        raise _codec_error(name, _SPARK_PARQUET_CODECS)
    return found


def _text_codec(name: str | None) -> str:
    key = (name or "none").lower()
    if key not in _TEXT_CODECS:
        raise _codec_error(name or "", _SPARK_TEXT_CODECS)
    return key


def _codec_error(name: str, spark_codecs: tuple[str, ...]) -> Exception:
    if name.lower() in spark_codecs:
        return UnsupportedError(f"Ember cannot write files compressed with {name}.")
    listed = ", ".join(spark_codecs)
    return AnalysisError(
        f"The codec {name} is not available. Available codecs are {listed}.",
        error_class="CODEC_NOT_AVAILABLE.WITH_AVAILABLE_CODECS_SUGGESTION",
        parameters={"codecName": name, "availableCodecs": listed})


def _type_error(fmt: str, name: str, t: T.DataType) -> AnalysisError:
    shown = sql_type(t)
    return AnalysisError(
        f"The {fmt} datasource doesn't support the column `{name}` of the type {shown}.",
        error_class="UNSUPPORTED_DATA_TYPE_FOR_DATASOURCE",
        parameters={"columnName": f"`{name}`", "columnType": shown, "format": fmt})


def check_writable(file_format: str, names: tuple[str, ...], types: tuple[T.DataType, ...],
                   options: dict[str, str]) -> None:
    """Spark's checks before a write (``DataSourceUtils.verifySchema``, then the format's
    own): each column's type (``UNSUPPORTED_DATA_TYPE_FOR_DATASOURCE``), text's single
    column, known codecs (``CODEC_NOT_AVAILABLE``)."""
    fmt = file_format.lower()
    codec = options.get("compression", options.get("codec"))
    for n, t in zip(names, types):
        if fmt == "csv" and isinstance(t, (T.ArrayType, T.StructType, T.MapType, T.NullType)):
            raise _type_error("CSV", n, t)
        if fmt == "text" and not isinstance(t, T.StringType):
            raise _type_error("Text", n, t)
    if fmt == "text" and len(types) != 1:
        raise AnalysisError(f"Text data source supports only a single column, and you have "
                            f"{len(types)} columns.", error_class="_LEGACY_ERROR_TEMP_1290",
                            parameters={"numCols": str(len(types))})
    if fmt == "parquet":
        if codec is not None:
            _parquet_codec(codec)
    else:
        _text_codec(codec)
        encoding = options.get("encoding", options.get("charset", "UTF-8"))
        if encoding.upper().replace("-", "") != "UTF8":
            raise UnsupportedError(f"Ember writes {fmt} files in UTF-8 only (not {encoding}).")


# -- one task ---------------------------------------------------------------------------------

def write_task(job: WriteJob, task: int, batches: Iterable[pa.RecordBatch]) -> pa.RecordBatch:
    """Write one task's ``batches`` under ``job.directory``; one row per file written:
    ``(path relative to the directory, rows)``."""
    files: dict[str, _OpenFile] = {}
    done: list[tuple[str, int]] = []
    counters: dict[str, int] = {}
    current: str | None = None
    try:
        for batch in batches:
            if not batch.num_rows:
                continue
            for sub, rows in _split_by_directory(job, batch):
                if job.partition_columns and sub != current and current in files:
                    # input sorted by the partition columns: the previous directory is done
                    done.append(files.pop(current).close())
                current = sub
                _write_rows(job, task, sub, rows, files, done, counters)
        if not files and not done and not job.partition_columns and task == 0:
            f = _open(job, task, "", counters)
            files[""] = f
        for f in files.values():
            done.append(f.close())
        files.clear()
    finally:
        for f in files.values():
            f.abort()
    return pa.record_batch([pa.array([d[0] for d in done], pa.large_string()),
                            pa.array([d[1] for d in done], pa.int64())],
                           names=["file", "num_rows"])


def _write_rows(job: WriteJob, task: int, sub: str, rows: pa.RecordBatch,
                files: dict[str, "_OpenFile"], done: list[tuple[str, int]],
                counters: dict[str, int]) -> None:
    limit = job.max_records_per_file
    start = 0
    while start < rows.num_rows:
        f = files.get(sub)
        if f is None:
            f = files[sub] = _open(job, task, sub, counters)
        take = rows.num_rows - start
        if limit > 0:
            take = min(take, limit - f.rows)
        f.write(rows.slice(start, take))
        start += take
        if limit > 0 and f.rows >= limit:
            done.append(files.pop(sub).close())


def _open(job: WriteJob, task: int, sub: str, counters: dict[str, int]) -> "_OpenFile":
    n = counters.get(sub, 0)
    counters[sub] = n + 1
    rel = os.path.join(sub, job.file_name(task, n)) if sub else job.file_name(task, n)
    path = os.path.join(job.directory, rel)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    return _OpenFile(rel, _ENCODERS[job.file_format](job, path))


def _split_by_directory(job: WriteJob, batch: pa.RecordBatch
                        ) -> Iterator[tuple[str, pa.RecordBatch]]:
    """The batch's data columns per partition directory (one piece when unpartitioned); a
    Python step per distinct directory, not per row."""
    data = pa.RecordBatch.from_arrays([batch.column(i) for i in job.data_columns],
                                      names=list(job.data_names))
    if not job.partition_columns:
        yield "", data
        return
    segments = []
    for pos, name, dt in zip(job.partition_columns, job.partition_names, job.partition_types):
        col = batch.column(pos)
        text = col if isinstance(dt, T.StringType) else cast_array(
            col, dt, T.STRING, ansi=False, time_zone=job.time_zone)
        text = text.cast(pa.large_string())
        uniq = pc.unique(text)
        escaped = pa.array([_segment(name, v) for v in uniq.to_pylist()], pa.large_string())
        segments.append(pc.take(escaped, pc.index_in(text, uniq)))
    dirs = segments[0] if len(segments) == 1 else pc.binary_join_element_wise(
        *segments, pa.scalar("/", pa.large_string()))
    encoded = pc.dictionary_encode(dirs)
    indices = encoded.indices.to_numpy(zero_copy_only=False)
    # runs of one directory, in input order (input sorted by the partition columns: one run each)
    starts = np.flatnonzero(np.r_[True, indices[1:] != indices[:-1]])
    ends = np.r_[starts[1:], len(indices)]
    names = encoded.dictionary.to_pylist()
    if len(starts) <= len(names):
        for s, e in zip(starts, ends):
            yield names[indices[s]], data.slice(s, e - s)
        return
    for i, name in enumerate(names):
        yield name, data.filter(pa.array(indices == i))


@dataclass
class _OpenFile:
    rel: str
    encoder: Any
    rows: int = 0

    def write(self, batch: pa.RecordBatch) -> None:
        self.encoder.write(batch)
        self.rows += batch.num_rows

    def close(self) -> tuple[str, int]:
        self.encoder.close()
        return self.rel, self.rows

    def abort(self) -> None:
        try:
            self.encoder.close()
        except Exception:  # noqa: BLE001 - the task failed already; its files are discarded
            pass


# -- encoders -------------------------------------------------------------------------------

def _nullable_schema(job: WriteJob) -> pa.Schema:
    """Spark writes every column as nullable (nested struct fields and array elements too: a
    non-nullable field of a NULL struct holds NULL in Arrow)."""
    return pa.schema([pa.field(n, _nullable_type(t.to_arrow()), nullable=True)
                      for n, t in zip(job.data_names, job.data_types)])


def _nullable_type(t: pa.DataType) -> pa.DataType:
    if pa.types.is_struct(t):
        return pa.struct([pa.field(f.name, _nullable_type(f.type), nullable=True) for f in t])
    if pa.types.is_large_list(t):
        return pa.large_list(pa.field(t.value_field.name, _nullable_type(t.value_type)))
    if pa.types.is_map(t):
        return pa.map_(t.key_type, pa.field("value", _nullable_type(t.item_type)))
    return t


class _ParquetEncoder:
    def __init__(self, job: WriteJob, path: str) -> None:
        opts = job.option_map
        codec = _parquet_codec(opts.get("compression", opts.get("codec",
                                                                  job.default_parquet_codec)))[0]
        self.schema = _nullable_schema(job)
        self.writer = pq.ParquetWriter(path, self.schema, compression=codec,
                                       store_decimal_as_integer=True)
        self.pending: list[pa.RecordBatch] = []
        self.pending_bytes = 0
        self.row_group_bytes = job.row_group_bytes

    def write(self, batch: pa.RecordBatch) -> None:
        """Batches are buffered into row groups of up to ``job.row_group_bytes`` (an input
        batch per row group would make small, slow-to-read groups)."""
        self.pending.append(pa.RecordBatch.from_arrays(batch.columns, schema=self.schema))
        self.pending_bytes += batch.nbytes
        if self.pending_bytes >= self.row_group_bytes:
            self._flush()

    def _flush(self) -> None:
        if self.pending:
            table = pa.Table.from_batches(self.pending, schema=self.schema)
            self.writer.write_table(table, row_group_size=max(1, table.num_rows))
        self.pending = []
        self.pending_bytes = 0

    def close(self) -> None:
        self._flush()
        self.writer.close()


def _text_stream(path: str, codec: str) -> BinaryIO:
    if codec == "gzip":
        return gzip.open(path, "wb")  # type: ignore[return-value]
    if codec == "bzip2":
        return bz2.open(path, "wb")  # type: ignore[return-value]
    if codec == "deflate":
        return _DeflateStream(path)  # type: ignore[return-value]
    if codec == "zstd":
        return pa.CompressedOutputStream(path, "zstd")  # type: ignore[return-value]
    return open(path, "wb")


class _DeflateStream:
    """Hadoop's ``DeflateCodec`` output: one zlib stream."""

    def __init__(self, path: str) -> None:
        self.f = open(path, "wb")
        self.z = zlib.compressobj()

    def write(self, data: bytes) -> None:
        self.f.write(self.z.compress(data))

    def close(self) -> None:
        self.f.write(self.z.flush())
        self.f.close()


def _concat(lines: pa.Array) -> bytes:
    """The values of a string array without nulls, back to back."""
    arr = lines.cast(pa.large_string())
    if isinstance(arr, pa.ChunkedArray):
        arr = arr.combine_chunks()
    offsets = np.frombuffer(arr.buffers()[1], dtype=np.int64)[arr.offset:arr.offset + len(arr) + 1]
    data = arr.buffers()[2]
    if data is None or not len(arr):
        return b""
    return data.to_pybytes()[offsets[0]:offsets[-1]]


class _LineEncoder:
    """CSV / JSON / text: one line per row, optionally compressed."""

    def __init__(self, job: WriteJob, path: str) -> None:
        opts = job.option_map
        self.job = job
        self.opts = opts
        self.line_sep = opts.get("linesep", "\n")
        self.out = _text_stream(path, _text_codec(opts.get("compression", opts.get("codec"))))
        self.started = False

    def header(self) -> bytes:
        return b""

    def encode(self, batch: pa.RecordBatch) -> pa.Array:  # pragma: no cover - abstract
        raise NotImplementedError

    def write(self, batch: pa.RecordBatch) -> None:
        if not self.started:
            self.out.write(self.header())
            self.started = True
        if not batch.num_rows:
            return
        lines = self.encode(batch)
        lines = pc.binary_join_element_wise(
            lines, pa.scalar(self.line_sep, pa.large_string()),
            pa.scalar("", pa.large_string()))
        self.out.write(_concat(lines))

    def close(self) -> None:
        if not self.started:
            self.out.write(self.header())
        self.out.close()


def _str(value: str) -> pa.Scalar:
    return pa.scalar(value, pa.large_string())



class _CsvEncoder(_LineEncoder):
    """Spark's CSV writer (univocity): the cells as :class:`CsvGenerator` prints them, and the
    ``header`` line."""

    def __init__(self, job: WriteJob, path: str) -> None:
        super().__init__(job, path)
        self.generator = CsvGenerator(self.opts, job.time_zone, self.line_sep)

    def header(self) -> bytes:
        if self.opts.get("header", "false").lower() != "true":
            return b""
        names = pa.array(list(self.job.data_names), pa.large_string())
        cells = self.generator.quoted(names)
        return (self.generator.sep.join(cells.to_pylist()) + self.line_sep).encode()

    def encode(self, batch: pa.RecordBatch) -> pa.Array:
        return self.generator.record(list(batch.columns), list(self.job.data_types),
                                     batch.num_rows)


class _JsonEncoder(_LineEncoder):
    """Spark's JSON Lines writer (``JacksonGenerator``)."""

    def __init__(self, job: WriteJob, path: str) -> None:
        super().__init__(job, path)
        flag = self.opts.get("ignorenullfields")
        ignore_nulls = job.ignore_null_fields if flag is None else flag.lower() == "true"
        self.generator = JsonGenerator(self.opts, job.time_zone, ignore_nulls)

    def encode(self, batch: pa.RecordBatch) -> pa.Array:
        fields = list(zip(self.job.data_names, self.job.data_types))
        return self.generator.object(list(batch.columns), fields, batch.num_rows, None)



class _TextEncoder(_LineEncoder):
    """Spark's text writer: the one string column, a NULL as an empty line."""

    def encode(self, batch: pa.RecordBatch) -> pa.Array:
        return pc.fill_null(batch.column(0).cast(pa.large_string()), _str(""))


_ENCODERS = {"parquet": _ParquetEncoder, "csv": _CsvEncoder, "json": _JsonEncoder,
             "text": _TextEncoder}



def make_job(cmd: Any, input_attrs: tuple[Any, ...], directory: str, job_id: str,
             conf: Any) -> WriteJob:
    """The :class:`WriteJob` of an ``InsertIntoHadoopFsRelationCommand`` whose tasks read rows
    of ``input_attrs`` (the planned query's output) and write under ``directory``."""
    opts = cmd.option_map
    names = list(cmd.column_names)
    part_ids = {a.id for a in cmd.partition_columns}
    positions = {a.id: i for i, a in enumerate(input_attrs)}
    data = [i for i, a in enumerate(input_attrs) if a.id not in part_ids]
    parts = [positions[a.id] for a in cmd.partition_columns]
    limit = opts.get("maxrecordsperfile")
    return WriteJob(
        job_id=job_id, directory=directory, file_format=cmd.file_format,
        options=tuple((k, v) for k, v in opts.items()),
        data_columns=tuple(data), data_names=tuple(names[i] for i in data),
        data_types=tuple(input_attrs[i].data_type for i in data),
        partition_columns=tuple(parts), partition_names=tuple(names[i] for i in parts),
        partition_types=tuple(input_attrs[i].data_type for i in parts),
        time_zone=conf.time_zone,
        max_records_per_file=int(limit) if limit is not None else int(
            conf.get(MAX_RECORDS_PER_FILE)),
        default_parquet_codec=str(conf.get(PARQUET_COMPRESSION)),
        ignore_null_fields=bool(conf.get(JSON_IGNORE_NULL_FIELDS)),
        row_group_bytes=max(1 << 20, min(ROW_GROUP_BYTES, int(conf.get(MEMORY_BUDGET)) // 16)))
