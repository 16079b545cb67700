"""Every join algorithm x every join type it supports x build side, compared with DuckDB's join
of the same data (NULL / duplicate / NaN / -0.0 keys, null-safe keys,
residual conditions, empty sides), at batch size 2 and at the default."""

from __future__ import annotations

import pyarrow as pa
import pytest

from ember.physical.nodes import BuildSide
from ember.plans.logical.join_type import JoinType
from ember.runtime.local.joins.nested_loop_join import pruning_of
from ember.runtime.local.joins import range_join
from ember.runtime.local.joins.range_join import RangeIndex
from tests.runtime.joins.helpers import (
    EQUI_CONDITIONS,
    RANGE_CONDITIONS,
    assert_same_rows,
    condition,
    logical_join,
    physical,
    reference,
    run,
    sides,
)

J = JoinType
L, R = BuildSide.LEFT, BuildSide.RIGHT
ALL_TYPES = (J.INNER, J.CROSS, J.LEFT_OUTER, J.RIGHT_OUTER, J.FULL_OUTER, J.LEFT_SEMI, J.LEFT_ANTI,
             J.EXISTENCE)

BHJ = [(jt, R) for jt in (J.INNER, J.CROSS, J.LEFT_OUTER, J.LEFT_SEMI, J.LEFT_ANTI, J.EXISTENCE)]
BHJ += [(J.INNER, L), (J.CROSS, L), (J.RIGHT_OUTER, L)]
# build-left semi / anti / existence: Ember's (the runtime's shuffled-hash conversion)
SHJ = [(jt, R) for jt in ALL_TYPES] + [(jt, L) for jt in (J.INNER, J.LEFT_OUTER, J.RIGHT_OUTER,
                                                          J.FULL_OUTER, J.LEFT_SEMI, J.LEFT_ANTI,
                                                          J.EXISTENCE)]
SMJ = [(jt, None) for jt in ALL_TYPES]
BNLJ = [(jt, side) for jt in ALL_TYPES for side in (L, R)]

BATCH_SIZES = (2, None)


def _check(algorithm, jt, build, cond_name, batch_size, s=None, partitions=3):
    s = s or sides()
    join = logical_join(s, jt, condition(s, cond_name))
    expected = reference(join)
    actual, _ = run(physical(algorithm, join, build, partitions=partitions), batch_size,
                    partitions=partitions)
    assert_same_rows(actual, expected)
    return actual


@pytest.mark.parametrize("batch_size", BATCH_SIZES)
@pytest.mark.parametrize("cond", EQUI_CONDITIONS)
@pytest.mark.parametrize("jt,build", BHJ, ids=lambda x: str(x))
def test_broadcast_hash_join(jt, build, cond, batch_size):
    _check("bhj", jt, build, cond, batch_size)


@pytest.mark.parametrize("batch_size", BATCH_SIZES)
@pytest.mark.parametrize("cond", EQUI_CONDITIONS)
@pytest.mark.parametrize("jt,build", SHJ, ids=lambda x: str(x))
def test_shuffled_hash_join(jt, build, cond, batch_size):
    _check("shj", jt, build, cond, batch_size)


@pytest.mark.parametrize("batch_size", BATCH_SIZES)
@pytest.mark.parametrize("cond", EQUI_CONDITIONS)
@pytest.mark.parametrize("jt", [t for t, _ in SMJ], ids=str)
def test_sort_merge_join(jt, cond, batch_size):
    _check("smj", jt, None, cond, batch_size)


@pytest.mark.parametrize("batch_size", BATCH_SIZES)
@pytest.mark.parametrize("cond", ("int", "nullsafe_residual", "nonequi", "none"))
@pytest.mark.parametrize("jt,build", BNLJ, ids=lambda x: str(x))
def test_broadcast_nested_loop_join(jt, build, cond, batch_size):
    _check("bnlj", jt, build, cond, batch_size)


@pytest.mark.parametrize("batch_size", BATCH_SIZES)
@pytest.mark.parametrize("cond", ("int", "nonequi", "none", "residual"))
@pytest.mark.parametrize("jt", (J.INNER, J.CROSS), ids=str)
def test_cartesian_product(jt, cond, batch_size):
    _check("cartesian", jt, None, cond, batch_size)


@pytest.mark.parametrize("jt,build", BNLJ, ids=lambda x: str(x))
def test_range_join(jt, build, monkeypatch):
    """RangeJoinExec's sort-and-sweep, every join type and build side, each range condition
    (for one of them also at batch size 2 in slices of 5 stream rows: many chunks of candidate
    pairs, many slices)."""
    s = sides()
    for cond in RANGE_CONDITIONS:
        join = logical_join(s, jt, condition(s, cond))
        plan = physical("range", join, build)
        stream, built = (plan.right, plan.left) if build is L else (plan.left, plan.right)
        assert isinstance(pruning_of(plan, stream, built), RangeIndex)
        expected = reference(join)
        actual, _ = run(plan)
        assert_same_rows(actual, expected)
        if cond == "overlap":
            with monkeypatch.context() as m:
                m.setattr(range_join, "SLICE_ROWS", 5)
                actual, _ = run(plan, 2)
            assert_same_rows(actual, expected)


def _empty(t: pa.Table) -> pa.Table:
    return t.slice(0, 0)


EMPTY_CASES = [("bhj", jt, b) for jt, b in BHJ] + [("shj", jt, b) for jt, b in SHJ] + \
    [("smj", jt, None) for jt in ALL_TYPES] + [("bnlj", jt, b) for jt, b in BNLJ] + \
    [("cartesian", J.INNER, None)] + [("range", jt, b) for jt, b in (
        (J.INNER, R), (J.LEFT_OUTER, L), (J.RIGHT_OUTER, R), (J.FULL_OUTER, L), (J.LEFT_SEMI, L),
        (J.LEFT_ANTI, R), (J.EXISTENCE, L))]


@pytest.mark.parametrize("empty", ("left", "right", "both"))
@pytest.mark.parametrize("algorithm,jt,build", EMPTY_CASES, ids=lambda x: str(x))
def test_empty_sides(algorithm, jt, build, empty):
    base = sides()
    lt = _empty(base.ltable) if empty in ("left", "both") else base.ltable
    rt = _empty(base.rtable) if empty in ("right", "both") else base.rtable
    s = sides(lt, rt)
    cond = ("residual" if algorithm in ("bhj", "shj", "smj")
            else "overlap" if algorithm == "range" else "nonequi")
    _check(algorithm, jt, build, cond, 2, s)


def test_output_order_left_outer_bhj_keeps_stream_order():
    # One stream partition: rows come out in stream order, each row's matches in build order.
    s = sides()
    join = logical_join(s, J.LEFT_OUTER, condition(s, "int"))
    actual, _ = run(physical("bhj", join, R, partitions=1), 2, partitions=1)
    lv = actual.column("lv").to_pylist()
    assert lv == sorted(lv)


def test_sort_merge_join_output_sorted_by_keys():
    s = sides()
    join = logical_join(s, J.LEFT_OUTER, condition(s, "int"))
    actual, _ = run(physical("smj", join, None, partitions=1), 2, partitions=1)
    keys = actual.column("lk").to_pylist()
    non_null = [k for k in keys if k is not None]
    assert non_null == sorted(non_null)
    assert keys.index(None) < keys.index(non_null[0])  # NULLS FIRST kept from the sort


def test_null_aware_anti_join_variants():
    from ember.expressions.predicates import EqualTo, IsNull, Or

    s = sides()
    for rvals, kept in (
        ([2, 4], "absent"),        # no NULL: keep non-NULL keys not in {2, 4}
        ([2, None], "none"),       # a NULL: nothing
        ([], "all"),               # empty: everything, NULL keys too
    ):
        rt = pa.table({"rk": pa.array(rvals, pa.int64()), "rs": pa.array(["a"] * len(rvals)),
                       "rd": pa.array([1.0] * len(rvals)), "rv": pa.array([1] * len(rvals),
                                                                          pa.int64())})
        s2 = sides(s.ltable, rt)
        eq = EqualTo(s2.col("lk"), s2.col("rk"))
        join = logical_join(s2, J.LEFT_ANTI, Or(eq, IsNull(eq)))
        expected = reference(join)
        for bs in BATCH_SIZES:
            actual, _ = run(physical("bhj", join, R, null_aware=True), bs)
            assert_same_rows(actual, expected)
        n = actual.num_rows
        if kept == "none":
            assert n == 0
        elif kept == "all":
            assert n == s.ltable.num_rows
        else:
            assert set(actual.column("lk").to_pylist()) == {1, 3, 5, 7, 8}


def test_shuffled_hash_join_metrics():
    s = sides()
    join = logical_join(s, J.INNER, condition(s, "int"))
    plan = physical("shj", join, R)
    actual, rt = run(plan, 2)
    m = rt.metrics.get(plan)
    assert m is not None and m.output_rows == actual.num_rows > 0
    assert m.build_size > 0
    assert m.spill_size == 0


def test_nested_loop_pairs_are_chunked():
    # 300 x 300 rows at batch size 2: the pair chunk bound (1024 pairs) is far below 90000.
    from ember.runtime.local.joins import kernel

    seen = []
    orig = kernel.Candidates.chunks

    def spy(self, max_pairs):
        for si, bi, done in orig(self, max_pairs):
            seen.append(len(si))
            yield si, bi, done

    kernel.Candidates.chunks = spy
    try:
        n = 300
        lt = pa.table({"lk": pa.array(range(n), pa.int64()), "ls": pa.array(["a"] * n),
                       "ld": pa.array([1.0] * n), "lv": pa.array(range(n), pa.int64())})
        rt = pa.table({"rk": pa.array(range(n), pa.int64()), "rs": pa.array(["a"] * n),
                       "rd": pa.array([1.0] * n), "rv": pa.array(range(n), pa.int64())})
        s = sides(lt, rt)
        _check("bnlj", J.INNER, R, "nonequi", 2, s, partitions=1)
    finally:
        kernel.Candidates.chunks = orig
    assert seen and max(seen) <= kernel.pair_chunk_size(2)
