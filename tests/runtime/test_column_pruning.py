"""Joins and filters skip gathering the columns no parent reads (runtime/local/pruning.py).

The analysis is checked on hand-built plans; the operators' placeholders are checked directly; and
whole queries run with ``pruning.POISON`` (placeholders hold non-NULL garbage, so any reader would
change a result) must give the rows of a run with pruning off -- while placeholders are made.
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pytest

import ember
from ember import types as T
from ember.expressions.base import Alias, AttributeReference, BoundReference
from ember.expressions.predicates import EqualTo, GreaterThan
from ember.expressions.base import Literal
from ember.physical.nodes import (
    BroadcastHashJoinExec,
    BuildSide,
    FilterExec,
    LocalTableScanExec,
    ProjectExec,
    SortExec,
)
from ember.expressions.base import SortOrder
from ember.plans.logical.join_type import JoinType
from ember.runtime.local import LocalRuntime, pruning
from ember.runtime.local.joins.kernel import JoinLayout
from ember.runtime.local.operators.basic import filter_batch


def _attrs(*names: str) -> tuple[AttributeReference, ...]:
    return tuple(AttributeReference(n, T.LongType()) for n in names)


def _scan(attrs) -> LocalTableScanExec:
    return LocalTableScanExec(attrs, None)


# ---------------------------------------------------------------------------------------------
# The analysis


def test_project_over_join_reads_only_its_references():
    a, b = _attrs("a", "b")
    c, d = _attrs("c", "d")
    join = BroadcastHashJoinExec((a,), (c,), JoinType.INNER, BuildSide.RIGHT, None,
                                 _scan((a, b)), _scan((c, d)))
    root = ProjectExec((b, Alias(d, "x")), join)
    needs = pruning.read_columns(root)
    assert needs[root] is None
    assert needs[join] == frozenset({b.id, d.id})
    # a join reads every column of its children (conservative)
    assert needs[join.left] is None and needs[join.right] is None


def test_filter_chain_adds_condition_references():
    a, b, c, d = _attrs("a", "b", "c", "d")
    leaf = _scan((a, b, c, d))
    f1 = FilterExec(GreaterThan(c, Literal(1, T.LongType())), leaf)
    f2 = FilterExec(EqualTo(b, Literal(2, T.LongType())), f1)
    root = ProjectExec((a,), f2)
    needs = pruning.read_columns(root)
    assert needs[f2] == frozenset({a.id})
    assert needs[f1] == frozenset({a.id, b.id})
    assert needs[leaf] == frozenset({a.id, b.id, c.id})


def test_filter_under_other_operator_reads_everything():
    a, b = _attrs("a", "b")
    leaf = _scan((a, b))
    f = FilterExec(GreaterThan(a, Literal(1, T.LongType())), leaf)
    root = SortExec((SortOrder(a, True, True),), False, f)
    needs = pruning.read_columns(ProjectExec((a,), root))
    assert needs[root] == frozenset({a.id})
    assert needs[f] is None and needs[leaf] is None


def test_shared_node_gets_the_union_of_its_parents():
    a, b, c = _attrs("a", "b", "c")
    leaf = _scan((a, b, c))
    p1, p2 = ProjectExec((a,), leaf), ProjectExec((b,), leaf)
    join = BroadcastHashJoinExec((a,), (b,), JoinType.INNER, BuildSide.RIGHT, None, p1, p2)
    needs = pruning.read_columns(ProjectExec((a,), join))
    assert needs[leaf] == frozenset({a.id, b.id})
    # ... and one parent reading everything wins
    s = SortExec((SortOrder(a, True, True),), False, leaf)
    join2 = BroadcastHashJoinExec((a,), (a,), JoinType.INNER, BuildSide.RIGHT, None, p1, s)
    assert pruning.read_columns(join2)[leaf] is None


def test_positional_references_read_everything():
    a, b = _attrs("a", "b")
    leaf = _scan((a, b))
    root = ProjectExec((Alias(BoundReference(1, T.LongType()), "x"),), leaf)
    assert pruning.read_columns(root)[leaf] is None


def test_replacement_node_gets_the_answer_of_the_node_it_replaced():
    a, b = _attrs("a", "b")
    old, new, other = _scan((a, b)), _scan((a, b)), _scan((a, b))
    rt = LocalRuntime()  # a run whose analysis and adaptive re-planning are given
    rt.column_needs[old] = frozenset({b.id})
    rt.metrics.replaced[old] = new
    assert pruning.output_mask(rt, old) == (False, True)
    assert pruning.output_mask(rt, new) == (False, True)
    assert pruning.output_mask(rt, other) is None  # unknown node: every column
    assert pruning.output_mask(None, old) is None  # no run analysis
    pruning.ENABLED = False
    try:
        assert pruning.output_mask(rt, old) is None
    finally:
        pruning.ENABLED = True


# ---------------------------------------------------------------------------------------------
# Placeholders and the operators


@pytest.mark.parametrize("dtype", [pa.int64(), pa.string(), pa.decimal128(15, 2), pa.date32(),
                                   pa.bool_(), pa.list_(pa.int32()),
                                   pa.timestamp("us", tz="UTC")])
def test_placeholder_is_all_null_of_the_type_and_length(dtype):
    for n in (0, 1, 3, 5000, pruning.CACHE_ROWS + 1):
        p = pruning.placeholder(dtype, n)
        assert p.type == dtype and len(p) == n and p.null_count == n
    # slices of one cached array: no allocation per call
    x, y = pruning.placeholder(dtype, 10), pruning.placeholder(dtype, 7)
    assert x.buffers()[0].address == y.buffers()[0].address


def test_poison_placeholders_are_not_null():
    pruning.POISON = True
    try:
        for dtype in (pa.int32(), pa.string(), pa.decimal128(15, 2), pa.date32(), pa.float64()):
            p = pruning.placeholder(dtype, 4)
            assert p.type == dtype and len(p) == 4 and p.null_count == 0
    finally:
        pruning.POISON = False


def _layout(jt, keep, exists=False):
    la = (AttributeReference("a", T.LongType()), AttributeReference("s", T.StringType()))
    ra = (AttributeReference("b", T.LongType()), AttributeReference("t", T.StringType()))
    if jt.outputs_right:
        out = la + ra
    elif exists:
        out = la + (AttributeReference("exists", T.BooleanType(), False),)
    else:
        out = la
    return JoinLayout.of(jt, False, la, ra, out, None, 2, keep=keep)


def _sides():
    left = pa.record_batch({"a": pa.array([1, 2, 3], pa.int64()), "s": ["x", "y", None]})
    right = pa.record_batch({"b": pa.array([10, 20], pa.int64()), "t": ["p", "q"]})
    return left, right


def test_emit_skips_unread_columns_and_keeps_the_schema():
    left, right = _sides()
    layout = _layout(JoinType.INNER, (False, True, True, False))
    out = pa.Table.from_batches(list(layout.emit(left, right, np.array([2, 0, 1]),
                                                 np.array([1, -1, 0]))))
    assert out.schema == layout.out_schema and out.num_rows == 3
    assert out.column(1).to_pylist() == [None, "x", "y"]
    assert out.column(2).to_pylist() == [20, None, 10]
    assert out.column(0).null_count == 3 and out.column(3).null_count == 3
    # every column read: keep is dropped
    assert _layout(JoinType.INNER, (True,) * 4).keep is None


def test_emit_identity_padding_and_existence_with_keep():
    left, right = _sides()
    layout = _layout(JoinType.LEFT_OUTER, (True, False, False, True))
    out = pa.Table.from_batches(list(layout.emit(left, None, np.arange(3), np.full(3, -1),
                                                 left_identity=True)))
    assert out.column(0).to_pylist() == [1, 2, 3] and out.column(3).null_count == 3
    ex = _layout(JoinType.EXISTENCE, (False, True, False), exists=True)
    out = pa.Table.from_batches(list(ex.emit(left, None, np.arange(3), None,
                                             exists=np.array([True, False, True]))))
    assert out.column(1).to_pylist() == ["x", "y", None]
    assert out.column(2).null_count == 3
    ex = _layout(JoinType.EXISTENCE, (False, False, True), exists=True)
    out = pa.Table.from_batches(list(ex.emit(left, None, np.arange(3), None,
                                             exists=np.array([True, False, True]))))
    assert out.column(2).to_pylist() == [True, False, True]


def test_filter_batch_with_keep():
    from ember.execution.prepare import prepare

    a, s = AttributeReference("a", T.LongType()), AttributeReference("s", T.StringType())
    b = pa.record_batch({"a": pa.array([1, 2, 3, None], pa.int64()), "s": ["x", "y", "z", "w"]})
    bound = prepare(GreaterThan(a, Literal(1, T.LongType())), (a, s))
    out = filter_batch(bound, b, (False, True))
    assert out.schema == b.schema and out.column(1).to_pylist() == ["y", "z"]
    assert out.column(0).null_count == 2
    assert filter_batch(bound, b, None).column(0).to_pylist() == [2, 3]
    # all rows kept: the batch itself; none: None
    assert filter_batch(prepare(GreaterThan(a, Literal(-9, T.LongType())), (a, s)),
                        b.slice(0, 3), (False, True)) is not None
    assert filter_batch(prepare(GreaterThan(a, Literal(9, T.LongType())), (a, s)), b,
                        (False, True)) is None


# ---------------------------------------------------------------------------------------------
# Whole queries: poisoned placeholders never reach a reader

QUERIES = [
    ("select t.s, u.v from t join u on t.k = u.k", False),
    ("select t.s from t left join u on t.k = u.k and u.v > 10", False),
    ("select u.v from t right join u on t.k = u.k", False),
    ("select t.d, u.v from t full join u on t.k = u.k", False),
    ("select s from t where exists (select 1 from u where u.k = t.k)", False),
    ("select s from t where not exists (select 1 from u where u.k = t.k and u.v > 20)", False),
    ("select s from t where k not in (select k from u where k is not null)", False),
    ("select s from t where k not in (select k from u)", False),
    ("select s from t where exists (select 1 from u where u.k = t.k) or d > 3", False),
    ("select t.s, u.v from t cross join u where t.d < u.v", False),
    ("select t.s, u.v from t join u on t.k < u.k", False),
    ("select t.s, u.v from t join u on t.k between u.k - 1 and u.k + 1", False),
    ("select s from t where d > 1", False),
    ("select s, v from t join u on t.k = u.k where t.d * 10 < u.v + 5", False),
    ("select count(*) from t join u on t.k = u.k", False),
    ("select t.s, u2.v from t join u on t.k = u.k join u u2 on u.k = u2.k", False),
    ("select k, sum(v) from t join u using (k) group by k order by k", True),
    ("select t.s from t join u on t.k = u.k where u.v > 1000", False),
    ("select t.s from t join (select cast(null as int) k, 1 v) x on t.k = x.k", False),
    ("select k, s from t where s > (select min(s) from t)", False),
    ("select t.s from t left join u on t.k = u.k where u.v is null", False),
    ("select t.s, t.d from t full join u on t.k = u.k where u.v is null or t.d > 2", False),
    ("select u.v, t.s from u left join t on u.k = t.k order by u.v, t.s", True),
]

CONFS = {
    "default": {},
    "smj-bs2": {"spark.sql.autoBroadcastJoinThreshold": "-1", "ember.execution.batchSize": "2"},
    "shj-bs3": {"spark.sql.autoBroadcastJoinThreshold": "-1",
                "spark.sql.join.preferSortMergeJoin": "false", "ember.execution.batchSize": "3",
                "spark.sql.shuffle.partitions": "7"},
}


def _session(conf: dict[str, str]) -> ember.Session:
    s = ember.Session()
    s.sql("create temp view t as select * from values (1,'a',1.5),(2,'b',2.5),(3,null,null),"
          "(1,'c',4.0),(null,'d',0.0) as t(k,s,d)")
    s.sql("create temp view u as select * from values (1,10),(2,20),(2,21),(5,50),(null,0) "
          "as u(k,v)")
    s.sql("SET ember.execution.progress.enabled=false")
    for k, v in conf.items():
        s.sql(f"SET {k}={v}")
    return s


def _run(s, sql: str, *, prune: bool, poison: bool) -> list:
    old = pruning.ENABLED, pruning.POISON
    pruning.ENABLED, pruning.POISON = prune, poison
    try:
        return s.sql(sql).to_arrow().to_pylist()
    finally:
        pruning.ENABLED, pruning.POISON = old


def _same(s, sql: str, ordered: bool) -> int:
    """Rows without pruning == rows with poisoned placeholders; returns placeholders made."""
    want = _run(s, sql, prune=False, poison=False)
    before = pruning.stats()
    got = _run(s, sql, prune=True, poison=True)
    made = pruning.stats() - before
    if ordered:
        assert got == want, sql
    else:
        assert sorted(map(str, got)) == sorted(map(str, want)), sql
    return made


@pytest.mark.parametrize("name", list(CONFS))
def test_poisoned_placeholders_never_reach_a_reader(name):
    s = _session(CONFS[name])
    made = 0
    for sql, ordered in QUERIES:
        made += _same(s, sql, ordered)
    assert made > 0  # the test is not vacuous


def test_adaptive_replacement_inherits_the_replaced_join_columns(tmp_path):
    import pyarrow.parquet as pq

    big = pa.table({"k": pa.array([i % 100 for i in range(3000)], pa.int64()),
                    "v": pa.array(range(3000), pa.int64())})
    small = pa.table({"k": pa.array(range(0, 100, 3), pa.int64()),
                      "w": pa.array(range(34), pa.int64())})
    pq.write_table(big, tmp_path / "big.parquet")
    pq.write_table(small, tmp_path / "small.parquet")
    s = ember.Session()
    s.sql(f"CREATE TEMP VIEW big USING parquet OPTIONS (path '{tmp_path / 'big.parquet'}')")
    s.sql(f"CREATE TEMP VIEW small USING parquet OPTIONS (path '{tmp_path / 'small.parquet'}')")
    s.sql("SET ember.execution.progress.enabled=false")
    sql = "SELECT big.v, small.w FROM big JOIN small ON big.k = small.k"
    qe = s.sql(sql)._qe
    from ember.planning import plan_query_with_links
    from ember.runtime.local import LocalRuntime

    s.sql("SET spark.sql.autoBroadcastJoinThreshold=1")
    plan, links = plan_query_with_links(qe.optimized, s.sql_conf)
    s.sql("SET spark.sql.autoBroadcastJoinThreshold=10485760")
    want = sorted((v, (v % 100) // 3) for v in range(3000) if (v % 100) % 3 == 0)
    pruning.POISON = True
    try:
        before = pruning.stats()
        with LocalRuntime(s.sql_conf, logical_links=links) as rt:
            got = rt.collect(plan).to_pylist()
            replaced = rt.metrics.replaced.values()
            masks = [pruning.output_mask(rt, new) for new in replaced]
        made = pruning.stats() - before
    finally:
        pruning.POISON = False
    assert sorted((r["v"], r["w"]) for r in got) == want
    assert replaced and made > 0
    assert all(m is not None and not all(m) for m in masks)  # keys unread: not gathered


# ---------------------------------------------------------------------------------------------
# TPC-H (tiny scale): every query, poisoned placeholders vs no pruning


@pytest.fixture(scope="module")
def tpch_session(tmp_path_factory):
    pytest.importorskip("duckdb")
    pytest.importorskip("duckdb_extension_tpch")
    from bench.tpch import datagen

    paths = datagen.generate(tmp_path_factory.mktemp("tpch_prune"), 0.002)
    s = ember.Session()
    datagen.register_ember(s, paths)
    s.sql("SET ember.execution.progress.enabled=false")
    return s


@pytest.mark.parametrize("conf", ["default", "smj-bs1000"])
def test_tpch_poisoned_placeholders(tpch_session, conf):
    from bench.tpch import datagen

    s = tpch_session
    extra = {"spark.sql.autoBroadcastJoinThreshold": "-1", "ember.execution.batchSize": "1000"}
    if conf != "default":
        for k, v in extra.items():
            s.sql(f"SET {k}={v}")
    try:
        made = 0
        for n, sql in sorted(datagen.spark_queries().items()):
            made += _same(s, sql, "order by" in sql.lower())
        assert made > 0
    finally:
        if conf != "default":
            s.sql("SET spark.sql.autoBroadcastJoinThreshold=10485760")
            s.sql("SET ember.execution.batchSize=65536")
