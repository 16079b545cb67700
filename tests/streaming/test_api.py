"""The streaming API in PySpark's shape: MemoryStream, readStream, withWatermark / isStreaming,
window(), writeStream (memory, foreachBatch, parquet sinks; triggers), the StreamingQuery handle
(progress, status, errors) and session.streams."""

from __future__ import annotations

import datetime as dt
import json
import os
import time

import pyarrow as pa
import pytest

import ember
from ember import functions as F
from ember.errors import AnalysisError
from ember.streaming import MemoryStream, StreamingQueryException

T0 = dt.datetime(2024, 1, 1, tzinfo=dt.timezone.utc)


def ts(seconds: float) -> dt.datetime:
    return T0 + dt.timedelta(seconds=seconds)


@pytest.fixture()
def session() -> ember.Session:
    return ember.Session({"spark.sql.shuffle.partitions": 2})


# -- MemoryStream ----------------------------------------------------------------------------------

def test_memory_stream_offsets_and_batches(session: ember.Session) -> None:
    ms = MemoryStream(session, "k int, v string")
    assert ms.latest_offset() is None
    assert ms.addData([(1, "a"), (2, "b")]) == 0
    assert ms.addData(pa.table({"k": [3], "v": ["c"]})) == 1
    assert ms.addData((4, "d")) == 2  # one row
    assert ms.latest_offset() == 2
    assert ms.get_batch(None, 1).to_pydict() == {"k": [1, 2, 3], "v": ["a", "b", "c"]}
    assert ms.get_batch(1, 2).to_pydict() == {"k": [4], "v": ["d"]}
    ms.commit(1)
    assert ms.get_batch(1, 2).num_rows == 1  # blocks after the commit stay
    assert str(ms).startswith("MemoryStream[k#") and ms.schema.fields[0].name == "k"


def test_streaming_dataframe_basics(session: ember.Session) -> None:
    ms = MemoryStream(session, "k int, t timestamp")
    df = ms.toDF()
    assert df.isStreaming and not session.range(1).isStreaming
    assert df.where("k > 1").select("k").isStreaming
    for action in (df.collect, df.count, df.show, df.toPandas):
        with pytest.raises(AnalysisError) as e:
            action()
        assert e.value.error_class == "_LEGACY_ERROR_TEMP_3102"
        assert "must be executed with writeStream.start()" in str(e.value)
    with pytest.raises(AnalysisError) as e:
        session.range(3).writeStream.format("memory").queryName("x").start()
    assert "'writeStream' can be called only on streaming Dataset/DataFrame" in str(e.value)


def test_with_watermark(session: ember.Session) -> None:
    ms = MemoryStream(session, "k int, t timestamp")
    df = ms.toDF().withWatermark("t", "1 hour 30 minutes")
    attr = df.plan.output[1]
    assert attr.watermark_delay_ms == 5_400_000
    text = df.plan.tree_string()
    assert ", t#" in text and ": timestamp, 1 hours 30 minutes" in text
    assert "EventTimeWatermark " in text
    # an alias keeps the event-time mark (Spark's Alias metadata); a second watermark moves it
    renamed = df.select(F.col("t").alias("u"), "k")
    assert renamed.plan.output[0].watermark_delay_ms == 5_400_000
    assert "-T5400000ms" in renamed.plan.output[0].simple_string()
    again = df.withColumn("t2", F.col("t")).withWatermark("t2", "1 second")
    assert [a.watermark_delay_ms for a in again.plan.output] == [None, None, 1000]
    with pytest.raises(AnalysisError) as e:
        ms.toDF().withWatermark("k", "10 seconds")
    assert e.value.error_class == "EVENT_TIME_IS_NOT_ON_TIMESTAMP_TYPE"
    assert str(e.value).endswith('The event time `k` has the invalid type "INT", but expected '
                                 '"TIMESTAMP".')
    # a batch DataFrame: no watermark node (Spark's EliminateEventTimeWatermark)
    batch = session.createDataFrame([(1, ts(0))], "k int, t timestamp")
    assert batch.withWatermark("t", "10 seconds").plan is batch.plan
    with pytest.raises(AnalysisError):
        batch.withWatermark("t", "ten seconds")


def test_read_stream_json_directory(session: ember.Session, tmp_path) -> None:
    src = tmp_path / "in"
    src.mkdir()
    (src / "a.json").write_text('{"k": 1, "v": "x"}\n{"k": 2, "v": "y"}\n')
    df = session.readStream.schema("k int, v string").json(str(src))
    assert df.isStreaming and df.columns == ["k", "v"]
    got: list[tuple] = []
    q = df.writeStream.foreachBatch(lambda d, i: got.extend(tuple(r) for r in d.collect())) \
        .option("checkpointLocation", str(tmp_path / "ck")).trigger(availableNow=True).start()
    q.awaitTermination(60)
    assert sorted(got) == [(1, "x"), (2, "y")]
    assert os.path.isdir(tmp_path / "ck" / "sources" / "0")


# -- sinks -----------------------------------------------------------------------------------

def test_memory_sink_table_and_sql(session: ember.Session) -> None:
    ms = MemoryStream(session, "k int, v string")
    q = ms.toDF().writeStream.format("memory").queryName("mem_out").outputMode("append").start()
    try:
        assert session.table("mem_out").collect() == []  # registered at start, empty
        ms.addData([(1, "a")])
        q.processAllAvailable()
        ms.addData([(2, "b")])
        q.processAllAvailable()
        assert sorted(tuple(r) for r in session.table("mem_out").collect()) == [(1, "a"), (2, "b")]
        assert session.sql("SELECT sum(k) AS s FROM mem_out").collect()[0].s == 3
        with pytest.raises(AnalysisError) as e:
            ms.toDF().writeStream.format("memory").queryName("mem_out").start()
        assert "already active" in str(e.value)
    finally:
        q.stop()
    assert session.table("mem_out").count() == 2  # the table outlives the query
    with pytest.raises(AnalysisError, match="queryName must be specified"):
        ms.toDF().writeStream.format("memory").start()


def test_foreach_batch_gets_every_batch(session: ember.Session) -> None:
    ms = MemoryStream(session, "k int")
    calls: list[tuple[int, list[int], bool]] = []

    def fn(df, batch_id):
        calls.append((batch_id, sorted(r.k for r in df.collect()), df.isStreaming))

    q = ms.toDF().selectExpr("k * 10 AS k").writeStream.foreachBatch(fn).start()
    try:
        ms.addData([(1,), (2,)])
        q.processAllAvailable()
        ms.addData([(3,)])
        q.processAllAvailable()
    finally:
        q.stop()
    assert calls == [(0, [10, 20], False), (1, [30], False)]


def test_parquet_sink_needs_a_checkpoint(session: ember.Session, tmp_path) -> None:
    ms = MemoryStream(session, "k int")
    with pytest.raises(AnalysisError) as e:
        ms.toDF().writeStream.format("parquet").start(str(tmp_path / "out"))
    assert e.value.error_class == "_LEGACY_ERROR_TEMP_1298"
    session.conf.set("spark.sql.streaming.checkpointLocation", str(tmp_path / "cks"))
    q = ms.toDF().writeStream.format("parquet").queryName("pq").start(str(tmp_path / "out"))
    try:
        ms.addData([(7,)])
        q.processAllAvailable()
    finally:
        q.stop()
    assert os.path.isdir(tmp_path / "cks" / "pq" / "offsets")
    assert [r.k for r in session.read.parquet(str(tmp_path / "out")).collect()] == [7]


def test_temporary_checkpoint_removed_on_clean_stop(session: ember.Session) -> None:
    ms = MemoryStream(session, "k int")
    q = ms.toDF().writeStream.format("memory").queryName("tmpck").start()
    ck = q._ex.checkpoint
    assert os.path.basename(ck).startswith("temporary-") and os.path.isdir(ck)
    q.stop()
    assert not os.path.exists(ck)


# -- triggers --------------------------------------------------------------------------------

def test_trigger_once_runs_one_batch(session: ember.Session) -> None:
    ms = MemoryStream(session, "k int")
    ms.addData([(1,)])
    ms.addData([(2,)])
    got: list[tuple[int, list[int]]] = []
    q = ms.toDF().writeStream.foreachBatch(
        lambda d, i: got.append((i, sorted(r.k for r in d.collect())))).trigger(once=True).start()
    assert q.awaitTermination(30) is True
    assert not q.isActive and got == [(0, [1, 2])]


def test_trigger_available_now_stops_when_done(session: ember.Session) -> None:
    ms = MemoryStream(session, "k int")
    ms.addData([(1,), (2,)])
    got: list[int] = []
    q = ms.toDF().writeStream.foreachBatch(
        lambda d, i: got.extend(r.k for r in d.collect())).trigger(availableNow=True).start()
    q.awaitTermination()
    assert sorted(got) == [1, 2] and not q.isActive
    assert q.lastProgress["numInputRows"] == 2


def test_trigger_processing_time_runs_in_background(session: ember.Session) -> None:
    ms = MemoryStream(session, "k int")
    got: list[tuple[int, float]] = []
    q = ms.toDF().writeStream.foreachBatch(
        lambda d, i: got.append((i, time.time()))).trigger(processingTime="200 milliseconds") \
        .start()
    try:
        ms.addData([(1,)])
        deadline = time.time() + 10
        while not got and time.time() < deadline:
            time.sleep(0.02)
        ms.addData([(2,)])
        while len(q.recentProgress) < 2 and time.time() < deadline:
            time.sleep(0.02)
        assert q.isActive and [i for i, _ in got] == [0, 1]
        # triggers fire at the multiples of the interval (Spark's ProcessingTimeExecutor): the
        # second batch's trigger starts at the boundary after the first one's, or later
        starts = [dt.datetime.fromisoformat(p["timestamp"].replace("Z", "+00:00")).timestamp()
                  for p in q.recentProgress]
        boundary = (starts[0] // 0.2 + 1) * 0.2
        assert starts[1] >= boundary - 0.002  # timestamps are in whole milliseconds
    finally:
        q.stop()
    assert not q.isActive
    with pytest.raises(ValueError, match="Only one trigger"):
        ms.toDF().writeStream.trigger(once=True, availableNow=True)
    with pytest.raises(AnalysisError):
        ms.toDF().writeStream.trigger(processingTime="1 month")


# -- the query handle and the manager ----------------------------------------------------------

def test_progress_status_and_manager(session: ember.Session) -> None:
    ms = MemoryStream(session, "k int, t timestamp")
    df = ms.toDF().withWatermark("t", "5 seconds")
    assert session.streams.active == []
    q = df.writeStream.format("memory").queryName("prog").start()
    try:
        assert session.streams.active == [q] or [x.id for x in session.streams.active] == [q.id]
        assert session.streams.get(q.id).runId == q.runId
        assert q.lastProgress is None
        ms.addData([(1, ts(10)), (2, ts(30))])
        q.processAllAvailable()
        p = q.lastProgress
        assert p["id"] == q.id and p["runId"] == q.runId and p["name"] == "prog"
        assert p["batchId"] == 0 and p["numInputRows"] == 2
        assert set(p["durationMs"]) == {"addBatch", "commitOffsets", "getBatch", "latestOffset",
                                        "queryPlanning", "triggerExecution", "walCommit"}
        assert p["eventTime"] == {"avg": "2024-01-01T00:00:20.000Z",
                                  "max": "2024-01-01T00:00:30.000Z",
                                  "min": "2024-01-01T00:00:10.000Z",
                                  "watermark": "1970-01-01T00:00:00.000Z"}
        assert p["stateOperators"] == []
        (source,) = p["sources"]
        assert (source["startOffset"], source["endOffset"], source["numInputRows"]) == (None, 0, 2)
        assert p["sink"] == {"description": "MemorySink", "numOutputRows": 2}
        assert p["timestamp"].endswith("Z") and json.dumps(p)
        assert q.status["isTriggerActive"] in (True, False)
        assert q.status["message"] in ("Waiting for data to arrive", "Waiting for next trigger")
        assert len(q.recentProgress) == 1
    finally:
        q.stop()
    assert session.streams.active == [] and session.streams.get(q.id) is None
    assert session.streams.awaitAnyTermination(5) is True
    session.streams.resetTerminated()
    assert session.streams.awaitAnyTermination(0.05) is False


def test_exception_surfaces_through_manager(session: ember.Session) -> None:
    ms = MemoryStream(session, "k int")

    def fail(df, batch_id):
        raise RuntimeError("bad batch")

    q = ms.toDF().writeStream.foreachBatch(fail).queryName("failing").start()
    ms.addData([(1,)])
    with pytest.raises(StreamingQueryException) as e:
        session.streams.awaitAnyTermination(30)
    assert e.value.error_class == "STREAM_FAILED"
    assert str(e.value).startswith("[STREAM_FAILED] Query failing [id = ")
    assert "terminated with exception: bad batch" in str(e.value)
    with pytest.raises(StreamingQueryException):
        q.processAllAvailable()


# -- window() ------------------------------------------------------------------------------------

WINDOW_ROWS = [(1, dt.datetime(2024, 1, 1, 0, 0, 7)), (2, dt.datetime(2024, 1, 1, 0, 0, 12)),
               (3, None), (4, dt.datetime(2023, 12, 31, 23, 59, 58))]


@pytest.mark.parametrize("args", [("10 seconds",), ("10 seconds", "5 seconds"),
                                  ("10 seconds", "3 seconds"),
                                  ("10 seconds", "5 seconds", "2 seconds")])
def test_window_matches_spark(spark, args) -> None:
    import pyspark.sql.functions as SF

    ember_session = ember.Session({"spark.sql.session.timeZone": "UTC"})
    edf = ember_session.createDataFrame(WINDOW_ROWS, "k int, t timestamp")
    sdf = spark.createDataFrame(WINDOW_ROWS, "k int, t timestamp")
    got = edf.select("k", F.window("t", *args))
    want = sdf.select("k", SF.window("t", *args))
    assert got.columns == want.columns == ["k", "window"]

    def utc(v: dt.datetime) -> dt.datetime:
        # PySpark: naive local time; Ember: aware inside structs
        return (v if v.tzinfo is not None else v.astimezone()).astimezone(dt.timezone.utc)

    def rows(df):
        return sorted((r.k, utc(r.window.start), utc(r.window.end)) for r in df.collect())

    assert rows(got) == rows(want)
    counts = edf.groupBy(F.window("t", *args)).count()
    scounts = sdf.groupBy(SF.window("t", *args)).count()
    assert sorted((utc(r.window.start), r["count"]) for r in counts.collect()) == sorted(
        (utc(r.window.start), r["count"]) for r in scounts.collect())


def test_window_keeps_the_event_time_mark(session: ember.Session) -> None:
    ms = MemoryStream(session, "k int, t timestamp")
    w = ms.toDF().withWatermark("t", "10 seconds").select(F.window("t", "1 minute"), "k")
    assert w.plan.output[0].watermark_delay_ms == 10_000
    with pytest.raises(AnalysisError, match="slide duration"):
        F.window("t", "1 minute", "2 minutes")


def test_watermark_delay_display_matches_spark(spark) -> None:
    rate = spark.readStream.format("rate").load()
    ms = MemoryStream(ember.Session(), "timestamp timestamp, value bigint")
    for delay in ("1 minute", "interval 10 seconds", "1 hour 30 minutes", "2 days",
                  "500 milliseconds"):
        want = rate.withWatermark("timestamp", delay)._jdf.queryExecution().logical() \
            .toString().splitlines()[0].rsplit(", ", 1)[1]
        got = ms.toDF().withWatermark("timestamp", delay).plan.tree_string().splitlines()[0]
        assert got.endswith(f": timestamp, {want}")
