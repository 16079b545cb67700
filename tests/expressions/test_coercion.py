"""ANSI type coercion (Spark 4): every expectation below was read off PySpark 4's analyzed
plans (``spark.sql.ansi.enabled=true``)."""

from decimal import Decimal

import pytest

from ember import types as T
from ember.coercion import (
    adjust_precision_scale, can_cast, can_implicit_cast, coerce_binary_operands,
    decimal_divide_type, decimal_for_integral, find_tightest_common_type, find_wider_type,
    find_wider_type_for_two, implicit_cast,
)
from ember.expressions.arithmetic import Add
from ember.expressions.cast import Cast
from ember.expressions.conditional import Coalesce
from ember.expressions.predicates import EqualTo, In
from .helpers import analyze, col, lit

D = T.DecimalType


@pytest.mark.parametrize("t1, t2, expected", [
    (T.INT, T.LONG, T.LONG),
    (T.BYTE, T.SHORT, T.SHORT),
    (T.FLOAT, T.INT, T.DOUBLE),      # integral + float -> double (ANSI)
    (T.FLOAT, T.BYTE, T.DOUBLE),
    (T.FLOAT, T.FLOAT, T.FLOAT),
    (T.FLOAT, T.DOUBLE, T.DOUBLE),
    (T.DATE, T.TIMESTAMP, T.TIMESTAMP),
    (T.NULL, T.STRING, T.STRING),
    (T.INT, T.STRING, None),
])
def test_tightest(t1, t2, expected):
    assert find_tightest_common_type(t1, t2) == expected


@pytest.mark.parametrize("t1, t2, expected", [
    (T.INT, D(3, 2), D(12, 2)),
    (T.LONG, D(3, 2), D(22, 2)),
    (D(10, 2), D(5, 3), D(11, 3)),
    (D(3, 2), T.DOUBLE, T.DOUBLE),
    (T.FLOAT, D(3, 2), T.DOUBLE),
    (T.INT, T.STRING, T.LONG),
    (T.STRING, T.LONG, T.LONG),
    (T.STRING, T.DOUBLE, T.DOUBLE),
    (D(3, 2), T.STRING, T.DOUBLE),
    (T.DATE, T.STRING, T.DATE),
    (T.TIMESTAMP, T.STRING, T.TIMESTAMP),
    (T.BOOLEAN, T.STRING, T.BOOLEAN),
    (T.BOOLEAN, T.INT, None),
])
def test_wider(t1, t2, expected):
    assert find_wider_type_for_two(t1, t2) == expected


def test_wider_without_string_promotion_and_lists():
    assert find_wider_type_for_two(T.INT, T.STRING, string_promotion=False) is None
    assert find_wider_type([T.INT, T.LONG, D(3, 2)]) == D(22, 2)
    assert find_wider_type([T.NULL, T.INT]) == T.INT


def test_decimal_rules():
    assert decimal_for_integral(T.INT) == D(10, 0)
    assert decimal_for_integral(T.LONG) == D(20, 0)
    assert decimal_divide_type(D(10, 2), D(5, 3)) == D(19, 8)
    assert decimal_divide_type(D(3, 2), D(10, 0)) == D(14, 13)
    assert adjust_precision_scale(77, 20) == D(38, 6)
    assert adjust_precision_scale(40, 2) == D(38, 2)


@pytest.mark.parametrize("left, right, kind, lt, rt", [
    (col("a"), col("b"), "equality", T.LONG, T.LONG),
    (col("a"), lit("1"), "equality", T.LONG, T.LONG),
    (col("m"), lit("1"), "equality", T.DOUBLE, T.DOUBLE),
    (col("dt"), lit("2020-01-02"), "comparison", T.DATE, T.DATE),
    (col("ts"), col("dt"), "comparison", T.TIMESTAMP, T.TIMESTAMP),
    (col("a"), col("m"), "equality", D(12, 2), D(12, 2)),
    (col("m"), lit(1), "comparison", D(3, 2), D(3, 2)),
    (col("a"), col("d"), "arithmetic", T.DOUBLE, T.DOUBLE),
    (col("m"), lit(1), "arithmetic", D(3, 2), D(1, 0)),
    (col("m"), col("b"), "arithmetic", D(3, 2), D(20, 0)),
    (col("a"), col("a"), "divide", T.DOUBLE, T.DOUBLE),
    (col("m"), col("a"), "divide", D(3, 2), D(10, 0)),
    (col("a"), lit(2), "integral_divide", T.LONG, T.LONG),
    (lit(7.5), lit(2), "integral_divide", T.DOUBLE, T.LONG),  # then DIFF_TYPES, as Spark
])
def test_coerce_binary_operands(left, right, kind, lt, rt):
    l2, r2 = coerce_binary_operands(left, right, kind)
    assert (l2.data_type, r2.data_type) == (lt, rt)


def test_coerce_leaves_matching_types_alone():
    a = col("a")
    e = Add(a, lit(1))
    assert analyze(e) is e
    l2, r2 = coerce_binary_operands(a, lit(1), "arithmetic")
    assert l2 is a


def test_implicit_cast():
    assert implicit_cast(lit(1), T.LONG) == Cast(lit(1), T.LONG)
    assert implicit_cast(lit(1, T.LONG), T.INT) is None       # no narrowing
    assert implicit_cast(lit(1.5), D(10, 2)) is None          # no double -> decimal
    assert implicit_cast(lit("1"), T.INT) is not None         # string -> anything atomic
    assert implicit_cast(lit(1), T.STRING) is not None
    assert can_implicit_cast(T.DATE, T.TIMESTAMP)
    assert not can_implicit_cast(T.BOOLEAN, T.INT)


def test_can_cast_ansi():
    assert can_cast(T.STRING, T.DATE)
    assert can_cast(T.TIMESTAMP, T.LONG)
    assert can_cast(T.INT, T.TIMESTAMP)
    assert not can_cast(T.INT, T.DATE)
    assert not can_cast(T.DATE, T.INT)
    assert can_cast(T.DATE, T.INT, ansi=False)


def test_coerce_expression_nodes():
    e = analyze(In(col("a"), (lit("1"), lit(2))))
    assert e.value.data_type == T.LONG and all(i.data_type == T.LONG for i in e.items)
    e = analyze(Coalesce((col("dt"), col("s"))))
    assert e.data_type == T.DATE
    e = analyze(EqualTo(col("a"), col("m")))
    assert e.left.data_type == D(12, 2)
    e = analyze(Coalesce((col("m"), lit(1.5))))
    assert e.data_type == T.DOUBLE
    assert analyze(Coalesce((col("m"), lit(1)))).data_type == D(12, 2)


def test_float_int_arithmetic_is_double():
    assert analyze(Add(Cast(lit(1.5), T.FLOAT), col("a"))).data_type == T.DOUBLE
    assert analyze(Add(Cast(lit(1.5), T.FLOAT), Cast(lit(1.5), T.FLOAT))).data_type == T.FLOAT
    assert analyze(Add(Cast(lit(1.5), T.FLOAT), lit(Decimal("1.5")))).data_type == T.DOUBLE
