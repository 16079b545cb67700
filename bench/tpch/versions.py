"""Compare two Ember source trees on TPC-H or TPC-DS, query by query, in the same minutes.

On a shared machine the time of one query drifts by 10-30% within minutes, so two benchmark runs
taken one after the other cannot tell a 5% change from noise.  This runs the two trees in two
long-lived worker processes (each with its own session, data registered once, every query run
once before timing) and alternates them run by run -- old, new, new, old, ... -- keeping each
one's best time per query::

    git archive <commit> src | tar -x -C /tmp/old
    python -m bench.tpch.versions --old /tmp/old/src --data /tmp/tpch_sf1 --repeat 5

prints per-query best times (``--clock cpu``: the workers' CPU time instead of wall time) and the new/old ratio, and the geomean ratio (with its spread: the
lowest and highest geomean ratio of one round, round ``i`` pairing each query's ``i``-th old and
new run).  The new tree is the ``src`` of this checkout unless ``--new`` names another one.
``--suite tpcds`` runs the TPC-DS queries (``bench/tpcds/queries``; all 99 unless ``--queries``)
over ``--data`` (default ``/tmp/tpcds_sf001``: at SF 0.01 a query's time is nearly all fixed
cost -- parsing, analysis, optimization, planning, runtime start-up)::

    python -m bench.tpch.versions --suite tpcds --old /tmp/old/src --repeat 5
"""

from __future__ import annotations

import argparse
import math
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
QUERIES = (3, 4, 5, 7, 8, 9, 10, 12, 13, 16, 18, 21)

_WORKER = r"""
import sys, time
import ember
suite, data, clock = sys.argv[1], sys.argv[2], sys.argv[3]
now = time.process_time if clock == "cpu" else time.perf_counter
# TPC-DS under bench.tpcds.run's memory budget
es = ember.Session({"ember.execution.memoryBudget": "2g"} if suite == "tpcds" else {})
if suite == "tpcds":
    from bench.tpcds import datagen
    datagen.register(es, datagen.paths_in(data))
    texts = datagen.spark_queries()
    text = texts.__getitem__
else:
    from bench.tpch import datagen
    tables = ["customer", "lineitem", "nation", "orders", "part", "partsupp", "region", "supplier"]
    datagen.register_ember(es, {t: f"{data}/{t}.parquet" for t in tables})
    text = lambda q: open(f"bench/tpch/queries/q{q:02d}.sql").read()
sqls = {}
for line in sys.stdin:
    q = int(line)
    if q not in sqls:
        sqls[q] = text(q)
        es.sql(sqls[q]).to_arrow()
    t = now()
    es.sql(sqls[q]).to_arrow()
    print(f"{now() - t:.6f}", flush=True)
"""


def _worker(src: str, suite: str, data: str, clock: str) -> subprocess.Popen:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([src, str(ROOT)])}
    return subprocess.Popen([sys.executable, "-c", _WORKER, suite, data, clock],
                            stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, text=True, cwd=ROOT, env=env)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--old", required=True, help="the old tree's src directory")
    ap.add_argument("--new", default=str(ROOT / "src"), help="the new tree's src directory")
    ap.add_argument("--suite", choices=("tpch", "tpcds"), default="tpch")
    ap.add_argument("--data", help="directory of the Parquet files (default /tmp/tpch_sf1, "
                    "/tmp/tpcds_sf001 with --suite tpcds)")
    ap.add_argument("--queries", help="comma-separated query numbers (default: TPC-H's 12 "
                    "join-heavy queries, or all 99 TPC-DS queries)")
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--clock", choices=("wall", "cpu"), default="wall",
                    help="wall time, or the worker's CPU time (all its threads): steadier on a "
                    "loaded machine, blind to time spent waiting")
    args = ap.parse_args(argv)
    tpcds = args.suite == "tpcds"
    data = args.data or ("/tmp/tpcds_sf001" if tpcds else "/tmp/tpch_sf1")
    default = range(1, 100) if tpcds else QUERIES
    queries = [int(q) for q in args.queries.split(",")] if args.queries else list(default)
    procs = {"old": _worker(args.old, args.suite, data, args.clock),
             "new": _worker(args.new, args.suite, data, args.clock)}
    load = os.getloadavg()
    print(f"{args.suite} from {data}; {args.clock} time, best of {args.repeat} per version; "
          "load average "
          f"{load[0]:.2f} {load[1]:.2f} {load[2]:.2f}", flush=True)

    def run(which: str, q: int) -> float:
        p = procs[which]
        p.stdin.write(f"{q}\n")
        p.stdin.flush()
        line = p.stdout.readline()
        if not line:
            raise SystemExit(f"the {which} worker failed on Q{q:02d}")
        return float(line)

    logs = {"old": 0.0, "new": 0.0}
    round_logs = [0.0] * args.repeat  # per round: sum of log(new / old)
    try:
        for q in queries:
            best = {"old": math.inf, "new": math.inf}
            for i in range(args.repeat):
                t = {}
                for which in (("old", "new") if i % 2 == 0 else ("new", "old")):
                    t[which] = run(which, q)
                    best[which] = min(best[which], t[which])
                round_logs[i] += math.log(t["new"] / t["old"])
            for which in logs:
                logs[which] += math.log(best[which])
            print(f"Q{q:02d}  old {best['old']:.4f}s  new {best['new']:.4f}s  "
                  f"new/old {best['new'] / best['old']:.2f}", flush=True)
    finally:
        for p in procs.values():
            p.stdin.close()
            p.wait()
    g = {k: math.exp(v / len(queries)) for k, v in logs.items()}
    rounds = [math.exp(v / len(queries)) for v in round_logs]
    load = os.getloadavg()
    print(f"geomean over {len(queries)} queries: old {g['old']:.4f}s, new {g['new']:.4f}s, "
          f"new/old {g['new'] / g['old']:.3f} (one round's new/old: {min(rounds):.3f} to "
          f"{max(rounds):.3f} over {args.repeat} rounds); load average {load[0]:.2f} "
          f"{load[1]:.2f} {load[2]:.2f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
