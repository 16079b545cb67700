"""The session catalog (Spark's ``SessionCatalog``): temporary views by name, and the
persistent databases, tables and views of the warehouse.

Names are case-insensitive (Spark's default). A temporary view is stored as its *analyzed* plan;
every lookup returns a copy with fresh expression ids (:func:`fresh_copy`), so a view referenced
twice in one query (a self-join) yields two relations with distinct attributes, as Spark's
``DeduplicateRelations`` guarantees.

Persistent objects (:class:`CatalogTable`) live in a :class:`~ember.analysis.metastore.Metastore`:
an SQLite database in the warehouse directory (``persistent=True``, what
``spark.sql.catalogImplementation=hive`` gives), or a private in-memory one (``in-memory``). The
store is opened at its first use and created at its first change, so a session that never
touches a table never creates the warehouse. A lookup of a table goes through ``resolver``, which
the session provides: it builds the relation over the table's files (or re-analyzes a view's
text), since reading files and parsing SQL are not the analyzer's business.  As in Spark, a
temporary view shadows a persistent table of the same single-part name.

Example::

    cat = Catalog(warehouse="/w", persistent=True, resolver=session_resolver)
    cat.create_temp_view("t", analyzed_plan)
    cat.lookup(("t",))   # -> SubqueryAlias(('t',), View('t', <copy of plan, fresh ids>))
    cat.create_table(CatalogTable("default", "u", "MANAGED", "parquet", schema,
                                  location=cat.default_location("default", "u")))
    cat.lookup(("u",))   # -> SubqueryAlias(('spark_catalog', 'default', 'u'), <relation>)
"""

from __future__ import annotations

import fnmatch
import os
import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from ember.errors import AnalysisError, Origin, UnsupportedError
from ember.expressions.base import Alias, AttributeReference, Expression
from ember.plans.logical.nodes import LogicalPlan, Project, SubqueryAlias, View
from ember.analysis.fresh import fresh_copy
from ember.analysis.table_statistics import AutomaticStatistics, TableStatistics
from ember.analysis.catalog_model import (
    DEFAULT_DATABASE, MANAGED, SESSION_CATALOG, VIEW, CatalogDatabase, CatalogTable, quote,
)
from ember.analysis.metastore import METASTORE_FILE, Metastore

_DEFAULT_PREFIXES = ((), ("default",), ("spark_catalog", "default"))
#: the database of global temporary views (Spark's ``spark.sql.globalTempDatabase``)
GLOBAL_TEMP_DATABASE = "global_temp"
#: global temporary views: shared by the sessions of the process, as Spark's
#: ``GlobalTempViewManager`` by the sessions of an application
_GLOBAL_VIEWS: dict[str, "_Entry"] = {}
_GLOBAL_LOCK = threading.Lock()


@dataclass(slots=True)
class _Entry:
    name: str
    plan: LogicalPlan
    temporary: bool


def _quote(name: str) -> str:
    return "`" + name.replace("`", "``") + "`"


class Catalog:
    """Temporary views by case-insensitive name and the session's table statistics (Spark's
    ``SessionCatalog`` subset).  ``automatic_statistics`` gathers statistics without ANALYZE
    (``ember.cbo.autoStats.enabled``)."""

    def __init__(self, automatic_statistics: AutomaticStatistics | None = None, *,
                 warehouse: str | None = None, persistent: bool = False,
                 resolver: Callable[[CatalogTable], LogicalPlan] | None = None) -> None:
        self._views: dict[str, _Entry] = {}
        #: Spark's ``CatalogStatistics`` of the session's relations (ANALYZE TABLE).
        self.table_statistics = TableStatistics(automatic_statistics)
        #: the warehouse directory (absolute): the default database's location
        self.warehouse = os.path.abspath(os.path.expanduser(warehouse or "spark-warehouse"))
        #: whether the metadata persists in the warehouse (else it lives with this object)
        self.persistent = persistent
        #: builds the relation of a persistent table or view (given by the session)
        self.resolver = resolver
        self._store: Metastore | None = None
        self._store_lock = threading.Lock()
        self._current_database = DEFAULT_DATABASE
        #: Python UDFs registered for SQL (``spark.udf.register``), by lower-case name
        self._python_functions: dict[str, Expression] = {}
        #: Python UDTFs registered for SQL (``spark.udtf.register``), by lower-case name: each
        #: has ``call(args) -> generator expression``
        self._python_table_functions: dict[str, Any] = {}

    # -- Python functions (spark.udf.register) ----------------------------------------------
    def register_python_function(self, name: str, call: Expression) -> None:
        """Make ``name`` resolve to ``call`` (a Python UDF without arguments) in SQL; replaces
        an earlier registration of the name (Spark's temporary functions)."""
        self._python_functions[name.lower()] = call

    def lookup_python_function(self, name: str) -> Expression | None:
        """The registered Python UDF call template of ``name``, if any."""
        return self._python_functions.get(name.lower())

    def register_python_table_function(self, name: str, udtf: Any) -> None:
        """Make ``name`` a table function of SQL calling the Python UDTF ``udtf``."""
        self._python_table_functions[name.lower()] = udtf

    def lookup_python_table_function(self, name: str) -> Any | None:
        """The Python UDTF registered as ``name``, if any."""
        return self._python_table_functions.get(name.lower())

    # -- views ------------------------------------------------------------------------------
    def create_temp_view(
        self,
        name: str,
        plan: LogicalPlan,
        replace: bool = False,
        user_columns: tuple[str, ...] | None = None,
        *,
        temporary: bool = True,
        if_not_exists: bool = False,
    ) -> None:
        """Register ``plan`` (already analyzed) as view ``name``.

        ``user_columns`` renames the columns (``CREATE VIEW v(a1, a2) AS ...``). Raises
        ``TEMP_TABLE_OR_VIEW_ALREADY_EXISTS`` when the name exists and ``replace`` is false.
        """
        key = name.lower()
        if key in self._views and not replace:
            if if_not_exists:
                return
            if temporary:
                raise AnalysisError(
                    f"Cannot create the temporary view {_quote(name)} because it already exists.\n"
                    "Choose a different name, drop or replace the existing view,  or add the IF "
                    "NOT EXISTS clause to tolerate pre-existing views.",
                    error_class="TEMP_TABLE_OR_VIEW_ALREADY_EXISTS",
                    parameters={"relationName": _quote(name)},
                )
            full = f"`spark_catalog`.`default`.{_quote(name)}"
            raise AnalysisError(
                f"Cannot create view {full} because it already exists.\n"
                "Choose a different name, drop or replace the existing object, or add the IF NOT "
                "EXISTS clause to tolerate pre-existing objects.",
                error_class="TABLE_OR_VIEW_ALREADY_EXISTS",
                parameters={"relationName": full},
            )
        if user_columns is not None:
            plan = with_user_columns(name, plan, tuple(user_columns))
        self._views[key] = _Entry(name, plan, temporary)

    def create_global_temp_view(self, name: str, plan: LogicalPlan, replace: bool = False,
                                user_columns: tuple[str, ...] | None = None,
                                if_not_exists: bool = False) -> None:
        """``CREATE GLOBAL TEMP VIEW``: a view named ``global_temp.name``."""
        key = name.lower()
        with _GLOBAL_LOCK:
            if key in _GLOBAL_VIEWS and not replace:
                if if_not_exists:
                    return
                full = f"{quote(GLOBAL_TEMP_DATABASE)}.{quote(name)}"
                raise AnalysisError(
                    f"Cannot create the temporary view {full} because it already exists.\n"
                    "Choose a different name, drop or replace the existing view,  or add the IF "
                    "NOT EXISTS clause to tolerate pre-existing views.",
                    error_class="TEMP_TABLE_OR_VIEW_ALREADY_EXISTS",
                    parameters={"relationName": full})
            if user_columns is not None:
                plan = with_user_columns(name, plan, tuple(user_columns))
            _GLOBAL_VIEWS[key] = _Entry(name, plan, True)

    def drop_global_temp_view(self, name: str) -> bool:
        with _GLOBAL_LOCK:
            return _GLOBAL_VIEWS.pop(name.lower(), None) is not None

    def register_relation(self, name: str, plan: LogicalPlan, replace: bool = True) -> None:
        """Register a resolved relation (e.g. a ``FileRelation``) under ``name``."""
        self.create_temp_view(name, plan, replace=replace)

    def drop_temp_view(self, name: str, if_exists: bool = False) -> bool:
        """Drop view ``name``; returns whether it existed. Raises ``TABLE_OR_VIEW_NOT_FOUND``
        when it does not exist and ``if_exists`` is false."""
        key = name.lower()
        if key in self._views:
            del self._views[key]
            return True
        if not if_exists:
            raise table_not_found((name,))
        return False

    drop_view = drop_temp_view

    def exists(self, name: str) -> bool:
        return name.lower() in self._views

    def list_views(self) -> list[str]:
        return sorted(e.name for e in self._views.values())

    def get_plan(self, name: str) -> LogicalPlan | None:
        """The stored plan of view ``name`` (shared ids; use :meth:`lookup` inside queries)."""
        e = self._views.get(name.lower())
        return None if e is None else e.plan

    # -- the metadata store -----------------------------------------------------------------
    @property
    def metastore_path(self) -> str:
        return os.path.join(self.warehouse, METASTORE_FILE) if self.persistent else ":memory:"

    def _opened(self, create: bool) -> Metastore | None:
        """The store; None when it does not exist yet and ``create`` is false (then the catalog
        holds only the default database, without tables)."""
        with self._store_lock:
            if self._store is None:
                if not create and self.persistent and not os.path.exists(self.metastore_path):
                    return None
                self._store = Metastore(self.metastore_path, self.warehouse)
            return self._store

    def _reader(self) -> Metastore | None:
        return self._opened(False)

    def _writer(self) -> Metastore:
        store = self._opened(True)
        assert store is not None
        return store

    # -- databases --------------------------------------------------------------------------
    def current_database(self) -> str:
        return self._current_database

    def set_current_database(self, database: str) -> None:
        """``USE database``; ``SCHEMA_NOT_FOUND`` when it does not exist."""
        db = database.lower()
        if not self.database_exists(db):
            raise schema_not_found(db)
        self._current_database = db

    def get_database(self, database: str) -> CatalogDatabase | None:
        store = self._reader()
        if store is None:
            return self._default_database() if database.lower() == DEFAULT_DATABASE else None
        return store.get_database(database.lower())

    def database_exists(self, database: str) -> bool:
        return self.get_database(database) is not None

    def list_databases(self) -> list[CatalogDatabase]:
        store = self._reader()
        return [self._default_database()] if store is None else store.list_databases()

    def _default_database(self) -> CatalogDatabase:
        return CatalogDatabase(DEFAULT_DATABASE, self.warehouse, "default database")

    def default_database_location(self, database: str) -> str:
        """Where a database without LOCATION keeps its tables: ``<warehouse>/<db>.db``."""
        return os.path.join(self.warehouse, database.lower() + ".db")

    def create_database(self, db: CatalogDatabase, ignore_if_exists: bool = False) -> None:
        """Create ``db`` (its location directory too); ``SCHEMA_ALREADY_EXISTS`` when it
        exists and not ``ignore_if_exists``."""
        name = db.name.lower()
        db = CatalogDatabase(name, os.path.abspath(db.location), db.comment, db.properties)
        if not self._writer().create_database(db):
            if ignore_if_exists:
                return
            raise AnalysisError(
                f"Cannot create schema {quote(name)} because it already exists.\nChoose a "
                "different name, drop the existing schema, or add the IF NOT EXISTS clause to "
                "tolerate pre-existing schema.",
                error_class="SCHEMA_ALREADY_EXISTS", parameters={"schemaName": quote(name)})
        os.makedirs(db.location, exist_ok=True)

    def drop_database(self, database: str, if_exists: bool = False,
                      cascade: bool = False) -> list[CatalogTable]:
        """Drop ``database`` (with ``cascade``, its tables: returned so that the caller deletes
        the managed ones' files). ``SCHEMA_NOT_FOUND``, ``SCHEMA_NOT_EMPTY``; the default
        database cannot be dropped."""
        name = database.lower()
        if name == DEFAULT_DATABASE:
            full = f"`{SESSION_CATALOG}`.{quote(name)}"
            raise AnalysisError(f"The feature is not supported: Drop the default database {full}.",
                                error_class="UNSUPPORTED_FEATURE.DROP_DATABASE",
                                parameters={"database": full})
        store = self._reader()
        try:
            dropped = None if store is None else store.drop_database(name, cascade)
        except ValueError:
            raise AnalysisError(
                f"Cannot drop a schema {quote(name)} because it contains objects.\n"
                "Use DROP SCHEMA ... CASCADE to drop the schema and all its objects.",
                error_class="SCHEMA_NOT_EMPTY", parameters={"schemaName": quote(name)},
            ) from None
        if dropped is None:
            if if_exists:
                return []
            raise schema_not_found(name)
        if self._current_database == name:
            self._current_database = DEFAULT_DATABASE
        return dropped

    # -- persistent tables and views --------------------------------------------------------
    def qualify(self, name_parts: tuple[str, ...]) -> tuple[str, str]:
        """``(database, table)`` of a name as written: ``t`` is in the current database,
        ``db.t`` and ``spark_catalog.db.t`` in ``db`` (database lower-cased)."""
        parts = tuple(name_parts)
        if len(parts) == 1:
            return self._current_database, parts[0]
        if len(parts) == 2:
            return parts[0].lower(), parts[1]
        if len(parts) == 3 and parts[0].lower() == SESSION_CATALOG:
            return parts[1].lower(), parts[2]
        raise AnalysisError(
            f"The catalog {quote(parts[0])} does not support namespaces of "
            f"{'.'.join(quote(p) for p in parts[:-1])}: Ember has only the session catalog "
            f"{quote(SESSION_CATALOG)} with single-part namespaces.",
            error_class="REQUIRES_SINGLE_PART_NAMESPACE",
            parameters={"sessionCatalog": SESSION_CATALOG,
                        "namespace": ".".join(quote(p) for p in parts[:-1])})

    def get_table(self, name_parts: tuple[str, ...]) -> CatalogTable | None:
        """The persistent table or view ``name_parts`` (never a temporary view), or None."""
        database, name = self.qualify(name_parts)
        store = self._reader()
        return None if store is None else store.get_table(database, name)

    def table_exists(self, name_parts: tuple[str, ...]) -> bool:
        return self.get_table(name_parts) is not None

    def list_tables(self, database: str | None = None) -> list[CatalogTable]:
        """The persistent tables and views of ``database`` (default: the current one), by
        name; ``SCHEMA_NOT_FOUND`` when it does not exist."""
        db = (database or self._current_database).lower()
        if not self.database_exists(db):
            raise schema_not_found(db)
        store = self._reader()
        return [] if store is None else store.list_tables(db)

    def default_location(self, database: str, name: str) -> str:
        """A managed table's directory: ``<warehouse>/<name>`` in the default database, else
        ``<database location>/<name>`` (``<warehouse>/<db>.db/<name>``); lower case, as
        Spark's table names."""
        db = self.get_database(database)
        if db is None:
            raise schema_not_found(database.lower())
        return os.path.join(db.location, name.lower())

    def _check_database(self, database: str) -> None:
        if not self.database_exists(database):
            raise schema_not_found(database)

    def create_table(self, table: CatalogTable, ignore_if_exists: bool = False) -> None:
        """Add ``table``: ``TABLE_OR_VIEW_ALREADY_EXISTS`` when its name is taken (unless
        ``ignore_if_exists``), ``LOCATION_ALREADY_EXISTS`` when a managed table's directory
        exists and is not empty; creates a managed table's directory."""
        table = _normalized(table)
        self._check_database(table.database)
        if self.get_table((table.database, table.name)) is not None:
            if ignore_if_exists:
                return
            raise table_already_exists(table)
        self._check_location(table)
        try:
            created = self._writer().create_table(table)
        except LookupError:
            raise schema_not_found(table.database) from None
        if not created:
            if ignore_if_exists:
                return
            raise table_already_exists(table)
        if table.table_type == MANAGED and table.location:
            os.makedirs(table.location, exist_ok=True)

    def _check_location(self, table: CatalogTable) -> None:
        """Spark's ``validateTableLocation``: a new managed table's directory must not hold
        files (left by another engine or a crashed write)."""
        loc = table.location
        if table.table_type == MANAGED and loc and os.path.isdir(loc) and os.listdir(loc):
            raise AnalysisError(
                f"Cannot name the managed table as {table.quoted_name()}, as its associated "
                f"location 'file:{loc}' already exists. Please pick a different table name, or "
                "remove the existing location first.",
                error_class="LOCATION_ALREADY_EXISTS",
                parameters={"identifier": table.quoted_name(), "location": f"'file:{loc}'"})

    def replace_table(self, table: CatalogTable) -> CatalogTable | None:
        """``CREATE OR REPLACE``: store ``table`` in place of the entry of its name (returned,
        so the caller can delete a replaced managed table's files)."""
        table = _normalized(table)
        self._check_database(table.database)
        old = self._writer().replace_table(table)
        if table.table_type == MANAGED and table.location:
            os.makedirs(table.location, exist_ok=True)
        return old

    def alter_table(self, table: CatalogTable) -> None:
        """Store new metadata for the existing table of ``table``'s identifier."""
        table = _normalized(table)
        if not self._writer().alter_table(table):
            raise table_not_found((SESSION_CATALOG, table.database, table.name))

    def rename_table(self, name_parts: tuple[str, ...], new_name: str) -> CatalogTable:
        """``ALTER TABLE t RENAME TO u`` (same database): a managed table's directory moves
        to its new default location. Returns the renamed table."""
        old = self.get_table(name_parts)
        if old is None:
            raise table_not_found(name_parts)
        new = old.copy(name=new_name.lower())
        if self.get_table((old.database, new.name)) is not None:
            raise table_already_exists(new)
        if old.table_type == MANAGED and old.location:
            new = new.copy(location=self.default_location(old.database, new.name))
            self._check_location(new)
            if os.path.isdir(new.location):  # empty (checked above)
                os.rmdir(new.location)
            if os.path.exists(old.location):
                os.rename(old.location, new.location)
        if not self._writer().alter_table(new, old_name=old.name):
            if new.location != old.location and os.path.exists(new.location):
                os.rename(new.location, old.location)  # put the directory back
            raise table_already_exists(new)
        return new

    def drop_table(self, name_parts: tuple[str, ...],
                   if_exists: bool = False) -> CatalogTable | None:
        """Remove the persistent table or view ``name_parts`` from the catalog (metadata only:
        the caller deletes a managed table's files) and return it; None when it did not exist
        and ``if_exists``, else ``TABLE_OR_VIEW_NOT_FOUND``."""
        database, name = self.qualify(name_parts)
        store = self._reader()
        dropped = None if store is None else store.drop_table(database, name)
        if dropped is None and not if_exists:
            raise table_not_found((SESSION_CATALOG, database, name))
        return dropped

    def glob_tables(self, database: str | None, pattern: str | None) -> list[CatalogTable]:
        """:meth:`list_tables` filtered by a SHOW TABLES pattern."""
        return [t for t in self.list_tables(database) if matches_pattern(t.name, pattern)]

    # -- lookup -----------------------------------------------------------------------------
    def lookup(self, name_parts: tuple[str, ...]) -> LogicalPlan:
        """``SubqueryAlias((name,), View(name, plan))`` with fresh ids, or raises
        ``TABLE_OR_VIEW_NOT_FOUND``."""
        plan = self.try_lookup(name_parts)
        if plan is None:
            raise table_not_found(name_parts)
        return plan

    def try_lookup(self, name_parts: tuple[str, ...]) -> LogicalPlan | None:
        """A temporary view for a single-part name, else the persistent table or view (in the
        current database for a single-part name), else None."""
        parts = tuple(name_parts)
        if not parts:
            return None
        if len(parts) == 1 and parts[0].lower() in self._views:
            return self._view_relation(parts)
        if len(parts) == 2 and parts[0].lower() == GLOBAL_TEMP_DATABASE:
            e = _GLOBAL_VIEWS.get(parts[1].lower())
            if e is None:
                return None
            return SubqueryAlias((GLOBAL_TEMP_DATABASE, e.name),
                                 View(f"{GLOBAL_TEMP_DATABASE}`.`{e.name}", fresh_copy(e.plan)))
        if len(parts) <= 3:
            try:
                table = self.get_table(parts)
            except AnalysisError:
                table = None
            if table is not None:
                return self.table_relation(table)
        return self._view_relation(parts)

    def table_relation(self, table: CatalogTable) -> LogicalPlan:
        """The relation of a persistent table or view, named by its qualified identifier
        (``SubqueryAlias spark_catalog.default.t``), built by the session's ``resolver``."""
        if self.resolver is None:
            raise UnsupportedError(
                f"The catalog cannot read the table {table.quoted_name()}: it has no resolver")
        return SubqueryAlias(table.qualified_name, self.resolver(table))

    def _view_relation(self, parts: tuple[str, ...]) -> LogicalPlan | None:
        prefix = tuple(p.lower() for p in parts[:-1])
        if prefix not in _DEFAULT_PREFIXES:
            return None
        e = self._views.get(parts[-1].lower())
        if e is None:
            return None
        body = fresh_copy(e.plan)
        return SubqueryAlias((e.name,), View(e.name, body))


def _normalized(table: CatalogTable) -> CatalogTable:
    """Spark's ``formatTableName`` / ``formatDatabaseName``: lower-case identifiers."""
    return table.copy(database=table.database.lower(), name=table.name.lower())


def matches_pattern(name: str, pattern: str | None) -> bool:
    """Spark's ``StringUtils.filterPattern``: ``|`` separates alternatives, ``*`` matches any
    characters, case-insensitive."""
    if pattern is None:
        return True
    return any(fnmatch.fnmatchcase(name.lower(), p.strip().lower().replace("?", "[?]"))
               for p in pattern.split("|"))


def schema_not_found(database: str, origin: Origin | None = None) -> AnalysisError:
    """Spark's ``SCHEMA_NOT_FOUND`` for ``database``."""
    name = f"`{SESSION_CATALOG}`.{quote(database)}"
    return AnalysisError(
        f"The schema {name} cannot be found. Verify the spelling and correctness of the schema "
        "and catalog.\nIf you did not qualify the name with a catalog, verify the "
        "current_schema() output, or qualify the name with the correct catalog.\nTo tolerate "
        "the error on drop use DROP SCHEMA IF EXISTS.",
        error_class="SCHEMA_NOT_FOUND", parameters={"schemaName": name}, origin=origin)


def table_already_exists(table: CatalogTable) -> AnalysisError:
    """Spark's ``TABLE_OR_VIEW_ALREADY_EXISTS`` for a persistent table or view."""
    full = table.quoted_name()
    kind = "view" if table.is_view else "table or view"
    return AnalysisError(
        f"Cannot create {kind} {full} because it already exists.\n"
        "Choose a different name, drop or replace the existing object, or add the IF NOT "
        "EXISTS clause to tolerate pre-existing objects.",
        error_class="TABLE_OR_VIEW_ALREADY_EXISTS", parameters={"relationName": full})


def table_not_found(name_parts: tuple[str, ...], origin=None, *,
                    search_path: str | None = None) -> AnalysisError:
    """Spark's ``TABLE_OR_VIEW_NOT_FOUND`` error for ``name_parts``; ``search_path`` as the
    command shows it (a query's: builtin, session and the current database)."""
    rel = ".".join(_quote(p) for p in name_parts)
    path = search_path or "[`system`.`builtin`, `system`.`session`, `spark_catalog`.`default`]"
    return AnalysisError(
        f"The table or view {rel} cannot be found. Verify the spelling and correctness of the "
        f"schema and catalog.\nSearch path: {path}.\n"
        "If you did not qualify the name with a schema, verify the "
        "current_schema() output, or qualify the name with the correct schema and catalog.\n"
        "To tolerate the error on drop use DROP VIEW IF EXISTS or DROP TABLE IF EXISTS.",
        error_class="TABLE_OR_VIEW_NOT_FOUND",
        parameters={"relationName": rel, "searchPath": path},
        origin=origin,
    )


def with_user_columns(name: str, plan: LogicalPlan, names: tuple[str, ...]) -> LogicalPlan:
    """``CREATE VIEW v(a1, a2) AS q``: rename q's columns with a Project of Aliases."""
    out = plan.output
    if len(names) != len(out):
        cls = (
            "CREATE_VIEW_COLUMN_ARITY_MISMATCH.NOT_ENOUGH_DATA_COLUMNS"
            if len(out) < len(names)
            else "CREATE_VIEW_COLUMN_ARITY_MISMATCH.TOO_MANY_DATA_COLUMNS"
        )
        cols = ", ".join(_quote(n) for n in names)
        data = ", ".join(_quote(a.name) for a in out)
        raise AnalysisError(
            f"Cannot create view `spark_catalog`.`default`.{_quote(name)}, the reason is "
            f"{'not enough' if len(out) < len(names) else 'too many'} data columns:\n"
            f"View columns: {cols}.\nData columns: {data}.",
            error_class=cls,
            parameters={"viewName": f"`spark_catalog`.`default`.{_quote(name)}",
                        "viewColumns": cols, "dataColumns": data},
        )
    items: list[Expression] = [Alias(a, n) for a, n in zip(out, names)]
    return Project(tuple(items), plan)


__all__ = ["Catalog", "CatalogTable", "CatalogDatabase", "table_not_found", "schema_not_found",
           "table_already_exists", "matches_pattern", "with_user_columns", "AttributeReference",
           "MANAGED", "VIEW"]
