"""Compare two Ember source trees on TPC-DS, query by query, in the same minutes.

``bench.tpch.versions`` with a TPC-DS worker (every table registered once, memory budget 2g as
``bench.tpcds.run`` sets it, each query run once before timing); old and new alternate run by
run, and each one's best time per query is kept::

    git archive <commit> src | tar -x -C /tmp/old
    python -m bench.tpcds.versions --old /tmp/old/src --data /tmp/tpcds_sf1 --repeat 3 \\
        --queries 22,39,21

prints per-query best times, the new/old ratio and each tree's spread (slowest run over best),
the geomean ratio and the load average.
"""

from __future__ import annotations

from bench.tpcds import datagen
from bench.tpch import versions

_WORKER = r"""
import sys, time
import ember
from bench.tpcds import datagen
es = ember.Session({"ember.execution.memoryBudget": "2g"})
datagen.register(es, datagen.paths_in(sys.argv[1]))
sqls = {}
for line in sys.stdin:
    q = int(line)
    if q not in sqls:
        sqls[q] = open(f"bench/tpcds/queries/q{q:02d}.sql").read()
        es.sql(sqls[q]).to_arrow()
    t = time.perf_counter()
    es.sql(sqls[q]).to_arrow()
    print(f"{time.perf_counter() - t:.6f}", flush=True)
"""


def main(argv: list[str] | None = None) -> int:
    return versions.main(argv, script=_WORKER, queries=datagen.QUERIES, data="/tmp/tpcds_sf1",
                         description=__doc__.splitlines()[0])


if __name__ == "__main__":
    raise SystemExit(main())
