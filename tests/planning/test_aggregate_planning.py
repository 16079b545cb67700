"""Aggregation planning: Partial -> Exchange -> Final, the 4-operator one-distinct plan, and the
COMPLETE fallbacks; EXPLAIN lines compared with Spark's (``spark.sql.adaptive.enabled=false``)."""

from __future__ import annotations

import re

import pyarrow as pa
import pytest

import ember
from ember.physical.nodes import AggregateMode, HashAggregateExec
from ember.planning import plan_query

_DATA = pa.table({
    "k": pa.array([1, 2, 1, None], pa.int32()),
    "v": pa.array([2, 3, None, 5], pa.int64()),
    "x": pa.array([7, 7, 8, None], pa.int32()),
})


def _session(optimize: bool = True) -> ember.Session:
    s = ember.Session()
    s.sql_conf.set("spark.sql.shuffle.partitions", "2")
    s.sql_conf.set("ember.optimizer.enabled", "true" if optimize else "false")
    s.createDataFrame(_DATA).createOrReplaceTempView("t")
    return s


def _plan(sql: str, optimize: bool = True):
    s = _session(optimize)
    return plan_query(s.sql(sql)._qe.optimized, s.sql_conf)


def _norm(line: str) -> str:
    line = re.sub(r"^[\s:+\-|]*", "", line)          # tree drawing
    line = re.sub(r"^\*\(\d+\) ", "", line)          # Spark's whole-stage-codegen marker
    line = re.sub(r"plan_id=\d+", "plan_id=", line)
    return re.sub(r"#\d+", "#", line)


def _agg_lines(text: str) -> list[str]:
    """The HashAggregate and Exchange lines of a plan, normalised."""
    return [_norm(ln) for ln in text.splitlines()
            if re.search(r"HashAggregate|Exchange", ln)]


def test_without_distinct_partial_exchange_final():
    lines = _agg_lines(_plan("select k, sum(v), count(*) from t group by k").tree_string())
    assert lines == [
        "HashAggregate(keys=[k#], functions=[sum(v#L), count(1)], "
        "output=[k#, sum(v)#L, count(1)#L])",
        "Exchange hashpartitioning(k#, 2), ENSURE_REQUIREMENTS, [plan_id=]",
        "HashAggregate(keys=[k#], functions=[partial_sum(v#L), partial_count(1)], "
        "output=[k#, sum#L, count#L])",
    ]


def test_global_aggregate_single_partition_and_filter_only_in_partial():
    lines = _agg_lines(_plan("select sum(v) filter (where k > 1), avg(v) from t").tree_string())
    assert lines[0].startswith("HashAggregate(keys=[], functions=[sum(v#L), avg(v#L)]")
    assert lines[1] == "Exchange SinglePartition, ENSURE_REQUIREMENTS, [plan_id=]"
    assert lines[2] == ("HashAggregate(keys=[], functions=[partial_sum(v#L) FILTER (WHERE (k# > "
                        "1)), partial_avg(v#L)], output=[sum#L, sum#, count#L])")


def test_one_distinct_four_operators():
    p = _plan("select k, count(distinct x), sum(v) from t group by k")
    modes = p.collect(lambda n: n.mode if isinstance(n, HashAggregateExec) else None)
    assert modes == [AggregateMode.FINAL, AggregateMode.PARTIAL, AggregateMode.PARTIAL_MERGE,
                     AggregateMode.PARTIAL]
    third = p.children[0].children[0]
    assert third.modes == (AggregateMode.PARTIAL_MERGE, AggregateMode.PARTIAL)
    assert _agg_lines(p.tree_string())[2] == (
        "HashAggregate(keys=[k#], functions=[merge_sum(v#L), partial_count(distinct x#)], "
        "output=[k#, sum#L, count#L])")


def test_complete_fallbacks():
    for q in ["select k, count(distinct x), count(distinct v) from t group by k",
              "select k, sum(distinct v) filter (where x > 1) from t group by k",
              "select count(distinct 1) from t"]:
        p = _plan(q, optimize=False)
        assert p.mode is AggregateMode.COMPLETE and isinstance(p, HashAggregateExec), q


_SPARK_QUERIES = [
    "select k, sum(v) from t group by k",
    "select sum(v), count(*) from t",
    "select k, avg(v), min(x), max(v), count(x), first(x), last(v, true) from t group by k",
    "select k, count(distinct x), sum(v) from t group by k",
    "select count(distinct x), sum(v) filter (where k > 1) from t",
    "select k, sum(distinct x + 1), avg(distinct x + 1) from t group by k",
    "select k, count(distinct x, v) from t group by k",
]


@pytest.mark.parametrize("q", _SPARK_QUERIES)
def test_aggregate_explain_matches_spark(spark, q):
    spark.createDataFrame(_DATA.to_pandas().astype({"k": "Int32", "v": "Int64", "x": "Int32"})) \
        .createOrReplaceTempView("t")
    old = spark.conf.get("spark.sql.adaptive.enabled")
    spark.conf.set("spark.sql.adaptive.enabled", "false")
    try:
        expected = spark.sql(q)._jdf.queryExecution().executedPlan().toString()
    finally:
        spark.conf.set("spark.sql.adaptive.enabled", old)
    got = _plan(q).tree_string()
    assert _agg_lines(got) == _agg_lines(expected)
