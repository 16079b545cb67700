"""Physical nodes of a file write: Spark's ``DataWritingCommandExec`` (printed
``Execute InsertIntoHadoopFsRelationCommand ...``) over ``WriteFilesExec`` (``WriteFiles``).

``WriteFilesExec`` is the operator the runtimes run: each of its input partitions is one write
task, which writes its rows as files and returns one row per file written (:data:`WRITE_STATS`).
``job`` carries what the tasks need to know (format, options, staging directory, job id) once the
driver has set the write up; it takes no part in equality.  ``DataWritingCommandExec`` runs no
rows itself: the driver runs its child and commits the files (``ember.execution.file_commit``).
"""

from __future__ import annotations

from dataclasses import field
from typing import Any

from ember import types as T
from ember.expressions.base import AttributeReference
from ember.physical.nodes import SparkPlan, UnaryExecNode
from ember.physical.partitioning import Partitioning, UnknownPartitioning
from ember.plans.logical.writes import InsertIntoHadoopFsRelationCommand
from ember.trees import node

__all__ = ["DataWritingCommandExec", "WriteFilesExec", "WRITE_STATS"]

#: What a write task returns per file: its path relative to the staging directory and its rows.
WRITE_STATS = (AttributeReference("file", T.STRING, False, -9101),
               AttributeReference("num_rows", T.LONG, False, -9102))


@node
class WriteFilesExec(UnaryExecNode):
    """``WriteFiles``: writes each input partition as files (one task per partition).
    ``partition_columns``: the child's attributes naming ``key=value`` directories."""

    child: SparkPlan
    partition_columns: tuple[AttributeReference, ...] = ()
    job: Any = field(default=None, compare=False)

    def _compute_output(self) -> tuple[AttributeReference, ...]:
        return WRITE_STATS

    @property
    def output_partitioning(self) -> Partitioning:
        return UnknownPartitioning(0)

    def simple_string(self) -> str:
        return "WriteFiles"


@node
class DataWritingCommandExec(UnaryExecNode):
    """``Execute InsertIntoHadoopFsRelationCommand <arguments>`` (Spark's
    ``DataWritingCommandExec``): the command and the planned ``WriteFilesExec``."""

    cmd: InsertIntoHadoopFsRelationCommand
    child: SparkPlan

    def _compute_output(self) -> tuple[AttributeReference, ...]:
        return ()

    @property
    def node_name(self) -> str:
        return f"Execute {self.cmd.node_name}"

    def simple_string(self) -> str:
        return f"Execute {self.cmd.simple_string()}"
