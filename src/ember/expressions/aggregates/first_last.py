"""``first``, ``last``, ``any_value``: the value of a row chosen by its position."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import field
from typing import ClassVar

import numpy as np
import pyarrow as pa

from ember import types as T
from ember.expressions.aggregates.base import BufferField, _UnaryAgg
from ember.expressions.aggregates.kernels import _first_last, _first_last_positions, _take_or_null
from ember.expressions.base import Expression
from ember.trees import node


class _FirstLastBase(_UnaryAgg):
    """first, last, any_value: buffer ``first`` / ``last`` (the input type) and ``valueSet``;
    merge takes the first (last) buffer whose value is set."""

    __slots__ = ()
    ignore_nulls: bool
    buffer_name: ClassVar[str] = "first"
    #: the last row of the group instead of the first
    takes_last: ClassVar[bool] = False
    duplicate_agnostic: ClassVar[bool] = True

    @property
    def data_type(self) -> T.DataType:
        return self.child.data_type

    def agg_args_string(self) -> str:
        return f"{self.child.simple_string()}, {str(self.ignore_nulls).lower()}"

    def aggregate(self, args: Sequence[pa.Array], g: np.ndarray, n_groups: int) -> pa.Array:
        return _first_last(args[0], g, n_groups, self.ignore_nulls, last=self.takes_last)

    def buffer_fields(self) -> tuple[BufferField, ...] | None:
        return (BufferField(self.buffer_name, self.data_type),
                BufferField("valueSet", T.BOOLEAN, False))

    def update(self, args: Sequence[pa.Array], g: np.ndarray, n_groups: int) -> list[pa.Array]:
        pos = _first_last_positions(args[0], None, self.ignore_nulls, g, n_groups,
                                    last=self.takes_last)
        return [_take_or_null(args[0], pos), pa.array(pos >= 0)]

    def merge(self, buffers: Sequence[pa.Array], g: np.ndarray, n_groups: int
              ) -> list[pa.Array]:
        pos = _first_last_positions(buffers[0], buffers[1], self.ignore_nulls, g, n_groups,
                                    last=self.takes_last)
        return [_take_or_null(buffers[0], pos), pa.array(pos >= 0)]

    @property
    def chunk_mergeable(self) -> bool:
        return True


@node
class First(_FirstLastBase):
    """``first(x[, ignoreNulls])``: the value of the first row of the group, in input order
    (with ``ignore_nulls`` the first non-NULL value).  Named ``first(x)`` either way."""

    child: Expression
    ignore_nulls: bool = False
    fn_name: str | None = field(default=None, compare=False)

    default_name: ClassVar[str] = "first"


@node
class Last(_FirstLastBase):
    """``last(x[, ignoreNulls])``: the value of the last row of the group, in input order."""

    child: Expression
    ignore_nulls: bool = False
    fn_name: str | None = field(default=None, compare=False)

    default_name: ClassVar[str] = "last"
    buffer_name: ClassVar[str] = "last"
    takes_last: ClassVar[bool] = True


@node
class AnyValue(_FirstLastBase):
    """``any_value(x[, ignoreNulls])``: Ember returns the first value, like ``first``."""

    child: Expression
    ignore_nulls: bool = False
    fn_name: str | None = field(default=None, compare=False)

    default_name: ClassVar[str] = "any_value"
