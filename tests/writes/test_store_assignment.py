"""Store assignment (``ember.analysis.table_insertion``) at analysis level, against a table
description built in the test: the plan an insert writes and the errors Spark raises (classes and
parameters as PySpark 4.3 reports them; ``test_insert_vs_spark.py`` compares whole inserts with
PySpark)."""

from __future__ import annotations

from dataclasses import dataclass

import pytest

from ember import Session
from ember import types as T
from ember.analysis.table_insertion import (can_ansi_store_assign, can_up_cast, prepare_insert)
from ember.errors import AnalysisError, ArithmeticError_, ParseError
from ember.expressions.cast import CheckOverflowInTableInsert
from ember.query_execution import QueryExecution
from ember.sql import parse_statement
from tests.local_run import run_plan


@dataclass(frozen=True)
class Table:
    """What ``prepare_insert`` reads of a catalog table."""

    name: str
    schema: T.StructType
    partition_columns: tuple[str, ...] = ()

    def quoted_name(self) -> str:
        return f"`spark_catalog`.`default`.`{self.name}`"


def _schema(*cols: tuple[str, T.DataType]) -> T.StructType:
    return T.StructType(tuple(T.StructField(n, t) for n, t in cols))


T1 = Table("t1", _schema(("a", T.INT), ("b", T.STRING), ("c", T.DOUBLE)))
T6 = Table("t6", _schema(("a", T.INT), ("p", T.INT), ("q", T.STRING)), ("p", "q"))


def _prepare(session: Session, table: Table, sql: str):
    stmt = parse_statement(sql)
    query = QueryExecution(session, stmt.query).analyzed
    return prepare_insert(table, query, session.sql_conf, partition_spec=stmt.partition_spec,
                          user_columns=stmt.user_specified_cols, by_name=stmt.by_name)


@pytest.fixture
def session() -> Session:
    return Session()


def _error(session, table, sql) -> AnalysisError:
    with pytest.raises(AnalysisError) as info:
        _prepare(session, table, sql)
    return info.value


def test_by_position_casts_and_renames(session: Session) -> None:
    prepared = _prepare(session, T1, "INSERT INTO t1 SELECT 1, 'x', 2")
    out = prepared.query.output
    assert [a.name for a in out] == ["a", "b", "c"]
    assert [a.data_type for a in out] == [T.INT, T.STRING, T.DOUBLE]
    assert run_plan(prepared.query).to_pylist() == [{"a": 1, "b": "x", "c": 2.0}]


def test_overflow_is_checked_per_column(session: Session) -> None:
    prepared = _prepare(session, T1, "INSERT INTO t1 SELECT 3000000000L, 'x', 1.5")
    check = prepared.query.expressions()[0].child
    assert isinstance(check, CheckOverflowInTableInsert) and check.column_name == "`a`"
    with pytest.raises(ArithmeticError_) as info:
        run_plan(prepared.query)
    assert info.value.error_class == "CAST_OVERFLOW_IN_TABLE_INSERT"
    assert info.value.parameters == {"sourceType": '"BIGINT"', "targetType": '"INT"',
                                     "columnName": "`a`"}


@pytest.mark.parametrize("sql, error_class, params", [
    ("INSERT INTO t1 VALUES (1, 'x')", "INSERT_COLUMN_ARITY_MISMATCH.NOT_ENOUGH_DATA_COLUMNS",
     {"tableColumns": "`a`, `b`, `c`", "dataColumns": "`col1`, `col2`"}),
    ("INSERT INTO t1 VALUES (1, 'x', 2.0, 4)",
     "INSERT_COLUMN_ARITY_MISMATCH.TOO_MANY_DATA_COLUMNS",
     {"tableColumns": "`a`, `b`, `c`", "dataColumns": "`col1`, `col2`, `col3`, `col4`"}),
    ("INSERT INTO t1 VALUES ('abc', 'x', 1.0)", "INCOMPATIBLE_DATA_FOR_TABLE.CANNOT_SAFELY_CAST",
     {"colName": "`a`", "srcType": '"STRING"', "targetType": '"INT"'}),
    ("INSERT INTO t1 BY NAME SELECT 1 AS c, 'y' AS b, 2 AS zz",
     "INCOMPATIBLE_DATA_FOR_TABLE.EXTRA_COLUMNS", {"extraColumns": "`zz`"}),
    ("INSERT INTO t1 BY NAME SELECT 1 AS a, 'y' AS b, 2 AS A",
     "INCOMPATIBLE_DATA_FOR_TABLE.AMBIGUOUS_COLUMN_NAME", {"colName": "`a`"}),
    ("INSERT INTO t1 (a, a, c) VALUES (1, 1, 2.0)", "COLUMN_ALREADY_EXISTS",
     {"columnName": "`a`"}),
    ("INSERT INTO t1 (a, b) SELECT 1", "INSERT_COLUMN_ARITY_MISMATCH.NOT_ENOUGH_DATA_COLUMNS",
     {"tableColumns": "`a`, `b`", "dataColumns": "`1`"}),
    ("INSERT INTO t1 (a, z) VALUES (1, 2.0)", "UNRESOLVED_COLUMN.WITH_SUGGESTION",
     {"objectName": "`z`"}),
])
def test_errors(session: Session, sql: str, error_class: str, params: dict) -> None:
    err = _error(session, T1, sql)
    assert err.error_class == error_class
    assert {k: err.parameters[k] for k in params} == params
    if "tableName" in err.parameters:
        assert err.parameters["tableName"] == "`spark_catalog`.`default`.`t1`"


def test_by_name_fills_missing_columns_with_null(session: Session) -> None:
    prepared = _prepare(session, T1, "INSERT INTO t1 BY NAME SELECT 1 AS c, 'y' AS b")
    assert run_plan(prepared.query).to_pylist() == [{"a": None, "b": "y", "c": 1.0}]
    prepared = _prepare(session, T1, "INSERT INTO t1 (c, a) VALUES (2.5, 7)")
    assert run_plan(prepared.query).to_pylist() == [{"a": 7, "b": None, "c": 2.5}]


def test_policies(session: Session) -> None:
    session.conf.set("spark.sql.storeAssignmentPolicy", "STRICT")
    assert _error(session, T1, "INSERT INTO t1 SELECT 1L, 'x', 2.0").parameters["srcType"] \
        == '"BIGINT"'
    assert _error(session, T1, "INSERT INTO t1 SELECT null, 'x', 2.0").parameters["srcType"] \
        == '"VOID"'
    _prepare(session, T1, "INSERT INTO t1 SELECT 1, 'x', 2.0f")
    session.conf.set("spark.sql.storeAssignmentPolicy", "LEGACY")
    prepared = _prepare(session, T1, "INSERT INTO t1 VALUES ('abc', 'x', 1.0)")
    assert run_plan(prepared.query).to_pylist() == [{"a": None, "b": "x", "c": 1.0}]
    prepared = _prepare(session, T1, "INSERT INTO t1 VALUES (3000000000, 'y', 2)")
    assert run_plan(prepared.query).to_pylist() == [{"a": -1294967296, "b": "y", "c": 2.0}]


def test_static_and_dynamic_partitions(session: Session) -> None:
    prepared = _prepare(session, T6, "INSERT INTO t6 PARTITION (p = '5', q) SELECT 1, 'x'")
    assert prepared.static_partitions == (("p", "5"),)
    assert run_plan(prepared.query).to_pylist() == [{"a": 1, "p": 5, "q": "x"}]
    prepared = _prepare(session, T6, "INSERT INTO t6 PARTITION (P = 6, Q) SELECT 1, 2")
    assert run_plan(prepared.query).to_pylist() == [{"a": 1, "p": 6, "q": "2"}]
    prepared = _prepare(session, T6, "INSERT INTO t6 PARTITION (p = 9, q = 'k') (a) VALUES (9)")
    assert prepared.static_partitions == (("p", "9"), ("q", "k"))
    assert run_plan(prepared.query).to_pylist() == [{"a": 9, "p": 9, "q": "k"}]


@pytest.mark.parametrize("sql, error_class", [
    ("INSERT INTO t6 PARTITION (p = 1) SELECT 1, 'x'", "_LEGACY_ERROR_TEMP_1169"),
    ("INSERT INTO t6 PARTITION (p, q = 'x') SELECT 1, 2", "_LEGACY_ERROR_TEMP_1147"),
    ("INSERT INTO t6 PARTITION (p = 1, z) SELECT 1, 2", "PARTITIONS_NOT_FOUND"),
    ("INSERT INTO t6 PARTITION (p = 1, q) SELECT 1, 2, 3",
     "INSERT_PARTITION_COLUMN_ARITY_MISMATCH"),
])
def test_partition_errors(session: Session, sql: str, error_class: str) -> None:
    assert _error(session, T6, sql).error_class == error_class


def test_parse_errors() -> None:
    for sql, cls in [("INSERT INTO t PARTITION (p = 1, p = 2) SELECT 1", "DUPLICATE_KEY"),
                     ("INSERT INTO t IF NOT EXISTS SELECT 1", "_LEGACY_ERROR_TEMP_0035"),
                     ("INSERT OVERWRITE t PARTITION (p) IF NOT EXISTS SELECT 1",
                      "_LEGACY_ERROR_TEMP_0035"),
                     ("INSERT INTO t", "PARSE_SYNTAX_ERROR")]:
        with pytest.raises(ParseError) as info:
            parse_statement(sql)
        assert info.value.error_class == cls, sql


def test_cast_rules() -> None:
    assert can_ansi_store_assign(T.LONG, T.INT) and not can_up_cast(T.LONG, T.INT)
    assert can_ansi_store_assign(T.DATE, T.STRING) and not can_ansi_store_assign(T.STRING, T.INT)
    assert can_up_cast(T.INT, T.DecimalType(10, 0)) and not can_up_cast(T.INT, T.DecimalType(9, 0))
    assert can_up_cast(T.DecimalType(5, 2), T.DecimalType(6, 2))
    assert not can_up_cast(T.DecimalType(2, 1), T.DOUBLE)
    assert not can_ansi_store_assign(T.BOOLEAN, T.INT)
