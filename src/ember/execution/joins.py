"""Local execution of logical ``Join`` nodes, every join type.

Design (the reference semantics are spark-behavior.md 1.3 and 7.2/7.6):

1. Both inputs are materialised into one record batch each (the local runtime has one
   partition; the physical layer will later choose build/stream sides and stream the probe).
2. Candidate pairs ``(left_index, right_index)`` come from a *matcher*:

   - :class:`HashMatcher` when the condition has equi-join keys (``split_join_condition``,
     Spark's ExtractEquiJoinKeys): the key columns of both sides are encoded jointly into int64
     codes (:mod:`ember.execution.kernels.keys`: NaN == NaN, -0.0 == 0.0, NULL never matches for
     ``=`` and matches NULL for ``<=>``); the right codes are sorted once and each left row's
     range of equal codes is found with ``numpy.searchsorted``.
   - :class:`NestedLoopMatcher` otherwise: the cartesian product, enumerated in chunks.

   Pairs are produced in chunks of bounded size (``16 * batch_size``), so memory stays bounded
   by the chunk, not by the number of pairs.
3. The residual condition (or, for nested loops, the whole condition) is evaluated vectorized over
   each chunk of pairs; only TRUE passes (NULL and FALSE fail).
4. Per join type, numpy masks of matched rows finish the job: outer joins pad unmatched rows
   with NULLs (``take`` with NULL indices is not needed: padding columns are ``pa.nulls``),
   semi/anti/existence joins use the left "has a partner" mask; anti keeps left rows with NULL
   keys because they can never have a partner.

Single-column NOT IN (a LeftAnti join whose whole condition is ``(a = b) OR isnull(a = b)``,
``extract_null_aware_anti_join_keys``) has a fast path with Spark's null-aware semantics
(spark-behavior.md 7.3): empty build side -> every left row; a NULL on the build side -> no row;
otherwise left rows with a non-NULL key absent from the build side.  Multi-column NOT IN and NOT IN
with extra correlated conjuncts go through the nested-loop path, which yields the same answers.

Output batches have at most ``ctx.batch_size`` rows.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from ember.conf import OPTIMIZE_NULL_AWARE_ANTI_JOIN
from ember.errors import InternalError
from ember.execution.kernels.batches import concat, make_batch, schema_of
from ember.execution.kernels.keys import encode_sides, is_encodable
from ember.expressions.base import AttributeReference, Expression, bind_references
from ember.plans.logical.join_type import JoinType
from ember.plans.logical.patterns import extract_null_aware_anti_join_keys, split_join_condition

# Candidate pairs are enumerated in chunks of PAIR_CHUNK_FACTOR * batch_size pairs.
PAIR_CHUNK_FACTOR = 16
MIN_PAIR_CHUNK = 32


# ---------------------------------------------------------------------------------------------
# Matchers: where candidate pairs come from


class HashMatcher:
    """Equi-join candidate pairs from jointly encoded key codes (-1 = never matches)."""

    def __init__(self, left_codes: np.ndarray, right_codes: np.ndarray) -> None:
        self.match: np.ndarray | None = None
        valid = np.flatnonzero(right_codes >= 0)
        top = int(right_codes.max()) + 1 if len(valid) else 0
        if 0 < top <= 4 * (len(left_codes) + len(right_codes)) + 1024:
            vcodes = right_codes[valid]
            per_code = np.bincount(vcodes, minlength=top)
            if int(per_code.max()) <= 1:
                # Unique right keys (e.g. a foreign key to a primary key): each left row has at
                # most one partner, found by one direct-address lookup.  Slot ``top`` is -1 and
                # also serves left code -1 (NULL key) through negative indexing.
                pos = np.full(top + 1, -1, dtype=np.int64)
                pos[vcodes] = valid
                self.match = pos[np.minimum(left_codes, top)]
                self.left_rows = np.flatnonzero(self.match >= 0)
                self.total = len(self.left_rows)
                return
        order = valid[np.argsort(right_codes[valid], kind="stable")]
        sorted_codes = right_codes[order]
        top = int(sorted_codes[-1]) + 1 if len(sorted_codes) else 0
        if top <= 4 * (len(left_codes) + len(right_codes)) + 1024:
            # Dense codes (the usual case): direct-address tables instead of binary searches.
            per_code = np.bincount(sorted_codes, minlength=top)
            first = np.zeros(top + 1, dtype=np.int64)
            np.cumsum(per_code, out=first[1:])
            inside = (left_codes >= 0) & (left_codes < top)
            lc = np.where(inside, left_codes, 0)
            lo = first[lc]
            counts = np.where(inside, per_code[lc] if top else 0, 0).astype(np.int64)
        else:
            lo = np.searchsorted(sorted_codes, left_codes, side="left")
            hi = np.searchsorted(sorted_codes, left_codes, side="right")
            counts = (hi - lo).astype(np.int64, copy=False)
            counts[left_codes < 0] = 0
        self.order = order
        self.lo = lo
        self.counts = counts
        self.ends = np.cumsum(counts)
        self.starts = self.ends - counts
        self.total = int(self.ends[-1]) if len(self.ends) else 0

    def has_partner(self) -> np.ndarray:
        """Per left row: whether some right row has an equal key (ignoring any residual)."""
        if self.match is not None:
            return self.match >= 0
        return self.counts > 0

    def pair_chunks(self, chunk: int) -> Iterator[tuple[np.ndarray, np.ndarray]]:
        if self.match is not None:
            for p0 in range(0, self.total, chunk):
                li = self.left_rows[p0:p0 + chunk]
                yield li, self.match[li]
            return
        for p0 in range(0, self.total, chunk):
            p1 = min(self.total, p0 + chunk)
            # Pairs are left-major: the chunk covers the left rows l0..l1.
            l0 = int(np.searchsorted(self.ends, p0, side="right"))
            l1 = int(np.searchsorted(self.ends, p1 - 1, side="right"))
            base = int(self.starts[l0])
            if int(self.ends[l1]) - base <= 4 * chunk:
                li = np.repeat(np.arange(l0, l1 + 1, dtype=np.int64),
                               self.counts[l0:l1 + 1])[p0 - base:p1 - base]
                p = np.arange(p0, p1, dtype=np.int64)
            else:  # a heavily repeated key: locate each pair's left row
                p = np.arange(p0, p1, dtype=np.int64)
                li = np.searchsorted(self.ends, p, side="right")
            ri = self.order[self.lo[li] + (p - self.starts[li])]
            yield li, ri


class NestedLoopMatcher:
    """All ``n_left * n_right`` pairs, left-major, in chunks."""

    def __init__(self, n_left: int, n_right: int) -> None:
        self.n_left = n_left
        self.n_right = n_right
        self.total = n_left * n_right

    def has_partner(self) -> np.ndarray:
        return np.full(self.n_left, self.n_right > 0, dtype=bool)

    def pair_chunks(self, chunk: int) -> Iterator[tuple[np.ndarray, np.ndarray]]:
        m = self.n_right
        for p0 in range(0, self.total, chunk):
            p = np.arange(p0, min(self.total, p0 + chunk), dtype=np.int64)
            yield p // m, p % m


class PairCondition:
    """A join condition evaluated over chunks of (left_index, right_index) pairs.

    Only the referenced columns are gathered for each chunk.
    """

    def __init__(
        self,
        condition: Expression,
        left_attrs: Sequence[AttributeReference],
        right_attrs: Sequence[AttributeReference],
    ) -> None:
        refs = condition.references
        self.left_cols = [i for i, a in enumerate(left_attrs) if a.id in refs]
        self.right_cols = [i for i, a in enumerate(right_attrs) if a.id in refs]
        attrs = [left_attrs[i] for i in self.left_cols] + [right_attrs[i] for i in self.right_cols]
        self.bound = bind_references(condition, attrs)
        self.schema = schema_of(attrs)

    def mask(
        self, lb: pa.RecordBatch, rb: pa.RecordBatch, li: np.ndarray, ri: np.ndarray
    ) -> np.ndarray:
        """TRUE-only mask over the pairs."""
        li_a = pa.array(li)
        ri_a = pa.array(ri)
        cols = [lb.column(i).take(li_a) for i in self.left_cols]
        cols += [rb.column(i).take(ri_a) for i in self.right_cols]
        batch = make_batch(cols, self.schema, len(li))
        return true_mask(self.bound.eval(batch), len(li))


def true_mask(result: pa.Array | pa.ChunkedArray | pa.Scalar, n: int) -> np.ndarray:
    """numpy bool mask where a predicate's result is TRUE (NULL and FALSE -> False)."""
    if isinstance(result, pa.Scalar):
        return np.full(n, bool(result.as_py()), dtype=bool)
    if isinstance(result, pa.ChunkedArray):
        result = result.combine_chunks()
    if pa.types.is_null(result.type):
        return np.zeros(n, dtype=bool)
    if result.null_count:
        result = pc.fill_null(result, False)
    return np.asarray(result.to_numpy(zero_copy_only=False), dtype=bool)


def _eval(expr: Expression, attrs: Sequence[AttributeReference], batch: pa.RecordBatch) -> pa.Array:
    out = bind_references(expr, attrs).eval(batch)
    if isinstance(out, pa.ChunkedArray):
        out = out.combine_chunks()
    return out


# ---------------------------------------------------------------------------------------------
# Entry point


def join_output_positions(
    plan,
    left_pos: Sequence[int] | None = None,
    right_pos: Sequence[int] | None = None,
    required: frozenset[int] | None = None,
) -> list[int]:
    """Positions in ``plan.output`` of the columns :func:`execute_join` emits for these
    arguments (every output column by default)."""
    lsel, rsel = _output_selection(plan, left_pos, right_pos, required)
    n_left = len(plan.left.output)
    jt = plan.join_type
    if jt is JoinType.EXISTENCE:
        return list(lsel) + [n_left]
    return list(lsel) + [n_left + j for j in rsel]


def _output_selection(plan, left_pos, right_pos, required) -> tuple[list[int], list[int]]:
    """Positions in the left and right outputs of the emitted columns."""
    lout, rout = plan.left.output, plan.right.output
    lp = range(len(lout)) if left_pos is None else left_pos
    rp = range(len(rout)) if right_pos is None else right_pos
    lsel = [i for i in lp if required is None or lout[i].id in required]
    if plan.join_type in (JoinType.LEFT_SEMI, JoinType.LEFT_ANTI, JoinType.EXISTENCE):
        return lsel, []
    return lsel, [j for j in rp if required is None or rout[j].id in required]


def execute_join(
    plan,
    left: Iterator[pa.RecordBatch],
    right: Iterator[pa.RecordBatch],
    ctx,
    *,
    left_pos: Sequence[int] | None = None,
    right_pos: Sequence[int] | None = None,
    required: frozenset[int] | None = None,
) -> Iterator[pa.RecordBatch]:
    """Run ``plan`` (a resolved ``Join``) over its children's batches.

    By default the input batches hold every column of the children's outputs and the result
    every column of ``plan.output``.  The executor may prune: ``left_pos``/``right_pos`` are the
    positions (in ``plan.left.output``/``plan.right.output``) of the columns the input batches
    hold (they must include the condition's columns), and only output attributes whose id is in
    ``required`` are emitted (see :func:`join_output_positions`); the others are never gathered.
    Input batches may be larger than ``ctx.batch_size``.

    >>> # Join(l, r, JoinType.LEFT_OUTER, a#1 = b#2): every left row, NULL-padded when unmatched
    """
    jt = plan.join_type
    if not isinstance(jt, JoinType):
        raise InternalError(f"Join executor: unresolved join type {jt}")
    lfull, rfull = plan.left.output, plan.right.output
    lpos = list(range(len(lfull))) if left_pos is None else list(left_pos)
    rpos = list(range(len(rfull))) if right_pos is None else list(right_pos)
    lattrs = [lfull[i] for i in lpos]
    rattrs = [rfull[i] for i in rpos]
    lb = concat(left, schema_of(lattrs))
    rb = concat(right, schema_of(rattrs))
    out_full = plan.output
    out_schema = schema_of([out_full[i] for i in
                            join_output_positions(plan, lpos, rpos, required)])
    lsel, rsel = _output_selection(plan, lpos, rpos, required)
    lb_index = {p: k for k, p in enumerate(lpos)}
    rb_index = {p: k for k, p in enumerate(rpos)}
    # The emitted columns (zero-copy views); the key/condition columns stay in lb/rb.
    lo = _Side(lb, [lb_index[i] for i in lsel])
    ro = _Side(rb, [rb_index[j] for j in rsel])
    size = max(1, ctx.batch_size)
    chunk = max(MIN_PAIR_CHUNK, PAIR_CHUNK_FACTOR * size)

    if jt is JoinType.LEFT_ANTI and ctx.conf.get(OPTIMIZE_NULL_AWARE_ANTI_JOIN):
        naaj = extract_null_aware_anti_join_keys(plan)
        if naaj is not None and is_encodable(naaj[0].data_type.to_arrow()):
            keep = _null_aware_anti_mask(naaj[0], naaj[1], lattrs, rattrs, lb, rb)
            yield from _emit_left(lo, np.flatnonzero(keep), out_schema, size)
            return

    keys = split_join_condition(plan.condition, plan.left, plan.right)
    if keys is not None and all(
        is_encodable(k.data_type.to_arrow()) for k in keys.left_keys + keys.right_keys
    ):
        lk = [_eval(k, lattrs, lb) for k in keys.left_keys]
        rk = [_eval(k, rattrs, rb) for k in keys.right_keys]
        lcodes, rcodes = encode_sides(lk, rk, keys.null_safe)
        matcher: HashMatcher | NestedLoopMatcher = HashMatcher(lcodes, rcodes)
        residual = keys.residual
    else:
        matcher = NestedLoopMatcher(lb.num_rows, rb.num_rows)
        residual = plan.condition
    cond = PairCondition(residual, lattrs, rattrs) if residual is not None else None

    if jt.is_left_existence:
        if cond is None:
            matched = matcher.has_partner()
        else:
            matched = np.zeros(lb.num_rows, dtype=bool)
            for li, ri in matcher.pair_chunks(chunk):
                matched[li[cond.mask(lb, rb, li, ri)]] = True
        if jt is JoinType.LEFT_SEMI:
            yield from _emit_left(lo, np.flatnonzero(matched), out_schema, size)
        elif jt is JoinType.LEFT_ANTI:
            yield from _emit_left(lo, np.flatnonzero(~matched), out_schema, size)
        else:
            yield from _emit_existence(lo, matched, out_schema, size)
        return

    track_left = jt.preserves_left
    track_right = jt.preserves_right
    left_matched = np.zeros(lb.num_rows, dtype=bool) if track_left else None
    right_matched = np.zeros(rb.num_rows, dtype=bool) if track_right else None
    for li, ri in matcher.pair_chunks(chunk):
        if cond is not None:
            m = cond.mask(lb, rb, li, ri)
            li, ri = li[m], ri[m]
        if left_matched is not None:
            left_matched[li] = True
        if right_matched is not None:
            right_matched[ri] = True
        yield from _emit_pairs(lo, ro, li, ri, out_schema, size)
    if left_matched is not None:
        yield from _emit_padded(lo, np.flatnonzero(~left_matched), ro, out_schema, size,
                                left_side=True)
    if right_matched is not None:
        yield from _emit_padded(ro, np.flatnonzero(~right_matched), lo, out_schema, size,
                                left_side=False)


def _null_aware_anti_mask(
    left_key: Expression,
    right_key: Expression,
    lattrs: Sequence[AttributeReference],
    rattrs: Sequence[AttributeReference],
    lb: pa.RecordBatch,
    rb: pa.RecordBatch,
) -> np.ndarray:
    """Which left rows a single-column NOT IN keeps (spark-behavior.md 7.3)."""
    n = lb.num_rows
    if rb.num_rows == 0:
        return np.ones(n, dtype=bool)
    rk = _eval(right_key, rattrs, rb)
    if rk.null_count:
        return np.zeros(n, dtype=bool)
    if n == 0:
        return np.zeros(0, dtype=bool)
    lk = _eval(left_key, lattrs, lb)
    lcodes, rcodes = encode_sides([lk], [rk], False)
    return (lcodes >= 0) & ~np.isin(lcodes, rcodes)


# ---------------------------------------------------------------------------------------------
# Output


class _Side:
    """The emitted columns of one join side: ``batch``'s columns ``cols``, and its row count."""

    __slots__ = ("columns", "types", "num_rows")

    def __init__(self, batch: pa.RecordBatch, cols: Sequence[int]) -> None:
        self.columns = [batch.column(i) for i in cols]
        self.types = [batch.schema.field(i).type for i in cols]
        self.num_rows = batch.num_rows


def _emit_pairs(
    lo: _Side, ro: _Side, li: np.ndarray, ri: np.ndarray, schema: pa.Schema, size: int,
) -> Iterator[pa.RecordBatch]:
    for s in range(0, len(li), size):
        lt = pa.array(li[s:s + size])
        rt = pa.array(ri[s:s + size])
        cols = [c.take(lt) for c in lo.columns] + [c.take(rt) for c in ro.columns]
        yield make_batch(cols, schema, len(lt))


def _emit_left(lo: _Side, idx: np.ndarray, schema: pa.Schema, size: int) -> Iterator[pa.RecordBatch]:
    n = lo.num_rows
    if len(idx) == n:  # every row, in order: no gather needed
        for s in range(0, n, size):
            m = min(size, n - s)
            yield make_batch([c.slice(s, m) for c in lo.columns], schema, m)
        return
    for s in range(0, len(idx), size):
        t = pa.array(idx[s:s + size])
        yield make_batch([c.take(t) for c in lo.columns], schema, len(t))


def _emit_existence(
    lo: _Side, matched: np.ndarray, schema: pa.Schema, size: int
) -> Iterator[pa.RecordBatch]:
    n = lo.num_rows
    for s in range(0, n, size):
        m = min(size, n - s)
        flags = pa.array(matched[s:s + m], type=pa.bool_())
        yield make_batch([c.slice(s, m) for c in lo.columns] + [flags], schema, m)


def _emit_padded(
    kept: _Side, idx: np.ndarray, other: _Side, schema: pa.Schema,
    size: int, *, left_side: bool,
) -> Iterator[pa.RecordBatch]:
    """Rows ``idx`` of ``kept`` with NULLs for the other side's columns."""
    for s in range(0, len(idx), size):
        t = pa.array(idx[s:s + size])
        n = len(t)
        mine = [c.take(t) for c in kept.columns]
        nulls = [pa.nulls(n, type=ty) for ty in other.types]
        yield make_batch(mine + nulls if left_side else nulls + mine, schema, n)
