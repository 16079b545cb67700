"""Fixed cost per query: Ember local against DuckDB on queries whose data is tiny (issue 25's
``bench/latency``), every ratio measured in the same run.

* ``SELECT 1``, warm;
* a 3-table join with an aggregate over three 1,000-row Parquet tables;
* the TPC-DS queries at SF 0.01 (``--data``, generated with DuckDB's tpcds extension when a table
  is missing), geomean over the queries both engines answer.

Each engine runs every query once to warm up, then ``--repeat`` times; the best time counts.
Targets (issue 25): ``SELECT 1`` under 0.5 ms, the small join under 5 ms, the TPC-DS SF 0.01
geomean under 3x DuckDB's.  Run::

    python -m bench.latency [--repeat 5] [--data /tmp/tpcds_sf001] [--queries 1,2,...]
        [--clock wall|cpu]

``--clock cpu`` times the process's CPU time (all threads) instead of wall time: steadier on a
loaded machine, blind to waiting.
"""

from __future__ import annotations

import argparse
import math
import os
import tempfile
import time
from collections.abc import Callable

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

import ember
from bench.tpcds import datagen
from bench.tpch.engines import _geomean, machine

JOIN_SQL = """
SELECT c.region, count(*) AS n, sum(o.amount) AS total, max(p.price) AS top_price
FROM orders o
JOIN customers c ON o.customer_id = c.id
JOIN products p ON o.product_id = p.id
WHERE p.price > 10
GROUP BY c.region
ORDER BY c.region
"""


def _small_tables(directory: str) -> dict[str, str]:
    """Three 1,000-row Parquet tables for the small join; ``{name: path}``."""
    rng = np.random.default_rng(7)
    n = 1000
    tables = {
        "customers": pa.table({"id": np.arange(n, dtype=np.int64),
                               "region": pa.array([f"r{i % 7}" for i in range(n)])}),
        "products": pa.table({"id": np.arange(n, dtype=np.int64),
                              "price": rng.uniform(1, 100, n).round(2)}),
        "orders": pa.table({"id": np.arange(n, dtype=np.int64),
                            "customer_id": rng.integers(0, n, n),
                            "product_id": rng.integers(0, n, n),
                            "amount": rng.uniform(1, 500, n).round(2)}),
    }
    paths = {}
    for name, table in tables.items():
        paths[name] = os.path.join(directory, f"{name}.parquet")
        pq.write_table(table, paths[name])
    return paths


def _best(run: Callable[[], object], repeat: int, now: Callable[[], float]) -> float:
    run()  # warm-up
    best = math.inf
    for _ in range(repeat):
        t = now()
        run()
        best = min(best, now() - t)
    return best


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--data", default="/tmp/tpcds_sf001", help="TPC-DS SF 0.01 Parquet files")
    ap.add_argument("--queries", default=",".join(map(str, datagen.QUERIES)))
    ap.add_argument("--clock", choices=("wall", "cpu"), default="wall")
    args = ap.parse_args(argv)
    now = time.process_time if args.clock == "cpu" else time.perf_counter
    queries = [int(q) for q in args.queries.split(",")]
    load = os.getloadavg()
    print(f"bench.latency; {machine()}; {args.clock} time, best of {args.repeat}; load average "
          f"{load[0]:.2f} {load[1]:.2f} {load[2]:.2f}", flush=True)

    es = ember.Session()
    con = datagen.connect()

    def line(name: str, e: float, d: float, target: str) -> None:
        print(f"{name:<28} ember {e * 1e3:9.3f} ms  duckdb {d * 1e3:8.3f} ms  "
              f"ember/duckdb {e / d:6.2f}x   ({target})", flush=True)

    e = _best(lambda: es.sql("SELECT 1").to_arrow(), args.repeat * 20, now)
    d = _best(lambda: con.execute("SELECT 1").to_arrow_table(), args.repeat * 20, now)
    line("SELECT 1", e, d, "target: ember under 0.5 ms")

    with tempfile.TemporaryDirectory() as tmp:
        small = _small_tables(tmp)
        datagen.register(es, small)
        datagen.register_duckdb(con, small)
        e = _best(lambda: es.sql(JOIN_SQL).to_arrow(), args.repeat * 4, now)
        d = _best(lambda: con.execute(JOIN_SQL).to_arrow_table(), args.repeat * 4, now)
        line("3-table join, 1,000 rows", e, d, "target: ember under 5 ms")

    paths = datagen.ensure(args.data, 0.01)
    datagen.register(es, paths)
    datagen.register_duckdb(con, paths)
    spark_text, duck_text = datagen.spark_queries(), datagen.duckdb_queries()
    times: dict[str, list[float]] = {"ember": [], "duckdb": []}
    for n in queries:
        try:
            e = _best(lambda: es.sql(spark_text[n]).to_arrow(), args.repeat, now)
        except Exception as exc:  # noqa: BLE001 - reported, the run goes on
            print(f"q{n:02d} ember failed: {type(exc).__name__}: {str(exc)[:120]}")
            continue
        d = _best(lambda: con.execute(duck_text[n]).to_arrow_table(), args.repeat, now)
        times["ember"].append(e)
        times["duckdb"].append(d)
        print(f"q{n:02d} ember {e * 1e3:8.1f} ms  duckdb {d * 1e3:7.1f} ms  "
              f"{e / d:6.2f}x", flush=True)
    ge, gd = _geomean(times["ember"]), _geomean(times["duckdb"])
    line(f"TPC-DS SF0.01 ({len(times['ember'])} q)", ge, gd,
         "geomean; target: under 3x DuckDB")
    load = os.getloadavg()
    print(f"load average at the end: {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}")


if __name__ == "__main__":
    main()
