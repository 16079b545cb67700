"""ResolveSubquery: resolve the plans of subquery expressions, with the enclosing query as scope.

Before::  Filter exists(Filter ('bonus.emp_name = 'emp.emp_name) ...) (emp)
After::   Filter exists#5 [emp_name#2] (Filter (emp_name#9 = outer(emp_name#2)) ...)

A node's subqueries are resolved once its children are resolved.  The subquery plan is analyzed
alone first; names it cannot resolve that the enclosing query's input provides become
``OuterReference(attr)`` (innermost enclosing query first).  A subquery in HAVING sees the
aggregate's input before its aliases (:func:`having_outer_scope`); ResolveAggregateFunctions
then makes the grouping columns it reads outputs of the Aggregate.  ``outer_attrs`` lists the outer
attributes the subquery reads.
"""

from __future__ import annotations

from ember.analysis.resolution import find_candidates
from ember.analysis.rules._util import transform_up_in_run
from ember.expressions.base import Alias, AttributeReference, Expression, UnresolvedAttribute
from ember.expressions.subquery import LateralSubquery, OuterReference, SubqueryExpression
from ember.plans.logical.nodes import Aggregate, LogicalPlan, Project, UnresolvedHaving


def _outer_refs(plan: LogicalPlan) -> list[AttributeReference]:
    """Attributes wrapped in OuterReference anywhere in ``plan`` (incl. nested subqueries)."""
    out: list[AttributeReference] = []
    seen: set[int] = set()

    def visit_expr(e: Expression) -> None:
        def f(x: Expression) -> None:
            if isinstance(x, OuterReference) and x.attr.id not in seen:
                seen.add(x.attr.id)
                out.append(x.attr)
            elif isinstance(x, SubqueryExpression):
                for a in _outer_refs(x.plan):
                    if a.id not in seen:
                        seen.add(a.id)
                        out.append(a)

        e.foreach(f)

    plan.foreach(lambda p: [visit_expr(e) for e in p.expressions()])
    return out


def resolve_outer_references(plan: LogicalPlan, ctx) -> LogicalPlan:
    """Names still unresolved in ``plan`` that an enclosing scope provides -> OuterReference."""
    cs = ctx.case_sensitive
    # Spark resolves a subquery's names against the immediately enclosing query only
    # (``ResolveSubquery`` with ``AnalysisContext.outerPlan``): a column of a query further out
    # is UNRESOLVED_COLUMN, also inside a lateral subquery
    scopes = ctx.outer_scopes[-1:]

    def resolve_attr(x: Expression) -> Expression | None:
        if isinstance(x, UnresolvedAttribute):
            for scope in scopes:
                cands = find_candidates(x.name_parts, scope, cs)
                if len(cands) == 1:
                    return OuterReference(cands[0])
                if cands:
                    return None
        return None

    def rule(p: LogicalPlan) -> LogicalPlan:
        if p.children and not all(c.resolved for c in p.children):
            return p
        if p.resolved:
            return p
        new = p.transform_expressions_up(resolve_attr)
        if isinstance(new, Project) and any(isinstance(e, OuterReference)
                                            for e in new.project_list):
            # ``(SELECT c)``: Spark's OuterReference is a named expression; here it is named
            # by an alias of the same name
            new = new.copy(project_list=tuple(
                Alias(e, e.name) if isinstance(e, OuterReference) else e
                for e in new.project_list))
        return new

    return plan.transform_down(rule)


def having_outer_scope(agg: Aggregate, cs: bool) -> tuple[AttributeReference, ...]:
    """What a subquery in HAVING sees of the enclosing query (Spark's ``resolveOuterRef`` with an
    ``UnresolvedHaving`` outer plan): the aggregate's input first, then its output columns whose
    names the input lacks (an alias never hides an input column of the same name)."""
    inputs = agg.child.output
    input_ids = agg.child.output_set
    return inputs + tuple(
        a for a in agg.output
        if a.id not in input_ids and not find_candidates((a.name,), inputs, cs)
    )


def resolve_subquery(plan: LogicalPlan, ctx) -> LogicalPlan:
    """``plan`` with the plans of its subquery expressions analyzed against the enclosing
    operator's input (see module doc)."""
    def fix(e: Expression, outer: tuple[AttributeReference, ...]) -> Expression:
        def rule(x: Expression) -> Expression | None:
            if isinstance(x, SubqueryExpression) and not x.plan.resolved:
                new_plan = ctx.analyzer.analyze_subquery(
                    x.plan, outer, ctx, lateral=isinstance(x, LateralSubquery))
                if new_plan == x.plan:
                    return None
                outer_ids = {a.id for a in outer}
                refs = tuple(a for a in _outer_refs(new_plan) if a.id in outer_ids)
                return x.copy(plan=new_plan, outer_attrs=refs)
            if isinstance(x, SubqueryExpression) and x.plan.resolved and not x.outer_attrs:
                outer_ids = {a.id for a in outer}
                refs = tuple(a for a in _outer_refs(x.plan) if a.id in outer_ids)
                if refs:
                    return x.copy(outer_attrs=refs)
            return None

        return e.transform_up(rule)

    def has_sub(e: Expression) -> bool:
        return e.contains(SubqueryExpression)

    def node_rule(p: LogicalPlan) -> LogicalPlan:
        if not any(has_sub(e) for e in p.expressions()):
            return p
        if p.children and not all(c.resolved for c in p.children):
            return p
        outer: tuple[AttributeReference, ...] = ()
        for c in p.children:
            outer += c.output
        if isinstance(p, UnresolvedHaving) and isinstance(p.child, Aggregate):
            outer = having_outer_scope(p.child, ctx.case_sensitive)
        return p.map_expressions(lambda e: fix(e, outer) if has_sub(e) else e)

    # the enclosing scopes (ctx.outer_scopes) are the same for the whole run
    return transform_up_in_run(plan, node_rule, ctx, "ResolveSubquery")
