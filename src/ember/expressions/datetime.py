"""Date/time functions: to_date, to_timestamp, date_format, year/month/day..., date_add,
date_sub, datediff, add_months, current_date, extract.

Spark datetime patterns (``yyyy-MM-dd HH:mm:ss``) are translated to strftime/strptime formats by
:func:`spark_pattern_to_strftime`.  Field extraction of a timestamp happens in the session time
zone (``ExecContext``'s; ``UTC`` by default).  ``date '1998-12-01' - interval '90' day`` (interval
types) is out of scope: use ``date_sub``.
"""

from __future__ import annotations

import datetime as _dt
import decimal as _decimal

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from ember import types as T
from ember.errors import ExecutionError
from ember.expressions import decimals as D
from ember.expressions.base import Literal
from ember.expressions.cast import _local_naive, cast_array
from ember.expressions.misc import FunctionSpec, register
from ember.expressions.utf8_kernels import all_valid

DATE, TS, S, I = T.DATE, T.TIMESTAMP, T.STRING, T.INT

_PATTERN_MAP = [
    ("yyyy", "%Y"), ("yy", "%y"), ("MMMM", "%B"), ("MMM", "%b"), ("MM", "%m"), ("M", "%m"),
    ("dd", "%d"), ("d", "%d"), ("HH", "%H"), ("H", "%H"), ("hh", "%I"), ("h", "%I"),
    ("mm", "%M"), ("m", "%M"), ("ss", "%S"), ("s", "%S"), ("EEEE", "%A"), ("EEE", "%a"),
    ("E", "%a"), ("a", "%p"), ("DDD", "%j"), ("y", "%Y"),
]


def _quoted(pattern: str, i: int) -> tuple[str, int]:
    """The literal text of the quote starting at ``pattern[i]`` (``''`` is a quote character) and
    the index after it."""
    j = pattern.find("'", i + 1)
    j = len(pattern) if j < 0 else j
    return pattern[i + 1:j] or "'", j + 1


def spark_pattern_to_strftime(pattern: str) -> str:
    """``'yyyy-MM-dd HH:mm:ss'`` -> ``'%Y-%m-%d %H:%M:%S'`` (quoted text kept literally)."""
    out: list[str] = []
    i = 0
    while i < len(pattern):
        c = pattern[i]
        if c == "'":
            text, i = _quoted(pattern, i)
            out.append(text.replace("%", "%%"))
            continue
        for tok, rep in _PATTERN_MAP:
            if pattern.startswith(tok, i):
                out.append(rep)
                i += len(tok)
                break
        else:
            out.append("%%" if c == "%" else c)
            i += 1
    return "".join(out)


def _tz(node) -> str:
    return node.options[0] if node.options else "UTC"


def _as_date(arr: pa.Array, t: T.DataType, tz: str) -> pa.Array:
    if isinstance(t, T.DateType):
        return arr
    return cast_array(arr, t, DATE, True, tz)


def _date_inputs(n_extra: tuple = ()):
    def inputs(types):
        t = types[0]
        if not isinstance(t, (T.DateType, T.TimestampType, T.StringType, T.NullType,
                              T.TimestampNTZType)):
            return None
        return (DATE,) + n_extra[: len(types) - 1]
    return inputs


def _field(fn):
    def k(a, node, b):
        return fn(a[0]).cast(pa.int32())
    return k


for _key, _fn in [("year", pc.year), ("month", pc.month), ("day", pc.day),
                  ("quarter", pc.quarter), ("dayofyear", pc.day_of_year)]:
    register(FunctionSpec(_key, _date_inputs(), lambda t: I, _field(_fn), expected='"DATE"'))

register(FunctionSpec(
    "dayofweek", _date_inputs(), lambda t: I,
    lambda a, n, b: pc.add(pc.day_of_week(a[0], count_from_zero=False, week_start=7), 0)
    .cast(pa.int32()), expected='"DATE"'))


def _ts_field(fn):
    def k(a, node, b):
        local = _local_naive(a[0], _tz(node))
        return fn(local).cast(pa.int32())
    return k


def _ts_inputs(types):
    t = types[0]
    if isinstance(t, T.TimestampNTZType):
        return (None,)  # a wall-clock time already (``_local_naive`` keeps it)
    if not isinstance(t, (T.DateType, T.TimestampType, T.StringType, T.NullType)):
        return None
    return (TS,)


for _key, _fn in [("hour", pc.hour), ("minute", pc.minute), ("second", pc.second)]:
    register(FunctionSpec(_key, _ts_inputs, lambda t: I, _ts_field(_fn), expected='"TIMESTAMP"',
                          time_zone_aware=True))


def _days(arr: pa.Array) -> pa.Array:
    return arr.cast(pa.int32())


def _date_add(sign: int):
    def k(a, node, b):
        days = pc.add(_days(a[0]).cast(pa.int64()), pc.multiply(a[1].cast(pa.int64()), sign))
        # Spark adds Java ints: the day number wraps around (date_sub(d, -2147483648) < d).
        wrapped = days.fill_null(0).to_numpy(zero_copy_only=False).astype(np.int32)
        return pa.array(wrapped, type=pa.int32(), mask=days.is_null().to_numpy(
            zero_copy_only=False)).cast(pa.date32())
    return k


def _date_int_inputs(types):
    t0, t1 = types
    if not isinstance(t0, (T.DateType, T.TimestampType, T.StringType, T.NullType)):
        return None
    if not (t1.is_integral or isinstance(t1, (T.StringType, T.NullType))):
        return None
    return (DATE, None if isinstance(t1, (T.ByteType, T.ShortType, T.IntegerType)) else I)


register(FunctionSpec("date_add", _date_int_inputs, lambda t: DATE, _date_add(1),
                      expected='"DATE"'))
register(FunctionSpec("date_sub", _date_int_inputs, lambda t: DATE, _date_add(-1),
                      expected='"DATE"'))


def _datediff(a, node, b):
    return pc.subtract(_days(a[0]), _days(a[1])).cast(pa.int32())


register(FunctionSpec("datediff", lambda t: (DATE, DATE), lambda t: I, _datediff,
                      expected='"DATE"'))


def _add_months(a, node, b):
    d = a[0]
    valid = pc.and_(pc.is_valid(d), pc.is_valid(a[1])).to_numpy(zero_copy_only=False)
    days = pc.fill_null(_days(d), 0).to_numpy(zero_copy_only=False).astype("datetime64[D]")
    months = pc.fill_null(a[1].cast(pa.int64()), 0).to_numpy(zero_copy_only=False)
    m = days.astype("datetime64[M]")
    dom = (days - m.astype("datetime64[D]")).astype(np.int64)
    target = m + months.astype("timedelta64[M]")
    last = ((target + np.timedelta64(1, "M")).astype("datetime64[D]") - np.timedelta64(1, "D"))
    month_len = (last - target.astype("datetime64[D]")).astype(np.int64)
    out = target.astype("datetime64[D]") + np.minimum(dom, month_len).astype("timedelta64[D]")
    return pa.array(out.astype(np.int64).astype(np.int32), mask=~valid).cast(pa.date32())


register(FunctionSpec("add_months", _date_int_inputs, lambda t: DATE, _add_months,
                      expected='"DATE"'))


def _current_date(a, node, b):
    # the date in the session time zone, as Spark's CurrentDate
    today = pc.local_timestamp(pa.array([_dt.datetime.now(_dt.timezone.utc)],
                                        pa.timestamp("us", tz=_tz(node))))[0].as_py().date()
    return pa.repeat(pa.scalar(today, pa.date32()), b.num_rows)


register(FunctionSpec("current_date", lambda t: (), lambda t: DATE, _current_date,
                      null_intolerant=False, time_zone_aware=True))


def _current_timestamp(a, node, b):
    now = _dt.datetime.now(_dt.timezone.utc)
    return pa.repeat(pa.scalar(now, pa.timestamp("us", tz="UTC")), b.num_rows)


register(FunctionSpec("current_timestamp", lambda t: (), lambda t: TS, _current_timestamp,
                      null_intolerant=False))


def _parse_error(value: str, pattern: str | None) -> ExecutionError:
    return ExecutionError(
        f"Text '{value}' could not be parsed"
        + (f" with pattern '{pattern}'" if pattern else "")
        + ". Use `try_to_timestamp` to tolerate invalid input string and return NULL instead.",
        error_class="CANNOT_PARSE_TIMESTAMP", parameters={"message": f"Text '{value}'"})


#: Numeric pattern letters whose text Spark's DateTimeFormatter reads strictly: a run of the
#: letter -> (regex of its text, the field it sets, compared after parsing).  Two letters mean
#: exactly two digits, one letter one or two; ``yy`` is a two-digit year (not compared).
_STRICT_RUNS = {
    "yyyy": (r"\d{4}", "year"), "yy": (r"\d{2}", None),
    "MM": (r"\d{2}", "month"), "M": (r"\d{1,2}", "month"),
    "dd": (r"\d{2}", "day"), "d": (r"\d{1,2}", "day"),
    "HH": (r"\d{2}", "hour"), "H": (r"\d{1,2}", "hour"),
    "mm": (r"\d{2}", "minute"), "m": (r"\d{1,2}", "minute"),
    "ss": (r"\d{2}", "second"), "s": (r"\d{1,2}", "second"),
    "DDD": (r"\d{3}", None), "D": (r"\d{1,3}", None),
}


def _strict_regex(pattern: str) -> tuple[str, list[str]] | None:
    """A full-match regex of the text ``pattern`` accepts, with a named group per compared field
    (each at most once), or None when the pattern has a letter this check does not know (text
    fields such as ``MMM`` or ``a``: the parse stays as lenient as strptime)."""
    import re

    out, fields = ["^"], []
    i = 0
    while i < len(pattern):
        c = pattern[i]
        if c == "'":
            text, i = _quoted(pattern, i)
            out.append(re.escape(text))
            continue
        if not c.isalpha():
            out.append(re.escape(c))
            i += 1
            continue
        j = i
        while j < len(pattern) and pattern[j] == c:
            j += 1
        spec = _STRICT_RUNS.get(pattern[i:j])
        if spec is None:
            return None
        rx, field = spec
        if field is not None and field not in fields:
            fields.append(field)
            out.append(f"(?P<{field}>{rx})")
        else:
            out.append(f"(?:{rx})")
        i = j
    out.append("$")
    return "".join(out), fields


def _strict(src: pa.Array, pattern: str, parsed: pa.Array) -> pa.Array:
    """``parsed`` (strptime's lenient result) with NULL where Spark's strict parser rejects the
    text: a field of the wrong width or surrounding text (``'2020-1-2'`` or ``' 2020-01-02'``
    for ``yyyy-MM-dd``), or a date that does not exist (``'2021-02-29'``, which strptime rolls
    over to March 1st); Spark's formatter resolves fields strictly."""
    spec = _strict_regex(pattern)
    if spec is None:
        return parsed
    rx, fields = spec
    src = src.cast(pa.string()) if not pa.types.is_string(src.type) else src
    ok = pc.fill_null(pc.match_substring_regex(src, rx), False)
    if fields:
        groups = pc.extract_regex(src, rx)
        parts = {"year": pc.year, "month": pc.month, "day": pc.day, "hour": pc.hour,
                 "minute": pc.minute, "second": pc.second}
        for f in fields:
            text = pc.struct_field(groups, f)
            same = pc.equal(pc.cast(text, pa.int64(), safe=False), parts[f](parsed))
            ok = pc.and_(ok, pc.fill_null(same, False))
    return pc.if_else(ok, parsed, pa.scalar(None, parsed.type))


def _to_ts(to_date: bool):
    def k(a, node, b):
        tz = _tz(node)
        t0 = node.arguments[0].data_type
        src = a[0]
        if len(a) == 1 or not isinstance(t0, T.StringType):
            out = cast_array(src, t0, TS if not to_date else DATE, node.ansi, tz,
                             legacy=not node.ansi) \
                if not isinstance(t0, T.StringType) else _parse_default(src, to_date, tz,
                                                                        node.ansi)
            return out
        fmt = node.arguments[1]
        if not isinstance(fmt, Literal) or fmt.value is None:
            raise ExecutionError("to_date/to_timestamp needs a literal format",
                                 error_class="UNSUPPORTED_FEATURE")
        out = parse_with_pattern(src, fmt.value, to_date, tz)
        bad = pc.and_(pc.is_valid(src), pc.is_null(out))
        if node.ansi and pc.any(bad).as_py():  # legacy: unparsable text is NULL
            i = pc.index(bad, True).as_py()
            raise _parse_error(src[i].as_py(), fmt.value)
        return out
    return k


def parse_with_pattern(src: pa.Array, pattern: str, to_date: bool, tz: str) -> pa.Array:
    """Strings parsed with a Spark datetime ``pattern`` (strictly, as Spark's
    ``DateTimeFormatter``) into dates or timestamps (local times in ``tz``); NULL where the
    text does not parse."""
    parsed = pc.strptime(src, format=spark_pattern_to_strftime(pattern), unit="us",
                         error_is_null=True)
    parsed = _strict(src, pattern, parsed)
    if tz.upper() not in ("UTC", "Z", "GMT"):
        parsed = pc.assume_timezone(parsed, timezone=tz)
    ts = parsed.cast(pa.timestamp("us", tz="UTC"))
    return _local_naive(ts, tz).cast(pa.date32()) if to_date else ts


def _parse_default(src: pa.Array, to_date: bool, tz: str, ansi: bool = True) -> pa.Array:
    # Spark: without a format, to_date/to_timestamp is a plain cast (ANSI: CAST_INVALID_INPUT;
    # legacy: NULL).
    return cast_array(src, S, DATE if to_date else TS, ansi, tz, legacy=not ansi)


def _to_inputs(types):
    # Spark accepts string, date, timestamp; other atomic types are implicitly cast to string
    # (``to_date(20200101, 'yyyyMMdd')`` parses '20200101').
    t0 = types[0]
    first = None if isinstance(t0, (T.StringType, T.DateType, T.TimestampType, T.NullType)) else S
    return (first,) + ((S,) if len(types) > 1 else ())


register(FunctionSpec("to_date", _to_inputs, lambda t: DATE, _to_ts(True), may_fail=True,
                      time_zone_aware=True, ansi_aware=True))
register(FunctionSpec("to_timestamp", _to_inputs, lambda t: TS, _to_ts(False), may_fail=True,
                      time_zone_aware=True, ansi_aware=True))


def _date_format(a, node, b):
    fmt = node.arguments[1]
    if not isinstance(fmt, Literal) or fmt.value is None:
        raise ExecutionError("date_format needs a literal format", error_class="UNSUPPORTED_FEATURE")
    local_us = _local_naive(a[0], _tz(node))
    us = pc.fill_null(local_us.cast(pa.int64()), 0).to_numpy(zero_copy_only=False)
    secs, frac = np.divmod(us, 1_000_000)  # floor: 1969-12-31 23:59:59.999 keeps its second
    valid = pc.is_valid(local_us).to_numpy(zero_copy_only=False)
    local = pa.array(secs, mask=~valid).cast(pa.timestamp("s"))
    frac_us = pa.array(frac, mask=~valid)
    utc_us = pc.fill_null(a[0].cast(pa.timestamp("us", tz="UTC")).cast(pa.int64()), 0)
    offset_s = (us - utc_us.to_numpy(zero_copy_only=False)) // 1_000_000
    parts = [_format_token(tok, local, frac_us, (offset_s, _tz(node)))
             for tok in _pattern_tokens(fmt.value)]
    if not parts:
        return pc.if_else(pc.is_valid(local), pa.scalar("", pa.large_string()),
                          pa.scalar(None, pa.large_string()))
    out = parts[0] if len(parts) == 1 else pc.binary_join_element_wise(
        *parts, pa.scalar("", pa.large_string()))
    return pc.if_else(pc.is_valid(local), out, pa.scalar(None, out.type)).cast(pa.large_string())


def _pattern_tokens(pattern: str) -> list[str]:
    """A Spark datetime pattern split into runs of one letter (``yyyy``, ``M``) and literal text
    (prefixed with a quote: ``"'-"``)."""
    tokens: list[str] = []
    i = 0
    while i < len(pattern):
        c = pattern[i]
        if c == "'":
            j = pattern.find("'", i + 1)
            j = len(pattern) if j < 0 else j
            tokens.append("'" + (pattern[i + 1:j] or "'"))
            i = j + 1
        elif c.isalpha():
            j = i
            while j < len(pattern) and pattern[j] == c:
                j += 1
            tokens.append(pattern[i:j])
            i = j
        else:
            tokens.append("'" + c)
            i += 1
    return tokens


#: padded fields strftime prints exactly like Spark
_STRFTIME_TOKENS = {"yyyy": "%Y", "yy": "%y", "MMMM": "%B", "MMM": "%b", "MM": "%m", "dd": "%d",
                    "HH": "%H", "hh": "%I", "mm": "%M", "ss": "%S", "EEEE": "%A", "EEE": "%a",
                    "EE": "%a", "E": "%a", "a": "%p", "DDD": "%j", "y": "%Y", "yyy": "%Y"}
#: numeric fields printed with at least len(token) digits
_NUMERIC_FIELDS = {"M": pc.month, "d": pc.day, "H": pc.hour, "m": pc.minute, "s": pc.second,
                   "D": pc.day_of_year, "Q": pc.quarter}


def _format_token(tok: str, local: pa.Array, micros: pa.Array,
                  zone: tuple[np.ndarray, str] | None = None) -> pa.Array:
    n = len(local)
    if tok.startswith("'"):
        return pa.repeat(pa.scalar(tok[1:], pa.large_string()), n)
    if tok in _STRFTIME_TOKENS:
        return pc.strftime(local, format=_STRFTIME_TOKENS[tok]).cast(pa.large_string())
    c = tok[0]
    named = _named_token(tok, local, zone)
    if named is not None:
        return named
    if c == "h":  # clock hour 1-12
        v = pc.add(pc.hour(local).cast(pa.int64()), 11)
        v = pc.add(pc.subtract(v, pc.multiply(pc.divide(v, 12), 12)), 1)
    elif c == "S":  # fraction of second, len(tok) digits
        digits = len(tok)
        if digits <= 6:
            v = pc.divide(micros, 10 ** (6 - digits))
        else:
            v = pc.multiply(micros, 10 ** (digits - 6))
    elif c in _NUMERIC_FIELDS and len(tok) <= 3:
        v = _NUMERIC_FIELDS[c](local)
    elif c == "y":  # five or more: the year zero-padded
        v = pc.year(local)
    elif c in "Lq" and len(tok) <= 2:  # stand-alone month / quarter
        v = (pc.month if c == "L" else pc.quarter)(local)
    elif c == "F" and len(tok) == 1:  # aligned day of week in month
        d0 = pc.subtract(pc.day(local), 1).cast(pa.int64())
        v = pc.add(pc.subtract(d0, pc.multiply(pc.divide(d0, 7), 7)), 1)
    elif c == "K" and len(tok) <= 2:  # hour of am/pm 0-11
        h = pc.hour(local).cast(pa.int64())
        v = pc.subtract(h, pc.multiply(pc.divide(h, 12), 12))
    elif c == "k" and len(tok) <= 2:  # clock hour of day 1-24
        h = pc.hour(local).cast(pa.int64())
        v = pc.if_else(pc.equal(h, 0), 24, h)
    else:
        raise ExecutionError(f"Unsupported datetime pattern letter(s) '{tok}'",
                             error_class="UNSUPPORTED_FEATURE")
    text = v.cast(pa.int64()).cast(pa.large_string())
    return pc.utf8_lpad(text, width=len(tok), padding="0") if len(tok) > 1 else text


_ORDINALS = ("1st", "2nd", "3rd", "4th")
#: letters Spark 3+ refuses in formatting patterns: letter -> error sub-class
_REFUSED_LETTERS = {"Y": "DATETIME_PATTERN_RECOGNITION", "u": "DATETIME_PATTERN_RECOGNITION",
                    "w": "DATETIME_PATTERN_RECOGNITION", "W": "DATETIME_PATTERN_RECOGNITION",
                    "e": "DATETIME_WEEK_BASED_PATTERN", "c": "DATETIME_WEEK_BASED_PATTERN"}


def _offset_text(off: int, colon: bool, seconds_optional: bool = True) -> str:
    sign = "-" if off < 0 else "+"
    h, rest = divmod(abs(off), 3600)
    m, sec = divmod(rest, 60)
    out = f"{sign}{h:02d}{':' if colon else ''}{m:02d}"
    if sec or not seconds_optional:
        out += f"{':' if colon else ''}{sec:02d}"
    return out


def _zone_token(tok: str, off: int, zone_id: str) -> str | None:
    """java.time's offset / zone-id text of one offset (seconds east of UTC)."""
    c, k = tok[0], len(tok)
    if c == "V" and k == 2:
        return zone_id
    if c == "O" and k in (1, 4):
        if off == 0:
            return "GMT"
        if k == 4:
            return "GMT" + _offset_text(off, True)
        sign = "-" if off < 0 else "+"
        h, rest = divmod(abs(off), 3600)
        m = rest // 60
        return f"GMT{sign}{h}" + (f":{m:02d}" if m else "")
    if c in "Xx" and k <= 3:
        if c == "X" and off == 0:
            return "Z"
        if k == 1:
            sign = "-" if off < 0 else "+"
            h, rest = divmod(abs(off), 3600)
            return f"{sign}{h:02d}" + (f"{rest // 60:02d}" if rest // 60 else "")
        return _offset_text(off, k == 3)
    if c == "Z":
        if k <= 3:
            return _offset_text(off, False)
        if k == 4:
            return "GMT" if off == 0 else "GMT" + _offset_text(off, True)
        if k == 5:
            return "Z" if off == 0 else _offset_text(off, True)
    return None


def _named_token(tok: str, local: pa.Array, zone: tuple[np.ndarray, str] | None
                 ) -> pa.Array | None:
    """Text fields java.time prints that strftime has no directive for: eras (``G``), quarter
    names (``QQQ``/``QQQQ``), stand-alone month names (``LLL``/``LLLL``) and zone offsets
    (``VV``, ``O``, ``X``, ``x``, ``Z``); Spark's refusal of week-based letters."""
    c, k = tok[0], len(tok)
    if c in _REFUSED_LETTERS:
        sub = _REFUSED_LETTERS[c]
        raise ExecutionError(
            f"You may get a different result due to the upgrading to Spark >= 3.0: Fail to "
            f"recognize '{tok}' pattern in the DateTimeFormatter.",
            error_class=f"INCONSISTENT_BEHAVIOR_CROSS_VERSION.{sub}",
            parameters={"pattern": f"'{tok}'"})
    if c == "G":
        if k > 4:  # Spark's formatter of a column fails to build (its literal-folding path
            # reports INVALID_DATETIME_PATTERN.LENGTH instead)
            raise ExecutionError(
                f"You may get a different result due to the upgrading to Spark >= 3.0: Fail to "
                f"recognize '{tok}' pattern in the DateTimeFormatter.",
                error_class="INCONSISTENT_BEHAVIOR_CROSS_VERSION.DATETIME_PATTERN_RECOGNITION",
                parameters={"pattern": f"'{tok}'"})
        ad = pc.greater(pc.year(local), 0)
        names = ("AD", "BC") if k <= 3 else ("Anno Domini", "Before Christ")
        return pc.if_else(ad, names[0], names[1]).cast(pa.large_string())
    if c in "Qq" and k in (3, 4):
        q = pc.quarter(local).cast(pa.int64())
        table = [f"Q{i}" for i in range(1, 5)] if k == 3 else [
            f"{_ORDINALS[i]} quarter" for i in range(4)]
        return pc.take(pa.array(table, pa.large_string()), pc.subtract(q, 1))
    if c == "L" and k in (3, 4):
        return pc.strftime(local, format="%b" if k == 3 else "%B").cast(pa.large_string())
    if c in "VOXxZ" and zone is not None:
        offsets, zone_id = zone
        uniq, inverse = np.unique(offsets, return_inverse=True)
        texts = [_zone_token(tok, int(o), zone_id) for o in uniq]
        if any(t is None for t in texts):
            return None
        return pc.take(pa.array(texts, pa.large_string()), pa.array(inverse.reshape(-1)))
    return None


register(FunctionSpec("date_format", lambda t: (TS, S), lambda t: S, _date_format,
                      time_zone_aware=True))

#: name -> (spec key, display name, min args, max args)
DATETIME_FUNCTIONS: dict[str, tuple[str, str, int, int]] = {
    "year": ("year", "year", 1, 1), "month": ("month", "month", 1, 1),
    "day": ("day", "day", 1, 1), "dayofmonth": ("day", "dayofmonth", 1, 1),
    "quarter": ("quarter", "quarter", 1, 1), "dayofyear": ("dayofyear", "dayofyear", 1, 1),
    "dayofweek": ("dayofweek", "dayofweek", 1, 1),
    "hour": ("hour", "hour", 1, 1), "minute": ("minute", "minute", 1, 1),
    "second": ("second", "second", 1, 1),
    "date_add": ("date_add", "date_add", 2, 2), "dateadd": ("date_add", "date_add", 2, 2),
    "date_sub": ("date_sub", "date_sub", 2, 2), "datediff": ("datediff", "datediff", 2, 2),
    "add_months": ("add_months", "add_months", 2, 2),
    "current_date": ("current_date", "current_date", 0, 0),
    "curdate": ("current_date", "current_date", 0, 0),
    "current_timestamp": ("current_timestamp", "current_timestamp", 0, 0),
    "now": ("current_timestamp", "now", 0, 0),
    "to_date": ("to_date", "to_date", 1, 2), "to_timestamp": ("to_timestamp", "to_timestamp", 1, 2),
    "date_format": ("date_format", "date_format", 2, 2),
}

#: fields accepted by ``extract(field FROM source)`` -> spec key
EXTRACT_FIELDS = {
    "year": "year", "years": "year", "y": "year", "yr": "year", "yrs": "year",
    "month": "month", "months": "month", "mon": "month", "mons": "month",
    "day": "day", "days": "day", "d": "day", "quarter": "quarter", "qtr": "quarter",
    "dayofweek": "dayofweek", "dow": "dayofweek", "doy": "dayofyear",
    "hour": "hour", "hours": "hour", "h": "hour", "minute": "minute", "minutes": "minute",
    "m": "minute", "min": "minute", "second": "second", "seconds": "second", "s": "second",
}


# --- epoch conversions: timestamp_seconds / _millis / _micros, unix_seconds / _millis / _micros

_LONG_MIN, _LONG_MAX = -(1 << 63), (1 << 63) - 1


def _epoch_overflow(value: str, unit: str) -> ExecutionError:
    return ExecutionError(
        f"Datetime operation overflow: create a TIMESTAMP from {value} {unit} since the epoch.",
        error_class="DATETIME_OVERFLOW",
        parameters={"operation": f"create a TIMESTAMP from {value} {unit} since the epoch"})


def _integral_to_micros(arr: pa.Array, factor: int, unit: str) -> pa.Array:
    """Spark's ``Math.multiplyExact(value, factor)`` over a long: DATETIME_OVERFLOW past it."""
    values = arr.cast(pa.int64())
    try:
        return pc.multiply_checked(values, factor)
    except pa.ArrowInvalid:
        raw = values.fill_null(0).to_numpy(zero_copy_only=False)
        bad = raw[(raw > _LONG_MAX // factor) | (raw < _LONG_MIN // factor)][0]
        raise _epoch_overflow(f"{int(bad)}L", unit) from None


def _timestamp_seconds(a, node, b):
    """Spark's SecondsToTimestamp: integral seconds times 10^6 (exact), decimals exactly (a
    fraction finer than a microsecond fails as Java's ``longValueExact``), floating seconds
    truncated toward zero as Java's ``(d * 1e6).toLong`` (saturating; NaN and infinities give
    NULL; a FLOAT is widened to DOUBLE first)."""
    arr = a[0]
    t = arr.type
    if pa.types.is_integer(t):
        micros = _integral_to_micros(arr, 1_000_000, "seconds")
    elif pa.types.is_decimal(t):
        values, valid = D.unscaled(arr)
        scale = t.scale
        scaled = values * 10 ** (6 - scale) if scale <= 6 else values // 10 ** (scale - 6)
        if scale > 6 and np.any(valid & (values % 10 ** (scale - 6) != 0)):
            raise ExecutionError("Rounding necessary", error_class=None)
        out_of_range = valid & ((scaled > _LONG_MAX) | (scaled < _LONG_MIN))
        if np.any(out_of_range):
            raise _epoch_overflow(f"{_decimal.Decimal(int(values[out_of_range][0])).scaleb(-scale)}BD", "seconds")
        micros = pa.array(np.where(valid, scaled, 0).astype(np.int64), pa.int64(), mask=~valid)
    else:
        d = arr.cast(pa.float64()).fill_null(0.0).to_numpy(zero_copy_only=False)
        finite = np.isfinite(d)
        with np.errstate(invalid="ignore", over="ignore"):
            prod = np.trunc(d * 1e6)
        # Java's double-to-long conversion saturates at the long range
        in_range = finite & (np.abs(prod) < 2.0 ** 63)
        micros_np = np.where(prod >= 2.0 ** 63, _LONG_MAX,
                             np.where(prod < -(2.0 ** 63), _LONG_MIN,
                                      np.where(in_range, prod, 0.0).astype(np.int64)))
        valid = arr.is_valid().to_numpy(zero_copy_only=False) & finite
        micros = pa.array(micros_np.astype(np.int64), pa.int64(), mask=~valid)
    return micros.cast(pa.timestamp("us", tz="UTC"))


def _numeric_input(types):
    t = types[0]
    return (None,) if t.is_numeric or isinstance(t, T.NullType) else None


def _integral_input(types):
    t = types[0]
    return (None,) if t.is_integral or isinstance(t, T.NullType) else None


def _timestamp_input(types):
    return (None,) if isinstance(types[0], (T.TimestampType, T.NullType)) else None


def _from_epoch(factor: int, unit: str):
    def kernel(a, node, b):
        return _integral_to_micros(a[0], factor, unit).cast(pa.timestamp("us", tz="UTC"))
    return kernel


def _to_epoch(divisor: int):
    def kernel(a, node, b):
        # floorDiv, as Spark's UnixSeconds / UnixMillis: 1969-12-31 23:59:59.5 is -1 second
        micros = a[0].cast(pa.int64())
        return micros if divisor == 1 else _floor_div(micros, divisor)
    return kernel


def _floor_div(micros: pa.Array, divisor: int) -> pa.Array:
    valid = micros.is_valid().to_numpy(zero_copy_only=False)
    raw = micros.fill_null(0).to_numpy(zero_copy_only=False)
    return pa.array(np.floor_divide(raw, divisor), pa.int64(), mask=~valid)


register(FunctionSpec("timestamp_seconds", _numeric_input, lambda t: TS, _timestamp_seconds,
                      may_fail=True, expected='"NUMERIC"'))
register(FunctionSpec("timestamp_millis", _integral_input, lambda t: TS,
                      _from_epoch(1000, "milliseconds"), may_fail=True, expected='"INTEGRAL"'))
register(FunctionSpec("timestamp_micros", _integral_input, lambda t: TS,
                      _from_epoch(1, "microseconds"), expected='"INTEGRAL"'))
for _key, _divisor in [("unix_seconds", 1_000_000), ("unix_millis", 1000), ("unix_micros", 1)]:
    register(FunctionSpec(_key, _timestamp_input, lambda t: T.LONG, _to_epoch(_divisor),
                          expected='"TIMESTAMP"'))
DATETIME_FUNCTIONS.update({_key: (_key, _key, 1, 1) for _key in (
    "timestamp_seconds", "timestamp_millis", "timestamp_micros", "unix_seconds", "unix_millis",
    "unix_micros")})


# --- truncation and epoch-second conversions (Spark's TruncTimestamp, TruncDate, UnixTimestamp,
# ToUnixTimestamp, FromUnixTime) ---------------------------------------------------------------

#: ``date_trunc`` / ``trunc`` levels -> (Arrow's floor_temporal unit, multiple); Spark's
#: ``DateTimeUtils.parseTruncLevel``.  ``trunc`` (dates) accepts only week and coarser.
_TRUNC_LEVELS = {
    "year": ("year", 1), "yyyy": ("year", 1), "yy": ("year", 1),
    "quarter": ("quarter", 1), "month": ("month", 1), "mm": ("month", 1), "mon": ("month", 1),
    "week": ("week", 1), "day": ("day", 1), "dd": ("day", 1), "hour": ("hour", 1),
    "minute": ("minute", 1), "second": ("second", 1), "millisecond": ("millisecond", 1),
    "microsecond": ("microsecond", 1),
}
_DATE_TRUNC_LEVELS = ("year", "quarter", "month", "week")


def _trunc_level(node, i: int, date_only: bool) -> str | None:
    fmt = node.arguments[i]
    if not isinstance(fmt, Literal):
        raise ExecutionError(f"{node.fn_name} needs a literal format",
                             error_class="UNSUPPORTED_FEATURE")
    hit = _TRUNC_LEVELS.get(str(fmt.value).lower()) if fmt.value is not None else None
    if hit is None or (date_only and hit[0] not in _DATE_TRUNC_LEVELS):
        return None
    return hit[0]


def _date_trunc(a, node, b):
    """``date_trunc(fmt, ts)``: ``ts`` truncated in the session time zone (NULL for an unknown
    level)."""
    unit = _trunc_level(node, 0, False)
    ts = a[1]
    if unit is None:
        return pa.nulls(len(ts), pa.timestamp("us", tz="UTC"))
    tz = _tz(node)
    local = _local_naive(ts, tz)
    floored = pc.floor_temporal(local, unit=unit, week_starts_monday=True)
    if tz.upper() in ("UTC", "Z", "GMT", "+00:00"):
        return floored.cast(pa.timestamp("us", tz="UTC"))
    return pc.assume_timezone(floored, timezone=tz, ambiguous="earliest",
                              nonexistent="earliest").cast(pa.timestamp("us", tz="UTC"))


register(FunctionSpec("date_trunc", lambda t: (S, TS), lambda t: TS, _date_trunc,
                      time_zone_aware=True))


def _trunc_date(a, node, b):
    unit = _trunc_level(node, 1, True)
    d = a[0]
    if unit is None:
        return pa.nulls(len(d), pa.date32())
    ts = d.cast(pa.date32()).cast(pa.timestamp("s"))
    return pc.floor_temporal(ts, unit=unit, week_starts_monday=True).cast(pa.date32())


register(FunctionSpec("trunc", _date_inputs((S,)), lambda t: DATE, _trunc_date,
                      expected='"DATE"'))

DEFAULT_TIMESTAMP_PATTERN = "yyyy-MM-dd HH:mm:ss"


def _unix_timestamp(a, node, b):
    """Seconds since the epoch of a timestamp, a date (its midnight in the session time zone)
    or a string parsed with the pattern (Spark's UnixTimestamp / ToUnixTimestamp: Java's long
    division, truncating toward zero, so 1969-12-31 23:59:59.5 is 0)."""
    ts = _to_ts(False)(a, node, b)
    micros = ts.cast(pa.int64())
    valid = micros.is_valid().to_numpy(zero_copy_only=False)
    raw = micros.fill_null(0).to_numpy(zero_copy_only=False)
    return pa.array(np.sign(raw) * (np.abs(raw) // 1_000_000), pa.int64(), mask=~valid)


def _unix_ts_inputs(types):
    t0 = types[0]
    if not isinstance(t0, (T.StringType, T.DateType, T.TimestampType, T.NullType)):
        return None
    return (None, S)[: len(types)]


for _key in ("unix_timestamp", "to_unix_timestamp"):
    register(FunctionSpec(_key, _unix_ts_inputs, lambda t: T.LONG, _unix_timestamp,
                          may_fail=True, time_zone_aware=True, ansi_aware=True,
                          expected='("STRING" or "DATE" or "TIMESTAMP")'))


def _from_unixtime(a, node, b):
    secs = a[0].cast(pa.int64())
    micros = pc.multiply(secs, 1_000_000).cast(pa.timestamp("us", tz="UTC"))
    return _date_format([micros] + a[1:], node, b)


register(FunctionSpec("from_unixtime", lambda t: (T.LONG, S), lambda t: S, _from_unixtime,
                      time_zone_aware=True))

DATETIME_FUNCTIONS.update({
    "date_trunc": ("date_trunc", "date_trunc", 2, 2), "trunc": ("trunc", "trunc", 2, 2),
})


# --- more date/time functions (Spark's LastDay, NextDay, MonthsBetween, MakeDate, WeekOfYear,
# WeekDay, DayName, MonthName, UnixDate, DateFromUnixDate, FromUTCTimestamp, ToUTCTimestamp,
# CurrentTimeZone) -----------------------------------------------------------------------------


def _days_np(arr: pa.Array) -> tuple[np.ndarray, np.ndarray]:
    valid = arr.is_valid().to_numpy(zero_copy_only=False)
    days = pc.fill_null(arr.cast(pa.int32()), 0).to_numpy(zero_copy_only=False).astype(np.int64)
    return days, valid


def _date_array(days: np.ndarray, valid: np.ndarray) -> pa.Array:
    return pa.array(days.astype(np.int32), type=pa.int32(), mask=~valid).cast(pa.date32())


def _last_day(a, node, b):
    days, valid = _days_np(a[0])
    month = days.astype("datetime64[D]").astype("datetime64[M]")
    last = (month + np.timedelta64(1, "M")).astype("datetime64[D]") - np.timedelta64(1, "D")
    return _date_array(last.astype(np.int64), valid)


register(FunctionSpec("last_day", _date_inputs(), lambda t: DATE, _last_day, expected='"DATE"'))

_DAYS_OF_WEEK = {"MO": 0, "MON": 0, "MONDAY": 0, "TU": 1, "TUE": 1, "TUESDAY": 1, "WE": 2,
                 "WED": 2, "WEDNESDAY": 2, "TH": 3, "THU": 3, "THURSDAY": 3, "FR": 4, "FRI": 4,
                 "FRIDAY": 4, "SA": 5, "SAT": 5, "SATURDAY": 5, "SU": 6, "SUN": 6, "SUNDAY": 6}


def _next_day(a, node, b):
    """The first date after ``d`` falling on the day of week named (``'Mon'``, ``'MO'``,
    ``'monday'``); an unknown name: NULL, or with ANSI on ``ILLEGAL_DAY_OF_WEEK``."""
    days, valid = _days_np(a[0])
    names = a[1].cast(pa.string())
    enc = pc.dictionary_encode(names)
    targets = [_DAYS_OF_WEEK.get(str(v).upper(), -1) for v in enc.dictionary.to_pylist()]
    dow = np.array(targets, dtype=np.int64)[pc.fill_null(enc.indices, 0).to_numpy(
        zero_copy_only=False)] if targets else np.full(len(days), -1)
    valid = valid & names.is_valid().to_numpy(zero_copy_only=False)
    bad = valid & (dow < 0)
    if node.ansi and bad.any():
        name = names[int(np.flatnonzero(bad)[0])].as_py()
        raise ExecutionError(f"Illegal input for day of week: {name}.",
                             error_class="ILLEGAL_DAY_OF_WEEK", parameters={"string": name})
    valid &= ~bad
    today = (days + 3) % 7  # 1970-01-01 was a Thursday (3 with Monday = 0)
    ahead = (dow - today - 1) % 7 + 1
    return _date_array(days + ahead, valid)


register(FunctionSpec("next_day", _date_inputs((S,)), lambda t: DATE, _next_day,
                      ansi_aware=True, may_fail=True, expected='"DATE"'))


def _months_between(a, node, b):
    """Spark's ``DateTimeUtils.monthsBetween`` in the session time zone: whole months when the
    days of month are equal or both are month ends, else the difference in days and seconds
    of the day over 31-day months (rounded to 8 digits unless ``roundOff`` is false)."""
    tz = _tz(node)
    l1 = _local_naive(a[0], tz).cast(pa.int64())
    l2 = _local_naive(a[1], tz).cast(pa.int64())
    valid = all_valid([l1, l2] + ([a[2]] if len(a) > 2 else []))
    u1 = pc.fill_null(l1, 0).to_numpy(zero_copy_only=False)
    u2 = pc.fill_null(l2, 0).to_numpy(zero_copy_only=False)
    day_us = 86_400_000_000
    d1, d2 = np.floor_divide(u1, day_us), np.floor_divide(u2, day_us)
    m1 = d1.astype("datetime64[D]").astype("datetime64[M]")
    m2 = d2.astype("datetime64[D]").astype("datetime64[M]")
    month_diff = (m1 - m2).astype(np.int64)
    dom1 = d1 - m1.astype("datetime64[D]").astype(np.int64)
    dom2 = d2 - m2.astype("datetime64[D]").astype(np.int64)
    last1 = (m1 + np.timedelta64(1, "M")).astype("datetime64[D]").astype(np.int64) - 1 == d1
    last2 = (m2 + np.timedelta64(1, "M")).astype("datetime64[D]").astype(np.int64) - 1 == d2
    secs1 = (u1 - d1 * day_us) // 1_000_000
    secs2 = (u2 - d2 * day_us) // 1_000_000
    seconds_diff = (dom1 - dom2) * 86400 + secs1 - secs2
    diff = month_diff + seconds_diff / float(31 * 86400)
    round_off = True
    if len(a) > 2:
        r = node.arguments[2]
        round_off = bool(getattr(r, "value", True)) if isinstance(r, Literal) else True
    if round_off:
        diff = np.floor(diff * 1e8 + 0.5) / 1e8
    whole = (dom1 == dom2) | (last1 & last2)
    out = np.where(whole, month_diff.astype(np.float64), diff)
    return pa.array(out, type=pa.float64(), mask=~valid)


def _months_between_inputs(types):
    for t in types[:2]:
        if not isinstance(t, (T.DateType, T.TimestampType, T.StringType, T.NullType)):
            return None
    return (TS, TS, T.BOOLEAN)[: len(types)]


register(FunctionSpec("months_between", _months_between_inputs, lambda t: T.DOUBLE,
                      _months_between, time_zone_aware=True, expected='"TIMESTAMP"'))


def _date_field_error(y: int, m: int, d: int) -> ExecutionError:
    """java.time's message for a date that does not exist (Spark's
    DATETIME_FIELD_OUT_OF_BOUNDS.WITHOUT_SUGGESTION)."""
    if not 1 <= m <= 12:
        msg = f"Invalid value for MonthOfYear (valid values 1 - 12): {m}"
    elif not 1 <= d <= 31:
        msg = f"Invalid value for DayOfMonth (valid values 1 - 28/31): {d}"
    elif m == 2 and d == 29:
        msg = f"Invalid date 'February 29' as '{y}' is not a leap year"
    elif not 1 <= y <= 9999:
        msg = f"Invalid value for Year: {y}"
    else:
        msg = f"Invalid date '{_dt.date(2000, m, 1).strftime('%B').upper()} {d}'"
    return ExecutionError(f"{msg}.", error_class="DATETIME_FIELD_OUT_OF_BOUNDS.WITHOUT_SUGGESTION",
                          parameters={"rangeMessage": msg})


def _make_date(a, node, b):
    """``make_date(y, m, d)``: NULL for a date that does not exist, or with ANSI on
    ``DATETIME_FIELD_OUT_OF_BOUNDS`` (Spark's MakeDate)."""
    y, m, d = (pc.fill_null(x.cast(pa.int64()), 1).to_numpy(zero_copy_only=False) for x in a)
    valid = all_valid(a)
    ok = (m >= 1) & (m <= 12) & (d >= 1) & (y >= -290000) & (y <= 294000)
    mm = np.clip(m, 1, 12)
    month = ((np.clip(y, 1, 9999) - 1970) * 12 + (mm - 1)).astype("datetime64[M]")
    start = month.astype("datetime64[D]").astype(np.int64)
    length = (month + np.timedelta64(1, "M")).astype("datetime64[D]").astype(np.int64) - start
    ok &= d <= length
    ok &= (y >= 1) & (y <= 9999)
    bad = valid & ~ok
    if node.ansi and bad.any():
        i = int(np.flatnonzero(bad)[0])
        raise _date_field_error(int(y[i]), int(m[i]), int(d[i]))
    return _date_array(np.where(ok, start + d - 1, 0), valid & ok)


register(FunctionSpec("make_date", lambda t: (I, I, I) if all(
    x.is_integral or isinstance(x, (T.NullType, T.StringType)) for x in t) else None,
    lambda t: DATE, _make_date, ansi_aware=True, may_fail=True, expected='"INT"'))

register(FunctionSpec("weekofyear", _date_inputs(), lambda t: I,
                      lambda a, n, b: pc.iso_week(a[0]).cast(pa.int32()), expected='"DATE"'))
register(FunctionSpec("weekday", _date_inputs(), lambda t: I,
                      lambda a, n, b: pc.day_of_week(a[0]).cast(pa.int32()), expected='"DATE"'))
register(FunctionSpec("dayname", _date_inputs(), lambda t: S,
                      lambda a, n, b: pc.strftime(a[0].cast(pa.timestamp("s")), format="%a"),
                      expected='"DATE"'))
register(FunctionSpec("monthname", _date_inputs(), lambda t: S,
                      lambda a, n, b: pc.strftime(a[0].cast(pa.timestamp("s")), format="%b"),
                      expected='"DATE"'))
register(FunctionSpec("unix_date", lambda t: (None,) if isinstance(t[0], (
    T.DateType, T.NullType)) else None, lambda t: I, lambda a, n, b: a[0].cast(pa.int32()),
    expected='"DATE"'))
register(FunctionSpec("date_from_unix_date", lambda t: (I,) if t[0].is_integral or isinstance(
    t[0], (T.NullType, T.StringType)) else None, lambda t: DATE,
    lambda a, n, b: a[0].cast(pa.int32()).cast(pa.date32()), expected='"INT"'))


def _utc_shift(to_utc: bool):
    """Spark's FromUTCTimestamp (the wall time of ``ts`` in ``tz``, read as UTC) and
    ToUTCTimestamp (the UTC wall time of ``ts`` read in ``tz``)."""
    def kernel(a, node, b):
        okz, zone = (True, node.arguments[1].value) if isinstance(node.arguments[1], Literal) \
            else (False, None)
        if not okz:
            raise ExecutionError(f"{node.fn_name} needs a literal time zone",
                                 error_class="UNSUPPORTED_FEATURE")
        ts = a[0].cast(pa.timestamp("us", tz="UTC"))
        if to_utc:
            naive = ts.cast(pa.timestamp("us"))
            return pc.assume_timezone(naive, timezone=zone, ambiguous="earliest",
                                      nonexistent="earliest").cast(pa.timestamp("us", tz="UTC"))
        return _local_naive(ts, zone).cast(pa.timestamp("us", tz="UTC"))
    return kernel


for _key, _to_utc in (("from_utc_timestamp", False), ("to_utc_timestamp", True)):
    register(FunctionSpec(_key, lambda t: (TS, S), lambda t: TS, _utc_shift(_to_utc),
                          expected='"TIMESTAMP"'))


def _current_timezone(a, node, b):
    return pa.repeat(pa.scalar(_tz(node), pa.string()), b.num_rows)


register(FunctionSpec("current_timezone", lambda t: (), lambda t: S, _current_timezone,
                      null_intolerant=False, time_zone_aware=True, nullable=lambda n: False))

DATETIME_FUNCTIONS.update({
    "last_day": ("last_day", "last_day", 1, 1), "next_day": ("next_day", "next_day", 2, 2),
    "make_date": ("make_date", "make_date", 3, 3), "weekofyear": ("weekofyear", "weekofyear", 1, 1),
    "weekday": ("weekday", "weekday", 1, 1), "dayname": ("dayname", "dayname", 1, 1),
    "monthname": ("monthname", "monthname", 1, 1), "unix_date": ("unix_date", "unix_date", 1, 1),
    "date_from_unix_date": ("date_from_unix_date", "date_from_unix_date", 1, 1),
    "date_diff": ("datediff", "date_diff", 2, 2),
    "from_utc_timestamp": ("from_utc_timestamp", "from_utc_timestamp", 2, 2),
    "to_utc_timestamp": ("to_utc_timestamp", "to_utc_timestamp", 2, 2),
    "current_timezone": ("current_timezone", "current_timezone", 0, 0),
})
