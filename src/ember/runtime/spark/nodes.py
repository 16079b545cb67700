"""Physical leaves that exist only on the Spark runtime's executors.

The Spark runtime (:mod:`ember.runtime.spark.runtime`) cuts a physical plan into *regions*: the
narrow operators between Spark's RDD boundaries (shuffles, unions, sources).  A region runs
inside one Spark task, on the local runtime's operators, with each boundary replaced by a
:class:`SparkInputExec` leaf that yields the batches Spark hands the task for that input.
"""

from __future__ import annotations

from dataclasses import field

from ember.expressions.base import AttributeReference, SortOrder
from ember.physical.nodes import LeafExecNode
from ember.physical.partitioning import Partitioning, UnknownPartitioning
from ember.trees import node

__all__ = ["SparkInputExec"]


@node
class SparkInputExec(LeafExecNode):
    """Input ``index`` of a region's task: one partition of the boundary it replaces
    (``source`` is that boundary's EXPLAIN line).  It reports the boundary's partitioning and
    ordering, so the operators above it see the plan they were planned over."""

    index: int
    output: tuple[AttributeReference, ...] = field()  # type: ignore[assignment]
    source: str = field(default="", compare=False)
    partitioning: Partitioning = field(default=UnknownPartitioning(0), compare=False)
    ordering: tuple[SortOrder, ...] = field(default=(), compare=False)

    @property
    def output_partitioning(self) -> Partitioning:
        return self.partitioning

    @property
    def output_ordering(self) -> tuple[SortOrder, ...]:
        return self.ordering

    def simple_string(self) -> str:
        return f"SparkInput {self.index} <- {self.source}"
