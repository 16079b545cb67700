"""Aggregate functions and the ``AggregateExpression`` wrapper (Catalyst's ``aggregate`` package).

An :class:`AggregateFunction` describes *what* is computed over a group of rows (``sum``, ``count``
...): its children are its arguments, it carries the result type and nullability, and it checks its
input types.  It is never evaluated row by row: it implements the evaluation protocol of
:class:`AggregateFunction` (COMPLETE ``aggregate``; ``buffer_fields`` / ``update`` / ``merge`` /
``evaluate`` for two-phase aggregation) with grouped, vectorized kernels
(:mod:`ember.expressions.aggregate_kernels`), which the aggregate operators call without knowing
which function they run.

An :class:`AggregateExpression` wraps a function with the clauses of one call site:
``is_distinct`` (``count(DISTINCT a)``), ``filter`` (``FILTER (WHERE p)``) and a result id.  It is
the node that appears in ``Aggregate.aggregate_expressions`` trees::

    Alias(Add(AggregateExpression(Sum(a#1)), Literal(1)), "x")      -- (sum(a#1) + 1) AS x#7

Display follows Catalyst: ``simple_string()`` is ``count(distinct a#1)``, ``sum(b#2) FILTER (WHERE
(a#1 > 1))``, ``first(a#1, false)``; ``sql()`` (the auto-generated column name) is
``count(DISTINCT a)``, ``sum(b) FILTER (WHERE (a > 1))``, ``first(a)``.  ``count(*)`` is
``Count((Literal(1),))`` and is therefore named ``count(1)``, as in Spark.

Function aliases keep the name they were called by (Spark's ``FUNC_ALIAS`` tag): ``mean(b)`` is an
:class:`Average` named ``mean(b)``; ``first_value(a)`` a :class:`First` named ``first_value(a)``.  The
alias is the ``fn_name`` field, excluded from equality (``mean(b) == avg(b)``).

Result types (Spark 4, ANSI):

==============================  ==============================================================
function                        result type
==============================  ==============================================================
count, count_if                 bigint, never NULL (0 on empty input)
sum(tinyint..bigint)            bigint (ANSI: ``ARITHMETIC_OVERFLOW`` on overflow; legacy wraps)
sum(float/double)               double
sum(decimal(p,s))               decimal(min(38, p+10), s) (overflow: ``ARITHMETIC_OVERFLOW``;
                                legacy: NULL)
avg(integral/float/double)      double
avg(decimal(p,s))               decimal(min(38, p+4), min(38, s+4)), rounded HALF_UP
min, max, first, last,          the input type
any_value, max_by, min_by
bool_and/every, bool_or/some    boolean
==============================  ==============================================================

Aggregation buffers (Spark's ``aggBufferAttributes``, named as Spark 4 prints them in
``HashAggregate(... output=[k#1, sum#10L])``):

=========================  ======================================  ===========================
function                   buffer                                  note
=========================  ======================================  ===========================
count, count_if            count: bigint (0)                       count_if is Spark's
                                                                   count(nullif(p, false))
sum(integral)              sum: bigint                             ANSI overflow in update
                                                                   (running sums) and merge;
                                                                   legacy (ansi=False) wraps
sum(float/double)          sum: double
sum(decimal(p,s))          sum: decimal(p+10,s) (0), isEmpty       sum NULL and not isEmpty =
                                                                   overflow (raised at
                                                                   evaluate, as Spark 4;
                                                                   legacy: the result NULL)
avg                        sum: double / decimal(p+10,s), count    decimal: overflow as sum
min, max                   min / max: input type                   first of equal values wins
bool_and, bool_or          min / max: boolean                      Spark replaces them by
                                                                   min/max
first, any_value           first: input type, valueSet: boolean    any_value is Spark's first
last                       last: input type, valueSet: boolean
max_by, min_by             valueWithExtremumOrdering,              ties: the later row/buffer
                           extremumOrdering
=========================  ======================================  ===========================

Implicit casts: the analyzer's type coercion asks :meth:`AggregateFunction.implicit_cast_targets`
which child to cast to which type (e.g. ``sum(string)`` -> ``sum(CAST(s AS DOUBLE))``, as Spark's
ImplicitTypeCasts does for an expected ``NumericType``).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from ember import types as T
from ember.errors import AnalysisError, InternalError, UnsupportedError
from ember.expressions.aggregate_kernels import (
    AVG_OVERFLOW,
    SUM_OVERFLOW,
    _avg,
    _bool,
    _bool_np,
    _by,
    _count_array,
    _count_non_null,
    _decimal_averages,
    _decimal_sum_buffers,
    _first_last,
    _first_last_positions,
    _float_averages,
    _float_sum_buffer,
    _float_values,
    _group_add,
    _identity_decimal_sum,
    _merge_counts,
    _merge_decimal_sums,
    _min_max,
    _nonnull_counts,
    _overflow,
    _overflow_marked,
    _sum,
    _take_or_null,
    _true_mask,
    _unscaled,
    _valid,
    by_positions,
)
from ember.expressions.base import (
    AttributeReference,
    Expression,
    Literal,
    UnresolvedStar,
    new_expr_id,
)
from ember.trees import TreeNode, node

__all__ = [
    "BufferField",
    "AggregateFunction",
    "AggregateExpression",
    "Count",
    "CountIf",
    "Sum",
    "Average",
    "Min",
    "Max",
    "First",
    "Last",
    "AnyValue",
    "BoolAnd",
    "BoolOr",
    "MaxBy",
    "MinBy",
    "lookup_aggregate",
    "sum_result_type",
    "average_result_type",
    "AGGREGATE_FUNCTION_NAMES",
]


# ---------------------------------------------------------------------------------------------
# Type checks (messages as Spark's DATATYPE_MISMATCH.UNEXPECTED_INPUT_TYPE)


def _unexpected_type(index: int, required: str, e: Expression) -> str:
    from ember.expressions.common import unexpected_input_type

    return unexpected_input_type(index, required, e)


_NUMERIC_REQUIRED = '"NUMERIC" or "ANSI INTERVAL"'


def _bounded_decimal(precision: int, scale: int) -> T.DecimalType:
    """Spark's ``DecimalType.bounded``: precision and scale capped at 38."""
    return T.DecimalType(min(precision, T.DecimalType.MAX_PRECISION),
                         min(scale, T.DecimalType.MAX_SCALE))


def sum_result_type(t: T.DataType) -> T.DataType:
    """``sum`` result type for input type ``t`` (bigint / double / decimal(p+10, s))."""
    match t:
        case T.DecimalType(precision=p, scale=s):
            return _bounded_decimal(p + 10, s)
        case T.IntegralType():
            return T.LONG
        case _:
            return T.DOUBLE


def average_result_type(t: T.DataType) -> T.DataType:
    """``avg`` result type for input type ``t`` (double / decimal(p+4, s+4) bounded)."""
    match t:
        case T.DecimalType(precision=p, scale=s):
            return _bounded_decimal(p + 4, s + 4)
        case _:
            return T.DOUBLE


def average_sum_type(t: T.DataType) -> T.DataType:
    """Type of ``avg``'s running sum (Spark's ``sumDataType``): decimal(p+10, s) or double."""
    match t:
        case T.DecimalType(precision=p, scale=s):
            return _bounded_decimal(p + 10, s)
        case _:
            return T.DOUBLE


# ---------------------------------------------------------------------------------------------
# Functions


@dataclass(frozen=True, slots=True)
class BufferField:
    """One column of an aggregation buffer (Spark's ``aggBufferAttributes`` entry)."""

    name: str
    data_type: T.DataType
    nullable: bool = True


class AggregateFunction(Expression):
    """Base of aggregate functions.  Children are the arguments; never evaluated directly.

    ``default_name`` is the function's SQL name; a subclass instance called through an alias keeps
    that alias in ``fn_name`` (excluded from equality) and displays it.

    The evaluation protocol (Spark's ``DeclarativeAggregate`` / ``ImperativeAggregate``,
    DataFusion's ``GroupsAccumulator``), every step a grouped, vectorized kernel over Arrow
    columns and int64 group ids ``g`` (``0 <= g < n_groups``, one per row, in input order):

    - :meth:`aggregate`: the COMPLETE result per group from the argument columns;
    - :meth:`buffer_fields`: the aggregation buffer (``aggBufferAttributes``), None when the
      function runs only COMPLETE; its initial value is :meth:`update` over no rows;
    - :meth:`update`: raw argument rows -> per-group buffers (Partial);
    - :meth:`merge`: buffer rows -> per-group buffers (PartialMerge / Final);
    - :meth:`evaluate`: final buffers -> the result (Final);
    - shortcuts and facts the operators read: :meth:`update_identity` /
      :meth:`merge_identity` (every row its own group), :attr:`chunk_mergeable`,
      :attr:`merge_may_overflow` / :meth:`overflow_marked`, :meth:`reads_values`.

    update -> merge -> evaluate gives the :meth:`aggregate` result bit for bit (floating sums:
    when the association is the same, i.e. over one partition).  Merge takes the first (last)
    buffer where the COMPLETE path takes the first (last) row, so order-sensitive functions
    (first/last, max_by/min_by ties, ``-0.0`` vs ``0.0`` in min/max) agree with it when
    partitions hold consecutive rows, as in Spark.  FILTER and DISTINCT are the operator's: it
    passes only the selected rows.
    """

    __slots__ = ()
    default_name: ClassVar[str] = "?"
    #: Value on empty input when it is not NULL (``count`` -> 0).  Used by rewrites that must
    #: restore the empty-input result (RewriteDistinctAggregates, the COUNT bug).
    default_result: ClassVar[Any] = None
    #: The result does not change when input rows are repeated (``max``, ``first`` ...): an
    #: aggregate of only such functions over an outer join may drop the join's duplicates
    #: (EliminateOuterJoin).
    duplicate_agnostic: ClassVar[bool] = False

    @property
    def pretty_name(self) -> str:
        return getattr(self, "fn_name", None) or self.default_name

    @property
    def foldable(self) -> bool:
        return False

    @property
    def nullable(self) -> bool:
        return True

    def implicit_cast_targets(self) -> tuple[T.DataType | None, ...]:
        """Per child: the type the analyzer should implicitly cast it to, or None to leave it.

        Only proposes casts Spark's ANSI ImplicitTypeCasts would insert (string/NULL to the
        expected type's default); mismatches with no implicit cast are left for
        :meth:`check_input_types` to report."""
        return tuple(None for _ in self.children)

    def agg_args_string(self) -> str:
        """Arguments as shown in ``simple_string`` (Catalyst's ``flatArguments``)."""
        return ", ".join(c.simple_string() for c in self.children)

    def to_agg_string(self, is_distinct: bool) -> str:
        """Catalyst's ``toAggString``: ``count(distinct a#1)``, ``first(a#1, false)``."""
        start = "(distinct " if is_distinct else "("
        return f"{self.pretty_name}{start}{self.agg_args_string()})"

    def agg_sql(self, is_distinct: bool) -> str:
        """Catalyst's ``AggregateFunction.sql(isDistinct)``: ``count(DISTINCT a)``."""
        d = "DISTINCT " if is_distinct else ""
        return f"{self.pretty_name}({d}{', '.join(c.sql() for c in self.children)})"

    def simple_string(self) -> str:
        return self.to_agg_string(False)

    def sql(self) -> str:
        return self.agg_sql(False)

    # -- evaluation protocol (see the class docstring) ------------------------------------------

    def aggregate(self, args: Sequence[pa.Array], g: np.ndarray, n_groups: int) -> pa.Array:
        """The result per group (Arrow type of ``data_type``) over the argument columns ``args``
        (one per child, one value per row)."""
        raise UnsupportedError(f"Aggregate function {self.pretty_name} is not supported")

    def reads_values(self, is_distinct: bool) -> bool:
        """Whether :meth:`aggregate` needs its argument values; False lets the operator pass no
        argument columns (``count(1)`` counts rows)."""
        return True

    def buffer_fields(self) -> tuple[BufferField, ...] | None:
        """The aggregation buffer's columns, or None when the function has no two-phase form
        (the planner then keeps one COMPLETE aggregate)."""
        return None

    @property
    def supports_buffers(self) -> bool:
        """True when the function can run as Partial -> Final."""
        return self.buffer_fields() is not None

    def buffer_attributes(self) -> tuple[AttributeReference, ...]:
        """Fresh attributes for the buffer (printed ``sum#10L, count#11L``)."""
        fields = self.buffer_fields()
        if fields is None:
            raise InternalError(f"{self.pretty_name} has no aggregation buffer")
        return tuple(AttributeReference(f.name, f.data_type, f.nullable) for f in fields)

    def update(self, args: Sequence[pa.Array], g: np.ndarray, n_groups: int) -> list[pa.Array]:
        """Per-group buffers over raw argument rows ``args`` (one column per child)."""
        raise InternalError(f"{self.pretty_name} has no aggregation buffer")

    def merge(self, buffers: Sequence[pa.Array], g: np.ndarray, n_groups: int
              ) -> list[pa.Array]:
        """Per-group buffers merged from buffer rows (one column per buffer field), in row
        order."""
        raise InternalError(f"{self.pretty_name} has no aggregation buffer")

    def evaluate(self, buffers: Sequence[pa.Array]) -> pa.Array:
        """The result per group from its final buffers (Arrow type of ``data_type``); raises
        Spark's ANSI errors where the result does."""
        raise InternalError(f"{self.pretty_name} has no aggregation buffer")

    def update_identity(self, args: Sequence[pa.Array]) -> list[pa.Array] | None:
        """:meth:`update` when row ``i`` is group ``i`` for every row, straight from the values;
        None when the function has no such shortcut."""
        return None

    def merge_identity(self, buffers: Sequence[pa.Array]) -> list[pa.Array] | None:
        """:meth:`merge` when buffer row ``i`` is group ``i``: the buffers themselves where that
        is the merge's result (no NULL markers to normalise); None otherwise."""
        return None

    @property
    def chunk_mergeable(self) -> bool:
        """True when merging the buffers of consecutive chunks of rows gives exactly the buffers
        of one pass over all rows (not integral sums, whose ANSI check follows every running
        sum in row order, nor floating sums, whose rounding depends on association)."""
        return False

    @property
    def merge_may_overflow(self) -> bool:
        """True when a chunk's buffer may overflow where the whole input's does not (a decimal
        sum capped at 38 digits): the operator then decides on the exact total
        (:meth:`overflow_marked`)."""
        return False

    def overflow_marked(self, buffers: Sequence[pa.Array]) -> bool:
        """Whether the buffers hold Spark's overflow marker (a NULL sum of a non-empty group)."""
        return False


class _CountBuffer(AggregateFunction):
    """``count`` and ``count_if``: buffer ``count: bigint`` (0 for no rows); count_if is Spark's
    ``count(nullif(p, false))``."""

    __slots__ = ()

    def buffer_fields(self) -> tuple[BufferField, ...] | None:
        return (BufferField("count", T.LONG, False),)

    def merge(self, buffers: Sequence[pa.Array], g: np.ndarray, n_groups: int
              ) -> list[pa.Array]:
        return [_merge_counts(buffers[0], g, n_groups)]

    def merge_identity(self, buffers: Sequence[pa.Array]) -> list[pa.Array] | None:
        return list(buffers) if buffers[0].null_count == 0 else None

    def evaluate(self, buffers: Sequence[pa.Array]) -> pa.Array:
        return buffers[0]

    @property
    def chunk_mergeable(self) -> bool:
        return True


class _UnaryAgg(AggregateFunction):
    __slots__ = ()
    child: Expression


def _numeric_cast_target(child: Expression) -> T.DataType | None:
    if not child.resolved:
        return None
    t = child.data_type
    if isinstance(t, (T.StringType, T.NullType)):
        return T.DOUBLE
    return None


def _boolean_cast_target(child: Expression) -> T.DataType | None:
    if not child.resolved:
        return None
    if isinstance(child.data_type, (T.StringType, T.NullType)):
        return T.BOOLEAN
    return None


@node
class Count(_CountBuffer):
    """``count(e1, ..., en)``: rows where every argument is non-NULL.  ``count(*)`` is
    ``Count((Literal(1, INT),))``."""

    items: tuple[Expression, ...]
    fn_name: str | None = field(default=None, compare=False)

    default_name: ClassVar[str] = "count"
    default_result: ClassVar[Any] = 0

    def __post_init__(self) -> None:
        if not self.items:
            raise InternalError("Count needs at least one argument (count(*) is count(1))")
        TreeNode.__post_init__(self)

    @property
    def data_type(self) -> T.DataType:
        return T.LONG

    @property
    def nullable(self) -> bool:
        return False

    def reads_values(self, is_distinct: bool) -> bool:
        # count(1), count(*): counts rows, reads no argument values
        return is_distinct or not all(isinstance(a, Literal) and a.value is not None
                                      for a in self.items)

    def aggregate(self, args: Sequence[pa.Array], g: np.ndarray, n_groups: int) -> pa.Array:
        return pa.array(_count_non_null(args, g, n_groups).astype(np.int64))

    def update(self, args: Sequence[pa.Array], g: np.ndarray, n_groups: int) -> list[pa.Array]:
        return [_count_array(_count_non_null(args, g, n_groups))]

    def update_identity(self, args: Sequence[pa.Array]) -> list[pa.Array] | None:
        if not args:
            return None
        valid = np.ones(len(args[0]), dtype=bool)
        for a in args:
            if pa.types.is_null(a.type) or a.null_count:
                valid &= _valid(a)
        return [_count_array(valid.astype(np.int64))]


@node
class CountIf(_CountBuffer, _UnaryAgg):
    """``count_if(p)``: rows where ``p`` is TRUE."""

    child: Expression
    fn_name: str | None = field(default=None, compare=False)

    default_name: ClassVar[str] = "count_if"
    default_result: ClassVar[Any] = 0

    @property
    def data_type(self) -> T.DataType:
        return T.LONG

    @property
    def nullable(self) -> bool:
        return False

    def check_input_types(self) -> str | None:
        if not isinstance(self.child.data_type, T.BooleanType):
            return _unexpected_type(1, '"BOOLEAN"', self.child)
        return None

    def implicit_cast_targets(self) -> tuple[T.DataType | None, ...]:
        return (_boolean_cast_target(self.child),)

    def aggregate(self, args: Sequence[pa.Array], g: np.ndarray, n_groups: int) -> pa.Array:
        m = _true_mask(args[0])
        return pa.array(np.bincount(g[m], minlength=n_groups).astype(np.int64))

    def update(self, args: Sequence[pa.Array], g: np.ndarray, n_groups: int) -> list[pa.Array]:
        m = _true_mask(args[0])
        return [_count_array(np.bincount(g[m], minlength=n_groups))]

    def update_identity(self, args: Sequence[pa.Array]) -> list[pa.Array] | None:
        return [_count_array(_true_mask(args[0]).astype(np.int64))]


class _EvalMode:
    """Spark's evalMode of ``sum``/``avg``: ``ansi=False`` (``spark.sql.ansi.enabled=false``, set
    by the analyzer's ResolveEvalMode) is the legacy aggregate: integral sums wrap, a decimal sum
    or average that overflows is NULL."""

    __slots__ = ()

    @property
    def ansi_mode(self) -> bool:
        return self.ansi  # type: ignore[attr-defined]

    def to_legacy_mode(self) -> Expression:
        return self.copy(ansi=False)  # type: ignore[attr-defined]

    # Buffer facts shared by sum and avg, whose buffers hold a running sum.

    @property
    def chunk_mergeable(self) -> bool:
        # decimal sums are exact; integral (ANSI running sums) and floating sums are not
        return isinstance(self.child.data_type, T.DecimalType)  # type: ignore[attr-defined]

    @property
    def merge_may_overflow(self) -> bool:
        t = self.child.data_type  # type: ignore[attr-defined]
        return isinstance(t, T.DecimalType) and t.precision + 10 > T.DecimalType.MAX_PRECISION


@node
class Sum(_EvalMode, _UnaryAgg):
    """``sum(x)``: NULL when no non-NULL input; ANSI overflow raises ``ARITHMETIC_OVERFLOW``."""

    child: Expression
    fn_name: str | None = field(default=None, compare=False)
    #: Spark's evalMode (see :class:`_EvalMode`)
    ansi: bool = True

    default_name: ClassVar[str] = "sum"

    @property
    def data_type(self) -> T.DataType:
        return sum_result_type(self.child.data_type)

    def aggregate(self, args: Sequence[pa.Array], g: np.ndarray, n_groups: int) -> pa.Array:
        return _sum(args[0], g, n_groups, self.data_type, self.ansi)

    def buffer_fields(self) -> tuple[BufferField, ...] | None:
        """``sum`` (the result type); for decimals also ``isEmpty``: ``sum`` NULL and not
        ``isEmpty`` is Spark's overflow marker, raised at :meth:`evaluate` (legacy: NULL)."""
        rt = self.data_type
        if isinstance(rt, T.DecimalType):
            return (BufferField("sum", rt), BufferField("isEmpty", T.BOOLEAN, False))
        return (BufferField("sum", rt),)

    def update(self, args: Sequence[pa.Array], g: np.ndarray, n_groups: int) -> list[pa.Array]:
        rt = self.data_type
        if isinstance(rt, T.DecimalType):
            return _decimal_sum_buffers(args[0], g, n_groups, rt, None)
        return [_sum(args[0], g, n_groups, rt, self.ansi)]  # ANSI: overflow of running sums

    def update_identity(self, args: Sequence[pa.Array]) -> list[pa.Array] | None:
        got = _identity_decimal_sum(args[0], self.data_type)
        if got is None:
            return None
        total, valid = got
        return [total, pa.array(~valid)]

    def merge(self, buffers: Sequence[pa.Array], g: np.ndarray, n_groups: int
              ) -> list[pa.Array]:
        rt = self.data_type
        if isinstance(rt, T.DecimalType):
            return _merge_decimal_sums(buffers[0], _bool_np(buffers[1]), g, n_groups, rt)
        return [_sum(buffers[0], g, n_groups, rt, self.ansi)]

    def merge_identity(self, buffers: Sequence[pa.Array]) -> list[pa.Array] | None:
        if isinstance(self.data_type, T.DecimalType):
            ok = buffers[0].null_count == 0 and buffers[1].null_count == 0
            return list(buffers) if ok else None
        return list(buffers) if pa.types.is_integer(buffers[0].type) else None

    def evaluate(self, buffers: Sequence[pa.Array]) -> pa.Array:
        if not isinstance(self.data_type, T.DecimalType):
            return buffers[0]
        total, is_empty = buffers
        empty = _bool_np(is_empty)
        if self.ansi and ((~empty) & ~_valid(total)).any():
            raise _overflow(SUM_OVERFLOW)  # legacy: the NULL overflow marker stays
        if empty.any():
            total = pc.if_else(pa.array(empty), pa.nulls(len(total), total.type), total)
        return total

    def overflow_marked(self, buffers: Sequence[pa.Array]) -> bool:
        return buffers[0].null_count > 0 and _overflow_marked(buffers[0], pc.invert(buffers[1]))

    def check_input_types(self) -> str | None:
        t = self.child.data_type
        if not isinstance(t, (T.NumericType, T.NullType)):
            return _unexpected_type(1, _NUMERIC_REQUIRED, self.child)
        return None

    def implicit_cast_targets(self) -> tuple[T.DataType | None, ...]:
        return (_numeric_cast_target(self.child),)


@node
class Average(_EvalMode, _UnaryAgg):
    """``avg(x)`` / ``mean(x)``: double, or decimal(p+4, s+4) rounded HALF_UP for decimals."""

    child: Expression
    fn_name: str | None = field(default=None, compare=False)
    #: Spark's evalMode (see :class:`_EvalMode`)
    ansi: bool = True

    default_name: ClassVar[str] = "avg"

    @property
    def data_type(self) -> T.DataType:
        return average_result_type(self.child.data_type)

    @property
    def sum_type(self) -> T.DataType:
        """The type of the running sum (Spark's ``sumDataType``)."""
        return average_sum_type(self.child.data_type)

    def aggregate(self, args: Sequence[pa.Array], g: np.ndarray, n_groups: int) -> pa.Array:
        return _avg(args[0], g, n_groups, self.data_type, self.sum_type, self.ansi)

    def buffer_fields(self) -> tuple[BufferField, ...] | None:
        """``sum`` (double / decimal(p+10, s); decimal overflow as in ``sum``) and ``count``."""
        return (BufferField("sum", self.sum_type), BufferField("count", T.LONG, False))

    def update(self, args: Sequence[pa.Array], g: np.ndarray, n_groups: int) -> list[pa.Array]:
        arr = args[0]
        st = self.sum_type
        if isinstance(st, T.DecimalType):
            total, _ = _decimal_sum_buffers(arr, g, n_groups, st, None)
            return [total, _count_array(_nonnull_counts(arr, g, n_groups))]
        cnt = _nonnull_counts(arr, g, n_groups)
        return [_float_sum_buffer(arr, g, n_groups), _count_array(cnt)]

    def update_identity(self, args: Sequence[pa.Array]) -> list[pa.Array] | None:
        got = _identity_decimal_sum(args[0], self.sum_type)
        if got is None:
            return None
        total, valid = got
        return [total, _count_array(valid.astype(np.int64))]

    def merge(self, buffers: Sequence[pa.Array], g: np.ndarray, n_groups: int
              ) -> list[pa.Array]:
        st = self.sum_type
        c = buffers[1].to_numpy(zero_copy_only=False).astype(np.int64, copy=False)
        cnt = _group_add(c, g, n_groups) if len(c) else np.zeros(n_groups, np.int64)
        if isinstance(st, T.DecimalType):
            total, _ = _merge_decimal_sums(buffers[0], c == 0, g, n_groups, st)
            return [total, _count_array(cnt)]
        v = _float_values(buffers[0])
        sums = np.bincount(g, weights=v, minlength=n_groups) if len(v) else np.zeros(n_groups)
        return [pa.array(sums, type=pa.float64()), _count_array(cnt)]

    def merge_identity(self, buffers: Sequence[pa.Array]) -> list[pa.Array] | None:
        if isinstance(self.sum_type, T.DecimalType):
            ok = buffers[0].null_count == 0 and buffers[1].null_count == 0
            return list(buffers) if ok else None
        return None

    def evaluate(self, buffers: Sequence[pa.Array]) -> pa.Array:
        rt = self.data_type
        total, count = buffers
        cnt = count.to_numpy(zero_copy_only=False).astype(np.int64, copy=False)
        if isinstance(rt, T.DecimalType):
            over = (cnt != 0) & ~_valid(total)
            if self.ansi and over.any():
                raise _overflow(AVG_OVERFLOW)
            return _decimal_averages(_unscaled(total), np.where(over, 0, cnt),
                                     self.child.data_type.scale, rt, self.ansi)
        return _float_averages(_float_values(total), cnt, rt.to_arrow())

    def overflow_marked(self, buffers: Sequence[pa.Array]) -> bool:
        return buffers[0].null_count > 0 and _overflow_marked(buffers[0],
                                                              pc.not_equal(buffers[1], 0))

    def check_input_types(self) -> str | None:
        t = self.child.data_type
        if not isinstance(t, (T.NumericType, T.NullType)):
            return _unexpected_type(1, _NUMERIC_REQUIRED, self.child)
        return None

    def implicit_cast_targets(self) -> tuple[T.DataType | None, ...]:
        return (_numeric_cast_target(self.child),)


def _check_orderable(fn: str, child: Expression) -> str | None:
    if not child.data_type.is_orderable:
        from ember.expressions.common import TypeCheckFailure, sql_type

        st = sql_type(child.data_type)
        return TypeCheckFailure(
            f'The {fn} does not support ordering on type {st}.',
            "INVALID_ORDERING_TYPE",
            {"functionName": f"`{fn}`", "dataType": st},
        )
    return None


class _ExtremumBuffer(AggregateFunction):
    """min, max, bool_and, bool_or: one buffer column of the result type, named as Spark's
    (bool_and / bool_or are Spark's min / max of booleans); merge is the update over the buffer
    values (the first of equal values wins in both)."""

    __slots__ = ()
    buffer_name: ClassVar[str] = "min"
    duplicate_agnostic: ClassVar[bool] = True

    def _fold(self, arr: pa.Array, g: np.ndarray, n_groups: int) -> pa.Array:
        raise NotImplementedError

    def aggregate(self, args: Sequence[pa.Array], g: np.ndarray, n_groups: int) -> pa.Array:
        return self._fold(args[0], g, n_groups)

    def buffer_fields(self) -> tuple[BufferField, ...] | None:
        return (BufferField(self.buffer_name, self.data_type),)

    def update(self, args: Sequence[pa.Array], g: np.ndarray, n_groups: int) -> list[pa.Array]:
        return [self._fold(args[0], g, n_groups)]

    def merge(self, buffers: Sequence[pa.Array], g: np.ndarray, n_groups: int
              ) -> list[pa.Array]:
        return [self._fold(buffers[0], g, n_groups)]

    def update_identity(self, args: Sequence[pa.Array]) -> list[pa.Array] | None:
        return [args[0]]

    def merge_identity(self, buffers: Sequence[pa.Array]) -> list[pa.Array] | None:
        return list(buffers)

    def evaluate(self, buffers: Sequence[pa.Array]) -> pa.Array:
        return buffers[0]

    @property
    def chunk_mergeable(self) -> bool:
        return True


@node
class Min(_ExtremumBuffer, _UnaryAgg):
    """``min(x)`` over any orderable type; floating NaN is larger than every other value."""

    child: Expression
    fn_name: str | None = field(default=None, compare=False)

    default_name: ClassVar[str] = "min"

    @property
    def data_type(self) -> T.DataType:
        return self.child.data_type

    def check_input_types(self) -> str | None:
        return _check_orderable(self.pretty_name, self.child)

    def _fold(self, arr: pa.Array, g: np.ndarray, n_groups: int) -> pa.Array:
        return _min_max(arr, g, n_groups, largest=False)


@node
class Max(_ExtremumBuffer, _UnaryAgg):
    """``max(x)`` over any orderable type; floating NaN is larger than every other value."""

    child: Expression
    fn_name: str | None = field(default=None, compare=False)

    default_name: ClassVar[str] = "max"
    buffer_name: ClassVar[str] = "max"

    @property
    def data_type(self) -> T.DataType:
        return self.child.data_type

    def check_input_types(self) -> str | None:
        return _check_orderable(self.pretty_name, self.child)

    def _fold(self, arr: pa.Array, g: np.ndarray, n_groups: int) -> pa.Array:
        return _min_max(arr, g, n_groups, largest=True)


class _FirstLastBase(_UnaryAgg):
    """first, last, any_value: buffer ``first`` / ``last`` (the input type) and ``valueSet``;
    merge takes the first (last) buffer whose value is set."""

    __slots__ = ()
    ignore_nulls: bool
    buffer_name: ClassVar[str] = "first"
    #: the last row of the group instead of the first
    takes_last: ClassVar[bool] = False
    duplicate_agnostic: ClassVar[bool] = True

    @property
    def data_type(self) -> T.DataType:
        return self.child.data_type

    def agg_args_string(self) -> str:
        return f"{self.child.simple_string()}, {str(self.ignore_nulls).lower()}"

    def aggregate(self, args: Sequence[pa.Array], g: np.ndarray, n_groups: int) -> pa.Array:
        return _first_last(args[0], g, n_groups, self.ignore_nulls, last=self.takes_last)

    def buffer_fields(self) -> tuple[BufferField, ...] | None:
        return (BufferField(self.buffer_name, self.data_type),
                BufferField("valueSet", T.BOOLEAN, False))

    def update(self, args: Sequence[pa.Array], g: np.ndarray, n_groups: int) -> list[pa.Array]:
        pos = _first_last_positions(args[0], None, self.ignore_nulls, g, n_groups,
                                    last=self.takes_last)
        return [_take_or_null(args[0], pos), pa.array(pos >= 0)]

    def merge(self, buffers: Sequence[pa.Array], g: np.ndarray, n_groups: int
              ) -> list[pa.Array]:
        pos = _first_last_positions(buffers[0], buffers[1], self.ignore_nulls, g, n_groups,
                                    last=self.takes_last)
        return [_take_or_null(buffers[0], pos), pa.array(pos >= 0)]

    def evaluate(self, buffers: Sequence[pa.Array]) -> pa.Array:
        return buffers[0]

    @property
    def chunk_mergeable(self) -> bool:
        return True


@node
class First(_FirstLastBase):
    """``first(x[, ignoreNulls])``: the value of the first row of the group, in input order
    (with ``ignore_nulls`` the first non-NULL value).  Named ``first(x)`` either way."""

    child: Expression
    ignore_nulls: bool = False
    fn_name: str | None = field(default=None, compare=False)

    default_name: ClassVar[str] = "first"


@node
class Last(_FirstLastBase):
    """``last(x[, ignoreNulls])``: the value of the last row of the group, in input order."""

    child: Expression
    ignore_nulls: bool = False
    fn_name: str | None = field(default=None, compare=False)

    default_name: ClassVar[str] = "last"
    buffer_name: ClassVar[str] = "last"
    takes_last: ClassVar[bool] = True


@node
class AnyValue(_FirstLastBase):
    """``any_value(x[, ignoreNulls])``: Ember returns the first value, like ``first``."""

    child: Expression
    ignore_nulls: bool = False
    fn_name: str | None = field(default=None, compare=False)

    default_name: ClassVar[str] = "any_value"


@node
class BoolAnd(_ExtremumBuffer, _UnaryAgg):
    """``bool_and(p)`` / ``every(p)``: TRUE when every non-NULL value is TRUE."""

    child: Expression
    fn_name: str | None = field(default=None, compare=False)

    default_name: ClassVar[str] = "bool_and"

    @property
    def data_type(self) -> T.DataType:
        return T.BOOLEAN

    def check_input_types(self) -> str | None:
        if not isinstance(self.child.data_type, T.BooleanType):
            return _unexpected_type(1, '"BOOLEAN"', self.child)
        return None

    def implicit_cast_targets(self) -> tuple[T.DataType | None, ...]:
        return (_boolean_cast_target(self.child),)

    def _fold(self, arr: pa.Array, g: np.ndarray, n_groups: int) -> pa.Array:
        return _bool(arr, g, n_groups, conj=True)


@node
class BoolOr(_ExtremumBuffer, _UnaryAgg):
    """``bool_or(p)`` / ``some(p)`` / ``any(p)``: TRUE when some value is TRUE."""

    child: Expression
    fn_name: str | None = field(default=None, compare=False)

    default_name: ClassVar[str] = "bool_or"
    buffer_name: ClassVar[str] = "max"

    @property
    def data_type(self) -> T.DataType:
        return T.BOOLEAN

    def check_input_types(self) -> str | None:
        if not isinstance(self.child.data_type, T.BooleanType):
            return _unexpected_type(1, '"BOOLEAN"', self.child)
        return None

    def implicit_cast_targets(self) -> tuple[T.DataType | None, ...]:
        return (_boolean_cast_target(self.child),)

    def _fold(self, arr: pa.Array, g: np.ndarray, n_groups: int) -> pa.Array:
        return _bool(arr, g, n_groups, conj=False)


class _ByBase(AggregateFunction):
    """max_by, min_by: buffer ``valueWithExtremumOrdering`` and ``extremumOrdering``; ties go
    to the later row (buffer)."""

    __slots__ = ()
    value: Expression
    ordering: Expression
    #: max_by rather than min_by
    largest: ClassVar[bool] = True

    @property
    def data_type(self) -> T.DataType:
        return self.value.data_type

    def check_input_types(self) -> str | None:
        return _check_orderable(self.pretty_name, self.ordering)

    def aggregate(self, args: Sequence[pa.Array], g: np.ndarray, n_groups: int) -> pa.Array:
        return _by(args[0], args[1], g, n_groups, largest=self.largest)

    def buffer_fields(self) -> tuple[BufferField, ...] | None:
        return (BufferField("valueWithExtremumOrdering", self.value.data_type),
                BufferField("extremumOrdering", self.ordering.data_type))

    def update(self, args: Sequence[pa.Array], g: np.ndarray, n_groups: int) -> list[pa.Array]:
        pos = by_positions(args[1], g, n_groups, largest=self.largest)
        return [_take_or_null(args[0], pos), _take_or_null(args[1], pos)]

    def merge(self, buffers: Sequence[pa.Array], g: np.ndarray, n_groups: int
              ) -> list[pa.Array]:
        return self.update(buffers, g, n_groups)  # the buffers are (value, ordering) rows

    def evaluate(self, buffers: Sequence[pa.Array]) -> pa.Array:
        return buffers[0]

    @property
    def chunk_mergeable(self) -> bool:
        return True


@node
class MaxBy(_ByBase):
    """``max_by(value, ordering)``: ``value`` of the row with the largest non-NULL ``ordering``
    (ties: the last such row, as Spark)."""

    value: Expression
    ordering: Expression
    fn_name: str | None = field(default=None, compare=False)

    default_name: ClassVar[str] = "max_by"


@node
class MinBy(_ByBase):
    """``min_by(value, ordering)``: ``value`` of the row with the smallest non-NULL ``ordering``
    (ties: the last such row, as Spark)."""

    value: Expression
    ordering: Expression
    fn_name: str | None = field(default=None, compare=False)

    default_name: ClassVar[str] = "min_by"
    largest: ClassVar[bool] = False


# ---------------------------------------------------------------------------------------------
# AggregateExpression


@node
class AggregateExpression(Expression):
    """One aggregate call: ``func`` with DISTINCT / FILTER and a result id.

    Equality ignores ``id`` (two ``sum(a)`` calls are the same aggregate), so rules can match an
    aggregate in HAVING/ORDER BY to the one in the select list.
    """

    func: AggregateFunction
    is_distinct: bool = False
    filter: Expression | None = None
    id: int = field(default_factory=new_expr_id, compare=False)

    @property
    def data_type(self) -> T.DataType:
        return self.func.data_type

    @property
    def nullable(self) -> bool:
        return self.func.nullable

    @property
    def foldable(self) -> bool:
        return False

    @property
    def resolved(self) -> bool:
        if not self.func.resolved:
            return False
        if self.filter is not None:
            if not self.filter.resolved or not isinstance(self.filter.data_type, T.BooleanType):
                return False
        return True

    def check_input_types(self) -> str | None:
        return self.func.check_input_types()

    @property
    def pretty_name(self) -> str:
        return self.func.pretty_name

    def simple_string(self) -> str:
        s = self.func.to_agg_string(self.is_distinct)
        if self.filter is not None:
            s += f" FILTER (WHERE {self.filter.simple_string()})"
        return s

    def sql(self) -> str:
        s = self.func.agg_sql(self.is_distinct)
        if self.filter is not None:
            s += f" FILTER (WHERE {self.filter.sql()})"
        return s


# ---------------------------------------------------------------------------------------------
# Lookup by name


_DOC_ROOT = "https://spark.apache.org/docs/latest"

#: name -> (class, accepted argument counts, displayed expectation)
_SIMPLE: dict[str, tuple[type, str | None]] = {
    "sum": (Sum, None),
    "avg": (Average, None),
    "mean": (Average, "mean"),
    "min": (Min, None),
    "max": (Max, None),
    "count_if": (CountIf, None),
    "bool_and": (BoolAnd, None),
    "every": (BoolAnd, "every"),
    "bool_or": (BoolOr, None),
    "some": (BoolOr, "some"),
    "any": (BoolOr, "any"),
}

_FIRST_LAST: dict[str, tuple[type, str | None, str]] = {
    "first": (First, None, "first"),
    "first_value": (First, "first_value", "first"),
    "last": (Last, None, "last"),
    "last_value": (Last, "last_value", "last"),
    "any_value": (AnyValue, None, "any_value"),
}

_BY: dict[str, type] = {"max_by": MaxBy, "min_by": MinBy}

#: Every name :func:`lookup_aggregate` resolves (lower case).
AGGREGATE_FUNCTION_NAMES: frozenset[str] = frozenset(
    {"count"} | set(_SIMPLE) | set(_FIRST_LAST) | set(_BY)
)


def _wrong_num_args(name: str, expected: str, actual: int) -> AnalysisError:
    return AnalysisError(
        f"The `{name}` requires {expected} parameters but the actual number is {actual}. "
        f"Please, refer to '{_DOC_ROOT}/sql-ref-functions.html' for a fix.",
        error_class="WRONG_NUM_ARGS.WITHOUT_SUGGESTION",
        parameters={"functionName": f"`{name}`", "expectedNum": expected,
                    "actualNum": str(actual), "docroot": _DOC_ROOT},
    )


def _ignore_nulls_flag(e: Expression, fn: str) -> bool:
    if isinstance(e, Literal) and isinstance(e.dtype, T.BooleanType) and e.value is not None:
        return bool(e.value)
    raise AnalysisError(
        f"The second argument in {fn} should be a boolean literal.",
        error_class="_LEGACY_ERROR_TEMP_1210",
        parameters={"funcName": fn},
    )


def _check_filter(filter: Expression | None) -> None:
    if filter is None or not filter.resolved:
        return
    if not isinstance(filter.data_type, T.BooleanType):
        raise AnalysisError(
            f'The FILTER expression "{filter.sql()}" in an aggregate function is invalid. '
            "Expected a FILTER expression of the BOOLEAN type.",
            error_class="INVALID_AGGREGATE_FILTER.NOT_BOOLEAN",
            parameters={"filterExpr": f'"{filter.sql()}"'},
        )
    if filter.exists(lambda x: isinstance(x, AggregateExpression)):
        raise AnalysisError(
            f'The FILTER expression "{filter.sql()}" in an aggregate function is invalid. '
            "Expected a FILTER expression without an aggregation.",
            error_class="INVALID_AGGREGATE_FILTER.CONTAINS_AGGREGATE",
            parameters={"filterExpr": f'"{filter.sql()}"'},
        )
    if not filter.deterministic:
        raise AnalysisError(
            f'The FILTER expression "{filter.sql()}" in an aggregate function is invalid. '
            "Expected a FILTER expression to be deterministic.",
            error_class="INVALID_AGGREGATE_FILTER.NON_DETERMINISTIC",
            parameters={"filterExpr": f'"{filter.sql()}"'},
        )


def lookup_aggregate(
    name: str,
    args: tuple[Expression, ...],
    is_distinct: bool = False,
    filter: Expression | None = None,
    ignore_nulls: bool = False,
) -> AggregateExpression | None:
    """The aggregate call ``name(args)``, or None when ``name`` is not an aggregate function.

    Raises Spark's errors for a bad arity (``WRONG_NUM_ARGS.WITHOUT_SUGGESTION``), a non-literal
    ``ignoreNulls`` argument of first/last (``_LEGACY_ERROR_TEMP_1210``), ``IGNORE NULLS`` on a
    function without it (``INVALID_SQL_SYNTAX.FUNCTION_WITH_UNSUPPORTED_SYNTAX``) and a bad FILTER
    (``INVALID_AGGREGATE_FILTER.*``).

    >>> from ember.expressions.base import AttributeReference
    >>> a = AttributeReference("a", T.INT)
    >>> lookup_aggregate("count", (a,), is_distinct=True).sql()
    'count(DISTINCT a)'
    >>> lookup_aggregate("upper", (a,)) is None
    True
    """
    lname = name.lower()
    if lname not in AGGREGATE_FUNCTION_NAMES:
        return None
    args = tuple(args)
    func: AggregateFunction
    if ignore_nulls and lname not in _FIRST_LAST:
        raise AnalysisError(
            f"Invalid SQL syntax: The function `{lname}` does not support IGNORE NULLS.",
            error_class="INVALID_SQL_SYNTAX.FUNCTION_WITH_UNSUPPORTED_SYNTAX",
            parameters={"prettyName": f"`{lname}`", "syntax": "IGNORE NULLS"},
        )
    if lname == "count":
        if not args:
            raise AnalysisError(
                "The `count` requires  >= 1 parameters but the actual number is 0. If you have "
                "to call this function with 0 parameters, set the legacy configuration "
                '"spark.sql.legacy.allowParameterlessCount" to "true".',
                error_class="WRONG_NUM_ARGS.WITH_SUGGESTION",
                parameters={"functionName": "`count`", "expectedNum": " >= 1",
                            "actualNum": "0"},
            )
        if len(args) == 1 and isinstance(args[0], UnresolvedStar) and not args[0].target \
                and not is_distinct:
            args = (Literal(1, T.INT),)
        func = Count(args)
    elif lname in _SIMPLE:
        cls, alias = _SIMPLE[lname]
        if len(args) != 1:
            raise _wrong_num_args(lname, "1", len(args))
        func = cls(args[0], fn_name=alias)
    elif lname in _FIRST_LAST:
        cls, alias, msg_name = _FIRST_LAST[lname]
        if len(args) not in (1, 2):
            raise _wrong_num_args(lname, "[1, 2]", len(args))
        ign = ignore_nulls
        if len(args) == 2:
            ign = _ignore_nulls_flag(args[1], msg_name) or ignore_nulls
        func = cls(args[0], ign, fn_name=alias)
    else:
        cls = _BY[lname]
        if len(args) != 2:
            raise _wrong_num_args(lname, "2", len(args))
        func = cls(args[0], args[1])
    _check_filter(filter)
    return AggregateExpression(func, is_distinct, filter)
