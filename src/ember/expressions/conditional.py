"""Conditional expressions: CASE WHEN, IF, COALESCE, GREATEST, LEAST.

Branches are evaluated only on the rows that take them when they may raise (see
:func:`ember.expressions.common.eval_where`), so ``CASE WHEN b = 0 THEN NULL ELSE a / b END`` does
not raise ``DIVIDE_BY_ZERO``, exactly as in Spark.  ``nullif(a, b)`` is built by the registry as
``If(EqualTo(a, b), Literal(None, t), a)`` wrapped for display (see ``misc.FunctionCall``).
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from ember import types as T
from ember.expressions.base import Expression
from ember.expressions.common import (
    TypeCheckFailure,
    eval_where,
    full_null,
    is_float_type,
    sql_type,
    to_array,
    to_mask,
    unexpected_input_type,
)
from ember.trees import node

__all__ = ["CaseWhen", "If", "Coalesce", "Greatest", "Least"]


def _common_type(exprs) -> T.DataType:
    for e in exprs:
        t = e.data_type
        if not isinstance(t, T.NullType):
            return t
    return T.NULL


def _same_types(exprs, fn: str) -> str | None:
    types = [e.data_type for e in exprs]
    non_null = [t for t in types if not isinstance(t, T.NullType)]
    if any(t != non_null[0] for t in non_null):
        listed = ", ".join(sql_type(t) for t in types)
        return TypeCheckFailure(
            f"Input to `{fn}` should all be the same type, but it's [{listed}].",
            "DATA_DIFF_TYPES", {"functionName": f"`{fn}`", "dataType": f"[{listed}]"})
    return None


def _as_type(arr: pa.Array, dtype: T.DataType) -> pa.Array:
    at = dtype.to_arrow()
    if arr.type == at:
        return arr
    if pa.types.is_null(arr.type):
        return pa.nulls(len(arr), at)
    return arr.cast(at)


@node
class CaseWhen(Expression):
    """``CASE WHEN c1 THEN v1 ... [ELSE e] END`` (``CASE x WHEN ...`` is parsed to equalities)."""

    conditions: tuple[Expression, ...]
    values: tuple[Expression, ...]
    else_value: Expression | None = None

    def _branches(self) -> tuple[Expression, ...]:
        return tuple(self.values) + ((self.else_value,) if self.else_value is not None else ())

    @property
    def data_type(self) -> T.DataType:
        return _common_type(self._branches())

    @property
    def nullable(self) -> bool:
        return self.else_value is None or any(v.nullable for v in self._branches())

    def check_input_types(self) -> str | None:
        """Spark's order: branch types first, then every WHEN must be exactly BOOLEAN (a bare
        ``WHEN NULL`` of type VOID is rejected, unlike ``IF(NULL, ...)``)."""
        problem = _same_types(self._branches(), "casewhen")
        if problem is not None:
            return problem
        for i, c in enumerate(self.conditions):
            if not isinstance(c.data_type, T.BooleanType):
                return unexpected_input_type(i + 1, '"BOOLEAN"', c)
        return None

    def eval(self, batch: pa.RecordBatch) -> pa.Array:
        n = batch.num_rows
        dtype = self.data_type
        result = full_null(n, dtype)
        remaining = np.ones(n, dtype=bool)
        for cond, value in zip(self.conditions, self.values):
            if not remaining.any():
                break
            c = eval_where(cond, batch, remaining)
            taken = remaining & to_mask(_as_type(c, T.BOOLEAN))
            if taken.any():
                v = _as_type(eval_where(value, batch, taken), dtype)
                result = pc.if_else(pa.array(taken), v, result)
            remaining &= ~taken
        if self.else_value is not None and remaining.any():
            v = _as_type(eval_where(self.else_value, batch, remaining), dtype)
            result = pc.if_else(pa.array(remaining), v, result)
        return result

    def _render(self, f) -> str:
        parts = ["CASE"]
        for c, v in zip(self.conditions, self.values):
            parts.append(f"WHEN {f(c)} THEN {f(v)}")
        if self.else_value is not None:
            parts.append(f"ELSE {f(self.else_value)}")
        parts.append("END")
        return " ".join(parts)

    def simple_string(self) -> str:
        return self._render(lambda e: e.simple_string())

    def sql(self) -> str:
        return self._render(lambda e: e.sql())


@node
class If(Expression):
    """``IF(predicate, true_value, false_value)``."""

    predicate: Expression
    true_value: Expression
    false_value: Expression

    @property
    def data_type(self) -> T.DataType:
        return _common_type((self.true_value, self.false_value))

    @property
    def nullable(self) -> bool:
        return self.true_value.nullable or self.false_value.nullable

    def check_input_types(self) -> str | None:
        if not isinstance(self.predicate.data_type, (T.BooleanType, T.NullType)):
            return unexpected_input_type(1, '"BOOLEAN"', self.predicate)
        return _same_types((self.true_value, self.false_value), "if")

    def eval(self, batch: pa.RecordBatch) -> pa.Array:
        n = batch.num_rows
        dtype = self.data_type
        cond = to_mask(_as_type(to_array(self.predicate.eval(batch), n), T.BOOLEAN))
        t = _as_type(eval_where(self.true_value, batch, cond), dtype)
        f = _as_type(eval_where(self.false_value, batch, ~cond), dtype)
        return pc.if_else(pa.array(cond), t, f)

    def simple_string(self) -> str:
        return (f"if ({self.predicate.simple_string()}) {self.true_value.simple_string()} "
                f"else {self.false_value.simple_string()}")

    def sql(self) -> str:
        return f"(IF({self.predicate.sql()}, {self.true_value.sql()}, {self.false_value.sql()}))"


@node
class Coalesce(Expression):
    """``coalesce(e1, e2, ...)``: the first non-NULL value (later items evaluated only where
    needed)."""

    items: tuple[Expression, ...]

    @property
    def data_type(self) -> T.DataType:
        return _common_type(self.items)

    @property
    def nullable(self) -> bool:
        return all(i.nullable for i in self.items)

    def check_input_types(self) -> str | None:
        return _same_types(self.items, "coalesce")

    def eval(self, batch: pa.RecordBatch) -> pa.Array:
        n = batch.num_rows
        dtype = self.data_type
        result: pa.Array | None = None
        for item in self.items:
            if result is None:
                result = _as_type(to_array(item.eval(batch), n), dtype)
            else:
                missing = ~to_mask(pc.is_valid(result))
                if not missing.any():
                    break
                v = _as_type(eval_where(item, batch, missing), dtype)
                result = pc.coalesce(result, v)
        return result if result is not None else full_null(n, dtype)

    def simple_string(self) -> str:
        return f"coalesce({', '.join(i.simple_string() for i in self.items)})"

    def sql(self) -> str:
        return f"coalesce({', '.join(i.sql() for i in self.items)})"


class _MinMaxElementwise(Expression):
    __slots__ = ()
    fn_name = "?"
    items: tuple[Expression, ...]

    @property
    def data_type(self) -> T.DataType:
        return _common_type(self.items)

    @property
    def nullable(self) -> bool:
        return all(i.nullable for i in self.items)

    def check_input_types(self) -> str | None:
        if len(self.items) < 2:
            return TypeCheckFailure(
                f"The `{self.fn_name}` requires at least 2 parameters.",
                "WRONG_NUM_ARGS", {"functionName": f"`{self.fn_name}`"})
        err = _same_types(self.items, self.fn_name)
        if err:
            return err
        if not self.data_type.is_orderable:
            return TypeCheckFailure(f"The {sql_type(self.data_type)} type is not orderable.",
                                    "INVALID_ORDERING_TYPE",
                                    {"functionName": f"`{self.fn_name}`"})
        return None

    def eval(self, batch: pa.RecordBatch) -> pa.Array:
        n = batch.num_rows
        dtype = self.data_type
        arrs = [_as_type(to_array(i.eval(batch), n), dtype) for i in self.items]
        if isinstance(dtype, T.NullType):
            return pa.nulls(n)
        fn = pc.max_element_wise if self.fn_name == "greatest" else pc.min_element_wise
        at = dtype.to_arrow()
        if pa.types.is_temporal(at):
            # Arrow has no element-wise min/max kernel for tz-aware timestamps: compare the
            # physical integers (dates: days, timestamps: microseconds).
            phys = pa.int32() if pa.types.is_date32(at) else pa.int64()
            return fn(*[a.cast(phys) for a in arrs], skip_nulls=True).cast(at)
        out = fn(*arrs, skip_nulls=True)
        if is_float_type(dtype) and self.fn_name == "greatest":
            # Spark: NaN is larger than any other value.
            any_nan = None
            for a in arrs:
                isn = pc.fill_null(pc.is_nan(a), False)
                any_nan = isn if any_nan is None else pc.or_(any_nan, isn)
            out = pc.if_else(any_nan, pa.scalar(float("nan"), out.type), out)
        elif is_float_type(dtype):
            all_nan = None
            for a in arrs:
                isn = pc.fill_null(pc.or_(pc.is_nan(a), pc.is_null(a)), True)
                all_nan = isn if all_nan is None else pc.and_(all_nan, isn)
            out = pc.if_else(pc.and_(all_nan, pc.is_valid(out)),
                             pa.scalar(float("nan"), out.type), out)
        return out

    def simple_string(self) -> str:
        return f"{self.fn_name}({', '.join(i.simple_string() for i in self.items)})"

    def sql(self) -> str:
        return f"{self.fn_name}({', '.join(i.sql() for i in self.items)})"


@node
class Greatest(_MinMaxElementwise):
    """``greatest(e1, e2, ...)``: the largest non-NULL value (NULL only if all are NULL)."""

    items: tuple[Expression, ...]
    fn_name = "greatest"


@node
class Least(_MinMaxElementwise):
    """``least(e1, e2, ...)``: the smallest non-NULL value."""

    items: tuple[Expression, ...]
    fn_name = "least"
