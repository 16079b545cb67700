"""Aggregate functions and the ``AggregateExpression`` wrapper (Catalyst's ``aggregate`` package).

An :class:`AggregateFunction` describes *what* is computed over a group of rows (``sum``, ``count``
...): its children are its arguments, it carries the result type and nullability, and it checks its
input types.  It is never evaluated row by row: the aggregate operator
(:mod:`ember.execution.aggregate`) computes it with grouped, vectorized kernels.

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

Implicit casts: the analyzer's type coercion asks :meth:`AggregateFunction.implicit_cast_targets`
which child to cast to which type (e.g. ``sum(string)`` -> ``sum(CAST(s AS DOUBLE))``, as Spark's
ImplicitTypeCasts does for an expected ``NumericType``).
"""

from __future__ import annotations

from dataclasses import field
from typing import Any, ClassVar

from ember import types as T
from ember.errors import AnalysisError, InternalError
from ember.expressions.base import (
    Expression,
    Literal,
    UnresolvedStar,
    new_expr_id,
)
from ember.trees import TreeNode, node

__all__ = [
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


class AggregateFunction(Expression):
    """Base of aggregate functions.  Children are the arguments; never evaluated directly.

    ``default_name`` is the function's SQL name; a subclass instance called through an alias keeps
    that alias in ``fn_name`` (excluded from equality) and displays it.
    """

    __slots__ = ()
    default_name: ClassVar[str] = "?"
    #: Value on empty input when it is not NULL (``count`` -> 0).  Used by rewrites that must
    #: restore the empty-input result (RewriteDistinctAggregates, the COUNT bug).
    default_result: ClassVar[Any] = None

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
class Count(AggregateFunction):
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


@node
class CountIf(_UnaryAgg):
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


@node
class Min(_UnaryAgg):
    """``min(x)`` over any orderable type; floating NaN is larger than every other value."""

    child: Expression
    fn_name: str | None = field(default=None, compare=False)

    default_name: ClassVar[str] = "min"

    @property
    def data_type(self) -> T.DataType:
        return self.child.data_type

    def check_input_types(self) -> str | None:
        return _check_orderable(self.pretty_name, self.child)


@node
class Max(_UnaryAgg):
    """``max(x)`` over any orderable type; floating NaN is larger than every other value."""

    child: Expression
    fn_name: str | None = field(default=None, compare=False)

    default_name: ClassVar[str] = "max"

    @property
    def data_type(self) -> T.DataType:
        return self.child.data_type

    def check_input_types(self) -> str | None:
        return _check_orderable(self.pretty_name, self.child)


class _FirstLastBase(_UnaryAgg):
    __slots__ = ()
    ignore_nulls: bool

    @property
    def data_type(self) -> T.DataType:
        return self.child.data_type

    def agg_args_string(self) -> str:
        return f"{self.child.simple_string()}, {str(self.ignore_nulls).lower()}"


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


@node
class AnyValue(_FirstLastBase):
    """``any_value(x[, ignoreNulls])``: Ember returns the first value, like ``first``."""

    child: Expression
    ignore_nulls: bool = False
    fn_name: str | None = field(default=None, compare=False)

    default_name: ClassVar[str] = "any_value"


@node
class BoolAnd(_UnaryAgg):
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


@node
class BoolOr(_UnaryAgg):
    """``bool_or(p)`` / ``some(p)`` / ``any(p)``: TRUE when some value is TRUE."""

    child: Expression
    fn_name: str | None = field(default=None, compare=False)

    default_name: ClassVar[str] = "bool_or"

    @property
    def data_type(self) -> T.DataType:
        return T.BOOLEAN

    def check_input_types(self) -> str | None:
        if not isinstance(self.child.data_type, T.BooleanType):
            return _unexpected_type(1, '"BOOLEAN"', self.child)
        return None

    def implicit_cast_targets(self) -> tuple[T.DataType | None, ...]:
        return (_boolean_cast_target(self.child),)


class _ByBase(AggregateFunction):
    __slots__ = ()
    value: Expression
    ordering: Expression

    @property
    def data_type(self) -> T.DataType:
        return self.value.data_type

    def check_input_types(self) -> str | None:
        return _check_orderable(self.pretty_name, self.ordering)


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
