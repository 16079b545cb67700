"""The rate source (Spark's ``RateStreamMicroBatchStream``): ``session.readStream.format("rate")``.

Rows ``(timestamp: timestamp, value: bigint)``; ``value`` counts up from 0. Options (Spark's):
``rowsPerSecond`` (default 1), ``rampUpTime`` (default ``0s``; seconds before reaching full
speed, Spark's time string) and ``numPartitions`` (default: ``spark.default.parallelism``, else
the number of cores).

Offsets are Spark's: the whole seconds elapsed since the source's creation time (a bare long in
the offset log). The creation time (ms) is kept in the source's metadata log, file ``0`` under
``<checkpoint>/sources/<n>/`` holding ``v1`` and the number, so a restarted query keeps its time
base. A batch ``(start, end]`` holds the values ``valueAtSecond(start) .. valueAtSecond(end) - 1``;
value ``v`` gets the timestamp ``creation + start s + round((v - first) * msPerValue)`` where
``msPerValue`` spreads the batch's seconds evenly over its values (Java's ``Math.round``). Rows come
partition by partition (partition ``p`` holds ``first + p, first + p + numPartitions, ...``), the
order in which Spark's memory sink receives them. Generation is vectorized (NumPy) and depends on
the offsets only, so a re-run batch yields the same rows.
"""

from __future__ import annotations

import os
import re
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import numpy as np
import pyarrow as pa

from ember import types as T
from ember.conf import SPARK_DEFAULT_PARALLELISM
from ember.errors import AnalysisError, ExecutionError

if TYPE_CHECKING:  # pragma: no cover
    from ember.session import Session

__all__ = ["RateStreamSource", "value_at_second", "RATE_SCHEMA", "time_string_as_ms"]

RATE_SCHEMA = T.StructType((T.StructField("timestamp", T.TIMESTAMP, True),
                            T.StructField("value", T.LONG, True)))

_LONG_MAX = (1 << 63) - 1
_VERSION = 1

_TIME_UNITS_MS = {"us": 0.001, "ms": 1, "s": 1000, "m": 60_000, "min": 60_000, "h": 3_600_000,
                  "d": 86_400_000}


def time_string_as_ms(value: str, default_unit: str = "ms") -> int:
    """Spark's ``JavaUtils.timeStringAsMs`` / ``timeStringAsSec`` input (``"10s"``, ``"5 min"``,
    ``"7d"``; a bare number is in ``default_unit``), in milliseconds."""
    m = re.fullmatch(r"\s*(-?[0-9]+)\s*([a-z]+)?\s*", str(value).lower())
    if not m or (m.group(2) and m.group(2) not in _TIME_UNITS_MS):
        raise AnalysisError(
            f"Invalid time string: {value}. Time must be specified as seconds (s), milliseconds "
            "(ms), microseconds (us), minutes (m or min), hour (h), or day (d). E.g. 50s, 100ms, "
            "or 250us.")
    return int(int(m.group(1)) * _TIME_UNITS_MS[m.group(2) or default_unit])


def value_at_second(seconds: int, rows_per_second: int, ramp_up_seconds: int) -> int:
    """The end value (exclusive) emitted by second ``seconds`` (Spark's ``valueAtSecond``): the
    speed grows linearly by ``rowsPerSecond / (rampUpTime + 1)`` per second during the ramp-up,
    then stays at ``rowsPerSecond``."""
    delta = rows_per_second // (ramp_up_seconds + 1)
    if seconds <= ramp_up_seconds:
        if seconds % 2 == 1:
            return (seconds + 1) // 2 * delta * seconds
        return seconds // 2 * delta * (seconds + 1)
    ramp = value_at_second(ramp_up_seconds, rows_per_second, ramp_up_seconds)
    return ramp + (seconds - ramp_up_seconds) * rows_per_second


def _options(options: dict[str, Any] | None) -> dict[str, str]:
    return {str(k).lower(): str(v) for k, v in (options or {}).items()}


def _positive_long(opts: dict[str, str], key: str, default: int) -> int:
    raw = opts.get(key.lower())
    if raw is None:
        return default
    try:
        v = int(raw)
    except ValueError:
        raise AnalysisError(f"Invalid value '{raw}'. The option '{key}' must be a number") from None
    if v <= 0:
        raise AnalysisError(f"Invalid value '{v}'. The option '{key}' must be positive")
    return v


class RateStreamSource:
    """Spark's rate source: ``rowsPerSecond`` rows per second, deterministic per offset range.

    >>> src = RateStreamSource(session, None, {"rowsPerSecond": "10"}, None,
    ...                        metadata_path="/tmp/ckpt/sources/0")          # doctest: +SKIP
    >>> src.get_batch(None, 2).num_rows                                        # doctest: +SKIP
    20
    """

    def __init__(self, session: "Session", schema: T.StructType | None,
                 options: dict[str, Any] | None, path: str | None = None, *,
                 metadata_path: str | None = None,
                 clock: Callable[[], int] | None = None) -> None:
        if schema is not None and [(f.name, f.data_type) for f in schema.fields] != [
                (f.name, f.data_type) for f in RATE_SCHEMA.fields]:
            raise AnalysisError("RateStreamProvider source does not support user-specified schema.",
                                error_class="_LEGACY_ERROR_TEMP_2242")
        opts = _options(options)
        self.session = session
        self.schema = RATE_SCHEMA
        self.rows_per_second = _positive_long(opts, "rowsPerSecond", 1)
        ramp = opts.get("rampuptime")
        self.ramp_up_seconds = time_string_as_ms(ramp, "s") // 1000 if ramp is not None else 0
        if self.ramp_up_seconds < 0:
            raise AnalysisError(f"Invalid value '{self.ramp_up_seconds}'. The option 'rampUpTime' "
                                "must not be negative")
        self.num_partitions = _positive_long(opts, "numPartitions", self._default_parallelism())
        self._max_seconds = _LONG_MAX // self.rows_per_second
        if self.ramp_up_seconds > self._max_seconds:
            raise ExecutionError(
                f"Integer overflow. Max offset with {self.rows_per_second} rowsPerSecond is "
                f"{self._max_seconds}, but 'rampUpTimeSeconds' is {self.ramp_up_seconds}.")
        self._clock = clock or (lambda: int(time.time() * 1000))
        self.metadata_path = metadata_path
        self.creation_time_ms = self._creation_time()
        self._last_time_ms = self.creation_time_ms

    def _default_parallelism(self) -> int:
        n = SPARK_DEFAULT_PARALLELISM.read(getattr(self.session, "sql_conf", None))
        return (os.cpu_count() or 1) if n is None else n

    def _creation_time(self) -> int:
        """The persisted creation time (metadata log batch 0), written on first use."""
        if self.metadata_path is None:
            return self._clock()
        log0 = os.path.join(self.metadata_path, "0")
        if os.path.exists(log0):
            with open(log0, encoding="utf-8") as f:
                version, _, body = f.read().partition("\n")
            if version != f"v{_VERSION}" or not body.strip():
                raise ExecutionError(f"Log file was malformed: failed to detect the log file "
                                     f"version line. ({log0})")
            return int(body.strip())
        now = self._clock()
        os.makedirs(self.metadata_path, exist_ok=True)
        tmp = os.path.join(self.metadata_path, f".0.{os.getpid()}.tmp")
        with open(tmp, "w", encoding="utf-8") as f:
            f.write(f"v{_VERSION}\n{now}")
        os.replace(tmp, log0)
        return now

    # -- Source API ----------------------------------------------------------------------------
    def latest_offset(self) -> int:
        """Seconds elapsed since the creation time (Spark's ``LongOffset``); 0 at the start, so
        the first batch is empty, as in Spark."""
        now = self._clock()
        if self._last_time_ms < now:
            self._last_time_ms = now
        return (self._last_time_ms - self.creation_time_ms) // 1000

    def get_batch(self, start: Any, end: Any) -> pa.Table:
        """Rows for the seconds ``(start, end]`` (``start`` None means 0)."""
        start_s = _seconds(start) if start is not None else 0
        end_s = _seconds(end)
        if start_s > end_s:
            raise ExecutionError(f"startSeconds({start_s}) > endSeconds({end_s})")
        if end_s > self._max_seconds:
            raise ExecutionError(
                f"Integer overflow. Max offset with {self.rows_per_second} rowsPerSecond is "
                f"{self._max_seconds}, but it's {end_s} now.")
        # a restarted query re-runs old batches: never move the clock back below them
        self._last_time_ms = max(self._last_time_ms, end_s * 1000 + self.creation_time_ms)
        first = value_at_second(start_s, self.rows_per_second, self.ramp_up_seconds)
        stop = value_at_second(end_s, self.rows_per_second, self.ramp_up_seconds)
        schema = pa.schema([pa.field(f.name, f.data_type.to_arrow()) for f in RATE_SCHEMA.fields])
        if first == stop:
            return schema.empty_table()
        local_start_ms = self.creation_time_ms + start_s * 1000
        ms_per_value = (end_s - start_s) * 1000 / (stop - first)
        # One arange per partition (numPartitions is small): Spark's partition-major order.
        values = np.concatenate([np.arange(first + p, stop, self.num_partitions, dtype=np.int64)
                                 for p in range(self.num_partitions)])
        rel = np.floor((values - first).astype(np.float64) * ms_per_value + 0.5).astype(np.int64)
        micros = (rel + local_start_ms) * 1000
        return pa.Table.from_arrays([pa.array(micros, pa.int64()).cast(schema.field(0).type),
                                     pa.array(values, pa.int64())], schema=schema)

    def commit(self, end: Any) -> None:
        """Nothing to release: rows are generated from the offsets."""

    def stop(self) -> None:
        """Nothing to close."""

    def __repr__(self) -> str:
        return (f"RateStreamV2[rowsPerSecond={self.rows_per_second}, "
                f"rampUpTimeSeconds={self.ramp_up_seconds}, numPartitions={self.num_partitions}")


def _seconds(offset: Any) -> int:
    """A rate offset: Spark's bare long (also accepted as ``{"seconds": n}`` or a JSON string)."""
    if isinstance(offset, dict):
        offset = offset.get("seconds", offset.get("offset"))
    return int(offset)
