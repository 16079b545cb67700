"""LIMIT / OFFSET operators and TakeOrderedAndProject (top-k).

As in Spark, a physical ``limit`` counts from the first row, OFFSET included: an operator with
``limit`` l and ``offset`` o keeps rows ``[o, l)``; ``limit`` -1 means "no limit" (an OFFSET
alone).  Global limits read their input partitions in
order and stop pulling batches once satisfied, so ``LIMIT 10`` over a scan reads little."""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING

import pyarrow as pa

from ember.execution.kernels.batches import concat, eval_projection, schema_of, slices, take
from ember.execution.kernels.sort import sort_indices
from ember.execution.prepare import prepare
from ember.expressions.common import to_array
from ember.physical.nodes import (
    CollectLimitExec,
    GlobalLimitExec,
    LocalLimitExec,
    TakeOrderedAndProjectExec,
)
from ember.runtime.local.operators.basic import chain
from ember.runtime.local.registry import PartitionFn, operator

if TYPE_CHECKING:
    from ember.runtime.local.context import RunContext


def limit_offset(batches: Iterator[pa.RecordBatch], limit: int,
                 offset: int = 0) -> Iterator[pa.RecordBatch]:
    """Rows ``[offset, limit)`` of ``batches`` (from ``offset`` on when ``limit`` < 0)."""
    skip = max(0, offset)
    remaining = max(0, limit - skip) if limit >= 0 else None
    if remaining == 0:
        return
    for b in batches:
        if skip:
            if skip >= b.num_rows:
                skip -= b.num_rows
                continue
            b = b.slice(skip)
            skip = 0
        if remaining is not None:
            if b.num_rows >= remaining:
                if remaining:
                    yield b.slice(0, remaining)
                return
            remaining -= b.num_rows
        if b.num_rows:
            yield b


@operator(LocalLimitExec)
def run_local_limit(node: LocalLimitExec, rt: RunContext) -> list[PartitionFn]:
    def part(fn: PartitionFn) -> PartitionFn:
        return lambda: limit_offset(fn(), node.limit)

    return [part(p) for p in rt.execute(node.child)]


@operator(GlobalLimitExec)
def run_global_limit(node: GlobalLimitExec, rt: RunContext) -> list[PartitionFn]:
    parts = rt.execute(node.child)
    return [lambda: limit_offset(chain(parts), node.limit, node.offset)]


@operator(CollectLimitExec)
def run_collect_limit(node: CollectLimitExec, rt: RunContext) -> list[PartitionFn]:
    parts = rt.execute(node.child)
    return [lambda: limit_offset(chain(parts), node.limit, node.offset)]


def _sorted(batch: pa.RecordBatch, bound, orders) -> pa.RecordBatch:
    keys = [to_array(e.eval(batch), batch.num_rows) for e in bound]
    idx = sort_indices(keys, [o.ascending for o in orders],
                       [o.effective_nulls_first for o in orders])
    return take(batch, idx)


@operator(TakeOrderedAndProjectExec)
def run_take_ordered(node: TakeOrderedAndProjectExec, rt: RunContext) -> list[PartitionFn]:
    """Per child partition (in parallel) the first ``limit`` rows by ``sort_order`` (kept
    bounded while reading), then the same over their union, rows ``[offset, limit)`` projected."""
    child = node.child
    in_schema = schema_of(child.output)
    out_schema = schema_of(node.output)
    orders = node.sort_order
    k = node.limit if node.limit >= 0 else None
    parts = rt.execute(child)

    def top(batches: Iterator[pa.RecordBatch]) -> pa.RecordBatch:
        bound = [prepare(o.child, child.output) for o in orders]
        buf: list[pa.RecordBatch] = []
        held = 0
        cap = max(2 * (k or 0), rt.ctx.batch_size, 1024)
        for b in batches:
            buf.append(b)
            held += b.num_rows
            if k is not None and held > cap:
                merged = _sorted(concat(buf, in_schema), bound, orders).slice(0, k)
                buf, held = [merged], merged.num_rows
        out = _sorted(concat(buf, in_schema), bound, orders)
        return out if k is None else out.slice(0, k)

    def run() -> Iterator[pa.RecordBatch]:
        tops = rt.run_stage("take ordered", [lambda p=p: top(p()) for p in parts])
        best = top(iter(tops))
        best = best.slice(max(0, node.offset))
        bound = [prepare(e, child.output) for e in node.project_list]
        for s in slices(best, rt.ctx.batch_size):
            yield eval_projection(bound, s, out_schema)

    return [run]
