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
   call of its function's grouped, vectorized kernel over (group id, argument columns),
   :meth:`~ember.expressions.aggregates.AggregateFunction.aggregate` (kernels in
   :mod:`ember.expressions.aggregates.kernels`).  Any number of different DISTINCT argument
   sets, and DISTINCT with FILTER, are handled directly; the RewriteDistinctAggregates rule is not
   needed for correctness here.
4. **Results.**  Each output expression is rewritten over a "group batch" ``[keys..., aggs...]``:
   every aggregate call becomes a reference to its result column and every subtree equal to a
   grouping expression (e.g. ``a + 1`` in ``SELECT a + 1 ... GROUP BY a + 1``) a reference to its
   key column; the rewritten expressions are then evaluated like a projection.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from ember import types as T
from ember.errors import InternalError
from ember.execution.context import ExecContext
from ember.execution.kernels.batches import _zero_col, make_batch, schema_of
from ember.execution.prepare import prepare
from ember.expressions.aggregates import AggregateExpression, AggregateFunction
from ember.expressions.aggregates.kernels import _integer_values, _valid, group_counts_scope
from ember.expressions.base import (
    Alias,
    AttributeReference,
    BoundReference,
    Expression,
    Literal,
)
from ember.plans.logical.nodes import Aggregate
from ember.execution.kernels.keys import canonicalize_floats, encode_arrays
from ember.expressions.common import to_mask, eval_where, to_array, may_fail

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
        if not s.func.reads_values(s.args, s.expr.is_distinct):
            continue  # e.g. count(1), count(*): counts rows, reads no argument values
        s.arg_slots = tuple(
            slots.add(a, s.filter if _may_fail(a) else None) for a in s.args
        )
    key_cols, slot_cols, n_rows = read_inputs(batches, bound_grouping, slots.items)

    # -- 2. groups -------------------------------------------------------------------------
    gids, n_groups, group_keys = assign_groups(key_cols, n_rows)

    # -- 3. aggregates ---------------------------------------------------------------------
    results: list[pa.Array] = []

    with group_counts_scope():
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

    if pa.types.is_floating(arr.type):
        return canonicalize_floats(arr)
    if pa.types.is_struct(arr.type) and any(pa.types.is_floating(f.type) for f in arr.type):
        fields = [_canonical_key(arr.field(i)) for i in range(arr.type.num_fields)]
        return pa.StructArray.from_arrays(
            fields, fields=list(arr.type), mask=arr.is_null() if arr.null_count else None
        )
    return arr


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


def _first_rows_of_tuples(cols: list[pa.Array]) -> np.ndarray:
    """Ascending positions of the first row of each distinct tuple of ``cols`` (NULLs equal,
    floats already canonical)."""

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
    return spec.func.aggregate(args, g, n_groups)
