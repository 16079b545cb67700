"""Cast with ANSI rules.  Expectations verified against PySpark 4 (ANSI, UTC)."""

import datetime as dt
from decimal import Decimal

import pytest

from ember import types as T
from ember.errors import ArithmeticError_, CastError
from ember.expressions.cast import Cast, java_double_str
from .helpers import col, ev, ev1, lit

UTC = dt.timezone.utc


@pytest.mark.parametrize("value, from_t, to_t, expected", [
    (" 12 ", T.STRING, T.INT, 12),
    ("1.5e3", T.STRING, T.DOUBLE, 1500.0),
    ("Infinity", T.STRING, T.DOUBLE, float("inf")),
    ("inf", T.STRING, T.DOUBLE, float("inf")),
    ("1.239", T.STRING, T.DecimalType(4, 2), Decimal("1.24")),
    (" true ", T.STRING, T.BOOLEAN, True),
    ("yes", T.STRING, T.BOOLEAN, True),
    ("0", T.STRING, T.BOOLEAN, False),
    ("2020-1-2", T.STRING, T.DATE, dt.date(2020, 1, 2)),
    ("2020-01-02 junk", T.STRING, T.DATE, dt.date(2020, 1, 2)),
    ("2020-01-02T03:04", T.STRING, T.TIMESTAMP, dt.datetime(2020, 1, 2, 3, 4, tzinfo=UTC)),
    ("2020-01-02 03:04:05.123456789", T.STRING, T.TIMESTAMP,
     dt.datetime(2020, 1, 2, 3, 4, 5, 123456, tzinfo=UTC)),
    (1.5, T.DOUBLE, T.INT, 1),
    (-1.5, T.DOUBLE, T.INT, -1),
    (Decimal("1.25"), T.DecimalType(3, 2), T.DecimalType(3, 1), Decimal("1.3")),
    (Decimal("-1.25"), T.DecimalType(3, 2), T.DecimalType(3, 1), Decimal("-1.3")),
    (1.255, T.DOUBLE, T.DecimalType(4, 2), Decimal("1.26")),
    (Decimal("2.50"), T.DecimalType(3, 2), T.INT, 2),
    (Decimal("2.50"), T.DecimalType(3, 2), T.BOOLEAN, True),
    (1, T.INT, T.BOOLEAN, True),
    (True, T.BOOLEAN, T.INT, 1),
    (1, T.INT, T.TIMESTAMP, dt.datetime(1970, 1, 1, 0, 0, 1, tzinfo=UTC)),
    (1.5, T.DOUBLE, T.TIMESTAMP, dt.datetime(1970, 1, 1, 0, 0, 1, 500000, tzinfo=UTC)),
    (dt.date(2020, 1, 2), T.DATE, T.TIMESTAMP, dt.datetime(2020, 1, 2, tzinfo=UTC)),
    (dt.datetime(2020, 1, 2, 3, 4, 5, tzinfo=UTC), T.TIMESTAMP, T.LONG, 1577934245),
    (dt.datetime(2020, 1, 2, 3, 4, 5, tzinfo=UTC), T.TIMESTAMP, T.DATE, dt.date(2020, 1, 2)),
    (1e40, T.DOUBLE, T.FLOAT, float("inf")),
    (2, T.LONG, T.DecimalType(1, 0), Decimal("2")),
])
def test_cast_values(value, from_t, to_t, expected):
    assert ev1(Cast(lit(value, from_t), to_t)) == expected


@pytest.mark.parametrize("value, from_t, to_t", [
    ("1.9", T.STRING, T.INT),
    ("1e3", T.STRING, T.INT),
    ("abc", T.STRING, T.DOUBLE),
    ("2020-13-02", T.STRING, T.DATE),
    ("maybe", T.STRING, T.BOOLEAN),
    ("x", T.STRING, T.LONG),
])
def test_cast_invalid_input(value, from_t, to_t):
    with pytest.raises(CastError) as e:
        ev1(Cast(lit(value, from_t), to_t))
    assert e.value.error_class == "CAST_INVALID_INPUT"


def test_cast_overflow():
    with pytest.raises(CastError) as e:
        ev1(Cast(lit(300), T.BYTE))
    assert e.value.error_class == "CAST_OVERFLOW"
    assert "The value 300 of the type \"INT\" cannot be cast to \"TINYINT\"" in str(e.value)
    with pytest.raises(CastError) as e:
        ev1(Cast(lit(3.0e10), T.INT))
    assert e.value.error_class == "CAST_OVERFLOW" and "3.0E10D" in str(e.value)
    for v, t in [("123.4", T.STRING), (Decimal("12345.678"), T.DecimalType(8, 3))]:
        with pytest.raises(ArithmeticError_) as e:
            ev1(Cast(lit(v, t), T.DecimalType(4, 2) if t == T.STRING else T.DecimalType(5, 1)))
        assert e.value.error_class == "NUMERIC_VALUE_OUT_OF_RANGE.WITH_SUGGESTION"


def test_non_ansi_returns_null():
    assert ev1(Cast(lit("x"), T.INT, ansi=False)) is None
    assert ev1(Cast(lit(300), T.BYTE, ansi=False)) is None


def test_to_string():
    assert [java_double_str(v) for v in (1.0, 1e20, 1e-5, 1e7, 1234567.0, 1.5, -0.0)] == \
        ["1.0", "1.0E20", "1.0E-5", "1.0E7", "1234567.0", "1.5", "-0.0"]
    assert ev(Cast(col("d"), T.STRING)) == ["1.5", "-2.5", None]
    assert ev(Cast(col("m"), T.STRING)) == ["2.50", "-1.25", None]
    assert ev(Cast(col("dt"), T.STRING)) == ["2020-01-31", "2019-12-01", None]
    assert ev(Cast(col("ts"), T.STRING)) == ["2020-01-02 03:04:05.5", "1999-12-31 23:59:59", None]
    assert ev(Cast(col("bo"), T.STRING)) == ["true", "false", None]
    assert ev1(Cast(lit(1.5, T.FLOAT), T.STRING)) == "1.5"


def test_cast_time_zone():
    ts = lit(dt.datetime(2020, 1, 2, 3, 4, 5, tzinfo=UTC), T.TIMESTAMP)
    assert ev1(Cast(ts, T.STRING, time_zone="America/Los_Angeles")) == "2020-01-01 19:04:05"
    assert ev1(Cast(lit("2020-01-01 19:04:05"), T.TIMESTAMP, time_zone="America/Los_Angeles")) \
        == dt.datetime(2020, 1, 2, 3, 4, 5, tzinfo=UTC)


def test_type_check_and_display():
    assert Cast(col("a"), T.DATE).check_input_types() is not None  # ANSI: int -> date illegal
    assert Cast(col("dt"), T.INT).check_input_types() is not None
    assert Cast(col("a"), T.TIMESTAMP).check_input_types() is None
    c = Cast(col("a"), T.LONG)
    assert c.simple_string() == f"cast(a#{col('a').id} as bigint)"
    assert Cast(lit(1.0e20), T.STRING).sql() == "CAST(1.0E20D AS STRING)"


def test_batch_of_two():
    from .helpers import BATCH
    assert ev(Cast(col("s"), T.STRING), BATCH.slice(1, 2)) == ["Hello", None]
    assert ev(Cast(col("a"), T.DecimalType(5, 2)), BATCH.slice(1, 2)) == [None, Decimal("3.00")]
