"""Streaming aggregations and deduplication, Ember vs Spark Structured Streaming, batch by batch.

Each scenario (see :mod:`tests.streaming.spark_harness`) is one query fed the same scripted input
batches on both engines; Ember's sink must receive the same rows in the same micro-batches
(data batches and the no-data batches the watermark calls for), with the same watermarks, state
rows (``numRowsTotal``) and late rows dropped (``numRowsDroppedByWatermark``) as Spark's.

Default scenarios: a tumbling window in append mode (rows emitted once the watermark passes the
window's end, a late row dropped, a restart from the checkpoint mid-stream), a sliding window in
update mode, a window in SQL (``GROUP BY window(...)``), a keyed and a global
aggregation in complete mode, and the three deduplications: ``dropDuplicates`` over the
event-time column (evicted by the watermark), ``dropDuplicates`` without a watermark (state kept
for ever, restarted mid-stream) and ``dropDuplicatesWithinWatermark``; and two chains of stateful
operators (a time-range join then a windowed count, a deduplication then a windowed count: the
aggregation's input watermark is the one the operator below propagates).  ``EMBER_STREAM_AGG_SWEEP=1``
adds every window type x output mode and more aggregate functions (Spark must have written their
goldens: ``EMBER_STREAM_AGG_SWEEP=1 EMBER_STREAM_GOLDEN=write``).

The script (event times in seconds after T0, watermark delay 10 s, windows of 10 s)::

    step 0: (1,1) (2,5) (1,12)             max 12 -> watermark 2
    step 1: (1,25) (1,3) (2,14)            3 is not late yet (window [0,10) ends after 2);
                                           max 25 -> watermark 15: a no-data batch evicts [0,10)
    step 2: (1,8) (2,31)                   8 is late (its window ended at 10 <= 15): dropped;
                                           watermark 21 evicts [10,20)
    step 3: (1,45) (1,44) (2,44)           watermark 35 evicts [20,30) and [30,40)

Spark's results are golden files written by PySpark (:mod:`tests.streaming.goldens`);
``EMBER_STREAM_GOLDEN=live`` runs Spark again and checks them, ``EMBER_STREAM_GOLDEN=write``
rewrites them.  Run: ``python -m pytest -q tests/streaming/test_stream_agg_vs_spark.py``.
"""

from __future__ import annotations

import dataclasses
import math
import os
from collections import Counter
from typing import Any

import pytest

from tests.streaming.goldens import spark_golden_runs
from tests.streaming.spark_harness import (
    EmberEngine,
    Scenario,
    StepResult,
    assert_same,
    ember_test_session,
    run_scenario,
    ts,
)

pytestmark = [pytest.mark.spark, pytest.mark.differential]

EVENTS = "k INT, t TIMESTAMP, v INT"
SWEEP = os.environ.get("EMBER_STREAM_AGG_SWEEP", "") == "1"


def _ev(*rows: tuple[int, float, int]) -> tuple[tuple, ...]:
    return tuple((k, ts(t), v) for k, t, v in rows)


STEPS = (
    {"ev": _ev((1, 1, 10), (2, 5, 20), (1, 12, 30))},
    {"ev": _ev((1, 25, 1), (1, 3, 5), (2, 14, 7))},
    {"ev": _ev((1, 8, 100), (2, 31, 4))},
    {"ev": _ev((1, 45, 2), (1, 44, 2), (2, 44, 3))},
)
#: deduplication input: repeated keys within and across batches, a late duplicate
DEDUP_STEPS = (
    {"ev": _ev((1, 1, 10), (2, 5, 20), (1, 12, 30))},
    {"ev": _ev((1, 12, 31), (2, 25, 1), (3, 5, 2))},
    {"ev": _ev((1, 1, 11), (2, 25, 2), (4, 30, 3))},
    {"ev": _ev((3, 40, 4), (1, 12, 32), (4, 30, 5))},
)


def _wm(df: Any) -> Any:
    return df.withWatermark("t", "10 seconds")


def _sql(df: Any, query: str) -> Any:
    """``query`` over ``df`` registered as the temporary view ``ev_sql``."""
    df.createOrReplaceTempView("ev_sql")
    return df.sparkSession.sql(query)


def _scenario(name: str, build: Any, mode: str, steps: Any = STEPS, **kw: Any) -> Scenario:
    return Scenario(name, {"ev": EVENTS}, steps, build, output_mode=mode, **kw)


SCENARIOS = [
    _scenario("tumbling_append_restart",
              lambda F, s, st: _wm(s["ev"]).groupBy(F.window("t", "10 seconds"), "k").agg(
                  F.count("*"), F.sum("v"), F.max("v")), "append",
              restart_before=frozenset({2})),
    _scenario("sliding_update",
              lambda F, s, st: _wm(s["ev"]).groupBy(F.window("t", "10 seconds", "5 seconds")).agg(
                  F.avg("v"), F.min("t")), "update"),
    _scenario("sql_window_append", lambda F, s, st: _sql(
        _wm(s["ev"]), "SELECT window(t, '10 seconds') AS w, count(v) AS n, sum(v * 2) AS s2 "
        "FROM ev_sql GROUP BY window(t, '10 seconds')"), "append"),
    _scenario("keyed_complete",
              lambda F, s, st: s["ev"].groupBy("k").agg(F.count("*"), F.avg("v"), F.min("v"),
                                                         F.stddev("v")), "complete"),
    _scenario("global_complete",
              lambda F, s, st: s["ev"].groupBy().agg(F.sum("v"), F.max("t"),
                                                     F.approx_count_distinct("v")), "complete"),
    _scenario("dedup_event_time_append",
              lambda F, s, st: _wm(s["ev"]).dropDuplicates(["k", "t"]), "append",
              DEDUP_STEPS),
    _scenario("dedup_no_watermark_restart",
              lambda F, s, st: s["ev"].dropDuplicates(["k"]), "append", DEDUP_STEPS,
              restart_before=frozenset({2})),
    _scenario("dedup_within_watermark",
              lambda F, s, st: _wm(s["ev"]).dropDuplicatesWithinWatermark(["k"]), "append",
              DEDUP_STEPS),
]

#: chained stateful operators (issue 26 item 3): a time-range inner join, then a windowed count
CHAIN_STEPS = (
    {"l": ((1, ts(1)), (2, ts(4)), (3, ts(12))), "r": ((1, ts(2)), (2, ts(30)), (3, ts(14)))},
    {"l": ((4, ts(22)), (5, ts(26))), "r": ((4, ts(23)), (5, ts(27)), (1, ts(3)))},
    {"l": ((6, ts(41)),), "r": ((6, ts(42)),)},
    {"l": ((7, ts(60)),), "r": ((7, ts(61)),)},
)
CHAIN_SCENARIOS = [
    Scenario("join_then_window_count_append", {"l": "lk INT, lt TIMESTAMP",
                                               "r": "rk INT, rt TIMESTAMP"}, CHAIN_STEPS,
             lambda F, s, st: _wm2(s["l"], "lt").join(
                 _wm2(s["r"], "rt"), F.expr("lk = rk AND rt >= lt AND rt <= lt + interval 5 "
                                            "seconds")).groupBy(F.window("lt", "10 seconds"))
             .agg(F.count("*").alias("n"), F.sum("lk").alias("s")),
             output_mode="append"),
    _scenario("dedup_then_window_count_append",
              lambda F, s, st: _wm(s["ev"]).dropDuplicates(["k", "t"]).groupBy(
                  F.window("t", "10 seconds")).agg(F.count("*").alias("n"), F.sum("v")),
              "append", DEDUP_STEPS),
]


def _wm2(df: Any, column: str) -> Any:
    return df.withWatermark(column, "10 seconds")


SWEEP_SCENARIOS = [
    _scenario("tumbling_update",
              lambda F, s, st: _wm(s["ev"]).groupBy(F.window("t", "10 seconds"), "k").agg(
                  F.count("*"), F.sum("v")), "update"),
    _scenario("tumbling_complete",
              lambda F, s, st: _wm(s["ev"]).groupBy(F.window("t", "10 seconds")).agg(
                  F.count("*")), "complete"),
    _scenario("sliding_append_restart",
              lambda F, s, st: _wm(s["ev"]).groupBy(F.window("t", "10 seconds", "5 seconds"),
                                                    "k").agg(F.sum("v")), "append",
              restart_before=frozenset({1, 3})),
    _scenario("sliding_complete",
              lambda F, s, st: _wm(s["ev"]).groupBy(F.window("t", "15 seconds", "10 seconds")).agg(
                  F.count("*")), "complete"),
    _scenario("keyed_update_functions",
              lambda F, s, st: s["ev"].groupBy("k").agg(
                  F.count_if(F.col("v") > 5), F.bool_and(F.col("v") > 1), F.var_pop("v"),
                  F.max_by("v", "t"), F.bit_or("v"), F.kurtosis("v"), F.corr("v", "k")),
              "update"),
    _scenario("dedup_all_columns_update",
              lambda F, s, st: s["ev"].dropDuplicates(), "update", DEDUP_STEPS),
    _scenario("dedup_within_watermark_restart",
              lambda F, s, st: _wm(s["ev"]).dropDuplicatesWithinWatermark(["k", "v"]), "append",
              DEDUP_STEPS, restart_before=frozenset({1, 2, 3})),
]

ALL = SCENARIOS + CHAIN_SCENARIOS + (SWEEP_SCENARIOS if SWEEP else [])


@pytest.fixture(scope="module")
def spark_runs(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory):
    """Spark's results per scenario: stored goldens, or Spark run live."""
    return spark_golden_runs("test_stream_agg_vs_spark", request, tmp_path_factory)


@pytest.mark.parametrize("scenario", ALL, ids=lambda s: s.name)
def test_ember_matches_spark(spark_runs: Any, scenario: Scenario, tmp_path: Any) -> None:
    spark_results = spark_runs(scenario)
    assert any(sum(b.rows.values()) for r in spark_results for b in r.batches)
    ember_results = run_scenario(EmberEngine(ember_test_session()), scenario, str(tmp_path / "ck"))
    assert_same(scenario, _rounded(spark_results), _rounded(ember_results))


def _rounded(results: list[StepResult]) -> list[StepResult]:
    """Doubles to 12 significant digits: a variance merged from buffers in another order
    differs in the last bits (Spark's own results do from run to run)."""

    def value(v: Any) -> Any:
        if isinstance(v, float) and math.isfinite(v) and v != 0:
            return round(v, 11 - int(math.floor(math.log10(abs(v)))))
        return v

    return [StepResult(tuple(
        dataclasses.replace(b, rows=Counter({tuple(value(x) for x in row): n
                                             for row, n in b.rows.items()}))
        for b in step.batches)) for step in results]


#: aggregate functions whose buffers the state store holds, as SQL over (k, v, d)
STORABLE = ("count(v)", "count(1)", "sum(v)", "avg(d)", "min(d)", "max(v)", "first(v)",
            "last(d)", "any_value(v)", "count_if(v > 2)", "bool_and(v > 1)", "bool_or(v > 1)",
            "max_by(k, d)", "min_by(d, v)", "stddev(d)", "var_pop(v)", "skewness(d)",
            "kurtosis(v)", "covar_samp(v, d)", "corr(v, d)", "regr_slope(v, d)", "regr_r2(v, d)",
            "regr_sxx(v, d)", "bit_and(v)", "bit_or(v)", "bit_xor(v)",
            "sum(cast(d as decimal(10, 2)))", "avg(cast(v as decimal(8, 1)))",
            "approx_count_distinct(v)", "collect_list(v)", "sort_array(collect_set(d))")


def test_streaming_buffers_merge_to_the_batch_result(tmp_path: Any) -> None:
    """Every storable aggregate in one complete-mode query: after three batches (restored,
    merged and saved twice, a restart before the last) each group's result equals the batch
    aggregation over all rows (whose results the aggregation suites check against Spark).
    ``first``/``last`` pin the order: the stored buffers come before the batch's."""
    import ember.functions as F
    from ember.streaming import MemoryStream

    exprs = STORABLE
    session = ember_test_session()
    steps = [[(1, 1, 1.5), (2, 3, 2.0), (1, 4, None)], [(1, 5, -1.0), (3, 2, 0.5)],
             [(2, 4, 4.0), (1, 2, 2.5), (3, None, 1.0)]]
    ms = MemoryStream(session, "k INT, v INT, d DOUBLE")
    df = ms.toDF().groupBy("k").agg(*[F.expr(e).alias(f"c{i}") for i, e in enumerate(exprs)])
    got: dict[str, list] = {}

    def start() -> Any:
        return (df.writeStream.outputMode("complete")
                .foreachBatch(lambda b, i: got.__setitem__("rows", b.collect()))
                .option("checkpointLocation", str(tmp_path / "ck")).start())

    q = start()
    for i, rows in enumerate(steps):
        if i == 2:
            q.stop()
            q = start()
        ms.addData(rows)
        q.processAllAvailable()
    q.stop()
    batch = session.createDataFrame([r for s in steps for r in s], "k INT, v INT, d DOUBLE")
    want = batch.groupBy("k").agg(*[F.expr(e).alias(f"c{i}") for i, e in enumerate(exprs)])
    norm = [_round_row(tuple(r)) for r in sorted(got["rows"], key=lambda r: r[0])]
    assert norm == [_round_row(tuple(r)) for r in sorted(want.collect(), key=lambda r: r[0])]


def _round_row(row: tuple) -> tuple:
    return tuple(round(v, 9) if isinstance(v, float) else v for v in row)
