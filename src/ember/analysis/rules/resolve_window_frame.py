"""ResolveWindowFrame: every window specification gets its frame.

Before::  sum(x#1) windowspecdefinition(a#2 ASC NULLS FIRST, unspecifiedframe$())
After::   sum(x#1) windowspecdefinition(a#2 ASC NULLS FIRST,
                                        specifiedwindowframe(RangeFrame, unboundedpreceding$(), currentrow$()))

A window function with a frame of its own (the ranking functions, ``cume_dist``, ``lag`` /
``lead``) takes it; a frame written in the query must then be that frame
(``_LEGACY_ERROR_TEMP_1036``; for ``lag`` / ``lead`` any frame is refused,
``_LEGACY_ERROR_TEMP_1035``).  Anything else gets Spark's default: ``RANGE BETWEEN UNBOUNDED
PRECEDING AND CURRENT ROW`` with ORDER BY, ``ROWS BETWEEN UNBOUNDED PRECEDING AND UNBOUNDED
FOLLOWING`` without.
"""

from __future__ import annotations

from ember.analysis.resolution import has_unresolved
from ember.errors import AnalysisError
from ember.expressions.base import Expression
from ember.expressions.windows import (
    CurrentRow,
    FrameLessOffsetWindowFunction,
    SpecifiedWindowFrame,
    UnboundedFollowing,
    UnboundedPreceding,
    UnspecifiedFrame,
    WindowExpression,
    WindowFunction,
    WindowSpecDefinition,
    range_frame,
    rows_frame,
)
from ember.analysis.rules._util import transform_up_in_run
from ember.analysis.rules.resolve_eval_mode import expression_in_eval_mode
from ember.plans.logical.nodes import LogicalPlan


def default_frame(ordered: bool) -> SpecifiedWindowFrame:
    """Spark's default frame: growing with ORDER BY, the whole partition without."""
    if ordered:
        return range_frame(UnboundedPreceding(), CurrentRow())
    return rows_frame(UnboundedPreceding(), UnboundedFollowing())


def _rule(e: Expression, ctx) -> Expression | None:
    if not isinstance(e, WindowExpression) or not isinstance(e.window_spec, WindowSpecDefinition):
        return None
    wf, spec = e.window_function, e.window_spec
    frame = spec.frame_specification
    # In the session's evaluation mode: with ANSI off, ResolveEvalMode has already switched the
    # frame stored in the spec (lag's negated offset) to legacy arithmetic.
    required = expression_in_eval_mode(wf.frame, ctx) if isinstance(wf, WindowFunction) \
        else UnspecifiedFrame()
    if isinstance(frame, SpecifiedWindowFrame):
        if isinstance(wf, FrameLessOffsetWindowFunction) and required != frame:
            raise AnalysisError(f"Cannot specify window frame for {wf.pretty_name} function.",
                                error_class="_LEGACY_ERROR_TEMP_1035",
                                parameters={"prettyName": wf.pretty_name})
        if not isinstance(required, UnspecifiedFrame) and required != frame:
            raise AnalysisError(
                f"Window Frame {frame.simple_string()} must match the required frame "
                f"{required.simple_string()}.", error_class="_LEGACY_ERROR_TEMP_1036",
                parameters={"wf": frame.simple_string(), "required": required.simple_string()})
        return None
    if not isinstance(frame, UnspecifiedFrame):
        return None
    if not isinstance(required, UnspecifiedFrame):
        return e.copy(window_spec=spec.copy(frame_specification=required))
    if has_unresolved(wf):
        return None
    return e.copy(window_spec=spec.copy(frame_specification=default_frame(bool(spec.order_spec))))


def resolve_window_frame(plan: LogicalPlan, ctx) -> LogicalPlan:
    """``plan`` with every window frame specified or checked (see module doc)."""

    def rule(p: LogicalPlan) -> LogicalPlan:
        if not any(e.contains(WindowExpression) for e in p.expressions()):
            return p
        return p.map_expressions(lambda e: e.transform_up(lambda x: _rule(x, ctx)))

    return transform_up_in_run(plan, rule, ctx, "ResolveWindowFrame")
