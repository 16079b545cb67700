"""The query planner: strategies with ``planLater``, then EnsureRequirements (Spark's
``SparkPlanner`` + ``QueryPlanner.plan`` + the ``EnsureRequirements`` preparation rule).

A strategy maps one logical node to a physical operator whose children are *placeholders*:
``plan_later(child)`` here plans the child recursively right away (Spark's ``PlanLater`` is
replaced by the first candidate of the child's plan, which is the same thing when each strategy
returns one candidate).  Strategies, in Spark's order: SpecialLimits (root only), JoinSelection,
Aggregation, BasicOperators.
"""

from __future__ import annotations

from ember.conf import SQLConf
from ember.errors import InternalError
from ember.physical.nodes import SparkPlan
from ember.planning.aggregation import plan_aggregate
from ember.planning.basic import basic_operators, special_limits
from ember.planning.ensure_requirements import ensure_requirements
from ember.planning.join_selection import JoinSelection, SizeOf
from ember.plans.logical.nodes import Aggregate, LogicalPlan


class QueryPlanner:
    """Plans an optimized logical plan into a physical plan (before EnsureRequirements)."""

    def __init__(self, conf: SQLConf, size_of: SizeOf | None = None) -> None:
        self.conf = conf
        self.join_selection = JoinSelection(conf, size_of)

    def plan(self, root: LogicalPlan) -> SparkPlan:
        p = special_limits(root, self.plan_later, self.conf)
        return p if p is not None else self.plan_later(root)

    def plan_later(self, plan: LogicalPlan) -> SparkPlan:
        p = self.join_selection.plan(plan, self.plan_later)
        if p is None and isinstance(plan, Aggregate):
            p = plan_aggregate(plan, self.plan_later)
        if p is None:
            p = basic_operators(plan, self.plan_later, self.conf)
        if p is None:
            raise InternalError(f"No plan for {plan.simple_string()}")
        return p


def plan_query(optimized: LogicalPlan, conf: SQLConf, *, size_of: SizeOf | None = None
               ) -> SparkPlan:
    """The executable physical plan of an optimized logical plan: strategies, then
    EnsureRequirements.  ``size_of`` overrides ``plan_stats(plan, conf).size_in_bytes``."""
    physical = QueryPlanner(conf, size_of).plan(optimized)
    return ensure_requirements(physical, conf)
