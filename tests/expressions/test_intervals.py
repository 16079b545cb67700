"""Interval literals (the DATE +/- INTERVAL subset) and their date kernels."""

from __future__ import annotations

import datetime as dt

import pytest

from ember import types as T
from ember.errors import ParseError
from ember.expressions.arithmetic import UnaryMinus
from ember.expressions.intervals import (
    DateAddYMInterval,
    ExtractANSIIntervalDays,
    IntervalLiteral,
    interval_literal,
)

from .helpers import BATCH, col, ev, fn


@pytest.mark.parametrize("text,unit,to,expected_sql,dtype", [
    ("90", "DAY", None, "INTERVAL '90' DAY", T.DayTimeIntervalType(0, 0)),
    ("3", "MONTH", None, "INTERVAL '3' MONTH", T.YearMonthIntervalType(1, 1)),
    ("1", "YEAR", None, "INTERVAL '1' YEAR", T.YearMonthIntervalType(0, 0)),
    ("1-2", "YEAR", "MONTH", "INTERVAL '1-2' YEAR TO MONTH", T.YearMonthIntervalType(0, 1)),
    ("90 days", None, None, "INTERVAL '90' DAY", T.DayTimeIntervalType(0, 0)),
    ("2", "MONTHS", None, "INTERVAL '2' MONTH", T.YearMonthIntervalType(1, 1)),
])
def test_interval_literal_forms(text, unit, to, expected_sql, dtype):
    lit = interval_literal(text, unit, to)
    assert lit.sql() == expected_sql
    assert lit.data_type == dtype
    assert not lit.nullable and lit.foldable


def test_interval_type_names():
    assert T.DayTimeIntervalType(0, 0).simple_string() == "interval day"
    assert T.YearMonthIntervalType(0, 1).simple_string() == "interval year to month"
    assert T.YearMonthIntervalType(1, 1) != T.YearMonthIntervalType(0, 1)


@pytest.mark.parametrize("text,unit", [("1.5", "HOUR"), ("x", "DAY"), ("1 2", None)])
def test_invalid_interval_literals(text, unit):
    with pytest.raises(ParseError):
        interval_literal(text, unit)


def test_interval_literal_evaluates_to_arrow():
    assert IntervalLiteral(1, "DAY", "DAY").eval(BATCH).to_pylist()[0] == dt.timedelta(days=1)
    assert IntervalLiteral(14, "YEAR", "MONTH").eval(BATCH).to_pylist()[0] == 14


def test_date_add_day_interval_kernel():
    # dt column: 2020-01-31, 2019-12-01, NULL
    minus = fn("date_add", col("dt"), UnaryMinus(ExtractANSIIntervalDays(IntervalLiteral(90, "DAY", "DAY"))))
    assert ev(minus) == [dt.date(2019, 11, 2), dt.date(2019, 9, 2), None]
    assert minus.sql() == "date_add(dt, (- extractansiintervaldays(INTERVAL '90' DAY)))"


def test_date_add_ym_interval_clamps_to_month_end():
    e = DateAddYMInterval(col("dt"), IntervalLiteral(1, "MONTH", "MONTH"))
    assert e.data_type == T.DATE
    assert ev(e) == [dt.date(2020, 2, 29), dt.date(2020, 1, 1), None]
    sub = DateAddYMInterval(col("dt"), IntervalLiteral(13, "YEAR", "MONTH"), negate=True)
    assert ev(sub) == [dt.date(2018, 12, 31), dt.date(2018, 11, 1), None]
    assert sub.sql() == "dt - INTERVAL '1-1' YEAR TO MONTH"
