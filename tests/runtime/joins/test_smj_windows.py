"""Fast paths of the sort-merge join scanner and the candidate pair expansion, checked against
the general paths: coalesced windows vs one input batch per window, and the repeat-based pair
positions of ``Candidates.chunks`` vs a plain per-pair expansion."""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pytest

from ember.expressions.base import AttributeReference, bind_references
from ember.expressions.predicates import EqualTo, Not
from ember.plans.logical.join_type import JoinType
from ember.runtime.local.joins import sort_merge_join as smj
from ember.runtime.local.joins.common import runtime_memory
from ember.runtime.local.joins.kernel import Candidates, JoinLayout
from ember.types import LONG


def _naive_pairs(c: Candidates) -> tuple[np.ndarray, np.ndarray]:
    si, bi = [], []
    for i, k in enumerate(c.counts):
        for j in range(int(k)):
            p = j if c.lo is None else int(c.lo[i]) + j
            si.append(i)
            bi.append(p if c.order is None else int(c.order[p]))
    return np.array(si, dtype=np.int64), np.array(bi, dtype=np.int64)


@pytest.mark.parametrize("with_lo,with_order", [(False, False), (True, False), (True, True)])
@pytest.mark.parametrize("max_pairs", [1, 3, 7, 1000])
def test_candidate_chunks_match_naive_expansion(with_lo, with_order, max_pairs):
    rng = np.random.default_rng(5)
    n, nb = 60, 40
    counts = rng.integers(0, 6, n).astype(np.int64)
    lo = rng.integers(0, nb - 6, n).astype(np.int64) if with_lo else None
    order = rng.permutation(nb).astype(np.int64) if with_order else None
    c = Candidates(counts, lo, order)
    sis, bis, dones = [], [], []
    for si, bi, done in c.chunks(max_pairs):
        assert len(si) <= max(1, max_pairs)
        sis.append(si)
        bis.append(bi)
        dones.append(done)
    assert dones == sorted(dones) and dones[-1] == n
    esi, ebi = _naive_pairs(c)
    np.testing.assert_array_equal(np.concatenate(sis), esi)
    np.testing.assert_array_equal(np.concatenate(bis), ebi)


def _sorted_side(rng, n, keys, nulls):
    k = rng.integers(0, keys, n).astype(np.int64)
    t = pa.table({"k": pa.array(k, mask=rng.random(n) < nulls), "v": rng.integers(0, 4, n)})
    # NULL keys first (Spark's ASC NULLS FIRST, as EnsureRequirements sorts)
    valid = np.asarray(t["k"].is_valid())
    order = np.concatenate([np.flatnonzero(~valid),
                            np.flatnonzero(valid)[np.argsort(k[valid], kind="stable")]])
    return t.take(pa.array(order))


def _run(jt, left, right, batch_size, window_rows, monkeypatch):
    monkeypatch.setattr(smj, "WINDOW_ROWS", window_rows)
    a = [AttributeReference("k", LONG), AttributeReference("v", LONG)]
    b = [AttributeReference("k", LONG), AttributeReference("v", LONG)]
    cond = Not(EqualTo(b[1], a[1]))
    out = a + b if jt.outputs_right else a
    stream_right = jt is JoinType.RIGHT_OUTER
    layout = JoinLayout.of(jt, stream_right, a, b, out, cond, batch_size)
    schema = pa.schema([("k", pa.int64()), ("v", pa.int64())])
    mem, sd = runtime_memory(None)
    ka, kb = [bind_references(a[0], a)], [bind_references(b[0], b)]
    lb, rb = left.to_batches(batch_size), right.to_batches(batch_size)
    if stream_right:
        sc = smj.SortMergeJoinScanner(jt, layout, rb, lb, kb, ka, schema, schema, mem, sd)
    else:
        sc = smj.SortMergeJoinScanner(jt, layout, lb, rb, ka, kb, schema, schema, mem, sd)
    return pa.Table.from_batches(list(sc.run()), schema=layout.out_schema)


@pytest.mark.parametrize("jt", [JoinType.INNER, JoinType.LEFT_OUTER, JoinType.RIGHT_OUTER,
                                JoinType.FULL_OUTER, JoinType.LEFT_SEMI, JoinType.LEFT_ANTI],
                         ids=str)
@pytest.mark.parametrize("batch_size", [3, 64])
def test_smj_coalesced_windows_equal_per_batch_windows(jt, batch_size, monkeypatch):
    rng = np.random.default_rng(11)
    left = _sorted_side(rng, 700, 150, 0.05)
    right = _sorted_side(rng, 900, 150, 0.05)
    general = _run(jt, left, right, batch_size, 1, monkeypatch)  # one input batch per window
    fast = _run(jt, left, right, batch_size, 1 << 17, monkeypatch)
    assert fast.num_rows > 0
    if jt is JoinType.FULL_OUTER:  # buffered-only rows may come out at other window boundaries
        fast, general = (t.rename_columns([str(i) for i in range(t.num_columns)]) for t in
                         (fast, general))
        keys = [(str(i), "ascending") for i in range(fast.num_columns)]
        fast, general = fast.sort_by(keys), general.sort_by(keys)
    assert fast.equals(general)
