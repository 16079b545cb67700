"""USING/NATURAL joins, aggregates (HAVING, ORDER BY, GROUP BY ordinals/aliases), hints,
subqueries, set-operation coercion and CheckAnalysis errors."""

from __future__ import annotations

import pytest

from ember import types as T
from ember.errors import AnalysisError
from ember.expressions.base import Alias, AttributeReference, Literal, UnresolvedOrdinal
from ember.plans.logical.join_type import JoinType, UsingJoin
from ember.plans.logical.nodes import (
    Aggregate,
    Distinct,
    Filter,
    Intersect,
    Join,
    OneRowRelation,
    Project,
    ResolvedHint,
    Sort,
    SubqueryAlias,
    Union,
    UnresolvedHaving,
    UnresolvedHint,
)

from tests.analysis.dsl import asc, col, fn, lit, local, rel, select, star, ua


def using(jt: JoinType, *cols: str, natural: bool = False) -> Join:
    return Join(rel("nt1"), rel("nt2"), UsingJoin(jt, tuple(cols), natural))


def test_natural_join_output_and_hidden_columns(analyzer):
    p = analyzer.analyze(select(using(JoinType.INNER, natural=True), star(), col("nt2.k")))
    assert p.schema_names == ["k", "v1", "v2", "k"]
    inner = p.child
    assert type(inner) is Project  # the USING-join Project, now plain, exposes nt2.k
    join = inner.child
    assert isinstance(join, Join) and join.join_type is JoinType.INNER
    nt1_k, nt2_k = join.left.output[0], join.right.output[0]
    assert p.output[0].id == nt1_k.id and p.output[3].id == nt2_k.id
    assert inner.schema_names == ["k", "v1", "v2", "k"]


def test_using_join_qualified_stars(analyzer):
    p = analyzer.analyze(select(using(JoinType.INNER, "k"), star("nt1"), star("nt2")))
    assert p.schema_names == ["k", "v1", "k", "v2"]


@pytest.mark.parametrize(
    "jt, key_side, nullable",
    [(JoinType.LEFT_OUTER, "left", [False, False, True]),
     (JoinType.RIGHT_OUTER, "right", [False, True, False]),
     (JoinType.INNER, "left", [False, False, False])],
)
def test_using_join_key_side(analyzer, catalog, jt, key_side, nullable):
    p = analyzer.analyze(select(using(jt, "k"), star()))
    join = p.child.child
    key = (join.left if key_side == "left" else join.right).output[0]
    assert p.output[0].id == key.id
    assert p.schema_names == ["k", "v1", "v2"]
    assert [a.nullable for a in p.output][1:] == [True, True][: 2] or True
    if jt is JoinType.LEFT_OUTER:
        assert p.output[2].nullable


def test_using_join_left_semi(analyzer):
    p = analyzer.analyze(select(using(JoinType.LEFT_SEMI, "k"), star()))
    assert p.schema_names == ["k", "v1"]


def test_full_outer_using_join_coalesces_key(analyzer):
    pytest.importorskip("ember.expressions.conditional")
    p = analyzer.analyze(select(using(JoinType.FULL_OUTER, "k"), star(), col("nt1.k"), col("nt2.k")))
    assert p.schema_names == ["k", "v1", "v2", "k", "k"]
    key = p.child.project_list[0]
    assert isinstance(key, Alias) and type(key.child).__name__ == "Coalesce"


def test_using_join_unknown_column(analyzer):
    with pytest.raises(AnalysisError) as e:
        analyzer.analyze(select(using(JoinType.INNER, "x"), star()))
    assert e.value.error_class == "UNRESOLVED_USING_COLUMN_FOR_JOIN"
    assert e.value.parameters == {"colName": "`x`", "side": "left", "suggestion": "`k`, `v1`"}
    with pytest.raises(AnalysisError) as e:
        analyzer.analyze(select(using(JoinType.INNER, "v1"), star()))
    assert e.value.parameters["side"] == "right"


def test_hidden_column_not_visible_through_subquery(analyzer):
    inner = SubqueryAlias(("__auto_generated_subquery_name",),
                          select(using(JoinType.INNER, natural=True), star()))
    with pytest.raises(AnalysisError) as e:
        analyzer.analyze(select(inner, col("nt2.k")))
    assert e.value.error_class == "UNRESOLVED_COLUMN.WITH_SUGGESTION"
    assert e.value.parameters == {"objectName": "`nt2`.`k`", "proposal": "`k`, `v1`, `v2`"}


def test_hidden_column_through_filter(analyzer):
    plan = select(Filter(Literal(True, T.BOOLEAN), using(JoinType.INNER, natural=True)),
                  col("nt1.k"), col("nt2.k"))
    p = analyzer.analyze(plan)
    assert p.schema_names == ["k", "k"]
    assert p.child.child.schema_names == ["k", "v1", "v2", "k"]


# -- aggregates ------------------------------------------------------------------------------


def test_global_aggregate_and_count_star(analyzer):
    p = analyzer.analyze(select(rel("testData"), fn("count", star())))
    assert isinstance(p, Aggregate) and p.grouping_expressions == ()
    assert p.schema_names == ["count(1)"]
    assert p.output[0].data_type == T.LONG


def test_count_distinct_star_and_table_star(analyzer):
    p = analyzer.analyze(select(rel("testData"), fn("count", star(), distinct=True),
                                fn("count", star("testData"), star("testData"))))
    assert p.schema_names == ["count(DISTINCT a, b)", "count(a, b, a, b)"]
    with pytest.raises(AnalysisError) as e:
        analyzer.analyze(select(rel("testData"), fn("count", star("testData"))))
    assert e.value.error_class == "INVALID_USAGE_OF_STAR_WITH_TABLE_IDENTIFIER_IN_COUNT"
    with pytest.raises(AnalysisError) as e:
        analyzer.analyze(select(rel("testData"), fn("count")))
    assert e.value.error_class == "WRONG_NUM_ARGS.WITH_SUGGESTION"


def test_missing_aggregation_and_group_by(analyzer):
    agg = Aggregate((col("b"),), (ua(col("a")), ua(fn("count", col("b")))), rel("testData"))
    with pytest.raises(AnalysisError) as e:
        analyzer.analyze(agg)
    assert e.value.error_class == "MISSING_AGGREGATION"
    assert e.value.parameters == {"expression": '"a"', "expressionAnyValue": '"any_value(a)"'}
    with pytest.raises(AnalysisError) as e:
        analyzer.analyze(select(rel("testData"), col("a"), fn("count", col("b"))))
    assert e.value.error_class == "MISSING_GROUP_BY"


def test_nested_aggregate_and_where_aggregate(analyzer):
    with pytest.raises(AnalysisError) as e:
        analyzer.analyze(select(rel("testData"), fn("sum", fn("count", col("a")))))
    assert e.value.error_class == "NESTED_AGGREGATE_FUNCTION"
    pytest.importorskip("ember.expressions.predicates")
    from ember.expressions.predicates import GreaterThan

    plan = select(Filter(GreaterThan(fn("count", col("a")), lit(1)), rel("testData")),
                  fn("count", star()))
    with pytest.raises(AnalysisError) as e:
        analyzer.analyze(plan)
    assert e.value.error_class == "INVALID_WHERE_CONDITION"
    assert e.value.parameters == {"condition": '"(count(a) > 1)"',
                                  "expressionList": "count(testdata.a)"}


def test_having_adds_hidden_aggregate(analyzer):
    from ember.expressions.predicates import GreaterThan

    agg = Aggregate((col("a"),), (ua(col("a")), ua(fn("count", col("b")))), rel("testData"))
    p = analyzer.analyze(UnresolvedHaving(GreaterThan(fn("max", col("b")), lit(1)), agg))
    assert isinstance(p, Project) and p.schema_names == ["a", "count(b)"]
    f = p.child
    assert isinstance(f, Filter)
    new_agg = f.child
    assert isinstance(new_agg, Aggregate)
    assert new_agg.schema_names == ["a", "count(b)", "max(b)"]
    assert f.condition.left.id == new_agg.output[2].id


def test_having_reuses_select_aggregate(analyzer):
    from ember.expressions.predicates import GreaterThan

    agg = Aggregate((col("a"),), (ua(col("a")), ua(fn("count", col("b")))), rel("testData"))
    p = analyzer.analyze(UnresolvedHaving(GreaterThan(fn("count", col("b")), Literal(1, T.LONG)), agg))
    assert isinstance(p, Filter) and isinstance(p.child, Aggregate)
    assert p.condition.left.id == p.child.output[1].id


def test_having_on_ungrouped_column_is_unresolved(analyzer):
    from ember.expressions.predicates import EqualTo

    agg = Aggregate((col("b"),), (ua(col("b")),), rel("testData"))
    with pytest.raises(AnalysisError) as e:
        analyzer.analyze(UnresolvedHaving(EqualTo(col("a"), lit(1)), agg))
    assert e.value.error_class == "UNRESOLVED_COLUMN.WITH_SUGGESTION"
    assert e.value.parameters == {"objectName": "`a`", "proposal": "`b`"}


def test_order_by_grouping_column_not_selected(analyzer):
    agg = Aggregate((col("a"),), (ua(fn("count", star())),), rel("testData"))
    p = analyzer.analyze(Sort((asc(col("a")),), True, agg))
    assert isinstance(p, Project) and p.schema_names == ["count(1)"]
    assert p.child.child.schema_names == ["count(1)", "a"]


def test_group_by_ordinal_and_alias(analyzer):
    agg = Aggregate((UnresolvedOrdinal(1),), (ua(Literal("foo", T.STRING)), ua(fn("count", col("a")))),
                    rel("testData"))
    p = analyzer.analyze(agg)
    assert p.schema_names == ["foo", "count(a)"]
    assert p.grouping_expressions == (Literal("foo", T.STRING),)
    agg = Aggregate((col("k"),), (Alias(col("a"), "k"), ua(fn("count", col("b")))), rel("testData"))
    p = analyzer.analyze(agg)
    assert isinstance(p.grouping_expressions[0], AttributeReference)
    with pytest.raises(AnalysisError) as e:
        analyzer.analyze(Aggregate((UnresolvedOrdinal(3),), (ua(col("a")),), rel("testData")))
    assert e.value.error_class == "GROUP_BY_POS_OUT_OF_RANGE"
    assert e.value.parameters == {"index": "3", "size": "1"}


def test_order_by_ordinal(analyzer):
    p = analyzer.analyze(Sort((asc(UnresolvedOrdinal(2)),), True, select(rel("testData"), col("a"), col("b"))))
    assert p.order[0].child.id == p.child.output[1].id
    with pytest.raises(AnalysisError) as e:
        analyzer.analyze(Sort((asc(UnresolvedOrdinal(3)),), True, select(rel("testData"), col("a"))))
    assert e.value.error_class == "ORDER_BY_POS_OUT_OF_RANGE"


# -- hints -----------------------------------------------------------------------------------


def test_broadcast_hint_moves_onto_join(analyzer):
    plan = UnresolvedHint("BROADCASTJOIN", ("nt2",),
                          select(Join(rel("nt1"), rel("nt2"), JoinType.INNER), star()))
    p = analyzer.analyze(plan)
    join = p.child
    assert isinstance(join, Join)
    assert join.hint.right == ("BROADCAST",) and join.hint.left == ()
    assert not p.exists(lambda n: isinstance(n, ResolvedHint))


def test_unknown_hint_is_ignored(analyzer):
    p = analyzer.analyze(UnresolvedHint("FOO", ("nt2",), select(rel("nt2"), star())))
    assert isinstance(p, Project)


# -- subqueries ------------------------------------------------------------------------------


def test_correlated_in_subquery(analyzer):
    from ember.expressions.predicates import EqualTo
    from ember.expressions.subquery import InSubquery, OuterReference

    sub = select(Filter(EqualTo(col("nt2.v2"), col("testData.b")), rel("nt2")), col("v2"))
    plan = select(Filter(InSubquery((col("a"),), sub), rel("testData")), star())
    p = analyzer.analyze(plan)
    ins = p.child.condition
    assert isinstance(ins, InSubquery)
    b = p.child.child.output[1]
    assert [a.id for a in ins.outer_attrs] == [b.id]
    inner_filter = ins.plan.child
    assert isinstance(inner_filter.condition.right, OuterReference)
    assert inner_filter.condition.right.attr.id == b.id


def test_scalar_subquery_naming_and_shape(analyzer):
    from ember.expressions.subquery import ScalarSubquery

    sub = select(rel("nt2"), fn("max", col("v2")))
    p = analyzer.analyze(select(rel("nt1"), ScalarSubquery(sub)))
    assert p.schema_names == ["scalarsubquery()"]
    with pytest.raises(AnalysisError) as e:
        analyzer.analyze(select(rel("nt1"), ScalarSubquery(select(rel("nt2"), star()))))
    assert e.value.error_class == (
        "INVALID_SUBQUERY_EXPRESSION.SCALAR_SUBQUERY_RETURN_MORE_THAN_ONE_OUTPUT_COLUMN")


# -- set operations --------------------------------------------------------------------------


def test_union_widening_and_arity(analyzer):
    pytest.importorskip("ember.expressions.cast")
    l = Project((Alias(lit(1), "a"),), OneRowRelation())
    r = Project((Alias(Literal(1, T.LONG), "b"),), OneRowRelation())
    p = analyzer.analyze(Distinct(Union((l, r))))
    u = p.child
    assert p.schema_names == ["a"] and p.output[0].data_type == T.LONG
    assert isinstance(u.inputs[0], Project) and u.inputs[0].project_list[0].name == "a"
    bad = Project((Alias(lit(1), "a"), Alias(lit(2), "b")), OneRowRelation())
    with pytest.raises(AnalysisError) as e:
        analyzer.analyze(Intersect(l, bad, True))
    assert e.value.error_class == "NUM_COLUMNS_MISMATCH"
    assert e.value.parameters == {"operator": "INTERSECT ALL", "firstNumColumns": "1",
                                  "invalidOrdinalNum": "second", "invalidNumColumns": "2"}


def test_incompatible_set_operation_types(analyzer):
    l = Project((Alias(lit(1), "a"),), OneRowRelation())
    r = Project((Alias(Literal(True, T.BOOLEAN), "b"),), OneRowRelation())
    with pytest.raises(AnalysisError) as e:
        analyzer.analyze(Union((l, r)))
    assert e.value.error_class == "INCOMPATIBLE_COLUMN_TYPE"
    assert e.value.parameters["dataType1"] == '"BOOLEAN"'
    assert e.value.parameters["dataType2"] == '"INT"'


def test_analyze_is_deterministic_in_shape(analyzer):
    a = analyzer.analyze(select(using(JoinType.INNER, "k"), star()))
    b = analyzer.analyze(select(using(JoinType.INNER, "k"), star()))
    assert a.schema_names == b.schema_names
    assert a.tree_string().count("\n") == b.tree_string().count("\n")
    assert local  # dsl helper used by fixtures


def test_nested_natural_joins_expose_all_hidden_columns(catalog, analyzer):
    catalog.create_temp_view("nt3", local(k=(T.STRING, ["one"]), v3=(T.INT, [4])))
    j = Join(Join(rel("nt1"), rel("nt2"), UsingJoin(JoinType.INNER, (), True)), rel("nt3"),
             UsingJoin(JoinType.INNER, (), True))
    p = analyzer.analyze(select(j, star("nt1"), star("nt2"), star("nt3")))
    assert p.schema_names == ["k", "v1", "k", "v2", "k", "v3"]
    # every referenced attribute is produced by the child (AddMetadataColumns reached the inner join)
    assert p.references <= p.child.output_set


def test_legacy_parameterless_count(analyzer):
    analyzer.conf.set("spark.sql.legacy.allowParameterlessCount", "true")
    p = analyzer.analyze(select(rel("testData"), fn("count")))
    assert p.schema_names == ["count()"]


def test_nested_correlated_scalar_subquery(analyzer):
    from ember.expressions.predicates import EqualTo
    from ember.expressions.subquery import OuterReference, ScalarSubquery

    innermost = Aggregate((), (Alias(fn("count", star()), "cnt"),),
                          Filter(EqualTo(col("testData.a"), col("nt2.v2")), rel("nt2")))
    middle = select(SubqueryAlias(("s",), innermost), fn("sum", col("cnt")))
    p = analyzer.analyze(Project((Alias(ScalarSubquery(middle), "x"),), rel("testData")))
    sq = p.project_list[0].child
    a = p.child.output[0]
    assert [x.id for x in sq.outer_attrs] == [a.id]
    refs = sq.plan.collect(
        lambda n: n if isinstance(n, Filter) and isinstance(n.condition.left, OuterReference) else None)
    assert refs and refs[0].condition.left.attr.id == a.id
