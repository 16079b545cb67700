"""Spark's typing of SQL literals.

Numbers (``AstBuilder.visitIntegerLiteral`` and friends):

================  ==========================================================
``1``             int if it fits in 32 bits, else bigint, else decimal(p, 0)
``1L`` ``1S``     bigint / smallint / tinyint (``1Y``); out of range is an error
``1.5``           decimal(precision, scale) of the digits as written: decimal(2,1)
``1.5BD``         decimal, same rule
``1.5D`` ``1e3``  double (an exponent without suffix is a double too)
``1.5F``          float
================  ==========================================================

Typed literals: ``DATE '2001-01-01'`` and ``TIMESTAMP '2001-01-01 10:00:00'``.  As in Spark's
``AstBuilder.visitTypeConstructor``, a TIMESTAMP literal is read when the query is parsed, like a
string cast to a timestamp: a wall time without zone in the session time zone of that moment, one
with a zone (``'... UTC'``, ``'...+05:30'``, ``'... Europe/Paris'``) as that instant.

>>> number_literal("1.50").dtype
DecimalType(3, 2)
"""

from __future__ import annotations

import datetime as dt
import re
from decimal import Decimal, InvalidOperation

import pyarrow as pa

from ember import types as T
from ember.errors import CastError, ParseError, UnsupportedError
from ember.expressions.base import Literal
from ember.expressions.cast import cast_array
from ember.sql.datatypes import TIMESTAMP_IS_NTZ

__all__ = ["number_literal", "typed_literal"]

_NUMBER = re.compile(
    r"^(?P<num>(\d+\.?\d*|\.\d+)(?P<exp>[eE][+-]?\d+)?)(?P<suffix>BD|[LSYDF])?$", re.IGNORECASE
)

_INTEGRAL_SUFFIX = {"L": T.LONG, "S": T.SHORT, "Y": T.BYTE}


def _invalid_number(text: str, kind: str, lo: object, hi: object) -> ParseError:
    return ParseError(
        f"Numeric literal {text} does not fit in range [{lo}, {hi}] for type {kind}.",
        error_class="INVALID_NUMERIC_LITERAL_RANGE",
        parameters={"rawStrippedQualifier": text, "minValue": str(lo), "maxValue": str(hi),
                    "typeName": kind},
    )


def _decimal_type(value: Decimal, text: str) -> T.DecimalType:
    sign, digits, exponent = value.as_tuple()
    assert isinstance(exponent, int)
    scale = max(-exponent, 0)
    precision = len(digits) + max(exponent, 0)
    precision = max(precision, scale)
    if precision > 38:
        raise ParseError(
            f"Decimal precision {precision} exceeds max precision 38.",
            error_class="DECIMAL_PRECISION_EXCEEDS_MAX_PRECISION",
            parameters={"precision": str(precision), "maxPrecision": "38"},
        )
    return T.DecimalType(precision, scale)


def number_literal(text: str, negate: bool = False) -> Literal:
    """The Spark literal for numeric ``text`` as written (``negate`` for a leading minus).

    >>> number_literal("2147483648").dtype
    LongType()
    >>> number_literal("1e3").value
    1000.0
    """
    m = _NUMBER.match(text.strip())
    if m is None:
        raise ParseError(f"Invalid numeric literal {text!r}.", error_class="PARSE_SYNTAX_ERROR")
    num, suffix = m.group("num"), (m.group("suffix") or "").upper()
    sign = "-" if negate else ""
    is_integral_text = "." not in num and m.group("exp") is None

    if suffix in _INTEGRAL_SUFFIX:
        dtype = _INTEGRAL_SUFFIX[suffix]
        if not is_integral_text:
            raise ParseError(f"Invalid numeric literal {text!r}.", error_class="PARSE_SYNTAX_ERROR")
        value = int(sign + num)
        if not dtype.min_value <= value <= dtype.max_value:
            raise _invalid_number(sign + text, dtype.simple_string(), dtype.min_value,
                                  dtype.max_value)
        return Literal(value, dtype)
    if suffix == "D":
        return Literal(float(sign + num), T.DOUBLE)
    if suffix == "F":
        return Literal(float(sign + num), T.FLOAT)
    if suffix == "BD":
        value_d = Decimal(sign + num)
        return Literal(value_d, _decimal_type(value_d, text))
    if m.group("exp") is not None:
        return Literal(float(sign + num), T.DOUBLE)
    if is_integral_text:
        value = int(sign + num)
        if T.INT.min_value <= value <= T.INT.max_value:
            return Literal(value, T.INT)
        if T.LONG.min_value <= value <= T.LONG.max_value:
            return Literal(value, T.LONG)
        value_d = Decimal(value)
        return Literal(value_d, _decimal_type(value_d, text))
    try:
        value_d = Decimal(sign + num)
    except InvalidOperation as e:  # pragma: no cover - regex guarantees a valid number
        raise ParseError(f"Invalid numeric literal {text!r}.") from e
    return Literal(value_d, _decimal_type(value_d, text))


_DATE = re.compile(r"^\s*([+-]?\d{4,})(?:-(\d{1,2})(?:-(\d{1,2}))?)?\s*$")


def _invalid_typed(kind: str, value: str) -> ParseError:
    return ParseError(
        f"The value of the typed literal \"{kind}\" is invalid: '{value}'.",
        error_class="INVALID_TYPED_LITERAL",
        parameters={"valueType": f'"{kind}"', "value": f"'{value}'"},
    )


def typed_literal(kind: str, value: str, time_zone: str) -> Literal:
    """``DATE 'v'`` / ``TIMESTAMP 'v'`` as a Literal (``kind`` is the keyword, any case);
    ``time_zone`` is the session time zone a TIMESTAMP without zone is read in.

    >>> typed_literal("date", "2001-01-01", "UTC").value
    datetime.date(2001, 1, 1)
    >>> typed_literal("timestamp", "2024-03-10 01:30", "America/Los_Angeles").value
    datetime.datetime(2024, 3, 10, 9, 30, tzinfo=datetime.timezone.utc)
    """
    k = kind.upper()
    try:
        if k == "DATE":
            m = _DATE.match(value)
            if m is None:
                raise ValueError(value)
            y, mo, d = int(m.group(1)), int(m.group(2) or 1), int(m.group(3) or 1)
            return Literal(dt.date(y, mo, d), T.DATE)
        if k == "TIMESTAMP_NTZ" or (k == "TIMESTAMP" and TIMESTAMP_IS_NTZ.get()):
            try:
                ts = cast_array(pa.array([value]), T.STRING, T.TIMESTAMP_NTZ, True, time_zone)
                return Literal(ts.to_pylist()[0], T.TIMESTAMP_NTZ)
            except (CastError, OverflowError) as e:  # invalid text; a year beyond 9999
                raise ValueError(value) from e
        if k in ("TIMESTAMP", "TIMESTAMP_LTZ"):
            try:
                ts = cast_array(pa.array([value]), T.STRING, T.TIMESTAMP, True, time_zone)
                return Literal(ts.to_pylist()[0].astimezone(dt.timezone.utc), T.TIMESTAMP)
            except (CastError, OverflowError) as e:  # invalid text; a year beyond 9999
                raise ValueError(value) from e
    except ValueError as e:
        raise _invalid_typed(k, value) from e

    raise UnsupportedError(f"Typed literal {k} '{value}' is not supported.",
                           error_class="UNSUPPORTED_TYPED_LITERAL",
                           parameters={"unsupportedType": f'"{k}"'})
