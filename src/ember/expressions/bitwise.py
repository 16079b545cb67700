"""Bitwise operators over integral values (Spark's ``bitwiseExpressions.scala`` and
``ShiftRight``): ``a & b`` and ``shiftright(a, n)``. ResolveGroupingAnalytics builds
``grouping(col)`` from them: ``cast((shiftright(spark_grouping_id, n) & 1) as tinyint)``.
"""

from __future__ import annotations

import pyarrow as pa
import pyarrow.compute as pc

from ember import types as T
from ember.expressions.base import Expression
from ember.expressions.common import eval_null_intolerant
from ember.trees import node

__all__ = ["BitwiseAnd", "ShiftRight"]


class _IntegralBinary(Expression):
    """Two integral operands; the result has the left one's type, NULL where either is."""

    __slots__ = ()
    left: Expression
    right: Expression

    @property
    def data_type(self) -> T.DataType:
        return self.left.data_type

    @property
    def nullable(self) -> bool:
        return self.left.nullable or self.right.nullable


@node
class BitwiseAnd(_IntegralBinary):
    """``left & right`` over two values of one integral type (Spark's ``BitwiseAnd``)."""

    left: Expression
    right: Expression

    def eval(self, batch: pa.RecordBatch) -> pa.Array:
        left, right = eval_null_intolerant((self.left, self.right), batch)
        return pc.bit_wise_and(left, right).cast(self.data_type.to_arrow())

    def simple_string(self) -> str:
        return f"({self.left.simple_string()} & {self.right.simple_string()})"

    def sql(self) -> str:
        return f"({self.left.sql()} & {self.right.sql()})"


@node
class ShiftRight(_IntegralBinary):
    """``shiftright(left, right)``: arithmetic shift of an int or bigint by ``right`` bits,
    taken modulo the width as the JVM's ``>>`` does (Spark's ``ShiftRight``)."""

    left: Expression
    right: Expression

    def eval(self, batch: pa.RecordBatch) -> pa.Array:
        left, right = eval_null_intolerant((self.left, self.right), batch)
        at = self.data_type.to_arrow()
        width = 64 if at == pa.int64() else 32
        shift = pc.bit_wise_and(right.cast(at), pa.scalar(width - 1, at))
        return pc.shift_right(left.cast(at), shift)

    def simple_string(self) -> str:
        return f"shiftright({self.left.simple_string()}, {self.right.simple_string()})"

    def sql(self) -> str:
        return f"shiftright({self.left.sql()}, {self.right.sql()})"
