"""Stream-static joins on the Spark runtime (ember.streaming.spark): the static side broadcast,
the join run by Ember's broadcast join inside the stream's ``mapInArrow`` stage, compared batch
by batch (the file sinks' ``_spark_metadata`` logs) with the local runtime over the same Parquet
files, and with rows derived by hand.

Three queries, each run on both runtimes at once, two steps each (a step writes one file per
stream while holding both queries' ``awaitProgressLock``, so it lands in one micro-batch on
both, then waits for ``processAllAvailable``):

* ``inner``: a filter, an inner join with a ``createDataFrame`` table (two rows for one key,
  keys without a stream row) and a projection; no stream-stream join.
* ``left``: a left anti join without equi-join keys (a nested loop join) below the stream's
  watermark, then a left outer join (the stream on the left) with a static side read from
  Parquet, an extra condition on a static column; unmatched stream rows come out NULL-padded.
* ``chain``: impressions joined with a static table above their watermark, feeding a
  stream-stream inner join with clicks (Ember's symmetric hash join in Spark's state), whose
  output is right-outer joined with a second static table (the stream on the right, the static
  side built on the left).

Run: ``python -m pytest -q tests/streaming/test_spark_stream_static.py``.
"""

from __future__ import annotations

import os
from collections import Counter
from contextlib import ExitStack

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import ember
from ember import functions as F
from ember.errors import UnsupportedError
from tests.streaming.test_spark_runtime_stream import file_sink_batches, write

pytestmark = pytest.mark.spark

CONF = {"spark.sql.shuffle.partitions": "2", "spark.sql.session.timeZone": "UTC"}
LEFT = ("ad", "it")
RIGHT = ("cad", "ct")


# ---------------------------------------------------------------------------------------------
# The queries: (build(session, root), steps [(impressions, clicks)], expected rows)


def _streams(s: ember.Session, root: str):
    imp = s.readStream.schema("ad int, it timestamp").parquet(os.path.join(root, "L"))
    clk = s.readStream.schema("cad int, ct timestamp").parquet(os.path.join(root, "R"))
    return imp, clk


def inner_query(s: ember.Session, root: str):
    imp, _ = _streams(s, root)
    static = s.createDataFrame([(1, "a"), (2, "b"), (2, "b2"), (4, "d"), (8, "h")],
                               "sk int, sv string")
    return (imp.where("ad <> 99").join(static, F.expr("ad = sk"))
            .select("ad", "it", "sv", (F.col("ad") * 10).alias("a10")))


def left_query(s: ember.Session, root: str):
    imp, _ = _streams(s, root)
    static = s.read.parquet(os.path.join(root, "static"))
    bands = s.createDataFrame([(90, 100)], "lo int, hi int")
    imp = (imp.join(bands, F.expr("ad >= lo AND ad < hi"), "left_anti")  # nested loop
           .withWatermark("it", "10 seconds"))
    return imp.join(static, F.expr("ad = sk AND sv <> 'x'"), "left_outer").select(
        "ad", "it", "sk", "sv")


def chain_query(s: ember.Session, root: str):
    imp, clk = _streams(s, root)
    labels = s.createDataFrame([(1, "one"), (2, "two"), (5, "five"), (7, "seven")],
                               "sk int, sv string")
    extra = s.createDataFrame([(1, "x1"), (7, "x7"), (9, "x9")], "k2 int, w string")
    imp = imp.withWatermark("it", "10 seconds").join(labels, F.expr("ad = sk"))
    clk = clk.withWatermark("ct", "20 seconds")
    joined = imp.join(clk, F.expr("ad = cad AND ct >= it AND ct <= it + interval 30 seconds"))
    return extra.join(joined, F.expr("k2 = cad"), "right_outer").select(
        "ad", "it", "sv", "cad", "ct", "k2", "w")


QUERIES = {
    "inner": (inner_query,
              [([(1, 10), (2, 20), (3, 30)], []), ([(4, 40), (99, 50), (2, 60)], [])],
              [(1, 10, "a", 10), (2, 20, "b", 20), (2, 20, "b2", 20), (4, 40, "d", 40),
               (2, 60, "b", 20), (2, 60, "b2", 20)]),
    "left": (left_query,
             [([(1, 10), (2, 20), (5, 30)], []), ([(3, 40), (1, 50), (95, 55), (2, 60)], [])],
             [(1, 10, 1, "a"), (2, 20, None, None), (5, 30, None, None), (3, 40, 3, "c"),
              (1, 50, 1, "a"), (2, 60, None, None)]),
    # the stream-stream join of test_spark_runtime_stream (3 has no label; 5 and 7 match in
    # step 2), then right outer with ``extra`` (5 has no row there)
    "chain": (chain_query,
              [([(1, 100), (2, 100), (3, 100), (5, 120)], [(1, 105), (1, 125), (2, 140),
                                                            (6, 110), (3, 105)]),
               ([(1, 50), (7, 400)], [(7, 405), (5, 130), (3, 90)])],
              [(1, 100, "one", 1, 105, 1, "x1"), (1, 100, "one", 1, 125, 1, "x1"),
               (5, 120, "five", 5, 130, None, None), (7, 400, "seven", 7, 405, 7, "x7")]),
}


def start(s: ember.Session, build, root: str, runtime: str):
    return (build(s, root).writeStream.format("parquet")
            .option("checkpointLocation", os.path.join(root, "ck", runtime))
            .start(os.path.join(root, "out", runtime)))


@pytest.fixture(scope="module")
def runs(spark, tmp_path_factory):
    """Each query on both runtimes over the same files; returns ``{name: root}``."""
    top = str(tmp_path_factory.mktemp("spark_stream_static"))
    sessions = {"local": ember.Session(CONF),
                "spark": ember.Session(CONF, runtime="spark", spark=spark)}
    roots = {}
    for name, (build, steps, _) in QUERIES.items():
        root = roots[name] = os.path.join(top, name)
        for d in ("L", "R", "static"):
            os.makedirs(os.path.join(root, d))
        pq.write_table(pa.table({"sk": pa.array([1, 2, 3], pa.int32()),
                                 "sv": ["a", "x", "c"]}),
                       os.path.join(root, "static", "part-0.parquet"))
        qs = {rt: start(s, build, root, rt) for rt, s in sessions.items()}
        try:
            for step, (imps, clicks) in enumerate(steps):
                with ExitStack() as stack:  # both files in one micro-batch on both runtimes
                    for q in qs.values():
                        stack.enter_context(q.awaitProgressLock)
                    write(os.path.join(root, "L"), f"s{step}", LEFT, imps)
                    if clicks:
                        write(os.path.join(root, "R"), f"s{step}", RIGHT, clicks)
                for q in qs.values():
                    q.processAllAvailable()
        finally:
            for q in qs.values():
                q.stop()
    return roots


@pytest.mark.parametrize("name", list(QUERIES))
def test_stream_static_join_on_spark_equals_local_and_expected(runs, name):
    root = runs[name]
    local = file_sink_batches(os.path.join(root, "out", "local"))
    on_spark = file_sink_batches(os.path.join(root, "out", "spark"))
    assert sum(local.values(), Counter()) == Counter(QUERIES[name][2])
    assert on_spark == local  # the same rows in the same batches
    assert len(local) >= 2  # each step's rows in a batch of their own


def test_static_side_over_the_limit_is_refused(spark, tmp_path):
    """A static side larger than ember.streaming.spark.maxStaticSideBytes is refused when the
    query starts (measured on the executors, never collected)."""
    root = str(tmp_path)
    for d in ("L", "R", "static"):
        os.makedirs(os.path.join(root, d))
    s = ember.Session({**CONF, "ember.streaming.spark.maxStaticSideBytes": "64"},
                      runtime="spark", spark=spark)
    with pytest.raises(UnsupportedError, match="maxStaticSideBytes"):
        start(s, inner_query, root, "spark")
    assert not s.streams.active
    s.conf.set("ember.streaming.spark.maxStaticSideBytes", "1m")
    q = start(s, inner_query, root, "spark")  # the same query under a higher limit
    q.stop()
