"""Analysis checks of a streaming query (Spark's ``UnsupportedOperationChecker.checkForStreaming``
plus the stream-stream join planning check), run on the analyzed plan at ``writeStream.start()``.

Messages and error classes are Spark 4.3's, verified against PySpark 4.3 (tests/streaming/
test_checks.py). Most are Spark's legacy ``_LEGACY_ERROR_TEMP_3102`` (``AnalysisException(msg)``);
output-mode errors are ``STREAMING_OUTPUT_MODE.UNSUPPORTED_OPERATION``. Order as in Spark:

1. the plan must read a stream;
2. output mode vs streaming aggregations (``Aggregate`` or ``Distinct`` over a stream): append
   needs an event-time (watermarked) grouping column, complete needs an aggregation;
3. each operator bottom-up (children first, so the deepest offence is reported):
   distinct aggregate functions; joins (below); union of a stream with a batch plan; except with a
   streaming right side; intersect of streams; limit in update mode; offset; sort unless over an
   aggregation in complete mode;
4. the global-watermark correctness check: a stateful operator (streaming aggregation, distinct,
   stream-stream join) above a streaming aggregation in a non-append mode
   (``spark.sql.streaming.statefulOperator.checkCorrectness.enabled``, default true).

Joins (Spark's ``UnsupportedOperationChecker.checkForStreaming``): stream-stream joins only in append mode (Spark 4.3 also lets inner
and left semi ones run in update mode); Inner/Cross need nothing more; LeftOuter/LeftSemi need a
watermarked column among the equi-join keys or a state-value watermark for the left side derivable
from the condition with a right-side watermark (section 10.5, through ``ember.streaming.join``),
RightOuter mirrored, FullOuter either; LeftAnti with a streaming right side is rejected.
Stream-static: LeftOuter/LeftSemi need the stream on the left, RightOuter on the right, FullOuter is
rejected with one static side. A stream-stream join also needs an equality predicate: like Spark,
Ember raises that while planning the first micro-batch (``ember.planning.streaming``), so the
query starts and then fails with ``STREAM_FAILED``.

``dropDuplicatesWithinWatermark`` needs a watermarked column in its input.

Beyond Spark's checks, Ember refuses what its micro-batch engine cannot run yet, with
``UnsupportedError``: a streaming aggregate function whose buffer the state store cannot hold
(no partial buffers, or buffer columns of nested types), and limits on streams.
"""

from __future__ import annotations

import logging
from typing import Any

import pyarrow as pa

from ember.conf import STREAM_CHECK_CORRECTNESS
from ember.errors import AnalysisError, UnsupportedError
from ember.expressions.base import AttributeReference, Expression, NamedExpression
from ember.plans.logical.join_type import JoinType
from ember.plans.logical.nodes import (Aggregate, Deduplicate, DeduplicateWithinWatermark,
                                       Distinct, Except, Filter, Intersect, Join, Limit,
                                       LogicalPlan, Offset, Sort, Union)
from ember.streaming.state.rows import RowCodec
from ember.expressions.aggregates import AggregateExpression
from ember.physical.streaming.state_watermark import state_value_watermark
from ember.plans.logical.patterns import extract_equi_join_keys

__all__ = ["check_streaming_plan", "LEGACY_CLASS", "OUTPUT_MODE_CLASS"]

LEGACY_CLASS = "_LEGACY_ERROR_TEMP_3102"
OUTPUT_MODE_CLASS = "STREAMING_OUTPUT_MODE.UNSUPPORTED_OPERATION"
_MODES = {"append": "Append", "update": "Update", "complete": "Complete"}
_log = logging.getLogger(__name__)

_CORRECTNESS_MSG = (
    "Detected pattern of possible 'correctness' issue due to global watermark. The query "
    "contains stateful operation which can emit rows older than the current watermark plus "
    "allowed late record delay, which are \"late rows\" in downstream stateful operations and "
    "these rows can be discarded. Please refer the programming guide doc for more details. If "
    "you understand the possible risk of correctness issue and still need to run the query, you "
    "can disable this check by setting the config "
    "`spark.sql.streaming.statefulOperator.checkCorrectness.enabled` to false.")


def _fail(msg: str) -> AnalysisError:
    return AnalysisError(msg, error_class=LEGACY_CLASS, parameters={"msg": msg})


def _output_mode_error(mode: str, operation: str) -> AnalysisError:
    return AnalysisError(
        f"Invalid streaming output mode: {mode}. This output mode is not supported for "
        f"{operation} on streaming DataFrames/DataSets.",
        error_class=OUTPUT_MODE_CLASS, parameters={"outputMode": mode, "operation": operation})


def _streaming_aggregates(plan: LogicalPlan) -> list[LogicalPlan]:
    """Streaming Aggregates, and Distincts (Spark turns them into Aggregates), pre-order."""
    return plan.collect(lambda p: p if isinstance(p, (Aggregate, Distinct)) and p.is_streaming
                        else None)


def _is_event_time(e: Expression) -> bool:
    return isinstance(e, AttributeReference) and e.watermark_delay_ms is not None


def _grouping_has_watermark(agg: LogicalPlan) -> bool:
    if isinstance(agg, Distinct):
        return any(_is_event_time(a) for a in agg.child_plan.output)
    for g in agg.grouping_expressions:  # type: ignore[attr-defined]
        if _is_event_time(g.to_attribute() if isinstance(g, NamedExpression) else g):
            return True
        # window(t, ...) over an event-time column: Spark's TimeWindowing gives the window
        # column the watermark metadata of t
        if type(g).__name__.lower().endswith("window") and any(
                _is_event_time(c) for c in g.collect(lambda x: x if _is_event_time(x) else None)):
            return True
    return False


def _has_distinct_aggregate(agg: Aggregate) -> bool:
    return any(e.find(lambda x: isinstance(x, AggregateExpression) and x.is_distinct) is not None
               for e in agg.aggregate_expressions)


def _foreach_up(plan: LogicalPlan, fn: Any) -> None:
    """Post-order walk (children before parents), as Catalyst's ``foreachUp``."""
    stack: list[tuple[LogicalPlan, bool]] = [(plan, False)]
    while stack:
        node, seen = stack.pop()
        if seen:
            fn(node)
            continue
        stack.append((node, True))
        stack.extend((c, False) for c in reversed(node.children))


def _equi_keys(join: Join) -> tuple[tuple[Expression, ...], tuple[Expression, ...]] | None:
    keys = extract_equi_join_keys(join)
    return None if keys is None else (keys[0], keys[1])


def _check_stream_stream_join_watermark(join: Join) -> None:
    """Spark's ``checkForStreamStreamJoinWatermark``, with the section 10.5 algebra of
    ``ember.streaming.join`` evaluated at a dummy watermark (1 000 000 ms), as Spark does."""

    keys = _equi_keys(join)
    in_keys = keys is not None and any(_is_event_time(k) for k in keys[0] + keys[1])
    left, right, cond = join.left.output, join.right.output, join.condition
    jt = join.join_type
    if jt in (JoinType.LEFT_OUTER, JoinType.LEFT_SEMI):
        ranged = state_value_watermark(left, right, cond, 1_000_000) is not None
    elif jt is JoinType.RIGHT_OUTER:
        ranged = state_value_watermark(right, left, cond, 1_000_000) is not None
    elif jt is JoinType.FULL_OUTER:
        ranged = (state_value_watermark(left, right, cond, 1_000_000) is not None
                  or state_value_watermark(right, left, cond, 1_000_000) is not None)
    else:
        raise _fail(f"Join type {jt} is not supported with streaming DataFrame/Dataset")
    if not in_keys and not ranged:
        raise _fail(f"Stream-stream {jt} join between two streaming DataFrame/Datasets is not "
                    "supported without a watermark in the join keys, or a watermark on the "
                    "nullable side and an appropriate range condition")


def _check_join(join: Join, mode: str) -> None:
    jt = join.join_type
    ls, rs = join.left.is_streaming, join.right.is_streaming
    if ls and rs and mode != "append":
        if isinstance(jt, JoinType) and jt.emits_matches_only:
            # Inner, Cross, LeftSemi never retract nor pad rows: Spark 4.3 runs them in update
            # mode too
            if mode == "complete":
                raise _fail(f"{jt} join between two streaming DataFrames/Datasets is not "
                            "supported in Complete output mode, only in Append and Update output "
                            "modes")
        else:
            raise _fail(f"{jt} join between two streaming DataFrames/Datasets is not supported in "
                        f"{_MODES[mode]} output mode, only in Append output mode")
    if isinstance(jt, JoinType) and jt.is_inner_like:
        pass
    elif jt is JoinType.FULL_OUTER:
        if ls and not rs:
            raise _fail("FullOuter joins with streaming DataFrames/Datasets on the left and a "
                        "static DataFrame/Dataset on the right is not supported")
        if rs and not ls:
            raise _fail("FullOuter joins with streaming DataFrames/Datasets on the right and a "
                        "static DataFrame/Dataset on the left is not supported")
        if ls and rs:
            _check_stream_stream_join_watermark(join)
    elif jt is JoinType.LEFT_ANTI:
        if rs:
            raise _fail("LeftAnti joins with a streaming DataFrame/Dataset on the right are not "
                        "supported")
    elif jt in (JoinType.LEFT_OUTER, JoinType.LEFT_SEMI):
        if rs and not ls:
            raise _fail(f"{jt} join with a streaming DataFrame/Dataset on the right and a static "
                        "DataFrame/Dataset on the left is not supported")
        if ls and rs:
            _check_stream_stream_join_watermark(join)
    elif jt is JoinType.RIGHT_OUTER:
        if ls and not rs:
            raise _fail("RightOuter join with a streaming DataFrame/Dataset on the left and a "
                        "static DataFrame/DataSet on the right not supported")
        if ls and rs:
            _check_stream_stream_join_watermark(join)
    else:
        raise _fail(f"Join type {jt} is not supported with streaming DataFrame/Dataset")


def _is_stateful(p: LogicalPlan) -> bool:
    if isinstance(p, (Aggregate, Distinct, DeduplicateWithinWatermark)):
        return p.is_streaming
    if isinstance(p, Deduplicate):  # only one that can evict by event time
        return p.is_streaming and any(_is_event_time(k) for k in p.keys)
    return isinstance(p, Join) and p.left.is_streaming and p.right.is_streaming


def _check_global_watermark(plan: LogicalPlan, mode: str, conf: Any) -> None:
    if mode == "append":
        return  # only non-append aggregations emit rows older than the watermark
    enabled = STREAM_CHECK_CORRECTNESS.read(conf)
    for op in plan.collect(lambda p: p if _is_stateful(p) else None):
        if any(c.find(lambda p: isinstance(p, (Aggregate, Distinct)) and p.is_streaming)
               is not None for c in op.children):
            if enabled:
                raise _fail(_CORRECTNESS_MSG)
            _log.warning("%s\n%s", _CORRECTNESS_MSG, plan.tree_string())
            return


def check_streaming_plan(plan: LogicalPlan, output_mode: str, conf: Any = None) -> None:
    """Raise ``AnalysisError`` (Spark's message) if ``plan`` cannot run as a streaming query in
    ``output_mode`` (``append`` / ``update`` / ``complete``); ``UnsupportedError`` for what Spark
    runs but Ember's engine does not yet.

    >>> check_streaming_plan(df_stream.groupBy("k").count()._plan, "append")  # doctest: +SKIP
    Traceback (most recent call last):
    ember.errors.AnalysisError: [STREAMING_OUTPUT_MODE.UNSUPPORTED_OPERATION] Invalid streaming ...
    """
    mode = output_mode.lower()
    if mode not in _MODES:
        raise AnalysisError(f"Unknown output mode {output_mode}. Accepted output modes are "
                            "'append', 'complete', 'update'",
                            error_class="STREAMING_OUTPUT_MODE.INVALID",
                            parameters={"outputMode": output_mode})
    if not plan.is_streaming:
        raise _fail("Queries without streaming sources cannot be executed with "
                    "writeStream.start()")
    aggregates = _streaming_aggregates(plan)
    if mode == "append" and aggregates and not _grouping_has_watermark(aggregates[0]):
        raise _output_mode_error("append", "streaming aggregations without watermark")
    if mode == "complete" and not aggregates:
        raise _output_mode_error("complete", "no streaming aggregations")


    def contains_complete_data(sub: LogicalPlan) -> bool:
        return not sub.is_streaming or (bool(_streaming_aggregates(sub)) and mode == "complete")

    def check(node: LogicalPlan) -> None:
        match node:
            case Aggregate() if node.child_plan.is_streaming and _has_distinct_aggregate(node):
                raise _fail("Distinct aggregations are not supported on streaming "
                            "DataFrames/Datasets. Consider using approx_count_distinct() "
                            "instead.")
            case Join():
                _check_join(node, mode)
            case Union() if len({c.is_streaming for c in node.children}) == 2:
                raise _fail("Union between streaming and batch DataFrames/Datasets is not "
                            "supported")
            case Except() if node.right.is_streaming:
                raise _fail("Except on a streaming DataFrame/Dataset on the right is not "
                            "supported")
            case Intersect() if node.left.is_streaming or node.right.is_streaming:
                raise _fail("Intersect of streaming DataFrames/Datasets is not supported")
            case Limit() if all(c.is_streaming for c in node.children) and mode == "update":
                raise _fail("Limits are not supported on streaming DataFrames/Datasets in Update "
                            "output mode")
            case Offset():
                raise _fail("Offset is not supported on streaming DataFrames/Datasets")
            case DeduplicateWithinWatermark() if not any(
                    _is_event_time(a) for a in node.child_plan.output):
                raise _fail("dropDuplicatesWithinWatermark is not supported on streaming "
                            "DataFrames/DataSets without watermark")
            case Sort() if not contains_complete_data(node):
                raise _fail("Sorting is not supported on streaming DataFrames/Datasets, unless it "
                            "is on aggregated DataFrame/Dataset in Complete output mode")
            case _:
                pass

    _foreach_up(plan, check)
    _check_global_watermark(plan, mode, conf)
    _check_engine_support(plan)


def _check_engine_support(plan: LogicalPlan) -> None:
    """What Spark runs but Ember's micro-batch engine does not (yet)."""
    for agg in plan.collect(lambda p: p if isinstance(p, Aggregate) and p.is_streaming
                            else None):
        for e in agg.aggregate_expressions:
            for a in e.collect(lambda x: x if isinstance(x, AggregateExpression) else None):
                if not a.func.supports_buffers or not _storable(a.func.buffer_attributes()):
                    raise UnsupportedError(
                        f"The aggregate function {a.func.sql()} cannot run in a streaming "
                        "aggregation on Ember's streaming engine yet: its aggregation buffer "
                        "cannot be kept in the state store.",
                        error_class="UNSUPPORTED_FEATURE.STREAMING_AGGREGATION")
    limit = plan.find(lambda p: isinstance(p, Limit) and p.is_streaming)
    if limit is not None:
        raise UnsupportedError(
            "Limits on streaming DataFrames/Datasets are not supported by Ember's streaming "
            "engine yet.", error_class="UNSUPPORTED_FEATURE.STREAMING_LIMIT")


def _storable(buffers: Any) -> bool:
    """Whether the state store's row encoding holds these buffer columns."""
    try:
        RowCodec(pa.schema([pa.field(f"b{i}", b.data_type.to_arrow())
                            for i, b in enumerate(buffers)]))
    except UnsupportedError:
        return False
    return True
