"""DataFrame API end to end (expected values checked against PySpark 4.3)."""

import datetime as dt
from decimal import Decimal

import pandas as pd
import pyarrow as pa
import pytest

import ember
from ember import Row
from ember import functions as F
from ember.errors import AnalysisError


def test_create_from_ddl_rows_and_schema(spark):
    df = spark.createDataFrame([(1, "a", 1.5, True)], "a int, b string, c double, d boolean")
    assert df.columns == ["a", "b", "c", "d"]
    assert df.dtypes == [("a", "int"), ("b", "string"), ("c", "double"), ("d", "boolean")]
    assert df.schema.simpleString() == "struct<a:int,b:string,c:double,d:boolean>"
    f = df.schema.fields[0]
    assert (f.name, f.dataType, f.nullable) == ("a", ember.types.INT, True)
    assert df.collect() == [Row(a=1, b="a", c=1.5, d=True)]


def test_create_infers_types_like_pyspark(spark):
    df = spark.createDataFrame([(1, 1.5, "s", True, Decimal("1.25"), dt.date(2020, 1, 1),
                                 dt.datetime(2020, 1, 1, 1, 2, 3))])
    assert df.dtypes == [("_1", "bigint"), ("_2", "double"), ("_3", "string"),
                         ("_4", "boolean"), ("_5", "decimal(38,18)"), ("_6", "date"),
                         ("_7", "timestamp")]
    row = df.first()
    assert row._5 == Decimal("1.250000000000000000")
    assert row._7 == dt.datetime(2020, 1, 1, 1, 2, 3)


def test_create_from_names_dicts_rows_pandas_arrow(spark):
    assert spark.createDataFrame([(1, "x")], ["id", "s"]).dtypes == [("id", "bigint"),
                                                                      ("s", "string")]
    assert spark.createDataFrame([{"b": 1, "a": "x"}]).columns == ["a", "b"]
    assert spark.createDataFrame([Row(x=1, y=2)]).collect() == [Row(x=1, y=2)]
    pdf = pd.DataFrame({"a": [1, 2], "s": ["x", None]})
    df = spark.createDataFrame(pdf)
    assert df.dtypes == [("a", "bigint"), ("s", "string")]
    assert df.collect() == [Row(a=1, s="x"), Row(a=2, s=None)]
    tbl = pa.table({"a": pa.array([1, 2], pa.int32())})
    assert spark.createDataFrame(tbl).dtypes == [("a", "int")]


def test_print_schema(spark, capsys):
    spark.createDataFrame([(1, "a")], "a int, b string not null").printSchema()
    assert capsys.readouterr().out == (
        "root\n |-- a: integer (nullable = true)\n |-- b: string (nullable = false)\n\n")


def test_show_output_exact(spark, capsys):
    df = spark.createDataFrame([(1, "a", 1.5, True), (22, None, None, False),
                                (None, "x" * 25, 1e10, None)],
                               "a int, b string, c double, d boolean")
    df.show()
    assert capsys.readouterr().out == (
        "+----+--------------------+------+-----+\n"
        "|   a|                   b|     c|    d|\n"
        "+----+--------------------+------+-----+\n"
        "|   1|                   a|   1.5| true|\n"
        "|  22|                NULL|  NULL|false|\n"
        "|NULL|xxxxxxxxxxxxxxxxx...|1.0E10| NULL|\n"
        "+----+--------------------+------+-----+\n\n"
    )
    df.show(1)
    assert capsys.readouterr().out == (
        "+---+---+---+----+\n|  a|  b|  c|   d|\n+---+---+---+----+\n|  1|  a|1.5|true|\n"
        "+---+---+---+----+\nonly showing top 1 row\n\n"
    )


def test_join_on_string_list_and_column(kv):
    a, b = kv
    assert a.join(b, "k").collect() == [Row(k=1, v="x", w="p")]
    full = a.join(b, ["k"], "full").orderBy("k").collect()
    assert full == [Row(k=1, v="x", w="p"), Row(k=2, v="y", w=None), Row(k=3, v=None, w="q")]
    left = a.join(b, a.k == b.k, "left").orderBy(a.k).collect()
    assert [tuple(r) for r in left] == [(1, "x", 1, "p"), (2, "y", None, None)]
    assert a.join(b, a.k == b.k, "left").columns == ["k", "v", "k", "w"]
    assert a.join(b, "k", "left_anti").collect() == [Row(k=2, v="y")]
    assert a.join(b, [a.k == b.k], "semi").collect() == [Row(k=1, v="x")]


def test_self_joins(kv):
    a, _ = kv
    assert [tuple(r) for r in a.join(a, "k").orderBy("k").collect()] == [
        (1, "x", "x"), (2, "y", "y")]
    assert a.join(a, "k").columns == ["k", "v", "v"]
    derived = a.filter("k > 1")
    rows = a.join(derived, a.k == derived.k).collect()
    assert [tuple(r) for r in rows] == [(2, "y", 2, "y")]
    aliased = a.alias("l").join(a.alias("r"), F.col("l.k") == F.col("r.k")).select("l.k", "r.v")
    assert sorted(aliased.collect()) == [(1, "x"), (2, "y")]


def test_group_by_agg_names_and_values(spark):
    t = spark.createDataFrame([(1, 2, "x"), (1, 3, None), (2, 5, "z")], "a int, b int, s string")
    assert t.groupBy("a").count().columns == ["a", "count"]
    assert t.groupBy("a").sum("b").columns == ["a", "sum(b)"]
    assert t.groupBy("a").avg().columns == ["a", "avg(a)", "avg(b)"]
    assert t.groupBy("a").agg({"b": "max", "*": "count"}).columns == ["a", "max(b)", "count(1)"]
    out = t.groupBy("a").agg(F.sum("b").alias("sb"), F.countDistinct("s"), F.count("*")) \
        .orderBy("a").collect()
    assert out == [Row(a=1, sb=5, **{"count(DISTINCT s)": 1}, **{"count(1)": 2}),
                   Row(a=2, sb=5, **{"count(DISTINCT s)": 1}, **{"count(1)": 1})]
    assert t.count() == 3
    assert t.agg(F.max("b")).collect() == [Row(**{"max(b)": 5})]


def test_function_column_names_match_pyspark(spark):
    t = spark.createDataFrame([(1, 2, "x")], "a int, b int, s string")
    assert t.select(F.count("*"), F.count("a"), F.countDistinct("a"), F.sum("b"), F.avg("b"),
                    F.min("b"), F.first("s", ignorenulls=True), F.last("s"),
                    F.count_if(F.col("b") > 2), F.sum_distinct("b")).columns == [
        "count(1)", "count(a)", "count(DISTINCT a)", "sum(b)", "avg(b)", "min(b)", "first(s)",
        "last(s)", "count_if((b > 2))", "sum(DISTINCT b)"]
    assert t.select(F.col("a") + 1, F.col("a") * F.col("b"), (F.col("a") > 1) & F.col("s")
                    .isNotNull(), F.expr("a + b")).columns == [
        "(a + 1)", "(a * b)", "((a > 1) AND (s IS NOT NULL))", "(a + b)"]


def test_column_expressions_evaluate(spark):
    t = spark.createDataFrame([(1, 2, "xy"), (3, None, None)], "a int, b int, s string")
    rows = t.select(
        (F.col("a") + 1).alias("p"),
        F.when(F.col("a") > 1, "big").otherwise("small").alias("w"),
        F.coalesce("b", F.lit(0)).alias("c"),
        F.col("a").isin(1, 2).alias("i"),
        F.col("a").between(2, 3).alias("btw"),
        F.col("b").eqNullSafe(None).alias("ns"),
        F.col("a").cast("string").alias("cs"),
    ).collect()
    assert rows == [Row(p=2, w="small", c=2, i=True, btw=False, ns=False, cs="1"),
                    Row(p=4, w="big", c=0, i=False, btw=True, ns=True, cs="3")]


def test_projection_helpers(kv):
    a, _ = kv
    assert a.withColumn("v", F.lit(1)).columns == ["k", "v"]
    assert a.withColumn("z", F.lit(1)).collect()[0] == Row(k=1, v="x", z=1)
    assert a.withColumnRenamed("v", "vv").columns == ["k", "vv"]
    assert a.drop("v").columns == ["k"]
    assert a.drop(a.k).columns == ["v"]
    assert a.selectExpr("k + 1", "v as vv", "*").columns == ["(k + 1)", "vv", "k", "v"]
    assert a.select("*").columns == ["k", "v"]
    assert a["k"].expr.name == "k" and a.k.expr.id == a["k"].expr.id
    with pytest.raises(AnalysisError) as e:
        a.select("nope")
    assert e.value.error_class == "UNRESOLVED_COLUMN.WITH_SUGGESTION"
    with pytest.raises(AnalysisError):
        a["nope"]


def test_set_operations_sort_limit(kv):
    a, b = kv
    assert a.union(b).count() == 4
    assert a.union(a).distinct().count() == 2
    assert sorted(a.unionByName(a.select("v", "k")).collect()) == sorted(
        [Row(k=1, v="x"), Row(k=2, v="y")] * 2)
    wide = a.withColumn("z", F.lit(1.5))
    assert a.unionByName(wide, allowMissingColumns=True).orderBy("k", "z").columns == [
        "k", "v", "z"]
    with pytest.raises(AnalysisError) as e:
        a.unionByName(wide)
    assert e.value.error_class == "NUM_COLUMNS_MISMATCH"
    assert a.intersect(a).count() == 2
    assert a.subtract(a.filter("k = 1")).collect() == [Row(k=2, v="y")]
    assert a.exceptAll(a).count() == 0
    assert a.orderBy("k", ascending=False).collect()[0].k == 2
    assert a.orderBy(F.desc("k")).limit(1).collect() == [Row(k=2, v="y")]
    assert a.orderBy("k").offset(1).collect() == [Row(k=2, v="y")]
    assert a.join(F.broadcast(b), "k").count() == 1


def test_head_take_first_to_arrow_pandas(kv):
    a, _ = kv
    s = a.orderBy("k")
    assert s.first() == Row(k=1, v="x")
    assert s.head(1) == [Row(k=1, v="x")] == s.take(1)
    tbl = s.to_arrow()
    assert tbl.column_names == ["k", "v"] and tbl.num_rows == 2
    assert list(s.toPandas()["v"]) == ["x", "y"]


def test_temp_views_and_sql_commands(spark):
    t = spark.createDataFrame([(1, 2)], "a int, b int")
    t.createOrReplaceTempView("t")
    assert spark.sql("SELECT a + b AS s FROM t").collect() == [Row(s=3)]
    assert spark.sql("DESCRIBE t").collect() == [
        Row(col_name="a", data_type="int", comment=None),
        Row(col_name="b", data_type="int", comment=None)]
    assert spark.sql("CREATE TEMP VIEW v(x, y) AS SELECT a, b FROM t").columns == []
    assert spark.table("v").columns == ["x", "y"]
    assert [t.name for t in spark.catalog.listTables()] == ["t", "v"]
    spark.sql("DROP VIEW v")
    with pytest.raises(AnalysisError) as e:
        spark.table("v")
    assert e.value.error_class == "TABLE_OR_VIEW_NOT_FOUND"
    with pytest.raises(AnalysisError) as e:
        t.createTempView("t")
    assert e.value.error_class == "TEMP_TABLE_OR_VIEW_ALREADY_EXISTS"


def test_set_and_conf(spark):
    assert spark.sql("SET spark.foo=bar").collect() == [Row(key="spark.foo", value="bar")]
    assert spark.sql("SET spark.foo").collect() == [Row(key="spark.foo", value="bar")]
    assert spark.sql("SET spark.nope").collect() == [Row(key="spark.nope", value="<undefined>")]
    spark.conf.set("spark.sql.caseSensitive", True)
    assert spark.conf.get("spark.sql.caseSensitive") == "true"
    spark.conf.unset("spark.sql.caseSensitive")
    assert spark.conf.get("spark.sql.caseSensitive") == "false"


def test_explain(spark, capsys):
    t = spark.createDataFrame([(1, 2)], "a int, b int")
    t.filter("a > 1").select("a").explain(mode="extended")
    out = capsys.readouterr().out
    assert "== Parsed Logical Plan ==" in out
    assert "== Analyzed Logical Plan ==\na: int\nProject [a#" in out
    assert "== Optimized Logical Plan ==" in out
    plan = spark.sql("EXPLAIN SELECT 1 AS x")
    assert plan.columns == ["plan"]
    assert "Project" in plan.first().plan


def test_files(spark, tmp_path):
    import pyarrow.parquet as pq

    pq.write_table(pa.table({"id": pa.array([1, 2], pa.int64()), "s": ["a", "b"]}),
                   tmp_path / "t.parquet")
    (tmp_path / "t.csv").write_text("id,name,score\n1,ann,1.5\n2,bob,\n")
    p = spark.read.parquet(str(tmp_path / "t.parquet"))
    assert p.dtypes == [("id", "bigint"), ("s", "string")] and p.count() == 2
    c = spark.read.csv(str(tmp_path / "t.csv"), header=True, inferSchema=True)
    assert c.dtypes == [("id", "int"), ("name", "string"), ("score", "double")]
    assert c.orderBy("id").collect() == [Row(id=1, name="ann", score=1.5),
                                         Row(id=2, name="bob", score=None)]
    s = spark.read.format("csv").option("header", "true").load(str(tmp_path / "t.csv"))
    assert s.dtypes == [("id", "string"), ("name", "string"), ("score", "string")]
    spark.sql(f"CREATE TEMP VIEW pv USING parquet OPTIONS (path '{tmp_path / 't.parquet'}')")
    assert spark.sql("SELECT sum(id) AS n FROM pv").collect() == [Row(n=3)]


def test_builder_get_or_create():
    s = ember.Session.builder.appName("x").config("spark.sql.shuffle.partitions", 4).getOrCreate()
    assert s.conf.get("spark.sql.shuffle.partitions") == "4"
    assert ember.Session.builder.getOrCreate() is s
    s.stop()


def test_batch_size_one_still_correct():
    s = ember.Session({"ember.execution.batchSize": 2})
    df = s.createDataFrame([(i % 3, i) for i in range(10)], "g int, v int")
    assert df.groupBy("g").agg(F.sum("v").alias("t")).orderBy("g").collect() == [
        Row(g=0, t=18), Row(g=1, t=12), Row(g=2, t=15)]


def test_broadcast_hint_reaches_the_join(kv):
    a, b = kv
    plan = a.join(F.broadcast(b), "k").plan
    join = plan.find(lambda p: type(p).__name__ == "Join")
    assert join.hint.right == ("BROADCAST",)
    assert a.join(F.broadcast(b), "k").collect() == [Row(k=1, v="x", w="p")]


def test_scalar_functions_resolve_through_the_registry(spark):
    t = spark.createDataFrame([(" Ab ", 2.567, dt.date(2024, 3, 5), -3)],
                              "x string, d double, dt date, n int")
    r = t.select(F.upper("x").alias("u"), F.trim("x").alias("t"), F.length("x").alias("l"),
                 F.substring("x", 2, 2).alias("ss"), F.round("d", 1).alias("r"),
                 F.year("dt").alias("y"), F.date_add("dt", 1).alias("da"),
                 F.greatest("n", F.lit(0)).alias("g"), F.concat_ws("-", "x", "x").alias("c"),
                 F.struct("n", "d").alias("st")).first()
    assert r == Row(u=" AB ", t="Ab", l=4, ss="Ab", r=2.6, y=2024, da=dt.date(2024, 3, 6), g=0,
                    c=" Ab - Ab ", st=Row(n=-3, d=2.567))
    assert r.st.n == -3


def test_csv_view_using_with_options(spark, tmp_path):
    (tmp_path / "x.csv").write_text("a,b,c\n1,2020-01-01,x\n3000000000,2020-01-02,\n")
    spark.sql(f"CREATE TEMP VIEW c USING csv OPTIONS (path '{tmp_path / 'x.csv'}', "
              "header 'true', inferSchema 'true')")
    df = spark.table("c")
    assert df.dtypes == [("a", "bigint"), ("b", "date"), ("c", "string")]
    assert df.collect()[1] == Row(a=3000000000, b=dt.date(2020, 1, 2), c=None)
    assert spark.read.csv(str(tmp_path)).columns == ["_c0", "_c1", "_c2"]


def test_range_vertical_show_and_record_batch(spark, capsys):
    assert spark.range(3).collect() == [Row(id=0), Row(id=1), Row(id=2)]
    assert spark.range(3).schema.fields[0].nullable is False
    spark.createDataFrame([(1, "a")], "a int, b string").show(vertical=True)
    assert capsys.readouterr().out == "-RECORD 0--\n a   | 1   \n b   | a   \n\n"
    batch = pa.RecordBatch.from_pydict({"x": pa.array([1, 2], pa.int16())})
    assert spark.createDataFrame(batch).dtypes == [("x", "smallint")]


def test_repartition_and_coalesce_plan_spark_exchanges(spark):
    """The physical plans name Spark's operators as Spark's EXPLAIN does."""
    df = spark.range(10)

    def plan(d):
        return d._qe.explain_string("simple")

    assert "Exchange RoundRobinPartitioning(4), REPARTITION_BY_NUM" in plan(df.repartition(4))
    assert "Exchange hashpartitioning(id#" in plan(df.repartition(3, "id"))
    assert "L, 200), REPARTITION_BY_COL" in plan(df.repartition("id"))
    assert "ASC NULLS FIRST, 3), REPARTITION_BY_NUM" in plan(df.repartitionByRange(3, "id"))
    text = plan(df.repartition(8).coalesce(3))
    assert text.index("Coalesce 3") < text.index("Exchange RoundRobinPartitioning(8)")
    assert "Repartition 3, false" in df.coalesce(3)._qe.explain_string("extended")


def test_repartition_needs_a_positive_number(spark):
    # Spark: IllegalArgumentException (no error class) with this message
    with pytest.raises(AnalysisError, match=r"requirement failed: Number of partitions \(0\) "
                                            r"must be positive."):
        spark.range(3).coalesce(0)
