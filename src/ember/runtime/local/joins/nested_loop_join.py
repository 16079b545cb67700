"""BroadcastNestedLoopJoinExec (Spark's operator of the same name).

The build side is broadcast as a plain table (``IdentityBroadcastMode``); every stream row is a
candidate partner of every build row, enumerated by :class:`~ember.runtime.local.joins.kernel.Candidates`
in chunks of at most ``pair_chunk_size(batch_size)`` pairs (the pair matrix is never materialized
whole), the full join condition evaluated on each chunk (TRUE-only; no condition: always TRUE).

Beyond Spark: conjuncts comparing a stream expression with a build expression (``<``, ``<=``,
``>``, ``>=``, e.g. a band ``a.t BETWEEN b.t - 5 AND b.t + 5``) prune each stream row's candidates
to a range of the build rows sorted on that expression (:mod:`.band`); a partition alone on the
cores spreads its stream batches over the idle ones.  A RangeJoinExec (a lower and an upper bound
between the sides) runs here too, its pairs enumerated by sort-and-sweep (:mod:`.range_join`).

Paths, as Spark's:

- *streamed* (one output partition per stream partition): InnerLike with either build side,
  LeftOuter/BuildRight, RightOuter/BuildLeft, LeftSemi/LeftAnti/Existence with BuildRight.
- *build-left existence* (LeftSemi/LeftAnti/Existence with BuildLeft): the output rows are build
  rows, decided by a global bitset of build rows matched by some stream row, OR-ed over every stream
  partition; one output partition.  (Without a condition the bitset is "the stream side has a
  row".)
- *default* (LeftOuter/BuildLeft, RightOuter/BuildRight, FullOuter): (a) per stream partition the
  passing pairs, and for FullOuter the unmatched stream rows NULL-padded; (b) one more partition with
  the build rows no stream row matched (the global bitset; the stream side is evaluated again for
  it, as Spark does).
"""

from __future__ import annotations

import threading
from collections.abc import Iterable, Iterator
from typing import TYPE_CHECKING, Any

import numpy as np
import pyarrow as pa

from ember.execution.kernels.batches import conform_batch, schema_of
from ember.physical.nodes import (BroadcastExchangeExec, BroadcastNestedLoopJoinExec, BuildSide,
                                  RangeJoinExec)
from ember.physical.range_join import range_condition
from ember.plans.logical.join_type import JoinType
from ember.runtime.local.joins.band import BandIndex
from ember.runtime.local.joins.common import (
    intra_partition_workers,
    layout_of,
    map_batches_ordered,
)
from ember.runtime.local.joins.hashed_relation import to_batch
from ember.runtime.local.joins.kernel import Candidates, JoinKernel, JoinLayout
from ember.runtime.local.joins.range_join import RangeIndex
from ember.runtime.local.registry import PartitionFn, operator

if TYPE_CHECKING:
    from ember.runtime.local.context import RunContext

#: how a nested loop join prunes its candidate pairs (None: it compares every pair)
Pruning = BandIndex | RangeIndex | None


def nested_loop_stream(layout: JoinLayout, build: pa.RecordBatch,
                       stream: Iterable[pa.RecordBatch], stream_schema: pa.Schema,
                       kernel: JoinKernel | None = None, band: Pruning = None,
                       workers: int = 1) -> Iterator[pa.RecordBatch]:
    """Stream batches against every build row (the kernel's bitset, if any, is updated);
    ``band`` prunes the candidate build rows of range conditions (:mod:`.band`), or, a
    :class:`~.range_join.RangeIndex` (RangeJoinExec), enumerates the pairs of the whole stream
    by sort-and-sweep; ``workers`` > 1 processes several stream batches at once (output order
    unchanged)."""
    kernel = kernel or JoinKernel(layout, build)
    if isinstance(band, RangeIndex):
        yield from band.join(kernel, stream, stream_schema)
        return
    nb = build.num_rows

    def one(b: pa.RecordBatch) -> list[pa.RecordBatch]:
        b = conform_batch(b, stream_schema)
        if not b.num_rows:
            return []
        cand = band.candidates(build, b) if band is not None and nb else None
        if cand is None:
            cand = Candidates.all_pairs(b.num_rows, nb)
        return list(kernel.process(b, cand))

    yield from map_batches_ordered(one, stream, workers)


def pruning_of(node: BroadcastNestedLoopJoinExec, stream_plan: Any, build_plan: Any) -> Pruning:
    """The pair pruning of ``node``: a RangeJoinExec's sort-and-sweep, else band pruning."""
    if isinstance(node, RangeJoinExec):
        cond = range_condition(node.condition, node.left.output, node.right.output)
        if cond is not None:
            return RangeIndex(cond, list(node.left.output), list(node.right.output))
    return BandIndex.of(node.condition, stream_plan.output, build_plan.output)


def is_streamed_path(join_type: JoinType, build_left: bool) -> bool:
    """Whether BNLJ needs nothing global (each stream partition is independent)."""
    return not join_type.tracks_build_matches(BuildSide.LEFT if build_left else BuildSide.RIGHT)


def build_side_batch(rt: RunContext, build_plan: Any) -> pa.RecordBatch:
    """All rows of the build child (through its broadcast when there is one)."""
    schema = schema_of(build_plan.output)
    if isinstance(build_plan, BroadcastExchangeExec):
        table = rt.broadcast(build_plan).table
        return conform_batch(to_batch(table), schema)
    batches = [b for fn in rt.execute(build_plan) for b in fn()]
    return to_batch(batches, schema)


@operator(BroadcastNestedLoopJoinExec)
def run_broadcast_nested_loop_join(node: BroadcastNestedLoopJoinExec, rt: RunContext
                                   ) -> list[PartitionFn]:
    build_left = node.build_side is BuildSide.LEFT
    build_plan, stream_plan = (node.left, node.right) if build_left else (node.right, node.left)
    layout = layout_of(node, rt.ctx.batch_size, build_left=build_left, rt=rt)
    stream_schema = schema_of(stream_plan.output)
    stream_parts = rt.execute(stream_plan)
    jt: JoinType = node.join_type
    band = pruning_of(node, stream_plan, build_plan)
    workers = intra_partition_workers(rt, len(stream_parts))
    lock = threading.Lock()
    cache: dict[str, Any] = {}

    def build() -> pa.RecordBatch:
        if "build" not in cache:
            with lock:
                if "build" not in cache:
                    b = build_side_batch(rt, build_plan)
                    rt.metrics.node(node).add(build_size=b.nbytes)
                    cache["build"] = b
        return cache["build"]

    def streamed(p: PartitionFn) -> PartitionFn:
        return lambda: nested_loop_stream(layout, build(), p(), stream_schema, band=band,
                                          workers=workers)

    if is_streamed_path(jt, build_left):
        return [streamed(p) for p in stream_parts]

    bits_lock = threading.Lock()

    def global_bits() -> np.ndarray:
        """Build rows matched by some stream row, over every stream partition."""
        with bits_lock:
            if "bits" not in cache:
                b = build()

                def task(p: PartitionFn):
                    return lambda: matched_bits(layout, b, p(), stream_schema, band, workers)

                bits = np.zeros(b.num_rows, dtype=bool)
                for part in rt.run_stage("nested loop join matched rows",
                                         [task(p) for p in stream_parts]):
                    bits |= part
                cache["bits"] = bits
        return cache["bits"]

    def finish_partition() -> Iterator[pa.RecordBatch]:
        yield from unmatched_build_rows(layout, build(), global_bits())

    if jt.is_left_existence:  # BuildLeft semi / anti / existence: build rows only
        return [finish_partition]

    # Default path: pairs per stream partition (+ stream padding for FullOuter), then the build
    # rows never matched.
    def pairs(p: PartitionFn) -> PartitionFn:
        return lambda: stream_pairs(layout, build(), p(), stream_schema, band, workers)

    return [pairs(p) for p in stream_parts] + [finish_partition]


# The three parts of the global (non-streamed) paths, also run separately by the Spark runtime
# (ember.runtime.spark: the bits of each stream partition in one job, OR-ed on the driver).


def matched_bits(layout: JoinLayout, build: pa.RecordBatch, stream: Iterable[pa.RecordBatch],
                 stream_schema: pa.Schema, band: Pruning = None,
                 workers: int = 1) -> np.ndarray:
    """Which build rows some row of ``stream`` matches (without a condition: all of them when
    ``stream`` has a row)."""
    k = JoinKernel(layout, build, track_build=True)
    k.emits_pairs = False  # bits only
    k.pad_stream = False
    k.stream_existence = False
    k.build_existence = True  # without a condition: any stream row marks all
    for _ in nested_loop_stream(layout, build, stream, stream_schema, k, band=band,
                                workers=workers):
        pass
    assert k.build_matched is not None
    return k.build_matched


def unmatched_build_rows(layout: JoinLayout, build: pa.RecordBatch,
                         bits: np.ndarray) -> Iterator[pa.RecordBatch]:
    """The join's rows for the build rows ``bits`` leaves unmatched (NULL-padded for outer
    joins; for a build-left semi / anti / existence join, every build row decided)."""
    k = JoinKernel(layout, build, track_build=True)
    k.build_matched = bits.copy()
    yield from k.finish()


def stream_pairs(layout: JoinLayout, build: pa.RecordBatch, stream: Iterable[pa.RecordBatch],
                 stream_schema: pa.Schema, band: Pruning = None,
                 workers: int = 1) -> Iterator[pa.RecordBatch]:
    """The passing pairs of ``stream``'s rows (and, for FullOuter, its unmatched rows padded);
    the unmatched build rows are left to :func:`unmatched_build_rows`."""
    k = JoinKernel(layout, build)
    k.build_matched = None
    yield from nested_loop_stream(layout, build, stream, stream_schema, k, band=band,
                                  workers=workers)
