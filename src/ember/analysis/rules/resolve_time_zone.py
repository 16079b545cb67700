"""ResolveTimeZone: time-zone-aware expressions get the session time zone.

Before::  Project [date_format(ts#1, yyyy-MM-dd) AS d#2]          (evaluated in UTC)
After::   Project [date_format(ts#1, yyyy-MM-dd) AS d#2]          options=('America/Los_Angeles',)

Spark's ``ResolveTimeZone`` sets ``timeZoneId`` on every ``TimeZoneAwareExpression`` (casts
between strings, dates and timestamps; date/time functions) that has none.  Ember does the same
for ``Cast.time_zone`` and for scalar functions whose spec is ``time_zone_aware``.  It runs after
type coercion, so the casts coercion inserts get the zone too, and it descends into subquery plans.

Reads ``spark.sql.session.timeZone``.  Always valid: it changes no types and no names.
"""

from __future__ import annotations

from ember.expressions.base import Expression
from ember.expressions.cast import Cast
from ember.expressions.misc import ScalarFunction
from ember.expressions.subquery import SubqueryExpression
from ember.plans.logical.nodes import LogicalPlan


def resolve_time_zone(plan: LogicalPlan, ctx) -> LogicalPlan:
    """``plan`` (and its subquery plans) with the session time zone on every time-zone-aware
    expression; the identical plan when nothing changes."""
    tz = ctx.conf.time_zone

    def fix(e: Expression) -> Expression | None:
        match e:
            case Cast(time_zone=zone) if zone != tz:
                return e.copy(time_zone=tz)
            case ScalarFunction(options=()) if e.spec.time_zone_aware:
                return e.copy(options=(tz,))
            case SubqueryExpression():
                new_plan = resolve_time_zone(e.plan, ctx)
                return e if new_plan is e.plan else e.with_plan(new_plan)
            case _:
                return None

    return plan.transform_up(lambda p: p.transform_expressions(fix))
