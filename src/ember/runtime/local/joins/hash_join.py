"""BroadcastHashJoinExec and ShuffledHashJoinExec (Spark's ``HashJoin`` operators).

Both probe a :class:`~ember.runtime.local.joins.hashed_relation.HashedRelation` of the build
side with the stream side's batches; the join-type semantics are the shared
:class:`~ember.runtime.local.joins.kernel.JoinKernel`'s:

- broadcast hash join: the relation is the broadcast's (``rt.broadcast(exchange).relation``, built
  once per run); every stream partition is probed in parallel.  Build sides: Inner/Cross either,
  LeftOuter/LeftSemi/LeftAnti/Existence right, RightOuter left.  Null-aware anti join (single
  column NOT IN, 7.3): empty build -> every stream row; a NULL build key -> no row; otherwise the
  stream rows whose key is non-NULL and absent.
- shuffled hash join: partition ``i`` of the build child is built into a relation and probed with
  partition ``i`` of the stream child (co-partitioned by EnsureRequirements).  Full outer and the
  build-side outer joins (LeftOuter/BuildLeft, RightOuter/BuildRight) build with
  ``allows_null_key`` and emit the build rows never matched (a bitset) after the stream side;
  LeftSemi/LeftAnti/Existence build with ``ignores_duplicated_key`` when the residual condition
  reads only stream columns and build key columns (Spark's rule, restricted to key *attributes*).
  Beyond Spark, a shuffled LeftSemi/LeftAnti/Existence join may build its *left* side (the
  runtime's shuffled-hash conversion does so when the left side is the smaller): the right rows
  stream through it marking the left rows they match (with the condition, per candidate pair),
  and the left rows are emitted after the stream side as the bitset decides.  The runtime's
  broadcast conversion may likewise *broadcast* the left side of such a join: each stream
  partition marks a bitset of its own, and the left rows come out after all of them ran, as the
  OR of the bitsets decides (:func:`_broadcast_left_existence`).

Bounded residuals (both hash joins): a LeftSemi / LeftAnti / ExistenceJoin building the right side
(not null aware) whose residual is one comparison ``b OP x`` of a build column with a stream
expression (``NOT (b = x)``, ``<``, ``<=``, ``>``, ``>=``; types ordered alike by Arrow and Spark)
builds a :class:`~ember.runtime.local.joins.residual_bounds.BoundedRelation` instead: one row
per key with ``min(b)`` / ``max(b)``, probed with one lookup and one vectorized comparison per
stream batch (no candidate pairs).  Chosen in :meth:`HashJoinParts.of` (``HashJoinParts.bounds``),
so broadcast builds, shuffled builds and each grace-spilled bucket all take it; TPC-H Q21's
``NOT (l_suppkey = l_suppkey)`` semi / anti joins are the motivating case.

Beyond Spark (whose shuffled hash join cannot spill): when a build partition does not fit the
run's memory budget, the partition becomes a *grace hash join*: both sides are hash-partitioned on
their keys into :data:`GRACE_FANOUT` spill buckets (Arrow IPC files), and bucket pairs are joined one
at a time, recursively (with fresh hash bits) up to :data:`MAX_GRACE_LEVEL` levels (a single key
larger than the budget is then joined in memory anyway).  Equal keys always share a bucket, so
results are unchanged; only the output order of a spilled partition differs (per bucket).

Metrics: ``build_size`` (relation bytes), ``build_time_ns`` (extra), ``spill_size``; output rows
are counted by the runtime.
"""

from __future__ import annotations

import itertools
import threading
import time
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np
import pyarrow as pa

from ember.errors import InternalError
from ember.execution.kernels.batches import conform_batch, schema_of
from ember.expressions.base import AttributeReference, Expression
from ember.physical.nodes import (
    BroadcastExchangeExec, BroadcastHashJoinExec, BuildSide, ShuffledHashJoinExec,
    ReusedExchangeExec,
)
from ember.plans.logical.join_type import JoinAlgorithm, JoinType
from ember.runtime.local.joins.band import BandIndex, KeyedBand
from ember.runtime.local.joins.common import (
    NodeMetricsSink,
    bind_all,
    intra_partition_workers,
    layout_of,
    map_batches_ordered,
    runtime_memory,
)
from ember.runtime.local.joins.hashed_relation import (
    EmptyHashedRelation,
    HashedRelation,
    HashedRelationWithAllNullKeys,
    eval_keys,
)
from ember.runtime.local.joins.kernel import JoinKernel, JoinLayout
from ember.runtime.local.joins.residual_bounds import (
    BoundedRelation,
    ResidualBound,
    analyze_residual,
)
from ember.runtime.local.joins.spill import (
    Reservation,
    SpillBucket,
    key_partition_ids,
    split_batch,
)
from ember.runtime.local.memory import MemoryManager, SpillDir, batch_bytes
from ember.runtime.local import runtime_filters
from ember.runtime.local.registry import PartitionFn, operator
from ember.physical.partitioning import HashedRelationBroadcastMode

if TYPE_CHECKING:
    from ember.runtime.local.context import RunContext

GRACE_FANOUT = 16
MAX_GRACE_LEVEL = 3

BatchesFn = Callable[[], Iterable[pa.RecordBatch]]


@dataclass(slots=True)
class HashJoinParts:
    """A hash join node compiled for one run: layout, bound keys, schemas and build options."""

    layout: JoinLayout
    build_left: bool
    stream_keys: tuple[Expression, ...]
    build_keys: tuple[Expression, ...]
    stream_schema: pa.Schema
    build_schema: pa.Schema
    allows_null_key: bool
    ignores_duplicated_key: bool
    null_aware: bool
    #: the residual is one build-column comparison: probe min / max bounds, no pairs
    #: (:mod:`.residual_bounds`)
    bounds: ResidualBound | None = None
    #: a residual conjunct bounding a build expression prunes each key group's candidates
    #: (:class:`~ember.runtime.local.joins.band.KeyedBand`)
    band: BandIndex | None = None

    @classmethod
    def of(cls, node: Any, batch_size: int, *, shuffled: bool, rt: RunContext | None = None
           ) -> "HashJoinParts":
        build_left = node.build_side is BuildSide.LEFT
        jt: JoinType = node.join_type
        build, stream = (node.left, node.right) if build_left else (node.right, node.left)
        bkeys, skeys = ((node.left_keys, node.right_keys) if build_left
                        else (node.right_keys, node.left_keys))
        _check_build_side(jt, node.build_side, shuffled=shuffled)
        build_outer = jt.pads_unmatched(node.build_side)
        ignores = False
        if shuffled and jt.is_left_existence and not build_left:
            allowed = {a.id for a in stream.output}
            allowed |= {k.id for k in bkeys if isinstance(k, AttributeReference)}
            ignores = node.condition is None or node.condition.references <= allowed
        null_aware = bool(getattr(node, "is_null_aware_anti_join", False))
        bounds = analyze_residual(jt, build_left, null_aware, node.condition, build.output,
                                  stream.output, bkeys)
        return cls(
            layout=layout_of(node, batch_size, build_left=build_left, rt=rt),
            build_left=build_left,
            stream_keys=bind_all(skeys, stream.output),
            build_keys=bind_all(bkeys, build.output),
            stream_schema=schema_of(stream.output),
            build_schema=schema_of(build.output),
            # rows that can never match still come out of build-side outer joins, and of
            # build-left anti / existence joins
            allows_null_key=(shuffled and build_outer) or (build_left and jt.is_left_existence),
            ignores_duplicated_key=ignores,
            null_aware=null_aware,
            bounds=bounds,
            band=(None if bounds is not None or null_aware
                  else BandIndex.of(node.condition, stream.output, build.output)),
        )

    def build_relation(self, batches: Iterable[pa.RecordBatch] | pa.Table, shared: bool = False
                       ) -> HashedRelation | BoundedRelation:
        """The build side indexed for probing; ``shared``: built once and probed by every stream
        partition (a broadcast: see ``HashedRelation.build``)."""
        if self.bounds is not None:
            if isinstance(batches, pa.Table):
                batches = batches.to_batches()
            return BoundedRelation(self.bounds, self.build_keys,
                                   (conform_batch(b, self.build_schema) for b in batches))
        if not isinstance(batches, pa.Table):
            batches = (conform_batch(b, self.build_schema) for b in batches)
        return HashedRelation.build(
            batches, self.build_keys, allows_null_key=self.allows_null_key,
            null_aware=self.null_aware, ignores_duplicated_key=self.ignores_duplicated_key,
            schema=self.build_schema, shared=shared)


def _check_build_side(jt: JoinType, side: BuildSide, *, shuffled: bool) -> None:
    algorithm = JoinAlgorithm.SHUFFLED_HASH if shuffled else JoinAlgorithm.BROADCAST_HASH
    if not jt.kernel_can_build(side, algorithm):
        raise InternalError(f"{algorithm.value} cannot run {jt} with {side}")


def probe(parts: HashJoinParts, relation: HashedRelation | BoundedRelation,
          stream: Iterable[pa.RecordBatch], workers: int = 1, band: KeyedBand | None = None
          ) -> Iterator[pa.RecordBatch]:
    """Stream ``stream``'s batches through ``relation`` (7.2; 7.3 when null aware), then emit the
    rows decided by the build-side bitset (build-side outer joins).  ``workers`` > 1 probes
    several stream batches at once on the join thread pool (output order unchanged).  ``band``:
    the relation's :class:`KeyedBand` when the caller keeps one for several probes (else built
    here)."""
    layout = parts.layout
    if parts.null_aware:
        yield from _null_aware_anti(parts, relation, stream, workers)
        return
    kernel = JoinKernel(layout, relation.batch)
    if isinstance(relation, BoundedRelation):
        def bounded(b: pa.RecordBatch) -> list[pa.RecordBatch]:
            b = conform_batch(b, parts.stream_schema)
            if not b.num_rows:
                return []
            return list(kernel.process_exists(
                b, relation.exists(b, eval_keys(parts.stream_keys, b))))

        yield from map_batches_ordered(bounded, stream, workers)
        return

    band = band if band is not None else KeyedBand.build(parts.band, relation)

    def one(b: pa.RecordBatch) -> list[pa.RecordBatch]:
        b = conform_batch(b, parts.stream_schema)
        if not b.num_rows:
            return []
        keys = eval_keys(parts.stream_keys, b)
        cand = band.candidates(relation, keys, b) if band is not None else None
        return list(kernel.process(b, cand if cand is not None else relation.lookup(keys)))

    yield from map_batches_ordered(one, stream, workers)
    yield from kernel.finish()


def _null_aware_anti(parts: HashJoinParts, relation: HashedRelation,
                     stream: Iterable[pa.RecordBatch], workers: int = 1
                     ) -> Iterator[pa.RecordBatch]:
    if isinstance(relation, HashedRelationWithAllNullKeys):
        return
    layout = parts.layout

    def one(b: pa.RecordBatch) -> list[pa.RecordBatch]:
        b = conform_batch(b, parts.stream_schema)
        n = b.num_rows
        if not n:
            return []
        if isinstance(relation, EmptyHashedRelation):
            return list(layout.emit(b, None, np.arange(n, dtype=np.int64), None))
        keys = eval_keys(parts.stream_keys, b)
        absent = ~relation.lookup(keys).has_candidate()
        for k in keys:
            if k.null_count:
                absent &= np.asarray(k.is_valid().to_numpy(zero_copy_only=False), dtype=bool)
        if absent.all():
            return list(layout.emit(b, None, np.arange(n, dtype=np.int64), None))
        return list(layout.emit(b, None, np.flatnonzero(absent), None))

    yield from map_batches_ordered(one, stream, workers)


# ---------------------------------------------------------------------------------------------
# Shuffled hash join partition (with grace spilling)


def shuffled_hash_join_partition(
    parts: HashJoinParts,
    stream_fn: BatchesFn,
    build: Iterable[pa.RecordBatch],
    memory: MemoryManager,
    spill_dir: SpillDir,
    metrics: NodeMetricsSink | None = None,
    level: int = 0,
) -> Iterator[pa.RecordBatch]:
    """One co-partition of a shuffled hash join: build, probe, finish; grace-spills when the
    build side does not fit ``memory``."""
    metrics = metrics or NodeMetricsSink()
    res = Reservation(memory)
    try:
        held: list[pa.RecordBatch] = []
        it = iter(build)
        over = False
        for b in it:
            held.append(b)
            if not res.try_add(batch_bytes(b)):
                over = True
                break
        if over and level < MAX_GRACE_LEVEL:
            res.release_all()
            yield from _grace(parts, itertools.chain(held, it), stream_fn, memory, spill_dir,
                              metrics, level)
            return
        if over:  # one key larger than the budget: nothing left to split
            for b in it:
                held.append(b)
                res.force_add(batch_bytes(b))
        t0 = time.perf_counter_ns()
        relation = parts.build_relation(held)
        del held
        size = relation.estimated_size()
        if isinstance(relation, BoundedRelation):  # the build rows are gone: hold the bounds only
            res.release_all()
            res.force_add(size)
        metrics.add(build_size=size, build_time_ns=time.perf_counter_ns() - t0)
        metrics.record_memory(size)
        yield from probe(parts, relation, stream_fn())
    finally:
        res.release_all()


def _grace(parts: HashJoinParts, build: Iterable[pa.RecordBatch], stream_fn: BatchesFn,
           memory: MemoryManager, spill_dir: SpillDir, metrics: NodeMetricsSink,
           level: int) -> Iterator[pa.RecordBatch]:
    fan = GRACE_FANOUT
    flush = max(1 << 16, memory.budget // (4 * fan))
    bbuckets = [SpillBucket(spill_dir, parts.build_schema, flush, "shj-build") for _ in range(fan)]
    sbuckets = [SpillBucket(spill_dir, parts.stream_schema, flush, "shj-stream")
                for _ in range(fan)]
    try:
        for keys_of, buckets, batches, schema in (
            (parts.build_keys, bbuckets, build, parts.build_schema),
            (parts.stream_keys, sbuckets, stream_fn(), parts.stream_schema),
        ):
            for b in batches:
                b = conform_batch(b, schema)
                if not b.num_rows:
                    continue
                pids = key_partition_ids(eval_keys(keys_of, b), fan, level)
                for p, piece in split_batch(b, pids, fan):
                    buckets[p].add(piece)
            for bk in buckets:
                bk.flush()
        metrics.add(spill_size=sum(bk.bytes_written for bk in bbuckets + sbuckets))
        for p in range(fan):
            sb = sbuckets[p]
            yield from shuffled_hash_join_partition(parts, sb.read, bbuckets[p].read(), memory,
                                                    spill_dir, metrics, level + 1)
            bbuckets[p].delete()
            sb.delete()
    finally:
        for bk in bbuckets + sbuckets:
            bk.delete()


# ---------------------------------------------------------------------------------------------
# Operators


@operator(BroadcastHashJoinExec)
def run_broadcast_hash_join(node: BroadcastHashJoinExec, rt: RunContext) -> list[PartitionFn]:
    """One partition per stream partition, all probing the one broadcast relation."""
    parts = HashJoinParts.of(node, rt.ctx.batch_size, shuffled=False, rt=rt)
    if parts.build_left and node.join_type.is_left_existence:
        return _broadcast_left_existence(node, parts, rt)
    build_plan = node.build_plan
    runtime_filters.register(node, rt)
    stream_parts = rt.execute(node.streamed_plan)
    metrics = NodeMetricsSink(rt, node)
    lock = threading.Lock()
    cache: list[tuple[HashedRelation, KeyedBand | None]] = []

    def relation() -> tuple[HashedRelation, KeyedBand | None]:
        """The broadcast relation and its key groups' band index, built once."""
        if cache:
            return cache[0]
        with lock:
            if not cache:
                rel = _broadcast_relation(node, build_plan, parts, rt)
                metrics.add(build_size=rel.estimated_size())
                band = (KeyedBand.build(parts.band, rel)
                        if isinstance(rel, HashedRelation) else None)
                cache.append((rel, band))
        return cache[0]

    workers = intra_partition_workers(rt, len(stream_parts))

    def run(p: PartitionFn) -> PartitionFn:
        def one() -> Iterator[pa.RecordBatch]:
            rel, band = relation()
            return probe(parts, rel, p(), workers, band=band)
        return one

    return [run(p) for p in stream_parts]


def _broadcast_left_existence(node: BroadcastHashJoinExec, parts: HashJoinParts, rt: RunContext
                              ) -> list[PartitionFn]:
    """Beyond Spark (only the runtime's broadcast conversion plans it): a semi / anti /
    existence join broadcasting its *left* side.  Every stream (right) partition is probed in
    parallel, each marking in a bitset of its own the left rows it matches (with the condition,
    per candidate pair); the bitsets are OR-ed once all have run -- when the node is executed,
    as an exchange's map side runs -- and the left rows come out as the merged bitset decides,
    in as many partitions as the stream side has (contiguous slices of the left rows)."""
    stream_parts = rt.execute(node.streamed_plan)
    metrics = NodeMetricsSink(rt, node)
    relation = _broadcast_relation(node, node.build_plan, parts, rt)
    metrics.add(build_size=relation.estimated_size())

    def mark(p: PartitionFn) -> Callable[[], np.ndarray]:
        def run() -> np.ndarray:
            kernel = JoinKernel(parts.layout, relation.batch)
            for b in p():
                b = conform_batch(b, parts.stream_schema)
                if b.num_rows:
                    for _ in kernel.process(b, relation.lookup(eval_keys(parts.stream_keys, b))):
                        raise InternalError("a build-left existence join emitted stream rows")
            return kernel.build_matched

        return run

    n = relation.batch.num_rows
    t0 = time.perf_counter_ns()
    marks = rt.run_stage(f"broadcast {node.build_plan.plan_id} marks",
                         [mark(p) for p in stream_parts])
    metrics.add(stage_time_ns=time.perf_counter_ns() - t0)
    merged = np.logical_or.reduce(marks) if marks else np.zeros(n, dtype=bool)
    k = max(1, len(stream_parts))
    bounds = [n * i // k for i in range(k + 1)]

    def emit(lo: int, hi: int) -> PartitionFn:
        def run() -> Iterator[pa.RecordBatch]:
            kernel = JoinKernel(parts.layout, relation.batch)
            kernel.build_matched = merged
            return kernel.finish(lo, hi)

        return run

    return [emit(bounds[i], bounds[i + 1]) for i in range(k)]


def _broadcast_relation(node: Any, build_plan: Any, parts: HashJoinParts, rt: RunContext
                        ) -> HashedRelation | BoundedRelation:

    if isinstance(build_plan, ReusedExchangeExec) and isinstance(build_plan.child,
                                                                 BroadcastExchangeExec):
        # a reused broadcast: the original's rows and relation (same columns by position, a
        # canonically equal mode), built once for every join reading either
        build_plan = build_plan.child
    if isinstance(build_plan, BroadcastExchangeExec):
        value = rt.broadcast(build_plan)
        mode = build_plan.mode
        if (isinstance(mode, HashedRelationBroadcastMode) and len(mode.keys) == len(parts.build_keys)
                and mode.is_null_aware == parts.null_aware and parts.bounds is None
                and not parts.allows_null_key):
            return value.relation
        # (a bounded residual reduces the broadcast rows into a relation of its own, once per run)
        return parts.build_relation(value.table, shared=True)
    # No exchange below (a plan built by hand): collect the build side here.
    batches = [b for fn in rt.execute(build_plan) for b in fn()]
    return parts.build_relation(batches)


@operator(ShuffledHashJoinExec)
def run_shuffled_hash_join(node: ShuffledHashJoinExec, rt: RunContext) -> list[PartitionFn]:
    """One partition per co-partition (left ``i`` with right ``i``)."""
    parts = HashJoinParts.of(node, rt.ctx.batch_size, shuffled=True, rt=rt)
    lparts = rt.execute(node.left)
    rparts = rt.execute(node.right)
    if len(lparts) != len(rparts):
        raise InternalError(
            f"ShuffledHashJoin: children have {len(lparts)} and {len(rparts)} partitions")
    memory, spill_dir = runtime_memory(rt)
    metrics = NodeMetricsSink(rt, node)
    pairs = list(zip(lparts, rparts))

    def run(lp: PartitionFn, rp: PartitionFn) -> PartitionFn:
        build_fn, stream_fn = (lp, rp) if parts.build_left else (rp, lp)
        return lambda: shuffled_hash_join_partition(parts, stream_fn, build_fn(), memory,
                                                    spill_dir, metrics)

    return [run(lp, rp) for lp, rp in pairs]
