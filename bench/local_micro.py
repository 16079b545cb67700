"""Micro-benchmark of the local runtime: Ember vs DuckDB vs Polars on generated data.

Not a test.  Install the peers with ``pip install -e '.[bench]'``, then run::

    python bench/local_micro.py [--rows 10000000] [--dim 1000000]
        [--engines ember,duckdb,polars] [--cases filter_project,groupby_1k,...] [--repeat 1]

Data (numpy, seed 0): a fact table ``f`` of ``--rows`` rows

    k1k bigint (1K distinct), k1m bigint (1M distinct), k2m bigint (0 .. 2*dim: half of the rows
    find a partner in ``d``), v double, i bigint, dec decimal(18,2), s string

and a dimension table ``d`` of ``--dim`` rows (``id`` a permutation of 0 .. dim-1, ``w`` bigint).
Every engine runs the same SQL and materialises the full result as Arrow (Ember ``to_arrow``,
DuckDB ``.arrow()``, Polars ``collect()``).  Prints the time per case (best of ``--repeat``), the
Ember/DuckDB and Ember/Polars ratios, and the process's peak RSS after each case
(``resource.getrusage``; a peak, so it only grows -- run one case alone to measure it).
"""

from __future__ import annotations

import argparse
import resource
import sys
import time

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

CASES: dict[str, str] = {
    "filter_project": "SELECT i + 1 AS a, v * 2.0 AS b FROM f WHERE v > 0.5 AND k1k < 500",
    "groupby_1k": "SELECT k1k, count(*) AS c, sum(i) AS s, avg(v) AS a, min(v) AS mn, "
                  "max(i) AS mx FROM f GROUP BY k1k",
    "groupby_1m": "SELECT k1m, count(*) AS c, sum(i) AS s, avg(v) AS a, min(v) AS mn, "
                  "max(i) AS mx FROM f GROUP BY k1m",
    "count_distinct": "SELECT count(DISTINCT k1m) AS c FROM f",
    "decimal_sum": "SELECT sum(dec) AS s FROM f",
    "decimal_sum_1k": "SELECT k1k, sum(dec) AS s FROM f GROUP BY k1k",
    "string_upper_substr": "SELECT upper(s) AS u, substring(s, 2, 5) AS p FROM f",
    "join_inner": "SELECT f.i, d.w FROM f JOIN d ON f.k2m = d.id",
    "join_left": "SELECT f.i, d.w FROM f LEFT JOIN d ON f.k2m = d.id",
    "join_semi": "SELECT f.i FROM f LEFT SEMI JOIN d ON f.k2m = d.id",
    "join_anti": "SELECT f.i FROM f LEFT ANTI JOIN d ON f.k2m = d.id",
    "sort": "SELECT i, v FROM f ORDER BY v",
}

# Polars' SQL has no LEFT SEMI / LEFT ANTI syntax and no `substring` alias differences matter:
# equivalent spellings where needed.
POLARS_SQL: dict[str, str] = {
    "join_semi": "SELECT f.i FROM f WHERE f.k2m IN (SELECT id FROM d)",
    "join_anti": "SELECT f.i FROM f WHERE f.k2m NOT IN (SELECT id FROM d)",
}
DUCKDB_SQL: dict[str, str] = {
    "join_semi": "SELECT f.i FROM f SEMI JOIN d ON f.k2m = d.id",
    "join_anti": "SELECT f.i FROM f ANTI JOIN d ON f.k2m = d.id",
}


def make_data(rows: int, dim: int) -> tuple[pa.Table, pa.Table]:
    rng = np.random.default_rng(0)
    k1m = rng.integers(0, 1_000_000, rows)
    units = rng.integers(-10**9, 10**9, rows)  # unscaled cents
    # decimal(18,2) built from its unscaled 128-bit little-endian words (low, sign-extended high)
    words = np.stack([units, units >> 63], axis=1).astype(np.int64)
    dec = pa.Array.from_buffers(pa.decimal128(18, 2), rows, [None, pa.py_buffer(words.tobytes())])
    s = pc.binary_join_element_wise(pa.array(np.full(rows, "item_")),
                                    pc.cast(pa.array(k1m % 100_000), pa.string()), "")
    f = pa.table({
        "k1k": rng.integers(0, 1_000, rows),
        "k1m": k1m,
        "k2m": rng.integers(0, 2 * dim, rows),
        "v": rng.random(rows),
        "i": rng.integers(0, 1_000_000, rows),
        "dec": dec,
        "s": s,
    })
    d = pa.table({"id": rng.permutation(dim).astype(np.int64), "w": rng.integers(0, 100, dim)})
    return f, d


def peak_rss_mb() -> float:
    # ru_maxrss is in KiB on Linux.
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


class Ember:
    name = "ember"

    def __init__(self, f: pa.Table, d: pa.Table) -> None:
        from ember import Session

        self.session = Session()
        self.session.createDataFrame(f).createOrReplaceTempView("f")
        self.session.createDataFrame(d).createOrReplaceTempView("d")

    def run(self, case: str) -> int:
        return self.session.sql(CASES[case]).to_arrow().num_rows


class DuckDB:
    name = "duckdb"

    def __init__(self, f: pa.Table, d: pa.Table) -> None:
        import duckdb

        self.con = duckdb.connect()
        self.con.register("f_arrow", f)
        self.con.register("d_arrow", d)
        # Load into DuckDB's own storage (as Ember/Polars hold the data in memory too).
        self.con.execute("CREATE TABLE f AS SELECT * FROM f_arrow")
        self.con.execute("CREATE TABLE d AS SELECT * FROM d_arrow")

    def run(self, case: str) -> int:
        res = self.con.sql(DUCKDB_SQL.get(case, CASES[case])).arrow()
        return res.num_rows if hasattr(res, "num_rows") else res.read_all().num_rows


class Polars:
    name = "polars"

    def __init__(self, f: pa.Table, d: pa.Table) -> None:
        import polars as pl

        self.pl = pl
        self.ctx = pl.SQLContext(f=pl.from_arrow(f), d=pl.from_arrow(d))

    def run(self, case: str) -> int:
        return self.ctx.execute(POLARS_SQL.get(case, CASES[case]), eager=True).height


ENGINES = {"ember": Ember, "duckdb": DuckDB, "polars": Polars}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--rows", type=int, default=10_000_000)
    ap.add_argument("--dim", type=int, default=1_000_000)
    ap.add_argument("--engines", default="ember,duckdb,polars")
    ap.add_argument("--cases", default=",".join(CASES))
    ap.add_argument("--repeat", type=int, default=1)
    args = ap.parse_args()
    cases = [c for c in args.cases.split(",") if c]
    unknown = [c for c in cases if c not in CASES]
    if unknown:
        sys.exit(f"unknown cases {unknown}; known: {list(CASES)}")

    t0 = time.perf_counter()
    f, d = make_data(args.rows, args.dim)
    print(f"data: f={args.rows:,} rows, d={args.dim:,} rows, generated in "
          f"{time.perf_counter() - t0:.1f}s; peak RSS {peak_rss_mb():,.0f} MB", flush=True)

    times: dict[str, dict[str, float]] = {}
    for ename in args.engines.split(","):
        eng = ENGINES[ename](f, d)
        times[ename] = {}
        for case in cases:
            best = float("inf")
            rows = -1
            for _ in range(args.repeat):
                t = time.perf_counter()
                try:
                    rows = eng.run(case)
                except Exception as e:  # noqa: BLE001 - a benchmark reports and goes on
                    print(f"  {ename:7s} {case:20s} FAILED: {type(e).__name__}: {e}"[:300],
                          flush=True)
                    best = float("nan")
                    break
                best = min(best, time.perf_counter() - t)
            times[ename][case] = best
            print(f"  {ename:7s} {case:20s} {best:8.3f}s  rows={rows:>11,}  "
                  f"peak RSS {peak_rss_mb():,.0f} MB", flush=True)
        del eng

    print()
    engines = list(times)
    header = f"{'case':20s}" + "".join(f"{e:>10s}" for e in engines)
    if "ember" in times:
        header += "".join(f"{'ember/' + e:>14s}" for e in engines if e != "ember")
    print(header)
    for case in cases:
        line = f"{case:20s}" + "".join(f"{times[e][case]:10.3f}" for e in engines)
        if "ember" in times:
            for e in engines:
                if e != "ember":
                    line += f"{times['ember'][case] / times[e][case]:14.1f}"
        print(line)
    print(f"peak RSS {peak_rss_mb():,.0f} MB")


if __name__ == "__main__":
    main()
