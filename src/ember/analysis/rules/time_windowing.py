"""TimeWindowing: ``window(t, ...)`` becomes a ``window`` column computed below its operator
(Spark's ``TimeWindowing``).

Tumbling (``windowDuration == slideDuration``)::

    Aggregate [window(t#1, 10s, 10s, 0)], [window(...) AS window#5, count(1)]
    +- child
  ==>
    Aggregate [window#9], [window#9 AS window#5, count(1)]
    +- Expand [[window_bounds(t#1, 10s, 10s, 0, 0), <child columns>]], [window#9, <child columns>]
       +- Filter isnotnull(t#1)
          +- child

Sliding: ``ceil(window / slide)`` projections in the Expand, window ``i`` starting ``i`` slides
before the last start at or before ``t``; then ``Filter isnotnull(t)`` when the window is a
multiple of the slide, else ``Filter (t >= window.start AND t < window.end)`` above the Expand.
Spark builds the tumbling case with a Project; Ember uses a one-projection Expand, whose output
attribute carries the time column's watermark delay (Spark's window attribute inherits the time
column's metadata), which an Alias cannot.

Applies to an operator with one child whose expressions hold exactly one distinct window over a
resolved timestamp; two different windows in one operator are refused as in Spark.  No
configuration keys.
"""

from __future__ import annotations

import math

from ember.analysis.rules._util import transform_up_in_run
from ember.errors import AnalysisError
from ember.expressions.base import AttributeReference, Expression, is_resolved
from ember.expressions.predicates import IsNotNull
from ember.expressions.time_window import (
    WINDOW_TYPE,
    TimeWindow,
    TimeWindowBounds,
    TimeWindowContains,
)
from ember.plans.logical.nodes import Expand, Filter, LogicalPlan


def _windows(p: LogicalPlan) -> list[TimeWindow]:
    found: list[TimeWindow] = []
    for e in p.expressions():
        e.foreach(lambda x: found.append(x) if isinstance(x, TimeWindow) and x not in found
                  else None)
    return found


def _rewrite(p: LogicalPlan) -> LogicalPlan:
    if len(p.children) != 1:
        return p
    windows = _windows(p)
    if not windows:
        return p
    if len(windows) > 1:
        raise AnalysisError(
            "Multiple time/session window expressions would result in a cartesian product of "
            "rows, therefore they are currently not supported.",
            error_class="_LEGACY_ERROR_TEMP_1039")
    w = windows[0]
    tc = w.time_column
    if not is_resolved(tc) or w.check_input_types() is not None:
        return p
    child = p.children[0]
    delay = tc.watermark_delay_ms if isinstance(tc, AttributeReference) else None
    attr = AttributeReference("window", WINDOW_TYPE, False, watermark_delay_ms=delay)

    def bounds(i: int) -> Expression:
        return TimeWindowBounds(tc, w.window_duration, w.slide_duration, w.start_time, i)

    if w.window_duration == w.slide_duration:
        new_child: LogicalPlan = Expand(((bounds(0),) + child.output,), (attr,) + child.output,
                                        Filter(IsNotNull(tc), child))
    else:
        n = math.ceil(w.window_duration / w.slide_duration)
        expand = Expand(tuple((bounds(i),) + child.output for i in range(n)),
                        (attr,) + child.output, child)
        cond: Expression = (IsNotNull(tc) if w.window_duration % w.slide_duration == 0
                            else TimeWindowContains(tc, attr))
        new_child = Filter(cond, expand)
    replaced = p.transform_expressions(lambda e: attr if isinstance(e, TimeWindow) else None)
    return replaced.with_children((new_child,))


def time_windowing(plan: LogicalPlan, ctx) -> LogicalPlan:
    """``plan`` with every ``window(...)`` replaced by a computed ``window`` column (subtrees
    left unchanged earlier in the analyzer run are not walked again)."""
    return transform_up_in_run(plan, _rewrite, ctx, "TimeWindowing")
