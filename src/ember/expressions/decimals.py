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
                  *, check: bool = True, what: str | None = None,
                  overflow_null: bool = False) -> pa.Array:
    """A decimal128 array of type ``dtype`` from unscaled values (Python ints, or an int64 array
    whose high words are its sign).  With ``check``, values with more than ``dtype.precision``
    digits raise ``NUMERIC_VALUE_OUT_OF_RANGE`` (are NULL with ``overflow_null``: Spark's legacy
    ``Decimal.toPrecision`` with ``nullOnOverflow``)."""
    n = len(vals)
    if n and not valid.all():
        vals = np.where(valid, vals, 0)
    if check and n:
        limit = 10 ** dtype.precision
        over = (np.abs(vals) >= limit) & valid
        if over.any() and overflow_null:
            valid = valid & ~over
            vals = np.where(valid, vals, 0)
        elif over.any():
            bad = vals[np.flatnonzero(over)[0]]
            raise_out_of_range(bad, dtype, what)
    if vals.dtype == np.int64:
        lo, hi = vals.view(np.uint64), (vals >> 63).view(np.uint64)
    else:
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


_I64_MAX = (1 << 63) - 1


def int64_unscaled(arr: pa.Array) -> np.ndarray | None:
    """The unscaled values of a decimal128 array as an int64 view (NULL slots arbitrary), or
    None when some slot does not fit in 64 bits."""
    if not pa.types.is_decimal128(arr.type) or len(arr) == 0:
        return None
    words = np.frombuffer(arr.buffers()[1], dtype=np.int64,
                          count=2 * (arr.offset + len(arr)))[2 * arr.offset:].reshape(-1, 2)
    lo = words[:, 0]
    if not np.array_equal(words[:, 1], lo >> 63):
        return None
    return lo


def int64_multiply(left: pa.Array, right: pa.Array, out: T.DecimalType) -> pa.Array | None:
    """``left * right`` as ``out`` in int64 arithmetic (rounded HALF_UP to ``out.scale``) when
    the operands' magnitudes prove that no product overflows and every result fits ``out``;
    None otherwise (callers take the exact Python-int path, which raises Spark's errors)."""
    lv, rv = int64_unscaled(left), int64_unscaled(right)
    if lv is None or rv is None or len(lv) != len(rv):
        return None
    drop = left.type.scale + right.type.scale - out.scale
    if drop < 0 or drop > 18:
        return None
    d = 10 ** drop
    if _bound(lv) * _bound(rv) + d > _I64_MAX:
        return None
    return _int64_result(lv * rv, drop, left, right, out)


def int64_add_sub(op: str, left: pa.Array, right: pa.Array,
                  out: T.DecimalType) -> pa.Array | None:
    """``left + right`` (``op`` ``+``) or ``left - right`` as ``out`` in int64 arithmetic, under
    the same conditions as :func:`int64_multiply`."""
    lv, rv = int64_unscaled(left), int64_unscaled(right)
    if lv is None or rv is None or len(lv) != len(rv):
        return None
    ls, rs = left.type.scale, right.type.scale
    sc = max(ls, rs)
    drop = sc - out.scale
    if drop < 0 or drop > 18 or sc - ls > 18 or sc - rs > 18:
        return None
    fl, fr, d = 10 ** (sc - ls), 10 ** (sc - rs), 10 ** drop
    if _bound(lv) * fl + _bound(rv) * fr + d > _I64_MAX:
        return None
    if fl != 1:
        lv = lv * fl
    if fr != 1:
        rv = rv * fr
    return _int64_result(lv + rv if op == "+" else lv - rv, drop, left, right, out)


def int64_divide(left: pa.Array, right: pa.Array, out: T.DecimalType) -> pa.Array | None:
    """``left / right`` as ``out`` (rounded HALF_UP, as :func:`div_half_up`) in int64
    arithmetic when the operands' magnitudes prove that no intermediate overflows and every
    result fits ``out``; None otherwise (callers take the exact Python-int path).  A zero divisor
    gives 0 in its row: callers have already raised for it or made the row NULL."""
    lv, rv = int64_unscaled(left), int64_unscaled(right)
    if lv is None or rv is None or len(lv) != len(rv):
        return None
    shift = out.scale + right.type.scale - left.type.scale
    if abs(shift) > 18:
        return None
    fn, fd = (10 ** shift, 1) if shift >= 0 else (1, 10 ** -shift)
    bl, br = _bound(lv), _bound(rv)
    if 2 * bl * fn + br * fd > _I64_MAX or 2 * br * fd > _I64_MAX:
        return None
    num = lv * fn if fn != 1 else lv
    den = rv * fd if fd != 1 else rv
    den = np.where(den == 0, 1, den)
    a, b = np.abs(num), np.abs(den)
    q = (2 * a + b) // (2 * b)
    return _int64_result(np.where((num < 0) ^ (den < 0), -q, q), 0, left, right, out)


def _bound(v: np.ndarray) -> int:
    return max(abs(int(v.max())), abs(int(v.min())))


def _int64_result(res: np.ndarray, drop: int, left: pa.Array, right: pa.Array,
                  out: T.DecimalType) -> pa.Array | None:
    """Exact int64 results at scale ``out.scale + drop`` rounded HALF_UP to ``out.scale``, as a
    decimal128 array NULL where an operand is; None when a value exceeds ``out.precision``."""
    d = 10 ** drop
    if drop:
        q = (np.abs(res) + d // 2) // d  # HALF_UP (d is even)
        res = np.where(res < 0, -q, q)
    valid = None
    if left.null_count or right.null_count:
        valid = np.asarray(pc_and_valid(left, right), dtype=bool)
        res = np.where(valid, res, 0)
    if out.precision <= 18 and len(res):
        limit = 10 ** out.precision
        if int(res.max()) >= limit or int(res.min()) <= -limit:
            return None
    n = len(res)
    words = np.empty((n, 2), dtype=np.int64)
    words[:, 0] = res
    words[:, 1] = res >> 63
    validity = None if valid is None else pa.array(valid).buffers()[1]
    return pa.Array.from_buffers(out.to_arrow(), n, [validity, pa.py_buffer(words)],
                                 null_count=-1 if validity is not None else 0)


def pc_and_valid(left: pa.Array, right: pa.Array) -> np.ndarray:
    """Rows where both arrays are non-NULL."""
    import pyarrow.compute as pc

    return pc.and_(pc.is_valid(left), pc.is_valid(right)).to_numpy(zero_copy_only=False)


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
