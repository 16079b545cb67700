"""Aggregation strategy: a logical ``Aggregate`` becomes ``HashAggregateExec`` operators.

Wave 1 (until the runtime has aggregate buffers): every Aggregate is ONE
``HashAggregateExec(mode=COMPLETE)`` requiring ``ClusteredDistribution(grouping)`` (``AllTuples``
without grouping), where Spark plans Partial -> Exchange -> Final (and four operators for one
distinct group, spark-behavior.md 9.2).  The exchange EnsureRequirements inserts is the same as
Spark's; only the partial aggregate below it is missing.  DISTINCT aggregates over one argument
set are computed by the COMPLETE aggregate itself; several distinct groups are expected to have
been rewritten by RewriteDistinctAggregates (the COMPLETE operator still runs them if not).

Fields follow Spark's ``PhysicalAggregation``: ``grouping_expressions`` are named expressions over
the child (non-attribute keys aliased); ``aggregate_expressions`` the de-duplicated
``AggregateExpression``s; ``result_expressions`` named expressions over the grouping attributes
and each aggregate's :func:`~ember.physical.nodes.aggregate_result_attribute`.
"""

from __future__ import annotations

from collections.abc import Callable

from ember.expressions.aggregates import AggregateExpression
from ember.expressions.base import Alias, AttributeReference, Expression, NamedExpression
from ember.physical.nodes import AggregateMode, HashAggregateExec, SparkPlan, aggregate_result_attribute
from ember.physical.partitioning import canonicalize
from ember.plans.logical.nodes import Aggregate, LogicalPlan


def plan_aggregate(agg: Aggregate, plan_later: Callable[[LogicalPlan], SparkPlan]) -> SparkPlan:
    """One COMPLETE-mode HashAggregateExec for ``agg`` (see the module docstring)."""
    # Named grouping expressions (Spark: non-attribute keys get an Alias named after the key).
    named_grouping: list[NamedExpression] = []
    grouping_map: dict[Expression, AttributeReference] = {}
    for g in agg.grouping_expressions:
        if isinstance(g, NamedExpression):
            ne = g
        else:
            ne = Alias(g, g.sql())
        named_grouping.append(ne)
        grouping_map.setdefault(canonicalize(g.child if isinstance(g, Alias) else g),
                                ne.to_attribute())

    # De-duplicated aggregate expressions, first occurrence wins (equality ignores ids).
    aggs: list[AggregateExpression] = []
    for e in agg.aggregate_expressions:
        e.foreach(lambda x: aggs.append(x) if isinstance(x, AggregateExpression)
                  and x not in aggs else None)

    def rewrite(e: Expression) -> Expression | None:
        if isinstance(e, AggregateExpression):
            first = aggs[aggs.index(e)]
            return aggregate_result_attribute(first)
        if not isinstance(e, NamedExpression) or isinstance(e, AttributeReference):
            hit = grouping_map.get(canonicalize(e))
            if hit is not None:
                return hit
        return None

    results: list[Expression] = []
    for e in agg.aggregate_expressions:
        if isinstance(e, Alias):
            results.append(e.copy(child=_rewrite_down(e.child, rewrite)))
        else:
            results.append(_rewrite_down(e, rewrite))

    required = tuple(g.child if isinstance(g, Alias) else g for g in named_grouping)
    return HashAggregateExec(AggregateMode.COMPLETE, tuple(named_grouping), tuple(aggs),
                             tuple(results), plan_later(agg.child),
                             required_child_distribution_expressions=required)


def _rewrite_down(e: Expression, fn: Callable[[Expression], Expression | None]) -> Expression:
    """Pre-order rewrite that does not descend into replaced nodes."""
    r = fn(e)
    if r is not None:
        return r
    kids = e.children
    if not kids:
        return e
    return e.with_children(tuple(_rewrite_down(k, fn) for k in kids))
