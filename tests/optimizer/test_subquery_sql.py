"""End to end through ``ember.Session``: SQL with subqueries, rows from PySpark 4.3 goldens
(count.sql, not-in-unit-tests-multi-column.sql, group-by-filter.sql) and extra Spark runs."""

from __future__ import annotations

import pytest

ember = pytest.importorskip("ember")


@pytest.fixture(scope="module")
def session():
    if not hasattr(ember, "Session"):
        pytest.skip("ember.Session not available")
    s = ember.Session()
    for stmt in (
        "CREATE OR REPLACE TEMP VIEW t1(a1, a2) AS VALUES (0, 1), (1, 2)",
        "CREATE OR REPLACE TEMP VIEW t2(b1, b2) AS VALUES (0, 2), (0, 3)",
        "CREATE OR REPLACE TEMP VIEW t3(c1, c2) AS VALUES (0, 2), (0, 3)",
        "CREATE OR REPLACE TEMP VIEW m AS SELECT * FROM VALUES (null, null), (null, 1.0), "
        "(2, 3.0), (4, 5.0) AS m(a, b)",
        "CREATE OR REPLACE TEMP VIEW s AS SELECT * FROM VALUES (null, null), (0, 1.0), "
        "(2, 3.0), (4, null) AS s(c, d)",
    ):
        s.sql(stmt).to_arrow()
    return s


def rows(session, sql):
    t = session.sql(sql).to_arrow()
    return [tuple(r) for r in zip(*[c.to_pylist() for c in t.columns])]


@pytest.mark.parametrize("sql,expected", [
    ("select (select sum(cnt) from (select count(*) cnt from t2 where t1.a1 = t2.b1)) a "
     "from t1 order by a desc", [(2,), (0,)]),
    ("select (select count(*) from (select count(*) cnt from t2 where t1.a1 = t2.b1)) a "
     "from t1 order by a desc", [(1,), (1,)]),
    ("select (select SUM(l.cnt + r.cnt) "
     "from (select count(*) cnt from t2 where t1.a1 = t2.b1 having cnt = 0) l "
     "join (select count(*) cnt from t3 where t1.a1 = t3.c1 having cnt = 0) r "
     "on l.cnt = r.cnt) a from t1 order by a desc", [(0,), (None,)]),
    ("select (select sum(l.cnt + r.cnt) "
     "from (select count(*) cnt from t2 where t1.a1 = t2.b1) l "
     "join (select count(*) cnt from t3 where t1.a1 = t3.c1) r "
     "on l.cnt = r.cnt) a from t1 order by a desc", [(4,), (0,)]),
])
def test_count_sql_count_bug_queries(session, sql, expected):
    assert rows(session, sql) == expected


@pytest.mark.parametrize("where,expected", [
    ("b = 1.0 AND (a, b) NOT IN (SELECT * FROM s WHERE c IS NOT NULL)", []),
    ("b = 1.0 AND (a, b) NOT IN (SELECT * FROM s WHERE c = 2)", [(None, 1.0)]),
    ("(a, b) NOT IN (SELECT * FROM s WHERE c IS NULL AND d IS NULL)", []),
])
def test_multi_column_not_in(session, where, expected):
    got = [(a, None if b is None else float(b)) for a, b in rows(session, f"SELECT * FROM m WHERE {where}")]
    assert got == expected


def test_scalar_subquery_too_many_rows(session):
    from ember.errors import EmberError

    with pytest.raises(EmberError) as e:
        rows(session, "SELECT (SELECT c FROM s)")
    assert e.value.error_class == "SCALAR_SUBQUERY_TOO_MANY_ROWS"
