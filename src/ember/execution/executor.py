"""The local executor: runs an analyzed (and rewritten) logical plan over Arrow record batches.

``execute(plan, ctx)`` returns a lazy iterator of ``pyarrow.RecordBatch``; every batch has one
column per ``plan.output`` attribute, in order, of Arrow type ``attr.data_type.to_arrow()``, and at
most ``ctx.batch_size`` rows.  ``collect(plan, ctx)`` returns a ``pyarrow.Table`` (with the right
schema even when there are no rows).

Streaming operators (Project, Filter, Expand, Limit, Offset, Union) work batch by batch; blocking
ones (Sort, Distinct, Intersect, Except, Join, Aggregate) materialise their input.  Expressions are
bound to the child's output and their constant subtrees folded once (``execution.prepare``), then
evaluated per batch.  Physical planning is a later stage: this module interprets the logical plan
directly.

Two executor-internal shortcuts keep blocking operators from copying needlessly: ``_run_pruned``
produces only the columns a consumer needs (Project/Aggregate above Join/Filter/Project/relations;
see there for why it cannot change results), and an in-memory relation feeding a blocking operator
arrives as one zero-copy batch instead of slices that would be concatenated back.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence

import numpy as np
import pyarrow as pa

from ember.errors import InternalError
from ember.execution.context import ExecContext
from ember.execution.kernels import setops
from ember.execution.kernels.batches import (
    concat,
    conform,
    conform_batch,
    make_batch,
    one_row_no_columns,
    schema_of,
    take,
)
from ember.execution.kernels.keys import canonicalize_floats, encode_arrays, encode_sides
from ember.execution.kernels.sort import sort_indices
from ember.execution.prepare import prepare
from ember.expressions.base import Expression, Literal
from ember.plans.logical.nodes import (
    Aggregate,
    Distinct,
    Except,
    Expand,
    FileRelation,
    Filter,
    Intersect,
    Join,
    Limit,
    LocalRelation,
    LogicalPlan,
    Offset,
    OneRowRelation,
    Project,
    Range,
    ResolvedHint,
    Sort,
    SubqueryAlias,
    Union,
    View,
)


def execute(plan: LogicalPlan, ctx: ExecContext | None = None) -> Iterator[pa.RecordBatch]:
    """Run ``plan`` lazily, yielding record batches typed like ``plan.output``.

    >>> # collect(Project((Alias(Literal(1, INT), "x"),), OneRowRelation()), ExecContext())
    >>> # -> pyarrow.Table x: int32 [[1]]
    """
    ctx = ctx or ExecContext()
    schema = schema_of(plan.output)
    for b in _run(plan, ctx):
        b = conform_batch(b, schema)
        if b.num_rows:
            yield b


def collect(plan: LogicalPlan, ctx: ExecContext | None = None) -> pa.Table:
    """All rows of ``plan`` as one ``pyarrow.Table`` (empty, with the right schema, if none)."""
    schema = schema_of(plan.output)
    batches = list(execute(plan, ctx))
    if not len(schema):
        n = sum(b.num_rows for b in batches)
        return pa.Table.from_batches([], schema=schema) if n == 0 else pa.Table.from_batches(
            batches)
    return pa.Table.from_batches(batches, schema=schema)


# ---------------------------------------------------------------------------------------------
# Dispatch


def _run(plan: LogicalPlan, ctx: ExecContext) -> Iterator[pa.RecordBatch]:
    match plan:
        case SubqueryAlias(child=c) | View(child=c) | ResolvedHint(child=c):
            return execute(c, ctx)
        case LocalRelation():
            return _local_relation(plan, ctx)
        case OneRowRelation():
            return iter((one_row_no_columns(),))
        case Range():
            return _range(plan, ctx)
        case FileRelation():
            from ember.execution.scan import scan_file_relation

            return scan_file_relation(plan, ctx.batch_size, ctx.time_zone)
        case Project(project_list=exprs, child=c):
            return _project(exprs, c, plan, ctx)
        case Filter(condition=cond, child=c):
            return _filter(cond, c, ctx)
        case Join():
            return _run_pruned(plan, None, ctx)[1]
        case Aggregate(child=c):
            from ember.execution.aggregate import execute_aggregate

            refs = frozenset().union(*(e.references for e in plan.grouping_expressions),
                                     *(e.references for e in plan.aggregate_expressions))
            pos, batches = _run_pruned(c, refs, ctx, whole=True)
            if len(pos) == len(c.output):
                return execute_aggregate(plan, batches, ctx)
            return execute_aggregate(plan, batches, ctx,
                                     child_attrs=tuple(c.output[i] for i in pos))
        case Expand(projections=projs, child=c):
            return _expand(projs, c, plan, ctx)
        case Sort(order=order, child=c):
            return _sort(order, c, ctx)
        case Limit(limit=n, child=c):
            return _limit(_int_value(n, "LIMIT"), c, ctx)
        case Offset(offset=n, child=c):
            return _offset(_int_value(n, "OFFSET"), c, ctx)
        case Distinct(child=c):
            return _distinct(c, ctx)
        case Union(inputs=inputs):
            return _union(inputs, plan, ctx)
        case Intersect(left=l, right=r, is_all=is_all):
            return _set_op(l, r, plan, ctx, setops.intersect_all if is_all
                           else setops.intersect_distinct)
        case Except(left=l, right=r, is_all=is_all):
            return _set_op(l, r, plan, ctx, setops.except_all if is_all
                           else setops.except_distinct)
        case _:
            raise InternalError(f"The local executor cannot run {plan.node_name}: {plan.simple_string()}")


# ---------------------------------------------------------------------------------------------
# Helpers


def _as_array(out: pa.Array | pa.ChunkedArray | pa.Scalar, n: int) -> pa.Array:
    if isinstance(out, pa.Scalar):
        return pa.repeat(out, n)
    if isinstance(out, pa.ChunkedArray):
        return out.combine_chunks()
    return out


def _eval_list(bound: Sequence[Expression], batch: pa.RecordBatch,
               schema: pa.Schema) -> pa.RecordBatch:
    cols = [conform(_as_array(e.eval(batch), batch.num_rows), f.type)
            for e, f in zip(bound, schema)]
    return make_batch(cols, schema, batch.num_rows)


def _int_value(e: Expression, what: str) -> int:
    if isinstance(e, Literal):
        v = e.value
    elif e.foldable:
        v = e.eval(one_row_no_columns())[0].as_py()
    else:
        raise InternalError(f"{what} must be a constant, got {e}")
    if v is None:
        raise InternalError(f"{what} must not be NULL")
    return int(v)


def _materialize(plan: LogicalPlan, ctx: ExecContext) -> pa.RecordBatch:
    """All rows of ``plan`` as one batch (an in-memory relation without copying)."""
    inner = plan
    while isinstance(inner, _PASS_THROUGH) and _ids(inner.child.output) == _ids(inner.output):
        inner = inner.child
    if isinstance(inner, LocalRelation):
        return concat(_local_relation(inner, ctx, None, True),
                      schema_of(plan.output))
    return concat(execute(plan, ctx), schema_of(plan.output))


# ---------------------------------------------------------------------------------------------
# Operators


def _local_relation(plan: LocalRelation, ctx: ExecContext, pos: Sequence[int] | None = None,
                    whole: bool = False) -> Iterator[pa.RecordBatch]:
    """The relation's rows (columns ``pos``, default all) in zero-copy slices of at most
    ``ctx.batch_size`` rows, or (``whole``) as one batch (zero-copy when the data is in one
    chunk)."""
    data = plan.data
    if data is None or data.num_rows == 0:
        return
    schema = schema_of(plan.attrs)
    if data.num_columns != len(schema):
        raise InternalError(
            f"LocalRelation has {data.num_columns} data columns for {len(schema)} attributes"
        )
    if not len(schema):
        n = data.num_rows
        if whole:
            yield make_batch([], schema, n)
            return
        for s in range(0, n, ctx.batch_size):
            yield make_batch([], schema, min(ctx.batch_size, n - s))
        return
    if pos is not None and list(pos) != list(range(len(schema))):
        data = data.select(list(pos))
        schema = pa.schema([schema.field(i) for i in pos])
    if whole:
        cols = [conform(c, f.type) for c, f in zip(data.columns, schema)]
        yield make_batch(cols, schema, data.num_rows)
        return
    for b in data.to_batches(max_chunksize=max(1, ctx.batch_size)):
        if b.num_rows:
            yield conform_batch(b, schema)


def _range(plan: Range, ctx: ExecContext) -> Iterator[pa.RecordBatch]:
    """``spark.range``: the ids generated lazily, ``ctx.batch_size`` at a time (numpy arange)."""
    n = plan.num_elements
    schema = schema_of(plan.output)
    size = max(1, ctx.batch_size)
    for s in range(0, n, size):
        k = min(size, n - s)
        ids = np.arange(k, dtype=np.int64) * np.int64(plan.step) + np.int64(plan.start + s * plan.step)
        yield pa.RecordBatch.from_arrays([pa.array(ids, type=pa.int64())], schema=schema)


def _project(exprs: Sequence[Expression], child: LogicalPlan, plan: Project,
             ctx: ExecContext) -> Iterator[pa.RecordBatch]:
    return _project_pruned(list(range(len(exprs))), exprs, child, plan, ctx)


def _project_pruned(keep: Sequence[int], exprs: Sequence[Expression], child: LogicalPlan,
                    plan: Project, ctx: ExecContext) -> Iterator[pa.RecordBatch]:
    """Project items ``keep`` of ``exprs``, reading only the child columns they reference."""
    kept = [exprs[i] for i in keep]
    schema = schema_of([plan.output[i] for i in keep])
    refs = frozenset().union(*(e.references for e in kept))
    pos, batches = _run_pruned(child, refs, ctx)
    attrs = [child.output[i] for i in pos]
    bound = [prepare(e, attrs) for e in kept]
    for b in batches:
        yield _eval_list(bound, b, schema)


def _filter(cond: Expression, child: LogicalPlan, ctx: ExecContext,
            child_run: tuple[list[int], Iterator[pa.RecordBatch]] | None = None,
            ) -> Iterator[pa.RecordBatch]:
    if child_run is None:
        child_run = _run_pruned(child, None, ctx)
    pos, batches = child_run
    bound = prepare(cond, [child.output[i] for i in pos])
    for b in batches:
        res = bound.eval(b)
        if isinstance(res, pa.Scalar):
            if res.is_valid and res.as_py():
                yield b
            continue
        if isinstance(res, pa.ChunkedArray):
            res = res.combine_chunks()
        if pa.types.is_null(res.type):
            continue
        kept = res.true_count
        if kept == b.num_rows:
            yield b
        elif kept:
            # Arrow's filter drops NULL selections: only TRUE passes, as in SQL.
            yield b.filter(res) if b.num_columns else make_batch([], b.schema, kept)


def _expand(projs: Sequence[Sequence[Expression]], child: LogicalPlan, plan: Expand,
            ctx: ExecContext) -> Iterator[pa.RecordBatch]:
    schema = schema_of(plan.output)
    bound = [[prepare(e, child.output) for e in p] for p in projs]
    for b in execute(child, ctx):
        for p in bound:
            yield _eval_list(p, b, schema)


# ---------------------------------------------------------------------------------------------
# Column pruning inside the executor
#
# Blocking operators (joins above all) copy every column they hold, so reading columns nobody
# needs is expensive.  Until the optimizer prunes columns, ``_run_pruned`` runs a plan producing
# only (a superset of) the output columns some consumer needs.  It only drops work whose absence
# is unobservable: unused columns of a relation, and unused Project items that are deterministic
# and cannot raise at run time.


_PASS_THROUGH = (SubqueryAlias, View, ResolvedHint)


def _ids(attrs) -> list[int]:
    return [a.id for a in attrs]


def _droppable(e: Expression) -> bool:
    from ember.expressions.common import may_fail

    return e.deterministic and not may_fail(e)


def _run_pruned(plan: LogicalPlan, required: frozenset[int] | None, ctx: ExecContext,
                whole: bool = False) -> tuple[list[int], Iterator[pa.RecordBatch]]:
    """Run ``plan`` producing at least the output columns whose attribute id is in ``required``
    (every column when None).  Returns the positions in ``plan.output`` of the produced columns
    (ascending) and the batches.  ``whole``: the consumer materialises its input anyway, so an
    in-memory relation may arrive as one batch larger than ``ctx.batch_size``."""
    out = plan.output
    match plan:
        case SubqueryAlias(child=c) | View(child=c) | ResolvedHint(child=c) if (
                _ids(c.output) == _ids(out)):
            return _run_pruned(c, required, ctx, whole)
        case LocalRelation():
            pos = [i for i, a in enumerate(out) if required is None or a.id in required]
            if not pos and out:
                pos = [0]  # keep one (zero-copy) column: it carries the row count
            return pos, _local_relation(plan, ctx, pos, whole)
        case Filter(condition=cond, child=c) if required is not None:
            run = _run_pruned(c, required | cond.references, ctx)
            return run[0], _filter(cond, c, ctx, child_run=run)
        case Project(project_list=exprs, child=c) if required is not None:
            keep = [i for i, (a, e) in enumerate(zip(out, exprs))
                    if a.id in required or not _droppable(e)]
            if not keep and exprs:
                keep = [0]
            return keep, _project_pruned(keep, exprs, c, plan, ctx)
        case Join(left=l, right=r, condition=cond):
            from ember.execution.joins import execute_join, join_output_positions

            need = frozenset(a.id for a in out) if required is None else required
            if cond is not None:
                need = need | cond.references
            lpos, lb = _run_pruned(l, need, ctx, whole=True)
            rpos, rb = _run_pruned(r, need, ctx, whole=True)
            return (join_output_positions(plan, lpos, rpos, required),
                    execute_join(plan, lb, rb, ctx, left_pos=lpos, right_pos=rpos,
                                 required=required))
    return list(range(len(out))), execute(plan, ctx)


def _sort(order, child: LogicalPlan, ctx: ExecContext) -> Iterator[pa.RecordBatch]:
    batch = _materialize(child, ctx)
    if batch.num_rows == 0:
        return
    keys = [_as_array(prepare(o.child, child.output).eval(batch), batch.num_rows)
            for o in order]
    idx = sort_indices(keys, [o.ascending for o in order],
                       [o.effective_nulls_first for o in order])
    size = max(1, ctx.batch_size)
    for s in range(0, len(idx), size):
        yield take(batch, idx[s:s + size])


def _limit(n: int, child: LogicalPlan, ctx: ExecContext) -> Iterator[pa.RecordBatch]:
    if n <= 0:
        return
    remaining = n
    for b in execute(child, ctx):
        if b.num_rows >= remaining:
            yield b.slice(0, remaining)
            return
        remaining -= b.num_rows
        yield b


def _offset(n: int, child: LogicalPlan, ctx: ExecContext) -> Iterator[pa.RecordBatch]:
    skip = max(0, n)
    for b in execute(child, ctx):
        if skip >= b.num_rows:
            skip -= b.num_rows
            continue
        yield b.slice(skip) if skip else b
        skip = 0


def _normalized(batch: pa.RecordBatch) -> pa.RecordBatch:
    """Float columns with -0.0 -> 0.0 and one NaN: Spark de-duplicates through an aggregate
    over normalised keys (NormalizeFloatingNumbers), so DISTINCT/INTERSECT/EXCEPT output the
    normalised values."""
    if not any(pa.types.is_floating(f.type) for f in batch.schema):
        return batch
    cols = [canonicalize_floats(c) for c in batch.columns]
    return make_batch(cols, batch.schema, batch.num_rows)


def _row_codes(batch: pa.RecordBatch) -> np.ndarray:
    if batch.num_columns == 0:
        return np.zeros(batch.num_rows, dtype=np.int64)
    codes, _ = encode_arrays(batch.columns, nulls_equal=True)
    return codes


def _distinct(child: LogicalPlan, ctx: ExecContext) -> Iterator[pa.RecordBatch]:
    batch = _materialize(child, ctx)
    if batch.num_rows == 0:
        return
    idx = setops.first_occurrences(_row_codes(batch))
    size = max(1, ctx.batch_size)
    for s in range(0, len(idx), size):
        yield _normalized(take(batch, idx[s:s + size]))


def _union(inputs: Sequence[LogicalPlan], plan: Union,
           ctx: ExecContext) -> Iterator[pa.RecordBatch]:
    schema = schema_of(plan.output)
    for p in inputs:
        for b in execute(p, ctx):
            yield conform_batch(b, schema)


def _set_op(left: LogicalPlan, right: LogicalPlan, plan: LogicalPlan, ctx: ExecContext,
            kernel) -> Iterator[pa.RecordBatch]:
    schema = schema_of(plan.output)
    lb = conform_batch(_materialize(left, ctx), schema)
    if lb.num_rows == 0:
        return
    rb = conform_batch(_materialize(right, ctx), schema)
    if lb.num_columns == 0:
        lcodes = np.zeros(lb.num_rows, dtype=np.int64)
        rcodes = np.zeros(rb.num_rows, dtype=np.int64)
    else:
        lcodes, rcodes = encode_sides(lb.columns, rb.columns, True)
    idx = kernel(lcodes, rcodes)
    size = max(1, ctx.batch_size)
    for s in range(0, len(idx), size):
        yield _normalized(take(lb, idx[s:s + size]))


__all__ = ["execute", "collect"]
