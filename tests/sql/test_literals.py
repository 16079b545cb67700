"""Spark's literal typing."""

import datetime as dt
from decimal import Decimal

import pytest

from ember import types as T
from ember.errors import ParseError
from ember.expressions.base import Literal
from ember.sql import parse_expression


@pytest.mark.parametrize(
    "text, value, dtype",
    [
        ("1", 1, T.INT),
        ("2147483647", 2147483647, T.INT),
        ("2147483648", 2147483648, T.LONG),
        ("-2147483648", -2147483648, T.INT),
        ("99999999999999999999", Decimal("99999999999999999999"), T.DecimalType(20, 0)),
        ("1L", 1, T.LONG),
        ("1S", 1, T.SHORT),
        ("1Y", 1, T.BYTE),
        ("-128Y", -128, T.BYTE),
        ("1.5", Decimal("1.5"), T.DecimalType(2, 1)),
        ("100.00", Decimal("100.00"), T.DecimalType(5, 2)),
        ("0.001", Decimal("0.001"), T.DecimalType(3, 3)),
        ("0.8", Decimal("0.8"), T.DecimalType(1, 1)),
        ("1.5BD", Decimal("1.5"), T.DecimalType(2, 1)),
        ("1.5D", 1.5, T.DOUBLE),
        ("100.00D", 100.0, T.DOUBLE),
        ("1e3", 1000.0, T.DOUBLE),
        ("1.5F", 1.5, T.FLOAT),
        ("'abc'", "abc", T.STRING),
        ('"abc"', "abc", T.STRING),
        ("'a' 'b'", "ab", T.STRING),
        ("NULL", None, T.NULL),
        ("true", True, T.BOOLEAN),
        ("FALSE", False, T.BOOLEAN),
        ("date '2001-01-01'", dt.date(2001, 1, 1), T.DATE),
        ('DATE "2005-01-01"', dt.date(2005, 1, 1), T.DATE),
        ("timestamp '2001-01-01 10:11:12.5'",
         dt.datetime(2001, 1, 1, 10, 11, 12, 500000, tzinfo=dt.timezone.utc), T.TIMESTAMP),
    ],
)
def test_literal_types(text, value, dtype):
    lit = parse_expression(text)
    assert isinstance(lit, Literal)
    assert lit.dtype == dtype
    assert lit.value == value


def test_out_of_range_suffixed_literal():
    with pytest.raises(ParseError) as e:
        parse_expression("128Y")
    assert e.value.error_class == "INVALID_NUMERIC_LITERAL_RANGE"


def test_invalid_date_literal():
    with pytest.raises(ParseError) as e:
        parse_expression("date 'nope'")
    assert e.value.error_class == "INVALID_TYPED_LITERAL"
