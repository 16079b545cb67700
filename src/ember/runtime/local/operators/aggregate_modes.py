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
   PARTIAL_MERGE / FINAL: :func:`~ember.execution.aggregate_buffers.merge_buffers` (the
   functions' own update / merge, :class:`~ember.expressions.aggregates.AggregateFunction`).
4. **Output.**  An operator whose aggregates are all FINAL evaluates the buffers and then its
   ``result_expressions`` over ``[grouping attributes..., aggregate result attributes...]``;
   otherwise it outputs ``[grouping values..., buffers...]`` (its ``result_expressions`` are the
   grouping attributes and the buffer attributes, in that order).

A grouped PARTIAL aggregate whose functions all merge exactly (``chunk_mergeable``) runs
steps 1-3 per chunk of about ``_CHUNK_ROWS`` input rows and merges the chunks' buffers, instead of
concatenating the partition's raw input columns.

Adaptive pass-through (``ember.execution.partialAggregation.passThrough.*``, as DuckDB / Photon):
a grouped, purely PARTIAL, chunk-mergeable aggregate without a capped decimal sum looks at its
partition's first chunk; when it holds more than ``minGroupRatio`` groups per input row (and more
input follows), the chunk's buffers are emitted and every further row becomes its own buffer row
(``update_buffers`` with one group per row, which takes identity shortcuts), streamed chunk by
chunk.  The final aggregate merges them exactly, so results are unchanged; the node's metrics get
the extra counter ``partial_pass_through_rows``.  A merge whose keys are all distinct (every row
its own group) returns the buffers unchanged where that is the merge's result.

DISTINCT is not re-applied here: in the one-distinct plan the distinct functions run in PARTIAL
mode over rows already unique per (group, distinct arguments) -- ``is_distinct`` is display only.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING

import numpy as np
import pyarrow as pa

from ember.errors import InternalError
from ember.execution.aggregate import (
    InputSlots,
    _canonical_key,
    _conform,
    _may_fail,
    assign_groups,
    emit_batches,
    group_batch,
    read_inputs,
    strip_alias,
)
from ember.execution.aggregate_buffers import merge_buffers, update_buffers
from ember.execution.context import ExecContext
from ember.execution.prepare import prepare
from ember.expressions.aggregates import AggregateExpression
from ember.expressions.aggregates.kernels import group_counts_scope
from ember.expressions.base import AttributeReference, BoundReference, Expression
from ember.expressions.common import to_array, to_mask
from ember.physical.nodes import (AggregateMode, ExpandExec, HashAggregateExec,
                                  aggregate_result_attribute)
from ember.runtime.local.operators.basic import chain
from ember.runtime.local.operators.expand_aggregate import ExpandedBatch, ExpandGrouping
from ember.runtime.local.registry import PartitionFn
from ember.conf import PARTIAL_AGG_PASS_THROUGH, PARTIAL_AGG_PASS_THROUGH_RATIO

if TYPE_CHECKING:
    from ember.runtime.local.context import RunContext

__all__ = ["run_hash_aggregate_modes", "aggregate_partition"]

_MERGING = (AggregateMode.PARTIAL_MERGE, AggregateMode.FINAL)


def run_hash_aggregate_modes(node: HashAggregateExec, rt: RunContext) -> list[PartitionFn]:
    """The partitions of a non-COMPLETE ``node`` (one output partition per input partition)."""
    if node.mode is AggregateMode.COMPLETE and not node.aggregate_modes:
        raise InternalError("run_hash_aggregate_modes: COMPLETE aggregates run elsewhere")
    modes = node.modes
    expand = None
    if isinstance(node.child, ExpandExec) and node.mode is AggregateMode.PARTIAL and modes \
            and all(m is AggregateMode.PARTIAL for m in modes):
        expand = ExpandGrouping.of(node.child, [prepare(strip_alias(g), node.child.output)
                                                for g in node.grouping_expressions])
    if expand is not None:  # the Expand's input, grouped without materializing its output
        parts = [_expanded(fn, expand, rt.metrics.node(node.child))
                 for fn in rt.execute(node.child.child)]
    else:
        parts = rt.execute(node.child)
    if (not node.grouping_expressions and modes and all(m is AggregateMode.FINAL for m in modes)
            and len(parts) != 1):
        # a final global aggregate yields exactly one row: merge all partitions together
        whole = list(parts)
        parts = [lambda: chain(whole)]
    ctx = rt.ctx
    metrics = rt.metrics.node(node)

    def part(fn: PartitionFn) -> PartitionFn:
        def run() -> Iterator[pa.RecordBatch]:
            return aggregate_partition(node, fn(), ctx, metrics, expand)

        return run

    return [part(p) for p in parts]


def _expanded(fn: PartitionFn, expand: ExpandGrouping, metrics) -> PartitionFn:
    """The Expand's input batches of one partition, standing for its output rows (counted as the
    Expand's output)."""
    def run() -> Iterator[ExpandedBatch]:
        for eb in expand.wrap(fn()):
            metrics.add(output_rows=eb.num_rows)
            yield eb

    return run


def aggregate_partition(node: HashAggregateExec, batches: Iterator[pa.RecordBatch],
                        ctx: ExecContext, metrics=None, expand: ExpandGrouping | None = None
                        ) -> Iterator[pa.RecordBatch]:
    """Run ``node`` (any mode but COMPLETE) over one partition's ``batches`` (typed like
    ``node.child.output``); ``metrics`` (the node's, optional) receives the extra counter
    ``partial_pass_through_rows``.  With ``expand`` (the child Expand, compiled), ``batches``
    are the Expand's input as :class:`ExpandedBatch` es (:mod:`.expand_aggregate`)."""
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
        fields = a.func.buffer_fields()
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

    def aggregate_chunk(chunk: Iterator[pa.RecordBatch]
                        ) -> tuple[list[pa.Array], list[list[pa.Array]], int]:
        got = None
        if expand is not None:
            chunk = list(chunk)
            got = expand.read(chunk, bound_grouping, slots.items)
        if got is not None:
            gids, n_groups, group_keys, slot_cols, n_rows = got
        else:
            if expand is not None:
                chunk = expand.materialize(chunk)
            key_cols, slot_cols, n_rows = read_inputs(chunk, bound_grouping, slots.items)
            gids, n_groups, group_keys = assign_groups(key_cols, n_rows)
        buffers: list[list[pa.Array]] = []
        with group_counts_scope():
            for a, m, (cols, filt_slot) in zip(aggs, modes, plans):
                inputs = [slot_cols[i] for i in cols]
                if m is AggregateMode.PARTIAL:
                    mask = None if filt_slot is None else to_mask(slot_cols[filt_slot])
                    bufs = update_buffers(a.func, inputs, mask, gids, n_groups)
                else:
                    bufs = merge_buffers(a.func, inputs, gids, n_groups)
                fields = a.func.buffer_fields() or ()
                buffers.append([_conform(b, f.data_type) for b, f in zip(bufs, fields)])
        return group_keys, buffers, n_groups

    def pass_through_chunk(chunk: list[pa.RecordBatch]
                           ) -> tuple[list[pa.Array], list[list[pa.Array]], int]:
        """Every row its own group: the rows' keys and one buffer row per input row."""
        rows = expand.materialize(chunk) if expand is not None else iter(chunk)
        key_cols, slot_cols, n_rows = read_inputs(rows, bound_grouping, slots.items)
        gids = np.arange(n_rows, dtype=np.int64)
        buffers: list[list[pa.Array]] = []
        with group_counts_scope():
            for a, (cols, filt_slot) in zip(aggs, plans):
                mask = None if filt_slot is None else to_mask(slot_cols[filt_slot])
                bufs = update_buffers(a.func, [slot_cols[i] for i in cols], mask, gids, n_rows)
                fields = a.func.buffer_fields() or ()
                buffers.append([_conform(b, f.data_type) for b, f in zip(bufs, fields)])
        return [_canonical_key(c) for c in key_cols], buffers, n_rows

    chunked_ok = node.grouping_expressions and all(m is AggregateMode.PARTIAL for m in modes) \
        and _chunkable(aggs)
    ratio = _pass_through_ratio(node, aggs, ctx) if chunked_ok else None
    if ratio is not None:
        batches = iter(batches)
        first_batches, first_rows = _take_chunk(batches)
        first = aggregate_chunk(iter(first_batches))
        if first_rows >= _CHUNK_ROWS and first[2] > ratio * first_rows:
            # High cardinality: emit the first chunk's buffers, then one buffer row per input
            # row (the final aggregate merges them).
            yield from _emit_partial(node, *first, ctx)
            passed = 0
            for chunk in _chunks(batches):
                keys, bufs, n = pass_through_chunk(chunk)
                passed += n
                yield from _emit_partial(node, keys, bufs, n, ctx)
            if metrics is not None and passed:
                metrics.add(partial_pass_through_rows=passed)
            return
        chunked = _chunked(aggs, batches, aggregate_chunk, first)
    elif chunked_ok:
        chunked = _chunked(aggs, batches, aggregate_chunk)
    if chunked_ok:
        if isinstance(chunked, list):  # a chunk's capped decimal sum overflowed: one pass
            chunked = aggregate_chunk(iter(chunked))
        group_keys, buffers, n_groups = chunked
    else:
        group_keys, buffers, n_groups = aggregate_chunk(batches)

    out_attrs = node.output
    if aggs and all(m is AggregateMode.FINAL for m in modes) or \
            (not aggs and node.mode is AggregateMode.FINAL):
        results = [_conform(a.func.evaluate(b), a.data_type)
                   for a, b in zip(aggs, buffers)]
        in_attrs = [_to_attr(g) for g in node.grouping_expressions] + \
            [aggregate_result_attribute(a) for a in aggs]
        batch = group_batch(group_keys + results, n_groups)
        out_cols = [
            _conform(to_array(prepare(e, in_attrs).eval(batch), n_groups), attr.data_type)
            for e, attr in zip(node.result_expressions, out_attrs)
        ]
    else:
        yield from _emit_partial(node, group_keys, buffers, n_groups, ctx)
        return

    yield from emit_batches(out_cols, out_attrs, n_groups, ctx)


def _emit_partial(node: HashAggregateExec, group_keys: list[pa.Array],
                  buffers: list[list[pa.Array]], n_groups: int, ctx: ExecContext
                  ) -> Iterator[pa.RecordBatch]:
    """The output batches ``[grouping values..., buffers...]`` of a non-final aggregate."""
    out_attrs = node.output
    out_cols = group_keys + [b for bs in buffers for b in bs]
    if len(out_cols) != len(out_attrs):
        raise InternalError(
            f"{node.simple_string()}: {len(out_cols)} grouping and buffer columns for "
            f"{len(out_attrs)} output attributes")
    out_cols = [_conform(c, a.data_type) for c, a in zip(out_cols, out_attrs)]
    yield from emit_batches(out_cols, out_attrs, n_groups, ctx)


def _pass_through_ratio(node: HashAggregateExec, aggs: list[AggregateExpression],
                        ctx: ExecContext) -> float | None:
    """The group ratio above which this grouped, chunk-mergeable partial aggregate passes rows
    through, or None when it must not: disabled by configuration, a node not purely PARTIAL
    (e.g. a FINAL DISTINCT without functions, whose grouping is the deduplication), or a
    decimal sum / average with a capped sum precision (a partition's partial sum may overflow
    where the per-row buffers merged exactly do not)."""

    if node.mode is not AggregateMode.PARTIAL or any(a.func.merge_may_overflow for a in aggs):
        return None
    conf = getattr(ctx, "conf", None)
    if conf is None:
        return None
    if not conf.get(PARTIAL_AGG_PASS_THROUGH):
        return None
    return float(conf.get(PARTIAL_AGG_PASS_THROUGH_RATIO))


def _take_chunk(batches: Iterator[pa.RecordBatch]) -> tuple[list[pa.RecordBatch], int]:
    """The next non-empty batches of about ``_CHUNK_ROWS`` rows (fewer at the end)."""
    out: list[pa.RecordBatch] = []
    rows = 0
    for b in batches:
        if b.num_rows == 0:
            continue
        out.append(b)
        rows += b.num_rows
        if rows >= _CHUNK_ROWS:
            break
    return out, rows


def _chunks(batches: Iterator[pa.RecordBatch]) -> Iterator[list[pa.RecordBatch]]:
    """The remaining ``batches`` in runs of about ``_CHUNK_ROWS`` rows (at most one batch when
    batches are large)."""
    while True:
        chunk, rows = _take_chunk(batches)
        if not chunk:
            return
        yield chunk


_CHUNK_ROWS = 1 << 17


def _chunked(aggs: list[AggregateExpression], batches: Iterator[pa.RecordBatch], aggregate_chunk,
             first: tuple[list[pa.Array], list[list[pa.Array]], int] | None = None,
             ) -> tuple[list[pa.Array], list[list[pa.Array]], int] | list[pa.RecordBatch]:
    """PARTIAL aggregation chunk by chunk (runs of input batches of about ``_CHUNK_ROWS`` rows):
    each chunk's buffers are computed as for the whole input, then the chunks' buffer rows
    (a few per group) are merged, in input order.  Only used for the functions whose merge gives
    the one-pass result bit for bit (:func:`_chunkable`); saves concatenating the raw input
    columns of the whole partition.  Returns every input batch instead when the sum of a chunk
    overflowed a capped decimal sum (``merge_may_overflow``): the caller then aggregates them in
    one pass, so that overflow is decided on the exact total.  ``first``: the buffers of the
    batches already read (only without capped decimal sums)."""
    capped = [j for j, a in enumerate(aggs) if a.func.merge_may_overflow]
    if capped and first is not None:
        raise InternalError("_chunked: a pre-aggregated chunk with a capped decimal sum")
    kept: list[pa.RecordBatch] | None = [] if capped else None
    parts: list[tuple[list[pa.Array], list[list[pa.Array]], int]] = [] if first is None else \
        [first]
    pending: list[pa.RecordBatch] = []
    rows = 0
    overflowed = False

    def flush() -> None:
        nonlocal overflowed
        part = aggregate_chunk(iter(pending))
        parts.append(part)
        if any(aggs[j].func.overflow_marked(part[1][j]) for j in capped):
            overflowed = True

    for b in batches:
        if b.num_rows == 0:
            continue
        if kept is not None:
            kept.append(b)
        if overflowed:
            continue
        pending.append(b)
        rows += b.num_rows
        if rows >= _CHUNK_ROWS:
            flush()
            pending, rows = [], 0
    if not overflowed and (pending or not parts):
        flush()
    if overflowed:
        return kept or []
    if len(parts) == 1:
        return parts[0]
    n_keys = len(parts[0][0])
    key_cols = [pa.concat_arrays([p[0][i] for p in parts]) for i in range(n_keys)]
    n_rows = sum(p[2] for p in parts)
    gids, n_groups, group_keys = assign_groups(key_cols, n_rows)
    buffers: list[list[pa.Array]] = []
    with group_counts_scope():
        for j, a in enumerate(aggs):
            fields = a.func.buffer_fields() or ()
            merged_in = [pa.concat_arrays([p[1][j][k] for p in parts])
                         for k in range(len(fields))]
            bufs = merge_buffers(a.func, merged_in, gids, n_groups)
            buffers.append([_conform(b, f.data_type) for b, f in zip(bufs, fields)])
    return group_keys, buffers, n_groups


def _chunkable(aggs: list[AggregateExpression]) -> bool:
    """Whether every function's buffers merge from chunks exactly as from one pass
    (``AggregateFunction.chunk_mergeable``: counts, decimal sums / averages, min / max, first /
    last, max_by / min_by, bool_and / bool_or); with a capped decimal sum, a chunk whose sum
    overflows sends the partition back to one pass, so overflow is decided on the exact total."""
    return all(a.func.chunk_mergeable for a in aggs)


def _to_attr(e: Expression) -> AttributeReference:
    return e.to_attribute()  # type: ignore[attr-defined]
