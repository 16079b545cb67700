"""Differential test of the DataFrame, Column, GroupedData and Session methods added for
PySpark parity (issue 22): each program runs unchanged on PySpark and on Ember (both runtimes)
and the results must match, as in :mod:`tests.differential.test_dataframe_api`.  A program
batches many checks into one result (a tuple of values), so the whole file costs the oracle a
handful of jobs."""

from __future__ import annotations

from typing import Any

import pytest

from tests.conformance.ember_adapter import RUNTIMES, new_session
from tests.differential.test_dataframe_api import EMP, EMP_S, Prog, compare, outcome

PROGRAMS: dict[str, Prog] = {}
#: programs that also run on the Spark runtime: those whose plans differ there (exchanges,
#: caches, samplers); the others only call the API, whose plans the local runtime covers
ON_SPARK_RUNTIME: set[str] = set()


def program(ordered: bool = False, spark_runtime: bool = False) -> Any:
    def deco(fn: Any) -> Any:
        name = fn.__name__.removeprefix("p_")
        PROGRAMS[name] = Prog(name, fn, ordered)
        if spark_runtime:
            ON_SPARK_RUNTIME.add(name)
        return fn
    return deco


def emp(s: Any) -> Any:
    return s.createDataFrame(EMP, EMP_S)


NA_S = "k int, i int, l bigint, d double, f float, s string, b boolean, dec decimal(5,2)"
NA = [
    (0, 1, 10, 1.5, 2.5, "x", True, "1.25"),
    (1, None, None, None, None, None, None, None),
    (2, 3, None, float("nan"), float("nan"), "", False, None),
    (3, None, 40, 4.0, None, "y", None, "4.5"),
]


def na(s: Any) -> Any:
    from decimal import Decimal

    return s.createDataFrame([r[:-1] + (None if r[-1] is None else Decimal(r[-1]),)
                              for r in NA], NA_S)


def _rows(df: Any) -> Any:
    return (df.dtypes, df.orderBy("k").collect())


# -- simple methods ---------------------------------------------------------------------------


@program()
def p_simple_methods(s, F):
    df = emp(s)
    t = df.transform(lambda d, k: d.where(F.col("id") > k), 3)
    other = emp(s)
    return (t.orderBy("id").tail(2), t.tail(0), list(df.orderBy("id").toLocalIterator())[:3],
            df.sameSemantics(df), df.sameSemantics(other), df.sameSemantics(df.where("id > 0")),
            df.where("id > 1").sameSemantics(df.where("id > 1")),
            df.where("id > 1").semanticHash() == df.where("id > 1").semanticHash(),
            df.isLocal(), s.emptyDataFrame("a int, b string").count(),
            s.emptyDataFrame("a int, b string").columns,
            df.select(F.col("id").bitwiseAND(6).alias("x")).orderBy("x").collect(),
            df.select(F.col("id").transform(lambda c: c + 1)).orderBy("(id + 1)").collect())


@program()
def p_drop_duplicates_within_watermark_on_batch(s, F):
    return emp(s).dropDuplicatesWithinWatermark(["dept"]).count()


# -- na functions -----------------------------------------------------------------------------


@program()
def p_na_drop(s, F):
    d = na(s)
    return [_rows(x) for x in (
        d.na.drop(), d.dropna("all", subset=["i", "l"]), d.dropna(thresh=5), d.dropna(subset="d"),
        d.dropna(how=None, subset=("f", "s")), d.na.drop("any", 0), d.dropna(thresh=9))]


@program()
def p_na_fill(s, F):
    d = na(s)
    return [_rows(x) for x in (
        d.na.fill(0), d.fillna(2.7), d.fillna("z"), d.fillna(True), d.fillna(1, subset=["i", "s"]),
        d.fillna({"i": 9, "s": "w", "d": 0.5, "b": False, "dec": 1, "l": 2.5}),
        d.fillna(-1, "f"), d.na.fill("q", ["s", "i"]))]


@program()
def p_na_replace(s, F):
    d = na(s)
    return [_rows(x) for x in (
        d.na.replace(1, 100), d.replace([1.5, 4.0], [0.0, 9.0], "d"),
        d.replace({"x": "X", "": None}), d.replace(True, False), d.replace(float("nan"), 0.0),
        d.replace([3, 40], 7, ["i", "l", "s"]), d.replace({1.25: 2}), d.replace("x", "y", []),
        d.replace(["x", "y"], None))]


@program()
def p_na_bad_how(s, F):
    return na(s).dropna(how="some")


@program()
def p_na_bad_fill_value(s, F):
    return na(s).fillna([1])


@program()
def p_na_mixed_replacement(s, F):
    return na(s).replace({1: "a"})


@program()
def p_na_replace_needs_value(s, F):
    return na(s).replace(1)


@program()
def p_na_unknown_subset_column(s, F):
    return na(s).fillna(0, ["nope"])


# -- describe, summary, stat --------------------------------------------------------------------


def _table(df: Any) -> Any:
    return (df.columns, df.dtypes, sorted(tuple(r) for r in df.collect()))


@program()
def p_describe_summary(s, F):
    df = emp(s)
    from decimal import Decimal

    mixed = s.createDataFrame([(1, 2.5, "b", True, None), (3, None, "a", False, Decimal(1))],
                              "i smallint, d double, s string, b boolean, dec decimal(4,1)")
    return [_table(x) for x in (
        df.describe(), df.describe("name", "salary"), df.describe(["id"]), df.summary(),
        df.summary("count", "min", "33.3%", "count_distinct", "approx_count_distinct", "max"),
        df.select("name").summary("mean", "50%", "stddev"), mixed.describe(), mixed.summary(),
        mixed.select("b").describe(), df.where("id > 100").describe())]


@program()
def p_summary_unknown_statistic(s, F):
    return emp(s).summary("count", "median").collect()


@program()
def p_stat_functions(s, F):
    df = emp(s)
    return (df.corr("id", "salary"), df.stat.corr("salary", "id", "pearson"),
            df.cov("id", "dept"), df.stat.cov("salary", "mgr"),
            df.approxQuantile("salary", [0.0, 0.1, 0.5, 0.99, 1.0], 0.0),
            df.approxQuantile(["id", "dept"], [0.25, 0.75], 0.1),
            df.where("id > 100").approxQuantile("id", [0.5], 0.0),
            _table(df.crosstab("name", "dept")), _table(df.stat.crosstab("dept", "mgr")))


@program()
def p_corr_spearman(s, F):
    return emp(s).corr("id", "salary", "spearman")


# -- spark.sql parameters and formatting ---------------------------------------------------------


@program()
def p_sql_args(s, F):
    import datetime as dt
    from decimal import Decimal

    named = s.sql("SELECT :a, :b, :c, :d, :e, :f, :g, :h, :i, ':a' AS q -- :zz",
                  args={"a": 1, "b": "x'y", "c": 1.5, "d": dt.date(2020, 1, 2),
                        "e": dt.datetime(2020, 1, 2, 3, 4, 5), "f": Decimal("1.50"), "g": None,
                        "h": True, "i": 2 ** 40})
    positional = s.sql("SELECT ? + 1, ?, ? AS arr", args=[1, F.lit("z"), F.array(F.lit(1))])
    t = emp(s)
    formatted = s.sql("SELECT {c}, name FROM {t} WHERE {c} > :lo AND dept = {d}", t=t, c=t.id,
                      d=10, args={"lo": 1})
    twice = s.sql("SELECT count(*) FROM {t} a JOIN {t} b USING (id)", t=t)
    return [_table(x) for x in (named, positional, formatted, twice)]


@program()
def p_sql_unbound_named(s, F):
    return s.sql("SELECT :zz", args={"a": 1})


@program()
def p_sql_unbound_positional(s, F):
    return s.sql("SELECT ?, ?", args=[1])


@program()
def p_sql_mixed_parameters(s, F):
    return s.sql("SELECT :a, ?", args={"a": 1})


@program()
def p_sql_format_not_plain_column(s, F):
    t = emp(s)
    return s.sql("SELECT {c} FROM {t}", t=t, c=F.col("id") + 1)


# ---------------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def spark_outcomes(spark: Any) -> dict[str, Any]:
    """Every program's PySpark outcome, on a few threads (see test_dataframe_api)."""
    from concurrent.futures import ThreadPoolExecutor

    import pyspark.sql.functions as SF

    session = spark.newSession()
    session.conf.set("spark.sql.shuffle.partitions", "1")
    with ThreadPoolExecutor(max_workers=4) as pool:
        names = sorted(PROGRAMS)
        return dict(zip(names, pool.map(
            lambda n: outcome(session, SF, PROGRAMS[n], True), names)))


@pytest.mark.spark
@pytest.mark.differential
@pytest.mark.parametrize("name, runtime", [
    pytest.param(n, rt, id=f"{n}-{rt}") for n in sorted(PROGRAMS) for rt in RUNTIMES
    if rt == "local" or n in ON_SPARK_RUNTIME])
def test_method(spark_outcomes: dict[str, Any], name: str, runtime: str) -> None:
    import ember.functions as EF

    session = new_session({}, runtime)
    problem = compare(spark_outcomes[name], outcome(session, EF, PROGRAMS[name], False))
    if problem is not None:
        pytest.fail(f"program {name!r} ({runtime} runtime) differs from PySpark\n{problem}",
                    pytrace=False)
