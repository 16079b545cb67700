"""Physical plan printing and EnsureRequirements on planned queries (sizes injected)."""

from __future__ import annotations

import pyarrow as pa

import ember
from ember.physical.nodes import SortMergeJoinExec
from ember.physical.partitioning import ClusteredDistribution, HashPartitioning, SinglePartition
from ember.planning import plan_query


def _session():
    s = ember.Session()
    s.createDataFrame(pa.table({"k": [1, 2], "v": [3, 4]})).createOrReplaceTempView("x")
    s.createDataFrame(pa.table({"k": [1, 2], "w": [3, 4]})).createOrReplaceTempView("y")
    # Python rows: Spark's LogicalRDD, which ConvertToLocalRelation leaves alone
    s.createDataFrame([(1, 3), (2, 4)], ["k", "v"]).createOrReplaceTempView("r")
    return s


def _plan(sql: str, size: int = 1 << 40, **conf) -> str:
    s = _session()
    for k, v in conf.items():
        s.sql_conf.set(k, v)
    return plan_query(s.sql(sql)._qe.optimized, s.sql_conf, size_of=lambda p: size)


def _lines(p) -> list[str]:
    import re

    return [re.sub(r"#\d+", "#", re.sub(r"plan_id=\d+", "plan_id=", ln))
            for ln in p.tree_string().splitlines()]


def test_sort_merge_join_shape():
    p = _plan("select * from x join y on x.k = y.k")
    lines = _lines(p)
    assert any("SortMergeJoin [k#L], [k#L], Inner" in ln for ln in lines)
    assert sum("Exchange hashpartitioning(k#L, 200), ENSURE_REQUIREMENTS, [plan_id=]" in ln
               for ln in lines) == 2
    assert sum("Sort [k#L ASC NULLS FIRST], false, 0" in ln for ln in lines) == 2


def test_broadcast_hash_join_shape():
    lines = _lines(_plan("select * from x join y on x.k = y.k", size=10))
    assert any("BroadcastHashJoin [k#L], [k#L], Inner, BuildRight, false, false" in ln
               for ln in lines)
    assert any("BroadcastExchange HashedRelationBroadcastMode(List(input[0, bigint, true]),false)"
               in ln for ln in lines)
    assert not any("Exchange hashpartitioning" in ln for ln in lines)


def test_aggregate_over_join_reuses_partitioning():
    lines = _lines(_plan("select x.k, count(*) from x join y on x.k = y.k group by x.k"))
    assert sum("Exchange hashpartitioning" in ln for ln in lines) == 2  # none above the join
    assert lines[0].startswith("HashAggregate(keys=[k#L], functions=[count(1)]")


def test_limits_and_global_sort():
    lines = _lines(_plan("select * from x order by v limit 1"))
    assert lines[0].startswith("TakeOrderedAndProject(limit=1, orderBy=[v#L ASC NULLS FIRST]")
    lines = _lines(_plan("select * from x order by v"))
    assert lines[0] == "Sort [v#L ASC NULLS FIRST], true, 0"
    assert "Exchange rangepartitioning(v#L ASC NULLS FIRST, 200)" in lines[1]
    assert _lines(_plan("select * from r limit 2"))[0] == "CollectLimit 2"
    # a LIMIT over in-memory data is folded into the relation, as Spark's ConvertToLocalRelation
    assert _lines(_plan("select * from x limit 2"))[0].startswith("LocalTableScan")


def test_join_keys_reordered_to_existing_partitioning():
    p = _plan("select * from (select k, v from x group by k, v) a "
              "join y on a.v = y.w and a.k = y.k")
    smj = p.find(lambda n: isinstance(n, SortMergeJoinExec))
    assert [k.name for k in smj.left_keys] == ["k", "v"]


def test_partitioning_satisfies():
    s = _session()
    a = s.sql("select * from x")._qe.optimized.output[0]
    b = s.sql("select * from x")._qe.optimized.output[1]
    assert HashPartitioning((a,), 5).satisfies(ClusteredDistribution((a, b)))
    assert not HashPartitioning((a, b), 5).satisfies(ClusteredDistribution((a,)))
    assert not HashPartitioning((a,), 5).satisfies(ClusteredDistribution((a,), 4))
    assert SinglePartition().satisfies(ClusteredDistribution((a,)))
