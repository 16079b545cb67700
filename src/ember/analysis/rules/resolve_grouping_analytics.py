"""ResolveGroupingAnalytics: ``GROUP BY CUBE / ROLLUP / GROUPING SETS`` -> Aggregate over Expand.

Before::  Aggregate [rollup(Vector(0), Vector(1), a#1, b#2)], [a#1, b#2, sum(b#2) AS sum(b)#3]
            (t)
After::   Aggregate [a#5, b#6, spark_grouping_id#4L], [a#5, b#6, sum(b#2) AS sum(b)#3]
            (Expand [[a#1, b#2, a#7, b#8, 0], [a#1, b#2, a#7, null, 1],
                     [a#1, b#2, null, null, 3]], [a#1, b#2, a#5, b#6, spark_grouping_id#4L]
              (Project [a#1, b#2, a#1 AS a#7, b#2 AS b#8] (t)))

As Spark's rule of that name:

- the grouping sets of several GROUP BY items combine as a cartesian product
  (``GROUP BY a, ROLLUP(b, c)``); the grouping expressions are the distinct ones of all items;
- each grouping expression is aliased below the Expand, which nulls it in the sets that lack
  it, so aggregate functions still read the original (un-nulled) input columns;
- ``spark_grouping_id`` (bigint) has one bit per grouping expression, the first the most
  significant (:func:`ember.expressions.grouping.grouping_id_bitmask`); when a grouping set
  repeats, ``_gen_grouping_pos`` (the set's position) keeps the repeats apart;
- ``grouping(e)`` becomes ``cast((shiftright(spark_grouping_id, n - 1 - i) & 1) as tinyint)``,
  ``grouping_id(...)`` the grouping id itself, in the select list, HAVING and ORDER BY;
- HAVING over grouping analytics resolves against the aggregation before it is built (Spark's
  ``tryResolveHavingCondition``); the names inside ``grouping()`` there resolve against the
  select list only, as in Spark 4;
- ``grouping__id`` (Hive's name) is ``grouping_id()`` where no column has that name.

Errors: ``GROUPING_SIZE_LIMIT_EXCEEDED`` past 64 grouping expressions,
``GROUPING_COLUMN_MISMATCH`` / ``GROUPING_ID_COLUMN_MISMATCH`` for arguments that are not the
grouping expressions; ``UNSUPPORTED_GROUPING_EXPRESSION`` (grouping functions without grouping
sets) is CheckAnalysis's.

Also ``GROUP BY ALL`` (Spark's ``ResolveReferences.resolveGroupByAll``): the grouping
expressions are the select items without aggregate functions.
"""

from __future__ import annotations

from collections.abc import Sequence

from ember import types as T
from ember.analysis.resolution import (
    has_unresolved,
    pretty_sql,
    resolve_name,
    strip_alias,
    unresolved_column_error,
)
from ember.analysis.rules._util import (contains_aggregate, is_aggregate_expr,
                                        transform_up_in_run)
from ember.analysis.rules.resolve_aggregate_functions import resolve_with_aggregate
from ember.analysis.rules.resolve_references import (
    child_attrs,
    resolve_col_with_agg,
    resolve_expression,
)
from ember.errors import AnalysisError
from ember.expressions.base import (
    Alias,
    AttributeReference,
    Expression,
    Literal,
    NamedExpression,
    SortOrder,
    UnresolvedAttribute,
    UnresolvedFunction,
)
from ember.expressions.bitwise import BitwiseAnd, ShiftRight
from ember.expressions.cast import Cast
from ember.expressions.grouping import (
    GROUPING_ID_NAME,
    HIVE_GROUPING_ID_NAME,
    MAX_GROUPING_EXPRESSIONS,
    BaseGroupingSets,
    Grouping,
    GroupingID,
    distinct_group_by_exprs,
    grouping_id_bitmask,
)
from ember.plans.logical.nodes import (
    Aggregate,
    Expand,
    Filter,
    LogicalPlan,
    Project,
    Sort,
    UnresolvedHaving,
    Window,
)

GROUPING_POS_NAME = "_gen_grouping_pos"


def has_grouping_function(e: Expression) -> bool:
    return e.exists(lambda x: isinstance(x, (Grouping, GroupingID)))


def _ids(exprs: Sequence[Expression]) -> str:
    return ",".join(str(e) for e in exprs)


def _replace_grouping_functions(e: Expression, group_by: Sequence[Expression],
                                gid: Expression) -> Expression:
    """``grouping()`` / ``grouping_id()`` in ``e`` as arithmetic over ``gid`` (Spark's
    ``replaceGroupingFunc``)."""
    def rule(x: Expression) -> Expression | None:
        if isinstance(x, GroupingID):
            if not x.group_by_exprs or (
                    len(x.group_by_exprs) == len(group_by) and all(
                        a.semantic_equals(b) for a, b in zip(x.group_by_exprs, group_by))):
                return gid
            raise AnalysisError(
                f"Columns of grouping_id ({_ids(x.group_by_exprs)}) does not match grouping "
                f"columns ({_ids(group_by)}).", error_class="GROUPING_ID_COLUMN_MISMATCH",
                parameters={"groupingIdColumn": _ids(x.group_by_exprs),
                            "groupByColumns": _ids(group_by)})
        if isinstance(x, Grouping):
            for i, g in enumerate(group_by):
                if g.semantic_equals(x.child):
                    shifted = ShiftRight(gid, Literal(len(group_by) - 1 - i, T.INT))
                    return Cast(BitwiseAnd(shifted, Literal(1, T.LONG)), T.BYTE)
            raise AnalysisError(
                f"Column of grouping ({x.child}) can't be found in grouping columns "
                f"{_ids(group_by)}.", error_class="GROUPING_COLUMN_MISMATCH",
                parameters={"grouping": str(x.child), "groupingColumns": _ids(group_by)})
        return None

    return e.transform_down(rule)


def grouping_analytics(groups: Sequence[Expression]
                       ) -> tuple[list[list[Expression]], list[Expression]] | None:
    """(grouping sets, grouping expressions) of an Aggregate's GROUP BY items when one is a
    CUBE / ROLLUP / GROUPING SETS and all are resolved (Spark's ``GroupingAnalytics``)."""
    if not any(isinstance(g, BaseGroupingSets) for g in groups):
        return None
    for g in groups:
        kids = g.children if isinstance(g, BaseGroupingSets) else (g,)
        if any(has_unresolved(k) or not k.resolved for k in kids):
            return None
    flat: list[Expression] = []
    for g in groups:
        flat += g.group_by_exprs if isinstance(g, BaseGroupingSets) else [g]
    group_by = distinct_group_by_exprs(flat)
    if len(group_by) > MAX_GROUPING_EXPRESSIONS:  # before listing 2^n sets of a CUBE
        raise AnalysisError(
            f"Grouping sets size cannot be greater than {MAX_GROUPING_EXPRESSIONS}.",
            error_class="GROUPING_SIZE_LIMIT_EXCEEDED",
            parameters={"maxSize": str(MAX_GROUPING_EXPRESSIONS)})
    selected: list[list[Expression]] = [[]]
    for g in groups:
        sets = g.selected_group_by_exprs if isinstance(g, BaseGroupingSets) else [[g]]
        selected = [x + y for x in selected for y in sets]
    return selected, group_by


def construct_aggregate(selected: list[list[Expression]], group_by: list[Expression],
                        aggs: Sequence[Expression], child: LogicalPlan) -> Aggregate:
    """``Aggregate(groupBy + spark_grouping_id, aggs, Expand(...))`` (Spark's
    ``constructAggregate``; see the module doc). ``group_by`` has at most 64 expressions
    (:func:`grouping_analytics` checks)."""
    aliases = [Alias(e, e.name, alias_qualifier=e.qualifier) if isinstance(e, NamedExpression)
               else Alias(e, pretty_sql(e)) for e in group_by]
    gid = AttributeReference(GROUPING_ID_NAME, T.LONG, False)
    alias_attrs = [a.to_attribute() for a in aliases]
    # an expression absent from some grouping set becomes nullable
    expanded = [a.copy(is_nullable=True) if any(
        not any(e.semantic_equals(al.child) for e in s) for s in selected) else a
        for a, al in zip(alias_attrs, aliases)]

    set_indexes: list[list[int]] = []
    for s in selected:
        idx = []
        for e in s:
            found = [i for i, al in enumerate(aliases) if al.child.semantic_equals(e)]
            if not found:
                raise AnalysisError(
                    f"{pretty_sql(e)} doesn't show up in the GROUP BY list "
                    f"{[str(a) for a in aliases]}.", error_class="_LEGACY_ERROR_TEMP_1026",
                    parameters={"expr": str(e), "groupByAliases": str(aliases)})
            idx.append(found[0])
        set_indexes.append(idx)

    n = len(group_by)
    has_duplicates = len({frozenset(i) for i in set_indexes}) != len(set_indexes)
    projections = []
    for pos, idx in enumerate(set_indexes):
        chosen = set(idx)
        row: list[Expression] = list(child.output)
        row += [a if i in chosen else Literal(None, a.data_type) for i, a in enumerate(expanded)]
        row.append(Literal(grouping_id_bitmask(idx, n), T.LONG))
        if has_duplicates:
            row.append(Literal(pos, T.INT))
        projections.append(tuple(row))
    out_groups = [a.copy(id=AttributeReference(a.name, a.data_type).id) for a in expanded]
    out_groups.append(gid)
    if has_duplicates:
        out_groups.append(AttributeReference(GROUPING_POS_NAME, T.INT, False))
    expand = Expand(tuple(projections), tuple(child.output) + tuple(out_groups),
                    Project(tuple(child.output) + tuple(aliases), child))

    def replace(e: Expression) -> Expression:
        if is_aggregate_expr(e):
            return e
        for i, al in enumerate(aliases):
            if al.child.semantic_equals(e):
                return out_groups[i]
        kids = e.children
        return e.with_children(tuple(replace(k) for k in kids)) if kids else e

    if not group_by and len(selected) == 1:
        # ``GROUPING SETS (())``: a grand total, one row even over empty input (Spark 4.3: a
        # global aggregation, its grouping id 0; the Expand marks it for HAVING / ORDER BY)
        zero = Literal(0, T.LONG)
        return Aggregate((), tuple(_replace_grouping_functions(a, [], zero) for a in aggs),
                         expand)
    new_aggs = tuple(replace(_replace_grouping_functions(a, group_by, gid)) for a in aggs)
    return Aggregate(tuple(out_groups), new_aggs, expand)


def _find_grouping_exprs(plan: LogicalPlan) -> tuple[list[Expression], Expression]:
    """The grouping expressions and grouping id of the first Aggregate under a Filter / Sort
    (Spark's ``findGroupingExprs``)."""
    for p in _pre_order(plan):
        if isinstance(p, Aggregate) and not p.grouping_expressions and isinstance(
                p.child, Expand) and p.child.attrs[-1].name == GROUPING_ID_NAME:
            return [], Literal(0, T.LONG)  # the grand total of GROUPING SETS (())
        if isinstance(p, Aggregate):
            # Spark wants the grouping id as the last grouping key: after repeated grouping
            # sets ``_gen_grouping_pos`` is, so grouping() above fails there as in Spark
            if not _gid_is_last(p):
                break
            return list(p.grouping_expressions[:-1]), p.grouping_expressions[-1]
    raise unsupported_grouping_expression()


def _gid_is_last(agg: Aggregate) -> bool:
    groups = agg.grouping_expressions
    return bool(groups) and isinstance(groups[-1], AttributeReference) and (
        groups[-1].name == GROUPING_ID_NAME)


def _grouping_attrs(plan: LogicalPlan) -> list[AttributeReference]:
    """The grouping columns (no grouping id) of a grouping-sets Aggregate, or a HAVING Filter
    over one; empty for anything else."""
    if isinstance(plan, Filter):
        plan = plan.child
    if not isinstance(plan, Aggregate) or not any(
            isinstance(g, AttributeReference) and g.name == GROUPING_ID_NAME
            for g in plan.grouping_expressions):
        return []
    return [g for g in plan.grouping_expressions if isinstance(g, AttributeReference)
            and g.name not in (GROUPING_ID_NAME, GROUPING_POS_NAME)]


def _pre_order(plan: LogicalPlan):
    stack = [plan]
    while stack:
        p = stack.pop()
        yield p
        stack.extend(reversed(p.children))


def unsupported_grouping_expression() -> AnalysisError:
    return AnalysisError("grouping()/grouping_id() can only be used with "
                         "GroupingSets/Cube/Rollup.",
                         error_class="UNSUPPORTED_GROUPING_EXPRESSION")


def _with_gid_output(plan: LogicalPlan, gid: Expression) -> tuple[LogicalPlan, bool]:
    """``plan`` (an Aggregate, or a Filter over one) with ``gid`` among the Aggregate's outputs;
    whether it had to be added."""
    if not isinstance(gid, AttributeReference) or any(a.id == gid.id for a in plan.output):
        return plan, False
    match plan:
        case Aggregate(aggregate_expressions=items):
            return plan.copy(aggregate_expressions=items + (gid,)), True
        case Filter(child=c) | Window(child=c):
            # a HAVING, or the Window of window functions over the aggregate: both pass their
            # child's columns through
            new, added = _with_gid_output(c, gid)
            return (plan.with_children((new,)), True) if added else (plan, False)
        case Project(project_list=items, child=c):
            # the Project a HAVING puts over its hidden aggregates, or the select list over a
            # Window
            new, _ = _with_gid_output(c, gid)
            if gid.id not in new.output_set:
                return plan, False
            # (the child may pass it already: a window partitioned by grouping_id())
            return plan.copy(project_list=items + (gid,), child=new), True
    return plan, False


def _resolve_having(h: UnresolvedHaving, agg: Aggregate, selected, group_by, ctx
                    ) -> LogicalPlan | None:
    """Spark's ``tryResolveHavingCondition``; None to wait."""
    cs = ctx.case_sensitive
    out = agg.output

    def grouping_args(x: Expression) -> Expression | None:
        # Spark 4 resolves the columns inside grouping() in HAVING against the select list only
        if isinstance(x, (Grouping, GroupingID)) or (
                isinstance(x, UnresolvedFunction)
                and x.fn_name.lower() in ("grouping", "grouping_id")):
            def name(y: Expression) -> Expression | None:
                if isinstance(y, UnresolvedAttribute):
                    found = resolve_name(y.name_parts, out, cs, y.origin)
                    if found is None:
                        raise unresolved_column_error(y.name_parts, out, y.origin)
                    return found
                return None
            return x.transform_down(name)
        return None

    cond = h.condition.transform_down(grouping_args)
    for_resolving = agg.copy(grouping_expressions=tuple(group_by))
    cond = resolve_col_with_agg(cond, for_resolving, cs)
    got = resolve_with_aggregate((cond,), for_resolving, ctx)
    if got is None:
        return None
    (new_cond,), with_extra = got
    extra = with_extra.aggregate_expressions[len(agg.aggregate_expressions):]
    new_agg = construct_aggregate(selected, group_by, with_extra.aggregate_expressions, agg.child)
    mapping = {a.id: b for a, b in zip(with_extra.output, new_agg.output)}
    new_cond = new_cond.transform_up(
        lambda x: mapping.get(x.id) if isinstance(x, AttributeReference) else None)
    gid: Expression = (new_agg.grouping_expressions[len(group_by)]
                       if new_agg.grouping_expressions else Literal(0, T.LONG))
    added = False
    if has_grouping_function(new_cond):
        if new_agg.grouping_expressions and not _gid_is_last(new_agg):
            raise unsupported_grouping_expression()  # repeated grouping sets (see above)
        new_cond = _replace_grouping_functions(new_cond, new_agg.grouping_expressions[
            :len(group_by)], gid)
        if isinstance(gid, AttributeReference) and gid.id not in new_agg.output_set:
            new_agg = new_agg.copy(aggregate_expressions=new_agg.aggregate_expressions + (gid,))
            added = True
    plan: LogicalPlan = Filter(new_cond, new_agg)
    if extra or added:
        plan = Project(tuple(new_agg.output[:len(agg.aggregate_expressions)]), plan)
    return plan


def _hive_grouping_id(p: LogicalPlan, cs: bool) -> LogicalPlan:
    """``grouping__id`` that no input column resolves -> ``grouping_id()`` (named
    ``grouping__id`` as a select item)."""
    attrs = child_attrs(p)

    def is_hive_gid(x: Expression) -> bool:
        return (isinstance(x, UnresolvedAttribute) and len(x.name_parts) == 1
                and x.name_parts[0].lower() == HIVE_GROUPING_ID_NAME
                and resolve_name(x.name_parts, attrs, cs) is None)

    if not any(e.exists(is_hive_gid) for e in p.expressions()):
        return p

    def sub(x: Expression) -> Expression | None:
        return GroupingID(()) if is_hive_gid(x) else None

    if isinstance(p, (Aggregate, Project)):
        items = p.aggregate_expressions if isinstance(p, Aggregate) else p.project_list
        new = tuple(Alias(GroupingID(()), HIVE_GROUPING_ID_NAME) if is_hive_gid(e)
                    else e.transform_down(sub) for e in items)
        if isinstance(p, Aggregate):
            return p.copy(aggregate_expressions=new)
        return p.copy(project_list=new)
    return p.map_expressions(lambda e: e.transform_down(sub))


def _is_group_by_all(p: Aggregate, cs: bool) -> bool:
    g = p.grouping_expressions
    return (len(g) == 1 and isinstance(g[0], UnresolvedAttribute)
            and len(g[0].name_parts) == 1 and g[0].name_parts[0].upper() == "ALL"
            and resolve_name(g[0].name_parts, p.child.output, cs) is None)


def resolve_grouping_analytics(plan: LogicalPlan, ctx) -> LogicalPlan:
    """``plan`` with grouping analytics built (see module doc)."""
    cs = ctx.case_sensitive

    def rule(p: LogicalPlan) -> LogicalPlan:
        match p:
            case UnresolvedHaving(child=Aggregate() as agg) if agg.child.resolved:
                got = grouping_analytics(agg.grouping_expressions)
                if got is not None and _items_resolved(agg):
                    built = _resolve_having(p, agg, got[0], got[1], ctx)
                    if built is not None:
                        return built
                return p
            case Aggregate() if p.child.resolved:
                return _resolve_aggregate(p, cs)
        return p

    def rule_up(p: LogicalPlan) -> LogicalPlan:
        # bottom-up, so that a Sort / Filter sees the Aggregate built below it in this pass
        if not p.children or not all(c.resolved for c in p.children):
            return p
        p = _hive_grouping_id(p, cs)
        match p:
            case Sort(order=order, child=child) if any(has_unresolved(o) for o in order) and (
                    _grouping_attrs(child)):
                # an ORDER BY name that is no output: the grouping column (nulled by the
                # Expand), not the input column of the same name
                groups = _grouping_attrs(child)
                new_order = tuple(resolve_expression(resolve_expression(o, child.output, cs),
                                                     groups, cs) for o in order)
                return p.copy(order=new_order) if new_order != order else p
            case Filter(condition=cond, child=child) if has_grouping_function(cond) and (
                    cond.resolved):
                groups, gid = _find_grouping_exprs(child)
                new_child, added = _with_gid_output(child, gid)
                new = Filter(_replace_grouping_functions(cond, groups, gid), new_child)
                return Project(child.output, new) if added else new
            case Sort(order=order, child=child) if any(
                    has_grouping_function(o) for o in order) and all(o.resolved for o in order):
                groups, gid = _find_grouping_exprs(child)
                new_child, added = _with_gid_output(child, gid)
                new_order = tuple(_replace_grouping_functions(o, groups, gid) for o in order)
                new = p.copy(order=tuple(o for o in new_order if isinstance(o, SortOrder)),
                             child=new_child)
                return Project(child.output, new) if added else new
        return p

    return transform_up_in_run(plan.transform_down(rule), rule_up, ctx,
                               "ResolveGroupingAnalytics")


def _items_resolved(agg: Aggregate) -> bool:
    return all(isinstance(e, NamedExpression) and not has_unresolved(e) and e.resolved
               for e in agg.aggregate_expressions)


def _resolve_aggregate(p: Aggregate, cs: bool) -> LogicalPlan:
    if _is_group_by_all(p, cs):
        if any(has_unresolved(e) for e in p.aggregate_expressions):
            return p
        return p.copy(grouping_expressions=tuple(
            strip_alias(e) for e in p.aggregate_expressions if not contains_aggregate(e)))
    p = _hive_grouping_id(p, cs)
    got = grouping_analytics(p.grouping_expressions)
    if got is None or not _items_resolved(p):
        return p
    return construct_aggregate(got[0], got[1], p.aggregate_expressions, p.child)
