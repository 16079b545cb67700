"""Catalyst's ``PredicateHelper``: the predicate tests every join and filter rule shares.

- :func:`split_conjunctive_predicates` / :func:`split_disjunctive_predicates`: ``a AND b`` ->
  ``[a, b]`` (resp. OR), flattening nested ones.
- :func:`can_evaluate`: every reference of ``expr`` is produced by ``plan`` (so an expression
  without references -- a literal -- can be evaluated on *any* plan; ReorderJoin's "literal quirk"
  follows from this).
- :func:`can_evaluate_within_join`: whether a conjunct may sit in a Join's condition
  (Spark's ``PredicateHelper.canEvaluateWithinJoin``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ember.expressions.aggregates import AggregateExpression
from ember.expressions.base import AttributeReference, Expression, Unevaluable, split_conjuncts
from ember.expressions.predicates import Or
from ember.expressions.subquery import Exists, InSubquery, SubqueryExpression

if TYPE_CHECKING:  # pragma: no cover
    from ember.plans.logical.nodes import LogicalPlan

__all__ = [
    "split_conjunctive_predicates",
    "split_disjunctive_predicates",
    "can_evaluate",
    "can_evaluate_within_join",
]


def split_conjunctive_predicates(e: Expression | None) -> list[Expression]:
    """``a AND (b AND c)`` -> ``[a, b, c]``; None -> ``[]``."""
    return [] if e is None else list(split_conjuncts(e))


def split_disjunctive_predicates(e: Expression) -> list[Expression]:
    """``a OR (b OR c)`` -> ``[a, b, c]``."""
    if isinstance(e, Or):
        return split_disjunctive_predicates(e.left) + split_disjunctive_predicates(e.right)
    return [e]


def can_evaluate(expr: Expression, plan: "LogicalPlan") -> bool:
    """True when ``plan``'s output holds every attribute ``expr`` references."""
    return expr.references <= plan.output_set


def can_evaluate_within_join(expr: Expression) -> bool:
    """Whether ``expr`` may be placed in a Join condition (Spark's ``canEvaluateWithinJoin``).

    Non-deterministic -> no; EXISTS / IN-subquery -> no (they become semi/anti joins later);
    another subquery expression -> only when uncorrelated; an attribute -> yes; an unevaluable
    expression (aggregate, unresolved ...) -> no; otherwise all children must pass.
    """
    if not expr.deterministic:
        return False
    if isinstance(expr, (Exists, InSubquery)):
        return False
    if isinstance(expr, SubqueryExpression):
        return not expr.outer_attrs
    if isinstance(expr, AttributeReference):
        return True
    if isinstance(expr, (Unevaluable, AggregateExpression)):
        return False
    return all(can_evaluate_within_join(c) for c in expr.children)
