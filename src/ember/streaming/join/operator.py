"""The per-partition core of the stream-stream join (Spark's ``StreamingSymmetricHashJoinExec``
``processPartitions``).

One micro-batch of one state partition (both inputs already hash-partitioned on the join keys):

1. open both sides' :class:`SymmetricHashJoinStateManager` at ``store_version`` (= batch id);
2. left pass, then right pass (LeftSemi: right pass first, see below), each over the side's
   new rows (a whole batch at a time): drop late rows (event time ``<= watermarkForLateEvents``,
   counted in ``numRowsDroppedByWatermark``); rows failing the side's pre-join filter are
   emitted NULL-padded if the side is preserved, else dropped, and never stored; the others
   probe the *other* side's state with the post-join filter over all candidate pairs (marking
   matched state rows) and are then stored: left rows always (except LeftSemi rows that
   matched), right rows unless the right side's own eviction predicate would remove them in
   this very batch (kept anyway when unmatched in a RightOuter/FullOuter join, so that eviction
   emits them).  The left pass probes the right state before this batch's right rows are added
   and the right pass sees this batch's left rows, so every new-new pair is produced once, in
   the right pass;
3. outer rows: LeftOuter evicts the left state (key or value predicate) and emits the removed rows
   whose ``matched`` is false padded with NULLs; RightOuter mirrors; FullOuter does left then
   right;
4. cleanup: Inner/LeftSemi evict both sides, LeftOuter the right side, RightOuter the left side;
5. commit both sides (left, then right).

LeftSemi follows Spark 4.3's ``processPartitions`` and ``getJoinedRowsAndRemoveMatched`` (checked
against it batch by batch in ``tests/streaming``): the right pass runs
first; each new right row probes the left state and every left state row it matches is emitted
once and removed at once (counted in ``numRemovedStateRows``); the right rows are stored as
usual (``matched`` = had a match).  Then the left pass probes the right state, which already
holds this batch's right rows: a left row with a match is emitted and not stored, one without
is stored unmatched.  So the left state holds only left rows never matched so far.

Metrics as Spark reports them: ``numUpdatedStateRows`` = rows appended to either side's state;
``numRemovedStateRows`` = rows removed by eviction (the outer joins' evictions in step 3
included) plus left rows removed by the LeftSemi right pass; ``numTotalStateRows`` = rows held
in both sides' keyWithIndexToValue stores after the batch.  Beyond Spark, per side:
``numTotalStateRowsLeft`` / ``numTotalStateRowsRight`` (rows held after the batch) and the TTL
counters above.

State time-to-live (beyond Spark; Flink's ``STATE_TTL`` hint per join input, on Ember's
micro-batches).  ``ember.streaming.join.stateTtl.left`` / ``.right`` (an interval string such as
``'10 minutes'``; unset or 0 = none) bound how long a side's rows stay in the state, in
processing time: a row stored by the batch whose timestamp (``batchTimestampMs`` of the offset
log, the engine's injectable clock; on Spark, ``TimerValues``' processing time) is ``t`` is
removed by the first batch whose timestamp is ``>= t + ttl``, as step 0 of that batch, before
the passes: an expired row never joins again.  Removal is the value walk of
:meth:`SymmetricHashJoinStateManager.remove_expired`; a preserved side (LeftOuter's left,
RightOuter's right, both of FullOuter) emits its expired never-matched rows NULL-padded, exactly
once, as watermark eviction does; any other side drops them.  TTL works with or without
watermarks (without one it is the only bound on the state) and alongside them (a row leaves at
whichever comes first).  Expiry is checked when a batch runs: TTL alone never triggers a
no-data batch.  The rows need their insertion time: with a TTL the value row carries
``insertTimeMs`` (the layout ``ember.streaming.join.stateInsertTimes``, pinned per checkpoint by
the engine: a TTL on a checkpoint started without it is refused).  Counted per side in
``numLeftRowsExpiredByTtl`` / ``numRightRowsExpiredByTtl`` (and in ``numRemovedStateRows``).

State layout: :mod:`ember.streaming.state.join_state` (two stores per side, state format
version 2 = input row + ``matched``; version 1 has no flag and is refused for non-inner joins).
``condition`` is the residual join condition (the conjuncts not used as equi-join keys), split by
:class:`JoinConditionSplitPredicates`.  NULL join keys compare equal in the state (Spark compares
key rows by their bytes); the planner's ``isnotnull`` filters remove them where Spark does.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from ember.conf import (
    STREAM_ALLOW_MULTIPLE_STATEFUL,
    STREAM_JOIN_STATE_INSERT_TIMES,
    STREAM_JOIN_STATE_TTL_LEFT,
    STREAM_JOIN_STATE_TTL_RIGHT,
)
from ember.errors import AnalysisError, InternalError
from ember.execution.kernels.batches import schema_of
from ember.execution.prepare import prepare
from ember.expressions.base import AttributeReference, Expression
from ember.physical.streaming.join_conditions import JoinConditionSplitPredicates
from ember.physical.streaming.state_watermark import (
    JoinStateKeyWatermarkPredicate, event_time_column, state_watermark_predicates, watermark_mask,
)
from ember.plans.logical.join_type import BuildSide, JoinType
from ember.streaming.state.join_state import JoinSideState, SymmetricHashJoinStateManager
from ember.streaming.state.store import StateStoreConf

__all__ = ["StateInfo", "SymmetricHashJoin", "state_ttls_ms"]

@dataclass(frozen=True, slots=True)
class StateInfo:
    checkpoint_location: str   # <checkpoint>/state
    operator_id: int
    store_version: int         # batch N opens version N, commits N+1 (10.8)
    num_partitions: int


def _batch(table: pa.Table | pa.RecordBatch, schema: pa.Schema) -> pa.RecordBatch:
    if isinstance(table, pa.RecordBatch):
        return table
    cols = [c.combine_chunks() if c.num_chunks != 1 else c.chunk(0) for c in table.columns]
    return pa.RecordBatch.from_arrays(cols, schema=schema)


def _true_mask(arr: pa.Array | pa.ChunkedArray, n: int) -> np.ndarray:
    if isinstance(arr, pa.ChunkedArray):
        arr = arr.combine_chunks()
    if isinstance(arr, pa.Scalar):
        return np.full(n, bool(arr.as_py()), dtype=bool)
    return np.asarray(pc.fill_null(arr, False).to_numpy(zero_copy_only=False), dtype=bool)


def _column(arr: pa.Array | pa.ChunkedArray | pa.Scalar, n: int) -> pa.Array:
    if isinstance(arr, pa.Scalar):
        return pa.repeat(arr, n)
    if isinstance(arr, pa.ChunkedArray):
        return arr.combine_chunks()
    return arr


def state_ttls_ms(conf: Any) -> tuple[int | None, int | None]:
    """The (left, right) state time-to-live in ms of ``conf`` (None = none; 0 means none)."""
    out = []
    for entry in (STREAM_JOIN_STATE_TTL_LEFT, STREAM_JOIN_STATE_TTL_RIGHT):
        ms = entry.read(conf)
        out.append(ms if ms else None)
    return out[0], out[1]


class _Side:
    """One side's bound expressions and settings."""

    def __init__(self, name: str, output: Sequence[AttributeReference],
                 keys: Sequence[Expression], pre_filter: Expression | None,
                 predicate) -> None:
        self.name = name
        self.output = tuple(output)
        self.schema = schema_of(self.output)
        self.keys = [prepare(k, self.output) for k in keys]
        self.key_types = [k.data_type.to_arrow() for k in keys]
        self.pre_filter = None if pre_filter is None else prepare(pre_filter, self.output)
        self.event_time = event_time_column(self.output)
        self.predicate = predicate  # this side's eviction predicate (or None)
        self.ttl_ms: int | None = None  # this side's state time-to-live (or None)

    def key_table(self, batch: pa.RecordBatch) -> pa.Table:
        n = batch.num_rows
        cols = [_column(k.eval(batch), n) for k in self.keys]
        cols = [c if c.type == t else c.cast(t) for c, t in zip(cols, self.key_types)]
        return pa.Table.from_arrays(cols, names=[f"field{i}" for i in range(len(cols))])


class SymmetricHashJoin:
    """Stream-stream symmetric hash join of one micro-batch (see the module docstring).

    A new instance per micro-batch (the watermarks and the state version change); its
    :meth:`process_partition` may run for several partitions concurrently.
    """

    def __init__(self, left_keys: Sequence[Expression], right_keys: Sequence[Expression],
                 join_type: JoinType, condition: Expression | None,
                 left_output: Sequence[AttributeReference],
                 right_output: Sequence[AttributeReference], state_info: StateInfo,
                 watermark_for_late_events_ms: int | None,
                 watermark_for_eviction_ms: int | None, conf: Any,
                 state_format_version: int = 2, store_factory: Any = None,
                 batch_timestamp_ms: int | None = None) -> None:
        if not join_type.supports_stream_stream:
            raise AnalysisError(f"{join_type} join is not supported between two streams",
                                error_class="STREAMING_JOIN_UNSUPPORTED")
        if len(left_keys) != len(right_keys) or not left_keys:
            raise InternalError("SymmetricHashJoin needs equally many (>= 1) keys per side")
        self.join_type = JoinType.INNER if join_type.is_inner_like else join_type
        if state_format_version == 1 and self.join_type is not JoinType.INNER:
            raise AnalysisError(
                f"Join state format version 1 does not support {self.join_type} joins "
                "(SPARK-26154); use spark.sql.streaming.join.stateFormatVersion=2.")
        self.state_format_version = state_format_version
        #: opens the state stores (None: ``get_state_store``, the checkpoint's own providers)
        self.store_factory = store_factory
        self.left_keys = tuple(left_keys)
        self.right_keys = tuple(right_keys)
        self.condition = JoinConditionSplitPredicates.of(condition, left_output, right_output)
        self.state_info = state_info
        self.watermark_for_late_events_ms = watermark_for_late_events_ms
        self.watermark_for_eviction_ms = watermark_for_eviction_ms
        self.store_conf = StateStoreConf.from_conf(conf)
        # Spark checks with allowMultipleEventTimeColumns = !statefulOperator.allowMultiple.
        multiple_event_times = not STREAM_ALLOW_MULTIPLE_STATEFUL.read(conf)
        lpred, rpred = state_watermark_predicates(
            left_output, right_output, left_keys, right_keys, self.condition.full,
            watermark_for_eviction_ms, multiple_event_times)
        self.left = _Side("left", left_output, left_keys, self.condition.left_side_only, lpred)
        self.right = _Side("right", right_output, right_keys, self.condition.right_side_only,
                           rpred)
        self.left.ttl_ms, self.right.ttl_ms = state_ttls_ms(conf)
        has_ttl = self.left.ttl_ms is not None or self.right.ttl_ms is not None
        pinned = STREAM_JOIN_STATE_INSERT_TIMES.read(conf)
        self.insert_times = has_ttl if pinned is None else pinned
        if has_ttl and not self.insert_times:
            raise AnalysisError(
                "The state time-to-live (ember.streaming.join.stateTtl.left / .right) needs "
                "join state that records when each row was stored, and this query's checkpoint "
                "was started without a state TTL, whose join state does not.  Start the query "
                "with a new checkpoint location to use a state TTL.",
                error_class="EMBER_STREAMING_STATE_TTL_NEEDS_NEW_CHECKPOINT")
        if has_ttl and batch_timestamp_ms is None:
            raise InternalError("SymmetricHashJoin: a state TTL needs the batch's timestamp")
        #: the batch's processing time (ms): insertion time of new rows, the TTL's "now"
        self.batch_timestamp_ms = batch_timestamp_ms
        joined = tuple(left_output) + tuple(right_output)
        self.joined_schema = schema_of(joined)
        self.post_filter = (None if self.condition.both_sides is None
                            else prepare(self.condition.both_sides, joined))
        self.output_schema = (self.joined_schema if self.join_type.outputs_right
                              else self.left.schema)
        self._lock = threading.Lock()
        self._metrics: dict[str, int] = {
            "numOutputRows": 0, "numUpdatedStateRows": 0, "numRemovedStateRows": 0,
            "numTotalStateRows": 0, "numTotalStateRowsLeft": 0, "numTotalStateRowsRight": 0,
            "numRowsDroppedByWatermark": 0, "stateMemory": 0, "skippedNullValueCount": 0,
            "allUpdatesTimeMs": 0, "allRemovalsTimeMs": 0, "commitTimeMs": 0,
            "numStateStoreInstances": 4,
            "numLeftRowsExpiredByTtl": 0, "numRightRowsExpiredByTtl": 0,
        }

    # -- public -----------------------------------------------------------------------------
    def state_watermark_ms(self) -> tuple[int | None, int | None]:
        """(left, right) state watermarks for the output watermark (Spark's
        ``getStateWatermark``)."""
        return (None if self.left.predicate is None else self.left.predicate.watermark_ms,
                None if self.right.predicate is None else self.right.predicate.watermark_ms)

    def metrics(self) -> dict[str, int]:
        with self._lock:
            m = dict(self._metrics)
        m["numDroppedLateRows"] = m["numRowsDroppedByWatermark"]
        return m

    def describe(self) -> str:
        """Spark's ``state cleanup [ left ..., right ... ]`` text."""
        def one(side: _Side) -> str:
            p = side.predicate
            if p is None:
                return f"{side.name} = null"
            kind = "key" if isinstance(p, JoinStateKeyWatermarkPredicate) else "value"
            return f"{side.name} {kind} predicate: {p}"
        return f"state cleanup [ {one(self.left)}, {one(self.right)} ]"

    def process_partition(self, partition_id: int, left: pa.Table, right: pa.Table) -> pa.Table:
        """This partition's new rows of each side; returns the output rows and commits both
        sides' state (see the module docstring)."""
        start = time.perf_counter()
        info = self.state_info
        mgr_l = SymmetricHashJoinStateManager(
            "left", self.left.schema, self.left.key_types, info.checkpoint_location,
            info.operator_id, partition_id, info.store_version, self.store_conf,
            self.state_format_version, self.store_factory, self.insert_times)
        mgr_r = SymmetricHashJoinStateManager(
            "right", self.right.schema, self.right.key_types, info.checkpoint_location,
            info.operator_id, partition_id, info.store_version, self.store_conf,
            self.state_format_version, self.store_factory, self.insert_times)
        counts = {"updated": 0, "removed": 0, "dropped": 0, "ttl_left": 0, "ttl_right": 0}
        try:
            out: list[pa.Table] = []
            # 0. the state TTL: expired rows leave before the passes (module docstring)
            for side, mgr in ((self.left, mgr_l), (self.right, mgr_r)):
                if side.ttl_ms is None:
                    continue
                assert self.batch_timestamp_ms is not None
                expired = mgr.remove_expired(self.batch_timestamp_ms, side.ttl_ms)
                counts["removed"] += expired.num_rows
                counts["ttl_" + side.name] += expired.num_rows
                is_left = side is self.left
                if self.join_type.pads_unmatched(BuildSide.LEFT if is_left else BuildSide.RIGHT):
                    out.append(self._outer_rows(expired, left_side=is_left))
            if not self.join_type.outputs_right:
                out += self._store_and_join(self.right, mgr_r, mgr_l, right, counts)
                out += self._store_and_join(self.left, mgr_l, mgr_r, left, counts)
            else:
                out += self._store_and_join(self.left, mgr_l, mgr_r, left, counts)
                out += self._store_and_join(self.right, mgr_r, mgr_l, right, counts)
            inner_done = time.perf_counter()
            jt = self.join_type
            # evicted rows of the padded (preserved) sides come out NULL-padded; then the other
            # sides' old state is dropped, left before right
            sides = ((self.left, mgr_l, BuildSide.LEFT), (self.right, mgr_r, BuildSide.RIGHT))
            for side, mgr, where in sides:
                if jt.pads_unmatched(where):
                    removed = self._remove_old_state(side, mgr)
                    counts["removed"] += removed.num_rows
                    out.append(self._outer_rows(removed, left_side=where is BuildSide.LEFT))
            for side, mgr, where in sides:
                if not jt.pads_unmatched(where):
                    counts["removed"] += self._remove_old_state(side, mgr).num_rows
            removal_done = time.perf_counter()
            mgr_l.commit()
            mgr_r.commit()
        except BaseException:
            mgr_l.abort()
            mgr_r.abort()
            raise
        end = time.perf_counter()
        result = pa.concat_tables([t for t in out if t.num_rows] or
                                  [self.output_schema.empty_table()])
        ml, mr = mgr_l.metrics(), mgr_r.metrics()
        with self._lock:
            m = self._metrics
            m["numOutputRows"] += result.num_rows
            m["numUpdatedStateRows"] += counts["updated"]
            m["numRemovedStateRows"] += counts["removed"]
            m["numRowsDroppedByWatermark"] += counts["dropped"]
            m["numLeftRowsExpiredByTtl"] += counts["ttl_left"]
            m["numRightRowsExpiredByTtl"] += counts["ttl_right"]
            m["numTotalStateRowsLeft"] += ml["numKeys"]
            m["numTotalStateRowsRight"] += mr["numKeys"]
            m["numTotalStateRows"] += ml["numKeys"] + mr["numKeys"]
            m["stateMemory"] += ml["memoryUsedBytes"] + mr["memoryUsedBytes"]
            m["skippedNullValueCount"] += (ml["skippedNullValueCount"]
                                           + mr["skippedNullValueCount"])
            m["allUpdatesTimeMs"] += int((end - start) * 1000)
            m["allRemovalsTimeMs"] += int((removal_done - inner_done) * 1000)
            m["commitTimeMs"] += int((end - removal_done) * 1000)
        return result

    # -- the passes -------------------------------------------------------------------------
    def _store_and_join(self, side: _Side, mine: SymmetricHashJoinStateManager,
                        other: SymmetricHashJoinStateManager, rows: pa.Table,
                        counts: dict[str, int]) -> list[pa.Table]:
        is_left = side is self.left
        jt = self.join_type
        if rows.schema != side.schema:  # columns are positional (side.output's order)
            rows = rows.rename_columns(side.schema.names).cast(side.schema)
        batch = _batch(rows, side.schema)
        out: list[pa.Table] = []
        # 1. late rows
        if side.event_time is not None and self.watermark_for_late_events_ms is not None \
                and batch.num_rows:
            late = watermark_mask(batch.column(side.event_time),
                                  self.watermark_for_late_events_ms)
            if late.any():
                counts["dropped"] += int(late.sum())
                batch = batch.filter(pa.array(~late))
        n = batch.num_rows
        if not n:
            return out
        # 2. pre-join filter
        if side.pre_filter is not None:
            ok = _true_mask(side.pre_filter.eval(batch), n)
            if not ok.all():
                failed = batch.filter(pa.array(~ok))
                if jt.pads_unmatched(BuildSide.LEFT if is_left else BuildSide.RIGHT):
                    out.append(self._padded(failed, left_side=is_left))
                batch = batch.filter(pa.array(ok))
                n = batch.num_rows
                if not n:
                    return out
        keys = side.key_table(batch)

        # 3. probe the other side's state with the post-join filter over all candidate pairs
        def joined(probe: np.ndarray, state: JoinSideState) -> pa.RecordBatch:
            mine_rows = batch.take(pa.array(probe))
            cols = (list(mine_rows.columns) + _cols(state.values) if is_left
                    else _cols(state.values) + list(mine_rows.columns))
            return pa.RecordBatch.from_arrays(cols, schema=self.joined_schema)

        def predicate(probe: np.ndarray, state: JoinSideState) -> np.ndarray:
            if self.post_filter is None:
                return np.ones(len(probe), dtype=bool)
            return _true_mask(self.post_filter.eval(joined(probe, state)), len(probe))

        semi = not jt.outputs_right  # LeftSemi, the one left-existence join between streams
        if semi and not is_left:
            # Spark 4.3: the matched left state rows are emitted and removed (module docstring).
            probe, hits = other.get_joined_rows_and_remove_matched(keys, predicate)
            counts["removed"] += hits.num_rows
        else:
            probe, hits = other.get_joined_rows(keys, predicate)
        has_match = np.bincount(probe, minlength=n).astype(bool) if len(probe) else \
            np.zeros(n, dtype=bool)
        # 4. emit
        if semi:
            if is_left:
                if has_match.any():
                    out.append(pa.Table.from_batches([batch.filter(pa.array(has_match))]))
            elif hits.num_rows:
                out.append(pa.Table.from_arrays(_cols(hits.values), schema=self.left.schema))
        elif len(probe):
            out.append(pa.Table.from_batches([joined(probe, hits)]))
        # 5. store
        if is_left:
            store = ~has_match if semi else np.ones(n, dtype=bool)
        else:
            evicting = np.zeros(n, dtype=bool)
            p = side.predicate
            if p is not None:
                if isinstance(p, JoinStateKeyWatermarkPredicate):
                    evicting = p.evaluate(keys)
                else:
                    evicting = p.evaluate(pa.Table.from_batches([batch]))
            store = ~evicting
            if jt.pads_unmatched(BuildSide.RIGHT):
                store |= ~has_match
        if store.any():
            sel = pa.array(np.flatnonzero(store))
            mine.append(keys.take(sel), pa.Table.from_batches([batch]).take(sel),
                        has_match[store], self.batch_timestamp_ms)
            counts["updated"] += int(store.sum())
        return out

    def _remove_old_state(self, side: _Side, mgr: SymmetricHashJoinStateManager
                          ) -> JoinSideState:
        p = side.predicate
        if p is None:
            return mgr._empty_state()
        if isinstance(p, JoinStateKeyWatermarkPredicate):
            return mgr.remove_by_key_condition(p.evaluate)
        return mgr.remove_by_value_condition(p.evaluate)

    def _outer_rows(self, removed: JoinSideState, left_side: bool) -> pa.Table:
        unmatched = np.flatnonzero(~removed.matched)
        rows = removed.values.take(pa.array(unmatched))
        if not rows.num_rows:
            return self.output_schema.empty_table()
        return self._padded(_batch(rows, rows.schema), left_side)

    def _padded(self, batch: pa.RecordBatch, left_side: bool) -> pa.Table:
        """``batch`` (rows of one side) with NULLs for the other side's columns."""
        n = batch.num_rows
        other = self.right.schema if left_side else self.left.schema
        nulls = [pa.nulls(n, f.type) for f in other]
        cols = list(batch.columns) + nulls if left_side else nulls + list(batch.columns)
        return pa.Table.from_arrays(cols, schema=self.joined_schema)


def _cols(t: pa.Table) -> list[pa.Array]:
    return [c.combine_chunks() if c.num_chunks != 1 else c.chunk(0) for c in t.columns]
