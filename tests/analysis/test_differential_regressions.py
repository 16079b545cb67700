"""Regressions found by the random differential suite (tests/differential); expected values are
PySpark 4 results, encoded as literals."""

from __future__ import annotations

import ember


def _rows(sql: str) -> list[tuple]:
    return [tuple(r.values()) for r in ember.Session().sql(sql).to_arrow().to_pylist()]


def test_order_by_count_star_over_group_by():
    # count(*) has no column reference: ResolveFunctions resolves it on its own, and it must still
    # become a (hidden) output of the Aggregate instead of reaching the Sort unevaluable.
    assert _rows("SELECT k, count(*) AS c FROM VALUES (1),(1),(2),(3),(3),(3) t(k) "
                 "GROUP BY k ORDER BY count(*) DESC") == [(3, 3), (1, 2), (2, 1)]
    assert _rows("SELECT k, sum(v) FROM VALUES (1, 5),(1, 1),(2, 2) t(k, v) GROUP BY k "
                 "ORDER BY max(v) + count(*)") == [(2, 2), (1, 6)]


def test_order_by_aggregate_through_having_filter():
    assert _rows("SELECT abs(k) AS g, count(k) AS a FROM VALUES (1),(-1),(2),(NULL) t(k) "
                 "GROUP BY abs(k) HAVING count(k) IS NOT NULL ORDER BY count(k) DESC, 1") == [
        (1, 2), (2, 1), (None, 0)]


def test_join_after_comma_applies_to_the_whole_product():
    # Spark's visitFromClause: FROM a, b RIGHT JOIN c == (a CROSS b) RIGHT JOIN c.
    assert _rows("SELECT * FROM (VALUES (1),(2)) a(x), (VALUES (3),(4)) b(y) "
                 "RIGHT JOIN (VALUES (5)) c(z) ON a.x = 1 ORDER BY y") == [(1, 3, 5), (1, 4, 5)]
    assert _rows("SELECT * FROM (VALUES (1)) a(x), (VALUES (3)) b(y) "
                 "RIGHT JOIN (VALUES (5)) c(z) ON a.x = 2") == [(None, None, 5)]


def test_in_subquery_without_a_common_type_is_a_data_type_mismatch():
    import pytest

    from ember.errors import AnalysisError

    with pytest.raises(AnalysisError) as e:
        _rows("SELECT k FROM VALUES (1) a(k) WHERE k NOT IN (SELECT d FROM VALUES (DATE'2020-01-01') b(d))")
    assert e.value.error_class == "DATATYPE_MISMATCH.IN_SUBQUERY_DATA_TYPE_MISMATCH"
    assert "Mismatched columns: [(a.k:int, b.d:date)], left side: [int], right side: [date]." in str(e.value)


def test_in_subquery_column_names_omit_implicit_casts_and_use_named_struct():
    def names(sql: str) -> list[str]:
        return ember.Session().sql(sql).to_arrow().column_names

    assert names("SELECT k IN (SELECT s FROM VALUES ('1') b(s)) FROM VALUES (1) a(k)") == [
        "(k IN (listquery()))"]
    assert names("SELECT (k, k + 1) IN (SELECT 1, 2) FROM VALUES (1) a(k)") == [
        "(named_struct('k', k, '_1', (k + 1)) IN (listquery()))"]
