"""Writes into catalog tables: ``INSERT``, ``CREATE TABLE ... AS SELECT``, and the DataFrame
API's ``saveAsTable``, ``insertInto`` and ``writeTo`` (Spark's ``DataFrameWriterV2``).

Every write goes through the write engine's ``InsertIntoHadoopFsRelationCommand``
(:meth:`QueryExecution.execute_write`, whose commit protocol makes a failed write leave the
table's files as they were); this module decides what is written where, and keeps the catalog
in step:

- ``INSERT``: the analyzer turns the statement into the command
  (:func:`ember.analysis.table_insertion.insert_command`: store assignment, partitions).
- CTAS (Spark's ``CreateDataSourceTableAsSelectCommand``): the table's schema is the query's
  (columns nullable, partition columns last); the metadata is created, then the rows written;
  if the write fails, the metadata and the table's directory are removed again, so a failed
  CTAS leaves no table behind.  ``CREATE OR REPLACE TABLE ... AS SELECT`` and ``REPLACE TABLE
  ... AS SELECT`` fail as in Spark's session catalog (``UNSUPPORTED_FEATURE.TABLE_OPERATION``).
- ``df.write.saveAsTable(name)``: mode ``error`` (CTAS; ``TABLE_OR_VIEW_ALREADY_EXISTS`` if it
  exists), ``ignore``, ``overwrite`` (the table is dropped and created again from the
  DataFrame, as Spark does) and ``append`` (by column name, after Spark's checks of the format,
  the partitioning and the number of columns).
- ``df.write.insertInto(name, overwrite)``: an ``INSERT`` by position.
- ``df.writeTo(name)``: ``create()``; on Spark's session catalog the other methods fail with
  Spark's errors, and so they do here.

On the Spark runtime each table written is also registered in the SparkSession's catalog over
the same directory (``ember.catalog_commands.refresh_in_spark``), so Spark SQL reads it.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from ember import catalog_commands
from ember import types as T
from ember.analysis.catalog import table_already_exists, table_not_found
from ember.analysis.catalog_model import EXTERNAL, MANAGED, SESSION_CATALOG, CatalogTable, quote
from ember.analysis.table_insertion import (PreparedInsert, prepare_insert, table_write_command)
from ember.column import parse_column_name
from ember.conf import (ALLOW_NON_EMPTY_LOCATION_IN_CTAS, CASE_SENSITIVE,
                        DEFAULT_DATA_SOURCE)
from ember.errors import AnalysisError, ParseError
from ember.plans.logical.ddl import CreateTable
from ember.plans.logical.insert import InsertIntoStatement
from ember.plans.logical.nodes import LogicalPlan, Project
from ember.plans.logical.writes import SaveMode
from ember.query_execution import QueryExecution

if TYPE_CHECKING:  # pragma: no cover
    from ember.dataframe import DataFrame
    from ember.session import Session

__all__ = ["run_insert", "create_table_as_select", "save_as_table", "insert_into",
           "DataFrameWriterV2"]

_PROVIDERS = ("parquet", "csv", "json")
#: Spark's names of the file sources in its format-mismatch message
_SOURCE_NAMES = {"parquet": "ParquetDataSourceV2", "csv": "CSVDataSourceV2",
                 "json": "JsonDataSourceV2"}


def _full_name(database: str, name: str) -> str:
    return ".".join(quote(p) for p in (SESSION_CATALOG, database, name))


def _not_supported(full: str, operation: str) -> AnalysisError:
    return catalog_commands.table_operation_not_supported(full, operation)


def _refresh_in_spark(session: "Session", table: CatalogTable) -> None:
    """Make the table written, and its new files, known to the session's SparkSession (Spark
    runtime only)."""
    catalog_commands.refresh_in_spark(session, table)


# -- INSERT ------------------------------------------------------------------------------------


def run_insert(session: "Session", stmt: InsertIntoStatement) -> None:
    """Run ``INSERT ...``: the analyzed write command (``INSERT OVERWRITE ... PARTITION (...)
    IF NOT EXISTS`` does nothing when the partition exists), then Spark's view of the table
    refreshed."""
    qe = QueryExecution(session, stmt)
    qe.execute_write()
    _refresh_in_spark(session, qe.analyzed.catalog_table)


# -- CREATE TABLE AS SELECT --------------------------------------------------------------------


def create_table_as_select(session: "Session", plan: CreateTable) -> None:
    """``CREATE TABLE [IF NOT EXISTS] name [USING fmt] [PARTITIONED BY] [OPTIONS] [LOCATION]
    [COMMENT] [TBLPROPERTIES] AS query``."""
    catalog = session.session_catalog
    database, name = catalog.qualify(plan.name_parts)
    if plan.replace:
        raise _not_supported(_full_name(database.lower(), name.lower()),
                             "REPLACE TABLE AS SELECT")
    if plan.columns is not None:
        message = "Schema may not be specified in a Create Table As Select (CTAS) statement"
        raise ParseError(f"Operation not allowed: {message}.",
                         error_class="_LEGACY_ERROR_TEMP_0035", parameters={"message": message})
    existing = catalog.get_table((database, name))
    if existing is not None:
        if plan.if_not_exists:
            return
        raise table_already_exists(existing)
    query = QueryExecution(session, plan.query).analyzed
    _create_with_rows(session, (database, name), query, plan.provider, plan.partition_columns,
                      dict(plan.options), plan.location, plan.comment, dict(plan.properties))


def _check_columns(names: Sequence[str], case_sensitive: bool) -> None:
    seen: set[str] = set()
    for n in names:
        key = n if case_sensitive else n.lower()
        if key in seen:
            raise AnalysisError(
                f"The column {quote(key)} already exists. Choose another name or rename the "
                "existing column.", error_class="COLUMN_ALREADY_EXISTS",
                parameters={"columnName": quote(key)})
        seen.add(key)


def _new_table(session: "Session", parts: tuple[str, str], query: LogicalPlan,
               provider: str | None, partition_by: Sequence[str], options: Mapping[str, str],
               location: str | None, comment: str | None,
               properties: Mapping[str, str]) -> CatalogTable:
    """The catalog entry of a table created from ``query``'s columns (Spark's
    ``PreprocessTableCreation`` for CTAS): nullable columns, partition columns last."""
    catalog = session.session_catalog
    database, name = parts[0].lower(), parts[1].lower()
    full = _full_name(database, name)
    case_sensitive = bool(session.sql_conf.get(CASE_SENSITIVE))
    fmt = (provider or session.sql_conf.get(DEFAULT_DATA_SOURCE)).lower()
    if fmt not in _PROVIDERS:
        raise AnalysisError(
            f"Failed to find the data source: {fmt}. Make sure the provider name is correct "
            "and the package is properly registered and compatible with your Spark version.",
            error_class="DATA_SOURCE_NOT_FOUND", parameters={"provider": fmt})
    out = query.output
    _check_columns([a.name for a in out], case_sensitive)
    fields = [T.StructField(a.name, a.data_type, True) for a in out]
    data, parts_fields = catalog_commands.split_partition_fields(fields, partition_by, full)
    if parts_fields and len(parts_fields) == len(fields):
        raise AnalysisError("Cannot use all columns for partition columns.",
                            error_class="ALL_PARTITION_COLUMNS_NOT_ALLOWED")
    if location is not None:
        location = location[len("file:"):] if location.startswith("file:") else location
        location = os.path.abspath(os.path.expanduser(location))
        allowed = session.sql_conf.get(ALLOW_NON_EMPTY_LOCATION_IN_CTAS)
        if os.path.isdir(location) and os.listdir(location) and not allowed:
            key = ALLOW_NON_EMPTY_LOCATION_IN_CTAS.key
            raise AnalysisError(
                "CREATE-TABLE-AS-SELECT cannot create table with location to a non-empty "
                f"directory file://{location}. To allow overwriting the existing non-empty "
                f"directory, set '{key}' to true.",
                error_class="_LEGACY_ERROR_TEMP_1241",
                parameters={"tablePath": f"file://{location}", "config": key})
    return CatalogTable(
        database, name, EXTERNAL if location is not None else MANAGED, fmt,
        T.StructType(tuple(data + parts_fields)), tuple(f.name for f in parts_fields),
        location or catalog.default_location(database, name), dict(options),
        dict(properties), comment)


def _create_with_rows(session: "Session", parts: tuple[str, str], query: LogicalPlan,
                      provider: str | None, partition_by: Sequence[str],
                      options: Mapping[str, str], location: str | None, comment: str | None,
                      properties: Mapping[str, str]) -> CatalogTable:
    """Create the table and write ``query``'s rows into it; on failure remove both again."""
    catalog = session.session_catalog
    table = _new_table(session, parts, query, provider, partition_by, options, location,
                       comment, properties)
    existed = os.path.exists(table.location)
    catalog.create_table(table)
    try:
        by_name = {a.name: a for a in query.output}
        rows = Project(tuple(by_name[f.name] for f in table.schema.fields), query)
        prepared = PreparedInsert(rows, (), table.partition_columns)
        QueryExecution(session, table_write_command(table, prepared, session.sql_conf,
                                                    overwrite=True)).execute_write()
    except BaseException:
        catalog.drop_table((table.database, table.name), if_exists=True)
        if (table.table_type == MANAGED or not existed) and os.path.isdir(table.location):
            shutil.rmtree(table.location, ignore_errors=True)
        raise
    if table.partition_columns:
        catalog_commands.record_partition_parameters(table)
    _refresh_in_spark(session, table)
    return table


# -- DataFrame API -----------------------------------------------------------------------------


def save_as_table(df: "DataFrame", name: str, fmt: str | None, mode: SaveMode,
                  options: Mapping[str, str], partition_by: Sequence[str] | None) -> None:
    """``df.write.saveAsTable(name)`` (Spark's ``DataFrameWriter.saveAsTable`` on the session
    catalog)."""
    session = df.sparkSession
    catalog = session.session_catalog
    parts = parse_column_name(name)
    database, table_name = catalog.qualify(parts)
    query = df._qe.analyzed
    opts = {k: v for k, v in options.items() if k.lower() != "path"}
    path = next((v for k, v in options.items() if k.lower() == "path"), None)
    existing = catalog.get_table((database, table_name))
    if existing is None:
        _create_with_rows(session, (database, table_name), query, fmt, partition_by or (),
                          opts, path, None, {})
        return
    if existing.is_view:
        raise AnalysisError(
            f"'saveAsTable' expects a table but {existing.quoted_name()} is a view. ",
            error_class="EXPECT_TABLE_NOT_VIEW.NO_ALTERNATIVE",
            parameters={"viewName": existing.quoted_name(), "operation": "saveAsTable"})
    if mode is SaveMode.IGNORE:
        return
    if mode is SaveMode.ERROR_IF_EXISTS:
        raise table_already_exists(existing)
    if mode is SaveMode.OVERWRITE:
        table_write_command(existing, PreparedInsert(query, (), ()), session.sql_conf,
                            overwrite=True)  # UNSUPPORTED_OVERWRITE.TABLE when read
        catalog.drop_table((existing.database, existing.name))
        if existing.table_type == MANAGED and os.path.isdir(existing.location):
            shutil.rmtree(existing.location, ignore_errors=True)
        _create_with_rows(session, (database, table_name), query,
                          fmt or existing.provider, partition_by or (), opts or existing.options,
                          path or (existing.location if existing.table_type == EXTERNAL
                                   else None), existing.comment, existing.properties)
        return
    _append(session, existing, query, fmt, partition_by)


def _append(session: "Session", table: CatalogTable, query: LogicalPlan, fmt: str | None,
            partition_by: Sequence[str] | None) -> None:
    """saveAsTable's append: Spark's checks (format, partitioning, column count), then an
    insert by column name."""
    flat = f"{SESSION_CATALOG}.{table.database}.{table.name}"
    if fmt is not None and fmt.lower() != table.provider:
        a, b = (_SOURCE_NAMES.get(x, x) for x in (table.provider, fmt.lower()))
        raise AnalysisError(
            f"The format of the existing table {flat} is `{a}`. It doesn't match the specified "
            f"format `{b}`.", error_class="_LEGACY_ERROR_TEMP_1159",
            parameters={"tableName": flat, "existingProvider": a, "specifiedProvider": b})
    specified = list(partition_by or ())
    key = (lambda s: s) if session.sql_conf.get(CASE_SENSITIVE) else str.lower
    if [key(p) for p in specified] != [key(p) for p in table.partition_columns]:
        raise AnalysisError(
            f"Specified partitioning does not match that of the existing table {flat}.\n"
            f"Specified partition columns: [{', '.join(specified)}].\n"
            f"Existing partition columns: [{', '.join(table.partition_columns)}].",
            error_class="_LEGACY_ERROR_TEMP_1163",
            parameters={"tableName": flat, "specifiedPartCols": ", ".join(specified),
                        "existingPartCols": ", ".join(table.partition_columns)})
    if len(query.output) != len(table.schema.fields):
        existing = "struct<" + ",".join(f"{f.name}:{f.data_type.simple_string()}"
                                        for f in table.schema.fields) + ">"
        data = "struct<" + ",".join(f"{a.name}:{a.data_type.simple_string()}"
                                    for a in query.output) + ">"
        raise AnalysisError(
            f"The column number of the existing table {flat} ({existing}) doesn't match the "
            f"data schema ({data}).", error_class="_LEGACY_ERROR_TEMP_1161",
            parameters={"tableName": flat, "existingTableSchema": existing,
                        "querySchema": data})
    prepared = prepare_insert(table, query, session.sql_conf, by_name=True)
    QueryExecution(session, table_write_command(table, prepared, session.sql_conf,
                                                overwrite=False)).execute_write()
    _refresh_in_spark(session, table)


def insert_into(df: "DataFrame", name: str, overwrite: bool,
                partition_by: Sequence[str] | None) -> None:
    """``df.write.insertInto(name, overwrite)``: ``INSERT [OVERWRITE] name`` of the DataFrame's
    rows, by position."""
    if partition_by:
        raise AnalysisError(
            f"partitionBy() cannot be used with insertInto(). Partition columns for table "
            f"{name} are determined by the table definition.",
            error_class="PARTITION_BY_NOT_ALLOWED_WITH_INSERT_INTO",
            parameters={"tableName": name})
    session = df.sparkSession
    stmt = InsertIntoStatement(parse_column_name(name), df._qe.analyzed, overwrite=overwrite)
    run_insert(session, stmt)


class DataFrameWriterV2:
    """``df.writeTo(name)`` (Spark's ``DataFrameWriterV2``): ``using``, ``option(s)``,
    ``tableProperty``, ``partitionedBy``, then ``create()``.  Spark's session catalog holds
    file-source (v1) tables, into which ``append`` / ``overwrite`` / ``overwritePartitions``
    cannot write (``_LEGACY_ERROR_TEMP_1012``) and which ``replace`` / ``createOrReplace``
    cannot replace (``UNSUPPORTED_FEATURE.TABLE_OPERATION``): Ember answers as Spark does."""

    def __init__(self, df: "DataFrame", table: str) -> None:
        self._df = df
        self._table = table
        self._provider: str | None = None
        self._options: dict[str, str] = {}
        self._properties: dict[str, str] = {}
        self._partitioning: list[str] = []

    def using(self, provider: str) -> "DataFrameWriterV2":
        self._provider = provider
        return self

    def option(self, key: str, value: Any) -> "DataFrameWriterV2":
        self._options[str(key)] = str(value).lower() if isinstance(value, bool) else str(value)
        return self

    def options(self, **options: Any) -> "DataFrameWriterV2":
        for k, v in options.items():
            self.option(k, v)
        return self

    def tableProperty(self, property: str, value: str) -> "DataFrameWriterV2":  # noqa: N802,A002
        self._properties[property] = value
        return self

    def partitionedBy(self, col: Any, *cols: Any) -> "DataFrameWriterV2":  # noqa: N802
        names = []
        for c in (col, *cols):
            if not isinstance(c, str):
                raise AnalysisError("partitionedBy takes column names in Ember",
                                    error_class="UNSUPPORTED_FEATURE")
            names.append(c)
        self._partitioning = names
        return self

    def _names(self) -> tuple[str, str]:
        catalog = self._df.sparkSession.session_catalog
        return catalog.qualify(parse_column_name(self._table))

    def create(self) -> None:
        session = self._df.sparkSession
        database, name = self._names()
        existing = session.session_catalog.get_table((database, name))
        if existing is not None:
            raise table_already_exists(existing)
        opts = {k: v for k, v in self._options.items() if k.lower() != "path"}
        path = next((v for k, v in self._options.items() if k.lower() == "path"), None)
        _create_with_rows(session, (database, name), self._df._qe.analyzed, self._provider,
                          self._partitioning, opts, path, None, self._properties)

    def _v1_write(self) -> None:
        database, name = self._names()
        session = self._df.sparkSession
        if session.session_catalog.get_table((database, name)) is None:
            raise table_not_found(parse_column_name(self._table))
        full = _full_name(database.lower(), name.lower())
        raise AnalysisError(f"Cannot write into v1 table: {full}.",
                            error_class="_LEGACY_ERROR_TEMP_1012",
                            parameters={"identifier": full})

    def append(self) -> None:
        self._v1_write()

    def overwrite(self, condition: Any) -> None:
        self._v1_write()

    def overwritePartitions(self) -> None:  # noqa: N802
        self._v1_write()

    def replace(self) -> None:
        database, name = self._names()
        raise _not_supported(_full_name(database.lower(), name.lower()),
                             "REPLACE TABLE AS SELECT")

    createOrReplace = replace  # noqa: N815 - PySpark's name
