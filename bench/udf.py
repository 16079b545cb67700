"""Python UDF throughput (rows per second): Ember against PySpark's Arrow-optimized UDFs and
pandas UDFs, the same functions on the same rows, in one run (issue 22).

Each kind computes ``sum(f(x))`` over ``--rows`` rows of a BIGINT and a DOUBLE column, so the
rows never travel back to the driver and the measure is the UDF's evaluation (argument
conversion, the calls, result conversion) plus the aggregate:

* ``udf``: a row-at-a-time UDF (Ember: ``useArrow=False``, values converted column-wise);
* ``arrow udf``: ``udf(useArrow=True)`` (PySpark: Arrow batches to pandas, a call per value);
* ``pandas_udf``: ``Series -> Series``, one call per batch.

Engines: Ember local (over the Arrow table), Ember on the Spark runtime and PySpark native (both
over the same cached PySpark DataFrame of 2 partitions, in one SparkSession, ``local[2]``).  Each query runs once to warm up, then ``--repeat`` times; the best
time counts.  Prints rows/s per engine and kind and Ember / PySpark throughput ratios.  Run::

    python -m bench.udf [--rows 1000000] [--repeat 3]
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from collections.abc import Callable

import numpy as np
import pandas as pd
import pyarrow as pa

import ember
from ember import functions as F


def plus_one(v):
    return None if v is None else v + 1


def scale(v: pd.Series) -> pd.Series:
    return v * 1.5 + 1


def _best(run: Callable[[], object], repeat: int) -> float:
    run()
    best = float("inf")
    for _ in range(repeat):
        start = time.perf_counter()
        run()
        best = min(best, time.perf_counter() - start)
    return best


def _cases(lib, x, d):
    return {
        "udf": lambda df: df.select(lib.udf(plus_one, "long", useArrow=False)(x).alias("y")),
        "arrow udf": lambda df: df.select(lib.udf(plus_one, "long", useArrow=True)(x).alias("y")),
        "pandas_udf": lambda df: df.select(lib.pandas_udf(scale, "double")(d).alias("y")),
    }


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--rows", type=int, default=1_000_000)
    p.add_argument("--repeat", type=int, default=3)
    args = p.parse_args(argv)

    os.environ["PYSPARK_PYTHON"] = sys.executable
    from pyspark.sql import SparkSession
    from pyspark.sql import functions as SF

    spark = (SparkSession.builder.master("local[2]").appName("bench-udf")
             .config("spark.ui.enabled", "false")
             .config("spark.ui.showConsoleProgress", "false")
             .config("spark.sql.shuffle.partitions", "2")
             .config("spark.python.unix.domain.socket.enabled", "true")
             .getOrCreate())
    spark.sparkContext.setLogLevel("ERROR")
    rng = np.random.default_rng(22)
    table = pa.table({"x": pa.array(rng.integers(-1000, 1000, args.rows), pa.int64()),
                      "d": pa.array(rng.random(args.rows))})
    spark_df = spark.createDataFrame(table.to_pandas()).repartition(2).cache()
    spark_df.count()
    engines = {
        "ember local": ember.Session({"spark.sql.shuffle.partitions": "2"}),
        "ember on spark": ember.Session({"spark.sql.shuffle.partitions": "2"}, runtime="spark",
                                        spark=spark),
    }
    results: dict[tuple[str, str], float] = {}
    for name, session in engines.items():
        # on the Spark runtime, Ember reads PySpark's cached DataFrame, as PySpark does
        df = session.createDataFrame(spark_df if session.runtime == "spark" else table)
        for kind, build in _cases(F, F.col("x"), F.col("d")).items():
            q = build(df).agg(F.sum("y"))
            results[(name, kind)] = args.rows / _best(q.collect, args.repeat)
    for kind, build in _cases(SF, SF.col("x"), SF.col("d")).items():
        q = build(spark_df).agg(SF.sum("y"))
        results[("pyspark", kind)] = args.rows / _best(q.collect, args.repeat)

    print(f"{args.rows:,} rows, best of {args.repeat} (rows/s)")
    print(f"{'kind':<12}{'ember local':>16}{'ember on spark':>16}{'pyspark':>16}"
          f"{'local/pyspark':>15}{'on spark/pyspark':>18}")
    for kind in ("udf", "arrow udf", "pandas_udf"):
        local, on_spark, native = (results[(e, kind)] for e in
                                   ("ember local", "ember on spark", "pyspark"))
        print(f"{kind:<12}{local:>16,.0f}{on_spark:>16,.0f}{native:>16,.0f}"
              f"{local / native:>14.2f}x{on_spark / native:>17.2f}x")
    spark.stop()


if __name__ == "__main__":
    main()
