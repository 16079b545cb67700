"""RewriteDistinctAggregates: aggregates with several DISTINCT groups (or DISTINCT ... FILTER)
become an Expand and two Aggregates (Spark 4's rule of the same name).

When it fires, for an Aggregate ``A`` with grouping ``G`` (``distinctAggs`` = every DISTINCT
aggregate call; a *distinct group* = the set of non-foldable arguments of a call, or its first
argument when all are foldable)::

    #groups > 1  OR  some DISTINCT call has a FILTER  OR  (G is empty AND some DISTINCT call has
    only foldable arguments, e.g. count(DISTINCT 1): correct answers on empty input)

A single distinct group without FILTER is left alone (the planner runs it as the 4-phase
aggregate), even when non-distinct calls carry FILTERs.

Before / after (``SELECT key, count(DISTINCT cat1), count(DISTINCT cat2) FILTER (WHERE id > 2),
sum(value) FROM data GROUP BY key``)::

    Aggregate [key], [key, count(distinct cat1) AS c1, count(distinct cat2) FILTER (WHERE (id > 2)) AS c2,
    |                 sum(value) AS s]
    +- data
    ==>
    Aggregate [key], [key, count(data.cat1) FILTER (WHERE (gid = 1)) AS c1,
    |                 count(data.cat2) FILTER (WHERE ((gid = 2) AND (data.id > 2))) AS c2,
    |                 first(sum(data.value), true) FILTER (WHERE (gid = 0)) AS s]
    +- Aggregate [key, data.cat1, data.cat2, gid],
       |         [key, data.cat1, data.cat2, gid, max((data.id > 2)) AS (data.id > 2),
       |          sum(data.value) AS sum(data.value)]
       +- Expand [[key, null, null, 0, null, value],
          |       [key, cat1, null, 1, null, null],
          |       [key, null, cat2, 2, (id > 2), null]],
          |      [key, data.cat1, data.cat2, gid, (data.id > 2), data.value]
          +- data

Expand columns are ``G ++ distinct arguments ++ gid ++ distinct FILTER values ++ regular
inputs``; one projection for the regular (non-distinct) aggregates (gid 0, only if there are
any) and one per distinct group (gid 1..n), each nulling what belongs to the other groups.
Regular inputs always get fresh attributes (never the distinct ones) so an expression used both
DISTINCT and not (``count(DISTINCT cat2), max(cat2)``) reads its own column in each group.  The
first Aggregate de-duplicates the distinct arguments per (G, gid), computes the regular
aggregates in the gid-0 rows and ``max(cond)`` per distinct FILTER (TRUE when at least one
original row of that distinct value passed it).  The second one groups by G: a distinct call
becomes the same function without DISTINCT over the new columns with ``FILTER (WHERE gid = i
[AND max_cond])``; a regular one becomes ``first(result, true) FILTER (WHERE gid = 0)``, wrapped
in ``coalesce(.., default)`` when the function has a non-NULL empty-input value (``count`` -> 0).

Names are Spark's: new attributes are named after the ``sql`` of their expression with
qualifiers (``data.cat1``, ``(data.id > 1)``, ``sum(data.value) FILTER (WHERE (data.id > 1))``),
``gid`` is a non-null int.  One deliberate difference: Spark numbers the distinct groups in the
iteration order of a Scala hash map (effectively arbitrary, it depends on expression ids); Ember
numbers them in order of first appearance, so ``gid`` values and the order of the distinct
columns may be permuted with respect to Spark's plan (results are the same).

Valid for every Aggregate (the rewrite is exact: DISTINCT values are de-duplicated per group
before being aggregated, FILTERs keep their meaning through ``max(cond)``).  Expressions are
matched by value (same attribute ids), not up to commutativity.  Non-excludable: the planner's
distinct path handles one distinct group only.  No configuration keys are read.
"""

from __future__ import annotations

from ember import types as T
from ember.expressions.aggregates import AggregateExpression, AggregateFunction, First, Max
from ember.expressions.foldable import is_foldable
from ember.expressions.base import (
    Alias,
    AttributeReference,
    Expression,
    LeafExpression,
    Literal,
    NamedExpression,
    _quote_if_needed,
)
from ember.optimizer.rule_executor import Rule
from ember.plans.logical.nodes import Aggregate, Expand, LogicalPlan
from ember.trees import node
from ember.expressions.conditional import Coalesce
from ember.expressions.predicates import And, EqualTo

__all__ = ["RewriteDistinctAggregates", "rewrite_distinct_aggregate", "qualified_sql"]


class RewriteDistinctAggregates(Rule):
    """Spark's ``RewriteDistinctAggregates`` (see the module docstring).

    >>> # Aggregate [k], [count(DISTINCT a), count(DISTINCT b)]
    >>> #   -> Aggregate [k] <- Aggregate [k, a', b', gid] <- Expand (gid 1: a, gid 2: b)
    """

    rule_name = "RewriteDistinctAggregates"
    patterns = (Aggregate,)
    excludable = False

    def apply(self, plan: LogicalPlan, conf: object) -> LogicalPlan:
        def rule(p: LogicalPlan) -> LogicalPlan:
            match p:
                case Aggregate():
                    return rewrite_distinct_aggregate(p)
                case _:
                    return p

        return plan.transform_up(rule)


# ---------------------------------------------------------------------------------------------
# Names: Catalyst's ``Expression.sql`` with qualified attributes


@node
class _QualifiedName(LeafExpression):
    """Stands for an attribute while rendering ``qualified_sql`` (never left in a plan)."""

    text: str
    dtype: T.DataType

    @property
    def data_type(self) -> T.DataType:
        return self.dtype

    def simple_string(self) -> str:
        return self.text

    def sql(self) -> str:
        return self.text


def qualified_sql(e: Expression) -> str:
    """Catalyst's ``e.sql``: like :meth:`Expression.sql` but attributes keep their qualifier
    (``data.cat1``), as in the names RewriteDistinctAggregates gives its new attributes.

    >>> from ember.expressions.base import AttributeReference
    >>> qualified_sql(AttributeReference("cat1", T.STRING, attr_qualifier=("data",)))
    'data.cat1'
    """

    def render(x: Expression) -> Expression | None:
        match x:
            case AttributeReference(attr_name=name, dtype=dtype):
                parts = tuple(x.qualifier) + (name,)
                return _QualifiedName(".".join(_quote_if_needed(p) for p in parts), dtype)
            case _:
                return None

    return e.transform_up(render).sql()


def _new_attr(e: Expression) -> AttributeReference:
    """Spark's ``expressionAttributePair``: a fresh nullable column named after ``e``."""
    return AttributeReference(qualified_sql(e), e.data_type, True)


def _null(e: Expression) -> Literal:
    return Literal(None, e.data_type)


def _unique(items: list[Expression]) -> list[Expression]:
    out: list[Expression] = []
    for x in items:
        if x not in out:
            out.append(x)
    return out


# ---------------------------------------------------------------------------------------------
# The rewrite


def _aggregate_calls(a: Aggregate) -> list[AggregateExpression]:
    """Every aggregate call of ``a``'s output expressions, pre-order (duplicates kept)."""
    out: list[AggregateExpression] = []
    for e in a.aggregate_expressions:
        out.extend(e.collect(lambda x: x if isinstance(x, AggregateExpression) else None))
    return out


def _group_key(e: AggregateExpression) -> tuple[Expression, ...]:
    """The distinct group of ``e``: its non-foldable arguments (first argument if none),
    de-duplicated, in argument order."""
    args = list(e.func.children)
    unfoldable = [c for c in args if not is_foldable(c)]
    return tuple(_unique(unfoldable if unfoldable else args[:1]))


def _must_rewrite(distinct: list[AggregateExpression], grouping: tuple[Expression, ...]) -> bool:
    return any(e.filter is not None for e in distinct) or (
        not grouping and any(all(is_foldable(c) for c in e.func.children) for e in distinct))


def _patch_children(af: AggregateFunction, lookup) -> AggregateFunction:  # noqa: ANN001
    """``af`` with each direct argument replaced by ``lookup(arg)`` when that is not None."""
    new = []
    for c in af.children:
        replacement = lookup(c)
        new.append(c if replacement is None else replacement)
    return af.with_children(tuple(new))


def rewrite_distinct_aggregate(a: Aggregate) -> Aggregate:
    """``a`` rewritten into Aggregate <- Aggregate <- Expand when the rule fires; else ``a``."""

    calls = _aggregate_calls(a)
    distinct = [e for e in calls if e.is_distinct]
    if not distinct:
        return a
    must = _must_rewrite(distinct, a.grouping_expressions)
    # Distinct groups keyed by their argument *set*, numbered in order of first appearance.
    groups: dict[frozenset[Expression], tuple[tuple[Expression, ...], list[AggregateExpression]]] = {}
    for e in distinct:
        key = _group_key(e)
        groups.setdefault(frozenset(key), (key, []))[1].append(e)
    if not (len(groups) > 1 or must):
        return a

    gid = AttributeReference("gid", T.INT, False)
    group_by_map: list[tuple[Expression, AttributeReference]] = [
        (g, g.to_attribute() if isinstance(g, NamedExpression)
         else AttributeReference(qualified_sql(g), g.data_type, g.nullable))
        for g in a.grouping_expressions
    ]
    group_attrs = [attr for _, attr in group_by_map]

    # Distinct arguments, and one condition column + max(cond) per distinct call with FILTER.
    distinct_children = _unique([c for key, _ in groups.values() for c in key])
    distinct_child_attrs = [_new_attr(c) for c in distinct_children]
    distinct_lookup = {c: attr for c, attr in zip(distinct_children, distinct_child_attrs)
                       if not is_foldable(c)}
    distinct_filters: list[Expression] = []
    filter_attrs: list[AttributeReference] = []
    max_conds: list[Alias] = []
    for e in distinct:
        if e.filter is not None:
            attr = _new_attr(e.filter)
            distinct_filters.append(e.filter)
            filter_attrs.append(attr)
            max_conds.append(Alias(AggregateExpression(Max(attr)), attr.attr_name))
    # Later duplicates win, as Scala's toMap.
    filter_lookup = {f: m.to_attribute() for f, m in zip(distinct_filters, max_conds)}

    transformations: dict[Expression, Expression] = {}
    distinct_projections: list[list[Expression]] = []
    for i, (key, exprs) in enumerate(groups.values(), start=1):
        gid_value = Literal(i, T.INT)
        filters = [e.filter for e in exprs if e.filter is not None]
        projection = [c if c in key else _null(c) for c in distinct_children] + [gid_value]
        projection += [f if f in filters else _null(f) for f in distinct_filters]
        distinct_projections.append(projection)
        for e in exprs:
            af = e.func
            if not all(is_foldable(c) for c in af.children):
                af = _patch_children(af, distinct_lookup.get)
            cond: Expression = EqualTo(gid, gid_value)
            if e.filter is not None:
                cond = And(cond, filter_lookup[e.filter])
            transformations[e] = e.copy(func=af, is_distinct=False, filter=cond)

    # Regular aggregates: computed in the first Aggregate on fresh copies of their inputs.
    regular = [e for e in calls
               if not e.is_distinct and any(not is_foldable(c) for c in e.children)]
    fun_children = [c for e in regular for c in e.func.children if not is_foldable(c)]
    filter_refs: list[Expression] = []
    for e in regular:
        if e.filter is not None:
            filter_refs.extend(e.filter.collect(
                lambda x: x if isinstance(x, AttributeReference) else None))
    regular_children = _unique(fun_children + filter_refs)
    regular_attrs = [_new_attr(c) for c in regular_children]
    regular_lookup = dict(zip(regular_children, regular_attrs))
    operators: list[Alias] = []
    zero = Literal(0, T.INT)
    for e in regular:
        af = _patch_children(e.func, regular_lookup.get)
        flt = None if e.filter is None else e.filter.transform_up(
            lambda x: regular_lookup.get(x) if isinstance(x, AttributeReference) else None)
        operator = Alias(e.copy(func=af, filter=flt), qualified_sql(e))
        operators.append(operator)
        result: Expression = AggregateExpression(
            First(operator.to_attribute(), True), False, EqualTo(gid, zero))
        if af.default_result is not None:
            result = Coalesce((result, Literal(af.default_result, af.data_type)))
        transformations[e] = result

    grouping = list(a.grouping_expressions)
    projections: list[tuple[Expression, ...]] = []
    if regular:
        projections.append(tuple(
            grouping + [_null(c) for c in distinct_children] + [zero]
            + [_null(f) for f in distinct_filters] + regular_children))
    regular_nulls = [_null(c) for c in regular_children]
    projections += [tuple(grouping + p + regular_nulls) for p in distinct_projections]
    expand = Expand(
        tuple(projections),
        tuple(group_attrs + distinct_child_attrs + [gid] + filter_attrs + regular_attrs),
        a.child,
    )

    first_group_by = tuple(group_attrs + distinct_child_attrs + [gid])
    first = Aggregate(first_group_by, first_group_by + tuple(max_conds) + tuple(operators), expand)

    non_foldable_groups = [(g, attr) for g, attr in group_by_map if not is_foldable(g)]

    def patch(x: Expression) -> Expression | None:
        for g, attr in non_foldable_groups:
            if x == g:
                return attr
        return transformations.get(x) if isinstance(x, AggregateExpression) else None

    items = tuple(e.transform_down(patch) for e in a.aggregate_expressions)
    return Aggregate(tuple(group_attrs), items, first)
