"""Watermarks: delay parsing and display (Spark's interval strings), event-time statistics, the
WatermarkTracker (min/max policy, never moving back, operators without data), and the engine's
watermark across batches: late-event vs eviction watermark, no-data batches, the policy pinned in
the checkpoint."""

from __future__ import annotations

import datetime as dt
import os

import numpy as np
import pyarrow as pa
import pytest

import ember
from ember import functions as F
from ember.errors import AnalysisError
from ember.streaming import MemoryStream
from ember.streaming.watermarks import (
    EventTimeStats,
    WatermarkTracker,
    delay_ms,
    event_time_millis,
    format_timestamp_ms,
    interval_string,
    parse_interval,
)

T0 = dt.datetime(2024, 1, 1, tzinfo=dt.timezone.utc)


def ts(seconds: float) -> dt.datetime:
    return T0 + dt.timedelta(seconds=seconds)


def ms(seconds: float) -> int:
    return int(ts(seconds).timestamp() * 1000)


# -- delays ------------------------------------------------------------------------------------

@pytest.mark.parametrize("text, shown, millis", [
    # Spark 4.3 prints these delays so (EventTimeWatermark ..., <delay>), and getDelayMs
    ("10 seconds", "10 seconds", 10_000),
    ("interval 10 seconds", "10 seconds", 10_000),
    ("1 minute", "1 minutes", 60_000),
    ("1 hour 30 minutes", "1 hours 30 minutes", 5_400_000),
    ("2 days", "2 days", 172_800_000),
    ("500 milliseconds", "0.5 seconds", 500),
    ("1 week", "7 days", 604_800_000),
    ("1 month", "1 months", 31 * 86_400_000),
    ("1.5 seconds", "1.5 seconds", 1_500),
])
def test_delay_parsing_and_display(text: str, shown: str, millis: int) -> None:
    interval = parse_interval(text)
    assert interval_string(*interval) == shown
    assert delay_ms(interval) == millis


def test_bad_delays() -> None:
    with pytest.raises(AnalysisError) as e:
        parse_interval("abc")
    assert e.value.error_class == "CANNOT_PARSE_INTERVAL"
    with pytest.raises(AnalysisError):
        parse_interval("1.5 hours")  # a fraction only for seconds
    spark = ember.Session()
    ms_ = MemoryStream(spark, "t timestamp")
    with pytest.raises(AnalysisError, match="should not be negative"):
        ms_.toDF().withWatermark("t", "-1 second")


# -- event-time statistics -------------------------------------------------------------------

def test_event_time_millis_truncates_like_java_and_reads_window_end() -> None:
    arr = pa.array([1_500, -1_500, None, 2_000_000], pa.timestamp("us", tz="UTC"))
    assert event_time_millis(arr).tolist() == [1, -1, 0, 2_000]
    window = pa.StructArray.from_arrays(
        [pa.array([0, 10_000_000], pa.timestamp("us", tz="UTC")),
         pa.array([10_000_000, 20_000_000], pa.timestamp("us", tz="UTC"))], ["start", "end"])
    assert event_time_millis(window).tolist() == [10_000, 20_000]


def test_event_time_stats_merge_batches() -> None:
    s = EventTimeStats()
    s.add(np.array([10, 30], dtype=np.int64))
    s.add(np.array([20], dtype=np.int64))
    s.add(np.array([], dtype=np.int64))
    assert (s.max, s.min, s.count) == (30, 10, 3)
    assert s.avg == pytest.approx(20.0)
    assert s.as_progress()["max"] == format_timestamp_ms(30) == "1970-01-01T00:00:00.030Z"


# -- the tracker -------------------------------------------------------------------------------

def _stats(*values: int) -> EventTimeStats:
    s = EventTimeStats()
    if values:
        s.add(np.array(values, dtype=np.int64))
    return s


def test_tracker_min_policy_waits_for_every_input() -> None:
    t = WatermarkTracker("min")
    t.update([(_stats(50_000), 10_000), (_stats(), 5_000)])
    assert t.current_watermark == 0  # the second operator has seen nothing: counts as 0
    t.update([(_stats(), 10_000), (_stats(30_000), 5_000)])
    assert t.operator_watermarks == {0: 40_000, 1: 25_000}
    assert t.current_watermark == 25_000


def test_tracker_max_policy_and_never_moving_back() -> None:
    t = WatermarkTracker("MAX")
    t.update([(_stats(50_000), 10_000), (_stats(), 5_000)])
    assert t.current_watermark == 40_000
    t.update([(_stats(20_000), 10_000), (_stats(30_000), 5_000)])
    # operator 0 keeps its higher value; the global maximum does not move back
    assert t.operator_watermarks == {0: 40_000, 1: 25_000}
    assert t.current_watermark == 40_000
    t.set_watermark(100)
    t.update([(_stats(1_000), 0)])
    assert t.current_watermark == 40_000  # restored below the operators: moves up to them
    with pytest.raises(AnalysisError):
        WatermarkTracker("median")


# -- the engine ----------------------------------------------------------------------------------

@pytest.fixture()
def spark() -> ember.Session:
    return ember.Session({"spark.sql.shuffle.partitions": 2})


def _left_outer(spark: ember.Session, delay_left: str = "10 seconds",
                delay_right: str = "10 seconds"):
    left = MemoryStream(spark, "k int, t timestamp")
    right = MemoryStream(spark, "k int, t timestamp")
    ldf = left.toDF().withWatermark("t", delay_left)
    rdf = right.toDF().withWatermark("t", delay_right).select(
        F.col("k").alias("rk"), F.col("t").alias("rt"))
    joined = ldf.join(rdf, (ldf.k == rdf.rk) & (ldf.t == rdf.rt), "left")
    return left, right, joined


def test_watermark_progress_and_no_data_batch(spark: ember.Session, tmp_path) -> None:
    left, right, joined = _left_outer(spark)
    q = joined.writeStream.format("memory").queryName("wm1").option(
        "checkpointLocation", str(tmp_path)).start()
    try:
        with q.awaitProgressLock:  # both streams' rows in one batch
            left.addData([(1, ts(10)), (2, ts(20))])
            right.addData([(1, ts(10))])
        q.processAllAvailable()
        # batch 0 ran with watermark 0 (epoch); its event times give min(20 - 10, 10 - 10) =
        # 00:00:00 for the next batch: the watermark moved and the join evicts by its key
        # (t is a key), so a no-data batch 1 runs with it
        assert [(r.k, r.rk) for r in spark.table("wm1").collect()] == [(1, 1)]
        progress = q.recentProgress
        assert [p["batchId"] for p in progress] == [0, 1]
        assert [p["numInputRows"] for p in progress] == [3, 0]
        assert progress[0]["eventTime"]["watermark"] == "1970-01-01T00:00:00.000Z"
        assert progress[0]["eventTime"]["max"] == format_timestamp_ms(ms(20))
        assert progress[0]["eventTime"]["min"] == format_timestamp_ms(ms(10))
        assert progress[1]["eventTime"] == {"watermark": format_timestamp_ms(ms(0))}
        with q.awaitProgressLock:
            left.addData([(3, ts(100))])
            right.addData([(3, ts(100))])
        q.processAllAvailable()
        # watermark 90 s: the unmatched left row k=2 is emitted NULL-padded in the no-data
        # batch that follows, exactly once
        progress = q.recentProgress
        assert [p["batchId"] for p in progress] == [0, 1, 2, 3]
        assert progress[3]["eventTime"]["watermark"] == format_timestamp_ms(ms(90))
        ks = sorted((r.k, r.rk) for r in spark.table("wm1").collect())
        assert ks == [(1, 1), (2, None), (3, 3)]
        state = progress[3]["stateOperators"][0]
        assert state["numRowsRemoved"] > 0
        plan_text = _last_plan(q)
        # late events: the previous batch's watermark; eviction: this batch's
        assert f", {ms(0)}, {ms(90)}, state cleanup" in plan_text
    finally:
        q.stop()
    commits = sorted(os.listdir(tmp_path / "commits"))
    assert commits == ["0", "1", "2", "3"]
    assert (tmp_path / "commits" / "2").read_text().endswith(f'{{"nextBatchWatermarkMs":{ms(90)}}}')


def _last_plan(q) -> str:
    import contextlib
    import io

    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        q.explain()
    return buf.getvalue()


def test_no_data_batches_disabled(spark: ember.Session) -> None:
    spark.conf.set("spark.sql.streaming.noDataMicroBatches.enabled", "false")
    left, right, joined = _left_outer(spark)
    q = joined.writeStream.format("memory").queryName("wm2").start()
    try:
        with q.awaitProgressLock:
            left.addData([(1, ts(10)), (2, ts(20))])
            right.addData([(9, ts(10))])
        q.processAllAvailable()
        assert [p["batchId"] for p in q.recentProgress] == [0]
    finally:
        q.stop()


def test_stateless_query_runs_no_no_data_batch(spark: ember.Session) -> None:
    src = MemoryStream(spark, "k int, t timestamp")
    q = src.toDF().withWatermark("t", "1 second").where("k > 0").writeStream.format(
        "memory").queryName("wm3").start()
    try:
        src.addData([(1, ts(10))])
        q.processAllAvailable()
        src.addData([(2, ts(20))])
        q.processAllAvailable()
        progress = q.recentProgress
        assert [p["batchId"] for p in progress] == [0, 1]
        assert progress[1]["eventTime"]["watermark"] == format_timestamp_ms(ms(9))
    finally:
        q.stop()


def test_max_policy_pinned_in_checkpoint(spark: ember.Session, tmp_path) -> None:
    spark.conf.set("spark.sql.streaming.multipleWatermarkPolicy", "max")
    left, right, joined = _left_outer(spark, "10 seconds", "5 seconds")
    sink: list[int] = []

    def start():
        return joined.writeStream.foreachBatch(lambda df, i: sink.append(i)).option(
            "checkpointLocation", str(tmp_path)).start()

    q = start()
    try:
        left.addData([(1, ts(100))])
        q.processAllAvailable()
        # max policy: the right input (no data yet, 0) does not hold the watermark back
        assert q.recentProgress[-1]["eventTime"]["watermark"] == format_timestamp_ms(ms(90))
    finally:
        q.stop()
    assert '"spark.sql.streaming.multipleWatermarkPolicy":"max"' in (
        tmp_path / "offsets" / "0").read_text()
    spark.conf.set("spark.sql.streaming.multipleWatermarkPolicy", "min")  # ignored on restart
    q = start()
    try:
        with q.awaitProgressLock:
            right.addData([(1, ts(50))])
            left.addData([(2, ts(200))])
        q.processAllAvailable()
        last = q.lastProgress
        assert last is not None
        # max(200 - 10, 50 - 5) = 190 s under the checkpoint's policy (min would give 90 s)
        meta = (tmp_path / "offsets" / str(last["batchId"])).read_text()
        assert '"spark.sql.streaming.multipleWatermarkPolicy":"max"' in meta
        nxt = (tmp_path / "commits").joinpath(
            sorted(os.listdir(tmp_path / "commits"), key=int)[-1]).read_text()
        assert f'"nextBatchWatermarkMs":{ms(190)}' in nxt
    finally:
        q.stop()


def test_late_rows_dropped_with_previous_batch_watermark(spark: ember.Session) -> None:
    left = MemoryStream(spark, "k int, t timestamp")
    right = MemoryStream(spark, "k int, t timestamp")
    ldf = left.toDF().withWatermark("t", "0 seconds")
    rdf = right.toDF().withWatermark("t", "0 seconds").select(
        F.col("k").alias("rk"), F.col("t").alias("rt"))
    joined = ldf.join(rdf, (ldf.k == rdf.rk) & (ldf.t == rdf.rt))
    q = joined.writeStream.format("memory").queryName("wm5").start()
    try:
        with q.awaitProgressLock:
            left.addData([(1, ts(100))])
            right.addData([(1, ts(100))])
        q.processAllAvailable()
        # watermark now 100 s: a row at exactly 100 s is late (<= watermark), 101 s is not
        with q.awaitProgressLock:
            left.addData([(1, ts(100)), (2, ts(101))])
            right.addData([(1, ts(100)), (2, ts(101))])
        q.processAllAvailable()
        assert sorted(r.k for r in spark.table("wm5").collect()) == [1, 2]
        dropped = sum(p["stateOperators"][0]["numRowsDroppedByWatermark"]
                      for p in q.recentProgress)
        assert dropped == 2
    finally:
        q.stop()


def test_filters_below_the_watermark_shape_its_statistics(spark: ember.Session) -> None:
    # Spark pushes a filter that does not read the event time below EventTimeWatermark: the
    # dropped row's event time (100 s) never reaches the watermark's statistics
    src = MemoryStream(spark, "k int, t timestamp")
    q = src.toDF().withWatermark("t", "0 seconds").where("k > 0").writeStream.format(
        "memory").queryName("wm6").start()
    try:
        src.addData([(-1, ts(100)), (1, ts(10))])
        q.processAllAvailable()
        src.addData([(2, ts(20))])
        q.processAllAvailable()
        assert q.recentProgress[1]["eventTime"]["watermark"] == format_timestamp_ms(ms(10))
        assert q.recentProgress[0]["eventTime"]["max"] == format_timestamp_ms(ms(10))
    finally:
        q.stop()


def test_chained_joins_propagate_the_watermark(spark: ember.Session) -> None:
    # Spark's watermark propagation: the lower join can still emit rows as old as the state it
    # holds (the right side's state watermark W - 20 s from the time range), so the upper join
    # evicts with W - 20 s, not W
    a, b, c = (MemoryStream(spark, "k int, t timestamp") for _ in range(3))
    A = a.toDF().withWatermark("t", "0 seconds")
    B = b.toDF().withWatermark("t", "0 seconds").select(F.col("k").alias("bk"),
                                                       F.col("t").alias("bt"))
    C = c.toDF().withWatermark("t", "0 seconds").select(F.col("k").alias("ck"),
                                                       F.col("t").alias("ct"))
    # (one event-time column per join input: Spark refuses more; bt is dropped)
    lower = A.join(B, F.expr("k = bk AND t > bt - interval 10 seconds AND "
                             "t < bt + interval 20 seconds")).select("k", "t", "bk")
    q = lower.join(C, F.expr("k = ck AND t = ct")).writeStream.format("memory") \
        .queryName("wm7").start()
    try:
        with q.awaitProgressLock:
            for s_ in (a, b, c):
                s_.addData([(1, ts(100))])
        q.processAllAvailable()
        assert [(r.k, r.bk, r.ck) for r in spark.table("wm7").collect()] == [(1, 1, 1)]
        text = _last_plan(q)
    finally:
        q.stop()
    joins = [ln for ln in text.splitlines() if "StreamingSymmetricHashJoin" in ln]
    upper, lower_join = joins  # pre-order: the upper join is operator 0
    assert "opId = 0" in upper and "opId = 1" in lower_join
    assert f", 0, {ms(80)}, state cleanup" in upper
    assert f", 0, {ms(100)}, state cleanup" in lower_join
    assert f"right value predicate: (bt#" in lower_join
