"""``max_by`` and ``min_by``: the value at the row with the extreme ordering."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import field
from typing import ClassVar

import numpy as np
import pyarrow as pa

from ember import types as T
from ember.expressions.aggregates.base import AggregateFunction, BufferField, _check_orderable
from ember.expressions.aggregates.kernels import _by, _take_or_null, by_positions
from ember.expressions.base import Expression
from ember.trees import node


class _ByBase(AggregateFunction):
    """max_by, min_by: buffer ``valueWithExtremumOrdering`` and ``extremumOrdering``; ties go
    to the later row (buffer)."""

    __slots__ = ()
    value: Expression
    ordering: Expression
    #: max_by rather than min_by
    largest: ClassVar[bool] = True

    @property
    def data_type(self) -> T.DataType:
        return self.value.data_type

    def check_input_types(self) -> str | None:
        return _check_orderable(self.pretty_name, self.ordering)

    def aggregate(self, args: Sequence[pa.Array], g: np.ndarray, n_groups: int) -> pa.Array:
        return _by(args[0], args[1], g, n_groups, largest=self.largest)

    def buffer_fields(self) -> tuple[BufferField, ...] | None:
        return (BufferField("valueWithExtremumOrdering", self.value.data_type),
                BufferField("extremumOrdering", self.ordering.data_type))

    def update(self, args: Sequence[pa.Array], g: np.ndarray, n_groups: int) -> list[pa.Array]:
        pos = by_positions(args[1], g, n_groups, largest=self.largest)
        return [_take_or_null(args[0], pos), _take_or_null(args[1], pos)]

    def merge(self, buffers: Sequence[pa.Array], g: np.ndarray, n_groups: int
              ) -> list[pa.Array]:
        return self.update(buffers, g, n_groups)  # the buffers are (value, ordering) rows

    @property
    def chunk_mergeable(self) -> bool:
        return True


@node
class MaxBy(_ByBase):
    """``max_by(value, ordering)``: ``value`` of the row with the largest non-NULL ``ordering``
    (ties: the last such row, as Spark)."""

    value: Expression
    ordering: Expression
    fn_name: str | None = field(default=None, compare=False)

    default_name: ClassVar[str] = "max_by"


@node
class MinBy(_ByBase):
    """``min_by(value, ordering)``: ``value`` of the row with the smallest non-NULL ``ordering``
    (ties: the last such row, as Spark)."""

    value: Expression
    ordering: Expression
    fn_name: str | None = field(default=None, compare=False)

    default_name: ClassVar[str] = "min_by"
    largest: ClassVar[bool] = False
