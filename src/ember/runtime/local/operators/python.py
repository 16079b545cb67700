"""Local operators of the Python nodes (:mod:`ember.physical.python`).

- ``BatchEvalPython`` / ``ArrowEvalPython``: per batch, each UDF's argument columns are evaluated
  and handed to :meth:`PythonUDF.eval_batches` (column-wise conversion to Python values or
  pandas Series, see :mod:`ember.expressions.python_udf`); the results are appended as columns.
  An iterator UDF sees all the partition's batches through one iterator.
- ``MapInPandas`` / ``MapInArrow``: the function gets an iterator over the partition's batches
  (pandas DataFrames / Arrow RecordBatches with the child's column names) and yields batches of
  the output schema, matched by column name (by position when the names do not match).
- ``FlatMapGroupsInPandas`` / ``FlatMapGroupsInArrow``: the input is clustered and sorted by the
  keys; the function is called once per group (by definition of ``applyInPandas``), with the
  group's key tuple first when it takes two parameters.

The same operators run inside Spark's Python workers on the Spark runtime.
"""

from __future__ import annotations

import inspect
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

import numpy as np
import pyarrow as pa

from ember.errors import PythonException
from ember.execution.kernels.batches import concat, make_batch, schema_of
from ember.execution.prepare import prepare
from ember.expressions.common import to_array
from ember.expressions.python_udf import PythonEvalType, python_exception, series_to_arrow
from ember.physical.python import (
    ArrowEvalPythonExec,
    BatchEvalPythonExec,
    FlatMapCoGroupsInPandasExec,
    FlatMapGroupsInPandasExec,
    MapInPandasExec,
)
from ember.runtime.local.registry import PartitionFn, operator

if TYPE_CHECKING:
    from ember.runtime.local.context import RunContext


@operator(BatchEvalPythonExec)
@operator(ArrowEvalPythonExec)
def run_eval_python(node: BatchEvalPythonExec | ArrowEvalPythonExec, rt: RunContext
                    ) -> list[PartitionFn]:
    child = node.child
    schema = schema_of(node.output)
    iterator = any(u.eval_type == PythonEvalType.SQL_SCALAR_PANDAS_ITER_UDF for u in node.udfs)

    def part(fn: PartitionFn) -> PartitionFn:
        def run() -> Iterator[pa.RecordBatch]:
            bound = [[prepare(a, child.output) for a in u.arguments] for u in node.udfs]

            def args(b: pa.RecordBatch, k: int) -> list[pa.Array]:
                return [to_array(a.eval(b), b.num_rows) for a in bound[k]]

            if not iterator:
                for b in fn():
                    cols = [next(u.eval_batches(iter([args(b, k)])))
                            for k, u in enumerate(node.udfs)]
                    yield make_batch(list(b.columns) + cols, schema, b.num_rows)
                return
            batches = [b for b in fn() if b.num_rows]
            results = [list(u.eval_batches(args(b, k) for b in batches))
                       for k, u in enumerate(node.udfs)]
            for i, b in enumerate(batches):
                yield make_batch(list(b.columns) + [r[i] for r in results], schema, b.num_rows)

        return run

    return [part(p) for p in rt.execute(child)]


def _named(b: pa.RecordBatch, names: list[str]) -> pa.RecordBatch:
    return pa.RecordBatch.from_arrays(list(b.columns), names=names)


def _output_batch(out: Any, schema: pa.Schema, is_arrow: bool) -> pa.RecordBatch:
    """One batch the user's function yielded, as a batch of ``schema``: columns by name when the
    names match the schema's, else by position (PySpark's rule)."""
    names = schema.names
    if is_arrow:
        if not isinstance(out, (pa.RecordBatch, pa.Table)):
            raise PythonException(
                f"[UDF_RETURN_TYPE] Return type of the user-defined function should be "
                f"iterator of pyarrow.RecordBatch, but is iterator of {type(out).__name__}.",
                error_class="PYTHON_EXCEPTION")
        have = list(out.schema.names)
        cols = [out.column(have.index(n)) if n in have else out.column(i)
                for i, n in enumerate(names)] if set(names) <= set(have) else list(out.columns)
        arrays = []
        for c, f in zip(cols, schema):
            c = c.combine_chunks() if isinstance(c, pa.ChunkedArray) else c
            arrays.append(c if c.type == f.type else c.cast(f.type))
        return make_batch(arrays, schema, out.num_rows)
    import pandas as pd  # imported here: pandas loads only when a pandas function runs

    if not isinstance(out, pd.DataFrame):
        raise PythonException(
            f"[UDF_RETURN_TYPE] Return type of the user-defined function should be "
            f"pandas.DataFrame, but is {type(out).__name__}.", error_class="PYTHON_EXCEPTION")
    have = [str(c) for c in out.columns]
    by_name = set(names) <= set(have)
    if not by_name and len(have) != len(names):
        raise PythonException(
            f"[RESULT_COLUMNS_MISMATCH_FOR_PANDAS_UDF] Number of columns of the returned "
            f"pandas.DataFrame doesn't match specified schema. Expected: {len(names)} Actual: "
            f"{len(have)}", error_class="PYTHON_EXCEPTION")
    arrays = []
    for i, f in enumerate(schema):
        s = out[f.name] if by_name else out.iloc[:, i]
        arrays.append(series_to_arrow(s.reset_index(drop=True), f.type, len(out), f.name))
    return make_batch(arrays, schema, len(out))


def _call(func: Any, *args: Any) -> Any:
    try:
        return func(*args)
    except PythonException:
        raise
    except Exception as e:  # noqa: BLE001 - the user's error, with its traceback
        raise python_exception(e, func) from None


def _results(func: Any, it: Iterator[Any]) -> Iterator[Any]:
    """The items of the user's generator, its errors as ``PythonException``."""
    while True:
        try:
            yield next(it)
        except StopIteration:
            return
        except PythonException:
            raise
        except Exception as e:  # noqa: BLE001 - the user's error, with its traceback
            raise python_exception(e, func) from None


@operator(MapInPandasExec)
def run_map_in_pandas(node: MapInPandasExec, rt: RunContext) -> list[PartitionFn]:
    names = [a.name for a in node.child.output]
    schema = schema_of(node.output)
    func = node.func.func

    def part(fn: PartitionFn) -> PartitionFn:
        def run() -> Iterator[pa.RecordBatch]:
            if node.is_arrow:
                inputs = (_named(b, names) for b in fn())
            else:
                inputs = (_named(b, names).to_pandas() for b in fn())
            for out in _results(func, iter(_call(func, inputs))):
                batch = _output_batch(out, schema, node.is_arrow)
                if batch.num_rows:
                    yield batch

        return run

    return [part(p) for p in rt.execute(node.child)]


@operator(FlatMapGroupsInPandasExec)
def run_flat_map_groups(node: FlatMapGroupsInPandasExec, rt: RunContext) -> list[PartitionFn]:
    child = node.child
    names = [a.name for a in child.output]
    in_schema = schema_of(child.output)
    schema = schema_of(node.output)
    func = node.func.func
    with_key = _arity(func) == 2

    def part(fn: PartitionFn) -> PartitionFn:
        def run() -> Iterator[pa.RecordBatch]:
            data = concat(fn(), in_schema)
            if not data.num_rows:
                return
            data = _named(data, names)
            keys = [to_array(prepare(g, child.output).eval(data), data.num_rows)
                    for g in node.grouping]
            for rows in _groups(keys, data.num_rows):
                group = data.take(pa.array(rows))
                key = tuple(k[int(rows[0])].as_py() for k in keys)
                arg = pa.Table.from_batches([group]) if node.is_arrow else group.to_pandas()
                out = _call(func, key, arg) if with_key else _call(func, arg)
                batch = _output_batch(out, schema, node.is_arrow)
                if batch.num_rows:
                    yield batch

        return run

    return [part(p) for p in rt.execute(child)]


@operator(FlatMapCoGroupsInPandasExec)
def run_flat_map_cogroups(node: FlatMapCoGroupsInPandasExec, rt: RunContext
                          ) -> list[PartitionFn]:
    """Per partition (both sides co-partitioned by their keys): the keys of both sides, in order
    of first appearance (left first); for each, the two sides' rows (either may be empty)."""
    sides = (node.left, node.right)
    names = [[a.name for a in s.output] for s in sides]
    schemas = [schema_of(s.output) for s in sides]
    groupings = (node.left_grouping, node.right_grouping)
    schema = schema_of(node.output)
    func = node.func.func
    with_key = _arity(func) == 3

    def part(fns: tuple[PartitionFn, PartitionFn]) -> PartitionFn:
        def run() -> Iterator[pa.RecordBatch]:
            data = [_named(concat(fn(), sc), nm) for fn, sc, nm in zip(fns, schemas, names)]
            if not any(d.num_rows for d in data):
                return
            keys = [[to_array(prepare(g, s.output).eval(d), d.num_rows) for g in gs]
                    for s, d, gs in zip(sides, data, groupings)]
            n_left = data[0].num_rows
            both = [pa.concat_arrays([l.cast(r.type) if l.type != r.type else l, r])
                    for l, r in zip(keys[0], keys[1])]
            for rows in _groups(both, n_left + data[1].num_rows):
                parts = [data[0].take(pa.array(rows[rows < n_left])),
                         data[1].take(pa.array(rows[rows >= n_left] - n_left))]
                key = tuple(k[int(rows[0])].as_py() for k in both)
                args = [p.to_pandas() for p in parts]
                out = _call(func, key, *args) if with_key else _call(func, *args)
                batch = _output_batch(out, schema, False)
                if batch.num_rows:
                    yield batch

        return run

    left, right = rt.execute(node.left), rt.execute(node.right)
    return [part(fns) for fns in zip(left, right)]


def _groups(keys: list[pa.Array], n: int) -> list[np.ndarray]:
    """Row indices of each group of equal keys (NULLs equal), in order of first appearance."""
    if not keys:
        return [np.arange(n)]
    table = pa.table({f"k{i}": k for i, k in enumerate(keys)})
    idx = pa.array(np.arange(n))
    grouped = table.append_column("__row", idx).group_by(
        [f"k{i}" for i in range(len(keys))], use_threads=False).aggregate([("__row", "list")])
    lists = grouped.column("__row_list").combine_chunks()
    if len(lists) == 0:
        return []
    offsets = lists.offsets.to_numpy()
    rows = lists.flatten().to_numpy()
    groups = np.split(rows, offsets[1:-1] - offsets[0])
    first = rows[offsets[:-1] - offsets[0]]  # a group's first row: its order of appearance
    return [groups[i] for i in np.argsort(first, kind="stable")]


def _arity(func: Any) -> int:
    try:
        return len(inspect.signature(func).parameters)
    except (TypeError, ValueError):
        return 1
