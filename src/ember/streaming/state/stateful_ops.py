"""The state of streaming aggregations and deduplications, one partition and micro-batch at a
time (Spark's ``StateStoreRestoreExec`` / ``StateStoreSaveExec`` with state format 2, and
``StreamingDeduplicateExec`` / ``StreamingDeduplicateWithinWatermarkExec``), vectorized over
Arrow tables.

Both keep one store per partition, ``<checkpoint>/state/<operatorId>/<partition>/default``
(:mod:`.store`); batch ``N`` opens version ``N`` and commits ``N + 1``, so a batch that is run
again after a crash starts from the same state.

* Aggregation: key = the grouping columns (a constant ``0`` for a global aggregation: a store
  key needs a column), value = the aggregation buffers (the aggregate protocol's partial
  buffers, ``buffer_fields``).  :func:`restore_aggregation` returns the batch's merged rows and
  the stored buffers of their keys, for the merge above it; :func:`save_aggregation` stores
  the merged buffers and returns what the output mode emits.
* Deduplication: key = the deduplication columns, value = nothing worth storing (one NULL
  byte) or, within the watermark, the key's expiry in microseconds (its first row's event time
  plus the watermark delay).

Event times are compared in microseconds with the watermark in milliseconds times 1000, as
Spark does; a window struct's event time is its ``end``.  "At or below the watermark" is late
or evictable (Spark's ``LessThanOrEqual``).
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from ember.streaming.state.rows import RowCodec
from ember.streaming.state.store import StateStore, StateStoreId, get_state_store

__all__ = ["StoreAt", "restore_aggregation", "save_aggregation", "deduplicate",
           "event_time_micros"]

_GLOBAL_KEY = pa.schema([pa.field("k", pa.int8(), False)])
_DEDUP_VALUE = pa.schema([pa.field("v", pa.int8())])
_EXPIRY_VALUE = pa.schema([pa.field("expiresAt", pa.int64())])


@dataclass(frozen=True, slots=True)
class StoreAt:
    """Which store and version one partition of one operator opens in this batch."""

    checkpoint_location: str
    operator_id: int
    partition_id: int
    version: int
    conf: object = None

    def open(self, key_schema: pa.Schema, value_schema: pa.Schema) -> StateStore:
        sid = StateStoreId(self.checkpoint_location, self.operator_id, self.partition_id)
        return get_state_store(sid, key_schema, value_schema, self.version, self.conf)


def event_time_micros(column: pa.Array | pa.ChunkedArray) -> np.ndarray:
    """Microseconds since the epoch of an event-time column (a timestamp, or a window struct:
    its ``end``); NULL as the minimum (never late, never kept from eviction by a NULL)."""
    if isinstance(column, pa.ChunkedArray):
        column = column.combine_chunks() if column.num_chunks != 1 else column.chunk(0)
    if pa.types.is_struct(column.type):
        column = column.field(1)
    if pa.types.is_timestamp(column.type) and column.type.unit != "us":
        column = column.cast(pa.timestamp("us", column.type.tz))
    ints = column.view(pa.int64()) if pa.types.is_timestamp(column.type) else column.cast(
        pa.int64())
    return pc.fill_null(ints, np.iinfo(np.int64).min).to_numpy(zero_copy_only=False)


def _positional(table: pa.Table, prefix: str, nullable: bool = True) -> pa.Table:
    """``table`` with its columns named ``<prefix>0..`` (attribute names may repeat)."""
    fields = [pa.field(f"{prefix}{i}", f.type, nullable) for i, f in enumerate(table.schema)]
    return pa.Table.from_arrays(list(table.columns), schema=pa.schema(fields))


class _AggregationLayout:
    """How one aggregation's rows (keys then buffers) map to store keys and values."""

    def __init__(self, schema: pa.Schema, num_keys: int) -> None:
        self.schema = schema
        self.num_keys = num_keys
        if num_keys:
            self.key_schema = _positional(schema.empty_table().select(range(num_keys)),
                                          "k").schema
        else:
            self.key_schema = _GLOBAL_KEY
        self.value_schema = _positional(
            schema.empty_table().select(range(num_keys, len(schema))), "v").schema

    def split(self, rows: pa.Table) -> tuple[pa.Table, pa.Table]:
        if self.num_keys:
            keys = pa.Table.from_arrays(rows.columns[:self.num_keys], schema=self.key_schema)
        else:
            keys = pa.table({"k": pa.array(np.zeros(rows.num_rows, np.int8))},
                            schema=_GLOBAL_KEY)
        values = pa.Table.from_arrays(rows.columns[self.num_keys:], schema=self.value_schema)
        return keys, values

    def join(self, keys: pa.Table, values: pa.Table) -> pa.Table:
        cols = (list(keys.columns) if self.num_keys else []) + list(values.columns)
        return pa.Table.from_arrays([c.cast(f.type) if c.type != f.type else c
                                     for c, f in zip(cols, self.schema)], schema=self.schema)


def _commit(store: StateStore, m: dict[str, int], t0: float, t1: float) -> None:
    """Commit ``store``; add to ``m`` the update (``t0``-``t1``), removal and commit times and
    the state's size, as Spark's StateStoreWriter metrics."""
    t2 = time.perf_counter()
    metrics = store.metrics()
    store.commit()
    m.update(allUpdatesTimeMs=int((t1 - t0) * 1000), allRemovalsTimeMs=int((t2 - t1) * 1000),
             commitTimeMs=int((time.perf_counter() - t2) * 1000),
             numTotalStateRows=metrics["numKeys"],
             stateMemory=metrics.get("memoryUsedBytes", 0))


def restore_aggregation(at: StoreAt, rows: pa.Table, num_keys: int) -> pa.Table:
    """The stored rows of the keys of ``rows`` (keys then buffers, one row per key), followed
    by ``rows`` (Spark's ``StateStoreRestoreExec``: the state first, so that ``first()`` keeps
    the value of the earliest batch)."""
    layout = _AggregationLayout(rows.schema, num_keys)
    store = at.open(layout.key_schema, layout.value_schema)
    try:
        keys, _ = layout.split(rows)
        found, values = store.get(keys)
        idx = pa.array(np.flatnonzero(found))
        restored = layout.join(keys.take(idx), values.take(idx))
    finally:
        store.abort()
    return pa.concat_tables([restored, rows])


def _late_mask(rows: pa.Table, ordinal: int | None, watermark_ms: int | None) -> np.ndarray | None:
    if ordinal is None or watermark_ms is None:
        return None
    return event_time_micros(rows.column(ordinal)) <= watermark_ms * 1000


def save_aggregation(at: StoreAt, rows: pa.Table, num_keys: int, output_mode: str,
                     event_time_ordinal: int | None, late_watermark_ms: int | None,
                     eviction_watermark_ms: int | None) -> tuple[pa.Table, dict[str, int]]:
    """Store the merged ``rows`` and return ``(output rows, metrics)`` (Spark's
    ``StateStoreSaveExec``, see :class:`~ember.physical.streaming.nodes.StateStoreSaveExec`).
    ``event_time_ordinal``: the key column with the watermark (None: nothing is late or
    evicted)."""
    layout = _AggregationLayout(rows.schema, num_keys)
    store = at.open(layout.key_schema, layout.value_schema)
    m = {"numRowsDroppedByWatermark": 0, "numUpdatedStateRows": 0, "numRemovedStateRows": 0}
    t0 = time.perf_counter()
    try:
        if output_mode != "complete":
            late = _late_mask(rows, event_time_ordinal, late_watermark_ms)
            if late is not None and late.any():
                m["numRowsDroppedByWatermark"] = int(late.sum())
                rows = rows.filter(pa.array(~late))
        keys, values = layout.split(rows)
        store.put(keys, values)
        m["numUpdatedStateRows"] = rows.num_rows
        t1 = time.perf_counter()
        out = rows
        if output_mode == "complete":
            out = layout.join(*store.scan())
        elif event_time_ordinal is not None and eviction_watermark_ms is not None:
            all_keys, all_values = store.scan()
            all_rows = layout.join(all_keys, all_values)
            evict = _late_mask(all_rows, event_time_ordinal, eviction_watermark_ms)
            assert evict is not None
            idx = pa.array(np.flatnonzero(evict))
            store.remove(all_keys.take(idx))
            m["numRemovedStateRows"] = len(idx)
            if output_mode == "append":
                out = all_rows.take(idx)
        elif output_mode == "append":
            out = rows.slice(0, 0)
        _commit(store, m, t0, t1)
    except BaseException:
        store.abort()
        raise
    return out, m


def deduplicate(at: StoreAt, rows: pa.Table, key_ordinals: list[int],
                event_time_ordinal: int | None, event_time_is_key: bool,
                late_watermark_ms: int | None, eviction_watermark_ms: int | None,
                within_delay_ms: int | None) -> tuple[pa.Table, dict[str, int]]:
    """The rows of ``rows`` whose keys were never seen (the first of each key in the batch),
    and the metrics (Spark's ``StreamingDeduplicateExec``; ``within_delay_ms`` not None: its
    ``WithinWatermark`` variant, keys expiring ``delay`` after their first event time)."""
    keys_schema = _positional(rows.select(key_ordinals), "k").schema
    value_schema = _EXPIRY_VALUE if within_delay_ms is not None else _DEDUP_VALUE
    store = at.open(keys_schema, value_schema)
    m = {"numRowsDroppedByWatermark": 0, "numDroppedDuplicateRows": 0, "numRemovedStateRows": 0}
    t0 = time.perf_counter()
    try:
        late = _late_mask(rows, event_time_ordinal, late_watermark_ms)
        if late is not None and late.any():
            m["numRowsDroppedByWatermark"] = int(late.sum())
            rows = rows.filter(pa.array(~late))
        keys = pa.Table.from_arrays(rows.select(key_ordinals).columns, schema=keys_schema)
        bins = RowCodec(keys_schema).encode(keys.columns, keys.num_rows, canonical=True)
        first = ~pd.Index(bins.to_numpy(zero_copy_only=False), dtype=object).duplicated()
        idx = np.flatnonzero(first)
        found, _ = store.get(keys.take(pa.array(idx)))
        fresh = pa.array(idx[~found])
        new_keys = keys.take(fresh)
        if within_delay_ms is not None:
            assert event_time_ordinal is not None
            expiry = event_time_micros(rows.column(event_time_ordinal).take(fresh))
            values = pa.table({"expiresAt": pa.array(expiry + within_delay_ms * 1000)})
        else:
            values = pa.table({"v": pa.nulls(len(fresh), pa.int8())})
        store.put(new_keys, values)
        out = rows.take(fresh)
        m["numDroppedDuplicateRows"] = rows.num_rows - len(fresh)
        m["numUpdatedStateRows"] = len(fresh)
        t1 = time.perf_counter()
        if eviction_watermark_ms is not None and (within_delay_ms is not None
                                                  or event_time_is_key):
            all_keys, all_values = store.scan()
            if within_delay_ms is not None:
                expires = pc.fill_null(all_values.column(0), 0).to_numpy(zero_copy_only=False)
                evict = eviction_watermark_ms * 1000 >= expires
            else:
                pos = key_ordinals.index(event_time_ordinal)  # type: ignore[arg-type]
                evict = event_time_micros(all_keys.column(pos)) <= eviction_watermark_ms * 1000
            gone = pa.array(np.flatnonzero(evict))
            store.remove(all_keys.take(gone))
            m["numRemovedStateRows"] = len(gone)
        _commit(store, m, t0, t1)
    except BaseException:
        store.abort()
        raise
    return out, m
