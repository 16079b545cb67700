"""The optimizer: logical rewrites between the analyzer and execution.

``prepare_for_execution(plan)`` is what the session runs on an analyzed plan before handing it to
the executor.  For now it applies the rewrites execution cannot do without: subquery expressions
become joins (RewritePredicateSubquery / RewriteCorrelatedScalarSubquery), common conjuncts are
factored out of disjunctions (BooleanSimplification), then filters are pushed down and inner-join
trees reordered so that comma joins become equi-joins (PushDownPredicates, ReorderJoin,
PushDownPredicates: without them ``FROM a, b, c WHERE ...`` runs as a cartesian product).  The full rule-batch optimizer plugs in here later.
"""

from __future__ import annotations

from ember.plans.logical.nodes import LogicalPlan


def prepare_for_execution(plan: LogicalPlan) -> LogicalPlan:
    """The analyzed ``plan`` rewritten so the executor can run it (same output attributes).

    >>> # prepare_for_execution(Filter(Exists(q), t)) -> Project [t.*] <- Join LeftSemi (t, q)
    """
    from ember.optimizer.rules.boolean_simplification import boolean_simplification
    from ember.optimizer.rules.push_down_predicates import push_down_predicates
    from ember.optimizer.rules.reorder_join import reorder_join
    from ember.optimizer.rules.rewrite_subquery import rewrite_subqueries

    plan = rewrite_subqueries(plan)
    plan = boolean_simplification(plan)
    plan = push_down_predicates(plan)
    plan = reorder_join(plan)
    return push_down_predicates(plan)


__all__ = ["prepare_for_execution"]
