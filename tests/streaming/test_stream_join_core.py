"""The stream-stream join core (Spark's ``StreamingSymmetricHashJoinExec``), driven directly:
hand-built Arrow batches over resolved attributes, ``process_partition`` across batch versions
with a temporary checkpoint.  Whole queries are compared with Spark elsewhere
(``test_*_vs_spark.py``)."""

from __future__ import annotations

import datetime as dt

import pyarrow as pa
import pytest

from ember import types as T
from ember.errors import AnalysisError
from ember.expressions.arithmetic import Add, Subtract, UnaryMinus
from ember.expressions.base import AttributeReference, Literal, and_all
from ember.expressions.cast import Cast
from ember.expressions.intervals import IntervalLiteral
from ember.expressions.predicates import (
    EqualTo, GreaterThan, GreaterThanOrEqual, IsNotNull, LessThan, LessThanOrEqual,
)
from ember.plans.logical.join_type import JoinType
from ember.physical.streaming.join_conditions import JoinConditionSplitPredicates
from ember.streaming.join.operator import StateInfo, SymmetricHashJoin
from ember.physical.streaming.state_watermark import (
    JoinStateKeyWatermarkPredicate, JoinStateValueWatermarkPredicate, state_value_watermark,
    state_watermark_predicates,
)
from ember.streaming.state.store import PROVIDER_CLASS_KEY, ROCKSDB_PROVIDER_CLASS, \
    unload_all_providers

WM = 10_000  # 10 s delay

lk = AttributeReference("lk", T.LONG, id=9001)
lt = AttributeReference("lt", T.TIMESTAMP, id=9002, watermark_delay_ms=WM)
lv = AttributeReference("lv", T.STRING, id=9003)
rk = AttributeReference("rk", T.LONG, id=9011)
rt = AttributeReference("rt", T.TIMESTAMP, id=9012, watermark_delay_ms=WM)
rv = AttributeReference("rv", T.STRING, id=9013)
LEFT = (lk, lt, lv)
RIGHT = (rk, rt, rv)


def secs(e):
    return Cast(e, T.LONG)


def minutes(n: int) -> Literal:
    return Literal(dt.timedelta(minutes=n), T.DayTimeIntervalType(2, 2))


# Range condition written on seconds: lt BETWEEN rt - 20s AND rt + 20s (exclusive).
RANGE = and_all([GreaterThan(secs(lt), Subtract(secs(rt), Literal(20, T.LONG))),
                 LessThan(secs(lt), Add(secs(rt), Literal(20, T.LONG)))])


def ts(s: int) -> dt.datetime:
    return dt.datetime(2024, 1, 1, tzinfo=dt.timezone.utc) + dt.timedelta(seconds=s)


T0 = int(ts(0).timestamp() * 1000)  # epoch ms of ts(0)


def side(rows: list[tuple[int, int, str]]) -> pa.Table:
    return pa.table({
        "k": pa.array([r[0] for r in rows], pa.int64()),
        "t": pa.array([ts(r[1]) for r in rows], pa.timestamp("us", tz="UTC")),
        "v": pa.array([r[2] for r in rows], pa.string()),
    })


def run_batch(tmp_path, version: int, join_type: JoinType, left_rows, right_rows, *,
              condition=RANGE, late_s: int | None = None, evict_s: int | None = None,
              keys=((lk,), (rk,)), conf=None):
    """One micro-batch on a single state partition; watermarks in seconds after ts(0)."""
    info = StateInfo(str(tmp_path / "state"), 0, version, 1)
    op = SymmetricHashJoin(
        keys[0], keys[1], join_type, condition, LEFT, RIGHT, info,
        None if late_s is None else T0 + late_s * 1000,
        None if evict_s is None else T0 + evict_s * 1000, conf or {})
    out = op.process_partition(0, side(left_rows), side(right_rows))
    rows = [tuple(_val(v) for v in r.values()) for r in out.to_pylist()]
    return op, sorted(rows, key=lambda r: tuple((v is None, v if v is not None else 0)
                                                for v in r))


def _val(v):
    if isinstance(v, dt.datetime):
        return int((v - ts(0)).total_seconds())
    return v


# ---------------------------------------------------------------------------------------------
# 10.2 condition split


def test_condition_split_moves_cross_side_inequalities_to_post_join_filter():
    left_only = GreaterThan(lk, Literal(0, T.LONG))
    right_only = IsNotNull(rv)
    constant = EqualTo(Literal(1, T.INT), Literal(1, T.INT))
    cross = GreaterThan(secs(lt), Subtract(secs(rt), Literal(20, T.LONG)))
    split = JoinConditionSplitPredicates.of(
        and_all([left_only, cross, right_only, constant]), LEFT, RIGHT)
    assert split.left_side_only == and_all([left_only, constant])
    assert split.right_side_only == and_all([right_only, constant])
    assert split.both_sides == cross
    assert JoinConditionSplitPredicates.of(None, LEFT, RIGHT).both_sides is None


# ---------------------------------------------------------------------------------------------
# 10.4 key vs value predicates, 10.5 bounds


def test_key_watermark_takes_precedence_over_range_condition():
    left, right = state_watermark_predicates(LEFT, RIGHT, (lk, lt), (rk, rt), RANGE, 50_000)
    assert left == JoinStateKeyWatermarkPredicate(1, T.TIMESTAMP, 50_000)
    assert right == JoinStateKeyWatermarkPredicate(1, T.TIMESTAMP, 50_000)
    assert str(left) == "(input[1, timestamp, true] <= 50000000)"


def test_value_watermark_from_range_condition():
    left, right = state_watermark_predicates(LEFT, RIGHT, (lk,), (rk,), RANGE, 50_000)
    # lt > rt - 20s  => left evicted at lt <= W - 20s; lt < rt + 20s => right at rt <= W - 20s
    assert left == JoinStateValueWatermarkPredicate(1, lt, 30_000)
    assert right == JoinStateValueWatermarkPredicate(1, rt, 30_000)
    # No watermark on the other side, no condition, or no watermark value: nothing.
    plain_rt = rt.copy(watermark_delay_ms=None)
    assert state_value_watermark(LEFT, (rk, plain_rt, rv), RANGE, 50_000) is None
    assert state_watermark_predicates(LEFT, RIGHT, (lk,), (rk,), None, 50_000) == (None, None)
    assert state_watermark_predicates(LEFT, RIGHT, (lk,), (rk,), RANGE, None) == (None, None)


def test_section_10_5_example_bounds():
    w = 3_600_000 * 5
    strict = and_all([GreaterThan(lt, Subtract(rt, minutes(8))),
                      LessThan(lt, Add(rt, minutes(60)))])
    assert state_value_watermark(LEFT, RIGHT, strict, w) == w - 8 * 60_000
    assert state_value_watermark(RIGHT, LEFT, strict, w) == w - 3_600_000
    inclusive = and_all([GreaterThanOrEqual(lt, Subtract(rt, minutes(8))),
                         LessThanOrEqual(lt, Add(rt, minutes(60)))])
    assert state_value_watermark(LEFT, RIGHT, inclusive, w) == w - 8 * 60_000 - 1
    assert state_value_watermark(RIGHT, LEFT, inclusive, w) == w - 3_600_000 - 1
    # The same through unary minus and a day interval literal.
    days = GreaterThan(lt, Add(rt, UnaryMinus(IntervalLiteral(1, "DAY", "DAY"))))
    assert state_value_watermark(LEFT, RIGHT, days, w) == w - 86_400_000
    # A plus sign on this side's column, a month interval, two columns of one side: none.
    assert state_value_watermark(LEFT, RIGHT, LessThan(lt, Add(rt, minutes(60))), w) is None
    months = GreaterThan(lt, Subtract(rt, IntervalLiteral(1, "MONTH", "MONTH")))
    assert state_value_watermark(LEFT, RIGHT, months, w) is None
    two = GreaterThan(Add(secs(lt), secs(lk)), secs(rt))
    assert state_value_watermark(LEFT, RIGHT, two, w) is None


# ---------------------------------------------------------------------------------------------
# 10.7 per-partition processing


@pytest.fixture(params=["memory", "rocksdb"])
def conf(request):
    yield {} if request.param == "memory" else {PROVIDER_CLASS_KEY: ROCKSDB_PROVIDER_CLASS}
    unload_all_providers()


def test_inner_join_pairs_exactly_once_and_state_eviction(tmp_path, conf):
    # Batch 0: new-new pair (1) produced once; left 2 waits for its right row.
    _, out = run_batch(tmp_path, 0, JoinType.INNER, [(1, 0, "a"), (2, 5, "b")],
                       [(1, 3, "x")], conf=conf)
    assert out == [(1, 0, "a", 1, 3, "x")]
    # Batch 1: right row for key 2 joins the stored left row; key 1 joins again with new left.
    op, out = run_batch(tmp_path, 1, JoinType.INNER, [(1, 10, "c")], [(2, 8, "y")], conf=conf)
    assert out == [(1, 10, "c", 1, 3, "x"), (2, 5, "b", 2, 8, "y")]
    assert op.metrics()["numTotalStateRows"] == 5
    # Batch 2 (no data), eviction watermark 30 s: state values <= 30 - 20 = 10 s go.
    op, out = run_batch(tmp_path, 2, JoinType.INNER, [], [], late_s=0, evict_s=30, conf=conf)
    assert out == []
    m = op.metrics()
    assert m["numRemovedStateRows"] == 5 and m["numTotalStateRows"] == 0
    assert op.state_watermark_ms() == (T0 + 10_000, T0 + 10_000)


def test_inequality_is_checked_after_the_key_lookup(tmp_path, conf):
    _, out = run_batch(tmp_path, 0, JoinType.INNER, [(1, 0, "a"), (1, 100, "far")],
                       [(1, 15, "x")], conf=conf)
    assert out == [(1, 0, "a", 1, 15, "x")]


def test_left_outer_emits_unmatched_only_on_eviction_exactly_once(tmp_path, conf):
    _, out = run_batch(tmp_path, 0, JoinType.LEFT_OUTER, [(1, 0, "a"), (2, 0, "b")],
                       [(1, 5, "x")], conf=conf)
    assert out == [(1, 0, "a", 1, 5, "x")]
    _, out = run_batch(tmp_path, 1, JoinType.LEFT_OUTER, [], [], late_s=0, evict_s=10,
                       conf=conf)
    assert out == []  # left state watermark 10 - 20 < 0: nothing evicted yet
    op, out = run_batch(tmp_path, 2, JoinType.LEFT_OUTER, [], [], late_s=10, evict_s=25,
                        conf=conf)
    assert out == [(2, 0, "b", None, None, None)]  # matched row 1 is not padded
    # Both evicted left rows (a matched, b emitted) and the right row x count as removed:
    # Spark's removeAndReturnOldState adds each row it takes out to numRemovedStateRows.
    assert op.metrics()["numRemovedStateRows"] == 3
    op, out = run_batch(tmp_path, 3, JoinType.LEFT_OUTER, [], [], late_s=25, evict_s=60,
                        conf=conf)
    assert out == [] and op.metrics()["numTotalStateRows"] == 0


def test_right_and_full_outer(tmp_path, conf):
    _, out = run_batch(tmp_path, 0, JoinType.FULL_OUTER, [(1, 0, "a"), (3, 0, "c")],
                       [(1, 5, "x"), (2, 5, "y")], conf=conf)
    assert out == [(1, 0, "a", 1, 5, "x")]
    _, out = run_batch(tmp_path, 1, JoinType.FULL_OUTER, [], [], late_s=0, evict_s=40,
                       conf=conf)
    assert out == [(3, 0, "c", None, None, None), (None, None, None, 2, 5, "y")]
    ro = tmp_path / "ro"
    ro.mkdir()
    _, out = run_batch(ro, 0, JoinType.RIGHT_OUTER, [(1, 0, "a")], [(1, 5, "x"), (2, 5, "y")],
                       conf=conf)
    assert out == [(1, 0, "a", 1, 5, "x")]
    _, out = run_batch(ro, 1, JoinType.RIGHT_OUTER, [], [], late_s=0, evict_s=40, conf=conf)
    assert out == [(None, None, None, 2, 5, "y")]


def test_right_row_evicted_in_same_batch_still_padded_for_right_outer(tmp_path, conf):
    # Eviction watermark 100 s: right state rows <= 80 s are evicted in this batch; the
    # unmatched right row is stored anyway and emitted NULL-padded by that eviction.
    _, out = run_batch(tmp_path, 0, JoinType.RIGHT_OUTER, [], [(7, 70, "z")], late_s=50,
                       evict_s=100, conf=conf)
    assert out == [(None, None, None, 7, 70, "z")]
    op, out = run_batch(tmp_path, 1, JoinType.RIGHT_OUTER, [], [], late_s=100, evict_s=100,
                        conf=conf)
    assert out == [] and op.metrics()["numTotalStateRows"] == 0


def test_left_semi_emits_each_left_row_once(tmp_path, conf):
    # Left row joins two right rows of this batch: emitted once.  Spark 4.3 runs the right
    # pass first (x, y stored), then the left pass finds them: "a" is emitted, never stored.
    op, out = run_batch(tmp_path, 0, JoinType.LEFT_SEMI, [(1, 0, "a")],
                        [(1, 2, "x"), (1, 3, "y")], conf=conf)
    assert out == [(1, 0, "a")]
    assert op.metrics()["numTotalStateRowsLeft"] == 0
    # Later right rows for the same key do not emit it again.
    _, out = run_batch(tmp_path, 1, JoinType.LEFT_SEMI, [], [(1, 4, "z")], conf=conf)
    assert out == []
    # A new left row matching stored right rows is emitted in the left pass, once.
    op, out = run_batch(tmp_path, 2, JoinType.LEFT_SEMI, [(1, 5, "b")], [], conf=conf)
    assert out == [(1, 5, "b")]
    # Updated from the doc's 10.7 (left state kept "a" flagged matched: 1 row) to Spark 4.3
    # (diff_findings.md SURPRISE 1): matched left rows are never stored.
    assert op.metrics()["numTotalStateRowsLeft"] == 0


SEMI_BETWEEN = and_all([GreaterThanOrEqual(secs(lt), Subtract(secs(rt), Literal(5, T.LONG))),
                        LessThanOrEqual(secs(lt), Add(secs(rt), Literal(5, T.LONG)))])


def test_left_semi_metrics_match_spark(tmp_path, conf):
    # diff_findings.md SURPRISE 1, the metrics Spark 4.3 reports for
    # lk = rk AND lt BETWEEN rt - 5 s AND rt + 5 s, left_semi (per batch: total, updated,
    # removed).  The right pass runs first and removes the left state rows it matches.
    def step(version, left_rows, right_rows):
        op, out = run_batch(tmp_path, version, JoinType.LEFT_SEMI, left_rows, right_rows,
                            condition=SEMI_BETWEEN, conf=conf)
        m = op.metrics()
        return out, (m["numTotalStateRows"], m["numUpdatedStateRows"],
                     m["numRemovedStateRows"])

    assert step(0, [(1, 100, "a1")], []) == ([], (1, 1, 0))
    assert step(1, [], [(1, 101, "b1")]) == ([(1, 100, "a1")], (1, 1, 1))
    assert step(2, [(2, 100, "a2")], [(2, 101, "b2")]) == ([(2, 100, "a2")], (2, 1, 0))
    assert step(3, [(3, 100, "a3"), (3, 102, "a3x")], [(3, 101, "b3"), (3, 103, "b3x")]) == (
        [(3, 100, "a3"), (3, 102, "a3x")], (4, 2, 0))


def test_left_semi_right_pass_removes_each_left_row_once(tmp_path, conf):
    # Two stored left rows, three new right rows: every left row goes with the first right
    # row matching it (emitted once, removed once); the right rows are stored.
    run_batch(tmp_path, 0, JoinType.LEFT_SEMI, [(1, 0, "a"), (1, 30, "b"), (2, 0, "c")], [],
              conf=conf)
    op, out = run_batch(tmp_path, 1, JoinType.LEFT_SEMI, [],
                        [(1, 5, "x"), (1, 6, "y"), (1, 35, "z")], conf=conf)
    assert out == [(1, 0, "a"), (1, 30, "b")]
    m = op.metrics()
    assert (m["numRemovedStateRows"], m["numUpdatedStateRows"]) == (2, 3)
    assert (m["numTotalStateRowsLeft"], m["numTotalStateRowsRight"]) == (1, 3)


def test_pre_join_filter_and_late_rows(tmp_path, conf):
    cond = and_all([RANGE, GreaterThan(lv, Literal("b", T.STRING))])  # left-only conjunct
    op, out = run_batch(tmp_path, 0, JoinType.LEFT_OUTER, [(1, 0, "a"), (1, 1, "c"),
                                                           (1, -50, "z")],
                        [(1, 2, "x")], condition=cond, late_s=-40, evict_s=-40, conf=conf)
    # "a" fails the pre-join filter: padded at once, never stored; the row at -50 s is late.
    assert out == [(1, 0, "a", None, None, None), (1, 1, "c", 1, 2, "x")]
    m = op.metrics()
    assert m["numRowsDroppedByWatermark"] == 1 and m["numTotalStateRowsLeft"] == 1


def test_restart_from_checkpoint_discards_uncommitted_batch(tmp_path, conf):
    run_batch(tmp_path, 0, JoinType.INNER, [(1, 0, "a")], [], conf=conf)
    # Batch 1 runs but "crashes" before the engine commits it: rerun from version 1 after a
    # restart (providers forgotten) must give the same output as the first attempt.
    _, first = run_batch(tmp_path, 1, JoinType.INNER, [(1, 1, "b")], [(1, 2, "x")], conf=conf)
    unload_all_providers()
    _, again = run_batch(tmp_path, 1, JoinType.INNER, [(1, 1, "b")], [(1, 2, "x")], conf=conf)
    assert first == again == [(1, 0, "a", 1, 2, "x"), (1, 1, "b", 1, 2, "x")]
    unload_all_providers()
    op, out = run_batch(tmp_path, 2, JoinType.INNER, [], [(1, 3, "y")], conf=conf)
    assert out == [(1, 0, "a", 1, 3, "y"), (1, 1, "b", 1, 3, "y")]
    assert op.metrics()["numTotalStateRows"] == 4


# ---------------------------------------------------------------------------------------------
# The 10.5 algebra on conjuncts over non-time columns (diff_findings.md SURPRISE 2)


def test_only_the_other_sides_watermark_column_becomes_the_watermark():
    # StreamingJoinHelper substitutes W only for the other side's columns with watermark
    # metadata; any other column left among the terms cannot be evaluated: no candidate.
    w = 50_000
    # lk < rk, right state: lk has no watermark: none.
    assert state_value_watermark(RIGHT, LEFT, LessThan(lk, rk), w) is None
    assert state_value_watermark(
        RIGHT, LEFT, LessThan(Subtract(lk, Literal(100, T.LONG)), rk), w) is None
    # lt - 100 < rk: lt is the left watermark column: W - 100 s for the right state.
    assert state_value_watermark(
        RIGHT, LEFT, LessThan(Subtract(secs(lt), Literal(100, T.LONG)), rk), w) == w - 100_000
    # ln + rn >= 6 (issue 18, item 9): neither side gets a candidate from it, so next to the
    # range condition the range's candidates stand (they were W-derived minus 6 s before).
    both = GreaterThanOrEqual(Add(lk, rk), Literal(6, T.LONG))
    for this, other in ((LEFT, RIGHT), (RIGHT, LEFT)):
        assert state_value_watermark(this, other, both, w) is None
        assert (state_value_watermark(this, other, and_all([RANGE, both]), w)
                == state_value_watermark(this, other, RANGE, w) == w - 20_000)


def test_non_time_conjunct_candidate_zero_disables_eviction(tmp_path, conf):
    # RIGHT OUTER keeps the preserved side's `rk > 0` in the join condition: it reads 0 < rk,
    # a right-state candidate of 0 ms, so the right state is never evicted in practice and an
    # unmatched right row is never emitted (Spark: right_outer_pre_and_post_join_filters).
    cond = and_all([RANGE, GreaterThan(rk, Literal(0, T.LONG))])
    left, right = state_watermark_predicates(LEFT, RIGHT, (lk,), (rk,), cond, T0 + 500_000)
    assert right == JoinStateValueWatermarkPredicate(1, rt, 0)
    assert left == JoinStateValueWatermarkPredicate(1, lt, T0 + 480_000)
    run_batch(tmp_path, 0, JoinType.RIGHT_OUTER, [], [(2, 5, "y")], condition=cond, conf=conf)
    op, out = run_batch(tmp_path, 1, JoinType.RIGHT_OUTER, [], [], condition=cond, late_s=0,
                        evict_s=500, conf=conf)
    assert out == [] and op.metrics()["numTotalStateRowsRight"] == 1
    assert op.state_watermark_ms() == (T0 + 480_000, 0)


# ---------------------------------------------------------------------------------------------
# Late-events vs eviction watermark in one batch (diff_findings.md SURPRISE 3)


@pytest.mark.parametrize("join_type", [JoinType.INNER, JoinType.FULL_OUTER])
def test_row_between_the_two_watermarks(tmp_path, conf, join_type):
    # Late rows are dropped with the previous batch's watermark (50 s) and state evicted with
    # this batch's (100 s; value watermark 80 s): the right row at 70 s is not late, is
    # evicted in the batch it arrives in, and FULL OUTER stores it (unmatched) so that the
    # eviction emits it NULL-padded in this same batch.  The row at 40 s is late.
    op, out = run_batch(tmp_path, 0, join_type, [], [(7, 70, "z"), (8, 40, "late")], late_s=50,
                        evict_s=100, conf=conf)
    m = op.metrics()
    assert m["numRowsDroppedByWatermark"] == 1 and m["numTotalStateRows"] == 0
    if join_type is JoinType.FULL_OUTER:
        assert out == [(None, None, None, 7, 70, "z")]
        assert (m["numUpdatedStateRows"], m["numRemovedStateRows"]) == (1, 1)
    else:
        assert out == []
        assert (m["numUpdatedStateRows"], m["numRemovedStateRows"]) == (0, 0)


# ---------------------------------------------------------------------------------------------
# State operator metrics vs Spark 4.3 (lastProgress.stateOperators[0], every micro-batch)

METRIC_KEYS = ("numRowsTotal", "numRowsUpdated", "numRowsRemoved", "numRowsDroppedByWatermark")
METRIC_STEPS = (
    # Data batch at W = 0, then W -> 90 and a no-data batch.
    {"left": ((1, 100, "a1"), (2, 100, "a2")), "right": ((1, 101, "b1"), (9, 50, "b9"))},
    # b2 joins the stored a2 (LeftSemi: removes it); W -> 190 and a no-data batch evicting
    # everything older (outer joins emit the unmatched rows, counted as removed).
    {"left": ((3, 200, "a3"),), "right": ((2, 103, "b2"), (3, 201, "b3"))},
    # a4 is late (150 <= 190); W stays 190 (left input max 200 - 10 s): no no-data batch.
    {"left": ((4, 150, "a4"),), "right": ((4, 300, "b4"),)},
)


def _metric_run(engine, how: str, checkpoint: str) -> list[tuple]:
    """(batch id, rows out, *METRIC_KEYS) of every micro-batch of the script."""
    from tests.streaming.spark_harness import ts as hts

    (lh, lf) = engine.memory_stream("lk INT, lt TIMESTAMP, lv STRING")
    (rh, rf) = engine.memory_stream("rk INT, rt TIMESTAMP, rv STRING")
    F = engine.F
    df = lf.withWatermark("lt", "10 seconds").join(
        rf.withWatermark("rt", "10 seconds"),
        F.expr("lk = rk AND lt BETWEEN rt - interval 5 seconds AND rt + interval 5 seconds"),
        how)
    sizes: dict[int, int] = {}
    query = engine.start(df, checkpoint, "append",
                         lambda batch_id, rows: sizes.__setitem__(batch_id, len(rows)))
    try:
        for step in METRIC_STEPS:
            adds = [(h, tuple((k, hts(t), v) for k, t, v in step[name]))
                    for name, h in (("left", lh), ("right", rh)) if step[name]]
            engine.feed(query, adds)
            query.processAllAvailable()
        progress = engine.progress(query)
    finally:
        query.stop()
    out = []
    for p in progress:
        if not p["stateOperators"]:
            continue  # Spark's idle-trigger reports (no batch ran)
        op = p["stateOperators"][0]
        bid = int(p["batchId"])
        out.append((bid, sizes.get(bid)) + tuple(int(op[k]) for k in METRIC_KEYS))
    assert sorted(sizes) == [r[0] for r in out]
    return out


@pytest.mark.parametrize("how", ["full_outer", "left_semi", "left_outer"])
def test_state_operator_metrics_match_spark(spark, tmp_path, how):
    # numRowsUpdated = rows appended; numRowsRemoved = evicted rows including the outer
    # joins' NULL-padded ones, plus LeftSemi's right-pass removals; numRowsTotal = buffered
    # rows after the batch (diff_findings.md "numRowsTotal", SURPRISE 1).
    import ember
    from tests.streaming.spark_harness import EmberEngine, SparkEngine

    session = ember.Session()
    session.conf.set("spark.sql.shuffle.partitions", "2")
    session.conf.set("spark.sql.session.timeZone", "UTC")
    ours = _metric_run(EmberEngine(session), how, str(tmp_path / "ember"))
    spark_engine = SparkEngine(spark)
    with spark_engine.conf({"spark.sql.shuffle.partitions": "2"}):
        theirs = _metric_run(spark_engine, how, str(tmp_path / "spark"))
    assert any(r[4] for r in theirs), "the script removes state rows on Spark"
    assert ours == theirs


# ---------------------------------------------------------------------------------------------
# At most one event-time column per side (Spark 4.3's findEventTimeColumn check)

lt2 = AttributeReference("lt2", T.TIMESTAMP, id=9004, watermark_delay_ms=0)


def test_two_event_time_columns_on_one_side_fail_by_default(tmp_path):
    two = (lk, lt, lv, lt2)
    with pytest.raises(AnalysisError, match=r"MULTIPLE_EVENT_TIME_COLUMNS.*event time columns: "
                                            r"\(lt#9002-T10000ms,lt2#9004-T0ms\)"):
        state_watermark_predicates(two, RIGHT, (lk,), (rk,), RANGE, 50_000)
    # The same column projected twice counts once.
    assert state_watermark_predicates((lk, lt, lv, lt), RIGHT, (lk,), (rk,), RANGE, 50_000)[0] \
        == JoinStateValueWatermarkPredicate(1, lt, 30_000)
    info = StateInfo(str(tmp_path / "state"), 0, 0, 1)
    with pytest.raises(AnalysisError, match="MULTIPLE_EVENT_TIME_COLUMNS"):
        SymmetricHashJoin((lk,), (rk,), JoinType.INNER, RANGE, two, RIGHT, info, None, 50_000,
                          {})
    # statefulOperator.allowMultiple=false: Spark's legacy path takes the first column.
    op = SymmetricHashJoin((lk,), (rk,), JoinType.INNER, RANGE, two, RIGHT, info, None, 50_000,
                           {"spark.sql.streaming.statefulOperator.allowMultiple": "false"})
    assert op.left.predicate == JoinStateValueWatermarkPredicate(1, lt, 30_000)


def _chained_join_error(engine, checkpoint: str) -> str:
    F = engine.F
    frames = [engine.memory_stream("k INT, t TIMESTAMP") for _ in range(3)]
    a = frames[0][1].withWatermark("t", "0 seconds")
    b = frames[1][1].withWatermark("t", "0 seconds").select(F.col("k").alias("bk"),
                                                            F.col("t").alias("bt"))
    c = frames[2][1].withWatermark("t", "0 seconds").select(F.col("k").alias("ck"),
                                                            F.col("t").alias("ct"))
    lower = a.join(b, F.expr("k = bk AND t > bt - interval 10 seconds AND "
                             "t < bt + interval 20 seconds"))
    df = lower.join(c, F.expr("k = ck AND t = ct"))
    query = engine.start(df, checkpoint, "append", lambda *_: None)
    try:
        from tests.streaming.spark_harness import ts as hts

        engine.feed(query, [(h, ((1, hts(100)),)) for h, _ in frames])
        query.processAllAvailable()
        return "no error"
    except Exception as e:  # noqa: BLE001 - the outcome is compared
        return str(e)
    finally:
        query.stop()


def test_chained_join_keeping_both_event_times_fails_like_spark(spark, tmp_path):
    # Spark 4.3 fails such a query in its first batch (getStateWatermarkPredicates of the upper
    # join: its left input carries t and bt): STREAM_FAILED ... MULTIPLE_EVENT_TIME_COLUMNS.
    import ember
    from tests.streaming.spark_harness import EmberEngine, SparkEngine

    theirs = _chained_join_error(SparkEngine(spark), str(tmp_path / "spark"))
    ours = _chained_join_error(EmberEngine(ember.Session()), str(tmp_path / "ember"))
    for text in (theirs, ours):
        assert "STREAM_FAILED" in text
        assert "More than one event time columns are available. Please ensure there is at " \
               "most one event time column per stream. event time columns: (t#" in text
    assert "MULTIPLE_EVENT_TIME_COLUMNS" in theirs


def test_null_keys_match_each_other_in_the_state(tmp_path, conf):
    # diff_findings.md SURPRISE 4: the state is looked up with key rows, so a NULL key equals a
    # NULL key (Spark's FULL OUTER join, where no isnotnull filter is inferred, joins them);
    # the new-new pair in one batch and a stored left row with a later right row alike.
    _, out = run_batch(tmp_path, 0, JoinType.FULL_OUTER, [(None, 11, "a")], [(None, 11, "x")],
                       conf=conf)
    assert out == [(None, 11, "a", None, 11, "x")]
    _, out = run_batch(tmp_path, 1, JoinType.FULL_OUTER, [], [(None, 12, "y")], conf=conf)
    assert out == [(None, 11, "a", None, 12, "y")]
