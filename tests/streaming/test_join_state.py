"""SymmetricHashJoinStateManager: the two-store layout, append with
per-key indices, get, getJoinedRows marking matched rows, removal by key and by value with
Spark's move-last-into-hole compaction; on both providers."""

from __future__ import annotations

import os

import numpy as np
import pyarrow as pa
import pytest

from ember.errors import ExecutionError
from ember.streaming.state.join_state import SymmetricHashJoinStateManager
from ember.streaming.state.store import StateStoreConf, unload_all_providers

SCHEMA = pa.schema([("k", pa.int64()), ("t", pa.int64())])


@pytest.fixture(params=["memory", "rocksdb"])
def conf(request):
    yield StateStoreConf(provider=request.param)
    unload_all_providers()


def manager(tmp_path, conf, version=0, side="left"):
    return SymmetricHashJoinStateManager(side, SCHEMA, [pa.int64()], str(tmp_path), 0, 2,
                                         version, conf)


def rows(*pairs):
    return pa.table({"k": [p[0] for p in pairs], "t": [p[1] for p in pairs]}, schema=SCHEMA)


def layout(m):
    a = m.all_rows()
    return sorted(zip(a.keys["field0"].to_pylist(), a.index.tolist(),
                      a.values["t"].to_pylist(), a.matched.tolist()))


def test_store_layout_and_append_indices(tmp_path, conf):
    m = manager(tmp_path, conf)
    r = rows((1, 10), (2, 20), (1, 11))
    m.append(r.select(["k"]), r, np.array([False, True, False]))
    r = rows((1, 12))
    m.append(r.select(["k"]), r, np.array([False]))
    assert layout(m) == [(1, 0, 10, False), (1, 1, 11, False), (1, 2, 12, False),
                         (2, 0, 20, True)]
    assert m.num_rows() == 4
    m.commit()
    names = sorted(os.listdir(tmp_path / "0" / "2"))
    assert names == ["left-keyToNumValues", "left-keyWithIndexToValue"]
    assert m.key_with_index_to_value.value_schema.names == ["k", "t", "matched"]
    assert m.key_with_index_to_value.key_schema.names == ["field0", "index"]
    unload_all_providers()
    m = manager(tmp_path, conf, version=1)
    probe, got = m.get(pa.table({"x": [2, 1, 5]}))
    assert probe.tolist() == [0, 1, 1, 1]
    assert got.values["t"].to_pylist() == [20, 10, 11, 12]


def test_get_joined_rows_marks_matched(tmp_path, conf):
    m = manager(tmp_path, conf)
    r = rows((1, 10), (1, 11), (2, 20))
    m.append(r.select(["k"]), r, np.zeros(3, bool))
    probe, hits = m.get_joined_rows(pa.table({"x": [1, 1]}),
                                    lambda p, s: s.values["t"].to_numpy() == 11)
    assert probe.tolist() == [0, 1] and hits.values["t"].to_pylist() == [11, 11]
    assert hits.matched.tolist() == [False, False]  # as read, before marking
    assert layout(m) == [(1, 0, 10, False), (1, 1, 11, True), (2, 0, 20, False)]
    # State format 2 never skips already matched values (Spark 4.3 passes
    # excludeRowsAlreadyMatched only for format 4): both probe rows see both values again.
    probe, hits = m.get_joined_rows(pa.table({"x": [1, 1]}), lambda p, s: np.ones(len(p), bool))
    assert probe.tolist() == [0, 0, 1, 1] and hits.values["t"].to_pylist() == [10, 11, 10, 11]
    assert hits.matched.tolist() == [False, True, False, True]
    assert layout(m) == [(1, 0, 10, True), (1, 1, 11, True), (2, 0, 20, False)]


def test_get_joined_rows_and_remove_matched(tmp_path, conf):
    # Spark 4.3's getJoinedRowsAndRemoveMatched (LeftSemi right pass, diff_findings.md
    # SURPRISE 1): each matching value is returned once, with the first probe row (input order)
    # matching it, and removed; values already flagged matched go silently when their key is
    # probed.
    m = manager(tmp_path, conf)
    r = rows((1, 10), (1, 11), (1, 12), (1, 13), (2, 20), (3, 30), (3, 31))
    m.append(r.select(["k"]), r, np.array([0, 0, 0, 0, 0, 1, 0], bool))
    wanted = {0: {10, 12}, 1: {12, 13}, 2: set(), 3: set()}  # probe row -> matching values

    def pred(p, s):
        return np.array([t in wanted[int(i)] for i, t in zip(p, s.values["t"].to_pylist())],
                        dtype=bool)

    probe, hits = m.get_joined_rows_and_remove_matched(pa.table({"x": [1, 1, 3, 2]}), pred)
    assert list(zip(probe.tolist(), hits.values["t"].to_pylist())) == [(0, 10), (0, 12),
                                                                       (1, 13)]
    assert hits.matched.tolist() == [False, False, False]
    # Key 1 = [10, 11, 12, 13] loses 10, 12, 13: the hole at index 0 takes 11 (the highest
    # surviving index); key 3 loses its matched 30 (31 moves to index 0); key 2 is untouched.
    assert layout(m) == [(1, 0, 11, False), (2, 0, 20, False), (3, 0, 31, False)]
    assert m.metrics()["numKeys"] == 3
    # A single probe row removing several values walks like Spark: [a, b, c, d] minus a, c.
    m2 = manager(tmp_path / "w", conf)
    r = rows((5, 1), (5, 2), (5, 3), (5, 4))
    m2.append(r.select(["k"]), r, np.zeros(4, bool))
    m2.get_joined_rows_and_remove_matched(
        pa.table({"x": [5]}), lambda p, s: np.isin(s.values["t"].to_numpy(), [1, 3]))
    assert layout(m2) == [(5, 0, 4, False), (5, 1, 2, False)]
    m2.commit()
    m.commit()
    unload_all_providers()
    m = manager(tmp_path, conf, version=1)
    assert layout(m) == [(1, 0, 11, False), (2, 0, 20, False), (3, 0, 31, False)]


def test_remove_by_value_condition_moves_last_into_hole(tmp_path, conf):
    m = manager(tmp_path, conf)
    r = rows((1, 10), (1, 11), (1, 12), (1, 13), (1, 14), (2, 20), (3, 5))
    m.append(r.select(["k"]), r, np.array([0, 1, 0, 0, 1, 0, 0], bool))
    removed = m.remove_by_value_condition(lambda v: np.isin(v["t"].to_numpy(), [10, 12, 14, 5]))
    assert sorted(zip(removed.values["t"].to_pylist(), removed.matched.tolist())) == [
        (5, False), (10, False), (12, False), (14, True)]
    # Spark's walk over key 1 = [10, 11, 12, 13, 14]: i=0 removes 10, moves 14 in (removed,
    # then 13 moves in and stays); i=1 keeps 11; i=2 removes 12 (the last index): [13, 11].
    assert layout(m) == [(1, 0, 13, False), (1, 1, 11, True), (2, 0, 20, False)]
    m.commit()
    unload_all_providers()
    m = manager(tmp_path, conf, version=1)
    assert layout(m) == [(1, 0, 13, False), (1, 1, 11, True), (2, 0, 20, False)]
    r = rows((1, 15))
    m.append(r.select(["k"]), r, np.zeros(1, bool))  # appended after the compacted values
    assert (1, 2, 15, False) in layout(m)


def test_remove_by_key_condition(tmp_path, conf):
    m = manager(tmp_path, conf)
    r = rows((1, 10), (2, 20), (1, 11), (3, 30))
    m.append(r.select(["k"]), r, np.array([0, 0, 1, 0], bool))
    removed = m.remove_by_key_condition(lambda k: k["field0"].to_numpy() <= 2)
    assert sorted(zip(removed.values["t"].to_pylist(), removed.matched.tolist())) == [
        (10, False), (11, True), (20, False)]
    assert layout(m) == [(3, 0, 30, False)]
    assert m.metrics()["numKeys"] == 1


def test_missing_value_fails_unless_skip_nulls(tmp_path, conf):
    m = manager(tmp_path, conf)
    r = rows((1, 10), (1, 11))
    m.append(r.select(["k"]), r, np.zeros(2, bool))
    m.key_with_index_to_value.remove(pa.table({"field0": [1], "index": [0]}))
    with pytest.raises(ExecutionError, match="misses the state value"):
        m.get(pa.table({"x": [1]}))
    m.abort()
    unload_all_providers()
    skip = StateStoreConf(provider=conf.provider, skip_nulls_for_stream_stream_joins=True)
    m = SymmetricHashJoinStateManager("right", SCHEMA, [pa.int64()], str(tmp_path / "b"), 0, 0,
                                      0, skip)
    m.append(r.select(["k"]), r, np.zeros(2, bool))
    m.key_with_index_to_value.remove(pa.table({"field0": [1], "index": [0]}))
    probe, got = m.get(pa.table({"x": [1]}))
    assert got.values["t"].to_pylist() == [11] and m.metrics()["skippedNullValueCount"] == 1
