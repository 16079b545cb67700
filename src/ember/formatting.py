"""Java's number formatting, as Spark prints values (one scalar implementation for every layer).

:func:`java_double_str` is Java's ``Double.toString`` / ``Float.toString`` (JDK 19+ shortest
round-trip digits): plain notation for ``1e-3 <= |v| < 1e7`` with at least one fractional digit
(``1.0``, ``1234567.0``, ``0.001``), otherwise ``d.ddd"E"exp`` (``1.0E7``, ``1.5E-4``);
``NaN``, ``Infinity``, ``-Infinity``, ``-0.0``.  Subnormals follow JDK 17's FloatingDecimal
instead (:func:`java_subnormal_str`: ``4.9E-324``, not ``5.0E-324``).

It is used for literals' ``sql()``/``toString`` (``1.5D``), column names, error messages and
``show()``.  The vectorized array version (for ``CAST(double AS STRING)``) is
:func:`ember.expressions.cast.format_double`.
"""

from __future__ import annotations

import math
from decimal import Decimal

import numpy as np

__all__ = ["java_double_str", "java_subnormal_str"]


def java_double_str(v: float, single: bool = False) -> str:
    """Java's ``Double.toString`` (``single=True``: ``Float.toString``, float32 digits).

    >>> [java_double_str(x) for x in (1.5, 1e10, 1e-4, 1234567.0, 0.001, -0.0)]
    ['1.5', '1.0E10', '1.0E-4', '1234567.0', '0.001', '-0.0']
    >>> java_double_str(0.1, single=True)
    '0.1'
    """
    v = float(v)
    if math.isnan(v):
        return "NaN"
    if math.isinf(v):
        return "Infinity" if v > 0 else "-Infinity"
    if v == 0:
        return "-0.0" if math.copysign(1.0, v) < 0 else "0.0"
    if abs(v) < (_FLOAT_TINY if single else _DOUBLE_TINY):
        return ("-" if v < 0 else "") + java_subnormal_str(abs(v), single)
    if single:
        import numpy as np

        text = np.format_float_positional(np.float32(v), unique=True, trim="-")
    else:
        text = repr(v)
    sign, digits, exp = Decimal(text).as_tuple()
    assert isinstance(exp, int)
    ds = "".join(map(str, digits)).rstrip("0") or "0"
    lead = len(digits) + exp - 1  # decimal exponent of the leading digit
    neg = "-" if sign else ""
    if 1e-3 <= abs(v) < 1e7:
        if lead >= 0:
            int_part = ds[: lead + 1].ljust(lead + 1, "0")
            frac = ds[lead + 1:] or "0"
        else:
            int_part = "0"
            frac = "0" * (-lead - 1) + ds
        return f"{neg}{int_part}.{frac}"
    return f"{neg}{ds[0]}.{ds[1:] or '0'}E{lead}"


_DOUBLE_TINY = 2.2250738585072014e-308  # smallest normal double
_FLOAT_TINY = 1.1754943508222875e-38  # smallest normal float


def java_subnormal_str(v: float, is_float: bool) -> str:
    """``Double.toString``/``Float.toString`` of a positive subnormal ``v`` as JDK 17 prints it:
    a port of ``FloatingDecimal.BinaryToASCIIBuffer.dtoa`` (big-integer branch, compatible
    format: at least two digits in scientific layout, so the second digit is chosen by the
    free-format low/high tests rather than by shortest round trip).  Called once per distinct
    subnormal value."""
    if is_float:
        fract = int(np.array(v, dtype=np.float32).view(np.uint32)) & 0x7FFFFF
        lz = 32 - fract.bit_length()
        shift = lz - (31 - 23)
        fract <<= shift
        bin_exp = 1 - shift - 127
        n_sig = 32 - lz
        fract <<= 52 - 23
    else:
        fract = int(np.array(v, dtype=np.float64).view(np.uint64)) & ((1 << 52) - 1)
        lz = 64 - fract.bit_length()
        shift = lz - (63 - 52)
        fract <<= shift
        bin_exp = 1 - shift - 1023
        n_sig = 64 - lz
    tail = (fract & -fract).bit_length() - 1
    n_fract = 53 - tail
    n_tiny = max(0, n_fract - bin_exp - 1)
    # estimateDecExp, in the same double arithmetic as Java
    d2 = float(np.array((0x3FF << 52) | (fract & ((1 << 52) - 1)), dtype=np.uint64).view(np.float64))
    dec_exp = math.floor((d2 - 1.5) * 0.289529654 + 0.176091259 + bin_exp * 0.301029995663981)
    b5 = max(0, -dec_exp)
    b2 = b5 + n_tiny + bin_exp
    s5 = max(0, dec_exp)
    s2 = s5 + n_tiny
    m5, m2 = b5, b2 - n_sig
    fract >>= tail
    b2 -= n_fract - 1
    common = min(b2, s2)
    b2, s2, m2 = b2 - common, s2 - common, m2 - common
    if n_fract == 1:
        m2 -= 1
    if m2 < 0:
        b2, s2, m2 = b2 - m2, s2 - m2, 0
    sv = 5 ** s5 << s2
    bv = fract * 5 ** b5 << b2
    mv = 5 ** (m5 + 1) << (m2 + 1)
    ten_s = 5 ** (s5 + 1) << (s2 + 1)
    q, bv = divmod(bv, sv)
    bv *= 10
    low, high = bv < mv, bv + mv >= ten_s
    digits: list[int] = []
    if q == 0 and not high:
        dec_exp -= 1
    else:
        digits.append(q)
    if dec_exp < -3 or dec_exp >= 8:
        low = high = False
    while not low and not high:
        q, bv = divmod(bv, sv)
        bv *= 10
        mv *= 10
        low, high = bv < mv, bv + mv >= ten_s
        digits.append(q)
    if high and (not low or (2 * bv > ten_s) or (2 * bv == ten_s and digits[-1] % 2 == 1)):
        i = len(digits) - 1
        while i > 0 and digits[i] == 9:
            digits[i] = 0
            i -= 1
        if digits[i] == 9:
            digits[0] = 1
            dec_exp += 1
        else:
            digits[i] += 1
    frac = "".join(map(str, digits[1:])) or "0"
    return f"{digits[0]}.{frac}E{dec_exp}"
