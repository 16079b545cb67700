"""Streaming strategies (Spark's ``StreamingJoinStrategy``, ``StreamingRelationStrategy`` and the
``EventTimeWatermark`` case of ``BasicOperators``), tried before the batch strategies.

* A join of two streaming children with equi-join keys (``ExtractEquiJoinKeys``) becomes a
  ``StreamingSymmetricHashJoinExec`` whatever the sizes: never broadcast, never sort-merge (a
  stream-stream join keeps both sides' past rows in state).  Without equi-join keys it fails
  here, while the first micro-batch is planned, as Spark's does (the query fails with
  ``STREAM_FAILED`` caused by ``_LEGACY_ERROR_TEMP_1181``; an equality in a filter above the
  join was pushed into it by then).  A join with one streaming side is an ordinary join
  (JoinSelection); the streaming side's statistics are unknown (a ``StreamingBatchRelation``
  reports ``spark.sql.defaultSizeInBytes``), so only the static side may be broadcast, as in
  Spark.
* A streaming ``Aggregate`` (Spark's ``StatefulAggregationStrategy``): partial aggregate ->
  StateStoreRestore -> merge -> StateStoreSave -> final aggregate
  (:func:`ember.planning.aggregation.plan_streaming_aggregate`).
* ``Deduplicate`` / ``DeduplicateWithinWatermark`` (Spark's ``StreamingDeduplicationStrategy``)
  -> ``StreamingDeduplicateExec`` / ``StreamingDeduplicateWithinWatermarkExec``.
* ``EventTimeWatermark`` -> ``EventTimeWatermarkExec``.
* One micro-batch's ``StreamingBatchRelation`` -> ``LocalTableScanExec`` of its rows.
* A ``StreamingRelation`` (a stream outside a started query, EXPLAIN only) ->
  ``StreamingRelationExec``, which cannot run.
"""

from __future__ import annotations

from collections.abc import Callable

from ember.errors import AnalysisError
from ember.physical import nodes as P
from ember.physical.streaming.nodes import (
    EventTimeWatermarkExec,
    StateStoreRestoreExec,
    StateStoreSaveExec,
    StreamingDeduplicateExec,
    StreamingDeduplicateWithinWatermarkExec,
    StreamingRelationExec,
    StreamingSymmetricHashJoinExec,
)
from ember.planning.aggregation import plan_streaming_aggregate
from ember.plans.logical import nodes as L
from ember.plans.logical.join_type import JoinType
from ember.plans.logical.patterns import extract_equi_join_keys

PlanLater = Callable[[L.LogicalPlan], P.SparkPlan]

__all__ = ["streaming_operators"]


def streaming_operators(plan: L.LogicalPlan, plan_later: PlanLater) -> P.SparkPlan | None:
    """The physical plan of a streaming-only logical node, or None for any other node."""
    match plan:
        case L.Join(left=left, right=right, join_type=JoinType() as jt) if (
                left.is_streaming and right.is_streaming):
            keys = extract_equi_join_keys(plan)
            if keys is None:
                # QueryCompilationErrors.streamJoinStreamWithoutEqualityPredicateUnsupportedError
                raise AnalysisError("Stream-stream join without equality predicate is not "
                                    "supported.", error_class="_LEGACY_ERROR_TEMP_1181",
                                    parameters={})
            return StreamingSymmetricHashJoinExec(keys[0], keys[1], jt, keys[2],
                                                  plan_later(left), plan_later(right))
        case L.Aggregate() if plan.is_streaming:
            return plan_streaming_aggregate(
                plan, plan_later, lambda keys, child: StateStoreSaveExec(keys, child),
                lambda keys, child: StateStoreRestoreExec(keys, child))
        case L.Deduplicate(keys=keys, child=child):
            return StreamingDeduplicateExec(keys, plan_later(child))
        case L.DeduplicateWithinWatermark(keys=keys, child=child):
            return StreamingDeduplicateWithinWatermarkExec(keys, plan_later(child))
        case L.EventTimeWatermark(event_time=et, delay_ms=delay, child=child,
                                  delay_text=text, node_id=nid):
            return EventTimeWatermarkExec(et, delay, plan_later(child), text, nid)
        case L.StreamingBatchRelation(attrs=attrs, data=data):
            return P.LocalTableScanExec(attrs, data)
        case L.StreamingRelation(output=out):
            return StreamingRelationExec(plan.description, out)
    return None
