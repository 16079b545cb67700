"""The memory source and the memory sink (Spark's ``MemoryStream`` and ``MemorySink``), for tests,
examples and notebooks.

``MemoryStream``: every ``addData`` call appends one block of rows and advances the offset by one
(offsets are Spark's: a bare long, the index of the latest block; no data yet = no offset).  A
batch ``(start, end]`` is the concatenation of blocks ``start + 1 .. end``.  Committed blocks are
dropped (Spark's ``commit``).  The stream lives in the process: a query restarted from its
checkpoint reads it again only if it is the same ``MemoryStream`` object.

    >>> ms = MemoryStream(spark, "k int, v string")          # doctest: +SKIP
    >>> ms.addData([(1, "a"), (2, "b")])                      # doctest: +SKIP
    0
    >>> df = ms.toDF()                                        # doctest: +SKIP

``MemorySink``: the rows of every batch appended to an in-memory table registered as a
temporary view named after the query (``session.table(queryName)``, SQL); a batch id at or below
the last one added is ignored.  Spark refuses to restart a memory-sink query in append mode from a
checkpoint (the writer checks that), so the table holds the rows of one run.
"""

from __future__ import annotations

import threading
from typing import TYPE_CHECKING, Any

import pyarrow as pa

from ember import types as T
from ember.dataframe import DataFrame
from ember.errors import AnalysisError
from ember.expressions.base import AttributeReference
from ember.plans.logical.nodes import StreamingRelation, LocalRelation
from ember.session import parse_ddl_schema, _to_arrow_table

if TYPE_CHECKING:  # pragma: no cover
    from ember.session import Session

__all__ = ["MemoryStream", "MemorySink"]


def _struct(schema: Any) -> T.StructType:
    schema = T.as_ember_type(schema)
    if isinstance(schema, T.StructType):
        return schema
    if isinstance(schema, str):
        return parse_ddl_schema(schema)
    raise AnalysisError(f"MemoryStream needs a schema (StructType or DDL string), not {schema!r}")


class MemoryStream:
    """A stream of rows added by the program (Spark's ``MemoryStream``).

    ``MemoryStream(session, schema)``; ``schema`` is a StructType or a DDL string.  Also built by
    ``readStream.format("memory")`` through the source registry (``options`` / ``path`` are then
    ignored).
    """

    def __init__(self, session: "Session", schema: Any, options: dict[str, str] | None = None,
                 path: str | None = None, *, metadata_path: str | None = None) -> None:
        self.session = session
        self.schema = _struct(schema)
        self._arrow = self.schema.to_arrow_schema()
        self._lock = threading.Lock()
        self._blocks: list[pa.Table] = []
        #: offset of ``_blocks[0]`` (blocks before it were committed and dropped)
        self._first = 0
        self._current = -1
        self._attrs = tuple(AttributeReference(f.name, f.data_type, f.nullable)
                            for f in self.schema.fields)

    # -- the program's side ----------------------------------------------------------------------
    def addData(self, data: Any) -> int:  # noqa: N802
        """Append rows (a list of tuples / dicts / Rows, a pandas DataFrame or an Arrow table)
        as one block; returns the new offset."""
        table = self._to_table(data)
        with self._lock:
            self._blocks.append(table)
            self._current += 1
            return self._current

    add_data = addData

    def _to_table(self, data: Any) -> pa.Table:
        if isinstance(data, (pa.Table, pa.RecordBatch)):
            table = pa.Table.from_batches([data]) if isinstance(data, pa.RecordBatch) else data
            if table.num_columns != len(self._arrow):
                raise AnalysisError(
                    f"MemoryStream: {table.num_columns} columns added to a stream of "
                    f"{len(self._arrow)}", error_class="LENGTH_SHOULD_BE_THE_SAME")
            cols = [c.cast(f.type) for c, f in zip(table.columns, self._arrow)]
            return pa.Table.from_arrays(cols, schema=self._arrow)
        if isinstance(data, tuple) and not isinstance(data[0] if data else None,
                                                      (tuple, list, dict)):
            data = [data]
        table = _to_arrow_table(list(data) if not hasattr(data, "columns") else data,
                                self.schema, self.session.sql_conf.time_zone)
        cols = [c.cast(f.type) for c, f in zip(table.columns, self._arrow)]
        return pa.Table.from_arrays(cols, schema=self._arrow)

    def toDF(self) -> "DataFrame":  # noqa: N802
        """The stream as a streaming DataFrame."""

        return DataFrame(self.session, StreamingRelation("memory", self._attrs, source=self))

    # -- Source API ------------------------------------------------------------------------------
    def latest_offset(self) -> int | None:
        with self._lock:
            return None if self._current < 0 else self._current

    def get_batch(self, start: Any, end: Any) -> pa.Table:
        lo = -1 if start is None else int(start)
        hi = int(end)
        with self._lock:
            picked = [self._blocks[i - self._first] for i in range(lo + 1, hi + 1)
                      if 0 <= i - self._first < len(self._blocks)]
        if not picked:
            return self._arrow.empty_table()
        return pa.concat_tables(picked)

    def commit(self, end: Any) -> None:
        """Drop the blocks up to ``end`` (Spark's ``MemoryStream.commit``)."""
        hi = int(end)
        with self._lock:
            drop = max(0, min(len(self._blocks), hi + 1 - self._first))
            del self._blocks[:drop]
            self._first += drop

    def stop(self) -> None:
        """Nothing to release (the blocks stay for a restarted query)."""

    def __str__(self) -> str:
        return "MemoryStream[" + ",".join(a.simple_string() for a in self._attrs) + "]"

    __repr__ = __str__


class MemorySink:
    """Appends each batch's rows to a table registered as view ``queryName``."""

    def __init__(self, session: "Session", options: dict[str, str] | None, path: str | None = None,
                 *, schema: T.StructType | None = None) -> None:
        opts = {str(k).lower(): str(v) for k, v in (options or {}).items()}
        name = opts.get("queryname")
        if not name:
            raise AnalysisError("queryName must be specified for memory sink",
                                error_class="_LEGACY_ERROR_TEMP_1301")
        self.session = session
        self.name = name
        self._lock = threading.Lock()
        self._batches: list[pa.Table] = []
        self._latest: int | None = None
        self._attrs: tuple[AttributeReference, ...] | None = None
        if schema is not None:
            self._register(schema.to_arrow_schema())

    def _register(self, schema: pa.Schema) -> None:
        if self._attrs is None:
            self._attrs = tuple(AttributeReference(f.name, T.from_arrow(f.type), f.nullable)
                                for f in schema)
        arrow = pa.schema([pa.field(a.name, a.data_type.to_arrow()) for a in self._attrs])
        data = (pa.concat_tables([t.cast(arrow) for t in self._batches]) if self._batches
                else arrow.empty_table())
        self.session.session_catalog.create_temp_view(
            self.name, LocalRelation(self._attrs, data), replace=True)

    def add_batch(self, batch_id: int, data: pa.Table) -> None:
        with self._lock:
            if self._latest is not None and batch_id <= self._latest:
                return
            self._batches.append(data)
            self._latest = batch_id
            self._register(data.schema)

    @property
    def latest_batch_id(self) -> int | None:
        return self._latest

    def all_data(self) -> pa.Table | None:
        """Every row added so far (None before the first batch)."""
        with self._lock:
            return pa.concat_tables(self._batches) if self._batches else None

    def __str__(self) -> str:
        return "MemorySink"
