"""Parsing INTERVAL literals, EXTRACT and SUBSTRING ... FROM ... FOR."""

from __future__ import annotations

import pytest

from ember import types as T
from ember.errors import ParseError
from ember.expressions.base import Literal, UnresolvedAttribute, UnresolvedFunction
from ember.expressions.intervals import IntervalLiteral
from ember.sql import parse_expression


def test_interval_literals():
    assert parse_expression("interval '90' day") == IntervalLiteral(90, "DAY", "DAY")
    assert parse_expression("INTERVAL 3 MONTH") == IntervalLiteral(3, "MONTH", "MONTH")
    assert parse_expression("interval '1' year") == IntervalLiteral(12, "YEAR", "YEAR")
    assert parse_expression("interval '1-2' year to month") == IntervalLiteral(14, "YEAR", "MONTH")
    assert parse_expression("interval '90 days'") == IntervalLiteral(90, "DAY", "DAY")


def test_date_minus_interval_is_subtract():
    e = parse_expression("date '1998-12-01' - interval '90' day")
    assert type(e).__name__ == "Subtract"
    assert e.right == IntervalLiteral(90, "DAY", "DAY")


def test_invalid_interval_has_position():
    with pytest.raises(ParseError) as ei:
        parse_expression("interval '1.5' hour")
    assert ei.value.error_class == "INVALID_INTERVAL_FORMAT.INVALID_FRACTION"
    assert ei.value.origin is not None


def test_extract():
    e = parse_expression("extract(YEAR from x)")
    assert isinstance(e, UnresolvedFunction) and e.fn_name == "extract"
    assert e.arguments == (Literal("year", T.STRING), UnresolvedAttribute(("x",)))


def test_substring_from_for():
    e = parse_expression("substring(c from 1 for 2)")
    assert isinstance(e, UnresolvedFunction) and e.fn_name == "substring"
    assert e.arguments[1:] == (Literal(1, T.INT), Literal(2, T.INT))
