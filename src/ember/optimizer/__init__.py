"""The optimizer: logical rewrites between the analyzer and execution.

:func:`prepare_for_execution` is what the session runs on an analyzed plan before handing it to
the executor.  Until the rule executor exists (named batches, fixed points, per-rule schema
checks and timings), it applies, once each and in this order, the rewrites execution cannot do
without:

1. RewritePredicateSubquery + RewriteCorrelatedScalarSubquery (``rules/rewrite_subquery.py``):
   subquery expressions become joins; the executor has no subquery operator.
2. BooleanSimplification (``rules/boolean_simplification.py``): common conjuncts factored out of
   disjunctions, so a join key written in every branch of an OR (TPC-H q19) becomes a conjunct.
3. PushDownPredicates (``rules/push_down_predicates.py``): Filter conjuncts into join conditions
   and toward the relations.
4. ReorderJoin (``rules/reorder_join.py``): trees of inner joins rebuilt so each join has a
   condition when one exists.
5. PushDownPredicates again: the one-relation conjuncts ReorderJoin put into join conditions go
   back into their relations.

Without 3-5, ``FROM a, b, c WHERE ...`` runs as a cartesian product.  Every step keeps the plan's
output (same attributes, same order) and returns its input itself when nothing applies.
"""

from __future__ import annotations

from ember.optimizer.rules.boolean_simplification import boolean_simplification
from ember.optimizer.rules.push_down_predicates import push_down_predicates
from ember.optimizer.rules.reorder_join import reorder_join
from ember.optimizer.rules.rewrite_subquery import rewrite_subqueries
from ember.plans.logical.nodes import LogicalPlan


def prepare_for_execution(plan: LogicalPlan) -> LogicalPlan:
    """The analyzed ``plan`` rewritten so the executor can run it (same output attributes).

    >>> # prepare_for_execution(Filter(Exists(q), t)) -> Project [t.*] <- Join LeftSemi (t, q)
    """
    plan = rewrite_subqueries(plan)
    plan = boolean_simplification(plan)
    plan = push_down_predicates(plan)
    plan = reorder_join(plan)
    return push_down_predicates(plan)


__all__ = ["prepare_for_execution"]
