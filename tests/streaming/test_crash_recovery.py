"""Crash recovery: a stream-stream left outer join (time range, watermarks on both sides, so the
unmatched left rows come out only when the watermark evicts them) from two directories of Parquet
files (``maxFilesPerTrigger`` 1: one micro-batch per file) into the Parquet file sink, run in a
child process that is killed at random points and restarted from its checkpoint until it
finishes.  Every time, the final sink (read back through its ``_spark_metadata`` log) must equal
the output of an uninterrupted run as a multiset: no row lost, none duplicated.  A driver script
(``DRIVER``, run with ``sys.executable``) imports Ember and analyses the query once, then forks
one child per attempt, which runs the query and dies (or is killed) alone: the imports are paid
once per provider, the crash is still a whole process dying.

Kills are of two kinds: deterministic ones through the engine's test-only crash points
(:mod:`ember.streaming.crash`: ``os._exit(137)`` at the ``n``-th hit of a named point -- before
or after the offsets log, inside the state commits, between the sink's data files and its
metadata log, between the sink commit and the commit log, after the commit log), and SIGKILL
after a random delay.  Both state store providers are covered (the HDFS-backed memory provider,
with snapshots and cleanup every few versions, and RocksDB), with small log retention and
compaction intervals so restarts cross purged logs, compacted logs and snapshots.

The input is built so that the right answer does not depend on how a restart regroups files into
batches (a crash between a file source's log and the offsets log merges two files into one
batch): event times advance by 5 s per file, the watermark delay (10 s) exceeds the disorder
within a file, so no row is ever late and every match arrives before its partner is evicted.

Randomness is seeded (``SEED``); every assertion message names the seed, the provider and the
sequence of kills so a failure can be replayed.
"""

from __future__ import annotations

import json
import os
import random
import select
import signal
import subprocess
import sys
import textwrap
import time
from collections import Counter

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import ember
from ember.streaming.crash import CRASH_POINTS
from tests.full_run import run_all

SEED = 20261126
NUM_FILES = 12            # per side: one micro-batch each
SECONDS_PER_FILE = 5
RUNS_PER_PROVIDER = 10    # random crash scenarios per provider (and one fixed)
MAX_KILLS_PER_RUN = 3
ATTEMPT_TIMEOUT_S = 120
CRASH_EXIT = 137         # os._exit code of the crash points
#: the stateful operators crashed beside the join (``EMBER_STREAM_CRASH_KINDS=agg,dedup``)
STATEFUL_KINDS = [k for k in os.environ.get("EMBER_STREAM_CRASH_KINDS", "").split(",") if k]
RUNS_PER_KIND = int(os.environ.get("EMBER_STREAM_CRASH_RUNS", "10"))

PROVIDERS = {
    "hdfs": "org.apache.spark.sql.execution.streaming.state.HDFSBackedStateStoreProvider",
    "rocksdb": "org.apache.spark.sql.execution.streaming.state.RocksDBStateStoreProvider",
}

DRIVER = textwrap.dedent('''
    """Crash-recovery driver: ``driver.py <input dir> <provider class>``, then one JSON request a
    line on stdin, ``{"dir": .., "crash_at": .., "kill_after": ..}``: a forked child runs the
    join over the input into ``<dir>/out`` (checkpoint ``<dir>/ck``) until the input is
    exhausted (availableNow), with the crash hook set to ``crash_at``; the parent SIGKILLs it
    after ``kill_after`` seconds if still running, and answers one JSON line: the child's exit
    code (negative: killed by that signal), its seconds, and, when it finished, its crash point
    hits and the input rows of each batch it ran.  Imports and analysis happen once, before
    the first fork (the parent never starts a query, so a child inherits no engine state).
    """
    import json
    import os
    import signal
    import sys
    import tempfile
    import time
    import traceback

    import ember
    from ember import functions as F
    from ember.streaming import crash

    inp, provider, kind = sys.argv[1:4]
    session = ember.Session({
        "spark.sql.shuffle.partitions": 3,
        "spark.sql.session.timeZone": "UTC",
        "spark.sql.streaming.stateStore.providerClass": provider,
        "spark.sql.streaming.stateStore.minDeltasForSnapshot": 2,
        "spark.sql.streaming.minBatchesToRetain": 4,
        "spark.sql.streaming.fileSink.log.compactInterval": 4,
        "spark.sql.streaming.fileSource.log.compactInterval": 4,
    })
    left = (session.readStream.schema("k int, lt timestamp, lv string")
            .option("maxFilesPerTrigger", 1).parquet(os.path.join(inp, "left"))
            .withWatermark("lt", "10 seconds"))
    right = (session.readStream.schema("k2 int, rt timestamp, rv string")
             .option("maxFilesPerTrigger", 1).parquet(os.path.join(inp, "right"))
             .withWatermark("rt", "10 seconds"))
    joined = left.join(
        right, F.expr("k = k2 AND rt >= lt AND rt <= lt + interval 20 seconds"), "left_outer")
    if kind == "agg":  # windowed counts, append mode: a window comes out once evicted
        joined = (left.groupBy(F.window("lt", "10 seconds"), (F.col("k") % 5).alias("g"))
                  .agg(F.count("*").alias("n"), F.max("lv").alias("mx"), F.sum("k").alias("s"))
                  .select(F.col("window.start").alias("ws"), "g", "n", "mx", "s"))
    elif kind == "dedup":  # the first row per (group, 20 s bucket), evicted by the watermark
        joined = (left.withColumn("g", F.col("k") % 7)
                  .withColumn("bucket", F.window("lt", "20 seconds"))
                  .dropDuplicates(["g", "bucket"])
                  .select("g", F.col("bucket.start").alias("bs"), "lv"))


    def child(d, crash_at):
        if crash_at:
            os.environ[crash.CRASH_AT_ENV] = crash_at
        else:
            os.environ.pop(crash.CRASH_AT_ENV, None)
        # RocksDB working copies of a killed child stay behind: keep them in the run's dir
        tempfile.tempdir = os.path.join(d, "tmp")
        os.makedirs(tempfile.tempdir, exist_ok=True)
        q = (joined.writeStream.format("parquet")
             .option("checkpointLocation", os.path.join(d, "ck"))
             .trigger(availableNow=True).start(os.path.join(d, "out")))
        q.awaitTermination()
        return {"hits": crash.hits(),
                "inputRows": [p["numInputRows"] for p in q.recentProgress]}


    for line in sys.stdin:
        req = json.loads(line)
        d = req["dir"]
        result_file = os.path.join(d, "result.json")
        if os.path.exists(result_file):
            os.remove(result_file)
        t0 = time.time()
        pid = os.fork()
        if pid == 0:
            code = 0
            try:
                result = child(d, req["crash_at"])
                with open(result_file, "w") as f:
                    json.dump(result, f)
            except BaseException:
                with open(os.path.join(d, "error.txt"), "w") as f:
                    f.write(traceback.format_exc())
                code = 1
            os._exit(code)
        deadline = t0 + (req["kill_after"] if req["kill_after"] is not None else req["timeout"])
        while True:
            done, status = os.waitpid(pid, os.WNOHANG)
            if done:
                break
            if time.time() >= deadline:
                os.kill(pid, signal.SIGKILL)
                _, status = os.waitpid(pid, 0)
                break
            time.sleep(0.01)
        answer = {"code": os.waitstatus_to_exitcode(status), "seconds": time.time() - t0}
        if os.path.exists(result_file):
            with open(result_file) as f:
                answer.update(json.load(f))
        print(json.dumps(answer), flush=True)
''')


def _write_input(root: str, rng: np.random.Generator) -> None:
    """Impressions (left) and clicks (right) bucketed into files by event time (5 s a file)."""
    n_left = NUM_FILES * 24
    horizon_us = NUM_FILES * SECONDS_PER_FILE * 1_000_000
    lt = np.sort(rng.integers(0, horizon_us, n_left))
    lk = rng.integers(0, 200, n_left).astype(np.int32)
    # about 60% of impressions get 1-2 clicks 0-30 s later (past 20 s: no match), plus clicks
    # on random keys and times that match nothing or something by chance
    clicked = np.flatnonzero(rng.random(n_left) < 0.6)
    reps = rng.integers(1, 3, len(clicked))
    src = np.repeat(clicked, reps)
    rt = np.concatenate([lt[src] + rng.integers(0, 30_000_000, len(src)),
                         rng.integers(0, horizon_us, n_left // 4)])
    rk = np.concatenate([lk[src], rng.integers(0, 200, n_left // 4).astype(np.int32)])
    keep = rt < horizon_us
    rt, rk = rt[keep], rk[keep]
    base = time.time() - 3600
    for side, t, k, name in (("left", lt, lk, "l"), ("right", rt, rk, "r")):
        os.makedirs(os.path.join(root, side))
        file_of = t // (SECONDS_PER_FILE * 1_000_000)
        tcol, kcol, vcol = ("lt", "k", "lv") if side == "left" else ("rt", "k2", "rv")
        ids = np.arange(len(t))
        for f in range(NUM_FILES):
            sel = np.flatnonzero(file_of == f)
            order = rng.permutation(sel)  # disorder within a file
            table = pa.table({
                kcol: pa.array(k[order], pa.int32()),
                tcol: pa.array(t[order], pa.timestamp("us", tz="UTC")),
                vcol: pa.array([f"{name}{i}" for i in ids[order]], pa.string()),
            })
            path = os.path.join(root, side, f"part-{f:04d}.parquet")
            pq.write_table(table, path)
            os.utime(path, (base + f, base + f))  # listing order = file order


class _Driver:
    """The driver process of one provider (see ``DRIVER``); :meth:`run` runs one attempt."""

    def __init__(self, root: str, provider_class: str, name: str, kind: str = "join") -> None:
        self.stderr_path = os.path.join(root, f"driver-{name}-{kind}.stderr")
        self.stderr = open(self.stderr_path, "w")  # noqa: SIM115 - closed in close()
        self.proc = subprocess.Popen(
            [sys.executable, os.path.join(root, "driver.py"), os.path.join(root, "input"),
             provider_class, kind],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=self.stderr, text=True)

    def run(self, workdir: str, crash_at: str | None = None,
            kill_after: float | None = None) -> dict:
        os.makedirs(workdir, exist_ok=True)
        req = {"dir": workdir, "crash_at": crash_at, "kill_after": kill_after,
               "timeout": ATTEMPT_TIMEOUT_S}
        assert self.proc.stdin is not None and self.proc.stdout is not None
        self.proc.stdin.write(json.dumps(req) + "\n")
        self.proc.stdin.flush()
        ready, _, _ = select.select([self.proc.stdout], [], [], ATTEMPT_TIMEOUT_S + 30)
        line = self.proc.stdout.readline() if ready else ""
        if not line:
            self.proc.kill()
            with open(self.stderr_path) as f:
                raise AssertionError(f"the crash-recovery driver died or hung:\n"
                                     f"{f.read()[-3000:]}")
        answer = json.loads(line)
        code = answer["code"]
        timed_out = kill_after is None and code == -signal.SIGKILL
        if code not in (0, CRASH_EXIT, -signal.SIGKILL) or timed_out:
            err_file = os.path.join(workdir, "error.txt")
            err = open(err_file).read() if os.path.exists(err_file) else ""
            raise AssertionError(f"attempt in {workdir} (crash_at={crash_at}, "
                                 f"kill_after={kill_after}) failed with exit code {code}"
                                 f"{' (timed out)' if timed_out else ''}:\n{err[-3000:]}")
        return answer

    def close(self) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.close()
        try:
            self.proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        self.stderr.close()


def _rows(out_dir: str) -> Counter:
    table = ember.Session().read.parquet(out_dir).to_arrow()
    return Counter(zip(*(table.column(c).to_pylist() for c in table.column_names)))


def _diff(got: Counter, want: Counter) -> str:
    lost, extra = want - got, got - want
    return (f"{sum(lost.values())} rows lost (e.g. {list(lost)[:3]}), "
            f"{sum(extra.values())} extra (e.g. {list(extra)[:3]})")


@pytest.fixture(scope="module")
def root(tmp_path_factory) -> str:
    root = str(tmp_path_factory.mktemp("crash"))
    with open(os.path.join(root, "driver.py"), "w", encoding="utf-8") as f:
        f.write(DRIVER)
    _write_input(os.path.join(root, "input"), np.random.default_rng(SEED))
    return root


#: The default suite kills the query under Spark's default state store provider; the RocksDB
#: one runs with ``EMBER_CRASH_ALL=1`` (or ``EMBER_FULL=1``).
CRASH_PROVIDERS = sorted(PROVIDERS) if run_all("EMBER_CRASH_ALL") else ["hdfs"]


@pytest.mark.parametrize("provider", CRASH_PROVIDERS)
def test_killed_and_restarted_query_writes_the_uninterrupted_output(root, provider) -> None:
    driver = _Driver(root, PROVIDERS[provider], provider)
    try:
        _check_provider(root, provider, driver)
    finally:
        driver.close()


@pytest.mark.skipif(not STATEFUL_KINDS, reason="EMBER_STREAM_CRASH_KINDS names no kind")
@pytest.mark.parametrize("kind", STATEFUL_KINDS)
@pytest.mark.parametrize("provider", sorted(PROVIDERS))
def test_killed_aggregation_and_dedup_write_the_uninterrupted_output(root, provider,
                                                                     kind) -> None:
    """The same kills on a windowed aggregation (append mode) and a deduplication over the left
    input (``EMBER_STREAM_CRASH_KINDS=agg,dedup``, ``EMBER_STREAM_CRASH_RUNS`` runs each)."""
    driver = _Driver(root, PROVIDERS[provider], provider, kind)
    try:
        _check_provider(root, provider, driver, kind)
    finally:
        driver.close()


def _check_provider(root: str, provider: str, driver: _Driver, kind: str = "join") -> None:
    # the uninterrupted run: the reference output, how often each crash point is reached, and
    # how long a whole run takes (the range of the random SIGKILL delays)
    name = provider if kind == "join" else f"{provider}-{kind}"
    ref = driver.run(os.path.join(root, f"{name}-reference"), crash_at="none")
    assert ref["code"] == 0
    hits, input_rows = ref["hits"], ref["inputRows"]
    assert set(hits) == set(CRASH_POINTS), hits
    want = _rows(os.path.join(root, f"{name}-reference", "out"))
    if kind != "join":
        _check_stateful_reference(kind, want, input_rows)
        _crash_runs(root, name, driver, ref, want, RUNS_PER_KIND)
        return
    # the reference exercises what recovery must preserve: one batch per file, matches,
    # NULL-padded left rows emitted on eviction, the last of them in a closing no-data batch
    data_batches = [i for i, n in enumerate(input_rows) if n]
    assert len(data_batches) == NUM_FILES and input_rows[-1] == 0, input_rows
    matched = sum(n for r, n in want.items() if r[3] is not None)
    unmatched = sum(n for r, n in want.items() if r[3] is None)
    assert matched > 50 and unmatched > 20, (matched, unmatched)
    print(f"\n[{provider}] reference: {len(input_rows)} batches, {matched} matched + "
          f"{unmatched} NULL-padded rows, {ref['seconds']:.1f} s; crash point hits {hits}")

    _crash_runs(root, provider, driver, ref, want, RUNS_PER_PROVIDER)


def _check_stateful_reference(kind: str, want: Counter, input_rows: list[int]) -> None:
    """The aggregation / dedup reference exercises eviction: one batch per file, rows emitted
    as the watermark passes windows, the last ones in the closing no-data batch."""
    data_batches = [i for i, n in enumerate(input_rows) if n]
    assert len(data_batches) == NUM_FILES and input_rows[-1] == 0, input_rows
    if kind == "agg":
        # the windows the final watermark (the last event time - 10 s) has passed
        assert sum(want.values()) >= 15 and sum(r[2] for r in want) > NUM_FILES * 12, want
    else:
        # 7 groups in each of the three 20 s buckets of the 60 s of input, once each
        assert sorted(Counter((r[0], r[1]) for r in want).values()) == [1] * 21, want


def _crash_runs(root: str, provider: str, driver: _Driver, ref: dict, want: Counter,
                runs: int) -> None:
    hits = ref["hits"]
    data_batches = [i for i, n in enumerate(ref["inputRows"]) if n]
    rng = random.Random(f"{SEED}-{provider}")
    # scenarios: a kill right after the last data batch committed (the restart must still run
    # the closing no-data batch), then random ones
    plans: list[list[tuple[str | None, float | None]]] = [
        [(f"after_commit_log@{data_batches[-1] + 1}", None)]]
    for run in range(runs):
        kills = rng.randint(1, MAX_KILLS_PER_RUN)
        if run % 3 == 2:
            plans.append([(None, rng.uniform(0.2, ref["seconds"])) for _ in range(kills)])
        else:
            points = [rng.choice(CRASH_POINTS) for _ in range(kills)]
            plans.append([(f"{p}@{rng.randint(1, hits[p])}", None) for p in points])
    for run, plan in enumerate(plans):
        workdir = os.path.join(root, f"{provider}-run{run}")
        log: list[str] = []
        for crash_at, kill_after in [*plan, (None, None)]:
            answer = driver.run(workdir, crash_at, kill_after)
            what = crash_at or (f"SIGKILL after {kill_after:.2f}s" if kill_after else "no crash")
            log.append(f"{what} -> exit {answer['code']}")
            if answer["code"] == 0:
                break
        where = f"seed {SEED}, provider {provider}, run {run}, attempts {log}"
        assert log[-1].endswith("exit 0"), where
        got = _rows(os.path.join(workdir, "out"))
        assert got == want, f"{where}: {_diff(got, want)}"
        print(f"[{provider}] run {run}: {log}")
