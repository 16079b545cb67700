"""Local operators of the streaming physical nodes (:mod:`ember.physical.streaming`).

* ``EventTimeWatermarkExec``: each batch passes through unchanged; its event times (one
  vectorized conversion per batch) go to the node's ``EventTimeStats`` in this run's metrics
  (``rt.metrics.node(node).accumulator(EventTimeStats)``, read by the micro-batch engine).
* ``StreamingSymmetricHashJoinExec``: partition ``i`` collects partition ``i`` of both children
  (each hash-partitioned on its keys into the operator's state partitions by the exchanges below)
  and hands them to the stream-stream join core, ``SymmetricHashJoin.process_partition``
  (:mod:`ember.streaming.join.operator`), which joins them with partition ``i``'s state, evicts,
  commits the partition's stores and returns the output rows.  Every partition runs, with or
  without new rows: eviction and outer rows may be due in a partition that received nothing.
  The join core's metrics (summed over partitions) go to the node's run metrics, where the
  micro-batch engine reads them for its progress report.
* ``StateStoreRestoreExec`` / ``StateStoreSaveExec`` / ``StreamingDeduplicateExec`` (and its
  ``WithinWatermark`` variant): partition ``i`` of the child (hash-partitioned into the state
  partitions; one partition for a global aggregation) meets state partition ``i``
  (:mod:`ember.streaming.state.stateful_ops`); the writers' metrics are summed on the node.
* ``StreamingRelationExec`` cannot run: a stream is read only by a started query.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

import pyarrow as pa

from ember.errors import AnalysisError, InternalError
from ember.execution.kernels.batches import conform_batch, schema_of
from ember.physical.streaming.nodes import (
    EventTimeWatermarkExec,
    StateStoreRestoreExec,
    StateStoreSaveExec,
    StreamingDeduplicateExec,
    StreamingDeduplicateWithinWatermarkExec,
    StreamingRelationExec,
    StreamingSymmetricHashJoinExec,
    event_time_key,
)
from ember.runtime.local.registry import PartitionFn, operator
from ember.streaming.join.operator import StateInfo, SymmetricHashJoin
from ember.streaming.state.stateful_ops import (
    StoreAt,
    deduplicate,
    restore_aggregation,
    save_aggregation,
)
from ember.streaming.watermarks import EventTimeStats, event_time_millis

if TYPE_CHECKING:
    from ember.runtime.local.context import RunContext


@operator(EventTimeWatermarkExec)
def run_event_time_watermark(node: EventTimeWatermarkExec, rt: RunContext) -> list[PartitionFn]:
    ordinal = next(i for i, a in enumerate(node.child.output) if a.id == node.event_time.id)
    stats = rt.metrics.node(node).accumulator(EventTimeStats)

    def part(fn: PartitionFn) -> PartitionFn:
        def run() -> Iterator[pa.RecordBatch]:
            for b in fn():
                if b.num_rows:
                    stats.add(event_time_millis(b.column(ordinal)))
                yield b

        return run

    return [part(p) for p in rt.execute(node.child)]


@operator(StreamingRelationExec)
def run_streaming_relation(node: StreamingRelationExec, rt: RunContext) -> list[PartitionFn]:
    raise AnalysisError(
        "Queries with streaming sources must be executed with writeStream.start(), or from a "
        f"streaming table or flow definition within a Spark Declarative Pipeline.;\n"
        f"{node.description}", error_class="_LEGACY_ERROR_TEMP_3102")


def _table(fn: PartitionFn, schema: pa.Schema) -> pa.Table:
    batches = [conform_batch(b, schema) for b in fn() if b.num_rows]
    return pa.Table.from_batches(batches, schema=schema)


@operator(StreamingSymmetricHashJoinExec)
def run_streaming_symmetric_hash_join(node: StreamingSymmetricHashJoinExec,
                                      rt: RunContext) -> list[PartitionFn]:
    info = node.state_info
    if info is None:
        raise InternalError("StreamingSymmetricHashJoinExec has no state info: it runs only "
                            "inside a micro-batch (MicroBatchExecution)")
    left_parts, right_parts = rt.execute(node.left), rt.execute(node.right)
    n = info.num_partitions
    if len(left_parts) != n or len(right_parts) != n:
        raise InternalError(
            f"StreamingSymmetricHashJoinExec: children have {len(left_parts)} and "
            f"{len(right_parts)} partitions, the state has {n} (partition coalescing must be "
            "off in micro-batches)")
    state_info = StateInfo(info.checkpoint_location, info.operator_id, info.store_version, n)
    left_schema, right_schema = schema_of(node.left.output), schema_of(node.right.output)
    out_schema = schema_of(node.output)
    metrics = rt.metrics.node(node)

    def part(i: int) -> PartitionFn:
        def run() -> Iterator[pa.RecordBatch]:
            left = _table(left_parts[i], left_schema)
            right = _table(right_parts[i], right_schema)
            t0 = time.perf_counter_ns()
            joiner = SymmetricHashJoin(
                node.left_keys, node.right_keys, node.join_type, node.condition,
                node.left.output, node.right.output, state_info,
                node.watermark_for_late_events, node.watermark_for_eviction, rt.conf,
                state_format_version=node.state_format_version,
                batch_timestamp_ms=node.batch_timestamp_ms)
            out = joiner.process_partition(i, left, right)
            metrics.add(stage_time_ns=time.perf_counter_ns() - t0,
                        **{k: int(v) for k, v in joiner.metrics().items()})
            for b in out.to_batches(max_chunksize=max(1, rt.ctx.batch_size)):
                yield conform_batch(b, out_schema)

        return run

    return [part(i) for i in range(n)]


# -- streaming aggregation and deduplication (ember.streaming.state.stateful_ops) -------------


def _store_at(node: Any, rt: RunContext, partition: int) -> StoreAt:
    info = node.state_info
    if info is None:
        raise InternalError(f"{node.node_name} has no state info: it runs only inside a "
                            "micro-batch (MicroBatchExecution)")
    return StoreAt(info.checkpoint_location, info.operator_id, partition, info.store_version,
                   rt.conf)


def _ordinal(attrs: Any, target: Any) -> int | None:
    if target is None:
        return None
    return next(i for i, a in enumerate(attrs) if a.id == target.id)


def _stateful_partitions(node: Any, rt: RunContext, run_one: Any) -> list[PartitionFn]:
    """Partition ``i`` of the child is state partition ``i``: each runs (eviction and output
    may be due without input) and its metrics (a state writer's) are summed on the node."""
    parts = rt.execute(node.child)
    _store_at(node, rt, 0)  # fail early without state info
    schema = schema_of(node.child.output)
    out_schema = schema_of(node.output)
    metrics = rt.metrics.node(node)

    def part(i: int) -> PartitionFn:
        def run() -> Iterator[pa.RecordBatch]:
            rows = _table(parts[i], schema)
            t0 = time.perf_counter_ns()
            out, m = run_one(_store_at(node, rt, i), rows)
            metrics.add(stage_time_ns=time.perf_counter_ns() - t0,
                        **{k: int(v) for k, v in m.items()})
            for b in out.to_batches(max_chunksize=max(1, rt.ctx.batch_size)):
                yield conform_batch(b, out_schema)

        return run

    return [part(i) for i in range(len(parts))]


@operator(StateStoreRestoreExec)
def run_state_store_restore(node: StateStoreRestoreExec, rt: RunContext) -> list[PartitionFn]:
    def one(at: StoreAt, rows: pa.Table) -> tuple[pa.Table, dict[str, int]]:
        return restore_aggregation(at, rows, len(node.keys)), {}

    return _stateful_partitions(node, rt, one)


@operator(StateStoreSaveExec)
def run_state_store_save(node: StateStoreSaveExec, rt: RunContext) -> list[PartitionFn]:
    et = _ordinal(node.child.output, event_time_key(node.keys))

    def one(at: StoreAt, rows: pa.Table) -> tuple[pa.Table, dict[str, int]]:
        out, m = save_aggregation(at, rows, len(node.keys), node.output_mode or "append", et,
                                  node.watermark_for_late_events, node.watermark_for_eviction)
        m["numOutputRows"] = out.num_rows
        return out, m

    return _stateful_partitions(node, rt, one)


@operator(StreamingDeduplicateExec)
def run_streaming_deduplicate(node: StreamingDeduplicateExec,
                              rt: RunContext) -> list[PartitionFn]:
    attrs = node.child.output
    keys = [_ordinal(attrs, k) for k in node.keys]
    event_time = next((a for a in attrs if a.watermark_delay_ms is not None), None)
    et = _ordinal(attrs, event_time)
    within = (event_time.watermark_delay_ms
              if isinstance(node, StreamingDeduplicateWithinWatermarkExec) and event_time
              else None)

    def one(at: StoreAt, rows: pa.Table) -> tuple[pa.Table, dict[str, int]]:
        out, m = deduplicate(at, rows, keys, et, et in keys, node.watermark_for_late_events,
                             node.watermark_for_eviction, within)
        m["numOutputRows"] = out.num_rows
        return out, m

    return _stateful_partitions(node, rt, one)
