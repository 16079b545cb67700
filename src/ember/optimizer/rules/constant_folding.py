"""ConstantFolding: foldable expressions replaced by their value as a ``Literal``.

Spark 4's rule: top-down over the expressions of every plan node, each maximal ``foldable``
subtree is evaluated once and replaced by a literal::

    Filter (a#1 > (1 + 2))             ==>  Filter (a#1 > 3)
    Project [upper('ab') AS u#3]       ==>  Project [AB AS u#3]

When NOT applied:

- the subtree raises when evaluated (``1/0``, ``CAST('x' AS INT)`` under ANSI): it is left as it
  is, so the error is raised when (and only if) rows are evaluated.  Spark does the same inside
  conditional branches; outside them Spark raises at optimize time, Ember never does;
- non-deterministic expressions (``rand()``) are not foldable; ``Alias``, aggregates, attributes
  and subquery expressions are never foldable;
- the value cannot be represented exactly as a literal of the expression's type (NaN, nested
  types): left as it is (evaluation is shared with ``ember.execution.prepare.fold_constants``).

Subquery plans are not entered (Spark optimizes them separately).  No configuration keys.
Fast path: folding is a pure function of each expression, so it runs through
``ember.trees.transform_down_memo`` (subtrees left unchanged by an earlier run are not walked,
nor evaluated, again).
"""

from __future__ import annotations

import pyarrow as pa

from ember import types as T
from ember.conf import SQLConf
from ember.expressions.base import Expression, Literal
from ember.optimizer.rule_executor import Rule
from ember.plans.logical.nodes import LogicalPlan
from ember.trees import rewrite_bit, transform_down_memo
from ember.expressions.foldable import is_foldable

__all__ = ["ConstantFolding", "fold_expression", "try_fold", "is_foldable"]


_ONE_ROW = pa.RecordBatch.from_struct_array(pa.array([{}], type=pa.struct([])))


def try_fold(e: Expression) -> Literal | None:
    """``e``'s value as a plain ``Literal`` when ``e`` is foldable and evaluates without error to
    an atomic value a literal reproduces exactly; None otherwise (the evaluation scheme of
    ``ember.execution.prepare.fold_constants``)."""
    if isinstance(e, Literal) or not is_foldable(e):
        return None
    try:
        dt = e.data_type
        if not isinstance(dt, T.AtomicType) or isinstance(dt, T.NullType):
            return None
        out = e.eval(_ONE_ROW)
        if isinstance(out, pa.ChunkedArray):
            out = out.combine_chunks()
        if isinstance(out, pa.Scalar):
            out = pa.array([out.as_py()], type=out.type)
        if len(out) != 1 or out.type != dt.to_arrow():
            return None
        lit = Literal(out[0].as_py(), dt)
        if not lit.eval(_ONE_ROW).equals(out):
            return None
    except Exception:  # noqa: BLE001 - it raises per row at run time instead
        return None
    return lit


def _fold(e: Expression) -> Expression | None:
    if isinstance(e, Literal):
        return e
    return try_fold(e)


def fold_expression(e: Expression) -> Expression:
    """``e`` with every maximal foldable subtree folded (top-down, as Spark)."""
    return transform_down_memo(e, _fold, _EXPR_BIT)


_EXPR_BIT = rewrite_bit("ConstantFolding.expression")
_PLAN_BIT = rewrite_bit("ConstantFolding.plan")


def _fold_node(p: LogicalPlan) -> LogicalPlan:
    return p.map_expressions(fold_expression)


class ConstantFolding(Rule):
    """See the module docstring."""

    rule_name = "ConstantFolding"

    def apply(self, plan: LogicalPlan, conf: SQLConf) -> LogicalPlan:
        return transform_down_memo(plan, _fold_node, _PLAN_BIT)
