"""The state of one side of a stream-stream join in one partition (Spark's
``SymmetricHashJoinStateManager``).

Logically a multimap ``key -> [(row, matched)]``, stored in two versioned stores named
``<side>-keyToNumValues`` and ``<side>-keyWithIndexToValue``:

- keyToNumValues: key row (``field0 .. fieldK``, typed like the join keys) -> ``value``: the
  number of values (long);
- keyWithIndexToValue: key row + ``index`` (long) -> the input row (every column of the side) and,
  from state format version 2 on, ``matched`` (boolean).

Spark applies the operations one input row at a time; here each takes a whole batch and issues a
fixed number of batched store calls, with the same final state (the order of a key's values
aside, in the one case :meth:`get_joined_rows_and_remove_matched` describes):

- :meth:`append` numbers a batch's rows within each key with a group-by cumcount after the key's
  current count, then writes both stores once;
- :meth:`get_joined_rows` looks all probe keys up at once, expands every probe row to the stored
  values of its key, lets the caller evaluate the post-join filter over all pairs in one batch,
  and rewrites ``matched = true`` for the stored values that matched for the first time;
- :meth:`get_joined_rows_and_remove_matched` (Spark 4.3, the right pass of a left semi join) is
  the same probe, but each matching stored value is consumed by the first probe row (in input
  order) that matches it and removed from the state instead of being flagged;
- :meth:`remove_by_key_condition` deletes every value of the keys satisfying a predicate;
- :meth:`remove_by_value_condition` deletes the values satisfying a predicate and fills each hole
  by moving the value at the key's last index into it (Spark's walk: the ``h``-th lowest hole
  below the new count receives the ``h``-th highest surviving index at or above it), so the
  indices stay dense and the layout is Spark's;
- :meth:`remove_expired` (beyond Spark: the per-side state time-to-live) deletes the values
  written ``ttl`` or more milliseconds before the batch's processing time, with the same walk.

The removals return the removed rows with their ``matched`` flags (the outer join emits the
unmatched ones).  Values missing from keyWithIndexToValue fail the query unless
``spark.sql.streaming.stateStore.skipNullsForStreamStreamJoins.enabled`` is set, in which case
they are skipped and counted (``skippedNullValueCount``).

Insertion times (``insert_times=True``, Ember's layout for the state TTL): keyWithIndexToValue's
value gets one more trailing column, ``insertTimeMs`` (long), the processing time (the
micro-batch's timestamp) of the batch that appended the row.  Marking a value matched or moving
it into a hole keeps its time.  The layout is a property of the checkpoint (the store codecs are
positional): the micro-batch engine pins it in the offset log at the first batch
(``ember.streaming.join.stateInsertTimes``), so checkpoints written without it keep loading as
they are.  A NULL time (a value written without one, e.g. Spark-runtime state from before a
TTL was set) never expires.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa

from ember.errors import ExecutionError, InternalError
from ember.streaming.state.rows import RowCodec
from ember.streaming.state.store import (
    StateStore, StateStoreConf, StateStoreId, empty_table, get_state_store,
)

__all__ = ["SymmetricHashJoinStateManager", "JoinSideState", "state_store_names",
           "key_schema_for", "INSERT_TIME_FIELD"]

#: the trailing value column of the insertion-time layout (the state TTL)
INSERT_TIME_FIELD = "insertTimeMs"


def state_store_names(side: str) -> tuple[str, str]:
    """``(<side>-keyToNumValues, <side>-keyWithIndexToValue)`` for ``side`` 'left' / 'right'."""
    return f"{side}-keyToNumValues", f"{side}-keyWithIndexToValue"


def key_schema_for(key_types: list[pa.DataType]) -> pa.Schema:
    """Spark's key row schema: ``field0 .. fieldK``."""
    return pa.schema([pa.field(f"field{i}", t) for i, t in enumerate(key_types)])


@dataclass(frozen=True, slots=True)
class JoinSideState:
    """Rows taken out of (or read from) one side's state: per row its key, its index, the
    stored input row and its ``matched`` flag."""

    keys: pa.Table
    index: np.ndarray
    values: pa.Table
    matched: np.ndarray
    #: insertion time per row (ms; -1 = unknown), None when the layout has no times
    insert_ms: np.ndarray | None = None

    @property
    def num_rows(self) -> int:
        return self.values.num_rows


@dataclass(frozen=True, slots=True)
class _Probe:
    """A batch of probe keys against one side's state: the distinct keys with their value
    counts, every stored value of those keys (``owner`` = the key of each, ``found`` false
    where missing) and the pairs ``(probe[j], entry[j])`` of probe row and present value."""

    keys: pa.Table
    counts: np.ndarray
    entries: JoinSideState
    owner: np.ndarray
    found: np.ndarray
    probe: np.ndarray
    entry: np.ndarray


def _factorize(bins: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``(codes, first_row_of_each_code)`` of the byte keys ``bins`` (codes in first-seen
    order)."""
    codes, uniques = pd.factorize(bins)
    codes = codes.astype(np.int64, copy=False)
    first = np.full(len(uniques), -1, dtype=np.int64)
    # The first occurrence of each code: reversed assignment keeps the smallest row index.
    first[codes[::-1]] = np.arange(len(codes) - 1, -1, -1, dtype=np.int64)
    return codes, first


class SymmetricHashJoinStateManager:
    """One side's join state in one partition, opened at ``version`` (see the module docstring).

    ``input_schema`` is the side's row (its output attributes); ``key_types`` the join keys'
    Arrow types.
    """

    def __init__(self, side: str, input_schema: pa.Schema, key_types: list[pa.DataType],
                 checkpoint_location: str, operator_id: int, partition_id: int, version: int,
                 store_conf: StateStoreConf, state_format_version: int = 2,
                 store_factory: Any = None, insert_times: bool = False) -> None:
        # ``store_factory`` (``get_state_store``'s signature) opens the two stores elsewhere:
        # the Spark runtime keeps them in Spark's state (ember.streaming.spark.worker).
        if side not in ("left", "right"):
            raise InternalError(f"SymmetricHashJoinStateManager: bad side {side!r}")
        if state_format_version not in (1, 2):
            raise InternalError(f"Unsupported join state format version {state_format_version}")
        self.side = side
        self.input_schema = input_schema
        self.format_version = state_format_version
        self.key_schema = key_schema_for(key_types)
        self.key_index_schema = pa.schema(list(self.key_schema) + [pa.field("index", pa.int64())])
        fields = list(input_schema)
        if state_format_version == 2:
            fields.append(pa.field("matched", pa.bool_()))
        self.insert_times = insert_times
        if insert_times:
            fields.append(pa.field(INSERT_TIME_FIELD, pa.int64()))
        self.value_schema = pa.schema(fields)
        self.count_schema = pa.schema([pa.field("value", pa.int64())])
        self.store_conf = store_conf
        self.skip_nulls = store_conf.skip_nulls_for_stream_stream_joins
        self.skipped_null_values = 0
        self.key_codec = RowCodec(self.key_schema)
        n2v, k2v = state_store_names(side)
        open_store = get_state_store if store_factory is None else store_factory
        self.key_to_num_values: StateStore = open_store(
            StateStoreId(checkpoint_location, operator_id, partition_id, n2v),
            self.key_schema, self.count_schema, version, store_conf)
        self.key_with_index_to_value: StateStore = open_store(
            StateStoreId(checkpoint_location, operator_id, partition_id, k2v),
            self.key_index_schema, self.value_schema, version, store_conf)

    # -- helpers ----------------------------------------------------------------------------
    def _keys(self, keys: pa.Table) -> pa.Table:
        """``keys`` relabelled as ``field0 .. fieldK``."""
        return pa.Table.from_arrays(list(keys.columns), schema=self.key_schema) \
            if keys.schema != self.key_schema else keys

    def _bins(self, keys: pa.Table) -> np.ndarray:
        return self.key_codec.encode(keys.columns, keys.num_rows, canonical=True).to_numpy(
            zero_copy_only=False)

    def _with_index(self, keys: pa.Table, index: np.ndarray) -> pa.Table:
        return pa.Table.from_arrays(list(keys.columns) + [pa.array(index, pa.int64())],
                                    schema=self.key_index_schema)

    def _value_rows(self, rows: pa.Table, matched: np.ndarray,
                    insert_ms: np.ndarray | int | None) -> pa.Table:
        cols = list(rows.columns)
        if self.format_version == 2:
            cols.append(pa.array(matched, pa.bool_()))
        if self.insert_times:
            if insert_ms is None:
                cols.append(pa.nulls(rows.num_rows, pa.int64()))
            elif isinstance(insert_ms, np.ndarray):
                cols.append(pa.array(insert_ms, pa.int64(), mask=insert_ms < 0))
            else:
                cols.append(pa.array(np.full(rows.num_rows, insert_ms, np.int64)))
        return pa.Table.from_arrays(cols, schema=self.value_schema)

    def _insert_ms(self, values: pa.Table, found: np.ndarray) -> np.ndarray | None:
        if not self.insert_times:
            return None
        t = values.column(INSERT_TIME_FIELD).fill_null(-1).to_numpy(zero_copy_only=False)
        return np.where(found, np.asarray(t, dtype=np.int64), -1)

    def _counts(self, keys: pa.Table) -> np.ndarray:
        found, vals = self.key_to_num_values.get(keys)
        counts = vals.column(0).to_numpy(zero_copy_only=False)
        return np.where(found, np.nan_to_num(counts.astype(np.float64)), 0).astype(np.int64)

    def _entries(self, keys: pa.Table, counts: np.ndarray
                 ) -> tuple[JoinSideState, np.ndarray, np.ndarray]:
        """``(entries, owner, found)``: every stored value of the distinct ``keys`` (with their
        ``counts``) in key then index order, ``owner[j]`` the key of entry ``j``, ``found`` false
        where the value is missing."""
        total = int(counts.sum())
        owner = np.repeat(np.arange(len(counts), dtype=np.int64), counts)
        starts = np.cumsum(counts) - counts
        index = np.arange(total, dtype=np.int64) - np.repeat(starts, counts)
        ekeys = keys.take(owner) if total else empty_table(self.key_schema)
        found, values = self.key_with_index_to_value.get(self._with_index(ekeys, index))
        if not found.all():
            if not self.skip_nulls:
                bad = int(np.flatnonzero(~found)[0])
                raise ExecutionError(
                    f"The {self.side} side of a stream-stream join misses the state value at "
                    f"index {int(index[bad])} of key {ekeys.slice(bad, 1).to_pylist()[0]}; set "
                    "spark.sql.streaming.stateStore.skipNullsForStreamStreamJoins.enabled to "
                    "skip missing values.")
            self.skipped_null_values += int((~found).sum())
        matched = self._matched(values)
        rows = values.select(range(len(self.input_schema)))
        return (JoinSideState(ekeys, index, rows, np.where(found, matched, False),
                              self._insert_ms(values, found)), owner, found)

    def _matched(self, values: pa.Table) -> np.ndarray:
        if self.format_version == 1:
            return np.zeros(values.num_rows, dtype=bool)
        m = values.column(len(self.input_schema))
        return np.asarray(m.fill_null(False).to_numpy(zero_copy_only=False), dtype=bool)

    # -- operations -------------------------------------------------------------------------
    def append(self, keys: pa.Table, rows: pa.Table, matched: np.ndarray,
               insert_ms: int | None = None) -> None:
        """Append ``rows`` (with their join ``keys`` and ``matched`` flags), each after the
        values already stored for its key, in batch order; ``insert_ms`` is the batch's
        processing time (kept when the layout has insertion times)."""
        n = rows.num_rows
        if not n:
            return
        keys = self._keys(keys)
        codes, first = _factorize(self._bins(keys))
        uniq = keys.take(first)
        current = self._counts(uniq)
        group_size = np.bincount(codes, minlength=len(first)).astype(np.int64)
        order = np.argsort(codes, kind="stable")
        group_start = np.cumsum(group_size) - group_size
        cumcount = np.empty(n, dtype=np.int64)
        cumcount[order] = np.arange(n, dtype=np.int64) - group_start[codes[order]]
        index = current[codes] + cumcount
        self.key_with_index_to_value.put(self._with_index(keys, index),
                                         self._value_rows(rows, np.asarray(matched, bool),
                                                          insert_ms))
        self.key_to_num_values.put(uniq, pa.table({"value": pa.array(current + group_size)}))

    def _probe(self, keys: pa.Table) -> _Probe:
        """Every stored value of the distinct ``keys`` and the (probe row, value) pairs, probe
        rows in input order, each row's values in index order (missing values are skipped)."""
        keys = self._keys(keys)
        n = keys.num_rows
        codes, first = _factorize(self._bins(keys))
        uniq = keys.take(first)
        counts = self._counts(uniq)
        entries, owner, found = self._entries(uniq, counts)
        present = np.flatnonzero(found)  # entries are in key then index order
        per_key = np.bincount(owner[present], minlength=len(first)).astype(np.int64)
        starts = np.cumsum(per_key) - per_key
        per_row = per_key[codes]
        probe = np.repeat(np.arange(n, dtype=np.int64), per_row)
        offs = np.cumsum(per_row) - per_row
        within = np.arange(len(probe), dtype=np.int64) - np.repeat(offs, per_row)
        entry = present[np.repeat(starts[codes], per_row) + within]
        return _Probe(uniq, counts, entries, owner, found, probe, entry)

    def get(self, keys: pa.Table) -> tuple[np.ndarray, JoinSideState]:
        """``(probe_row, state)``: for each row of ``keys`` every stored value of its key;
        ``probe_row[j]`` is the row of ``keys`` that pair ``j`` belongs to."""
        if not keys.num_rows:
            return np.zeros(0, np.int64), self._empty_state()
        p = self._probe(keys)
        return p.probe, _take_state(p.entries, p.entry)

    def get_joined_rows(self, keys: pa.Table, predicate) -> tuple[np.ndarray, JoinSideState]:
        """The pairs ``(probe_row, stored value)`` of ``keys`` whose joined row satisfies
        ``predicate(probe_row, state) -> bool mask`` (evaluated over all candidate pairs at
        once), marking the matched stored values ``matched = true``.  The returned values
        carry their flags as read, before marking.  (State format 2 never skips already
        matched values here: Spark 4.3 passes ``excludeRowsAlreadyMatched`` only for its
        format 4.)"""
        if not keys.num_rows:
            return np.zeros(0, np.int64), self._empty_state()
        p = self._probe(keys)
        cand = _take_state(p.entries, p.entry)
        ok = np.asarray(predicate(p.probe, cand), dtype=bool) if len(p.probe) \
            else np.zeros(0, bool)
        sel = np.flatnonzero(ok)
        hits = _take_state(cand, sel)
        if self.format_version == 2 and len(sel):
            fresh = np.unique(p.entry[sel][~hits.matched])
            if len(fresh):
                upd = _take_state(p.entries, fresh)
                self.key_with_index_to_value.put(
                    self._with_index(upd.keys, upd.index),
                    self._value_rows(upd.values, np.ones(upd.num_rows, dtype=bool),
                                     upd.insert_ms))
        return p.probe[sel], hits

    def get_joined_rows_and_remove_matched(self, keys: pa.Table, predicate
                                           ) -> tuple[np.ndarray, JoinSideState]:
        """Spark 4.3's ``getJoinedRowsAndRemoveMatched`` (the right pass of a left semi join)
        for a batch of probe rows: every stored value whose joined row with a probe row
        satisfies ``predicate`` is returned once, paired with the first such probe row in
        input order, and removed from the state; values already flagged ``matched`` (state
        written by the marking variant) are removed without being returned once any probe
        row of their key comes by.  Returns ``(probe_row, removed values)``.

        Spark walks the values of a key once per probe row, moving the key's last value into
        each hole; here one vectorized walk removes the union, so the removed set, the counts
        and the metrics are Spark's, while the order of the surviving values inside a key can
        differ from Spark's when several probe rows of one key remove values (the order only
        changes the order of later output rows)."""
        if not keys.num_rows:
            return np.zeros(0, np.int64), self._empty_state()
        p = self._probe(keys)
        if not len(p.probe):
            return np.zeros(0, np.int64), self._empty_state()
        already = p.entries.matched[p.entry]
        live = np.flatnonzero(~already)
        ok = np.zeros(0, bool)
        if len(live):
            ok = np.asarray(predicate(p.probe[live], _take_state(p.entries, p.entry[live])),
                            dtype=bool)
        sel = live[ok]
        # Pairs are ordered by probe row: the first pair of each value is its consumer.
        _, first = np.unique(p.entry[sel], return_index=True)
        sel = sel[np.sort(first)]
        rm = np.zeros(p.entries.num_rows, dtype=bool)
        rm[p.entry[sel]] = True
        rm[p.entry[already]] = True
        if rm.any():
            self._compact(p.keys, p.counts, p.entries, p.owner, p.found, rm)
        return p.probe[sel], _take_state(p.entries, p.entry[sel])

    def remove_by_key_condition(self, predicate) -> JoinSideState:
        """Remove every value of the keys for which ``predicate(keys table) -> bool mask``
        holds; returns the removed rows."""
        keys, counts_t = self.key_to_num_values.scan()
        if not keys.num_rows:
            return self._empty_state()
        sel = np.flatnonzero(np.asarray(predicate(keys), dtype=bool))
        if not len(sel):
            return self._empty_state()
        keys = keys.take(sel)
        counts = counts_t.column(0).to_numpy(zero_copy_only=False)[sel].astype(np.int64)
        entries, owner, found = self._entries(keys, counts)
        self.key_with_index_to_value.remove(self._with_index(entries.keys, entries.index))
        self.key_to_num_values.remove(keys)
        return _take_state(entries, np.flatnonzero(found)) if not found.all() else entries

    def remove_by_value_condition(self, predicate) -> JoinSideState:
        """Remove the values for which ``predicate(values table) -> bool mask`` holds, filling
        holes from the end of each key (see the module docstring); returns the removed rows."""
        return self._remove_entries(lambda e: np.asarray(predicate(e.values), dtype=bool))

    def remove_expired(self, now_ms: int, ttl_ms: int) -> JoinSideState:
        """The state TTL: remove the values written at or before ``now_ms - ttl_ms`` (one
        vectorized comparison over every value's insertion time; values without a time stay),
        filling holes as :meth:`remove_by_value_condition` does; returns the removed rows."""
        if not self.insert_times:
            raise InternalError("SymmetricHashJoinStateManager: the state TTL needs the "
                                "insertion-time layout")
        deadline = int(now_ms) - int(ttl_ms)

        def expired(e: JoinSideState) -> np.ndarray:
            assert e.insert_ms is not None
            return (e.insert_ms >= 0) & (e.insert_ms <= deadline)

        return self._remove_entries(expired)

    def _remove_entries(self, mask) -> JoinSideState:
        """Remove the stored values for which ``mask(entries) -> bool array`` holds (every
        value of every key, in key then index order) and compact; returns the removed rows."""
        keys, counts_t = self.key_to_num_values.scan()
        if not keys.num_rows:
            return self._empty_state()
        counts = counts_t.column(0).to_numpy(zero_copy_only=False).astype(np.int64)
        entries, owner, found = self._entries(keys, counts)
        rm = np.zeros(entries.num_rows, dtype=bool)
        if entries.num_rows:
            rm = np.asarray(mask(entries), dtype=bool)
        rm |= ~found  # missing values (only with skipNulls) simply disappear
        if not rm.any():
            return self._empty_state()
        self._compact(keys, counts, entries, owner, found, rm)
        return _take_state(entries, np.flatnonzero(rm & found))

    def _compact(self, keys: pa.Table, counts: np.ndarray, entries: JoinSideState,
                 owner: np.ndarray, found: np.ndarray, rm: np.ndarray) -> None:
        """Delete the entries ``rm`` (of the keys ``keys`` holding ``counts`` values, entries in
        key then index order), each hole below a key's new count taking the value at the
        key's highest surviving index (Spark's walk); missing values of a key that loses
        values disappear with them."""
        touched = np.bincount(owner, weights=rm, minlength=len(counts)) > 0
        rm = rm | (~found & touched[owner])
        removed_per_key = np.bincount(owner, weights=rm, minlength=len(counts)).astype(np.int64)
        new_count = counts - removed_per_key
        idx = entries.index
        limit = new_count[owner]
        holes = np.flatnonzero(rm & (idx < limit))
        movers = np.flatnonzero(~rm & (idx >= limit))
        # Per key, the h-th lowest hole takes the h-th highest surviving index above the limit.
        holes = holes[np.lexsort((idx[holes], owner[holes]))]
        movers = movers[np.lexsort((-idx[movers], owner[movers]))]
        if len(holes) != len(movers) or not np.array_equal(owner[holes], owner[movers]):
            raise InternalError("SymmetricHashJoinStateManager: inconsistent hole filling")
        if len(movers):
            moved = _take_state(entries, movers)
            self.key_with_index_to_value.put(
                self._with_index(moved.keys, idx[holes]),
                self._value_rows(moved.values, moved.matched, moved.insert_ms))
        tail = np.flatnonzero(idx >= limit)
        self.key_with_index_to_value.remove(
            self._with_index(entries.keys.take(pa.array(tail, pa.int64())), idx[tail]))
        changed = np.flatnonzero(removed_per_key > 0)
        gone = changed[new_count[changed] == 0]
        kept = changed[new_count[changed] > 0]
        if len(gone):
            self.key_to_num_values.remove(keys.take(pa.array(gone, pa.int64())))
        if len(kept):
            self.key_to_num_values.put(keys.take(pa.array(kept, pa.int64())),
                                       pa.table({"value": pa.array(new_count[kept])}))

    def all_rows(self) -> JoinSideState:
        """Every stored value (tests and debugging)."""
        keys, counts_t = self.key_to_num_values.scan()
        counts = counts_t.column(0).to_numpy(zero_copy_only=False).astype(np.int64) \
            if keys.num_rows else np.zeros(0, np.int64)
        entries, _owner, found = self._entries(keys, counts)
        return entries if found.all() else _take_state(entries, np.flatnonzero(found))

    # -- lifecycle --------------------------------------------------------------------------
    def commit(self) -> None:
        self.key_to_num_values.commit()
        self.key_with_index_to_value.commit()

    def abort(self) -> None:
        self.key_to_num_values.abort()
        self.key_with_index_to_value.abort()

    def num_rows(self) -> int:
        """Buffered rows (Spark reports keyWithIndexToValue's key count)."""
        return self.key_with_index_to_value.num_keys()

    def metrics(self) -> dict[str, int]:
        a = self.key_to_num_values.metrics()
        b = self.key_with_index_to_value.metrics()
        return {"numKeys": b["numKeys"],
                "memoryUsedBytes": a.get("memoryUsedBytes", 0) + b.get("memoryUsedBytes", 0),
                "skippedNullValueCount": self.skipped_null_values}

    def _empty_state(self) -> JoinSideState:
        return JoinSideState(empty_table(self.key_schema), np.zeros(0, np.int64),
                             empty_table(self.input_schema), np.zeros(0, bool),
                             np.zeros(0, np.int64) if self.insert_times else None)


def _take_state(s: JoinSideState, idx: np.ndarray) -> JoinSideState:
    i = pa.array(np.asarray(idx, dtype=np.int64))
    return JoinSideState(s.keys.take(i), s.index[idx], s.values.take(i), s.matched[idx],
                         None if s.insert_ms is None else s.insert_ms[idx])

