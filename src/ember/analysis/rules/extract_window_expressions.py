"""ExtractWindowExpressions: window expressions leave the select list for ``Window`` operators,
one per distinct (partition, order) specification; QUALIFY becomes a Filter above them.

Before::  Project [a#1, (x#2 - rank() OVER (ORDER BY x#2 ...)) AS d#5]
After::   Project [a#1, d#5]
          +- Project [a#1, x#2, _we0#6, (x#2 - _we0#6) AS d#5]
             +- Window [rank(x#2) windowspecdefinition(x#2 ASC NULLS FIRST, ...) AS _we0#6], [x#2 ASC NULLS FIRST]
                +- Project [a#1, x#2]

As Spark's rule: the window functions' inputs, partition and order expressions that are not
plain columns are computed below the windows as ``_w0``, ``_w1`` ...; an unaliased window
expression inside a larger expression is ``_we0`` ...; aggregates outside the windows of a
grouped query (``sum(sum(x)) OVER (...)``) are evaluated by the Aggregate below (``_wN``), with
the HAVING filter between it and the windows.  Windows are stacked in the order their
specifications first appear (Spark's order is that of a hash map of the specifications, which
varies between JVMs).

``QUALIFY cond`` (Spark's ``UnresolvedQualify``, below DISTINCT): once the select below it is
resolved, a condition without window functions is a plain ``Filter``; one with window functions
(``QUALIFY rank() OVER (...) = 1``) computes them in a Project over the select (named by their
SQL, with qualified columns, as Spark names them), filters, and projects them away.  Columns
the select list dropped are added below and projected away (as ResolveMissingReferences).

Errors: a window function in WHERE or HAVING (``WINDOW_FUNCTION_NOT_ALLOWED_IN_CLAUSE``), inside
an aggregate (``_LEGACY_ERROR_TEMP_1031``).
"""

from __future__ import annotations

from ember.analysis.resolution import has_unresolved, qualified_sql
from ember.analysis.rules.resolve_missing_references import resolve_and_add_missing
from ember.errors import AnalysisError
from ember.expressions.aggregates import AggregateExpression
from ember.expressions.base import Alias, AttributeReference, Expression, NamedExpression
from ember.expressions.foldable import is_foldable
from ember.expressions.windows import WindowExpression, WindowFunction, WindowSpecDefinition
from ember.plans.logical.nodes import (
    Aggregate, Filter, LogicalPlan, Project, UnresolvedHaving, UnresolvedQualify, Window,
)


def has_window(e: Expression) -> bool:
    """Whether ``e`` holds a window expression."""
    return e.contains(WindowExpression)


def _not_allowed(clause: str) -> AnalysisError:
    return AnalysisError(f"It is not allowed to use window functions inside {clause} clause.",
                         error_class="WINDOW_FUNCTION_NOT_ALLOWED_IN_CLAUSE",
                         parameters={"clauseName": clause})


def _extract(expressions: tuple[Expression, ...]
             ) -> tuple[list[Expression], list[Expression]]:
    """Spark's ``extract``: (the expressions with window functions, rewritten over the
    attributes below; the regular expressions plus what the windows need computed)."""
    with_window = [e for e in expressions if has_window(e)]
    regular: list[Expression] = [e for e in expressions if not has_window(e)]
    extracted: list[Expression] = []
    #: canonical form -> the alias computing it (Spark's ``extractedExprMap``: an expression
    #: the windows use twice is computed once)
    by_canonical: dict[Expression, Alias] = {}

    def available() -> set[int]:
        return {e.to_attribute().id for e in regular + extracted  # type: ignore[attr-defined]
                if isinstance(e, NamedExpression)}

    def alias_of(e: Expression) -> Expression:
        alias = by_canonical.get(e.canonicalized)
        if alias is None:
            alias = Alias(e, f"_w{len(extracted)}")
            by_canonical[e.canonicalized] = alias
            extracted.append(alias)
        return alias.to_attribute()

    def extract_expr(e: Expression) -> Expression:
        if isinstance(e, NamedExpression):
            if e.references - available():
                extracted.append(e)
            return e
        if is_foldable(e):  # Spark: "evaluated as a Literal", so not computed below
            return e
        return alias_of(e)

    seen_aggregates: list[Expression] = []

    def rule(x: Expression) -> Expression | None:
        match x:
            case WindowFunction():
                return x.with_children(tuple(extract_expr(c) for c in x.children))
            case WindowSpecDefinition(partition_spec=parts, order_spec=order):
                return x.copy(partition_spec=tuple(extract_expr(p) for p in parts),
                              order_spec=tuple(o.copy(child=extract_expr(o.child))
                                               for o in order))
            case WindowExpression(window_function=AggregateExpression() as ae,
                                  window_spec=WindowSpecDefinition()):
                fn = ae.func
                new_ae = ae.copy(func=fn.with_children(tuple(extract_expr(c)
                                                             for c in fn.children)))
                seen_aggregates.append(new_ae)
                return x.copy(window_function=new_ae)
            case AggregateExpression() if any(has_window(c) for c in x.children):
                raise AnalysisError(
                    "It is not allowed to use a window function inside an aggregate function. "
                    "Please use the inner window function in a sub-query.",
                    error_class="_LEGACY_ERROR_TEMP_1031", parameters={})
            case AggregateExpression() if not any(x is s or x == s for s in seen_aggregates):
                return alias_of(x)
            case AttributeReference():
                return extract_expr(x)
            case _:
                return None

    new_with_window = [e.transform_down(rule) for e in with_window]
    return new_with_window, regular + extracted


def _add_window(with_window: list[Expression], child: LogicalPlan) -> LogicalPlan:
    """Spark's ``addWindow``: one ``Window`` per (partition, order) over ``child``, and a
    Project of their output and ``with_window`` rewritten over the window columns."""
    window_exprs: list[Alias] = []

    def rule(x: Expression) -> Expression | None:
        if isinstance(x, Alias) and isinstance(x.child, WindowExpression):
            window_exprs.append(x)
            return x.to_attribute()
        if isinstance(x, WindowExpression):
            alias = Alias(x, f"_we{len(window_exprs)}")
            window_exprs.append(alias)
            return alias.to_attribute()
        return None

    new_exprs = [e.transform_down(rule) for e in with_window]
    groups: dict[tuple, list[Alias]] = {}
    for a in window_exprs:
        spec = a.child.window_spec  # type: ignore[attr-defined]
        groups.setdefault((spec.partition_spec, spec.order_spec), []).append(a)
    plan = child
    for (partition, order), exprs in groups.items():
        plan = Window(tuple(exprs), partition, order, plan)
    return Project(plan.output + tuple(new_exprs), plan)


def _extract_project(items: tuple[Expression, ...], child: LogicalPlan) -> LogicalPlan:
    with_window, regular = _extract(items)
    window = _add_window(with_window, Project(tuple(regular), child))
    return Project(tuple(e.to_attribute() for e in items), window)  # type: ignore[attr-defined]


def _extract_aggregate(agg: Aggregate, having: Expression | None) -> LogicalPlan:
    with_window, regular = _extract(agg.aggregate_expressions)
    below: LogicalPlan = agg.copy(aggregate_expressions=tuple(regular))
    if having is not None:
        below = Filter(having, below)
    window = _add_window(with_window, below)
    return Project(tuple(e.to_attribute() for e in agg.aggregate_expressions),  # type: ignore[attr-defined]
                   window)


def _qualify(p: UnresolvedQualify, ctx) -> LogicalPlan:
    cond, child = p.condition, p.child
    output = child.output
    if has_unresolved(cond):
        (new_cond,), new_child = resolve_and_add_missing((cond,), child, ctx.case_sensitive)
        if has_unresolved(new_cond) or new_child is child or not new_cond.resolved:
            return p if new_cond == cond else p.copy(condition=new_cond)
        cond, child = new_cond, new_child
    if not cond.resolved:
        return p
    if not has_window(cond):
        plan: LogicalPlan = Filter(cond, child)
        return plan if child.output == output else Project(output, plan)
    aliases: list[Alias] = []

    def rule(x: Expression) -> Expression | None:
        if isinstance(x, WindowExpression):
            for a in aliases:
                if a.child == x:
                    return a.to_attribute()
            alias = Alias(x, qualified_sql(x))
            aliases.append(alias)
            return alias.to_attribute()
        return None

    new_cond = cond.transform_down(rule)
    inner = Project(child.output + tuple(aliases), child)
    return Project(output, Filter(new_cond, inner))


def extract_window_expressions(plan: LogicalPlan, ctx) -> LogicalPlan:
    """``plan`` with window expressions computed by ``Window`` operators (see module doc)."""

    # an Aggregate whose HAVING is not resolved yet waits for it (the filter goes between the
    # Aggregate and the windows)
    held = {id(n.child) for n in plan.collect(
        lambda x: x if isinstance(x, UnresolvedHaving) else None)}

    def rule(p: LogicalPlan) -> LogicalPlan:
        match p:
            case Aggregate() if id(p) in held:
                return p
            case Filter(condition=cond, child=child) if has_window(cond):
                raise _not_allowed("HAVING" if isinstance(child, Aggregate) else "WHERE")
            case UnresolvedQualify(child=child) if child.resolved:
                return _qualify(p, ctx)
            case Filter(condition=cond, child=Aggregate(aggregate_expressions=items) as agg) if (
                    agg.child.resolved and any(has_window(e) for e in items)
                    and all(e.resolved for e in agg.expressions())):
                return _extract_aggregate(agg, cond)
            case _ if not all(c.resolved for c in p.children):
                return p
            case Aggregate(aggregate_expressions=items) if (
                    any(has_window(e) for e in items) and all(e.resolved for e in p.expressions())):
                return _extract_aggregate(p, None)
            case Project(project_list=items, child=child) if (
                    any(has_window(e) for e in items) and all(e.resolved for e in items)):
                return _extract_project(items, child)
            case _:
                return p

    return plan.transform_down(rule)
