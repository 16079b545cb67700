"""The bytes Ember writes equal the bytes PySpark 4.3 writes: CSV and JSON value formatting
(timestamps with their zone offset, decimals, doubles, booleans, NULLs, quoting and escaping),
the options users set, compression codecs and file names, maxRecordsPerFile; one output file
each (Spark's input coalesced to one partition, Ember's query a single local partition)."""

from __future__ import annotations

import gzip
import os

import pytest

from tests.conformance.ember_adapter import new_session

VALUES = r"""SELECT * FROM VALUES
 (1, 'plain', 1.5D, CAST(2.50 AS DECIMAL(10,2)), true, TIMESTAMP'2020-01-02 03:04:05.123456',
  DATE'2020-01-02', CAST(1.0E10 AS DOUBLE), CAST(NULL AS STRING)),
 (2, ' lead trail ', -0.0D, CAST(-1 AS DECIMAL(10,2)), false, TIMESTAMP'1969-12-31 23:59:59',
  DATE'1900-01-01', CAST('NaN' AS DOUBLE), 'x'),
 (3, 'a,b', 1e-5D, CAST(0.01 AS DECIMAL(10,2)), NULL, NULL, NULL, CAST('Infinity' AS DOUBLE), ''),
 (4, 'q"uote', 123456789.0D, NULL, true, TIMESTAMP'2020-06-01 00:00:00', DATE'2020-06-01',
  1.0E7D, 'back\\slash'),
 (5, 'new\nline', NULL, CAST(0 AS DECIMAL(10,2)), true, TIMESTAMP'2020-06-01 00:00:00.5',
  DATE'2020-06-01', 1.0E-7D, 'tab\there'),
 (6, '', 0.1D, CAST(99999999.99 AS DECIMAL(10,2)), true, TIMESTAMP'2020-06-01 00:00:00',
  DATE'2020-06-01', 100.0D, 'uni\u00e9\u0001ctl/')
 AS t(id, s, d, dec, b, ts, dt, big, n)"""
NESTED = ("SELECT 1 AS id, array(1, NULL, 3) AS a, named_struct('x', 1, 'y', CAST(NULL AS STRING))"
          " AS st, CAST('ab' AS BINARY) AS bin, CAST(1.5 AS FLOAT) AS f, "
          "array(named_struct('q', 'a\"b')) AS nest")


def _only_file(path: str) -> str:
    files = [f for f in os.listdir(path) if not f.startswith((".", "_"))]
    assert len(files) == 1, files
    return os.path.join(path, files[0])


def _content(path: str) -> bytes:
    with open(path, "rb") as f:
        data = f.read()
    return gzip.decompress(data) if path.endswith(".gz") else data


CASES = [
    ("csv", VALUES, {}),
    ("csv", VALUES, {"header": "true", "nullValue": "NULL", "sep": ";", "quote": "'",
                     "escape": "'"}),
    ("csv", VALUES, {"quoteAll": "true", "emptyValue": "EMPTY", "dateFormat": "dd/MM/yyyy",
                     "timestampFormat": "yyyy-MM-dd HH:mm:ss", "lineSep": "\r\n"}),
    ("csv", VALUES, {"ignoreLeadingWhiteSpace": "false", "ignoreTrailingWhiteSpace": "false",
                     "escapeQuotes": "false"}),
    ("json", VALUES, {}),
    ("json", VALUES, {"ignoreNullFields": "false", "timestampFormat": "yyyy-MM-dd'T'HH:mm:ssXXX"}),
    ("json", NESTED, {}),
    ("json", NESTED, {"ignoreNullFields": "false"}),
    ("json", VALUES, {"compression": "gzip"}),
    ("csv", VALUES, {"compression": "gzip", "header": "true"}),
    ("csv", "SELECT 1 AS a, INTERVAL 1 DAY AS d, INTERVAL '1-2' YEAR TO MONTH AS ym", {}),
    ("json", "SELECT 1 AS a, INTERVAL '3 04:05:06' DAY TO SECOND AS d, NULL AS n", {}),
    ("text", "SELECT s FROM ({}) ORDER BY id".format(VALUES.replace("SELECT *", "SELECT *", 1)),
     {}),
]


#: the cases also run in a zone with daylight saving time (offsets other than Z)
ZONED = [CASES[0], CASES[5]]


@pytest.mark.parametrize("fmt,query,options,zone", [(*c, "UTC") for c in CASES] + [
    (*c, "America/Los_Angeles") for c in ZONED], ids=[f"{c[0]}-{i}" for i, c in enumerate(
        CASES)] + [f"{c[0]}-zoned-{i}" for i, c in enumerate(ZONED)])
def test_file_bytes_equal_spark(spark, tmp_path, fmt, query, options, zone):
    session = new_session({"spark.sql.session.timeZone": zone})
    ours, theirs = str(tmp_path / "ember"), str(tmp_path / "spark")
    session.sql(query).write.format(fmt).options(**options).save(ours)
    spark.conf.set("spark.sql.session.timeZone", zone)
    try:
        spark.sql(query).coalesce(1).write.format(fmt).options(**options).save(theirs)
    finally:
        spark.conf.set("spark.sql.session.timeZone", "UTC")
    mine, spark_file = _only_file(ours), _only_file(theirs)
    # the same codec extension, and the same bytes once decompressed
    assert mine.rsplit("-c000", 1)[1] == spark_file.rsplit("-c000", 1)[1]
    assert _content(mine) == _content(spark_file)


@pytest.mark.parametrize("fmt,codec", [("parquet", "none"), ("parquet", "gzip"),
                                       ("parquet", "zstd"), ("parquet", "uncompressed"),
                                       ("json", "bzip2"), ("json", "deflate"), ("csv", "none")])
def test_codec_file_names_and_rows(spark, tmp_path, fmt, codec):
    session = new_session()
    ours, theirs = str(tmp_path / "ember"), str(tmp_path / "spark")
    query = "SELECT id, CAST(id AS STRING) AS s FROM range(5)"
    session.sql(query).write.format(fmt).option("compression", codec).save(ours)
    spark.sql(query).coalesce(1).write.format(fmt).option("compression", codec).save(theirs)
    mine, spark_file = _only_file(ours), _only_file(theirs)
    assert mine.rsplit("-c000", 1)[1] == spark_file.rsplit("-c000", 1)[1]
    reader = spark.read.format(fmt)
    if fmt != "parquet":
        reader = reader.schema("id BIGINT, s STRING")
    assert sorted(reader.load(ours).collect()) == sorted(spark.sql(query).collect())


def test_max_records_per_file(spark, tmp_path):
    session = new_session()
    path = str(tmp_path / "m")
    session.sql("SELECT id, id % 2 AS p FROM range(10)").write.option(
        "maxRecordsPerFile", 2).partitionBy("p").parquet(path)
    for part in ("p=0", "p=1"):
        files = sorted(os.listdir(os.path.join(path, part)))
        assert [f.split(".")[1] for f in files] == ["c000", "c001", "c002"]
    assert sorted(spark.read.parquet(path).collect()) == sorted(
        spark.sql("SELECT id, CAST(id % 2 AS INT) AS p FROM range(10)").collect())


@pytest.mark.parametrize("fmt,options,partitioned", [
    ("parquet", {}, False), ("csv", {"header": "true"}, False), ("json", {}, False),
    ("parquet", {}, True)])
def test_empty_results_as_spark(spark, tmp_path, fmt, options, partitioned):
    """An empty result writes one empty file (a CSV header, a Parquet schema) -- none when
    partitioned -- and _SUCCESS, as Spark does."""
    session = new_session()
    ours, theirs = str(tmp_path / "ember"), str(tmp_path / "spark")
    query = "SELECT id, 'x' AS p FROM range(3) WHERE id > 5"
    for frame, path in ((session.sql(query), ours), (spark.sql(query), theirs)):
        writer = frame.write.format(fmt).options(**options)
        (writer.partitionBy("p") if partitioned else writer).save(path)
    visible = [sorted(f for f in os.listdir(p) if not f.startswith(".")) for p in (ours, theirs)]
    assert [len(v) for v in visible] == [len(visible[1])] * 2
    if not partitioned and fmt != "parquet":
        assert _content(_only_file(ours)) == _content(_only_file(theirs))
    if fmt == "parquet" and not partitioned:
        assert spark.read.parquet(ours).schema == spark.read.parquet(theirs).schema
