"""``Session``: the entry point (PySpark's ``SparkSession`` for the local runtime).

A session owns the configuration (:class:`ember.conf.SQLConf`) and the catalog of temporary views.
``sql()`` parses one statement; commands (CREATE VIEW, CREATE TEMP VIEW ... USING, DROP VIEW, SET,
EXPLAIN, DESCRIBE) run at once and return their result rows, queries return a lazily executed
(but eagerly analyzed) :class:`~ember.dataframe.DataFrame`.

>>> import ember
>>> spark = ember.Session()
>>> spark.sql("SELECT 1 AS a").collect()
[Row(a=1)]
>>> spark = ember.Session.builder.config("spark.sql.shuffle.partitions", 4).getOrCreate()
"""

from __future__ import annotations

import datetime as _dt
import os
import threading
from collections.abc import Iterable, Sequence
from decimal import Decimal
from typing import Any

import pyarrow as pa

from ember import types as T
from ember.analysis.catalog import Catalog
from ember.analyze_table import analyze_table
from ember.catalog_api import CatalogAPI
from ember.catalog_commands import (
    ember_version,
    CATALOG_COMMANDS, check_provider, create_persistent_view, describe_relation_rows, drop_view,
    run_catalog_command, table_resolver,
)
from ember.conf import (
    CATALOG_IMPLEMENTATION, SETOPS_PRECEDENCE_LEGACY, TIMESTAMP_TYPE, STATIC_KEYS, WAREHOUSE_DIR, SQLConf,
)
from ember.dataframe import DataFrame
from ember.errors import AnalysisError, UnsupportedError
from ember.explain_describe import explain_describe, is_describe
from ember.guard import run_stage
from ember.pyspark_api import missing_attribute
from ember.cache_manager import CacheManager
from ember.sql_parameters import SQLStringFormatter, bind_parameters
from ember.execution.auto_statistics import AutoStatistics
from ember.expressions.base import Alias, AttributeReference
from ember.plans.logical.writes import InsertIntoHadoopFsRelationCommand
from ember.plans.logical.nodes import (
    Command, CreateTempViewUsing, CreateViewCommand, DescribeRelation, AnalyzeTableCommand,
    DropView, ExplainCommand, LocalRelation, LogicalPlan, Range, SetCommand, UnresolvedRelation,
    SparkDataFrameRelation, OneRowRelation, Project,
)
from ember.query_execution import QueryExecution
from ember.readers import DataFrameReader, file_relation
from ember.row import Row
from ember.column import parse_column_name
from ember.sql import parse_statement, parse_data_type
from ember.sql.schema_ddl import parse_ddl_schema
from ember.sql.datatypes import TIMESTAMP_IS_NTZ
from ember.table_writes import create_table_as_select, run_insert
from ember.udf import UDFRegistration
from ember.udtf import UDTFRegistration
from ember.tvf import TableValuedFunction
from ember.plans.logical.ddl import CreateTable
from ember.plans.logical.insert import InsertIntoStatement
from ember.streaming.api import DataStreamReader, StreamingQueryManager

__all__ = ["Session", "RuntimeConfig", "SessionCatalogAPI"]

#: ``session.catalog``'s class (PySpark's ``Catalog``), in :mod:`ember.catalog_api`
SessionCatalogAPI = CatalogAPI

_active_lock = threading.Lock()
_active: "Session | None" = None


# ---------------------------------------------------------------------------------------------
# PySpark-shaped helpers: spark.conf, spark.catalog, SparkSession.builder


class RuntimeConfig:
    """``session.conf``: string-valued get/set over the session's :class:`SQLConf`.

    >>> spark.conf.set("spark.sql.caseSensitive", True)              # doctest: +SKIP
    >>> spark.conf.get("spark.sql.caseSensitive")                    # doctest: +SKIP
    'true'
    """

    def __init__(self, conf: SQLConf) -> None:
        self._conf = conf

    def set(self, key: str, value: Any) -> None:
        check_static(key)
        self._conf.set(key, value)

    def get(self, key: str, default: Any = None) -> Any:
        v = self._conf.get_string(key)
        return default if v is None else v

    def unset(self, key: str) -> None:
        self._conf.unset(key)

    @property
    def getAll(self) -> dict[str, str]:  # noqa: N802
        """The settings set in this session (PySpark 4's ``RuntimeConfig.getAll``, a property)."""
        return dict(self._conf.items())

    def isModifiable(self, key: str) -> bool:  # noqa: N802
        return True


def check_static(key: str) -> None:
    """Spark's ``CANNOT_MODIFY_STATIC_CONFIG``: a static key is fixed once the session runs."""
    if key in STATIC_KEYS:
        raise AnalysisError(
            f'Cannot modify the value of the static Spark config: "{key}".',
            error_class="CANNOT_MODIFY_STATIC_CONFIG", parameters={"key": f'"{key}"'})


class Builder:
    """``Session.builder.config(k, v).getOrCreate()`` (``appName``/``master`` are accepted and
    ignored: Ember always runs in-process)."""

    def __init__(self) -> None:
        self._options: dict[str, Any] = {}

    def config(self, key: str | None = None, value: Any = None, conf: Any = None,
               *, map: dict[str, Any] | None = None) -> "Builder":  # noqa: A002
        if key is not None:
            self._options[key] = value
        for source in (conf, map):
            if source is not None:
                items = source.getAll() if hasattr(source, "getAll") else dict(source).items()
                for k, v in items:
                    self._options[k] = v
        return self

    def appName(self, name: str) -> "Builder":  # noqa: N802
        return self

    def master(self, master: str) -> "Builder":
        return self

    def enableHiveSupport(self) -> "Builder":  # noqa: N802
        """A persistent catalog (``spark.sql.catalogImplementation=hive``, Ember's default):
        Ember's own metastore in the warehouse, not a Hive metastore."""
        self._options[CATALOG_IMPLEMENTATION.key] = "hive"
        return self

    def getOrCreate(self) -> "Session":  # noqa: N802
        """The active session with this builder's options applied, or a new one."""
        with _active_lock:
            if _active is not None:
                for k, v in self._options.items():
                    _active.sql_conf.set(k, v)
                return _active
        return Session(self._options)

    create = getOrCreate


class _BuilderDescriptor:
    def __get__(self, obj: Any, owner: Any) -> Builder:
        return Builder()


# ---------------------------------------------------------------------------------------------


class Session:
    """A local Ember session: ``ember.Session(conf={...})`` or ``Session.builder...getOrCreate()``.

    >>> spark = Session({"ember.execution.batchSize": 1024})
    >>> spark.createDataFrame([(1, "a")], "id int, name string").show()   # doctest: +SKIP
    """

    builder = _BuilderDescriptor()
    #: PySpark's ``SparkSession.Builder`` (``Session.Builder().getOrCreate()``)
    Builder = Builder

    def __init__(self, conf: dict[str, Any] | None = None, *, runtime: str = "local",
                 master: str | None = None, spark: Any = None) -> None:
        global _active
        if runtime not in ("local", "spark"):
            raise ValueError(f"runtime must be 'local' or 'spark', not {runtime!r}")
        #: ``"local"`` (in process) or ``"spark"`` (plans run on a SparkSession)
        self.runtime = runtime
        self.sql_conf = SQLConf(conf)
        # Spark's static SharedState settings: the warehouse resolved once, at session start
        warehouse = os.path.abspath(os.path.expanduser(self.sql_conf.get(WAREHOUSE_DIR)))
        self._spark: Any = None
        if runtime == "spark":
            # imported here so that pyspark loads only when the Spark runtime runs
            from ember.runtime.spark.session import attach

            self._spark = attach(self.sql_conf, master, spark)
        self.session_catalog = Catalog(
            AutoStatistics(), warehouse=warehouse,
            persistent=self.sql_conf.get(CATALOG_IMPLEMENTATION) == "hive",
            resolver=table_resolver(self))
        self.sql_conf.table_statistics = self.session_catalog.table_statistics
        #: cached DataFrames (``df.cache()``; :mod:`ember.cache_manager`)
        self.cache_manager = CacheManager()
        self.conf = RuntimeConfig(self.sql_conf)
        self.catalog = CatalogAPI(self)
        #: ``spark.udf``: registers Python functions for SQL
        self.udf = UDFRegistration(self)
        #: ``spark.udtf``: registers Python table functions for SQL
        self.udtf = UDTFRegistration(self)
        #: ``spark.tvf``: Spark's table-valued functions as DataFrames
        self.tvf = TableValuedFunction(self)
        with _active_lock:
            _active = self

    # -- lifecycle ----------------------------------------------------------------------------
    @classmethod
    def getActiveSession(cls) -> "Session | None":  # noqa: N802
        return _active

    @classmethod
    def active(cls) -> "Session":
        return _active if _active is not None else Session()

    @property
    def spark_session(self) -> Any:
        """The SparkSession the Spark runtime runs on (None on the local runtime)."""
        return self._spark

    def stop(self) -> None:
        """Forget this session as the active one (there are no resources to free)."""
        global _active
        with _active_lock:
            if _active is self:
                _active = None

    def __enter__(self) -> "Session":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.stop()

    def newSession(self) -> "Session":  # noqa: N802
        """A session with its own configuration and temporary views, on the same warehouse
        (and, with the Spark runtime, the same SparkSession)."""
        static = {WAREHOUSE_DIR.key: self.session_catalog.warehouse,
                  CATALOG_IMPLEMENTATION.key: self.sql_conf.get_string(CATALOG_IMPLEMENTATION.key)}
        if self.runtime == "spark":
            return Session(static, runtime="spark", spark=self._spark)
        return Session(static)

    def __getattr__(self, name: str) -> Any:
        if name.startswith("_"):
            raise AttributeError(name)
        raise missing_attribute("SparkSession", "Session", name)

    def _dataframe(self, plan: Any) -> DataFrame:
        """A DataFrame of this session over the logical ``plan``."""
        return DataFrame(self, plan)

    @property
    def version(self) -> str:
        return ember_version()

    # -- SQL ----------------------------------------------------------------------------------
    def sql(self, sqlQuery: str, args: Any = None, **kwargs: Any) -> DataFrame:  # noqa: N803
        """Run one SQL statement: commands run now; a query returns its DataFrame.

        >>> Session().sql("SELECT 1 + 1 AS two").first().two
        2
        """
        if kwargs:  # PySpark's SQLStringFormatter: {df} a temporary view, {col} a column
            formatter = SQLStringFormatter(self)
            try:
                return self.sql(formatter.format(sqlQuery, **kwargs), args)
            finally:
                formatter.clear()
        if args is not None:
            sqlQuery = bind_parameters(sqlQuery, args, self._parameter_sql)
        return run_stage("statement", lambda: self._sql(sqlQuery), sqlQuery)

    def _sql(self, sqlQuery: str) -> DataFrame:  # noqa: N803
        token = TIMESTAMP_IS_NTZ.set(self.sql_conf.get(TIMESTAMP_TYPE) == "TIMESTAMP_NTZ")
        try:
            plan = parse_statement(
                sqlQuery,
                legacy_setops_precedence=bool(self.sql_conf.get(SETOPS_PRECEDENCE_LEGACY)),
                time_zone=self.sql_conf.time_zone,
            )
        finally:
            TIMESTAMP_IS_NTZ.reset(token)
        if isinstance(plan, CATALOG_COMMANDS) and not (
                isinstance(plan, CreateTable) and plan.query is not None):  # CTAS: a write
            return self._command_result(plan, run_catalog_command(self, plan))
        if isinstance(plan, Command):
            return self._run_command(plan)
        df = DataFrame(self, plan)
        df._qe.sql_text = sqlQuery  # named by an internal error in a later action
        return df

    def _parameter_sql(self, value: Any) -> str:
        """The SQL of a Column bound to a parameter marker (resolved, so functions print as
        Spark prints them: ``array(1)``)."""
        project = DataFrame(self, Project((Alias(value.expr, "v"),), OneRowRelation())).plan
        return project.project_list[0].child.sql()

    def _run_command(self, plan: Command) -> DataFrame:
        match plan:
            case InsertIntoStatement():
                run_insert(self, plan)
                return self._command_result(plan, [])
            case CreateTable(query=LogicalPlan()):
                create_table_as_select(self, plan)
                return self._command_result(plan, [])
            case CreateViewCommand(temporary=False):
                create_persistent_view(self, plan)
                return self._command_result(plan, [])
            case CreateViewCommand(global_temp=True):
                analyzed = QueryExecution(self, plan.query).analyzed
                self.session_catalog.create_global_temp_view(
                    plan.name, analyzed, plan.replace, plan.user_columns, plan.if_not_exists)
                return self._command_result(plan, [])
            case CreateViewCommand(name=name, query=query, user_columns=cols, replace=replace,
                                   temporary=temporary, if_not_exists=if_not_exists):
                analyzed = QueryExecution(self, query).analyzed
                self.session_catalog.create_temp_view(
                    name, analyzed, replace, cols, temporary=temporary,
                    if_not_exists=if_not_exists,
                )
                return self._command_result(plan, [])
            case CreateTempViewUsing(name=name, provider=provider, options=options,
                                     replace=replace, schema=schema):
                opts = {k.lower(): v for k, v in options}
                paths = opts.pop("path", None) or opts.pop("paths", None)
                check_provider(provider)
                if paths is None and schema is None:
                    raise AnalysisError(
                        f"Unable to infer schema for {provider}: no 'path' option was given.",
                        error_class="UNABLE_TO_INFER_SCHEMA",
                        parameters={"format": provider},
                    )
                path_list = [] if paths is None else [p.strip() for p in paths.split(",")] \
                    if "paths" in dict(options) else [paths]
                rel = file_relation(provider, path_list, opts, schema, conf=self.sql_conf)
                self.session_catalog.create_temp_view(name, rel, replace)
                return self._command_result(plan, [])
            case DropView():
                drop_view(self, plan)
                return self._command_result(plan, [])
            case SetCommand(verbose=True):
                return self._command_result(plan, self.sql_conf.describe())
            case SetCommand(key=None):
                rows = [(k, v) for k, v in self.sql_conf.items()]
                return self._command_result(plan, rows)
            case SetCommand(key=key, value=None):
                v = self.sql_conf.get_string(key)
                return self._command_result(plan, [(key, "<undefined>" if v is None else v)])
            case SetCommand(key=key, value=value):
                check_static(key)
                self.sql_conf.set(key, value)
                return self._command_result(plan, [(key, value)])
            case ExplainCommand(query=query, mode=mode):
                if isinstance(query, Command) and is_describe(query):
                    text = explain_describe(self, query, mode)
                elif isinstance(query, Command) and not isinstance(
                        query, (InsertIntoHadoopFsRelationCommand, InsertIntoStatement)):
                    text = "== Physical Plan ==\nExecutedCommand\n   +- " + query.simple_string() \
                        + "\n"
                else:
                    text = QueryExecution(self, query).explain_string(mode)
                return self._command_result(plan, [(text,)])
            case AnalyzeTableCommand(name_parts=parts, no_scan=no_scan, columns=columns,
                                     all_columns=all_columns):
                analyze_table(self, parts, no_scan=no_scan, columns=columns,
                              all_columns=all_columns)
                return self._command_result(plan, [])
            case DescribeRelation():
                return self._command_result(plan, describe_relation_rows(self, plan))
            case _:
                raise UnsupportedError(f"The command {plan.node_name} is not supported yet")

    def _command_result(self, plan: Command, rows: list[tuple[Any, ...]]) -> DataFrame:
        """A command's result rows as a DataFrame over a LocalRelation."""
        attrs = plan.output
        schema = T.arrow_schema([a.name for a in attrs], [a.data_type for a in attrs])
        columns = [pa.array([r[i] for r in rows], type=f.type) for i, f in enumerate(schema)]
        table = pa.Table.from_arrays(columns, schema=schema) if attrs else pa.table({})
        return DataFrame(self, LocalRelation(attrs, table))

    # -- DataFrames ---------------------------------------------------------------------------
    @property
    def read(self) -> DataFrameReader:
        """A reader for Parquet and CSV files."""
        return DataFrameReader(self)

    @property
    def readStream(self) -> Any:  # noqa: N802
        """A reader of streams (:class:`ember.streaming.api.DataStreamReader`):
        ``spark.readStream.schema("k int").json("/in")``."""

        return DataStreamReader(self)

    @property
    def streams(self) -> Any:
        """The session's streaming queries (:class:`ember.streaming.api.StreamingQueryManager`)."""
        with _active_lock:
            manager = getattr(self, "_streams", None)
            if manager is None:
                manager = self._streams = StreamingQueryManager(self)
            return manager

    def emptyDataFrame(self, schema: Any) -> DataFrame:  # noqa: N802
        """An empty DataFrame with ``schema`` (a DDL string or a StructType)."""
        return self.createDataFrame([], schema)

    def table(self, tableName: str) -> DataFrame:  # noqa: N803
        """The temporary view, or persistent table or view, ``tableName`` as a DataFrame."""

        return DataFrame(self, UnresolvedRelation(parse_column_name(tableName)))

    def range(self, start: int, end: int | None = None, step: int = 1,
              numPartitions: int | None = None) -> DataFrame:  # noqa: N803
        """One ``id bigint`` column: ``range(3)`` -> 0, 1, 2 (as Spark's ``spark.range``), a lazy
        ``Range`` leaf whose rows are generated batch by batch when the query runs."""
        if end is None:
            start, end = 0, start
        if step == 0:
            raise AnalysisError("The step of a range must not be 0.",
                                error_class="INVALID_PARAMETER_VALUE.RANGE_STEP",
                                parameters={"parameter": "`step`", "functionName": "`range`"})
        attr = AttributeReference("id", T.LONG, False)
        return DataFrame(self, Range(int(start), int(end), int(step),
                                     None if numPartitions is None else int(numPartitions),
                                     (attr,)))

    def createDataFrame(self, data: Any, schema: Any = None,  # noqa: N802
                        samplingRatio: float | None = None,  # noqa: N803
                        verifySchema: bool = True) -> DataFrame:  # noqa: N803
        """A DataFrame from local data.

        ``data``: a pyarrow Table/RecordBatch, a pandas DataFrame, or a list of tuples, dicts or
        Rows. ``schema``: None (inferred: int -> bigint, float -> double, str -> string, bool,
        Decimal -> decimal(38,18), date, datetime -> timestamp), a list of column names, a DDL
        string (``"a int, b string"``), an ember ``StructType`` or a PySpark one (its types
        converted, nested ones too; a type Ember lacks raises ``UNSUPPORTED_DATATYPE``).

        >>> Session().createDataFrame([(1, "x")], ["id", "s"]).dtypes
        [('id', 'bigint'), ('s', 'string')]

        ``data`` may also be a PySpark DataFrame (``schema`` must then be None): the result reads
        it when the query runs, as part of the Spark job on the Spark runtime (collected to the
        driver on the local runtime), so Ember can sit in the middle of a PySpark pipeline:

        >>> ember_session.createDataFrame(spark.range(3)).createOrReplaceTempView("r")  # doctest: +SKIP
        """
        if _is_pyspark_dataframe(data):
            return DataFrame(self, spark_dataframe_relation(data, schema))
        # PySpark infers naive datetimes as TIMESTAMP_NTZ under spark.sql.timestampType
        token = TIMESTAMP_IS_NTZ.set(self.sql_conf.get(TIMESTAMP_TYPE) == "TIMESTAMP_NTZ")
        try:
            table = _to_arrow_table(data, schema, self.sql_conf.time_zone)
        finally:
            TIMESTAMP_IS_NTZ.reset(token)
        attrs = tuple(
            AttributeReference(f.name, T.from_arrow(f.type), f.nullable) for f in table.schema
        )
        # Spark plans Python rows as a LogicalRDD of unknown size (never broadcast), pandas and
        # Arrow data as a LocalRelation: the statistics follow (ember.plans.logical.statistics).
        return DataFrame(self, LocalRelation(attrs, table, unknown_size=_from_rows(data)))


# ---------------------------------------------------------------------------------------------
# createDataFrame: local data -> an Arrow table typed like Ember's columns


def _is_pyspark_dataframe(data: Any) -> bool:
    """Whether ``data`` is a PySpark DataFrame (without importing pyspark when it is not loaded:
    then it cannot be one)."""
    import sys

    module = sys.modules.get("pyspark.sql.dataframe")
    return module is not None and isinstance(data, module.DataFrame)


def spark_dataframe_relation(frame: Any, schema: Any = None) -> Any:
    """A ``SparkDataFrameRelation`` over a classic PySpark DataFrame: one attribute per column,
    with Spark's names, nullability and types (each field's ``dataType.simpleString()`` parsed
    as Ember parses DDL types)."""
    import sys


    if schema is not None:
        raise UnsupportedError("createDataFrame(pyspark DataFrame) takes no schema: the "
                               "DataFrame's own schema is used")
    classic = sys.modules.get("pyspark.sql.classic.dataframe")
    if classic is None or not isinstance(frame, classic.DataFrame):
        raise UnsupportedError("Only classic PySpark DataFrames (not Spark Connect) can be "
                               "used as Ember tables")
    attrs = []
    for f in frame.schema.fields:
        type_text = f.dataType.simpleString()
        try:
            dtype = parse_data_type(type_text)
        except Exception as e:  # noqa: BLE001 - a Spark type Ember does not have
            raise UnsupportedError(
                f"The column {f.name!r} of the PySpark DataFrame has the type {type_text}, "
                f"which Ember does not support", error_class="UNSUPPORTED_DATATYPE",
                parameters={"typeName": type_text}) from e
        attrs.append(AttributeReference(f.name, dtype, bool(f.nullable)))
    return SparkDataFrameRelation(tuple(attrs), frame)


def _from_rows(data: Any) -> bool:
    """Whether createDataFrame's ``data`` are Python rows (not a pandas or Arrow table)."""
    if isinstance(data, (pa.Table, pa.RecordBatch)):
        return False
    try:
        import pandas as pd
    except ImportError:  # pragma: no cover - pandas is a dependency
        return True
    return not isinstance(data, pd.DataFrame)


def _canonical(table: pa.Table, time_zone: str, naive_is_local: bool = True) -> pa.Table:
    """Cast every column to the Arrow type of its SQL type (large_string, timestamp[us, UTC] ...).
    Naive timestamps are wall-clock times in the session time zone, as PySpark reads them."""
    import pyarrow.compute as pc

    cols, fields = [], []
    for f, col in zip(table.schema, table.columns):
        if pa.types.is_dictionary(f.type):
            col = col.cast(f.type.value_type)
        if pa.types.is_timestamp(col.type) and col.type.tz is None and naive_is_local:
            col = pc.assume_timezone(col, time_zone)
        st = T.from_arrow(col.type)
        target = st.to_arrow()
        if col.type != target:
            col = col.cast(target)
        cols.append(col)
        fields.append(pa.field(f.name, target, nullable=f.nullable))
    return pa.Table.from_arrays(cols, schema=pa.schema(fields))


def _infer_type(v: Any) -> T.DataType:
    if v is None:
        return T.NULL
    if isinstance(v, bool):
        return T.BOOLEAN
    if isinstance(v, int):
        return T.LONG
    if isinstance(v, float):
        return T.DOUBLE
    if isinstance(v, str):
        return T.STRING
    if isinstance(v, Decimal):
        return T.DecimalType(38, 18)
    if isinstance(v, _dt.datetime):
        return T.TIMESTAMP_NTZ if v.tzinfo is None and TIMESTAMP_IS_NTZ.get() else T.TIMESTAMP
    if isinstance(v, _dt.date):
        return T.DATE
    if isinstance(v, _dt.timedelta):
        return T.DayTimeIntervalType(0, 3)  # PySpark: interval day to second
    if isinstance(v, (bytes, bytearray)):
        return T.BINARY
    if isinstance(v, Row) and "__fields__" in v.__dict__:
        return T.StructType(tuple(T.StructField(n, _infer_type(x)) for n, x in
                                  zip(v.__fields__, v)))
    if isinstance(v, dict):
        # PySpark infers a dict as a MAP (spark.sql.pyspark.inferNestedDictAsStruct.enabled
        # is false by default); key and value types merge over all entries
        kt: T.DataType = T.NULL
        vt: T.DataType = T.NULL
        for k, x in v.items():
            kt = _merge_types(kt, _infer_type(k), "key")
            vt = _merge_types(vt, _infer_type(x), "value")
        return T.MapType(kt, vt)
    if isinstance(v, (list, tuple)):
        elem: T.DataType = T.NULL
        for x in v:
            elem = _merge_types(elem, _infer_type(x), "element")
        return T.ArrayType(elem)
    raise AnalysisError(
        f"Unable to infer the type of the field {v!r} ({type(v).__name__}).",
        error_class="CANNOT_INFER_TYPE_FOR_FIELD",
        parameters={"field_name": repr(v)},
    )


def _merge_types(a: T.DataType, b: T.DataType, name: str) -> T.DataType:
    """PySpark's ``_merge_type``: NULL merges with anything, an atomic type with string gives
    string, arrays/structs merge element- and field-wise; other different types fail (also
    bigint with double, as in PySpark)."""
    if isinstance(a, T.NullType):
        return b
    if isinstance(b, T.NullType) or a == b:
        return a
    atomic = (T.AtomicType,)
    if isinstance(a, atomic) and isinstance(b, T.StringType):
        return b
    if isinstance(a, T.StringType) and isinstance(b, atomic):
        return a
    if isinstance(a, T.ArrayType) and isinstance(b, T.ArrayType):
        return T.ArrayType(_merge_types(a.element_type, b.element_type, f"element in {name}"))
    if isinstance(a, T.MapType) and isinstance(b, T.MapType):
        return T.MapType(_merge_types(a.key_type, b.key_type, f"key of {name}"),
                         _merge_types(a.value_type, b.value_type, f"value of {name}"))
    if isinstance(a, T.StructType) and isinstance(b, T.StructType):
        bf = {f.name: f.data_type for f in b.fields}
        fields = [T.StructField(f.name, _merge_types(f.data_type, bf.get(f.name, T.NULL),
                                                     f"field {f.name} in {name}"))
                  for f in a.fields]
        seen = {f.name for f in a.fields}
        fields += [T.StructField(f.name, f.data_type) for f in b.fields if f.name not in seen]
        return T.StructType(tuple(fields))
    ta, tb = _spark_type_name(a), _spark_type_name(b)
    raise AnalysisError(
        f"Can not merge type `{ta}` and `{tb}`.",
        error_class="CANNOT_MERGE_TYPE",
        parameters={"data_type1": ta, "data_type2": tb},
    )


def _spark_type_name(t: T.DataType) -> str:
    """PySpark's class name of a type (``LongType``), as in its CANNOT_MERGE_TYPE message."""
    return type(t).__name__


def _has_null_type(t: T.DataType) -> bool:
    if isinstance(t, T.NullType):
        return True
    if isinstance(t, T.ArrayType):
        return _has_null_type(t.element_type)
    if isinstance(t, T.StructType):
        return any(_has_null_type(f.data_type) for f in t.fields)
    if isinstance(t, T.MapType):
        return _has_null_type(t.key_type) or _has_null_type(t.value_type)
    return False


def _to_py(v: Any, dt: T.DataType) -> Any:
    """A Python value in the form pyarrow accepts for ``dt`` (Rows -> dicts for structs)."""
    if v is None:
        return None
    if isinstance(dt, T.StructType):
        if isinstance(v, dict):
            return {f.name: _to_py(v.get(f.name), f.data_type) for f in dt.fields}
        return {f.name: _to_py(x, f.data_type) for f, x in zip(dt.fields, v)}
    if isinstance(dt, T.ArrayType):
        return [_to_py(x, dt.element_type) for x in v]
    if isinstance(dt, T.MapType):
        # pyarrow takes a map as (key, value) pairs
        return [(_to_py(k, dt.key_type), _to_py(x, dt.value_type)) for k, x in dict(v).items()]
    if isinstance(dt, (T.FloatType, T.DoubleType)) and isinstance(v, int):
        return float(v)
    if isinstance(dt, T.StringType) and not isinstance(v, str):
        return str(v).lower() if isinstance(v, bool) else str(v)
    return v


def _rows_to_table(data: Sequence[Any], schema: Any) -> pa.Table:
    rows = list(data)
    names: list[str] | None = None
    struct: T.StructType | None = None
    if isinstance(schema, T.StructType):
        struct = schema
    elif isinstance(schema, str):
        text = schema.strip()
        try:
            struct = parse_ddl_schema(text)
        except Exception:
            # A bare type ("int") describes single values, as in PySpark: column "value".

            struct = T.StructType((T.StructField("value", parse_data_type(text)),))
    elif isinstance(schema, T.DataType):
        struct = T.StructType((T.StructField("value", schema),))
    elif schema is not None:
        names = [str(n) for n in schema]

    def is_record(r: Any) -> bool:
        return isinstance(r, (tuple, list, dict)) or hasattr(r, "__dict__") and not isinstance(
            r, (_dt.date, Decimal))

    if rows and not is_record(rows[0]):
        rows = [(r,) for r in rows]
        if struct is None and names is None:
            names = ["value"]

    # Field names, and each row as a tuple in field order.
    if struct is not None:
        field_names = [f.name for f in struct.fields]
    elif names is not None:
        field_names = list(names)
    else:
        field_names = []
    values: list[tuple[Any, ...]] = []
    for r in rows:
        if isinstance(r, Row) and "__fields__" in r.__dict__:
            if not field_names:
                field_names = list(r.__fields__)
            values.append(tuple(r))
        elif isinstance(r, dict):
            if not field_names:
                field_names = sorted(r)
            values.append(tuple(r.get(n) for n in field_names))
        elif isinstance(r, (tuple, list)):
            if hasattr(r, "_fields") and not field_names:
                field_names = list(r._fields)  # namedtuple
            values.append(tuple(r))
        else:
            d = vars(r)
            if not field_names:
                field_names = sorted(d)
            values.append(tuple(d.get(n) for n in field_names))
    width = max((len(v) for v in values), default=len(field_names))
    if len(field_names) < width:
        field_names += [f"_{i}" for i in range(len(field_names) + 1, width + 1)]
    for v in values:
        if len(v) != len(field_names):
            raise AnalysisError(
                f"Length of object ({len(v)}) does not match with length of fields "
                f"({len(field_names)}).",
                error_class="LENGTH_SHOULD_BE_THE_SAME",
                parameters={"arg1": "obj", "arg2": "fields", "arg1_length": str(len(v)),
                            "arg2_length": str(len(field_names))},
            )

    if struct is None:
        if not values:
            raise AnalysisError("Can not infer schema from an empty dataset.",
                                error_class="CANNOT_INFER_EMPTY_SCHEMA")
        types: list[T.DataType] = [T.NULL] * len(field_names)
        for v in values:
            for i, x in enumerate(v):
                types[i] = _merge_types(types[i], _infer_type(x), field_names[i])
        if any(_has_null_type(t) for t in types):
            raise AnalysisError("Some of types cannot be determined after inferring.",
                                error_class="CANNOT_DETERMINE_TYPE")
        struct = T.StructType(tuple(T.StructField(n, t) for n, t in zip(field_names, types)))
    elif len(struct.fields) != len(field_names) and values:
        raise AnalysisError(
            f"Length of object ({len(field_names)}) does not match with length of fields "
            f"({len(struct.fields)}).",
            error_class="LENGTH_SHOULD_BE_THE_SAME",
        )

    # Column-wise conversion: one pyarrow call per column (input conversion, not a query path).
    columns = list(zip(*values)) if values else [() for _ in struct.fields]
    arrays = []
    for f, col in zip(struct.fields, columns):
        py = [_to_py(x, f.data_type) for x in col] if isinstance(
            f.data_type, (T.StructType, T.ArrayType, T.MapType, T.FloatType, T.DoubleType,
                          T.StringType)) \
            else list(col)
        try:
            arrays.append(pa.array(py, type=f.data_type.to_arrow()))
        except (pa.ArrowInvalid, pa.ArrowTypeError, OverflowError, TypeError) as e:
            raise AnalysisError(
                f"Field {f.name}: cannot convert the given values to {f.data_type.simple_string()}"
                f" ({e}).",
                error_class="FIELD_DATA_TYPE_UNACCEPTABLE",
                parameters={"name": f.name, "data_type": f.data_type.simple_string()},
            ) from e
    for f, arr in zip(struct.fields, arrays):
        if not f.nullable and arr.null_count:
            raise AnalysisError(
                f"Field {f.name} is not nullable, but got None.",
                error_class="FIELD_NOT_NULLABLE_WITH_NAME",
                parameters={"field_name": f.name},
            )
    arrow_schema = pa.schema(
        [pa.field(f.name, f.data_type.to_arrow(), nullable=f.nullable) for f in struct.fields])
    return pa.Table.from_arrays(arrays, schema=arrow_schema)


def _to_arrow_table(data: Any, schema: Any, time_zone: str) -> pa.Table:
    schema = T.as_ember_type(schema)  # a PySpark StructType / DataType, converted
    if isinstance(data, pa.RecordBatch):
        data = pa.Table.from_batches([data])
    if not isinstance(data, pa.Table):
        try:
            import pandas as pd
        except ImportError:  # pragma: no cover - pandas is a dependency
            pd = None
        if pd is not None and isinstance(data, pd.DataFrame):
            data = pa.Table.from_pandas(data, preserve_index=False)
    if isinstance(data, pa.Table):
        table = _canonical(data, time_zone)
        if schema is None:
            return table
        if isinstance(schema, (list, tuple)) and all(isinstance(n, str) for n in schema):
            if len(schema) != table.num_columns:
                raise AnalysisError(
                    f"Length of object ({table.num_columns}) does not match with length of "
                    f"fields ({len(schema)}).", error_class="LENGTH_SHOULD_BE_THE_SAME")
            return table.rename_columns(list(schema))
        struct = parse_ddl_schema(schema) if isinstance(schema, str) else schema
        if not isinstance(struct, T.StructType) or len(struct.fields) != table.num_columns:
            raise AnalysisError("The schema does not match the data's columns",
                                error_class="LENGTH_SHOULD_BE_THE_SAME")
        cols = [c.cast(f.data_type.to_arrow()) for c, f in zip(table.columns, struct.fields)]
        return pa.Table.from_arrays(cols, schema=pa.schema(
            [pa.field(f.name, f.data_type.to_arrow(), f.nullable) for f in struct.fields]))
    if isinstance(data, Iterable) and not isinstance(data, (str, bytes)):
        # Python rows: a naive timestamp column here is a TIMESTAMP_NTZ (the types are set)
        return _canonical(_rows_to_table(list(data), schema), time_zone, naive_is_local=False)
    raise TypeError(f"createDataFrame: unsupported data of type {type(data).__name__}")
