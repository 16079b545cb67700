"""DecorrelateInnerQuery with domain joins, and RewriteLateralSubquery: ``LateralJoin`` -> ``Join``.

A lateral subquery is evaluated once per row of the join's left side and may read that row's
columns (``OuterReference``) anywhere: in a projection (``LATERAL (SELECT c1 + c2)``), under an
aggregate, a union, a window, a limit.  Spark's ``DecorrelateInnerQuery`` rewrites such a plan
into one that reads no outer column, plus a join condition that relates its rows to the outer
row; ``RewriteLateralSubquery`` then makes the ``LateralJoin`` an ordinary ``Join`` on that
condition (and the user's ``ON`` condition).

:func:`decorrelate` walks the subquery plan bottom-up and returns ``(plan', conds)``: for every
outer row ``o``, the subquery's rows are exactly the rows of ``plan'`` that satisfy ``conds(o)``
(``plan'`` outputs the subquery's columns, then helper columns).  Per operator:

- ``Filter``: correlated conjuncts move into ``conds`` (what PullupCorrelatedPredicates does);
  ``Sort``, aliases, views and hints pass ``conds`` through, and so do inner joins (from both
  sides) and the preserved side of outer / semi / anti joins.
- Anything that cannot be evaluated above the pulled conditions (an outer column in a
  projection, an aggregate, a window, DISTINCT, set operations, LIMIT, a correlated condition of
  an outer join) first joins its input with the *domain*: ``SELECT DISTINCT <outer columns>`` of
  a fresh copy of the outer plan (Spark's ``DomainJoin``)::

      Join Inner, <conds with outer(a) -> d>      conds become  (d <=> outer(a))
      :- plan'
      +- Aggregate [a'], [a' AS d]
         +- <outer plan, fresh ids>

  Each domain row stands for the outer rows with those values; outer columns become the domain
  columns, which the operator then carries per domain value (added to the GROUP BY, the window
  partition, the DISTINCT columns, each set-operation input; a LIMIT becomes ``row_number()``
  per domain value).  A global aggregate returns one row even over no input (``count`` is 0): it
  is left-outer-joined back onto the domain with Spark's ``alwaysTrue`` column, and its value
  over no rows (``evalAggExprOnZeroTups``) is taken where the domain value found no group.

Spark's rejections (``UNSUPPORTED_SUBQUERY_EXPRESSION_CATEGORY``): an outer column read by the
null-supplying side of an outer join or the right side of a semi / anti join
(``ACCESSING_OUTER_QUERY_COLUMN_IS_NOT_ALLOWED``); shapes Ember does not decorrelate raise
``UnsupportedError`` with the same class.  Outer references to other scopes (a lateral join
inside a correlated subquery) are left alone for the enclosing rewrite.  No configuration keys.
"""

from __future__ import annotations

from ember import types as T
from ember.errors import AnalysisError, UnsupportedError
from ember.expressions.base import (
    Alias,
    AttributeReference,
    Expression,
    Literal,
    SortOrder,
    and_all,
    split_conjuncts,
)
from ember.expressions.conditional import If
from ember.expressions.predicates import EqualNullSafe, IsNull, LessThanOrEqual
from ember.expressions.subquery import LateralSubquery, OuterReference, SubqueryExpression
from ember.expressions.windows import (
    CurrentRow,
    FrameType,
    RowNumber,
    SpecifiedWindowFrame,
    UnboundedPreceding,
    WindowExpression,
    WindowSpecDefinition,
)
from ember.optimizer.rule_executor import Rule
from ember.optimizer.rules.decorrelate import (
    always_true_alias,
    empty_input_expression,
    fresh_instance,
    has_outer,
    is_null_literal,
    plan_has_outer,
    strip_outer,
    try_fold,
)
from ember.plans.logical.join_type import JoinType
from ember.plans.logical.nodes import (
    Aggregate,
    Distinct,
    Except,
    Filter,
    Generate,
    Intersect,
    Join,
    LateralJoin,
    Limit,
    LogicalPlan,
    Project,
    ResolvedHint,
    Sort,
    SubqueryAlias,
    Union,
    View,
    Window,
)


def _unsupported(what: str) -> UnsupportedError:
    return UnsupportedError(f"Correlated subquery not supported: {what}",
                            error_class="UNSUPPORTED_SUBQUERY_EXPRESSION_CATEGORY")


def _outer_not_allowed(p: LogicalPlan) -> AnalysisError:
    return AnalysisError(
        "Unsupported subquery expression: Accessing outer query column is not allowed in this "
        f"location:\n{p.tree_string()}",
        error_class="UNSUPPORTED_SUBQUERY_EXPRESSION_CATEGORY."
                    "ACCESSING_OUTER_QUERY_COLUMN_IS_NOT_ALLOWED",
        parameters={"treeNode": p.tree_string()})


class _Decorrelator:
    """Decorrelates one subquery plan against ``outer_plan`` (see the module doc)."""

    def __init__(self, outer_plan: LogicalPlan, outer_attrs: list[AttributeReference]) -> None:
        self.outer_plan = outer_plan
        self.outer_attrs = outer_attrs
        self.outer_ids = frozenset(a.id for a in outer_attrs)

    # -- helpers ---------------------------------------------------------------------------------
    def correlated(self, e: Expression) -> bool:
        return has_outer(e, self.outer_ids)

    def domain(self) -> tuple[LogicalPlan, list[AttributeReference]]:
        """``SELECT DISTINCT <outer columns>`` over a fresh copy of the outer plan."""
        fresh, mapping = fresh_instance(self.outer_plan)
        cols = [mapping.get(a.id, a) for a in self.outer_attrs]
        items = tuple(Alias(c, a.name) for c, a in zip(cols, self.outer_attrs))
        agg = Aggregate(tuple(cols), items, fresh)
        return agg, [i.to_attribute() for i in items]

    def to_domain(self, e: Expression, dattrs: list[AttributeReference]) -> Expression:
        """``e`` with ``outer(a)`` replaced by ``a``'s domain column."""
        by_id = {a.id: d for a, d in zip(self.outer_attrs, dattrs)}
        return e.transform_down(
            lambda x: by_id.get(x.attr.id)
            if isinstance(x, OuterReference) and x.attr.id in by_id else None)

    def domain_conds(self, dattrs: list[AttributeReference]) -> list[Expression]:
        return [EqualNullSafe(d, OuterReference(a)) for a, d in zip(self.outer_attrs, dattrs)]

    def domainify(self, plan: LogicalPlan, conds: list[Expression]
                  ) -> tuple[LogicalPlan, list[AttributeReference]]:
        """``plan`` (with pulled conditions ``conds``) joined with the domain: its rows per
        domain value are the subquery's rows for the outer rows with that value."""
        domain, dattrs = self.domain()
        cond = and_all(self.to_domain(c, dattrs) for c in conds) if conds else None
        return Join(plan, domain, JoinType.INNER, cond), dattrs

    @staticmethod
    def needed(conds: list[Expression], have: frozenset[int], child: LogicalPlan
               ) -> tuple[AttributeReference, ...]:
        need: set[int] = set()
        for c in conds:
            need |= c.references
        return tuple(a for a in child.output if a.id in need and a.id not in have)

    def per_domain(self, p: LogicalPlan) -> tuple[LogicalPlan, list[AttributeReference]]:
        """``p`` decorrelated and joined with the domain, keeping only ``p``'s columns and the
        domain columns."""
        child, conds = self.run(p)
        joined, dattrs = self.domainify(child, conds)
        return Project(p.output + tuple(dattrs), joined), dattrs

    # -- the walk --------------------------------------------------------------------------------
    def run(self, p: LogicalPlan) -> tuple[LogicalPlan, list[Expression]]:
        if not plan_has_outer(p, self.outer_ids):
            return p, []
        match p:
            case Filter(condition=cond, child=child):
                new_child, conds = self.run(child)
                conjuncts = split_conjuncts(cond)
                corr = [c for c in conjuncts if self.correlated(c)]
                local = [c for c in conjuncts if not self.correlated(c)]
                out = Filter(and_all(local), new_child) if local else new_child
                return out, conds + corr
            case Project(project_list=items, child=child):
                new_child, conds = self.run(child)
                if any(self.correlated(e) for e in items):
                    joined, dattrs = self.domainify(new_child, conds)
                    new_items = tuple(self.to_domain(e, dattrs) for e in items)
                    return Project(new_items + tuple(dattrs), joined), self.domain_conds(dattrs)
                return Project(items + self.needed(conds, p.output_set, new_child),
                               new_child), conds
            case Aggregate(grouping_expressions=groups, aggregate_expressions=aggs, child=child):
                return self.aggregate(p, groups, aggs, child)
            case (Sort(child=child) | SubqueryAlias(child=child) | View(child=child)
                  | ResolvedHint(child=child)) if not any(self.correlated(e)
                                                          for e in p.expressions()):
                new_child, conds = self.run(child)
                return p.with_children((new_child,)), conds
            case Join():
                return self.join(p)
            case Union(inputs=inputs):
                parts = [self.per_domain(c) for c in inputs]
                return (Union(tuple(q for q, _ in parts), p.by_name, p.allow_missing_columns),
                        self.domain_conds(parts[0][1]))
            case Intersect(left=left, right=right) | Except(left=left, right=right):
                (lq, ld), (rq, _) = self.per_domain(left), self.per_domain(right)
                return p.copy(left=lq, right=rq), self.domain_conds(ld)
            case Distinct(child=child):
                q, dattrs = self.per_domain(child)
                return Distinct(q), self.domain_conds(dattrs)
            case Limit(limit=Literal(value=n), child=child) if isinstance(n, int):
                return self.limit(n, child)
            case Window(window_expressions=wexprs, partition_spec=part, order_spec=order,
                        child=child):
                new_child, conds = self.run(child)
                joined, dattrs = self.domainify(new_child, conds)
                to_d = lambda e: self.to_domain(e, dattrs)  # noqa: E731
                win = Window(tuple(map(to_d, wexprs)), tuple(map(to_d, part)) + tuple(dattrs),
                             tuple(map(to_d, order)), joined)
                return win, self.domain_conds(dattrs)
            case Generate(generator=gen, child=child):
                new_child, conds = self.run(child)
                if not self.correlated(gen):
                    return p.copy(child=new_child), conds
                joined, dattrs = self.domainify(new_child, conds)
                return (p.copy(generator=self.to_domain(gen, dattrs), child=joined),
                        self.domain_conds(dattrs))
            case _:
                raise _unsupported(f"outer reference below {p.node_name}")

    def aggregate(self, p: Aggregate, groups: tuple[Expression, ...],
                  aggs: tuple[Expression, ...], child: LogicalPlan
                  ) -> tuple[LogicalPlan, list[Expression]]:
        new_child, conds = self.run(child)
        joined, dattrs = self.domainify(new_child, conds)
        to_d = lambda e: self.to_domain(e, dattrs)  # noqa: E731
        grouped = Aggregate(tuple(map(to_d, groups)) + tuple(dattrs),
                            tuple(map(to_d, aggs)) + tuple(dattrs), joined)
        if groups:
            return grouped, self.domain_conds(dattrs)
        # A global aggregate has a row for every domain value, even one without input rows.
        domain, d2 = self.domain()
        fixes: list[tuple[Expression, Expression | None]] = []
        for item in aggs:
            value: Expression | None = None
            if isinstance(item, Alias):
                raw = empty_input_expression(self.to_domain(item.child, d2))
                folded = try_fold(raw)
                if not is_null_literal(folded):
                    value = folded if folded is not None else raw
            fixes.append((item, value))
        flag = always_true_alias()
        right = Project(grouped.output + (flag,), grouped)
        outer_join = Join(domain, right, JoinType.LEFT_OUTER,
                          and_all(EqualNullSafe(a, b) for a, b in zip(d2, dattrs)))
        by_id = {a.id: a for a in outer_join.output}
        items: list[Expression] = []
        for item, value in fixes:
            attr = by_id[item.to_attribute().id]  # type: ignore[attr-defined]
            if value is None:
                items.append(attr)
            else:
                items.append(Alias(If(IsNull(by_id[flag.id]), value, attr), item.name,  # type: ignore[attr-defined]
                                   id=item.to_attribute().id))  # type: ignore[attr-defined]
        return Project(tuple(items) + tuple(d2), outer_join), self.domain_conds(d2)

    def join(self, p: Join) -> tuple[LogicalPlan, list[Expression]]:
        jt = p.join_type
        assert isinstance(jt, JoinType)
        left_corr = plan_has_outer(p.left, self.outer_ids)
        right_corr = plan_has_outer(p.right, self.outer_ids)
        # Spark's CheckAnalysis: the null-supplying / filtered side may not read outer columns
        if (right_corr and (jt.right_nullable or not jt.outputs_right)) or (
                left_corr and jt.left_nullable):
            raise _outer_not_allowed(p.right if right_corr else p.left)
        conjuncts = split_conjuncts(p.condition)
        corr = [c for c in conjuncts if self.correlated(c)]
        local = [c for c in conjuncts if not self.correlated(c)]
        new_left, lconds = self.run(p.left)
        new_right, rconds = self.run(p.right)
        if jt.is_inner_like or not corr:
            out = p.copy(left=new_left, right=new_right, condition=and_all(local))
            return out, lconds + rconds + corr
        # a correlated condition of an outer / semi / anti join: evaluate it per domain value
        lq, ld = self.domainify(new_left, lconds)
        rq, rd = self.domainify(new_right, rconds)
        cond = and_all([*local, *(self.to_domain(c, ld) for c in corr),
                        *(EqualNullSafe(a, b) for a, b in zip(ld, rd))])
        out = p.copy(left=lq, right=rq, condition=cond)
        return out, self.domain_conds(ld)

    def limit(self, n: int, child: LogicalPlan) -> tuple[LogicalPlan, list[Expression]]:
        """``LIMIT n`` per domain value: ``row_number() OVER (PARTITION BY d ORDER BY <the
        sort below, if any>) <= n``."""
        order: tuple[SortOrder, ...] = ()
        body = child
        if isinstance(child, Sort) and not any(self.correlated(e) for e in child.expressions()):
            order, body = child.order, child.child
        new_body, conds = self.run(body)
        joined, dattrs = self.domainify(new_body, conds)
        frame = SpecifiedWindowFrame(FrameType.ROWS, UnboundedPreceding(), CurrentRow())
        rn = Alias(WindowExpression(RowNumber(), WindowSpecDefinition(tuple(dattrs), order, frame)),
                   "rn")
        win = Window((rn,), tuple(dattrs), order, joined)
        kept = Filter(LessThanOrEqual(rn.to_attribute(), Literal(n, T.INT)), win)
        return Project(body.output + tuple(dattrs), kept), self.domain_conds(dattrs)


def decorrelate(plan: LogicalPlan, outer_plan: LogicalPlan,
                outer_attrs: list[AttributeReference]) -> tuple[LogicalPlan, list[Expression]]:
    """``(plan', conds)``: ``plan`` without outer references to ``outer_attrs`` (columns of
    ``outer_plan``) and the conditions, still holding ``outer(...)``, that select its rows for
    one outer row (see the module doc)."""
    return _Decorrelator(outer_plan, outer_attrs).run(plan)


# ---------------------------------------------------------------------------------------------
# RewriteLateralSubquery


def rewrite_lateral_joins(plan: LogicalPlan) -> LogicalPlan:
    """``plan`` with every ``LateralJoin`` (also inside subquery plans) made a ``Join``."""
    if not plan.contains_anywhere(LateralJoin):
        return plan

    def in_subqueries(e: Expression) -> Expression:
        return e.transform_up(
            lambda x: x.with_plan(rewrite_lateral_joins(x.plan))
            if isinstance(x, SubqueryExpression) and not isinstance(x, LateralSubquery)
            else None)

    def rule(p: LogicalPlan) -> LogicalPlan:
        if not isinstance(p, LateralJoin):
            if any(e.contains(SubqueryExpression) for e in p.expressions()):
                return p.map_expressions(in_subqueries)
            return p
        return _rewrite_lateral_join(p)

    return plan.transform_up(rule)


def _rewrite_lateral_join(p: LateralJoin) -> LogicalPlan:
    sub = p.right
    assert isinstance(sub, LateralSubquery)
    right = rewrite_lateral_joins(sub.plan)
    outer_ids = p.left.output_set
    outer_attrs = [a for a in p.left.output if a.id in outer_ids]
    used: set[int] = set()

    def visit(n: LogicalPlan) -> None:
        for e in n.expressions():
            e.foreach(lambda x: used.add(x.attr.id) if isinstance(x, OuterReference) else None)

    right.foreach(visit)
    outer_attrs = [a for a in outer_attrs if a.id in used]
    decorrelated, conds = decorrelate(right, p.left, outer_attrs)
    cond = and_all([*(strip_outer(c) for c in conds),
                    *([p.condition] if p.condition is not None else [])])
    joined = Join(p.left, decorrelated, p.join_type, cond)
    if [a.id for a in joined.output] == [a.id for a in p.output]:
        return joined
    by_id = {a.id: a for a in joined.output}
    return Project(tuple(by_id[a.id] for a in p.output), joined)


class RewriteLateralSubquery(Rule):
    """Spark's ``RewriteLateralSubquery`` (with ``DecorrelateInnerQuery``): every
    ``LateralJoin`` becomes a ``Join`` of its left side with the decorrelated subquery plan (see
    the module doc).  Not excludable: the executor has no lateral join."""

    rule_name = "RewriteLateralSubquery"
    patterns = (LateralJoin,)
    excludable = False

    def apply(self, plan: LogicalPlan, conf: object) -> LogicalPlan:
        return rewrite_lateral_joins(plan)
