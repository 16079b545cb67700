"""SQL through the planner (``ember.planning.plan_query``) and the local runtime gives DuckDB's rows
for the same data and query, under several join strategies and batch sizes."""

from __future__ import annotations

import pytest

import ember
from ember.runtime.local import LocalRuntime, explain_analyzed

duckdb = pytest.importorskip("duckdb")

plan_query = pytest.importorskip("ember.planning.planner").plan_query

QUERIES = [
    "select k, count(*), sum(d) from t group by k",
    "select * from t order by k desc nulls last, s",
    "select * from t join u on t.k = u.k",
    "select * from t left join u on t.k = u.k and u.v > 10",
    "select * from t full join u on t.k = u.k",
    "select * from t where k not in (select k from u where k is not null)",
    "select k from t intersect all select k from u",
    "select k from t except select k from u",
    "select distinct k from t",
    "select * from t order by d, k limit 2",
    "select count(*), max(s) from t",
    "select k, count(distinct s) from t group by k",
    "select k, sum(v) from t join u using (k) group by k order by k",
    "select k, s from t where s > (select min(s) from t)",
]

CONFS = [
    {},
    {"spark.sql.autoBroadcastJoinThreshold": "-1", "ember.execution.batchSize": "2",
     "ember.execution.adaptive.shuffledHashJoin.enabled": "false"},
    {"spark.sql.autoBroadcastJoinThreshold": "-1", "ember.execution.batchSize": "2"},
    {"spark.sql.autoBroadcastJoinThreshold": "-1", "spark.sql.join.preferSortMergeJoin": "false",
     "spark.sql.shuffle.partitions": "7",
     "ember.execution.coalescePartitions.enabled": "false"},
]


T_ROWS = "(1,'a',1.5),(2,'b',2.5),(3,null,null),(1,'c',4.0),(null,'d',0.0)"
U_ROWS = "(1,10),(2,20),(2,21),(5,50),(null,0)"


@pytest.fixture(scope="module")
def session():
    s = ember.Session()
    s.sql(f"create temp view t as select * from values {T_ROWS} as t(k,s,d)")
    s.sql(f"create temp view u as select * from values {U_ROWS} as u(k,v)")
    return s


@pytest.fixture(scope="module")
def duck():
    """The same views in DuckDB, NULLs sorting first as in Spark."""
    con = duckdb.connect()
    con.execute("SET default_null_order='nulls_first'")
    con.execute(f"create view t as select * from (values {T_ROWS}) as t(k,s,d)")
    con.execute(f"create view u as select * from (values {U_ROWS}) as u(k,v)")
    yield con
    con.close()


@pytest.mark.parametrize("extra", CONFS, ids=["default", "smj-bs2", "smj-as-hash-bs2", "shj-7parts"])
@pytest.mark.parametrize("query", QUERIES)
def test_same_rows_as_duckdb(session, duck, query, extra):
    qe = session.sql(query)._qe
    conf = session.conf._conf.copy()
    conf.set("ember.execution.progress.enabled", "false")
    for k, v in extra.items():
        conf.set(k, v)
    opt = qe.optimized
    phys = plan_query(opt, conf)
    with LocalRuntime(conf) as rt:
        table = rt.collect(phys)
        text = explain_analyzed(phys, rt.metrics)
    got = list(zip(*(c.to_pylist() for c in table.columns)))
    expected = duck.execute(query).fetchall()
    if "order by" in query:
        assert got == expected
    else:
        assert sorted(map(str, got)) == sorted(map(str, expected))
    assert f"rows={len(got)}" in text.splitlines()[0]
