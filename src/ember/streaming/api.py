"""The streaming API in PySpark's shape: ``session.readStream`` (:class:`DataStreamReader`),
``df.writeStream`` (:class:`DataStreamWriter`), the query handle (:class:`StreamingQuery`) and
``session.streams`` (:class:`StreamingQueryManager`).

>>> from ember.streaming import MemoryStream                                  # doctest: +SKIP
>>> ms = MemoryStream(spark, "k int, v string")                               # doctest: +SKIP
>>> q = (ms.toDF().writeStream.format("memory").queryName("out")              # doctest: +SKIP
...      .outputMode("append").start())
>>> ms.addData([(1, "a")]); q.processAllAvailable()                           # doctest: +SKIP
>>> spark.table("out").collect()                                              # doctest: +SKIP
[Row(k=1, v='a')]

``start()`` checks the query (:func:`ember.streaming.checks.check_streaming_plan`, Spark's
messages), resolves the checkpoint directory (``option("checkpointLocation", ...)``, else
``spark.sql.streaming.checkpointLocation/<queryName or a UUID>``, else a temporary directory for
the memory, console and foreachBatch sinks, deleted when the query stops cleanly), builds the sink
and starts the query's thread (:mod:`.execution`).  Every trigger runs on that thread, as in Spark:
``processingTime`` until ``stop()``, ``once`` one batch, ``availableNow`` the batches the data
available at start needs; ``awaitTermination()`` waits for the end.
"""

from __future__ import annotations

import os
import tempfile
import threading
import uuid
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Literal

from ember import types as T
from ember.conf import DEFAULT_DATA_SOURCE, STREAM_CHECKPOINT_LOCATION
from ember.errors import AnalysisError, UnsupportedError
from ember.expressions.base import AttributeReference
from ember.streaming.execution import (
    MicroBatchExecution,
    StreamingQueryException,
    Trigger,
)
from ember.streaming.sources import source_class
from ember.plans.logical.nodes import StreamingRelation
from ember.streaming.checks import check_streaming_plan
from ember.streaming.sinks import sink_class
from ember.sql.schema_ddl import parse_ddl_schema

if TYPE_CHECKING:  # pragma: no cover
    from ember.dataframe import DataFrame
    from ember.session import Session

__all__ = ["DataStreamReader", "DataStreamWriter", "StreamingQuery", "StreamingQueryManager",
           "StreamingQueryException"]

OutputMode = Literal["append", "update", "complete"]
#: sinks whose queries may run without a checkpoint location (a temporary one is used)
_TEMP_CHECKPOINT_SINKS = frozenset({"memory", "console", "foreachbatch", "noop"})


def _opt_str(v: Any) -> str:
    return str(v).lower() if isinstance(v, bool) else str(v)


# ---------------------------------------------------------------------------------------------
# Reading


class DataStreamReader:
    """``session.readStream``: ``.format(...).schema(...).option(...).load(path)``, or
    ``.parquet(path)`` / ``.csv(path)`` / ``.json(path)``; ``format("rate")`` needs no schema.

    >>> df = spark.readStream.schema("k int, t timestamp").json("/data/in")     # doctest: +SKIP
    """

    def __init__(self, session: "Session") -> None:
        self._session = session
        self._format: str | None = None
        self._schema: T.StructType | None = None
        self._options: dict[str, str] = {}

    def format(self, source: str) -> "DataStreamReader":  # noqa: A003
        self._format = source
        return self

    def schema(self, schema: T.StructType | str) -> "DataStreamReader":
        schema = T.as_ember_type(schema)  # a PySpark StructType too
        if isinstance(schema, str):
            schema = parse_ddl_schema(schema)
        self._schema = schema
        return self

    def option(self, key: str, value: Any) -> "DataStreamReader":
        self._options[key] = _opt_str(value)
        return self

    def options(self, **options: Any) -> "DataStreamReader":
        for k, v in options.items():
            self.option(k, v)
        return self

    def load(self, path: str | None = None, format: str | None = None,  # noqa: A002
             schema: T.StructType | str | None = None, **options: Any) -> "DataFrame":
        """The stream as a streaming DataFrame (its source is created when a query starts)."""
        # imported here: at module level it would close the import cycle
        # streaming.api -> dataframe -> streaming.api
        from ember.dataframe import DataFrame

        if format is not None:
            self.format(format)
        if schema is not None:
            self.schema(schema)
        self.options(**options)
        fmt = (self._format or self._session.sql_conf.get(DEFAULT_DATA_SOURCE)).lower()
        if path is not None:
            path = os.path.abspath(os.path.expanduser(path))
        cls = source_class(fmt)
        if fmt == "memory":
            if self._schema is None:
                raise AnalysisError("A memory stream needs a schema (readStream.schema(...))")
            schema_t = self._schema
        else:
            # Spark's DataSource.sourceSchema: the source says what its rows look like
            probe = cls(self._session, self._schema, {**self._options, "__format": fmt}, path)
            schema_t = probe.schema
            probe.stop()
        attrs = tuple(AttributeReference(f.name, f.data_type, f.nullable)
                      for f in schema_t.fields)
        opts = tuple(sorted(self._options.items()))
        return DataFrame(self._session, StreamingRelation(fmt, attrs, opts, path))

    def parquet(self, path: str, **options: Any) -> "DataFrame":
        return self.format("parquet").load(path, **options)

    def csv(self, path: str, schema: T.StructType | str | None = None,
            **options: Any) -> "DataFrame":
        return self.format("csv").load(path, schema=schema, **options)

    def json(self, path: str, schema: T.StructType | str | None = None,
             **options: Any) -> "DataFrame":
        return self.format("json").load(path, schema=schema, **options)


# ---------------------------------------------------------------------------------------------
# Writing


class DataStreamWriter:
    """``df.writeStream``: ``.format("memory" | "console" | "parquet").outputMode("append")
    .option("checkpointLocation", ...).queryName(...).trigger(...).start([path])``, or
    ``.foreachBatch(fn).start()``.  PySpark's method names and keywords."""

    def __init__(self, df: "DataFrame") -> None:
        self._df = df
        self._format: str | None = None
        self._mode: str = "append"
        self._options: dict[str, str] = {}
        self._name: str | None = None
        self._trigger = Trigger()
        self._foreach_batch: Callable[[Any, int], Any] | None = None
        self._partition_by: list[str] = []

    def format(self, source: str) -> "DataStreamWriter":  # noqa: A003
        self._format = source
        return self

    def outputMode(self, outputMode: OutputMode | str) -> "DataStreamWriter":  # noqa: N802,N803
        mode = str(outputMode).lower()
        if mode not in ("append", "update", "complete"):
            raise AnalysisError(
                f"Unknown output mode {outputMode}. Accepted output modes are 'append', "
                "'complete', 'update'.", error_class="STREAMING_OUTPUT_MODE.INVALID",
                parameters={"outputMode": str(outputMode)})
        self._mode = mode
        return self

    def option(self, key: str, value: Any) -> "DataStreamWriter":
        self._options[key] = _opt_str(value)
        return self

    def options(self, **options: Any) -> "DataStreamWriter":
        for k, v in options.items():
            self.option(k, v)
        return self

    def queryName(self, queryName: str) -> "DataStreamWriter":  # noqa: N802,N803
        if not queryName or not str(queryName).strip():
            raise AnalysisError("The queryName must be a non-empty string.")
        self._name = str(queryName)
        return self

    def partitionBy(self, *cols: str) -> "DataStreamWriter":  # noqa: N802
        if len(cols) == 1 and isinstance(cols[0], (list, tuple)):
            cols = tuple(cols[0])
        self._partition_by = [str(c) for c in cols]
        return self

    def trigger(self, *, processingTime: str | None = None,  # noqa: N803
                once: bool | None = None, continuous: str | None = None,
                availableNow: bool | None = None) -> "DataStreamWriter":  # noqa: N803
        """Exactly one of ``processingTime="1 second"``, ``once=True``,
        ``availableNow=True`` (continuous processing is not supported)."""
        given = [x for x in (processingTime, once, continuous, availableNow) if x is not None]
        if len(given) != 1:
            raise ValueError("Only one trigger can be set.")
        if continuous is not None:
            raise UnsupportedError("Continuous processing (trigger(continuous=...)) is not "
                                   "supported by Ember")
        if processingTime is not None:
            if not str(processingTime).strip():
                raise ValueError(f"Value for processingTime must be a non empty string. Got: "
                                 f"{processingTime}")
            self._trigger = Trigger.processing_time(processingTime)
        elif once is not None:
            if once is not True:
                raise ValueError(f"Value for once must be True. Got: {once}")
            self._trigger = Trigger("once")
        else:
            if availableNow is not True:
                raise ValueError(f"Value for availableNow must be True. Got: {availableNow}")
            self._trigger = Trigger("availableNow")
        return self

    def foreachBatch(self, func: Callable[[Any, int], Any]) -> "DataStreamWriter":  # noqa: N802
        """Run ``func(batch_df, batch_id)`` on every micro-batch's output."""
        self._format = "foreachBatch"
        self._foreach_batch = func
        return self

    def foreach(self, f: Any) -> "DataStreamWriter":
        raise UnsupportedError("writeStream.foreach is not supported by Ember; use foreachBatch")

    def toTable(self, tableName: str, **kwargs: Any) -> "StreamingQuery":  # noqa: N802,N803
        raise UnsupportedError("writeStream.toTable is not supported by Ember (no catalog "
                               "tables); use format('memory') or a file sink")

    def start(self, path: str | None = None, format: str | None = None,  # noqa: A002
              outputMode: str | None = None, partitionBy: Any = None,  # noqa: N803
              queryName: str | None = None, **options: Any) -> "StreamingQuery":
        """Start the query; returns its handle at once (batches run on the query's thread)."""
        if format is not None:
            self.format(format)
        if outputMode is not None:
            self.outputMode(outputMode)
        if partitionBy is not None:
            self.partitionBy(*([partitionBy] if isinstance(partitionBy, str) else partitionBy))
        if queryName is not None:
            self.queryName(queryName)
        self.options(**options)
        df = self._df
        session = df.sparkSession
        plan = df.plan
        if not plan.is_streaming:
            raise AnalysisError("'writeStream' can be called only on streaming Dataset/DataFrame",
                                error_class="WRITE_STREAM_NOT_ALLOWED")
        fmt = (self._format or "parquet")
        key = fmt.lower()

        check_streaming_plan(plan, self._mode, session.sql_conf)
        return session.streams._start(self, plan, key, path)

    # -- used by StreamingQueryManager._start ----------------------------------------------------
    def _checkpoint(self, session: "Session", key: str) -> tuple[str, bool]:
        """(checkpoint directory, delete it when the query stops)."""
        loc = next((v for k, v in self._options.items() if k.lower() == "checkpointlocation"),
                   None)
        if loc is not None:
            return os.path.abspath(os.path.expanduser(loc)), False
        root = session.sql_conf.get(STREAM_CHECKPOINT_LOCATION)
        if root:
            return os.path.join(os.path.abspath(os.path.expanduser(root)),
                                self._name or str(uuid.uuid4())), False
        if key in _TEMP_CHECKPOINT_SINKS:
            return tempfile.mkdtemp(prefix="temporary-"), True
        raise AnalysisError(
            'checkpointLocation must be specified either through option("checkpointLocation", '
            '...) or SparkSession.conf.set("spark.sql.streaming.checkpointLocation", ...).',
            error_class="_LEGACY_ERROR_TEMP_1298")

    def _sink(self, session: "Session", key: str, path: str | None) -> Any:
        opts = dict(self._options)
        if self._name is not None:
            opts["queryName"] = self._name
        if self._partition_by:
            import json

            opts["partitionBy"] = json.dumps(self._partition_by)
        cls = sink_class(key)
        if key == "memory":
            return cls(session, opts, path, schema=self._df.schema)
        if key == "foreachbatch":
            return cls(session, opts, path, fn=self._foreach_batch)
        return cls(session, opts, path)


# ---------------------------------------------------------------------------------------------
# The query handle and the manager


class StreamingQuery:
    """A running (or finished) streaming query (PySpark's ``StreamingQuery``)."""

    def __init__(self, execution: MicroBatchExecution) -> None:
        self._ex = execution

    @property
    def id(self) -> str:  # noqa: A003
        """The query's id, kept in the checkpoint across restarts."""
        return self._ex.id

    @property
    def runId(self) -> str:  # noqa: N802
        """This run's id (new at every start)."""
        return self._ex.run_id

    @property
    def name(self) -> str | None:
        return self._ex.name

    @property
    def isActive(self) -> bool:  # noqa: N802
        return self._ex.is_active

    @property
    def status(self) -> dict[str, Any]:
        return dict(self._ex.status)

    @property
    def awaitProgressLock(self) -> Any:  # noqa: N802
        """The lock held while the query constructs its next batch (Spark's internal
        ``awaitProgressLock``): rows added to several streams while holding it land in one
        micro-batch (for tests)."""
        return self._ex.progress_lock

    @property
    def lastProgress(self) -> dict[str, Any] | None:  # noqa: N802
        progress = self._ex.recent_progress
        return progress[-1] if progress else None

    @property
    def recentProgress(self) -> list[dict[str, Any]]:  # noqa: N802
        return list(self._ex.recent_progress)

    def awaitTermination(self, timeout: float | None = None) -> bool | None:  # noqa: N802
        """Wait for the query to end (raises its :class:`StreamingQueryException`); with a
        ``timeout`` (seconds), whether it ended in time."""
        if timeout is not None and timeout < 0:
            raise ValueError(f"timeout must be a positive integer or float. Got {timeout}")
        done = self._ex.await_termination(timeout)
        return done if timeout is not None else None

    def processAllAvailable(self) -> None:  # noqa: N802
        """Block until all data available in the sources now has been processed and committed
        to the sink (for tests)."""
        self._ex.process_all_available()

    def stop(self) -> None:
        """Stop the query (after the batch in flight) and wait for its thread."""
        self._ex.stop()

    def exception(self) -> StreamingQueryException | None:
        return self._ex.exception

    def explain(self, extended: bool = False) -> None:
        """Print the last micro-batch's physical plan (or the plan when none ran yet)."""
        if hasattr(self._ex, "explain"):  # on Spark: Spark's plan
            self._ex.explain(extended)
            return
        last = self._ex.last_execution
        if last is None:
            print("No physical plan. Waiting for data.")
            return
        text = "== Physical Plan ==\n" + last.executed_plan.tree_string()
        if extended:
            text = ("== Optimized Logical Plan ==\n" + last.optimized.tree_string() + "\n"
                    + text)
        print(text)

    def state_rows_per_side(self, batch_id: int | None = None) -> dict[str, int]:
        """``{"left": n, "right": m}``: the rows the stream-stream join holds per side after
        ``batch_id`` (default: the last batch).  Local runtime: the progress report's
        ``numTotalStateRowsLeft`` / ``numTotalStateRowsRight``; Spark runtime: read from the
        committed state in the checkpoint (:mod:`ember.streaming.spark.state_metrics`)."""
        if hasattr(self._ex, "state_rows_per_side"):
            return self._ex.state_rows_per_side(batch_id)
        reports = [p for p in self._ex.recent_progress
                   if batch_id is None or p["batchId"] == batch_id]
        metrics = [op.get("customMetrics", {}) for op in (reports[-1:] or [{}])[0].get(
            "stateOperators", [])]
        joins = [m for m in metrics if "numTotalStateRowsLeft" in m]
        if len(joins) != 1:
            raise AnalysisError(f"No progress report of a stream-stream join for batch "
                                f"{'(last)' if batch_id is None else batch_id}")
        return {"left": joins[0]["numTotalStateRowsLeft"],
                "right": joins[0]["numTotalStateRowsRight"]}

    def __repr__(self) -> str:
        return f"<StreamingQuery {self.name or ''} id={self.id} runId={self.runId}>"


class StreamingQueryManager:
    """``session.streams``: the session's active queries (PySpark's ``StreamingQueryManager``)."""

    def __init__(self, session: "Session") -> None:
        self._session = session
        self._lock = threading.Condition()
        self._active: dict[str, StreamingQuery] = {}
        self._terminated: StreamingQuery | None = None

    @property
    def active(self) -> list[StreamingQuery]:
        with self._lock:
            return list(self._active.values())

    def get(self, id: str) -> StreamingQuery | None:  # noqa: A002
        with self._lock:
            return self._active.get(str(id))

    def awaitAnyTermination(self, timeout: float | None = None) -> bool | None:  # noqa: N802
        """Wait until some query of the session ends (since the last ``resetTerminated``)."""
        with self._lock:
            ok = self._lock.wait_for(lambda: self._terminated is not None, timeout)
            q = self._terminated
        if q is not None and q.exception() is not None:
            raise q.exception()  # type: ignore[misc]
        return bool(ok) if timeout is not None else None

    def resetTerminated(self) -> None:  # noqa: N802
        with self._lock:
            self._terminated = None

    def _start(self, writer: DataStreamWriter, plan: Any, key: str,
               path: str | None) -> StreamingQuery:
        session = self._session
        name = writer._name
        if key == "memory" and name is None:
            raise AnalysisError("queryName must be specified for memory sink",
                                error_class="_LEGACY_ERROR_TEMP_1301")
        with self._lock:
            if name is not None and any(q.name == name for q in self._active.values()):
                raise AnalysisError(
                    f"Cannot start query with name {name} as a query with that name is already "
                    "active in this SparkSession", error_class="DUPLICATE_QUERY_NAME",
                    parameters={"queryName": name})
        checkpoint, temporary = writer._checkpoint(session, key)
        if key == "memory" and writer._mode != "complete" and os.path.isdir(
                os.path.join(checkpoint, "offsets")) and os.listdir(
                os.path.join(checkpoint, "offsets")):
            raise AnalysisError(
                "This query does not support recovering from checkpoint location. Delete "
                f"{os.path.join(checkpoint, 'offsets')} to start over.",
                error_class="_LEGACY_ERROR_TEMP_1299")
        # imported here so that pyspark loads only when the Spark runtime runs
        from ember.streaming.spark import SparkStreamExecution, streaming_runtime

        execution: Any
        if streaming_runtime(session, writer._options) == "spark":
            # Spark Structured Streaming runs the query (ember.streaming.spark)
            execution = SparkStreamExecution(session, writer, plan, key, path, checkpoint,
                                             temporary, self._terminated_query)
        else:
            sink = writer._sink(session, key, path)
            execution = MicroBatchExecution(
                session, plan, sink, checkpoint=checkpoint, trigger=writer._trigger, name=name,
                output_mode=writer._mode, source_class=source_class,
                delete_checkpoint_on_stop=temporary,
                on_terminated=self._terminated_query)
        query = StreamingQuery(execution)
        with self._lock:
            if execution.id in self._active:
                raise AnalysisError(
                    f"Cannot start query with id {execution.id} as another query with same id "
                    "is already active. Perhaps you are attempting to restart a query from "
                    "checkpoint that is already active.", error_class="CONCURRENT_QUERY")
            self._active[execution.id] = query
        execution.start()
        return query

    def _terminated_query(self, execution: MicroBatchExecution) -> None:
        with self._lock:
            q = self._active.pop(execution.id, None)
            if q is not None:
                self._terminated = q
            self._lock.notify_all()
