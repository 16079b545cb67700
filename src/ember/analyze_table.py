"""ANALYZE TABLE, a command of the session: Spark's ``AnalyzeTableCommand`` (``COMPUTE STATISTICS
[NOSCAN]``) and ``AnalyzeColumnCommand`` (``FOR COLUMNS c, .. | FOR ALL COLUMNS``).

As Spark's commands, it reads the relation through the session's query path (a ``count()`` for
the row count, the relation's rows for column statistics) and records the result in the session
catalog's table statistics (``ember.analysis.table_statistics``), which plan estimation reads.
Spark accepts ANALYZE only for tables and *cached* temporary views; Ember (which has only views)
accepts any view whose plan is a plain relation (a LocalRelation, FileRelation or Range), possibly
under column projections, renames and aliases.
"""

from __future__ import annotations

from types import MappingProxyType
from typing import TYPE_CHECKING

from ember.analysis.catalog import table_not_found
from ember.dataframe import DataFrame
from ember.errors import AnalysisError
from ember.expressions.base import Alias, AttributeReference
from ember.plans.logical.nodes import (
    FileRelation,
    LocalRelation,
    LogicalPlan,
    Project,
    Range,
    ResolvedHint,
    SubqueryAlias,
    View,
)
from ember.plans.logical.statistics import (
    ColumnStat,
    TableStats,
    compute_column_stats,
    relation_size_in_bytes,
    stats_supported,
)
from ember.query_execution import QueryExecution

if TYPE_CHECKING:
    from ember.session import Session

__all__ = ["analyze_table"]


def analyze_table(session: "Session", name_parts: tuple[str, ...], *, no_scan: bool = False,
                  columns: tuple[str, ...] | None = None, all_columns: bool = False) -> None:
    """Run ``ANALYZE TABLE name COMPUTE STATISTICS [NOSCAN | FOR COLUMNS .. | FOR ALL COLUMNS]``
    on the session's view ``name``: records the relation's size, row count (unless NOSCAN) and
    the requested columns' statistics (merged with earlier ones), as Spark's AnalyzeTableCommand
    and AnalyzeColumnCommand.

    >>> # spark.sql("ANALYZE TABLE t COMPUTE STATISTICS FOR COLUMNS a, b")
    """
    catalog = session.session_catalog
    plan = catalog.try_lookup(tuple(name_parts))
    if plan is None:
        raise table_not_found(tuple(name_parts))
    traced = _trace_to_leaf(plan)
    if traced is None:
        raise AnalysisError(
            "The feature is not supported: The ANALYZE TABLE command does not support views "
            f"over queries (`{'.'.join(name_parts)}` is not a plain relation).",
            error_class="UNSUPPORTED_FEATURE.ANALYZE_VIEW",
            parameters={},
        )
    leaf, col_names = traced
    output = plan.output
    case_sensitive = session.sql_conf.case_sensitive
    wanted: list[AttributeReference] = []
    if all_columns:
        wanted = [a for a in output if stats_supported(a.data_type)]
    elif columns is not None:
        for c in columns:
            hits = [a for a in output
                    if (a.name == c if case_sensitive else a.name.lower() == c.lower())]
            if not hits:
                raise AnalysisError(
                    f"The column `{c}` cannot be found. Verify the spelling and correctness of "
                    "the column name according to the SQL config \"spark.sql.caseSensitive\".",
                    error_class="COLUMN_NOT_FOUND",
                    parameters={"colName": f"`{c}`",
                                "caseSensitiveConfig": "\"spark.sql.caseSensitive\""},
                )
            a = hits[0]
            if not stats_supported(a.data_type):
                raise AnalysisError(
                    f"The feature is not supported: The ANALYZE TABLE FOR COLUMNS command does "
                    f"not support the type {a.data_type.simple_string()} of the column `{a.name}` "
                    f"in the table `{'.'.join(name_parts)}`.",
                    error_class="UNSUPPORTED_FEATURE.ANALYZE_UNSUPPORTED_COLUMN_TYPE",
                    parameters={"columnType": f'"{a.data_type.simple_string().upper()}"',
                                "columnName": f"`{a.name}`",
                                "tableName": f"`{'.'.join(name_parts)}`"},
                )
            wanted.append(a)
    size = relation_size_in_bytes(leaf, session.sql_conf)
    tables = catalog.table_statistics
    old = tables.analyzed(leaf)
    col_stats: dict[str, ColumnStat] = dict(old.col_stats) if old is not None else {}
    row_count = old.row_count if old is not None else None
    if not no_scan or wanted:
        if wanted:
            data = QueryExecution(session, leaf).to_arrow()
            row_count = data.num_rows
            leaf_pos = {a.name: i for i, a in enumerate(leaf.output)}
            for a in wanted:
                leaf_name = col_names.get(a.id)
                if leaf_name is None:
                    continue
                col = data.column(leaf_pos[leaf_name])
                col_stats[leaf_name.lower()] = compute_column_stats(col, a.data_type)
        else:
            row_count = _count_rows(session, leaf)
    tables.record(leaf, TableStats(size, row_count, MappingProxyType(col_stats)))


def _count_rows(session: "Session", leaf: LogicalPlan) -> int:
    match leaf:
        case LocalRelation():
            return leaf.num_rows
        case Range():
            return leaf.num_elements
    return DataFrame(session, leaf).count()  # Spark's ``sparkSession.table(t).count()``


def _trace_to_leaf(plan: LogicalPlan) -> tuple[LogicalPlan, dict[int, str]] | None:
    """The base relation under a view's plan and, for each output attribute id of ``plan``, the
    leaf column name it is (through projections of columns and aliases of columns); None when the
    plan is not such a plain relation access."""
    mapping: dict[int, int] = {a.id: a.id for a in plan.output}  # plan attr id -> current id
    node = plan
    while True:
        match node:
            case SubqueryAlias(child=c) | View(child=c) | ResolvedHint(child=c):
                node = c
            case Project(project_list=items, child=c):
                step: dict[int, int] = {}
                for e in items:
                    if isinstance(e, AttributeReference):
                        step[e.id] = e.id
                    elif isinstance(e, Alias) and isinstance(e.child, AttributeReference):
                        step[e.id] = e.child.id
                    else:
                        step[e.id] = -1  # type: ignore[attr-defined]
                mapping = {k: step.get(v, -1) for k, v in mapping.items()}
                node = c
            case LocalRelation() | FileRelation() | Range():
                names = {a.id: a.name for a in node.output}
                return node, {k: names[v] for k, v in mapping.items() if v in names}
            case _:
                return None

