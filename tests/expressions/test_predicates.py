"""Predicates: three-valued logic, comparisons (NaN as Spark), IN/LIKE NULL semantics, display.
Expectations verified against PySpark 4 (ANSI)."""

import pytest

from ember import types as T
from ember.errors import AnalysisError, ArithmeticError_
from ember.expressions.arithmetic import Divide
from ember.expressions.misc import to_pretty_sql
from ember.expressions.predicates import (
    And, EqualNullSafe, EqualTo, GreaterThan, GreaterThanOrEqual, In, IsNotNull, IsNull,
    LessThan, LessThanOrEqual, Like, Not, Or, like_pattern_to_regex,
)
from .helpers import BATCH, col, ev, ev1, lit

NULLB = lit(None, T.BOOLEAN)


def test_kleene_and_or_not():
    t, f = lit(True), lit(False)
    assert ev1(And(t, NULLB)) is None
    assert ev1(And(f, NULLB)) is False
    assert ev1(Or(t, NULLB)) is True
    assert ev1(Or(f, NULLB)) is None
    assert ev1(Not(NULLB)) is None
    assert ev(And(col("bo"), IsNull(col("a")))) == [False, False, False]
    assert ev(Or(col("bo"), IsNull(col("a")))) == [True, True, None]


def test_and_short_circuits_like_spark():
    # z = [0, 2, 0]: rows where z = 0 never evaluate a / z
    cond = And(Not(EqualTo(col("z"), lit(0))), GreaterThan(Divide(col("a"), col("z")), lit(0)))
    assert ev(cond) == [False, None, False]
    cond = Or(EqualTo(col("z"), lit(0)), GreaterThan(Divide(col("a"), col("z")), lit(0)))
    assert ev(cond) == [True, None, True]
    with pytest.raises(ArithmeticError_) as e:
        ev(GreaterThan(Divide(col("a"), col("z")), lit(0)))
    assert e.value.error_class == "DIVIDE_BY_ZERO"


def test_comparisons():
    assert ev(EqualTo(col("a"), lit(1))) == [True, None, False]
    assert ev(LessThan(col("a"), col("b"))) == [True, None, None]
    assert ev(GreaterThanOrEqual(col("s"), lit("Hello"))) == [True, True, None]
    assert ev(LessThanOrEqual(col("m"), lit(1))) == [False, True, None]
    assert ev(GreaterThan(col("dt"), lit("2020-01-01"))) == [True, False, None]
    assert ev(EqualTo(col("bo"), lit(True))) == [True, False, None]


def test_nan_semantics():
    nan = lit(float("nan"))
    assert ev1(EqualTo(nan, nan)) is True
    assert ev1(GreaterThan(nan, lit(1.0))) is True
    assert ev1(LessThan(nan, lit(1.0))) is False
    assert ev1(EqualNullSafe(nan, nan)) is True


def test_null_safe_equal_and_null_tests():
    assert ev(EqualNullSafe(col("a"), lit(None, T.INT))) == [False, True, False]
    assert ev(EqualNullSafe(col("a"), col("a"))) == [True, True, True]
    assert ev(IsNull(col("s"))) == [False, False, True]
    assert ev(IsNotNull(col("s"))) == [True, True, False]
    assert IsNull(col("a")).nullable is False


def test_in_null_semantics():
    assert ev1(In(lit(1), (lit(1), lit(None, T.INT)))) is True
    assert ev1(In(lit(2), (lit(1), lit(None, T.INT)))) is None
    assert ev1(In(lit(None, T.INT), (lit(1), lit(2)))) is None
    assert ev(In(col("a"), (lit(3), lit(2)))) == [False, None, True]
    assert ev(In(col("a"), (col("z"), lit(1)))) == [True, None, False]
    assert ev(In(col("d"), (lit(float("nan")), lit(1.5)))) == [True, False, None]


def test_like():
    assert ev(Like(col("s"), lit("H%o"))) == [False, True, None]
    assert ev(Like(col("s"), lit("_"))) == [True, False, None]
    assert ev1(Like(lit("a%b"), lit("a!%b"), "!")) is True
    assert ev1(Like(lit("axb"), lit("a!%b"), "!")) is False
    assert ev1(Like(lit("a\nb"), lit("a%"))) is True
    assert ev1(Like(lit("a.c"), lit("a.c"))) is True
    assert ev1(Like(lit("abc"), lit("a.c"))) is False
    with pytest.raises(AnalysisError) as e:
        like_pattern_to_regex("a\\b")
    assert e.value.error_class == "INVALID_FORMAT.ESC_IN_THE_MIDDLE"
    with pytest.raises(AnalysisError) as e:
        like_pattern_to_regex("a\\")
    assert e.value.error_class == "INVALID_FORMAT.ESC_AT_THE_END"


def test_display_strings():
    a = col("a")
    i = a.id
    assert EqualTo(a, lit(1)).simple_string() == f"(a#{i} = 1)"
    assert Not(EqualTo(a, lit(1))).simple_string() == f"NOT (a#{i} = 1)"
    assert IsNotNull(a).simple_string() == f"isnotnull(a#{i})"
    assert In(a, (lit(1), lit(2))).simple_string() == f"a#{i} IN (1,2)"
    # b is bigint: Catalyst prints bigint attributes with an L suffix
    assert EqualNullSafe(a, col("b")).simple_string() == f"(a#{i} <=> b#{col('b').id}L)"
    # column names (PySpark 4): (a IN (1, 2)), (NOT (a = 1)), (a IS NULL), s LIKE x%
    assert In(a, (lit(1), lit(2))).sql() == "(a IN (1, 2))"
    assert Not(EqualTo(a, lit(1))).sql() == "(NOT (a = 1))"
    assert IsNull(a).sql() == "(a IS NULL)"
    assert IsNotNull(a).sql() == "(a IS NOT NULL)"
    assert Like(col("s"), lit("x%")).sql() == "s LIKE x%"
    assert Like(col("s"), lit("x!%"), "!").sql() == "s LIKE x!% ESCAPE '!'"
    assert And(EqualTo(a, lit(1)), EqualTo(col("b"), lit(2, T.LONG))).sql() == "((a = 1) AND (b = 2L))"
    assert to_pretty_sql(And(EqualTo(a, lit(1)), EqualTo(col("b"), lit(2, T.LONG)))) == \
        "((a = 1) AND (b = 2))"
    assert to_pretty_sql(EqualTo(col("s"), lit("x"))) == "(s = x)"


def test_type_check_messages():
    msg = EqualTo(lit(1), lit(True)).check_input_types()
    assert msg.error_class == "DATATYPE_MISMATCH.BINARY_OP_DIFF_TYPES"
    assert '("INT" and "BOOLEAN")' in msg
    assert And(lit(True), lit(1)).check_input_types().sub_class == "BINARY_OP_DIFF_TYPES"
    assert Not(lit(1)).check_input_types().sub_class == "UNEXPECTED_INPUT_TYPE"


def test_batch_of_two_with_nulls():
    b = BATCH.slice(1, 2)  # a = [None, 3]
    assert ev(EqualTo(col("a"), lit(3)), b) == [None, True]
    assert ev(In(col("a"), (lit(3),)), b) == [None, True]
