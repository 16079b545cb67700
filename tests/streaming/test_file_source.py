"""The file source (ember.streaming.sources.file): Spark's FileStreamSource options, metadata log
layout and restarts; batch order compared with PySpark 4.3's file source."""

from __future__ import annotations

import json
import os

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import ember
from ember.errors import AnalysisError
from ember.readers import _schema_of
from ember.streaming.sources.file import FileStreamSource

AB = _schema_of("a int, b string")


@pytest.fixture()
def session():
    return ember.Session()


def write(path, text: str, mtime_s: float) -> str:
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as f:
        f.write(text)
    os.utime(path, (mtime_s, mtime_s))
    return path


def drain(src: FileStreamSource, max_batches: int = 20) -> list[list[tuple]]:
    """Run the source like the engine does: one batch per new offset, committed after use."""
    out, prev = [], None
    for _ in range(max_batches):
        end = src.latest_offset()
        if end is None or end == prev:
            break
        t = src.get_batch(prev, end)
        out.append(sorted(tuple(r.values()) for r in t.to_pylist()))
        src.commit(end)
        prev = end
    return out


def three_csv_files(d):
    write(os.path.join(d, "c.csv"), "3,c\n", 1000)
    write(os.path.join(d, "a.csv"), "1,a\n", 2000)
    write(os.path.join(d, "b.csv"), "2,b\n", 2000)
    write(os.path.join(d, "_hidden.csv"), "9,h\n", 500)
    write(os.path.join(d, ".dot.csv"), "8,d\n", 500)


# Recorded from PySpark 4.3 (the live test below re-checks them): foreachBatch rows per batch of
# readStream.schema("a int, b string").options(...).csv(dir) with trigger(availableNow=True).
SPARK_BATCHES = {
    "max1": [[(3, "c")], [(1, "a")], [(2, "b")]],
    "latest2": [[(1, "a"), (2, "b")], [(3, "c")]],
}
OPTIONS = {"max1": {"maxFilesPerTrigger": "1"},
           "latest2": {"maxFilesPerTrigger": "2", "latestFirst": "true"}}


@pytest.mark.parametrize("case", sorted(SPARK_BATCHES))
def test_batches_follow_modification_time_and_limits(session, tmp_path, case):
    src_dir = str(tmp_path / "in")
    three_csv_files(src_dir)
    src = FileStreamSource(session, AB, OPTIONS[case], src_dir, fmt="csv",
                           metadata_path=str(tmp_path / "ck" / "sources" / "0"))
    assert drain(src) == SPARK_BATCHES[case]


def test_batches_match_live_spark(spark, session, tmp_path):
    src_dir = str(tmp_path / "in")
    three_csv_files(src_dir)
    for case, opts in OPTIONS.items():
        seen: list[list[tuple]] = []
        df = spark.readStream.schema("a int, b string").options(**opts).csv(src_dir)
        q = (df.writeStream.option("checkpointLocation", str(tmp_path / f"ck_{case}"))
             .foreachBatch(lambda d, i: seen.append(sorted(tuple(r) for r in d.collect())))
             .trigger(availableNow=True).start())
        q.awaitTermination()
        mine = drain(FileStreamSource(session, AB, opts, src_dir, fmt="csv",
                                      metadata_path=str(tmp_path / f"ember_{case}")))
        assert mine == seen == SPARK_BATCHES[case]


def test_source_log_layout_offsets_and_restart(session, tmp_path):
    src_dir = str(tmp_path / "in")
    meta = str(tmp_path / "ck" / "sources" / "0")
    write(os.path.join(src_dir, "x.csv"), "1,x\n", 1000)
    src = FileStreamSource(session, AB, {}, src_dir, fmt="csv", metadata_path=meta)
    assert src.latest_offset() == {"logOffset": 0}
    assert src.latest_offset() == {"logOffset": 0}  # nothing new: same offset, no new log batch
    lines = open(os.path.join(meta, "0")).read().split("\n")
    assert lines[0] == "v1"
    entry = json.loads(lines[1])
    assert entry == {"path": "file://" + os.path.join(src_dir, "x.csv"), "timestamp": 1_000_000,
                     "batchId": 0}
    assert list(lines[1]) == list(json.dumps(entry, separators=(",", ":")))  # compact JSON
    # restart: files seen before are never read again, new ones continue the log
    write(os.path.join(src_dir, "y.csv"), "2,y\n", 1500)
    again = FileStreamSource(session, AB, {}, src_dir, fmt="csv", metadata_path=meta)
    end = again.latest_offset()
    assert end == {"logOffset": 1}
    assert again.get_batch({"logOffset": 0}, end).to_pylist() == [{"a": 2, "b": "y"}]
    assert again.get_batch(None, end).num_rows == 2  # (None, 1] re-reads both log batches


def test_no_files_no_offset(session, tmp_path):
    os.makedirs(tmp_path / "in")
    src = FileStreamSource(session, AB, {}, str(tmp_path / "in"), fmt="csv")
    assert src.latest_offset() is None


def test_max_file_age_and_file_name_only(session, tmp_path):
    d = str(tmp_path / "in")
    write(os.path.join(d, "new.csv"), "1,n\n", 100_000)
    src = FileStreamSource(session, AB, {"maxFileAge": "1h", "fileNameOnly": "true"}, d,
                           fmt="csv")
    assert drain(src) == [[(1, "n")]]
    write(os.path.join(d, "old.csv"), "2,o\n", 100_000 - 7200)   # 2 h older than the newest
    write(os.path.join(d, "sub", "new.csv"), "3,s\n", 100_010)   # same name elsewhere
    write(os.path.join(d, "fresh.csv"), "4,f\n", 100_020)
    assert src.latest_offset() == {"logOffset": 1}
    assert src.get_batch({"logOffset": 0}, {"logOffset": 1}).to_pylist() == [{"a": 4, "b": "f"}]


def test_csv_options_glob_and_max_bytes(session, tmp_path):
    d = str(tmp_path / "in")
    write(os.path.join(d, "1.txt"), "a;b\n1;x\n", 1000)
    write(os.path.join(d, "2.csv"), "a;b\n2;y\n3;z\n", 1001)
    write(os.path.join(d, "3.csv"), "a;b\n4;w\n", 1002)
    src = FileStreamSource(session, AB, {"header": "true", "sep": ";", "maxBytesPerTrigger": "5"},
                           os.path.join(d, "*.csv"), fmt="csv")
    # the first file always goes in; the limit then stops the batch
    assert drain(src) == [[(2, "y"), (3, "z")], [(4, "w")]]


def test_json_and_partitioned_parquet(session, tmp_path):
    js = str(tmp_path / "js")
    write(os.path.join(js, "1.json"),
          '{"a": 1, "b": "x", "t": "2024-01-02T03:04:05Z"}\n{"a": 2, "extra": true}\n', 1000)
    schema = _schema_of("a bigint, b string, t timestamp, missing int")
    src = FileStreamSource(session, schema, {}, js, fmt="json")
    rows = src.get_batch(None, src.latest_offset()).to_pylist()
    assert [(r["a"], r["b"], r["missing"]) for r in rows] == [(1, "x", None), (2, None, None)]
    assert rows[0]["t"].isoformat() == "2024-01-02T03:04:05+00:00"

    pqd = tmp_path / "pq"
    (pqd / "k=7").mkdir(parents=True)
    pq.write_table(pa.table({"v": [1, 2]}), str(pqd / "k=7" / "part.parquet"))
    src = FileStreamSource(session, _schema_of("v int, k int"), {}, str(pqd), fmt="parquet")
    assert src.get_batch(None, src.latest_offset()).to_pylist() == [{"v": 1, "k": 7},
                                                                   {"v": 2, "k": 7}]


def test_schema_is_required_unless_inference_is_on(session, tmp_path):
    d = str(tmp_path / "in")
    write(os.path.join(d, "x.csv"), "1,x\n", 1000)
    with pytest.raises(AnalysisError) as e:  # message and class as PySpark 4.3 reports them
        FileStreamSource(session, None, {}, d, fmt="csv")
    assert e.value.error_class == "_LEGACY_ERROR_TEMP_2048"
    assert "Schema must be specified when creating a streaming source DataFrame." in str(e.value)
    with pytest.raises(AnalysisError) as e:
        FileStreamSource(session, AB, {}, str(tmp_path / "missing"), fmt="csv")
    assert e.value.error_class == "PATH_NOT_FOUND"
    session.conf.set("spark.sql.streaming.schemaInference", "true")
    src = FileStreamSource(session, None, {"inferSchema": "true"}, d, fmt="csv")
    assert [(f.name, f.data_type.simple_string()) for f in src.schema.fields] == [
        ("_c0", "int"), ("_c1", "string")]


def test_clean_source_delete_and_archive(session, tmp_path):
    d = str(tmp_path / "in")
    write(os.path.join(d, "x.csv"), "1,x\n", 1000)
    src = FileStreamSource(session, AB, {"cleanSource": "delete"}, d, fmt="csv")
    assert drain(src) == [[(1, "x")]]
    assert not os.path.exists(os.path.join(d, "x.csv"))
    write(os.path.join(d, "y.csv"), "2,y\n", 1000)
    archive = str(tmp_path / "archive")
    src = FileStreamSource(session, AB, {"cleanSource": "archive", "sourceArchiveDir": archive},
                           d, fmt="csv")
    assert drain(src) == [[(2, "y")]]
    assert os.path.exists(archive + os.path.join(d, "y.csv"))
    with pytest.raises(AnalysisError, match="Archive mode must be used with 'sourceArchiveDir'"):
        FileStreamSource(session, AB, {"cleanSource": "archive"}, d, fmt="csv")


def test_log_compaction_keeps_batches_and_seen_files(session, tmp_path):
    session.conf.set("spark.sql.streaming.fileSource.log.compactInterval", "3")
    d = str(tmp_path / "in")
    meta = str(tmp_path / "meta")
    os.makedirs(d)
    src = FileStreamSource(session, AB, {}, d, fmt="csv", metadata_path=meta)
    for i in range(5):
        write(os.path.join(d, f"{i}.csv"), f"{i},v{i}\n", 1000 + i)
        assert src.latest_offset() == {"logOffset": i}
    assert sorted(os.listdir(meta)) == ["0", "1", "2.compact", "3", "4"]
    compact = open(os.path.join(meta, "2.compact")).read().split("\n")
    assert compact[0] == "v1" and [json.loads(x)["batchId"] for x in compact[1:]] == [0, 1, 2]
    assert src.get_batch({"logOffset": 1}, {"logOffset": 3}).to_pylist() == [
        {"a": 2, "b": "v2"}, {"a": 3, "b": "v3"}]
    restarted = FileStreamSource(session, AB, {}, d, fmt="csv", metadata_path=meta)
    assert restarted.latest_offset() == {"logOffset": 4}  # nothing re-read after a restart


def test_reads_only_committed_files_of_a_sink_output(session, tmp_path):
    from ember.streaming.sinks.file import FileStreamSink

    out = str(tmp_path / "out")
    sink = FileStreamSink(session, {}, out)
    sink.add_batch(0, pa.table({"a": pa.array([1], pa.int32()), "b": ["x"]}))
    pq.write_table(pa.table({"a": pa.array([9], pa.int32()), "b": ["orphan"]}),
                   os.path.join(out, "part-99999-orphan-c000.snappy.parquet"))
    src = FileStreamSource(session, AB, {}, out, fmt="parquet")
    assert src.get_batch(None, src.latest_offset()).to_pylist() == [{"a": 1, "b": "x"}]


# -- end to end, through session.readStream ------------------------------------------------------


def test_read_stream_end_to_end_and_restart(session, tmp_path):
    src_dir = str(tmp_path / "in")
    three_csv_files(src_dir)
    ck = str(tmp_path / "ck")
    seen: list[tuple[int, list[tuple]]] = []

    def run():
        df = session.readStream.schema("a int, b string").option("maxFilesPerTrigger", 1) \
            .csv(src_dir)
        q = (df.writeStream.option("checkpointLocation", ck)
             .foreachBatch(lambda b, i: seen.append((i, sorted(tuple(r) for r in b.collect()))))
             .start())
        q.processAllAvailable()
        q.stop()

    run()
    assert [rows for _, rows in seen] == SPARK_BATCHES["max1"]
    assert sorted(os.listdir(os.path.join(ck, "sources", "0"))) == ["0", "1", "2"]
    write(os.path.join(src_dir, "d.csv"), "4,d\n", 3000)
    seen.clear()
    run()  # restarted from the checkpoint: only the new file
    assert seen == [(3, [(4, "d")])]


def test_read_stream_needs_a_schema(session, tmp_path):
    write(str(tmp_path / "in" / "x.json"), '{"a": 1}\n', 1000)
    with pytest.raises(AnalysisError) as e:
        session.readStream.json(str(tmp_path / "in"))
    assert e.value.error_class == "_LEGACY_ERROR_TEMP_2048"
    df = session.readStream.schema("a bigint").json(str(tmp_path / "in"))
    q = df.writeStream.format("memory").queryName("json_in").start()
    q.processAllAvailable()
    q.stop()
    assert [tuple(r) for r in session.table("json_in").collect()] == [(1,)]


def test_json_rows_match_live_spark(spark, session, tmp_path):
    d = str(tmp_path / "js")
    write(os.path.join(d, "1.json"),
          '{"a": 1, "b": "x", "t": "2024-01-02T03:04:05"}\n'
          '{"a": 2, "t": "2024-01-02T03:04:05.250Z", "extra": [1]}\n'
          '{"b": "z", "t": "2024-01-02T03:04:05+02:00"}\n', 1000)
    write(os.path.join(d, "2.json"), '{"a": 3, "b": null}\n', 2000)
    ddl = "a bigint, b string, t timestamp"
    rows: list[tuple] = []
    df = spark.readStream.schema(ddl).json(d)
    q = (df.selectExpr("a", "b", "unix_micros(t) AS t").writeStream
         .option("checkpointLocation", str(tmp_path / "ck"))
         .foreachBatch(lambda b, i: rows.extend(tuple(r) for r in b.collect()))
         .trigger(availableNow=True).start())
    q.awaitTermination()
    src = FileStreamSource(session, _schema_of(ddl), {}, d, fmt="json")
    t = src.get_batch(None, src.latest_offset())
    mine = list(zip(t.column("a").to_pylist(), t.column("b").to_pylist(),
                    t.column("t").cast(pa.int64()).to_pylist()))
    assert sorted(mine, key=repr) == sorted(rows, key=repr)
    assert len(rows) == 4


def test_left_over_files_are_read_before_listing_again(session, tmp_path):
    """Spark's unread-files cache: files left over by a listing make the next batches, even if
    an older file appears meanwhile (it waits for the next listing)."""
    d = str(tmp_path / "in")
    three_csv_files(d)
    src = FileStreamSource(session, AB, {"maxFilesPerTrigger": "1"}, d, fmt="csv")
    first = src.latest_offset()
    write(os.path.join(d, "old.csv"), "0,o\n", 500)
    assert [src.get_batch(None, first).to_pylist()[0]["a"]] + [r[0][0] for r in drain_from(
        src, first)] == [3, 1, 2, 0]
    # maxCachedFiles=0 lists every time: the older file goes first
    d2 = str(tmp_path / "in2")
    three_csv_files(d2)
    src = FileStreamSource(session, AB, {"maxFilesPerTrigger": "1", "maxCachedFiles": "0"}, d2,
                           fmt="csv")
    first = src.latest_offset()
    write(os.path.join(d2, "old.csv"), "0,o\n", 500)
    assert [r[0][0] for r in drain_from(src, first)] == [0, 1, 2]


def drain_from(src: FileStreamSource, prev) -> list[list[tuple]]:
    out = []
    while True:
        end = src.latest_offset()
        if end == prev:
            return out
        out.append(sorted(tuple(r.values()) for r in src.get_batch(prev, end).to_pylist()))
        prev = end
