"""The metadata store of the persistent catalog: databases and tables in an SQLite database.

SQLite (the standard library's ``sqlite3``) rather than files Ember writes itself, because the
catalog needs what a database engine already does well: an update is atomic and durable (a
killed process never leaves half an entry), and several processes may use one warehouse at once.
The store runs in WAL mode (readers never block the one writer, and never see a half-done
change), every change is one ``BEGIN IMMEDIATE`` transaction (it takes the write lock before
reading, so "check that ``t`` does not exist, then insert it" cannot interleave with another
session's), and a busy timeout makes a second writer wait for the first instead of failing.
A uniqueness violation (two sessions creating one table) surfaces as "already exists".

``Metastore(":memory:")`` keeps the same tables in a private in-memory database: the
session-only catalog of ``spark.sql.catalogImplementation=in-memory``.

Example::

    store = Metastore("/w/.ember_metastore.sqlite", "/w")
    store.create_table(table)            # False: a table of that name exists
    store.get_table("default", "t")      # -> CatalogTable | None
"""

from __future__ import annotations

import json
import os
import sqlite3
import threading
from collections.abc import Iterator
from contextlib import contextmanager

from ember.analysis.catalog_model import (
    DEFAULT_DATABASE, CatalogDatabase, CatalogTable, schema_from_bytes, schema_to_bytes,
)

__all__ = ["Metastore", "METASTORE_FILE", "FORMAT_VERSION"]

#: the store's file name inside the warehouse directory (hidden: a reader of the warehouse
#: directory skips names starting with "."; a table directory cannot be named so)
METASTORE_FILE = ".ember_metastore.sqlite"
#: version of the tables' layout, checked on open
FORMAT_VERSION = "1"
#: how long a writer waits for another session's transaction (milliseconds)
BUSY_TIMEOUT_MS = 60_000

_SCHEMA = (
    "CREATE TABLE IF NOT EXISTS ember_meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)",
    "CREATE TABLE IF NOT EXISTS databases (name TEXT PRIMARY KEY, location TEXT NOT NULL, "
    "comment TEXT, properties TEXT NOT NULL)",
    "CREATE TABLE IF NOT EXISTS tables (database TEXT NOT NULL, key TEXT NOT NULL, "
    "name TEXT NOT NULL, table_type TEXT NOT NULL, provider TEXT, schema BLOB NOT NULL, "
    "partition_columns TEXT NOT NULL, location TEXT, options TEXT NOT NULL, "
    "properties TEXT NOT NULL, comment TEXT, view_text TEXT, view_database TEXT, "
    "created_time REAL NOT NULL, extra TEXT NOT NULL, PRIMARY KEY (database, key))",
)

_COLUMNS = ("database", "key", "name", "table_type", "provider", "schema", "partition_columns",
            "location", "options", "properties", "comment", "view_text", "view_database",
            "created_time", "extra")


class MetastoreFormatError(RuntimeError):
    """The store was written by an Ember with another layout version."""


class Metastore:
    """Databases and tables in SQLite at ``path`` (``":memory:"``: private to this object);
    ``warehouse`` is the default database's location."""

    def __init__(self, path: str, warehouse: str) -> None:
        self.path = path
        self._lock = threading.RLock()
        if path != ":memory:":
            os.makedirs(os.path.dirname(path), exist_ok=True)
        # autocommit mode: each change opens its own BEGIN IMMEDIATE transaction
        self._conn = sqlite3.connect(path, timeout=BUSY_TIMEOUT_MS / 1000,
                                     isolation_level=None, check_same_thread=False)
        self._conn.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
        if path != ":memory:":
            self._conn.execute("PRAGMA journal_mode = WAL")
            self._conn.execute("PRAGMA synchronous = FULL")
        with self._write() as c:
            for stmt in _SCHEMA:
                c.execute(stmt)
            c.execute("INSERT OR IGNORE INTO ember_meta VALUES ('format_version', ?)",
                      (FORMAT_VERSION,))
            (version,) = c.execute(
                "SELECT value FROM ember_meta WHERE key = 'format_version'").fetchone()
            if version != FORMAT_VERSION:
                raise MetastoreFormatError(
                    f"The catalog at {path} has layout version {version}; this Ember reads "
                    f"version {FORMAT_VERSION}.")
            c.execute("INSERT OR IGNORE INTO databases VALUES (?, ?, ?, ?)",
                      (DEFAULT_DATABASE, warehouse, "default database", "{}"))

    def close(self) -> None:
        with self._lock:
            self._conn.close()

    # -- transactions -------------------------------------------------------------------------
    @contextmanager
    def _write(self) -> Iterator[sqlite3.Connection]:
        """One write transaction, holding the database's write lock from its start."""
        with self._lock:
            self._conn.execute("BEGIN IMMEDIATE")
            try:
                yield self._conn
            except BaseException:
                self._conn.execute("ROLLBACK")
                raise
            self._conn.execute("COMMIT")

    def _read(self, sql: str, args: tuple = ()) -> list[tuple]:
        with self._lock:
            return self._conn.execute(sql, args).fetchall()

    # -- databases ----------------------------------------------------------------------------
    def get_database(self, name: str) -> CatalogDatabase | None:
        rows = self._read("SELECT * FROM databases WHERE name = ?", (name.lower(),))
        return _database(rows[0]) if rows else None

    def list_databases(self) -> list[CatalogDatabase]:
        return [_database(r) for r in self._read("SELECT * FROM databases ORDER BY name")]

    def create_database(self, db: CatalogDatabase) -> bool:
        """Insert ``db``; False when a database of that name exists."""
        try:
            with self._write() as c:
                c.execute("INSERT INTO databases VALUES (?, ?, ?, ?)",
                          (db.name.lower(), db.location, db.comment, json.dumps(db.properties)))
        except sqlite3.IntegrityError:
            return False
        return True

    def drop_database(self, name: str, cascade: bool) -> list[CatalogTable] | None:
        """Delete database ``name`` (and, with ``cascade``, its tables, which are returned);
        None when it does not exist. Raises ``ValueError`` when it has tables and not
        ``cascade``."""
        with self._write() as c:
            if not c.execute("SELECT 1 FROM databases WHERE name = ?", (name,)).fetchall():
                return None
            tables = [_table(r) for r in c.execute(
                f"SELECT {', '.join(_COLUMNS)} FROM tables WHERE database = ?", (name,))]
            if tables and not cascade:
                raise ValueError("not empty")
            c.execute("DELETE FROM tables WHERE database = ?", (name,))
            c.execute("DELETE FROM databases WHERE name = ?", (name,))
            return tables

    # -- tables -------------------------------------------------------------------------------
    def get_table(self, database: str, name: str) -> CatalogTable | None:
        rows = self._read(f"SELECT {', '.join(_COLUMNS)} FROM tables WHERE database = ? AND "
                          "key = ?", (database, name.lower()))
        return _table(rows[0]) if rows else None

    def list_tables(self, database: str) -> list[CatalogTable]:
        return [_table(r) for r in self._read(
            f"SELECT {', '.join(_COLUMNS)} FROM tables WHERE database = ? ORDER BY key",
            (database,))]

    def create_table(self, table: CatalogTable) -> bool:
        """Insert ``table``; False when its name is taken. Raises ``LookupError`` when its
        database does not exist."""
        try:
            with self._write() as c:
                if not c.execute("SELECT 1 FROM databases WHERE name = ?",
                                 (table.database,)).fetchall():
                    raise LookupError(table.database)
                c.execute(f"INSERT INTO tables VALUES ({', '.join('?' * len(_COLUMNS))})",
                          _row(table))
        except sqlite3.IntegrityError:
            return False
        return True

    def replace_table(self, table: CatalogTable) -> CatalogTable | None:
        """Store ``table`` in place of the entry of its name (if any, returned)."""
        with self._write() as c:
            if not c.execute("SELECT 1 FROM databases WHERE name = ?",
                             (table.database,)).fetchall():
                raise LookupError(table.database)
            rows = c.execute(f"SELECT {', '.join(_COLUMNS)} FROM tables WHERE database = ? AND "
                             "key = ?", (table.database, table.name.lower())).fetchall()
            c.execute("DELETE FROM tables WHERE database = ? AND key = ?",
                      (table.database, table.name.lower()))
            c.execute(f"INSERT INTO tables VALUES ({', '.join('?' * len(_COLUMNS))})",
                      _row(table))
            return _table(rows[0]) if rows else None

    def alter_table(self, table: CatalogTable, old_name: str | None = None) -> bool:
        """Store ``table``'s new metadata for the entry ``old_name`` (default: its own name);
        False when that entry does not exist or (renaming) the new name is taken."""
        key = (old_name or table.name).lower()
        try:
            with self._write() as c:
                cur = c.execute("DELETE FROM tables WHERE database = ? AND key = ?",
                                (table.database, key))
                if cur.rowcount == 0:
                    return False
                c.execute(f"INSERT INTO tables VALUES ({', '.join('?' * len(_COLUMNS))})",
                          _row(table))
        except sqlite3.IntegrityError:
            return False
        return True

    def drop_table(self, database: str, name: str) -> CatalogTable | None:
        """Delete the entry ``database.name``, returning it (None when there was none)."""
        with self._write() as c:
            rows = c.execute(f"SELECT {', '.join(_COLUMNS)} FROM tables WHERE database = ? AND "
                             "key = ?", (database, name.lower())).fetchall()
            if not rows:
                return None
            c.execute("DELETE FROM tables WHERE database = ? AND key = ?",
                      (database, name.lower()))
            return _table(rows[0])


def _database(row: tuple) -> CatalogDatabase:
    name, location, comment, props = row
    return CatalogDatabase(name, location, comment, json.loads(props))


def _row(t: CatalogTable) -> tuple:
    return (t.database, t.name.lower(), t.name, t.table_type, t.provider,
            schema_to_bytes(t.schema, t.column_comments, t.column_defaults),
            json.dumps(list(t.partition_columns)), t.location, json.dumps(dict(t.options)),
            json.dumps(dict(t.properties)), t.comment, t.view_text, t.view_database,
            t.created_time, json.dumps({"bucket_spec": t.bucket_spec}))


def _table(row: tuple) -> CatalogTable:
    (database, _key, name, table_type, provider, schema, parts, location, options, props,
     comment, view_text, view_database, created, extra) = row
    struct, comments, defaults = schema_from_bytes(schema)
    bucket = json.loads(extra).get("bucket_spec")
    return CatalogTable(database, name, table_type, provider, struct, tuple(json.loads(parts)),
                        location, json.loads(options), json.loads(props), comment, view_text,
                        comments, created, view_database,
                        None if bucket is None else (bucket[0], tuple(bucket[1]),
                                                     tuple(bucket[2])), defaults)
