"""Exact decimal kernels over Arrow ``decimal128`` arrays.

A decimal column is handled as its unscaled integers (``value * 10**scale``) held in a NumPy
object array of Python ints, so that +, -, *, / and rescaling are exact at any precision (Arrow's
decimal kernels use their own result types and truncate instead of rounding HALF_UP, as Spark
does).  The conversion to and from Arrow is vectorized over the raw 128-bit buffer; the integer
arithmetic runs in NumPy's object loops (no per-row Python code in Ember).
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa

from ember import types as T
from ember.errors import ArithmeticError_

_MASK64 = (1 << 64) - 1


def unscaled(arr: pa.Array) -> tuple[np.ndarray, np.ndarray]:
    """``(values, valid)``: the unscaled Python ints of a decimal128 array (0 where NULL) and
    its validity mask."""
    n = len(arr)
    valid = np.ones(n, dtype=bool) if arr.null_count == 0 else \
        arr.is_valid().to_numpy(zero_copy_only=False)
    if n == 0:
        return np.zeros(0, dtype=object), valid
    buf = arr.buffers()[1]
    raw = np.frombuffer(buf, dtype=np.uint64)[arr.offset * 2:(arr.offset + n) * 2]
    lo = raw[0::2].astype(object)
    hi = raw[1::2].view(np.int64).astype(object)
    vals = hi * (1 << 64) + lo
    if not valid.all():
        vals = np.where(valid, vals, 0)
    return vals, valid


def from_unscaled(vals: np.ndarray, valid: np.ndarray, dtype: T.DecimalType,
                  *, check: bool = True, what: str | None = None) -> pa.Array:
    """A decimal128 array of type ``dtype`` from unscaled Python ints.  With ``check``, values
    with more than ``dtype.precision`` digits raise ``NUMERIC_VALUE_OUT_OF_RANGE``."""
    n = len(vals)
    if n and not valid.all():
        vals = np.where(valid, vals, 0)
    if check and n:
        limit = 10 ** dtype.precision
        over = (np.abs(vals) >= limit) & valid
        if over.any():
            bad = vals[np.flatnonzero(over)[0]]
            raise_out_of_range(bad, dtype, what)
    lo = (vals & _MASK64).astype(np.uint64) if n else np.zeros(0, np.uint64)
    hi = (vals >> 64).astype(np.int64).view(np.uint64) if n else np.zeros(0, np.uint64)
    data = np.empty(2 * n, dtype=np.uint64)
    data[0::2] = lo
    data[1::2] = hi
    validity = None if valid.all() else pa.array(valid).buffers()[1]
    return pa.Array.from_buffers(dtype.to_arrow(), n, [validity, pa.py_buffer(data.tobytes())],
                                 null_count=-1 if validity is not None else 0)


def raise_out_of_range(unscaled_value: int, dtype: T.DecimalType, what: str | None = None) -> None:
    from decimal import Decimal

    v = Decimal(int(unscaled_value)).scaleb(-dtype.scale)
    raise ArithmeticError_(
        f"{what or v} cannot be represented as Decimal({dtype.precision}, {dtype.scale}). "
        'If necessary set "spark.sql.ansi.enabled" to "false" to bypass this error, and return '
        "NULL instead.",
        error_class="NUMERIC_VALUE_OUT_OF_RANGE.WITH_SUGGESTION",
        parameters={"value": str(v), "precision": str(dtype.precision),
                    "scale": str(dtype.scale), "config": '"spark.sql.ansi.enabled"'},
    )


def div_half_up(num: np.ndarray, den: np.ndarray | int) -> np.ndarray:
    """``num / den`` rounded HALF_UP (away from zero at .5), elementwise on Python ints."""
    if isinstance(den, int):
        den_arr: np.ndarray | int = den
        neg = num < 0
        if den < 0:
            neg = ~neg
        a, b = np.abs(num), abs(den)
    else:
        den_arr = den
        neg = (num < 0) ^ (den_arr < 0)
        a, b = np.abs(num), np.abs(den_arr)
    q = (a * 2 + b) // (b * 2)
    return np.where(neg, -q, q)


def rescale(vals: np.ndarray, from_scale: int, to_scale: int) -> np.ndarray:
    """Unscaled ints at ``from_scale`` moved to ``to_scale`` (rounding HALF_UP when reducing)."""
    if to_scale == from_scale:
        return vals
    if to_scale > from_scale:
        return vals * (10 ** (to_scale - from_scale))
    return div_half_up(vals, 10 ** (from_scale - to_scale))


def to_float(vals: np.ndarray, scale: int) -> np.ndarray:
    """Unscaled ints as float64 (correctly rounded for each value)."""
    if len(vals) == 0:
        return np.zeros(0)
    out = (vals / (10 ** scale)) if scale else vals
    return np.asarray(out, dtype=np.float64)


_ARROW_OPS = {"+": "add", "-": "subtract", "*": "multiply"}


def arrow_binary(op: str, left: pa.Array, right: pa.Array, out: T.DecimalType) -> pa.Array | None:
    """``left op right`` (``op`` in ``+ - *``) as ``out`` via Arrow's decimal128 kernels, when
    Arrow's exact result type (``+ -``: ``max(p1-s1, p2-s2) + max(s1, s2) + 1`` digits, ``*``:
    ``p1 + p2 + 1``) fits 38 digits; rounded HALF_UP (Arrow's ``half_towards_infinity``) to
    ``out.scale``.  ``None`` when not applicable or out of range, so that callers take the
    Python-int path (which raises Spark's error)."""
    lt, rt = left.type, right.type
    if not (pa.types.is_decimal128(lt) and pa.types.is_decimal128(rt)):
        return None
    if op == "*":
        p, s = lt.precision + rt.precision + 1, lt.scale + rt.scale
    else:
        s = max(lt.scale, rt.scale)
        p = max(lt.precision - lt.scale, rt.precision - rt.scale) + s + 1
    if p > 38:
        return None
    import pyarrow.compute as pc

    try:
        res = getattr(pc, _ARROW_OPS[op])(left, right)
        if res.type != pa.decimal128(p, s):
            return None
        if out.scale < s:
            res = pc.round(res.cast(pa.decimal128(38, s)), ndigits=out.scale,
                           round_mode="half_towards_infinity")
        return res.cast(out.to_arrow())
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
        return None
