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


@pytest.fixture(scope="module")
def parquet_session(tmp_path_factory):
    """Parquet sources: no ConvertToLocalRelation folds the derived tables' Projects away."""
    pa = pytest.importorskip("pyarrow")
    pq = pytest.importorskip("pyarrow.parquet")
    d = tmp_path_factory.mktemp("corr")
    pq.write_table(pa.table({"k": pa.array([1, 2, 3, None, 5], pa.int64()),
                             "w": pa.array([10, 20, 30, 40, 50], pa.int64())}), d / "o.parquet")
    pq.write_table(pa.table({"k": pa.array([1, 1, 3, 4, 6, None], pa.int64()),
                             "v": pa.array([5, 15, 35, 45, 1, 2], pa.int64())}), d / "i.parquet")
    s = ember.Session()
    s.sql(f"CREATE TEMP VIEW o USING parquet OPTIONS (path '{d / 'o.parquet'}')")
    s.sql(f"CREATE TEMP VIEW i USING parquet OPTIONS (path '{d / 'i.parquet'}')")
    return s


# The subqueries read a column the derived table computes: pushing the filter below, or
# collapsing the Projects, must not leave the subquery's outer reference dangling.
# Rows from PySpark 4.3 on the same Parquet files.
@pytest.mark.parametrize("sql,expected", [
    ("SELECT s.k, s.w FROM (SELECT IF(w = 30, NULL, k) AS k, w FROM o) s "
     "WHERE EXISTS (SELECT 1 FROM i WHERE i.k = s.k) ORDER BY s.w", [(1, 10)]),
    ("SELECT s.k, s.w FROM (SELECT k + 1 AS k, w FROM o) s "
     "WHERE NOT EXISTS (SELECT 1 FROM i WHERE i.k = s.k AND i.v > s.w) AND s.w > 10 "
     "ORDER BY s.w", [(None, 40), (6, 50)]),
    ("SELECT s.k2, s.w FROM (SELECT k * 2 AS k2, w FROM o) s "
     "WHERE s.k2 IN (SELECT i.k FROM i WHERE i.v < s.w) ORDER BY s.w", [(6, 30)]),
    ("SELECT s.k, (SELECT max(v) FROM i WHERE i.k = s.k) AS m "
     "FROM (SELECT k - 1 AS k, w FROM o) s ORDER BY s.w",
     [(0, None), (1, 15), (2, None), (None, None), (4, 45)]),
])
def test_correlated_subquery_over_derived_table_aliases(parquet_session, sql, expected):
    assert rows(parquet_session, sql) == expected
