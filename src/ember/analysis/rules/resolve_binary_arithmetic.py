"""ResolveBinaryArithmetic: datetime and interval ``+ - * /`` become typed expressions (Spark 4's
rule of the same name; the nodes are in ember.expressions.interval_arithmetic and .intervals).

Before::  (d#1 - INTERVAL '90' DAY)
After::   date_add(d#1, (- extractansiintervaldays(INTERVAL '90' DAY)))

Before::  (ts#1 + INTERVAL '08' MINUTE)   /  (ts#1 - INTERVAL '01' HOUR)
After::   ts#1 + INTERVAL '08' MINUTE         ts#1 - INTERVAL '01' HOUR
          (TimestampAddInterval)              (DatetimeSub)

Cases (l, r = operand types; ``dt``/``ym`` = day-time/year-month interval):

- ``date +/- interval day``: ``date_add(d, [-]extractansiintervaldays(i))`` (a DATE);
  ``date +/- other dt``: TimestampAddInterval / DatetimeSub of ``cast(d as timestamp)``;
  ``date +/- ym``: DateAddYMInterval (add_months).
- ``ts +/- dt``: TimestampAddInterval / DatetimeSub; ``ts +/- ym``: TimestampAddYMInterval /
  DatetimeSub.  Any other left side with a dt/ym right side (an INT, a year-month interval)
  becomes the same node and fails its type check as in Spark (``The first parameter requires
  the ("(TIMESTAMP OR ...)") type``); a STRING side is cast to TIMESTAMP and the result
  back to STRING.
- ``ts - ts`` (either side may be a date, cast to timestamp): SubtractTimestamps;
  ``date - date``: SubtractDates.
- ``dt +/- dt``, ``ym +/- ym``: IntervalAdd / IntervalSubtract over the operands cast to their
  wider interval type (smallest start field, largest end field); ``NULL +/- interval``: the NULL
  is cast to the interval's type.
- ``i * n``, ``n * i``: Multiply{DT,YM}Interval(i, n); ``i / n``: Divide{DT,YM}Interval;
  ``- i``: IntervalNegate; ``abs(i)``: IntervalAbs (Spark's UnaryMinus/Abs accept intervals).
- ``ts + NULL``: TimestampAddInterval; ``date - NULL``: SubtractDates (``ts - NULL``:
  SubtractTimestamps, as above).
- ``date +/- n`` (a non-datetime, non-string, non-interval n): ``date_add``/``date_sub``.

The casts added here are marked implicit (hidden in generated names, as Spark's ``toPrettySQL``
hides them).  It runs before ResolveAliases in the Resolution batch, so generated column names
are Spark's.  Reads ``spark.sql.session.timeZone`` (timestamp arithmetic works on local
date-times, see ember.expressions.interval_arithmetic).

Fast path: the rewrite depends on the expression alone, so it runs through
``ember.trees.transform_up_memo``: expressions an earlier iteration left unchanged are skipped.
"""

from __future__ import annotations

from ember import types as T
from ember.analysis.rules._util import transform_up_in_run
from ember.expressions.base import Expression
from ember.plans.logical.nodes import LogicalPlan
from ember.trees import rewrite_bit, transform_up_memo
from ember.expressions import interval_arithmetic as IA
from ember.expressions.arithmetic import UnaryMinus, Abs, Add, Divide, Multiply, Subtract
from ember.expressions.cast import Cast
from ember.expressions.intervals import DateAddYMInterval, ExtractANSIIntervalDays
from ember.expressions.registry import lookup_function

_INTERVALS = (T.YearMonthIntervalType, T.DayTimeIntervalType)


def _is_interval(e: Expression) -> bool:
    return e.resolved and isinstance(e.data_type, _INTERVALS)


def _is_dt(e: Expression) -> bool:
    return e.resolved and isinstance(e.data_type, T.DayTimeIntervalType)


def _is_ym(e: Expression) -> bool:
    return e.resolved and isinstance(e.data_type, T.YearMonthIntervalType)


def _same_kind(l: Expression, r: Expression) -> bool:
    """Two intervals of one kind (a year-month with a day-time one is not)."""
    return _is_interval(l) and _is_interval(r) and type(l.data_type) is type(r.data_type)


def _is_null(e: Expression) -> bool:
    return e.resolved and isinstance(e.data_type, T.NullType)


def _is_date(e: Expression) -> bool:
    return e.resolved and isinstance(e.data_type, T.DateType)


def _is_ts(e: Expression) -> bool:
    return e.resolved and isinstance(e.data_type, (T.TimestampType, T.TimestampNTZType))


def _timestamp_kind(*es: Expression) -> T.DataType:
    """TIMESTAMP_NTZ when an operand is one and none is a TIMESTAMP, else TIMESTAMP (the type
    Spark casts the other datetime operands of a timestamp subtraction to)."""
    types = [e.data_type for e in es]
    if any(isinstance(t, T.TimestampNTZType) for t in types) and not any(
            isinstance(t, T.TimestampType) for t in types):
        return T.TIMESTAMP_NTZ
    return T.TIMESTAMP


def _is_day_count(e: Expression) -> bool:
    """A non-datetime, non-string operand next to a date: Spark makes ``date_add``/``date_sub``
    of it (which then type-checks it as an int)."""
    return e.resolved and not isinstance(
        e.data_type, (T.DateType, T.TimestampType, T.StringType, T.NullType) + _INTERVALS)


def _wider_interval(a: T.DataType, b: T.DataType) -> T.DataType:
    return type(a)(min(a.start_field, b.start_field),  # type: ignore[attr-defined,call-arg]
                   max(a.end_field, b.end_field))  # type: ignore[attr-defined]


class _Rewriter:
    """The rule for one analyzer run (``ctx`` marks casts implicit and gives the time zone)."""

    def __init__(self, ctx) -> None:
        self.ctx = ctx

    def cast(self, e: Expression, t: T.DataType) -> Expression:
        if e.data_type == t:
            return e
        c = Cast(e, t)
        return self.ctx.mark_implicit(c) if self.ctx is not None else c

    @property
    def tz(self) -> str:
        return self.ctx.conf.time_zone if self.ctx is not None else "UTC"

    def as_timestamp(self, e: Expression, kind: T.DataType | None = None) -> Expression:
        """``e`` as a timestamp: of type ``kind`` when given, else a TIMESTAMP or
        TIMESTAMP_NTZ kept as it is (a date, string or NULL cast to TIMESTAMP)."""
        if kind is not None:
            return self.cast(e, kind)
        return self.cast(e, T.TIMESTAMP) if isinstance(
            e.data_type, (T.DateType, T.StringType, T.NullType)) else e

    def add(self, l: Expression, r: Expression) -> Expression | None:
        """``l + r`` with an interval ``r`` (the caller swaps operands)."""

        rt = r.data_type
        if isinstance(rt, T.DayTimeIntervalType) and _is_date(l):
            if rt.start_field == 0 and rt.end_field == 0:
                return lookup_function("date_add", (l, ExtractANSIIntervalDays(r)))
            return IA.TimestampAddInterval(self.cast(l, T.TIMESTAMP), r, self.tz)
        if isinstance(rt, T.YearMonthIntervalType):
            if _is_date(l):
                return DateAddYMInterval(l, r)
            return self.back_to_string(l, IA.TimestampAddYMInterval(self.as_timestamp(l), r,
                                                                    self.tz))
        return self.back_to_string(l, IA.TimestampAddInterval(self.as_timestamp(l), r, self.tz))

    def back_to_string(self, l: Expression, e: Expression) -> Expression:
        """Spark casts ``string +/- interval`` back to the string's type."""
        return self.cast(e, T.STRING) if isinstance(l.data_type, T.StringType) else e

    def subtract(self, l: Expression, r: Expression) -> Expression | None:
        """``l - r`` with an interval ``r`` and a non-interval ``l``."""

        rt = r.data_type
        if _is_date(l):
            if isinstance(rt, T.YearMonthIntervalType):
                return DateAddYMInterval(l, r, negate=True)
            if rt.start_field == 0 and rt.end_field == 0:  # type: ignore[attr-defined]
                return lookup_function("date_add", (l, UnaryMinus(ExtractANSIIntervalDays(r))))
            return IA.DatetimeSub(self.cast(l, T.TIMESTAMP), r, self.tz)
        return self.back_to_string(l, IA.DatetimeSub(self.as_timestamp(l), r, self.tz))

    def interval_pair(self, cls, l: Expression, r: Expression) -> Expression:
        lt, rt = l.data_type, r.data_type
        if isinstance(lt, T.NullType):
            return cls(self.cast(l, rt), r)
        if isinstance(rt, T.NullType):
            return cls(l, self.cast(r, lt))
        w = _wider_interval(lt, rt)
        return cls(self.cast(l, w), self.cast(r, w))

    def __call__(self, x: Expression) -> Expression | None:
        match x:
            case UnaryMinus(child=c) if _is_interval(c):
                return IA.IntervalNegate(c, x.function_name)
            case Abs(child=c) if _is_interval(c):
                return IA.IntervalAbs(c)
            case Add(left=l, right=r) if _is_ts(l) and _is_null(r):
                return IA.TimestampAddInterval(l, r, self.tz)
            case Subtract(left=l, right=r) if _is_date(l) and _is_null(r):
                return IA.SubtractDates(l, self.cast(r, T.DATE))
            case Add(left=l, right=r) if _is_date(l) and _is_day_count(r):
                return lookup_function("date_add", (l, r))
            case Add(left=l, right=r) if _is_day_count(l) and _is_date(r):
                return lookup_function("date_add", (r, l))
            case Subtract(left=l, right=r) if _is_date(l) and _is_day_count(r):
                return lookup_function("date_sub", (l, r))
            case Add(left=l, right=r) if _same_kind(l, r):
                return self.interval_pair(IA.IntervalAdd, l, r)
            case Subtract(left=l, right=r) if _same_kind(l, r):
                return self.interval_pair(IA.IntervalSubtract, l, r)
            case Subtract(left=l, right=r) if _is_dt(l) and _is_ym(r):
                return None  # Spark keeps the Subtract: BINARY_OP_DIFF_TYPES
            case Add(left=l, right=r) | Subtract(left=l, right=r) if (
                    _is_interval(r) and l.resolved and isinstance(l.data_type, T.NullType)):
                return self.interval_pair(IA.IntervalAdd if isinstance(x, Add)
                                          else IA.IntervalSubtract, l, r)
            case Add(left=l, right=r) if _is_interval(l) and r.resolved and isinstance(
                    r.data_type, T.NullType):
                return self.interval_pair(IA.IntervalAdd, l, r)
            case Subtract(left=l, right=r) if _is_interval(l) and r.resolved and isinstance(
                    r.data_type, T.NullType):
                return self.interval_pair(IA.IntervalSubtract, l, r)
            case Add(left=l, right=r) if _is_interval(r) and l.resolved:
                return self.add(l, r)
            case Add(left=l, right=r) if _is_interval(l) and r.resolved:
                return self.add(r, l)
            case Subtract(left=l, right=r) if _is_interval(r) and l.resolved:
                return self.subtract(l, r)
            case Subtract(left=l, right=r) if (l.resolved and r.resolved and (
                    _is_ts(l) or _is_ts(r)) and not _is_interval(l)):
                kind = _timestamp_kind(l, r)
                return IA.SubtractTimestamps(self.as_timestamp(l, kind), self.as_timestamp(r, kind),
                                             self.tz)
            case Subtract(left=l, right=r) if _is_date(r) and l.resolved and (
                    _is_date(l) or isinstance(l.data_type, T.NullType)):
                return IA.SubtractDates(self.cast(l, T.DATE), r)
            case Multiply(left=l, right=r) if _is_ym(l) and r.resolved:
                return IA.MultiplyYMInterval(l, r)
            case Multiply(left=l, right=r) if _is_ym(r) and l.resolved:
                return IA.MultiplyYMInterval(r, l)
            case Multiply(left=l, right=r) if _is_dt(l) and r.resolved:
                return IA.MultiplyDTInterval(l, r)
            case Multiply(left=l, right=r) if _is_dt(r) and l.resolved:
                return IA.MultiplyDTInterval(r, l)
            case Divide(left=l, right=r) if _is_ym(l) and r.resolved:
                return IA.DivideYMInterval(l, r)
            case Divide(left=l, right=r) if _is_dt(l) and r.resolved:
                return IA.DivideDTInterval(l, r)
            case _:
                return None


def resolve_interval_arithmetic(e: Expression, ctx=None) -> Expression:
    """``e`` with every datetime/interval ``+ - * /`` (resolved operands) replaced."""
    return transform_up_memo(e, _Rewriter(ctx), _INTERVAL_BIT)


_INTERVAL_BIT = rewrite_bit("ResolveBinaryArithmetic.expression")


def resolve_binary_arithmetic(plan: LogicalPlan, ctx) -> LogicalPlan:
    """``plan`` with datetime/interval arithmetic rewritten to its typed functions (see module
    doc)."""
    def rule(p: LogicalPlan) -> LogicalPlan:
        # resolve_interval_arithmetic returns an expression without datetime arithmetic as it
        # is, and skips subtrees an earlier run left unchanged (cheaper than searching each
        # expression for an interval or a +/- first).
        return p.map_expressions(lambda e: resolve_interval_arithmetic(e, ctx))

    return transform_up_in_run(plan, rule, ctx, "ResolveBinaryArithmetic")
