"""RangeJoinExec's pair enumeration: sort-and-sweep over a lower and an upper bound between the
sides (beyond Spark, whose BroadcastNestedLoopJoin compares every pair).

The condition has the conjuncts ``A: l_small <= r_big`` and ``B: r_small <= l_big`` (each
possibly strict; :mod:`ember.physical.range_join`).  Every pair satisfying both falls in exactly
one of two sets, split on the order of ``r_small`` and ``l_small``:

1. ``r_small >= l_small``: then ``r_small`` lies in ``[l_small, l_big]`` (conjunct B).  With the
   right rows sorted on ``r_small``, the candidates of a left row are one run, found by two
   ``searchsorted``;
2. ``r_small < l_small``: then ``l_small`` lies in ``(r_small, r_big]`` (conjunct A).  With the
   left rows sorted on ``l_small``, the candidates of a right row are one run.

(For a point in an interval, ``x BETWEEN lo AND hi``, set 1 holds the intervals starting at the
point and set 2, per interval, the points inside it; for interval overlap, set 1 the intervals
starting inside a left interval and set 2 the left intervals starting inside a right one -- the
idea of IEJoin (Khayyat et al., VLDB 2015) of sorting both sides on the two inequalities, reduced
to two sorted runs.)  The split uses one total order on both sides (numpy's, NaN largest as in
Spark's comparisons), so the two sets never share a pair; the run ends that do not split are
inclusive, a superset.  The candidates -- close to the matching pairs when the intervals are
well-formed, ``lo <= hi`` -- are enumerated in bounded chunks
(:meth:`~ember.runtime.local.joins.kernel.Candidates.chunks`); the two range conjuncts are
checked on each with numpy over the sorted values (as Spark compares: NaN largest, equal to
itself), the other conjuncts evaluated as expressions on the survivors
(:meth:`~ember.runtime.local.joins.kernel.JoinKernel.process_pairs`), which also applies the
join type: unmatched rows NULL-padded from matched bitmaps, semi / anti / existence decided
from them.  A row with a NULL in its two range values matches nothing (its
comparisons are not TRUE).

A stream partition is joined whole (its batches concatenated) with the build side.  When a range
value cannot be computed (an ANSI error in ``b.lo - 5``) every pair is compared, so the error
surfaces -- or not -- as in the nested loop.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Any

import numpy as np
import pyarrow as pa

from ember.execution.kernels.batches import conform_batch
from ember.execution.kernels.conditions import PairCondition
from ember.execution.prepare import prepare
from ember.expressions.base import AttributeReference
from ember.expressions.common import to_array
from ember.physical.range_join import RangeCondition
from ember.runtime.local.joins.band import _numeric
from ember.runtime.local.joins.hashed_relation import to_batch
from ember.runtime.local.joins.kernel import Candidates, JoinKernel

__all__ = ["RangeIndex"]

#: stream rows joined at once (their candidate runs are computed together; the memory held is
#: the slice, the build side and one chunk of pairs)
SLICE_ROWS = 1 << 20


def _values(expr: Any, batch: pa.RecordBatch) -> tuple[np.ndarray, np.ndarray]:
    got = _numeric(to_array(expr.eval(batch), batch.num_rows))
    if got is None:
        raise TypeError("not an ordered type")
    return got


def _less(x: np.ndarray, y: np.ndarray, strict: bool) -> np.ndarray:
    """``x < y`` / ``x <= y`` as Spark compares (NaN is the largest value and equals NaN)."""
    if x.dtype.kind != "f":
        return x < y if strict else x <= y
    ynan = np.isnan(y)
    if strict:
        return (x < y) | (ynan & ~np.isnan(x))
    return (x <= y) | ynan


def _runs(keys: np.ndarray, valid: np.ndarray, lo_vals: np.ndarray, lo_side: str,
          hi_vals: np.ndarray, probe_valid: np.ndarray) -> Candidates:
    """Per probe row, the rows whose key lies between its two values (as runs of the rows with a
    valid key, sorted on it): from ``searchsorted(lo_vals, lo_side)`` to
    ``searchsorted(hi_vals, 'right')``."""
    rows = np.flatnonzero(valid)
    order = rows[np.argsort(keys[rows], kind="stable")]
    sorted_keys = keys[order]
    lo = np.searchsorted(sorted_keys, lo_vals, side=lo_side)
    hi = np.searchsorted(sorted_keys, hi_vals, side="right")
    counts = np.where(probe_valid, np.maximum(hi - lo, 0), 0).astype(np.int64)
    return Candidates(counts, lo.astype(np.int64), order.astype(np.int64))


class RangeIndex:
    """The range conjuncts of one RangeJoinExec, bound to its sides (see the module docstring)."""

    def __init__(self, cond: RangeCondition, left: list[AttributeReference],
                 right: list[AttributeReference]) -> None:
        self.l_small = prepare(cond.l_small, left)
        self.l_big = prepare(cond.l_big, left)
        self.r_small = prepare(cond.r_small, right)
        self.r_big = prepare(cond.r_big, right)
        self.a_strict = cond.a_strict
        self.b_strict = cond.b_strict
        self.residual = (None if cond.residual is None
                         else PairCondition(cond.residual, left, right))

    def _pairs(self, lb: pa.RecordBatch, rb: pa.RecordBatch, max_pairs: int
               ) -> Iterator[tuple[np.ndarray, np.ndarray]] | None:
        """Candidate ``(left rows, right rows)`` chunks (None: a range value failed)."""
        try:
            ls, ls_ok = _values(self.l_small, lb)
            lg, lg_ok = _values(self.l_big, lb)
            rs, rs_ok = _values(self.r_small, rb)
            rg, rg_ok = _values(self.r_big, rb)
        except Exception:  # noqa: BLE001 - the full comparison raises (or not) as Spark
            return None
        if ls.dtype != rs.dtype:  # not expected (one type on both sides): compare as doubles
            ls, lg, rs, rg = (v.astype(np.float64) for v in (ls, lg, rs, rg))
        l_ok = ls_ok & lg_ok
        r_ok = rs_ok & rg_ok
        # 1: per left row, right rows with r_small in [l_small, l_big]
        first = _runs(rs, r_ok, ls, "left", lg, l_ok)
        # 2: per right row, left rows with l_small in (r_small, r_big]
        second = _runs(ls, l_ok, rs, "right", rg, r_ok)

        a_strict, b_strict = self.a_strict, self.b_strict

        def exact(li: np.ndarray, ri: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
            """The pairs satisfying both range conjuncts (the values are not NULL)."""
            ok = (_less(ls[li], rg[ri], a_strict) & _less(rs[ri], lg[li], b_strict))
            return li[ok], ri[ok]

        def chunks() -> Iterator[tuple[np.ndarray, np.ndarray]]:
            for li, ri, _ in first.chunks(max_pairs):
                if len(li):
                    yield exact(li, ri)
            for ri, li, _ in second.chunks(max_pairs):
                if len(ri):
                    yield exact(li, ri)

        return chunks()

    def join(self, kernel: JoinKernel, stream: Iterable[pa.RecordBatch],
             stream_schema: pa.Schema) -> Iterator[pa.RecordBatch]:
        """The join's rows for one stream partition against the kernel's build batch (the
        kernel's build bitmap, if any, is updated), in slices of about ``SLICE_ROWS`` stream
        rows (a stream row's result depends on the build side only)."""
        pending: list[pa.RecordBatch] = []
        rows = 0
        for b in stream:
            b = conform_batch(b, stream_schema)
            if b.num_rows:
                pending.append(b)
                rows += b.num_rows
            if rows >= SLICE_ROWS:
                yield from self._join_slice(kernel, to_batch(pending, stream_schema))
                pending, rows = [], 0
        if rows:
            yield from self._join_slice(kernel, to_batch(pending, stream_schema))

    def _join_slice(self, kernel: JoinKernel, batch: pa.RecordBatch
                    ) -> Iterator[pa.RecordBatch]:
        build = kernel.build
        stream_left = kernel.stream_is_left
        lb, rb = (batch, build) if stream_left else (build, batch)
        pairs = self._pairs(lb, rb, kernel.max_pairs) if build.num_rows else iter(())
        if pairs is None:
            yield from kernel.process(batch, Candidates.all_pairs(batch.num_rows,
                                                                  build.num_rows))
            return
        yield from kernel.process_pairs(
            batch, pairs if stream_left else ((ri, li) for li, ri in pairs), self.residual)
