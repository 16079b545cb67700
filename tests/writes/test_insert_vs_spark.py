"""INSERT, CREATE TABLE AS SELECT and the DataFrame table writers against PySpark, on both runtimes.

Each scenario is a list of statements run in order on Spark SQL (a fresh ``newSession`` of the
oracle, tables dropped before and after) and on Ember (a fresh session over its own warehouse);
every statement's outcome (rows, or error class) must be Spark's.  The file tests then cross the
engines: Spark reads the files of a table Ember wrote, and Ember reads and appends to a table
Spark wrote.
"""

from __future__ import annotations

import os
from typing import Any

import pyarrow as pa
import pytest

from tests.conformance.ember_adapter import RUNTIMES, check_outcome, new_session, run_sql
from tests.conformance.generate import run_statement
from tests.conformance.normalize import normalize_table, sorted_rows

SCENARIOS: dict[str, tuple[str, ...]] = {
    "by_position_and_name": (
        "CREATE TABLE ins1 (a INT, b STRING, c DOUBLE) USING parquet",
        "INSERT INTO ins1 VALUES (1, 'x', 1.5)",
        "INSERT INTO TABLE ins1 SELECT 2, 2, 2",
        "INSERT INTO ins1 SELECT 1.5, 'y', 3L",
        "INSERT INTO ins1 BY NAME SELECT 4.5 AS c, 'z' AS b, 4 AS a",
        "INSERT INTO ins1 BY NAME SELECT 5 AS c, 'w' AS b",
        "INSERT INTO ins1 (c, a) VALUES (6.5, 6)",
        "INSERT INTO ins1 (A, b, c) SELECT 7, 'v', 7",
        "INSERT INTO ins1 VALUES (CAST(NULL AS INT), NULL, NULL)",
        "INSERT INTO ins1 SELECT id, CAST(id AS STRING), id / 2 FROM range(3)",
        "SELECT * FROM ins1",
        "INSERT INTO ins1 VALUES (1, 'x')",
        "INSERT INTO ins1 VALUES (1, 'x', 2.0, 4)",
        "INSERT INTO ins1 (a, z) VALUES (1, 2.0)",
        "INSERT INTO ins1 (a, a, c) VALUES (1, 1, 2.0)",
        "INSERT INTO ins1 VALUES ('abc', 'x', 1.0)",
        "INSERT INTO ins1 VALUES (true, 'x', 1.0)",
        "INSERT INTO ins1 SELECT 1, 'x', CAST('2020-01-01' AS TIMESTAMP)",
        "INSERT INTO ins1 BY NAME SELECT 1 AS c, 'y' AS b, 2 AS zz",
        "INSERT INTO ins1 BY NAME SELECT 1 AS a, 'y' AS b, 2 AS A",
        "INSERT INTO ins1 VALUES (3000000000, 'x', 1.0)",
        "INSERT INTO ins1 SELECT 1e20, 'x', 2",
        "INSERT INTO ins1 SELECT CAST(1e20 AS DECIMAL(30, 0)), 'x', 2",
        "INSERT INTO nosuch VALUES (1)",
        "INSERT OVERWRITE TABLE ins1 SELECT 8, 'o', 8.0",
        "SELECT * FROM ins1",
        "INSERT OVERWRITE TABLE ins1 SELECT * FROM ins1",
        "DROP TABLE ins1",
    ),
    "policies": (
        "CREATE TABLE ins2 (a INT, b STRING, c DOUBLE) USING parquet",
        "SET spark.sql.storeAssignmentPolicy=STRICT",
        "INSERT INTO ins2 SELECT 1L, 'x', 2.0",
        "INSERT INTO ins2 SELECT null, 'x', 2.0",
        "INSERT INTO ins2 SELECT 1, 'x', 2",
        "INSERT INTO ins2 SELECT 2, 'y', 2.0f",
        "SET spark.sql.storeAssignmentPolicy=LEGACY",
        "INSERT INTO ins2 VALUES ('abc', 'x', 1.0)",
        "INSERT INTO ins2 VALUES (3000000000, 'x', 1.0)",
        "INSERT INTO ins2 SELECT 5, true, '3.5'",
        "SELECT * FROM ins2",
        "DROP TABLE ins2",
    ),
    "partitions": (
        "CREATE TABLE ins3 (a INT, p INT, q STRING) USING parquet PARTITIONED BY (p, q)",
        "INSERT INTO ins3 PARTITION (p = 1, q = 'x') VALUES (1)",
        "INSERT INTO ins3 PARTITION (p = '5', q) SELECT 2, 'x'",
        "INSERT INTO ins3 PARTITION (P = 6, Q) SELECT 3, 'y'",
        "INSERT INTO ins3 PARTITION (p, q) VALUES (4, 7, 'z'), (5, 7, NULL)",
        "INSERT INTO ins3 VALUES (6, 8, 'w')",
        "INSERT INTO ins3 (a, q, p) VALUES (7, 'z', 8)",
        "INSERT INTO ins3 PARTITION (p = 9, q = 'k') (a) VALUES (8)",
        "INSERT INTO ins3 PARTITION (p = 9, q = 'k') BY NAME SELECT 9 AS a",
        "SELECT * FROM ins3",
        "INSERT INTO ins3 PARTITION (p = 1) SELECT 1, 'x'",
        "INSERT INTO ins3 PARTITION (p, q = 'x') SELECT 1, 2",
        "INSERT INTO ins3 PARTITION (p = 1, z) SELECT 1, 2",
        "INSERT INTO ins3 PARTITION (p = 1, q) SELECT 1, 2, 3",
        "INSERT INTO ins3 PARTITION (p = 'abc', q) SELECT 1, 'x'",
        "INSERT OVERWRITE TABLE ins3 PARTITION (p = 9, q = 'k') VALUES (10)",
        "SELECT * FROM ins3",
        "INSERT OVERWRITE TABLE ins3 PARTITION (p = 7, q) VALUES (11, 'z')",
        "SELECT * FROM ins3",
        "INSERT OVERWRITE TABLE ins3 PARTITION (p = 9, q = 'k') IF NOT EXISTS VALUES (12)",
        "INSERT OVERWRITE TABLE ins3 PARTITION (p = 99, q = 'k') IF NOT EXISTS VALUES (13)",
        "SELECT * FROM ins3",
        "SET spark.sql.sources.partitionOverwriteMode=dynamic",
        "INSERT OVERWRITE TABLE ins3 PARTITION (p, q) VALUES (14, 1, 'x'), (15, 2, 'n')",
        "SELECT * FROM ins3",
        "SET spark.sql.sources.partitionOverwriteMode=static",
        "INSERT OVERWRITE TABLE ins3 PARTITION (p = 1, q) VALUES (16, 'new')",
        "SELECT * FROM ins3",
        "INSERT OVERWRITE TABLE ins3 VALUES (17, 1, 'all')",
        "SELECT * FROM ins3",
        "DROP TABLE ins3",
    ),
    "ctas": (
        "CREATE TABLE ins4 USING parquet AS SELECT 1 AS a, 'x' AS b",
        "SELECT * FROM ins4",
        "CREATE TABLE ins4 USING parquet AS SELECT 2 AS a",
        "CREATE TABLE IF NOT EXISTS ins4 USING parquet AS SELECT 2 AS a",
        "SELECT * FROM ins4",
        "CREATE TABLE ins5 USING parquet PARTITIONED BY (p) AS "
        "SELECT id AS a, id % 2 AS p, CAST(id AS STRING) AS s FROM range(5)",
        "SELECT * FROM ins5",
        "DESCRIBE ins5",
        "INSERT INTO ins5 SELECT 10, 'ten', 0",
        "SELECT * FROM ins5 WHERE p = 0",
        "CREATE TABLE ins6 USING parquet AS SELECT CAST('x' AS INT) AS a",
        "SELECT * FROM ins6",
        "CREATE TABLE ins7 (a INT) USING parquet AS SELECT 1 AS a",
        "CREATE TABLE ins8 USING parquet AS SELECT 1 AS a, 2 AS a",
        "CREATE TABLE ins9 USING parquet PARTITIONED BY (a) AS SELECT 1 AS a",
        "CREATE TABLE ins9 USING parquet PARTITIONED BY (z) AS SELECT 1 AS a",
        "CREATE OR REPLACE TABLE ins4 USING parquet AS SELECT 3 AS a",
        "REPLACE TABLE ins4 USING parquet AS SELECT 3 AS a",
        "REPLACE TABLE ins_nosuch USING parquet AS SELECT 3 AS a",
        "CREATE TABLE ins10 USING csv OPTIONS (header 'true') AS SELECT 1 AS a, 'x,y' AS b",
        "INSERT INTO ins10 VALUES (2, NULL)",
        "SELECT * FROM ins10",
        "CREATE TABLE ins11 USING parquet PARTITIONED BY (d) AS "
        "SELECT 1 AS a, 7 AS d, DATE'2024-01-02' AS x",
        "INSERT INTO ins11 PARTITION (d = '8') SELECT 2, DATE'2024-02-03'",
        "SELECT * FROM ins11",
        "DROP TABLE ins4",
        "DROP TABLE ins5",
        "DROP TABLE ins10",
        "DROP TABLE ins11",
    ),
    "null_partitions": (
        "CREATE TABLE ins13 (a INT, p INT, q STRING) USING parquet PARTITIONED BY (p, q)",
        "INSERT INTO ins13 PARTITION (p = NULL, q = 'x') VALUES (1)",
        "INSERT INTO ins13 PARTITION (p = 1, q = NULL) VALUES (2)",
        "INSERT INTO ins13 PARTITION (p = null, q) SELECT 3, 'y' UNION ALL SELECT 4, NULL",
        "SELECT * FROM ins13",
        "SELECT * FROM ins13 WHERE p IS NULL",
        "INSERT OVERWRITE TABLE ins13 PARTITION (p = NULL, q = 'x') VALUES (5)",
        "INSERT OVERWRITE TABLE ins13 PARTITION (p = NULL, q = 'x') IF NOT EXISTS VALUES (6)",
        "SELECT * FROM ins13",
        "INSERT INTO ins13 PARTITION (p = NULL, q = '') VALUES (7)",
        "DROP TABLE ins13",
    ),
    "nested_by_name": (
        "CREATE TABLE ins14 (a INT, s STRUCT<x: INT, y: STRING>, "
        "arr ARRAY<STRUCT<u: INT, v: BIGINT>>) USING parquet",
        "INSERT INTO ins14 BY NAME SELECT named_struct('y', 'b', 'x', 1) AS s, 2 AS a, "
        "array(named_struct('v', 1, 'u', 2), NULL, named_struct('v', 3, 'u', NULL)) AS arr",
        "INSERT INTO ins14 BY NAME SELECT named_struct('Y', 7, 'X', 1L) AS s, 3 AS a, "
        "array(named_struct('v', 5, 'u', CAST(NULL AS INT))) AS arr",
        "INSERT INTO ins14 BY NAME SELECT IF(id = 0, NULL, named_struct('y', 'n', 'x', id)) AS s, "
        "id AS a, array(named_struct('v', id, 'u', 0)) AS arr FROM range(2)",
        "SELECT * FROM ins14",
        "INSERT INTO ins14 BY NAME SELECT named_struct('y', 'b') AS s, 3 AS a, NULL AS arr",
        "INSERT INTO ins14 BY NAME SELECT named_struct('y', 'b', 'x', 1, 'z', 3) AS s, 3 AS a",
        "INSERT INTO ins14 BY NAME SELECT named_struct('y', 'b', 'z', 1) AS s, 3 AS a",
        "INSERT INTO ins14 BY NAME SELECT named_struct('x', 'b', 'y', 1) AS s, 4 AS a",
        "INSERT INTO ins14 BY NAME SELECT named_struct('y', 1, 'x', 'abc') AS s, 4 AS a",
        "INSERT INTO ins14 BY NAME SELECT array(named_struct('v', 1, 'w', 2)) AS arr",
        "INSERT INTO ins14 BY NAME SELECT named_struct('x', 1, 'X', 2, 'y', 'q') AS s",
        "INSERT INTO ins14 SELECT 5, named_struct('y', 'b', 'x', 1), NULL",
        "INSERT INTO ins14 (s, a, arr) SELECT named_struct('y', 'c', 'x', 6), 6, NULL",
        "SELECT * FROM ins14",
        "DROP TABLE ins14",
    ),
    "views": (
        "CREATE TEMPORARY VIEW ins_tv AS SELECT 1 AS a",
        "INSERT INTO ins_tv SELECT 1",
        "CREATE TABLE ins12 (a INT) USING parquet",
        "CREATE VIEW ins_pv AS SELECT * FROM ins12",
        "INSERT INTO ins_pv SELECT 1",
        "DROP VIEW ins_pv",
        "DROP TABLE ins12",
    ),
}

TABLES = ("ins1", "ins2", "ins3", "ins4", "ins5", "ins6", "ins7", "ins8", "ins9", "ins10",
          "ins11", "ins12", "ins13", "ins14")


def _spark_outcomes(spark: Any, statements: tuple[str, ...]) -> list[dict[str, Any]]:
    session = spark.newSession()
    session.sql("DROP VIEW IF EXISTS ins_pv")
    for t in TABLES:
        session.sql(f"DROP TABLE IF EXISTS {t}")
    try:
        return [run_statement(session, s) for s in statements]
    finally:
        session.sql("DROP VIEW IF EXISTS ins_pv")
        for t in TABLES:
            session.sql(f"DROP TABLE IF EXISTS {t}")


_expected: dict[str, list[dict[str, Any]]] = {}

#: The scenarios run on the Spark runtime by default (each INSERT there is a Spark job); all
#: of them with ``EMBER_WRITES_ALL=1``.
SPARK_RUNTIME_SCENARIOS = ("partitions", "views", "nested_by_name")


def _runs() -> list[tuple[str, str]]:
    every = os.environ.get("EMBER_WRITES_ALL") == "1"
    return [(sc, rt) for sc in SCENARIOS for rt in RUNTIMES
            if rt == "local" or every or sc in SPARK_RUNTIME_SCENARIOS]


@pytest.mark.parametrize("scenario, runtime", _runs())
def test_scenario_as_in_spark(spark: Any, runtime: str, scenario: str) -> None:
    statements = SCENARIOS[scenario]
    if scenario not in _expected:
        _expected[scenario] = _spark_outcomes(spark, statements)
    session = new_session({}, runtime)
    problems = []
    for sql, expected in zip(statements, _expected[scenario]):
        problem = check_outcome(expected, run_sql(session, sql))
        if problem is not None:
            problems.append(f"{sql}\n  {problem}")
    assert not problems, "\n".join(problems)


def _rows(table: pa.Table) -> list[list[Any]]:
    return sorted_rows(normalize_table(table))


WRITES = (
    "CREATE TABLE {t} (a INT, s STRING, d DATE, p INT) USING {fmt} PARTITIONED BY (p)",
    "INSERT INTO {t} VALUES (1, 'x', DATE'2024-01-01', 1), (2, NULL, NULL, 2)",
    "INSERT INTO {t} PARTITION (p = 3) SELECT 3, 'z', DATE'2024-03-03'",
    "INSERT OVERWRITE TABLE {t} PARTITION (p = 2) SELECT 4, 'w', NULL",
    "INSERT INTO {t} PARTITION (p) SELECT 5, 'v,\"q\"', DATE'2024-05-05', 1",
)


@pytest.mark.parametrize("fmt", ["parquet", "csv", "json"])
@pytest.mark.parametrize("runtime", RUNTIMES)
def test_spark_reads_what_ember_wrote(spark: Any, runtime: str, fmt: str) -> None:
    """The same inserts on Ember and on Spark SQL; Spark's reader gives the same rows from both
    tables' directories (partition directories, file layout and encoding as Spark's)."""
    session = new_session({}, runtime)
    s = spark.newSession()
    name = f"ins_files_{fmt}"
    s.sql(f"DROP TABLE IF EXISTS {name}")
    try:
        for sql in WRITES:
            session.sql(sql.format(t="w", fmt=fmt))
            s.sql(sql.format(t=name, fmt=fmt))
        ours = session.session_catalog.get_table(("w",)).location
        theirs = s.sql(f"DESCRIBE EXTENDED {name}").where("col_name = 'Location'") \
            .collect()[0].data_type
        reader = spark.read.schema("a int, s string, d date, p int").format(fmt)
        got = reader.load(ours).select("a", "s", "d", "p").toArrow()
        want = reader.load(theirs).select("a", "s", "d", "p").toArrow()
        assert _rows(got) == _rows(want)
        assert len(got) == 4
    finally:
        s.sql(f"DROP TABLE IF EXISTS {name}")


@pytest.mark.parametrize("runtime", RUNTIMES)
def test_ember_reads_and_appends_to_what_spark_wrote(spark: Any, tmp_path: Any,
                                                      runtime: str) -> None:
    location = str(tmp_path / "spark_table")
    s = spark.newSession()
    s.sql("DROP TABLE IF EXISTS ins_spark_made")
    s.sql(f"CREATE TABLE ins_spark_made USING parquet LOCATION '{location}' "
          "AS SELECT id AS a, CAST(id AS STRING) AS b, id % 2 AS p FROM range(4)")
    try:
        session = new_session({}, runtime)
        session.sql(f"CREATE TABLE t USING parquet LOCATION '{location}'")
        assert _rows(session.sql("SELECT a, b, p FROM t").toArrow()) == \
            _rows(s.sql("SELECT a, b, p FROM ins_spark_made").toArrow())
        session.sql("INSERT INTO t VALUES (10, 'ten', 0)")
        s.sql("REFRESH TABLE ins_spark_made")
        theirs = s.sql("SELECT a, b, p FROM ins_spark_made").toArrow()
        assert _rows(theirs) == _rows(session.sql("SELECT a, b, p FROM t").toArrow())
        assert len(theirs) == 5
    finally:
        s.sql("DROP TABLE IF EXISTS ins_spark_made")


@pytest.mark.parametrize("runtime", RUNTIMES)
def test_save_as_table_modes(spark: Any, tmp_path: Any, runtime: str) -> None:
    """saveAsTable / insertInto / writeTo: each call's outcome and the rows after it, against
    the same calls on PySpark."""
    session = new_session({}, runtime)
    s = spark.newSession()
    for t in ("ins_s1", "ins_s2", "ins_w1"):
        s.sql(f"DROP TABLE IF EXISTS {t}")

    def frames(engine: Any) -> dict[str, Any]:
        return {"ab": engine.sql("SELECT 1 AS a, 'x' AS b"),
                "ba": engine.sql("SELECT 'y' AS b, 2 AS a"),
                "a": engine.sql("SELECT 3 AS a"),
                "bac": engine.sql("SELECT 'y' AS b, 2 AS a, 5 AS c"),
                "str": engine.sql("SELECT 'zz' AS a, 'q' AS b")}

    steps = [
        ("ab", lambda df: df.write.saveAsTable("ins_s1")),
        ("ab", lambda df: df.write.saveAsTable("ins_s1")),
        ("ba", lambda df: df.write.mode("append").saveAsTable("ins_s1")),
        ("a", lambda df: df.write.mode("append").saveAsTable("ins_s1")),
        ("str", lambda df: df.write.mode("append").saveAsTable("ins_s1")),
        ("bac", lambda df: df.write.mode("append").format("csv").saveAsTable("ins_s1")),
        ("a", lambda df: df.write.mode("ignore").saveAsTable("ins_s1")),
        ("ab", lambda df: df.write.insertInto("ins_s1")),
        ("ba", lambda df: df.write.insertInto("ins_s1")),
        ("ab", lambda df: df.write.insertInto("ins_s1", overwrite=True)),
        ("ab", lambda df: df.write.partitionBy("a").insertInto("ins_s1")),
        ("bac", lambda df: df.write.mode("overwrite").saveAsTable("ins_s1")),
        ("bac", lambda df: df.write.partitionBy("a").saveAsTable("ins_s2")),
        ("bac", lambda df: df.write.mode("append").partitionBy("b").saveAsTable("ins_s2")),
        ("bac", lambda df: df.write.mode("append").saveAsTable("ins_s2")),
        ("bac", lambda df: df.write.mode("append").partitionBy("a").saveAsTable("ins_s2")),
        ("ab", lambda df: df.writeTo("ins_w1").using("parquet").partitionedBy("b").create()),
        ("ab", lambda df: df.writeTo("ins_w1").create()),
        ("ab", lambda df: df.writeTo("ins_w1").append()),
        ("ab", lambda df: df.writeTo("ins_w9").append()),
        ("ab", lambda df: df.writeTo("ins_w1").createOrReplace()),
    ]
    ours, theirs = frames(session), frames(s)
    try:
        for i, (frame, call) in enumerate(steps):
            expected = _call(call, theirs[frame])
            actual = _call(call, ours[frame])
            assert actual == expected, f"step {i}: Ember {actual}, Spark {expected}"
            for t in ("ins_s1", "ins_s2", "ins_w1"):
                want = run_statement(s, f"SELECT * FROM {t}")
                got = run_sql(session, f"SELECT * FROM {t}")
                problem = check_outcome(want, got)
                assert problem is None, f"step {i}, {t}: {problem}"
    finally:
        for t in ("ins_s1", "ins_s2", "ins_w1"):
            s.sql(f"DROP TABLE IF EXISTS {t}")


def _call(call: Any, df: Any) -> str | None:
    """None, or the error class the call raised."""
    try:
        call(df)
    except Exception as e:  # noqa: BLE001 - both engines' errors, compared by class
        cond = getattr(e, "getCondition", None)
        return cond() if cond is not None else getattr(e, "error_class", type(e).__name__)
    return None


@pytest.mark.parametrize("runtime", [rt for rt in RUNTIMES if rt == "local"
                                     or os.environ.get("EMBER_WRITES_ALL") == "1"])
def test_failed_ctas_leaves_no_table(runtime: str, tmp_path: Any) -> None:
    """A CREATE TABLE AS SELECT (or saveAsTable) whose query fails leaves neither metadata nor
    files: managed, and external at a new LOCATION (on the Spark runtime, whose failing tasks
    take a minute, with ``EMBER_WRITES_ALL=1``)."""
    session = new_session({}, runtime)
    warehouse = session.session_catalog.warehouse
    external = str(tmp_path / "ext")
    statements = [
        "CREATE TABLE bad1 USING parquet PARTITIONED BY (p) AS "
        "SELECT id AS a, id % 2 AS p, CAST(IF(id = 3, 'x', '1') AS INT) AS c FROM range(5)",
        f"CREATE TABLE bad2 USING csv LOCATION '{external}' AS SELECT 1 / 0 AS a",
    ]
    for sql in statements:
        outcome = run_sql(session, sql)
        assert outcome.error_class in ("CAST_INVALID_INPUT", "DIVIDE_BY_ZERO"), sql
    df = session.sql("SELECT CAST('y' AS INT) AS a")
    with pytest.raises(Exception):
        df.write.saveAsTable("bad3")
    for name in ("bad1", "bad2", "bad3"):
        assert session.session_catalog.get_table((name,)) is None
        assert not os.path.exists(os.path.join(warehouse, name))
    assert not os.path.exists(external)
    # the names are free again
    session.sql("CREATE TABLE bad1 USING parquet AS SELECT 1 AS a")
    assert session.sql("SELECT * FROM bad1").collect()[0].a == 1
