"""ResolveAggregateFunctions: HAVING / ORDER BY over an aggregation.

Before::  'UnresolvedHaving (max('b) > 1) (Aggregate [a#1], [a#1, count(b#2) AS count(b)#3])
After::   Project [a#1, count(b)#3]
            (Filter (max(b)#4 > 1)
              (Aggregate [a#1], [a#1, count(b#2) AS count(b)#3, max(b#2) AS max(b)#4]))

HAVING names arrive from ResolveReferences resolved against the aggregate's input first
(``TempResolvedColumn``, Spark's SPARK-31519 order): inside an aggregate function or a grouping
expression they stay input columns; anywhere else they are marked tried and ResolveReferences
resolves them again against the aggregate's output, the select-list aliases.  So
``SELECT sum(a) AS b ... GROUP BY b HAVING b > 10`` filters on the grouping column ``b``.
ORDER BY names resolve against the aggregate's output first (aliases win, as in Spark's
``ResolveReferencesInSort``), then against its input.  Aggregate functions and
grouping expressions that the select list lacks become hidden aggregate outputs, projected away
above.  An input column used outside an aggregate that is not a grouping column is left
unresolved (CheckAnalysis then reports it, as Spark does).  The same for
``Sort`` over an ``Aggregate`` (possibly through the HAVING ``Filter``).
"""

from __future__ import annotations

from ember.analysis.resolution import (
    TempResolvedColumn,
    equal_ignoring_aliases,
    has_unresolved,
    pretty_sql,
    strip_alias,
    trim_temp_resolved_columns,
)
from ember.analysis.rules.type_coercion import coerce_types
from ember.analysis.rules._util import (contains_aggregate, is_aggregate_expr,
                                        transform_up_in_run)
from ember.analysis.rules.resolve_functions import resolve_functions_in
from ember.analysis.rules.resolve_references import resolve_col_with_agg, resolve_expression
from ember.expressions.base import Alias, AttributeReference, Expression
from ember.expressions.subquery import SubqueryExpression
from ember.plans.logical.nodes import Aggregate, Filter, LogicalPlan, Project, Sort, UnresolvedHaving


class _Abort(Exception):
    pass


def resolve_with_aggregate(
    exprs: tuple[Expression, ...], agg: Aggregate, ctx
) -> tuple[tuple[Expression, ...], Aggregate] | None:
    """Resolve ``exprs`` over ``agg`` (Spark's ``resolveExprsWithAggregate``); None if they
    cannot be resolved yet or refer to ungrouped input columns."""
    cs = ctx.case_sensitive
    child_out = agg.child.output
    child_ids = agg.child.output_set
    out_ids = agg.output_set
    resolved = []
    for e in exprs:
        e = resolve_expression(e, agg.output, cs)
        e = resolve_expression(e, child_out, cs)
        e = resolve_functions_in(e, ctx)
        if has_unresolved(e):
            return None
        # Spark analyzes them in full before matching them with the grouping expressions, so a
        # decimal ``m * 2`` is coerced (and takes allowPrecisionLoss) as GROUP BY's was.
        resolved.append(coerce_types(e, ctx))

    extra: list[Expression] = []
    items = agg.aggregate_expressions
    groups = agg.grouping_expressions

    def build(e: Expression) -> Expression:
        for item in items + tuple(extra):
            if equal_ignoring_aliases(strip_alias(item), e) and hasattr(item, "to_attribute"):
                return item.to_attribute()
        if is_aggregate_expr(e):
            e = trim_temp_resolved_columns(e)
            a = Alias(e, pretty_sql(e))
            extra.append(a)
            return a.to_attribute()
        if any(equal_ignoring_aliases(g, e) for g in groups):
            e = trim_temp_resolved_columns(e)
            if isinstance(e, AttributeReference):
                extra.append(e)
                return e
            a = Alias(e, pretty_sql(e))
            extra.append(a)
            return a.to_attribute()
        if isinstance(e, TempResolvedColumn):
            # an input column neither aggregated nor grouped: ResolveReferences resolves its
            # name again against the aggregate's output (the aliases)
            return e if e.has_tried else e.copy(has_tried=True)
        if isinstance(e, AttributeReference):
            if e.id in out_ids:
                return e
            if e.id in child_ids:
                raise _Abort()
            return e
        if isinstance(e, SubqueryExpression):
            # input columns a subquery reads (HAVING EXISTS (... WHERE b > 10)): grouping ones
            # become outputs of the Aggregate (Spark: the outer attributes are the subquery
            # expression's children there)
            for a in getattr(e, "outer_attrs", ()):
                if isinstance(a, AttributeReference) and a.id in child_ids and a.id not in out_ids:
                    # (an ungrouped one stays missing: CheckAnalysis reports MISSING_ATTRIBUTES)
                    if any(equal_ignoring_aliases(g, a) for g in groups) and all(
                        getattr(x, "id", None) != a.id for x in extra
                    ):
                        extra.append(a)
        kids = e.children
        if not kids:
            return e
        return e.with_children(tuple(build(k) for k in kids))

    try:
        new_exprs = tuple(build(e) for e in resolved)
    except _Abort:
        return None
    if not extra:
        return new_exprs, agg
    return new_exprs, agg.copy(aggregate_expressions=items + tuple(extra))


def _find_agg(p: LogicalPlan):
    """The Aggregate under ``p`` through HAVING's Filter, with a rebuild function.

    Not through the Project a HAVING puts over its Filter when it adds hidden aggregates (Spark's
    ResolveAggregateFunctions matches Sort over Aggregate or Filter(Aggregate) only): there an
    ORDER BY on an input column fails with UNRESOLVED_COLUMN, an ORDER BY aggregate with
    UNSUPPORTED_EXPR_FOR_OPERATOR, as in Spark."""
    match p:
        case Aggregate():
            return p, lambda a: a
        case Filter(child=Aggregate() as a):
            return a, lambda new: p.copy(child=new)
        case _:
            return None, None


def resolve_aggregate_functions(plan: LogicalPlan, ctx) -> LogicalPlan:
    """``plan`` with HAVING / ORDER BY over an Aggregate resolved against it (see module doc)."""
    def rule(p: LogicalPlan) -> LogicalPlan:
        match p:
            case UnresolvedHaving(condition=cond, child=Aggregate() as agg) if agg.resolved:
                # input columns first (SPARK-31519), as ResolveReferences does once agg is resolved
                cond = resolve_col_with_agg(cond, agg, ctx.case_sensitive)
                got = resolve_with_aggregate((cond,), agg, ctx)
                if got is None:
                    return p
                (new_cond,), new_agg = got
                if new_agg is agg:
                    return Filter(new_cond, agg)
                return Project(agg.output, Filter(new_cond, new_agg))
            case Sort(order=order, child=child) if child.resolved and (
                any(has_unresolved(o) or contains_aggregate(o) for o in order) or p.missing_input
            ):
                # An aggregate without column references (``ORDER BY count(*)``) is resolved by
                # ResolveFunctions alone, yet must still become an output of the Aggregate.
                agg, rebuild = _find_agg(child)
                if agg is None:
                    return p
                got = resolve_with_aggregate(order, agg, ctx)
                if got is None:
                    return p
                new_order, new_agg = got
                if new_agg is agg:
                    return p.copy(order=new_order)
                new_child = rebuild(new_agg)
                return Project(child.output, p.copy(order=new_order, child=new_child))
            case _:
                return p

    return transform_up_in_run(plan, rule, ctx, "ResolveAggregateFunctions")
