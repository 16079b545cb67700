"""Joins whose inputs are 3x the memory budget finish with the right rows (grace hash join for the
shuffled hash join, spilled key groups for the sort-merge join)."""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pytest

from ember.physical.nodes import BuildSide
from ember.plans.logical.join_type import JoinType
from tests.runtime.joins.helpers import (
    assert_same_rows,
    condition,
    logical_join,
    physical,
    reference,
    run,
    sides,
)

J = JoinType


def _table(prefix: str, keys: np.ndarray, seed: int) -> pa.Table:
    rng = np.random.default_rng(seed)
    n = len(keys)
    keys_arr = pa.array(keys, pa.int64(), mask=rng.random(n) < 0.01)
    return pa.table({
        f"{prefix}k": keys_arr,
        f"{prefix}s": pa.array([f"pad-{i % 97:03d}-" + "x" * 40 for i in range(n)]),
        f"{prefix}d": pa.array(rng.random(n)),
        f"{prefix}v": pa.array(rng.integers(0, 1000, n), pa.int64()),
    })


def _budget(s) -> int:
    return (s.ltable.nbytes + s.rtable.nbytes) // 3


def _spill_size(rt, plan) -> int:
    m = rt.metrics.get(plan)
    return 0 if m is None else m.spill_size


@pytest.mark.parametrize("jt,build", [
    (J.INNER, BuildSide.RIGHT), (J.LEFT_OUTER, BuildSide.RIGHT), (J.FULL_OUTER, BuildSide.RIGHT),
    (J.RIGHT_OUTER, BuildSide.RIGHT), (J.LEFT_SEMI, BuildSide.RIGHT),
    (J.LEFT_ANTI, BuildSide.RIGHT), (J.EXISTENCE, BuildSide.RIGHT), (J.LEFT_OUTER, BuildSide.LEFT),
    # Ember's build-left semi / anti / existence (the runtime's shuffled-hash conversion)
    (J.LEFT_SEMI, BuildSide.LEFT), (J.LEFT_ANTI, BuildSide.LEFT), (J.EXISTENCE, BuildSide.LEFT),
], ids=str)
def test_shuffled_hash_join_grace_spill(jt, build):
    rng = np.random.default_rng(7)
    s = sides(_table("l", rng.integers(0, 3000, 12000), 1),
              _table("r", rng.integers(0, 3000, 12000), 2))
    join = logical_join(s, jt, condition(s, "residual"))
    expected = reference(join)
    plan = physical("shj", join, build, partitions=1)
    actual, rt = run(plan, 2048, budget=_budget(s), partitions=1)
    assert_same_rows(actual, expected)
    assert _spill_size(rt, plan) > 0


@pytest.mark.parametrize("jt", [J.INNER, J.LEFT_OUTER, J.RIGHT_OUTER, J.FULL_OUTER, J.LEFT_SEMI,
                                J.LEFT_ANTI, J.EXISTENCE], ids=str)
def test_sort_merge_join_spills_large_key_group(jt):
    # Left: key 1 x 3, key 2 x 9000; right: key 1 x 9000, key 2 x 3 (+ other keys both sides):
    # whichever side is buffered holds one key group larger than the budget.
    rng = np.random.default_rng(3)
    lk = np.concatenate([[1] * 3, [2] * 9000, rng.integers(3, 500, 2000)])
    rk = np.concatenate([[1] * 9000, [2] * 3, rng.integers(3, 500, 2000)])
    s = sides(_table("l", lk, 4), _table("r", rk, 5))
    join = logical_join(s, jt, condition(s, "residual"))
    expected = reference(join)
    plan = physical("smj", join, None, partitions=1)
    actual, rt = run(plan, 1024, budget=_budget(s), partitions=1)
    assert_same_rows(actual, expected)
    assert _spill_size(rt, plan) > 0
