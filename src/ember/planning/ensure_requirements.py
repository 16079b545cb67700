"""EnsureRequirements: insert exchanges and sorts so that every operator's children satisfy its
required distribution and ordering (Spark's ``EnsureRequirements``).

Bottom-up over the physical plan, for each operator:

1. sort-merge / shuffled hash joins permute their key pairs to follow an existing hash
   partitioning of a child on a permutation of that child's keys (left first);
2. each child that does not satisfy its required distribution gets a ``BroadcastExchangeExec``
   (broadcast requirement) or a ``ShuffleExchangeExec`` with the distribution's partitioning
   (``spark.sql.shuffle.partitions`` partitions unless the distribution fixes the count; a
   stateful streaming operator's ``StatefulOpClusteredDistribution`` fixes both the keys and the
   count, and its exchange is marked ``REQUIRED_BY_STATEFUL_OPERATOR`` as in Spark);
3. children with clustered requirements (join inputs) are co-partitioned with shuffle specs:
   compatible specs keep their children; otherwise the best spec (most partitions, preferring a
   child that is not a shuffle) re-partitions the others;
4. a child whose output ordering does not satisfy the required ordering gets a local
   ``SortExec``.

Single-partition children of a join are left alone (Spark's ``maxSinglePartitionBytes`` shortcut;
physical nodes carry no logical link, so the size test is not applied).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ember.conf import REQUIRE_ALL_CLUSTER_KEYS_FOR_CO_PARTITION, SHUFFLE_PARTITIONS, SQLConf
from ember.expressions.base import Expression, SortOrder
from ember.physical.nodes import (
    BroadcastExchangeExec,
    ShuffledHashJoinExec,
    ShuffleExchangeExec,
    SortExec,
    SortMergeJoinExec,
    SparkPlan,
)
from ember.physical.partitioning import (
    BroadcastDistribution,
    ClusteredDistribution,
    Distribution,
    HashPartitioning,
    Partitioning,
    PartitioningCollection,
    SinglePartition,
    StatefulOpClusteredDistribution,
)


def ensure_requirements(plan: SparkPlan, conf: SQLConf,
                        links: dict[int, tuple[SparkPlan, Any]] | None = None) -> SparkPlan:
    """``plan`` with the exchanges and sorts its operators require.

    ``links`` (``{id(node): (node, logical)}``, see ``QueryPlanner.links``) is updated in place:
    a rewritten node keeps its original's logical link, and an inserted exchange or sort links
    to the logical node of the child it wraps."""
    if links is None:
        return plan.transform_up(lambda n: _ensure(n, conf))

    def origin(n: SparkPlan) -> Any:
        hit = links.get(id(n))
        return hit[1] if hit is not None and hit[0] is n else None

    def fill(n: SparkPlan) -> Any:
        """Link ``n`` and the new nodes below it; returns ``n``'s logical link."""
        own = origin(n)
        if own is not None:
            return own
        below = [fill(c) for c in n.children]
        found = next((b for b in below if b is not None), None)
        if found is not None:
            links[id(n)] = (n, found)
        return found

    def walk(n: SparkPlan) -> SparkPlan:
        kids = tuple(walk(c) for c in n.children)
        new = n.with_children(kids) if kids else n
        out = _ensure(new, conf)
        own = origin(n)
        if own is not None and out is not n:
            links[id(out)] = (out, own)
            if new is not out and new is not n:
                links[id(new)] = (new, own)
        for c in out.children:
            fill(c)
        return out

    return walk(plan)


def _ensure(plan: SparkPlan, conf: SQLConf) -> SparkPlan:
    if not plan.children:
        return plan
    plan = _reorder_join_predicates(plan)
    children = list(plan.children)
    dists = plan.required_child_distribution
    orderings = plan.required_child_ordering
    n_default = conf.get(SHUFFLE_PARTITIONS)

    # 2. each child alone
    for i, (child, dist) in enumerate(zip(children, dists)):
        if child.output_partitioning.satisfies(dist):
            continue
        if isinstance(dist, BroadcastDistribution):
            children[i] = BroadcastExchangeExec(dist.mode, child)
        else:
            n = dist.required_num_partitions or n_default
            origin = ("REQUIRED_BY_STATEFUL_OPERATOR"
                      if isinstance(dist, StatefulOpClusteredDistribution)
                      else "ENSURE_REQUIREMENTS")
            children[i] = ShuffleExchangeExec(dist.create_partitioning(n), child, origin)

    # 3. co-partitioning
    idx = [i for i, d in enumerate(dists) if isinstance(d, ClusteredDistribution)]
    prefer_single = all(children[i].output_partitioning == SinglePartition() for i in idx)
    if len(idx) > 1 and not prefer_single:
        children = _co_partition(children, dists, idx, conf)

    # 4. sorts
    for i, (child, req) in enumerate(zip(children, orderings)):
        if not ordering_satisfies(child.output_ordering, req):
            children[i] = SortExec(tuple(req), False, child)
    return plan.with_children(tuple(children))


def ordering_satisfies(provided: tuple[SortOrder, ...], required: tuple[SortOrder, ...]) -> bool:
    """Spark's ``SortOrder.orderingSatisfies``: ``required`` is a prefix of ``provided``."""
    if not required:
        return True
    if len(required) > len(provided):
        return False
    return all(
        r.ascending == p.ascending and r.effective_nulls_first == p.effective_nulls_first
        and r.child.semantic_equals(p.child)
        for r, p in zip(required, provided))


# ---------------------------------------------------------------------------------------------
# 1. join key reordering


def _reorder(expected: tuple[Expression, ...], current: tuple[Expression, ...],
             left: tuple[Expression, ...], right: tuple[Expression, ...]
             ) -> tuple[tuple[Expression, ...], tuple[Expression, ...]] | None:
    """Permute (left, right) pairwise so that ``current`` (one side's keys) follows
    ``expected`` (that side's partitioning expressions); None unless they are a permutation."""
    if len(expected) != len(current):
        return None
    used: set[int] = set()
    order: list[int] = []
    for e in expected:
        hit = next((i for i, c in enumerate(current)
                    if i not in used and c.semantic_equals(e)), None)
        if hit is None:
            return None
        used.add(hit)
        order.append(hit)
    return tuple(left[i] for i in order), tuple(right[i] for i in order)


def _reorder_by(p: Partitioning, side_keys: tuple[Expression, ...], left: tuple[Expression, ...],
                right: tuple[Expression, ...]
                ) -> tuple[tuple[Expression, ...], tuple[Expression, ...]] | None:
    if isinstance(p, HashPartitioning):
        return _reorder(p.expressions, side_keys, left, right)
    if isinstance(p, PartitioningCollection):
        for q in p.partitionings:
            r = _reorder_by(q, side_keys, left, right)
            if r is not None:
                return r
    return None


def reorder_join_keys(left_keys: tuple[Expression, ...], right_keys: tuple[Expression, ...],
                      left_partitioning: Partitioning, right_partitioning: Partitioning
                      ) -> tuple[tuple[Expression, ...], tuple[Expression, ...]]:
    """Spark's ``reorderJoinKeys``: follow the left child's hash partitioning, else the right's."""
    if (len(left_keys) > 1 and all(k.deterministic for k in left_keys)
            and all(k.deterministic for k in right_keys)):
        r = _reorder_by(left_partitioning, left_keys, left_keys, right_keys)
        if r is None:
            r = _reorder_by(right_partitioning, right_keys, left_keys, right_keys)
        if r is not None:
            return r
    return left_keys, right_keys


def _reorder_join_predicates(plan: SparkPlan) -> SparkPlan:
    if isinstance(plan, (SortMergeJoinExec, ShuffledHashJoinExec)):
        lk, rk = reorder_join_keys(plan.left_keys, plan.right_keys,
                                   plan.left.output_partitioning,
                                   plan.right.output_partitioning)
        if lk != plan.left_keys or rk != plan.right_keys:
            return plan.copy(left_keys=lk, right_keys=rk)
    return plan


# ---------------------------------------------------------------------------------------------
# 3. shuffle specs and co-partitioning


@dataclass(frozen=True, slots=True)
class ShuffleSpec:
    """Spark's ShuffleSpec of a child's partitioning w.r.t. its required clustering.

    ``kind``: ``"hash"`` (with ``positions``: for each hash expression, the positions in the
    clustering it equals), ``"single"``, ``"range"``, ``"collection"`` (``specs``), ``"unknown"``.
    """

    kind: str
    num_partitions: int
    positions: tuple[frozenset[int], ...] = ()
    can_create: bool = False
    specs: tuple["ShuffleSpec", ...] = ()

    def is_compatible_with(self, other: "ShuffleSpec") -> bool:
        if other.kind == "collection":
            return any(self.is_compatible_with(s) for s in other.specs)
        match self.kind:
            case "single":
                return other.num_partitions == 1
            case "collection":
                return any(s.is_compatible_with(other) for s in self.specs)
            case "hash":
                if other.kind == "single":
                    return self.num_partitions == 1
                if other.kind != "hash" or other.num_partitions != self.num_partitions:
                    return False
                return len(self.positions) == len(other.positions) and all(
                    a & b for a, b in zip(self.positions, other.positions))
            case "range":
                return other.kind == "single" and self.num_partitions == 1
            case _:
                return False

    def create_partitioning(self, clustering: tuple[Expression, ...]) -> Partitioning:
        if self.kind == "hash":
            exprs = tuple(clustering[min(p)] for p in self.positions)
            return HashPartitioning(exprs, self.num_partitions)
        if self.kind == "collection":
            best = max((s for s in self.specs if s.can_create), key=lambda s: s.num_partitions)
            return best.create_partitioning(clustering)
        return SinglePartition()


def create_shuffle_spec(p: Partitioning, dist: ClusteredDistribution, conf: SQLConf) -> ShuffleSpec:
    match p:
        case SinglePartition():
            return ShuffleSpec("single", 1)
        case HashPartitioning(expressions=exprs, num_partitions=n):
            positions = tuple(
                frozenset(i for i, c in enumerate(dist.clustering) if c.semantic_equals(e))
                for e in exprs)
            if conf.get(REQUIRE_ALL_CLUSTER_KEYS_FOR_CO_PARTITION):
                can = len(dist.clustering) == len(exprs) and all(
                    a.semantic_equals(b) for a, b in zip(exprs, dist.clustering))
            else:
                can = True
            return ShuffleSpec("hash", n, positions, can)
        case PartitioningCollection(partitionings=ps):
            specs = tuple(create_shuffle_spec(q, dist, conf) for q in ps)
            return ShuffleSpec("collection", max(s.num_partitions for s in specs), (),
                               any(s.can_create for s in specs), specs)
        case _:
            kind = "range" if type(p).__name__ == "RangePartitioning" else "unknown"
            return ShuffleSpec(kind, p.num_partitions)


def _co_partition(children: list[SparkPlan], dists: tuple[Distribution, ...], idx: list[int],
                  conf: SQLConf) -> list[SparkPlan]:
    specs = {i: create_shuffle_spec(children[i].output_partitioning, dists[i], conf)  # type: ignore
             for i in idx}
    if all(specs[a].is_compatible_with(specs[b]) for a, b in zip(idx, idx[1:])):
        return children
    n_default = conf.get(SHUFFLE_PARTITIONS)
    consider_min = all(not s.can_create or isinstance(children[i], ShuffleExchangeExec)
                       for i, s in specs.items())
    candidates = {i: s for i, s in specs.items() if s.can_create and (
        not consider_min or children[i].output_partitioning.num_partitions >= n_default)}
    best: ShuffleSpec | None = None
    if candidates:
        no_shuffle = {i: s for i, s in candidates.items()
                      if not isinstance(children[i], ShuffleExchangeExec)}
        pool = no_shuffle or candidates
        best = max(pool.values(), key=lambda s: s.num_partitions)  # first max, like maxBy
    out = list(children)
    for i in idx:
        child = children[i]
        if best is not None and best.is_compatible_with(specs[i]):
            continue
        dist = dists[i]
        assert isinstance(dist, ClusteredDistribution)
        if best is not None:
            new_p = best.create_partitioning(dist.clustering)
        else:
            new_p = dist.create_partitioning(dist.required_num_partitions or n_default)
        if isinstance(child, ShuffleExchangeExec):
            out[i] = child.copy(output_partitioning=new_p)
        else:
            out[i] = ShuffleExchangeExec(new_p, child)
    return out
