"""StarSchemaDetection and its use by ReorderJoin."""

from __future__ import annotations

import pytest

import ember.optimizer.rules.star_schema as star_schema
from ember.conf import SQLConf
from ember.optimizer.rules.reorder_join import ReorderJoin
from ember.optimizer.rules.star_schema import find_star_joins, reorder_star_joins
from ember.plans.logical.dsl import and_, attr, eq, gt, relation
from ember.plans.logical.join_type import JoinType
from ember.plans.logical.nodes import Filter, Join

from .join_stats import exact_stats, no_column_stats

STAR_ON = {"spark.sql.cbo.starSchemaDetection": "true"}


@pytest.fixture(autouse=True)
def _exact_stats(monkeypatch):
    monkeypatch.setattr(star_schema, "STATS_PROVIDER", exact_stats)


def _schema(dim_dup: bool = False, fact_rows: int = 1000):
    f = relation("f", [(i % 10, i % 20, i % 50, i) for i in range(fact_rows)],
                 k1="int", k2="int", k3="int", v="int")
    d1 = relation("d1", [((i % 5) if dim_dup else i, i) for i in range(10)], k="int", x="int")
    d2 = relation("d2", [(i, i) for i in range(20)], k="int", x="int")
    d3_base = relation("d3", [(i, i) for i in range(50)], k="int", x="int")
    d3 = Filter(gt(attr(d3_base, "x"), 25), d3_base)
    conds = [eq(attr(f, "k1"), attr(d1, "k")), eq(attr(f, "k2"), attr(d2, "k")),
             eq(attr(f, "k3"), attr(d3_base, "k"))]
    return f, d1, d2, d3, conds


def test_find_star_joins_fact_first_then_dims_by_descending_cardinality():
    f, d1, d2, d3, conds = _schema()
    conf = SQLConf(STAR_ON)
    assert find_star_joins([d1, f, d2, d3], conds, conf) == [f, d3, d2, d1]


def test_reorder_star_joins_dims_by_ascending_cardinality_inner_only():
    f, d1, d2, d3, conds = _schema()
    conf = SQLConf(STAR_ON)
    items = [(d1, JoinType.INNER), (f, JoinType.INNER), (d2, JoinType.INNER),
             (d3, JoinType.INNER)]
    assert reorder_star_joins(items, conds, conf) == [
        (f, JoinType.INNER), (d1, JoinType.INNER), (d2, JoinType.INNER), (d3, JoinType.INNER)]
    # an explicit cross-join item is not a candidate: with d2 excluded one dim too few? no --
    # two dims remain (d1, d3), still a star
    items_x = [(d1, JoinType.INNER), (f, JoinType.INNER), (d2, JoinType.CROSS),
               (d3, JoinType.INNER)]
    assert [p for p, _ in reorder_star_joins(items_x, conds, conf)] == [f, d1, d3]


def test_no_star_without_selective_dimension():
    f, d1, d2, d3, conds = _schema()
    d3_plain = d3.child  # no local predicate anywhere
    items = [(d1, JoinType.INNER), (f, JoinType.INNER), (d2, JoinType.INNER),
             (d3_plain, JoinType.INNER)]
    assert reorder_star_joins(items, conds, SQLConf(STAR_ON)) == []


def test_no_star_when_top_tables_are_comparable():
    f, d1, d2, d3, conds = _schema(fact_rows=52)  # 52 vs 50 rows of d3: ratio > 0.9
    d3_leaf = d3.child
    assert find_star_joins([f, d1, d2, d3_leaf], conds, SQLConf(STAR_ON)) == []


def test_non_unique_dimension_key_is_not_a_dimension():
    f, d1, d2, d3, conds = _schema(dim_dup=True)
    assert find_star_joins([f, d1, d2, d3], conds, SQLConf(STAR_ON)) == [f, d3, d2]


def test_no_star_without_column_statistics(monkeypatch):
    monkeypatch.setattr(star_schema, "STATS_PROVIDER", no_column_stats)
    f, d1, d2, d3, conds = _schema()
    assert find_star_joins([f, d1, d2, d3], conds, SQLConf(STAR_ON)) == []


def test_no_star_when_an_item_is_not_a_base_table_access():
    f, d1, d2, d3, conds = _schema()
    joined = Join(d1, d2, JoinType.CROSS)
    assert find_star_joins([f, joined, d3], conds, SQLConf(STAR_ON)) == []


def _query():
    f, d1, d2, d3, conds = _schema()
    plan = d1.join(f).join(d2).join(d3).where(and_(*conds))
    return plan, f, d1, d2, d3, conds


def test_reorder_join_uses_star_order_when_enabled_and_cbo_off():
    plan, f, d1, d2, d3, conds = _query()
    out = ReorderJoin()(plan, SQLConf(STAR_ON))
    inner = out.child  # Project restoring the column order
    # fact first, then the dimensions (smallest first)
    assert inner.left.left.left is f and inner.left.left.right is d1
    assert inner.left.right is d2 and inner.right is d3
    assert [a.id for a in out.output] == [a.id for a in plan.output]


def test_reorder_join_ignores_star_when_cbo_on_or_detection_off():
    plan, f, d1, *_ = _query()
    for conf in (SQLConf(), SQLConf({**STAR_ON, "spark.sql.cbo.enabled": "true"})):
        out = ReorderJoin()(plan, conf)
        j = out
        while not isinstance(j, Join) or isinstance(j.left, Join):
            j = j.children[0]
        assert j.left is d1 and j.right is f
