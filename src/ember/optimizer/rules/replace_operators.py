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

from collections.abc import Callable
from typing import ClassVar

from ember.conf import SQLConf
from ember.expressions.base import and_all
from ember.optimizer.rule_executor import Rule
from ember.plans.logical.join_type import JoinType
from ember.plans.logical.nodes import Aggregate, Distinct, Except, Intersect, Join, LogicalPlan
from ember.expressions.predicates import EqualNullSafe

__all__ = ["ReplaceDistinctWithAggregate", "ReplaceIntersectWithSemiJoin",
           "ReplaceExceptWithAntiJoin", "replace_distinct_with_aggregate",
           "replace_intersect_with_semi_join", "replace_except_with_anti_join"]


def _null_safe_join(left: LogicalPlan, right: LogicalPlan, join_type: JoinType) -> Distinct:
    cond = and_all(EqualNullSafe(a, b) for a, b in zip(left.output, right.output))
    return Distinct(Join(left, right, join_type, cond))


def replace_distinct_with_aggregate(p: LogicalPlan) -> LogicalPlan:
    """``Distinct`` as an ``Aggregate`` grouping by (and outputting) every column."""
    match p:
        case Distinct(child=child):
            out = child.output
            return Aggregate(out, out, child)
        case _:
            return p


def replace_intersect_with_semi_join(p: LogicalPlan) -> LogicalPlan:
    """``INTERSECT`` (not ALL) as a distinct null-safe LeftSemi join."""
    match p:
        case Intersect(left=left, right=right, is_all=False):
            return _null_safe_join(left, right, JoinType.LEFT_SEMI)
        case _:
            return p


def replace_except_with_anti_join(p: LogicalPlan) -> LogicalPlan:
    """``EXCEPT`` (not ALL) as a distinct null-safe LeftAnti join."""
    match p:
        case Except(left=left, right=right, is_all=False):
            return _null_safe_join(left, right, JoinType.LEFT_ANTI)
        case _:
            return p


class _ReplaceRule(Rule):
    """A non-excludable rule applying its node ``rewrite`` top-down over the plan."""

    excludable = False
    rewrite: ClassVar[Callable[[LogicalPlan], LogicalPlan]]

    def apply(self, plan: LogicalPlan, conf: SQLConf) -> LogicalPlan:
        return plan.transform_down(self.rewrite)


class ReplaceDistinctWithAggregate(_ReplaceRule):
    """See the module docstring."""

    rule_name = "ReplaceDistinctWithAggregate"
    patterns = (Distinct,)
    rewrite = staticmethod(replace_distinct_with_aggregate)


class ReplaceIntersectWithSemiJoin(_ReplaceRule):
    """See the module docstring."""

    rule_name = "ReplaceIntersectWithSemiJoin"
    patterns = (Intersect,)
    rewrite = staticmethod(replace_intersect_with_semi_join)


class ReplaceExceptWithAntiJoin(_ReplaceRule):
    """See the module docstring."""

    rule_name = "ReplaceExceptWithAntiJoin"
    patterns = (Except,)
    rewrite = staticmethod(replace_except_with_anti_join)
