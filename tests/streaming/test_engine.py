"""The micro-batch engine: checkpoint logs (layout, write-ahead order), restarts (resume after a
committed batch, re-run an uncommitted one with the same offsets, exactly-once file sink, pinned
state partitions), streaming-safe planning (stream-stream joins stateful and hash-partitioned
into the state partitions, stream sides never broadcast, empty batches still joined with state),
and stream-stream / stream-static joins end to end."""

from __future__ import annotations

import contextlib
import datetime as dt
import io
import json
import os
import shutil

import pyarrow as pa
import pytest

import ember
from ember import functions as F
from ember.streaming import MemoryStream
from ember.streaming.logs import CommitLog, OffsetSeqLog

T0 = dt.datetime(2024, 1, 1, tzinfo=dt.timezone.utc)


def ts(seconds: float) -> dt.datetime:
    return T0 + dt.timedelta(seconds=seconds)


@pytest.fixture()
def spark() -> ember.Session:
    return ember.Session({"spark.sql.shuffle.partitions": 2})


def plan_text(q) -> str:
    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        q.explain()
    return buf.getvalue()


def collector():
    batches: dict[int, list[tuple]] = {}

    def fn(df, batch_id: int) -> None:
        batches.setdefault(batch_id, []).append(sorted(tuple(r) for r in df.collect()))

    return batches, fn


# -- checkpoint layout ---------------------------------------------------------------------------

def test_offset_and_commit_log_layout(spark: ember.Session, tmp_path) -> None:
    src = MemoryStream(spark, "k int")
    q = src.toDF().writeStream.format("memory").queryName("lay").option(
        "checkpointLocation", str(tmp_path)).start()
    try:
        src.addData([(1,), (2,)])
        q.processAllAvailable()
        src.addData([(3,)])
        q.processAllAvailable()
        qid = q.id
    finally:
        q.stop()
    assert json.loads((tmp_path / "metadata").read_text()) == {"id": qid}
    lines = (tmp_path / "offsets" / "1").read_text().split("\n")
    assert lines[0] == "v1" and lines[2] == "1" and len(lines) == 3  # one line per source
    meta = json.loads(lines[1])
    assert set(meta) == {"batchWatermarkMs", "batchTimestampMs", "conf"}
    assert meta["conf"]["spark.sql.shuffle.partitions"] == "2"
    assert meta["conf"]["spark.sql.streaming.join.stateFormatVersion"] == "2"
    assert meta["conf"]["spark.sql.streaming.multipleWatermarkPolicy"] == "min"
    assert meta["conf"]["spark.sql.streaming.stateStore.providerClass"].endswith(
        "HDFSBackedStateStoreProvider")
    assert (tmp_path / "offsets" / "0").read_text().split("\n")[2] == "0"
    assert (tmp_path / "commits" / "1").read_text() == 'v1\n{"nextBatchWatermarkMs":0}'
    assert sorted(os.listdir(tmp_path / "offsets")) == ["0", "1"]
    # a batch id is logged once
    assert not OffsetSeqLog(str(tmp_path / "offsets")).add_text(1, "v1\n{}")
    assert CommitLog(str(tmp_path / "commits")).latest() == (1, 0)


def test_write_ahead_order_offsets_before_sink_commit_after(spark: ember.Session,
                                                            tmp_path) -> None:
    src = MemoryStream(spark, "k int")
    seen: list[tuple[int, bool, bool]] = []

    def fn(df, batch_id: int) -> None:
        seen.append((batch_id, (tmp_path / "offsets" / str(batch_id)).exists(),
                     (tmp_path / "commits" / str(batch_id)).exists()))

    q = src.toDF().writeStream.foreachBatch(fn).option(
        "checkpointLocation", str(tmp_path)).start()
    try:
        src.addData([(1,)])
        q.processAllAvailable()
    finally:
        q.stop()
    assert seen == [(0, True, False)]
    assert (tmp_path / "commits" / "0").exists()


# -- restarts --------------------------------------------------------------------------------------

def test_restart_resumes_after_committed_batch(spark: ember.Session, tmp_path) -> None:
    src = MemoryStream(spark, "k int")
    batches, fn = collector()

    def start():
        return src.toDF().writeStream.foreachBatch(fn).option(
            "checkpointLocation", str(tmp_path)).start()

    q = start()
    first_id, first_run = q.id, q.runId
    try:
        src.addData([(1,)])
        q.processAllAvailable()
    finally:
        q.stop()
    src.addData([(2,)])
    q = start()
    try:
        q.processAllAvailable()
        assert (q.id, q.runId != first_run) == (first_id, True)  # same query, new run
    finally:
        q.stop()
    assert batches == {0: [[(1,)]], 1: [[(2,)]]}


def test_restart_reruns_uncommitted_batch_with_same_offsets(spark: ember.Session,
                                                            tmp_path) -> None:
    src = MemoryStream(spark, "k int")
    batches: dict[int, list[list[tuple]]] = {}
    crash = {"at": 1}

    def fn(df, batch_id: int) -> None:
        batches.setdefault(batch_id, []).append(sorted(tuple(r) for r in df.collect()))
        if crash["at"] == batch_id:
            crash["at"] = None
            raise RuntimeError("crash after the sink wrote batch 1")

    def start():
        return src.toDF().writeStream.foreachBatch(fn).option(
            "checkpointLocation", str(tmp_path)).start()

    q = start()
    src.addData([(1,)])
    q.processAllAvailable()
    src.addData([(2,), (3,)])
    with pytest.raises(ember.EmberError):
        q.awaitTermination(30)
    assert not (tmp_path / "commits" / "1").exists()
    offsets_before = (tmp_path / "offsets" / "1").read_text()
    src.addData([(4,)])  # newer data must not leak into the re-run batch
    q = start()
    try:
        q.processAllAvailable()
    finally:
        q.stop()
    assert (tmp_path / "offsets" / "1").read_text() == offsets_before
    assert batches[1] == [[(2,), (3,)], [(2,), (3,)]]  # foreachBatch sees the re-run (as Spark)
    assert batches[2] == [[(4,)]]
    assert sorted(os.listdir(tmp_path / "commits")) == ["0", "1", "2"]


def test_file_sink_exactly_once_across_a_rerun(spark: ember.Session, tmp_path,
                                              monkeypatch) -> None:
    src = MemoryStream(spark, "k int, v string")
    out, ck = str(tmp_path / "out"), str(tmp_path / "ck")
    add = CommitLog.add

    def crash_on_1(self, batch_id: int, watermark: int) -> bool:
        if batch_id == 1:
            raise RuntimeError("crash after the sink committed batch 1")
        return add(self, batch_id, watermark)

    def start():
        return src.toDF().writeStream.format("parquet").option("checkpointLocation", ck).start(out)

    q = start()
    src.addData([(1, "a")])
    q.processAllAvailable()
    monkeypatch.setattr(CommitLog, "add", crash_on_1)
    src.addData([(2, "b")])
    with pytest.raises(ember.EmberError):
        q.awaitTermination(30)
    monkeypatch.setattr(CommitLog, "add", add)
    q = start()
    try:
        q.processAllAvailable()
    finally:
        q.stop()
    assert sorted(os.listdir(os.path.join(ck, "commits"))) == ["0", "1"]
    rows = sorted(tuple(r) for r in spark.read.parquet(out).collect())
    assert rows == [(1, "a"), (2, "b")]


def test_memory_sink_refuses_restart_from_checkpoint(spark: ember.Session, tmp_path) -> None:
    src = MemoryStream(spark, "k int")
    q = src.toDF().writeStream.format("memory").queryName("m1").option(
        "checkpointLocation", str(tmp_path)).start()
    src.addData([(1,)])
    q.processAllAvailable()
    q.stop()
    with pytest.raises(ember.AnalysisError) as e:
        src.toDF().writeStream.format("memory").queryName("m1").option(
            "checkpointLocation", str(tmp_path)).start()
    assert e.value.error_class == "_LEGACY_ERROR_TEMP_1299"


# -- stream-stream joins -----------------------------------------------------------------------

def _streams(spark: ember.Session):
    left = MemoryStream(spark, "k int, t timestamp, v string")
    right = MemoryStream(spark, "k int, t timestamp, v string")
    ldf = left.toDF().withWatermark("t", "10 seconds")
    rdf = right.toDF().withWatermark("t", "10 seconds").select(
        F.col("k").alias("k2"), F.col("t").alias("t2"), F.col("v").alias("v2"))
    return left, right, ldf, rdf


def test_stream_stream_inner_join_plan_and_state(spark: ember.Session, tmp_path) -> None:
    left, right, ldf, rdf = _streams(spark)
    joined = ldf.join(rdf, (ldf.k == rdf.k2) & (ldf.t == rdf.t2))
    batches, fn = collector()
    q = joined.writeStream.foreachBatch(fn).option("checkpointLocation", str(tmp_path)).start()
    try:
        left.addData([(1, ts(10), "l1"), (2, ts(20), "l2")])
        q.processAllAvailable()
        # batch 0 ran without right rows: an empty side still joins with the other's state
        right.addData([(1, ts(10), "r1"), (2, ts(21), "r2")])
        q.processAllAvailable()
        text = plan_text(q)
    finally:
        q.stop()
    got = [r for b in sorted(batches) for rows in batches[b] for r in rows]
    assert [(r[0], r[2], r[3], r[5]) for r in got] == [(1, "l1", 1, "r1")]
    assert "StreamingSymmetricHashJoin [k#" in text
    assert text.count("REQUIRED_BY_STATEFUL_OPERATOR") == 2
    assert "hashpartitioning(k#" in text and ", 2), REQUIRED_BY_STATEFUL_OPERATOR" in text
    assert "numPartitions = 2] stateStoreCkptIds = None" in text
    assert "state cleanup [ left key predicate: (input[1, timestamp, true] <= " in text
    assert f"checkpoint = file:{tmp_path}/state" in text
    assert "BroadcastHashJoin" not in text and "SortMergeJoin" not in text
    # the state of operator 0 lives under <checkpoint>/state/0/<partition>/...
    assert sorted(os.listdir(tmp_path / "state" / "0")) == ["0", "1"]


def test_state_partitions_fixed_at_first_run(spark: ember.Session, tmp_path) -> None:
    left, right, ldf, rdf = _streams(spark)
    joined = ldf.join(rdf, ldf.k == rdf.k2)
    batches, fn = collector()

    def start():
        return joined.writeStream.foreachBatch(fn).option(
            "checkpointLocation", str(tmp_path)).start()

    q = start()
    try:
        left.addData([(k, ts(k), f"l{k}") for k in range(6)])
        q.processAllAvailable()
    finally:
        q.stop()
    spark.conf.set("spark.sql.shuffle.partitions", "5")
    q = start()
    try:
        right.addData([(k, ts(k), f"r{k}") for k in range(6)])
        q.processAllAvailable()
        text = plan_text(q)
    finally:
        q.stop()
    assert "numPartitions = 2]" in text and "hashpartitioning(k#" in text
    assert ", 5)" not in text
    # every right row found its left partner in the state written before the restart
    got = sorted((r[0], r[5]) for b in batches.values() for rows in b for r in rows)
    assert got == [(k, f"r{k}") for k in range(6)]


def test_outer_join_emits_unmatched_rows_after_eviction_once(spark: ember.Session) -> None:
    left, right, ldf, rdf = _streams(spark)
    joined = ldf.join(rdf, (ldf.k == rdf.k2) & (ldf.t == rdf.t2), "left")
    batches, fn = collector()
    q = joined.writeStream.foreachBatch(fn).start()
    try:
        with q.awaitProgressLock:
            left.addData([(1, ts(10), "a"), (2, ts(12), "b")])
            right.addData([(1, ts(10), "x")])
        q.processAllAvailable()
        assert all((r[0], r[3]) != (2, None) for b in batches.values() for rows in b
                   for r in rows)
        with q.awaitProgressLock:
            left.addData([(3, ts(40), "c")])
            right.addData([(4, ts(40), "y")])
        q.processAllAvailable()
    finally:
        q.stop()
    rows = [(r[0], r[3], b) for b in sorted(batches) for rows in batches[b] for r in rows]
    unmatched = [r for r in rows if r[1] is None]
    # k=2 is NULL-padded once, in the no-data batch after the watermark (30 s) passed 12 s;
    # k=3 (40 s) is still waiting for a partner
    assert [(k, rk) for k, rk, _ in unmatched] == [(2, None)]
    assert (1, 1) in [(k, rk) for k, rk, _ in rows]
    no_data = [p["batchId"] for p in q.recentProgress if p["numInputRows"] == 0]
    assert unmatched[0][2] in no_data


def test_stream_static_join_never_broadcasts_the_stream(spark: ember.Session) -> None:
    spark.conf.set("spark.sql.autoBroadcastJoinThreshold", str(1 << 40))
    static = spark.createDataFrame(pa.table({"k": pa.array([1, 2], pa.int32()),
                                             "name": ["one", "two"]}))
    src = MemoryStream(spark, "k int, v string")
    batches, fn = collector()
    q = src.toDF().join(static, "k", "left").writeStream.foreachBatch(fn).start()
    try:
        src.addData([(1, "a"), (3, "c")])
        q.processAllAvailable()
        text = plan_text(q)
    finally:
        q.stop()
    assert "BroadcastHashJoin" in text and "BuildRight" in text  # the static side is built
    assert batches[0] == [[(1, "a", "one"), (3, "c", None)]]


def test_self_join_of_one_memory_stream_reads_it_once_per_batch(spark: ember.Session) -> None:
    src = MemoryStream(spark, "k int, t timestamp")
    a = src.toDF().withWatermark("t", "5 seconds")
    b = a.select(F.col("k").alias("k2"), F.col("t").alias("t2"))
    batches, fn = collector()
    q = a.join(b, (a.k == b.k2) & (a.t == b.t2)).writeStream.foreachBatch(fn).start()
    try:
        src.addData([(1, ts(1)), (2, ts(2))])
        q.processAllAvailable()
        assert len(q.lastProgress["sources"]) == 1
    finally:
        q.stop()
    assert sorted(r[0] for rows in batches.values() for b_ in rows for r in b_) == [1, 2]


def test_failure_in_batch_stops_query_with_stream_failed(spark: ember.Session) -> None:
    src = MemoryStream(spark, "k int")

    def boom(df, batch_id: int) -> None:
        raise ValueError("sink exploded")

    q = src.toDF().writeStream.foreachBatch(boom).start()
    src.addData([(1,)])
    with pytest.raises(ember.EmberError) as e:
        q.awaitTermination(30)
    assert e.value.error_class == "STREAM_FAILED"
    assert "sink exploded" in str(e.value) and q.id in str(e.value)
    assert not q.isActive and q.exception() is e.value
    assert isinstance(e.value.cause, ValueError)


def test_checkpoint_with_other_sources_is_refused(spark: ember.Session, tmp_path) -> None:
    one = MemoryStream(spark, "k int")
    q = one.toDF().writeStream.foreachBatch(lambda d, i: None).option(
        "checkpointLocation", str(tmp_path)).start()
    one.addData([(1,)])
    q.processAllAvailable()
    q.stop()
    a, b = MemoryStream(spark, "k int"), MemoryStream(spark, "k int")
    q = a.toDF().union(b.toDF()).writeStream.foreachBatch(lambda d, i: None).option(
        "checkpointLocation", str(tmp_path)).start()
    with pytest.raises(ember.EmberError, match="sources"):
        q.awaitTermination(30)
    shutil.rmtree(tmp_path, ignore_errors=True)


def test_empty_relation_rules_leave_streaming_joins_alone(spark: ember.Session) -> None:
    from ember.conf import SQLConf
    from ember.expressions.base import AttributeReference
    from ember.expressions.predicates import EqualTo
    from ember.optimizer.rules.propagate_empty_relation import PropagateEmptyRelation
    from ember.plans.logical.join_type import JoinType
    from ember.plans.logical.nodes import Join, LocalRelation, StreamingBatchRelation
    from ember import types as T

    a = AttributeReference("a", T.INT)
    b = AttributeReference("b", T.INT)
    empty = LocalRelation((b,), pa.table({"b": pa.array([], pa.int32())}))
    stream = StreamingBatchRelation((a,), pa.table({"a": pa.array([1], pa.int32())}), "s")
    batch = LocalRelation((a,), pa.table({"a": pa.array([1], pa.int32())}))
    rule = PropagateEmptyRelation()
    streaming_join = Join(stream, empty, JoinType.INNER, EqualTo(a, b))
    assert streaming_join.is_streaming and not empty.is_streaming
    assert rule.apply(streaming_join, SQLConf()) is streaming_join
    batch_join = Join(batch, empty, JoinType.INNER, EqualTo(a, b))
    assert isinstance(rule.apply(batch_join, SQLConf()), LocalRelation)


def test_logs_keep_min_batches_to_retain(spark: ember.Session, tmp_path) -> None:
    spark.conf.set("spark.sql.streaming.minBatchesToRetain", "2")
    src = MemoryStream(spark, "k int")
    q = src.toDF().writeStream.foreachBatch(lambda d, i: None).option(
        "checkpointLocation", str(tmp_path)).start()
    try:
        for k in range(5):
            src.addData([(k,)])
            q.processAllAvailable()
    finally:
        q.stop()
    # batch 4 was logged after purging everything before 4 - 2
    assert sorted(os.listdir(tmp_path / "offsets"), key=int) == ["2", "3", "4"]
    assert sorted(os.listdir(tmp_path / "commits"), key=int) == ["2", "3", "4"]
