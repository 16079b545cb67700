"""Datetime and interval arithmetic (Spark 4 ANSI), built by ResolveBinaryArithmetic.

==================================  ===========================================  ===============
Spark expression                    Ember node                                   result type
==================================  ===========================================  ===============
``ts + dt-interval`` (also date)    :class:`TimestampAddInterval`                timestamp
``ts - dt-interval`` / ``- ym``     :class:`DatetimeSub`                         timestamp
``ts + ym-interval``                :class:`TimestampAddYMInterval`              timestamp
``ts - ts`` (a date side is cast)   :class:`SubtractTimestamps`                  day to second
``date - date``                     :class:`SubtractDates`                       interval day
``i + i`` / ``i - i`` (same kind)   :class:`IntervalAdd` / ``IntervalSubtract``  wider interval
``i * n`` / ``n * i``               :class:`MultiplyDTInterval` / ``YM``         day to second
                                                                                 / year to month
``i / n``                           :class:`DivideDTInterval` / ``YM``           idem
``- i``, ``abs(i)``                 :class:`IntervalNegate`, ``IntervalAbs``     same type
==================================  ===========================================  ===============

Values: timestamps and day-time intervals are int64 microseconds, year-month intervals int32
months.  Overflow follows Spark: ``ts + i``, ``ts - ts``, ``i * n`` (integral) raise a bare
``ArithmeticException`` ``long overflow`` (``Math.addExact``/``multiplyExact``), ``i + i``,
``i - i`` and ``- i`` raise ``INTERVAL_ARITHMETIC_OVERFLOW``;
dividing by zero raises ``INTERVAL_DIVIDED_BY_ZERO``.  Multiplication and division by a
fractional number round HALF_UP (Guava's ``DoubleMath.roundToLong``, ``BigDecimal.setScale``).
Time zones (``time_zone``, the session zone, set by the analyzer rule): as Spark, ``ts +/-
months`` and the whole days of ``ts +/- day-time interval`` move the local date-time (``plusMonths``
clamps to the month end, ``plusDays``; a DST gap shifts forward, an overlap keeps the offset),
the rest of a day-time interval is added to the instant; ``ts - ts`` is the difference of the
local date-times.  Names are Spark's: ``ts + INTERVAL '08'
MINUTE`` (no parentheses), ``(ts1 - ts2)``, ``(INTERVAL '01' HOUR * 3)``.
"""

from __future__ import annotations

from typing import ClassVar

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from ember import types as T
from ember.errors import ArithmeticError_
from ember.expressions import decimals as D
from ember.expressions.base import Expression, BoundReference
from ember.expressions.common import (
    TypeCheckFailure, diff_types, eval_null_intolerant, unexpected_input_type, to_array,
)
from ember.trees import node
from ember.expressions.arithmetic import overflow_error
from ember.expressions.registry import lookup_function
from ember.expressions.intervals import interval_overflow

__all__ = [
    "TimestampAddInterval", "DatetimeSub", "TimestampAddYMInterval", "SubtractTimestamps",
    "SubtractDates", "IntervalAdd", "IntervalSubtract", "MultiplyDTInterval", "DivideDTInterval",
    "MultiplyYMInterval", "DivideYMInterval", "IntervalNegate", "IntervalAbs",
]

_TS_REQUIRED = ('("(TIMESTAMP OR TIMESTAMP WITHOUT TIME ZONE)" or "(TIMESTAMP_LTZ(P) OR '
                'TIMESTAMP_NTZ(P) WITH P IN [7, 9])")')
_I32_MIN, _I32_MAX = -(1 << 31), (1 << 31) - 1


def _long_overflow() -> ArithmeticError_:
    """Java's bare ``ArithmeticException: long overflow`` (no error class)."""
    return ArithmeticError_("long overflow", error_class=None)


def _ansi_overflow(message: str) -> ArithmeticError_:
    return overflow_error(None, message)




def _micros(arr: pa.Array) -> pa.Array:
    """Timestamps / day-time intervals as int64 microseconds."""
    if pa.types.is_timestamp(arr.type) and arr.type.unit != "us":
        arr = arr.cast(pa.timestamp("us", tz=arr.type.tz))
    return arr.cast(pa.int64())


def _checked(fn, a: pa.Array, b: pa.Array, err) -> pa.Array:
    try:
        return fn(a, b)
    except pa.ArrowInvalid as e:
        if "overflow" in str(e).lower():
            raise err() from e
        raise


class _Binary(Expression):
    __slots__ = ()
    may_fail_at_runtime: ClassVar[bool] = True
    symbol: ClassVar[str] = "+"
    parens: ClassVar[bool] = True

    def _sides(self) -> tuple[Expression, Expression]:
        raise NotImplementedError

    @property
    def nullable(self) -> bool:
        a, b = self._sides()
        return a.nullable or b.nullable

    def eval(self, batch: pa.RecordBatch) -> pa.Array:
        a, b = eval_null_intolerant(self._sides(), batch)
        at = self.data_type.to_arrow()
        if pa.types.is_null(a.type) or pa.types.is_null(b.type):
            return pa.nulls(batch.num_rows, at)
        return self._eval(a, b)

    def _eval(self, a: pa.Array, b: pa.Array) -> pa.Array:
        raise NotImplementedError

    def _text(self, f) -> str:
        a, b = self._sides()
        s = f"{f(a)} {self.symbol} {f(b)}"
        return f"({s})" if self.parens else s

    def simple_string(self) -> str:
        return self._text(lambda e: e.simple_string())

    def sql(self) -> str:
        return self._text(lambda e: e.sql())


def _check_timestamp(e: Expression) -> TypeCheckFailure | None:
    if isinstance(e.data_type, (T.TimestampType, T.TimestampNTZType, T.NullType)):
        return None
    return unexpected_input_type(1, _TS_REQUIRED, e)


def _start_type(e: Expression) -> T.DataType:
    """The result type of timestamp +/- interval: the start's (TIMESTAMP_NTZ stays one)."""
    return T.TIMESTAMP_NTZ if isinstance(e.data_type, T.TimestampNTZType) else T.TIMESTAMP


def _zone_of(arr: pa.Array, time_zone: str) -> str:
    """The zone arithmetic on ``arr`` runs in: none (UTC) for TIMESTAMP_NTZ values (Arrow
    timestamps without a zone, wall-clock times already)."""
    return "UTC" if pa.types.is_timestamp(arr.type) and arr.type.tz is None else time_zone


# ---------------------------------------------------------------------------------------------
# Timestamp +/- interval


@node
class TimestampAddInterval(_Binary):
    """``start + interval`` with a TIMESTAMP start and a day-time interval (Spark 4's
    ``TimestampAddInterval``, formerly ``TimeAdd``); a DATE start arrives cast to TIMESTAMP."""

    start: Expression
    interval: Expression
    time_zone: str = "UTC"
    parens: ClassVar[bool] = False

    def _sides(self):
        return self.start, self.interval

    @property
    def data_type(self) -> T.DataType:
        return _start_type(self.start)

    def check_input_types(self) -> str | None:
        bad = _check_timestamp(self.start)
        if bad is None and not isinstance(self.interval.data_type,
                                          (T.DayTimeIntervalType, T.NullType)):
            return unexpected_input_type(2, '"INTERVAL DAY TO SECOND"', self.interval)
        return bad

    def _eval(self, a, b):
        out = _add_day_time(a, _micros(b), _zone_of(a, self.time_zone))
        return out.cast(self.data_type.to_arrow())


def _is_utc(time_zone: str) -> bool:
    return time_zone.upper() in ("UTC", "Z", "+00:00", "GMT", "ETC/UTC")


def _local(ts: pa.Array, time_zone: str) -> tuple[pa.Array, pa.Array]:
    """``(local micros, offset micros)`` of UTC timestamps in ``time_zone``."""
    utc_micros = _micros(ts)
    local = pc.local_timestamp(ts.cast(pa.timestamp("us", tz=time_zone))).cast(pa.int64())
    return local, pc.subtract(local, utc_micros)


def _resolve_local(new_local: pa.Array, preferred_offset: pa.Array, time_zone: str) -> pa.Array:
    """UTC micros of local date-times in ``time_zone`` as Java's ``ZonedDateTime.ofLocal(ldt,
    zone, preferredOffset)``: a time in a DST gap moves forward by the gap, an ambiguous one keeps
    the preferred offset when valid (else the earlier one)."""
    naive = new_local.cast(pa.timestamp("us"))
    early = pc.assume_timezone(naive, timezone=time_zone, ambiguous="earliest",
                               nonexistent="earliest")
    late = pc.assume_timezone(naive, timezone=time_zone, ambiguous="latest",
                              nonexistent="latest")
    early_local = pc.local_timestamp(early).cast(pa.int64())
    off_e = pc.subtract(early_local, early.cast(pa.int64()))
    off_l = pc.subtract(pc.local_timestamp(late).cast(pa.int64()), late.cast(pa.int64()))
    gap = pc.not_equal(early_local, new_local)
    keep_late = pc.and_(pc.invert(gap), pc.equal(preferred_offset, off_l))
    offset = pc.if_else(keep_late, off_l, off_e)
    return pc.subtract(new_local, offset)


def _add_months_micros(ts: pa.Array, months: pa.Array, time_zone: str) -> pa.Array:
    """Timestamps plus months on their local date-time in ``time_zone`` (day clamped to the end
    of the month, time of day kept), as Spark's ``timestampAddMonths`` (``plusMonths``)."""

    utc = _is_utc(time_zone)
    if utc:
        micros, offset = _micros(ts), None
    else:
        micros, offset = _local(ts, time_zone)
    days = pc.floor(pc.divide(micros.cast(pa.float64()), 86_400_000_000.0)).cast(pa.int64())
    tod = pc.subtract(micros, pc.multiply(days, 86_400_000_000))
    batch = pa.RecordBatch.from_arrays([days.cast(pa.int32()).cast(pa.date32()),
                                        months.cast(pa.int32())], ["d", "m"])
    fn = lookup_function("add_months", (BoundReference(0, T.DATE, True),
                                        BoundReference(1, T.INT, True)))
    new_days = fn.eval(batch).cast(pa.int32()).cast(pa.int64())
    new_local = pc.add(pc.multiply(new_days, 86_400_000_000), tod)
    out = new_local if utc else _resolve_local(new_local, offset, time_zone)
    return out.cast(pa.timestamp("us", tz="UTC"))


def _add_day_time(ts: pa.Array, interval_micros: pa.Array, time_zone: str) -> pa.Array:
    """Spark's ``timestampAddDayTime``: the interval's whole days are added to the local
    date-time in ``time_zone`` (``plusDays``), the rest as microseconds; ``Math.addExact``
    overflow is a bare ``long overflow``."""
    if _is_utc(time_zone):
        out = _checked(pc.add_checked, _micros(ts), interval_micros, _long_overflow)
        return out.cast(T.TIMESTAMP.to_arrow())
    days = pc.divide(interval_micros, 86_400_000_000)  # int64 division truncates toward zero
    rest = pc.subtract(interval_micros, pc.multiply(days, 86_400_000_000))
    local, offset = _local(ts, time_zone)
    new_local = _checked(pc.add_checked, local, pc.multiply(days, 86_400_000_000),
                         _long_overflow)
    out = _checked(pc.add_checked, _resolve_local(new_local, offset, time_zone), rest,
                   _long_overflow)
    return out.cast(T.TIMESTAMP.to_arrow())


@node
class TimestampAddYMInterval(_Binary):
    """``timestamp + year-month interval`` (Spark's ``TimestampAddYMInterval``)."""

    timestamp: Expression
    interval: Expression
    time_zone: str = "UTC"
    parens: ClassVar[bool] = False

    def _sides(self):
        return self.timestamp, self.interval

    @property
    def data_type(self) -> T.DataType:
        return _start_type(self.timestamp)

    def check_input_types(self) -> str | None:
        return _check_timestamp(self.timestamp)

    def _eval(self, a, b):
        out = _add_months_micros(a, b, _zone_of(a, self.time_zone))
        return out.cast(self.data_type.to_arrow())


@node
class DatetimeSub(_Binary):
    """``left - right``: a timestamp minus a day-time or year-month interval (Spark's
    ``DatetimeSub`` over ``TimestampAddInterval(l, -r)`` / ``TimestampAddYMInterval``); prints as
    ``left - right``."""

    left: Expression
    right: Expression
    time_zone: str = "UTC"
    symbol: ClassVar[str] = "-"
    parens: ClassVar[bool] = False

    def _sides(self):
        return self.left, self.right

    @property
    def data_type(self) -> T.DataType:
        return _start_type(self.left)

    def check_input_types(self) -> str | None:
        return _check_timestamp(self.left)

    def _eval(self, a, b):
        if isinstance(self.right.data_type, T.YearMonthIntervalType):
            neg = _checked(lambda x, _: pc.negate_checked(x), b.cast(pa.int32()), b,
                           lambda: _ansi_overflow("integer overflow"))
            out = _add_months_micros(a, neg, _zone_of(a, self.time_zone))
        else:
            neg = _checked(lambda x, _: pc.negate_checked(x), _micros(b), b, _long_overflow)
            out = _add_day_time(a, neg, _zone_of(a, self.time_zone))
        return out.cast(self.data_type.to_arrow())


@node
class SubtractTimestamps(_Binary):
    """``left - right`` of two timestamps: a day-time interval (Spark's ``SubtractTimestamps``,
    ``interval day to second``)."""

    left: Expression
    right: Expression
    time_zone: str = "UTC"
    symbol: ClassVar[str] = "-"

    def _sides(self):
        return self.left, self.right

    @property
    def data_type(self) -> T.DataType:
        return T.DayTimeIntervalType(0, 3)

    def check_input_types(self) -> str | None:
        for i, e in ((1, self.left), (2, self.right)):
            if not isinstance(e.data_type, (T.TimestampType, T.TimestampNTZType, T.NullType)):
                return unexpected_input_type(i, '"TIMESTAMP"', e)
        return None

    def _eval(self, a, b):
        if _is_utc(_zone_of(a, self.time_zone)):
            la, lb = _micros(a), _micros(b)
        else:  # Spark: ChronoUnit.MICROS.between the local date-times
            la, lb = _local(a, self.time_zone)[0], _local(b, self.time_zone)[0]
        out = _checked(pc.subtract_checked, la, lb, _long_overflow)
        return out.cast(pa.duration("us"))


@node
class SubtractDates(_Binary):
    """``left - right`` of two dates: ``interval day`` (Spark's ``SubtractDates``)."""

    left: Expression
    right: Expression
    symbol: ClassVar[str] = "-"

    def _sides(self):
        return self.left, self.right

    @property
    def data_type(self) -> T.DataType:
        return T.DayTimeIntervalType(0, 0)

    def check_input_types(self) -> str | None:
        for i, e in ((1, self.left), (2, self.right)):
            if not isinstance(e.data_type, (T.DateType, T.NullType)):
                return unexpected_input_type(i, '"DATE"', e)
        return None

    def _eval(self, a, b):
        days = pc.subtract(a.cast(pa.int32()).cast(pa.int64()), b.cast(pa.int32()).cast(pa.int64()))
        return pc.multiply(days, 86_400_000_000).cast(pa.duration("us"))


# ---------------------------------------------------------------------------------------------
# Interval +/- interval, negation


class _IntervalPair(_Binary):
    __slots__ = ()
    left: Expression
    right: Expression

    def _sides(self):
        return self.left, self.right

    @property
    def data_type(self) -> T.DataType:
        lt, rt = self.left.data_type, self.right.data_type
        return rt if isinstance(lt, T.NullType) else lt

    def check_input_types(self) -> str | None:
        lt, rt = self.left.data_type, self.right.data_type
        if type(lt) is not type(rt) and not isinstance(lt, T.NullType) \
                and not isinstance(rt, T.NullType):
            return diff_types(self.left, self.right)
        return None

    def _eval(self, a, b):
        fn = pc.add_checked if self.symbol == "+" else pc.subtract_checked
        try_fn = "try_add" if self.symbol == "+" else "try_subtract"
        err = lambda: interval_overflow(try_fn)  # noqa: E731
        if isinstance(self.data_type, T.YearMonthIntervalType):
            return _checked(fn, a.cast(pa.int32()), b.cast(pa.int32()), err)
        out = _checked(fn, _micros(a), _micros(b), err)
        return out.cast(pa.duration("us"))


@node
class IntervalAdd(_IntervalPair):
    """``left + right`` of two intervals of one kind (both cast to their wider type)."""

    left: Expression
    right: Expression


@node
class IntervalSubtract(_IntervalPair):
    """``left - right`` of two intervals of one kind (both cast to their wider type)."""

    left: Expression
    right: Expression
    symbol: ClassVar[str] = "-"


class _IntervalUnary(Expression):
    """A unary function of an ANSI interval keeping its type, computed with the checked Arrow
    kernel ``kernel`` (overflow -> Spark's interval overflow error)."""

    __slots__ = ()
    may_fail_at_runtime: ClassVar[bool] = True
    kernel: ClassVar[str] = ""

    @property
    def data_type(self) -> T.DataType:
        return self.child.data_type  # type: ignore[attr-defined]

    @property
    def nullable(self) -> bool:
        return self.child.nullable  # type: ignore[attr-defined]

    def eval(self, batch: pa.RecordBatch) -> pa.Array:
        a = to_array(self.child.eval(batch), batch.num_rows)  # type: ignore[attr-defined]
        fn = getattr(pc, self.kernel)
        err = lambda: interval_overflow(None)  # noqa: E731
        if isinstance(self.data_type, T.YearMonthIntervalType):
            return _checked(lambda x, _: fn(x), a.cast(pa.int32()), a, err)
        return _checked(lambda x, _: fn(x), _micros(a), a, err).cast(pa.duration("us"))


@node
class IntervalNegate(_IntervalUnary):
    """``- interval`` (Spark's ``UnaryMinus`` on an ANSI interval; same type)."""

    child: Expression
    function_name: str | None = None
    kernel: ClassVar[str] = "negate_checked"
    #: Spark's ``UnaryMinus`` (printed as one when a cast hides it: see ``to_pretty_sql``)
    is_unary_minus: ClassVar[bool] = True

    def simple_string(self) -> str:
        return f"-{self.child.simple_string()}"

    def sql(self) -> str:
        if self.function_name:
            return f"{self.function_name}({self.child.sql()})"
        return f"(- {self.child.sql()})"


@node
class IntervalAbs(_IntervalUnary):
    """``abs(interval)`` (Spark's ``Abs`` on an ANSI interval; same type)."""

    child: Expression
    kernel: ClassVar[str] = "abs_checked"

    def simple_string(self) -> str:
        return f"abs({self.child.simple_string()})"

    def sql(self) -> str:
        return f"abs({self.child.sql()})"


# ---------------------------------------------------------------------------------------------
# Interval * / number


def _half_up_div(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """``a / b`` rounded HALF_UP (ties away from zero) for Python-int object arrays."""
    sign = np.where((a < 0) != (b < 0), -1, 1)
    aa, bb = np.abs(a), np.abs(b)
    q, r = aa // bb, aa % bb
    q = q + (2 * r >= bb)
    return sign * q


def _round_half_up(x: np.ndarray) -> np.ndarray:
    """Doubles rounded HALF_UP (ties away from zero), as ``DoubleMath.roundToLong``."""
    return np.where(x >= 0, np.floor(x + 0.5), -np.floor(-x + 0.5))


class _IntervalByNumber(_Binary):
    """Shared kernel of ``interval * num`` / ``interval / num``."""

    __slots__ = ()
    interval: Expression
    num: Expression
    divide: ClassVar[bool] = False
    year_month: ClassVar[bool] = False

    def _sides(self):
        return self.interval, self.num

    @property
    def data_type(self) -> T.DataType:
        return T.YearMonthIntervalType(0, 1) if self.year_month else T.DayTimeIntervalType(0, 3)

    def check_input_types(self) -> str | None:
        t = self.num.data_type
        if not t.is_numeric and not isinstance(t, T.NullType):
            return unexpected_input_type(2, '"NUMERIC"', self.num)
        return None

    def _overflow(self) -> ArithmeticError_:
        if self.year_month:
            return ArithmeticError_("integer overflow", error_class=None)
        return _long_overflow()

    def _eval(self, a, b):
        n = len(a)
        valid = np.ones(n, dtype=bool)
        for arr in (a, b):
            if arr.null_count:
                valid &= arr.is_valid().to_numpy(zero_copy_only=False)
        iv = pc.fill_null(a.cast(pa.int64()), 0).to_numpy(zero_copy_only=False)
        nt = self.num.data_type
        lo, hi = (_I32_MIN, _I32_MAX) if self.year_month else (-(1 << 63), (1 << 63) - 1)
        if isinstance(nt, T.DecimalType):
            unscaled, _ = D.unscaled(b)
            num_zero = (unscaled == 0) & valid
        elif nt.is_integral:
            nv = pc.fill_null(b.cast(pa.int64()), 1).to_numpy(zero_copy_only=False)
            num_zero = (nv == 0) & valid
        else:
            nv = pc.fill_null(b.cast(pa.float64()), 1.0).to_numpy(zero_copy_only=False)
            num_zero = (nv == 0) & valid
        if self.divide and num_zero.any():
            raise ArithmeticError_(
                "Division by zero. Use `try_divide` to tolerate divisor being 0 and return NULL "
                "instead.", error_class="INTERVAL_DIVIDED_BY_ZERO")
        if isinstance(nt, T.DecimalType):
            scale = 10 ** nt.scale
            ivo = iv.astype(object)
            den = np.where(valid, unscaled, 1)
            res = _half_up_div(ivo * scale, den) if self.divide else \
                _half_up_div(ivo * den, np.full(n, scale, dtype=object))
            res = np.where(valid, res, 0)
            if ((res < lo) | (res > hi)).any():
                raise self._overflow()
            out = res.astype(np.int64)
        elif nt.is_integral:
            if self.divide:
                ivo, nvo = iv.astype(object), nv.astype(object)
                res = np.where(valid, _half_up_div(ivo, nvo), 0)
                if ((res < lo) | (res > hi)).any():
                    raise interval_overflow("try_divide")
                out = res.astype(np.int64)
            else:
                try:
                    prod = pc.multiply_checked(pa.array(iv), pa.array(nv))
                except pa.ArrowInvalid:
                    raise self._overflow() from None
                out = prod.to_numpy(zero_copy_only=False)
                if self.year_month and (((out < lo) | (out > hi)) & valid).any():
                    raise self._overflow()
        else:
            with np.errstate(all="ignore"):
                x = iv.astype(np.float64) / nv if self.divide else iv.astype(np.float64) * nv
            x = np.where(valid, x, 0.0)
            if not np.isfinite(x).all():
                raise ArithmeticError_("input is infinite or NaN", error_class=None)
            r = _round_half_up(x)
            out_of_range = (r < lo) | (r >= float(hi) + 1)
            if out_of_range.any():
                raise ArithmeticError_(
                    f"rounded value is out of range for input {x[out_of_range][0]} and "
                    "rounding mode HALF_UP", error_class=None)
            out = r.astype(np.int64)
        at = self.data_type.to_arrow()
        res_arr = pa.array(out.astype(np.int32) if self.year_month else out,
                           mask=None if valid.all() else ~valid)
        return res_arr.cast(at)


@node
class MultiplyDTInterval(_IntervalByNumber):
    """``interval * num`` / ``num * interval`` for a day-time interval."""

    interval: Expression
    num: Expression
    symbol: ClassVar[str] = "*"


@node
class DivideDTInterval(_IntervalByNumber):
    """``interval / num`` for a day-time interval."""

    interval: Expression
    num: Expression
    symbol: ClassVar[str] = "/"
    divide: ClassVar[bool] = True


@node
class MultiplyYMInterval(_IntervalByNumber):
    """``interval * num`` / ``num * interval`` for a year-month interval."""

    interval: Expression
    num: Expression
    symbol: ClassVar[str] = "*"
    year_month: ClassVar[bool] = True


@node
class DivideYMInterval(_IntervalByNumber):
    """``interval / num`` for a year-month interval."""

    interval: Expression
    num: Expression
    symbol: ClassVar[str] = "/"
    divide: ClassVar[bool] = True
    year_month: ClassVar[bool] = True

