"""Event-time windows: ``window(t, "10 minutes"[, "5 minutes"[, start]])`` (Spark's
``TimeWindow``), a ``struct<start: timestamp, end: timestamp>`` per row.

:class:`TimeWindow` is what ``functions.window`` builds; it cannot be evaluated.  The analyzer's
TimeWindowing rule (:mod:`ember.analysis.rules.time_windowing`) replaces it by a ``window``
column computed below the operator that uses it, with :class:`TimeWindowBounds` (window number
``index`` of each row: ``lastStart = t - ((t - startTime) mod slide)``, then
``start = lastStart - index * slide``, ``end = start + windowDuration``, all in microseconds as
Spark's ``PreciseTimestampConversion`` arithmetic) and, for sliding windows whose duration is not
a multiple of the slide, :class:`TimeWindowContains` (``start <= t < end``).  Both are
vectorized over the batch (NumPy on the microsecond values).
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from ember import types as T
from ember.calendar_interval import parse_interval
from ember.errors import AnalysisError, InternalError
from ember.expressions.base import Expression
from ember.expressions.common import to_array
from ember.trees import node

__all__ = ["TimeWindow", "TimeWindowBounds", "TimeWindowContains", "WINDOW_TYPE",
           "window_durations"]

#: Spark's window column type (fields nullable, the struct itself never NULL)
WINDOW_TYPE = T.StructType((T.StructField("start", T.TIMESTAMP, True),
                            T.StructField("end", T.TIMESTAMP, True)))


def _micros(text: str, what: str) -> int:
    months, days, micros = parse_interval(text)
    if months:
        raise AnalysisError(f"Intervals greater than a month is not supported ({text}).",
                            error_class="_LEGACY_ERROR_TEMP_3231")
    return days * 86_400_000_000 + micros


def window_durations(window: str, slide: str | None, start: str | None) -> tuple[int, int, int]:
    """``(windowDuration, slideDuration, startTime)`` in microseconds, checked as Spark's
    ``TimeWindow.checkInputDataTypes``."""
    w = _micros(window, "windowDuration")
    s = w if slide is None else _micros(slide, "slideDuration")
    st = 0 if start is None else _micros(start, "startTime")
    if w <= 0:
        raise AnalysisError(f"The window duration ({w}) must be greater than 0.",
                            error_class="DATATYPE_MISMATCH.VALUE_OUT_OF_RANGE")
    if s <= 0:
        raise AnalysisError(f"The slide duration ({s}) must be greater than 0.",
                            error_class="DATATYPE_MISMATCH.VALUE_OUT_OF_RANGE")
    if s > w:
        raise AnalysisError(f"The slide duration ({s}) must be less than or equal to the "
                            f"windowDuration ({w}).", error_class="DATATYPE_MISMATCH")
    if abs(st) >= s:
        raise AnalysisError(f"The absolute value of start time ({st}) must be less than the "
                            f"slideDuration ({s}).", error_class="DATATYPE_MISMATCH")
    return w, s, st


def _time_micros(arr: pa.Array) -> tuple[np.ndarray, np.ndarray]:
    """(microsecond values, validity) of a timestamp array."""
    valid = np.asarray(arr.is_valid().to_numpy(zero_copy_only=False), dtype=bool)
    v = pc.fill_null(arr.cast(pa.timestamp("us")).cast(pa.int64()), 0)
    return np.asarray(v.to_numpy(zero_copy_only=False), dtype=np.int64), valid


@node
class TimeWindow(Expression):
    """``window(time_column, windowDuration, slideDuration, startTime)`` before TimeWindowing
    (durations in microseconds)."""

    time_column: Expression
    window_duration: int
    slide_duration: int
    start_time: int

    @property
    def data_type(self) -> T.DataType:
        return WINDOW_TYPE

    @property
    def nullable(self) -> bool:
        return False

    def check_input_types(self) -> str | None:
        if not isinstance(self.time_column.data_type, T.TimestampType):
            return (f'The first parameter of window requires the "TIMESTAMP" type, however '
                    f'"{self.time_column.sql()}" has the type '
                    f'"{self.time_column.data_type.simple_string().upper()}".')
        return None

    def eval(self, batch: pa.RecordBatch) -> pa.Array:
        raise InternalError("window() must be replaced by the analyzer's TimeWindowing rule")

    def simple_string(self) -> str:
        return (f"window({self.time_column.simple_string()}, {self.window_duration}, "
                f"{self.slide_duration}, {self.start_time})")

    def sql(self) -> str:
        # Spark's TimeWindowing replaces the call by its ``window`` column before the name of
        # an unaliased SQL ``window(t, ...)`` is generated: the column is named ``window``
        return "window"


@node
class TimeWindowBounds(Expression):
    """Window number ``index`` (0 = the last one starting at or before the time) of each row's
    time, as the window struct."""

    time_column: Expression
    window_duration: int
    slide_duration: int
    start_time: int
    index: int

    @property
    def data_type(self) -> T.DataType:
        return WINDOW_TYPE

    @property
    def nullable(self) -> bool:
        return False

    def eval(self, batch: pa.RecordBatch) -> pa.Array:
        arr = to_array(self.time_column.eval(batch), batch.num_rows)
        t, valid = _time_micros(arr)
        rem = np.mod(t - self.start_time, self.slide_duration)  # floor mod: never negative
        start = t - rem - self.index * self.slide_duration
        end = start + self.window_duration
        mask = ~valid
        ts = pa.timestamp("us", tz="UTC")
        starts = pa.array(start, type=pa.int64(), mask=mask).cast(ts)
        ends = pa.array(end, type=pa.int64(), mask=mask).cast(ts)
        return pa.StructArray.from_arrays([starts, ends], fields=list(WINDOW_TYPE.to_arrow()))

    def simple_string(self) -> str:
        return (f"window_bounds({self.time_column.simple_string()}, {self.window_duration}, "
                f"{self.slide_duration}, {self.start_time}, {self.index})")

    def sql(self) -> str:
        return (f"window_bounds({self.time_column.sql()}, {self.window_duration}, "
                f"{self.slide_duration}, {self.start_time}, {self.index})")


@node
class TimeWindowContains(Expression):
    """``window.start <= time AND time < window.end`` (NULL when the time is NULL)."""

    time_column: Expression
    window: Expression

    @property
    def data_type(self) -> T.DataType:
        return T.BOOLEAN

    def eval(self, batch: pa.RecordBatch) -> pa.Array:
        n = batch.num_rows
        t, valid = _time_micros(to_array(self.time_column.eval(batch), n))
        w = to_array(self.window.eval(batch), n)
        s, _ = _time_micros(pc.struct_field(w, [0]))
        e, _ = _time_micros(pc.struct_field(w, [1]))
        return pa.array((s <= t) & (t < e), type=pa.bool_(), mask=~valid)

    def simple_string(self) -> str:
        w = self.window.simple_string()
        t = self.time_column.simple_string()
        return f"(({t} >= {w}.start) AND ({t} < {w}.end))"

    def sql(self) -> str:
        w, t = self.window.sql(), self.time_column.sql()
        return f"(({t} >= {w}.start) AND ({t} < {w}.end))"
