"""The streaming planner reuses a static side's broadcast only when the two reads are the same
(issue 18, item 1; planning/reuse_exchange.py): a stream joined twice with one Parquet table,
each join reading other columns of the same types, gives PySpark Structured Streaming's rows on
the local runtime and on the Spark runtime (whose stream-static join ships each static side as a
broadcast, ember.streaming.spark.plan).  Before the fix the second join read the first one's
broadcast: ``y`` came back equal to ``x``.
"""

from __future__ import annotations

import os
from collections import Counter

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import ember
from tests.streaming.test_spark_runtime_stream import file_sink_batches

pytestmark = pytest.mark.spark

CONF = {"spark.sql.shuffle.partitions": "2", "spark.sql.session.timeZone": "UTC"}


def _query(session, root: str):
    """``stream(k) JOIN static(a, x) ON k = a JOIN static(b, y) ON k = b`` (``session``: Ember's
    or PySpark's; the static reads differ only in their columns)."""
    static = session.read.parquet(os.path.join(root, "static"))
    stream = session.readStream.schema("k int").parquet(os.path.join(root, "in"))
    return (stream.join(static.select("a", "x"), stream.k == static.a)
            .join(static.select("b", "y"), stream.k == static.b)
            .select("k", "a", "x", "b", "y"))


@pytest.fixture(scope="module")
def root(tmp_path_factory) -> str:
    top = str(tmp_path_factory.mktemp("stream_static_reuse"))
    os.makedirs(os.path.join(top, "static"))
    os.makedirs(os.path.join(top, "in"))
    pq.write_table(pa.table({"a": pa.array([1, 2, 3, 4], pa.int32()),
                             "b": pa.array([3, 1, 2, 9], pa.int32()),
                             "x": ["a1", "a2", "a3", "a4"], "y": ["b1", "b2", "b3", "b4"]}),
                   os.path.join(top, "static", "part-0.parquet"))
    pq.write_table(pa.table({"k": pa.array([1, 2, 3, 4, 5], pa.int32())}),
                   os.path.join(top, "in", "part-0.parquet"))
    return top


def _run(session, root: str, name: str) -> Counter:
    out = os.path.join(root, "out", name)
    q = (_query(session, root).writeStream.format("parquet")
         .option("checkpointLocation", os.path.join(root, "ck", name)).start(out))
    try:
        q.processAllAvailable()
    finally:
        q.stop()
    return sum(file_sink_batches(out).values(), Counter())


@pytest.fixture(scope="module")
def expected(spark, root) -> Counter:
    session = spark.newSession()
    for k, v in CONF.items():
        session.conf.set(k, v)
    rows = _run(session, root, "pyspark")
    # k = 1: a row a=1 and a row b=1 (y = b2); 4 has no b; 5 neither
    assert rows == Counter({(1, 1, "a1", 1, "b2"): 1, (2, 2, "a2", 2, "b3"): 1,
                            (3, 3, "a3", 3, "b1"): 1})
    return rows


@pytest.mark.parametrize("runtime", ["local", "spark"])
def test_static_reads_of_other_columns_not_reused(spark, root, expected, runtime):
    session = (ember.Session(CONF) if runtime == "local"
               else ember.Session(CONF, runtime="spark", spark=spark))
    assert _run(session, root, runtime) == expected
