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

import numpy as np
import pyarrow as pa

from ember.errors import InternalError
from ember.execution.aggregate import (
    _canonical_key,
    _concat,
    _conform,
    _may_fail,
    group_ids,
)
from ember.execution.aggregate_buffers import (
    buffer_fields,
    evaluate_buffers,
    merge_buffers,
    update_buffers,
)
from ember.execution.context import ExecContext
from ember.execution.kernels.batches import _zero_col, make_batch, schema_of
from ember.execution.prepare import prepare
from ember.expressions.aggregates import AggregateExpression
from ember.expressions.base import (
    Alias,
    AttributeReference,
    BoundReference,
    Expression,
    Literal,
)
from ember.expressions.common import eval_where, to_array, to_mask
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
    bound_grouping = [prepare(_strip_alias(g), child_attrs) for g in node.grouping_expressions]

    # Input slots: partial aggregates' arguments and filters (evaluated), merged aggregates'
    # buffer columns (read by position).
    slots: dict[tuple[Expression, Expression | None], int] = {}
    slot_list: list[tuple[Expression, Expression | None]] = []

    def slot(expr: Expression, filt: Expression | None) -> int:
        key = (expr, filt)
        i = slots.get(key)
        if i is None:
            i = slots[key] = len(slot_list)
            slot_list.append(key)
        return i

    plans: list[tuple[tuple[int, ...], int | None]] = []  # (arg or buffer slots, filter slot)
    offset = node.initial_input_buffer_offset
    for a, m in zip(aggs, modes):
        fields = buffer_fields(a.func)
        if fields is None:
            raise InternalError(f"{a.simple_string()} has no aggregation buffer")
        if m is AggregateMode.PARTIAL:
            filt = None if a.filter is None else prepare(a.filter, child_attrs)
            args = [prepare(c, child_attrs) for c in a.func.children]
            plans.append((tuple(slot(x, filt if _may_fail(x) else None) for x in args),
                          None if filt is None else slot(filt, None)))
        elif m in _MERGING:
            cols = []
            for f in fields:
                if offset >= len(child_attrs):
                    raise InternalError(f"{node.simple_string()}: no buffer column for "
                                        f"{a.simple_string()}")
                attr = child_attrs[offset]
                cols.append(slot(BoundReference(offset, attr.data_type, attr.nullable), None))
                offset += 1
            plans.append((tuple(cols), None))
        else:
            raise InternalError(f"{node.simple_string()}: COMPLETE aggregate in a partial plan")

    key_parts: list[list[pa.Array]] = [[] for _ in bound_grouping]
    slot_parts: list[list[pa.Array]] = [[] for _ in slot_list]
    n_rows = 0
    for batch in batches:
        n = batch.num_rows
        if n == 0:
            continue
        n_rows += n
        for i, g in enumerate(bound_grouping):
            key_parts[i].append(_conform(to_array(g.eval(batch), n), g.data_type))
        masks: dict[Expression, np.ndarray] = {}
        for i, (expr, filt) in enumerate(slot_list):
            if isinstance(expr, Literal):
                continue
            if filt is None:
                arr = to_array(expr.eval(batch), n)
            else:
                m = masks.get(filt)
                if m is None:
                    m = masks[filt] = to_mask(to_array(filt.eval(batch), n))
                arr = eval_where(expr, batch, m)
            slot_parts[i].append(_conform(arr, expr.data_type))

    key_cols = [_concat(p, g.data_type) for p, g in zip(key_parts, bound_grouping)]
    slot_cols = [
        _conform(to_array(e.eval(_zero_col(n_rows)), n_rows), e.data_type)
        if isinstance(e, Literal) else _concat(p, e.data_type)
        for p, (e, _) in zip(slot_parts, slot_list)
    ]

    if bound_grouping:
        key_cols = [_canonical_key(c) for c in key_cols]
        gids, first_rows = group_ids(key_cols, n_rows)
        n_groups = len(first_rows)
        group_keys = [c.take(pa.array(first_rows, type=pa.int64())) for c in key_cols]
    else:
        gids = np.zeros(n_rows, dtype=np.int64)
        n_groups = 1
        group_keys = []

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
        cols = group_keys + results
        group_batch = (pa.RecordBatch.from_arrays(cols, names=[f"_{i}" for i in range(len(cols))])
                       if cols else _zero_col(n_groups))
        out_cols = [
            _conform(to_array(prepare(e, in_attrs).eval(group_batch), n_groups), attr.data_type)
            for e, attr in zip(node.result_expressions, out_attrs)
        ]
    else:
        out_cols = group_keys + [b for bs in buffers for b in bs]
        if len(out_cols) != len(out_attrs):
            raise InternalError(
                f"{node.simple_string()}: {len(out_cols)} grouping and buffer columns for "
                f"{len(out_attrs)} output attributes")
        out_cols = [_conform(c, a.data_type) for c, a in zip(out_cols, out_attrs)]

    schema = schema_of(out_attrs)
    size = max(1, ctx.batch_size)
    for start in range(0, n_groups, size):
        length = min(size, n_groups - start)
        yield make_batch([c.slice(start, length) for c in out_cols], schema, length)


def _strip_alias(e: Expression) -> Expression:
    while isinstance(e, Alias):
        e = e.child
    return e


def _to_attr(e: Expression) -> AttributeReference:
    return e.to_attribute()  # type: ignore[attr-defined]
