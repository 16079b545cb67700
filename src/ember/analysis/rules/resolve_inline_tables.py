"""ResolveInlineTables: ``VALUES (1, 'a'), (2, NULL) AS t(a, b)`` -> ``LocalRelation``.

Before::  UnresolvedInlineTable [a, b], [[1, a], [2, null]]
After::   LocalRelation [a#1, b#2]   (Arrow table built column by column)

Each row expression must be foldable; it is evaluated once on a one-row batch. Column types are
the wider type of the column's values (``ember.coercion.find_wider_type``); names default to
``col1``, ``col2`` ... Errors (Spark's): ``INVALID_INLINE_TABLE.NUM_COLUMNS_MISMATCH``,
``INVALID_INLINE_TABLE.INCOMPATIBLE_TYPES_IN_INLINE_TABLE``,
``INVALID_INLINE_TABLE.CANNOT_EVALUATE_EXPRESSION_IN_INLINE_TABLE``.
"""

from __future__ import annotations

import pyarrow as pa

from ember import types as T
from ember.analysis.resolution import has_unresolved, quote
from ember.analysis.rules._util import transform_up_in_run
from ember.analysis.rules.resolve_eval_mode import expression_in_eval_mode
from ember.errors import AnalysisError, ExecutionError
from ember.expressions.base import AttributeReference, Expression, Literal
from ember.plans.logical.nodes import LocalRelation, LogicalPlan, UnresolvedInlineTable
from ember.coercion import find_wider_type
from ember.expressions.cast import Cast
from ember.expressions.foldable import is_foldable

_ONE_ROW = pa.RecordBatch.from_arrays([pa.array([0], pa.int8())], names=["_"])


def _wider(types: list[T.DataType]) -> T.DataType | None:
    distinct: list[T.DataType] = []
    for t in types:
        if t not in distinct:
            distinct.append(t)
    if len(distinct) == 1:
        return distinct[0]

    return find_wider_type(distinct, string_promotion=False)


def _column_array(exprs, target: T.DataType) -> pa.Array:
    at = target.to_arrow()
    if all(isinstance(e, Literal) and e.data_type == target for e in exprs):
        return pa.array([e.value for e in exprs], type=at)
    parts = []
    for e in exprs:  # per row expression: analysis-time work on literal rows
        try:
            arr = e.eval(_ONE_ROW)
            if arr.type != at:
                arr = _cast_value(e, target)
        except ExecutionError as err:  # Spark's EvaluateUnresolvedInlineTable wraps it
            raise AnalysisError(
                f"Invalid inline table. Failed to evaluate the SQL expression: \"{e.sql()}\". "
                "Please check your syntax and ensure all required tables and columns are "
                "available.", error_class="INVALID_INLINE_TABLE.FAILED_SQL_EXPRESSION_EVALUATION",
                parameters={"sqlExpr": f'"{e.sql()}"'}) from err
        parts.append(arr)
    return pa.concat_arrays(parts) if parts else pa.array([], type=at)


def _cast_value(e: Expression, target: T.DataType) -> pa.Array:
    """``e`` (a foldable row value) cast to the column type, with Spark's cast semantics."""

    return Cast(e, target).eval(_ONE_ROW)


def resolve_inline_tables(plan: LogicalPlan, ctx) -> LogicalPlan:
    """``plan`` with every ``UnresolvedInlineTable`` whose rows are resolved turned into a
    ``LocalRelation``."""
    def rule(p: LogicalPlan) -> LogicalPlan:
        match p:
            case UnresolvedInlineTable(names=names, rows=rows) if not any(
                has_unresolved(e) for r in rows for e in r
            ):
                return _convert(names, tuple(
                    tuple(expression_in_eval_mode(e, ctx) for e in r) for r in rows))
            case _:
                return p

    return transform_up_in_run(plan, rule, ctx, "ResolveInlineTables")


def _convert(names: tuple[str, ...], rows) -> LocalRelation:
    width = len(names) if names else (len(rows[0]) if rows else 0)
    for i, r in enumerate(rows):
        if len(r) != width:
            raise AnalysisError(
                f"Invalid inline table. Inline table expected {width} columns but found "
                f"{len(r)} columns in row {i}.",
                error_class="INVALID_INLINE_TABLE.NUM_COLUMNS_MISMATCH",
                parameters={"expectedNumCols": str(width), "actualNumCols": str(len(r)),
                            "rowIndex": str(i)},
            )
    col_names = tuple(names) if names else tuple(f"col{i + 1}" for i in range(width))
    for r in rows:
        for e in r:
            if not is_foldable(e):  # Catalyst's foldable (timestamp_seconds(1) is)
                raise AnalysisError(
                    f"Invalid inline table. Cannot evaluate the expression {e.sql()} in inline "
                    "table definition.",
                    error_class="INVALID_INLINE_TABLE.CANNOT_EVALUATE_EXPRESSION_IN_INLINE_TABLE",
                    parameters={"expr": f'"{e.sql()}"'},
                )
    attrs = []
    arrays = []
    for c in range(width):
        col = [r[c] for r in rows]
        dtype = _wider([e.data_type for e in col])
        if dtype is None:
            raise AnalysisError(
                f"Invalid inline table. Found incompatible types in the column "
                f"{quote(col_names[c])} for inline table.",
                error_class="INVALID_INLINE_TABLE.INCOMPATIBLE_TYPES_IN_INLINE_TABLE",
                parameters={"colName": quote(col_names[c])},
            )
        nullable = any(e.nullable for e in col)
        attrs.append(AttributeReference(col_names[c], dtype, nullable))
        arrays.append(_column_array(col, dtype))
    schema = pa.schema(
        [pa.field(a.name, a.data_type.to_arrow(), nullable=True) for a in attrs]
    )
    table = pa.Table.from_arrays(arrays, schema=schema)
    return LocalRelation(tuple(attrs), table)
