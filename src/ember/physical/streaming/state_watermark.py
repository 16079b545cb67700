"""State watermark predicates of a stream-stream join (Spark's ``StreamingJoinHelper``).

``state_watermark_predicates`` is Spark's ``getStateWatermarkPredicates``: per side at most one
eviction predicate, with ``W`` the watermark for eviction (ms):

1. key predicate, when a join key on the left (else on the right) is a column carrying watermark
   metadata: both sides evict the keys whose key at that ordinal is ``<= W`` (window structs:
   their ``end``);
2. otherwise, when the side has a watermark column, a value predicate
   ``eventTime <= S`` with ``S = state_value_watermark(this side, other side, condition, W)``;
3. otherwise none (the side's state is never evicted).

``state_value_watermark`` is Spark's ``StreamingJoinHelper.getStateValueWatermark``: for each
conjunct ``a < b`` / ``a <= b`` (-1 ms) / ``a > b`` / ``a >= b`` (-1 ms) it rewrites ``lhs < rhs``
as ``lhs - rhs < 0``, flattens that into signed terms in microseconds (descending through
``+``, ``-``, unary minus, timestamp +/- interval nodes and numeric/timestamp casts; columns are
terms, numbers are seconds x 10^6, day-time intervals their microseconds, calendar intervals
``days x 86400 x 10^6 + micros`` and none with months, timestamp literals epoch micros x 10^6),
drops duplicate terms (Catalyst's ``ExpressionSet``), requires exactly one term on this side's
columns and with a minus sign, substitutes ``W x 1000`` for the other side's columns that carry
watermark metadata and returns ``trunc(sum / 1000)``; the minimum over the conjuncts wins.  A
remaining term over a column without a watermark (``ln + rn >= 6`` solved for the left state
leaves ``-rn``) cannot be evaluated: Spark's ``eval`` of the unbound attribute throws and
``getStateWatermarkSafely`` turns that into no candidate.  Any other shape gives none.  Every
inequality conjunct of the condition takes part, also one without time columns: a right-only
``rx > 0`` left in the condition of a RIGHT OUTER join reads ``0 < rx`` and gives the right
state the candidate 0, so that state is never evicted (as Spark 4.3 does, checked against it in
``tests/streaming``).

Timestamp +/- interval nodes are recognised by Spark's names (``TimeAdd``,
``TimestampAddInterval``, ``TimeSub``, ``DatetimeSub``) with their ``start``/``interval``
(or ``left``/``right``) fields, so the helper works with whichever node the analyzer builds.

Late rows (10.3): a side's rows whose event-time column (its first watermarked column) is
``<= watermarkForLateEvents`` are dropped before joining; NULL event times are kept.  A side
with two distinct event-time columns fails with MULTIPLE_EVENT_TIME_COLUMNS unless
``spark.sql.streaming.statefulOperator.allowMultiple`` is false (then the first one is used).
"""

from __future__ import annotations

import datetime as _dt
import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from ember import types as T
from ember.errors import AnalysisError
from ember.expressions.base import (
    AttributeReference, BoundReference, Expression, Literal, split_conjuncts,
)
from ember.expressions.arithmetic import Add, Subtract, UnaryMinus, UnaryPositive
from ember.expressions.cast import Cast
from ember.expressions.intervals import IntervalLiteral
from ember.expressions.predicates import GreaterThan, GreaterThanOrEqual, LessThan, LessThanOrEqual

__all__ = [
    "JoinStateKeyWatermarkPredicate", "JoinStateValueWatermarkPredicate",
    "state_watermark_predicates", "state_value_watermark", "state_watermarks",
    "event_time_column", "watermark_mask", "join_key_ordinal_for_watermark",
]

_MICROS_PER_DAY = 86_400_000_000


# ---------------------------------------------------------------------------------------------
# Predicates


def watermark_mask(arr: pa.Array | pa.ChunkedArray, watermark_ms: int) -> np.ndarray:
    """``arr <= watermark`` (Spark's ``watermarkExpression``) as a NumPy mask: a timestamp
    column is compared in microseconds, a window struct by its ``end`` (field 1); NULL is not
    TRUE."""
    if isinstance(arr, pa.ChunkedArray):
        arr = arr.combine_chunks() if arr.num_chunks != 1 else arr.chunk(0)
    if pa.types.is_struct(arr.type):
        valid = arr.is_valid()
        arr = pc.if_else(valid, arr.field(1), pa.nulls(len(arr), arr.type.field(1).type))
    if pa.types.is_timestamp(arr.type):
        unit = arr.type.unit
        arr = arr.cast(pa.timestamp("us", arr.type.tz)) if unit != "us" else arr
        values = arr.view(pa.int64())
    else:
        values = arr.cast(pa.int64())
    out = pc.less_equal(values, pa.scalar(watermark_ms * 1000, pa.int64()))
    return np.asarray(pc.fill_null(out, False).to_numpy(zero_copy_only=False), dtype=bool)


@dataclass(frozen=True, slots=True)
class JoinStateKeyWatermarkPredicate:
    """Evict the state keys whose key column ``ordinal`` is ``<= watermark_ms``."""

    ordinal: int
    data_type: T.DataType
    watermark_ms: int

    def evaluate(self, keys: pa.Table) -> np.ndarray:
        return watermark_mask(keys.column(self.ordinal), self.watermark_ms)

    def __str__(self) -> str:
        col = BoundReference(self.ordinal, self.data_type, True).simple_string()
        if isinstance(self.data_type, T.StructType):
            col = f"{col}.end"
        return f"({col} <= {self.watermark_ms * 1000})"


@dataclass(frozen=True, slots=True)
class JoinStateValueWatermarkPredicate:
    """Evict the state rows whose event-time column (``ordinal`` in the side's row) is
    ``<= watermark_ms``."""

    ordinal: int
    attribute: AttributeReference
    watermark_ms: int

    def evaluate(self, rows: pa.Table) -> np.ndarray:
        return watermark_mask(rows.column(self.ordinal), self.watermark_ms)

    def __str__(self) -> str:
        col = self.attribute.simple_string()
        if isinstance(self.attribute.data_type, T.StructType):
            col = f"{col}.end"
        return f"({col} <= {self.watermark_ms * 1000})"


JoinStateWatermarkPredicate = JoinStateKeyWatermarkPredicate | JoinStateValueWatermarkPredicate


def _has_watermark(e: Expression) -> bool:
    return isinstance(e, AttributeReference) and e.watermark_delay_ms is not None


def event_time_column(attrs: Sequence[AttributeReference],
                      allow_multiple: bool = True) -> int | None:
    """Ordinal of the first watermarked column of a side (Spark's ``findEventTimeColumn``).

    With ``allow_multiple`` false (what Spark 4.3 passes while
    ``spark.sql.streaming.statefulOperator.allowMultiple`` is true, the default) a side with
    more than one distinct watermarked column (by expression id; a column projected twice
    counts once) fails with MULTIPLE_EVENT_TIME_COLUMNS: a stream-stream join over the output
    of another one that keeps both event-time columns fails in its first batch."""
    cols = [i for i, a in enumerate(attrs) if _has_watermark(a)]
    if not allow_multiple and len({attrs[i].expr_id for i in cols}) > 1:
        names = "(" + ",".join(attrs[i].simple_string() for i in cols) + ")"
        raise AnalysisError(
            "More than one event time columns are available. Please ensure there is at most "
            f"one event time column per stream. event time columns: {names}",
            error_class="MULTIPLE_EVENT_TIME_COLUMNS", parameters={"eventTimeCols": names})
    return cols[0] if cols else None


def join_key_ordinal_for_watermark(left_keys: Sequence[Expression],
                                   right_keys: Sequence[Expression]) -> int | None:
    for keys in (left_keys, right_keys):
        for i, k in enumerate(keys):
            if _has_watermark(k):
                return i
    return None


def state_watermark_predicates(
    left_attrs: Sequence[AttributeReference], right_attrs: Sequence[AttributeReference],
    left_keys: Sequence[Expression], right_keys: Sequence[Expression],
    condition: Expression | None, watermark_ms: int | None,
    allow_multiple_event_time_columns: bool = False,
) -> tuple[JoinStateWatermarkPredicate | None, JoinStateWatermarkPredicate | None]:
    """``(left, right)`` eviction predicates (see the module docstring).  Like Spark's
    ``getStateWatermarkPredicates`` it first checks that each side has at most one event-time
    column unless ``allow_multiple_event_time_columns`` (Spark passes
    ``!statefulOperator.allowMultiple``), see :func:`event_time_column`."""
    event_time_column(left_attrs, allow_multiple_event_time_columns)
    event_time_column(right_attrs, allow_multiple_event_time_columns)
    ordinal = join_key_ordinal_for_watermark(left_keys, right_keys)

    def one_side(this_attrs, this_keys, other_attrs):
        if watermark_ms is None:
            return None
        if ordinal is not None:
            return JoinStateKeyWatermarkPredicate(ordinal, this_keys[ordinal].data_type,
                                                  watermark_ms)
        col = event_time_column(this_attrs)
        if col is None:
            return None
        s = state_value_watermark(this_attrs, other_attrs, condition, watermark_ms)
        if s is None:
            return None
        return JoinStateValueWatermarkPredicate(col, this_attrs[col], s)

    return (one_side(left_attrs, left_keys, right_attrs),
            one_side(right_attrs, right_keys, left_attrs))


def state_watermarks(
    left_attrs: Sequence[AttributeReference], right_attrs: Sequence[AttributeReference],
    left_keys: Sequence[Expression], right_keys: Sequence[Expression],
    condition: Expression | None, watermark_ms: int | None,
    allow_multiple_event_time_columns: bool = False,
) -> tuple[int | None, int | None]:
    """Each side's state watermark (Spark's ``getStateWatermark``, for the output watermark):
    ``W`` with a key predicate, the derived value watermark with a value predicate, else None."""
    preds = state_watermark_predicates(left_attrs, right_attrs, left_keys, right_keys,
                                       condition, watermark_ms,
                                       allow_multiple_event_time_columns)
    return tuple(None if p is None else p.watermark_ms for p in preds)  # type: ignore[return-value]


# ---------------------------------------------------------------------------------------------
# StreamingJoinHelper.getStateValueWatermark


class _Invalid(Exception):
    pass


def state_value_watermark(this_attrs: Sequence[AttributeReference],
                          other_attrs: Sequence[AttributeReference],
                          condition: Expression | None, watermark_ms: int | None) -> int | None:
    """The state value watermark (ms) of the side ``this_attrs`` (see the module docstring)."""

    if condition is None or watermark_ms is None:
        return None
    if not any(_has_watermark(a) for a in other_attrs):
        return None
    this_ids = frozenset(a.expr_id for a in this_attrs)
    other = {a.expr_id: a for a in other_attrs}
    results: list[int] = []
    for pred in split_conjuncts(condition):
        match pred:
            case LessThan(left=l, right=r):
                w = _solve(l, r, this_ids, other, watermark_ms)
            case LessThanOrEqual(left=l, right=r):
                w = _solve(l, r, this_ids, other, watermark_ms)
                w = None if w is None else w - 1
            case GreaterThan(left=l, right=r):
                w = _solve(r, l, this_ids, other, watermark_ms)
            case GreaterThanOrEqual(left=l, right=r):
                w = _solve(r, l, this_ids, other, watermark_ms)
                w = None if w is None else w - 1
            case _:
                w = None
        if w is not None:
            results.append(w)
    return min(results) if results else None


def _attributes(e: Expression) -> list[AttributeReference]:
    out: list[AttributeReference] = []

    def walk(x: Expression) -> None:
        if isinstance(x, AttributeReference):
            out.append(x)
        for c in x.children:
            walk(c)

    walk(e)
    return out


def _solve(lhs: Expression, rhs: Expression, this_ids: frozenset[int],
           other: dict[int, AttributeReference], watermark_ms: int) -> int | None:
    """``lhs < rhs`` solved for this side's column (Spark's
    ``getStateWatermarkFromLessThenPredicate``); None when it cannot be."""
    ids = {a.expr_id for a in _attributes(lhs) + _attributes(rhs)}
    if len(ids & this_ids) > 1 or len(ids & set(other)) > 1:
        return None
    try:
        terms = _collect_terms(lhs, rhs)
    except _Invalid:
        return None
    # ExpressionSet: equal terms count once (first occurrence kept, order irrelevant to a sum).
    unique: dict[tuple, tuple[bool, object]] = {}
    for neg, leaf in terms:
        unique.setdefault((neg, _leaf_key(leaf)), (neg, leaf))
    constraint = [(neg, leaf) for neg, leaf in unique.values()
                  if isinstance(leaf, AttributeReference) and leaf.expr_id in this_ids]
    if len(constraint) != 1 or not constraint[0][0]:
        return None
    total = 0.0
    for neg, leaf in unique.values():
        if (neg, leaf) == constraint[0]:
            continue
        if isinstance(leaf, AttributeReference):
            # Only the other side's watermarked columns are replaced by the watermark; Spark
            # fails to evaluate any other (unbound) column and gets no candidate.
            if leaf.expr_id not in other or not _has_watermark(other[leaf.expr_id]):
                return None
            v = float(watermark_ms) * 1000.0
        else:
            v = float(leaf)  # type: ignore[arg-type]
        total += -v if neg else v
    if math.isnan(total) or math.isinf(total):
        return None
    return int(total / 1000.0)  # Scala's Double.toLong truncates toward zero


def _leaf_key(leaf: object) -> tuple:
    if isinstance(leaf, AttributeReference):
        return ("attr", leaf.expr_id)
    return ("lit", leaf)


def _collect_terms(lhs: Expression, rhs: Expression) -> list[tuple[bool, object]]:
    out: list[tuple[bool, object]] = []
    _collect(lhs, False, out)
    _collect(rhs, True, out)
    return out


_TIME_ADD = ("TimeAdd", "TimestampAddInterval")
_TIME_SUB = ("TimeSub", "DatetimeSub")


def _operands(e: Expression, first: str, second: str) -> tuple[Expression, Expression]:
    a = getattr(e, first, None)
    b = getattr(e, second, None)
    if a is None or b is None:
        a, b = getattr(e, "left", None), getattr(e, "right", None)
    if not isinstance(a, Expression) or not isinstance(b, Expression):
        raise _Invalid
    return a, b


def _collect(e: Expression, neg: bool, out: list[tuple[bool, object]]) -> None:
    name = type(e).__name__
    if isinstance(e, Add):
        _collect(e.left, neg, out)
        _collect(e.right, neg, out)
    elif isinstance(e, Subtract):
        _collect(e.left, neg, out)
        _collect(e.right, not neg, out)
    elif name in _TIME_ADD:
        a, b = _operands(e, "start", "interval")
        _collect(a, neg, out)
        _collect(b, neg, out)
    elif name in _TIME_SUB:
        a, b = _operands(e, "start", "interval")
        _collect(a, neg, out)
        _collect(b, not neg, out)
    elif isinstance(e, UnaryMinus):
        _collect(e.child, not neg, out)
    elif isinstance(e, UnaryPositive):
        _collect(e.child, neg, out)
    elif isinstance(e, Cast):
        if not (e.to_type.is_numeric or isinstance(e.to_type, T.TimestampType)):
            raise _Invalid
        _collect(e.child, neg, out)
    elif isinstance(e, AttributeReference):
        out.append((neg, e))
    elif isinstance(e, IntervalLiteral):
        if e.is_year_month:
            raise _Invalid  # months and years are imprecise
        out.append((neg, float(e.micros)))
    elif isinstance(e, Literal):
        out.append((neg, _literal_micros(e)))
    else:
        raise _Invalid


def _literal_micros(lit: Literal) -> float:
    v, t = lit.value, lit.dtype
    if v is None:
        raise _Invalid
    if isinstance(t, T.DayTimeIntervalType):
        if isinstance(v, _dt.timedelta):
            return float((v.days * 86_400 + v.seconds) * 1_000_000 + v.microseconds)
        return float(v)
    if isinstance(t, T.YearMonthIntervalType):
        raise _Invalid
    if type(t).__name__ == "CalendarIntervalType":
        months = getattr(v, "months", 0)
        if months > 0:
            raise _Invalid
        return float(getattr(v, "days", 0) * _MICROS_PER_DAY + getattr(v, "microseconds", 0))
    if isinstance(t, T.TimestampType):
        if isinstance(v, _dt.datetime):
            if v.tzinfo is None:
                v = v.replace(tzinfo=_dt.timezone.utc)
            epoch = _dt.datetime(1970, 1, 1, tzinfo=_dt.timezone.utc)
            micros = (v - epoch) // _dt.timedelta(microseconds=1)
        else:
            micros = int(v)
        return float(micros) * 1_000_000.0  # sic: Spark multiplies the micros by 10^6 again
    if t.is_numeric:
        return float(v) * 1_000_000.0
    raise _Invalid
