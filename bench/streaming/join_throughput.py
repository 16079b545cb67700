"""Stream-stream join throughput: Ember's local streaming engine against Spark Structured
Streaming local, on the same generated impressions/clicks fed as the same micro-batches.

Not a test.  Run::

    python -m bench.streaming.join_throughput [--events N] [--batches B] [--partitions P]
        [--joins inner,left_outer] [--state-store hdfs|rocksdb] [--profile]

The query (both engines, same code through each engine's ``functions`` module)::

    imp = impressions.withWatermark("impTime", "10 seconds")
    clk = clicks.withWatermark("clickTime", "20 seconds")
    imp.join(clk, expr("clickAdId = impAdId AND clickTime >= impTime AND
                        clickTime <= impTime + interval 1 minute"), how)   # inner, left_outer

Input: ``B + 1`` micro-batches (the first is a warm-up, not timed), each covering 10 s of event
time; impressions spread uniformly over their batch's 10 s, 40% of them clicked 0-70 s later (the
click arrives in the batch of its click time, so some clicks fall outside the 1-minute range and
some impressions stay unmatched); ad ids drawn so that an ad has about one other impression in
any minute.  ``N`` counts the events (impressions + clicks) of the timed batches.

Each engine reads two memory streams: Spark's own ``MemoryStream`` through py4j (rows converted
to JVM rows before the clock starts, as in ``tests/streaming/spark_harness.py``) and
``ember.streaming.MemoryStream`` (Arrow tables).  Per batch the rows of both streams are added
under the query's ``awaitProgressLock`` (one micro-batch sees all of them), then
``processAllAvailable()`` runs the data batch and any no-data batch the watermark allows; the
clock covers those two steps, summed over the timed batches.  Sink: the memory sink; both
engines use ``spark.sql.shuffle.partitions = P`` state partitions and the same state store
provider class (Spark's default HDFS-backed in-memory one unless ``--state-store rocksdb``);
Spark runs ``local[2]`` with the UI off.  State rows (``lastProgress.stateOperators[*]
.numRowsTotal``) are sampled after every few batches.  Checks: both engines' sinks hold the same
number of rows and the same rows as a multiset.

``--profile`` runs only Ember, under cProfile in every thread (query thread and task pool), and
prints the top functions by internal and by cumulative time (thread times, waits included).
"""

from __future__ import annotations

import argparse
import cProfile
import os
import pstats
import shutil
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from bench.tpch.engines import machine

IMPRESSIONS = "impAdId INT, impTime TIMESTAMP, impId BIGINT"
CLICKS = "clickAdId INT, clickTime TIMESTAMP, clickId BIGINT"
CONDITION = ("clickAdId = impAdId AND clickTime >= impTime AND "
             "clickTime <= impTime + interval 1 minute")
BATCH_SPAN_S = 10
T0_US = 1_704_067_200_000_000  # 2024-01-01T00:00:00Z
PROVIDERS = {"hdfs": "org.apache.spark.sql.execution.streaming.state.HDFSBackedStateStoreProvider",
             "rocksdb": "org.apache.spark.sql.execution.streaming.state.RocksDBStateStoreProvider"}
TS = pa.timestamp("us", tz="UTC")


# ---------------------------------------------------------------------------------------------
# Input


def generate(events: int, batches: int, seed: int = 6) -> list[tuple[pa.Table, pa.Table]]:
    """``batches + 1`` micro-batches of (impressions, clicks); about ``events`` events in the
    last ``batches`` of them."""
    rng = np.random.default_rng(seed)
    total = batches + 1
    click_rate = 0.4
    imp_per_batch = max(1, round(events / batches / (1 + click_rate)))
    n_imp = imp_per_batch * total
    # about 6 batches of impressions fall in one minute; one other impression per ad and minute
    n_ads = max(1, imp_per_batch * 6)
    imp_batch = np.repeat(np.arange(total, dtype=np.int64), imp_per_batch)
    imp_time = (imp_batch * BATCH_SPAN_S * 1_000_000
                + rng.integers(0, BATCH_SPAN_S * 1_000_000, n_imp))
    imp_ad = rng.integers(0, n_ads, n_imp).astype(np.int32)
    imp_id = np.arange(n_imp, dtype=np.int64)
    clicked = rng.random(n_imp) < click_rate
    clk_time = imp_time[clicked] + rng.integers(0, 70 * 1_000_000, int(clicked.sum()))
    clk_ad = imp_ad[clicked]
    clk_batch = clk_time // (BATCH_SPAN_S * 1_000_000)
    keep = clk_batch < total
    clk_time, clk_ad, clk_batch = clk_time[keep], clk_ad[keep], clk_batch[keep]
    clk_id = np.arange(len(clk_time), dtype=np.int64)
    order = np.argsort(clk_batch, kind="stable")
    clk_time, clk_ad, clk_batch, clk_id = (a[order] for a in (clk_time, clk_ad, clk_batch, clk_id))
    clk_bounds = np.searchsorted(clk_batch, np.arange(total + 1))

    out = []
    for b in range(total):  # per batch
        i0, i1 = b * imp_per_batch, (b + 1) * imp_per_batch
        c0, c1 = clk_bounds[b], clk_bounds[b + 1]
        imp = pa.table({"impAdId": imp_ad[i0:i1],
                        "impTime": pa.array(T0_US + imp_time[i0:i1], TS),
                        "impId": imp_id[i0:i1]})
        clk = pa.table({"clickAdId": clk_ad[c0:c1],
                        "clickTime": pa.array(T0_US + clk_time[c0:c1], TS),
                        "clickId": clk_id[c0:c1]})
        out.append((imp, clk))
    return out


def build(F: Any, imp: Any, clk: Any, how: str) -> Any:
    """The benchmarked query, written once for both engines (``F``: the engine's functions)."""
    imp = imp.withWatermark("impTime", "10 seconds")
    clk = clk.withWatermark("clickTime", "20 seconds")
    return imp.join(clk, F.expr(CONDITION), how)


# ---------------------------------------------------------------------------------------------
# Engines


def _get(obj: Any, key: str) -> Any:
    if obj is None:
        return None
    if isinstance(obj, dict):
        return obj.get(key)
    try:
        return obj[key]
    except (KeyError, TypeError, IndexError):
        return getattr(obj, key, None)


def state_rows(progress: Any) -> int | None:
    ops = _get(progress, "stateOperators") or []
    rows = [_get(op, "numRowsTotal") for op in ops]
    return None if not rows or any(r is None for r in rows) else int(sum(rows))


class SparkSide:
    name = "spark"

    def __init__(self, partitions: int, provider: str) -> None:
        os.environ["PYSPARK_PYTHON"] = sys.executable
        from pyspark.sql import SparkSession, functions

        self.spark = (SparkSession.builder.master("local[2]").appName("ember-bench-stream-join")
                      .config("spark.ui.enabled", "false")
                      .config("spark.ui.showConsoleProgress", "false")
                      .config("spark.driver.memory", "4g")
                      .config("spark.sql.session.timeZone", "UTC")
                      .config("spark.sql.shuffle.partitions", str(partitions))
                      .config("spark.sql.streaming.stateStore.providerClass", provider)
                      .config("spark.sql.execution.arrow.pyspark.enabled", "true")
                      .getOrCreate())
        self.spark.sparkContext.setLogLevel("ERROR")
        self.F = functions
        jvm = self.spark._jvm
        self._jvm = jvm
        self._ms = getattr(jvm.org.apache.spark.sql.execution.streaming.runtime,
                           "MemoryStream$").__getattr__("MODULE$")

    def stream(self, ddl: str) -> tuple[Any, Any]:
        from pyspark.sql import DataFrame
        from pyspark.sql.types import _parse_datatype_string

        schema = _parse_datatype_string(ddl)
        jschema = self.spark._jsparkSession.parseDataType(schema.json())
        encoder = self._jvm.org.apache.spark.sql.Encoders.row(jschema)
        handle = self._ms.apply(encoder, self.spark._jsparkSession)
        return (handle, schema), DataFrame(handle.toDF(), self.spark)

    def prepare(self, handle: Any, table: pa.Table) -> Any:
        """A Scala list of JVM rows (the encoder's types), made before the clock starts."""
        _, schema = handle
        jrows = self.spark.createDataFrame(table.to_pandas(), schema)._jdf.collectAsList()
        return self._jvm.scala.jdk.javaapi.CollectionConverters.asScala(jrows).toList()

    def feed(self, query: Any, items: list[tuple[Any, Any]]) -> None:
        lock = query._jsq.streamingQuery().awaitProgressLock()
        lock.lock()
        try:
            for (handle, _), data in items:
                handle.addData(data)
        finally:
            lock.unlock()

    def start(self, df: Any, name: str, checkpoint: str) -> Any:
        return (df.writeStream.format("memory").queryName(name).outputMode("append")
                .option("checkpointLocation", checkpoint).start())

    def sink(self, name: str) -> pa.Table:
        return self.spark.table(name).toArrow()

    def stop(self) -> None:
        self.spark.stop()


class EmberSide:
    name = "ember"

    def __init__(self, partitions: int, provider: str) -> None:
        import ember
        import ember.functions

        self.session = ember.Session({"spark.sql.shuffle.partitions": str(partitions),
                                      "spark.sql.session.timeZone": "UTC",
                                      "spark.sql.streaming.stateStore.providerClass": provider})
        self.F = ember.functions

    def stream(self, ddl: str) -> tuple[Any, Any]:
        from ember.streaming import MemoryStream

        ms = MemoryStream(self.session, ddl)
        return (ms, ddl), ms.toDF()

    def prepare(self, handle: Any, table: pa.Table) -> Any:
        return table

    def feed(self, query: Any, items: list[tuple[Any, Any]]) -> None:
        with query.awaitProgressLock:
            for (ms, _), data in items:
                ms.addData(data)

    def start(self, df: Any, name: str, checkpoint: str) -> Any:
        return (df.writeStream.format("memory").queryName(name).outputMode("append")
                .option("checkpointLocation", checkpoint).start())

    def sink(self, name: str) -> pa.Table:
        return self.session.table(name).to_arrow()

    def stop(self) -> None:
        pass


@dataclass
class Run:
    engine: str
    how: str
    events: int
    batches: int
    seconds: float
    state: list[tuple[int, int | None]] = field(default_factory=list)  # (batch, rows held)
    output: pa.Table | None = None

    @property
    def rate(self) -> float:
        return self.events / self.seconds if self.seconds > 0 else float("inf")

    @property
    def max_state(self) -> int | None:
        vals = [s for _, s in self.state if s is not None]
        return max(vals) if vals else None

    @property
    def final_state(self) -> int | None:
        return self.state[-1][1] if self.state else None


def run(side: Any, how: str, data: list[tuple[pa.Table, pa.Table]], every: int,
        workdir: str) -> Run:
    """Feed ``data`` batch by batch into a new query on ``side``; time all but the first."""
    imp_h, imp_df = side.stream(IMPRESSIONS)
    clk_h, clk_df = side.stream(CLICKS)
    prepared = [[(imp_h, side.prepare(imp_h, imp)), (clk_h, side.prepare(clk_h, clk))]
                for imp, clk in data]
    name = f"bench_{side.name}_{how}"
    checkpoint = tempfile.mkdtemp(prefix=f"{name}_", dir=workdir)
    query = side.start(build(side.F, imp_df, clk_df, how), name, checkpoint)
    seconds = 0.0
    result = Run(side.name, how, sum(i.num_rows + c.num_rows for i, c in data[1:]),
                 len(data) - 1, 0.0)
    try:
        for b, items in enumerate(prepared):
            t = time.perf_counter()
            side.feed(query, items)
            query.processAllAvailable()
            dt = time.perf_counter() - t
            if b > 0:  # batch 0 warms up (JIT, Python workers, first-batch planning)
                seconds += dt
            if b % every == 0 or b == len(prepared) - 1:
                result.state.append((b, state_rows(query.lastProgress)))
    finally:
        query.stop()
    result.seconds = seconds
    result.output = side.sink(name)
    shutil.rmtree(checkpoint, ignore_errors=True)
    return result


# ---------------------------------------------------------------------------------------------
# Checks


def normalized(table: pa.Table) -> pa.Table:
    """Timestamps as int64 microseconds, columns in one order, rows sorted (NULLs last)."""
    cols, names = [], sorted(table.column_names)
    for n in names:
        c = table.column(n)
        if pa.types.is_timestamp(c.type):
            c = pc.cast(c.cast(pa.timestamp("us", tz="UTC")), pa.int64())
        elif pa.types.is_integer(c.type):
            c = c.cast(pa.int64())
        cols.append(c)
    t = pa.Table.from_arrays(cols, names=names)
    return t.sort_by([(n, "ascending") for n in names])


def same_rows(a: pa.Table, b: pa.Table) -> bool:
    return a.num_rows == b.num_rows and normalized(a).equals(normalized(b))


# ---------------------------------------------------------------------------------------------
# Profiling (Ember runs batches on its query thread and tasks on a pool: profile every thread)


def profiled(fn: Any) -> tuple[Any, pstats.Stats]:
    profiles: list[cProfile.Profile] = []
    original = threading.Thread.run

    def run_profiled(self: threading.Thread) -> None:
        prof = cProfile.Profile()
        profiles.append(prof)
        prof.enable()
        try:
            original(self)
        finally:
            prof.disable()

    threading.Thread.run = run_profiled  # threads started from here on (the pool starts lazily)
    main = cProfile.Profile()
    main.enable()
    try:
        value = fn()
    finally:
        main.disable()
        threading.Thread.run = original
    stats = pstats.Stats(main)
    for p in profiles:
        stats.add(p)
    return value, stats


# ---------------------------------------------------------------------------------------------


def _fmt(n: int | None) -> str:
    return "-" if n is None else f"{n:,}"


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--events", type=int, default=200_000,
                    help="events (impressions + clicks) over the timed batches")
    ap.add_argument("--batches", type=int, default=20, help="timed micro-batches")
    ap.add_argument("--partitions", type=int, default=8, help="shuffle (state) partitions")
    ap.add_argument("--joins", default="inner,left_outer")
    ap.add_argument("--state-store", choices=sorted(PROVIDERS), default="hdfs")
    ap.add_argument("--sample-every", type=int, default=0,
                    help="sample state rows every this many batches (default: ~10 samples)")
    ap.add_argument("--profile", action="store_true", help="Ember only, under cProfile")
    ap.add_argument("--top", type=int, default=30)
    args = ap.parse_args(argv)
    joins = [j.strip() for j in args.joins.split(",") if j.strip()]
    every = args.sample_every or max(1, (args.batches + 1) // 10)
    provider = PROVIDERS[args.state_store]

    data = generate(args.events, args.batches)
    workdir = tempfile.mkdtemp(prefix="ember_bench_stream_")
    per_batch = sum(i.num_rows + c.num_rows for i, c in data[1:]) // max(1, args.batches)
    print(f"stream-stream join, impressions/clicks: {args.batches} timed batches (+1 warm-up) of "
          f"~{per_batch:,} events ({BATCH_SPAN_S} s of event time each), {args.partitions} state "
          f"partitions, {args.state_store} state store; {machine()}", flush=True)
    print(f"condition: {CONDITION}; watermarks impTime 10 s, clickTime 20 s", flush=True)
    try:
        if args.profile:
            ember_side = EmberSide(args.partitions, provider)
            # one profile over all joins: the task pool's threads start in the first run
            results, stats = profiled(lambda: [run(ember_side, how, data, every, workdir)
                                               for how in joins])
            for r in results:
                print(f"{r.how}: ember {r.seconds:.3f} s, {r.rate:,.0f} events/s, "
                      f"{r.output.num_rows:,} output rows (profiled)")
            stats.sort_stats("tottime").print_stats(args.top)
            stats.sort_stats("cumulative").print_stats(args.top)
            return
        sides = [SparkSide(args.partitions, provider), EmberSide(args.partitions, provider)]
        print(f"Spark {sides[0].spark.version} local[2]", flush=True)
        runs: dict[tuple[str, str], Run] = {}
        for how in joins:
            for side in sides:
                runs[(how, side.name)] = run(side, how, data, every, workdir)
                print(f"  ran {how} on {side.name}: {runs[(how, side.name)].seconds:.2f} s",
                      flush=True)
        sides[0].stop()
    finally:
        shutil.rmtree(workdir, ignore_errors=True)

    print()
    print(f"{'join':<11}{'engine':<8}{'events':>10}{'batches':>9}{'seconds':>10}"
          f"{'events/s':>12}{'ember/spark':>13}{'max state':>11}{'final state':>13}"
          f"{'output rows':>13}")
    for how in joins:
        s, e = runs[(how, "spark")], runs[(how, "ember")]
        for r in (s, e):
            ratio = f"{e.rate / s.rate:.2f}x" if r is e else ""
            print(f"{how:<11}{r.engine:<8}{r.events:>10,}{r.batches:>9}{r.seconds:>10.3f}"
                  f"{r.rate:>12,.0f}{ratio:>13}{_fmt(r.max_state):>11}{_fmt(r.final_state):>13}"
                  f"{r.output.num_rows:>13,}")
    print()
    for how in joins:
        for name in ("spark", "ember"):
            r = runs[(how, name)]
            print(f"state rows, {how} on {name} (after batch): "
                  + ", ".join(f"{b}: {_fmt(n)}" for b, n in r.state))
    print()
    for how in joins:
        s, e = runs[(how, "spark")], runs[(how, "ember")]
        count = "same" if s.output.num_rows == e.output.num_rows else "DIFFERENT"
        rows = "same rows (multiset)" if same_rows(s.output, e.output) else "rows DIFFER"
        states = ("same state rows at every sample" if s.state == e.state
                  else "state samples DIFFER")
        print(f"check {how}: output rows {count} (spark {s.output.num_rows:,}, ember "
              f"{e.output.num_rows:,}); {rows}; {states}")


if __name__ == "__main__":
    main()
