"""Stream-stream joins on the Spark runtime over a real standalone cluster: Structured
Streaming's micro-batches in executor JVMs, the join's state in their RocksDB stores, Ember's
stateful processor in their Python workers, restarted from its checkpoint, its worker killed
mid-task, and a kernel error surfacing from a task.

One driver script (a subprocess: this process owns the oracle's local SparkContext) runs on the
session-scoped ``spark_cluster`` and reports as JSON.  It runs the query of
:mod:`tests.streaming.test_spark_runtime_stream` (impressions ``ad, it`` with a 10 s watermark,
clicks ``cad, ct`` with a 20 s one, ``ct`` within 30 s after ``it``, Ember operators on both
sides of every cut) as an inner and a left outer join on the cluster and on the local runtime
over the same Parquet directories, one file per side and step written while holding every
query's ``awaitProgressLock`` (one micro-batch on all of them), then ``processAllAvailable``.
After every step the file sinks' rows per batch id (their ``_spark_metadata`` logs) must be the
local runtime's.  Between steps 1 and 2 (of 3):

* the inner join is stopped and restarted from its checkpoint (state from Spark's RocksDB
  checkpoint on the executors);
* the left outer join runs with ``ember.spark.test.killWorkerOnce``: its marker file exists
  until then and is deleted now, so the first stateful task of step 2 kills its own Python
  worker after writing its state and emitting its rows.  Spark retries the task
  (``spark.task.maxFailures`` is 4 on a cluster); the retry must start from the last committed
  state version, so the rows of steps 2 and 3 (matches against held rows, and outer rows
  emitted by eviction, which read the "matched" flags kept in state) are exactly the local
  runtime's.

Finally a division by zero in the projection above the join ends the query with Ember's
``DIVIDE_BY_ZERO`` error naming that Project, on both runtimes.
"""

from __future__ import annotations

import json

import pytest

from tests.full_run import run_all
from tests.spark_cluster import java_home

pytestmark = [
    pytest.mark.spark_cluster,
    pytest.mark.spark,
    pytest.mark.skipif(java_home() is None, reason="no Java available"),
    pytest.mark.skipif(not run_all("EMBER_CLUSTER_ALL"),
                       reason="the streaming run on a standalone cluster takes a minute; "
                              "EMBER_CLUSTER_ALL=1 runs it (test_cluster.py keeps a batch "
                              "query on the cluster in the default suite)"),
]

# (impressions, clicks) per step, event times in seconds.  Watermarks after each step (min of
# max(it) - 10 and max(ct) - 20): 110, 195, 490.  Late rows (at or below the previous step's
# watermark) are dropped: (1, 50) and (3, 90) in step 2, (1, 110) in step 3.  Step 2 matches
# (5, 120) held since step 1; its no-data batch evicts left rows below 195 - 30, emitting the
# unmatched (2, 100) and (3, 100).  Step 3 matches (9, 210) and (13, 205) held since step 2
# (one in each of the two state partitions) and evicts (13, 305) unmatched.
STEPS = [
    ([(1, 100), (2, 100), (3, 100), (5, 120)], [(1, 105), (1, 125), (2, 140), (6, 110)]),
    ([(1, 50), (8, 200), (9, 210), (13, 205)], [(5, 130), (3, 90), (8, 215)]),
    ([(13, 305), (12, 500)], [(9, 230), (1, 110), (12, 510), (13, 220)]),
]
INNER = [(1, 100, 1, 105), (1, 100, 1, 125), (5, 120, 5, 130), (8, 200, 8, 215),
         (9, 210, 9, 230), (13, 205, 13, 220), (12, 500, 12, 510)]
EXPECTED = {
    "inner": INNER,
    "leftOuter": INNER + [(2, 100, None, None), (3, 100, None, None), (13, 305, None, None)],
}
#: the step (0-based) before which the inner join restarts and the left outer join's worker
#: is killed
FAULT_STEP = 1

DRIVER = r"""
import json, os, sys, tempfile
from contextlib import ExitStack

import ember
from ember import functions as F
from tests.spark_cluster import CLUSTER_SESSION_CONF
from tests.streaming.test_spark_runtime_stream import CONF, query, sink_batches, start, write

STEPS = json.loads('@STEPS@')
FAULT_STEP = @FAULT_STEP@
HOWS = ("inner", "leftOuter")
KILL = "ember.spark.test.killWorkerOnce"

work = os.environ["EMBER_CLUSTER_WORK_DIR"]
root = tempfile.mkdtemp(prefix="stream-join-", dir=work)
spark_conf = dict(CLUSTER_SESSION_CONF)
spark_conf.update({"spark.pyspark.python": sys.executable,
                   "spark.executorEnv.PYSPARK_PYTHON": sys.executable,
                   "spark.sql.warehouse.dir": os.path.join(work, "warehouse")})
sessions = {
    "spark": ember.Session({**spark_conf, **CONF, "ember.spark.shipPackage": "true"},
                           runtime="spark", master=os.environ["MASTER_URL"]),
    "local": ember.Session(CONF),
}
cluster = sessions["spark"]
spark = cluster.spark_session
report = {"master": spark.sparkContext.master}

marker = os.path.join(work, "stream-killed-once")
open(marker, "w").close()  # no kill until the marker is deleted before FAULT_STEP


def snapshot(how, rt):
    got = sink_batches(os.path.join(root, how, "out", rt), how)
    return {str(b): sorted(([list(r), n] for r, n in rows.items()), key=json.dumps)
            for b, rows in sorted(got.items())}


def failed_tasks(q):
    # the tasks that failed in the jobs of this run (Structured Streaming's job group = runId)
    st = spark.sparkContext.statusTracker()
    n = 0
    for job in st.getJobIdsForGroup(q.runId):
        info = st.getJobInfo(job)
        for stage in (info.stageIds if info else ()):
            s = st.getStageInfo(stage)
            n += s.numFailedTasks if s else 0
    return n


queries = {}
for how in HOWS:
    for d in ("L", "R"):
        os.makedirs(os.path.join(root, how, d))
    for rt, s in sessions.items():
        if rt == "spark" and how == "leftOuter":
            s.conf.set(KILL, marker)  # read when the query is planned
        queries[(how, rt)] = start(s, os.path.join(root, how), how, rt)
        s.conf.unset(KILL)

steps = []
restart = {}
try:
    for step, (imps, clicks) in enumerate(STEPS):
        if step == FAULT_STEP:
            for rt, s in sessions.items():
                first = queries[("inner", rt)]
                first.stop()
                queries[("inner", rt)] = q = start(s, os.path.join(root, "inner"), "inner", rt)
                restart[rt] = {"stopped": not first.isActive, "same_id": q.id == first.id,
                               "new_run": q.runId != first.runId}
            os.remove(marker)
        with ExitStack() as stack:  # every file of the step in one micro-batch of every query
            for q in queries.values():
                stack.enter_context(q.awaitProgressLock)
            for how in HOWS:
                write(os.path.join(root, how, "L"), f"s{step}", ("ad", "it"), imps)
                write(os.path.join(root, how, "R"), f"s{step}", ("cad", "ct"), clicks)
        for q in queries.values():
            q.processAllAvailable()
        steps.append({f"{how}/{rt}": snapshot(how, rt) for how in HOWS for rt in sessions})
    faulty = queries[("leftOuter", "spark")]
    report["fault"] = {"killed": os.path.exists(marker), "failed_tasks": failed_tasks(faulty),
                       "active": faulty.isActive}
    report["failed_tasks_inner"] = failed_tasks(queries[("inner", "spark")])
finally:
    for q in queries.values():
        q.stop()
report["steps"] = steps
report["restart"] = restart

# a kernel error in the Project above the join (ANSI: DIVIDE_BY_ZERO, ad = cad in every row)
errors = {}
for rt, s in sessions.items():
    base = os.path.join(root, "inner")
    q = (query(s, base, "inner").select((F.col("c") / (F.col("cad") - F.col("ad"))).alias("bad"))
         .writeStream.format("parquet")
         .option("checkpointLocation", os.path.join(root, "ck-error", rt))
         .start(os.path.join(root, "out-error", rt)))
    try:
        q.processAllAvailable()
        errors[rt] = None
    except Exception as e:
        cause = getattr(e, "cause", None)
        errors[rt] = {"type": type(e).__name__, "class": getattr(e, "error_class", None),
                      "text": str(e), "active": q.isActive,
                      "same_as_exception": q.exception() is e,
                      "cause": None if cause is None else {
                          "type": type(cause).__name__,
                          "class": getattr(cause, "error_class", None),
                          "operator": getattr(cause, "ember_operator", None),
                          "text": str(cause)}}
    finally:
        q.stop()
report["errors"] = errors
print("RESULT " + json.dumps(report))
"""


def _rows(snapshot: dict[str, list]) -> dict[int, dict[tuple, int]]:
    return {int(b): {tuple(r): n for r, n in rows} for b, rows in snapshot.items()}


@pytest.fixture(scope="module")
def report(spark_cluster) -> dict:
    script = (DRIVER.replace("@STEPS@", json.dumps(STEPS))
              .replace("@FAULT_STEP@", str(FAULT_STEP)))
    proc = spark_cluster.run_script(script, timeout=240)
    line = next((ln for ln in proc.stdout.splitlines() if ln.startswith("RESULT ")), None)
    assert line is not None, f"no result; stdout:\n{proc.stdout}\nstderr:\n{proc.stderr[-4000:]}"
    out = json.loads(line.removeprefix("RESULT "))
    assert out["master"] == spark_cluster.master_url
    return out


@pytest.mark.parametrize("how", ["inner", "leftOuter"])
def test_stream_join_on_cluster_equals_local_after_every_step(report, how) -> None:
    steps = report["steps"]
    assert len(steps) == len(STEPS)
    for i, snap in enumerate(steps):
        local, on_cluster = _rows(snap[f"{how}/local"]), _rows(snap[f"{how}/spark"])
        assert on_cluster == local, f"step {i + 1}: the same rows in the same batches"
    total: dict[tuple, int] = {}
    for rows in _rows(steps[-1][f"{how}/local"]).values():
        for r, n in rows.items():
            total[r] = total.get(r, 0) + n
    assert total == {tuple(r): 1 for r in EXPECTED[how]}
    # rows arrive in later steps too (the comparison is not over empty sinks)
    sizes = [sum(sum(rows.values()) for rows in _rows(s[f"{how}/local"]).values())
             for s in steps]
    assert sizes == sorted(sizes) and sizes[0] < sizes[FAULT_STEP] < sizes[-1], sizes


def test_stream_join_restarts_from_its_checkpoint_on_cluster(report) -> None:
    # the inner join's steps after the restart are checked above; here: it was a real restart
    assert report["restart"]["spark"] == {"stopped": True, "same_id": True, "new_run": True}
    assert report["failed_tasks_inner"] == 0


def test_killed_stateful_worker_is_retried_without_double_applying_state(report) -> None:
    fault = report["fault"]
    assert fault["killed"], "the stateful processor did not run with the kill hook"
    assert fault["failed_tasks"] >= 1, fault  # the kill failed a task, which Spark retried
    assert fault["active"], fault  # and the query went on
    # the output after the retry and in the later batches is the local runtime's (above);
    # a retry over the failed attempt's state writes would hold step 2's rows twice (step 3's
    # matches (9, 210, 9, 230) and (13, 205, 13, 220), one per state partition, twice) or,
    # losing them, miss those matches
    last = _rows(report["steps"][-1]["leftOuter/spark"])
    assert sum(n for rows in last.values() for n in rows.values()) == len(EXPECTED["leftOuter"])


def test_kernel_error_in_stream_join_is_embers_error_on_cluster(report) -> None:
    errors = report["errors"]
    for rt in ("local", "spark"):
        err = errors[rt]
        assert err is not None, f"{rt}: the division by zero did not fail the query"
        assert err["type"] == "StreamingQueryException" and not err["active"], err
        assert err["same_as_exception"], err
        cause = err["cause"]
        assert cause is not None and cause["class"] == "DIVIDE_BY_ZERO", err
        assert "Java" not in cause["text"] and "at org.apache" not in cause["text"], cause
        assert "at org.apache" not in err["text"], err["text"]
    assert errors["spark"]["cause"]["type"] == errors["local"]["cause"]["type"]
    op = errors["spark"]["cause"]["operator"]
    assert op and op.startswith("Project") and "bad" in op, errors["spark"]
