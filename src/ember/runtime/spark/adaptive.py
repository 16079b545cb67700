"""Adaptive join conversion on the Spark runtime: Spark's AQE re-planning of a shuffled join once
the size of an input's shuffle is known, done by the driver between Spark jobs.

Before the result job is built, :func:`convert_joins` walks the plan bottom-up.  At each
``SortMergeJoinExec`` / ``ShuffledHashJoinExec`` without a join hint whose two inputs are hash
exchanges (seen through filters, projects and aggregates, as the local runtime's
``adaptive._Side``), the exchange of a side the join type may broadcast runs its map stage --
the side the plan estimates smaller first, then the other one.  Its size is the Arrow bytes the
map tasks wrote, summed with an accumulator, and the measuring job reads the shuffle in the JVM
only (``count`` on the shuffled ``JavaRDD``: no Python step).  Spark keeps the map outputs, so
the query's later jobs read that shuffle without running its map stage again.  The map stages
of joins with no shuffled join below them are measured first, all together as concurrent jobs
(:func:`premeasure`), as Spark's AQE submits every ready query stage at once.  After each
measurement the side's distinct join keys may filter the other side's file scan
(:mod:`.dynamic_filters`); a small selective side the join type may not broadcast (the left
side of a left semi join) is measured first for that alone (:func:`_key_source`).

- A side at most ``spark.sql.autoBroadcastJoinThreshold`` bytes is broadcast: the join becomes
  ``BroadcastHashJoinExec`` (Spark's ``spark.sql.adaptive.autoBroadcastJoinThreshold`` defaults
  to the same value).  The other side's sort goes, and its exchange too when its map stage has
  not run, nothing above relies on the join's hash partitioning and only filters and projects
  lie between the exchange and the join: it is then streamed in its input's partitions (beyond
  Spark, whose AQE has shuffled it already).  When an operator above relies on the join's
  ordering, the broadcast join's output is sorted instead.
- Otherwise, when nothing above relies on its ordering, a sort-merge join runs as a shuffled
  hash join over the same shuffles (``ember.execution.adaptive.shuffledHashJoin.enabled``, as on
  the local runtime) building the smaller measured side, provided its average task input stays
  under ``memoryBudget / (2 x cores)``.

Applies when ``spark.sql.adaptive.enabled`` and the runtime has the planner's logical links
(for hints and estimates); ``DataFrame.to_spark`` stays lazy and runs the static plan.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ember.conf import (ADAPTIVE_ENABLED, ADAPTIVE_SHUFFLED_HASH_JOIN, AUTO_BROADCAST_THRESHOLD,
                        MEMORY_BUDGET)
from ember.physical.nodes import (BuildSide, ReusedExchangeExec, ShuffledHashJoinExec, SortExec,
                                  SortMergeJoinExec, SparkPlan)
from ember.plans.logical.join_type import JoinAlgorithm
from ember.runtime.local.adaptive import (_broadcast_plan, _capped_size, _shj_sides, _side_of,
                                          _Side, _unsorted, child_needs)

if TYPE_CHECKING:
    from ember.runtime.spark.runtime import SparkRuntime

__all__ = ["convert_joins", "premeasure"]


def convert_joins(plan: SparkPlan, rt: SparkRuntime) -> SparkPlan:
    """``plan`` with its shuffled joins re-planned from measured shuffle sizes (running the
    map stages of the inputs it measures on ``rt``'s SparkContext)."""
    if not rt.conf.get(ADAPTIVE_ENABLED) or not rt.logical_links:
        return plan
    new = _walk(plan, rt, False, False)
    sorts = {id(b) for _, b in rt.adaptive_log if isinstance(b, SortExec)}
    return _drop_sorts(new, sorts, False) if sorts else new


def _drop_sorts(node: SparkPlan, sorts: set[int], need_o: bool) -> SparkPlan:
    """``node`` without the sorts the conversions added (``sorts``) for an ordering that no
    operator relies on any more (the join above it was converted too)."""
    if id(node) in sorts and not need_o:
        return _drop_sorts(node.child, sorts, False)
    kids = node.children
    if not kids:
        return node
    new = [_drop_sorts(c, sorts, o) for c, (_, o) in zip(kids, child_needs(node, False, need_o))]
    return node.with_children(new) if any(a is not b for a, b in zip(new, kids)) else node


def _walk(node: SparkPlan, rt: SparkRuntime, need_p: bool, need_o: bool,
          memo: dict[int, SparkPlan] | None = None) -> SparkPlan:
    """``node`` with its joins converted, bottom-up.  A node reached twice (the exchange a
    ``ReusedExchangeExec`` reads) maps to one replacement, and a rebuilt node keeps what the
    runtime knows by node id: its logical link, its task count and whether it is reused."""
    memo = {} if memo is None else memo
    hit = memo.get(id(node))
    if hit is not None:
        return hit
    old = node
    kids = node.children
    if kids:
        needs = child_needs(node, need_p, need_o)
        new = [_walk(c, rt, p, o, memo) for c, (p, o) in zip(kids, needs)]
        if any(a is not b for a, b in zip(new, kids)):
            node = node.with_children(new)
            rt.carry_over(old, node)
    if isinstance(node, (SortMergeJoinExec, ShuffledHashJoinExec)):
        converted = _convert(node, rt, need_p, need_o)
        if converted is not None:
            rt.adaptive_log.append((node, converted))
            node = converted
    memo[id(old)] = node
    return node


def _no_hint(node: SparkPlan, rt: SparkRuntime) -> bool:
    join = rt.logical_links.get(id(node))
    hint = getattr(join, "hint", None)
    return join is not None and (hint is None or hint.is_empty)


def _estimate(side: _Side, rt: SparkRuntime) -> float:
    ex = side.exchange
    logical = rt.logical_links.get(id(ex))
    if logical is None and isinstance(ex, ReusedExchangeExec):
        logical = rt.logical_links.get(id(ex.child))
    if logical is None:
        return float("inf")
    try:
        return _capped_size(logical, rt.conf, {})
    except Exception:  # noqa: BLE001 - no estimate: no preference
        return float("inf")


def _measure_order(node: SparkPlan, rt: SparkRuntime
                   ) -> tuple[dict[BuildSide, _Side | None], list[BuildSide]]:
    """The join's sides, and those it measures in order: a side is measured (and may be
    broadcast) only when an exchange feeds it and the join type may build it; the other one
    may be anything (e.g. the output of a join co-partitioned with it).  The side estimated
    smaller goes first."""
    jt = node.join_type
    by_side = {BuildSide.LEFT: _side_of(node.left), BuildSide.RIGHT: _side_of(node.right)}
    sides = [s for s in (BuildSide.RIGHT, BuildSide.LEFT)
             if jt.can_build(s, JoinAlgorithm.BROADCAST_HASH) and by_side[s] is not None]
    if len(sides) == 2 and _estimate(by_side[BuildSide.LEFT], rt) < _estimate(
            by_side[BuildSide.RIGHT], rt):
        sides.reverse()
    return by_side, sides


def _key_source(node: SparkPlan, rt: SparkRuntime, by_side: dict[BuildSide, _Side | None]
                ) -> _Side | None:
    """A side of ``node`` the join type may not broadcast whose distinct keys would filter
    the other side's scan (:meth:`~.runtime.SparkRuntime.filter_other_side`, e.g. the left
    side of a left semi join), estimated smaller than that other side: its map stage runs
    before the other side's scan is made (it runs anyway unless the other side is broadcast,
    and it is the smaller one)."""
    for side in (BuildSide.LEFT, BuildSide.RIGHT):
        ok = node.join_type.can_build(side, JoinAlgorithm.BROADCAST_HASH)
        other = BuildSide.RIGHT if side is BuildSide.LEFT else BuildSide.LEFT
        s, o = by_side[side], by_side[other]
        if (ok or s is None or o is None or not rt.can_filter_other_side(node, side)
                or not _estimate(s, rt) < _estimate(o, rt)):
            continue
        return s
    return None


def premeasure(plan: SparkPlan, rt: SparkRuntime) -> None:
    """Runs together, before :func:`convert_joins` walks the plan, the map stages it would
    measure one after the other at the joins with no shuffled join below them (their inputs
    cannot change): each such join's first measured side, and its second one when that side
    runs its exchange whatever the join becomes (an aggregate lies between the exchange and
    the join, so the exchange is never dropped).  Spark's adaptive execution likewise submits
    every query stage whose inputs are ready at once; on two cores, one stage's last tasks and
    the driver's work between jobs overlap the next stage."""
    if (not rt.conf.get(ADAPTIVE_ENABLED) or not rt.logical_links
            or int(rt.conf.get(AUTO_BROADCAST_THRESHOLD)) <= 0):
        return
    shuffled = (SortMergeJoinExec, ShuffledHashJoinExec)
    exchanges: dict[int, SparkPlan] = {}
    for join in plan.collect(lambda n: n if isinstance(n, shuffled) else None):
        if any(c.exists(lambda n: isinstance(n, shuffled)) for c in join.children):
            continue
        if not _no_hint(join, rt):
            continue
        by_side, sides = _measure_order(join, rt)
        source = _key_source(join, rt, by_side)
        if source is not None:  # measured alone first: its keys filter the other side
            exchanges.setdefault(id(source.exchange), source.exchange)
            continue
        for i, side in enumerate(sides):
            s = by_side[side]
            if s is not None and (i == 0 or not s.narrow):
                ex = s.exchange
                exchanges.setdefault(id(ex), ex)
    if len(exchanges) > 1:
        rt.measure_all(list(exchanges.values()))


def _convert(node: SparkPlan, rt: SparkRuntime, need_p: bool, need_o: bool) -> SparkPlan | None:
    if not _no_hint(node, rt):
        return None
    by_side, sides = _measure_order(node, rt)
    threshold = int(rt.conf.get(AUTO_BROADCAST_THRESHOLD))
    measured: dict[BuildSide, int] = {}
    source = _key_source(node, rt, by_side)
    if source is not None:
        side = next(s for s, v in by_side.items() if v is source)
        measured[side] = rt.shuffle_bytes(source.exchange)
        rt.filter_other_side(node, side)
    if threshold > 0:
        for side in sides:
            measured[side] = rt.shuffle_bytes(by_side[side].exchange)
            rt.filter_other_side(node, side)  # before the other side's scan is made
            if measured[side] <= threshold:
                return _to_broadcast(node, side, by_side, measured, need_p, need_o)
    if (need_o or not isinstance(node, SortMergeJoinExec) or None in by_side.values()
            or not rt.conf.get(ADAPTIVE_SHUFFLED_HASH_JOIN)):
        return None
    return _to_shuffled_hash(node, by_side, measured, rt)


def _to_broadcast(node: SparkPlan, side: BuildSide, by_side: dict[BuildSide, _Side | None],
                  measured: dict[BuildSide, int], need_p: bool, need_o: bool) -> SparkPlan:
    small = by_side[side]
    big_side = BuildSide.LEFT if side is BuildSide.RIGHT else BuildSide.RIGHT
    big = by_side[big_side]
    placeholder, build = _broadcast_plan(node, side, small)
    if big is None:
        stream = _unsorted(node.left if big_side is BuildSide.LEFT else node.right)
    elif not need_p and big.narrow and big_side not in measured:
        stream = big.without_exchange()  # streamed in its input's partitions, never shuffled
    else:
        stream = big.top
    l_child, r_child = (stream, build) if side is BuildSide.RIGHT else (build, stream)
    joined: SparkPlan = placeholder.copy(left=l_child, right=r_child)
    if need_o:
        return SortExec(node.output_ordering, False, joined)
    return joined


def _to_shuffled_hash(node: SortMergeJoinExec, by_side: dict[BuildSide, _Side],
                      measured: dict[BuildSide, int], rt: SparkRuntime) -> SparkPlan | None:
    allowed = _shj_sides(node.join_type)
    sides = [s for s in allowed if s in measured] or allowed
    if not sides:
        return None
    side = min(sides, key=lambda s: measured.get(s, _estimate(by_side[s], rt)))
    size = measured.get(side)
    if size is not None:
        ex = by_side[side].exchange
        tasks = rt.tasks_of(ex)
        limit = int(rt.conf.get(MEMORY_BUDGET)) // max(1, 2 * rt.sc.defaultParallelism)
        if size // max(1, tasks) > limit:
            return None
    return ShuffledHashJoinExec(node.left_keys, node.right_keys, node.join_type, side,
                                node.condition, _unsorted(node.left), _unsorted(node.right),
                                existence_attr=node.existence_attr)
