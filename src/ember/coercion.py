"""Type algebra of Spark 4 with ``spark.sql.ansi.enabled=true`` (AnsiTypeCoercion, DecimalPrecision).

The analyzer's TypeCoercion rule calls :func:`coerce_expression` on every expression (bottom up);
it returns the expression with the :class:`~ember.expressions.cast.Cast` s Spark would insert, or
the same object when nothing applies.  The building blocks are public as well.

Rules (verified against PySpark 4 in ANSI mode; see tests/expressions/test_coercion.py):

Tightest common type (:func:`find_tightest_common_type`)
    equal types -> that type; NULL with t -> t; integral widening ``tinyint < smallint < int <
    bigint``; ``float`` with any integral -> ``double`` (not float: avoids precision loss);
    ``float``/``double`` -> ``double``; ``date`` with ``timestamp`` -> ``timestamp``.

Wider type (:func:`find_wider_type_for_two`)
    tightest, else decimals: ``decimal(p1,s1)`` with ``decimal(p2,s2)`` ->
    ``decimal(max(p1-s1,p2-s2)+max(s1,s2), max(s1,s2))`` bounded to 38; integral with decimal ->
    the integral's decimal (``tinyint``: (3,0), ``smallint``: (5,0), ``int``: (10,0), ``bigint``:
    (20,0)) widened with the other; float/double with decimal -> ``double``.  Else strings (only
    when ``string_promotion``): string with integral -> ``bigint``, with float/double/decimal ->
    ``double``, with date/timestamp/boolean/binary -> that type.  ``greatest``/``least`` do not
    promote strings (``greatest(1, 'a')`` is ``DATA_DIFF_TYPES``); ``coalesce``, ``CASE``, ``IF``,
    ``IN``, comparisons and arithmetic do.

Binary operators (:func:`coerce_binary_operands`)
    comparison/equality and ``+ - * %``: both sides cast to the wider type.  ``/`` additionally
    casts integral/float results to ``double`` (``1 / 2`` is ``0.5``).  ``div`` casts integral
    sides to ``bigint`` (a double side is left alone and fails the type check, as in Spark).
    ``NULL + NULL`` is ``double``.  ``-'1'`` and ``abs('1')`` cast the string to ``double``.

Decimal result types (DecimalPrecision; ``spark.sql.decimalOperations.allowPrecisionLoss``)
    ``+``/``-``: ``s = max(s1,s2)``, ``p = max(p1-s1,p2-s2)+s+1``; ``*``: ``p = p1+p2+1``,
    ``s = s1+s2``; ``/``: ``s = max(6, s1+p2+1)``, ``p = p1-s1+s2+s``; all then adjusted by
    :func:`adjust_precision_scale` (above 38 digits keep the integral digits and at least
    ``min(s, 6)`` fraction digits); with allowPrecisionLoss=false they are only capped at 38
    (:func:`decimal_divide_type` has its own rule).  ``%``: ``p = min(p1-s1,p2-s2)+max(s1,s2)``,
    ``s = max(s1,s2)`` bounded.  Integer literals next to a decimal are NOT shrunk under ANSI
    (``m + 1`` widens ``1`` to decimal(10,0)).

Legacy coercion (``legacy=True``: Spark's non-ANSI ``TypeCoercion``, used when
``spark.sql.ansi.enabled=false``) differs where results change: a string meeting another atomic
type (not binary or boolean) in CASE/IF/COALESCE/IN/set operations widens to ``string``
(``coalesce(1, 'a')`` is ``'1'``); a string in ``+ - * / % pmod`` is cast to ``double``
(PromoteStrings); a comparison between a string and another atomic type casts the string to that
type (``1L = '1.5'`` is true: the legacy cast truncates).

Implicit casts (:func:`implicit_cast`, ANSI): numeric widening only (no narrowing, no double ->
decimal), any atomic type -> string, string -> any atomic type (parsed at run time, failing with
``CAST_INVALID_INPUT``), date -> timestamp, NULL -> anything.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal as _Lit

from ember import types as T
from ember.expressions.base import Expression, Literal
from ember.expressions import arithmetic as A, conditional as C, predicates as P
from ember.expressions import bitwise as B

__all__ = [
    "find_tightest_common_type", "find_wider_type_for_two", "find_wider_type", "decimal_for_integral",
    "decimal_for_type", "coerce_all", "widen_decimals", "adjust_precision_scale", "decimal_add_type",
    "decimal_multiply_type", "decimal_divide_type", "decimal_remainder_type", "can_cast",
    "can_implicit_cast", "implicit_cast", "coerce_binary_operands", "coerce_expression",
    "string_promotion_type",
]

_INTEGRAL_ORDER = (T.ByteType, T.ShortType, T.IntegerType, T.LongType)
_DECIMAL_FOR_INTEGRAL = {T.ByteType: (3, 0), T.ShortType: (5, 0), T.IntegerType: (10, 0),
                         T.LongType: (20, 0)}


def decimal_for_integral(t: T.DataType) -> T.DecimalType:
    """The decimal that holds every value of integral type ``t`` (int -> decimal(10,0))."""
    if isinstance(t, T.DecimalType):
        return t
    p, s = _DECIMAL_FOR_INTEGRAL[type(t)]
    return T.DecimalType(p, s)


def decimal_for_type(t: T.DataType) -> T.DecimalType | None:
    """Spark's ``DecimalType.forType``: integrals as above, float -> (14,7), double -> (30,15)."""
    if isinstance(t, T.DecimalType):
        return t
    if type(t) in _DECIMAL_FOR_INTEGRAL:
        return decimal_for_integral(t)
    if isinstance(t, T.FloatType):
        return T.DecimalType(14, 7)
    if isinstance(t, T.DoubleType):
        return T.DecimalType(30, 15)
    return None


def _bounded(p: int, s: int) -> T.DecimalType:
    return T.DecimalType(min(p, 38), min(s, 38))


def widen_decimals(d1: T.DecimalType, d2: T.DecimalType) -> T.DecimalType:
    """Spark's ``widerDecimalType``: enough integral and fraction digits for both."""
    scale = max(d1.scale, d2.scale)
    rng = max(d1.precision - d1.scale, d2.precision - d2.scale)
    if rng + scale > 38:
        # Spark 4's boundedPreferIntegralDigits: keep the integral digits, drop fraction digits.
        return T.DecimalType(38, max(0, scale - (rng + scale - 38)))
    return T.DecimalType(rng + scale, scale)


def adjust_precision_scale(p: int, s: int) -> T.DecimalType:
    """DecimalPrecision's ``adjustPrecisionScale`` (allowPrecisionLoss = true)."""
    if p <= 38:
        return T.DecimalType(p, s)
    int_digits = p - s
    min_scale = min(s, 6)
    adjusted = max(38 - int_digits, min_scale)
    return T.DecimalType(38, adjusted)


def _result_type(p: int, s: int, allow_precision_loss: bool) -> T.DecimalType:
    """DecimalPrecision's last step: ``adjustPrecisionScale`` (trade fraction digits for integral
    ones above 38 digits) with ``spark.sql.decimalOperations.allowPrecisionLoss`` (the
    default), ``DecimalType.bounded`` (cap both at 38: results that do not fit overflow)
    without it."""
    return adjust_precision_scale(p, s) if allow_precision_loss else _bounded(p, s)


def decimal_add_type(d1: T.DecimalType, d2: T.DecimalType,
                     allow_precision_loss: bool = True) -> T.DecimalType:
    s = max(d1.scale, d2.scale)
    p = max(d1.precision - d1.scale, d2.precision - d2.scale) + s + 1
    return _result_type(p, s, allow_precision_loss)


def decimal_multiply_type(d1: T.DecimalType, d2: T.DecimalType,
                          allow_precision_loss: bool = True) -> T.DecimalType:
    return _result_type(d1.precision + d2.precision + 1, d1.scale + d2.scale,
                        allow_precision_loss)


def decimal_divide_type(d1: T.DecimalType, d2: T.DecimalType,
                        allow_precision_loss: bool = True) -> T.DecimalType:
    """Spark's ``Divide.resultDecimalType``.  Without precision loss the integral and fraction
    digits are each capped at 38 and, past 38 in all, the fraction gives up half the excess
    plus one digit."""
    if allow_precision_loss:
        s = max(6, d1.scale + d2.precision + 1)
        p = d1.precision - d1.scale + d2.scale + s
        return adjust_precision_scale(p, s)
    int_dig = min(38, d1.precision - d1.scale + d2.scale)
    dec_dig = min(38, max(6, d1.scale + d2.precision + 1))
    diff = int_dig + dec_dig - 38
    if diff > 0:
        dec_dig -= diff // 2 + 1
        int_dig = 38 - dec_dig
    return _bounded(int_dig + dec_dig, dec_dig)


def decimal_remainder_type(d1: T.DecimalType, d2: T.DecimalType,
                           allow_precision_loss: bool = True) -> T.DecimalType:
    # Never above 38 digits, so adjustPrecisionScale and bounded agree.
    s = max(d1.scale, d2.scale)
    p = min(d1.precision - d1.scale, d2.precision - d2.scale) + s
    return _result_type(p, s, allow_precision_loss)


# ---------------------------------------------------------------------------------------------
# Common types


def find_tightest_common_type(t1: T.DataType, t2: T.DataType,
                              legacy: bool = False) -> T.DataType | None:
    """AnsiTypeCoercion.findTightestCommonType (no decimals, no strings); ``legacy``:
    TypeCoercion's, where an integral with a float is a float (``numericPrecedence``)."""
    if t1 == t2:
        return t1
    if isinstance(t1, T.NullType):
        return t2
    if isinstance(t2, T.NullType):
        return t1
    num = (T.ByteType, T.ShortType, T.IntegerType, T.LongType, T.FloatType, T.DoubleType)
    if isinstance(t1, num) and isinstance(t2, num):
        i1, i2 = num.index(type(t1)), num.index(type(t2))
        wider = num[max(i1, i2)]
        if wider is T.FloatType:  # integral with float
            return T.FLOAT if legacy else T.DOUBLE
        return wider()
    if t1.is_datetime and t2.is_datetime:
        # Spark's findWiderDateTimeType: DATE < TIMESTAMP_NTZ < TIMESTAMP
        if T.TIMESTAMP in (t1, t2) or T.DATE not in (t1, t2):
            return T.TIMESTAMP
        return T.TIMESTAMP_NTZ
    if isinstance(t1, (T.DayTimeIntervalType, T.YearMonthIntervalType)) and type(t1) is type(t2):
        # ANSI intervals of one kind: the smallest start field to the largest end field
        return type(t1)(min(t1.start_field, t2.start_field), max(t1.end_field, t2.end_field))
    return None


def string_promotion_type(other: T.DataType) -> T.DataType | None:
    """The type a string is implicitly cast to when it meets ``other`` (ANSI)."""
    if other.is_integral:
        return T.LONG
    if other.is_fractional:
        return T.DOUBLE
    if isinstance(other, (T.DateType, T.TimestampType, T.BooleanType, T.BinaryType,
                          T.StringType, T.TimestampNTZType)):
        return other
    if isinstance(other, T.NullType):
        return T.STRING
    return None


def find_wider_type_for_two(t1: T.DataType, t2: T.DataType, *,
                            string_promotion: bool = True,
                            legacy: bool = False) -> T.DataType | None:
    """AnsiTypeCoercion.findWiderTypeForTwo: tightest, then decimals, then strings, then
    structs/arrays field by field.  None when the types have no common type.  ``legacy``:
    TypeCoercion's (non-ANSI) ``stringPromotion``, where a string wins over atomic types."""
    t = find_tightest_common_type(t1, t2, legacy)
    if t is not None:
        return t
    if isinstance(t1, T.DecimalType) or isinstance(t2, T.DecimalType):
        other = t2 if isinstance(t1, T.DecimalType) else t1
        dec = t1 if isinstance(t1, T.DecimalType) else t2
        if isinstance(other, T.DecimalType):
            return widen_decimals(dec, other)  # type: ignore[arg-type]
        if other.is_integral:
            return widen_decimals(decimal_for_integral(other), dec)  # type: ignore[arg-type]
        if isinstance(other, (T.FloatType, T.DoubleType)):
            return T.DOUBLE
    if string_promotion and legacy and (isinstance(t1, T.StringType)
                                        or isinstance(t2, T.StringType)):
        other = t2 if isinstance(t1, T.StringType) else t1
        if other.is_numeric or isinstance(other, (T.DateType, T.TimestampType, T.StringType)):
            return T.STRING
    if string_promotion and not legacy:
        if isinstance(t1, T.StringType) or isinstance(t2, T.StringType):
            other = t2 if isinstance(t1, T.StringType) else t1
            promoted = string_promotion_type(other)
            if promoted is not None:
                return find_wider_type_for_two(promoted, other, string_promotion=False)
    if isinstance(t1, T.StructType) and isinstance(t2, T.StructType):
        if len(t1.fields) != len(t2.fields):
            return None
        fields = []
        for f1, f2 in zip(t1.fields, t2.fields):
            if f1.name.lower() != f2.name.lower():
                return None
            ft = find_wider_type_for_two(f1.data_type, f2.data_type,
                                         string_promotion=string_promotion, legacy=legacy)
            if ft is None:
                return None
            fields.append(T.StructField(f1.name, ft, f1.nullable or f2.nullable))
        return T.StructType(tuple(fields))
    if isinstance(t1, T.ArrayType) and isinstance(t2, T.ArrayType):
        et = find_wider_type_for_two(t1.element_type, t2.element_type,
                                     string_promotion=string_promotion, legacy=legacy)
        return None if et is None else T.ArrayType(et, t1.contains_null or t2.contains_null)
    if isinstance(t1, T.MapType) and isinstance(t2, T.MapType):
        kt = find_wider_type_for_two(t1.key_type, t2.key_type,
                                     string_promotion=string_promotion, legacy=legacy)
        vt = find_wider_type_for_two(t1.value_type, t2.value_type,
                                     string_promotion=string_promotion, legacy=legacy)
        if kt is None or vt is None:
            return None
        return T.MapType(kt, vt, t1.value_contains_null or t2.value_contains_null)
    return None


def find_wider_type(types: Sequence[T.DataType], *, string_promotion: bool = True,
                    legacy: bool = False) -> T.DataType | None:
    """The wider type of all ``types`` (folded left); None when there is none."""
    result: T.DataType | None = T.NULL
    for t in types:
        if result is None:
            return None
        result = find_wider_type_for_two(result, t, string_promotion=string_promotion,
                                         legacy=legacy)
    return result


# ---------------------------------------------------------------------------------------------
# Casts


def can_cast(from_type: T.DataType, to_type: T.DataType, ansi: bool = True) -> bool:
    """Whether ``CAST(x AS to_type)`` is allowed (Spark's ``Cast.canAnsiCast``; with
    ``ansi=False`` the legacy ``canCast``, which additionally allows numeric <-> datetime)."""
    f, t = from_type, to_type
    if f == t or isinstance(f, T.NullType):
        return True
    if isinstance(t, T.StringType):
        return not isinstance(f, (T.StructType, T.ArrayType)) or True
    if isinstance(f, T.StringType):
        return isinstance(t, (T.NumericType, T.BooleanType, T.DateType, T.TimestampType,
                              T.BinaryType, T.DayTimeIntervalType, T.YearMonthIntervalType,
                              T.TimestampNTZType, T.CalendarIntervalType))
    if isinstance(f, T.TimestampNTZType) or isinstance(t, T.TimestampNTZType):
        # TIMESTAMP_NTZ <-> DATE / TIMESTAMP only (no numbers: Spark's Cast.canAnsiCast)
        return isinstance(f, (T.DateType, T.TimestampType, T.TimestampNTZType)) and isinstance(
            t, (T.DateType, T.TimestampType, T.TimestampNTZType))
    if isinstance(f, (T.DayTimeIntervalType, T.YearMonthIntervalType)):
        # interval <-> interval of one kind; to a number of its end field's units (Spark's
        # Cast of an ANSI interval to an integral or decimal type)
        return type(f) is type(t) or t.is_integral or isinstance(t, T.DecimalType)
    if isinstance(t, T.BooleanType):
        return f.is_numeric
    if t.is_numeric:
        if f.is_numeric or isinstance(f, T.BooleanType):
            return True
        if isinstance(f, T.TimestampType):
            return True
        if isinstance(f, T.DateType):
            return not ansi
        return False
    if isinstance(t, T.DateType):
        return isinstance(f, T.TimestampType) or (not ansi and f.is_numeric)
    if isinstance(t, T.TimestampType):
        return isinstance(f, T.DateType) or f.is_numeric
    if isinstance(t, T.BinaryType):
        return f.is_integral and not ansi
    if isinstance(f, T.StructType) and isinstance(t, T.StructType):
        return len(f.fields) == len(t.fields) and all(
            can_cast(a.data_type, b.data_type, ansi) for a, b in zip(f.fields, t.fields))
    if isinstance(f, T.ArrayType) and isinstance(t, T.ArrayType):
        return can_cast(f.element_type, t.element_type, ansi)
    if isinstance(f, T.MapType) and isinstance(t, T.MapType):
        return can_cast(f.key_type, t.key_type, ansi) and can_cast(f.value_type, t.value_type,
                                                                    ansi)
    return False


_NUMERIC_RANK = {T.ByteType: 0, T.ShortType: 1, T.IntegerType: 2, T.LongType: 3,
                 T.FloatType: 4, T.DoubleType: 5}


def can_implicit_cast(from_type: T.DataType, to_type: T.DataType) -> bool:
    """Whether ANSI type coercion may cast ``from_type`` to ``to_type`` implicitly."""
    f, t = from_type, to_type
    if f == t or isinstance(f, T.NullType):
        return True
    if f.is_numeric and t.is_numeric:
        if isinstance(t, T.DecimalType):
            if isinstance(f, T.DecimalType):
                return (t.precision - t.scale >= f.precision - f.scale) and t.scale >= f.scale
            if f.is_integral:
                d = decimal_for_integral(f)
                return t.precision - t.scale >= d.precision
            return False
        if isinstance(f, T.DecimalType):
            return isinstance(t, (T.FloatType, T.DoubleType))
        return _NUMERIC_RANK[type(f)] <= _NUMERIC_RANK[type(t)]
    if isinstance(t, T.StringType):
        return isinstance(f, (T.NumericType, T.BooleanType, T.DateType, T.TimestampType,
                              T.BinaryType, T.TimestampNTZType))
    if isinstance(f, T.StringType):
        return isinstance(t, (T.NumericType, T.BooleanType, T.DateType, T.TimestampType,
                              T.BinaryType, T.TimestampNTZType))
    if isinstance(f, T.DateType) and isinstance(t, T.TimestampType):
        return True
    if isinstance(f, (T.DateType, T.TimestampNTZType)) and isinstance(
            t, (T.TimestampType, T.TimestampNTZType)):
        return True  # AnsiTypeCoercion: DATE < TIMESTAMP_NTZ < TIMESTAMP
    if isinstance(f, T.TimestampNTZType) and isinstance(t, T.DateType):
        return True
    if isinstance(f, (T.DayTimeIntervalType, T.YearMonthIntervalType)) and type(f) is type(t):
        return True
    if isinstance(f, T.TimestampType) and isinstance(t, T.DateType):
        return True  # date functions on timestamps (month(ts))
    if isinstance(f, T.StructType) and isinstance(t, T.StructType):
        return len(f.fields) == len(t.fields) and all(
            can_implicit_cast(a.data_type, b.data_type) for a, b in zip(f.fields, t.fields))
    return False


def implicit_cast(expr: Expression, target: T.DataType) -> Expression | None:
    """``expr`` cast to ``target`` as ANSI coercion would (``expr`` itself when it already has
    that type); None when no implicit cast exists.

    >>> implicit_cast(Literal(1, T.INT), T.LONG)
    cast(1 as bigint)
    """
    # imported here: at module level it would close the import cycle
    # coercion -> expressions.cast -> coercion
    from ember.expressions.cast import Cast

    if expr.data_type == target:
        return expr
    if not can_implicit_cast(expr.data_type, target):
        return None
    return Cast(expr, target)


def _cast_to(e: Expression, t: T.DataType) -> Expression:
    # imported here: at module level it would close the import cycle
    # coercion -> expressions.cast -> coercion
    from ember.expressions.cast import Cast

    return e if e.data_type == t else Cast(e, t)


# ---------------------------------------------------------------------------------------------
# Operators


OpKind = _Lit["arithmetic", "comparison", "equality", "divide", "integral_divide"]


def coerce_binary_operands(left: Expression, right: Expression, op_kind: OpKind,
                           legacy: bool = False) -> tuple[Expression, Expression]:
    """The two operands with Spark's implicit casts for a binary operator.

    ``op_kind``: ``"arithmetic"`` (+ - * %), ``"divide"`` (/), ``"integral_divide"`` (div),
    ``"comparison"`` (< <= > >=), ``"equality"`` (= <=>).  Operands that cannot be coerced are
    returned unchanged (the operator's ``check_input_types`` then reports the mismatch).
    ``legacy``: Spark's non-ANSI PromoteStrings first (see the module docstring).
    """
    lt, rt = left.data_type, right.data_type
    if legacy:
        if op_kind in ("comparison", "equality"):
            for a, b in ((left, right), (right, left)):
                if isinstance(a.data_type, T.StringType) and isinstance(b.data_type, (
                        T.NumericType, T.BooleanType, T.DateType, T.TimestampType)):
                    a = _cast_to(a, b.data_type)
                    return (a, b) if b is right else (b, a)
        elif isinstance(lt, T.StringType) or isinstance(rt, T.StringType):
            left, right = (_cast_to(e, T.DOUBLE) if isinstance(e.data_type, T.StringType) else e
                           for e in (left, right))
            lt, rt = left.data_type, right.data_type
    if op_kind == "integral_divide":
        def to_long(e: Expression) -> Expression:
            t = e.data_type
            if t.is_integral or isinstance(t, (T.StringType, T.NullType)):
                return _cast_to(e, T.LONG)
            return e
        if isinstance(lt, T.DecimalType) or isinstance(rt, T.DecimalType):
            # DecimalPrecision: a decimal next to a float/double (or a string, which ANSI
            # promotes to double here) becomes a double; div then rejects the operands.
            def to_double(e: Expression) -> Expression:
                t = e.data_type
                return _cast_to(e, T.DOUBLE) if isinstance(t, (T.DecimalType, T.StringType)) else e
            if any(isinstance(t, (T.FloatType, T.DoubleType, T.StringType)) for t in (lt, rt)):
                return to_double(left), to_double(right)
            # Otherwise the operands keep their own precision and scale, as for + - * /
            # (an integral side becomes its decimal): widening both to one decimal type would
            # round a fraction away (decimal(38,0) div 0.5 must divide by 0.5, not by 1).
            def to_dec(e: Expression, other: T.DataType) -> Expression:
                t = e.data_type
                if t.is_integral:
                    return _cast_to(e, decimal_for_integral(t))
                return _cast_to(e, other) if isinstance(t, T.NullType) else e
            return to_dec(left, rt), to_dec(right, lt)
        return to_long(left), to_long(right)
    # Integer literals next to a decimal become the smallest decimal holding them
    # (DecimalPrecision's literal rule): m + 1 -> m + CAST(1 AS DECIMAL(1,0)).
    if isinstance(lt, T.DecimalType) and _is_int_literal(right):
        right = _cast_to(right, _literal_decimal(right))
        rt = right.data_type
    elif isinstance(rt, T.DecimalType) and _is_int_literal(left):
        left = _cast_to(left, _literal_decimal(left))
        lt = left.data_type
    if op_kind in ("arithmetic", "divide") and (
            isinstance(lt, T.DecimalType) or isinstance(rt, T.DecimalType)):
        # Decimal arithmetic takes operands of different precision; only non-decimals move.
        def to_dec(e: Expression, other: T.DataType) -> Expression:
            t = e.data_type
            if isinstance(t, T.DecimalType):
                return e
            if t.is_integral:
                return _cast_to(e, decimal_for_integral(t))
            if isinstance(t, T.NullType):
                return _cast_to(e, other)
            return e
        if all(isinstance(t, T.DecimalType) or t.is_integral or isinstance(t, T.NullType)
               for t in (lt, rt)):
            return to_dec(left, rt), to_dec(right, lt)
    if op_kind in ("arithmetic", "divide") and isinstance(lt, T.NullType) and isinstance(rt, T.NullType):
        wider: T.DataType | None = T.DOUBLE
    else:
        wider = find_wider_type_for_two(lt, rt, legacy=legacy)
    if wider is None:
        return left, right
    if op_kind in ("arithmetic", "divide") and not (wider.is_numeric):
        return left, right
    if op_kind == "divide" and not isinstance(wider, T.DecimalType):
        wider = T.DOUBLE
    return _cast_to(left, wider), _cast_to(right, wider)


def _is_int_literal(e: Expression) -> bool:
    return isinstance(e, Literal) and e.value is not None and e.data_type.is_integral


def _literal_decimal(e: Literal) -> T.DecimalType:
    """Spark's ``DecimalType.fromLiteral``: the digits of a smallint/int/bigint literal, but a
    tinyint literal falls through to ``forType`` (``2Y % m`` treats ``2Y`` as decimal(3,0))."""
    if isinstance(e.data_type, T.ByteType):
        return decimal_for_integral(e.data_type)
    return T.DecimalType(max(len(str(abs(int(e.value)))), 1), 0)


def coerce_all(items: Sequence[Expression], *, string_promotion: bool = True,
               legacy: bool = False) -> tuple[Expression, ...] | None:
    """``items`` cast to their wider common type (Spark's ``findWiderCommonType``); None when
    they have none."""
    wider = find_wider_type([i.data_type for i in items], string_promotion=string_promotion,
                            legacy=legacy)
    if wider is None:
        return None
    return tuple(_cast_to(i, wider) for i in items)


def coerce_expression(e: Expression, legacy: bool = False) -> Expression:
    """``e`` with ANSI implicit casts inserted into its direct children, or ``e`` itself when
    nothing applies (or its children are unresolved).  Apply bottom-up over a tree.
    ``legacy``: Spark's non-ANSI TypeCoercion where it differs (see the module docstring)."""

    if not all(c.resolved for c in e.children):
        return e
    match e:
        case P.EqualTo() | P.EqualNullSafe():
            left, right = coerce_binary_operands(e.left, e.right, "equality", legacy)
            return _rebuild(e, left=left, right=right)
        case P.BinaryComparison():
            left, right = coerce_binary_operands(e.left, e.right, "comparison", legacy)
            return _rebuild(e, left=left, right=right)
        case A.Divide():
            left, right = coerce_binary_operands(e.left, e.right, "divide", legacy)
            return _rebuild(e, left=left, right=right)
        case A.IntegralDivide():
            left, right = coerce_binary_operands(e.left, e.right, "integral_divide", legacy)
            return _rebuild(e, left=left, right=right)
        case A.BinaryArithmetic():
            left, right = coerce_binary_operands(e.left, e.right, "arithmetic", legacy)
            return _rebuild(e, left=left, right=right)
        case B.BitwiseAnd() | B.BitwiseOr() | B.BitwiseXor():
            # widened only to an integral type (the operators' input type): ``d | i`` stays
            # DOUBLE and INT and fails with BINARY_OP_DIFF_TYPES, as in Spark
            left, right = coerce_binary_operands(e.left, e.right, "arithmetic", legacy)
            if left.data_type.is_integral or isinstance(left.data_type, T.NullType):
                return _rebuild(e, left=left, right=right)
            return e
        case A.UnaryMinus() | A.UnaryPositive() | A.Abs():
            t = e.child.data_type
            if isinstance(t, T.StringType):
                return e.copy(child=_cast_to(e.child, T.DOUBLE))
            if isinstance(t, T.NullType):
                return e.copy(child=_cast_to(e.child, T.DOUBLE))
            return e
        case P.And() | P.Or():
            left, right = e.left, e.right
            if isinstance(left.data_type, (T.NullType, T.StringType)):
                left = _cast_to(left, T.BOOLEAN)
            if isinstance(right.data_type, (T.NullType, T.StringType)):
                right = _cast_to(right, T.BOOLEAN)
            return _rebuild(e, left=left, right=right)
        case P.Not():
            if isinstance(e.child.data_type, (T.NullType, T.StringType)):
                return e.copy(child=_cast_to(e.child, T.BOOLEAN))
            return e
        case P.In():
            items = coerce_all((e.value,) + tuple(e.items), legacy=legacy)
            if items is None:
                return e
            return _rebuild(e, value=items[0], items=items[1:])
        case P.Like():
            left = e.left if isinstance(e.left.data_type, T.StringType) else (
                implicit_cast(e.left, T.STRING) or e.left)
            right = e.right if isinstance(e.right.data_type, T.StringType) else (
                implicit_cast(e.right, T.STRING) or e.right)
            return _rebuild(e, left=left, right=right)
        case C.CaseWhen():
            branches = tuple(e.values) + ((e.else_value,) if e.else_value is not None else ())
            coerced = coerce_all(branches, legacy=legacy)
            # A bare ``WHEN NULL`` stays VOID: Spark rejects it (CaseWhen's own type check),
            # while ``IF(NULL, ...)`` below is accepted.
            if coerced is None:
                return e
            values = coerced[: len(e.values)]
            else_value = coerced[-1] if e.else_value is not None else None
            return _rebuild(e, values=values, else_value=else_value)
        case C.If():
            coerced = coerce_all((e.true_value, e.false_value), legacy=legacy)
            pred = e.predicate
            if isinstance(pred.data_type, T.NullType):
                pred = _cast_to(pred, T.BOOLEAN)
            if coerced is None:
                return _rebuild(e, predicate=pred)
            return _rebuild(e, predicate=pred, true_value=coerced[0], false_value=coerced[1])
        case C.Coalesce():
            coerced = coerce_all(e.items, legacy=legacy)
            return e if coerced is None else _rebuild(e, items=coerced)
        case C.Greatest() | C.Least():
            coerced = coerce_all(e.items, string_promotion=False)
            return e if coerced is None else _rebuild(e, items=coerced)
        case _:
            arguments_hook = getattr(e, "coerce_arguments", None)  # aggregate functions
            if arguments_hook is not None:
                return arguments_hook(legacy)
            hook = getattr(e, "coerce_children", None)
            if hook is not None:
                return hook()
            return e


def _rebuild(e: Expression, **changes: object) -> Expression:
    """``e.copy(**changes)`` unless every change is identical to the current value."""
    for k, v in changes.items():
        cur = getattr(e, k)
        if isinstance(v, tuple) and isinstance(cur, tuple):
            if len(v) != len(cur) or any(a is not b for a, b in zip(v, cur)):
                return e.copy(**changes)
        elif cur is not v:
            return e.copy(**changes)
    return e
