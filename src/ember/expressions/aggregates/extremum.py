"""``min``, ``max``, ``bool_and``, ``bool_or``: one buffer holding the extreme value."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import field
from typing import ClassVar

import numpy as np
import pyarrow as pa

from ember import types as T
from ember.expressions.aggregates.base import (
    AggregateFunction,
    BufferField,
    _BooleanInput,
    _UnaryAgg,
    _check_orderable,
)
from ember.expressions.aggregates.kernels import _bool, _min_max
from ember.expressions.base import Expression
from ember.trees import node


class _ExtremumBuffer(AggregateFunction):
    """min, max, bool_and, bool_or (and bit_and / bit_or / bit_xor, :mod:`.bitwise`): one
    buffer column of the result type, named as Spark's (bool_and / bool_or are Spark's min / max
    of booleans); merge is the update over the buffer values (the first of equal values wins in
    both)."""

    __slots__ = ()
    buffer_name: ClassVar[str] = "min"
    duplicate_agnostic: ClassVar[bool] = True

    def _fold(self, arr: pa.Array, g: np.ndarray, n_groups: int) -> pa.Array:
        raise NotImplementedError

    def aggregate(self, args: Sequence[pa.Array], g: np.ndarray, n_groups: int) -> pa.Array:
        return self._fold(args[0], g, n_groups)

    def buffer_fields(self) -> tuple[BufferField, ...] | None:
        return (BufferField(self.buffer_name, self.data_type),)

    def update(self, args: Sequence[pa.Array], g: np.ndarray, n_groups: int) -> list[pa.Array]:
        return [self._fold(args[0], g, n_groups)]

    def merge(self, buffers: Sequence[pa.Array], g: np.ndarray, n_groups: int
              ) -> list[pa.Array]:
        return [self._fold(buffers[0], g, n_groups)]

    def update_identity(self, args: Sequence[pa.Array]) -> list[pa.Array] | None:
        return [args[0]]

    def merge_identity(self, buffers: Sequence[pa.Array]) -> list[pa.Array] | None:
        return list(buffers)

    @property
    def chunk_mergeable(self) -> bool:
        return True


class _MinMax(_ExtremumBuffer, _UnaryAgg):
    """min / max over any orderable type; floating NaN is larger than every other value."""

    __slots__ = ()
    #: max rather than min
    largest: ClassVar[bool] = False

    @property
    def data_type(self) -> T.DataType:
        return self.child.data_type

    def check_input_types(self) -> str | None:
        return _check_orderable(self.pretty_name, self.child)

    def _fold(self, arr: pa.Array, g: np.ndarray, n_groups: int) -> pa.Array:
        return _min_max(arr, g, n_groups, largest=self.largest)


@node
class Min(_MinMax):
    """``min(x)`` over any orderable type; floating NaN is larger than every other value."""

    child: Expression
    fn_name: str | None = field(default=None, compare=False)

    default_name: ClassVar[str] = "min"


@node
class Max(_MinMax):
    """``max(x)`` over any orderable type; floating NaN is larger than every other value."""

    child: Expression
    fn_name: str | None = field(default=None, compare=False)

    default_name: ClassVar[str] = "max"
    buffer_name: ClassVar[str] = "max"
    largest: ClassVar[bool] = True


class _BoolAggregate(_ExtremumBuffer, _BooleanInput):
    """bool_and / bool_or: the min / max of booleans (Spark replaces them by min / max)."""

    __slots__ = ()
    #: bool_and (every value TRUE) rather than bool_or (some value TRUE)
    conjunction: ClassVar[bool] = True

    @property
    def data_type(self) -> T.DataType:
        return T.BOOLEAN

    def _fold(self, arr: pa.Array, g: np.ndarray, n_groups: int) -> pa.Array:
        return _bool(arr, g, n_groups, conj=self.conjunction)


@node
class BoolAnd(_BoolAggregate):
    """``bool_and(p)`` / ``every(p)``: TRUE when every non-NULL value is TRUE."""

    child: Expression
    fn_name: str | None = field(default=None, compare=False)

    default_name: ClassVar[str] = "bool_and"


@node
class BoolOr(_BoolAggregate):
    """``bool_or(p)`` / ``some(p)`` / ``any(p)``: TRUE when some value is TRUE."""

    child: Expression
    fn_name: str | None = field(default=None, compare=False)

    default_name: ClassVar[str] = "bool_or"
    buffer_name: ClassVar[str] = "max"
    conjunction: ClassVar[bool] = False
