"""``sum`` and ``avg``: running sums with Spark's ANSI overflow and decimal precision rules."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import field
from typing import ClassVar

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from ember import types as T
from ember.expressions.aggregates.base import BufferField, _NumericInput
from ember.expressions.aggregates.kernels import (
    AVG_OVERFLOW,
    SUM_OVERFLOW,
    _avg,
    _bool_np,
    _count_array,
    _decimal_averages,
    _decimal_sum_buffers,
    _float_averages,
    _float_sum_buffer,
    _float_values,
    _group_add,
    _identity_decimal_sum,
    _merge_decimal_sums,
    _nonnull_counts,
    _overflow,
    _overflow_marked,
    _sum,
    _unscaled,
    _valid,
)
from ember.expressions.base import Expression
from ember.trees import node


def _bounded_decimal(precision: int, scale: int) -> T.DecimalType:
    """Spark's ``DecimalType.bounded``: precision and scale capped at 38."""
    return T.DecimalType(min(precision, T.DecimalType.MAX_PRECISION),
                         min(scale, T.DecimalType.MAX_SCALE))


def sum_result_type(t: T.DataType) -> T.DataType:
    """``sum`` result type for input type ``t`` (bigint / double / decimal(p+10, s))."""
    match t:
        case T.DecimalType(precision=p, scale=s):
            return _bounded_decimal(p + 10, s)
        case T.IntegralType():
            return T.LONG
        case _:
            return T.DOUBLE


def average_result_type(t: T.DataType) -> T.DataType:
    """``avg`` result type for input type ``t`` (double / decimal(p+4, s+4) bounded)."""
    match t:
        case T.DecimalType(precision=p, scale=s):
            return _bounded_decimal(p + 4, s + 4)
        case _:
            return T.DOUBLE


def average_sum_type(t: T.DataType) -> T.DataType:
    """Type of ``avg``'s running sum (Spark's ``sumDataType``): decimal(p+10, s) or double."""
    match t:
        case T.DecimalType(precision=p, scale=s):
            return _bounded_decimal(p + 10, s)
        case _:
            return T.DOUBLE


class _EvalMode:
    """Spark's evalMode of ``sum``/``avg``: ``ansi=False`` (``spark.sql.ansi.enabled=false``, set
    by the analyzer's ResolveEvalMode) is the legacy aggregate: integral sums wrap, a decimal sum
    or average that overflows is NULL."""

    __slots__ = ()

    @property
    def ansi_mode(self) -> bool:
        return self.ansi  # type: ignore[attr-defined]

    def to_legacy_mode(self) -> Expression:
        return self.copy(ansi=False)  # type: ignore[attr-defined]

    # Buffer facts shared by sum and avg, whose buffers hold a running sum.

    @property
    def chunk_mergeable(self) -> bool:
        # decimal sums are exact; integral (ANSI running sums) and floating sums are not
        return isinstance(self.child.data_type, T.DecimalType)  # type: ignore[attr-defined]

    @property
    def merge_may_overflow(self) -> bool:
        t = self.child.data_type  # type: ignore[attr-defined]
        return isinstance(t, T.DecimalType) and t.precision + 10 > T.DecimalType.MAX_PRECISION


@node
class Sum(_EvalMode, _NumericInput):
    """``sum(x)``: NULL when no non-NULL input; ANSI overflow raises ``ARITHMETIC_OVERFLOW``."""

    child: Expression
    fn_name: str | None = field(default=None, compare=False)
    #: Spark's evalMode (see :class:`_EvalMode`)
    ansi: bool = True

    default_name: ClassVar[str] = "sum"

    @property
    def data_type(self) -> T.DataType:
        return sum_result_type(self.child.data_type)

    def aggregate(self, args: Sequence[pa.Array], g: np.ndarray, n_groups: int) -> pa.Array:
        return _sum(args[0], g, n_groups, self.data_type, self.ansi)

    def buffer_fields(self) -> tuple[BufferField, ...] | None:
        """``sum`` (the result type); for decimals also ``isEmpty``: ``sum`` NULL and not
        ``isEmpty`` is Spark's overflow marker, raised at :meth:`evaluate` (legacy: NULL)."""
        rt = self.data_type
        if isinstance(rt, T.DecimalType):
            return (BufferField("sum", rt), BufferField("isEmpty", T.BOOLEAN, False))
        return (BufferField("sum", rt),)

    def update(self, args: Sequence[pa.Array], g: np.ndarray, n_groups: int) -> list[pa.Array]:
        rt = self.data_type
        if isinstance(rt, T.DecimalType):
            return _decimal_sum_buffers(args[0], g, n_groups, rt, None)
        return [_sum(args[0], g, n_groups, rt, self.ansi)]  # ANSI: overflow of running sums

    def update_identity(self, args: Sequence[pa.Array]) -> list[pa.Array] | None:
        got = _identity_decimal_sum(args[0], self.data_type)
        if got is None:
            return None
        total, valid = got
        return [total, pa.array(~valid)]

    def merge(self, buffers: Sequence[pa.Array], g: np.ndarray, n_groups: int
              ) -> list[pa.Array]:
        rt = self.data_type
        if isinstance(rt, T.DecimalType):
            return _merge_decimal_sums(buffers[0], _bool_np(buffers[1]), g, n_groups, rt)
        return [_sum(buffers[0], g, n_groups, rt, self.ansi)]

    def merge_identity(self, buffers: Sequence[pa.Array]) -> list[pa.Array] | None:
        if isinstance(self.data_type, T.DecimalType):
            ok = buffers[0].null_count == 0 and buffers[1].null_count == 0
            return list(buffers) if ok else None
        return list(buffers) if pa.types.is_integer(buffers[0].type) else None

    def evaluate(self, buffers: Sequence[pa.Array]) -> pa.Array:
        if not isinstance(self.data_type, T.DecimalType):
            return buffers[0]
        total, is_empty = buffers
        empty = _bool_np(is_empty)
        if self.ansi and ((~empty) & ~_valid(total)).any():
            raise _overflow(SUM_OVERFLOW)  # legacy: the NULL overflow marker stays
        if empty.any():
            total = pc.if_else(pa.array(empty), pa.nulls(len(total), total.type), total)
        return total

    def overflow_marked(self, buffers: Sequence[pa.Array]) -> bool:
        return buffers[0].null_count > 0 and _overflow_marked(buffers[0], pc.invert(buffers[1]))


@node
class Average(_EvalMode, _NumericInput):
    """``avg(x)`` / ``mean(x)``: double, or decimal(p+4, s+4) rounded HALF_UP for decimals."""

    child: Expression
    fn_name: str | None = field(default=None, compare=False)
    #: Spark's evalMode (see :class:`_EvalMode`)
    ansi: bool = True

    default_name: ClassVar[str] = "avg"

    @property
    def data_type(self) -> T.DataType:
        return average_result_type(self.child.data_type)

    @property
    def sum_type(self) -> T.DataType:
        """The type of the running sum (Spark's ``sumDataType``)."""
        return average_sum_type(self.child.data_type)

    def aggregate(self, args: Sequence[pa.Array], g: np.ndarray, n_groups: int) -> pa.Array:
        return _avg(args[0], g, n_groups, self.data_type, self.sum_type, self.ansi)

    def buffer_fields(self) -> tuple[BufferField, ...] | None:
        """``sum`` (double / decimal(p+10, s); decimal overflow as in ``sum``) and ``count``."""
        return (BufferField("sum", self.sum_type), BufferField("count", T.LONG, False))

    def update(self, args: Sequence[pa.Array], g: np.ndarray, n_groups: int) -> list[pa.Array]:
        arr = args[0]
        st = self.sum_type
        if isinstance(st, T.DecimalType):
            total, _ = _decimal_sum_buffers(arr, g, n_groups, st, None)
            return [total, _count_array(_nonnull_counts(arr, g, n_groups))]
        cnt = _nonnull_counts(arr, g, n_groups)
        return [_float_sum_buffer(arr, g, n_groups), _count_array(cnt)]

    def update_identity(self, args: Sequence[pa.Array]) -> list[pa.Array] | None:
        got = _identity_decimal_sum(args[0], self.sum_type)
        if got is None:
            return None
        total, valid = got
        return [total, _count_array(valid.astype(np.int64))]

    def merge(self, buffers: Sequence[pa.Array], g: np.ndarray, n_groups: int
              ) -> list[pa.Array]:
        st = self.sum_type
        c = buffers[1].to_numpy(zero_copy_only=False).astype(np.int64, copy=False)
        cnt = _group_add(c, g, n_groups) if len(c) else np.zeros(n_groups, np.int64)
        if isinstance(st, T.DecimalType):
            total, _ = _merge_decimal_sums(buffers[0], c == 0, g, n_groups, st)
            return [total, _count_array(cnt)]
        v = _float_values(buffers[0])
        sums = np.bincount(g, weights=v, minlength=n_groups) if len(v) else np.zeros(n_groups)
        return [pa.array(sums, type=pa.float64()), _count_array(cnt)]

    def merge_identity(self, buffers: Sequence[pa.Array]) -> list[pa.Array] | None:
        if isinstance(self.sum_type, T.DecimalType):
            ok = buffers[0].null_count == 0 and buffers[1].null_count == 0
            return list(buffers) if ok else None
        return None

    def evaluate(self, buffers: Sequence[pa.Array]) -> pa.Array:
        rt = self.data_type
        total, count = buffers
        cnt = count.to_numpy(zero_copy_only=False).astype(np.int64, copy=False)
        if isinstance(rt, T.DecimalType):
            over = (cnt != 0) & ~_valid(total)
            if self.ansi and over.any():
                raise _overflow(AVG_OVERFLOW)
            return _decimal_averages(_unscaled(total), np.where(over, 0, cnt),
                                     self.child.data_type.scale, rt, self.ansi)
        return _float_averages(_float_values(total), cnt, rt.to_arrow())

    def overflow_marked(self, buffers: Sequence[pa.Array]) -> bool:
        return buffers[0].null_count > 0 and _overflow_marked(buffers[0],
                                                              pc.not_equal(buffers[1], 0))
