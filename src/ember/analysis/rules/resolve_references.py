"""ResolveReferences: column names -> attributes, ``*`` expansion, self-join de-duplication.

Before::  Project ['t.a, *] (SubqueryAlias t (LocalRelation [a#1, b#2]))
After::   Project [a#1, a#1, b#2] (...)

- A name resolves against the children's output, case-insensitively unless
  ``spark.sql.caseSensitive``; qualified names (``t.a``) match the attribute's qualifier.  Several
  distinct matches raise ``AMBIGUOUS_REFERENCE``.  Names that do not resolve are left for later
  rules (missing references, aggregates, outer references); CheckAnalysis reports the leftovers.
- Hidden USING-join columns (``nt2.k`` above ``nt1 JOIN nt2 USING (k)``) resolve through
  :func:`metadata_output`, only with a qualifier.
- ``*`` expands to the child's output, ``t.*`` to the hidden and visible columns qualified by
  ``t``; inside function calls too (``count(DISTINCT *)``, ``count(t.*, t.*)``).  ``count(*)``
  becomes ``count(1)``; a single ``count(t.*)`` raises
  ``INVALID_USAGE_OF_STAR_WITH_TABLE_IDENTIFIER_IN_COUNT`` unless
  ``spark.sql.legacy.allowStarWithSingleTableIdentifierInCount``.
- DeduplicateRelations: when both sides of a Join/Intersect/Except share expression ids, the right
  side is re-aliased with fresh ids (a Project of Aliases keeping names and qualifiers).
- GROUP BY names that are not columns may name select-list aliases (``spark.sql.groupByAliases``).
- HAVING names resolve against the aggregate's input first, as :class:`TempResolvedColumn` s
  (Spark's ``resolveColWithAgg``), then against its output (the select-list aliases); a HAVING
  Filter's tried columns resolve again against the Aggregate's output (see
  ``ResolveAggregateFunctions``).
"""

from __future__ import annotations

from collections.abc import Sequence

from ember.analysis.resolution import (
    TempResolvedColumn,
    children_metadata,
    has_tried_temp_column,
    has_unresolved,
    metadata_output,
    quote,
    quote_parts,
    resolve_name,
    resolve_nested_name,
    _qualifier_matches,
    unresolved_column_error,
)
from ember.analysis.rules._util import transform_up_in_run
from ember.conf import ALLOW_STAR_IN_COUNT
from ember.errors import AnalysisError
from ember.expressions.base import (
    Alias,
    AttributeReference,
    Expression,
    Literal,
    UnresolvedAlias,
    UnresolvedAttribute,
    UnresolvedFunction,
    UnresolvedRegex,
    UnresolvedStar,
)
from ember import types as T
from ember.plans.logical.nodes import (
    Aggregate,
    Except,
    Filter,
    Intersect,
    Join,
    LateralJoin,
    LogicalPlan,
    Project,
    UnresolvedHaving,
    UnresolvedSubqueryColumnAliases,
)


# ---------------------------------------------------------------------------------------------
# expression resolution


def resolve_expression(
    e: Expression,
    attrs: Sequence[AttributeReference],
    cs: bool,
    hidden: Sequence[AttributeReference] = (),
) -> Expression:
    """``e`` with every name that ``attrs`` (or, qualified, ``hidden``) resolves replaced."""

    def rule(x: Expression) -> Expression | None:
        if isinstance(x, UnresolvedAttribute):
            found = resolve_name(x.name_parts, attrs, cs, x.origin)
            if found is None and hidden and len(x.name_parts) > 1:
                found = resolve_name(x.name_parts, hidden, cs, x.origin)
            if found is None and len(x.name_parts) > 1:
                nested = resolve_nested_name(x.name_parts, attrs, cs, x.origin)
                if nested is not None:
                    # Spark keeps the alias naming the field only on a top-level name (a
                    # DataFrame's ``select(col("s.a"))`` item comes wrapped in UnresolvedAlias)
                    top = e.child if isinstance(e, UnresolvedAlias) else e
                    return nested if x is top else nested.child  # type: ignore[attr-defined]
            if found is None:
                return x
            # Spark names the column as the query spells it (``SELECT A FROM t`` -> ``A``)
            return found.with_name(x.name_parts[-1])
        return None

    return e.transform_up(rule)


def child_attrs(plan: LogicalPlan) -> tuple[AttributeReference, ...]:
    """The output attributes of all of ``plan``'s children, in order."""
    out: tuple[AttributeReference, ...] = ()
    for c in plan.children:
        out += c.output
    return out


# ---------------------------------------------------------------------------------------------
# star expansion


def expand_star(star: UnresolvedStar, child: LogicalPlan, cs: bool) -> list[AttributeReference]:
    """Spark's ``UnresolvedStar.expand``."""
    if isinstance(star, UnresolvedRegex):
        return star.expand(child.output)
    if not star.target:
        return list(child.output)
    hidden = [a for a in metadata_output(child)]
    out = []
    seen: set[int] = set()
    for a in hidden + list(child.output):
        if a.qualifier and _qualifier_matches(a.qualifier, star.target, cs) and a.id not in seen:
            seen.add(a.id)
            out.append(a)
    if not out:
        target = quote_parts(star.target)
        cols = ", ".join(quote(a.name) for a in child.output)
        raise AnalysisError(
            f"Cannot resolve {target}.* given input columns {cols}. Please check that the "
            "specified table or struct exists and is accessible in the input columns.",
            error_class="CANNOT_RESOLVE_STAR_EXPAND",
            parameters={"targetString": target, "columns": cols},
        )
    return out


def _has_star(exprs: Sequence[Expression]) -> bool:
    return any(e.exists(lambda x: isinstance(x, UnresolvedStar)) for e in exprs)


def _expand_in_functions(e: Expression, child: LogicalPlan, ctx) -> Expression:
    cs = ctx.case_sensitive

    def rule(x: Expression) -> Expression | None:
        if isinstance(x, UnresolvedFunction) and any(isinstance(a, UnresolvedStar) for a in x.arguments):
            name = x.fn_name.lower()
            args = x.arguments
            if name == "count" and not x.is_distinct and len(args) == 1:
                star = args[0]
                if isinstance(star, UnresolvedStar) and not star.target:
                    return x.copy(arguments=(Literal(1, T.INT),))
                if isinstance(star, UnresolvedStar) and not ctx.conf.get(ALLOW_STAR_IN_COUNT):
                    raise AnalysisError(
                        f"count({quote_parts(star.target)}.*) is not allowed. Use count(*) or "
                        "expand the columns manually, e.g. count(col1, col2).",
                        error_class="INVALID_USAGE_OF_STAR_WITH_TABLE_IDENTIFIER_IN_COUNT",
                        parameters={"tableName": quote_parts(star.target)},
                    )
            new_args: list[Expression] = []
            for a in args:
                if isinstance(a, UnresolvedStar):
                    new_args.extend(expand_star(a, child, cs))
                else:
                    new_args.append(a)
            return x.copy(arguments=tuple(new_args))
        return None

    return e.transform_up(rule)


def expand_select_list(items: Sequence[Expression], child: LogicalPlan, ctx) -> tuple[Expression, ...]:
    """``items`` with each ``*`` / ``t.*`` replaced by the columns of ``child`` it names."""
    out: list[Expression] = []
    for item in items:
        inner = item.child if isinstance(item, UnresolvedAlias) else item
        if isinstance(inner, UnresolvedStar):
            out.extend(expand_star(inner, child, ctx.case_sensitive))
        else:
            out.append(_expand_in_functions(item, child, ctx))
    return tuple(out)


# ---------------------------------------------------------------------------------------------
# DeduplicateRelations


def dedup_right(left: LogicalPlan, right: LogicalPlan) -> LogicalPlan:
    """``right`` re-aliased with fresh ids when it shares ids with ``left``."""
    conflict = left.output_set & right.output_set
    if not conflict:
        return right
    items = tuple(
        Alias(a, a.name, alias_qualifier=a.qualifier) if a.id in conflict else a
        for a in right.output
    )
    return Project(items, right)


# ---------------------------------------------------------------------------------------------
# the rule


def _resolve_node(p: LogicalPlan, ctx) -> LogicalPlan:
    cs = ctx.case_sensitive
    match p:
        case UnresolvedSubqueryColumnAliases(output_column_names=names, child=child):
            out = child.output
            if len(names) != len(out):
                raise AnalysisError(
                    f"Number of column aliases does not match number of columns. Number of column "
                    f"aliases: {len(names)}; number of columns: {len(out)}.",
                    error_class="ASSIGNMENT_ARITY_MISMATCH",
                    parameters={"numTarget": str(len(names)), "numExpr": str(len(out))},
                )
            return Project(tuple(Alias(a, n) for a, n in zip(out, names)), child)
        case Join(left=left, right=right) if left.resolved and right.resolved and (
            left.output_set & right.output_set
        ):
            return p.copy(right=dedup_right(left, right))
        case Intersect(left=left, right=right) | Except(left=left, right=right) if (
            left.resolved and right.resolved and (left.output_set & right.output_set)
        ):
            return p.copy(right=dedup_right(left, right))
        case LateralJoin(left=left, condition=cond):
            # the condition reads both sides: resolved once the subquery is
            if cond is None or not p.right.resolved or not has_unresolved(cond):
                return p
            return p.copy(condition=resolve_expression(cond, left.output + p.right_output, cs))
        case Project(project_list=items, child=child) if _has_star(items):
            return p.copy(project_list=expand_select_list(items, child, ctx))
        case Aggregate(aggregate_expressions=items, child=child) if _has_star(items):
            return p.copy(aggregate_expressions=expand_select_list(items, child, ctx))
        case Aggregate(grouping_expressions=groups, aggregate_expressions=items, child=child):
            attrs, hidden = child.output, metadata_output(child)
            new_items = tuple(resolve_expression(e, attrs, cs, hidden) for e in items)
            new_groups = tuple(resolve_expression(e, attrs, cs, hidden) for e in groups)
            if any(has_unresolved(g) for g in new_groups) and not any(
                has_unresolved(e) for e in new_items
            ):
                new_groups = tuple(_group_by_alias(g, new_items, cs) for g in new_groups)
            return p.copy(grouping_expressions=new_groups, aggregate_expressions=new_items)
        case UnresolvedHaving(condition=cond, child=child):
            cond = _expand_in_functions(cond, child, ctx)
            if isinstance(child, Aggregate):
                # Columns in HAVING resolve against the aggregate's input first (SPARK-31519)
                cond = resolve_col_with_agg(cond, child, cs)
            return p.copy(condition=resolve_expression(cond, child.output, cs))
        case Filter(condition=cond, child=child) if has_tried_temp_column(cond):
            return p.copy(condition=_resolve_tried_columns(cond, child.output, cs))
        case _:
            if not any(has_unresolved(e) for e in p.expressions()) and not _has_star(p.expressions()):
                return p
            attrs = child_attrs(p)
            hidden = children_metadata(p)
            return p.map_expressions(
                lambda e: resolve_expression(_expand_any_star(e, p, ctx), attrs, cs, hidden)
            )


def resolve_col_with_agg(e: Expression, agg: Aggregate, cs: bool) -> Expression:
    """Spark's ``resolveColWithAgg``: each name the aggregate's input resolves becomes a
    :class:`TempResolvedColumn` over that input column (an ambiguous name is left alone, for
    the aliases to resolve)."""
    child = agg.child
    attrs, hidden = child.output, metadata_output(child)

    def rule(x: Expression) -> Expression | None:
        if not isinstance(x, UnresolvedAttribute):
            return None
        try:
            found = resolve_name(x.name_parts, attrs, cs, x.origin)
            if found is None and hidden and len(x.name_parts) > 1:
                found = resolve_name(x.name_parts, hidden, cs, x.origin)
        except AnalysisError:
            return None
        if found is None and len(x.name_parts) > 1:
            try:
                nested = resolve_nested_name(x.name_parts, attrs, cs, x.origin)
            except AnalysisError:
                return None
            return None if nested is None else nested.child  # type: ignore[attr-defined]
        if found is None:
            return None
        return TempResolvedColumn(found.with_name(x.name_parts[-1]), tuple(x.name_parts))

    return e.transform_up(rule)


def _resolve_tried_columns(
    e: Expression, attrs: Sequence[AttributeReference], cs: bool
) -> Expression:
    """Tried :class:`TempResolvedColumn` s (neither aggregated nor grouped) resolved again by
    name against ``attrs``, the Aggregate's output (Spark's ``innerResolve`` of a
    ``TempResolvedColumn`` with ``hasTried``); kept when no output column has the name."""

    def rule(x: Expression) -> Expression | None:
        if isinstance(x, TempResolvedColumn) and x.has_tried:
            found = resolve_name(x.name_parts, attrs, cs)
            return None if found is None else found.with_name(x.name_parts[-1])
        return None

    return e.transform_up(rule)


def _expand_any_star(e: Expression, p: LogicalPlan, ctx) -> Expression:
    if len(p.children) == 1 and e.exists(lambda x: isinstance(x, UnresolvedStar)):
        return _expand_in_functions(e, p.children[0], ctx)
    return e


def _group_by_alias(g: Expression, items: Sequence[Expression], cs: bool) -> Expression:
    def rule(x: Expression) -> Expression | None:
        if isinstance(x, UnresolvedAttribute) and len(x.name_parts) == 1:
            n = x.name_parts[0]
            matches = [
                i for i in items if isinstance(i, Alias)
                and (i.name == n if cs else i.name.lower() == n.lower())
            ]
            if len(matches) == 1:
                return matches[0].child
        return None

    return g.transform_up(rule)


def resolve_references(plan: LogicalPlan, ctx) -> LogicalPlan:
    """``plan`` with names resolved to attributes where the children allow (see module doc)."""
    def rule(p: LogicalPlan) -> LogicalPlan:
        if not p.children or not all(c.resolved for c in p.children):
            return p
        if p.resolved and not isinstance(p, (Join, Intersect, Except)) and not (
            isinstance(p, Filter) and has_tried_temp_column(p.condition)
        ):
            return p
        return _resolve_node(p, ctx)

    return transform_up_in_run(plan, rule, ctx, "ResolveReferences")


__all__ = [
    "resolve_references",
    "resolve_expression",
    "expand_star",
    "dedup_right",
    "child_attrs",
    "unresolved_column_error",
    "quote",
]
