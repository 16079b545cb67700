"""ReuseExchangeAndSubquery (planning/reuse_exchange.py): where ReusedExchange appears (as in
Spark 4 with spark.sql.adaptive.enabled=false), where it must not, and the canonical form."""

from __future__ import annotations

import re

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import ember
from ember import types as T
from ember.conf import SQLConf
from ember.expressions.base import AttributeReference, Literal
from ember.expressions.predicates import GreaterThan
from ember.physical.nodes import (
    BroadcastExchangeExec,
    FileSourceScanExec,
    FilterExec,
    LocalTableScanExec,
    ReusedExchangeExec,
    ShuffleExchangeExec,
    UnionExec,
)
from ember.physical.partitioning import HashPartitioning, IdentityBroadcastMode
from ember.planning import plan_query, plan_query_with_links
from ember.planning.reuse_exchange import reuse_exchange
from ember.plans.logical.nodes import FileRelation
from ember.trees import node


@pytest.fixture(scope="module")
def session(tmp_path_factory):
    d = tmp_path_factory.mktemp("reuse_plan")
    t = pa.table({"l_orderkey": pa.array([1, 2, 2, 3], pa.int64()),
                  "l_quantity": pa.array([1, 2, 3, 4], pa.int64()),
                  "l_flag": pa.array([0, 1, 0, 1], pa.int32())})
    n = pa.table({"n_nationkey": pa.array([0, 1], pa.int32()), "n_name": ["a", "b"]})
    pq.write_table(t, d / "lineitem.parquet")
    pq.write_table(n, d / "nation.parquet")
    s = ember.Session()
    s.sql(f"CREATE TEMP VIEW lineitem USING parquet OPTIONS (path '{d / 'lineitem.parquet'}')")
    s.sql(f"CREATE TEMP VIEW nation USING parquet OPTIONS (path '{d / 'nation.parquet'}')")
    return s


def _plan(s, sql, **conf):
    for k, v in conf.items():
        s.sql_conf.set(k.replace("__", "."), str(v))
    try:
        return plan_query(s.sql(sql)._qe.optimized, s.sql_conf)
    finally:
        for k in conf:
            s.sql_conf.unset(k.replace("__", "."))


def _norm(line: str) -> str:
    return re.sub(r"#\d+", "#", re.sub(r"plan_id=\d+", "plan_id=", line)).strip(" :+-")


AGG_SELF_JOIN = """with a as (select l_orderkey k, sum(l_quantity) s from lineitem group by l_orderkey)
select * from a x join a y on x.k = y.k"""


def test_self_join_of_aggregate_reuses_shuffle_as_spark(session):
    p = _plan(session, AGG_SELF_JOIN, spark__sql__autoBroadcastJoinThreshold=-1)
    lines = p.tree_string().splitlines()
    reused = [ln for ln in lines if "ReusedExchange" in ln]
    assert len(reused) == 1
    # Spark 4.3 (adaptive off, broadcast off), ids and plan ids elided:
    # ReusedExchange [l_orderkey#704L, sum#728, isEmpty#729], Exchange hashpartitioning(
    #   l_orderkey#628L, 200), ENSURE_REQUIREMENTS, [plan_id=5274]
    assert _norm(reused[0]) == ("ReusedExchange [l_orderkey#L, sum#L], Exchange "
                                "hashpartitioning(l_orderkey#L, 200), ENSURE_REQUIREMENTS, "
                                "[plan_id=]")
    node = p.find(lambda n: isinstance(n, ReusedExchangeExec))
    first = node.child
    assert isinstance(first, ShuffleExchangeExec)
    # the original exchange is in the plan at its first place, with the same plan id
    assert any(n is first for n in p.collect(lambda n: n))
    assert f"[plan_id={first.plan_id}]" in reused[0]
    # leaf: nothing printed below it, the reusing side keeps its own attribute ids
    assert lines[-1] == reused[0] or not lines[lines.index(reused[0]) + 1].startswith(
        reused[0][:reused[0].index("+-")] + "   ")
    assert node.children == ()
    assert {a.id for a in node.output}.isdisjoint({a.id for a in first.output})
    assert [a.data_type for a in node.output] == [a.data_type for a in first.output]
    # partitioning seen through the reused node is over its own attributes
    assert node.output_partitioning.expressions[0].id == node.output[0].id


def test_broadcast_reuse_as_spark(session):
    # Spark (Q07 shape): ReusedExchange [n_nationkey#426, n_name#427], BroadcastExchange ...
    sql = """select * from lineitem l join nation n1 on l.l_flag = n1.n_nationkey
             join nation n2 on l.l_flag + 1 = n2.n_nationkey"""
    p = _plan(session, sql)
    reused = [ln for ln in p.tree_string().splitlines() if "ReusedExchange" in ln]
    assert [_norm(ln) for ln in reused] == [
        "ReusedExchange [n_nationkey#, n_name#], BroadcastExchange "
        "HashedRelationBroadcastMode(List(input[0, int, true]),false), [plan_id=]"]


def test_reuse_disabled(session):
    p = _plan(session, AGG_SELF_JOIN, spark__sql__autoBroadcastJoinThreshold=-1,
              spark__sql__exchange__reuse="false")
    assert "ReusedExchange" not in p.tree_string()
    assert p.tree_string().count("Exchange hashpartitioning(l_orderkey") == 2


def test_different_filters_not_reused(session):
    sql = """select * from
      (select l_orderkey k, sum(l_quantity) s from lineitem where l_quantity > 1 group by l_orderkey) x
      join (select l_orderkey k, sum(l_quantity) s from lineitem where l_quantity > 2
            group by l_orderkey) y on x.k = y.k"""
    p = _plan(session, sql, spark__sql__autoBroadcastJoinThreshold=-1)
    assert "ReusedExchange" not in p.tree_string()


def test_different_aggregates_not_reused(session):
    sql = """select * from
      (select l_orderkey k, sum(l_quantity) s from lineitem group by l_orderkey) x
      join (select l_orderkey k, max(l_quantity) s from lineitem group by l_orderkey) y
      on x.k = y.k"""
    p = _plan(session, sql, spark__sql__autoBroadcastJoinThreshold=-1)
    assert "ReusedExchange" not in p.tree_string()


def test_links_kept_for_rebuilt_nodes(session):
    session.sql_conf.set("spark.sql.autoBroadcastJoinThreshold", "-1")
    try:
        plan, links = plan_query_with_links(session.sql(AGG_SELF_JOIN)._qe.optimized,
                                            session.sql_conf)
    finally:
        session.sql_conf.unset("spark.sql.autoBroadcastJoinThreshold")
    reused = plan.find(lambda n: isinstance(n, ReusedExchangeExec))
    join = plan.find(lambda n: type(n).__name__ == "SortMergeJoinExec")
    assert reused is not None and join is not None
    # the join above the replaced exchange was rebuilt: it keeps its logical link (adaptive
    # conversion needs it), and the reused exchange has one (EXPLAIN ANALYZE estimates)
    assert id(join) in links and id(reused) in links


# -- hand-built plans --------------------------------------------------------------------------


def _scan(table: pa.Table) -> LocalTableScanExec:
    return LocalTableScanExec((AttributeReference("a", T.LONG), AttributeReference("b", T.LONG)),
                              table)


TABLE = pa.table({"a": pa.array([1, 2], pa.int64()), "b": pa.array([3, 4], pa.int64())})


def _shuffle(scan: LocalTableScanExec, n: int = 200, col: int = 0, cond: int | None = None
             ) -> ShuffleExchangeExec:
    child = scan
    if cond is not None:
        child = FilterExec(GreaterThan(scan.output[1], Literal(cond, T.LONG)), scan)
    return ShuffleExchangeExec(HashPartitioning((scan.output[col],), n), child)


def _reused(left, right) -> list[ReusedExchangeExec]:
    p = reuse_exchange(UnionExec((left, right)), SQLConf())
    return p.collect(lambda n: n if isinstance(n, ReusedExchangeExec) else None)


def test_identical_exchanges_over_the_same_table_reused():
    left, right = _shuffle(_scan(TABLE), cond=3), _shuffle(_scan(TABLE), cond=3)
    assert left.output[0].id != right.output[0].id
    (r,) = _reused(left, right)
    assert r.child is left and r.output == right.output


@pytest.mark.parametrize("change", ["partitions", "key", "filter", "table"])
def test_non_identical_exchanges_not_reused(change):
    left = _shuffle(_scan(TABLE), cond=3)
    right = {
        "partitions": lambda: _shuffle(_scan(TABLE), n=7, cond=3),
        "key": lambda: _shuffle(_scan(TABLE), col=1, cond=3),
        "filter": lambda: _shuffle(_scan(TABLE), cond=4),
        # equal rows, another table object: local rows take no part in node equality
        "table": lambda: _shuffle(_scan(pa.table({"a": [1, 2], "b": [3, 5]})), cond=3),
    }[change]()
    assert _reused(left, right) == []


def test_broadcast_exchanges_reused_and_nested_exchange_matches():
    s1, s2 = _scan(TABLE), _scan(TABLE)
    b1 = BroadcastExchangeExec(IdentityBroadcastMode(), _shuffle(s1))
    b2 = BroadcastExchangeExec(IdentityBroadcastMode(), _shuffle(s2))
    reused = _reused(b1, b2)
    # the inner shuffle of the second copy is replaced first (bottom-up), then the broadcast
    # above it still matches (a ReusedExchange canonicalizes as its exchange)
    assert len(reused) == 1 and reused[0].child is b1


def test_canonical_form_ignores_ids_and_names():
    a, b = _shuffle(_scan(TABLE), cond=3), _shuffle(_scan(TABLE), cond=3)
    assert a != b
    assert a.canonicalized == b.canonicalized
    assert a.canonicalized != _shuffle(_scan(TABLE), cond=2).canonicalized


@node
class _NonDeterministicGreaterThan(GreaterThan):
    """A predicate claiming to be non-deterministic (Ember's SQL has no rand())."""

    @property
    def deterministic(self) -> bool:
        return False


def test_nondeterministic_subtree_not_reused():
    def exchange() -> ShuffleExchangeExec:
        scan = _scan(TABLE)
        cond = _NonDeterministicGreaterThan(scan.output[1], Literal(3, T.LONG))
        return ShuffleExchangeExec(HashPartitioning((scan.output[0],), 200),
                                   FilterExec(cond, scan))

    assert _reused(exchange(), exchange()) == []


# -- file scans: the columns read are part of the canonical form ---------------------------------


def _file_scan(read: tuple[str, ...], names: tuple[str, ...] = ("a", "b", "c"),
               options: tuple[tuple[str, str], ...] = (), cond: int | None = None
               ) -> FileSourceScanExec:
    """A scan of ``read`` among ``names`` (all bigint) of one Parquet file, fresh ids each call."""
    rel = FileRelation(tuple(AttributeReference(n, T.LONG) for n in names), "parquet",
                       ("/data/t.parquet",), options)
    out = tuple(a for a in rel.attrs if a.name in read)
    filters = () if cond is None else (GreaterThan(out[0], Literal(cond, T.LONG)),)
    return FileSourceScanExec(rel, out, filters)


@pytest.mark.parametrize("other", [
    {"read": ("b",)},                                      # another column of the same type
    {"read": ("a", "c")},                                  # more columns
    {"read": ("x",), "names": ("x", "b", "c")},            # another file column at that place
    {"read": ("a",), "options": (("mergeSchema", "true"),)},
    {"read": ("a",), "cond": 2},                           # another pushed filter
], ids=["column", "columns", "file_column", "options", "data_filter"])
def test_file_scans_of_other_columns_or_filters_not_reused(other):
    """Spark's canonical FileSourceScanExec keeps its relation and required columns: two scans of
    one file match only when they read the same columns with the same filters and options."""
    left = _shuffle(_file_scan(("a",), cond=3))
    right = _shuffle(_file_scan(**{"cond": 3, **other}))
    assert left.canonicalized != right.canonicalized
    assert _reused(left, right) == []


def test_file_scans_of_the_same_columns_reused():
    left, right = _shuffle(_file_scan(("b", "c"), cond=3)), _shuffle(_file_scan(("b", "c"), cond=3))
    assert left.output[0].id != right.output[0].id
    (r,) = _reused(left, right)
    assert r.child is left
