"""TIMESTAMP construction and unit arithmetic of issue 22: ``make_timestamp`` /
``try_make_timestamp`` (Spark's MakeTimestamp: java.time's field checks, second 60 rolling
over to the next minute), ``timestampadd`` / ``dateadd`` / ``date_add`` with a unit (Spark's
TimestampAdd) and ``timestampdiff`` / ``datediff`` / ``date_diff`` with a unit (TimestampDiff:
``ChronoUnit.between`` of the local date-times in the session time zone).

The unit forms reach the registry as ``(timestampadd)`` / ``(timestampdiff)`` with the unit as
a string literal: the SQL builder turns the unit keyword into it (SQL text cannot write those
names), and so do ``ember.functions.timestamp_add`` / ``timestamp_diff``.  The unit stays the
node's first argument (a literal, so the column name shows it bare: ``timestampadd(YEAR, 1,
ts)``).  Everything is
vectorized over NumPy int64 microseconds.
"""

from __future__ import annotations

from decimal import Decimal
from typing import Callable

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from ember import types as T
from ember.errors import AnalysisError, ArithmeticError_, ExecutionError
from ember.expressions.base import Expression, Literal
from ember.expressions.cast import Cast, _local_naive
from ember.expressions.misc import FunctionCall, FunctionSpec, ScalarFunction, register
from ember.expressions.utf8_kernels import all_valid

__all__ = ["TIMESTAMP_FUNCTIONS", "build_timestamp_function", "wall_to_instant"]

TS, I, L = T.TIMESTAMP, T.INT, T.LONG
_US_DAY = 86_400_000_000
_UTC = ("UTC", "Z", "+00:00", "GMT")


def _session_tz(node) -> str:
    return node.options[0] if node.options else "UTC"


def wall_to_instant(local_us: np.ndarray, valid: np.ndarray, tz: str) -> np.ndarray:
    """Wall-clock microseconds in ``tz`` as UTC microseconds, as java.time's
    ``ZonedDateTime.of``: an ambiguous time takes the earlier offset, one in a DST gap the
    offset before the gap (02:30 -> 03:30)."""
    if tz.upper() in _UTC:
        return local_us
    naive = pa.array(local_us, type=pa.int64(), mask=~valid).cast(pa.timestamp("us"))
    early = pc.assume_timezone(naive, timezone=tz, ambiguous="earliest", nonexistent="earliest")
    offset = pc.subtract(pc.local_timestamp(early).cast(pa.int64()), early.cast(pa.int64()))
    return local_us - np.asarray(pc.fill_null(offset, 0).to_numpy(zero_copy_only=False),
                                 dtype=np.int64)


def _local_us(arr: pa.Array, tz: str) -> np.ndarray:
    local = _local_naive(arr.cast(pa.timestamp("us", tz="UTC")), tz)
    return np.asarray(pc.fill_null(local.cast(pa.int64()), 0).to_numpy(zero_copy_only=False),
                      dtype=np.int64)


def _ints(arr: pa.Array) -> np.ndarray:
    return np.asarray(pc.fill_null(arr.cast(pa.int64()), 0).to_numpy(zero_copy_only=False),
                      dtype=np.int64)


def _ts_array(us: np.ndarray, valid: np.ndarray) -> pa.Array:
    return pa.array(us, type=pa.int64(), mask=~valid).cast(pa.timestamp("us", tz="UTC"))


def _days_from_civil(y: np.ndarray, m: np.ndarray) -> np.ndarray:
    """Days from 1970-01-01 to the first day of month ``m`` (1..12) of year ``y``."""
    months = (y - 1970) * 12 + (m - 1)
    return months.astype("datetime64[M]").astype("datetime64[D]").astype(np.int64)


def _month_length(y: np.ndarray, m: np.ndarray) -> np.ndarray:
    start = _days_from_civil(y, m)
    nxt = ((y - 1970) * 12 + m).astype("datetime64[M]").astype("datetime64[D]").astype(np.int64)
    return nxt - start


# -- make_timestamp / try_make_timestamp ------------------------------------------------------

_MONTHS = ("JANUARY", "FEBRUARY", "MARCH", "APRIL", "MAY", "JUNE", "JULY", "AUGUST",
           "SEPTEMBER", "OCTOBER", "NOVEMBER", "DECEMBER")
#: java.time's year range for LocalDate; timestamps beyond +-294247 years overflow micros
_YEAR_LIMIT = 290_000


def _field_error(message: str) -> ExecutionError:
    return ExecutionError(f"{message}. ",
                          error_class="DATETIME_FIELD_OUT_OF_BOUNDS.WITHOUT_SUGGESTION",
                          parameters={"rangeMessage": message})


def _make_timestamp_error(y, mo, d, h, mi, s_us) -> ExecutionError:
    """java.time's first failing check: LocalDate.of then LocalTime.of (Spark's message)."""
    if not -999_999_999 <= y <= 999_999_999:
        return _field_error(f"Invalid value for Year (valid values -999999999 - 999999999): {y}")
    if not 1 <= mo <= 12:
        return _field_error(f"Invalid value for MonthOfYear (valid values 1 - 12): {mo}")
    if not 1 <= d <= 31:
        return _field_error(f"Invalid value for DayOfMonth (valid values 1 - 28/31): {d}")
    if d > int(_month_length(np.array([y]), np.array([mo]))[0]):
        if mo == 2 and d == 29:
            return _field_error(f"Invalid date 'February 29' as '{y}' is not a leap year")
        return _field_error(f"Invalid date '{_MONTHS[mo - 1]} {d}'")
    if not 0 <= h <= 23:
        return _field_error(f"Invalid value for HourOfDay (valid values 0 - 23): {h}")
    if not 0 <= mi <= 59:
        return _field_error(f"Invalid value for MinuteOfHour (valid values 0 - 59): {mi}")
    if s_us // 1_000_000 == 60 and s_us % 1_000_000:
        sec = Decimal(s_us).scaleb(-6).normalize()
        return ExecutionError(
            f"Valid range for seconds is [0, 60] (inclusive), but the provided value is {sec}. "
            "To avoid this error, use `try_make_timestamp`, which returns NULL on error.",
            error_class="INVALID_FRACTION_OF_SECOND", parameters={"secAndMicros": str(sec)})
    if not 0 <= s_us < 61_000_000:
        return _field_error("Invalid value for SecondOfMinute (valid values 0 - 59): "
                            f"{s_us // 1_000_000}")
    return _field_error(f"Invalid value for Year: {y}")


def _make_timestamp(a, node, b):
    y, mo, d, h, mi = (_ints(x) for x in a[:5])
    sec = a[5].cast(pa.decimal128(16, 6))
    s_us = _ints(pc.multiply(sec, pa.scalar(Decimal(1_000_000), pa.decimal128(7, 0))))
    valid = all_valid(a)
    ok = ((mo >= 1) & (mo <= 12) & (d >= 1) & (h >= 0) & (h <= 23) & (mi >= 0) & (mi <= 59)
          & (s_us >= 0) & ((s_us < 60_000_000) | (s_us == 60_000_000))
          & (np.abs(y) <= _YEAR_LIMIT))
    yy, mm = np.where(ok, y, 1970), np.where(ok, mo, 1)
    ok &= d <= _month_length(yy, mm)
    bad = valid & ~ok
    if bad.any() and node.key == "make_timestamp" and node.ansi_mode:
        i = int(np.flatnonzero(bad)[0])
        raise _make_timestamp_error(int(y[i]), int(mo[i]), int(d[i]), int(h[i]), int(mi[i]),
                                    int(s_us[i]))
    good = valid & ok
    local = (_days_from_civil(yy, mm) + np.where(ok, d, 1) - 1) * _US_DAY + np.where(ok, (
        h * 3600 + mi * 60) * 1_000_000 + s_us, 0)
    if len(a) == 7:
        out = np.zeros(len(local), dtype=np.int64)
        zones = a[6].cast(pa.string())
        for z in pc.unique(zones.filter(pa.array(good))).to_pylist():
            rows = good & np.asarray(pc.fill_null(pc.equal(zones, z), False).to_numpy(
                zero_copy_only=False), dtype=bool)
            out = np.where(rows, wall_to_instant(local, rows, z), out)
    else:
        out = wall_to_instant(local, good, _session_tz(node))
    return _ts_array(out, good)


def _make_timestamp_inputs(types):
    if not all(t.is_numeric or isinstance(t, (T.NullType, T.StringType)) for t in types[:6]):
        return None
    return (I, I, I, I, I, T.DecimalType(16, 6)) + ((T.STRING,) if len(types) == 7 else ())


def _make_timestamp_nullable(node) -> bool:
    """Always for try_make_timestamp and legacy mode; else for a nullable argument, or seconds
    cast from a type DECIMAL(16, 6) may not hold (Spark's Cast.forceNullable)."""
    if node.key == "try_make_timestamp" or not node.ansi_mode:
        return True
    sec = node.arguments[5]
    if isinstance(sec, Cast):
        ft = sec.child.data_type
        if isinstance(ft, (T.FloatType, T.DoubleType)) or (
                isinstance(ft, T.DecimalType) and ft.precision - ft.scale > 10):
            return True
    return any(x.nullable for x in node.arguments)


for _k in ("make_timestamp", "try_make_timestamp"):
    register(FunctionSpec(_k, _make_timestamp_inputs, lambda t: TS, _make_timestamp,
                          may_fail=_k == "make_timestamp", ansi_aware=_k == "make_timestamp",
                          time_zone_aware=True, expected='"INT"',
                          nullable=_make_timestamp_nullable))


# -- timestampadd / timestampdiff -------------------------------------------------------------

_ADD_UNITS = ("YEAR", "QUARTER", "MONTH", "WEEK", "DAY", "DAYOFYEAR", "HOUR", "MINUTE",
              "SECOND", "MILLISECOND", "MICROSECOND")
_DIFF_UNITS = ("YEAR", "QUARTER", "MONTH", "WEEK", "DAY", "HOUR", "MINUTE", "SECOND",
               "MILLISECOND", "MICROSECOND")
_MICROS = {"MICROSECOND": 1, "MILLISECOND": 1000, "SECOND": 1_000_000, "MINUTE": 60_000_000,
           "HOUR": 3_600_000_000}


def _overflow(node, q: np.ndarray, start: np.ndarray, bad: np.ndarray) -> ArithmeticError_:
    """Spark's DATETIME_OVERFLOW for the first row whose result leaves the timestamp range."""
    i = int(np.flatnonzero(bad)[0])
    ts = np.datetime64(int(start[i]), "us").astype(object)
    shown = f"TIMESTAMP '{ts:%Y-%m-%d %H:%M:%S}'" if ts is not None else "TIMESTAMP"
    op = f"add {int(q[i])}L {node.arguments[0].value.upper()} to {shown}"
    return ArithmeticError_(f"Datetime operation overflow: {op}.",
                            error_class="DATETIME_OVERFLOW", parameters={"operation": op})


#: the timestamp range Spark's micros-since-epoch long holds (a float check is enough: results
#: near the edge are far outside any calendar Spark can print)
_MAX_US = float(2 ** 63 - 1)


def _add_months_local(local: np.ndarray, months: np.ndarray) -> np.ndarray:
    """``LocalDateTime.plusMonths``: the day clamped to the new month's length."""
    days, tod = np.divmod(local, _US_DAY)
    dt = days.astype("datetime64[D]")
    month0 = dt.astype("datetime64[M]")
    dom = (dt - month0.astype("datetime64[D]")).astype(np.int64)
    target = month0.astype(np.int64) + months
    start = target.astype("datetime64[M]").astype("datetime64[D]").astype(np.int64)
    length = (target + 1).astype("datetime64[M]").astype("datetime64[D]").astype(np.int64) - start
    return (start + np.minimum(dom, length - 1)) * _US_DAY + tod


def _timestampadd(a, node, b):
    unit = node.arguments[0].value.upper()
    a = a[1:]
    q = _ints(a[0])
    ts = a[1].cast(pa.timestamp("us", tz="UTC"))
    valid = all_valid(a)
    start = np.asarray(pc.fill_null(ts.cast(pa.int64()), 0).to_numpy(zero_copy_only=False),
                       dtype=np.int64)
    if unit in _MICROS:
        big = valid & (np.abs(start.astype(float) + q.astype(float) * _MICROS[unit]) >= _MAX_US)
        if big.any():
            raise _overflow(node, q, start, big)
        return _ts_array(start + np.where(valid, q, 0) * _MICROS[unit], valid)
    tz = _session_tz(node)
    local = _local_us(ts, tz)
    if unit in ("DAY", "DAYOFYEAR", "WEEK"):
        days = q * (7 if unit == "WEEK" else 1)
        big = valid & (np.abs(local.astype(float) + days.astype(float) * _US_DAY) >= _MAX_US)
        if big.any():
            raise _overflow(node, q, start, big)
        shifted = local + np.where(valid, days, 0) * _US_DAY
    else:
        months = q * {"MONTH": 1, "QUARTER": 3, "YEAR": 12}[unit]
        big = valid & (np.abs(local.astype(float) + months.astype(float) * 31 * _US_DAY)
                       >= _MAX_US)
        if big.any():
            raise _overflow(node, q, start, big)
        shifted = _add_months_local(local, np.where(valid, months, 0))
    return _ts_array(wall_to_instant(shifted, valid, tz), valid)


def _timestampdiff(a, node, b):
    unit = node.arguments[0].value.upper()
    a = a[1:]
    tz = _session_tz(node)
    valid = all_valid(a)
    s = _local_us(a[0], tz)
    e = _local_us(a[1], tz)
    if unit in _MICROS:
        diff = e - s
        out = np.sign(diff) * (np.abs(diff) // _MICROS[unit])
        return pa.array(out, type=pa.int64(), mask=~valid)
    sd, st = np.divmod(s, _US_DAY)
    ed, et = np.divmod(e, _US_DAY)
    # LocalDateTime.until: the end date moves a day towards the start when its time of day
    # has not reached the start's
    ed = np.where((ed > sd) & (et < st), ed - 1, np.where((ed < sd) & (et > st), ed + 1, ed))
    if unit in ("DAY", "WEEK"):
        diff = ed - sd
        k = 7 if unit == "WEEK" else 1
        return pa.array(np.sign(diff) * (np.abs(diff) // k), type=pa.int64(), mask=~valid)

    def packed(days):
        dt = days.astype("datetime64[D]")
        month = dt.astype("datetime64[M]").astype(np.int64)
        dom = (dt - dt.astype("datetime64[M]").astype("datetime64[D]")).astype(np.int64) + 1
        return month * 32 + dom
    diff = packed(ed) - packed(sd)
    months = np.sign(diff) * (np.abs(diff) // 32)
    k = {"MONTH": 1, "QUARTER": 3, "YEAR": 12}[unit]
    return pa.array(np.sign(months) * (np.abs(months) // k), type=pa.int64(), mask=~valid)


def _ts_or_date(t: T.DataType) -> bool:
    return isinstance(t, (T.TimestampType, T.DateType, T.NullType, T.StringType))


register(FunctionSpec(
    "timestampadd", lambda t: (None, L, TS) if (t[1].is_integral or isinstance(
        t[1], (T.NullType, T.StringType))) and _ts_or_date(t[2]) else None,
    lambda t: TS, _timestampadd, may_fail=True, time_zone_aware=True, expected='"TIMESTAMP"',
    nullable=lambda node: any(x.nullable for x in node.arguments)))
register(FunctionSpec(
    "timestampdiff", lambda t: (None, TS, TS) if all(_ts_or_date(x) for x in t[1:]) else None,
    lambda t: L, _timestampdiff, time_zone_aware=True, expected='"TIMESTAMP"',
    nullable=lambda node: any(x.nullable for x in node.arguments)))


def _unit_function(key: str, units: tuple[str, ...]) -> Callable:
    def build(name, a):
        u = a[0]
        unit = str(u.value).upper() if isinstance(u, Literal) and isinstance(u.value, str) \
            else None
        if unit not in units:
            raise AnalysisError(
                f"The value of parameter(s) `unit` in `{key}` is invalid: expects one of the "
                f"units without quotes {', '.join(units)}, but got the string literal "
                f"'{u.value if isinstance(u, Literal) else u.sql()}'.",
                error_class="INVALID_PARAMETER_VALUE.DATETIME_UNIT",
                parameters={"parameter": "`unit`", "functionName": f"`{key}`",
                            "invalidValue": f"'{getattr(u, 'value', u)}'"})
        # the unit stays the first argument as written, a literal (the column name shows it
        # bare: ``timestampadd(month, 1, ts)``)
        return ScalarFunction(key, (u,) + tuple(a[1:]), key)
    return build


def _make_timestamp_node(name, a):
    """The seconds cast to DECIMAL(16, 6) (from any fractional type, as Spark's implicit cast
    does), the call shown with the arguments as written."""
    sec = a[5]
    t = sec.data_type
    # Spark names try_make_timestamp without its time zone argument
    shown = tuple(a[:6]) if name == "try_make_timestamp" else tuple(a)
    if (t.is_numeric and not t.is_integral) and t != T.DecimalType(16, 6):
        args = tuple(a[:5]) + (Cast(sec, T.DecimalType(16, 6)),) + tuple(a[6:])
        return FunctionCall.of(name, shown, ScalarFunction(name, args, name))
    if len(shown) != len(a):
        return FunctionCall.of(name, shown, ScalarFunction(name, tuple(a), name))
    return ScalarFunction(name, tuple(a), name)


#: SQL name -> (min args, max args, builder(name, args))
TIMESTAMP_FUNCTIONS: dict[str, tuple[int, int, Callable]] = {
    "make_timestamp": (6, 7, _make_timestamp_node),
    "try_make_timestamp": (6, 7, _make_timestamp_node),
    "(timestampadd)": (3, 3, _unit_function("timestampadd", _ADD_UNITS)),
    "(timestampdiff)": (3, 3, _unit_function("timestampdiff", _DIFF_UNITS)),
}


def build_timestamp_function(name: str, args: tuple[Expression, ...]) -> Expression:
    return TIMESTAMP_FUNCTIONS[name][2](name, args)
