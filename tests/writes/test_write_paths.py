"""``df.write`` to paths, checked against PySpark 4.3: Ember writes, Spark reads (and the reverse),
for each format, partitioned and not, each save mode, on both runtimes; the file layout and the
EXPLAIN text of the write command as Spark's."""

from __future__ import annotations

import os
import re

import pytest

from ember.errors import AnalysisError, UnsupportedError
from ember.query_execution import QueryExecution
from ember.writers import path_write_command
from tests.conformance.ember_adapter import RUNTIMES, new_session

QUERY = ("SELECT id AS a, CAST(id * 1.5 AS DOUBLE) AS d, CONCAT('s', CAST(id AS STRING)) AS s, "
         "CAST(id % 3 AS INT) AS p, CAST(id % 2 = 0 AS BOOLEAN) AS b FROM range(7)")
#: the schema Spark reads CSV and JSON back with (those formats do not store types)
SCHEMA = "a BIGINT, d DOUBLE, s STRING, p INT, b BOOLEAN"
FORMATS = ("parquet", "csv", "json")


def _rows(frame) -> list[tuple]:
    return sorted(tuple(r) for r in frame.collect())


def _spark_read(spark, fmt: str, path: str, partitioned: bool = False):
    reader = spark.read.format(fmt)
    if fmt != "parquet":
        reader = reader.schema(SCHEMA if not partitioned else
                               "a BIGINT, d DOUBLE, s STRING, b BOOLEAN, p INT")
    if fmt == "csv":
        reader = reader.option("header", "true")
    return reader.load(path).select("a", "d", "s", "p", "b")


def _listing(path: str) -> list[str]:
    """The directory's entries but hidden ones (Hadoop's ``.crc`` checksums)."""
    return sorted(x for x in os.listdir(path) if not x.startswith("."))


def _data_files(path: str) -> list[str]:
    out = []
    for root, dirs, files in os.walk(path):
        dirs[:] = [d for d in dirs if not d.startswith((".", "_"))]
        out += [os.path.relpath(os.path.join(root, f), path) for f in files
                if not f.startswith((".", "_"))]
    return sorted(out)


@pytest.mark.parametrize("runtime", RUNTIMES)
@pytest.mark.parametrize("fmt", FORMATS)
@pytest.mark.parametrize("partitioned", [False, True], ids=["flat", "partitioned"])
def test_ember_writes_spark_reads(spark, tmp_path, runtime, fmt, partitioned):
    session = new_session(runtime=runtime)
    path = str(tmp_path / "out")
    writer = session.sql(QUERY).write.format(fmt).option("header", True)
    if partitioned:
        writer = writer.partitionBy("p")
    writer.save(path)
    expected = _rows(spark.sql(QUERY))
    assert _rows(_spark_read(spark, fmt, path, partitioned)) == expected
    assert os.path.exists(os.path.join(path, "_SUCCESS"))
    ext = {"parquet": r"\.snappy\.parquet", "csv": r"\.csv", "json": r"\.json"}[fmt]
    sep = r"\." if partitioned else "-"
    pattern = (r"(p=\d/)?part-\d{5}-[0-9a-f-]{36}" + sep + r"c000" + ext)
    files = _data_files(path)
    assert files and all(re.fullmatch(pattern, f) for f in files), files
    if partitioned:
        assert {f.split("/")[0] for f in files} == {"p=0", "p=1", "p=2"}


@pytest.mark.parametrize("runtime,fmt", [("local", "parquet"), ("spark", "parquet"),
                                         ("local", "csv"), ("spark", "json")])
def test_save_modes_against_spark(spark, tmp_path, runtime, fmt):
    """error / ignore / append / overwrite on an existing path: the rows Spark reads after each
    equal those after the same sequence of PySpark writes."""
    session = new_session(runtime=runtime)
    ours, theirs = str(tmp_path / "ember"), str(tmp_path / "spark")
    first = "SELECT id AS a FROM range(3)"
    second = "SELECT id + 10 AS a FROM range(2)"
    session.sql(first).write.format(fmt).save(ours)
    spark.sql(first).write.format(fmt).save(theirs)
    with pytest.raises(AnalysisError) as err:
        session.sql(second).write.format(fmt).save(ours)
    assert err.value.error_class == "PATH_ALREADY_EXISTS"
    with pytest.raises(Exception, match="PATH_ALREADY_EXISTS"):
        spark.sql(second).write.format(fmt).save(theirs)

    def read(path):
        return _rows(spark.read.format(fmt).schema("a BIGINT").load(path))

    for mode in ("ignore", "append", "overwrite", "append"):
        session.sql(second).write.mode(mode).format(fmt).save(ours)
        spark.sql(second).write.mode(mode).format(fmt).save(theirs)
        assert read(ours) == read(theirs), mode


def test_explain_matches_spark(spark, tmp_path):
    """The physical plan text of a write as Spark 4.3 prints it (Spark's plan from its SQL
    execution data, ``spark.sql.ui.explainMode=extended``)."""
    session = new_session()
    path = str(tmp_path / "x")
    for fmt, mode, options, parts in (("parquet", "error", {}, []),
                                      ("csv", "overwrite", {"compression": "gzip"}, ["p"])):
        cmd = path_write_command(session.sql(QUERY), path, fmt, mode, options, parts)
        ours = QueryExecution(session, cmd).explain_string("simple").splitlines()
        spark.conf.set("spark.sql.ui.explainMode", "extended")
        try:
            writer = spark.sql(QUERY).write.format(fmt).mode(mode).options(**options)
            if parts:
                writer = writer.partitionBy(*parts)
            writer.save(path)
            executions = spark._jsparkSession.sharedState().statusStore().executionsList()
            text = executions.apply(executions.size() - 1).physicalPlanDescription()
        finally:
            spark.conf.unset("spark.sql.ui.explainMode")
        theirs = text.split("== Physical Plan ==\n")[1].splitlines()
        # the command and WriteFiles lines are equal up to expression ids
        norm = lambda line: re.sub(r"#\d+L?", "#", line)  # noqa: E731
        assert [norm(x) for x in ours[1:3]] == [norm(x) for x in theirs[:2]]
        if parts:
            assert norm(ours[3]).strip() == norm(theirs[2]).replace("*(1) ", "").strip()


def _error_class(fn) -> str | None:
    try:
        fn()
    except Exception as e:  # noqa: BLE001 - either side's error
        cls = getattr(e, "error_class", None)
        if cls is None and hasattr(e, "getCondition"):
            cls = e.getCondition()
        if cls is None:
            m = re.search(r"\[([A-Z_0-9.]+)\]", str(e))
            cls = m.group(1) if m else type(e).__name__
        return cls
    return None


ERRORS = {
    "invalid mode": lambda s, p: s.sql("SELECT 1 AS a").write.mode("bogus"),
    "partition column not found": lambda s, p: s.sql("SELECT 1 AS a, 2 AS b").write.partitionBy(
        "zz").parquet(p),
    "all columns partitioned": lambda s, p: s.sql("SELECT 1 AS a").write.partitionBy(
        "a").parquet(p),
    "duplicate partition column": lambda s, p: s.sql("SELECT 1 AS a, 2 AS b").write.partitionBy(
        "a", "A").parquet(p),
    "array partition column": lambda s, p: s.sql("SELECT 1 AS a, array(1) AS q").write.partitionBy(
        "q").parquet(p),
    "csv void": lambda s, p: s.sql("SELECT 1 AS a, NULL AS n").write.csv(p),
    "csv array": lambda s, p: s.sql("SELECT 1 AS a, array(1) AS arr").write.csv(p),
    "text int": lambda s, p: s.sql("SELECT 1 AS a").write.text(p),
    "text two columns": lambda s, p: s.sql("SELECT 'a' AS x, 'b' AS y").write.text(p),
    "unknown codec": lambda s, p: s.sql("SELECT 1 AS a").write.option(
        "compression", "foo").parquet(p),
    "unknown json codec": lambda s, p: s.sql("SELECT 1 AS a").write.option(
        "compression", "foo").json(p),
    "no path": lambda s, p: s.sql("SELECT 1 AS a").write.save(),
    "unknown format": lambda s, p: s.sql("SELECT 1 AS a").write.format("nosuch").save(p),
}


@pytest.mark.parametrize("case", list(ERRORS))
def test_errors_match_spark(spark, tmp_path, case):
    theirs = _error_class(lambda: ERRORS[case](spark, str(tmp_path / "spark")))
    ours = _error_class(lambda: ERRORS[case](new_session(), str(tmp_path / "ember")))
    assert theirs is not None
    assert ours == theirs
    assert not os.path.exists(tmp_path / "ember")


@pytest.mark.parametrize("runtime", RUNTIMES)
@pytest.mark.parametrize("overwrite_mode", ["STATIC", "DYNAMIC"])
def test_partition_overwrite_modes(spark, tmp_path, runtime, overwrite_mode):
    """An overwrite of a partitioned directory replaces every partition (STATIC) or only the
    partitions written (DYNAMIC, by conf or by the writer option), as Spark's."""
    session = new_session({"spark.sql.sources.partitionOverwriteMode": overwrite_mode},
                          runtime=runtime)
    ours, theirs = str(tmp_path / "ember"), str(tmp_path / "spark")
    first = "SELECT id AS a, CAST(id % 3 AS INT) AS p FROM range(9)"
    second = "SELECT id + 100 AS a, 1 AS p FROM range(2)"
    session.sql(first).write.partitionBy("p").parquet(ours)
    spark.sql(first).write.partitionBy("p").parquet(theirs)
    session.sql(second).write.mode("overwrite").partitionBy("p").parquet(ours)
    spark.conf.set("spark.sql.sources.partitionOverwriteMode", overwrite_mode)
    try:
        spark.sql(second).write.mode("overwrite").partitionBy("p").parquet(theirs)
    finally:
        spark.conf.unset("spark.sql.sources.partitionOverwriteMode")
    assert _rows(spark.read.parquet(ours)) == _rows(spark.read.parquet(theirs))
    assert _listing(ours) == _listing(theirs)
    # the writer option wins over the conf
    option = "DYNAMIC" if overwrite_mode == "STATIC" else "STATIC"
    session.sql(second).write.mode("overwrite").option("partitionOverwriteMode", option
                                                        ).partitionBy("p").parquet(ours)
    spark.sql(second).write.mode("overwrite").option("partitionOverwriteMode", option
                                                      ).partitionBy("p").parquet(theirs)
    assert _rows(spark.read.parquet(ours)) == _rows(spark.read.parquet(theirs))


@pytest.mark.parametrize("runtime", RUNTIMES)
@pytest.mark.parametrize("fmt,partitioned", [("parquet", True), ("parquet", False),
                                             ("csv", False)])
def test_spark_writes_ember_reads(spark, tmp_path, runtime, fmt, partitioned):
    """Files PySpark writes read back in Ember as the same rows."""
    session = new_session(runtime=runtime)
    path = str(tmp_path / "t")
    writer = spark.sql(QUERY).write.format(fmt).option("header", True)
    (writer.partitionBy("p") if partitioned else writer).save(path)
    reader = session.read.format(fmt)
    if fmt == "csv":
        reader = reader.option("header", True).option("inferSchema", True)
    got = reader.load(path).select("a", "d", "s", "p", "b")
    assert _rows(got) == _rows(spark.sql(QUERY))


@pytest.mark.parametrize("runtime", RUNTIMES)
def test_round_trip_through_ember(spark, tmp_path, runtime):
    """Rows Ember writes (partitioned, NULL and escaped partition values) Ember and Spark both
    read back as the rows written."""
    session = new_session(runtime=runtime)
    path = str(tmp_path / "r")
    query = ("SELECT * FROM VALUES (1, 'a b/c=d%'), (2, ''), (3, NULL), (4, 'x') "
             "AS t(id, part)")
    session.sql(query).write.partitionBy("part").parquet(path)
    assert _listing(path) == ["_SUCCESS", "part=__HIVE_DEFAULT_PARTITION__",
                              "part=a b%2Fc%3Dd%25", "part=x"]
    expected = [(1, "a b/c=d%"), (2, None), (3, None), (4, "x")]
    assert sorted(_rows(spark.read.parquet(path).select("id", "part"))) == expected
    assert sorted(_rows(session.read.parquet(path).select("id", "part"))) == expected


@pytest.mark.parametrize("runtime", RUNTIMES)
def test_static_partition_overwrite_command(spark, tmp_path, runtime):
    """The command with a static partition (``INSERT OVERWRITE ... PARTITION (p=1)``, which SQL
    inserts build) replaces only that partition's files, as Spark's insert into a table over
    the same layout does."""
    from ember.plans.logical.writes import InsertIntoHadoopFsRelationCommand, SaveMode

    session = new_session(runtime=runtime)
    ours, theirs = str(tmp_path / "ember"), str(tmp_path / "spark")
    first = "SELECT id AS a, CAST(id % 3 AS INT) AS p FROM range(9)"
    session.sql(first).write.partitionBy("p").parquet(ours)
    spark.sql(first).write.partitionBy("p").parquet(theirs)
    query = session.sql("SELECT id + 100 AS a, 1 AS p FROM range(2)")._qe.analyzed
    p = query.output[1]
    cmd = InsertIntoHadoopFsRelationCommand(
        ours, (("p", "1"),), False, (p,), "parquet", (("path", ours),), query,
        SaveMode.OVERWRITE, None, ("a", "p"))
    outcome = QueryExecution(session, cmd).execute_write()
    assert outcome.num_rows == 2
    # IF NOT EXISTS: the partition exists, nothing is written
    again = cmd.copy(if_partition_not_exists=True, query=session.sql(
        "SELECT id + 200 AS a, 1 AS p FROM range(2)")._qe.analyzed)
    assert QueryExecution(session, again).execute_write() is None
    spark.sql("CREATE TABLE w_static (a BIGINT, p INT) USING parquet PARTITIONED BY (p) "
              f"LOCATION '{theirs}'")
    try:
        spark.sql("ALTER TABLE w_static RECOVER PARTITIONS")
        spark.sql("INSERT OVERWRITE w_static PARTITION (p=1) SELECT id + 100 FROM range(2)")
        spark.sql("INSERT OVERWRITE w_static PARTITION (p=1) IF NOT EXISTS "
                  "SELECT id + 200 FROM range(2)")
    finally:
        spark.sql("DROP TABLE w_static")
    assert _rows(spark.read.parquet(ours)) == _rows(spark.read.parquet(theirs))


@pytest.mark.parametrize("runtime", RUNTIMES)
def test_file_uris_are_local_paths(spark, tmp_path, runtime):
    """A ``file:`` URI names the local directory (written with Ember's commit on both
    runtimes); the local runtime refuses other schemes."""
    session = new_session(runtime=runtime)
    path = tmp_path / "u"
    session.sql("SELECT id AS a FROM range(3)").write.parquet("file://" + str(path))
    session.sql("SELECT id AS a FROM range(2)").write.mode("append").parquet("file:" + str(path))
    assert _rows(spark.read.parquet(str(path))) == [(0,), (0,), (1,), (1,), (2,)]
    with pytest.raises(AnalysisError, match="PATH_ALREADY_EXISTS"):
        session.sql("SELECT id AS a FROM range(2)").write.parquet("file://" + str(path))
    if runtime == "local":
        with pytest.raises(UnsupportedError, match="hdfs://"):
            session.sql("SELECT 1 AS a").write.parquet("hdfs://nowhere/x")


def test_table_write_explain_matches_spark(spark, tmp_path):
    """With a catalog table (as INSERT builds it), the command line names the table and its
    file index as Spark's ``EXPLAIN INSERT`` does."""
    from types import SimpleNamespace

    from ember.plans.logical.writes import InsertIntoHadoopFsRelationCommand, SaveMode

    session = new_session()
    for name, parts in (("w_plain", ()), ("w_parted", ("p",))):
        location = str(tmp_path / name)
        spark.sql(f"CREATE TABLE {name} (a INT, p INT) USING csv OPTIONS (header 'true') "
                  + ("PARTITIONED BY (p) " if parts else "") + f"LOCATION '{location}'")
        try:
            text = spark.sql(f"EXPLAIN INSERT INTO {name} SELECT 1, 2").collect()[0][0]
        finally:
            spark.sql(f"DROP TABLE {name}")
        theirs = next(ln for ln in text.splitlines() if ln.startswith("Execute"))
        query = session.sql("SELECT 1 AS a, 2 AS p")._qe.analyzed
        table = SimpleNamespace(database="default", name=name, location=location,
                                partition_columns=parts)
        cmd = InsertIntoHadoopFsRelationCommand(
            location, (), False, tuple(a for a in query.output if a.name in parts), "csv",
            (("header", "true"), ("path", "file:" + location)), query, SaveMode.APPEND, table,
            ("a", "p"))
        ours = QueryExecution(session, cmd).explain_string().splitlines()[1]
        assert re.sub(r"#\d+L?", "#", ours) == re.sub(r"#\d+L?", "#", theirs)


def test_spark_runtime_explain_names_the_writer(spark, tmp_path):
    """On the Spark runtime, EXPLAIN's stages end in Spark's file writer (not a collect)."""
    session = new_session(runtime="spark")
    cmd = path_write_command(session.sql(QUERY), str(tmp_path / "x"), "parquet", "error", {},
                             ["p"])
    text = QueryExecution(session, cmd).explain_string()
    stages = text.split("== Spark Stages ==\n")[1]
    assert stages.startswith("Job 0 (write files)")
    assert stages.rstrip().endswith("-> Spark's file writer")
    assert "collect" not in stages
