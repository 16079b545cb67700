"""Range ("band") candidate pruning for the nested loop joins (beyond Spark, which compares every
pair).

A BroadcastNestedLoopJoin or CartesianProduct condition such as
``a.t BETWEEN b.t - 5 AND b.t + 5`` (``a.t >= b.t - 5 AND a.t <= b.t + 5``) has conjuncts that
compare an expression over the stream side with an expression over the build side.  Every pair
that satisfies the condition satisfies each of them, so the build rows a stream row can match lie
in a *range* of the build rows sorted on such a build expression:

1. :meth:`BandIndex.of` picks, among the conjuncts ``build_expr OP stream_expr`` (after flipping
   ``stream OP build``; ``OP`` one of ``<``, ``<=``, ``>``, ``>=``; both sides of one numeric,
   date or timestamp type), a lower and an upper bound on the build side;
2. on first use the build expressions are evaluated once, the build rows with a non-NULL value
   are sorted (stably) on the lower bound's expression; the upper bound is used only when its
   values are also non-decreasing in that order (``b.t - 5`` and ``b.t + 5`` are), otherwise only
   one bound prunes;
3. per stream batch the stream expressions are evaluated and two ``searchsorted`` give each
   stream row a run of candidate build rows -- a
   :class:`~ember.runtime.local.joins.kernel.Candidates` -- on which the *whole* condition is then
   evaluated as before.

Pruning only drops pairs whose comparison is not TRUE (a NULL operand never matches; NaN is the
largest value in numpy's sort order and in Spark's comparisons), so results are unchanged, except
that a stream row's partners come in the order of the sorted build expression rather than build
order (join output order is unspecified in Spark too).  Evaluation errors (ANSI overflow in a bound
expression) disable pruning, so the error surfaces -- or not -- exactly as in the full
comparison.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pyarrow as pa

from ember.execution.prepare import prepare
from ember.expressions.base import AttributeReference, Expression, split_conjuncts
from ember.expressions.common import to_array
from ember.expressions.predicates import (
    GreaterThan,
    GreaterThanOrEqual,
    LessThan,
    LessThanOrEqual,
)
from ember.runtime.local.joins.hashed_relation import HashedRelation
from ember.runtime.local.joins.kernel import Candidates

_FLIP = {LessThan: GreaterThan, LessThanOrEqual: GreaterThanOrEqual,
         GreaterThan: LessThan, GreaterThanOrEqual: LessThanOrEqual}


def _numeric(arr: pa.Array) -> tuple[np.ndarray, np.ndarray] | None:
    """(values as int64/float64, validity) of a numeric/date/timestamp array, None otherwise."""
    if isinstance(arr, pa.ChunkedArray):
        arr = arr.combine_chunks()
    t = arr.type
    if pa.types.is_integer(t) and not pa.types.is_uint64(t):
        target = pa.int64()
    elif pa.types.is_floating(t):
        target = pa.float64()
    elif pa.types.is_date32(t) or pa.types.is_time32(t):
        arr, target = arr.view(pa.int32()), pa.int64()
    elif pa.types.is_date64(t) or pa.types.is_timestamp(t) or pa.types.is_time64(t) or \
            pa.types.is_duration(t):
        arr, target = arr.view(pa.int64()), pa.int64()
    else:
        return None
    if arr.type != target:
        arr = arr.cast(target)
    valid = (np.ones(len(arr), dtype=bool) if not arr.null_count
             else np.asarray(arr.is_valid().to_numpy(zero_copy_only=False), dtype=bool))
    fill = 0.0 if target == pa.float64() else 0
    vals = arr.fill_null(fill) if arr.null_count else arr
    return vals.to_numpy(zero_copy_only=False), valid


@dataclass(slots=True)
class _Bound:
    build: Expression      # bound to the build output
    stream: Expression     # bound to the stream output
    strict: bool           # ``<`` / ``>``


def _eval(expr: Expression, batch: pa.RecordBatch) -> pa.Array:
    return to_array(expr.eval(batch), batch.num_rows)


class BandIndex:
    """Build rows sorted on a band conjunct's build expression (see the module docstring)."""

    def __init__(self, lower: _Bound | None, upper: _Bound | None) -> None:
        self.lower = lower
        self.upper = upper
        self._lock = threading.Lock()
        self._ready = False
        self._disabled = False
        self.order: np.ndarray = np.zeros(0, dtype=np.int64)
        self.lo_keys: np.ndarray | None = None
        self.hi_keys: np.ndarray | None = None

    @classmethod
    def of(cls, condition: Expression | None, stream_attrs: Sequence[AttributeReference],
           build_attrs: Sequence[AttributeReference]) -> "BandIndex | None":
        """The index for ``condition`` (None when no conjunct bounds a build expression)."""
        if condition is None:
            return None
        sids = {a.id for a in stream_attrs}
        bids = {a.id for a in build_attrs}
        lowers: list[_Bound] = []
        uppers: list[_Bound] = []
        for c in split_conjuncts(condition):
            op = type(c)
            if op not in _FLIP:
                continue
            left, right = c.left, c.right
            lr, rr = left.references, right.references
            if lr and rr and lr <= bids and rr <= sids:
                b, s = left, right
            elif lr and rr and lr <= sids and rr <= bids:
                b, s, op = right, left, _FLIP[op]
            else:
                continue
            if not (b.deterministic and s.deterministic) or b.data_type != s.data_type:
                continue
            try:
                bound = _Bound(prepare(b, build_attrs), prepare(s, stream_attrs),
                               op in (LessThan, GreaterThan))
            except Exception:  # noqa: BLE001 - an expression that cannot bind is just not used
                continue
            # build OP stream: build > stream / build >= stream bounds the build value below.
            (lowers if op in (GreaterThan, GreaterThanOrEqual) else uppers).append(bound)
        if not lowers and not uppers:
            return None
        return cls(lowers[0] if lowers else None, uppers[0] if uppers else None)

    # -- build ---------------------------------------------------------------------------------

    def _prepare(self, build: pa.RecordBatch) -> None:
        try:
            first = self.lower or self.upper
            assert first is not None
            k1 = _numeric(_eval(first.build, build))
            other = self.upper if self.lower is not None else None
            k2 = _numeric(_eval(other.build, build)) if other is not None else None
        except Exception:  # noqa: BLE001 - the full comparison will raise (or not) as Spark
            self._disabled = True
            return
        if k1 is None or (other is not None and k2 is None):
            self._disabled = True
            return
        v1, valid = k1
        if k2 is not None:
            valid = valid & k2[1]
        rows = np.flatnonzero(valid)
        order = rows[np.argsort(v1[rows], kind="stable")]
        s1 = v1[order]
        if self.lower is not None:
            self.lo_keys = s1
            if k2 is not None:
                s2 = k2[0][order]
                if len(s2) < 2 or bool((s2[1:] >= s2[:-1]).all()) and not np.isnan(
                        s2.astype(np.float64, copy=False)).any():
                    self.hi_keys = s2
                else:
                    self.upper = None
        else:
            self.hi_keys = s1
        self.order = order.astype(np.int64)

    def ensure(self, build: pa.RecordBatch) -> bool:
        """Build the index (once); False when pruning is unavailable."""
        if not self._ready:
            with self._lock:
                if not self._ready:
                    self._prepare(build)
                    self._ready = True
        return not self._disabled

    # -- probe ---------------------------------------------------------------------------------

    def candidates(self, build: pa.RecordBatch, stream: pa.RecordBatch) -> Candidates | None:
        """Candidate build rows of each stream row (None: every pair must be compared)."""
        if not self.ensure(build):
            return None
        n = stream.num_rows
        nb = len(self.order)
        try:
            lo = np.zeros(n, dtype=np.int64)
            hi = np.full(n, nb, dtype=np.int64)
            valid = np.ones(n, dtype=bool)
            for bound, keys, is_lower in ((self.lower, self.lo_keys, True),
                                          (self.upper, self.hi_keys, False)):
                if bound is None or keys is None:
                    continue
                sv = _numeric(_eval(bound.stream, stream))
                if sv is None:
                    return None
                vals, ok = sv
                valid &= ok
                if keys.dtype != vals.dtype:
                    if keys.dtype.kind == "f" or vals.dtype.kind == "f":
                        keys, vals = keys.astype(np.float64), vals.astype(np.float64)
                if is_lower:  # build >= s: first key >= s; build > s: first key > s
                    lo = np.searchsorted(keys, vals, side="right" if bound.strict else "left")
                else:         # build <= s: keys <= s; build < s: keys < s
                    hi = np.searchsorted(keys, vals, side="left" if bound.strict else "right")
        except Exception:  # noqa: BLE001 - the full comparison decides
            return None
        counts = np.where(valid, np.maximum(hi - lo, 0), 0).astype(np.int64)
        return Candidates(counts, lo.astype(np.int64), self.order)


class KeyedBand:
    """Band pruning inside the key groups of a hash join's build side (beyond Spark, whose hash
    and sort-merge joins compare every pair of an equal key with the residual condition).

    TPC-DS q72 joins ``catalog_sales`` and ``inventory`` on the item with the residual
    ``inv_quantity_on_hand < cs_quantity``: at SF 1 the equal items pair 1.2 billion rows, of which
    56 million pass.  When a residual conjunct bounds a build expression (as in
    :class:`BandIndex`), the build rows of each key group are sorted on it once per relation, and
    per stream batch two ``searchsorted`` over ``(group, rank of the value)`` give each stream row
    the run of its group's rows the conjunct can hold for; the whole condition is then evaluated
    on those candidates only.  As for :class:`BandIndex`, only pairs whose conjunct is not TRUE are
    dropped (a NULL build or stream value never matches), so results are unchanged but for the
    order of a stream row's partners; an evaluation error disables pruning for the batch (the full
    comparison raises, or not, as Spark).  Only the first bound of :meth:`BandIndex.of` prunes.
    """

    def __init__(self, bound: _Bound, is_lower: bool, uniq: np.ndarray, comp: np.ndarray,
                 order: np.ndarray) -> None:
        self.bound = bound
        self.is_lower = is_lower
        self.uniq = uniq      # the distinct non-NULL build values, sorted
        self.comp = comp      # per position: group * (len(uniq) + 1) + rank of its value, sorted
        self.order = order    # build row of each position

    @classmethod
    def build(cls, band: BandIndex | None, relation: HashedRelation) -> "KeyedBand | None":
        """The pruning index of ``relation`` (None when ``band`` is None, a key has at most one
        row, or the build expression is not numeric or fails)."""
        runs = relation.group_runs() if band is not None and relation.num_rows else None
        if runs is None:
            return None
        bound, is_lower = (band.lower, True) if band.lower is not None else (band.upper, False)
        try:
            values = _numeric(_eval(bound.build, relation.batch))
        except Exception:  # noqa: BLE001 - the full comparison will raise (or not) as Spark
            return None
        if values is None:
            return None
        order, group = runs
        v, valid = values
        keep = valid[order]
        order, group = order[keep], group[keep]
        vals = v[order]
        uniq = np.unique(vals)
        comp = group * (len(uniq) + 1) + np.searchsorted(uniq, vals)
        by = np.argsort(comp, kind="stable")
        return cls(bound, is_lower, uniq, comp[by], order[by].astype(np.int64, copy=False))

    def candidates(self, relation: HashedRelation, stream_keys: Sequence[pa.Array],
                   stream: pa.RecordBatch) -> Candidates | None:
        """Candidate build rows of each stream row (None: use the key's whole group)."""
        try:
            sv = _numeric(_eval(self.bound.stream, stream))
        except Exception:  # noqa: BLE001 - the full comparison decides
            return None
        if sv is None:
            return None
        vals, ok = sv
        uniq = self.uniq
        if uniq.dtype != vals.dtype:
            uniq, vals = uniq.astype(np.float64), vals.astype(np.float64)
        base = relation.groups_of(stream_keys) * (len(uniq) + 1)
        strict = self.bound.strict
        if self.is_lower:  # build > s: ranks past s's; build >= s: ranks from s's on
            rank = np.searchsorted(uniq, vals, side="right" if strict else "left")
            lo = np.searchsorted(self.comp, base + rank)
            hi = np.searchsorted(self.comp, base + len(uniq) + 1)
        else:              # build < s: ranks before s's; build <= s: up to s's
            rank = np.searchsorted(uniq, vals, side="left" if strict else "right")
            lo = np.searchsorted(self.comp, base)
            hi = np.searchsorted(self.comp, base + rank)
        counts = np.where(ok, np.maximum(hi - lo, 0), 0).astype(np.int64)
        return Candidates(counts, lo.astype(np.int64), self.order)
