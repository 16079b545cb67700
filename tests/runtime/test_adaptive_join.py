"""Adaptive join conversion (runtime/local/adaptive.py) and the planner's logical links."""

from __future__ import annotations

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import ember
from ember.physical.nodes import BroadcastHashJoinExec, SortMergeJoinExec
from ember.planning import plan_query, plan_query_with_links
from ember.runtime.local import LocalRuntime, explain_analyzed


@pytest.fixture(scope="module")
def session(tmp_path_factory):
    d = tmp_path_factory.mktemp("aqe")
    big = pa.table({"k": pa.array([i % 1000 for i in range(20000)], pa.int64()),
                    "v": pa.array(range(20000), pa.int64())})
    small = pa.table({"k": pa.array(range(0, 1000, 3), pa.int64()),
                      "w": pa.array(range(334), pa.int64())})
    pq.write_table(big, d / "big.parquet")
    pq.write_table(small, d / "small.parquet")
    s = ember.Session()
    s.sql(f"CREATE TEMP VIEW big USING parquet OPTIONS (path '{d / 'big.parquet'}')")
    s.sql(f"CREATE TEMP VIEW small USING parquet OPTIONS (path '{d / 'small.parquet'}')")
    s.sql("SET spark.sql.autoBroadcastJoinThreshold=1")  # planner: SMJ (sizes unknown to it)
    return s


def _run(s, sql, links=True):
    qe = s.sql(sql)._qe
    plan, lk = plan_query_with_links(qe.optimized, s.sql_conf)
    s.sql("SET spark.sql.autoBroadcastJoinThreshold=10485760")  # runtime threshold
    try:
        with LocalRuntime(s.sql_conf, logical_links=lk if links else None) as rt:
            table = rt.collect(plan)
            text = explain_analyzed(plan, rt.metrics, logical=lk, conf=s.sql_conf)
            return plan, table, rt.metrics, text, lk
    finally:
        s.sql("SET spark.sql.autoBroadcastJoinThreshold=1")


SQL = "SELECT big.v, small.w FROM big JOIN small ON big.k = small.k"


def _want():
    return sorted((v, (v % 1000) // 3) for v in range(20000) if (v % 1000) % 3 == 0)


def test_links_cover_every_node(session):
    qe = session.sql(SQL)._qe
    plan, links = plan_query_with_links(qe.optimized, session.sql_conf)
    assert plan.tree_string().count("\n") == plan_query(qe.optimized,
                                                        session.sql_conf).tree_string().count("\n")
    stack = [plan]
    while stack:
        n = stack.pop()
        assert id(n) in links, n.simple_string()
        stack.extend(n.children)


def test_small_side_becomes_broadcast(session):
    plan, table, metrics, text, _ = _run(session, SQL)
    assert any(isinstance(n, SortMergeJoinExec) for n in plan.collect(lambda x: x))
    assert any(isinstance(v, BroadcastHashJoinExec) for v in metrics.replaced.values())
    assert "[adaptive: was SortMergeJoin] BroadcastHashJoin" in text
    assert "est_size=" in text
    assert sorted(zip(*[c.to_pylist() for c in table.columns])) == _want()


def test_without_links_or_with_hint_plan_is_kept(session):
    _, table, metrics, _, _ = _run(session, SQL, links=False)
    assert not metrics.replaced
    assert sorted(zip(*[c.to_pylist() for c in table.columns])) == _want()
    hinted = SQL.replace("SELECT", "SELECT /*+ MERGE(small) */")
    _, table, metrics, _, _ = _run(session, hinted)
    assert not metrics.replaced
    assert sorted(zip(*[c.to_pylist() for c in table.columns])) == _want()


def test_partitioning_relied_upon_keeps_stream_exchange(session):
    sql = ("SELECT big.k, count(*) AS c, sum(small.w) AS w FROM big JOIN small ON big.k = small.k "
           "GROUP BY big.k")
    _, table, metrics, _, _ = _run(session, sql)
    assert metrics.replaced
    got = sorted(zip(*[c.to_pylist() for c in table.columns]))
    assert got == [(k, 20, 20 * (k // 3)) for k in range(0, 1000, 3)]
