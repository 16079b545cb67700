"""PartitionPruning (Spark's ``PartitionPruning`` with ``PlanDynamicPruningFilters``): dynamic
partition pruning from a broadcast hash join's build side into the file scan of its stream side.

Before::  BroadcastHashJoin [k#1], [id#5], Inner, BuildRight
          :- FileScan json [a#0,k#1] ... PartitionFilters: [isnotnull(k#1)]
          +- BroadcastExchange ...
             +- Filter (isnotnull(id#5) AND (name#6 = x))
                +- ...
After::   ... PartitionFilters: [isnotnull(k#1), dynamicpruningexpression(k#1 IN dynamicpruning#7)]

A stream-side join key over one partition column of a file scan (the column itself, or say a
cast of it), reached through filters and projections passing the column on, gets the filter "among the build side's key values" (resolved by the
runtimes once the broadcast is built: only those partitions' directories are read). It applies
when the join can drop the stream rows it prunes (Inner with either build side, LeftSemi building
right: Spark's ``canPruneLeft`` / ``canPruneRight``), and the build side holds a likely selective
filter (Spark's ``hasSelectivePredicate``: a comparison, IN, LIKE ..., not just IS NOT NULL) or
is cheap to compute again (``isCheaplyRecomputableMaterializedPlan``: in-memory rows through
projections, filters and unions).

Configuration: ``spark.sql.optimizer.dynamicPartitionPruning.enabled``. With
``...reuseBroadcastOnly`` (the default) Spark keeps only the filters a broadcast hash join can
serve, which are the ones planned here; a non-broadcast join gets none (Spark without
``reuseBroadcastOnly`` would run a separate subquery; Ember does not).
"""

from __future__ import annotations

import itertools
from typing import Any

from ember.conf import DYNAMIC_PARTITION_PRUNING
from ember.expressions import predicates as Pr
from ember.expressions.base import AttributeReference, Expression
from ember.physical.dynamic_pruning import DynamicPruningExpression
from ember.physical.nodes import (BroadcastExchangeExec, BroadcastHashJoinExec, BuildSide,
                                  FileSourceScanExec, FilterExec, LocalTableScanExec,
                                  ProjectExec, SparkPlan, UnionExec)
from ember.plans.logical.join_type import JoinType

__all__ = ["partition_pruning"]

_IDS = itertools.count(1)

_SELECTIVE = {"In", "InSet", "Like", "ILike", "RLike", "StartsWith", "EndsWith", "Contains",
              "LikeAll", "LikeAny", "NotLikeAll", "NotLikeAny"}


def _likely_selective(e: Expression) -> bool:
    """Spark's ``PredicateHelper.isLikelySelective``."""
    if isinstance(e, Pr.Not):
        return _likely_selective(e.child)
    if isinstance(e, Pr.And):
        return _likely_selective(e.left) or _likely_selective(e.right)
    if isinstance(e, Pr.Or):
        return _likely_selective(e.left) and _likely_selective(e.right)
    return isinstance(e, Pr.BinaryComparison) or type(e).__name__ in _SELECTIVE


def _has_selective_filter(plan: SparkPlan) -> bool:
    def hit(n: SparkPlan) -> bool:
        if isinstance(n, FilterExec):
            return _likely_selective(n.condition)
        if isinstance(n, FileSourceScanExec):  # a filter pushed wholly into partition filters
            return any(_likely_selective(f) for f in n.partition_filters)
        return False

    return plan.find(hit) is not None


def _cheaply_recomputable(plan: SparkPlan) -> bool:
    """Spark's ``isCheaplyRecomputableMaterializedPlan``: in-memory rows, through deterministic
    projections, filters and unions."""
    match plan:
        case LocalTableScanExec():
            return True
        case ProjectExec(project_list=items, child=child):
            return all(e.deterministic for e in items) and _cheaply_recomputable(child)
        case FilterExec(condition=cond, child=child):
            return cond.deterministic and _cheaply_recomputable(child)
        case UnionExec():
            return all(_cheaply_recomputable(c) for c in plan.children)
    return False


def _scan_of(plan: SparkPlan, attr_id: int) -> FileSourceScanExec | None:
    """The file scan whose partition column ``attr_id`` reaches ``plan``'s output unchanged."""
    match plan:
        case FilterExec(child=child):
            return _scan_of(child, attr_id)
        case ProjectExec(project_list=items, child=child):
            if any(isinstance(i, AttributeReference) and i.id == attr_id for i in items):
                return _scan_of(child, attr_id)
        case FileSourceScanExec(relation=rel):
            if any(a.id == attr_id for a in rel.partition_attrs):
                return plan
    return None


def _prune(join: BroadcastHashJoinExec) -> SparkPlan:
    build_right = join.build_side == BuildSide.RIGHT
    build = join.right if build_right else join.left
    stream = join.left if build_right else join.right
    allowed = (JoinType.INNER, JoinType.LEFT_SEMI) if build_right else (JoinType.INNER,)
    if join.join_type not in allowed or not isinstance(build, BroadcastExchangeExec) \
            or not (_has_selective_filter(build.child) or _cheaply_recomputable(build.child)):
        return join
    stream_keys = join.left_keys if build_right else join.right_keys
    for i, key in enumerate(stream_keys):
        if len(key.references) != 1 or not key.deterministic:
            continue
        scan = _scan_of(stream, next(iter(key.references)))
        if scan is None or any(isinstance(f, DynamicPruningExpression) and f.child == key
                               for f in scan.partition_filters):
            continue
        dpe = DynamicPruningExpression(key, build, i, next(_IDS))
        pruned = scan.copy(partition_filters=scan.partition_filters + (dpe,))
        stream = stream.transform_up(lambda n, s=scan, p=pruned: p if n is s else n)
    if stream is (join.left if build_right else join.right):
        return join
    return join.copy(left=stream) if build_right else join.copy(right=stream)


def partition_pruning(plan: SparkPlan, conf: Any, links: dict[int, Any] | None = None
                      ) -> SparkPlan:
    """``plan`` with dynamic partition pruning filters on its scans (see module docstring);
    ``links`` (``{id(node): (node, logical)}``) is carried over to the rebuilt nodes."""
    if not conf.get(DYNAMIC_PARTITION_PRUNING):
        return plan
    if plan.find(lambda n: isinstance(n, BroadcastHashJoinExec)) is None:
        return plan
    out = plan.transform_up(lambda n: _prune(n) if isinstance(n, BroadcastHashJoinExec) else n)
    if links is not None and out is not plan:
        _relink(plan, out, links)
    return out


def _relink(old: SparkPlan, new: SparkPlan, links: dict[int, Any]) -> None:
    """Give each rebuilt node of ``new`` the logical link of its counterpart in ``old`` (the
    rewrite keeps the tree's shape)."""
    stack = [(old, new)]
    while stack:
        o, n = stack.pop()
        if o is n:
            continue
        hit = links.get(id(o))
        if hit is not None and hit[0] is o:
            links[id(n)] = (n, hit[1])
        stack.extend(zip(o.children, n.children))
