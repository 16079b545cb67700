"""ResolveBinaryArithmetic: ``DATE +/- INTERVAL`` becomes a date function (Spark's rule of the
same name, restricted to the interval literals Ember supports, see ember.expressions.intervals).

Before::  (d#1 - INTERVAL '90' DAY)
After::   date_add(d#1, (- extractansiintervaldays(INTERVAL '90' DAY)))

Before::  (d#1 + INTERVAL '3' MONTH)          (also ``INTERVAL '3' MONTH + d#1``)
After::   d#1 + INTERVAL '3' MONTH            (DateAddYMInterval: add_months semantics)

Before::  (d#1 + 1), (1 + d#1), (d#1 - i#2)   (a date and a non-datetime, non-string operand)
After::   date_add(d#1, 1), date_add(d#1, 1), date_sub(d#1, i#2)

It runs before ResolveAliases in the Resolution batch, so generated column names are Spark's
(``date_add(DATE '1998-12-01', (- extractansiintervaldays(INTERVAL '90' DAY)))``).  A NULL date
gives NULL.  TIMESTAMP +/- interval (a timestamp in Spark) is not supported: ``UnsupportedError``.
Other operands are left for CheckAnalysis to report (``DATATYPE_MISMATCH``).  No configuration
keys are read.

Fast path: the rewrite depends on the expression alone, so it runs through
``ember.trees.transform_up_memo``: expressions an earlier iteration left unchanged are skipped.
"""

from __future__ import annotations

from ember import types as T
from ember.analysis.rules._util import transform_up_in_run
from ember.errors import UnsupportedError
from ember.expressions.base import Expression
from ember.plans.logical.nodes import LogicalPlan
from ember.trees import rewrite_bit, transform_up_memo

_INTERVALS = (T.YearMonthIntervalType, T.DayTimeIntervalType)


def _is_interval(e: Expression) -> bool:
    return e.resolved and isinstance(e.data_type, _INTERVALS)


def _date_plus_interval(date: Expression, interval: Expression, negate: bool) -> Expression:
    from ember.expressions.arithmetic import UnaryMinus
    from ember.expressions.cast import Cast
    from ember.expressions.intervals import DateAddYMInterval, ExtractANSIIntervalDays
    from ember.expressions.registry import lookup_function

    t = date.data_type
    if isinstance(t, T.NullType):
        date = Cast(date, T.DATE)
    elif not isinstance(t, T.DateType):
        raise UnsupportedError(
            f"Ember supports INTERVAL arithmetic only with a DATE, not {t.simple_string()}.",
            error_class="UNSUPPORTED_FEATURE")
    if isinstance(interval.data_type, T.YearMonthIntervalType):
        return DateAddYMInterval(date, interval, negate)
    days: Expression = ExtractANSIIntervalDays(interval)
    if negate:
        days = UnaryMinus(days)
    return lookup_function("date_add", (date, days))


def _is_date(e: Expression) -> bool:
    return e.resolved and isinstance(e.data_type, T.DateType)


def _is_day_count(e: Expression) -> bool:
    """A non-datetime, non-string operand next to a date: Spark makes ``date_add``/``date_sub``
    of it (which then type-checks it as an int)."""
    return e.resolved and not isinstance(
        e.data_type, (T.DateType, T.TimestampType, T.StringType, T.NullType) + _INTERVALS)


def resolve_interval_arithmetic(e: Expression) -> Expression:
    """``e`` with every ``date +/- interval`` and ``date +/- days`` (resolved operands)
    replaced."""
    from ember.expressions.arithmetic import Add, Subtract
    from ember.expressions.registry import lookup_function

    def rule(x: Expression) -> Expression | None:
        match x:
            case Add(left=l, right=r) if _is_date(l) and _is_day_count(r):
                return lookup_function("date_add", (l, r))
            case Add(left=l, right=r) if _is_day_count(l) and _is_date(r):
                return lookup_function("date_add", (r, l))
            case Subtract(left=l, right=r) if _is_date(l) and _is_day_count(r):
                return lookup_function("date_sub", (l, r))
            case Add(left=l, right=r) if _is_interval(r) and l.resolved and not _is_interval(l):
                return _date_plus_interval(l, r, negate=False)
            case Add(left=l, right=r) if _is_interval(l) and r.resolved and not _is_interval(r):
                return _date_plus_interval(r, l, negate=False)
            case Subtract(left=l, right=r) if (_is_interval(r) and l.resolved
                                               and not _is_interval(l)):
                return _date_plus_interval(l, r, negate=True)
            case _:
                return None

    return transform_up_memo(e, rule, _INTERVAL_BIT)


_INTERVAL_BIT = rewrite_bit("ResolveBinaryArithmetic.expression")


def resolve_binary_arithmetic(plan: LogicalPlan, ctx) -> LogicalPlan:
    """``plan`` with datetime/interval arithmetic rewritten to its typed functions (see module
    doc)."""
    def rule(p: LogicalPlan) -> LogicalPlan:
        # resolve_interval_arithmetic returns an expression without datetime arithmetic as it
        # is, and skips subtrees an earlier run left unchanged (cheaper than searching each
        # expression for an interval or a +/- first).
        return p.map_expressions(resolve_interval_arithmetic)

    return transform_up_in_run(plan, rule, ctx, "ResolveBinaryArithmetic")
