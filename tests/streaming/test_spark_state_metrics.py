"""The stream-stream join's rows held per side on the Spark runtime
(``StreamingQuery.state_rows_per_side``, read from Spark's checkpoint with the State Data Source)
equal the local runtime's ``numTotalStateRowsLeft`` / ``numTotalStateRowsRight`` progress
metrics, batch by batch, for the same files (the scripted steps of
:mod:`tests.streaming.test_spark_runtime_stream`: a full outer join whose state fills in step 1,
is partly evicted by the no-data batch, and is evicted down to step 2's last match)."""

from __future__ import annotations

import os

import pytest

import ember
from ember.errors import AnalysisError
from tests.streaming.test_spark_runtime_stream import CONF, STEPS, start, write_step

pytestmark = pytest.mark.spark


def _local_counts(q) -> dict[int, dict[str, int]]:
    out = {}
    for p in q.recentProgress:
        joins = [op["customMetrics"] for op in p.get("stateOperators", [])
                 if "numTotalStateRowsLeft" in op.get("customMetrics", {})]
        if joins:
            out[p["batchId"]] = {"left": joins[0]["numTotalStateRowsLeft"],
                                 "right": joins[0]["numTotalStateRowsRight"]}
    return out


def test_state_rows_per_side_on_spark_equals_local(spark, tmp_path):
    base = str(tmp_path)
    for d in ("L", "R"):
        os.makedirs(os.path.join(base, d))
    sessions = {"local": ember.Session(CONF),
                "spark": ember.Session(CONF, runtime="spark", spark=spark)}
    qs = {rt: start(s, base, "fullOuter", rt) for rt, s in sessions.items()}
    with pytest.raises(AnalysisError, match="not committed a batch"):
        qs["spark"].state_rows_per_side()
    try:
        for step, (imps, clicks) in enumerate(STEPS):
            write_step(qs.values(), base, step, imps, clicks)
            if step == 0:
                # the data batch's counts, by hand: every row of step 1 is held
                assert qs["spark"].state_rows_per_side(0) == {"left": 4, "right": 4}
    finally:
        for q in qs.values():
            q.stop()
    local = _local_counts(qs["local"])
    committed = sorted(int(n) for n in os.listdir(os.path.join(base, "ck", "spark", "commits"))
                       if n.isdigit())
    assert sorted(local) == committed, (local, committed)  # the same batches on both runtimes
    on_spark = {b: qs["spark"].state_rows_per_side(b) for b in committed}
    assert on_spark == local
    # the no-data batch after step 1 evicted clicks (some state, not all, left); after step 2
    # only (7, 400) and (7, 405) are held, above the 385 s watermark
    assert any(0 < c["right"] < 4 for c in on_spark.values()), on_spark
    assert qs["spark"].state_rows_per_side() == on_spark[committed[-1]] == {"left": 1, "right": 1}
    assert qs["local"].state_rows_per_side() == local[committed[-1]]
    with pytest.raises(AnalysisError, match="not committed"):
        qs["spark"].state_rows_per_side(committed[-1] + 5)
