"""Spark's ``CalendarIntervalType`` (``interval``) values: months, days and microseconds kept
apart, as an Arrow ``month_day_nano_interval`` (nanoseconds = microseconds x 1000).

- ``CAST(s AS INTERVAL)`` (Spark's ``IntervalUtils.safeStringToInterval``): the unit/value text
  of :func:`ember.calendar_interval.parse_interval` (``'1 second'``, ``'-  1 day 2 hours'``);
  NULL for text that does not parse, under ANSI too.  Parsed once per distinct string.
- ``CAST(i AS STRING)``: ``CalendarInterval.toString`` (``1 years 2 months 3 days 4.5 seconds``),
  once per distinct value.
- ``make_interval(years, months, weeks, days, hours, mins, secs)`` / ``try_make_interval``
  (Spark's ``MakeInterval``; missing arguments are 0, ``secs`` a DECIMAL(18, 6)): overflow of a
  field is ``ARITHMETIC_OVERFLOW`` (NULL for ``try_make_interval``).  Vectorized over NumPy.

Spark makes no CalendarInterval literal under its default configuration (a mixed
``INTERVAL '1 month 1 day'`` is an error), and the type is neither comparable nor orderable.
"""

from __future__ import annotations

from decimal import Decimal

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from ember import types as T
from ember.calendar_interval import interval_string, parse_interval
from ember.errors import AnalysisError, ArithmeticError_
from ember.expressions import decimals as D
from ember.expressions.base import Expression, Literal
from ember.expressions.misc import FunctionSpec, ScalarFunction, register
from ember.expressions.utf8_kernels import all_valid

__all__ = ["calendar_intervals", "calendar_parts", "strings_to_calendar", "calendar_to_strings",
           "CALENDAR_FUNCTIONS", "build_make_interval"]

_MDN = np.dtype([("months", "<i4"), ("days", "<i4"), ("nanos", "<i8")])
_INT_MIN, _INT_MAX = -(1 << 31), (1 << 31) - 1
_LONG_MIN, _LONG_MAX = -(1 << 63), (1 << 63) - 1


def calendar_intervals(months: np.ndarray, days: np.ndarray, micros: np.ndarray,
                       valid: np.ndarray) -> pa.Array:
    """A ``month_day_nano_interval`` array from its parts (NULL where not ``valid``).  Arrow
    keeps the time part in nanoseconds: beyond +-2^63 ns (about 106751 days) is an overflow
    here, where Spark's microseconds would still hold it."""
    n = len(valid)
    if (valid & ((micros > _LONG_MAX // 1000) | (micros < _LONG_MIN // 1000))).any():
        raise _overflow("long")
    values = np.zeros(n, dtype=_MDN)
    values["months"] = np.where(valid, months, 0)
    values["days"] = np.where(valid, days, 0)
    values["nanos"] = np.where(valid, micros, 0) * 1000
    mask = None if valid.all() else pa.array(valid).buffers()[1]
    return pa.Array.from_buffers(pa.month_day_nano_interval(), n,
                                 [mask, pa.py_buffer(values.tobytes())],
                                 null_count=int(n - valid.sum()))


def calendar_parts(arr: pa.Array) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """``(months, days, microseconds, valid)`` of a ``month_day_nano_interval`` array."""
    if isinstance(arr, pa.ChunkedArray):
        arr = arr.combine_chunks()
    n = len(arr)
    raw = np.frombuffer(arr.buffers()[1], dtype=_MDN, count=arr.offset + n)[arr.offset:]
    valid = pc.is_valid(arr).to_numpy(zero_copy_only=False)
    return (raw["months"].astype(np.int64), raw["days"].astype(np.int64),
            raw["nanos"] // 1000, valid)


def strings_to_calendar(arr: pa.Array) -> pa.Array:
    """``CAST(s AS INTERVAL)``: NULL where the text is not an interval (once per distinct
    string)."""
    strings = arr.cast(pa.large_string())
    distinct = pc.unique(strings.drop_null())
    parsed: list[tuple[int, int, int] | None] = []
    for text in distinct.to_pylist():
        try:
            parsed.append(parse_interval(text))
        except AnalysisError:
            parsed.append(None)
    idx = pc.fill_null(pc.index_in(strings, value_set=distinct), -1).to_numpy(
        zero_copy_only=False).astype(np.int64)
    table = np.array([p if p is not None else (0, 0, 0) for p in parsed] + [(0, 0, 0)],
                     dtype=object).reshape(-1, 3)
    ok = np.array([p is not None for p in parsed] + [False], dtype=bool)
    pick = np.where(idx >= 0, idx, len(parsed))
    valid = ok[pick]
    safe = np.where(valid, pick, 0)
    return calendar_intervals(table[safe, 0].astype(np.int64), table[safe, 1].astype(np.int64),
                              table[safe, 2].astype(np.int64), valid)


def calendar_to_strings(arr: pa.Array) -> pa.Array:
    """``CAST(i AS STRING)``: ``CalendarInterval.toString`` (once per distinct value)."""
    months, days, micros, valid = calendar_parts(arr)
    parts = np.stack([months, days, micros], axis=1)
    uniq, inverse = np.unique(parts, axis=0, return_inverse=True)
    texts = np.array([interval_string(int(m), int(d), int(u)) for m, d, u in uniq], dtype=object)
    out = texts[inverse.reshape(-1)] if len(parts) else np.array([], dtype=object)
    return pa.array(out, pa.large_string(), mask=~valid)


# ---------------------------------------------------------------------------------------------
# make_interval / try_make_interval

_SECS = T.DecimalType(18, 6)
#: microseconds per unit of make_interval's hours and minutes
_HOUR, _MINUTE = 3_600_000_000, 60_000_000


def _overflow(what: str) -> ArithmeticError_:
    return ArithmeticError_(
        f"{what} overflow. If necessary set \"spark.sql.ansi.enabled\" to \"false\" to bypass "
        "this error.", error_class="ARITHMETIC_OVERFLOW",
        parameters={"message": f"{what} overflow", "alternative": "",
                    "config": '"spark.sql.ansi.enabled"'})


def _make_interval(try_: bool):
    def k(a, node, b):
        y, mo, w, d, h, mi = (pc.fill_null(x.cast(pa.int64()), 0).to_numpy(
            zero_copy_only=False).astype(object) for x in a[:6])
        secs, _ = D.unscaled(a[6])
        secs = np.asarray(secs, dtype=object)
        secs = np.where(secs == None, 0, secs)  # noqa: E711 - object array test
        valid = all_valid(a)
        months = y * 12 + mo
        days = w * 7 + d
        micros = h * _HOUR + mi * _MINUTE + secs
        bad_int = valid & ((months < _INT_MIN) | (months > _INT_MAX) | (days < _INT_MIN)
                           | (days > _INT_MAX)).astype(bool)
        bad_long = valid & ((micros < _LONG_MIN) | (micros > _LONG_MAX)).astype(bool)
        if not try_ and node.ansi and (bad_int.any() or bad_long.any()):
            raise _overflow("integer" if bad_int.any() else "long")
        valid = valid & ~bad_int & ~bad_long
        return calendar_intervals(np.where(valid, months, 0).astype(np.int64),
                                  np.where(valid, days, 0).astype(np.int64),
                                  np.where(valid, micros, 0).astype(np.int64), valid)
    return k


def _make_inputs(types):
    if not all(isinstance(t, (T.NumericType, T.StringType, T.NullType)) for t in types):
        return None
    return (T.INT,) * 6 + (_SECS,)


for _name, _try in (("make_interval", False), ("try_make_interval", True)):
    register(FunctionSpec(_name, _make_inputs, lambda t: T.CALENDAR_INTERVAL, _make_interval(_try),
                          may_fail=not _try, ansi_aware=True, expected='"NUMERIC"'))

#: ``{name: (min args, max args)}`` of the functions :func:`build_make_interval` builds
CALENDAR_FUNCTIONS = {"make_interval": (0, 7), "try_make_interval": (0, 7)}


def build_make_interval(name: str, args: tuple[Expression, ...]) -> Expression:
    """``make_interval(y)`` with Spark's defaults shown: ``make_interval(1, 0, 0, 0, 0, 0,
    0.000000)``."""
    zero = Literal(0, T.INT)
    defaults = (zero,) * 6 + (Literal(Decimal("0.000000"), _SECS),)
    return ScalarFunction(name, tuple(args) + defaults[len(args):], name.lower())
