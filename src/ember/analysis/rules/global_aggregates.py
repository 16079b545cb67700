"""GlobalAggregates: a select list with aggregates and no GROUP BY becomes an Aggregate.

Before::  Project [count(1) AS count(1)#3] (t)
After::   Aggregate [], [count(1) AS count(1)#3] (t)

Also ``HAVING`` without ``GROUP BY`` (``UnresolvedHaving`` over a Project): the Project is an
aggregation with no grouping.  Aggregates inside subquery plans or window expressions do not count.
"""

from __future__ import annotations

from ember.analysis.resolution import has_unresolved
from ember.analysis.rules._util import is_aggregate_expr, transform_up_in_run
from ember.expressions.base import Expression
from ember.expressions.windows import WindowExpression
from ember.plans.logical.nodes import Aggregate, LogicalPlan, Project, UnresolvedHaving


def _aggregates_outside_windows(e: Expression) -> bool:
    """An aggregate not inside a window expression (``sum(x) OVER ()`` is no aggregation)."""
    if isinstance(e, WindowExpression):
        return False
    return is_aggregate_expr(e) or any(_aggregates_outside_windows(c) for c in e.children)


def global_aggregates(plan: LogicalPlan, ctx) -> LogicalPlan:
    """``plan`` with each aggregating select list (or HAVING) without GROUP BY turned into a
    global ``Aggregate`` (see module doc)."""
    def rule(p: LogicalPlan) -> LogicalPlan:
        match p:
            case UnresolvedHaving(child=Project(project_list=items, child=child) as proj) if (
                child.resolved and not any(has_unresolved(e) for e in items)
            ) and type(proj) is Project:
                return p.copy(child=Aggregate((), items, child))
            case Project(project_list=items, child=child) if type(p) is Project and (
                child.resolved and any(_aggregates_outside_windows(e) for e in items)
            ):
                return Aggregate((), items, child)
            case _:
                return p

    return transform_up_in_run(plan, rule, ctx, "GlobalAggregates")
