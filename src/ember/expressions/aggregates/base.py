"""The base of aggregate functions: the evaluation protocol (:class:`AggregateFunction`), its
buffer description (:class:`BufferField`), the type checks the functions share, and the
:class:`AggregateExpression` wrapper of one call."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar

import numpy as np
import pyarrow as pa

from ember import types as T
from ember.errors import InternalError, UnsupportedError
from ember.expressions.base import AttributeReference, Expression, new_expr_id
from ember.expressions.cast import Cast
from ember.expressions.common import TypeCheckFailure, sql_type, unexpected_input_type
from ember.trees import node


# ---------------------------------------------------------------------------------------------
# Type checks (messages as Spark's DATATYPE_MISMATCH.UNEXPECTED_INPUT_TYPE)


def _unexpected_type(index: int, required: str, e: Expression) -> str:
    return unexpected_input_type(index, required, e)


_NUMERIC_REQUIRED = '"NUMERIC" or "ANSI INTERVAL"'


def _check_orderable(fn: str, child: Expression) -> str | None:
    if not child.data_type.is_orderable:
        st = sql_type(child.data_type)
        return TypeCheckFailure(
            f'The {fn} does not support ordering on type {st}.',
            "INVALID_ORDERING_TYPE",
            {"functionName": f"`{fn}`", "dataType": st},
        )
    return None


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

    def coerce_arguments(self, legacy: bool) -> Expression:
        """The function with :meth:`implicit_cast_targets` applied (the hook the analyzer's type
        coercion, :func:`ember.coercion.coerce_expression`, calls), or itself.  ``legacy``
        (``spark.sql.ansi.enabled=false``): Spark's TypeCoercion casts no string to BOOLEAN
        implicitly (``bool_and('true')`` is a type error there)."""
        targets = self.implicit_cast_targets()
        if legacy:
            targets = tuple(None if t == T.BOOLEAN and isinstance(c.data_type, T.StringType)
                            else t for c, t in zip(self.children, targets))
        if all(t is None for t in targets):
            return self
        kids = tuple(c if t is None or c.data_type == t else Cast(c, t)
                     for c, t in zip(self.children, targets))
        return self.with_children(kids)

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

    def reads_values(self, args: Sequence[Expression], is_distinct: bool) -> bool:
        """Whether :meth:`aggregate` needs the values of ``args`` (the arguments as the operator
        evaluates them: bound, constants folded); False lets the operator pass no argument
        columns (``count(1)`` counts rows)."""
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
        Spark's ANSI errors where the result does.  By default the first buffer column, as
        Spark's ``evaluateExpression`` of most functions is their first buffer attribute."""
        return buffers[0]

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


class _UnaryAgg(AggregateFunction):
    __slots__ = ()
    child: Expression


class _BooleanInput(_UnaryAgg):
    """A function of one BOOLEAN argument (count_if, bool_and, bool_or); a string or NULL
    argument is cast implicitly."""

    __slots__ = ()

    def check_input_types(self) -> str | None:
        if not isinstance(self.child.data_type, T.BooleanType):
            return _unexpected_type(1, '"BOOLEAN"', self.child)
        return None

    def implicit_cast_targets(self) -> tuple[T.DataType | None, ...]:
        return (_boolean_cast_target(self.child),)


class _NumericInput(_UnaryAgg):
    """A function of one numeric (or ANSI interval) argument (sum, avg); a string or NULL
    argument is cast implicitly to double."""

    __slots__ = ()

    def check_input_types(self) -> str | None:
        t = self.child.data_type
        if not isinstance(t, (T.NumericType, T.NullType)):
            return _unexpected_type(1, _NUMERIC_REQUIRED, self.child)
        return None

    def implicit_cast_targets(self) -> tuple[T.DataType | None, ...]:
        return (_numeric_cast_target(self.child),)


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
