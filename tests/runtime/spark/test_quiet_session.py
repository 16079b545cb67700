"""The manners of a SparkSession Ember builds (``ember.runtime.spark.session``): it starts
without log4j or JVM lines on the terminal, and a failed task reaches the user once, as the Ember
error, without the executor's stack trace or the pickled payload that carries the error to the
driver.  The JVM's console output is in ``ember-spark-<pid>.log`` instead.

One fresh process (this one already runs the oracle's JVM) runs the CLI on the Spark runtime:
a query that works and one whose task fails.
"""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

pytestmark = pytest.mark.spark


def test_spark_session_starts_quietly_and_reports_a_task_error_once(tmp_path) -> None:
    env = {**os.environ, "PYSPARK_PYTHON": sys.executable, "TMPDIR": str(tmp_path)}
    env.pop("PYSPARK_GATEWAY_PORT", None)
    out = subprocess.run(
        [sys.executable, "-m", "ember", "--runtime", "spark", "sql",
         "SELECT 40 + 2 AS answer; SELECT 1 / (id - 1) AS q FROM range(3)"],
        capture_output=True, text=True, env=env, timeout=600)
    assert out.returncode == 1
    assert "answer" in out.stdout and "42" in out.stdout
    # the only line on stderr is the Ember error, once
    lines = [ln for ln in out.stderr.splitlines() if ln.strip()]
    assert len(lines) == 1, out.stderr
    assert lines[0].startswith("Error: [DIVIDE_BY_ZERO] Division by zero."), out.stderr
    # the JVM's console output went to its log file: Spark's start-up lines, the task's failure
    (log,) = tmp_path.glob("ember-spark-*.log")
    text = log.read_text()
    assert "log4j" in text and "DIVIDE_BY_ZERO" in text
