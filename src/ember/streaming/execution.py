"""Micro-batch execution (Spark's ``MicroBatchExecution``, ``IncrementalExecution`` and the
trigger executors): the loop that turns a streaming query into a sequence of batch queries.

Per trigger (on the query's own thread)::

    construct the next batch   latest offset of every source; a batch runs when some source has
                               new data, or (``spark.sql.streaming.noDataMicroBatches.enabled``)
                               when the last batch's stateful operators would evict or emit more
                               with the new watermark (a "no-data batch")
    write-ahead                offsets/<batchId>: the end offsets and the batch's metadata
                               (watermark, timestamp, the settings the checkpoint keeps)
    run the batch              each StreamingRelation replaced by the rows (start, end] of its
                               source (StreamingBatchRelation); optimized and planned again
                               (IncrementalExecution) with the batch's watermarks and state info;
                               run on the local runtime; the result handed to the sink
    watermark                  every EventTimeWatermarkExec's event-time statistics update the
                               WatermarkTracker (:mod:`.watermarks`); the new global watermark is
                               the next batch's
    commit                     commits/<batchId> with the next batch's watermark, after the sink
                               committed; then the sources may drop what was committed

Restart (``populate_start_offsets``): the latest offsets entry with a commit means the next batch
is new; without one, that batch is re-run with the logged offsets and metadata (the sink ignores
a batch id it already committed, so its output is exactly-once).  After a committed batch, that
batch is planned again without rows to ask its stateful operators whether the watermark calls
for a no-data batch (Spark's restarted query does not know and waits for new data), so a crash
never holds back rows an uninterrupted run emits.  The settings pinned in the
first batch's metadata -- ``spark.sql.shuffle.partitions`` (the number of state partitions),
``spark.sql.streaming.multipleWatermarkPolicy``, ``spark.sql.streaming.join.stateFormatVersion``
and the state store provider -- are re-applied over the session's on every restart.  So is
Ember's ``ember.streaming.join.stateInsertTimes``: "true" when the first batch ran with a join
state TTL (``ember.streaming.join.stateTtl.left`` / ``.right``), whose rows then record their
insertion time (:mod:`ember.streaming.join.operator`); a checkpoint without it keeps its layout.

The batch timestamp (``batchTimestampMs``, the processing time of the batch: a state TTL's
clock) is read from :attr:`MicroBatchExecution.clock` (``time.time``; tests inject a fake) when
the batch is constructed and logged with its offsets, so a re-run batch has the same one.

Watermarks of batch ``N`` (Spark's ``WatermarkTracker``): late input is dropped with the watermark of
batch ``N - 1`` (0 for the first batch), state is evicted with batch ``N``'s; a stateful
operator above another one gets the lower one's output watermark (:func:`input_watermarks`,
Spark's watermark propagation).  The logs keep the last
``spark.sql.streaming.minBatchesToRetain`` batches; ``availableNow`` first asks each source that
can (``prepare_for_trigger_available_now``) to pin what is available.

Each batch runs with partition coalescing and adaptive joins off (Spark disables adaptive
execution for streaming queries): a stateful operator's partition ``i`` must be hash partition
``i`` in every batch.  Stateful operators get operator ids in pre-order of the physical plan,
whose shape depends only on the query (a batch's relation has no size statistics), so ids are
stable across batches and restarts.
"""

from __future__ import annotations

import os
import threading
import time
import traceback
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import pyarrow as pa

from ember import types as T
from ember.conf import (
    ADAPTIVE_ENABLED,
    COALESCE_PARTITIONS,
    PROGRESS_ENABLED,
    SHUFFLE_PARTITIONS,
    STREAM_AGGREGATION_STATE_FORMAT,
    STREAM_FLAT_MAP_STATE_FORMAT,
    STREAM_JOIN_STATE_FORMAT,
    STREAM_JOIN_STATE_INSERT_TIMES,
    STREAM_MIN_BATCHES_TO_RETAIN,
    STREAM_MULTIPLE_WATERMARK_POLICY,
    STREAM_NO_DATA_BATCHES,
    STREAM_POLLING_DELAY,
    STREAM_RECENT_PROGRESS,
    STREAM_STATE_COMPRESSION_CODEC,
    STREAM_STATE_PROVIDER,
    STREAM_STRICT_DISTRIBUTION,
    ConfEntry,
    SQLConf,
)
from ember.errors import AnalysisError, EmberError, ExecutionError
from ember.physical.nodes import HashAggregateExec, SparkPlan
from ember.physical.streaming.nodes import (
    EventTimeWatermarkExec,
    StatefulOperatorExec,
    StatefulOperatorStateInfo,
    StateStoreRestoreExec,
    StateStoreSaveExec,
    StreamingSymmetricHashJoinExec,
)
from ember.plans.logical.nodes import (
    EventTimeWatermark,
    LogicalPlan,
    StreamingBatchRelation,
    StreamingRelation,
)
from ember.query_execution import QueryExecution
from ember.runtime.local import LocalRuntime
from ember.runtime.local.node_state import NodeState
from ember.streaming.crash import crash_point
from ember.streaming.join.operator import state_ttls_ms
from ember.streaming.logs import (
    CommitLog, OffsetSeq, OffsetSeqLog, OffsetSeqMetadata, StreamMetadata,
)
from ember.streaming.watermarks import (
    EventTimeStats,
    WatermarkTracker,
    parse_interval,
)
from ember.streaming.progress import make_progress

if TYPE_CHECKING:  # pragma: no cover
    from ember.session import Session

__all__ = ["MicroBatchExecution", "IncrementalExecution", "Trigger", "StreamingQueryException",
           "PINNED_CONF"]

#: settings a checkpoint keeps (Spark's ``OffsetSeqMetadata.relevantSQLConfs``); the first batch
#: records them, restarts re-apply them
PINNED_CONF: tuple[ConfEntry, ...] = (
    STREAM_STATE_PROVIDER, STREAM_JOIN_STATE_FORMAT, STREAM_MULTIPLE_WATERMARK_POLICY,
    STREAM_AGGREGATION_STATE_FORMAT, STREAM_FLAT_MAP_STATE_FORMAT,
    STREAM_STATE_COMPRESSION_CODEC, STREAM_STRICT_DISTRIBUTION, SHUFFLE_PARTITIONS)


class StreamingQueryException(EmberError):
    """A streaming query stopped by an error (Spark's ``StreamingQueryException``,
    ``STREAM_FAILED``); ``cause`` is the original error."""

    default_error_class = "STREAM_FAILED"

    def __init__(self, message: str, *, cause: BaseException | None = None,
                 parameters: dict[str, str] | None = None) -> None:
        super().__init__(message, parameters=parameters)
        self.cause = cause
        self.__cause__ = cause

    def desc(self) -> str:
        return self.message


# ---------------------------------------------------------------------------------------------
# Triggers


@dataclass(frozen=True)
class Trigger:
    """``processingTime`` (every ``interval_ms``; 0 = as fast as possible, the default),
    ``once`` (one batch) or ``availableNow`` (every batch the data at start needs)."""

    kind: str = "processingTime"
    interval_ms: int = 0

    @staticmethod
    def processing_time(interval: str | int) -> "Trigger":
        """Spark's ``Trigger.ProcessingTime("1 second")`` (an int: milliseconds)."""
        if isinstance(interval, int):
            ms = interval
        else:
            months, days, micros = parse_interval(str(interval))
            if months:
                raise AnalysisError(
                    f"Doesn't support month or year interval: {interval}",
                    error_class="_LEGACY_ERROR_TEMP_3262")
            ms = (days * 86_400_000_000 + micros) // 1000
        if ms < 0:
            raise AnalysisError(f"requirement failed: Interval cannot be negative ({interval})")
        return Trigger("processingTime", int(ms))

    def __str__(self) -> str:
        if self.kind == "processingTime":
            return f"ProcessingTimeTrigger({self.interval_ms})"
        return "OneTimeTrigger" if self.kind == "once" else "AvailableNowTrigger"


# ---------------------------------------------------------------------------------------------
# One micro-batch


class IncrementalExecution(QueryExecution):
    """One micro-batch's plans (Spark's ``IncrementalExecution``, a ``QueryExecution``):
    ``logical`` is the analyzed query with every stream replaced by the batch's rows, so it is
    its own analyzed plan; it is optimized and planned as any query, with the batch's
    configuration (``conf``), and before EnsureRequirements its stateful operators get their
    state info and watermarks (:meth:`prepare_for_requirements`)."""

    __slots__ = ("_conf", "checkpoint", "run_id", "batch_id", "num_state_partitions",
                 "watermark_for_late_events", "watermark_for_eviction", "state_format_version",
                 "batch_timestamp_ms", "output_mode")

    def __init__(self, session: "Session", conf: SQLConf, logical: LogicalPlan, *,
                 checkpoint: str, run_id: str, batch_id: int, num_state_partitions: int,
                 watermark_for_late_events: int, watermark_for_eviction: int,
                 state_format_version: int, batch_timestamp_ms: int | None = None,
                 output_mode: str = "append") -> None:
        super().__init__(session, logical)
        self._conf = conf
        self.checkpoint = checkpoint
        self.run_id = run_id
        self.batch_id = batch_id
        self.num_state_partitions = num_state_partitions
        self.watermark_for_late_events = watermark_for_late_events
        self.watermark_for_eviction = watermark_for_eviction
        self.state_format_version = state_format_version
        self.batch_timestamp_ms = batch_timestamp_ms
        self.output_mode = output_mode

    @property
    def conf(self) -> SQLConf:
        """The batch's configuration (the session's with the checkpoint's pinned settings)."""
        return self._conf

    @property
    def analyzed(self) -> LogicalPlan:
        return self.logical

    def prepare_for_requirements(self, physical: SparkPlan) -> SparkPlan:
        """Spark's ``state`` preparation rule: operator ids in pre-order, this batch's store
        version, the fixed number of state partitions, and each operator's two input
        watermarks (:func:`input_watermarks` from the previous and the current global one)."""
        next_id = [0]
        state_dir = os.path.join(self.checkpoint, "state")
        late = input_watermarks(physical, self.watermark_for_late_events)
        eviction = input_watermarks(physical, self.watermark_for_eviction)

        n = self.num_state_partitions

        def assign(node: Any) -> Any:
            if isinstance(node, HashAggregateExec) and node.stateful_num_partitions == 0:
                return node.copy(stateful_num_partitions=n)
            if not isinstance(node, StatefulOperatorExec) or node.state_info is not None:
                return None
            info = StatefulOperatorStateInfo(state_dir, self.run_id, next_id[0],
                                             self.batch_id, n)
            next_id[0] += 1
            marks = {"state_info": info, "watermark_for_late_events": _clamp(late.get(node)),
                     "watermark_for_eviction": _clamp(eviction.get(node))}
            if isinstance(node, StreamingSymmetricHashJoinExec):
                return node.copy(**marks, state_format_version=self.state_format_version,
                                 batch_timestamp_ms=self.batch_timestamp_ms)
            if isinstance(node, StateStoreSaveExec):
                # its StateStoreRestore below reads the same state
                child = node.child.transform_down(
                    lambda c: c.copy(state_info=info) if isinstance(c, StateStoreRestoreExec)
                    and c.state_info is None else None)
                return node.copy(**marks, child=child, output_mode=self.output_mode.lower())
            return node.copy(**marks)

        return physical.transform_down(assign)

    def stateful_operators(self) -> list[Any]:
        return self.executed_plan.collect(
            lambda n: n if isinstance(n, StatefulOperatorExec) else None)

    def watermark_operators(self) -> list[Any]:
        return self.executed_plan.collect(
            lambda n: n if isinstance(n, EventTimeWatermarkExec) else None)

    def event_time_stats(self) -> list[tuple[EventTimeStats, int]]:
        """``(event-time statistics, delay)`` of every ``EventTimeWatermarkExec`` in the last
        :meth:`run` (the accumulators the runtime fed, which update the watermark)."""
        assert self.run_metrics is not None
        return [(self.run_metrics.node(op).accumulator(EventTimeStats), op.delay_ms)
                for op in self.watermark_operators()]

    def should_run_another_batch(self, new_watermark_ms: int) -> bool:
        """Whether a stateful operator would evict (or emit) more with the next global
        watermark: each is asked with its own next input watermark (Spark's
        ``IncrementalExecution.shouldRunAnotherBatch``)."""
        nxt = input_watermarks(self.executed_plan, new_watermark_ms)
        return any(op.should_run_another_batch(_clamp(nxt.get(op)))
                   for op in self.stateful_operators())

    def run(self, output: tuple[Any, ...]) -> pa.Table:
        """Run the batch; the rows as a table named and typed like ``output`` (the query's)."""
        plan = self.executed_plan
        with LocalRuntime(self.conf) as rt:
            table = rt.collect(plan)
            self.run_metrics = rt.metrics
        fields = [pa.field(a.name, a.data_type.to_arrow(), a.nullable) for a in output]
        cols = [c if c.type == f.type else c.cast(f.type) for c, f in zip(table.columns, fields)]
        return pa.Table.from_arrays(cols, schema=pa.schema(fields))


def input_watermarks(plan: Any, origin_ms: int) -> NodeState[int | None]:
    """Spark's ``PropagateWatermarkSimulator`` (``statefulOperator.allowMultiple``, the default):
    the input watermark of every stateful operator of ``plan`` when the global
    watermark is ``origin_ms``.  Bottom-up: an ``EventTimeWatermarkExec`` outputs the global
    watermark; a stateful operator's input is the minimum of its children's outputs (None when
    no watermark reaches it) and it outputs ``output_watermark(input)`` (a join: the minimum of
    the input and both sides' state watermarks, as its output can be that old); any other node
    passes the minimum of its children's on.  With one stateful operator its input is the
    global watermark."""
    inputs: NodeState[int | None] = NodeState()

    def visit(node: Any) -> int | None:
        below = [w for w in (visit(c) for c in node.children) if w is not None]
        if isinstance(node, EventTimeWatermarkExec):
            return origin_ms
        current = min(below) if below else None
        if isinstance(node, StatefulOperatorExec):
            inputs[node] = current
            return None if current is None else node.output_watermark(current)
        return current

    visit(plan)
    return inputs


def _clamp(watermark_ms: int | None) -> int:
    """An operator's input watermark as Spark hands it over: 0 when no watermark reaches it,
    never negative (a propagated watermark can be, e.g. ``0 - 20 s``)."""
    return max(watermark_ms or 0, 0)


# ---------------------------------------------------------------------------------------------
# The query


class MicroBatchExecution:
    """Runs one streaming query on its own thread (see the module docstring).

    ``plan`` is the analyzed streaming plan, ``sink`` a sink object (:mod:`.sinks`),
    ``checkpoint`` the checkpoint directory, ``source_class`` the source class of a format
    (:func:`ember.streaming.sources.source_class`), for the streams read by format.  ``start()``
    launches the thread; the :class:`~ember.streaming.api.StreamingQuery` handle waits on it.
    """

    #: seconds since the epoch: the batch timestamps (Spark's ``triggerClock``); a test may
    #: replace it (on the class, before the query starts) to drive a state TTL without sleeping
    clock: Callable[[], float] = staticmethod(time.time)

    def __init__(self, session: "Session", plan: LogicalPlan, sink: Any, *, checkpoint: str,
                 trigger: Trigger, name: str | None, output_mode: str,
                 source_class: Callable[[str], type],
                 delete_checkpoint_on_stop: bool = False,
                 on_terminated: Callable[["MicroBatchExecution"], None] | None = None) -> None:

        self.session = session
        self.plan = plan
        self.sink = sink
        self._source_class = source_class
        self.checkpoint = os.path.abspath(checkpoint)
        self.trigger = trigger
        self.name = name
        self.output_mode = output_mode
        self.delete_checkpoint_on_stop = delete_checkpoint_on_stop
        self._on_terminated = on_terminated
        self.id = StreamMetadata.read_or_create(self.checkpoint)
        self.run_id = str(uuid.uuid4())
        self.offset_log = OffsetSeqLog(os.path.join(self.checkpoint, "offsets"))
        self.commit_log = CommitLog(os.path.join(self.checkpoint, "commits"))

        # streams: one source per distinct source object / StreamingRelation, in plan order
        self.relations: list[StreamingRelation] = []
        self._relation_source: dict[int, int] = {}
        self._source_keys: list[Any] = []
        for r in _collect_relations(plan):
            key = ("obj", id(r.source)) if r.source is not None else ("rel", r)
            try:
                idx = self._source_keys.index(key)
            except ValueError:
                idx = len(self._source_keys)
                self._source_keys.append(key)
                self.relations.append(r)
            self._relation_source[id(r)] = idx
        self.sources: list[Any] = []
        self.has_event_time = plan.exists(lambda p: isinstance(p, EventTimeWatermark))

        # progress of the run
        self.batch_id = 0
        self.committed: list[Any] = []
        self.available: list[Any] = []
        self.metadata = OffsetSeqMetadata()
        self.prev_batch_watermark = 0
        self.tracker: WatermarkTracker | None = None
        self.last_execution: IncrementalExecution | None = None
        self._batch_constructed = False
        self.batch_conf: SQLConf | None = None
        self.recent_progress: list[dict[str, Any]] = []
        self._last_trigger_start: float | None = None

        # thread and coordination
        #: held while the next batch is constructed (Spark's ``awaitProgressLock``): a test
        #: holding it while it adds rows to several streams gets them into one batch
        self.progress_lock = threading.RLock()
        self._thread: threading.Thread | None = None
        self._stop = threading.Event()
        self._cond = threading.Condition()
        self._active = False
        #: triggers started so far, and the last one that found nothing to run
        self._trigger_seq = 0
        self._idle_seq = 0
        self.exception: StreamingQueryException | None = None
        self.status: dict[str, Any] = {"message": "Initializing sources", "isDataAvailable": False,
                                       "isTriggerActive": False}

    # -- lifecycle -------------------------------------------------------------------------------
    def start(self) -> None:
        self._active = True
        desc = f"{self.name + ' ' if self.name else ''}[id = {self.id}, runId = {self.run_id}]"
        self._thread = threading.Thread(target=self._run, name=f"stream execution thread for "
                                        f"{desc}", daemon=True)
        self._thread.start()

    @property
    def is_active(self) -> bool:
        return self._active

    def stop(self, timeout: float | None = None) -> None:
        """Stop after the batch in flight (if any) and wait for the thread."""
        self._stop.set()
        with self._cond:
            self._cond.notify_all()
        t = self._thread
        if t is not None and t is not threading.current_thread():
            t.join(timeout)

    def await_termination(self, timeout: float | None = None) -> bool:
        t = self._thread
        if t is not None:
            t.join(timeout)
            if t.is_alive():
                return False
        if self.exception is not None:
            raise self.exception
        return True

    def process_all_available(self) -> None:
        """Block until every row available now was processed and committed (or the query
        stopped; its error is raised)."""
        with self._cond:
            # a trigger that started after this call and found nothing to run (one already
            # under way may have read the offsets before the latest data was added)
            started = self._trigger_seq
            while True:
                if self.exception is not None:
                    raise self.exception
                if not self._active or self._idle_seq > started:
                    return
                self._cond.wait(10.0)

    # -- the thread ------------------------------------------------------------------------------
    def _run(self) -> None:
        try:
            self._start_sources()
            self._populate_start_offsets()
            self.status = {"message": "Waiting for data to arrive", "isDataAvailable": False,
                           "isTriggerActive": False}
            if self.trigger.kind == "once":
                self._run_trigger()
            elif self.trigger.kind == "availableNow":
                self._run_available_now()
            else:
                self._run_processing_time()
        except BaseException as e:  # noqa: BLE001 - any failure ends the query with its error
            self.exception = self._wrap(e)
        finally:
            for s in self.sources:
                try:
                    s.stop()
                except Exception as e:  # noqa: BLE001 - the query's own error comes first
                    if self.exception is None:
                        self.exception = self._wrap(e)
            with self._cond:
                self._active = False
                self.status = {"message": "Stopped", "isDataAvailable": False,
                               "isTriggerActive": False}
                self._cond.notify_all()
            if self.delete_checkpoint_on_stop and self.exception is None:
                import shutil

                shutil.rmtree(self.checkpoint, ignore_errors=True)
            if self._on_terminated is not None:
                self._on_terminated(self)

    def _wrap(self, e: BaseException) -> StreamingQueryException:
        desc = f"{self.name} " if self.name else ""
        cause = getattr(e, "message", None) or str(e) or type(e).__name__
        msg = (f"Query {desc}[id = {self.id}, runId = {self.run_id}] terminated with exception: "
               f"{cause}")
        err = StreamingQueryException(msg, cause=e, parameters={
            "id": self.id, "runId": self.run_id, "message": cause,
            "queryDebugString": "".join(traceback.format_exception(e))[-2000:]})
        return err

    def _run_processing_time(self) -> None:
        interval = self.trigger.interval_ms / 1000.0
        polling = self.session.sql_conf.get(STREAM_POLLING_DELAY) / 1000.0
        while not self._stop.is_set():
            ran = self._run_trigger()
            if self._stop.is_set():
                return
            if interval > 0:
                # Spark's ProcessingTimeExecutor: triggers at the multiples of the interval
                now = time.time()
                self._stop.wait(max(0.0, (now // interval + 1) * interval - now))
            elif not ran:
                self._stop.wait(polling)

    def _run_available_now(self) -> None:
        # Spark's SupportsTriggerAvailableNow: a source that can pins what "available now" is
        # and is asked for its next offset every batch (asking takes data: a file source logs
        # its next maxFilesPerTrigger files); any other's latest offset now is its target
        targets: list[Any] = []
        for s in self.sources:
            prepare = getattr(s, "prepare_for_trigger_available_now", None)
            if prepare is not None:
                prepare()
                targets.append(_ASK)
            else:
                targets.append(s.latest_offset())
        while not self._stop.is_set():
            if not self._run_trigger(targets):
                return

    # -- one trigger -----------------------------------------------------------------------------
    def _run_trigger(self, targets: list[Any] | None = None) -> bool:
        """Construct and run the next batch if there is one; True when a batch ran."""
        start = time.time()
        durations: dict[str, int] = {}
        with self._cond:
            self._trigger_seq += 1
            seq = self._trigger_seq
        self.status = {"message": "Waiting for next trigger", "isDataAvailable": False,
                       "isTriggerActive": True}
        with self.progress_lock:
            constructed, has_data = self._construct_next_batch(targets, durations)
        if not constructed:
            with self._cond:
                self._idle_seq = seq
                self.status = {"message": "Waiting for data to arrive", "isDataAvailable": False,
                               "isTriggerActive": False}
                self._cond.notify_all()
            return False
        self.status = {"message": "Processing new data" if has_data
                       else "No new data but cleaning up state", "isDataAvailable": has_data,
                       "isTriggerActive": True}
        progress = self._run_batch(durations)
        durations["triggerExecution"] = _elapsed_ms(start)
        self._finish_progress(progress, start, durations)
        self.batch_id += 1
        self._batch_constructed = False
        with self._cond:
            self.status = {"message": "Waiting for data to arrive", "isDataAvailable": False,
                           "isTriggerActive": False}
            self._cond.notify_all()
        return True

    def _start_sources(self) -> None:
        for i, r in enumerate(self.relations):
            if r.source is not None:
                self.sources.append(r.source)
                continue
            cls = self._source_class(r.source_name)
            schema = T.StructType(tuple(T.StructField(a.name, a.data_type, a.nullable)
                                        for a in r.output))
            meta = os.path.join(self.checkpoint, "sources", str(i))
            options = {**dict(r.options), "__format": r.source_name}
            self.sources.append(cls(self.session, schema, options, r.path, metadata_path=meta))

    def _populate_start_offsets(self) -> None:
        n = len(self.sources)
        latest = self.offset_log.latest()
        insert_times = STREAM_JOIN_STATE_INSERT_TIMES.key
        if latest is None:
            pinned = {e.key: self.session.sql_conf.get_string(e.key) for e in PINNED_CONF}
            if any(state_ttls_ms(self.session.sql_conf)):
                pinned[insert_times] = "true"
            self.committed = [None] * n
            self.available = [None] * n
            self.batch_id = 0
            self.metadata = OffsetSeqMetadata(0, 0, pinned)
        else:
            bid, entry = latest
            if len(entry.offsets) != n:
                raise AnalysisError(
                    f"The checkpoint's offsets name {len(entry.offsets)} sources, the query has "
                    f"{n}: a checkpoint cannot be reused by a query with other sources.",
                    error_class="STREAMING_QUERY_SOURCES_MISMATCH")
            pinned = {e.key: e.string(e.default) for e in PINNED_CONF}
            pinned.update({k: v for k, v in entry.metadata.conf.items()
                           if k in pinned or k == insert_times})
            self.metadata = OffsetSeqMetadata(entry.metadata.batch_watermark_ms,
                                              entry.metadata.batch_timestamp_ms, pinned)
            self.available = list(entry.offsets)
            prev = self.offset_log.get(bid - 1) if bid > 0 else None
            self.committed = list(prev.offsets) if prev is not None else [None] * n
            self.prev_batch_watermark = prev.metadata.batch_watermark_ms if prev else 0
        self.batch_conf = self._make_batch_conf(pinned)
        self.tracker = WatermarkTracker(pinned[STREAM_MULTIPLE_WATERMARK_POLICY.key])
        if latest is None:
            return
        bid, entry = latest
        self.tracker.set_watermark(entry.metadata.batch_watermark_ms)
        commit = self.commit_log.latest()
        if commit is not None and commit[0] == bid:
            # the latest batch finished: the next one is new
            self.batch_id = bid + 1
            self._batch_constructed = False
            self.committed = list(self.available)
            late = self.prev_batch_watermark
            self.prev_batch_watermark = entry.metadata.batch_watermark_ms
            self.tracker.set_watermark(max(self.tracker.current_watermark, commit[1]))
            for s, off in zip(self.sources, self.committed):
                if off is not None:
                    s.commit(off)
            if self.has_event_time:
                # Unlike Spark, whose restarted query forgets that its last batch's stateful
                # operators wanted a no-data batch (and evicts, or emits outer rows, only with
                # the next data), that batch is planned again (no rows, no state read) to ask
                # them: a restart after a crash then writes what an uninterrupted run writes.
                self.last_execution = self._incremental(
                    bid, [_empty(r.output) for r in self.relations], late,
                    entry.metadata.batch_watermark_ms, entry.metadata.batch_timestamp_ms)
        else:
            # the latest batch did not commit: run it again with the same offsets
            self.batch_id = bid
            self._batch_constructed = True

    def _make_batch_conf(self, pinned: dict[str, str]) -> SQLConf:
        conf = self.session.sql_conf.copy()
        for k, v in pinned.items():
            conf.set(k, v)
        conf.set(STREAM_JOIN_STATE_INSERT_TIMES.key,
                 pinned.get(STREAM_JOIN_STATE_INSERT_TIMES.key, "false"))
        conf.set(COALESCE_PARTITIONS.key, "false")
        conf.set(ADAPTIVE_ENABLED.key, "false")
        conf.set(PROGRESS_ENABLED.key, "false")
        return conf

    def _construct_next_batch(self, targets: list[Any] | None,
                              durations: dict[str, int]) -> tuple[bool, bool]:
        """(whether a batch is ready to run, whether it has new data)."""
        if self._batch_constructed:
            has = any(a is not None and a != c for a, c in zip(self.available, self.committed))
            return True, has
        t = time.time()
        latest = []
        for i, s in enumerate(self.sources):
            if targets is not None and targets[i] is not _ASK \
                    and self.committed[i] == targets[i]:
                latest.append(self.committed[i])
            else:
                latest.append(s.latest_offset())
        durations["latestOffset"] = _elapsed_ms(t)
        available = [c if lo is None else lo for lo, c in zip(latest, self.committed)]
        has_data = any(a is not None and a != c for a, c in zip(available, self.committed))
        assert self.tracker is not None
        watermark = self.tracker.current_watermark
        needs_another = (
            self.session.sql_conf.get(STREAM_NO_DATA_BATCHES)
            and self.last_execution is not None
            and self.last_execution.should_run_another_batch(watermark))
        if not has_data and not needs_another:
            return False, False
        self.metadata = OffsetSeqMetadata(watermark, int(self.clock() * 1000),
                                          dict(self.metadata.conf))
        self.available = available
        t = time.time()
        crash_point("before_offsets_log")
        if not self.offset_log.add(self.batch_id, OffsetSeq(tuple(available), self.metadata)):
            raise ExecutionError(
                f"Multiple streaming queries are concurrently using {self.checkpoint}",
                error_class="CONCURRENT_STREAM_LOG_UPDATE",
                parameters={"batchId": str(self.batch_id)})
        crash_point("after_offsets_log")
        durations["walCommit"] = _elapsed_ms(t)
        # Spark: the logs keep the last minBatchesToRetain batches (purge is exclusive)
        retain = self.session.sql_conf.get(STREAM_MIN_BATCHES_TO_RETAIN)
        if retain < self.batch_id:
            self.offset_log.purge(self.batch_id - retain)
            self.commit_log.purge(self.batch_id - retain)
        self._batch_constructed = True
        return True, has_data

    def _run_batch(self, durations: dict[str, int]) -> dict[str, Any]:
        assert self.batch_conf is not None and self.tracker is not None
        t = time.time()
        data: list[pa.Table] = []
        for i, s in enumerate(self.sources):
            start, end = self.committed[i], self.available[i]
            if end is None or end == start:
                data.append(_empty(self.relations[i].output))
            else:
                data.append(s.get_batch(start, end))
        durations["getBatch"] = _elapsed_ms(t)

        t = time.time()
        execution = self._incremental(self.batch_id, data, self.prev_batch_watermark,
                                      self.metadata.batch_watermark_ms,
                                      self.metadata.batch_timestamp_ms)
        execution.executed_plan  # noqa: B018 - plan now, timed as Spark's queryPlanning
        durations["queryPlanning"] = _elapsed_ms(t)
        t = time.time()
        result = execution.run(self.plan.output)
        self.sink.add_batch(self.batch_id, result)
        crash_point("after_sink")
        durations["addBatch"] = _elapsed_ms(t)

        # the watermark for the next batch, then the commit
        stats = execution.event_time_stats()
        self.tracker.update(stats)
        t = time.time()
        if not self.commit_log.add(self.batch_id, self.tracker.current_watermark):
            raise ExecutionError(
                f"Multiple streaming queries are concurrently using {self.checkpoint}",
                error_class="CONCURRENT_STREAM_LOG_UPDATE",
                parameters={"batchId": str(self.batch_id)})
        crash_point("after_commit_log")
        for s, off in zip(self.sources, self.available):
            if off is not None:
                s.commit(off)
        durations["commitOffsets"] = _elapsed_ms(t)
        progress = {
            "starts": list(self.committed), "ends": list(self.available),
            "rows": [d.num_rows for d in data], "output_rows": result.num_rows,
            "execution": execution, "stats": stats,
            "watermark": self.metadata.batch_watermark_ms,
        }
        self.committed = list(self.available)
        self.prev_batch_watermark = self.metadata.batch_watermark_ms
        self.last_execution = execution
        return progress

    def _incremental(self, batch_id: int, data: list[pa.Table], late_watermark_ms: int,
                     eviction_watermark_ms: int,
                     batch_timestamp_ms: int | None = None) -> IncrementalExecution:
        """Batch ``batch_id``'s execution over ``data`` (one table per source)."""
        assert self.batch_conf is not None

        def substitute(p: LogicalPlan) -> LogicalPlan | None:
            if isinstance(p, StreamingRelation):
                idx = self._relation_source[id(p)]
                return StreamingBatchRelation(p.output, _conform(data[idx], p.output),
                                              p.description)
            return None

        conf = self.batch_conf
        return IncrementalExecution(
            self.session, conf, self.plan.transform_down(substitute), checkpoint=self.checkpoint,
            run_id=self.run_id, batch_id=batch_id,
            num_state_partitions=int(conf.get(SHUFFLE_PARTITIONS)),
            watermark_for_late_events=late_watermark_ms,
            watermark_for_eviction=eviction_watermark_ms,
            state_format_version=conf.get(STREAM_JOIN_STATE_FORMAT),
            batch_timestamp_ms=batch_timestamp_ms, output_mode=self.output_mode)

    def _finish_progress(self, p: dict[str, Any], start: float,
                         durations: dict[str, int]) -> None:

        prev, self._last_trigger_start = self._last_trigger_start, start
        report = make_progress(self, p, start, prev, durations)
        keep = self.session.sql_conf.get(STREAM_RECENT_PROGRESS)
        with self._cond:
            self.recent_progress.append(report)
            del self.recent_progress[:-keep]


#: an availableNow target meaning "ask the source" (it pinned its data itself)
_ASK = object()


def _collect_relations(plan: LogicalPlan) -> list[StreamingRelation]:
    return plan.collect(lambda p: p if isinstance(p, StreamingRelation) else None)


def _empty(attrs: tuple[Any, ...]) -> pa.Table:
    return pa.schema([pa.field(a.name, a.data_type.to_arrow()) for a in attrs]).empty_table()


def _conform(table: pa.Table, attrs: tuple[Any, ...]) -> pa.Table:
    """A source's batch typed and named like the relation's attributes (by position)."""
    if table.num_columns != len(attrs):
        raise ExecutionError(f"A source returned {table.num_columns} columns for a stream of "
                             f"{len(attrs)} ({', '.join(a.name for a in attrs)})")
    fields = [pa.field(a.name, a.data_type.to_arrow()) for a in attrs]
    cols = [c if c.type == f.type else c.cast(f.type) for c, f in zip(table.columns, fields)]
    return pa.Table.from_arrays(cols, schema=pa.schema(fields))


def _elapsed_ms(t0: float) -> int:
    return int((time.time() - t0) * 1000)


