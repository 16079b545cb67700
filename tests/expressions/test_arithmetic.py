"""Arithmetic: ANSI errors, result types (DecimalPrecision), Java remainder semantics.
Expectations verified against PySpark 4 (ANSI)."""

from decimal import Decimal

import pytest

from ember import types as T
from ember.errors import ArithmeticError_
from ember.expressions.arithmetic import (
    Abs, Add, Divide, IntegralDivide, Multiply, Pmod, Remainder, Subtract, UnaryMinus,
    UnaryPositive,
)
from ember.expressions.cast import Cast
from .helpers import analyze, col, ev, ev1, fn, lit


def dec(v: str, p: int, s: int):
    return Cast(lit(Decimal(v)), T.DecimalType(p, s))


@pytest.mark.parametrize("expr, error_class", [
    (Divide(lit(1), lit(0)), "DIVIDE_BY_ZERO"),
    (IntegralDivide(lit(5), lit(0)), "DIVIDE_BY_ZERO"),
    (Remainder(lit(5), lit(0)), "REMAINDER_BY_ZERO"),
    (Remainder(lit(7.0), lit(0)), "REMAINDER_BY_ZERO"),
    (Divide(lit(7.0), lit(0.0)), "DIVIDE_BY_ZERO"),
    (Pmod(lit(7), lit(0)), "REMAINDER_BY_ZERO"),
    (Add(lit(2147483647), lit(1)), "ARITHMETIC_OVERFLOW"),
    (Subtract(lit(-2147483648), lit(1)), "ARITHMETIC_OVERFLOW"),
    (Multiply(lit(2 ** 62, T.LONG), lit(4, T.LONG)), "ARITHMETIC_OVERFLOW"),
    (UnaryMinus(lit(-2147483648)), "ARITHMETIC_OVERFLOW"),
    (Abs(lit(-128, T.BYTE)), "ARITHMETIC_OVERFLOW"),
    (Divide(dec("1", 10, 2), dec("0", 5, 3)), "DIVIDE_BY_ZERO"),
])
def test_ansi_errors(expr, error_class):
    with pytest.raises(ArithmeticError_) as e:
        ev1(expr)
    assert e.value.error_class == error_class


def test_null_dividend_with_zero_divisor_is_null():
    assert ev1(Divide(lit(None, T.DOUBLE), lit(0.0))) is None


def test_integer_results():
    assert ev1(Divide(lit(1), lit(2))) == 0.5
    assert ev1(IntegralDivide(lit(1), lit(2))) == 0
    assert ev1(IntegralDivide(lit(-7), lit(2))) == -3
    assert ev1(Remainder(lit(7), lit(-3))) == 1
    assert ev1(Remainder(lit(-7), lit(3))) == -1
    assert ev1(Pmod(lit(-7), lit(3))) == 2
    assert ev1(UnaryPositive(lit(3))) == 3
    assert ev(Add(col("a"), col("b"))) == [3, None, None]
    assert analyze(Add(col("a"), col("b"))).data_type == T.LONG
    assert analyze(IntegralDivide(col("a"), lit(2))).data_type == T.LONG
    assert analyze(Divide(col("b"), col("a"))).data_type == T.DOUBLE
    assert analyze(Add(lit(None, T.NULL), lit(None, T.NULL))).data_type == T.DOUBLE


def test_decimal_types_and_values():
    e = analyze(Add(dec("1", 10, 2), dec("2", 5, 3)))
    assert e.data_type == T.DecimalType(12, 3)
    e = analyze(Multiply(dec("1", 10, 2), dec("2", 5, 3)))
    assert e.data_type == T.DecimalType(16, 5)
    e = analyze(Divide(dec("1", 10, 2), dec("3", 5, 3)))
    assert e.data_type == T.DecimalType(19, 8)
    assert ev1(e) == Decimal("0.33333333")
    e = analyze(Remainder(dec("1", 10, 2), dec("3", 5, 3)))
    assert e.data_type == T.DecimalType(5, 3)
    assert ev1(e) == Decimal("1.000")
    assert ev1(IntegralDivide(dec("1", 10, 2), dec("3", 5, 3))) == 0
    assert ev1(Multiply(lit(Decimal("2.5")), lit(Decimal("1.25")))) == Decimal("3.125")
    e = analyze(Divide(lit(Decimal("1.0")), lit(Decimal("3.0"))))
    assert e.data_type == T.DecimalType(8, 6) and ev1(e) == Decimal("0.333333")
    # (m / a): decimal(3,2) / decimal(10,0) -> decimal(14,13)
    e = analyze(Divide(col("m"), col("a")))
    assert e.data_type == T.DecimalType(14, 13)
    assert ev(e)[0] == Decimal("2.5000000000000")
    # m + 1 -> decimal(4,2) (literal shrunk to decimal(1,0)); m + b -> decimal(23,2)
    assert analyze(Add(col("m"), lit(1))).data_type == T.DecimalType(4, 2)
    assert analyze(Add(col("m"), col("b"))).data_type == T.DecimalType(23, 2)
    assert analyze(Multiply(col("a"), lit(Decimal("1.5")))).data_type == T.DecimalType(13, 1)
    assert analyze(Add(col("d"), col("m"))).data_type == T.DOUBLE
    assert ev(Remainder(col("m"), col("a")))[0] == Decimal("0.50")
    assert ev(UnaryMinus(col("m"))) == [Decimal("-2.50"), Decimal("1.25"), None]
    assert ev(Abs(col("m"))) == [Decimal("2.50"), Decimal("1.25"), None]


def test_decimal_precision_loss_rounds_half_up():
    # decimal(38,10) * decimal(38,10) -> decimal(38,6), rounded HALF_UP
    a = dec("1.0000005", 38, 10)
    e = analyze(Multiply(a, dec("1", 38, 10)))
    assert e.data_type == T.DecimalType(38, 6)
    assert ev1(e) == Decimal("1.000001")


def test_decimal_overflow():
    big = dec("9" * 38, 38, 0)
    with pytest.raises(ArithmeticError_) as e:
        ev1(Add(big, big))
    assert e.value.error_class == "NUMERIC_VALUE_OUT_OF_RANGE.WITH_SUGGESTION"


def test_string_operands():
    assert ev1(Add(lit("1"), lit(1))) == 2
    assert analyze(Add(lit("1"), lit(1))).data_type == T.LONG
    assert analyze(Add(col("d"), lit("1"))).data_type == T.DOUBLE
    assert analyze(UnaryMinus(lit("1"))).data_type == T.DOUBLE


def test_display():
    a = col("a")
    assert Add(a, lit(1)).simple_string() == f"(a#{a.id} + 1)"
    assert Add(a, lit(1)).sql() == "(a + 1)"
    assert UnaryMinus(a).simple_string() == f"-a#{a.id}"
    assert UnaryMinus(a).sql() == "(- a)"
    assert UnaryPositive(a).sql() == "(+ a)"
    assert IntegralDivide(a, lit(2)).sql() == "(a div 2)"
    assert fn("mod", lit(7), lit(3)).sql() == "mod(7, 3)"
    assert Pmod(a, lit(3)).sql() == "pmod(a, 3)"


def test_batch_of_two_with_nulls_and_branches():
    from .helpers import BATCH
    b = BATCH.slice(1, 2)
    assert ev(Add(col("a"), lit(1)), b) == [None, 4]
    assert ev(Multiply(col("m"), col("m")), b) == [Decimal("1.5625"), None]


def test_unary_minus_named_after_the_function_that_built_it():
    from ember.expressions.arithmetic import UnaryMinus
    from ember.expressions.registry import lookup_function

    a = col("z")
    assert UnaryMinus(a).sql() == "(- z)"
    neg = lookup_function("negative", (a,))
    assert neg.sql() == "negative(z)"
    assert ev(neg) == [0, -2, 0]
