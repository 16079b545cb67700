"""State stays bounded: a long generated stream through stream-stream joins with watermarks.

Two memory streams (impressions and clicks) get ``ROWS_PER_BATCH`` rows each per micro-batch,
their event times advancing by one second a batch (a little disorder within a second, and now
and then a row far behind the watermark, which must be dropped, not stored).  Both sides have a
``DELAY_S`` watermark and the join has the time range
``rt BETWEEN lt AND lt + RANGE_S seconds``, so (Spark's state watermark of a time range) a left
row is kept until
the watermark passes ``lt + RANGE_S`` and a right row until it passes ``rt``: at most about
``ROWS_PER_BATCH * (DELAY_S + RANGE_S + 2)`` left and ``ROWS_PER_BATCH * (DELAY_S + 2)`` right
rows (one more second for the batch being added, one for eviction using the watermark of the
batch before).  Over ``BATCHES`` batches the state rows reported by ``lastProgress``
(``stateOperators[0].numRowsTotal``) must stay under that bound, level off (no growth with the
number of batches) and agree with the rows stored minus the rows evicted.  No-data batches are
off so that each ``addData`` makes exactly one batch (eviction then happens in the next data
batch; with them on, every batch would be followed by one that evicts).  Run with ``-s`` to see
the state sizes.
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pytest

import ember
from ember import functions as F
from ember.streaming import MemoryStream

BATCHES = 200
ROWS_PER_BATCH = 10       # per side
DELAY_S = 5               # watermark delay of both sides
RANGE_S = 10              # clicks count within RANGE_S seconds after the impression
LATE_EVERY = 10           # every LATE_EVERY-th batch brings 2 rows 60 s behind
SEED = 7


def _batch(rng: np.random.Generator, b: int, recent: list[np.ndarray]) -> tuple[pa.Table,
                                                                                  pa.Table]:
    """Batch ``b``: impressions and clicks with event times in second ``b``; half the clicks
    are on impressions of the last few batches (same key), the rest on random keys."""
    us = 1_000_000
    lt = b * us + rng.integers(0, us, ROWS_PER_BATCH)
    lk = rng.integers(0, 1_000_000, ROWS_PER_BATCH)
    pool = np.concatenate(recent) if recent else lk
    half = ROWS_PER_BATCH // 2
    rk = np.concatenate([rng.choice(pool, half),
                         rng.integers(0, 1_000_000, ROWS_PER_BATCH - half)])
    rt = b * us + rng.integers(0, us, ROWS_PER_BATCH)
    if b and b % LATE_EVERY == 0:
        lt[:2] = (b - 60) * us
        rt[:2] = (b - 60) * us
    recent.append(lk)
    del recent[:-8]
    ts = pa.timestamp("us", tz="UTC")
    left = pa.table({"k": pa.array(lk, pa.int64()), "lt": pa.array(lt, ts),
                     "lv": pa.array(np.full(ROWS_PER_BATCH, b), pa.int64())})
    right = pa.table({"k2": pa.array(rk, pa.int64()), "rt": pa.array(rt, ts),
                      "rv": pa.array(np.full(ROWS_PER_BATCH, b), pa.int64())})
    return left, right


@pytest.mark.parametrize("how", ["inner", "left_outer"])
def test_join_state_stays_bounded_over_a_long_stream(how: str) -> None:
    session = ember.Session({"spark.sql.shuffle.partitions": 1,
                             "spark.sql.streaming.noDataMicroBatches.enabled": "false"})
    left_src = MemoryStream(session, "k bigint, lt timestamp, lv bigint")
    right_src = MemoryStream(session, "k2 bigint, rt timestamp, rv bigint")
    left = left_src.toDF().withWatermark("lt", f"{DELAY_S} seconds")
    right = right_src.toDF().withWatermark("rt", f"{DELAY_S} seconds")
    joined = left.join(right, F.expr(
        f"k = k2 AND rt >= lt AND rt <= lt + interval {RANGE_S} seconds"), how)
    q = joined.writeStream.foreachBatch(lambda df, i: None).start()
    rng = np.random.default_rng(SEED)
    recent: list[np.ndarray] = []
    progress: list[dict] = []
    try:
        for b in range(BATCHES):
            lt, rt = _batch(rng, b, recent)
            with q.awaitProgressLock:
                left_src.addData(lt)
                right_src.addData(rt)
            q.processAllAvailable()
            progress.append(q.lastProgress)
    finally:
        q.stop()
    assert [p["batchId"] for p in progress] == list(range(BATCHES))  # one batch per addData
    ops = [p["stateOperators"][0] for p in progress]
    outputs = [p["sink"]["numOutputRows"] for p in progress]
    total = [op["numRowsTotal"] for op in ops]
    left_rows = [op["customMetrics"]["numTotalStateRowsLeft"] for op in ops]
    right_rows = [op["customMetrics"]["numTotalStateRowsRight"] for op in ops]
    bound_left = ROWS_PER_BATCH * (DELAY_S + RANGE_S + 2)
    bound_right = ROWS_PER_BATCH * (DELAY_S + 2)
    steady = total[BATCHES // 4:]
    print(f"\n[{how}] {BATCHES} batches, {2 * ROWS_PER_BATCH * BATCHES} rows in, "
          f"{sum(outputs)} out; state rows: max {max(total)} (left {max(left_rows)}, right "
          f"{max(right_rows)}), last {total[-1]}, bound {bound_left + bound_right} "
          f"(left {bound_left}, right {bound_right}); steady-state mean "
          f"{np.mean(steady):.1f}")

    assert max(left_rows) <= bound_left, (max(left_rows), bound_left)
    assert max(right_rows) <= bound_right, (max(right_rows), bound_right)
    assert all(t == lr + rr for t, lr, rr in zip(total, left_rows, right_rows))
    # the state is really used (not trivially small): near the bound once the stream runs
    assert min(steady) >= ROWS_PER_BATCH * (2 * DELAY_S + RANGE_S) // 2, min(steady)
    # no growth with the number of batches: the last quarter holds what the second quarter held
    q2, q4 = total[BATCHES // 4:BATCHES // 2], total[3 * BATCHES // 4:]
    assert abs(np.mean(q4) - np.mean(q2)) <= ROWS_PER_BATCH, (np.mean(q2), np.mean(q4))
    # the counts add up: rows stored minus rows evicted is what is held
    assert sum(op["numRowsUpdated"] for op in ops) - sum(op["numRowsRemoved"] for op in ops) \
        == total[-1]
    # the rows far behind the watermark were dropped, never stored
    late = sum(op["numRowsDroppedByWatermark"] for op in ops)
    assert late == 4 * ((BATCHES - 1) // LATE_EVERY), late
    assert sum(outputs) > 0
