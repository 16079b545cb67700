"""The linear-regression aggregates ``regr_*(y, x)`` (Spark's ``linearRegression`` functions):
each runs over the rows where both ``y`` and ``x`` are non-NULL.

Spark defines several as rewrites, which these classes follow (result types, buffers, NULLs):
``regr_count`` is ``count(y, x)``; ``regr_avgx`` / ``regr_avgy`` are ``avg`` of ``x`` / ``y`` over
those rows (so a decimal argument gives a decimal average); ``regr_sxx`` / ``regr_syy`` are the
``m2`` of a central-moment buffer of ``x`` / ``y``; ``regr_sxy`` the ``ck`` of a covariance
buffer; ``regr_r2`` is a Pearson correlation buffer; ``regr_slope`` / ``regr_intercept`` hold a
``covar_pop(x, y)`` and a ``var_pop(x)`` buffer.  The moment kernels are :mod:`.moments`'.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import field
from typing import ClassVar

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from ember import types as T
from ember.expressions.aggregates.base import AggregateFunction, BufferField, _numeric_cast_target
from ember.expressions.aggregates.count import _CountBuffer
from ember.expressions.aggregates.kernels import _count_array, _count_non_null, _valid
from ember.expressions.aggregates.moments import (
    _CoMoment,
    _DoubleInputs,
    arrow_buffers,
    comoment_buffers,
    divide,
    double_result,
    doubles,
    merge_comoment_buffers,
    merge_moment_buffers,
    moment_buffers,
    numpy_buffers,
)
from ember.expressions.aggregates.sum_avg import Average
from ember.expressions.base import Expression
from ember.expressions.common import unexpected_input_type
from ember.trees import node


class _NumericPair(AggregateFunction):
    """``regr_count`` / ``regr_avgx`` / ``regr_avgy``: two NUMERIC arguments (strings and NULL
    cast to double implicitly), ``left`` is ``y``, ``right`` is ``x``."""

    __slots__ = ()
    left: Expression
    right: Expression

    def check_input_types(self) -> str | None:
        for i, c in enumerate((self.left, self.right), 1):
            if not isinstance(c.data_type, (T.NumericType, T.NullType)):
                return unexpected_input_type(i, '"NUMERIC"', c)
        return None

    def implicit_cast_targets(self) -> tuple[T.DataType | None, ...]:
        return (_numeric_cast_target(self.left), _numeric_cast_target(self.right))


@node
class RegrCount(_CountBuffer, _NumericPair):
    """``regr_count(y, x)``: rows where both are non-NULL (Spark's ``count(y, x)``)."""

    left: Expression
    right: Expression
    fn_name: str | None = field(default=None, compare=False)

    default_name: ClassVar[str] = "regr_count"

    def aggregate(self, args: Sequence[pa.Array], g: np.ndarray, n_groups: int) -> pa.Array:
        return _count_array(_count_non_null(args, g, n_groups))

    def update(self, args: Sequence[pa.Array], g: np.ndarray, n_groups: int) -> list[pa.Array]:
        return [self.aggregate(args, g, n_groups)]

    def update_identity(self, args: Sequence[pa.Array]) -> list[pa.Array] | None:
        return [_count_array((_valid(args[0]) & _valid(args[1])).astype(np.int64))]


class _RegrAverage(_NumericPair):
    """``regr_avgx`` / ``regr_avgy``: Spark's ``avg(IF(y IS NOT NULL AND x IS NOT NULL, v,
    NULL))``, whose buffers, result type and evalMode (``ansi``) are :class:`Average`'s."""

    __slots__ = ()
    ansi: bool
    #: the average of x (regr_avgx) rather than y
    of_x: ClassVar[bool] = False

    def _average(self) -> Average:
        return Average(self.right if self.of_x else self.left, ansi=self.ansi)

    @property
    def data_type(self) -> T.DataType:
        return self._average().data_type

    @property
    def ansi_mode(self) -> bool:
        return self.ansi

    def to_legacy_mode(self) -> Expression:
        return self.copy(ansi=False)  # type: ignore[attr-defined]

    def _masked(self, args: Sequence[pa.Array]) -> pa.Array:
        v = args[1] if self.of_x else args[0]
        other = args[0] if self.of_x else args[1]
        if pa.types.is_null(v.type) or other.null_count == 0:
            return v
        if pa.types.is_null(other.type):
            return pa.nulls(len(v), v.type)
        return pc.if_else(other.is_valid(), v, pa.nulls(len(v), v.type))

    def aggregate(self, args: Sequence[pa.Array], g: np.ndarray, n_groups: int) -> pa.Array:
        return self._average().aggregate([self._masked(args)], g, n_groups)

    def buffer_fields(self) -> tuple[BufferField, ...] | None:
        return self._average().buffer_fields()

    def update(self, args: Sequence[pa.Array], g: np.ndarray, n_groups: int) -> list[pa.Array]:
        return self._average().update([self._masked(args)], g, n_groups)

    def merge(self, buffers: Sequence[pa.Array], g: np.ndarray, n_groups: int
              ) -> list[pa.Array]:
        return self._average().merge(buffers, g, n_groups)

    def merge_identity(self, buffers: Sequence[pa.Array]) -> list[pa.Array] | None:
        return self._average().merge_identity(buffers)

    def evaluate(self, buffers: Sequence[pa.Array]) -> pa.Array:
        return self._average().evaluate(buffers)

    @property
    def chunk_mergeable(self) -> bool:
        return self._average().chunk_mergeable

    @property
    def merge_may_overflow(self) -> bool:
        return self._average().merge_may_overflow

    def overflow_marked(self, buffers: Sequence[pa.Array]) -> bool:
        return self._average().overflow_marked(buffers)


@node
class RegrAvgX(_RegrAverage):
    """``regr_avgx(y, x)``: the average of ``x`` where both are non-NULL."""

    left: Expression
    right: Expression
    fn_name: str | None = field(default=None, compare=False)
    ansi: bool = True

    default_name: ClassVar[str] = "regr_avgx"
    of_x: ClassVar[bool] = True


@node
class RegrAvgY(_RegrAverage):
    """``regr_avgy(y, x)``: the average of ``y`` where both are non-NULL."""

    left: Expression
    right: Expression
    fn_name: str | None = field(default=None, compare=False)
    ansi: bool = True

    default_name: ClassVar[str] = "regr_avgy"


class _RegrSquares(_DoubleInputs):
    """``regr_sxx`` / ``regr_syy``: Spark's ``RegrReplacement``, a central-moment buffer
    ``n, avg, m2`` of ``x`` / ``y`` over the rows where both are non-NULL; the result is ``m2``
    (NULL without rows)."""

    __slots__ = ()
    left: Expression
    right: Expression
    of_x: ClassVar[bool] = False

    def buffer_fields(self) -> tuple[BufferField, ...] | None:
        return tuple(BufferField(nm, T.DOUBLE, False) for nm in ("n", "avg", "m2"))

    def update(self, args: Sequence[pa.Array], g: np.ndarray, n_groups: int) -> list[pa.Array]:
        (y, x), valid = doubles(args[:2])
        v = x if self.of_x else y
        if valid is not None:
            v, g = v[valid], g[valid]
        return arrow_buffers(moment_buffers(v, g, n_groups, 2))

    def merge(self, buffers: Sequence[pa.Array], g: np.ndarray, n_groups: int
              ) -> list[pa.Array]:
        return arrow_buffers(merge_moment_buffers(numpy_buffers(buffers), g, n_groups, 2))

    def evaluate(self, buffers: Sequence[pa.Array]) -> pa.Array:
        b = numpy_buffers(buffers)
        return double_result(b[2], b[0] == 0.0)


@node
class RegrSXX(_RegrSquares):
    """``regr_sxx(y, x)``: ``sum((x - avg(x))^2)`` over the rows where both are non-NULL."""

    left: Expression
    right: Expression
    fn_name: str | None = field(default=None, compare=False)
    ansi: bool = True

    default_name: ClassVar[str] = "regr_sxx"
    of_x: ClassVar[bool] = True


@node
class RegrSYY(_RegrSquares):
    """``regr_syy(y, x)``: ``sum((y - avg(y))^2)`` over the rows where both are non-NULL."""

    left: Expression
    right: Expression
    fn_name: str | None = field(default=None, compare=False)
    ansi: bool = True

    default_name: ClassVar[str] = "regr_syy"


@node
class RegrSXY(_CoMoment):
    """``regr_sxy(y, x)``: the co-moment ``ck`` of a covariance buffer (Spark's ``RegrSXY``,
    a ``Covariance(y, x)``); NULL without rows."""

    left: Expression
    right: Expression
    fn_name: str | None = field(default=None, compare=False)
    ansi: bool = True

    default_name: ClassVar[str] = "regr_sxy"

    def _result(self, b: list[np.ndarray], null: np.ndarray) -> np.ndarray:
        return b[3]


@node
class RegrR2(_CoMoment):
    """``regr_r2(y, x)``: the squared correlation (Spark's ``RegrR2``, a
    ``PearsonCorrelation(y, x)``): NULL when ``x`` is constant, 1.0 when ``y`` is."""

    left: Expression
    right: Expression
    fn_name: str | None = field(default=None, compare=False)
    ansi: bool = True

    default_name: ClassVar[str] = "regr_r2"
    variances: ClassVar[bool] = True

    def _result(self, b: list[np.ndarray], null: np.ndarray) -> np.ndarray:
        ck, syy, sxx = b[3], b[4], b[5]  # Spark's xMk is y's, yMk is x's
        null |= sxx == 0.0
        r2 = divide(divide(ck * ck, sxx, null, self.ansi), syy, null | (syy == 0.0), self.ansi)
        return np.where(syy == 0.0, 1.0, r2)


class _RegrLine(_DoubleInputs):
    """``regr_slope`` / ``regr_intercept``: Spark's buffers of ``covar_pop(x, y)`` (``n, xAvg,
    yAvg, ck``) and of ``var_pop(x)`` (``n, avg, m2``) over the rows where both are non-NULL."""

    __slots__ = ()
    left: Expression
    right: Expression

    def buffer_fields(self) -> tuple[BufferField, ...] | None:
        names = ("n", "xAvg", "yAvg", "ck", "n", "avg", "m2")
        return tuple(BufferField(nm, T.DOUBLE, False) for nm in names)

    def update(self, args: Sequence[pa.Array], g: np.ndarray, n_groups: int) -> list[pa.Array]:
        (y, x), valid = doubles(args[:2])
        if valid is not None:
            x, y, g = x[valid], y[valid], g[valid]
        n, mx, my, ck, sxx, _ = comoment_buffers(x, y, g, n_groups, True)
        return arrow_buffers([n, mx, my, ck, n, mx, sxx])

    def merge(self, buffers: Sequence[pa.Array], g: np.ndarray, n_groups: int
              ) -> list[pa.Array]:
        b = numpy_buffers(buffers)
        return arrow_buffers(merge_comoment_buffers(b[:4], g, n_groups, False)
                             + merge_moment_buffers(b[4:], g, n_groups, 2))

    def evaluate(self, buffers: Sequence[pa.Array]) -> pa.Array:
        n, x_avg, y_avg, ck, _, _, m2 = numpy_buffers(buffers)
        null = n == 0.0
        covar = divide(ck, n, null, self.ansi)
        var = divide(m2, n, null, self.ansi)
        null |= var == 0.0
        slope = divide(covar, var, null, self.ansi)
        with np.errstate(all="ignore"):
            return double_result(self._line(slope, x_avg, y_avg), null)

    def _line(self, slope: np.ndarray, x_avg: np.ndarray, y_avg: np.ndarray) -> np.ndarray:
        raise NotImplementedError


@node
class RegrSlope(_RegrLine):
    """``regr_slope(y, x)``: ``covar_pop(x, y) / var_pop(x)``, NULL when ``x`` is constant."""

    left: Expression
    right: Expression
    fn_name: str | None = field(default=None, compare=False)
    ansi: bool = True

    default_name: ClassVar[str] = "regr_slope"

    def _line(self, slope: np.ndarray, x_avg: np.ndarray, y_avg: np.ndarray) -> np.ndarray:
        return slope


@node
class RegrIntercept(_RegrLine):
    """``regr_intercept(y, x)``: ``avg(y) - slope * avg(x)``, NULL when ``x`` is constant."""

    left: Expression
    right: Expression
    fn_name: str | None = field(default=None, compare=False)
    ansi: bool = True

    default_name: ClassVar[str] = "regr_intercept"

    def _line(self, slope: np.ndarray, x_avg: np.ndarray, y_avg: np.ndarray) -> np.ndarray:
        return y_avg - slope * x_avg
