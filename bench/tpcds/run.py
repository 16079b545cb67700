"""TPC-DS on four engines in one run: Ember local, Ember on Spark, Spark SQL native and DuckDB.

Not a test (tests/tpcds/test_tpcds.py is).  Needs the package's bench extra (DuckDB and its
tpcds extension) and PySpark (test extra; Java 17 on the PATH).  Run::

    python -m bench.tpcds.run [--data /tmp/tpcds_sf1] [--sf 1] [--repeat 1] [--timeout 300]
        [--engines ember,ember-spark,spark,duckdb] [--queries 1,2,...,99] [--partitions 8]
        [--memory-budget 2g] [--no-warmup]

Data is generated offline with ``duckdb-extension-tpcds`` when ``--data`` lacks a table.  Every
engine reads the same Parquet files; Ember and Spark run ``bench/tpcds/queries`` (Spark SQL),
DuckDB its own text of each query (``tpcds_queries()``):

* Ember local: ``ember.Session`` with ``ember.execution.memoryBudget = --memory-budget``;
* Ember on Spark: ``ember.Session(runtime="spark", spark=...)`` (Ember plans, Spark runs them);
* Spark SQL native: ``spark.sql(q).toArrow()`` (adaptive execution at Spark's default, on);
* DuckDB: views over ``read_parquet``, ``.to_arrow_table()``.

Both Spark engines get a ``local[2]`` session of their own as ``bench.tpch.spark_runtime`` builds
it (``--partitions`` shuffle partitions, the Python-worker setting Ember gives a session it
builds); each runs a query once
to warm up (JIT, file listing, Python workers) unless ``--no-warmup``.  Each engine lives in its
own process (process group), so a run longer than ``--timeout`` seconds is killed (``timeout``)
and the engine restarts for the next query.  Per query: the best time of ``--repeat`` runs per
engine and whether Ember's answers equal Spark native's (``bench.tpch.compare.diff``); at the
end the geometric means over the queries both engines of a pair finished, and the ratios
Ember local / DuckDB and Ember on Spark / Spark native (the targets: at most 3x and 1.2x).
"""

from __future__ import annotations

import argparse
import math
import multiprocessing as mp
import os
import signal
import sys
import time
from typing import Any

from bench.tpcds import datagen
from bench.tpch.compare import diff
from bench.tpch.engines import _geomean, machine
from bench.tpch.spark_runtime import spark_session

ENGINES = ("ember", "ember-spark", "spark", "duckdb")
#: The ratios reported at the end: (engine, peer).
PAIRS = (("ember", "duckdb"), ("ember-spark", "spark"))
SPARK_ENGINES = ("ember-spark", "spark")


def _runner(engine: str, paths: dict[str, str], args: dict[str, Any]):
    """``run(n) -> Arrow table`` for ``engine`` (built inside the engine's process)."""
    if engine == "duckdb":
        con = datagen.connect()
        datagen.register_duckdb(con, paths)
        text = datagen.duckdb_queries()
        return lambda n: con.execute(text[n]).to_arrow_table()
    import ember

    text = datagen.spark_queries()
    if engine == "ember":
        session = ember.Session({"ember.execution.memoryBudget": args["memory_budget"]})
    elif engine == "ember-spark":
        spark = spark_session("local[2]", args["partitions"])
        session = ember.Session({"spark.sql.shuffle.partitions": str(args["partitions"])},
                                runtime="spark", spark=spark)
    else:
        session = spark_session("local[2]", args["partitions"])
        datagen.register(session, paths)
        return lambda n: session.sql(text[n]).toArrow()
    datagen.register(session, paths)
    return lambda n: session.sql(text[n]).to_arrow()


def _serve(engine: str, paths: dict[str, str], args: dict[str, Any], conn: Any) -> None:
    """The engine's process: answer ``n`` with ``(seconds, table, None)`` or
    ``(None, None, error)``."""
    os.setsid()  # its own process group: a timeout kills the engine with its JVM
    run = _runner(engine, paths, args)
    conn.send("ready")
    while True:
        n = conn.recv()
        t0 = time.perf_counter()
        try:
            out = run(n)
            conn.send((time.perf_counter() - t0, out, None))
        except Exception as exc:  # noqa: BLE001 - reported by the parent
            first = str(exc).strip().splitlines()[0][:160] if str(exc).strip() else ""
            conn.send((None, None, f"{type(exc).__name__}: {first}"))


class Engine:
    """One engine in a child process, restarted after a timeout."""

    def __init__(self, name: str, paths: dict[str, str], args: dict[str, Any]) -> None:
        self.name, self.paths, self.args = name, paths, args
        self.proc: Any = None
        self.conn: Any = None

    def _start(self) -> None:
        ctx = mp.get_context("spawn")
        self.conn, child = ctx.Pipe()
        self.proc = ctx.Process(target=_serve, args=(self.name, self.paths, self.args, child),
                                daemon=True)
        self.proc.start()
        if not self.conn.poll(600) or self.conn.recv() != "ready":
            raise RuntimeError(f"{self.name} did not start")

    def stop(self) -> None:
        if self.proc is not None:
            try:
                os.killpg(self.proc.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            self.proc.join()
            self.proc = None

    def run(self, n: int, timeout: float) -> tuple[float | None, Any, str | None]:
        if self.proc is None or not self.proc.is_alive():
            self._start()
        self.conn.send(n)
        if not self.conn.poll(timeout):
            self.stop()
            return None, None, f"timeout (> {timeout:.0f} s)"
        try:
            return self.conn.recv()
        except EOFError:
            self.stop()
            return None, None, "engine process died (out of memory?)"


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--data", default="/tmp/tpcds_sf1")
    ap.add_argument("--sf", type=float, default=1.0)
    ap.add_argument("--repeat", type=int, default=1)
    ap.add_argument("--timeout", type=float, default=300.0, help="seconds per query run")
    ap.add_argument("--engines", default=",".join(ENGINES))
    ap.add_argument("--queries", default=",".join(map(str, datagen.QUERIES)))
    ap.add_argument("--partitions", type=int, default=8, help="shuffle partitions on Spark")
    ap.add_argument("--memory-budget", default="2g", help="ember.execution.memoryBudget")
    ap.add_argument("--no-warmup", action="store_true", help="no warm-up run on Spark")
    args = ap.parse_args(argv)
    names = [e.strip() for e in args.engines.split(",") if e.strip()]
    unknown = set(names) - set(ENGINES)
    if unknown:
        ap.error(f"unknown engines {sorted(unknown)}; choose from {', '.join(ENGINES)}")
    queries = [int(q) for q in args.queries.split(",")]

    paths = datagen.ensure(args.data, args.sf)
    conf = {"partitions": args.partitions, "memory_budget": args.memory_budget}
    engines = {name: Engine(name, paths, conf) for name in names}
    load = os.getloadavg()
    print(f"TPC-DS SF{args.sf} from {args.data}; {machine()}; best of {args.repeat}; timeout "
          f"{args.timeout:.0f} s; Ember memory budget {args.memory_budget}; Spark local[2], "
          f"{args.partitions} shuffle partitions; load average {load[0]:.2f} {load[1]:.2f} "
          f"{load[2]:.2f}", flush=True)
    print("query" + "".join(f"{e:>13}" for e in engines) + "   answers (Ember vs Spark native)",
          flush=True)

    # SIGTERM ends the run through ``finally``, which kills the engines' process groups
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    times: dict[str, dict[int, float]] = {e: {} for e in engines}
    failures: dict[str, dict[int, str]] = {e: {} for e in engines}
    try:
        for n in queries:
            cells, outs = [], {}
            for name, engine in engines.items():
                best, out, error = math.inf, None, None
                runs = args.repeat + (1 if name in SPARK_ENGINES and not args.no_warmup else 0)
                for i in range(runs):
                    t, out, error = engine.run(n, args.timeout)
                    if error is not None:
                        break
                    if i >= runs - args.repeat:
                        best = min(best, t)
                if error is None:
                    times[name][n], outs[name] = best, out
                    cells.append(f"{best:12.3f}s")
                else:
                    failures[name][n] = error
                    cells.append(f"{'timeout' if error.startswith('timeout') else 'n/a':>13}")
            checks = []
            for name in ("ember", "ember-spark"):
                if name in outs and "spark" in outs:
                    problem = diff(outs[name], outs["spark"])
                    verdict = "ok" if problem is None else f"DIFFERS: {problem[:100]}"
                    checks.append(f"{name} {verdict}")
            print(f"q{n:02d} " + "".join(cells) + "   " + "; ".join(checks), flush=True)
    finally:
        for engine in engines.values():
            engine.stop()

    print()
    for name, failed in failures.items():
        for n, error in failed.items():
            print(f"q{n:02d} {name}: {error}")
    for a, b in PAIRS:
        common = [n for n in queries if n in times.get(a, {}) and n in times.get(b, {})]
        if common:
            ga, gb = (_geomean([times[e][n] for n in common]) for e in (a, b))
            print(f"geomean over {len(common)} queries: {a} {ga:.3f}s, {b} {gb:.3f}s, "
                  f"{a}/{b} = {ga / gb:.2f}x")
    load = os.getloadavg()
    print(f"load average at the end: {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}")


if __name__ == "__main__":
    main()
