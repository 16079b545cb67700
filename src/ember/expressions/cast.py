"""``CAST(child AS type)`` with Spark 4 ANSI semantics.

- string -> numeric/boolean/date/timestamp: the string is trimmed; malformed input raises
  ``CAST_INVALID_INPUT`` (``'1.9'`` is not an int; ``'1e3'`` is not an int but is a double;
  ``'NaN'``/``'Infinity'``/``'inf'`` are doubles; booleans accept t/true/y/yes/1 and
  f/false/n/no/0; dates accept ``yyyy[-m[m][-d[d]]]`` followed by anything after a space or
  ``T``; timestamps ``yyyy-mm-dd[( |T)hh:mm[:ss[.ffffff]]]`` in the session time zone).
- numeric narrowing out of range raises ``CAST_OVERFLOW``; double -> integral truncates toward
  zero; to decimal rounds HALF_UP and raises ``NUMERIC_VALUE_OUT_OF_RANGE.WITH_SUGGESTION`` when
  the value does not fit (double -> decimal goes through the double's shortest decimal string,
  as Spark's ``BigDecimal(d.toString)`` does: ``1.255D`` -> ``1.26``).
- to string: doubles as Java prints them (``1.0``, ``1.0E20``, ``1.0E-5``), decimals keep their
  scale, dates ``yyyy-MM-dd``, timestamps ``yyyy-MM-dd HH:mm:ss[.fraction without trailing
  zeros]`` in the session time zone, booleans ``true``/``false``.
- timestamp <-> numeric is in seconds since the epoch (timestamp -> integral floors).
  date <-> numeric is not allowed under ANSI.

Legacy mode (``legacy=True``: Spark's ``EvalMode.LEGACY`` Cast, ``spark.sql.ansi.enabled=false``;
set by the analyzer's ResolveEvalMode) never raises: malformed strings and decimal overflow give
NULL, a string with a fraction casts to an integral by truncation (``'1.9'`` -> 1), integral
narrowing wraps (``CAST(300 AS TINYINT)`` = 44), fractional -> int/bigint is Java's saturating
``(int)``/``(long)`` conversion (NaN -> 0) and -> tinyint/smallint goes through ``(int)`` and
wraps, decimal -> integral truncates and wraps, timestamp -> int/smallint/tinyint is NULL when
its seconds do not fit (Spark's legacy ``castToInt`` checks ``longValue == longValue.toInt``),
date -> numeric/boolean is NULL,
boolean -> timestamp is 1 microsecond for true.  ``ansi=False`` alone is ``try_cast`` (NULL on
any failure, no wrapping).

Slow paths (documented, per distinct value in Python): string -> decimal parsing and double ->
string formatting.
"""

from __future__ import annotations

from decimal import Decimal, InvalidOperation
from typing import ClassVar

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from ember import types as T
from ember.errors import ArithmeticError_, CastError
from ember.expressions import decimals as D
from ember.expressions.base import Expression, Literal, literal_to_sql
from ember.expressions.common import TypeCheckFailure, sql_type, to_array
from ember.formatting import java_double_str, java_subnormal_str
from ember.trees import node
from ember.coercion import can_cast
from ember.expressions.intervals import parse_interval_strings, truncate_interval, format_intervals
from ember.expressions.calendar_intervals import calendar_to_strings, strings_to_calendar

__all__ = ["Cast", "CheckOverflowInTableInsert", "cast_array", "format_double", "java_double_str"]


@node
class Cast(Expression):
    """``CAST(child AS to_type)``; ``ansi=False`` returns NULL instead of raising (``try_cast``),
    ``legacy=True`` is Spark's legacy (non-ANSI) Cast (see the module docstring)."""

    child: Expression
    to_type: T.DataType
    ansi: bool = True
    time_zone: str = "UTC"
    legacy: bool = False

    may_fail_at_runtime: ClassVar[bool] = True

    @property
    def data_type(self) -> T.DataType:
        return self.to_type

    @property
    def nullable(self) -> bool:
        if self.child.nullable:
            return True
        if not self.ansi:
            return True
        # ANSI casts never produce NULL from non-NULL except for these.
        return False

    @property
    def foldable(self) -> bool:
        return self.child.foldable

    @property
    def ansi_mode(self) -> bool:
        return self.ansi and not self.legacy

    def to_legacy_mode(self) -> "Cast":
        return self.copy(ansi=False, legacy=True)

    def check_input_types(self) -> str | None:
        f, t = self.child.data_type, self.to_type
        if can_cast(f, t, self.ansi):
            return None
        if self.legacy and _legacy_can_cast(f, t):
            return None
        ft, tt = sql_type(f), sql_type(t)
        # Spark's Cast.typeCheckFailureMessage: suggest a function, or the ANSI config when the
        # legacy (non-ANSI) cast would be allowed.
        fn = None
        if f.is_numeric and isinstance(t, T.DateType):
            fn = "`DATE_FROM_UNIX_DATE`"
        elif isinstance(f, T.DateType) and t.is_numeric:
            fn = "`UNIX_DATE`"
        if fn is not None and self.ansi:
            return TypeCheckFailure(
                f"cannot cast {ft} to {tt}. To convert values from {ft} to {tt}, you can use the "
                f"functions {fn} instead.", "CAST_WITH_FUNC_SUGGESTION",
                {"srcType": ft, "targetType": tt, "functionNames": fn})
        if self.ansi and _legacy_can_cast(f, t):
            return TypeCheckFailure(
                f"cannot cast {ft} to {tt} with ANSI mode on. If you have to cast {ft} to {tt}, "
                "you can set \"spark.sql.ansi.enabled\" as 'false'.", "CAST_WITH_CONF_SUGGESTION",
                {"srcType": ft, "targetType": tt, "config": '"spark.sql.ansi.enabled"',
                 "configVal": "'false'"})
        return TypeCheckFailure(f"cannot cast {ft} to {tt}.", "CAST_WITHOUT_SUGGESTION",
                                {"srcType": ft, "targetType": tt})

    def eval(self, batch: pa.RecordBatch) -> pa.Array:
        arr = to_array(self.child.eval(batch), batch.num_rows)
        return cast_array(arr, self.child.data_type, self.to_type, self.ansi, self.time_zone,
                          legacy=self.legacy)

    def simple_string(self) -> str:
        return f"cast({self.child.simple_string()} as {self.to_type.simple_string()})"

    def sql(self) -> str:
        if isinstance(self.to_type, (T.ArrayType, T.MapType, T.StructType)):
            # Spark's Cast.sql omits casts to complex types (they name a column as the child)
            return self.child.sql()
        return f"CAST({self.child.sql()} AS {self.to_type.simple_string().upper()})"



@node
class CheckOverflowInTableInsert(Expression):
    """An insert's ANSI cast into a table column (Spark's ``CheckOverflowInTableInsert``): an
    overflow (``CAST_OVERFLOW``) becomes ``CAST_OVERFLOW_IN_TABLE_INSERT`` naming the column,
    since the store-assignment policy, not ANSI mode, decides the behaviour.  Prints as its
    cast."""

    child: Cast
    column_name: str

    @property
    def data_type(self) -> T.DataType:
        return self.child.data_type

    @property
    def nullable(self) -> bool:
        return self.child.nullable

    def eval(self, batch: pa.RecordBatch) -> pa.Array:
        try:
            return self.child.eval(batch)
        except CastError as e:
            if e.error_class != "CAST_OVERFLOW":
                raise
            src, dst = sql_type(self.child.child.data_type), sql_type(self.child.to_type)
            raise ArithmeticError_(
                f"Fail to assign a value of {src} type to the {dst} type column or variable "
                f"{self.column_name} due to an overflow. Use `try_cast` on the input value to "
                "tolerate overflow and return NULL instead.",
                error_class="CAST_OVERFLOW_IN_TABLE_INSERT",
                parameters={"sourceType": src, "targetType": dst,
                            "columnName": self.column_name},
            ) from e

    def simple_string(self) -> str:
        return self.child.simple_string()

    def sql(self) -> str:
        return self.child.sql()


def _legacy_can_cast(f: T.DataType, t: T.DataType) -> bool:
    """Spark's legacy ``Cast.canCast`` beyond what ``can_cast(ansi=False)`` allows: datetime ->
    boolean, boolean -> timestamp (numeric -> date stays refused, as in Spark)."""

    if f.is_numeric and isinstance(t, T.DateType):
        return False
    return can_cast(f, t, False) or (
        isinstance(t, T.BooleanType) and isinstance(f, (T.DateType, T.TimestampType))) or (
        isinstance(f, T.BooleanType) and isinstance(t, T.TimestampType))


# ---------------------------------------------------------------------------------------------
# Errors


def _value_sql(value: object, t: T.DataType) -> str:
    if isinstance(t, T.DoubleType) and isinstance(value, float):
        return java_double_str(value) + "D"
    if isinstance(t, T.StringType):
        return f"'{value}'"
    return literal_to_sql(value, t)


def _invalid_input(value: object, from_t: T.DataType, to_t: T.DataType) -> CastError:
    v = f"'{value}'" if isinstance(from_t, T.StringType) else _value_sql(value, from_t)
    return CastError(
        f"The value {v} of the type {sql_type(from_t)} cannot be cast to {sql_type(to_t)} because "
        "it is malformed. Correct the value as per the syntax, or change its target type. Use "
        "`try_cast` to tolerate malformed input and return NULL instead.",
        error_class="CAST_INVALID_INPUT",
        parameters={"expression": v, "sourceType": sql_type(from_t), "targetType": sql_type(to_t)},
    )


def _overflow(value: object, from_t: T.DataType, to_t: T.DataType) -> CastError:
    v = _value_sql(value, from_t)
    return CastError(
        f"The value {v} of the type {sql_type(from_t)} cannot be cast to {sql_type(to_t)} due to "
        "an overflow. Use `try_cast` to tolerate overflow and return NULL instead.",
        error_class="CAST_OVERFLOW",
        parameters={"value": v, "sourceType": sql_type(from_t), "targetType": sql_type(to_t)},
    )


class _Fail:
    """Collects rows that failed: raise (ANSI) or null them (non-ANSI)."""

    def __init__(self, ansi: bool, n: int, legacy: bool = False) -> None:
        self.ansi = ansi and not legacy
        #: Spark's legacy Cast: wrap instead of NULL on integral overflow (see the module doc)
        self.legacy = legacy
        self.bad = np.zeros(n, dtype=bool)

    def check(self, bad: np.ndarray, arr: pa.Array, make_error) -> None:
        if bad.any():
            if self.ansi:
                i = int(np.flatnonzero(bad)[0])
                raise make_error(arr[i].as_py())
            self.bad |= bad

    def apply(self, out: pa.Array) -> pa.Array:
        if self.bad.any():
            return pc.if_else(pa.array(self.bad), pa.scalar(None, out.type), out)
        return out


def _valid_np(arr: pa.Array) -> np.ndarray:
    if arr.null_count == 0:
        return np.ones(len(arr), dtype=bool)
    return arr.is_valid().to_numpy(zero_copy_only=False)


def _np_int(arr: pa.Array) -> np.ndarray:
    return pc.fill_null(arr.cast(pa.int64()), 0).to_numpy(zero_copy_only=False)


def _np_float(arr: pa.Array) -> np.ndarray:
    return pc.fill_null(arr.cast(pa.float64()), 0.0).to_numpy(zero_copy_only=False)


def _mask(bool_arr: pa.Array) -> np.ndarray:
    return pc.fill_null(bool_arr, False).to_numpy(zero_copy_only=False).astype(bool)


# ---------------------------------------------------------------------------------------------
# Dispatcher


def cast_array(arr: pa.Array, from_t: T.DataType, to_t: T.DataType, ansi: bool = True,
               time_zone: str = "UTC", *, legacy: bool = False) -> pa.Array:
    """Cast an Arrow array of SQL type ``from_t`` to ``to_t`` with Spark's semantics (ANSI,
    ``try_cast`` with ``ansi=False``, or the legacy Cast with ``legacy=True``)."""
    n = len(arr)
    at = to_t.to_arrow()
    if from_t == to_t:
        return arr if arr.type == at else arr.cast(at)
    if isinstance(from_t, T.NullType) or pa.types.is_null(arr.type):
        return pa.nulls(n, at)
    fail = _Fail(ansi, n, legacy)
    if legacy:
        if isinstance(from_t, T.DateType) and (to_t.is_numeric
                                                or isinstance(to_t, T.BooleanType)):
            return pa.nulls(n, at)  # Spark's legacy castTo*(DateType): always null
        if isinstance(from_t, T.BooleanType) and isinstance(to_t, T.TimestampType):
            micros = pc.if_else(arr, pa.scalar(1, pa.int64()), pa.scalar(0, pa.int64()))
            return micros.cast(pa.timestamp("us", tz="UTC"))
        if isinstance(from_t, T.TimestampType) and isinstance(to_t, T.BooleanType):
            return pc.not_equal(arr.cast(pa.int64()), pa.scalar(0, pa.int64()))
        if from_t.is_integral and isinstance(to_t, T.BinaryType):
            return _integral_to_binary(arr, from_t)
    if isinstance(to_t, T.StringType):
        return _to_string(arr, from_t, time_zone)
    if isinstance(to_t, T.CalendarIntervalType) and isinstance(from_t, T.StringType):
        return strings_to_calendar(arr)  # NULL for bad text, under ANSI too (Spark's Cast)
    if isinstance(to_t, (T.DayTimeIntervalType, T.YearMonthIntervalType)):
        if isinstance(from_t, T.StringType):
            return parse_interval_strings(arr, to_t, ansi)
        if type(from_t) is type(to_t):
            return truncate_interval(arr, from_t, to_t)
        raise _unsupported(from_t, to_t)
    if isinstance(from_t, T.StringType):
        trimmed = pc.utf8_trim_whitespace(arr)
        if to_t.is_integral:
            out = _string_to_integral(arr, trimmed, to_t, fail)
        elif isinstance(to_t, (T.FloatType, T.DoubleType)):
            out = _string_to_float(arr, trimmed, to_t, fail)
        elif isinstance(to_t, T.DecimalType):
            out = _string_to_decimal(arr, trimmed, to_t, fail)
        elif isinstance(to_t, T.BooleanType):
            out = _string_to_bool(arr, trimmed, fail)
        elif isinstance(to_t, T.DateType):
            out = _string_to_date(arr, trimmed, fail)
        elif isinstance(to_t, T.TimestampType):
            out = _string_to_timestamp(arr, trimmed, fail, time_zone)
        elif isinstance(to_t, T.TimestampNTZType):
            out = _string_to_timestamp(arr, trimmed, fail, time_zone, ntz=True)
        elif isinstance(to_t, T.BinaryType):
            out = arr.cast(pa.large_binary())
        else:
            raise _unsupported(from_t, to_t)
        return fail.apply(out)
    if isinstance(from_t, (T.DayTimeIntervalType, T.YearMonthIntervalType)) and (
            to_t.is_integral or isinstance(to_t, T.DecimalType)):
        units, units_t = _interval_units(arr, from_t)
        return cast_array(units, units_t, to_t, ansi, time_zone, legacy=legacy)
    if isinstance(to_t, T.BooleanType):
        if isinstance(from_t, T.DecimalType):
            v, valid = D.unscaled(arr)
            return pa.array(v != 0, mask=~valid, type=pa.bool_())
        return pc.not_equal(arr, pa.scalar(0, arr.type))
    if isinstance(from_t, T.BooleanType):
        if isinstance(to_t, T.DecimalType):
            return cast_array(arr.cast(pa.int8()), T.BYTE, to_t, ansi, time_zone, legacy=legacy)
        return arr.cast(at)
    if isinstance(to_t, T.DecimalType):
        return fail.apply(_to_decimal(arr, from_t, to_t, fail))
    if to_t.is_integral:
        return fail.apply(_to_integral(arr, from_t, to_t, fail))
    if isinstance(to_t, (T.FloatType, T.DoubleType)):
        if isinstance(from_t, T.DecimalType):
            v, valid = D.unscaled(arr)
            return pa.array(D.to_float(v, from_t.scale), mask=~valid).cast(at)
        if isinstance(from_t, T.TimestampType):
            micros = arr.cast(pa.int64())
            return pc.divide(micros.cast(pa.float64()), 1e6).cast(at)
        return arr.cast(at, safe=False)  # bigint -> double may round (2^63-1 -> 2^63), as Java
    if isinstance(to_t, T.TimestampType):
        if isinstance(from_t, T.DateType):
            days = arr.cast(pa.int32())
            if pc.any(pc.or_(pc.greater(days, _MAX_TIMESTAMP_DAYS),
                             pc.less(days, -_MAX_TIMESTAMP_DAYS))).as_py():
                # Spark: Math.multiplyExact(days, MICROS_PER_DAY), a bare ArithmeticException
                # (no error class), e.g. for a wrapped-around date_add result.
                raise ArithmeticError_("long overflow", error_class=None)
            naive = arr.cast(pa.timestamp("us"))
            if time_zone.upper() in ("UTC", "Z", "+00:00", "GMT"):
                return naive.cast(at)
            return pc.assume_timezone(naive, timezone=time_zone).cast(at)
        if from_t.is_numeric:
            return fail.apply(_numeric_to_timestamp(arr, from_t, fail))
    if isinstance(to_t, T.DateType) and isinstance(from_t, T.TimestampType):
        local = _local_naive(arr, time_zone)
        return local.cast(pa.date32())
    if isinstance(from_t, T.TimestampNTZType) or isinstance(to_t, T.TimestampNTZType):
        return _ntz_cast(arr, from_t, to_t, time_zone)
    if isinstance(to_t, T.BinaryType):
        return arr.cast(at)
    if isinstance(to_t, T.StructType) and isinstance(from_t, T.StructType):
        fields = [cast_array(pc.struct_field(arr, [i]), f.data_type, g.data_type, ansi, time_zone,
                             legacy=legacy)
                  for i, (f, g) in enumerate(zip(from_t.fields, to_t.fields))]
        return pa.StructArray.from_arrays(fields, fields=list(at), mask=pc.is_null(arr))
    if isinstance(to_t, T.ArrayType) and isinstance(from_t, T.ArrayType):
        # the element cast runs once over all the lists' values (the offsets keep their rows)
        values = cast_array(arr.values, from_t.element_type, to_t.element_type, ansi, time_zone,
                            legacy=legacy)
        offsets = arr.offsets
        return pa.LargeListArray.from_arrays(offsets.cast(pa.int64()), values, type=at,
                                             mask=pc.is_null(arr))
    if isinstance(to_t, T.MapType) and isinstance(from_t, T.MapType):
        # keys and values cast once over all the maps' entries
        keys = cast_array(arr.keys, from_t.key_type, to_t.key_type, ansi, time_zone,
                          legacy=legacy)
        items = cast_array(arr.items, from_t.value_type, to_t.value_type, ansi, time_zone,
                           legacy=legacy)
        return pa.MapArray.from_arrays(arr.offsets, keys, items, type=at, mask=pc.is_null(arr))
    raise _unsupported(from_t, to_t)


#: microseconds in one unit of a day-time interval's end field (DAY, HOUR, MINUTE, SECOND)
_DAY_TIME_UNIT_MICROS = (86_400_000_000, 3_600_000_000, 60_000_000, 1_000_000)


def _interval_units(arr: pa.Array, from_t: T.DataType) -> tuple[pa.Array, T.DataType]:
    """An ANSI interval as a number of its end field's units, the value Spark's Cast of an
    interval to a number converts (``IntervalUtils.dayTimeIntervalToLong`` / ``...ToDecimal``,
    ``yearMonthIntervalToInt``): a BIGINT truncated toward zero, or for a day-time interval
    ending in SECOND a DECIMAL(19, 6) of seconds (its fraction kept for a decimal target)."""
    valid = _valid_np(arr)
    if isinstance(from_t, T.YearMonthIntervalType):
        months = _np_int(arr.cast(pa.int32()))
        units = months if from_t.end_field == 1 else np.fix(months / 12).astype(np.int64)
        return pa.array(units, pa.int64(), mask=~valid), T.LONG
    micros = _np_int(arr.cast(pa.int64()))
    if from_t.end_field == 3:
        dec = T.DecimalType(19, 6)
        return D.from_unscaled(micros.astype(object), valid, dec, check=False), dec
    unit = _DAY_TIME_UNIT_MICROS[from_t.end_field]
    units = np.sign(micros) * (np.abs(micros) // unit)  # Java's long division
    return pa.array(units, pa.int64(), mask=~valid), T.LONG


_MAX_TIMESTAMP_DAYS = (2 ** 63 - 1) // 86_400_000_000  # days * micros/day fits a long


def _ntz_cast(arr: pa.Array, from_t: T.DataType, to_t: T.DataType, time_zone: str) -> pa.Array:
    """Casts between TIMESTAMP_NTZ and DATE / TIMESTAMP (Spark's ``Cast`` with
    ``DateTimeUtils.convertTz``): a TIMESTAMP becomes its wall-clock time in the session time
    zone and back; a DATE is its midnight; an NTZ's date is the date of its wall-clock time."""
    if isinstance(from_t, T.DateType):
        return arr.cast(pa.date32()).cast(pa.timestamp("us"))
    if isinstance(from_t, T.TimestampType):
        return _local_naive(arr, time_zone)
    if isinstance(to_t, T.DateType):
        return arr.cast(pa.timestamp("us")).cast(pa.date32())
    if isinstance(to_t, T.TimestampType):
        return local_to_utc(arr.cast(pa.timestamp("us")), time_zone)
    raise _unsupported(from_t, to_t)


def _unsupported(from_t: T.DataType, to_t: T.DataType) -> CastError:
    return CastError(f"cannot cast {sql_type(from_t)} to {sql_type(to_t)}",
                     error_class="DATATYPE_MISMATCH.CAST_WITHOUT_SUGGESTION")


def _local_naive(arr: pa.Array, time_zone: str) -> pa.Array:
    """Timestamps (UTC instants) as naive wall-clock timestamps in ``time_zone``; TIMESTAMP_NTZ
    values (Arrow timestamps without a zone) are wall-clock times already."""
    if arr.type.tz is None or time_zone.upper() in ("UTC", "Z", "+00:00", "GMT"):
        return arr.cast(pa.timestamp("us"))
    return pc.local_timestamp(arr.cast(pa.timestamp("us", tz=time_zone)))


# ---------------------------------------------------------------------------------------------
# To string


def format_double(arr: pa.Array, is_float: bool = False) -> pa.Array:
    """Doubles (or floats) formatted like Java's ``Double.toString``/``Float.toString``
    (``1.0``, ``1234567.0``, ``1.0E7``, ``1.5E-4``, ``-0.0``, ``NaN``, ``-Infinity``).

    Vectorized: Arrow's cast to string gives the shortest round-trip digits (float32 digits for
    floats, as Java's ``Float.toString``); string kernels rewrite them into Java's layout."""
    if isinstance(arr, pa.ChunkedArray):
        arr = arr.combine_chunks()
    ft = pa.float32() if is_float else pa.float64()
    arr = arr.cast(ft)
    ls = pa.large_string()
    vals = arr.to_numpy(zero_copy_only=False)
    valid = _valid_np(arr)
    nan = np.isnan(vals) & valid
    inf = np.isinf(vals)
    zero = vals == 0
    neg = np.signbit(vals) & ~nan
    special = ~valid | nan | inf | zero
    absval = np.where(special, 1, np.abs(vals)).astype(vals.dtype, copy=False)
    # Java prints 1e-3 <= |v| < 1e7 plainly (so does Arrow: shortest digits, no exponent), with
    # ".0" added to integral values; otherwise as d.ddd"E"exp.  (Neither bound is crossed by
    # rounding to the shortest digits: 1e7 is a double, and 1e-3 is the shortest form of the
    # nearest double.)
    sci = (absval < 1e-3) | (absval >= 1e7)
    t = pa.array(absval, type=ft).cast(ls)  # "123.5", "10000000", "1e+21", "1.5e-7"
    out = pc.if_else(pc.match_substring(t, "."), t,
                     pc.binary_join_element_wise(t, pa.scalar(".0", ls), pa.scalar("", ls)))
    if sci.any():
        out = pc.replace_with_mask(out, pa.array(sci), _java_scientific(t.filter(pa.array(sci))))
    smallest_normal = np.finfo(np.float32 if is_float else np.float64).tiny
    tiny = ~special & (absval < smallest_normal)
    if tiny.any():
        # Subnormals: JDK 17's FloatingDecimal is not shortest there (4.9E-324, not 5.0E-324).
        uniq, inverse = np.unique(absval[tiny], return_inverse=True)
        texts = np.array([java_subnormal_str(float(v), is_float) for v in uniq], dtype=object)
        out = pc.replace_with_mask(out, pa.array(tiny), pa.array(texts[inverse], type=ls))
    out = pc.if_else(pa.array(zero), pa.scalar("0.0", ls), out)
    out = pc.if_else(pa.array(inf), pa.scalar("Infinity", ls), out)
    if neg.any():
        out = pc.if_else(pa.array(neg), pc.binary_join_element_wise(
            pa.scalar("-", ls), out, pa.scalar("", ls)), out)
    out = pc.if_else(pa.array(nan), pa.scalar("NaN", ls), out)
    return out if valid.all() else pc.if_else(pa.array(valid), out, pa.scalar(None, ls))


def _java_scientific(t: pa.Array) -> pa.Array:
    """Shortest-digit strings of positive numbers (``"12345678.5"``, ``"0.000123"``,
    ``"1.5e+21"``) in Java's scientific layout (``1.23456785E7``, ``1.23E-4``, ``1.5E21``)."""
    ls = pa.large_string()
    has_e = pc.match_substring(t, "e")
    mant = pc.replace_substring_regex(t, r"e.*$", "")
    digits = pc.utf8_trim(pc.replace_substring(mant, ".", ""), characters="0")
    exp_e = pc.if_else(has_e, pc.replace_substring_regex(t, r"^.*e\+?", ""),
                       pa.scalar("0", ls)).cast(pa.int64())
    dot = pc.find_substring(t, ".")
    int_len = pc.if_else(pc.less(dot, 0), pc.utf8_length(t), dot)
    lead = pc.subtract(pc.utf8_length(t), pc.utf8_length(pc.utf8_ltrim(t, characters="0.")))
    exp_plain = pc.if_else(pc.starts_with(t, "0."), pc.subtract(1, lead),
                           pc.subtract(int_len, 1))
    exp = pc.if_else(has_e, exp_e, exp_plain.cast(pa.int64()))
    frac = pc.utf8_slice_codeunits(digits, 1)
    frac = pc.if_else(pc.equal(pc.utf8_length(frac), 0), pa.scalar("0", ls), frac)
    return pc.binary_join_element_wise(
        pc.utf8_slice_codeunits(digits, 0, 1), pa.scalar(".", ls), frac, pa.scalar("E", ls),
        exp.cast(ls), pa.scalar("", ls))


def _to_string(arr: pa.Array, from_t: T.DataType, time_zone: str) -> pa.Array:
    if isinstance(from_t, T.DoubleType):
        return format_double(arr)
    if isinstance(from_t, T.FloatType):
        return format_double(arr, is_float=True)
    if isinstance(from_t, (T.TimestampType, T.TimestampNTZType)):
        local = _local_naive(arr, time_zone)
        s = pc.strftime(local, format="%Y-%m-%d %H:%M:%S")
        s = pc.replace_substring_regex(s, r"(\.\d*?)0+$", r"\1")
        s = pc.replace_substring_regex(s, r"\.$", "")
        return s.cast(pa.large_string())
    if isinstance(from_t, T.BinaryType):
        return arr.cast(pa.large_string())
    if isinstance(from_t, (T.StructType, T.ArrayType, T.MapType)):
        return nested_to_string(arr, from_t, time_zone)
    if isinstance(from_t, (T.DayTimeIntervalType, T.YearMonthIntervalType)):
        return format_intervals(arr, from_t)
    if isinstance(from_t, T.CalendarIntervalType):
        return calendar_to_strings(arr)
    return arr.cast(pa.large_string())


def nested_to_string(arr: pa.Array, from_t: T.DataType, time_zone: str = "UTC",
                     null: str = "null") -> pa.Array:
    """``CAST(x AS STRING)`` of an ARRAY, MAP or STRUCT as Spark's Cast writes it: ``[1, 2]``,
    ``{a -> 1, b -> null}``, ``{1, x}`` (nested NULLs as ``null``).  Vectorized: the elements
    (keys, values, fields) are cast once over the flattened values, then joined per row through
    the offsets."""
    def inner(values: pa.Array, t: T.DataType) -> pa.Array:
        s = cast_array(values, t, T.STRING, True, time_zone)
        return pc.fill_null(s, null) if s.null_count else s

    def text(s: str) -> pa.Scalar:
        return pa.scalar(s, pa.large_string())

    def wrap(joined: pa.Array, open_: str, close: str) -> pa.Array:
        return pc.binary_join_element_wise(text(open_), joined.cast(pa.large_string()),
                                           text(close), text(""))

    if isinstance(arr, pa.ChunkedArray):
        arr = arr.combine_chunks()
    mask = pc.is_null(arr)
    if isinstance(from_t, T.StructType):
        if not from_t.fields:
            return pc.if_else(mask, pa.scalar(None, pa.large_string()),
                              pa.repeat(pa.scalar("{}", pa.large_string()), len(arr)))
        parts = [inner(arr.field(i), f.data_type) for i, f in enumerate(from_t.fields)]
        joined = pc.binary_join_element_wise(*parts, text(", "))
        return pc.if_else(mask, pa.scalar(None, pa.large_string()), wrap(joined, "{", "}"))
    offsets = arr.offsets
    if isinstance(from_t, T.MapType):
        keys, items = arr.keys, arr.items
        entries = pc.binary_join_element_wise(inner(keys, from_t.key_type),
                                              inner(items, from_t.value_type), text(" -> "))
        open_, close = "{", "}"
    else:
        entries = inner(arr.values, from_t.element_type)  # type: ignore[attr-defined]
        open_, close = "[", "]"
    # ``values``/``keys``/``items`` ignore a slice; the offsets index into them as they are
    lists = pa.LargeListArray.from_arrays(offsets.cast(pa.int64()),
                                          entries.cast(pa.large_string()), mask=mask)
    return wrap(pc.binary_join(lists, text(", ")), open_, close)


# ---------------------------------------------------------------------------------------------
# From string

_INT_RE = r"^[+-]?\d+$"
_FLOAT_RE = r"^[+-]?((\d+\.?\d*|\.\d+)([eE][+-]?\d+)?[dDfF]?|(?i:nan|inf|infinity))$"
_DEC_RE = r"^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$"


def _bad_format(arr: pa.Array, trimmed: pa.Array, regex: str) -> np.ndarray:
    ok = pc.match_substring_regex(trimmed, regex)
    return _mask(pc.and_(pc.is_valid(arr), pc.invert(pc.fill_null(ok, True))))


#: Spark's legacy ``UTF8String.toLong``/``toInt``: a fraction after the digits is dropped
#: (``'1.9'``, ``'.5'``, ``'1.'`` and even ``'.'``); an exponent is not allowed
_LEGACY_INT_RE = r"^[+-]?(\d+|\d*\.\d*)$"


def _string_to_integral(arr, trimmed, to_t, fail: _Fail) -> pa.Array:
    if fail.legacy:
        bad = _bad_format(arr, trimmed, _LEGACY_INT_RE)
        trimmed = pc.replace_substring_regex(trimmed, r"\.\d*$", "")
        trimmed = pc.replace_substring_regex(trimmed, r"^[+-]?$", "0")
    else:
        bad = _bad_format(arr, trimmed, _INT_RE)
    fail.check(bad, arr, lambda v: _invalid_input(v, T.STRING, to_t))
    clean = pc.if_else(pa.array(bad), pa.scalar(None, trimmed.type), trimmed) if bad.any() \
        else trimmed
    # Digit strings too long for int64 are out of range for every integral type.
    too_long = _mask(pc.greater(pc.utf8_length(pc.utf8_ltrim(clean, characters="+-0")), 18))
    if too_long.any():
        fail.check(too_long, arr, lambda v: _invalid_input(v, T.STRING, to_t))
        clean = pc.if_else(pa.array(too_long), pa.scalar(None, clean.type), clean)
    as64 = pc.replace_substring_regex(clean, r"^\+", "").cast(pa.int64())  # Arrow rejects '+8'
    return _range_checked_int(as64, arr, T.STRING, to_t, fail, invalid=True)


def _range_checked_int(as64: pa.Array, orig: pa.Array, from_t, to_t, fail: _Fail,
                       invalid: bool = False, wrap: bool = False) -> pa.Array:
    """int64 values as ``to_t``: out of range raises / is NULL, or with ``wrap`` keeps the low
    bits (Java's narrowing ``(int)``/``(short)``/``(byte)``)."""
    if isinstance(to_t, T.LongType):
        return as64
    if wrap:
        return as64.cast(to_t.to_arrow(), safe=False)
    lo, hi = to_t.min_value, to_t.max_value
    bad = _mask(pc.or_(pc.less(as64, lo), pc.greater(as64, hi)))
    err = (lambda v: _invalid_input(v, from_t, to_t)) if invalid else \
        (lambda v: _overflow(v, from_t, to_t))
    fail.check(bad, orig, err)
    if bad.any():
        as64 = pc.if_else(pa.array(bad), pa.scalar(None, pa.int64()), as64)
    return as64.cast(to_t.to_arrow())


def _string_to_float(arr, trimmed, to_t, fail: _Fail) -> pa.Array:
    bad = _bad_format(arr, trimmed, _FLOAT_RE)
    fail.check(bad, arr, lambda v: _invalid_input(v, T.STRING, to_t))
    clean = pc.replace_substring_regex(trimmed, r"^(.*[0-9.])[dDfF]$", r"\1")
    if bad.any():
        clean = pc.if_else(pa.array(bad), pa.scalar(None, clean.type), clean)
    return clean.cast(pa.float64()).cast(to_t.to_arrow())


def _string_to_decimal(arr, trimmed, to_t: T.DecimalType, fail: _Fail) -> pa.Array:
    bad = _bad_format(arr, trimmed, _DEC_RE)
    fail.check(bad, arr, lambda v: _invalid_input(v, T.STRING, to_t))
    if bad.any():
        trimmed = pc.if_else(pa.array(bad), pa.scalar(None, trimmed.type), trimmed)
    return _decimal_strings_to_decimal(trimmed, arr, T.STRING, to_t, fail)


def _decimal_strings_to_decimal(strings: pa.Array, orig: pa.Array, from_t, to_t: T.DecimalType,
                                fail: _Fail) -> pa.Array:
    """Parse well-formed decimal strings (per distinct value) and round HALF_UP to ``to_t``."""
    uniq = pc.unique(strings.drop_null())
    unscaled_vals = []
    q = Decimal(1).scaleb(-to_t.scale)
    from decimal import localcontext

    with localcontext() as ctx:
        ctx.prec = 100  # the default 28 digits cannot hold decimal(38, s) values
        for s in uniq.to_pylist():
            try:
                d = Decimal(s)
                if from_t == T.STRING and d and d.adjusted() + 1 > 38:
                    # Spark's Decimal.fromStringANSI fails fast on > 38 integral digits
                    unscaled_vals.append(_UNSUPPORTED)
                    continue
                d = d.quantize(q, rounding="ROUND_HALF_UP")
                unscaled_vals.append(int(d.scaleb(to_t.scale)))
            except InvalidOperation:
                unscaled_vals.append(10 ** 40)  # marks overflow
    idx = pc.index_in(strings, value_set=uniq)
    valid = _valid_np(idx)
    pos = pc.fill_null(idx, 0).to_numpy(zero_copy_only=False)
    table = np.array(unscaled_vals + [0], dtype=object)
    vals = table[pos] if len(unscaled_vals) else np.zeros(len(strings), dtype=object)
    sentinel = (np.array([v is _UNSUPPORTED for v in table], dtype=bool)[pos] if len(
        unscaled_vals) else np.zeros(len(strings), dtype=bool))
    huge = valid & sentinel
    if sentinel.any():
        vals = np.where(sentinel, 0, vals)
    if huge.any():
        if fail.ansi:
            value = str(orig[int(np.flatnonzero(huge)[0])].as_py())
            raise ArithmeticError_(
                f"The value {value} cannot be interpreted as a numeric since it has more than 38 "
                "digits.", error_class="NUMERIC_OUT_OF_SUPPORTED_RANGE",
                parameters={"value": value})
        fail.bad |= huge
        valid = valid & ~huge
    over = valid & (np.abs(vals) >= 10 ** to_t.precision)
    if over.any():
        i = int(np.flatnonzero(over)[0])
        if fail.ansi:
            D.raise_out_of_range(0, to_t, what=str(orig[i].as_py()) if from_t != T.DOUBLE
                                 else strings[i].as_py())
        fail.bad |= over
        valid = valid & ~over
    return D.from_unscaled(vals, valid, to_t, check=False)


#: marks a string with more than 38 integral digits (NUMERIC_OUT_OF_SUPPORTED_RANGE)
_UNSUPPORTED = object()

_TRUE = ("t", "true", "y", "yes", "1")
_FALSE = ("f", "false", "n", "no", "0")


def _string_to_bool(arr, trimmed, fail: _Fail) -> pa.Array:
    lower = pc.utf8_lower(trimmed)
    is_true = pc.is_in(lower, value_set=pa.array(_TRUE, type=lower.type))
    is_false = pc.is_in(lower, value_set=pa.array(_FALSE, type=lower.type))
    bad = _mask(pc.and_(pc.is_valid(arr), pc.invert(pc.or_(is_true, is_false))))
    fail.check(bad, arr, lambda v: _invalid_input(v, T.STRING, T.BOOLEAN))
    return pc.if_else(pc.is_valid(arr), is_true, pa.scalar(None, pa.bool_()))


_DATE_RE = r"^(?P<y>[+-]?\d{4,7})(?:-(?P<m>\d{1,2})(?:-(?P<d>\d{1,2})(?:[T ].*)?)?)?$"
# Spark's ``stringToTimestamp``: ``[+-]yyyy[-[m]m[-[d]d[(T| )[h]h[:[m]m[:[s]s[.fraction]]]][zone]]]``
# or a time alone (``[T][h]h:[m]m[:[s]s[.fraction][zone]]``, ``T[h]h``) on the current date.
# A zone is ``Z``, an offset (``+1``, ``-08``, ``+0130``, ``+01:00[:30]``, optionally after
# ``UTC``/``GMT``/``UT``), or a region id (``UTC``, ``CET``, ``Europe/Paris``), optionally after
# one space.
_ZONE = (r"(?:\s?(?P<Z>Z|(?:UTC|GMT|UT)?[+-]\d{1,2}(?::?\d{2}){0,2}|"
         r"[A-Z]{2,5}|[A-Za-z]+(?:/[A-Za-z_+-]+)+))?")
_TS_RE = (r"^(?P<y>[+-]?\d{4,7})(?:-(?P<m>\d{1,2})(?:-(?P<d>\d{1,2})"
          r"(?:[T ](?P<H>\d{1,2})(?::(?P<M>\d{1,2})(?::(?P<S>\d{1,2})(?:\.(?P<F>\d*))?)?)?)?"
          + _ZONE + r")?)?$")
_TIME_RE = (r"^(?P<T>T)?(?P<H>\d{1,2})(?::(?P<M>\d{1,2})(?::(?P<S>\d{1,2})(?:\.(?P<F>\d*))?"
            + _ZONE + r")?)?$")


def _zone_offset_micros(zone: str) -> int | None:
    """The fixed offset of a zone written as an offset, in microseconds (None: not an offset,
    or out of Java's +-18:00 range -> -1 marks invalid)."""
    import re

    m = re.fullmatch(r"(?:UTC|GMT|UT)?([+-])(\d{1,2})(?::?(\d{2}))?(?::?(\d{2}))?", zone)
    if m is None:
        return None
    h, mi, se = int(m.group(2)), int(m.group(3) or 0), int(m.group(4) or 0)
    total = (h * 3600 + mi * 60 + se)
    if h > 18 or mi > 59 or se > 59 or total > 18 * 3600:
        return -1
    return (1 if m.group(1) == "+" else -1) * total * 1_000_000


def _int_field(struct: pa.Array, name: str, default: int) -> np.ndarray:
    f = pc.replace_substring_regex(pc.struct_field(struct, name), r"^\+", "")
    f = pc.if_else(pc.equal(f, ""), pa.scalar(str(default), f.type), f)
    return pc.fill_null(f, str(default)).cast(pa.int64()).to_numpy(zero_copy_only=False)


def _ymd_to_days(y: np.ndarray, m: np.ndarray, d: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Days since epoch and a validity mask (month 1-12, day within the month)."""
    ok = (m >= 1) & (m <= 12) & (d >= 1) & (d <= 31)
    mm = np.where(ok, m, 1)
    dd = np.where(ok, d, 1)
    months = (y - 1970) * 12 + (mm - 1)
    first = months.astype("datetime64[M]").astype("datetime64[D]")
    days = first + (dd - 1).astype("timedelta64[D]")
    ok &= days.astype("datetime64[M]") == first.astype("datetime64[M]")
    return days.astype(np.int64), ok


def _string_to_date(arr, trimmed, fail: _Fail) -> pa.Array:
    parts = pc.extract_regex(pc.fill_null(trimmed, "").cast(pa.string()), _DATE_RE)
    matched = _mask(parts.is_valid())
    y = _int_field(parts, "y", 1970)
    days, ok = _ymd_to_days(y, _int_field(parts, "m", 1), _int_field(parts, "d", 1))
    valid = _valid_np(arr)
    bad = valid & ~(matched & ok)
    fail.check(bad, arr, lambda v: _invalid_input(v, T.STRING, T.DATE))
    good = valid & ~bad
    return pa.array(days.astype(np.int32), type=pa.int32(), mask=~good).cast(pa.date32())


def local_to_utc(naive: pa.Array, tz: str) -> pa.Array:
    """Wall-clock times (``timestamp[us]``) in ``tz`` as instants (``timestamp[us, UTC]``), as
    Java's ``ZonedDateTime.of``: an ambiguous wall time takes the earlier offset, one in a DST
    gap the offset before the gap (so it moves forward by the gap: 02:30 -> 03:30)."""
    if tz.upper() in ("UTC", "Z", "+00:00", "GMT"):
        return naive.cast(pa.timestamp("us", tz="UTC"))
    early = pc.assume_timezone(naive, timezone=tz, ambiguous="earliest",
                               nonexistent="earliest")
    offset = pc.subtract(pc.local_timestamp(early).cast(pa.int64()), early.cast(pa.int64()))
    return pc.subtract(naive.cast(pa.int64()), offset).cast(pa.timestamp("us", tz="UTC"))


def _string_to_timestamp(arr, trimmed, fail: _Fail, time_zone: str,
                         ntz: bool = False) -> pa.Array:
    import datetime as _dt
    import zoneinfo

    text = pc.fill_null(trimmed, "").cast(pa.string())
    parts = pc.extract_regex(text, _TS_RE)
    matched = _mask(parts.is_valid())
    tparts = pc.extract_regex(text, _TIME_RE)
    tmatched = _mask(tparts.is_valid()) & ~matched
    if tmatched.any():
        # a time alone needs a 'T' or the minutes ('12' is not a timestamp)
        has_t = _mask(pc.not_equal(pc.struct_field(tparts, "T"), ""))
        has_m = _mask(pc.not_equal(pc.struct_field(tparts, "M"), ""))
        tmatched &= has_t | has_m

    def field(name: str, default: int) -> np.ndarray:
        a = _int_field(parts, name, default)
        if tmatched.any() and name in ("H", "M", "S"):
            a = np.where(tmatched, _int_field(tparts, name, default), a)
        return a

    def text_field(name: str) -> pa.Array:
        f = pc.fill_null(pc.struct_field(parts, name).cast(pa.string()), "")
        if tmatched.any():
            g = pc.fill_null(pc.struct_field(tparts, name).cast(pa.string()), "")
            f = pc.if_else(pa.array(tmatched), g, f)
        return f

    y, mo, d = field("y", 1970), field("m", 1), field("d", 1)
    if tmatched.any():  # the current date in the session time zone
        today = _dt.datetime.now(zoneinfo.ZoneInfo(time_zone) if time_zone.upper() not in (
            "UTC", "Z", "GMT", "+00:00") else _dt.timezone.utc).date()
        y = np.where(tmatched, today.year, y)
        mo = np.where(tmatched, today.month, mo)
        d = np.where(tmatched, today.day, d)
    days, ok = _ymd_to_days(y, mo, d)
    hh, mi, ss = field("H", 0), field("M", 0), field("S", 0)
    ok &= (hh < 24) & (mi < 60) & (ss < 60)
    frac6 = pc.utf8_slice_codeunits(pc.binary_join_element_wise(text_field("F"), "000000", ""),
                                    0, 6)
    micros_frac = frac6.cast(pa.int64()).to_numpy(zero_copy_only=False)
    micros = days * 86_400_000_000 + ((hh * 60 + mi) * 60 + ss) * 1_000_000 + micros_frac
    zone = text_field("Z")
    matched = matched | tmatched
    # explicit zones, once per distinct zone: a fixed offset, or a region (wall time there)
    offs = np.zeros(len(arr), dtype=np.int64)
    region = np.zeros(len(arr), dtype=bool)
    zone_of: dict[str, np.ndarray] = {}
    has_zone = matched & _mask(pc.not_equal(zone, ""))
    if has_zone.any():
        for z in pc.unique(pc.filter(zone, pa.array(has_zone))).to_pylist():
            rows = has_zone & _mask(pc.equal(zone, z))
            off = 0 if z == "Z" else _zone_offset_micros(z)
            if off is None:
                try:
                    zoneinfo.ZoneInfo(z)
                    zone_of[z] = rows
                    region |= rows
                except (zoneinfo.ZoneInfoNotFoundError, ValueError):
                    ok &= ~rows
            elif off == -1:
                ok &= ~rows
            else:
                offs[rows] = off
    valid = _valid_np(arr)
    bad = valid & ~(matched & ok)
    fail.check(bad, arr, lambda v: _invalid_input(v, T.STRING,
                                                  T.TIMESTAMP_NTZ if ntz else T.TIMESTAMP))
    good = valid & ~bad

    def wall_to_utc(mask_rows: np.ndarray, tz: str) -> pa.Array:
        return local_to_utc(pa.array(micros, type=pa.int64(), mask=~(good & mask_rows)).cast(
            pa.timestamp("us")), tz)

    if ntz:  # TIMESTAMP_NTZ: the wall-clock time, any zone in the text ignored
        return pa.array(micros, type=pa.int64(), mask=~good).cast(pa.timestamp("us"))

    session_rows = ~(has_zone & good)
    out = wall_to_utc(session_rows, time_zone)
    fixed = has_zone & good & ~region
    if fixed.any():
        utc = pa.array(micros - offs, type=pa.int64(), mask=~fixed).cast(
            pa.timestamp("us", tz="UTC"))
        out = pc.if_else(pa.array(fixed), utc, out)
    for z, rows in zone_of.items():
        rows = rows & good
        if rows.any():
            out = pc.if_else(pa.array(rows), wall_to_utc(rows, z), out)
    return out


# ---------------------------------------------------------------------------------------------
# Numeric targets


def _to_integral(arr, from_t, to_t: T.IntegralType, fail: _Fail) -> pa.Array:
    if from_t.is_integral:
        return _range_checked_int(arr.cast(pa.int64()), arr, from_t, to_t, fail,
                                  wrap=fail.legacy)
    if isinstance(from_t, (T.FloatType, T.DoubleType)) and fail.legacy:
        return _java_float_to_integral(arr, to_t)
    if isinstance(from_t, T.DecimalType) and fail.legacy:
        # Spark's legacy Decimal.toLong (truncated, low 64 bits), then Java narrowing
        v, valid = D.unscaled(arr)
        q = np.abs(v) // (10 ** from_t.scale)
        q = np.where(v < 0, -q, q)
        q = ((q + (1 << 63)) % (1 << 64)) - (1 << 63)
        longs = pa.array(np.where(valid, q, 0).astype(np.int64), mask=~valid)
        return _range_checked_int(longs, arr, from_t, to_t, fail, wrap=True)
    if isinstance(from_t, (T.FloatType, T.DoubleType)):
        vals = _np_float(arr)
        valid = _valid_np(arr)
        with np.errstate(invalid="ignore"):
            t = np.trunc(vals)
            bad = valid & (np.isnan(t) | (t < to_t.min_value) | (t > to_t.max_value))
        fail.check(bad, arr, lambda v: _overflow(v, from_t, to_t))
        good = valid & ~bad
        ints = np.where(good, t, 0).astype(np.int64)
        return pa.array(ints, mask=~good).cast(to_t.to_arrow())
    if isinstance(from_t, T.DecimalType):
        v, valid = D.unscaled(arr)
        q = np.abs(v) // (10 ** from_t.scale)
        q = np.where(v < 0, -q, q)
        bad = valid & ((q < to_t.min_value) | (q > to_t.max_value))
        fail.check(bad, arr, lambda x: _overflow(x, from_t, to_t))
        good = valid & ~bad
        return pa.array(np.where(good, q, 0).astype(np.int64), mask=~good).cast(to_t.to_arrow())
    if isinstance(from_t, T.TimestampType):
        micros = _np_int(arr)
        secs = np.floor_divide(micros, 1_000_000)
        return _range_checked_int(pa.array(secs, mask=~_valid_np(arr)), arr, from_t, to_t, fail)
    raise _unsupported(from_t, to_t)


def _integral_to_binary(arr: pa.Array, from_t: T.DataType) -> pa.Array:
    """Spark's legacy integral -> binary: the value's big-endian two's complement bytes, as
    wide as its type (``CAST(1 AS BINARY)`` is ``X'00000001'``)."""
    width = from_t.to_arrow().bit_width // 8
    vals = pc.fill_null(arr, 0).to_numpy(zero_copy_only=False).astype(f">i{width}")
    n = len(vals)
    offsets = np.arange(n + 1, dtype=np.int64) * width
    validity = None if arr.null_count == 0 else arr.is_valid().buffers()[1]
    return pa.Array.from_buffers(pa.large_binary(), n, [
        validity, pa.py_buffer(offsets.tobytes()), pa.py_buffer(vals.tobytes())])


def _java_float_to_integral(arr: pa.Array, to_t: T.IntegralType) -> pa.Array:
    """Java's ``(long) d`` / ``(int) d`` (truncate, saturate, NaN -> 0); tinyint and smallint as
    Scala's ``d.toByte`` = ``(byte) (int) d`` (saturate to int, then wrap)."""
    vals = _np_float(arr)
    valid = _valid_np(arr)
    wide = T.LONG if isinstance(to_t, T.LongType) else T.INT
    with np.errstate(invalid="ignore"):
        t = np.nan_to_num(np.trunc(vals), nan=0.0, posinf=0.0, neginf=0.0)
        hi = np.isposinf(vals) | (t >= 2.0 ** (63 if wide is T.LONG else 31))
        lo = np.isneginf(vals) | (t < -(2.0 ** (63 if wide is T.LONG else 31)))
    ints = np.where(hi | lo, 0, t).astype(np.int64)
    ints = np.where(hi, wide.max_value, np.where(lo, wide.min_value, ints))
    out = pa.array(ints, type=pa.int64(), mask=~valid)
    return out.cast(to_t.to_arrow(), safe=False)


def _to_decimal(arr, from_t, to_t: T.DecimalType, fail: _Fail) -> pa.Array:
    if isinstance(from_t, T.DecimalType):
        v, valid = D.unscaled(arr)
        r = D.rescale(v, from_t.scale, to_t.scale)
        over = valid & (np.abs(r) >= 10 ** to_t.precision)
        if over.any():
            i = int(np.flatnonzero(over)[0])
            if fail.ansi:
                D.raise_out_of_range(0, to_t, what=str(arr[i].as_py()))
            fail.bad |= over
            valid = valid & ~over
        return D.from_unscaled(r, valid, to_t, check=False)
    if from_t.is_integral:
        v = _np_int(arr).astype(object)
        valid = _valid_np(arr)
        v = np.where(valid, v, 0) * (10 ** to_t.scale)
        over = valid & (np.abs(v) >= 10 ** to_t.precision)
        if over.any():
            i = int(np.flatnonzero(over)[0])
            if fail.ansi:
                D.raise_out_of_range(0, to_t, what=str(arr[i].as_py()))
            fail.bad |= over
            valid = valid & ~over
        return D.from_unscaled(v, valid, to_t, check=False)
    if isinstance(from_t, (T.FloatType, T.DoubleType)):
        vals = _np_float(arr)
        valid = _valid_np(arr)
        nonfinite = valid & ~np.isfinite(np.where(valid, vals, 0.0))
        # Spark (even ANSI) turns NaN/Infinity into NULL (its NumberFormatException is caught).
        strings = format_double(pc.if_else(pa.array(nonfinite), pa.scalar(None, pa.float64()),
                                           arr.cast(pa.float64())))
        return _decimal_strings_to_decimal(strings, arr, T.DOUBLE, to_t, fail)
    if isinstance(from_t, T.TimestampType):
        # seconds since the epoch: the microseconds are the unscaled value at scale 6
        v = _np_int(arr.cast(pa.int64())).astype(object)
        valid = _valid_np(arr)
        return _to_decimal(D.from_unscaled(v, valid, T.DecimalType(38, 6), check=False),
                           T.DecimalType(38, 6), to_t, fail)
    raise _unsupported(from_t, to_t)


def _numeric_to_timestamp(arr, from_t, fail: _Fail) -> pa.Array:
    if from_t.is_integral:
        secs = _np_int(arr).astype(object)
        valid = _valid_np(arr)
        micros = np.where(valid, secs, 0) * 1_000_000
        over = valid & ((micros > (1 << 63) - 1) | (micros < -(1 << 63)))
        fail.check(over, arr, lambda v: _overflow(v, from_t, T.TIMESTAMP))
        good = valid & ~over
        return pa.array(np.where(good, micros, 0).astype(np.int64), mask=~good).cast(
            pa.timestamp("us", tz="UTC"))
    if isinstance(from_t, T.DecimalType):
        v, valid = D.unscaled(arr)
        micros = D.rescale(v, from_t.scale, 6)
        return pa.array(np.where(valid, micros, 0).astype(np.int64), mask=~valid).cast(
            pa.timestamp("us", tz="UTC"))
    vals = _np_float(arr)
    valid = _valid_np(arr)
    with np.errstate(invalid="ignore"):
        micros = np.trunc(vals * 1e6)
        bad = valid & ~np.isfinite(micros)
    fail.check(bad, arr, lambda v: _overflow(v, from_t, T.TIMESTAMP))
    good = valid & ~bad
    return pa.array(np.where(good, micros, 0).astype(np.int64), mask=~good).cast(
        pa.timestamp("us", tz="UTC"))


_ = Literal  # re-exported for callers building casts of literals
