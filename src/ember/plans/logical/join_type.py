"""Join types and their semantics tables: the one place join semantics live.

Every analyzer rule, optimizer rule, strategy and operator reads these tables instead of re-deriving
them: a question that depends on the join type ("is the left side kept when unmatched?", "may a
broadcast hash join build the left side?") is a property or method of :class:`JoinType`, so no
other module matches on join types.

=============  =================  ==================  ================================
join type      output             nullability change  build sides a hash join may use
=============  =================  ==================  ================================
Inner/Cross    left ++ right      none                left or right
LeftOuter      left ++ right      right nullable      right (shuffled hash: both)
RightOuter     left ++ right      left nullable       left  (shuffled hash: both)
FullOuter      left ++ right      all nullable        shuffled hash only, either side
LeftSemi       left               none                right
LeftAnti       left               none                right
Existence      left ++ [exists]   exists not null     right
=============  =================  ==================  ================================

(Ember's local hash join kernels may also build the left side of LeftSemi / LeftAnti /
ExistenceJoin: :meth:`JoinType.kernel_can_build`.)
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum
from typing import Any
from ember.errors import InternalError, AnalysisError


class BuildSide(Enum):
    """The side of a join a hash / nested-loop join materializes (builds); the join-type
    capabilities also take it to name a side (Spark's ``BuildLeft`` / ``BuildRight``, which live
    in Catalyst's ``optimizer`` package for the same reason)."""

    LEFT = "BuildLeft"
    RIGHT = "BuildRight"

    def __str__(self) -> str:
        return self.value

    @property
    def other(self) -> "BuildSide":
        return BuildSide.RIGHT if self is BuildSide.LEFT else BuildSide.LEFT


class JoinAlgorithm(Enum):
    """The physical join operators (Spark's ``*Exec`` join nodes), for :meth:`JoinType.can_build`
    and :meth:`JoinType.supports`."""

    BROADCAST_HASH = "BroadcastHashJoin"
    SHUFFLED_HASH = "ShuffledHashJoin"
    SORT_MERGE = "SortMergeJoin"
    BROADCAST_NESTED_LOOP = "BroadcastNestedLoopJoin"
    CARTESIAN = "CartesianProduct"


class ExistenceOutput(Enum):
    """Which left rows a LeftSemi / LeftAnti / ExistenceJoin emits, given which have a match."""

    MATCHED = "matched"  # LeftSemi: the left rows with a match
    UNMATCHED = "unmatched"  # LeftAnti: the left rows without one
    FLAGGED = "flagged"  # ExistenceJoin: every left row, with ``exists`` = has a match


class JoinType(Enum):
    INNER = "Inner"
    CROSS = "Cross"
    LEFT_OUTER = "LeftOuter"
    RIGHT_OUTER = "RightOuter"
    FULL_OUTER = "FullOuter"
    LEFT_SEMI = "LeftSemi"
    LEFT_ANTI = "LeftAnti"
    EXISTENCE = "ExistenceJoin"

    def __str__(self) -> str:
        return self.value

    @property
    def sql(self) -> str:
        return _SQL[self]

    @property
    def is_inner_like(self) -> bool:
        return self in (JoinType.INNER, JoinType.CROSS)

    @property
    def is_left_existence(self) -> bool:
        """LeftSemi, LeftAnti or ExistenceJoin: the output is (mostly) the left side."""
        return self in (JoinType.LEFT_SEMI, JoinType.LEFT_ANTI, JoinType.EXISTENCE)

    @property
    def outputs_right(self) -> bool:
        """Whether the right side's columns appear in the output."""
        return not self.is_left_existence

    @property
    def preserves_left(self) -> bool:
        """Every left row appears at least once (possibly NULL-padded)."""
        return self in (JoinType.LEFT_OUTER, JoinType.FULL_OUTER, JoinType.EXISTENCE)

    @property
    def preserves_right(self) -> bool:
        return self in (JoinType.RIGHT_OUTER, JoinType.FULL_OUTER)

    @property
    def left_nullable(self) -> bool:
        """Left columns become nullable in the output."""
        return self in (JoinType.RIGHT_OUTER, JoinType.FULL_OUTER)

    @property
    def right_nullable(self) -> bool:
        return self in (JoinType.LEFT_OUTER, JoinType.FULL_OUTER)

    @property
    def keeps_unmatched_left(self) -> bool:
        """Left rows without a match appear in the output (NULL-padded, flagged ``exists =
        false``, or as the anti join's result): a join-condition conjunct over the left side alone
        must stay in the condition (it cannot filter the left child)."""
        return self.preserves_left or self is JoinType.LEFT_ANTI

    @property
    def keeps_unmatched_right(self) -> bool:
        """Right rows without a match appear in the output (see :attr:`keeps_unmatched_left`)."""
        return self.preserves_right

    @property
    def may_be_implicit_cartesian(self) -> bool:
        """A join of this type without a condition relating its sides is an implicit cartesian
        product, which ``spark.sql.crossJoin.enabled=false`` forbids (Spark's
        CheckCartesianProducts: Inner and the outer joins; an explicit CROSS JOIN and the
        existence joins are allowed)."""
        return self in (JoinType.INNER, JoinType.LEFT_OUTER, JoinType.RIGHT_OUTER,
                        JoinType.FULL_OUTER)

    @property
    def is_outer(self) -> bool:
        """LeftOuter, RightOuter or FullOuter: some rows come out NULL-padded."""
        return self.left_nullable or self.right_nullable

    def with_padded_rows_filtered(self, left: bool, right: bool) -> JoinType:
        """This join type once a filter above it drops every row whose ``left`` (resp. ``right``)
        side's columns are NULL-padded: the outer join it still is, or Inner (Spark's
        EliminateOuterJoin ``buildNewJoinType``).  Other join types are returned unchanged."""
        if not self.is_outer:
            return self
        keeps_left = self.preserves_left and not right
        keeps_right = self.preserves_right and not left
        return _BY_PRESERVED[keeps_left, keeps_right]

    @property
    def is_symmetric(self) -> bool:
        """Swapping the inputs leaves the join's result the same, up to column order: Inner,
        Cross and FullOuter."""
        return self.is_inner_like or self is JoinType.FULL_OUTER

    # -- per-side capabilities (``side``: a BuildSide naming the left or the right input) -----

    def preserves(self, side: BuildSide) -> bool:
        """:attr:`preserves_left` or :attr:`preserves_right`."""
        return self.preserves_left if side is BuildSide.LEFT else self.preserves_right

    def keeps_unmatched(self, side: BuildSide) -> bool:
        """:attr:`keeps_unmatched_left` or :attr:`keeps_unmatched_right`.  When False, rows of
        ``side`` without a match never reach the output: a join-condition conjunct over ``side``
        alone may filter that input below the join (Spark's PushPredicateThroughJoin, join
        condition cases), and a runtime filter built from the other side's keys may drop its
        rows."""
        return self.keeps_unmatched_left if side is BuildSide.LEFT else self.keeps_unmatched_right

    def pads_unmatched(self, side: BuildSide) -> bool:
        """Rows of ``side`` without a match come out once, NULL-padded on the other side's
        columns (the outer joins' preserved sides; ExistenceJoin flags rather than pads)."""
        return self.right_nullable if side is BuildSide.LEFT else self.left_nullable

    def outputs_unpadded(self, side: BuildSide) -> bool:
        """The columns of ``side`` reach the output with their values as they are (in the output
        and never NULL-padded).  Such a side's partitioning and ordering carry over to the output
        when the operator streams it (Spark's ``ShuffledJoin`` / ``HashJoin`` /
        ``BroadcastNestedLoopJoinExec.outputPartitioning``, ``SortMergeJoinExec.outputOrdering``),
        and a Filter above the join over its columns alone may move below the join into it
        (Spark's PushPredicateThroughJoin, Filter cases)."""
        if side is BuildSide.LEFT:
            return not self.left_nullable
        return self.outputs_right and not self.right_nullable

    @property
    def existence_output(self) -> ExistenceOutput | None:
        """Which left rows a LeftSemi / LeftAnti / ExistenceJoin emits; None for the joins that
        output pairs."""
        return _EXISTENCE_OUTPUT.get(self)

    @property
    def emits_matches_only(self) -> bool:
        """Only matched rows decide the output (Inner, Cross, LeftSemi): once one side has no
        rows left, nothing more comes out."""
        return not self.keeps_unmatched_left and not self.keeps_unmatched_right

    # -- physical operators -----------------------------------------------------------------

    def supports(self, algorithm: JoinAlgorithm) -> bool:
        """Whether ``algorithm`` can run this join type at all (Spark's JoinSelection: every
        type but the cartesian product, which runs inner-like joins only)."""
        return algorithm is not JoinAlgorithm.CARTESIAN or self.is_inner_like

    def can_build(self, side: BuildSide, algorithm: JoinAlgorithm) -> bool:
        """Whether Spark's JoinSelection lets ``algorithm`` build ``side`` of this join type:
        ``canBuildBroadcastLeft`` / ``canBuildBroadcastRight`` for BroadcastHashJoin,
        ``canBuildShuffledHashJoinLeft`` / ``Right`` for ShuffledHashJoin, either side of every
        type for BroadcastNestedLoopJoin; SortMergeJoin and CartesianProduct build nothing."""
        return self in _BUILDABLE[algorithm, side]

    def kernel_can_build(self, side: BuildSide, algorithm: JoinAlgorithm) -> bool:
        """The build sides Ember's local join kernels can run: Spark's (:meth:`can_build`), plus
        the left side of a LeftSemi / LeftAnti / ExistenceJoin hash join, which the local
        runtime's adaptive conversions build when the left side is much smaller (the output is
        then read off the build side's matched-row bitset)."""
        return self.can_build(side, algorithm) or (
            side is BuildSide.LEFT and self.is_left_existence
            and algorithm in (JoinAlgorithm.BROADCAST_HASH, JoinAlgorithm.SHUFFLED_HASH))

    def tracks_build_matches(self, build: BuildSide) -> bool:
        """A join building ``build`` must remember which build rows matched, over every streamed
        row, before it can emit them: the build side is padded when unmatched, or it is the left
        side of a LeftSemi / LeftAnti / ExistenceJoin.  When False, each streamed partition is
        joined on its own."""
        return self.pads_unmatched(build) or (build is BuildSide.LEFT and self.is_left_existence)

    @property
    def merge_streamed_side(self) -> BuildSide:
        """The side a sort-merge join streams (the other is buffered per key): the right side of
        a RightOuter join, else the left (Spark's ``SortMergeJoinExec.streamedPlan``)."""
        return BuildSide.RIGHT if self.preserves_right and not self.preserves_left else \
            BuildSide.LEFT

    def can_prune(self, side: BuildSide) -> bool:
        """Whether dynamic partition pruning may filter ``side`` with the other side's join keys
        (Spark's PartitionPruning ``canPruneLeft``: Inner, LeftSemi, RightOuter;
        ``canPruneRight``: Inner, LeftOuter)."""
        return self in _PRUNABLE[side]

    def joins_stream_with_static(self, static: BuildSide) -> bool:
        """A stream may be joined with a static input on side ``static``, each micro-batch on its
        own (Spark's UnsupportedOperationChecker: the inner-like joins, LeftOuter / LeftSemi /
        LeftAnti with a static right side, RightOuter with a static left side): the static
        side's unmatched rows, or its matches, need not be known over the whole stream."""
        return self is not JoinType.EXISTENCE and not self.tracks_build_matches(static)

    @property
    def supports_stream_stream(self) -> bool:
        """A join of two streams may have this type (Spark's StreamingSymmetricHashJoinExec:
        the inner-like and outer joins and LeftSemi)."""
        return not self.is_left_existence or self is JoinType.LEFT_SEMI


_EXISTENCE_OUTPUT = {
    JoinType.LEFT_SEMI: ExistenceOutput.MATCHED,
    JoinType.LEFT_ANTI: ExistenceOutput.UNMATCHED,
    JoinType.EXISTENCE: ExistenceOutput.FLAGGED,
}

#: (preserves left, preserves right) -> the join of pairs that does so
_BY_PRESERVED = {
    (False, False): JoinType.INNER,
    (True, False): JoinType.LEFT_OUTER,
    (False, True): JoinType.RIGHT_OUTER,
    (True, True): JoinType.FULL_OUTER,
}

_INNER_LIKE = frozenset({JoinType.INNER, JoinType.CROSS})
_LEFT_EXISTENCE = frozenset({JoinType.LEFT_SEMI, JoinType.LEFT_ANTI, JoinType.EXISTENCE})
_OUTER = frozenset({JoinType.LEFT_OUTER, JoinType.RIGHT_OUTER, JoinType.FULL_OUTER})

#: Spark 4's JoinSelection build-side matrix: (algorithm, side) -> the join types it may build.
_BUILDABLE: dict[tuple[JoinAlgorithm, BuildSide], frozenset[JoinType]] = {
    (JoinAlgorithm.BROADCAST_HASH, BuildSide.LEFT): _INNER_LIKE | {JoinType.RIGHT_OUTER},
    (JoinAlgorithm.BROADCAST_HASH, BuildSide.RIGHT): (_INNER_LIKE | {JoinType.LEFT_OUTER}
                                                      | _LEFT_EXISTENCE),
    (JoinAlgorithm.SHUFFLED_HASH, BuildSide.LEFT): _INNER_LIKE | _OUTER,
    (JoinAlgorithm.SHUFFLED_HASH, BuildSide.RIGHT): _INNER_LIKE | _OUTER | _LEFT_EXISTENCE,
    (JoinAlgorithm.BROADCAST_NESTED_LOOP, BuildSide.LEFT): frozenset(JoinType),
    (JoinAlgorithm.BROADCAST_NESTED_LOOP, BuildSide.RIGHT): frozenset(JoinType),
    (JoinAlgorithm.SORT_MERGE, BuildSide.LEFT): frozenset(),
    (JoinAlgorithm.SORT_MERGE, BuildSide.RIGHT): frozenset(),
    (JoinAlgorithm.CARTESIAN, BuildSide.LEFT): frozenset(),
    (JoinAlgorithm.CARTESIAN, BuildSide.RIGHT): frozenset(),
}

#: Spark's PartitionPruning.canPruneLeft / canPruneRight.
_PRUNABLE = {
    BuildSide.LEFT: frozenset({JoinType.INNER, JoinType.LEFT_SEMI, JoinType.RIGHT_OUTER}),
    BuildSide.RIGHT: frozenset({JoinType.INNER, JoinType.LEFT_OUTER}),
}


def join_output(join_type: JoinType, left: Any, right: Any,
                existence_attr: Any = None) -> tuple[Any, ...]:
    """The output attributes of a join of plans ``left`` and ``right`` (logical or physical:
    anything with ``.output``), per the table above: LeftSemi/LeftAnti output the left side,
    ExistenceJoin adds ``existence_attr``; outer joins make the padded side nullable
    (Spark's ``Join.output``).  ``right.output`` is read only when it is part of the output."""
    lo = left.output
    if not join_type.outputs_right:
        if join_type is JoinType.EXISTENCE:
            if existence_attr is None:
                raise InternalError("ExistenceJoin without its exists attribute")
            return lo + (existence_attr,)
        return lo
    ro = right.output
    if join_type.left_nullable:
        lo = tuple(a.with_nullability(True) for a in lo)
    if join_type.right_nullable:
        ro = tuple(a.with_nullability(True) for a in ro)
    return lo + ro


def join_type_string(join_type: JoinType | UsingJoin, existence_attr: Any = None) -> str:
    """How plans print a join type: ``ExistenceJoin(exists#5)`` with its flag, else the name."""
    if join_type is JoinType.EXISTENCE and existence_attr is not None:
        return f"ExistenceJoin({existence_attr.simple_string()})"
    return str(join_type)


_SQL = {
    JoinType.INNER: "INNER",
    JoinType.CROSS: "CROSS",
    JoinType.LEFT_OUTER: "LEFT OUTER",
    JoinType.RIGHT_OUTER: "RIGHT OUTER",
    JoinType.FULL_OUTER: "FULL OUTER",
    JoinType.LEFT_SEMI: "LEFT SEMI",
    JoinType.LEFT_ANTI: "LEFT ANTI",
    JoinType.EXISTENCE: "EXISTENCE",
}

_BY_NAME = {
    "inner": JoinType.INNER,
    "cross": JoinType.CROSS,
    "outer": JoinType.FULL_OUTER,
    "full": JoinType.FULL_OUTER,
    "fullouter": JoinType.FULL_OUTER,
    "full_outer": JoinType.FULL_OUTER,
    "left": JoinType.LEFT_OUTER,
    "leftouter": JoinType.LEFT_OUTER,
    "left_outer": JoinType.LEFT_OUTER,
    "right": JoinType.RIGHT_OUTER,
    "rightouter": JoinType.RIGHT_OUTER,
    "right_outer": JoinType.RIGHT_OUTER,
    "semi": JoinType.LEFT_SEMI,
    "leftsemi": JoinType.LEFT_SEMI,
    "left_semi": JoinType.LEFT_SEMI,
    "anti": JoinType.LEFT_ANTI,
    "leftanti": JoinType.LEFT_ANTI,
    "left_anti": JoinType.LEFT_ANTI,
}


def join_type_from_string(how: str) -> JoinType:
    """PySpark's ``how`` strings (``'left_outer'``, ``'semi'``, ``'full'`` ...) to a JoinType."""
    key = how.lower().replace(" ", "")
    if key not in _BY_NAME:
        supported = "'" + "', '".join(sorted(_BY_NAME)) + "'"
        raise AnalysisError(
            f"Unsupported join type '{how}'. Supported join types include: {supported}.",
            error_class="UNSUPPORTED_JOIN_TYPE",
            parameters={"typ": how, "supported": supported},
        )
    return _BY_NAME[key]


@dataclass(frozen=True, slots=True)
class UsingJoin:
    """Unresolved ``JOIN ... USING (cols)`` / ``NATURAL JOIN`` (``natural=True``, cols empty).
    The analyzer turns it into an equi-join plus a projection (ResolveNaturalAndUsingJoin)."""

    join_type: JoinType
    using_columns: tuple[str, ...] = ()
    natural: bool = False

    def __str__(self) -> str:
        if self.natural:
            return f"NaturalJoin({self.join_type})"
        return f"UsingJoin({self.join_type}, [{', '.join(self.using_columns)}])"


@dataclass(frozen=True, slots=True)
class JoinHint:
    """Hints attached to each side of a Join (``BROADCAST``, ``SHUFFLE_MERGE``, ``SHUFFLE_HASH``,
    ``SHUFFLE_REPLICATE_NL``).  Spark's strategy names, canonical form."""

    left: tuple[str, ...] = ()
    right: tuple[str, ...] = ()

    @property
    def is_empty(self) -> bool:
        return not self.left and not self.right

    def __str__(self) -> str:
        parts = []
        if self.left:
            parts.append("leftHint=(strategy=" + ",".join(h.lower() for h in self.left) + ")")
        if self.right:
            parts.append("rightHint=(strategy=" + ",".join(h.lower() for h in self.right) + ")")
        return ", ".join(parts)


# Spark's hint names and their aliases -> canonical strategy name.
JOIN_HINT_ALIASES: dict[str, str] = {
    "BROADCAST": "BROADCAST",
    "BROADCASTJOIN": "BROADCAST",
    "MAPJOIN": "BROADCAST",
    "MERGE": "SHUFFLE_MERGE",
    "SHUFFLE_MERGE": "SHUFFLE_MERGE",
    "MERGEJOIN": "SHUFFLE_MERGE",
    "SHUFFLE_HASH": "SHUFFLE_HASH",
    "SHUFFLE_REPLICATE_NL": "SHUFFLE_REPLICATE_NL",
}
