"""Aggregate functions and the ``AggregateExpression`` wrapper (Catalyst's ``aggregate`` package).

An :class:`AggregateFunction` describes *what* is computed over a group of rows (``sum``, ``count``
...): its children are its arguments, it carries the result type and nullability, and it checks its
input types.  It is never evaluated row by row: it implements the evaluation protocol of
:class:`AggregateFunction` (COMPLETE ``aggregate``; ``buffer_fields`` / ``update`` / ``merge`` /
``evaluate`` for two-phase aggregation) with grouped, vectorized kernels
(:mod:`ember.expressions.aggregates.kernels`), which the aggregate operators call without knowing
which function they run.

One module per family: :mod:`.base` (the protocol, :class:`AggregateExpression`, shared type
checks), :mod:`.count`, :mod:`.sum_avg`, :mod:`.extremum` (min, max, bool_and, bool_or),
:mod:`.first_last` (first, last, any_value), :mod:`.by` (max_by, min_by), :mod:`.moments`
(stddev, variance, skewness, kurtosis, covar, corr, with their moment kernels),
:mod:`.regression` (regr_*), :mod:`.bitwise` (bit_and, bit_or, bit_xor), :mod:`.collect`
(collect_list / array_agg, collect_set, listagg / string_agg), :mod:`.percentiles` (percentile,
median, percentile_cont, percentile_disc, percentile_approx / approx_percentile, mode),
:mod:`.hll` (approx_count_distinct); :mod:`.kernels` holds
the NumPy/Arrow kernels they share; this module re-exports them and resolves names
(:func:`lookup_aggregate`).

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
alias is the ``fn_name`` field, excluded from equality (``mean(b) == avg(b)``).  As in Spark 4,
``array_agg(a)`` is named ``collect_list(a)`` and ``string_agg(s) WITHIN GROUP (...)``
``listagg(...)``.

``f(args) WITHIN GROUP (ORDER BY o)`` reaches :func:`lookup_aggregate` as ``f(args, o)`` with
the orderings as trailing ``SortOrder`` arguments (percentile_cont, percentile_disc,
``mode()``, listagg / string_agg take them; any other function raises
``INVALID_SQL_SYNTAX.FUNCTION_WITH_UNSUPPORTED_SYNTAX``).

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
/any
stddev_samp/stddev/std,         double (arguments cast to double); NULL without rows, and
stddev_pop, var_samp/variance,  var_samp/stddev_samp/covar_samp/corr of one row, skewness /
var_pop, skewness, kurtosis,    kurtosis of equal values, corr of a constant argument
covar_pop, covar_samp, corr
regr_count                      bigint, never NULL (rows where y and x are non-NULL)
regr_avgx, regr_avgy            avg's type of x / y (double, or decimal(p+4, s+4))
regr_sxx, regr_syy, regr_sxy,   double; regr_slope / regr_intercept NULL when x is constant,
regr_slope, regr_intercept,     regr_r2 NULL when x is constant, 1.0 when y is
regr_r2
bit_and, bit_or, bit_xor        the (integral) input type
collect_list/array_agg,         array<input type>, never NULL ([] on empty input)
collect_set
percentile, median,             double (an ANSI interval input keeps its type);
percentile_cont, percentile_    array<double> for an array of percentages; NULL on empty input
disc
percentile_approx /             the input type (numeric, date, timestamp, interval); array for
approx_percentile               an array of percentages
mode                            the input type
approx_count_distinct           bigint, never NULL (0 on empty input)
listagg/string_agg              string (binary for binary input); NULL on empty input
try_sum, try_avg                sum's / avg's type; NULL where sum / avg would overflow
product                         double; NULL on empty input
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
stddev, variance           n, avg, m2: double                      Spark's CentralMomentAgg;
(samp / pop), regr_sxx,                                            update per group (two-pass),
regr_syy                                                           merge: Chan's formulas
skewness, kurtosis         n, avg, m2, m3 [, m4]: double
covar_pop, covar_samp,     n, xAvg, yAvg, ck: double               Spark's Covariance
regr_sxy
corr, regr_r2              n, xAvg, yAvg, ck, xMk, yMk: double     PearsonCorrelation
regr_slope,                n, xAvg, yAvg, ck, n, avg, m2           covar_pop(x, y) and
regr_intercept                                                     var_pop(x) buffers
regr_count                 count: bigint                           count(y, x)
regr_avgx, regr_avgy       avg's buffers                           avg over both non-NULL
bit_and, bit_or, bit_xor   bit_and / bit_or / bit_xor: input type  NULL until a value
collect_list, collect_set  buf: array<input type>                  Spark: a binary ``buf``
percentile, median,        buf: array<struct<v: double,            merge concatenates; evaluate
percentile_cont/disc,      c: bigint>> (value, frequency)          sorts every group at once
percentile_approx                                                  (Spark: a GK sketch)
mode                       buf: array<input type>
approx_count_distinct      registers: array<int> (set registers    Spark: ``MS[0]`` ... packed
                           only, index * 64 + value)               longs
listagg                    buf: array<struct<v, o0, ...>> (value,
                           WITHIN GROUP keys)
try_sum(integral)          sum: bigint, isEmpty                    sum NULL and not isEmpty =
                                                                   overflow (the result NULL)
try_sum (other), try_avg   sum's / avg's (legacy)
product                    product: double                         NULL until a value
=========================  ======================================  ===========================

Implicit casts: the analyzer's type coercion asks :meth:`AggregateFunction.implicit_cast_targets`
(through :meth:`AggregateFunction.coerce_arguments`) which child to cast to which type (e.g.
``sum(string)`` -> ``sum(CAST(s AS DOUBLE))``, as Spark's ImplicitTypeCasts does for an expected
``NumericType``; ``stddev(int)`` -> ``stddev(CAST(i AS DOUBLE))``); names omit those casts.
"""

from __future__ import annotations

from ember import types as T
from ember.errors import AnalysisError, UnsupportedError
from ember.expressions.aggregates.base import (
    AggregateExpression,
    AggregateFunction,
    BufferField,
)
from ember.expressions.aggregates.bitwise import BitAndAgg, BitOrAgg, BitXorAgg
from ember.expressions.aggregates.by import MaxBy, MinBy
from ember.expressions.aggregates.collect import CollectList, CollectSet, ListAgg
from ember.expressions.aggregates.count import Count, CountIf
from ember.expressions.aggregates.extremum import BoolAnd, BoolOr, Max, Min
from ember.expressions.aggregates.first_last import AnyValue, First, Last
from ember.expressions.aggregates.moments import (
    Corr,
    CovPopulation,
    CovSample,
    Kurtosis,
    Skewness,
    StddevPop,
    StddevSamp,
    VariancePop,
    VarianceSamp,
)
from ember.expressions.aggregates.regression import (
    RegrAvgX,
    RegrAvgY,
    RegrCount,
    RegrIntercept,
    RegrR2,
    RegrSlope,
    RegrSXX,
    RegrSXY,
    RegrSYY,
)
from ember.expressions.aggregates.hll import ApproxCountDistinct, approx_count_distinct
from ember.expressions.aggregates.try_product import Product, TryAverage, TrySum
from ember.expressions.aggregates.percentiles import (
    ApproxPercentile,
    Median,
    Mode,
    Percentile,
    PercentileCont,
    PercentileDisc,
)
from ember.expressions.aggregates.sum_avg import (
    Average,
    Sum,
    average_result_type,
    average_sum_type,
    sum_result_type,
)
from ember.expressions.base import Expression, Literal, SortOrder, UnresolvedStar

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
    "StddevSamp",
    "StddevPop",
    "VarianceSamp",
    "VariancePop",
    "Skewness",
    "Kurtosis",
    "CovPopulation",
    "CovSample",
    "Corr",
    "RegrCount",
    "RegrAvgX",
    "RegrAvgY",
    "RegrSXX",
    "RegrSYY",
    "RegrSXY",
    "RegrSlope",
    "RegrIntercept",
    "RegrR2",
    "BitAndAgg",
    "BitOrAgg",
    "BitXorAgg",
    "CollectList",
    "CollectSet",
    "Percentile",
    "Median",
    "PercentileCont",
    "PercentileDisc",
    "ApproxPercentile",
    "Mode",
    "ApproxCountDistinct",
    "ListAgg",
    "lookup_aggregate",
    "sum_result_type",
    "average_result_type",
    "average_sum_type",
    "AGGREGATE_FUNCTION_NAMES",
]


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
    "stddev_samp": (StddevSamp, None),
    "stddev": (StddevSamp, "stddev"),
    "std": (StddevSamp, "std"),
    "stddev_pop": (StddevPop, None),
    "var_samp": (VarianceSamp, None),
    "variance": (VarianceSamp, "variance"),
    "var_pop": (VariancePop, None),
    "skewness": (Skewness, None),
    "kurtosis": (Kurtosis, None),
    "bit_and": (BitAndAgg, None),
    "bit_or": (BitOrAgg, None),
    "bit_xor": (BitXorAgg, None),
    # issue 22: try_sum, try_avg, product (aggregates.try_product); product is no
    # SQL function in Spark, only pyspark.sql.functions.product: a name SQL text cannot call
    "try_sum": (TrySum, None),
    "try_avg": (TryAverage, None),
    "(product)": (Product, "product"),
}

#: functions of two arguments (``regr_*(y, x)``, ``corr(x, y)`` ...)
_PAIR: dict[str, type] = {
    "covar_pop": CovPopulation,
    "covar_samp": CovSample,
    "corr": Corr,
    "regr_count": RegrCount,
    "regr_avgx": RegrAvgX,
    "regr_avgy": RegrAvgY,
    "regr_sxx": RegrSXX,
    "regr_syy": RegrSYY,
    "regr_sxy": RegrSXY,
    "regr_slope": RegrSlope,
    "regr_intercept": RegrIntercept,
    "regr_r2": RegrR2,
}

_FIRST_LAST: dict[str, tuple[type, str | None, str]] = {
    "first": (First, None, "first"),
    "first_value": (First, "first_value", "first"),
    "last": (Last, None, "last"),
    "last_value": (Last, "last_value", "last"),
    "any_value": (AnyValue, None, "any_value"),
}

_BY: dict[str, type] = {"max_by": MaxBy, "min_by": MinBy}


def _mode(args: tuple[Expression, ...]) -> AggregateFunction:
    """``mode(x)``; ``mode(x, deterministic)`` with a boolean literal (true: the smallest of
    equally frequent values, as ``mode() WITHIN GROUP (ORDER BY x)``)."""
    if len(args) == 2:
        d = args[1]
        if not isinstance(d.data_type, T.BooleanType):
            raise AnalysisError(
                f'Parameter second of function `mode` requires the "BOOLEAN" type, however '
                f'"{d.sql()}" has the type "{d.data_type.simple_string().upper()}".',
                error_class="UNEXPECTED_INPUT_TYPE",
                parameters={"paramIndex": "second", "functionName": "`mode`",
                            "requiredType": '"BOOLEAN"', "inputSql": f'"{d.sql()}"',
                            "inputType": f'"{d.data_type.simple_string().upper()}"'})
        if not isinstance(d, Literal):
            raise AnalysisError(
                "The function `mode` requires the parameter `deterministic` to be a foldable "
                'expression of the type "BOOLEAN", but the actual argument is a non-foldable.',
                error_class="NON_FOLDABLE_ARGUMENT",
                parameters={"funcName": "`mode`", "paramName": "`deterministic`",
                            "paramType": '"BOOLEAN"'})
        return Mode(args[0], False if d.value else None)
    return Mode(args[0])


#: Collection and order-statistic aggregates: name -> (accepted argument counts, displayed
#: expectation, builder from the arguments)
_COLLECTION: dict[str, tuple[tuple[int, ...], str, object]] = {
    "collect_list": ((1,), "1", lambda a: CollectList(a[0])),
    "array_agg": ((1,), "1", lambda a: CollectList(a[0])),
    "collect_set": ((1,), "1", lambda a: CollectSet(a[0])),
    "percentile": ((2, 3), "[2, 3]", lambda a: Percentile(*a)),
    "median": ((1,), "1", lambda a: Median(a[0])),
    "percentile_approx": ((2, 3), "[2, 3]", lambda a: ApproxPercentile(*a)),
    "approx_percentile": ((2, 3), "[2, 3]",
                          lambda a: ApproxPercentile(*a, fn_name="approx_percentile")),
    "mode": ((1, 2), "[1, 2]", _mode),
    "approx_count_distinct": ((1, 2), "[1, 2]", approx_count_distinct),
    "listagg": ((1, 2), "[1, 2]", lambda a: _listagg(a, ())),
    "string_agg": ((1, 2), "[1, 2]", lambda a: _listagg(a, (), "string_agg")),
}


def _listagg(args: tuple[Expression, ...], orders: tuple[SortOrder, ...],
             alias: str | None = None) -> AggregateFunction:
    delimiter = args[1] if len(args) == 2 else Literal(None, T.NULL)
    return ListAgg(args[0], delimiter, tuple(o.child for o in orders),
                   tuple(o.ascending for o in orders),
                   tuple(o.effective_nulls_first for o in orders),
                   fn_name=None if orders else alias)


def _within_group_error(name: str, sub: str, message: str, **params: str) -> AnalysisError:
    return AnalysisError(
        f"Invalid function `{name}` with WITHIN GROUP. {message}",
        error_class=f"INVALID_WITHIN_GROUP_EXPRESSION.{sub}",
        parameters={"funcName": f"`{name}`", **params},
    )


def _within_group(lname: str, args: tuple[Expression, ...], orders: tuple[SortOrder, ...],
                  is_distinct: bool) -> AggregateFunction | None:
    """The function of ``lname(args) WITHIN GROUP (ORDER BY orders)`` (``orders`` empty when
    the call has no such clause), or None when ``lname`` takes no WITHIN GROUP."""
    if lname == "mode" and args:
        if orders:  # mode(x) WITHIN GROUP (...)
            raise _within_group_error(
                lname, "WRONG_NUM_ORDERINGS",
                f"The function requires 0 orderings in WITHIN GROUP but got {len(orders)}.",
                expectedNum="0", actualNum=str(len(orders)))
        return None  # mode(x [, deterministic])
    if lname in ("percentile_cont", "percentile_disc", "mode"):
        if not orders:
            raise _within_group_error(lname, "WITHIN_GROUP_MISSING",
                                      "WITHIN GROUP is required for the function.")
        if lname != "mode" and len(args) != 1:
            raise _wrong_num_args(lname, "1", len(args))
        if len(orders) != 1:
            shown = "Mode" if lname == "mode" else lname
            raise _within_group_error(
                shown, "WRONG_NUM_ORDERINGS",
                f"The function requires 1 orderings in WITHIN GROUP but got {len(orders)}.",
                expectedNum="1", actualNum=str(len(orders)))
        o = orders[0]
        if lname == "mode":
            return Mode(o.child, not o.ascending)
        cls = PercentileCont if lname == "percentile_cont" else PercentileDisc
        return cls(o.child, args[0], not o.ascending)
    if lname in ("listagg", "string_agg") and orders:
        if len(args) not in (1, 2):
            raise _wrong_num_args(lname, "[1, 2]", len(args))
        if is_distinct and any(o.child != args[0] for o in orders):
            raise _within_group_error(
                lname, "MISMATCH_WITH_DISTINCT_INPUT",
                "The function is invoked with DISTINCT and WITHIN GROUP but expressions "
                f'"{args[0].sql()}" and "{", ".join(o.child.sql() for o in orders)}" do not '
                "match. The WITHIN GROUP ordering expression must be picked from the function "
                "inputs.",
                funcArg=f'"{args[0].sql()}"',
                orderingExpr=f'"{", ".join(o.child.sql() for o in orders)}"')
        return _listagg(args, orders)
    return None

#: Functions that take ``WITHIN GROUP (ORDER BY ...)``
_WITHIN_GROUP_NAMES = frozenset({"percentile_cont", "percentile_disc", "mode", "listagg",
                                 "string_agg"})

#: Every name :func:`lookup_aggregate` resolves (lower case).
AGGREGATE_FUNCTION_NAMES: frozenset[str] = frozenset(
    {"count"} | set(_SIMPLE) | set(_FIRST_LAST) | set(_BY) | set(_PAIR) | set(_COLLECTION)
    | {"percentile_cont", "percentile_disc"}
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
    args = tuple(args)
    # ``f(...) WITHIN GROUP (ORDER BY ...)``: the parser appends the orderings as SortOrders
    n_plain = len(args)
    while n_plain and isinstance(args[n_plain - 1], SortOrder):
        n_plain -= 1
    args, orders = args[:n_plain], args[n_plain:]
    if orders and lname not in _WITHIN_GROUP_NAMES:
        raise AnalysisError(
            f"Invalid SQL syntax: The function `{lname}` does not support WITHIN GROUP (ORDER BY "
            "...).",
            error_class="INVALID_SQL_SYNTAX.FUNCTION_WITH_UNSUPPORTED_SYNTAX",
            parameters={"prettyName": f"`{lname}`", "syntax": "WITHIN GROUP (ORDER BY ...)"},
        )
    if lname not in AGGREGATE_FUNCTION_NAMES:
        return None
    func: AggregateFunction
    if ignore_nulls and lname not in _FIRST_LAST:
        raise AnalysisError(
            f"Invalid SQL syntax: The function `{lname}` does not support IGNORE NULLS.",
            error_class="INVALID_SQL_SYNTAX.FUNCTION_WITH_UNSUPPORTED_SYNTAX",
            parameters={"prettyName": f"`{lname}`", "syntax": "IGNORE NULLS"},
        )
    within = (_within_group(lname, args, orders, is_distinct)
              if lname in _WITHIN_GROUP_NAMES else None)
    if within is not None:
        func = within
    elif lname == "count":
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
    elif lname in _PAIR:
        if len(args) != 2:
            raise _wrong_num_args(lname, "2", len(args))
        func = _PAIR[lname](args[0], args[1])
    elif lname in _COLLECTION:
        counts, expected, build = _COLLECTION[lname]
        if len(args) not in counts:
            raise _wrong_num_args(lname, expected, len(args))
        func = build(args)
    else:
        cls = _BY[lname]
        if len(args) not in (2, 3):
            raise _wrong_num_args(lname, "[2, 3]", len(args))
        if len(args) == 3:
            raise UnsupportedError(f"{lname} with a third argument (the top-k array form) is "
                                   "not supported yet")
        func = cls(args[0], args[1])
    _check_filter(filter)
    return AggregateExpression(func, is_distinct, filter)
