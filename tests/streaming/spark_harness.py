"""Differential streaming harness: one scripted sequence of input batches through Spark Structured
Streaming (the PySpark 4.3 oracle) and through Ember's streaming engine, recording what each sink
received in every micro-batch.

A :class:`Scenario` names its memory streams (DDL schemas), optional static tables, a query builder
written once for both engines (``build(F, streams, statics) -> DataFrame`` with ``F`` the engine's
``functions`` module), SQL confs, and the script: a tuple of steps, each mapping stream names to
the rows added in that step. :func:`run_scenario` drives an engine through the script:

    for each step: add the step's rows to every stream (atomically, see below)
                   query.processAllAvailable()    # the data batch, then any no-data batches
                   record the foreachBatch calls made since the previous step

and returns one :class:`StepResult` per step: the micro-batches run in that step, each with its
rows (a multiset, order-free), the watermark it ran with, and its stateful operator metrics from
``recentProgress`` (rows held in state, rows dropped as late).

Spark side. Spark's own test source, ``MemoryStream`` (moved to
``org.apache.spark.sql.execution.streaming.runtime`` in 4.x), is reached through py4j: built with
``Encoders.row(schema)``; rows are added as JVM ``Row`` objects (made by ``createDataFrame`` +
``collectAsList`` so every value has the JVM type the encoder expects) in a Scala ``List``.

Atomic steps. A running Spark query polls its sources from its own thread every 10 ms, so adding
a step's rows to two streams one after the other could split them over two micro-batches. Spark
builds each batch (``MicroBatchExecution.constructNextBatch``) while holding the query's
``awaitProgressLock``; the harness takes that lock (a ``ReentrantLock``: PySpark's pinned-thread
py4j mode runs our lock and unlock on the same JVM thread) around the additions of a step, so the
next batch sees all of them or none. Restarting the query per step instead would not do: after a
restart Spark forgets each input's watermark (only the global one is in the offset log), so the
global ``min`` watermark would stall until every input sees data again.

Ember side: ``ember.streaming.MemoryStream(session, schema)`` with ``addData`` and ``toDF``, and
the same ``writeStream.foreachBatch(...).start()`` / ``processAllAvailable()`` calls. Ember's query
also builds batches on its own thread, under ``StreamingQuery.awaitProgressLock`` as Spark does:
the harness holds it the same way.
"""

from __future__ import annotations

import contextlib
import datetime as _dt
import threading
from collections import Counter
from dataclasses import dataclass, field
from typing import Any, Callable, Iterator, Mapping

import pyarrow as pa

import ember

#: Event times of the scripts are seconds after this instant.
T0 = _dt.datetime(2024, 1, 1, tzinfo=_dt.timezone.utc)
T0_MS = int(T0.timestamp() * 1000)


def ts(seconds: float) -> _dt.datetime:
    """The event time ``seconds`` after :data:`T0` (a UTC-aware datetime both engines accept)."""
    return T0 + _dt.timedelta(seconds=seconds)


@dataclass(frozen=True, order=True)
class At:
    """A normalized timestamp: seconds after :data:`T0` (reads as ``@100`` in failure output)."""

    s: float

    def __repr__(self) -> str:
        return "@" + f"{self.s:.3f}".rstrip("0").rstrip(".")


def norm(v: Any) -> Any:
    """A sink value both engines render alike: Rows/structs as tuples, timestamps as :class:`At`.

    PySpark's ``collect`` returns naive datetimes in the Python process's local zone; aware ones
    are converted; both end as seconds after T0.
    """
    if isinstance(v, _dt.datetime):
        aware = v if v.tzinfo is not None else v.astimezone()  # naive = local time (PySpark)
        return At((aware - T0).total_seconds())
    if isinstance(v, tuple):  # pyspark / ember Rows included
        return tuple(norm(x) for x in v)
    if isinstance(v, dict):
        return tuple(norm(x) for x in v.values())
    if isinstance(v, list):
        return tuple(norm(x) for x in v)
    return v


def rows_key(row: tuple) -> tuple:
    """Total order over normalized rows with NULLs and mixed types (for readable diffs)."""
    return tuple((x is None, type(x).__name__, str(x)) for x in row)


def sorted_rows(rows: Counter | list) -> list:
    items = list(rows.elements()) if isinstance(rows, Counter) else list(rows)
    return sorted(items, key=rows_key)


# ---------------------------------------------------------------------------------------------
# Scenarios and results


Build = Callable[[Any, Mapping[str, Any], Mapping[str, Any]], Any]


@dataclass(frozen=True)
class Scenario:
    """A scripted streaming query.

    ``steps[i][name]`` are the rows added to stream ``name`` in step ``i``. ``expected[i]`` is the
    designed output of step ``i`` as one tuple of rows per micro-batch (the data batch, then each
    no-data batch), already normalized (timestamps as :class:`At`); ``None`` = not asserted.
    ``expected_state[i]`` is the state rows held after step ``i`` (Spark's ``numRowsTotal``);
    ``expected_late[i]`` the input rows dropped as late in step ``i``'s first (data) batch.
    Before each step in ``restart_before`` the query is stopped and started again from its
    checkpoint (same streams, same sink).
    """

    name: str
    streams: Mapping[str, str]
    steps: tuple[Mapping[str, tuple[tuple, ...]], ...]
    build: Build
    expected: tuple[tuple[tuple[tuple, ...], ...], ...] | None = None
    expected_state: tuple[int, ...] | None = None
    expected_late: Mapping[int, int] = field(default_factory=dict)
    restart_before: frozenset[int] = frozenset()
    statics: Mapping[str, tuple[str, tuple[tuple, ...]]] = field(default_factory=dict)
    conf: Mapping[str, str] = field(default_factory=dict)
    output_mode: str = "append"


@dataclass(frozen=True)
class BatchResult:
    """One micro-batch as the sink and the progress report saw it."""

    batch_id: int
    rows: Counter
    watermark_ms: int | None  # the (eviction) watermark the batch ran with, ms since the epoch
    state_rows: int | None  # rows held in state after the batch (sum over stateful operators)
    dropped_late: int | None  # input rows dropped as late in this batch

    def summary(self) -> str:
        wm = None if self.watermark_ms is None else (self.watermark_ms - T0_MS) / 1000
        return (f"batch {self.batch_id} (watermark {wm}, state {self.state_rows}, "
                f"late {self.dropped_late}): {sorted_rows(self.rows)}")


@dataclass(frozen=True)
class StepResult:
    batches: tuple[BatchResult, ...]

    @property
    def rows(self) -> Counter:
        total: Counter = Counter()
        for b in self.batches:
            total.update(b.rows)
        return total

    @property
    def state_rows(self) -> int | None:
        return self.batches[-1].state_rows if self.batches else None

    def summary(self) -> str:
        return "; ".join(b.summary() for b in self.batches) or "no batch"


# ---------------------------------------------------------------------------------------------
# Progress reports (PySpark's StreamingQueryProgress or a plain dict, as Ember's may be)


def _get(obj: Any, key: str) -> Any:
    if obj is None:
        return None
    if isinstance(obj, Mapping):
        return obj.get(key)
    try:
        return obj[key]
    except (KeyError, TypeError, IndexError):
        return getattr(obj, key, None)


def parse_watermark(value: Any) -> int | None:
    """Spark reports ``eventTime.watermark`` as ``2024-01-01T00:00:30.000Z``; also accept ms."""
    if value is None:
        return None
    if isinstance(value, (int, float)):
        return int(value)
    if isinstance(value, _dt.datetime):
        aware = value if value.tzinfo else value.replace(tzinfo=_dt.timezone.utc)
        return int(aware.timestamp() * 1000)
    text = str(value).replace("Z", "+00:00")
    return int(_dt.datetime.fromisoformat(text).timestamp() * 1000)


def _progress_metrics(progress: Any) -> tuple[int | None, int | None, int | None]:
    watermark = parse_watermark(_get(_get(progress, "eventTime"), "watermark"))
    ops = _get(progress, "stateOperators") or []
    if not ops:
        return watermark, None, None
    state = [_get(op, "numRowsTotal") for op in ops]
    late = [_get(op, "numRowsDroppedByWatermark") for op in ops]
    return (watermark,
            None if any(s is None for s in state) else int(sum(state)),
            None if any(x is None for x in late) else int(sum(late)))


# ---------------------------------------------------------------------------------------------
# Engines


class SparkEngine:
    """Spark Structured Streaming on the oracle session (classic PySpark, py4j)."""

    name = "spark"

    def __init__(self, spark: Any) -> None:
        from pyspark.sql import functions

        self.spark = spark
        self.F = functions
        jvm = spark._jvm
        self._jvm = jvm
        self._memory_stream = getattr(
            jvm.org.apache.spark.sql.execution.streaming.runtime, "MemoryStream$"
        ).__getattr__("MODULE$")

    @contextlib.contextmanager
    def conf(self, conf: Mapping[str, str]) -> Iterator[None]:
        old = {k: self.spark.conf.get(k, None) for k in conf}
        for k, v in conf.items():
            self.spark.conf.set(k, v)
        try:
            yield
        finally:
            for k, v in old.items():
                if v is None:
                    self.spark.conf.unset(k)
                else:
                    self.spark.conf.set(k, v)

    def memory_stream(self, ddl: str) -> tuple[Any, Any]:
        from pyspark.sql import DataFrame
        from pyspark.sql.types import _parse_datatype_string

        schema = _parse_datatype_string(ddl)
        jschema = self.spark._jsparkSession.parseDataType(schema.json())
        encoder = self._jvm.org.apache.spark.sql.Encoders.row(jschema)
        stream = self._memory_stream.apply(encoder, self.spark._jsparkSession)
        return (stream, schema), DataFrame(stream.toDF(), self.spark)

    def static(self, ddl: str, rows: tuple[tuple, ...]) -> Any:
        return self.spark.createDataFrame(list(rows), ddl)

    def _jrows(self, schema: Any, rows: tuple[tuple, ...]) -> Any:
        java_rows = self.spark.createDataFrame(list(rows), schema)._jdf.collectAsList()
        return self._jvm.scala.jdk.javaapi.CollectionConverters.asScala(java_rows).toList()

    def feed(self, query: Any, additions: list[tuple[Any, tuple[tuple, ...]]]) -> None:
        # Convert first (runs Spark jobs), then add everything under the batch-construction lock.
        prepared = [(stream, self._jrows(schema, rows)) for (stream, schema), rows in additions]
        lock = query._jsq.streamingQuery().awaitProgressLock()
        lock.lock()
        try:
            for stream, seq in prepared:
                stream.addData(seq)
        finally:
            lock.unlock()

    def start(self, df: Any, checkpoint: str, output_mode: str,
              sink: Callable[[int, list[tuple]], None]) -> Any:
        def on_batch(batch_df: Any, batch_id: int) -> None:
            sink(int(batch_id), [norm(r) for r in batch_df.collect()])

        return (df.writeStream.foreachBatch(on_batch).outputMode(output_mode)
                .option("checkpointLocation", checkpoint).start())

    def progress(self, query: Any) -> list[Any]:
        return list(query.recentProgress)


class EmberEngine:
    """Ember's streaming engine (``ember.streaming``) on an Ember session."""

    name = "ember"

    def __init__(self, session: Any) -> None:
        import ember.functions

        self.session = session
        self.F = ember.functions

    @contextlib.contextmanager
    def conf(self, conf: Mapping[str, str]) -> Iterator[None]:
        old = {k: self.session.conf.get(k, None) for k in conf}
        for k, v in conf.items():
            self.session.conf.set(k, v)
        try:
            yield
        finally:
            for k, v in old.items():
                if v is None:
                    self.session.conf.unset(k)
                else:
                    self.session.conf.set(k, v)

    def memory_stream(self, ddl: str) -> tuple[Any, Any]:
        from ember.streaming import MemoryStream

        stream = MemoryStream(self.session, ddl)
        return (stream, ddl), stream.toDF()

    def static(self, ddl: str, rows: tuple[tuple, ...]) -> Any:
        return self.session.createDataFrame(list(rows), ddl)

    def feed(self, query: Any, additions: list[tuple[Any, tuple[tuple, ...]]]) -> None:
        with query.awaitProgressLock:  # held while the query constructs a batch, as in Spark
            for (stream, _ddl), rows in additions:
                stream.addData(list(rows))

    def start(self, df: Any, checkpoint: str, output_mode: str,
              sink: Callable[[int, list[tuple]], None]) -> Any:
        def on_batch(batch_df: Any, batch_id: int) -> None:
            sink(int(batch_id), [norm(tuple(r)) for r in batch_df.collect()])

        return (df.writeStream.foreachBatch(on_batch).outputMode(output_mode)
                .option("checkpointLocation", checkpoint).start())

    def progress(self, query: Any) -> list[Any]:
        return list(query.recentProgress)


class EmberFileEngine(EmberEngine):
    """Ember's streaming engine reading each stream from a Parquet directory: the Spark runtime
    (``ember.streaming.spark``) refuses a ``MemoryStream`` (it lives in the driver's Python
    process), so there each step writes one file per stream, under the query's
    ``awaitProgressLock`` so that the files of a step land in one micro-batch.  Works on the
    local runtime too."""

    def __init__(self, session: Any, root: str) -> None:
        super().__init__(session)
        self.name = f"ember-{session.runtime}"
        self._root = root
        self._files = 0

    def memory_stream(self, ddl: str) -> tuple[Any, Any]:
        import os
        import tempfile

        from ember.session import parse_ddl_schema

        directory = tempfile.mkdtemp(prefix="stream-", dir=self._root)
        struct = parse_ddl_schema(ddl)
        schema = pa.schema([pa.field(f.name, f.data_type.to_arrow()) for f in struct.fields])
        df = self.session.readStream.schema(ddl).parquet(os.path.join(directory))
        return (directory, schema), df

    def feed(self, query: Any, additions: list[tuple[Any, tuple[tuple, ...]]]) -> None:
        import os

        import pyarrow.parquet as pq

        with query.awaitProgressLock:
            for (directory, schema), rows in additions:
                columns = list(zip(*rows)) if rows else [() for _ in schema]
                table = pa.table([pa.array(list(c), f.type) for c, f in zip(columns, schema)],
                                 schema=schema)
                self._files += 1
                name = f"part-{self._files:05d}.parquet"
                tmp = os.path.join(directory, "." + name + ".tmp")
                pq.write_table(table, tmp)
                os.rename(tmp, os.path.join(directory, name))

    def state_rows(self, checkpoint: str, batch_id: int) -> int | None:
        """The join's state rows after ``batch_id``.  On the Spark runtime the progress
        report's ``numRowsTotal`` is Spark's count of the transformWithState values (one blob
        per store and partition), so the rows are read from the checkpoint instead
        (:func:`ember.streaming.spark.state_metrics.state_rows_per_side`)."""
        if self.session.runtime != "spark":
            return None
        from ember.streaming.spark.state_metrics import state_rows_per_side

        return sum(state_rows_per_side(self.session.spark_session, checkpoint,
                                       batch_id).values())


def ember_test_session() -> Any:
    """The Ember session of the differential scenarios (2 state partitions, UTC)."""

    session = ember.Session()
    session.conf.set("spark.sql.shuffle.partitions", "2")
    session.conf.set("spark.sql.session.timeZone", "UTC")
    return session


# ---------------------------------------------------------------------------------------------
# Driver


def run_scenario(engine: Any, scenario: Scenario, checkpoint: str) -> list[StepResult]:
    """Run ``scenario`` on ``engine`` (a :class:`SparkEngine` or :class:`EmberEngine`) and return
    what each step produced."""
    with engine.conf(scenario.conf):
        handles: dict[str, Any] = {}
        frames: dict[str, Any] = {}
        for name, ddl in scenario.streams.items():
            handles[name], frames[name] = engine.memory_stream(ddl)
        statics = {name: engine.static(ddl, rows) for name, (ddl, rows) in scenario.statics.items()}
        df = scenario.build(engine.F, frames, statics)

        received: list[tuple[int, list[tuple]]] = []
        guard = threading.Lock()

        def sink(batch_id: int, rows: list[tuple]) -> None:
            with guard:
                received.append((batch_id, rows))

        query = engine.start(df, checkpoint, scenario.output_mode, sink)
        results: list[StepResult] = []
        try:
            for i, step in enumerate(scenario.steps):
                if i in scenario.restart_before:
                    query.stop()
                    query = engine.start(df, checkpoint, scenario.output_mode, sink)
                seen = len(received)
                additions = [(handles[name], tuple(rows)) for name, rows in step.items() if rows]
                if additions:
                    engine.feed(query, additions)
                query.processAllAvailable()
                with guard:
                    new = received[seen:]
                progress = {int(_get(p, "batchId")): p for p in engine.progress(query)}
                batches = []
                for batch_id, rows in new:
                    wm, state, late = _progress_metrics(progress.get(batch_id))
                    exact = (engine.state_rows(checkpoint, batch_id)
                             if state is not None and hasattr(engine, "state_rows") else None)
                    state = state if exact is None else exact
                    batches.append(BatchResult(batch_id, Counter(rows), wm, state, late))
                results.append(StepResult(tuple(batches)))
        finally:
            query.stop()
    return results


def error_class(e: BaseException) -> str | None:
    """The error class of an Ember or PySpark exception."""
    for attr in ("getCondition", "getErrorClass"):
        fn = getattr(e, attr, None)
        if callable(fn):
            value = fn()
            if value:
                return value
    return getattr(e, "error_class", None)


def cause_class(e: BaseException) -> str | None:
    """The error class of what ended a failed query: Ember's ``cause``, or the JVM cause of
    PySpark's ``StreamingQueryException``."""
    cause = getattr(e, "cause", None)
    if isinstance(cause, BaseException):
        return error_class(cause)
    origin = getattr(e, "_origin", None)
    jcause = origin.getCause() if origin is not None else None
    if jcause is None:
        return None
    for attr in ("getCondition", "getErrorClass"):
        try:
            value = getattr(jcause, attr)()
        except Exception:  # noqa: BLE001 - a Throwable without error classes
            continue
        if value:
            return value
    return None


def describe(results: list[StepResult]) -> str:
    return "\n".join(f"  step {i}: {r.summary()}" for i, r in enumerate(results))


def assert_expected(scenario: Scenario, results: list[StepResult], engine: str = "spark") -> None:
    """The engine produced the scenario's designed output: per step, per micro-batch, as
    multisets; and the designed state sizes."""
    assert len(results) == len(scenario.steps)
    if scenario.expected is not None:
        for i, (want, got) in enumerate(zip(scenario.expected, results)):
            got_batches = [b.rows for b in got.batches]
            want_batches = [Counter(rows) for rows in want]
            assert got_batches == want_batches, (
                f"{scenario.name} on {engine}, step {i}: expected batches\n"
                f"    {[sorted_rows(b) for b in want_batches]}\n  got\n{describe(results)}")
    if scenario.expected_state is not None:
        got_state = tuple(r.state_rows for r in results)
        assert got_state == scenario.expected_state, (
            f"{scenario.name} on {engine}: state rows per step {got_state}, expected "
            f"{scenario.expected_state}\n{describe(results)}")
    for step, late in scenario.expected_late.items():
        got_late = results[step].batches[0].dropped_late
        assert got_late == late, (
            f"{scenario.name} on {engine}, step {step}: {got_late} late rows dropped, expected "
            f"{late}\n{describe(results)}")


def assert_same(scenario: Scenario, spark: list[StepResult], ember: list[StepResult]) -> None:
    """Ember matches Spark after every step: the same rows in the same step, then the same
    micro-batches (ids and rows), the watermarks they ran with, and the state sizes and late-row
    counts where Ember reports them."""
    context = f"{scenario.name}\nspark:\n{describe(spark)}\nember:\n{describe(ember)}"
    for i, (s, e) in enumerate(zip(spark, ember, strict=True)):
        assert e.rows == s.rows, (
            f"step {i}: rows differ: ember-only {sorted_rows(e.rows - s.rows)}, "
            f"spark-only {sorted_rows(s.rows - e.rows)}\n{context}")
    for i, (s, e) in enumerate(zip(spark, ember)):
        assert [(b.batch_id, b.rows) for b in e.batches] == [
            (b.batch_id, b.rows) for b in s.batches], f"step {i}: micro-batches differ\n{context}"
        for sb, eb in zip(s.batches, e.batches):
            assert eb.watermark_ms == sb.watermark_ms, (
                f"step {i} batch {sb.batch_id}: watermark differs\n{context}")
            if eb.state_rows is not None:
                assert eb.state_rows == sb.state_rows, (
                    f"step {i} batch {sb.batch_id}: state rows differ\n{context}")
            if eb.dropped_late is not None:
                assert eb.dropped_late == sb.dropped_late, (
                    f"step {i} batch {sb.batch_id}: late rows dropped differ\n{context}")
