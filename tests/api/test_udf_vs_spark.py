"""Python UDFs against PySpark: the same functions on the same rows, compared once per kind.

One DataFrame carries every scalar UDF kind as columns (pickled ``udf``, Arrow-optimized
``udf(useArrow=True)``, scalar and iterator ``pandas_udf``, nested calls, a registered SQL
function), so each runtime costs one Ember query and Spark one query; ``mapInPandas`` /
``mapInArrow`` / ``applyInPandas`` / ``applyInArrow`` are compared the same way.  Also: the
plan nodes (ArrowEvalPython / BatchEvalPython with Spark's eval types), non-deterministic UDFs
kept in place by the optimizer, and the user's error surfacing once as ``PythonException``
with the user's traceback.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator

import pandas as pd
import pyarrow as pa
import pytest
from pyspark import cloudpickle
from pyspark.sql import functions as SF

import ember
from ember import functions as F
from ember.errors import PythonException
from tests.conformance.ember_adapter import RUNTIMES
from tests.spark_session import get_spark

pytestmark = pytest.mark.spark

# Spark's Python workers cannot import this test module: its functions travel by value
cloudpickle.register_pickle_by_value(sys.modules[__name__])

ROWS = [(1, "a", 1.5), (2, None, -2.0), (None, "c", None), (-7, "", 0.0),
        (2147483647, "ab", 1e300)]
SCHEMA = "x int, s string, d double"


def _plus(v):
    return None if v is None else v + 1


def _shout(s):
    return None if s is None else s.upper() + "!"


def _half(d):
    return None if d is None else d / 2


def _pandas_twice(v: pd.Series) -> pd.Series:
    return v * 2


def _pandas_iter(it: Iterator[pd.Series]) -> Iterator[pd.Series]:
    for v in it:
        yield v.fillna(0) + 10


def _udfs(lib):
    """The same UDFs built with ``lib`` (``ember.functions`` or ``pyspark.sql.functions``)."""
    return {
        "plus": lib.udf(_plus, "long", useArrow=False),
        "plus_arrow": lib.udf(_plus, "long", useArrow=True),
        "shout": lib.udf(_shout),
        "half": lib.udf(_half, "double", useArrow=True),
        "twice": lib.pandas_udf(_pandas_twice, "double"),
        "iter": lib.pandas_udf(_pandas_iter, "double"),
    }


def _scalar_columns(u, col):
    return [u["plus"](col("x")), u["plus_arrow"](col("x")), u["shout"]("s"), u["half"]("d"),
            u["twice"]("d"), u["iter"](col("d")),
            u["plus"](u["plus_arrow"](col("x"))).alias("nested")]


def _rows(rows) -> list[tuple]:
    return sorted((tuple(r) for r in rows), key=repr)


@pytest.fixture(params=RUNTIMES)
def es(request):
    if request.param == "spark":
        return ember.Session(runtime="spark", spark=get_spark())
    return ember.Session()


@pytest.fixture(scope="module")
def spark_results():
    """Spark's answers, computed once for both runtimes."""
    spark = get_spark()
    df = spark.createDataFrame(ROWS, SCHEMA)
    u = _udfs(SF)
    scalar = df.select(*_scalar_columns(u, SF.col))
    spark.udf.register("plus_sql", u["plus"])
    df.createOrReplaceTempView("udf_t")
    sql = spark.sql("SELECT plus_sql(x) AS p, plus_sql(x - 1) FROM udf_t WHERE plus_sql(x) > 2")
    return {
        "scalar": (scalar.columns, _rows(scalar.collect())),
        "sql": (sql.columns, _rows(sql.collect())),
        "maps": [(m.columns, _rows(m.collect())) for m in _maps(df)],
    }


def _map_pandas(it):
    for p in it:
        yield pd.DataFrame({"y": p.d * 2, "s": p.s})


def _map_arrow(it):
    for b in it:
        yield pa.RecordBatch.from_pydict({"n": [b.num_rows]}, schema=pa.schema([("n", pa.int64())]))


def _group_pandas(key, p):
    return pd.DataFrame({"k": [key[0]], "n": [len(p)], "t": [p.d.sum()]})


def _group_arrow(t):
    return pa.table({"n": pa.array([t.num_rows], pa.int64())})


def _maps(df):
    keyed = df.withColumn("k", (df.x % 2).cast("int"))
    return [
        df.mapInPandas(_map_pandas, "y double, s string"),
        df.mapInArrow(_map_arrow, "n long").groupBy().sum("n"),
        keyed.groupBy("k").applyInPandas(_group_pandas, "k int, n long, t double"),
        keyed.groupBy("k").applyInArrow(_group_arrow, "n long"),
    ]


def test_udfs_match_spark(es, spark_results) -> None:
    df = es.createDataFrame(ROWS, SCHEMA)
    u = _udfs(F)
    scalar = df.select(*_scalar_columns(u, F.col))
    assert (scalar.columns, _rows(scalar.collect())) == spark_results["scalar"]
    es.udf.register("plus_sql", u["plus"])
    df.createOrReplaceTempView("udf_t")
    sql = es.sql("SELECT plus_sql(x) AS p, plus_sql(x - 1) FROM udf_t WHERE plus_sql(x) > 2")
    assert (sql.columns, _rows(sql.collect())) == spark_results["sql"]
    assert [(m.columns, _rows(m.collect())) for m in _maps(df)] == spark_results["maps"]


def test_udf_plans_and_errors(es) -> None:
    df = es.createDataFrame(ROWS, SCHEMA)
    u = _udfs(F)
    text = df.select(u["plus"]("x"), u["twice"]("d"))._qe.explain_string()
    assert "BatchEvalPython [_plus(x#" in text
    assert "ArrowEvalPython [_pandas_twice(d#" in text and "], 200" in text
    # CollapseProject merges a deterministic UDF's projection into the one above it, never a
    # non-deterministic one's (Spark's canCollapseExpressions)
    def optimized(f):
        q = df.select(f("x").alias("r")).select((F.col("r") + 1).alias("r1"))
        text = q._qe.explain_string("extended")
        return text.split("== Optimized Logical Plan ==")[1].split("== Physical Plan ==")[0]

    nd = F.udf(_plus, "long").asNondeterministic()
    assert not nd.deterministic
    assert " AS r#" not in optimized(u["plus"])
    assert " AS r#" in optimized(nd)

    def boom(v):
        return 1 // (v - v)

    with pytest.raises(PythonException) as info:
        df.select(F.udf(boom, "int")("x")).collect()
    message = str(info.value)
    assert message.startswith("An exception was thrown from the Python worker:\nTraceback")
    assert message.count("ZeroDivisionError") == 1 and "in boom" in message
    assert "ember/" not in message  # only the user's frames
