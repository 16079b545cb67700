"""``df.write`` to paths, checked against PySpark 4.3: Ember writes, Spark reads (and the reverse),
for each format, partitioned and not, each save mode, on both runtimes; the file layout and the
EXPLAIN text of the write command as Spark's."""

from __future__ import annotations

import os
import re

import pytest

from ember.errors import AnalysisError
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


@pytest.mark.parametrize("runtime", RUNTIMES)
def test_save_modes_against_spark(spark, tmp_path, runtime):
    """error / ignore / append / overwrite on an existing path: the rows Spark reads after each
    equal those after the same sequence of PySpark writes."""
    session = new_session(runtime=runtime)
    ours, theirs = str(tmp_path / "ember"), str(tmp_path / "spark")
    first = "SELECT id AS a FROM range(3)"
    second = "SELECT id + 10 AS a FROM range(2)"
    session.sql(first).write.parquet(ours)
    spark.sql(first).write.parquet(theirs)
    with pytest.raises(AnalysisError) as err:
        session.sql(second).write.parquet(ours)
    assert err.value.error_class == "PATH_ALREADY_EXISTS"
    with pytest.raises(Exception, match="PATH_ALREADY_EXISTS"):
        spark.sql(second).write.parquet(theirs)
    for mode in ("ignore", "append", "overwrite", "append"):
        session.sql(second).write.mode(mode).parquet(ours)
        spark.sql(second).write.mode(mode).parquet(theirs)
        assert _rows(spark.read.parquet(ours)) == _rows(spark.read.parquet(theirs)), mode


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
