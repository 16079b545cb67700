"""Physical nodes of streaming queries (Spark's ``EventTimeWatermarkExec``,
``StreamingSymmetricHashJoinExec`` and ``StreamingRelationExec``), pure data like
:mod:`ember.physical.nodes`; the local runtime runs them with the operators of
:mod:`ember.runtime.local.operators.streaming`.

* :class:`EventTimeWatermarkExec` passes rows through; the runtime that runs it feeds the event
  times to an ``EventTimeStats`` (Spark's ``EventTimeStatsAccum``, an accumulator of the node's
  run: :meth:`ember.runtime.local.metrics.NodeMetrics.accumulator`), which the engine reads
  after the batch.
* :class:`StreamingSymmetricHashJoinExec` is a stream-stream join.  Each child must be
  hash-partitioned on exactly its join keys into the operator's number of state partitions
  (``StatefulOpClusteredDistribution``), so EnsureRequirements inserts
  ``Exchange hashpartitioning(keys, n), REQUIRED_BY_STATEFUL_OPERATOR``; partition ``i`` of both
  children meets the state of partition ``i`` (``ember.streaming.join``).  The micro-batch engine
  fills in ``state_info`` (checkpoint, run id, operator id, the batch's store version, the
  partitions fixed at the first run) and the two watermarks of the batch (late events: the
  previous batch's; eviction: the current one) before EnsureRequirements, as Spark's
  IncrementalExecution does.  The residual condition is split into left-only / right-only /
  post-join parts (:mod:`.join_conditions`) and the state cleanup predicates are derived from
  the watermarks (:mod:`.state_watermark`); the node prints both as Spark does::

      StreamingSymmetricHashJoin [k#1], [k#5], Inner, condition = [ leftOnly = null, rightOnly =
      null, both = null, full = null ], state info [ checkpoint = file:/ck/state, runId = ...,
      opId = 0, ver = 0, numPartitions = 2] stateStoreCkptIds = None, 0, 0, state cleanup [ left
      = null, right = null ], 2, Append

* :class:`StreamingRelationExec` is a stream that was never started (EXPLAIN of a streaming
  DataFrame); it cannot run.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import Any

from ember.expressions.base import AttributeReference, Expression
from ember.physical.nodes import (
    JoinExec,
    LeafExecNode,
    UnaryExecNode,
    _list,
    shuffled_join_partitioning,
)
from ember.physical.partitioning import (
    AllTuples,
    ClusteredDistribution,
    Distribution,
    Partitioning,
    StatefulOpClusteredDistribution,
)
from ember.physical.streaming.join_conditions import JoinConditionSplitPredicates
from ember.physical.streaming.state_watermark import (
    JoinStateKeyWatermarkPredicate,
    state_watermark_predicates,
    state_watermarks,
)
from ember.plans.logical.join_type import JoinType
from ember.plans.logical.nodes import watermark_output
from ember.trees import node

__all__ = ["StatefulOperatorStateInfo", "EventTimeWatermarkExec",
           "StreamingSymmetricHashJoinExec", "StreamingRelationExec", "StatefulOperatorExec",
           "StateStoreRestoreExec", "StateStoreSaveExec", "StreamingDeduplicateExec",
           "StreamingDeduplicateWithinWatermarkExec", "event_time_key"]


@dataclass(frozen=True, slots=True)
class StatefulOperatorStateInfo:
    """Where a stateful operator's state lives in one micro-batch (Spark's
    ``StatefulOperatorStateInfo``): ``<checkpoint>/state``, the run, the operator's id (its
    position among the query's stateful operators), the store version the batch opens (its
    batch id) and the number of state partitions."""

    checkpoint_location: str
    query_run_id: str
    operator_id: int
    store_version: int
    num_partitions: int

    def __str__(self) -> str:
        loc = self.checkpoint_location
        uri = loc if ":" in loc.split(os.sep)[0] else "file:" + os.path.abspath(loc)
        return (f"state info [ checkpoint = {uri}, runId = {self.query_run_id}, "
                f"opId = {self.operator_id}, ver = {self.store_version}, "
                f"numPartitions = {self.num_partitions}]")


class StatefulOperatorExec:
    """Marker of the stateful streaming operators (the engine assigns their state info and asks
    whether the next watermark needs a no-data batch)."""

    __slots__ = ()

    def should_run_another_batch(self, new_watermark_ms: int) -> bool:  # pragma: no cover
        raise NotImplementedError

    def output_watermark(self, input_watermark_ms: int) -> int | None:  # pragma: no cover
        """The watermark of the rows it emits given its input watermark (Spark's
        ``produceOutputWatermark``)."""
        raise NotImplementedError


@node
class EventTimeWatermarkExec(UnaryExecNode):
    """``EventTimeWatermark <id>, t#1: timestamp, 10 seconds``: rows unchanged; the runtime
    collects the event times seen (see the module docstring)."""

    event_time: AttributeReference
    delay_ms: int
    child: Any
    delay_text: str = field(default="", compare=False)
    node_id: str = field(default="", compare=False)

    def _compute_output(self) -> tuple[AttributeReference, ...]:
        return watermark_output(self.child.output, self.event_time.id, self.delay_ms)

    def simple_string(self) -> str:
        head = f"{self.node_id}, " if self.node_id else ""
        delay = self.delay_text or f"{self.delay_ms} milliseconds"
        return (f"EventTimeWatermark {head}{self.event_time.simple_string()}: "
                f"{self.event_time.data_type.simple_string()}, {delay}")


@node
class StreamingRelationExec(LeafExecNode):
    """A stream read outside of a started query: ``StreamingRelation memory, [a#1]``."""

    description: str
    output: tuple[AttributeReference, ...] = field()  # type: ignore[assignment]

    def simple_string(self) -> str:
        return f"StreamingRelation {self.description}, {_list(self.output)}"


@node
class StreamingSymmetricHashJoinExec(JoinExec, StatefulOperatorExec):
    """A stream-stream join (see the module docstring).  ``condition`` is the whole residual
    (every conjunct that is not an equi-join key pair); ``state_info`` and the watermarks are
    None until the micro-batch engine plans the node for a batch."""

    left_keys: tuple[Expression, ...]
    right_keys: tuple[Expression, ...]
    join_type: JoinType
    condition: Expression | None
    left: Any
    right: Any
    state_info: StatefulOperatorStateInfo | None = None
    watermark_for_late_events: int | None = None
    watermark_for_eviction: int | None = None
    state_format_version: int = 2
    #: the micro-batch's processing time (``batchTimestampMs``), for the join state TTL
    batch_timestamp_ms: int | None = None

    @property
    def existence_attr(self) -> None:
        return None

    # -- physical properties --------------------------------------------------------------------
    @property
    def output_partitioning(self) -> Partitioning:
        return shuffled_join_partitioning(self.join_type, self.left, self.right)

    @property
    def required_child_distribution(self) -> tuple[Distribution, ...]:
        if self.state_info is None:
            return (ClusteredDistribution(self.left_keys), ClusteredDistribution(self.right_keys))
        n = self.state_info.num_partitions
        return (StatefulOpClusteredDistribution(self.left_keys, n),
                StatefulOpClusteredDistribution(self.right_keys, n))

    # -- condition split and state cleanup (.join_conditions, .state_watermark) -----------------
    def condition_split(self) -> JoinConditionSplitPredicates:
        """The residual split into left-only, right-only and post-join parts (10.2)."""
        return JoinConditionSplitPredicates.of(self.condition, self.left.output,
                                               self.right.output)

    def state_watermark_predicates(self) -> tuple[Any, Any]:
        """(left, right) state cleanup predicates for the eviction watermark (10.4)."""
        return state_watermark_predicates(self.left.output, self.right.output, self.left_keys,
                                          self.right_keys, self.condition,
                                          self.watermark_for_eviction)

    def has_state_cleanup(self) -> bool:
        left, right = self.state_watermark_predicates()
        return left is not None or right is not None

    def output_watermark(self, input_watermark_ms: int) -> int | None:
        """``min(input, left state watermark, right state watermark)``: rows still held in
        state may join later, so the output can be as old as the oldest of them."""
        left, right = state_watermarks(self.left.output, self.right.output, self.left_keys,
                                       self.right_keys, self.condition, input_watermark_ms)
        return min(w for w in (left, right, input_watermark_ms) if w is not None)

    def should_run_another_batch(self, new_watermark_ms: int) -> bool:
        """Spark's ``shouldRunAnotherBatch``: the watermark moved past the one this batch
        evicted with, and some side has a state cleanup predicate."""
        return (self.watermark_for_eviction is not None
                and new_watermark_ms > self.watermark_for_eviction
                and self.has_state_cleanup())

    # -- display --------------------------------------------------------------------------------
    def simple_string(self) -> str:
        def cleanup(side: str, pred: Any) -> str:
            # Spark's JoinStateWatermarkPredicates.toString
            if pred is None:
                return f"{side} = null"
            kind = "key" if isinstance(pred, JoinStateKeyWatermarkPredicate) else "value"
            return f"{side} {kind} predicate: {pred}"

        parts = [_list(self.left_keys), _list(self.right_keys), self._type_string(),
                 f"condition = {self.condition_split()}"]
        info = "state info [ N/A ]" if self.state_info is None else str(self.state_info)
        parts.append(info + " stateStoreCkptIds = None")
        for w in (self.watermark_for_late_events, self.watermark_for_eviction):
            if w is not None:
                parts.append(str(w))
        left, right = self.state_watermark_predicates()
        parts.append(f"state cleanup [ {cleanup('left', left)}, {cleanup('right', right)} ]")
        parts += [str(self.state_format_version), "Append"]
        return f"{self.node_name} " + ", ".join(parts)


# ---------------------------------------------------------------------------------------------
# Streaming aggregation and deduplication (Spark's StatefulAggregationStrategy and
# StreamingDeduplicationStrategy)


def event_time_key(keys: tuple[Expression, ...]) -> AttributeReference | None:
    """The first key carrying a watermark delay (the event-time column or a window over it):
    the column the state is evicted on (Spark's ``WatermarkSupport.watermarkExpression``)."""
    return next((k for k in keys if isinstance(k, AttributeReference)
                 and k.watermark_delay_ms is not None), None)


def _stateful_distribution(keys: tuple[Expression, ...],
                           state_info: StatefulOperatorStateInfo | None) -> Distribution:
    if not keys:
        return AllTuples()
    if state_info is None:
        return ClusteredDistribution(keys)
    return StatefulOpClusteredDistribution(keys, state_info.num_partitions)


def _state_parts(name: str, keys: tuple[Expression, ...],
                 state_info: StatefulOperatorStateInfo | None) -> list[str]:
    info = "state info [ N/A ]" if state_info is None else str(state_info)
    return [f"{name} {_list(keys)}", info + " stateStoreCkptIds = None"]


class _KeyedStateWriter(StatefulOperatorExec):
    """What the keyed state writers (StateStoreSave, the deduplications) share: clustered as
    their state, output watermark = input watermark (Spark's ``StateStoreWriter`` default)."""

    __slots__ = ()

    @property
    def required_child_distribution(self) -> tuple[Distribution, ...]:
        return (_stateful_distribution(self.keys, self.state_info),)  # type: ignore[attr-defined]

    def output_watermark(self, input_watermark_ms: int) -> int | None:
        return input_watermark_ms

    def _watermark_passed(self, new_watermark_ms: int) -> bool:
        evict = self.watermark_for_eviction  # type: ignore[attr-defined]
        return evict is not None and new_watermark_ms > evict

    def _watermark_parts(self) -> list[str]:
        return [str(w) for w in (self.watermark_for_late_events,  # type: ignore[attr-defined]
                                 self.watermark_for_eviction)  # type: ignore[attr-defined]
                if w is not None]


@node
class StateStoreRestoreExec(UnaryExecNode):
    """``StateStoreRestore [k#1], state info [...] stateStoreCkptIds = None, 2``: each input row
    (one per key, partially merged) followed by the key's aggregation buffers from the state
    of the previous batch, for the merge above to combine (Spark's ``StateStoreRestoreExec``).
    It shares its ``StateStoreSaveExec``'s state (operator id)."""

    keys: tuple[Expression, ...]
    child: Any
    state_info: StatefulOperatorStateInfo | None = None
    state_format_version: int = 2

    @property
    def required_child_distribution(self) -> tuple[Distribution, ...]:
        return (_stateful_distribution(self.keys, self.state_info),)

    def simple_string(self) -> str:
        parts = _state_parts("StateStoreRestore", self.keys, self.state_info)
        return ", ".join(parts + [str(self.state_format_version)])


@node
class StateStoreSaveExec(UnaryExecNode, _KeyedStateWriter):
    """``StateStoreSave [k#1], state info [...] stateStoreCkptIds = None, Append, 0, 1000, 2``
    (Spark's ``StateStoreSaveExec``): stores each key's merged buffers and emits per output
    mode -- complete: every key in state; update: the keys this batch changed, then evicts the
    keys the watermark passed; append: only the keys the watermark passed (their final
    values), removed from the state.  Rows of keys at or below the late-events watermark are
    dropped first (append and update), counted as ``numRowsDroppedByWatermark``."""

    keys: tuple[Expression, ...]
    child: Any
    state_info: StatefulOperatorStateInfo | None = None
    output_mode: str | None = None
    watermark_for_late_events: int | None = None
    watermark_for_eviction: int | None = None
    state_format_version: int = 2

    operator_name = "stateStoreSave"

    def should_run_another_batch(self, new_watermark_ms: int) -> bool:
        """Spark's: append or update mode, and the watermark moved past the eviction one."""
        return self.output_mode in ("append", "update") and self._watermark_passed(
            new_watermark_ms)

    def simple_string(self) -> str:
        parts = _state_parts("StateStoreSave", self.keys, self.state_info)
        if self.output_mode is not None:
            parts.append(self.output_mode.capitalize())
        return ", ".join(parts + self._watermark_parts() + [str(self.state_format_version)])


@node
class StreamingDeduplicateExec(UnaryExecNode, _KeyedStateWriter):
    """``StreamingDeduplicate [k#1, t#2-T10000ms], state info [...] stateStoreCkptIds = None,
    0, 1000`` (Spark's ``StreamingDeduplicateExec``): the rows whose keys the state has not
    seen, each key stored; with the event-time column among the keys, keys the watermark
    passed are evicted.  Rows at or below the late-events watermark are dropped first."""

    keys: tuple[Expression, ...]
    child: Any
    state_info: StatefulOperatorStateInfo | None = None
    watermark_for_late_events: int | None = None
    watermark_for_eviction: int | None = None

    operator_name = "dedupe"
    display_name = "StreamingDeduplicate"

    def should_run_another_batch(self, new_watermark_ms: int) -> bool:
        return self._watermark_passed(new_watermark_ms)

    def simple_string(self) -> str:
        return ", ".join(_state_parts(self.display_name, self.keys, self.state_info)
                         + self._watermark_parts())


@node
class StreamingDeduplicateWithinWatermarkExec(StreamingDeduplicateExec):
    """``StreamingDeduplicateWithinWatermark [k#1], ...`` (Spark's
    ``StreamingDeduplicateWithinWatermarkExec``): as :class:`StreamingDeduplicateExec`, but
    each key is stored with its expiry, the first row's event time plus the watermark delay,
    and evicted once the watermark reaches it."""

    operator_name = "dedupeWithinWatermark"
    display_name = "StreamingDeduplicateWithinWatermark"
