"""The rate source (ember.streaming.sources.rate): Spark's RateStreamMicroBatchStream, checked
against PySpark 4.3's own rate source on the same creation time and offsets."""

from __future__ import annotations

import os
import shutil
import time

import numpy as np
import pyarrow as pa
import pytest

import ember
from ember.errors import AnalysisError
from ember.streaming.sources.rate import RATE_SCHEMA, RateStreamSource, value_at_second


@pytest.fixture(scope="module")
def session():
    return ember.Session()


class Clock:
    def __init__(self, ms: int) -> None:
        self.ms = ms

    def __call__(self) -> int:
        return self.ms


def test_value_at_second_ramp_up_matches_spark_doc_example():
    # RateStreamProvider.valueAtSecond's comment: rampUpTime 4, rowsPerSecond 10
    assert [value_at_second(s, 10, 4) for s in range(7)] == [0, 2, 6, 12, 20, 30, 40]
    assert [value_at_second(s, 5, 0) for s in range(4)] == [0, 5, 10, 15]


def test_offsets_are_whole_seconds_and_first_batch_is_empty(session):
    clock = Clock(1_000_000)
    src = RateStreamSource(session, None, {"rowsPerSecond": "4", "numPartitions": "1"}, None,
                           clock=clock)
    assert src.schema == RATE_SCHEMA
    assert src.latest_offset() == 0
    assert src.get_batch(None, 0).num_rows == 0
    clock.ms += 2999
    assert src.latest_offset() == 2
    t = src.get_batch(None, 2)
    assert t.column("value").to_pylist() == list(range(8))
    # 4 rows per second: 250 ms apart from the creation time
    micros = t.column("timestamp").cast(pa.int64()).to_pylist()
    assert micros == [(1_000_000 + 250 * i) * 1000 for i in range(8)]
    clock.ms -= 5000  # the clock going back never moves the offset back
    assert src.latest_offset() == 2


def test_rows_are_partition_major_and_deterministic(session):
    src = RateStreamSource(session, None, {"rowsPerSecond": "10", "numPartitions": "3",
                                           "rampUpTime": "4s"}, None, clock=Clock(0))
    t = src.get_batch(1, 3)  # values 2 .. 11
    values = t.column("value").to_pylist()
    assert values == [2, 5, 8, 11, 3, 6, 9, 4, 7, 10]
    # 2 s over 10 values: 200 ms each, counted from the start second, Java Math.round
    micros = np.array(t.column("timestamp").cast(pa.int64()).to_pylist())
    assert list(micros // 1000) == [1000 + (v - 2) * 200 for v in values]
    again = RateStreamSource(session, None, {"rowsPerSecond": "10", "numPartitions": "3",
                                             "rampUpTime": "4s"}, None, clock=Clock(0))
    assert again.get_batch(1, 3).equals(t)


def test_creation_time_persists_in_the_metadata_log(session, tmp_path):
    meta = tmp_path / "sources" / "0"
    src = RateStreamSource(session, None, {"rowsPerSecond": "2"}, None,
                           metadata_path=str(meta), clock=Clock(123_456))
    assert (meta / "0").read_text() == "v1\n123456"
    restarted = RateStreamSource(session, None, {"rowsPerSecond": "2"}, None,
                                 metadata_path=str(meta), clock=Clock(999_999))
    assert restarted.creation_time_ms == 123_456
    assert restarted.get_batch(0, 3).equals(src.get_batch(0, 3))
    # the restarted source reports at least the end of a re-run batch
    assert restarted.latest_offset() == (999_999 - 123_456) // 1000


def test_option_errors_use_sparks_messages(session):
    with pytest.raises(AnalysisError, match="Invalid value '0'. The option 'rowsPerSecond' must "
                                            "be positive"):
        RateStreamSource(session, None, {"rowsPerSecond": "0"}, None)
    with pytest.raises(AnalysisError) as e:
        RateStreamSource(session, ember.types.StructType(
            (ember.types.StructField("a", ember.types.INT, True),)), {}, None)
    assert e.value.error_class == "_LEGACY_ERROR_TEMP_2242"
    assert "RateStreamProvider source does not support user-specified schema." in str(e.value)


def test_same_rows_as_spark_rate_source(spark, session, tmp_path):
    """Spark runs a rate stream for a few batches; Ember's source, given Spark's creation time
    (its metadata log copied) and the offsets of Spark's offset log, yields the same rows in the
    same order."""
    from pyspark.sql import functions as F

    ck = str(tmp_path / "spark_ck")
    got: dict[int, list[tuple[int, int]]] = {}

    def collect(df, batch_id):
        rows = df.select(F.unix_micros("timestamp").alias("us"), "value").collect()
        got[batch_id] = [(r.us, r.value) for r in rows]

    stream = (spark.readStream.format("rate")
              .options(rowsPerSecond=7, numPartitions=3, rampUpTime="2s").load())
    q = (stream.writeStream.foreachBatch(collect).option("checkpointLocation", ck)
         .trigger(processingTime="1 second").start())
    try:
        deadline = time.time() + 60
        while sum(1 for v in got.values() if v) < 3 and time.time() < deadline:
            time.sleep(0.2)
    finally:
        q.stop()
    meta = tmp_path / "ember_sources_0"
    shutil.copytree(os.path.join(ck, "sources", "0"), meta)
    src = RateStreamSource(session, None, {"rowsPerSecond": "7", "numPartitions": "3",
                                           "rampUpTime": "2s"}, None, metadata_path=str(meta))
    offsets = {}
    for name in os.listdir(os.path.join(ck, "offsets")):
        if name.isdigit():
            lines = open(os.path.join(ck, "offsets", name)).read().splitlines()
            offsets[int(name)] = int(lines[-1])
    compared = 0
    for batch_id, rows in sorted(got.items()):
        start = offsets.get(batch_id - 1)
        t = src.get_batch(start, offsets[batch_id])
        mine = list(zip(t.column("timestamp").cast(pa.int64()).to_pylist(),
                        t.column("value").to_pylist()))
        assert mine == rows, batch_id
        compared += len(rows)
    assert compared >= 7  # the ramp-up gave rows 0..6 at least


def test_rate_stream_end_to_end(session):
    df = session.readStream.format("rate").option("rowsPerSecond", 5) \
        .option("numPartitions", 2).load()
    assert [(f.name, f.data_type) for f in df.schema.fields] == [
        ("timestamp", ember.types.TIMESTAMP), ("value", ember.types.LONG)]
    q = df.writeStream.format("memory").queryName("rate_e2e").start()
    try:
        deadline = time.time() + 30
        while session.table("rate_e2e").count() < 10 and time.time() < deadline:
            time.sleep(0.2)
            q.processAllAvailable()
    finally:
        q.stop()
    t = session.table("rate_e2e").to_arrow().sort_by("value")
    values = t.column("value").to_pylist()
    assert len(values) >= 10 and values == list(range(len(values)))
    micros = np.array(t.column("timestamp").cast(pa.int64()).to_pylist())
    assert set(np.diff(micros)) == {200_000}  # 5 rows per second
