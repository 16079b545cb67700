"""DataFrame API details found by tests/differential/test_dataframe_api.py (expected values are
PySpark 4.3's)."""

import pytest

import ember
from ember import functions as F
from ember.dataframe import jvm_map_order
from ember.errors import AnalysisError


@pytest.mark.parametrize("keys, expected", [
    (["salary", "id"], ["id", "salary"]),
    (["name", "dept", "mgr", "salary"], ["name", "mgr", "dept", "salary"]),
    (["name", "dept", "mgr", "salary", "id"], ["name", "dept", "salary", "id", "mgr"]),
    (["name", "dept", "mgr", "salary", "id", "p", "q", "r"],
     ["name", "dept", "salary", "id", "q", "p", "mgr", "r"]),
])
def test_agg_dict_columns_follow_the_jvm_map_order(keys, expected):
    assert jvm_map_order(dict.fromkeys(keys, "max")) == expected


def test_agg_dict_output_order(spark):
    df = spark.createDataFrame([(1, 10, 2.0)], "id int, dept int, salary double")
    assert df.groupBy("dept").agg({"salary": "max", "id": "count"}).columns == [
        "dept", "count(id)", "max(salary)"]


def test_negative_is_named_like_spark(spark):
    df = spark.createDataFrame([(1,)], "id int")
    out = df.select(-df.id, F.negative("id"), F.positive("id"), F.abs(-F.col("id")))
    assert out.columns == ["negative(id)", "negative(id)", "(+ id)", "abs(negative(id))"]
    assert tuple(out.collect()[0]) == (-1, -1, 1, 1)
    assert spark.sql("select -id, negative(id) from values (1) t(id)").columns == [
        "(- id)", "negative(id)"]


def _err(fn):
    with pytest.raises(AnalysisError) as e:
        fn()
    return e.value.error_class


def test_ambiguous_self_join_references(spark):
    e = spark.createDataFrame([(1, "a", 10, None)], "id int, name string, dept int, mgr int")
    r = e.select("id")
    assert _err(lambda: e.join(e, e.id == e.mgr)) == "_LEGACY_ERROR_TEMP_1182"
    assert _err(lambda: e.join(r, e.mgr == r.id)) == "_LEGACY_ERROR_TEMP_1182"
    assert _err(lambda: e.join(e, "dept").select(e.name)) == "_LEGACY_ERROR_TEMP_1182"
    assert _err(lambda: e.join(e, "dept").where(e.name == "a")) == "_LEGACY_ERROR_TEMP_1182"
    # not ambiguous: trivially true conditions, left-only columns, the USING key, aliases
    assert e.join(e, e.id == e.id).count() == 1
    assert e.join(r, e.mgr == 3).columns == ["id", "name", "dept", "mgr", "id"]
    assert e.join(e, "dept").select(e.dept).columns == ["dept"]
    a, b = e.alias("a"), e.alias("b")
    assert a.join(b, F.col("a.id") == F.col("b.id")).select("a.name").count() == 1


def test_column_of_another_dataframe_is_missing_input(spark):
    e = spark.createDataFrame([(1,)], "id int")
    d = spark.createDataFrame([(1,)], "loc int")
    assert _err(lambda: e.where(d.loc == 1)) == (
        "MISSING_ATTRIBUTES.RESOLVED_ATTRIBUTE_MISSING_FROM_INPUT")
    e2 = spark.createDataFrame([(1,)], "id int")
    assert _err(lambda: e.select(e2.id)) == (
        "MISSING_ATTRIBUTES.RESOLVED_ATTRIBUTE_APPEAR_IN_OPERATION")


def test_union_by_name_missing_column(spark):
    a = spark.createDataFrame([(1, "x")], "id int, name string")
    b = spark.createDataFrame([(1, 2)], "id int, dept int")
    assert _err(lambda: a.unionByName(b)) == "UNRESOLVED_COLUMN_AMONG_FIELD_NAMES"


def test_stat_requirement_messages(spark):
    # Spark raises these as IllegalArgumentException (no error class), so the differential
    # programs cannot compare them; the messages are Spark's.
    df = spark.createDataFrame([(1, "a")], "id int, name string")
    with pytest.raises(AnalysisError, match=r"requirement failed: Percentiles must be in the "
                                            r"range \[0, 1\]"):
        df.summary("101%")
    with pytest.raises(AnalysisError, match="requirement failed: Currently correlation "
                                            "calculation for columns with dataType string not "
                                            "supported."):
        df.corr("id", "name")
