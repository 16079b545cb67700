"""Unit tests of data sources (CSV/Parquet readers, CREATE TEMP VIEW ... USING, createDataFrame).

The expected values are Spark 4's (checked differentially in tests/differential/test_sources.py).
"""

from __future__ import annotations

import datetime as _dt
import os
from decimal import Decimal

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import ember
from ember.errors import AnalysisError, EmberError


@pytest.fixture
def s() -> ember.Session:
    return ember.Session()


def _write(tmp_path, name: str, text: str) -> str:
    p = os.path.join(str(tmp_path), name)
    os.makedirs(os.path.dirname(p), exist_ok=True)
    with open(p, "w") as f:
        f.write(text)
    return p


def _rows(df) -> list[tuple]:
    return [tuple(r) for r in df.collect()]


def test_csv_inference_types(s, tmp_path) -> None:
    p = _write(tmp_path, "t.csv", "i,l,dec,dbl,d,ts,b,mix,sp\n"
               "1,3000000000,99999999999999999999,1.5,2024-01-15,2024-01-15 10:30:00,true,1, 1\n"
               "2,4,5,2,2024-02-01,2024-01-15T10:30:00Z,FALSE,x,2 \n")
    df = s.read.csv(p, header=True, inferSchema=True)
    assert [t for _, t in df.dtypes] == ["int", "bigint", "decimal(20,0)", "double", "date",
                                         "timestamp", "boolean", "string", "double"]
    r = df.collect()[0]
    assert r.dec == Decimal("99999999999999999999") and r.d == _dt.date(2024, 1, 15)
    assert r.sp == 1.0


def test_csv_no_infer_and_no_header(s, tmp_path) -> None:
    p = _write(tmp_path, "t.csv", "a,b\n1,x\n")
    assert s.read.csv(p, header=True).dtypes == [("a", "string"), ("b", "string")]
    df = s.read.csv(p)
    assert df.columns == ["_c0", "_c1"] and _rows(df) == [("a", "b"), ("1", "x")]


def test_csv_null_semantics(s, tmp_path) -> None:
    p = _write(tmp_path, "t.csv", 'a,b\n1,\n2,""\n3,NA\n4,null\n')
    assert _rows(s.read.csv(p, header=True)) == [("1", None), ("2", None), ("3", "NA"),
                                                 ("4", "null")]
    assert _rows(s.read.csv(p, header=True, nullValue="NA")) == [
        ("1", None), ("2", ""), ("3", None), ("4", "null")]
    assert _rows(s.read.csv(p, header=True, emptyValue="E"))[1] == ("2", "E")


def test_csv_all_null_column_is_string(s, tmp_path) -> None:
    p = _write(tmp_path, "t.csv", "a,b\n1,\n2,\n")
    assert s.read.csv(p, header=True, inferSchema=True).dtypes == [("a", "int"), ("b", "string")]


def test_csv_user_schema_and_modes(s, tmp_path) -> None:
    p = _write(tmp_path, "t.csv", "a,b\n1,2\nx,3\n4\n5,6,7\n")
    df = s.read.schema("a int, b int").csv(p, header=True)
    assert df.dtypes == [("a", "int"), ("b", "int")]
    assert sorted(_rows(df), key=str) == sorted([(1, 2), (None, 3), (4, None), (5, 6)], key=str)
    assert _rows(s.read.schema("a int, b int").option("mode", "DROPMALFORMED")
                 .csv(p, header=True)) == [(1, 2)]
    with pytest.raises(EmberError) as e:
        s.read.schema("a int, b int").option("mode", "FAILFAST").csv(p, header=True).collect()
    assert e.value.error_class == "FAILED_READ_FILE.NO_HINT"


def test_csv_schema_struct_type(s, tmp_path) -> None:
    from ember import types as T

    p = _write(tmp_path, "t.csv", "1;x\n")
    st = T.StructType((T.StructField("n", T.LONG), T.StructField("s", T.STRING)))
    assert _rows(s.read.schema(st).csv(p, sep=";")) == [(1, "x")]


def test_csv_quotes_and_separators(s, tmp_path) -> None:
    p = _write(tmp_path, "t.csv", "a|b\n1|'x|y'\n")
    assert _rows(s.read.csv(p, header=True, sep="|", quote="'")) == [("1", "x|y")]
    p2 = _write(tmp_path, "q.csv", 'a,b\n1,"say \\"hi\\""\n2,"a ""b"""\n')
    assert _rows(s.read.csv(p2, header=True, escape='"'))[1] == ("2", 'a "b"')
    assert _rows(s.read.csv(p2, header=True))[0] == ("1", 'say "hi"')


def test_csv_directory_skips_hidden_files(s, tmp_path) -> None:
    _write(tmp_path, "d/p1.csv", "a\n1\n")
    _write(tmp_path, "d/p2.csv", "a\n3000000000\n")
    _write(tmp_path, "d/.hidden.csv", "a\nx\n")
    _write(tmp_path, "d/_SUCCESS", "")
    df = s.read.csv(os.path.join(str(tmp_path), "d"), header=True, inferSchema=True)
    assert df.dtypes == [("a", "bigint")] and sorted(_rows(df)) == [(1,), (3000000000,)]


def test_path_not_found(s, tmp_path) -> None:
    missing = os.path.join(str(tmp_path), "nope.csv")
    with pytest.raises(AnalysisError) as e:
        s.read.csv(missing)
    assert e.value.error_class == "PATH_NOT_FOUND" and missing in str(e.value)


def test_temp_view_using_failure_registers_nothing(s, tmp_path) -> None:
    with pytest.raises(AnalysisError):
        s.sql(f"CREATE TEMPORARY VIEW v USING csv OPTIONS (path '{tmp_path}/nope.csv')")
    assert not s.catalog.tableExists("v")
    p = _write(tmp_path, "t.csv", "a,b\n1,x\n")
    s.sql(f"CREATE TEMPORARY VIEW v USING csv OPTIONS (path '{p}', header 'true', "
          "inferSchema 'true')")
    assert s.sql("SELECT a + 1 AS a1, b FROM v").collect()[0] == (2, "x")


def test_parquet_types_nullable_and_partitions(s, tmp_path) -> None:
    d = str(tmp_path)
    pq.write_table(pa.table({"k": pa.array([1], pa.int8()),
                             "ts": pa.array([_dt.datetime(2024, 1, 1)], pa.timestamp("ms"))},
                            schema=pa.schema([pa.field("k", pa.int8(), False),
                                              pa.field("ts", pa.timestamp("ms"))])),
                   os.path.join(d, "t.parquet"))
    df = s.read.parquet(os.path.join(d, "t.parquet"))
    # a naive Arrow timestamp is Parquet's isAdjustedToUTC=false: Spark 4 reads a TIMESTAMP_NTZ
    assert df.dtypes == [("k", "tinyint"), ("ts", "timestamp_ntz")]
    assert all(f.nullable for f in df.schema.fields)
    for key, n in (("a", 1), ("b", 2), ("__HIVE_DEFAULT_PARTITION__", 3)):
        os.makedirs(os.path.join(d, "h", f"key={key}", "n=7"))
        pq.write_table(pa.table({"v": [n]}),
                       os.path.join(d, "h", f"key={key}", "n=7", "part-0.parquet"))
    df = s.read.parquet(os.path.join(d, "h"))
    assert df.dtypes == [("v", "bigint"), ("key", "string"), ("n", "int")]
    assert sorted(_rows(df), key=str) == sorted([(1, "a", 7), (2, "b", 7), (3, None, 7)],
                                                key=str)


def test_parquet_user_schema_missing_column(s, tmp_path) -> None:
    p = os.path.join(str(tmp_path), "t.parquet")
    pq.write_table(pa.table({"a": [1, 2]}), p)
    assert _rows(s.read.schema("a bigint, z string").parquet(p)) == [(1, None), (2, None)]


def test_create_dataframe_inference_like_pyspark(s) -> None:
    assert s.createDataFrame([(1,), ("a",)], ["v"]).collect() == [("1",), ("a",)]
    assert s.createDataFrame([([1], [None]), ([], ["x"])]).dtypes == [
        ("_1", "array<bigint>"), ("_2", "array<string>")]
    for data, cls in (([(1,), (2.5,)], "CANNOT_MERGE_TYPE"),
                      ([(1, None)], "CANNOT_DETERMINE_TYPE"),
                      ([], "CANNOT_INFER_EMPTY_SCHEMA")):
        with pytest.raises(AnalysisError) as e:
            s.createDataFrame(data)
        assert e.value.error_class == cls
    assert s.createDataFrame([], "a int").dtypes == [("a", "int")]
