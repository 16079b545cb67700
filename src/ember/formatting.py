"""Java's number formatting, as Spark prints values (one scalar implementation for every layer).

:func:`java_double_str` is Java's ``Double.toString`` / ``Float.toString`` (JDK 19+ shortest
round-trip digits): plain notation for ``1e-3 <= |v| < 1e7`` with at least one fractional digit
(``1.0``, ``1234567.0``, ``0.001``), otherwise ``d.ddd"E"exp`` (``1.0E7``, ``1.5E-4``);
``NaN``, ``Infinity``, ``-Infinity``, ``-0.0``.

It is used for literals' ``sql()``/``toString`` (``1.5D``), column names, error messages and
``show()``.  The vectorized array version (for ``CAST(double AS STRING)``) is
:func:`ember.expressions.cast.format_double`.
"""

from __future__ import annotations

import math
from decimal import Decimal

__all__ = ["java_double_str"]


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
