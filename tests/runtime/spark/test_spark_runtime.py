"""The Spark runtime's own machinery, on the test run's SparkSession: how plans become RDDs
(shuffles, zips, broadcasts, unions), shuffle coalescing, range partitioning, the global nested
loop join, errors, EXPLAIN's stages, sources and pushed filters, and the CLI.

Row-level agreement with Spark over the whole SQL surface is checked by the conformance and
differential suites, which run on both runtimes; these tests pin the mechanisms.
"""

from __future__ import annotations

import pickle
import re

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import ember
from ember.errors import EmberError
from ember.physical.nodes import BroadcastHashJoinExec, SortExec

pytestmark = pytest.mark.spark


@pytest.fixture()
def session(spark):
    s = ember.Session({"spark.sql.shuffle.partitions": "4"}, runtime="spark", spark=spark)
    s.createDataFrame(pa.table({"k": pa.array([1, 2, 3, 4, 5] * 40, pa.int64()),
                                "v": pa.array(range(200), pa.int64())})).createOrReplaceTempView("t")
    s.createDataFrame(pa.table({"k": pa.array([1, 2, 3, 9], pa.int64()),
                                "name": ["a", "b", "c", "z"]})).createOrReplaceTempView("d")
    return s


def _local(session, sql: str) -> pa.Table:
    local = ember.Session(dict(session.sql_conf.items()))
    for name in ("t", "d"):
        local.createDataFrame(session.table(name).to_arrow()).createOrReplaceTempView(name)
    return local.sql(sql).to_arrow()


def _rdd_lineage(session, sql: str) -> str:
    from ember.runtime.spark.runtime import SparkRuntime, prepare_for_spark

    df = session.sql(sql)
    rt = SparkRuntime(session.spark_session, session.sql_conf)
    rdd = rt.rdd(prepare_for_spark(df._qe.executed_plan))
    return rdd.toDebugString().decode()


def test_sort_merge_join_inputs_share_one_tagged_shuffle(session) -> None:
    session.conf.set("spark.sql.autoBroadcastJoinThreshold", "-1")
    sql = "SELECT t.k, count(*) AS c, sum(v) AS s FROM t JOIN d ON t.k = d.k GROUP BY t.k"
    lineage = _rdd_lineage(session, sql)
    assert lineage.count("ShuffledRDD") == 1 and "UnionRDD" in lineage, lineage
    assert "Zipped" not in lineage, lineage
    got = session.sql(sql + " ORDER BY t.k").collect()
    assert [tuple(r) for r in got] == [(1, 40, sum(range(0, 200, 5))),
                                       (2, 40, sum(range(1, 200, 5))),
                                       (3, 40, sum(range(2, 200, 5)))]


def test_a_reused_shuffle_is_read_with_the_others_per_partition(session, tmp_path) -> None:
    # the self-join reads one shuffle twice (a reused exchange): its shuffled RDD and the
    # other inputs' are partitioned alike, and their partitioner-aware union hands each task
    # its partition of each in the JVM, with no Python step per input (a zip needed one per
    # input, to make a partition one element); a shuffle read by two inputs is read once
    session.conf.set("spark.sql.autoBroadcastJoinThreshold", "-1")
    pq.write_table(session.table("t").to_arrow(), str(tmp_path / "t.parquet"))
    session.sql(f"CREATE TEMP VIEW tp USING parquet OPTIONS (path '{tmp_path}/t.parquet')")
    sqls = {"SELECT a.k, count(*) AS c FROM tp a JOIN tp b ON a.k = b.k GROUP BY a.k":
            [(k, 1600) for k in range(1, 6)],
            # three inputs: the reused shuffle and one more
            "SELECT a.k, count(*) AS c FROM tp a JOIN tp b ON a.k = b.k "
            "JOIN d ON a.k = d.k GROUP BY a.k": [(k, 1600) for k in range(1, 4)]}
    for sql, want in sqls.items():
        assert "ReusedExchange" in session.sql(sql)._qe.executed_plan.tree_string()
        lineage = _rdd_lineage(session, sql)
        assert "Zipped" not in lineage, lineage
        # the self-join's two inputs are one shuffle, read once; with d, a union of two
        assert lineage.count("ShuffledRDD") == 1 + ("JOIN d" in sql), lineage
        assert lineage.count("PartitionerAwareUnionRDD") == ("JOIN d" in sql), lineage
        assert sorted(tuple(r) for r in session.sql(sql).collect()) == want
        text = session.sql(sql)._qe.explain_string()
        assert "(read together per partition)" in text, text


def test_broadcast_join_ships_the_build_side_once(session, spark) -> None:
    session.conf.set("spark.sql.autoBroadcastJoinThreshold", "-1")
    sql = "SELECT /*+ BROADCAST(d) */ t.v, d.name FROM t JOIN d ON t.k = d.k"
    assert "BroadcastHashJoin" in session.sql(sql)._qe.executed_plan.tree_string()
    lineage = _rdd_lineage(session, sql)
    assert "ShuffledRDD" not in lineage and "Zipped" not in lineage, lineage
    got = session.sql(sql).to_arrow()
    assert got.num_rows == 120
    assert sorted(got.column("name").to_pylist()) == sorted(["a", "b", "c"] * 40)


def test_coalesced_tasks_keep_the_partitioning(session) -> None:
    from ember.runtime.spark.coalesce import task_counts
    from ember.physical.nodes import ShuffleExchangeExec

    session.conf.set("spark.sql.autoBroadcastJoinThreshold", "-1")
    sql = "SELECT t.k, count(*) AS c FROM t JOIN d ON t.k = d.k GROUP BY t.k"
    plan = session.sql(sql)._qe.executed_plan
    exchanges = plan.collect(lambda n: n if isinstance(n, ShuffleExchangeExec) else None)
    counts = task_counts(plan, session.sql_conf, 2)
    assert {counts[e] for e in exchanges} == {1}  # a few KB: one task per shuffle
    expected = sorted(tuple(r.values()) for r in _local(session, sql).to_pylist())
    for enabled in ("true", "false"):
        session.conf.set("ember.spark.coalescePartitions.enabled", enabled)
        counts = task_counts(plan, session.sql_conf, 2)
        assert {counts[e] for e in exchanges} == ({1} if enabled == "true" else {4})
        rows = session.sql(sql).collect()
        assert sorted(tuple(r) for r in rows) == expected


def test_range_partitioned_sort_is_globally_ordered(session) -> None:
    session.conf.set("ember.spark.coalescePartitions.enabled", "false")
    df = session.sql("SELECT v, k FROM t ORDER BY k DESC, v")
    assert "rangepartitioning" in df._qe.executed_plan.tree_string()
    rows = [tuple(r) for r in df.collect()]
    assert rows == sorted(rows, key=lambda r: (-r[1], r[0]))
    assert len(rows) == 200


def test_global_nested_loop_join_emits_unmatched_build_rows_once(session) -> None:
    session.conf.set("ember.spark.coalescePartitions.enabled", "false")
    sql = ("SELECT /*+ BROADCAST(d) */ d.name, t.v FROM d LEFT JOIN t "
           "ON d.k < t.k AND t.v < 10")
    plan = session.sql(sql)._qe.executed_plan.tree_string()
    assert "BroadcastNestedLoopJoin BuildLeft, LeftOuter" in plan, plan
    got = sorted(tuple(r) for r in session.sql(sql).collect())
    expected = sorted(tuple(r.values()) for r in _local(session, sql).to_pylist())
    assert got == expected
    assert ("z", None) in got and got.count(("z", None)) == 1


def test_union_limit_top_k_and_cartesian(session) -> None:
    for sql in ("SELECT k FROM t UNION ALL SELECT k FROM d",
                "SELECT v FROM t ORDER BY v DESC LIMIT 3",
                "SELECT * FROM (SELECT v FROM t LIMIT 7) x",
                "SELECT count(*) FROM t CROSS JOIN d"):
        got = sorted(tuple(r.values()) for r in session.sql(sql).to_arrow().to_pylist())
        want = sorted(tuple(r.values()) for r in _local(session, sql).to_pylist())
        if "LIMIT 7" in sql:
            assert len(got) == 7
        else:
            assert got == want, sql


def test_task_error_is_the_ember_error_naming_its_operator(session) -> None:
    with pytest.raises(EmberError) as info:
        session.sql("SELECT k, v / (k - k) AS bad FROM t").collect()
    err = info.value
    assert err.error_class == "DIVIDE_BY_ZERO"
    assert err.ember_operator.startswith("Project ")
    assert any("operator Project" in n for n in err.__notes__)
    assert "org.apache" not in str(err) and "Py4J" not in str(err)


def test_a_crashed_worker_without_retries_is_a_clear_ember_error(session, tmp_path) -> None:
    # local[2] gives each task one attempt; the cluster test covers Spark's retry
    session.conf.set("ember.spark.test.killWorkerOnce", str(tmp_path / "killed"))
    with pytest.raises(EmberError) as info:
        session.sql("SELECT k, count(*) FROM t GROUP BY k").collect()
    assert (tmp_path / "killed").exists()
    assert "Spark job failed" in str(info.value)
    session.conf.unset("ember.spark.test.killWorkerOnce")
    assert len(session.sql("SELECT k, count(*) FROM t GROUP BY k").collect()) == 5


def test_explain_shows_the_spark_stages(session) -> None:
    session.conf.set("spark.sql.autoBroadcastJoinThreshold", "-1")
    text = session.sql("SELECT t.k, count(*) FROM t JOIN d ON t.k = d.k GROUP BY t.k"
                       )._qe.explain_string("simple")
    stages = text.split("== Spark Stages ==", 1)[1]
    assert "Stage 1 (result, 1 task): reads the shuffle of stage 0 (all inputs co-grouped)" \
        in stages, stages
    assert "(one shuffle, pieces tagged by input)" in stages, stages
    assert "SortMergeJoin" in stages and "map side (4 partitions read as 1 task)" in stages
    session.conf.unset("spark.sql.autoBroadcastJoinThreshold")
    text = session.sql("SELECT /*+ BROADCAST(d) */ * FROM t JOIN d ON t.k = d.k"
                       )._qe.explain_string("simple")
    assert "Job 0 (broadcast BroadcastExchange" in text and "Job 1 (collect the result)" in text


def test_files_come_through_spark_readers_with_pushed_filters(session, tmp_path) -> None:
    from ember.runtime.spark.sources import filter_sql

    path = str(tmp_path / "f.parquet")
    pq.write_table(pa.table({"a": pa.array(range(1000), pa.int64()),
                             "s": [f"x{i % 10}" for i in range(1000)]}), path, row_group_size=100)
    csv = tmp_path / "f.csv"
    csv.write_text("a,s\n1,x\n2,y\n3,it's\n")
    session.sql(f"CREATE TEMP VIEW p USING parquet OPTIONS (path '{path}')")
    session.sql(f"CREATE TEMP VIEW c USING csv OPTIONS (path '{csv}', header 'true')")
    df = session.sql("SELECT count(*), sum(a) FROM p WHERE a >= 900 AND s IN ('x1', 'x2')")
    scan = df._qe.executed_plan.collect(lambda n: n if hasattr(n, "data_filters") else None)[0]
    pushed = [filter_sql(f) for f in scan.data_filters]
    assert "(`a` >= CAST('900' AS bigint))" in pushed
    assert "(`s` IN ('x1', 'x2'))" in pushed
    assert tuple(df.collect()[0]) == (20, sum(a for a in range(900, 1000) if a % 10 in (1, 2)))
    rows = session.sql("SELECT s FROM c WHERE s = 'it''s'").collect()
    assert [r.s for r in rows] == ["it's"]
    for pattern, escape, expected in (("it%", None, ["it's"]), ("%'_", None, ["it's"]),
                                      ("x!_", "!", []), ("_", "#", ["x", "y"])):
        where = f"s LIKE '{pattern.replace(chr(39), chr(39) * 2)}'" + (
            f" ESCAPE '{escape}'" if escape else "")
        df = session.sql(f"SELECT s FROM c WHERE {where}")
        scan = df._qe.executed_plan.collect(
            lambda n: n if hasattr(n, "data_filters") else None)[0]
        assert any("LIKE" in (filter_sql(f) or "") for f in scan.data_filters), where
        assert sorted(r.s for r in df.collect()) == expected, where


def test_plans_and_errors_pickle_for_the_executors(session) -> None:
    plan = session.sql("SELECT k, count(*) FROM t GROUP BY k")._qe.executed_plan
    back = pickle.loads(pickle.dumps(plan))
    assert back == plan and hash(back) == hash(plan)
    assert back.tree_string() == plan.tree_string()
    from ember.errors import ArithmeticError_

    err = pickle.loads(pickle.dumps(ArithmeticError_("Division by zero",
                                                     error_class="DIVIDE_BY_ZERO")))
    assert str(err) == "[DIVIDE_BY_ZERO] Division by zero"


def test_package_zip_holds_the_sources_and_their_bytecode(tmp_path) -> None:
    import os
    import subprocess
    import sys
    import zipfile

    from ember.runtime.spark.session import package_zip

    path = package_zip()
    names = zipfile.ZipFile(path).namelist()
    assert "ember/__init__.py" in names and "ember/runtime/spark/worker.py" in names
    assert not any("__pycache__" in n for n in names)
    sources = {n[:-3] for n in names if n.endswith(".py")}
    assert sources == {n[:-4] for n in names if n.endswith(".pyc")}
    # a fresh interpreter imports ember from the zip's bytecode, not from this checkout
    probe = ("import ember.runtime.spark.worker as w, sys; "
             "print(w.__file__); print(sys.modules['ember.session'].__file__)")
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True,
                         cwd=tmp_path, env={**os.environ, "PYTHONPATH": str(path)}, check=True)
    files = out.stdout.split()
    assert files == [f"{path}/ember/runtime/spark/worker.pyc", f"{path}/ember/session.pyc"], out


def test_cli_runs_on_the_spark_runtime(spark, capsys) -> None:
    from ember.cli import main

    assert main(["--runtime", "spark", "sql", "SELECT 1 + 1 AS two"]) == 0
    assert "two" in capsys.readouterr().out
    with pytest.raises(SystemExit):
        main(["--master", "local[1]", "sql", "SELECT 1"])


# -- adaptive join conversion (runtime/spark/adaptive.py) ------------------------------------------

@pytest.fixture()
def wide(session, tmp_path):
    """``w``: a Parquet file of 4000 rows whose size estimate is over the test's broadcast
    threshold; filtered on ``v`` it shrinks far below it, which only the measured shuffle
    shows."""
    n = 4000
    pq.write_table(pa.table({"k": pa.array([i % 50 for i in range(n)], pa.int64()),
                             "v": pa.array(range(n), pa.int64())}), str(tmp_path / "w.parquet"))
    session.sql(f"CREATE TEMP VIEW w USING parquet OPTIONS (path '{tmp_path}/w.parquet')")
    session.conf.set("spark.sql.autoBroadcastJoinThreshold", str(20_000))
    return session


def _adaptive_run(session, sql: str):
    from ember.runtime.spark.runtime import SparkRuntime

    qe = session.sql(sql)._qe
    plan = qe.executed_plan
    with SparkRuntime(session.spark_session, session.sql_conf, logical_links=qe._links) as rt:
        table = rt.collect(plan)
    return plan, rt.adaptive_log, table, rt.final_plan


def _local_rows(session, sql: str, tables=("w",)) -> list[tuple]:
    local = ember.Session(dict(session.sql_conf.items()))
    for name in tables:
        local.createDataFrame(session.table(name).to_arrow()).createOrReplaceTempView(name)
    return sorted(tuple(r) for r in local.sql(sql).collect())


def test_a_side_that_turns_out_small_is_broadcast(wide, monkeypatch) -> None:
    from pyspark.rdd import RDD

    collected: list[int] = []  # partitions of each RDD collected to the driver
    lineages: list[str] = []
    original = RDD.collect

    def collect(self):
        collected.append(self.getNumPartitions())
        lineages.append(self.toDebugString().decode())
        return original(self)

    monkeypatch.setattr(RDD, "collect", collect)
    wide.conf.set("ember.spark.coalescePartitions.enabled", "false")  # 4 shuffle partitions
    sql = "SELECT a.v, b.v FROM w a JOIN w b ON a.k = b.k WHERE b.v < 3"
    plan, log, table, _ = _adaptive_run(wide, sql)
    # the broadcast reads the measured shuffle with one task (then the result is collected),
    # its 4 partitions coalesced in the JVM before the one Python step (after it, the Python
    # step would run once per shuffle partition)
    assert collected[0] == 1 and len(collected) == 2, collected
    steps = [re.search(r"(\w+RDD)\[", line).group(1) for line in lineages[0].splitlines()]
    reduce_side = steps[:steps.index("ShuffledRDD")]
    assert reduce_side[:2] == ["PythonRDD", "CoalescedRDD"], lineages[0]
    assert reduce_side.count("PythonRDD") == 1, lineages[0]
    assert "SortMergeJoin" in plan.tree_string()  # planned shuffled: the estimates are big
    assert [(type(a).__name__, type(b).__name__, b.build_side.name) for a, b in log] == [
        ("SortMergeJoinExec", "BroadcastHashJoinExec", "RIGHT")]
    # the big side streams in its own partitions: its exchange is gone
    assert "Exchange" not in log[0][1].left.tree_string()
    assert sorted(zip(*(c.to_pylist() for c in table.columns))) == _local_rows(wide, sql)
    assert table.num_rows == 3 * 80


def test_the_sort_an_ordered_parent_needs_is_kept(wide) -> None:
    # the outer sort-merge join relies on the inner join's ordering on k: converted first, the
    # inner join's output is sorted instead; once the outer join is converted too (its right
    # side is small; its left side has no exchange of its own), that sort goes
    sql = ("SELECT a.v, b.v, c.v FROM w a JOIN w b ON a.k = b.k JOIN w c ON a.k = c.k "
           "WHERE b.v < 2 AND c.v > 3900")
    plan, log, table, final = _adaptive_run(wide, sql)
    assert [type(b).__name__ for _, b in log] == ["SortExec", "BroadcastHashJoinExec"]
    assert isinstance(log[0][1].child, BroadcastHashJoinExec)
    assert final.collect(lambda n: n if isinstance(n, SortExec) else None) == []
    assert len(final.collect(lambda n: n if isinstance(n, BroadcastHashJoinExec) else None)) == 2
    assert sorted(zip(*(c.to_pylist() for c in table.columns))) == _local_rows(wide, sql)


def test_a_big_sort_merge_join_runs_as_a_shuffled_hash_join(wide) -> None:
    wide.conf.set("spark.sql.autoBroadcastJoinThreshold", "100")
    sql = "SELECT a.k, count(*) AS c FROM w a LEFT JOIN w b ON a.k = b.k AND b.v < 100 GROUP BY a.k"
    plan, log, table, _ = _adaptive_run(wide, sql)
    assert [(type(a).__name__, type(b).__name__) for a, b in log] == [
        ("SortMergeJoinExec", "ShuffledHashJoinExec")]
    assert sorted(zip(*(c.to_pylist() for c in table.columns))) == _local_rows(wide, sql)


def test_a_join_hint_or_adaptive_off_keeps_the_planned_join(wide) -> None:
    sql = "SELECT /*+ MERGE(b) */ a.v, b.v FROM w a JOIN w b ON a.k = b.k WHERE b.v < 3"
    assert _adaptive_run(wide, sql)[1] == []
    wide.conf.set("spark.sql.adaptive.enabled", "false")
    assert _adaptive_run(wide, sql.replace("/*+ MERGE(b) */ ", ""))[1] == []


def test_broadcasts_are_built_concurrently_once_each(session, monkeypatch) -> None:
    # three broadcast joins (one nested in another's build side): built by a thread pool, each
    # exactly once
    session.conf.set("spark.sql.autoBroadcastJoinThreshold", "-1")
    sql = ("SELECT /*+ BROADCAST(d1), BROADCAST(d2), BROADCAST(x) */ t.v, d1.name, x.name "
           "FROM t JOIN d d1 ON t.k = d1.k JOIN d d2 ON t.k = d2.k "
           "JOIN (SELECT /*+ BROADCAST(d3) */ d.k, d.name FROM d JOIN d d3 ON d.k = d3.k) x "
           "ON t.k = x.k")
    from ember.runtime.spark.runtime import SparkRuntime

    sc = session.spark_session.sparkContext
    built: list[int] = []
    real = sc.broadcast
    monkeypatch.setattr(sc, "broadcast", lambda value: built.append(1) or real(value))
    qe = session.sql(sql)._qe
    plan = qe.executed_plan
    n = len({id(b) for b in plan.collect(
        lambda b: b if type(b).__name__ == "BroadcastExchangeExec" else None)})
    assert n == 4, plan.tree_string()
    with SparkRuntime(session.spark_session, session.sql_conf, logical_links=qe._links) as rt:
        table = rt.collect(plan)
    assert len(built) == 4
    assert sorted(zip(*(c.to_pylist() for c in table.columns))) == sorted(
        zip(*(c.to_pylist() for c in _local(session, sql).columns)))


def test_decimals_cross_from_spark_as_unscaled_longs(session, tmp_path) -> None:
    """Decimals of precision <= 18 leave Spark's reader as their unscaled longs and are rebuilt
    exactly in the task (negative values, NULLs, the extremes of decimal(18, 2) and scale 0);
    a wider decimal crosses as a decimal."""
    import decimal

    from ember.runtime.spark import sources

    d = decimal.Decimal
    vals = [d("123.45"), d("-0.05"), None, d("0.00"), d("-9999999999999999.99"),
            d("9999999999999999.99")]
    small = [d("-99999.9999"), None, d("0.0001"), d("12.5"), d("-3.0000"), d("99999.9999")]
    table = pa.table({"a": pa.array(vals, pa.decimal128(18, 2)),
                      "b": pa.array([7, -7, 0, None, 10 ** 17, -(10 ** 17)], pa.decimal128(18, 0)),
                      "c": pa.array([d("1.5")] * 5 + [None], pa.decimal128(30, 10)),
                      "a2": pa.array(small, pa.decimal128(9, 4))})
    path = str(tmp_path / "dec.parquet")
    pq.write_table(table, path)
    df = session.spark_session.read.parquet(path).select("a", "b", "c", "a2", "a")
    _, unscaled = sources._unscaled_decimals(df)
    assert unscaled == ((0, 18, 2), (1, 18, 0), (3, 9, 4), (4, 18, 2))
    session.sql(f"CREATE TEMP VIEW dec USING parquet OPTIONS (path '{path}')")
    got = session.sql("SELECT a, b, c, a2, a + a2 AS s FROM dec").to_arrow()
    assert got.column("a").to_pylist() == vals
    assert got.column("b").to_pylist() == table.column("b").to_pylist()
    assert got.column("c").to_pylist() == table.column("c").to_pylist()
    assert got.column("a2").to_pylist() == small
    assert got.column("s").to_pylist() == [None if x is None or y is None else x + y
                                           for x, y in zip(vals, small)]


def test_a_small_range_partitioned_input_is_sorted_by_one_task(session) -> None:
    """The range exchange's sampling pass measures its input; under the advisory partition
    size one task reads the persisted input in place (no range shuffle), as Spark's adaptive
    execution coalesces a small shuffle; over it, the input is range-shuffled."""
    from ember.physical.nodes import ShuffleExchangeExec
    from ember.runtime.spark.runtime import SparkRuntime

    sql = "SELECT v, k FROM t ORDER BY k DESC, v"
    expected = sorted(((v, k) for k, v in zip([1, 2, 3, 4, 5] * 40, range(200))),
                      key=lambda r: (-r[1], r[0]))
    session.conf.set("ember.execution.coalescePartitions.minPartitionSize", "1b")
    for advisory, tasks in (("64MB", 1), ("100b", 4)):
        session.conf.set("ember.execution.advisoryPartitionSizeInBytes", advisory)
        plan = session.sql(sql)._qe.executed_plan
        with SparkRuntime(session.spark_session, session.sql_conf) as rt:
            got = rt.collect(plan)
            ranges = rt.final_plan.collect(lambda n: n if isinstance(n, ShuffleExchangeExec)
                                           and "rangepartitioning" in n.simple_string() else None)
            assert len(ranges) == 1 and rt.tasks_of(ranges[0]) == tasks
        assert list(zip(got.column("v").to_pylist(), got.column("k").to_pylist())) == expected
    session.conf.unset("ember.execution.advisoryPartitionSizeInBytes")
    session.conf.unset("ember.execution.coalescePartitions.minPartitionSize")


def test_a_file_relation_is_loaded_once_until_its_file_changes(session, tmp_path) -> None:
    import os

    from ember.runtime.spark import sources

    path = str(tmp_path / "once.parquet")
    pq.write_table(pa.table({"a": pa.array(range(10), pa.int64())}), path)
    session.sql(f"CREATE TEMP VIEW once USING parquet OPTIONS (path '{path}')")
    assert session.sql("SELECT count(*) AS n FROM once").collect()[0].n == 10
    keys = [k for k in sources._LOADED if path in k[5]]
    assert len(keys) == 1
    assert session.sql("SELECT sum(a) AS s FROM once").collect()[0].s == 45
    assert [k for k in sources._LOADED if path in k[5]] == keys  # the same load, reused
    pq.write_table(pa.table({"a": pa.array(range(1000), pa.int64())}), path)
    os.utime(path, ns=(1, 1))  # a different modification time, whatever the clock's grain
    assert session.sql("SELECT count(*) AS n FROM once").collect()[0].n == 1000
    assert len([k for k in sources._LOADED if path in k[5]]) == 2


def test_scans_hand_over_arrow_batches_of_the_configured_size(session, tmp_path) -> None:
    from ember.physical.nodes import FileSourceScanExec
    from ember.runtime.spark import sources
    from ember.runtime.spark.runtime import SparkRuntime

    path = str(tmp_path / "rows.parquet")
    pq.write_table(pa.table({"a": pa.array(range(100_000), pa.int64())}), path)
    session.sql(f"CREATE TEMP VIEW rows_ USING parquet OPTIONS (path '{path}')")
    spark = session.spark_session
    spark.conf.set("spark.sql.execution.arrow.maxRecordsPerBatch", "777")
    scan = session.sql("SELECT a FROM rows_")._qe.executed_plan.collect(
        lambda n: n if isinstance(n, FileSourceScanExec) else None)[0]
    for rows in (65536, 10000):
        session.conf.set("ember.spark.arrowBatchRows", str(rows))
        with SparkRuntime(spark, session.sql_conf) as rt:
            sizes = sources.file_scan(rt, scan).map(lambda b: b.num_rows).collect()
        assert sum(sizes) == 100_000
        assert (10_000 < max(sizes) <= 65536) if rows == 65536 else max(sizes) == 10_000
    # the user's setting is back, and Spark's own Arrow conversions use it
    assert spark.conf.get("spark.sql.execution.arrow.maxRecordsPerBatch") == "777"
    spark.conf.unset("spark.sql.execution.arrow.maxRecordsPerBatch")
    session.conf.unset("ember.spark.arrowBatchRows")


def test_scan_rdds_are_made_concurrently_once_each(session, tmp_path, monkeypatch) -> None:
    import threading

    from ember.runtime.spark import sources
    from ember.runtime.spark.runtime import SparkRuntime

    for name, n in (("sa", 300), ("sb", 200)):
        pq.write_table(pa.table({"k": pa.array([i % 7 for i in range(n)], pa.int64()),
                                 "v": pa.array(range(n), pa.int64())}), str(tmp_path / f"{name}.parquet"))
        session.sql(f"CREATE TEMP VIEW {name} USING parquet OPTIONS (path '{tmp_path}/{name}.parquet')")
    made: list[tuple[str, str]] = []
    original = sources.file_scan

    def file_scan(rt, node, batch_rows_set=False):
        made.append((node.relation.paths[0], threading.current_thread().name))
        return original(rt, node, batch_rows_set)

    monkeypatch.setattr(sources, "file_scan", file_scan)
    session.conf.set("spark.sql.autoBroadcastJoinThreshold", "-1")  # no scan under a broadcast
    sql = "SELECT a.k, count(*) AS c FROM sa a JOIN sb b ON a.k = b.k GROUP BY a.k"
    qe = session.sql(sql)._qe
    with SparkRuntime(session.spark_session, session.sql_conf, logical_links=qe._links) as rt:
        got = rt.collect(qe.executed_plan)
    assert sorted(p.rsplit("/", 1)[1] for p, _ in made) == ["sa.parquet", "sb.parquet"]
    assert all(t != threading.main_thread().name for _, t in made), made
    counts = {k: 0 for k in range(7)}
    for i in range(300):
        counts[i % 7] += sum(1 for j in range(200) if j % 7 == i % 7)
    assert sorted(zip(got.column("k").to_pylist(), got.column("c").to_pylist())) == sorted(
        counts.items())


def _fact_and_dim(session, tmp_path) -> ember.Session:
    """Views ``fact`` (5000 rows: ``k`` in 0..299, NULL every 97th row, ``v``, ``s``) and
    ``dim`` (300 rows ``dk``, every 20th ``color`` red) over Parquet files, on ``session`` and
    on the local runtime session returned; dynamic filters apply to scans of any size."""
    n = 5000
    keys = [None if i % 97 == 0 else i % 300 for i in range(n)]
    pq.write_table(pa.table({"k": pa.array(keys, pa.int64()), "v": pa.array(range(n), pa.int64()),
                             "s": [f"s{i % 11}" for i in range(n)]}), str(tmp_path / "fact.parquet"))
    pq.write_table(pa.table({"dk": pa.array(range(300), pa.int64()),
                             "color": [("red" if i % 20 == 0 else "blue") for i in range(300)]}),
                   str(tmp_path / "dim.parquet"))
    local = ember.Session(dict(session.sql_conf.items()))
    for s in (session, local):
        for t in ("fact", "dim"):
            s.sql(f"CREATE TEMP VIEW {t} USING parquet OPTIONS (path '{tmp_path}/{t}.parquet')")
    session.conf.set("ember.spark.dynamicFilters.minScanBytes", "0")
    return local


@pytest.mark.parametrize("inline_max", [4096, 0])
def test_a_selective_broadcast_filters_the_stream_sides_scan_inside_spark(
        session, tmp_path, monkeypatch, inline_max) -> None:
    """Dynamic filters (runtime/spark/dynamic_filters.py): the build keys of a selective
    broadcast join reach the Spark reader of the stream side's scan (inner and left semi
    joins, through filters and projects); a left outer join, which keeps every stream row, and
    a build side that filters on nothing but NOT NULL get none; rows equal the local
    runtime's, NULL keys included.  A small integer key set filters as an IN list, a larger
    one (here: any, ``inline_max`` 0) as a broadcast left semi join."""
    from ember.physical.nodes import FileSourceScanExec
    from ember.runtime.spark import dynamic_filters
    from ember.runtime.spark.runtime import SparkRuntime

    monkeypatch.setattr(dynamic_filters, "INLINE_MAX_VALUES", inline_max)
    plans: list[str] = []  # Spark's analyzed plan of each filtered scan
    real_apply = dynamic_filters.apply

    def apply(df, filters):
        out = real_apply(df, filters)
        plans.append(out._jdf.queryExecution().analyzed().toString())
        return out

    monkeypatch.setattr(dynamic_filters, "apply", apply)
    local = _fact_and_dim(session, tmp_path)
    cases = {
        "SELECT f.v, d.color FROM fact f JOIN dim d ON f.k = d.dk "
        "WHERE d.color = 'red' AND f.v > 10": 15,
        "SELECT f.k, f.s FROM fact f LEFT SEMI JOIN dim d ON f.k = d.dk AND d.color = 'red'": 15,
        "SELECT f.v, d.color FROM fact f LEFT JOIN dim d ON f.k = d.dk AND d.color = 'red'": None,
        "SELECT f.v, d.color FROM fact f JOIN dim d ON f.k = d.dk": None,
    }
    for sql, values in cases.items():
        qe = session.sql(sql)._qe
        plan = qe.executed_plan
        assert "BroadcastHashJoin" in plan.tree_string(), plan.tree_string()
        with SparkRuntime(session.spark_session, session.sql_conf,
                          logical_links=qe._links) as rt:
            got = rt.collect(plan)
            scans = {id(x) for x in plan.collect(lambda x: x if isinstance(
                x, FileSourceScanExec) and "fact" in x.relation.paths[0] else None)}
            applied = [f for x, fs in rt.scan_filters.items() if id(x) in scans for f in fs]
        if values is None:
            assert applied == [], sql
        else:
            assert [(name, len(v)) for name, v in applied] == [("k", values)], sql
        want = local.sql(sql).to_arrow()
        rows = sorted(zip(*(c.to_pylist() for c in got.columns)), key=repr)
        assert rows == sorted(zip(*(c.to_pylist() for c in want.columns)), key=repr), sql
        assert got.num_rows > 0
    session.conf.unset("ember.spark.dynamicFilters.minScanBytes")
    assert len(plans) == 2, plans
    for text in plans:
        assert ("LeftSemi" in text) == (inline_max == 0), text
        assert (" IN (" in text) == (inline_max > 0), text


def test_a_measured_selective_side_of_a_shuffled_join_filters_the_other_sides_scan(
        session, tmp_path) -> None:
    """Dynamic filters from shuffled joins (runtime/spark/dynamic_filters.py): once the adaptive
    conversion has run the map stage of a selective side, its distinct join keys filter the
    other side's file scan inside Spark -- whether the join becomes a broadcast join or stays
    shuffled (the filtered side then measures smaller) -- for the sides whose unmatched rows
    never reach the output only, and never a scan under an exchange another join reads again;
    rows equal the local runtime's, NULL keys included."""
    from ember.physical.nodes import FileSourceScanExec
    from ember.runtime.spark.runtime import SparkRuntime

    local = _fact_and_dim(session, tmp_path)
    inner = "SELECT f.v, d.color FROM fact f JOIN dim d ON f.k = d.dk WHERE d.color = 'red'"
    cases = [  # (threshold, query, conversion, filter values on fact.k)
        ("1000", inner, "BroadcastHashJoinExec", 15),  # the red side broadcast
        ("100", inner, "ShuffledHashJoinExec", 15),  # both sides measured, the join shuffled
        ("1000", "SELECT f.k, f.v FROM fact f LEFT SEMI JOIN dim d ON f.k = d.dk "
                 "AND d.color = 'red' AND f.v > 50", "BroadcastHashJoinExec", 15),
        # the left side of a left semi join cannot be broadcast, but it is the small side:
        # measured first for its keys, it shrinks the right side enough to broadcast it
        ("3000", "SELECT d.dk, d.color FROM dim d LEFT SEMI JOIN fact f ON d.dk = f.k "
                 "AND f.v > 50 WHERE d.color = 'red'", "BroadcastHashJoinExec", 15),
        ("1000", "SELECT f.v, d.color FROM fact f LEFT JOIN dim d ON f.k = d.dk "
                 "AND d.color = 'red'", "BroadcastHashJoinExec", None),  # keeps every fact row
        ("1000", "SELECT f.v, d.color FROM fact f JOIN dim d ON f.k = d.dk",
         "ShuffledHashJoinExec", None),  # the whole dim table: not selective
        # the fact exchange is read again by a second join, which its hint keeps a sort-merge
        # join: the first one's broadcast streams the fact scan, the second still reads all of it
        ("1000", inner + " UNION ALL SELECT /*+ MERGE(d) */ f.v, d.color FROM fact f "
                 "JOIN dim d ON f.k = d.dk", None, None),
    ]
    measured_fact: dict[str, int] = {}
    try:
        for threshold, sql, conversion, values in cases:
            session.conf.set("spark.sql.autoBroadcastJoinThreshold", threshold)
            local.conf.set("spark.sql.autoBroadcastJoinThreshold", threshold)
            qe = session.sql(sql)._qe
            plan = qe.executed_plan
            assert "SortMergeJoin" in plan.tree_string(), plan.tree_string()
            with SparkRuntime(session.spark_session, session.sql_conf,
                              logical_links=qe._links) as rt:
                got = rt.collect(plan)
            fact = [x for x in plan.collect(lambda x: x if isinstance(x, FileSourceScanExec)
                                            else None) if "fact" in x.relation.paths[0]]
            applied = [(name, len(v)) for x, fs in rt.scan_filters.items()
                       if id(x) in {id(f) for f in fact} for name, v in fs]
            if conversion is not None:
                assert [type(b).__name__ for _, b in rt.adaptive_log] == [conversion], sql
            else:
                assert "ReusedExchange" in plan.tree_string(), plan.tree_string()
                assert [type(b).__name__ for _, b in rt.adaptive_log] == [
                    "BroadcastHashJoinExec"], sql
            assert applied == ([] if values is None else [("k", values)]), sql
            if threshold == "100":
                measured_fact["filtered"] = max(rt._measured.values())
            want = local.sql(sql).to_arrow()
            rows = sorted(zip(*(c.to_pylist() for c in got.columns)), key=repr)
            assert rows == sorted(zip(*(c.to_pylist() for c in want.columns)), key=repr), sql
            assert got.num_rows > 0
        session.conf.set("ember.spark.dynamicFilters.maxValues", "0")  # off: fact unfiltered
        session.conf.set("spark.sql.autoBroadcastJoinThreshold", "100")
        qe = session.sql(inner)._qe
        plan = qe.executed_plan
        with SparkRuntime(session.spark_session, session.sql_conf,
                          logical_links=qe._links) as rt:
            rt.collect(plan)
        assert not rt.scan_filters.items()
        assert max(rt._measured.values()) > 4 * measured_fact["filtered"], rt._measured
    finally:
        for key in ("ember.spark.dynamicFilters.minScanBytes", "ember.spark.dynamicFilters.maxValues",
                    "spark.sql.autoBroadcastJoinThreshold"):
            session.conf.unset(key)


def test_map_tasks_collect_distinct_keys_up_to_a_limit() -> None:
    # the map side of a measured exchange (worker.KeyCollector): distinct non-null values of
    # each integer or string key; past the limit a key is given up (None), and the driver's
    # merge of task results (worker.KeySetParam, as Spark's accumulator applies it) keeps that
    from ember.runtime.spark.dynamic_filters import distinct_keys
    from ember.runtime.spark.worker import KeyCollector, KeySetParam
    from ember.types import DoubleType, LongType, StringType

    c = KeyCollector(4, [LongType(), StringType(), DoubleType()])
    c.add([pa.array([1, 2, None, 2]), pa.array(["a", "b", "a", None]), pa.array([1.0] * 4)])
    c.add([pa.array([3, 1, 1, 1]), pa.array(["c", "d", "e", "a"]), pa.array([2.0] * 4)])
    got = c.result()
    assert sorted(got) == [0, 1]  # no doubles: the filter takes integer and string keys
    assert sorted(got[0].to_pylist()) == [1, 2, 3] and got[1] is None
    assert KeyCollector(4, [LongType()]).result() == {}  # a task without rows says nothing
    param = KeySetParam()
    acc = param.zero(None)
    for task in ({0: pa.array([1, 2])}, {0: pa.array([2, 5]), 1: None}, {0: pa.array([1, 2])}):
        acc = param.addInPlace(acc, task)
    assert acc[1] is None
    assert sorted(distinct_keys(acc[0], 3).to_pylist()) == [1, 2, 5]
    assert distinct_keys(acc[0], 2) is None and distinct_keys(acc[1], 3) is None
    assert distinct_keys(acc.get(7), 3) is None


def test_a_measured_shuffle_runs_its_map_stage_alone_and_is_read_once(wide) -> None:
    # the adaptive conversion's measurement runs a one-stage job (SparkContext.submitMapStage,
    # as Spark materializes a query stage), no reduce task; the query then reads those map
    # outputs (the stage is skipped, not run again); a task failing in the measured map stage
    # is the Ember error naming its operator
    from ember.runtime.spark.runtime import run_map_stage

    sc = wide.spark_session.sparkContext
    pairs = sc.parallelize(range(100), 3).map(lambda x: (x % 4, x))
    shuffled = pairs.partitionBy(4, lambda k: k)
    tracker = sc.statusTracker()
    sc.setJobGroup("ember-map-stage", "measured map stage")
    try:
        run_map_stage(sc, shuffled)
        (job,) = tracker.getJobIdsForGroup("ember-map-stage")
        (stage,) = tracker.getJobInfo(job).stageIds
        assert tracker.getStageInfo(stage).numTasks == 3  # the map tasks only
        assert sorted(shuffled.values().collect()) == list(range(100))
        jobs = sorted(tracker.getJobIdsForGroup("ember-map-stage"))
        assert len(jobs) == 2
        ran = [tracker.getStageInfo(s) for s in tracker.getJobInfo(jobs[1]).stageIds]
        assert [st.numTasks for st in ran if st is not None and st.numCompletedTasks] == [4]
    finally:
        sc.setLocalProperty("spark.jobGroup.id", None)
        sc.setLocalProperty("spark.job.description", None)
    sql = ("SELECT a.v, b.v FROM w a JOIN (SELECT k, v / (k - k) AS v FROM w WHERE v < 3) b "
           "ON a.k = b.k")
    with pytest.raises(EmberError) as info:
        _adaptive_run(wide, sql)
    assert info.value.error_class == "DIVIDE_BY_ZERO"
    assert "org.apache" not in str(info.value)


def test_independent_map_stages_are_measured_together(wide, monkeypatch) -> None:
    # two shuffled joins with no shuffled join below them: the map stages the adaptive
    # conversion measures (each join's side estimated smaller, and the second join's other
    # side too: aggregated, its exchange runs whatever the join becomes) run as one batch of
    # concurrent jobs; the conversions are the ones measuring them one by one gives
    from ember.runtime.spark import adaptive
    from ember.runtime.spark.runtime import SparkRuntime

    sql = ("SELECT a.v, b.v AS w FROM w a JOIN w b ON a.k = b.k WHERE b.v < 3 "
           "UNION ALL SELECT g.k, g.m + h.n FROM "
           "(SELECT k, max(v) AS m FROM w WHERE v > 20 GROUP BY k) g JOIN "
           "(SELECT k, min(v) AS n FROM w GROUP BY k) h ON g.k = h.k")
    batches: list[int] = []
    real = SparkRuntime.measure_all
    monkeypatch.setattr(SparkRuntime, "measure_all",
                        lambda self, exs: batches.append(len(exs)) or real(self, exs))
    plan, log, table, final = _adaptive_run(wide, sql)
    assert plan.tree_string().count("SortMergeJoin") == 2, plan.tree_string()
    assert batches[0] == 3, batches  # one batch: 1 + 2 exchanges, before the conversion
    assert all(n == 1 for n in batches[1:]), batches
    monkeypatch.setattr(adaptive, "premeasure", lambda plan, rt: None)
    monkeypatch.setattr(SparkRuntime, "measure_all", real)
    _, log_one_by_one, table_one_by_one, final_one_by_one = _adaptive_run(wide, sql)
    assert [(type(a).__name__, type(b).__name__) for a, b in log] == [
        (type(a).__name__, type(b).__name__) for a, b in log_one_by_one]
    def shape(p):  # without expression and exchange ids (each run plans the query anew)
        return re.sub(r"#\d+|plan_id=\d+", "", p.tree_string())

    assert shape(final) == shape(final_one_by_one)
    rows = sorted(zip(*(c.to_pylist() for c in table.columns)))
    assert rows == sorted(zip(*(c.to_pylist() for c in table_one_by_one.columns)))
    assert rows == _local_rows(wide, sql)


def test_scans_no_dynamic_filter_can_change_are_made_while_broadcasts_build(
        session, tmp_path, monkeypatch) -> None:
    # a non-selective broadcast (the whole of sd) and a stream-side scan it cannot filter: the
    # scan's RDD is made while the broadcast's job runs, not after it
    import time

    from ember.runtime.spark import sources
    from ember.runtime.spark.runtime import SparkRuntime

    pq.write_table(pa.table({"k": pa.array(range(300), pa.int64()),
                             "v": pa.array(range(300), pa.int64())}), str(tmp_path / "sf.parquet"))
    pq.write_table(pa.table({"k": pa.array(range(7), pa.int64()),
                             "name": [f"n{i}" for i in range(7)]}), str(tmp_path / "sd.parquet"))
    for name in ("sf", "sd"):
        session.sql(f"CREATE TEMP VIEW {name} USING parquet OPTIONS "
                    f"(path '{tmp_path}/{name}.parquet')")
    events: list[tuple[str, float]] = []
    original_scan, original_build = sources.file_scan, SparkRuntime._build_broadcast

    def file_scan(rt, node, batch_rows_set=False):
        out = original_scan(rt, node, batch_rows_set)
        events.append((f"scan {node.relation.paths[0].rsplit('/', 1)[1]}", time.monotonic()))
        return out

    def build(self, node):
        events.append(("build start", time.monotonic()))
        time.sleep(0.5)  # a slow broadcast job
        out = original_build(self, node)
        events.append(("build end", time.monotonic()))
        return out

    monkeypatch.setattr(sources, "file_scan", file_scan)
    monkeypatch.setattr(SparkRuntime, "_build_broadcast", build)
    sql = "SELECT /*+ BROADCAST(d) */ f.v, d.name FROM sf f JOIN sd d ON f.k = d.k"
    qe = session.sql(sql)._qe
    with SparkRuntime(session.spark_session, session.sql_conf, logical_links=qe._links) as rt:
        got = rt.collect(qe.executed_plan)
    at = dict(events)
    assert at["build start"] < at["scan sf.parquet"] < at["build end"], events
    assert sorted(zip(got.column("v").to_pylist(), got.column("name").to_pylist())) == [
        (i, f"n{i}") for i in range(7)]


def test_threads_asking_for_one_arrow_batch_size_share_it() -> None:
    import threading

    from ember.runtime.spark.sources import batch_rows

    class Conf:
        def __init__(self):
            self.values = {"spark.sql.execution.arrow.maxRecordsPerBatch": "777"}
            self.sets = 0

        def get(self, k, default=None):
            return self.values.get(k, default)

        def set(self, k, v):
            self.sets += 1
            self.values[k] = v

        def unset(self, k):
            self.values.pop(k, None)

    class Spark:
        conf = Conf()

    spark, key = Spark(), "spark.sql.execution.arrow.maxRecordsPerBatch"
    seen: list[str] = []

    def other_size():
        with batch_rows(spark, 10):
            seen.append(spark.conf.get(key))

    with batch_rows(spark, 65536):
        with batch_rows(spark, 65536):  # shared: set once
            assert spark.conf.get(key) == "65536" and spark.conf.sets == 1
        waiter = threading.Thread(target=other_size)
        waiter.start()
        waiter.join(0.3)
        assert waiter.is_alive() and seen == []  # waits for the first size to be released
        assert spark.conf.get(key) == "65536"
    waiter.join(5)
    assert seen == ["10"]
    assert spark.conf.get(key) == "777"  # the user's value is back


def test_a_python_worker_freezes_its_loaded_heap_once() -> None:
    # PySpark's daemon runs a full gc.collect() after every task of a reused worker; the first
    # Ember task moves what is loaded (modules, classes) to the permanent generation, so those
    # collections skip it, while what later tasks leave in reference cycles is still collected
    import subprocess
    import sys

    script = (
        "import gc, weakref\n"
        "from ember.runtime.spark import worker\n"
        "assert gc.get_freeze_count() == 0\n"
        "worker.freeze_loaded_heap()\n"
        "frozen = gc.get_freeze_count()\n"
        "assert frozen > 20000, frozen\n"
        "worker.freeze_loaded_heap()\n"
        "assert gc.get_freeze_count() == frozen\n"
        "class Node: pass\n"
        "a, b = Node(), Node(); a.other, b.other = b, a\n"
        "alive = weakref.ref(a); del a, b\n"
        "gc.collect()\n"
        "assert alive() is None\n"
        "print('ok')\n")
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                         timeout=120)
    assert out.returncode == 0 and out.stdout.strip() == "ok", out.stderr
