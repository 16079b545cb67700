"""ReplaceDistinctWithAggregate, ReplaceIntersectWithSemiJoin, ReplaceExceptWithAntiJoin.

Spark 4's "Replace Operators" rules (all non-excludable)::

    Distinct (child)          ==>  Aggregate [child.output], [child.output] (child)
    Intersect false (l, r)    ==>  Distinct (Join LeftSemi, (l1 <=> r1) AND (l2 <=> r2) ... (l, r))
    Except false (l, r)       ==>  Distinct (Join LeftAnti, (l1 <=> r1) AND (l2 <=> r2) ... (l, r))

Null-safe equality makes NULLs match, as set operations require.  The ALL variants (``is_all``)
are left as they are (Spark rewrites them with a Generate Ember lacks; the executor runs them).
Valid for any determinism: each input is evaluated once either way.  No configuration keys.
"""

from __future__ import annotations

from ember.conf import SQLConf
from ember.expressions.base import and_all
from ember.optimizer.rule_executor import Rule
from ember.plans.logical.join_type import JoinType
from ember.plans.logical.nodes import Aggregate, Distinct, Except, Intersect, Join, LogicalPlan

__all__ = ["ReplaceDistinctWithAggregate", "ReplaceIntersectWithSemiJoin",
           "ReplaceExceptWithAntiJoin"]


def _null_safe_join(left: LogicalPlan, right: LogicalPlan, join_type: JoinType) -> Distinct:
    from ember.expressions.predicates import EqualNullSafe

    cond = and_all(EqualNullSafe(a, b) for a, b in zip(left.output, right.output))
    return Distinct(Join(left, right, join_type, cond))


class ReplaceDistinctWithAggregate(Rule):
    """See the module docstring."""

    rule_name = "ReplaceDistinctWithAggregate"
    excludable = False

    def apply(self, plan: LogicalPlan, conf: SQLConf) -> LogicalPlan:
        def rule(p: LogicalPlan) -> LogicalPlan:
            match p:
                case Distinct(child=child):
                    out = child.output
                    return Aggregate(out, out, child)
                case _:
                    return p

        return plan.transform_down(rule)


class ReplaceIntersectWithSemiJoin(Rule):
    """See the module docstring."""

    rule_name = "ReplaceIntersectWithSemiJoin"
    excludable = False

    def apply(self, plan: LogicalPlan, conf: SQLConf) -> LogicalPlan:
        def rule(p: LogicalPlan) -> LogicalPlan:
            match p:
                case Intersect(left=left, right=right, is_all=False):
                    return _null_safe_join(left, right, JoinType.LEFT_SEMI)
                case _:
                    return p

        return plan.transform_down(rule)


class ReplaceExceptWithAntiJoin(Rule):
    """See the module docstring."""

    rule_name = "ReplaceExceptWithAntiJoin"
    excludable = False

    def apply(self, plan: LogicalPlan, conf: SQLConf) -> LogicalPlan:
        def rule(p: LogicalPlan) -> LogicalPlan:
            match p:
                case Except(left=left, right=right, is_all=False):
                    return _null_safe_join(left, right, JoinType.LEFT_ANTI)
                case _:
                    return p

        return plan.transform_down(rule)
