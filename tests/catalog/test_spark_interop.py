"""Tables shared with Spark SQL on the Spark runtime: a table Ember creates is registered in
the SparkSession's catalog and read by Spark SQL under the same name, and a table Spark wrote is
registered in Ember with ``CREATE TABLE ... USING parquet LOCATION '...'`` and read by Ember on
both runtimes. (Writing rows is not the catalog's job: the files are placed with pyarrow.)"""

from __future__ import annotations

import os

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import ember
from tests.conformance.ember_adapter import RUNTIMES


def _rows(df):
    return sorted(tuple(r) for r in df.collect())


def test_spark_sql_reads_a_table_ember_created(spark, tmp_path):
    s = ember.Session({"spark.sql.warehouse.dir": str(tmp_path)}, runtime="spark", spark=spark)
    s.sql("CREATE DATABASE interop_db")
    s.sql("CREATE TABLE interop_db.sales (id BIGINT, amount DECIMAL(10,2), region STRING) "
          "USING parquet PARTITIONED BY (region)")
    location = s.session_catalog.get_table(("interop_db", "sales")).location
    for region, ids in (("eu", [1, 2]), ("us", [3])):
        os.makedirs(os.path.join(location, f"region={region}"))
        pq.write_table(pa.table({"id": pa.array(ids, pa.int64()),
                                 "amount": pa.array([i * 10 for i in ids], pa.decimal128(10, 2))}),
                       os.path.join(location, f"region={region}", "part-0.parquet"))
    s.catalog.refreshTable("interop_db.sales")
    try:
        via_spark = _rows(s.spark_session.sql(
            "SELECT id, amount, region FROM interop_db.sales"))
        via_ember = _rows(s.sql("SELECT id, amount, region FROM interop_db.sales"))
        assert via_spark == via_ember and [r[0] for r in via_ember] == [1, 2, 3]
        assert [r.name for r in s.spark_session.catalog.listColumns("sales", "interop_db")] == \
            ["id", "amount", "region"]
        s.sql("DROP TABLE interop_db.sales")
        assert not s.spark_session.catalog.tableExists("interop_db.sales")
        assert not os.path.exists(location)
    finally:
        s.spark_session.sql("DROP DATABASE IF EXISTS interop_db CASCADE")


@pytest.mark.parametrize("runtime", RUNTIMES)
def test_ember_registers_and_reads_a_table_spark_wrote(spark, tmp_path, runtime):
    source = spark.createDataFrame(
        [(1, "a", 10), (2, "b", 10), (3, "c", 20)], "id INT, name STRING, day INT")
    name = f"spark_written_{runtime}"
    source.write.mode("overwrite").partitionBy("day").saveAsTable(name)
    try:
        location = [r.data_type for r in spark.sql(f"DESCRIBE FORMATTED {name}").collect()
                    if r.col_name == "Location"][0]
        s = ember.Session({"spark.sql.warehouse.dir": str(tmp_path)}, runtime=runtime,
                          **({"spark": spark} if runtime == "spark" else {}))
        s.sql(f"CREATE TABLE t USING parquet PARTITIONED BY (day) LOCATION '{location}'")
        assert [tuple(r) for r in s.sql("DESCRIBE t").collect()] == [
            tuple(r) for r in spark.sql(f"DESCRIBE {name}").collect()]
        assert _rows(s.sql("SELECT id, name, day FROM t")) == _rows(
            spark.sql(f"SELECT id, name, day FROM {name}"))
        s.sql("DROP TABLE t")  # external: Spark's files stay
        assert _rows(spark.table(name)) == _rows(source)
    finally:
        spark.sql(f"DROP TABLE IF EXISTS {name}")


def test_partition_commands_reach_spark_sql(spark, tmp_path):
    """On the Spark runtime, DROP / RENAME / TRUNCATE PARTITION and SET LOCATION change what
    Spark SQL reads of the table as they change what Ember reads."""
    s = ember.Session({"spark.sql.warehouse.dir": str(tmp_path / "wh")}, runtime="spark",
                      spark=spark)
    s.sql("CREATE DATABASE part_db")
    try:
        s.sql("CREATE TABLE part_db.pt (a INT, p INT) USING parquet PARTITIONED BY (p)")
        s.sql("INSERT INTO part_db.pt VALUES (1, 1), (2, 2), (3, 3), (4, NULL)")
        s.sql("ALTER TABLE part_db.pt DROP PARTITION (p = 1)")
        s.sql("ALTER TABLE part_db.pt PARTITION (p = 2) RENAME TO PARTITION (p = 20)")
        s.sql("TRUNCATE TABLE part_db.pt PARTITION (p = 3)")
        want = [(2, 20), (4, None)]
        assert sorted(_rows(s.sql("SELECT a, p FROM part_db.pt")), key=str) == want
        assert sorted(_rows(spark.sql("SELECT a, p FROM part_db.pt")), key=str) == want
        assert [r[0] for r in s.sql("SHOW PARTITIONS part_db.pt").collect()] == [
            r[0] for r in spark.sql("SHOW PARTITIONS part_db.pt").collect()]
        s.sql("CREATE TABLE part_db.np (a INT) USING parquet")
        s.sql(f"ALTER TABLE part_db.np SET LOCATION '{tmp_path / 'moved'}'")
        s.sql("INSERT INTO part_db.np VALUES (7)")
        assert os.listdir(tmp_path / "moved")
        assert _rows(spark.sql("SELECT a FROM part_db.np")) == [(7,)]
        assert _rows(s.sql("SELECT a FROM part_db.np")) == [(7,)]
    finally:
        spark.sql("DROP DATABASE IF EXISTS part_db CASCADE")
