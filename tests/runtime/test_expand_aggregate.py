"""A partial aggregate over an Expand (ROLLUP / CUBE / GROUPING SETS) groups the Expand's input
without materializing its rows (``ember.runtime.local.operators.expand_aggregate``): the same
rows in the same order as with the rows materialized, for string, integer, float (NaN, -0.0),
date and NULL keys, order-sensitive aggregates (first, collect_list), FILTER, literals among
the grouping columns, several batches per partition (batch size 7) and chunked partial
aggregation; and the fused path is taken."""

from __future__ import annotations

import datetime as dt

import pyarrow as pa
import pytest

import ember
from ember.runtime.local.operators import expand_aggregate as ea

N = 600


@pytest.fixture(scope="module")
def table():
    return pa.table({
        "a": pa.array([None if i % 17 == 0 else f"a{i % 5}" for i in range(N)]),
        "b": pa.array([None if i % 13 == 0 else i % 7 for i in range(N)], pa.int64()),
        "c": pa.array([[0.0, -0.0, float("nan"), 1.5, None][i % 5] for i in range(N)]),
        "d": pa.array([dt.date(2020, 1, 1 + i % 3) for i in range(N)]),
        "v": pa.array([None if i % 11 == 0 else (i * 7) % 101 for i in range(N)], pa.int32()),
        "m": pa.array([f"m{(i * 13) % 29}" for i in range(N)]),
    })


QUERIES = [
    "SELECT a, b, count(*), sum(v), avg(v), min(m), max(m) FROM t GROUP BY ROLLUP(a, b)",
    "SELECT a, c, d, count(v), grouping_id() FROM t GROUP BY CUBE(a, c, d)",
    "SELECT a, b, first(m), collect_list(v) FROM t GROUP BY GROUPING SETS ((a), (b), (a, b), ())",
    "SELECT a, b, count(*) FILTER (WHERE v > 50), sum(v) FILTER (WHERE m < 'm2') FROM t "
    "GROUP BY ROLLUP(a, b)",
    "SELECT b, c, count(*), max(v) FROM t GROUP BY GROUPING SETS ((b, c), (c), (b))",
    "SELECT a, upper(m) AS um, sum(v) FROM t GROUP BY ROLLUP(a, upper(m))",
    "SELECT a, b, count(DISTINCT v) FROM t GROUP BY ROLLUP(a, b)",
    "SELECT a, grouping(a), count(*) FROM t GROUP BY ROLLUP(a) HAVING count(*) > 3",
    # duplicate grouping sets share a grouping id: keys compared across projections
    "SELECT a, b, count(*), sum(v) FROM t GROUP BY GROUPING SETS ((a), (a), (a, b), ())",
    "SELECT count(*) FROM t GROUP BY GROUPING SETS ((), ())",
]


def _session(table, batch: int | None) -> ember.Session:
    s = ember.Session()
    if batch is not None:
        s.sql(f"SET ember.execution.batchSize={batch}")
    s.createDataFrame(table).createOrReplaceTempView("t")
    return s


@pytest.mark.parametrize("batch", [None, 7])
@pytest.mark.parametrize("q", QUERIES)
def test_same_rows_in_same_order(table, monkeypatch, q, batch):
    s = _session(table, batch)
    reads = []
    orig = ea.ExpandGrouping.read

    def read(self, *args):
        got = orig(self, *args)
        reads.append(got is not None)
        return got

    monkeypatch.setattr(ea.ExpandGrouping, "read", read)
    fused = s.sql(q).to_arrow().to_pylist()
    monkeypatch.setattr(ea, "ENABLED", False)
    plain = s.sql(q).to_arrow().to_pylist()
    assert repr(fused) == repr(plain)
    assert any(reads) or "DISTINCT" in q or "upper" in q or "((), ())" in q
