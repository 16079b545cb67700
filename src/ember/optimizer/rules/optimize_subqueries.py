"""OptimizeSubqueries: run the whole optimizer on the plan of every subquery expression.

Spark's ``Optimizer.OptimizeSubqueries`` ("Subquery" batch, right after "Pullup Correlated
Expressions"): each subquery expression's plan is optimized on its own, by the same batches, so
that when RewritePredicateSubquery / RewriteCorrelatedScalarSubquery later inline it as a join,
the inlined plan is already optimized (filters inferred and pushed, outer joins eliminated, its
own subqueries rewritten into joins).  A top-level ``Sort`` of the optimized plan is removed (a
subquery's rows are unordered), also under a ``Project``.

TPC-H Q20's ``s_suppkey IN (SELECT ps_suppkey FROM partsupp WHERE ps_partkey IN (<part>) AND
ps_availqty > (<correlated sum over lineitem>))`` is the case that needs it: inside the
subquery plan, the scalar subquery becomes a LeftOuter join, EliminateOuterJoin makes it Inner
(``ps_availqty > value`` rejects NULLs), InferFiltersFromConstraints carries
``ps_partkey IN (<part>)`` over ``l_partkey = ps_partkey`` to ``l_partkey IN (<part>)``,
PushDownPredicates moves it below the aggregate, and the subquery's own RewritePredicateSubquery
turns both into LeftSemi joins::

    before (subquery plan)                  after
    Project [ps_suppkey]                    Project [ps_suppkey]
    +- Filter (ps_partkey IN (part) AND     +- Join Inner, (availqty > v) AND (l_partkey = ..)
       ps_availqty > scalar(lineitem))         :- Join LeftSemi, (ps_partkey = p_partkey)
       +- partsupp                             :  :- partsupp ...   +- part ...
                                               +- Filter isnotnull(v)
                                                  +- Aggregate [l_partkey, l_suppkey], [.. AS v, ..]
                                                     +- Join LeftSemi, (l_partkey = p_partkey)
                                                        :- lineitem ...   +- part ...

A *correlated* subquery plan (an ``OuterReference`` to a column produced outside it; a nested
subquery's reference to the subquery plan's own columns does not count) is optimized below its
correlated operators only.  Spark first moves the correlated conjuncts out of the plan
(PullupCorrelatedPredicates) and optimizes what is left; Ember's subquery expressions have
nowhere to keep those conjuncts (see ``rewrite_subquery.py``), and optimizing the plan with them
inside could move them where the later pull-up gives a different, slower plan (below a grouped
Aggregate, into inferred copies).  So a Filter mixing correlated and local conjuncts is split in
two (the correlated ones on top), and every maximal subtree without a correlated expression is
optimized on its own: what Spark optimizes, short of the operators above a correlated
predicate::

    Project [1]                                  Project [1]
    +- Filter (l_orderkey = outer(o_orderkey))   +- Filter (l_orderkey = outer(o_orderkey))
       AND (l_commitdate < l_receiptdate)           +- Filter (isnotnull(l_commitdate) AND
       +- lineitem                                     isnotnull(l_receiptdate) AND
                                                       (l_commitdate < l_receiptdate))
                                                       +- lineitem

Always valid: the optimizer keeps a plan's output and results, and a split Filter is the same
filter.  No configuration keys of its own (the nested run reads the same ``conf``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ember.expressions.base import Expression, and_all, split_conjuncts
from ember.expressions.subquery import OuterReference, SubqueryExpression
from ember.optimizer.rule_executor import Rule
from ember.optimizer.rules.decorrelate import produced_ids
from ember.plans.logical.nodes import Filter, LeafNode, LogicalPlan, Project, Sort

if TYPE_CHECKING:  # pragma: no cover
    from ember.conf import SQLConf

__all__ = [
    "OptimizeSubqueries",
    "optimize_subqueries",
    "is_correlated_plan",
    "remove_top_level_sort",
]


class OptimizeSubqueries(Rule):
    """Spark's ``OptimizeSubqueries``: each subquery plan -> the optimizer's output for it (for a
    correlated plan: for its parts below the correlated operators), top-level Sort removed.

    >>> # Filter (a IN (Filter (x > 1 + 1) <- s)) <- t  ->  Filter (a IN (Filter (x > 2) <- s)) <- t
    """

    rule_name = "OptimizeSubqueries"
    patterns = (SubqueryExpression,)

    def apply(self, plan: LogicalPlan, conf: "SQLConf") -> LogicalPlan:
        return optimize_subqueries(plan, conf)


def optimize_subqueries(plan: LogicalPlan, conf: "SQLConf", *,
                        node_only: bool = False) -> LogicalPlan:
    """``plan`` with the plan of each subquery expression optimized (only those held by
    ``plan``'s top node when ``node_only``); ``plan`` itself when it holds none."""
    # imported here: at module level it would close the import cycle
    # optimizer.rules.optimize_subqueries -> optimizer.optimizer ->
    #   optimizer.rules.optimize_subqueries
    from ember.optimizer.optimizer import Optimizer

    optimizer = Optimizer()

    def sub(e: Expression) -> Expression | None:
        match e:
            case SubqueryExpression(plan=sub_plan) if is_correlated_plan(sub_plan):
                new = remove_top_level_sort(_optimize_below_correlation(sub_plan, conf))
            case SubqueryExpression(plan=sub_plan):
                new = remove_top_level_sort(optimizer.execute(sub_plan, conf))
            case _:
                return None
        return e if new is sub_plan or new == sub_plan else e.with_plan(new)

    def node(p: LogicalPlan) -> LogicalPlan:
        if not p.subqueries():
            return p
        # Subqueries nested in a subquery live in its plan, not among its expression children:
        # the nested optimizer run (or the recursive call) handles them.
        return p.map_expressions(lambda e: e.transform_down(sub))

    return node(plan) if node_only else plan.transform_up(node)


def _optimize_below_correlation(plan: LogicalPlan, conf: "SQLConf",
                                root_ids: frozenset[int] | None = None) -> LogicalPlan:
    """``plan`` (a correlated subquery plan, or part of one whose columns are ``root_ids``) with
    each maximal uncorrelated subtree optimized, after splitting Filters that mix correlated and
    local conjuncts; the subqueries held by the operators above those subtrees are optimized by
    :func:`optimize_subqueries`."""
    # imported here: at module level it would close the import cycle
    # optimizer.rules.optimize_subqueries -> optimizer.optimizer ->
    #   optimizer.rules.optimize_subqueries
    from ember.optimizer.optimizer import Optimizer

    if root_ids is None:
        root_ids = frozenset(_outer_and_produced(plan)[1])
    match plan:
        case LeafNode():
            return plan
        case _ if not is_correlated_plan(plan):
            return Optimizer().execute(plan, conf)
        case Filter(condition=cond, child=child):
            conjuncts = split_conjuncts(cond)
            correlated = [c for c in conjuncts if _is_correlated_expression(c, root_ids)]
            if correlated and len(correlated) < len(conjuncts):
                local = [c for c in conjuncts if not _is_correlated_expression(c, root_ids)]
                below = _optimize_below_correlation(Filter(and_all(local), child), conf, root_ids)
                above = Filter(and_all(correlated), below)  # type: ignore[arg-type]
                return optimize_subqueries(above, conf, node_only=True)
        case _:
            pass
    new_children = tuple(_optimize_below_correlation(c, conf, root_ids) for c in plan.children)
    return optimize_subqueries(plan.with_children(new_children), conf, node_only=True)


def _is_correlated_expression(e: Expression, root_ids: frozenset[int]) -> bool:
    """Whether ``e``, held by an operator of a subquery plan whose columns are ``root_ids``,
    reads a column of the enclosing query: an ``OuterReference`` in it, or one in the plan of a
    subquery in it that points outside both that plan and ``root_ids``."""
    if e.find(lambda x: isinstance(x, OuterReference)) is not None:
        return True
    for x in e.collect(lambda y: y if isinstance(y, SubqueryExpression) else None):
        outer, produced = _outer_and_produced(x.plan)  # type: ignore[attr-defined]
        if outer - produced - root_ids:
            return True
    return False


def remove_top_level_sort(plan: LogicalPlan) -> LogicalPlan:
    """``plan`` without its top ``Sort`` (also below top ``Project`` s): a subquery's output is a
    set of rows (Spark's ``removeTopLevelSort``).  A Sort under a Limit is kept (it picks rows)."""
    match plan:
        case Sort(child=child):
            return child
        case Project(child=child):
            new = remove_top_level_sort(child)
            return plan if new is child else plan.with_children((new,))
        case _:
            return plan


def is_correlated_plan(plan: LogicalPlan) -> bool:
    """Whether ``plan`` (a subquery's plan, nested subquery plans included) reads a column of an
    enclosing query: an ``OuterReference`` to an attribute no operator inside it produces."""
    outer, produced = _outer_and_produced(plan)
    return bool(outer - produced)


def _outer_and_produced(plan: LogicalPlan) -> tuple[set[int], set[int]]:
    """Ids of the outer references in ``plan`` and of the attributes its operators create,
    nested subquery plans included."""
    outer: set[int] = set()
    produced: set[int] = set()

    def walk(p: LogicalPlan) -> None:
        produced.update(produced_ids(p))
        p.foreach(node)

    def node(n: LogicalPlan) -> None:
        for e in n.expressions():
            e.foreach(lambda x: outer.add(x.attr.id) if isinstance(x, OuterReference) else None)
        for s in n.subqueries():
            walk(s)

    walk(plan)
    return outer, produced
