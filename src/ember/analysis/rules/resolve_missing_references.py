"""ResolveMissingReferences: ORDER BY / WHERE-above-select on columns the select list dropped.

Before::  Sort ['b ASC], true (Project [a#1] (t [a#1, b#2]))
After::   Project [a#1] (Sort [b#2 ASC], true (Project [a#1, b#2] (t)))

The missing attributes are added to the Projects (and grouping-only Aggregates) below, then
projected away again so the output is unchanged.  Not through Distinct or SubqueryAlias (that
would change results or scoping), as in Spark.
"""

from __future__ import annotations

from collections.abc import Sequence

from ember.analysis.resolution import equal_ignoring_aliases, has_unresolved, metadata_output
from ember.analysis.rules.resolve_references import resolve_expression
from ember.analysis.rules._util import transform_up_in_run
from ember.expressions.base import AttributeReference, Expression
from ember.plans.logical.nodes import (
    Aggregate,
    Filter,
    LogicalPlan,
    Project,
    Sort,
    SubqueryAlias,
    UnaryNode,
    View,
    Distinct,
)


def _attrs_in(exprs: Sequence[Expression]) -> dict[int, AttributeReference]:
    out: dict[int, AttributeReference] = {}
    for e in exprs:
        for a in e.collect(lambda x: x if isinstance(x, AttributeReference) else None):
            out.setdefault(a.id, a)
    return out


def resolve_and_add_missing(
    exprs: tuple[Expression, ...], plan: LogicalPlan, cs: bool
) -> tuple[tuple[Expression, ...], LogicalPlan]:
    """Spark's ``resolveExprsAndAddMissingAttrs``."""
    if not any(has_unresolved(e) for e in exprs):
        return exprs, plan
    match plan:
        case Project(project_list=items, child=child):
            exprs = tuple(resolve_expression(e, plan.output, cs, metadata_output(plan)) for e in exprs)
            new_exprs, new_child = resolve_and_add_missing(exprs, child, cs)
            have = plan.output_set
            child_out = new_child.output_set
            missing = [a for i, a in _attrs_in(new_exprs).items() if i not in have and i in child_out]
            if new_child is child and not missing:
                return new_exprs, plan
            return new_exprs, plan.copy(project_list=items + tuple(missing), child=new_child)
        case Aggregate(grouping_expressions=groups, aggregate_expressions=items, child=child):
            exprs = tuple(resolve_expression(e, plan.output, cs) for e in exprs)
            new_exprs, new_child = resolve_and_add_missing(exprs, child, cs)
            have = plan.output_set
            child_out = new_child.output_set
            missing = [a for i, a in _attrs_in(new_exprs).items() if i not in have and i in child_out]
            if all(any(equal_ignoring_aliases(g, a) for g in groups) for a in missing):
                if new_child is child and not missing:
                    return new_exprs, plan
                return new_exprs, plan.copy(aggregate_expressions=items + tuple(missing), child=new_child)
            return exprs, plan
        case SubqueryAlias() | View() | Distinct():
            return tuple(resolve_expression(e, plan.output, cs) for e in exprs), plan
        case UnaryNode():
            exprs = tuple(resolve_expression(e, plan.output, cs, metadata_output(plan)) for e in exprs)
            child = plan.children[0]
            new_exprs, new_child = resolve_and_add_missing(exprs, child, cs)
            return new_exprs, plan.with_children((new_child,))
        case _:
            return tuple(resolve_expression(e, plan.output, cs) for e in exprs), plan


def resolve_missing_references(plan: LogicalPlan, ctx) -> LogicalPlan:
    """``plan`` with Sort/Filter references to columns the child dropped added below them (see
    module doc)."""
    cs = ctx.case_sensitive

    def rule(p: LogicalPlan) -> LogicalPlan:
        match p:
            case Sort(order=order, child=child) if child.resolved and not isinstance(child, Aggregate) and (
                any(has_unresolved(o) for o in order) or p.missing_input
            ):
                new_order, new_child = resolve_and_add_missing(order, child, cs)
                if new_child.output == child.output:
                    return p.copy(order=new_order) if new_order != order else p
                return Project(child.output, p.copy(order=new_order, child=new_child))
            case Filter(condition=cond, child=child) if child.resolved and not isinstance(child, Aggregate) and (
                has_unresolved(cond) or p.missing_input
            ):
                (new_cond,), new_child = resolve_and_add_missing((cond,), child, cs)
                if new_child.output == child.output:
                    return p.copy(condition=new_cond) if new_cond != cond else p
                return Project(child.output, p.copy(condition=new_cond, child=new_child))
            case _:
                return p

    return transform_up_in_run(plan, rule, ctx, "ResolveMissingReferences")
