"""Subquery expressions and outer references.

A subquery expression holds a logical plan (not an expression child).  Correlated columns inside
that plan are wrapped in :class:`OuterReference` by the analyzer; ``outer_attrs`` lists the outer
attributes the subquery reads.  None of these are evaluated directly: the subquery rewrite
(``ember.optimizer.rules.rewrite_subquery``) turns them into joins before execution.
"""

from __future__ import annotations

from dataclasses import field
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc

from ember import types as T
from ember.errors import ExecutionError
from ember.expressions.base import (
    AttributeReference,
    Expression,
    LeafExpression,
    Unevaluable,
    new_expr_id,
)
from ember.trees import node


@node
class OuterReference(LeafExpression):
    """A column of an enclosing query, referenced from inside a subquery."""

    attr: AttributeReference

    @property
    def data_type(self) -> T.DataType:
        return self.attr.data_type

    @property
    def nullable(self) -> bool:
        return self.attr.nullable

    @property
    def resolved(self) -> bool:
        return True

    @property
    def references(self) -> frozenset[int]:
        # Outer references are not inputs of the operator that holds them.
        return frozenset()

    @property
    def name(self) -> str:
        return self.attr.name

    def simple_string(self) -> str:
        return f"outer({self.attr.simple_string()})"

    def sql(self) -> str:
        # Spark's ``OuterReference.sql``: the qualified name, unquoted
        return f"outer({'.'.join((*self.attr.qualifier, self.attr.name))})"


class SubqueryExpression(Expression):
    """Base of expressions that hold a plan.  ``plan`` is a LogicalPlan."""

    __slots__ = ()
    plan: Any

    @property
    def correlated(self) -> bool:
        return bool(getattr(self, "outer_attrs", ()))

    @property
    def references(self) -> frozenset[int]:
        # Spark's SubqueryExpression.references: the outer columns the subquery reads are inputs
        # of the operator holding it (so pushdown / pruning keep them available there).
        out = set(Expression.references.fget(self))  # type: ignore[attr-defined]
        for a in getattr(self, "outer_attrs", ()):
            out |= a.references
        return frozenset(out)

    def with_plan(self, plan: Any) -> "SubqueryExpression":
        return self.copy(plan=plan)  # type: ignore[attr-defined]

    def canonicalize_node(self) -> Expression:
        # The id only tells subquery expressions apart in plan strings: erased, as Spark's
        # canonical subquery expressions carry ExprId(0).
        return self.copy(id=0) if getattr(self, "id", 0) != 0 else self  # type: ignore

    @property
    def resolved(self) -> bool:
        return bool(self.plan.resolved) and all(c.resolved for c in self.children)


@node
class ScalarSubquery(SubqueryExpression, LeafExpression):
    """``(SELECT max(x) FROM t WHERE t.k = outer.k)``: one column, at most one row."""

    plan: Any
    outer_attrs: tuple[Expression, ...] = ()
    id: int = field(default_factory=new_expr_id)

    @property
    def children(self) -> tuple[Expression, ...]:
        return ()

    @property
    def data_type(self) -> T.DataType:
        return self.plan.output[0].data_type

    @property
    def nullable(self) -> bool:
        return True

    def simple_string(self) -> str:
        return f"scalar-subquery#{self.id} [{', '.join(a.simple_string() for a in self.outer_attrs)}]"

    def sql(self) -> str:
        return f"scalarsubquery({', '.join(a.sql() for a in self.outer_attrs)})"


@node
class Exists(SubqueryExpression, Unevaluable, LeafExpression):
    """``EXISTS (subquery)``."""

    plan: Any
    outer_attrs: tuple[Expression, ...] = ()
    id: int = field(default_factory=new_expr_id)

    @property
    def children(self) -> tuple[Expression, ...]:
        return ()

    @property
    def resolved(self) -> bool:
        return bool(self.plan.resolved)

    @property
    def data_type(self) -> T.DataType:
        return T.BOOLEAN

    @property
    def nullable(self) -> bool:
        return False

    def simple_string(self) -> str:
        return f"exists#{self.id} [{', '.join(a.simple_string() for a in self.outer_attrs)}]"

    def sql(self) -> str:
        return f"exists({', '.join(a.sql() for a in self.outer_attrs)})"


@node
class LateralSubquery(SubqueryExpression, Unevaluable, LeafExpression):
    """The right side of a ``LATERAL`` join (Spark's ``LateralSubquery``): a subquery whose plan
    may read the columns of the FROM items before it (``outer_attrs``).  It is held by a
    ``LateralJoin`` and never evaluated: RewriteLateralSubquery turns the join into a plain one."""

    plan: Any
    outer_attrs: tuple[Expression, ...] = ()
    id: int = field(default_factory=new_expr_id)

    @property
    def children(self) -> tuple[Expression, ...]:
        return ()

    @property
    def resolved(self) -> bool:
        return bool(self.plan.resolved)

    @property
    def data_type(self) -> T.DataType:
        return T.StructType(tuple(T.StructField(a.name, a.data_type, a.nullable)
                                  for a in self.plan.output))

    @property
    def nullable(self) -> bool:
        return False

    def simple_string(self) -> str:
        outer = ", ".join(a.simple_string() for a in self.outer_attrs)
        return f"lateral-subquery#{self.id} [{outer}]"

    def sql(self) -> str:
        return f"lateralsubquery({', '.join(a.sql() for a in self.outer_attrs)})"


@node
class InSubquery(SubqueryExpression, Unevaluable):
    """``(v1, ..., vn) IN (subquery)``; ``NOT IN`` is ``Not(InSubquery(...))``."""

    values: tuple[Expression, ...]
    plan: Any
    outer_attrs: tuple[Expression, ...] = ()
    id: int = field(default_factory=new_expr_id)

    @property
    def resolved(self) -> bool:
        return bool(self.plan.resolved) and all(v.resolved for v in self.values)

    @property
    def data_type(self) -> T.DataType:
        return T.BOOLEAN

    @property
    def nullable(self) -> bool:
        return True

    def simple_string(self) -> str:
        vals = ", ".join(v.simple_string() for v in self.values)
        if len(self.values) > 1:
            vals = f"named_struct({vals})"
        outer = ", ".join(a.simple_string() for a in self.outer_attrs)
        return f"{vals} IN (list#{self.id} [{outer}])"

    def sql(self) -> str:
        if len(self.values) > 1:
            # Spark wraps several values in a struct: named_struct('a', a, '_1', (a + 1))
            parts = []
            for i, v in enumerate(self.values):
                name = getattr(v, "attr_name", None)  # an attribute keeps its name
                text = getattr(v, "text", None)  # toPrettySQL's stand-in for an attribute
                if name is None and isinstance(text, str) and text.isidentifier() and text != "NULL":
                    name = text
                parts.append(f"'{name or f'_{i}'}', {v.sql()}")
            return f"(named_struct({', '.join(parts)}) IN (listquery()))"
        return f"({self.values[0].sql()} IN (listquery()))"


@node
class CheckScalarSubqueryRows(Expression):
    """``value``, after checking that the scalar subquery it comes from returned at most one row
    (``row_count`` is that subquery's ``count(1)``); raises ``SCALAR_SUBQUERY_TOO_MANY_ROWS``."""

    row_count: Expression
    value: Expression

    @property
    def data_type(self) -> T.DataType:
        return self.value.data_type

    @property
    def nullable(self) -> bool:
        return True

    @property
    def pretty_name(self) -> str:
        return "check_scalar_subquery_rows"

    def eval(self, batch: pa.RecordBatch) -> pa.Array:
        counts = self.row_count.eval(batch)
        if len(counts):
            most = pc.max(counts).as_py()
            if most is not None and most > 1:
                raise ExecutionError(
                    "More than one row returned by a subquery used as an expression.",
                    error_class="SCALAR_SUBQUERY_TOO_MANY_ROWS",
                )
        return self.value.eval(batch)
