"""RewriteDistinctAggregates: the three cases of seed 003 on the seed's ``data`` view, plus the
firing conditions of Spark's rule and the plan text Spark 4.3 prints.

Each seed case checks the rewritten plan's three operators separately: the Expand subplan, the
first Aggregate subplan and the final Aggregate are executed and their rows compared (as bags)
with the rows the seed lists (or derives, for the cases where it gives only the SQL shape).
The final rows were taken from PySpark 4.3 runs (``spark.sql.adaptive.enabled=false``); the
tests marked ``spark`` re-run a set of queries against the live oracle.
"""

from __future__ import annotations

import re
from collections import Counter

import pytest

from ember.conf import SQLConf
from ember.expressions.aggregates import AggregateExpression
from ember.optimizer.rule_executor import Batch, ONCE, RuleExecutor
from ember.optimizer.rules.rewrite_distinct_aggregates import (
    RewriteDistinctAggregates,
    qualified_sql,
)
from ember.plans.logical.nodes import Aggregate, Expand, LogicalPlan
from tests.local_run import run_plan

DATA = [
    ("a", "ca1", "cb1", 0, 10),
    ("a", "ca1", "cb2", 2, 5),
    ("b", "ca1", "cb1", 2, 13),
    ("b", "ca1", "cb1", 4, 17),
    ("b", "ca1", "cb3", 5, 2),
    ("c", "ca1", "cb2", 4, 3),
]

DATA_VIEW = (
    "create or replace temp view data(key, cat1, cat2, id, value) as values "
    + ", ".join(f"('{k}', '{c1}', '{c2}', {i}, {v})" for k, c1, c2, i, v in DATA)
)


@pytest.fixture(scope="module")
def session():
    import ember

    s = ember.Session()
    s.sql(DATA_VIEW).to_arrow()
    s.sql("create or replace temp view empty_data as select * from data where id > 100").to_arrow()
    s.sql("create or replace temp view n(k, x, y) as values (1, 1, null), (1, 2, 2), "
          "(1, null, 2), (2, null, null), (2, 3, 3), (3, 1, 1)").to_arrow()
    return s


def rows(session, plan: LogicalPlan) -> list[tuple]:
    t = run_plan(plan, session.sql_conf)
    return list(zip(*[c.to_pylist() for c in t.columns]))


def bag(rs) -> Counter:
    return Counter(tuple(r) for r in rs)


def analyzed(session, sql: str) -> LogicalPlan:
    return session.sql(sql)._qe.analyzed


def rewrite(session, sql: str) -> tuple[LogicalPlan, LogicalPlan]:
    p = analyzed(session, sql)
    return p, RewriteDistinctAggregates()(p)


def parts(plan: LogicalPlan) -> tuple[Aggregate, Aggregate, Expand]:
    """The final Aggregate, the first Aggregate and the Expand of a rewritten plan."""
    second = plan.find(lambda p: isinstance(p, Aggregate))
    assert isinstance(second, Aggregate)
    first = second.child
    assert isinstance(first, Aggregate), second.tree_string()
    expand = first.child
    assert isinstance(expand, Expand), second.tree_string()
    return second, first, expand


def norm(s: str) -> str:
    """Plan text without expression ids (Spark's ``#12L`` / Ember's ``#12``)."""
    return re.sub(r"#\d+L?", "", s)


# ---------------------------------------------------------------------------------------------
# Seed 003, first case: several distinct aggregates + a regular one


CASE1 = ("select key, count(distinct cat1) as cat_cnt1, count(distinct cat2) as cat_cnt2, "
         "sum(value) as total from data group by key")


def test_case1_expand_first_and_final_rows(session):
    before, after = rewrite(session, CASE1)
    second, first, expand = parts(after)
    assert [a.name for a in expand.output] == ["key", "data.cat1", "data.cat2", "gid", "data.value"]
    # expand1 of the seed
    assert bag(rows(session, expand)) == bag(
        [(k, None, None, 0, v) for k, _, _, _, v in DATA]
        + [(k, c1, None, 1, None) for k, c1, _, _, _ in DATA]
        + [(k, None, c2, 2, None) for k, _, c2, _, _ in DATA])
    # agg1 of the seed
    assert bag(rows(session, first)) == bag([
        ("a", None, None, 0, 15), ("b", None, None, 0, 32), ("c", None, None, 0, 3),
        ("a", "ca1", None, 1, None), ("b", "ca1", None, 1, None), ("c", "ca1", None, 1, None),
        ("a", None, "cb1", 2, None), ("a", None, "cb2", 2, None), ("b", None, "cb1", 2, None),
        ("b", None, "cb3", 2, None), ("c", None, "cb2", 2, None),
    ])
    expected = [("c", 1, 1, 3), ("b", 1, 2, 32), ("a", 1, 2, 15)]  # the seed's / Spark's rows
    assert bag(rows(session, second)) == bag(expected)
    assert bag(rows(session, after)) == bag(expected)
    assert bag(rows(session, before)) == bag(expected)
    assert after.output == before.output


def test_case1_plan_text_matches_spark(session):
    _, after = rewrite(session, CASE1)
    second, first, expand = parts(after)
    # PySpark 4.3 optimized plan (EXPLAIN EXTENDED, AQE off), ids removed.
    assert norm(second.simple_string()) == norm(
        "Aggregate [key#18], [key#18, count(data.cat1#27) FILTER (WHERE (gid#26 = 1)) AS "
        "cat_cnt1#10L, count(data.cat2#28) FILTER (WHERE (gid#26 = 2)) AS cat_cnt2#11L, "
        "first(sum(data.value)#30L, true) FILTER (WHERE (gid#26 = 0)) AS total#12L]")
    assert norm(first.simple_string()) == norm(
        "Aggregate [key#18, data.cat1#27, data.cat2#28, gid#26], [key#18, data.cat1#27, "
        "data.cat2#28, gid#26, sum(data.value#29) AS sum(data.value)#30L]")
    assert norm(expand.simple_string()) == norm(
        "Expand [[key#18, null, null, 0, value#22], [key#18, cat1#19, null, 1, null], "
        "[key#18, null, cat2#20, 2, null]], [key#18, data.cat1#27, data.cat2#28, gid#26, "
        "data.value#29]")
    gid = expand.output[3]
    assert gid.name == "gid" and not gid.nullable and gid.data_type.simple_string() == "int"
    assert all(a.nullable for a in expand.output[1:3] + expand.output[4:])


def test_case1_without_regular_aggregate_has_no_gid0_projection(session):
    _, after = rewrite(session, "select key, count(distinct cat1) as cat_cnt1, "
                                "count(distinct cat2) as cat_cnt2 from data group by key")
    second, first, expand = parts(after)
    assert len(expand.projections) == 2
    assert bag(rows(session, after)) == bag([("c", 1, 1), ("b", 1, 2), ("a", 1, 2)])


def test_case1_two_regular_aggregates_both_in_group0(session):
    _, after = rewrite(session, "select key, count(distinct cat1) as cat_cnt1, count(distinct "
                                "cat2) as cat_cnt2, sum(value) as total, sum(id) as sum_id "
                                "from data group by key")
    second, first, expand = parts(after)
    assert [a.name for a in expand.output] == [
        "key", "data.cat1", "data.cat2", "gid", "data.value", "data.id"]
    assert bag(rows(session, expand)) == bag(
        [(k, None, None, 0, v, i) for k, _, _, i, v in DATA]
        + [(k, c1, None, 1, None, None) for k, c1, _, _, _ in DATA]
        + [(k, None, c2, 2, None, None) for k, _, c2, _, _ in DATA])
    assert bag(rows(session, after)) == bag([("c", 1, 1, 3, 4), ("b", 1, 2, 32, 11),
                                             ("a", 1, 2, 15, 2)])


def test_same_expression_distinct_and_regular(session):
    sql = ("select key, count(distinct cat1) as cat_cnt1, count(distinct cat2) as cat_cnt2, "
           "sum(value) as total, max(cat2) as max_cat2 from data group by key")
    _, after = rewrite(session, sql)
    second, first, expand = parts(after)
    names = [a.name for a in expand.output]
    assert names == ["key", "data.cat1", "data.cat2", "gid", "data.value", "data.cat2"]
    # cat2 sits in position 2 for gid 2 and in position 5 for gid 0 (two different columns)
    assert expand.output[2].id != expand.output[5].id
    assert bag(rows(session, expand)) == bag(
        [(k, None, None, 0, v, c2) for k, _, c2, _, v in DATA]
        + [(k, c1, None, 1, None, None) for k, c1, _, _, _ in DATA]
        + [(k, None, c2, 2, None, None) for k, _, c2, _, _ in DATA])
    assert bag(rows(session, first)) == bag([
        ("a", None, None, 0, 15, "cb2"), ("b", None, None, 0, 32, "cb3"),
        ("c", None, None, 0, 3, "cb2"),
        ("a", "ca1", None, 1, None, None), ("b", "ca1", None, 1, None, None),
        ("c", "ca1", None, 1, None, None),
        ("a", None, "cb1", 2, None, None), ("a", None, "cb2", 2, None, None),
        ("b", None, "cb1", 2, None, None), ("b", None, "cb3", 2, None, None),
        ("c", None, "cb2", 2, None, None),
    ])
    # PySpark 4.3
    assert bag(rows(session, after)) == bag([("a", 1, 2, 15, "cb2"), ("c", 1, 1, 3, "cb2"),
                                             ("b", 1, 2, 32, "cb3")])
    assert norm(first.simple_string()) == norm(
        "Aggregate [key#58, data.cat1#68, data.cat2#69, gid#67], [key#58, data.cat1#68, "
        "data.cat2#69, gid#67, sum(data.value#70) AS sum(data.value)#72L, max(data.cat2#71) AS "
        "max(data.cat2)#74]")
    assert norm(second.simple_string()).endswith(norm(
        "first(max(data.cat2)#74, true) FILTER (WHERE (gid#67 = 0)) AS max_cat2#52]"))


# ---------------------------------------------------------------------------------------------
# Seed 003, second case: a regular aggregate with a FILTER (its columns go to group 0)


CASE2 = ("select key, count(distinct cat1) as cat1_cnt, count(distinct cat2) as cat2_cnt, "
         "sum(value) filter (where id > 1) as total from data group by key")


def test_case2_expand_first_and_final_rows(session):
    before, after = rewrite(session, CASE2)
    second, first, expand = parts(after)
    assert [a.name for a in expand.output] == [
        "key", "data.cat1", "data.cat2", "gid", "data.value", "data.id"]
    assert bag(rows(session, expand)) == bag(
        [(k, None, None, 0, v, i) for k, _, _, i, v in DATA]
        + [(k, c1, None, 1, None, None) for k, c1, _, _, _ in DATA]
        + [(k, None, c2, 2, None, None) for k, _, c2, _, _ in DATA])
    assert bag(rows(session, first)) == bag([
        ("a", None, None, 0, 5), ("b", None, None, 0, 32), ("c", None, None, 0, 3),
        ("a", "ca1", None, 1, None), ("b", "ca1", None, 1, None), ("c", "ca1", None, 1, None),
        ("a", None, "cb1", 2, None), ("a", None, "cb2", 2, None), ("b", None, "cb1", 2, None),
        ("b", None, "cb3", 2, None), ("c", None, "cb2", 2, None),
    ])
    expected = [("a", 1, 2, 5), ("c", 1, 1, 3), ("b", 1, 2, 32)]  # PySpark 4.3
    assert bag(rows(session, after)) == bag(expected)
    assert bag(rows(session, before)) == bag(expected)
    # The regular FILTER reads the fresh copy of id, named as Spark names it.
    op = first.aggregate_expressions[-1]
    assert op.name == "sum(data.value) FILTER (WHERE (data.id > 1))"
    assert op.child.filter.references == frozenset({expand.output[5].id})
    assert norm(second.aggregate_expressions[-1].simple_string()) == norm(
        "first(sum(data.value) FILTER (WHERE (data.id > 1))#125L, true) FILTER (WHERE "
        "(gid#120 = 0)) AS total#106L")


# ---------------------------------------------------------------------------------------------
# Seed 003, third case: DISTINCT with FILTER


CASE3 = ("select key, count(distinct cat1) filter (where id > 1) as cat1_cnt, "
         "count(distinct cat2) filter (where id > 2) as cat2_cnt, "
         "sum(value) filter (where id > 3) as total from data group by key")


def test_case3_expand_first_and_final_rows(session):
    before, after = rewrite(session, CASE3)
    second, first, expand = parts(after)
    assert [a.name for a in expand.output] == [
        "key", "data.cat1", "data.cat2", "gid", "(data.id > 1)", "(data.id > 2)", "data.value",
        "data.id"]
    assert bag(rows(session, expand)) == bag(
        [(k, None, None, 0, None, None, v, i) for k, _, _, i, v in DATA]
        + [(k, c1, None, 1, i > 1, None, None, None) for k, c1, _, i, _ in DATA]
        + [(k, None, c2, 2, None, i > 2, None, None) for k, _, c2, i, _ in DATA])
    # key, cat1, cat2, gid, max_cond1, max_cond2, total
    assert bag(rows(session, first)) == bag([
        ("a", None, None, 0, None, None, None), ("b", None, None, 0, None, None, 19),
        ("c", None, None, 0, None, None, 3),
        ("a", "ca1", None, 1, True, None, None), ("b", "ca1", None, 1, True, None, None),
        ("c", "ca1", None, 1, True, None, None),
        ("a", None, "cb1", 2, None, False, None), ("a", None, "cb2", 2, None, False, None),
        ("b", None, "cb1", 2, None, True, None), ("b", None, "cb3", 2, None, True, None),
        ("c", None, "cb2", 2, None, True, None),
    ])
    expected = [("a", 1, 0, None), ("c", 1, 1, 3), ("b", 1, 2, 19)]  # PySpark 4.3
    assert bag(rows(session, second)) == bag(expected)
    assert bag(rows(session, before)) == bag(expected)


def test_case3_plan_text_matches_spark(session):
    _, after = rewrite(session, CASE3)
    second, first, expand = parts(after)
    assert norm(second.simple_string()) == norm(
        "Aggregate [key#152], [key#152, count(data.cat1#161) FILTER (WHERE ((gid#160 = 1) AND "
        "(data.id > 1)#165)) AS cat1_cnt#144L, count(data.cat2#162) FILTER (WHERE ((gid#160 = 2) "
        "AND (data.id > 2)#168)) AS cat2_cnt#145L, first(sum(data.value) FILTER (WHERE "
        "(data.id > 3))#171L, true) FILTER (WHERE (gid#160 = 0)) AS total#146L]")
    assert norm(first.simple_string()) == norm(
        "Aggregate [key#152, data.cat1#161, data.cat2#162, gid#160], [key#152, data.cat1#161, "
        "data.cat2#162, gid#160, max((data.id > 1)#163) AS (data.id > 1)#165, max((data.id > "
        "2)#166) AS (data.id > 2)#168, sum(data.value#169) FILTER (WHERE (data.id#170 > 3)) AS "
        "sum(data.value) FILTER (WHERE (data.id > 3))#171L]")
    assert norm(expand.simple_string()) == norm(
        "Expand [[key#152, null, null, 0, null, null, value#156, id#155], [key#152, cat1#153, "
        "null, 1, (id#155 > 1), null, null, null], [key#152, null, cat2#154, 2, null, "
        "(id#155 > 2), null, null]], [key#152, data.cat1#161, data.cat2#162, gid#160, "
        "(data.id > 1)#163, (data.id > 2)#166, data.value#169, data.id#170]")


def test_case3_single_distinct_with_filter_is_rewritten(session):
    before, after = rewrite(session, "select key, count(distinct cat1) filter (where id > 1) "
                                     "as cat1_cnt from data group by key")
    second, first, expand = parts(after)
    assert norm(expand.simple_string()) == norm(
        "Expand [[key#206, cat1#207, 1, (id#209 > 1)]], [key#206, data.cat1#213, gid#212, "
        "(data.id > 1)#214]")
    assert norm(second.simple_string()) == norm(
        "Aggregate [key#206], [key#206, count(data.cat1#213) FILTER (WHERE ((gid#212 = 1) AND "
        "(data.id > 1)#216)) AS cat1_cnt#200L]")
    assert bag(rows(session, after)) == bag([("a", 1), ("b", 1), ("c", 1)])


# ---------------------------------------------------------------------------------------------
# When it fires


@pytest.mark.parametrize("sql", [
    "select key, count(distinct cat1) from data group by key",
    "select key, count(distinct id), sum(distinct id) from data group by key",
    "select key, count(distinct cat1), sum(value) filter (where id > 1) from data group by key",
    "select key, count(distinct cat1, cat2), count(distinct cat2, cat1) from data group by key",
    "select count(distinct cat1), max(value) from data",
    "select key, sum(value) filter (where id > 1) from data group by key",
    "select key, count(distinct 1) from data group by key",  # foldable, but grouped
    "select key from data group by key",
])
def test_not_fired(session, sql):
    p = analyzed(session, sql)
    assert RewriteDistinctAggregates()(p) is p


@pytest.mark.parametrize("sql", [
    "select count(distinct 1) from data",
    "select count(distinct 1) from empty_data",
    "select count(distinct cat1) filter (where id > 1) from data",
    "select count(distinct cat1), count(distinct cat2) from data",
    "select sum(distinct id), count(distinct cat1) filter (where id > 0) from data",
])
def test_fired(session, sql):
    p = analyzed(session, sql)
    q = RewriteDistinctAggregates()(p)
    assert q is not p
    second, first, expand = parts(q)
    assert not any(isinstance(x, AggregateExpression) and x.is_distinct
                   for e in second.aggregate_expressions for x in e.collect(lambda y: y))
    assert q.output == p.output


def test_rule_metadata_and_executor(session):
    assert RewriteDistinctAggregates.rule_name == "RewriteDistinctAggregates"
    assert RewriteDistinctAggregates.excludable is False
    p = analyzed(session, CASE1)
    conf = SQLConf({"spark.sql.optimizer.excludedRules": "RewriteDistinctAggregates"})
    out = RuleExecutor([Batch("Distinct Aggregate Rewrite", ONCE,
                              (RewriteDistinctAggregates(),))]).execute(p, conf)
    parts(out)  # not excludable: rewritten anyway
    # Once rewritten, nothing is left to rewrite.
    assert RewriteDistinctAggregates()(out) is out


# ---------------------------------------------------------------------------------------------
# Global aggregates, foldable distinct arguments, expressions, several arguments


def test_count_distinct_one_global(session):
    _, after = rewrite(session, "select count(distinct 1) from data")
    second, first, expand = parts(after)
    assert norm(expand.simple_string()) == "Expand [[1, 1]], [1, gid]"
    assert norm(second.simple_string()) == norm(
        "Aggregate [count(1) FILTER (WHERE (gid#237 = 1)) AS count(DISTINCT 1)#236L]"
    ).replace("Aggregate [", "Aggregate [], [")
    assert rows(session, after) == [(1,)]
    _, after_empty = rewrite(session, "select count(distinct 1) from empty_data")
    assert rows(session, after_empty) == [(0,)]


def test_count_distinct_one_and_column(session):
    _, after = rewrite(session, "select count(distinct 1), count(distinct cat1) from data")
    second, first, expand = parts(after)
    assert norm(expand.simple_string()) == norm(
        "Expand [[1, null, 1], [null, cat1#247, 2]], [1#256, data.cat1#257, gid#255]")
    assert rows(session, after) == [(1, 1)]


def test_global_on_empty_input_uses_count_default(session):
    sql = ("select count(distinct cat1), count(distinct cat2), count(value), sum(value) "
           "from empty_data")
    before, after = rewrite(session, sql)
    second, _, _ = parts(after)
    assert "coalesce(first(count(empty_data.value), true) FILTER (WHERE (gid = 0)), 0)" in norm(second.simple_string())
    assert rows(session, after) == [(0, 0, 0, None)] == rows(session, before)


def test_global_multiple_args_and_count_star(session):
    sql = "select count(distinct cat1, cat2), sum(distinct id), count(*), count(id) from data"
    before, after = rewrite(session, sql)
    second, first, expand = parts(after)
    assert [a.name for a in expand.output] == [
        "data.cat1", "data.cat2", "data.id", "gid", "data.id"]
    assert norm(second.aggregate_expressions[0].simple_string()) == norm(
        "count(data.cat1#282, data.cat2#283) FILTER (WHERE (gid#281 = 1)) AS "
        "count(DISTINCT cat1, cat2)#277L")
    assert norm(second.aggregate_expressions[2].simple_string()) == norm(
        "coalesce(first(count(1)#285L, true) FILTER (WHERE (gid#281 = 0)), 0) AS count(1)#279L")
    assert rows(session, after) == [(3, 11, 6, 6)] == rows(session, before)  # PySpark 4.3


def test_count_distinct_multiple_args_with_nulls(session):
    sql = "select k, count(distinct x, y), count(distinct y), sum(x) from n group by k"
    before, after = rewrite(session, sql)
    parts(after)
    # PySpark 4.3: k=1 -> (1 distinct (x, y) pair without NULL, 1, 3); k=2 -> (1, 1, 3); k=3 -> (1, 1, 1)
    assert bag(rows(session, after)) == bag([(1, 1, 1, 3), (2, 1, 1, 3), (3, 1, 1, 1)])
    assert bag(rows(session, before)) == bag(rows(session, after))


def test_distinct_over_expressions(session):
    sql = ("select key, count(distinct id + 1), sum(distinct value), "
           "avg(value) filter (where id > 2), count(1) from data group by key")
    before, after = rewrite(session, sql)
    second, first, expand = parts(after)
    assert norm(expand.simple_string()) == norm(
        "Expand [[key#314, null, null, 0, value#318, id#317], [key#314, (id#317 + 1), null, 1, "
        "null, null], [key#314, null, value#318, 2, null, null]], [key#314, (data.id + 1)#328, "
        "data.value#329, gid#327, data.value#330, data.id#331]")
    assert norm(second.simple_string()) == norm(
        "Aggregate [key#314], [key#314, count((data.id + 1)#328) FILTER (WHERE (gid#327 = 1)) AS "
        "count(DISTINCT (id + 1))#323L, sum(data.value#329) FILTER (WHERE (gid#327 = 2)) AS "
        "sum(DISTINCT value)#324L, first(avg(data.value) FILTER (WHERE (data.id > 2))#332, true) "
        "FILTER (WHERE (gid#327 = 0)) AS avg(value) FILTER (WHERE (id > 2))#325, "
        "coalesce(first(count(1)#334L, true) FILTER (WHERE (gid#327 = 0)), 0) AS count(1)#326L]")
    expected = [("a", 2, 15, None, 2), ("c", 1, 3, 3.0, 1), ("b", 3, 32, 9.5, 3)]  # PySpark 4.3
    assert bag(rows(session, after)) == bag(expected) == bag(rows(session, before))


def test_grouping_expression_gets_its_own_attribute(session):
    sql = ("select upper(key), count(distinct cat1), count(distinct cat2) from data "
           "group by upper(key)")
    before, after = rewrite(session, sql)
    second, first, expand = parts(after)
    assert expand.output[0].name == "upper(data.key)"
    assert second.grouping_expressions == (expand.output[0],)
    assert bag(rows(session, after)) == bag([("A", 1, 2), ("B", 1, 2), ("C", 1, 1)])


def test_qualified_sql():
    from ember import types as T
    from ember.expressions.base import AttributeReference, Literal
    from ember.expressions.predicates import GreaterThan

    a = AttributeReference("id", T.INT, attr_qualifier=("data",))
    assert qualified_sql(GreaterThan(a, Literal(1, T.INT))) == "(data.id > 1)"
    assert qualified_sql(AttributeReference("a b", T.INT, attr_qualifier=("t",))) == "t.`a b`"
    assert qualified_sql(AttributeReference("x", T.INT)) == "x"


# ---------------------------------------------------------------------------------------------
# Against the live oracle


SPARK_QUERIES = [
    CASE1,
    CASE2,
    CASE3,
    "select key, count(distinct cat1) as c1, count(distinct cat2) as c2, sum(value) as total, "
    "max(cat2) as m from data group by key",
    "select count(distinct 1), count(distinct cat1) from data",
    "select count(distinct cat1, cat2), sum(distinct id), count(*), count(id) from data",
    "select key, count(distinct id + 1), sum(distinct value), avg(value) filter (where id > 2), "
    "count(1) from data group by key",
    "select count(distinct cat1), count(distinct cat2), count(value) from data where id > 100",
    "select k, count(distinct x, y), count(distinct y) filter (where x > 1), sum(x), "
    "count(x) filter (where y is null) from n group by k",
    "select count(distinct x) filter (where k > 1), count(distinct 1) filter (where y > 1), "
    "count(*) from n",
]


def test_rows_equal_spark(session, spark):
    spark.sql(DATA_VIEW)
    spark.sql("create or replace temp view n(k, x, y) as values (1, 1, null), (1, 2, 2), "
              "(1, null, 2), (2, null, null), (2, 3, 3), (3, 1, 1)")
    for sql in SPARK_QUERIES:
        p = analyzed(session, sql)
        q = RewriteDistinctAggregates()(p)
        assert q is not p, sql
        expected = bag(tuple(r) for r in spark.sql(sql).collect())
        assert bag(rows(session, q)) == expected, sql


@pytest.mark.parametrize("sql", SPARK_QUERIES[:8])
def test_tiny_batches_same_rows_as_unrewritten(session, sql):
    """Optimized (rewritten) and unoptimized plans return the same rows, at batch size 2."""
    small_batches = SQLConf({"ember.execution.batchSize": 2})
    p = analyzed(session, sql)
    q = RewriteDistinctAggregates()(p)
    assert q is not p

    def bag_of(plan):
        t = run_plan(plan, small_batches)
        return bag(zip(*[c.to_pylist() for c in t.columns]))

    assert bag_of(q) == bag_of(p)
