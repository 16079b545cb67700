"""Bitwise operators over integral values (Spark's ``bitwiseExpressions.scala`` and
``ShiftRight``): ``a & b``, ``a | b``, ``a ^ b`` and ``shiftright(a, n)``. ResolveGroupingAnalytics builds
``grouping(col)`` from them: ``cast((shiftright(spark_grouping_id, n) & 1) as tinyint)``.
"""

from __future__ import annotations

import pyarrow as pa
import pyarrow.compute as pc

from ember import types as T
from ember.expressions.base import Expression
from ember.expressions.common import TypeCheckFailure, diff_types, eval_null_intolerant, sql_type
from ember.trees import node

__all__ = ["BitwiseAnd", "BitwiseOr", "BitwiseXor", "ShiftRight"]


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


class _BitwiseOperator(_IntegralBinary):
    """``left op right`` over two values of one integral type, the operands widened by type
    coercion (Spark's BinaryArithmetic with ``IntegralType`` inputs)."""

    __slots__ = ()
    symbol = "?"
    kernel = staticmethod(pc.bit_wise_and)

    def check_input_types(self) -> str | None:
        lt, rt = self.left.data_type, self.right.data_type
        if lt != rt and not isinstance(lt, T.NullType) and not isinstance(rt, T.NullType):
            return diff_types(self.left, self.right)
        t = rt if isinstance(lt, T.NullType) else lt
        if not (t.is_integral or isinstance(t, T.NullType)):
            return TypeCheckFailure(
                f'the binary operator requires the input type "INTEGRAL", not {sql_type(t)}.',
                "BINARY_OP_WRONG_TYPE",
                {"inputType": '"INTEGRAL"', "actualDataType": sql_type(t)})
        return None

    @property
    def data_type(self) -> T.DataType:
        t = self.left.data_type
        return self.right.data_type if isinstance(t, T.NullType) else t

    def eval(self, batch: pa.RecordBatch) -> pa.Array:
        left, right = eval_null_intolerant((self.left, self.right), batch)
        at = self.data_type.to_arrow()
        if pa.types.is_null(at):
            return pa.nulls(len(left))
        return type(self).kernel(left.cast(at), right.cast(at))

    def simple_string(self) -> str:
        return f"({self.left.simple_string()} {self.symbol} {self.right.simple_string()})"

    def sql(self) -> str:
        return f"({self.left.sql()} {self.symbol} {self.right.sql()})"


@node
class BitwiseAnd(_BitwiseOperator):
    """``left & right`` (Spark's ``BitwiseAnd``)."""

    left: Expression
    right: Expression
    symbol = "&"
    kernel = staticmethod(pc.bit_wise_and)


@node
class BitwiseOr(_BitwiseOperator):
    """``left | right`` (Spark's ``BitwiseOr``)."""

    left: Expression
    right: Expression
    symbol = "|"
    kernel = staticmethod(pc.bit_wise_or)


@node
class BitwiseXor(_BitwiseOperator):
    """``left ^ right`` (Spark's ``BitwiseXor``)."""

    left: Expression
    right: Expression
    symbol = "^"
    kernel = staticmethod(pc.bit_wise_xor)
