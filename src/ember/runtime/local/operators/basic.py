"""Leaf scans and narrow operators: each output partition is one pipelined iterator over the
matching child partition (Project, Filter, Expand), or the children's partitions side by side
(Union).  Expressions are bound and constant-folded once per partition
(``ember.execution.prepare``) and evaluated per batch."""

from __future__ import annotations

import math
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

import numpy as np
import pyarrow as pa

from ember.execution.kernels import setops
from ember.execution.kernels.batches import (
    concat,
    conform_batch,
    eval_projection,
    make_batch,
    one_row_no_columns,
    schema_of,
    slices,
    take,
)
from ember.execution.kernels.keys import encode_sides, normalize_float_columns
from ember.execution.prepare import prepare
from ember.expressions.common import to_array
from ember.physical.nodes import (
    CoalesceExec,
    SampleExec,
    ExpandExec,
    FileSourceScanExec,
    FilterExec,
    LocalTableScanExec,
    OneRowRelationExec,
    ProjectExec,
    RangeExec,
    SetOperationExec,
    SparkDataFrameScanExec,
    UnionExec,
)
from ember.physical.partitioning import SinglePartition
from ember.runtime.local.registry import PartitionFn, operator
from ember.errors import ExecutionError
from ember.conf import FILES_MAX_PARTITION_BYTES, FILES_MIN_PARTITION_NUM, FILES_OPEN_COST
from ember.execution import file_index, scan
from ember.physical.dynamic_pruning import DynamicPruningExpression
from ember.expressions.base import and_all, split_conjuncts
from ember.expressions.nondeterministic import initialize as initialize_nondeterministic
from ember.runtime.local import runtime_filters
from ember.runtime.local.pruning import placeholder, output_mask

if TYPE_CHECKING:
    from ember.runtime.local.context import RunContext

#: rows per partition of a LocalTableScan (below it, one partition)
LOCAL_SCAN_ROWS_PER_PARTITION = 1024


def chain(parts: list[PartitionFn]) -> Iterator[pa.RecordBatch]:
    """Every partition's batches, partition after partition."""
    for p in parts:
        yield from p()


# ---------------------------------------------------------------------------------------------
# Leaves


def local_scan_bounds(rows: int, parallelism: int) -> list[int]:
    """Row bounds of a LocalTableScan's partitions: contiguous ranges of about
    ``LOCAL_SCAN_ROWS_PER_PARTITION`` rows, at most ``parallelism`` of them (both runtimes)."""
    nparts = max(1, min(parallelism, math.ceil(rows / LOCAL_SCAN_ROWS_PER_PARTITION)))
    return [(i * rows) // nparts for i in range(nparts + 1)]


@operator(LocalTableScanExec)
def run_local_table_scan(node: LocalTableScanExec, rt: RunContext) -> list[PartitionFn]:
    """The in-memory rows in up to ``parallelism`` partitions of contiguous rows (one partition
    for small data), zero-copy slices of at most ``batch_size`` rows."""
    schema = schema_of(node.output)
    data = node.data
    n = 0 if data is None else data.num_rows
    if n == 0:
        return [lambda: iter(())]
    bounds = local_scan_bounds(n, 1 if isinstance(node.output_partitioning, SinglePartition)
                               else rt.parallelism)
    nparts = len(bounds) - 1
    size = max(1, rt.ctx.batch_size)

    def part(start: int, end: int) -> PartitionFn:
        def run() -> Iterator[pa.RecordBatch]:
            if not len(schema):
                for s in range(start, end, size):
                    yield make_batch([], schema, min(size, end - s))
                return
            for b in data.slice(start, end - start).to_batches(max_chunksize=size):
                if b.num_rows:
                    yield conform_batch(b, schema)

        return run

    return [part(bounds[i], bounds[i + 1]) for i in range(nparts)]


@operator(FileSourceScanExec)
def run_file_scan(node: FileSourceScanExec, rt: RunContext) -> list[PartitionFn]:
    """Parquet: splits of row groups (``ember.execution.scan.plan_parquet_splits``), reading only
    ``node.output``'s columns and skipping row groups (and rows) that ``node.data_filters``
    exclude; about two splits per core.  JSON and CSV: Spark's file partitions (byte ranges of
    lines, ``spark.sql.files.maxPartitionBytes`` / ``openCostInBytes`` / ``minPartitionNum``;
    whole files with ``multiLine``).  Other formats (and Hive-partitioned Parquet): one
    partition per file, read whole by ``scan_file_relation``, then the output columns (by
    attribute id) selected.  A split holding columns other scans of the run also read goes
    through the run's ``ScanCache`` (``rt.scan_cache``, :mod:`ember.runtime.local.scan_cache`),
    which decodes each shared column chunk once."""

    rel = node.relation
    schema = schema_of(node.output)
    if node.partition_filters:
        static = [f for f in node.partition_filters
                  if not isinstance(f, DynamicPruningExpression)]
        among = [(f.child, file_index.pruning_values(f, rt.broadcast(f.build).table))
                 for f in node.partition_filters if isinstance(f, DynamicPruningExpression)]
        rel = rel.copy(paths=file_index.select_files(rel, static, rt.ctx.time_zone, among))
    if scan.parquet_scan_supported(rel):
        cache = rt.scan_cache
        planned = cache.planned(node) if cache is not None else None
        splits, filters = planned if planned is not None else scan.plan_parquet_splits(
            rel, node.output, node.data_filters, rt.parallelism,
            rt.ctx.conf.get(FILES_MAX_PARTITION_BYTES), rt.ctx.conf.get(FILES_OPEN_COST))
        attrs = node.output
        rt.scan_exact_filters[node] = filters[scan.EXACT_KEY]
        splits, runtime_masks = runtime_filters.prune_splits(rt, node, splits)

        masks = filters.get(scan.MASK_KEY) or {}

        def split_part(sp) -> PartitionFn:
            fetch = cache.fetcher(node, sp) if cache is not None else None
            return lambda: scan.read_parquet_split(sp, attrs, filters.get(sp.path),
                                                   rt.ctx.batch_size, fetch, masks.get(sp.path),
                                                   runtime_masks.get(sp.path))

        return [split_part(sp) for sp in splits] or [lambda: iter(())]

    ids = [a.id for a in rel.attrs]
    pos = [ids.index(a.id) for a in node.output]
    paths = rel.paths if len(rel.paths) > 1 else (rel.paths or ((),))

    def part(r) -> PartitionFn:
        def run() -> Iterator[pa.RecordBatch]:
            for b in scan.scan_file_relation(r, rt.ctx.batch_size, rt.ctx.time_zone):
                if pos != list(range(len(ids))):
                    b = make_batch([b.column(i) for i in pos], schema, b.num_rows)
                yield b

        return run

    if rel.format in ("json", "csv", "text") and rel.paths:
        conf = rt.ctx.conf
        splits = file_index.file_splits(
            rel.paths, not scan.multi_line(rel), conf.get(FILES_MAX_PARTITION_BYTES),
            conf.get(FILES_OPEN_COST), conf.get(FILES_MIN_PARTITION_NUM) or rt.parallelism)

        def split_part(group) -> PartitionFn:
            def run() -> Iterator[pa.RecordBatch]:
                for b in scan.scan_file_relation(rel, rt.ctx.batch_size, rt.ctx.time_zone,
                                                 group):
                    if pos != list(range(len(ids))):
                        b = make_batch([b.column(i) for i in pos], schema, b.num_rows)
                    yield b

            return run

        return [split_part(g) for g in splits]
    if len(rel.paths) <= 1:
        return [part(rel)]
    return [part(rel.copy(paths=(p,))) for p in paths]


@operator(RangeExec)
def run_range(node: RangeExec, rt: RunContext) -> list[PartitionFn]:
    """``num_slices`` partitions; slice ``i`` holds elements ``[i*n/k, (i+1)*n/k)`` (Spark's
    split of the ``n`` elements)."""
    start, end, step = node.start, node.end, node.step
    if step == 0:
        raise ExecutionError("The step of a range must not be 0", error_class="INVALID_PARAMETER_VALUE")
    n = max(0, -(-(end - start) // step)) if step > 0 else max(0, -(-(start - end) // -step))
    k = max(1, node.num_slices)
    schema = schema_of(node.output)
    size = max(1, rt.ctx.batch_size)

    def part(lo: int, hi: int) -> PartitionFn:
        def run() -> Iterator[pa.RecordBatch]:
            for s in range(lo, hi, size):
                e = min(hi, s + size)
                vals = start + step * np.arange(s, e, dtype=np.int64)
                yield make_batch([pa.array(vals, type=pa.int64())], schema, e - s)

        return run

    return [part((i * n) // k, ((i + 1) * n) // k) for i in range(k)]


@operator(SparkDataFrameScanExec)
def run_spark_frame_scan(node: SparkDataFrameScanExec, rt: RunContext) -> list[PartitionFn]:
    """A PySpark DataFrame's rows (its selected columns) collected to the driver as Arrow
    (``DataFrame.toArrow``) when the partition runs, cast to ``node.output``'s types, in
    batches of at most ``batch_size`` rows: one partition."""
    schema = schema_of(node.output)
    size = max(1, rt.ctx.batch_size)

    def run() -> Iterator[pa.RecordBatch]:
        table = node.selected_frame().toArrow()
        if not len(schema):
            n = table.num_rows
            for s in range(0, n, size):
                yield make_batch([], schema, min(size, n - s))
            return
        for b in table.to_batches(max_chunksize=size):
            if b.num_rows:
                yield conform_batch(b, schema)

    return [run]


@operator(OneRowRelationExec)
def run_one_row(node: OneRowRelationExec, rt: RunContext) -> list[PartitionFn]:
    return [lambda: iter((one_row_no_columns(),))]


# ---------------------------------------------------------------------------------------------
# Narrow operators


@operator(ProjectExec)
def run_project(node: ProjectExec, rt: RunContext) -> list[PartitionFn]:
    child = node.child
    schema = schema_of(node.output)

    def part(index: int, fn: PartitionFn) -> PartitionFn:
        def run() -> Iterator[pa.RecordBatch]:
            bound = [prepare(e, child.output) for e in node.project_list]
            # monotonically_increasing_id(), rand(seed) ...: per-partition state
            bound = initialize_nondeterministic(bound, rt.partition_base + index)
            for b in fn():
                yield eval_projection(bound, b, schema)

        return run

    return [part(i, p) for i, p in enumerate(rt.execute(child))]


def filter_batch(bound, b: pa.RecordBatch, keep: tuple[bool, ...] | None = None
                 ) -> pa.RecordBatch | None:
    """The rows of ``b`` where the bound condition is TRUE (None when there are none).
    ``keep``: per column, whether a parent reads it; the others are not filtered but replaced by
    placeholders (:mod:`ember.runtime.local.pruning`)."""
    res = bound.eval(b)
    if isinstance(res, pa.Scalar):
        return b if res.is_valid and res.as_py() else None
    if isinstance(res, pa.ChunkedArray):
        res = res.combine_chunks()
    if pa.types.is_null(res.type):
        return None
    kept = res.true_count
    if kept == b.num_rows:
        return b
    if not kept:
        return None
    if not b.num_columns:
        return make_batch([], b.schema, kept)
    if keep is None or len(keep) != b.num_columns:
        return b.filter(res)

    cols = [c.filter(res) if k else placeholder(c.type, kept) for c, k in zip(b.columns, keep)]
    return make_batch(cols, b.schema, kept)


@operator(FilterExec)
def run_filter(node: FilterExec, rt: RunContext) -> list[PartitionFn]:
    """Rows where the condition is TRUE.  Over a Parquet scan, the conjuncts the scan already
    applied exactly (``rt.scan_exact_filters``) are not evaluated again.  Columns no parent reads
    are not filtered (placeholders, :mod:`ember.runtime.local.pruning`)."""

    child = node.child
    parts = rt.execute(child)
    cond = node.condition
    done = rt.scan_exact_filters.get(child) if isinstance(child, FileSourceScanExec) else None
    if done:
        rest = [c for c in split_conjuncts(cond) if not any(c is d or c == d for d in done)]
        if not rest:
            return parts
        cond = and_all(rest)

    keep = output_mask(rt, node)

    def part(fn: PartitionFn) -> PartitionFn:
        def run() -> Iterator[pa.RecordBatch]:
            bound = prepare(cond, child.output)
            for b in fn():
                out = filter_batch(bound, b, keep)
                if out is not None:
                    yield out

        return run

    return [part(p) for p in parts]


@operator(ExpandExec)
def run_expand(node: ExpandExec, rt: RunContext) -> list[PartitionFn]:
    child = node.child
    schema = schema_of(node.output)

    def part(fn: PartitionFn) -> PartitionFn:
        def run() -> Iterator[pa.RecordBatch]:
            bound = [[prepare(e, child.output) for e in p] for p in node.projections]
            for b in fn():
                yield from expand_batch(bound, b, schema)

        return run

    return [part(p) for p in rt.execute(child)]


def expand_batch(bound: list[list[Any]], b: pa.RecordBatch, schema: pa.Schema
                 ) -> Iterator[pa.RecordBatch]:
    """The output rows of an ``ExpandExec`` (projections ``bound`` to its child) for the input
    batch ``b``, typed by ``schema``."""
    k = len(bound)
    if k == 1 or b.num_rows <= 1:
        for p in bound:
            yield eval_projection(p, b, schema)
        return
    # Spark's ExpandExec emits every projection of a row before the next row
    # (UNPIVOT's rows come out row by row): one take interleaves the projections.
    out = pa.Table.from_batches([eval_projection(p, b, schema) for p in bound], schema)
    n = b.num_rows
    order = np.arange(n * k, dtype=np.int64).reshape(k, n).T.ravel()
    yield out.take(pa.array(order)).combine_chunks().to_batches()[0]


@operator(UnionExec)
def run_union(node: UnionExec, rt: RunContext) -> list[PartitionFn]:
    """The children's partitions one after the other (Spark's UnionRDD)."""
    schema = schema_of(node.output)

    def part(fn: PartitionFn) -> PartitionFn:
        def run() -> Iterator[pa.RecordBatch]:
            for b in fn():
                yield conform_batch(b, schema)

        return run

    return [part(p) for c in node.inputs for p in rt.execute(c)]


@operator(SampleExec)
def run_sample(node: SampleExec, rt: RunContext) -> list[PartitionFn]:
    """Bernoulli (a uniform draw per row in ``[lower, upper)``) or Poisson (each row repeated
    ``Poisson(upper - lower)`` times) sampling, vectorized per batch; partition ``i``'s
    generator (NumPy's PCG64) is seeded with ``seed + i`` (on the Spark runtime ``i`` is the
    task's partition), so a seed gives the same rows for the same partitioning.  Spark draws
    from its XORShiftRandom, so its rows for a seed differ."""
    lower, upper = node.lower_bound, node.upper_bound

    def part(fn: PartitionFn, index: int) -> PartitionFn:
        def run() -> Iterator[pa.RecordBatch]:
            rng = np.random.default_rng((node.seed + index) & 0xFFFFFFFFFFFFFFFF)
            for b in fn():
                n = b.num_rows
                if node.with_replacement:
                    counts = rng.poisson(upper - lower, n)
                    if counts.any():
                        yield b.take(pa.array(np.repeat(np.arange(n), counts)))
                else:
                    u = rng.random(n)
                    keep = (u >= lower) & (u < upper)
                    if keep.any():
                        yield b.filter(pa.array(keep))

        return run

    offset = rt.partition_offset
    return [part(p, offset + i) for i, p in enumerate(rt.execute(node.child))]


@operator(CoalesceExec)
def run_coalesce(node: CoalesceExec, rt: RunContext) -> list[PartitionFn]:
    """The child's partitions merged into at most ``num_partitions``, adjacent ones together
    (Spark's ``CoalescedRDD`` without locality preferences)."""
    parts = rt.execute(node.child)
    n = max(1, min(node.num_partitions, len(parts)))
    bounds = [(i * len(parts)) // n for i in range(n + 1)]

    def group(members: list[PartitionFn]) -> PartitionFn:
        def run() -> Iterator[pa.RecordBatch]:
            for fn in members:
                yield from fn()

        return run

    return [group(parts[bounds[i]:bounds[i + 1]]) for i in range(n)]


# ---------------------------------------------------------------------------------------------
# INTERSECT / EXCEPT [ALL]


_KERNELS = {
    ("intersect", True): setops.intersect_all,
    ("intersect", False): setops.intersect_distinct,
    ("except", True): setops.except_all,
    ("except", False): setops.except_distinct,
}


@operator(SetOperationExec)
def run_set_operation(node: SetOperationExec, rt: RunContext) -> list[PartitionFn]:
    """Both sides materialized (one partition each, AllTuples), rows matched null-safely by the
    row codes of ``execution.kernels.keys`` and selected by ``execution.kernels.setops``."""
    kernel = _KERNELS[(node.kind, node.is_all)]
    schema = schema_of(node.output)
    left_parts = rt.execute(node.left)
    right_parts = rt.execute(node.right)

    def run() -> Iterator[pa.RecordBatch]:
        lb = concat(chain(left_parts), schema)
        if lb.num_rows == 0:
            return
        rb = concat(chain(right_parts), schema)
        if lb.num_columns == 0:
            lcodes = np.zeros(lb.num_rows, dtype=np.int64)
            rcodes = np.zeros(rb.num_rows, dtype=np.int64)
        else:
            lcodes, rcodes = encode_sides(lb.columns, rb.columns, True)
        idx = kernel(lcodes, rcodes)
        for s in slices(take(lb, idx), rt.ctx.batch_size):
            yield normalize_float_columns(s)

    return [run]


__all__ = ["chain", "filter_batch", "to_array"]
