"""JSON-safe normal form of query results, and the comparison Ember's results must pass.

Both sides go through Arrow: Spark's ``DataFrame.toArrow()`` when goldens are generated, Ember's
``DataFrame.to_arrow()`` when they are checked, and both through :func:`normalize_table`.

Normal form of a value: ``None`` -> null; bool, int, str unchanged; float -> JSON number, or the
strings ``"NaN"``, ``"Infinity"``, ``"-Infinity"``; Decimal -> ``str(d)`` (Arrow keeps the type's
scale, so the text is canonical for a given type); date/datetime -> ``isoformat()``; bytes -> hex;
struct -> list of field values; array -> list; map -> list of ``[key, value]`` pairs;
timedelta -> total microseconds.  A column of a type PySpark cannot collect (year-month
intervals, Spark's CalendarInterval ``interval``, anywhere in the type) is compared as its
``CAST(... AS STRING)`` on both sides (:func:`as_text_columns`).
"""

from __future__ import annotations

import datetime as _dt
import decimal
import math
import re
from typing import Any, Iterable

import pyarrow as pa

_SPECIAL_FLOATS = {"NaN": math.nan, "Infinity": math.inf, "-Infinity": -math.inf}


def normalize_value(v: Any) -> Any:
    """One Python value (as produced by ``pyarrow.Array.to_pylist``) in normal form."""
    if v is None or isinstance(v, (bool, str)):
        return v
    if isinstance(v, int):
        return v
    if isinstance(v, float):
        if math.isnan(v):
            return "NaN"
        if math.isinf(v):
            return "Infinity" if v > 0 else "-Infinity"
        return v
    if isinstance(v, decimal.Decimal):
        return str(v)
    if isinstance(v, (_dt.datetime, _dt.date, _dt.time)):
        return v.isoformat()
    if isinstance(v, _dt.timedelta):
        return (v.days * 86_400 + v.seconds) * 1_000_000 + v.microseconds
    if isinstance(v, (bytes, bytearray, memoryview)):
        return bytes(v).hex()
    if isinstance(v, dict):
        return [normalize_value(x) for x in v.values()]
    if isinstance(v, (list, tuple)):
        return [normalize_value(x) for x in v]
    return repr(v)


_UNCOLLECTABLE = re.compile(r"\binterval(?!\s+(day|hour|minute|second)\b)")


def as_text_columns(df: Any, type_strings: list[str]) -> Any:
    """``df`` (a PySpark or an Ember DataFrame) with each column whose type (``simpleString``)
    holds a year-month interval or a CalendarInterval cast to STRING; ``df`` itself when there
    is none.  PySpark collects neither type (``toArrow`` and ``collect`` refuse them), so the
    goldens record their text, which checks Ember's formatting of them too."""
    marked = [bool(_UNCOLLECTABLE.search(t)) for t in type_strings]
    if not any(marked):
        return df
    names = [f"_c{i}" for i in range(len(type_strings))]
    return df.toDF(*names).selectExpr(*(f"CAST({n} AS STRING)" if m else n
                                        for n, m in zip(names, marked)))


def normalize_table(table: pa.Table) -> list[list[Any]]:
    """Rows of ``table`` in normal form, in table order.

    Columns are read by position (duplicate column names, e.g. ``SELECT * FROM t JOIN t``, are
    common in the golden files).  Map columns come out of ``to_pylist`` as lists of tuples.
    """
    cols = [table.column(i).to_pylist() for i in range(table.num_columns)]
    return [[normalize_value(c[r]) for c in cols] for r in range(table.num_rows)]


def _float_of(v: Any) -> float | None:
    if isinstance(v, float):
        return v
    if isinstance(v, str) and v in _SPECIAL_FLOATS:
        return _SPECIAL_FLOATS[v]
    return None


def _sig(x: float) -> str:
    return f"{x:.8e}"


def sort_key(v: Any) -> tuple:
    """A total order over normal-form values, stable under tiny float differences."""
    if v is None:
        return (0,)
    if isinstance(v, bool):
        return (1, int(v))
    if isinstance(v, int):
        return (2, v)
    if isinstance(v, float):
        if v == 0.0:
            return (3, "0", math.copysign(1.0, v))
        return (3, _sig(v), 0)
    if isinstance(v, str):
        if v in _SPECIAL_FLOATS:
            return (4, v)
        return (5, v)
    if isinstance(v, list):
        return (6, tuple(sort_key(x) for x in v))
    return (7, repr(v))


def row_sort_key(row: list[Any]) -> tuple:
    return tuple(sort_key(v) for v in row)


def sorted_rows(rows: Iterable[list[Any]]) -> list[list[Any]]:
    return sorted(rows, key=row_sort_key)


def values_equal(a: Any, b: Any, *, rel_tol: float = 1e-9, strict_zero_sign: bool = True) -> bool:
    """Equality of two normal-form values; floats within ``rel_tol``; NaN == NaN."""
    fa, fb = _float_of(a), _float_of(b)
    if fa is not None and fb is not None:
        if math.isnan(fa) or math.isnan(fb):
            return math.isnan(fa) and math.isnan(fb)
        if fa == 0.0 and fb == 0.0:
            return (not strict_zero_sign) or math.copysign(1.0, fa) == math.copysign(1.0, fb)
        return math.isclose(fa, fb, rel_tol=rel_tol, abs_tol=1e-12)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(
            values_equal(x, y, rel_tol=rel_tol, strict_zero_sign=strict_zero_sign) for x, y in zip(a, b)
        )
    if isinstance(a, bool) or isinstance(b, bool):
        return type(a) is type(b) and a == b
    return a == b


#: DESCRIBE / SHOW TABLE EXTENDED entries whose values depend on the run (when, by which engine,
#: in which warehouse): masked on both sides, as Spark's ``SQLQueryTestHelper.replaceNotIncludedMsg``
#: masks them in its own golden files.
NOT_INCLUDED_KEYS = ("Created Time", "Created By", "Last Access", "Location", "Owner",
                     "Partition Parameters")
NOT_INCLUDED = "[not included in comparison]"
_NOT_INCLUDED_LINE = re.compile(rf"^({'|'.join(NOT_INCLUDED_KEYS)}): .*$", re.M)
#: the same entries in DESCRIBE ... AS JSON's object
_NOT_INCLUDED_JSON = re.compile(
    r'"(location|created_time|created_by|last_access|owner|partition_parameters)":'
    r'("(?:[^"\\]|\\.)*"|\{[^{}]*\})')


_EXPR_ID = re.compile(r"#\d+")


def _mask_text(v: Any) -> Any:
    if isinstance(v, str) and v.startswith('{"'):
        return _NOT_INCLUDED_JSON.sub(lambda m: f'"{m.group(1)}":"{NOT_INCLUDED}"', v)
    if isinstance(v, str) and "\n" in v:  # also a plan's expression ids (#123 -> #x), as Spark's
        v = _EXPR_ID.sub("#x", v)          # replaceNotIncludedMsg does
        return _NOT_INCLUDED_LINE.sub(lambda m: f"{m.group(1)}: {NOT_INCLUDED}", v)
    return v


def mask_not_included(rows: list[list[Any]]) -> list[list[Any]]:
    """``rows`` with the run-dependent values of :data:`NOT_INCLUDED_KEYS` masked: the value
    next to such a key in the first column, and ``Key: value`` lines inside text cells."""
    out = []
    for r in rows:
        if len(r) >= 2 and r[0] in NOT_INCLUDED_KEYS:
            r = [r[0], NOT_INCLUDED, *r[2:]]
        out.append([_mask_text(v) for v in r])
    return out


def rows_equal(expected: list[list[Any]], actual: list[list[Any]], *, ordered: bool,
               strict_zero_sign: bool = True) -> bool:
    """Same rows (in order if ``ordered``, else as multisets)."""
    if len(expected) != len(actual):
        return False
    if not ordered:
        expected, actual = sorted_rows(expected), sorted_rows(actual)
    return all(
        len(e) == len(a) and values_equal(e, a, strict_zero_sign=strict_zero_sign)
        for e, a in zip(expected, actual)
    )


def describe_diff(expected: list[list[Any]], actual: list[list[Any]], *, ordered: bool,
                  limit: int = 40) -> str:
    """Readable side-by-side listing of two row lists (sorted unless ``ordered``)."""
    if not ordered:
        expected, actual = sorted_rows(expected), sorted_rows(actual)
    lines = [f"expected {len(expected)} rows, got {len(actual)} rows ({'ordered' if ordered else 'sorted'}):"]
    for i in range(min(max(len(expected), len(actual)), limit)):
        e = expected[i] if i < len(expected) else "<missing>"
        a = actual[i] if i < len(actual) else "<missing>"
        mark = "  " if (i < len(expected) and i < len(actual) and values_equal(e, a)) else "!!"
        lines.append(f"{mark} {e!r:50} | {a!r}")
    return "\n".join(lines)
