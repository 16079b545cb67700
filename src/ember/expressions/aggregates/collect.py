"""``collect_list`` / ``array_agg``, ``collect_set``: the group's non-NULL values as an array;
``listagg`` / ``string_agg``: the values concatenated.

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
import pyarrow.compute as pc

from ember import types as T
from ember.expressions.aggregates.base import AggregateFunction, BufferField, _UnaryAgg
from ember.expressions.aggregates.kernels import _ranks, _valid, _valid_or_none
from ember.expressions.base import Expression, Literal
from ember.expressions.cast import cast_array
from ember.expressions.common import TypeCheckFailure, quoted_sql, sql_type, unexpected_input_type
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


def flatten_lists(lists: pa.Array) -> tuple[pa.Array, np.ndarray]:
    """The values of every list (NULL lists are empty) and the row of the list each came
    from."""
    if isinstance(lists, pa.ChunkedArray):
        lists = lists.combine_chunks()
    parents = np.asarray(pc.list_parent_indices(lists).to_numpy(zero_copy_only=False),
                         dtype=np.int64)
    return lists.flatten(), parents


def concat_lists(lists: pa.Array, g: np.ndarray, n_groups: int, *, distinct: bool = False
                 ) -> pa.Array:
    """Per group, the concatenation of its ``lists`` (rows in order; NULL lists are empty)."""
    flat, parents = flatten_lists(lists)
    return grouped_lists(flat, g[parents], n_groups, distinct=distinct)


class ListBuffer(AggregateFunction):
    """A function whose buffer is one list per group of the rows it needs (``buf``): merge
    concatenates the lists of a group in row order; :meth:`evaluate` computes the result from
    them, so the COMPLETE result is ``evaluate(update(...))``."""

    __slots__ = ()

    def merge(self, buffers: Sequence[pa.Array], g: np.ndarray, n_groups: int
              ) -> list[pa.Array]:
        return [concat_lists(buffers[0], g, n_groups)]

    @property
    def chunk_mergeable(self) -> bool:
        return True

    def aggregate(self, args: Sequence[pa.Array], g: np.ndarray, n_groups: int) -> pa.Array:
        return self.evaluate(self.update(args, g, n_groups))


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


def order_permutation(keys: Sequence[pa.Array], ascending: Sequence[bool],
                      nulls_first: Sequence[bool], g: np.ndarray) -> np.ndarray:
    """Row order by group, then by ``keys`` (each ascending or descending, NULLs first or
    last, NaN largest, ``-0.0`` equal to ``0.0``), ties in row order: one ``np.lexsort``."""
    n = len(g)
    cols: list[np.ndarray] = [np.arange(n, dtype=np.int64)]  # last tie-breaker
    for key, asc, nf in reversed(list(zip(keys, ascending, nulls_first))):
        if isinstance(key, pa.ChunkedArray):
            key = key.combine_chunks()
        if pa.types.is_null(key.type):
            continue
        r = _ranks(key) if len(key) else np.zeros(0, np.int64)
        if not asc:
            r = -r
        valid = _valid_or_none(key)
        if valid is not None:
            r = np.where(valid, r, np.iinfo(np.int64).min if nf else np.iinfo(np.int64).max)
        cols.append(r)
    cols.append(g)
    return np.lexsort(tuple(cols))


@node
class ListAgg(ListBuffer):
    """``listagg(x [, delimiter]) [WITHIN GROUP (ORDER BY ...)]`` (alias ``string_agg``, which
    keeps its name): the group's non-NULL values concatenated with ``delimiter`` (default: none),
    in the WITHIN GROUP order, else input order (Spark's ``ListAgg``).  A string result, binary
    for binary input; other types are cast to string; NULL when the group has no value.  Named
    ``listagg(x, NULL)`` / ``listagg(x, -) WITHIN GROUP (ORDER BY y ASC NULLS FIRST)``.  Buffer
    ``buf``: the group's rows as structs of the value and the ordering keys."""

    child: Expression
    delimiter: Expression
    order_keys: tuple[Expression, ...] = ()
    ascending: tuple[bool, ...] = ()
    nulls_first: tuple[bool, ...] = ()
    fn_name: str | None = field(default=None, compare=False)

    default_name: ClassVar[str] = "listagg"

    @property
    def binary(self) -> bool:
        return isinstance(self.child.data_type, T.BinaryType)

    @property
    def data_type(self) -> T.DataType:
        return T.BINARY if self.binary else T.STRING

    def agg_sql(self, is_distinct: bool) -> str:
        d = "DISTINCT " if is_distinct else ""
        s = f"{self.pretty_name}({d}{self.child.sql()}, {self.delimiter.sql()})"
        if self.order_keys:
            items = ", ".join(
                f"{k.sql()} {'ASC' if a else 'DESC'} {'NULLS FIRST' if nf else 'NULLS LAST'}"
                for k, a, nf in zip(self.order_keys, self.ascending, self.nulls_first))
            s += f" WITHIN GROUP (ORDER BY {items})"
        return s

    def check_input_types(self) -> str | None:
        d = self.delimiter
        if not isinstance(d.data_type, (T.StringType, T.BinaryType, T.NullType)) \
                and not isinstance(d, Literal):
            return unexpected_input_type(2, '("STRING" or "BINARY")', d)
        if d.references or not d.deterministic:
            return TypeCheckFailure(
                f'the input `delimiter` should be a foldable "STRING" expression; however, '
                f'got {quoted_sql(d)}.',
                "NON_FOLDABLE_INPUT",
                {"inputName": "`delimiter`", "inputType": '"STRING"', "inputExpr": quoted_sql(d)})
        for k in self.order_keys:
            if not k.data_type.is_orderable:
                st = sql_type(k.data_type)
                return TypeCheckFailure(
                    f"The {self.pretty_name} does not support ordering on type {st}.",
                    "INVALID_ORDERING_TYPE",
                    {"functionName": f"`{self.pretty_name}`", "dataType": st})
        return None

    def _values(self, arr: pa.Array) -> pa.Array:
        t = self.child.data_type
        if isinstance(t, (T.StringType, T.BinaryType)):
            return arr
        return cast_array(arr, t, T.STRING)

    def buffer_fields(self) -> tuple[BufferField, ...] | None:
        fields = [T.StructField("v", self.data_type, True)]
        fields += [T.StructField(f"o{i}", k.data_type, True)
                   for i, k in enumerate(self.order_keys)]
        return (BufferField("buf", T.ArrayType(T.StructType(tuple(fields)), False), False),)

    def update(self, args: Sequence[pa.Array], g: np.ndarray, n_groups: int) -> list[pa.Array]:
        v = self._values(args[0])
        if isinstance(v, pa.ChunkedArray):
            v = v.combine_chunks()
        want = self.data_type.to_arrow()
        if v.type != want:
            v = v.cast(want)
        keys = [a.combine_chunks() if isinstance(a, pa.ChunkedArray) else a for a in args[2:]]
        keys = [k if k.type == kt.data_type.to_arrow() else k.cast(kt.data_type.to_arrow())
                for k, kt in zip(keys, self.order_keys)]
        rows = pa.StructArray.from_arrays([v, *keys],
                                          names=["v"] + [f"o{i}" for i in range(len(keys))],
                                          mask=pa.array(~_valid(v)))
        return [grouped_lists(rows, g, n_groups)]

    def evaluate(self, buffers: Sequence[pa.Array]) -> pa.Array:
        n_groups = len(buffers[0])
        flat, grp = flatten_lists(buffers[0])
        keys = [flat.field(i + 1) for i in range(len(self.order_keys))]
        order = order_permutation(keys, self.ascending, self.nulls_first, grp)
        counts = np.bincount(grp, minlength=n_groups)
        offsets = np.zeros(n_groups + 1, dtype=np.int64)
        np.cumsum(counts, out=offsets[1:])
        values = flat.field(0).take(pa.array(order, type=pa.int64()))
        big = pa.large_binary() if self.binary else pa.large_string()
        joined = pc.binary_join(pa.LargeListArray.from_arrays(pa.array(offsets),
                                                               values.cast(big)),
                                self._delimiter_value())
        joined = pc.if_else(pa.array(counts > 0), joined, pa.nulls(n_groups, big))
        return joined.cast(self.data_type.to_arrow())

    def _delimiter_value(self) -> pa.Scalar:
        out = self.delimiter.eval(_ONE_ROW)
        if isinstance(out, pa.ChunkedArray):
            out = out.combine_chunks()
        value = out[0].as_py() if isinstance(out, pa.Array) else out.as_py()
        if value is None:
            value = b"" if self.binary else ""
        elif isinstance(value, (bytes, bytearray)):
            value = bytes(value) if self.binary else bytes(value).decode("utf-8", "replace")
        else:
            value = str(value).encode() if self.binary else str(value)
            if isinstance(self.delimiter.data_type, T.BooleanType):
                value = value.lower()
        return pa.scalar(value, pa.large_binary() if self.binary else pa.large_string())


_ONE_ROW = pa.RecordBatch.from_struct_array(pa.array([{}], type=pa.struct([])))
