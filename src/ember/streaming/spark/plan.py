"""A streaming query's Ember plan as a Spark Structured Streaming DataFrame.

The analyzed query is planned once by Ember's own streaming planner (IncrementalExecution over
empty batches, the plan every micro-batch of the local runtime runs), then cut where Spark
must take over::

    [post ops]                            mapInArrow(unpack_output): Ember's operators
    StreamingSymmetricHashJoin            union of the packed sides
      Exchange hashpartitioning(keys, n)    .groupBy("__p").transformWithStateInPandas(
        [ops above the watermark]              EmberJoinProcessor, timeMode="EventTime")
        EventTimeWatermark t, delay       mapInArrow(pack_side): ops above, rows packed
        [ops below the watermark]         .withWatermark("c<i>", delay): Spark's watermark
        <the stream's batch>              mapInArrow(run_stage): ops below
                                          spark.readStream.format(..).schema(..).load(path)

Spark's sources read the streams (file formats with the reader's options, ``rate``); Ember's
``MemoryStream`` lives in the driver's Python process and is refused (use a file source, or
``option("ember.runtime", "local")``).  Watermarks are Spark's (``withWatermark`` with the
same column and delay, so Spark computes the same global watermark with
``spark.sql.streaming.multipleWatermarkPolicy``).  The join's late rows are dropped by Spark's
transformWithState on the packed ``__et`` column, which carries watermark metadata: Spark drops
input rows at or below the previous batch's watermark, the join's rule.  A query without a
stream-stream join is its one stream's operators (the same cut without the join).

Only row-wise operators (Project, Filter) may surround the join or the watermark; anything
else (an aggregation, a stream-static join, a second stateful operator) is refused with
``UnsupportedError`` naming the operator.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import pyarrow as pa

from ember.conf import ADAPTIVE_ENABLED, COALESCE_PARTITIONS, PROGRESS_ENABLED, SQLConf
from ember.errors import UnsupportedError
from ember.plans.logical.nodes import LogicalPlan, StreamingBatchRelation, StreamingRelation

if TYPE_CHECKING:  # pragma: no cover
    from ember.session import Session

__all__ = ["SparkStreamPlan", "translate", "FILE_FORMATS"]

#: stream formats read by Spark's own file source
FILE_FORMATS = frozenset({"parquet", "csv", "json", "orc", "text"})
WATERMARK_DELAY_KEY = "spark.watermarkDelayMs"


@dataclass(frozen=True)
class SparkStreamPlan:
    """The translated query: ``frame`` (a streaming PySpark DataFrame whose rows are the
    query's output), whether it holds a join, and whether that join evicts state (a join
    that never evicts must not get no-data batches, as on the local runtime)."""

    frame: Any
    has_join: bool
    has_state_cleanup: bool
    num_partitions: int


def translate(session: "Session", plan: LogicalPlan, num_partitions: int) -> SparkStreamPlan:
    """``plan`` (analyzed, streaming) on ``session``'s SparkSession."""
    from ember.physical.nodes import ShuffleExchangeExec
    from ember.streaming.physical import StreamingSymmetricHashJoinExec

    physical = _physical(session, plan, num_partitions)
    spark = session.spark_session
    conf = tuple((k, str(v)) for k, v in session.sql_conf.items())
    relations = plan.collect(lambda p: p if isinstance(p, StreamingRelation) else None)
    post, below = _peel(physical)
    if not isinstance(below, StreamingSymmetricHashJoinExec):
        df = _stream_frame(spark, session, physical, relations, conf)
        return SparkStreamPlan(df, False, False, num_partitions)
    join = below
    from ember.streaming.spark.worker import (
        OUTPUT_DDL, EmberJoinProcessor, JoinSpec, PACKED_DDL, PackSpec, StageSpec, pack_side,
        unpack_output,
    )
    from ember.streaming.join.operator import state_ttls_ms
    from ember.streaming.join.state_watermark import event_time_column

    # a state TTL needs the batch's processing time (TimerValues: not in timeMode "None") and
    # every partition to run in every batch (PackSpec.tick)
    ttl = any(state_ttls_ms(session.sql_conf))

    frames = []
    for side, child, keys in ((0, join.left, join.left_keys), (1, join.right, join.right_keys)):
        if isinstance(child, ShuffleExchangeExec):
            child = child.child
        ops, leaf, wm, below_ops = _split_side(child)
        df, top = _below_watermark(spark, session, leaf, below_ops, wm, relations, conf,
                                   f"{'left' if side == 0 else 'right'} side")
        stage = StageSpec(_over_input(ops, top), top, conf,
                          f"{'left' if side == 0 else 'right'} side of {join.node_name}")
        output = child.output
        spec = PackSpec(stage, side, tuple(keys), tuple(output), event_time_column(output),
                        num_partitions, ttl)
        packed = _arrow_schema(spark, PACKED_DDL)
        frames.append(df.mapInArrow(functools.partial(pack_side, spec, packed), PACKED_DDL))
    left_out, right_out = join.left.output, join.right.output
    event_time = (event_time_column(left_out) is not None
                  or event_time_column(right_out) is not None)
    if event_time:
        from pyspark.sql import functions as F

        # Spark's transformWithState drops input rows whose watermarked column is at or below
        # the previous batch's watermark: the join's late rows (module docstring)
        frames = [f.select("__p", "__side", F.col("__et").alias(
            "__et", metadata={WATERMARK_DELAY_KEY: 0}), "__row") for f in frames]
    union = frames[0].union(frames[1])
    spec = JoinSpec(join.left_keys, join.right_keys, join.join_type, join.condition,
                    tuple(left_out), tuple(right_out), join.state_format_version,
                    num_partitions, event_time, conf, join.simple_string()[:200])
    joined = union.groupBy("__p").transformWithStateInPandas(
        EmberJoinProcessor(spec), OUTPUT_DDL, "Append",
        "EventTime" if event_time or ttl else "None")
    out_attrs = physical.output
    post_spec = StageSpec(_over_input(post, tuple(join.output)), tuple(join.output), conf,
                          "operators above the join")
    ddl = _ddl(out_attrs)
    frame = joined.mapInArrow(functools.partial(unpack_output, post_spec,
                                                _arrow_schema(spark, ddl)), ddl)
    return SparkStreamPlan(frame, True, join.has_state_cleanup(), num_partitions)


# ---------------------------------------------------------------------------------------------
# Planning and cutting


def _physical(session: "Session", plan: LogicalPlan, num_partitions: int) -> Any:
    """The plan every micro-batch of the local runtime runs (over empty batches)."""
    from ember.conf import SHUFFLE_PARTITIONS
    from ember.streaming.execution import IncrementalExecution, _empty

    conf: SQLConf = session.sql_conf.copy()
    conf.set(SHUFFLE_PARTITIONS.key, str(num_partitions))
    conf.set(COALESCE_PARTITIONS.key, "false")
    conf.set(ADAPTIVE_ENABLED.key, "false")
    conf.set(PROGRESS_ENABLED.key, "false")

    def substitute(p: LogicalPlan) -> LogicalPlan | None:
        if isinstance(p, StreamingRelation):
            return StreamingBatchRelation(p.output, _empty(p.output), p.description)
        return None

    ie = IncrementalExecution(session, conf, plan.transform_down(substitute),
                              checkpoint="", run_id="", batch_id=0,
                              num_state_partitions=num_partitions, watermark_for_late_events=0,
                              watermark_for_eviction=0, state_format_version=int(
                                  conf.get_string("spark.sql.streaming.join.stateFormatVersion")
                                  or 2))
    return ie.executed_plan


def _row_wise(node: Any) -> bool:
    from ember.physical.nodes import FilterExec, ProjectExec

    return isinstance(node, ProjectExec | FilterExec)


def _peel(node: Any) -> tuple[list[Any], Any]:
    """``(row-wise operators from the top, the first other node)``."""
    ops = []
    while _row_wise(node):
        ops.append(node)
        node = node.children[0]
    return ops, node


def _split_side(node: Any) -> tuple[list[Any], Any, Any, list[Any]]:
    """A stream's chain: ``(ops above the watermark, the leaf, the watermark or None, ops
    below the watermark)``."""
    from ember.physical.nodes import LeafExecNode
    from ember.streaming.physical import EventTimeWatermarkExec

    above, rest = _peel(node)
    if isinstance(rest, EventTimeWatermarkExec):
        below, leaf = _peel(rest.child)
        wm = rest
    else:
        below, leaf, wm = [], rest, None
    if not isinstance(leaf, LeafExecNode):
        raise UnsupportedError(
            f"A streaming query on the Spark runtime supports row-wise operators (Project, "
            f"Filter) around one stream-stream join; {leaf.node_name} is not supported "
            "(run it with option('ember.runtime', 'local')).", error_class="UNSUPPORTED_FEATURE")
    if wm is None:
        return above, leaf, None, []
    return above, leaf, wm, below


def _over_input(ops: list[Any], input_attrs: tuple[Any, ...]) -> Any:
    """``ops`` (top first) with their bottom child replaced by ``SparkInputExec(0)``."""
    from ember.runtime.spark.nodes import SparkInputExec

    if not ops:
        return None
    node: Any = SparkInputExec(0, tuple(input_attrs), source="stream")
    for op in reversed(ops):
        node = op.with_children((node,))
    return node


def _below_watermark(spark: Any, session: "Session", leaf: Any, below: list[Any], wm: Any,
                     relations: list[StreamingRelation], conf: tuple[tuple[str, str], ...],
                     label: str) -> tuple[Any, tuple[Any, ...]]:
    """The stream read by Spark, the operators below its watermark run, and Spark's
    ``withWatermark``: ``(frame with columns c0.., the Ember attributes of those columns)``."""
    from ember.streaming.spark.worker import StageSpec, run_stage

    rel = _relation_of(leaf, relations)
    df = _reader(spark, rel)
    attrs = tuple(rel.output)
    df = df.toDF(*[f"c{i}" for i in range(len(attrs))])
    ops = list(below)
    if tuple(a.expr_id for a in leaf.output) != tuple(a.expr_id for a in attrs):
        from ember.physical.nodes import ProjectExec

        ops.append(ProjectExec(tuple(leaf.output), leaf))  # the columns the planner kept
    if ops:
        out = ops[0].output
        spec = StageSpec(_over_input(ops, attrs), attrs, conf, f"{label} below its watermark")
        ddl = _ddl(out, positional=True)
        df = df.mapInArrow(functools.partial(run_stage, spec, _arrow_schema(spark, ddl)), ddl)
        attrs = tuple(out)
    if wm is not None:
        idx = next(i for i, a in enumerate(attrs) if a.expr_id == wm.event_time.expr_id)
        delay = wm.delay_text or f"{wm.delay_ms} milliseconds"
        df = df.withWatermark(f"c{idx}", delay)
        attrs = tuple(wm.output)
    return df, attrs


def _stream_frame(spark: Any, session: "Session", physical: Any,
                  relations: list[StreamingRelation], conf: tuple[tuple[str, str], ...]) -> Any:
    """A query without a join: one stream's operators."""
    from ember.streaming.spark.worker import StageSpec, run_stage

    ops, leaf, wm, below = _split_side(physical)
    df, top = _below_watermark(spark, session, leaf, below, wm, relations, conf, "stream")
    ddl = _ddl(physical.output)
    spec = StageSpec(_over_input(ops, top), top, conf, "operators above the watermark")
    return df.mapInArrow(functools.partial(run_stage, spec, _arrow_schema(spark, ddl)), ddl)


def _relation_of(leaf: Any, relations: list[StreamingRelation]) -> StreamingRelation:
    ids = {a.expr_id for a in leaf.output}
    for r in relations:
        if ids <= {a.expr_id for a in r.output}:
            return r
    raise UnsupportedError(
        f"A streaming query on the Spark runtime reads only streams; {leaf.node_name} is not "
        "one (stream-static joins run with option('ember.runtime', 'local')).",
        error_class="UNSUPPORTED_FEATURE")


def _reader(spark: Any, rel: StreamingRelation) -> Any:
    """Spark's own source for ``rel``, with the reader's options."""
    from ember.runtime.spark.sources import spark_ddl

    fmt = rel.source_name.lower()
    opts = dict(rel.options)
    if fmt in FILE_FORMATS:
        return (spark.readStream.format(fmt).schema(spark_ddl(rel.output)).options(**opts)
                .load(rel.path))
    if fmt == "rate":
        return spark.readStream.format("rate").options(**opts).load()
    if fmt == "memory" or rel.source is not None:
        raise UnsupportedError(
            "A MemoryStream lives in the driver's Python process and cannot feed a Spark "
            "Structured Streaming query: on the Spark runtime read files (readStream.parquet / "
            "csv / json) or a rate stream, or run the query with option('ember.runtime', "
            "'local').", error_class="UNSUPPORTED_FEATURE")
    raise UnsupportedError(f"Stream format {rel.source_name!r} is not supported on the Spark "
                           "runtime", error_class="UNSUPPORTED_FEATURE")


def _ddl(attrs: Any, positional: bool = False) -> str:
    from ember.runtime.spark.sources import spark_ddl

    if not positional:
        return spark_ddl(attrs)
    return ", ".join(f"c{i} {a.data_type.simple_string()}" for i, a in enumerate(attrs))


def _arrow_schema(spark: Any, ddl: str) -> pa.Schema:
    """The Arrow schema Spark expects of a ``mapInArrow`` returning ``ddl`` (its string widths
    and the session time zone on timestamps)."""
    from pyspark.sql.pandas.types import to_arrow_schema
    from pyspark.sql.types import DataType

    large = str(spark.conf.get("spark.sql.execution.arrow.useLargeVarTypes", "false")).lower()
    return to_arrow_schema(DataType.fromDDL(ddl),
                           timezone=spark.conf.get("spark.sql.session.timeZone"),
                           prefers_large_types=large == "true")
