"""``bit_and``, ``bit_or``, ``bit_xor``: bitwise folds of an integral column (Spark's
``BitAndAgg``, ``BitOrAgg``, ``BitXorAgg``), one buffer of the input type named after the
function, NULL for a group without non-NULL values."""

from __future__ import annotations

from dataclasses import field
from typing import ClassVar

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from ember import types as T
from ember.expressions.aggregates.base import _UnaryAgg
from ember.expressions.aggregates.extremum import _ExtremumBuffer
from ember.expressions.aggregates.kernels import _counts, _sel, _valid_or_none
from ember.expressions.base import Expression
from ember.expressions.common import unexpected_input_type
from ember.trees import node


def bit_fold(arr: pa.Array, g: np.ndarray, n_groups: int, op: np.ufunc, identity: int
             ) -> pa.Array:
    """Per group, ``op`` (``np.bitwise_and`` / ``_or`` / ``_xor``) over the non-NULL values of
    the integer column ``arr`` (NULL for a group without one), in ``arr``'s type: the values are
    sign-extended to int64, where the three operations agree with the narrower type's."""
    if pa.types.is_null(arr.type):
        return pa.nulls(n_groups, type=arr.type)
    valid = _valid_or_none(arr)
    v = (arr if valid is None else pc.fill_null(arr, 0)).to_numpy(zero_copy_only=False)
    v, gv = _sel(v.astype(np.int64, copy=False), valid), _sel(g, valid)
    if n_groups == 1:
        out = np.array([op.reduce(v) if len(v) else identity], dtype=np.int64)
    else:
        out = np.full(n_groups, identity, dtype=np.int64)
        op.at(out, gv, v)
    empty = _counts(gv, n_groups) == 0
    return pa.array(out, mask=empty if empty.any() else None).cast(arr.type)


class _BitAggregate(_ExtremumBuffer, _UnaryAgg):
    """Spark's ``BitAggregate``: an integral argument (no implicit casts), the input type as
    result and buffer; merge folds the buffers as update folds the values (the protocol of
    :class:`_ExtremumBuffer`)."""

    __slots__ = ()
    op: ClassVar[np.ufunc] = np.bitwise_and
    identity: ClassVar[int] = -1

    @property
    def data_type(self) -> T.DataType:
        return self.child.data_type

    def check_input_types(self) -> str | None:
        if not isinstance(self.child.data_type, (T.IntegralType, T.NullType)):
            return unexpected_input_type(1, '"INTEGRAL"', self.child)
        return None

    def implicit_cast_targets(self) -> tuple[T.DataType | None, ...]:
        # Spark's ExpectsInputTypes: only NULL is cast (to the IntegralType default, int)
        c = self.child
        return (T.INT if c.resolved and isinstance(c.data_type, T.NullType) else None,)

    def _fold(self, arr: pa.Array, g: np.ndarray, n_groups: int) -> pa.Array:
        return bit_fold(arr, g, n_groups, self.op, self.identity)


@node
class BitAndAgg(_BitAggregate):
    """``bit_and(x)``: the bitwise AND of the non-NULL values."""

    child: Expression
    fn_name: str | None = field(default=None, compare=False)

    default_name: ClassVar[str] = "bit_and"
    buffer_name: ClassVar[str] = "bit_and"


@node
class BitOrAgg(_BitAggregate):
    """``bit_or(x)``: the bitwise OR of the non-NULL values."""

    child: Expression
    fn_name: str | None = field(default=None, compare=False)

    default_name: ClassVar[str] = "bit_or"
    buffer_name: ClassVar[str] = "bit_or"
    op: ClassVar[np.ufunc] = np.bitwise_or
    identity: ClassVar[int] = 0


@node
class BitXorAgg(_BitAggregate):
    """``bit_xor(x)``: the bitwise XOR of the non-NULL values."""

    child: Expression
    fn_name: str | None = field(default=None, compare=False)

    default_name: ClassVar[str] = "bit_xor"
    buffer_name: ClassVar[str] = "bit_xor"
    op: ClassVar[np.ufunc] = np.bitwise_xor
    identity: ClassVar[int] = 0
    duplicate_agnostic: ClassVar[bool] = False  # a repeated value cancels itself
