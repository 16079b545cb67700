"""Small helpers shared by analyzer rules."""

from __future__ import annotations

from collections.abc import Callable

from ember.expressions.aggregates import AggregateExpression
from ember.expressions.base import Expression
from ember.plans.logical.nodes import LogicalPlan


def is_aggregate_expr(e: Expression) -> bool:
    """Whether ``e`` is an ``AggregateExpression`` (an aggregate function call)."""
    return isinstance(e, AggregateExpression)


def contains_aggregate(e: Expression) -> bool:
    """Whether ``e`` holds an aggregate expression anywhere."""
    return e.exists(is_aggregate_expr)


def map_subquery_plans(
    e: Expression, fn: Callable[[LogicalPlan], LogicalPlan]
) -> Expression:
    """``e`` with ``fn`` applied to the plan of every subquery expression in it."""
    from ember.expressions.subquery import SubqueryExpression

    def rule(x: Expression) -> Expression | None:
        if isinstance(x, SubqueryExpression):
            new = fn(x.plan)
            return x if new is x.plan else x.with_plan(new)
        return None

    return e.transform_up(rule)
