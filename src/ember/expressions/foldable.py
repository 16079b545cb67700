"""Catalyst's ``foldable`` as a structural rule over Ember's expressions (shared by the
optimizer's constant folding and the analysis and optimizer rules that, as Spark's, leave
foldable arguments in place: ExtractWindowExpressions, RewriteDistinctAggregates)."""

from __future__ import annotations

from ember.expressions.aggregates import AggregateExpression, AggregateFunction
from ember.expressions.base import (
    Alias, AttributeReference, BoundReference, Expression, Literal, SortOrder, Unevaluable,
)
from ember.expressions.subquery import OuterReference, SubqueryExpression

__all__ = ["is_foldable"]


def is_foldable(e: Expression) -> bool:
    """Catalyst's ``foldable``: a literal, or a deterministic expression over foldable children
    only (Ember's expression classes mostly leave ``foldable`` at the base default, so the
    structural rule lives here).  Attributes, aliases, aggregates, sort orders and subquery
    expressions are never foldable."""

    if isinstance(e, Literal):
        return True
    if isinstance(e, (AttributeReference, BoundReference, OuterReference, Alias, SortOrder,
                      AggregateExpression, AggregateFunction, SubqueryExpression, Unevaluable)):
        return False
    try:
        if not e.deterministic:
            return False
        if e.foldable:
            return True
    except Exception:  # noqa: BLE001 - cannot answer: not folded
        return False
    kids = e.children
    return bool(kids) and all(is_foldable(c) for c in kids)
