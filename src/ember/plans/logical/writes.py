"""The logical command writing a query's rows into a directory of files (Spark's
``InsertIntoHadoopFsRelationCommand``), and Spark's ``SaveMode``.

``df.write...save(path)`` builds it directly (as Spark's ``DataSource.planForWriting``); SQL
``INSERT`` / ``CREATE TABLE AS SELECT`` into a file-based table build it from the analyzed
statement, with the table's ``CatalogTable``.  ``QueryExecution`` optimizes the ``query`` child
as any query, wraps it in ``WriteFiles`` (Spark's ``V1Writes``: :mod:`ember.optimizer.rules.v1_writes`)
and plans it as ``Execute InsertIntoHadoopFsRelationCommand`` over ``WriteFilesExec``
(:mod:`ember.physical.writes`); the runtimes write the files and
:mod:`ember.execution.file_commit` commits them.

>>> # InsertIntoHadoopFsRelationCommand("/tmp/out", (), False, (), "parquet",
>>> #     (("path", "/tmp/out"),), query, SaveMode.APPEND)
"""

from __future__ import annotations

import json
from dataclasses import field
from enum import Enum
from typing import TYPE_CHECKING

from ember.errors import AnalysisError
from ember.expressions.base import AttributeReference
from ember.plans.logical.nodes import Command, LogicalPlan
from ember.trees import node

if TYPE_CHECKING:  # pragma: no cover
    from ember.analysis.catalog import CatalogTable

__all__ = ["SaveMode", "InsertIntoHadoopFsRelationCommand", "WriteFiles", "FORMAT_NAMES",
           "PARTITION_COLUMNS_OPTION", "qualified_path", "partition_columns_option"]

#: The option under which Spark's ``DataFrameWriter`` passes ``partitionBy`` (a JSON array).
PARTITION_COLUMNS_OPTION = "__partition_columns"

#: Each file format's name as Spark prints its ``FileFormat`` (``Parquet``, ``CSV``, ...).
FORMAT_NAMES = {"parquet": "Parquet", "csv": "CSV", "json": "JSON", "text": "Text",
                "orc": "ORC"}


class SaveMode(Enum):
    """Spark's ``SaveMode``: what a write does when its target already holds data."""

    ERROR_IF_EXISTS = "ErrorIfExists"
    APPEND = "Append"
    OVERWRITE = "Overwrite"
    IGNORE = "Ignore"

    def __str__(self) -> str:
        return self.value

    @classmethod
    def parse(cls, mode: "str | SaveMode | None") -> "SaveMode":
        """``DataFrameWriter.mode``'s names (case-insensitive): error / errorifexists / default,
        append, overwrite, ignore; ``INVALID_SAVE_MODE`` otherwise."""
        if isinstance(mode, SaveMode):
            return mode
        key = (mode or "error").lower()
        found = {"error": cls.ERROR_IF_EXISTS, "errorifexists": cls.ERROR_IF_EXISTS,
                 "default": cls.ERROR_IF_EXISTS, "append": cls.APPEND,
                 "overwrite": cls.OVERWRITE, "ignore": cls.IGNORE}.get(key)
        if found is None:
            raise AnalysisError(
                f"The specified save mode \"{mode}\" is invalid. Valid save modes include "
                "\"append\", \"overwrite\", \"ignore\", \"error\", \"errorifexists\", and "
                "\"default\".", error_class="INVALID_SAVE_MODE",
                parameters={"mode": f"\"{mode}\""})
        return found


def qualified_path(path: str) -> str:
    """A local path as Spark prints a qualified Hadoop path (``file:/abs/dir``); a URI with a
    scheme stays as it is."""
    if "://" in path or path.startswith("file:"):
        return path
    return "file:" + path


@node
class InsertIntoHadoopFsRelationCommand(Command):
    """Write ``query``'s rows as files under ``output_path`` (Spark's
    ``InsertIntoHadoopFsRelationCommand``).

    - ``output_path``: the absolute target directory (local path, or a URI the Spark runtime
      writes through Spark).
    - ``static_partitions``: ``INSERT ... PARTITION (p=1)``'s fixed values, ``(name, value)``
      pairs (value None for NULL); their columns are in ``query`` as literals.
    - ``partition_columns``: the attributes of ``query`` that name ``key=value`` directories
      (static ones first), left out of the files.
    - ``file_format``: ``parquet`` | ``csv`` | ``json`` | ``text``; ``options``: the data
      source options (lower-case keys; ``path``, ``__partition_columns`` as Spark passes them).
    - ``mode``: the :class:`SaveMode`; ``dynamic_partition_overwrite``: an overwrite replaces
      only the partitions the query writes (``partitionOverwriteMode=DYNAMIC``).
    - ``catalog_table``: the table written (a ``CatalogTable``), None for a path.
    - ``output_column_names``: the names the files' columns get (the table's, or the query's).
    """

    output_path: str
    static_partitions: tuple[tuple[str, str | None], ...]
    if_partition_not_exists: bool
    partition_columns: tuple[AttributeReference, ...]
    file_format: str
    options: tuple[tuple[str, str], ...]
    query: LogicalPlan
    mode: SaveMode
    catalog_table: "CatalogTable | None" = field(default=None, compare=False)
    output_column_names: tuple[str, ...] = ()
    dynamic_partition_overwrite: bool = False

    @property
    def node_name(self) -> str:
        return "InsertIntoHadoopFsRelationCommand"

    @property
    def option_map(self) -> dict[str, str]:
        """The options as a dict (keys lower-case)."""
        return {k.lower(): v for k, v in self.options}

    @property
    def column_names(self) -> tuple[str, ...]:
        return self.output_column_names or tuple(a.name for a in self.query.output)

    def simple_string(self) -> str:
        """Spark's argument string: path, static partitions (when any), ifPartitionNotExists,
        partition columns (when any), format, options, mode, table and its file index (when
        any), output column names."""
        parts = [qualified_path(self.output_path)]
        if self.static_partitions:
            parts.append("[" + ", ".join(
                f"{k}={'null' if v is None else v}"
                for k, v in self.static_partitions) + "]")
        parts.append(str(self.if_partition_not_exists).lower())
        if self.partition_columns:
            parts.append("[" + ", ".join(a.simple_string() for a in self.partition_columns)
                         + "]")
        parts.append(FORMAT_NAMES.get(self.file_format, self.file_format))
        parts.append("[" + ", ".join(f"{k}={v}" for k, v in self.options) + "]")
        parts.append(str(self.mode))
        table = self.catalog_table
        if table is not None:
            parts.append(f"`spark_catalog`.`{table.database}`.`{table.name}`")
            # Spark indexes a partitioned table's files through the catalog
            index = "CatalogFileIndex" if table.partition_columns else "InMemoryFileIndex"
            parts.append(f"org.apache.spark.sql.execution.datasources.{index}("
                         f"{qualified_path(table.location or self.output_path)})")
        parts.append("[" + ", ".join(self.column_names) + "]")
        return f"{self.node_name} {', '.join(parts)}"


def partition_columns_option(names: tuple[str, ...] | list[str]) -> str:
    """``partitionBy``'s columns as Spark passes them in the ``__partition_columns`` option."""
    return json.dumps(list(names), separators=(",", ":"))


@node
class WriteFiles(LogicalPlan):
    """Spark's ``WriteFiles``: the marker V1Writes puts between a write command and its query
    (the physical ``WriteFilesExec`` writes the files); its output is the query's."""

    child: LogicalPlan

    def _compute_output(self) -> tuple[AttributeReference, ...]:
        return self.child.output

    def simple_string(self) -> str:
        return "WriteFiles"
