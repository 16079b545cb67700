"""Size-only join estimates with distinct keys equal Spark's, and TPC-H Q20 plans as Spark does.

Spark 4's ``SizeInBytesOnlyStatsPlanVisitor.visitJoin`` estimates an inner/outer equi-join whose
one side is unique on its join keys (``distinctKeys``: an Aggregate grouped by them, a DISTINCT, a
LIMIT 1 ...) as the *sum* of the children's sizes instead of their product.  The expected sizes
are what PySpark 4.3 (classic) reports for ``optimizedPlan().stats().sizeInBytes()`` on the same
views; ``test_sizes_against_spark`` re-derives them live.
"""

from __future__ import annotations

import contextlib

import pandas as pd
import pytest

import ember
from ember import types as T
from ember.conf import SQLConf
from ember.expressions.aggregates import AggregateExpression, Count
from ember.expressions.arithmetic import Add
from ember.expressions.base import Alias, AttributeReference, Literal
from ember.expressions.predicates import EqualTo
from ember.plans.logical.distinct_keys import distinct_keys, max_rows
from ember.plans.logical.join_type import JoinType
from ember.plans.logical.nodes import Aggregate, Distinct, Join, Limit, Offset, Project, Range
from ember.plans.logical.statistics import plan_stats
from tests.planning.test_join_selection_vs_spark import join_ops

_N = pd.DataFrame({"k": [1, 2, 3, 4, 5], "v": ["a", "b", "c", "d", "e"], "w": [1, 1, 2, 2, 3]})
_M = pd.DataFrame({"k": [1, 1, 2, 3, 3, 3], "x": [1.0, 2.0, 3.0, 4.0, 5.0, 6.0],
                   "y": [1, 2, 1, 2, 1, 2]})
_AGG = "(select k, sum(x) s from m group by k)"
_G = "(select g, count(*) c from r2 group by g)"

#: query -> Spark 4.3's sizeInBytes of its optimized plan.
CASES: dict[str, int] = {
    # one side grouped by the join key: n (220) + aggregate (144)
    f"select * from n join {_AGG} a on n.k = a.k": 364,
    f"select * from n left join {_AGG} a on n.k = a.k": 364,
    f"select * from n right join {_AGG} a on n.k = a.k": 364,
    f"select * from n full join {_AGG} a on n.k = a.k": 364,
    f"select * from n left semi join {_AGG} a on n.k = a.k": 220,
    # join keys a superset of the distinct key; a subset of it (product)
    f"select * from n join {_AGG} a on n.k = a.k and n.w = a.s": 364,
    "select * from n join (select k, y, sum(x) s from m group by k, y) a on n.k = a.k": 42240,
    "select * from n join (select k, y, sum(x) s from m group by k, y) a "
    "on n.k = a.k and n.w = a.y": 412,
    "select * from n join (select k, v, count(*) c from n group by k, v) a "
    "on n.k = a.k and n.v = a.v and n.w = a.c": 440,
    # no equi-join key, a null-safe key (coalesce/isnull pairs), no distinct key: product
    "select * from n join m on n.k = m.k": 42240,
    f"select * from n cross join {_AGG} a": 31680,
    f"select * from n join {_AGG} a on n.k < a.k": 31680,
    f"select * from n join {_AGG} a on n.k <=> a.k": 31680,
    # distinct keys through DISTINCT, aliases, expressions, HAVING, ORDER BY
    "select * from n join (select distinct k from m) a on n.k = a.k": 316,
    "select * from r2 left join (select distinct g from r2) a on r2.g = a.g": 2000,
    "select * from n join (select k as kk, sum(x) s from m group by k) a on n.k = a.kk": 364,
    "select * from n join (select k + 1 as kk, sum(x) s from m group by k + 1) a "
    "on n.k = a.kk": 364,
    "select * from r2 join (select g + 1 as h, count(*) c from r2 group by g + 1) a "
    "on r2.g + 1 = a.h": 2400,
    "select * from r2 join (select g + 1 as h, count(*) c from r2 group by g + 1) a "
    "on r2.g = a.h + 1": 1440000,
    "select * from r2 join (select g as g1, g as g2, count(*) c from r2 group by g) a "
    "on r2.g = a.g2": 2800,
    f"select * from r2 join (select c from {_G}) a on r2.g = a.c": 960000,
    "select * from r2 join (select g, max(id) mx from r2 group by g) a on r2.id = a.mx": 1440000,
    f"select * from n join (select k, sum(x) s from m group by k having sum(x) > 1) a "
    "on n.k = a.k": 364,
    f"select * from n join (select k, sum(x) s from m group by k order by k) a on n.k = a.k": 364,
    "select * from (select * from r) r1 join (select id, count(*) c from r group by id) a "
    "on r1.id = a.id": 200,
    # a global aggregate (one row: the empty key), LIMIT 1, OFFSET leaving one row
    "select * from n join (select max(k) mk from m) a on n.k = a.mk": 236,
    "select * from n join (select max(k) mk, count(*) c from m) a on n.w = a.c": 244,
    "select * from r2 join (select * from r limit 1) a on r2.g = a.id": 1216,
    "select * from r2 join (select * from r limit 2) a on r2.g = a.id": 38400,
    "select * from r2 join (select * from (select * from r limit 2) offset 1) a "
    "on r2.g = a.id": 1216,
    "select * from r2 full join (select * from r limit 1) a on r2.g = a.id": 1216,
    "select * from (select * from r limit 1) a left join r2 on r2.g = a.id": 1216,
    # set operations
    "select * from r2 join (select * from r intersect select * from r) a on r2.g = a.id": 1280,
    "select * from r2 join (select * from r except select id from r2) a on r2.g = a.id": 1280,
    "select * from r2 join (select id from r union select g from r2) a on r2.g = a.id": 2080,
    "select * from r2 join (select id from r union all select id from r) a "
    "on r2.g = a.id": 192000,
    # propagation through joins
    f"select * from (select k, count(*) c from n group by k) b join {_AGG} a on b.k = a.k": 264,
    f"select * from r2 join (select a.g, a.c, b.c2 from {_G} a join "
    "(select g, count(*) c2 from r2 group by g) b on a.g = b.g) a on r2.g = a.g": 3120,
    f"select * from {_G} a join (select g, count(*) c from r2 group by g) b on a.g = b.g "
    "join (select g, sum(id) s from r2 group by g) c on a.g = c.g": 3600,
    f"select * from {_G} a join r on a.g = r.id": 1280,
    f"select * from r2 join (select a.g, a.c, r.id from {_G} a join r on a.g = r.id) a "
    "on r2.g = a.id": 1536000,
    f"select * from r2 join (select a.g, a.c, r.id from {_G} a left join r on a.g = r.id) a "
    "on r2.g = a.g": 1536000,
    f"select * from r2 join (select a.g, a.c, r.id from {_G} a full join r on a.g = r.id) a "
    "on r2.g = a.g": 1536000,
    "select * from r2 join (select distinct g, id from r2) a on r2.g = a.g": 1440000,
    "select * from r2 a join r2 b on a.id = b.id": 1440000,
}

_OFF = {"spark.sql.optimizer.propagateDistinctKeys.enabled": "false"}
#: query -> Spark's size with ``spark.sql.optimizer.propagateDistinctKeys.enabled=false``.
CASES_OFF = {f"select * from r2 join {_G} a on r2.g = a.g": 1440000}


def _register(session) -> None:
    session.createDataFrame(_N).createOrReplaceTempView("n")
    session.createDataFrame(_M).createOrReplaceTempView("m")
    session.range(10).createOrReplaceTempView("r")
    session.range(100).selectExpr("id", "id % 7 as g").createOrReplaceTempView("r2")


@pytest.fixture(scope="module")
def session():
    s = ember.Session()
    _register(s)
    return s


def _ember_size(session, query: str) -> int:
    return plan_stats(session.sql(query)._qe.optimized, session.sql_conf).size_in_bytes


@pytest.mark.parametrize("query", list(CASES))
def test_size_matches_recorded_spark(session, query):
    assert _ember_size(session, query) == CASES[query]


@pytest.mark.parametrize("query", list(CASES_OFF))
def test_propagation_disabled(query):
    s = ember.Session(dict(_OFF))
    _register(s)
    assert _ember_size(s, query) == CASES_OFF[query]


def _spark_size(spark, query: str) -> int:
    return int(str(spark.sql(query)._jdf.queryExecution().optimizedPlan().stats().sizeInBytes()))


@contextlib.contextmanager
def _active(spark, session):
    """``session`` as the JVM's active session meanwhile: Spark computes statistics lazily,
    outside the query's execution, under the active session's SQLConf (``SQLConf.get``)."""
    jss = spark._jvm.org.apache.spark.sql.SparkSession
    previous = jss.getActiveSession()
    jss.setActiveSession(session._jsparkSession)
    try:
        yield session
    finally:
        if previous.isDefined():
            jss.setActiveSession(previous.get())
        else:
            jss.clearActiveSession()


def test_sizes_against_spark(spark):
    session = spark.newSession()
    _register(session)
    with _active(spark, session):
        got = {q: _spark_size(session, q) for q in CASES}
        for k, v in _OFF.items():
            session.conf.set(k, v)
        got_off = {q: _spark_size(session, q) for q in CASES_OFF}
    assert got == CASES
    assert got_off == CASES_OFF


# ---------------------------------------------------------------------------------------------
# CBO (JoinEstimation): a side unique on its join keys caps the row count at the other side's

_CROSS20 = "(select a.id l1, b.id l2 from r20 a cross join r20 b)"
_AGG10 = ("(select x.id x, y.id y, count(*) c from r10 x cross join r10 y "
          "group by x.id, y.id)")
#: (query, propagateDistinctKeys) -> Spark's (sizeInBytes, rowCount) with spark.sql.cbo.enabled.
CBO_CASES: dict[tuple[str, bool], tuple[int, int]] = {
    (f"select * from {_CROSS20} l join {_AGG10} r on l.l1 = r.x and l.l2 = r.y", True):
        (19200, 400),
    (f"select * from {_CROSS20} l join {_AGG10} r on l.l1 = r.x and l.l2 = r.y", False):
        (96000, 2000),
    (f"select * from {_AGG10} r left join {_CROSS20} l on l.l1 = r.x and l.l2 = r.y", True):
        (19200, 400),
    (f"select * from {_CROSS20} l full join {_AGG10} r on l.l1 = r.x and l.l2 = r.y", True):
        (19200, 400),
    ("select * from (select id, count(*) c from r30 group by id) a join "
     "(select id, count(*) c from r50 group by id) b on a.id = b.id", True): (1200, 30),
    ("select * from r100 r join (select id, count(*) c from r50 group by id) a "
     "on r.id = a.id", True): (1600, 50),
}


def _register_ranges(session) -> None:
    for n in (10, 20, 30, 50, 100):
        session.range(n).createOrReplaceTempView(f"r{n}")


def _cbo_conf(propagate: bool) -> dict[str, str]:
    return {"spark.sql.cbo.enabled": "true",
            "spark.sql.optimizer.propagateDistinctKeys.enabled": str(propagate).lower()}


@pytest.mark.parametrize("case", list(CBO_CASES), ids=lambda c: f"{c[0][:40]}-{c[1]}")
def test_cbo_join_estimate_matches_recorded_spark(case):
    query, propagate = case
    s = ember.Session(_cbo_conf(propagate))
    _register_ranges(s)
    st = plan_stats(s.sql(query)._qe.optimized, s.sql_conf)
    assert (st.size_in_bytes, st.row_count) == CBO_CASES[case]


def test_cbo_join_estimates_against_spark(spark):
    session = spark.newSession()
    _register_ranges(session)
    got = {}
    with _active(spark, session):
        for query, propagate in CBO_CASES:
            for k, v in _cbo_conf(propagate).items():
                session.conf.set(k, v)
            st = session.sql(query)._jdf.queryExecution().optimizedPlan().stats()
            got[(query, propagate)] = (int(str(st.sizeInBytes())),
                                       int(str(st.rowCount().get())))
    assert got == CBO_CASES


# ---------------------------------------------------------------------------------------------
# distinct_keys on hand-built plans


def _rng(n: int) -> Range:
    return Range(0, n, 1, None, (AttributeReference("id", T.LONG, False),))


def test_distinct_keys_of_operators():
    r = _rng(10)
    (a,) = r.output
    cnt = Alias(AggregateExpression(Count((Literal(1, T.INT),))), "c")
    agg = Aggregate((a,), (a, cnt), r)
    assert distinct_keys(r) == frozenset()
    assert distinct_keys(agg) == {frozenset({a.id})}
    # grouping by a, a+1 with an alias for a+1: {a, a+1} maps to {a, h}; child key {a} of an
    # inner aggregate makes the grouping set redundant.
    plus = Add(a, Literal(1, T.LONG))
    h = Alias(plus, "h")
    agg2 = Aggregate((a, plus), (a, h), r)
    assert distinct_keys(agg2) == {frozenset({a.id, h.id})}
    agg3 = Aggregate((a, plus), (a, h), agg)
    assert distinct_keys(agg3) == {frozenset({a.id})}
    # projecting the key away loses it; renaming keeps both names' key sets
    assert distinct_keys(Project((cnt.to_attribute(),), agg)) == frozenset()
    kk = Alias(a, "kk")
    assert distinct_keys(Project((a, kk), agg)) == {frozenset({a.id}), frozenset({kk.id})}
    # a global aggregate: the empty key; DISTINCT: the whole output
    assert distinct_keys(Aggregate((), (cnt,), r)) == {frozenset()}
    assert distinct_keys(Distinct(r)) == {frozenset({a.id})}
    # LIMIT 1 / OFFSET leaving one row: every column alone
    assert distinct_keys(Limit(Literal(1, T.INT), r)) == {frozenset({a.id})}
    assert distinct_keys(Limit(Literal(2, T.INT), r)) == frozenset()
    off = Offset(Literal(1, T.INT), Limit(Literal(2, T.INT), r))
    assert max_rows(off) == 1 and distinct_keys(off) == {frozenset({a.id})}
    assert distinct_keys(agg, SQLConf(dict(_OFF))) == frozenset()


def test_distinct_keys_through_joins():
    r1, r2 = _rng(10), _rng(20)
    (a,), (b,) = r1.output, r2.output
    g1 = Aggregate((a,), (a,), r1)
    g2 = Aggregate((b,), (b,), r2)
    on = EqualTo(a, b)
    inner = Join(g1, g2, JoinType.INNER, on)
    assert distinct_keys(inner) == {frozenset({a.id}), frozenset({b.id})}
    # unique on the right keys: the left's keys survive an inner / left outer join
    assert distinct_keys(Join(g1, r2, JoinType.INNER, on)) == frozenset()
    assert distinct_keys(Join(r1, g2, JoinType.LEFT_OUTER, on)) == frozenset()
    assert distinct_keys(Join(g1, g2, JoinType.LEFT_OUTER, on)) == {frozenset({a.id})}
    assert distinct_keys(Join(g1, g2, JoinType.RIGHT_OUTER, on)) == {frozenset({b.id})}
    assert distinct_keys(Join(g1, g2, JoinType.FULL_OUTER, on)) == frozenset()
    assert distinct_keys(Join(g1, r2, JoinType.LEFT_SEMI, on)) == {frozenset({a.id})}
    # the size: sum for a unique side, product otherwise
    conf = SQLConf()
    assert plan_stats(Join(r2, g1, JoinType.INNER, EqualTo(b, a)), conf).size_in_bytes == \
        160 + 80
    assert plan_stats(Join(r2, r1, JoinType.INNER, EqualTo(b, a)), conf).size_in_bytes == \
        160 * 80
    assert plan_stats(Join(r2, g1, JoinType.CROSS, EqualTo(b, a)), conf).size_in_bytes == \
        160 * 80


# ---------------------------------------------------------------------------------------------
# TPC-H Q20 (SF 0.01): the static plan's join strategies equal Spark's

#: Spark 4.3's static plan (adaptive off) for Q20 at SF 0.01, join operators top-down.
Q20_SPARK = [("BroadcastHashJoin", "BuildRight", "Inner"),
             ("BroadcastHashJoin", "BuildRight", "LeftSemi"),
             ("BroadcastHashJoin", "BuildLeft", "Inner"),
             ("BroadcastHashJoin", "BuildRight", "LeftSemi"),
             ("BroadcastHashJoin", "BuildRight", "LeftSemi")]


@pytest.fixture(scope="module")
def tpch_paths(tmp_path_factory):
    pytest.importorskip("duckdb", reason="TPC-H data is generated with DuckDB")
    pytest.importorskip("duckdb_extension_tpch", reason="DuckDB's tpch extension generates it")
    from bench.tpch import datagen

    return datagen.generate(tmp_path_factory.mktemp("tpch_q20"), 0.01)


def _ember_q20_ops(paths) -> list[tuple]:
    from bench.tpch import datagen

    s = ember.Session({"spark.sql.adaptive.enabled": "false"})
    datagen.register_ember(s, paths)
    plan = s.sql(datagen.spark_queries()[20])._qe.executed_plan
    return [tuple(op) for op in join_ops(plan.tree_string())]


def test_q20_static_plan_broadcasts_like_spark(tpch_paths):
    assert _ember_q20_ops(tpch_paths) == Q20_SPARK


def test_q20_static_plan_against_spark(spark, tpch_paths):
    from bench.tpch import datagen

    session = spark.newSession()
    session.conf.set("spark.sql.adaptive.enabled", "false")
    datagen.register_ember(session, tpch_paths)
    tree = session.sql(datagen.spark_queries()[20])._jdf.queryExecution().executedPlan() \
        .treeString()
    assert [tuple(op) for op in join_ops(tree)] == Q20_SPARK == _ember_q20_ops(tpch_paths)
