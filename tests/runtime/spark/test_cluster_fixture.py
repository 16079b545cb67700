"""The standalone-cluster helper really runs tasks in executor processes on another JVM.

A driver script (subprocess) runs an RDD job and a DataFrame aggregation on the cluster and reports,
as JSON, where tasks ran: Python worker pids, their process ancestry (an executor JVM started by the
Worker, not the driver), the executor ids known to the driver, and ``ember.__file__`` as imported by
a task. After the cluster stops, no process of its groups is left.
"""

from __future__ import annotations

import json
import os
import sys
import time

import pytest

from tests.full_run import run_all
from tests.spark_cluster import ClusterError, StandaloneCluster, java_home, live_processes

pytestmark = [
    pytest.mark.spark_cluster,
    pytest.mark.spark,
    pytest.mark.skipif(java_home() is None, reason="no Java available"),
    pytest.mark.skipif(not os.path.isdir("/proc"), reason="process checks read /proc (Linux)"),
    pytest.mark.skipif(not run_all("EMBER_CLUSTER_ALL"),
                       reason="checks of the cluster test helper itself (its own cluster and "
                              "timeouts); EMBER_CLUSTER_ALL=1 runs them"),
]

DRIVER = r"""
import json, os, sys
from pyspark.sql import functions as F
from tests.spark_cluster import cluster_session

spark = cluster_session(os.environ["MASTER_URL"], "ember-cluster-fixture")
sc = spark.sparkContext

pairs = sc.parallelize(range(100), 4).map(lambda x: (os.getpid(), x)).collect()

def probe(_):
    import os, sys
    import ember
    chain, pid = [], os.getpid()
    while pid > 1 and len(chain) < 8:
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as f:
                cmd = f.read().replace(b"\0", b" ").decode(errors="replace")
            with open(f"/proc/{pid}/stat") as f:
                ppid = int(f.read().rsplit(")", 1)[1].split()[1])
        except OSError:
            break
        chain.append((pid, cmd[-400:]))
        pid = ppid
    yield {"pid": os.getpid(), "python": sys.executable, "ember": ember.__file__, "chain": chain}

probes = sc.parallelize(range(2), 2).mapPartitions(probe).collect()
counts = (spark.range(1000).groupBy((F.col("id") % 3).alias("k")).count()
          .orderBy("k").collect())
executor_ids = [e for e in sc._jsc.sc().getExecutorIds().mkString(",").split(",") if e]

print("RESULT " + json.dumps({
    "driver_pid": os.getpid(),
    "master": sc.master,
    "pairs": pairs,
    "probes": probes,
    "counts": [[r.k, r["count"]] for r in counts],
    "executor_ids": executor_ids,
}))
spark.stop()
"""


def _alive(pid: int) -> bool:
    """``pid`` exists and is not a zombie (orphans are reaped by PID 1 only after a while)."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            state = f.read().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        state = "gone"
    return state not in ("gone", "Z") or bool(live_processes(-1, pid))


def test_tasks_run_in_separate_executor_processes():
    t0 = time.monotonic()
    with StandaloneCluster() as cluster:
        started = time.monotonic() - t0
        proc = cluster.run_script(DRIVER, timeout=120)
        ran = time.monotonic() - t0
        groups = (cluster.master.pid, cluster.worker.pid)
    total = time.monotonic() - t0
    line = next(ln for ln in proc.stdout.splitlines() if ln.startswith("RESULT "))
    res = json.loads(line[len("RESULT "):])

    assert res["master"] == cluster.master_url
    assert sorted(x for _, x in res["pairs"]) == list(range(100))
    driver = res["driver_pid"]
    task_pids = {pid for pid, _ in res["pairs"]} | {p["pid"] for p in res["probes"]}
    assert driver not in task_pids
    assert res["counts"] == [[0, 334], [1, 333], [2, 333]]
    assert len(res["executor_ids"]) >= 1 and "driver" not in res["executor_ids"]

    import ember

    for p in res["probes"]:
        assert p["python"] == sys.executable
        assert os.path.realpath(p["ember"]) == os.path.realpath(ember.__file__)
        ancestry = [pid for pid, _ in p["chain"]]
        cmds = " | ".join(cmd for _, cmd in p["chain"])
        # Python worker <- pyspark daemon <- executor JVM <- Worker JVM: the driver is no ancestor.
        assert driver not in ancestry, cmds
        assert "CoarseGrainedExecutorBackend" in cmds, cmds
        assert groups[1] in ancestry, cmds  # the executor was launched by our Worker

    # Master, Worker, executor JVM, pyspark daemons and Python workers are all gone.
    spawned = set(groups) | {pid for p in res["probes"] for pid, _ in p["chain"][:3]}
    assert not [p for p in spawned if _alive(p)], "cluster processes survived stop()"
    print(
        f"\ncluster up {started:.1f} s, driver done {ran:.1f} s, stopped {total:.1f} s;"
        f" ember at {res['probes'][0]['ember']}"
    )
    assert total < 90


def test_start_timeout_reports_logs_and_cleans_up():
    cluster = StandaloneCluster(start_timeout=0.5)
    with pytest.raises(ClusterError, match="did not register") as info:
        cluster.start()
    assert "--- master log" in str(info.value) and "--- worker log" in str(info.value)
    assert not [p.pid for p in (cluster.master, cluster.worker) if _alive(p.pid)]
    assert cluster.work_dir is not None and not cluster.work_dir.exists()
