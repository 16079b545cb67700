"""PySpark's ``pyspark.sql.functions`` for Ember.

Every function builds the same unresolved call the SQL parser builds for the same text
(``UnresolvedFunction('sum', (b,))`` for ``sum(b)``), so SQL and DataFrame code are resolved,
type-checked and named by one registry in the analyzer.

>>> from ember import functions as F
>>> F.sum("b").expr
'sum('b)
"""

from __future__ import annotations

import ast
import inspect
import warnings
from typing import TYPE_CHECKING, Any

from ember import types as T
from ember.column import (
    Column,
    _col_or_name,
    _expr_class,
    column_from_name,
    literal_expr,
    to_expr,
)
from ember.errors import AnalysisError, EmberError, UnsupportedError
from ember.expressions.base import Expression, Literal, UnresolvedFunction, UnresolvedStar
from ember.expressions.higher_order import LambdaFunction, UnresolvedNamedLambdaVariable
from ember.expressions.json_functions import OptionsLiteral, SchemaLiteral
from ember.expressions.time_window import TimeWindow, window_durations
from ember.session import Session
from ember import udf as _udf
from ember import udtf as _udtf
from ember.sql import parse_expression
from ember.sql.parser import parse_data_type
from ember.sql.schema_ddl import parse_ddl_schema

if TYPE_CHECKING:  # pragma: no cover
    from ember.dataframe import DataFrame

__all__ = [
    "col", "column", "lit", "expr", "when", "coalesce", "count", "countDistinct",
    "count_distinct", "sum", "sum_distinct", "sumDistinct", "avg", "mean", "min", "max", "first",
    "last", "count_if", "upper", "lower", "length", "substring", "concat", "concat_ws", "trim",
    "ltrim", "rtrim", "round", "floor", "ceil", "abs", "sqrt", "year", "month", "dayofmonth",
    "to_date", "to_timestamp", "date_format", "date_add", "date_sub", "datediff", "current_date",
    "current_timestamp", "greatest", "least", "isnull", "isnotnull", "nullif", "broadcast", "asc",
    "desc", "asc_nulls_first", "asc_nulls_last", "desc_nulls_first", "desc_nulls_last", "struct",
    "ifnull", "nvl", "regexp_extract", "regexp_replace", "rlike", "regexp_like", "ilike",
    "window", "grouping", "grouping_id", "row_number", "rank", "dense_rank", "percent_rank", "cume_dist", "ntile", "lag",
    "lead", "nth_value",
    "udf", "pandas_udf", "PandasUDFType", "udtf", "call_function", "call_udf",
]

def _call(name: str, *args: Any, is_distinct: bool = False, ignore_nulls: bool = False) -> Column:
    """``name(args...)`` where string arguments are column names."""
    return Column(UnresolvedFunction(name, tuple(_col_or_name(a) for a in args),
                                     is_distinct=is_distinct, ignore_nulls=ignore_nulls))


def _lit_arg(value: Any) -> Expression:
    """An argument that PySpark always treats as a literal (e.g. ``substring``'s ``pos``)."""
    return to_expr(value)


# -- columns and literals -------------------------------------------------------------------


def col(name: str) -> Column:
    """A column by name: ``col("a")``, ``col("t.a")``, ``col("*")``."""
    return column_from_name(name)


column = col


def lit(value: Any) -> Column:
    """A literal: ``lit(1)`` (int), ``lit(1.5)`` (double), ``lit("x")``, ``lit(None)``."""
    if isinstance(value, Column):
        return value
    return Column(literal_expr(value))


def expr(sql: str) -> Column:
    """A column from SQL expression text: ``expr("a + 1")``, parsed now, as in Spark: a TIMESTAMP
    literal in it is read in the active session's time zone."""
    active = Session.getActiveSession()
    return Column(parse_expression(sql, active.sql_conf.time_zone) if active else
                  parse_expression(sql))


def when(condition: Column, value: Any) -> Column:
    """``CASE WHEN condition THEN value ... END``; chain ``.when(...)`` / ``.otherwise(...)``."""
    case_cls = _expr_class("conditional", "CaseWhen")
    return Column(case_cls((to_expr(condition),), (to_expr(value),), None))


# -- aggregates -----------------------------------------------------------------------------


def _is_star(value: Any) -> bool:
    return (value == "*" if isinstance(value, str) else
            isinstance(value, Column) and isinstance(value.expr, UnresolvedStar) and
            not value.expr.target)


def count(col: Any) -> Column:
    """``count(col)``; ``count("*")`` counts rows and is named ``count(1)`` as in Spark."""
    if _is_star(col):
        return Column(UnresolvedFunction("count", (Literal(1, T.INT),)))
    return _call("count", col)


def countDistinct(col: Any, *cols: Any) -> Column:  # noqa: N802
    """``count(DISTINCT col, ...)``."""
    return _call("count", col, *cols, is_distinct=True)


count_distinct = countDistinct


def sum(col: Any) -> Column:  # noqa: A001
    return _call("sum", col)


def sum_distinct(col: Any) -> Column:
    return _call("sum", col, is_distinct=True)


sumDistinct = sum_distinct


def avg(col: Any) -> Column:
    return _call("avg", col)


def mean(col: Any) -> Column:
    return _call("avg", col)


def min(col: Any) -> Column:  # noqa: A001
    return _call("min", col)


def max(col: Any) -> Column:  # noqa: A001
    return _call("max", col)


def first(col: Any, ignorenulls: bool = False) -> Column:
    """``first(col)`` (``first(col) IGNORE NULLS`` with ``ignorenulls=True``)."""
    return _call("first", col, ignore_nulls=ignorenulls)


def last(col: Any, ignorenulls: bool = False) -> Column:
    return _call("last", col, ignore_nulls=ignorenulls)


def count_if(col: Any) -> Column:
    return _call("count_if", col)


def _pair(name: str, first: str, second: str, doc: str) -> Any:
    """An aggregate of two columns with PySpark's parameter names (``corr(col1, col2)``,
    ``regr_slope(y, x)``)."""
    def fn(a: Any, b: Any) -> Column:
        return _call(name, a, b)

    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = doc
    a, b = inspect.signature(fn).parameters.values()
    fn.__signature__ = inspect.Signature(  # type: ignore[attr-defined]
        [a.replace(name=first), b.replace(name=second)], return_annotation="Column")
    return fn


covar_pop = _pair("covar_pop", "col1", "col2", "Population covariance of two columns.")
covar_samp = _pair("covar_samp", "col1", "col2", "Sample covariance of two columns.")
corr = _pair("corr", "col1", "col2", "Pearson correlation coefficient of two columns.")
regr_count = _pair("regr_count", "y", "x", "Rows where both ``y`` and ``x`` are non-NULL.")
regr_avgx = _pair("regr_avgx", "y", "x", "Average of ``x`` where both are non-NULL.")
regr_avgy = _pair("regr_avgy", "y", "x", "Average of ``y`` where both are non-NULL.")
regr_sxx = _pair("regr_sxx", "y", "x", "``sum((x - avg(x))^2)`` where both are non-NULL.")
regr_syy = _pair("regr_syy", "y", "x", "``sum((y - avg(y))^2)`` where both are non-NULL.")
regr_sxy = _pair("regr_sxy", "y", "x",
                 "``sum((x - avg(x)) * (y - avg(y)))`` where both are non-NULL.")
regr_slope = _pair("regr_slope", "y", "x", "Slope of the least-squares line of ``y`` on ``x``.")
regr_intercept = _pair("regr_intercept", "y", "x",
                       "Intercept of the least-squares line of ``y`` on ``x``.")
regr_r2 = _pair("regr_r2", "y", "x", "Coefficient of determination of ``y`` on ``x``.")


def max_by(col: Any, ord: Any, k: int | None = None) -> Column:  # noqa: A002
    """``max_by(col, ord)``: ``col`` of the row with the largest ``ord``."""
    return _call("max_by", col, ord) if k is None else \
        Column(UnresolvedFunction("max_by", (_col_or_name(col), _col_or_name(ord),
                                             literal_expr(k))))


def min_by(col: Any, ord: Any, k: int | None = None) -> Column:  # noqa: A002
    """``min_by(col, ord)``: ``col`` of the row with the smallest ``ord``."""
    return _call("min_by", col, ord) if k is None else \
        Column(UnresolvedFunction("min_by", (_col_or_name(col), _col_or_name(ord),
                                             literal_expr(k))))


# -- strings --------------------------------------------------------------------------------


def upper(col: Any) -> Column:
    return _call("upper", col)


def lower(col: Any) -> Column:
    return _call("lower", col)


def length(col: Any) -> Column:
    return _call("length", col)


def substring(str: Any, pos: Any, len: Any) -> Column:  # noqa: A002
    """``substring(str, pos, len)`` with 1-based ``pos`` (literals, as in PySpark)."""
    return Column(UnresolvedFunction("substring", (_col_or_name(str), _lit_arg(pos),
                                                   _lit_arg(len))))


def concat(*cols: Any) -> Column:
    return _call("concat", *cols)


def concat_ws(sep: str, *cols: Any) -> Column:
    return Column(UnresolvedFunction("concat_ws", (literal_expr(sep),) +
                                     tuple(_col_or_name(c) for c in cols)))


def trim(col: Any) -> Column:
    return _call("trim", col)


def ltrim(col: Any) -> Column:
    return _call("ltrim", col)


def rtrim(col: Any) -> Column:
    return _call("rtrim", col)


# -- math -----------------------------------------------------------------------------------


def round(col: Any, scale: int = 0) -> Column:  # noqa: A001
    """``round(col, scale)`` (HALF_UP), named ``round(b, 0)`` by default as in Spark 4."""
    return Column(UnresolvedFunction("round", (_col_or_name(col), _lit_arg(scale))))


def floor(col: Any) -> Column:
    return _call("floor", col)


def ceil(col: Any) -> Column:
    return _call("ceil", col)


def abs(col: Any) -> Column:  # noqa: A001
    return _call("abs", col)


def sqrt(col: Any) -> Column:
    return _call("sqrt", col)


# -- dates ----------------------------------------------------------------------------------


def year(col: Any) -> Column:
    return _call("year", col)


def month(col: Any) -> Column:
    return _call("month", col)


def dayofmonth(col: Any) -> Column:
    return _call("dayofmonth", col)


def to_date(col: Any, format: str | None = None) -> Column:  # noqa: A002
    if format is None:
        return _call("to_date", col)
    return Column(UnresolvedFunction("to_date", (_col_or_name(col), literal_expr(format))))


def to_timestamp(col: Any, format: str | None = None) -> Column:  # noqa: A002
    if format is None:
        return _call("to_timestamp", col)
    return Column(UnresolvedFunction("to_timestamp", (_col_or_name(col), literal_expr(format))))


def date_format(date: Any, format: str) -> Column:  # noqa: A002
    return Column(UnresolvedFunction("date_format", (_col_or_name(date), literal_expr(format))))


def date_add(start: Any, days: Any) -> Column:
    return Column(UnresolvedFunction("date_add", (_col_or_name(start), _lit_arg(days))))


def date_sub(start: Any, days: Any) -> Column:
    return Column(UnresolvedFunction("date_sub", (_col_or_name(start), _lit_arg(days))))


def datediff(end: Any, start: Any) -> Column:
    return _call("datediff", end, start)


def current_date() -> Column:
    return Column(UnresolvedFunction("current_date", ()))


def current_timestamp() -> Column:
    return Column(UnresolvedFunction("current_timestamp", ()))


# -- conditional / null handling ------------------------------------------------------------


def grouping(col: Any) -> Column:
    """``grouping(col)``: 1 where ``col`` is not in the row's grouping set (rollup / cube /
    groupingSets), else 0."""
    return _call("grouping", col)


def grouping_id(*cols: Any) -> Column:
    """``grouping_id(cols...)``: the grouping id (one bit per grouping column, the first the most
    significant; 1 where the column is not grouped)."""
    return _call("grouping_id", *cols)


def coalesce(*cols: Any) -> Column:
    return _call("coalesce", *cols)


def greatest(*cols: Any) -> Column:
    return _call("greatest", *cols)


def least(*cols: Any) -> Column:
    return _call("least", *cols)


def isnull(col: Any) -> Column:
    return _call("isnull", col)


def isnotnull(col: Any) -> Column:
    return _call("isnotnull", col)


def nullif(col1: Any, col2: Any) -> Column:
    return _call("nullif", col1, col2)


def ifnull(col1: Any, col2: Any) -> Column:
    return _call("ifnull", col1, col2)


nvl = ifnull


def struct(*cols: Any) -> Column:
    """``struct(a, b)``: a struct whose fields are named after the columns."""
    if len(cols) == 1 and isinstance(cols[0], (list, tuple)):
        cols = tuple(cols[0])
    return _call("struct", *cols)


def window(timeColumn: Any, windowDuration: str, slideDuration: str | None = None,  # noqa: N803
           startTime: str | None = None) -> Column:  # noqa: N803
    """Event-time windows: ``window("t", "10 minutes")`` (tumbling) or
    ``window("t", "10 minutes", "5 minutes")`` (sliding; a row is in every window covering
    it), a ``struct<start, end>`` column named ``window`` (Spark's ``TimeWindow``; the analyzer's
    TimeWindowing rule computes it).

    >>> df.groupBy(window("t", "1 hour")).count()                    # doctest: +SKIP
    """

    w, s, st = window_durations(windowDuration, slideDuration, startTime)
    return Column(TimeWindow(_col_or_name(timeColumn), w, s, st)).alias("window")


# -- ordering and hints ---------------------------------------------------------------------


def asc(col: Any) -> Column:
    return Column(_col_or_name(col)).asc()


def desc(col: Any) -> Column:
    return Column(_col_or_name(col)).desc()


def asc_nulls_first(col: Any) -> Column:
    return Column(_col_or_name(col)).asc_nulls_first()


def asc_nulls_last(col: Any) -> Column:
    return Column(_col_or_name(col)).asc_nulls_last()


def desc_nulls_first(col: Any) -> Column:
    return Column(_col_or_name(col)).desc_nulls_first()


def desc_nulls_last(col: Any) -> Column:
    return Column(_col_or_name(col)).desc_nulls_last()


def broadcast(df: "DataFrame") -> "DataFrame":
    """Mark ``df`` for a broadcast join (the ``BROADCAST`` hint)."""
    return df.hint("broadcast")


# -- more of pyspark.sql.functions over functions the registry knows ----------------------------


def _num_or_col(value: Any) -> Expression:
    """PySpark's ``ColumnOrName | float`` arguments: numbers are literals, strings names."""
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return literal_expr(value)
    return _col_or_name(value)


def _unary(name: str, doc: str) -> Any:
    def fn(col: Any) -> Column:
        return _call(name, col)

    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = doc
    return fn


negative = _unary("negative", "``negative(col)``: ``-col``, named ``negative(col)``.")
positive = _unary("positive", "``positive(col)``: ``col``, named ``(+ col)``.")
cbrt = _unary("cbrt", "Cube root.")
exp = _unary("exp", "``e`` to the power ``col``.")
ln = _unary("ln", "Natural logarithm.")
log10 = _unary("log10", "Base-10 logarithm.")
log2 = _unary("log2", "Base-2 logarithm.")
sign = _unary("sign", "-1.0, 0.0 or 1.0.")
signum = _unary("signum", "-1.0, 0.0 or 1.0.")
ceiling = _unary("ceiling", "Smallest integer not below ``col``.")
char_length = _unary("char_length", "Length in characters.")
character_length = _unary("character_length", "Length in characters.")
lcase = _unary("lcase", "Lower case.")
ucase = _unary("ucase", "Upper case.")
day = _unary("day", "Day of month.")
dayofweek = _unary("dayofweek", "Day of week (1 = Sunday).")
dayofyear = _unary("dayofyear", "Day of year.")
quarter = _unary("quarter", "Quarter of the year.")
hour = _unary("hour", "Hour of a timestamp.")
minute = _unary("minute", "Minute of a timestamp.")
second = _unary("second", "Second of a timestamp.")
bool_and = _unary("bool_and", "Aggregate: true if all values are true.")
bool_or = _unary("bool_or", "Aggregate: true if any value is true.")
every = _unary("every", "Aggregate: true if all values are true.")
some = _unary("some", "Aggregate: true if any value is true.")
stddev = _unary("stddev", "Aggregate: sample standard deviation (``stddev_samp``).")
std = _unary("std", "Aggregate: sample standard deviation (``stddev_samp``).")
stddev_samp = _unary("stddev_samp", "Aggregate: sample standard deviation.")
stddev_pop = _unary("stddev_pop", "Aggregate: population standard deviation.")
variance = _unary("variance", "Aggregate: sample variance (``var_samp``).")
var_samp = _unary("var_samp", "Aggregate: sample variance.")
var_pop = _unary("var_pop", "Aggregate: population variance.")
skewness = _unary("skewness", "Aggregate: skewness.")
kurtosis = _unary("kurtosis", "Aggregate: excess kurtosis.")
bit_and = _unary("bit_and", "Aggregate: bitwise AND of the non-NULL values.")
bit_or = _unary("bit_or", "Aggregate: bitwise OR of the non-NULL values.")
bit_xor = _unary("bit_xor", "Aggregate: bitwise XOR of the non-NULL values.")


def any_value(col: Any, ignoreNulls: bool | None = None) -> Column:  # noqa: N803
    return _call("any_value", col, ignore_nulls=bool(ignoreNulls))


def first_value(col: Any, ignoreNulls: Any = None) -> Column:  # noqa: N803
    """The first value (of the window frame or group); ``ignoreNulls`` a bool or a Column."""
    if isinstance(ignoreNulls, Column):
        return _call("first_value", col, ignoreNulls)
    return _call("first_value", col, ignore_nulls=bool(ignoreNulls))


def last_value(col: Any, ignoreNulls: Any = None) -> Column:  # noqa: N803
    """The last value (of the window frame or group); ``ignoreNulls`` a bool or a Column."""
    if isinstance(ignoreNulls, Column):
        return _call("last_value", col, ignoreNulls)
    return _call("last_value", col, ignore_nulls=bool(ignoreNulls))


# -- window functions (use with ``.over(window)``) ----------------------------------------------


def row_number() -> Column:
    """1, 2, 3 ... within the window partition: ``F.row_number().over(w)``."""
    return _call("row_number")


def rank() -> Column:
    """Rank with gaps among ties: ``F.rank().over(Window.orderBy("x"))``."""
    return _call("rank")


def dense_rank() -> Column:
    """Rank without gaps among ties."""
    return _call("dense_rank")


def percent_rank() -> Column:
    """(rank - 1) / (rows in the partition - 1)."""
    return _call("percent_rank")


def cume_dist() -> Column:
    """Fraction of the partition's rows up to and including the current row's peers."""
    return _call("cume_dist")


def ntile(n: int) -> Column:
    """The bucket 1..n of the row when the ordered partition is split in ``n`` buckets."""
    return Column(UnresolvedFunction("ntile", (literal_expr(n),)))


def lag(col: Any, offset: int = 1, default: Any = None) -> Column:
    """The value ``offset`` rows before the current row, else ``default``."""
    return Column(UnresolvedFunction("lag", (_col_or_name(col), literal_expr(offset),
                                             literal_expr(default))))


def lead(col: Any, offset: int = 1, default: Any = None) -> Column:
    """The value ``offset`` rows after the current row, else ``default``."""
    return Column(UnresolvedFunction("lead", (_col_or_name(col), literal_expr(offset),
                                              literal_expr(default))))


def nth_value(col: Any, offset: int, ignoreNulls: bool | None = False) -> Column:  # noqa: N803
    """The ``offset``-th value (1-based) of the window frame; NULL when it has fewer rows."""
    return Column(UnresolvedFunction("nth_value", (_col_or_name(col), literal_expr(offset)),
                                     ignore_nulls=bool(ignoreNulls)))


def nvl2(col1: Any, col2: Any, col3: Any) -> Column:
    return _call("nvl2", col1, col2, col3)


def pmod(dividend: Any, divisor: Any) -> Column:
    return Column(UnresolvedFunction("pmod", (_num_or_col(dividend), _num_or_col(divisor))))


def pow(col1: Any, col2: Any) -> Column:  # noqa: A001
    return Column(UnresolvedFunction("power", (_num_or_col(col1), _num_or_col(col2))))


power = pow


def log(arg1: Any, arg2: Any = None) -> Column:
    """``log(col)`` (natural log) or ``log(base, col)``."""
    if arg2 is None:
        return _call("ln", arg1)
    return Column(UnresolvedFunction("log", (_num_or_col(arg1), _col_or_name(arg2))))


def add_months(start: Any, months: Any) -> Column:
    return Column(UnresolvedFunction("add_months", (_col_or_name(start), _num_or_col(months))))


def lpad(col: Any, len: Any, pad: Any) -> Column:  # noqa: A002
    return Column(UnresolvedFunction("lpad", (_col_or_name(col), to_expr(len), to_expr(pad))))


def rpad(col: Any, len: Any, pad: Any) -> Column:  # noqa: A002
    return Column(UnresolvedFunction("rpad", (_col_or_name(col), to_expr(len), to_expr(pad))))


def instr(str: Any, substr: Any) -> Column:  # noqa: A002
    return Column(UnresolvedFunction("instr", (_col_or_name(str), to_expr(substr))))


def locate(substr: str, str: Any, pos: int = 1) -> Column:  # noqa: A002
    return Column(UnresolvedFunction("locate", (literal_expr(substr), _col_or_name(str),
                                                literal_expr(pos))))


def regexp_extract(str: Any, pattern: str, idx: int) -> Column:  # noqa: A002
    """``regexp_extract(str, pattern, idx)`` (Java regex; ``''`` when nothing matches)."""
    return Column(UnresolvedFunction("regexp_extract", (_col_or_name(str), literal_expr(pattern),
                                                        literal_expr(idx))))


def regexp_replace(string: Any, pattern: Any, replacement: Any) -> Column:
    """``regexp_replace(string, pattern, replacement)``: a str pattern/replacement is a literal,
    a Column is a column."""
    def arg(v: Any) -> Expression:
        return literal_expr(v) if isinstance(v, str) else to_expr(v)
    return Column(UnresolvedFunction("regexp_replace", (_col_or_name(string), arg(pattern),
                                                        arg(replacement))))


def rlike(str: Any, regexp: Any) -> Column:  # noqa: A002
    return _call("rlike", str, regexp)


def regexp_like(str: Any, regexp: Any) -> Column:  # noqa: A002
    return _call("regexp_like", str, regexp)


def ilike(str: Any, pattern: Any, escapeChar: Any = None) -> Column:  # noqa: A002, N803
    args = (str, pattern) if escapeChar is None else (str, pattern, escapeChar)
    return _call("ilike", *args)


def replace(src: Any, search: Any, replace: Any = None) -> Column:
    args = (src, search) if replace is None else (src, search, replace)
    return _call("replace", *args)


def array(*cols: Any) -> Column:
    if len(cols) == 1 and isinstance(cols[0], (list, tuple)):
        cols = tuple(cols[0])
    return _call("array", *cols)


def named_struct(*cols: Any) -> Column:
    return _call("named_struct", *cols)


def e() -> Column:
    return Column(UnresolvedFunction("e", ()))


def pi() -> Column:
    return Column(UnresolvedFunction("pi", ()))


def now() -> Column:
    return Column(UnresolvedFunction("now", ()))


def curdate() -> Column:
    return Column(UnresolvedFunction("curdate", ()))


def timestamp_seconds(col: Any) -> Column:
    """Numeric seconds since the epoch as a TIMESTAMP (Spark's SecondsToTimestamp)."""
    return _call("timestamp_seconds", col)


def timestamp_millis(col: Any) -> Column:
    return _call("timestamp_millis", col)


def timestamp_micros(col: Any) -> Column:
    return _call("timestamp_micros", col)


def unix_seconds(col: Any) -> Column:
    return _call("unix_seconds", col)


def unix_millis(col: Any) -> Column:
    return _call("unix_millis", col)


def unix_micros(col: Any) -> Column:
    return _call("unix_micros", col)


__all__ += [
    "negative", "positive", "cbrt", "exp", "ln", "log10", "log2", "sign", "signum", "ceiling",
    "char_length", "character_length", "lcase", "ucase", "day", "dayofweek", "dayofyear",
    "quarter", "hour", "minute", "second", "bool_and", "bool_or", "every", "some", "any_value",
    "first_value", "last_value", "nvl2", "pmod", "pow", "power", "log", "add_months", "lpad",
    "rpad", "instr", "locate", "replace", "array", "named_struct", "e", "pi", "now", "curdate",
    "timestamp_seconds", "timestamp_millis", "timestamp_micros", "unix_seconds", "unix_millis",
    "unix_micros",
]
__all__ += [
    "stddev", "std", "stddev_samp", "stddev_pop", "variance", "var_samp", "var_pop", "skewness",
    "kurtosis", "bit_and", "bit_or", "bit_xor", "covar_pop", "covar_samp", "corr", "regr_count",
    "regr_avgx", "regr_avgy", "regr_sxx", "regr_syy", "regr_sxy", "regr_slope", "regr_intercept",
    "regr_r2", "max_by", "min_by",
]


# -- collection and order-statistic aggregates ------------------------------------------------


def collect_list(col: Any) -> Column:
    """Aggregate: the non-NULL values as an array, in input order."""
    return _call("collect_list", col)


def collect_set(col: Any) -> Column:
    """Aggregate: the distinct non-NULL values as an array."""
    return _call("collect_set", col)


def array_agg(col: Any) -> Column:
    """Aggregate: ``collect_list`` (named ``collect_list(col)``, as in Spark)."""
    return _call("array_agg", col)


def _percentage_arg(percentage: Any) -> Any:
    """A percentage argument as PySpark passes it: a list or tuple of floats is an array."""
    if isinstance(percentage, (list, tuple)):
        return array(*[lit(float(p)) for p in percentage])
    return percentage if isinstance(percentage, Column) else lit(percentage)


def percentile(col: Any, percentage: Any, frequency: Any = 1) -> Column:
    """Aggregate: the exact percentile(s) at ``percentage`` (a float or a list of floats),
    each row counted ``frequency`` times."""
    freq = frequency if isinstance(frequency, Column) else lit(frequency)
    return _call("percentile", col, _percentage_arg(percentage), freq)


def percentile_approx(col: Any, percentage: Any, accuracy: Any = 10000) -> Column:
    """Aggregate: an input value at (about) ``percentage``; see ``ApproxPercentile``."""
    acc = accuracy if isinstance(accuracy, Column) else lit(accuracy)
    return _call("percentile_approx", col, _percentage_arg(percentage), acc)


def approx_percentile(col: Any, percentage: Any, accuracy: Any = 10000) -> Column:
    """``percentile_approx`` named ``approx_percentile(...)``."""
    acc = accuracy if isinstance(accuracy, Column) else lit(accuracy)
    return _call("approx_percentile", col, _percentage_arg(percentage), acc)


def median(col: Any) -> Column:
    """Aggregate: ``percentile(col, 0.5)``, named ``median(col)``."""
    return _call("median", col)


def mode(col: Any, deterministic: bool = False) -> Column:
    """Aggregate: the most frequent value (``deterministic``: the smallest of equally frequent
    ones)."""
    if deterministic:
        return _call("mode", col, lit(True))
    return _call("mode", col)


def approx_count_distinct(col: Any, rsd: float | None = None) -> Column:
    """Aggregate: the estimated number of distinct values (HyperLogLog++, relative standard
    deviation ``rsd``, default 0.05)."""
    if rsd is None:
        return _call("approx_count_distinct", col)
    return _call("approx_count_distinct", col, lit(float(rsd)))


def _listagg(name: str, col: Any, delimiter: Any, distinct: bool) -> Column:
    if delimiter is None:
        return _call(name, col, is_distinct=distinct)
    d = delimiter if isinstance(delimiter, Column) else lit(delimiter)
    return _call(name, col, d, is_distinct=distinct)


def listagg(col: Any, delimiter: Any = None) -> Column:
    """Aggregate: the non-NULL values concatenated, separated by ``delimiter``."""
    return _listagg("listagg", col, delimiter, False)


def listagg_distinct(col: Any, delimiter: Any = None) -> Column:
    """``listagg`` of the distinct values."""
    return _listagg("listagg", col, delimiter, True)


def string_agg(col: Any, delimiter: Any = None) -> Column:
    """``listagg`` named ``string_agg(...)``."""
    return _listagg("string_agg", col, delimiter, False)


def string_agg_distinct(col: Any, delimiter: Any = None) -> Column:
    """``string_agg`` of the distinct values."""
    return _listagg("string_agg", col, delimiter, True)


__all__ += [
    "collect_list", "collect_set", "array_agg", "percentile", "percentile_approx",
    "approx_percentile", "median", "mode", "approx_count_distinct", "listagg",
    "listagg_distinct", "string_agg", "string_agg_distinct",
]


# -- user-defined functions (udf, pandas_udf: ember.udf) -------------------------------------

udf = _udf.udf
pandas_udf = _udf.pandas_udf
PandasUDFType = _udf.PandasUDFType
UserDefinedFunction = _udf.UserDefinedFunction
udtf = _udtf.udtf
UserDefinedTableFunction = _udtf.UserDefinedTableFunction


def call_function(funcName: str, *cols: Any) -> Column:  # noqa: N803
    """``funcName(cols...)``: a built-in or registered (``spark.udf.register``) function by
    name; string arguments are column names (PySpark's ``call_function``)."""
    return _call(funcName, *cols)


def call_udf(udfName: str, *cols: Any) -> Column:  # noqa: N803
    """A function registered with ``spark.udf.register``, by name (PySpark's ``call_udf``)."""
    return _call(udfName, *cols)
# -- scalar functions: math, bitwise, string, date/time, try_*, hash, misc (issue 22) -----------


def _sql_function(py_name: str, params: str, sql_name: str | None = None) -> Any:
    """A ``pyspark.sql.functions`` function calling the SQL function ``sql_name`` (default
    ``py_name``) with PySpark's parameters.  ``params`` lists them: ``col`` a column (a str is
    a column name, a number a literal), ``fmt=`` a literal (a Column passes as itself), a
    trailing ``?`` optional (left out when None), ``[v]`` a default value passed as ``v``,
    ``*cols`` columns."""
    specs = []
    for p in params.split():
        default: Any = inspect.Parameter.empty
        if "[" in p:
            p, _, dv = p.partition("[")
            default = ast.literal_eval(dv[:-1])
        optional = p.endswith("?")
        p = p.rstrip("?")
        literal = p.endswith("=")
        p = p.rstrip("=")
        star = p.startswith("*")
        specs.append((p.lstrip("*"), literal, optional, star,
                      None if optional else default))

    def fn(*args: Any, **kwargs: Any) -> Column:
        bound = sig.bind(*args, **kwargs)
        bound.apply_defaults()
        out: list[Expression] = []
        for name, literal, optional, star, _ in specs:
            v = bound.arguments.get(name)
            if star:
                out.extend(_num_or_col(x) for x in v)
            elif optional and v is None:
                continue
            else:
                out.append(to_expr(v) if literal else _num_or_col(v))
        return Column(UnresolvedFunction(sql_name or py_name, tuple(out)))

    parameters = [
        inspect.Parameter(name, inspect.Parameter.VAR_POSITIONAL) if star else
        inspect.Parameter(name, inspect.Parameter.POSITIONAL_OR_KEYWORD,
                          default=None if optional else default)
        for name, literal, optional, star, default in specs]
    sig = inspect.Signature(parameters, return_annotation="Column")
    fn.__name__ = fn.__qualname__ = py_name
    fn.__signature__ = sig  # type: ignore[attr-defined]
    fn.__doc__ = f"``{sql_name or py_name}(...)`` (see Spark's SQL function of that name)."
    return fn


acos = _sql_function("acos", "col")
acosh = _sql_function("acosh", "col")
ascii = _sql_function("ascii", "col")
asin = _sql_function("asin", "col")
asinh = _sql_function("asinh", "col")
atan = _sql_function("atan", "col")
atan2 = _sql_function("atan2", "col1 col2")
atanh = _sql_function("atanh", "col")
base64 = _sql_function("base64", "col")
bit_count = _sql_function("bit_count", "col")
bit_get = _sql_function("bit_get", "col pos")
bit_length = _sql_function("bit_length", "col")
bround = _sql_function("bround", "col scale=?")
btrim = _sql_function("btrim", "str trim?")
char = _sql_function("char", "col")
chr = _sql_function("chr", "n")
contains = _sql_function("contains", "left right")
cos = _sql_function("cos", "col")
cosh = _sql_function("cosh", "col")
cot = _sql_function("cot", "col")
csc = _sql_function("csc", "col")
date_trunc = _sql_function("date_trunc", "format= timestamp")
dateadd = _sql_function("dateadd", "start days")
decode = _sql_function("decode", "col charset=")
degrees = _sql_function("degrees", "col")
elt = _sql_function("elt", "*inputs")
encode = _sql_function("encode", "col charset=")
endswith = _sql_function("endswith", "str suffix")
expm1 = _sql_function("expm1", "col")
factorial = _sql_function("factorial", "col")
find_in_set = _sql_function("find_in_set", "str str_array")
getbit = _sql_function("getbit", "col pos")
hypot = _sql_function("hypot", "col1 col2")
initcap = _sql_function("initcap", "col")
isnan = _sql_function("isnan", "col")
left = _sql_function("left", "str len")
log1p = _sql_function("log1p", "col")
nanvl = _sql_function("nanvl", "col1 col2")
octet_length = _sql_function("octet_length", "col")
overlay = _sql_function("overlay", "src replace pos len[-1]")
position = _sql_function("position", "substr str start?")
quote = _sql_function("quote", "col")
radians = _sql_function("radians", "col")
regexp = _sql_function("regexp", "str regexp")
repeat = _sql_function("repeat", "col n")
reverse = _sql_function("reverse", "col")
right = _sql_function("right", "str len")
rint = _sql_function("rint", "col")
sec = _sql_function("sec", "col")
shiftLeft = _sql_function("shiftLeft", "col numBits=", "shiftleft")
shiftRight = _sql_function("shiftRight", "col numBits=", "shiftright")
shiftRightUnsigned = _sql_function("shiftRightUnsigned", "col numBits=", "shiftrightunsigned")
shiftleft = _sql_function("shiftleft", "col numBits=")
shiftright = _sql_function("shiftright", "col numBits=")
shiftrightunsigned = _sql_function("shiftrightunsigned", "col numBits=")
sin = _sql_function("sin", "col")
sinh = _sql_function("sinh", "col")
startswith = _sql_function("startswith", "str prefix")
substr = _sql_function("substr", "str pos len?")
substring_index = _sql_function("substring_index", "str delim= count=")
tan = _sql_function("tan", "col")
tanh = _sql_function("tanh", "col")
to_unix_timestamp = _sql_function("to_unix_timestamp", "timestamp format?")
translate = _sql_function("translate", "srcCol matching= replace=")
trunc = _sql_function("trunc", "date format=")
try_add = _sql_function("try_add", "left right")
try_divide = _sql_function("try_divide", "left right")
try_mod = _sql_function("try_mod", "left right")
try_multiply = _sql_function("try_multiply", "left right")
try_subtract = _sql_function("try_subtract", "left right")
try_to_date = _sql_function("try_to_date", "col format=?")
try_to_timestamp = _sql_function("try_to_timestamp", "col format?")
typeof = _sql_function("typeof", "col")
unbase64 = _sql_function("unbase64", "col")
width_bucket = _sql_function("width_bucket", "v min max numBucket")
bitwise_not = _sql_function("bitwise_not", "col", "~")
bitwiseNOT = _sql_function("bitwiseNOT", "col", "~")
toDegrees = _sql_function("toDegrees", "col", "degrees")
toRadians = _sql_function("toRadians", "col", "radians")


def unix_timestamp(timestamp: Any = None, format: str = "yyyy-MM-dd HH:mm:ss") -> Column:  # noqa: A002
    """Seconds since the epoch of ``timestamp`` (the current time when None), strings parsed
    with ``format``."""
    ts = _col_or_name(timestamp) if timestamp is not None else \
        UnresolvedFunction("current_timestamp", ())
    return Column(UnresolvedFunction("unix_timestamp", (ts, literal_expr(format))))


def from_unixtime(timestamp: Any, format: str = "yyyy-MM-dd HH:mm:ss") -> Column:  # noqa: A002
    """Seconds since the epoch formatted with ``format`` in the session time zone."""
    return Column(UnresolvedFunction("from_unixtime", (_col_or_name(timestamp),
                                                       literal_expr(format))))


def date_part(field: Any, source: Any) -> Column:
    return Column(UnresolvedFunction("date_part", (to_expr(field), _col_or_name(source))))


def extract(field: Any, source: Any) -> Column:
    return Column(UnresolvedFunction("extract", (to_expr(field), _col_or_name(source))))
crc32 = _sql_function("crc32", "col")
hash = _sql_function("hash", "*cols")
md5 = _sql_function("md5", "col")
sha = _sql_function("sha", "col")
sha1 = _sql_function("sha1", "col")
sha2 = _sql_function("sha2", "col numBits=")
xxhash64 = _sql_function("xxhash64", "*cols")
monotonically_increasing_id = _sql_function("monotonically_increasing_id", "")
rand = _sql_function("rand", "seed=?")
randn = _sql_function("randn", "seed=?")
random = _sql_function("random", "seed=?")
spark_partition_id = _sql_function("spark_partition_id", "")
uuid = _sql_function("uuid", "seed=?")
current_timezone = _sql_function("current_timezone", "")
date_diff = _sql_function("date_diff", "end start")
date_from_unix_date = _sql_function("date_from_unix_date", "days")
dayname = _sql_function("dayname", "col")
equal_null = _sql_function("equal_null", "col1 col2")
from_utc_timestamp = _sql_function("from_utc_timestamp", "timestamp tz=")
last_day = _sql_function("last_day", "date")
make_date = _sql_function("make_date", "year month day")
monthname = _sql_function("monthname", "col")
months_between = _sql_function("months_between", "date1 date2 roundOff=[True]")
negate = _sql_function("negate", "col", "negative")
next_day = _sql_function("next_day", "date dayOfWeek=")
nullifzero = _sql_function("nullifzero", "col")
to_utc_timestamp = _sql_function("to_utc_timestamp", "timestamp tz=")
unix_date = _sql_function("unix_date", "col")
weekday = _sql_function("weekday", "col")
weekofyear = _sql_function("weekofyear", "col")
zeroifnull = _sql_function("zeroifnull", "col")


def datepart(field: Any, source: Any) -> Column:
    return Column(UnresolvedFunction("datepart", (to_expr(field), _col_or_name(source))))
bin = _sql_function("bin", "col")
hex = _sql_function("hex", "col")
levenshtein = _sql_function("levenshtein", "left right threshold=?")
like = _sql_function("like", "str pattern escapeChar=?")
regexp_count = _sql_function("regexp_count", "str regexp")
regexp_instr = _sql_function("regexp_instr", "str regexp idx=?")
regexp_substr = _sql_function("regexp_substr", "str regexp")
soundex = _sql_function("soundex", "col")
split_part = _sql_function("split_part", "src delimiter partNum")
try_url_decode = _sql_function("try_url_decode", "str")
unhex = _sql_function("unhex", "col")
url_decode = _sql_function("url_decode", "str")
url_encode = _sql_function("url_encode", "str")
get_json_object = _sql_function("get_json_object", "col path=")
json_array_length = _sql_function("json_array_length", "col")
format_number = _sql_function("format_number", "col d=")


def make_dt_interval(days: Any = None, hours: Any = None, mins: Any = None,
                     secs: Any = None) -> Column:
    """A day-time interval; a missing field is 0 (PySpark passes ``lit(0)``)."""
    return Column(UnresolvedFunction("make_dt_interval", tuple(
        literal_expr(0) if v is None else _col_or_name(v) for v in (days, hours, mins, secs))))


# -- the session's namespace (current_database, current_schema, current_catalog) --------------
current_database = _sql_function("current_database", "")
current_schema = _sql_function("current_schema", "")
current_catalog = _sql_function("current_catalog", "")
__all__ += ["current_database", "current_schema", "current_catalog"]
# -- nested types: maps, element access, generators, collection functions (issue 23) ---------
# PySpark's signatures: values that are not Columns are literals (``element_at(c, 1)``,
# ``array_contains(c, "x")``); string column arguments are column names.


def _lit_or_col(value: Any) -> Any:
    return value if isinstance(value, Column) else lit(value)


def create_map(*cols: Any) -> Column:
    """``map(k1, v1, ...)`` from key and value columns."""
    if len(cols) == 1 and isinstance(cols[0], (list, tuple)):
        cols = tuple(cols[0])
    return _call("map", *cols)


map_from_arrays = _sql_function("map_from_arrays", "col1 col2")
element_at = _sql_function("element_at", "col extraction=")
try_element_at = _sql_function("try_element_at", "col extraction=")
get = _sql_function("get", "col index=")
size = _sql_function("size", "col")
cardinality = _sql_function("cardinality", "col")
map_keys = _sql_function("map_keys", "col")
map_values = _sql_function("map_values", "col")
map_entries = _sql_function("map_entries", "col")


def map_concat(*cols: Any) -> Column:
    if len(cols) == 1 and isinstance(cols[0], (list, tuple)):
        cols = tuple(cols[0])
    return _call("map_concat", *cols)


explode = _sql_function("explode", "col")
explode_outer = _sql_function("explode_outer", "col")
posexplode = _sql_function("posexplode", "col")
posexplode_outer = _sql_function("posexplode_outer", "col")
inline = _sql_function("inline", "col")
inline_outer = _sql_function("inline_outer", "col")
stack = _sql_function("stack", "*cols")
array_contains = _sql_function("array_contains", "col value=")
array_position = _sql_function("array_position", "col value=")
array_remove = _sql_function("array_remove", "col element=")
array_distinct = _sql_function("array_distinct", "col")
array_union = _sql_function("array_union", "col1 col2")
array_intersect = _sql_function("array_intersect", "col1 col2")
array_except = _sql_function("array_except", "col1 col2")
sort_array = _sql_function("sort_array", "col asc=[True]")
array_sort = _sql_function("array_sort", "col")
array_max = _sql_function("array_max", "col")
array_min = _sql_function("array_min", "col")
flatten = _sql_function("flatten", "col")


def slice(x: Any, start: Any, length: Any) -> Column:  # noqa: A001 - PySpark's name
    return _call("slice", x, _lit_or_col(start), _lit_or_col(length))


def array_join(col: Any, delimiter: str, null_replacement: str | None = None) -> Column:
    if null_replacement is None:
        return _call("array_join", col, lit(delimiter))
    return _call("array_join", col, lit(delimiter), lit(null_replacement))


arrays_zip = _sql_function("arrays_zip", "*cols")


def sequence(start: Any, stop: Any, step: Any = None) -> Column:
    return _call("sequence", start, stop) if step is None else _call("sequence", start, stop,
                                                                     step)


def split(str: Any, pattern: str, limit: int = -1) -> Column:  # noqa: A002 - PySpark's name
    """``split(str, regex, limit)``: the string cut at the regex's matches, an array."""
    return _call("split", str, lit(pattern), _lit_or_col(limit))


__all__ += [
    "create_map", "map_from_arrays", "element_at", "try_element_at", "get", "size",
    "cardinality", "map_keys", "map_values", "map_entries", "map_concat", "explode",
    "explode_outer", "posexplode", "posexplode_outer", "inline", "inline_outer", "stack",
    "array_contains", "array_position", "array_remove", "array_distinct", "array_union",
    "array_intersect", "array_except", "sort_array", "array_sort", "array_max", "array_min",
    "flatten", "slice", "array_join", "arrays_zip", "sequence", "split",
]


# -- higher-order functions with Python lambdas (PySpark's API) --------------------------------


def _lambda(f: Any, n_max: int) -> Expression:
    """A Python function of Columns as a SQL lambda (PySpark's ``_create_lambda``): called with
    one named lambda variable per parameter it takes."""
    n = len(inspect.signature(f).parameters)
    if not 1 <= n <= n_max:
        raise AnalysisError(f"The lambda function takes {n} arguments; expected 1 to {n_max}.",
                            error_class="INVALID_LAMBDA_FUNCTION_CALL.NUM_ARGS_MISMATCH")
    names = [f"x_{i}" for i in range(n)] if n > 1 else ["x"]
    args = [UnresolvedNamedLambdaVariable(nm) for nm in names]
    body = f(*[Column(a) for a in args])
    if not isinstance(body, Column):
        raise AnalysisError("The lambda function must return a Column.",
                            error_class="HIGHER_ORDER_FUNCTION_SHOULD_RETURN_COLUMN")
    return LambdaFunction(body._expr, tuple(args))


def transform(col: Any, f: Any) -> Column:
    """``transform(col, x -> f(x))``; ``f`` takes the element (and its index)."""
    return Column(UnresolvedFunction("transform", (_col_or_name(col), _lambda(f, 2))))


def filter(col: Any, f: Any) -> Column:  # noqa: A001 - PySpark's name
    return Column(UnresolvedFunction("filter", (_col_or_name(col), _lambda(f, 2))))


def exists(col: Any, f: Any) -> Column:
    return Column(UnresolvedFunction("exists", (_col_or_name(col), _lambda(f, 1))))


def forall(col: Any, f: Any) -> Column:
    return Column(UnresolvedFunction("forall", (_col_or_name(col), _lambda(f, 1))))


def aggregate(col: Any, initialValue: Any, merge: Any, finish: Any = None) -> Column:  # noqa: N803
    args = (_col_or_name(col), _lit_or_col(initialValue)._expr, _lambda(merge, 2))
    if finish is not None:
        args += (_lambda(finish, 1),)
    return Column(UnresolvedFunction("aggregate", args))


reduce = aggregate


def zip_with(left: Any, right: Any, f: Any) -> Column:
    return Column(UnresolvedFunction("zip_with", (_col_or_name(left), _col_or_name(right),
                                                  _lambda(f, 2))))


__all__ += ["transform", "filter", "exists", "forall", "aggregate", "reduce", "zip_with"]


# -- issue 22: formatting, conv, binary formats, hmac, mask, url, utf8 -------------


def format_string(format: str, *cols: Any) -> Column:  # noqa: A002 - PySpark's name
    """``format_string(format, cols...)``: Java's ``String.format`` (PySpark: a literal format,
    column arguments)."""
    return Column(UnresolvedFunction("format_string", (literal_expr(format),) + tuple(
        _col_or_name(c) for c in cols)))


printf = _sql_function("printf", "format *cols")
conv = _sql_function("conv", "col fromBase= toBase=")
to_binary = _sql_function("to_binary", "col format?")
try_to_binary = _sql_function("try_to_binary", "col format?")
to_base32 = _sql_function("to_base32", "col")
from_base32 = _sql_function("from_base32", "col")
hmac = _sql_function("hmac", "key message algorithm?")
parse_url = _sql_function("parse_url", "url partToExtract key?")
try_parse_url = _sql_function("try_parse_url", "url partToExtract key?")
jaro_winkler_similarity = _sql_function("jaro_winkler_similarity", "left right")
is_valid_utf8 = _sql_function("is_valid_utf8", "str")
make_valid_utf8 = _sql_function("make_valid_utf8", "str")
validate_utf8 = _sql_function("validate_utf8", "str")
try_validate_utf8 = _sql_function("try_validate_utf8", "str")


def mask(col: Any, upperChar: Any = None, lowerChar: Any = None, digitChar: Any = None,  # noqa: N803
         otherChar: Any = None) -> Column:
    """``mask(col, upper, lower, digit, other)``: PySpark passes its defaults X, x, n, NULL."""
    chars = [lit(d) if v is None else v for v, d in (
        (upperChar, "X"), (lowerChar, "x"), (digitChar, "n"), (otherChar, None))]
    return Column(UnresolvedFunction("mask", tuple(_col_or_name(c) for c in (col, *chars))))


__all__ += ["format_string", "printf", "conv", "to_binary", "try_to_binary", "to_base32",
            "from_base32", "hmac", "parse_url", "try_parse_url", "jaro_winkler_similarity",
            "is_valid_utf8", "make_valid_utf8", "validate_utf8", "try_validate_utf8", "mask"]
# -- JSON functions over nested values (from_json, to_json, schema_of_json, json_tuple ...) ------


def _json_options(options: dict[str, Any] | None) -> Expression:
    """PySpark's options dict as the functions' options argument (values as PySpark's
    ``to_str``: booleans lower-cased)."""
    pairs = tuple((str(k).lower(), str(v).lower() if isinstance(v, bool) else str(v))
                  for k, v in (options or {}).items())
    text = "map(" + ", ".join(f"{k}, {v}" for k, v in pairs) + ")"
    return OptionsLiteral(pairs, text)


def _schema_arg(schema: Any) -> Expression:
    """A schema given as a DDL string, a DataType (Ember's or PySpark's) or a Column."""
    if isinstance(schema, Column):
        return schema._expr
    if isinstance(schema, str):
        try:
            return SchemaLiteral(parse_data_type(schema), schema)
        except EmberError:
            return SchemaLiteral(parse_ddl_schema(schema), schema)
    dt = T.as_ember_type(schema)
    return SchemaLiteral(dt, dt.sql())


def from_json(col: Any, schema: Any, options: dict[str, Any] | None = None) -> Column:
    """``from_json(col, schema[, options])``: JSON text parsed into ``schema``."""
    return Column(UnresolvedFunction("from_json", (_col_or_name(col), _schema_arg(schema),
                                                   _json_options(options))))


def to_json(col: Any, options: dict[str, Any] | None = None) -> Column:
    """``to_json(col[, options])``: a struct, array or map as JSON text."""
    return Column(UnresolvedFunction("to_json", (_col_or_name(col), _json_options(options))))


def schema_of_json(json: Any, options: dict[str, Any] | None = None) -> Column:
    """``schema_of_json(json[, options])``: the DDL type inferred for a JSON literal."""
    arg = lit(json)._expr if isinstance(json, str) else _col_or_name(json)
    return Column(UnresolvedFunction("schema_of_json", (arg, _json_options(options))))


def json_tuple(col: Any, *fields: str) -> Column:
    """``json_tuple(col, f1, f2, ...)``: a generator of the top-level fields ``c0, c1, ...``."""
    return Column(UnresolvedFunction("json_tuple", (_col_or_name(col),
                                                    *(lit(f)._expr for f in fields))))


json_object_keys = _sql_function("json_object_keys", "col")


def from_csv(col: Any, schema: Any, options: dict[str, Any] | None = None) -> Column:
    """``from_csv(col, schema[, options])``: a CSV record parsed into the struct ``schema``."""
    return Column(UnresolvedFunction("from_csv", (_col_or_name(col), _schema_arg(schema),
                                                  _json_options(options))))


def to_csv(col: Any, options: dict[str, Any] | None = None) -> Column:
    """``to_csv(col[, options])``: a struct as a CSV record."""
    return Column(UnresolvedFunction("to_csv", (_col_or_name(col), _json_options(options))))


def schema_of_csv(csv: Any, options: dict[str, Any] | None = None) -> Column:
    """``schema_of_csv(csv[, options])``: the DDL struct inferred for a CSV literal."""
    arg = lit(csv)._expr if isinstance(csv, str) else _col_or_name(csv)
    return Column(UnresolvedFunction("schema_of_csv", (arg, _json_options(options))))

__all__ += ["from_json", "to_json", "schema_of_json", "json_tuple", "json_object_keys",
            "from_csv", "to_csv", "schema_of_csv"]


# -- collection functions over nested values (array_append ... str_to_map, map HOFs) -----------

array_append = _sql_function("array_append", "col value=")
array_prepend = _sql_function("array_prepend", "col value=")
array_insert = _sql_function("array_insert", "arr pos= value=")
array_compact = _sql_function("array_compact", "col")
array_repeat = _sql_function("array_repeat", "col count=")
array_size = _sql_function("array_size", "col")
arrays_overlap = _sql_function("arrays_overlap", "a1 a2")
map_contains_key = _sql_function("map_contains_key", "col value=")
map_from_entries = _sql_function("map_from_entries", "col")
str_to_map = _sql_function("str_to_map", "text pairDelim? keyValueDelim?")
regexp_extract_all = _sql_function("regexp_extract_all", "str regexp idx=?")
shuffle = _sql_function("shuffle", "col seed=?")


def map_filter(col: Any, f: Any) -> Column:
    return Column(UnresolvedFunction("map_filter", (_col_or_name(col), _lambda(f, 2))))


def transform_keys(col: Any, f: Any) -> Column:
    return Column(UnresolvedFunction("transform_keys", (_col_or_name(col), _lambda(f, 2))))


def transform_values(col: Any, f: Any) -> Column:
    return Column(UnresolvedFunction("transform_values", (_col_or_name(col), _lambda(f, 2))))


def map_zip_with(col1: Any, col2: Any, f: Any) -> Column:
    return Column(UnresolvedFunction("map_zip_with", (_col_or_name(col1), _col_or_name(col2),
                                                      _lambda(f, 3))))


__all__ += ["array_append", "array_prepend", "array_insert", "array_compact", "array_repeat",
            "array_size", "arrays_overlap", "map_contains_key", "map_from_entries", "str_to_map",
            "regexp_extract_all", "shuffle", "map_filter", "transform_keys", "transform_values",
            "map_zip_with"]


# -- issue 22: raise_error, assert_true, session constants ---------------------------


def raise_error(errMsg: Any) -> Column:  # noqa: N803 - PySpark's name
    """Fails the query with ``USER_RAISED_EXCEPTION`` and ``errMsg`` (a str is the message)."""
    return Column(UnresolvedFunction("raise_error", (to_expr(errMsg),)))


def assert_true(col: Any, errMsg: Any = None) -> Column:  # noqa: N803 - PySpark's name
    """NULL when ``col`` is true, else fails with ``USER_RAISED_EXCEPTION`` (``errMsg`` a str is
    the message)."""
    args = (_col_or_name(col),) + (() if errMsg is None else (to_expr(errMsg),))
    return Column(UnresolvedFunction("assert_true", args))


current_user = _sql_function("current_user", "")
session_user = _sql_function("session_user", "")
user = _sql_function("user", "")
version = _sql_function("version", "")
current_path = _sql_function("current_path", "")
__all__ += ["raise_error", "assert_true", "current_user", "session_user", "user", "version",
            "current_path"]


# -- issue 22: make_timestamp, timestamp_add / timestamp_diff -----------------------


def _make_timestamp_call(name: str, years: Any, months: Any, days: Any, hours: Any, mins: Any,
                         secs: Any, timezone: Any, date: Any, time: Any) -> Column:
    if date is not None or time is not None:
        raise UnsupportedError(f"{name}(date=..., time=...) needs the TIME type, which Ember "
                               "does not have", error_class="UNSUPPORTED_FEATURE")
    parts = [years, months, days, hours, mins, secs] + ([] if timezone is None else [timezone])
    return Column(UnresolvedFunction(name, tuple(_col_or_name(p) for p in parts)))


def make_timestamp(years: Any = None, months: Any = None, days: Any = None, hours: Any = None,
                   mins: Any = None, secs: Any = None, timezone: Any = None, date: Any = None,
                   time: Any = None) -> Column:
    """A TIMESTAMP from its fields in ``timezone`` (default the session's); invalid fields
    raise with ANSI on."""
    return _make_timestamp_call("make_timestamp", years, months, days, hours, mins, secs,
                                timezone, date, time)


def try_make_timestamp(years: Any = None, months: Any = None, days: Any = None,
                       hours: Any = None, mins: Any = None, secs: Any = None,
                       timezone: Any = None, date: Any = None, time: Any = None) -> Column:
    """``make_timestamp`` returning NULL for invalid fields."""
    return _make_timestamp_call("try_make_timestamp", years, months, days, hours, mins, secs,
                                timezone, date, time)


def timestamp_add(unit: str, quantity: Any, ts: Any) -> Column:
    """``timestampadd(unit, quantity, ts)``: ``unit`` YEAR ... MICROSECOND."""
    return Column(UnresolvedFunction("(timestampadd)", (literal_expr(unit),
                                                        _col_or_name(quantity),
                                                        _col_or_name(ts))))


def timestamp_diff(unit: str, start: Any, end: Any) -> Column:
    """``timestampdiff(unit, start, end)``: whole ``unit``s from ``start`` to ``end``."""
    return Column(UnresolvedFunction("(timestampdiff)", (literal_expr(unit),
                                                         _col_or_name(start),
                                                         _col_or_name(end))))


__all__ += ["make_timestamp", "try_make_timestamp", "timestamp_add", "timestamp_diff"]


def approxCountDistinct(col: Any, rsd: float | None = None) -> Column:  # noqa: N802, N803
    """Deprecated PySpark alias of :func:`approx_count_distinct` (warns as PySpark does)."""
    warnings.warn("Deprecated in 2.1, use approx_count_distinct instead.", FutureWarning)
    return approx_count_distinct(col, rsd)


__all__ += ["approxCountDistinct"]


# -- TIMESTAMP_NTZ / TIMESTAMP_LTZ and interval constructors (issue 23, time types) -----------
def to_timestamp_ntz(timestamp: Any, format: Any = None) -> Column:  # noqa: A002
    return _call("to_timestamp_ntz", timestamp, *(() if format is None else (format,)))


def to_timestamp_ltz(timestamp: Any, format: Any = None) -> Column:  # noqa: A002
    return _call("to_timestamp_ltz", timestamp, *(() if format is None else (format,)))


def make_timestamp_ntz(years: Any, months: Any, days: Any, hours: Any, mins: Any,
                       secs: Any) -> Column:
    return _call("make_timestamp_ntz", years, months, days, hours, mins, secs)


def try_make_timestamp_ntz(years: Any, months: Any, days: Any, hours: Any, mins: Any,
                           secs: Any) -> Column:
    return _call("try_make_timestamp_ntz", years, months, days, hours, mins, secs)


def make_timestamp_ltz(years: Any, months: Any, days: Any, hours: Any, mins: Any, secs: Any,
                       timezone: Any = None) -> Column:
    tz = () if timezone is None else (timezone,)
    return _call("make_timestamp_ltz", years, months, days, hours, mins, secs, *tz)


def try_make_timestamp_ltz(years: Any, months: Any, days: Any, hours: Any, mins: Any,
                           secs: Any, timezone: Any = None) -> Column:
    tz = () if timezone is None else (timezone,)
    return _call("try_make_timestamp_ltz", years, months, days, hours, mins, secs, *tz)


def localtimestamp() -> Column:
    return Column(UnresolvedFunction("localtimestamp", ()))


def make_ym_interval(years: Any = None, months: Any = None) -> Column:
    """A year-month interval; a missing field is 0 (PySpark passes ``lit(0)``)."""
    return Column(UnresolvedFunction("make_ym_interval", tuple(
        literal_expr(0) if v is None else _col_or_name(v) for v in (years, months))))


__all__ += ["to_timestamp_ntz", "to_timestamp_ltz", "make_timestamp_ntz", "try_make_timestamp_ntz",
            "make_timestamp_ltz", "try_make_timestamp_ltz", "localtimestamp", "make_ym_interval"]


# -- issue 22: try_sum, try_avg, product ---------------------------------------------
try_sum = _sql_function("try_sum", "col")
try_avg = _sql_function("try_avg", "col")
product = _sql_function("product", "col", "(product)")
__all__ += ["try_sum", "try_avg", "product"]
def make_interval(years: Any = None, months: Any = None, weeks: Any = None, days: Any = None,
                  hours: Any = None, mins: Any = None, secs: Any = None) -> Column:
    """A CalendarInterval; a missing field is 0 (PySpark passes ``lit(0)``)."""
    return Column(UnresolvedFunction("make_interval", tuple(
        literal_expr(0) if v is None else _col_or_name(v)
        for v in (years, months, weeks, days, hours, mins, secs))))


def try_make_interval(years: Any = None, months: Any = None, weeks: Any = None, days: Any = None,
                      hours: Any = None, mins: Any = None, secs: Any = None) -> Column:
    return Column(UnresolvedFunction("try_make_interval", tuple(
        literal_expr(0) if v is None else _col_or_name(v)
        for v in (years, months, weeks, days, hours, mins, secs))))


__all__ += ["make_interval", "try_make_interval"]


def convert_timezone(sourceTz: Any, targetTz: Any, sourceTs: Any) -> Column:  # noqa: N803
    """``sourceTz`` None: from the session time zone (``convert_timezone(targetTz, ts)``)."""
    args = (targetTz, sourceTs) if sourceTz is None else (sourceTz, targetTz, sourceTs)
    return Column(UnresolvedFunction("convert_timezone", tuple(
        a._expr if isinstance(a, Column) else _col_or_name(a) for a in args)))


__all__ += ["convert_timezone"]


# -- issue 22: randstr, uniform ------------------------------------------------------


def randstr(length: Any, seed: Any = None) -> Column:
    """A random string of ``length`` characters 0-9a-zA-Z (Spark's seeded generator)."""
    args = (length,) + (() if seed is None else (seed,))
    return Column(UnresolvedFunction("randstr", tuple(_lit_or_col(v)._expr for v in args)))


def uniform(min: Any, max: Any, seed: Any = None) -> Column:  # noqa: A002 - PySpark's names
    """A random value between ``min`` and ``max`` (Spark's seeded generator)."""
    args = (min, max) + (() if seed is None else (seed,))
    return Column(UnresolvedFunction("uniform", tuple(_lit_or_col(v)._expr for v in args)))


__all__ += ["randstr", "uniform"]
