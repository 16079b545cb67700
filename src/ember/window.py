"""PySpark's ``pyspark.sql.Window`` / ``WindowSpec`` for Ember.

>>> from ember.window import Window
>>> from ember import functions as F
>>> w = Window.partitionBy("dept").orderBy(F.col("salary").desc())
>>> F.rank().over(w).expr.sql()
'RANK() OVER (PARTITION BY dept ORDER BY salary DESC NULLS LAST )'

A ``WindowSpec`` is immutable: each method returns a new one.  ``rowsBetween(start, end)`` and
``rangeBetween`` take offsets from the current row (``-1`` the row / value before), with
``Window.unboundedPreceding``, ``Window.unboundedFollowing`` and ``Window.currentRow`` for the
special boundaries, as Spark's ``WindowSpec`` maps them: a ROWS offset must fit an INT
(``INVALID_BOUNDARY.START`` / ``.END`` otherwise); a RANGE offset is a BIGINT, cast to the order
key's type by the analyzer.  Without a frame, the analyzer gives Spark's default.
"""

from __future__ import annotations

from typing import Any

from ember import types as T
from ember.column import _col_or_name
from ember.errors import AnalysisError
from ember.expressions.base import Expression, Literal, SortOrder
from ember.expressions.windows import (
    CurrentRow,
    FrameType,
    SpecifiedWindowFrame,
    UnboundedFollowing,
    UnboundedPreceding,
    UnspecifiedFrame,
    WindowSpecDefinition,
)

__all__ = ["Window", "WindowSpec"]

_LONG_MIN = -(1 << 63)
_LONG_MAX = (1 << 63) - 1
_INT_MIN = -(1 << 31)
_INT_MAX = (1 << 31) - 1


def _flatten(cols: tuple[Any, ...]) -> list[Any]:
    if len(cols) == 1 and isinstance(cols[0], (list, tuple)):
        return list(cols[0])
    return list(cols)


def _invalid_boundary(which: str, value: int) -> AnalysisError:
    special = f"{_LONG_MIN}L" if which == "start" else f"{_LONG_MAX}L"
    return AnalysisError(
        f"The boundary `{which}` is invalid: {value}L. Expected the value is '0', '{special}', "
        f"'[{_INT_MIN}, {_INT_MAX}]'.", error_class=f"INVALID_BOUNDARY.{which.upper()}",
        parameters={"boundary": f"`{which}`", "invalidValue": f"{value}L",
                    "longMinValue" if which == "start" else "longMaxValue": special,
                    "intMinValue": str(_INT_MIN), "intMaxValue": str(_INT_MAX)})


class WindowSpec:
    """Partitioning, ordering and frame of a window (build with :class:`Window`)."""

    __slots__ = ("_partition", "_order", "_frame")

    def __init__(self, partition: tuple[Expression, ...] = (),
                 order: tuple[SortOrder, ...] = (), frame: Expression | None = None) -> None:
        self._partition = partition
        self._order = order
        self._frame = frame if frame is not None else UnspecifiedFrame()

    def partitionBy(self, *cols: Any) -> "WindowSpec":  # noqa: N802
        """The partitioning columns (names or Columns)."""
        return WindowSpec(tuple(_col_or_name(c) for c in _flatten(cols)), self._order,
                          self._frame)

    def orderBy(self, *cols: Any) -> "WindowSpec":  # noqa: N802
        """The ordering columns; a name or plain Column sorts ascending, NULLs first."""
        order = []
        for c in _flatten(cols):
            e = _col_or_name(c)
            order.append(e if isinstance(e, SortOrder) else SortOrder(e, True, None))
        return WindowSpec(self._partition, tuple(order), self._frame)

    def rowsBetween(self, start: int, end: int) -> "WindowSpec":  # noqa: N802
        """A ROWS frame from ``start`` to ``end`` rows around the current row (inclusive)."""
        return WindowSpec(self._partition, self._order, SpecifiedWindowFrame(
            FrameType.ROWS, _rows_bound(start, "start"), _rows_bound(end, "end")))

    def rangeBetween(self, start: int, end: int) -> "WindowSpec":  # noqa: N802
        """A RANGE frame from the current order value + ``start`` to + ``end``."""
        return WindowSpec(self._partition, self._order, SpecifiedWindowFrame(
            FrameType.RANGE, _range_bound(start), _range_bound(end)))

    @property
    def expr(self) -> WindowSpecDefinition:
        """The window specification this stands for."""
        return WindowSpecDefinition(self._partition, self._order, self._frame)

    def __repr__(self) -> str:
        return f"WindowSpec<{self.expr.simple_string()}>"


def _special(value: int) -> Expression | None:
    """PySpark's thresholds: at or below ``Long.MinValue`` unbounded preceding, at or above
    ``Long.MaxValue`` unbounded following, 0 the current row."""
    if value == 0:
        return CurrentRow()
    if value <= _LONG_MIN:
        return UnboundedPreceding()
    if value >= _LONG_MAX:
        return UnboundedFollowing()
    return None


def _rows_bound(value: int, which: str) -> Expression:
    special = _special(int(value))
    if special is not None:
        return special
    if not _INT_MIN <= value <= _INT_MAX:
        raise _invalid_boundary(which, int(value))
    return Literal(int(value), T.INT)


def _range_bound(value: int) -> Expression:
    special = _special(int(value))
    return special if special is not None else Literal(int(value), T.LONG)


class Window:
    """Static builders of :class:`WindowSpec` (PySpark's ``Window``).

    >>> Window.partitionBy("a").orderBy("b").rowsBetween(Window.unboundedPreceding, 0)
    ... # doctest: +ELLIPSIS
    WindowSpec<...>
    """

    unboundedPreceding: int = _LONG_MIN
    unboundedFollowing: int = _LONG_MAX
    currentRow: int = 0

    @staticmethod
    def partitionBy(*cols: Any) -> WindowSpec:  # noqa: N802
        return WindowSpec().partitionBy(*cols)

    @staticmethod
    def orderBy(*cols: Any) -> WindowSpec:  # noqa: N802
        return WindowSpec().orderBy(*cols)

    @staticmethod
    def rowsBetween(start: int, end: int) -> WindowSpec:  # noqa: N802
        return WindowSpec().rowsBetween(start, end)

    @staticmethod
    def rangeBetween(start: int, end: int) -> WindowSpec:  # noqa: N802
        return WindowSpec().rangeBetween(start, end)

