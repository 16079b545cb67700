"""``session.catalog``: PySpark's ``Catalog`` API over the session catalog.

The entries are PySpark's named tuples, with the same fields and order:
``Database(name, catalog, description, locationUri)``,
``Table(name, catalog, namespace, description, tableType, isTemporary)`` and
``Column(name, description, dataType, nullable, isPartition, isBucket, isCluster)``.

>>> session.catalog.listTables()                                    # doctest: +SKIP
[Table(name='t', catalog='spark_catalog', namespace=['default'], description=None,
       tableType='MANAGED', isTemporary=False)]
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, NamedTuple

from ember.analysis.catalog import matches_pattern, schema_not_found, table_not_found
from ember.analysis.catalog_model import SESSION_CATALOG, CatalogDatabase, CatalogTable
from ember.catalog_commands import refresh_in_spark, run_catalog_command
from ember.column import parse_column_name
from ember.errors import AnalysisError
from ember.plans.logical import ddl as D
from ember.readers import _schema_of as schema_of

if TYPE_CHECKING:  # pragma: no cover
    from ember.dataframe import DataFrame
    from ember.session import Session

__all__ = ["CatalogAPI", "Database", "Table", "Column", "CatalogMetadata"]


class CatalogMetadata(NamedTuple):
    name: str
    description: str | None


class Database(NamedTuple):
    name: str
    catalog: str | None
    description: str | None
    locationUri: str  # noqa: N815 - PySpark's name


class Table(NamedTuple):
    name: str
    catalog: str | None
    namespace: list[str] | None
    description: str | None
    tableType: str  # noqa: N815
    isTemporary: bool  # noqa: N815

    @property
    def database(self) -> str | None:
        """PySpark's ``Table.database``: the single namespace part."""
        return self.namespace[0] if self.namespace and len(self.namespace) == 1 else None


class Column(NamedTuple):
    name: str
    description: str | None
    dataType: str  # noqa: N815
    nullable: bool
    isPartition: bool  # noqa: N815
    isBucket: bool  # noqa: N815
    isCluster: bool  # noqa: N815


def _database(db: CatalogDatabase) -> Database:
    return Database(db.name, SESSION_CATALOG, db.comment or "", "file:" + db.location)


def _table(t: CatalogTable) -> Table:
    return Table(t.name, SESSION_CATALOG, [t.database], t.comment, t.table_type, False)


def _temp(name: str) -> Table:
    return Table(name, None, [], None, "TEMPORARY", True)


class CatalogAPI:
    """``session.catalog`` (PySpark's ``pyspark.sql.catalog.Catalog``)."""

    def __init__(self, session: "Session") -> None:
        self._session = session

    @property
    def _catalog(self):  # noqa: ANN202 - the session's ember.analysis.catalog.Catalog
        return self._session.session_catalog

    def _parts(self, name: str, db: str | None = None) -> tuple[str, ...]:
        parts = tuple(parse_column_name(name))
        return (db,) + parts if db is not None else parts

    # -- catalogs and databases ---------------------------------------------------------------
    def currentCatalog(self) -> str:  # noqa: N802
        return SESSION_CATALOG

    def setCurrentCatalog(self, catalogName: str) -> None:  # noqa: N802,N803
        if catalogName != SESSION_CATALOG:
            raise AnalysisError(f"Catalog '{catalogName}' plugin class not found: "
                                f"spark.sql.catalog.{catalogName} is not defined",
                                error_class="CATALOG_NOT_FOUND",
                                parameters={"catalogName": f"`{catalogName}`"})

    def listCatalogs(self, pattern: str | None = None) -> list[CatalogMetadata]:  # noqa: N802
        return [CatalogMetadata(SESSION_CATALOG, None)] if matches_pattern(
            SESSION_CATALOG, pattern) else []

    def currentDatabase(self) -> str:  # noqa: N802
        return self._catalog.current_database()

    def setCurrentDatabase(self, dbName: str) -> None:  # noqa: N802,N803
        self._catalog.set_current_database(dbName)

    def listDatabases(self, pattern: str | None = None) -> list[Database]:  # noqa: N802
        return [_database(d) for d in self._catalog.list_databases()
                if matches_pattern(d.name, pattern)]

    def getDatabase(self, dbName: str) -> Database:  # noqa: N802,N803
        db = self._catalog.get_database(dbName)
        if db is None:
            raise schema_not_found(dbName.lower())
        return _database(db)

    def databaseExists(self, dbName: str) -> bool:  # noqa: N802,N803
        return self._catalog.database_exists(dbName)

    # -- tables -------------------------------------------------------------------------------
    def listTables(self, dbName: str | None = None,  # noqa: N802,N803
                   pattern: str | None = None) -> list[Table]:
        tables = [_table(t) for t in self._catalog.glob_tables(dbName, pattern)]
        return tables + [_temp(v) for v in self._catalog.list_views()
                         if matches_pattern(v, pattern)]

    def getTable(self, tableName: str) -> Table:  # noqa: N802,N803
        parts = self._parts(tableName)
        if len(parts) == 1 and self._catalog.exists(parts[0]):
            return _temp(parts[0])
        t = self._catalog.get_table(parts)
        if t is None:
            raise table_not_found(parts, search_path=self._search_path())
        return _table(t)

    def _search_path(self) -> str:
        return f"[`system`.`session`, `{SESSION_CATALOG}`.`{self.currentDatabase()}`]"

    def tableExists(self, tableName: str, dbName: str | None = None) -> bool:  # noqa: N802,N803
        parts = self._parts(tableName, dbName)
        if len(parts) == 1 and self._catalog.exists(parts[0]):
            return True
        try:
            return self._catalog.get_table(parts) is not None
        except AnalysisError:
            return False

    def listColumns(self, tableName: str, dbName: str | None = None) -> list[Column]:  # noqa: N802,N803
        parts = self._parts(tableName, dbName)
        if len(parts) == 1 and self._catalog.exists(parts[0]):
            return [Column(a.name, None, a.data_type.simple_string(), a.nullable, False, False,
                           False) for a in self._catalog.lookup(parts).output]
        t = self._catalog.get_table(parts)
        if t is None:
            raise table_not_found(parts, search_path=self._search_path())
        parts_lower = {p.lower() for p in t.partition_columns}
        return [Column(f.name, t.column_comments.get(f.name), f.data_type.simple_string(),
                       f.nullable, f.name.lower() in parts_lower, False, False)
                for f in t.schema.fields]

    def dropTempView(self, viewName: str) -> bool:  # noqa: N802,N803
        return self._catalog.drop_temp_view(viewName, if_exists=True)

    def dropGlobalTempView(self, viewName: str) -> bool:  # noqa: N802,N803
        return self.dropTempView(viewName)

    def createTable(self, tableName: str, path: str | None = None,  # noqa: N802,N803
                    source: str | None = None, schema: Any = None,
                    description: str | None = None, **options: str) -> "DataFrame":
        """A table over ``path`` (external) or a new empty managed table with ``schema``
        (the metadata-only form); returns it as a DataFrame."""
        parts = self._parts(tableName)
        cols = None
        if schema is not None:
            struct = schema_of(schema)
            cols = tuple(D.ColumnDefinition(f.name, f.data_type, f.nullable)
                         for f in struct.fields)
        opts = {k: str(v).lower() if isinstance(v, bool) else str(v) for k, v in options.items()}
        location = path or opts.pop("path", None)
        run_catalog_command(self._session, D.CreateTable(
            parts, cols, (source or "parquet").lower(), tuple(opts.items()), (), location,
            description))
        return self._session.table(tableName)

    createExternalTable = createTable  # noqa: N815

    def refreshTable(self, tableName: str) -> None:  # noqa: N802,N803
        """Ember lists a table's files at each query, so there is nothing to refresh in
        Ember; on the Spark runtime, the table's entry in the SparkSession's catalog is
        re-registered (its files and partitions listed again). Checks the table exists."""
        parts = self._parts(tableName)
        if not self.tableExists(tableName):
            raise table_not_found(parts, search_path=self._search_path())
        if not (len(parts) == 1 and self._catalog.exists(parts[0])):
            table = self._catalog.get_table(parts)
            if table is not None and not table.is_view:
                refresh_in_spark(self._session, table)

    def refreshByPath(self, path: str) -> None:  # noqa: N802
        return None

    def isCached(self, tableName: str) -> bool:  # noqa: N802,N803
        """Whether the table's rows are in the session's cache (:mod:`ember.cache_manager`)."""
        return self._session.table(tableName).is_cached

    def cacheTable(self, tableName: str, storageLevel: Any = None) -> None:  # noqa: N802,N803
        """Cache the table's rows, as ``spark.table(tableName).persist(storageLevel)``."""
        self._session.table(tableName).persist(storageLevel)

    def uncacheTable(self, tableName: str) -> None:  # noqa: N802,N803
        self._session.table(tableName).unpersist()

    def clearCache(self) -> None:  # noqa: N802
        """Drop every cached DataFrame and table of the session."""
        for entry in self._session.cache_manager.clear():
            if entry.frame is not None:
                entry.frame.unpersist()
