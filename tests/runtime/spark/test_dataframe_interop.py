"""PySpark DataFrame interop, both directions, on both runtimes.

- in: ``ember_session.createDataFrame(pyspark_df)`` (a ``SparkDataFrameRelation``, scanned as
  ``Scan ExistingRDD``) registered as a view and queried with Ember tables;
- out: ``ember_df.to_spark()`` continued in PySpark (lazy on the Spark runtime).

Results are compared with the same pipeline run by Spark alone.  Uses the session's one
SparkContext (the ``spark`` fixture); Ember sessions on the Spark runtime attach to it.
"""

from __future__ import annotations

import datetime as dt
import pickle
import uuid
from decimal import Decimal

import pyarrow as pa
import pytest

import ember
from ember.errors import InternalError, UnsupportedError

RUNTIMES = ["spark", "local"]

TYPES_DDL = ("i int, l bigint, d double, m decimal(10,2), s string, dt date, ts timestamp, "
             "b boolean")
TYPES_ROWS = [
    (1, 10_000_000_000, 1.5, Decimal("12.34"), "x", dt.date(2024, 1, 31),
     dt.datetime(2024, 1, 31, 12, 30, 45, 123456), True),
    (None, None, None, None, None, None, None, None),
    (-7, -1, -0.25, Decimal("-0.01"), "", dt.date(1970, 1, 1),
     dt.datetime(1999, 12, 31, 23, 59, 59), False),
]


@pytest.fixture(params=RUNTIMES)
def es(request, spark):
    """An Ember session on the parametrized runtime (the Spark one attached to ``spark``)."""
    if request.param == "spark":
        return ember.Session(runtime="spark", spark=spark)
    return ember.Session()


def _name(prefix: str) -> str:
    return f"{prefix}_{uuid.uuid4().hex[:8]}"


def _rows(rows) -> list[tuple]:
    return sorted((tuple(r) for r in rows), key=repr)


def _spark_view(spark, df, prefix: str) -> str:
    name = _name(prefix)
    df.createOrReplaceTempView(name)
    return name


# ---------------------------------------------------------------------------------------------
# Data in


def test_registered_frame_joined_and_aggregated_matches_spark_sql(es, spark):
    orders = spark.createDataFrame(
        [(i, i % 7 if i % 11 else None, Decimal(f"{i}.{i % 100:02d}"), f"c{i % 3}")
         for i in range(200)],
        "id bigint, cust int, amount decimal(10,2), cat string").where("id % 5 != 0")
    cust_rows = [(c, f"name{c}", c % 2 == 0) for c in range(6)]
    cust_ddl = "cust int, name string, vip boolean"

    es.createDataFrame(orders).createOrReplaceTempView("orders")
    es.createDataFrame(cust_rows, cust_ddl).createOrReplaceTempView("cust")
    query = ("SELECT c.name, o.cat, count(*) AS n, sum(o.amount) AS total, max(o.id) AS last "
             "FROM {orders} o JOIN {cust} c ON o.cust = c.cust "
             "WHERE c.vip OR o.amount > 100 GROUP BY c.name, o.cat")
    got = es.sql(query.format(orders="orders", cust="cust")).collect()

    sv_orders = _spark_view(spark, orders, "orders")
    sv_cust = _spark_view(spark, spark.createDataFrame(cust_rows, cust_ddl), "cust")
    want = spark.sql(query.format(orders=sv_orders, cust=sv_cust)).collect()
    assert len(want) > 3
    assert _rows(got) == _rows(want)


def test_types_round_trip(es, spark):
    frame = spark.createDataFrame(TYPES_ROWS, TYPES_DDL)
    edf = es.createDataFrame(frame)
    assert edf.dtypes == frame.dtypes
    assert _rows(edf.collect()) == _rows(frame.collect())
    # ... and back through Ember into PySpark
    back = edf.to_spark()
    assert back.dtypes == frame.dtypes
    assert _rows(back.collect()) == _rows(frame.collect())
    # through an Ember query (a filter and a computed column) and a view
    edf.createOrReplaceTempView("typed")
    q = es.sql("SELECT *, m * 2 AS m2 FROM typed WHERE i IS NULL OR i > 0")
    sv = _spark_view(spark, frame, "typed")
    want = spark.sql(f"SELECT *, m * 2 AS m2 FROM {sv} WHERE i IS NULL OR i > 0")
    assert q.to_spark().dtypes == want.dtypes
    assert _rows(q.to_spark().collect()) == _rows(want.collect())


def test_column_pruning_reads_only_used_columns(es, spark):
    frame = spark.range(5).selectExpr("id AS a", "id * 10 AS b", "concat('s', id) AS c")
    es.createDataFrame(frame).createOrReplaceTempView("f")
    q = es.sql("SELECT c FROM f WHERE a > 2")
    plan = q._qe.explain_string()
    scan = next(line for line in plan.splitlines() if "Scan ExistingRDD" in line)
    assert "c#" in scan and "a#" in scan and "b#" not in scan
    assert _rows(q.collect()) == [("s3",), ("s4",)]
    assert es.sql("SELECT count(*) AS n FROM f").collect()[0].n == 5


# ---------------------------------------------------------------------------------------------
# Data out


def test_to_spark_then_pyspark_transformation_matches_spark(es, spark):
    rows = [(i, i % 4, float(i) / 3 if i % 9 else None) for i in range(120)]
    ddl = "id bigint, g int, x double"
    es.createDataFrame(rows, ddl).createOrReplaceTempView("t")
    text = "SELECT g, id, x, id * 2 AS id2 FROM {t} WHERE id % 3 <> 0"
    out = es.sql(text.format(t="t")).to_spark()

    from pyspark.sql import functions as F

    def finish(df):
        return (df.where(F.col("id2") > 20).groupBy("g")
                .agg(F.count("*").alias("n"), F.sum("x").alias("sx"), F.max("id").alias("mx")))

    sv = _spark_view(spark, spark.createDataFrame(rows, ddl), "t")
    want = finish(spark.sql(text.format(t=sv))).collect()
    got = finish(out).collect()
    assert len(want) == 4
    assert sorted(got) == sorted(want)


def test_to_spark_on_spark_runtime_is_lazy(spark):
    """No Spark job runs until an action; Spark's plan scans the Ember RDD (no local data)."""
    es = ember.Session(runtime="spark", spark=spark)
    es.conf.set("spark.sql.autoBroadcastJoinThreshold", "-1")
    es.createDataFrame(spark.range(50).selectExpr("id", "id % 5 AS g")) \
        .createOrReplaceTempView("r")
    q = es.sql("SELECT g, count(*) AS n FROM r GROUP BY g")
    sc = spark.sparkContext
    group = _name("ember_to_spark")
    sc.setJobGroup(group, "to_spark laziness")
    try:
        out = q.to_spark()
        assert list(sc.statusTracker().getJobIdsForGroup(group)) == []
        plan = out._jdf.queryExecution().executedPlan().toString()
        assert "MapInArrow" in plan and "ExistingRDD" in plan
        assert "LocalTableScan" not in plan
        assert sorted(out.collect()) == [(g, 10) for g in range(5)]
        assert list(sc.statusTracker().getJobIdsForGroup(group)) != []  # the action ran jobs
    finally:
        sc.setLocalProperty("spark.jobGroup.id", None)
        sc.setLocalProperty("spark.job.description", None)


def test_to_spark_on_local_runtime_is_a_local_relation(spark):
    es = ember.Session()
    out = es.sql("SELECT 1 AS a, 'x' AS s").to_spark()
    assert out.dtypes == [("a", "int"), ("s", "string")]
    assert out.collect() == [(1, "x")]


# ---------------------------------------------------------------------------------------------
# Empty frames and results


def test_empty_frames_and_results(es, spark):
    empty = spark.createDataFrame([], "k bigint, v string")
    edf = es.createDataFrame(empty)
    assert edf.dtypes == [("k", "bigint"), ("v", "string")]
    assert edf.collect() == []
    edf.createOrReplaceTempView("e")
    es.createDataFrame([(1, 2)], "k bigint, w int").createOrReplaceTempView("o")
    assert es.sql("SELECT count(*) AS n FROM e").collect()[0].n == 0
    assert es.sql("SELECT o.k, e.v FROM o LEFT JOIN e ON o.k = e.k").collect() == [(1, None)]
    out = es.sql("SELECT k, v FROM e WHERE k > 0").to_spark()
    assert out.dtypes == [("k", "bigint"), ("v", "string")]
    assert out.collect() == []
    assert out.groupBy("v").count().collect() == []
    assert edf.to_spark().count() == 0


# ---------------------------------------------------------------------------------------------
# Statistics and join selection


def test_small_frame_is_broadcast(es, spark):
    small = spark.createDataFrame(pa.table({"k": pa.array([1, 2, 3], pa.int64()),
                                            "label": ["a", "b", "c"]}))
    size = int(str(small._jdf.queryExecution().optimizedPlan().stats().sizeInBytes()))
    big = pa.table({"k": pa.array([i % 10 for i in range(20_000)], pa.int64()),
                    "v": pa.array(range(20_000), pa.int64())})
    es.createDataFrame(small).createOrReplaceTempView("small")
    es.createDataFrame(big).createOrReplaceTempView("big")
    q = es.sql("SELECT s.label, count(*) AS n FROM big b JOIN small s ON b.k = s.k "
               "GROUP BY s.label")

    from ember.plans.logical.nodes import SparkDataFrameRelation
    from ember.plans.logical.statistics import plan_stats

    rel = q._qe.optimized.find(lambda p: isinstance(p, SparkDataFrameRelation))
    assert plan_stats(rel, es.sql_conf).size_in_bytes == size

    lines = q._qe.executed_plan.tree_string().splitlines()
    join = next(line for line in lines if "BroadcastHashJoin" in line)
    assert "BuildRight" in join  # small is the right side
    bx = next(i for i, line in enumerate(lines) if "BroadcastExchange" in line)
    assert "Scan ExistingRDD" in "\n".join(lines[bx:])
    assert "LocalTableScan" not in "\n".join(lines[bx:])
    assert sorted(q.collect()) == [("a", 2000), ("b", 2000), ("c", 2000)]


def test_frame_of_unknown_size_is_not_broadcast(es, spark):
    """A LogicalRDD (Python rows) has Spark's size Long.MaxValue: the Ember table is built."""
    rdd_frame = spark.createDataFrame([(i % 10, i) for i in range(100)], "k bigint, v bigint")
    es.createDataFrame(rdd_frame).createOrReplaceTempView("rf")
    es.createDataFrame(pa.table({"k": pa.array([1, 2], pa.int64())})).createOrReplaceTempView(
        "tiny")
    q = es.sql("SELECT count(*) AS n FROM rf JOIN tiny ON rf.k = tiny.k")
    lines = q._qe.executed_plan.tree_string().splitlines()
    bx = next(i for i, line in enumerate(lines) if "BroadcastExchange" in line)
    assert "LocalTableScan" in "\n".join(lines[bx:])
    assert "Scan ExistingRDD" not in "\n".join(lines[bx:bx + 3])
    assert q.collect()[0].n == 20


# ---------------------------------------------------------------------------------------------
# Guards


def test_frame_is_never_pickled_and_schema_is_refused(spark):
    es = ember.Session()
    edf = es.createDataFrame(spark.range(2))
    rel = edf._qe.analyzed.find(lambda p: type(p).__name__ == "SparkDataFrameRelation")
    with pytest.raises(InternalError):
        pickle.dumps(rel)
    from ember.physical.nodes import SparkDataFrameScanExec

    scan = edf._qe.executed_plan.find(lambda p: isinstance(p, SparkDataFrameScanExec))
    with pytest.raises(InternalError):
        pickle.dumps(scan)
    with pytest.raises(UnsupportedError):
        es.createDataFrame(spark.range(2), "id bigint")


def test_exchanges_over_different_frames_are_not_reused(es, spark):
    """Two frames with the same schema are different relations (the frame takes no part in
    node equality; ReuseExchange must not treat their scans as the same)."""
    es.createDataFrame(spark.range(6).selectExpr("id % 2 AS k")).createOrReplaceTempView("f1")
    es.createDataFrame(spark.range(9).selectExpr("id % 3 AS k")).createOrReplaceTempView("f2")
    q = es.sql("SELECT 'a' AS src, k, count(*) AS n FROM f1 GROUP BY k "
               "UNION ALL SELECT 'b' AS src, k, count(*) AS n FROM f2 GROUP BY k")
    assert "ReusedExchange" not in q._qe.executed_plan.tree_string()
    assert sorted(q.collect()) == [("a", 0, 3), ("a", 1, 3), ("b", 0, 3), ("b", 1, 3),
                                   ("b", 2, 3)]
