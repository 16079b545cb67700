"""Evaluating Projects and Filters over an in-memory relation at optimize time: what Spark's
ConvertToLocalRelation does with interpreted projections (``InterpretedMutableProjection``,
``Predicate.create``) over a ``LocalRelation``'s rows, vectorized over its Arrow batches here.

:func:`evaluate_local` runs a plan made of ``Project``, ``Filter``, ``SubqueryAlias``, ``View`` and
``ResolvedHint`` nodes over one ``LocalRelation`` and returns its rows as a ``pyarrow.Table``
typed like ``plan.output``.  The optimizer uses it in ConvertToLocalRelation and, to measure the
selectivity of a filtered table on a sample, in CostBasedJoinReorder.  Queries run on the
runtimes, never through here.  Expression errors (``1/0`` under ANSI) propagate to the caller.
"""

from __future__ import annotations

from collections.abc import Iterator

import pyarrow as pa

from ember.errors import InternalError
from ember.expressions.base import bind_references
from ember.expressions.common import to_array
from ember.plans.logical.nodes import (
    Filter,
    LocalRelation,
    LogicalPlan,
    Project,
    ResolvedHint,
    SubqueryAlias,
    View,
)

__all__ = ["evaluate_local"]


def evaluate_local(plan: LogicalPlan, batch_size: int) -> pa.Table:
    """All rows of ``plan`` (see the module docstring), computed ``batch_size`` rows at a time;
    raises ``InternalError`` for any other node.

    >>> # evaluate_local(Filter(a > 1, LocalRelation([a], table)), 4096) -> the rows with a > 1
    """
    schema = _schema(plan)
    batches = [b for b in (_conform(b, schema) for b in _run(plan, max(1, batch_size)))
               if b.num_rows]
    if not len(schema):
        n = sum(b.num_rows for b in batches)
        return pa.Table.from_batches([], schema=schema) if n == 0 else pa.Table.from_batches(
            batches)
    return pa.Table.from_batches(batches, schema=schema)


def _schema(plan: LogicalPlan) -> pa.Schema:
    return pa.schema([pa.field(a.name, a.data_type.to_arrow()) for a in plan.output])


def _run(plan: LogicalPlan, size: int) -> Iterator[pa.RecordBatch]:
    match plan:
        case SubqueryAlias(child=c) | View(child=c) | ResolvedHint(child=c):
            return _run(c, size)
        case LocalRelation():
            return _relation(plan, size)
        case Project(project_list=exprs, child=c):
            return _project(plan, exprs, c, size)
        case Filter(condition=cond, child=c):
            return _filter(cond, c, size)
    raise InternalError(f"Cannot evaluate {plan.node_name} locally: {plan.simple_string()}")


def _relation(plan: LocalRelation, size: int) -> Iterator[pa.RecordBatch]:
    data = plan.data
    if data is None or data.num_rows == 0:
        return
    schema = _schema(plan)
    if data.num_columns != len(schema):
        raise InternalError(
            f"LocalRelation has {data.num_columns} data columns for {len(schema)} attributes")
    if not len(schema):
        n = data.num_rows
        for s in range(0, n, size):
            yield _no_columns(min(size, n - s))
        return
    for b in data.to_batches(max_chunksize=size):
        if b.num_rows:
            yield _conform(b, schema)


def _project(plan: Project, exprs, child: LogicalPlan, size: int) -> Iterator[pa.RecordBatch]:
    schema = _schema(plan)
    bound = [bind_references(e, child.output) for e in exprs]
    for b in _run(child, size):
        n = b.num_rows
        cols = [_array(e.eval(b), n, f.type) for e, f in zip(bound, schema)]
        yield pa.RecordBatch.from_arrays(cols, schema=schema) if cols else _no_columns(n)


def _filter(cond, child: LogicalPlan, size: int) -> Iterator[pa.RecordBatch]:
    bound = bind_references(cond, child.output)
    for b in _run(child, size):
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
            yield b.filter(res) if b.num_columns else _no_columns(kept)


def _array(out: pa.Array | pa.ChunkedArray | pa.Scalar, n: int, target: pa.DataType) -> pa.Array:
    """An expression's result as a plain Array of ``n`` rows of exactly ``target`` type."""
    out = to_array(out, n)
    return out if out.type == target else out.cast(target)


def _conform(batch: pa.RecordBatch, schema: pa.Schema) -> pa.RecordBatch:
    if batch.schema.equals(schema) or not len(schema):
        return batch
    cols = [_array(batch.column(i), batch.num_rows, f.type) for i, f in enumerate(schema)]
    return pa.RecordBatch.from_arrays(cols, schema=schema)


def _no_columns(n: int) -> pa.RecordBatch:
    """A batch with no columns and ``n`` rows."""
    return pa.RecordBatch.from_struct_array(pa.repeat(pa.scalar({}, type=pa.struct([])), n))
