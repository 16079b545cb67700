"""OptimizeWindowFunctions: ``first(x)`` over a ROWS frame starting at the partition's first
row is ``nth_value(x, 1)``, which the window operator finds without aggregating the frame.

Spark's rule::

    first(x#1, false) windowspecdefinition(a#2 ASC NULLS FIRST, specifiedwindowframe(RowFrame, unboundedpreceding$(), currentrow$()))
    ==>
    nth_value(x#1, 1, false) windowspecdefinition(a#2 ASC NULLS FIRST, specifiedwindowframe(RowFrame, unboundedpreceding$(), currentrow$()))

Only with an ORDER BY and a ROWS frame from UNBOUNDED PRECEDING to CURRENT ROW or UNBOUNDED
FOLLOWING (the frame's first row is then the partition's first); IGNORE NULLS is kept.  The
column keeps its name.  No configuration keys.
"""

from __future__ import annotations

from ember import types as T
from ember.conf import SQLConf
from ember.expressions.aggregates import AggregateExpression, First
from ember.expressions.base import Expression, Literal
from ember.expressions.windows import (
    CurrentRow, FrameType, NthValue, SpecifiedWindowFrame, UnboundedFollowing, UnboundedPreceding,
    WindowExpression, WindowSpecDefinition,
)
from ember.optimizer.rule_executor import Rule
from ember.plans.logical.nodes import LogicalPlan

__all__ = ["OptimizeWindowFunctions"]


def _rule(e: Expression) -> Expression | None:
    match e:
        case WindowExpression(
                window_function=AggregateExpression(func=First() as first),
                window_spec=WindowSpecDefinition(order_spec=order, frame_specification=SpecifiedWindowFrame(
                    frame_type=FrameType.ROWS, lower=UnboundedPreceding(),
                    upper=UnboundedFollowing() | CurrentRow()))) if order:
            return e.copy(window_function=NthValue(first.child, Literal(1, T.INT),
                                                   first.ignore_nulls))
        case _:
            return None


class OptimizeWindowFunctions(Rule):
    """See the module docstring."""

    rule_name = "OptimizeWindowFunctions"
    patterns = (WindowExpression,)

    def apply(self, plan: LogicalPlan, conf: SQLConf) -> LogicalPlan:
        def node(p: LogicalPlan) -> LogicalPlan:
            if not any(e.contains(WindowExpression) for e in p.expressions()):
                return p
            return p.map_expressions(lambda e: e.transform_up(_rule))

        return plan.transform_up(node)
