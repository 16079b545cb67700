"""Range joins: Ember's local runtime (RangeJoin) against DuckDB (and Spark SQL native with
``--spark``), measured in the same run.

Data: points ``a(id, x)`` with ``x`` uniform in [0, 10^6); intervals ``b(iid, lo, hi)`` with
``lo`` uniform and a length uniform in [0, 2000) (about 5 intervals per point for 5k intervals).
Queries (aggregated so that no engine ships the pairs to Python):

- point: ``a JOIN b ON a.x BETWEEN b.lo AND b.hi``;
- overlap: intervals ``[x, x + 500]`` of ``a`` overlapping those of ``b``;
- left outer: the point query as a LEFT JOIN.

Best of ``--repeat`` warm runs per engine; every engine's answer must equal DuckDB's.

Run: ``PYTHONPATH=src:. python bench/range_join.py [--sizes 50000x5000,200000x20000] [--spark]
[--nested]`` (``--nested`` also times Ember with ``ember.join.rangeJoin.enabled=false``, the
broadcast nested loop; slow).
"""

from __future__ import annotations

import argparse
import os
import time

import duckdb
import numpy as np
import pyarrow as pa

import ember

QUERIES = {
    "point": "SELECT count(*), sum(a.id + b.iid) FROM a JOIN b ON a.x BETWEEN b.lo AND b.hi",
    "overlap": ("SELECT count(*), sum(a.id + b.iid) FROM a JOIN b "
                "ON a.x <= b.hi AND b.lo <= a.x + 500"),
    "left_outer": ("SELECT count(*), sum(coalesce(b.iid, -1)) FROM a LEFT JOIN b "
                   "ON a.x BETWEEN b.lo AND b.hi"),
}


def tables(n: int, m: int, seed: int = 0) -> tuple[pa.Table, pa.Table]:
    rng = np.random.default_rng(seed)
    a = pa.table({"id": np.arange(n, dtype=np.int64),
                  "x": rng.integers(0, 1_000_000, n, dtype=np.int64)})
    lo = rng.integers(0, 1_000_000, m, dtype=np.int64)
    b = pa.table({"iid": np.arange(m, dtype=np.int64), "lo": lo,
                  "hi": lo + rng.integers(0, 2000, m, dtype=np.int64)})
    return a, b


def best(fn, repeat: int) -> tuple[float, object]:
    times, out = [], None
    for _ in range(repeat):
        t = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - t)
    return min(times), out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--sizes", default="50000x5000,200000x20000")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--spark", action="store_true", help="also Spark SQL native")
    ap.add_argument("--nested", action="store_true", help="also Ember's nested loop join")
    args = ap.parse_args()
    spark = None
    if args.spark:
        from tests.spark_session import get_spark

        spark = get_spark()
    print(f"load average at start: {os.getloadavg()}")
    header = "| size | query | pairs | DuckDB s | Ember s | Ember/DuckDB |"
    header += " Spark s | Spark/Ember |" if spark else ""
    header += " nested loop s |" if args.nested else ""
    print(header)
    print("|" + "---|" * (header.count("|") - 1))
    for size in args.sizes.split(","):
        n, m = (int(v) for v in size.split("x"))
        a, b = tables(n, m)
        con = duckdb.connect()
        # DuckDB tables (with statistics DuckDB plans its IEJoin; over registered Arrow tables it
        # plans a nested loop, 15x slower)
        con.register("arrow_a", a)
        con.register("arrow_b", b)
        con.sql("CREATE TABLE a AS SELECT * FROM arrow_a")
        con.sql("CREATE TABLE b AS SELECT * FROM arrow_b")
        session = ember.Session()
        session.createDataFrame(a).createOrReplaceTempView("a")
        session.createDataFrame(b).createOrReplaceTempView("b")
        if spark is not None:
            spark.createDataFrame(a.to_pandas()).createOrReplaceTempView("a")
            spark.createDataFrame(b.to_pandas()).createOrReplaceTempView("b")
        for name, sql in QUERIES.items():
            td, want = best(lambda: con.sql(sql).fetchall()[0], args.repeat)
            te, got = best(lambda: tuple(session.sql(sql).collect()[0]), args.repeat)
            assert tuple(got) == tuple(want), (name, got, want)
            row = f"| {n}x{m} | {name} | {want[0]} | {td:.3f} | {te:.3f} | {te / td:.1f} |"
            if spark is not None:
                ts, gs = best(lambda: tuple(spark.sql(sql).collect()[0]), 1)
                assert tuple(gs) == tuple(want), (name, gs, want)
                row += f" {ts:.2f} | {ts / te:.1f} |"
            if args.nested:
                session.conf.set("ember.join.rangeJoin.enabled", "false")
                tn, gn = best(lambda: tuple(session.sql(sql).collect()[0]), 1)
                session.conf.set("ember.join.rangeJoin.enabled", "true")
                assert tuple(gn) == tuple(want), (name, gn, want)
                row += f" {tn:.2f} |"
            print(row, flush=True)
    print(f"load average at end: {os.getloadavg()}")


if __name__ == "__main__":
    main()
