"""Adaptive join conversion: a shuffled join whose one side turns out small at run time becomes a
broadcast hash join (Spark's adaptive execution, ``DynamicJoinSelection`` + the AQE re-planning
of ``JoinSelection`` with runtime statistics).

When the runtime reaches a ``SortMergeJoinExec`` or ``ShuffledHashJoinExec`` whose children are
(sorted) hash exchanges, it runs the map side of the exchange of the side that is estimated
smaller -- only that one.  If that side's shuffle data is at most
``spark.sql.autoBroadcastJoinThreshold`` bytes and the join type may build it, the join runs as
``BroadcastHashJoinExec`` with that exchange broadcast and the *other side's sort skipped* --
and its exchange too unless an operator above relies on the join's hash partitioning: the big
side is then streamed in its original partitions, never shuffled or sorted (beyond Spark, whose
AQE has already shuffled it).  Otherwise the other side's map side runs and both
exchanges are coalesced together exactly as without conversion.

Applies only when (all of):

- the runtime was given the planner's logical links (``LocalRuntime(logical_links=...)``, from
  ``ember.planning.plan_query_with_links``), ``spark.sql.adaptive.enabled`` is true and the
  threshold is positive;
- the logical join carries no join hint (a MERGE / SHUFFLE_HASH hint is obeyed);
- no operator above relies on the join's output ordering; when one relies on its partitioning,
  the big side keeps its exchange (the replacement is partitioned like its streamed side);
- the two exchanges are not shared with other co-partitioned operators.

The run's metrics record the replacement (``RunMetrics.replaced``) so EXPLAIN ANALYZE prints the
plan that actually ran.
"""

from __future__ import annotations

from typing import Any

from ember.conf import ADAPTIVE_ENABLED, AUTO_BROADCAST_THRESHOLD
from ember.physical.nodes import (
    BroadcastExchangeExec,
    BroadcastHashJoinExec,
    BuildSide,
    ShuffledHashJoinExec,
    ShuffleExchangeExec,
    SortExec,
    SortMergeJoinExec,
    SparkPlan,
)
from ember.physical.partitioning import HashPartitioning, UnspecifiedDistribution
from ember.planning.join_selection import can_build_broadcast_left, can_build_broadcast_right

__all__ = ["relied_upon", "convert_join"]


def relied_upon(root: SparkPlan) -> tuple[set[int], set[int]]:
    """Ids of the nodes under ``root`` whose output partitioning (first set) or ordering
    (second set) some operator above relies on -- conservatively: every node between a
    requirement and the exchange, broadcast (or, for orderings, sort) that provides it."""
    part: set[int] = set()
    order: set[int] = set()
    stack: list[tuple[SparkPlan, bool, bool]] = [(root, False, False)]
    while stack:
        n, need_p, need_o = stack.pop()
        if need_p:
            part.add(id(n))
        if need_o:
            order.add(id(n))
        kids = n.children
        if not kids:
            continue
        try:
            dists = n.required_child_distribution
            orders = n.required_child_ordering
        except Exception:  # noqa: BLE001 - a node that cannot say: assume it relies on all
            dists, orders = None, None
        exchange = isinstance(n, (ShuffleExchangeExec, BroadcastExchangeExec))
        for i, c in enumerate(kids):
            if exchange:
                cp = co = False
            elif dists is None or orders is None:
                cp = co = True
            else:
                cp = need_p or not isinstance(dists[i], UnspecifiedDistribution)
                co = bool(orders[i]) or (need_o and not isinstance(n, SortExec))
            stack.append((c, cp, co))
    return part, order


def _exchange_of(child: SparkPlan) -> ShuffleExchangeExec | None:
    if isinstance(child, SortExec) and not child.is_global:
        child = child.child
    if isinstance(child, ShuffleExchangeExec) and isinstance(child.output_partitioning,
                                                             HashPartitioning):
        return child
    return None


def _capped_size(plan: Any, conf: Any, memo: dict[int, float]) -> float:
    """Spark's size-only estimate of ``plan``, capped at its largest child's (capped) estimate:
    the size-only estimate of a join is the product of its sides, useless to tell which side
    of a shuffled join is small, while key/foreign-key joins rarely grow their bigger input."""
    hit = memo.get(id(plan))
    if hit is not None:
        return hit
    from ember.plans.logical.statistics import plan_stats

    own = float(plan_stats(plan, conf).size_in_bytes)
    kids = plan.children
    if kids:
        own = min(own, max(_capped_size(c, conf, memo) for c in kids))
    memo[id(plan)] = own
    return own


def _estimate(ex: ShuffleExchangeExec, rt) -> float:
    logical = rt.logical_links.get(id(ex)) if rt.logical_links else None
    if logical is None:
        return float("inf")
    try:
        return _capped_size(logical, rt.conf, {})
    except Exception:  # noqa: BLE001 - no estimate: no preference
        return float("inf")


def convert_join(node: SparkPlan, rt) -> SparkPlan | None:
    """The broadcast hash join replacing the shuffled join ``node`` (see module docstring), or
    None to run ``node`` as planned."""
    from ember.runtime.local import exchange as X

    if not isinstance(node, (SortMergeJoinExec, ShuffledHashJoinExec)):
        return None
    if rt.logical_links is None or rt.relied_upon is None:
        return None
    relied_partitioning, relied_ordering = rt.relied_upon
    if id(node) in relied_ordering:
        return None
    if not rt.conf.get(ADAPTIVE_ENABLED):
        return None
    threshold = int(rt.conf.get(AUTO_BROADCAST_THRESHOLD))
    if threshold <= 0:
        return None
    join = rt.logical_links.get(id(node))
    hint = getattr(join, "hint", None)
    if join is None or (hint is not None and not hint.is_empty):
        return None
    jt = node.join_type
    sides = []
    if can_build_broadcast_right(jt):
        sides.append(BuildSide.RIGHT)
    if can_build_broadcast_left(jt):
        sides.append(BuildSide.LEFT)
    if not sides:
        return None
    lex, rex = _exchange_of(node.left), _exchange_of(node.right)
    if lex is None or rex is None:
        return None
    st = X._state(rt)
    group = st.groups.get(id(lex))
    if group is None or st.groups.get(id(rex)) is not group or len(group.members) != 2:
        return None
    if len(sides) == 2:  # try the side estimated smaller first
        if _estimate(lex, rt) < _estimate(rex, rt):
            sides.reverse()
    side = sides[0]
    small, big = (rex, lex) if side is BuildSide.RIGHT else (lex, rex)
    with group.lock:
        if id(small) in st.results or id(big) in st.results or group.busy:
            return None
        group.busy = True
        try:
            outs = X.map_members([small], rt)
            size = sum(int(o.bytes.sum()) for o in outs[0])
            if size > threshold:
                X.finish_members([small, big], [outs[0], X.map_members([big], rt)[0]], rt)
                return None
            X.finish_members([small], outs, rt)
            group.members.remove(big)
            st.groups.pop(id(big), None)
        finally:
            group.busy = False
    # the big side skips its sort; it skips its exchange too unless an operator above relies on
    # the join's partitioning (then it keeps it, as Spark's AQE, which has run it already)
    if id(node) in relied_partitioning:
        with group.lock:
            X.finish_members([big], X.map_members([big], rt), rt)
        stream = big
    else:
        stream = big.child
    placeholder = BroadcastHashJoinExec(node.left_keys, node.right_keys, jt, side,
                                        node.condition, node.left, node.right,
                                        existence_attr=node.existence_attr)
    bi = 1 if side is BuildSide.RIGHT else 0
    mode = placeholder.required_child_distribution[bi].mode  # type: ignore[attr-defined]
    build = BroadcastExchangeExec(mode, small)
    left, right = (stream, build) if side is BuildSide.RIGHT else (build, stream)
    return placeholder.copy(left=left, right=right)
