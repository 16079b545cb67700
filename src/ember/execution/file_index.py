"""File listings of file relations: Hive-style partition discovery, partition pruning and split
sizing (Spark's ``PartitioningUtils``, ``PartitioningAwareFileIndex.listFiles`` and
``FilePartition``).

Partition discovery (:func:`discover_partitions`): the ``key=value`` directories between a base
path (the path read, or the ``basePath`` option) and each file name the partition columns, in
directory order; values are URL-unescaped and ``__HIVE_DEFAULT_PARTITION__`` is NULL. With
``spark.sql.sources.partitionColumnTypeInference.enabled`` (default) a column's type is inferred
from its values as Spark's ``inferPartitionColumnValue`` does (``int``, ``bigint``,
``decimal(p,0)``, ``double``, ``date`` for ``yyyy-MM-dd``, ``timestamp`` for ``yyyy-MM-dd
HH:mm:ss[.S]``, else ``string``; only NULLs: ``void``), the values of a column merged by
``findWiderTypeForPartitionColumn`` (numbers widen, ``date`` and ``timestamp`` give ``timestamp``,
anything else ``string``); without it every partition column is a ``string``.

Pruning (:func:`select_files`): the partition filters are evaluated once per partition directory
(vectorized over the directories' typed values), and only files of the directories where they
hold are read.

Splits (:func:`file_splits`): Spark's ``FilePartition.maxSplitBytes`` (``maxPartitionBytes``,
``openCostInBytes``, ``minPartitionNum``), splittable files cut into ranges of that size, the
ranges sorted by size (largest first) and packed next-fit into partitions.
"""

from __future__ import annotations

import os
import re
from collections.abc import Sequence
from typing import Any
from urllib.parse import unquote

import pyarrow as pa
import pyarrow.compute as pc

from ember import types as T
from ember.coercion import find_wider_type_for_two
from ember.errors import AnalysisError
from ember.expressions.base import Expression, and_all
from ember.expressions.cast import cast_array
from ember.execution.prepare import prepare
from ember.plans.logical.nodes import PARTITION_OPTION

__all__ = ["discover_partitions", "partition_columns", "select_files", "file_splits",
           "FileSplit", "HIVE_NULL", "PARTITION_OPTION", "BASE_PATH_OPTION"]

#: The directory value Hive (and Spark) write for a NULL partition value.
HIVE_NULL = "__HIVE_DEFAULT_PARTITION__"
#: The reader option naming the directory partition discovery starts from.
BASE_PATH_OPTION = "basepath"


def _leaf_columns(root: str, path: str) -> list[tuple[str, str]] | None:
    """The ``(key, raw value)`` directories between ``root`` and the file ``path`` (None when
    the file is not under ``root``)."""
    d = os.path.dirname(os.path.abspath(path))
    if d != root and not d.startswith(root.rstrip(os.sep) + os.sep):
        return None
    rel = os.path.relpath(d, root)
    out = []
    for part in ([] if rel == "." else rel.split(os.sep)):
        k, sep, v = part.partition("=")
        if sep and k:
            out.append((k, v))
    return out


def _roots(paths: Sequence[str], base_path: str | None) -> list[str]:
    if base_path:
        return [os.path.abspath(os.path.expanduser(base_path))]
    dirs = [os.path.abspath(os.path.expanduser(str(p))) for p in paths]
    return [d for d in dirs if os.path.isdir(d)]


def _unescape(v: str) -> str | None:
    return None if v == HIVE_NULL else unquote(v)


_INT_RE = re.compile(r"^[+-]?[0-9]+$")
_DOUBLE_RE = re.compile(r"^\s*[+-]?(NaN|Infinity|(([0-9]+\.?[0-9]*|\.[0-9]+)([eE][+-]?[0-9]+)?"
                        r"[fFdD]?))\s*$")
_DATE_RE = re.compile(r"^[0-9]{4}-[0-9]{2}-[0-9]{2}$")
_TIMESTAMP_RE = re.compile(r"^[0-9]{4}-[0-9]{2}-[0-9]{2} [0-9]{2}:[0-9]{2}:[0-9]{2}(\.[0-9]{1,9})?$")


def _value_type(v: str | None) -> T.DataType:
    """Spark's ``inferPartitionColumnValue`` type of one (unescaped) value."""
    if v is None:
        return T.NullType()
    if _INT_RE.match(v):
        n = int(v)
        if T.INT.min_value <= n <= T.INT.max_value:
            return T.INT
        if T.LONG.min_value <= n <= T.LONG.max_value:
            return T.LONG
        digits = len(v.lstrip("+-").lstrip("0")) or 1
        if digits <= 38:
            return T.DecimalType(digits, 0)
    if _DOUBLE_RE.match(v):
        return T.DOUBLE
    for regex, t in ((_DATE_RE, T.DATE), (_TIMESTAMP_RE, T.TIMESTAMP)):
        if regex.match(v) and cast_array(pa.array([v], pa.large_string()), T.STRING, t,
                                         ansi=False).is_valid()[0].as_py():
            return t
    return T.STRING


def _wider(t1: T.DataType, t2: T.DataType) -> T.DataType:
    """Spark's ``findWiderTypeForPartitionColumn``: a double with a decimal is a string, else
    the wider type without string promotion, else a string."""
    if {type(t1), type(t2)} == {T.DoubleType, T.DecimalType}:
        return T.STRING
    return find_wider_type_for_two(t1, t2, string_promotion=False, legacy=True) or T.STRING


def discover_partitions(paths: Sequence[str], files: Sequence[str], base_path: str | None = None,
                        type_inference: bool = True) -> list[tuple[str, T.DataType]]:
    """The partition columns (name, type) of ``files`` read through ``paths`` (see module
    docstring); ``CONFLICTING_PARTITION_COLUMN_NAMES`` when leaf directories disagree."""
    roots = _roots(paths, base_path)
    if not roots or not files:
        return []
    keys: list[str] | None = None
    values: dict[str, set[str | None]] = {}
    for f in files:
        cols = None
        for r in roots:
            cols = _leaf_columns(r, f)
            if cols is not None:
                break
        if cols is None:
            return []
        these = [k for k, _ in cols]
        if keys is None:
            keys = these
        elif [k.lower() for k in keys] != [k.lower() for k in these]:
            raise AnalysisError(
                "Conflicting partition column names detected:\n\n"
                f"\tPartition column name list #0: {', '.join(keys)}\n"
                f"\tPartition column name list #1: {', '.join(these)}\n",
                error_class="CONFLICTING_PARTITION_COLUMN_NAMES",
                parameters={"names": f"{keys}, {these}"})
        for k, v in cols:
            values.setdefault(k.lower(), set()).add(_unescape(v))
    out = []
    for k in keys or []:
        if not type_inference:
            out.append((k, T.STRING))
            continue
        t: T.DataType = T.NullType()
        for v in values[k.lower()]:
            t = _wider(t, _value_type(v))
        out.append((k, t))
    return out


def partition_columns(rel: Any) -> tuple[Any, ...]:
    """The attributes of ``rel`` (a ``FileRelation``) that are partition columns."""
    return rel.partition_attrs


def pruning_values(f: Any, table: pa.Table) -> pa.Array:
    """The distinct non-NULL build keys of the dynamic pruning filter ``f`` in ``table`` (the
    rows of its broadcast)."""
    key = f.build.mode.keys[f.key_index]
    batch = table.combine_chunks().to_batches()
    if not batch:
        return pa.array([], f.child.data_type.to_arrow())
    col = prepare(key, f.build.child.output).eval(batch[0])
    if isinstance(col, pa.Scalar):
        col = pa.array([col.as_py()] * table.num_rows, col.type)
    return pc.unique(col.drop_null())


def partition_values(path: str, names: Sequence[str]) -> dict[str, str | None]:
    """The ``key=value`` directory components of ``path`` for the partition columns ``names``
    (``__HIVE_DEFAULT_PARTITION__`` -> None; values are URL-unescaped)."""
    wanted = {n.lower() for n in names}
    out: dict[str, str | None] = {}
    for part in os.path.dirname(path).split(os.sep):
        k, sep, v = part.partition("=")
        if sep and k.lower() in wanted:
            out[k.lower()] = _unescape(v)
    return out


def partition_table(dirs: Sequence[str], attrs: Sequence[Any], time_zone: str) -> pa.RecordBatch:
    """One row per directory of ``dirs``: its values of the partition columns ``attrs``, typed."""
    cols = []
    for a in attrs:
        raw = pa.array([partition_values(os.path.join(d, "_"), [a.name]).get(a.name.lower())
                        for d in dirs], pa.large_string())
        if isinstance(a.data_type, T.StringType):
            col = raw
        elif isinstance(a.data_type, T.NullType):
            col = pa.nulls(len(dirs), a.data_type.to_arrow())
        else:
            col = cast_array(raw, T.STRING, a.data_type, ansi=False, time_zone=time_zone)
        cols.append(col.cast(a.data_type.to_arrow()))
    schema = pa.schema([pa.field(f"c{i}", c.type) for i, c in enumerate(cols)])
    return pa.RecordBatch.from_arrays(cols, schema=schema) if cols else \
        pa.RecordBatch.from_pydict({})


def select_files(rel: Any, filters: Sequence[Expression], time_zone: str = "UTC",
                 among: Sequence[tuple[Any, pa.Array]] = ()) -> tuple[str, ...]:
    """The files of ``rel`` in the partitions where every one of ``filters`` (predicates over
    its partition columns only) is TRUE and each expression of ``among`` (over partition
    columns, with its values: resolved dynamic pruning filters) is one of its values."""
    if not (filters or among) or not rel.paths:
        return rel.paths
    attrs = partition_columns(rel)
    dirs = list(dict.fromkeys(os.path.dirname(p) for p in rel.paths))
    batch = partition_table(dirs, attrs, time_zone)
    mask = pa.array([True] * len(dirs))
    if filters:
        res = prepare(and_all(list(filters)), attrs).eval(batch)
        if isinstance(res, pa.Scalar):
            res = pa.array([res.as_py()] * len(dirs), pa.bool_())
        if isinstance(res, pa.ChunkedArray):
            res = res.combine_chunks()
        mask = pc.fill_null(res.cast(pa.bool_()), False)
    for key, values in among:
        col = prepare(key, attrs).eval(batch)
        if isinstance(col, pa.Scalar):
            col = pa.array([col.as_py()] * len(dirs), col.type)
        mask = pc.and_(mask, pc.fill_null(pc.is_in(col, value_set=values.cast(col.type)), False))
    keep = {d for d, k in zip(dirs, mask.to_pylist()) if k}
    return tuple(p for p in rel.paths if os.path.dirname(p) in keep)


class FileSplit:
    """A byte range of one file (Spark's ``PartitionedFile``)."""

    __slots__ = ("path", "start", "length")

    def __init__(self, path: str, start: int, length: int) -> None:
        self.path, self.start, self.length = path, start, length

    def __repr__(self) -> str:
        return f"FileSplit({self.path!r}, {self.start}, {self.length})"


def max_split_bytes(sizes: Sequence[int], max_partition_bytes: int, open_cost: int,
                    min_partitions: int) -> int:
    """Spark's ``FilePartition.maxSplitBytes``."""
    total = sum(s + open_cost for s in sizes)
    per_core = total // max(1, min_partitions)
    return min(max_partition_bytes, max(open_cost, per_core))


def file_splits(paths: Sequence[str], splittable: bool, max_partition_bytes: int,
                open_cost: int, min_partitions: int) -> list[list[FileSplit]]:
    """The read partitions of ``paths`` (Spark's ``FilePartition.getFilePartitions``)."""
    sizes = [os.path.getsize(p) for p in paths]
    target = max_split_bytes(sizes, max_partition_bytes, open_cost, min_partitions)
    splits: list[FileSplit] = []
    for p, n in zip(paths, sizes):
        if splittable and n > 0:
            splits.extend(FileSplit(p, off, min(target, n - off)) for off in range(0, n, target))
        else:
            splits.append(FileSplit(p, 0, n))
    splits.sort(key=lambda s: -s.length)
    parts: list[list[FileSplit]] = []
    cur: list[FileSplit] = []
    size = 0
    for s in splits:
        if cur and size + s.length > target:
            parts.append(cur)
            cur, size = [], 0
        cur.append(s)
        size += s.length + open_cost
    if cur:
        parts.append(cur)
    return parts


def read_lines(split: FileSplit) -> bytes:
    """The lines of ``split``'s file that start in its byte range (Hadoop's
    ``LineRecordReader``: a split after the first skips the line it starts inside of, and
    every split reads on to the end of its last line): here a split reads the lines that
    start at a byte in ``[start, start + length)``."""
    with open(split.path, "rb") as f:
        start, end = split.start, split.start + split.length
        f.seek(start)
        if start > 0:
            f.seek(start - 1)
            f.readline()  # the rest of the line holding byte start-1: the previous split's
        pos = f.tell()
        if pos >= end:
            return b""
        data = f.read(end - pos)
        if data and not data.endswith(b"\n"):
            data += f.readline()
        return data
