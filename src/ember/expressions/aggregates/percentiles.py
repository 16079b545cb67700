"""Order statistics: ``percentile`` / ``median`` / ``percentile_cont`` / ``percentile_disc``
(exact), ``percentile_approx`` / ``approx_percentile``, and ``mode``.

Every function keeps the group's values in its buffer (a large_list per group, built and merged
as in :mod:`.collect`) and sorts them once per evaluation for all groups together
(``np.lexsort`` by group and value); positions are found with one ``np.searchsorted`` over the
running counts, per requested percentage -- no loop per row or per group.

``percentile_approx`` keeps every value too, so its answer is the exact rank Spark's
``QuantileSummaries`` query asks for (``ceil(p * n)``, the first / last value for ``p`` within
``1 / accuracy`` of 0 / 1).  That is Spark's result while its sketch is exact: a group of fewer
than ``accuracy / 2`` rows, where every sample's rank uncertainty ``floor(2 n / accuracy)`` is 0
and compression merges nothing.  On larger groups Spark answers from its compressed GK sketch
(a value within ``n / accuracy`` ranks of the exact one) and Ember's exact answer may differ
from Spark's within that bound; Ember does not reproduce the sketch (its backward merge scan is
sequential per group).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import field
from typing import ClassVar

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from ember import types as T
from ember.errors import ArithmeticError_, InternalError
from ember.expressions.aggregates.base import AggregateFunction, BufferField
from ember.expressions.aggregates.collect import ListBuffer, flatten_lists, grouped_lists
from ember.expressions.aggregates.kernels import _ranks, _valid
from ember.expressions.base import Expression, Literal
from ember.expressions.common import TypeCheckFailure, quoted_sql, sql_type, unexpected_input_type
from ember.trees import node

_ONE_ROW = pa.RecordBatch.from_struct_array(pa.array([{}], type=pa.struct([])))
_NUMERIC_OR_INTERVAL = '("NUMERIC" or "INTERVAL DAY TO SECOND" or "INTERVAL YEAR TO MONTH")'


def _value_of(e: Expression):
    """The value of a foldable argument (checked foldable by the caller)."""
    out = e.eval(_ONE_ROW)
    if isinstance(out, pa.ChunkedArray):
        out = out.combine_chunks()
    return out[0].as_py() if isinstance(out, pa.Array) else out.as_py()


def _foldable(e: Expression) -> bool:
    """Catalyst's ``foldable`` for an argument: deterministic and reading no column (nor an
    aggregate)."""
    return (e.resolved and not e.references and e.deterministic
            and not e.exists(lambda x: isinstance(x, AggregateFunction)))


def _non_foldable(name: str, required: str, e: Expression) -> TypeCheckFailure:
    return TypeCheckFailure(
        f"the input `{name}` should be a foldable {required} expression; however, got "
        f"{quoted_sql(e)}.",
        "NON_FOLDABLE_INPUT",
        {"inputName": f"`{name}`", "inputType": required, "inputExpr": quoted_sql(e)},
    )


def _check_percentages(e: Expression) -> str | None:
    """Spark's ``PercentileBase`` / ``ApproximatePercentile`` check of the percentage argument:
    a foldable double or array of doubles, every value in ``[0.0, 1.0]``."""
    t = e.data_type
    is_array = isinstance(t, T.ArrayType)
    elem = t.element_type if is_array else t
    if not isinstance(elem, (T.NumericType, T.NullType)):
        return unexpected_input_type(
            2, '("DOUBLE" or "ARRAY<DOUBLE>")', e)
    if not _foldable(e):
        return _non_foldable("percentage", '"DOUBLE"' if not is_array else '"ARRAY<DOUBLE>"',
                             e)
    value = _value_of(e)
    if value is None:
        return TypeCheckFailure("The percentage must not be null.", "UNEXPECTED_NULL",
                                {"exprName": "percentage"})
    ps = value if is_array else [value]
    if any(p is None or not 0.0 <= float(p) <= 1.0 for p in ps):
        shown = ",".join("null" if p is None else f"{float(p)}D" for p in ps)
        return TypeCheckFailure(
            f"The percentage must be between [0.0, 1.0] (current value = {shown}).",
            "VALUE_OUT_OF_RANGE",
            {"exprName": "percentage", "valueRange": "[0.0, 1.0]", "currentValue": shown})
    return None


def _percentages(e: Expression) -> tuple[list[float], bool]:
    value = _value_of(e)
    if isinstance(e.data_type, T.ArrayType):
        return [float(p) for p in value], True
    return [float(value)], False


def _check_numeric_or_interval(index: int, e: Expression) -> str | None:
    if not isinstance(e.data_type, (T.NumericType, T.NullType, T.YearMonthIntervalType,
                                    T.DayTimeIntervalType)):
        return unexpected_input_type(index, _NUMERIC_OR_INTERVAL, e)
    return None


def _as_float64(arr: pa.Array) -> pa.Array:
    """Values as doubles (Spark's ``toDoubleValue``): numbers, intervals (months /
    microseconds), dates (days) and timestamps (microseconds)."""
    t = arr.type
    if pa.types.is_duration(t) or pa.types.is_timestamp(t):
        arr = arr.view(pa.int64())
    elif pa.types.is_date32(t):
        arr = arr.view(pa.int32())
    elif pa.types.is_null(t):
        return pa.nulls(len(arr), pa.float64())
    return arr.cast(pa.float64(), safe=False)  # bigint -> double may round, as Java


def _double_type_of(t: T.DataType) -> T.DataType:
    return t if isinstance(t, (T.YearMonthIntervalType, T.DayTimeIntervalType)) else T.DOUBLE


def _from_float64(v: np.ndarray, null: np.ndarray, t: T.DataType) -> pa.Array:
    """Doubles back to ``t`` as Spark converts a percentile result (integral, date, timestamp
    and interval values round half up, as ``Math.round``; decimals round to their scale)."""
    mask = null if null.any() else None
    vv = np.where(null, 0.0, v)
    if isinstance(t, (T.DoubleType, T.NullType)):
        return pa.array(vv, type=pa.float64(), mask=mask)
    if isinstance(t, T.FloatType):
        return pa.array(vv.astype(np.float32), mask=mask)
    if isinstance(t, T.DecimalType):
        d = pa.array(vv, type=pa.float64(), mask=mask)
        return pc.cast(pc.round(d, t.scale), t.to_arrow(), safe=False)
    if isinstance(t, (T.IntegralType, T.YearMonthIntervalType, T.DayTimeIntervalType,
                      T.DateType, T.TimestampType)):
        ints = pa.array(np.floor(vv + 0.5).astype(np.int64), mask=mask)
        at = t.to_arrow()
        if pa.types.is_duration(at) or pa.types.is_timestamp(at):
            return ints.view(at)
        if pa.types.is_date32(at):
            return ints.cast(pa.int32()).view(at)
        return ints.cast(at)
    raise InternalError(f"no percentile result conversion for {t}")


# ---------------------------------------------------------------------------------------------
# Grouped order statistics


class _Sorted:
    """The flattened values of every group, sorted by (group, value): ``v`` (float64), ``c``
    (counts), cumulative counts ``cum`` and per group its row range and total count."""

    def __init__(self, values: np.ndarray, counts: np.ndarray, grp: np.ndarray, n_groups: int,
                 reverse: bool = False):
        # -0.0 before 0.0, ascending and descending (Spark's ordering ties them, and its hash
        # map of the distinct values holds -0.0 first)
        first = np.signbit(values) if reverse else ~np.signbit(values)
        order = np.lexsort((first, values, grp))
        if reverse:
            # the same groups, values descending (NaN, which sorts last, first)
            pos = np.empty(len(order), dtype=np.int64)
            pos[order] = np.arange(len(order))
            order = np.lexsort((-pos, grp))
        self.v = values[order]
        self.c = counts[order]
        self.g = grp[order]
        self.cum = np.cumsum(self.c)
        n_rows = np.bincount(self.g, minlength=n_groups)
        self.end = np.cumsum(n_rows)
        self.start = self.end - n_rows
        before = np.concatenate([[0], self.cum])
        self.base = before[self.start]
        self.total = before[self.end] - self.base
        self.empty = self.total == 0

    def at_rank(self, rank: np.ndarray) -> np.ndarray:
        """Per group, the index of the value holding 0-based position ``rank`` (in counts)."""
        idx = np.searchsorted(self.cum, self.base + rank + 1, side="left")
        return np.minimum(idx, np.maximum(self.end - 1, 0))


def _cont(s: _Sorted, p: float) -> np.ndarray:
    """Spark's ``Percentile`` (``percentile_cont``): linear interpolation between the values at
    positions ``floor`` and ``ceil`` of ``(n - 1) * p``, as ``lower + (position - floor) *
    (higher - lower)`` (Spark's rounding; NaN between -Infinity and a number)."""
    position = (s.total - 1).astype(np.float64) * p
    lower = np.floor(position)
    higher = np.ceil(position)
    il = s.at_rank(lower.astype(np.int64))
    ih = s.at_rank(higher.astype(np.int64))
    vl = s.v[il] if len(s.v) else np.zeros(len(il))
    vh = s.v[ih] if len(s.v) else np.zeros(len(ih))
    with np.errstate(invalid="ignore"):
        mixed = vl + (position - lower) * (vh - vl)
    same = (higher == lower) | (il == ih) | (vl == vh)
    return np.where(same, vl, mixed)


def _disc(s: _Sorted, p: float) -> np.ndarray:
    """``percentile_disc``: the first value whose cumulative share reaches ``p``."""
    rank = np.maximum(np.ceil(s.total.astype(np.float64) * p) - 1, 0).astype(np.int64)
    return s.v[s.at_rank(rank)] if len(s.v) else np.zeros(len(rank))


class _PercentileBase(ListBuffer):
    """Exact and approximate percentiles: buffer ``buf``, the group's values (with their
    frequencies for ``percentile``), as a large_list of structs ``(v, c)``."""

    __slots__ = ()
    child: Expression
    percentage: Expression
    reverse: bool
    discrete: ClassVar[bool] = False

    def _percentage_check(self) -> str | None:
        return _check_percentages(self.percentage)

    def check_input_types(self) -> str | None:
        return _check_numeric_or_interval(1, self.child) or self._percentage_check()

    def implicit_cast_targets(self) -> tuple[T.DataType | None, ...]:
        out: list[T.DataType | None] = [None] * len(self.children)
        if self.child.resolved and isinstance(self.child.data_type, T.StringType):
            out[0] = T.DOUBLE
        return tuple(out)

    @property
    def result_element_type(self) -> T.DataType:
        return _double_type_of(self.child.data_type)

    @property
    def data_type(self) -> T.DataType:
        if isinstance(self.percentage.data_type, T.ArrayType):
            return T.ArrayType(self.result_element_type, False)
        return self.result_element_type

    def _frequencies(self, args: Sequence[pa.Array]) -> pa.Array | None:
        return None

    def _pairs(self, args: Sequence[pa.Array]) -> pa.Array:
        """Rows as structs ``(v: double, c: bigint)``; NULL where the row is skipped."""
        v = _as_float64(args[0])
        freq = self._frequencies(args)
        n = len(v)
        c = pa.array(np.ones(n, dtype=np.int64)) if freq is None else freq
        keep = _valid(v) & _valid(c)
        if freq is not None:
            cn = np.asarray(pc.fill_null(c, 0).to_numpy(zero_copy_only=False), dtype=np.int64)
            if (cn[keep] < 0).any():
                bad = int(cn[keep][cn[keep] < 0][0])
                raise ArithmeticError_(
                    f'Found the negative value in "{self.frequency.sql()}": {bad}L, but expected '
                    "a positive integral value.",
                    error_class="NEGATIVE_VALUES_IN_FREQUENCY_EXPRESSION",
                    parameters={"frequencyExpression": f'"{self.frequency.sql()}"',
                                "negativeValue": f"{bad}L"})
            keep &= cn > 0
        return pa.StructArray.from_arrays([v, c.cast(pa.int64())], names=["v", "c"],
                                          mask=pa.array(~keep))

    def buffer_fields(self) -> tuple[BufferField, ...] | None:
        elem = T.StructType((T.StructField("v", T.DOUBLE, True), T.StructField("c", T.LONG, True)))
        return (BufferField("buf", T.ArrayType(elem, False), False),)

    def update(self, args: Sequence[pa.Array], g: np.ndarray, n_groups: int) -> list[pa.Array]:
        return [grouped_lists(self._pairs(args), g, n_groups)]

    def _statistic(self, s: _Sorted, p: float) -> np.ndarray:
        return _disc(s, p) if self.discrete else _cont(s, p)

    def evaluate(self, buffers: Sequence[pa.Array]) -> pa.Array:
        lists = buffers[0]
        n_groups = len(lists)
        flat, grp = flatten_lists(lists)
        values = np.asarray(flat.field("v").to_numpy(zero_copy_only=False), dtype=np.float64)
        counts = np.asarray(flat.field("c").to_numpy(zero_copy_only=False), dtype=np.int64)
        s = _Sorted(values, counts, grp, n_groups, self.reverse)
        ps, is_array = _percentages(self.percentage)
        cols = [_from_float64(self._statistic(s, p), s.empty, self.result_element_type)
                for p in ps]
        if not is_array:
            return cols[0]
        k = len(ps)
        if k:
            inter = pa.concat_arrays(cols).take(
                pa.array((np.arange(n_groups)[:, None] + np.arange(k)[None, :] * n_groups)
                         .reshape(-1)))
        else:
            inter = pa.array([], type=self.result_element_type.to_arrow())
        offsets = pa.array(np.arange(n_groups + 1, dtype=np.int64) * k)
        # no percentages: NULL, as Spark
        null = s.empty | (k == 0)
        return pa.LargeListArray.from_arrays(offsets, inter,
                                             mask=pa.array(null) if null.any() else None)


@node
class Percentile(_PercentileBase):
    """``percentile(x, p [, frequency])``: the exact percentile(s) of a numeric or ANSI interval
    column, interpolated (Spark's ``Percentile``).  Result double (an interval input keeps its
    type), ``array<double>`` for an array of percentages; NULL on empty input.  Rows with a NULL
    value or frequency, or frequency 0, are skipped; a negative frequency fails.  Named
    ``percentile(x, p, 1)`` (the frequency always shown)."""

    child: Expression
    percentage: Expression
    frequency: Expression = field(default_factory=lambda: Literal(1, T.INT))
    reverse: bool = False
    fn_name: str | None = field(default=None, compare=False)

    default_name: ClassVar[str] = "percentile"

    def check_input_types(self) -> str | None:
        bad = _PercentileBase.check_input_types(self)
        if bad:
            return bad
        if not isinstance(self.frequency.data_type, (T.IntegralType, T.NullType)):
            return unexpected_input_type(3, '"INTEGRAL"', self.frequency)
        return None

    def _frequencies(self, args: Sequence[pa.Array]) -> pa.Array | None:
        f = self.frequency
        if isinstance(f, Literal) and f.value == 1:
            return None
        return args[2]


@node
class Median(_PercentileBase):
    """``median(x)``: ``percentile(x, 0.5)``, named ``median(x)``."""

    child: Expression
    fn_name: str | None = field(default=None, compare=False)

    default_name: ClassVar[str] = "median"
    reverse: ClassVar[bool] = False

    @property
    def percentage(self) -> Expression:
        return Literal(0.5, T.DOUBLE)

    def _percentage_check(self) -> str | None:
        return None


class _WithinGroup(_PercentileBase):
    """``percentile_cont`` / ``percentile_disc (p) WITHIN GROUP (ORDER BY x [DESC])``."""

    __slots__ = ()

    def agg_args_string(self) -> str:
        return f"{self.child.simple_string()}, {self.percentage.simple_string()}"

    def agg_sql(self, is_distinct: bool) -> str:
        d = "DISTINCT " if is_distinct else ""
        desc = " DESC" if self.reverse else ""
        return (f"{self.pretty_name}({d}{self.percentage.sql()}) WITHIN GROUP (ORDER BY "
                f"{self.child.sql()}{desc})")


@node
class PercentileCont(_WithinGroup):
    """``percentile_cont(p) WITHIN GROUP (ORDER BY x [DESC])``: ``percentile`` with the order
    reversed for DESC (Spark's ``PercentileCont``)."""

    child: Expression
    percentage: Expression
    reverse: bool = False
    fn_name: str | None = field(default=None, compare=False)

    default_name: ClassVar[str] = "percentile_cont"


@node
class PercentileDisc(_WithinGroup):
    """``percentile_disc(p) WITHIN GROUP (ORDER BY x [DESC])``: the first value (in that order)
    whose cumulative share of the rows reaches ``p`` (Spark's ``PercentileDisc``); double."""

    child: Expression
    percentage: Expression
    reverse: bool = False
    fn_name: str | None = field(default=None, compare=False)

    default_name: ClassVar[str] = "percentile_disc"
    discrete: ClassVar[bool] = True


#: Spark's ``ApproximatePercentile.DEFAULT_PERCENTILE_ACCURACY``
DEFAULT_ACCURACY = 10000


@node
class ApproxPercentile(_PercentileBase):
    """``percentile_approx(x, p [, accuracy])`` (alias ``approx_percentile``, which keeps its
    name): a value of the group whose rank is within ``n / accuracy`` of ``ceil(p * n)``, of
    the input type (numeric, date, timestamp, ANSI interval), an array for an array of
    percentages; named with the accuracy shown (``percentile_approx(x, 0.5, 10000)``).  See the
    module docstring for how Ember picks the value."""

    child: Expression
    percentage: Expression
    accuracy: Expression = field(default_factory=lambda: Literal(DEFAULT_ACCURACY, T.INT))
    fn_name: str | None = field(default=None, compare=False)

    default_name: ClassVar[str] = "percentile_approx"
    reverse: ClassVar[bool] = False

    @property
    def result_element_type(self) -> T.DataType:
        return self.child.data_type

    def check_input_types(self) -> str | None:
        t = self.child.data_type
        if not isinstance(t, (T.NumericType, T.NullType, T.DateType, T.TimestampType,
                              T.YearMonthIntervalType, T.DayTimeIntervalType)):
            return unexpected_input_type(
                1, '("NUMERIC" or "DATE" or "TIMESTAMP" or "TIMESTAMP_NTZ" or "INTERVAL YEAR TO '
                'MONTH" or "INTERVAL DAY TO SECOND")', self.child)
        bad = self._percentage_check()
        if bad:
            return bad
        a = self.accuracy
        if not isinstance(a.data_type, T.IntegralType):
            return unexpected_input_type(3, '"INTEGRAL"', a)
        if not _foldable(a):
            return _non_foldable("accuracy", '"INT"', a)
        acc = _value_of(a)
        if acc is None or not 0 < acc <= 2147483647:
            return TypeCheckFailure(
                f"The accuracy must be between (0, 2147483647] (current value = {acc}L).",
                "VALUE_OUT_OF_RANGE",
                {"exprName": "accuracy", "valueRange": "(0, 2147483647]",
                 "currentValue": f"{acc}L"})
        return None

    def _statistic(self, s: _Sorted, p: float) -> np.ndarray:
        rel = 1.0 / float(_value_of(self.accuracy))
        n = s.total.astype(np.float64)
        if p <= rel:
            rank = np.zeros(len(n), dtype=np.int64)
        elif p >= 1 - rel:
            rank = np.maximum(s.total - 1, 0)
        else:
            rank = np.maximum(np.ceil(p * n).astype(np.int64) - 1, 0)
        return s.v[s.at_rank(rank)] if len(s.v) else np.zeros(len(rank))


@node
class Mode(ListBuffer):
    """``mode(x [, deterministic])`` and ``mode() WITHIN GROUP (ORDER BY x [DESC])``: the most
    frequent non-NULL value (Spark's ``Mode``), of the input type; NULL on empty input.  Among
    equally frequent values Spark's plain ``mode(x)`` returns whichever its hash map yields
    first; Ember returns the smallest, which is what the deterministic forms return (the
    largest for ``ORDER BY x DESC``).  Buffer ``buf``: the group's values."""

    child: Expression
    #: None: ``mode(x)``; False: ``mode() WITHIN GROUP (ORDER BY x)`` (and ``mode(x, true)``),
    #: True: ``... ORDER BY x DESC`` (Spark's ``reverseOpt``)
    reverse: bool | None = None
    fn_name: str | None = field(default=None, compare=False)

    default_name: ClassVar[str] = "mode"

    @property
    def data_type(self) -> T.DataType:
        return self.child.data_type

    def agg_sql(self, is_distinct: bool) -> str:
        if self.reverse is None:
            return AggregateFunction.agg_sql(self, is_distinct)
        # Spark 4 prints the opposite direction of the one the function sorts by
        desc = "" if self.reverse else " DESC"
        return f"mode() WITHIN GROUP (ORDER BY {self.child.sql()}{desc})"

    def check_input_types(self) -> str | None:
        if self.reverse is not None and not self.child.data_type.is_orderable:
            st = sql_type(self.child.data_type)
            return TypeCheckFailure(
                f"The mode does not support ordering on type {st}.",
                "INVALID_ORDERING_TYPE", {"functionName": "`mode`", "dataType": st})
        return None

    def buffer_fields(self) -> tuple[BufferField, ...] | None:
        return (BufferField("buf", T.ArrayType(self.child.data_type, False), False),)

    def update(self, args: Sequence[pa.Array], g: np.ndarray, n_groups: int) -> list[pa.Array]:
        return [grouped_lists(args[0], g, n_groups)]

    def evaluate(self, buffers: Sequence[pa.Array]) -> pa.Array:
        lists = buffers[0]
        n_groups = len(lists)
        flat, grp = flatten_lists(lists)
        pos = np.full(n_groups, -1, dtype=np.int64)
        if len(flat):
            r = _ranks(flat)
            if self.reverse:
                r = -r
            order = np.lexsort((r, grp))
            sg, sr = grp[order], r[order]
            start = np.ones(len(order), dtype=bool)
            start[1:] = (sg[1:] != sg[:-1]) | (sr[1:] != sr[:-1])
            starts = np.flatnonzero(start)
            run_len = np.diff(np.append(starts, len(order)))
            run_g = sg[starts]
            # per group the longest run, the first (smallest value) of equal lengths
            best = np.lexsort((np.arange(len(starts)), -run_len, run_g))
            first = np.ones(len(best), dtype=bool)
            first[1:] = run_g[best][1:] != run_g[best][:-1]
            win = best[first]
            pos[run_g[win]] = order[starts[win]]
        missing = pos < 0
        idx = pa.array(np.where(missing, 0, pos), mask=missing if missing.any() else None)
        if len(flat) == 0:
            return pa.nulls(n_groups, type=self.child.data_type.to_arrow())
        return flat.take(idx)
