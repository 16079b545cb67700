"""Shape tests: SQL text -> unresolved logical plan, Spark's AstBuilder shapes."""

import pytest

from ember import types as T
from ember.errors import ParseError, UnsupportedError
from ember.expressions.base import split_conjuncts
from ember.expressions.base import (
    Alias,
    Literal,
    SortOrder,
    UnresolvedAlias,
    UnresolvedAttribute,
    UnresolvedFunction,
    UnresolvedOrdinal,
    UnresolvedStar,
)
from ember.expressions.subquery import Exists, InSubquery, ScalarSubquery
from ember.plans.logical import nodes as L
from ember.plans.logical.join_type import JoinType, UsingJoin
from ember.sql import parse_data_type, parse_expression, parse_query, parse_statement


def A(*parts):
    return UnresolvedAttribute(tuple(parts))


def rel(name):
    return L.UnresolvedRelation((name,))


def P():
    from ember.expressions import predicates

    return predicates


def project_child(plan):
    assert isinstance(plan, L.Project), plan
    return plan.child


# ---------------------------------------------------------------------------------------------
# SELECT shape


def test_simple_select_shape():
    plan = parse_statement("SELECT a, b AS c, * , t.* FROM t WHERE a > 1;")
    assert isinstance(plan, L.Project)
    a, c, star, tstar = plan.project_list
    # like Spark's parser, a plain column is not wrapped in an UnresolvedAlias
    assert a == A("a")
    assert isinstance(c, Alias) and c.alias_name == "c" and c.child == A("b")
    assert star == UnresolvedStar(())
    assert tstar == UnresolvedStar(("t",))
    assert plan.child == L.Filter(P().GreaterThan(A("a"), Literal(1, T.INT)), rel("t"))


def test_select_without_from_is_one_row_relation():
    plan = parse_statement("SELECT 1")
    assert plan == L.Project((UnresolvedAlias(Literal(1, T.INT)),), L.OneRowRelation())


def test_group_by_having_order_limit_offset():
    plan = parse_statement(
        "SELECT DISTINCT a, count(*) FROM t WHERE x GROUP BY a, 2 HAVING count(*) > 1 "
        "ORDER BY 1 DESC, a ASC NULLS LAST LIMIT 5 OFFSET 2"
    )
    assert isinstance(plan, L.Limit) and plan.limit == Literal(5, T.INT)
    off = plan.child
    assert isinstance(off, L.Offset) and off.offset == Literal(2, T.INT)
    sort = off.child
    assert isinstance(sort, L.Sort) and sort.is_global
    assert sort.order[0] == SortOrder(UnresolvedOrdinal(1), False, None)
    assert sort.order[1] == SortOrder(A("a"), True, False)
    distinct = sort.child
    assert isinstance(distinct, L.Distinct)
    having = distinct.child
    assert isinstance(having, L.UnresolvedHaving)
    agg = having.child
    assert isinstance(agg, L.Aggregate)
    assert agg.grouping_expressions == (A("a"), UnresolvedOrdinal(2))
    assert agg.aggregate_expressions[1] == UnresolvedAlias(
        UnresolvedFunction("count", (UnresolvedStar(()),))
    )
    assert agg.child == L.Filter(A("x"), rel("t"))


def test_having_without_group_by_is_global_aggregate():
    plan = parse_statement("SELECT a FROM t HAVING a > 1")
    assert isinstance(plan, L.UnresolvedHaving)
    assert isinstance(plan.child, L.Aggregate)
    assert plan.child.grouping_expressions == ()


def test_sort_order_defaults_and_nulls():
    s = parse_statement("SELECT a FROM t ORDER BY a, b DESC, c NULLS LAST, d DESC NULLS FIRST")
    assert [(o.ascending, o.effective_nulls_first) for o in s.order] == [
        (True, True), (False, False), (True, False), (False, True)]


def test_column_origin_positions():
    plan = parse_statement("SELECT a,\n  t.bb\nFROM t")
    origins = [e.origin for e in plan.project_list]
    assert origins == [(1, 7), (2, 2)]


def test_multipart_names():
    plan = parse_statement("SELECT db.t.c FROM db.t")
    assert plan.project_list[0].name_parts == ("db", "t", "c")
    assert plan.child.name_parts == ("db", "t")


def test_quoted_identifiers_and_double_quoted_strings():
    plan = parse_statement('SELECT `my col`, "str" FROM t')
    assert plan.project_list[0] == A("my col")
    assert plan.project_list[1].child == Literal("str", T.STRING)


# ---------------------------------------------------------------------------------------------
# FROM and joins


@pytest.mark.parametrize(
    "sql, jt",
    [
        ("a JOIN b", JoinType.INNER),
        ("a INNER JOIN b", JoinType.INNER),
        ("a CROSS JOIN b", JoinType.CROSS),
        ("a LEFT JOIN b", JoinType.LEFT_OUTER),
        ("a LEFT OUTER JOIN b", JoinType.LEFT_OUTER),
        ("a RIGHT JOIN b", JoinType.RIGHT_OUTER),
        ("a RIGHT OUTER JOIN b", JoinType.RIGHT_OUTER),
        ("a FULL JOIN b", JoinType.FULL_OUTER),
        ("a FULL OUTER JOIN b", JoinType.FULL_OUTER),
        ("a SEMI JOIN b", JoinType.LEFT_SEMI),
        ("a LEFT SEMI JOIN b", JoinType.LEFT_SEMI),
        ("a ANTI JOIN b", JoinType.LEFT_ANTI),
        ("a LEFT ANTI JOIN b", JoinType.LEFT_ANTI),
    ],
)
def test_join_types_without_condition(sql, jt):
    join = project_child(parse_statement(f"SELECT * FROM {sql}"))
    assert join == L.Join(rel("a"), rel("b"), jt, None)


def test_join_on_and_cross_join_on():
    join = project_child(parse_statement("SELECT * FROM a LEFT JOIN b ON a.k = b.k"))
    assert join.join_type is JoinType.LEFT_OUTER
    assert join.condition == P().EqualTo(A("a", "k"), A("b", "k"))
    cross = project_child(parse_statement("SELECT * FROM a CROSS JOIN b ON (a.k = b.k)"))
    assert cross.join_type is JoinType.CROSS and cross.condition is not None


def test_using_and_natural_joins():
    j = project_child(parse_statement("SELECT * FROM a LEFT OUTER JOIN b USING (k, v)"))
    assert j.join_type == UsingJoin(JoinType.LEFT_OUTER, ("k", "v"))
    j = project_child(parse_statement("SELECT * FROM a NATURAL JOIN b"))
    assert j.join_type == UsingJoin(JoinType.INNER, (), natural=True)
    j = project_child(parse_statement("SELECT * FROM a NATURAL FULL OUTER JOIN b"))
    assert j.join_type == UsingJoin(JoinType.FULL_OUTER, (), natural=True)
    j = project_child(parse_statement("SELECT * FROM a LEFT SEMI JOIN b USING (k)"))
    assert j.join_type == UsingJoin(JoinType.LEFT_SEMI, ("k",))


def test_comma_list_is_inner_join_and_later_joins_apply_to_the_product():
    # Spark (AstBuilder.visitFromClause folds left, then applies each item's join extensions to
    # the accumulated plan): FROM a, b JOIN c ON x, d  ==  Join(Join(Join(a, b), c, x), d).
    # Checked on PySpark 4: `FROM a, b RIGHT JOIN c ON a.x = 1` pads a AND b with NULLs.
    j = project_child(parse_statement("SELECT * FROM a, b JOIN c ON x, d"))
    assert j == L.Join(
        L.Join(L.Join(rel("a"), rel("b"), JoinType.INNER), rel("c"), JoinType.INNER, A("x")),
        rel("d"),
        JoinType.INNER,
    )


def test_join_chain_is_left_deep_and_parenthesised_relations():
    j = project_child(parse_statement(
        "SELECT * FROM ((A JOIN B ON (a = b)) CROSS JOIN C) JOIN D ON (a = d)"))
    assert j.join_type is JoinType.INNER and j.right == rel("D")
    assert j.left.join_type is JoinType.CROSS
    assert j.left.left == L.Join(rel("A"), rel("B"), JoinType.INNER, P().EqualTo(A("a"), A("b")))


def test_table_alias_and_column_aliases():
    j = project_child(parse_statement("SELECT * FROM t1 AS x JOIN t2 y(c1, c2)"))
    assert j.left == L.SubqueryAlias(("x",), rel("t1"))
    assert j.right == L.SubqueryAlias(
        ("y",), L.UnresolvedSubqueryColumnAliases(("c1", "c2"), rel("t2")))


def test_derived_tables_with_and_without_alias():
    plan = project_child(parse_statement("SELECT * FROM (SELECT 1) s"))
    assert isinstance(plan, L.SubqueryAlias) and plan.identifier == ("s",)
    assert isinstance(plan.child, L.Project)
    plan = project_child(parse_statement("SELECT * FROM (SELECT 1)"))
    assert plan.identifier == ("__auto_generated_subquery_name",)


def test_values_as_from_item_and_top_level():
    plan = project_child(parse_statement("SELECT * FROM VALUES (1, 'a'), (2, 'b') AS t(x, y)"))
    assert plan == L.SubqueryAlias(("t",), L.UnresolvedInlineTable(
        ("x", "y"),
        ((Literal(1, T.INT), Literal("a", T.STRING)), (Literal(2, T.INT), Literal("b", T.STRING))),
    ))
    plan = parse_statement("VALUES (1), (2) tbl3(v)")
    assert plan == L.SubqueryAlias(("tbl3",), L.UnresolvedInlineTable(
        ("v",), ((Literal(1, T.INT),), (Literal(2, T.INT),))))
    # `AS GROUPING(a)`: a keyword works as a table alias
    plan = project_child(parse_statement("SELECT * FROM VALUES (1) AS GROUPING(a)"))
    assert plan.identifier == ("GROUPING",)
    # no column names: col1, col2 ...
    plan = parse_statement("VALUES (1, 2)")
    assert plan == L.UnresolvedInlineTable(("col1", "col2"), ((Literal(1, T.INT),
                                                                Literal(2, T.INT)),))


def test_with_cte():
    plan = parse_statement("WITH c AS (SELECT 1 AS x), d(y) AS (SELECT 2) SELECT * FROM c, d")
    assert isinstance(plan, L.UnresolvedWith)
    assert plan.cte_names == ("c", "d")
    assert plan.cte_plans[0].identifier == ("c",)
    assert isinstance(plan.cte_plans[1].child, L.UnresolvedSubqueryColumnAliases)
    assert isinstance(plan.child, L.Project)


def test_hints_wrap_the_from_plan():
    plan = parse_statement("SELECT /*+ BROADCAST(t), MERGE(t1, t2) */ * FROM t1 JOIN t2 WHERE x")
    flt = project_child(plan)
    assert isinstance(flt, L.Filter)
    h1 = flt.child
    assert isinstance(h1, L.UnresolvedHint) and h1.name == "BROADCAST"
    assert h1.parameters == (A("t"),)
    h2 = h1.child
    assert h2.name == "MERGE" and h2.parameters == (A("t1"), A("t2"))
    assert isinstance(h2.child, L.Join)


@pytest.mark.parametrize("name", ["broadcast", "BROADCASTJOIN", "MAPJOIN", "SHUFFLE_MERGE",
                                  "MERGEJOIN", "SHUFFLE_HASH", "SHUFFLE_REPLICATE_NL"])
def test_hint_aliases(name):
    plan = parse_statement(f"SELECT /*+ {name}(t) */ * FROM t")
    assert plan.child.name == name.upper()


# ---------------------------------------------------------------------------------------------
# Set operations


def test_set_operations():
    u = parse_statement("SELECT 1 UNION SELECT 2")
    assert isinstance(u, L.Distinct) and isinstance(u.child, L.Union)
    assert isinstance(parse_statement("SELECT 1 UNION ALL SELECT 2"), L.Union)
    assert isinstance(parse_statement("SELECT 1 UNION DISTINCT SELECT 2"), L.Distinct)
    e = parse_statement("SELECT 1 EXCEPT SELECT 2")
    assert isinstance(e, L.Except) and not e.is_all
    e = parse_statement("SELECT 1 MINUS ALL SELECT 2")
    assert isinstance(e, L.Except) and e.is_all
    i = parse_statement("SELECT 1 INTERSECT ALL SELECT 2")
    assert isinstance(i, L.Intersect) and i.is_all


SETOPS = "SELECT 1 EXCEPT SELECT 2 UNION ALL SELECT 3 INTERSECT ALL SELECT 4"


def test_intersect_binds_tighter():
    plan = parse_statement(SETOPS)
    assert isinstance(plan, L.Union)
    left, right = plan.inputs
    assert isinstance(left, L.Except)
    assert isinstance(right, L.Intersect) and right.is_all


def test_legacy_setops_precedence_is_left_to_right():
    plan = parse_statement(SETOPS, legacy_setops_precedence=True)
    assert isinstance(plan, L.Intersect)
    assert isinstance(plan.left, L.Union)
    assert isinstance(plan.left.inputs[0], L.Except)


def test_union_order_by_applies_to_whole_union():
    plan = parse_statement("SELECT a FROM t UNION ALL SELECT b FROM u ORDER BY 1 LIMIT 3")
    assert isinstance(plan, L.Limit)
    assert isinstance(plan.child, L.Sort) and isinstance(plan.child.child, L.Union)


def test_parenthesised_queries():
    plan = parse_statement("((SELECT 1 EXCEPT SELECT 2) EXCEPT SELECT 3) INTERSECT ALL SELECT 4")
    assert isinstance(plan, L.Intersect)
    assert isinstance(plan.left, L.Except) and isinstance(plan.left.left, L.Except)


# ---------------------------------------------------------------------------------------------
# Expressions


def test_subquery_expressions():
    plan = parse_statement(
        "SELECT (SELECT 1) FROM t WHERE a IN (SELECT b FROM u) AND (a, b) NOT IN (SELECT * FROM v)"
        " AND EXISTS (SELECT 1) AND NOT EXISTS (SELECT 2)")
    assert isinstance(plan.project_list[0].child, ScalarSubquery)
    in_sq, not_in, exists, not_exists = split_conjuncts(plan.child.condition)
    assert isinstance(in_sq, InSubquery) and in_sq.values == (A("a"),)
    assert isinstance(not_in, P().Not) and len(not_in.child.values) == 2
    assert isinstance(exists, Exists)
    assert isinstance(not_exists, P().Not) and isinstance(not_exists.child, Exists)


def test_predicates():
    pr = P()
    x = A("x")
    assert parse_expression("x IN (1, 2)") == pr.In(x, (Literal(1, T.INT), Literal(2, T.INT)))
    assert parse_expression("x NOT IN (1)") == pr.Not(pr.In(x, (Literal(1, T.INT),)))
    assert parse_expression("x BETWEEN 1 AND 2") == pr.And(
        pr.GreaterThanOrEqual(x, Literal(1, T.INT)), pr.LessThanOrEqual(x, Literal(2, T.INT)))
    assert parse_expression("x IS NULL") == pr.IsNull(x)
    assert parse_expression("x IS NOT NULL") == pr.IsNotNull(x)
    assert parse_expression("x <=> 1") == pr.EqualNullSafe(x, Literal(1, T.INT))
    assert parse_expression("x IS NOT DISTINCT FROM 1") == pr.EqualNullSafe(x, Literal(1, T.INT))
    assert parse_expression("x IS DISTINCT FROM 1") == pr.Not(
        pr.EqualNullSafe(x, Literal(1, T.INT)))
    assert parse_expression("x != 1") == pr.Not(pr.EqualTo(x, Literal(1, T.INT)))
    assert parse_expression("x <> 1") == pr.Not(pr.EqualTo(x, Literal(1, T.INT)))
    assert parse_expression("x LIKE 'a%'") == pr.Like(x, Literal("a%", T.STRING))
    assert parse_expression("x NOT LIKE 'a%'") == pr.Not(pr.Like(x, Literal("a%", T.STRING)))
    assert parse_expression("a AND b OR NOT c") == pr.Or(pr.And(A("a"), A("b")), pr.Not(A("c")))


def test_arithmetic():
    from ember.expressions import arithmetic as ar

    a, b = A("a"), A("b")
    assert parse_expression("a + b * 2") == ar.Add(a, ar.Multiply(b, Literal(2, T.INT)))
    assert parse_expression("a - b / b") == ar.Subtract(a, ar.Divide(b, b))
    assert parse_expression("a % b") == ar.Remainder(a, b)
    assert parse_expression("a div b") == ar.IntegralDivide(a, b)
    assert parse_expression("-a") == ar.UnaryMinus(a)
    assert parse_expression("+a") == ar.UnaryPositive(a)
    assert parse_expression("-1") == Literal(-1, T.INT)
    assert parse_expression("a || b") == UnresolvedFunction("concat", (a, b))


def test_case_and_cast():
    from ember.expressions import cast, conditional

    simple = parse_expression("CASE x WHEN 1 THEN 'a' WHEN 2 THEN 'b' ELSE 'c' END")
    assert simple == conditional.CaseWhen(
        (P().EqualTo(A("x"), Literal(1, T.INT)), P().EqualTo(A("x"), Literal(2, T.INT))),
        (Literal("a", T.STRING), Literal("b", T.STRING)),
        Literal("c", T.STRING),
    )
    searched = parse_expression("CASE WHEN x > 1 THEN 1 END")
    assert searched.else_value is None and len(searched.conditions) == 1
    assert parse_expression("CAST(x AS BIGINT)") == cast.Cast(A("x"), T.LONG, ansi=True)
    assert parse_expression("x::decimal(10,2)") == cast.Cast(A("x"), T.DecimalType(10, 2))
    assert parse_expression("CAST('1' AS DATE)") == cast.Cast(Literal("1", T.STRING), T.DATE)


def test_functions():
    f = parse_expression("COUNT(DISTINCT a, b)")
    assert f == UnresolvedFunction("count", (A("a"), A("b")), is_distinct=True)
    assert parse_expression("count(*)") == UnresolvedFunction("count", (UnresolvedStar(()),))
    assert parse_expression("count(t.*)") == UnresolvedFunction("count",
                                                                (UnresolvedStar(("t",)),))
    f = parse_expression("sum(x) FILTER (WHERE a > 1)")
    assert f.fn_name == "sum" and f.filter == P().GreaterThan(A("a"), Literal(1, T.INT))
    f = parse_expression("first(x) IGNORE NULLS")
    assert f == UnresolvedFunction("first", (A("x"),), ignore_nulls=True)
    f = parse_expression("first(x, true)")
    assert f == UnresolvedFunction("first", (A("x"), Literal(True, T.BOOLEAN)))
    # a bare tuple is the internal "(tuple)" builder (named_struct), not an explicit struct()
    assert parse_expression("(a, b)") == UnresolvedFunction("(tuple)", (A("a"), A("b")))
    f = parse_expression("percentile_approx(DISTINCT a, 0.8)")
    assert f.fn_name == "percentile_approx" and f.is_distinct and len(f.arguments) == 2
    f = parse_expression("COALESCE(a, 1)")
    assert f.fn_name == "coalesce"
    f = parse_expression("count(DISTINCT b) FILTER (WHERE b > 0)")
    assert f.is_distinct and f.filter is not None


# ---------------------------------------------------------------------------------------------
# Commands


def test_create_views():
    c = parse_statement("CREATE OR REPLACE TEMPORARY VIEW v AS SELECT 1;")
    assert isinstance(c, L.CreateViewCommand)
    assert (c.name, c.replace, c.temporary, c.if_not_exists, c.user_columns) == (
        "v", True, True, False, None)
    assert isinstance(c.query, L.Project)
    c = parse_statement("create temp view IF NOT EXISTS A(a, va) as select * from nt1")
    assert (c.name, c.user_columns, c.temporary, c.if_not_exists) == ("A", ("a", "va"), True, True)
    c = parse_statement("CREATE VIEW t1(a1, a2) as values (0, 1), (1, 2)")
    assert c.temporary is False and c.user_columns == ("a1", "a2")
    assert isinstance(c.query, L.UnresolvedInlineTable)


def test_view_query_keeps_original_positions():
    c = parse_statement("CREATE TEMP VIEW v AS\nSELECT abc FROM t")
    assert c.query.project_list[0].origin == (2, 7)


def test_create_temp_view_using():
    c = parse_statement(
        "CREATE OR REPLACE TEMP VIEW pq USING parquet OPTIONS (path '/tmp/x.parquet', "
        "header 'true', 'k.y' = \"v\")")
    assert c == L.CreateTempViewUsing(
        "pq", "parquet", (("path", "/tmp/x.parquet"), ("header", "true"), ("k.y", "v")), True)


def test_drop_view():
    assert parse_statement("DROP VIEW IF EXISTS t1;") == L.DropView("t1", True)
    assert parse_statement("drop view t1") == L.DropView("t1", False)


@pytest.mark.parametrize(
    "sql, key, value",
    [
        ("SET", None, None),
        ("SET spark.sql.x", "spark.sql.x", None),
        ("SET spark.sql.x=true", "spark.sql.x", "true"),
        ("set spark.sql.legacy.setopsPrecedence.enabled= true", "spark.sql.legacy.setopsPrecedence.enabled", "true"),
        ("SET a.b = x y, z;", "a.b", "x y, z"),
    ],
)
def test_set(sql, key, value):
    assert parse_statement(sql) == L.SetCommand(key, value)


def test_explain_and_describe():
    e = parse_statement("EXPLAIN EXTENDED SELECT 1")
    assert isinstance(e, L.ExplainCommand) and e.mode == "extended"
    assert parse_statement("explain select 1").mode == "simple"
    assert parse_statement("EXPLAIN FORMATTED SELECT 1").mode == "formatted"
    d = parse_statement("DESCRIBE TABLE t")
    assert d == L.DescribeRelation(rel("t"), False)
    d = parse_statement("DESC QUERY SELECT 1")
    assert isinstance(d.query, L.Project)
    d = parse_statement("DESC t")
    assert d.query == rel("t")


# ---------------------------------------------------------------------------------------------
# Types and errors


def test_parse_data_type():
    assert parse_data_type("int") == T.INT
    assert parse_data_type("BIGINT") == T.LONG
    assert parse_data_type("decimal(10, 2)") == T.DecimalType(10, 2)
    assert parse_data_type("decimal") == T.DecimalType(10, 0)
    assert parse_data_type("string") == T.STRING
    assert parse_data_type("array<int>") == T.ArrayType(T.INT)
    assert parse_data_type("struct<a:int,b:string>") == T.StructType(
        (T.StructField("a", T.INT), T.StructField("b", T.STRING)))


@pytest.mark.parametrize(
    "sql, near, line, col",
    [
        ("selec 1", "'selec'", 1, 0),
        ("SELECT a b c FROM t", "'c'", 1, 11),
        ("SELECT *\nFROM t JOIN", "'JOIN'", 2, 7),
        ("SELECT 'abc", "end of input", 1, 11),
        ("", "end of input", 1, 0),
    ],
)
def test_syntax_errors(sql, near, line, col):
    with pytest.raises(ParseError) as e:
        parse_statement(sql)
    err = e.value
    assert err.error_class == "PARSE_SYNTAX_ERROR"
    assert err.message == f"Syntax error at or near {near}."
    assert (err.origin.line, err.origin.start_position) == (line, col)
    assert err.origin.sql_text == sql


def test_unsupported_constructs_are_reported():
    with pytest.raises(UnsupportedError):
        parse_statement("SELECT a FROM t GROUP BY a WITH TOTALS")


def test_parse_query_rejects_commands():
    with pytest.raises(ParseError):
        parse_query("SET a=1")
