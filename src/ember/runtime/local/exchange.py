"""In-process exchanges: repartitioning, spilling map outputs, and partition coalescing.

Map side
    ``ShuffleExchangeExec(partitioning, child)`` runs every child partition as one task on the
    thread pool.  Each task computes a target partition per row (hash partitioning: a vectorized
    hash of the key columns, :mod:`.hashing`; round robin; single partition; range partitioning:
    see below), reorders the batch by target with one stable ``take`` (indices from a counting
    sort of the targets) and keeps zero-copy slices per target in its :class:`MapOutput`.  Map
    outputs reserve their bytes from the memory budget; when a reservation fails a map output is
    written to an Arrow IPC spill file (and finished map outputs are spilled on request of other
    operators that need memory).

Range partitioning
    The child's rows are buffered first; bounds are the quantiles of a sample of the sort keys
    (every row when few); each row goes to the number of bounds that sort before it (one stable
    sort of the batch's keys followed by the bounds, so a row equal to bound ``i`` goes to
    partition ``i`` in every batch).  Concatenating the partitions in order is then sorted.

Reduce side and coalescing
    Output partition ``i`` reads target ``i`` of every map output in map order (a coalesced
    partition of targets ``[s, e)`` reads each map output's rows of all of them at once, map
    output after map output; range partitioning reads target after target).  As Spark's
    adaptive execution (CoalesceShufflePartitions), adjacent targets are grouped so that a group
    holds about ``max(min(advisory, budget / (4 x cores), total / cores), minPartitionSize)``
    bytes (and at most ``maxPartitionRows`` rows): 200 shuffle partitions of small data become
    one.  Exchanges feeding
    one operator that needs co-partitioned children (shuffled hash and sort-merge joins) form a
    *coalesce group* (found by :func:`analyze` before running): their sizes are added per target
    and they share one grouping, so output partition ``i`` of each side still holds the same keys.
    EXPLAIN shows the planned partitioning; only the runtime's partition count changes.

Reused exchanges
    A ``ReusedExchangeExec`` (``spark.sql.exchange.reuse``, planning/reuse_exchange.py) is a
    coalesce-group member of its own: it reads the map outputs of the exchange it reuses, which
    map once per run (:func:`map_members` shares them, whichever reader comes first) and are
    finished once (range pass, spill registration, build size: :func:`_finish_source`), with
    the coalesced ranges of *its* group -- so each reader stays co-partitioned with its own
    join's other side, even when the two readers' groups coalesce differently or adaptive
    conversion takes one of them out of its group.  Its batches are relabelled to its output.
    A reused broadcast answers its exchange's value (``LocalRuntime.broadcast``).  Map outputs
    stay held (spillable) until the run ends, as every exchange's do: a reused one is counted
    once in the memory budget.
"""

from __future__ import annotations

import math
import threading
import time
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from ember.conf import (
    ADVISORY_PARTITION_SIZE,
    COALESCE_MAX_PARTITION_ROWS,
    COALESCE_MIN_PARTITION_SIZE,
    COALESCE_PARTITIONS,
)
from ember.errors import InternalError
from ember.execution.kernels.batches import concat, conform_batch, schema_of, take
from ember.execution.kernels.sort import sort_indices
from ember.execution.prepare import prepare
from ember.expressions.common import to_array
from ember.physical.nodes import BroadcastExchangeExec, ReusedExchangeExec, ShuffleExchangeExec
from ember.physical.partitioning import (
    ClusteredDistribution,
    HashPartitioning,
    RangePartitioning,
    RoundRobinPartitioning,
    SinglePartition,
    UnknownPartitioning,
)
from ember.runtime.local.hashing import partition_ids
from ember.runtime.local.node_state import NodeSet, NodeState
from ember.runtime.local.registry import PartitionFn, operator

if TYPE_CHECKING:
    from ember.runtime.local.context import RunContext

__all__ = ["analyze", "materialize", "MapOutput", "coalesce_ranges", "target_totals", "rebatch"]


# ---------------------------------------------------------------------------------------------
# Coalesce groups


@dataclass(eq=False)
class _Group:
    members: list[Any]
    lock: threading.RLock = field(default_factory=threading.RLock)
    busy: bool = False
    #: the joins reading members of the group got their chance to convert before it is mapped
    #: (``adaptive.preconvert``)
    preconverted: bool = False


@dataclass(eq=False)
class ExchangeState:
    """The exchange registry of one run (``RunContext.exchanges``): Spark's shuffle registry
    (``MapOutputTracker``) and AQE's coalesce groups, for exchanges run in process."""

    #: the nodes whose subtree :func:`analyze` has seen
    analyzed: NodeSet = field(default_factory=NodeSet)
    #: the coalesce group of each exchange (or reused exchange) that has one
    groups: NodeState[_Group] = field(default_factory=NodeState)
    #: the output partitions of each materialized exchange
    results: NodeState[list[PartitionFn]] = field(default_factory=NodeState)
    lock: threading.Lock = field(default_factory=threading.Lock)
    #: map outputs per exchange that ran, shared by its reused readers
    mapped: NodeState[list["MapOutput"]] = field(default_factory=NodeState)
    #: the exchanges whose map outputs are final (range-partitioned, registered)
    final: NodeSet = field(default_factory=NodeSet)


def _source(member: Any) -> ShuffleExchangeExec:
    """The exchange that runs for coalesce-group member ``member``: itself, or the exchange a
    ``ReusedExchangeExec`` reads."""
    return member.child if isinstance(member, ReusedExchangeExec) else member


def _frontier(node: Any, out: list[Any]) -> None:
    """The shuffle exchanges (and reused shuffle exchanges) below ``node`` reached without
    crossing another exchange."""
    if isinstance(node, ShuffleExchangeExec) or (
            isinstance(node, ReusedExchangeExec) and isinstance(node.child, ShuffleExchangeExec)):
        out.append(node)
    elif not isinstance(node, BroadcastExchangeExec):
        for c in node.children:
            _frontier(c, out)


def _needs_copartition(node: Any) -> bool:
    kids = node.children
    if len(kids) < 2:
        return False
    try:
        req = node.required_child_distribution
    except Exception:  # noqa: BLE001 - a node that cannot say has no requirement
        return False
    return len(req) == len(kids) and all(isinstance(d, ClusteredDistribution) for d in req)


def analyze(root: Any, rt: RunContext) -> None:
    """Record the coalesce groups of the plan under ``root`` (once per subtree and run)."""
    st = rt.exchanges
    if root in st.analyzed:
        return
    with st.lock:
        stack = [root]
        while stack:
            n = stack.pop()
            if n in st.analyzed:
                continue
            st.analyzed.add(n)
            stack.extend(n.children)
            if not _needs_copartition(n):
                continue
            counts = [c.output_partitioning.num_partitions for c in n.children]
            found: list[Any] = []
            for c in n.children:
                _frontier(c, found)
            members = [e for e in found if e.output_partitioning.num_partitions in counts
                       and e.output_partitioning.num_partitions > 1]
            if len(members) < 2:
                continue
            merged: list[Any] = []
            seen: set[int] = set()
            for e in members:
                g = st.groups.get(e)
                for m in (g.members if g is not None else [e]):
                    if id(m) not in seen:
                        seen.add(id(m))
                        merged.append(m)
            group = _Group(merged)
            for m in merged:
                st.groups[m] = group


# ---------------------------------------------------------------------------------------------
# Map outputs


class MapOutput:
    """What one map task wrote: a list of *chunks*, each one input batch reordered by target
    partition (one stable ``take``) with the offsets where each target starts, held in memory or
    in a spill file.  A reader of targets ``[start, end)`` gets one zero-copy slice per chunk
    (adjacent targets are contiguous in a chunk), not one piece per target."""

    def __init__(self, num_partitions: int, schema: pa.Schema, rt: RunContext, metrics) -> None:
        self.n = num_partitions
        self.schema = schema
        self.rt = rt
        self.metrics = metrics
        self.chunks: list[Any] = []  # pa.RecordBatch, or (SpillFile, index) once spilled
        self.offsets: list[np.ndarray] = []  # per chunk: n + 1 row offsets
        self.rows = np.zeros(num_partitions, dtype=np.int64)
        self.bytes = np.zeros(num_partitions, dtype=np.int64)
        self.mem_bytes = 0
        self._lock = threading.Lock()

    def add(self, batch: pa.RecordBatch, pids: np.ndarray | None) -> None:
        """Append ``batch``'s rows to their targets (``pids``; None: all to target 0)."""
        n_rows = batch.num_rows
        if not n_rows:
            return
        if pids is None or self.n == 1:
            counts = np.zeros(self.n, dtype=np.int64)
            counts[0] = n_rows
            held = batch
        else:
            # small integer keys: Arrow's stable sort_indices is a counting sort for them
            # (linear time, measured ~2x faster than numpy's stable radix argsort on 8-bit
            # keys); its uint64 indices feed ``take`` directly
            keys = pids.astype(np.uint8 if self.n <= 256 else
                               np.int16 if self.n <= 32767 else np.int32, copy=False)
            counts = np.bincount(keys, minlength=self.n).astype(np.int64, copy=False)
            nz = int(np.count_nonzero(counts))
            if nz == 1:
                held = batch
            else:
                held = take(batch, pc.array_sort_indices(pa.array(keys)))
        offsets = np.zeros(self.n + 1, dtype=np.int64)
        np.cumsum(counts, out=offsets[1:])
        nbytes = held.nbytes
        if not self.rt.memory.try_acquire(nbytes, requester=self):
            self.spill()
            self.rt.memory.force_acquire(nbytes)
        with self._lock:
            self.chunks.append(held)
            self.offsets.append(offsets)
            self.rows += counts
            self.bytes += (counts * nbytes) // n_rows
            self.mem_bytes += nbytes
            self.metrics.record_memory(self.mem_bytes)

    def spillable_bytes(self) -> int:
        return self.mem_bytes if self.schema.names else 0

    def spill(self) -> int:
        """Write the in-memory chunks to one spill file; returns the bytes released."""
        if not self.schema.names:
            return 0  # zero-column batches hold (almost) nothing
        with self._lock:
            if not self.mem_bytes:
                return 0
            where = [j for j, c in enumerate(self.chunks) if isinstance(c, pa.RecordBatch)]
            f = self.rt.spill_dir.write([self.chunks[j] for j in where], self.schema,
                                        prefix="shuffle")
            for k, j in enumerate(where):
                self.chunks[j] = (f, k)
            freed, self.mem_bytes = self.mem_bytes, 0
        self.rt.memory.release(freed)
        self.metrics.add(spill_size=f.nbytes)
        return freed

    def read_range(self, start: int, end: int) -> Iterator[pa.RecordBatch]:
        """The rows of targets ``[start, end)``: one slice per chunk, in the order added."""
        end = min(end, self.n)
        if start >= end:
            return
        with self._lock:
            items = list(zip(self.chunks, self.offsets))
        for c, offs in items:
            lo, hi = int(offs[start]), int(offs[end])
            if hi <= lo:
                continue
            if not isinstance(c, pa.RecordBatch):
                # a spilled chunk: mapped for this one slice (only its pages are read) and the
                # slice copied out, so neither the mapping nor the rest of the chunk outlives it
                f, k = c
                piece = f.reader(mapped=True).get_batch(k).slice(lo, hi - lo)
                yield pa.concat_batches([piece]) if len(self.schema) else piece
                continue
            yield c.slice(lo, hi - lo)

    def read(self, p: int) -> Iterator[pa.RecordBatch]:
        """Target ``p``'s batches, in the order they were added."""
        return self.read_range(p, p + 1)

    def read_all(self) -> Iterator[pa.RecordBatch]:
        return self.read_range(0, self.n)

    def release(self) -> None:
        """Forget every chunk (a buffer that was repartitioned elsewhere)."""
        with self._lock:
            freed, self.mem_bytes = self.mem_bytes, 0
            self.chunks, self.offsets = [], []
        self.rt.memory.release(freed)


# ---------------------------------------------------------------------------------------------
# Partitioners


def key_arrays(bound: Sequence[Any], batch: pa.RecordBatch) -> list[pa.Array]:
    return [to_array(e.eval(batch), batch.num_rows) for e in bound]


def _range_bounds(node: ShuffleExchangeExec, outputs: list[MapOutput], rt: RunContext
                  ) -> list[pa.Array] | None:
    """Sort keys of the ``n - 1`` range bounds (None when there is nothing to partition)."""
    part: RangePartitioning = node.output_partitioning  # type: ignore[assignment]
    n = part.num_partitions
    total = int(sum(int(o.rows.sum()) for o in outputs))
    if n <= 1 or total == 0:
        return None
    bound = [prepare(o.child, node.child.output) for o in part.ordering]
    per_row = max(1, total // max(1, min(total, 100 * n)))  # sample about 100 rows per target
    samples: list[pa.RecordBatch] = []
    seen = 0
    for o in outputs:
        for b in o.read_all():
            first = (-seen) % per_row
            idx = np.arange(first, b.num_rows, per_row, dtype=np.int64)
            seen += b.num_rows
            if len(idx):
                samples.append(take(b, idx))
    sample = concat(samples, outputs[0].schema)
    return bounds_from_sample(part, key_arrays(bound, sample))


def bounds_from_sample(part: RangePartitioning, keys: list[pa.Array]) -> list[pa.Array]:
    """The ``n - 1`` range bounds of ``part`` (sort keys, one array per ordering) picked evenly
    from the sampled sort ``keys`` (the Spark runtime samples on its executors)."""
    n = part.num_partitions
    order = sort_indices(keys, [o.ascending for o in part.ordering],
                         [o.effective_nulls_first for o in part.ordering])
    m = len(order)
    picks = np.array([order[min(m - 1, (i * m) // n)] for i in range(1, n)], dtype=np.int64)
    return [k.take(pa.array(picks)) for k in keys]


def range_pids(node: ShuffleExchangeExec, bounds: list[pa.Array], batch: pa.RecordBatch,
                bound_exprs: Sequence[Any]) -> np.ndarray:
    part: RangePartitioning = node.output_partitioning  # type: ignore[assignment]
    keys = key_arrays(bound_exprs, batch)
    m = batch.num_rows
    both = [pa.concat_arrays([k, b.cast(k.type)]) for k, b in zip(keys, bounds)]
    order = sort_indices(both, [o.ascending for o in part.ordering],
                         [o.effective_nulls_first for o in part.ordering])
    is_bound = order >= m
    before = np.cumsum(is_bound) - is_bound  # bounds sorted before each position
    pids = np.empty(m, dtype=np.int64)
    rows = ~is_bound
    pids[order[rows]] = before[rows]
    return pids


# ---------------------------------------------------------------------------------------------
# Coalescing


def target_totals(outputs: Iterable[MapOutput], n: int) -> tuple[np.ndarray, np.ndarray]:
    """Rows and bytes per target over the map outputs of ``n`` targets among ``outputs``."""
    rows = np.zeros(n, dtype=np.int64)
    nbytes = np.zeros(n, dtype=np.int64)
    for o in outputs:
        if o.n == n:
            rows += o.rows
            nbytes += o.bytes
    return rows, nbytes


def coalesce_ranges(rows: np.ndarray, nbytes: np.ndarray, rt: RunContext) -> list[tuple[int, int]]:
    """Adjacent target ranges ``[start, end)`` grouping partitions to the target size."""
    n = len(rows)
    if n <= 1 or not rt.conf.get(COALESCE_PARTITIONS):
        return [(i, i + 1) for i in range(n)]
    total = int(nbytes.sum())
    advisory = int(rt.conf.get(ADVISORY_PARTITION_SIZE))
    min_size = int(rt.conf.get(COALESCE_MIN_PARTITION_SIZE))
    # each running task holds its partition (and a blocking operator's state over it): under a
    # small memory budget, partitions hold at most a quarter of the budget's share per core
    share = rt.memory.budget // (4 * max(1, rt.parallelism))
    target = max(min(advisory, share, math.ceil(total / max(1, rt.parallelism))), min_size, 1)
    max_rows = max(1, int(rt.conf.get(COALESCE_MAX_PARTITION_ROWS)))
    ranges: list[tuple[int, int]] = []
    start, cb, cr = 0, 0, 0
    for i in range(n):
        b, r = int(nbytes[i]), int(rows[i])
        if i > start and (cb + b > target or cr + r > max_rows) and cr > 0:
            ranges.append((start, i))
            start, cb, cr = i, 0, 0
        cb += b
        cr += r
    ranges.append((start, n))
    return ranges


def rebatch(batches: Iterator[pa.RecordBatch], size: int,
            schema: pa.Schema) -> Iterator[pa.RecordBatch]:
    """``batches`` regrouped into batches of about ``size`` rows (small pieces are merged)."""
    size = max(1, size)
    buf: list[pa.RecordBatch] = []
    held = 0
    for b in batches:
        if not b.num_rows:
            continue
        if not buf and b.num_rows >= size:
            yield b
            continue
        buf.append(b)
        held += b.num_rows
        if held >= size:
            yield concat(buf, schema)
            buf, held = [], 0
    if buf:
        yield concat(buf, schema)


# ---------------------------------------------------------------------------------------------
# Materialization


def _map_task(node: ShuffleExchangeExec, index: int, part_fn: PartitionFn, rt: RunContext,
              schema: pa.Schema, metrics) -> MapOutput:
    p = node.output_partitioning
    if isinstance(p, RangePartitioning):
        out = MapOutput(1, schema, rt, metrics)  # buffered; partitioned once bounds are known
        for b in part_fn():
            out.add(conform_batch(b, schema), None)
        return out
    n = p.num_partitions
    out = MapOutput(n, schema, rt, metrics)
    if isinstance(p, HashPartitioning) and n > 1:
        bound = [prepare(e, node.child.output) for e in p.expressions]
        for b in part_fn():
            b = conform_batch(b, schema)
            out.add(b, partition_ids(key_arrays(bound, b), n))
    elif isinstance(p, (RoundRobinPartitioning, UnknownPartitioning)) and n > 1:
        nxt = index % n
        for b in part_fn():
            b = conform_batch(b, schema)
            out.add(b, (nxt + np.arange(b.num_rows, dtype=np.int64)) % n)
            nxt = (nxt + b.num_rows) % n
    elif isinstance(p, (SinglePartition, HashPartitioning, RoundRobinPartitioning,
                        UnknownPartitioning)):
        for b in part_fn():
            out.add(conform_batch(b, schema), None)
    else:
        raise InternalError(f"Exchange: unsupported partitioning {p.simple_string()}")
    return out


def _range_task(node: ShuffleExchangeExec, buffered: MapOutput, bounds, rt: RunContext, schema,
                metrics) -> MapOutput:
    n = node.output_partitioning.num_partitions
    out = MapOutput(n, schema, rt, metrics)
    bound_exprs = [prepare(o.child, node.child.output) for o in node.output_partitioning.ordering]
    for b in buffered.read_all():
        out.add(b, None if bounds is None else range_pids(node, bounds, b, bound_exprs))
    buffered.release()
    return out


def _timed(metrics, fn, *args):
    t0 = time.perf_counter_ns()
    try:
        return fn(*args)
    finally:
        metrics.add(stage_time_ns=time.perf_counter_ns() - t0)


def materialize(node: ShuffleExchangeExec, rt: RunContext) -> list[PartitionFn]:
    """Run the exchange (and the other members of its coalesce group) once; its partitions."""
    st = rt.exchanges
    hit = st.results.get(node)
    if hit is not None:
        return hit
    group = st.groups.get(node) or _Group([node])
    if not group.preconverted and len(group.members) > 1:
        # imported here: at module level it would close the import cycle
        # runtime.local.exchange -> runtime.local.adaptive -> runtime.local.exchange
        from ember.runtime.local.adaptive import preconvert

        preconvert(node, group, rt)
    with group.lock:
        hit = st.results.get(node)
        if hit is not None:
            return hit
        members = [m for m in group.members if m not in st.results]
        if group.busy:  # re-entered from inside the group's own run: no shared grouping
            members = [node]
        group.busy = True
        try:
            _run_members(members, rt, st)
        finally:
            group.busy = False
    return st.results[node]


def _run_members(members: list[ShuffleExchangeExec], rt: RunContext, st: ExchangeState) -> None:
    finish_members(members, map_members(members, rt), rt)


def map_members(members: list[Any], rt: RunContext) -> list[list[MapOutput]]:
    """Run the map side of ``members`` (one stage); their map outputs, per member.  An exchange
    maps once per run: a ``ReusedExchangeExec`` member, or an exchange mapped before, gets the
    map outputs its exchange already has (or shares the ones this stage computes).

    No lock is held while a stage runs (a task may need an exchange of its own, e.g. below a
    broadcast it builds lazily): the sources' inputs are planned first -- which may map some of
    them, when one is reused below another -- then the sources still unmapped run; should two
    threads map the same exchange at once, the first result recorded is kept and the other
    one released."""
    st = rt.exchanges
    todo: dict[int, ShuffleExchangeExec] = {}  # the distinct sources, in members' order
    for m in members:
        src = _source(m)
        if src not in st.mapped:
            todo.setdefault(id(src), src)
    if todo:
        parts = [rt.execute(s.child) for s in todo.values()]
        pending = [(s, p) for s, p in zip(todo.values(), parts) if s not in st.mapped]
        if pending:
            sources = [s for s, _ in pending]
            outs = _map_stage(sources, [p for _, p in pending], rt)
            with st.lock:
                for src, o in zip(sources, outs):
                    kept = st.mapped.setdefault(src, o)
                    if kept is not o:
                        for x in o:
                            x.release()
    return [st.mapped[_source(m)] for m in members]


def _map_stage(sources: list[ShuffleExchangeExec], parts: list[list[PartitionFn]],
               rt: RunContext) -> list[list[MapOutput]]:
    tasks = []
    owners: list[int] = []
    schemas = [schema_of(m.output) for m in sources]
    for i, m in enumerate(sources):
        metrics = rt.metrics.node(m)
        for j, pf in enumerate(parts[i]):
            tasks.append(lambda m=m, j=j, pf=pf, s=schemas[i], mm=metrics:
                         _timed(mm, _map_task, m, j, pf, rt, s, mm))
            owners.append(i)
    label = ", ".join(str(m.plan_id) for m in sources)
    outs = rt.run_stage(f"exchange {label}", tasks)
    per_source: list[list[MapOutput]] = [[] for _ in sources]
    for i, o in zip(owners, outs):
        per_source[i].append(o)
    return per_source


def finish_members(members: list[Any], per_member: list[list[MapOutput]], rt: RunContext) -> None:
    """Range bounds (range partitioning), then one shared coalescing of ``members``' targets;
    records each member's partitions as materialized.  The map outputs of an exchange are
    finished once (range pass, spill registration, build size), however many members read
    them; each member gets readers of its group's coalesced ranges, typed like its output."""
    st = rt.exchanges
    per_member = [_finish_source(_source(m), outs, rt) for m, outs in zip(members, per_member)]
    by_n: dict[int, list[int]] = {}
    for i, m in enumerate(members):
        by_n.setdefault(m.output_partitioning.num_partitions, []).append(i)
    for n, idxs in by_n.items():
        rows, nbytes = target_totals((o for i in idxs for o in per_member[i]), n)
        ranges = coalesce_ranges(rows, nbytes, rt)
        for i in idxs:
            m = members[i]
            ordered = isinstance(m.output_partitioning, RangePartitioning)
            relabel = isinstance(m, ReusedExchangeExec)
            st.results[m] = [_reader(per_member[i], s, e, schema_of(m.output), rt, ordered,
                                         relabel) for s, e in ranges]


def _finish_source(m: ShuffleExchangeExec, outputs: list[MapOutput], rt: RunContext
                   ) -> list[MapOutput]:
    """The final map outputs of exchange ``m`` (computed once per run): range partitioning
    repartitions the buffered rows by bounds from a sample; the outputs are registered as
    spillable and counted in ``m``'s build size."""
    st = rt.exchanges
    with rt.node_lock(m):
        if m in st.final:
            return st.mapped[m]
        if isinstance(m.output_partitioning, RangePartitioning) and outputs:
            schema = schema_of(m.output)
            bounds = _range_bounds(m, outputs, rt)
            metrics = rt.metrics.node(m)
            outputs = rt.run_stage(
                f"range exchange {m.plan_id}",
                [lambda b=b: _timed(metrics, _range_task, m, b, bounds, rt, schema, metrics)
                 for b in outputs])
        for o in outputs:
            rt.memory.register_spillable(o)
        rt.metrics.node(m).add(build_size=int(sum(int(o.bytes.sum()) for o in outputs)))
        st.mapped[m] = outputs
        st.final.add(m)
        return outputs


def _reader(outputs: list[MapOutput], start: int, end: int, schema: pa.Schema,
            rt: RunContext, ordered: bool = False, relabel: bool = False) -> PartitionFn:
    """Targets ``[start, end)`` of every map output: map output after map output, each one's
    rows of all those targets at once (one slice per chunk); ``ordered`` (range partitioning):
    target after target, so the concatenation keeps the ranges' order; ``relabel``: batches
    are relabelled to ``schema`` (a reused exchange's own column names)."""
    def run() -> Iterator[pa.RecordBatch]:
        def pieces() -> Iterator[pa.RecordBatch]:
            if ordered:
                for p in range(start, end):
                    for o in outputs:
                        yield from o.read(p)
            else:
                for o in outputs:
                    yield from o.read_range(start, end)
        out = rebatch(pieces(), rt.ctx.batch_size, schema)
        return (conform_batch(b, schema) for b in out) if relabel else out

    return run


# ---------------------------------------------------------------------------------------------
# Operators


@operator(ShuffleExchangeExec)
def run_shuffle_exchange(node: ShuffleExchangeExec, rt: RunContext) -> list[PartitionFn]:
    return materialize(node, rt)


@operator(BroadcastExchangeExec)
def run_broadcast_exchange(node: BroadcastExchangeExec, rt: RunContext) -> list[PartitionFn]:
    """A broadcast read as a relation: one partition with all rows (joins use
    ``rt.broadcast``)."""
    value = rt.broadcast(node)
    schema = schema_of(node.output)

    def run() -> Iterator[pa.RecordBatch]:
        yield from rebatch(iter(value.table.to_batches()), rt.ctx.batch_size, schema)

    return [run]


@operator(ReusedExchangeExec)
def run_reused_exchange(node: ReusedExchangeExec, rt: RunContext) -> list[PartitionFn]:
    """A second reader of an exchange: a shuffle's map outputs (computed once) read with the
    coalesced ranges of this reader's own group; a broadcast's rows (materialized once), both
    relabelled to this node's output."""
    if isinstance(node.child, ShuffleExchangeExec):
        return materialize(node, rt)  # type: ignore[arg-type]
    value = rt.broadcast(node)
    schema = schema_of(node.output)

    def run() -> Iterator[pa.RecordBatch]:
        for b in rebatch(iter(value.table.to_batches()), rt.ctx.batch_size, schema):
            yield conform_batch(b, schema)

    return [run]
