"""Small helpers shared by analyzer rules.

:func:`transform_up_in_run` is the fast path of the rules that leave every node as it is except
a few unresolved shapes: within one run of the analyzer's batches (same context, configuration,
catalog and enclosing scopes) such a rule is a function of the subtree alone, so a subtree it
returned unchanged in an earlier iteration is not walked again in later ones.  The memo lives in
``AnalysisContext.run_memo`` for one ``Analyzer._run_batches`` call only (dropped afterwards).
"""

from __future__ import annotations

from collections.abc import Callable

from ember.expressions.aggregates import AggregateExpression
from ember.expressions.base import Expression
from ember.plans.logical.nodes import LogicalPlan
from ember.expressions.subquery import SubqueryExpression


def is_aggregate_expr(e: Expression) -> bool:
    """Whether ``e`` is an ``AggregateExpression`` (an aggregate function call)."""
    return isinstance(e, AggregateExpression)


def contains_aggregate(e: Expression) -> bool:
    """Whether ``e`` holds an aggregate expression anywhere."""
    return e.exists(is_aggregate_expr)


def transform_up_in_run(plan: LogicalPlan, rule: Callable[[LogicalPlan], LogicalPlan], ctx,
                        name: str) -> LogicalPlan:
    """``plan.transform_up(rule)``, skipping subtrees ``rule`` left unchanged earlier in this
    analyzer run (see the module docstring).  Only for rules whose result on a node depends on
    its subtree and ``ctx`` alone."""
    run_memo = getattr(ctx, "run_memo", None)
    if run_memo is None:
        return plan.transform_up(rule)
    seen = run_memo.get(name)
    if seen is None:
        seen = run_memo[name] = {}

    def visit(node: LogicalPlan) -> LogicalPlan:
        if seen.get(id(node)) is node:
            return node
        kids = node.children
        current = node
        if kids:
            new = [visit(k) for k in kids]
            for a, b in zip(kids, new):
                if a is not b:
                    current = node.with_children(new)
                    break
        after = rule(current)
        result = current if after is None else after
        if result is node:
            seen[id(node)] = node  # the value keeps the node alive: its id stays unique
        return result

    return visit(plan)


def map_subquery_plans(
    e: Expression, fn: Callable[[LogicalPlan], LogicalPlan]
) -> Expression:
    """``e`` with ``fn`` applied to the plan of every subquery expression in it."""

    def rule(x: Expression) -> Expression | None:
        if isinstance(x, SubqueryExpression):
            new = fn(x.plan)
            return x if new is x.plan else x.with_plan(new)
        return None

    return e.transform_up(rule)
