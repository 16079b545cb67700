"""Math functions: round, floor/ceil, sqrt, exp, ln/log/log10, pow, sign.

Typing follows Spark: ``round`` keeps its input type (a decimal gets scale ``d``), ``floor``/``ceil``
of double (and of int/smallint/tinyint, first cast to double) are bigint, of bigint bigint, of
decimal(p,s) decimal(p-s+1,0); everything else is double.  ``ln``/``log`` of a non-positive
value is NULL; ``round`` is HALF_UP.
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from ember import types as T
from ember.expressions import decimals as D
from ember.expressions.base import Literal
from ember.expressions.misc import FunctionSpec, register
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


def _round_kernel(a, node, b):
    t = node.arguments[0].data_type
    d = _round_scale(node)
    out_t = _round_result_for(t, d)
    arr = a[0]
    if isinstance(t, T.DecimalType):
        v, valid = D.unscaled(arr)
        if d < t.scale:
            step = D.rescale(v, t.scale, d)  # HALF_UP at scale d
            v = D.rescale(step, d, out_t.scale) if d >= 0 else step * (10 ** (-d))
        return D.from_unscaled(v, valid, out_t)
    if t.is_integral:
        if d >= 0:
            return arr
        v = pc.fill_null(arr.cast(pa.int64()), 0).to_numpy(zero_copy_only=False).astype(object)
        valid = arr.is_valid().to_numpy(zero_copy_only=False)
        r = D.div_half_up(v, 10 ** (-d)) * (10 ** (-d))
        info = np.iinfo(arr.type.to_pandas_dtype())
        if not node.ansi:  # legacy: the value wraps to the input type (Java's narrowing)
            r = ((r + (1 << 63)) % (1 << 64)) - (1 << 63)
            return pa.array(np.where(valid, r, 0).astype(np.int64), mask=~valid).cast(
                arr.type, safe=False)
        if (valid & ((r > info.max) | (r < info.min))).any():
            raise overflow_error()
        return pa.array(r.astype(np.int64), mask=~valid).cast(arr.type)
    vals, valid = _np(arr)
    return pa.array(_round_half_up_float(vals, d), mask=~valid).cast(arr.type)


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
