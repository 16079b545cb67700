"""Math functions: round, floor/ceil, sqrt, exp, ln/log/log10, pow, sign.

Typing follows Spark: ``round`` keeps its input type (a decimal gets scale ``d``), ``floor``/``ceil``
of double (and of int/smallint/tinyint, first cast to double) are bigint, of bigint bigint, of
decimal(p,s) decimal(p-s+1,0); everything else is double.  ``ln``/``log`` of a non-positive
value is NULL; ``round`` is HALF_UP.
"""

from __future__ import annotations

from decimal import ROUND_HALF_EVEN, Decimal

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from ember import types as T
from ember.expressions import decimals as D
from ember.errors import ExecutionError
from ember.expressions.base import Literal
from ember.expressions.misc import FunctionSpec, ScalarFunction, register
from ember.expressions.utf8_kernels import Utf8, all_valid
from ember.expressions.utf8_kernels import assemble as K_assemble
from ember.trees import node
from ember.expressions.arithmetic import overflow_error

DBL = T.DOUBLE


def _np(arr: pa.Array) -> tuple[np.ndarray, np.ndarray]:
    valid = arr.is_valid().to_numpy(zero_copy_only=False) if arr.null_count else \
        np.ones(len(arr), dtype=bool)
    vals = pc.fill_null(arr.cast(pa.float64()), 0.0).to_numpy(zero_copy_only=False)
    return vals, valid


def _doubles(n):
    def inputs(types):
        if not all(t.is_numeric or isinstance(t, (T.NullType, T.StringType)) for t in types):
            return None
        return (DBL,) * n if len(types) == n else (DBL,) * len(types)
    return inputs


def _unary(key, fn, null_if=None):
    def kernel(a, node, b):
        vals, valid = _np(a[0])
        with np.errstate(all="ignore"):
            out = fn(vals)
        if null_if is not None:
            valid = valid & ~null_if(vals)
        return pa.array(out, type=pa.float64(), mask=~valid)
    register(FunctionSpec(key, _doubles(1), lambda t: DBL, kernel, expected='"DOUBLE"'))


_unary("sqrt", np.sqrt)
_unary("exp", np.exp)
_unary("ln", np.log, null_if=lambda v: v <= 0)
_unary("log10", np.log10, null_if=lambda v: v <= 0)
_unary("log2", np.log2, null_if=lambda v: v <= 0)
_unary("sign", np.sign)
_unary("cbrt", np.cbrt)


def _log(a, node, b):
    base, vb = _np(a[0])
    x, vx = _np(a[1])
    with np.errstate(all="ignore"):
        out = np.log(x) / np.log(base)
    valid = vb & vx & (x > 0) & (base > 0)
    return pa.array(out, type=pa.float64(), mask=~valid)


register(FunctionSpec("log", _doubles(2), lambda t: DBL, _log, expected='"DOUBLE"'))


def _pow(a, node, b):
    x, vx = _np(a[0])
    y, vy = _np(a[1])
    with np.errstate(all="ignore"):
        out = np.power(x, y)
        # Java's Math.pow: pow(+-1, NaN or +-Infinity) is NaN (numpy says 1.0).
        out = np.where((np.abs(x) == 1.0) & ~np.isfinite(y), np.nan, out)
    return pa.array(out, type=pa.float64(), mask=~(vx & vy))


register(FunctionSpec("pow", _doubles(2), lambda t: DBL, _pow, expected='"DOUBLE"'))


# -- floor / ceil -------------------------------------------------------------------------------


def _floor_inputs(types):
    t = types[0]
    if isinstance(t, (T.LongType, T.DecimalType)):
        return (None,)
    if t.is_numeric or isinstance(t, (T.StringType, T.NullType)):
        return (DBL,)
    return None


def _floor_result(types):
    t = types[0]
    if isinstance(t, T.DecimalType):
        if t.scale == 0:  # Spark keeps a scale-0 decimal as it is: ceil(decimal(10,0))
            return t
        return T.DecimalType(min(t.precision - t.scale + 1, 38), 0)
    return T.LONG


def _floor_kernel(up: bool):
    def k(a, node, b):
        arr = a[0]
        t = node.arguments[0].data_type
        if isinstance(t, T.DecimalType):
            v, valid = D.unscaled(arr)
            f = 10 ** t.scale
            q = v // f  # floor for Python ints
            if up:
                q = np.where(q * f != v, q + 1, q)
            out_t = _floor_result((t,))
            return D.from_unscaled(q, valid, out_t)
        if isinstance(t, T.LongType):
            return arr
        vals, valid = _np(arr)
        with np.errstate(all="ignore"):
            r = np.ceil(vals) if up else np.floor(vals)
            # ANSI: a double outside [-2^63, 2^63] overflows (NaN is 0, as Java's (long) NaN);
            # legacy: Java's saturating (long) conversion.
            if node.ansi and (valid & ((r >= 2.0 ** 63) | (r < -(2.0 ** 63)))).any():
                raise overflow_error()
            r = np.nan_to_num(r, nan=0.0, posinf=2.0 ** 63, neginf=-(2.0 ** 63))
            hi, lo = r >= 2.0 ** 63, r < -(2.0 ** 63)
            out = np.where(hi | lo, 0.0, r).astype(np.int64)
        out = np.where(hi, np.iinfo(np.int64).max, np.where(lo, np.iinfo(np.int64).min, out))
        return pa.array(out, mask=~valid)
    return k


register(FunctionSpec("floor", _floor_inputs, _floor_result, _floor_kernel(False),
                      may_fail=True, expected='("DOUBLE" or "DECIMAL")', ansi_aware=True))
register(FunctionSpec("ceil", _floor_inputs, _floor_result, _floor_kernel(True),
                      may_fail=True, expected='("DOUBLE" or "DECIMAL")', ansi_aware=True))


# -- round --------------------------------------------------------------------------------------


def _round_scale(node) -> int:
    if len(node.arguments) < 2:
        return 0
    s = node.arguments[1]
    return int(s.value) if isinstance(s, Literal) and s.value is not None else 0


def _round_inputs(types):
    t = types[0]
    if not (t.is_numeric or isinstance(t, T.NullType)):
        return None
    return (None, T.INT)[: len(types)]


def _round_result_for(t: T.DataType, d: int) -> T.DataType:
    if isinstance(t, T.DecimalType):
        # Spark's RoundBase: one more integral digit for the carry (ceil(9.9) = 10).
        integral = t.precision - t.scale + 1
        if d < 0:
            return T.DecimalType(min(max(integral, -d + 1), 38), 0)
        new_scale = min(t.scale, d)
        return T.DecimalType(min(integral + new_scale, 38), new_scale)
    if isinstance(t, T.NullType):
        return T.DOUBLE
    return t


def _round_half_up_float(vals: np.ndarray, d: int) -> np.ndarray:
    """HALF_UP like Spark's ``BigDecimal(x.toDouble).setScale(d)``: the *shortest decimal* of the
    double is rounded, so ``round(1.005D, 2)`` is 1.01.  Only values whose scaled fraction is
    within 1e-6 of .5 (rare) are redone exactly with :class:`decimal.Decimal`."""
    f = 10.0 ** d
    with np.errstate(all="ignore"):
        scaled = np.abs(vals) * f
        # + 0.0: BigDecimal has no negative zero (round(-3.7D, -1) is 0.0, not -0.0)
        out = np.sign(vals) * np.floor(scaled + 0.5) / f + 0.0
        near_half = np.isfinite(scaled) & (np.abs(scaled - np.floor(scaled) - 0.5) < 1e-6)
    if near_half.any():
        from decimal import ROUND_HALF_UP, Decimal

        q = Decimal(1).scaleb(-d)
        for i in np.flatnonzero(near_half):
            out[i] = float(Decimal(repr(float(vals[i]))).quantize(q, rounding=ROUND_HALF_UP))
    return np.where(np.isfinite(vals) & np.isfinite(scaled), out, vals)


def _rounding_kernel(divide, round_float):
    """The kernel of ``round`` (``divide`` = :func:`ember.expressions.decimals.div_half_up`) or
    ``bround`` (HALF_EVEN): ``divide(v, 10 ** k)`` rounds unscaled decimals and integers,
    ``round_float(vals, d)`` floating-point values."""

    def kernel(a, node, b):
        t = node.arguments[0].data_type
        d = _round_scale(node)
        out_t = _round_result_for(t, d)
        arr = a[0]
        if isinstance(t, T.DecimalType):
            v, valid = D.unscaled(arr)
            if d < t.scale:
                step = divide(v, 10 ** (t.scale - d))
                v = step * (10 ** (out_t.scale - d)) if d >= 0 else step * (10 ** (-d))
            return D.from_unscaled(v, valid, out_t)
        if t.is_integral:
            if d >= 0:
                return arr
            v = pc.fill_null(arr.cast(pa.int64()), 0).to_numpy(zero_copy_only=False).astype(object)
            valid = arr.is_valid().to_numpy(zero_copy_only=False)
            r = divide(v, 10 ** (-d)) * (10 ** (-d))
            info = np.iinfo(arr.type.to_pandas_dtype())
            if not node.ansi:  # legacy: the value wraps to the input type (Java's narrowing)
                r = ((r + (1 << 63)) % (1 << 64)) - (1 << 63)
                return pa.array(np.where(valid, r, 0).astype(np.int64), mask=~valid).cast(
                    arr.type, safe=False)
            if (valid & ((r > info.max) | (r < info.min))).any():
                raise overflow_error()
            return pa.array(r.astype(np.int64), mask=~valid).cast(arr.type)
        vals, valid = _np(arr)
        return pa.array(round_float(vals, d), mask=~valid).cast(arr.type)

    return kernel


_round_kernel = _rounding_kernel(D.div_half_up, _round_half_up_float)


register(FunctionSpec("round", _round_inputs, lambda t: t[0], _round_kernel, may_fail=True,
                      ansi_aware=True,
                      node_result=lambda n: _round_result_for(n.arguments[0].data_type,
                                                              _round_scale(n))))

#: name -> (spec key, display name, min args, max args)
MATH_FUNCTIONS: dict[str, tuple[str, str, int, int]] = {
    "sqrt": ("sqrt", "SQRT", 1, 1), "exp": ("exp", "EXP", 1, 1), "ln": ("ln", "ln", 1, 1),
    "log10": ("log10", "LOG10", 1, 1), "log2": ("log2", "LOG2", 1, 1),
    "cbrt": ("cbrt", "CBRT", 1, 1),
    "log": ("log", "LOG", 1, 2), "pow": ("pow", "pow", 2, 2), "power": ("pow", "POWER", 2, 2),
    "sign": ("sign", "sign", 1, 1), "signum": ("sign", "SIGNUM", 1, 1),
    "floor": ("floor", "FLOOR", 1, 1), "ceil": ("ceil", "CEIL", 1, 1),
    "ceiling": ("ceil", "ceiling", 1, 1), "round": ("round", "round", 1, 2),
}


# -- trigonometric, hyperbolic and other DOUBLE functions (Spark's UnaryMathExpression) ------
# Java's Math returns NaN outside a function's domain (``acos(2)``); the ``UnaryLogExpression``
# ``log1p`` is NULL at or below its asymptote -1, as ``ln`` is at 0.

_DEG = 57.29577951308232  # Java's Math.toDegrees factor
_RAD = 0.017453292519943295  # Java's Math.toRadians factor
for _key, _fn, _null_if in [
    ("acos", np.arccos, None), ("asin", np.arcsin, None), ("atan", np.arctan, None),
    ("cos", np.cos, None), ("sin", np.sin, None), ("tan", np.tan, None),
    ("cosh", np.cosh, None), ("sinh", np.sinh, None), ("tanh", np.tanh, None),
    ("acosh", np.arccosh, None), ("asinh", np.arcsinh, None), ("atanh", np.arctanh, None),
    ("cot", lambda v: 1.0 / np.tan(v), None), ("sec", lambda v: 1.0 / np.cos(v), None),
    ("csc", lambda v: 1.0 / np.sin(v), None), ("degrees", lambda v: v * _DEG, None),
    ("radians", lambda v: v * _RAD, None), ("expm1", np.expm1, None),
    ("log1p", np.log1p, lambda v: v <= -1.0), ("rint", np.rint, None),
]:
    _unary(_key, _fn, _null_if)


def _binary_double(fn):
    def kernel(a, node, b):
        x, vx = _np(a[0])
        y, vy = _np(a[1])
        with np.errstate(all="ignore"):
            out = fn(x + 0.0, y + 0.0)
        return pa.array(out, type=pa.float64(), mask=~(vx & vy))
    return kernel


register(FunctionSpec("atan2", _doubles(2), lambda t: DBL, _binary_double(np.arctan2),
                      expected='"DOUBLE"'))
register(FunctionSpec("hypot", _doubles(2), lambda t: DBL, _binary_double(np.hypot),
                      expected='"DOUBLE"'))


# -- bround: round HALF_EVEN (Spark's BRound) ----------------------------------------------------


def _div_half_even(num: np.ndarray, den: int) -> np.ndarray:
    """``num / den`` (Python ints, ``den > 0``) rounded HALF_EVEN."""
    q, r = num // den, num % den  # floor division: 0 <= r < den (object arrays too)
    twice = r * 2
    up = (twice > den) | ((twice == den) & (q % 2 == 1))
    return np.where(up, q + 1, q)


def _bround_float(vals: np.ndarray, d: int) -> np.ndarray:
    """HALF_EVEN of the double's shortest decimal (Spark's ``BigDecimal(x).setScale(d,
    HALF_EVEN)``); values within 1e-6 of a half are redone with :mod:`decimal`."""
    f = 10.0 ** d
    with np.errstate(all="ignore"):
        scaled = vals * f
        out = np.rint(scaled) / f + 0.0
        near_half = np.isfinite(scaled) & (np.abs(np.abs(scaled) - np.floor(np.abs(scaled))
                                                  - 0.5) < 1e-6)
    if near_half.any():
        q = Decimal(1).scaleb(-d)
        for i in np.flatnonzero(near_half):  # only the rare near-half values
            out[i] = float(Decimal(repr(float(vals[i]))).quantize(q, rounding=ROUND_HALF_EVEN))
    return np.where(np.isfinite(vals) & np.isfinite(scaled), out, vals)


_bround_kernel = _rounding_kernel(_div_half_even, _bround_float)


register(FunctionSpec("bround", _round_inputs, lambda t: t[0], _bround_kernel, may_fail=True,
                      ansi_aware=True,
                      node_result=lambda n: _round_result_for(n.arguments[0].data_type,
                                                              _round_scale(n))))


# -- factorial, width_bucket ------------------------------------------------------------------

_FACTORIALS = np.array([1] + list(np.cumprod(np.arange(1, 21, dtype=np.int64))), dtype=np.int64)


def _factorial(a, node, b):
    """``factorial(n)`` for 0 <= n <= 20, else NULL (Spark's Factorial)."""
    v = pc.fill_null(a[0].cast(pa.int64()), -1).to_numpy(zero_copy_only=False)
    ok = (v >= 0) & (v <= 20)
    return pa.array(_FACTORIALS[np.where(ok, v, 0)], type=pa.int64(), mask=~ok)


register(FunctionSpec("factorial", lambda t: (T.INT,) if all(
    x.is_integral or isinstance(x, (T.NullType, T.StringType)) for x in t) else None,
    lambda t: T.LONG, _factorial, expected='"INT"'))


def _width_bucket(a, node, b):
    """Spark's WidthBucket: the bucket (1..n) of ``v`` among ``n`` equal buckets of
    ``[min, max)`` (or ``(max, min]`` when ``min > max``), 0 below, ``n + 1`` above; NULL for
    ``n <= 0``, ``n = Long.MaxValue``, ``min = max`` or a NaN / infinite bound or NaN value."""
    v, vv = _np(a[0])
    lo, vl = _np(a[1])
    hi, vh = _np(a[2])
    nb = pc.fill_null(a[3].cast(pa.int64()), 0).to_numpy(zero_copy_only=False)
    valid = vv & vl & vh & a[3].is_valid().to_numpy(zero_copy_only=False)
    valid &= (nb > 0) & (nb != np.iinfo(np.int64).max) & ~np.isnan(v) & (lo != hi)
    valid &= np.isfinite(lo) & np.isfinite(hi)
    lower, upper = np.minimum(lo, hi), np.maximum(lo, hi)
    with np.errstate(all="ignore"):
        asc = np.where(v < lower, 0, np.where(v >= upper, nb + 1, np.trunc(
            nb.astype(np.float64) * (v - lower) / (upper - lower)) + 1))
        desc = np.where(v > upper, 0, np.where(v <= lower, nb + 1, np.trunc(
            nb.astype(np.float64) * (upper - v) / (upper - lower)) + 1))
        out = np.where(lo < hi, asc, desc)
    out = np.where(valid, out, 0).astype(np.int64)
    return pa.array(out, type=pa.int64(), mask=~valid)


register(FunctionSpec("width_bucket", lambda t: (DBL, DBL, DBL, T.LONG) if all(
    x.is_numeric or isinstance(x, T.NullType) for x in t) else None,
    lambda t: T.LONG, _width_bucket, null_intolerant=False, expected='"DOUBLE"'))


# -- NaN handling --------------------------------------------------------------------------------


def _isnan(a, node, b):
    vals, valid = _np(a[0])
    return pa.array(valid & np.isnan(vals), type=pa.bool_())


def _nanvl(a, node, b):
    x = a[0]
    return pc.if_else(pc.fill_null(pc.is_nan(x.cast(pa.float64())), False), a[1], x)


def _float_args(types):
    if not all(isinstance(t, (T.DoubleType, T.FloatType, T.NullType)) or t.is_numeric
               for t in types):
        return None
    wide = DBL if any(isinstance(t, T.DoubleType) or (t.is_numeric and not isinstance(
        t, T.FloatType)) for t in types) else T.FLOAT
    return (wide,) * len(types)


register(FunctionSpec("isnan", lambda t: (None,) if isinstance(t[0], (
    T.DoubleType, T.FloatType, T.NullType)) else ((DBL,) if t[0].is_numeric else None),
    lambda t: T.BOOLEAN, _isnan, null_intolerant=False, expected='("DOUBLE" or "FLOAT")',
    nullable=lambda n: False))
register(FunctionSpec("nanvl", _float_args,
                      lambda t: T.FLOAT if all(isinstance(x, T.FloatType) for x in t) else DBL,
                      _nanvl, null_intolerant=False, expected='("DOUBLE" or "FLOAT")'))

MATH_FUNCTIONS.update({
    "acos": ("acos", "ACOS", 1, 1), "asin": ("asin", "ASIN", 1, 1),
    "atan": ("atan", "ATAN", 1, 1), "cos": ("cos", "COS", 1, 1), "sin": ("sin", "SIN", 1, 1),
    "tan": ("tan", "TAN", 1, 1), "cosh": ("cosh", "COSH", 1, 1),
    "sinh": ("sinh", "SINH", 1, 1), "tanh": ("tanh", "TANH", 1, 1),
    "acosh": ("acosh", "ACOSH", 1, 1), "asinh": ("asinh", "ASINH", 1, 1),
    "atanh": ("atanh", "ATANH", 1, 1), "cot": ("cot", "COT", 1, 1),
    "sec": ("sec", "SEC", 1, 1), "csc": ("csc", "CSC", 1, 1),
    "degrees": ("degrees", "DEGREES", 1, 1), "radians": ("radians", "RADIANS", 1, 1),
    "expm1": ("expm1", "EXPM1", 1, 1), "log1p": ("log1p", "LOG1P", 1, 1),
    "rint": ("rint", "rint", 1, 1), "atan2": ("atan2", "ATAN2", 2, 2),
    "hypot": ("hypot", "HYPOT", 2, 2), "factorial": ("factorial", "factorial", 1, 1),
    "width_bucket": ("width_bucket", "width_bucket", 4, 4), "isnan": ("isnan", "isnan", 1, 1),
    "nanvl": ("nanvl", "nanvl", 2, 2),
})


# -- bitwise functions (Spark's ShiftLeft, ShiftRightUnsigned, BitwiseCount, BitwiseGet) --------
# ``shiftright`` over int/bigint is :class:`ember.expressions.bitwise.ShiftRight`'s kernel; the
# shift amount is taken modulo the width, as the JVM's shift operators do.


def _shift_inputs(types):
    t, n = types
    if not (t.is_integral or isinstance(t, T.NullType)) or not (
            n.is_integral or isinstance(n, T.NullType)):
        return None
    return (T.LONG if isinstance(t, T.LongType) else T.INT, T.INT)


def _shift(kind: str):
    def kernel(a, node, b):
        at = a[0].type
        width = 64 if at == pa.int64() else 32
        udt = np.uint64 if width == 64 else np.uint32
        sdt = np.int64 if width == 64 else np.int32
        x = pc.fill_null(a[0], 0).to_numpy(zero_copy_only=False).astype(sdt)
        s = (pc.fill_null(a[1], 0).to_numpy(zero_copy_only=False).astype(np.int64)
             & (width - 1)).astype(udt)
        valid = all_valid(a)
        if kind == "left":
            out = (x.view(udt) << s).view(sdt)
        elif kind == "right":
            out = x >> s.astype(sdt)
        else:
            out = (x.view(udt) >> s).view(sdt)
        return pa.array(out, mask=~valid)
    return kernel


for _key in ("left", "right", "unsigned"):
    register(FunctionSpec(f"shift{_key}", _shift_inputs, lambda t: t[0], _shift(_key),
                          expected='("INT" or "BIGINT")'))


def _bit_count(a, node, b):
    arr = a[0]
    if pa.types.is_boolean(arr.type):
        return pc.cast(arr, pa.int32())
    x = pc.fill_null(arr.cast(pa.int64()), 0).to_numpy(zero_copy_only=False).view(np.uint64)
    counts = np.zeros(len(x), dtype=np.int32)
    for shift in range(0, 64, 8):  # popcount byte by byte (8 vectorized steps)
        counts += _POPCOUNT8[((x >> np.uint64(shift)) & np.uint64(0xFF)).astype(np.intp)]
    return pa.array(counts, mask=~all_valid(a))


_POPCOUNT8 = np.array([bin(i).count("1") for i in range(256)], dtype=np.int32)

register(FunctionSpec("bit_count", lambda t: (None,) if (t[0].is_integral or isinstance(
    t[0], (T.BooleanType, T.NullType))) else None, lambda t: T.INT, _bit_count,
    expected='("INTEGRAL" or "BOOLEAN")'))


def _bit_get(a, node, b):
    arr = a[0]
    width = arr.type.bit_width
    pos = pc.fill_null(a[1].cast(pa.int64()), 0).to_numpy(zero_copy_only=False)
    valid = all_valid(a)
    bad = valid & ((pos < 0) | (pos >= width))
    if bad.any():
        p = int(pos[np.flatnonzero(bad)[0]])
        raise ExecutionError(
            f"The value of parameter(s) `pos` in `{node.fn_name}` is invalid: expects an integer "
            f"value in [0, {width}), but got {p}.",
            error_class="INVALID_PARAMETER_VALUE.BIT_POSITION_RANGE",
            parameters={"parameter": "`pos`", "functionName": f"`{node.fn_name}`",
                        "upper": str(width), "invalidValue": str(p)})
    x = pc.fill_null(arr.cast(pa.int64()), 0).to_numpy(zero_copy_only=False)
    out = ((x >> np.where(valid, pos, 0)) & 1).astype(np.int8)
    return pa.array(out, mask=~valid)


register(FunctionSpec("bit_get", lambda t: (None, T.INT) if (t[0].is_integral or isinstance(
    t[0], T.NullType)) else None, lambda t: T.BYTE, _bit_get, may_fail=True,
    expected='"INTEGRAL"'))


def _bitwise_not(a, node, b):
    return pc.bit_wise_not(a[0])


@node
class BitwiseNot(ScalarFunction):
    """``~a`` (Spark's BitwiseNot), shown without parentheses."""

    def simple_string(self) -> str:
        return f"~{self.arguments[0].simple_string()}"

    def sql(self) -> str:
        return f"~{self.arguments[0].sql()}"


register(FunctionSpec("~", lambda t: (None,) if (t[0].is_integral or isinstance(
    t[0], T.NullType)) else None, lambda t: t[0], _bitwise_not, expected='"INTEGRAL"'))

MATH_FUNCTIONS.update({
    "shiftleft": ("shiftleft", "shiftleft", 2, 2), "shiftright": ("shiftright", "shiftright", 2, 2),
    "shiftrightunsigned": ("shiftunsigned", "shiftrightunsigned", 2, 2),
    "bit_count": ("bit_count", "bit_count", 1, 1), "bit_get": ("bit_get", "bit_get", 2, 2),
    "getbit": ("bit_get", "getbit", 2, 2),
})


# -- hex, unhex, bin (Spark's Hex, Unhex, Bin) ----------------------------------------------------

_HEX_UP = np.frombuffer(b"0123456789ABCDEF", dtype=np.uint8)


def _digits_of_longs(v: np.ndarray, bits: int, valid: np.ndarray) -> pa.Array:
    """Java's ``Long.toHexString`` (``bits`` 4) / ``toBinaryString`` (``bits`` 1), upper case:
    the two's complement digits without leading zeros (``0`` for zero)."""
    u = v.astype(np.int64).view(np.uint64)
    width = 64 // bits
    mask = np.uint64((1 << bits) - 1)
    digits = np.stack([((u >> np.uint64(bits * (width - 1 - k))) & mask).astype(np.intp)
                       for k in range(width)], axis=1)
    nonzero = digits != 0
    lead = np.where(nonzero.any(axis=1), nonzero.argmax(axis=1), width - 1)
    chars = _HEX_UP[digits].ravel()
    n = len(v)
    rows = np.arange(n, dtype=np.int64)
    return K_assemble(chars, rows, rows * width + lead, width - lead, n, valid)


def _hex(a, node, b):
    arr = a[0]
    t = node.arguments[0].data_type
    valid = all_valid(a)
    if t.is_integral or isinstance(t, T.NullType):
        v = pc.fill_null(arr.cast(pa.int64()), 0).to_numpy(zero_copy_only=False)
        return _digits_of_longs(v, 4, valid)
    s = Utf8(arr.cast(pa.large_binary()).view(pa.large_string()))
    pairs = np.stack([_HEX_UP[s.data >> 4], _HEX_UP[s.data & 0x0F]], axis=1).ravel()
    rows = np.arange(s.n, dtype=np.int64)
    return K_assemble(pairs, rows, s.starts * 2, (s.ends - s.starts) * 2, s.n, valid)


register(FunctionSpec("hex", lambda t: (None,) if (t[0].is_integral or isinstance(
    t[0], (T.BinaryType, T.StringType, T.NullType))) else ((T.LONG,) if t[0].is_numeric else None),
    lambda t: T.STRING, _hex, expected='("BIGINT" or "BINARY" or "STRING")'))


def _bin(a, node, b):
    v = pc.fill_null(a[0].cast(pa.int64()), 0).to_numpy(zero_copy_only=False)
    return _digits_of_longs(v, 1, all_valid(a))


register(FunctionSpec("bin", lambda t: (T.LONG,) if (t[0].is_numeric or isinstance(
    t[0], (T.NullType, T.StringType))) else None, lambda t: T.STRING, _bin,
    expected='"BIGINT"'))


def _unhex(a, node, b):
    """Pairs of hex digits to bytes (an odd count gets a leading 0); NULL on a non-hex
    character."""
    s = Utf8(a[0])
    d = s.data.astype(np.int64)
    val = np.where((d >= 48) & (d <= 57), d - 48, np.where(
        (d >= 65) & (d <= 70), d - 55, np.where((d >= 97) & (d <= 102), d - 87, -1)))
    length = s.ends - s.starts
    bad_char = np.zeros(s.n, dtype=bool)
    if len(d):
        row_of = np.repeat(np.arange(s.n), length)
        np.logical_or.at(bad_char, row_of, val < 0)
    odd = length % 2 == 1
    # an odd string is read as if prefixed with '0'
    padded_len = length + odd
    out_len = padded_len // 2
    total = int(out_len.sum())
    orow = np.repeat(np.arange(s.n, dtype=np.int64), out_len)
    ostart = np.repeat(np.cumsum(out_len) - out_len, out_len)
    k = np.arange(total, dtype=np.int64) - ostart
    hi_pos = s.starts[orow] + 2 * k - odd[orow]
    lo_pos = hi_pos + 1
    vpad = np.concatenate([val, [0]])
    hi = np.where(hi_pos < s.starts[orow], 0, vpad[np.maximum(hi_pos, 0)])
    lo = vpad[lo_pos]
    out = ((np.maximum(hi, 0) << 4) | np.maximum(lo, 0)).astype(np.uint8)
    valid = all_valid(a) & ~bad_char
    offsets = np.zeros(s.n + 1, dtype=np.int64)
    np.cumsum(out_len, out=offsets[1:])
    validity = None if valid.all() else pa.array(valid).buffers()[1]
    return pa.Array.from_buffers(pa.large_binary(), s.n, [
        validity, pa.py_buffer(offsets.tobytes()), pa.py_buffer(out.tobytes())])


register(FunctionSpec("unhex", lambda t: (T.STRING,), lambda t: T.BINARY, _unhex))

MATH_FUNCTIONS.update({
    "hex": ("hex", "hex", 1, 1), "bin": ("bin", "bin", 1, 1), "unhex": ("unhex", "unhex", 1, 1),
})
