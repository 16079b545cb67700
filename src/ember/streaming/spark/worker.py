"""What runs inside Spark's Python workers for a streaming query on the Spark runtime.

Three ``mapInArrow`` bodies and one stateful processor, all module-level so Spark ships them by
reference (cloudpickle pickles the small specs, the executor imports :mod:`ember`):

- :func:`run_stage`: Ember's row-wise physical operators (Project, Filter, Expand, stream-static
  broadcast joins) over each Arrow batch of a stream: a :class:`StageSpec` plan whose leaf is
  ``SparkInputExec(0)`` run on the local runtime's operators
  (:class:`ember.runtime.spark.worker.TaskRuntime`), a static side's rows read from its Spark
  broadcast as the batch runtime reads its broadcasts (the hashed relation built once per
  worker).
- :func:`pack_side`: a join side's operators above its watermark, then each output row packed
  for the join's state partitions: ``(__p int, __side int, __et timestamp, __row binary)`` with
  ``__p`` the row's Ember state partition (the local runtime's hash of the join keys modulo the
  number of state partitions, as ``Exchange hashpartitioning(keys, n)`` routes it), ``__et`` the
  side's event time (NULL when the side has none; Spark's transformWithState drops rows whose
  ``__et`` is at or below the previous batch's watermark, the join's late-row rule) and
  ``__row`` the whole row in the binary row layout of :mod:`ember.streaming.state.rows`
  (vectorized, type-exact through pandas).
- :func:`unpack_output`: the join's output blobs decoded and the operators above the join run.
- :class:`EmberJoinProcessor`: the ``transformWithStateInPandas`` processor.  One grouping key
  is one Ember state partition; ``handleInputRows`` decodes the partition's rows of this batch
  and runs :meth:`SymmetricHashJoin.process_partition` (left pass, right pass, outer rows,
  cleanup) with the batch's eviction watermark (``TimerValues``), its state in Spark's state
  store.  An event-time timer at ``watermark + 1`` calls the partition again
  (``handleExpiredTimer``, empty input) in the first batch whose watermark is higher, so state
  is evicted and outer rows are emitted in batches without input, as the local runtime's
  no-data batches do for every partition.

State layout (per grouping key = state partition, in Spark's RocksDB state store): one
``ValueState`` ``data binary`` per Ember store of the partition (``left-keyToNumValues``,
``left-keyWithIndexToValue``, ``right-...``, state format version 2), holding the store's
whole map as one Arrow IPC stream of ``key`` / ``value`` struct columns
(:class:`SparkStateStore`).  A batch loads the stores it touches, runs the join over them in
memory and writes back only the stores that changed, so Spark's checkpoint, versioning,
retries and recovery are the state's; Ember's checkpoint files are not used.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
from pyspark.sql.streaming.stateful_processor import StatefulProcessor

from ember.conf import SQLConf
from ember.execution.kernels.batches import conform_batch, schema_of
from ember.runtime.spark.worker import (TaskFailure, TaskRuntime, decode, encode_table,
                                         maybe_crash)
from ember.streaming.state.rows import decode_rows, encode_rows, RowCodec
from ember.streaming.state.store import StateStore, StateStoreId, empty_table
from ember.execution.prepare import prepare
from ember.runtime.local.exchange import key_arrays
from ember.runtime.local.hashing import partition_ids
from ember.streaming.join.operator import StateInfo, SymmetricHashJoin
from ember.streaming.state.join_state import state_store_names
from ember.streaming.state.memory import _Map

__all__ = ["StageSpec", "PackSpec", "JoinSpec", "run_stage", "pack_side", "unpack_output",
           "EmberJoinProcessor", "SparkStateStore", "PACKED_DDL", "item_bytes"]

#: the rows handed to transformWithState (the grouping key first)
PACKED_DDL = "__p int, __side int, __et timestamp, __row binary"
#: the join's output as transformWithState emits it: one IPC stream per partition and call
OUTPUT_DDL = "blob binary"


# ---------------------------------------------------------------------------------------------
# Row-wise stages


@dataclass(frozen=True, slots=True)
class StageSpec:
    """Ember operators over one stream: ``plan`` (its leaf ``SparkInputExec(0)`` of
    ``input_attrs``; None = no operator), the session's settings, a label for errors and the
    static sides' broadcasts (``(plan_id of the BroadcastExchangeExec, pyspark Broadcast)``)."""

    plan: Any
    input_attrs: tuple[Any, ...]
    conf: tuple[tuple[str, str], ...]
    label: str
    broadcasts: tuple[tuple[int, Any], ...] = ()

    def run(self, batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        schema = schema_of(self.input_attrs)
        inputs = (conform_batch(b, schema) for b in batches if b.num_rows)
        if self.plan is None:
            yield from inputs
            return
        with TaskRuntime(SQLConf(dict(self.conf)), [inputs]) as rt:
            if self.broadcasts:
                rt.seed_broadcasts(self.plan, dict(self.broadcasts))
            for part in rt.execute(self.plan):
                for b in part():
                    if b.num_rows:
                        yield b
            rt.keep_relations()


def item_bytes(item: Any) -> int:
    """The Arrow bytes of an element of the Spark runtime's RDDs (a blob, or a record batch
    handed over in process)."""
    return item.nbytes if isinstance(item, pa.RecordBatch) else len(item)


def _guard(label: str, items: Iterator[Any]) -> Iterator[Any]:
    """Any failure crosses to the driver as a :class:`TaskFailure` (the Ember error pickled),
    which :func:`ember.runtime.spark.errors.original_error` recovers."""
    try:
        yield from items
    except Exception as e:  # noqa: BLE001 - every failure crosses to the driver pickled
        raise TaskFailure.of(e, label, 0) from None


def run_stage(spec: StageSpec, out_schema: pa.Schema,
              batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
    """``mapInArrow`` body: ``spec``'s operators, output cast to Spark's Arrow types."""
    def go() -> Iterator[pa.RecordBatch]:
        for b in spec.run(batches):
            yield conform_batch(b, out_schema)

    return _guard(spec.label, go())


@dataclass(frozen=True, slots=True)
class PackSpec:
    """One join side: its operators above the watermark (``stage``), which side it is, its
    join keys (over the stage's output), its event-time column and the number of state
    partitions."""

    stage: StageSpec
    side: int
    keys: tuple[Any, ...]
    output: tuple[Any, ...]
    event_time: int | None
    num_partitions: int
    #: a join state TTL is set: also one empty "tick" row (``__side`` 2) per state partition,
    #: so every partition runs (and expires its rows) in every batch, as on the local runtime
    tick: bool = False


def pack_side(spec: PackSpec, out_schema: pa.Schema,
              batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
    """``mapInArrow`` body: the side's rows as ``PACKED_DDL`` rows (module docstring)."""

    def go() -> Iterator[pa.RecordBatch]:
        schema = schema_of(spec.output)
        bound = [prepare(k, spec.output) for k in spec.keys]
        et_type = out_schema.field(2).type
        for b in spec.stage.run(batches):
            b = conform_batch(b, schema)
            n = b.num_rows
            pids = partition_ids(key_arrays(bound, b), spec.num_partitions)
            if spec.event_time is None:
                et = pa.nulls(n, et_type)
            else:
                et = _event_time(b.column(spec.event_time), et_type)
            yield pa.RecordBatch.from_arrays(
                [pa.array(pids.astype(np.int32)), pa.array(np.full(n, spec.side, np.int32)),
                 et, encode_rows(b)], schema=out_schema)
        if spec.tick:
            n = spec.num_partitions
            yield pa.RecordBatch.from_arrays(
                [pa.array(np.arange(n, dtype=np.int32)), pa.array(np.full(n, 2, np.int32)),
                 pa.nulls(n, et_type), pa.array([b""] * n, pa.binary())], schema=out_schema)

    return _guard(spec.stage.label, go())


def _event_time(col: pa.Array, t: pa.DataType) -> pa.Array:
    """The side's event time as a timestamp: a window struct by its ``end`` (field 1), as
    Spark's watermark predicate reads it."""
    if pa.types.is_struct(col.type):
        col = pc.if_else(col.is_valid(), col.field(1), pa.nulls(len(col), col.type.field(1).type))
    return col.cast(t)


def unpack_output(spec: StageSpec, out_schema: pa.Schema,
                  batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
    """``mapInArrow`` body: the join's output blobs, then the operators above the join."""
    def blobs() -> Iterator[pa.RecordBatch]:
        for b in batches:
            col = b.column(0)
            for i in range(len(col)):  # one blob per partition and call, not per data row
                yield from decode(col[i].as_buffer())

    return run_stage(spec, out_schema, blobs())


# ---------------------------------------------------------------------------------------------
# The join in Spark's state


class SparkStateStore(StateStore):
    """One Ember state store of one partition held in a Spark ``ValueState`` (one IPC blob
    of the whole map).  Reads and writes run in memory over the map of
    :mod:`ember.streaming.state.memory`; :meth:`commit` writes the blob back when something
    changed (an empty map clears the value)."""

    def __init__(self, value_state: Any, key_schema: pa.Schema, value_schema: pa.Schema) -> None:
        self.key_schema = key_schema
        self.value_schema = value_schema
        self._state = value_state
        self._codec = RowCodec(key_schema)
        keys, values = empty_table(key_schema), empty_table(value_schema)
        if value_state.exists():
            blob = value_state.get()[0]
            t = pa.ipc.open_stream(pa.py_buffer(blob)).read_all()
            keys = _unstruct(t.column(0), key_schema)
            values = _unstruct(t.column(1), value_schema)
        self._map = _Map(keys, values, self._bins(keys))
        self._dirty = False
        self._open = True

    def _bins(self, keys: pa.Table) -> np.ndarray:
        return self._codec.encode(keys.columns, keys.num_rows, canonical=True).to_numpy(
            zero_copy_only=False)

    @property
    def version(self) -> int:
        return 0  # Spark versions the state

    def get(self, keys: pa.Table) -> tuple[np.ndarray, pa.Table]:
        pos = self._map.positions(self._bins(keys))
        found = pos >= 0
        return found, self._map.values.take(pa.array(pos, mask=~found))

    def put(self, keys: pa.Table, values: pa.Table) -> None:
        if not keys.num_rows:
            return
        keys = keys.cast(self.key_schema) if keys.schema != self.key_schema else keys
        values = values.cast(self.value_schema) if values.schema != self.value_schema else values
        self._map = self._map.put(keys, values, self._bins(keys))
        self._dirty = True

    def remove(self, keys: pa.Table) -> None:
        if not keys.num_rows or not len(self._map):
            return
        before = len(self._map)
        keys = keys.cast(self.key_schema) if keys.schema != self.key_schema else keys
        self._map = self._map.remove(self._bins(keys))
        self._dirty |= len(self._map) != before

    def scan(self) -> tuple[pa.Table, pa.Table]:
        return self._map.keys, self._map.values

    def num_keys(self) -> int:
        return len(self._map)

    def commit(self) -> int:
        if self._open and self._dirty:
            if len(self._map):
                table = pa.table({"key": _struct(self._map.keys),
                                  "value": _struct(self._map.values)})
                self._state.update((encode_table(table),))
            else:
                self._state.clear()
        self._open = False
        return 1

    def abort(self) -> None:
        self._open = False

    def metrics(self) -> dict[str, int]:
        m = self._map
        return {"numKeys": len(m), "memoryUsedBytes": int(m.keys.nbytes + m.values.nbytes)}


def _struct(table: pa.Table) -> pa.Array:
    cols = [c.combine_chunks() for c in table.columns]
    return pa.StructArray.from_arrays(cols, fields=list(table.schema))


def _unstruct(arr: pa.ChunkedArray, schema: pa.Schema) -> pa.Table:
    arr = arr.combine_chunks()
    if [f.name for f in arr.type] != schema.names:
        # a layout written with(out) the TTL's insertTimeMs column: by name, missing as NULL
        names = [f.name for f in arr.type]
        return pa.Table.from_arrays(
            [arr.field(names.index(f.name)) if f.name in names else pa.nulls(len(arr), f.type)
             for f in schema], schema=schema)
    return pa.Table.from_arrays([arr.field(i) for i in range(arr.type.num_fields)],
                                schema=schema)


@dataclass(frozen=True, slots=True)
class JoinSpec:
    """What the processor needs of the ``StreamingSymmetricHashJoinExec``."""

    left_keys: tuple[Any, ...]
    right_keys: tuple[Any, ...]
    join_type: Any
    condition: Any
    left_output: tuple[Any, ...]
    right_output: tuple[Any, ...]
    state_format_version: int
    num_partitions: int
    event_time: bool  # some side has a watermark (timeMode EventTime, timers)
    conf: tuple[tuple[str, str], ...]
    label: str


class EmberJoinProcessor(StatefulProcessor):
    """``transformWithStateInPandas`` processor running Ember's symmetric hash join for one
    state partition per grouping key (see the module docstring)."""

    def __init__(self, spec: JoinSpec) -> None:
        self.spec = spec

    def init(self, handle: Any) -> None:
        self.handle = handle
        self.values: dict[str, Any] = {}
        for side in ("left", "right"):
            for name in state_store_names(side):
                self.values[name] = handle.getValueState(name, "data binary")
        self.conf = SQLConf(dict(self.spec.conf))

    def handleInputRows(self, key: Any, rows: Iterator[Any],  # noqa: N802
                        timerValues: Any) -> Iterator[Any]:  # noqa: N803
        left, right = self._decode(rows)
        yield from _guard(self.spec.label, self._run(
            int(key[0]), left, right, timerValues.getCurrentWatermarkInMs(), from_timer=False,
            processing_ms=timerValues.getCurrentProcessingTimeInMs()))

    def handleExpiredTimer(self, key: Any, timerValues: Any,  # noqa: N802,N803
                           expiredTimerInfo: Any) -> Iterator[Any]:  # noqa: N803
        s = self.spec
        left, right = schema_of(s.left_output).empty_table(), \
            schema_of(s.right_output).empty_table()
        yield from _guard(s.label, self._run(
            int(key[0]), left, right, timerValues.getCurrentWatermarkInMs(), from_timer=True,
            processing_ms=timerValues.getCurrentProcessingTimeInMs()))

    def close(self) -> None:
        pass

    # -- the join of one partition --------------------------------------------------------------
    def _decode(self, rows: Iterator[Any]) -> tuple[pa.Table, pa.Table]:
        """This batch's rows of the partition (pandas frames of PACKED_DDL, positional)."""
        import pandas as pd

        frames = [f for f in rows if len(f)]
        s = self.spec
        if not frames:
            return (schema_of(s.left_output).empty_table(),
                    schema_of(s.right_output).empty_table())
        frame = pd.concat(frames, ignore_index=True) if len(frames) > 1 else frames[0]
        side = frame.iloc[:, 1].to_numpy()
        packed = pa.array(frame.iloc[:, 3].to_numpy(dtype=object), type=pa.binary())
        out = []
        for i, attrs in ((0, s.left_output), (1, s.right_output)):
            sel = np.flatnonzero(side == i)
            schema = schema_of(attrs)
            out.append(decode_rows(packed.take(pa.array(sel)), schema) if len(sel)
                       else schema.empty_table())
        return out[0], out[1]

    def _run(self, pid: int, left: pa.Table, right: pa.Table, watermark_ms: int,
             from_timer: bool, processing_ms: int = -1) -> Iterator[Any]:
        import pandas as pd


        s = self.spec
        eviction = max(int(watermark_ms), 0) if s.event_time else None
        opened: list[SparkStateStore] = []

        def open_store(store_id: StateStoreId, key_schema: pa.Schema, value_schema: pa.Schema,
                       version: int, conf: Any) -> StateStore:
            store = SparkStateStore(self.values[store_id.store_name], key_schema, value_schema)
            opened.append(store)
            return store

        # late rows were dropped by Spark (the __et column): no late watermark here
        join = SymmetricHashJoin(
            s.left_keys, s.right_keys, s.join_type, s.condition, s.left_output, s.right_output,
            StateInfo("", 0, 0, s.num_partitions), None, eviction, self.conf,
            state_format_version=s.state_format_version, store_factory=open_store,
            batch_timestamp_ms=int(processing_ms) if processing_ms >= 0 else None)
        out = join.process_partition(pid, left, right)
        if eviction is not None:
            self._reschedule(eviction, any(st.num_keys() for st in opened), from_timer)
        if out.num_rows:
            yield pd.DataFrame({"blob": [encode_table(out)]})
        # test hook (ember.spark.test.killWorkerOnce): the worker dies after this partition's
        # state writes and output, before the task ends; Spark retries the task from the
        # last committed state version
        maybe_crash(self.conf, 0)

    def _reschedule(self, watermark_ms: int, has_state: bool, from_timer: bool) -> None:
        """One timer per partition holding state, at ``watermark + 1``: the partition runs
        again in the first batch whose watermark is higher.  (An expired timer is deleted by
        PySpark after ``handleExpiredTimer``.)"""
        due = watermark_ms + 1
        existing = [] if from_timer else list(self.handle.listTimers())
        for t in existing:
            if t != due or not has_state:
                self.handle.deleteTimer(t)
        if has_state and due not in existing:
            self.handle.registerTimer(due)
