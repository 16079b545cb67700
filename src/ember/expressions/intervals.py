"""ANSI interval values (Spark 4, ``spark.sql.legacy.interval.enabled=false``).

Types: ``YearMonthIntervalType(start, end)`` holds months (Arrow ``int32``);
``DayTimeIntervalType(start, end)`` holds microseconds (Arrow ``duration[us]``, so collect gives
``datetime.timedelta`` as PySpark does; an Arrow ``duration`` column of any unit enters as
``interval day to second``).  The fields only bound literals, casts and the text form.

Literals (:func:`interval_literal`, :func:`multi_unit_interval`; built by the SQL front end, so
SQL and ``F.expr`` alike):

- ``INTERVAL '1-2' YEAR TO MONTH``, ``INTERVAL '1 02:03:04.5' DAY TO SECOND`` and every other
  ``DAY|HOUR|MINUTE TO HOUR|MINUTE|SECOND`` form: Spark's strict ``fromDayTimeString`` patterns
  (non-leading fields range-checked: ``hour 25 outside range [0, 23]``).
- Unit/value pairs, quoted or not: ``INTERVAL 8 MINUTES``, ``INTERVAL '1.5' SECOND``,
  ``INTERVAL 1 DAY 2 HOURS``, ``INTERVAL '1 day 2 hours'``, weeks, milliseconds, microseconds,
  negative values (``INTERVAL -3 DAYS``, ``INTERVAL -'1' HOUR``).  The type spans the largest
  to the smallest unit given (``interval day to hour``); only seconds may have a fraction
  (``INVALID_INTERVAL_FORMAT.INVALID_FRACTION``); mixing year/month with day-time units is
  Spark's parse error ``Cannot mix year-month and day-time fields`` (Spark 4 makes no
  CalendarInterval literal under the default configuration).
- A literal is an :class:`IntervalLiteral`: ``value`` counts months (year-month) or units of its
  end field (days, hours, minutes; microseconds for SECOND).  Its text is Spark's
  ``toDayTimeIntervalString``/``toYearMonthIntervalString`` (``INTERVAL '08' MINUTE``).

Text form (:func:`format_intervals`, vectorized; CAST to STRING; :func:`python_interval_string`
for ``show()``): ``INTERVAL '-1 02:03:04.5' DAY TO SECOND``, ``INTERVAL '1-2' YEAR TO MONTH``; a
value finer than the end field is cut (an ``interval hour`` of 90 minutes prints ``'01' HOUR``).
CAST string -> interval accepts the target's own pattern, bare or wrapped in ``INTERVAL '...'
<fields>`` (:func:`parse_interval_strings`); CAST interval -> interval of the same kind truncates
to the end field.  Comparisons, ordering, grouping, joins and min/max work on the physical values
(coercion widens two intervals of one kind to the smallest start / largest end field).

Functions: ``make_dt_interval(d, h, m, s)``, ``make_ym_interval(y, m)`` (Spark's defaults shown
in names).  Arithmetic (``ts +/- interval``, ``ts - ts``, ``date - date``, ``i +/- i``,
``i * n``, ``i / n``, ``- i``, ``abs(i)``) lives in :mod:`ember.expressions.interval_arithmetic`,
built by :mod:`ember.analysis.rules.resolve_binary_arithmetic`.

CalendarIntervalType (``make_interval``, ``CAST(s AS INTERVAL)``) lives in
:mod:`ember.expressions.calendar_intervals`.  Not supported: ``sum``/``avg``/``extract`` over
intervals.
"""

from __future__ import annotations

import re

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from ember import types as T
from ember.errors import ParseError, CastError, ArithmeticError_
from ember.expressions.base import Expression, LeafExpression, Literal
from ember.expressions.common import to_array
from ember.trees import node
from ember.expressions import decimals as D
from ember.expressions.arithmetic import UnaryMinus
from ember.expressions.misc import FunctionSpec, register, ScalarFunction

__all__ = [
    "IntervalLiteral", "ExtractANSIIntervalDays", "DateAddYMInterval", "IntervalMonths",
    "interval_literal", "multi_unit_interval", "format_interval", "format_intervals",
    "parse_interval_strings", "interval_type_string", "python_interval_string", "MICROS",
]

YM_FIELDS = ("YEAR", "MONTH")
DT_FIELDS = ("DAY", "HOUR", "MINUTE", "SECOND")
#: microseconds per unit of each day-time field (the SECOND field counts microseconds)
MICROS = {"DAY": 86_400_000_000, "HOUR": 3_600_000_000, "MINUTE": 60_000_000, "SECOND": 1}
_MICROS_PER_SECOND = 1_000_000
_LONG_MIN, _LONG_MAX = -(1 << 63), (1 << 63) - 1


def _unit_micros(unit: str) -> int:
    return MICROS[unit]


@node
class IntervalLiteral(LeafExpression):
    """An ANSI interval constant.

    ``value``: months for YEAR/MONTH fields; otherwise the count of the end field's unit (days,
    hours, minutes, or microseconds when the end field is SECOND).

    >>> IntervalLiteral(90, "DAY", "DAY").sql()
    "INTERVAL '90' DAY"
    >>> IntervalLiteral(14, "YEAR", "MONTH").sql()
    "INTERVAL '1-2' YEAR TO MONTH"
    >>> IntervalLiteral(8, "MINUTE", "MINUTE").sql()
    "INTERVAL '08' MINUTE"
    """

    value: int
    start_unit: str
    end_unit: str

    @property
    def is_year_month(self) -> bool:
        return self.start_unit in YM_FIELDS

    @property
    def micros(self) -> int:
        """The day-time value in microseconds."""
        return self.value * _unit_micros(self.end_unit)

    @property
    def data_type(self) -> T.DataType:
        if self.is_year_month:
            return T.YearMonthIntervalType(YM_FIELDS.index(self.start_unit),
                                           YM_FIELDS.index(self.end_unit))
        return T.DayTimeIntervalType(DT_FIELDS.index(self.start_unit),
                                     DT_FIELDS.index(self.end_unit))

    @property
    def nullable(self) -> bool:
        return False

    @property
    def foldable(self) -> bool:
        return True

    @property
    def resolved(self) -> bool:
        return True

    def scalar(self) -> pa.Scalar:
        if self.is_year_month:
            return pa.scalar(self.value, pa.int32())
        return pa.scalar(self.micros, pa.duration("us"))

    def eval(self, batch: pa.RecordBatch) -> pa.Array:
        return pa.repeat(self.scalar(), batch.num_rows)

    def simple_string(self) -> str:
        return self.sql()

    def sql(self) -> str:
        v = self.value if self.is_year_month else self.micros
        return format_interval(v, self.data_type)


# ---------------------------------------------------------------------------------------------
# Text form


def interval_type_string(t: T.DataType) -> str:
    """``DAY TO SECOND`` / ``HOUR`` / ``YEAR TO MONTH``: the fields part of an interval's text."""
    names = YM_FIELDS if isinstance(t, T.YearMonthIntervalType) else DT_FIELDS
    s, e = names[t.start_field], names[t.end_field]  # type: ignore[attr-defined]
    return s if s == e else f"{s} TO {e}"


def _seconds_text(rest: int, lead_zero: bool) -> str:
    whole, frac = divmod(rest, _MICROS_PER_SECOND)
    text = f"{whole:02d}" if lead_zero else str(whole)
    if frac:
        text += "." + f"{frac:06d}".rstrip("0")
    return text


def format_interval(value: int, t: T.DataType) -> str:
    """One interval as Spark's ANSI text (``IntervalUtils.to{DayTime,YearMonth}IntervalString``).

    >>> format_interval(-93784500000, T.DayTimeIntervalType(0, 3))
    "INTERVAL '-1 02:03:04.5' DAY TO SECOND"
    """
    fields = interval_type_string(t)
    if isinstance(t, T.YearMonthIntervalType):
        sign = "-" if value < 0 else ""
        a = abs(value)
        if t.start_field != t.end_field:
            text = f"{sign}{a // 12}-{a % 12}"
        elif t.start_field == 0:
            text = f"{sign}{a // 12}"
        else:
            text = str(value)
        return f"INTERVAL '{text}' {fields}"
    assert isinstance(t, T.DayTimeIntervalType)
    s, e = t.start_field, t.end_field
    sign = "-" if value < 0 else ""
    rest = abs(value)
    lead = DT_FIELDS[s]
    if lead == "SECOND":
        text = _seconds_text(rest, rest < 10 * _MICROS_PER_SECOND)
    else:
        q, rest = divmod(rest, MICROS[lead])
        text = str(q) if lead == "DAY" else f"{q:02d}"
    for i, sep in ((1, " "), (2, ":")):
        if s < i <= e:
            q, rest = divmod(rest, MICROS[DT_FIELDS[i]])
            text += f"{sep}{q:02d}"
    if s < 3 <= e:
        text += ":" + _seconds_text(rest, True)
    return f"INTERVAL '{sign}{text}' {fields}"


def python_interval_string(v: object, t: T.DataType) -> str:
    """A collected interval (``datetime.timedelta`` for day-time, months ``int`` for
    year-month) as ``show()`` prints it: Spark's ANSI text."""
    import datetime as _dt

    if isinstance(v, _dt.timedelta):
        v = (v.days * 86_400 + v.seconds) * _MICROS_PER_SECOND + v.microseconds
    return format_interval(int(v), t)  # type: ignore[call-overload]


def _int_strings(v: np.ndarray, pad: bool) -> pa.Array:
    s = pa.array(v, pa.int64()).cast(pa.string())
    return pc.utf8_lpad(s, width=2, padding="0") if pad else s


def _seconds_strings(rest: np.ndarray) -> pa.Array:
    """``ss[.ffffff]`` without trailing zeros (a leading SECOND field pads below 10 seconds
    too, as Spark's ``leadZero``)."""
    whole, frac = np.divmod(rest, _MICROS_PER_SECOND)
    text = pc.utf8_lpad(pa.array(whole).cast(pa.string()), width=2, padding="0")
    fr = pc.utf8_lpad(pa.array(frac).cast(pa.string()), width=6, padding="0")
    fr = pc.binary_join_element_wise(".", pc.utf8_rtrim(fr, characters="0"), "")
    return pc.if_else(pa.array(frac > 0), pc.binary_join_element_wise(text, fr, ""), text)


def format_intervals(arr: pa.Array, t: T.DataType) -> pa.Array:
    """A column of intervals as Spark's ANSI text (vectorized :func:`format_interval`; NULL
    stays NULL).  ``Long.MinValue`` microseconds are not special-cased."""
    n = len(arr)
    valid = arr.is_valid().to_numpy(zero_copy_only=False) if arr.null_count else None
    raw = arr.cast(pa.int64()) if not pa.types.is_int64(arr.type) else arr
    v = pc.fill_null(raw, 0).to_numpy(zero_copy_only=False).astype(np.int64)
    neg = v < 0
    a = np.abs(v)
    sign = pa.array(np.where(neg, "-", ""))
    parts: list[pa.Array] = []
    if isinstance(t, T.YearMonthIntervalType):
        if t.start_field != t.end_field:
            parts = [sign, _int_strings(a // 12, False), pa.repeat(pa.scalar("-"), n),
                     _int_strings(a % 12, False)]
        elif t.start_field == 0:
            parts = [sign, _int_strings(a // 12, False)]
        else:
            parts = [_int_strings(v, False)]
    else:
        assert isinstance(t, T.DayTimeIntervalType)
        s, e = t.start_field, t.end_field
        rest = a
        parts = [sign]
        lead = DT_FIELDS[s]
        if lead == "SECOND":
            parts.append(_seconds_strings(rest))
        else:
            q, rest = np.divmod(rest, MICROS[lead])
            parts.append(_int_strings(q, lead != "DAY"))
        for i, sep in ((1, " "), (2, ":")):
            if s < i <= e:
                q, rest = np.divmod(rest, MICROS[DT_FIELDS[i]])
                parts += [pa.repeat(pa.scalar(sep), n), _int_strings(q, True)]
        if s < 3 <= e:
            parts += [pa.repeat(pa.scalar(":"), n), _seconds_strings(rest)]
    parts = [pa.repeat(pa.scalar("INTERVAL '"), n)] + parts + [
        pa.repeat(pa.scalar(f"' {interval_type_string(t)}"), n)]
    out = pc.binary_join_element_wise(*parts, "")
    if valid is not None:
        out = pc.if_else(pa.array(valid), out, pa.nulls(n, pa.string()))
    return out.cast(pa.large_string())


# ---------------------------------------------------------------------------------------------
# Literal parsing


def _format_error(text: str, detail: str, sub: str) -> ParseError:
    return ParseError(
        f"Error parsing '{text}' to interval. Please ensure that the value provided is in a valid "
        f"format for defining an interval. You can reference the documentation for the correct "
        f"format. {detail}", error_class=f"INVALID_INTERVAL_FORMAT.{sub}",
        parameters={"input": text})


#: Spark's strict day-time patterns (``IntervalUtils.fromDayTimeString``), keyed by fields.
_DT_PATTERNS = {
    ("DAY", "DAY"): (r"(?P<d>\d+)", "[+|-]d"),
    ("DAY", "HOUR"): (r"(?P<d>\d+) (?P<h>\d{1,2})", "[+|-]d h"),
    ("DAY", "MINUTE"): (r"(?P<d>\d+) (?P<h>\d{1,2}):(?P<m>\d{1,2})", "[+|-]d h:m"),
    ("DAY", "SECOND"): (r"(?P<d>\d+) (?P<h>\d{1,2}):(?P<m>\d{1,2}):(?P<s>\d{1,2})"
                        r"(\.(?P<f>\d{1,9}))?", "[+|-]d h:m:s.n"),
    ("HOUR", "HOUR"): (r"(?P<h>\d+)", "[+|-]h"),
    ("HOUR", "MINUTE"): (r"(?P<h>\d+):(?P<m>\d{1,2})", "[+|-]h:m"),
    ("HOUR", "SECOND"): (r"(?P<h>\d+):(?P<m>\d{1,2}):(?P<s>\d{1,2})(\.(?P<f>\d{1,9}))?",
                         "[+|-]h:m:s.n"),
    ("MINUTE", "MINUTE"): (r"(?P<m>\d+)", "[+|-]m"),
    ("MINUTE", "SECOND"): (r"(?P<m>\d+):(?P<s>\d{1,2})(\.(?P<f>\d{1,9}))?", "[+|-]m:s.n"),
    ("SECOND", "SECOND"): (r"(?P<s>\d+)(\.(?P<f>\d{1,9}))?", "[+|-]s.n"),
}
_YM_PATTERNS = {
    ("YEAR", "YEAR"): (r"(?P<y>\d+)", "[+|-]y"),
    ("YEAR", "MONTH"): (r"(?P<y>\d+)-(?P<mo>\d{1,2})", "[+|-]y-m"),
    ("MONTH", "MONTH"): (r"(?P<mo>\d+)", "[+|-]m"),
}
_RANGES = {"h": ("hour", 23), "m": ("minute", 59), "s": ("second", 59), "mo": ("month", 11)}
#: Spark's bounds of a leading day-time field (``IntervalUtils.fromDayTimeString``)
_LEAD_RANGES = {"d": ("day", 106751991), "h": ("hour", 2562047788),
                "m": ("minute", 153722867280)}


def _fields_value(groups: dict, lead: str, start: str, end: str) -> int:
    """The value (months, or micros) of matched fields; range-checks the non-leading ones."""
    for key, (name, hi) in _RANGES.items():
        if key != lead and groups.get(key) is not None and int(groups[key]) > hi:
            raise ValueError(f"requirement failed: {name} {int(groups[key])} outside range "
                             f"[0, {hi}].")
    if lead in _LEAD_RANGES and groups.get(lead) is not None:
        name, hi = _LEAD_RANGES[lead]  # a leading field whose micros would overflow a long
        if int(groups[lead]) > hi:
            raise ValueError(f"requirement failed: {name} {int(groups[lead])} outside range "
                             f"[0, {hi}].")
    if start in YM_FIELDS:
        return int(groups.get("y") or 0) * 12 + int(groups.get("mo") or 0)
    f = (groups.get("f") or "").ljust(9, "0")[:6]
    return (int(groups.get("d") or 0) * MICROS["DAY"] + int(groups.get("h") or 0) * MICROS["HOUR"]
            + int(groups.get("m") or 0) * MICROS["MINUTE"]
            + int(groups.get("s") or 0) * _MICROS_PER_SECOND + int(f or 0))


_LEAD_KEY = {"DAY": "d", "HOUR": "h", "MINUTE": "m", "SECOND": "s", "YEAR": "y", "MONTH": "mo"}


def _unit_to_unit(text: str, start: str, end: str, type_text: str, allow_wrapper: bool) -> int:
    """Months or micros of ``text`` in the strict pattern of ``start TO end`` (ValueError with
    Spark's detail when it does not match)."""
    ym = start in YM_FIELDS
    pattern, shape = (_YM_PATTERNS if ym else _DT_PATTERNS)[(start, end)]
    fields = start if start == end else f"{start} TO {end}"
    body = rf"(?P<sign>[+-])?{pattern}"
    t = text.strip()
    m = re.fullmatch(body, t)
    outer = 1
    if m is None and allow_wrapper:
        fields_re = fields.replace(" ", r"\s+")
        w = re.fullmatch(rf"(?i:INTERVAL)\s+(?P<osign>[+-])?'\s*(?P<inner>[^']*?)\s*'\s+"
                         rf"(?i:{fields_re})", t)
        if w is not None:
            outer = -1 if w.group("osign") == "-" else 1
            m = re.fullmatch(body, w.group("inner"))
    if m is None:
        kind = "year-month" if ym else "day-time"
        raise ValueError(
            f"Interval string does not match {kind} format of `{shape}`, `INTERVAL "
            f"[+|-]'{shape}' {fields}` when cast to {type_text}: {text}.")
    g = m.groupdict()
    v = _fields_value(g, _LEAD_KEY[start], start, end)
    return outer * (-v if g.get("sign") == "-" else v)


def interval_literal(text: str, unit: str | None, to_unit: str | None = None) -> IntervalLiteral:
    """The literal ``INTERVAL '<text>' <unit> [TO <to_unit>]`` (``unit`` None: the units are in
    the text, as in ``INTERVAL '1 day 2 hours'``).  Raises ``ParseError`` as Spark does.

    >>> interval_literal("1 02:03:04.5", "DAY", "SECOND").sql()
    "INTERVAL '1 02:03:04.5' DAY TO SECOND"
    """
    if unit is None:
        return _string_multi_unit(text)
    if to_unit is None:
        return multi_unit_interval([(text, unit)], f"INTERVAL '{text}' {unit}")
    start, end = unit.upper(), to_unit.upper()
    order = YM_FIELDS if start in YM_FIELDS else DT_FIELDS
    if (start not in order or end not in order or order.index(start) >= order.index(end)):
        raise _format_error(text, f"Cannot support (interval '{text}' {unit.lower()} to "
                            f"{to_unit.lower()}) expression.", "UNSUPPORTED_FROM_TO_EXPRESSION")
    t = T.YearMonthIntervalType(0, 1) if start in YM_FIELDS else T.DayTimeIntervalType(
        DT_FIELDS.index(start), DT_FIELDS.index(end))
    try:
        v = _unit_to_unit(text, start, end, t.simple_string(), allow_wrapper=False)
    except ValueError as e:
        msg = str(e)
        if msg.startswith("requirement failed"):
            raise ParseError(msg, error_class="_LEGACY_ERROR_TEMP_0063",
                             parameters={"msg": msg}) from None
        if start in YM_FIELDS:  # Spark's notice is about fromDayTimeString only
            raise _format_error(text, msg, "UNMATCHED_FORMAT_STRING") from None
        raise _format_error(text, msg + ' Set "spark.sql.legacy.fromDayTimeString.enabled" to '
                            '"true" to restore the behavior before Spark 3.0.',
                            "UNMATCHED_FORMAT_STRING_WITH_NOTICE") from None
    if start in YM_FIELDS:
        if not -(1 << 31) <= v < (1 << 31):
            raise _format_error(text, f"Error parsing interval year-month string: integer "
                                f"overflow", "INTERVAL_PARSING")
        return IntervalLiteral(v, start, end)
    return IntervalLiteral(v // _unit_micros(end), start, end)


_UNIT_ALIASES = {
    "YEAR": ("YEAR", 12), "MONTH": ("MONTH", 1), "WEEK": ("DAY", 7 * MICROS["DAY"]),
    "DAY": ("DAY", MICROS["DAY"]), "HOUR": ("HOUR", MICROS["HOUR"]),
    "MINUTE": ("MINUTE", MICROS["MINUTE"]), "SECOND": ("SECOND", _MICROS_PER_SECOND),
    "MILLISECOND": ("SECOND", 1000), "MICROSECOND": ("SECOND", 1),
}
_NUMBER = re.compile(r"[+-]?\s*(\d+(\.\d*)?|\.\d+)")


def multi_unit_interval(pairs: list[tuple[str, str]], source: str) -> IntervalLiteral:
    """The literal ``INTERVAL v1 unit1 v2 unit2 ...`` (Spark's multi-unit form): the type spans
    the smallest and largest field named; year-month and day-time units cannot be mixed."""
    months = micros = 0
    fields: list[str] = []
    for value, unit in pairs:
        u = unit.upper()
        base = u[:-1] if u.endswith("S") and u[:-1] in _UNIT_ALIASES else u
        if base not in _UNIT_ALIASES and base != "NANOSECOND":
            raise ParseError(f"Invalid interval unit: {unit}.", error_class="PARSE_SYNTAX_ERROR")
        if base not in _UNIT_ALIASES:  # a unit of Spark's grammar it cannot build
            err = _format_error(f" {value} {unit}", f"Invalid unit '{unit.lower()}'.",
                                "INVALID_UNIT")
            err.parameters["unit"] = unit.lower()
            raise err
        v = re.sub(r"^([+-])\s+", r"\1", value.strip())  # '-\t 1' is -1
        if not _NUMBER.fullmatch(v):
            raise ParseError(
                "Can only use numbers in the interval value part for multiple unit value pairs "
                f"interval form, but got invalid value: {value}.",
                error_class="_LEGACY_ERROR_TEMP_0026", parameters={"value": value})
        field, factor = _UNIT_ALIASES[base]
        if "." in v:
            if base != "SECOND":
                raise _format_error(f" {value} {unit}", f"{unit.lower()} cannot have fractional "
                                    "part.", "INVALID_FRACTION")
            sign = -1 if v.startswith("-") else 1
            whole, frac = v.lstrip("+-").split(".")
            amount = sign * (int(whole or 0) * _MICROS_PER_SECOND + int(frac.ljust(9, "0")[:6]))
            factor = 1
        else:
            amount = int(v)
        if field in YM_FIELDS:
            months += amount * factor
        else:
            micros += amount * factor
        fields.append(field)
    ym = [f for f in fields if f in YM_FIELDS]
    if ym and len(ym) != len(fields):
        raise ParseError(f"Cannot mix year-month and day-time fields: {source}.",
                         error_class="_LEGACY_ERROR_TEMP_0029", parameters={"literal": source})
    if ym:
        idx = [YM_FIELDS.index(f) for f in ym]
        if not -(1 << 31) <= months < (1 << 31):
            raise _overflow_literal(source)
        return IntervalLiteral(months, YM_FIELDS[min(idx)], YM_FIELDS[max(idx)])
    idx = [DT_FIELDS.index(f) for f in fields]
    start, end = DT_FIELDS[min(idx)], DT_FIELDS[max(idx)]
    if not _LONG_MIN <= micros <= _LONG_MAX:
        # Spark's IntervalUtils: the microseconds overflow a long while the units are summed
        raise interval_overflow(None)
    # the end field is the finest unit given (only SECOND takes fractions), so this is exact
    return IntervalLiteral(micros // _unit_micros(end), start, end)


def interval_overflow(try_fn: str | None) -> ArithmeticError_:
    """Spark's ``INTERVAL_ARITHMETIC_OVERFLOW`` (``i + i``, ``i - i``, ``- i``, ``i / n``,
    ``make_dt_interval``, an out-of-range literal), naming ``try_fn`` when there is one."""
    if try_fn:
        return ArithmeticError_(
            f"Integer overflow while operating with intervals. Use `{try_fn}` to tolerate "
            "overflow and return NULL instead.",
            error_class="INTERVAL_ARITHMETIC_OVERFLOW.WITH_SUGGESTION",
            parameters={"functionName": f"`{try_fn}`"})
    return ArithmeticError_(
        "Integer overflow while operating with intervals. Try devising appropriate values for "
        "the interval parameters.", error_class="INTERVAL_ARITHMETIC_OVERFLOW.WITHOUT_SUGGESTION")


def _overflow_literal(source: str) -> ParseError:
    return ParseError(f"Interval value out of range: {source}.",
                      error_class="INVALID_TYPED_LITERAL",
                      parameters={"valueType": '"INTERVAL"', "value": source})


def _string_multi_unit(text: str) -> IntervalLiteral:
    body = text.strip()
    if body.lower().startswith("interval "):
        body = body[9:]
    tokens = body.split()
    if not tokens or len(tokens) % 2:
        raise _invalid_typed(text)
    pairs = [(tokens[i], tokens[i + 1]) for i in range(0, len(tokens), 2)]
    try:
        return multi_unit_interval(pairs, f"INTERVAL '{text}'")
    except ParseError as e:
        if e.error_class in ("PARSE_SYNTAX_ERROR", "INVALID_INTERVAL_FORMAT.INVALID_UNIT",
                             "_LEGACY_ERROR_TEMP_0026"):
            raise _invalid_typed(text) from None
        raise


def _invalid_typed(text: str) -> ParseError:
    return ParseError(f"The value of the typed literal \"INTERVAL\" is invalid: '{text}'.",
                      error_class="INVALID_TYPED_LITERAL",
                      parameters={"valueType": '"INTERVAL"', "value": f"'{text}'"})


# ---------------------------------------------------------------------------------------------
# CAST string -> interval


def parse_interval_strings(arr: pa.Array, t: T.DataType, ansi: bool = True) -> pa.Array:
    """Strings parsed as intervals of type ``t`` (Spark's ``castStringToDTInterval`` /
    ``castStringToYMInterval`` for the target's own pattern).  Invalid input raises Spark's
    ``INVALID_INTERVAL_FORMAT`` (NULL with ``ansi=False``).  Runs once per distinct string
    (interval strings in data are few and repetitive; a Python parse per distinct value)."""

    names = YM_FIELDS if isinstance(t, T.YearMonthIntervalType) else DT_FIELDS
    start, end = names[t.start_field], names[t.end_field]  # type: ignore[attr-defined]
    uniq = pc.unique(arr)
    values: list[int | None] = []
    for s in uniq.to_pylist():
        if s is None:
            values.append(None)
            continue
        try:
            v = _unit_to_unit(s, start, end, t.simple_string(), allow_wrapper=True)
        except ValueError as e:
            if not ansi:
                values.append(None)
                continue
            err = _format_error(s, str(e) + ' Set "spark.sql.legacy.fromDayTimeString.enabled" '
                                'to "true" to restore the behavior before Spark 3.0.',
                                "UNMATCHED_FORMAT_STRING_WITH_NOTICE")
            raise CastError(err.message, error_class=err.error_class,
                            parameters=err.parameters) from None
        values.append(v)
    idx = pc.index_in(arr, value_set=uniq)
    out = pc.take(pa.array(values, pa.int64()), idx)
    return out.cast(t.to_arrow())


def truncate_interval(arr: pa.Array, from_t: T.DataType, to_t: T.DataType) -> pa.Array:
    """CAST between two interval types of one kind: the value cut to the target's end field
    (toward zero, as Spark's ``durationToMicros(d, endField)`` / ``months - months % 12``)."""
    if isinstance(to_t, T.YearMonthIntervalType):
        if to_t.end_field == 0:
            m = arr.cast(pa.int32())
            return pc.subtract(m, pc.multiply(pc.divide(m, 12), 12))  # int division truncates
        return arr.cast(pa.int32())
    unit = MICROS[DT_FIELDS[to_t.end_field]]  # type: ignore[attr-defined]
    v = arr.cast(pa.int64())
    if unit == 1:
        return v.cast(pa.duration("us"))
    q = pc.divide(v, unit)  # int64 division truncates toward zero
    return pc.multiply(q, unit).cast(pa.duration("us"))


# ---------------------------------------------------------------------------------------------
# Date +/- interval


@node
class ExtractANSIIntervalDays(Expression):
    """The whole days of a day-time interval, as an INT (Spark's ``ExtractANSIIntervalDays``)."""

    child: Expression

    @property
    def data_type(self) -> T.DataType:
        return T.INT

    @property
    def nullable(self) -> bool:
        return self.child.nullable

    @property
    def foldable(self) -> bool:
        return self.child.foldable

    def eval(self, batch: pa.RecordBatch) -> pa.Array:
        if isinstance(self.child, IntervalLiteral):
            return pa.repeat(pa.scalar(self.child.micros // MICROS["DAY"], pa.int32()),
                             batch.num_rows)
        v = to_array(self.child.eval(batch), batch.num_rows).cast(pa.int64())
        return pc.divide(v, MICROS["DAY"]).cast(pa.int32())  # truncates toward zero

    @property
    def pretty_name(self) -> str:
        return "extractansiintervaldays"


@node
class IntervalMonths(Expression):
    """The months of a year-month interval as an INT (internal: feeds ``add_months``); prints as
    its child."""

    child: Expression

    @property
    def data_type(self) -> T.DataType:
        return T.INT

    @property
    def nullable(self) -> bool:
        return self.child.nullable

    def eval(self, batch: pa.RecordBatch) -> pa.Array:
        return to_array(self.child.eval(batch), batch.num_rows).cast(pa.int32())

    def simple_string(self) -> str:
        return self.child.simple_string()

    def sql(self) -> str:
        return self.child.sql()


@node
class DateAddYMInterval(Expression):
    """``date +/- year-month interval``: add_months semantics (Spark's ``DateAddYMInterval``).

    ``negate`` subtracts the interval.  ``sql()`` is Spark's ``DATE '...' + INTERVAL '3' MONTH``.
    """

    date: Expression
    interval: Expression
    negate: bool = False

    @property
    def data_type(self) -> T.DataType:
        return T.DATE

    @property
    def nullable(self) -> bool:
        return self.date.nullable or self.interval.nullable

    def eval(self, batch: pa.RecordBatch) -> pa.Array:
        # imported here: at module level it would close the import cycle
        # expressions.intervals -> expressions.registry -> expressions.intervals
        from ember.expressions.registry import lookup_function

        months: Expression
        if isinstance(self.interval, IntervalLiteral):
            months = Literal(-self.interval.value if self.negate else self.interval.value, T.INT)
        else:
            months = IntervalMonths(self.interval)
            if self.negate:
                months = UnaryMinus(months)
        return lookup_function("add_months", (self.date, months)).eval(batch)

    def simple_string(self) -> str:
        op = "-" if self.negate else "+"
        return f"{self.date.simple_string()} {op} {self.interval.simple_string()}"

    def sql(self) -> str:
        op = "-" if self.negate else "+"
        return f"{self.date.sql()} {op} {self.interval.sql()}"



# ---------------------------------------------------------------------------------------------
# make_dt_interval / make_ym_interval

_SECS = T.DecimalType(18, 6)


def _make_inputs(types: tuple[T.DataType, ...]) -> tuple[T.DataType | None, ...] | None:
    ok = (T.NumericType, T.StringType, T.NullType)
    if not all(isinstance(t, ok) for t in types):
        return None
    if len(types) == 4:  # make_dt_interval(days, hours, mins, secs)
        return (T.INT, T.INT, T.INT, _SECS)
    return tuple(T.INT for _ in types)


def _make_dt_interval(arrays: list[pa.Array], fn, batch: pa.RecordBatch) -> pa.Array:
    """Spark's ``IntervalUtils.makeDayTimeInterval``: exact, overflow ->
    ``INTERVAL_ARITHMETIC_OVERFLOW.WITHOUT_SUGGESTION``."""

    days, hours, mins = (a.cast(pa.int64()) for a in arrays[:3])
    secs, _ = D.unscaled(arrays[3])  # micros (scale 6), Python ints
    try:
        total = pc.add_checked(pc.multiply_checked(days, MICROS["DAY"]),
                               pc.multiply_checked(hours, MICROS["HOUR"]))
        total = pc.add_checked(total, pc.multiply_checked(mins, MICROS["MINUTE"]))
        total = pc.add_checked(total, pa.array(secs.astype(np.int64), pa.int64()))
    except pa.ArrowInvalid:
        raise interval_overflow(None) from None
    return total.cast(pa.duration("us"))


def _make_ym_interval(arrays: list[pa.Array], fn, batch: pa.RecordBatch) -> pa.Array:
    """Spark's ``makeYearMonthInterval``: ``years * 12 + months``, overflow ->
    ``INTERVAL_ARITHMETIC_OVERFLOW.WITHOUT_SUGGESTION``."""


    years, months = (a.cast(pa.int64()) for a in arrays)
    total = pc.add(pc.multiply(years, 12), months)  # int64: no overflow for int inputs
    if pc.any(pc.or_(pc.less(total, -(1 << 31)), pc.greater(total, (1 << 31) - 1))).as_py():
        raise interval_overflow(None)
    return total.cast(pa.int32())


def _register() -> None:
    register(FunctionSpec("make_dt_interval", _make_inputs, lambda t: T.DayTimeIntervalType(0, 3),
                          _make_dt_interval, may_fail=True, expected='"NUMERIC"'))
    register(FunctionSpec("make_ym_interval", _make_inputs,
                          lambda t: T.YearMonthIntervalType(0, 1), _make_ym_interval,
                          may_fail=True, expected='"NUMERIC"'))


_register()

#: ``{name: (min args, max args)}`` of the functions :func:`build_interval_function` builds
INTERVAL_FUNCTIONS = {"make_dt_interval": (0, 4), "make_ym_interval": (0, 2)}


def build_interval_function(name: str, args: tuple[Expression, ...]) -> Expression:
    """``make_dt_interval(d, h, m, s)`` / ``make_ym_interval(y, m)`` with Spark's defaults shown
    (``make_dt_interval(1, 0, 0, 0.000000)``); ``make_interval`` is in
    :mod:`ember.expressions.calendar_intervals`."""
    from decimal import Decimal


    key = name.lower()
    zero = Literal(0, T.INT)
    defaults = ((zero, zero, zero, Literal(Decimal("0.000000"), _SECS))
                if key == "make_dt_interval" else (zero, zero))
    return ScalarFunction(name, tuple(args) + defaults[len(args):], key)
