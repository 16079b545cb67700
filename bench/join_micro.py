"""Join micro-benchmarks (issue 4 item 7): Ember vs Spark SQL native vs DuckDB vs Polars.

Not a test.  Run (from the repo root)::

    /work/venv/bin/python bench/join_micro.py [--left 10000000] [--right 1000000]
        [--band-left 50000] [--band-right 5000] [--engines ember,spark,duckdb,polars]
        [--cases inner,left,...] [--repeat 2] [--data /tmp/ember_join_micro] [--plans]

Data (numpy, seed 0), written once as Parquet under ``--data`` (one directory per size) and read
by every engine from the same files:

* ``l`` (``--left`` rows): ``k bigint`` uniform in ``0 .. 2*right`` (about half of the rows find a
  partner; 1% NULL), ``v bigint`` in ``0 .. 999``;
* ``r`` (``--right`` rows): ``k bigint`` a permutation of ``0 .. right-1`` (unique), ``w bigint``;
* ``bl`` / ``br`` (``--band-left`` / ``--band-right`` rows): ``t bigint`` uniform in
  ``0 .. 1,000,000``, ``x bigint`` -- the band join's inputs.

Every case is one SQL query returning an *aggregate* over the join output (a row count plus sums
as a checksum), so each engine materialises the join but not a 10M-row result.  Cases: one per join
type under the default configuration (whatever JoinSelection picks: ``--plans`` prints Ember's
physical join), ``exists_or`` (EXISTS under OR: an ExistenceJoin), ``not_in`` (null-aware anti
join; the broadcast threshold is raised so Spark plans a broadcast rather than a nested loop),
forced algorithms (``*_smj``: MERGE hint and broadcast off; ``*_shj``: SHUFFLE_HASH hint;
``inner_bhj``: BROADCAST hint) and ``band`` (``bl.t BETWEEN br.t - 5 AND br.t + 5``, no equi key:
BroadcastNestedLoopJoin in Ember and Spark, an IEJoin/range join in DuckDB, a cross join plus
filter in Polars).  Hints and confs apply to Ember and Spark; DuckDB and Polars plan on their own.

Engines, each warm in the same process: Ember (``session.sql(q).to_arrow()``), Spark
(``local[2]``, UI off, driver 8g, each query run once before timing, ``collect()``), DuckDB
(views over ``read_parquet``, ``.arrow()``), Polars (LazyFrame API over ``scan_parquet``,
``collect()``).  Per case: best wall time of ``--repeat`` runs per engine, Ember's answer checked
against DuckDB's (every aggregate equal), ratios Ember/peer; then geomeans per engine and of the
ratios.
"""

from __future__ import annotations

import argparse
import math
import os
import platform
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

DEFAULT_CONFS = {
    "spark.sql.autoBroadcastJoinThreshold": "10485760",
    "spark.sql.join.preferSortMergeJoin": "true",
    "ember.join.forceApplyShuffledHashJoin": "false",
}
NO_BROADCAST = {"spark.sql.autoBroadcastJoinThreshold": "-1"}
BIG_BROADCAST = {"spark.sql.autoBroadcastJoinThreshold": str(1 << 30)}

_INNER_AGG = "count(*) AS c, sum(l.v) AS sv, sum(r.w) AS sw"
_OUTER_AGG = "count(*) AS c, count(l.k) AS cl, count(r.k) AS cr, sum(l.v) AS sv, sum(r.w) AS sw"
_EXIST_AGG = "count(*) AS c, sum(v) AS sv"


@dataclass(frozen=True)
class Case:
    """One benchmark query: Spark/Ember SQL, DuckDB SQL, a Polars LazyFrame builder, confs."""

    name: str
    sql: str
    duck: str
    polars: Callable[[dict], object]
    confs: dict = field(default_factory=dict)
    band: bool = False


def _pl():
    import polars as pl

    return pl


def _p_join(how: str, aggs: str) -> Callable[[dict], object]:
    def build(t: dict):
        pl = _pl()
        lf, rf = t["l"], t["r"].with_columns(pl.col("k").alias("rk"))
        if how == "right":  # Polars' right join keeps the right key only: join the other way
            j = rf.join(lf.with_columns(pl.col("k").alias("lk")), on="k", how="left")
        else:
            j = lf.with_columns(pl.col("k").alias("lk")).join(
                rf, on="k", how=how, coalesce=False, nulls_equal=False)
        if aggs == "inner":
            return j.select(pl.len().alias("c"), pl.col("v").sum().alias("sv"),
                            pl.col("w").sum().alias("sw"))
        return j.select(pl.len().alias("c"), pl.col("lk").count().alias("cl"),
                        pl.col("rk").count().alias("cr"), pl.col("v").sum().alias("sv"),
                        pl.col("w").sum().alias("sw"))
    return build


def _p_exist(kind: str) -> Callable[[dict], object]:
    def build(t: dict):
        pl = _pl()
        lf, rf = t["l"], t["r"]
        if kind in ("semi", "anti"):
            j = lf.join(rf.select("k"), on="k", how=kind)
        else:
            keys = rf.select("k").collect().to_series()
            inn = pl.col("k").is_in(keys.implode())
            j = lf.filter((inn | (pl.col("v") < 100)) if kind == "exists_or" else ~inn)
        return j.select(pl.len().alias("c"), pl.col("v").sum().alias("sv"))
    return build


def _p_band(t: dict):
    pl = _pl()
    a, b = t["bl"], t["br"].rename({"t": "t2", "x": "x2"})
    j = a.join_where(b, pl.col("t") >= pl.col("t2") - 5, pl.col("t") <= pl.col("t2") + 5)
    return j.select(pl.len().alias("c"), pl.col("x").sum().alias("sx"),
                    pl.col("x2").sum().alias("sx2"))


def cases() -> list[Case]:
    out: list[Case] = []
    jsql = {"inner": "JOIN", "left": "LEFT JOIN", "right": "RIGHT JOIN", "full": "FULL JOIN"}
    for name, kw in jsql.items():
        agg = _INNER_AGG if name == "inner" else _OUTER_AGG
        q = f"SELECT {agg} FROM l {kw} r ON l.k = r.k"
        out.append(Case(name, q, q, _p_join(name, "inner" if name == "inner" else "outer")))
    out.append(Case("left_semi", f"SELECT {_EXIST_AGG} FROM l LEFT SEMI JOIN r ON l.k = r.k",
                    f"SELECT {_EXIST_AGG} FROM l SEMI JOIN r ON l.k = r.k", _p_exist("semi")))
    out.append(Case("left_anti", f"SELECT {_EXIST_AGG} FROM l LEFT ANTI JOIN r ON l.k = r.k",
                    f"SELECT {_EXIST_AGG} FROM l ANTI JOIN r ON l.k = r.k", _p_exist("anti")))
    q = (f"SELECT {_EXIST_AGG} FROM l WHERE EXISTS (SELECT 1 FROM r WHERE r.k = l.k) "
         "OR l.v < 100")
    out.append(Case("exists_or", q, q, _p_exist("exists_or")))
    q = f"SELECT {_EXIST_AGG} FROM l WHERE l.k NOT IN (SELECT k FROM r)"
    out.append(Case("not_in", q, q, _p_exist("not_in"), BIG_BROADCAST))
    for name, kw in (("inner", "JOIN"), ("left", "LEFT JOIN"), ("full", "FULL JOIN")):
        agg = _INNER_AGG if name == "inner" else _OUTER_AGG
        base = f"FROM l {kw} r ON l.k = r.k"
        how = "inner" if name == "inner" else "outer"
        out.append(Case(f"{name}_smj", f"SELECT /*+ MERGE(l, r) */ {agg} {base}",
                        f"SELECT {agg} {base}", _p_join(name, how), NO_BROADCAST))
        out.append(Case(f"{name}_shj", f"SELECT /*+ SHUFFLE_HASH(r) */ {agg} {base}",
                        f"SELECT {agg} {base}", _p_join(name, how), NO_BROADCAST))
    q = f"SELECT /*+ BROADCAST(r) */ {_INNER_AGG} FROM l JOIN r ON l.k = r.k"
    out.append(Case("inner_bhj", q, q.replace("/*+ BROADCAST(r) */ ", ""), _p_join("inner", "inner")))
    q = ("SELECT count(*) AS c, sum(bl.x) AS sx, sum(br.x) AS sx2 FROM bl JOIN br "
         "ON bl.t BETWEEN br.t - 5 AND br.t + 5")
    out.append(Case("band", q, q, _p_band, band=True))
    return out


# ---------------------------------------------------------------------------------------------
# Data


def make_data(root: str, n_left: int, n_right: int, n_bl: int, n_br: int) -> dict[str, str]:
    """Write the four tables as Parquet (once per size); returns table -> path."""
    d = os.path.join(root, f"l{n_left}_r{n_right}_b{n_bl}x{n_br}")
    paths = {t: os.path.join(d, f"{t}.parquet") for t in ("l", "r", "bl", "br")}
    if all(os.path.exists(p) for p in paths.values()):
        return paths
    os.makedirs(d, exist_ok=True)
    rng = np.random.default_rng(0)
    lk = rng.integers(0, 2 * n_right, n_left)
    lnull = rng.random(n_left) < 0.01
    tables = {
        "l": pa.table({"k": pa.array(lk, mask=lnull), "v": rng.integers(0, 1000, n_left)}),
        "r": pa.table({"k": rng.permutation(n_right).astype(np.int64),
                       "w": rng.integers(0, 1000, n_right)}),
        "bl": pa.table({"t": rng.integers(0, 1_000_000, n_bl), "x": rng.integers(0, 1000, n_bl)}),
        "br": pa.table({"t": rng.integers(0, 1_000_000, n_br), "x": rng.integers(0, 1000, n_br)}),
    }
    for t, tab in tables.items():
        pq.write_table(tab, paths[t] + ".tmp", row_group_size=1 << 20)
        os.replace(paths[t] + ".tmp", paths[t])
    return paths


# ---------------------------------------------------------------------------------------------
# Engines


class Engine:
    name = "?"

    def run(self, case: Case) -> object:
        raise NotImplementedError

    def set_confs(self, confs: dict) -> None:
        pass


class EmberEngine(Engine):
    name = "ember"

    def __init__(self, paths: dict[str, str]) -> None:
        import ember

        self.s = ember.Session()
        for t, p in paths.items():
            self.s.sql(f"CREATE OR REPLACE TEMP VIEW {t} USING parquet OPTIONS (path '{p}')")

    def set_confs(self, confs: dict) -> None:
        for k, v in {**DEFAULT_CONFS, **confs}.items():
            self.s.sql(f"SET {k}={v}")

    def run(self, case: Case) -> pa.Table:
        return self.s.sql(case.sql).to_arrow()

    def joins(self, case: Case) -> str:
        plan = self.s.sql(case.sql)._qe.executed_plan
        found = []
        plan.foreach(lambda n: found.append(type(n).__name__[:-4] if type(n).__name__.endswith(
            "Exec") else type(n).__name__)
                     if type(n).__name__.endswith("JoinExec")
                     or type(n).__name__ == "CartesianProductExec" else None)
        return ", ".join(found)


class SparkEngine(Engine):
    name = "spark"

    def __init__(self, paths: dict[str, str]) -> None:
        os.environ["PYSPARK_PYTHON"] = sys.executable
        from pyspark.sql import SparkSession

        self.s = (SparkSession.builder.master("local[2]").appName("ember-join-micro")
                  .config("spark.ui.enabled", "false")
                  .config("spark.ui.showConsoleProgress", "false")
                  .config("spark.driver.memory", "8g")
                  .config("spark.sql.session.timeZone", "UTC")
                  .getOrCreate())
        self.s.sparkContext.setLogLevel("ERROR")
        for t, p in paths.items():
            self.s.sql(f"CREATE OR REPLACE TEMP VIEW {t} USING parquet OPTIONS (path '{p}')")
        self.warm: set[str] = set()

    def set_confs(self, confs: dict) -> None:
        for k, v in {**DEFAULT_CONFS, **confs}.items():
            self.s.conf.set(k, v)

    def run(self, case: Case) -> object:
        if case.name not in self.warm:  # warm-up: JIT, file listing, broadcasts
            self.warm.add(case.name)
            self.s.sql(case.sql).collect()
        return self.s.sql(case.sql).collect()


class DuckEngine(Engine):
    name = "duckdb"

    def __init__(self, paths: dict[str, str]) -> None:
        import duckdb

        self.con = duckdb.connect()
        for t, p in paths.items():
            self.con.execute(f"CREATE OR REPLACE VIEW {t} AS SELECT * FROM read_parquet('{p}')")

    def run(self, case: Case) -> pa.Table:
        out = self.con.execute(case.duck).arrow()
        return out.read_all() if isinstance(out, pa.RecordBatchReader) else out


class PolarsEngine(Engine):
    name = "polars"

    def __init__(self, paths: dict[str, str]) -> None:
        pl = _pl()
        self.frames = {t: pl.scan_parquet(p) for t, p in paths.items()}

    def run(self, case: Case) -> object:
        return case.polars(self.frames).collect()


ENGINES = {"ember": EmberEngine, "spark": SparkEngine, "duckdb": DuckEngine,
           "polars": PolarsEngine}


# ---------------------------------------------------------------------------------------------
# Running


def _row(result: object) -> tuple:
    """The single result row as Python ints (None kept)."""
    if isinstance(result, pa.Table):
        vals = [result.column(i)[0].as_py() for i in range(result.num_columns)]
    elif isinstance(result, list):  # Spark rows
        vals = list(result[0])
    else:  # polars DataFrame
        vals = list(result.row(0))
    return tuple(None if v is None else int(v) for v in vals)


def _best(fn: Callable[[], object], repeat: int) -> tuple[float, object]:
    best, out = math.inf, None
    for _ in range(max(1, repeat)):
        t0 = time.perf_counter()
        out = fn()
        best = min(best, time.perf_counter() - t0)
    return best, out


def _geomean(xs: list[float]) -> float:
    xs = [x for x in xs if x > 0 and math.isfinite(x)]
    return math.exp(sum(math.log(x) for x in xs) / len(xs)) if xs else math.nan


def machine() -> str:
    """One line describing this machine and the engines' versions."""
    mem = ""
    try:
        with open("/proc/meminfo") as f:
            mem = f", {int(f.readline().split()[1]) / 2**20:.0f} GiB RAM"
    except OSError:
        pass
    vers = []
    for mod in ("pyarrow", "numpy", "duckdb", "polars", "pyspark"):
        try:
            vers.append(f"{mod} {__import__(mod).__version__}")
        except ImportError:
            pass
    return (f"{platform.machine()}, {os.cpu_count()} cores{mem}, Python "
            f"{platform.python_version()}, {platform.system()} {platform.release()}; "
            + ", ".join(vers))


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--left", type=int, default=10_000_000)
    ap.add_argument("--right", type=int, default=1_000_000)
    ap.add_argument("--band-left", type=int, default=50_000)
    ap.add_argument("--band-right", type=int, default=5_000)
    ap.add_argument("--engines", default="ember,spark,duckdb,polars")
    ap.add_argument("--cases", default="", help="comma-separated case names (default: all)")
    ap.add_argument("--repeat", type=int, default=2)
    ap.add_argument("--data", default="/tmp/ember_join_micro")
    ap.add_argument("--plans", action="store_true", help="print Ember's physical joins per case")
    args = ap.parse_args(argv)

    all_cases = cases()
    wanted = [c.strip() for c in args.cases.split(",") if c.strip()]
    unknown = set(wanted) - {c.name for c in all_cases}
    if unknown:
        ap.error(f"unknown cases {sorted(unknown)}; known: {[c.name for c in all_cases]}")
    run_cases = [c for c in all_cases if not wanted or c.name in wanted]
    names = [e.strip() for e in args.engines.split(",") if e.strip()]

    paths = make_data(args.data, args.left, args.right, args.band_left, args.band_right)
    print(f"join micro-benchmarks: l={args.left:,} x r={args.right:,}, band "
          f"{args.band_left:,} x {args.band_right:,}; best of {args.repeat}", flush=True)
    print(machine(), flush=True)
    engines = {n: ENGINES[n](paths) for n in names}
    checker = engines.get("duckdb") or DuckEngine(paths)

    times: dict[str, dict[str, float]] = {n: {} for n in engines}
    peers = [n for n in engines if n != "ember"]
    head = f"{'case':12s}" + "".join(f"{n:>10s}" for n in engines)
    if "ember" in engines:
        head += "".join(f"{'e/' + p[:5]:>9s}" for p in peers) + "  check"
    print(head, flush=True)
    for case in run_cases:
        cells, check, plan = [], "", ""
        ember_row = None
        for n, eng in engines.items():
            try:
                eng.set_confs(case.confs)
                t, out = _best(lambda: eng.run(case), args.repeat)
                times[n][case.name] = t
                cells.append(f"{t:9.3f}s")
                if n == "ember":
                    ember_row = _row(out)
                    if args.plans:
                        plan = eng.joins(case)
            except Exception as exc:  # noqa: BLE001 - a peer's failure is reported, not fatal
                cells.append(f"{'n/a':>10s}")
                print(f"  {case.name} {n}: {type(exc).__name__}: "
                      f"{str(exc).splitlines()[0][:160] if str(exc) else ''}", file=sys.stderr)
        line = f"{case.name:12s}" + "".join(cells)
        if "ember" in engines:
            for p in peers:
                e, o = times["ember"].get(case.name), times[p].get(case.name)
                line += f"{e / o:8.2f}x" if e and o else f"{'-':>9s}"
            if ember_row is None:
                check = "FAILED"
            else:
                ref = _row(checker.run(case))
                check = "ok" if ref == ember_row else f"DIFFERS ember={ember_row} duckdb={ref}"
            line += "  " + check
        print(line + (f"  [{plan}]" if plan else ""), flush=True)

    print()
    for n in engines:
        if times[n]:
            print(f"geomean {n:7s} {_geomean(list(times[n].values())):8.3f}s over "
                  f"{len(times[n])} cases")
    if "ember" in engines:
        for p in peers:
            common = [c for c in times["ember"] if c in times[p]]
            if common:
                r = _geomean([times["ember"][c] / times[p][c] for c in common])
                worst = max(common, key=lambda c: times["ember"][c] / times[p][c])
                print(f"ember/{p}: geomean {r:.2f}x over {len(common)} cases; worst {worst} "
                      f"{times['ember'][worst] / times[p][worst]:.2f}x")


if __name__ == "__main__":
    main()
