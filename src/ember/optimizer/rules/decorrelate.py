"""Decorrelation of subquery plans: Spark's PullupCorrelatedPredicates plus the domain join of
DecorrelateInnerQuery for global aggregates (the COUNT bug below the top of a subquery).

A correlated subquery plan reads columns of the enclosing query through ``OuterReference``.
:func:`pull_up_correlated_predicates` removes every correlated conjunct from the subquery's
``Filter`` (and inner ``Join``) nodes and returns it, so the caller can put it into the condition
of the join that replaces the subquery expression.  On the way up, operators are widened so the
pulled predicates can still be evaluated on top of the subquery:

- ``Project``: the inner columns the predicates read are appended to the project list.
- ``Aggregate``: the predicates must be equalities ``inner_col = f(outer)`` (or ``<=>``); the
  inner columns are added to the grouping and output.  A *global* aggregate (no GROUP BY) returns
  one row even for an empty input, which per-row evaluation of the subquery observes (``count``
  is 0, ``EXISTS`` is true).  Grouping by the correlated column loses that row, so unless the
  aggregate is the top of a scalar subquery (whose caller handles the count bug with Spark's
  ``alwaysTrue`` column) it is rebuilt as a *domain join*::

      before: Aggregate [], [count(1) AS cnt]          after: Project [d, if(isnull(alwaysTrue), 0, cnt) AS cnt]
              +- Filter (b1 = outer(a1))                      +- Join LeftOuter, (b1 = d)
                 +- t2                                           :- Aggregate [a1'], [a1' AS d]   (distinct outer values)
                                                                 :  +- <outer plan, fresh ids>
                                                                 +- Project [cnt, b1, true AS alwaysTrue]
                                                                    +- Aggregate [b1], [count(1) AS cnt, b1]
                                                                       +- t2
      pulled predicate: (d <=> outer(a1))

  The domain keeps one row per distinct outer value (NULL included: ``NULL = b1`` matches no inner
  row, so the aggregate sees an empty input, as per-row evaluation would), and the predicate that
  replaces the original one is null-safe so the NULL domain row joins the NULL outer row.
- ``Join``: predicates pass through inner joins from both sides and through the preserved side of
  outer / semi / anti / existence joins.
- ``Sort``, ``Distinct``, ``SubqueryAlias``, ``View``, ``ResolvedHint``: pass through.

Not valid (raises ``UnsupportedError``): correlated predicates below ``Limit``/``Offset``, set
operations, ``Expand``, the null-supplying side of an outer join; non-equality correlation below an
``Aggregate``; outer references outside ``Filter``/inner-join conditions.  Only outer references
to the enclosing query's own columns (``outer_ids``) are pulled; deeper ones are left in place.
Which join sides a predicate may be pulled through is read from the ``JoinType`` tables
(``left_nullable`` / ``right_nullable`` / ``outputs_right``).  No configuration keys are read.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import pyarrow as pa

from ember import types as T
from ember.errors import EmberError, UnsupportedError
from ember.expressions.base import (
    Alias,
    AttributeReference,
    Expression,
    Literal,
    and_all,
    new_expr_id,
    split_conjuncts,
)
from ember.expressions.subquery import OuterReference
from ember.plans.logical.join_type import JoinType
from ember.plans.logical.nodes import (
    Aggregate,
    Distinct,
    Expand,
    FileRelation,
    Filter,
    Join,
    LeafNode,
    LocalRelation,
    LogicalPlan,
    Project,
    ResolvedHint,
    Sort,
    SubqueryAlias,
    View,
)
from ember.expressions.aggregates import AggregateExpression
from ember.expressions.conditional import If
from ember.expressions.predicates import EqualNullSafe, EqualTo, IsNull

ALWAYS_TRUE = "alwaysTrue"

# ---------------------------------------------------------------------------------------------
# Outer references


def has_outer(expr: Expression, outer_ids: frozenset[int] | None = None) -> bool:
    """Whether ``expr`` holds an ``OuterReference`` (to one of ``outer_ids`` when given)."""
    return expr.find(
        lambda e: isinstance(e, OuterReference) and (outer_ids is None or e.attr.id in outer_ids)
    ) is not None


def strip_outer(expr: Expression) -> Expression:
    """``outer(a#1)`` -> ``a#1`` everywhere in ``expr`` (used once the predicate sits in a join
    condition that sees the outer columns directly)."""
    return expr.transform_down(lambda e: e.attr if isinstance(e, OuterReference) else None)


def plan_has_outer(plan: LogicalPlan, outer_ids: frozenset[int] | None = None) -> bool:
    """Whether some operator of ``plan`` holds an ``OuterReference`` (to ``outer_ids`` when
    given): the subquery plan is correlated."""
    return plan.find(lambda p: any(has_outer(e, outer_ids) for e in p.expressions())) is not None


# ---------------------------------------------------------------------------------------------
# Fresh attribute ids (dedupSubqueryOnSelfJoin)


def produced_ids(plan: LogicalPlan) -> set[int]:
    """Ids of every attribute created inside ``plan`` (relation columns, aliases, exists)."""
    out: set[int] = set()

    def visit(p: LogicalPlan) -> None:
        match p:
            case LocalRelation(attrs=attrs) | FileRelation(attrs=attrs) | Expand(attrs=attrs):
                out.update(a.id for a in attrs)
            case Join(existence_attr=ea) if ea is not None:
                out.add(ea.id)
            case _:
                pass
        for e in p.expressions():
            e.foreach(lambda x: out.add(x.id) if isinstance(x, Alias) else None)

    plan.foreach(visit)
    return out


def fresh_instance(plan: LogicalPlan) -> tuple[LogicalPlan, dict[int, AttributeReference]]:
    """``plan`` with every attribute it creates given a fresh id; returns the plan and the
    old-id -> new-attribute mapping of its columns.  Outer references are left alone."""
    mapping: dict[int, AttributeReference] = {}

    def remap(e: Expression) -> Expression | None:
        match e:
            case AttributeReference(id=i) if i in mapping:
                return e.copy(id=mapping[i].id)
            case Alias(id=i):
                new = e.copy(id=new_expr_id())
                mapping[i] = new.to_attribute()
                return new
            case _:
                return None

    def rewrite(p: LogicalPlan) -> LogicalPlan:
        match p:
            case LocalRelation(attrs=attrs) | FileRelation(attrs=attrs):
                new_attrs = tuple(a.new_instance() for a in attrs)
                mapping.update({a.id: n for a, n in zip(attrs, new_attrs)})
                return p.copy(attrs=new_attrs)
            case Expand(attrs=attrs):
                # Every output column of an Expand is created by it: give all of them new ids.
                q = p.map_expressions(lambda e: e if e in attrs else e.transform_up(remap))
                new_attrs = tuple(a.new_instance() for a in attrs)
                mapping.update({a.id: n for a, n in zip(attrs, new_attrs)})
                return q.copy(attrs=new_attrs)
            case Join(existence_attr=ea) if ea is not None:
                q = p.copy(condition=None if p.condition is None else p.condition.transform_up(remap))
                new_ea = ea.new_instance()
                mapping[ea.id] = new_ea
                return q.copy(existence_attr=new_ea)
            case _:
                return p.map_expressions(lambda e: e.transform_up(remap))

    return plan.transform_up(rewrite), mapping


def substitute(expr: Expression, mapping: dict[int, Expression]) -> Expression:
    """Replace attributes by id (``mapping``) everywhere in ``expr``."""
    return expr.transform_up(
        lambda e: mapping.get(e.id) if isinstance(e, AttributeReference) else None
    )


# ---------------------------------------------------------------------------------------------
# Aggregates over an empty input (the COUNT bug)

def empty_input_expression(expr: Expression) -> Expression:
    """``expr`` (an aggregate output) with every aggregate replaced by its value over zero rows:
    0 for count-like functions, NULL otherwise (Spark's ``evalAggExprOnZeroTups``)."""


    def replace(e: Expression) -> Expression | None:
        match e:
            case AggregateExpression(func=func):
                return Literal(func.default_result, e.data_type)
            case _:
                return None

    return expr.transform_down(replace)


def try_fold(expr: Expression) -> Literal | None:
    """The constant value of a column-free expression, or None when it cannot be computed
    statically (it reads columns, outer columns, or does not evaluate)."""
    if isinstance(expr, Literal):
        return expr
    if expr.references or has_outer(expr):
        return None
    if expr.find(lambda e: isinstance(e, AttributeReference)) is not None:
        return None
    try:
        batch = pa.RecordBatch.from_arrays([pa.nulls(1)], names=["_"])
        arr = expr.eval(batch)
        return Literal(arr[0].as_py(), expr.data_type)
    except (EmberError, NotImplementedError, TypeError, ValueError, pa.ArrowException):
        return None


def refresh_attributes(expr: Expression, plan: LogicalPlan) -> Expression:
    """``expr`` with its attributes replaced by ``plan``'s output attributes of the same id
    (after an outer join the right side's columns become nullable)."""
    by_id: dict[int, Expression] = {a.id: a for a in plan.output}
    return substitute(expr, by_id)


def is_null_literal(expr: Expression | None) -> bool:
    """Whether ``expr`` is a NULL literal."""
    return isinstance(expr, Literal) and expr.value is None


def always_true_alias() -> Alias:
    """Spark's ``true AS alwaysTrue`` column: NULL after an outer join exactly for unmatched rows."""
    return Alias(Literal(True, T.BOOLEAN), ALWAYS_TRUE)


# ---------------------------------------------------------------------------------------------
# Pull-up


def _unsupported(what: str) -> UnsupportedError:
    return UnsupportedError(
        f"Correlated subquery not supported: {what}",
        error_class="UNSUPPORTED_SUBQUERY_EXPRESSION_CATEGORY",
    )


def pull_up_correlated_predicates(
    plan: LogicalPlan,
    outer_ids: frozenset[int],
    outer_plan: LogicalPlan | None,
    top_aggregate: Aggregate | None = None,
) -> tuple[LogicalPlan, list[Expression]]:
    """Remove the correlated conjuncts (those with an ``OuterReference`` to ``outer_ids``) from
    ``plan``; returns the decorrelated plan and the conjuncts, still holding the outer references.
    Every inner column the conjuncts read is in the returned plan's output, after the original
    output columns.  ``outer_plan`` is the source of the domain for global aggregates;
    ``top_aggregate`` is the aggregate whose count bug the caller handles itself."""
    return _Puller(outer_ids, outer_plan, top_aggregate).pull(plan)


class _Puller:
    def __init__(self, outer_ids: frozenset[int], outer_plan: LogicalPlan | None,
                 top_aggregate: Aggregate | None) -> None:
        self.outer_ids = outer_ids
        self.outer_plan = outer_plan
        self.top_aggregate = top_aggregate

    def correlated(self, e: Expression) -> bool:
        return has_outer(e, self.outer_ids)

    def check_no_outer(self, p: LogicalPlan) -> None:
        for e in p.expressions():
            if self.correlated(e):
                raise _unsupported(f"outer reference in {p.node_name} ({e.simple_string()})")

    def pull(self, p: LogicalPlan) -> tuple[LogicalPlan, list[Expression]]:
        match p:
            case Filter(condition=cond, child=child):
                new_child, preds = self.pull(child)
                conjuncts = split_conjuncts(cond)
                correlated = [c for c in conjuncts if self.correlated(c)]
                if not correlated:
                    return p.with_children((new_child,)), preds
                local = [c for c in conjuncts if not self.correlated(c)]
                out = Filter(and_all(local), new_child) if local else new_child
                return out, preds + correlated
            case Project(project_list=items, child=child):
                self.check_no_outer(p)
                new_child, preds = self.pull(child)
                if not preds:
                    return p.with_children((new_child,)), []
                return Project(items + self.missing(preds, p.output_set, new_child), new_child), preds
            case Aggregate(child=child):
                self.check_no_outer(p)
                new_child, preds = self.pull(child)
                if not preds:
                    return p.with_children((new_child,)), []
                return self.aggregate(p, new_child, preds)
            case (Sort(child=child) | Distinct(child=child) | SubqueryAlias(child=child)
                  | View(child=child) | ResolvedHint(child=child)):
                self.check_no_outer(p)
                new_child, preds = self.pull(child)
                return p.with_children((new_child,)), preds
            case Join(left=left, right=right, join_type=jt, condition=cond):
                return self.join(p, left, right, jt, cond)
            case LeafNode():
                self.check_no_outer(p)
                return p, []
            case _:
                self.check_no_outer(p)
                new_children = []
                for c in p.children:
                    nc, preds = self.pull(c)
                    if preds:
                        raise _unsupported(f"correlated predicate below {p.node_name}")
                    new_children.append(nc)
                return p.with_children(tuple(new_children)), []

    @staticmethod
    def missing(preds: Iterable[Expression], have: frozenset[int],
                child: LogicalPlan) -> tuple[AttributeReference, ...]:
        need: set[int] = set()
        for c in preds:
            need |= c.references
        return tuple(a for a in child.output if a.id in need and a.id not in have)

    def join(self, p: Join, left: LogicalPlan, right: LogicalPlan, jt: JoinType,
             cond: Expression | None) -> tuple[LogicalPlan, list[Expression]]:
        new_left, lpreds = self.pull(left)
        new_right, rpreds = self.pull(right)
        conjuncts = split_conjuncts(cond)
        cpreds = [c for c in conjuncts if self.correlated(c)]
        if cpreds and not jt.is_inner_like:
            raise _unsupported(f"outer reference in a {jt} join condition")
        # A pulled-up predicate reads its side's columns above the join: they must be output
        # and not NULL-padded there.
        if rpreds and (jt.right_nullable or not jt.outputs_right):
            raise _unsupported(f"correlated predicate on the right side of a {jt} join")
        if lpreds and jt.left_nullable:
            raise _unsupported(f"correlated predicate on the left side of a {jt} join")
        if not (lpreds or rpreds or cpreds):
            return p.with_children((new_left, new_right)), []
        local = [c for c in conjuncts if not self.correlated(c)]
        out = p.copy(left=new_left, right=new_right, condition=and_all(local))
        return out, lpreds + rpreds + cpreds

    def split_equality(self, pred: Expression, child_ids: frozenset[int]) -> tuple[Any, ...] | None:
        """``(inner_attr, outer_expr, null_safe)`` for ``inner = outer`` / ``outer <=> inner``;
        None for any other shape."""

        match pred:
            case EqualTo(left=l, right=r) | EqualNullSafe(left=l, right=r):
                null_safe = isinstance(pred, EqualNullSafe)
                for inner, outer in ((l, r), (r, l)):
                    if (isinstance(inner, AttributeReference) and inner.id in child_ids
                            and not outer.references and self.correlated(outer)):
                        return inner, outer, null_safe
        return None

    def aggregate(self, p: Aggregate, new_child: LogicalPlan,
                  preds: list[Expression]) -> tuple[LogicalPlan, list[Expression]]:
        child_ids = new_child.output_set
        splits = [self.split_equality(c, child_ids) for c in preds]
        if any(sp is None for sp in splits):
            return self.aggregate_over_domain(p, new_child, preds)
        keys: list[AttributeReference] = []
        for inner, _, _ in splits:  # type: ignore[misc]
            if all(k.id != inner.id for k in keys):
                keys.append(inner)
        grouped = self.group_by_keys(p, new_child, keys)
        if p is self.top_aggregate or p.grouping_expressions or self.outer_plan is None:
            return grouped, preds
        return self.domain_join(p, grouped, splits)  # type: ignore[arg-type]

    @staticmethod
    def group_by_keys(p: Aggregate, child: LogicalPlan,
                      keys: list[AttributeReference]) -> Aggregate:
        grouping = p.grouping_expressions + tuple(
            k for k in keys
            if not any(isinstance(g, AttributeReference) and g.id == k.id
                       for g in p.grouping_expressions)
        )
        out_ids = p.output_set
        aggs = p.aggregate_expressions + tuple(k for k in keys if k.id not in out_ids)
        return Aggregate(grouping, aggs, child)

    def domain(self, outer_exprs: list[Expression]) -> tuple[Aggregate, list[AttributeReference]]:
        """``SELECT DISTINCT <outer_exprs>`` over a fresh copy of the outer plan."""
        if self.outer_plan is None:
            raise _unsupported("non-equality correlation below an aggregate here")
        fresh, mapping = fresh_instance(self.outer_plan)
        items = tuple(
            Alias(substitute(strip_outer(o), dict(mapping)),
                  o.name if isinstance(o, OuterReference) else f"domain_{i}")
            for i, o in enumerate(outer_exprs)
        )
        agg = Aggregate(tuple(a.child for a in items), items, fresh)
        return agg, [a.to_attribute() for a in items]

    def aggregate_over_domain(self, p: Aggregate, new_child: LogicalPlan,
                              preds: list[Expression]) -> tuple[LogicalPlan, list[Expression]]:
        """Non-equality correlation below an aggregate (``d > outer(b)``): join the input with
        the domain of the outer columns and group by the domain columns as well."""

        outers: list[OuterReference] = []
        for c in preds:
            for o in c.collect(lambda e: e if isinstance(e, OuterReference)
                               and e.attr.id in self.outer_ids else None):
                if o not in outers:
                    outers.append(o)
        domain, dattrs = self.domain(list(outers))
        by_id = {o.attr.id: d for o, d in zip(outers, dattrs)}
        local = [
            c.transform_down(lambda e: by_id.get(e.attr.id)
                             if isinstance(e, OuterReference) and e.attr.id in by_id else None)
            for c in preds
        ]
        joined = Join(new_child, domain, JoinType.INNER, and_all(local))
        grouped = self.group_by_keys(p, joined, dattrs)
        splits = [(d, o, True) for o, d in zip(outers, dattrs)]
        if p is self.top_aggregate or p.grouping_expressions:
            return grouped, [EqualNullSafe(d, o) for o, d in zip(outers, dattrs)]
        return self.domain_join(p, grouped, splits)

    def domain_join(self, p: Aggregate, grouped: Aggregate,
                    splits: list[tuple[Any, ...]]) -> tuple[LogicalPlan, list[Expression]]:

        outer_exprs: list[Expression] = []
        for _, outer, _ in splits:
            if outer not in outer_exprs:
                outer_exprs.append(outer)
        domain, dattrs = self.domain(outer_exprs)

        def dattr_of(o: Expression) -> AttributeReference:
            for oo, a in zip(outer_exprs, dattrs):
                if oo == o:
                    return a
            raise AssertionError(o)

        # Each output's value over an empty group, when that is not NULL (the COUNT bug).
        fixes: list[tuple[Expression, Expression | None]] = []
        for item in p.aggregate_expressions:
            value: Expression | None = None
            if isinstance(item, Alias):
                raw = empty_input_expression(item.child)
                folded = try_fold(raw)
                if not is_null_literal(folded):
                    value = folded if folded is not None else raw
            fixes.append((item, value))
        needs_flag = any(value is not None for _, value in fixes)
        flag = always_true_alias()
        right: LogicalPlan = Project(grouped.output + (flag,), grouped) if needs_flag else grouped
        join_cond = and_all(
            (EqualNullSafe if ns else EqualTo)(inner, dattr_of(outer))
            for inner, outer, ns in splits
        )
        joined = Join(domain, right, JoinType.LEFT_OUTER, join_cond)
        grouped_out = {a.id: a for a in joined.output}
        items: list[Expression] = list(domain.output)
        for item, value in fixes:
            attr = grouped_out[item.expr_id]  # type: ignore[attr-defined]
            if value is None:
                items.append(attr)
            else:
                items.append(Alias(If(IsNull(grouped_out[flag.id]), value, attr), item.name,
                                   id=item.expr_id))  # type: ignore[attr-defined]
        new_preds = [EqualNullSafe(dattr_of(o), o) for o in outer_exprs]
        return Project(tuple(items), joined), new_preds
