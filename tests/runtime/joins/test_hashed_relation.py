"""HashedRelation and the candidate-pair kernel, without a runtime."""

from __future__ import annotations

import numpy as np
import pyarrow as pa

from ember import types as T
from ember.expressions.base import BoundReference
from ember.runtime.local.joins.hashed_relation import (
    EmptyHashedRelation,
    HashedRelation,
    HashedRelationWithAllNullKeys,
)
from ember.runtime.local.joins.kernel import Candidates

NAN = float("nan")


def _rel(cols: dict, key_types, **kw) -> HashedRelation:
    batch = pa.record_batch(cols)
    keys = tuple(BoundReference(i, t, True) for i, t in enumerate(key_types))
    kw.setdefault("allows_null_key", False)
    return HashedRelation.build(batch, keys, **kw)


def _pairs(rel, *probe):
    si, bi = rel.probe([pa.array(p) for p in probe])
    return list(zip(si.tolist(), bi.tolist()))


def test_multimap_in_insertion_order_and_null_keys_dropped():
    rel = _rel({"k": pa.array([5, 3, 5, None, 5], pa.int64())}, [T.LONG])
    assert rel.num_rows == 4  # the NULL-key row is dropped
    # build rows after dropping: [5, 3, 5, 5] -> positions 0, 2, 3 for key 5
    assert _pairs(rel, pa.array([5, 4, None, 3], pa.int64())) == [(0, 0), (0, 2), (0, 3), (3, 1)]
    assert not rel.key_is_unique


def test_allows_null_key_keeps_rows_that_never_match():
    rel = _rel({"k": pa.array([None, 1], pa.int64())}, [T.LONG], allows_null_key=True)
    assert rel.num_rows == 2
    assert _pairs(rel, pa.array([None, 1], pa.int64())) == [(1, 1)]


def test_float_keys_canonicalized():
    rel = _rel({"d": pa.array([NAN, -0.0, 1.5])}, [T.DOUBLE])
    assert _pairs(rel, pa.array([0.0, NAN, 1.5, 2.0, None])) == [(0, 1), (1, 0), (2, 2)]


def test_strings_sparse_ints_and_multi_column_keys():
    rel = _rel({"a": pa.array(["x", "y", "x", None]),
                "b": pa.array([1 << 40, 7, 1 << 40, 7], pa.int64())}, [T.STRING, T.LONG])
    got = _pairs(rel, pa.array(["x", "y", "y", "z"]),
                 pa.array([1 << 40, 7, 1 << 40, 7], pa.int64()))
    assert got == [(0, 0), (0, 2), (1, 1)]


def test_struct_keys_use_joint_encoding():
    st = pa.array([{"x": 1, "y": "a"}, {"x": 2, "y": None}, None])
    rel = _rel({"s": st}, [T.StructType((T.StructField("x", T.LONG), T.StructField("y", T.STRING)))])
    probe = pa.array([{"x": 2, "y": None}, {"x": 1, "y": "a"}, {"x": 3, "y": "a"}, None],
                     type=st.type)
    assert _pairs(rel, probe) == [(0, 1), (1, 0)]


def test_ignores_duplicated_key_keeps_first_row():
    rel = _rel({"k": pa.array([2, 2, 1], pa.int64())}, [T.LONG], ignores_duplicated_key=True)
    assert _pairs(rel, pa.array([2, 1], pa.int64())) == [(0, 0), (1, 2)]


def test_null_aware_builds():
    assert isinstance(_rel({"k": pa.array([], pa.int64())}, [T.LONG], null_aware=True),
                      EmptyHashedRelation)
    rel = _rel({"k": pa.array([1, None], pa.int64())}, [T.LONG], null_aware=True)
    assert isinstance(rel, HashedRelationWithAllNullKeys)
    rel = _rel({"k": pa.array([1, 2], pa.int64())}, [T.LONG], null_aware=True)
    assert type(rel) is HashedRelation and rel.estimated_size() > 0


def test_candidate_chunks_are_bounded_and_row_aligned():
    cand = Candidates(np.array([3, 0, 10, 1], dtype=np.int64))
    chunks = list(cand.chunks(4))
    assert all(len(si) <= 4 for si, _, _ in chunks)
    si = np.concatenate([c[0] for c in chunks])
    bi = np.concatenate([c[1] for c in chunks])
    assert si.tolist() == [0] * 3 + [2] * 10 + [3]
    assert bi.tolist() == [0, 1, 2] + list(range(10)) + [0]
    # "done" never claims a row whose candidates are still to come
    for s, _, done in chunks:
        if len(s):
            assert done >= s.max() or done == s.max()
    assert chunks[-1][2] == 4
