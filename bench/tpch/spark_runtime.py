"""TPC-H on Apache Spark: Ember's plans on the Spark runtime against Spark SQL native, in the
same SparkSession (same JVM, same executors, same Parquet files).

Not a test.  Run::

    python -m bench.tpch.spark_runtime [--data /tmp/tpch_sf1] [--sf 1] [--repeat 2]
        [--master local[2]] [--queries 1,2,...,22] [--partitions 8] [--static]

Data is generated offline with ``duckdb-extension-tpch`` when ``--data`` holds no
``lineitem.parquet``.  Both engines read the files through ``CREATE TEMP VIEW ... USING
parquet``:

* Spark SQL native: ``spark.sql(q).toArrow()`` (adaptive execution at Spark's default, on);
* Ember on Spark: ``ember.Session(runtime="spark", spark=spark).sql(q).to_arrow()``: Ember
  parses, optimizes and plans; Spark runs the plan (its readers, shuffles, broadcasts and
  Python workers running Ember's operators).

Both get ``spark.sql.shuffle.partitions = --partitions``, and the session the setting Ember
gives a SparkSession it builds (``ember.runtime.spark.session.SPARK_DEFAULTS``: Python workers
over a Unix socket, which Spark SQL native does not use).  Each query runs once to warm up
(JIT, file listing, Python workers), then the best of ``--repeat``; Ember's answer is checked
against Spark's (``bench.tpch.compare.diff``).  Prints per-query times, the geometric means and
the ratio Ember-on-Spark / Spark native (issue 5's target: at most 1.3x).
"""

from __future__ import annotations

import argparse
import os
import sys
import time

from bench.tpch import datagen
from bench.tpch.compare import diff
from bench.tpch.engines import _best, _geomean, machine
from ember.runtime.spark.session import SPARK_DEFAULTS


def spark_session(master: str, partitions: int):
    os.environ["PYSPARK_PYTHON"] = sys.executable
    from pyspark.sql import SparkSession

    spark = (SparkSession.builder.master(master).appName("ember-bench-spark-runtime")
             .config("spark.ui.enabled", "false")
             .config("spark.ui.showConsoleProgress", "false")
             .config("spark.driver.memory", "8g")
             .config("spark.sql.session.timeZone", "UTC")
             .config("spark.sql.shuffle.partitions", str(partitions))
             # Ember's default for a session it builds (Python workers over a Unix socket;
             # Spark SQL native runs no Python worker)
             .config("spark.python.unix.domain.socket.enabled",
                     SPARK_DEFAULTS["spark.python.unix.domain.socket.enabled"])
             .getOrCreate())
    spark.sparkContext.setLogLevel("ERROR")
    return spark


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--data", default="/tmp/tpch_sf1")
    ap.add_argument("--sf", type=float, default=1.0)
    ap.add_argument("--repeat", type=int, default=2)
    ap.add_argument("--master", default="local[2]")
    ap.add_argument("--partitions", type=int, default=8)
    ap.add_argument("--queries", default=",".join(str(q) for q in range(1, 23)))
    ap.add_argument("--static", action="store_true",
                    help="also run Ember's static plans (spark.sql.adaptive.enabled=false), "
                         "to show what the adaptive join conversion gains")
    args = ap.parse_args(argv)
    queries = [int(q) for q in args.queries.split(",")]

    if not os.path.exists(os.path.join(args.data, "lineitem.parquet")):
        print(f"generating TPC-H SF{args.sf} into {args.data} ...", flush=True)
        datagen.generate(args.data, args.sf)
    paths = {t: os.path.join(args.data, f"{t}.parquet") for t in datagen.TABLES}
    sql = datagen.spark_queries()

    import ember

    spark = spark_session(args.master, args.partitions)
    native = spark.newSession()
    datagen.register_ember(native, paths)
    on_spark = ember.Session({"spark.sql.shuffle.partitions": str(args.partitions)},
                             runtime="spark", spark=spark)
    datagen.register_ember(on_spark, paths)
    static = None
    if args.static:
        static = ember.Session({"spark.sql.shuffle.partitions": str(args.partitions),
                                "spark.sql.adaptive.enabled": "false"}, runtime="spark",
                               spark=spark)
        datagen.register_ember(static, paths)
    print(f"TPC-H SF{args.sf} from {args.data} on Spark {spark.version} "
          f"({spark.sparkContext.master}, {args.partitions} shuffle partitions); {machine()}; "
          f"best of {args.repeat} after one warm-up run", flush=True)
    head = f"{'query':<6}{'ember on spark':>16}{'spark native':>14}{'ratio':>8}"
    if static is not None:
        head += f"{'ember static':>14}{'ratio':>8}"
    print(head + "   answer", flush=True)

    times: dict[str, dict[int, float]] = {"ember": {}, "spark": {}, "static": {}}
    for n in queries:
        runs = {"ember": lambda: on_spark.sql(sql[n]).to_arrow(),
                "spark": lambda: native.sql(sql[n]).toArrow()}
        if static is not None:
            runs["static"] = lambda: static.sql(sql[n]).to_arrow()
        outs = {}
        try:
            for name, run in runs.items():
                run()
                times[name][n], outs[name] = _best(run, args.repeat)
        except Exception as exc:  # noqa: BLE001 - report and go on
            print(f"Q{n:02d}   failed: {type(exc).__name__}: {str(exc).splitlines()[0][:160]}",
                  flush=True)
            for t in times.values():
                t.pop(n, None)
            continue
        problems = [p for p in (diff(outs[k], outs["spark"]) for k in outs if k != "spark") if p]
        check = "ok (= Spark)" if not problems else f"DIFFERS: {problems[0]}"
        e, sp = times["ember"][n], times["spark"][n]
        line = f"Q{n:02d}  {e:14.3f}s{sp:13.3f}s{e / sp:7.2f}x"
        if static is not None:
            st = times["static"][n]
            line += f"{st:13.3f}s{st / sp:7.2f}x"
        print(f"{line}   {check}", flush=True)

    common = [n for n in queries if n in times["ember"] and n in times["spark"]]
    ge, gs = (_geomean([times[k][n] for n in common]) for k in ("ember", "spark"))
    print(f"\ngeomean over {len(common)} queries: ember on spark {ge:.3f}s, spark native "
          f"{gs:.3f}s, ember-on-spark/spark = {ge / gs:.2f}x")
    if static is not None:
        gst = _geomean([times["static"][n] for n in common])
        print(f"ember static plans {gst:.3f}s, static/spark = {gst / gs:.2f}x")
    spark.stop()


if __name__ == "__main__":
    main()
