"""Bounded residuals: semi / anti / existence hash joins whose residual condition is one
comparison between a build column and a stream expression, probed without candidate pairs.

For a stream row with key ``k`` and stream value ``x``, a LeftSemi / LeftAnti / ExistenceJoin
(stream = left, BuildRight, not null aware) only needs ``EXISTS b IN G(k): C(b, x)`` where
``G(k)`` is the build rows of key ``k``.  When ``C`` is a single comparison that answer depends
only on the minimum and maximum of ``G(k)``'s non-NULL ``b`` values (NULL in either operand
makes the comparison NULL, i.e. not TRUE):

======================  ==================================================================
``C(b, x)``             exists iff (``x`` not NULL and ``G`` has a non-NULL ``b``, and ...)
======================  ==================================================================
``NOT (b = x)``         ``min(G) != x or max(G) != x``
``b < x`` / ``b <= x``  ``min(G) < x`` / ``min(G) <= x``
``b > x`` / ``b >= x``  ``max(G) > x`` / ``max(G) >= x``
======================  ==================================================================

``x OP b`` is ``b MIRROR(OP) x``.  So the build side is reduced to one row per key
(:class:`BoundedRelation`: Arrow's hash ``group_by(keys)`` with ``min(b)`` and ``max(b)``, which
skip NULL ``b`` and give NULL bounds to an all-NULL group; a build batch stored in key order --
one integer key without NULLs, a NULL-free numeric ``b``, runs of equal keys -- is first reduced
to one row per run with numpy's ``reduceat``, ``_run_bounds``), indexed by a
:class:`~ember.runtime.local.joins.hashed_relation.HashedRelation` on those unique keys (NULL-key
build rows dropped there, as always); a stream batch costs one key lookup, one gather of the
bounds and one vectorized comparison: no pair expansion, no pair gathers.  Stream rows with a
NULL or absent key find no row: not matched (kept by anti joins, as the pair path does).

When (:func:`analyze_residual`): ``ENABLED``; LeftSemi / LeftAnti / ExistenceJoin building the
right side, not the null-aware anti join; the condition is exactly one of the comparisons above
(``NOT (b = x)`` included, ``<=>`` not); ``b`` is a build-side attribute; ``x`` a deterministic
expression over stream columns only; the join keys of types Arrow groups by value (integral,
boolean, date, timestamp, decimal, string, binary: not floats -- NaN, -0.0 -- nor nested types);
``b`` and ``x`` of one type whose min / max order is the comparison's order: integral types, boolean, date, timestamp (numpy path), decimal, string and binary (Arrow
``hash_min_max``, byte-wise like ``pyarrow.compute.less`` that the pair path compares with,
and Spark's UTF8_BINARY).  Floating point columns are excluded (Spark's NaN = NaN and NaN-largest
order differ from IEEE min / max).

Errors (ANSI) are unchanged: ``b`` is a column (cannot fail); a stream expression that is not a
column or literal is evaluated only on the stream rows whose key has build rows -- exactly the
rows the pair path evaluates it on.

Memory: the build rows are reserved while they are collected, as for the pair path (so grace
spilling is unchanged: each spilled bucket builds its own bounded relation); once reduced, the
shuffled hash join holds only :meth:`BoundedRelation.estimated_size` (keys, bounds, index).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from ember import types as T
from ember.execution.kernels.conditions import true_mask
from ember.execution.kernels.batches import plain_array
from ember.execution.prepare import prepare
from ember.expressions.base import AttributeReference, BoundReference, Expression, Literal
from ember.expressions.common import to_array
from ember.expressions.predicates import (
    EqualTo,
    GreaterThan,
    GreaterThanOrEqual,
    LessThan,
    LessThanOrEqual,
    Not,
)
from ember.plans.logical.join_type import JoinType
from ember.runtime.local.joins.hashed_relation import HashedRelation, eval_keys
from ember.runtime.local.joins.kernel import Candidates

__all__ = ["ENABLED", "ResidualBound", "BoundedRelation", "analyze_residual"]

#: Module switch of the fast path (tests and A/B measurements turn it off).
ENABLED = True

_MIRROR = {"<>": "<>", "<": ">", "<=": ">=", ">": "<", ">=": "<="}
_NUMPY_TYPES = (T.IntegralType, T.BooleanType, T.DateType, T.TimestampType)
_ARROW_TYPES = (T.DecimalType, T.StringType, T.BinaryType)
#: join key types whose Arrow grouping equality is the hash join's key equality (not floats:
#: NaN / -0.0; not nested types)
_KEY_TYPES = _NUMPY_TYPES + _ARROW_TYPES


@dataclass(frozen=True, slots=True)
class ResidualBound:
    """A residual ``b OP x`` (``OP`` in ``<>``, ``<``, ``<=``, ``>``, ``>=``): ``b`` is build
    column ``build_ordinal``; ``stream_expr`` (``x``) is bound to the stream output."""

    op: str
    build_ordinal: int
    stream_expr: Expression
    #: ``x`` is a column or literal: it cannot fail, so it is evaluated over whole batches
    stream_is_simple: bool
    dtype: T.DataType

    @property
    def numeric(self) -> bool:
        return isinstance(self.dtype, _NUMPY_TYPES)


def _split(condition: Expression) -> tuple[str, Expression, Expression] | None:
    match condition:
        case Not(child=EqualTo(left=l, right=r)):
            return "<>", l, r
        case LessThan(left=l, right=r):
            return "<", l, r
        case LessThanOrEqual(left=l, right=r):
            return "<=", l, r
        case GreaterThan(left=l, right=r):
            return ">", l, r
        case GreaterThanOrEqual(left=l, right=r):
            return ">=", l, r
        case _:
            return None


def analyze_residual(join_type: JoinType, build_left: bool, null_aware: bool,
                     condition: Expression | None,
                     build_attrs: Sequence[AttributeReference],
                     stream_attrs: Sequence[AttributeReference],
                     build_keys: Sequence[Expression] = ()) -> ResidualBound | None:
    """The :class:`ResidualBound` of a hash join's residual ``condition``, or None when the
    bounded probe does not apply (see the module docstring).  ``build_keys``: the build side's
    join keys (their types must group by value)."""
    if (not ENABLED or condition is None or build_left or null_aware
            or not join_type.is_left_existence):
        return None
    if not all(isinstance(k.data_type, _KEY_TYPES) for k in build_keys):
        return None
    parts = _split(condition)
    if parts is None:
        return None
    op, left, right = parts
    build_ids = {a.id: i for i, a in enumerate(build_attrs)}
    stream_ids = {a.id for a in stream_attrs}
    if isinstance(left, AttributeReference) and left.id in build_ids:
        b, x = left, right
    elif isinstance(right, AttributeReference) and right.id in build_ids:
        b, x, op = right, left, _MIRROR[op]
    else:
        return None
    if b.id in stream_ids or not x.references <= stream_ids or not x.deterministic:
        return None
    dtype = b.data_type
    if x.data_type != dtype or not isinstance(dtype, _NUMPY_TYPES + _ARROW_TYPES):
        return None
    simple = isinstance(x, (AttributeReference, Literal))
    return ResidualBound(op, build_ids[b.id], prepare(x, stream_attrs), simple, dtype)


# ---------------------------------------------------------------------------------------------
# The reduced build side


def representatives(cand: Candidates) -> np.ndarray:
    """Per looked-up row: the first build row of its key (-1: NULL or absent key)."""
    if cand.match is not None:
        return np.asarray(cand.match, dtype=np.int64)
    n = len(cand.counts)
    first = cand.lo if cand.lo is not None else np.zeros(n, dtype=np.int64)
    hit = cand.counts > 0
    if cand.order is not None:
        if not len(cand.order):
            return np.full(n, -1, dtype=np.int64)
        first = cand.order[np.where(hit, first, 0)]
    return np.where(hit, first, -1).astype(np.int64, copy=False)


def _plain(arr: pa.Array, dtype: T.DataType) -> pa.Array:
    arr = plain_array(to_array(arr, len(arr)))
    target = dtype.to_arrow()
    return arr if arr.type == target else arr.cast(target)


def _numpy_values(arr: pa.Array) -> tuple[np.ndarray, np.ndarray | None]:
    """(values, validity or None) of a boolean / integer / date / timestamp array as numpy."""
    valid = (np.asarray(arr.is_valid().to_numpy(zero_copy_only=False), dtype=bool)
             if arr.null_count else None)
    t = arr.type
    if pa.types.is_boolean(t):
        filled = pc.fill_null(arr, False) if arr.null_count else arr
        vals = np.asarray(filled.to_numpy(zero_copy_only=False), dtype=np.uint8)
        return vals, valid
    if not pa.types.is_integer(t):
        arr = arr.view(pa.int32() if t.bit_width == 32 else pa.int64())
    if arr.null_count:
        arr = pc.fill_null(arr, 0)
    return arr.to_numpy(zero_copy_only=False), valid


#: a build batch is pre-reduced over runs of equal consecutive keys when it has at most this
#: many runs per row (files stored in key order: TPC-H's lineitem has ~4 rows per order)
_RUNS_PER_ROW = 0.75


def _run_bounds(keys: list[pa.Array], v: pa.Array, numeric: bool) -> list[pa.Array] | None:
    """``[key, min(v), max(v)]`` over the runs of equal consecutive keys of one build batch --
    min and max combine, so the hash group-by then sees one row per run instead of one per
    build row -- or None when that does not apply (several key columns, a non-integer key,
    NULLs in the key or in ``v``, a non-numeric ``v``, or too many runs)."""
    if len(keys) != 1 or not numeric or v.null_count or len(v) < 2:
        return None
    key = keys[0]
    if not pa.types.is_integer(key.type) or key.null_count:
        return None
    k = key.to_numpy(zero_copy_only=False)
    change = np.flatnonzero(k[1:] != k[:-1]) + 1
    if len(change) + 1 > _RUNS_PER_ROW * len(k):
        return None
    starts = np.concatenate(([0], change))
    vals, _ = _numpy_values(v)
    mn = np.minimum.reduceat(vals, starts)
    mx = np.maximum.reduceat(vals, starts)
    return [key.take(pa.array(starts)), _typed(mn, v.type), _typed(mx, v.type)]


def _typed(values: np.ndarray, t: pa.DataType) -> pa.Array:
    """``values`` (as :func:`_numpy_values` gives them) back as an Arrow array of type ``t``."""
    if pa.types.is_boolean(t):
        return pa.array(values.astype(bool))
    if pa.types.is_integer(t):
        return pa.array(values, t)
    return pa.array(values, pa.int32() if t.bit_width == 32 else pa.int64()).view(t)


def _with_empty_slot(values: np.ndarray, fill) -> np.ndarray:
    out = np.empty(len(values) + 1, dtype=values.dtype)
    out[:-1] = values
    out[-1] = fill
    return out


class BoundedRelation:
    """The build side reduced to one row per key (``keys ..., min(b), max(b)`` over the non-NULL
    ``b``; Arrow's hash ``min_max``), indexed by a :class:`HashedRelation` on those unique keys
    (see the module docstring).  The bounds are read by the relation's row numbers; one trailing
    slot (index -1) answers stream rows whose key is NULL or absent."""

    def __init__(self, bound: ResidualBound, build_keys: Sequence[Expression],
                 build_batches: Iterable[pa.RecordBatch]) -> None:
        self.bound = bound
        nk = len(build_keys)
        names = [f"k{i}" for i in range(nk)]
        parts = []
        self.build_rows = 0
        for b in build_batches:
            if b.num_rows:
                self.build_rows += b.num_rows
                cols = [plain_array(k) for k in eval_keys(build_keys, b)]
                v = _plain(b.column(bound.build_ordinal), bound.dtype)
                parts.append(pa.RecordBatch.from_arrays(
                    _run_bounds(cols, v, bound.numeric) or cols + [v, v],
                    names=names + ["mn", "mx"]))
        if parts:
            g = pa.Table.from_batches(parts).group_by(names, use_threads=False).aggregate(
                [("mn", "min"), ("mx", "max")])
            cols = [g.column(n).combine_chunks() for n in names]
            cols += [g.column("mn_min").combine_chunks(), g.column("mx_max").combine_chunks()]
        else:
            t = bound.dtype.to_arrow()
            cols = [pa.array([], type=k.data_type.to_arrow()) for k in build_keys]
            cols += [pa.array([], type=t), pa.array([], type=t)]
        reduced = pa.RecordBatch.from_arrays(cols, names=names + ["min", "max"])
        del parts, cols
        self.relation = HashedRelation.build(
            reduced, tuple(BoundReference(i, k.data_type, True) for i, k in enumerate(build_keys)),
            allows_null_key=False)
        rb = self.relation.batch
        mn, mx = rb.column(nk), rb.column(nk + 1)
        self.num_keys = rb.num_rows
        # a key whose b values are all NULL has NULL bounds: it never satisfies the comparison
        self._has = _with_empty_slot(
            np.asarray(mn.is_valid().to_numpy(zero_copy_only=False), dtype=bool), False)
        if bound.numeric:
            self._min: np.ndarray | pa.Array = _with_empty_slot(_numpy_values(mn)[0], 0)
            self._max: np.ndarray | pa.Array = _with_empty_slot(_numpy_values(mx)[0], 0)
        else:
            self._min, self._max = mn, mx

    # -- HashedRelation-like surface -----------------------------------------------------------

    @property
    def batch(self) -> pa.RecordBatch:
        """The reduced rows (keys, min, max)."""
        return self.relation.batch

    @property
    def num_rows(self) -> int:
        return self.relation.num_rows

    def estimated_size(self) -> int:
        n = self.relation.estimated_size() + self._has.nbytes
        if self.bound.numeric:
            n += self._min.nbytes + self._max.nbytes
        return int(n)

    def __repr__(self) -> str:
        return (f"BoundedRelation(op={self.bound.op!r}, rows={self.build_rows}, "
                f"keys={self.num_keys})")

    # -- probe ---------------------------------------------------------------------------------

    def exists(self, stream: pa.RecordBatch, stream_keys: Sequence[pa.Array]) -> np.ndarray:
        """Per stream row: whether some build row of its key satisfies the residual."""
        n = stream.num_rows
        rep = representatives(self.relation.lookup(stream_keys))
        out = np.zeros(n, dtype=bool)
        if not n:
            return out
        bound = self.bound
        if bound.stream_is_simple:
            rows = None
            x = _plain(to_array(bound.stream_expr.eval(stream), n), bound.dtype)
        else:
            # evaluated on the rows with build rows only, as the pair path does (ANSI errors)
            rows = np.flatnonzero(rep >= 0)
            if not len(rows):
                return out
            sub = stream if len(rows) == n else stream.take(pa.array(rows, type=pa.int64()))
            x = _plain(to_array(bound.stream_expr.eval(sub), len(rows)), bound.dtype)
            rep = rep[rows]
        hit = self._has[rep]
        if bound.numeric:
            xv, xvalid = _numpy_values(x)
            if xvalid is not None:
                hit &= xvalid
            res = _compare_numpy(bound.op, self._min, self._max, rep, xv) & hit
        else:
            res = np.zeros(len(rep), dtype=bool)
            sel = np.flatnonzero(hit)
            if len(sel):
                gi = pa.array(rep[sel], type=pa.int64())
                xs = x.take(pa.array(sel, type=pa.int64()))
                res[sel] = true_mask(_compare_arrow(bound.op, self._min.take(gi),
                                                    self._max.take(gi), xs), len(sel))
        if rows is None:
            return res
        out[rows] = res
        return out


def _compare_numpy(op: str, mn: np.ndarray, mx: np.ndarray, rep: np.ndarray, x: np.ndarray
                   ) -> np.ndarray:
    """``op`` of the bounds of rows ``rep`` with ``x`` (only the bound ``op`` reads is gathered)."""
    match op:
        case "<>":
            return (mn[rep] != x) | (mx[rep] != x)
        case "<":
            return mn[rep] < x
        case "<=":
            return mn[rep] <= x
        case ">":
            return mx[rep] > x
        case _:
            return mx[rep] >= x


def _compare_arrow(op: str, mn: pa.Array, mx: pa.Array, x: pa.Array) -> pa.Array:
    match op:
        case "<>":
            return pc.or_(pc.not_equal(mn, x), pc.not_equal(mx, x))
        case "<":
            return pc.less(mn, x)
        case "<=":
            return pc.less_equal(mn, x)
        case ">":
            return pc.greater(mx, x)
        case _:
            return pc.greater_equal(mx, x)
