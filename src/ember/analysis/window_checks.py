"""The type checks of window frames and specifications (Spark's
``SpecifiedWindowFrame.checkInputDataTypes`` and ``WindowSpecDefinition.checkInputDataTypes``),
reported by CheckAnalysis as ``DATATYPE_MISMATCH.<sub-class>``:

- a frame boundary that is not a constant: ``SPECIFIED_WINDOW_FRAME_WITHOUT_FOLDABLE``;
- a ROWS boundary that is not an INT, a RANGE boundary that is not numeric or an interval:
  ``SPECIFIED_WINDOW_FRAME_UNACCEPTED_TYPE``;
- ``UNBOUNDED FOLLOWING`` as the lower or ``UNBOUNDED PRECEDING`` as the upper bound:
  ``SPECIFIED_WINDOW_FRAME_INVALID_BOUND``;
- two value bounds of different types: ``SPECIFIED_WINDOW_FRAME_DIFF_TYPES``; a lower bound
  greater than the upper: ``SPECIFIED_WINDOW_FRAME_WRONG_COMPARISON``;
- a RANGE frame with value bounds (or not the whole partition) without ORDER BY:
  ``RANGE_FRAME_WITHOUT_ORDER``; with several ORDER BY expressions: ``RANGE_FRAME_MULTI_ORDER``;
  whose bound type the order type does not support (``DATE`` takes INT and year-month or day
  intervals, ``TIMESTAMP`` intervals, anything else its own type): ``RANGE_FRAME_INVALID_TYPE``.

The window functions check their own arguments (``check_input_types`` of ``NTile``, ``NthValue``,
``Lead`` / ``Lag`` in ``ember.expressions.windows``).

The analyzer names a window column only once its specification passes these checks
(:func:`window_spec_pending`), as Spark's ``WindowSpecDefinition.resolved`` requires: the name
then shows the casts WindowFrameCoercion gave the bounds.
"""

from __future__ import annotations

import pyarrow as pa

from ember import types as T
from ember.expressions.base import Expression, bind_references
from ember.expressions.common import TypeCheckFailure, sql_type
from ember.expressions.predicates import GreaterThan
from ember.expressions.windows import (
    FrameType,
    SpecialFrameBoundary,
    SpecifiedWindowFrame,
    UnboundedFollowing,
    UnboundedPreceding,
    WindowExpression,
    WindowSpecDefinition,
)
from ember.expressions.misc import to_pretty_sql

__all__ = ["check_window_types", "window_spec_pending"]

_RANGE_EXPECTED = '("NUMERIC" or "INTERVAL DAY TO SECOND" or "INTERVAL YEAR TO MONTH" or "INTERVAL")'


def _is_interval(t: T.DataType) -> bool:
    return "Interval" in type(t).__name__


def _q(e: Expression) -> str:
    return f'"{to_pretty_sql(e)}"'


def _foldable(e: Expression) -> bool:
    """Spark's ``foldable`` for a bound: a literal, or a deterministic expression of foldable
    children (``UnaryMinus(3)``, ``1 + 1``, a cast of one)."""
    if e.foldable:
        return True
    kids = e.children
    return bool(kids) and e.deterministic and all(_foldable(c) for c in kids)


def _check_boundary(frame: SpecifiedWindowFrame, b: Expression, location: str
                    ) -> TypeCheckFailure | None:
    if isinstance(b, SpecialFrameBoundary):
        return None
    if not _foldable(b):
        return TypeCheckFailure(
            f"Window frame {location} bound {_q(b)} is not a literal.",
            "SPECIFIED_WINDOW_FRAME_WITHOUT_FOLDABLE",
            {"location": location, "expression": _q(b)})
    t = b.data_type
    if frame.frame_type is FrameType.ROWS:
        ok, expected = isinstance(t, T.IntegerType), '"INT"'
    else:
        ok, expected = t.is_numeric or _is_interval(t), _RANGE_EXPECTED
    if ok:
        return None
    return TypeCheckFailure(
        f"The data type of the {location} bound {sql_type(t)} does not match the expected data "
        f"type {expected}.", "SPECIFIED_WINDOW_FRAME_UNACCEPTED_TYPE",
        {"location": location, "exprType": sql_type(t), "expectedType": expected})


def _value(e: Expression):
    batch = pa.record_batch({"_": pa.array([0], pa.int8())})
    return bind_references(e, ()).eval(batch)[0]


def check_frame(frame: SpecifiedWindowFrame) -> TypeCheckFailure | None:
    """Spark's ``SpecifiedWindowFrame.checkInputDataTypes``."""
    lower, upper = frame.lower, frame.upper
    for b, where in ((lower, "lower"), (upper, "upper")):
        failure = _check_boundary(frame, b, where)
        if failure is not None:
            return failure
    if isinstance(lower, UnboundedFollowing) or isinstance(upper, UnboundedPreceding):
        return TypeCheckFailure(
            f"Window frame upper bound {_q(upper)} does not follow the lower bound {_q(lower)}.",
            "SPECIFIED_WINDOW_FRAME_INVALID_BOUND", {"upper": _q(upper), "lower": _q(lower)})
    if isinstance(lower, SpecialFrameBoundary) or isinstance(upper, SpecialFrameBoundary):
        return None
    if lower.data_type != upper.data_type:
        lt, ut = sql_type(lower.data_type), sql_type(upper.data_type)
        return TypeCheckFailure(
            f"Window frame bounds {_q(lower)} and {_q(upper)} do not have the same type: "
            f"{lt} <> {ut}.", "SPECIFIED_WINDOW_FRAME_DIFF_TYPES",
            {"lower": _q(lower), "upper": _q(upper), "lowerType": lt, "upperType": ut})
    if _value(GreaterThan(lower, upper)).as_py():
        return TypeCheckFailure(
            "The lower bound of a window frame must be less than or equal to the upper bound.",
            "SPECIFIED_WINDOW_FRAME_WRONG_COMPARISON", {"comparison": "less than or equal"})
    return None


def _valid_range_type(order: T.DataType, bound: T.DataType) -> bool:
    """Spark's ``WindowSpecDefinition.isValidFrameType``: a DATE order takes INT, year-month
    and ``INTERVAL DAY`` bounds, a TIMESTAMP order intervals, any other order its own type."""
    if isinstance(order, T.DateType):
        return isinstance(bound, (T.IntegerType, T.YearMonthIntervalType)) or (
            isinstance(bound, T.DayTimeIntervalType) and bound.start_field == bound.end_field == 0)
    if isinstance(order, (T.TimestampType, T.TimestampNTZType)):
        return _is_interval(bound)
    return order == bound


def check_spec(spec: WindowSpecDefinition) -> TypeCheckFailure | None:
    """Spark's ``WindowSpecDefinition.checkInputDataTypes`` (the frame must be specified)."""
    f = spec.frame_specification
    if not isinstance(f, SpecifiedWindowFrame) or f.frame_type is not FrameType.RANGE:
        return None
    order = spec.order_spec
    if not f.is_unbounded and not order:
        return TypeCheckFailure("A range window frame cannot be used in an unordered window "
                                "specification.", "RANGE_FRAME_WITHOUT_ORDER", {})
    if not f.is_value_bound:
        return None
    if len(order) > 1:
        text = ",".join(o.simple_string() for o in order)
        return TypeCheckFailure(
            "A range window frame with value boundaries cannot be used in a window "
            f"specification with multiple order by expressions: {text}.",
            "RANGE_FRAME_MULTI_ORDER", {"orderSpec": text})
    bound = next(b for b in (f.lower, f.upper) if not isinstance(b, SpecialFrameBoundary))
    if order and not _valid_range_type(order[0].data_type, bound.data_type):
        ot, bt = sql_type(order[0].data_type), sql_type(bound.data_type)
        return TypeCheckFailure(
            f"The data type {ot} used in the order specification does not support the data "
            f"type {bt} which is used in the range frame.", "RANGE_FRAME_INVALID_TYPE",
            {"orderSpecType": ot, "valueBoundaryType": bt})
    return None


def check_window_types(x: Expression) -> TypeCheckFailure | None:
    """The failure of a window frame or specification node ``x`` (whose children
    are resolved), else None; any other node: None."""
    if isinstance(x, SpecifiedWindowFrame):
        return check_frame(x)
    if isinstance(x, WindowSpecDefinition):
        return check_spec(x)
    return None


def window_spec_pending(e: Expression) -> bool:
    """Whether ``e`` holds a window whose specification is not complete yet: a frame still to
    default or to coerce, or a check failing (the analyzer names such a column later, or
    CheckAnalysis reports it)."""

    def pending(x: Expression) -> bool:
        if not isinstance(x, WindowExpression):
            return False
        spec = x.window_spec
        if not isinstance(spec, WindowSpecDefinition) or not isinstance(
                spec.frame_specification, SpecifiedWindowFrame):
            return True
        if not all(c.resolved for c in spec.children):
            return True
        return check_frame(spec.frame_specification) is not None or check_spec(spec) is not None

    return e.exists(pending)
