"""The optimizer: logical rewrites between the analyzer and execution.

``prepare_for_execution(plan)`` is what the session runs on an analyzed plan before handing it to
the executor.  For now it applies the rewrites execution cannot do without (subquery expressions
become joins); the full rule-batch optimizer plugs in here later.
"""

from __future__ import annotations

from ember.plans.logical.nodes import LogicalPlan


def prepare_for_execution(plan: LogicalPlan) -> LogicalPlan:
    """The analyzed ``plan`` rewritten so the executor can run it (same output attributes).

    >>> # prepare_for_execution(Filter(Exists(q), t)) -> Project [t.*] <- Join LeftSemi (t, q)
    """
    from ember.optimizer.rules.rewrite_subquery import rewrite_subqueries

    return rewrite_subqueries(plan)


__all__ = ["prepare_for_execution"]
