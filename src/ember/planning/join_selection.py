"""JoinSelection: how a logical ``Join`` becomes one of the five physical joins, exactly as
Spark 4's ``JoinSelection`` strategy with adaptive execution off.

Support matrix (which physical join may run which join type, and which side it may build;
``JoinType.can_build`` / ``JoinType.supports`` hold it):

=====================  ==========  ==========  ==========  ==========  =========  =========  ========
operator               Inner/Cross LeftOuter   RightOuter  FullOuter   LeftSemi   LeftAnti   Existence
=====================  ==========  ==========  ==========  ==========  =========  =========  ========
BroadcastHashJoin      L or R      R           L           --          R          R (+NAAJ)  R
ShuffledHashJoin       L or R      L or R      L or R      L or R      R          R          R
SortMergeJoin          yes         yes         yes         yes         yes        yes        yes
BroadcastNestedLoop    L or R      L or R      L or R      L or R      L or R     L or R     L or R
CartesianProduct       yes         --          --          --          --         --         --
=====================  ==========  ==========  ==========  ==========  =========  =========  ========

(NAAJ: single-column NOT IN is a null-aware BroadcastHashJoin LeftAnti BuildRight whatever the
sizes.)  Hash joins need equi-join keys (``ExtractEquiJoinKeys``; ``a <=> b`` becomes the two key
pairs ``coalesce(a, 0), isnull(a)``); sort-merge additionally needs orderable key types (no maps).
Hash joins on every Ember type are supported (Ember has no non-binary collations).

Decision procedure for an equi-join (hints are per side: ``Join.hint.left`` / ``.right``):

- no hint: broadcast hash (by size: ``0 <= size <= spark.sql.autoBroadcastJoinThreshold``, the
  smaller buildable side, ties to the right) -> shuffled hash (``not preferSortMergeJoin`` and
  ``size < threshold * spark.sql.shuffle.partitions`` and ``size * shuffledHashJoinFactor <=
  other side``, or ``ember.join.forceApplyShuffledHashJoin``) -> sort-merge (orderable keys)
  -> cartesian product (inner-like) -> broadcast nested loop (smaller side).
- with hints: BROADCAST (hinted buildable side) > MERGE > SHUFFLE_HASH (hinted buildable side) >
  SHUFFLE_REPLICATE_NL (cartesian, inner-like) > the no-hint procedure.

Without equi keys: broadcast nested loop when a side is broadcastable (hinted, or by size; both ->
the smaller side for inner-like/full outer, else BuildLeft for inner/right outer and BuildRight
otherwise) -> cartesian product (inner-like; first after the BROADCAST hint when
SHUFFLE_REPLICATE_NL is hinted) -> broadcast nested loop on that desired side.

Beyond Spark: a BroadcastNestedLoopJoin or CartesianProduct chosen for a condition that bounds
the sides both ways (``ember.physical.range_join``) becomes a ``RangeJoinExec`` with the same
build side (a CartesianProduct's: the smaller side), unless ``ember.join.rangeJoin.enabled`` is
false.

Ember plans as Spark does with ``spark.sql.adaptive.enabled=false`` whatever that key says: AQE's
runtime re-planning (demoting sort-merge to broadcast on measured sizes) is not reproduced.

Sizes: ``ember.plans.logical.statistics.plan_stats(plan, conf).size_in_bytes`` (Spark's
size-only estimator), through the ``size_of`` callable so tests can inject sizes.
"""

from __future__ import annotations

from collections.abc import Callable

from ember import types as T
from ember.conf import (
    AUTO_BROADCAST_THRESHOLD,
    FORCE_SHUFFLED_HASH_JOIN,
    OPTIMIZE_NULL_AWARE_ANTI_JOIN,
    PREFER_SORT_MERGE_JOIN,
    RANGE_JOIN_ENABLED,
    SHUFFLE_PARTITIONS,
    SHUFFLED_HASH_JOIN_FACTOR,
    SQLConf,
)
from ember.expressions.base import Expression
from ember.physical.nodes import (
    BroadcastHashJoinExec,
    BroadcastNestedLoopJoinExec,
    BuildSide,
    CartesianProductExec,
    RangeJoinExec,
    ShuffledHashJoinExec,
    SortMergeJoinExec,
    SparkPlan,
)
from ember.physical.range_join import range_condition
from ember.plans.logical.join_type import JoinAlgorithm, JoinHint, JoinType
from ember.plans.logical.nodes import Join, LogicalPlan
from ember.plans.logical.patterns import (
    extract_equi_join_keys,
    extract_null_aware_anti_join_keys,
)
from ember.plans.logical.statistics import plan_stats

SizeOf = Callable[[LogicalPlan], int]
PlanLater = Callable[[LogicalPlan], SparkPlan]

BROADCAST = "BROADCAST"
SHUFFLE_MERGE = "SHUFFLE_MERGE"
SHUFFLE_HASH = "SHUFFLE_HASH"
SHUFFLE_REPLICATE_NL = "SHUFFLE_REPLICATE_NL"
NO_BROADCAST_HASH = "NO_BROADCAST_HASH"
NO_BROADCAST_AND_REPLICATION = "NO_BROADCAST_AND_REPLICATION"
PREFER_SHUFFLE_HASH = "PREFER_SHUFFLE_HASH"


def default_size_of(conf: SQLConf) -> SizeOf:
    """``plan -> plan_stats(plan, conf).size_in_bytes`` (Spark's ``plan.stats.sizeInBytes``)."""

    def size_of(plan: LogicalPlan) -> int:
        return plan_stats(plan, conf).size_in_bytes

    return size_of


def is_orderable(t: T.DataType) -> bool:
    """Spark's ``RowOrdering.isOrderable``: atomic types, and structs/arrays of orderable types
    (maps are not orderable)."""
    match t:
        case T.StructType(fields=fs):
            return all(is_orderable(f.data_type) for f in fs)
        case T.ArrayType():
            return is_orderable(t.element_type)
        case T.AtomicType() | T.YearMonthIntervalType() | T.DayTimeIntervalType():
            return True
        case _:
            return False


# ---------------------------------------------------------------------------------------------
# Hint predicates (Spark's ``JoinSelectionHelper.hintToBroadcastLeft`` etc.)


def _has(hints: tuple[str, ...], strategy: str) -> bool:
    return strategy in hints


def hint_to_broadcast_left(h: JoinHint) -> bool:
    return _has(h.left, BROADCAST)


def hint_to_broadcast_right(h: JoinHint) -> bool:
    return _has(h.right, BROADCAST)


def hint_to_not_broadcast_left(h: JoinHint) -> bool:
    return _has(h.left, NO_BROADCAST_HASH) or _has(h.left, NO_BROADCAST_AND_REPLICATION)


def hint_to_not_broadcast_right(h: JoinHint) -> bool:
    return _has(h.right, NO_BROADCAST_HASH) or _has(h.right, NO_BROADCAST_AND_REPLICATION)


def hint_to_shuffle_hash_left(h: JoinHint) -> bool:
    return _has(h.left, SHUFFLE_HASH)


def hint_to_shuffle_hash_right(h: JoinHint) -> bool:
    return _has(h.right, SHUFFLE_HASH)


def hint_to_prefer_shuffle_hash_left(h: JoinHint) -> bool:
    return _has(h.left, PREFER_SHUFFLE_HASH)


def hint_to_prefer_shuffle_hash_right(h: JoinHint) -> bool:
    return _has(h.right, PREFER_SHUFFLE_HASH)


def hint_to_sort_merge_join(h: JoinHint) -> bool:
    return _has(h.left, SHUFFLE_MERGE) or _has(h.right, SHUFFLE_MERGE)


def hint_to_shuffle_replicate_nl(h: JoinHint) -> bool:
    return _has(h.left, SHUFFLE_REPLICATE_NL) or _has(h.right, SHUFFLE_REPLICATE_NL)


def hint_to_not_broadcast_and_replicate(h: JoinHint) -> bool:
    return _has(h.left, NO_BROADCAST_AND_REPLICATION) or _has(h.right, NO_BROADCAST_AND_REPLICATION)


# ---------------------------------------------------------------------------------------------
# JoinSelection


class JoinSelection:
    """Spark's JoinSelection strategy.  ``plan(join, plan_later)`` returns the physical join
    (children planned with ``plan_later``), or None when ``join`` is not a resolved Join."""

    def __init__(self, conf: SQLConf, size_of: SizeOf | None = None) -> None:
        self.conf = conf
        self.size_of = size_of or default_size_of(conf)

    # -- size predicates (6.2) ----------------------------------------------------------------
    def can_broadcast_by_size(self, plan: LogicalPlan) -> bool:
        threshold = self.conf.get(AUTO_BROADCAST_THRESHOLD)
        size = self.size_of(plan)
        return 0 <= size <= threshold

    def can_build_local_hash_map_by_size(self, plan: LogicalPlan) -> bool:
        threshold = self.conf.get(AUTO_BROADCAST_THRESHOLD)
        return self.size_of(plan) < threshold * self.conf.get(SHUFFLE_PARTITIONS)

    def much_smaller(self, a: LogicalPlan, b: LogicalPlan) -> bool:
        return self.size_of(a) * self.conf.get(SHUFFLED_HASH_JOIN_FACTOR) <= self.size_of(b)

    def smaller_side(self, left: LogicalPlan, right: LogicalPlan) -> BuildSide:
        return BuildSide.RIGHT if self.size_of(right) <= self.size_of(left) else BuildSide.LEFT

    def build_side(self, can_left: bool, can_right: bool, left: LogicalPlan,
                   right: LogicalPlan) -> BuildSide | None:
        if can_left and can_right:
            return self.smaller_side(left, right)
        if can_left:
            return BuildSide.LEFT
        if can_right:
            return BuildSide.RIGHT
        return None

    def broadcast_build_side(self, j: Join, hint_only: bool) -> BuildSide | None:
        jt: JoinType = j.join_type  # type: ignore[assignment]
        if hint_only:
            want_l = hint_to_broadcast_left(j.hint)
            want_r = hint_to_broadcast_right(j.hint)
        else:
            want_l = self.can_broadcast_by_size(j.left) and not hint_to_not_broadcast_left(j.hint)
            want_r = self.can_broadcast_by_size(j.right) and not hint_to_not_broadcast_right(j.hint)
        alg = JoinAlgorithm.BROADCAST_HASH
        return self.build_side(jt.can_build(BuildSide.LEFT, alg) and want_l,
                               jt.can_build(BuildSide.RIGHT, alg) and want_r, j.left, j.right)

    def shuffle_hash_build_side(self, j: Join, hint_only: bool) -> BuildSide | None:
        jt: JoinType = j.join_type  # type: ignore[assignment]
        if hint_only:
            want_l = hint_to_shuffle_hash_left(j.hint)
            want_r = hint_to_shuffle_hash_right(j.hint)
        else:
            prefer_smj = self.conf.get(PREFER_SORT_MERGE_JOIN)
            force = self.conf.get(FORCE_SHUFFLED_HASH_JOIN)
            want_l = (hint_to_prefer_shuffle_hash_left(j.hint) or force or (
                not prefer_smj and self.can_build_local_hash_map_by_size(j.left)
                and self.much_smaller(j.left, j.right)))
            want_r = (hint_to_prefer_shuffle_hash_right(j.hint) or force or (
                not prefer_smj and self.can_build_local_hash_map_by_size(j.right)
                and self.much_smaller(j.right, j.left)))
        alg = JoinAlgorithm.SHUFFLED_HASH
        return self.build_side(jt.can_build(BuildSide.LEFT, alg) and want_l,
                               jt.can_build(BuildSide.RIGHT, alg) and want_r, j.left, j.right)

    # -- the strategy -------------------------------------------------------------------------
    def plan(self, j: LogicalPlan, plan_later: PlanLater) -> SparkPlan | None:
        if not isinstance(j, Join) or not isinstance(j.join_type, JoinType):
            return None
        keys = extract_equi_join_keys(j)
        if keys is not None:
            return self._plan_equi(j, keys[0], keys[1], keys[2], plan_later)
        if self.conf.get(OPTIMIZE_NULL_AWARE_ANTI_JOIN):
            naaj = extract_null_aware_anti_join_keys(j)
            if naaj is not None:
                return BroadcastHashJoinExec(
                    (naaj[0],), (naaj[1],), JoinType.LEFT_ANTI, BuildSide.RIGHT, None,
                    plan_later(j.left), plan_later(j.right), is_null_aware_anti_join=True)
        return self._range_join(j, self._plan_non_equi(j, plan_later))

    def _plan_equi(self, j: Join, left_keys: tuple[Expression, ...],
                   right_keys: tuple[Expression, ...], residual: Expression | None,
                   plan_later: PlanLater) -> SparkPlan:
        jt: JoinType = j.join_type  # type: ignore[assignment]
        ex = j.existence_attr

        def bhj(hint_only: bool) -> SparkPlan | None:
            side = self.broadcast_build_side(j, hint_only)
            if side is None:
                return None
            return BroadcastHashJoinExec(left_keys, right_keys, jt, side, residual,
                                         plan_later(j.left), plan_later(j.right),
                                         existence_attr=ex)

        def shj(hint_only: bool) -> SparkPlan | None:
            side = self.shuffle_hash_build_side(j, hint_only)
            if side is None:
                return None
            return ShuffledHashJoinExec(left_keys, right_keys, jt, side, residual,
                                        plan_later(j.left), plan_later(j.right), existence_attr=ex)

        def smj() -> SparkPlan | None:
            if not all(is_orderable(k.data_type) for k in left_keys):
                return None
            return SortMergeJoinExec(left_keys, right_keys, jt, residual, plan_later(j.left),
                                     plan_later(j.right), existence_attr=ex)

        def cartesian() -> SparkPlan | None:
            if (jt.supports(JoinAlgorithm.CARTESIAN)
                    and not hint_to_not_broadcast_and_replicate(j.hint)):
                return CartesianProductExec(plan_later(j.left), plan_later(j.right), j.condition)
            return None

        def without_hint() -> SparkPlan:
            for attempt in (lambda: bhj(False), lambda: shj(False), smj, cartesian):
                p = attempt()
                if p is not None:
                    return p
            return BroadcastNestedLoopJoinExec(plan_later(j.left), plan_later(j.right),
                                               self.smaller_side(j.left, j.right), jt,
                                               j.condition, existence_attr=ex)

        if j.hint.is_empty:
            return without_hint()
        p = bhj(True)
        if p is None and hint_to_sort_merge_join(j.hint):
            p = smj()
        if p is None:
            p = shj(True)
        if p is None and hint_to_shuffle_replicate_nl(j.hint):
            p = cartesian()
        return p if p is not None else without_hint()

    def _range_join(self, j: Join, p: SparkPlan) -> SparkPlan:
        """Beyond Spark: ``p`` (Spark's choice) as a RangeJoin when it compares every pair and
        the condition bounds the sides both ways (:mod:`ember.physical.range_join`)."""
        if not self.conf.get(RANGE_JOIN_ENABLED) or range_condition(
                j.condition, j.left.output, j.right.output) is None:
            return p
        if type(p) is BroadcastNestedLoopJoinExec:
            return RangeJoinExec(p.left, p.right, p.build_side, p.join_type, p.condition,
                                 existence_attr=p.existence_attr)
        if isinstance(p, CartesianProductExec):
            return RangeJoinExec(p.left, p.right, self.smaller_side(j.left, j.right),
                                 JoinType.INNER, p.condition, replaces="CartesianProduct")
        return p

    def _plan_non_equi(self, j: Join, plan_later: PlanLater) -> SparkPlan:
        jt: JoinType = j.join_type  # type: ignore[assignment]
        ex = j.existence_attr
        if jt.is_symmetric:
            desired = self.smaller_side(j.left, j.right)
        else:
            # Spark: broadcast the left side of a right join, the right side of a left join
            desired = (BuildSide.LEFT if jt.can_build(BuildSide.LEFT, JoinAlgorithm.BROADCAST_HASH)
                       else BuildSide.RIGHT)

        def bnlj(hint_only: bool) -> SparkPlan | None:
            if hint_only:
                build_l = hint_to_broadcast_left(j.hint)
                build_r = hint_to_broadcast_right(j.hint)
            else:
                build_l = (self.can_broadcast_by_size(j.left)
                           and not hint_to_not_broadcast_left(j.hint))
                build_r = (self.can_broadcast_by_size(j.right)
                           and not hint_to_not_broadcast_right(j.hint))
            if build_l and build_r:
                side = desired
            elif build_l:
                side = BuildSide.LEFT
            elif build_r:
                side = BuildSide.RIGHT
            else:
                return None
            return BroadcastNestedLoopJoinExec(plan_later(j.left), plan_later(j.right), side, jt,
                                               j.condition, existence_attr=ex)

        def cartesian() -> SparkPlan | None:
            if (jt.supports(JoinAlgorithm.CARTESIAN)
                    and not hint_to_not_broadcast_and_replicate(j.hint)):
                return CartesianProductExec(plan_later(j.left), plan_later(j.right), j.condition)
            return None

        def without_hint() -> SparkPlan:
            p = bnlj(False)
            if p is None:
                p = cartesian()
            if p is None:
                p = BroadcastNestedLoopJoinExec(plan_later(j.left), plan_later(j.right), desired,
                                                jt, j.condition, existence_attr=ex)
            return p

        if j.hint.is_empty:
            return without_hint()
        p = bnlj(True)
        if p is None and hint_to_shuffle_replicate_nl(j.hint):
            p = cartesian()
        return p if p is not None else without_hint()
