"""EliminateSubqueryAliases (+ EliminateView) and EliminateResolvedHint.

**EliminateSubqueryAliases** removes the naming nodes the analyzer needed and the optimizer does
not (Spark's EliminateSubqueryAliases and EliminateView, both in "Finish Analysis")::

    Project [a#1] (SubqueryAlias t (View (`v`, [a#1]) (LocalRelation [a#1])))
        ==>  Project [a#1] (LocalRelation [a#1])

Always valid: both nodes output their child's attributes (same ids; only qualifiers differ).
Subquery-expression plans are cleaned as well (Spark optimizes them with the same batch).

**EliminateResolvedHint** moves join strategy hints into the ``JoinHint`` of the join above
them, then drops every ``ResolvedHint``::

    Join Inner, c (ResolvedHint (strategy=broadcast) (Filter (r)), l)
        ==>  Join Inner, c, leftHint=(strategy=broadcast) (Filter (r), l)

As Spark's ``extractHintsFromPlan``: a hint is found down a chain of unary nodes (and through the
left side of Intersect / Except); of several hints on one side the outermost strategy wins (Spark
merges ``HintInfo`` keeping the first strategy).  Joins that already carry a hint (the analyzer
moves hints at the end of analysis) are left as they are, as are their inputs' hints.  A hint
with no join above is dropped (Spark logs ``joinNotFoundForJoinHint``).
"""

from __future__ import annotations

from ember.conf import SQLConf
from ember.expressions.base import Expression
from ember.optimizer.rule_executor import Rule
from ember.plans.logical.join_type import JoinHint
from ember.plans.logical.nodes import (
    Except,
    Intersect,
    Join,
    LogicalPlan,
    ResolvedHint,
    SubqueryAlias,
    UnaryNode,
    View,
)
from ember.expressions.subquery import SubqueryExpression

__all__ = ["EliminateSubqueryAliases", "EliminateResolvedHint", "extract_hints_from_plan"]


def _with_subquery_plans(plan: LogicalPlan, fn) -> LogicalPlan:
    """``plan`` (this node only) with ``fn`` applied to the plan of every subquery expression."""

    def sub(e: Expression) -> Expression | None:
        if isinstance(e, SubqueryExpression):
            new = fn(e.plan)
            return e if new is e.plan else e.with_plan(new)
        return None

    if not plan.subqueries():
        return plan
    return plan.map_expressions(lambda e: e.transform_down(sub))


def eliminate_subquery_aliases(plan: LogicalPlan) -> LogicalPlan:
    """``plan`` without SubqueryAlias and View nodes (also inside subquery expressions)."""

    def rule(p: LogicalPlan) -> LogicalPlan:
        p = _with_subquery_plans(p, eliminate_subquery_aliases)
        match p:
            case SubqueryAlias(child=c) | View(child=c):
                return c
            case _:
                return p

    return plan.transform_up(rule)


class EliminateSubqueryAliases(Rule):
    """See the module docstring."""

    rule_name = "EliminateSubqueryAliases"
    patterns = (SubqueryAlias, View,)
    excludable = False

    def apply(self, plan: LogicalPlan, conf: SQLConf) -> LogicalPlan:
        return eliminate_subquery_aliases(plan)


def extract_hints_from_plan(plan: LogicalPlan) -> tuple[LogicalPlan, tuple[str, ...]]:
    """Spark's ``extractHintsFromPlan``: ``plan`` without the ResolvedHints found down its chain
    of unary nodes (and left sides of Intersect/Except), and their strategies, outermost first."""
    match plan:
        case ResolvedHint(strategies=s, child=child):
            inner, hints = extract_hints_from_plan(child)
            return inner, tuple(s) + hints
        case UnaryNode():
            child = plan.children[0]
            inner, hints = extract_hints_from_plan(child)
            return (plan if inner is child else plan.with_children((inner,))), hints
        case Intersect(left=left) | Except(left=left):
            inner, hints = extract_hints_from_plan(left)
            return (plan if inner is left else plan.copy(left=inner)), hints
        case _:
            return plan, ()


def _merge(hints: tuple[str, ...]) -> tuple[str, ...]:
    """Spark's ``HintInfo.merge``: the first (outermost) strategy wins."""
    return hints[:1]


def eliminate_resolved_hint(plan: LogicalPlan) -> LogicalPlan:
    """``plan`` with hints moved into ``Join.hint`` and ResolvedHint nodes removed."""
    if plan.find(lambda p: isinstance(p, ResolvedHint) or bool(p.subqueries())) is None:
        return plan

    def pull(p: LogicalPlan) -> LogicalPlan:
        p = _with_subquery_plans(p, eliminate_resolved_hint)
        match p:
            case Join(left=left, right=right, hint=hint) if hint.is_empty:
                new_left, lh = extract_hints_from_plan(left)
                new_right, rh = extract_hints_from_plan(right)
                if not lh and not rh:
                    return p
                return p.copy(left=new_left, right=new_right,
                              hint=JoinHint(_merge(lh), _merge(rh)))
            case _:
                return p

    pulled = plan.transform_up(pull)
    return pulled.transform_up(lambda p: p.child if isinstance(p, ResolvedHint) else p)


class EliminateResolvedHint(Rule):
    """See the module docstring."""

    rule_name = "EliminateResolvedHint"
    patterns = (ResolvedHint,)
    excludable = False

    def apply(self, plan: LogicalPlan, conf: SQLConf) -> LogicalPlan:
        return eliminate_resolved_hint(plan)
