"""Scan sharing within one run (``ember.runtime.local.scan_cache``), row-group reads filtered by
kernel masks, and ``IS NOT NULL`` dropped on NULL-free Parquet columns: results equal to the
plain reads (cache off, dataset API), the cache decodes a shared column chunk once (counted, not
timed), is empty after the run, and a budget too small to cache still gives the right rows."""

from __future__ import annotations

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import ember
from ember.execution import scan as scan_mod
from ember.runtime.local import scan_cache as sc

from tests.runtime.test_parquet_scan import CASES

N = 3000
ROW_GROUP = 500  # 6 row groups


@pytest.fixture(scope="module")
def data(tmp_path_factory):
    d = tmp_path_factory.mktemp("scancache")
    t = pa.table({
        "k": pa.array([x % 700 for x in range(N)], pa.int64()),  # no NULL
        "v": pa.array([None if x % 11 == 0 else x for x in range(N)], pa.int64()),
        "s": pa.array([None if x % 7 == 0 else f"s{x % 13}" for x in range(N)], pa.string()),
        "n": pa.nulls(N, pa.int64()),  # all NULL
    })
    pq.write_table(t, d / "t.parquet", row_group_size=ROW_GROUP)
    pq.write_table(t.slice(0, 0), d / "e.parquet")
    return d, t


def _session(d, **conf) -> ember.Session:
    s = ember.Session()
    s.sql(f"CREATE TEMP VIEW t USING parquet OPTIONS (path '{d / 't.parquet'}')")
    s.sql(f"CREATE TEMP VIEW e USING parquet OPTIONS (path '{d / 'e.parquet'}')")
    s.sql("SET spark.sql.autoBroadcastJoinThreshold=-1")  # both sides scanned by shuffles
    for k, v in conf.items():
        s.sql(f"SET {k}={v}")
    return s


@pytest.fixture
def caches(monkeypatch):
    """Every ScanCache built, in order."""
    made: list[sc.ScanCache] = []
    orig = sc.ScanCache.for_plan.__func__

    def for_plan(cls, root, rt):
        c = orig(cls, root, rt)
        if c is not None:
            made.append(c)
        return c

    monkeypatch.setattr(sc.ScanCache, "for_plan", classmethod(for_plan))
    return made


def _rows(s, q):
    return sorted(s.sql(q).to_arrow().to_pylist(), key=repr)


QUERIES = [
    "SELECT a.k, count(*) AS c FROM t a JOIN t b ON a.k = b.k GROUP BY a.k",
    "SELECT a.k, a.v, b.s FROM t a JOIN t b ON a.k = b.k AND a.v > b.v WHERE a.s = 's3' AND b.v IS NOT NULL",
    "SELECT k, v FROM t WHERE v > 100 AND k IS NOT NULL "
    "AND EXISTS (SELECT 1 FROM t t2 WHERE t2.k = t.k AND t2.v <> t.v) "
    "AND NOT EXISTS (SELECT 1 FROM t t3 WHERE t3.k = t.k AND t3.v > t.v AND t3.s IS NULL)",
    "SELECT a.k FROM t a JOIN t b ON a.k = b.k WHERE a.n IS NOT NULL",
    "SELECT a.k FROM e a JOIN e b ON a.k = b.k",
    "SELECT count(*) AS c FROM t a JOIN t b ON a.k = b.k WHERE a.v IS NULL AND b.s IS NULL",
    # filters on the dictionary-decoded string column s (filtered before it is cast back)
    "SELECT k, s FROM t WHERE s IN ('s1', 's12') OR s < 's10'",
    "SELECT count(*) AS c FROM t WHERE s >= 's5' AND s IS NOT NULL",
    "SELECT k, v FROM t WHERE s IS NULL",
]


@pytest.mark.parametrize("batch", [2, 65536])
@pytest.mark.parametrize("q", QUERIES)
def test_same_rows_with_cache_off_and_dataset_reads(data, monkeypatch, q, batch):
    d, _ = data
    s = _session(d, **{"ember.execution.batchSize": batch})
    got = _rows(s, q)
    monkeypatch.setattr(sc, "ENABLED", False)
    monkeypatch.setattr(scan_mod, "ROW_GROUP_READS", False)
    assert got == _rows(s, q)


def test_shared_columns_decoded_once(data, caches):
    d, t = data
    # (with exchange reuse on, the self-join's second side is a ReusedExchange: one scan only)
    s = _session(d, **{"spark.sql.exchange.reuse": "false"})
    got = s.sql("SELECT count(*) AS c FROM t a JOIN t b ON a.k = b.k").to_arrow().to_pylist()
    ks = t.column("k").to_pylist()
    want = sum(ks.count(k) ** 2 for k in set(ks))
    assert got == [{"c": want}]
    (c,) = caches
    groups = N // ROW_GROUP
    assert c.decoded == groups  # column k of every row group, once for both scans
    assert c.hits == groups
    assert c.num_entries == 0 and c.held == 0


def test_cache_off_decodes_twice(data, caches, monkeypatch):
    d, _ = data
    monkeypatch.setattr(sc, "ENABLED", False)
    s = _session(d)
    s.sql("SELECT count(*) AS c FROM t a JOIN t b ON a.k = b.k").to_arrow()
    assert caches == []


def test_unshared_scans_bypass_the_cache(data, caches):
    d, _ = data
    s = _session(d)
    s.sql("SELECT a.k FROM t a JOIN t b ON a.k = b.v").to_arrow()  # k and v: nothing shared
    (c,) = caches
    assert c.decoded == 0 and c.hits == 0


def test_partial_sharing_keeps_filters_per_scan(data, caches):
    d, t = data
    s = _session(d)
    q = ("SELECT a.k, a.v, b.v AS bv FROM t a JOIN t b ON a.k = b.k "
         "WHERE a.v > 2000 AND b.v < 100")
    rows = t.to_pylist()
    want = sorted(({"k": x["k"], "v": x["v"], "bv": y["v"]} for x in rows for y in rows
                   if x["k"] == y["k"] and x["v"] is not None and x["v"] > 2000
                   and y["v"] is not None and y["v"] < 100), key=repr)
    assert _rows(s, q) == want
    (c,) = caches
    assert c.hits > 0 and c.num_entries == 0


def test_empty_after_run_and_budget_released(data, caches):
    d, _ = data
    s = _session(d)
    s.sql(QUERIES[2]).to_arrow()
    assert caches
    for c in caches:
        assert c.num_entries == 0 and c.held == 0 and c.hits > 0
        assert not c._pending and not c._plans


def test_budget_too_small_to_cache(data, caches):
    d, _ = data
    want = _rows(_session(d), QUERIES[1])
    s = _session(d, **{"ember.execution.memoryBudget": 1})
    assert _rows(s, QUERIES[1]) == want
    (c,) = caches[1:]
    assert c.hits == 0 and c.num_entries == 0 and c.held == 0


def test_spill_drops_entries():
    from ember.runtime.local.memory import MemoryManager

    mem = MemoryManager(1 << 20)
    c = sc.ScanCache(mem)
    col = pa.chunked_array([pa.array(range(100), pa.int64())])
    c._pending = {("p", 0, "x"): {1, 2}}
    c._offer(("p", 0, "x"), 1, col)
    assert c.num_entries == 1 and mem.used == c.held == col.nbytes
    assert c.spill() == col.nbytes
    assert c.num_entries == 0 and mem.used == 0


@pytest.fixture(scope="module")
def scan_session(tmp_path_factory):
    """test_parquet_scan's table (NULLs, NaN, decimals, dates; 10 row groups)."""
    import datetime as dt
    from decimal import Decimal

    d = tmp_path_factory.mktemp("pq2")
    n = 5000
    rows = {
        "i": [None if x % 97 == 0 else x for x in range(n)],
        "s": [None if x % 89 == 0 else f"k{x % 50:03d}" for x in range(n)],
        "d": [dt.date(2020, 1, 1) + dt.timedelta(days=x % 400) for x in range(n)],
        "m": [Decimal(x % 300) / 100 for x in range(n)],
        "e": [dt.date(2020, 1, 1) + dt.timedelta(days=(x * 7) % 400) for x in range(n)],
        "f": [float(x) if x % 13 else float("nan") for x in range(n)],
    }
    t = pa.table(rows, schema=pa.schema([
        ("i", pa.int64()), ("s", pa.string()), ("d", pa.date32()), ("m", pa.decimal128(10, 2)),
        ("e", pa.date32()), ("f", pa.float64())]))
    pq.write_table(t, d / "t.parquet", row_group_size=500)
    s = ember.Session()
    s.sql(f"CREATE TEMP VIEW t USING parquet OPTIONS (path '{d / 't.parquet'}')")
    return s, t.to_pylist()


@pytest.mark.parametrize("row_group_reads", [True, False])
@pytest.mark.parametrize("cond,pred", CASES, ids=[c for c, _ in CASES])
def test_filters_both_read_paths(scan_session, monkeypatch, row_group_reads, cond, pred):
    monkeypatch.setattr(scan_mod, "ROW_GROUP_READS", row_group_reads)
    s, rows = scan_session
    got = sorted(s.sql(f"SELECT i, s FROM t WHERE {cond}").to_arrow().to_pylist(), key=str)
    want = sorted(({"i": r["i"], "s": r["s"]} for r in rows if pred(r)), key=str)
    assert got == want
    # self-join: both sides read i and s through the shared cache, filters per side
    got2 = sorted(s.sql(f"SELECT a.i, b.s FROM (SELECT * FROM t WHERE {cond}) a "
                        "JOIN t b ON a.i = b.i AND a.s = b.s").to_arrow().to_pylist(), key=str)
    assert got2 == sorted(({"i": r["i"], "s": r["s"]} for r in rows if pred(r)
                           and r["i"] is not None and r["s"] is not None), key=str)


def test_is_not_null_on_null_free_column_not_evaluated(data):
    d, t = data
    s = _session(d)
    from ember.physical.nodes import FileSourceScanExec

    df = s.sql("SELECT k, v FROM t WHERE k IS NOT NULL AND v IS NOT NULL")
    node = df._qe.executed_plan.find(lambda n: isinstance(n, FileSourceScanExec))
    _, filters = scan_mod.plan_parquet_splits(node.relation, node.output, node.data_filters, 2)
    assert len(filters[scan_mod.EXACT_KEY]) == 2  # both exact, k's without evaluation
    f = filters[str(d / "t.parquet")]
    assert "k" not in str(f) and "v" in str(f)
    want = sorted(({"k": r["k"], "v": r["v"]} for r in t.to_pylist() if r["v"] is not None),
                  key=repr)
    assert sorted(df.to_arrow().to_pylist(), key=repr) == want


def test_dictionary_string_columns(tmp_path):
    """Dictionary-encoded strings are decoded as dictionaries (cast back by ``plain_columns``,
    after the scan's filter); PLAIN strings (and other types) are decoded directly; values and
    types equal ``pq.read_table``'s."""
    n = 4000
    t = pa.table({
        "few": pa.array([None if x % 9 == 0 else f"v{x % 5}" for x in range(n)], pa.string()),
        "unique": pa.array([f"u{x:08d}" for x in range(n)], pa.string()),
        "nulls": pa.nulls(n, pa.string()),
        "big": pa.array([f"b{x % 7}" for x in range(n)], pa.large_string()),
        "i": pa.array(range(n), pa.int64()),
    })
    p = tmp_path / "d.parquet"
    pq.write_table(t, p, row_group_size=1000, use_dictionary=["few", "nulls", "big", "i"])
    md = pq.read_metadata(p)
    as_dict = scan_mod.dictionary_columns(md, pq.read_schema(p))
    assert "few" in as_dict and "big" in as_dict and "unique" not in as_dict and "i" not in as_dict
    f, d = scan_mod.open_parquet(str(p))
    assert set(d) == set(as_dict) and d["big"] == pa.large_string()
    want = pq.read_table(p)
    for g in range(md.num_row_groups):
        raw = scan_mod.decode_row_group(f, g, ["i", "few", "unique", "nulls", "big"], d)
        assert pa.types.is_dictionary(raw.schema.field("few").type)
        assert not pa.types.is_dictionary(raw.schema.field("unique").type)
        got = scan_mod.plain_columns(raw, pq.read_schema(p))
        exp = want.slice(g * 1000, 1000).select(["i", "few", "unique", "nulls", "big"])
        assert got.schema == exp.schema
        assert got.equals(exp.combine_chunks()) or got.to_pylist() == exp.to_pylist()


def test_dictionary_columns_sql(tmp_path, monkeypatch):
    n = 3000
    t = pa.table({"k": pa.array([x % 10 for x in range(n)], pa.int64()),
                  "s": pa.array([None if x % 4 == 0 else f"s{x % 3}" for x in range(n)])})
    pq.write_table(t, tmp_path / "s.parquet", row_group_size=700)
    s = ember.Session()
    s.sql(f"CREATE TEMP VIEW t USING parquet OPTIONS (path '{tmp_path / 's.parquet'}')")
    q = ("SELECT a.s, count(*) AS c, max(b.s) AS m FROM t a JOIN t b ON a.k = b.k "
         "WHERE a.s IN ('s1', 's2') AND b.s > 's0' GROUP BY a.s")
    got = _rows(s, q)
    monkeypatch.setattr(scan_mod, "DICT_BYTES_PER_VALUE", 0)
    monkeypatch.setattr(sc, "ENABLED", False)
    assert got == _rows(s, q)
    monkeypatch.setattr(scan_mod, "ROW_GROUP_READS", False)
    assert got == _rows(s, q) and len(got) == 2
