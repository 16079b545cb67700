"""ResolveBinaryArithmetic: DATE +/- INTERVAL -> date_add / DateAddYMInterval, Spark's names."""

from __future__ import annotations

import datetime as dt

import pytest

from ember import types as T
from ember.errors import EmberError
from ember.expressions.intervals import DateAddYMInterval
from ember.sql import parse_query


def analyzed_item(analyzer, sql):
    plan = analyzer.analyze(parse_query(sql))
    return plan.project_list[0]


@pytest.mark.parametrize("sql,name", [
    ("date '1998-12-01' - interval '90' day",
     "date_add(DATE '1998-12-01', (- extractansiintervaldays(INTERVAL '90' DAY)))"),
    ("date '1998-12-01' + interval 90 day",
     "date_add(DATE '1998-12-01', extractansiintervaldays(INTERVAL '90' DAY))"),
    ("date '1993-07-01' + interval '3' month", "DATE '1993-07-01' + INTERVAL '3' MONTH"),
    ("interval '1' year + date '1994-01-31'", "DATE '1994-01-31' + INTERVAL '1' YEAR"),
    ("date '2000-03-31' - interval '1-1' year to month",
     "DATE '2000-03-31' - INTERVAL '1-1' YEAR TO MONTH"),
    # date +/- an integer is date_add/date_sub (PySpark 4.3 names; seed 15 e0342 follow-up)
    ("date '2020-01-01' + 1", "date_add(DATE '2020-01-01', 1)"),
    ("1 + date '2020-01-01'", "date_add(DATE '2020-01-01', 1)"),
    ("date '2020-01-01' - 1", "date_sub(DATE '2020-01-01', 1)"),
    ("date '2020-01-01' + 2S", "date_add(DATE '2020-01-01', 2)"),
])
def test_names_and_types_like_spark(analyzer, sql, name):
    item = analyzed_item(analyzer, f"SELECT {sql}")
    assert item.name == name
    assert item.data_type == T.DATE


def test_ym_interval_becomes_date_add_ym_interval(analyzer):
    item = analyzed_item(analyzer, "SELECT date '1994-01-31' + interval '1' month AS d")
    assert isinstance(item.child, DateAddYMInterval)


def test_interval_in_where_over_columns(analyzer, catalog):
    from tests.analysis.dsl import local

    catalog.create_temp_view("dates", local(d=(T.DATE, [dt.date(1998, 9, 1)])))
    plan = analyzer.analyze(parse_query(
        "SELECT d FROM dates WHERE d <= date '1998-12-01' - interval '90' day"))
    assert plan.resolved


def test_timestamp_plus_interval_is_timestamp_add_interval(analyzer):
    item = analyzed_item(analyzer, "SELECT timestamp '2000-01-01 00:00:00' + interval 1 day")
    assert type(item.child).__name__ == "TimestampAddInterval"
    assert item.name == "TIMESTAMP '2000-01-01 00:00:00' + INTERVAL '1' DAY"
    assert item.data_type == T.TIMESTAMP


def test_interval_plus_int_is_a_type_error(analyzer):
    with pytest.raises(EmberError):
        analyzer.analyze(parse_query("SELECT 1 + interval 1 day"))


def test_date_plus_bigint_is_date_add_type_error(analyzer):
    """PySpark 4.3: ``date + 1L`` -> DATATYPE_MISMATCH.UNEXPECTED_INPUT_TYPE from date_add."""
    with pytest.raises(EmberError) as e:
        analyzer.analyze(parse_query("SELECT date '2020-01-01' + 1L"))
    assert e.value.error_class == "DATATYPE_MISMATCH.UNEXPECTED_INPUT_TYPE"
