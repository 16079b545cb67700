"""``collect_list`` / ``array_agg``, ``collect_set``: the group's non-NULL values as an array.

The buffer is the array itself (Spark's ``Collect`` is a ``TypedImperativeAggregate`` whose buffer
``buf`` is the serialized collection); update and merge build Arrow large_list arrays per group
with one stable sort of the rows by group (:func:`grouped_lists`), no loop per row or group.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import field
from typing import Any, ClassVar

import numpy as np
import pyarrow as pa

from ember import types as T
from ember.expressions.aggregates.base import BufferField, _UnaryAgg
from ember.expressions.aggregates.kernels import _ranks, _valid_or_none
from ember.expressions.base import Expression
from ember.trees import node


def grouped_lists(values: pa.Array, g: np.ndarray, n_groups: int, *, distinct: bool = False
                  ) -> pa.Array:
    """Per group, a large_list of its non-NULL ``values`` in row order (``distinct``: the first
    occurrence of each value, equal as Spark compares them: every NaN equal).  Groups without
    values get ``[]``."""
    if isinstance(values, pa.ChunkedArray):
        values = values.combine_chunks()
    valid = _valid_or_none(values)
    rows = np.arange(len(values), dtype=np.int64)
    if valid is not None:
        rows = rows[valid]
    gv = g[rows]
    if distinct and len(rows):
        ranks = _ranks(values.take(pa.array(rows)))
        # first row of each (group, value): sort by (group, value, row), keep run starts
        order = np.lexsort((rows, ranks, gv))
        sg, sr = gv[order], ranks[order]
        start = np.ones(len(order), dtype=bool)
        start[1:] = (sg[1:] != sg[:-1]) | (sr[1:] != sr[:-1])
        keep = np.sort(order[start])  # back to row order
        rows, gv = rows[keep], gv[keep]
    order = np.argsort(gv, kind="stable")
    counts = np.bincount(gv, minlength=n_groups)
    offsets = np.zeros(n_groups + 1, dtype=np.int64)
    np.cumsum(counts, out=offsets[1:])
    taken = values.take(pa.array(rows[order], type=pa.int64()))
    return pa.LargeListArray.from_arrays(pa.array(offsets), taken)


def concat_lists(lists: pa.Array, g: np.ndarray, n_groups: int, *, distinct: bool = False
                 ) -> pa.Array:
    """Per group, the concatenation of its ``lists`` (rows in order; NULL lists are empty)."""
    if isinstance(lists, pa.ChunkedArray):
        lists = lists.combine_chunks()
    if not pa.types.is_large_list(lists.type):
        lists = lists.cast(pa.large_list(lists.type.value_type))
    flat = lists.flatten()  # skips NULL lists
    parents = np.asarray(pa.compute.list_parent_indices(lists).to_numpy(zero_copy_only=False),
                         dtype=np.int64)
    return grouped_lists(flat, g[parents], n_groups, distinct=distinct)


class _Collect(_UnaryAgg):
    """collect_list, collect_set: result ``array<input type>`` (never NULL: ``[]`` on empty
    input), buffer ``buf`` the same array (Spark's ``Collect``)."""

    __slots__ = ()
    distinct_values: ClassVar[bool] = False
    default_result: ClassVar[Any] = []

    @property
    def data_type(self) -> T.DataType:
        return T.ArrayType(self.child.data_type, False)

    @property
    def nullable(self) -> bool:
        return False

    def aggregate(self, args: Sequence[pa.Array], g: np.ndarray, n_groups: int) -> pa.Array:
        return self._lists(grouped_lists(args[0], g, n_groups, distinct=self.distinct_values))

    def _lists(self, arr: pa.Array) -> pa.Array:
        want = self.data_type.to_arrow()
        return arr if arr.type == want else arr.cast(want)

    def buffer_fields(self) -> tuple[BufferField, ...] | None:
        return (BufferField("buf", self.data_type, False),)

    def update(self, args: Sequence[pa.Array], g: np.ndarray, n_groups: int) -> list[pa.Array]:
        return [self.aggregate(args, g, n_groups)]

    def merge(self, buffers: Sequence[pa.Array], g: np.ndarray, n_groups: int
              ) -> list[pa.Array]:
        return [self._lists(concat_lists(buffers[0], g, n_groups, distinct=self.distinct_values))]

    @property
    def chunk_mergeable(self) -> bool:
        return True


@node
class CollectList(_Collect):
    """``collect_list(x)`` (alias ``array_agg``, named ``collect_list(x)`` either way, as Spark
    4 does): the group's non-NULL values in input order."""

    child: Expression
    fn_name: str | None = field(default=None, compare=False)

    default_name: ClassVar[str] = "collect_list"


@node
class CollectSet(_Collect):
    """``collect_set(x)``: the group's distinct non-NULL values (Ember: in order of first
    occurrence; Spark's order is its hash set's)."""

    child: Expression
    fn_name: str | None = field(default=None, compare=False)

    default_name: ClassVar[str] = "collect_set"
    distinct_values: ClassVar[bool] = True
    duplicate_agnostic: ClassVar[bool] = True
