"""Observed metrics: ``df.observe(Observation("m"), F.count(F.lit(1)).alias("rows"))`` and, after
an action on the returned DataFrame, ``observation.get`` -> ``{"rows": ...}`` (PySpark's
``Observation`` and ``DataFrame.observe``, Spark's ``CollectMetrics``).

``DataFrame.observe`` is :func:`observe`, set on the class by this module.  The returned
DataFrame has the same rows; its plan carries a
:class:`~ember.plans.logical.observe.CollectMetrics` node.  When a query over it runs (collect,
count, a write ...), the driver computes the metrics once that query has finished: an aggregate
over the observed DataFrame, a second pass over its rows (Spark gathers them in the same pass).
So they are the metrics of all the observed DataFrame's rows even when the action reads only
some of them (``limit``, ``first``), where Spark's cover the rows that passed.  A metric is an
aggregate (not DISTINCT, no FILTER, not nested, not a window), or an expression of aggregates
and literals, as Spark's CheckAnalysis requires.  Observations named by a string are checked
and pass the rows through; Spark reports them to query listeners, which Ember does not have.

>>> from ember.observation import Observation
>>> Observation("m")
Observation(m)
"""

from __future__ import annotations

import uuid
from typing import Any

import pyarrow as pa

from ember.dataframe import DataFrame, _table_to_rows, python_local_time_zone
from ember.errors import AnalysisError, EmberError
from ember.expressions.aggregates.base import AggregateExpression, AggregateFunction
from ember.expressions.base import Alias, AttributeReference, Expression
from ember.expressions.windows import WindowExpression
from ember.plans.logical.nodes import Aggregate
from ember.plans.logical.observe import CollectMetrics, ObservedMetrics

__all__ = ["Observation", "observe"]


class Observation:
    """PySpark's ``Observation``: metrics of a DataFrame, read with :attr:`get` after an action
    on ``df.observe(observation, ...)``.  One observation observes one DataFrame."""

    def __init__(self, name: str | None = None) -> None:
        if name is not None and (not isinstance(name, str) or not name):
            raise AnalysisError(
                "The observation name must be a non-empty string.",
                error_class="NOT_STR" if not isinstance(name, str) else "CANNOT_BE_EMPTY")
        self._name = name or str(uuid.uuid4())
        self._observed = False
        self._table: pa.Table | None = None

    @property
    def name(self) -> str:
        return self._name

    @property
    def get(self) -> dict[str, Any]:
        """The metrics, ``{name: value}``, once an action ran on the observed DataFrame."""
        if not self._observed:
            raise EmberError(
                "Should observe by calling `DataFrame.observe` before "
                "`get`.", error_class="NO_OBSERVE_BEFORE_GET")
        if self._table is None:
            # Spark blocks until an action on the observed DataFrame finishes; in one thread
            # that would never happen, so say so instead
            raise EmberError(
                f"The metrics of observation {self._name!r} are computed by an action on the "
                "observed DataFrame (collect, count, a write ...); none has run yet.",
                error_class="NO_OBSERVE_BEFORE_GET")
        row = _table_to_rows(self._table, python_local_time_zone())[0]
        return dict(zip(self._table.column_names, tuple(row)))

    def wants_metrics(self) -> bool:
        """Whether the observed DataFrame's metrics are still to be computed (the first action
        computes them)."""
        return self._table is None

    def set_metrics(self, table: pa.Table) -> None:
        """The metrics: a one-row Arrow table, a column per metric."""
        self._table = table

    def __repr__(self) -> str:
        return f"Observation({self._name})"


def observe(df: DataFrame, observation: Any, *exprs: Any) -> DataFrame:
    """``df.observe(observation, *exprs)``: this DataFrame, with metrics (aggregates over its
    rows) computed when an action runs on the result; ``observation.get`` returns them."""
    if not isinstance(observation, (Observation, str)):
        raise AnalysisError(
            "Argument `observation` should be an Observation or a str, "
            f"got {type(observation).__name__}.", error_class="NOT_OBSERVATION_OR_STR")
    if not exprs:
        raise AnalysisError("At least one exprs must be specified.",
                            error_class="CANNOT_BE_EMPTY")
    if isinstance(observation, str) and not observation:
        raise AnalysisError("Invalid observed metrics. The observed metrics should be named.",
                            error_class="INVALID_OBSERVED_METRICS.MISSING_NAME")
    try:
        aggregated = df.agg(*exprs)
    except AnalysisError as e:
        if e.error_class != "MISSING_GROUP_BY":
            raise
        raise _invalid("NON_AGGREGATE_FUNC_ARG_IS_ATTRIBUTE", ", ".join(map(str, exprs)),
                       "can only be used as an argument to an aggregate function.") from None
    plan = aggregated._plan
    assert isinstance(plan, Aggregate)
    metrics = plan.aggregate_expressions
    for m in metrics:
        _check_metric(m, m)
    if isinstance(observation, Observation):
        if observation._observed:
            raise AnalysisError(
                "An Observation can be used with a DataFrame only once.",
                error_class="REUSE_OBSERVATION")
        observation._observed = True
        name, target = observation.name, observation
    else:
        name, target = observation, None
    return df._new(CollectMetrics(name, df._plan, ObservedMetrics(metrics, target)))


def _invalid(kind: str, sql: str, what: str) -> AnalysisError:
    return AnalysisError(f"Invalid observed metrics. {sql} {what}",
                         error_class=f"INVALID_OBSERVED_METRICS.{kind}",
                         parameters={"expr": sql})


def _check_metric(metric: Expression, e: Expression, seen_aggregate: bool = False) -> None:
    """Spark's CheckAnalysis of a ``CollectMetrics`` metric."""
    sql = metric.sql()
    if isinstance(e, WindowExpression):
        raise _invalid("WINDOW_EXPRESSIONS_UNSUPPORTED", f"Window expressions are not allowed "
                       "in observed metrics, but found: {sql}", "")
    if isinstance(e, AggregateExpression):
        if seen_aggregate:
            raise _invalid("NESTED_AGGREGATES_UNSUPPORTED", "Nested aggregates are not allowed "
                           f"in observed metrics, but found: {sql}", "")
        if e.is_distinct:
            raise _invalid("AGGREGATE_EXPRESSION_WITH_DISTINCT_UNSUPPORTED",
                           f"Aggregate expression with distinct are not allowed in observed "
                           f"metrics, but found: {sql}", "")
        if e.filter is not None:
            raise _invalid("AGGREGATE_EXPRESSION_WITH_FILTER_UNSUPPORTED",
                           f"Aggregate expression with FILTER predicate are not allowed in "
                           f"observed metrics, but found: {sql}", "")
    if isinstance(e, (AggregateExpression, AggregateFunction)):
        for c in e.children:
            _check_metric(metric, c, True)
        return
    if isinstance(e, AttributeReference) and not seen_aggregate:
        raise _invalid("NON_AGGREGATE_FUNC_ARG_IS_ATTRIBUTE", f"Attribute {sql}",
                       "can only be used as an argument to an aggregate function.")
    if isinstance(e, Alias):
        _check_metric(metric, e.child, seen_aggregate)
        return
    if not e.deterministic and not seen_aggregate:
        raise _invalid("NON_AGGREGATE_FUNC_ARG_IS_NON_DETERMINISTIC", f"Non-deterministic {sql}",
                       "can only be used as an argument to an aggregate function.")
    for c in e.children:
        _check_metric(metric, c, seen_aggregate)


#: ``DataFrame.observe`` is defined here, beside Observation, whose ``get`` converts values with
#: the DataFrame module's row conversion (``ember`` imports this module, so it is always set)
DataFrame.observe = observe  # type: ignore[attr-defined]
