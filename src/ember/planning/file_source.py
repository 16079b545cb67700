"""FileSourceStrategy (Spark's ``FileSourceStrategy`` over ``PhysicalOperation``).

``Project(Filter(FileRelation))`` (each layer optional) is planned as Spark does::

    Project [projects]                      -- omitted when it is exactly the filter's output
    +- Filter condition                     -- omitted without a condition
       +- FileScan parquet [required columns] DataFilters: [conjuncts of condition]

The scan reads only the *required* columns (those the projections and the condition
reference, in the relation's column order), and carries the condition's deterministic conjuncts
as ``data_filters``: the runtime uses them to skip Parquet row groups by their statistics (and to
drop rows early), while the ``FilterExec`` above still evaluates the whole condition, so pushed
filters are an optimization only, never a change of the result.
"""

from __future__ import annotations

from collections.abc import Callable

from ember.expressions.base import Expression, and_all, split_conjuncts
from ember.physical import nodes as P
from ember.plans.logical import nodes as L
from ember.expressions.subquery import SubqueryExpression

__all__ = ["file_source_strategy"]


def _has_subquery(e: Expression) -> bool:
    return e.find(lambda x: isinstance(x, SubqueryExpression)) is not None


def _match(plan: L.LogicalPlan
           ) -> tuple[tuple[Expression, ...] | None, Expression | None, L.FileRelation] | None:
    match plan:
        case L.Project(project_list=pl, child=L.Filter(condition=cond, child=L.FileRelation() as r)):
            return pl, cond, r
        case L.Project(project_list=pl, child=L.FileRelation() as r):
            return pl, None, r
        case L.Filter(condition=cond, child=L.FileRelation() as r):
            return None, cond, r
        case L.FileRelation() as r:
            return None, None, r
    return None


def file_source_strategy(plan: L.LogicalPlan,
                         plan_later: Callable[[L.LogicalPlan], P.SparkPlan],
                         link: Callable[[P.SparkPlan, L.LogicalPlan], None] | None = None
                         ) -> P.SparkPlan | None:
    """The scan (+ filter + project) of ``plan``, or None when ``plan`` is not such a shape.
    ``link(physical, logical)`` is told where each created node came from (the scan from the
    relation, the filter from the Filter)."""
    m = _match(plan)
    if m is None:
        return None
    projects, cond, rel = m
    exprs: list[Expression] = list(projects) if projects is not None else list(rel.output)
    if cond is not None:
        if _has_subquery(cond):
            return None
        exprs.append(cond)
    if projects is not None and any(_has_subquery(e) for e in projects):
        return None
    required: set[int] = set()
    for e in exprs:
        required |= e.references
    parts = {a.id for a in rel.partition_attrs}
    conjuncts = split_conjuncts(cond)
    # Spark's partitionKeyFilters: deterministic conjuncts over partition columns only; they
    # select directories and are not evaluated again above the scan
    partition_filters = tuple(c for c in conjuncts if c.deterministic and c.references
                              and c.references <= parts)
    rest = [c for c in conjuncts if not any(c is f for f in partition_filters)]
    cond = and_all(rest) if partition_filters else cond
    required = set()
    for e in (list(projects) if projects is not None else list(rel.output)) + rest:
        required |= e.references
    # Spark's readDataColumns ++ partitionColumns: every partition column is read
    output = tuple(a for a in rel.attrs if a.id in required and a.id not in parts) + \
        tuple(a for a in rel.attrs if a.id in parts)
    data_filters = tuple(c for c in rest if c.deterministic and not (c.references & parts))
    node: P.SparkPlan = P.FileSourceScanExec(rel, output, data_filters, partition_filters)
    if link is not None:
        link(node, rel)
    if cond is not None:
        node = P.FilterExec(cond, node)
        if link is not None:
            link(node, plan.child if projects is not None else plan)  # type: ignore[attr-defined]
    if projects is not None:
        if tuple(projects) != tuple(node.output):
            node = P.ProjectExec(tuple(projects), node)
    elif node.output != rel.output:  # pragma: no cover - every relation column is required
        node = P.ProjectExec(rel.output, node)
    return node
