"""Planning of windows: the strategies for ``Window`` and ``WindowGroupLimit`` (Spark's
``BasicOperators`` case and ``WindowGroupLimit`` strategy) and the preparation rule
RemoveRedundantWindowGroupLimits.

``Window`` becomes a ``WindowExec``, whose required distribution and ordering make
EnsureRequirements add ``Exchange hashpartitioning(partition keys)`` (``SinglePartition``
without PARTITION BY) and ``Sort [partition keys ASC NULLS FIRST, order keys]``.
``WindowGroupLimit`` becomes a Final ``WindowGroupLimitExec`` over a Partial one: the Partial
limits each input partition (sorted locally) before the shuffle, the Final the whole window
partitions after it; when the Partial's input is already partitioned as the Final requires
(no exchange between them), RemoveRedundantWindowGroupLimits drops the Partial.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ember.physical.nodes import (
    SparkPlan,
    WindowExec,
    WindowGroupLimitExec,
    WindowGroupLimitMode,
)
from ember.plans.logical import nodes as L

PlanLater = Callable[[L.LogicalPlan], SparkPlan]


def window_operators(plan: L.LogicalPlan, plan_later: PlanLater) -> SparkPlan | None:
    """The physical operator of a ``Window`` or ``WindowGroupLimit`` node, else None."""
    match plan:
        case L.Window(window_expressions=we, partition_spec=ps, order_spec=os, child=c):
            return WindowExec(we, ps, os, plan_later(c))
        case L.WindowGroupLimit(partition_spec=ps, order_spec=os, rank_like_function=f,
                                limit=k, child=c):
            partial = WindowGroupLimitExec(ps, os, f, k, WindowGroupLimitMode.PARTIAL,
                                           plan_later(c))
            return WindowGroupLimitExec(ps, os, f, k, WindowGroupLimitMode.FINAL, partial)
    return None


def remove_redundant_window_group_limits(
        plan: SparkPlan, links: dict[int, tuple[SparkPlan, Any]] | None = None) -> SparkPlan:
    """Spark's RemoveRedundantWindowGroupLimits: a Final ``WindowGroupLimitExec`` directly
    over a Partial one whose child already satisfies the Final's distribution reads that child
    itself.  ``links`` (see ``QueryPlanner.links``) gives the new node its original's link."""

    def rule(n: SparkPlan) -> SparkPlan | None:
        if (isinstance(n, WindowGroupLimitExec) and n.mode is WindowGroupLimitMode.FINAL
                and isinstance(n.child, WindowGroupLimitExec)
                and n.child.mode is WindowGroupLimitMode.PARTIAL):
            inner = n.child.child
            if inner.output_partitioning.satisfies(n.required_child_distribution[0]):
                new = n.copy(child=inner)
                if links is not None and id(n) in links:
                    links[id(new)] = (new, links[id(n)][1])
                return new
        return None

    return plan.transform_up(rule)
