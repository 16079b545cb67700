"""Functions over nested values against PySpark on both runtimes (issues 22/23): ``hash`` /
``xxhash64`` of arrays and structs (bit-exact, ``HASH_MAP_TYPE`` for maps), the CSV functions
(``from_csv``, ``to_csv``, ``schema_of_csv``), the JSON functions (``from_json`` with DDL / ``schema_of_json`` schemas, options and modes, ``to_json``,
``schema_of_json``, ``json_object_keys``, the generator ``json_tuple``) and the collection
functions added with them, in SQL and through ``ember.functions``, with Spark's errors.

Each check is batched: one query with many columns, run once on Spark and compared once per
runtime (column names, types, nullability and rows).
"""

from __future__ import annotations

import re
from typing import Any

import pytest

from tests.conformance.ember_adapter import RUNTIMES, SPARK_RUNTIME_ALL, new_session
from tests.differential.compare import Failed, norm_value, sql_outcome

VIEW = """
SELECT * FROM VALUES
  (1, '{"a": 1, "b": [1, 2], "t": "2020-01-01 10:00:00", "s": {"x": "q"}}', 'a',
   named_struct('x', 1, 'y', array('a', NULL)), array(1, 2, NULL), map('k', 2.5D)),
  (2, '{"a": "bad", "b": [1, "x"], "c": null}', 'b',
   named_struct('x', CAST(NULL AS INT), 'y', CAST(NULL AS ARRAY<STRING>)), array(), map()),
  (3, NULL, NULL, NULL, NULL, NULL),
  (4, '[{"a": 1}]', 'a', named_struct('x', 3, 'y', array()), array(3), map('a', CAST('NaN' AS DOUBLE))),
  (5, ' {"a": 1.25, "a": 2} trailing', 'a', named_struct('x', 4, 'y', array('z')), array(NULL),
   map('b', 1D)),
  (6, 'garbage', 'zz', named_struct('x', 5, 'y', array()), array(2, 2, 1), map('c', NULL))
AS t(id, j, k, st, arr, m)
"""

#: name -> query over the view ``nf`` (rows, schema and nullability must be Spark's)
QUERIES: dict[str, str] = {
    "from_json": """
        SELECT id, from_json(j, 'a INT, b ARRAY<INT>, t TIMESTAMP, s STRUCT<x: STRING>'),
               from_json(j, 'a STRING, _corrupt_record STRING'), from_json(j, 'array<int>'),
               from_json(j, 'map<string, string>') AS m1,
               from_json(j, 'a DOUBLE', map('allowSingleQuotes', 'false')),
               from_json(j, schema_of_json('{"a": 1, "b": [1]}')),
               from_json(j, 'array<struct<a: bigint>>'), from_json('{"d": "02/01/2020"}',
               'd DATE', map('dateFormat', 'dd/MM/yyyy')), from_json('', 'a INT')
        FROM nf ORDER BY id""",
    "to_json": """
        SELECT id, to_json(st), to_json(arr), to_json(m), to_json(array(st, st)),
               to_json(st, map('ignoreNullFields', 'false')),
               to_json(named_struct('t', TIMESTAMP'2020-01-02 03:04:05', 'd', DATE'2020-01-01',
                                    'e', 1.50BD, 'f', 'q"\\n', 'g', true, 'h', 1.5F)),
               to_json(named_struct('t', TIMESTAMP'2020-01-02 03:04:05'),
                       map('timestampFormat', 'dd/MM/yyyy HH:mm')),
               to_json(map(id, named_struct('a', arr))), to_json(array(map('k', arr)))
        FROM nf ORDER BY id""",
    "schema_of_json_and_keys": """
        SELECT id, json_object_keys(j), schema_of_json('{"a": 1, "b": [1.5], "c": {"d": null}}'),
               schema_of_json('[{"a": 1}, {"b": "x"}]'), schema_of_json('1'),
               schema_of_json('{"a": 1}', map('primitivesAsString', 'true')),
               schema_of_json('{"a": 0.1}', map('prefersDecimal', 'true'))
        FROM nf ORDER BY id""",
    "json_tuple": """
        SELECT id, json_tuple(j, 'a', 'b', k, 's') FROM nf ORDER BY id""",
    "array_functions": """
        SELECT id, array_append(arr, id), array_append(arr, NULL), array_prepend(arr, 7L),
               array_insert(arr, 2, id), array_insert(arr, -1, 0), array_insert(arr, 5, id),
               array_insert(arr, -4, 9), array_compact(arr), array_repeat(k, id - 2),
               array_repeat(arr, 2), array_size(arr), arrays_overlap(arr, array(2, 5)),
               arrays_overlap(arr, array(7L)), arrays_overlap(arr, array()),
               regexp_extract_all(j, '"([a-z])"', 1), regexp_extract_all(j, '[0-9]+', 0),
               size(shuffle(arr)), array_sort(shuffle(arr, 5))
        FROM nf ORDER BY id""",
    "map_functions": """
        SELECT id, map_contains_key(m, 'k'), map_contains_key(map(id, 1), 1L),
               map_from_entries(transform(arr, (x, i) -> named_struct('k', i, 'v', x))),
               map_from_entries(array(named_struct('a', coalesce(k, 'n'), 'b', arr))),
               map_filter(m, (k, v) -> v > 1 OR v IS NULL), transform_keys(m, (k, v) -> upper(k)),
               transform_values(m, (k, v) -> concat(k, cast(v AS string))),
               map_zip_with(m, map('k', id, 'z', 0), (k, v1, v2) -> coalesce(v1, 0) + v2),
               str_to_map(k), str_to_map('a=1;b=2;c', ';', '='), str_to_map(j, ',', ':')
        FROM nf WHERE id <> 5 ORDER BY id""",
    "nested_hashes": """
        SELECT id, hash(arr), xxhash64(arr), hash(st), xxhash64(st, arr, k),
               hash(array(st, st)), xxhash64(array(array(1.5D, NULL), NULL, array())),
               hash(named_struct('d', DATE'2020-01-01', 'e', 1.5BD, 'f', array(CAST('a' AS BINARY)))),
               hash(array(CAST('-0.0' AS DOUBLE), CAST('NaN' AS FLOAT)))
        FROM nf ORDER BY id""",
    "csv_functions": """
        SELECT id, from_csv(k, 'a STRING'), from_csv(j, 'a STRING, b INT, c DOUBLE'),
               from_csv('1,abc, 2 ,2020-01-02', 'a INT, b STRING, c INT, d DATE'),
               from_csv('1;x', 'a INT, b STRING', map('sep', ';')), from_csv('"x,y"', 'a STRING'),
               to_csv(named_struct('a', id, 'b', k, 'c', CAST(NULL AS INT), 'd', '', 'e', 'q"r',
                                   'f', TIMESTAMP'2020-01-01 00:00:00', 'g', ' x ')),
               to_csv(named_struct('a', id, 'b', 2.5D), map('sep', ';')),
               schema_of_csv('1,abc,2.5,true,2020-01-01,,9999999999'),
               schema_of_csv('a;b', map('sep', ';')),
               from_csv('7,8', schema_of_csv('1,2'))
        FROM nf ORDER BY id""",
    "json_tuple_lateral_view": """
        SELECT id, x, y FROM nf LATERAL VIEW json_tuple(j, 'a', 'c') t AS x, y ORDER BY id""",
}

#: name -> a query Spark fails with an error class Ember must raise too
ERRORS: dict[str, str] = {
    "from_json_failfast": "SELECT from_json(j, 'a INT', map('mode', 'FAILFAST')) FROM nf",
    "from_json_dropmalformed": "SELECT from_json(j, 'a INT', map('mode', 'DROPMALFORMED')) FROM nf",
    "from_json_schema_not_literal": "SELECT from_json(j, k) FROM nf",
    "from_json_not_string": "SELECT from_json(id, 'a INT') FROM nf",
    "from_json_options_types": "SELECT from_json(j, 'a INT', map('mode', 1)) FROM nf",
    "to_json_scalar": "SELECT to_json(id) FROM nf",
    "schema_of_json_column": "SELECT schema_of_json(j) FROM nf",
    "json_tuple_not_string": "SELECT json_tuple(j, 1) FROM nf",
    "json_tuple_one_argument": "SELECT json_tuple(j) FROM nf",
    "array_insert_zero": "SELECT array_insert(arr, 0, 1) FROM nf",
    "array_insert_null_position": "SELECT array_insert(arr, NULL, 1) FROM nf",
    "map_contains_key_not_map": "SELECT map_contains_key(arr, 1) FROM nf",
    "map_from_entries_duplicate": "SELECT map_from_entries(array(struct(1, 2), struct(1, 3)))",
    "map_from_entries_null_key": "SELECT map_from_entries(array(struct(NULL, 2)))",
    "transform_keys_duplicate": "SELECT transform_keys(map_concat(m, map('q', 1D)), (k, v) -> 1) FROM nf",
    "str_to_map_duplicate": "SELECT str_to_map('a:1,a:2')",
    "regexp_extract_all_group": "SELECT regexp_extract_all(j, '(a)', 2) FROM nf",
    "from_csv_failfast": "SELECT from_csv(k, 'a INT', map('mode', 'FAILFAST')) FROM nf",
    "from_csv_not_struct": "SELECT from_csv(k, 'array<int>') FROM nf",
    "to_csv_array": "SELECT to_csv(arr) FROM nf",
    "schema_of_csv_column": "SELECT schema_of_csv(k) FROM nf",
    "hash_of_map": "SELECT hash(m) FROM nf",
    "xxhash64_of_nested_map": "SELECT xxhash64(array(named_struct('m', m))) FROM nf",
    "map_filter_not_boolean": "SELECT map_filter(m, (k, v) -> v) FROM nf",
}


def _functions_frames(F: Any, df: Any) -> list[Any]:
    """The DataFrame API's functions (PySpark's ``F`` or Ember's): column names and rows."""
    from pyspark.sql import types as PT

    schema = PT.StructType([PT.StructField("a", PT.LongType()),
                            PT.StructField("b", PT.ArrayType(PT.LongType()))])
    frames = [
        df.select("id", F.from_json("j", "a INT, b ARRAY<INT>"), F.from_json("j", schema),
                  F.from_json("j", "a STRING", {"mode": "PERMISSIVE"}), F.to_json("st"),
                  F.to_json("m", {"ignoreNullFields": False}), F.json_object_keys("j"),
                  F.from_json(F.col("j"), F.schema_of_json('{"a": 1, "b": [1]}')),
                  F.schema_of_json(F.lit('{"q": [{"r": 1.5}]}')), F.to_json(F.array("st", "st"))),
        df.select("id", F.json_tuple("j", "a", "b")),
        df.select("id", F.array_append("arr", 1), F.array_prepend("arr", F.col("id")),
                  F.array_insert("arr", 1, 0), F.array_compact("arr"), F.array_repeat("k", 2),
                  F.array_size("arr"), F.arrays_overlap("arr", F.array(F.lit(1))),
                  F.map_contains_key("m", "k"), F.str_to_map("k"), F.str_to_map("k", F.lit(";"), F.lit("=")),
                  F.regexp_extract_all("j", F.lit("([0-9])")),
                  F.map_from_entries(F.array(F.struct("id", "k"))),
                  F.map_filter("m", lambda k, v: v > 1), F.transform_keys("m", lambda k, v: k),
                  F.transform_values("m", lambda k, v: v * 2),
                  F.map_zip_with("m", "m", lambda k, a, b: a + b), F.size(F.shuffle("arr")),
                  F.from_csv("k", "a STRING"), F.to_csv(F.struct("id", "k")),
                  F.schema_of_csv("1,a"), F.from_csv(F.lit("1,2"), F.schema_of_csv("3,4"))),
    ]
    return [([f.name for f in d.schema.fields], sorted(map(tuple, d.collect()), key=str))
            for d in frames]


@pytest.fixture(scope="module")
def spark_results(spark: Any) -> dict[str, Any]:
    from pyspark.sql import functions as PF

    session = spark.newSession()
    session.sql(VIEW).createOrReplaceTempView("nf")
    out: dict[str, Any] = {name: _error_class(sql_outcome(session.sql, sql, is_spark=True))
                           for name, sql in {**QUERIES, **ERRORS}.items()}
    out["functions"] = norm_value(_functions_frames(PF, session.table("nf")))
    return out


def _error_class(outcome: Any) -> Any:
    """A task's error reaches PySpark as a Py4JJavaError: its class is read from its text."""
    if isinstance(outcome, Failed) and outcome.cls == "python:Py4JJavaError":
        m = re.search(r"\[([A-Z_.]+)\]", outcome.message)
        if m:
            return Failed(m.group(1), outcome.message)
    return outcome


_SESSIONS: dict[str, Any] = {}


def _session(runtime: str) -> Any:
    if runtime not in _SESSIONS:
        session = new_session(runtime=runtime)
        session.sql(VIEW).createOrReplaceTempView("nf")
        _SESSIONS[runtime] = session
    return _SESSIONS[runtime]


#: the error and DataFrame checks (the same kernels) on the Spark runtime only with
#: EMBER_SPARK_RUNTIME=all
SAMPLED = RUNTIMES if SPARK_RUNTIME_ALL else ("local",)


@pytest.mark.differential
@pytest.mark.parametrize("runtime", RUNTIMES)
def test_nested_function_queries_match_spark(spark_results: dict[str, Any], runtime: str) -> None:
    session = _session(runtime)
    for name, sql in QUERIES.items():
        expected = spark_results[name]
        actual = sql_outcome(session.sql, sql, is_spark=False)
        assert not isinstance(expected, Failed), f"{name}: {expected!r}"
        assert expected == actual, f"{name}\nSpark: {expected!r}\nEmber: {actual!r}"


@pytest.mark.differential
@pytest.mark.parametrize("runtime", SAMPLED)
def test_nested_function_errors_match_spark(spark_results: dict[str, Any], runtime: str) -> None:
    session = _session(runtime)
    for name, sql in ERRORS.items():
        expected = spark_results[name]
        actual = sql_outcome(session.sql, sql, is_spark=False)
        assert isinstance(expected, Failed), f"{name}: Spark returned {expected!r}"
        assert isinstance(actual, Failed) and actual.cls == expected.cls, (
            f"{name}\nSpark: {expected!r}\nEmber: {actual!r}")


@pytest.mark.differential
@pytest.mark.parametrize("runtime", SAMPLED)
def test_nested_functions_dataframe_api_matches_spark(spark_results: dict[str, Any],
                                                      runtime: str) -> None:
    from ember import functions as F

    actual = norm_value(_functions_frames(F, _session(runtime).table("nf")))
    assert actual == spark_results["functions"]
