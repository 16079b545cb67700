"""Catalog commands (DDL): the parsed form of ``CREATE TABLE``, ``DROP TABLE``, ``SHOW TABLES``,
``DESCRIBE DATABASE`` ... (Spark's ``CreateTable``, ``DropTable``, ``ShowTables`` ... logical
commands).  The session runs them against its catalog; each command's ``output`` is the
columns of its result rows, with Spark's names and types.

Names are tuples of name parts as written (``("db", "t")``); ``origin`` is the (line, column)
of the name in the statement, for errors that point at it as Spark's do.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ember import types as T
from ember.expressions.base import AttributeReference
from ember.plans.logical.nodes import Command, LogicalPlan
from ember.trees import node

__all__ = [
    "ColumnDefinition", "CreateTable", "CreateDatabase", "DropDatabase", "UseDatabase",
    "DropTable", "TruncateTable", "RenameTable", "AddColumns", "SetTableProperties",
    "UnsetTableProperties", "ShowTables", "ShowDatabases", "ShowColumns", "ShowCreateTable",
    "ShowTableProperties", "DescribeDatabase", "DescribeColumn", "AddPartitions",
    "DescribePartition", "ShowPartitions", "DropPartitions", "RenamePartition",
    "RecoverPartitions", "SetTableLocation", "AlterColumn",
]

_Pairs = tuple[tuple[str, str], ...]
#: a partition spec: ``(column, value)`` pairs as written, value None for ``NULL``
_Spec = tuple[tuple[str, str | None], ...]


def _str(name: str, nullable: bool = False) -> AttributeReference:
    return AttributeReference(name, T.STRING, nullable)


@dataclass(frozen=True)
class ColumnDefinition:
    """One column of ``CREATE TABLE t (name type [NOT NULL] [COMMENT '...'])``."""

    name: str
    data_type: T.DataType
    nullable: bool = True
    comment: str | None = None
    #: the ``DEFAULT`` expression as written
    default: str | None = None


@node
class CreateTable(Command):
    """``CREATE [OR REPLACE] [EXTERNAL] TABLE [IF NOT EXISTS] name [(columns)] USING provider
    [OPTIONS (...)] [PARTITIONED BY (...)] [LOCATION '...'] [COMMENT '...']
    [TBLPROPERTIES (...)] [AS query]``.  ``columns`` None: no column list (the schema comes from
    the files at ``LOCATION``, or from ``query``).  ``provider`` None: no USING clause."""

    name_parts: tuple[str, ...]
    columns: tuple[ColumnDefinition, ...] | None
    provider: str | None
    options: _Pairs = ()
    partition_columns: tuple[str, ...] = ()
    location: str | None = None
    comment: str | None = None
    properties: _Pairs = ()
    if_not_exists: bool = False
    replace: bool = False
    external: bool = False
    query: LogicalPlan | None = None
    origin: tuple[int, int] | None = field(default=None, compare=False)
    #: ``CLUSTERED BY (cols) [SORTED BY (cols)] INTO n BUCKETS``
    bucket_spec: tuple[int, tuple[str, ...], tuple[str, ...]] | None = None

    def simple_string(self) -> str:
        return f"CreateTable {'.'.join(self.name_parts)}, {self.if_not_exists}"


@node
class CreateDatabase(Command):
    """``CREATE DATABASE|SCHEMA [IF NOT EXISTS] name [COMMENT '...'] [LOCATION '...']
    [WITH DBPROPERTIES (...)]``."""

    name: str
    if_not_exists: bool = False
    location: str | None = None
    comment: str | None = None
    properties: _Pairs = ()


@node
class DropDatabase(Command):
    """``DROP DATABASE|SCHEMA [IF EXISTS] name [RESTRICT|CASCADE]``."""

    name: str
    if_exists: bool = False
    cascade: bool = False


@node
class UseDatabase(Command):
    """``USE [DATABASE|SCHEMA|NAMESPACE] name``."""

    name_parts: tuple[str, ...]


@node
class DropTable(Command):
    """``DROP TABLE [IF EXISTS] name [PURGE]``."""

    name_parts: tuple[str, ...]
    if_exists: bool = False
    origin: tuple[int, int] | None = field(default=None, compare=False)


@node
class TruncateTable(Command):
    """``TRUNCATE TABLE name [PARTITION (k = v, ...)]``."""

    name_parts: tuple[str, ...]
    origin: tuple[int, int] | None = field(default=None, compare=False)
    partition: _Spec | None = None


@node
class RenameTable(Command):
    """``ALTER TABLE|VIEW name RENAME TO new_name``."""

    name_parts: tuple[str, ...]
    new_name_parts: tuple[str, ...]
    is_view: bool = False
    origin: tuple[int, int] | None = field(default=None, compare=False)


@node
class AddColumns(Command):
    """``ALTER TABLE name ADD COLUMN[S] (col type [COMMENT '...'], ...)``."""

    name_parts: tuple[str, ...]
    columns: tuple[ColumnDefinition, ...]
    origin: tuple[int, int] | None = field(default=None, compare=False)


@node
class SetTableProperties(Command):
    """``ALTER TABLE|VIEW name SET TBLPROPERTIES ('k' = 'v', ...)``."""

    name_parts: tuple[str, ...]
    properties: _Pairs
    is_view: bool = False
    origin: tuple[int, int] | None = field(default=None, compare=False)


@node
class UnsetTableProperties(Command):
    """``ALTER TABLE|VIEW name UNSET TBLPROPERTIES [IF EXISTS] ('k', ...)``."""

    name_parts: tuple[str, ...]
    keys: tuple[str, ...]
    if_exists: bool = False
    is_view: bool = False
    origin: tuple[int, int] | None = field(default=None, compare=False)


@node
class AddPartitions(Command):
    """``ALTER TABLE name ADD [IF NOT EXISTS] PARTITION (k = v, ...) ...``."""

    name_parts: tuple[str, ...]
    specs: tuple[_Pairs, ...]
    if_not_exists: bool = False
    origin: tuple[int, int] | None = field(default=None, compare=False)


@node
class ShowTables(Command):
    """``SHOW TABLES [FROM|IN db] [[LIKE] 'pattern']``; ``extended``: ``SHOW TABLE EXTENDED
    [FROM|IN db] LIKE 'pattern' [PARTITION (...)]`` (a fourth column, ``information``)."""

    database: tuple[str, ...] | None = None
    pattern: str | None = None
    extended: bool = False
    partition: _Pairs | None = None

    def _compute_output(self) -> tuple[AttributeReference, ...]:
        out = (_str("namespace"), _str("tableName"),
               AttributeReference("isTemporary", T.BOOLEAN, False))
        return out + (_str("information"),) if self.extended else out


@node
class ShowDatabases(Command):
    """``SHOW DATABASES|SCHEMAS|NAMESPACES [[LIKE] 'pattern']``."""

    pattern: str | None = None

    def _compute_output(self) -> tuple[AttributeReference, ...]:
        return (_str("namespace"),)


@node
class ShowColumns(Command):
    """``SHOW COLUMNS FROM|IN name [FROM|IN db]``."""

    name_parts: tuple[str, ...]
    database: str | None = None
    origin: tuple[int, int] | None = field(default=None, compare=False)

    def _compute_output(self) -> tuple[AttributeReference, ...]:
        return (_str("col_name"),)


@node
class ShowCreateTable(Command):
    """``SHOW CREATE TABLE name [AS SERDE]``."""

    name_parts: tuple[str, ...]
    as_serde: bool = False
    origin: tuple[int, int] | None = field(default=None, compare=False)

    def _compute_output(self) -> tuple[AttributeReference, ...]:
        return (_str("createtab_stmt"),)


@node
class ShowTableProperties(Command):
    """``SHOW TBLPROPERTIES name [('key')]``."""

    name_parts: tuple[str, ...]
    key: str | None = None
    origin: tuple[int, int] | None = field(default=None, compare=False)

    def _compute_output(self) -> tuple[AttributeReference, ...]:
        return (_str("key"), _str("value"))


@node
class DescribeDatabase(Command):
    """``DESCRIBE DATABASE|SCHEMA|NAMESPACE [EXTENDED] name``."""

    name: str
    extended: bool = False

    def _compute_output(self) -> tuple[AttributeReference, ...]:
        return (_str("info_name"), _str("info_value"))


@node
class DescribePartition(Command):
    """``DESCRIBE [TABLE] [EXTENDED] name PARTITION (k = v, ...)``."""

    name_parts: tuple[str, ...]
    spec: _Pairs
    extended: bool = False
    origin: tuple[int, int] | None = field(default=None, compare=False)

    def _compute_output(self) -> tuple[AttributeReference, ...]:
        return (_str("col_name"), _str("data_type"), _str("comment", True))


@node
class DescribeColumn(Command):
    """``DESCRIBE [TABLE] [EXTENDED] name column``."""

    name_parts: tuple[str, ...]
    column: tuple[str, ...]
    extended: bool = False
    origin: tuple[int, int] | None = field(default=None, compare=False)

    def _compute_output(self) -> tuple[AttributeReference, ...]:
        return (_str("info_name"), _str("info_value"))


@node
class ShowPartitions(Command):
    """``SHOW PARTITIONS name [PARTITION (k = v, ...)]`` (Spark's ``ShowPartitionsCommand``)."""

    name_parts: tuple[str, ...]
    spec: _Spec | None = None
    origin: tuple[int, int] | None = field(default=None, compare=False)

    def _compute_output(self) -> tuple[AttributeReference, ...]:
        return (_str("partition"),)


@node
class DropPartitions(Command):
    """``ALTER TABLE name DROP [IF EXISTS] PARTITION (...) [, PARTITION (...)] [PURGE]``."""

    name_parts: tuple[str, ...]
    specs: tuple[_Spec, ...]
    if_exists: bool = False
    origin: tuple[int, int] | None = field(default=None, compare=False)


@node
class RenamePartition(Command):
    """``ALTER TABLE name PARTITION (...) RENAME TO PARTITION (...)``."""

    name_parts: tuple[str, ...]
    old_spec: _Spec
    new_spec: _Spec
    origin: tuple[int, int] | None = field(default=None, compare=False)


@node
class RecoverPartitions(Command):
    """``ALTER TABLE name RECOVER PARTITIONS`` / ``MSCK REPAIR TABLE name [ADD|DROP|SYNC
    PARTITIONS]`` (``operation``: which, for Spark's messages)."""

    name_parts: tuple[str, ...]
    operation: str
    origin: tuple[int, int] | None = field(default=None, compare=False)


@node
class SetTableLocation(Command):
    """``ALTER TABLE name SET LOCATION '...'``."""

    name_parts: tuple[str, ...]
    location: str
    origin: tuple[int, int] | None = field(default=None, compare=False)


@node
class AlterColumn(Command):
    """``ALTER TABLE name ALTER|CHANGE [COLUMN] col [TYPE t] [COMMENT '...'] [SET DEFAULT e |
    DROP DEFAULT]`` and Hive's ``CHANGE [COLUMN] col new_name t [COMMENT '...']`` (Spark's
    ``AlterTableChangeColumnCommand``): ``new_name`` / ``data_type`` None when not given;
    ``default`` the ``SET DEFAULT`` text, ``""`` for ``DROP DEFAULT``; ``not_null``: ``SET
    NOT NULL`` or ``DROP NOT NULL`` was written."""

    name_parts: tuple[str, ...]
    column: str
    new_name: str | None = None
    data_type: T.DataType | None = None
    comment: str | None = None
    default: str | None = None
    not_null: bool = False
    origin: tuple[int, int] | None = field(default=None, compare=False)
