"""The local runtime runs a reused exchange once (planning/reuse_exchange.py, ReusedExchangeExec
in runtime/local/exchange.py): same rows as with ``spark.sql.exchange.reuse=false``, at batch
size 2 and the default, under a tiny memory budget (spills), with and without the runtime's
adaptive join conversions; the exchange's subtree runs once (metrics)."""

from __future__ import annotations

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import ember
from ember.physical.nodes import (
    BroadcastExchangeExec,
    HashAggregateExec,
    ReusedExchangeExec,
    ShuffleExchangeExec,
)
from ember.planning import plan_query_with_links
from ember.runtime.local import LocalRuntime, explain_analyzed

N = 3000


@pytest.fixture(scope="module")
def paths(tmp_path_factory):
    d = tmp_path_factory.mktemp("reuse")
    k = [None if i % 97 == 0 else i % 211 for i in range(N)]
    fact = pa.table({"k": pa.array(k, pa.int64()),
                     "v": pa.array([(i * 7) % 13 for i in range(N)], pa.int64()),
                     "d": pa.array([i % 5 for i in range(N)], pa.int32())})
    dim = pa.table({"d": pa.array([0, 1, 2, 3, 4, None], pa.int32()),
                    "name": pa.array(["a", "b", "c", "d", "e", "z"])})
    out = {"fact": str(d / "fact.parquet"), "dim": str(d / "dim.parquet")}
    pq.write_table(fact, out["fact"], row_group_size=500)
    pq.write_table(dim, out["dim"])
    return out


def _session(paths, **conf) -> ember.Session:
    s = ember.Session()
    for name, p in paths.items():
        s.sql(f"CREATE TEMP VIEW {name} USING parquet OPTIONS (path '{p}')")
    s.sql_conf.set("ember.execution.progress.enabled", "false")
    for key, value in conf.items():
        s.sql_conf.set(key.replace("__", "."), str(value))
    return s


AGG_SELF_JOIN = """
with a as (select k, sum(v) s, count(*) c from fact group by k)
select x.k, x.s, x.c, y.s, y.c from a x join a y on x.k = y.k where x.s > 10"""

BROADCAST_TWICE = """
select f1.k, f1.v, d1.name, d2.name
from fact f1 join dim d1 on f1.d = d1.d
join fact f2 on f1.k = f2.k and f1.v = f2.v
join dim d2 on f2.d = d2.d"""

HAVING_TWICE = """
select f.k, f.v from fact f
where f.k in (select k from fact group by k having sum(v) > 90)
and f.v in (select v from fact where k in (select k from fact group by k having sum(v) > 90))"""


# the aggregate is read by two joins in different coalesce groups (exchanges by d between them)
TWO_GROUPS = """
with a as (select k, sum(v) s from fact group by k),
j1 as (select f.d, count(*) c, sum(a.s) t from fact f join a on f.k = a.k group by f.d),
j2 as (select f.d, count(*) c, sum(a.s) t from fact f join a on f.v + 200 = a.k group by f.d)
select j1.d, j1.c, j1.t, j2.c, j2.t from j1 full join j2 on j1.d = j2.d"""


def _rows(table: pa.Table) -> list:
    return sorted(map(repr, table.to_pylist()))


def _both(paths, sql, **conf):
    """(rows with reuse, rows without, the reused plan's text)."""
    on = _session(paths, **conf)
    off = _session(paths, spark__sql__exchange__reuse="false", **conf)
    text = on.sql(sql)._qe.explain_string("simple")
    assert "ReusedExchange" not in off.sql(sql)._qe.explain_string("simple")
    return _rows(on.sql(sql).to_arrow()), _rows(off.sql(sql).to_arrow()), text


CONFS = {
    "default": {},
    "bs2": {"ember__execution__batchSize": 2},
    "tiny_budget": {"ember__execution__memoryBudget": 2000},
    "no_broadcast": {"spark__sql__autoBroadcastJoinThreshold": -1},
    "no_broadcast_bs2": {"spark__sql__autoBroadcastJoinThreshold": -1,
                         "ember__execution__batchSize": 2},
    "no_adaptive": {"spark__sql__autoBroadcastJoinThreshold": -1,
                    "spark__sql__adaptive__enabled": "false"},
    # coalesced groups of a few targets: both readers of the exchange must see their own group's
    "small_partitions": {"spark__sql__autoBroadcastJoinThreshold": -1,
                         "spark__sql__shuffle__partitions": 50,
                         "ember__execution__advisoryPartitionSizeInBytes": 1500,
                         "ember__execution__coalescePartitions__minPartitionSize": 1},
    "small_partitions_adaptive": {"spark__sql__shuffle__partitions": 50,
                                  "ember__execution__advisoryPartitionSizeInBytes": 1500,
                                  "ember__execution__coalescePartitions__minPartitionSize": 1},
    "no_coalesce": {"spark__sql__autoBroadcastJoinThreshold": -1,
                    "ember__execution__coalescePartitions__enabled": "false",
                    "spark__sql__shuffle__partitions": 7},
}


@pytest.mark.parametrize("conf", list(CONFS), ids=list(CONFS))
@pytest.mark.parametrize("sql", [AGG_SELF_JOIN, BROADCAST_TWICE, HAVING_TWICE, TWO_GROUPS],
                         ids=["agg_self_join", "broadcast_twice", "having_twice", "two_groups"])
def test_results_equal_reuse_off(paths, sql, conf):
    on, off, text = _both(paths, sql, **CONFS[conf])
    assert "ReusedExchange" in text
    assert on == off
    assert on


def _run(s, sql, adaptive_threshold: int | None = None):
    qe = s.sql(sql)._qe
    plan, links = plan_query_with_links(qe.optimized, s.sql_conf)
    if adaptive_threshold is not None:  # plan shuffled joins, let the runtime broadcast
        s.sql_conf.set("spark.sql.autoBroadcastJoinThreshold", str(adaptive_threshold))
    with LocalRuntime(s.sql_conf, logical_links=links) as rt:
        table = rt.collect(plan)
        text = explain_analyzed(plan, rt.metrics, logical=links, conf=s.sql_conf)
    return plan, table, rt.metrics, text


def _partial_aggregates_run(metrics) -> list:
    return [n for n, m in metrics.items()
            if isinstance(n, HashAggregateExec) and n.mode.value == "Partial" and m.output_rows]


@pytest.mark.parametrize("bs", [2, 65536])
def test_shuffle_exchange_runs_once(paths, bs):
    on = _session(paths, spark__sql__autoBroadcastJoinThreshold=-1,
                  ember__execution__batchSize=bs)
    off = _session(paths, spark__sql__autoBroadcastJoinThreshold=-1,
                   ember__execution__batchSize=bs, spark__sql__exchange__reuse="false")
    plan, table, metrics, text = _run(on, AGG_SELF_JOIN)
    _, table_off, metrics_off, _ = _run(off, AGG_SELF_JOIN)
    assert _rows(table) == _rows(table_off)
    reused = plan.collect(lambda n: n if isinstance(n, ReusedExchangeExec) else None)
    assert len(reused) == 1
    ex = reused[0].child
    assert isinstance(ex, ShuffleExchangeExec)
    # the partial aggregate below the exchange ran once (twice without reuse)
    assert len(_partial_aggregates_run(metrics)) == 1
    assert len(_partial_aggregates_run(metrics_off)) == 2
    # both readers read every row of the exchange
    assert metrics.get(reused[0]).output_rows == metrics.get(ex).output_rows > 0
    assert metrics.get(reused[0]).build_size == 0 < metrics.get(ex).build_size
    line = next(ln for ln in text.splitlines() if "ReusedExchange" in ln)
    assert f"[plan_id={ex.plan_id}]" in line and "rows=" in line and "not executed" not in line


def test_broadcast_materialized_once(paths):
    s = _session(paths)
    plan, table, metrics, _ = _run(s, BROADCAST_TWICE)
    reused = plan.collect(lambda n: n if isinstance(n, ReusedExchangeExec) else None)
    assert reused and all(isinstance(r.child, BroadcastExchangeExec) for r in reused)
    # the dim scan under the broadcast ran once: one FileScan of dim.parquet in the metrics
    dim_scans = [n for n, m in metrics.items()
                 if type(n).__name__ == "FileSourceScanExec" and "dim" in n.relation.paths[0]]
    assert len(dim_scans) == 1
    off = _session(paths, spark__sql__exchange__reuse="false")
    assert _rows(table) == _rows(off.sql(BROADCAST_TWICE).to_arrow())


def test_tiny_budget_spills_and_matches(paths):
    conf = {"spark__sql__autoBroadcastJoinThreshold": -1,
            "ember__execution__memoryBudget": 1000, "ember__execution__batchSize": 64}
    on = _session(paths, **conf)
    plan, table, metrics, _ = _run(on, HAVING_TWICE)
    assert plan.find(lambda n: isinstance(n, ReusedExchangeExec)) is not None
    assert metrics.spill_size > 0
    off = _session(paths, spark__sql__exchange__reuse="false", **conf)
    assert _rows(table) == _rows(off.sql(HAVING_TWICE).to_arrow())


@pytest.mark.parametrize("small", [False, True], ids=["coalesced", "small_partitions"])
@pytest.mark.parametrize("sql", [AGG_SELF_JOIN, HAVING_TWICE, TWO_GROUPS],
                         ids=["agg_self_join", "having", "two_groups"])
def test_runtime_broadcast_conversion_with_reuse(paths, sql, small):
    """Shuffled joins planned (threshold 1), the runtime may broadcast (10 MB): conversions
    that take an exchange out of its coalesce group must not break the reused reader's."""
    conf = CONFS["small_partitions_adaptive"] if small else {}
    on = _session(paths, spark__sql__autoBroadcastJoinThreshold=1, **conf)
    plan, table, metrics, text = _run(on, sql, adaptive_threshold=10 << 20)
    assert plan.find(lambda n: isinstance(n, ReusedExchangeExec)) is not None
    off = _session(paths, spark__sql__autoBroadcastJoinThreshold=-1,
                   spark__sql__exchange__reuse="false")
    assert _rows(table) == _rows(off.sql(sql).to_arrow())


def test_empty_exchange_reused(paths):
    sql = """with a as (select k, sum(v) s from fact where v > 1000 group by k)
             select * from a x join a y on x.k = y.k"""
    on, off, text = _both(paths, sql, spark__sql__autoBroadcastJoinThreshold=-1)
    assert "ReusedExchange" in text
    assert on == off == []


@pytest.fixture(scope="module")
def tpch_paths(tmp_path_factory):
    pytest.importorskip("duckdb")
    pytest.importorskip("duckdb_extension_tpch")
    from bench.tpch import datagen

    return datagen.generate(tmp_path_factory.mktemp("tpch_reuse"), 0.01)


@pytest.mark.parametrize("conf", ["default", "bs2", "tiny_budget", "no_broadcast",
                                  "small_partitions"])
@pytest.mark.parametrize("q", [2, 7, 11, 18])
def test_tpch_reused_queries_equal_reuse_off(tpch_paths, q, conf):
    from bench.tpch import datagen

    sql = datagen.spark_queries()[q]
    tables = {}
    texts = {}
    for reuse in ("true", "false"):
        s = ember.Session()
        datagen.register_ember(s, tpch_paths)
        s.sql_conf.set("ember.execution.progress.enabled", "false")
        for key, value in CONFS[conf].items():
            s.sql_conf.set(key.replace("__", "."), str(value))
        s.sql_conf.set("spark.sql.exchange.reuse", reuse)
        texts[reuse] = s.sql(sql)._qe.explain_string("simple")
        tables[reuse] = _rows(s.sql(sql).to_arrow())
    assert "ReusedExchange" in texts["true"] and "ReusedExchange" not in texts["false"]
    assert tables["true"] == tables["false"]
    assert tables["true"]


def test_reused_broadcast_shares_the_hashed_relation(paths, monkeypatch):
    from ember.runtime.local.joins import hashed_relation as H

    built = []
    orig = H.HashedRelation.build.__func__

    def build(cls, *a, **k):
        rel = orig(cls, *a, **k)
        built.append(rel)
        return rel

    monkeypatch.setattr(H.HashedRelation, "build", classmethod(build))
    s = _session(paths)
    plan, table, _, _ = _run(s, BROADCAST_TWICE)
    assert plan.collect(lambda n: n if isinstance(n, ReusedExchangeExec) else None)
    # one relation over dim's rows for the broadcast and its reuse (no second build from the
    # shared rows; the fact-to-fact join builds relations of its own)
    dims = [r for r in built if "name" in r.batch.schema.names]
    assert len(dims) == 1
    off = _session(paths, spark__sql__exchange__reuse="false")
    assert _rows(table) == _rows(off.sql(BROADCAST_TWICE).to_arrow())
