"""Differential test of data sources: CSV / Parquet files and ``createDataFrame`` vs PySpark.

Every case is written ONCE as ``case(session, d)`` (``d``: a directory of test files written by
the ``data_dir`` fixture) and runs with a PySpark session and with ``ember.Session()``. Compared:
column names, ``simpleString`` types, nullability (``df.schema``), and rows (sorted; floats to 10
significant digits). A case that fails must fail on both with the same error class.

Known, documented differences are listed in ``KNOWN`` (with the reason) and checked to still
differ in the documented way, so a fix shows up as a test to update.

Run: ``/work/venv/bin/python -m pytest tests/differential/test_sources.py``.
"""

from __future__ import annotations

import datetime as _dt
import os
import re
from decimal import Decimal
from typing import Any, Callable

import pytest

from tests.conformance.ember_adapter import RUNTIMES, new_session
from tests.differential.compare import Failed, norm_value, sort_key

pytestmark = [pytest.mark.spark, pytest.mark.differential]

# ---------------------------------------------------------------------------------------------
# Test files

CSV_FILES: dict[str, str] = {
    "basic.csv": "a,b,c\n1,x,1.5\n2,y,2.5\n3,z,-0.25\n",
    "noheader.csv": "1,x,true\n2,y,false\n",
    "nulls.csv": 'a,b,c\n1,,null\n,"",NULL\n3,x,\n4,NA,5\n',
    "bigint.csv": "a,b,c\n1,3000000000,99999999999999999999\n-2,4,5\n",
    "decimals.csv": "a,b,c\n1.5,1.25,1e5\n2,100.125,-3.5E-2\n",
    "dates.csv": "d,ts,tsz,tsfrac\n2024-01-15,2024-01-15 10:30:00,2024-01-15T10:30:00Z,"
                 "2024-01-15T10:30:00.123456\n1999-12-31,2000-02-29 23:59:59,"
                 "2000-02-29T23:59:59+01:00,2000-02-29T23:59:59.5\n",
    "bools.csv": "a,b,c\ntrue,TRUE,true\nfalse,False,1\n",
    "mixed.csv": "a,b,c\n1,x,2024-01-15\n2.5,2,3\n",
    "spaces.csv": "a,b,c\n 1,x , y\n2 , z,w\n",
    "quotes.csv": 'a,b\n1,"hello, world"\n2,"say \\"hi\\""\n3,"x\\\\y"\n4,"multi\nline"\n',
    "doubled_quotes.csv": 'a,b\n1,"two ""q"""\n',
    "semi.csv": "a;b\n1;x\n2;y\n",
    "tabs.tsv": "a\tb\n1\tx\n2\ty\n",
    "single.csv": "a,b\n'x,y',1\n'q',2\n",
    "leading_zero.csv": "a,b\n007,+5\n010,-0\n",
    "specials.csv": "a,b\nNaN,Infinity\n1.0,-Infinity\n",
    "bad.csv": "a,b\n1,2\nx,3\n4\n5,6,7\n",
    "empty_col.csv": "a,b\n1,\n2,\n",
    "multi/part1.csv": "a,b\n1,x\n2,y\n",
    "multi/part2.csv": "a,b\n3000000000,z\n",
    "multi/.hidden.csv": "a,b\n9,hidden\n",
    "multi/_SUCCESS": "",
}


def _write_parquet(d: str) -> None:
    import pyarrow as pa
    import pyarrow.parquet as pq

    t = pa.table({
        "i8": pa.array([1, None, -3], pa.int8()),
        "i16": pa.array([1000, 2, None], pa.int16()),
        "i32": pa.array([None, 2, 3], pa.int32()),
        "i64": pa.array([10**12, 2, 3], pa.int64()),
        "f32": pa.array([1.5, None, float("nan")], pa.float32()),
        "f64": pa.array([0.1, 2.5, None], pa.float64()),
        "dec": pa.array([Decimal("1.23"), None, Decimal("-99.99")], pa.decimal128(5, 2)),
        "s": pa.array(["a", None, "ccc"], pa.string()),
        "bin": pa.array([b"\x00\x01", b"", None], pa.binary()),
        "b": pa.array([True, False, None], pa.bool_()),
        "d": pa.array([_dt.date(2024, 1, 15), None, _dt.date(1970, 1, 1)], pa.date32()),
        "ts_utc": pa.array([_dt.datetime(2024, 1, 15, 10, 30), None,
                            _dt.datetime(1999, 12, 31, 23, 59, 59, 500000)],
                           pa.timestamp("us", tz="UTC")),
        "ts_ms": pa.array([_dt.datetime(2024, 1, 15, 10, 30), None, None],
                          pa.timestamp("ms", tz="UTC")),
    })
    pq.write_table(t, os.path.join(d, "types.parquet"))
    ntz = pa.table({"id": pa.array([1, 2], pa.int32()),
                    "ts": pa.array([_dt.datetime(2024, 1, 15, 10, 30), None],
                                   pa.timestamp("us"))})
    pq.write_table(ntz, os.path.join(d, "ntz.parquet"))
    req = pa.table({"k": pa.array([1, 2], pa.int32()), "v": pa.array(["x", "y"])},
                   schema=pa.schema([pa.field("k", pa.int32(), nullable=False),
                                     pa.field("v", pa.string())]))
    pq.write_table(req, os.path.join(d, "required.parquet"))
    os.makedirs(os.path.join(d, "pdir"))
    for i in range(3):
        pq.write_table(pa.table({"id": pa.array([i * 10, i * 10 + 1], pa.int64()),
                                 "name": [f"n{i}a", f"n{i}b"]}),
                       os.path.join(d, "pdir", f"part-{i:05d}.parquet"))
    for key, vals in (("a", [1, 2]), ("b", [3])):
        sub = os.path.join(d, "hive", f"key={key}")
        os.makedirs(sub)
        pq.write_table(pa.table({"v": pa.array(vals, pa.int64())}),
                       os.path.join(sub, "part-0.parquet"))


@pytest.fixture(scope="module")
def data_dir(tmp_path_factory: pytest.TempPathFactory) -> str:
    d = str(tmp_path_factory.mktemp("sources"))
    for name, text in CSV_FILES.items():
        p = os.path.join(d, name)
        os.makedirs(os.path.dirname(p), exist_ok=True)
        with open(p, "w") as f:
            f.write(text)
    _write_parquet(d)
    return d


# ---------------------------------------------------------------------------------------------
# Cases

CASES: dict[str, Callable[[Any, str], Any]] = {}


def case(fn: Callable[[Any, str], Any]) -> Callable[[Any, str], Any]:
    CASES[fn.__name__.removeprefix("c_")] = fn
    return fn


def _p(d: str, name: str) -> str:
    return os.path.join(d, name)


def _csv(name: str, **opts: Any) -> Callable[[Any, str], Any]:
    return lambda s, d: s.read.options(**opts).csv(_p(d, name))


_HI = {"header": True, "inferSchema": True}
for _name, _opts in {
    "csv_header_infer": ("basic.csv", _HI),
    "csv_header_no_infer": ("basic.csv", {"header": True}),
    "csv_no_header_no_infer": ("basic.csv", {}),
    "csv_no_header_infer": ("noheader.csv", {"inferSchema": True}),
    "csv_nulls_infer": ("nulls.csv", _HI),
    "csv_nulls_strings": ("nulls.csv", {"header": True}),
    "csv_null_value_option": ("nulls.csv", {**_HI, "nullValue": "NA"}),
    "csv_empty_value_option": ("nulls.csv", {"header": True, "emptyValue": "EMPTY"}),
    "csv_bigint": ("bigint.csv", _HI),
    "csv_decimals_double": ("decimals.csv", _HI),
    "csv_decimals_prefers_decimal": ("decimals.csv", {**_HI, "prefersDecimal": True}),
    "csv_dates_infer": ("dates.csv", _HI),
    "csv_dates_strings": ("dates.csv", {"header": True}),
    "csv_bools": ("bools.csv", _HI),
    "csv_mixed": ("mixed.csv", _HI),
    "csv_spaces_infer": ("spaces.csv", _HI),
    "csv_spaces_strings": ("spaces.csv", {"header": True}),
    "csv_spaces_trim": ("spaces.csv", {**_HI, "ignoreLeadingWhiteSpace": True,
                                       "ignoreTrailingWhiteSpace": True}),
    "csv_quotes": ("quotes.csv", {**_HI, "multiLine": True}),
    "csv_doubled_quotes": ("doubled_quotes.csv", _HI),
    "csv_doubled_quotes_escape": ("doubled_quotes.csv", {**_HI, "escape": '"'}),
    "csv_sep": ("semi.csv", {**_HI, "sep": ";"}),
    "csv_delimiter": ("semi.csv", {**_HI, "delimiter": ";"}),
    "csv_tab": ("tabs.tsv", {**_HI, "sep": "\t"}),
    "csv_custom_quote": ("single.csv", {**_HI, "quote": "'"}),
    "csv_leading_zero": ("leading_zero.csv", _HI),
    "csv_specials": ("specials.csv", _HI),
    "csv_empty_column": ("empty_col.csv", _HI),
    "csv_directory": ("multi", _HI),
    "csv_directory_strings": ("multi", {"header": True}),
}.items():
    CASES[_name] = _csv(_opts[0], **_opts[1])


@case
def c_csv_method_kwargs(s, d):
    return s.read.csv(_p(d, "semi.csv"), sep=";", header=True, inferSchema=True)


@case
def c_csv_format_load(s, d):
    return s.read.format("csv").option("header", "true").option("inferSchema", "true") \
        .load(_p(d, "basic.csv"))


@case
def c_csv_schema_ddl(s, d):
    return s.read.schema("a int, b string, c double").option("header", True).csv(_p(d, "basic.csv"))


@case
def c_csv_schema_kwarg(s, d):
    return s.read.csv(_p(d, "basic.csv"), schema="a bigint, b string, c decimal(5,2)",
                      header=True)


@case
def c_csv_schema_no_header(s, d):
    return s.read.schema("x int, y string, z boolean").csv(_p(d, "noheader.csv"))


@case
def c_csv_schema_permissive(s, d):
    return s.read.schema("a int, b int").csv(_p(d, "bad.csv"), header=True)


@case
def c_csv_schema_dropmalformed(s, d):
    return s.read.schema("a int, b int").option("mode", "DROPMALFORMED") \
        .csv(_p(d, "bad.csv"), header=True)


@case
def c_csv_schema_failfast(s, d):
    return s.read.schema("a int, b int").option("mode", "FAILFAST") \
        .csv(_p(d, "bad.csv"), header=True)


@case
def c_csv_schema_dates(s, d):
    return s.read.schema("d date, ts timestamp, tsz timestamp, tsfrac timestamp") \
        .csv(_p(d, "dates.csv"), header=True)


@case
def c_csv_schema_struct_type(s, d):
    import pyspark.sql.types as PT

    import ember.types as ET

    is_spark = type(s).__module__.startswith("pyspark")
    T = PT if is_spark else ET
    st = T.StructType([T.StructField("a", T.IntegerType()), T.StructField("b", T.StringType())])
    return s.read.schema(st).csv(_p(d, "semi.csv"), sep=";", header=True)


@case
def c_csv_bad_infer(s, d):
    return s.read.csv(_p(d, "bad.csv"), header=True, inferSchema=True)


@case
def c_csv_projection_filter(s, d):
    df = s.read.csv(_p(d, "basic.csv"), header=True, inferSchema=True)
    return df.where("a > 1").select("c", "a")


@case
def c_csv_temp_view_using(s, d):
    s.sql("CREATE OR REPLACE TEMPORARY VIEW src_csv USING csv OPTIONS "
          f"(path '{_p(d, 'basic.csv')}',"
          " header 'true', inferSchema 'true')")
    return s.sql("SELECT a, b, c * 2 AS c2 FROM src_csv")


@case
def c_csv_temp_view_using_strings(s, d):
    s.sql("CREATE OR REPLACE TEMPORARY VIEW src_csv2 USING csv OPTIONS "
          f"(path '{_p(d, 'basic.csv')}',"
          " header 'true')")
    return s.sql("SELECT * FROM src_csv2")


@case
def c_csv_path_not_found(s, d):
    return s.read.csv(_p(d, "no_such.csv"))


@case
def c_parquet_path_not_found(s, d):
    return s.read.parquet(_p(d, "no_such.parquet"))


@case
def c_temp_view_using_path_not_found(s, d):
    s.sql(f"CREATE TEMPORARY VIEW bad_src USING parquet OPTIONS (path '{_p(d, 'nope')}')")
    return s.sql("SELECT * FROM bad_src")


# -- parquet ---------------------------------------------------------------------------------

@case
def c_parquet_types(s, d):
    return s.read.parquet(_p(d, "types.parquet"))


@case
def c_parquet_ntz(s, d):
    return s.read.parquet(_p(d, "ntz.parquet"))


@case
def c_parquet_required(s, d):
    return s.read.parquet(_p(d, "required.parquet"))


@case
def c_parquet_directory(s, d):
    return s.read.parquet(_p(d, "pdir"))


@case
def c_parquet_projection(s, d):
    return s.read.parquet(_p(d, "types.parquet")).select("s", "i64").where("i64 > 2")


@case
def c_parquet_hive_partitions(s, d):
    return s.read.parquet(_p(d, "hive"))


@case
def c_parquet_format_load(s, d):
    return s.read.format("parquet").load(_p(d, "pdir"))


@case
def c_parquet_temp_view_using(s, d):
    s.sql(f"CREATE OR REPLACE TEMPORARY VIEW src_pq USING parquet OPTIONS (path '{_p(d, 'pdir')}')")
    return s.sql("SELECT count(*) AS n, sum(id) AS s FROM src_pq")


# -- createDataFrame -------------------------------------------------------------------------

@case
def c_cdf_tuples_infer(s, d):
    return s.createDataFrame([(1, 1.5, "a", True), (2, None, None, False)])


@case
def c_cdf_tuples_names(s, d):
    return s.createDataFrame([(1, 1.5, "a"), (2, 2.5, "b")], ["x", "y", "z"])


@case
def c_cdf_tuples_ddl(s, d):
    return s.createDataFrame([(1, 1.5, "a"), (2, None, None)], "x int, y double, z string")


@case
def c_cdf_ddl_not_null(s, d):
    return s.createDataFrame([(1, "a")], "x int not null, y string")


@case
def c_cdf_dicts(s, d):
    return s.createDataFrame([{"b": 1, "a": "x"}, {"b": 2, "a": "y"}])


@case
def c_cdf_rows(s, d):
    Row = s.__class__.__module__.startswith("pyspark") and __import__(
        "pyspark.sql", fromlist=["Row"]).Row or __import__("ember", fromlist=["Row"]).Row
    return s.createDataFrame([Row(name="x", age=1), Row(name="y", age=2)])


@case
def c_cdf_int_float_mix(s, d):
    return s.createDataFrame([(1,), (2.5,)], ["v"])


@case
def c_cdf_int_str_mix(s, d):
    return s.createDataFrame([(1,), ("a",)], ["v"])


@case
def c_cdf_all_none(s, d):
    return s.createDataFrame([(1, None), (2, None)], ["a", "b"])


@case
def c_cdf_dates_decimals(s, d):
    return s.createDataFrame([(_dt.date(2024, 1, 2), _dt.datetime(2024, 1, 2, 3, 4, 5),
                               Decimal("1.50"), b"xy")], ["d", "ts", "dec", "bin"])


@case
def c_cdf_big_int(s, d):
    return s.createDataFrame([(2**40,), (-1,)], ["v"])


@case
def c_cdf_nested_array(s, d):
    return s.createDataFrame([([1, 2], [None]), ([], ["a"])], ["arr", "arr2"])


@case
def c_cdf_dict_value(s, d):
    return s.createDataFrame([(1, {"k": 1}), (2, {"k": 2})], ["id", "m"])


@case
def c_cdf_bool_str_mix(s, d):
    return s.createDataFrame([(True,), ("a",), (None,)], ["v"])


@case
def c_cdf_empty_with_schema(s, d):
    return s.createDataFrame([], "a int, b string")


@case
def c_cdf_empty_no_schema(s, d):
    return s.createDataFrame([])


@case
def c_cdf_scalars_with_type(s, d):
    return s.createDataFrame([1, 2, 3], "int")


@case
def c_cdf_pandas_basic(s, d):
    import pandas as pd

    return s.createDataFrame(pd.DataFrame({"i": [1, 2, 3], "f": [1.5, float("nan"), 3.0],
                                           "s": ["a", None, "c"], "b": [True, False, True]}))


@case
def c_cdf_pandas_int_with_none(s, d):
    import pandas as pd

    return s.createDataFrame(pd.DataFrame({"i": [1, None, 3]}))


@case
def c_cdf_pandas_datetime(s, d):
    import pandas as pd

    return s.createDataFrame(pd.DataFrame({
        "ts": pd.to_datetime(["2024-01-15 10:30:00", None]),
        "d": [_dt.date(2024, 1, 15), None]}))


@case
def c_cdf_pandas_int32(s, d):
    import numpy as np
    import pandas as pd

    return s.createDataFrame(pd.DataFrame({"a": np.array([1, 2], dtype=np.int32),
                                           "b": np.array([1, 2], dtype=np.int8),
                                           "c": np.array([1.5, 2], dtype=np.float32)}))


@case
def c_cdf_pandas_categorical(s, d):
    import pandas as pd

    return s.createDataFrame(pd.DataFrame({"c": pd.Categorical(["x", "y", "x"])}))


@case
def c_cdf_pandas_with_schema(s, d):
    import pandas as pd

    return s.createDataFrame(pd.DataFrame({"a": [1, 2], "b": ["x", "y"]}), "a int, b string")


@case
def c_cdf_pandas_names(s, d):
    import pandas as pd

    return s.createDataFrame(pd.DataFrame({"a": [1, 2], "b": ["x", "y"]}), ["p", "q"])


@case
def c_cdf_arrow(s, d):
    import pyarrow as pa

    if not hasattr(s, "sparkContext"):
        pass
    t = pa.table({"i8": pa.array([1, None], pa.int8()), "i32": pa.array([1, 2], pa.int32()),
                  "f32": pa.array([1.5, None], pa.float32()), "s": ["a", None],
                  "d": pa.array([_dt.date(2024, 1, 1), None], pa.date32()),
                  "ts": pa.array([_dt.datetime(2024, 1, 1, 12), None],
                                 pa.timestamp("us", tz="UTC")),
                  "dec": pa.array([Decimal("1.5"), None], pa.decimal128(4, 1))})
    return s.createDataFrame(t)


# ---------------------------------------------------------------------------------------------
# Known differences: case -> (reason, the part of the outcome that differs). The test checks that
# they still differ there (and only there), so fixing one makes the test point at this list.

KNOWN: dict[str, tuple[str, str]] = {
    "csv_doubled_quotes": (
        "Spark's univocity parser with the default escape '\\' returns a quoted field holding "
        "doubled quotes raw ('\"two \"\"q\"\"\"'); Ember's Arrow parser ends the field at the "
        "second quote ('two \"q\"\"\"'); use escape '\"' (RFC 4180) for doubled quotes", "rows"),
}

#: Known differences of Ember's own readers that the Spark runtime does not have: it reads files
#: with Spark's readers.
SPARK_READER_MATCHES = {"csv_doubled_quotes"}

# ---------------------------------------------------------------------------------------------
# Comparison


def outcome(session: Any, fn: Callable[[Any, str], Any], d: str, is_spark: bool) -> Any:
    try:
        df = fn(session, d)
        rows = [norm_value(tuple(r)) for r in df.collect()]
        rows.sort(key=sort_key)
        return {"columns": list(df.columns), "dtypes": [t for _, t in df.dtypes],
                "nullable": [f.nullable for f in df.schema.fields], "rows": rows}
    except Exception as e:  # noqa: BLE001 - every failure is compared by class
        if is_spark:
            from pyspark.errors import PySparkException

            if isinstance(e, PySparkException):
                return Failed(str(e.getCondition()), str(e))
            # errors raised inside a task (e.g. FAILFAST) arrive as a Py4JJavaError
            m = re.search(r"SparkException: \[([A-Z_.]+)\]", str(e))
            if m:
                return Failed(m.group(1), str(e))
        else:
            cls = getattr(e, "error_class", None)
            if cls:
                return Failed(str(cls), str(e))
        return Failed(f"python:{type(e).__name__}", str(e))


def compare(expected: Any, actual: Any) -> str | None:
    if isinstance(expected, Failed) or isinstance(actual, Failed):
        if isinstance(expected, Failed) and isinstance(actual, Failed) \
                and expected.cls == actual.cls:
            return None
        return f"Spark: {expected!r}\nEmber: {actual!r}"
    if expected == actual:
        return None
    lines = []
    for key in ("columns", "dtypes", "nullable", "rows"):
        if expected.get(key) != actual.get(key):
            lines.append(f"{key}: Spark {expected.get(key)!r}\n{' ' * len(key)}  Ember "
                         f"{actual.get(key)!r}")
    return "\n".join(lines)


@pytest.fixture(scope="module")
def spark_outcomes(spark: Any, data_dir: str) -> dict[str, Any]:
    session = spark.newSession()
    session.conf.set("spark.sql.codegen.wholeStage", "false")
    session.conf.set("spark.sql.adaptive.enabled", "false")
    session.conf.set("spark.sql.shuffle.partitions", "1")
    return {name: outcome(session, fn, data_dir, True) for name, fn in sorted(CASES.items())}


@pytest.mark.parametrize("runtime", RUNTIMES)
@pytest.mark.parametrize("name", sorted(CASES))
def test_source(spark_outcomes: dict[str, Any], data_dir: str, name: str, runtime: str) -> None:
    expected = spark_outcomes[name]
    actual = outcome(new_session(None, runtime), CASES[name], data_dir, False)
    problem = compare(expected, actual)
    if name in KNOWN and not (runtime == "spark" and name in SPARK_READER_MATCHES):
        reason, part = KNOWN[name]
        assert problem is not None, f"{name} now matches Spark: remove it from KNOWN"
        assert problem.startswith(f"{part}:"), f"{name}: unexpected difference\n{problem}"
        pytest.xfail(reason)
    if problem is not None:
        pytest.fail(f"case {name!r} differs from PySpark\n{problem}", pytrace=False)
