"""Event-time watermarks: delay parsing, per-batch event-time statistics
and the global watermark (Spark's ``EventTimeWatermark.getDelayMs``, ``EventTimeStats`` and
``WatermarkTracker``).

* ``withWatermark(col, "10 seconds")`` parses its delay as Spark's ``IntervalUtils
  .fromIntervalString`` (``[interval] <n> <unit> ...``, units year .. microsecond, a fraction
  only for seconds) and converts it with 31-day months (``IntervalUtils.getDuration``); both in
  :mod:`ember.calendar_interval`, re-exported here.
* Each ``EventTimeWatermarkExec`` of a micro-batch feeds an :class:`EventTimeStats` with the
  batch's event times in milliseconds (vectorized per Arrow batch; a NULL event time counts as 0,
  as Spark's ``getLong`` of a NULL does; a window struct contributes its ``end``).
* After the batch, :meth:`WatermarkTracker.update` turns each operator's maximum into a
  candidate ``max - delay`` that only moves forward (an operator that never saw data counts as
  0), then picks the global watermark with ``spark.sql.streaming.multipleWatermarkPolicy``
  (``min``, the default, or ``max``); the global watermark never moves back.  The new value is
  what the *next* batch uses (recorded in its offset log entry).

Operators are identified by their position in a pre-order walk of the executed plan, as Spark
indexes them; the plan shape is the same in every batch, so the positions are stable.
"""

from __future__ import annotations

import datetime as _dt
import threading
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from ember.calendar_interval import delay_ms, interval_string, parse_interval
from ember.conf import STREAM_MULTIPLE_WATERMARK_POLICY
from ember.errors import AnalysisError

__all__ = ["parse_interval", "interval_string", "delay_ms", "EventTimeStats", "WatermarkTracker",
           "format_timestamp_ms", "event_time_millis"]


def format_timestamp_ms(ms: int) -> str:
    """Spark's progress timestamps: ISO 8601 in UTC with milliseconds
    (``2024-01-01T00:01:00.000Z``)."""
    t = _dt.datetime(1970, 1, 1, tzinfo=_dt.timezone.utc) + _dt.timedelta(milliseconds=ms)
    return t.strftime("%Y-%m-%dT%H:%M:%S.") + f"{t.microsecond // 1000:03d}Z"


# ---------------------------------------------------------------------------------------------
# Per-batch event-time statistics


def event_time_millis(column: pa.Array | pa.ChunkedArray) -> np.ndarray:
    """The event times of ``column`` in milliseconds (Java's ``micros / 1000``, truncated toward
    zero), NULL as 0; a window struct gives its ``end``."""
    if isinstance(column, pa.ChunkedArray):
        column = column.combine_chunks() if column.num_chunks != 1 else column.chunk(0)
    if pa.types.is_struct(column.type):
        column = pc.struct_field(column, [column.type.get_field_index("end")])
    micros = pc.fill_null(column.cast(pa.timestamp("us")).cast(pa.int64()), 0)
    v = micros.to_numpy(zero_copy_only=False)
    return np.where(v >= 0, v // 1000, -((-v) // 1000))


@dataclass
class EventTimeStats:
    """Spark's ``EventTimeStats``: maximum, minimum, running average and count of the event
    times (ms) one watermark operator saw in a batch.  ``add`` takes a whole array; thread safe
    (partitions run in parallel)."""

    max: int = -(1 << 63)
    min: int = (1 << 63) - 1
    avg: float = 0.0
    count: int = 0

    def __post_init__(self) -> None:
        self._lock = threading.Lock()

    def add(self, millis: np.ndarray) -> None:
        n = len(millis)
        if not n:
            return
        mx, mn, mean = int(millis.max()), int(millis.min()), float(millis.mean())
        with self._lock:
            self.max = max(self.max, mx)
            self.min = min(self.min, mn)
            total = self.count + n
            self.avg += (mean - self.avg) * n / total
            self.count = total

    def as_progress(self) -> dict[str, str]:
        """The ``eventTime`` entries of a progress report (avg, max, min), ISO formatted."""
        return {"avg": format_timestamp_ms(int(self.avg)), "max": format_timestamp_ms(self.max),
                "min": format_timestamp_ms(self.min)}


# ---------------------------------------------------------------------------------------------
# The global watermark


class WatermarkTracker:
    """Per-operator and global event-time watermarks of one query (Spark's
    ``WatermarkTracker``).

    >>> t = WatermarkTracker("min")
    >>> s = EventTimeStats(); s.add(np.array([10_000]))
    >>> t.update([(s, 2_000)]); t.current_watermark
    8000
    """

    def __init__(self, policy: str = "min") -> None:
        p = str(policy).strip().lower()
        if p not in ("min", "max"):
            raise AnalysisError(
                f"Invalid value for '{STREAM_MULTIPLE_WATERMARK_POLICY.key}': '{policy}'. Valid values "
                "are 'min' and 'max'", error_class="INVALID_CONF_VALUE")
        self.policy = p
        #: operator position -> its watermark (ms)
        self.operator_watermarks: dict[int, int] = {}
        self._global = 0
        self._lock = threading.Lock()

    @property
    def current_watermark(self) -> int:
        return self._global

    def set_watermark(self, ms: int) -> None:
        """Restore the global watermark from a checkpoint."""
        with self._lock:
            self._global = int(ms)

    def update(self, operators: Sequence[tuple[EventTimeStats, int]] | Iterable[
            tuple[EventTimeStats, int]]) -> None:
        """After a batch: ``operators`` are ``(stats, delay_ms)`` of every watermark operator
        of the executed plan, in plan order."""
        ops = list(operators)
        if not ops:
            return
        with self._lock:
            for i, (stats, delay) in enumerate(ops):
                if stats.count > 0:
                    candidate = stats.max - delay
                    prev = self.operator_watermarks.get(i)
                    if prev is None or candidate > prev:
                        self.operator_watermarks[i] = candidate
                elif i not in self.operator_watermarks:
                    self.operator_watermarks[i] = 0
            values = self.operator_watermarks.values()
            chosen = min(values) if self.policy == "min" else max(values)
            if chosen > self._global:
                self._global = chosen
