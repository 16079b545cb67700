"""show()/printSchema text, checked against PySpark 4's output (captured once from PySpark and
pasted here; the formatting code needs no running query engine)."""

import datetime as dt
from decimal import Decimal

import pyarrow as pa
import pytest

from ember import types as T
from ember.dataframe import format_value, java_double_string, show_string


@pytest.fixture
def small():
    t = pa.table({
        "a": pa.array([1, 22, None], pa.int32()),
        "b": pa.array(["a", None, "x" * 25], pa.large_string()),
        "c": pa.array([1.5, None, 1e10], pa.float64()),
        "d": pa.array([True, False, None]),
    })
    return t, [T.INT, T.STRING, T.DOUBLE, T.BOOLEAN]


def test_show_default(small):
    t, types = small
    assert show_string(t, types, 20, 20, False, "UTC") == (
        "+----+--------------------+------+-----+\n"
        "|   a|                   b|     c|    d|\n"
        "+----+--------------------+------+-----+\n"
        "|   1|                   a|   1.5| true|\n"
        "|  22|                NULL|  NULL|false|\n"
        "|NULL|xxxxxxxxxxxxxxxxx...|1.0E10| NULL|\n"
        "+----+--------------------+------+-----+\n"
    )


def test_show_no_truncate_left_aligns(small):
    t, types = small
    assert show_string(t, types, 20, 0, False, "UTC") == (
        "+----+-------------------------+------+-----+\n"
        "|a   |b                        |c     |d    |\n"
        "+----+-------------------------+------+-----+\n"
        "|1   |a                        |1.5   |true |\n"
        "|22  |NULL                     |NULL  |false|\n"
        "|NULL|xxxxxxxxxxxxxxxxxxxxxxxxx|1.0E10|NULL |\n"
        "+----+-------------------------+------+-----+\n"
    )


def test_show_footer_singular_and_plural(small):
    t, types = small
    one = show_string(t, types, 1, 20, False, "UTC")
    assert one.endswith("+---+---+---+----+\nonly showing top 1 row\n")
    assert "|  1|  a|1.5|true|" in one
    two = show_string(t, types, 2, 5, False, "UTC")
    assert two == (
        "+---+----+----+-----+\n"
        "|  a|   b|   c|    d|\n"
        "+---+----+----+-----+\n"
        "|  1|   a| 1.5| true|\n"
        "| 22|NULL|NULL|false|\n"
        "+---+----+----+-----+\n"
        "only showing top 2 rows\n"
    )


def test_show_empty_and_wide_chars():
    empty = pa.table({"a": pa.array([], pa.int32())})
    assert show_string(empty, [T.INT], 20, 20, False, "UTC") == "+---+\n|  a|\n+---+\n+---+\n"
    wide = pa.table({"s": pa.array(["日本語"], pa.large_string())})
    assert show_string(wide, [T.STRING], 20, 20, False, "UTC") == (
        "+------+\n|     s|\n+------+\n|日本語|\n+------+\n")


@pytest.mark.parametrize("value,text", [
    (1e-5, "1.0E-5"), (0.001, "0.001"), (1234567.0, "1234567.0"), (12345678.0, "1.2345678E7"),
    (-0.0, "-0.0"), (123456789.123, "1.23456789123E8"), (1e-4, "1.0E-4"), (1.0, "1.0"),
    (float("nan"), "NaN"), (float("-inf"), "-Infinity"), (1e10, "1.0E10"),
])
def test_java_double_string(value, text):
    assert java_double_string(value) == text


def test_format_values_like_spark():
    assert format_value(Decimal("1.23"), T.DecimalType(3, 2)) == "1.23"
    assert format_value(dt.date(2024, 1, 2), T.DATE) == "2024-01-02"
    assert format_value(dt.datetime(2024, 1, 2, 3, 4, 5, 120000), T.TIMESTAMP) == \
        "2024-01-02 03:04:05.12"
    assert format_value(dt.datetime(2024, 1, 2, 3, 4, 5), T.TIMESTAMP) == "2024-01-02 03:04:05"
    assert format_value(b"\x01\x02\xff", T.BINARY) == "[01 02 FF]"
    assert format_value([1, 2], T.ArrayType(T.INT)) == "[1, 2]"
    st = T.StructType((T.StructField("p", T.INT), T.StructField("q", T.STRING)))
    assert format_value({"p": 1, "q": "z"}, st) == "{1, z}"
    assert format_value(1.5, T.FLOAT) == "1.5"


def test_timestamps_shown_in_session_time_zone():
    ts = pa.array([dt.datetime(2024, 1, 1, 12, 0, tzinfo=dt.timezone.utc)],
                  pa.timestamp("us", tz="UTC"))
    t = pa.table({"ts": ts})
    out = show_string(t, [T.TIMESTAMP], 20, 20, False, "America/New_York")
    assert "|2024-01-01 07:00:00|" in out
