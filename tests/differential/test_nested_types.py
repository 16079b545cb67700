"""ARRAY, MAP and STRUCT values against PySpark on both runtimes (issue 23): constructors, casts,
element and field access (SQL ``a.b.c``, ``a[0]``, ``m['k']``, ``element_at``; the DataFrame
API's ``getField``/``getItem``/indexing/``df["s.a"]``), ``size``/``map_keys``/``map_values``,
generators (``explode`` & co in SELECT, ``LATERAL VIEW [OUTER]``), their errors, ``collect()``
rows and ``show()`` text.

Each check is batched: one query with many columns, run once on Spark and compared once per
runtime (column names, types, nullability, rows, and the ``show()`` rendering).
"""

from __future__ import annotations

from typing import Any

import pytest

from tests.conformance.ember_adapter import RUNTIMES, SPARK_RUNTIME_ALL, new_session
from tests.differential.compare import Failed, sql_outcome

VIEW = """
SELECT 1 AS id, named_struct('a', 1, 'b', named_struct('c', 'x')) AS st, array(1, 2, NULL) AS arr,
       map('k1', 10, 'k2', NULL) AS m, array(named_struct('a', 1), named_struct('a', 2)) AS sa
UNION ALL
SELECT 2, named_struct('a', CAST(NULL AS INT), 'b', CAST(NULL AS struct<c:string>)),
       array(CAST(NULL AS INT)), map('k3', 3), array()
UNION ALL
SELECT 3, NULL, NULL, NULL, NULL
"""

#: name -> query over the view ``nt`` (ordered: show() is compared too); rows, schema and
#: show() must be Spark's
QUERIES: dict[str, str] = {
    "access_and_casts": """
        SELECT id, st, arr, m, sa, st.a, st.b.c, nt.st.a AS qa, st['a'] AS sa_a, arr[0],
               get(arr, 5), element_at(arr, -1), try_element_at(arr, 5), m['k1'], m['zz'],
               element_at(m, 'k2'), size(arr), size(m), cardinality(m), map_keys(m),
               map_values(m), CAST(arr AS string), CAST(m AS string), CAST(st AS string),
               CAST(sa AS string), CAST(arr AS array<string>), CAST(m AS map<string,bigint>),
               map_from_arrays(array('a', 'b'), array(id, id + 1)) AS mfa, array(st, st)[1].b.c,
               sa.a, named_struct('x', m)['x']['k1'], map(id, st) AS ms, map(id, arr)[id][0],
               named_struct('a', 1, 'b', 'x').b, map() AS empty_map, size(sa)
        FROM nt ORDER BY id""",
    "aggregate_on_fields": """
        SELECT st.a, max(st.b.c), count(*), max(m['k1']) FROM nt GROUP BY st.a ORDER BY 1""",
    "filter_and_order_on_fields": """
        SELECT id FROM nt WHERE st.a = 1 OR m['k3'] = 3 ORDER BY arr[0] DESC NULLS LAST, id""",
    # generators: in the select list (several nest) and as LATERAL VIEW [OUTER]
    "explode_outer_select": "SELECT id, explode_outer(m) AS (k, v) FROM nt ORDER BY id, k",
    "generators_nest": """
        SELECT id, inline_outer(sa), stack(2, id, 'a', id + 1, 'b') FROM nt
        ORDER BY id, a, col0""",
    "lateral_views": """
        SELECT id, x, p, c.a FROM nt LATERAL VIEW OUTER explode(arr) t1 AS x
        LATERAL VIEW posexplode(sa) t2 AS p, c WHERE id < 3 ORDER BY id, x, p""",
    "lateral_view_aggregate": """
        SELECT x, count(*), max(id) FROM nt LATERAL VIEW explode(arr) t AS x GROUP BY x
        ORDER BY x""",
}

#: name -> a query Spark fails with an error class Ember must raise too
ERRORS: dict[str, str] = {
    "index_out_of_bounds": "SELECT arr[3] FROM nt",
    "element_at_zero": "SELECT element_at(arr, 0) FROM nt",
    "element_at_out_of_bounds": "SELECT element_at(arr, 4) FROM nt",
    "duplicated_map_key": "SELECT map(1, 'a', 1, 'b')",
    "null_map_key": "SELECT map(CAST(NULL AS INT), 'a')",
    "map_from_arrays_lengths": "SELECT map_from_arrays(array(1), array(1, 2))",
    "field_not_found": "SELECT st.zz FROM nt",
    "map_equality": "SELECT m = m FROM nt",
    "map_order": "SELECT id FROM nt ORDER BY m",
    "string_index": "SELECT arr['x'] FROM nt",
    "map_odd_arguments": "SELECT map(1)",
    "generator_nested": "SELECT explode(arr) + 1 FROM nt",
    "generator_in_where": "SELECT id FROM nt WHERE explode(arr) = 1",
    "lateral_view_not_generator": "SELECT id FROM nt LATERAL VIEW abs(id) t AS x",
    "stack_column_types": "SELECT stack(2, 1, 'a')",
    "generator_alias_count": "SELECT explode(m) AS x FROM nt",
}


def _spark_show(df: Any) -> str:
    return df._jdf.showString(20, 20, False)


@pytest.fixture(scope="module")
def spark_results(spark: Any) -> dict[str, Any]:
    session = spark.newSession()
    session.sql(VIEW).createOrReplaceTempView("nt")
    out: dict[str, Any] = {}
    for name, sql in QUERIES.items():
        out[name] = (sql_outcome(session.sql, sql, is_spark=True),
                     _spark_show(session.sql(sql)))
    for name, sql in ERRORS.items():
        out[name] = sql_outcome(session.sql, sql, is_spark=True)
    pdf = session.table("nt")
    from pyspark.sql import functions as PF

    api = pdf.select("id", PF.col("st").getField("a"), PF.col("arr").getItem(0),
                     PF.col("m")["k1"], PF.col("st.b.c"), pdf["st.a"], PF.col("st").b,
                     PF.col("sa")["a"], PF.col("m").getItem("k3"))
    out["dataframe_api"] = ([f.name for f in api.schema.fields], sorted(
        map(tuple, api.collect()), key=str))
    out["select_expr"] = [tuple(r) for r in pdf.selectExpr("max(st.a)", "min(arr[0])").collect()]
    return out


_SESSIONS: dict[str, Any] = {}


def _session(runtime: str) -> Any:
    if runtime not in _SESSIONS:
        session = new_session(runtime=runtime)
        session.sql(VIEW).createOrReplaceTempView("nt")
        _SESSIONS[runtime] = session
    return _SESSIONS[runtime]


#: the queries run on both runtimes; the error and DataFrame checks (the same kernels, no
#: exchange) on the Spark runtime only with EMBER_SPARK_RUNTIME=all
SAMPLED = RUNTIMES if SPARK_RUNTIME_ALL else ("local",)


@pytest.mark.differential
@pytest.mark.parametrize("runtime", RUNTIMES)
def test_nested_queries_match_spark(spark_results: dict[str, Any], runtime: str) -> None:
    ember_session = _session(runtime)
    for name, sql in QUERIES.items():
        expected, expected_show = spark_results[name]
        actual = sql_outcome(ember_session.sql, sql, is_spark=False)
        assert not isinstance(expected, Failed), expected
        assert expected == actual, f"{name}\nSpark: {expected!r}\nEmber: {actual!r}"
        assert ember_session.sql(sql)._show_string(20, 20) == expected_show, name


@pytest.mark.differential
@pytest.mark.parametrize("runtime", SAMPLED)
def test_nested_errors_match_spark(spark_results: dict[str, Any], runtime: str) -> None:
    ember_session = _session(runtime)
    for name, sql in ERRORS.items():
        expected = spark_results[name]
        actual = sql_outcome(ember_session.sql, sql, is_spark=False)
        assert isinstance(expected, Failed), f"{name}: Spark returned {expected!r}"
        assert isinstance(actual, Failed) and actual.cls == expected.cls, (
            f"{name}\nSpark: {expected!r}\nEmber: {actual!r}")


@pytest.mark.differential
@pytest.mark.parametrize("runtime", SAMPLED)
def test_dataframe_access_matches_spark(spark_results: dict[str, Any], runtime: str) -> None:
    from ember import functions as F

    ember_session = _session(runtime)
    df = ember_session.table("nt")
    api = df.select("id", F.col("st").getField("a"), F.col("arr").getItem(0), F.col("m")["k1"],
                    F.col("st.b.c"), df["st.a"], F.col("st").b, F.col("sa")["a"],
                    F.col("m").getItem("k3"))
    assert ([f.name for f in api.schema.fields],
            sorted(map(tuple, api.collect()), key=str)) == spark_results["dataframe_api"]
    assert [tuple(r) for r in df.selectExpr("max(st.a)", "min(arr[0])").collect()] == (
        spark_results["select_expr"])
