"""Peak memory of the local runtime against ``ember.execution.memoryBudget`` (issue 24's
``bench/memory``).

Each case runs in a fresh subprocess over Parquet inputs whose Arrow size is ``--scale`` (3) times
the budget, written once under ``--data`` by another subprocess.  The case process imports Ember,
creates a session and runs a tiny query (the *idle* process, its RSS measured), resets its peak
RSS (``/proc/self/clear_refs``), runs the case and reads the peak (``VmHWM``).  The reported
ratio is ``(peak - idle) / budget``; issue 24's target is at most 1.5 for every case.

Cases (outputs are consumed without being held: aggregated, or written to Parquet):

* ``join``: inner equi-join of two tables of 1.5x the budget each, then ``count``/``sum``;
* ``full_outer``: the same as a full outer join;
* ``sort``: ``ORDER BY`` a random key of a 3x-budget table, written to Parquet;
* ``group_by``: ``GROUP BY`` 5M keys (scaled with the budget) of a 3x-budget table, written;
* ``distinct_agg``: ``count(DISTINCT a), sum(DISTINCT b) GROUP BY g`` (an Expand of 2 rows per
  input row) over a 3x-budget table.

Run (one case at a time, each under an address-space cap)::

    python -m bench.memory [--budget 256m] [--scale 3] [--cases join,sort] [--data DIR]
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time

MiB = 1 << 20
CASES = ("join", "full_outer", "sort", "group_by", "distinct_agg")
#: int64 columns per generated row (8 bytes each)
_ROW_BYTES = {"l": 24, "r": 24, "t": 32}
#: distinct group-by keys at a 256 MiB budget (issue 24's 5M-key group-by), scaled linearly
_GROUP_KEYS_AT_256M = 5_000_000


def _parse_size(text: str) -> int:
    units = {"k": 1 << 10, "m": 1 << 20, "g": 1 << 30}
    text = text.strip().lower()
    if text[-1] in units:
        return int(float(text[:-1]) * units[text[-1]])
    return int(text)


def _rss_kib(field: str) -> int:
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith(field + ":"):
                return int(line.split()[1])
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss


# -- data ----------------------------------------------------------------------------------------
def _generate(data: str, budget: int, scale: float) -> None:
    """Write ``l`` and ``r`` (join sides, 1.5x budget each at scale 3: ``k``, ``a``, ``b``) and
    ``t`` (``scale`` x budget: ``k`` random sort key, ``g`` group key, ``a``, ``b``), in 1M-row
    chunks so the generator itself stays small."""
    import numpy as np
    import pyarrow as pa
    import pyarrow.parquet as pq

    rng = np.random.default_rng(24)
    chunk = 1 << 20
    side_rows = int(budget * scale / 2 / _ROW_BYTES["l"])
    t_rows = int(budget * scale / _ROW_BYTES["t"])
    group_keys = max(1000, int(_GROUP_KEYS_AT_256M * budget / (256 * MiB)))
    specs = {
        "l": (side_rows, lambda n, s: {
            "k": rng.integers(0, side_rows, n), "a": rng.integers(0, 1 << 32, n),
            "b": np.arange(s, s + n)}),
        "r": (side_rows, lambda n, s: {
            "k": np.arange(s, s + n)[::-1].copy(), "c": rng.integers(0, 1 << 32, n),
            "d": np.arange(s, s + n)}),
        "t": (t_rows, lambda n, s: {
            "k": rng.integers(0, 1 << 62, n), "g": rng.integers(0, group_keys, n),
            "a": rng.integers(0, t_rows, n), "b": rng.integers(0, t_rows, n)}),
    }
    for name, (rows, make) in specs.items():
        path = os.path.join(data, f"{name}.parquet")
        if os.path.exists(path):
            continue
        writer = None
        for start in range(0, rows, chunk):
            table = pa.table(make(min(chunk, rows - start), start))
            if writer is None:
                writer = pq.ParquetWriter(path + ".tmp", table.schema)
            writer.write_table(table, row_group_size=chunk)
        writer.close()
        os.rename(path + ".tmp", path)


def _data_dir(base: str | None, budget: int, scale: float) -> str:
    root = base or os.path.join(tempfile.gettempdir(), "ember-bench-memory")
    path = os.path.join(root, f"b{budget // MiB}m-x{scale:g}")
    os.makedirs(path, exist_ok=True)
    return path


# -- one case (in its own process) ---------------------------------------------------------------
def _queries(data: str, out: str) -> dict[str, tuple[str, str | None]]:
    """case -> (SQL, Parquet output path or None: collect the small result)."""
    l_, r_, t_ = (f"parquet.`{os.path.join(data, n)}.parquet`" for n in "lrt")
    return {
        "join": (f"SELECT count(*), sum(l.a), sum(r.c) FROM {l_} l JOIN {r_} r ON l.k = r.k",
                 None),
        "full_outer": (f"SELECT count(*), sum(l.a), sum(r.c), count(l.k), count(r.k) "
                       f"FROM {l_} l FULL OUTER JOIN {r_} r ON l.k = r.k + 1", None),
        "sort": (f"SELECT * FROM {t_} ORDER BY k", out),
        "group_by": (f"SELECT g, sum(a) AS sa, count(*) AS n, max(b) AS mb FROM {t_} GROUP BY g",
                     out),
        "distinct_agg": (f"SELECT g % 1000 AS g1, count(DISTINCT a) AS ca, sum(DISTINCT b) AS sb "
                         f"FROM {t_} GROUP BY g % 1000", None),
    }


def run_case(case: str, data: str, budget: int) -> dict:
    import ember

    spark = ember.Session()
    spark.conf.set("ember.execution.memoryBudget", str(budget))
    spark.sql("SELECT 1").collect()
    with tempfile.TemporaryDirectory(prefix="ember-bench-out-") as out_dir:
        sql, out = _queries(data, os.path.join(out_dir, "out"))[case]
        idle = _rss_kib("VmRSS")
        try:
            with open("/proc/self/clear_refs", "w") as f:
                f.write("5")
        except OSError:  # pragma: no cover - not Linux: peak includes the idle process's peak
            pass
        t0 = time.perf_counter()
        df = spark.sql(sql)
        if out is None:
            rows = [list(r) for r in df.collect()]
            result = rows if len(rows) <= 3 else len(rows)
        else:
            df.write.mode("overwrite").parquet(out)
            result = "written"
        seconds = time.perf_counter() - t0
        peak = _rss_kib("VmHWM")
    return {"case": case, "budget_mib": budget / MiB, "idle_mib": idle / 1024,
            "peak_mib": peak / 1024, "ratio": (peak - idle) * 1024 / budget,
            "seconds": round(seconds, 2), "result": result}


# -- driver --------------------------------------------------------------------------------------
def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--budget", default="256m")
    p.add_argument("--scale", type=float, default=3.0)
    p.add_argument("--cases", default=",".join(CASES))
    p.add_argument("--data", default=None, help="directory for the generated Parquet inputs")
    p.add_argument("--run-case", default=None, help=argparse.SUPPRESS)
    args = p.parse_args(argv)
    budget = _parse_size(args.budget)
    data = _data_dir(args.data, budget, args.scale)
    if args.run_case:
        print(json.dumps(run_case(args.run_case, data, budget)))
        return
    subprocess.run([sys.executable, "-c",
                    f"from bench.memory import _generate; _generate({data!r}, {budget}, "
                    f"{args.scale})"], check=True)
    print(f"budget {budget / MiB:.0f} MiB, inputs {args.scale:g}x, load "
          f"{os.getloadavg()[0]:.2f}")
    print(f"{'case':<14}{'idle MiB':>10}{'peak MiB':>10}{'ratio':>8}{'s':>8}  result")
    for case in args.cases.split(","):
        proc = subprocess.run([sys.executable, "-m", "bench.memory", "--budget", args.budget,
                               "--scale", str(args.scale), "--run-case", case]
                              + (["--data", args.data] if args.data else []),
                              capture_output=True, text=True)
        if proc.returncode:
            print(f"{case:<14} FAILED rc={proc.returncode}: {proc.stderr.strip()[-400:]}")
            continue
        r = json.loads(proc.stdout.strip().splitlines()[-1])
        print(f"{case:<14}{r['idle_mib']:>10.0f}{r['peak_mib']:>10.0f}{r['ratio']:>8.2f}"
              f"{r['seconds']:>8.1f}  {r['result']}", flush=True)


if __name__ == "__main__":
    main()
