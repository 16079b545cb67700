"""The join-type capability table (``ember.plans.logical.join_type``) against Spark's semantics.

Two kinds of checks:

* Spark's per-join-type tables, transcribed case by case from the Spark 4 sources that own them
  (JoinSelection's ``canBuildBroadcastLeft`` ..., PartitionPruning's ``canPruneLeft`` /
  ``canPruneRight``, PushPredicateThroughJoin's cases, EliminateOuterJoin's
  ``buildNewJoinType``, ShuffledJoin's ``outputPartitioning``, SortMergeJoinExec's
  ``streamedPlan``, UnsupportedOperationChecker's join rules), compared with what the
  capabilities answer for every join type.
* The row-level meaning of the per-side properties, checked against a reference join written
  from the SQL definition of each join type over a two-row example.
"""

from __future__ import annotations

import pytest

from ember.plans.logical.join_type import BuildSide, ExistenceOutput, JoinAlgorithm, JoinType

L, R = BuildSide.LEFT, BuildSide.RIGHT
I, C, LO, RO, FO = (JoinType.INNER, JoinType.CROSS, JoinType.LEFT_OUTER, JoinType.RIGHT_OUTER,
                    JoinType.FULL_OUTER)
SEMI, ANTI, EX = JoinType.LEFT_SEMI, JoinType.LEFT_ANTI, JoinType.EXISTENCE
ALL = tuple(JoinType)


def _only(*types: JoinType) -> dict[JoinType, bool]:
    return {jt: jt in types for jt in ALL}


# -- Spark's JoinSelection (canBuildBroadcastLeft / Right, canBuildShuffledHashJoinLeft / Right)

SPARK_BUILD = {
    (JoinAlgorithm.BROADCAST_HASH, L): _only(I, C, RO),
    (JoinAlgorithm.BROADCAST_HASH, R): _only(I, C, LO, SEMI, ANTI, EX),
    (JoinAlgorithm.SHUFFLED_HASH, L): _only(I, C, LO, RO, FO),
    (JoinAlgorithm.SHUFFLED_HASH, R): _only(I, C, LO, RO, FO, SEMI, ANTI, EX),
    (JoinAlgorithm.BROADCAST_NESTED_LOOP, L): _only(*ALL),
    (JoinAlgorithm.BROADCAST_NESTED_LOOP, R): _only(*ALL),
    (JoinAlgorithm.SORT_MERGE, L): _only(),
    (JoinAlgorithm.SORT_MERGE, R): _only(),
    (JoinAlgorithm.CARTESIAN, L): _only(),
    (JoinAlgorithm.CARTESIAN, R): _only(),
}


@pytest.mark.parametrize("algorithm,side", sorted(SPARK_BUILD, key=str))
def test_can_build_is_spark_join_selection(algorithm: JoinAlgorithm, side: BuildSide) -> None:
    got = {jt: jt.can_build(side, algorithm) for jt in ALL}
    assert got == SPARK_BUILD[algorithm, side]


def test_kernel_can_build_adds_only_the_left_of_left_existence_hash_joins() -> None:
    for (algorithm, side), spark in SPARK_BUILD.items():
        for jt in ALL:
            extra = (side is L and jt in (SEMI, ANTI, EX)
                     and algorithm in (JoinAlgorithm.BROADCAST_HASH, JoinAlgorithm.SHUFFLED_HASH))
            assert jt.kernel_can_build(side, algorithm) == (spark[jt] or extra), (jt, algorithm)


def test_cartesian_product_runs_inner_like_joins_only() -> None:
    assert {jt: jt.supports(JoinAlgorithm.CARTESIAN) for jt in ALL} == _only(I, C)
    for algorithm in JoinAlgorithm:
        if algorithm is not JoinAlgorithm.CARTESIAN:
            assert all(jt.supports(algorithm) for jt in ALL)


def test_nested_loop_desired_build_side_symmetry() -> None:
    # JoinSelection: the smaller side for InnerLike and FullOuter, else by canBuildBroadcastLeft
    assert {jt: jt.is_symmetric for jt in ALL} == _only(I, C, FO)


# -- PartitionPruning.canPruneLeft / canPruneRight


def test_can_prune_is_spark_partition_pruning() -> None:
    assert {jt: jt.can_prune(L) for jt in ALL} == _only(I, SEMI, RO)
    assert {jt: jt.can_prune(R) for jt in ALL} == _only(I, LO)


# -- PushPredicateThroughJoin


def test_filter_above_join_pushes_like_spark() -> None:
    # InnerLike: both; LeftOuter | LeftExistence: left; RightOuter: right; FullOuter: none
    assert {jt: jt.outputs_unpadded(L) for jt in ALL} == _only(I, C, LO, SEMI, ANTI, EX)
    assert {jt: jt.outputs_unpadded(R) for jt in ALL} == _only(I, C, RO)


def test_join_condition_pushes_like_spark() -> None:
    # InnerLike | LeftSemi: both; RightOuter: left; LeftOuter | LeftAnti | ExistenceJoin: right
    assert {jt: not jt.keeps_unmatched(L) for jt in ALL} == _only(I, C, SEMI, RO)
    assert {jt: not jt.keeps_unmatched(R) for jt in ALL} == _only(I, C, SEMI, LO, ANTI, EX)


# -- EliminateOuterJoin.buildNewJoinType

@pytest.mark.parametrize("jt,left,right,expected", [
    (RO, True, False, I), (RO, False, True, RO), (RO, True, True, I),
    (LO, False, True, I), (LO, True, False, LO), (LO, True, True, I),
    (FO, True, True, I), (FO, True, False, LO), (FO, False, True, RO), (FO, False, False, FO),
    (I, True, True, I), (SEMI, True, True, SEMI), (EX, True, True, EX), (ANTI, False, True, ANTI),
])
def test_outer_join_elimination_is_spark_build_new_join_type(
        jt: JoinType, left: bool, right: bool, expected: JoinType) -> None:
    # ``left``: a NULL-rejecting predicate on the left side (Spark's leftHasNonNullPredicate)
    assert jt.with_padded_rows_filtered(left=left, right=right) is expected


# -- physical properties


def test_shuffled_join_output_partitioning_sides() -> None:
    # ShuffledJoin.outputPartitioning: InnerLike both, LeftOuter / LeftExistence left,
    # RightOuter right, FullOuter unknown
    kept = {jt: tuple(s for s in (L, R) if jt.outputs_unpadded(s)) for jt in ALL}
    assert kept == {I: (L, R), C: (L, R), LO: (L,), SEMI: (L,), ANTI: (L,), EX: (L,),
                    RO: (R,), FO: ()}


def test_sort_merge_streamed_side() -> None:
    assert {jt: jt.merge_streamed_side for jt in ALL} == {jt: R if jt is RO else L for jt in ALL}


def test_build_match_tracking() -> None:
    # the build side's unmatched rows are emitted, or it is the left of a left-existence join
    assert {jt: jt.tracks_build_matches(L) for jt in ALL} == _only(LO, FO, SEMI, ANTI, EX)
    assert {jt: jt.tracks_build_matches(R) for jt in ALL} == _only(RO, FO)


# -- streaming (UnsupportedOperationChecker, StreamingSymmetricHashJoinExec)


def test_stream_stream_join_types() -> None:
    assert {jt: jt.supports_stream_stream for jt in ALL} == _only(I, C, LO, RO, FO, SEMI)


def test_stream_static_join_types() -> None:
    # static right: InnerLike, LeftOuter, LeftSemi, LeftAnti; static left: InnerLike, RightOuter
    assert {jt: jt.joins_stream_with_static(R) for jt in ALL} == _only(I, C, LO, SEMI, ANTI)
    assert {jt: jt.joins_stream_with_static(L) for jt in ALL} == _only(I, C, RO)


# -- row-level meaning, against a reference join over left keys {1, 2}, right keys {2, 3}


def _reference(jt: JoinType) -> list[tuple]:
    """The SQL definition of each join type over ``l = [1, 2]``, ``r = [2, 3]`` joined on
    equality (CROSS is given the same condition)."""
    left, right = [1, 2], [2, 3]
    pairs = [(a, b) for a in left for b in right if a == b]
    lun = [(a, None) for a in left if a not in right]
    run = [(None, b) for b in right if b not in left]
    return {
        I: pairs, C: pairs, LO: pairs + lun, RO: pairs + run, FO: pairs + lun + run,
        SEMI: [(a,) for a in left if a in right], ANTI: [(a,) for a in left if a not in right],
        EX: [(a, a in right) for a in left],
    }[jt]


@pytest.mark.parametrize("jt", ALL, ids=str)
def test_side_properties_match_the_definition(jt: JoinType) -> None:
    rows = _reference(jt)
    width = len(rows[0])
    assert jt.outputs_right == (width == 2 and jt is not EX)
    padded_left_row = (1, None) in rows  # left 1 has no match
    padded_right_row = (None, 3) in rows  # right 3 has no match
    assert jt.pads_unmatched(L) == padded_left_row
    assert jt.pads_unmatched(R) == padded_right_row
    assert jt.right_nullable == padded_left_row and jt.left_nullable == padded_right_row
    left_1_out = any(r[0] == 1 for r in rows)
    assert jt.keeps_unmatched(L) == left_1_out
    assert jt.keeps_unmatched(R) == padded_right_row
    assert jt.preserves(L) == (left_1_out and jt is not ANTI)  # every left row, at least once
    assert jt.preserves(R) == padded_right_row
    matched_only = all(r[0] == 2 for r in rows)
    assert jt.emits_matches_only == matched_only
    assert jt.is_outer == (padded_left_row or padded_right_row)
    expected_existence = {SEMI: ExistenceOutput.MATCHED, ANTI: ExistenceOutput.UNMATCHED,
                          EX: ExistenceOutput.FLAGGED}.get(jt)
    assert jt.existence_output is expected_existence
