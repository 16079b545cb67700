"""WindowFrameCoercion (Spark's type coercion rule of that name): the value bounds of a RANGE
frame are cast to the type of the window's single order expression.

Before::  windowspecdefinition(CAST(a AS BIGINT) ASC, specifiedwindowframe(RangeFrame, -1, currentrow$()))
After::   windowspecdefinition(CAST(a AS BIGINT) ASC, specifiedwindowframe(RangeFrame, cast(-1 as bigint), currentrow$()))

Not for DATE / TIMESTAMP order keys (their bounds are INT days or intervals), nor where the
cast is impossible (CheckAnalysis then reports the frame type).  The casts are implicit: the
column name shows the bound without them (``(- 1) FOLLOWING``, as in Spark).
"""

from __future__ import annotations

from ember import types as T
from ember.coercion import can_cast
from ember.expressions.base import Expression
from ember.expressions.cast import Cast
from ember.expressions.windows import (
    FrameType, SpecialFrameBoundary, SpecifiedWindowFrame, WindowSpecDefinition,
)
from ember.analysis.rules._util import transform_up_in_run
from ember.plans.logical.nodes import LogicalPlan


def _boundary(b: Expression, t: T.DataType, ctx) -> Expression:
    if isinstance(b, SpecialFrameBoundary) or isinstance(t, (T.DateType, T.TimestampType,
                                                                     T.TimestampNTZType)):
        return b
    if not b.resolved or b.data_type == t or not can_cast(b.data_type, t, True):
        return b
    return ctx.mark_implicit(Cast(b, t))


def window_frame_coercion(plan: LogicalPlan, ctx) -> LogicalPlan:
    """``plan`` with RANGE frame bounds cast to the order type (see module doc)."""

    def rule(e: Expression) -> Expression | None:
        match e:
            case WindowSpecDefinition(order_spec=(order,), frame_specification=SpecifiedWindowFrame(
                    frame_type=FrameType.RANGE, lower=lower, upper=upper) as f) if order.resolved:
                t = order.data_type
                new_lower, new_upper = _boundary(lower, t, ctx), _boundary(upper, t, ctx)
                if new_lower is lower and new_upper is upper:
                    return None
                return e.copy(frame_specification=f.copy(lower=new_lower, upper=new_upper))
            case _:
                return None

    def plan_rule(p: LogicalPlan) -> LogicalPlan:
        if not any(e.contains(WindowSpecDefinition) for e in p.expressions()):
            return p
        return p.map_expressions(lambda e: e.transform_up(rule))

    return transform_up_in_run(plan, plan_rule, ctx, "WindowFrameCoercion")
