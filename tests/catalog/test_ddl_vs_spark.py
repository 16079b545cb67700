"""Catalog DDL on Ember and on PySpark 4.3, statement by statement: the same result columns and
rows (SHOW TABLES / DATABASES / COLUMNS / CREATE TABLE / TBLPROPERTIES, DESCRIBE [EXTENDED]
TABLE / DATABASE / column) and the same errors (class, message and position).

Each script runs in a fresh Ember session on a new warehouse and in a new PySpark session (whose
databases and tables are dropped afterwards). Values that depend on the run are masked on both
sides: creation time, the engine that created the table, the warehouse and external
directories, the owner.
"""

from __future__ import annotations

import re

import pytest

import ember
from ember.errors import EmberError

_MASKED_KEYS = {"Created Time", "Created By", "Owner"}

SCRIPTS = {
    "create_describe_show": [
        "CREATE TABLE t (a INT COMMENT 'the a', b STRING, p INT) USING parquet "
        "PARTITIONED BY (p) COMMENT 'tbl comment' TBLPROPERTIES ('k1'='v1', 'k2'='v2')",
        "CREATE TABLE t (a INT) USING parquet",
        "CREATE TABLE IF NOT EXISTS t (a INT) USING parquet",
        "CREATE TABLE t2 (x BIGINT, y DECIMAL(10,2), s STRUCT<f: INT, `g h`: STRING>, "
        "arr ARRAY<DATE>, `odd name` TIMESTAMP) USING csv OPTIONS (header 'true', sep '|')",
        "CREATE TABLE t2 (x BIGINT, arr ARRAY<DATE>) USING csv",
        "CREATE TABLE t2 (x BIGINT, y DECIMAL(10,2), `odd name` TIMESTAMP) USING csv "
        "OPTIONS (header 'true', sep '|')",
        "CREATE TABLE t3 (s STRUCT<f: INT, `g h`: STRING>, arr ARRAY<DATE>, "
        "i INTERVAL DAY TO SECOND) USING parquet",
        "CREATE TABLE t6 (a INT, p STRING, q INT) USING parquet PARTITIONED BY (q, p)",
        "CREATE TABLE t7 (a INT NOT NULL, s STRUCT<x: INT NOT NULL>)", "SHOW CREATE TABLE t7",
        "DESCRIBE t", "DESCRIBE EXTENDED t", "DESCRIBE FORMATTED t2", "DESC TABLE t6",
        "DESCRIBE EXTENDED t7", "DESC t a", "DESC EXTENDED t a", "DESC t nosuchcol",
        "SHOW TABLES", "SHOW TABLES LIKE 't*'", "SHOW TABLES LIKE 't2|t6'",
        "SHOW TABLES IN default", "SHOW DATABASES", "SHOW COLUMNS IN t",
        "SHOW COLUMNS IN t IN default", "SHOW COLUMNS IN nosuch", "SHOW CREATE TABLE t",
        "SHOW CREATE TABLE t2", "SHOW CREATE TABLE t3", "DESCRIBE t3",
        "SHOW CREATE TABLE t6", "SHOW TBLPROPERTIES t",
        "SHOW TBLPROPERTIES t ('k1')", "SHOW TBLPROPERTIES t ('nokey')",
        "SELECT * FROM t", "SELECT t.a, default.t.b, spark_catalog.default.t.p FROM t",
    ],
    "databases": [
        "CREATE DATABASE d1 COMMENT 'db one'", "CREATE DATABASE d1",
        "CREATE SCHEMA IF NOT EXISTS d1", "CREATE TABLE d1.u (z INT) USING json",
        "CREATE TABLE nodb.t (a INT) USING parquet", "SHOW TABLES IN d1", "SHOW TABLES IN nodb",
        "DROP DATABASE d1", "USE d1", "SHOW TABLES", "SELECT * FROM nosuch",
        "SELECT current_database(), current_schema(), current_catalog(), "
        "upper(current_database()) AS u", "SELECT current_schema(1)",
        "CREATE TABLE inx (a INT) USING parquet", "DESCRIBE EXTENDED inx", "USE default",
        "SHOW DATABASES", "SHOW DATABASES LIKE 'd*'", "SHOW TABLES IN spark_catalog.d1", "DESCRIBE DATABASE d1",
        "DESCRIBE DATABASE EXTENDED d1", "DESCRIBE DATABASE default", "USE nosuchdb",
        "DROP DATABASE nosuchdb", "DROP DATABASE IF EXISTS nosuchdb", "DROP DATABASE default",
        "DROP DATABASE d1 CASCADE", "SHOW DATABASES",
    ],
    "drop_alter_truncate": [
        "CREATE TABLE t2 (x BIGINT, y DECIMAL(10,2)) USING csv OPTIONS (header 'true')",
        "CREATE TABLE myt (a INT) USING parquet",
        "DROP TABLE nosuch", "DROP TABLE IF EXISTS nosuch", "DROP VIEW t2",
        "ALTER TABLE t2 ADD COLUMNS (c3 STRING COMMENT 'added')", "DESCRIBE t2",
        "ALTER TABLE t2 ADD COLUMNS (x INT)", "ALTER TABLE t2 ADD COLUMNS (c INT, c INT)",
        "ALTER TABLE t2 SET TBLPROPERTIES ('x'='1', 'y'='2')", "SHOW TBLPROPERTIES t2",
        "SHOW TBLPROPERTIES t2 ('option.header')",
        "ALTER TABLE t2 UNSET TBLPROPERTIES ('x')", "SHOW TBLPROPERTIES t2",
        "ALTER TABLE t2 UNSET TBLPROPERTIES ('nokey')",
        "ALTER TABLE t2 RENAME TO myt", "ALTER TABLE nosuch RENAME TO zz",
        "ALTER TABLE t2 RENAME TO t3", "SHOW TABLES", "TRUNCATE TABLE t3",
        "CREATE TEMPORARY VIEW tv AS SELECT 1 AS one", "TRUNCATE TABLE tv", "TRUNCATE TABLE nosuch",
        "SHOW TBLPROPERTIES tv", "SHOW CREATE TABLE tv", "SHOW TABLES", "DROP TABLE t3",
        "DROP TABLE myt", "SHOW TABLES",
        "CREATE TABLE t5 (a INT, p STRING) USING parquet PARTITIONED BY (nope)",
        "CREATE TABLE t5 (a INT, a STRING) USING parquet",
    ],
    "views": [
        "CREATE TABLE base (a INT, b STRING) USING parquet",
        "CREATE VIEW pv COMMENT 'a view' TBLPROPERTIES ('vk'='vv') AS SELECT a, b FROM base "
        "WHERE a > 1",
        "DESCRIBE pv", "DESCRIBE EXTENDED pv", "SHOW CREATE TABLE pv", "SHOW TBLPROPERTIES pv",
        "SELECT * FROM pv", "CREATE VIEW pv AS SELECT 1 AS x", "CREATE TABLE pv (a INT) USING parquet",
        "CREATE OR REPLACE VIEW pv (c1, c2) AS SELECT b, a FROM base", "DESCRIBE pv",
        "SELECT * FROM pv", "CREATE VIEW IF NOT EXISTS pv AS SELECT 1 AS x", "SHOW TABLES",
        "DROP VIEW base", "DROP TABLE pv", "SHOW TABLES", "DROP VIEW IF EXISTS nosuch",
        "CREATE TEMPORARY VIEW tv2 AS SELECT 1 AS x", "CREATE VIEW bad AS SELECT * FROM tv2",
        "CREATE VIEW bad AS SELECT x FROM (SELECT * FROM tv2)",
    ],
    "partitions": [
        "CREATE TABLE pt (a INT, p INT, q STRING) USING parquet PARTITIONED BY (p, q)",
        "INSERT INTO pt VALUES (1, 1, 'x'), (2, 1, 'y'), (3, 2, 'x'), (4, NULL, 'z')",
        "SHOW PARTITIONS pt", "SHOW PARTITIONS pt PARTITION (p = 1)",
        "SHOW PARTITIONS pt PARTITION (q = 'x')", "SHOW PARTITIONS pt PARTITION (p = 9)",
        "SHOW PARTITIONS pt PARTITION (z = 9)",
        "ALTER TABLE pt DROP PARTITION (p = 1, q = 'x')", "SELECT * FROM pt ORDER BY a",
        "ALTER TABLE pt DROP PARTITION (p = 1, q = 'x')",
        "ALTER TABLE pt DROP IF EXISTS PARTITION (p = 1, q = 'x')",
        "ALTER TABLE pt DROP PARTITION (p = 2)",
        "ALTER TABLE pt DROP PARTITION (p = 1, q = 'y'), PARTITION (p = 7, q = 'y')",
        "SHOW PARTITIONS pt", "ALTER TABLE pt DROP PARTITION (p = 1, q = 'y') PURGE",
        "SELECT * FROM pt ORDER BY a",
        "ALTER TABLE pt PARTITION (p = NULL, q = 'z') RENAME TO PARTITION (p = 5, q = 'z')",
        "SHOW PARTITIONS pt", "SELECT * FROM pt ORDER BY a",
        "ALTER TABLE pt PARTITION (p = 5, q = 'z') RENAME TO PARTITION (p = 5, q = 'z')",
        "ALTER TABLE pt PARTITION (p = 6, q = 'z') RENAME TO PARTITION (p = 8, q = 'z')",
        "ALTER TABLE pt PARTITION (p = 5) RENAME TO PARTITION (p = 8)",
        "INSERT INTO pt VALUES (7, 3, 'w'), (8, 3, 'v')",
        "TRUNCATE TABLE pt PARTITION (p = 3, q = 'w')", "SELECT * FROM pt ORDER BY a", "SHOW PARTITIONS pt",
        "TRUNCATE TABLE pt PARTITION (p = 3)", "SELECT * FROM pt ORDER BY a", "SHOW PARTITIONS pt",
        "TRUNCATE TABLE pt PARTITION (p = 42)", "ALTER TABLE pt RECOVER PARTITIONS",
        "MSCK REPAIR TABLE pt", "MSCK REPAIR TABLE pt SYNC PARTITIONS", "SHOW PARTITIONS pt",
        "ALTER TABLE pt ALTER COLUMN a COMMENT 'the a'", "DESCRIBE pt",
        "ALTER TABLE pt CHANGE COLUMN a COMMENT 'the a2'",
        "ALTER TABLE pt CHANGE COLUMN a a INT COMMENT 'the a3'", "DESCRIBE pt",
        "ALTER TABLE pt ALTER COLUMN a TYPE BIGINT", "ALTER TABLE pt ALTER COLUMN a TYPE INT",
        "ALTER TABLE pt ALTER COLUMN zz COMMENT 'x'", "ALTER TABLE pt ALTER COLUMN a SET NOT NULL",
        "ALTER TABLE pt ALTER COLUMN a SET DEFAULT 5", "ALTER TABLE pt ALTER COLUMN p COMMENT 'c'",
        "DESCRIBE pt", "ALTER TABLE pt ALTER COLUMN a DROP DEFAULT", "DESCRIBE pt",
        "CREATE TABLE np (a INT) USING parquet", "SHOW PARTITIONS np",
        "ALTER TABLE np RECOVER PARTITIONS", "MSCK REPAIR TABLE np",
        "ALTER TABLE np DROP PARTITION (a = 1)", "TRUNCATE TABLE np PARTITION (a = 1)",
        "SHOW PARTITIONS nosuch", "CREATE TEMPORARY VIEW tv AS SELECT 1 AS a",
        "SHOW PARTITIONS tv",
    ],
}


def _mask(rows: list[tuple], replacements: list[tuple[str, str]]) -> list[tuple]:
    out = []
    for r in rows:
        if len(r) >= 2 and r[0] in _MASKED_KEYS:
            r = (r[0], "<masked>") + tuple(r[2:])
        r = tuple(_replace(v, replacements) for v in r)
        out.append(r)
    return out


def _replace(v, replacements):
    if not isinstance(v, str):
        return v
    for old, new in replacements:
        v = v.replace(old, new)
    return v


def _spark_error(e: Exception) -> dict:
    text = str(e)
    cls = e.getCondition() if hasattr(e, "getCondition") else None
    msg = re.sub(r"^\[[A-Z_.]+\] ", "", text).split(" SQLSTATE:")[0]
    pos = re.search(r"; line (\d+) pos (\d+)", text)
    return {"class": cls, "message": msg, "position": pos and (int(pos[1]), int(pos[2]))}


def _ember_error(e: EmberError) -> dict:
    o = e.origin
    return {"class": e.error_class, "message": e.message,
            "position": o and o.line is not None and (o.line, o.start_position)}


def run_spark(spark, statements):
    out = []
    for q in statements:
        try:
            df = spark.sql(q)
            out.append(([f.name for f in df.schema.fields], [tuple(r) for r in df.collect()]))
        except Exception as e:  # noqa: BLE001 - every Spark error is an outcome
            out.append(_spark_error(e))
    return out


def run_ember(session, statements):
    out = []
    for q in statements:
        try:
            df = session.sql(q)
            out.append((df.columns, [tuple(r) for r in df.collect()]))
        except EmberError as e:
            out.append(_ember_error(e))
    return out


def _cleanup(spark):
    spark.sql("USE default")
    for db in spark.catalog.listDatabases():
        if db.name != "default":
            spark.sql(f"DROP DATABASE IF EXISTS `{db.name}` CASCADE")
    for t in spark.catalog.listTables():
        if t.isTemporary:
            spark.catalog.dropTempView(t.name)
        else:
            spark.sql(f"DROP {'VIEW' if t.tableType == 'VIEW' else 'TABLE'} IF EXISTS `{t.name}`")


@pytest.mark.parametrize("name", sorted(SCRIPTS))
def test_ddl_matches_spark(spark, name, tmp_path):
    statements = SCRIPTS[name]
    s = spark.newSession()
    _cleanup(s)  # tables another test may have left in the shared Spark catalog
    try:
        expected = run_spark(s, statements)
    finally:
        _cleanup(s)
    spark_wh = s.conf.get("spark.sql.warehouse.dir").rstrip("/")
    session = ember.Session({"spark.sql.warehouse.dir": str(tmp_path)})
    actual = run_ember(session, statements)
    for q, want, got in zip(statements, expected, actual):
        if isinstance(want, tuple) and isinstance(got, tuple):
            want = (want[0], _mask(want[1], [(spark_wh, "<wh>")]))
            got = (got[0], _mask(got[1], [("file:" + str(tmp_path), "<wh>")]))
        elif isinstance(want, dict) and isinstance(got, dict):
            if not want["position"]:
                got = {**got, "position": want["position"]}
        assert got == want, f"{name}: {q}"


CATALOG_SETUP = [
    "CREATE DATABASE d1 COMMENT 'db one'",
    "CREATE TABLE t (a INT COMMENT 'the a', b STRING, p INT) USING parquet PARTITIONED BY (p) "
    "COMMENT 'tbl comment'",
    "CREATE TABLE d1.u (z DECIMAL(5,2)) USING csv",
    "CREATE VIEW v AS SELECT a FROM t",
    "CREATE TEMPORARY VIEW tv AS SELECT 1 AS one",
]

CATALOG_CALLS = [
    ("currentDatabase", ()), ("currentCatalog", ()), ("listDatabases", ()),
    ("listDatabases", ("d*",)), ("getDatabase", ("d1",)), ("databaseExists", ("d1",)),
    ("databaseExists", ("nope",)), ("listTables", ()), ("listTables", ("d1",)),
    ("listTables", ("default", "t*")), ("listColumns", ("t",)), ("listColumns", ("u", "d1")),
    ("listColumns", ("tv",)), ("getTable", ("t",)), ("getTable", ("d1.u",)), ("getTable", ("v",)),
    ("getTable", ("tv",)), ("tableExists", ("t",)), ("tableExists", ("u", "d1")),
    ("tableExists", ("d1.u",)), ("tableExists", ("nope",)), ("tableExists", ("tv",)),
    ("setCurrentDatabase", ("d1",)), ("currentDatabase", ()), ("listTables", ()),
    ("setCurrentDatabase", ("default",)), ("dropTempView", ("tv",)), ("dropTempView", ("tv",)),
    ("getTable", ("nope",)), ("getDatabase", ("nope",)), ("setCurrentDatabase", ("nope",)),
    ("createTable", ("ct", None, "csv", "SCHEMA", "made by createTable")),
    ("getTable", ("ct",)), ("listColumns", ("ct",)), ("createTable", ("ct",)),
]


def _schema():
    """The ``schema`` argument of createTable: PySpark's StructType on both sides (Ember
    converts it)."""
    from pyspark.sql.types import IntegerType, StringType, StructField, StructType

    return StructType([StructField("k", IntegerType()), StructField("s", StringType(), False)])


def _call(catalog, name, args, replacements):
    args = tuple(_schema() if a == "SCHEMA" else a for a in args)
    try:
        out = getattr(catalog, name)(*args)
    except Exception as e:  # noqa: BLE001 - an error is an outcome: its class
        return ("error", getattr(e, "error_class", None) or e.getCondition())
    if isinstance(out, list):
        return [_replace(repr(tuple(x)), replacements) for x in out]
    if isinstance(out, tuple):
        return _replace(repr(tuple(out)), replacements)
    if hasattr(out, "columns"):  # createTable's DataFrame
        return out.columns
    return out


def test_spark_catalog_api_matches_pyspark(spark, tmp_path):
    s = spark.newSession()
    _cleanup(s)
    spark_wh = s.conf.get("spark.sql.warehouse.dir").rstrip("/")
    try:
        run_spark(s, CATALOG_SETUP)
        expected = [_call(s.catalog, n, a, [(spark_wh, "<wh>")]) for n, a in CATALOG_CALLS]
    finally:
        _cleanup(s)
    session = ember.Session({"spark.sql.warehouse.dir": str(tmp_path)})
    run_ember(session, CATALOG_SETUP)
    actual = [_call(session.catalog, n, a, [("file:" + str(tmp_path), "<wh>")])
              for n, a in CATALOG_CALLS]
    for (n, a), want, got in zip(CATALOG_CALLS, expected, actual):
        assert got == want, f"catalog.{n}{a}"
