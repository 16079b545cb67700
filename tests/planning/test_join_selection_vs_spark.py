"""Differential: the join operators (algorithm, build side, join type, in plan order) that Ember's
planner picks equal those in Spark's physical plan (adaptive execution off), for a grid of
queries x configurations over small Parquet files written here.

Ember's side is the full path a user gets: Spark's optimizer batches, statistics from
``ember.plans.logical.statistics.plan_stats`` and the planner (``QueryExecution.executed_plan``).
"""

from __future__ import annotations

import os
import re

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import ember

pytestmark = pytest.mark.spark

_JOIN_RE = re.compile(
    r"(BroadcastHashJoin|ShuffledHashJoin|SortMergeJoin|BroadcastNestedLoopJoin|CartesianProduct)"
    r"\b(.*)$")
_TYPE_RE = re.compile(r"\b(Inner|Cross|LeftOuter|RightOuter|FullOuter|LeftSemi|LeftAnti|"
                      r"ExistenceJoin)\b")
_SIDE_RE = re.compile(r"\b(BuildLeft|BuildRight)\b")


def join_ops(tree: str) -> list[tuple[str, str | None, str]]:
    """(algorithm, build side, join type) of each join line of a plan tree, top-down."""
    out = []
    for line in tree.splitlines():
        m = _JOIN_RE.search(line)
        if not m:
            continue
        alg, rest = m.group(1), m.group(2)
        if alg == "CartesianProduct":
            out.append((alg, None, "Inner"))
            continue
        if alg in ("BroadcastHashJoin", "ShuffledHashJoin", "SortMergeJoin"):
            # skip the two key lists
            depth, i, lists = 0, 0, 0
            while i < len(rest) and lists < 2:
                if rest[i] == "[":
                    depth += 1
                elif rest[i] == "]":
                    depth -= 1
                    if depth == 0:
                        lists += 1
                i += 1
            rest = rest[i:]
        t = _TYPE_RE.search(rest)
        s = _SIDE_RE.search(rest)
        out.append((alg, s.group(1) if s and alg != "SortMergeJoin" else None,
                    t.group(1) if t else "?"))
    return out


# ---------------------------------------------------------------------------------------------
# Data, queries, configurations


@pytest.fixture(scope="module")
def tables(tmp_path_factory):
    d = tmp_path_factory.mktemp("joinsel")
    import numpy as np

    rng = np.random.default_rng(1)

    def write(name, n, cols):
        data = {"k": pa.array(rng.integers(0, 50, n), pa.int64())}
        for c in cols:
            data[c] = pa.array(rng.integers(0, 1000, n), pa.int64())
        mask = rng.random(n) < 0.1
        data["k"] = pa.array([None if m else v for m, v in zip(mask, data["k"].to_pylist())],
                             pa.int64())
        path = str(d / name)
        os.makedirs(path)
        pq.write_table(pa.table(data), os.path.join(path, "part-0.parquet"))
        return path

    return {"s": write("s", 20, ["a"]), "m": write("m", 2000, ["b", "c"]),
            "b": write("b", 20000, ["d", "e", "f"])}


QUERIES = [
    "select * from s join b on s.k = b.k",
    "select * from b join s on s.k = b.k",
    "select * from s left join b on s.k = b.k",
    "select * from b left join s on s.k = b.k",
    "select * from s right join b on s.k = b.k",
    "select * from b right join s on s.k = b.k",
    "select * from s full join b on s.k = b.k",
    "select * from b left semi join s on s.k = b.k",
    "select * from s left semi join b on s.k = b.k",
    "select * from b left anti join s on s.k = b.k",
    "select * from s left anti join b on s.k = b.k",
    "select * from s join m on s.k = m.k and s.a < m.b",
    "select * from s join b on s.k <=> b.k",
    "select * from s join b on s.a < b.d",
    "select * from s left join b on s.a < b.d",
    "select * from b right join s on s.a < b.d",
    "select * from s full join m on s.a < m.b",
    "select * from s cross join m",
    "select /*+ broadcast(b) */ * from s join b on s.k = b.k",
    "select /*+ broadcast(s) */ * from s left join b on s.k = b.k",
    "select /*+ merge(s) */ * from s join b on s.k = b.k",
    "select /*+ shuffle_hash(b) */ * from s join b on s.k = b.k",
    "select /*+ shuffle_hash(s) */ * from s full join b on s.k = b.k",
    "select /*+ shuffle_replicate_nl(s) */ * from s join b on s.k = b.k",
    "select /*+ shuffle_replicate_nl(s) */ * from s join b on s.a < b.d",
    "select /*+ broadcast(b), merge(s) */ * from s join b on s.k = b.k",
    "select /*+ shuffle_hash(s), merge(b) */ * from s join b on s.k = b.k",
    "select * from b where k not in (select k from s)",
    "select * from s where k not in (select k from b)",
    "select * from b where exists (select 1 from s where s.k = b.k)",
    "select * from b where not exists (select 1 from s where s.k = b.k)",
    "select * from b where k in (select k from s) or d > 500",
    "select * from s join m on s.k = m.k join b on m.k = b.k",
    "select * from b join m on b.k = m.k join s on s.k = b.k",
    "select * from s join m on s.k = m.k left join b on m.b = b.d",
]

CONFIGS = {
    "default": {},
    "no_broadcast": {"spark.sql.autoBroadcastJoinThreshold": "-1"},
    "no_broadcast_shj": {"spark.sql.autoBroadcastJoinThreshold": "-1",
                         "spark.sql.join.preferSortMergeJoin": "false"},
    "small_threshold_shj": {"spark.sql.autoBroadcastJoinThreshold": "2000",
                            "spark.sql.join.preferSortMergeJoin": "false"},
}



def ember_join_ops(tables, query: str, conf: dict[str, str]) -> tuple[list, str]:
    """Join operators of Ember's physical plan for ``query`` under ``conf`` (and the plan)."""
    session = ember.Session()
    for k, v in conf.items():
        session.sql_conf.set(k, v)
    for name, path in tables.items():
        session.read.parquet(path).createOrReplaceTempView(name)
    physical = session.sql(query)._qe.executed_plan
    return join_ops(physical.tree_string()), physical.tree_string()


@pytest.mark.parametrize("config", list(CONFIGS))
@pytest.mark.parametrize("query", QUERIES)
def test_join_operators_match_spark(spark, tables, query, config):
    conf = {"spark.sql.adaptive.enabled": "false", "spark.sql.shuffle.partitions": "2",
            **CONFIGS[config]}
    for name, path in tables.items():
        spark.read.parquet(path).createOrReplaceTempView(name)
    old = {k: spark.conf.get(k, None) for k in conf}
    try:
        for k, v in conf.items():
            spark.conf.set(k, v)
        expected = join_ops(spark.sql(query)._jdf.queryExecution().executedPlan().treeString())
    finally:
        for k, v in old.items():
            if v is None:
                spark.conf.unset(k)
            else:
                spark.conf.set(k, v)

    actual, tree = ember_join_ops(tables, query, conf)
    assert actual == expected, tree
    assert expected or "cross" in query, "no join parsed"


def test_grid_covers_every_algorithm(tables):
    """Sanity: the grid exercises all five algorithms (Ember's plans, which the grid checks
    equal Spark's)."""
    algs = set()
    for config in CONFIGS.values():
        conf = {"spark.sql.adaptive.enabled": "false", "spark.sql.shuffle.partitions": "2",
                **config}
        for query in QUERIES:
            algs |= {op[0] for op in ember_join_ops(tables, query, conf)[0]}
    assert algs == {"BroadcastHashJoin", "ShuffledHashJoin", "SortMergeJoin",
                    "BroadcastNestedLoopJoin", "CartesianProduct"}
