"""ResolveJoinStrategyHints: ``/*+ BROADCAST(t) */`` -> ``ResolvedHint`` on the named relations.

Before::  'UnresolvedHint BROADCAST, [nt2] (Project [*] (Join (nt1) ('UnresolvedRelation nt2)))
After::   Project [*] (Join (nt1) (ResolvedHint (strategy=broadcast) ('UnresolvedRelation nt2)))

Names and aliases come from ``JOIN_HINT_ALIASES`` (BROADCAST/BROADCASTJOIN/MAPJOIN,
MERGE/SHUFFLE_MERGE/MERGEJOIN, SHUFFLE_HASH, SHUFFLE_REPLICATE_NL).  Without parameters the hint
applies to the whole plan below.  A relation matches by its last name part or its alias, without
descending into subquery aliases of other names.  Unknown hints are dropped (Spark logs a warning).
After resolution :func:`eliminate_resolved_hint` moves hints onto ``Join.hint``.
"""

from __future__ import annotations

from typing import Any

from ember.expressions.base import Literal, UnresolvedAttribute
from ember.plans.logical.join_type import JOIN_HINT_ALIASES, JoinHint
from ember.plans.logical.nodes import (
    Intersect,
    Except,
    Join,
    LogicalPlan,
    ResolvedHint,
    SubqueryAlias,
    UnaryNode,
    UnresolvedHint,
    UnresolvedRelation,
)


def _param_name(p: Any) -> tuple[str, ...] | None:
    if isinstance(p, str):
        return tuple(p.split("."))
    if isinstance(p, UnresolvedAttribute):
        return p.name_parts
    if isinstance(p, Literal) and isinstance(p.value, str):
        return tuple(p.value.split("."))
    if isinstance(p, tuple) and all(isinstance(x, str) for x in p):
        return p
    return None


def _matches(ident: tuple[str, ...], name: tuple[str, ...], cs: bool) -> bool:
    if len(name) > len(ident):
        return False
    tail = ident[len(ident) - len(name):]
    return all((a == b) if cs else (a.lower() == b.lower()) for a, b in zip(tail, name))


def _apply(plan: LogicalPlan, names: list[tuple[str, ...]], strategy: str, cs: bool) -> LogicalPlan:
    def wrap(p: LogicalPlan) -> LogicalPlan:
        return ResolvedHint((strategy,), p)

    def go(p: LogicalPlan) -> LogicalPlan:
        match p:
            case UnresolvedRelation(name_parts=parts) if any(_matches(parts, n, cs) for n in names):
                return wrap(p)
            case SubqueryAlias(identifier=ident) if any(_matches(ident, n, cs) for n in names):
                return wrap(p)
            case SubqueryAlias():
                return p  # do not look inside other named relations
            case ResolvedHint():
                return p.copy(child=go(p.child))
            case _:
                if not p.children:
                    return p
                return p.with_children(tuple(go(c) for c in p.children))

    return go(plan)


def resolve_hints(plan: LogicalPlan, ctx) -> LogicalPlan:
    """``plan`` with every ``UnresolvedHint`` resolved (see module doc)."""
    cs = ctx.case_sensitive

    def rule(p: LogicalPlan) -> LogicalPlan:
        match p:
            case UnresolvedHint(name=name, parameters=params, child=child):
                strategy = JOIN_HINT_ALIASES.get(name.upper())
                if strategy is None:
                    return child  # unknown / unsupported hint: ignored, as Spark does
                if not params:
                    return ResolvedHint((strategy,), child)
                names = [n for n in (_param_name(x) for x in params) if n is not None]
                return _apply(child, names, strategy, cs)
            case _:
                return p

    return plan.transform_up(rule)


def _extract(plan: LogicalPlan) -> tuple[LogicalPlan, tuple[str, ...]]:
    """Spark's ``extractHintsFromPlan``: hints found down a chain of unary nodes."""
    match plan:
        case ResolvedHint(strategies=s, child=child):
            inner, hints = _extract(child)
            merged = tuple(dict.fromkeys(s + hints))
            return inner, merged
        case UnaryNode():
            inner, hints = _extract(plan.children[0])
            return (plan if inner is plan.children[0] else plan.with_children((inner,))), hints
        case _:
            return plan, ()


def eliminate_resolved_hint(plan: LogicalPlan) -> LogicalPlan:
    """Move hints onto the joins they sit under (EliminateResolvedHint); drop the others."""

    def rule(p: LogicalPlan) -> LogicalPlan:
        match p:
            case Join(left=left, right=right, hint=hint):
                new_left, lh = _extract(left)
                new_right, rh = _extract(right)
                if not lh and not rh:
                    return p
                return p.copy(
                    left=new_left,
                    right=new_right,
                    hint=JoinHint(tuple(dict.fromkeys(hint.left + lh)),
                                  tuple(dict.fromkeys(hint.right + rh))),
                )
            case _:
                return p

    plan = plan.transform_down(rule)
    return plan.transform_up(lambda p: p.child if isinstance(p, ResolvedHint) else p)


__all__ = ["resolve_hints", "eliminate_resolved_hint", "Intersect", "Except"]
