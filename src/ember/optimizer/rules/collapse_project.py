"""CollapseProject, RemoveNoopOperators and RemoveRedundantAliases (Spark 4's rules).

**CollapseProject** (bottom-up) merges a Project into the Project or Aggregate below it,
substituting the lower aliases into the upper expressions::

    Project [(x#3 + 1) AS y#4] (Project [(a#1 * 2) AS x#3] (t))  ==>  Project [((a#1 * 2) + 1) AS y#4] (t)
    Project [(s#3 + 1) AS y#4] (Aggregate [k], [sum(v) AS s#3])   ==>  Aggregate [k], [(sum(v) + 1) AS y#4]
    Project [a#1 AS b#5] (Limit (Project [a#1, c#2]))             ==>  Limit (Project [a#1 AS b#5, ...])
                                                                        (renaming projects only)

NOT applied when a lower alias is non-deterministic (``rand() AS r`` referenced above must be
evaluated once per row), or when an expensive lower alias is referenced more than once above
(it would be computed twice) unless ``spark.sql.optimizer.collapseProjectAlwaysInline``; cheap
ones (attributes, foldable expressions, aliases of those) are always inlined.  A Project over an
Aggregate is not collapsed when it holds a correlated scalar subquery, nor any Project whose
correlated subqueries read a lower alias as an outer column.  Top-level references keep
their name: ``Project [x#3]`` over ``(a + 1) AS x#3`` becomes ``(a + 1) AS x#3``.

**RemoveNoopOperators** removes a Project whose output is its child's (same attribute ids, in
order), renaming the child's items when only names differ; kept if names would change.

**RemoveRedundantAliases** replaces ``a#1 AS a#5`` (same name) by ``a#1`` in Projects and
Aggregates and rewires references to ``a#5`` above.  NOT applied to aliases that keep a
self-join's two sides apart (the other side's attributes are excluded), to those producing the
first Union input's output, or -- unlike Spark -- to those producing the root plan's output
(Ember's rule executor requires the output ids of the plan to stay unchanged); nor when it would
make one Project output the same attribute twice.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable

from ember.conf import COLLAPSE_PROJECT_ALWAYS_INLINE, SQLConf
from ember.expressions.base import Alias, AttributeReference, Expression
from ember.optimizer.rule_executor import Rule
from ember.plans.logical.nodes import (
    Aggregate,
    Join,
    Limit,
    LogicalPlan,
    Project,
    Union,
)
from ember.expressions.subquery import OuterReference, ScalarSubquery, SubqueryExpression

__all__ = ["CollapseProject", "RemoveNoopOperators", "RemoveRedundantAliases",
           "alias_map", "build_cleaned_project_list", "can_collapse_expressions"]


# ---------------------------------------------------------------------------------------------
# Alias helpers (Catalyst's AliasHelper)


def alias_map(exprs: Iterable[Expression]) -> dict[int, Alias]:
    """Attribute id -> the Alias producing it (Catalyst's ``getAliasMap``)."""
    return {e.id: e for e in exprs if isinstance(e, Alias)}


def _trim_aliases(e: Expression) -> Expression:
    while isinstance(e, Alias):
        e = e.child
    return e


def replace_alias_but_keep_name(expr: Expression, aliases: dict[int, Alias]) -> Expression:
    """Catalyst's ``replaceAliasButKeepName``: attributes replaced by the aliased expressions; a
    top-level attribute becomes the alias itself, renamed to the attribute's name."""
    if isinstance(expr, AttributeReference):
        a = aliases.get(expr.id)
        if a is None:
            return expr
        return a if a.alias_name == expr.name else a.copy(alias_name=expr.name)

    def sub(e: Expression) -> Expression | None:
        if isinstance(e, AttributeReference):
            a = aliases.get(e.id)
            return a.child if a is not None else None
        return None

    kids = expr.children
    if not kids:
        return expr
    return expr.with_children(tuple(k.transform_up(sub) for k in kids))


def build_cleaned_project_list(upper: Iterable[Expression],
                               lower: Iterable[Expression]) -> tuple[Expression, ...]:
    """``upper`` with the aliases of ``lower`` substituted (Catalyst's
    ``buildCleanedProjectList``)."""
    aliases = alias_map(lower)
    return tuple(replace_alias_but_keep_name(e, aliases) for e in upper)


def _is_cheap(e: Expression) -> bool:
    if isinstance(e, (AttributeReference, OuterReference)):
        return True
    try:
        if e.foldable:
            return True
    except Exception:  # noqa: BLE001
        return False
    if isinstance(e, Alias):
        return all(_is_cheap(c) for c in e.children)
    return False


def _references(e: Expression) -> list[int]:
    return [a.id for a in e.collect(lambda x: x if isinstance(x, AttributeReference) else None)]


def can_collapse_expressions(consumers: Iterable[Expression], producers: Iterable[Expression],
                             always_inline: bool = False) -> bool:
    """Every lower alias referenced above is deterministic, and referenced once or cheap."""
    aliases = alias_map(producers)
    counts = Counter(i for c in consumers for i in _references(c))
    for ref, count in counts.items():
        producer = aliases.get(ref)
        if producer is None:
            continue
        if not producer.deterministic:
            return False
        if not (count == 1 or always_inline or _is_cheap(_trim_aliases(producer))):
            return False
    return True


def _has_correlated_scalar_subquery(exprs: Iterable[Expression]) -> bool:
    return any(e.find(lambda x: isinstance(x, ScalarSubquery) and bool(x.outer_attrs))
               is not None for e in exprs)


def _subquery_reads_alias(upper: Iterable[Expression], lower: Iterable[Expression]) -> bool:
    """Whether a correlated subquery above reads a lower alias as an outer column: its plan's
    ``OuterReference`` names the alias, which inlining would remove (Spark pulls correlated
    predicates out of subqueries before collapsing; Ember decorrelates only when the subquery
    becomes a join, so such Projects stay apart)."""

    ids = set(alias_map(lower))
    if not ids:
        return False
    return any(e.find(lambda x: isinstance(x, SubqueryExpression) and any(
        a.references & ids for a in getattr(x, "outer_attrs", ()))) is not None for e in upper)


def _is_renaming(list1: tuple[Expression, ...], list2: tuple[Expression, ...]) -> bool:
    if len(list1) != len(list2):
        return False
    for e1, e2 in zip(list1, list2):
        if isinstance(e1, AttributeReference) and isinstance(e2, AttributeReference) and (
                e1.id == e2.id):
            continue
        if isinstance(e1, Alias) and isinstance(e1.child, AttributeReference) and (
                e1.child.name == e2.name):  # type: ignore[attr-defined]
            continue
        return False
    return True


# ---------------------------------------------------------------------------------------------
# CollapseProject


class CollapseProject(Rule):
    """See the module docstring."""

    rule_name = "CollapseProject"

    def apply(self, plan: LogicalPlan, conf: SQLConf) -> LogicalPlan:
        always = conf.get(COLLAPSE_PROJECT_ALWAYS_INLINE)

        def rule(p: LogicalPlan) -> LogicalPlan:
            match p:
                case Project(project_list=upper, child=Project(project_list=lower) as p2) if (
                        can_collapse_expressions(upper, lower, always)
                        and not _subquery_reads_alias(upper, lower)):
                    return p2.copy(project_list=build_cleaned_project_list(upper, lower))
                case Project(project_list=upper, child=Aggregate(aggregate_expressions=lower)
                             as agg) if (can_collapse_expressions(upper, lower, always)
                                         and not _has_correlated_scalar_subquery(upper)
                                         and not _subquery_reads_alias(upper, lower)):
                    return agg.copy(aggregate_expressions=build_cleaned_project_list(upper, lower))
                case Project(project_list=l1, child=Limit(child=Project(project_list=l2) as p2)
                             as lim) if _is_renaming(l1, l2):
                    return lim.copy(child=p2.copy(project_list=build_cleaned_project_list(l1, l2)))
                case _:
                    return p

        return plan.transform_up(rule)


# ---------------------------------------------------------------------------------------------
# RemoveNoopOperators


def _restore_names(items: tuple[Expression, ...], names: list[str]) -> tuple[Expression, ...]:
    out = []
    for e, name in zip(items, names):
        if isinstance(e, AttributeReference):
            out.append(e.with_name(name))
        elif isinstance(e, Alias) and e.alias_name != name:
            out.append(e.copy(alias_name=name))
        else:
            out.append(e)
    return tuple(out)


class RemoveNoopOperators(Rule):
    """See the module docstring."""

    rule_name = "RemoveNoopOperators"

    def apply(self, plan: LogicalPlan, conf: SQLConf) -> LogicalPlan:
        def rule(p: LogicalPlan) -> LogicalPlan:
            match p:
                case Project(project_list=items, child=child) if _same_ids(child.output, p.output):
                    names = [e.name for e in items]  # type: ignore[attr-defined]
                    match child:
                        case Project(project_list=lower):
                            new_child = child.copy(project_list=_restore_names(lower, names))
                        case Aggregate(aggregate_expressions=lower):
                            new_child = child.copy(
                                aggregate_expressions=_restore_names(lower, names))
                        case _:
                            new_child = child
                    if [a.name for a in new_child.output] == names:
                        return child if new_child == child else new_child
                    return p
                case _:
                    return p

        return plan.transform_up(rule)


def _same_ids(a: tuple[AttributeReference, ...], b: tuple[AttributeReference, ...]) -> bool:
    return len(a) == len(b) and all(x.id == y.id for x, y in zip(a, b))


# ---------------------------------------------------------------------------------------------
# RemoveRedundantAliases


def _mapping(old: LogicalPlan, new: LogicalPlan) -> dict[int, AttributeReference]:
    if old is new:
        return {}
    return {a.id: b for a, b in zip(old.output, new.output) if a.id != b.id}


def _clean_list(items: tuple[Expression, ...], excluded: frozenset[int]) -> tuple[Expression, ...]:
    plain = Counter(e.id for e in items if isinstance(e, AttributeReference))
    out = []
    for e in items:
        if (isinstance(e, Alias) and isinstance(e.child, AttributeReference)
                and e.alias_name == e.child.name and e.child.id not in excluded
                and e.id not in excluded and plain[e.child.id] == 0):
            plain[e.child.id] += 1
            out.append(e.child)
        else:
            out.append(e)
    return tuple(out)


def _remove(plan: LogicalPlan, excluded: frozenset[int]) -> LogicalPlan:
    if not plan.contains(Alias):
        return plan
    match plan:
        case Join(left=left, right=right, condition=cond):
            new_left = _remove(left, excluded | right.output_set)
            new_right = _remove(right, excluded | new_left.output_set)
            mapping = {**_mapping(left, new_left), **_mapping(right, new_right)}
            new_cond = cond if cond is None or not mapping else _rewire(cond, mapping)
            if new_left is left and new_right is right and new_cond is cond:
                return plan
            return plan.copy(left=new_left, right=new_right, condition=new_cond)
        case Union(inputs=inputs):
            first, *rest = inputs
            new = [_remove(first, excluded | first.output_set)]
            new += [_remove(c, excluded - c.output_set) for c in rest]
            return plan.with_children(tuple(new))
        case _:
            kids = plan.children
            new_kids = tuple(_remove(k, excluded) for k in kids)
            mapping: dict[int, AttributeReference] = {}
            for old, new in zip(kids, new_kids):
                for k, v in _mapping(old, new).items():
                    mapping.setdefault(k, v)
            node = plan.with_children(new_kids) if kids else plan
            if mapping:
                node = node.map_expressions(lambda e: _rewire(e, mapping))
            match node:
                case Project(project_list=items):
                    cleaned = _clean_list(items, excluded)
                    if any(a is not b for a, b in zip(cleaned, items)):
                        node = node.copy(project_list=cleaned)
                case Aggregate(aggregate_expressions=items):
                    cleaned = _clean_list(items, excluded)
                    if any(a is not b for a, b in zip(cleaned, items)):
                        node = node.copy(aggregate_expressions=cleaned)
            return node


def _rewire(e: Expression, mapping: dict[int, AttributeReference]) -> Expression:
    def sub(x: Expression) -> Expression | None:
        if isinstance(x, AttributeReference):
            new = mapping.get(x.id)
            return new.with_name(x.name) if new is not None else None
        return None

    return e.transform_up(sub)


class RemoveRedundantAliases(Rule):
    """See the module docstring."""

    rule_name = "RemoveRedundantAliases"

    def apply(self, plan: LogicalPlan, conf: SQLConf) -> LogicalPlan:
        return _remove(plan, plan.output_set)
