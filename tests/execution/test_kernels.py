"""Kernel-level tests: key encoding, set-op helpers, sort indices, join key extraction."""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pytest

from ember import types as T
from ember.execution.kernels import setops
from ember.execution.kernels.keys import encode_arrays, encode_sides
from ember.execution.kernels.sort import sort_indices
from ember.expressions.base import AttributeReference as Attr
from ember.expressions.base import Literal
from ember.expressions.predicates import And, EqualNullSafe, EqualTo, GreaterThan, IsNull, Or
from ember.plans.logical.join_type import JoinType
from ember.plans.logical.nodes import Join, LocalRelation
from ember.plans.logical.patterns import (
    extract_equi_join_keys,
    extract_null_aware_anti_join_keys,
    split_join_condition,
)

NAN = float("nan")


def test_encode_floats_canonical():
    a = pa.array([NAN, -0.0, 0.0, None, 1.0, float("-nan")])
    codes, _ = encode_arrays([a], nulls_equal=False)
    assert codes[0] == codes[5]
    assert codes[1] == codes[2]
    assert codes[3] == -1
    assert len({codes[0], codes[1], codes[4]}) == 3
    codes, _ = encode_arrays([a], nulls_equal=True)
    assert codes[3] >= 0 and codes[3] not in (codes[0], codes[1], codes[4])


def test_encode_sides_null_safe_mix():
    lcodes, rcodes = encode_sides(
        [pa.array([1, 1, None]), pa.array([None, 2, 3])],
        [pa.array([1, None]), pa.array([None, 2])],
        [False, True],
    )
    assert lcodes[0] == rcodes[0]  # 1 = 1 and NULL <=> NULL
    assert lcodes[2] == -1 and rcodes[1] == -1
    assert lcodes[1] != rcodes[0]


def test_encode_overflow_densifies():
    n = 1000
    cols = [pa.array(np.arange(n) % (7 + i)) for i in range(40)]  # radix product >> 2^62
    codes, _ = encode_arrays(cols, nulls_equal=False)
    rows = {tuple(c[i].as_py() for c in cols) for i in range(n)}
    assert len(np.unique(codes)) == len(rows)


def test_encode_sides_unifies_types():
    lcodes, rcodes = encode_sides([pa.array([1, 2], pa.int32())], [pa.array([2], pa.int64())],
                                  False)
    assert lcodes[1] == rcodes[0] and lcodes[0] != rcodes[0]


def test_setops_kernels():
    left = np.array([5, 5, 5, 7, 8, 8])
    right = np.array([5, 5, 8, 9])
    assert setops.first_occurrences(left).tolist() == [0, 3, 4]
    assert setops.occurrence_rank(left).tolist() == [0, 1, 2, 0, 0, 1]
    assert setops.intersect_all(left, right).tolist() == [0, 1, 4]
    assert setops.except_all(left, right).tolist() == [2, 3, 5]
    assert setops.intersect_distinct(left, right).tolist() == [0, 4]
    assert setops.except_distinct(left, right).tolist() == [3]


def test_sort_indices_stable_multi():
    a = pa.array([2, 1, 2, None, 1])
    b = pa.array(["x", "y", "a", "z", None])
    idx = sort_indices([a, b], [True, False], [False, True])
    assert idx.tolist() == [4, 1, 0, 2, 3]


# ---------------------------------------------------------------------------------------------
# patterns


def _join(cond, jt=JoinType.INNER):
    a, b = Attr("a", T.INT), Attr("b", T.INT)
    c, d = Attr("c", T.INT), Attr("d", T.INT)
    left = LocalRelation((a, b))
    right = LocalRelation((c, d))
    return Join(left, right, jt, cond(a, b, c, d)), (a, b, c, d)


def test_split_join_condition_orients_and_residual():
    j, (a, b, c, d) = _join(lambda a, b, c, d: And(And(EqualTo(c, a), GreaterThan(b, d)),
                                                   EqualNullSafe(b, d)))
    keys = split_join_condition(j.condition, j.left, j.right)
    assert keys.left_keys == (a, b) and keys.right_keys == (c, d)
    assert keys.null_safe == (False, True)
    assert keys.residual == GreaterThan(b, d)


def test_no_keys():
    j, (a, b, c, d) = _join(lambda a, b, c, d: Or(EqualTo(a, c), EqualTo(b, d)))
    assert split_join_condition(j.condition, j.left, j.right) is None
    j, _ = _join(lambda a, b, c, d: EqualTo(a, Literal(1, T.INT)))
    assert extract_equi_join_keys(j) is None
    j, _ = _join(lambda a, b, c, d: EqualTo(a, b))  # both on the left
    assert extract_equi_join_keys(j) is None
    j, _ = _join(lambda a, b, c, d: None)
    assert extract_equi_join_keys(j) is None


def test_extract_equi_join_keys_null_safe_pairs():
    pytest.importorskip("ember.expressions.conditional", reason="Coalesce not written yet")
    j, (a, b, c, d) = _join(lambda a, b, c, d: EqualNullSafe(a, c))
    lk, rk, residual = extract_equi_join_keys(j)
    assert len(lk) == 2 and residual is None
    assert lk[1] == IsNull(a) and rk[1] == IsNull(c)
    assert "coalesce" in lk[0].simple_string().lower()


def test_null_aware_anti_join_pattern():
    j, (a, b, c, d) = _join(lambda a, b, c, d: Or(EqualTo(a, c), IsNull(EqualTo(a, c))),
                            JoinType.LEFT_ANTI)
    assert extract_null_aware_anti_join_keys(j) == (a, c)
    j, (a, b, c, d) = _join(lambda a, b, c, d: Or(EqualTo(c, a), IsNull(EqualTo(c, a))),
                            JoinType.LEFT_ANTI)
    assert extract_null_aware_anti_join_keys(j) == (a, c)
    j, _ = _join(lambda a, b, c, d: Or(EqualTo(a, c), IsNull(EqualTo(b, d))), JoinType.LEFT_ANTI)
    assert extract_null_aware_anti_join_keys(j) is None
    j, _ = _join(lambda a, b, c, d: Or(EqualTo(a, c), IsNull(EqualTo(a, c))), JoinType.LEFT_SEMI)
    assert extract_null_aware_anti_join_keys(j) is None
