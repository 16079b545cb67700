"""Window expressions (Catalyst's ``windowExpressions.scala``): frames, window specifications,
``WindowExpression`` and the window functions that are not ordinary aggregates.

A window expression is ``WindowExpression(function, WindowSpecDefinition(partition, order,
frame))``; the function is a :class:`WindowFunction` below or an ``AggregateExpression`` (every
aggregate function works over a window, evaluated through the aggregate protocol).  These are
data: the ``Window`` plan node's operator evaluates them (``ember.runtime.local.operators.window``).

Frame boundaries follow Spark's representation: a special boundary (``UNBOUNDED PRECEDING``,
``UNBOUNDED FOLLOWING``, ``CURRENT ROW``) or a foldable value expression whose value is the
offset from the current row (ROWS) or from the current row's order key (RANGE): ``3 PRECEDING``
is ``UnaryMinus(Literal(3))`` as Spark's AstBuilder builds it (printed ``-3``, SQL ``3
PRECEDING``), ``3 FOLLOWING`` is ``Literal(3)``; any other expression prints ``<sql>
FOLLOWING``, so ``lag``'s frame ``Literal(-1)`` prints ``-1 FOLLOWING`` as in Spark.  RANGE
offsets on DATE/TIMESTAMP order keys are interval literals (``UnaryMinus(INTERVAL '1' DAY)``).
"""

from __future__ import annotations

from enum import Enum
from typing import ClassVar

import pyarrow as pa

from ember import types as T
from ember.expressions.arithmetic import UnaryMinus
from ember.expressions.interval_arithmetic import IntervalNegate
from ember.expressions.base import (
    bind_references,
    Expression,
    LeafExpression,
    Literal,
    SortOrder,
    Unevaluable,
    is_resolved,
)
from ember.expressions.common import TypeCheckFailure, sql_type
from ember.expressions.foldable import is_foldable
from ember.expressions.misc import to_pretty_sql
from ember.trees import node


# ---------------------------------------------------------------------------------------------
# Frames


class FrameType(Enum):
    """Spark's ``FrameType``: ``RowFrame`` (SQL ``ROWS``) or ``RangeFrame`` (``RANGE``)."""

    ROWS = "RowFrame"
    RANGE = "RangeFrame"

    @property
    def sql(self) -> str:
        return "ROWS" if self is FrameType.ROWS else "RANGE"

    def __str__(self) -> str:
        return self.value


class SpecialFrameBoundary(Unevaluable, LeafExpression):
    """Spark's ``SpecialFrameBoundary``: ``UNBOUNDED PRECEDING``, ``UNBOUNDED FOLLOWING`` or
    ``CURRENT ROW`` (printed ``unboundedpreceding$()`` ... as Spark prints its case objects)."""

    __slots__ = ()
    sql_text: ClassVar[str] = ""

    @property
    def data_type(self) -> T.DataType:
        return T.NullType()

    @property
    def nullable(self) -> bool:
        return False

    @property
    def resolved(self) -> bool:
        return True

    def simple_string(self) -> str:
        return type(self).__name__.lower() + "$()"

    def sql(self) -> str:
        return self.sql_text


@node
class UnboundedPreceding(SpecialFrameBoundary):
    sql_text: ClassVar[str] = "UNBOUNDED PRECEDING"


@node
class UnboundedFollowing(SpecialFrameBoundary):
    sql_text: ClassVar[str] = "UNBOUNDED FOLLOWING"


@node
class CurrentRow(SpecialFrameBoundary):
    sql_text: ClassVar[str] = "CURRENT ROW"


class WindowFrame(Expression):
    """Base of frames (Spark's ``WindowFrame``)."""

    __slots__ = ()

    @property
    def data_type(self) -> T.DataType:
        return T.NullType()

    @property
    def foldable(self) -> bool:
        return False


@node
class UnspecifiedFrame(WindowFrame, Unevaluable, LeafExpression):
    """The frame of a window specification without a frame clause, before the analysis fills
    in Spark's default (ResolveWindowFrame)."""

    @property
    def resolved(self) -> bool:
        return True

    def simple_string(self) -> str:
        return "unspecifiedframe$()"

    def sql(self) -> str:
        return ""


def boundary_sql(e: Expression) -> str:
    """Spark's ``SpecifiedWindowFrame.boundarySql``: a special boundary's SQL, ``n PRECEDING``
    for ``UnaryMinus(n)`` (``IntervalNegate`` for an interval: Spark's ``UnaryMinus`` of one),
    else ``<sql> FOLLOWING``."""
    if isinstance(e, SpecialFrameBoundary):
        return e.sql()
    if isinstance(e, (UnaryMinus, IntervalNegate)):
        return f"{e.child.sql()} PRECEDING"
    return f"{e.sql()} FOLLOWING"


@node
class SpecifiedWindowFrame(WindowFrame):
    """``ROWS|RANGE BETWEEN lower AND upper`` (Spark's ``SpecifiedWindowFrame``); ``lower`` and
    ``upper`` are special boundaries or foldable offsets (see the module docstring).  The frame
    checks (``DATATYPE_MISMATCH.SPECIFIED_WINDOW_FRAME_*``, ``RANGE_FRAME_*``) are the
    analysis'."""

    frame_type: FrameType
    lower: Expression
    upper: Expression

    @property
    def is_unbounded(self) -> bool:
        """``UNBOUNDED PRECEDING AND UNBOUNDED FOLLOWING``: the whole partition."""
        return isinstance(self.lower, UnboundedPreceding) and isinstance(
            self.upper, UnboundedFollowing)

    @property
    def is_value_bound(self) -> bool:
        """Some boundary is an offset (not a special boundary)."""
        return not (isinstance(self.lower, SpecialFrameBoundary)
                    and isinstance(self.upper, SpecialFrameBoundary))

    def simple_string(self) -> str:
        return (f"specifiedwindowframe({self.frame_type}, {self.lower.simple_string()}, "
                f"{self.upper.simple_string()})")

    def sql(self) -> str:
        return (f"{self.frame_type.sql} BETWEEN {boundary_sql(self.lower)} AND "
                f"{boundary_sql(self.upper)}")


def rows_frame(lower: Expression, upper: Expression) -> SpecifiedWindowFrame:
    return SpecifiedWindowFrame(FrameType.ROWS, lower, upper)


def range_frame(lower: Expression, upper: Expression) -> SpecifiedWindowFrame:
    return SpecifiedWindowFrame(FrameType.RANGE, lower, upper)


#: ``ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW``: the frame of the ranking functions
#: (Spark's ``AggregateWindowFunction.frame``).
RUNNING_ROWS_FRAME = rows_frame(UnboundedPreceding(), CurrentRow())


# ---------------------------------------------------------------------------------------------
# Specifications


@node
class WindowSpecDefinition(Unevaluable):
    """``(PARTITION BY ... ORDER BY ... frame)`` (Spark's ``WindowSpecDefinition``)."""

    partition_spec: tuple[Expression, ...]
    order_spec: tuple[SortOrder, ...]
    frame_specification: Expression

    @property
    def data_type(self) -> T.DataType:
        return T.NullType()

    @property
    def resolved(self) -> bool:
        return (all(is_resolved(c) for c in self.children)
                and isinstance(self.frame_specification, SpecifiedWindowFrame))

    @property
    def frame(self) -> SpecifiedWindowFrame:
        f = self.frame_specification
        assert isinstance(f, SpecifiedWindowFrame), f
        return f

    def simple_string(self) -> str:
        args = ", ".join(c.simple_string() for c in self.children)
        return f"windowspecdefinition({args})"

    def sql(self) -> str:
        parts = []
        if self.partition_spec:
            parts.append("PARTITION BY " + ", ".join(e.sql() for e in self.partition_spec))
        if self.order_spec:
            parts.append("ORDER BY " + ", ".join(e.sql() for e in self.order_spec))
        parts.append(self.frame_specification.sql())
        return "(" + " ".join(p for p in parts if p) + ")"


@node
class WindowSpecReference(Unevaluable, LeafExpression):
    """``OVER w``: a reference to a ``WINDOW w AS (...)`` definition before analysis."""

    name: str

    @property
    def resolved(self) -> bool:
        return False

    def simple_string(self) -> str:
        return f"windowspecreference({self.name})"

    def sql(self) -> str:
        return self.name


@node
class WindowExpression(Unevaluable):
    """``function OVER spec`` (Spark's ``WindowExpression``); its type and nullability are the
    function's."""

    window_function: Expression
    window_spec: Expression

    @property
    def resolved(self) -> bool:
        return Expression.resolved.fget(self)  # type: ignore[attr-defined, no-any-return]

    @property
    def data_type(self) -> T.DataType:
        return self.window_function.data_type

    @property
    def nullable(self) -> bool:
        return self.window_function.nullable

    @property
    def foldable(self) -> bool:
        return False

    @property
    def spec(self) -> WindowSpecDefinition:
        s = self.window_spec
        assert isinstance(s, WindowSpecDefinition), s
        return s

    def simple_string(self) -> str:
        return f"{self.window_function.simple_string()} {self.window_spec.simple_string()}"

    def sql(self) -> str:
        return f"{self.window_function.sql()} OVER {self.window_spec.sql()}"


# ---------------------------------------------------------------------------------------------
# Window functions


class WindowFunction(Unevaluable):
    """Base of the functions that exist only over a window (Spark's ``WindowFunction``).
    ``frame`` is the frame the function requires (``UnspecifiedFrame``: the specification's,
    or Spark's default); ResolveWindowFrame reads it."""

    __slots__ = ()

    @property
    def resolved(self) -> bool:
        return Expression.resolved.fget(self)  # type: ignore[attr-defined, no-any-return]

    @property
    def frame(self) -> WindowFrame:
        return UnspecifiedFrame()

    @property
    def foldable(self) -> bool:
        return False


class RankingWindowFunction(WindowFunction):
    """Spark's ``AggregateWindowFunction`` family without an input (``RowNumberLike`` /
    ``RankLike`` / ``SizeBasedWindowFunction`` / ``NTile``): the frame is ``ROWS BETWEEN
    UNBOUNDED PRECEDING AND CURRENT ROW`` unless the subclass says otherwise."""

    __slots__ = ()
    #: The function's name (``row_number``; the rank functions' SQL is its upper case).
    function_name: ClassVar[str] = ""

    @property
    def frame(self) -> WindowFrame:
        return RUNNING_ROWS_FRAME

    @property
    def pretty_name(self) -> str:
        return self.function_name

    @property
    def data_type(self) -> T.DataType:
        return T.IntegerType()

    @property
    def nullable(self) -> bool:
        return False


@node
class RowNumber(RankingWindowFunction):
    """``row_number()``: 1, 2, 3 ... within the partition."""

    function_name: ClassVar[str] = "row_number"


@node
class CumeDist(RankingWindowFunction):
    """``cume_dist()``: (rows up to and including the current row's peers) / partition size;
    its frame is ``RANGE BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW`` (Spark's ``CumeDist``)."""

    function_name: ClassVar[str] = "cume_dist"

    @property
    def frame(self) -> WindowFrame:
        return range_frame(UnboundedPreceding(), CurrentRow())

    @property
    def data_type(self) -> T.DataType:
        return T.DoubleType()


def _q(e: Expression) -> str:
    return f'"{to_pretty_sql(e)}"'


def _constant(e: Expression):
    """The value of a foldable argument (evaluated on a one-row batch)."""
    batch = pa.record_batch({"_": pa.array([0], pa.int8())})
    return bind_references(e, ()).eval(batch)[0].as_py()


def _non_foldable(name: str, e: Expression) -> TypeCheckFailure:
    return TypeCheckFailure(
        f"the input {name} should be a foldable {sql_type(e.data_type)} expression; however, got "
        f"{_q(e)}.", "NON_FOLDABLE_INPUT",
        {"inputName": f"`{name}`", "inputType": sql_type(e.data_type), "inputExpr": _q(e)})


def _out_of_range(name: str, upper: int, value: str) -> TypeCheckFailure:
    return TypeCheckFailure(
        f"The {name} must be between (0, {upper}] (current value = {value}).",
        "VALUE_OUT_OF_RANGE",
        {"exprName": name, "valueRange": f"(0, {upper}]", "currentValue": value})


@node
class NTile(RankingWindowFunction):
    """``ntile(n)``: the bucket 1..n of the row; the first ``size % n`` buckets get one row more
    (Spark's ``NTile``)."""

    function_name: ClassVar[str] = "ntile"
    buckets: Expression

    def simple_string(self) -> str:
        return f"ntile({self.buckets.simple_string()})"

    def sql(self) -> str:
        return f"ntile({self.buckets.sql()})"

    def check_input_types(self) -> str | None:
        """Spark's ``NTile.checkInputDataTypes``: the buckets a constant INT above 0."""
        b = self.buckets
        if not is_foldable(b):
            return _non_foldable("buckets", b)
        if not isinstance(b.data_type, T.IntegerType):
            return TypeCheckFailure(
                f"The first parameter requires the \"INT\" type, however {_q(b)} has the type "
                f"{sql_type(b.data_type)}.", "UNEXPECTED_INPUT_TYPE",
                {"paramIndex": "first", "requiredType": '"INT"', "inputSql": _q(b),
                 "inputType": sql_type(b.data_type)})
        value = _constant(b)
        if value is None or value <= 0:
            return _out_of_range("buckets", (1 << 31) - 1, str(value))
        return None


class RankLike(RankingWindowFunction):
    """Spark's ``RankLike``: the children are the window's order expressions (filled in by
    ResolveWindowOrder); printed ``rank(b#1)``, SQL ``RANK()``."""

    __slots__ = ()

    def sql(self) -> str:
        return f"{self.function_name.upper()}()"

    def with_order(self, order: tuple[Expression, ...]) -> "RankLike":
        return self.copy(order=order)  # type: ignore[call-arg]


@node
class Rank(RankLike):
    """``rank()``: 1 + the number of rows before the current row's peer group."""

    function_name: ClassVar[str] = "rank"
    order: tuple[Expression, ...] = ()


@node
class DenseRank(RankLike):
    """``dense_rank()``: 1 + the number of distinct peer groups before the current row's."""

    function_name: ClassVar[str] = "dense_rank"
    order: tuple[Expression, ...] = ()


@node
class PercentRank(RankLike):
    """``percent_rank()``: (rank - 1) / (partition size - 1), 0 for a one-row partition."""

    function_name: ClassVar[str] = "percent_rank"
    order: tuple[Expression, ...] = ()

    @property
    def data_type(self) -> T.DataType:
        return T.DoubleType()


class OffsetWindowFunction(WindowFunction):
    """Spark's ``OffsetWindowFunction``: the value of ``input`` at a row ``offset`` away, or
    ``default``; with ``ignore_nulls`` the offset counts non-NULL values only."""

    __slots__ = ()
    input: Expression
    ignore_nulls: bool

    @property
    def data_type(self) -> T.DataType:
        return self.input.data_type


class FrameLessOffsetWindowFunction(OffsetWindowFunction):
    """``lead`` / ``lag`` (Spark's ``FrameLessOffsetWindowFunction``): the frame is the single
    row ``ROWS BETWEEN offset AND offset`` relative to the current row, whatever the
    specification says."""

    __slots__ = ()
    function_name: ClassVar[str] = ""
    default: Expression

    @property
    def row_offset(self) -> Expression:
        """The signed offset: ``lead``'s as given, ``lag``'s negated (folded as Spark folds
        ``UnaryMinus(inputOffset)``)."""
        raise NotImplementedError

    @property
    def frame(self) -> WindowFrame:
        return rows_frame(self.row_offset, self.row_offset)

    @property
    def nullable(self) -> bool:
        d = self.default
        return (isinstance(d, Literal) and d.value is None) or d.nullable or self.input.nullable

    @property
    def pretty_name(self) -> str:
        return self.function_name

    def simple_string(self) -> str:
        return (f"{self.function_name}({self.input.simple_string()}, "
                f"{self.row_offset.simple_string()}, {self.default.simple_string()})")

    def check_input_types(self) -> str | None:
        """Spark's ``FrameLessOffsetWindowFunction.checkInputDataTypes``: a constant offset."""
        offset = self.row_offset
        return None if is_foldable(offset) else _non_foldable("offset", offset)


@node
class Lead(FrameLessOffsetWindowFunction):
    """``lead(input, offset, default) [IGNORE NULLS]``."""

    function_name: ClassVar[str] = "lead"
    input: Expression
    offset: Expression
    default: Expression
    ignore_nulls: bool = False

    @property
    def row_offset(self) -> Expression:
        return self.offset


@node
class Lag(FrameLessOffsetWindowFunction):
    """``lag(input, offset, default) [IGNORE NULLS]``; ``offset`` is the user's (positive
    = earlier rows), ``row_offset`` its negation."""

    function_name: ClassVar[str] = "lag"
    input: Expression
    offset: Expression
    default: Expression
    ignore_nulls: bool = False

    @property
    def row_offset(self) -> Expression:
        o = self.offset
        if isinstance(o, Literal) and isinstance(o.value, int):
            return Literal(-o.value, o.dtype)
        return UnaryMinus(o)


@node
class NthValue(OffsetWindowFunction):
    """``nth_value(input, offset) [IGNORE NULLS]``: the ``offset``-th row (1-based) of the
    frame, counting non-NULL values only with IGNORE NULLS; NULL when the frame is shorter
    (Spark's ``NthValue``; its frame is the specification's)."""

    input: Expression
    offset: Expression
    ignore_nulls: bool = False

    @property
    def pretty_name(self) -> str:
        return "nth_value"

    @property
    def nullable(self) -> bool:
        return True

    def simple_string(self) -> str:
        return (f"nth_value({self.input.simple_string()}, {self.offset.simple_string()}, "
                f"{str(self.ignore_nulls).lower()})")

    def sql(self) -> str:
        s = f"nth_value({self.input.sql()}, {self.offset.sql()})"
        return s + " ignore nulls" if self.ignore_nulls else s

    def check_input_types(self) -> str | None:
        """Spark's ``NthValue.checkInputDataTypes``: a constant offset above 0."""
        if not is_foldable(self.offset):
            return _non_foldable("offset", self.offset)
        value = _constant(self.offset)
        if isinstance(value, int) and value <= 0:
            return _out_of_range("offset", (1 << 63) - 1, f"{value}L")
        return None
