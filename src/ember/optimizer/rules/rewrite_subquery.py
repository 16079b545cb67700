"""RewritePredicateSubquery + RewriteCorrelatedScalarSubquery: remove every subquery expression.

Rule classes (Spark's names, both ``excludable = False``: the executor has no subquery operator):

- :class:`RewriteCorrelatedScalarSubquery` -- scalar subqueries only (Spark runs it inside the
  operator-optimization batch); predicate subqueries are left in place.
- :class:`RewritePredicateSubquery` -- EXISTS / IN / NOT IN (Spark's late "RewriteSubquery"
  batch), plus any scalar subquery still left, so its output holds no subquery expression.
  :func:`rewrite_subqueries` is the same rewrite as a function.

Each works on whatever shape earlier rules left (filters pushed down, joins reordered, columns
pruned): it reads only the operator holding the subquery and that operator's input, and every
rewritten operator keeps its input's columns, so outer references stay valid.

PullupCorrelatedPredicates is folded into both rules rather than being a rule of its own.  In
Spark it moves the correlated conjuncts out of the subquery plan into a ``joinCond`` field of
the subquery expression, early in the optimizer.  Ember's subquery expressions
(``Exists(plan, outer_attrs)`` ...) have no such field, and the pull-up is not separable from
the join it feeds: a correlated global aggregate needs a *domain join* over the outer plan (the
COUNT bug below the top of a subquery, see decorrelate.py), which only exists where the
subquery is rewritten, and a subquery whose plan reuses the outer plan's attribute ids must be
re-instantiated before its predicates are pulled.  So each rewrite calls
:func:`~ember.optimizer.rules.decorrelate.pull_up_correlated_predicates` on the subquery plan at
the point it builds the join.

The executor knows joins, aggregates, filters and projects, not subqueries.  This rule turns each
subquery expression of an analyzed plan into a join with the (decorrelated) subquery plan, so the
output plan holds no ``Exists``/``InSubquery``/``ScalarSubquery``/``OuterReference``.  It runs
once, bottom-up; subquery plans are rewritten first (nested subqueries), then decorrelated by
:mod:`ember.optimizer.rules.decorrelate` (correlated conjuncts become join conditions with
``outer(x)`` replaced by ``x``).  Every rewritten node keeps its output (same ids, same order):
helper columns are dropped by a ``Project``.

Predicate subqueries that are top-level conjuncts of a ``Filter``::

    Filter (EXISTS(q) AND x > 1)           Project [t.*]
    +- t                           ==>     +- Join LeftSemi, <correlated conds>
                                              :- Filter (x > 1)
                                              :  +- t
                                              +- q'        (q without its correlated conjuncts)

- ``NOT EXISTS(q)``            -> LeftAnti, correlated conditions.
- ``a IN (q)``                 -> LeftSemi, ``a = c`` AND correlated conditions.
- ``(a, b) IN (q)``            -> LeftSemi, ``a = c AND b = d`` ...
- ``a NOT IN (q)``             -> LeftAnti, ``(a = c) OR isnull(a = c)`` per column AND correlated
  conditions: a row is dropped when some subquery row compares TRUE *or NULL*, which is NOT IN's
  three-valued meaning in a WHERE clause (NULL and FALSE both reject).  For several columns the
  per-column form ``(a=c OR isnull(a=c)) AND (b=d OR isnull(b=d))`` equals
  ``(a=c AND b=d) OR isnull(a=c AND b=d)`` (both say "no column comparison is FALSE").

Predicate subqueries anywhere else (under OR/NOT, in a projection, an aggregate or its FILTER
clause, a join condition) -> ``ExistenceJoin(exists#N)`` adding a non-null boolean column that
replaces the predicate (``NOT IN`` -> ``NOT exists`` over the null-aware condition above).  As in
Spark, the result is then TRUE/FALSE, never NULL: ``a IN (q)`` in a SELECT list is FALSE (not
NULL) when there is no match but q holds a NULL.

Scalar subqueries -> LeftOuter join, the value taken from the joined column::

    Project [(SELECT count(*) FROM s WHERE s.c = t.a) AS n]
    ==> Project [n]
        +- Project [t.*, if(isnull(alwaysTrue), 0, count(1)) AS n]
           +- Join LeftOuter, (c = a)
              :- t
              +- Project [count(1), c, true AS alwaysTrue]
                 +- Aggregate [c], [count(1), c]
                    +- s

COUNT bug: when the subquery's global aggregate has a non-NULL value on an empty input (``count``
-> 0), outer rows without a group would get NULL from the outer join; ``alwaysTrue`` (NULL exactly
for those rows) selects the empty-input value instead.  A HAVING above the aggregate is pulled
above the join: ``CASE WHEN isnull(alwaysTrue) THEN <empty value> WHEN NOT coalesce(having,
false) THEN NULL ELSE value END``.  Aggregates deeper in the subquery are fixed by a domain join
(see decorrelate.py).  An uncorrelated scalar subquery whose plan can return several rows is
joined through ``Aggregate [], [count(1), first(v)]`` and a check that raises
``SCALAR_SUBQUERY_TOO_MANY_ROWS`` at run time; a correlated non-aggregated one is grouped by its
correlation keys with the same check.

Aggregates: a subquery used outside aggregate functions is joined below the Aggregate and its
value column added to the grouping (it is determined by the grouping columns it correlates on, so
the groups do not change).  Join conditions: inner joins become a Filter over the join; for other
join types the subquery is joined onto the side whose columns it reads.

Not valid / not supported (``UnsupportedError``): correlated predicates below LIMIT, set
operations or the null-supplying side of an outer join, non-equality correlation below an
aggregate, outer references outside filters (see decorrelate.py); subqueries in operators other
than Filter/Project/Aggregate/Join/Sort.  No configuration keys are read.

Fast path: RewriteCorrelatedScalarSubquery runs in the fixed-point operator batches, where it
almost never applies; it walks the plan with ``ember.trees.transform_up_memo``, so subtrees an
earlier run left unchanged (no scalar subquery) are not searched again.
"""

from __future__ import annotations

from ember import types as T
from ember.errors import UnsupportedError, AnalysisError
from ember.expressions.base import (
    Alias,
    AttributeReference,
    Expression,
    Literal,
    and_all,
    split_conjuncts,
)
from ember.expressions.subquery import (
    CheckScalarSubqueryRows, Exists, InSubquery, ScalarSubquery, SubqueryExpression,
    OuterReference,
)
from ember.optimizer.rule_executor import Rule
from ember.optimizer.rules.decorrelate_inner_query import decorrelate
from ember.optimizer.rules.decorrelate import (
    always_true_alias,
    empty_input_expression,
    fresh_instance,
    is_null_literal,
    plan_has_outer,
    produced_ids,
    pull_up_correlated_predicates,
    refresh_attributes,
    strip_outer,
    substitute,
    try_fold,
)
from ember.plans.logical.join_type import JoinType
from ember.plans.logical.nodes import (
    Aggregate, Filter, Join, Limit, LogicalPlan, Project, ResolvedHint, Sort, SubqueryAlias, View,
    OneRowRelation,
)
from ember.plans.logical.patterns import null_aware_anti_join_condition
from ember.trees import rewrite_bit, transform_up_memo
from ember.expressions.aggregates import AggregateExpression, Count, First
from ember.expressions.conditional import CaseWhen, If, Coalesce
from ember.expressions.predicates import Not, EqualTo, IsNull

RULE_NAME = "RewritePredicateSubquery"


class RewriteCorrelatedScalarSubquery(Rule):
    """Spark's ``RewriteCorrelatedScalarSubquery`` (operator-optimization batch): every scalar
    subquery -> LeftOuter join with its (decorrelated, grouped) plan, COUNT bug handled.

    Uncorrelated scalar subqueries are joined too (Ember has no physical subquery operator).
    Predicate subqueries are left in place for :class:`RewritePredicateSubquery`.  Works on any
    plan shape other rules produce: only the operator holding the subquery and its input are
    read; the input's columns are kept, so outer references stay valid.

    >>> # Project [(SELECT max(c) FROM s WHERE s.k = t.k) AS m] <- t
    >>> #   -> Project [.., m] <- Join LeftOuter (k = k') (t, Aggregate [k'], [max(c), k'] <- s)
    """

    rule_name = "RewriteCorrelatedScalarSubquery"
    patterns = (SubqueryExpression,)
    excludable = False

    def apply(self, plan: LogicalPlan, conf: object) -> LogicalPlan:
        return rewrite_scalar_subqueries(plan)


class RewritePredicateSubquery(Rule):
    """Spark's ``RewritePredicateSubquery`` (the late "RewriteSubquery" batch): EXISTS / IN /
    NOT IN -> LeftSemi / LeftAnti (null-aware for NOT IN) joins for top-level Filter conjuncts,
    ExistenceJoin elsewhere (under OR/NOT, in projections, aggregates, join conditions, sorts).

    It also rewrites any scalar subquery still present (when RewriteCorrelatedScalarSubquery was
    not run), so its output never holds a subquery expression.  PullupCorrelatedPredicates is
    folded into it: see the module docstring.

    >>> # Filter (EXISTS(q) AND x > 1) <- t  ->  Join LeftSemi <corr> (Filter (x > 1) <- t, q')
    """

    rule_name = "RewritePredicateSubquery"
    patterns = (SubqueryExpression,)
    excludable = False

    def apply(self, plan: LogicalPlan, conf: object) -> LogicalPlan:
        return rewrite_subqueries(plan)


def rewrite_subqueries(plan: LogicalPlan) -> LogicalPlan:
    """``plan`` without subquery expressions (joins instead); ``plan`` itself if it has none.

    >>> # Filter(Exists(q), t)  ->  Project([t.*], Join(t, q, LeftSemi, <correlation>))
    """
    return plan.transform_up(_rewrite_node)


def rewrite_scalar_subqueries(plan: LogicalPlan) -> LogicalPlan:
    """``plan`` with its scalar subqueries replaced by left outer joins (predicate subqueries
    kept); ``plan`` itself if it has none."""
    # A node is left as it is exactly when none of its expressions holds a scalar subquery,
    # which depends on the node alone: skip subtrees an earlier run left unchanged.
    return transform_up_memo(plan, _rewrite_scalars_node, _SCALARS_BIT)


def _rewrite_scalars_node(p: LogicalPlan) -> LogicalPlan:
    return _rewrite_node(p, scalars_only=True)


_SCALARS_BIT = rewrite_bit("RewriteCorrelatedScalarSubquery")


def _one_row_value(plan: LogicalPlan, outer_ids: frozenset[int]) -> Expression | None:
    """``(SELECT f(outer(c)))`` without FROM: one row whose value is ``f(c)`` over the outer row
    itself (no join needed); None for any other subquery plan, or one reading a deeper scope."""
    match plan:
        case Project(project_list=(Alias(child=value),), child=OneRowRelation()) if (
                value.find(lambda x: isinstance(x, SubqueryExpression) or (
                    isinstance(x, OuterReference) and x.attr.id not in outer_ids)) is None
                and value.find(lambda x: isinstance(x, AggregateExpression)) is None):
            return strip_outer(value)
    return None


def contains_subquery(e: Expression) -> bool:
    """Whether ``e`` holds a subquery expression (scalar, EXISTS or IN) anywhere."""
    return e.contains(SubqueryExpression)


def contains_scalar_subquery(e: Expression) -> bool:
    """Whether ``e`` holds a scalar subquery (outside the plans of other subqueries)."""
    return e.contains(ScalarSubquery)


def _rewrite_node(p: LogicalPlan, scalars_only: bool = False) -> LogicalPlan:
    has = contains_scalar_subquery if scalars_only else contains_subquery
    if not any(has(e) for e in p.expressions()):
        return p
    match p:
        case Filter():
            return _rewrite_filter(p, scalars_only)
        case Project(project_list=items, child=child):
            j = _Joiner(child, scalars_only)
            new_items = tuple(j.rewrite_expression(e) for e in items)
            return Project(new_items, j.plan)
        case Aggregate():
            return _rewrite_aggregate(p, scalars_only)
        case Join():
            return _rewrite_join(p, scalars_only)
        case Sort(order=order, child=child):
            j = _Joiner(child, scalars_only)
            new_order = tuple(j.rewrite_expression(o) for o in order)
            return _keep_output(p, Sort(new_order, p.is_global, j.plan))
        case _:
            raise UnsupportedError(
                f"Subquery expressions are not supported in {p.node_name}",
                error_class="UNSUPPORTED_SUBQUERY_EXPRESSION_CATEGORY",
            )


def _keep_output(original: LogicalPlan, new: LogicalPlan) -> LogicalPlan:
    if [a.id for a in new.output] == [a.id for a in original.output]:
        return new
    return Project(original.output, new)


# ---------------------------------------------------------------------------------------------
# Per-operator rewrites


def _rewrite_filter(p: Filter, scalars_only: bool = False) -> LogicalPlan:
    j = _Joiner(p.child, scalars_only)
    if scalars_only:
        return _keep_output(p, Filter(j.rewrite_scalars(p.condition), j.plan))
    conjuncts = [j.rewrite_scalars(c) for c in split_conjuncts(p.condition)]
    with_sub = [c for c in conjuncts if contains_subquery(c)]
    without = [c for c in conjuncts if not contains_subquery(c)]
    if without:
        j.plan = Filter(and_all(without), j.plan)  # type: ignore[arg-type]
    for c in with_sub:
        match c:
            case Exists(plan=sub):
                j.predicate_join(sub, JoinType.LEFT_SEMI)
            case Not(child=Exists(plan=sub)):
                j.predicate_join(sub, JoinType.LEFT_ANTI)
            case InSubquery(values=values, plan=sub):
                j.predicate_join(sub, JoinType.LEFT_SEMI, values)
            case Not(child=InSubquery(values=values, plan=sub)):
                j.predicate_join(sub, JoinType.LEFT_ANTI, values, null_aware=True)
            case _:
                new_c = j.rewrite_predicates(c)
                j.plan = Filter(new_c, j.plan)
    return _keep_output(p, j.plan)


def _rewrite_aggregate(p: Aggregate, scalars_only: bool = False) -> LogicalPlan:
    j = _Joiner(p.child, scalars_only)
    grouping = tuple(j.rewrite_expression(e) for e in p.grouping_expressions)
    aggs = tuple(j.rewrite_expression(e) for e in p.aggregate_expressions)
    # Subquery values read outside aggregate functions must be grouping columns.
    grouped = {g.id for g in grouping if isinstance(g, AttributeReference)}
    extra: list[AttributeReference] = []
    for e in aggs:
        for a in _attrs_outside_aggregates(e):
            if a.id in j.new_ids and a.id not in grouped:
                grouped.add(a.id)
                extra.append(a)
    return Aggregate(grouping + tuple(extra), aggs, j.plan)


def _attrs_outside_aggregates(e: Expression) -> list[AttributeReference]:
    """The attributes ``e`` reads outside aggregate function calls."""

    out: list[AttributeReference] = []
    stack = [e]
    while stack:
        x = stack.pop()
        if isinstance(x, AggregateExpression):
            continue
        if isinstance(x, AttributeReference):
            out.append(x)
        stack.extend(x.children)
    return out


def _rewrite_join(p: Join, scalars_only: bool = False) -> LogicalPlan:
    cond = p.condition
    assert cond is not None
    jt = p.join_type
    has = contains_scalar_subquery if scalars_only else contains_subquery
    if isinstance(jt, JoinType) and jt.is_inner_like:
        conjuncts = split_conjuncts(cond)
        with_sub = [c for c in conjuncts if has(c)]
        without = [c for c in conjuncts if not has(c)]
        return _rewrite_filter(Filter(and_all(with_sub), p.copy(condition=and_all(without))),  # type: ignore[arg-type]
                               scalars_only)
    # Outer / semi / anti joins: evaluate the subquery on the side whose columns it reads.
    reads: set[int] = set()
    kind = ScalarSubquery if scalars_only else SubqueryExpression
    for e in cond.collect(lambda x: x if isinstance(x, kind) else None):
        reads |= _subquery_outer_reads(e)
    left_ids, right_ids = p.left.output_set, p.right.output_set
    if reads <= left_ids:
        j = _Joiner(p.left, scalars_only)
        new_cond = j.rewrite_expression(cond)
        return _keep_output(p, p.copy(left=j.plan, condition=new_cond))
    if reads <= right_ids:
        j = _Joiner(p.right, scalars_only)
        new_cond = j.rewrite_expression(cond)
        return _keep_output(p, p.copy(right=j.plan, condition=new_cond))
    raise UnsupportedError(
        f"A subquery in a {jt} join condition may read the columns of one side only",
        error_class="UNSUPPORTED_SUBQUERY_EXPRESSION_CATEGORY",
    )


def _subquery_outer_reads(e: Expression) -> set[int]:
    """Ids of the enclosing query's columns that subquery expression ``e`` reads (its IN values
    and the outer references anywhere in its plan)."""

    out: set[int] = set()
    if isinstance(e, InSubquery):
        for v in e.values:
            out |= v.references

    def visit(n: LogicalPlan) -> None:
        for x in n.expressions():
            x.foreach(lambda y: out.add(y.attr.id) if isinstance(y, OuterReference) else None)

    e.plan.foreach(visit)  # type: ignore[attr-defined]
    return out


# ---------------------------------------------------------------------------------------------
# The joiner: accumulates joins onto the operator's input


class _Joiner:
    """Joins subqueries onto ``plan`` (the operator's input, growing as joins are added) and
    hands back the expressions that replace them.  Outer references in the subqueries point to
    the original input's columns (``outer_ids``), which every join below keeps."""

    def __init__(self, child: LogicalPlan, scalars_only: bool = False) -> None:
        self.scalars_only = scalars_only
        self.plan = child
        self.outer_plan = child
        self.outer_ids = child.output_set
        self.new_ids: set[int] = set()
        self.cache: dict[Expression, Expression] = {}

    # -- expressions ---------------------------------------------------------------------------
    def rewrite_expression(self, e: Expression) -> Expression:
        if not contains_subquery(e):
            return e
        if self.scalars_only:
            return self.rewrite_scalars(e)
        return self.rewrite_predicates(self.rewrite_scalars(e))

    def rewrite_scalars(self, e: Expression) -> Expression:
        def rule(x: Expression) -> Expression | None:
            if isinstance(x, ScalarSubquery):
                if x not in self.cache:
                    self.cache[x] = self.scalar_join(x)
                return self.cache[x]
            return None

        return e.transform_up(rule)

    def rewrite_predicates(self, e: Expression) -> Expression:
        """Spark's ``rewriteExistentialExpr``: each predicate subquery -> an ExistenceJoin."""

        def rule(x: Expression) -> Expression | None:
            match x:
                case Not(child=InSubquery() as sub):
                    key = x
                    if key not in self.cache:
                        attr = self.existence_join(sub.plan, sub.values, null_aware=True)
                        self.cache[key] = Not(attr)
                    return self.cache[key]
                case InSubquery(values=values, plan=sub):
                    if x not in self.cache:
                        self.cache[x] = self.existence_join(sub, values)
                    return self.cache[x]
                case Exists(plan=sub):
                    if x not in self.cache:
                        self.cache[x] = self.existence_join(sub, ())
                    return self.cache[x]
                case _:
                    return None

        return e.transform_down(rule)

    # -- joins ---------------------------------------------------------------------------------
    def prepare(self, sub: LogicalPlan) -> LogicalPlan:
        """The subquery plan with its own subqueries rewritten and, if it shares attribute ids
        with the plan it is joined to (a self-join), fresh ids."""
        sub = rewrite_subqueries(sub)
        if produced_ids(sub) & (produced_ids(self.plan) | self.plan.output_set):
            sub, _ = fresh_instance(sub)
        return sub

    def conditions(self, sub: LogicalPlan, values: tuple[Expression, ...], null_aware: bool
                   ) -> tuple[LogicalPlan, Expression | None]:

        sub = self.prepare(sub)
        out = sub.output
        if values and len(values) != len(out):
            raise AnalysisError(
                "The number of columns in the left hand side of an IN subquery does not match "
                "the number of columns in the output of subquery.",
                error_class="DATATYPE_MISMATCH.INVALID_IN_SUBQUERY_LENGTH",
            )
        decorrelated, preds = _pull_up_or_decorrelate(sub, self.outer_ids, self.outer_plan)
        conds: list[Expression] = []
        for v, c in zip(values, out):
            conds.append(null_aware_anti_join_condition(v, c) if null_aware else EqualTo(v, c))
        conds.extend(strip_outer(pr) for pr in preds)
        return decorrelated, and_all(conds)

    def predicate_join(self, sub: LogicalPlan, join_type: JoinType,
                       values: tuple[Expression, ...] = (), null_aware: bool = False) -> None:
        right, cond = self.conditions(sub, values, null_aware)
        self.plan = Join(self.plan, right, join_type, cond)

    def existence_join(self, sub: LogicalPlan, values: tuple[Expression, ...],
                       null_aware: bool = False) -> AttributeReference:
        right, cond = self.conditions(sub, values, null_aware)
        attr = AttributeReference("exists", T.BOOLEAN, False)
        self.plan = Join(self.plan, right, JoinType.EXISTENCE, cond, existence_attr=attr)
        self.new_ids.add(attr.id)
        return attr

    def add_value(self, joined: LogicalPlan, value: Expression, name: str) -> AttributeReference:
        """``Project [left.*, value AS name]`` over ``joined``; returns the value's column."""
        alias = Alias(value, name)
        self.plan = Project(self.plan.output + (alias,), joined)
        attr = alias.to_attribute()
        self.new_ids.add(attr.id)
        return attr

    def scalar_join(self, sq: ScalarSubquery) -> Expression:
        inline = _one_row_value(sq.plan, self.outer_ids)
        if inline is not None:
            return inline
        sub = self.prepare(sq.plan)
        out0 = sub.output[0]
        correlated = plan_has_outer(sub, self.outer_ids)
        if not correlated and _at_most_one_row(sub):
            # A left outer join without condition keeps every outer row, with NULL if q is empty.
            joined = Join(self.plan, sub, JoinType.LEFT_OUTER, None, from_scalar_subquery=True)
            return self.add_value(joined, refresh_attributes(out0, joined), out0.name)
        chain = _split_scalar(sub)
        if chain is None:
            return self.unaggregated_scalar_join(sub, correlated)
        agg, value, having = chain
        if not correlated:
            return self.unaggregated_scalar_join(sub, correlated)
        try:
            decorrelated, preds = pull_up_correlated_predicates(
                agg, self.outer_ids, self.outer_plan, top_aggregate=agg
            )
        except UnsupportedError:
            if agg.grouping_expressions or plan_has_outer(sub, self.outer_ids) and not (
                    _at_most_one_row(sub)):
                raise
            # DecorrelateInnerQuery: at most one row per outer row, the COUNT bug handled
            decorrelated, preds = decorrelate(sub, self.outer_plan)
            joined = Join(self.plan, decorrelated, JoinType.LEFT_OUTER,
                          and_all(strip_outer(pr) for pr in preds))
            return self.add_value(joined, refresh_attributes(out0, joined), out0.name)
        cond = and_all(strip_outer(pr) for pr in preds)
        value = strip_outer(value)
        having = None if having is None else strip_outer(having)
        empty_value: Expression | None = None
        if not agg.grouping_expressions:
            raw = _compose_empty(value, agg)
            empty_value = try_fold(raw) or raw
        needs_flag = having is not None or (
            empty_value is not None and not is_null_literal(empty_value)
        )
        if not needs_flag:
            joined = Join(self.plan, decorrelated, JoinType.LEFT_OUTER, cond)
            return self.add_value(joined, refresh_attributes(value, joined), out0.name)
        flag = always_true_alias()
        right = Project(decorrelated.output + (flag,), decorrelated)
        joined = Join(self.plan, right, JoinType.LEFT_OUTER, cond)
        value = refresh_attributes(value, joined)
        having = None if having is None else refresh_attributes(having, joined)
        null = Literal(None, value.data_type)
        if empty_value is None:
            empty_value = null
        elif having is not None:
            empty_having = _compose_empty(having, agg)
            empty_value = If(_true(empty_having), empty_value, null)
        conditions: list[Expression] = [IsNull(flag.to_attribute().with_nullability(True))]
        values: list[Expression] = [empty_value]
        if having is not None:
            conditions.append(Not(_true(having)))
            values.append(null)
        result = CaseWhen(tuple(conditions), tuple(values), value)
        return self.add_value(joined, result, out0.name)

    def unaggregated_scalar_join(self, sub: LogicalPlan, correlated: bool) -> Expression:
        """A scalar subquery that may return several rows: group it (by its correlation keys)
        into ``count(1), first(v)`` and check the count after the join."""

        out0 = sub.output[0]
        if correlated:
            decorrelated, preds = _pull_up_or_decorrelate(sub, self.outer_ids, None,
                                                          self.outer_plan)
            grouping = _equality_keys(preds, decorrelated)
        else:
            decorrelated, preds, grouping = sub, [], ()
        count = Alias(AggregateExpression(Count((Literal(1, T.INT),))), "count")
        first = Alias(AggregateExpression(First(out0, False)), out0.name)
        agg = Aggregate(grouping, (count, first) + grouping, decorrelated)
        joined = Join(self.plan, agg, JoinType.LEFT_OUTER,
                      and_all(strip_outer(pr) for pr in preds), from_scalar_subquery=not correlated)
        value = CheckScalarSubqueryRows(count.to_attribute().with_nullability(True),
                                        first.to_attribute().with_nullability(True))
        return self.add_value(joined, value, out0.name)


def _pull_up_or_decorrelate(sub: LogicalPlan, outer_ids: frozenset[int],
                            domain_plan: LogicalPlan | None,
                            outer_plan: LogicalPlan | None = None
                            ) -> tuple[LogicalPlan, list[Expression]]:
    """PullupCorrelatedPredicates, or, for the shapes it cannot decorrelate (an outer column in
    a projection, correlation below a window, a union, a limit ...), DecorrelateInnerQuery's
    domain joins over ``outer_plan`` (see decorrelate_inner_query.py)."""
    try:
        return pull_up_correlated_predicates(sub, outer_ids, domain_plan)
    except UnsupportedError:
        source = outer_plan if outer_plan is not None else domain_plan
        if source is None:
            raise
        return decorrelate(sub, source)


def _at_most_one_row(plan: LogicalPlan) -> bool:
    """Whether ``plan`` can be seen to return at most one row (a global aggregate, no FROM, or
    ``LIMIT 1`` under row-preserving operators)."""

    match plan:
        case Aggregate(grouping_expressions=()) | OneRowRelation():
            return True
        case Limit(limit=Literal(value=n)) if isinstance(n, int) and n <= 1:
            return True
        case (Project(child=c) | Filter(child=c) | Sort(child=c) | SubqueryAlias(child=c)
              | View(child=c) | ResolvedHint(child=c) | Limit(child=c)):
            return _at_most_one_row(c)
        case _:
            return False


def _equality_keys(preds: list[Expression], plan: LogicalPlan) -> tuple[AttributeReference, ...]:
    keys: list[AttributeReference] = []
    ids = plan.output_set
    for pr in preds:
        for a in plan.output:
            if a.id in pr.references and a.id in ids and all(k.id != a.id for k in keys):
                keys.append(a)
    return tuple(keys)


def _true(cond: Expression) -> Expression:
    """``coalesce(cond, false)``: a HAVING condition as it filters (NULL rejects)."""

    return Coalesce((cond, Literal(False, T.BOOLEAN)))


def _compose_empty(expr: Expression, agg: Aggregate) -> Expression:
    """``expr`` (over ``agg``'s output) evaluated as if ``agg`` saw no rows."""
    mapping: dict[int, Expression] = {}
    for item in agg.aggregate_expressions:
        if isinstance(item, Alias):
            mapping[item.id] = empty_input_expression(item.child)
        elif isinstance(item, AttributeReference):
            mapping[item.id] = Literal(None, item.data_type)
    return substitute(expr, mapping)


def _split_scalar(plan: LogicalPlan) -> tuple[Aggregate, Expression, Expression | None] | None:
    """The aggregate at the top of a scalar subquery, the subquery's value as an expression over
    that aggregate's output, and the AND of the filters (HAVING) above it; None when the top
    of the plan (through Project/Filter/Sort/aliases) is not an Aggregate."""
    chain: list[LogicalPlan] = []
    p = plan
    while True:
        match p:
            case (Project(child=c) | Filter(child=c) | Sort(child=c) | SubqueryAlias(child=c)
                  | View(child=c) | ResolvedHint(child=c)):
                chain.append(p)
                p = c
            case Limit(limit=Literal(value=n), child=c) if isinstance(n, int) and n >= 1:
                chain.append(p)
                p = c
            case Aggregate():
                break
            case _:
                return None
    agg = p
    mapping: dict[int, Expression] = {}
    filters: list[Expression] = []
    for node_ in reversed(chain):
        match node_:
            case Project(project_list=items):
                new: dict[int, Expression] = {}
                for it in items:
                    if isinstance(it, Alias):
                        new[it.id] = substitute(it.child, mapping)
                    elif isinstance(it, AttributeReference):
                        new[it.id] = mapping.get(it.id, it)
                mapping.update(new)
            case Filter(condition=cond):
                filters.append(substitute(cond, mapping))
            case _:
                pass
    out0 = plan.output[0]
    value = mapping.get(out0.id, out0)
    if isinstance(value, AttributeReference):
        value = value.with_nullability(True)
    return agg, value, and_all(filters)  # type: ignore[return-value]


