"""Nested struct fields put in another order, by name: what an ``INSERT ... BY NAME`` does to a
struct value whose fields the table orders differently.

Spark's ``TableOutputResolver.resolveStructType`` / ``resolveArrayType`` (with ``byName``) build
the same value from ``GetStructField``, ``CreateNamedStruct``, ``If(IsNull(...))`` and
``ArrayTransform``; :class:`ReorderStructFields` is that tree as one node, evaluated over the
Arrow arrays (children picked and renamed, the parents' validity kept), so no lambda runs per
element.  The ``order`` spec is built by :mod:`ember.analysis.table_insertion`, which also
raises Spark's errors for missing, ambiguous and extra fields:

- ``None``: the value as it is;
- ``("struct", ((index, name, sub), ...))``: a struct of the input's field ``index`` (itself
  reordered by ``sub``) under ``name``, for each field of the result in order;
- ``("array", sub)``: each element reordered by ``sub``.

>>> from ember.expressions.base import Literal
>>> t = T.StructType((T.StructField("y", T.STRING), T.StructField("x", T.INT)))
>>> ReorderStructFields(Literal(None, t), ("struct", ((1, "x", None), (0, "y", None)))).data_type
struct<x:int,y:string>
"""

from __future__ import annotations

from typing import Any

import pyarrow as pa
import pyarrow.compute as pc

from ember import types as T
from ember.expressions.base import Expression
from ember.expressions.common import to_array
from ember.trees import node

__all__ = ["ReorderStructFields", "reordered_type"]


def reordered_type(dt: T.DataType, order: Any) -> T.DataType:
    """The type of a ``dt`` value reordered by ``order``."""
    if order is None:
        return dt
    if order[0] == "struct":
        assert isinstance(dt, T.StructType)
        return T.StructType(tuple(
            T.StructField(name, reordered_type(dt.fields[i].data_type, sub), dt.fields[i].nullable)
            for i, name, sub in order[1]))
    assert isinstance(dt, T.ArrayType)
    return T.ArrayType(reordered_type(dt.element_type, order[1]), dt.contains_null)


def _reorder(arr: pa.Array, order: Any, to: pa.DataType) -> pa.Array:
    if order is None:
        return arr
    mask = arr.is_null() if arr.null_count else None
    if order[0] == "struct":
        children = [_reorder(pc.struct_field(arr, [i]), sub, to.field(k).type)
                    for k, (i, _, sub) in enumerate(order[1])]
        return pa.StructArray.from_arrays(children, fields=list(to), mask=mask)
    offsets = arr.offsets
    start, end = offsets[0].as_py(), offsets[-1].as_py()
    values = _reorder(arr.values.slice(start, end - start), order[1], to.value_type)
    if start:
        offsets = pc.subtract(offsets, pa.scalar(start, offsets.type))
    return type(arr).from_arrays(offsets, values, type=to, mask=mask)


@node
class ReorderStructFields(Expression):
    """``child``'s nested struct fields taken by name in the order ``order`` gives (see the
    module docstring); a NULL struct or array stays NULL."""

    child: Expression
    order: Any

    @property
    def data_type(self) -> T.DataType:
        return reordered_type(self.child.data_type, self.order)

    @property
    def nullable(self) -> bool:
        return self.child.nullable

    @property
    def foldable(self) -> bool:
        return self.child.foldable

    def eval(self, batch: pa.RecordBatch) -> pa.Array:
        arr = to_array(self.child.eval(batch), batch.num_rows)
        return _reorder(arr, self.order, self.data_type.to_arrow())

    def simple_string(self) -> str:
        return f"reorder_struct_fields({self.child.simple_string()})"

    def sql(self) -> str:
        return f"reorder_struct_fields({self.child.sql()})"
