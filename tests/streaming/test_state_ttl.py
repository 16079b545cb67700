"""The per-side state time-to-live of stream-stream joins and the per-side state metrics (beyond
Spark: ``ember.streaming.join.stateTtl.left`` / ``.right``, :mod:`ember.streaming.join.operator`).

Spark has no such feature, so there is no oracle: every script below is small and its expected
rows are derived by hand in the comments.  The batch timestamps come from a fake clock
(``MicroBatchExecution.clock``), moved between steps, so expiry is exact and nothing sleeps.
Streams: left ``(k, lt, lv)``, right ``(k2, rt, rv)``; event times are seconds after ``T0``;
with watermarks both sides have a 10 s delay and the condition keeps pairs within an hour, so
watermark eviction never comes before the TTL in these scripts.  Each script is also run with
the TTL unset, which must give Spark's ordinary results (the rows a matching pair would make).
"""

from __future__ import annotations

import datetime as dt
import os
from collections import Counter

import pyarrow as pa
import pytest

import ember
from ember import functions as F
from ember.errors import AnalysisError
from ember.streaming import MemoryStream
from ember.streaming.execution import MicroBatchExecution, StreamingQueryException
from ember.streaming.state.join_state import SymmetricHashJoinStateManager
from ember.streaming.state.store import StateStoreConf
from tests.streaming.test_spark_runtime_stream import file_sink_batches, write_step

T0 = dt.datetime(2024, 1, 1, tzinfo=dt.timezone.utc)
TTL_L = "ember.streaming.join.stateTtl.left"
TTL_R = "ember.streaming.join.stateTtl.right"
RANGE = "rt >= lt - interval 1 hour AND rt <= lt + interval 1 hour"


def ts(seconds: float) -> dt.datetime:
    return T0 + dt.timedelta(seconds=seconds)


def _sec(t) -> int | None:
    if t is None:
        return None
    if t.tzinfo is None:  # collected in the session time zone (UTC)
        t = t.replace(tzinfo=dt.timezone.utc)
    return int((t - T0).total_seconds())


class FakeClock:
    """Seconds since the epoch, moved by the test."""

    def __init__(self) -> None:
        self.now = 1_700_000_000.0

    def __call__(self) -> float:
        return self.now


@pytest.fixture()
def clock(monkeypatch) -> FakeClock:
    c = FakeClock()
    monkeypatch.setattr(MicroBatchExecution, "clock", staticmethod(c))
    return c


class Script:
    """Two memory streams joined ``how``; :meth:`step` adds rows at a clock time, runs every
    batch and returns the rows emitted by them (a multiset, event times in seconds)."""

    def __init__(self, session: ember.Session, clock: FakeClock, how: str, *,
                 watermark: bool = True, checkpoint: str | None = None,
                 streams: tuple[MemoryStream, MemoryStream] | None = None) -> None:
        self.clock = clock
        self.how = how
        self.left, self.right = streams or (
            MemoryStream(session, "k int, lt timestamp, lv string"),
            MemoryStream(session, "k2 int, rt timestamp, rv string"))
        ldf, rdf = self.left.toDF(), self.right.toDF()
        if watermark:
            ldf = ldf.withWatermark("lt", "10 seconds")
            rdf = rdf.withWatermark("rt", "10 seconds")
        cond = "k = k2" + (f" AND {RANGE}" if watermark else "")
        self.batches: dict[int, list[tuple]] = {}
        #: batch ids whose first foreachBatch call fails (the batch then commits nothing)
        self.fail_once: set[int] = set()
        writer = ldf.join(rdf, F.expr(cond), how).writeStream.foreachBatch(self._collect)
        if checkpoint is not None:
            writer = writer.option("checkpointLocation", checkpoint)
        self.q = writer.start()
        self.seen = 0
        self.progress: list[dict] = []

    def _collect(self, df, batch_id: int) -> None:
        if batch_id in self.fail_once:
            self.fail_once.discard(batch_id)
            raise RuntimeError(f"sink failure in batch {batch_id}")
        rows = []
        for r in df.collect():
            t = tuple(r)
            if self.how == "left_semi":
                rows.append((t[0], _sec(t[1]), t[2]))
            else:
                rows.append((t[0], _sec(t[1]), t[2], t[3], _sec(t[4]), t[5]))
        self.batches[batch_id] = rows

    def step(self, at: float, left=(), right=()) -> Counter:
        self.clock.now = 1_700_000_000.0 + at
        with self.q.awaitProgressLock:
            if left:
                self.left.addData([(k, ts(t), v) for k, t, v in left])
            if right:
                self.right.addData([(k, ts(t), v) for k, t, v in right])
        self.q.processAllAvailable()
        new = [b for b in sorted(self.batches) if b >= self.seen]
        self.seen = max(self.batches, default=-1) + 1
        self.progress = [p for p in self.q.recentProgress if p["batchId"] in new]
        return Counter(r for b in new for r in self.batches[b])

    def custom(self, name: str) -> int:
        """``name`` summed over this step's batches (counters) or of its last batch (held)."""
        ops = [p["stateOperators"][0] for p in self.progress]
        if name.startswith("numTotal"):
            return ops[-1]["customMetrics"][name]
        return sum(op["customMetrics"][name] for op in ops)

    def stop(self) -> None:
        self.q.stop()


def session(**ttl: str) -> ember.Session:
    conf = {"spark.sql.shuffle.partitions": 2}
    if "left" in ttl:
        conf[TTL_L] = ttl["left"]
    if "right" in ttl:
        conf[TTL_R] = ttl["right"]
    return ember.Session(conf)


def held_rows(checkpoint: str, side: str) -> list[tuple]:
    """The rows actually held in ``side``'s state of operator 0 (every partition, latest
    version), read back from the checkpoint's stores, with their insertion times."""
    fields = {"left": [("k", pa.int32()), ("lt", pa.timestamp("us", "UTC")), ("lv", pa.string())],
              "right": [("k2", pa.int32()), ("rt", pa.timestamp("us", "UTC")),
                        ("rv", pa.string())]}[side]
    root = os.path.join(checkpoint, "state", "0")
    version = len([n for n in os.listdir(os.path.join(checkpoint, "commits"))
                   if n.isdigit()])
    out = []
    for pid in sorted(os.listdir(root)):
        mgr = SymmetricHashJoinStateManager(
            side, pa.schema(fields), [pa.int32()], os.path.join(checkpoint, "state"), 0,
            int(pid), version, StateStoreConf(), 2, None, insert_times=True)
        s = mgr.all_rows()
        for row, t in zip(s.values.to_pylist(), s.insert_ms):
            out.append((row[fields[0][0]], row[fields[2][0]], int(t)))
        mgr.abort()
    return sorted(out)


# -- inner join without watermarks: the TTL is the only bound -------------------------------------

def test_inner_join_without_watermark_both_sides(clock, tmp_path) -> None:
    """Left TTL 10 s, right TTL 20 s, no watermark (Spark keeps both states forever).
    t=0: L a(k1), R x(k2).  t=15: a expired first (0 <= 15 - 10), so R y(k1) finds nothing;
    L b(k2) meets x (0 > 15 - 20).  t=30: x (0) and b (15) expired (<= 10 / 20); y (15) is not
    (15 > 10): L c(k1) meets y; R z(k2) finds nothing (b is gone)."""
    ck = str(tmp_path / "ck")
    s = Script(session(left="10 seconds", right="20 seconds"), clock, "inner",
               watermark=False, checkpoint=ck)
    try:
        assert s.step(0, left=[(1, 0, "a")], right=[(2, 0, "x")]) == Counter()
        assert s.step(15, left=[(2, 1, "b")], right=[(1, 1, "y")]) == Counter(
            [(2, 1, "b", 2, 0, "x")])
        assert (s.custom("numLeftRowsExpiredByTtl"), s.custom("numRightRowsExpiredByTtl")) \
            == (1, 0)
        assert s.step(30, left=[(1, 2, "c")], right=[(2, 2, "z")]) == Counter(
            [(1, 2, "c", 1, 1, "y")])
        assert (s.custom("numLeftRowsExpiredByTtl"), s.custom("numRightRowsExpiredByTtl")) \
            == (1, 1)
        # the metrics are the rows actually held, with their insertion times (ms)
        base = 1_700_000_000_000
        left, right = held_rows(ck, "left"), held_rows(ck, "right")
        assert left == [(1, "c", base + 30_000)]
        assert right == [(1, "y", base + 15_000), (2, "z", base + 30_000)]
        assert (s.custom("numTotalStateRowsLeft"), s.custom("numTotalStateRowsRight")) == (1, 2)
        op = s.progress[-1]["stateOperators"][0]
        assert op["numRowsTotal"] == 3
        assert op["numRowsRemoved"] == 2  # x and b, removed by the TTL
    finally:
        s.stop()


def test_inner_join_without_ttl_is_unchanged(clock) -> None:
    """The same script with no TTL: every pair joins, nothing expires, state keeps growing."""
    s = Script(session(), clock, "inner", watermark=False)
    try:
        s.step(0, left=[(1, 0, "a")], right=[(2, 0, "x")])
        assert s.step(15, left=[(2, 1, "b")], right=[(1, 1, "y")]) == Counter(
            [(2, 1, "b", 2, 0, "x"), (1, 0, "a", 1, 1, "y")])
        assert s.step(30, left=[(1, 2, "c")], right=[(2, 2, "z")]) == Counter(
            [(1, 2, "c", 1, 1, "y"), (2, 1, "b", 2, 2, "z")])
        assert (s.custom("numLeftRowsExpiredByTtl"), s.custom("numRightRowsExpiredByTtl")) \
            == (0, 0)
        assert (s.custom("numTotalStateRowsLeft"), s.custom("numTotalStateRowsRight")) == (3, 3)
    finally:
        s.stop()


# -- outer and semi joins (Spark requires watermarks for them) -----------------------------------

# t=0: L a(k1), b(k2); R x(k1): a meets x.  t=5: R y(k3).  t=10: a and b expire (0 <= 10 - 10):
# a matched (dropped), b never matched (emitted NULL-padded); then L c(k3) meets y and R z(k2)
# finds nothing.  t=30 (R w(k9) makes a batch): c (10) expires, matched: dropped.
OUTER_STEPS = [
    (0, [(1, 100, "a"), (2, 100, "b")], [(1, 100, "x")]),
    (5, [], [(3, 101, "y")]),
    (10, [(3, 102, "c")], [(2, 102, "z")]),
    (30, [], [(9, 103, "w")]),
]
AX = (1, 100, "a", 1, 100, "x")
CY = (3, 102, "c", 3, 101, "y")


@pytest.mark.parametrize("ttl, expected, expired", [
    ("10 seconds", [[AX], [], [(2, 100, "b", None, None, None), CY], []], [0, 0, 2, 1]),
    (None, [[AX], [], [(2, 100, "b", 2, 102, "z"), CY], []], [0, 0, 0, 0]),
])
def test_left_outer_emits_expired_unmatched_rows_once(clock, ttl, expected, expired) -> None:
    s = Script(session(**({"left": ttl} if ttl else {})), clock, "left_outer")
    try:
        for (at, left, right), want, n in zip(OUTER_STEPS, expected, expired):
            assert s.step(at, left=left, right=right) == Counter(want), at
            assert s.custom("numLeftRowsExpiredByTtl") == n, at
            assert s.custom("numRightRowsExpiredByTtl") == 0
        # held after the last step: TTL: left nothing; right x, y, z, w (no TTL on the right)
        held = (s.custom("numTotalStateRowsLeft"), s.custom("numTotalStateRowsRight"))
        assert held == ((0, 4) if ttl else (3, 4))
    finally:
        s.stop()


def test_right_outer_mirrors_left_outer(clock) -> None:
    """OUTER_STEPS with the sides swapped and the TTL on the right: the preserved right side
    emits its expired never-matched row, NULL-padded on the left."""
    s = Script(session(right="10 seconds"), clock, "right_outer")
    try:
        got = [s.step(at, left=right, right=left) for at, left, right in OUTER_STEPS]
        assert got == [Counter([(1, 100, "x", 1, 100, "a")]), Counter(),
                       Counter([(None, None, None, 2, 100, "b"), (3, 101, "y", 3, 102, "c")]),
                       Counter()]
        assert s.custom("numRightRowsExpiredByTtl") == 1
        assert s.custom("numLeftRowsExpiredByTtl") == 0
    finally:
        s.stop()


def test_full_outer_both_sides_expire(clock) -> None:
    """TTL 10 s on both sides.  t=0: L a(k1), b(k2); R x(k1), q(k4): a meets x.  t=5: R y(k3),
    L d(k5).  t=10: a, b, x, q expire: b and q never matched (emitted padded), a and x matched
    (dropped); L c(k3) meets y; R z(k2) finds nothing.  t=30: d (5) and c (10) expire on the
    left, y (5) and z (10) on the right: d and z never matched."""
    s = Script(session(left="10 seconds", right="10 seconds"), clock, "full_outer")
    try:
        got = [
            s.step(0, left=[(1, 100, "a"), (2, 100, "b")], right=[(1, 100, "x"), (4, 100, "q")]),
            s.step(5, left=[(5, 101, "d")], right=[(3, 101, "y")]),
            s.step(10, left=[(3, 102, "c")], right=[(2, 102, "z")]),
        ]
        assert (s.custom("numLeftRowsExpiredByTtl"), s.custom("numRightRowsExpiredByTtl")) \
            == (2, 2)
        got.append(s.step(30, right=[(9, 103, "w")]))
        assert (s.custom("numLeftRowsExpiredByTtl"), s.custom("numRightRowsExpiredByTtl")) \
            == (2, 2)
        assert (s.custom("numTotalStateRowsLeft"), s.custom("numTotalStateRowsRight")) == (0, 1)
    finally:
        s.stop()
    assert got == [
        Counter([AX]), Counter(),
        Counter([(2, 100, "b", None, None, None), (None, None, None, 4, 100, "q"),
                 (3, 102, "c", 3, 101, "y")]),
        Counter([(5, 101, "d", None, None, None), (None, None, None, 2, 102, "z")]),
    ]


@pytest.mark.parametrize("ttl, step2", [
    ({"left": "10 seconds"}, [(3, 102, "c")]),               # b expired before z came
    ({"right": "10 seconds"}, [(2, 100, "b")]),               # y expired before c came
    ({}, [(2, 100, "b"), (3, 102, "c")]),
])
def test_left_semi(clock, ttl, step2) -> None:
    """t=0: R x(k1) then L a(k1) (emitted, not stored), L b(k2) stored.  t=5: R y(k3).
    t=15: R z(k2) would emit b, L c(k3) would meet y; a left TTL removes b (0) first, a right
    TTL removes x (0) and y (5) first (no row is ever emitted for an expired row of a semi
    join)."""
    s = Script(session(**ttl), clock, "left_semi")
    try:
        assert s.step(0, left=[(1, 100, "a"), (2, 100, "b")], right=[(1, 100, "x")]) \
            == Counter([(1, 100, "a")])
        assert s.step(5, right=[(3, 101, "y")]) == Counter()
        assert s.step(15, left=[(3, 102, "c")], right=[(2, 102, "z")]) == Counter(step2)
        expired = (s.custom("numLeftRowsExpiredByTtl"), s.custom("numRightRowsExpiredByTtl"))
        assert expired == {"left": (1, 0), "right": (0, 2)}.get(next(iter(ttl), ""), (0, 0))
    finally:
        s.stop()


def test_watermark_eviction_and_ttl_never_emit_twice(clock) -> None:
    """Left outer, left TTL 60 s, condition ``rt BETWEEN lt AND lt + 5 s`` (a left row leaves
    once the watermark passes lt + 5 s).  t=0: L a(k1)@100, R (k6)@100: watermark 90.  t=1:
    L b(k8)@200, R (k7)@200: the watermark moves to 190 and its no-data batch evicts a (emitted
    once, by eviction).  t=100: L (k9)@300: the TTL expires b (stored at t=1 <= 40, emitted
    once, by the TTL); a is not met again."""
    sess = session(left="60 seconds")
    left = MemoryStream(sess, "k int, lt timestamp, lv string")
    right = MemoryStream(sess, "k2 int, rt timestamp, rv string")
    ldf = left.toDF().withWatermark("lt", "10 seconds")
    rdf = right.toDF().withWatermark("rt", "10 seconds")
    out: dict[int, list[tuple]] = {}
    q = ldf.join(rdf, F.expr("k = k2 AND rt >= lt AND rt <= lt + interval 5 seconds"),
                 "left_outer").writeStream.foreachBatch(
        lambda df, i: out.setdefault(i, [(r[0], _sec(r[1]), r[2], r[3]) for r in df.collect()])
    ).start()
    steps, expired = [], []
    try:
        for at, lrows, rrows in ((0, [(1, 100, "a")], [(6, 100, "r6")]),
                                 (1, [(8, 200, "b")], [(7, 200, "r7")]),
                                 (100, [(9, 300, "c")], [])):
            clock.now = 1_700_000_000.0 + at
            before = set(out)
            with q.awaitProgressLock:
                left.addData([(k, ts(t), v) for k, t, v in lrows])
                if rrows:
                    right.addData([(k, ts(t), v) for k, t, v in rrows])
            q.processAllAvailable()
            new = sorted(set(out) - before)
            steps.append(sorted(r for b in new for r in out[b] if r[0] in (1, 8)))
            expired.append(sum(p["stateOperators"][0]["customMetrics"]["numLeftRowsExpiredByTtl"]
                               for p in q.recentProgress if p["batchId"] in new))
    finally:
        q.stop()
    assert steps == [[], [(1, 100, "a", None)], [(8, 200, "b", None)]]
    assert expired == [0, 0, 1]


# -- restart from the checkpoint -------------------------------------------------------------------

def test_ttl_survives_restart(clock, tmp_path) -> None:
    """Insertion times live in the state: a row stored before a restart expires after it.
    t=0: L a(k1).  Restart; t=5: R x(k1) meets a.  Restart; t=11: a expired (0 <= 1): R y(k1)
    finds nothing."""
    ck = str(tmp_path / "ck")
    sess = session(left="10 seconds")
    streams = (MemoryStream(sess, "k int, lt timestamp, lv string"),
               MemoryStream(sess, "k2 int, rt timestamp, rv string"))
    got = []
    for at, left, right in ((0, [(1, 0, "a")], []), (5, [], [(1, 1, "x")]),
                            (11, [], [(1, 2, "y")])):
        s = Script(sess, clock, "inner", watermark=False, checkpoint=ck, streams=streams)
        try:
            got.append(s.step(at, left=left, right=right))
        finally:
            s.stop()
    assert got == [Counter(), Counter([(1, 0, "a", 1, 1, "x")]), Counter()]
    assert held_rows(ck, "left") == []


def test_rerun_of_an_uncommitted_batch_uses_its_logged_timestamp(clock, tmp_path) -> None:
    """Batch 1 (t=5) fails in the sink after running; restarted at t=100 it runs again with
    its logged timestamp (t=5), so a (stored at t=0, TTL 10 s) still meets x, as in the run
    that failed; the next batch (t=100) expires a and R y finds nothing."""
    ck = str(tmp_path / "ck")
    sess = session(left="10 seconds")
    streams = (MemoryStream(sess, "k int, lt timestamp, lv string"),
               MemoryStream(sess, "k2 int, rt timestamp, rv string"))
    s = Script(sess, clock, "inner", watermark=False, checkpoint=ck, streams=streams)
    s.fail_once = {1}
    try:
        s.step(0, left=[(1, 0, "a")])
        with pytest.raises(StreamingQueryException):
            s.step(5, right=[(1, 1, "x")])
    finally:
        s.stop()
    s = Script(sess, clock, "inner", watermark=False, checkpoint=ck, streams=streams)
    try:
        assert s.step(100) == Counter([(1, 0, "a", 1, 1, "x")])     # batch 1 again
        assert s.step(101, right=[(1, 2, "y")]) == Counter()
        assert s.custom("numLeftRowsExpiredByTtl") == 1
    finally:
        s.stop()


def test_ttl_on_a_checkpoint_started_without_it_is_refused(clock, tmp_path) -> None:
    """The checkpoint's join state has no insertion times: a TTL set later is refused with a
    clear error (start with a new checkpoint); dropping a TTL later is fine (rows stay)."""
    ck = str(tmp_path / "ck")
    plain = session()
    streams = (MemoryStream(plain, "k int, lt timestamp, lv string"),
               MemoryStream(plain, "k2 int, rt timestamp, rv string"))
    s = Script(plain, clock, "inner", watermark=False, checkpoint=ck, streams=streams)
    try:
        s.step(0, left=[(1, 0, "a")])
    finally:
        s.stop()
    plain.conf.set(TTL_L, "10 seconds")
    s = Script(plain, clock, "inner", watermark=False, checkpoint=ck, streams=streams)
    try:
        with pytest.raises(StreamingQueryException) as e:
            s.step(20, right=[(1, 1, "x")])
    finally:
        s.stop()
    cause = e.value.cause
    assert isinstance(cause, AnalysisError)
    assert cause.error_class == "EMBER_STREAMING_STATE_TTL_NEEDS_NEW_CHECKPOINT"
    assert "new checkpoint location" in cause.message

    ck2 = str(tmp_path / "ck2")
    with_ttl = session(left="10 seconds")
    streams = (MemoryStream(with_ttl, "k int, lt timestamp, lv string"),
               MemoryStream(with_ttl, "k2 int, rt timestamp, rv string"))
    s = Script(with_ttl, clock, "inner", watermark=False, checkpoint=ck2, streams=streams)
    try:
        s.step(0, left=[(1, 0, "a")])
    finally:
        s.stop()
    with_ttl.conf.unset(TTL_L)
    s = Script(with_ttl, clock, "inner", watermark=False, checkpoint=ck2, streams=streams)
    try:
        assert s.step(60, right=[(1, 1, "x")]) == Counter([(1, 0, "a", 1, 1, "x")])
    finally:
        s.stop()


# -- configuration ---------------------------------------------------------------------------------

@pytest.mark.parametrize("value, why", [
    ("ten minutes", "must be a duration such as '10 minutes'"),
    ("-5 seconds", "cannot be negative"),
    ("1 month", "cannot use months or years"),
    ("", "must be a duration"),
])
def test_bad_ttl_values_are_refused_when_set(value, why) -> None:
    s = ember.Session()
    for key in (TTL_L, TTL_R):
        with pytest.raises(AnalysisError) as e:
            s.conf.set(key, value)
        assert e.value.error_class == "INVALID_CONF_VALUE"
        assert f"The value '{value}' in the config \"{key}\" is invalid." in e.value.message
        assert why in e.value.message


def test_ttl_values_parse_to_milliseconds() -> None:
    from ember.streaming.join.operator import state_ttls_ms

    s = ember.Session({TTL_L: "1 hour 30 minutes", TTL_R: "500 milliseconds"})
    assert state_ttls_ms(s.sql_conf) == (5_400_000, 500)
    s.conf.set(TTL_L, "0 seconds")  # 0: no TTL
    s.conf.set(TTL_R, "interval 2 days")
    assert state_ttls_ms(s.sql_conf) == (None, 172_800_000)


def test_outer_join_without_watermark_is_still_refused(clock) -> None:
    """A TTL does not lift Spark's requirements of outer joins (watermark and range)."""
    sess = session(left="10 seconds")
    left = MemoryStream(sess, "k int, lt timestamp, lv string")
    right = MemoryStream(sess, "k2 int, rt timestamp, rv string")
    ldf, rdf = left.toDF(), right.toDF()
    with pytest.raises(Exception) as e:
        q = ldf.join(rdf, F.expr("k = k2"), "left_outer").writeStream.foreachBatch(
            lambda df, i: None).start()
        try:
            left.addData([(1, ts(0), "a")])
            q.processAllAvailable()
        finally:
            q.stop()
    assert "watermark" in str(e.value).lower()


# -- the state manager: expiry keeps the layout dense and the times with the rows ------------------

def test_remove_expired_fills_holes_and_keeps_times(tmp_path) -> None:
    schema = pa.schema([("k", pa.int32()), ("v", pa.string())])
    conf = StateStoreConf()

    def mgr(version: int) -> SymmetricHashJoinStateManager:
        return SymmetricHashJoinStateManager("left", schema, [pa.int32()], str(tmp_path), 0, 0,
                                             version, conf, 2, None, insert_times=True)

    m = mgr(0)
    keys = pa.table({"k": pa.array([1, 1, 1, 2], pa.int32())})
    m.append(keys.slice(0, 2), pa.table({"k": pa.array([1, 1], pa.int32()), "v": ["a", "b"]},
                                        schema=schema), [False, True], insert_ms=1_000)
    m.append(keys.slice(2, 2), pa.table({"k": pa.array([1, 2], pa.int32()), "v": ["c", "d"]},
                                        schema=schema), [False, False], insert_ms=2_000)
    m.commit()
    m = mgr(1)
    removed = m.remove_expired(now_ms=11_000, ttl_ms=10_000)  # written at or before 1 000
    assert sorted(removed.values.column("v").to_pylist()) == ["a", "b"]
    assert sorted(zip(removed.values.column("v").to_pylist(), removed.matched)) == [
        ("a", False), ("b", True)]
    m.commit()
    m = mgr(2)
    rest = m.all_rows()
    # c moved from index 2 to index 0 of key 1 with its time and flag
    assert sorted(zip(rest.values.column("v").to_pylist(), rest.index.tolist(),
                      rest.insert_ms.tolist(), rest.matched.tolist())) == [
        ("c", 0, 2_000, False), ("d", 0, 2_000, False)]
    assert m.num_rows() == 2
    m.abort()


# -- the Spark runtime ---------------------------------------------------------------------------

SPARK_CONF = {"spark.sql.shuffle.partitions": "2", "spark.sql.session.timeZone": "UTC",
              TTL_L: "1 millisecond"}


# Left TTL 1 ms: a left row lives for the batch that stored it only (batches are more than 1 ms
# apart on both runtimes, real clocks).  Inner, no watermark: t0 L (1@100), (2@100), R (1@105):
# (1,100,1,105); batch 1 expires both left rows first, so R (2@210), (1@220) find nothing; L
# 3@200 is stored and expires in batch 2, where L 1@300 meets R 1@105 and 1@220.  Left outer
# (10 s watermarks, ct within 30 s after it): batch 0 (1,100,1,105); the watermark moves to 90 s,
# its no-data batch 1 expires 1@100 (matched) and 2@100 (emitted padded); batch 2: R 2@120 finds
# nothing, L 3@200 stored; the watermark moves to 110 s: no-data batch 3 emits 3@200 padded.
SPARK_STEPS = {
    "inner": [([(1, 100), (2, 100)], [(1, 105)]), ([(3, 200)], [(2, 210), (1, 220)]),
              ([(1, 300)], [(3, 310)])],
    "leftOuter": [([(1, 100), (2, 100)], [(1, 105)]), ([(3, 200)], [(2, 120)])],
}
SPARK_EXPECTED = {
    "inner": {0: Counter([(1, 100, 1, 105)]),
              2: Counter([(1, 300, 1, 105), (1, 300, 1, 220)])},
    "leftOuter": {0: Counter([(1, 100, 1, 105)]), 1: Counter([(2, 100, None, None)]),
                  3: Counter([(3, 200, None, None)])},
}


@pytest.mark.spark
@pytest.mark.parametrize("how", ["inner", "leftOuter"])
def test_spark_runtime_ttl_equals_local(spark, tmp_path, how) -> None:

    sessions = {"local": ember.Session(SPARK_CONF),
                "spark": ember.Session(SPARK_CONF, runtime="spark", spark=spark)}
    root = str(tmp_path)
    for d in ("L", "R"):
        os.makedirs(os.path.join(root, d))

    def start(sess: ember.Session, rt: str):
        imp = sess.readStream.schema("ad int, it timestamp").parquet(os.path.join(root, "L"))
        clk = sess.readStream.schema("cad int, ct timestamp").parquet(os.path.join(root, "R"))
        cond = "ad = cad"
        if how == "leftOuter":
            imp = imp.withWatermark("it", "10 seconds")
            clk = clk.withWatermark("ct", "10 seconds")
            cond += " AND ct >= it AND ct <= it + interval 30 seconds"
        return (imp.join(clk, F.expr(cond), how).writeStream.format("parquet")
                .option("checkpointLocation", os.path.join(root, "ck", rt))
                .start(os.path.join(root, "out", rt)))

    qs = {rt: start(s, rt) for rt, s in sessions.items()}
    try:
        for step, (imps, clicks) in enumerate(SPARK_STEPS[how]):
            write_step(qs.values(), root, step, imps, clicks)
    finally:
        for q in qs.values():
            q.stop()
    local = file_sink_batches(os.path.join(root, "out", "local"))
    on_spark = file_sink_batches(os.path.join(root, "out", "spark"))
    assert local == SPARK_EXPECTED[how]
    assert on_spark == local
