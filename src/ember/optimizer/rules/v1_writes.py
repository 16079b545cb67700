"""V1Writes: a write command's query gets the ordering its writer needs and a ``WriteFiles``
marker (Spark's ``V1Writes``, applied to a ``V1WriteCommand``)::

    InsertIntoHadoopFsRelationCommand ..., [p#2], ...        InsertIntoHadoopFsRelationCommand ...
    +- Project [a#0, p#2]                            ==>     +- WriteFiles
                                                                +- Sort [p#2 ASC NULLS FIRST], false
                                                                   +- Project [a#0, p#2]

The write task writes one partition directory after another, so its rows must arrive sorted by
the dynamic partition columns (those without a static ``PARTITION (p=v)`` value); a per-task
(``false``: not global) Sort is added unless the query is already a Sort on them.  Applied once,
after the optimizer's batches, by ``QueryExecution`` (only write commands have a query to wrap).
"""

from __future__ import annotations

from ember.conf import SQLConf
from ember.expressions.base import SortOrder
from ember.optimizer.rule_executor import Rule
from ember.plans.logical.nodes import LogicalPlan, Sort
from ember.plans.logical.writes import InsertIntoHadoopFsRelationCommand, WriteFiles

__all__ = ["V1Writes"]


def _ordered_by(plan: LogicalPlan, required: tuple[SortOrder, ...]) -> bool:
    if not isinstance(plan, Sort) or len(plan.order) < len(required):
        return False
    return all(o.child.semantic_equals(r.child) and o.ascending
               and o.effective_nulls_first for o, r in zip(plan.order, required))


class V1Writes(Rule):
    rule_name = "V1Writes"
    excludable = False

    def apply(self, plan: LogicalPlan, conf: SQLConf) -> LogicalPlan:
        if not isinstance(plan, InsertIntoHadoopFsRelationCommand) or isinstance(
                plan.query, WriteFiles):
            return plan
        static = {k.lower() for k, _ in plan.static_partitions}
        required = tuple(SortOrder(a, True) for a in plan.partition_columns
                         if a.name.lower() not in static)
        query = plan.query
        if required and not _ordered_by(query, required):
            query = Sort(required, False, query)
        return plan.copy(query=WriteFiles(query))
