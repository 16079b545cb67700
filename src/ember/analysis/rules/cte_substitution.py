"""CTESubstitution: inline ``WITH`` definitions.

Before::  UnresolvedWith [c] (Project [*] (UnresolvedRelation c))
After::   Project [*] (SubqueryAlias c (<plan of c>))

Each definition sees the earlier ones; an inner ``WITH`` shadows outer names; references inside
subquery expressions are substituted too.  Every reference gets a copy of the definition with fresh
expression ids (aliases) so a CTE joined with itself has distinct attributes.  Names compare
case-insensitively unless ``spark.sql.caseSensitive``.
"""

from __future__ import annotations

from ember.analysis.fresh import fresh_copy
from ember.analysis.rules._util import map_subquery_plans
from ember.plans.logical.nodes import (
    LogicalPlan,
    SubqueryAlias,
    UnresolvedRelation,
    UnresolvedWith,
)


def _key(name: str, cs: bool) -> str:
    return name if cs else name.lower()


def _substitute(plan: LogicalPlan, defs: dict[str, tuple[str, LogicalPlan]], cs: bool) -> LogicalPlan:
    def rule(p: LogicalPlan) -> LogicalPlan:
        match p:
            case UnresolvedRelation(name_parts=parts) if len(parts) == 1 and _key(parts[0], cs) in defs:
                name, body = defs[_key(parts[0], cs)]
                body = fresh_copy(body)
                if isinstance(body, SubqueryAlias) and _key(body.alias, cs) == _key(name, cs):
                    return body
                return SubqueryAlias((name,), body)
            case _:
                return p.map_expressions(
                    lambda e: map_subquery_plans(e, lambda sp: _substitute(sp, defs, cs))
                )

    return plan.transform_up(rule)


def cte_substitution(plan: LogicalPlan, ctx) -> LogicalPlan:
    """Inline every ``UnresolvedWith`` in ``plan`` (innermost first)."""
    cs = ctx.case_sensitive

    def rule(p: LogicalPlan) -> LogicalPlan:
        # subquery plans may hold their own WITH clauses
        p = p.map_expressions(lambda e: map_subquery_plans(e, lambda sp: cte_substitution(sp, ctx)))
        match p:
            case UnresolvedWith(child=child, cte_names=names, cte_plans=plans):
                defs: dict[str, tuple[str, LogicalPlan]] = {}
                for name, body in zip(names, plans):
                    body = _substitute(body, dict(defs), cs)
                    defs[_key(name, cs)] = (name, body)
                return _substitute(child, defs, cs)
            case _:
                return p

    return plan.transform_up(rule)
