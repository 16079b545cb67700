"""HashAggregateExec: COMPLETE mode runs one hash aggregation
(``ember.execution.aggregate.execute_aggregate``) per partition; the other modes (PARTIAL /
PARTIAL_MERGE / FINAL, over aggregate buffers) are in :mod:`.aggregate_modes`.

The planner requires ``ClusteredDistribution(grouping)`` (``AllTuples`` without grouping) for a
complete or final aggregate, so every group lives in exactly one partition.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING

import pyarrow as pa

from ember.execution.aggregate import execute_aggregate
from ember.expressions.aggregates import AggregateExpression
from ember.expressions.base import AttributeReference, Expression
from ember.physical.nodes import AggregateMode, HashAggregateExec
from ember.plans.logical.nodes import Aggregate, LocalRelation
from ember.runtime.local.operators.basic import chain
from ember.runtime.local.registry import PartitionFn, operator
from ember.runtime.local.operators.aggregate_modes import run_hash_aggregate_modes

if TYPE_CHECKING:
    from ember.runtime.local.context import RunContext


def logical_aggregate(node: HashAggregateExec) -> Aggregate:
    """The logical ``Aggregate`` computing ``node`` (result expressions referring to an aggregate
    by its result attribute get the aggregate call inlined)."""
    by_id = {a.id: a for a in node.aggregate_expressions if isinstance(a, AggregateExpression)}

    def inline(e: Expression) -> Expression | None:
        if isinstance(e, AttributeReference) and e.id in by_id:
            return by_id[e.id]
        return None

    results = tuple(e.transform_up(inline) if by_id else e for e in node.result_expressions)
    return Aggregate(node.grouping_expressions, results, LocalRelation(node.child.output))


@operator(HashAggregateExec)
def run_hash_aggregate(node: HashAggregateExec, rt: RunContext) -> list[PartitionFn]:
    if node.mode is not AggregateMode.COMPLETE:  # PARTIAL / PARTIAL_MERGE / FINAL buffers
        return run_hash_aggregate_modes(node, rt)
    plan = logical_aggregate(node)
    attrs = node.child.output
    parts = rt.execute(node.child)
    if not node.grouping_expressions and len(parts) != 1:
        # a global aggregate yields exactly one row: aggregate all partitions together
        whole = list(parts)
        parts = [lambda: chain(whole)]

    def part(fn: PartitionFn) -> PartitionFn:
        def run() -> Iterator[pa.RecordBatch]:
            return execute_aggregate(plan, fn(), rt.ctx, child_attrs=attrs)

        return run

    return [part(p) for p in parts]
