"""ResolveWindowOrder: window functions need an ordered window; ``rank``-like functions take
the window's order expressions as their children.

Before::  rank() windowspecdefinition(a#1, b#2 ASC NULLS FIRST, ...)
After::   rank(b#2) windowspecdefinition(a#1, b#2 ASC NULLS FIRST, ...)

A window function (not an aggregate) over a window without ORDER BY raises
``WINDOW_FUNCTION_FRAME_NOT_ORDERED`` (Spark's ``windowFunctionWithWindowFrameNotOrderedError``).
"""

from __future__ import annotations

from ember.analysis.resolution import qualified_sql
from ember.errors import AnalysisError
from ember.expressions.base import Expression
from ember.expressions.windows import (
    RankLike, WindowExpression, WindowFunction, WindowSpecDefinition,
)
from ember.analysis.rules._util import transform_up_in_run
from ember.plans.logical.nodes import LogicalPlan


def _not_ordered(wf: WindowFunction) -> AnalysisError:
    name, text = wf.pretty_name, qualified_sql(wf)
    return AnalysisError(
        f"Window function {name} requires the window to be ordered. You need to add an ORDER "
        f"BY clause. For example: SELECT {text} OVER (PARTITION BY window_partition ORDER BY "
        "window_ordering) FROM table.", error_class="WINDOW_FUNCTION_FRAME_NOT_ORDERED",
        parameters={"wf_name": name, "wf_expr": text})


def _rule(e: Expression) -> Expression | None:
    match e:
        case WindowExpression(window_function=WindowFunction() as wf,
                              window_spec=WindowSpecDefinition(order_spec=())):
            raise _not_ordered(wf)
        case WindowExpression(window_function=RankLike() as rank,
                              window_spec=WindowSpecDefinition(order_spec=order) as spec) if (
                all(o.resolved for o in order)):
            children = tuple(o.child for o in order)
            if rank.order == children:
                return None
            return WindowExpression(rank.with_order(children), spec)
        case _:
            return None


def resolve_window_order(plan: LogicalPlan, ctx) -> LogicalPlan:
    """``plan`` with window functions checked for ORDER BY and rank-like functions given the
    order expressions (see module doc)."""

    def rule(p: LogicalPlan) -> LogicalPlan:
        if not any(e.contains(WindowExpression) for e in p.expressions()):
            return p
        return p.map_expressions(lambda e: e.transform_up(_rule))

    return transform_up_in_run(plan, rule, ctx, "ResolveWindowOrder")
