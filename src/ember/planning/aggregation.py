"""Aggregation strategy: a logical ``Aggregate`` becomes ``HashAggregateExec`` operators, as
Spark's ``Aggregation`` strategy and ``AggUtils`` plan them.

Fields follow Spark's ``PhysicalAggregation``: grouping expressions are named (non-attribute keys
aliased), aggregate expressions de-duplicated, and ``result_expressions`` refer to the grouping
attributes and to each aggregate's :func:`~ember.physical.nodes.aggregate_result_attribute`.

Without DISTINCT (``planAggregateWithoutDistinct``)::

    HashAggregate(keys=[k#1], functions=[sum(v#2)], output=[k#1, sum(v)#5L])          Final
    +- Exchange hashpartitioning(k#1, 200)    (EnsureRequirements; SinglePartition without keys)
       +- HashAggregate(keys=[k#1], functions=[partial_sum(v#2)], output=[k#1, sum#6L])  Partial

The Partial operator computes aggregation buffers (each function's ``buffer_attributes``) and
applies FILTERs; the Final one (requiring ``ClusteredDistribution(grouping attributes)``, or
``AllTuples``) merges them, evaluates and projects; its aggregate expressions print without their
FILTER, as Spark's.

One DISTINCT argument set ``D`` (any number of distinct functions over the same non-foldable
arguments, none with a FILTER; ``planAggregateWithOneDistinct``), four operators:
Partial [G ++ D] (regular buffers) -> PartialMerge [G ++ D] (requires clustering on G ++ D) ->
Partial [G] (merges the regular buffers, runs the distinct functions over the now unique D
values, printed ``partial_count(distinct v#2)``) -> Final [G] (requires clustering on G).

Kept as ONE ``HashAggregateExec(mode=COMPLETE)`` (requiring the same distribution as the Final):

- an aggregate function without a buffer implementation (``supports_buffers``; every
  function Ember has today -- count, count_if, sum, avg, min, max, first, last, any_value,
  bool_and, bool_or, max_by, min_by -- has one);
- several distinct argument sets, a DISTINCT aggregate with a FILTER, or a global aggregate with a
  distinct aggregate over only foldable arguments: Spark's RewriteDistinctAggregates removes these
  before planning; when it has not run, the COMPLETE operator still computes them correctly.

Spark-only details not reproduced: float distinct arguments are not wrapped in
``knownfloatingpointnormalized(normalizenanandzero(d))`` (the operators canonicalise keys), and
Spark's choice between Hash/ObjectHash/SortAggregate by buffer types (always HashAggregate here).
"""

from __future__ import annotations

from collections.abc import Callable

from ember.errors import AnalysisError
from ember.expressions.aggregates import AggregateExpression
from ember.expressions.aggregates.python import PythonUDAF
from ember.expressions.base import Alias, AttributeReference, Expression, NamedExpression
from ember.physical.nodes import (
    AggregateMode,
    HashAggregateExec,
    SparkPlan,
    aggregate_result_attribute,
)
from ember.plans.logical.nodes import Aggregate, LogicalPlan


def plan_aggregate(agg: Aggregate, plan_later: Callable[[LogicalPlan], SparkPlan]) -> SparkPlan:
    """The physical operators of ``agg`` (see the module docstring)."""
    named_grouping, aggs, results = _physical_aggregation(agg)
    check_pandas_udf_placement(aggs)
    child = plan_later(agg.child)
    distinct = [a for a in aggs if a.is_distinct]
    if not all(a.func.supports_buffers for a in aggs):
        return _plan_complete(named_grouping, aggs, results, child)
    if not distinct:
        return _plan_without_distinct(named_grouping, aggs, results, child)
    arg_sets = {frozenset(c.canonicalized for c in a.func.children if not c.foldable)
                for a in distinct}
    if (len(arg_sets) > 1 or any(a.filter is not None for a in distinct)
            or (not named_grouping and not next(iter(arg_sets)))):
        return _plan_complete(named_grouping, aggs, results, child)
    return _plan_with_one_distinct(named_grouping, aggs, results, child)


def check_pandas_udf_placement(aggs: list[AggregateExpression]) -> None:
    """Spark's Aggregation strategy: grouped aggregate pandas UDFs run only among themselves
    (``INVALID_PANDAS_UDF_PLACEMENT`` when mixed with other aggregate functions)."""
    pandas = [a.func for a in aggs if isinstance(a.func, PythonUDAF)]
    if pandas and len(pandas) < len(aggs):
        names = ", ".join(f"`{f.name}`" for f in pandas)
        raise AnalysisError(
            f"The group aggregate pandas UDF {names} cannot be invoked together with as other, "
            f"non-pandas aggregate functions.", error_class="INVALID_PANDAS_UDF_PLACEMENT",
            parameters={"functionList": names})


def _physical_aggregation(agg: Aggregate) -> tuple[
        list[NamedExpression], list[AggregateExpression], list[Expression]]:
    """Spark's ``PhysicalAggregation``: named grouping expressions, de-duplicated aggregate
    expressions, and the result expressions over their attributes."""
    named_grouping: list[NamedExpression] = []
    grouping_map: dict[Expression, AttributeReference] = {}
    for g in agg.grouping_expressions:
        ne = g if isinstance(g, NamedExpression) else Alias(g, g.sql())
        named_grouping.append(ne)
        grouping_map.setdefault((g.child if isinstance(g, Alias) else g).canonicalized,
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
            hit = grouping_map.get(e.canonicalized)
            if hit is not None:
                return hit
        return None

    results: list[Expression] = []
    for e in agg.aggregate_expressions:
        if isinstance(e, Alias):
            results.append(e.copy(child=_rewrite_down(e.child, rewrite)))
        else:
            results.append(_rewrite_down(e, rewrite))
    return named_grouping, aggs, results


def _plan_complete(named_grouping, aggs, results, child: SparkPlan) -> SparkPlan:
    required = tuple(g.child if isinstance(g, Alias) else g for g in named_grouping)
    return HashAggregateExec(AggregateMode.COMPLETE, tuple(named_grouping), tuple(aggs),
                             tuple(results), child,
                             required_child_distribution_expressions=required)


def _plan_without_distinct(named_grouping, aggs, results, child: SparkPlan) -> SparkPlan:
    grouping_attrs = tuple(g.to_attribute() for g in named_grouping)
    buffers = tuple(b for a in aggs for b in a.func.buffer_attributes())
    partial = HashAggregateExec(AggregateMode.PARTIAL, tuple(named_grouping), tuple(aggs),
                                grouping_attrs + buffers, child)
    return HashAggregateExec(AggregateMode.FINAL, grouping_attrs, _no_filter(aggs),
                             tuple(results), partial,
                             required_child_distribution_expressions=grouping_attrs,
                             initial_input_buffer_offset=len(grouping_attrs))


def _plan_with_one_distinct(named_grouping, aggs, results, child: SparkPlan) -> SparkPlan:
    grouping_attrs = tuple(g.to_attribute() for g in named_grouping)
    regular = [a for a in aggs if not a.is_distinct]
    distinct = [a for a in aggs if a.is_distinct]

    # The distinct arguments D, named (Spark: an Alias named after the expression's string).
    distinct_exprs: list[Expression] = []
    for c in distinct[0].func.children:
        if not c.foldable and all(c.canonicalized != d.canonicalized for d in distinct_exprs):
            distinct_exprs.append(c)
    named_distinct = [d if isinstance(d, NamedExpression) else Alias(d, d.simple_string())
                      for d in distinct_exprs]
    distinct_attrs = tuple(d.to_attribute() for d in named_distinct)
    lookup = {d.canonicalized: a for d, a in zip(distinct_exprs, distinct_attrs)}
    keys = grouping_attrs + distinct_attrs

    regular_buffers = tuple(b for a in regular for b in a.func.buffer_attributes())
    # 1. Partial: group by G ++ D, regular buffers (FILTERs apply here).
    partial = HashAggregateExec(AggregateMode.PARTIAL,
                                tuple(named_grouping) + tuple(named_distinct), tuple(regular),
                                keys + regular_buffers, child)
    # 2. PartialMerge: one row per (G, D).
    merged = _no_filter(regular)
    partial_merge = HashAggregateExec(AggregateMode.PARTIAL_MERGE, keys, merged,
                                      keys + regular_buffers, partial,
                                      required_child_distribution_expressions=keys,
                                      initial_input_buffer_offset=len(keys))
    # 3. Partial for the distinct functions, their arguments replaced by the D attributes.
    rewritten = tuple(
        a.copy(func=a.func.transform_down(lambda e: lookup.get(e.canonicalized)))
        for a in distinct)
    distinct_buffers = tuple(b for a in rewritten for b in a.func.buffer_attributes())
    modes = (AggregateMode.PARTIAL_MERGE,) * len(merged) + (AggregateMode.PARTIAL,) * len(rewritten)
    partial_distinct = HashAggregateExec(AggregateMode.PARTIAL, grouping_attrs,
                                         merged + rewritten,
                                         grouping_attrs + regular_buffers + distinct_buffers,
                                         partial_merge, aggregate_modes=modes,
                                         initial_input_buffer_offset=len(keys))
    # 4. Final over G.
    return HashAggregateExec(AggregateMode.FINAL, grouping_attrs, merged + rewritten,
                             tuple(results), partial_distinct,
                             required_child_distribution_expressions=grouping_attrs,
                             initial_input_buffer_offset=len(grouping_attrs))


def _no_filter(aggs) -> tuple[AggregateExpression, ...]:
    """The aggregates as the merging operators show them (Spark drops FILTER after Partial);
    ids are kept, so result attributes still match."""
    return tuple(a if a.filter is None else a.copy(filter=None) for a in aggs)


def _rewrite_down(e: Expression, fn: Callable[[Expression], Expression | None]) -> Expression:
    """Pre-order rewrite that does not descend into replaced nodes."""
    r = fn(e)
    if r is not None:
        return r
    kids = e.children
    if not kids:
        return e
    return e.with_children(tuple(_rewrite_down(k, fn) for k in kids))


def plan_streaming_aggregate(agg: Aggregate, plan_later: Callable[[LogicalPlan], SparkPlan],
                             save: Callable[[tuple[AttributeReference, ...], SparkPlan],
                                            SparkPlan],
                             restore: Callable[[tuple[AttributeReference, ...], SparkPlan],
                                               SparkPlan]) -> SparkPlan:
    """A streaming aggregation as Spark's ``AggUtils.planStreamingAggregation`` lays it out
    (``restore`` / ``save`` build the StateStoreRestore / StateStoreSave nodes)::

        HashAggregate [Final] <- StateStoreSave <- HashAggregate [PartialMerge]
          <- StateStoreRestore <- HashAggregate [PartialMerge] <- Exchange
          <- HashAggregate [Partial]

    Every operator above the Partial one is clustered as the state is
    (``stateful_num_partitions``, fixed by the micro-batch engine)."""
    named_grouping, aggs, results = _physical_aggregation(agg)
    keys = tuple(g.to_attribute() for g in named_grouping)
    buffers = tuple(b for a in aggs for b in a.func.buffer_attributes())
    merged = _no_filter(aggs)
    partial = HashAggregateExec(AggregateMode.PARTIAL, tuple(named_grouping), tuple(aggs),
                                keys + buffers, plan_later(agg.child))

    def merge(child: SparkPlan) -> SparkPlan:
        return HashAggregateExec(AggregateMode.PARTIAL_MERGE, keys, merged, keys + buffers, child,
                                 required_child_distribution_expressions=keys,
                                 initial_input_buffer_offset=len(keys),
                                 stateful_num_partitions=0)

    saved = save(keys, merge(restore(keys, merge(partial))))
    return HashAggregateExec(AggregateMode.FINAL, keys, merged, tuple(results), saved,
                             required_child_distribution_expressions=keys,
                             initial_input_buffer_offset=len(keys), stateful_num_partitions=0)
