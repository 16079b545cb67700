"""Functions of the TIMESTAMP_NTZ / TIMESTAMP_LTZ pair: ``to_timestamp_ntz``,
``to_timestamp_ltz``, ``make_timestamp_ntz``, ``make_timestamp_ltz``, their ``try_`` forms and
``localtimestamp``.

- ``to_timestamp_ntz(x[, fmt])`` (Spark's ``ParseToTimestamp`` with ``TimestampNTZType``): a
  string is read as a wall-clock time (a zone in the text is ignored; with ``fmt`` parsed by the
  pattern), a DATE is its midnight, a TIMESTAMP its wall-clock time in the session time zone.
  ``to_timestamp_ltz`` is ``to_timestamp`` that also takes a TIMESTAMP_NTZ (read in the session
  time zone).
- ``make_timestamp_ntz(year, month, day, hour, min, sec)`` / ``make_timestamp_ltz(..., sec[,
  timezone])`` (Spark's ``MakeTimestamp``): ``sec`` is a DECIMAL(16, 6); 60 with no fraction is
  the next minute; a field out of range is ``DATETIME_FIELD_OUT_OF_BOUNDS`` and a second above
  60 ``INVALID_FRACTION_OF_SECOND`` under ANSI, NULL otherwise and in the ``try_`` forms.
- ``localtimestamp()``: the current wall-clock time in the session time zone.

All vectorized over NumPy: the fields are checked and combined per column, not per row.
"""

from __future__ import annotations

import datetime as _dt

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from ember import types as T
from ember.errors import ExecutionError
from ember.expressions import decimals as D
from ember.expressions.base import Literal
from ember.expressions.cast import _local_naive, _ymd_to_days, cast_array, local_to_utc
from ember.expressions.datetime import _parse_error, _to_ts, _tz, parse_with_pattern
from ember.expressions.misc import FunctionSpec, register
from ember.expressions.utf8_kernels import all_valid

__all__ = ["NTZ_FUNCTIONS"]

NTZ, TS, S, I = T.TIMESTAMP_NTZ, T.TIMESTAMP, T.STRING, T.INT
_SEC = T.DecimalType(16, 6)
_MICROS_PER_DAY = 86_400_000_000

#: name -> (spec key, display name, min args, max args), as ``DATETIME_FUNCTIONS``
NTZ_FUNCTIONS: dict[str, tuple[str, str, int, int]] = {}


def _datetime_inputs(types):
    """A string, date, TIMESTAMP or TIMESTAMP_NTZ first argument (other atomic types are read as
    strings, as ``to_timestamp``), then an optional format string."""
    t0 = types[0]
    first = None if isinstance(t0, (T.StringType, T.DateType, T.TimestampType,
                                    T.TimestampNTZType, T.NullType)) else S
    return (first,) + ((S,) if len(types) > 1 else ())


def _to_timestamp_ntz(a, node, b):
    t0 = node.arguments[0].data_type
    src = a[0]
    if len(a) == 1 or not isinstance(t0, T.StringType):
        return cast_array(src, t0, NTZ, node.ansi, _tz(node), legacy=not node.ansi)
    fmt = node.arguments[1]
    if not isinstance(fmt, Literal) or fmt.value is None:
        raise ExecutionError("to_timestamp_ntz needs a literal format",
                             error_class="UNSUPPORTED_FEATURE")
    out = parse_with_pattern(src, fmt.value, False, "UTC").cast(NTZ.to_arrow())
    bad = pc.and_(pc.is_valid(src), pc.is_null(out))
    if node.ansi and pc.any(bad).as_py():  # legacy: unparsable text is NULL
        raise _parse_error(src[pc.index(bad, True).as_py()].as_py(), fmt.value)
    return out


register(FunctionSpec("to_timestamp_ntz", _datetime_inputs, lambda t: NTZ, _to_timestamp_ntz,
                      may_fail=True, time_zone_aware=True, ansi_aware=True))
register(FunctionSpec("to_timestamp_ltz", _datetime_inputs, lambda t: TS, _to_ts(False),
                      may_fail=True, time_zone_aware=True, ansi_aware=True))
NTZ_FUNCTIONS.update({
    "to_timestamp_ntz": ("to_timestamp_ntz", "to_timestamp_ntz", 1, 2),
    "to_timestamp_ltz": ("to_timestamp_ltz", "to_timestamp_ltz", 1, 2),
})


def _field_error(name: str, lo: int, hi: int, value: int) -> ExecutionError:
    msg = f"Invalid value for {name} (valid values {lo} - {hi}): {value}"
    return ExecutionError(f"{msg}.", error_class="DATETIME_FIELD_OUT_OF_BOUNDS.WITHOUT_SUGGESTION",
                          parameters={"rangeMessage": msg})


def _fraction_error(value: str) -> ExecutionError:
    return ExecutionError(
        f"Valid range for seconds is [0, 60] (inclusive), but the provided value is {value}. To "
        "avoid this error, use `try_make_timestamp`, which returns NULL on error.\nIf you do not "
        "want to use the session default timestamp version of this function, use "
        "`try_make_timestamp_ntz` or `try_make_timestamp_ltz`.",
        error_class="INVALID_FRACTION_OF_SECOND", parameters={"secAndMicros": value})


def _seconds_text(micros: int) -> str:
    whole, frac = divmod(abs(micros), 1_000_000)
    text = f"{whole}.{frac:06d}".rstrip("0").rstrip(".") if frac else f"{whole}"
    return ("-" if micros < 0 else "") + text


def _wall_micros(a: list[pa.Array], ansi: bool) -> tuple[np.ndarray, np.ndarray]:
    """Microseconds of the wall-clock times ``a`` = (year, month, day, hour, min, sec) describe,
    and the rows that have one (Spark's ``MakeTimestamp.toMicros``)."""
    y, mo, d, h, mi = (pc.fill_null(x.cast(pa.int64()), 1).to_numpy(zero_copy_only=False)
                       for x in a[:5])
    sec, _ = D.unscaled(a[5])
    sec = np.asarray(sec, dtype=object)
    sec = np.where(sec == None, 0, sec).astype(np.int64)  # noqa: E711 - object array test
    valid = all_valid(a[:6])
    in_year = (y >= -290000) & (y <= 294000)
    days, ok = _ymd_to_days(np.where(in_year, y, 1970), mo, d)
    ok &= in_year & (h >= 0) & (h <= 23) & (mi >= 0) & (mi <= 59)
    whole, frac = np.divmod(sec, 1_000_000)
    sec_ok = (sec >= 0) & ((whole < 60) | ((whole == 60) & (frac == 0)))
    bad = valid & ~(ok & sec_ok)
    if ansi and bad.any():
        i = int(np.flatnonzero(bad)[0])
        if not ok[i]:
            for name, v, lo, hi in (("Year", y, -999_999_999, 999_999_999),
                                    ("MonthOfYear", mo, 1, 12), ("DayOfMonth", d, 1, 31),
                                    ("HourOfDay", h, 0, 23), ("MinuteOfHour", mi, 0, 59)):
                if not lo <= int(v[i]) <= hi:
                    raise _field_error(name, lo, hi, int(v[i]))
            raise ExecutionError(  # a day beyond its month (February 30)
                f"Invalid date '{_dt.date(2000, int(mo[i]), 1).strftime('%B').upper()} "
                f"{int(d[i])}'.", error_class="DATETIME_FIELD_OUT_OF_BOUNDS.WITHOUT_SUGGESTION",
                parameters={"rangeMessage": f"Invalid date '{int(mo[i])}-{int(d[i])}'"})
        raise _fraction_error(_seconds_text(int(sec[i])))
    good = valid & ~bad
    micros = days * _MICROS_PER_DAY + (h * 60 + mi) * 60_000_000 + np.where(good, sec, 0)
    return np.where(good, micros, 0), good


def _make_timestamp(ntz: bool, try_: bool):
    def k(a, node, b):
        micros, good = _wall_micros(a, node.ansi and not try_)
        naive = pa.array(micros, pa.int64(), mask=~good).cast(pa.timestamp("us"))
        if ntz:
            return naive
        if len(a) == 7:  # an explicit time zone, once per distinct zone
            out = pa.nulls(len(naive), TS.to_arrow())
            zones = a[6]
            for zone in pc.unique(zones.drop_null()).to_pylist():
                rows = pc.fill_null(pc.equal(zones, zone), False)
                out = pc.if_else(rows, local_to_utc(naive, zone), out)
            return out
        return local_to_utc(naive, _tz(node))
    return k


def _make_inputs(n: int):
    def inputs(types):
        if len(types) > n:
            return None
        return (I, I, I, I, I, _SEC, S)[:len(types)]
    return inputs


for _name, _ntz, _try in (("make_timestamp_ntz", True, False), ("make_timestamp_ltz", False, False),
                          ("try_make_timestamp_ntz", True, True),
                          ("try_make_timestamp_ltz", False, True)):
    register(FunctionSpec(_name, _make_inputs(6 if _ntz else 7), (lambda t, n=_ntz: NTZ if n else TS),
                          _make_timestamp(_ntz, _try), may_fail=not _try, time_zone_aware=True,
                          ansi_aware=True))
    NTZ_FUNCTIONS[_name] = (_name, _name, 6, 6 if _ntz else 7)


def _localtimestamp(a, node, b):
    now = pa.array([_dt.datetime.now(_dt.timezone.utc)], pa.timestamp("us", tz="UTC"))
    return pa.repeat(_local_naive(now, _tz(node))[0], b.num_rows)


register(FunctionSpec("localtimestamp", lambda t: (), lambda t: NTZ, _localtimestamp,
                      null_intolerant=False, time_zone_aware=True, nullable=lambda n: False))
NTZ_FUNCTIONS["localtimestamp"] = ("localtimestamp", "localtimestamp", 0, 0)


def _convert_timezone(a, node, b):
    """``convert_timezone(source_tz, target_tz, ts)`` (Spark's ``ConvertTimezone``): the
    wall-clock time ``ts`` in ``source_tz`` as the wall-clock time of the same instant in
    ``target_tz`` (once per distinct pair of zones)."""
    src, tgt, ts = a
    out = pa.nulls(len(ts), NTZ.to_arrow())
    keys = pc.binary_join_element_wise(src.cast(pa.string()), tgt.cast(pa.string()), "\n")
    for key in pc.unique(keys.drop_null()).to_pylist():
        source, target = key.split("\n")
        rows = pc.fill_null(pc.equal(keys, key), False)
        moved = _local_naive(local_to_utc(ts.cast(pa.timestamp("us")), source), target)
        out = pc.if_else(rows, moved.cast(NTZ.to_arrow()), out)
    return out


register(FunctionSpec("convert_timezone", lambda t: (S, S, NTZ), lambda t: NTZ, _convert_timezone,
                      expected='"TIMESTAMP_NTZ"'))
NTZ_FUNCTIONS["convert_timezone"] = ("convert_timezone", "convert_timezone", 2, 3)
