"""TPC-H on four engines in one process run: Ember, Spark SQL native, DuckDB and Polars.

Not a test.  Install the peers with ``pip install -e '.[bench]'`` (PySpark comes with the package's
test extra; Java 17 must be on the PATH), then run::

    python -m bench.tpch.engines [--data /tmp/tpch_sf1] [--sf 1] [--repeat 3]
        [--engines ember,spark,duckdb,polars] [--queries 3,4,5,7,8,9,10,12,13,16,18,21]

Data is generated offline with ``duckdb-extension-tpch`` when ``--data`` holds no
``lineitem.parquet``.  Every engine reads the same Parquet files:

* Ember: ``CREATE TEMP VIEW ... USING parquet``, ``session.sql(q).to_arrow()``;
* Spark: a ``local[2]`` session (UI off, ``spark.sql.adaptive.enabled`` left at its default),
  the same views, ``collect()``; it runs each query once to warm up before timing;
* DuckDB: views over ``read_parquet``, ``.to_arrow_table()``;
* Polars: ``pl.SQLContext`` over ``scan_parquet`` frames running DuckDB's text of each query
  (Polars' SQL is closer to DuckDB's dialect); a query Polars cannot run prints ``n/a``.

For each query: the best wall time of ``--repeat`` runs per engine, Ember's answer checked
against DuckDB's (``bench.tpch.compare.diff``), then the geometric means and the ratios
Ember/Spark, Ember/DuckDB and Ember/Polars over the queries every engine finished.  The default
query list is issue 4's join-heavy set.
"""

from __future__ import annotations

import argparse
import math
import os
import platform
import sys
import time
from collections.abc import Callable

from bench.tpch import datagen
from bench.tpch.compare import diff

JOIN_HEAVY = (3, 4, 5, 7, 8, 9, 10, 12, 13, 16, 18, 21)


def _best(fn: Callable[[], object], repeat: int) -> tuple[float, object]:
    best, out = math.inf, None
    for _ in range(repeat):
        t0 = time.perf_counter()
        out = fn()
        best = min(best, time.perf_counter() - t0)
    return best, out


def _spark_session():
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    from pyspark.sql import SparkSession

    return (SparkSession.builder.master("local[2]").appName("ember-bench")
            .config("spark.ui.enabled", "false")
            .config("spark.ui.showConsoleProgress", "false")
            .config("spark.driver.memory", "8g")
            .config("spark.sql.session.timeZone", "UTC")
            .getOrCreate())


def _polars_context(paths: dict[str, str]):
    import polars as pl

    ctx = pl.SQLContext()
    for t, p in paths.items():
        ctx.register(t, pl.scan_parquet(p))
    return ctx


def _geomean(xs: list[float]) -> float:
    return math.exp(sum(math.log(x) for x in xs) / len(xs)) if xs else math.nan


def machine() -> str:
    """One line describing this machine (for bench/RESULTS.md)."""
    mem = ""
    try:
        with open("/proc/meminfo") as f:
            kb = int(f.readline().split()[1])
        mem = f", {kb / 2**20:.0f} GiB RAM"
    except OSError:
        pass
    return (f"{platform.machine()}, {os.cpu_count()} cores{mem}, Python "
            f"{platform.python_version()}, {platform.system()} {platform.release()}")


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--data", default="/tmp/tpch_sf1")
    ap.add_argument("--sf", type=float, default=1.0)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--engines", default="ember,spark,duckdb,polars")
    ap.add_argument("--queries", default=",".join(map(str, JOIN_HEAVY)))
    args = ap.parse_args(argv)
    engines = [e.strip() for e in args.engines.split(",") if e.strip()]
    queries = [int(q) for q in args.queries.split(",")]

    if not os.path.exists(os.path.join(args.data, "lineitem.parquet")):
        print(f"generating TPC-H SF{args.sf} into {args.data} ...", flush=True)
        datagen.generate(args.data, args.sf)
    paths = {t: os.path.join(args.data, f"{t}.parquet") for t in datagen.TABLES}
    spark_sql, duck_sql = datagen.spark_queries(), datagen.duckdb_queries()
    print(f"TPC-H SF{args.sf} from {args.data}; {machine()}; best of {args.repeat}", flush=True)

    runners: dict[str, Callable[[int], object]] = {}
    if "ember" in engines:
        import ember

        es = ember.Session()
        datagen.register_ember(es, paths)
        runners["ember"] = lambda n: es.sql(spark_sql[n]).to_arrow()
    con = datagen.connect()
    datagen.register_duckdb(con, paths)
    if "duckdb" in engines:
        runners["duckdb"] = lambda n: con.execute(duck_sql[n]).to_arrow_table()
    if "spark" in engines:
        ss = _spark_session()
        datagen.register_ember(ss, paths)
        runners["spark"] = lambda n: ss.sql(spark_sql[n]).collect()
    if "polars" in engines:
        pctx = _polars_context(paths)
        runners["polars"] = lambda n: pctx.execute(duck_sql[n], eager=True)

    times: dict[str, dict[int, float]] = {e: {} for e in runners}
    header = "query " + "".join(f"{e:>10}" for e in runners) + "   ember answer"
    print(header, flush=True)
    for n in queries:
        cells = []
        for e, run in runners.items():
            try:
                if e == "spark":
                    run(n)  # warm-up: JIT, file listing, broadcast of small tables
                t, out = _best(lambda: run(n), args.repeat)
                times[e][n] = t
                cells.append(f"{t:9.3f}s")
                if e == "ember":
                    ember_out = out
            except Exception as exc:  # noqa: BLE001 - a peer's failure is reported, not fatal
                cells.append(f"{'n/a':>10}")
                if e == "ember":
                    ember_out = None
                print(f"  Q{n:02d} {e}: {type(exc).__name__}: {str(exc).splitlines()[0][:120]}",
                      file=sys.stderr)
        check = ""
        if "ember" in runners:
            if ember_out is None:
                check = "FAILED"
            else:
                problem = diff(ember_out, con.execute(duck_sql[n]).to_arrow_table())
                check = "ok (= DuckDB)" if problem is None else f"DIFFERS: {problem}"
        print(f"Q{n:02d}  " + "".join(cells) + "   " + check, flush=True)

    print()
    for peer in [e for e in runners if e != "ember"]:
        common = [n for n in queries if n in times.get("ember", {}) and n in times[peer]]
        if not common:
            continue
        ge = _geomean([times["ember"][n] for n in common])
        gp = _geomean([times[peer][n] for n in common])
        print(f"geomean over {len(common)} queries: ember {ge:.3f}s, {peer} {gp:.3f}s, "
              f"ember/{peer} = {ge / gp:.2f}x")


if __name__ == "__main__":
    main()
