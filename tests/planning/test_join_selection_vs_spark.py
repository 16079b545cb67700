"""Differential: the join operators (algorithm, build side, join type, in plan order) that Ember's
planner picks equal those in Spark's physical plan (adaptive execution off), for a grid of
queries x configurations over small Parquet files written here.

Sizes come from ``ember.plans.logical.statistics.plan_stats``; while that module is not in the
tree, a size-only stub (Spark's SizeInBytesOnlyStatsPlanVisitor, simplified) is injected here.
Cases that depend on optimizer rules Ember does not run yet are xfail with the reason.
"""

from __future__ import annotations

import os
import re

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import ember
from ember import types as T
from ember.planning import plan_query
from ember.plans.logical import nodes as L

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
# Size stub (used only while ember.plans.logical.statistics is missing)

def _width(t: T.DataType) -> int:
    match t:
        case T.LongType() | T.DoubleType() | T.TimestampType():
            return 8
        case T.IntegerType() | T.FloatType() | T.DateType():
            return 4
        case T.BooleanType() | T.ByteType():
            return 1
        case T.ShortType():
            return 2
        case T.StringType() | T.BinaryType():
            return 20
        case T.DecimalType():
            return 8 if t.precision <= 18 else 16
    return 8


def _row(attrs) -> int:
    return 8 + sum(_width(a.data_type) for a in attrs)


def _stub_size(plan: L.LogicalPlan) -> int:
    match plan:
        case L.FileRelation(paths=paths):
            total = 0
            for p in paths:
                if os.path.isdir(p):
                    for root, _, files in os.walk(p):
                        total += sum(os.path.getsize(os.path.join(root, f)) for f in files
                                     if not f.startswith((".", "_")))
                else:
                    total += os.path.getsize(p)
            return total
        case L.LocalRelation(data=data):
            return max(1, (0 if data is None else data.num_rows) * _row(plan.output))
        case L.Join(left=left, right=right, join_type=jt):
            if jt.value in ("LeftSemi", "LeftAnti"):
                return _stub_size(left)
            return _stub_size(left) * _stub_size(right)
        case L.Filter(child=c) | L.SubqueryAlias(child=c) | L.View(child=c) | L.ResolvedHint(child=c):
            return _stub_size(c)
        case L.Union(inputs=inputs):
            return sum(_stub_size(c) for c in inputs)
        case L.Aggregate(grouping_expressions=g, child=c) if not g:
            return _row(plan.output)
    kids = plan.children
    if len(kids) == 1:
        c = kids[0]
        return max(1, _stub_size(c) * _row(plan.output) // _row(c.output))
    return 1 << 62


def _size_of(conf):
    try:
        from ember.plans.logical.statistics import plan_stats
    except ImportError:
        return _stub_size
    return lambda p: plan_stats(p, conf).size_in_bytes


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

# Queries whose Spark plan depends on optimizer rules Ember's current path lacks (filters
# pushed below the join / inferred IsNotNull change nothing here, but join reordering and
# column pruning change sizes): revisit when the optimizer lands.
XFAIL: dict[str, str] = {}
_SEEN: list = []


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

    session = ember.Session()
    for k, v in conf.items():
        session.sql_conf.set(k, v)
    for name, path in tables.items():
        session.read.parquet(path).createOrReplaceTempView(name)
    optimized = session.sql(query)._qe.optimized
    physical = plan_query(optimized, session.sql_conf, size_of=_size_of(session.sql_conf))
    actual = join_ops(physical.tree_string())
    if query in XFAIL and actual != expected:
        pytest.xfail(XFAIL[query])
    assert actual == expected, physical.tree_string()
    assert expected or "cross" in query, "no join parsed"
    _SEEN.append((config, tuple(expected)))


def test_grid_covers_every_algorithm():
    """Sanity: the grid above exercised all five algorithms (when it ran in this process)."""
    if len(_SEEN) < len(QUERIES) * len(CONFIGS):
        pytest.skip("run together with the grid")
    algs = {op[0] for _, ops in _SEEN for op in ops}
    assert algs == {"BroadcastHashJoin", "ShuffledHashJoin", "SortMergeJoin",
                    "BroadcastNestedLoopJoin", "CartesianProduct"}
