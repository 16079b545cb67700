"""``count`` and ``count_if``: one bigint buffer, ``count``."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import field
from typing import Any, ClassVar

import numpy as np
import pyarrow as pa

from ember import types as T
from ember.errors import InternalError
from ember.expressions.aggregates.base import AggregateFunction, BufferField, _BooleanInput
from ember.expressions.aggregates.kernels import (
    _count_array,
    _count_non_null,
    _merge_counts,
    _true_mask,
    _valid,
)
from ember.expressions.base import Expression, Literal
from ember.trees import TreeNode, node


class _CountBuffer(AggregateFunction):
    """``count`` and ``count_if``: buffer ``count: bigint`` (0 for no rows); count_if is Spark's
    ``count(nullif(p, false))``."""

    __slots__ = ()
    default_result: ClassVar[Any] = 0

    @property
    def data_type(self) -> T.DataType:
        return T.LONG

    @property
    def nullable(self) -> bool:
        return False

    def buffer_fields(self) -> tuple[BufferField, ...] | None:
        return (BufferField("count", T.LONG, False),)

    def merge(self, buffers: Sequence[pa.Array], g: np.ndarray, n_groups: int
              ) -> list[pa.Array]:
        return [_merge_counts(buffers[0], g, n_groups)]

    def merge_identity(self, buffers: Sequence[pa.Array]) -> list[pa.Array] | None:
        return list(buffers) if buffers[0].null_count == 0 else None

    @property
    def chunk_mergeable(self) -> bool:
        return True


@node
class Count(_CountBuffer):
    """``count(e1, ..., en)``: rows where every argument is non-NULL.  ``count(*)`` is
    ``Count((Literal(1, INT),))``."""

    items: tuple[Expression, ...]
    fn_name: str | None = field(default=None, compare=False)

    default_name: ClassVar[str] = "count"

    def __post_init__(self) -> None:
        if not self.items:
            raise InternalError("Count needs at least one argument (count(*) is count(1))")
        TreeNode.__post_init__(self)

    def reads_values(self, args: Sequence[Expression], is_distinct: bool) -> bool:
        # count(1), count(*): counts rows, reads no argument values
        return is_distinct or not all(isinstance(a, Literal) and a.value is not None
                                      for a in args)

    def aggregate(self, args: Sequence[pa.Array], g: np.ndarray, n_groups: int) -> pa.Array:
        return pa.array(_count_non_null(args, g, n_groups).astype(np.int64))

    def update(self, args: Sequence[pa.Array], g: np.ndarray, n_groups: int) -> list[pa.Array]:
        return [_count_array(_count_non_null(args, g, n_groups))]

    def update_identity(self, args: Sequence[pa.Array]) -> list[pa.Array] | None:
        if not args:
            return None
        valid = np.ones(len(args[0]), dtype=bool)
        for a in args:
            if pa.types.is_null(a.type) or a.null_count:
                valid &= _valid(a)
        return [_count_array(valid.astype(np.int64))]


@node
class CountIf(_CountBuffer, _BooleanInput):
    """``count_if(p)``: rows where ``p`` is TRUE."""

    child: Expression
    fn_name: str | None = field(default=None, compare=False)

    default_name: ClassVar[str] = "count_if"

    def aggregate(self, args: Sequence[pa.Array], g: np.ndarray, n_groups: int) -> pa.Array:
        m = _true_mask(args[0])
        return pa.array(np.bincount(g[m], minlength=n_groups).astype(np.int64))

    def update(self, args: Sequence[pa.Array], g: np.ndarray, n_groups: int) -> list[pa.Array]:
        m = _true_mask(args[0])
        return [_count_array(np.bincount(g[m], minlength=n_groups))]

    def update_identity(self, args: Sequence[pa.Array]) -> list[pa.Array] | None:
        return [_count_array(_true_mask(args[0]).astype(np.int64))]
