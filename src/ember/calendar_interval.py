"""Spark's ``CalendarInterval`` strings: parsing (``IntervalUtils.stringToInterval``), display
(``CalendarInterval.toString``) and durations (``IntervalUtils.getDuration``, 31-day months).
Used by ``withWatermark`` delays, ``window`` durations and processing-time triggers.

>>> parse_interval("interval 1 hour 30 minutes")
(0, 0, 5400000000)
>>> interval_string(0, 0, 500000)
'0.5 seconds'
"""

from __future__ import annotations

import re
from decimal import Decimal

from ember.errors import AnalysisError

__all__ = ["parse_interval", "interval_string", "delay_ms", "MICROS_PER_DAY"]

MICROS_PER_SECOND = 1_000_000
MICROS_PER_MINUTE = 60 * MICROS_PER_SECOND
MICROS_PER_HOUR = 60 * MICROS_PER_MINUTE
MICROS_PER_DAY = 24 * MICROS_PER_HOUR

_UNITS = {"year": "year", "month": "month", "week": "week", "day": "day", "hour": "hour",
          "minute": "minute", "second": "second", "millisecond": "millisecond",
          "microsecond": "microsecond"}
_TOKEN = re.compile(r"([+-]?)\s*(\d+)(?:\.(\d+))?\s*([a-z]+)")


def _cannot_parse(text: str) -> AnalysisError:
    return AnalysisError(
        f"Unable to parse '{text}'. Please ensure that the value provided is in a valid format "
        "for defining an interval. You can reference the documentation for the correct format. "
        "If the issue persists, please double check that the input value is not null or empty "
        "and try again.",
        error_class="CANNOT_PARSE_INTERVAL", parameters={"intervalString": f"'{text}'"})


def parse_interval(text: str) -> tuple[int, int, int]:
    """``"1 hour 30 minutes"`` -> ``(months, days, microseconds)`` (Spark's
    ``IntervalUtils.stringToInterval``; an optional leading ``interval``; plural units).

    >>> parse_interval("interval 10 seconds")
    (0, 0, 10000000)
    >>> parse_interval("2 days")
    (0, 2, 0)
    """
    s = text.strip().lower()
    if s.startswith("interval"):
        s = s[len("interval"):].strip()
    if not s:
        raise _cannot_parse(text)
    months = days = micros = 0
    pos = 0
    while pos < len(s):
        m = _TOKEN.match(s, pos)
        if m is None:
            raise _cannot_parse(text)
        sign = -1 if m.group(1) == "-" else 1
        whole, frac, unit = int(m.group(2)), m.group(3), m.group(4)
        unit = _UNITS.get(unit[:-1] if unit.endswith("s") and unit[:-1] in _UNITS else unit)
        if unit is None or (frac is not None and unit != "second"):
            raise _cannot_parse(text)
        match unit:
            case "year":
                months += sign * whole * 12
            case "month":
                months += sign * whole
            case "week":
                days += sign * whole * 7
            case "day":
                days += sign * whole
            case "hour":
                micros += sign * whole * MICROS_PER_HOUR
            case "minute":
                micros += sign * whole * MICROS_PER_MINUTE
            case "second":
                fraction = int((frac or "0")[:6].ljust(6, "0"))
                micros += sign * (whole * MICROS_PER_SECOND + fraction)
            case "millisecond":
                micros += sign * whole * 1000
            case "microsecond":
                micros += sign * whole
        pos = m.end()
        while pos < len(s) and s[pos].isspace():
            pos += 1
    return months, days, micros


def delay_ms(interval: tuple[int, int, int]) -> int:
    """Spark's ``IntervalUtils.getDuration(interval, MILLISECONDS)``: 31-day months, truncated."""
    months, days, micros = interval
    total = months * 31 * MICROS_PER_DAY + days * MICROS_PER_DAY + micros
    return int(total / 1000) if total < 0 else total // 1000


def interval_string(months: int, days: int, micros: int) -> str:
    """Spark's ``CalendarInterval.toString``: ``10 seconds``, ``1 hours 30 minutes``,
    ``0.5 seconds``, ``2 days``."""
    if months == 0 and days == 0 and micros == 0:
        return "0 seconds"
    parts: list[str] = []

    def unit(value: int, name: str) -> None:
        if value != 0:
            parts.append(f"{value} {name}")

    unit(int(months / 12), "years")
    unit(months - int(months / 12) * 12, "months")
    unit(days, "days")
    if micros != 0:
        rest = micros
        hours = int(rest / MICROS_PER_HOUR)
        unit(hours, "hours")
        rest -= hours * MICROS_PER_HOUR
        minutes = int(rest / MICROS_PER_MINUTE)
        unit(minutes, "minutes")
        rest -= minutes * MICROS_PER_MINUTE
        if rest != 0:
            seconds = format(Decimal(rest).scaleb(-6).normalize(), "f")
            parts.append(f"{seconds} seconds")
    return " ".join(parts)
