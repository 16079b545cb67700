"""Record batch helpers shared by the operators: schemas, concatenation, slicing, casting."""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence

import numpy as np
import pyarrow as pa

from ember.errors import InternalError


def schema_of(attrs: Sequence) -> pa.Schema:
    """The Arrow schema of a plan's output attributes (every field nullable: Arrow's nullability
    flag is metadata only, and keeping it uniform lets batches of any operator be concatenated)."""
    return pa.schema([pa.field(a.name, a.data_type.to_arrow()) for a in attrs])


def empty_batch(schema: pa.Schema) -> pa.RecordBatch:
    return pa.RecordBatch.from_arrays([pa.array([], type=f.type) for f in schema], schema=schema)


def one_row_no_columns() -> pa.RecordBatch:
    """A batch with one row and no columns (OneRowRelation)."""
    return pa.RecordBatch.from_struct_array(pa.array([{}], type=pa.struct([])))


def make_batch(columns: Sequence[pa.Array], schema: pa.Schema, num_rows: int) -> pa.RecordBatch:
    """A batch of ``columns`` under ``schema``; handles zero columns (keeps ``num_rows``)."""
    if not len(schema):
        return _zero_col(num_rows)
    return pa.RecordBatch.from_arrays(list(columns), schema=schema)


def _zero_col(num_rows: int) -> pa.RecordBatch:
    """A batch with no columns and ``num_rows`` rows."""
    return pa.RecordBatch.from_struct_array(
        pa.repeat(pa.scalar({}, type=pa.struct([])), num_rows)
    )


def plain_array(arr: pa.Array | pa.ChunkedArray) -> pa.Array:
    """``arr`` as one contiguous array with dictionary encoding decoded (what the key kernels --
    hashing, key codes, sort words -- read)."""
    if isinstance(arr, pa.ChunkedArray):
        arr = arr.combine_chunks()
    if pa.types.is_dictionary(arr.type):
        arr = arr.cast(arr.type.value_type)
    return arr


def conform(array: pa.Array | pa.ChunkedArray, target: pa.DataType) -> pa.Array:
    """``array`` as a plain Array of exactly ``target`` type."""
    if isinstance(array, pa.ChunkedArray):
        array = array.combine_chunks() if array.num_chunks != 1 else array.chunk(0)
    if array.type != target:
        try:
            array = array.cast(target)
        except (pa.ArrowInvalid, pa.ArrowNotImplementedError) as e:
            raise InternalError(f"Executor: cannot represent {array.type} as {target}: {e}") from e
    return array


def eval_projection(bound: Sequence, batch: pa.RecordBatch, schema: pa.Schema) -> pa.RecordBatch:
    """The batch of ``bound`` expressions (bound to ``batch``'s columns) evaluated over
    ``batch``, typed by ``schema``: a scalar result repeated to the batch's rows."""
    n = batch.num_rows
    cols = []
    for e, f in zip(bound, schema):
        out = e.eval(batch)
        cols.append(conform(pa.repeat(out, n) if isinstance(out, pa.Scalar) else out, f.type))
    return make_batch(cols, schema, n)


def conform_batch(batch: pa.RecordBatch, schema: pa.Schema) -> pa.RecordBatch:
    """``batch`` relabelled/cast to ``schema`` (same number of columns, positional)."""
    if batch.schema.equals(schema):
        return batch
    if batch.num_columns != len(schema):
        raise InternalError(
            f"Executor: batch has {batch.num_columns} columns, expected {len(schema)}"
        )
    cols = [conform(batch.column(i), f.type) for i, f in enumerate(schema)]
    return make_batch(cols, schema, batch.num_rows)


def concat(batches: Iterable[pa.RecordBatch], schema: pa.Schema) -> pa.RecordBatch:
    """All ``batches`` as one batch (an empty batch of ``schema`` when there are none)."""
    items = [conform_batch(b, schema) for b in batches]
    items = [b for b in items if b.num_rows] or items[:1]
    if not items:
        return empty_batch(schema)
    if len(items) == 1:
        return items[0]
    if not len(schema):
        return _zero_col(sum(b.num_rows for b in items))
    return pa.concat_batches(items)


def take(batch: pa.RecordBatch, indices: np.ndarray | pa.Array) -> pa.RecordBatch:
    """Rows ``indices`` of ``batch`` (works for zero-column batches too)."""
    if batch.num_columns == 0:
        return _zero_col(len(indices))
    return batch.take(pa.array(indices) if isinstance(indices, np.ndarray) else indices)


def slices(batch: pa.RecordBatch, size: int) -> Iterator[pa.RecordBatch]:
    """``batch`` cut into pieces of at most ``size`` rows (nothing for an empty batch)."""
    n = batch.num_rows
    size = max(1, size)
    for start in range(0, n, size):
        yield batch.slice(start, min(size, n - start))
