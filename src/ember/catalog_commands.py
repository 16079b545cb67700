"""Running the catalog commands (DDL) of :mod:`ember.plans.logical.ddl` on a session, and the
session's relations of persistent tables and views.

Spark's commands (``CreateDataSourceTableCommand``, ``DropTableCommand``,
``TruncateTableCommand``, ``AlterTableRenameCommand``, ``AlterTableAddColumnsCommand``,
``ShowTablesCommand``, ``DescribeTableCommand``, ``ShowCreateTableCommand`` ...) with their
result rows and error classes.  The catalog (:mod:`ember.analysis.catalog`) owns the metadata;
this module also moves what belongs to a managed table's metadata on disk: a dropped or
truncated managed table's files are deleted, an external table's kept.

On the Spark runtime, every table Ember creates is also registered in the SparkSession's catalog
(as a table over the same directory), so Spark SQL reads it under the same name.

>>> session.sql("CREATE TABLE t (a INT COMMENT 'the a') USING parquet")   # doctest: +SKIP
>>> session.sql("DESCRIBE t").collect()                                   # doctest: +SKIP
[Row(col_name='a', data_type='int', comment='the a')]
"""

from __future__ import annotations

import getpass
import os
import re
import shutil
import time
import warnings
from collections.abc import Mapping
from importlib.metadata import PackageNotFoundError, version
from typing import TYPE_CHECKING, Any

from ember import types as T
from ember.analysis.catalog import (
    GLOBAL_TEMP_DATABASE, Catalog, matches_pattern, schema_not_found, table_already_exists, table_not_found,
    with_user_columns,
)
from ember.analysis.catalog_model import (
    EXTERNAL, MANAGED, SESSION_CATALOG, VIEW, CatalogDatabase, CatalogTable, quote,
)
from ember.errors import AnalysisError, Origin, UnsupportedError
from ember.analysis.resolution import unresolved_column_error
from ember.execution.file_index import HIVE_NULL
from ember.expressions.base import Alias, AttributeReference
from ember.expressions.common import sql_type
from ember.plans.logical import ddl as D
from ember.plans.logical.nodes import (
    CreateViewCommand, DescribeRelation, DropView, LogicalPlan, Project, SubqueryAlias,
    UnresolvedRelation, View,
)
from ember.query_execution import QueryExecution
from ember.readers import file_relation
from ember.sql import parse_query

if TYPE_CHECKING:  # pragma: no cover
    from ember.session import Session

__all__ = ["run_catalog_command", "table_resolver", "register_in_spark", "refresh_in_spark",
           "describe_table_rows", "show_create_table",
           "type_ddl", "CATALOG_COMMANDS"]

#: the providers a table may use
PROVIDERS = ("parquet", "csv", "json")

#: the commands :func:`run_catalog_command` runs
CATALOG_COMMANDS = (D.CreateTable, D.CreateDatabase, D.DropDatabase, D.UseDatabase, D.DropTable,
                    D.TruncateTable, D.RenameTable, D.AddColumns, D.SetTableProperties,
                    D.UnsetTableProperties, D.ShowTables, D.ShowDatabases, D.ShowColumns,
                    D.ShowCreateTable, D.ShowTableProperties, D.DescribeDatabase,
                    D.DescribeColumn, D.AddPartitions, D.DescribePartition, D.ShowPartitions,
                    D.DropPartitions, D.RenamePartition, D.RecoverPartitions,
                    D.SetTableLocation, D.AlterColumn)


def _search_path(catalog: Catalog, builtin: bool = False, session: bool = True) -> str:
    parts = (["`system`.`builtin`"] if builtin else []) + (["`system`.`session`"] if session
                                                          else [])
    parts.append(f"`{SESSION_CATALOG}`.{quote(catalog.current_database())}")
    return "[" + ", ".join(parts) + "]"


def _database_name(parts: tuple[str, ...]) -> str:
    """A namespace as written (``db`` or ``spark_catalog.db``): the database's name."""
    if len(parts) == 2 and parts[0].lower() == SESSION_CATALOG:
        return parts[1]
    return ".".join(parts)


def _origin(pos: tuple[int, int] | None) -> Origin | None:
    return None if pos is None else Origin(line=pos[0], start_position=pos[1])


# -- relations of persistent tables and views ---------------------------------------------------


def table_resolver(session: "Session"):  # noqa: ANN201 - Callable[[CatalogTable], LogicalPlan]
    """The catalog's ``resolver`` for ``session``: a table's relation over its files (its
    schema and partition columns), a view's text parsed and analyzed in the view's database."""

    def resolve(table: CatalogTable) -> LogicalPlan:
        if table.is_view:
            return _view_plan(session, table)
        # as for Spark's catalog tables, a directory that does not exist (yet) holds no rows
        paths = [table.location] if table.location and os.path.exists(table.location) else []
        return file_relation(table.provider or "parquet", paths, dict(table.options),
                             table.schema)

    return resolve


def _view_plan(session: "Session", table: CatalogTable) -> LogicalPlan:
    """Spark's ``View``: the view's text analyzed now (as of the current tables), its columns
    named as when the view was created."""
    catalog = session.session_catalog
    previous = catalog.current_database()
    catalog._current_database = table.view_database or table.database
    try:
        analyzed = QueryExecution(session, parse_query(table.view_text or "")).analyzed
    finally:
        catalog._current_database = previous
    out = analyzed.output
    names = [f.name for f in table.schema.fields]
    if len(out) == len(names) and any(a.name != n for a, n in zip(out, names)):
        analyzed = Project(tuple(Alias(a, n) for a, n in zip(out, names)), analyzed)
    return View(".".join(table.qualified_name).replace(".", "`.`"), analyzed)


# -- the commands -----------------------------------------------------------------------------


def run_catalog_command(session: "Session", plan: Any) -> list[tuple[Any, ...]]:
    """Run a catalog command; its result rows (``plan.output``'s columns)."""
    catalog = session.session_catalog
    match plan:
        case D.CreateTable():
            _create_table(session, plan)
            return []
        case D.CreateDatabase(name=name, if_not_exists=ine, location=loc, comment=comment,
                              properties=props):
            location = local_path(loc) if loc else catalog.default_database_location(name)
            catalog.create_database(CatalogDatabase(name, location, comment, dict(props)), ine)
            _spark_sql(session, f"CREATE DATABASE IF NOT EXISTS {quote(name.lower())}")
            return []
        case D.DropDatabase(name=name, if_exists=ie, cascade=cascade):
            db = catalog.get_database(name)
            for t in catalog.drop_database(name, ie, cascade):
                _delete_managed_files(t)
            if db is not None and db.location != catalog.warehouse:
                try:  # the database's directory goes when nothing else is left in it
                    os.rmdir(db.location)
                except OSError:
                    pass
            _spark_sql(session, f"DROP DATABASE IF EXISTS {quote(name.lower())} CASCADE")
            return []
        case D.UseDatabase(name_parts=parts):
            catalog.set_current_database(_database_name(parts))
            return []
        case D.DropTable(name_parts=parts, if_exists=ie):
            if len(parts) == 1 and catalog.exists(parts[0]):
                catalog.drop_temp_view(parts[0])
                return []
            dropped = catalog.drop_table(parts, True)
            if dropped is None:
                if ie:
                    return []
                db, name = catalog.qualify(parts)
                raise table_not_found((SESSION_CATALOG, db, name),
                                      search_path=_search_path(catalog, session=False))
            _delete_managed_files(dropped)
            _spark_drop(session, dropped)
            return []
        case D.TruncateTable(name_parts=parts, origin=pos, partition=spec):
            table = _table_not_view(catalog, parts, pos, "TRUNCATE TABLE")
            if table.table_type == EXTERNAL:
                raise AnalysisError(
                    "Operation not allowed: TRUNCATE TABLE on external tables: "
                    f"{table.quoted_name()}.", error_class="CANNOT_TRUNCATE_EXTERNAL_TABLE",
                    parameters={"tableName": table.quoted_name()})
            if spec is None:
                _delete_contents(table.location)
                return []
            if not table.partition_columns:
                raise AnalysisError(
                    "Operation not allowed: TRUNCATE TABLE ... PARTITION is not supported for "
                    f"tables that are not partitioned: {table.quoted_name()}.",
                    error_class="_LEGACY_ERROR_TEMP_1267",
                    parameters={"tableIdentWithDB": table.quoted_name()})
            for rel in _partitions(table, spec):  # the partitions stay, empty
                _delete_contents(os.path.join(table.location or "", rel))
            refresh_in_spark(session, table)
            return []
        case D.ShowPartitions(name_parts=parts, spec=spec, origin=pos):
            table = _partitioned(catalog, parts, pos, "SHOW PARTITIONS")
            return [(rel,) for rel in _partitions(table, spec)]
        case D.DropPartitions():
            _drop_partitions(session, plan)
            return []
        case D.RenamePartition():
            _rename_partition(session, plan)
            return []
        case D.RecoverPartitions(name_parts=parts, operation=op, origin=pos):
            table = _table_not_view(catalog, parts, pos, op)
            if not table.partition_columns:
                raise AnalysisError(
                    f"Operation {op} is not allowed for {table.quoted_name()} because it is not "
                    "a partitioned table.", error_class="NOT_A_PARTITIONED_TABLE",
                    parameters={"operation": op, "tableIdentWithDB": table.quoted_name()})
            # a partition is a directory under the table's location: nothing to recover
            refresh_in_spark(session, table)
            return []
        case D.SetTableLocation(name_parts=parts, location=loc, origin=pos):
            table = _table_not_view(catalog, parts, pos, "ALTER TABLE ... SET LOCATION")
            moved = table.copy(location=local_path(loc))
            catalog.alter_table(moved)
            _spark_replace(session, moved)
            return []
        case D.AlterColumn():
            _alter_column(session, plan)
            return []
        case D.RenameTable():
            _rename(session, plan)
            return []
        case D.AddColumns(name_parts=parts, columns=cols, origin=pos):
            table = _table_not_view(catalog, parts, pos, "ALTER TABLE ... ADD COLUMNS")
            _check_duplicates([f.name for f in table.schema.fields] + [c.name for c in cols])
            data = list(table.data_schema.fields) + [
                T.StructField(c.name, c.data_type, c.nullable) for c in cols]
            parts_fields = [f for f in table.schema.fields if f not in table.data_schema.fields]
            comments = dict(table.column_comments)
            comments.update({c.name: c.comment for c in cols if c.comment is not None})
            defaults = dict(table.column_defaults)
            defaults.update({c.name: c.default for c in cols if c.default is not None})
            new = table.copy(schema=T.StructType(tuple(data + parts_fields)),
                             column_comments=comments, column_defaults=defaults)
            catalog.alter_table(new)
            _spark_replace(session, new)
            return []
        case D.SetTableProperties(name_parts=parts, properties=props, is_view=is_view,
                                  origin=pos):
            table = _persistent(catalog, parts, pos, "ALTER TABLE ... SET TBLPROPERTIES",
                                view=is_view)
            props = {**table.properties, **dict(props)}
            # the ``comment`` property is the table's comment (Spark's AlterTableSetProperties)
            comment = props.pop("comment", table.comment)
            catalog.alter_table(table.copy(properties=props, comment=comment))
            return []
        case D.UnsetTableProperties(name_parts=parts, keys=keys, is_view=is_view, origin=pos):
            table = _persistent(catalog, parts, pos, "ALTER TABLE ... UNSET TBLPROPERTIES",
                                view=is_view)
            props = {k: v for k, v in table.properties.items() if k not in keys}
            comment = None if "comment" in keys else table.comment
            catalog.alter_table(table.copy(properties=props, comment=comment))
            return []
        case D.ShowTables(database=db, pattern=pattern, extended=False):
            database = None if db is None else _database_name(db)
            rows = [(t.database, t.name, False) for t in catalog.glob_tables(database, pattern)]
            rows += [("", v, True) for v in catalog.list_views() if matches_pattern(v, pattern)]
            return rows
        case D.ShowTables():
            return _show_table_extended(session, plan)
        case D.AddPartitions(name_parts=parts, specs=specs, origin=pos):
            table = _table_not_view(catalog, parts, pos, "ALTER TABLE ... ADD PARTITION")
            for spec in specs:
                os.makedirs(_partition_location(table, _check_spec(table, spec)), exist_ok=True)
            return []
        case D.DescribePartition():
            return _describe_partition(session, plan)
        case D.ShowDatabases(pattern=pattern):
            return [(d.name,) for d in catalog.list_databases() if matches_pattern(d.name,
                                                                                   pattern)]
        case D.ShowColumns(name_parts=parts, database=db, origin=pos):
            if db is not None:
                parts = (db,) + parts[-1:]
            return [(n,) for n in _column_names(session, parts, pos)]
        case D.ShowCreateTable(name_parts=parts, origin=pos):
            if len(parts) == 1 and catalog.exists(parts[0]):
                raise AnalysisError(
                    f"'SHOW CREATE TABLE' expects a permanent view but {quote(parts[0])} is a "
                    "temp view.", error_class="EXPECT_PERMANENT_VIEW_NOT_TEMP",
                    parameters={"viewName": quote(parts[0]),
                                "operation": "'SHOW CREATE TABLE'"}, origin=_origin(pos))
            return [(show_create_table(_persistent(catalog, parts, pos, None)),)]
        case D.ShowTableProperties(name_parts=parts, key=key, origin=pos):
            if len(parts) == 1 and catalog.exists(parts[0]):
                return []
            table = _persistent(catalog, parts, pos, None)
            # Spark lists a data source table's OPTIONS too, as ``option.<key>``
            props = {**{f"option.{k}": v for k, v in table.options.items()},
                     **table.properties}
            if key is None:
                return sorted(props.items())
            if key in props:
                return [(key, props[key])]
            name = ".".join(table.qualified_name)
            return [(key, f"Table {name} does not have property: {key}")]
        case D.DescribeDatabase(name=name, extended=extended):
            db = catalog.get_database(name)
            if db is None:
                raise schema_not_found(name.lower())
            rows = [("Catalog Name", SESSION_CATALOG), ("Namespace Name", db.name),
                    ("Comment", db.comment or ""), ("Location", _uri(db.location)),
                    ("Owner", _owner())]
            if extended:
                rows.append(("Properties", "" if not db.properties else "(" + ", ".join(
                    f"({k},{v})" for k, v in sorted(db.properties.items())) + ")"))
            return rows
        case D.DescribeColumn():
            return _describe_column(session, plan)
    raise UnsupportedError(f"The command {type(plan).__name__} is not supported yet")


def _owner() -> str:
    try:
        return getpass.getuser()
    except Exception:  # noqa: BLE001 - no user name in this environment
        return ""


def _uri(path: str | None) -> str:
    return "" if path is None else "file:" + path


def _check_duplicates(names: list[str]) -> None:
    seen: set[str] = set()
    for n in names:
        if n.lower() in seen:
            raise AnalysisError(
                f"The column {quote(n.lower())} already exists. Choose another name or rename "
                "the existing column.", error_class="COLUMN_ALREADY_EXISTS",
                parameters={"columnName": quote(n.lower())})
        seen.add(n.lower())


def _persistent(catalog: Catalog, parts: tuple[str, ...], pos: tuple[int, int] | None,
                operation: str | None, *, view: bool | None = None) -> CatalogTable:
    """The persistent table or view ``parts``; ``TABLE_OR_VIEW_NOT_FOUND`` (at ``pos``)."""
    table = catalog.get_table(parts)
    if table is None:
        raise table_not_found(parts, _origin(pos), search_path=_search_path(catalog))
    if view is True and not table.is_view:
        raise AnalysisError(
            f"{operation} expects a view. {table.quoted_name()} is a table. Please use "
            f"{operation.replace('VIEW', 'TABLE')} instead.",  # type: ignore[union-attr]
            error_class="EXPECT_VIEW_NOT_TABLE.USE_ALTER_TABLE",
            parameters={"tableName": table.quoted_name(), "operation": operation or ""},
            origin=_origin(pos))
    return table


def _table_not_view(catalog: Catalog, parts: tuple[str, ...], pos: tuple[int, int] | None,
                    operation: str) -> CatalogTable:
    """The persistent *table* ``parts`` (Spark's ``UnresolvedTable``): a view raises
    ``EXPECT_TABLE_NOT_VIEW.NO_ALTERNATIVE``."""
    is_temp = len(parts) == 1 and catalog.exists(parts[0])
    table = None if is_temp else catalog.get_table(parts)
    if is_temp or (table is not None and table.is_view):
        name = quote(parts[0]) if is_temp else table.quoted_name()  # type: ignore[union-attr]
        raise AnalysisError(
            f"'{operation}' expects a table but {name} is a view. ",
            error_class="EXPECT_TABLE_NOT_VIEW.NO_ALTERNATIVE",
            parameters={"viewName": name, "operation": f"'{operation}'"}, origin=_origin(pos))
    if table is None:
        raise table_not_found(parts, _origin(pos), search_path=_search_path(catalog))
    return table


def _column_names(session: "Session", parts: tuple[str, ...],
                  pos: tuple[int, int] | None) -> list[str]:
    catalog = session.session_catalog
    if len(parts) == 1 and catalog.exists(parts[0]):
        return [a.name for a in catalog.lookup(parts).output]
    return [f.name for f in _persistent(catalog, parts, pos, None).schema.fields]


# -- CREATE TABLE -------------------------------------------------------------------------------


def split_partition_fields(fields: list[T.StructField], partition_columns: Any, full: str
                           ) -> tuple[list[T.StructField], list[T.StructField]]:
    """A new table's data columns and its partition columns (in PARTITIONED BY order);
    ``COLUMN_NOT_DEFINED_IN_TABLE`` for a partition column the table does not have."""
    by_name = {f.name.lower(): f for f in fields}
    parts = []
    for p in partition_columns:
        f = by_name.get(p.lower())
        if f is None:
            cols = ", ".join(quote(x.name) for x in fields)
            raise AnalysisError(
                f"partition column {quote(p)} is not defined in table {full}, defined table "
                f"columns are: {cols}.", error_class="COLUMN_NOT_DEFINED_IN_TABLE",
                parameters={"colType": "partition", "colName": quote(p), "tableName": full,
                            "tableCols": cols})
        parts.append(f)
    return [f for f in fields if f not in parts], parts


def _create_table(session: "Session", plan: D.CreateTable) -> None:
    catalog = session.session_catalog
    if plan.query is not None:
        raise UnsupportedError("CREATE TABLE ... AS SELECT is not supported yet",
                               error_class="UNSUPPORTED_FEATURE")
    database, name = catalog.qualify(plan.name_parts)
    database, name = database.lower(), name.lower()
    if not catalog.database_exists(database):
        raise schema_not_found(database)
    provider = (plan.provider or "parquet").lower()
    full = f"`{SESSION_CATALOG}`.{quote(database)}.{quote(name)}"
    check_provider(provider)
    existing = catalog.get_table((database, name))
    if existing is not None and not plan.replace:
        if plan.if_not_exists:
            return
        raise table_already_exists(existing.copy(table_type=MANAGED))
    location = local_path(plan.location) if plan.location else None
    options = dict(plan.options)
    comments: dict[str, str] = {}
    defaults: dict[str, str] = {}
    if plan.columns is not None:
        _check_duplicates([c.name for c in plan.columns])
        # a data source table's columns are all nullable (Spark's ``schema.asNullable``)
        fields = [T.StructField(c.name, _as_nullable(c.data_type), True) for c in plan.columns]
        comments = {c.name: c.comment for c in plan.columns if c.comment is not None}
        defaults = {c.name: c.default for c in plan.columns if c.default is not None}
    elif location is not None:
        rel = file_relation(provider, [location], options)
        fields = [T.StructField(a.name, a.data_type, True) for a in rel.attrs]
    else:
        raise AnalysisError(
            f"Unable to infer schema for {provider.capitalize() if provider != 'csv' else 'CSV'}"
            ". It must be specified manually.", error_class="UNABLE_TO_INFER_SCHEMA",
            parameters={"format": provider.capitalize() if provider != "csv" else "CSV"})
    if provider == "csv":
        for f in fields:
            if isinstance(f.data_type, (T.StructType, T.ArrayType)):
                sql_type = type_ddl(f.data_type, collation=False)
                raise AnalysisError(
                    f"The CSV datasource doesn't support the column {quote(f.name)} of the type "
                    f"\"{sql_type}\".", error_class="UNSUPPORTED_DATA_TYPE_FOR_DATASOURCE",
                    parameters={"format": "CSV", "columnName": quote(f.name),
                                "columnType": f'"{sql_type}"'})
    data, parts = split_partition_fields(fields, plan.partition_columns, full)
    table = CatalogTable(
        database, name, EXTERNAL if location is not None else MANAGED, provider,
        T.StructType(tuple(data + parts)), tuple(f.name for f in parts),
        location or catalog.default_location(database, name), options,
        dict(plan.properties), plan.comment, column_comments=comments,
        bucket_spec=_bucket_spec(plan.bucket_spec, fields, full), column_defaults=defaults)
    if plan.replace:
        old = catalog.replace_table(table)
        if old is not None and old.location != table.location:
            _delete_managed_files(old)
    else:
        catalog.create_table(table, plan.if_not_exists)
    _spark_replace(session, table)


def _as_nullable(dt: T.DataType) -> T.DataType:
    """Spark's ``DataType.asNullable``: nested fields and elements nullable too."""
    if isinstance(dt, T.StructType):
        return T.StructType(tuple(T.StructField(f.name, _as_nullable(f.data_type), True)
                                  for f in dt.fields))
    if isinstance(dt, T.ArrayType):
        return T.ArrayType(_as_nullable(dt.element_type), True)
    return dt


def _bucket_spec(spec, fields, full: str):  # noqa: ANN001,ANN202 - CreateTable.bucket_spec
    """The bucket spec with the columns' names as in the table (Spark's
    ``COLUMN_NOT_DEFINED_IN_TABLE`` for an unknown one)."""
    if spec is None:
        return None
    by_name = {f.name.lower(): f.name for f in fields}
    resolved = []
    for kind, cols in (("bucket", spec[1]), ("sort", spec[2])):
        names = []
        for c in cols:
            if c.lower() not in by_name:
                table_cols = ", ".join(quote(f.name) for f in fields)
                raise AnalysisError(
                    f"{kind} column {quote(c)} is not defined in table {full}, defined table "
                    f"columns are: {table_cols}.", error_class="COLUMN_NOT_DEFINED_IN_TABLE",
                    parameters={"colType": kind, "colName": quote(c), "tableName": full,
                                "tableCols": table_cols})
            names.append(by_name[c.lower()])
        resolved.append(tuple(names))
    return (spec[0], resolved[0], resolved[1])


def local_path(location: str) -> str:
    """A LOCATION as an absolute local path: ``file:/x``, ``file:///x`` and ``/x`` are the same;
    a relative path is relative to the working directory; other schemes are refused."""
    if location.startswith("file://"):
        location = location[len("file://"):]
    elif location.startswith("file:"):
        location = location[len("file:"):]
    elif re.match(r"^[A-Za-z][\w+.-]*://", location):
        raise UnsupportedError(
            f"The location {location!r} is not a local path: Ember's tables live on the local "
            "file system (file:)", error_class="UNSUPPORTED_FEATURE")
    return os.path.abspath(os.path.expanduser(location))


def check_provider(provider: str) -> None:
    """Spark's ``DATA_SOURCE_NOT_FOUND`` for a data source Ember does not have."""
    if provider.lower() not in PROVIDERS:
        raise AnalysisError(
            f"Failed to find the data source: {provider}. Make sure the provider name is "
            "correct and the package is properly registered and compatible with your Spark "
            "version.", error_class="DATA_SOURCE_NOT_FOUND", parameters={"provider": provider})


def _delete_managed_files(table: CatalogTable) -> None:
    """Delete a managed table's directory (a dropped managed table's data goes with it)."""
    if table.table_type == MANAGED and table.location and os.path.isdir(table.location):
        shutil.rmtree(table.location, ignore_errors=True)


def _delete_contents(location: str | None) -> None:
    """TRUNCATE: delete every file and directory inside ``location``."""
    if not location or not os.path.isdir(location):
        return
    for entry in os.scandir(location):
        if entry.is_dir(follow_symlinks=False):
            shutil.rmtree(entry.path, ignore_errors=True)
        else:
            os.unlink(entry.path)


def _rename(session: "Session", plan: D.RenameTable) -> None:
    catalog = session.session_catalog
    parts, new = plan.name_parts, plan.new_name_parts
    if len(parts) == 1 and catalog.exists(parts[0]):
        if len(new) > 1:
            raise AnalysisError(
                f"RENAME TEMPORARY VIEW from '{parts[0]}' to '{'.'.join(new)}': cannot specify "
                "database name 'default' in the destination table",
                error_class="_LEGACY_ERROR_TEMP_1074")
        if catalog.exists(new[0]):
            raise AnalysisError(
                f"Cannot create the temporary view {quote(new[0])} because it already exists.",
                error_class="TEMP_TABLE_OR_VIEW_ALREADY_EXISTS",
                parameters={"relationName": quote(new[0])})
        plan_ = catalog.get_plan(parts[0])
        catalog.drop_temp_view(parts[0])
        catalog.create_temp_view(new[0], plan_)
        return
    table = catalog.get_table(parts)
    if table is None:
        raise table_not_found(parts, _origin(plan.origin), search_path=_search_path(catalog))
    if table.is_view != plan.is_view:
        if plan.is_view:
            raise AnalysisError(
                f"'ALTER VIEW ... RENAME TO' expects a view. {table.quoted_name()} is a table. "
                "Please use ALTER TABLE instead.", error_class="EXPECT_VIEW_NOT_TABLE.USE_ALTER_TABLE",
                parameters={"tableName": table.quoted_name(),
                            "operation": "ALTER VIEW ... RENAME TO"}, origin=_origin(plan.origin))
        raise AnalysisError(
            f"'ALTER TABLE ... RENAME TO' expects a table. {table.quoted_name()} is a view. "
            "Please use ALTER VIEW instead.", error_class="EXPECT_TABLE_NOT_VIEW.USE_ALTER_VIEW",
            parameters={"viewName": table.quoted_name(),
                        "operation": "ALTER TABLE ... RENAME TO"}, origin=_origin(plan.origin))
    if len(new) > 1 and catalog.qualify(new)[0] != table.database:
        raise AnalysisError(
            f"RENAME TABLE source and destination databases do not match: "
            f"'{table.database}' != '{catalog.qualify(new)[0]}'.",
            error_class="_LEGACY_ERROR_TEMP_1073",
            parameters={"db": table.database, "newDb": catalog.qualify(new)[0]})
    target = catalog.get_table((table.database, new[-1]))
    if target is not None:
        raise AnalysisError(
            f"Cannot create table or view {quote(table.database)}.{quote(new[-1].lower())} "
            "because it already exists.\nChoose a different name, drop or replace the existing "
            "object, or add the IF NOT EXISTS clause to tolerate pre-existing objects.",
            error_class="TABLE_OR_VIEW_ALREADY_EXISTS",
            parameters={"relationName": f"{quote(table.database)}.{quote(new[-1].lower())}"})
    renamed = catalog.rename_table(parts, new[-1])
    _spark_drop(session, table)
    _spark_replace(session, renamed)


# -- DESCRIBE -----------------------------------------------------------------------------------


def _created(t: float) -> str:
    """Java's ``Date.toString`` (``Sat Nov 28 10:38:28 UTC 2026``) in the local time zone."""
    return time.strftime("%a %b %d %H:%M:%S %Z %Y", time.localtime(t))


def _bracketed(props: Mapping[str, str]) -> str:
    return "[" + ", ".join(f"{k}={v}" for k, v in sorted(props.items())) + "]"


#: Spark's ``spark.redaction.regex``: option and property values of such keys are not shown
_REDACTED_KEY = re.compile(r"(?i)secret|password|token|access[.]?key")
_REDACTED = "*********(redacted)"


def _redacted(props: Mapping[str, str]) -> dict[str, str]:
    return {k: _REDACTED if _REDACTED_KEY.search(k) else v for k, v in props.items()}


def _bucket_items(table: CatalogTable) -> list[tuple[str, str]]:
    if table.bucket_spec is None:
        return []
    n, cols, sort = table.bucket_spec
    items = [("Num Buckets", str(n)),
             ("Bucket Columns", "[" + ", ".join(quote(c) for c in cols) + "]")]
    if sort:
        items.append(("Sort Columns", "[" + ", ".join(quote(c) for c in sort) + "]"))
    return items


def _storage_items(table: CatalogTable) -> list[tuple[str, str]]:
    items = []
    if table.location:
        items.append(("Location", _uri(table.location)))
    if table.options:
        items.append(("Storage Properties", _bracketed(_redacted(table.options))))
    return items


def table_info_items(table: CatalogTable) -> list[tuple[str, str]]:
    """Spark's ``CatalogTable.toLinkedHashMap``: the entries of DESCRIBE EXTENDED's
    ``# Detailed Table Information`` section and of SHOW TABLE EXTENDED's ``information``."""
    items = [("Catalog", SESSION_CATALOG), ("Database", table.database), ("Table", table.name),
             ("Created Time", _created(table.created_time)), ("Last Access", "UNKNOWN"),
             ("Created By", f"Ember {ember_version()}"), ("Type", table.table_type)]
    if table.provider:
        items.append(("Provider", table.provider))
    items += _bucket_items(table)
    if table.comment is not None:
        items.append(("Comment", table.comment))
    if table.is_view:
        cols = ", ".join(quote(f.name) for f in table.schema.fields)
        items += [("View Text", table.view_text or ""),
                  ("View Original Text", table.view_text or ""),
                  ("View Schema Mode", "COMPENSATION"),
                  ("View Catalog and Namespace",
                   f"{SESSION_CATALOG}.{table.view_database or table.database}"),
                  ("View Query Output Columns", f"[{cols}]")]
    if table.properties:
        items.append(("Table Properties", _bracketed(_redacted(table.properties))))
    items += _storage_items(table)
    if table.partition_columns:
        items += [("Partition Provider", "Catalog"),
                  ("Partition Columns",
                   "[" + ", ".join(quote(c) for c in table.partition_columns) + "]")]
    return items


def _column_rows(table: CatalogTable) -> list[tuple[Any, ...]]:
    """DESCRIBE's columns, partition columns and column defaults."""
    comments = table.column_comments
    rows: list[tuple[Any, ...]] = [(f.name, f.data_type.simple_string(), comments.get(f.name))
                                   for f in table.schema.fields]
    if table.partition_columns:
        rows += [("# Partition Information", "", ""), ("# col_name", "data_type", "comment")]
        by_name = {f.name.lower(): f for f in table.schema.fields}
        for p in table.partition_columns:
            f = by_name[p.lower()]
            rows.append((f.name, f.data_type.simple_string(), comments.get(f.name)))
    if table.column_defaults:
        rows += [("", "", ""), ("# Column Default Values", "", "")]
        rows += [(f.name, f.data_type.simple_string(), table.column_defaults[f.name])
                 for f in table.schema.fields if f.name in table.column_defaults]
    return rows


def describe_table_rows(table: CatalogTable, extended: bool) -> list[tuple[Any, ...]]:
    """``DESCRIBE [EXTENDED] t`` of a persistent table or view (Spark's
    ``DescribeTableCommand``): the columns, the partition columns, column defaults, and with
    ``extended`` the ``# Detailed Table Information`` section."""
    rows = _column_rows(table)
    if not extended:
        return rows
    rows += [("", "", ""), ("# Detailed Table Information", "", "")]
    return rows + [(k, v, "") for k, v in table_info_items(table) if k != "Partition Columns"]


_TYPE_NAMES = {"int": "integer", "bigint": "long", "smallint": "short", "tinyint": "byte"}


def _tree_lines(fields, prefix: str) -> list[str]:
    """Spark's ``StructType.treeString`` lines below ``root``."""
    out = []
    for f in fields:
        out += _tree_field(f.name, f.data_type, f"(nullable = {str(f.nullable).lower()})", prefix)
    return out


def _tree_field(name: str, dt: T.DataType, null_text: str, prefix: str) -> list[str]:
    if isinstance(dt, T.StructType):
        return [f"{prefix}-- {name}: struct {null_text}"] + _tree_lines(dt.fields,
                                                                          prefix + "    |")
    if isinstance(dt, T.ArrayType):
        contains = str(getattr(dt, "contains_null", True)).lower()
        return [f"{prefix}-- {name}: array {null_text}"] + _tree_field(
            "element", dt.element_type, f"(containsNull = {contains})", prefix + "    |")
    simple = dt.simple_string()
    return [f"{prefix}-- {name}: {_TYPE_NAMES.get(simple, simple)} {null_text}"]


def _schema_tree(fields) -> str:
    return "root\n" + "".join(line + "\n" for line in _tree_lines(fields, " |"))


def _show_table_extended(session: "Session", plan: D.ShowTables) -> list[tuple[Any, ...]]:
    """``SHOW TABLE EXTENDED [IN db] LIKE 'pattern' [PARTITION (...)]`` (Spark's
    ``ShowTablesCommand`` with ``isExtended``)."""
    catalog = session.session_catalog
    database = None if plan.database is None else _database_name(plan.database)
    if plan.partition is not None:
        table = catalog.get_table((database, plan.pattern) if database else (plan.pattern,))
        if table is None:
            raise table_not_found((plan.pattern or "",), search_path=_search_path(catalog))
        spec = _check_spec(table, plan.partition)
        _existing_partition(table, spec)
        return [(table.database, table.name, False, _partition_info(table, spec))]
    rows = []
    for t in catalog.glob_tables(database, plan.pattern):
        items = "".join(f"{k}: {v}\n" for k, v in table_info_items(t))
        rows.append((t.database, t.name, False,
                     items + "Schema: " + _schema_tree(t.schema.fields) + "\n"))
    for v in catalog.list_views():
        if matches_pattern(v, plan.pattern):
            out = catalog.lookup((v,)).output
            fields = [T.StructField(a.name, a.data_type, a.nullable) for a in out]
            info = (f"Table: {v}\nCreated Time: {_created(time.time())}\nLast Access: UNKNOWN\n"
                    f"Created By: Ember {ember_version()}\nType: VIEW\nView Schema Mode: BINDING\n"
                    "Schema: " + _schema_tree(fields) + "\n")
            rows.append(("", v, True, info))
    return rows


# -- partitions (directories under the table's location) ---------------------------------------

_ESCAPED = set('"#%\'*/:=?\\\x7f{[]^')


def _escape_path_name(value: str) -> str:
    """Hive's ``escapePathName`` (``ExternalCatalogUtils``): a partition value in a path."""
    return "".join(f"%{ord(c):02X}" if c in _ESCAPED or ord(c) < 32 else c for c in value)


def _check_keys(table: CatalogTable, spec: Any) -> None:
    """``PARTITIONS_NOT_FOUND`` for the keys of ``spec`` that are not partition columns."""
    by_name = {c.lower() for c in table.partition_columns}
    unknown = [k for k, _ in spec if k.lower() not in by_name]
    if unknown:
        raise AnalysisError(
            f"The partition(s) {', '.join(quote(k) for k in unknown)} cannot be found in table "
            f"{table.quoted_name()}.\nVerify the partition specification and table name.\n"
            "To tolerate the error on drop use ALTER TABLE \u2026 DROP IF EXISTS PARTITION.",
            error_class="PARTITIONS_NOT_FOUND",
            parameters={"partitionList": ", ".join(quote(k) for k in unknown),
                        "tableName": table.quoted_name()})


def _check_spec(table: CatalogTable, spec: Any) -> list[tuple[str, str | None]]:
    """``spec`` in the table's partition column order (names as in the table); Spark's errors
    for unknown or missing keys."""
    _check_keys(table, spec)
    by_name = {c.lower(): c for c in table.partition_columns}
    given = {k.lower(): v for k, v in spec}
    if set(given) != set(by_name):
        raise AnalysisError(
            f"Partition spec is invalid. The spec ({', '.join(k for k, _ in spec)}) must match "
            f"the partition spec ({', '.join(table.partition_columns)}) defined in table "
            f"'{table.quoted_name()}'.", error_class="_LEGACY_ERROR_TEMP_1232",
            parameters={"specKeys": ", ".join(k for k, _ in spec),
                        "partitionColumnNames": ", ".join(table.partition_columns),
                        "tableName": table.quoted_name()})
    return [(c, given[c.lower()]) for c in table.partition_columns]


def _segment(column: str, value: str | None) -> str:
    """A partition's directory name: ``k=v``, NULL and '' as Hive's default partition."""
    return f"{_escape_path_name(column)}={_escape_path_name(value) if value else HIVE_NULL}"


def _partition_location(table: CatalogTable, spec: list[tuple[str, str | None]]) -> str:
    return os.path.join(table.location or "", *(_segment(k, v) for k, v in spec))


def _existing_partition(table: CatalogTable, spec: list[tuple[str, str]]) -> str:
    """The partition's directory; ``PARTITIONS_NOT_FOUND`` when there is none."""
    path = _partition_location(table, spec)
    if not os.path.isdir(path):
        text = "PARTITION (" + ", ".join(f"{quote(k)} = {v}" for k, v in spec) + ")"
        name = f"{quote(table.database)}.{quote(table.name)}"
        raise AnalysisError(
            f"The partition(s) {text} cannot be found in table {name}.\nVerify the partition "
            "specification and table name.\nTo tolerate the error on drop use ALTER TABLE "
            "\u2026 DROP IF EXISTS PARTITION.", error_class="PARTITIONS_NOT_FOUND",
            parameters={"partitionList": text, "tableName": name})
    return path


def _partition_items(table: CatalogTable, spec: list[tuple[str, str]]) -> list[tuple[str, str]]:
    path = _existing_partition(table, spec)
    items = [("Partition Values", "[" + ", ".join(f"{k}={v}" for k, v in spec) + "]"),
             ("Location", _uri(path))]
    if table.options:
        items.append(("Storage Properties", _bracketed(_redacted(table.options))))
    params = _partition_parameters(path)
    if params is not None:
        items.append(("Partition Parameters", params))
    return items + [("Created Time", _created(os.path.getmtime(path))),
                    ("Last Access", "UNKNOWN")]


def _partition_parameters(path: str) -> str | None:
    """Spark's partition parameters (``numFiles``, ``totalSize``, ``transient_lastDdlTime``) of
    the partition directory's data files (names starting with ``.`` or ``_`` are not data);
    None for a partition without files (one ``ADD PARTITION`` made), which Spark shows
    without them."""
    files = [e for e in os.scandir(path) if e.is_file() and not e.name.startswith((".", "_"))]
    if not files:
        return None
    return _bracketed({"numFiles": str(len(files)),
                       "totalSize": str(sum(e.stat().st_size for e in files)),
                       "transient_lastDdlTime": str(int(os.path.getmtime(path)))})


def _partition_info(table: CatalogTable, spec: list[tuple[str, str]]) -> str:
    return "".join(f"{k}: {v}\n" for k, v in _partition_items(table, spec))


def _describe_partition(session: "Session", plan: D.DescribePartition) -> list[tuple[Any, ...]]:
    """``DESCRIBE [EXTENDED] t PARTITION (...)`` (Spark's ``DescribeTableCommand`` with a
    partition spec)."""
    catalog = session.session_catalog
    parts = plan.name_parts
    if len(parts) == 1 and catalog.exists(parts[0]):
        raise AnalysisError(
            f"The operation DESC PARTITION is not allowed on the TEMPORARY VIEW: "
            f"{quote(parts[0])}.", error_class="FORBIDDEN_OPERATION",
            parameters={"statement": "DESC PARTITION", "objectType": "TEMPORARY VIEW",
                        "objectName": quote(parts[0])})
    table = catalog.get_table(parts)
    if table is None:
        raise table_not_found(parts, _origin(plan.origin),
                              search_path=_search_path(catalog, builtin=True))
    if table.is_view:
        raise AnalysisError(
            f"The operation DESC PARTITION is not allowed on the VIEW: {quote(table.name)}.",
            error_class="FORBIDDEN_OPERATION",
            parameters={"statement": "DESC PARTITION", "objectType": "VIEW",
                        "objectName": quote(table.name)})
    spec = _check_spec(table, plan.spec)
    _existing_partition(table, spec)
    rows = _column_rows(table)
    if not plan.extended:
        return rows
    rows += [("", "", ""), ("# Detailed Partition Information", "", ""),
             ("Database", table.database, ""), ("Table", table.name, "")]
    rows += [(k, v, "") for k, v in _partition_items(table, spec)]
    rows += [("", "", ""), ("# Storage Information", "", "")]
    return rows + [(k, v, "") for k, v in _bucket_items(table) + _storage_items(table)]


def _partitioned(catalog: Catalog, parts: tuple[str, ...], pos: tuple[int, int] | None,
                 operation: str) -> CatalogTable:
    """The persistent partitioned table ``parts`` (Spark's
    ``INVALID_PARTITION_OPERATION.PARTITION_SCHEMA_IS_EMPTY`` when it is not partitioned)."""
    table = _table_not_view(catalog, parts, pos, operation)
    if not table.partition_columns:
        raise AnalysisError(
            f"The partition command is invalid. Table {table.quoted_name()} is not partitioned.",
            error_class="INVALID_PARTITION_OPERATION.PARTITION_SCHEMA_IS_EMPTY",
            parameters={"name": table.quoted_name()})
    return table


def _partitions(table: CatalogTable, spec: tuple[tuple[str, str | None], ...] | None
                ) -> list[str]:
    """The table's partitions (``p=1/q=x``: directories one level per partition column under
    its location, as Spark's ``SHOW PARTITIONS`` prints them, sorted) matching the partial
    ``spec``; ``PARTITIONS_NOT_FOUND`` for a key that is not a partition column."""
    wanted: dict[int, str] = {}
    if spec:
        _check_keys(table, spec)
        index = {c.lower(): i for i, c in enumerate(table.partition_columns)}
        wanted = {index[k.lower()]: _segment(table.partition_columns[index[k.lower()]], v)
                  for k, v in spec}
    level = [""] if table.location and os.path.isdir(table.location) else []
    for i, col in enumerate(table.partition_columns):
        prefix = _escape_path_name(col).lower() + "="
        level = [os.path.join(rel, e.name) for rel in level
                 for e in os.scandir(os.path.join(table.location or "", rel))
                 if e.is_dir() and e.name.lower().startswith(prefix)
                 and (i not in wanted or e.name == wanted[i])]
    return sorted(level)


def _spec_text(spec: Any) -> str:
    return "PARTITION (" + ", ".join(
        f"{quote(k)} = {'null' if v is None else v}" for k, v in spec) + ")"


def _partition_error(error_class: str, table: CatalogTable, spec: Any) -> AnalysisError:
    text, name = _spec_text(spec), f"{quote(table.database)}.{quote(table.name)}"
    if error_class == "PARTITIONS_ALREADY_EXIST":
        message = (f"Cannot ADD or RENAME TO partition(s) {text} in table {name} because they "
                   "already exist.\nChoose a different name, drop the existing partition, or "
                   "add the IF NOT EXISTS clause to tolerate a pre-existing partition.")
    else:
        message = (f"The partition(s) {text} cannot be found in table {name}.\nVerify the "
                   "partition specification and table name.\nTo tolerate the error on drop use "
                   "ALTER TABLE \u2026 DROP IF EXISTS PARTITION.")
    return AnalysisError(message, error_class=error_class,
                         parameters={"partitionList": text, "tableName": name})


def _managed_only(table: CatalogTable, operation: str) -> None:
    """Ember's partitions are directories: on an external table Spark changes only the
    catalog's partition list (the files stay), which Ember cannot represent."""
    if table.table_type == EXTERNAL:
        raise UnsupportedError(
            f"{operation} on the external table {table.quoted_name()} is not supported yet "
            "(Ember's partitions are the directories under the table's location, and an "
            "external table's files are not Ember's to move or delete)",
            error_class="UNSUPPORTED_FEATURE")


def _remove_empty_parents(path: str, root: str) -> None:
    parent = os.path.dirname(path)
    while parent.startswith(root.rstrip("/") + "/"):
        try:
            os.rmdir(parent)
        except OSError:
            return
        parent = os.path.dirname(parent)


def _drop_partitions(session: "Session", plan: D.DropPartitions) -> None:
    """``ALTER TABLE t DROP [IF EXISTS] PARTITION (...), ...`` (Spark's
    ``AlterTableDropPartitionCommand``): every spec is checked before any partition goes."""
    catalog = session.session_catalog
    table = _table_not_view(catalog, plan.name_parts, plan.origin,
                            "ALTER TABLE ... DROP PARTITION")
    if not table.partition_columns:
        raise AnalysisError(
            f"ALTER TABLE DROP PARTITION is not allowed on {table.name} since its partition "
            "metadata is not stored in the Hive metastore. To import this information into the "
            f"metastore, run `msck repair table {table.name}`.",
            error_class="_LEGACY_ERROR_TEMP_1251",
            parameters={"action": "ALTER TABLE DROP PARTITION", "tableName": table.name})
    paths = []
    for spec in plan.specs:
        _check_keys(table, spec)
        given = {k.lower() for k, _ in spec}
        full = given == {c.lower() for c in table.partition_columns}
        path = _partition_location(table, _check_spec(table, spec)) if full else None
        if path is None or not os.path.isdir(path):
            if plan.if_exists:
                continue
            raise _partition_error("PARTITIONS_NOT_FOUND", table, spec)
        paths.append(path)
    _managed_only(table, "ALTER TABLE ... DROP PARTITION")
    for path in paths:
        shutil.rmtree(path, ignore_errors=True)
        _remove_empty_parents(path, table.location or "")
    refresh_in_spark(session, table)


def _rename_partition(session: "Session", plan: D.RenamePartition) -> None:
    """``ALTER TABLE t PARTITION (...) RENAME TO PARTITION (...)`` (Spark's
    ``AlterTableRenamePartitionCommand``): the partition's directory moves."""
    catalog = session.session_catalog
    table = _table_not_view(catalog, plan.name_parts, plan.origin,
                            "ALTER TABLE ... RENAME TO PARTITION")
    old = _partition_location(table, _check_spec(table, plan.old_spec))
    new = _partition_location(table, _check_spec(table, plan.new_spec))
    if not os.path.isdir(old):
        raise _partition_error("PARTITIONS_NOT_FOUND", table, plan.old_spec)
    if os.path.isdir(new):
        raise _partition_error("PARTITIONS_ALREADY_EXIST", table, plan.new_spec)
    _managed_only(table, "ALTER TABLE ... RENAME TO PARTITION")
    os.makedirs(os.path.dirname(new), exist_ok=True)
    os.rename(old, new)
    _remove_empty_parents(old, table.location or "")
    refresh_in_spark(session, table)


def _alter_column(session: "Session", plan: D.AlterColumn) -> None:
    """``ALTER TABLE t ALTER|CHANGE COLUMN c ...`` on a data source table (Spark's
    ``AlterTableChangeColumnCommand``): the comment and the default may change; the type and
    the name may not, nor may a partition column or the nullability."""
    catalog = session.session_catalog
    table = _table_not_view(catalog, plan.name_parts, plan.origin,
                            "ALTER TABLE ... ALTER COLUMN")
    field = next((f for f in table.schema.fields if f.name.lower() == plan.column.lower()), None)
    if field is None:
        attrs = [AttributeReference(f.name, f.data_type, f.nullable) for f in table.schema.fields]
        # Spark reports the column at the statement's start
        raise unresolved_column_error((plan.column,), attrs, (1, 0))
    full = table.quoted_name()
    if plan.not_null:
        operation = "ALTER COLUMN ... SET NOT NULL"
        raise AnalysisError(
            f"The feature is not supported: Table {full} does not support {operation}. Please "
            "check the current catalog and namespace to make sure the qualified table name is "
            "expected, and also check the catalog implementation which is configured by "
            "\"spark.sql.catalog\".", error_class="UNSUPPORTED_FEATURE.TABLE_OPERATION",
            parameters={"tableName": full, "operation": operation})
    if field.name.lower() in {c.lower() for c in table.partition_columns}:
        raise AnalysisError(
            "ALTER TABLE (ALTER|CHANGE) COLUMN is not supported for partition columns, but "
            f"found the partition column {quote(field.name)} in the table {full}.",
            error_class="CANNOT_ALTER_PARTITION_COLUMN",
            parameters={"tableName": full, "columnName": quote(field.name)})
    new_name = plan.new_name or field.name
    new_type = plan.data_type or field.data_type
    if new_type != field.data_type or new_name.lower() != field.name.lower():
        old_t, new_t = sql_type(field.data_type), sql_type(new_type)
        raise AnalysisError(
            f"ALTER TABLE ALTER/CHANGE COLUMN is not supported for changing {full}'s column "
            f"{quote(field.name)} with type {old_t} to {quote(new_name)} with type {new_t}.",
            error_class="NOT_SUPPORTED_CHANGE_COLUMN",
            parameters={"table": full, "originName": quote(field.name), "originType": old_t,
                        "newName": quote(new_name), "newType": new_t}, origin=Origin(1, 0))
    comments = dict(table.column_comments)
    if plan.comment is not None:
        comments[field.name] = plan.comment
    defaults = dict(table.column_defaults)
    if plan.default == "":
        defaults.pop(field.name, None)
    elif plan.default is not None:
        defaults[field.name] = plan.default
    catalog.alter_table(table.copy(column_comments=comments, column_defaults=defaults))


def ember_version() -> str:
    """The installed Ember distribution's version (``0+unknown`` in a source tree)."""
    try:
        return version("ember")
    except PackageNotFoundError:  # run from a source tree
        return "0+unknown"


def describe_relation_rows(session: "Session", plan: DescribeRelation) -> list[tuple[Any, ...]]:
    """``DESCRIBE [TABLE] [EXTENDED] name`` / ``DESCRIBE QUERY q``: a persistent table's rows
    (:func:`describe_table_rows`), else the analyzed query's columns."""
    catalog = session.session_catalog
    query = plan.query
    if isinstance(query, UnresolvedRelation):
        parts = query.name_parts
        if not (len(parts) == 1 and catalog.exists(parts[0])):
            try:
                table = catalog.get_table(parts)
            except AnalysisError:
                table = None
            if table is not None:
                return describe_table_rows(table, plan.extended)
    out = QueryExecution(session, query).analyzed.output
    return [(a.name, a.data_type.simple_string(), None) for a in out]


def _describe_column(session: "Session", plan: D.DescribeColumn) -> list[tuple[Any, ...]]:
    catalog = session.session_catalog
    parts = plan.name_parts
    table = None
    if not (len(parts) == 1 and catalog.exists(parts[0])):
        table = catalog.get_table(parts)
    if table is not None:
        fields = {f.name.lower(): f for f in table.schema.fields}
        comments = table.column_comments
    else:
        out = catalog.lookup(parts).output if len(parts) == 1 and catalog.exists(parts[0]) \
            else None
        if out is None:
            raise table_not_found(parts, _origin(plan.origin),
                                  search_path=_search_path(catalog, builtin=True))
        fields = {a.name.lower(): T.StructField(a.name, a.data_type, a.nullable) for a in out}
        comments = {}
    col = ".".join(plan.column)
    f = fields.get(col.lower())
    if f is None:
        raise AnalysisError(
            f"The column {quote(col)} cannot be found. Verify the spelling and correctness of "
            "the column name according to the SQL config \"spark.sql.caseSensitive\".",
            error_class="COLUMN_NOT_FOUND", parameters={"colName": quote(col),
                                                        "caseSensitiveConfig":
                                                        '"spark.sql.caseSensitive"'})
    rows = [("col_name", f.name), ("data_type", f.data_type.simple_string()),
            ("comment", comments.get(f.name, "NULL"))]
    if plan.extended:
        rows += [(k, "NULL") for k in ("min", "max", "num_nulls", "distinct_count",
                                       "avg_col_len", "max_col_len", "histogram")]
    return rows


# -- SHOW CREATE TABLE --------------------------------------------------------------------------

_PLAIN = re.compile(r"[A-Za-z0-9_]+")


def _quote_if_needed(name: str) -> str:
    """Spark's ``QuotingUtils.quoteIfNeeded``."""
    if _PLAIN.fullmatch(name) and not name.isdigit():
        return name
    return quote(name)


def type_ddl(dt: T.DataType, collation: bool = True) -> str:
    """A type as Spark's ``DataType.sql`` writes it in DDL (``STRUCT<x: INT>``, ``DECIMAL(5,1)``;
    with ``collation``, strings carry theirs, ``STRING COLLATE UTF8_BINARY``, as Spark 4's
    SHOW CREATE TABLE writes them)."""
    if isinstance(dt, T.StringType):
        return "STRING COLLATE UTF8_BINARY" if collation else "STRING"
    if isinstance(dt, T.StructType):
        inner = ", ".join(f"{_quote_if_needed(f.name)}: {type_ddl(f.data_type, collation)}"
                          + ("" if f.nullable else " NOT NULL") for f in dt.fields)
        return f"STRUCT<{inner}>"
    if isinstance(dt, T.ArrayType):
        return f"ARRAY<{type_ddl(dt.element_type, collation)}>"
    return dt.simple_string().upper()


def _sql_string(s: str) -> str:
    return "'" + s.replace("\\", "\\\\").replace("'", "\\'") + "'"


def _props_block(props: Mapping[str, str]) -> str:
    return ",\n".join(f"  {_sql_string(k)} = {_sql_string(v)}" for k, v in sorted(props.items()))


def _source_clauses(table: CatalogTable, quote_name) -> str:  # noqa: ANN001 - str -> str
    """``USING ... [OPTIONS (...)] [PARTITIONED BY (...)]`` of a table's DDL."""
    out = f"USING {table.provider}\n"
    if table.options:
        out += f"OPTIONS (\n{_props_block(table.options)})\n"
    if table.partition_columns:
        out += f"PARTITIONED BY ({', '.join(map(quote_name, table.partition_columns))})\n"
    return out


def show_create_table(table: CatalogTable) -> str:
    """Spark's ``ShowCreateTableCommand`` text of a data source table or a view."""
    if table.is_view:
        cols = ",\n".join(f"  {_quote_if_needed(f.name)}" for f in table.schema.fields)
        out = f"CREATE VIEW {table.database}.{_quote_if_needed(table.name)} (\n{cols})\n"
        if table.comment is not None:
            out += f"COMMENT {_sql_string(table.comment)}\n"
        if table.properties:
            out += f"TBLPROPERTIES (\n{_props_block(table.properties)})\n"
        return out + f"WITH SCHEMA COMPENSATION\nAS {table.view_text}\n"
    comments = table.column_comments
    cols = ",\n".join(
        f"  {_quote_if_needed(f.name)} {type_ddl(f.data_type)}"
        + ("" if f.nullable else " NOT NULL")
        + (f" DEFAULT {table.column_defaults[f.name]}" if f.name in table.column_defaults
           else "")
        + (f" COMMENT {_sql_string(comments[f.name])}" if f.name in comments else "")
        for f in table.schema.fields)
    out = (f"CREATE TABLE {SESSION_CATALOG}.{table.database}.{_quote_if_needed(table.name)} "
           f"(\n{cols})\n" + _source_clauses(table, _quote_if_needed))
    if table.bucket_spec is not None:
        n, cols, sort = table.bucket_spec
        out += f"CLUSTERED BY ({', '.join(map(_quote_if_needed, cols))})\n"
        if sort:
            out += f"SORTED BY ({', '.join(map(_quote_if_needed, sort))})\n"
        out += f"INTO {n} BUCKETS\n"
    if table.comment is not None:
        out += f"COMMENT {_sql_string(table.comment)}\n"
    if table.table_type == EXTERNAL:
        out += f"LOCATION {_sql_string(_uri(table.location))}\n"
    if table.properties:
        out += f"TBLPROPERTIES (\n{_props_block(table.properties)})\n"
    return out


# -- persistent views -------------------------------------------------------------------------


def create_persistent_view(session: "Session", plan: CreateViewCommand) -> None:
    """``CREATE [OR REPLACE] VIEW [IF NOT EXISTS] v [(cols)] AS q``: the text is stored and
    re-analyzed at each use (Spark's persistent ``CreateViewCommand``)."""
    catalog = session.session_catalog
    parts = tuple(plan.name.split("."))
    database, name = catalog.qualify(parts)
    database, name = database.lower(), name.lower()
    if not catalog.database_exists(database):
        raise schema_not_found(database)
    analyzed = QueryExecution(session, plan.query).analyzed
    _check_no_temp_objects(analyzed, database, name)
    names = list(plan.user_columns) if plan.user_columns else [a.name for a in analyzed.output]
    if len(names) != len(analyzed.output):
        with_user_columns(name, analyzed, tuple(names))  # raises the arity error
    schema = T.StructType(tuple(T.StructField(n, a.data_type, a.nullable)
                                for n, a in zip(names, analyzed.output)))
    table = CatalogTable(database, name, VIEW, None, schema, (), None, {},
                         dict(plan.properties), plan.comment, (plan.query_text or "").strip(),
                         view_database=catalog.current_database())
    existing = catalog.get_table((database, name))
    if existing is not None:
        if plan.if_not_exists:
            return
        if not plan.replace:
            raise table_already_exists(table.copy(table_type=MANAGED))
        if not existing.is_view:
            raise AnalysisError(
                f"{existing.quoted_name()} is not a view.",
                error_class="EXPECT_VIEW_NOT_TABLE.NO_ALTERNATIVE",
                parameters={"tableName": existing.quoted_name(), "operation": "CREATE VIEW"})
        catalog.replace_table(table)
        return
    catalog.create_table(table)


def _check_no_temp_objects(analyzed: LogicalPlan, database: str, name: str) -> None:
    """Spark's ``INVALID_TEMP_OBJ_REFERENCE``: a persistent view cannot read a temporary view
    (the next session would not have it)."""
    node = analyzed.find(lambda p: isinstance(p, SubqueryAlias) and isinstance(p.child, View)
                         and len(p.identifier) == 1)
    if node is not None:
        temp = quote(node.identifier[0])
        full = f"`{SESSION_CATALOG}`.{quote(database)}.{quote(name)}"
        raise AnalysisError(
            f"Cannot create the persistent object {full} of the type VIEW because it references "
            f"to the temporary object {temp} of the type VIEW. Please make the temporary object "
            f"{temp} persistent, or make the persistent object {full} temporary.",
            error_class="INVALID_TEMP_OBJ_REFERENCE",
            parameters={"obj": "VIEW", "objName": full, "tempObj": "VIEW",
                        "tempObjName": temp})


def drop_view(session: "Session", plan: DropView) -> None:
    """``DROP VIEW [IF EXISTS] v``: a temporary view, else a persistent view
    (``WRONG_COMMAND_FOR_OBJECT_TYPE`` for a table)."""
    catalog = session.session_catalog
    parts = tuple(plan.name.split("."))
    if len(parts) == 1 and catalog.exists(parts[0]):
        catalog.drop_temp_view(parts[0])
        return
    if len(parts) == 2 and parts[0].lower() == GLOBAL_TEMP_DATABASE:
        if not catalog.drop_global_temp_view(parts[1]) and not plan.if_exists:
            raise table_not_found(parts, search_path=_search_path(catalog, session=False))
        return
    table = catalog.get_table(parts)
    if table is None:
        if plan.if_exists:
            return
        db, name = catalog.qualify(parts)
        raise table_not_found((SESSION_CATALOG, db, name),
                              search_path=_search_path(catalog, session=False))
    if not table.is_view:
        name = ".".join(table.qualified_name)
        raise AnalysisError(
            f"The operation DROP VIEW requires a VIEW or METRIC_VIEW. But {name} is a "
            f"{table.table_type}. Use DROP TABLE instead.",
            error_class="WRONG_COMMAND_FOR_OBJECT_TYPE",
            parameters={"operation": "DROP VIEW", "requiredType": "VIEW or METRIC_VIEW",
                        "objectName": name, "foundType": table.table_type,
                        "alternative": "DROP TABLE"})
    catalog.drop_table(parts)


# -- the Spark runtime's catalog --------------------------------------------------------------


def _spark_sql(session: "Session", text: str) -> None:
    spark = session.spark_session
    if spark is not None:
        spark.sql(text)


def spark_create_statement(table: CatalogTable) -> str:
    """``CREATE TABLE IF NOT EXISTS`` registering ``table`` in a SparkSession's catalog over
    the same directory (LOCATION given, so Spark never deletes Ember's files)."""
    cols = ",\n".join(f"  {quote(f.name)} {type_ddl(f.data_type)}".replace(
        " COLLATE UTF8_BINARY", "") for f in table.schema.fields)
    out = (f"CREATE TABLE IF NOT EXISTS {quote(table.database)}.{quote(table.name)} (\n{cols})\n"
           + _source_clauses(table, quote))
    return out + f"LOCATION {_sql_string(_uri(table.location))}\n"


def register_in_spark(session: "Session", table: CatalogTable) -> None:
    """Make ``table`` known to the session's SparkSession (Spark runtime only). A table Spark
    cannot register (a type it cannot store in that format) stays Ember's, with a warning."""
    if session.spark_session is None or table.is_view:
        return
    try:
        _spark_sql(session, f"CREATE DATABASE IF NOT EXISTS {quote(table.database)}")
        _spark_sql(session, spark_create_statement(table))
        if table.partition_columns:
            _spark_sql(session, f"MSCK REPAIR TABLE {quote(table.database)}.{quote(table.name)}")
    except Exception as e:  # noqa: BLE001 - any Spark error: the Ember table is unaffected
        warnings.warn(f"The table {table.quoted_name()} is not registered in the SparkSession's "
                      f"catalog: {str(e).splitlines()[0]}", stacklevel=2)


def refresh_in_spark(session: "Session", table: CatalogTable) -> None:
    """After Ember changed ``table``'s files: Spark lists them (and its partitions) again."""
    if session.spark_session is None or table.is_view:
        return
    name = f"{quote(table.database)}.{quote(table.name)}"
    if not session.spark_session.catalog.tableExists(f"{table.database}.{table.name}"):
        register_in_spark(session, table)
    elif table.partition_columns:
        _spark_sql(session, f"MSCK REPAIR TABLE {name} SYNC PARTITIONS")
    _spark_sql(session, f"REFRESH TABLE {name}")


def _spark_drop(session: "Session", table: CatalogTable) -> None:
    if session.spark_session is None or table.is_view:
        return
    # Spark sees Ember's tables as external (LOCATION given): dropping keeps the files
    _spark_sql(session, f"DROP TABLE IF EXISTS {quote(table.database)}.{quote(table.name)}")


def _spark_replace(session: "Session", table: CatalogTable) -> None:
    _spark_drop(session, table)
    register_in_spark(session, table)
