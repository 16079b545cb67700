"""The Parquet file sink (ember.streaming.sinks.file): Spark's ``_spark_metadata`` layout,
exactly-once batches, crash safety, and readers (Ember's and Spark's) seeing committed files
only."""

from __future__ import annotations

import json
import os

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import ember
from ember.streaming.sinks.file import FileStreamSink, FileStreamSinkLog, committed_files


@pytest.fixture()
def session():
    return ember.Session()


def batch(*values: int) -> pa.Table:
    return pa.table({"k": pa.array(list(values), pa.int64()),
                     "s": pa.array([f"v{v}" for v in values], pa.string())})


def read_rows(session, path) -> list[tuple]:
    return sorted(tuple(r) for r in session.read.parquet(str(path)).collect())


def test_metadata_log_layout_like_spark(session, tmp_path):
    out = tmp_path / "out"
    sink = FileStreamSink(session, {}, str(out))
    sink.add_batch(0, batch(1, 2))
    lines = (out / "_spark_metadata" / "0").read_text().split("\n")
    assert lines[0] == "v1" and len(lines) == 2
    entry = json.loads(lines[1])
    # the keys and order of Spark's SinkFileStatus, as PySpark 4.3's file sink writes them
    assert list(entry) == ["path", "size", "isDir", "modificationTime", "blockReplication",
                           "blockSize", "action"]
    name = os.path.basename(entry["path"])
    assert entry["path"] == "file://" + str(out / name)
    assert name.startswith("part-00000-") and name.endswith("-c000.snappy.parquet")
    assert entry["size"] == os.path.getsize(out / name)
    assert (entry["isDir"], entry["blockReplication"], entry["blockSize"], entry["action"]) == (
        False, 1, 33554432, "add")
    assert read_rows(session, out) == [(1, "v1"), (2, "v2")]
    assert not [f for f in os.listdir(out) if f.endswith(".tmp")]


def test_committed_batches_are_skipped(session, tmp_path):
    out = tmp_path / "out"
    sink = FileStreamSink(session, {}, str(out))
    sink.add_batch(0, batch(1))
    sink.add_batch(1, batch(2))
    sink.add_batch(1, batch(2))      # re-delivered batch: ignored
    FileStreamSink(session, {}, str(out)).add_batch(0, batch(1))  # after a restart too
    assert read_rows(session, out) == [(1, "v1"), (2, "v2")]
    assert len([f for f in os.listdir(out) if f.endswith(".parquet")]) == 2


def test_crash_between_files_and_log_leaves_no_duplicates(session, tmp_path, monkeypatch):
    out = tmp_path / "out"
    sink = FileStreamSink(session, {}, str(out))
    sink.add_batch(0, batch(1))

    class Crash(Exception):
        pass

    original = FileStreamSink._write_files

    def write_then_crash(self, batch_id, data):
        raise Crash(original(self, batch_id, data))

    monkeypatch.setattr(FileStreamSink, "_write_files", write_then_crash)
    with pytest.raises(Crash):
        sink.add_batch(1, batch(2, 3))
    monkeypatch.setattr(FileStreamSink, "_write_files", original)
    orphans = [f for f in os.listdir(out) if f.endswith(".parquet")]
    assert len(orphans) == 2          # the data file of batch 1 is there, renamed into place ...
    assert not (out / "_spark_metadata" / "1").exists()   # ... but never committed
    assert read_rows(session, out) == [(1, "v1")]
    # the restarted query re-runs batch 1
    FileStreamSink(session, {}, str(out)).add_batch(1, batch(2, 3))
    assert read_rows(session, out) == [(1, "v1"), (2, "v2"), (3, "v3")]
    assert len([f for f in os.listdir(out) if f.endswith(".parquet")]) == 3
    assert len(committed_files(str(out))) == 2


def test_empty_batch_writes_an_empty_file_as_spark(session, tmp_path):
    out = tmp_path / "out"
    sink = FileStreamSink(session, {}, str(out))
    sink.add_batch(0, batch())
    files = committed_files(str(out))
    assert len(files) == 1 and pq.read_table(files[0]).num_rows == 0
    assert session.read.parquet(str(out)).columns == ["k", "s"]


def test_partition_by(session, tmp_path):
    out = tmp_path / "out"
    sink = FileStreamSink(session, {"partitionBy": "p"}, str(out))
    sink.add_batch(0, pa.table({"a": [1, 2, 3, 4], "p": ["x", None, "a/b", "x"]}))
    dirs = sorted(d for d in os.listdir(out) if not d.startswith("_"))
    assert dirs == ["p=__HIVE_DEFAULT_PARTITION__", "p=a%2Fb", "p=x"]
    assert pq.read_table(str(out / "p=x" / os.listdir(out / "p=x")[0])).column_names == ["a"]
    rows = sorted(session.read.parquet(str(out)).collect(), key=lambda r: r["a"])
    assert [(r["a"], r["p"]) for r in rows] == [(1, "x"), (2, None), (3, "a/b"), (4, "x")]


def test_log_compaction(session, tmp_path):
    session.conf.set("spark.sql.streaming.fileSink.log.compactInterval", "3")
    out = tmp_path / "out"
    sink = FileStreamSink(session, {}, str(out))
    for b in range(5):
        sink.add_batch(b, batch(b))
    assert sorted(os.listdir(out / "_spark_metadata")) == ["0", "1", "2.compact", "3", "4"]
    compact = (out / "_spark_metadata" / "2.compact").read_text().split("\n")
    assert compact[0] == "v1" and len(compact) == 4
    assert read_rows(session, out) == [(b, f"v{b}") for b in range(5)]
    # a new log object finds the interval from the existing .compact file
    assert FileStreamSinkLog(str(out / "_spark_metadata")).interval == 3


def test_spark_reads_ember_output_and_ember_reads_spark_output(spark, session, tmp_path):
    # Spark's reader honours Ember's _spark_metadata: the orphan of a crashed batch is invisible
    out = tmp_path / "ember_out"
    sink = FileStreamSink(session, {}, str(out))
    sink.add_batch(0, batch(1, 2))
    pq.write_table(batch(99), str(out / "part-00000-orphan-c000.snappy.parquet"))
    assert sorted(tuple(r) for r in spark.read.parquet(str(out)).collect()) == [
        (1, "v1"), (2, "v2")]
    # Ember's reader honours Spark's file sink log the same way
    src = tmp_path / "in"
    src.mkdir()
    (src / "a.csv").write_text("1,x\n2,y\n")
    spark_out = tmp_path / "spark_out"
    q = (spark.readStream.schema("a int, b string").csv(str(src)).writeStream
         .format("parquet").option("checkpointLocation", str(tmp_path / "ck"))
         .trigger(availableNow=True).start(str(spark_out)))
    q.awaitTermination()
    pq.write_table(pa.table({"a": pa.array([9], pa.int32()), "b": ["orphan"]}),
                   str(spark_out / "part-00009-orphan-c000.snappy.parquet"))
    assert read_rows(session, spark_out) == [(1, "x"), (2, "y")]


# -- end to end, through df.writeStream -----------------------------------------------------------


def test_write_stream_crash_and_restart_has_no_duplicates(session, tmp_path, monkeypatch):
    """The query dies after batch 1's files are in place but before its log entry; the restarted
    query re-runs batch 1 and the output holds every row once."""
    from ember.streaming.memory import MemoryStream
    from ember.streaming.sinks import file as file_sink

    ms = MemoryStream(session, "k bigint, s string")
    out, ck = str(tmp_path / "out"), str(tmp_path / "ck")
    original = file_sink.FileStreamSink._write_files

    def crash_on_batch_1(self, batch_id, data):
        files = original(self, batch_id, data)
        if batch_id == 1:
            raise OSError("simulated crash before the metadata log entry")
        return files

    def start():
        return ms.toDF().writeStream.format("parquet").option("checkpointLocation", ck) \
            .start(out)

    q = start()
    ms.addData([(1, "v1"), (2, "v2")])
    q.processAllAvailable()
    monkeypatch.setattr(file_sink.FileStreamSink, "_write_files", crash_on_batch_1)
    ms.addData([(3, "v3")])
    with pytest.raises(Exception, match="simulated crash"):
        q.awaitTermination()
    monkeypatch.setattr(file_sink.FileStreamSink, "_write_files", original)
    assert len([f for f in os.listdir(out) if f.endswith(".parquet")]) == 2  # one orphan
    assert read_rows(session, out) == [(1, "v1"), (2, "v2")]
    q = start()
    ms.addData([(4, "v4")])
    q.processAllAvailable()
    q.stop()
    assert read_rows(session, out) == [(1, "v1"), (2, "v2"), (3, "v3"), (4, "v4")]
    assert sorted(os.listdir(os.path.join(out, "_spark_metadata"))) == ["0", "1", "2"]
