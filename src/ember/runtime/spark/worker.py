"""What runs inside Spark's Python workers: one region of an Ember physical plan per task.

Every function here is module-level, so Spark ships it by reference (``cloudpickle`` pickles
``functools.partial(worker.run_one, spec, sink)`` as a name plus the small ``spec``) and the
executor imports :mod:`ember` to run it.

Data model
----------
An RDD element is an Arrow IPC stream holding one record batch (:func:`encode` /
:func:`decode`), except between a shuffle's map and reduce sides, where it is the pair
``(target partition, blob)`` that ``RDD.partitionBy`` routes.

A task runs a :class:`RegionSpec`: a physical subtree whose boundaries are
:class:`~ember.runtime.spark.nodes.SparkInputExec` leaves, on a :class:`TaskRuntime` (the local
runtime's operators, one partition, no threads of its own).  Its output batches go to a *sink*:
:func:`blobs` (encode each batch), :class:`ShuffleSink` (cut each batch by target partition) or
:class:`SampleSink` (sort keys sampled for a range partitioning).

Errors
------
Any exception in a task is re-raised as :class:`TaskFailure`, whose message carries the pickled
original between ``EMBER_TASK_ERROR[`` and ``]``; the driver
(:func:`ember.runtime.spark.errors.raise_task_error`) finds it in Spark's error text and raises
the original Ember error, annotated with the operator that raised it.
"""

from __future__ import annotations

import base64
import gc
import os
import pickle
from collections import OrderedDict
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pyarrow as pa

import ember.expressions.registry  # noqa: F401  (function specs, as the driver has them)
from ember.conf import SPARK_TEST_KILL_WORKER_ONCE, SQLConf
from ember.execution.kernels.batches import concat, conform_batch, make_batch, schema_of, take
from ember.runtime.local.progress import ProgressBar
from ember.runtime.local.registry import PartitionFn, operator
from ember.runtime.local.runtime import BroadcastValue, LocalRuntime
from ember.runtime.spark.nodes import NestedLoopPartExec, SparkInputExec
from ember import types as T
from ember.errors import EmberError, InternalError
from ember.execution.prepare import prepare
from ember.expressions.decimals import from_unscaled
from ember.physical.nodes import BroadcastExchangeExec, ReusedExchangeExec, BuildSide
from ember.physical.partitioning import (
    HashPartitioning, RangePartitioning, RoundRobinPartitioning, UnknownPartitioning,
)
from ember.runtime.local.exchange import key_arrays, range_pids
from ember.runtime.local.hashing import partition_ids
from ember.runtime.local.joins import nested_loop_join as nlj
from ember.runtime.local.joins.common import layout_of
from ember.types import IntegralType, StringType

__all__ = ["encode", "decode", "RegionSpec", "TaskRuntime", "run_one", "run_zipped",
           "run_pair", "blobs", "ShuffleSink", "SampleSink", "target_of", "TaskFailure",
           "maybe_crash", "KeyCollector", "KeySetParam", "distinct_values"]

ERROR_MARK = "EMBER_TASK_ERROR["


# ---------------------------------------------------------------------------------------------
# Arrow IPC blobs


def encode(batch: pa.RecordBatch) -> bytes:
    """One record batch as an Arrow IPC stream (schema and batch)."""
    sink = pa.BufferOutputStream()
    with pa.ipc.new_stream(sink, batch.schema) as w:
        w.write_batch(batch)
    return sink.getvalue().to_pybytes()


def encode_table(table: pa.Table) -> bytes:
    """A whole table as one IPC stream."""
    sink = pa.BufferOutputStream()
    with pa.ipc.new_stream(sink, table.schema) as w:
        for b in table.to_batches():
            w.write_batch(b)
    return sink.getvalue().to_pybytes()


def decode(blob: bytes | bytearray | pa.Buffer) -> Iterator[pa.RecordBatch]:
    """The record batches of one IPC stream (zero-copy over ``blob``)."""
    reader = pa.ipc.open_stream(blob if isinstance(blob, pa.Buffer) else pa.py_buffer(blob))
    for b in reader:
        if b.num_columns == 0 and b.num_rows == 0:
            continue
        yield b


def decode_all(items: Iterable[Any]) -> Iterator[pa.RecordBatch]:
    """The batches of a partition's elements: blobs, or record batches handed over in process
    by a source fused into the same Python worker (:func:`spark_arrow_batches`)."""
    for item in items:
        if isinstance(item, pa.RecordBatch):
            yield item
        else:
            yield from decode(item)


def table_of(blobs: Iterable[bytes | bytearray], schema: pa.Schema) -> pa.Table:
    """All rows of ``blobs`` as one table typed ``schema`` (zero columns keep their row count)."""
    batches = [conform_batch(b, schema) for b in decode_all(blobs) if b.num_rows]
    if not len(schema):
        n = sum(b.num_rows for b in batches)
        return pa.Table.from_batches([make_batch([], schema, n)] if n else [], schema=schema)
    return pa.Table.from_batches(batches, schema=schema)


# ---------------------------------------------------------------------------------------------
# The task runtime


@dataclass(frozen=True, slots=True)
class RegionSpec:
    """One region of a plan, as shipped to its tasks.

    ``plan``: the region's operators over ``SparkInputExec`` leaves (a broadcast exchange keeps
    its place, its child replaced by a placeholder).  ``conf``: the session's settings.
    ``broadcasts``: ``(plan_id of the BroadcastExchangeExec, pyspark Broadcast)`` pairs; each
    broadcast's value is ``(key, IPC bytes of its rows)``.  ``label``: the region's root, for
    errors.
    """

    plan: Any
    conf: tuple[tuple[str, str], ...]
    broadcasts: tuple[tuple[int, Any], ...]
    label: str


#: Per Python worker: decoded broadcast tables and their hashed relations, by broadcast key
#: (a worker runs many tasks of one query; the relation is built once per worker).
_BROADCAST_CACHE: OrderedDict[str, list[Any]] = OrderedDict()
_BROADCAST_CACHE_SIZE = 8


class TaskRuntime(LocalRuntime):
    """The local runtime as one Spark task runs it: ``inputs[i]`` are the batches of
    ``SparkInputExec(i)``, broadcasts come from Spark's broadcast variables, and every
    operator names itself on the errors it raises."""

    def __init__(self, conf: SQLConf, inputs: Sequence[Iterator[pa.RecordBatch]]) -> None:
        super().__init__(conf, parallelism=1, progress=ProgressBar(enabled=False))
        self.inputs = list(inputs)
        self._seeded: list[tuple[str, BroadcastValue]] = []

    def seed_broadcasts(self, plan: Any, broadcasts: dict[int, Any]) -> None:
        """Register the broadcast exchanges of ``plan`` (also those behind a reuse) with the
        rows of their Spark broadcast variables."""

        def visit(node: Any) -> None:
            if isinstance(node, ReusedExchangeExec):
                visit(node.child)
            elif isinstance(node, BroadcastExchangeExec):
                key, payload = broadcasts[node.plan_id].value
                hit = _BROADCAST_CACHE.get(key)
                if hit is None:
                    table = table_of([payload], schema_of(node.child.output))
                    hit = _BROADCAST_CACHE[key] = [table, None]
                    while len(_BROADCAST_CACHE) > _BROADCAST_CACHE_SIZE:
                        _BROADCAST_CACHE.popitem(last=False)
                value = BroadcastValue(node, hit[0], self)
                value._relation = hit[1]
                self.broadcasts[node] = value
                self._seeded.append((key, value))
                return
            for c in node.children:
                visit(c)

        visit(plan)

    def keep_relations(self) -> None:
        """Remember the hashed relations this task built for the worker's next tasks."""
        for key, value in self._seeded:
            hit = _BROADCAST_CACHE.get(key)
            if hit is not None and hit[1] is None and value._relation is not None:
                hit[1] = value._relation

    def _instrument(self, node: Any, parts: list[PartitionFn]) -> list[PartitionFn]:
        parts = super()._instrument(node, parts)

        def named(fn: PartitionFn) -> PartitionFn:
            def run() -> Iterator[pa.RecordBatch]:
                try:
                    yield from fn()
                except Exception as e:
                    if getattr(e, "ember_operator", None) is None:
                        try:
                            e.ember_operator = node.simple_string()  # type: ignore[attr-defined]
                        except AttributeError:  # an exception type without a __dict__
                            pass
                    raise

            return run

        return [named(p) for p in parts]


@operator(SparkInputExec)
def run_spark_input(node: SparkInputExec, rt: TaskRuntime) -> list[PartitionFn]:
    """The task's batches of input ``node.index`` (read once)."""
    batches = rt.inputs[node.index]
    schema = schema_of(node.output)

    def run() -> Iterator[pa.RecordBatch]:
        for b in batches:
            if b.num_rows:
                yield conform_batch(b, schema)

    return [run]


@operator(NestedLoopPartExec)
def run_nested_loop_part(node: NestedLoopPartExec, rt: TaskRuntime) -> list[PartitionFn]:
    """A part of a global nested loop join (:class:`NestedLoopPartExec`) over the task's
    stream partition, with the local runtime's kernels."""

    join = node.join
    build_left = join.build_side is BuildSide.LEFT
    build_plan, stream_plan = (join.left, join.right) if build_left else (join.right, join.left)
    layout = layout_of(join, rt.ctx.batch_size, build_left=build_left, rt=rt)
    stream_schema = schema_of(stream_plan.output)
    band = nlj.pruning_of(join, stream_plan, build_plan)

    def run() -> Iterator[pa.RecordBatch]:
        build = nlj.build_side_batch(rt, build_plan)
        if node.part == "unmatched":
            bits = np.unpackbits(np.frombuffer(node.bits, dtype=np.uint8),
                                 count=node.num_build).astype(bool)
            yield from nlj.unmatched_build_rows(layout, build, bits)
            return
        stream = (b for p in rt.execute(stream_plan) for b in p())
        if node.part == "pairs":
            yield from nlj.stream_pairs(layout, build, stream, stream_schema, band)
            return
        bits = nlj.matched_bits(layout, build, stream, stream_schema, band)
        yield pa.RecordBatch.from_arrays([pa.array(bits, type=pa.bool_())], names=["matched"])

    return [run]


_FROZEN = False


def freeze_loaded_heap() -> None:
    """Once per Python worker: move every object alive at the start of its first Ember task
    (modules, classes and functions of Ember, pyarrow, numpy, PySpark) to the garbage
    collector's permanent generation (``gc.freeze``).  PySpark's daemon runs a full
    ``gc.collect()`` after every task of a reused worker; with Ember loaded (about 95k tracked
    objects) each took 17-35 ms between a task's end and the next Python step, on the critical
    path of every stage.  Later collections scan only what tasks create, so a task's cyclic
    garbage is still collected; what is frozen lives as long as the worker anyway."""
    global _FROZEN
    if not _FROZEN:
        _FROZEN = True
        gc.freeze()


def _run_region(spec: RegionSpec, inputs: Sequence[Iterator[pa.RecordBatch]],
                index: int) -> Iterator[pa.RecordBatch]:
    freeze_loaded_heap()
    conf = SQLConf(dict(spec.conf))
    maybe_crash(conf, index)
    yield from execute_region(spec, conf, inputs, index)


def execute_region(spec: RegionSpec, conf: SQLConf, inputs: Sequence[Iterator[pa.RecordBatch]],
                   index: int) -> Iterator[pa.RecordBatch]:
    """The output batches of ``spec``'s region, as task ``index`` computes them (also run on
    the driver for a last single-partition region, see ``SparkRuntime.collect``)."""
    with TaskRuntime(conf, inputs) as rt:
        rt.partition_offset = index
        rt.seed_broadcasts(spec.plan, dict(spec.broadcasts))
        rt.partition_base = index
        parts = rt.execute(spec.plan)
        for p in parts:
            yield from p()
        rt.keep_relations()


def _guarded(spec: RegionSpec, index: int, items: Iterator[Any]) -> Iterator[Any]:
    try:
        yield from items
    except Exception as e:  # noqa: BLE001 - every failure crosses to the driver pickled
        raise TaskFailure.of(e, spec.label, index) from None


def run_one(spec: RegionSpec, sink: Any, index: int, it: Iterator[Any]) -> Iterator[Any]:
    """``mapPartitionsWithIndex`` body of a region with one input RDD."""
    return _guarded(spec, index, sink(_run_region(spec, [decode_all(it)], index)))


def run_zipped(spec: RegionSpec, sink: Any, arity: int, index: int,
               it: Iterator[Any]) -> Iterator[Any]:
    """Body of a region over ``arity`` co-partitioned inputs, zipped into one element per
    partition: ``((in0, in1), in2) ...``, each ``in`` the list of that partition's blobs."""
    def inputs() -> list[Iterator[pa.RecordBatch]]:
        items = list(it)
        if len(items) != 1:
            raise TaskFailure.of(RuntimeError(
                f"zipped partition {index} holds {len(items)} elements, expected 1"),
                spec.label, index)
        nested = items[0]
        flat: list[Any] = []
        for _ in range(arity - 1):
            nested, last = nested
            flat.append(last)
        flat.append(nested)
        return [decode_all(x) for x in reversed(flat)]

    return _guarded(spec, index, _lazy(lambda: sink(_run_region(spec, inputs(), index))))


def run_tagged(spec: RegionSpec, sink: Any, inputs_of: dict[int, tuple[int, ...]], arity: int,
               index: int, it: Iterator[Any]) -> Iterator[Any]:
    """Body of a region whose ``arity`` inputs reach its task as one stream of tagged shuffle
    pieces (:class:`ShuffleSink`; one shuffle of all of them, or Spark's partitioner-aware union
    of their shuffles): the pieces sorted out by input (``inputs_of``: tag -> the inputs
    reading that exchange)."""
    def inputs() -> list[Iterator[pa.RecordBatch]]:
        lists: list[list[Any]] = [[] for _ in range(arity)]
        for _, (tag, blob) in it:
            for i in inputs_of[tag]:
                lists[i].append(blob)
        return [decode_all(x) for x in lists]

    return _guarded(spec, index, _lazy(lambda: sink(_run_region(spec, inputs(), index))))


def run_pair(spec: RegionSpec, sink: Any, index: int, it: Iterator[Any]) -> Iterator[Any]:
    """Body of a cartesian product's task: one ``(left partition, right partition)`` pair."""
    def go() -> Iterator[Any]:
        for left, right in it:
            yield from sink(_run_region(spec, [decode_all(left), decode_all(right)], index))

    return _guarded(spec, index, go())


def _lazy(make: Any) -> Iterator[Any]:
    yield from make()


def as_one(it: Iterator[Any]) -> Iterator[list[Any]]:
    """A partition's elements as one list (the single element ``RDD.zip`` pairs up)."""
    yield list(it)


def maybe_crash(conf: SQLConf, index: int) -> None:
    """The ``ember.spark.test.killWorkerOnce`` hook: the first task of partition 0 to get here
    creates the marker file and kills its own Python worker (SIGKILL), once per marker."""
    marker = conf.get(SPARK_TEST_KILL_WORKER_ONCE)
    if marker and index == 0:
        try:
            fd = os.open(marker, os.O_CREAT | os.O_EXCL | os.O_WRONLY)
        except FileExistsError:
            return
        os.close(fd)
        os.kill(os.getpid(), 9)


# ---------------------------------------------------------------------------------------------
# Sinks


def blobs(batches: Iterator[pa.RecordBatch]) -> Iterator[bytes]:
    """Each non-empty batch as an IPC blob."""
    for b in batches:
        if b.num_rows:
            yield encode(b)


def target_of(pid: int) -> int:
    """``RDD.partitionBy``'s partition function: the key is the target partition."""
    return pid


@dataclass(frozen=True, slots=True)
class ShuffleSink:
    """The map side of a ``ShuffleExchangeExec``: each batch cut into one piece per target
    partition (Ember's row hash for hash partitioning, the sampled ``bounds`` for range
    partitioning, rotation for round-robin), targets grouped into ``tasks`` Spark partitions,
    pieces of one merged up to ``batch_rows`` before they are encoded.  Each piece leaves as
    ``(task, (tag, blob))``: ``tag`` names the exchange, so a task reading several shuffles
    together sorts the pieces out (:func:`run_tagged`)."""

    exchange: Any  # ShuffleExchangeExec (its child replaced: only partitioning and output used)
    child_output: tuple[Any, ...]
    tag: int = 0
    bounds: tuple[Any, ...] | None = None
    batch_rows: int = 65536
    #: Spark tasks reading the shuffle (:mod:`.coalesce`): target ``p`` of ``n`` goes to task
    #: ``p * tasks // n``
    tasks: int = 0
    #: a Spark accumulator (:class:`KeySetParam`) given the distinct values of the hash
    #: partitioning's integer and string keys, up to ``max_keys`` per key and task (more: that
    #: key's values are dropped), for the driver's dynamic filters (None: not collected)
    keys_to: Any = None
    max_keys: int = 0

    def __call__(self, batches: Iterator[pa.RecordBatch]
                 ) -> Iterator[tuple[int, tuple[int, bytes]]]:

        part = self.exchange.output_partitioning
        n = part.num_partitions
        schema = schema_of(self.child_output)
        pending: dict[int, list[pa.RecordBatch]] = {}
        held: dict[int, int] = {}
        bound: list[Any] = []
        if isinstance(part, HashPartitioning):
            bound = [prepare(e, self.child_output) for e in part.expressions]
        elif isinstance(part, RangePartitioning):
            bound = [prepare(o.child, self.child_output) for o in part.ordering]
        rotation = 0
        keys = (KeyCollector(self.max_keys, [e.data_type for e in part.expressions])
                if self.keys_to is not None and isinstance(part, HashPartitioning) else None)
        for b in batches:
            if not b.num_rows:
                continue
            b = conform_batch(b, schema)
            arrays = key_arrays(bound, b) if keys is not None else None
            if arrays is not None:
                keys.add(arrays)
            if n <= 1:
                pids = None
            elif isinstance(part, HashPartitioning):
                pids = partition_ids(arrays if arrays is not None else key_arrays(bound, b), n)
            elif isinstance(part, RangePartitioning):
                pids = None if self.bounds is None else range_pids(
                    self.exchange, list(self.bounds), b, bound)
            elif isinstance(part, RoundRobinPartitioning | UnknownPartitioning):
                pids = (rotation + np.arange(b.num_rows, dtype=np.int64)) % n
                rotation = (rotation + b.num_rows) % n
            else:
                raise TypeError(f"unsupported partitioning {part.simple_string()}")
            if pids is not None and 0 < self.tasks < n:
                pids = pids * self.tasks // n
            for pid, piece in _split(b, pids):
                pending.setdefault(pid, []).append(piece)
                held[pid] = held.get(pid, 0) + piece.num_rows
                if held[pid] >= self.batch_rows:
                    yield pid, (self.tag, encode(concat(pending.pop(pid), schema)))
                    held[pid] = 0
        for pid, pieces in pending.items():
            yield pid, (self.tag, encode(concat(pieces, schema)))
        if keys is not None:
            self.keys_to.add(keys.result())


class KeyCollector:
    """The distinct non-null values of each integer or string key of one map task's rows, up
    to ``limit`` per key (beyond it the key is given up: ``None``)."""

    def __init__(self, limit: int, types: Sequence[Any]) -> None:
        self.limit = limit
        self.values: dict[int, list[pa.Array] | None] = {
            i: [] for i, t in enumerate(types) if isinstance(t, IntegralType | StringType)}
        self.held = dict.fromkeys(self.values, 0)

    def add(self, arrays: Sequence[pa.Array]) -> None:
        import pyarrow.compute as pc

        for i, parts in self.values.items():
            if parts is None:
                continue
            parts.append(pc.unique(arrays[i].drop_null()))
            self.held[i] += len(parts[-1])
            if self.held[i] > self.limit:  # duplicates across batches: merge, then decide
                merged = distinct_values(parts)
                self.values[i] = None if len(merged) > self.limit else [merged]
                self.held[i] = len(merged)

    def result(self) -> dict[int, pa.Array | None]:
        """Per key, its distinct values (None: too many); a task without rows reports none."""
        out: dict[int, pa.Array | None] = {}
        for i, parts in self.values.items():
            if parts is None:
                out[i] = None
            elif parts:
                merged = distinct_values(parts)
                out[i] = merged if len(merged) <= self.limit else None
        return out


def distinct_values(parts: Sequence[pa.Array]) -> pa.Array:
    """The distinct values of arrays of one key (cast to the first one's type)."""
    import pyarrow.compute as pc

    return pc.unique(pa.concat_arrays([p.cast(parts[0].type) for p in parts]))


class KeySetParam:
    """Spark accumulator of :class:`KeyCollector` results: ``{key position: distinct values,
    or None once a task held too many}``, merged over tasks (a retried task adds the same
    values again, which the union absorbs)."""

    def zero(self, value: Any) -> dict[int, list[pa.Array] | None]:
        return {}

    def addInPlace(self, a: dict[int, Any], b: dict[int, Any]) -> dict[int, Any]:
        for i, v in b.items():
            if isinstance(v, pa.Array):
                v = [v]
            if i in a and (a[i] is None or v is None):
                a[i] = None
            elif i in a:
                a[i] = a[i] + v
            else:
                a[i] = v
        return a


def _split(b: pa.RecordBatch, pids: np.ndarray | None) -> Iterator[tuple[int, pa.RecordBatch]]:
    """``b``'s rows grouped by target (a stable sort, then one slice per target)."""
    if pids is None:
        yield 0, b
        return
    order = np.argsort(pids, kind="stable")
    sorted_pids = pids[order]
    cuts = np.flatnonzero(np.diff(sorted_pids)) + 1
    starts = np.concatenate(([0], cuts))
    ends = np.concatenate((cuts, [len(order)]))
    grouped = take(b, order)
    for s, e in zip(starts.tolist(), ends.tolist()):
        yield int(sorted_pids[s]), grouped.slice(s, e - s)


@dataclass(frozen=True, slots=True)
class SampleSink:
    """The sampling pass of a range partitioning: about ``per_partition`` evenly spaced rows
    of the partition's sort keys, as one blob whose schema metadata holds the partition's row
    count and Arrow bytes (``rows``, ``bytes``: the driver coalesces a small input)."""

    exchange: Any
    child_output: tuple[Any, ...]
    per_partition: int

    def __call__(self, batches: Iterator[pa.RecordBatch]) -> Iterator[bytes]:
        part = self.exchange.output_partitioning
        bound = [prepare(o.child, self.child_output) for o in part.ordering]
        names = [f"k{i}" for i in range(len(bound))]
        keys: list[pa.RecordBatch] = []
        size = 0
        for b in batches:
            if b.num_rows:
                size += b.nbytes
                keys.append(pa.RecordBatch.from_arrays(key_arrays(bound, b), names=names))
        if not keys:
            return
        table = pa.Table.from_batches(keys).combine_chunks()
        m = table.num_rows
        idx = np.unique(np.linspace(0, m - 1, min(m, self.per_partition)).astype(np.int64))
        sample = table.take(pa.array(idx)).to_batches()[0]
        yield encode(sample.replace_schema_metadata({"rows": str(m), "bytes": str(size)}))


# ---------------------------------------------------------------------------------------------
# Sources


def range_part(node: Any, conf: tuple[tuple[str, str], ...], index: int,
               it: Iterator[Any]) -> Iterator[bytes]:
    """Partition ``index`` of a ``RangeExec``, generated on the executor."""
    def go() -> Iterator[bytes]:
        with TaskRuntime(SQLConf(dict(conf)), []) as rt:
            yield from blobs(rt.execute(node)[index]())

    return _guarded(RegionSpec(node, conf, (), node.simple_string()), index, go())


def arrow_to_blobs(schema: pa.Schema, batches: Iterator[pa.RecordBatch]
                   ) -> Iterator[pa.RecordBatch]:
    """``mapInArrow`` body turning a Spark DataFrame's Arrow batches into one-row batches
    of a binary column holding Ember's blob (columns cast to ``schema``)."""
    for b in batches:
        if b.num_rows:
            blob = encode(conform_batch(b, schema))
            yield pa.RecordBatch.from_arrays([pa.array([blob], type=pa.binary())], names=["b"])


def spark_arrow_batches(arrow_schema: pa.Schema, schema: pa.Schema,
                        unscaled: tuple[tuple[int, int, int], ...],
                        it: Iterator[Any]) -> Iterator[pa.RecordBatch]:
    """Spark's own Arrow record-batch messages (``Dataset.toArrowBatchRdd``: IPC messages
    without a schema, typed ``arrow_schema``) as batches typed ``schema``; the columns listed in
    ``unscaled`` as ``(position, precision, scale)`` arrive as the decimals' unscaled longs.
    The consumer runs in the same Python worker, so the batches are not serialized again."""
    for msg in it:
        b = pa.ipc.read_record_batch(pa.py_buffer(msg), arrow_schema)
        if b.num_rows:
            if unscaled:
                cols = b.columns
                for i, p, s in unscaled:
                    cols[i] = decimal_from_unscaled(cols[i], p, s)
                b = pa.RecordBatch.from_arrays(cols, schema=pa.schema(
                    [pa.field(f.name, c.type) for f, c in zip(b.schema, cols)]))
            yield conform_batch(b, schema)


def decimal_from_unscaled(col: pa.Array, precision: int, scale: int) -> pa.Array:
    """The ``decimal128(precision, scale)`` array whose unscaled values are ``col``'s int64s."""

    valid = col.is_valid().to_numpy(zero_copy_only=False)
    vals = col.fill_null(0).to_numpy(zero_copy_only=False)
    return from_unscaled(vals, valid, T.DecimalType(precision, scale), check=False)


def blobs_to_arrow(schema: pa.Schema, batches: Iterator[pa.RecordBatch]
                   ) -> Iterator[pa.RecordBatch]:
    """``mapInArrow`` body turning rows of blobs back into Arrow batches typed ``schema``
    (Spark's Arrow types for the DataFrame's schema)."""
    for b in batches:
        col = b.column(0)
        for i in range(len(col)):  # one row per blob: a loop over batches, not over data rows
            for x in decode(col[i].as_buffer()):
                yield conform_batch(x, schema)


def count_blob_bytes(counter: Any, pair: tuple[int, tuple[int, bytes]]) -> Any:
    """Adds a tagged shuffle piece's size to ``counter`` (a Spark accumulator) and passes it
    on."""
    counter.add(len(pair[1][1]))
    return pair


def value_of_pair(pair: tuple[Any, tuple[int, Any]]) -> Any:
    """A shuffled ``(task, (tag, blob))`` piece's blob."""
    return pair[1][1]


# ---------------------------------------------------------------------------------------------
# Errors


class TaskFailure(Exception):
    """An Ember task failed; the message carries the original exception for the driver."""

    @classmethod
    def of(cls, e: BaseException, label: str, index: int) -> "TaskFailure":
        operator_name = getattr(e, "ember_operator", None)
        if not isinstance(e, EmberError):
            err: BaseException = InternalError(f"{type(e).__name__}: {e}")
        else:
            err = e
        try:
            err.ember_operator = operator_name  # type: ignore[attr-defined]
            err.ember_task = f"{label}, partition {index}"  # type: ignore[attr-defined]
            payload = pickle.dumps(err)
            pickle.loads(payload)
        except Exception:  # noqa: BLE001 - an unpicklable error crosses as text
            err = InternalError(str(e))
            err.ember_operator = operator_name  # type: ignore[attr-defined]
            payload = pickle.dumps(err)
        text = base64.b64encode(payload).decode("ascii")
        return cls(f"{e}\n{ERROR_MARK}{text}]")
