"""Adaptive join conversion: the local runtime re-plans a shuffled join once its inputs' shuffle
sizes are known (Spark's adaptive execution -- ``DynamicJoinSelection`` and AQE's re-planning of
``JoinSelection`` with runtime statistics -- plus one step of Ember's own).

When the runtime reaches a ``SortMergeJoinExec`` or ``ShuffledHashJoinExec``, each side is seen as
its *top* (the child without the sort the join required) over the hash exchange feeding it,
possibly through filters, projects and (final) hash aggregates (:class:`_Side`).

Broadcast conversion
    The map side of the exchange of the side estimated smaller runs first -- only that one.  If
    its shuffle data is at most ``spark.sql.autoBroadcastJoinThreshold`` bytes and the join type
    may build that side, the join runs as ``BroadcastHashJoinExec`` with that side broadcast and
    the *other side's sort skipped* -- and its exchange too when no operator above relies on the
    join's hash partitioning and only filters/projects lie between the exchange and the join:
    the big side is then streamed in its input's partitions, never shuffled or sorted (beyond
    Spark, whose AQE has already shuffled it).  When something above does rely on that
    partitioning, the join's *output* is shuffled instead, with the big side's partitioning and
    in its place in the coalesce group (usually far fewer rows: the broadcast side filters);
    only when that cannot be done (an aggregate between the exchange and the join, or
    partitioning columns the join does not output) does the big side keep its exchange.  When
    an operator above relies on the join's output
    ordering (a sort-merge join reusing it), the broadcast join's output is sorted instead --
    usually far fewer rows than the input the planned sort would have sorted.

    Beyond Spark, the small side of a semi / anti / existence join may be its *left* side
    (Spark broadcasts only the right one): the right side then streams unshuffled through the
    broadcast left rows, marking those it matches, and the left rows come out once every
    stream partition has run (``hash_join._broadcast_left_existence``) -- only when nothing
    above relies on the join's partitioning and the right side's exchange can be dropped.

Reduced-side broadcast (beyond Spark; ``REDUCED_BROADCAST``)
    When the side to broadcast filters the output of an aggregate (a HAVING; an aggregated
    ``IN`` subquery) and its shuffle is over the threshold but at most 1/8 of the memory budget,
    its exchange is coalesced on its own and its reduce side (aggregate, filter, project) runs
    ahead of the join; a result under the threshold is broadcast as above.  A bigger result is
    shuffled again in its exchange's place in the coalesce group (nothing is computed twice)
    and the join runs as planned.  Since the first exchange of a coalesce group to run maps
    every member, :func:`preconvert` first runs the joins of such sides that read another
    member of the group (TPC-H Q18: two semi joins with the filtered aggregate would otherwise
    shuffle both ``orders`` and ``lineitem`` before either could be broadcast).

Shuffled hash conversion (beyond Spark; ``ember.execution.adaptive.shuffledHashJoin.enabled``)
    A sort-merge join whose output ordering nothing above relies on, that was not broadcast, runs
    as a ``ShuffledHashJoinExec`` over the same (co-partitioned, coalesced) exchanges, without
    the two sorts: the side built is the smaller one (shuffle bytes, else the plan's estimates)
    among those the join type permits (Spark's shuffled-hash build sides, plus the left side of
    semi / anti / existence joins, which Ember's hash join can build), provided each of its
    coalesced partitions holds at most ``memoryBudget / (2 x cores)`` bytes -- Spark's
    ``spark.sql.adaptive.maxShuffledHashJoinLocalMapThreshold`` idea, sized from the local
    memory budget.  (Ember's hash join spills, so this is a speed choice, not a safety one.)
    Chains of sort-merge joins sharing one ordering convert top-down: once the upper join is a
    hash join, nothing relies on the lower one's ordering any more.

Applies only when (all of): the runtime was given the planner's logical links
(``LocalRuntime(logical_links=...)``, from ``ember.planning.plan_query_with_links``),
``spark.sql.adaptive.enabled`` is true, and the logical join carries no join hint (a MERGE /
SHUFFLE_HASH hint is obeyed).  After each conversion :func:`convert_join` recomputes which nodes
of the replacement's subtree some operator relies on (``rt.relied_upon``).

The run's metrics record each replacement (``RunMetrics.replaced``) so EXPLAIN ANALYZE prints the
plan that actually ran, e.g. ``[adaptive: was SortMergeJoin] ShuffledHashJoin ...``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from ember.conf import (
    ADAPTIVE_ENABLED,
    ADAPTIVE_SHUFFLED_HASH_JOIN,
    AUTO_BROADCAST_THRESHOLD,
    MEMORY_BUDGET,
)
from ember.physical.nodes import (
    BroadcastExchangeExec, BroadcastHashJoinExec, BuildSide, FilterExec, HashAggregateExec,
    ProjectExec, ReusedExchangeExec, ShuffledHashJoinExec, ShuffleExchangeExec, SortExec,
    SortMergeJoinExec, SparkPlan, LocalTableScanExec,
)
from ember.physical.partitioning import HashPartitioning, UnspecifiedDistribution
from ember.plans.logical.join_type import JoinAlgorithm
from ember.runtime.local.node_state import NodeSet, NodeState
from ember.plans.logical.statistics import plan_stats
from ember.runtime.local import exchange as X

if TYPE_CHECKING:
    from ember.runtime.local.context import RunContext

__all__ = ["relied_upon", "child_needs", "convert_join", "preconvert"]


def relied_upon(root: SparkPlan, need_partitioning: bool = False,
                need_ordering: bool = False) -> tuple[NodeSet, NodeSet]:
    """The nodes under ``root`` whose output partitioning (first set) or ordering
    (second set) some operator above relies on -- conservatively: every node between a
    requirement and the exchange, broadcast (or, for orderings, sort) that provides it.
    ``need_*``: whether something above ``root`` relies on its own partitioning / ordering."""
    part = NodeSet()
    order = NodeSet()
    stack: list[tuple[SparkPlan, bool, bool]] = [(root, need_partitioning, need_ordering)]
    while stack:
        n, need_p, need_o = stack.pop()
        if need_p:
            part.add(n)
        if need_o:
            order.add(n)
        for c, (cp, co) in zip(n.children, child_needs(n, need_p, need_o)):
            stack.append((c, cp, co))
    return part, order


def child_needs(n: SparkPlan, need_p: bool, need_o: bool) -> list[tuple[bool, bool]]:
    """For each child of ``n``: whether ``n`` (or, through it, an operator above that relies on
    ``n``'s partitioning / ordering: ``need_*``) relies on that child's partitioning and
    ordering."""
    kids = n.children
    if isinstance(n, (ShuffleExchangeExec, BroadcastExchangeExec)):
        return [(False, False)] * len(kids)
    try:
        dists = n.required_child_distribution
        orders = n.required_child_ordering
    except Exception:  # noqa: BLE001 - a node that cannot say: assume it relies on all
        return [(True, True)] * len(kids)
    return [(need_p or not isinstance(dists[i], UnspecifiedDistribution),
             bool(orders[i]) or (need_o and not isinstance(n, SortExec)))
            for i in range(len(kids))]


@dataclass(frozen=True)
class _Side:
    """One input of a shuffled join as the runtime sees it: ``top`` is the join's child without
    the sort the join required; ``exchange`` the hash exchange feeding it through ``top``'s
    chain of unary operators; ``narrow``: that chain holds only filters and projects (the
    exchange can then be dropped without breaking an operator that needs its partitioning)."""

    top: SparkPlan
    exchange: ShuffleExchangeExec
    narrow: bool

    def without_exchange(self) -> SparkPlan:
        """``top`` reading the exchange's input directly (``narrow`` sides only)."""
        def go(n: SparkPlan) -> SparkPlan:
            if n is self.exchange:
                return n.child  # type: ignore[attr-defined]
            return n.copy(child=go(n.child))  # type: ignore[attr-defined]

        return go(self.top)


def _side_of(child: SparkPlan) -> _Side | None:
    top = _unsorted(child)
    n, narrow = top, True
    while not isinstance(n, ShuffleExchangeExec):
        if isinstance(n, (FilterExec, ProjectExec)):
            n = n.child
        elif isinstance(n, HashAggregateExec):
            narrow = False
            n = n.child
        elif isinstance(n, ReusedExchangeExec) and isinstance(n.child, ShuffleExchangeExec):
            # a reused exchange (planning/reuse_exchange.py) reads another exchange's map
            # outputs with its own coalescing: it converts like an exchange, but is never
            # dropped (not narrow: its input is the other exchange's)
            if not isinstance(n.output_partitioning, HashPartitioning):
                return None
            return _Side(top, n, False)  # type: ignore[arg-type]
        else:
            return None
    if not isinstance(n.output_partitioning, HashPartitioning):
        return None
    return _Side(top, n, narrow)


def _capped_size(plan: Any, conf: Any, memo: dict[int, float]) -> float:
    """Spark's size-only estimate of ``plan``, capped at its largest child's (capped) estimate:
    the size-only estimate of a join is the product of its sides, useless to tell which side
    of a shuffled join is small, while key/foreign-key joins rarely grow their bigger input."""
    hit = memo.get(id(plan))
    if hit is not None:
        return hit

    own = float(plan_stats(plan, conf).size_in_bytes)
    kids = plan.children
    if kids:
        own = min(own, max(_capped_size(c, conf, memo) for c in kids))
    memo[id(plan)] = own
    return own


def _estimate(ex: ShuffleExchangeExec, rt: RunContext) -> float:
    logical = rt.logical_links.get(id(ex)) if rt.logical_links else None
    if logical is None:
        return float("inf")
    try:
        return _capped_size(logical, rt.conf, {})
    except Exception:  # noqa: BLE001 - no estimate: no preference
        return float("inf")


def _shj_sides(jt) -> list[BuildSide]:
    """Build sides a shuffled hash join of type ``jt`` may take in the local runtime: Spark's,
    plus the left side of semi / anti / existence joins (``JoinType.kernel_can_build``)."""
    return [side for side in (BuildSide.RIGHT, BuildSide.LEFT)
            if jt.kernel_can_build(side, JoinAlgorithm.SHUFFLED_HASH)]


#: A semi / anti / existence join builds its left side when that is this many times smaller.
_EXISTENCE_LEFT_FACTOR = 3


def _shj_build_side(node: SortMergeJoinExec, left: _Side | None, right: _Side | None,
                    mapped: NodeState[list] | None, rt: RunContext) -> BuildSide | None:
    """The side a shuffled hash join replacing ``node`` builds: the smaller one (by the map
    outputs when both exchanges ran here, else by the plan's estimates) the join type permits;
    None when, by the map outputs, some coalesced partition of it would hold more than
    ``memoryBudget / (2 x cores)`` bytes (the hash join could still spill, but sorting is the
    better plan then)."""

    sides = _shj_sides(node.join_type)
    if not sides:
        return None
    # the left side of a semi / anti / existence join is built only when it is much smaller
    # (its probe marks build rows pair by pair; about even sizes favour building the right side)
    factor = _EXISTENCE_LEFT_FACTOR if node.join_type.is_left_existence else 1
    if mapped is None or left is None or right is None:
        if len(sides) == 2:
            est_l = _estimate(left.exchange if left else node.left, rt)
            est_r = _estimate(right.exchange if right else node.right, rt)
            if est_l * factor < est_r:
                sides.reverse()
        return sides[0]
    n = left.exchange.output_partitioning.num_partitions
    if right.exchange.output_partitioning.num_partitions != n:
        return None
    per_side = {side: X.target_totals(mapped[s.exchange], n)[1]
                for side, s in ((BuildSide.LEFT, left), (BuildSide.RIGHT, right))}
    if len(sides) == 2 and (per_side[BuildSide.LEFT].sum() * factor
                            < per_side[BuildSide.RIGHT].sum()):
        sides.reverse()
    side = sides[0]
    # the grouping the exchanges got when coalesced together (finish_members: every member of
    # the group, not only these two)
    ranges = X.coalesce_ranges(*X.target_totals((o for outs in mapped.values() for o in outs), n),
                               rt)
    cum = np.concatenate(([0], np.cumsum(per_side[side])))
    largest = max((int(cum[e] - cum[s]) for s, e in ranges), default=0)
    limit = int(rt.conf.get(MEMORY_BUDGET)) // max(1, 2 * rt.parallelism)
    return side if largest <= limit else None


def _no_hint(node: SparkPlan, rt: RunContext) -> bool:
    join = rt.logical_links.get(id(node))
    hint = getattr(join, "hint", None)
    return join is not None and (hint is None or hint.is_empty)


def convert_join(node: SparkPlan, rt: RunContext) -> SparkPlan | None:
    """The join replacing the shuffled join ``node`` (see the module docstring), or None to run
    ``node`` as planned.  Updates ``rt.relied_upon`` for the replacement's subtree."""
    new = _convert(node, rt)
    if new is not None:
        part, order = rt.relied_upon
        need_p, need_o = node in part, node in order
        stack = [node]
        while stack:  # what the planned subtree relied upon no longer holds ...
            n = stack.pop()
            part.discard(n)
            order.discard(n)
            stack.extend(n.children)
        new_p, new_o = relied_upon(new, need_p, need_o)  # ... the replacement's does
        part.update(new_p)
        order.update(new_o)
    return new


def _convert(node: SparkPlan, rt: RunContext) -> SparkPlan | None:
    if not isinstance(node, (SortMergeJoinExec, ShuffledHashJoinExec)):
        return None
    if rt.logical_links is None or rt.relied_upon is None:
        return None
    if not rt.conf.get(ADAPTIVE_ENABLED) or not _no_hint(node, rt):
        return None
    ordered = node in rt.relied_upon[1]
    jt = node.join_type
    to_shj = (isinstance(node, SortMergeJoinExec) and not ordered
              and bool(rt.conf.get(ADAPTIVE_SHUFFLED_HASH_JOIN)) and bool(_shj_sides(jt)))
    left, right = _side_of(node.left), _side_of(node.right)
    bhj = _to_broadcast(node, left, right, rt)
    if bhj is not None and not isinstance(bhj, NodeState):
        return bhj
    mapped = bhj  # the map outputs, when the broadcast attempt ran the exchanges
    if not to_shj:
        return None
    side = _shj_build_side(node, left, right, mapped, rt)
    if side is None:
        return None
    # both sides stay shuffled (and coalesced together); only the sorts are dropped
    return ShuffledHashJoinExec(node.left_keys, node.right_keys, jt, side, node.condition,
                                _unsorted(node.left), _unsorted(node.right),
                                existence_attr=node.existence_attr)


def _unsorted(child: SparkPlan) -> SparkPlan:
    return child.child if isinstance(child, SortExec) and not child.is_global else child


def _to_broadcast(node: SparkPlan, left: _Side | None, right: _Side | None,
                  rt: RunContext) -> SparkPlan | NodeState[list] | None:
    """Runtime broadcast conversion: the broadcast hash join replacing ``node`` (sorted again
    when an operator above relies on ``node``'s ordering); or, when the side to broadcast turned
    out too big, the map outputs of every exchange of the coalesce group by id (they then ran,
    and were coalesced together); or None when not applicable."""

    threshold = int(rt.conf.get(AUTO_BROADCAST_THRESHOLD))
    if threshold <= 0 or left is None or right is None:
        return None
    jt = node.join_type
    sides = []
    if jt.can_build(BuildSide.RIGHT, JoinAlgorithm.BROADCAST_HASH):
        sides.append(BuildSide.RIGHT)
    relied_partitioning, relied_ordering = rt.relied_upon
    keeps_partitioning = node in relied_partitioning
    if jt.can_build(BuildSide.LEFT, JoinAlgorithm.BROADCAST_HASH):
        sides.append(BuildSide.LEFT)
    elif (BROADCAST_LEFT_EXISTENCE and not keeps_partitioning
          and jt.kernel_can_build(BuildSide.LEFT, JoinAlgorithm.BROADCAST_HASH)
          and right.narrow):
        # Ember's: the left side broadcast, the right rows streamed unshuffled marking the left
        # rows they match (hash_join._broadcast_left_existence); its output has no partitioning
        # to keep, hence only when nothing above relies on one
        sides.append(BuildSide.LEFT)
    if not sides:
        return None
    lex, rex = left.exchange, right.exchange
    st = rt.exchanges
    group = st.groups.get(lex)
    if group is None or st.groups.get(rex) is not group:
        return None
    if len(group.members) != 2 and not keeps_partitioning:
        return None
    if len(sides) == 2 and _estimate(lex, rt) < _estimate(rex, rt):
        sides.reverse()  # try the side estimated smaller first
    side = sides[0]
    small, big = (right, left) if side is BuildSide.RIGHT else (left, right)
    with group.lock:
        if any(m in st.results for m in group.members) or group.busy:
            return None
        group.busy = True
        try:
            outs = X.map_members([small.exchange], rt)
            size = sum(int(o.bytes.sum()) for o in outs[0])
            placeholder, build = _broadcast_plan(node, side, small)
            if (size > threshold and REDUCED_BROADCAST and _reduces(small)
                    and size <= _reduce_limit(rt)):
                # the side's shuffle is too big, but it is filtered after an aggregate: run its
                # reduce side now and broadcast the result if that is small
                fallback = _reduced_broadcast(node, side, small, build, outs, group, rt)
                if fallback is not None:
                    return fallback
            elif size > threshold:
                rest = [m for m in group.members if m is not small.exchange]
                rest_outs = X.map_members(rest, rt)
                X.finish_members([small.exchange] + rest, outs + rest_outs, rt)
                mapped: NodeState[list] = NodeState()
                for m, o in zip(rest, rest_outs):
                    mapped[m] = o
                mapped[small.exchange] = outs[0]
                return mapped
            else:
                _finish_alone(small.exchange, outs, group, rt)
            reshuffle = keeps_partitioning and big.narrow and _partitions_output(node, big)
            if reshuffle:
                # something above needs the join hash-partitioned on the big side's keys: shuffle
                # the join's output (usually far fewer rows: the broadcast side filters it)
                # instead of its big input, with the same partitioning, in the big side's place
                # in the coalesce group
                stream = big.without_exchange()
            elif not keeps_partitioning and big.narrow:
                # nothing above needs the join partitioned: the big side is streamed in its
                # input's partitions, never shuffled or sorted (beyond Spark, whose AQE has
                # already shuffled it)
                group.members.remove(big.exchange)
                st.groups.pop(big.exchange)
                stream = big.without_exchange()
            else:  # the big side keeps its exchange (coalesced with the rest of its group)
                stream = big.top
            l_child, r_child = (stream, build) if side is BuildSide.RIGHT else (build, stream)
            joined: SparkPlan = placeholder.copy(left=l_child, right=r_child)
            if reshuffle:
                joined = ShuffleExchangeExec(big.exchange.output_partitioning, joined,
                                             big.exchange.shuffle_origin)
                i = group.members.index(big.exchange)
                group.members[i] = joined
                st.groups.pop(big.exchange)
                st.groups[joined] = group
        finally:
            group.busy = False
    if node in relied_ordering:
        # an operator above relies on the join's ordering (e.g. a sort-merge join reusing it):
        # sort the join's output instead of its (usually much bigger) input
        return SortExec(node.output_ordering, False, joined)
    return joined


def _partitions_output(node: SparkPlan, big: _Side) -> bool:
    """Whether the big side's hash partitioning can be computed on ``node``'s output (its
    expressions read only columns the join outputs unchanged: the streamed side's)."""
    part = big.exchange.output_partitioning
    if not isinstance(part, HashPartitioning):
        return False
    refs: set[int] = set()
    for e in part.expressions:
        refs |= set(e.references)
    return refs <= {a.id for a in node.output} and refs <= {a.id for a in big.top.output}


#: let the broadcast conversion broadcast the left side of semi / anti / existence joins
#: (``hash_join._broadcast_left_existence``)
BROADCAST_LEFT_EXISTENCE = True

#: run the reduce side of a join input that filters an aggregate ahead of the join, to broadcast
#: its result when small (:func:`_reduced_broadcast`, :func:`preconvert`)
REDUCED_BROADCAST = True

#: the reduce side of a shuffle is run ahead of its join (to broadcast a small result) only when
#: the shuffle holds at most this fraction of the memory budget
_REDUCE_FRACTION = 8


def _reduce_limit(rt: RunContext) -> int:
    return int(rt.conf.get(MEMORY_BUDGET)) // _REDUCE_FRACTION


def _reduces(side: _Side) -> bool:
    """Whether ``side``'s chain above its exchange filters the output of an aggregate (a
    HAVING, or a filter over an aggregated subquery): its result can be far smaller than the
    shuffle, which holds one row per group."""
    n, filtered = side.top, False
    while n is not side.exchange:
        if isinstance(n, FilterExec):
            filtered = True
        elif isinstance(n, HashAggregateExec):
            return filtered
        n = n.child  # type: ignore[attr-defined]
    return False


def _broadcast_plan(node: SparkPlan, side: BuildSide, small: _Side
                    ) -> tuple[BroadcastHashJoinExec, BroadcastExchangeExec]:
    """The broadcast hash join replacing ``node`` (children still ``node``'s) and the
    broadcast of ``small.top`` in the mode that join requires on its ``side``."""
    join = BroadcastHashJoinExec(node.left_keys, node.right_keys, node.join_type, side,
                                 node.condition, node.left, node.right,
                                 existence_attr=node.existence_attr)
    dist = join.required_child_distribution[1 if side is BuildSide.RIGHT else 0]
    return join, BroadcastExchangeExec(dist.mode, small.top)  # type: ignore[attr-defined]


def _finish_alone(ex: ShuffleExchangeExec, outs: list[list], group, rt: RunContext) -> None:
    """Coalesce the mapped exchange ``ex`` on its own and take it out of its coalesce group."""

    X.finish_members([ex], outs, rt)
    group.members.remove(ex)
    rt.exchanges.groups.pop(ex)


def _reduced_broadcast(node: SparkPlan, side: BuildSide, small: _Side,
                       build: BroadcastExchangeExec, outs: list[list], group, rt: RunContext
                       ) -> SparkPlan | None:
    """Run ``small``'s reduce side (its exchange, already mapped into ``outs``, coalesced on its
    own) ahead of the join, materializing ``build`` (the broadcast of ``small.top``).  Returns
    None when its rows fit ``spark.sql.autoBroadcastJoinThreshold`` (the caller broadcasts
    them); else ``node`` with that side read from a shuffle of the computed rows (the rest of
    the coalesce group coalesced with it), so nothing is computed twice."""

    _finish_alone(small.exchange, outs, group, rt)
    value = rt.broadcast(build)
    if value.table.nbytes <= int(rt.conf.get(AUTO_BROADCAST_THRESHOLD)):
        return None
    # too big to broadcast: shuffle the computed rows like the exchange they replace, in its
    # place in the coalesce group, and run the join as planned over them
    rows = LocalTableScanExec(small.top.output, value.table)
    rt.drop_broadcast(build)  # the rows live on in ``rows`` only
    reshuffled = ShuffleExchangeExec(small.exchange.output_partitioning, rows,
                                     small.exchange.shuffle_origin)
    group.members.append(reshuffled)
    rt.exchanges.groups[reshuffled] = group
    members = list(group.members)
    X.finish_members(members, X.map_members(members, rt), rt)
    right_side = side is BuildSide.RIGHT
    child = node.right if right_side else node.left  # type: ignore[attr-defined]
    new_child = (child.copy(child=reshuffled) if child is not small.top
                 else reshuffled)  # the join's sort, if any, stays
    return (node.copy(right=new_child) if right_side  # type: ignore[attr-defined]
            else node.copy(left=new_child))  # type: ignore[attr-defined]


def preconvert(ex: ShuffleExchangeExec, group, rt: RunContext) -> None:
    """Before the coalesce group of the exchange ``ex`` is mapped (``exchange.materialize``):
    run (``rt.execute``) every shuffled join not reached yet that reads a member of the group on
    one side and, on the other, an aggregate's filtered output (:func:`_reduces`).  Such a join
    may become a broadcast join of that small result (:func:`_reduced_broadcast`) and take its
    exchanges out of the group -- had the group been mapped first, its big side would have been
    shuffled for nothing.  (The runtime reaches joins top-down, and the first exchange of a
    group that runs maps all of its members.)"""
    group.preconverted = True
    if not REDUCED_BROADCAST or rt.logical_links is None or rt.relied_upon is None or rt.plan_root is None:
        return
    if not rt.conf.get(ADAPTIVE_ENABLED) or int(rt.conf.get(AUTO_BROADCAST_THRESHOLD)) <= 0:
        return

    st = rt.exchanges
    parents = _parents(rt)
    for m in list(group.members):
        if m is ex or m in st.results:
            continue
        join = _consumer_join(m, parents)
        if join is None or join in rt.executing or join in rt.executed:
            continue
        sides = [_side_of(c) for c in join.children]
        if any(s is None for s in sides) or not any(_reduces(s) for s in sides):
            continue
        rt.execute(join)


def _parents(rt: RunContext) -> NodeState[SparkPlan]:
    memo = rt.plan_parents
    if memo is None:
        memo = NodeState()
        stack = [rt.plan_root]
        while stack:
            n = stack.pop()
            for c in n.children:
                if c not in memo:
                    memo[c] = n
                    stack.append(c)
        rt.plan_parents = memo
    return memo


def _consumer_join(ex: SparkPlan, parents: NodeState[SparkPlan]) -> SparkPlan | None:
    """The shuffled join reading ``ex`` through filters, projects, aggregates and its sort."""
    n = parents.get(ex)
    while isinstance(n, (FilterExec, ProjectExec, HashAggregateExec, SortExec)):
        n = parents.get(n)
    return n if isinstance(n, (SortMergeJoinExec, ShuffledHashJoinExec)) else None
