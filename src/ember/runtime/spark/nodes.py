"""Physical leaves that exist only on the Spark runtime's executors.

The Spark runtime (:mod:`ember.runtime.spark.runtime`) cuts a physical plan into *regions*: the
narrow operators between Spark's RDD boundaries (shuffles, unions, sources).  A region runs
inside one Spark task, on the local runtime's operators, with each boundary replaced by a
:class:`SparkInputExec` leaf that yields the batches Spark hands the task for that input.
"""

from __future__ import annotations

from dataclasses import field

from ember.expressions.base import AttributeReference, SortOrder
from ember.physical.nodes import LeafExecNode, SparkPlan
from ember.physical.partitioning import Partitioning, UnknownPartitioning
from ember.trees import node
from ember import types as T

__all__ = ["SparkInputExec", "NestedLoopPartExec"]


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


@node
class NestedLoopPartExec(SparkPlan):
    """One part of a ``BroadcastNestedLoopJoinExec`` whose result needs every stream partition
    (LeftOuter building left, RightOuter building right, FullOuter, and semi / anti / existence
    building left), run by the Spark runtime as Spark runs it: ``part="bits"`` per stream
    partition, the build rows it matches (one boolean column); the driver ORs them;
    ``part="pairs"`` per stream partition, the passing pairs; ``part="unmatched"`` once, the
    build rows no stream row matched (``bits``: the OR, ``np.packbits`` of ``num_build`` bools).
    ``join``'s stream side is a ``SparkInputExec``, its build side the broadcast exchange."""

    part: str
    join: SparkPlan
    bits: bytes = field(default=b"", compare=False)
    num_build: int = 0

    def _compute_output(self) -> tuple[AttributeReference, ...]:
        if self.part == "bits":
            return (AttributeReference("matched", T.BOOLEAN, False),)
        return self.join.output

    def simple_string(self) -> str:
        return f"NestedLoopPart {self.part} of {self.join.simple_string()}"
