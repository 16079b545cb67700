"""Differential test of the DataFrame API: PySpark programs run unchanged on Ember.

Ember promises that ordinary PySpark join/aggregate code runs after changing the import
(``import ember.functions as F``, ``ember.Session()``). Each program below is written ONCE as
``prog(session, F)`` and runs twice: with (a PySpark session, ``pyspark.sql.functions``) and with
(``ember.Session()``, ``ember.functions``). Results must match:

* a DataFrame result: column names, ``simpleString`` types, and rows (a multiset unless the
  program is registered ``ordered=True``, i.e. it ends in ``orderBy``); floats compared with a
  relative tolerance;
* any other result (``collect()`` Row access, ``count()``, ``columns`` ...): equal after the same
  normalisation;
* a program that fails must fail on both with the same error class (Ember ``err.error_class``,
  PySpark ``e.getCondition()``).

Run: ``/work/venv/bin/python -m pytest tests/differential/test_dataframe_api.py``.
"""

from __future__ import annotations

import datetime as _dt
from decimal import Decimal
from typing import Any, Callable

import pytest

from tests.conformance.ember_adapter import RUNTIMES, new_session
from tests.differential.compare import Failed, norm_value, sort_key

# ---------------------------------------------------------------------------------------------
# Shared data

EMP_S = "id int, name string, dept int, salary double, mgr int"
EMP = [
    (1, "alice", 10, 100.0, None),
    (2, "bob", 10, 80.5, 1),
    (3, "carol", 20, 120.25, 1),
    (4, "dan", None, 50.0, 2),
    (5, "eve", 30, None, 3),
    (6, "bob", 20, 80.5, 3),
]
DEPT_S = "dept int, dname string, loc string"
DEPT = [(10, "eng", "sf"), (20, "ops", "ny"), (40, "hr", None), (None, "none", "la")]
NUM_S = "k int, v bigint"
NUM_A = [(1, 10), (1, 10), (2, 20), (3, None), (None, 5)]
NUM_B = [(1, 10), (2, 20), (2, 20), (4, 40), (None, 5)]


def emp(s: Any) -> Any:
    return s.createDataFrame(EMP, EMP_S)


def dept(s: Any) -> Any:
    return s.createDataFrame(DEPT, DEPT_S)


# ---------------------------------------------------------------------------------------------
# Program registry


class Prog:
    def __init__(self, name: str, fn: Callable[[Any, Any], Any], ordered: bool) -> None:
        self.name, self.fn, self.ordered = name, fn, ordered


PROGRAMS: dict[str, Prog] = {}


def program(ordered: bool = False) -> Callable[[Callable[[Any, Any], Any]], Callable[[Any, Any], Any]]:
    def deco(fn: Callable[[Any, Any], Any]) -> Callable[[Any, Any], Any]:
        name = fn.__name__.removeprefix("p_")
        PROGRAMS[name] = Prog(name, fn, ordered)
        return fn
    return deco


def add_program(name: str, fn: Callable[[Any, Any], Any], ordered: bool = False) -> None:
    PROGRAMS[name] = Prog(name, fn, ordered)


# -- projection and filters -------------------------------------------------------------------


@program()
def p_select_names(s, F):
    return emp(s).select("id", "name")


@program()
def p_select_exprs(s, F):
    e = emp(s)
    return e.select(F.col("id") + 1, (F.col("salary") * 2).alias("s2"), F.lit(1), F.lit("x"),
                    e.id * e.dept, -F.col("id"), F.lit(None))


@program()
def p_select_star_and_df_item(s, F):
    e = emp(s)
    return e.select("*", e["id"].alias("id2"), e.name)


@program()
def p_where_column(s, F):
    return emp(s).where(F.col("salary") > 80)


@program()
def p_filter_sql_string(s, F):
    return emp(s).filter("dept = 10 and salary > 50")


@program()
def p_where_chain(s, F):
    e = emp(s)
    return e.where(e.dept.isNotNull()).where(e["salary"] < 100)


@program()
def p_bool_ops(s, F):
    e = emp(s)
    return e.where(((e.salary > 90) | (e.dept == 30)) & ~(e.name == "carol"))


@program()
def p_when_otherwise(s, F):
    c = F.col("salary")
    return emp(s).select("id", F.when(c > 100, "high").when(c > 60, "mid").otherwise("low")
                         .alias("band"))


@program()
def p_when_unaliased(s, F):
    return emp(s).select(F.when(F.col("dept") == 10, 1).otherwise(0))


@program()
def p_coalesce(s, F):
    e = emp(s)
    return e.select("id", F.coalesce(e.dept, F.lit(-1)).alias("d"), F.coalesce("salary", "mgr"))


@program()
def p_isin(s, F):
    return emp(s).where(F.col("name").isin("bob", "eve") | F.col("id").isin([1, 2]))


@program()
def p_between(s, F):
    return emp(s).where(F.col("salary").between(80, 120))


@program()
def p_like(s, F):
    return emp(s).where(F.col("name").like("%o%")).select("name")


@program()
def p_cast(s, F):
    e = emp(s)
    return e.select(F.col("salary").cast("int"), F.col("id").cast("string").alias("sid"),
                    e.dept.cast("bigint"), F.col("salary").cast("decimal(10,2)"))


@program()
def p_is_null(s, F):
    e = emp(s)
    return e.where(F.col("salary").isNull() | e.dept.isNull()).select("id", e.salary.isNull())


@program()
def p_select_expr(s, F):
    return emp(s).selectExpr("id * 2 as id2", "upper(name)", "salary + 1", "*")


@program()
def p_expr_function(s, F):
    return emp(s).select(F.expr("id + dept"), F.expr("length(name) AS n"))


@program()
def p_string_functions(s, F):
    return emp(s).select(F.upper("name"), F.length(F.col("name")), F.concat("name", F.lit("!")))


# -- column manipulation -----------------------------------------------------------------------


@program()
def p_with_column(s, F):
    return (emp(s).withColumn("bonus", F.col("salary") * 0.1)
            .withColumn("salary", F.coalesce("salary", F.lit(0.0))))


@program()
def p_with_column_renamed(s, F):
    return emp(s).withColumnRenamed("name", "n").withColumnRenamed("nope", "x")


@program()
def p_drop(s, F):
    e = emp(s)
    return e.drop("mgr", "nope").drop(e.salary)


# -- joins -------------------------------------------------------------------------------------

HOWS = ["inner", "cross", "left", "left_outer", "right", "full", "outer", "semi", "left_semi",
        "anti", "left_anti"]


def _join_using(how: str) -> Callable[[Any, Any], Any]:
    def prog(s, F):
        return emp(s).join(dept(s), "dept", how)
    return prog


def _join_using_list(how: str) -> Callable[[Any, Any], Any]:
    def prog(s, F):
        return emp(s).join(dept(s), ["dept"], how)
    return prog


def _join_cond(how: str) -> Callable[[Any, Any], Any]:
    def prog(s, F):
        e, d = emp(s), dept(s)
        return e.join(d, e.dept == d.dept, how)
    return prog


for _how in HOWS:
    add_program(f"join_using_{_how}", _join_using(_how))
    add_program(f"join_cond_{_how}", _join_cond(_how))
for _how in ["inner", "full"]:
    add_program(f"join_using_list_{_how}", _join_using_list(_how))


@program()
def p_join_default_how(s, F):
    e, d = emp(s), dept(s)
    return e.join(d, e.dept == d.dept)


@program()
def p_join_compound_condition(s, F):
    e, d = emp(s), dept(s)
    return e.join(d, (e.dept == d.dept) & (d.loc != "ny"), "left")


@program()
def p_join_condition_list(s, F):
    e, d = emp(s), dept(s)
    return e.join(d, [e.dept == d.dept, e.salary > 60], "full")


@program()
def p_join_select_qualified(s, F):
    e, d = emp(s), dept(s)
    return e.join(d, e.dept == d.dept, "left").select(e.name, d.dept, d["dname"])


@program()
def p_join_renamed_key(s, F):
    e = emp(s)
    d = dept(s).withColumnRenamed("dept", "d")
    return e.join(d, e.dept == F.col("d")).select("name", "d", "loc")


@program()
def p_join_null_safe(s, F):
    e, d = emp(s), dept(s)
    return e.join(d, e.dept.eqNullSafe(d.dept)).select("id", "dname")


@program()
def p_self_join_alias(s, F):
    e = emp(s)
    a, b = e.alias("a"), e.alias("b")
    return (a.join(b, F.col("a.mgr") == F.col("b.id"), "left")
            .select(F.col("a.name"), F.col("b.name").alias("mgr_name")))


@program()
def p_self_join_alias_star(s, F):
    e = emp(s)
    return (e.alias("a").join(e.alias("b"), F.col("a.id") == F.col("b.mgr"))
            .select("a.*", F.col("b.id").alias("report")))


@program()
def p_self_join_df_columns(s, F):
    e = emp(s)
    m = e.select(F.col("id").alias("mid"), F.col("name").alias("mname"))
    return e.join(m, e.mgr == m.mid, "inner").select("name", "mname")


@program()
def p_cross_join(s, F):
    return emp(s).select("id").crossJoin(dept(s).select("dname"))


@program()
def p_three_way_join(s, F):
    e, d = emp(s), dept(s)
    m = e.select(F.col("id").alias("mid"), F.col("name").alias("mname"))
    return e.join(d, "dept", "left").join(m, e.mgr == m.mid, "left").select("name", "dname",
                                                                            "mname")


@program()
def p_join_hint_broadcast(s, F):
    return emp(s).join(dept(s).hint("broadcast"), "dept")


@program()
def p_join_f_broadcast(s, F):
    e, d = emp(s), dept(s)
    return e.join(F.broadcast(d), e.dept == d.dept, "left").select("id", "dname")


@program(ordered=True)
def p_join_then_group(s, F):
    return (emp(s).join(dept(s), "dept").groupBy("dname")
            .agg(F.sum("salary").alias("total"), F.count("*").alias("n")).orderBy("dname"))


# -- aggregation -------------------------------------------------------------------------------


@program()
def p_group_agg_basic(s, F):
    return emp(s).groupBy("dept").agg(F.count("*"), F.count("salary"), F.countDistinct("name"),
                                      F.sum("salary"), F.avg("salary"), F.min("name"),
                                      F.max("salary"))


@program()
def p_group_agg_aliases(s, F):
    return emp(s).groupBy(F.col("dept")).agg(F.sum("id").alias("sid"),
                                             F.max(F.col("salary")).alias("mx"))


@program()
def p_group_first_ignorenulls(s, F):
    return emp(s).groupBy("name").agg(F.first("salary", ignorenulls=True),
                                      F.first(F.col("dept"), True).alias("d"))


@program()
def p_count_if(s, F):
    return emp(s).groupBy("dept").agg(F.count_if(F.col("salary") > 60))


@program()
def p_sum_distinct(s, F):
    return emp(s).groupBy("dept").agg(F.sum_distinct("salary"), F.count_distinct("salary"))


@program()
def p_agg_dict(s, F):
    return emp(s).groupBy("dept").agg({"salary": "max", "id": "count"})


@program()
def p_agg_dict_star(s, F):
    return emp(s).agg({"*": "count", "salary": "avg"})


@program()
def p_group_count(s, F):
    return emp(s).groupBy("dept").count()


@program()
def p_group_multi_count(s, F):
    return emp(s).groupBy("dept", "name").count()


@program()
def p_global_agg(s, F):
    return emp(s).agg(F.max("salary"), F.min("id"), F.countDistinct("dept", "name"))


@program()
def p_group_by_expression(s, F):
    return emp(s).groupBy(F.col("id") % 2).agg(F.sum("salary"))


@program()
def p_group_shortcuts(s, F):
    return emp(s).groupBy("dept").sum("salary")


@program()
def p_group_shortcuts_avg_max(s, F):
    g = emp(s).groupBy("dept")
    return g.max("id", "salary").join(g.avg("salary"), "dept")


@program()
def p_group_empty_input(s, F):
    return emp(s).where("id > 100").agg(F.count("*"), F.sum("salary"))


# -- distinct, ordering, limit -----------------------------------------------------------------


@program()
def p_distinct(s, F):
    return emp(s).select("name").distinct()


@program()
def p_drop_duplicates_subset(s, F):
    return emp(s).select("name", "salary").dropDuplicates(["name"])


@program()
def p_drop_duplicates_all(s, F):
    return emp(s).select("name", "salary").dropDuplicates()


@program(ordered=True)
def p_order_desc_nulls_last(s, F):
    return emp(s).orderBy(F.col("salary").desc_nulls_last(), "id")


@program(ordered=True)
def p_order_default_nulls(s, F):
    return emp(s).orderBy(F.desc("dept"), "id")


@program(ordered=True)
def p_order_asc_nulls_last(s, F):
    return emp(s).orderBy(F.col("dept").asc_nulls_last(), F.col("id").desc())


@program(ordered=True)
def p_order_ascending_list(s, F):
    return emp(s).orderBy(["dept", "id"], ascending=[False, True])


@program(ordered=True)
def p_sort_asc_nulls_first(s, F):
    return emp(s).sort(F.asc_nulls_first("salary"), F.asc("id"))


@program(ordered=True)
def p_order_limit(s, F):
    return emp(s).orderBy("id").limit(3)


# -- set operations ----------------------------------------------------------------------------


def nums(s: Any, rows: list) -> Any:
    return s.createDataFrame(rows, NUM_S)


@program()
def p_union(s, F):
    return emp(s).select("id", "name").union(dept(s).select("dept", "dname"))


@program()
def p_union_by_name(s, F):
    return emp(s).select("id", "name").unionByName(emp(s).select("name", "id"))


@program()
def p_union_by_name_missing(s, F):
    e = emp(s)
    return e.select("id", "name").unionByName(e.select("name", "dept"), allowMissingColumns=True)


@program()
def p_intersect(s, F):
    return nums(s, NUM_A).intersect(nums(s, NUM_B))


@program()
def p_intersect_all(s, F):
    return nums(s, NUM_A).intersectAll(nums(s, NUM_B))


@program()
def p_except_all(s, F):
    return nums(s, NUM_A).exceptAll(nums(s, NUM_B))


@program()
def p_subtract(s, F):
    return nums(s, NUM_A).subtract(nums(s, NUM_B))


# -- SQL over views ----------------------------------------------------------------------------


@program()
def p_temp_view_sql(s, F):
    emp(s).createOrReplaceTempView("emp_v")
    dept(s).createOrReplaceTempView("dept_v")
    return s.sql("select d.dname, count(*) c, sum(e.salary) from emp_v e join dept_v d "
                 "on e.dept = d.dept group by d.dname")


@program()
def p_temp_view_then_dataframe(s, F):
    emp(s).where("salary > 60").createOrReplaceTempView("rich_v")
    return s.sql("select * from rich_v").join(dept(s), "dept", "left").select("name", "loc")


# -- actions and metadata ----------------------------------------------------------------------


@program()
def p_collect_row_access(s, F):
    rows = emp(s).orderBy("id").collect()
    return [(r["name"], r.id, r[3], r.asDict()["dept"], "mgr" in r) for r in rows]


@program()
def p_first_and_head(s, F):
    df = emp(s).orderBy(F.desc("id"))
    r = df.first()
    return (tuple(r), r.asDict(), [tuple(x) for x in df.head(2)], df.take(1)[0].name)


@program()
def p_count_action(s, F):
    e = emp(s)
    return (e.count(), e.where(e.salary > 80).count(), e.join(dept(s), "dept").count())


@program()
def p_columns_dtypes(s, F):
    df = emp(s).join(dept(s), "dept").withColumn("x", F.col("salary") + F.col("id"))
    return (df.columns, df.dtypes)


@program()
def p_schema_simple_string(s, F):
    df = emp(s).groupBy("dept").agg(F.sum("id"), F.avg("salary"), F.count("*"))
    return (df.schema.simpleString(), [f.name for f in df.schema.fields],
            [f.nullable for f in df.schema.fields])


@program()
def p_empty_result(s, F):
    return emp(s).where(F.lit(False)).select("id")


# -- programs that must fail -------------------------------------------------------------------


@program()
def p_err_unknown_column_select(s, F):
    return emp(s).select("nope")


@program()
def p_err_unknown_column_filter(s, F):
    return emp(s).where(F.col("nope") > 1)


@program()
def p_err_unknown_column_sql_string(s, F):
    return emp(s).filter("nope = 1")


@program()
def p_err_unknown_using_column(s, F):
    return emp(s).join(dept(s), "nope")


@program()
def p_err_unknown_group_column(s, F):
    return emp(s).groupBy("nope").count()


@program()
def p_err_ambiguous_after_join(s, F):
    return emp(s).join(emp(s), "dept").select("id")


@program()
def p_err_ambiguous_self_join(s, F):
    e = emp(s)
    return e.join(e, e.id == e.mgr).select(e.name)


@program()
def p_err_ambiguous_unqualified_condition(s, F):
    e, d = emp(s), dept(s)
    return e.join(d, F.col("dept") == F.col("dept"))


@program()
def p_err_unknown_alias_qualifier(s, F):
    return emp(s).alias("a").select(F.col("b.id"))


@program()
def p_err_self_join_using_then_df_column(s, F):
    e = emp(s)
    return e.join(e, "dept").select(e.name)


@program()
def p_self_join_using_key_df_column(s, F):
    e = emp(s)
    return e.join(e, "dept").select(e.dept)


@program()
def p_err_self_join_projected_right(s, F):
    e = emp(s)
    r = e.select("id")
    return e.join(r, e.mgr == r.id)


@program()
def p_self_join_left_only_column(s, F):
    e = emp(s)
    r = e.select("id")
    return e.join(r, e.mgr == 3).select("name")


@program()
def p_self_join_trivial_condition(s, F):
    e = emp(s)
    return e.join(e, e.id == e.id).select(F.col("name"))


@program()
def p_err_missing_aggregation(s, F):
    return emp(s).groupBy("dept").agg(F.col("name"))


@program()
def p_err_union_column_count(s, F):
    return emp(s).union(dept(s))


@program()
def p_err_union_by_name_missing(s, F):
    return emp(s).select("id", "name").unionByName(emp(s).select("id", "dept"))


@program()
def p_err_cast_invalid_input(s, F):
    return emp(s).select(F.col("name").cast("int"))


@program()
def p_err_divide_by_zero(s, F):
    return emp(s).select(F.col("id") % 0)


@program()
def p_err_column_of_other_dataframe(s, F):
    e, d = emp(s), dept(s)
    return e.where(d.loc == "sf")


@program()
def p_agg_dict_many(s, F):
    return emp(s).groupBy("dept").agg({"name": "max", "dept": "min", "mgr": "sum",
                                       "salary": "avg", "id": "max"})


@program()
def p_negative_positive(s, F):
    return emp(s).select(F.negative("id"), F.positive("salary"), F.abs(-F.col("id")))


@program(ordered=True)
def p_order_by_dropped_column(s, F):
    return emp(s).select("name").orderBy(F.col("id").desc())


@program()
def p_agg_arithmetic(s, F):
    return emp(s).groupBy("dept").agg((F.sum("salary") / F.count("*")).alias("m"),
                                      F.max("id") - F.min("id"))


@program()
def p_join_multi_key_using(s, F):
    e = emp(s)
    return e.join(e.select("dept", "name", F.col("id").alias("id2")), ["dept", "name"], "left")


@program()
def p_join_how_spellings(s, F):
    e, d = emp(s), dept(s)
    out = []
    for how in ["leftouter", "rightouter", "fullouter", "full_outer", "right_outer",
                "leftsemi", "leftanti"]:
        out.append(sorted(tuple(r) for r in e.join(d, "dept", how).select("dept").collect()
                          if r[0] is not None))
    return out


@program()
def p_duplicate_names_collect(s, F):
    e, d = emp(s), dept(s)
    j = e.join(d, e.dept == d.dept).orderBy("id")
    rows = j.collect()
    return (j.columns, [(r["dept"], r.dept, r[2], r[5]) for r in rows])


@program()
def p_first_on_empty(s, F):
    df = emp(s).where("id < 0")
    return (df.first(), df.head(1), df.count(), df.columns)


@program(ordered=True)
def p_limit_zero_and_ascending_false(s, F):
    e = emp(s)
    return e.limit(0).union(e.orderBy("salary", ascending=False).select(e.columns))


@program()
def p_cast_double_to_string(s, F):
    return emp(s).select(F.col("salary").cast("string"), (F.col("id") * 1e10).cast("string"),
                         (F.col("id") / 3).cast("string"))


@program()
def p_isin_with_null_and_startswith(s, F):
    e = emp(s)
    return e.where(e.dept.isin(10, None) | e.name.startswith("e")).select("id")


@program()
def p_group_by_alias_then_filter(s, F):
    return (emp(s).groupBy(F.col("dept").alias("d")).agg(F.count("*").alias("n"))
            .where(F.col("n") > 1))


@program()
def p_select_aggregate_without_group(s, F):
    return emp(s).select(F.count("*"), F.max("salary"))


@program()
def p_select_expr_aggregate(s, F):
    return emp(s).selectExpr("count(*)", "max(salary) AS mx", "count(distinct dept)")


@program()
def p_to_df_and_division(s, F):
    return emp(s).select("id", "dept").toDF("a", "b").select((F.col("a") / 2).alias("h"),
                                                             F.col("b") / F.col("a"))


@program()
def p_union_widening(s, F):
    a = s.createDataFrame([(1, 2)], "x int, y bigint")
    b = s.createDataFrame([(1.5, 3)], "x double, y int")
    return a.union(b)


@program()
def p_intersect_widening(s, F):
    a = s.createDataFrame([(1,), (2,)], "x int")
    b = s.createDataFrame([(1,), (3,)], "x bigint")
    return a.intersect(b).union(a.exceptAll(b))


@program()
def p_outer_join_nullability(s, F):
    e, d = emp(s), dept(s)
    df = s.createDataFrame([(10, "x")], "dept int not null, tag string not null")
    j = d.join(df, "dept", "left").join(e.select("dept").distinct(), "dept", "full")
    return ([f.nullable for f in j.schema.fields], j.schema.simpleString())


@program()
def p_drop_qualified_after_join(s, F):
    e, d = emp(s), dept(s)
    return e.join(d, e.dept == d.dept, "left").drop(d.dept)


@program()
def p_alias_star_select(s, F):
    return emp(s).alias("x").select("x.id", "x.*").where(F.col("x.salary") > 90)


@program()
def p_with_column_replace_order(s, F):
    return emp(s).withColumn("dept", F.col("dept") * 10).withColumn("id", F.lit("s"))


@program()
def p_round_floor(s, F):
    return emp(s).select(F.round("salary", 1), F.floor("salary"), F.ceil(F.col("salary") / 7))


@program()
def p_distinct_count(s, F):
    e = emp(s)
    return (e.select("dept").distinct().count(), e.dropDuplicates(["name"]).count())


# -- more mixed programs -----------------------------------------------------------------------

MONEY_S = "id int, amt decimal(10,2), day date, ts timestamp"


def money(s: Any) -> Any:
    return s.createDataFrame([
        (1, Decimal("10.25"), _dt.date(2024, 1, 31), _dt.datetime(2024, 1, 31, 10, 0)),
        (2, Decimal("-3.50"), _dt.date(2024, 2, 29), _dt.datetime(2024, 2, 29, 23, 59, 59)),
        (1, None, None, None),
        (3, Decimal("99999999.99"), _dt.date(2023, 12, 1), _dt.datetime(2023, 12, 1, 0, 0, 1)),
    ], MONEY_S)


@program()
def p_decimal_aggregates(s, F):
    return money(s).groupBy("id").agg(F.sum("amt"), F.avg("amt"), F.max("amt"), F.min("day"))


@program()
def p_decimal_arithmetic(s, F):
    m = money(s)
    return m.select(m.amt + 1, m.amt * m.amt, m.amt / 3, (m.amt * 1.5).alias("d"))


@program()
def p_date_functions(s, F):
    m = money(s)
    return m.select(F.year("day"), F.month(m.day), F.dayofmonth("day"), F.date_add("day", 1),
                    F.datediff(F.col("day"), F.lit(_dt.date(2024, 1, 1))), F.hour("ts"))


@program()
def p_date_filter_and_group(s, F):
    m = money(s)
    return (m.where(m.day >= _dt.date(2024, 1, 1)).groupBy(F.year("day").alias("y"))
            .agg(F.count("*")))


@program()
def p_join_unqualified_unique_names(s, F):
    d2 = dept(s).withColumnRenamed("dept", "d")
    return emp(s).join(d2, F.col("dept") == F.col("d"), "left").select("id", "d", "dname")


@program()
def p_join_using_other_case(s, F):
    return emp(s).join(dept(s), "DEPT", "inner").select("DEPT", "name")


@program()
def p_join_no_condition(s, F):
    return emp(s).select("id").join(dept(s).select("loc"))


@program()
def p_left_join_filter_right_column(s, F):
    e, d = emp(s), dept(s)
    return e.join(d, e.dept == d.dept, "left").where(d.loc.isNull()).select(e.id, d.dname)


@program()
def p_join_drop_name(s, F):
    e, d = emp(s), dept(s)
    return e.join(d, e.dept == d.dept).drop("dept")


@program()
def p_self_join_alias_group(s, F):
    e = emp(s)
    return (e.alias("a").join(e.alias("b"), F.col("a.dept") == F.col("b.dept"))
            .groupBy(F.col("a.dept")).agg(F.count("*").alias("pairs"),
                                          F.max(F.col("b.salary"))))


@program()
def p_cross_join_where(s, F):
    e, d = emp(s), dept(s)
    return e.crossJoin(d).where(e.dept > d.dept).select(e.id, d.dname)


@program()
def p_when_without_otherwise_and_null_compare(s, F):
    e = emp(s)
    return e.select(F.when(e.salary > 90, e.name).alias("w"), (e.name != "bob").alias("nb"),
                    F.lit(None).cast("int").alias("n"))


@program()
def p_union_by_name_both_extra(s, F):
    a = s.createDataFrame([(1, "x")], "k int, a string")
    b = s.createDataFrame([(2.5, 7)], "k double, b bigint")
    return a.unionByName(b, allowMissingColumns=True)


@program(ordered=True)
def p_distinct_order(s, F):
    return emp(s).select("dept").distinct().orderBy(F.desc_nulls_first("dept"))


@program()
def p_limit_then_group(s, F):
    return emp(s).orderBy("id").limit(4).groupBy("dept").agg(F.sum("id"))


@program()
def p_expr_in_agg(s, F):
    return emp(s).groupBy("dept").agg(F.expr("count(*)"), F.expr("sum(salary) AS s"),
                                      F.countDistinct("name", "mgr"))


@program()
def p_select_expr_after_alias(s, F):
    return emp(s).alias("t").selectExpr("t.*", "t.id + 1 AS n")


@program()
def p_string_filters(s, F):
    e = emp(s)
    return e.where(e.name.contains("o") | e.name.endswith("e") | e.name.startswith("d"))


@program()
def p_group_by_multiple_exprs_and_having(s, F):
    e = emp(s)
    return (e.groupBy(e.dept, (e.salary > 80).alias("rich")).agg(F.count("id").alias("c"))
            .where("c >= 1").select("dept", "rich", "c"))


# -- pivot / unpivot (issue 18: PIVOT was dropped; DataFrame forms) --------------------------


def sales(s: Any) -> Any:
    return s.createDataFrame(
        [("a", 2023, 10), ("a", 2024, 20), ("b", 2024, 5), ("c", None, 7), ("a", 2023, 1),
         ("b", 2025, None)], "cat string, yr int, amt int")


def wide(s: Any) -> Any:
    return s.createDataFrame([(1, 2, 3, "x"), (2, None, 5, "y"), (3, None, None, "z")],
                             "id int, c1 int, c2 bigint, s string")


@program()
def p_pivot_distinct_values_sorted_null_first(s, F):
    return sales(s).groupBy("cat").pivot("yr").sum("amt")


@program()
def p_pivot_given_values_several_aggregates(s, F):
    return sales(s).groupBy("cat").pivot("yr", [2023, 2030]).agg(
        F.sum("amt").alias("s"), F.max("amt"), F.count("amt"))


@program()
def p_pivot_count_string_column(s, F):
    return sales(s).groupBy("yr").pivot("cat").count()


@program()
def p_pivot_without_grouping(s, F):
    return sales(s).groupBy().pivot("cat", ["a", "b", "q"]).agg(F.max("amt"))


@program()
def p_pivot_avg_then_filter(s, F):
    return sales(s).groupBy("cat").pivot("yr").avg("amt").where(F.col("2024").isNotNull())


@program()
def p_pivot_max_values_exceeded(s, F):
    s.conf.set("spark.sql.pivotMaxValues", "2")
    try:
        return sales(s).groupBy("cat").pivot("yr").sum("amt")
    finally:
        s.conf.set("spark.sql.pivotMaxValues", "10000")


@program()
def p_unpivot_keeps_nulls(s, F):
    return wide(s).unpivot("id", ["c1", "c2"], "var", "val")


@program()
def p_unpivot_values_none_are_the_other_columns(s, F):
    return wide(s).select("id", "c1", "c2").unpivot(["id"], None, "var", "val")


@program()
def p_melt_columns_and_expressions(s, F):
    return wide(s).melt([F.col("id") + 1, "s"], ["c1", F.col("c2"), F.col("c1") * 2],
                        "var", "val")


@program()
def p_unpivot_type_mismatch(s, F):
    return wide(s).unpivot("id", ["c1", "s"], "var", "val")


@program()
def p_unpivot_no_values(s, F):
    return wide(s).unpivot("id", [], "var", "val")


@program()
def p_unpivot_ids_not_columns_without_values(s, F):
    return wide(s).unpivot([F.col("id") + 1], None, "var", "val")


# ---------------------------------------------------------------------------------------------
# Running and comparing


def outcome(session: Any, F: Any, prog: Prog, is_spark: bool) -> Any:
    """Run ``prog`` and reduce its result to comparable data (or a :class:`Failed`)."""
    try:
        res = prog.fn(session, F)
        if hasattr(res, "collect") and hasattr(res, "dtypes"):
            rows = [norm_value(tuple(r)) for r in res.collect()]
            if not prog.ordered:
                rows.sort(key=sort_key)
            return {"columns": list(res.columns), "dtypes": [t for _, t in res.dtypes],
                    "rows": rows}
        return {"value": norm_value(res)}
    except Exception as e:  # noqa: BLE001 - every failure is compared by class
        if is_spark:
            from pyspark.errors import PySparkException

            if isinstance(e, PySparkException):
                return Failed(str(e.getCondition()), str(e))
        else:
            cls = getattr(e, "error_class", None)
            if cls:
                return Failed(str(cls), str(e))
        return Failed(f"python:{type(e).__name__}", str(e))


def compare(expected: Any, actual: Any) -> str | None:
    if isinstance(expected, Failed) or isinstance(actual, Failed):
        if isinstance(expected, Failed) and isinstance(actual, Failed):
            if expected.cls == actual.cls:
                return None
        return f"Spark: {expected!r}\nEmber: {actual!r}"
    if expected == actual:
        return None
    lines = []
    for key in ("columns", "dtypes", "value"):
        if expected.get(key) != actual.get(key):
            lines.append(f"{key}: Spark {expected.get(key)!r}\n{' ' * len(key)}  Ember "
                         f"{actual.get(key)!r}")
    if expected.get("rows") != actual.get("rows"):
        lines.append(f"rows: Spark {expected.get('rows')!r}\n      Ember {actual.get('rows')!r}")
    return "\n".join(lines)


@pytest.fixture(scope="module")
def spark_outcomes(spark: Any) -> dict[str, Any]:
    """Every program's PySpark outcome, computed up front on a few threads (the oracle's time
    is mostly per-job latency, so concurrent jobs keep the whole test well under a minute)."""
    from concurrent.futures import ThreadPoolExecutor

    import pyspark.sql.functions as SF

    session = spark.newSession()
    # tiny data: whole-stage codegen, AQE and more than one shuffle partition only cost time
    session.conf.set("spark.sql.codegen.wholeStage", "false")
    session.conf.set("spark.sql.adaptive.enabled", "false")
    session.conf.set("spark.sql.shuffle.partitions", "1")
    # warm up the JVM on one program first, then run the rest concurrently
    first = sorted(PROGRAMS)[0]
    results = {first: outcome(session, SF, PROGRAMS[first], True)}
    with ThreadPoolExecutor(max_workers=4) as pool:
        names = sorted(PROGRAMS)[1:]
        for name, res in zip(names, pool.map(
                lambda n: outcome(session, SF, PROGRAMS[n], True), names)):
            results[name] = res
    return results


@pytest.mark.spark
@pytest.mark.differential
@pytest.mark.parametrize("runtime", RUNTIMES)
@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_program(spark_outcomes: dict[str, Any], name: str, runtime: str) -> None:
    import ember.functions as EF

    prog = PROGRAMS[name]
    expected = spark_outcomes[name]
    # optimized and unoptimized (only the rewrites execution requires) plans: both Spark's rows
    for optimize in (True, False):
        session = new_session({"ember.optimizer.enabled": str(optimize).lower()}, runtime)
        actual = outcome(session, EF, prog, False)
        problem = compare(expected, actual)
        if problem is not None:
            pytest.fail(f"program {name!r} (optimizer {'on' if optimize else 'off'}, {runtime} "
                        f"runtime) differs from PySpark\n{problem}", pytrace=False)


def test_program_count() -> None:
    assert len(PROGRAMS) >= 60
