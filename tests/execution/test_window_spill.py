"""Window partitions larger than the memory budget (``ember.execution.memoryBudget``) spill to
disk and are evaluated chunk by chunk (``ember.execution.window_spilled``): the same rows as
PySpark 4.3 and as Ember's in-memory path for every function family and frame kind, on both
runtimes, and the window operator's tracked memory stays within the budget for a partition
many times its size."""

from __future__ import annotations

from typing import Any

import pytest

from ember.physical.nodes import WindowExec, WindowGroupLimitExec
from tests.conformance.ember_adapter import RUNTIMES, new_session

BUDGET = "8k"  # each of the two big window partitions holds 20-50 KB
SPILL_CONF = {"ember.execution.memoryBudget": BUDGET, "ember.execution.batchSize": "64"}


# Pseudo-random columns over range(700) (the same expressions on both engines): two big
# window partitions and a small NULL one; NULLs, ties and dates in the order keys.
TABLE = (
    "SELECT id, CASE WHEN id % 97 = 5 THEN NULL ELSE (id * 7) % 3 % 2 + 1 END AS p, "
    "CASE WHEN id % 13 = 3 THEN NULL ELSE (id * 7919) % 61 END AS o, "
    "CASE WHEN id % 7 = 2 THEN NULL ELSE (id * 104729) % 101 - 50 END AS x, "
    "CASE WHEN id % 11 = 4 THEN NULL ELSE CAST((id * 31) % 81 - 40 AS DOUBLE) / 4 END AS f, "
    "CASE WHEN id % 17 = 6 THEN NULL ELSE date_add(DATE'2024-01-01', CAST((id * 37) % 91 AS "
    "INT)) END AS d, concat('k', CAST((id * 13) % 31 AS STRING)) AS s FROM r")
ROWS = 700


def _view(session: Any) -> None:
    session.range(ROWS).createOrReplaceTempView("r")
    session.sql(f"CREATE OR REPLACE TEMPORARY VIEW t AS {TABLE}")


QUERIES = [
    # ranking: peers across chunk boundaries, partition size for percent_rank / cume_dist / ntile
    "SELECT id, row_number() OVER w rn, rank() OVER w r, dense_rank() OVER w dr, "
    "percent_rank() OVER w pr, cume_dist() OVER w cd, ntile(7) OVER w nt "
    "FROM t WINDOW w AS (PARTITION BY p ORDER BY o)",
    "SELECT id, rank() OVER (PARTITION BY p ORDER BY s DESC, o) r, "
    "dense_rank() OVER (ORDER BY s) dr FROM t",
    # peer groups spanning many stored batches (read ahead once)
    "SELECT id, rank() OVER w r, dense_rank() OVER w dr, cume_dist() OVER w cd, "
    "sum(x) OVER w s, count(x) OVER (PARTITION BY p ORDER BY o % 2 RANGE BETWEEN CURRENT ROW "
    "AND UNBOUNDED FOLLOWING) c "
    "FROM t WINDOW w AS (PARTITION BY p ORDER BY o % 2)",
    # offsets: lag / lead with defaults and IGNORE NULLS, nth_value, first / last
    "SELECT id, lag(x, 3) OVER w l, lead(x, 2, -1) OVER w le, lag(x, 2) IGNORE NULLS OVER w li, "
    "lead(x, 3) IGNORE NULLS OVER w lei, nth_value(x, 3) OVER w n, "
    "nth_value(x, 2) IGNORE NULLS OVER w ni, first_value(x) IGNORE NULLS OVER w fv, "
    "last_value(x) OVER w lv FROM t WINDOW w AS (PARTITION BY p ORDER BY o, id)",
    # running, whole-partition, sliding and suffix ROWS frames; FILTER
    "SELECT id, sum(x) OVER (PARTITION BY p ORDER BY o, id ROWS UNBOUNDED PRECEDING) s1, "
    "count(x) OVER (PARTITION BY p) c, avg(f) OVER (PARTITION BY p) a, "
    "max(x) OVER (PARTITION BY p ORDER BY o, id ROWS BETWEEN 3 PRECEDING AND 5 FOLLOWING) m, "
    "min(x) OVER (PARTITION BY p ORDER BY o, id ROWS BETWEEN CURRENT ROW AND UNBOUNDED "
    "FOLLOWING) mi, sum(f) OVER (PARTITION BY p ORDER BY o, id ROWS BETWEEN UNBOUNDED "
    "PRECEDING AND 200 FOLLOWING) s2, count(*) FILTER (WHERE x > 0) OVER (PARTITION BY p "
    "ORDER BY o, id ROWS BETWEEN 150 PRECEDING AND 100 PRECEDING) cf FROM t",
    # RANGE frames: CURRENT ROW peers, numeric offsets ascending / descending, date intervals
    "SELECT id, sum(x) OVER (PARTITION BY p ORDER BY o) s, "
    "avg(x) OVER (PARTITION BY p ORDER BY o RANGE BETWEEN 3 PRECEDING AND 2 FOLLOWING) a, "
    "sum(f) OVER (PARTITION BY p ORDER BY o DESC RANGE BETWEEN 2 PRECEDING AND UNBOUNDED "
    "FOLLOWING) sd, count(*) OVER (PARTITION BY p ORDER BY d RANGE BETWEEN INTERVAL 5 DAYS "
    "PRECEDING AND CURRENT ROW) cd, first(x) FILTER (WHERE x > 0) OVER (PARTITION BY p "
    "ORDER BY o RANGE BETWEEN CURRENT ROW AND 4 FOLLOWING) ff FROM t",
    # one window partition (no PARTITION BY), nth_value over a RANGE frame
    "SELECT id, sum(x) OVER (ORDER BY o, id ROWS BETWEEN UNBOUNDED PRECEDING AND 2 FOLLOWING) s, "
    "rank() OVER (ORDER BY o DESC) r, nth_value(x, 2) IGNORE NULLS OVER (ORDER BY o "
    "RANGE BETWEEN 10 PRECEDING AND 10 FOLLOWING) n FROM t",
    # WindowGroupLimit (rank <= k) over spilled partitions
    "SELECT * FROM (SELECT id, p, rank() OVER (PARTITION BY p ORDER BY o) r FROM t) "
    "WHERE r <= 3",
]


def _collect(session: Any, q: str) -> tuple[list[tuple], Any]:
    df = session.sql(q)
    return sorted(tuple(r) for r in df.collect()), df


@pytest.fixture(scope="module")
def spark_rows(spark: Any) -> dict[str, list[tuple]]:
    _view(spark)
    return {q: sorted(tuple(r) for r in spark.sql(q).collect()) for q in QUERIES}


def _window_nodes(plan: Any) -> list[Any]:
    out = [plan] if isinstance(plan, (WindowExec, WindowGroupLimitExec)) else []
    for c in plan.children:
        out += _window_nodes(c)
    return out


@pytest.mark.parametrize("runtime", RUNTIMES)
def test_spilled_windows_match_spark(runtime: str, spark_rows: dict[str, list[tuple]]) -> None:
    tiny = new_session(SPILL_CONF, runtime)
    _view(tiny)
    in_memory = new_session({}, runtime)
    _view(in_memory)
    for q in QUERIES:
        got, df = _collect(tiny, q)
        assert got == spark_rows[q], q
        assert _collect(in_memory, q)[0] == got, q
        if runtime == "local":  # window operators did spill, and say so in their metrics
            metrics = df._qe.run_metrics
            spilled = {n: metrics.get(n).spill_size > 0
                       and metrics.get(n).extra.get("spill_count", 0) > 0
                       for n in _window_nodes(df._qe.executed_plan)}
            assert any(spilled.values()), q
            # every WindowExec (but one over a WindowGroupLimit, 3 rows a partition) spilled
            assert all(v for n, v in spilled.items() if isinstance(n, WindowExec) and not any(
                isinstance(c, WindowGroupLimitExec) for c in _window_nodes(n.child))), q


def test_spilled_window_memory_stays_within_budget() -> None:
    """One window partition of ~60k rows (several MB) under a 256 KB budget: the window
    operator's tracked memory and the run's peak reservation stay within the budget."""
    budget = 256 * 1024
    session = new_session({"ember.execution.memoryBudget": str(budget),
                           "ember.execution.batchSize": "4096"})
    session.range(60000).createOrReplaceTempView("r")
    q = ("SELECT id, sum(v) OVER (ORDER BY k, id) s, lag(v, 5) OVER (ORDER BY k, id) l, "
         "rank() OVER (ORDER BY k) r, max(v) OVER (ORDER BY k, id ROWS BETWEEN 100 PRECEDING "
         "AND 100 FOLLOWING) m, count(*) OVER () c "
         "FROM (SELECT id, id % 1000 AS k, (id * 7919) % 1009 AS v FROM r)")
    df = session.sql(q)
    got = df.to_arrow()
    assert got.num_rows == 60000
    metrics = df._qe.run_metrics
    nodes = _window_nodes(df._qe.executed_plan)
    assert len(nodes) == 3  # (ORDER BY k, id), (ORDER BY k), ()
    for node in nodes:
        m = metrics.get(node)
        assert m.spill_size > 3 * budget
        assert 0 < m.peak_memory <= budget
    assert metrics.peak_budget_used <= budget
    # spot check against the in-memory evaluation
    plain = new_session({})
    plain.range(60000).createOrReplaceTempView("r")
    want = plain.sql(q).to_arrow()
    assert got.sort_by("id").equals(want.sort_by("id"))


def test_spilled_running_double_sums_are_bit_exact(spark: Any) -> None:
    """Running and whole-partition sums / averages of doubles over a spilled partition add in
    row order as Spark does (values of very different magnitudes make any other association
    differ)."""
    x = ("CASE WHEN id % 9 = 4 THEN NULL ELSE ((id * 7919) % 2001 - 1000) * CASE (id * 31) % 4 "
         "WHEN 0 THEN 1.0E-6D WHEN 1 THEN 1.0D WHEN 2 THEN 1.0E6D ELSE 1.0E9D END "
         "+ (id % 7) / 3.0D END")  # IEEE products and quotients: the same on both engines
    q = (f"SELECT id, sum(x) OVER (PARTITION BY p ORDER BY id) s, "
         f"avg(x) OVER (PARTITION BY p ORDER BY id ROWS UNBOUNDED PRECEDING) a, "
         f"sum(x) OVER (PARTITION BY p) w FROM (SELECT id, id % 2 AS p, {x} AS x FROM r)")
    spark.range(1600).createOrReplaceTempView("r")
    expected = sorted(tuple(r) for r in spark.sql(q).collect())
    for runtime in RUNTIMES:
        session = new_session(SPILL_CONF, runtime)
        session.range(1600).createOrReplaceTempView("r")
        got, df = _collect(session, q)
        assert got == expected, runtime
        if runtime == "local":
            metrics = df._qe.run_metrics
            assert all(metrics.get(n).spill_size > 0 for n in _window_nodes(df._qe.executed_plan))
