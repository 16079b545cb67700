"""Progress reports of a streaming query (Spark's ``StreamingQueryProgress`` as the dict PySpark's
``lastProgress`` / ``recentProgress`` hold), one per micro-batch::

    {"id", "runId", "name", "timestamp", "batchId", "batchDuration", "numInputRows",
     "inputRowsPerSecond", "processedRowsPerSecond",
     "durationMs": {"addBatch", "commitOffsets", "getBatch", "latestOffset", "queryPlanning",
                    "triggerExecution", "walCommit"},
     "eventTime": {"avg", "max", "min", "watermark"},     (queries with a watermark)
     "stateOperators": [{"operatorName", "numRowsTotal", "numRowsUpdated", "allUpdatesTimeMs",
                         "numRowsRemoved", "allRemovalsTimeMs", "commitTimeMs",
                         "memoryUsedBytes", "numRowsDroppedByWatermark",
                         "numShufflePartitions", "numStateStoreInstances", "customMetrics"}],
     "sources": [{"description", "startOffset", "endOffset", "latestOffset", "numInputRows",
                  "inputRowsPerSecond", "processedRowsPerSecond"}],
     "sink": {"description", "numOutputRows"}}

``eventTime.watermark`` is the watermark the batch ran with; avg/max/min are the event times the
first watermark operator that saw rows saw (Spark's choice).  Input rate: rows over the time since
the previous trigger started; processing rate: rows over this trigger's duration.  State operator
metrics are the join core's, summed over partitions; what the core reports beyond Spark is in
``customMetrics``: the rows held per side after the batch (``numTotalStateRowsLeft`` /
``numTotalStateRowsRight``) and the rows the state TTL removed per side in the batch
(``numLeftRowsExpiredByTtl`` / ``numRightRowsExpiredByTtl``).
"""

from __future__ import annotations

import datetime as _dt
from typing import TYPE_CHECKING, Any

from ember.streaming.watermarks import format_timestamp_ms

if TYPE_CHECKING:  # pragma: no cover
    from ember.streaming.execution import MicroBatchExecution

__all__ = ["make_progress", "state_operator_progress"]

#: the join core's metric names -> Spark's progress names
_STATE_METRICS = {
    "numTotalStateRows": "numRowsTotal",
    "numUpdatedStateRows": "numRowsUpdated",
    "allUpdatesTimeMs": "allUpdatesTimeMs",
    "numRemovedStateRows": "numRowsRemoved",
    "allRemovalsTimeMs": "allRemovalsTimeMs",
    "commitTimeMs": "commitTimeMs",
    "stateMemory": "memoryUsedBytes",
    "numDroppedLateRows": "numRowsDroppedByWatermark",
    "numRowsDroppedByWatermark": "numRowsDroppedByWatermark",
}
_ORDER = ("numRowsTotal", "numRowsUpdated", "allUpdatesTimeMs", "numRowsRemoved",
          "allRemovalsTimeMs", "commitTimeMs", "memoryUsedBytes", "numRowsDroppedByWatermark")
_NOT_CUSTOM = frozenset(_STATE_METRICS) | {"numOutputRows", "numStateStoreInstances",
                                           "output_rows", "output_batches",
                                           "time_ns", "stage_time_ns", "num_partitions",
                                           "build_size", "spill_size", "peak_memory"}


def _iso(seconds: float) -> str:
    t = _dt.datetime.fromtimestamp(seconds, tz=_dt.timezone.utc)
    return t.strftime("%Y-%m-%dT%H:%M:%S.") + f"{t.microsecond // 1000:03d}Z"


def _rate(rows: int, seconds: float) -> float:
    return float(rows) / seconds if seconds > 0 else 0.0


def state_operator_progress(op: Any, metrics: dict[str, int]) -> dict[str, Any]:
    """One ``stateOperators`` entry of a stateful operator from its run metrics."""
    out: dict[str, Any] = {"operatorName": getattr(op, "operator_name", "symmetricHashJoin")}
    values = {name: 0 for name in _ORDER}
    for k, v in metrics.items():
        name = _STATE_METRICS.get(k)
        if name is not None:
            values[name] = int(v)
    out.update(values)
    n = op.state_info.num_partitions if op.state_info is not None else 0
    out["numShufflePartitions"] = n
    # summed over partitions: a join has four stores per partition (two per side, state
    # format 2), the other operators one
    per_partition = 4 if not hasattr(op, "operator_name") else 1
    out["numStateStoreInstances"] = int(metrics.get("numStateStoreInstances", n * per_partition))
    out["customMetrics"] = {k: int(v) for k, v in sorted(metrics.items())
                            if k not in _NOT_CUSTOM}
    return out


def make_progress(q: "MicroBatchExecution", p: dict[str, Any], start: float,
                  prev_start: float | None, durations: dict[str, int]) -> dict[str, Any]:
    """The progress report of the batch just run (``p`` holds what ``_run_batch`` gathered)."""
    execution = p["execution"]
    num_input = int(sum(p["rows"]))
    since_prev = start - prev_start if prev_start is not None else 0.0
    processing = durations.get("triggerExecution", 0) / 1000.0
    report: dict[str, Any] = {
        "id": q.id,
        "runId": q.run_id,
        "name": q.name,
        "timestamp": _iso(start),
        "batchId": q.batch_id,
        "batchDuration": durations.get("triggerExecution", 0),
        "numInputRows": num_input,
        "inputRowsPerSecond": _rate(num_input, since_prev),
        "processedRowsPerSecond": _rate(num_input, processing),
        "durationMs": {k: durations.get(k, 0) for k in (
            "addBatch", "commitOffsets", "getBatch", "latestOffset", "queryPlanning",
            "triggerExecution", "walCommit")},
    }
    if q.has_event_time:
        event: dict[str, str] = {}
        seen = next((s for s, _ in p["stats"] if s.count > 0), None)
        if seen is not None:
            event.update(seen.as_progress())
        event["watermark"] = format_timestamp_ms(p["watermark"])
        report["eventTime"] = event
    ops = []
    run_metrics = execution.run_metrics
    for op in execution.stateful_operators():
        m = run_metrics.get(op) if run_metrics is not None else None
        ops.append(state_operator_progress(op, m.as_dict() if m is not None else {}))
    report["stateOperators"] = ops
    sources = []
    for i, s in enumerate(q.sources):
        sources.append({
            "description": str(s),
            "startOffset": p["starts"][i],
            "endOffset": p["ends"][i],
            "latestOffset": p["ends"][i],
            "numInputRows": int(p["rows"][i]),
            "inputRowsPerSecond": _rate(int(p["rows"][i]), since_prev),
            "processedRowsPerSecond": _rate(int(p["rows"][i]), processing),
        })
    report["sources"] = sources
    report["sink"] = {"description": str(q.sink), "numOutputRows": int(p["output_rows"])}
    return report
