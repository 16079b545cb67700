"""Versioned state stores (Spark's ``StateStore``): both providers, versioning, reopening at any
committed version, crash recovery (uncommitted writes vanish), delta + snapshot files and
cleanup, the binary row encoding."""

from __future__ import annotations

import datetime as dt
import decimal
import os

import numpy as np
import pyarrow as pa
import pytest

from ember.errors import ExecutionError
from ember.streaming.state.rows import decode_rows, encode_rows
from ember.streaming.state.store import (
    HDFS_PROVIDER_CLASS, MIN_BATCHES_TO_RETAIN_KEY, MIN_DELTAS_FOR_SNAPSHOT_KEY,
    PROVIDER_CLASS_KEY, ROCKSDB_PROVIDER_CLASS, StateStoreConf, StateStoreId, get_state_store,
    unload_all_providers,
)

KS = pa.schema([("k", pa.int64()), ("s", pa.string())])
VS = pa.schema([("v", pa.float64()), ("w", pa.struct([("start", pa.timestamp("us", "UTC")),
                                                       ("end", pa.timestamp("us", "UTC"))]))])


@pytest.fixture(params=["memory", "rocksdb"])
def provider(request):
    yield request.param
    unload_all_providers()


def keys(ks):
    return pa.table({"k": pa.array([k for k, _ in ks], pa.int64()),
                     "s": pa.array([s for _, s in ks], pa.string())}, schema=KS)


def values(vs):
    t = dt.datetime(2024, 1, 1, tzinfo=dt.timezone.utc)
    w = [None if v is None else {"start": t, "end": t + dt.timedelta(seconds=v)} for v in vs]
    return pa.table({"v": pa.array(vs, pa.float64()), "w": pa.array(w, VS.field("w").type)},
                    schema=VS)


def contents(store):
    k, v = store.scan()
    return sorted(zip(k["k"].to_pylist(), k["s"].to_pylist(), v["v"].to_pylist()))


def conf_for(provider, **extra):
    c = {PROVIDER_CLASS_KEY: ROCKSDB_PROVIDER_CLASS if provider == "rocksdb"
         else HDFS_PROVIDER_CLASS}
    c.update(extra)
    return c


def test_row_encoding_round_trip_and_canonical_keys():
    t = pa.table({
        "i": pa.array([1, None, -3], pa.int32()),
        "s": pa.array(["x", None, "héllo"]),
        "d": pa.array([decimal.Decimal("1.25"), None, decimal.Decimal("-7.00")],
                      pa.decimal128(9, 2)),
        "b": pa.array([True, None, False]),
        "dt": pa.array([1, None, 3], pa.date32()),
        "w": pa.array([{"a": 1, "b": "p"}, None, {"a": None, "b": "q"}],
                      pa.struct([("a", pa.int64()), ("b", pa.string())])),
        "bin": pa.array([b"", b"\x00", None]),
    })
    assert decode_rows(encode_rows(t), t.schema).equals(t)
    assert decode_rows(encode_rows(t.slice(1)), t.schema).equals(t.slice(1))
    # Canonical floats: -0.0 == 0.0 and every NaN equal, as Spark's normalized keys.
    f = pa.table({"f": pa.array([0.0, -0.0, float("nan"), float("nan")])})
    enc = encode_rows(f, canonical=True).to_pylist()
    assert enc[0] == enc[1] and enc[2] == enc[3] and enc[0] != enc[2]


def test_versions_reopen_and_uncommitted_writes_vanish(tmp_path, provider):
    sid = StateStoreId(str(tmp_path / "state"), 0, 3, "s")
    conf = conf_for(provider)
    s = get_state_store(sid, KS, VS, 0, conf)
    assert s.version == 0 and s.num_keys() == 0
    s.put(keys([(1, "a"), (2, "b"), (1, "a")]), values([1.0, 2.0, 3.0]))  # last (1,a) wins
    assert s.commit() == 1
    s = get_state_store(sid, KS, VS, 1, conf)
    s.put(keys([(2, "b"), (3, None)]), values([20.0, None]))
    s.remove(keys([(1, "a"), (9, "z")]))
    found, v = s.get(keys([(2, "b"), (1, "a"), (3, None)]))
    assert found.tolist() == [True, False, True] and v["v"].to_pylist() == [20.0, None, None]
    assert s.num_keys() == 2
    assert s.commit() == 2
    assert os.path.isdir(sid.path)
    # A crash in batch 2: writes to version 2 never committed.
    s = get_state_store(sid, KS, VS, 2, conf)
    s.put(keys([(7, "q")]), values([7.0]))
    s.abort()
    unload_all_providers()  # restart: only the files remain
    s = get_state_store(sid, KS, VS, 2, conf)
    assert contents(s) == [(2, "b", 20.0), (3, None, None)] and s.num_keys() == 2
    s.abort()
    s = get_state_store(sid, KS, VS, 1, conf)  # any committed version reopens
    assert contents(s) == [(1, "a", 3.0), (2, "b", 2.0)]
    _, v = s.get(keys([(2, "b")]))
    assert v["w"].to_pylist()[0]["end"] == dt.datetime(2024, 1, 1, 0, 0, 2,
                                                      tzinfo=dt.timezone.utc)
    s.abort()
    with pytest.raises(ExecutionError, match="CANNOT_LOAD_STATE_STORE"):
        get_state_store(sid, KS, VS, 5, conf)


def test_rerun_of_a_batch_overwrites_its_version(tmp_path, provider):
    sid = StateStoreId(str(tmp_path / "state"), 1, 0, "s")
    conf = conf_for(provider)
    s = get_state_store(sid, KS, VS, 0, conf)
    s.put(keys([(1, "a")]), values([1.0]))
    s.commit()
    unload_all_providers()
    s = get_state_store(sid, KS, VS, 0, conf)  # the engine reruns batch 0
    s.put(keys([(1, "a")]), values([5.0]))
    s.commit()
    unload_all_providers()
    assert contents(get_state_store(sid, KS, VS, 1, conf)) == [(1, "a", 5.0)]


def test_snapshots_deltas_and_cleanup(tmp_path, provider):
    sid = StateStoreId(str(tmp_path / "state"), 0, 0, "s")
    conf = conf_for(provider, **{MIN_DELTAS_FOR_SNAPSHOT_KEY: 3, MIN_BATCHES_TO_RETAIN_KEY: 4})
    for v in range(12):
        s = get_state_store(sid, KS, VS, v, conf)
        s.put(keys([(v, "x")]), values([float(v)]))
        if v >= 2:
            s.remove(keys([(v - 2, "x")]))
        s.commit()
    files = sorted(os.listdir(sid.path))
    if provider == "memory":
        # Snapshot once more than 3 deltas follow the last one: at 4 and 8 (12 has 4 deltas
        # after 8 too); cleanup deletes the files of versions below the snapshot that rebuilds
        # version 12 - 4 = 8 (Spark keeps 8.delta beside 8.snapshot).
        assert files == ["10.delta", "11.delta", "12.delta", "12.snapshot", "8.delta",
                         "8.snapshot", "9.delta"]
    else:
        assert files == [f"{v}.checkpoint" for v in (10, 11, 12, 8, 9)]
    unload_all_providers()
    for v in (8, 10, 12):
        s = get_state_store(sid, KS, VS, v, conf)
        assert contents(s) == [(v - 2, "x", float(v - 2)), (v - 1, "x", float(v - 1))]
        s.abort()
    with pytest.raises(ExecutionError):
        get_state_store(sid, KS, VS, 3, conf)


def test_store_conf_reads_spark_keys():
    assert StateStoreConf.from_conf(None).provider == "memory"
    c = StateStoreConf.from_conf({PROVIDER_CLASS_KEY: ROCKSDB_PROVIDER_CLASS,
                                  MIN_DELTAS_FOR_SNAPSHOT_KEY: "5"})
    assert (c.provider, c.min_deltas_for_snapshot, c.min_versions_to_retain) == ("rocksdb", 5,
                                                                                 100)
    from ember.conf import SQLConf

    sc = SQLConf()
    sc.set(PROVIDER_CLASS_KEY, HDFS_PROVIDER_CLASS)
    assert StateStoreConf.from_conf(sc).provider == "memory"


def test_large_batch_is_vectorized_round_trip(tmp_path, provider):
    sid = StateStoreId(str(tmp_path / "state"), 0, 0, "big")
    n = 50_000
    ks = pa.table({"k": pa.array(np.arange(n), pa.int64()),
                   "s": pa.array(np.char.add("k", np.arange(n).astype(str)).tolist())},
                  schema=KS)
    s = get_state_store(sid, KS, VS, 0, conf_for(provider))
    s.put(ks, values(np.arange(n, dtype=float).tolist()))
    s.commit()
    unload_all_providers()
    s = get_state_store(sid, KS, VS, 1, conf_for(provider))
    found, v = s.get(ks.slice(n - 10))
    assert found.all() and v["v"].to_pylist() == [float(i) for i in range(n - 10, n)]
    assert s.num_keys() == n
    s.abort()
