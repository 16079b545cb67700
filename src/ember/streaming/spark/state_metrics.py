"""The rows a stream-stream join holds per side on the Spark runtime, read from Spark's checkpoint.

On the local runtime every progress report's join entry has ``numTotalStateRowsLeft`` /
``numTotalStateRowsRight`` in ``customMetrics``.  On Spark, progress is Spark's: its operator
(``transformWithStateInPandasExec``) counts ValueState entries, one blob per Ember store and
state partition, not the join's rows.  The per-side counts are read instead from the committed
state of a batch with Spark's State Data Source (``format("statestore")``, options
``operatorId`` / ``batchId`` / ``stateVarName``) on the driver: the ``left-keyToNumValues`` and
``right-keyToNumValues`` ValueStates of every state partition (Arrow IPC streams of ``key`` /
``value`` structs, :class:`~ember.streaming.spark.worker.SparkStateStore`), their ``value``
counts summed per side.  That is a Spark job over the checkpoint (about a second), so it is an
explicit call (:func:`state_rows_per_side`), not a field of every progress report.

The join operator is found with Spark's ``state-metadata`` source (the operator whose state
variables include ``left-keyToNumValues``); the batch is the latest in the commit log unless
one is given.  A batch whose state versions were purged (older than
``spark.sql.streaming.minBatchesToRetain``) cannot be read: Spark's error.
"""

from __future__ import annotations

import json
import os
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from ember.errors import AnalysisError
from ember.streaming.state.join_state import state_store_names

__all__ = ["state_rows_per_side", "committed_batches", "join_operator_id", "count_rows"]

SIDES = ("left", "right")


def committed_batches(checkpoint: str) -> list[int]:
    """The batch ids in the checkpoint's commit log, ascending."""
    commits = os.path.join(checkpoint, "commits")
    if not os.path.isdir(commits):
        return []
    return sorted(int(n) for n in os.listdir(commits) if n.isdigit())


def join_operator_id(spark: Any, checkpoint: str) -> int:
    """The id of the query's stream-stream join operator (the transformWithState operator
    holding Ember's join stores), from Spark's ``state-metadata`` source."""

    marker = state_store_names("left")[0]
    try:
        rows = (spark.read.format("state-metadata").load(checkpoint)
                .select("operatorId", "operatorProperties").collect())
    except Exception as e:  # noqa: BLE001 - Spark's refusal, reported as Ember's
        raise AnalysisError(f"Cannot read the state metadata of {checkpoint}: "
                            f"{_first_line(e)}") from None
    ids = sorted({int(r[0]) for r in rows if _has_state_variable(r[1], marker)})
    if not ids:
        raise AnalysisError("The query has no stream-stream join state in its checkpoint "
                            f"({checkpoint})")
    if len(ids) > 1:
        raise AnalysisError(f"The query has several stream-stream joins (operators {ids}): "
                            "give operator_id")
    return ids[0]


def _has_state_variable(properties: str | None, name: str) -> bool:
    if not properties:
        return False
    try:
        variables = json.loads(properties).get("stateVariables", [])
    except ValueError:
        return False
    return any(v.get("stateName") == name for v in variables)


def count_rows(blobs: pa.Array) -> int:
    """The rows held by one side: the ``value`` counts of its ``keyToNumValues`` blobs (one
    IPC stream per state partition) summed."""
    total = 0
    for i in range(len(blobs)):  # one blob per state partition
        if not blobs[i].is_valid:
            continue
        table = pa.ipc.open_stream(blobs[i].as_buffer()).read_all()
        counts = table.column("value").combine_chunks().field(0)
        total += int(pc.sum(counts).as_py() or 0)
    return total


def state_rows_per_side(spark: Any, checkpoint: str, batch_id: int | None = None,
                        operator_id: int | None = None) -> dict[str, int]:
    """``{"left": n, "right": m}``: the rows the join holds per side after ``batch_id`` (by
    default the last committed batch), as the local runtime's ``numTotalStateRowsLeft`` /
    ``numTotalStateRowsRight`` report them."""
    from pyspark.sql import functions as SF


    batches = committed_batches(checkpoint)
    if batch_id is None:
        if not batches:
            raise AnalysisError("The query has not committed a batch yet: no state to read")
        batch_id = batches[-1]
    elif int(batch_id) not in batches:
        raise AnalysisError(f"Batch {batch_id} is not committed in {checkpoint} "
                            f"(committed: {batches[:1] + batches[-1:]})")
    if operator_id is None:
        operator_id = join_operator_id(spark, checkpoint)
    frames = []
    for i, side in enumerate(SIDES):
        frames.append(spark.read.format("statestore")
                      .option("operatorId", int(operator_id))
                      .option("batchId", int(batch_id))
                      .option("stateVarName", state_store_names(side)[0])
                      .load(checkpoint)
                      .select(SF.lit(i).alias("side"), SF.col("value.data").alias("data")))
    try:
        table = frames[0].unionAll(frames[1]).toArrow()
    except Exception as e:  # noqa: BLE001 - Spark's refusal (e.g. a purged version)
        raise AnalysisError(f"Cannot read the join state of batch {batch_id} from "
                            f"{checkpoint}: {_first_line(e)}") from None
    side = table.column("side").to_numpy()
    data = table.column("data").combine_chunks()
    return {name: count_rows(data.take(pa.array(np.flatnonzero(side == i))))
            for i, name in enumerate(SIDES)}


def _first_line(e: BaseException) -> str:
    return next((ln for ln in str(e).splitlines() if ln.strip()), type(e).__name__)
