"""CartesianProductExec (Spark's operator of the same name): InnerLike joins without equi-join keys when
nothing can be broadcast.

One output partition per (left partition, right partition) pair, left-major as Spark's
``CartesianRDD``; a task materializes its right partition (its children are recomputed or read
back from a materialized exchange per task) and streams the left partition's batches against it,
every pair a candidate, the condition (if any) filtering pairs chunk by chunk
(:class:`~ember.runtime.local.joins.kernel.JoinKernel` with
:meth:`~ember.runtime.local.joins.kernel.Candidates.all_pairs`; range conditions prune the
candidates as in BroadcastNestedLoopJoin, :mod:`.band`).  Output: left columns then right.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

import pyarrow as pa

from ember.execution.kernels.batches import schema_of
from ember.physical.nodes import CartesianProductExec
from ember.plans.logical.join_type import JoinType
from ember.runtime.local.joins.band import BandIndex
from ember.runtime.local.joins.hashed_relation import to_batch
from ember.runtime.local.joins.kernel import JoinLayout
from ember.runtime.local.joins.nested_loop_join import nested_loop_stream
from ember.runtime.local.pruning import output_mask
from ember.runtime.local.registry import PartitionFn, operator

if TYPE_CHECKING:
    from ember.runtime.local.context import RunContext


def cartesian_layout(node: Any, batch_size: int, rt: RunContext | None = None) -> JoinLayout:
    """Inner-join layout; with the run ``rt``, unread output columns are not gathered."""
    return JoinLayout.of(JoinType.INNER, False, node.left.output, node.right.output, node.output,
                         node.condition, batch_size, keep=output_mask(rt, node))


@operator(CartesianProductExec)
def run_cartesian_product(node: CartesianProductExec, rt: RunContext) -> list[PartitionFn]:
    layout = cartesian_layout(node, rt.ctx.batch_size, rt)
    lparts = rt.execute(node.left)
    rparts = rt.execute(node.right)
    lschema, rschema = schema_of(node.left.output), schema_of(node.right.output)
    metrics = rt.metrics.node(node)
    # the build side is the right partition, sorted afresh per task for range conditions
    band_of = (lambda: BandIndex.of(node.condition, node.left.output, node.right.output))

    def task(lp: PartitionFn, rp: PartitionFn) -> PartitionFn:
        def run() -> Iterator[pa.RecordBatch]:
            right = to_batch(list(rp()), rschema)
            metrics.record_memory(right.nbytes)
            if right.num_rows == 0:
                return
            yield from nested_loop_stream(layout, right, lp(), lschema, band=band_of())
        return run

    return [task(lp, rp) for lp in lparts for rp in rparts]
