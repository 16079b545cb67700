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

from tests.conformance.ember_adapter import SPARK_RUNTIME_ALL

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
    # Ember's RangeJoin in place of Spark's BroadcastNestedLoopJoin / CartesianProduct
    "select * from s left join m on s.a between m.b and m.c",
    "select * from s join m on s.a <= m.c and m.b <= s.a + 50",
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



def ember_join_ops(tables, query: str, conf: dict[str, str],
                   runtime: str | None = None) -> tuple[list, str, pa.Table | None]:
    """Join operators of Ember's physical plan for ``query`` under ``conf``, the plan, and (with
    a ``runtime``) the rows Ember returns running it there."""
    from tests.conformance.ember_adapter import new_session

    session = new_session(conf, runtime or "local")
    for name, path in tables.items():
        session.read.parquet(path).createOrReplaceTempView(name)
    df = session.sql(query)
    physical = df._qe.executed_plan
    rows = df.to_arrow() if runtime is not None else None
    return join_ops(physical.tree_string()), physical.tree_string(), rows


def canonical_rows(table: pa.Table) -> pa.Table:
    """``table``'s rows in a canonical order (columns renamed by position: names repeat)."""
    t = table.rename_columns([f"c{i}" for i in range(table.num_columns)])
    return t.sort_by([(c, "ascending") for c in t.column_names]).combine_chunks()


_SPARK_OPS: dict[tuple[str, str], list] = {}
_SPARK_ROWS: dict[str, pa.Table] = {}


def spark_result(spark, tables, query: str, config: str) -> tuple[list, pa.Table]:
    """Spark's join operators for ``query`` under ``CONFIGS[config]``, and its rows (cached).  The
    rows are computed once per query, under the first configuration asked for: the configurations
    choose join algorithms, which never change a query's result."""
    key = (query, config)
    if key in _SPARK_OPS and query in _SPARK_ROWS:
        return _SPARK_OPS[key], _SPARK_ROWS[query]
    conf = {"spark.sql.adaptive.enabled": "false", "spark.sql.shuffle.partitions": "2",
            **CONFIGS[config]}
    session = spark.newSession()
    for k, v in conf.items():
        session.conf.set(k, v)
    for name, path in tables.items():
        session.read.parquet(path).createOrReplaceTempView(name)
    df = session.sql(query)
    _SPARK_OPS[key] = join_ops(df._jdf.queryExecution().executedPlan().treeString())
    if query not in _SPARK_ROWS:
        _SPARK_ROWS[query] = canonical_rows(df.toArrow())
    return _SPARK_OPS[key], _SPARK_ROWS[query]


def _cases() -> list:
    """Every (query, configuration) on the local runtime; on the Spark runtime half of them,
    alternating so that every query and every configuration runs there
    (``EMBER_SPARK_RUNTIME=all``: all of them)."""
    out = []
    for qi, query in enumerate(QUERIES):
        for ci, config in enumerate(CONFIGS):
            for runtime in ("local", "spark"):
                if runtime == "local" or SPARK_RUNTIME_ALL or (qi + ci) % 2 == 0:
                    out.append(pytest.param(query, config, runtime,
                                            id=f"{query}-{config}-{runtime}"))
    return out


@pytest.mark.parametrize(("query", "config", "runtime"), _cases())
def test_join_operators_match_spark(spark, tables, query, config, runtime):
    """Same join operators as Spark's plan, and Spark's rows from running it on each runtime."""
    expected, expected_rows = spark_result(spark, tables, query, config)
    conf = {"spark.sql.adaptive.enabled": "false", "spark.sql.shuffle.partitions": "2",
            **CONFIGS[config]}
    actual, tree, rows = ember_join_ops(tables, query, conf, runtime)
    assert actual == expected, tree
    assert expected or "cross" in query, "no join parsed"
    got = canonical_rows(rows.cast(pa.schema([f.with_type(t) for f, t in zip(
        rows.schema, expected_rows.schema.types)])) if rows.num_columns else rows)
    assert got.num_rows == expected_rows.num_rows, tree
    assert got.rename_columns(expected_rows.column_names).equals(expected_rows), tree


def test_grid_covers_every_algorithm(tables):
    """Sanity: the grid exercises all five algorithms (Ember's plans, which the grid checks
    equal Spark's)."""
    algs = set()
    range_joins = set()
    for config in CONFIGS.values():
        conf = {"spark.sql.adaptive.enabled": "false", "spark.sql.shuffle.partitions": "2",
                **config}
        for query in QUERIES:
            ops, tree, _ = ember_join_ops(tables, query, conf)
            algs |= {op[0] for op in ops}
            range_joins |= set(re.findall(r"RangeJoin \[(\w+)\]", tree))
    assert algs == {"BroadcastHashJoin", "ShuffledHashJoin", "SortMergeJoin",
                    "BroadcastNestedLoopJoin", "CartesianProduct"}
    # RangeJoin lines are read as the operator they replace: both occur
    assert range_joins == {"BroadcastNestedLoopJoin", "CartesianProduct"}
