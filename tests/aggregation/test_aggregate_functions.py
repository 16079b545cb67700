"""Aggregate functions: result types, nullability, names (``sql()``), Catalyst strings, lookup.

Expected names and types were taken from PySpark 4 (ANSI on), e.g.::

    SELECT count(*), count(1), count(DISTINCT a), count(b) FILTER (WHERE a >= 2),
           sum(DISTINCT salary), first(a, true), count(a, b), count_if(a > 1), avg(b) FROM t
    -> count(1) | count(1) | count(DISTINCT a) | count(b) FILTER (WHERE (a >= 2)) |
       sum(DISTINCT salary) | first(a) | count(a, b) | count_if((a > 1)) | avg(b)
"""

from __future__ import annotations

import pytest

from ember import types as T
from ember.errors import AnalysisError
from ember.expressions.aggregates import (
    AggregateExpression,
    Average,
    BoolAnd,
    Count,
    CountIf,
    First,
    Last,
    Max,
    MaxBy,
    Min,
    Sum,
    average_result_type,
    lookup_aggregate,
    sum_result_type,
)
from ember.expressions.base import AttributeReference, Literal, UnresolvedStar

A = AttributeReference("a", T.INT, id=1)
B = AttributeReference("b", T.INT, id=2)
SAL = AttributeReference("salary", T.DecimalType(4, 2), id=3)
S = AttributeReference("s", T.STRING, id=4)
D = AttributeReference("d", T.DOUBLE, id=5)
FLAG = AttributeReference("flag", T.BOOLEAN, id=6)


def agg(name, *args, distinct=False, filter=None, ignore_nulls=False):
    e = lookup_aggregate(name, tuple(args), distinct, filter, ignore_nulls)
    assert e is not None
    return e


# -- result types ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    "in_type, sum_type, avg_type",
    [
        (T.BYTE, T.LONG, T.DOUBLE),
        (T.SHORT, T.LONG, T.DOUBLE),
        (T.INT, T.LONG, T.DOUBLE),
        (T.LONG, T.LONG, T.DOUBLE),
        (T.FLOAT, T.DOUBLE, T.DOUBLE),
        (T.DOUBLE, T.DOUBLE, T.DOUBLE),
        # From PySpark: sum(decimal(4,2)) -> decimal(14,2), avg -> decimal(8,6);
        # decimal(3,2): avg decimal(7,6), sum decimal(13,2); decimal(38,0): avg decimal(38,4);
        # decimal(38,36): avg decimal(38,38), sum decimal(38,36); decimal(30,2): sum (38,2),
        # avg (34,6); decimal(38,18): avg (38,22).
        (T.DecimalType(4, 2), T.DecimalType(14, 2), T.DecimalType(8, 6)),
        (T.DecimalType(3, 2), T.DecimalType(13, 2), T.DecimalType(7, 6)),
        (T.DecimalType(38, 0), T.DecimalType(38, 0), T.DecimalType(38, 4)),
        (T.DecimalType(38, 36), T.DecimalType(38, 36), T.DecimalType(38, 38)),
        (T.DecimalType(30, 2), T.DecimalType(38, 2), T.DecimalType(34, 6)),
        (T.DecimalType(38, 18), T.DecimalType(38, 18), T.DecimalType(38, 22)),
        (T.DecimalType(10, 2), T.DecimalType(20, 2), T.DecimalType(14, 6)),
        (T.NULL, T.DOUBLE, T.DOUBLE),
    ],
)
def test_sum_avg_result_types(in_type, sum_type, avg_type):
    x = AttributeReference("x", in_type)
    assert sum_result_type(in_type) == sum_type
    assert average_result_type(in_type) == avg_type
    assert Sum(x).data_type == sum_type
    assert Average(x).data_type == avg_type
    assert Sum(x).nullable and Average(x).nullable


@pytest.mark.parametrize("t", [T.INT, T.STRING, T.DOUBLE, T.DATE, T.BOOLEAN, T.BINARY,
                               T.DecimalType(4, 2), T.TIMESTAMP])
def test_min_max_first_last_keep_input_type(t):
    x = AttributeReference("x", t, is_nullable=False)
    for f in (Min(x), Max(x), First(x), Last(x, True)):
        assert f.data_type == t
        assert f.nullable  # NULL on empty input even for a non-null column


def test_count_types_and_nullability():
    c = agg("count", A)
    assert c.data_type == T.LONG and c.nullable is False
    ci = agg("count_if", FLAG)
    assert ci.data_type == T.LONG and ci.nullable is False
    assert agg("sum", A).nullable is True
    assert agg("max_by", S, A).data_type == T.STRING
    assert agg("bool_and", FLAG).data_type == T.BOOLEAN


# -- names ----------------------------------------------------------------------------------


def test_sql_names_match_spark():
    gt = _gt(A, Literal(2, T.INT), ge=True)
    cases = [
        (agg("count", UnresolvedStar(())), "count(1)"),
        (agg("count", Literal(1, T.INT)), "count(1)"),
        (agg("count", A, distinct=True), "count(DISTINCT a)"),
        (agg("count", B, filter=gt), "count(b) FILTER (WHERE (a >= 2))"),
        (agg("sum", SAL, distinct=True), "sum(DISTINCT salary)"),
        (agg("first", A, Literal(True, T.BOOLEAN)), "first(a)"),
        (agg("first", A, ignore_nulls=True), "first(a)"),
        (agg("last", A), "last(a)"),
        (agg("first_value", A), "first_value(a)"),
        (agg("last_value", A, Literal(True, T.BOOLEAN)), "last_value(a)"),
        (agg("count", A, B), "count(a, b)"),
        (agg("count", A, B, distinct=True), "count(DISTINCT a, b)"),
        (agg("count_if", _gt(A, Literal(1, T.INT))), "count_if((a > 1))"),
        (agg("avg", B), "avg(b)"),
        (agg("mean", B), "mean(b)"),
        (agg("MEAN", B), "mean(b)"),
        (agg("Sum", B), "sum(b)"),
        (agg("every", FLAG), "every(flag)"),
        (agg("some", FLAG), "some(flag)"),
        (agg("any", FLAG), "any(flag)"),
        (agg("bool_or", FLAG), "bool_or(flag)"),
        (agg("any_value", A), "any_value(a)"),
        (agg("max_by", A, B), "max_by(a, b)"),
        (agg("count", Literal(None, T.NULL)), "count(NULL)"),
        (agg("count", Literal(None, T.NULL), distinct=True), "count(DISTINCT NULL)"),
        (agg("sum", B, distinct=True, filter=_gt(B, Literal(1, T.INT))),
         "sum(DISTINCT b) FILTER (WHERE (b > 1))"),
    ]
    for e, expected in cases:
        assert e.sql() == expected


def test_simple_string_like_catalyst():
    assert agg("count", UnresolvedStar(())).simple_string() == "count(1)"
    assert agg("sum", B).simple_string() == "sum(b#2)"
    assert agg("count", A, distinct=True).simple_string() == "count(distinct a#1)"
    assert agg("first", A).simple_string() == "first(a#1, false)"
    assert agg("last", A, ignore_nulls=True).simple_string() == "last(a#1, true)"
    f = agg("count", B, filter=_gt(A, Literal(1, T.INT)))
    assert f.simple_string() == "count(b#2) FILTER (WHERE (a#1 > 1))"


def _gt(left, right, ge=False):
    from ember.expressions.predicates import GreaterThan, GreaterThanOrEqual

    return (GreaterThanOrEqual if ge else GreaterThan)(left, right)


# -- equality -------------------------------------------------------------------------------


def test_aggregate_expression_equality_ignores_id_and_alias_name():
    x = AggregateExpression(Sum(A))
    y = AggregateExpression(Sum(A))
    assert x.id != y.id and x == y and hash(x) == hash(y)
    assert agg("mean", A) == agg("avg", A)
    assert AggregateExpression(Sum(A), is_distinct=True) != x
    assert First(A, True) != First(A, False)


def test_count_needs_an_argument():
    with pytest.raises(Exception):
        Count(())


# -- lookup ---------------------------------------------------------------------------------


def test_lookup_returns_none_for_scalar_functions():
    assert lookup_aggregate("upper", (S,), False, None, False) is None
    assert lookup_aggregate("abs", (A,), False, None, False) is None


def test_lookup_builds_the_right_classes():
    assert isinstance(agg("count", A).func, Count)
    assert isinstance(agg("avg", A).func, Average)
    assert isinstance(agg("mean", A).func, Average)
    assert isinstance(agg("min", A).func, Min)
    assert isinstance(agg("max", A).func, Max)
    assert isinstance(agg("count_if", FLAG).func, CountIf)
    assert isinstance(agg("every", FLAG).func, BoolAnd)
    assert isinstance(agg("max_by", A, B).func, MaxBy)
    assert agg("first", A, Literal(True, T.BOOLEAN)).func == First(A, True)
    # first(a, false) IGNORE NULLS ignores nulls (PySpark: returns 1 where first(a) is NULL).
    assert agg("first", A, Literal(False, T.BOOLEAN), ignore_nulls=True).func == First(A, True)
    assert agg("last_value", A, Literal(True, T.BOOLEAN)).func == Last(A, True)
    assert agg("count", A, B, distinct=True).is_distinct


@pytest.mark.parametrize(
    "name, n, expected",
    [("min", 2, "1"), ("sum", 2, "1"), ("avg", 2, "1"), ("first", 3, "[1, 2]"),
     ("max_by", 1, "[2, 3]"), ("count_if", 0, "1")],
)
def test_wrong_number_of_arguments(name, n, expected):
    args = (A, B, A)[:n]
    with pytest.raises(AnalysisError) as ei:
        lookup_aggregate(name, args, False, None, False)
    e = ei.value
    assert e.error_class == "WRONG_NUM_ARGS.WITHOUT_SUGGESTION"
    assert e.parameters["functionName"] == f"`{name}`"
    assert e.parameters["expectedNum"] == expected
    assert e.parameters["actualNum"] == str(n)


def test_count_without_arguments():
    with pytest.raises(AnalysisError) as ei:
        lookup_aggregate("count", (), False, None, False)
    assert ei.value.error_class == "WRONG_NUM_ARGS.WITH_SUGGESTION"


@pytest.mark.parametrize(
    "name, second, shown",
    [("first", B, "first"), ("first", Literal("x", T.STRING), "first"),
     ("first", Literal(None, T.NULL), "first"), ("first_value", Literal(1, T.INT), "first"),
     ("last_value", Literal("x", T.STRING), "last"), ("any_value", Literal("x", T.STRING),
                                                     "any_value")],
)
def test_first_second_argument_must_be_boolean_literal(name, second, shown):
    with pytest.raises(AnalysisError) as ei:
        lookup_aggregate(name, (A, second), False, None, False)
    assert ei.value.error_class == "_LEGACY_ERROR_TEMP_1210"
    assert f"The second argument in {shown} should be a boolean literal." in str(ei.value)


def test_ignore_nulls_only_for_first_last():
    with pytest.raises(AnalysisError) as ei:
        lookup_aggregate("sum", (B,), False, None, True)
    assert ei.value.error_class == "INVALID_SQL_SYNTAX.FUNCTION_WITH_UNSUPPORTED_SYNTAX"
    assert "The function `sum` does not support IGNORE NULLS." in str(ei.value)


def test_filter_must_be_boolean():
    with pytest.raises(AnalysisError) as ei:
        lookup_aggregate("count", (A,), False, Literal(None, T.NULL), False)
    assert ei.value.error_class == "INVALID_AGGREGATE_FILTER.NOT_BOOLEAN"


# -- input type checks ----------------------------------------------------------------------


@pytest.mark.parametrize("name, arg, required", [
    ("sum", Literal(True, T.BOOLEAN), '"NUMERIC" or "ANSI INTERVAL"'),
    ("avg", Literal(True, T.BOOLEAN), '"NUMERIC" or "ANSI INTERVAL"'),
    ("sum", AttributeReference("col", T.DATE), '"NUMERIC" or "ANSI INTERVAL"'),
    ("sum", AttributeReference("col", T.BINARY), '"NUMERIC" or "ANSI INTERVAL"'),
    ("count_if", A, '"BOOLEAN"'),
    ("bool_and", A, '"BOOLEAN"'),
])
def test_unexpected_input_type(name, arg, required):
    e = agg(name, arg)
    msg = e.check_input_types()
    assert msg is not None
    assert msg.error_class == "DATATYPE_MISMATCH.UNEXPECTED_INPUT_TYPE"
    assert msg.parameters["requiredType"] == required
    assert msg.parameters["paramIndex"] == "first"
    assert not e.resolved


def test_valid_inputs_resolve():
    for e in (agg("sum", A), agg("avg", SAL), agg("min", S), agg("max", D),
              agg("count", S), agg("count_if", FLAG), agg("first", S)):
        assert e.check_input_types() is None
        assert e.resolved


def test_implicit_cast_targets():
    # PySpark: sum('1') is sum(CAST(col AS DOUBLE)) -> double; sum(NULL) -> double.
    assert Sum(S).implicit_cast_targets() == (T.DOUBLE,)
    assert Average(Literal(None, T.NULL)).implicit_cast_targets() == (T.DOUBLE,)
    assert Sum(A).implicit_cast_targets() == (None,)
    assert CountIf(S).implicit_cast_targets() == (T.BOOLEAN,)
    assert Min(S).implicit_cast_targets() == (None,)
