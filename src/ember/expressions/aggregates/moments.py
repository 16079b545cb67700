"""Statistical aggregates over doubles: central moments (``stddev_samp``, ``stddev_pop``,
``var_samp``, ``var_pop``, ``skewness``, ``kurtosis``; Spark's ``CentralMomentAgg``), covariance
(``covar_pop``, ``covar_samp``; Spark's ``Covariance``) and correlation (``corr``; Spark's
``PearsonCorrelation``), with the grouped kernels the regression functions
(:mod:`.regression`) share.

Buffers are Spark's: ``n, avg, m2[, m3, m4]`` (count, mean, sums of the powers of the deviations
from the mean) and ``n, xAvg, yAvg, ck[, xMk, yMk]`` (co-moment ``ck = sum (x - xAvg)(y - yAvg)``),
all double.  Spark updates them row by row (Welford's algorithm) and merges two buffers by Chan's
parallel formulas; here an update computes each group's buffer at once (the corrected two-pass
algorithm: the mean, kept to twice double precision, then the sums of powers of the deviations
from it, so digits survive far from 0), and a merge
combines any number of buffers per group by shifting each buffer's moments to the merged mean::

    d_i = avg_i - avg                M2 = sum m2_i + n_i d_i^2
    M3 = sum m3_i + 3 d_i m2_i + n_i d_i^3
    M4 = sum m4_i + 4 d_i m3_i + 6 d_i^2 m2_i + n_i d_i^4

which is Chan's pairwise merge applied to all of them.  A group whose values are all equal gets
exactly their value as its mean (so its moments are exactly 0, as Spark's updates give, and
``var_samp`` is ``0.0``, ``skewness`` NULL).  Results agree with Spark's to rounding (about 1e-15
relative on typical data), not bit for bit: Spark's result itself depends on the row order.

Non-finite input: a NaN or an infinite value makes every moment of its group NaN, as in Spark.
The one case left unmatched: Spark's co-moment of a group holding an infinite value is NaN or
+-Infinity depending on the row order; here it is NaN.

Divisions follow Spark's evaluation expressions, whose ``/`` is Catalyst's ``Divide``: a zero
divisor (reachable only when a product of tiny moments underflows) raises ``DIVIDE_BY_ZERO``
under ANSI, NULL in legacy mode (``ansi=False``, set by the analyzer's ResolveEvalMode).  The
cases Spark's ``nullOnDivideByZero`` covers (``var_samp`` of one row, ``skewness`` of equal values
...) are NULL (Spark 4's default; ``spark.sql.legacy.statisticalAggregate=true``, which gives NaN
there, is refused by the session's configuration as a legacy switch Ember does not implement).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import field
from typing import ClassVar

import numpy as np
import pyarrow as pa

from ember import types as T
from ember.expressions.aggregates.base import AggregateFunction, BufferField, _UnaryAgg
from ember.expressions.aggregates.kernels import _float_values, _valid_or_none
from ember.expressions.arithmetic import divide_by_zero_error
from ember.expressions.base import Expression
from ember.expressions.common import unexpected_input_type
from ember.trees import node


# ---------------------------------------------------------------------------------------------
# Kernels (NumPy; per group with np.bincount, no loop per row or per group)


def doubles(args: Sequence[pa.Array]) -> tuple[list[np.ndarray], np.ndarray | None]:
    """The float64 values of ``args`` and the mask of the rows where every one is non-NULL
    (None: every row), the rows Spark's updates take."""
    valid = None
    values = []
    for a in args:
        if pa.types.is_null(a.type):
            values.append(np.zeros(len(a)))
            va = np.zeros(len(a), dtype=bool)
        else:
            values.append(_float_values(a))
            va = _valid_or_none(a)
        if va is not None:
            valid = va if valid is None else valid & va
    return values, valid


def _sum(w: np.ndarray, g: np.ndarray, n_groups: int) -> np.ndarray:
    return np.bincount(g, weights=w, minlength=n_groups)


def _exact_where_constant(mean: np.ndarray, low: np.ndarray, x: np.ndarray, g: np.ndarray,
                          n_groups: int) -> tuple[np.ndarray, np.ndarray]:
    """``(mean, low)`` with each group whose values ``x`` are all equal set to exactly
    ``(value, 0.0)`` (empty groups: 0.0, Spark's initial ``avg``)."""
    ref = np.zeros(n_groups)
    ref[g] = x  # some value of each group
    same = _sum((x != ref[g]).astype(np.float64), g, n_groups) == 0
    return np.where(same, ref, mean), np.where(same, 0.0, low)


def _refined(mean: np.ndarray, x: np.ndarray, w: np.ndarray | None, n: np.ndarray | None,
             g: np.ndarray, n_groups: int) -> tuple[np.ndarray, np.ndarray]:
    """The mean corrected by the mean deviation (the corrected two-pass algorithm; weighted by
    the rows' ``w``, or divided by the groups' counts ``n``), as the rounded double and its
    rounding error ``low`` (``mean + low`` is the mean to about twice double precision, so
    deviations ``(x - mean) - low`` keep their digits far from 0)."""
    dev = x - mean[g]
    fix = _sum(dev, g, n_groups) / n if w is None else _sum(dev * w, g, n_groups)
    ok = np.isfinite(fix)
    new = np.where(ok, mean + fix, mean)
    return new, np.where(ok, fix - (new - mean), 0.0)


def group_means(x: np.ndarray, g: np.ndarray, n: np.ndarray, n_groups: int
                ) -> tuple[np.ndarray, np.ndarray]:
    """Per-group means of ``x`` (rows in groups ``g``, ``n`` rows per group; 0.0 for an empty
    group) as ``(mean, low)`` (see :func:`_refined`): the sum over the count, refined; a sum
    beyond the double range is taken as the sum of ``x / n``."""
    safe = np.where(n > 0, n, 1.0)
    with np.errstate(all="ignore"):
        mean = _sum(x, g, n_groups) / safe
        if not np.isfinite(mean).all():
            mean = np.where(np.isfinite(mean), mean, _sum(x / safe[g], g, n_groups))
        mean, low = _refined(mean, x, None, safe, g, n_groups)
    return _exact_where_constant(mean, low, x, g, n_groups)


def merged_means(avg: np.ndarray, cnt: np.ndarray, g: np.ndarray, n: np.ndarray, n_groups: int
                 ) -> tuple[np.ndarray, np.ndarray]:
    """Per-group means of buffers (``avg`` over ``cnt`` rows each; ``n`` the groups' totals) as
    ``(mean, low)``: the count-weighted mean, exactly the buffers' common mean where they all
    agree."""
    live = cnt > 0
    avg, cnt, g = avg[live], cnt[live], g[live]
    safe = np.where(n > 0, n, 1.0)
    with np.errstate(all="ignore"):
        w = cnt / safe[g]
        mean, low = _refined(_sum(avg * w, g, n_groups), avg, w, None, g, n_groups)
    return _exact_where_constant(mean, low, avg, g, n_groups)


def _deviations(x: np.ndarray, mean: tuple[np.ndarray, np.ndarray], g: np.ndarray
                ) -> np.ndarray:
    return (x - mean[0][g]) - mean[1][g]


def _update_overflows(x: np.ndarray, g: np.ndarray, n_groups: int) -> np.ndarray:
    """Per group, whether Spark's row-by-row update (``delta = x - avg``, in row order) meets a
    ``delta`` beyond the double range: its ``m2 += delta * (delta - delta / n)`` is then
    ``inf * (inf - inf)``, NaN for good.  Tested on the running means of ``x / len(x)`` (no
    overflow; the rounding matters only at the range's very edge)."""
    bad = np.zeros(n_groups, dtype=bool)
    finite = x[np.isfinite(x)]
    if len(x) < 2 or not len(finite) or np.abs(finite).max() < np.finfo(np.float64).max / 2:
        return bad  # every difference of two values is finite
    scale = float(len(x))
    order = np.argsort(g, kind="stable")
    gs, xs = g[order], x[order] / scale
    with np.errstate(all="ignore"):
        cum = np.cumsum(xs)
        start = np.r_[True, gs[1:] != gs[:-1]]
        first = np.flatnonzero(start)
        base = np.repeat(cum[first] - xs[first], np.diff(np.r_[first, len(xs)]))
        k = np.arange(len(xs)) - np.repeat(first, np.diff(np.r_[first, len(xs)]))
        before = cum - xs - base  # the sum of the group's earlier rows (scaled)
        delta = xs - before / np.where(k > 0, k, 1)
        hit = (k > 0) & np.isinf(delta * scale) & np.isfinite(xs)
    bad[gs[hit]] = True
    return bad


def moment_buffers(x: np.ndarray, g: np.ndarray, n_groups: int, order: int
                   ) -> list[np.ndarray]:
    """``[n, avg, m2, m3, m4]`` (up to ``order``) of the values ``x`` per group ``g``; the
    moments NaN where Spark's update overflows (:func:`_update_overflows`)."""
    n = np.bincount(g, minlength=n_groups).astype(np.float64)
    mean = group_means(x, g, n, n_groups)
    with np.errstate(all="ignore"):
        d = _deviations(x, mean, g)
        d2 = d * d
        out = [n, mean[0], _sum(d2, g, n_groups)]
        if order >= 3:
            out.append(_sum(d2 * d, g, n_groups))
        if order >= 4:
            out.append(_sum(d2 * d2, g, n_groups))
    overflow = _update_overflows(x, g, n_groups)
    if overflow.any():
        out[2:] = [np.where(overflow, np.nan, m) for m in out[2:]]
    return out


def merge_moment_buffers(bufs: Sequence[np.ndarray], g: np.ndarray, n_groups: int, order: int
                         ) -> list[np.ndarray]:
    """Per-group ``[n, avg, m2, m3, m4]`` (up to ``order``) merged from buffer rows."""
    cnt, avg = bufs[0], bufs[1]
    n = _sum(cnt, g, n_groups)
    mean = merged_means(avg, cnt, g, n, n_groups)
    with np.errstate(all="ignore"):
        d = np.where(cnt > 0, _deviations(avg, mean, g), 0.0)
        m2 = bufs[2]
        out = [n, mean[0], _sum(m2 + cnt * d * d, g, n_groups)]
        if order >= 3:
            m3 = bufs[3]
            out.append(_sum(m3 + 3.0 * d * m2 + cnt * d * d * d, g, n_groups))
        if order >= 4:
            out.append(_sum(bufs[4] + 4.0 * d * m3 + 6.0 * d * d * m2 + cnt * d * d * d * d,
                            g, n_groups))
    return out


def comoment_buffers(x: np.ndarray, y: np.ndarray, g: np.ndarray, n_groups: int,
                     with_variances: bool) -> list[np.ndarray]:
    """``[n, xAvg, yAvg, ck]`` (and ``xMk, yMk``) of the pairs ``(x, y)`` per group ``g``."""
    n = np.bincount(g, minlength=n_groups).astype(np.float64)
    mx, my = group_means(x, g, n, n_groups), group_means(y, g, n, n_groups)
    with np.errstate(all="ignore"):
        dx, dy = _deviations(x, mx, g), _deviations(y, my, g)
        out = [n, mx[0], my[0], _sum(dx * dy, g, n_groups)]
        if with_variances:
            out += [_sum(dx * dx, g, n_groups), _sum(dy * dy, g, n_groups)]
    overflow = _update_overflows(x, g, n_groups) | _update_overflows(y, g, n_groups)
    if overflow.any():
        out[3:] = [np.where(overflow, np.nan, m) for m in out[3:]]
    return out


def merge_comoment_buffers(bufs: Sequence[np.ndarray], g: np.ndarray, n_groups: int,
                           with_variances: bool) -> list[np.ndarray]:
    """Per-group ``[n, xAvg, yAvg, ck]`` (and ``xMk, yMk``) merged from buffer rows."""
    cnt, xa, ya = bufs[0], bufs[1], bufs[2]
    n = _sum(cnt, g, n_groups)
    mx, my = merged_means(xa, cnt, g, n, n_groups), merged_means(ya, cnt, g, n, n_groups)
    with np.errstate(all="ignore"):
        live = cnt > 0
        dx = np.where(live, _deviations(xa, mx, g), 0.0)
        dy = np.where(live, _deviations(ya, my, g), 0.0)
        out = [n, mx[0], my[0], _sum(bufs[3] + cnt * dx * dy, g, n_groups)]
        if with_variances:
            out += [_sum(bufs[4] + cnt * dx * dx, g, n_groups),
                    _sum(bufs[5] + cnt * dy * dy, g, n_groups)]
    return out


def divide(a: np.ndarray, b: np.ndarray, null: np.ndarray, ansi: bool) -> np.ndarray:
    """``a / b`` as Catalyst's ``Divide`` of doubles, where not yet ``null``: a zero divisor
    raises ``DIVIDE_BY_ZERO`` (ANSI) or makes the result NULL (``null`` is updated in place)."""
    zero = (b == 0) & ~null
    if zero.any():
        if ansi:
            raise divide_by_zero_error()
        null |= zero
    with np.errstate(all="ignore"):
        return a / np.where(zero | null, 1.0, b)


def double_result(values: np.ndarray, null: np.ndarray) -> pa.Array:
    return pa.array(values, type=pa.float64(), mask=null if null.any() else None)


def numpy_buffers(buffers: Sequence[pa.Array]) -> list[np.ndarray]:
    return [b.to_numpy(zero_copy_only=False).astype(np.float64, copy=False) for b in buffers]


def arrow_buffers(values: Sequence[np.ndarray]) -> list[pa.Array]:
    return [pa.array(v, type=pa.float64()) for v in values]


# ---------------------------------------------------------------------------------------------
# Type checks and evaluation mode


def double_cast_target(child: Expression) -> T.DataType | None:
    """DOUBLE for a child Spark's ImplicitCastInputTypes casts to an expected DoubleType
    (other numeric types, strings, NULL), else None."""
    if not child.resolved:
        return None
    t = child.data_type
    if isinstance(t, (T.NumericType, T.StringType, T.NullType)) and not isinstance(t, T.DoubleType):
        return T.DOUBLE
    return None


def check_doubles(children: Sequence[Expression]) -> str | None:
    """``UNEXPECTED_INPUT_TYPE`` ("DOUBLE") for the first child that is not a double (after the
    implicit casts, so a boolean, date, interval ...)."""
    for i, c in enumerate(children, 1):
        if not isinstance(c.data_type, (T.DoubleType, T.NullType)):
            return unexpected_input_type(i, '"DOUBLE"', c)
    return None


class _DoubleInputs(AggregateFunction):
    """A statistical aggregate of double arguments (Spark's ``inputTypes = DoubleType``, with
    implicit casts from numbers and strings), result double, and Spark's evalMode for its
    divisions (``ansi``; see the module docstring)."""

    __slots__ = ()
    ansi: bool

    @property
    def data_type(self) -> T.DataType:
        return T.DOUBLE

    def check_input_types(self) -> str | None:
        return check_doubles(self.children)

    def implicit_cast_targets(self) -> tuple[T.DataType | None, ...]:
        return tuple(double_cast_target(c) for c in self.children)

    @property
    def ansi_mode(self) -> bool:
        return self.ansi

    def to_legacy_mode(self) -> Expression:
        return self.copy(ansi=False)  # type: ignore[attr-defined]

    def aggregate(self, args: Sequence[pa.Array], g: np.ndarray, n_groups: int) -> pa.Array:
        return self.evaluate(self.update(args, g, n_groups))


# ---------------------------------------------------------------------------------------------
# Central moments


class _CentralMoment(_DoubleInputs, _UnaryAgg):
    """Spark's ``CentralMomentAgg``: buffer ``n, avg, m2[, m3, m4]`` up to :attr:`order`."""

    __slots__ = ()
    order: ClassVar[int] = 2

    def buffer_fields(self) -> tuple[BufferField, ...] | None:
        names = ("n", "avg", "m2", "m3", "m4")[: self.order + 1]
        return tuple(BufferField(nm, T.DOUBLE, False) for nm in names)

    def _values(self, args: Sequence[pa.Array]) -> tuple[np.ndarray, np.ndarray | None]:
        (x,), valid = doubles(args[:1])
        return x, valid

    def update(self, args: Sequence[pa.Array], g: np.ndarray, n_groups: int) -> list[pa.Array]:
        x, valid = self._values(args)
        if valid is not None:
            x, g = x[valid], g[valid]
        return arrow_buffers(moment_buffers(x, g, n_groups, self.order))

    def merge(self, buffers: Sequence[pa.Array], g: np.ndarray, n_groups: int
              ) -> list[pa.Array]:
        return arrow_buffers(merge_moment_buffers(numpy_buffers(buffers), g, n_groups,
                                                  self.order))

    def evaluate(self, buffers: Sequence[pa.Array]) -> pa.Array:
        b = numpy_buffers(buffers)
        null = b[0] == 0.0
        with np.errstate(all="ignore"):
            return double_result(self._result(b, null), null)

    def _result(self, b: list[np.ndarray], null: np.ndarray) -> np.ndarray:
        """The result from the buffers ``b`` (``null``: the NULL results so far, updated)."""
        raise NotImplementedError


class _Sample(_CentralMoment):
    """var_samp / stddev_samp: ``m2 / (n - 1)``, NULL for one row (Spark 4's
    ``nullOnDivideByZero``)."""

    __slots__ = ()
    root: ClassVar[bool] = False

    def _result(self, b: list[np.ndarray], null: np.ndarray) -> np.ndarray:
        n, m2 = b[0], b[2]
        null |= n == 1.0
        v = divide(m2, n - 1.0, null, self.ansi)
        return np.sqrt(v) if self.root else v


class _Population(_CentralMoment):
    """var_pop / stddev_pop: ``m2 / n``."""

    __slots__ = ()
    root: ClassVar[bool] = False

    def _result(self, b: list[np.ndarray], null: np.ndarray) -> np.ndarray:
        v = divide(b[2], b[0], null, self.ansi)
        return np.sqrt(v) if self.root else v


@node
class StddevSamp(_Sample):
    """``stddev_samp(x)`` / ``stddev(x)`` / ``std(x)``: ``sqrt(m2 / (n - 1))`` (Spark's
    ``StddevSamp``)."""

    child: Expression
    fn_name: str | None = field(default=None, compare=False)
    ansi: bool = True

    default_name: ClassVar[str] = "stddev_samp"
    root: ClassVar[bool] = True


@node
class StddevPop(_Population):
    """``stddev_pop(x)``: ``sqrt(m2 / n)`` (Spark's ``StddevPop``)."""

    child: Expression
    fn_name: str | None = field(default=None, compare=False)
    ansi: bool = True

    default_name: ClassVar[str] = "stddev_pop"
    root: ClassVar[bool] = True


@node
class VarianceSamp(_Sample):
    """``var_samp(x)`` / ``variance(x)``: ``m2 / (n - 1)`` (Spark's ``VarianceSamp``)."""

    child: Expression
    fn_name: str | None = field(default=None, compare=False)
    ansi: bool = True

    default_name: ClassVar[str] = "var_samp"


@node
class VariancePop(_Population):
    """``var_pop(x)``: ``m2 / n`` (Spark's ``VariancePop``)."""

    child: Expression
    fn_name: str | None = field(default=None, compare=False)
    ansi: bool = True

    default_name: ClassVar[str] = "var_pop"


@node
class Skewness(_CentralMoment):
    """``skewness(x)``: ``sqrt(n) * m3 / sqrt(m2^3)``, NULL when every value is equal
    (Spark's ``Skewness``)."""

    child: Expression
    fn_name: str | None = field(default=None, compare=False)
    ansi: bool = True

    default_name: ClassVar[str] = "skewness"
    order: ClassVar[int] = 3

    def _result(self, b: list[np.ndarray], null: np.ndarray) -> np.ndarray:
        n, m2, m3 = b[0], b[2], b[3]
        null |= m2 == 0.0
        return divide(np.sqrt(n) * m3, np.sqrt(m2 * m2 * m2), null, self.ansi)


@node
class Kurtosis(_CentralMoment):
    """``kurtosis(x)``: the excess kurtosis ``n * m4 / m2^2 - 3``, NULL when every value is
    equal (Spark's ``Kurtosis``)."""

    child: Expression
    fn_name: str | None = field(default=None, compare=False)
    ansi: bool = True

    default_name: ClassVar[str] = "kurtosis"
    order: ClassVar[int] = 4

    def _result(self, b: list[np.ndarray], null: np.ndarray) -> np.ndarray:
        n, m2, m4 = b[0], b[2], b[4]
        null |= m2 == 0.0
        return divide(n * m4, m2 * m2, null, self.ansi) - 3.0


# ---------------------------------------------------------------------------------------------
# Covariance and correlation


class _CoMoment(_DoubleInputs):
    """Spark's ``Covariance`` (buffer ``n, xAvg, yAvg, ck``) and, with :attr:`variances`,
    ``PearsonCorrelation`` (``xMk, yMk`` too), over the rows where both arguments are non-NULL.
    ``left`` is Spark's ``x``, ``right`` its ``y``."""

    __slots__ = ()
    left: Expression
    right: Expression
    variances: ClassVar[bool] = False

    def buffer_fields(self) -> tuple[BufferField, ...] | None:
        names = ("n", "xAvg", "yAvg", "ck") + (("xMk", "yMk") if self.variances else ())
        return tuple(BufferField(nm, T.DOUBLE, False) for nm in names)

    def update(self, args: Sequence[pa.Array], g: np.ndarray, n_groups: int) -> list[pa.Array]:
        (x, y), valid = doubles(args[:2])
        if valid is not None:
            x, y, g = x[valid], y[valid], g[valid]
        return arrow_buffers(comoment_buffers(x, y, g, n_groups, self.variances))

    def merge(self, buffers: Sequence[pa.Array], g: np.ndarray, n_groups: int
              ) -> list[pa.Array]:
        return arrow_buffers(merge_comoment_buffers(numpy_buffers(buffers), g, n_groups,
                                                    self.variances))

    def evaluate(self, buffers: Sequence[pa.Array]) -> pa.Array:
        b = numpy_buffers(buffers)
        null = b[0] == 0.0
        with np.errstate(all="ignore"):
            return double_result(self._result(b, null), null)

    def _result(self, b: list[np.ndarray], null: np.ndarray) -> np.ndarray:
        raise NotImplementedError


@node
class CovPopulation(_CoMoment):
    """``covar_pop(x, y)``: ``ck / n`` (Spark's ``CovPopulation``)."""

    left: Expression
    right: Expression
    fn_name: str | None = field(default=None, compare=False)
    ansi: bool = True

    default_name: ClassVar[str] = "covar_pop"

    def _result(self, b: list[np.ndarray], null: np.ndarray) -> np.ndarray:
        return divide(b[3], b[0], null, self.ansi)


@node
class CovSample(_CoMoment):
    """``covar_samp(x, y)``: ``ck / (n - 1)``, NULL for one row (Spark's ``CovSample``)."""

    left: Expression
    right: Expression
    fn_name: str | None = field(default=None, compare=False)
    ansi: bool = True

    default_name: ClassVar[str] = "covar_samp"

    def _result(self, b: list[np.ndarray], null: np.ndarray) -> np.ndarray:
        n = b[0]
        null |= n == 1.0
        return divide(b[3], n - 1.0, null, self.ansi)


@node
class Corr(_CoMoment):
    """``corr(x, y)``: ``ck / sqrt(xMk * yMk)``; NULL for one row and when either argument is
    constant (Spark's ``Corr``)."""

    left: Expression
    right: Expression
    fn_name: str | None = field(default=None, compare=False)
    ansi: bool = True

    default_name: ClassVar[str] = "corr"
    variances: ClassVar[bool] = True

    def _result(self, b: list[np.ndarray], null: np.ndarray) -> np.ndarray:
        n, ck, xmk, ymk = b[0], b[3], b[4], b[5]
        null |= (n == 1.0) | (xmk == 0.0) | (ymk == 0.0)
        return divide(ck, np.sqrt(xmk * ymk), null, self.ansi)
