"""``df.describe`` / ``df.summary`` and ``df.stat``: PySpark's ``DataFrameStatFunctions``
(``corr``, ``cov``, ``crosstab``, ``approxQuantile``), built as Spark's ``StatFunctions`` builds
them from aggregates.

``summary`` computes every statistic of every numeric and string column in one ``Aggregate``
(each cast to string, as Spark's ``summary`` does) and turns the row into one row per statistic
with an ``Unpivot`` (Spark builds a map per column and explodes the statistic names; the rows
are the same).  On string columns only ``count``, ``count_distinct``, ``approx_count_distinct``,
``min`` and ``max`` have values; ``mean``, ``stddev`` and percentiles are NULL, as in Spark.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import pyarrow as pa

from ember import types as T
from ember.errors import AnalysisError
from ember.expressions.base import (
    Alias, AttributeReference, Expression, Literal, UnresolvedFunction,
)
from ember.expressions.cast import Cast
from ember.expressions.conditional import Coalesce
from ember.plans.logical.nodes import Aggregate, LocalRelation, Unpivot

if TYPE_CHECKING:  # pragma: no cover
    from ember.dataframe import DataFrame

__all__ = ["summary", "DataFrameStatFunctions", "DEFAULT_STATISTICS"]

#: ``summary()`` without arguments (Spark's ``StatFunctions.summary`` defaults)
DEFAULT_STATISTICS = ("count", "mean", "stddev", "min", "25%", "50%", "75%", "max")

#: statistics that have a value on a string column
_STRING_STATISTICS = {"count", "count_distinct", "approx_count_distinct", "min", "max"}

#: percentile_approx's accuracy in summary (Spark's ``ApproximatePercentile.DEFAULT_ACCURACY``)
_ACCURACY = 10000


def _percentile(stat: str) -> float:
    try:
        p = float(stat[:-1]) / 100.0
    except ValueError:
        raise _unrecognized(stat) from None
    if not 0.0 <= p <= 1.0:  # Spark: an IllegalArgumentException without an error class
        raise AnalysisError("requirement failed: Percentiles must be in the range [0, 1]")
    return p


def _unrecognized(stat: str) -> AnalysisError:
    return AnalysisError(
        f"The statistic '{stat}' is not recognized. Valid statistics include `count`, "
        "`count_distinct`, `approx_count_distinct`, `mean`, `stddev`, `min`, `max`, and "
        "percentile values. Percentile must be a numeric value followed by '%', within the "
        "range 0% to 100%.", error_class="UNRECOGNIZED_STATISTIC",
        parameters={"stats": stat})


def _statistic(stat: str, a: AttributeReference) -> Expression:
    """One statistic of column ``a`` (NULL where Spark has none for the column's type)."""
    s = stat.lower()
    if isinstance(a.data_type, T.StringType) and s not in _STRING_STATISTICS:
        if s.endswith("%"):
            _percentile(s)
        elif s not in ("mean", "stddev"):
            raise _unrecognized(stat)
        return Literal(None, T.STRING)
    match s:
        case "count" | "min" | "max" | "approx_count_distinct":
            fn = UnresolvedFunction(s, (a,))
        case "count_distinct":
            fn = UnresolvedFunction("count", (a,), is_distinct=True)
        case "mean":
            fn = UnresolvedFunction("avg", (a,))
        case "stddev":
            fn = UnresolvedFunction("stddev", (a,))
        case _ if s.endswith("%"):
            fn = UnresolvedFunction("percentile_approx", (
                a, Literal(_percentile(s), T.DOUBLE), Literal(_ACCURACY, T.INT)))
        case _:
            raise _unrecognized(stat)
    return Cast(fn, T.STRING)


def summary(df: "DataFrame", statistics: tuple[str, ...]) -> "DataFrame":
    """Spark's ``StatFunctions.summary``: a ``summary`` column naming each statistic, then one
    string column per numeric or string column of ``df``."""
    stats = tuple(statistics) or DEFAULT_STATISTICS
    cols = [a for a in df.plan.output
            if a.data_type.is_numeric or isinstance(a.data_type, T.StringType)]
    for s in stats:  # Spark checks the names (and percentile ranges) up front
        if s.endswith("%"):
            _percentile(s)
        elif s.lower() not in _STRING_STATISTICS | {"mean", "stddev"}:
            raise _unrecognized(s)
    if not cols:
        table = pa.table({"summary": pa.array(list(stats), pa.large_string())})
        return df._new(LocalRelation((AttributeReference("summary", T.STRING, True),), table))
    aggs = [Alias(_statistic(s, a), f"{a.name}_{i}_{j}")
            for i, s in enumerate(stats) for j, a in enumerate(cols)]
    agg = df._new(Aggregate((), tuple(aggs), df.plan))
    out = agg.plan.output
    n = len(cols)
    values = tuple(tuple(out[i * n:(i + 1) * n]) for i in range(len(stats)))
    return agg._new(Unpivot((), values, stats, "summary", tuple(a.name for a in cols),
                            agg.plan))


def _check_str(name: str, value: Any) -> None:
    if not isinstance(value, str):
        raise AnalysisError(f"Argument `{name}` should be a str, got {type(value).__name__}.",
                            error_class="NOT_STR",
                            parameters={"arg_name": name, "arg_type": type(value).__name__})


class DataFrameStatFunctions:
    """``df.stat``: ``corr``, ``cov``, ``crosstab``, ``approxQuantile``.

    >>> import ember
    >>> df = ember.Session().createDataFrame([(1, 2.0), (2, 4.0), (3, 6.5)], "a int, b double")
    >>> round(df.stat.corr("a", "b"), 4)
    0.9979
    """

    def __init__(self, df: "DataFrame") -> None:
        self.df = df

    def _numeric(self, names: tuple[str, ...], what: str) -> list[AttributeReference]:
        attrs = [self.df._resolve(n) for n in names]
        for a in attrs:
            if not a.data_type.is_numeric:
                raise AnalysisError(
                    f"requirement failed: Currently {what} calculation for columns with dataType "
                    f"{a.data_type.simple_string()} not supported.",
                    )
        return attrs

    def _one(self, fn: str, col1: str, col2: str, what: str) -> float:
        """Spark's ``StatFunctions.collectStatisticalData``: the columns cast to double, a NULL
        read as 0.0 (its ``CovarianceCounter`` reads ``row.getDouble``), and NaN where the
        statistic has no value (a division by zero there)."""
        _check_str("col1", col1)
        _check_str("col2", col2)
        a, b = self._numeric((col1, col2), what)
        zero = Literal(0.0, T.DOUBLE)
        e = UnresolvedFunction(fn, (Coalesce((Cast(a, T.DOUBLE), zero)),
                                    Coalesce((Cast(b, T.DOUBLE), zero))))
        v = self.df._new(Aggregate((), (Alias(e, fn),), self.df.plan)).collect()[0][0]
        return float("nan") if v is None else v

    def corr(self, col1: str, col2: str, method: str | None = None) -> float:
        """Pearson correlation of two numeric columns (NULLs read as 0, as in Spark)."""
        if method is None:
            method = "pearson"
        if method != "pearson":
            raise AnalysisError(
                "Value for `method` has to be amongst the following values: ['pearson'].",
                error_class="VALUE_NOT_ALLOWED",
                parameters={"arg_name": "method", "allowed_values": "['pearson']"})
        return self._one("corr", col1, col2, "correlation")

    def cov(self, col1: str, col2: str) -> float:
        """Sample covariance of two numeric columns (NULLs read as 0, as in Spark)."""
        return self._one("covar_samp", col1, col2, "covariance")

    def crosstab(self, col1: str, col2: str) -> "DataFrame":
        """Pair counts: a ``col1_col2`` column of ``col1``'s values (as strings; NULL as
        ``"null"``) and one bigint column per value of ``col2``, sorted by name (Spark's
        ``StatFunctions.crossTabulate``; the row order is unspecified there too)."""
        _check_str("col1", col1)
        _check_str("col2", col2)
        a, b = self.df._resolve(col1), self.df._resolve(col2)
        counts = self.df._new(Aggregate(
            (a, b), (Alias(Cast(a, T.STRING), "a"), Alias(Cast(b, T.STRING), "b"),
                     Alias(UnresolvedFunction("count", (Literal(1, T.INT),)), "n")),
            self.df.plan)).to_arrow()
        firsts = ["null" if v is None else v for v in counts.column(0).to_pylist()]
        seconds = ["null" if v is None else v for v in counts.column(1).to_pylist()]
        header = sorted(set(seconds))
        if len(header) >= 10_000:
            raise AnalysisError(
                f"requirement failed: The number of distinct values for {col2}, can't exceed "
                f"1e4. Currently {len(header)}")
        index = {v: i for i, v in enumerate(header)}
        rows: dict[str, list[int]] = {}
        for x, y, n in zip(firsts, seconds, counts.column(2).to_pylist()):
            rows.setdefault(x, [0] * len(header))[index[y]] = n
        names = [f"{col1}_{col2}"] + [h.replace("`", "") for h in header]
        arrays = [pa.array(list(rows), pa.large_string())] + [
            pa.array([r[i] for r in rows.values()], pa.int64()) for i in range(len(header))]
        table = pa.Table.from_arrays(arrays, names=names)
        attrs = (AttributeReference(names[0], T.STRING, True),) + tuple(
            AttributeReference(h, T.LONG, True) for h in names[1:])
        return self.df._new(LocalRelation(attrs, table))

    def approxQuantile(self, col: Any, probabilities: Any,  # noqa: N802
                       relativeError: float) -> list[Any]:  # noqa: N803
        """Quantiles of numeric columns, NULLs ignored (Spark's ``approxQuantile``: within
        ``relativeError * n`` ranks; 0 for exact ones).  ``col`` a name: a list of floats; a
        list of names: one list per column; an empty input gives empty lists."""
        single = isinstance(col, str)
        names = (col,) if single else tuple(col)
        if not isinstance(col, (str, list, tuple)):
            raise AnalysisError(
                f"Argument `col` should be a list, str or tuple, got {type(col).__name__}.",
                error_class="NOT_LIST_OR_STR_OR_TUPLE",
                parameters={"arg_name": "col", "arg_type": type(col).__name__})
        probs = [float(p) for p in probabilities]
        if any(not 0.0 <= p <= 1.0 for p in probs):
            raise AnalysisError("requirement failed: percentile should be in the range "
                                "[0.0, 1.0]")
        if relativeError < 0:
            raise AnalysisError("requirement failed: Relative Error must be non-negative but "
                                f"got {float(relativeError)}")
        attrs = self._numeric(names, "quantile")
        accuracy = 2147483647 if relativeError == 0 else max(1, min(
            2147483647, int(1.0 / relativeError)))
        aggs = [Alias(Cast(UnresolvedFunction("percentile_approx", (
            Cast(a, T.DOUBLE), Literal(p, T.DOUBLE), Literal(accuracy, T.INT))), T.DOUBLE),
            f"q{i}_{j}") for i, a in enumerate(attrs) for j, p in enumerate(probs)]
        if not aggs:
            return [] if single else [[] for _ in names]
        row = self.df._new(Aggregate((), tuple(aggs), self.df.plan)).collect()[0]
        out = [[row[i * len(probs) + j] for j in range(len(probs))] for i in range(len(attrs))]
        out = [[] if any(v is None for v in q) else q for q in out]
        return out[0] if single else out
