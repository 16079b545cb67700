"""HashAggregateExec in PARTIAL / PARTIAL_MERGE / FINAL modes (Spark's two-phase aggregation).

Per partition (all state in the generator; the whole partition is aggregated at once, like the
COMPLETE operator):

1. **Input.**  Grouping expressions are evaluated over the child's rows.  An aggregate in
   PARTIAL mode evaluates its arguments and FILTER (arguments that may raise only on the rows
   passing the FILTER, as the COMPLETE path); one in PARTIAL_MERGE / FINAL mode reads its buffer
   columns from the child, which hold, from ``initial_input_buffer_offset`` on, the buffers of
   the merged aggregates in order (Spark's ``initialInputBufferOffset``).
2. **Groups.**  Keys are canonicalised (one NaN, no ``-0.0``) and numbered by first appearance
   (:func:`ember.execution.aggregate.group_ids`); without grouping there is exactly one group,
   even over an empty partition (Spark's partial global aggregate emits its initial buffers).
3. **Buffers.**  PARTIAL: :func:`~ember.execution.aggregate_buffers.update_buffers`;
   PARTIAL_MERGE / FINAL: :func:`~ember.execution.aggregate_buffers.merge_buffers`.
4. **Output.**  An operator whose aggregates are all FINAL evaluates the buffers and then its
   ``result_expressions`` over ``[grouping attributes..., aggregate result attributes...]``;
   otherwise it outputs ``[grouping values..., buffers...]`` (its ``result_expressions`` are the
   grouping attributes and the buffer attributes, in that order).

DISTINCT is not re-applied here: in the one-distinct plan the distinct functions run in PARTIAL
mode over rows already unique per (group, distinct arguments) -- ``is_distinct`` is display only.
"""

from __future__ import annotations

from collections.abc import Iterator

import pyarrow as pa

from ember.errors import InternalError
from ember.execution.aggregate import (
    InputSlots,
    _conform,
    _may_fail,
    assign_groups,
    emit_batches,
    group_batch,
    read_inputs,
    strip_alias,
)
from ember.execution.aggregate_buffers import (
    buffer_fields,
    evaluate_buffers,
    merge_buffers,
    update_buffers,
)
from ember.execution.context import ExecContext
from ember.execution.prepare import prepare
from ember.expressions.aggregates import AggregateExpression
from ember.expressions.base import AttributeReference, BoundReference, Expression
from ember.expressions.common import to_array, to_mask
from ember.physical.nodes import AggregateMode, HashAggregateExec, aggregate_result_attribute
from ember.runtime.local.operators.basic import chain
from ember.runtime.local.registry import PartitionFn

__all__ = ["run_hash_aggregate_modes", "aggregate_partition"]

_MERGING = (AggregateMode.PARTIAL_MERGE, AggregateMode.FINAL)


def run_hash_aggregate_modes(node: HashAggregateExec, rt) -> list[PartitionFn]:
    """The partitions of a non-COMPLETE ``node`` (one output partition per input partition)."""
    if node.mode is AggregateMode.COMPLETE and not node.aggregate_modes:
        raise InternalError("run_hash_aggregate_modes: COMPLETE aggregates run elsewhere")
    parts = rt.execute(node.child)
    modes = node.modes
    if (not node.grouping_expressions and modes and all(m is AggregateMode.FINAL for m in modes)
            and len(parts) != 1):
        # a final global aggregate yields exactly one row: merge all partitions together
        whole = list(parts)
        parts = [lambda: chain(whole)]
    ctx = rt.ctx

    def part(fn: PartitionFn) -> PartitionFn:
        def run() -> Iterator[pa.RecordBatch]:
            return aggregate_partition(node, fn(), ctx)

        return run

    return [part(p) for p in parts]


def aggregate_partition(node: HashAggregateExec, batches: Iterator[pa.RecordBatch],
                        ctx: ExecContext) -> Iterator[pa.RecordBatch]:
    """Run ``node`` (any mode but COMPLETE) over one partition's ``batches`` (typed like
    ``node.child.output``)."""
    child_attrs = node.child.output
    modes = node.modes
    aggs: list[AggregateExpression] = list(node.aggregate_expressions)  # type: ignore[arg-type]
    if len(modes) != len(aggs):
        raise InternalError(f"{node.simple_string()}: {len(modes)} modes for {len(aggs)} "
                            "aggregates")
    bound_grouping = [prepare(strip_alias(g), child_attrs) for g in node.grouping_expressions]

    # Input slots: partial aggregates' arguments and filters (evaluated), merged aggregates'
    # buffer columns (read by position).
    slots = InputSlots()
    plans: list[tuple[tuple[int, ...], int | None]] = []  # (arg or buffer slots, filter slot)
    offset = node.initial_input_buffer_offset
    for a, m in zip(aggs, modes):
        fields = buffer_fields(a.func)
        if fields is None:
            raise InternalError(f"{a.simple_string()} has no aggregation buffer")
        if m is AggregateMode.PARTIAL:
            filt = None if a.filter is None else prepare(a.filter, child_attrs)
            args = [prepare(c, child_attrs) for c in a.func.children]
            plans.append((tuple(slots.add(x, filt if _may_fail(x) else None) for x in args),
                          None if filt is None else slots.add(filt, None)))
        elif m in _MERGING:
            cols = []
            for f in fields:
                if offset >= len(child_attrs):
                    raise InternalError(f"{node.simple_string()}: no buffer column for "
                                        f"{a.simple_string()}")
                attr = child_attrs[offset]
                cols.append(slots.add(BoundReference(offset, attr.data_type, attr.nullable), None))
                offset += 1
            plans.append((tuple(cols), None))
        else:
            raise InternalError(f"{node.simple_string()}: COMPLETE aggregate in a partial plan")

    key_cols, slot_cols, n_rows = read_inputs(batches, bound_grouping, slots.items)
    gids, n_groups, group_keys = assign_groups(key_cols, n_rows)

    buffers: list[list[pa.Array]] = []
    for a, m, (cols, filt_slot) in zip(aggs, modes, plans):
        inputs = [slot_cols[i] for i in cols]
        if m is AggregateMode.PARTIAL:
            mask = None if filt_slot is None else to_mask(slot_cols[filt_slot])
            bufs = update_buffers(a.func, inputs, mask, gids, n_groups)
        else:
            bufs = merge_buffers(a.func, inputs, gids, n_groups)
        fields = buffer_fields(a.func) or ()
        buffers.append([_conform(b, f.data_type) for b, f in zip(bufs, fields)])

    out_attrs = node.output
    if aggs and all(m is AggregateMode.FINAL for m in modes) or \
            (not aggs and node.mode is AggregateMode.FINAL):
        results = [_conform(evaluate_buffers(a.func, b), a.data_type)
                   for a, b in zip(aggs, buffers)]
        in_attrs = [_to_attr(g) for g in node.grouping_expressions] + \
            [aggregate_result_attribute(a) for a in aggs]
        batch = group_batch(group_keys + results, n_groups)
        out_cols = [
            _conform(to_array(prepare(e, in_attrs).eval(batch), n_groups), attr.data_type)
            for e, attr in zip(node.result_expressions, out_attrs)
        ]
    else:
        out_cols = group_keys + [b for bs in buffers for b in bs]
        if len(out_cols) != len(out_attrs):
            raise InternalError(
                f"{node.simple_string()}: {len(out_cols)} grouping and buffer columns for "
                f"{len(out_attrs)} output attributes")
        out_cols = [_conform(c, a.data_type) for c, a in zip(out_cols, out_attrs)]

    yield from emit_batches(out_cols, out_attrs, n_groups, ctx)


def _to_attr(e: Expression) -> AttributeReference:
    return e.to_attribute()  # type: ignore[attr-defined]
