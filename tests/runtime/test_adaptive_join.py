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
    # small with a NULL key in every ninth row
    nsmall = small.set_column(0, "k", pa.array(
        [None if w % 9 == 0 else k for k, w in zip(small["k"].to_pylist(), range(334))],
        pa.int64()))
    pq.write_table(nsmall, d / "nsmall.parquet")
    s = ember.Session()
    s.sql(f"CREATE TEMP VIEW big USING parquet OPTIONS (path '{d / 'big.parquet'}')")
    s.sql(f"CREATE TEMP VIEW small USING parquet OPTIONS (path '{d / 'small.parquet'}')")
    s.sql(f"CREATE TEMP VIEW nsmall USING parquet OPTIONS (path '{d / 'nsmall.parquet'}')")
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
    _, table, metrics, text, _ = _run(session, sql)
    # the aggregate above needs the join partitioned on big.k: the join's output is shuffled
    # (in the big side's place) instead of big itself
    [new] = metrics.replaced.values()
    assert type(new).__name__ == "ShuffleExchangeExec"
    assert isinstance(new.child, BroadcastHashJoinExec)
    assert "[adaptive: was SortMergeJoin] Exchange hashpartitioning(k#" in text
    assert not any(isinstance(n, type(new)) for n in new.child.streamed_plan.collect(lambda x: x))
    got = sorted(zip(*[c.to_pylist() for c in table.columns]))
    assert got == [(k, 20, 20 * (k // 3)) for k in range(0, 1000, 3)]


SHJ_KEY = "ember.execution.adaptive.shuffledHashJoin.enabled"


def _run_with(s, sql, runtime_threshold: int, shj: bool):
    qe = s.sql(sql)._qe
    plan, lk = plan_query_with_links(qe.optimized, s.sql_conf)
    s.sql(f"SET spark.sql.autoBroadcastJoinThreshold={runtime_threshold}")
    s.sql(f"SET {SHJ_KEY}={str(shj).lower()}")
    try:
        with LocalRuntime(s.sql_conf, logical_links=lk) as rt:
            table = rt.collect(plan)
            text = explain_analyzed(plan, rt.metrics, logical=lk, conf=s.sql_conf)
            return plan, table, rt.metrics, text
    finally:
        s.sql("SET spark.sql.autoBroadcastJoinThreshold=1")
        s.sql(f"SET {SHJ_KEY}=true")


def _rows(table):
    return sorted(zip(*[c.to_pylist() for c in table.columns]),
                  key=lambda r: tuple((x is None, x) for x in r))


def test_sort_merge_join_runs_as_shuffled_hash_join(session):
    _, table, metrics, text = _run_with(session, SQL, -1, shj=True)
    assert [type(v).__name__ for v in metrics.replaced.values()] == ["ShuffledHashJoinExec"]
    assert "[adaptive: was SortMergeJoin] ShuffledHashJoin" in text
    assert "Sort [" not in text  # neither side is sorted
    assert _rows(table) == _want()
    _, table, metrics, text = _run_with(session, SQL, -1, shj=False)
    assert not metrics.replaced
    assert _rows(table) == _want()


@pytest.mark.parametrize("jt, build", [("LEFT OUTER", "LEFT"), ("RIGHT OUTER", "LEFT"),
                                       ("FULL OUTER", "LEFT"), ("LEFT SEMI", "LEFT"),
                                       ("LEFT ANTI", "LEFT")])
@pytest.mark.parametrize("cond", [" AND big.v % 7 <> small.w % 5", ""])
def test_shuffled_hash_conversion_every_join_type(session, jt, build, cond):
    # small (left) is the smaller side: it is built wherever the local hash join can build it
    # (Spark's shuffled hash join cannot build the left side of semi / anti joins; Ember's can)
    sql = f"SELECT * FROM small {jt} JOIN big ON big.k = small.k{cond}"
    _, want, off, _ = _run_with(session, sql, -1, shj=False)
    assert not off.replaced
    _, got, on, _ = _run_with(session, sql, -1, shj=True)
    [new] = on.replaced.values()
    assert type(new).__name__ == "ShuffledHashJoinExec"
    assert new.build_side.name == build
    assert _rows(got) == _rows(want)


@pytest.mark.parametrize("where", [
    "EXISTS (SELECT 1 FROM big WHERE big.k = small.k AND big.v > 15000) OR small.w < 10",
    "NOT EXISTS (SELECT 1 FROM big WHERE big.k = small.k AND big.v > small.w * 60 + 1000)",
    "small.k IN (SELECT k FROM big WHERE v % 3 = 0)"])
def test_shuffled_hash_conversion_builds_left_of_existence_joins(session, where):
    sql = f"SELECT * FROM small WHERE {where}"
    _, want, off, _ = _run_with(session, sql, -1, shj=False)
    _, got, on, text = _run_with(session, sql, -1, shj=True)
    assert any(type(v).__name__ == "ShuffledHashJoinExec" and v.build_side.name == "LEFT"
               for v in on.replaced.values()), text
    assert _rows(got) == _rows(want)
    assert len(_rows(want)) > 0


CHAIN = ("SELECT b1.v, b2.v AS v2, small.w FROM big b1 JOIN small ON b1.k = small.k "
         "JOIN big b2 ON b1.k = b2.k AND b2.v < 3000")


def _chain_want():
    return sorted((v1, v2, (v1 % 1000) // 3) for v1 in range(20000) if (v1 % 1000) % 3 == 0
                  for v2 in range(v1 % 1000, 3000, 1000))


def test_chained_sort_merge_joins_all_become_hash_joins(session):
    # the upper join reuses the lower one's ordering; once it is a hash join, the lower one is
    # free to become one too
    plan, table, metrics, text = _run_with(session, CHAIN, -1, shj=True)
    smj = [n for n in plan.collect(lambda x: x) if isinstance(n, SortMergeJoinExec)]
    assert len(smj) == 2
    assert sorted(type(v).__name__ for v in metrics.replaced.values()) == [
        "ShuffledHashJoinExec", "ShuffledHashJoinExec"]
    assert _rows(table) == _chain_want()


def test_broadcast_conversion_resorts_when_ordering_is_relied_upon(session):
    # runtime threshold between small's and big's sizes: the lower join broadcasts small, the
    # upper (sort-merge) join still needs the lower one's output sorted on the key
    plan, table, metrics, text = _run_with(session, CHAIN, 50_000, shj=False)
    kinds = sorted(type(v).__name__ for v in metrics.replaced.values())
    assert kinds == ["SortExec"], text
    assert "[adaptive: was SortMergeJoin] Sort [" in text
    assert _rows(table) == _chain_want()


# --- reduced-side broadcast: a join input filtering an aggregate runs ahead of the join ----------

HAVING = "SELECT k FROM big GROUP BY k HAVING sum(v) > {}"
#: sum(v) per k is 20k + 190000: above 209800 only k = 991..999 (9 groups)
FEW, ALL = 209800, 0


def _semis(metrics):
    """The broadcast semi joins the runtime put in (directly, or under the exchange that
    reshuffles their output, or the sort that re-sorts it)."""
    found = {id(n): n for v in metrics.replaced.values() for n in v.collect(lambda x: x)
             if isinstance(n, BroadcastHashJoinExec) and n.join_type.name == "LEFT_SEMI"}
    return list(found.values())


def _both_ways(s, sql, threshold):
    from ember.runtime.local import adaptive

    _, want, off, _ = _run_with(s, sql, threshold, shj=True)
    adaptive.REDUCED_BROADCAST = False
    try:
        _, plain, plain_metrics, _ = _run_with(s, sql, threshold, shj=True)
    finally:
        adaptive.REDUCED_BROADCAST = True
    assert _rows(plain) == _rows(want)
    return want, off, plain_metrics


def test_filtered_aggregate_side_is_broadcast_after_its_reduce_side_ran(session):
    sql = f"SELECT small.k, small.w FROM small WHERE small.k IN ({HAVING.format(FEW)})"
    got, metrics, plain = _both_ways(session, sql, 1000)
    assert _rows(got) == [(993, 331), (996, 332), (999, 333)]
    [semi] = _semis(metrics)
    assert semi.build_side.name == "RIGHT"
    assert not _semis(plain)  # the aggregate's shuffle alone is over the threshold


def test_filtered_aggregate_side_too_big_is_reshuffled_not_recomputed(session):
    sql = f"SELECT small.k, small.w FROM small WHERE small.k IN ({HAVING.format(ALL)})"
    got, metrics, _ = _both_ways(session, sql, 1000)
    assert _rows(got) == [(k, k // 3) for k in range(0, 1000, 3)]
    assert not _semis(metrics)
    # the join reads the computed rows through a new shuffle: no second aggregation
    # (the replacement then runs as a shuffled hash join: a second replacement over the same
    # nodes)
    scans = {id(n): n for v in metrics.replaced.values() for n in v.collect(lambda x: x)
             if type(n).__name__ == "LocalTableScanExec"}
    [scan] = scans.values()
    assert scan.data.num_rows == 1000


def test_joins_of_filtered_aggregates_convert_before_their_group_is_shuffled(session):
    # like TPC-H Q18: the upper join needs both semi joins hash-partitioned, so the first
    # exchange of the group to run would shuffle big for the second semi join; that one gets
    # its chance to become a broadcast join first
    sql = (f"SELECT small.k, small.w, b.v FROM small JOIN big b ON small.k = b.k "
           f"WHERE small.k IN ({HAVING.format(FEW)}) AND b.k IN ({HAVING.format(FEW)})")
    got, metrics, _ = _both_ways(session, sql, 1000)
    assert _rows(got) == sorted((k, k // 3, v) for k in (993, 996, 999)
                                for v in range(k, 20000, 1000))
    assert len(_semis(metrics)) == 2


# --- broadcast of the left side of semi / anti / existence joins (Ember's) -----------------------

NULLABLE_SMALL = "nsmall s"


@pytest.mark.parametrize("where", [
    "EXISTS (SELECT 1 FROM big WHERE big.k = s.k)",
    "EXISTS (SELECT 1 FROM big WHERE big.k = s.k AND big.v > s.w * 50)",
    "NOT EXISTS (SELECT 1 FROM big WHERE big.k = s.k AND big.v > s.w * 50 + 3000)",
    "NOT EXISTS (SELECT 1 FROM big WHERE big.k = s.k)",
    "EXISTS (SELECT 1 FROM big WHERE big.k = s.k AND big.v > 19000) OR s.w < 10"])
@pytest.mark.parametrize("batch", [2, 65536])
def test_left_side_of_existence_joins_is_broadcast(session, where, batch):
    # small (5 KB) under the runtime threshold, big (320 KB) over it: the left side is broadcast
    # and big streams through it unshuffled
    sql = f"SELECT s.k, s.w FROM {NULLABLE_SMALL} WHERE {where}"
    session.sql(f"SET ember.execution.batchSize={batch}")
    try:
        _, want, off, _ = _run_with(session, sql, -1, shj=False)
        assert not off.replaced
        _, got, on, text = _run_with(session, sql, 50_000, shj=True)
    finally:
        session.sql("SET ember.execution.batchSize=65536")
    [new] = on.replaced.values()
    assert isinstance(new, BroadcastHashJoinExec), text
    assert new.build_side.name == "LEFT"
    assert "ShuffleExchangeExec" not in {type(n).__name__
                                         for n in new.streamed_plan.collect(lambda x: x)}
    assert _rows(got) == _rows(want)
    assert 0 < len(_rows(want)) < 334
