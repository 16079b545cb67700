"""The write strategy (Spark's ``DataWritingCommand`` planning in ``BasicOperators``): an
``InsertIntoHadoopFsRelationCommand`` becomes ``DataWritingCommandExec`` over ``WriteFilesExec``
over the planned query, as Spark prints it::

    Execute InsertIntoHadoopFsRelationCommand file:/out, false, Parquet, [path=/out], ...
    +- WriteFiles
       +- Project [...]
"""

from __future__ import annotations

from collections.abc import Callable

from ember.physical.nodes import SparkPlan
from ember.physical.writes import DataWritingCommandExec, WriteFilesExec
from ember.plans.logical.nodes import LogicalPlan
from ember.plans.logical.writes import InsertIntoHadoopFsRelationCommand, WriteFiles

__all__ = ["write_operators"]


def write_operators(plan: LogicalPlan, plan_later: Callable[[LogicalPlan], SparkPlan]
                    ) -> SparkPlan | None:
    """The physical write of ``plan`` (None when it is not a write command)."""
    if not isinstance(plan, InsertIntoHadoopFsRelationCommand):
        return None
    query = plan.query.child if isinstance(plan.query, WriteFiles) else plan.query
    write = WriteFilesExec(plan_later(query), plan.partition_columns)
    return DataWritingCommandExec(plan, write)
