"""``CollectMetrics``: the node ``df.observe(...)`` puts over a DataFrame's plan (Spark's
``CollectMetrics``).  It passes its child's rows through unchanged; the metrics (aggregates over
those rows) travel in ``observed``, an object the plan's tree walks do not enter, so the
analyzer and optimizer never see aggregates outside an Aggregate.  ``strip_collect_metrics``
takes the nodes out before optimization; the driver computes the metrics once the query has run
(``ember.query_execution``).
"""

from __future__ import annotations

from dataclasses import field
from typing import Any

from ember.expressions.base import AttributeReference
from ember.plans.logical.nodes import LogicalPlan, UnaryNode
from ember.trees import node

__all__ = ["CollectMetrics", "ObservedMetrics", "strip_collect_metrics", "pending_metrics"]


class ObservedMetrics:
    """What a ``CollectMetrics`` node computes: the resolved ``metrics`` (named aggregate
    expressions over its child's output) and the ``sink`` that takes them (an
    ``ember.observation.Observation``: ``wants_metrics()`` and ``set_metrics(arrow_table)``;
    None for an observation named by a string)."""

    __slots__ = ("metrics", "sink")

    def __init__(self, metrics: tuple[Any, ...], sink: Any) -> None:
        self.metrics = metrics
        self.sink = sink

    @property
    def names(self) -> list[str]:
        return [m.name for m in self.metrics]


@node
class CollectMetrics(UnaryNode):
    """``df.observe(name, *metrics)``: ``child``'s rows, with ``observed`` (an
    ``ember.observation.ObservedMetrics``) holding the aggregates to compute over them."""

    name: str
    child: LogicalPlan
    observed: ObservedMetrics | None = field(default=None, compare=False)

    def _compute_output(self) -> tuple[AttributeReference, ...]:
        return self.child.output

    def simple_string(self) -> str:
        names = ", ".join(self.observed.names) if self.observed is not None else ""
        return f"CollectMetrics {self.name}, [{names}]"


def strip_collect_metrics(plan: LogicalPlan) -> LogicalPlan:
    """``plan`` without its ``CollectMetrics`` nodes (each replaced by its child)."""
    if not plan.find(lambda n: isinstance(n, CollectMetrics)):
        return plan
    return plan.transform_up(lambda n: n.child if isinstance(n, CollectMetrics) else None)


def pending_metrics(plan: LogicalPlan) -> list[CollectMetrics]:
    """The ``CollectMetrics`` nodes of ``plan`` whose sink still waits for its metrics."""
    return plan.collect(lambda n: n if isinstance(n, CollectMetrics) and n.observed is not None
                        and n.observed.sink is not None and n.observed.sink.wants_metrics()
                        else None)
