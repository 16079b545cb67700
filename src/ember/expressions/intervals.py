"""ANSI interval literals and ``DATE +/- INTERVAL`` (a minimal subset of Spark's interval support).

Ember supports interval values only where TPC-H-style queries use them: a single-unit literal
``INTERVAL 'n' YEAR|MONTH|DAY`` (also ``INTERVAL n DAY``, ``INTERVAL 'n days'``, ``INTERVAL 'y-m'
YEAR TO MONTH``) added to or subtracted from a DATE.  The analyzer
(:mod:`ember.analysis.rules.resolve_binary_arithmetic`) replaces the arithmetic as Spark's
``ResolveBinaryArithmetic`` does::

    date + INTERVAL '90' DAY     ->  date_add(date, extractansiintervaldays(INTERVAL '90' DAY))
    date - INTERVAL '90' DAY     ->  date_add(date, (- extractansiintervaldays(INTERVAL '90' DAY)))
    date +/- INTERVAL '3' MONTH  ->  DateAddYMInterval: add_months semantics (day clamped to the
                                     end of the month), named ``date + INTERVAL '3' MONTH``

Spark types ``INTERVAL '90' DAY`` as ``interval day`` (DayTimeIntervalType(DAY, DAY)) and
``INTERVAL '3' MONTH`` as ``interval month``; the result of both forms above is DATE.  Not
supported (``UnsupportedError``): an interval value anywhere else (selected, stored, compared),
TIMESTAMP +/- interval, intervals with hour/minute/second fields, multi-unit literals such as
``INTERVAL 1 DAY 2 HOURS``.
"""

from __future__ import annotations

import pyarrow as pa

from ember import types as T
from ember.errors import UnsupportedError
from ember.expressions.base import Expression, LeafExpression
from ember.trees import node

__all__ = ["IntervalLiteral", "ExtractANSIIntervalDays", "DateAddYMInterval", "interval_literal"]

_YM_UNITS = {"YEAR": 0, "MONTH": 1}
_DT_UNITS = {"DAY": 0}


@node
class IntervalLiteral(LeafExpression):
    """An ANSI interval constant: ``value`` months (YEAR/MONTH units) or days (DAY unit).

    ``start_unit``/``end_unit`` are ``'YEAR'``, ``'MONTH'`` or ``'DAY'`` (both the same except for
    ``YEAR TO MONTH``).  Not evaluable on its own (see the module docstring).

    >>> IntervalLiteral(90, "DAY", "DAY").sql()
    "INTERVAL '90' DAY"
    >>> IntervalLiteral(14, "YEAR", "MONTH").sql()
    "INTERVAL '1-2' YEAR TO MONTH"
    """

    value: int
    start_unit: str
    end_unit: str

    @property
    def is_year_month(self) -> bool:
        return self.start_unit in _YM_UNITS

    @property
    def data_type(self) -> T.DataType:
        if self.is_year_month:
            return T.YearMonthIntervalType(_YM_UNITS[self.start_unit], _YM_UNITS[self.end_unit])
        return T.DayTimeIntervalType(0, 0)

    @property
    def nullable(self) -> bool:
        return False

    @property
    def foldable(self) -> bool:
        return True

    @property
    def resolved(self) -> bool:
        return True

    def eval(self, batch: pa.RecordBatch) -> pa.Array:
        raise UnsupportedError(
            f"Ember supports interval values only in DATE +/- INTERVAL, not {self.sql()} alone.",
            error_class="UNSUPPORTED_FEATURE")

    def _text(self) -> str:
        v = self.value
        if self.start_unit == "YEAR" and self.end_unit == "YEAR":
            v //= 12
        if self.start_unit != self.end_unit:  # YEAR TO MONTH
            sign = "-" if v < 0 else ""
            return f"{sign}{abs(v) // 12}-{abs(v) % 12}"
        return str(v)

    def _units(self) -> str:
        if self.start_unit == self.end_unit:
            return self.start_unit
        return f"{self.start_unit} TO {self.end_unit}"

    def simple_string(self) -> str:
        return self.sql()

    def sql(self) -> str:
        return f"INTERVAL '{self._text()}' {self._units()}"


def interval_literal(text: str, unit: str | None, to_unit: str | None = None) -> IntervalLiteral:
    """Build the literal for ``INTERVAL '<text>' <unit> [TO <to_unit>]`` (``unit`` None: the unit
    is inside the text, as in ``INTERVAL '90 days'``).  Raises ``UnsupportedError`` for forms
    outside the supported subset."""
    t = text.strip()
    if unit is None:
        parts = t.split()
        if len(parts) != 2:
            raise _unsupported(text)
        t, unit = parts
    u = unit.upper().rstrip("S")
    to = (to_unit or u).upper().rstrip("S")
    try:
        if u == "YEAR" and to == "MONTH":
            sign = -1 if t.startswith("-") else 1
            y, m = t.lstrip("+-").split("-")
            return IntervalLiteral(sign * (int(y) * 12 + int(m)), "YEAR", "MONTH")
        n = int(t)
    except ValueError:
        raise _unsupported(text) from None
    if u != to:
        raise _unsupported(text)
    if u == "YEAR":
        return IntervalLiteral(n * 12, "YEAR", "YEAR")
    if u == "MONTH":
        return IntervalLiteral(n, "MONTH", "MONTH")
    if u == "DAY":
        return IntervalLiteral(n, "DAY", "DAY")
    raise _unsupported(f"{text} {unit}")


def _unsupported(text: str) -> UnsupportedError:
    return UnsupportedError(
        f"The interval literal {text!r} is not supported by Ember (only a single YEAR, MONTH or "
        "DAY field, or YEAR TO MONTH).", error_class="UNSUPPORTED_FEATURE")


@node
class ExtractANSIIntervalDays(Expression):
    """The day count of a DAY interval literal, as an INT (Spark's ``ExtractANSIIntervalDays``)."""

    child: Expression

    @property
    def data_type(self) -> T.DataType:
        return T.INT

    @property
    def nullable(self) -> bool:
        return False

    @property
    def foldable(self) -> bool:
        return True

    def eval(self, batch: pa.RecordBatch) -> pa.Array:
        if not isinstance(self.child, IntervalLiteral):
            raise UnsupportedError("extractansiintervaldays needs an interval literal",
                                   error_class="UNSUPPORTED_FEATURE")
        return pa.repeat(pa.scalar(self.child.value, pa.int32()), batch.num_rows)

    @property
    def pretty_name(self) -> str:
        return "extractansiintervaldays"


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
        return self.date.nullable

    def _months(self) -> int:
        if not isinstance(self.interval, IntervalLiteral):
            raise UnsupportedError("DATE +/- INTERVAL needs an interval literal",
                                   error_class="UNSUPPORTED_FEATURE")
        return -self.interval.value if self.negate else self.interval.value

    def eval(self, batch: pa.RecordBatch) -> pa.Array:
        from ember.expressions.base import Literal
        from ember.expressions.registry import lookup_function

        impl = lookup_function("add_months", (self.date, Literal(self._months(), T.INT)))
        return impl.eval(batch)

    def simple_string(self) -> str:
        op = "-" if self.negate else "+"
        return f"{self.date.simple_string()} {op} {self.interval.simple_string()}"

    def sql(self) -> str:
        op = "-" if self.negate else "+"
        return f"{self.date.sql()} {op} {self.interval.sql()}"
