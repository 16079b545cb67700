"""Ember's Spark runtime on a real standalone cluster: separate Master, Worker and executor JVMs
and Python workers, the ember package shipped with the job, a Python worker killed mid-task.

One driver script (a subprocess: this process owns the oracle's local SparkContext) runs on
the cluster of the session-scoped ``spark_cluster`` fixture and reports as JSON:

* joins and aggregates over Parquet files (sort-merge, shuffled hash, broadcast) give the rows
  the local runtime gives;
* the executors import ember from the zip the session shipped (``ember.spark.shipPackage``);
* with ``ember.spark.test.killWorkerOnce`` the first task kills its own Python worker; Spark
  retries the task (``spark.task.maxFailures`` is 4 on a cluster) and the rows are still right;
* the session Ember built talks to its Python workers over a Unix socket (``SPARK_DEFAULTS``);
* a division by zero inside a task comes back as Ember's ``DIVIDE_BY_ZERO`` error naming the
  Project that raised it.
"""

from __future__ import annotations

import json
import os

import pytest

from tests.spark_cluster import java_home

pytestmark = [
    pytest.mark.spark_cluster,
    pytest.mark.spark,
    pytest.mark.skipif(java_home() is None, reason="no Java available"),
]

DRIVER = r"""
import json, os, sys
import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

import ember
from tests.spark_cluster import CLUSTER_SESSION_CONF

work = os.environ["EMBER_CLUSTER_WORK_DIR"]
rng = np.random.default_rng(5)
n = 20000
pq.write_table(pa.table({"k": pa.array(rng.integers(0, 500, n)), "v": pa.array(rng.random(n))}),
               os.path.join(work, "facts.parquet"), row_group_size=4000)
pq.write_table(pa.table({"k": pa.array(np.arange(0, 600)),
                         "name": pa.array([f"n{i % 7}" for i in range(600)])}),
               os.path.join(work, "dims.parquet"))

conf = {"spark.sql.shuffle.partitions": "6", "ember.spark.shipPackage": "true"}
# Ember builds the SparkSession for the master URL; the Spark settings pass through
spark_conf = dict(CLUSTER_SESSION_CONF)
spark_conf.update({"spark.pyspark.python": sys.executable,
                   "spark.executorEnv.PYSPARK_PYTHON": sys.executable,
                   "spark.sql.warehouse.dir": os.path.join(work, "warehouse")})
cluster = ember.Session({**spark_conf, **conf}, runtime="spark", master=os.environ["MASTER_URL"])
spark = cluster.spark_session
local = ember.Session(conf)
for s in (cluster, local):
    for t in ("facts", "dims"):
        s.sql(f"CREATE TEMP VIEW {t} USING parquet OPTIONS (path '{work}/{t}.parquet')")

QUERY = '''SELECT d.name, count(*) AS c, round(sum(f.v), 6) AS s, count(DISTINCT f.k) AS keys
           FROM facts f JOIN dims d ON f.k = d.k GROUP BY d.name ORDER BY d.name'''
STRATEGIES = {
    "broadcast": {},
    "sort-merge": {"spark.sql.autoBroadcastJoinThreshold": "-1"},
    "shuffled hash": {"spark.sql.autoBroadcastJoinThreshold": "-1",
                      "ember.join.forceApplyShuffledHashJoin": "true"},
}
report = {"master": spark.sparkContext.master, "strategies": {},
          "unix_socket": spark.sparkContext.getConf().get(
              "spark.python.unix.domain.socket.enabled")}
expected = local.sql(QUERY).collect()
for name, extra in STRATEGIES.items():
    for k, v in extra.items():
        cluster.conf.set(k, v)
    plan = cluster.sql(QUERY)._qe.executed_plan.tree_string()
    rows = cluster.sql(QUERY).collect()
    report["strategies"][name] = {"equal": rows == expected, "rows": len(rows),
                                  "plan": plan}
    for k in extra:
        cluster.conf.unset(k)

def where(_):
    import ember
    yield ember.__file__

report["executor_ember"] = spark.sparkContext.parallelize([0], 1).mapPartitions(where).collect()

marker = os.path.join(work, "killed-once")
cluster.conf.set("ember.spark.test.killWorkerOnce", marker)
cluster.conf.set("spark.sql.autoBroadcastJoinThreshold", "-1")
rows = cluster.sql(QUERY).collect()
report["fault"] = {"killed": os.path.exists(marker), "equal": rows == expected}
cluster.conf.unset("ember.spark.test.killWorkerOnce")

try:
    cluster.sql("SELECT k, 1 / (k - k) AS bad FROM dims").collect()
    report["error"] = None
except Exception as e:
    report["error"] = {"type": type(e).__name__, "class": getattr(e, "error_class", None),
                       "operator": getattr(e, "ember_operator", None),
                       "notes": getattr(e, "__notes__", []), "text": str(e)}
print("RESULT " + json.dumps(report))
"""


def test_ember_runs_on_a_standalone_cluster(spark_cluster) -> None:
    proc = spark_cluster.run_script(DRIVER, timeout=240)
    line = next((ln for ln in proc.stdout.splitlines() if ln.startswith("RESULT ")), None)
    assert line is not None, f"no result; stdout:\n{proc.stdout}\nstderr:\n{proc.stderr[-4000:]}"
    report = json.loads(line.removeprefix("RESULT "))
    assert report["master"] == spark_cluster.master_url
    # Ember's default for a session it builds: Python workers over a Unix socket (what follows
    # -- the queries, the killed worker's retry -- runs with it)
    assert report["unix_socket"] == "true"

    ops = {"broadcast": "BroadcastHashJoin", "sort-merge": "SortMergeJoin",
           "shuffled hash": "ShuffledHashJoin"}
    for name, op in ops.items():
        got = report["strategies"][name]
        assert op in got["plan"], got["plan"]
        assert got["rows"] == 7 and got["equal"], name

    # the executors run the ember package the session shipped, not the driver's checkout
    (path,) = report["executor_ember"]
    assert "ember.zip" in path or "userFiles" in path, path
    assert not path.startswith(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))), path

    assert report["fault"] == {"killed": True, "equal": True}

    err = report["error"]
    assert err is not None and err["class"] == "DIVIDE_BY_ZERO", err
    assert err["type"] == "ArithmeticError_", err
    assert err["operator"] and err["operator"].startswith("Project"), err
    assert "Java" not in err["text"] and "at org.apache" not in err["text"], err["text"]
