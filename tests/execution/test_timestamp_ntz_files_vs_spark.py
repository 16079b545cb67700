"""TIMESTAMP_NTZ across the Parquet boundary and createDataFrame, against PySpark 4.3.

Spark writes a TIMESTAMP as INT96 (its default ``outputTimestampType``) and a TIMESTAMP_NTZ as an
INT64 timestamp with ``isAdjustedToUTC=false``; Arrow reads both as timestamps without a zone, so
Ember tells them apart by the Parquet physical type. Ember writes NTZ columns so that Spark reads
them back as TIMESTAMP_NTZ. Under ``spark.sql.timestampType=TIMESTAMP_NTZ`` PySpark infers naive
Python datetimes as TIMESTAMP_NTZ. One Spark write, one Spark read.
"""

from __future__ import annotations

import datetime as dt
import os

import pytest

from ember.session import Session

pytestmark = pytest.mark.spark

_TZ = "America/Los_Angeles"
_ROWS = [(1, dt.datetime(2024, 3, 10, 2, 30), "2024-03-10 02:30:00"),
         (2, dt.datetime(1969, 12, 31, 23, 59, 59, 500000), "2024-01-31 23:59:59.123456"),
         (3, None, None)]


@pytest.fixture
def spark_la(spark):
    """The shared SparkSession in the test's time zone, restored afterwards."""
    old = spark.conf.get("spark.sql.session.timeZone")
    spark.conf.set("spark.sql.session.timeZone", _TZ)
    yield spark
    spark.conf.set("spark.sql.session.timeZone", old)


def test_parquet_ntz_and_timestamp_columns_round_trip_with_spark(spark_la, tmp_path):
    spark = spark_la
    from_spark = str(tmp_path / "from_spark")
    (spark.createDataFrame([(i, s) for i, _, s in _ROWS], "id int, s string")
     .selectExpr("id", "CAST(s AS TIMESTAMP) AS ts", "CAST(s AS TIMESTAMP_NTZ) AS ntz")
     .write.parquet(from_spark))
    session = Session()
    session.conf.set("spark.sql.session.timeZone", _TZ)
    ember = session.read.parquet(from_spark).orderBy("id")
    assert ember.dtypes == [("id", "int"), ("ts", "timestamp"), ("ntz", "timestamp_ntz")]
    expected = spark.read.parquet(from_spark).orderBy("id").selectExpr(
        "id", "CAST(ts AS STRING)", "CAST(ntz AS STRING)").collect()
    got = ember.selectExpr("id", "CAST(ts AS STRING)", "CAST(ntz AS STRING)").collect()
    assert [tuple(r) for r in got] == [tuple(r) for r in expected]

    from_ember = os.path.join(str(tmp_path), "from_ember")
    ember.write.parquet(from_ember)
    back = spark.read.parquet(from_ember).orderBy("id")
    assert [(f.name, f.dataType.simpleString()) for f in back.schema.fields] == [
        ("id", "int"), ("ts", "timestamp"), ("ntz", "timestamp_ntz")]
    assert [tuple(r) for r in back.selectExpr("id", "CAST(ts AS STRING)",
                                              "CAST(ntz AS STRING)").collect()] == \
        [tuple(r) for r in expected]


def test_create_dataframe_infers_ntz_under_the_timestamp_type(spark):
    rows = [(i, t) for i, t, _ in _ROWS]
    session = Session()
    for kind in ("TIMESTAMP_LTZ", "TIMESTAMP_NTZ"):
        spark.conf.set("spark.sql.timestampType", kind)
        session.conf.set("spark.sql.timestampType", kind)
        try:
            expected = spark.createDataFrame(rows, ["id", "t"])
            got = session.createDataFrame(rows, ["id", "t"])
            assert got.dtypes == expected.dtypes
            if kind == "TIMESTAMP_NTZ":  # wall-clock values: no zone to differ by
                assert got.collect() == expected.collect()
        finally:
            spark.conf.unset("spark.sql.timestampType")
