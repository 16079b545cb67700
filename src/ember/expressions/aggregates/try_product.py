"""``try_sum``, ``try_avg`` (Spark's TrySum, TryAverage: ``sum`` / ``avg`` returning NULL
where they would overflow) and ``product`` (Spark's Product: the DOUBLE product of the
non-NULL values)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import field
from typing import ClassVar

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from ember import types as T
from ember.expressions.aggregates.base import BufferField, _UnaryAgg
from ember.expressions.aggregates.kernels import (
    _counts, _float_values, _sel, _valid_or_none, running_int_sums,
)
from ember.expressions.aggregates.sum_avg import Average, Sum
from ember.expressions.base import Expression
from ember.expressions.common import unexpected_input_type
from ember.trees import node

__all__ = ["TrySum", "TryAverage", "Product"]


def _int_values(arr: pa.Array) -> tuple[np.ndarray, np.ndarray | None]:
    valid = _valid_or_none(arr)
    v = (arr if valid is None else pc.fill_null(arr, 0)).to_numpy(zero_copy_only=False)
    return v.astype(np.int64, copy=False), valid


@node
class TrySum(Sum):
    """``try_sum(x)``: ``sum`` whose overflow gives NULL (Spark's TrySum).  A decimal or
    floating sum is the legacy ``sum`` (a decimal overflow is already NULL there); an integral
    sum is NULL for a group whose running sum leaves BIGINT, in the buffers as ``sum`` NULL
    with ``isEmpty`` false (the marker Spark's decimal sums use)."""

    child: Expression
    fn_name: str | None = field(default=None, compare=False)
    ansi: bool = False

    default_name: ClassVar[str] = "try_sum"

    @property
    def ansi_mode(self) -> bool:
        return False

    def to_legacy_mode(self) -> Expression:
        return self

    def _integral(self) -> bool:
        return isinstance(self.child.data_type, T.IntegralType)

    def _sums(self, arr: pa.Array, g: np.ndarray, n_groups: int) -> tuple[pa.Array, pa.Array]:
        """Per group: the sum (NULL when empty or overflowed) and ``isEmpty``."""
        v, valid = _int_values(arr)
        gv = _sel(g, valid)
        empty = _counts(gv, n_groups) == 0
        sums, over = running_int_sums(_sel(v, valid), gv, n_groups)
        return pa.array(sums, type=pa.int64(), mask=empty | over), pa.array(empty)

    def aggregate(self, args: Sequence[pa.Array], g: np.ndarray, n_groups: int) -> pa.Array:
        if not self._integral():
            return Sum.aggregate(self, args, g, n_groups)
        return self._sums(args[0], g, n_groups)[0]

    def buffer_fields(self) -> tuple[BufferField, ...] | None:
        if not self._integral():
            return Sum.buffer_fields(self)
        return (BufferField("sum", T.LONG), BufferField("isEmpty", T.BOOLEAN, False))

    def update(self, args: Sequence[pa.Array], g: np.ndarray, n_groups: int) -> list[pa.Array]:
        if not self._integral():
            return Sum.update(self, args, g, n_groups)
        return list(self._sums(args[0], g, n_groups))

    def update_identity(self, args: Sequence[pa.Array]) -> list[pa.Array] | None:
        if not self._integral():
            return Sum.update_identity(self, args)
        arr = args[0].cast(pa.int64())
        return [arr, pc.is_null(arr)]

    def merge(self, buffers: Sequence[pa.Array], g: np.ndarray, n_groups: int
              ) -> list[pa.Array]:
        if not self._integral():
            return Sum.merge(self, buffers, g, n_groups)
        total, is_empty = buffers
        empty_rows = np.asarray(is_empty.to_numpy(zero_copy_only=False), dtype=bool)
        over_rows = ~empty_rows & ~np.asarray(pc.is_valid(total).to_numpy(
            zero_copy_only=False), dtype=bool)
        v, _ = _int_values(total)
        keep = ~empty_rows & ~over_rows
        sums, over = running_int_sums(v[keep], g[keep], n_groups)
        over |= np.bincount(g[over_rows], minlength=n_groups).astype(bool)
        empty = np.bincount(g[~empty_rows], minlength=n_groups) == 0
        return [pa.array(sums, type=pa.int64(), mask=empty | over), pa.array(empty)]

    def merge_identity(self, buffers: Sequence[pa.Array]) -> list[pa.Array] | None:
        if not self._integral():
            return Sum.merge_identity(self, buffers)
        return list(buffers)

    def evaluate(self, buffers: Sequence[pa.Array]) -> pa.Array:
        if not self._integral():
            return Sum.evaluate(self, buffers)
        return buffers[0]

    def overflow_marked(self, buffers: Sequence[pa.Array]) -> bool:
        return False


@node
class TryAverage(Average):
    """``try_avg(x)``: ``avg`` whose (decimal) overflow gives NULL (Spark's TryAverage): the
    legacy ``avg`` whatever ``spark.sql.ansi.enabled``."""

    child: Expression
    fn_name: str | None = field(default=None, compare=False)
    ansi: bool = False

    default_name: ClassVar[str] = "try_avg"

    @property
    def ansi_mode(self) -> bool:
        return False

    def to_legacy_mode(self) -> Expression:
        return self

    def overflow_marked(self, buffers: Sequence[pa.Array]) -> bool:
        return False


def _group_products(v: np.ndarray, g: np.ndarray, n_groups: int) -> np.ndarray:
    out = np.ones(n_groups, dtype=np.float64)
    with np.errstate(over="ignore", invalid="ignore"):  # inf / NaN as Java's doubles
        np.multiply.at(out, g, v)
    return out


@node
class Product(_UnaryAgg):
    """``product(x)``: the DOUBLE product of the non-NULL values, NULL for a group without one
    (Spark's Product; a numeric argument is cast to DOUBLE).  Buffer: ``product`` (NULL until a
    value arrives)."""

    child: Expression
    fn_name: str | None = field(default=None, compare=False)

    default_name: ClassVar[str] = "product"

    @property
    def data_type(self) -> T.DataType:
        return T.DOUBLE

    def check_input_types(self) -> str | None:
        if not isinstance(self.child.data_type, (T.NumericType, T.NullType)):
            return unexpected_input_type(1, '"NUMERIC"', self.child)
        return None

    def implicit_cast_targets(self) -> tuple[T.DataType | None, ...]:
        c = self.child
        if not c.resolved or isinstance(c.data_type, T.DoubleType):
            return (None,)
        return (T.DOUBLE if isinstance(c.data_type, (T.NumericType, T.NullType, T.StringType))
                else None,)

    def _products(self, arr: pa.Array, g: np.ndarray, n_groups: int) -> pa.Array:
        if pa.types.is_null(arr.type):
            return pa.nulls(n_groups, pa.float64())
        valid = _valid_or_none(arr)
        gv = _sel(g, valid)
        empty = _counts(gv, n_groups) == 0
        return pa.array(_group_products(_sel(_float_values(arr), valid), gv, n_groups),
                        mask=empty if empty.any() else None)

    def aggregate(self, args: Sequence[pa.Array], g: np.ndarray, n_groups: int) -> pa.Array:
        return self._products(args[0], g, n_groups)

    def buffer_fields(self) -> tuple[BufferField, ...] | None:
        return (BufferField("product", T.DOUBLE),)

    def update(self, args: Sequence[pa.Array], g: np.ndarray, n_groups: int) -> list[pa.Array]:
        return [self._products(args[0], g, n_groups)]

    def merge(self, buffers: Sequence[pa.Array], g: np.ndarray, n_groups: int
              ) -> list[pa.Array]:
        return [self._products(buffers[0], g, n_groups)]

    def evaluate(self, buffers: Sequence[pa.Array]) -> pa.Array:
        return buffers[0]
