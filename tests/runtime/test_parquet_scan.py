"""Parquet scans planned by FileSourceStrategy: column projection, pushed data filters (row-group
pruning, exact row filters), row-group splits -- results equal to filtering in Python."""

from __future__ import annotations

import datetime as dt
from decimal import Decimal

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import ember

N = 5000


@pytest.fixture(scope="module")
def session(tmp_path_factory):
    d = tmp_path_factory.mktemp("pq")
    rows = {
        "i": [None if x % 97 == 0 else x for x in range(N)],
        "s": [None if x % 89 == 0 else f"k{x % 50:03d}" for x in range(N)],
        "d": [dt.date(2020, 1, 1) + dt.timedelta(days=x % 400) for x in range(N)],
        "m": [Decimal(x % 300) / 100 for x in range(N)],
        "e": [dt.date(2020, 1, 1) + dt.timedelta(days=(x * 7) % 400) for x in range(N)],
        "f": [float(x) if x % 13 else float("nan") for x in range(N)],
        "unused": ["x" * 20] * N,
    }
    t = pa.table(rows, schema=pa.schema([
        ("i", pa.int64()), ("s", pa.string()), ("d", pa.date32()), ("m", pa.decimal128(10, 2)),
        ("e", pa.date32()), ("f", pa.float64()), ("unused", pa.string())]))
    pq.write_table(t, d / "t.parquet", row_group_size=500)
    s = ember.Session()
    s.sql(f"CREATE TEMP VIEW t USING parquet OPTIONS (path '{d / 't.parquet'}')")
    return s, t.to_pylist()


CASES = [
    ("i >= 4000 AND s = 'k007'", lambda r: r["i"] is not None and r["i"] >= 4000
     and r["s"] == "k007"),
    ("i < 100 OR i > 4900", lambda r: r["i"] is not None and (r["i"] < 100 or r["i"] > 4900)),
    ("s IN ('k001', 'k002') AND d < DATE '2020-02-01'",
     lambda r: r["s"] in ("k001", "k002") and r["d"] < dt.date(2020, 2, 1)),
    ("m > 2.5", lambda r: r["m"] > Decimal("2.5")),
    ("d < e", lambda r: r["d"] < r["e"]),
    ("s IS NULL", lambda r: r["s"] is None),
    ("i IS NOT NULL AND NOT (i > 10)", lambda r: r["i"] is not None and not r["i"] > 10),
    ("f > 4990.0", lambda r: r["f"] != r["f"] or r["f"] > 4990.0),  # NaN is largest in Spark
]


@pytest.mark.parametrize("cond,pred", CASES, ids=[c for c, _ in CASES])
def test_filtered_scan(session, cond, pred):
    s, rows = session
    df = s.sql(f"SELECT i, s FROM t WHERE {cond}")
    plan = df._qe.explain_string("simple")
    assert "unused" not in plan.split("ReadSchema:")[-1]
    got = sorted(df.to_arrow().to_pylist(), key=str)
    want = sorted(({"i": r["i"], "s": r["s"]} for r in rows if pred(r)), key=str)
    assert got == want


def test_count_star_reads_no_columns(session):
    s, rows = session
    df = s.sql("SELECT count(*) AS c FROM t")
    assert "ReadSchema: struct<>" in df._qe.explain_string("simple")
    assert df.to_arrow().to_pylist() == [{"c": N}]


def test_pushed_filters_listed(session):
    s, _ = session
    plan = s.sql("SELECT i FROM t WHERE i > 3")._qe.explain_string("simple")
    assert "DataFilters: [isnotnull(i#" in plan and "Filter" in plan


def test_rewritten_file_is_read_again(tmp_path):
    """The footer cache (``scan.parquet_footer``) is keyed by path, modification time and size:
    a file rewritten in place (other row groups, other statistics) is read as it now is."""
    import os

    from ember.execution import scan

    path = tmp_path / "r.parquet"
    pq.write_table(pa.table({"x": list(range(10))}), path, row_group_size=5)
    s = ember.Session()
    s.sql(f"CREATE TEMP VIEW r USING parquet OPTIONS (path '{path}')")
    assert s.sql("SELECT sum(x) AS t, count(*) AS n FROM r WHERE x > 2").collect()[0] == (42, 7)
    first = scan.parquet_footer(str(path))
    assert scan.parquet_footer(str(path)) is first  # read once
    st = os.stat(path)
    pq.write_table(pa.table({"x": list(range(100, 130))}), path, row_group_size=7)
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns))  # same mtime: the size tells
    assert scan.parquet_footer(str(path)) is not first
    assert s.sql("SELECT sum(x) AS t, count(*) AS n FROM r WHERE x > 2").collect()[0] == (
        sum(range(100, 130)), 30)
