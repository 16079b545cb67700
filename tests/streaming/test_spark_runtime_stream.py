"""Streaming queries on the Spark runtime (ember.streaming.spark): the same stream-stream joins
run by Spark Structured Streaming, the join Ember's symmetric hash join in Spark's RocksDB state
(transformWithStateInPandas), compared batch by batch (the file sinks' ``_spark_metadata``
logs) with the local runtime over the same Parquet files, and with rows derived by hand.

Both runtimes read two Parquet directories (impressions ``ad, it`` with a 10 s watermark,
clicks ``cad, ct`` with a 20 s one, ``ct`` within 30 s after ``it``).  Each step writes one file
per side while holding every query's ``awaitProgressLock`` (so both land in one micro-batch on
both runtimes) and then waits for ``processAllAvailable``.  Step 1 leaves outer rows in state;
step 2 brings late rows (dropped with the previous batch's watermark) and moves the watermark
past every held row, so the outer rows are emitted by eviction.  The full outer join is
stopped and restarted from its checkpoint between the steps (its state comes back from Spark's
RocksDB checkpoint)."""

from __future__ import annotations

import datetime as dt
import json
import os
from collections import Counter
from collections.abc import Iterator
from contextlib import ExitStack
from urllib.parse import unquote, urlparse

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import ember
from ember import functions as F
from ember.errors import UnsupportedError

CONF = {"spark.sql.shuffle.partitions": "2", "spark.sql.session.timeZone": "UTC"}
BASE = dt.datetime(2024, 1, 1)
HOWS = ("inner", "leftOuter", "rightOuter", "fullOuter", "leftSemi")


def ts(s: int) -> dt.datetime:
    return BASE + dt.timedelta(seconds=s)


def write(directory: str, name: str, cols: tuple[str, str], rows: list[tuple[int, int]]) -> None:
    table = pa.table({cols[0]: pa.array([r[0] for r in rows], pa.int32()),
                      cols[1]: pa.array([ts(r[1]) for r in rows], pa.timestamp("us", "UTC"))})
    tmp = os.path.join(directory, f".{name}.tmp")
    pq.write_table(table, tmp)
    os.rename(tmp, os.path.join(directory, f"{name}.parquet"))


def write_step(queries, base: str, step: int, imps: list, clicks: list) -> None:
    """One step's impression (``base/L``) and click (``base/R``) files, written while every
    query holds its ``awaitProgressLock`` so both land in one micro-batch on every runtime;
    then each query processes them."""
    with ExitStack() as stack:
        for q in queries:
            stack.enter_context(q.awaitProgressLock)
        write(os.path.join(base, "L"), f"s{step}", ("ad", "it"), imps)
        write(os.path.join(base, "R"), f"s{step}", ("cad", "ct"), clicks)
    for q in queries:
        q.processAllAvailable()


# Step 1: the global watermark becomes min(120 - 10, 140 - 20) = 110 s; the no-data batch
# evicts clicks at or below 110 s (6 at 110 s is unmatched).  Step 2: (1, 50) and (3, 90) are
# late (<= 110 s) and dropped; 5 and 7 match; the watermark moves to min(390, 385) = 385 s and
# evicts every impression (it <= 355 s) and click (ct <= 385 s) still held.
STEPS = [
    ([(1, 100), (2, 100), (3, 100), (5, 120)], [(1, 105), (1, 125), (2, 140), (6, 110)]),
    ([(1, 50), (7, 400)], [(7, 405), (5, 130), (3, 90)]),
]
INNER = [(1, 100, 1, 105), (1, 100, 1, 125), (5, 120, 5, 130), (7, 400, 7, 405)]
LEFT_ONLY = [(2, 100, None, None), (3, 100, None, None)]
RIGHT_ONLY = [(None, None, 6, 110), (None, None, 2, 140)]
EXPECTED = {
    "inner": INNER,
    "leftOuter": INNER + LEFT_ONLY,
    "rightOuter": INNER + RIGHT_ONLY,
    "fullOuter": INNER + LEFT_ONLY + RIGHT_ONLY,
    "leftSemi": [(1, 100), (5, 120), (7, 400)],
}


def query(session: ember.Session, root: str, how: str):
    """Impressions filtered above their watermark, clicks projected below theirs, and a
    projection over the join: Ember operators on both sides of every cut."""
    imp = (session.readStream.schema("ad int, it timestamp").parquet(os.path.join(root, "L"))
           .withWatermark("it", "10 seconds").where("ad <> 99"))
    clk = (session.readStream.schema("cad int, ct timestamp").parquet(os.path.join(root, "R"))
           .select("cad", "ct", (F.col("cad") * 10).alias("c10"))
           .withWatermark("ct", "20 seconds"))
    joined = imp.join(clk, F.expr("ad = cad AND ct >= it AND ct <= it + interval 30 seconds"),
                      how)
    if how == "leftSemi":
        return joined.select("ad", "it")
    return joined.select("ad", "it", "cad", "ct", (F.col("c10") + 1).alias("c"))


def start(session: ember.Session, base: str, how: str, runtime: str):
    return (query(session, base, how).writeStream.format("parquet")
            .option("checkpointLocation", os.path.join(base, "ck", runtime))
            .start(os.path.join(base, "out", runtime)))


def _seconds(t) -> int | None:
    return None if t is None else int((t.replace(tzinfo=None) - BASE).total_seconds())


def _sink_rows(path: str) -> Iterator[tuple[int, dict]]:
    """``(batch id, row)`` of every row the file sink wrote, as its ``_spark_metadata`` log
    lists the files of each batch (Spark's layout on both runtimes)."""
    meta = os.path.join(path, "_spark_metadata")
    for name in os.listdir(meta):
        if not name.isdigit():
            continue
        with open(os.path.join(meta, name)) as f:
            entries = [json.loads(line) for line in f.read().splitlines()[1:] if line.strip()]
        for e in entries:
            for r in pq.read_table(unquote(urlparse(e["path"]).path)).to_pylist():
                yield int(name), r


def file_sink_batches(path: str) -> dict[int, Counter]:
    """The file sink's rows per batch id, each a tuple of its values, timestamps as seconds
    after BASE."""
    out: dict[int, Counter] = {}
    for batch, r in _sink_rows(path):
        out.setdefault(batch, Counter())[tuple(
            _seconds(v) if isinstance(v, dt.datetime) else v for v in r.values())] += 1
    return out


def sink_batches(path: str, how: str) -> dict[int, Counter]:
    """The file sink's rows of :func:`query` per batch id; event times in seconds."""
    out: dict[int, Counter] = {}
    for batch, r in _sink_rows(path):
        rows = out.setdefault(batch, Counter())
        if how == "leftSemi":
            rows[(r["ad"], _seconds(r["it"]))] += 1
            continue
        assert r["c"] == (None if r["cad"] is None else r["cad"] * 10 + 1)
        rows[(r["ad"], _seconds(r["it"]), r["cad"], _seconds(r["ct"]))] += 1
    return out


@pytest.fixture(scope="module")
def runs(spark, tmp_path_factory):
    """Every join type on both runtimes over the same files (a directory pair per join type,
    one join type at a time: each Spark query starts Python processes of its own, which a
    loaded machine starts slowly); the full outer join restarted from its checkpoint between
    the steps.  Returns (root, {(runtime, how): query})."""
    root = str(tmp_path_factory.mktemp("spark_stream"))
    sessions = {"local": ember.Session(CONF),
                "spark": ember.Session(CONF, runtime="spark", spark=spark)}
    queries = {}
    for how in HOWS:
        base = os.path.join(root, how)
        for d in ("L", "R"):
            os.makedirs(os.path.join(base, d))
        qs = {rt: start(s, base, how, rt) for rt, s in sessions.items()}
        try:
            for step, (imps, clicks) in enumerate(STEPS):
                if step == 1 and how == "fullOuter":
                    for rt, s in sessions.items():  # restart from the checkpoint
                        first = qs[rt]
                        first.stop()
                        assert not first.isActive
                        qs[rt] = start(s, base, how, rt)
                        assert qs[rt].id == first.id  # kept in the checkpoint
                write_step(qs.values(), base, step, imps, clicks)
        finally:
            for q in qs.values():
                q.stop()
        queries.update({(rt, how): q for rt, q in qs.items()})
    return root, queries


@pytest.mark.parametrize("how", HOWS)
def test_join_on_spark_equals_local_and_expected(runs, how):
    root, queries = runs
    local = sink_batches(os.path.join(root, how, "out", "local"), how)
    on_spark = sink_batches(os.path.join(root, how, "out", "spark"), how)
    assert sum(local.values(), Counter()) == Counter(EXPECTED[how])
    assert on_spark == local  # the same rows in the same batches


def test_spark_runs_the_query_with_state_in_rocksdb(runs):
    root, queries = runs
    q = queries[("spark", "fullOuter")]
    progress = q.lastProgress
    assert progress is not None and progress["stateOperators"], progress
    op = progress["stateOperators"][0]
    assert op["operatorName"].lower().startswith("transformwithstate"), op
    # Spark's checkpoint layout, the state in RocksDB files (SST files and zipped versions)
    state = os.path.join(root, "fullOuter", "ck", "spark", "state", "0")
    files = [f for _, _, fs in os.walk(state) for f in fs]
    assert any(f.endswith(".sst") for f in files) and any(f.endswith(".zip") for f in files)
    # the late rows (one per side in step 2) were dropped by Spark's operator
    dropped = sum(p["stateOperators"][0].get("numRowsDroppedByWatermark", 0)
                  for p in queries[("spark", "inner")].recentProgress if p["stateOperators"])
    assert dropped == 2
    # both runtimes moved the watermark to the same place
    local_wm = queries[("local", "inner")].lastProgress["eventTime"]["watermark"]
    assert q.lastProgress["eventTime"]["watermark"] == local_wm == "2024-01-01T00:06:25.000Z"


def test_memory_sink_and_foreach_batch_on_spark(spark, tmp_path):
    """A query without a join (a filter and a projection around the watermark) into the memory
    sink and into foreachBatch, both read back through Ember."""
    root = str(tmp_path)
    os.makedirs(os.path.join(root, "L"))
    s = ember.Session(CONF, runtime="spark", spark=spark)
    df = (s.readStream.schema("ad int, it timestamp").parquet(os.path.join(root, "L"))
          .withWatermark("it", "10 seconds").where("ad > 1")
          .select((F.col("ad") * 2).alias("a2"), "it"))
    seen: list[tuple[int, list]] = []
    mem = df.writeStream.format("memory").queryName("spark_rt_mem").start()
    fe = df.writeStream.foreachBatch(
        lambda batch, bid: seen.append((bid, sorted(r["a2"] for r in batch.collect())))).start()
    try:
        write(os.path.join(root, "L"), "a", ("ad", "it"), [(1, 10), (2, 20), (3, 30)])
        mem.processAllAvailable()
        fe.processAllAvailable()
        assert sorted(r["a2"] for r in s.table("spark_rt_mem").collect()) == [4, 6]
        assert [rows for _, rows in seen if rows] == [[4, 6]]
    finally:
        mem.stop()
        fe.stop()
    assert not mem.isActive and s.streams.get(mem.id) is None


def test_memory_stream_is_refused_on_spark(spark):
    from ember.streaming import MemoryStream

    s = ember.Session(CONF, runtime="spark", spark=spark)
    ms = MemoryStream(s, "k int")
    with pytest.raises(UnsupportedError, match="MemoryStream"):
        ms.toDF().writeStream.format("memory").queryName("spark_rt_ms").start()
    assert not s.streams.active
    # the local runtime still runs it on a Spark session when asked to
    q = (ms.toDF().writeStream.format("memory").queryName("spark_rt_ms")
         .option("ember.runtime", "local").start())
    try:
        ms.addData([(1,), (2,)])
        q.processAllAvailable()
        assert sorted(r["k"] for r in s.table("spark_rt_ms").collect()) == [1, 2]
    finally:
        q.stop()


def test_task_error_ends_the_query_with_the_ember_error(spark, tmp_path):
    """An ANSI error raised by Ember's operators inside Spark's task stops the query; the
    handle raises Ember's StreamingQueryException caused by the task's own Ember error, as
    on the local runtime."""
    from ember.streaming.execution import StreamingQueryException

    root = str(tmp_path)
    os.makedirs(os.path.join(root, "L"))
    write(os.path.join(root, "L"), "a", ("ad", "it"), [(1, 10)])
    causes = {}
    for rt in ("local", "spark"):
        s = ember.Session(CONF, runtime=rt, spark=spark if rt == "spark" else None)
        df = (s.readStream.schema("ad int, it timestamp").parquet(os.path.join(root, "L"))
              .select((F.col("ad") / (F.col("ad") - 1)).alias("x")))
        q = df.writeStream.format("memory").queryName(f"spark_rt_err_{rt}").start()
        with pytest.raises(StreamingQueryException) as info:
            q.processAllAvailable()
        causes[rt] = info.value.cause
        assert not q.isActive and q.exception() is not None
    assert causes["spark"].error_class == causes["local"].error_class == "DIVIDE_BY_ZERO"
    assert type(causes["spark"]) is type(causes["local"])


def test_foreach_batch_error_is_the_query_cause(spark, tmp_path):
    from ember.streaming.execution import StreamingQueryException

    root = str(tmp_path)
    os.makedirs(os.path.join(root, "L"))
    write(os.path.join(root, "L"), "a", ("ad", "it"), [(1, 10)])

    def fail(batch, batch_id):
        if batch.count():
            raise ValueError(f"boom in batch {batch_id}")

    for rt in ("local", "spark"):
        s = ember.Session(CONF, runtime=rt, spark=spark if rt == "spark" else None)
        q = (s.readStream.schema("ad int, it timestamp").parquet(os.path.join(root, "L"))
             .writeStream.foreachBatch(fail).start())
        with pytest.raises(StreamingQueryException) as info:
            q.processAllAvailable()
        assert isinstance(info.value.cause, ValueError), (rt, info.value.cause)
        assert str(info.value.cause) == "boom in batch 0"


def test_runtime_option_and_pinned_partitions(tmp_path):
    from ember.errors import AnalysisError
    from ember.streaming.spark.query import pinned_partitions, streaming_runtime

    local = ember.Session(CONF)
    assert streaming_runtime(local, {}) == "local"
    assert streaming_runtime(local, {"ember.runtime": "LOCAL"}) == "local"
    with pytest.raises(AnalysisError, match="Spark runtime"):
        streaming_runtime(local, {"ember.runtime": "spark"})
    with pytest.raises(AnalysisError, match="'local' or 'spark'"):
        streaming_runtime(local, {"ember.runtime": "cluster"})
    # the number of state partitions comes from Spark's offsets log once there is one
    ck = tmp_path / "ck"
    assert pinned_partitions(str(ck), 7) == 7
    (ck / "offsets").mkdir(parents=True)
    (ck / "offsets" / "0").write_text(
        'v1\n{"batchWatermarkMs":0,"batchTimestampMs":1,"conf":{'
        '"spark.sql.shuffle.partitions":"3"}}\n{"logOffset":0}\n')
    (ck / "offsets" / ".0.crc").write_text("")
    assert pinned_partitions(str(ck), 7) == 3


@pytest.mark.parametrize("build", [
    lambda df: df.withWatermark("t", "10 seconds").groupBy(F.window("t", "10 seconds")).count(),
    lambda df: df.withWatermark("t", "10 seconds").dropDuplicates(["k", "t"]),
], ids=["aggregation", "dedup"])
def test_stateful_operators_beyond_joins_are_refused_on_spark(spark, tmp_path, build):
    """Streaming aggregation and deduplication run on the local runtime only: the Spark
    runtime refuses them when the query starts, naming the operator."""
    s = ember.Session(CONF, runtime="spark", spark=spark)
    (tmp_path / "in").mkdir()
    df = build(s.readStream.schema("k int, t timestamp").parquet(str(tmp_path / "in")))
    with pytest.raises(UnsupportedError, match="(HashAggregate|StreamingDeduplicate) is not supported"):
        (df.writeStream.format("memory").queryName("spark_rt_stateful")
         .option("checkpointLocation", str(tmp_path / "ck")).start())
    assert not s.streams.active
