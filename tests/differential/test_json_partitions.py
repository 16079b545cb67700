"""Differential tests of JSON reading and partitioned directories (Ember, both runtimes, vs
PySpark): schema inference and its options, malformed records and parse modes, user schemas,
Hive partition discovery and typing, partition pruning (results and EXPLAIN's
``PartitionFilters``), and the ``spark.sql.files.*`` split sizing.

Test files are written by the ``data_dir`` fixture: JSON text with awkward lines (missing fields,
type conflicts, nulls, nested values, malformed lines), and datasets written by PySpark's own
writers (``df.write.json`` / ``partitionBy``). Cases compare as ``tests/differential/test_sources``
does (names, ``simpleString`` types, nullability, sorted rows, or the error class).
"""

from __future__ import annotations

import contextlib
import io
import os
import re
from typing import Any, Callable

import pytest

from tests.conformance.ember_adapter import RUNTIMES, new_session
from tests.differential.test_sources import _p, compare, outcome

pytestmark = [pytest.mark.spark, pytest.mark.differential]

AWKWARD = "\n".join([
    '{"b":1,"a":"x","n":null,"s":{"y":1,"x":"q"},"arr":[1,2]}',
    '{"b":2.5,"a":3,"arr":[1.5],"t":"2020-01-01T00:00:00","e":{}}',
    '{"b":12345678901234567890,"c":true,"s":{"y":"z"},"arr":null}',
    'not json',
    '{"b":null,"a":{"k": 1},"c":"true"}',
    '',
    '  ',
    '[{"b":7},{"b":8}]',
    '5',
    '{"b":1.25, "d": -0.0, "f":NaN, "g": [{"h":1},{"i":"j"}]}',
]) + "\n"

FILES: dict[str, str] = {
    "awkward/part-0.json": AWKWARD,
    "clean/a.json": '{"id":1,"name":"a","score":1.5,"tags":["x","y"],"ok":true}\n'
                    '{"id":2,"name":null,"score":2,"tags":[],"ok":false,"extra":{"k":[1,2]}}\n',
    "clean/b.json": '{"id":3000000000,"score":-1e10,"tags":null}\n',
    "numbers/n.json": '{"i":1,"f":1.50,"big":123456789012345678901234,"s":"12.5"}\n'
                      '{"i":-7,"f":0.001,"big":1,"s":"x"}\n',
    "times/t.json": '{"t":"2020-01-01T10:00:00","u":"2021-05-06 07:08:09","v":"nope"}\n'
                    '{"t":"2020-02-03T04:05:06.789Z","u":null,"v":"2020-01-01T00:00:00"}\n',
    "multi/one.json": '{\n  "a": 1,\n  "b": {"c": [1, 2,\n 3]}\n}\n',
    "multi/many.json": '[\n{"a": 2, "b": {"c": []}},\n{"a": 3}\n]\n',
    "allnull/x.json": '{"a":1,"b":null,"c":[]}\n{"a":2,"b":null}\n',
    # Jackson's quirks: two values on a line (the first is the record), trailing text,
    # single quotes; dates and timestamps in other patterns than CAST's
    "quirks/q.json": '{"a": 1, "d": "05/01/2024", "t": "05/01/2024 10:11"}\n'
                     '{"a": 2}{"a": 3}\n'
                     "{'a': 4, 'd': 'x\\'y', \"t\": 'say \"hi\"'}\n"
                     '{"a": 5} {"a": 6}\n{"a": 7}x\n[{"a": 8}]{"a": 9}\n',
    "csvpart/k=1/x.csv": "a,b\n1,x\n2,y\n",
    "csvpart/k=2/x.csv": "a,b\n3,z\n",
    "mixedpart/v=1/x.json": '{"a":1}\n',
    "mixedpart/v=2.5/x.json": '{"a":2}\n',
    "mixedpart/v=__HIVE_DEFAULT_PARTITION__/x.json": '{"a":3}\n',
    "typedpart/d=2020-01-01/ts=2020-01-01 10%3A00%3A00/n=12345678901234567890123/x.json":
        '{"a":1}\n',
    "typedpart/d=2020-01-02/ts=2020-01-02 00%3A00%3A00/n=7/x.json": '{"a":2}\n',
}


@pytest.fixture(scope="module")
def data_dir(spark: Any, tmp_path_factory: pytest.TempPathFactory) -> str:
    d = str(tmp_path_factory.mktemp("json_sources"))
    for name, text in FILES.items():
        p = os.path.join(d, name)
        os.makedirs(os.path.dirname(p), exist_ok=True)
        with open(p, "w") as f:
            f.write(text)
    rows = [(i, f"n{i % 3}" if i % 4 else None, [i, i + 1] if i % 2 else None,
             (i * 1.5, f"s{i}") if i % 3 else None, i % 3 if i % 5 else None,
             ["a b", "x/y", "p=q", None][i % 4])
            for i in range(24)]
    df = spark.createDataFrame(
        rows, "id bigint, name string, arr array<int>, st struct<f:double,g:string>, "
              "k int, s string")
    df.coalesce(2).write.json(os.path.join(d, "pyspark_nested"))
    df.drop("arr", "st").repartition(2).write.partitionBy("k", "s") \
        .json(os.path.join(d, "pyspark_part"))
    df.select("id", "name", "k").write.partitionBy("k").parquet(os.path.join(d, "parquet_part"))
    return d


CASES: dict[str, Callable[[Any, str], Any]] = {}


def case(fn: Callable[[Any, str], Any]) -> Callable[[Any, str], Any]:
    CASES[fn.__name__.removeprefix("c_")] = fn
    return fn


def _json(name: str, schema: str | None = None, **opts: Any) -> Callable[[Any, str], Any]:
    def run(s: Any, d: str) -> Any:
        r = s.read.options(**opts)
        if schema is not None:
            r = r.schema(schema)
        return r.json(_p(d, name))
    return run


_SCHEMA = "b bigint, a string, c boolean, _corrupt_record string, s struct<y:bigint>, " \
          "g array<struct<h:int>>"
for _name, _args in {
    "awkward_infer": ("awkward", None, {}),
    "awkward_primitives_as_string": ("awkward", None, {"primitivesAsString": True}),
    "awkward_dropmalformed": ("awkward", None, {"mode": "DROPMALFORMED"}),
    "awkward_failfast": ("awkward", None, {"mode": "FAILFAST"}),
    "awkward_corrupt_name": ("awkward", None, {"columnNameOfCorruptRecord": "bad"}),
    "awkward_schema_permissive": ("awkward", _SCHEMA, {}),
    "awkward_schema_without_corrupt": ("awkward", "b bigint, a string, c boolean", {}),
    "awkward_schema_corrupt_option": ("awkward", "b bigint, a string, bad string",
                                      {"columnNameOfCorruptRecord": "bad"}),
    "awkward_schema_dropmalformed": ("awkward", _SCHEMA, {"mode": "DROPMALFORMED"}),
    "awkward_schema_failfast": ("awkward", "b bigint, a string", {"mode": "FAILFAST"}),
    "clean_infer": ("clean", None, {}),
    "clean_schema_types": ("clean", "id int, score decimal(12,2), tags array<string>, "
                                    "extra struct<k:array<bigint>>, ok string, missing date", {}),
    "numbers_infer": ("numbers", None, {}),
    "numbers_prefers_decimal": ("numbers", None, {"prefersDecimal": True}),
    "times_infer": ("times", None, {}),
    "times_infer_timestamp": ("times", None, {"inferTimestamp": True}),
    "times_schema": ("times", "t timestamp, u timestamp, v string", {}),
    "multiline": ("multi", None, {"multiLine": True}),
    "all_null_fields": ("allnull", None, {}),
    "quirks_infer": ("quirks", None, {}),
    "quirks_schema": ("quirks", "a bigint, d string, t string, _corrupt_record string", {}),
    "quirks_no_single_quotes": ("quirks", "a bigint, d string, _corrupt_record string",
                                {"allowSingleQuotes": False}),
    "quirks_date_formats": ("quirks", "a bigint, d date, t timestamp",
                            {"dateFormat": "dd/MM/yyyy", "timestampFormat": "dd/MM/yyyy HH:mm"}),
    "quirks_default_date_formats": ("quirks", "a bigint, d date, t timestamp", {}),
    "quirks_infer_timestamp_format": ("quirks", None, {"inferTimestamp": True,
                                                       "timestampFormat": "dd/MM/yyyy HH:mm"}),
    "drop_field_if_all_null": ("allnull", None, {"dropFieldIfAllNull": True}),
    "pyspark_nested": ("pyspark_nested", None, {}),
    "pyspark_partitioned": ("pyspark_part", None, {}),
    "mixed_partition_types": ("mixedpart", None, {}),
    "typed_partitions": ("typedpart", None, {}),
    "partition_subdir": ("pyspark_part/k=1", None, {}),
    "partitioned_user_schema": ("pyspark_part", "id int, k string, name string", {}),
}.items():
    CASES[_name] = _json(_args[0], _args[1], **_args[2])


@case
def c_partition_base_path(s, d):
    return s.read.option("basePath", _p(d, "pyspark_part")).json(_p(d, "pyspark_part/k=1"))


@case
def c_partition_inference_off(s, d):
    s.conf.set("spark.sql.sources.partitionColumnTypeInference.enabled", "false")
    try:
        return s.read.json(_p(d, "pyspark_part")).where("k = '1'")
    finally:
        s.conf.set("spark.sql.sources.partitionColumnTypeInference.enabled", "true")


@case
def c_pruned_query(s, d):
    df = s.read.json(_p(d, "pyspark_part"))
    return df.where("k >= 1 AND s <> 'a b' AND id > 3").select("s", "id", "k")


@case
def c_pruned_null_partition(s, d):
    return s.read.json(_p(d, "pyspark_part")).where("k IS NULL OR s IS NULL") \
        .groupBy("k", "s").count()


@case
def c_pruned_to_nothing(s, d):
    return s.read.json(_p(d, "pyspark_part")).where("k = 42")


@case
def c_parquet_partitioned_pruned(s, d):
    return s.read.parquet(_p(d, "parquet_part")).where("k <=> 1 OR k IS NULL").where("id > 3")


@case
def c_csv_partitioned(s, d):
    return s.read.csv(_p(d, "csvpart"), header=True, inferSchema=True).where("k = 2")


@case
def c_sql_on_json_file(s, d):
    return s.sql(f"SELECT k, count(*) AS n, max(id) AS m FROM json.`{_p(d, 'pyspark_part')}` "
                 "WHERE s IS NOT NULL GROUP BY k")


@case
def c_temp_view_using_json(s, d):
    s.sql("CREATE OR REPLACE TEMPORARY VIEW src_json USING json OPTIONS "
          f"(path '{_p(d, 'clean')}')")
    return s.sql("SELECT id, score, tags, ok FROM src_json WHERE id > 1")


@case
def c_json_path_not_found(s, d):
    return s.read.json(_p(d, "no_such_dir"))


@pytest.fixture(scope="module")
def spark_outcomes(spark: Any, data_dir: str) -> dict[str, Any]:
    session = spark.newSession()
    session.conf.set("spark.sql.shuffle.partitions", "1")
    return {name: outcome(session, fn, data_dir, True) for name, fn in sorted(CASES.items())}


#: cases the default run takes on the Spark runtime (it reads with Spark's own JSON reader, so
#: one case per feature Ember wires through: schema, pruning, SQL on files); the rest run there
#: with EMBER_FULL_SOURCES=1
SPARK_RUNTIME_SAMPLE = {"awkward_schema_permissive", "awkward_infer", "pruned_query",
                        "pruned_to_nothing", "typed_partitions", "sql_on_json_file",
                        "parquet_partitioned_pruned", "csv_partitioned"}


@pytest.mark.parametrize("runtime", RUNTIMES)
@pytest.mark.parametrize("name", sorted(CASES))
def test_json_and_partitions(spark_outcomes: dict[str, Any], data_dir: str, name: str,
                             runtime: str) -> None:
    if runtime == "spark" and name not in SPARK_RUNTIME_SAMPLE \
            and not os.environ.get("EMBER_FULL_SOURCES"):
        pytest.skip("sampled on the Spark runtime (EMBER_FULL_SOURCES=1 runs every case)")
    expected = spark_outcomes[name]
    actual = outcome(new_session(None, runtime), CASES[name], data_dir, False)
    problem = compare(expected, actual)
    if problem is not None:
        pytest.fail(f"case {name!r} differs from PySpark\n{problem}", pytrace=False)


# -- EXPLAIN -------------------------------------------------------------------------------------

def _scan_line(text: str) -> str:
    line = next(ln for ln in text.splitlines() if "FileScan" in ln)
    return re.sub(r"#\d+L?", "#", line)  # expression ids (dynamicpruning#12 included)


def _plan_shape(text: str) -> list[str]:
    """The operators of a physical plan (names and their column lists, ids dropped)."""
    ops = []
    for ln in text.splitlines():
        m = re.match(r"[\s:+\-*()0-9]*(Project|Filter|FileScan json) (\[[^\]]*\])?", ln)
        if m:
            ops.append(re.sub(r"#\d+L?", "#", m.group(0).lstrip(" :+-*()0123456789")))
    return ops


def _field(line: str, name: str) -> str:
    m = re.search(name + r": (\[.*?\])(, \w+:|$)", line)
    assert m is not None, line
    return m.group(1)


@pytest.mark.parametrize("where", [
    "k = 1 AND id > 2",
    "k > 0 AND s IN ('a b', 'p=q') AND name IS NOT NULL",
    "(k = 1 OR s = 'x/y') AND id < 10",
])
def test_explain_partition_filters(spark: Any, data_dir: str, where: str) -> None:
    path = _p(data_dir, "pyspark_part")
    sdf = spark.read.json(path).where(where).select("id")
    spark_line = _scan_line(spark._jvm.PythonSQLUtils.explainString(
        sdf._jdf.queryExecution(), "simple"))
    session = new_session(None, "local")
    edf = session.read.json(path).where(where).select("id")
    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        edf.explain()
    ember_line = _scan_line(buf.getvalue())
    shape = _plan_shape(buf.getvalue())
    assert shape[0].startswith("Project") and shape[-1].startswith("FileScan json"), shape
    assert shape == _plan_shape(spark._jvm.PythonSQLUtils.explainString(
        sdf._jdf.queryExecution(), "simple"))
    for name in ("PartitionFilters", "DataFilters"):
        assert _field(ember_line, name) == _field(spark_line, name), (ember_line, spark_line)
    assert ember_line.split(" Batched")[0] == spark_line.split(" Batched")[0]
    assert re.search(r"ReadSchema: (\S+)", ember_line).group(1) == \
        re.search(r"ReadSchema: (\S+)", spark_line).group(1)


def test_pruning_reads_only_matching_directories(data_dir: str, monkeypatch) -> None:
    """The local runtime opens only files of the partitions the filters select."""
    from ember.execution import json_source

    opened: list[str] = []
    real = json_source.read_json

    def spy(path, *a, **k):
        opened.append(path)
        return real(path, *a, **k)

    from ember.execution import scan

    monkeypatch.setattr(scan, "read_json", spy)
    session = new_session(None, "local")
    rows = session.read.json(_p(data_dir, "pyspark_part")).where("k = 1 AND s = 'a b'").collect()
    assert rows and opened
    assert all(os.sep + "k=1" + os.sep in p and "s=a b" in p for p in opened), opened


# -- split sizing --------------------------------------------------------------------------------

@pytest.mark.parametrize("conf", [
    {},
    {"spark.sql.files.maxPartitionBytes": "300"},
    {"spark.sql.files.maxPartitionBytes": "300", "spark.sql.files.openCostInBytes": "1000"},
    {"spark.sql.files.maxPartitionBytes": "1000", "spark.sql.files.minPartitionNum": "7"},
])
def test_split_sizing_matches_spark(spark: Any, data_dir: str, conf: dict[str, str]) -> None:
    """Ember's ``FilePartition`` planning gives Spark's number of scan partitions, and the
    local runtime reads every line exactly once however the files are cut."""
    from ember.execution.file_index import file_splits
    from ember.readers import expand_paths

    path = _p(data_dir, "pyspark_nested")
    session = spark.newSession()
    for k, v in conf.items():
        session.conf.set(k, v)
    sdf = session.read.json(path)
    expected_parts = sdf.rdd.getNumPartitions()
    expected_rows = sorted(map(repr, sdf.collect()))
    files = expand_paths([path], "json")
    parts = file_splits(files, True, int(conf.get("spark.sql.files.maxPartitionBytes", 128 << 20)),
                        int(conf.get("spark.sql.files.openCostInBytes", 4 << 20)),
                        int(conf.get("spark.sql.files.minPartitionNum", 2)))
    assert len(parts) == expected_parts
    ember = new_session(conf, "local")
    assert sorted(map(repr, ember.read.json(path).collect())) == expected_rows


@pytest.mark.parametrize("fmt", ["json", "parquet", "csv"])
def test_local_scan_partitions_follow_the_split_keys(tmp_path, fmt: str) -> None:
    """On the local runtime ``spark.sql.files.maxPartitionBytes`` / ``openCostInBytes`` cut a
    scan into more partitions, and the rows stay the same."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    from ember.physical.nodes import FileSourceScanExec
    from ember.runtime.local.runtime import LocalRuntime

    path = str(tmp_path / f"data.{fmt}")
    table = pa.table({"id": pa.array(range(4000), pa.int64()),
                      "s": [f"value-{i}" for i in range(4000)]})
    if fmt == "json":
        with open(path, "w") as f:
            f.writelines('{"id":%d,"s":"value-%d"}\n' % (i, i) for i in range(4000))
    elif fmt == "csv":
        with open(path, "w") as f:
            f.write("id,s\n")
            f.writelines("%d,value-%d\n" % (i, i) for i in range(4000))
    else:
        pq.write_table(table, path, row_group_size=250)

    def scan(conf: dict[str, str]) -> tuple[int, list[int]]:
        session = new_session(conf, "local")
        df = session.read.format(fmt).options(header=True, inferSchema=True).load(path)
        node = df._qe.executed_plan.find(lambda n: isinstance(n, FileSourceScanExec))
        rt = LocalRuntime(session.sql_conf, parallelism=2)
        parts = rt.execute(node)
        ids = sorted(i for p in parts for b in p() for i in b.column(0).to_pylist())
        return len(parts), ids

    default_parts, default_ids = scan({})
    small_parts, small_ids = scan({"spark.sql.files.maxPartitionBytes": "8000",
                                   "spark.sql.files.openCostInBytes": "1000"})
    assert default_ids == small_ids == list(range(4000))
    assert small_parts > default_parts, (small_parts, default_parts)


# -- dynamic partition pruning -------------------------------------------------------------------

_DIM = ("CREATE OR REPLACE TEMP VIEW dim AS SELECT * FROM VALUES "
        + ", ".join(f"({i}L, 'n{i}')" for i in range(4)) + " AS t(kid, name)")
_DPP_QUERIES = [
    "SELECT f.id, f.k, d.name FROM fact f JOIN dim d ON f.k = d.kid WHERE d.name IN ('n1', 'n2')",
    "SELECT f.id, f.s FROM fact f LEFT SEMI JOIN dim d ON f.k = d.kid AND d.name = 'n0'",
]


@pytest.fixture(scope="module")
def dpp_expected(spark: Any, data_dir: str) -> list[tuple[list[str], list[tuple]]]:
    session = spark.newSession()
    session.conf.set("spark.sql.autoBroadcastJoinThreshold", "100000")
    session.sql(_DIM)
    session.read.json(_p(data_dir, "pyspark_part")).createOrReplaceTempView("fact")
    out = []
    for q in _DPP_QUERIES:
        df = session.sql(q)
        scan = _scan_line(spark._jvm.PythonSQLUtils.explainString(df._jdf.queryExecution(),
                                                                  "simple"))
        out.append((scan, sorted(map(repr, df.collect()))))
    return out


@pytest.mark.parametrize("runtime", RUNTIMES)
@pytest.mark.parametrize("q", range(len(_DPP_QUERIES)))
def test_dynamic_partition_pruning(dpp_expected, data_dir: str, runtime: str, q: int,
                                   monkeypatch) -> None:
    """A broadcast join's build keys prune the partitioned scan of its stream side: EXPLAIN
    shows Spark's ``dynamicpruningexpression`` partition filter, the rows are Spark's, and only
    the directories of the build keys (k = 0, 1, 2) are read."""
    from ember.runtime.spark import sources

    opened: list[str] = []
    if runtime == "local":
        from ember.execution import scan

        real = scan.read_json
        monkeypatch.setattr(scan, "read_json",
                            lambda path, *a, **k: opened.append(path) or real(path, *a, **k))
    else:
        real_load = sources._load
        monkeypatch.setattr(sources, "_load",
                            lambda spark, rel: opened.extend(rel.paths) or real_load(spark, rel))
    session = new_session({"spark.sql.autoBroadcastJoinThreshold": "100000"}, runtime)
    session.sql(_DIM)
    session.read.json(_p(data_dir, "pyspark_part")).createOrReplaceTempView("fact")
    df = session.sql(_DPP_QUERIES[q])
    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        df.explain()
    spark_scan, spark_rows = dpp_expected[q]
    ember_scan = _scan_line(buf.getvalue())
    assert "dynamicpruningexpression" in spark_scan
    assert _field(ember_scan, "PartitionFilters") == _field(spark_scan, "PartitionFilters")
    assert sorted(map(repr, df.collect())) == spark_rows
    fact = [p for p in opened if "pyspark_part" in p]
    assert fact and all(re.search(r"/k=[0-2]/", p) for p in fact), fact


def test_dynamic_partition_pruning_can_be_disabled(spark: Any, data_dir: str) -> None:
    key = "spark.sql.optimizer.dynamicPartitionPruning.enabled"
    conf = {"spark.sql.autoBroadcastJoinThreshold": "100000", key: "false"}
    session = spark.newSession()
    for k, v in conf.items():
        session.conf.set(k, v)
    session.sql(_DIM)
    session.read.json(_p(data_dir, "pyspark_part")).createOrReplaceTempView("fact")
    spark_scan = _scan_line(spark._jvm.PythonSQLUtils.explainString(
        session.sql(_DPP_QUERIES[0])._jdf.queryExecution(), "simple"))
    ember = new_session(conf, "local")
    ember.sql(_DIM)
    ember.read.json(_p(data_dir, "pyspark_part")).createOrReplaceTempView("fact")
    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        ember.sql(_DPP_QUERIES[0]).explain()
    assert _field(_scan_line(buf.getvalue()), "PartitionFilters") == \
        _field(spark_scan, "PartitionFilters")
    assert "dynamicpruning" not in spark_scan


def test_csv_splits_match_spark(spark: Any, tmp_path: Any) -> None:
    """CSV is split like JSON (Spark's ``FilePartition`` of line ranges; the header only in a
    file's first split): Spark's number of scan partitions and its rows, on the local runtime
    and in the Spark runtime's stage description."""
    from ember.execution.file_index import file_splits
    from ember.runtime.spark.stages import _file_splits

    for name, n in (("a.csv", 700), ("b.csv", 90)):
        with open(tmp_path / name, "w") as f:
            f.write("id,s\n")
            f.writelines('%d,"v,%d"\n' % (i, i) for i in range(n))
    conf = {"spark.sql.files.maxPartitionBytes": "2000", "spark.sql.files.openCostInBytes": "100"}
    oracle = spark.newSession()
    for k, v in conf.items():
        oracle.conf.set(k, v)
    sdf = oracle.read.csv(str(tmp_path), header=True, schema="id int, s string")
    files = sorted(str(p) for p in tmp_path.iterdir())
    session = new_session(conf, "local")
    parts = file_splits(files, True, 2000, 100, session.sql_conf.get(
        "spark.sql.files.minPartitionNum") or 2)
    assert len(parts) == sdf.rdd.getNumPartitions() > 2
    assert _file_splits(tuple(files), 2, session.sql_conf) == len(parts)
    got = session.read.csv(str(tmp_path), header=True, schema="id int, s string").collect()
    assert sorted(map(tuple, got)) == sorted(map(tuple, sdf.collect()))
    assert len(got) == 790


def test_spark_runtime_scan_splits_follow_the_session(spark: Any, data_dir: str) -> None:
    """On the Spark runtime the scan's RDD has the partitions Spark's FilePartition gives under
    the Ember session's ``spark.sql.files.*`` keys (pushed to Spark's session before a run)."""
    from ember.physical.nodes import FileSourceScanExec
    from ember.runtime.spark import SparkRuntime, sources
    from ember.runtime.spark.session import push_conf

    path = _p(data_dir, "pyspark_nested")
    conf = {"spark.sql.files.maxPartitionBytes": "300", "spark.sql.files.openCostInBytes": "10"}
    oracle = spark.newSession()
    for k, v in conf.items():
        oracle.conf.set(k, v)
    expected = oracle.read.json(path).rdd.getNumPartitions()
    session = new_session(conf, "spark")
    node = session.read.json(path)._qe.executed_plan.find(
        lambda n: isinstance(n, FileSourceScanExec))
    try:
        push_conf(session.spark_session, session.sql_conf)
        with SparkRuntime(session.spark_session, session.sql_conf) as rt:
            assert sources.file_scan(rt, node).getNumPartitions() == expected > 2
    finally:  # the oracle session is shared: give it back its defaults
        pushed = getattr(session.spark_session, "_ember_pushed", {})
        for k in conf:
            session.spark_session.conf.unset(k)
            pushed.pop(k, None)
