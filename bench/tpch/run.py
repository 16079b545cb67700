"""Time the 22 TPC-H queries on Ember (not a test).

Run: ``/work/venv/bin/python -m bench.tpch.run [data_dir] [sf] [repeat] [query numbers...]``
(defaults: /tmp/tpch_sf01, 0.1, 1, all).  Data is generated with DuckDB if ``data_dir`` holds no
``lineitem.parquet``.  Prints one line per query: best wall time over ``repeat`` runs and rows.
"""

from __future__ import annotations

import os
import sys
import time

from bench.tpch import datagen


def main() -> None:
    import ember

    data = sys.argv[1] if len(sys.argv) > 1 else "/tmp/tpch_sf01"
    sf = float(sys.argv[2]) if len(sys.argv) > 2 else 0.1
    repeat = int(sys.argv[3]) if len(sys.argv) > 3 else 1
    only = [int(a) for a in sys.argv[4:]] or list(range(1, 23))
    if not os.path.exists(os.path.join(data, "lineitem.parquet")):
        datagen.generate(data, sf)
    paths = {t: os.path.join(data, f"{t}.parquet") for t in datagen.TABLES}
    s = ember.Session()
    datagen.register_ember(s, paths)
    queries = datagen.spark_queries()
    total = 0.0
    for n in only:
        best = float("inf")
        rows = 0
        for _ in range(repeat):
            t0 = time.perf_counter()
            rows = s.sql(queries[n]).to_arrow().num_rows
            best = min(best, time.perf_counter() - t0)
        total += best
        print(f"Q{n:02d} {best:8.3f}s rows={rows}", flush=True)
    print(f"total {total:8.3f}s")


if __name__ == "__main__":
    main()
