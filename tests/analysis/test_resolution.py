"""Relation/column resolution, aliases, stars, catalog behaviour, errors."""

from __future__ import annotations

import pytest

from ember import types as T
from ember.analysis.catalog import Catalog
from ember.analysis.resolution import UsingJoinProject, pretty_sql, suggestions
from ember.errors import AnalysisError
from ember.expressions.base import Alias, AttributeReference, Literal
from ember.plans.logical.join_type import JoinType, UsingJoin
from ember.plans.logical.nodes import (
    Filter,
    Join,
    LocalRelation,
    OneRowRelation,
    Project,
    Sort,
    SubqueryAlias,
    UnresolvedInlineTable,
    UnresolvedWith,
    View,
)

from tests.analysis.dsl import local, asc, col, lit, rel, select, star


def test_relation_becomes_view_with_fresh_ids(analyzer):
    p1 = analyzer.analyze(select(rel("nt1"), star()))
    p2 = analyzer.analyze(select(rel("NT1"), star()))
    assert isinstance(p1, Project)
    alias = p1.child
    assert isinstance(alias, SubqueryAlias) and alias.identifier == ("nt1",)
    assert isinstance(alias.child, View)
    assert p1.schema_names == ["k", "v1"]
    assert not (p1.output_set & p2.output_set)  # every reference gets fresh ids


def test_unknown_table(analyzer):
    with pytest.raises(AnalysisError) as e:
        analyzer.analyze(select(rel("nope"), star()))
    assert e.value.error_class == "TABLE_OR_VIEW_NOT_FOUND"
    assert e.value.parameters["relationName"] == "`nope`"


def test_qualified_and_case_insensitive_columns(analyzer):
    p = analyzer.analyze(select(rel("nt1"), col("NT1.K"), col("v1")))
    assert p.schema_names == ["K", "v1"]  # Spark keeps the spelling of the query
    child_ids = [a.id for a in p.child.output]
    assert [a.id for a in p.output] == child_ids


def test_unresolved_column_with_suggestion(analyzer):
    with pytest.raises(AnalysisError) as e:
        analyzer.analyze(select(rel("nt1"), col("kk")))
    assert e.value.error_class == "UNRESOLVED_COLUMN.WITH_SUGGESTION"
    assert e.value.parameters == {"objectName": "`kk`", "proposal": "`k`, `v1`"}
    assert "A column, variable, or function parameter with name `kk` cannot be resolved" in str(e.value)


def test_unresolved_qualified_column_suggestion(analyzer):
    with pytest.raises(AnalysisError) as e:
        analyzer.analyze(select(rel("nt1"), col("x.k")))
    assert e.value.parameters == {"objectName": "`x`.`k`", "proposal": "`nt1`.`k`, `nt1`.`v1`"}


def test_ambiguous_reference(analyzer):
    plan = select(Join(rel("nt1"), rel("nt2"), JoinType.INNER), col("k"))
    with pytest.raises(AnalysisError) as e:
        analyzer.analyze(plan)
    assert e.value.error_class == "AMBIGUOUS_REFERENCE"
    assert e.value.parameters == {"name": "`k`", "referenceNames": "[`nt1`.`k`, `nt2`.`k`]"}


def test_star_and_qualified_star(analyzer):
    plan = select(Join(rel("nt1"), rel("nt2"), JoinType.INNER), star("nt2"), star())
    p = analyzer.analyze(plan)
    assert p.schema_names == ["k", "v2", "k", "v1", "k", "v2"]


def test_unaliased_expression_names():
    a = AttributeReference("a", T.INT)
    assert pretty_sql(Literal("foo", T.STRING)) == "foo"
    assert pretty_sql(Literal(1, T.LONG)) == "1"
    assert pretty_sql(Literal(None, T.NULL)) == "NULL"
    assert pretty_sql(a) == "a"


def test_alias_and_self_join_dedup(analyzer):
    # the same relation object on both sides: the right side gets fresh ids
    r = local(x=(T.INT, [1]))
    p = analyzer.analyze(select(Join(SubqueryAlias(("l",), r), SubqueryAlias(("r",), r),
                                     JoinType.INNER), col("l.x"), col("r.x")))
    assert p.output[0].id != p.output[1].id
    join = p.child
    assert isinstance(join, Join) and isinstance(join.right, Project)


def test_cte_substitution(analyzer):
    body = Project((Alias(Literal(1, T.INT), "a"),), OneRowRelation())
    plan = UnresolvedWith(
        select(Join(SubqueryAlias(("x",), rel("c")), SubqueryAlias(("y",), rel("c")),
                    JoinType.CROSS), col("x.a"), col("y.a")),
        ("c",), (body,),
    )
    p = analyzer.analyze(plan)
    assert p.schema_names == ["a", "a"]
    assert p.output[0].id != p.output[1].id


def test_inline_table_types_and_names(analyzer):
    t = UnresolvedInlineTable((), ((lit(1), Literal("a", T.STRING)),
                                   (Literal(2, T.LONG), Literal(None, T.NULL))))
    p = analyzer.analyze(select(t, star()))
    rel_ = p.child
    assert isinstance(rel_, LocalRelation)
    assert [a.name for a in rel_.attrs] == ["col1", "col2"]
    assert [a.data_type for a in rel_.attrs] == [T.LONG, T.STRING]
    assert rel_.data.column(0).to_pylist() == [1, 2]
    assert rel_.data.column(1).to_pylist() == ["a", None]


def test_inline_table_errors(analyzer):
    with pytest.raises(AnalysisError) as e:
        analyzer.analyze(select(UnresolvedInlineTable((), ((lit(1),), (lit(1), lit(2)))), star()))
    assert e.value.error_class == "INVALID_INLINE_TABLE.NUM_COLUMNS_MISMATCH"
    assert e.value.parameters == {"expectedNumCols": "1", "actualNumCols": "2", "rowIndex": "1"}
    with pytest.raises(AnalysisError) as e:
        analyzer.analyze(select(UnresolvedInlineTable(
            (), ((lit(1),), (Literal("b", T.STRING),))), star()))
    assert e.value.error_class == "INVALID_INLINE_TABLE.INCOMPATIBLE_TYPES_IN_INLINE_TABLE"


def test_order_by_missing_column(analyzer):
    plan = Sort((asc(col("b")),), True, select(rel("testData"), col("a")))
    p = analyzer.analyze(plan)
    assert isinstance(p, Project) and p.schema_names == ["a"]
    assert isinstance(p.child, Sort)
    assert p.child.child.schema_names == ["a", "b"]


def test_catalog_errors_and_user_columns():
    c = Catalog()
    r = local(x=(T.INT, [1]), y=(T.INT, [2]))
    c.create_temp_view("v", r)
    with pytest.raises(AnalysisError) as e:
        c.create_temp_view("V", r)
    assert e.value.error_class == "TEMP_TABLE_OR_VIEW_ALREADY_EXISTS"
    assert e.value.parameters == {"relationName": "`V`"}
    c.create_temp_view("v", r, replace=True, user_columns=("a1", "a2"))
    assert c.lookup(("v",)).schema_names == ["a1", "a2"]
    c.drop_temp_view("v")
    c.drop_temp_view("v", if_exists=True)
    with pytest.raises(AnalysisError) as e:
        c.drop_temp_view("v")
    assert e.value.error_class == "TABLE_OR_VIEW_NOT_FOUND"


def test_suggestions_keep_qualifiers_when_mixed():
    a = AttributeReference("a", T.INT, attr_qualifier=("testdata",))
    b = AttributeReference("count(b)", T.LONG)
    assert suggestions(("b",), [a, b]) == ["`count(b)`", "`testdata`.`a`"]
    assert suggestions(("b",), [a]) == ["`a`"]
    names = [AttributeReference(n, T.INT) for n in ["zzz", "abc", "abd", "q1", "q2", "q3", "abx1"]]
    assert suggestions(("abx",), names) == ["`abc`", "`abd`", "`abx1`", "`q1`", "`q2`"]


def test_filter_not_boolean(analyzer):
    with pytest.raises(AnalysisError) as e:
        analyzer.analyze(select(Filter(col("a"), rel("testData")), col("b")))
    assert e.value.error_class == "DATATYPE_MISMATCH.FILTER_NOT_BOOLEAN"
    assert e.value.parameters == {"sqlExpr": '"a"', "filter": '"a"', "type": '"INT"'}


def test_star_expand_error(analyzer):
    with pytest.raises(AnalysisError) as e:
        analyzer.analyze(select(rel("nt1"), star("x")))
    assert e.value.error_class == "CANNOT_RESOLVE_STAR_EXPAND"
    assert e.value.parameters == {"targetString": "`x`", "columns": "`k`, `v1`"}
    assert UsingJoinProject is not None
