"""A streaming query run by Spark Structured Streaming (the Spark runtime's ``start()``).

:class:`SparkStreamExecution` has the interface of
:class:`~ember.streaming.execution.MicroBatchExecution` that the query handle and
``session.streams`` use, over a PySpark ``StreamingQuery``: the triggers, the offset and commit
logs, the watermarks, the state (RocksDB) and the retries are Spark's.

Sinks are Spark's, with the writer's options: ``parquet`` (Spark's file sink, its
``_spark_metadata`` log, exactly-once), ``console``, and ``foreachBatch`` (the function gets an
Ember DataFrame over Spark's batch).  The ``memory`` sink is Spark's ``foreachBatch`` appending
each batch to Ember's memory table, so ``session.table(queryName)`` reads it as on the local
runtime.

Settings: ``transformWithState`` needs the RocksDB state store provider, which is set for the
query whatever ``spark.sql.streaming.stateStore.providerClass`` says; the number of Ember state
partitions (the join's grouping keys) is ``spark.sql.shuffle.partitions``, pinned, as Spark pins
its own, by the checkpoint's first batch.  A join whose watermark never evicts runs without
no-data batches (``spark.sql.streaming.noDataMicroBatches.enabled`` off for that query), as
Spark's stream-stream join and the local runtime run it.

Given the same data batches, the output rows are the local runtime's, batch by batch: the
late rows, the watermarks and the no-data batches (transformWithState runs one whenever the
watermark moves, so does the local join when it can evict; otherwise neither) are the same.
Which files land in which batch depends on when they appear relative to the triggers, on
either runtime; within a batch, rows come in state-partition order.  Progress reports are
Spark's (its operator is ``transformWithStateInPySparkExec``, whose state rows are the stores'
blobs, not the join's rows).  A stream-static join's static side is read once when the query
starts (:mod:`.plan`); its broadcast is released when the query ends.
"""

from __future__ import annotations

import json
import os
import shutil
import threading
import traceback
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import pyarrow as pa

from ember.conf import SHUFFLE_PARTITIONS, STREAM_NO_DATA_BATCHES, STREAM_STATE_PROVIDER
from ember.errors import AnalysisError, EmberError, UnsupportedError
from ember.streaming.execution import StreamingQueryException, Trigger
from ember.streaming.state.store import ROCKSDB_PROVIDER_CLASS
from ember.execution.kernels.batches import conform_batch
from ember.runtime.spark.errors import original_error, task_errors
from ember.runtime.spark.session import push_conf
from ember.streaming.logs import StreamMetadata
from ember.streaming.spark.plan import translate, _release
from ember.streaming.spark.state_metrics import state_rows_per_side

if TYPE_CHECKING:  # pragma: no cover
    from ember.session import Session

__all__ = ["streaming_runtime", "SparkStreamExecution", "RUNTIME_OPTION"]

#: writer option choosing the runtime of one query (default: the session's runtime)
RUNTIME_OPTION = "ember.runtime"
_SPARK_SINKS = frozenset({"parquet", "console", "memory", "foreachbatch"})


def streaming_runtime(session: "Session", options: dict[str, str]) -> str:
    """``local`` or ``spark``: the writer's ``ember.runtime`` option, else the session's."""
    value = next((v for k, v in options.items() if k.lower() == RUNTIME_OPTION), None)
    runtime = (value or session.runtime).strip().lower()
    if runtime not in ("local", "spark"):
        raise AnalysisError(f"{RUNTIME_OPTION} must be 'local' or 'spark', not {value!r}")
    if runtime == "spark" and session.spark_session is None:
        raise AnalysisError(f"option('{RUNTIME_OPTION}', 'spark') needs a session on the Spark "
                            "runtime (ember.Session(runtime='spark'))")
    return runtime


def pinned_partitions(checkpoint: str, default: int) -> int:
    """``spark.sql.shuffle.partitions`` as the checkpoint's latest offsets entry recorded it
    (Spark's ``OffsetSeqMetadata.conf``), else ``default``."""
    offsets = os.path.join(checkpoint, "offsets")
    if not os.path.isdir(offsets):
        return default
    ids = sorted(int(n) for n in os.listdir(offsets) if n.isdigit())
    if not ids:
        return default
    with open(os.path.join(offsets, str(ids[-1]))) as f:
        lines = f.read().splitlines()
    try:
        meta = json.loads(lines[1])
        return int(meta.get("conf", {}).get(SHUFFLE_PARTITIONS.key, default))
    except (IndexError, ValueError):
        return default


class SparkStreamExecution:
    """One query on Spark Structured Streaming (see the module docstring)."""

    def __init__(self, session: "Session", writer: Any, plan: Any, key: str, path: str | None,
                 checkpoint: str, temporary: bool,
                 on_terminated: Callable[[Any], None] | None) -> None:

        if key not in _SPARK_SINKS:
            raise UnsupportedError(f"The {key} sink is not supported on the Spark runtime",
                                   error_class="UNSUPPORTED_FEATURE")
        self.session = session
        self.name = writer._name
        self.checkpoint = os.path.abspath(checkpoint)
        self.delete_checkpoint_on_stop = temporary
        self._writer = writer
        self._key = key
        self._path = path
        self._on_terminated = on_terminated
        # Spark reads the query id from <checkpoint>/metadata, the file Ember writes
        self.id = StreamMetadata.read_or_create(self.checkpoint)
        spark = session.spark_session
        push_conf(spark, session.sql_conf)
        n = pinned_partitions(self.checkpoint, int(session.sql_conf.get(SHUFFLE_PARTITIONS)))
        self._overrides = {STREAM_STATE_PROVIDER.key: ROCKSDB_PROVIDER_CLASS,
                           SHUFFLE_PARTITIONS.key: str(n)}
        try:
            with self._spark_conf():
                self.translated = translate(session, plan, n)
        except BaseException:
            if temporary:
                shutil.rmtree(self.checkpoint, ignore_errors=True)
            raise
        if self.translated.has_join and not self.translated.has_state_cleanup:
            self._overrides[STREAM_NO_DATA_BATCHES.key] = "false"
        self._query: Any = None
        self._sink: Any = None
        #: errors raised in this process by the foreachBatch functions (the query's cause)
        self._batch_errors: list[BaseException] = []
        self._thread: threading.Thread | None = None
        self._active = False
        self._lock = threading.Condition()
        self.exception: StreamingQueryException | None = None
        #: Spark's ``awaitProgressLock`` (held while the query constructs a batch)
        self.progress_lock = _ProgressLock(self)
        self.last_execution = None

    # -- settings -------------------------------------------------------------------------------
    def _spark_conf(self) -> Any:
        """The query's Spark settings, set while the query is built and started (a query keeps
        a copy of its session's settings), then restored."""
        from contextlib import contextmanager

        spark = self.session.spark_session
        overrides = self._overrides

        @contextmanager
        def scope() -> Any:
            saved = {k: spark.conf.get(k, None) for k in overrides}
            for k, v in overrides.items():
                spark.conf.set(k, v)
            try:
                yield
            finally:
                for k, v in saved.items():
                    if v is None:
                        spark.conf.unset(k)
                    else:
                        spark.conf.set(k, v)

        return scope()

    # -- the query's parts ------------------------------------------------------------------------
    def _data_stream_writer(self) -> Any:
        w = self._writer
        out = self.translated.frame.writeStream.outputMode(w._mode)
        options = {k: v for k, v in w._options.items()
                   if not k.lower().startswith("ember.") and k.lower() != "checkpointlocation"}
        if self._key == "memory":
            self._sink = w._sink(self.session, "memory", None)
            out = out.foreachBatch(_MemoryBatch(self._sink, w._df.schema, self._batch_errors))
        elif self._key == "foreachbatch":
            if w._foreach_batch is None or not callable(w._foreach_batch):
                raise AnalysisError("foreachBatch needs a function of (DataFrame, batch id)",
                                    error_class="_LEGACY_ERROR_TEMP_1300")
            out = out.foreachBatch(_UserBatch(self.session, w._foreach_batch,
                                              self._batch_errors))
        else:
            out = out.format(self._key).options(**options)
            if w._partition_by:
                out = out.partitionBy(*w._partition_by)
        if self.name is not None:
            out = out.queryName(self.name)
        out = out.option("checkpointLocation", self.checkpoint)
        return _with_trigger(out, w._trigger)

    def start(self) -> None:
        try:
            writer = self._data_stream_writer()
            with self._spark_conf():
                self._query = writer.start(self._path) if self._path else writer.start()
        except Exception as e:  # noqa: BLE001 - the query never ran: report and forget it
            self._release_broadcasts()
            if self._on_terminated is not None:
                self._on_terminated(self)
            if isinstance(e, EmberError):
                raise
            from pyspark.errors import AnalysisException

            if isinstance(e, AnalysisException):  # Spark refused the query: its error class
                first = next((ln for ln in str(e).splitlines() if ln.strip()), "")
                raise AnalysisError(first, error_class=e.getCondition()) from None
            raise self._wrap(e) from None
        self._active = True
        self._thread = threading.Thread(target=self._watch, daemon=True,
                                        name=f"spark stream watcher [id = {self.id}]")
        self._thread.start()

    def _watch(self) -> None:
        try:
            self._query.awaitTermination()
        except Exception as e:  # noqa: BLE001 - the query's failure, kept for the handle
            self.exception = self._wrap(e)
        finally:
            self._release_broadcasts()
            with self._lock:
                self._active = False
                self._lock.notify_all()
            if self.delete_checkpoint_on_stop and self.exception is None:
                shutil.rmtree(self.checkpoint, ignore_errors=True)
            if self._on_terminated is not None:
                self._on_terminated(self)

    def _release_broadcasts(self) -> None:
        """The static sides' broadcasts (stream-static joins) end with the query."""

        _release(self.translated.broadcasts)

    # -- the handle's interface -----------------------------------------------------------------
    @property
    def run_id(self) -> str:
        return "" if self._query is None else str(self._query.runId)

    @property
    def is_active(self) -> bool:
        return self._active

    @property
    def status(self) -> dict[str, Any]:
        if self._query is None:
            return {"message": "Initializing sources", "isDataAvailable": False,
                    "isTriggerActive": False}
        return dict(self._query.status)

    @property
    def recent_progress(self) -> list[dict[str, Any]]:
        if self._query is None:
            return []
        return [_progress_dict(p) for p in self._query.recentProgress]

    def process_all_available(self) -> None:
        """Spark's ``processAllAvailable`` (its failure raised as Ember's)."""
        if self.exception is not None:
            raise self.exception
        if not self._active:
            return
        try:
            self._query.processAllAvailable()
        except Exception as e:  # noqa: BLE001
            self._join_watcher()
            raise self.exception or self._wrap(e) from None

    def await_termination(self, timeout: float | None = None) -> bool:
        try:
            done = (self._query.awaitTermination() if timeout is None
                    else self._query.awaitTermination(timeout))
        except Exception as e:  # noqa: BLE001
            self._join_watcher()
            raise self.exception or self._wrap(e) from None
        if timeout is None or done:
            self._join_watcher()
        if self.exception is not None:
            raise self.exception
        return True if timeout is None else bool(done)

    def stop(self, timeout: float | None = None) -> None:
        if self._query is not None:
            self._query.stop()
        self._join_watcher(timeout)

    def explain(self, extended: bool = False) -> None:
        """Spark's plan of the last micro-batch."""
        if self._query is None:
            print("No physical plan. Waiting for data.")
            return
        self._query.explain(extended)

    def state_rows_per_side(self, batch_id: int | None = None) -> dict[str, int]:
        """The join's rows held per side after a committed batch (:mod:`.state_metrics`)."""

        return state_rows_per_side(self.session.spark_session, self.checkpoint, batch_id)

    def _join_watcher(self, timeout: float | None = None) -> None:
        t = self._thread
        if t is not None and t is not threading.current_thread():
            t.join(timeout)

    def _wrap(self, e: BaseException) -> StreamingQueryException:
        cause: BaseException = original_error(e) or e
        if self._batch_errors and "FOREACH_BATCH_USER_FUNCTION_ERROR" in str(e):
            cause = self._batch_errors[-1]  # raised on the driver: the object itself
        text = getattr(cause, "message", None) or str(cause) or type(cause).__name__
        if cause is e:
            text = next((ln for ln in str(e).splitlines() if ln.strip()), type(e).__name__)
        desc = f"{self.name} " if self.name else ""
        msg = (f"Query {desc}[id = {self.id}, runId = {self.run_id}] terminated with "
               f"exception: {text}")
        return StreamingQueryException(msg, cause=cause, parameters={
            "id": self.id, "runId": self.run_id, "message": text,
            "queryDebugString": "".join(traceback.format_exception(e))[-2000:]})


class _ProgressLock:
    """The query's ``StreamExecution.awaitProgressLock`` (a JVM ``ReentrantLock``; PySpark's
    pinned-thread mode locks and unlocks it on the caller's JVM thread): rows added to several
    sources while it is held land in one micro-batch (for tests)."""

    def __init__(self, execution: SparkStreamExecution) -> None:
        self._execution = execution

    def _jvm_lock(self) -> Any:
        query = self._execution._query
        if query is None:
            raise AnalysisError("The query has not started")
        return query._jsq.streamingQuery().awaitProgressLock()

    def acquire(self) -> bool:
        self._jvm_lock().lock()
        return True

    def release(self) -> None:
        self._jvm_lock().unlock()

    def __enter__(self) -> "_ProgressLock":
        self.acquire()
        return self

    def __exit__(self, *exc: Any) -> None:
        self.release()


def _with_trigger(out: Any, trigger: Trigger) -> Any:
    if trigger.kind == "once":
        return out.trigger(once=True)
    if trigger.kind == "availableNow":
        return out.trigger(availableNow=True)
    if trigger.interval_ms > 0:
        return out.trigger(processingTime=f"{trigger.interval_ms} milliseconds")
    return out


def _progress_dict(p: Any) -> dict[str, Any]:
    text = getattr(p, "json", None)
    if isinstance(text, str):
        return json.loads(text)
    return dict(p)


class _MemoryBatch:
    """``foreachBatch`` appending Spark's batch to Ember's memory sink (on the driver)."""

    def __init__(self, sink: Any, schema: Any, errors: list[BaseException]) -> None:
        self.sink = sink
        self.schema = schema.to_arrow_schema()
        self.errors = errors

    def __call__(self, batch: Any, batch_id: int) -> None:
        # a failed job (or one cancelled by stop()) goes back to Spark as a short Ember error,
        # not py4j's page of Java stack trace
        try:
            with task_errors("collecting a micro-batch for the memory sink"):
                table = batch.toArrow()
        except Exception as e:
            self.errors.append(e)
            raise
        rows = [conform_batch(b, self.schema) for b in table.to_batches() if b.num_rows]
        self.sink.add_batch(int(batch_id), pa.Table.from_batches(rows, schema=self.schema))


class _UserBatch:
    """``foreachBatch(fn)``: ``fn(Ember DataFrame over Spark's batch, batch_id)``."""

    def __init__(self, session: "Session", fn: Callable[[Any, int], Any],
                 errors: list[BaseException]) -> None:
        self.session = session
        self.fn = fn
        self.errors = errors

    def __call__(self, batch: Any, batch_id: int) -> None:
        try:
            self.fn(self.session.createDataFrame(batch), int(batch_id))
        except Exception as e:
            self.errors.append(e)
            raise
