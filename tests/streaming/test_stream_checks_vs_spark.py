"""Unsupported streaming join shapes: Ember's errors vs Spark Structured Streaming's.

Each case builds one query over two memory streams (and a static table) on both engines, starts
it, feeds one step and processes it. Compared: where the query failed (``start`` =
``writeStream.start()``, Spark's UnsupportedOperationChecker; ``run`` = the first batch, e.g.
Spark's StreamingJoinStrategy), the error class, and the message's first line (Spark appends the
plan tree after ``;\\n``; a failed run wraps it in ``[STREAM_FAILED] Query [id, runId]
terminated with exception: ...``). Shapes that Spark runs (an inner stream-stream join in Update
mode) must run on Ember too, with the same rows.

Spark's outcome for every case is also asserted against the expected one written here, so a case
cannot pass vacuously.

Run: ``python -m pytest -q tests/streaming/test_stream_checks_vs_spark.py``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Callable

import pytest

from tests.streaming.spark_harness import (
    EmberEngine, SparkEngine, cause_class, error_class, norm, ts,
)

pytestmark = [pytest.mark.spark, pytest.mark.differential]

LEFT = "lk INT, lt TIMESTAMP, lv STRING"
RIGHT = "rk INT, rt TIMESTAMP, rv STRING"
STATIC = ("sk INT, sv STRING", ((1, "s1"),))
RANGE = "lk = rk AND lt BETWEEN rt - interval 5 seconds AND rt + interval 5 seconds"
LEGACY = "_LEGACY_ERROR_TEMP_3102"
NO_WATERMARK = ("Stream-stream {} join between two streaming DataFrame/Datasets is not supported "
                "without a watermark in the join keys, or a watermark on the nullable side and an "
                "appropriate range condition")


def _wm(df: Any, col: str) -> Any:
    return df.withWatermark(col, "5 seconds")


@dataclass(frozen=True)
class Case:
    name: str
    build: Callable[[Any, Any, Any, Any], Any]  # (F, left stream, right stream, static) -> df
    mode: str
    #: Spark's outcome: ("ok", rows), ("start", error class, message first line) or ("run",
    #: error class, the cause's error class, message first line)
    expected: tuple


CASES = (
    Case("left_outer_without_watermark",
         lambda F, l, r, s: l.join(r, F.expr("lk = rk"), "left_outer"), "append",
         ("start", LEGACY, NO_WATERMARK.format("LeftOuter"))),
    Case("right_outer_without_watermark",
         lambda F, l, r, s: l.join(r, F.expr("lk = rk"), "right_outer"), "append",
         ("start", LEGACY, NO_WATERMARK.format("RightOuter"))),
    Case("full_outer_without_watermark",
         lambda F, l, r, s: l.join(r, F.expr("lk = rk"), "full_outer"), "append",
         ("start", LEGACY, NO_WATERMARK.format("FullOuter"))),
    Case("left_semi_without_watermark",
         lambda F, l, r, s: l.join(r, F.expr("lk = rk"), "left_semi"), "append",
         ("start", LEGACY, NO_WATERMARK.format("LeftSemi"))),
    # watermarks on both sides but neither in the keys nor a range condition
    Case("left_outer_watermarks_without_range",
         lambda F, l, r, s: _wm(l, "lt").join(_wm(r, "rt"), F.expr("lk = rk"), "left_outer"),
         "append", ("start", LEGACY, NO_WATERMARK.format("LeftOuter"))),
    # a range condition, but the right (other) side has no watermark: no left state watermark
    Case("left_outer_range_without_right_watermark",
         lambda F, l, r, s: _wm(l, "lt").join(r, F.expr("lk = rk AND lt > rt"), "left_outer"),
         "append", ("start", LEGACY, NO_WATERMARK.format("LeftOuter"))),
    Case("left_anti_stream_stream",
         lambda F, l, r, s: l.join(r, F.expr("lk = rk"), "left_anti"), "append",
         ("start", LEGACY,
          "LeftAnti joins with a streaming DataFrame/Dataset on the right are not supported")),
    # no equality predicate: Spark's planner (StreamingJoinStrategy) fails the first batch
    Case("inner_without_equality_key",
         lambda F, l, r, s: _wm(l, "lt").join(_wm(r, "rt"), F.expr("lt > rt"), "inner"),
         "append",
         ("run", "STREAM_FAILED", "_LEGACY_ERROR_TEMP_1181",
          "Stream-stream join without equality predicate is not supported")),
    # the same in an outer join whose range condition gives the state watermarks
    Case("left_outer_without_equality_key",
         lambda F, l, r, s: _wm(l, "lt").join(
             _wm(r, "rt"), F.expr("lt BETWEEN rt - interval 5 seconds AND rt + interval 5 seconds"),
             "left_outer"),
         "append",
         ("run", "STREAM_FAILED", "_LEGACY_ERROR_TEMP_1181",
          "Stream-stream join without equality predicate is not supported")),
    Case("full_outer_stream_static",
         lambda F, l, r, s: l.join(s, F.expr("lk = sk"), "full_outer"), "append",
         ("start", LEGACY, "FullOuter joins with streaming DataFrames/Datasets on the left and a "
                           "static DataFrame/Dataset on the right is not supported")),
    Case("full_outer_static_stream",
         lambda F, l, r, s: s.join(l, F.expr("lk = sk"), "full_outer"), "append",
         ("start", LEGACY, "FullOuter joins with streaming DataFrames/Datasets on the right and a "
                           "static DataFrame/Dataset on the left is not supported")),
    Case("left_outer_static_left_stream_right",
         lambda F, l, r, s: s.join(l, F.expr("lk = sk"), "left_outer"), "append",
         ("start", LEGACY, "LeftOuter join with a streaming DataFrame/Dataset on the right and a "
                           "static DataFrame/Dataset on the left is not supported")),
    Case("right_outer_stream_left_static_right",
         lambda F, l, r, s: l.join(s, F.expr("lk = sk"), "right_outer"), "append",
         ("start", LEGACY, "RightOuter join with a streaming DataFrame/Dataset on the left and a "
                           "static DataFrame/DataSet on the right not supported")),
    Case("left_outer_update_mode",
         lambda F, l, r, s: _wm(l, "lt").join(_wm(r, "rt"), F.expr(RANGE), "left_outer"),
         "update",
         ("start", LEGACY, "LeftOuter join between two streaming DataFrames/Datasets is not "
                           "supported in Update output mode, only in Append output mode")),
    Case("full_outer_event_time_key_update_mode",
         lambda F, l, r, s: _wm(l, "lt").join(_wm(r, "rt"), F.expr("lk = rk AND lt = rt"),
                                              "full_outer"),
         "update",
         ("start", LEGACY, "FullOuter join between two streaming DataFrames/Datasets is not "
                           "supported in Update output mode, only in Append output mode")),
    Case("inner_complete_mode",
         lambda F, l, r, s: l.join(r, F.expr("lk = rk"), "inner"), "complete",
         ("start", "STREAMING_OUTPUT_MODE.UNSUPPORTED_OPERATION",
          "Invalid streaming output mode: complete. This output mode is not supported for no "
          "streaming aggregations on streaming DataFrames/DataSets")),
    # Spark 4.3 runs inner and left semi stream-stream joins in Update mode (rows as in Append)
    Case("left_semi_update_mode_runs",
         lambda F, l, r, s: _wm(l, "lt").join(_wm(r, "rt"), F.expr(RANGE), "left_semi"),
         "update", ("ok", ((1, norm(ts(1)), "a"),))),
    Case("inner_update_mode_runs",
         lambda F, l, r, s: l.join(r, F.expr("lk = rk"), "inner"), "update",
         ("ok", ((1, norm(ts(1)), "a", 1, norm(ts(2)), "b"),))),
)


def _first_line(message: str) -> str:
    """Spark's and Ember's messages reduced to the checker's text."""
    text = str(message)
    if "terminated with exception: " in text:
        text = text.split("terminated with exception: ", 1)[1]
    text = re.sub(r"^\[[A-Z0-9_.]+\] ", "", text.strip())
    text = text.split(";\n", 1)[0].split("\n", 1)[0]
    text = re.sub(r"\s*SQLSTATE: \w+$", "", text)
    return text.rstrip(" .;")


def run_case(engine: Any, case: Case, checkpoint: str) -> tuple:
    """``("ok", rows)`` or ``(phase, error class, first line of the message)``."""
    (lh, left) = engine.memory_stream(LEFT)
    (rh, right) = engine.memory_stream(RIGHT)
    static = engine.static(*STATIC)
    df = case.build(engine.F, left, right, static)
    received: list[tuple] = []
    try:
        query = engine.start(df, checkpoint, case.mode, lambda _b, rows: received.extend(rows))
    except Exception as e:  # noqa: BLE001 - the error is the result
        return ("start", error_class(e), _first_line(str(e)))
    try:
        engine.feed(query, [(lh, ((1, ts(1), "a"),)), (rh, ((1, ts(2), "b"),))])
        query.processAllAvailable()
    except Exception as e:  # noqa: BLE001
        return ("run", error_class(e), cause_class(e), _first_line(str(e)))
    finally:
        query.stop()
    return ("ok", tuple(sorted(received, key=repr)))


@pytest.fixture(scope="module")
def spark_outcome(spark: Any, tmp_path_factory: pytest.TempPathFactory):
    """Spark's outcome per case, computed once per module."""
    engine = SparkEngine(spark)
    cache: dict[str, tuple] = {}

    def get(case: Case) -> tuple:
        if case.name not in cache:
            cache[case.name] = run_case(engine, case, str(tmp_path_factory.mktemp("spark")))
        return cache[case.name]

    return get


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_spark_outcome(spark_outcome: Any, case: Case) -> None:
    assert spark_outcome(case) == case.expected


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_ember_outcome_matches_spark(spark_outcome: Any, case: Case, tmp_path: Any) -> None:
    import ember

    session = ember.Session()
    session.conf.set("spark.sql.session.timeZone", "UTC")
    assert run_case(EmberEngine(session), case, str(tmp_path / "ck")) == spark_outcome(case)
