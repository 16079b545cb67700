"""What the persistent catalog stores: databases and tables (Spark's ``CatalogDatabase`` and
``CatalogTable``), and their schemas in a lossless serialized form.

A schema is stored as an Arrow IPC schema (Ember's SQL types map one-to-one to Arrow types, so
``T.from_arrow`` gives the same types back) with each column's comment in the field metadata.

>>> t = CatalogTable("default", "t", "MANAGED", "parquet",
...                  T.StructType((T.StructField("a", T.INT),)), location="/w/t")
>>> schema_from_bytes(schema_to_bytes(t.schema, {"a": "the a"}))[1]
{'a': 'the a'}
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from dataclasses import dataclass, field, replace

import pyarrow as pa

from ember import types as T

__all__ = ["CatalogTable", "CatalogDatabase", "schema_to_bytes", "schema_from_bytes",
           "MANAGED", "EXTERNAL", "VIEW", "DEFAULT_DATABASE", "SESSION_CATALOG"]

MANAGED = "MANAGED"
EXTERNAL = "EXTERNAL"
VIEW = "VIEW"
DEFAULT_DATABASE = "default"
#: Spark's name of the session catalog (``spark_catalog.default.t``)
SESSION_CATALOG = "spark_catalog"

_COMMENT_KEY = b"comment"
_DEFAULT_KEY = b"default"


@dataclass(frozen=True)
class CatalogTable:
    """A table or persistent view of the catalog (Spark's ``CatalogTable``).

    ``schema`` holds all columns, partition columns last (as Spark orders them);
    ``location`` is an absolute directory (None for views); ``view_text`` the SQL text of a
    persistent view, re-analyzed at each use (in ``view_database``, the current database when
    the view was created).  ``column_comments`` maps a column name to its ``COMMENT``."""

    database: str
    name: str
    table_type: str
    provider: str | None
    schema: T.StructType
    partition_columns: tuple[str, ...] = ()
    location: str | None = None
    options: Mapping[str, str] = field(default_factory=dict)
    properties: Mapping[str, str] = field(default_factory=dict)
    comment: str | None = None
    view_text: str | None = None
    column_comments: Mapping[str, str] = field(default_factory=dict)
    #: creation time, seconds since the epoch (``Created Time`` in DESCRIBE EXTENDED)
    created_time: float = field(default_factory=time.time)
    view_database: str | None = None
    #: ``CLUSTERED BY (cols) [SORTED BY (cols)] INTO n BUCKETS``: (n, cols, sort cols)
    bucket_spec: tuple[int, tuple[str, ...], tuple[str, ...]] | None = None
    #: a column's ``DEFAULT`` expression, as written
    column_defaults: Mapping[str, str] = field(default_factory=dict)

    @property
    def is_view(self) -> bool:
        return self.table_type == VIEW

    @property
    def qualified_name(self) -> tuple[str, str, str]:
        """``(spark_catalog, database, name)``: the identifier Spark names the relation by."""
        return (SESSION_CATALOG, self.database, self.name)

    def quoted_name(self) -> str:
        """```spark_catalog`.`db`.`t``` as in Spark's messages."""
        return ".".join(quote(p) for p in self.qualified_name)

    @property
    def data_schema(self) -> T.StructType:
        """The columns that are not partition columns."""
        parts = {p.lower() for p in self.partition_columns}
        return T.StructType(tuple(f for f in self.schema.fields if f.name.lower() not in parts))

    def copy(self, **changes) -> "CatalogTable":  # noqa: ANN003 - the dataclass's fields
        return replace(self, **changes)


@dataclass(frozen=True)
class CatalogDatabase:
    """A database (schema) of the catalog (Spark's ``CatalogDatabase``)."""

    name: str
    location: str
    comment: str | None = None
    properties: Mapping[str, str] = field(default_factory=dict)


def quote(name: str) -> str:
    return "`" + name.replace("`", "``") + "`"


def schema_to_bytes(schema: T.StructType, comments: Mapping[str, str] | None = None,
                    defaults: Mapping[str, str] | None = None) -> bytes:
    """``schema`` (with column comments and defaults) as Arrow IPC schema bytes."""
    comments, defaults = comments or {}, defaults or {}
    fields = []
    for f in schema.fields:
        meta = {}
        if f.name in comments:
            meta[_COMMENT_KEY] = comments[f.name].encode()
        if f.name in defaults:
            meta[_DEFAULT_KEY] = defaults[f.name].encode()
        fields.append(pa.field(f.name, f.data_type.to_arrow(), f.nullable, metadata=meta or None))
    return pa.schema(fields).serialize().to_pybytes()


def schema_from_bytes(data: bytes) -> tuple[T.StructType, dict[str, str], dict[str, str]]:
    """The inverse of :func:`schema_to_bytes`: the schema, column comments and defaults."""
    arrow = pa.ipc.read_schema(pa.py_buffer(data))
    fields, comments, defaults = [], {}, {}
    for f in arrow:
        fields.append(T.StructField(f.name, T.from_arrow(f.type), f.nullable))
        meta = f.metadata or {}
        if _COMMENT_KEY in meta:
            comments[f.name] = meta[_COMMENT_KEY].decode()
        if _DEFAULT_KEY in meta:
            defaults[f.name] = meta[_DEFAULT_KEY].decode()
    return T.StructType(tuple(fields)), comments, defaults
