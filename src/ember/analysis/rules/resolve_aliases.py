"""ResolveAliases: unaliased select items get Spark's generated name.

Before::  Project [unresolvedalias(('a + 1))]     After::  Project [(a#1 + 1) AS (a + 1)#5]

Attributes keep their own name, and so does a cast of one (``CAST(k AS STRING)`` is named ``k``);
other expressions are named by :func:`pretty_sql` (Spark's
``toPrettySQL``: ``count(1)``, ``(a + b)``, ``foo`` for the literal ``'foo'``).  The name is taken
as soon as the expression has no unresolved parts, before implicit casts are inserted, so casts the
analyzer adds never show up in names; a window expression once its frame is complete and valid
(Spark's ``WindowSpecDefinition.resolved``).
"""

from __future__ import annotations

from ember.analysis.resolution import auto_alias_name, has_unresolved
from ember.analysis.window_checks import window_spec_pending
from ember.analysis.rules._util import transform_up_in_run
from ember.expressions.base import Alias, Expression, NamedExpression, UnresolvedAlias
from ember.expressions.generators import Generator
from ember.plans.logical.nodes import LogicalPlan
from ember.expressions.subquery import OuterReference


def _alias(e: Expression, implicit_casts: dict[int, object] | None = None,
           time_zone: str = "UTC") -> Expression | None:
    if isinstance(e, UnresolvedAlias) and not has_unresolved(e.child) and not (
            window_spec_pending(e.child)):
        c = e.child
        if isinstance(c, NamedExpression):
            return c
        if isinstance(c, Generator):
            return None  # ExtractGenerator names its columns

        if isinstance(c, OuterReference):
            return Alias(c, c.attr.name)
        return Alias(c, auto_alias_name(c, implicit_casts, time_zone))
    return None


def resolve_aliases(plan: LogicalPlan, ctx) -> LogicalPlan:
    """``plan`` with every resolved ``UnresolvedAlias`` given its generated name (see module doc)."""
    def rule(p: LogicalPlan) -> LogicalPlan:
        if not any(isinstance(e, UnresolvedAlias) for e in p.expressions()):
            return p
        tz = ctx.conf.time_zone
        return p.map_expressions(lambda e: _alias(e, ctx.implicit_casts, tz) or e)

    return transform_up_in_run(plan, rule, ctx, "ResolveAliases")
