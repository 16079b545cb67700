"""The hash aggregate operator: ``Aggregate(grouping, aggregate_expressions, child)`` over batches.

Layout of one run (all state lives in the generator, none on the plan):

1. **Input.**  For every input batch, evaluate (bound to ``plan.child.output``) the grouping
   expressions and every *input slot*: the arguments and FILTER predicate of each distinct
   :class:`~ember.expressions.aggregates.AggregateExpression`.  Arguments of an aggregate with a
   FILTER are evaluated only on the rows that pass it when they may raise (ANSI), as Spark
   evaluates update expressions only for those rows.  Slot columns are concatenated across
   batches, so results do not depend on the batch size.
2. **Groups.**  Grouping columns are canonicalised (every NaN equal, ``-0.0 == 0.0``; NULL is one
   group) and jointly encoded into int64 group ids, numbered in order of first appearance.
   Integer-like keys (integers, dates, timestamps) skip hashing: ``value - min`` indexes a
   direct-address table when the value range is at most 64x the rows (capped), else a stable
   sort numbers them when they arrive in few ascending runs (e.g. from an exchange of sorted
   input), else they are hashed; in multi-column keys they are first replaced by such dense ids.
   Several key columns: the integer column with the most groups is the base, every other column
   constant within the base's groups (e.g. a customer's name next to its key: every row equal to
   its group's first row, checked on a sample first) is left out, and the rest are encoded jointly
   with the base's ids (``MULTI_KEY_REFINE``; same groups, ids and first rows).  With no
   grouping expressions there is exactly one group, even over empty input (``count`` 0, ``sum``
   NULL); grouped aggregation of empty input yields no rows.
3. **Aggregates.**  Each aggregate becomes a row selection (FILTER is TRUE; for DISTINCT, the
   first row of each distinct ``(group, arguments)`` tuple, float arguments canonicalised) and a
   grouped, vectorized kernel over (group id, argument columns): ``np.bincount``/``np.add.at``
   sums, ``np.minimum.at``/``np.maximum.at`` min/max over integers, dates, timestamps and
   decimals of precision <= 18, pyarrow hash min/max otherwise (numpy for floats: NaN is largest, the first of equal values wins,
   so ``-0.0``/``0.0`` come out as Spark's; dense ranks for structs), first/last by position.  Any number of different DISTINCT argument
   sets, and DISTINCT with FILTER, are handled directly; the RewriteDistinctAggregates rule is not
   needed for correctness here.
4. **Results.**  Each output expression is rewritten over a "group batch" ``[keys..., aggs...]``:
   every aggregate call becomes a reference to its result column and every subtree equal to a
   grouping expression (e.g. ``a + 1`` in ``SELECT a + 1 ... GROUP BY a + 1``) a reference to its
   key column; the rewritten expressions are then evaluated like a projection.

Exactness:

- ``sum`` of integral types checks every running prefix in input order (Spark adds row by row with
  ANSI overflow checks, so ``MAX, 1, -1`` overflows); decimals are summed exactly (int64 when the
  bound ``max|v| * rows`` allows it, else 32-bit limbs) and checked once against the result
  precision (Spark checks decimal sums only at the end).
- ``avg`` of decimals divides the exact sum by the count, rounding HALF_UP to the result scale.
- Float sums and averages accumulate sequentially in input order (``np.bincount``), as Spark does in
  one partition.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
import weakref
from dataclasses import dataclass

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from ember import types as T
from ember.errors import ArithmeticError_, InternalError, UnsupportedError
from ember.execution.context import ExecContext
from ember.execution.kernels.batches import _zero_col
from ember.execution.prepare import prepare
from ember.expressions.aggregates import (
    AggregateExpression,
    AggregateFunction,
    AnyValue,
    Average,
    BoolAnd,
    BoolOr,
    Count,
    CountIf,
    First,
    Last,
    Max,
    MaxBy,
    Min,
    MinBy,
    Sum,
    average_sum_type,
)
from ember.expressions.base import (
    Alias,
    AttributeReference,
    BoundReference,
    Expression,
    Literal,
)
from ember.plans.logical.nodes import Aggregate

__all__ = [
    "execute_aggregate", "collect_aggregates", "group_ids", "InputSlots", "read_inputs",
    "assign_groups", "group_batch", "emit_batches", "strip_alias",
]


# ---------------------------------------------------------------------------------------------
# Entry point


def execute_aggregate(
    plan: Aggregate, batches: Iterator[pa.RecordBatch], ctx: ExecContext | None = None,
    child_attrs: Sequence[AttributeReference] | None = None,
) -> Iterator[pa.RecordBatch]:
    """Run ``plan`` (an Aggregate) over its child's ``batches``.

    ``child_attrs``: the attributes of the batches' columns when the executor pruned the child's
    output (default ``plan.child.output``); batches may be of any size.

    Output batches have one column per ``plan.output`` attribute, Arrow type
    ``attr.data_type.to_arrow()``, at most ``ctx.batch_size`` rows.

    >>> # Aggregate([a#1], [a#1, count(1) AS c#2], child) over rows a = 1, 1, NULL
    >>> # -> a: [1, NULL], c: [2, 1]
    """
    ctx = ctx or ExecContext()
    return _run(plan, batches, ctx, plan.child.output if child_attrs is None else child_attrs)


def _run(
    plan: Aggregate, batches: Iterator[pa.RecordBatch], ctx: ExecContext,
    child_attrs: Sequence[AttributeReference],
) -> Iterator[pa.RecordBatch]:
    grouping = tuple(strip_alias(g) for g in plan.grouping_expressions)
    bound_grouping = tuple(prepare(g, child_attrs) for g in grouping)
    aggs = collect_aggregates(plan.aggregate_expressions)
    specs = [_AggSpec.build(a, child_attrs) for a in aggs]

    # -- 1. input --------------------------------------------------------------------------
    slots = InputSlots()
    for s in specs:
        s.filter_slot = None if s.filter is None else slots.add(s.filter, None)
        if (isinstance(s.func, Count) and not s.expr.is_distinct
                and all(isinstance(a, Literal) and a.value is not None for a in s.args)):
            continue  # count(1), count(*): counts rows, reads no argument values
        s.arg_slots = tuple(
            slots.add(a, s.filter if _may_fail(a) else None) for a in s.args
        )
    key_cols, slot_cols, n_rows = read_inputs(batches, bound_grouping, slots.items)

    # -- 2. groups -------------------------------------------------------------------------
    gids, n_groups, group_keys = assign_groups(key_cols, n_rows)

    # -- 3. aggregates ---------------------------------------------------------------------
    results: list[pa.Array] = []
    from ember.expressions.common import to_mask

    for s in specs:
        args = [slot_cols[i] for i in s.arg_slots]
        mask = None
        if s.filter_slot is not None:
            mask = to_mask(slot_cols[s.filter_slot])
        results.append(_compute(s, args, mask, gids, n_groups))

    # -- 4. result expressions -------------------------------------------------------------
    yield from _project_results(plan, grouping, aggs, group_keys, results, n_groups, ctx)


# ---------------------------------------------------------------------------------------------
# Input and grouping (shared with the partial / final modes in
# ember.runtime.local.operators.aggregate_modes)


class InputSlots:
    """The distinct input columns of one aggregation: ``(expression, filter)`` pairs bound to
    the child, numbered in order of first use.  ``filter`` is None, or the FILTER predicate on
    whose passing rows alone ``expression`` is evaluated (it may raise on the others)."""

    __slots__ = ("_index", "items")

    def __init__(self) -> None:
        self._index: dict[tuple[Expression, Expression | None], int] = {}
        self.items: list[tuple[Expression, Expression | None]] = []

    def add(self, expr: Expression, filt: Expression | None) -> int:
        """The slot number of ``(expr, filt)``, allocating one on first use."""
        key = (expr, filt)
        i = self._index.get(key)
        if i is None:
            i = self._index[key] = len(self.items)
            self.items.append(key)
        return i


def read_inputs(
    batches: Iterator[pa.RecordBatch], bound_grouping: Sequence[Expression],
    slot_list: Sequence[tuple[Expression, Expression | None]],
) -> tuple[list[pa.Array], list[pa.Array], int]:
    """Evaluate the grouping expressions and every input slot over all ``batches``:
    ``(key columns, slot columns, row count)``, each column one array over all rows (so results
    do not depend on the batch size).  Literal slots are built once at the end."""
    from ember.expressions.common import eval_where, to_array, to_mask

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
                continue  # a constant: built once below
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
    return key_cols, slot_cols, n_rows


def assign_groups(
    key_cols: list[pa.Array], n_rows: int,
) -> tuple[np.ndarray, int, list[pa.Array]]:
    """``(group id per row, group count, each group's key values)`` for the grouping columns
    ``key_cols`` (canonicalised here); no grouping columns is exactly one group."""
    if not key_cols:
        return np.zeros(n_rows, dtype=np.int64), 1, []
    key_cols = [_canonical_key(c) for c in key_cols]
    gids, first_rows = group_ids(key_cols, n_rows)
    first = pa.array(first_rows, type=pa.int64())
    return gids, len(first_rows), [c.take(first) for c in key_cols]


def group_batch(cols: list[pa.Array], n_groups: int) -> pa.RecordBatch:
    """The columns ``[keys..., aggregate results...]`` as a batch that result expressions bound
    by position are evaluated over (a zero-column batch of ``n_groups`` rows when empty)."""
    if not cols:
        return _zero_col(n_groups)
    return pa.RecordBatch.from_arrays(cols, names=[f"_{i}" for i in range(len(cols))])


def emit_batches(out_cols: list[pa.Array], attrs: Sequence[AttributeReference], n_groups: int,
                 ctx: ExecContext) -> Iterator[pa.RecordBatch]:
    """``out_cols`` (one per attribute of ``attrs``, ``n_groups`` rows) in batches of at most
    ``ctx.batch_size`` rows."""
    from ember.execution.kernels.batches import make_batch, schema_of

    schema = schema_of(attrs)
    size = max(1, ctx.batch_size)
    for start in range(0, n_groups, size):
        length = min(size, n_groups - start)
        yield make_batch([c.slice(start, length) for c in out_cols], schema, length)


# ---------------------------------------------------------------------------------------------
# Aggregate collection and result projection


def _semantic_key(e: Expression) -> Expression:
    """``e`` with attributes reduced to (id, type): the form compared when matching grouping
    expressions and de-duplicating aggregate calls."""

    def norm(x: Expression) -> Expression | None:
        if isinstance(x, AttributeReference):
            return AttributeReference("", x.dtype, True, x.id)
        return None

    return e.transform_up(norm)


def collect_aggregates(exprs: Sequence[Expression]) -> list[AggregateExpression]:
    """The distinct aggregate calls in ``exprs`` (semantic equality, first-seen order)."""
    out: list[AggregateExpression] = []
    seen: set[Expression] = set()

    def visit(e: Expression) -> None:
        if isinstance(e, AggregateExpression):
            k = _semantic_key(e)
            if k not in seen:
                seen.add(k)
                out.append(e)
            return
        for c in e.children:
            visit(c)

    for e in exprs:
        visit(e)
    return out


def strip_alias(e: Expression) -> Expression:
    while isinstance(e, Alias):
        e = e.child
    return e


def _project_results(
    plan: Aggregate,
    grouping: tuple[Expression, ...],
    aggs: list[AggregateExpression],
    group_keys: list[pa.Array],
    results: list[pa.Array],
    n_groups: int,
    ctx: ExecContext,
) -> Iterator[pa.RecordBatch]:
    n_keys = len(grouping)
    agg_index = {_semantic_key(a): n_keys + i for i, a in enumerate(aggs)}
    group_index: dict[Expression, int] = {}
    for i, g in enumerate(grouping):
        group_index.setdefault(_semantic_key(g), i)
    # Aliased grouping expressions may also be referenced by their alias attribute.
    for i, g in enumerate(plan.grouping_expressions):
        if isinstance(g, Alias):
            group_index.setdefault(_semantic_key(g.to_attribute()), i)

    def rewrite(e: Expression) -> Expression | None:
        if isinstance(e, AggregateExpression):
            i = agg_index[_semantic_key(e)]
            return BoundReference(i, e.data_type, e.nullable)
        if isinstance(e, Alias):
            return None
        if e.foldable:
            return None
        i = group_index.get(_semantic_key(e))
        if i is not None:
            g = grouping[i]
            return BoundReference(i, g.data_type, g.nullable)
        return None

    out_exprs = []
    for e in plan.aggregate_expressions:
        r = e.transform_down(rewrite)
        leftover = r.find(lambda x: isinstance(x, AttributeReference))
        if leftover is not None:
            raise InternalError(
                f"Aggregate: {leftover.simple_string()} in {e.simple_string()} is neither grouped "
                f"nor aggregated"
            )
        out_exprs.append(r)

    batch = group_batch(list(group_keys) + results, n_groups)
    from ember.expressions.common import to_array

    out_cols = [_conform(to_array(e.eval(batch), n_groups), attr.data_type)
                for e, attr in zip(out_exprs, plan.output)]
    yield from emit_batches(out_cols, plan.output, n_groups, ctx)

# ---------------------------------------------------------------------------------------------
# Per-aggregate description


@dataclass(slots=True)
class _AggSpec:
    """An aggregate call bound to the child's output, with the input slots it reads."""

    expr: AggregateExpression
    func: AggregateFunction
    args: tuple[Expression, ...]
    filter: Expression | None
    filter_slot: int | None = None
    arg_slots: tuple[int, ...] = ()

    @staticmethod
    def build(a: AggregateExpression, child_attrs) -> "_AggSpec":
        func = a.func
        args = tuple(prepare(c, child_attrs) for c in func.children)
        filt = None if a.filter is None else prepare(a.filter, child_attrs)
        return _AggSpec(a, func, args, filt)


def _may_fail(e: Expression) -> bool:
    from ember.expressions.common import may_fail

    return may_fail(e)


# ---------------------------------------------------------------------------------------------
# Arrow helpers


def _conform(arr: pa.Array, dtype: T.DataType) -> pa.Array:
    if isinstance(arr, pa.ChunkedArray):
        arr = arr.combine_chunks()
    at = dtype.to_arrow()
    if arr.type != at:
        arr = arr.cast(at)
    return arr


def _concat(parts: list[pa.Array], dtype: T.DataType) -> pa.Array:
    if not parts:
        return pa.array([], type=dtype.to_arrow())
    if len(parts) == 1:
        return parts[0]
    return pa.concat_arrays(parts)


def _canonical_key(arr: pa.Array) -> pa.Array:
    """Grouping keys as Spark's NormalizeFloatingNumbers leaves them (one NaN, no -0.0)."""
    from ember.execution.kernels.keys import canonicalize_floats

    if pa.types.is_floating(arr.type):
        return canonicalize_floats(arr)
    if pa.types.is_struct(arr.type) and any(pa.types.is_floating(f.type) for f in arr.type):
        fields = [_canonical_key(arr.field(i)) for i in range(arr.type.num_fields)]
        return pa.StructArray.from_arrays(
            fields, fields=list(arr.type), mask=arr.is_null() if arr.null_count else None
        )
    return arr


def _valid(arr: pa.Array) -> np.ndarray:
    if pa.types.is_null(arr.type):
        return np.zeros(len(arr), dtype=bool)
    if arr.null_count == 0:
        return np.ones(len(arr), dtype=bool)
    return np.asarray(arr.is_valid().to_numpy(zero_copy_only=False), dtype=bool)


def _valid_or_none(arr: pa.Array) -> np.ndarray | None:
    """The validity mask of ``arr``, or None when every value is valid (callers then skip
    boolean indexing, which copies)."""
    if not pa.types.is_null(arr.type) and arr.null_count == 0:
        return None
    return _valid(arr)


def _sel(x: np.ndarray, valid: np.ndarray | None) -> np.ndarray:
    return x if valid is None else x[valid]


def _take_or_null(values: pa.Array, positions: np.ndarray) -> pa.Array:
    """``values[positions]`` with NULL where ``positions < 0``."""
    missing = positions < 0
    idx = pa.array(np.where(missing, 0, positions), type=pa.int64(),
                   mask=missing if missing.any() else None)
    if len(values) == 0:
        return pa.nulls(len(positions), type=values.type)
    return values.take(idx)


def group_ids(key_cols: Sequence[pa.Array], n_rows: int) -> tuple[np.ndarray, np.ndarray]:
    """Dense group ids (numbered by first appearance) and each group's first row.

    NULL is one more key value; floats must already be canonical.  Integer-like key columns
    (integers, dates, timestamps...) are numbered directly from their values
    (:func:`_integer_key_ids`: no hashing); one-byte strings from their buffers; several key
    columns by :func:`_multi_key_ids`."""
    if n_rows == 0:
        return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64)
    short = _short_string_keys(key_cols)
    if short is not None:
        return _dense_by_first(*short)
    if len(key_cols) > 1 and MULTI_KEY_REFINE:
        return _multi_key_ids(key_cols, n_rows)
    if len(key_cols) == 1:
        fast = _integer_key_ids(key_cols[0])
        if fast is not None:
            return fast
    from ember.execution.kernels.keys import encode_arrays

    cols = list(key_cols)
    if len(cols) > 1:
        # High-cardinality integer columns: replace them by their dense ids (equal values <->
        # equal ids, NULL one more id), which the joint encoding then reads as a small range.
        for i, c in enumerate(cols):
            fast = _integer_key_ids(c)
            if fast is not None:
                cols[i] = pa.array(fast[0], type=pa.int64())
    codes, card = encode_arrays(cols, nulls_equal=True)
    return _dense_by_first(codes, card)


#: Module switch for same-process A/B measurements: False encodes several key columns jointly
#: (every column dictionary-encoded) instead of refining groups column by column.
MULTI_KEY_REFINE = True
#: Rows of a column compared first when testing whether it is constant within the base's groups
#: (a mismatch among them skips the full comparison).
_PROBE_ROWS = 256


def _multi_key_ids(key_cols: Sequence[pa.Array], n_rows: int) -> tuple[np.ndarray, np.ndarray]:
    """:func:`group_ids` of several key columns.

    Integer-like columns are numbered directly (:func:`_integer_key_ids`); the one with the most
    groups -- or, without integer columns, the first column -- is the *base*.  Every other column
    is tested for being constant within the base's groups (every row equal to its group's first
    row, NULL equal to NULL: :func:`_constant_within_groups`); such a column -- e.g. a customer's
    name next to the customer key -- splits no group and is left out, which saves hashing its
    values.  The base's ids and the remaining columns (integer ones as their dense ids) are then
    encoded jointly, as all columns were before.  Equal keys stay equal on the kept columns, so the
    groups, ids and first rows are those of the joint encoding of every column."""
    from ember.execution.kernels.keys import encode_arrays

    dense = [_integer_key_ids(c) if _integer_like(c.type) else None for c in key_cols]
    sizes = [len(d[1]) if d is not None else -1 for d in dense]
    b = int(np.argmax(sizes)) if max(sizes) >= 0 else 0
    ids, first = dense[b] if dense[b] is not None else _dense_by_first(
        *encode_arrays([key_cols[b]], nulls_equal=True))
    rest: list[pa.Array] = []
    all_distinct = len(first) == n_rows
    for i, c in enumerate(key_cols):
        if i == b or all_distinct or _constant_within_groups(c, ids, first):
            continue  # the base itself; every row its own group; no group split by ``c``
        d = dense[i]
        rest.append(pa.array(d[0], type=pa.int64()) if d is not None else c)
    if not rest:
        return ids, first
    codes, card = encode_arrays([pa.array(ids, type=pa.int64())] + rest, nulls_equal=True)
    return _dense_by_first(codes, card)


def _integer_like(t: pa.DataType) -> bool:
    return (pa.types.is_integer(t) or pa.types.is_date(t) or pa.types.is_time(t)
            or pa.types.is_timestamp(t) or pa.types.is_duration(t))


def _constant_within_groups(arr: pa.Array, ids: np.ndarray, first: np.ndarray) -> bool:
    """Whether every row of ``arr`` equals (NULL equal to NULL, floats by their canonical bits)
    the first row ``first[ids[row]]`` of its group; False for types compared only through codes
    (nested, dictionary).  A sample of rows is compared first, so a column that splits groups
    is usually rejected after a few hundred rows."""
    if isinstance(arr, pa.ChunkedArray):
        arr = arr.combine_chunks()
    t = arr.type
    if pa.types.is_floating(t):
        arr = arr.view(pa.int64() if t.bit_width == 64 else
                       pa.int32() if t.bit_width == 32 else pa.int16())
    elif not (pa.types.is_string(t) or pa.types.is_large_string(t) or pa.types.is_binary(t)
              or pa.types.is_large_binary(t) or pa.types.is_decimal(t) or _integer_like(t)
              or pa.types.is_boolean(t) or pa.types.is_fixed_size_binary(t)):
        return False
    n = len(ids)
    probe = np.arange(n - 1, -1, -max(1, n // _PROBE_ROWS), dtype=np.int64)  # spread, late rows
    if not _rows_equal(arr.take(pa.array(probe)), arr.take(pa.array(first[ids[probe]]))):
        return False
    return _rows_equal(arr, arr.take(pa.array(first[ids])))


def _rows_equal(x: pa.Array, y: pa.Array) -> bool:
    """Whether ``x`` and ``y`` are equal row by row (NULL equal to NULL only)."""
    same = pc.equal(x, y)
    if same.null_count:
        both_null = pc.and_(x.is_null(), y.is_null())
        same = pc.or_(pc.fill_null(same, False), both_null)
    return bool(pc.all(same).as_py())


def _integer_values(arr: pa.Array) -> tuple[np.ndarray, np.ndarray | None] | None:
    """``(int64 values, validity mask or None)`` of an integer-like column (integers, dates,
    times, timestamps, durations; NULL slots hold an arbitrary valid value), or None for other
    types."""
    t = arr.type
    if isinstance(arr, pa.ChunkedArray):
        arr = arr.combine_chunks()
    if pa.types.is_integer(t):
        pass
    elif pa.types.is_date32(t) or pa.types.is_time32(t):
        arr = arr.view(pa.int32())
    elif (pa.types.is_date64(t) or pa.types.is_time64(t) or pa.types.is_timestamp(t)
          or pa.types.is_duration(t)):
        arr = arr.view(pa.int64())
    else:
        return None
    n = len(arr)
    if n == 0 or arr.null_count == n:
        return None
    if pa.types.is_uint64(arr.type):
        return None  # values above int64 would wrap
    valid = None
    if arr.null_count:
        valid = _valid(arr)
        fill = pc.min(arr).as_py()
        arr = pc.fill_null(arr, fill)
    v = arr.to_numpy(zero_copy_only=False).astype(np.int64, copy=False)
    return v, valid


def _integer_key_ids(arr: pa.Array) -> tuple[np.ndarray, np.ndarray] | None:
    """:func:`group_ids` of one integer-like key column (None for other types): codes are
    ``value - min`` (NULL one past the maximum), then numbered by :func:`_dense_by_first`, whose
    direct-address table covers ranges up to ``_DIRECT_ROWS_FACTOR`` times the row count;
    wider ranges are sorted (few ascending runs, e.g. rows from an exchange of sorted input) or
    hashed."""
    got = _integer_values(arr)
    if got is None:
        return None
    v, valid = got
    lo, hi = int(v.min()), int(v.max())
    span = hi - lo + 1
    if span >= 1 << 62:
        return None
    codes = v - lo if lo != 0 else v
    card = span
    if valid is not None:
        codes = np.where(valid, codes, span)
        card = span + 1
    return _dense_by_first(codes, card)


def _short_string_keys(key_cols: Sequence[pa.Array]) -> tuple[np.ndarray, int] | None:
    """Joint codes of one or two string / binary key columns whose values are at most one byte
    long (flags such as TPC-H's ``l_returnflag``), read straight from the offsets and data
    buffers: NULL 0, empty 1, byte ``b`` ``b + 2``; None for other keys (the general encoding
    handles them)."""
    if not 0 < len(key_cols) <= 2:
        return None
    combined: np.ndarray | None = None
    for arr in key_cols:
        t = arr.type
        if pa.types.is_string(t) or pa.types.is_binary(t):
            width = np.int32
        elif pa.types.is_large_string(t) or pa.types.is_large_binary(t):
            width = np.int64
        else:
            return None
        if len(arr) == 0:
            return None
        bufs = arr.buffers()
        offs = np.frombuffer(bufs[1], dtype=width, count=arr.offset + len(arr) + 1)
        offs = offs[arr.offset:]
        lens = np.diff(offs)
        if int(lens.max()) > 1 or int(lens.min()) < 0:
            return None
        data = np.frombuffer(bufs[2], dtype=np.uint8) if bufs[2] is not None else \
            np.zeros(0, np.uint8)
        if len(data) == 0:
            data = np.zeros(1, np.uint8)
        starts = np.minimum(offs[:-1], len(data) - 1)
        code = np.where(lens == 1, data[starts].astype(np.int64) + 2, 1)
        if arr.null_count:
            code = np.where(_valid(arr), code, 0)
        combined = code if combined is None else combined * 258 + code
    assert combined is not None
    return combined, 258 ** len(key_cols)


_DIRECT_ROWS_FACTOR = 64
_DIRECT_MAX_ENTRIES = 1 << 24


def _dense_by_first(codes: np.ndarray, card: int | None = None) -> tuple[np.ndarray, np.ndarray]:
    """``codes`` renumbered 0, 1, ... by first appearance, and each new code's first row.

    ``card``: when known, an exclusive upper bound of the (non-negative) codes.  Non-decreasing
    codes are numbered by their runs.  Bounds up to ``_DIRECT_ROWS_FACTOR`` times the row count
    use a direct-address table (transient int32, capped at ``_DIRECT_MAX_ENTRIES`` entries =
    64 MiB); otherwise codes made of few ascending runs are sorted (a stable sort merges runs in
    near-linear time) and the rest hashed (``pyarrow.compute.dictionary_encode``)."""
    n = len(codes)
    descents = None
    if n > 1:
        change = codes[1:] != codes[:-1]
        if n < 1 << 12 or not change.all():
            descents = int(np.count_nonzero(codes[1:] < codes[:-1]))
            sorted_run = descents == 0
        else:  # all distinct neighbours: cheaper to check order directly
            sorted_run = bool((codes[1:] > codes[:-1]).all())
        if sorted_run:  # non-decreasing codes (e.g. input ordered by the keys): runs are groups
            first = np.flatnonzero(np.r_[True, change])
            ids = np.cumsum(np.r_[False, change], dtype=np.int64)
            return ids, first
    if card is not None and 0 < card <= min(max(_DIRECT_ROWS_FACTOR * n, 1 << 16),
                                            _DIRECT_MAX_ENTRIES):
        itype = np.int32 if n < (1 << 31) - 1 else np.int64
        rows = np.arange(n, dtype=itype)
        table = np.full(card, n, dtype=itype)
        np.minimum.at(table, codes, rows)
        # The rows where a code appears first, ascending: the groups in order of appearance.
        first = np.flatnonzero(table[codes] == rows)
        table[codes[first]] = np.arange(len(first), dtype=itype)  # reused as code -> id
        return table[codes].astype(np.int64), first.astype(np.int64, copy=False)
    if n > 1:
        if descents is None:
            descents = int(np.count_nonzero(codes[1:] < codes[:-1]))
        if descents <= n >> 5:
            return _dense_by_sort(codes)
    # dictionary_encode numbers values in order of first appearance (hash based, no sort).
    enc = pc.dictionary_encode(pa.array(codes, type=pa.int64()))
    ids = enc.indices.to_numpy(zero_copy_only=False).astype(np.int64, copy=False)
    # Ids are numbered by first appearance: a group's first row is where the running maximum
    # of the ids steps up.
    top = np.maximum.accumulate(ids)
    first = np.flatnonzero(np.r_[True, top[1:] != top[:-1]])
    return ids, first


def _dense_by_sort(codes: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """:func:`_dense_by_first` by a stable sort of the codes."""
    n = len(codes)
    order = np.argsort(codes, kind="stable")
    sc = codes[order]
    brk = np.empty(n, dtype=bool)
    brk[0] = True
    np.not_equal(sc[1:], sc[:-1], out=brk[1:])
    starts = np.flatnonzero(brk)
    first_sorted = order[starts]  # stable: each code's smallest row
    by_first = np.argsort(first_sorted, kind="stable")
    rank = np.empty(len(starts), dtype=np.int64)
    rank[by_first] = np.arange(len(starts), dtype=np.int64)
    seg = np.cumsum(brk, dtype=np.int64) - 1
    ids = np.empty(n, dtype=np.int64)
    ids[order] = rank[seg]
    return ids, first_sorted[by_first].astype(np.int64, copy=False)


# ---------------------------------------------------------------------------------------------
# Row selection: FILTER and DISTINCT


def _hash_groupable(t: pa.DataType) -> bool:
    return not (pa.types.is_nested(t) or pa.types.is_null(t) or pa.types.is_dictionary(t))


def _first_rows_of_tuples(cols: list[pa.Array]) -> np.ndarray:
    """Ascending positions of the first row of each distinct tuple of ``cols`` (NULLs equal,
    floats already canonical)."""
    from ember.execution.kernels.keys import encode_arrays

    codes, card = encode_arrays(cols, nulls_equal=True)
    return _dense_by_first(codes, card)[1]  # numbered by first appearance: ascending


def _select(
    spec: _AggSpec, args: list[pa.Array], mask: np.ndarray | None, gids: np.ndarray
) -> np.ndarray | None:
    """Indices (ascending) of the rows the aggregate function sees: FILTER is TRUE and, for
    DISTINCT, the first row of each distinct (group, arguments) tuple; None for every row."""
    n = len(gids)
    if mask is None and not spec.expr.is_distinct:
        return None  # every row
    rows = np.arange(n, dtype=np.int64) if mask is None else np.flatnonzero(mask)
    if not spec.expr.is_distinct or len(rows) == 0:
        return rows
    if len(rows) == n:
        cols = [pa.array(gids)] + [_canonical_key(a) for a in args]
    else:
        idx = pa.array(rows, type=pa.int64())
        cols = [pa.array(gids[rows])] + [_canonical_key(a.take(idx)) for a in args]
    return rows[_first_rows_of_tuples(cols)]


# ---------------------------------------------------------------------------------------------
# Kernels


def _compute(
    spec: _AggSpec, args: list[pa.Array], mask: np.ndarray | None, gids: np.ndarray,
    n_groups: int,
) -> pa.Array:
    rows = _select(spec, args, mask, gids)
    if spec.expr.is_distinct:
        args = [_canonical_key(a) for a in args]
    all_rows = rows is None or len(rows) == len(gids)
    if not all_rows:
        idx = pa.array(rows, type=pa.int64())
        args = [a.take(idx) for a in args]
        g = gids[rows]
    else:
        g = gids
    func = spec.func
    out_type = func.data_type
    match func:
        case Count():
            return pa.array(_count_non_null(args, g, n_groups).astype(np.int64))
        case CountIf():
            m = _true_mask(args[0])
            return pa.array(np.bincount(g[m], minlength=n_groups).astype(np.int64))
        case Sum():
            return _sum(args[0], g, n_groups, out_type, func.ansi)
        case Average():
            return _avg(args[0], g, n_groups, out_type, func.ansi)
        case Min():
            return _min_max(args[0], g, n_groups, largest=False)
        case Max():
            return _min_max(args[0], g, n_groups, largest=True)
        case First(ignore_nulls=ign) | AnyValue(ignore_nulls=ign):
            return _first_last(args[0], g, n_groups, ign, last=False)
        case Last(ignore_nulls=ign):
            return _first_last(args[0], g, n_groups, ign, last=True)
        case BoolAnd():
            return _bool(args[0], g, n_groups, conj=True)
        case BoolOr():
            return _bool(args[0], g, n_groups, conj=False)
        case MaxBy():
            return _by(args[0], args[1], g, n_groups, largest=True)
        case MinBy():
            return _by(args[0], args[1], g, n_groups, largest=False)
        case _:
            raise UnsupportedError(f"Aggregate function {func.pretty_name} is not supported")


def _count_non_null(args: Sequence[pa.Array], g: np.ndarray, n_groups: int) -> np.ndarray:
    """Rows per group where no column of ``args`` is NULL (``count(a, b)``)."""
    valid = None
    for a in args:
        va = _valid_or_none(a)
        if va is not None:
            valid = va if valid is None else valid & va
    return _counts(_sel(g, valid), n_groups)


def _true_mask(arr: pa.Array) -> np.ndarray:
    if pa.types.is_null(arr.type):
        return np.zeros(len(arr), dtype=bool)
    from ember.expressions.common import to_mask

    return to_mask(arr)


_last_counts: list = []  # [weakref to g, n_groups, counts]: the last full-input count


def _counts(g: np.ndarray, n_groups: int) -> np.ndarray:
    """Rows per group.  The counts of the last ``g`` are remembered (weakly: the cache never
    keeps ``g`` alive), as several aggregates over the same rows ask for the same counts."""
    last = _last_counts[:]  # one snapshot: partitions aggregate on several threads
    if last and last[0]() is g and last[1] == n_groups:
        return last[2]
    out = np.bincount(g, minlength=n_groups)
    if len(g) >= 1 << 16:
        _last_counts[:] = [weakref.ref(g), n_groups, out]
    return out


SUM_OVERFLOW = ("Overflow in sum of decimals. Use 'try_sum' to tolerate overflow and return "
                "NULL instead.")
AVG_OVERFLOW = ("Overflow in sum of decimals. Use 'try_avg' to tolerate overflow and return "
                "NULL instead.")


def _overflow(message: str) -> ArithmeticError_:
    return ArithmeticError_(
        message + ' If necessary set "spark.sql.ansi.enabled" to "false" to bypass this error.',
        error_class="ARITHMETIC_OVERFLOW",
        parameters={"message": message.split(".")[0], "alternative": "",
                    "config": '"spark.sql.ansi.enabled"'},
    )


def _sum(arr: pa.Array, g: np.ndarray, n_groups: int, out_type: T.DataType,
         ansi: bool = True) -> pa.Array:
    """Per-group ``sum``; ``ansi=False`` is Spark's legacy sum: integral sums wrap, a decimal
    sum out of the result precision is NULL."""
    at = out_type.to_arrow()
    if pa.types.is_null(arr.type):
        return pa.nulls(n_groups, type=at)
    valid = _valid_or_none(arr)
    gv = _sel(g, valid)
    cnt = _counts(gv, n_groups)
    empty = cnt == 0
    t = arr.type
    if pa.types.is_decimal(t):
        totals = _decimal_sums(arr, valid, gv, n_groups)
        if not ansi:
            return _decimal_array(*_null_overflow(totals, empty, out_type.precision), at)
        _check_decimal(totals, out_type.precision, SUM_OVERFLOW)
        return _decimal_array(totals, empty, at)
    if pa.types.is_integer(t):
        v = arr.to_numpy(zero_copy_only=False) if arr.null_count == 0 else \
            pc.fill_null(arr, 0).to_numpy(zero_copy_only=False)
        v = _sel(v.astype(np.int64, copy=False), valid)
        sums = _int_sums(v, gv, n_groups) if ansi else _group_add(v, gv, n_groups)
        return pa.array(sums, type=at, mask=empty if empty.any() else None)
    v = _sel(_float_values(arr), valid)
    sums = np.bincount(gv, weights=v, minlength=n_groups)
    return pa.array(sums, type=at, mask=empty if empty.any() else None)


def _float_values(arr: pa.Array) -> np.ndarray:
    a = arr if pa.types.is_float64(arr.type) else arr.cast(pa.float64(), safe=False)
    if a.null_count:
        a = pc.fill_null(a, 0.0)
    return a.to_numpy(zero_copy_only=False)


_I64_MAX = (1 << 63) - 1


def _int_sums(v: np.ndarray, g: np.ndarray, n_groups: int) -> np.ndarray:
    """Per-group int64 sums, raising ARITHMETIC_OVERFLOW when any running sum (in row order)
    leaves the int64 range, as Spark's ANSI ``sum`` does."""
    out = np.zeros(n_groups, dtype=np.int64)
    if len(v) == 0:
        return out
    bound = max(abs(int(v.max())), abs(int(v.min())))
    if bound * len(v) <= _I64_MAX:  # no running sum can leave the int64 range
        return _group_add(v, g, n_groups)
    # Exact running sums: split values into signed high and unsigned low 32-bit halves.
    order = np.argsort(g, kind="stable")
    gs, vs = g[order], v[order]
    hi = vs >> 32
    lo = vs & 0xFFFFFFFF
    c_hi = np.cumsum(hi)
    c_lo = np.cumsum(lo)
    starts = np.flatnonzero(np.r_[True, gs[1:] != gs[:-1]])
    seg = np.cumsum(np.r_[False, gs[1:] != gs[:-1]])
    base_hi = np.where(starts > 0, c_hi[starts - 1], 0)[seg]
    base_lo = np.where(starts > 0, c_lo[starts - 1], 0)[seg]
    p_hi = c_hi - base_hi
    p_lo = c_lo - base_lo
    p_hi = p_hi + (p_lo >> 32)
    p_lo = p_lo & 0xFFFFFFFF
    if (p_hi < -(1 << 31)).any() or (p_hi > (1 << 31) - 1).any():
        raise _overflow("overflow. Use 'try_add' to tolerate overflow and return NULL instead.")
    ends = np.r_[starts[1:] - 1, len(gs) - 1]
    totals = (p_hi[ends] << 32) + p_lo[ends]
    out[gs[starts]] = totals
    return out


def _decimal_words(arr: pa.Array) -> np.ndarray:
    """The unscaled values of a decimal array as ``(n, 2)`` int64 words (low, high), a
    zero-copy view of the decimal128 data buffer."""
    if not pa.types.is_decimal128(arr.type):
        arr = arr.cast(pa.decimal128(38, arr.type.scale))
    buf = arr.buffers()[1]
    words = np.frombuffer(buf, dtype=np.int64, count=2 * (arr.offset + len(arr)))
    return words[2 * arr.offset:].reshape(-1, 2)


def _group_add(v: np.ndarray, g: np.ndarray, n_groups: int) -> np.ndarray:
    """Per-group int64 sums of ``v`` (the caller guarantees they cannot overflow)."""
    if n_groups == 1:
        return np.array([v.sum(dtype=np.int64)], dtype=np.int64)
    out = np.zeros(n_groups, dtype=np.int64)
    np.add.at(out, g, v)
    return out


def _decimal_sums(arr: pa.Array, valid: np.ndarray | None, gv: np.ndarray,
                  n_groups: int) -> np.ndarray | list[int]:
    """Exact per-group sums of the unscaled values: an int64 array when every value fits in
    64 bits and every sum provably fits too, else Python ints (one per group).

    Values that fit in int64 (always so for precision <= 18) are summed directly when
    ``max|v| * rows`` fits in int64, else as signed-high/unsigned-low 32-bit halves; wider values
    as four 32-bit limbs (low to high, the top one signed).  Limb sums are exact below 2**31 rows.
    """
    if len(gv) == 0:
        return np.zeros(n_groups, dtype=np.int64)
    words = _decimal_words(arr)
    lo = _sel(words[:, 0], valid)
    narrow = arr.type.precision <= 18 or np.array_equal(_sel(words[:, 1], valid), lo >> 63)
    if narrow:
        bound = max(abs(int(lo.max())), abs(int(lo.min())))
        if bound * len(lo) <= _I64_MAX:
            return _group_add(lo, gv, n_groups)
        s_lo = _group_add(lo & 0xFFFFFFFF, gv, n_groups)
        s_hi = _group_add(lo >> 32, gv, n_groups)
        approx = s_hi.astype(np.float64) * 2.0 ** 32 + s_lo.astype(np.float64)
        if np.abs(approx).max() < 2.0 ** 62:  # the exact total fits: combine in int64
            return (s_hi << 32) + s_lo
        return [(h << 32) + lw for h, lw in zip(s_hi.tolist(), s_lo.tolist())]
    hi = _sel(words[:, 1], valid)
    limbs = [lo & 0xFFFFFFFF, (lo >> 32) & 0xFFFFFFFF, hi & 0xFFFFFFFF, hi >> 32]
    sums = [_group_add(limb, gv, n_groups).tolist() for limb in limbs]
    return [
        (s3 << 96) + (s2 << 64) + (s1 << 32) + s0
        for s0, s1, s2, s3 in zip(*sums)
    ]


def out_of_precision(totals: np.ndarray | list[int], precision: int) -> np.ndarray:
    """Which unscaled totals have more than ``precision`` digits (int64 totals never have more
    than 18 + 1)."""
    limit = 10 ** precision
    if isinstance(totals, np.ndarray):
        if precision > 18:
            return np.zeros(len(totals), dtype=bool)
        return (totals >= limit) | (totals <= -limit)
    return np.array([t >= limit or t <= -limit for t in totals], dtype=bool)


def _null_overflow(totals: np.ndarray | list[int], null: np.ndarray, precision: int
                   ) -> tuple[np.ndarray | list[int], np.ndarray]:
    """Legacy (non-ANSI) decimal sums: totals out of ``precision`` become NULL (and 0)."""
    over = out_of_precision(totals, precision)
    if not over.any():
        return totals, null
    if isinstance(totals, np.ndarray):
        return np.where(over, 0, totals), null | over
    return [0 if x else t for t, x in zip(totals, over.tolist())], null | over


def _check_decimal(values: np.ndarray | list[int], precision: int, message: str) -> None:
    limit = 10 ** precision
    if isinstance(values, np.ndarray):
        if precision <= 18 and len(values) and (
                int(values.max()) >= limit or int(values.min()) <= -limit):
            raise _overflow(message)
        return
    for v in values:
        if v >= limit or v <= -limit:
            raise _overflow(message)


def _decimal_array(unscaled: np.ndarray | list[int], null: np.ndarray,
                   at: pa.DataType) -> pa.Array:
    """A decimal128 array from unscaled values (NULL where ``null``): an int64 array (written
    as sign-extended 128-bit words) or Python ints."""
    n = len(unscaled)
    validity = None
    if null.any():
        validity = pa.array(~null).buffers()[1]
    if isinstance(unscaled, np.ndarray) and pa.types.is_decimal128(at):
        t = (np.where(null, 0, unscaled) if validity is not None else
             unscaled).astype(np.int64, copy=False)
        words = np.empty((n, 2), dtype=np.int64)
        words[:, 0] = t
        words[:, 1] = t >> 63
        return pa.Array.from_buffers(at, n, [validity, pa.py_buffer(words)])
    if isinstance(unscaled, np.ndarray):
        unscaled = unscaled.tolist()
    data = b"".join(
        (0 if isnull else v).to_bytes(16, "little", signed=True)
        for v, isnull in zip(unscaled, null.tolist())
    )
    return pa.Array.from_buffers(at, n, [validity, pa.py_buffer(data)])


def _avg(arr: pa.Array, g: np.ndarray, n_groups: int, out_type: T.DataType,
         ansi: bool = True) -> pa.Array:
    """Per-group ``avg``; ``ansi=False``: a decimal sum or average out of range is NULL."""
    at = out_type.to_arrow()
    if pa.types.is_null(arr.type):
        return pa.nulls(n_groups, type=at)
    valid = _valid_or_none(arr)
    gv = _sel(g, valid)
    cnt = _counts(gv, n_groups)
    if pa.types.is_decimal(arr.type):
        in_scale = arr.type.scale
        sum_type = average_sum_type(T.DecimalType(arr.type.precision, in_scale))
        totals = _decimal_sums(arr, valid, gv, n_groups)
        if not ansi:
            totals, over = _null_overflow(totals, np.zeros(n_groups, bool), sum_type.precision)
            return _decimal_averages(totals, np.where(over, 0, cnt), in_scale, out_type, ansi)
        _check_decimal(totals, sum_type.precision, AVG_OVERFLOW)
        return _decimal_averages(totals, cnt, in_scale, out_type)
    v = _sel(_float_values(arr), valid)
    sums = np.bincount(gv, weights=v, minlength=n_groups)
    return _float_averages(sums, cnt, at)


def _float_averages(sums: np.ndarray, cnt: np.ndarray, at: pa.DataType) -> pa.Array:
    """``sums / cnt`` per group; NULL where the count is 0."""
    empty = cnt == 0
    with np.errstate(invalid="ignore", divide="ignore"):
        res = sums / np.where(empty, 1, cnt)
    return pa.array(res, type=at, mask=empty if empty.any() else None)


def _decimal_averages(totals: np.ndarray | list[int], cnt: np.ndarray, in_scale: int,
                      out_type: T.DecimalType, ansi: bool = True) -> pa.Array:
    """Decimal ``avg`` per group from unscaled sums at ``in_scale`` and counts; NULL where the
    count is 0 (see :func:`_decimal_average`).  Vectorized when the totals are an int64 array
    and the quotient at the result scale fits int64 (:func:`_int64_decimal_averages`); exact
    Python integers otherwise."""
    empty = cnt == 0
    if isinstance(totals, np.ndarray):
        fast = _int64_decimal_averages(totals, cnt, empty, in_scale, out_type)
        if fast is not None:
            return _decimal_array(fast, empty, out_type.to_arrow())
        totals = totals.tolist()
    out = [_decimal_average(t, c, in_scale, out_type, ansi) if c else 0
           for t, c in zip(totals, cnt.tolist())]
    if not ansi:  # legacy: an average out of range is NULL
        over = np.array([v is None for v in out], dtype=bool)
        if over.any():
            out, empty = [0 if v is None else v for v in out], empty | over
    return _decimal_array(out, empty, out_type.to_arrow())


def _int64_decimal_averages(totals: np.ndarray, cnt: np.ndarray, empty: np.ndarray,
                            in_scale: int, out_type: T.DecimalType) -> np.ndarray | None:
    """``round_half_up(total * 10**(out_scale - in_scale) / cnt)`` in int64, or None when that
    is not provably what :func:`_decimal_average` gives.

    Spark rounds twice (HALF_UP at scale 39, then at the result scale).  The two roundings agree
    with one HALF_UP at the result scale unless the exact fraction lies within ``10**-(39 -
    out_scale)`` below one half, which needs a count above ``10**(39 - out_scale)``: impossible
    for an int64 count when the result scale is below 20.  Results out of the result precision
    return None so the exact path raises Spark's error."""
    shift = out_type.scale - in_scale
    if not 0 <= shift <= 18 or out_type.scale >= 20 or not len(totals):
        return None
    factor = 10 ** shift
    mag = np.abs(totals)
    if int(mag.max()) >= (2 ** 62) // factor:
        return None
    c = np.where(empty, 1, cnt).astype(np.int64, copy=False)
    x = mag * factor
    q = x // c
    q += (2 * (x - q * c) >= c)
    if out_type.precision <= 18 and int(q.max()) >= 10 ** out_type.precision:
        return None
    return np.where(empty, 0, np.where(totals < 0, -q, q))


_DIV_SCALE = T.DecimalType.MAX_SCALE + 1


def _decimal_average(total: int, count: int, in_scale: int, out_type: T.DecimalType,
                     ansi: bool = True) -> int | None:
    """Unscaled ``total / count`` as Spark computes a decimal ``avg``: the quotient at scale 39
    (``Decimal./``, HALF_UP), then rounded HALF_UP to the result scale; out of range raises
    ``NUMERIC_VALUE_OUT_OF_RANGE`` (is None with ``ansi=False``)."""
    q, r = divmod(abs(total) * 10 ** (_DIV_SCALE - in_scale), count)
    if 2 * r >= count:
        q += 1
    unit = 10 ** (_DIV_SCALE - out_type.scale)
    q2, r2 = divmod(q, unit)
    if 2 * r2 >= unit:
        q2 += 1
    if q2 >= 10 ** out_type.precision and not ansi:
        return None
    if q2 >= 10 ** out_type.precision:
        text = str(q).rjust(_DIV_SCALE + 1, "0")
        text = ("-" if total < 0 else "") + text[:-_DIV_SCALE] + "." + text[-_DIV_SCALE:]
        p, sc = out_type.precision, out_type.scale
        raise ArithmeticError_(
            f"{text} cannot be represented as Decimal({p}, {sc}). If necessary set "
            '"spark.sql.ansi.enabled" to "false" to bypass this error, and return NULL instead.',
            error_class="NUMERIC_VALUE_OUT_OF_RANGE.WITH_SUGGESTION",
            parameters={"value": text, "precision": str(p), "scale": str(sc),
                        "config": '"spark.sql.ansi.enabled"'},
        )
    return -q2 if total < 0 else q2


def _ranks(arr: pa.Array) -> np.ndarray:
    """Dense ascending ranks of the values (NULLs get arbitrary ranks: callers skip them).
    Floating NaN ranks above every number and ``-0.0`` ties with ``0.0``, as in Spark."""
    t = arr.type
    if pa.types.is_floating(t):
        v = arr.to_numpy(zero_copy_only=False).astype(np.float64)  # NULL -> NaN (skipped)
        nan = np.isnan(v)
        _, dense = np.unique(np.where(nan, 0.0, v) + 0.0, return_inverse=True)
        dense = dense.reshape(-1).astype(np.int64)
        if nan.any():
            dense = np.where(nan, int(dense.max()) + 1, dense)
        return dense
    if pa.types.is_boolean(t):
        return np.asarray(pc.fill_null(arr, False).to_numpy(zero_copy_only=False), dtype=np.int64)
    if pa.types.is_struct(t):
        return _struct_ranks(arr)
    if pa.types.is_large_list(t) or pa.types.is_list(t):
        raise UnsupportedError(f"min/max over {t} values is not supported yet")
    r = pc.rank(arr, sort_keys="ascending", tiebreaker="dense")
    return r.to_numpy(zero_copy_only=False).astype(np.int64)


def _flatten_for_order(arr: pa.Array, out: list[pa.Array]) -> None:
    """Columns whose lexicographic order (NULLs first) is Spark's struct order."""
    if pa.types.is_struct(arr.type):
        out.append(pa.array(_valid(arr).astype(np.int8)))
        for i in range(arr.type.num_fields):
            f = arr.field(i)
            if arr.null_count:
                f = pc.if_else(arr.is_valid(), f, pa.nulls(len(f), type=f.type))
            _flatten_for_order(f, out)
    else:
        out.append(_canonical_key(arr))


def _struct_ranks(arr: pa.Array) -> np.ndarray:
    from ember.execution.kernels.keys import encode_arrays

    cols: list[pa.Array] = []
    _flatten_for_order(arr, cols)
    table = pa.table({f"c{i}": c for i, c in enumerate(cols)})
    perm = pc.sort_indices(
        table, sort_keys=[(f"c{i}", "ascending", "at_start") for i in range(len(cols))],
    ).to_numpy(zero_copy_only=False)
    codes, _ = encode_arrays(cols, nulls_equal=True)
    sc = codes[perm]
    dense_sorted = np.cumsum(np.r_[0, (sc[1:] != sc[:-1]).astype(np.int64)])
    ranks = np.empty(len(arr), dtype=np.int64)
    ranks[perm] = dense_sorted
    return ranks


def _first_pos(g: np.ndarray, rows: np.ndarray, n_groups: int) -> np.ndarray:
    """Per group, the smallest of ``rows`` (grouped by ``g``), -1 for groups without rows."""
    pos = np.full(n_groups, np.iinfo(np.int64).max, dtype=np.int64)
    np.minimum.at(pos, g, rows)
    pos[pos == np.iinfo(np.int64).max] = -1
    return pos


def _last_pos(g: np.ndarray, rows: np.ndarray, n_groups: int) -> np.ndarray:
    """Per group, the largest of ``rows`` (grouped by ``g``), -1 for groups without rows."""
    pos = np.full(n_groups, -1, dtype=np.int64)
    np.maximum.at(pos, g, rows)
    return pos


def _min_max(arr: pa.Array, g: np.ndarray, n_groups: int, *, largest: bool) -> pa.Array:
    """Per group, the extreme value; for floats the first row holding it (Spark keeps the first
    of equal values, which tells ``-0.0`` from ``0.0``) with NaN above every number."""
    t = arr.type
    if pa.types.is_null(t):
        return pa.nulls(n_groups, type=t)
    fast = _numeric_extreme(arr, g, n_groups, largest)
    if fast is not None:
        return fast
    valid = _valid(arr)
    if pa.types.is_floating(t):
        return _take_or_null(arr, _float_extreme_pos(arr, valid, g, n_groups, largest))
    rows = np.flatnonzero(valid)
    if _hash_groupable(t):
        # pyarrow's hash_min/hash_max: equal values are identical here, so any row will do.
        fn = "max" if largest else "min"
        table = pa.table({"g": pa.array(g[rows]), "v": arr.take(pa.array(rows))})
        res = table.group_by(["g"], use_threads=False).aggregate([("v", fn)])
        slot = np.full(n_groups, -1, dtype=np.int64)
        slot[res.column("g").to_numpy(zero_copy_only=False)] = np.arange(res.num_rows)
        return _take_or_null(res.column(f"v_{fn}").combine_chunks(), slot)
    pos = np.full(n_groups, -1, dtype=np.int64)
    if len(rows):
        gv = g[rows]
        hit = _holds_group_extreme(_ranks(arr)[rows], gv, n_groups, largest=largest)
        pos = _first_pos(gv[hit], rows[hit], n_groups)
    return _take_or_null(arr, pos)


def _numeric_extreme(arr: pa.Array, g: np.ndarray, n_groups: int,
                     largest: bool) -> pa.Array | None:
    """min/max of integers, and of floats without NaN or ``-0.0`` (where equal values are
    identical, so which row holds the extreme does not matter), by ``np.minimum.at`` /
    ``np.maximum.at``; None for other inputs (the general paths handle them)."""
    t = arr.type
    is_float = pa.types.is_floating(t) and not pa.types.is_float16(t)
    if not (pa.types.is_integer(t) or is_float):
        return _integer_like_extreme(arr, g, n_groups, largest)
    valid = _valid_or_none(arr)
    v = (arr if valid is None else pc.fill_null(arr, 0)).to_numpy(zero_copy_only=False)
    v, gv = _sel(v, valid), _sel(g, valid)
    if is_float:
        if np.isnan(v).any() or np.signbit(v[v == 0]).any():
            return None
        init = -np.inf if largest else np.inf
    else:
        info = np.iinfo(v.dtype)
        init = info.min if largest else info.max
    ext = np.full(n_groups, init, dtype=v.dtype)
    (np.maximum if largest else np.minimum).at(ext, gv, v)
    empty = _counts(gv, n_groups) == 0
    return pa.array(ext, type=t, mask=empty if empty.any() else None)


def _integer_like_extreme(arr: pa.Array, g: np.ndarray, n_groups: int,
                          largest: bool) -> pa.Array | None:
    """min/max of dates, times, timestamps, durations (their int64 view) and decimals whose
    unscaled values fit int64 (precision <= 18): equal values are identical, so
    ``np.minimum.at`` / ``np.maximum.at`` over the integers; None for other types."""
    t = arr.type
    if pa.types.is_decimal128(t) and t.precision <= 18:
        valid = _valid_or_none(arr)
        v = _decimal_words(arr)[:, 0]
    else:
        got = _integer_values(arr)
        if got is None:
            return None
        v, valid = got
    v, gv = _sel(v, valid), _sel(g, valid)
    info = np.iinfo(np.int64)
    ext = np.full(n_groups, info.min if largest else info.max, dtype=np.int64)
    (np.maximum if largest else np.minimum).at(ext, gv, v)
    empty = _counts(gv, n_groups) == 0
    if pa.types.is_decimal(t):
        return _decimal_array(ext, empty, t)
    # Rebuild the array in its own type from the integer values.
    width = pa.int32() if t.bit_width == 32 else pa.int64()
    ints = pa.array(ext.astype(width.to_pandas_dtype(), copy=False), type=width,
                    mask=empty if empty.any() else None)
    return ints.view(t)


def _float_extreme_pos(arr: pa.Array, valid: np.ndarray, g: np.ndarray, n_groups: int,
                       largest: bool) -> np.ndarray:
    v = arr.to_numpy(zero_copy_only=False).astype(np.float64, copy=False)
    nan = np.isnan(v) & valid
    num = valid & ~nan
    has_nan = np.bincount(g[nan], minlength=n_groups) > 0
    if largest:
        ext = np.full(n_groups, -np.inf)
        np.maximum.at(ext, g[num], v[num])
        hit = (nan & has_nan[g]) | (num & ~has_nan[g] & (v == ext[g]))
    else:
        ext = np.full(n_groups, np.inf)
        np.minimum.at(ext, g[num], v[num])
        only_nan = has_nan & (np.bincount(g[num], minlength=n_groups) == 0)
        hit = (num & (v == ext[g])) | (nan & only_nan[g])
    return _first_pos(g[hit], np.flatnonzero(hit), n_groups)


def _first_last(arr: pa.Array, g: np.ndarray, n_groups: int, ignore_nulls: bool, *,
                last: bool) -> pa.Array:
    rows = np.flatnonzero(_valid(arr)) if ignore_nulls else np.arange(len(g), dtype=np.int64)
    pos = (_last_pos if last else _first_pos)(g[rows], rows, n_groups)
    return _take_or_null(arr, pos)


def _bool(arr: pa.Array, g: np.ndarray, n_groups: int, *, conj: bool) -> pa.Array:
    valid = _valid(arr)
    cnt = _counts(g[valid], n_groups)
    vals = _true_mask(arr)
    if conj:
        any_false = np.bincount(g[valid & ~vals], minlength=n_groups) > 0
        res = ~any_false
    else:
        res = np.bincount(g[valid & vals], minlength=n_groups) > 0
    empty = cnt == 0
    return pa.array(res, type=pa.bool_(), mask=empty if empty.any() else None)


def _holds_group_extreme(ranks: np.ndarray, gv: np.ndarray, n_groups: int, *,
                         largest: bool) -> np.ndarray:
    """Mask of the rows whose rank is their group's maximum (``largest``) or minimum."""
    if largest:
        ext = np.full(n_groups, np.iinfo(np.int64).min, dtype=np.int64)
        np.maximum.at(ext, gv, ranks)
    else:
        ext = np.full(n_groups, np.iinfo(np.int64).max, dtype=np.int64)
        np.minimum.at(ext, gv, ranks)
    return ranks == ext[gv]


def _by(value: pa.Array, ordering: pa.Array, g: np.ndarray, n_groups: int, *,
        largest: bool) -> pa.Array:
    """``max_by``/``min_by``: the value at the last row holding the extreme ordering."""
    return _take_or_null(value, by_positions(ordering, g, n_groups, largest=largest))


def by_positions(ordering: pa.Array, g: np.ndarray, n_groups: int, *,
                 largest: bool) -> np.ndarray:
    """Per group, the last row holding the largest (smallest) non-NULL ``ordering``; -1 for
    groups without one (shared with the max_by/min_by buffers)."""
    rows = np.flatnonzero(_valid(ordering))
    pos = np.full(n_groups, -1, dtype=np.int64)
    if len(rows):
        gv = g[rows]
        hit = _holds_group_extreme(_ranks(ordering)[rows], gv, n_groups, largest=largest)
        hg, hrows = gv[hit], rows[hit]
        ug, idx = np.unique(hg[::-1], return_index=True)
        pos[ug] = hrows[::-1][idx]
    return pos
