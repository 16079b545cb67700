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

A stream-static join is stateless per batch, so it is one more row-wise operator of the stage
its stream side runs in (below or above a watermark, above a stream-stream join, or in a query
without one): whatever join the local planner chose becomes a ``BroadcastHashJoin`` (equi-join
keys) or ``BroadcastNestedLoopJoin`` building the static side (the join types Spark allows,
checked by :mod:`ember.streaming.checks`, all preserve the stream side, so each Arrow batch of
the stream joins on its own).  The static side is run once when the query starts (by the Spark
runtime, :class:`~ember.runtime.spark.runtime.SparkRuntime`) and shipped as a Spark broadcast
that the workers read as the batch runtime's broadcasts (``TaskRuntime.seed_broadcasts``).  The
local runtime (and Spark) evaluate the static plan again in every micro-batch; the rows differ
only if the static data changes while the query runs (a restart reads it again).  A static side
larger than ``ember.streaming.spark.maxStaticSideBytes`` (Arrow bytes, default 256 MiB) is
refused before it reaches the driver: it is measured on the executors first.

Only row-wise operators (Project, Filter, Expand, a stream-static join) may surround the join or
the watermark; anything else (an aggregation, a second stateful operator) is refused with
``UnsupportedError`` naming the operator.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import pyarrow as pa

from ember.conf import (
    ADAPTIVE_ENABLED, COALESCE_PARTITIONS, PROGRESS_ENABLED, SESSION_TIME_ZONE,
    SPARK_ARROW_LARGE_VAR_TYPES, STREAM_JOIN_STATE_FORMAT, STREAM_SPARK_MAX_STATIC_SIDE, SQLConf,
    SHUFFLE_PARTITIONS,
)
from ember.errors import UnsupportedError
from ember.plans.logical.nodes import LogicalPlan, StreamingBatchRelation, StreamingRelation
from ember.physical.nodes import (
    ExpandExec, FilterExec, ProjectExec, ShuffleExchangeExec, LeafExecNode, BroadcastExchangeExec,
    BroadcastHashJoinExec, BroadcastNestedLoopJoinExec, BuildSide, JoinExec, SortExec,
    ReusedExchangeExec,
)
from ember.execution.kernels.batches import schema_of
from ember.physical.streaming.nodes import StreamingSymmetricHashJoinExec, EventTimeWatermarkExec
from ember.physical.streaming.state_watermark import event_time_column
from ember.runtime.spark.errors import task_errors
from ember.runtime.spark.nodes import SparkInputExec
from ember.runtime.spark.runtime import SparkRuntime, prepare_for_spark
from ember.runtime.spark.sources import spark_ddl
from ember.runtime.spark.worker import encode_table, table_of
from ember.streaming.execution import IncrementalExecution, _empty
from ember.streaming.join.operator import state_ttls_ms
from ember.streaming.spark.worker import (
    OUTPUT_DDL, EmberJoinProcessor, JoinSpec, PACKED_DDL, PackSpec, pack_side, unpack_output,
    StageSpec, run_stage, item_bytes,
)

if TYPE_CHECKING:  # pragma: no cover
    from ember.session import Session

__all__ = ["SparkStreamPlan", "translate", "FILE_FORMATS"]

#: stream formats read by Spark's own file source
FILE_FORMATS = frozenset({"parquet", "csv", "json", "orc", "text"})
WATERMARK_DELAY_KEY = "spark.watermarkDelayMs"

#: ``{plan_id of a static side's BroadcastExchangeExec: pyspark Broadcast}``
Broadcasts = dict[int, Any]


@dataclass(frozen=True)
class SparkStreamPlan:
    """The translated query: ``frame`` (a streaming PySpark DataFrame whose rows are the
    query's output), whether it holds a join, and whether that join evicts state (a join
    that never evicts must not get no-data batches, as on the local runtime)."""

    frame: Any
    has_join: bool
    has_state_cleanup: bool
    num_partitions: int
    #: the static sides' Spark broadcasts (released when the query ends)
    broadcasts: tuple[Any, ...] = ()


def translate(session: "Session", plan: LogicalPlan, num_partitions: int) -> SparkStreamPlan:
    """``plan`` (analyzed, streaming) on ``session``'s SparkSession."""
    spark = session.spark_session
    conf = tuple((k, str(v)) for k, v in session.sql_conf.items())
    relations = plan.collect(lambda p: p if isinstance(p, StreamingRelation) else None)
    statics: list[tuple[Any, Any]] = []
    physical = _stream_static_joins(_physical(session, plan, num_partitions), relations,
                                    statics)
    bcs = _broadcast_statics(session, statics)
    try:
        return _translate(session, spark, physical, relations, conf, num_partitions, bcs)
    except BaseException:
        _release(bcs.values())
        raise


def _translate(session: "Session", spark: Any, physical: Any,
               relations: list[StreamingRelation], conf: tuple[tuple[str, str], ...],
               num_partitions: int, bcs: Broadcasts) -> SparkStreamPlan:

    released = tuple(bcs.values())
    post, below = _peel(physical)
    if not isinstance(below, StreamingSymmetricHashJoinExec):
        df = _stream_frame(spark, session, physical, relations, conf, bcs)
        return SparkStreamPlan(df, False, False, num_partitions, released)
    join = below

    # a state TTL needs the batch's processing time (TimerValues: not in timeMode "None") and
    # every partition to run in every batch (PackSpec.tick)
    ttl = any(state_ttls_ms(session.sql_conf))

    frames = []
    for side, child, keys in ((0, join.left, join.left_keys), (1, join.right, join.right_keys)):
        if isinstance(child, ShuffleExchangeExec):
            child = child.child
        ops, leaf, wm, below_ops = _split_side(child)
        df, top = _below_watermark(spark, session, leaf, below_ops, wm, relations, conf,
                                   f"{'left' if side == 0 else 'right'} side", bcs)
        stage = _stage(_over_input(ops, top), top, conf,
                       f"{'left' if side == 0 else 'right'} side of {join.node_name}", bcs)
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
    post_spec = _stage(_over_input(post, tuple(join.output)), tuple(join.output), conf,
                       "operators above the join", bcs)
    ddl = _ddl(out_attrs, positional=True)
    frame = joined.mapInArrow(functools.partial(unpack_output, post_spec,
                                                _arrow_schema(spark, ddl)), ddl)
    return SparkStreamPlan(_named(frame, out_attrs), True, join.has_state_cleanup(),
                           num_partitions, released)


# ---------------------------------------------------------------------------------------------
# Planning and cutting


def _physical(session: "Session", plan: LogicalPlan, num_partitions: int) -> Any:
    """The plan every micro-batch of the local runtime runs (over empty batches)."""

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
                              watermark_for_eviction=0, state_format_version=conf.get(STREAM_JOIN_STATE_FORMAT))
    return ie.executed_plan


def _row_wise(node: Any) -> bool:
    """An operator each input row goes through on its own, so any batch of the stream can run
    it: Project, Filter, Expand (the rows of ``window()``, Spark's ``TimeWindowing``: one row
    per window; ``Expand`` + ``Filter`` for a sliding window) and a stream-static join."""

    return (isinstance(node, ProjectExec | FilterExec | ExpandExec)
            or _static_build(node) is not None)


def _stream_child(node: Any) -> int:
    """The index of a row-wise operator's stream child (a stream-static join's other side
    is its static broadcast)."""
    build = _static_build(node)
    return 0 if build is None else 1 - build


def _peel(node: Any) -> tuple[list[Any], Any]:
    """``(row-wise operators from the top, the first other node)``."""
    ops = []
    while _row_wise(node):
        ops.append(node)
        node = node.children[_stream_child(node)]
    return ops, node


def _split_side(node: Any) -> tuple[list[Any], Any, Any, list[Any]]:
    """A stream's chain: ``(ops above the watermark, the leaf, the watermark or None, ops
    below the watermark)``."""

    above, rest = _peel(node)
    if isinstance(rest, EventTimeWatermarkExec):
        below, leaf = _peel(rest.child)
        wm = rest
    else:
        below, leaf, wm = [], rest, None
    if not isinstance(leaf, LeafExecNode):
        raise UnsupportedError(
            "A streaming query on the Spark runtime supports row-wise operators (Project, "
            "Filter, Expand, stream-static joins) around one stream-stream join; "
            f"{leaf.node_name} is not supported "
            "(run it with option('ember.runtime', 'local')).", error_class="UNSUPPORTED_FEATURE")
    if wm is None:
        return above, leaf, None, []
    return above, leaf, wm, below


def _over_input(ops: list[Any], input_attrs: tuple[Any, ...]) -> Any:
    """``ops`` (top first) with their bottom child replaced by ``SparkInputExec(0)``."""

    if not ops:
        return None
    node: Any = SparkInputExec(0, tuple(input_attrs), source="stream")
    for op in reversed(ops):
        i = _stream_child(op)
        node = op.with_children(tuple(node if j == i else c for j, c in enumerate(op.children)))
    return node


def _stage(plan: Any, input_attrs: tuple[Any, ...], conf: tuple[tuple[str, str], ...],
           label: str, bcs: Broadcasts) -> Any:
    """The :class:`StageSpec` of ``plan`` with the broadcasts of the static sides it joins."""

    ids = [] if plan is None else [b.plan_id for b in plan.collect(
        lambda n: n if isinstance(n, BroadcastExchangeExec) else None)]
    return StageSpec(plan, input_attrs, conf, label, tuple((i, bcs[i]) for i in ids))


def _below_watermark(spark: Any, session: "Session", leaf: Any, below: list[Any], wm: Any,
                     relations: list[StreamingRelation], conf: tuple[tuple[str, str], ...],
                     label: str, bcs: Broadcasts) -> tuple[Any, tuple[Any, ...]]:
    """The stream read by Spark, the operators below its watermark run, and Spark's
    ``withWatermark``: ``(frame with columns c0.., the Ember attributes of those columns)``."""

    rel = _relation_of(leaf, relations)
    df = _reader(spark, rel)
    attrs = tuple(rel.output)
    df = df.toDF(*[f"c{i}" for i in range(len(attrs))])
    ops = list(below)
    if tuple(a.expr_id for a in leaf.output) != tuple(a.expr_id for a in attrs):
        ops.append(ProjectExec(tuple(leaf.output), leaf))  # the columns the planner kept
    if ops:
        out = ops[0].output
        spec = _stage(_over_input(ops, attrs), attrs, conf, f"{label} below its watermark", bcs)
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
                  relations: list[StreamingRelation], conf: tuple[tuple[str, str], ...],
                  bcs: Broadcasts) -> Any:
    """A query without a stream-stream join: one stream's operators."""

    ops, leaf, wm, below = _split_side(physical)
    df, top = _below_watermark(spark, session, leaf, below, wm, relations, conf, "stream", bcs)
    ddl = _ddl(physical.output, positional=True)
    spec = _stage(_over_input(ops, top), top, conf, "operators above the watermark", bcs)
    frame = df.mapInArrow(functools.partial(run_stage, spec, _arrow_schema(spark, ddl)), ddl)
    return _named(frame, physical.output)


def _named(frame: Any, attrs: Any) -> Any:
    """``frame`` (positional columns ``c0``..) with the query's output names.  A query's
    output may repeat a name (``l.key, r.key`` of a self-join); Spark's ``mapInArrow`` cannot
    return such a schema (its Arrow reader fails: "not all nodes, buffers and
    variadicBufferCounts were consumed"), so every ``mapInArrow`` returns positional names and
    ``toDF`` renames, which allows repeats."""
    return frame.toDF(*[a.name for a in attrs])


def _relation_of(leaf: Any, relations: list[StreamingRelation]) -> StreamingRelation:
    ids = {a.expr_id for a in leaf.output}
    for r in relations:
        if ids <= {a.expr_id for a in r.output}:
            return r
    raise UnsupportedError(
        f"A streaming query on the Spark runtime reads only streams; {leaf.node_name} is not "
        "one (run the query with option('ember.runtime', 'local')).",
        error_class="UNSUPPORTED_FEATURE")


def _reader(spark: Any, rel: StreamingRelation) -> Any:
    """Spark's own source for ``rel``, with the reader's options."""

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
    if not positional:
        return spark_ddl(attrs)
    return ", ".join(f"c{i} {a.data_type.simple_string()}" for i, a in enumerate(attrs))


def _arrow_schema(spark: Any, ddl: str) -> pa.Schema:
    """The Arrow schema Spark expects of a ``mapInArrow`` returning ``ddl`` (its string widths
    and the session time zone on timestamps)."""
    from pyspark.sql.pandas.types import to_arrow_schema
    from pyspark.sql.types import DataType

    return to_arrow_schema(DataType.fromDDL(ddl), timezone=SESSION_TIME_ZONE.read_spark(spark),
                           prefers_large_types=SPARK_ARROW_LARGE_VAR_TYPES.read_spark(spark))


# ---------------------------------------------------------------------------------------------
# Stream-static joins

#: marks the broadcast placeholder of a static side (:func:`_static_build`)
_STATIC_SOURCE = "static side"


def _static_build(node: Any) -> int | None:
    """0 / 1: the static side of a stream-static join made by :func:`_stream_static_join`
    (left / right); None for any other node."""

    if not isinstance(node, BroadcastHashJoinExec | BroadcastNestedLoopJoinExec):
        return None
    i = 0 if node.build_side is BuildSide.LEFT else 1
    build = node.children[i]
    if (isinstance(build, BroadcastExchangeExec) and isinstance(build.child, SparkInputExec)
            and build.child.source == _STATIC_SOURCE):
        return i
    return None


def _stream_static_joins(plan: Any, relations: list[StreamingRelation],
                         statics: list[tuple[Any, Any]]) -> Any:
    """``plan`` with every join of a stream and a static side made a broadcast join building
    the static side over a placeholder; ``statics`` gets ``(the broadcast exchange, the static
    side's plan)`` of each."""

    stream_ids = [frozenset(a.expr_id for a in r.output) for r in relations]

    def stream_leaf(n: Any) -> bool:
        ids = {a.expr_id for a in n.output}
        return isinstance(n, LeafExecNode) and bool(ids) and any(ids <= s for s in stream_ids)

    def streaming(node: Any) -> bool:
        return node.find(stream_leaf) is not None

    def visit(node: Any) -> Any:
        kids = tuple(visit(c) for c in node.children)
        if any(k is not c for k, c in zip(kids, node.children)):
            node = node.with_children(kids)
        if isinstance(node, JoinExec) and not isinstance(node, StreamingSymmetricHashJoinExec):
            left, right = streaming(node.left), streaming(node.right)
            if left != right:
                return _stream_static_join(node, right, statics)
        return node

    return visit(plan)


def _strip(node: Any) -> Any:
    """``node`` without the sorts and exchanges (shuffles, broadcasts) the batch join put
    above it."""

    while isinstance(node, ShuffleExchangeExec | SortExec | BroadcastExchangeExec):
        node = node.child
    return node


def _stream_static_join(node: Any, static_left: bool, statics: list[tuple[Any, Any]]) -> Any:
    """The broadcast join of ``node``'s stream side with its static side (module docstring)."""

    jt = node.join_type
    if not jt.joins_stream_with_static(BuildSide.LEFT if static_left else BuildSide.RIGHT):  # refused by the streaming checks before; never joined per batch
        raise UnsupportedError(
            f"A {jt.value} join with a static {'left' if static_left else 'right'} side is "
            "not supported on the Spark runtime", error_class="UNSUPPORTED_FEATURE")
    left, right = _strip(node.left), _strip(node.right)
    static = left if static_left else right
    build = BuildSide.LEFT if static_left else BuildSide.RIGHT
    keys = getattr(node, "left_keys", ())
    join: Any
    if keys:
        join = BroadcastHashJoinExec(
            node.left_keys, node.right_keys, jt, build, node.condition, left, right,
            getattr(node, "is_null_aware_anti_join", False), node.existence_attr)
    else:
        join = BroadcastNestedLoopJoinExec(left, right, build, jt, node.condition,
                                           node.existence_attr)
    mode = join.required_child_distribution[0 if static_left else 1].mode
    exchange = BroadcastExchangeExec(mode, SparkInputExec(-1, tuple(static.output),
                                                          _STATIC_SOURCE))
    if isinstance(static, ReusedExchangeExec):  # the same columns, by position
        static = _strip(static.child)
    statics.append((exchange, static))
    return join.copy(left=exchange) if static_left else join.copy(right=exchange)


def _max_static_bytes(conf: SQLConf) -> int:
    """The largest static side of a stream-static join shipped as a broadcast (Arrow IPC
    bytes)."""
    return int(conf.get(STREAM_SPARK_MAX_STATIC_SIDE))


def _broadcast_statics(session: "Session", statics: list[tuple[Any, Any]]) -> Broadcasts:
    """Each static side run once (now, by the Spark runtime) and shipped as a Spark broadcast
    of ``(key, Arrow IPC bytes)``, the form ``TaskRuntime.seed_broadcasts`` reads."""
    import uuid


    sc = session.spark_session.sparkContext
    bcs: Broadcasts = {}
    try:
        for exchange, static in statics:
            table = _run_static(session, static)
            bcs[exchange.plan_id] = sc.broadcast((uuid.uuid4().hex, encode_table(table)))
    except BaseException:
        _release(bcs.values())
        raise
    return bcs


def _run_static(session: "Session", plan: Any) -> pa.Table:
    """The rows of a static side.  Its Arrow bytes are summed on the executors first (the RDD
    persisted, so it runs once): a side over the limit never reaches the driver."""

    limit = _max_static_bytes(session.sql_conf)
    label = plan.simple_string()[:120]
    with SparkRuntime(session.spark_session, session.sql_conf) as rt:
        rdd = rt.rdd(prepare_for_spark(plan)).persist()
        try:
            with task_errors(f"reading the static side {label}"):
                size = int(rdd.map(item_bytes).sum())
            if size > limit:
                raise UnsupportedError(
                    f"The static side of a stream-static join ({label}) holds {size} bytes, "
                    f"more than {STREAM_SPARK_MAX_STATIC_SIDE.key} ({limit}): the Spark runtime "
                    "broadcasts it to every task. Raise the limit, or run the query with "
                    "option('ember.runtime', 'local').", error_class="UNSUPPORTED_FEATURE")
            with task_errors(f"reading the static side {label}"):
                items = rdd.collect()
        finally:
            rdd.unpersist()
    return table_of(items, schema_of(plan.output))


def _release(broadcasts: Any) -> None:
    for b in broadcasts:
        try:
            b.unpersist()
        except Exception:  # noqa: BLE001 - the context may already be stopped
            pass
