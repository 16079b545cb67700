"""End to end through ``session.sql``: a join and a sort whose inputs are 3x the memory budget
(``ember.execution.memoryBudget``) spill and still give the right rows (issue 4)."""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import ember

BUDGET = 1 << 20  # 1 MiB
ROWS = 100_000  # two int64 columns + a 16-char string: ~3.6 MiB per table


def _table(seed: int) -> pa.Table:
    rng = np.random.default_rng(seed)
    k = rng.permutation(ROWS).astype(np.int64)
    v = rng.integers(0, 1_000_000, ROWS, dtype=np.int64)
    s = pa.array([f"{i:016d}" for i in range(ROWS)], pa.string())
    return pa.table({"k": k, "v": v, "s": s})


@pytest.fixture(scope="module")
def data(tmp_path_factory):
    d = tmp_path_factory.mktemp("budget")
    left, right = _table(1), _table(2)
    assert left.nbytes >= 3 * BUDGET and right.nbytes >= 3 * BUDGET
    pq.write_table(left, d / "l.parquet", row_group_size=8192)
    pq.write_table(right, d / "r.parquet", row_group_size=8192)
    return d, left, right


def _session(d, **conf) -> ember.Session:
    s = ember.Session()
    s.sql(f"CREATE TEMP VIEW l USING parquet OPTIONS (path '{d / 'l.parquet'}')")
    s.sql(f"CREATE TEMP VIEW r USING parquet OPTIONS (path '{d / 'r.parquet'}')")
    s.sql(f"SET ember.execution.memoryBudget={BUDGET}")
    s.sql("SET ember.execution.batchSize=4096")
    for k, v in conf.items():
        s.sql(f"SET {k}={v}")
    return s


@pytest.mark.parametrize("strategy", ["merge", "shuffle_hash"])
def test_join_over_budget(data, strategy):
    d, left, right = data
    s = _session(d, **{"spark.sql.autoBroadcastJoinThreshold": "-1",
                       "spark.sql.join.preferSortMergeJoin": str(strategy == "merge").lower()})
    df = s.sql(f"SELECT /*+ {strategy.upper()}(r) */ l.k, l.v, r.v AS rv, r.s "
               "FROM l JOIN r ON l.k = r.k")
    plan = df._qe.explain_string("simple")
    assert ("SortMergeJoin" if strategy == "merge" else "ShuffledHashJoin") in plan
    got = df.to_arrow()
    assert got.num_rows == ROWS
    want = left.join(right, "k", join_type="inner", right_suffix="_r")
    got_rows = sorted(zip(got.column("k").to_pylist(), got.column("v").to_pylist(),
                          got.column("rv").to_pylist(), got.column("s").to_pylist()))
    want_rows = sorted(zip(want.column("k").to_pylist(), want.column("v").to_pylist(),
                           want.column("v_r").to_pylist(), want.column("s_r").to_pylist()))
    assert got_rows == want_rows
    assert df._qe.run_metrics.spill_size > 0


def test_sort_over_budget(data):
    d, left, _ = data
    s = _session(d)
    df = s.sql("SELECT v, k, s FROM l ORDER BY v DESC, k")
    got = df.to_arrow()
    order = sorted(zip(left.column("v").to_pylist(), left.column("k").to_pylist(),
                       left.column("s").to_pylist()), key=lambda r: (-r[0], r[1]))
    assert list(zip(got.column("v").to_pylist(), got.column("k").to_pylist(),
                    got.column("s").to_pylist())) == order
    assert df._qe.run_metrics.spill_size > 0
