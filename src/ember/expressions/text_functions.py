"""String, binary and URL functions of issue 22 that Arrow has no kernel for: ``format_string``
/ ``printf`` (Java's ``Formatter``), ``conv`` (Spark's NumberConverter), ``to_binary`` /
``try_to_binary``, ``to_base32`` / ``from_base32``, ``hmac``, ``mask``, ``parse_url`` /
``try_parse_url`` (``java.net.URI``), ``jaro_winkler_similarity`` and the UTF-8 validation
family (``is_valid_utf8``, ``make_valid_utf8``, ``validate_utf8``, ``try_validate_utf8``).

Each kernel runs once per distinct combination of argument values (:func:`per_distinct`), not
per row.  The UTF-8 functions also accept BINARY directly, so ``is_valid_utf8(unhex('80'))``
sees the raw bytes (Ember's strings are always valid UTF-8; Spark's may hold any bytes).
"""

from __future__ import annotations

import base64
import datetime as _dt
import binascii
import hashlib
import hmac as _hmac
import re
from decimal import ROUND_HALF_UP, Decimal, localcontext
from typing import Any, Callable

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from ember import types as T
from ember.errors import ArithmeticError_, ExecutionError
from ember.formatting import java_double_str
from ember.expressions.base import Expression, Literal, bind_references
from ember.expressions.common import TypeCheckFailure, sql_type
from ember.expressions.foldable import is_foldable
from ember.expressions.misc import (
    FunctionSpec, ScalarFunction, nullable_from_arguments, register, to_pretty_sql,
)

__all__ = ["TEXT_FUNCTIONS", "per_distinct", "build_text_function"]

S, I, BIN = T.STRING, T.INT, T.BINARY


def per_distinct(arrays: list[pa.Array], fn: Callable[..., Any], out_type: pa.DataType,
                 null_intolerant: bool = True) -> pa.Array:
    """``fn(*values)`` once per distinct row of ``arrays`` (dictionary codes combined into one
    key), NULL where an argument is NULL when ``null_intolerant``; values are Python objects."""
    n = len(arrays[0])
    if n == 0:
        return pa.array([], out_type)
    codes, dicts = [], []
    for a in arrays:
        if isinstance(a, pa.ChunkedArray):
            a = a.combine_chunks()
        enc = pc.dictionary_encode(a, null_encoding="encode")
        dicts.append(enc.dictionary.to_pylist())
        codes.append(np.asarray(enc.indices.to_numpy(zero_copy_only=False), dtype=np.int64))
    key = np.stack(codes, axis=1)
    uniq, inverse = np.unique(key, axis=0, return_inverse=True)
    values = []
    for row in uniq:
        args = [d[c] for d, c in zip(dicts, row)]
        values.append(None if null_intolerant and any(v is None for v in args) else fn(*args))
    return pc.take(pa.array(values, type=out_type), pa.array(inverse.reshape(-1)))


def _constant(e: Expression) -> Any:
    """The value of a foldable argument (evaluated on a one-row batch)."""
    batch = pa.record_batch({"_": pa.array([0], pa.int8())})
    return bind_references(e, ()).eval(batch)[0].as_py()


def _non_foldable(name: str, e: Expression) -> TypeCheckFailure:
    q = f'"{to_pretty_sql(e)}"'
    return TypeCheckFailure(
        f"the input {name} should be a foldable {sql_type(e.data_type)} expression; however, got "
        f"{q}.", "NON_FOLDABLE_INPUT",
        {"inputName": f"`{name}`", "inputType": sql_type(e.data_type), "inputExpr": q})


def _spec(key, inputs, result, kernel, **kw):
    return register(FunctionSpec(key, inputs, result, kernel, **kw))


def _strs(types):
    return (S,) * len(types)


# -- format_string / printf: java.util.Formatter ----------------------------------------------

_SPEC = re.compile(r"%(\d+\$|<)?([-#+ 0,(]*)(\d+)?(\.\d+)?([a-zA-Z%])")
_INTEGRAL = (T.ByteType, T.ShortType, T.IntegerType, T.LongType)
_BITS = {T.ByteType: 8, T.ShortType: 16, T.IntegerType: 32, T.LongType: 64}


def _format_error(message: str) -> ExecutionError:
    # Spark raises Java's IllegalFormatException subclasses, which carry no error class
    return ExecutionError(message)


def _group(digits: str) -> str:
    head, _, tail = digits.partition(".")
    head = f"{int(head):,}" if head else head
    return head + ("." + tail if _ else "")


def _sign_wrap(body: str, negative: bool, flags: str) -> str:
    if negative:
        return f"({body})" if "(" in flags else "-" + body
    if "+" in flags:
        return "+" + body
    if " " in flags:
        return " " + body
    return body


def _units(text: str) -> int:
    """The length in Java chars (UTF-16 code units), which widths count."""
    return len(text) + sum(1 for ch in text if ord(ch) > 0xFFFF)


def _truncate(text: str, prec: int | None) -> str:
    """The first ``prec`` Java chars (a surrogate pair cut in half is dropped)."""
    if prec is None or _units(text) <= prec:
        return text
    out, used = [], 0
    for ch in text:
        used += 2 if ord(ch) > 0xFFFF else 1
        if used > prec:
            break
        out.append(ch)
    return "".join(out)


def _pad(text: str, width: int | None, flags: str, zero_ok: bool = False,
         sign_len: int = 0) -> str:
    n = _units(text)
    if width is None or n >= width:
        return text
    if "-" in flags:
        return text + " " * (width - n)
    if "0" in flags and zero_ok:
        return text[:sign_len] + "0" * (width - n) + text[sign_len:]
    return " " * (width - n) + text


def _fixed(v: float, dtype: T.DataType, prec: int) -> str:
    """``%.{prec}f`` as Java: HALF_UP on the value's shortest decimal representation."""
    d = Decimal(repr(float(np.float32(v))) if isinstance(dtype, T.FloatType) else repr(v))
    with localcontext() as ctx:
        ctx.prec = 1000
        return f"{abs(d).quantize(Decimal(1).scaleb(-prec), rounding=ROUND_HALF_UP):f}"


def _sci(v: float, dtype: T.DataType, prec: int, upper: bool) -> str:
    d = Decimal(repr(float(np.float32(v))) if isinstance(dtype, T.FloatType) else repr(v))
    d = abs(d)
    if d == 0:
        mant, exp = "0" + ("." + "0" * prec if prec else ""), 0
    else:
        exp = d.adjusted()
        with localcontext() as ctx:
            ctx.prec = 1000
            m = (d.scaleb(-exp)).quantize(Decimal(1).scaleb(-prec), rounding=ROUND_HALF_UP)
            if m >= 10:
                exp += 1
                m = (d.scaleb(-exp)).quantize(Decimal(1).scaleb(-prec), rounding=ROUND_HALF_UP)
        mant = f"{m:f}"
    out = f"{mant}e{'-' if exp < 0 else '+'}{abs(exp):02d}"
    return out.upper() if upper else out


def _format_one(conv: str, flags: str, width: int | None, prec: int | None, value: Any,
                dtype: T.DataType, spec: str) -> str:
    upper = conv.isupper()
    c = conv.lower()
    if c == "b":
        text = "false" if value is None else ("true" if not isinstance(dtype, T.BooleanType)
                                              else str(bool(value)).lower())
        text = _truncate(text, prec)
        return _pad(text.upper() if upper else text, width, flags)
    if value is None:
        text = _truncate("null", prec)
        return _pad(text.upper() if upper else text, width, flags)
    if c == "s":
        text = _truncate(_to_java_string(value, dtype), prec)
        return _pad(text.upper() if upper else text, width, flags)
    if c == "c":
        if not isinstance(dtype, (T.ByteType, T.ShortType, T.IntegerType)):
            raise _format_error(f"{conv} != {_java_class(dtype)}")
        text = chr(value & 0xFF if isinstance(dtype, T.ByteType) else value)
        return _pad(text.upper() if upper else text, width, flags)
    if c in "dxo":
        if not isinstance(dtype, _INTEGRAL):
            raise _format_error(f"{conv} != {_java_class(dtype)}")
        if c == "d":
            body = f"{abs(value):,}" if "," in flags else str(abs(value))
            text = _sign_wrap(body, value < 0, flags)
            return _pad(text, width, flags, zero_ok=True,
                        sign_len=1 if text[:1] in "+- (" else 0)
        bits = _BITS[type(dtype)]
        u = value + (1 << bits) if value < 0 else value
        body = format(u, "x" if c == "x" else "o")
        if "#" in flags:
            body = ("0x" if c == "x" else "0") + body
        body = body.upper() if upper else body
        return _pad(body, width, flags, zero_ok=True, sign_len=2 if "#" in flags and c == "x"
                    else 0)
    if c in "feg":
        if not isinstance(dtype, (T.FloatType, T.DoubleType)):
            raise _format_error(f"{conv} != {_java_class(dtype)}")
        if value != value or value in (float("inf"), float("-inf")):
            text = "NaN" if value != value else _sign_wrap("Infinity", value < 0, flags)
            return _pad(text.upper() if upper else text, width, flags)
        p = 6 if prec is None else prec
        negative = value < 0 or (value == 0 and str(value).startswith("-"))
        if c == "f":
            body = _fixed(value, dtype, p)
        elif c == "e":
            body = _sci(value, dtype, p, upper)
        else:
            p = 1 if p == 0 else p
            rounded = Decimal(_sci(value, dtype, p - 1, False).replace("e", "E"))
            if rounded != 0 and not (Decimal("1e-4") <= abs(rounded) < Decimal(10) ** p):
                body = _sci(value, dtype, p - 1, upper)
            else:
                body = _fixed(value, dtype, max(p - 1 - (abs(rounded).adjusted()
                                                          if rounded != 0 else 0), 0))
        if "," in flags and c != "e":
            body = _group(body)
        text = _sign_wrap(body, negative, flags)
        return _pad(text, width, flags, zero_ok=True, sign_len=1 if text[:1] in "+- (" else 0)
    raise _format_error(f"Conversion = '{conv}'")


def _java_class(dtype: T.DataType) -> str:
    return {T.ByteType: "java.lang.Byte", T.ShortType: "java.lang.Short",
            T.IntegerType: "java.lang.Integer", T.LongType: "java.lang.Long",
            T.FloatType: "java.lang.Float", T.DoubleType: "java.lang.Double",
            T.BooleanType: "java.lang.Boolean", T.StringType: "org.apache.spark.unsafe.types"
            ".UTF8String", T.DecimalType: "org.apache.spark.sql.types.Decimal"}.get(
        type(dtype), dtype.simple_string())


def _to_java_string(value: Any, dtype: T.DataType) -> str:
    """``String.valueOf`` of Spark's internal value (a DATE is its day number, a TIMESTAMP its
    microseconds, as Spark passes them to the formatter)."""
    if isinstance(dtype, T.BooleanType):
        return "true" if value else "false"
    if isinstance(dtype, (T.FloatType, T.DoubleType)):
        return java_double_str(value, isinstance(dtype, T.FloatType))
    if isinstance(dtype, T.DecimalType):
        return f"{value:f}"
    if isinstance(dtype, T.DateType):
        return str((value - _EPOCH_DATE).days)
    if isinstance(dtype, T.TimestampType):
        delta = value.replace(tzinfo=None) - _EPOCH_TS
        return str((delta.days * 86400 + delta.seconds) * 1_000_000 + delta.microseconds)
    if isinstance(dtype, T.BinaryType):
        raise _format_error("format_string of a BINARY value with %s (Java prints the array's "
                            "identity) is not supported")
    return str(value)


_EPOCH_DATE = _dt.date(1970, 1, 1)
_EPOCH_TS = _dt.datetime(1970, 1, 1)


def java_format(fmt: str, values: list[Any], types: list[T.DataType]) -> str:
    """``String.format(fmt, values...)`` over Spark's argument values."""
    out, pos, ordinary, last = [], 0, 0, -1
    for m in _SPEC.finditer(fmt):
        out.append(fmt[pos:m.start()])
        pos = m.end()
        index, flags, width, prec, conv = m.groups()
        if conv == "%":
            out.append(_pad("%", int(width) if width else None, flags))
            continue
        if conv == "n":
            out.append("\n")
            continue
        if index == "<":
            i = last
            if i < 0:
                raise _format_error(f"Format specifier '{m.group(0)}'")
        elif index:
            i = int(index[:-1]) - 1
        else:
            i = ordinary
            ordinary += 1
        if not 0 <= i < len(values):
            raise _format_error(f"Format specifier '{m.group(0)}'")
        last = i
        out.append(_format_one(conv, flags, int(width) if width else None,
                               int(prec[1:]) if prec else None, values[i], types[i],
                               m.group(0)))
    rest = fmt[pos:]
    if "%" in rest:
        raise _format_error(f"Format specifier '{rest[rest.index('%'):][:2]}'")
    out.append(rest)
    return "".join(out)


def _format_string(a, node, b):
    types = list(node.arg_types[1:])

    def one(f, *vals):
        if f is None:
            return None
        return java_format(f, list(vals), types)
    return per_distinct(list(a), one, pa.string(), null_intolerant=False)


def _format_string_inputs(types):
    if not types:
        return None
    return (S,) + (None,) * (len(types) - 1)


_spec("format_string", _format_string_inputs, lambda t: S, _format_string, may_fail=True,
      null_intolerant=False, expected='"STRING"',
      nullable=lambda node: node.arguments[0].nullable)


# -- conv: Spark's NumberConverter ------------------------------------------------------------

_MASK64 = (1 << 64) - 1


def _digit(ch: str, radix: int) -> int:
    v = int(ch, 36) if ch.isascii() and ch.isalnum() else -1
    return v if v < radix else -1


def conv_value(num: str, from_base: int, to_base: int, ansi: bool, fn: str = "conv") -> \
        str | None:
    """``conv(num, from_base, to_base)`` as Spark's NumberConverter.convert: digits up to the
    first invalid one, the 64-bit unsigned value (overflow: -1, or ARITHMETIC_OVERFLOW under
    ANSI), a negative ``to_base`` printing a signed value."""
    if not (2 <= from_base <= 36 and 2 <= abs(to_base) <= 36):
        return None
    s = num.strip(" ")
    if not s:
        return None
    negative = s[0] == "-"
    v = 0
    for ch in s[1 if negative else 0:]:
        d = _digit(ch, from_base)
        if d < 0:
            break
        v = v * from_base + d
        if v > _MASK64:
            if ansi:
                raise ArithmeticError_(
                    f'Overflow in function {fn}(). If necessary set "spark.sql.ansi.enabled" '
                    'to "false" to bypass this error.', error_class="ARITHMETIC_OVERFLOW",
                    parameters={"message": f"Overflow in function {fn}()",
                                "alternative": "", "config": '"spark.sql.ansi.enabled"'})
            v = _MASK64
            break
    if negative and to_base > 0:
        v = _MASK64 if v >= 1 << 63 else (-v) & _MASK64
    if to_base < 0 and v >= 1 << 63:
        v = (-(v - (1 << 64))) & _MASK64
        negative = True
    radix = abs(to_base)
    digits = ""
    while True:
        digits = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ"[v % radix] + digits
        v //= radix
        if not v:
            break
    return "-" + digits if negative and to_base < 0 else digits


def _conv(a, node, b):
    ansi = node.ansi_mode
    return per_distinct(list(a), lambda s, f, t: conv_value(s, f, t, ansi), pa.string())


_spec("conv", lambda t: (S, I, I), lambda t: S, _conv, may_fail=True, ansi_aware=True)


# -- to_binary / try_to_binary, to_base32 / from_base32, hmac --------------------------------

_BINARY_FORMATS = ("hex", "utf-8", "utf8", "base64")


def _conversion_invalid(value: str, fmt: str) -> ExecutionError:
    return ExecutionError(
        f"The value '{value}' ('{fmt.upper()}') cannot be converted to \"BINARY\" because it is "
        "malformed. Correct the value as per the syntax, or change its format. Use "
        "`try_to_binary` to tolerate malformed input and return NULL instead.",
        error_class="CONVERSION_INVALID_INPUT",
        parameters={"str": f"'{value}'", "fmt": f"'{fmt.upper()}'",
                    "targetType": '"BINARY"', "suggestion": "`try_to_binary`"})


def _hex_bytes(v: str) -> bytes | None:
    if len(v) % 2:
        v = "0" + v
    try:
        return bytes.fromhex(v) if re.fullmatch(r"[0-9a-fA-F]*", v) else None
    except ValueError:
        return None


def _b64_bytes(v: str) -> bytes | None:
    """Spark's strict base64 check (Base64.isBase64 with padding) then lenient decoding."""
    s = re.sub(r"[ \t\r\n]", "", v)
    if not re.fullmatch(r"[A-Za-z0-9+/]*={0,2}", s) or (len(s) % 4 == 1) or (
            "=" in s and len(s) % 4):
        return None
    try:
        return base64.b64decode(s + "=" * (-len(s) % 4))
    except (binascii.Error, ValueError):
        return None


def _to_binary(a, node, b):
    fmt = _binary_format(node)
    try_ = node.key == "try_to_binary"

    def one(v: str) -> bytes | None:
        if fmt in ("utf-8", "utf8"):
            return v.encode("utf-8")
        out = _hex_bytes(v) if fmt == "hex" else _b64_bytes(v)
        if out is None and not try_:
            raise _conversion_invalid(v, fmt)
        return out
    if fmt is None:
        return pa.nulls(len(a[0]), pa.binary())
    return per_distinct([a[0]], one, pa.binary())


def _binary_format(node) -> str | None:
    if len(node.arguments) < 2:
        return "hex"
    v = _constant(node.arguments[1])
    return None if v is None else str(v).lower()


def _to_binary_check(node) -> str | None:
    if len(node.arguments) < 2:
        return None
    f = node.arguments[1]
    if not is_foldable(f):
        return _non_foldable("fmt", f)
    v = _constant(f)
    if v is not None and str(v).lower() not in _BINARY_FORMATS:
        return TypeCheckFailure(
            "The fmt value must to be a case-insensitive \"STRING\" literal of 'hex', 'utf-8', "
            f"'utf8', or 'base64', but got '{v}'.", "INVALID_ARG_VALUE",
            {"inputName": "fmt", "requireType": 'case-insensitive "STRING"',
             "validValues": "'hex', 'utf-8', 'utf8', or 'base64'", "inputValue": f"'{v}'"})
    return None


def _to_binary_nullable(node) -> bool:
    """NULL only for a NULL argument with ``base64`` (Spark's UnBase64), else always nullable."""
    if node.key == "to_binary" and len(node.arguments) == 2 and is_foldable(
            node.arguments[1]) and str(_constant(node.arguments[1])).lower() == "base64":
        return nullable_from_arguments(node)
    return True


for _k in ("to_binary", "try_to_binary"):
    _spec(_k, _strs, lambda t: BIN, _to_binary, may_fail=_k == "to_binary",
          check=_to_binary_check, nullable=_to_binary_nullable)


def _binary_input(types):
    t = types[0]
    if isinstance(t, (T.BinaryType, T.NullType)):
        return (None,)
    if isinstance(t, T.StringType):
        return (BIN,)
    return None


_B32 = "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567"


#: characters left after the last full 8-character block -> (bits dropped, bytes output), as
#: Commons Codec's Base32 at end of input (one character falls through to two's case)
_B32_TAIL = {1: (2, 1), 2: (2, 1), 3: (7, 1), 4: (4, 2), 5: (1, 3), 6: (6, 3), 7: (3, 4)}


def _from_base32_value(v: str) -> bytes:
    """Commons Codec's lenient Base32 decoding (Spark's ``from_base32``): characters outside
    the alphabet are skipped, decoding stops at padding, and a partial last block still gives
    bytes (:data:`_B32_TAIL`)."""
    vals = []
    for ch in v.upper():
        if ch == "=":
            break
        k = _B32.find(ch)
        if k >= 0:
            vals.append(k)
    out = bytearray()
    full = len(vals) // 8 * 8
    for i in range(0, full, 8):
        word = 0
        for k in vals[i:i + 8]:
            word = word << 5 | k
        out += word.to_bytes(5, "big")
    rest = vals[full:]
    if rest:
        word = 0
        for k in rest:
            word = word << 5 | k
        drop, nbytes = _B32_TAIL[len(rest)]
        out += ((word >> drop) & ((1 << 8 * nbytes) - 1)).to_bytes(nbytes, "big")
    return bytes(out)


_spec("to_base32", _binary_input, lambda t: S, lambda a, n, b: per_distinct(
    [a[0].cast(pa.binary())], lambda v: base64.b32encode(v).decode("ascii"), pa.string()),
    expected='"BINARY"', nullable=nullable_from_arguments)
_spec("from_base32", _strs, lambda t: BIN, lambda a, n, b: per_distinct(
    [a[0]], _from_base32_value, pa.binary()), nullable=nullable_from_arguments)

_HMAC = {"SHA-256": "sha256", "SHA256": "sha256", "SHA-384": "sha384", "SHA384": "sha384",
         "SHA-512": "sha512", "SHA512": "sha512", "SHA-224": "sha224", "SHA224": "sha224",
         "SHA-1": "sha1", "SHA1": "sha1", "MD5": "md5"}


def _hmac_kernel(a, node, b):
    def one(key: bytes, msg: bytes, alg: str) -> bytes:
        name = _HMAC.get(alg.upper())
        if name is None:
            raise ExecutionError(
                "The value of parameter(s) `algorithm` in `hmac` is invalid: expects one of the "
                "algorithms 'SHA-224', 'SHA-256', 'SHA-384', 'SHA-512', 'SHA-1', 'MD5', but got "
                f"'{alg}'.", error_class="INVALID_PARAMETER_VALUE.HMAC_ALGORITHM",
                parameters={"parameter": "`algorithm`", "functionName": "`hmac`",
                            "invalidValue": f"'{alg}'"})
        if not key:
            raise ExecutionError(
                "The value of parameter(s) `key` in `hmac` is invalid: detail message: Empty key",
                error_class="INVALID_PARAMETER_VALUE.HMAC_CRYPTO_ERROR",
                parameters={"parameter": "`key`", "functionName": "`hmac`",
                            "detailMessage": "Empty key"})
        return _hmac.new(key, msg, getattr(hashlib, name)).digest()
    return per_distinct([a[0].cast(pa.binary()), a[1].cast(pa.binary()), a[2]], one,
                        pa.binary())


_spec("hmac", lambda t: (BIN, BIN, S), lambda t: BIN, _hmac_kernel, may_fail=True)


# -- mask -------------------------------------------------------------------------------------

_MASK_PARAMS = ("upperChar", "lowerChar", "digitChar", "otherChar")


def _mask_check(node) -> str | None:
    for name, e in zip(_MASK_PARAMS, node.arguments[1:]):
        if not is_foldable(e):
            return _non_foldable(name, e)
        v = _constant(e)
        if v is not None and len(v) != 1:
            return TypeCheckFailure(f"Length of {name} should be 1.", "INPUT_SIZE_NOT_ONE",
                                    {"exprName": name})
    return None


def _mask_kernel(a, node, b):
    up, lo, dg, ot = (_constant(e) for e in node.arguments[1:])

    def one(v: str) -> str:
        out = []
        for ch in v:
            if ch.isupper() and up is not None:
                out.append(up)
            elif ch.islower() and lo is not None:
                out.append(lo)
            elif ch.isdigit() and dg is not None:
                out.append(dg)
            elif not (ch.isupper() or ch.islower() or ch.isdigit()) and ot is not None:
                out.append(ot)
            else:
                out.append(ch)
        return "".join(out)
    return per_distinct([a[0]], one, pa.string())


_spec("mask", _strs, lambda t: S, _mask_kernel, null_intolerant=False, check=_mask_check)


def _mask_node(name, a):
    """``mask(s[, upper[, lower[, digit[, other]]]])`` with Spark's defaults shown."""
    defaults = (Literal("X", S), Literal("x", S), Literal("n", S), Literal(None, S))
    return ScalarFunction(name, tuple(a) + defaults[len(a) - 1:], "mask")


# -- parse_url / try_parse_url: java.net.URI ---------------------------------------------------

_URI_OK = re.compile(r"^(?:[A-Za-z0-9\-_.!~*'();/?:@&=+$,\[\]]|%[0-9A-Fa-f]{2}|[^\x00-\x7f])*$")
_SCHEME = re.compile(r"^[A-Za-z][A-Za-z0-9+\-.]*$")
_LABEL = r"[A-Za-z0-9](?:[A-Za-z0-9\-]*[A-Za-z0-9])?"
#: java.net.URI's server-based host: an IPv4 address, an IPv6 reference, or labels of
#: alphanumerics and inner dashes (a dotted name's last label starting with a letter)
_HOST = re.compile(rf"^(?:{_LABEL}|(?:{_LABEL}\.)+[A-Za-z](?:[A-Za-z0-9\-]*[A-Za-z0-9])?"
                   rf"|{_LABEL}\.|(?:{_LABEL}\.)+[A-Za-z](?:[A-Za-z0-9\-]*[A-Za-z0-9])?\."
                   r"|\d{1,3}\.\d{1,3}\.\d{1,3}\.\d{1,3}|\[[0-9A-Fa-f:.]+\])$")
_PARTS = ("HOST", "PATH", "QUERY", "REF", "PROTOCOL", "FILE", "AUTHORITY", "USERINFO")


def _parse_uri(url: str) -> dict[str, str | None] | None:
    """The raw components of ``java.net.URI(url)`` (None: the URI is invalid)."""
    frag = None
    if "#" in url:
        url, frag = url.split("#", 1)
        if "#" in frag or not _URI_OK.match(frag):
            return None
    if not _URI_OK.match(url):
        return None
    scheme = None
    m = re.match(r"^([^:/?#]+):", url)
    if m:
        if not _SCHEME.match(m.group(1)):
            return None
        scheme, url = m.group(1), url[m.end():]
        if not url.startswith("/"):
            if not url and frag is None:
                return None
            return {"PROTOCOL": scheme, "REF": frag, "PATH": None, "QUERY": None,
                    "HOST": None, "AUTHORITY": None, "USERINFO": None, "FILE": None}
    authority = host = userinfo = None
    query = None
    if "?" in url:
        url, query = url.split("?", 1)
    if url.startswith("//"):
        rest = url[2:]
        cut = rest.find("/")
        authority, path = (rest, "") if cut < 0 else (rest[:cut], rest[cut:])
        if authority == "":
            if not path and query is None and frag is None:
                return None  # "Expected authority"
            authority = None
        else:
            ui, at, hp = authority.rpartition("@")
            hm = re.match(r"^(\[[^\]]*\]|[^:]*)(?::(\d*))?$", hp)
            if hm and _HOST.match(hm.group(1)):
                host = hm.group(1)
                userinfo = ui if at else None
            elif hm is None and hp.startswith("["):
                return None
    else:
        path = url
    return {"PROTOCOL": scheme, "REF": frag, "PATH": path, "QUERY": query, "HOST": host,
            "AUTHORITY": authority, "USERINFO": userinfo,
            "FILE": path + ("?" + query if query is not None else "")}


def _parse_url_kernel(a, node, b):
    fail = node.key == "parse_url" and node.ansi_mode

    def one(url: str, part: str, key: str | None = None) -> str | None:
        if part not in _PARTS:
            return None
        parsed = _parse_uri(url)
        if parsed is None:
            if fail:
                raise ExecutionError(
                    f"The url is invalid: {url}. Use `try_parse_url` to tolerate invalid URL "
                    "and return NULL instead.", error_class="INVALID_URL",
                    parameters={"url": url, "ansiConfig": '"spark.sql.ansi.enabled"'})
            return None
        if len(a) == 3:
            if part != "QUERY" or parsed["QUERY"] is None:
                return None
            m = re.search(r"(&|^)" + re.escape(key) + r"=([^&]*)", parsed["QUERY"])
            return m.group(2) if m else None
        return parsed[part]
    return per_distinct(list(a), one, pa.string())


_spec("parse_url", _strs, lambda t: S, _parse_url_kernel, may_fail=True, ansi_aware=True)
_spec("try_parse_url", _strs, lambda t: S, _parse_url_kernel)


# -- jaro_winkler_similarity ------------------------------------------------------------------


def jaro_winkler(left: str, right: str) -> float:
    """Jaro-Winkler similarity over UTF-16 code units (Java chars), as Spark's
    JaroWinklerSimilarity: matching window ``max(len) / 2 - 1``, prefix of up to 4."""
    if left == right:
        return 1.0
    a = left.encode("utf-16-le")
    b = right.encode("utf-16-le")
    first = [a[i] | a[i + 1] << 8 for i in range(0, len(a), 2)]
    second = [b[i] | b[i + 1] << 8 for i in range(0, len(b), 2)]
    mx, mn = (first, second) if len(first) > len(second) else (second, first)
    rng = max(len(mx) // 2 - 1, 0)
    match_idx = [-1] * len(mn)
    flags = [False] * len(mx)
    matches = 0
    for mi, c1 in enumerate(mn):
        for xi in range(max(mi - rng, 0), min(mi + rng + 1, len(mx))):
            if not flags[xi] and c1 == mx[xi]:
                match_idx[mi] = xi
                flags[xi] = True
                matches += 1
                break
    if matches == 0:
        return 0.0
    ms1 = [c for c, k in zip(mn, match_idx) if k != -1]
    ms2 = [c for c, f in zip(mx, flags) if f]
    transpositions = sum(x != y for x, y in zip(ms1, ms2))
    prefix = 0
    for mi in range(min(4, len(mn))):
        if first[mi] != second[mi]:
            break
        prefix += 1
    m = float(matches)
    j = (m / len(first) + m / len(second) + (m - transpositions / 2) / m) / 3
    # Spark applies the prefix boost at every score (Commons Text only from 0.7)
    return j + 0.1 * prefix * (1.0 - j)


_spec("jaro_winkler_similarity", _strs, lambda t: T.DOUBLE, lambda a, n, b: per_distinct(
    list(a), jaro_winkler, pa.float64()))


# -- UTF-8 validation -------------------------------------------------------------------------


def _utf8_input(types):
    return (None,) if isinstance(types[0], (T.BinaryType, T.NullType)) else (S,)


def _raw(arr: pa.Array) -> pa.Array:
    return arr if pa.types.is_binary(arr.type) or pa.types.is_large_binary(arr.type) else \
        arr.cast(pa.binary())


def _invalid_utf8(v: bytes) -> ExecutionError:
    shown = "".join(chr(c) if c < 0x80 else f"\\x{c:02X}" for c in v)
    return ExecutionError(f"Invalid UTF8 byte sequence found in string: {shown}.",
                          error_class="INVALID_UTF8_STRING", parameters={"str": shown})


def _validate(fail: bool):
    def kernel(a, node, b):
        def one(v: bytes) -> str | None:
            try:
                return v.decode("utf-8")
            except UnicodeDecodeError:
                if fail:
                    raise _invalid_utf8(v) from None
                return None
        return per_distinct([_raw(a[0])], one, pa.string())
    return kernel


_spec("is_valid_utf8", _utf8_input, lambda t: T.BOOLEAN, lambda a, n, b: per_distinct(
    [_raw(a[0])], lambda v: _is_utf8(v), pa.bool_()))
_spec("make_valid_utf8", _utf8_input, lambda t: S, lambda a, n, b: per_distinct(
    [_raw(a[0])], lambda v: v.decode("utf-8", errors="replace"), pa.string()))
_spec("validate_utf8", _utf8_input, lambda t: S, _validate(True), may_fail=True)
_spec("try_validate_utf8", _utf8_input, lambda t: S, _validate(False))


def _is_utf8(v: bytes) -> bool:
    try:
        v.decode("utf-8")
        return True
    except UnicodeDecodeError:
        return False


# -- the registry's table ---------------------------------------------------------------------


def _hmac_node(name, a):
    extra = (Literal("SHA-256", S),) if len(a) == 2 else ()
    return ScalarFunction(name, tuple(a) + extra, "hmac")


def _plain(name, a):
    return ScalarFunction(name, tuple(a), name)


def _printf(name, a):
    return ScalarFunction(name, tuple(a), "format_string")


#: SQL name -> (min args, max args, builder(name, args))
TEXT_FUNCTIONS: dict[str, tuple[int, int, Callable]] = {
    "format_string": (1, 1 << 20, _printf), "printf": (1, 1 << 20, _printf),
    "conv": (3, 3, _plain), "to_binary": (1, 2, _plain), "try_to_binary": (1, 2, _plain),
    "to_base32": (1, 1, _plain), "from_base32": (1, 1, _plain), "hmac": (2, 3, _hmac_node),
    "mask": (1, 5, _mask_node), "parse_url": (2, 3, _plain), "try_parse_url": (2, 3, _plain),
    "jaro_winkler_similarity": (2, 2, _plain), "is_valid_utf8": (1, 1, _plain),
    "make_valid_utf8": (1, 1, _plain), "validate_utf8": (1, 1, _plain),
    "try_validate_utf8": (1, 1, _plain),
}


def build_text_function(name: str, args: tuple[Expression, ...]) -> Expression:
    return TEXT_FUNCTIONS[name][2](name, args)
