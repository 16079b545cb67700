"""Differential test of the DataFrame, Column, GroupedData and Session methods added for
PySpark parity (issue 22): each program runs unchanged on PySpark and on Ember (both runtimes)
and the results must match, as in :mod:`tests.differential.test_dataframe_api`.  A program
batches many checks into one result (a tuple of values), so the whole file costs the oracle a
handful of jobs."""

from __future__ import annotations

import atexit
import os
import shutil
import tempfile
from typing import Any

import pytest
from pyspark.sql import types as PT

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
def p_checkpoint(s, F):
    df = emp(s).where("salary > 60")
    c = df.localCheckpoint()  # checkpoint() needs a checkpoint directory in Spark
    lc = df.localCheckpoint(eager=False)
    return ([_table(x) for x in (c, lc, c.join(df, "id").select(df.name, c.dept))],
            c.columns, c.dtypes, c.where(c.dept == 10).count())


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


# -- cache, persist ----------------------------------------------------------------------------


@program()
def p_cache_persist_unpersist(s, F):
    df = emp(s).where("salary > 60")
    levels = [repr(df.storageLevel)]
    c = df.cache()
    levels += [repr(c.storageLevel), c.is_cached, repr(df.select("*").storageLevel)]
    first = _table(c.groupBy("dept").agg(F.sum("salary").alias("s")))
    again = _table(c.where("dept = 10").join(c.select("id", "name"), "id"))
    level = type(c.storageLevel)
    d = emp(s).select("id", "dept").persist(level.DISK_ONLY)
    levels += [repr(d.storageLevel), repr(d.cache().storageLevel)]
    both = _table(d.join(c, "id"))
    c.unpersist()
    levels += [repr(c.storageLevel), repr(d.storageLevel)]
    after = _table(c.groupBy("dept").agg(F.sum("salary").alias("s")))
    d.unpersist()
    return levels, first, again, both, after, repr(d.storageLevel)


@program(spark_runtime=True)
def p_cache_on_both_runtimes(s, F):
    c = emp(s).where("salary > 60").cache()
    out = (repr(c.storageLevel), _table(c.groupBy("dept").count()), _table(c.select("id")))
    c.unpersist()
    return out, repr(c.storageLevel)


# -- sample, randomSplit ------------------------------------------------------------------------


@program()
def p_sample_and_random_split(s, F):
    """The rows for a seed differ from Spark's (another generator); what must agree: the
    extremes, the size within 4 standard deviations, a seed's rows drawn again, and splits
    that are disjoint and cover every row."""
    df = s.range(0, 4000, 1, 3).withColumn("g", F.col("id") % 7)

    def rows(d):
        return sorted(tuple(r) for r in d.collect())

    n = df.sample(0.25, seed=11).count()
    m = df.sample(True, 1.5, 5).count()
    splits = df.randomSplit([1.0, 2.0, 1.0], seed=3)
    sizes = [x.count() for x in splits]
    return (df.sample(0.0).count(), df.sample(1.0).count(), df.sample(False, 1.0, 1).count(),
            abs(n - 1000) < 4 * (4000 * 0.25 * 0.75) ** 0.5, abs(m - 6000) < 4 * 6000 ** 0.5,
            rows(df.sample(0.1, 42)) == rows(df.sample(0.1, 42)),
            sum(sizes), all(abs(k - e) < 4 * (4000 * 0.25) ** 0.5
                            for k, e in zip(sizes, (1000, 2000, 1000))),
            splits[0].union(splits[1]).union(splits[2]).distinct().count(),
            splits[0].join(splits[1], "id").count())


@program()
def p_sample_by(s, F):
    df = s.range(0, 6000, 1, 2).withColumn("g", F.col("id") % 3)
    out = df.sampleBy("g", {0: 0.5, 1: 1.0, 5: 0.3}, seed=4)
    per = {r[0]: r[1] for r in out.groupBy("g").count().collect()}
    other = df.stat.sampleBy(F.col("g"), {2: 0.0}, 1)
    return (sorted(per), per[1], abs(per[0] - 1000) < 4 * (2000 * 0.25) ** 0.5,
            other.count(), out.columns)


@program(spark_runtime=True)
def p_sample_in_spark_tasks(s, F):
    df = s.range(0, 3000, 1, 3)
    splits = df.randomSplit([1.0, 2.0], seed=3)
    kept = splits[0].count()
    return abs(kept - 1000) < 4 * (3000 * 2 / 9) ** 0.5, kept + splits[1].count()


@program()
def p_sample_bad_arguments(s, F):
    return emp(s).sample("x")


# -- repartition, coalesce ------------------------------------------------------------------------


@program()
def p_repartition_and_coalesce(s, F):
    df = emp(s)
    r = s.range(0, 200, 1, 4)
    return ([_table(x) for x in (df.repartition(3), df.repartition(2, "dept"),
                                 df.repartition("dept", F.col("mgr")), df.coalesce(2),
                                 df.repartition(5).coalesce(2).where("id > 2"),
                                 df.repartitionByRange(2, F.col("salary").desc()))],
            # range partitions are in key order, so sorting within them sorts the whole result
            [tuple(x) for x in r.repartitionByRange(3, "id").sortWithinPartitions("id")
             .collect()] == [(i,) for i in range(200)],
            [tuple(x) for x in r.repartitionByRange(5, F.col("id").desc()).sortWithinPartitions(
                F.col("id").desc()).collect()] == [(i,) for i in range(199, -1, -1)],
            [tuple(x) for x in r.coalesce(1).sortWithinPartitions("id").limit(3).collect()])


@program(spark_runtime=True)
def p_repartition_and_coalesce_exchanges(s, F):
    r = s.range(0, 60, 1, 4)
    return ([tuple(x) for x in r.repartitionByRange(3, "id").sortWithinPartitions("id")
             .collect()] == [(i,) for i in range(60)],
            _table(r.repartition(3).coalesce(2).where("id % 7 = 0")))


@program()
def p_repartition_by_range_without_columns(s, F):
    return emp(s).repartitionByRange(3)


@program()
def p_repartition_bad_argument(s, F):
    return emp(s).repartition(1.5)


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


# -- transpose, to(schema), colRegex (ember.dataframe_shape) ------------------------------------

SHAPE_S = "k string, x int, y double"
SHAPE = [("b", 1, 2.0), ("a", 3, None), (None, 5, 6.5), ("c", None, 1.0), ("d", 2, -0.0)]


def shape(s: Any) -> Any:
    return s.createDataFrame(SHAPE, SHAPE_S)


def _ordered(df: Any) -> Any:
    return (df.columns, df.dtypes, [tuple(r) for r in df.collect()])


@program()
def p_transpose(s, F):
    df = shape(s)
    # equal index values make equally named columns (their order is Spark's sort's, so equal
    # rows here)
    dbl = s.createDataFrame([(1.5, 1), (float("nan"), 2), (None, 3), (1.5, 1), (-1.0, 5)],
                            "i double, a int")
    num = s.createDataFrame([(2, 1.5, 2, 7), (1, None, 3, None)], "i int, a double, b bigint, c int")
    dates = s.createDataFrame([(2, "x", "y")], "d int, p string, q string").selectExpr(
        "date_add(date'2024-01-01', d) AS d", "p", "q")
    return [_ordered(x) for x in (
        df.select("x", "y").transpose(), df.transpose("k").select("key"),
        df.select("k", "x").transpose(), df.select("k", "x", "y").transpose(F.col("k")),
        dbl.transpose(), dbl.select("i").transpose(), dbl.filter("a > 10").transpose(),
        num.transpose(), num.transpose("b"), dates.transpose())]


@program()
def p_transpose_no_common_type(s, F):
    return shape(s).transpose("x")


@program()
def p_transpose_index_not_atomic(s, F):
    return shape(s).select(F.array("x").alias("q"), "y").transpose()


@program()
def p_transpose_too_many_rows(s, F):
    return s.range(501).transpose()


def _schema(ddl: list[tuple[str, Any, bool]]) -> Any:

    return PT.StructType([PT.StructField(n, t, nullable) for n, t, nullable in ddl])


@program()
def p_to_schema(s, F):

    df = shape(s)
    nested = df.select(F.struct("x", "k").alias("st"), "y")
    st = PT.StructType([PT.StructField("k", PT.StringType()), PT.StructField("x", PT.LongType())])
    return [_table(x) for x in (
        df.to(_schema([("y", PT.DoubleType(), True), ("x", PT.LongType(), True),
                       ("k", PT.StringType(), True)])),
        df.to(_schema([("y", PT.FloatType(), True), ("q", PT.IntegerType(), True)])),
        df.to(_schema([("X", PT.ShortType(), True), ("K", PT.StringType(), True)])),
        df.to(_schema([("x", PT.StringType(), True), ("y", PT.DecimalType(10, 2), True)])),
        nested.to(_schema([("st", st, True), ("y", PT.DoubleType(), True)])),
        df.where("x > 1").to(_schema([("k", PT.StringType(), True)])))]


@program()
def p_to_non_nullable_column(s, F):

    return shape(s).to(_schema([("x", PT.IntegerType(), False)]))


@program()
def p_to_missing_non_nullable_column(s, F):

    return shape(s).to(_schema([("zz", PT.IntegerType(), False)]))


@program()
def p_to_uncastable_type(s, F):

    return shape(s).to(_schema([("k", PT.IntegerType(), True)]))


@program()
def p_to_ambiguous_column(s, F):

    df = shape(s)
    return df.select("x", F.col("y").alias("X")).to(_schema([("x", PT.DoubleType(), True)]))


@program()
def p_col_regex(s, F):
    df = shape(s)
    t = df.alias("t")
    j = df.alias("l").join(df.alias("r"), "k")
    return ([df.select(df.colRegex(p)).columns
             for p in ("`(x|Y)`", "`.*`", "`x.`", "`zz`", "`k|y`", "x", "`[a-z]`")],
            t.select(t.colRegex("t.`[kx]`")).columns, j.select(j.colRegex("r.`.*`")).columns,
            _table(df.select(df.colRegex("`[xy]`"), (F.col("x") + 1).alias("z"))))


# -- observe, GroupedData.apply, Column.isNaN ---------------------------------------------------


def _observation(F: Any) -> Any:
    if F.__name__.startswith("ember"):
        from ember import Observation
    else:
        from pyspark.sql import Observation
    return Observation


@program(spark_runtime=True)
def p_observe(s, F):
    Observation = _observation(F)
    df = shape(s)
    a, b, c = Observation("a"), Observation(), Observation("c")
    seen = df.observe(a, F.count(F.lit(1)).alias("rows"), F.max("x").alias("mx"), F.sum("y"),
                      (F.avg("x") * 2 + 1).alias("e"), F.sum(F.rand(3)).isNotNull().alias("r"))
    rows = seen.where("x > 1").collect()
    n = df.observe(b, F.count_if(F.col("k").isNull()).alias("nk"), F.lit(7).alias("seven"),
                   F.min("k")).groupBy("k").count().count()
    df.observe("named", F.count(F.lit(1))).count()
    empty = df.where("x > 100").observe(c, F.count(F.lit(1)).alias("n"), F.sum("x").alias("s"))
    return sorted(map(tuple, rows)), n, a.get, b.get, empty.count(), c.get


@program()
def p_observe_attribute_metric(s, F):
    return shape(s).observe(_observation(F)(), F.col("x").alias("c")).count()


@program()
def p_observe_nondeterministic_metric(s, F):
    return shape(s).observe(_observation(F)(), (F.rand(1) + F.sum("x")).alias("c")).count()


@program()
def p_observe_distinct_metric(s, F):
    return shape(s).observe(_observation(F)(), F.count_distinct("x").alias("c")).count()


@program()
def p_observation_reused(s, F):
    o = _observation(F)()
    shape(s).observe(o, F.count(F.lit(1)).alias("c")).count()
    return shape(s).observe(o, F.count(F.lit(1)).alias("c")).count()


def _centered(pdf: Any) -> Any:
    return pdf.assign(x=pdf.x - pdf.x.mean())


@program(spark_runtime=True)
def p_grouped_apply_and_isnan(s, F):
    import warnings

    from pyspark.sql.functions import PandasUDFType

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # GROUPED_MAP pandas UDFs are deprecated in PySpark
        centered = F.pandas_udf(_centered, "k string, x double", PandasUDFType.GROUPED_MAP)
    df = shape(s).where("k IS NOT NULL").select("k", F.col("x").cast("double").alias("x"))
    nan = s.createDataFrame([(float("nan"),), (1.0,), (None,)], "d double")
    return (_table(df.groupBy("k").apply(centered)),
            _table(nan.select(F.col("d").isNaN().alias("n"), F.col("d"))),
            _table(shape(s).select(F.col("x").bitwiseOR(6).alias("o"),
                                   F.col("x").bitwiseXOR(F.lit(3)).alias("x"),
                                   F.col("x").cast("bigint").bitwiseOR(F.col("x")))))


# -- Python UDTFs (ember.udtf), call_function ------------------------------------------------


class _Squares:
    def eval(self, start: int, end: int):
        for n in range(start, end + 1):
            yield n, n * n


class _Words:
    def __init__(self):
        self.calls = 0

    def eval(self, text: str, sep: str):
        self.calls += 1
        if text is not None:
            for w in text.split(sep):
                yield w, len(w), None if not w else w[0]

    def terminate(self):
        yield "calls", self.calls, "t"


class _Single:
    def eval(self, x: float):
        yield x * 2
        yield None


class _TooWide:
    def eval(self):
        yield 1, 2


@program(spark_runtime=True)
def p_python_udtf(s, F):
    squares = F.udtf(_Squares, returnType="num int, sq bigint")
    words = F.udtf(_Words, returnType="w string, n int, first string")
    single = F.udtf(_Single, returnType="d double")
    s.udtf.register("squares_u", squares)
    s.udtf.register("words_u", words)
    return [_table(x) for x in (
        squares(F.lit(1), F.lit(4)), words(F.lit("a bb  ccc"), F.lit(" ")),
        single(F.lit(1.5)), s.sql("SELECT * FROM squares_u(2, 3)"),
        s.sql("SELECT sq * 2 AS d, num FROM squares_u(0, 5) WHERE sq > 3"),
        s.sql("SELECT * FROM words_u('x-yy', '-') AS t(a, b, c)"),
        s.sql("SELECT count(*), sum(n) FROM words_u(NULL, ',')"),
        s.sql("SELECT * FROM squares_u(3, 1)"))]


@program()
def p_python_udtf_too_wide(s, F):
    return F.udtf(_TooWide, returnType="a int")()


@program()
def p_python_udtf_alias_mismatch(s, F):
    s.udtf.register("squares_a", F.udtf(_Squares, returnType="num int, sq bigint"))
    return s.sql("SELECT * FROM squares_a(1, 2) AS t(a)")


@program()
def p_call_function(s, F):
    s.udf.register("plus_one_u", lambda v: None if v is None else v + 1, "int")
    df = shape(s)
    return _table(df.select(F.call_function("upper", "k"), F.call_function("abs", F.col("x")),
                            F.call_udf("plus_one_u", F.col("x")).alias("p"),
                            F.call_function("plus_one_u", "x").alias("q")))


@program()
def p_to_json(s, F):
    import datetime as dt

    df = s.createDataFrame(
        [(1, "a\"b", None, [1, None], {"k": 2.5}, dt.date(2024, 2, 29), (True, None))],
        "i int, s string, n double, a array<int>, m map<string,double>, d date, "
        "st struct<b: boolean, z: string>").union(shape(s).selectExpr(
            "x", "k", "y", "array(x)", "map(coalesce(k, '-'), y)", "date'2020-01-01'",
            "named_struct('b', x > 1, 'z', k)"))
    out = df.toJSON()
    # PySpark's classic toJSON is an RDD of strings; Ember's (as Spark Connect's) a DataFrame
    return sorted(r if isinstance(r, str) else r.value for r in out.collect())


@program()
def p_tvf(s, F):
    t = s.tvf
    arr = F.array(F.lit(1), F.lit(None).cast("int"), F.lit(3))
    structs = F.array(F.struct(F.lit(1).alias("a"), F.lit("x").alias("b")))
    return [_table(x) for x in (
        t.range(3), t.range(1, 7, 2), t.explode(arr), t.explode_outer(F.array().cast("array<int>")),
        t.posexplode(arr), t.posexplode_outer(F.create_map(F.lit("k"), F.lit(2.5))),
        t.inline(structs), t.inline_outer(structs),
        t.json_tuple(F.lit('{"a": 1, "b": "q"}'), F.lit("a"), F.lit("b"), F.lit("c")),
        t.stack(F.lit(2), F.lit(1), F.lit("u"), F.lit(2), F.lit("v")))]


# -- the text source -------------------------------------------------------------------------

TEXT_DIR = tempfile.mkdtemp(prefix="ember-text-")
atexit.register(shutil.rmtree, TEXT_DIR, True)
for _name, _data in {"a.txt": b"hello\nworld\r\n\nlast", "b.txt": b"x|y|z\n", "e.txt": b"",
                     "parted/p=1/c.txt": b"ab\xffc\r\rd\n\n", "parted/p=2/c.txt": b"q"}.items():
    os.makedirs(os.path.dirname(os.path.join(TEXT_DIR, _name)), exist_ok=True)
    with open(os.path.join(TEXT_DIR, _name), "wb") as _f:
        _f.write(_data)


@program(spark_runtime=True)
def p_text_source(s, F):
    d = TEXT_DIR
    return [_table(x) for x in (
        s.read.text(d + "/a.txt"), s.read.text(d + "/parted", wholetext=True),
        s.read.text([d + "/a.txt", d + "/b.txt"], lineSep="|"),
        s.read.format("text").load(d + "/parted"), s.read.text(d + "/parted/p=1"),
        s.read.text([d + "/a.txt", d + "/b.txt", d + "/e.txt"], wholetext=True),
        s.read.schema("line string").text(d + "/b.txt"),
        s.sql(f"SELECT value, length(value) FROM text.`{d}/a.txt`"),
        s.read.option("wholetext", "true").format("text").load(d + "/e.txt"))]


@program()
def p_text_source_bad_schema(s, F):
    return s.read.schema("v int").text(TEXT_DIR + "/a.txt")


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
