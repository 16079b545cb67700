"""``DataFrame``: an immutable query with PySpark's method names.

A DataFrame holds its session and a logical plan. The plan is analyzed when the DataFrame is created
(as in Spark), so a misspelled column fails at the call that introduced it; new DataFrames are
built on the *analyzed* plan of their parent, which the analyzer accepts as already resolved.
Nothing runs until an action (``collect``, ``show``, ``to_arrow``, ``count`` ...).

>>> import ember
>>> from ember import functions as F
>>> spark = ember.Session()
>>> orders = spark.createDataFrame([(1, 10, 2.5), (2, 10, 4.0)], "id int, cust int, amt double")
>>> orders.groupBy("cust").agg(F.sum("amt").alias("total")).collect()
[Row(cust=10, total=6.5)]
"""

from __future__ import annotations

import datetime as _dt
import os
import re
import unicodedata
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, Literal as TLiteral

import pyarrow as pa

from ember import types as T
from ember.column import Column, column_from_name, literal_expr, parse_column_name, to_expr
from ember.errors import AnalysisError, ExecutionError
from ember.formatting import java_double_str
from ember.expressions.base import (
    Alias,
    AttributeReference,
    Expression,
    Literal,
    NamedExpression,
    SortOrder,
    UnresolvedAlias,
    UnresolvedAttribute,
    UnresolvedFunction,
    UnresolvedRegex,
    UnresolvedStar,
)
from ember.plans.logical.join_type import (
    JOIN_HINT_ALIASES,
    JoinType,
    UsingJoin,
    join_type_from_string,
)
from ember.plans.logical.nodes import (
    Aggregate, Distinct, Except, FileRelation, Filter, Intersect, Join, Limit, LocalRelation,
    LogicalPlan, Offset, Pivot,
    Project, ResolvedHint, Sort, SubqueryAlias, Union, UnresolvedHint, Unpivot, EventTimeWatermark,
    Repartition, RepartitionByExpression, Sample,
)
from ember.plans.logical.nodes import Deduplicate, DeduplicateWithinWatermark
from ember.query_execution import QueryExecution
from ember.row import Row, make_row
from ember.conf import PIVOT_MAX_VALUES
from ember.errors import UnsupportedError
from ember.pyspark_api import missing_attribute
from ember.cache_manager import StorageLevel, same_plan
from ember.dataframe_na import _NO_VALUE, DataFrameNaFunctions
from ember.dataframe_stat import DataFrameStatFunctions, summary
from ember.dataframe_shape import match_schema, transpose
from ember.analysis.fresh import fresh_copy
from ember.analysis.resolution import resolve_nested_name
from ember.expressions.generators import MultiAlias
from ember.expressions.cast import Cast
from ember.expressions.grouping import Cube, GroupingSets, Rollup
from ember.expressions.intervals import python_interval_string
from ember.expressions.predicates import And, EqualNullSafe, EqualTo
from ember.sql import parse_expression
from ember.streaming.api import DataStreamWriter
from ember.writers import DataFrameWriter
from ember.expressions.python_udf import PythonEvalType, PythonUDF
from ember.plans.logical.python import (
    FlatMapCoGroupsInPandas, FlatMapGroupsInPandas, MapInPandas,
)
from ember.udf import to_return_type
from ember.table_writes import DataFrameWriterV2
from ember.streaming.watermarks import delay_ms, interval_string, parse_interval

if TYPE_CHECKING:  # pragma: no cover
    import pandas

    from ember.session import Session

__all__ = ["DataFrame", "GroupedData"]

#: ``colRegex`` patterns (Spark's ``ParserUtils.escapedIdentifier`` and
#: ``qualifiedEscapedIdentifier``)
_ESCAPED_IDENTIFIER = re.compile(r"`(.+)`", re.DOTALL)
_QUALIFIED_ESCAPED_IDENTIFIER = re.compile(r"(.+)\.`(.+)`", re.DOTALL)

ExplainModeArg = TLiteral["simple", "extended", "codegen", "cost", "formatted", "rules",
                          "analyze"]


def _quote(name: str) -> str:
    return "`" + name.replace("`", "``") + "`"


class DataFrame:
    """A query over the session's data, built with PySpark's API (see module docstring)."""

    __slots__ = ("_session", "_qe", "_plan", "_ambiguous")

    def __init__(self, session: "Session", plan: LogicalPlan,
                 ambiguous: frozenset[int] = frozenset()) -> None:
        self._session = session
        #: ids of attributes that a self-join in this DataFrame's lineage made ambiguous: a
        #: ``df["a"]`` Column with such an id could mean either side (Spark's
        #: DetectAmbiguousSelfJoin fails with ``_LEGACY_ERROR_TEMP_1182``).
        self._ambiguous = ambiguous
        self._qe = QueryExecution(session, plan)
        self._plan = self._qe.analyzed  # eager analysis: errors surface here, as in Spark

    # -- plumbing -----------------------------------------------------------------------------
    def _new(self, plan: LogicalPlan) -> "DataFrame":
        return DataFrame(self._session, plan, self._ambiguous)

    def _check_refs(self, *exprs: Any) -> None:
        """Fail like Spark when a user Column (``df["a"]``) refers to a self-joined attribute."""
        if self._ambiguous:
            _check_self_join_refs(
                [e.expr if isinstance(e, Column) else e for e in exprs
                 if isinstance(e, (Column, Expression))], self._ambiguous, {})

    @property
    def sparkSession(self) -> "Session":  # noqa: N802
        return self._session

    session = sparkSession

    @property
    def plan(self) -> LogicalPlan:
        """The analyzed logical plan."""
        return self._plan

    def _eq_name(self, a: str, b: str) -> bool:
        if self._session.sql_conf.case_sensitive:
            return a == b
        return a.lower() == b.lower()

    def _resolve(self, name: str) -> AttributeReference:
        """``df["a"]`` / ``df["t.a"]``: the attribute of this DataFrame's output."""
        parts = parse_column_name(name)
        out = self._plan.output
        matches = [
            a for a in out
            if self._eq_name(a.name, parts[-1]) and (
                len(parts) == 1 or (a.qualifier and self._eq_name(a.qualifier[-1], parts[-2]))
            )
        ]
        if len(parts) > 1 and not matches:
            matches = [a for a in out if self._eq_name(a.name, name)]
        distinct = {a.id: a for a in matches}
        if len(distinct) == 1:
            return matches[0]
        if not distinct:
            names = ", ".join(_quote(a.name) for a in out)
            raise AnalysisError(
                f"A column, variable, or function parameter with name {_quote(name)} cannot be "
                f"resolved. Did you mean one of the following? [{names}].",
                error_class="UNRESOLVED_COLUMN.WITH_SUGGESTION",
                parameters={"objectName": _quote(name), "proposal": names},
            )
        refs = ", ".join(
            ".".join(_quote(p) for p in (a.qualifier + (a.name,))) for a in distinct.values())
        raise AnalysisError(
            f"Reference {_quote(name)} is ambiguous, could be: [{refs}].",
            error_class="AMBIGUOUS_REFERENCE",
            parameters={"name": _quote(name), "referenceNames": f"[{refs}]"},
        )

    # -- schema -------------------------------------------------------------------------------
    @property
    def schema(self) -> T.StructType:
        """The output schema (``.fields``, each with ``.name``, ``.dataType``, ``.nullable``)."""
        return T.StructType(tuple(T.StructField(a.name, a.data_type, a.nullable)
                                  for a in self._plan.output))

    @property
    def columns(self) -> list[str]:
        return [a.name for a in self._plan.output]

    @property
    def dtypes(self) -> list[tuple[str, str]]:
        return [(a.name, a.data_type.simple_string()) for a in self._plan.output]

    def printSchema(self, level: int | None = None) -> None:  # noqa: N802
        """Print the schema as a tree (Spark's format: ``|-- a: integer (nullable = true)``)."""
        print(self._tree_schema(level))

    def _tree_schema(self, level: int | None = None) -> str:
        lines = ["root"]
        for a in self._plan.output:
            _schema_lines(lines, " |", a.name, a.data_type, f"nullable = {str(a.nullable).lower()}",
                          1, level)
        return "\n".join(lines) + "\n"

    # -- actions ------------------------------------------------------------------------------
    def to_arrow(self) -> pa.Table:
        """Run the query and return an Arrow table (column names as in Spark; may repeat)."""
        return self._qe.to_arrow()

    toArrow = to_arrow  # noqa: N815

    def to_spark(self) -> Any:
        """The result as a PySpark DataFrame, to hand back to a PySpark pipeline.

        On the Spark runtime nothing is collected: the returned DataFrame reads this query's
        output partitions as part of Spark's job (``mapInArrow`` over the plan's RDD), lazily,
        like any DataFrame.  On the local runtime the result is computed here and passed as
        Arrow to the active SparkSession.  Column names and types are the query's.

        >>> ember_session = ember.Session(runtime="spark", spark=spark)        # doctest: +SKIP
        >>> ember_session.createDataFrame(spark.range(5)).createOrReplaceTempView("r")  # doctest: +SKIP
        >>> out = ember_session.sql("SELECT id % 2 AS k, count(*) AS n FROM r GROUP BY 1")  # doctest: +SKIP
        >>> out.to_spark().where("n > 2").collect()                            # doctest: +SKIP
        [Row(k=0, n=3)]
        """
        # imported here so that pyspark loads only when the Spark runtime runs
        from ember.runtime.spark.interop import to_spark

        return to_spark(self._qe)

    def collect(self) -> list[Row]:
        """All result rows as :class:`~ember.row.Row` objects."""
        # PySpark's collect() builds naive datetimes in the Python process's local time zone
        # (TimestampType.fromInternal), whatever spark.sql.session.timeZone says.
        table = self.to_arrow()
        return self._qe.guard("execution",
                              lambda: _table_to_rows(table, python_local_time_zone()))

    def toPandas(self) -> "pandas.DataFrame":  # noqa: N802
        """The result as a pandas DataFrame (timestamps as naive wall-clock session time)."""
        table = _localize_timestamps(self.to_arrow(), self._session.sql_conf.time_zone)
        return table.to_pandas()

    def count(self) -> int:
        """Number of rows."""
        return int(self.groupBy().count().collect()[0][0])

    def take(self, num: int) -> list[Row]:
        return self.limit(num).collect()

    def head(self, n: int | None = None) -> Row | list[Row] | None:
        """``head()`` -> first Row or None; ``head(n)`` -> list of up to n Rows."""
        if n is None:
            rows = self.take(1)
            return rows[0] if rows else None
        return self.take(n)

    def first(self) -> Row | None:
        return self.head()

    def isEmpty(self) -> bool:  # noqa: N802
        return len(self.take(1)) == 0

    def show(self, n: int = 20, truncate: bool | int = True, vertical: bool = False) -> None:
        """Print the first ``n`` rows as Spark's ``show()`` does.

        >>> spark.createDataFrame([(1, None)], "a int, b string").show()   # doctest: +SKIP
        +---+----+
        |  a|   b|
        +---+----+
        |  1|NULL|
        +---+----+
        <BLANKLINE>
        """
        print(self._show_string(n, truncate, vertical))

    def _show_string(self, n: int = 20, truncate: bool | int = True,
                     vertical: bool = False) -> str:
        if isinstance(truncate, bool):
            width = 20 if truncate else 0
        else:
            width = int(truncate)
        n = max(n, 0)
        plan = Limit(Literal(n + 1, T.INT), self._plan)
        table = QueryExecution(self._session, plan).to_arrow()
        return show_string(table, [a.data_type for a in self._plan.output], n, width, vertical,
                           self._session.sql_conf.time_zone)

    def explain(self, extended: bool | str | None = None,
                mode: ExplainModeArg | None = None) -> None:
        """Print the plans: ``explain()`` (physical plan), ``explain(mode="extended")`` (parsed,
        analyzed, optimized and physical), and two Ember modes: ``"rules"`` (each optimizer rule
        that changed the plan, before and after) and ``"analyze"`` (runs the query and prints each
        operator's actual rows and time next to its estimate)."""
        if isinstance(extended, str):
            mode, extended = extended, None  # type: ignore[assignment]
        if mode is None:
            mode = "extended" if extended else "simple"
        print(self._qe.explain_string(mode))

    @property
    def write(self) -> DataFrameWriter:
        """The writer saving this DataFrame's rows as files (:class:`ember.writers.DataFrameWriter`:
        ``df.write.mode("overwrite").partitionBy("day").parquet(path)``)."""
        return DataFrameWriter(self)

    def writeTo(self, table: str) -> DataFrameWriterV2:  # noqa: N802
        """PySpark's ``df.writeTo(table)`` (:class:`ember.table_writes.DataFrameWriterV2`)."""
        return DataFrameWriterV2(self, table)

    # -- streaming ----------------------------------------------------------------------------
    @property
    def isStreaming(self) -> bool:  # noqa: N802
        """Whether this DataFrame reads a stream (run it with ``writeStream``)."""
        return self._plan.is_streaming

    @property
    def writeStream(self) -> Any:  # noqa: N802
        """The writer that starts this streaming DataFrame as a query
        (:class:`ember.streaming.api.DataStreamWriter`)."""

        return DataStreamWriter(self)

    def withWatermark(self, eventTime: str, delayThreshold: str) -> "DataFrame":  # noqa: N802,N803
        """Mark ``eventTime`` (a timestamp or window column) as the event time, with rows
        later than ``delayThreshold`` behind the maximum seen allowed to be dropped by stateful
        operators (``withWatermark("t", "10 seconds")``).  A no-op on a batch DataFrame, as in
        Spark (the delay is still checked)."""
        import uuid


        interval = parse_interval(delayThreshold)
        ms = delay_ms(interval)
        if ms < 0:
            raise AnalysisError(f"requirement failed: delay threshold ({delayThreshold}) should "
                                "not be negative.")
        if not self._plan.is_streaming:
            return self
        attr = self._resolve(eventTime)
        dt = attr.data_type
        window = isinstance(dt, T.StructType) and [f.name for f in dt.fields] == [
            "start", "end"] and all(isinstance(f.data_type, T.TimestampType) for f in dt.fields)
        if not isinstance(dt, T.TimestampType) and not window:
            raise AnalysisError(
                f"The event time {_quote(attr.name)} has the invalid type "
                f"\"{dt.simple_string().upper()}\", but expected \"TIMESTAMP\".",
                error_class="EVENT_TIME_IS_NOT_ON_TIMESTAMP_TYPE",
                parameters={"eventName": _quote(attr.name),
                            "eventType": f"\"{dt.simple_string().upper()}\""})
        return self._new(EventTimeWatermark(attr, ms, self._plan, interval_string(*interval),
                                            str(uuid.uuid4())))

    # -- views --------------------------------------------------------------------------------
    def createOrReplaceTempView(self, name: str) -> None:  # noqa: N802
        """Register this DataFrame as temporary view ``name`` (replacing an existing one)."""
        self._session.session_catalog.create_temp_view(name, self._plan, replace=True)

    def createTempView(self, name: str) -> None:  # noqa: N802
        """Register as view ``name``; ``TEMP_TABLE_OR_VIEW_ALREADY_EXISTS`` if it exists."""
        self._session.session_catalog.create_temp_view(name, self._plan, replace=False)

    def createOrReplaceGlobalTempView(self, name: str) -> None:  # noqa: N802
        """Register as global temporary view ``global_temp.name`` (replacing an existing one)."""
        self._session.session_catalog.create_global_temp_view(name, self._plan, replace=True)

    def createGlobalTempView(self, name: str) -> None:  # noqa: N802
        """Register as global temporary view ``global_temp.name``, seen by every session;
        ``TEMP_TABLE_OR_VIEW_ALREADY_EXISTS`` if it exists."""
        self._session.session_catalog.create_global_temp_view(name, self._plan, replace=False)

    def registerTempTable(self, name: str) -> None:  # noqa: N802
        """PySpark's deprecated name of :meth:`createOrReplaceTempView`."""
        self.createOrReplaceTempView(name)

    # -- columns ------------------------------------------------------------------------------
    def __getitem__(self, item: Any) -> Any:
        if isinstance(item, str):
            if item == "*":
                return Column(UnresolvedStar(()))
            parts = parse_column_name(item)
            if len(parts) > 1:
                # ``df["s.a"]``: a column's struct field (Spark's LogicalPlan.resolve)
                try:
                    return Column(self._resolve(item))
                except AnalysisError as e:
                    nested = resolve_nested_name(parts, self._plan.output,
                                                 self._session.sql_conf.case_sensitive)
                    if nested is None:
                        raise e
                    return Column(nested)
            return Column(self._resolve(item))
        if isinstance(item, int):
            return Column(self._plan.output[item])
        if isinstance(item, Column):
            return self.filter(item)
        if isinstance(item, (list, tuple)):
            return self.select(*item)
        raise TypeError(f"Unexpected item type: {type(item).__name__}")

    def __getattr__(self, name: str) -> Column:
        if name.startswith("_"):
            raise AttributeError(name)
        if any(self._eq_name(a.name, name) for a in self._plan.output):
            return self[name]
        raise missing_attribute("DataFrame", "DataFrame", name)

    def __dir__(self) -> list[str]:
        return sorted(set(super().__dir__()) | {c for c in self.columns if c.isidentifier()})

    def __repr__(self) -> str:
        return "DataFrame[" + ", ".join(f"{n}: {t}" for n, t in self.dtypes) + "]"

    # -- transformations: projection ----------------------------------------------------------
    def select(self, *cols: Any) -> "DataFrame":
        """``select("a", col("b") + 1, "*")``."""
        if len(cols) == 1 and isinstance(cols[0], (list, tuple)):
            cols = tuple(cols[0])
        items = tuple(_named(_select_expr(c)) for c in cols)
        self._check_refs(*items)
        return self._new(Project(items, self._plan))

    def colRegex(self, colName: str) -> Column:  # noqa: N802,N803
        """The columns whose names match a regex in backquotes, in full: ``"`(a|b)_.*`"``, or
        ``"t.`x.*`"`` for those of relation ``t`` (Spark's ``UnresolvedRegex``, case-insensitive
        unless ``spark.sql.caseSensitive``); a name without backquotes is ``df[colName]``."""
        m = _ESCAPED_IDENTIFIER.fullmatch(colName)
        if m is not None:
            return Column(UnresolvedRegex((), m.group(1), self._session.sql_conf.case_sensitive))
        m = _QUALIFIED_ESCAPED_IDENTIFIER.fullmatch(colName)
        if m is not None:
            return Column(UnresolvedRegex((m.group(1),), m.group(2),
                                          self._session.sql_conf.case_sensitive))
        return self[colName]

    def toJSON(self, use_unicode: bool = True) -> "DataFrame":  # noqa: N802
        """Each row as a JSON object string, in one string column ``value`` (Spark's
        ``to_json(struct(*))``: NULL fields left out).  PySpark's classic ``toJSON`` returns an
        RDD of the strings, which Ember does not have; Spark Connect's, and PySpark's announced
        future one, return this DataFrame."""
        row = UnresolvedFunction("struct", (UnresolvedStar(()),))
        return self.select(Column(Alias(UnresolvedFunction("to_json", (row,)), "value")))

    def to(self, schema: Any) -> "DataFrame":
        """The columns of ``schema`` (a StructType), matched by name, in its order, cast where
        an ANSI insert could (Spark's ``Dataset.to``; ``ember.dataframe_shape``)."""
        schema = T.as_ember_type(schema)
        if not isinstance(schema, T.StructType):
            raise AnalysisError(
                f"Argument `schema` should be a StructType, got {type(schema).__name__}.",
                error_class="NOT_STRUCT",
                parameters={"arg_name": "schema", "arg_type": type(schema).__name__})
        return match_schema(self, schema)

    def transpose(self, indexColumn: Any = None) -> "DataFrame":  # noqa: N803
        """Rows become columns: a row per non-index column and a column per index value
        (Spark's ``Dataset.transpose``; ``ember.dataframe_shape.transpose``)."""
        return transpose(self, indexColumn)

    def selectExpr(self, *exprs: str) -> "DataFrame":  # noqa: N802
        """``selectExpr("a + 1", "b AS bb", "*")``: SQL expression strings."""

        if len(exprs) == 1 and isinstance(exprs[0], (list, tuple)):
            exprs = tuple(exprs[0])
        tz = self._session.sql_conf.time_zone
        items = tuple(_named(parse_expression(e, tz)) for e in exprs)
        return self._new(Project(items, self._plan))

    def withColumn(self, colName: str, col: Column) -> "DataFrame":  # noqa: N802,N803
        """Add column ``colName`` (or replace the column of that name, in place)."""
        return self.withColumns({colName: col})

    def withColumns(self, colsMap: dict[str, Column]) -> "DataFrame":  # noqa: N802,N803
        self._check_refs(*colsMap.values())
        items: list[Expression] = []
        pending = dict(colsMap)
        for a in self._plan.output:
            hit = next((k for k in pending if self._eq_name(k, a.name)), None)
            if hit is None:
                items.append(a)
            else:
                items.append(Alias(to_expr(colsMap[hit]), hit))
        done = {k for k in colsMap for a in self._plan.output if self._eq_name(k, a.name)}
        for k, v in colsMap.items():
            if k not in done:
                items.append(Alias(to_expr(v), k))
        return self._new(Project(tuple(items), self._plan))

    def withColumnRenamed(self, existing: str, new: str) -> "DataFrame":  # noqa: N802
        """Rename column ``existing`` to ``new`` (no-op when there is no such column)."""
        if not any(self._eq_name(a.name, existing) for a in self._plan.output):
            return self
        items = tuple(Alias(a, new) if self._eq_name(a.name, existing) else a
                      for a in self._plan.output)
        return self._new(Project(items, self._plan))

    def withColumnsRenamed(self, colsMap: dict[str, str]) -> "DataFrame":  # noqa: N802,N803
        df = self
        for k, v in colsMap.items():
            df = df.withColumnRenamed(k, v)
        return df

    def toDF(self, *cols: str) -> "DataFrame":  # noqa: N802
        """Rename all columns positionally."""
        out = self._plan.output
        if len(cols) != len(out):
            raise AnalysisError(
                f"The number of columns doesn't match.\nOld column names ({len(out)}): "
                f"{', '.join(a.name for a in out)}\nNew column names ({len(cols)}): "
                f"{', '.join(cols)}", error_class="_LEGACY_ERROR_TEMP_3124")
        return self._new(Project(tuple(Alias(a, n) for a, n in zip(out, cols)), self._plan))

    def drop(self, *cols: Any) -> "DataFrame":
        """Drop columns by name or by Column (no-op for names that do not exist)."""
        names: list[str] = []
        ids: set[int] = set()
        for c in cols:
            if isinstance(c, str):
                names.append(c)
            elif isinstance(c, Column):
                e = c.expr
                if isinstance(e, AttributeReference):
                    ids.add(e.id)
                elif isinstance(e, UnresolvedAttribute):
                    names.append(e.name)
        keep = tuple(a for a in self._plan.output
                     if a.id not in ids and not any(self._eq_name(a.name, n) for n in names))
        if len(keep) == len(self._plan.output):
            return self
        return self._new(Project(keep, self._plan))

    # -- transformations: rows ----------------------------------------------------------------
    def filter(self, condition: Column | str) -> "DataFrame":
        """Rows where ``condition`` is true: ``filter(col("a") > 1)`` or ``filter("a > 1")``."""
        if isinstance(condition, str):
            cond = parse_expression(condition, self._session.sql_conf.time_zone)
        else:
            cond = to_expr(condition)
            self._check_refs(cond)
        return self._new(Filter(cond, self._plan))

    where = filter

    def distinct(self) -> "DataFrame":
        if self._plan.is_streaming:  # PySpark's distinct() is dropDuplicates() (Deduplicate)
            return self.dropDuplicates()
        return self._new(Distinct(self._plan))

    def dropDuplicates(self, subset: Sequence[str] | None = None) -> "DataFrame":  # noqa: N802
        """Distinct rows, or one row per distinct ``subset`` (the first values of the others)."""
        if self._plan.is_streaming:
            return self._new(Deduplicate(self._dedup_keys(subset), self._plan))
        if subset is None:
            return self.distinct()
        if isinstance(subset, str):
            subset = [subset]
        keys = [self._resolve(n) for n in subset]
        key_ids = {k.id for k in keys}
        aggs: list[Expression] = []
        for a in self._plan.output:
            if a.id in key_ids:
                aggs.append(a)
            else:
                aggs.append(Alias(UnresolvedFunction("first", (a,)), a.name))
        return self._new(Aggregate(tuple(keys), tuple(aggs), self._plan))

    drop_duplicates = dropDuplicates

    def _dedup_keys(self, subset: Sequence[str] | str | None) -> tuple[Any, ...]:
        """The key attributes of a streaming deduplication: ``subset``'s, or every column."""
        if subset is None:
            return tuple(self._plan.output)
        return tuple(self._resolve(n) for n in ([subset] if isinstance(subset, str) else subset))

    def orderBy(self, *cols: Any, ascending: bool | Sequence[bool] | None = None) -> "DataFrame":  # noqa: N802
        """Sort globally: ``orderBy("a", col("b").desc())``, ``orderBy("a", ascending=False)``."""
        orders = _sort_orders(cols, ascending)
        self._check_refs(*orders)
        return self._new(Sort(orders, True, self._plan))

    sort = orderBy

    def sortWithinPartitions(self, *cols: Any,  # noqa: N802
                             ascending: bool | Sequence[bool] | None = None) -> "DataFrame":
        return self._new(Sort(_sort_orders(cols, ascending), False, self._plan))

    def limit(self, num: int) -> "DataFrame":
        return self._new(Limit(Literal(int(num), T.INT), self._plan))

    def offset(self, num: int) -> "DataFrame":
        return self._new(Offset(Literal(int(num), T.INT), self._plan))

    def hint(self, name: str, *parameters: Any) -> "DataFrame":
        """A hint on this relation: ``df.hint("broadcast")``."""
        if len(parameters) == 1 and isinstance(parameters[0], list):
            parameters = tuple(parameters[0])
        df = self._new(UnresolvedHint(name, tuple(parameters), self._plan))
        # The analyzer moves join hints onto Join nodes and drops the rest, so analyzing this
        # DataFrame alone loses the hint. Keep it on the plan later joins are built from, as
        # Spark's analyzed Dataset plan keeps its ResolvedHint.
        strategy = JOIN_HINT_ALIASES.get(name.upper())
        if strategy is not None and not parameters and not isinstance(df._plan, ResolvedHint):
            df._plan = ResolvedHint((strategy,), df._plan)
        return df

    def repartition(self, numPartitions: Any, *cols: Any) -> "DataFrame":  # noqa: N803
        """Shuffle into ``numPartitions`` partitions: rows dealt round-robin, or hash-partitioned
        on ``cols`` (``repartition("a")``: ``spark.sql.shuffle.partitions`` of them); Spark's
        ``Repartition`` / ``RepartitionByExpression`` planned as an ``Exchange``."""
        if isinstance(numPartitions, (str, Column)):
            cols, numPartitions = (numPartitions, *cols), None
        elif not isinstance(numPartitions, int) or isinstance(numPartitions, bool):
            raise _not_column_or_str_or_int("numPartitions", numPartitions)
        n = _positive_partitions(numPartitions)
        if not cols:
            return self._new(Repartition(n, True, self._plan))
        if len(cols) == 1 and isinstance(cols[0], (list, tuple)):
            cols = tuple(cols[0])
        exprs = tuple(_col_expr(c) for c in cols)
        self._check_refs(*exprs)
        return self._new(RepartitionByExpression(exprs, self._plan, n))

    def repartitionByRange(self, numPartitions: Any, *cols: Any) -> "DataFrame":  # noqa: N802,N803
        """Range-partition on ``cols`` (sort orders; a plain column sorts ascending) into
        ``numPartitions`` partitions, the bounds sampled from the data (Spark's
        ``RangePartitioning``)."""
        if isinstance(numPartitions, (str, Column)):
            cols, numPartitions = (numPartitions, *cols), None
        elif not isinstance(numPartitions, int) or isinstance(numPartitions, bool):
            raise _not_column_or_str_or_int("numPartitions", numPartitions)
        if not cols:
            raise AnalysisError("At least one partition-by expression must be specified.",
                                error_class="CANNOT_BE_EMPTY", parameters={"item": "partition-by"
                                                                           " expression"})
        n = _positive_partitions(numPartitions)
        orders = tuple(e if isinstance(e, SortOrder) else SortOrder(e, True, None)
                       for e in (_col_expr(c) for c in cols))
        self._check_refs(*orders)
        return self._new(RepartitionByExpression(orders, self._plan, n))

    def coalesce(self, numPartitions: int) -> "DataFrame":  # noqa: N803
        """Merge partitions, adjacent ones together, into at most ``numPartitions`` without a
        shuffle (Spark's ``Repartition(n, shuffle=false)``, ``Coalesce`` in the plan)."""
        return self._new(Repartition(_positive_partitions(numPartitions), False, self._plan))

    def alias(self, alias: str) -> "DataFrame":
        """Name this relation, so ``col("alias.a")`` resolves (``SubqueryAlias``)."""
        return self._new(SubqueryAlias((alias,), self._plan))

    # -- joins --------------------------------------------------------------------------------
    def join(self, other: "DataFrame", on: str | Column | Sequence[str] | Sequence[Column] | None
             = None, how: str | None = None) -> "DataFrame":
        """Join with ``other``.

        ``on``: a column name or list of names (``USING`` join: one output column per key), a
        boolean Column or list of Columns (ANDed), or None. ``how``: ``inner`` (default),
        ``cross``, ``left``/``left_outer``, ``right``, ``full``/``outer``, ``left_semi``/``semi``,
        ``left_anti``/``anti``.

        >>> orders.join(customers, "cust_id", "left")               # doctest: +SKIP
        >>> a.join(b, a.k == b.k, "left_anti")                      # doctest: +SKIP
        """
        jt = join_type_from_string(how) if how is not None else JoinType.INNER
        right, mapping = _dedup_right(self._plan, other._plan)
        ambiguous = self._ambiguous | other._ambiguous | _self_join_ambiguous(mapping, right)

        def new(plan: LogicalPlan) -> "DataFrame":
            return self._joined(plan, other, mapping)

        if on is None:
            return new(Join(self._plan, right, jt, None))
        if isinstance(on, str):
            on = [on]
        if isinstance(on, Column):
            on = [on]
        on = list(on)
        if all(isinstance(c, str) for c in on):
            return new(Join(self._plan, right, UsingJoin(jt, tuple(on)), None))
        if all(isinstance(c, Column) for c in on):
            cond: Expression | None = None

            _check_self_join_refs([c.expr for c in on], ambiguous, mapping)
            for c in on:
                e = _fix_trivial_self_equality(c.expr, mapping, right)
                cond = e if cond is None else And(cond, e)
            return new(Join(self._plan, right, jt, cond))
        raise TypeError("join(on=...) must be a column name, a list of names, a Column or a list "
                        "of Columns")

    def crossJoin(self, other: "DataFrame") -> "DataFrame":  # noqa: N802
        right, mapping = _dedup_right(self._plan, other._plan)
        return self._joined(Join(self._plan, right, JoinType.CROSS, None), other, mapping)

    def _joined(self, plan: LogicalPlan, other: "DataFrame", mapping: dict[int, int]
                ) -> "DataFrame":
        """The DataFrame of a join; a self-join's attributes that reach the output from both
        sides become ambiguous for later ``df["a"]`` references."""
        df = DataFrame(self._session, plan, self._ambiguous | other._ambiguous)
        if mapping:
            out_ids = {a.id for a in df._plan.output}
            df._ambiguous = df._ambiguous | frozenset(
                old for old, new in mapping.items() if old in out_ids and new in out_ids)
        return df

    # -- aggregation --------------------------------------------------------------------------
    def groupBy(self, *cols: Any) -> "GroupedData":  # noqa: N802
        """Group by columns; follow with ``.agg(...)``, ``.count()``, ``.sum(...)`` ...

        >>> df.groupBy("a").agg(F.count("*"), F.sum("b").alias("sb"))   # doctest: +SKIP
        """
        if len(cols) == 1 and isinstance(cols[0], (list, tuple)):
            cols = tuple(cols[0])
        grouping = tuple(_col_expr(c) for c in cols)
        self._check_refs(*grouping)
        return GroupedData(self, grouping)

    groupby = groupBy

    def rollup(self, *cols: Any) -> "GroupedData":
        """Group by ``ROLLUP(cols)``: the prefixes of ``cols``, longest first, down to the grand
        total; a column outside a row's grouping set is NULL there (``F.grouping`` tells).

        >>> df.rollup("a", "b").agg(F.sum("c"))   # doctest: +SKIP
        """
        grouped = self.groupBy(*cols)
        return GroupedData(self, grouped._grouping, analytics=Rollup)

    def cube(self, *cols: Any) -> "GroupedData":
        """Group by ``CUBE(cols)``: every subset of ``cols``."""
        grouped = self.groupBy(*cols)
        return GroupedData(self, grouped._grouping, analytics=Cube)

    def groupingSets(self, groupingSets: Sequence[Sequence[Any]],  # noqa: N802, N803
                     *cols: Any) -> "GroupedData":
        """Group by ``GROUPING SETS``: ``df.groupingSets([["a", "b"], ["a"], []], "a", "b")``
        aggregates per set; ``cols`` are the grouping columns in the output."""
        grouped = self.groupBy(*cols)
        sets = [tuple(_col_expr(c) for c in s) for s in groupingSets]
        self._check_refs(*(e for s in sets for e in s))
        return GroupedData(self, grouped._grouping, analytics=tuple(sets))

    def agg(self, *exprs: Any) -> "DataFrame":
        """Aggregate over all rows (``groupBy().agg(...)``)."""
        return self.groupBy().agg(*exprs)

    def unpivot(self, ids: Any, values: Any, variableColumnName: str,  # noqa: N803
                valueColumnName: str) -> "DataFrame":  # noqa: N803
        """Wide to long: per row, one row per value column with the ``ids``, the column's name in
        ``variableColumnName`` and its value in ``valueColumnName`` (values cast to their
        common type; NULL values kept). ``values=None``: every column that is not an id.

        >>> df.unpivot("id", ["c1", "c2"], "var", "val")   # doctest: +SKIP
        """
        def exprs(cs: Any) -> tuple[Expression, ...]:
            if not isinstance(cs, (list, tuple)):
                cs = [cs]
            return tuple(_named(_col_expr(c)) for c in cs)

        vals = None if values is None else tuple((e,) for e in exprs(values))
        return self._new(Unpivot(exprs(ids), vals, None, variableColumnName,
                                 (valueColumnName,), self._plan))

    melt = unpivot

    # -- set operations -----------------------------------------------------------------------
    def union(self, other: "DataFrame") -> "DataFrame":
        """UNION ALL by position (as PySpark's ``union``: duplicates are kept)."""
        return self._new(Union((self._plan, other._plan)))

    unionAll = union  # noqa: N815

    def unionByName(self, other: "DataFrame", allowMissingColumns: bool = False) -> "DataFrame":  # noqa: N802,N803
        """UNION ALL matching columns by name; with ``allowMissingColumns`` a column missing on
        one side is NULL there (right-only columns come last, as in Spark)."""
        left_out, right_out = self._plan.output, other._plan.output

        def find(attrs: Sequence[AttributeReference], name: str) -> AttributeReference | None:
            return next((a for a in attrs if self._eq_name(a.name, name)), None)

        left_items: list[Expression] = list(left_out)
        right_items: list[Expression] = []
        for a in left_out:
            r = find(right_out, a.name)
            if r is not None:
                right_items.append(r if r.name == a.name else Alias(r, a.name))
            elif allowMissingColumns:
                right_items.append(Alias(Literal(None, a.data_type), a.name))
            else:
                names = ", ".join(x.name for x in right_out)
                raise AnalysisError(
                    f'Cannot resolve column name "{a.name}" among ({names}).',
                    error_class="UNRESOLVED_COLUMN_AMONG_FIELD_NAMES",
                    parameters={"colName": a.name, "fieldNames": names},
                )
        if allowMissingColumns:
            for r in right_out:
                if find(left_out, r.name) is None:
                    left_items.append(Alias(Literal(None, r.data_type), r.name))
                    right_items.append(r)
        elif len(right_out) != len(left_out):
            raise AnalysisError(
                "UNION can only be performed on inputs with the same number of columns, but the "
                f"first input has {len(left_out)} columns and the second input has "
                f"{len(right_out)} columns.",
                error_class="NUM_COLUMNS_MISMATCH",
                parameters={"operator": "UNION", "firstNumColumns": str(len(left_out)),
                            "invalidOrdinalNum": "second", "invalidNumColumns":
                            str(len(right_out))},
            )
        left = self._plan if len(left_items) == len(left_out) else Project(
            tuple(left_items), self._plan)
        right = Project(tuple(right_items), other._plan)
        return self._new(Union((left, right)))

    def intersect(self, other: "DataFrame") -> "DataFrame":
        return self._new(Intersect(self._plan, other._plan, False))

    def intersectAll(self, other: "DataFrame") -> "DataFrame":  # noqa: N802
        return self._new(Intersect(self._plan, other._plan, True))

    def subtract(self, other: "DataFrame") -> "DataFrame":
        """EXCEPT DISTINCT."""
        return self._new(Except(self._plan, other._plan, False))

    def exceptAll(self, other: "DataFrame") -> "DataFrame":  # noqa: N802
        return self._new(Except(self._plan, other._plan, True))

    # -- PySpark's other methods --------------------------------------------------------------
    def transform(self, func: Any, *args: Any, **kwargs: Any) -> "DataFrame":
        """``func(self, *args, **kwargs)``, which must return a DataFrame (chains custom
        transformations: ``df.transform(with_tax, rate=0.2)``)."""
        result = func(self, *args, **kwargs)
        assert isinstance(result, DataFrame), (
            f"Func returned an instance of type [{type(result)}], should have been DataFrame.")
        return result

    def tail(self, num: int) -> list[Row]:
        """The last ``num`` rows, in order (an action: the whole result is computed, as in
        Spark's ``CollectTailExec``)."""
        table = self.to_arrow()
        return _table_to_rows(table.slice(max(0, table.num_rows - max(int(num), 0))),
                              python_local_time_zone())

    def toLocalIterator(self, prefetchPartitions: bool = False) -> Any:  # noqa: N802,N803
        """An iterator over the result rows, one Arrow batch converted at a time."""
        zone = python_local_time_zone()
        for batch in self.to_arrow().to_batches():
            yield from _table_to_rows(pa.Table.from_batches([batch]), zone)

    def isLocal(self) -> bool:  # noqa: N802
        """Whether ``collect`` needs no job: the plan is local data, as Spark's ``isLocal``
        (a ``LocalRelation`` or a command's result; createDataFrame of Python rows is a
        ``LogicalRDD`` in Spark, so not local)."""
        return isinstance(self._plan, LocalRelation) and not self._plan.unknown_size

    def inputFiles(self) -> list[str]:  # noqa: N802
        """The files this DataFrame reads (Spark's ``inputFiles``: file URIs, sorted)."""
        files: set[str] = set()
        for rel in self._plan.collect(lambda n: n if isinstance(n, FileRelation) else None):
            files.update(f if "://" in f else "file://" + os.path.abspath(f) for f in rel.paths)
        return sorted(files)

    def sameSemantics(self, other: "DataFrame") -> bool:  # noqa: N802
        """Whether the two DataFrames compute the same rows (Spark's ``sameResult`` of the
        canonicalized plans; local data must be the same data)."""
        if not isinstance(other, DataFrame):
            raise TypeError(f"other should be a DataFrame, got {type(other).__name__}")
        return same_plan(self._plan, other._plan)

    def semanticHash(self) -> int:  # noqa: N802
        """A hash equal for DataFrames with :meth:`sameSemantics` (Spark's ``semanticHash``;
        the numbers differ from Spark's)."""
        return self._plan.semantic_hash() & 0x7FFFFFFF

    @property
    def na(self) -> DataFrameNaFunctions:
        """Missing-value functions (:class:`ember.dataframe_na.DataFrameNaFunctions`)."""
        return DataFrameNaFunctions(self)

    def dropna(self, how: str = "any", thresh: int | None = None,
               subset: Any = None) -> "DataFrame":
        """``df.na.drop``: rows with enough values that are neither NULL nor NaN."""
        return self.na.drop(how, thresh, subset)

    def fillna(self, value: Any, subset: Any = None) -> "DataFrame":
        """``df.na.fill``: NULLs (and NaNs) replaced by ``value``."""
        return self.na.fill(value, subset)

    def replace(self, to_replace: Any, value: Any = _NO_VALUE,
                subset: Any = None) -> "DataFrame":
        """``df.na.replace``: values replaced (``df.replace({"a": "b"})``)."""
        return self.na.replace(to_replace, value, subset)

    def describe(self, *cols: Any) -> "DataFrame":
        """``count``, ``mean``, ``stddev``, ``min`` and ``max`` of the numeric and string
        columns (of ``cols``, default all), as strings, one row per statistic."""
        if len(cols) == 1 and isinstance(cols[0], list):
            cols = tuple(cols[0])
        df = self.select(*cols) if cols else self
        return summary(df, ("count", "mean", "stddev", "min", "max"))

    def summary(self, *statistics: str) -> "DataFrame":
        """Statistics of the numeric and string columns, one row per statistic: ``count``,
        ``mean``, ``stddev``, ``min``, ``max``, percentiles (``"25%"``), ``count_distinct``,
        ``approx_count_distinct`` (default: count, mean, stddev, min, 25%, 50%, 75%, max)."""
        if len(statistics) == 1 and isinstance(statistics[0], list):
            statistics = tuple(statistics[0])
        return summary(self, statistics)

    @property
    def stat(self) -> DataFrameStatFunctions:
        """Statistics (:class:`ember.dataframe_stat.DataFrameStatFunctions`)."""
        return DataFrameStatFunctions(self)

    def corr(self, col1: str, col2: str, method: str | None = None) -> float | None:
        """``df.stat.corr``: Pearson correlation of two numeric columns."""
        return self.stat.corr(col1, col2, method)

    def cov(self, col1: str, col2: str) -> float | None:
        """``df.stat.cov``: sample covariance of two numeric columns."""
        return self.stat.cov(col1, col2)

    def crosstab(self, col1: str, col2: str) -> "DataFrame":
        """``df.stat.crosstab``: a contingency table of two columns."""
        return self.stat.crosstab(col1, col2)

    def approxQuantile(self, col: Any, probabilities: Any,  # noqa: N802
                       relativeError: float) -> list[Any]:  # noqa: N803
        """``df.stat.approxQuantile``: quantiles of numeric columns."""
        return self.stat.approxQuantile(col, probabilities, relativeError)

    def checkpoint(self, eager: bool = True) -> "DataFrame":
        """This DataFrame's rows computed now and held as local data: later queries start from
        them, not from the plan (Spark's ``checkpoint``, which truncates the lineage; Ember
        keeps the rows in memory, not in a checkpoint directory, and computes them at once
        even when not ``eager``)."""
        return self._new(LocalRelation(self._plan.output, self.to_arrow()))

    def localCheckpoint(self, eager: bool = True,  # noqa: N802
                        storageLevel: Any = None) -> "DataFrame":  # noqa: N803
        """:meth:`checkpoint` (Spark's local checkpoint keeps the rows on the executors)."""
        return self.checkpoint(eager)

    # -- sampling -----------------------------------------------------------------------------
    def sample(self, withReplacement: Any = None, fraction: Any = None,  # noqa: N803
               seed: int | None = None) -> "DataFrame":
        """About ``fraction`` of the rows: ``sample(0.1)``, ``sample(0.1, seed=7)``,
        ``sample(True, 2.0, 7)`` (with replacement: each row a Poisson number of times).
        Spark's ``Sample``; a seed gives the same rows again for the same partitioning, but
        not Spark's rows (see ``ember.runtime.local.operators.basic.run_sample``)."""
        set_ = type(withReplacement) is bool and isinstance(fraction, float)
        omitted_kwargs = withReplacement is None and isinstance(fraction, float)
        omitted_args = isinstance(withReplacement, float)
        if not (set_ or omitted_kwargs or omitted_args):
            types = ", ".join(type(a).__name__ for a in (withReplacement, fraction, seed))
            raise AnalysisError(
                "Argument `withReplacement (optional), fraction (required) and seed (optional)`"
                f" should be bool, float or int, got {types}.",
                error_class="NOT_EXPECTED_TYPE",
                parameters={"arg_name": "withReplacement (optional), fraction (required) and "
                                        "seed (optional)", "arg_type": types,
                            "expected_type": "bool, float or int"})
        if omitted_args:
            if fraction is not None:
                seed = fraction
            fraction, withReplacement = withReplacement, None
        replace = bool(withReplacement)
        if fraction < 0 or (not replace and fraction > 1.0 + 1e-5):
            raise AnalysisError(
                f"requirement failed: Sampling fraction ({fraction}) must be "
                + ("nonnegative with replacement" if replace
                   else "on interval [0, 1] without replacement"))
        seed = _random_seed() if seed is None else int(seed)
        return self._new(Sample(0.0, float(fraction), replace, seed, self._plan))

    def sampleBy(self, col: Any, fractions: dict[Any, float],  # noqa: N802
                 seed: int | None = None) -> "DataFrame":
        """Stratified sample: a row whose ``col`` value is a key of ``fractions`` kept with
        that key's probability, any other row dropped (Spark: a filter on ``rand(seed)``;
        Ember: a union of one :meth:`sample` per stratum, so the rows for a seed differ)."""
        if not isinstance(col, (str, Column)):
            raise AnalysisError(
                f"Argument `col` should be a Column or str, got {type(col).__name__}.",
                error_class="NOT_COLUMN_OR_STR",
                parameters={"arg_name": "col", "arg_type": type(col).__name__})
        if not isinstance(fractions, dict):
            raise AnalysisError(
                f"Argument `fractions` should be a dict, got {type(fractions).__name__}.",
                error_class="NOT_DICT",
                parameters={"arg_name": "fractions", "arg_type": type(fractions).__name__})
        for k, v in fractions.items():
            if not isinstance(k, (float, int, str)):
                raise AnalysisError(
                    f"Argument `fractions` cannot contain {type(k).__name__}.",
                    error_class="DISALLOWED_TYPE_FOR_CONTAINER",
                    parameters={"arg_name": "fractions", "arg_type": "dict",
                                "allowed_types": "float, int, str",
                                "item_type": type(k).__name__})
            if not 0.0 <= float(v) <= 1.0:
                raise AnalysisError(f"requirement failed: Fractions must be in [0, 1], but got "
                                    f"{fractions}.")
        seed = _random_seed() if seed is None else int(seed)
        key = _col_expr(col)
        strata = [Sample(0.0, float(f), False, seed, Filter(EqualTo(key, literal_expr(k)),
                                                            self._plan))
                  for k, f in fractions.items() if float(f) > 0.0]
        if not strata:
            return self._new(Filter(Literal(False, T.BOOLEAN), self._plan))
        return self._new(strata[0] if len(strata) == 1 else Union(tuple(strata)))

    def randomSplit(self, weights: Sequence[float],  # noqa: N802
                    seed: int | None = None) -> list["DataFrame"]:
        """Split the rows at random, in proportion to ``weights``: each split samples the same
        draws over a different range, on the rows sorted within their partitions (as Spark's
        ``randomSplit`` does, so the splits are disjoint and cover every row)."""
        for w in weights:
            if w < 0.0:
                raise AnalysisError(f"Weights must be positive, but got {w}.",
                                    error_class="VALUE_NOT_POSITIVE",
                                    parameters={"arg_name": "weights", "arg_value": str(w)})
        total = float(sum(weights))
        if total <= 0:
            raise AnalysisError(f"requirement failed: Sum of weights must be positive, but got "
                                f"{list(weights)}")
        seed = _random_seed() if seed is None else int(seed)
        orders = tuple(SortOrder(a, True, None) for a in self._plan.output
                       if a.data_type.is_orderable)
        base = Sort(orders, False, self._plan) if orders else self._plan
        bounds = [0.0]
        for w in weights:
            bounds.append(bounds[-1] + w / total)
        return [self._new(Sample(lo, hi, False, seed, base))
                for lo, hi in zip(bounds, bounds[1:])]

    # -- caching ------------------------------------------------------------------------------
    def persist(self, storageLevel: Any = None) -> "DataFrame":  # noqa: N803
        """Cache this DataFrame's rows (lazily: computed by the first query that reads them),
        so later queries over the same plan read them instead of computing it again: Arrow
        tables in memory on the local runtime, Spark's cache at ``storageLevel`` on the Spark
        runtime (default ``MEMORY_AND_DISK_DESER``, as PySpark's)."""
        level = StorageLevel.MEMORY_AND_DISK_DESER if storageLevel is None else storageLevel
        manager = self._session.cache_manager
        if manager.lookup(self._plan) is not None:
            return self
        frame = None
        if self._session.runtime == "spark":
            frame = self.to_spark().persist(_spark_storage_level(level))
        manager.cache_query(self._plan, level, frame)
        return self

    def cache(self) -> "DataFrame":
        """:meth:`persist` at the default level."""
        return self.persist()

    def unpersist(self, blocking: bool = False) -> "DataFrame":
        """Drop this DataFrame's rows from the cache (later queries compute them again)."""
        for entry in self._session.cache_manager.uncache_query(self._plan):
            if entry.frame is not None:
                entry.frame.unpersist(blocking)
        return self

    @property
    def storageLevel(self) -> StorageLevel:  # noqa: N802
        """The level this DataFrame is cached at (``StorageLevel.NONE`` when it is not)."""
        entry = self._session.cache_manager.lookup(self._plan)
        return StorageLevel.NONE if entry is None else entry.storage_level

    @property
    def is_cached(self) -> bool:
        """Whether this DataFrame's rows are in the session's cache."""
        return self._session.cache_manager.lookup(self._plan) is not None

    def dropDuplicatesWithinWatermark(self, subset: Sequence[str] | None = None  # noqa: N802
                                      ) -> "DataFrame":
        """Streaming deduplication within the watermark (``DeduplicateWithinWatermark``); on a
        batch DataFrame Spark's ``_LEGACY_ERROR_TEMP_3102`` (raised here, not at the action)."""
        if self._plan.is_streaming:
            return self._new(DeduplicateWithinWatermark(self._dedup_keys(subset), self._plan))
        raise AnalysisError("dropDuplicatesWithinWatermark is not supported with batch "
                            "DataFrames/DataSets;", error_class="_LEGACY_ERROR_TEMP_3102")


def _random_seed() -> int:
    """A seed for a sample without one (Spark draws a random long)."""
    return int.from_bytes(os.urandom(8), "big", signed=True)


def _spark_storage_level(level: Any) -> Any:
    """PySpark's ``StorageLevel`` equal to ``level`` (an Ember or a PySpark one)."""
    # imported here: pyspark is loaded only on the Spark runtime
    from pyspark import StorageLevel as SparkStorageLevel

    return SparkStorageLevel(level.useDisk, level.useMemory, level.useOffHeap,
                             level.deserialized, level.replication)


def _not_column_or_str_or_int(name: str, value: Any) -> AnalysisError:
    """PySpark's check of ``repartition``'s first argument (its message says Column or str)."""
    t = type(value).__name__
    return AnalysisError(f"Argument `{name}` should be Column or str, got {t}.",
                         error_class="NOT_EXPECTED_TYPE",
                         parameters={"arg_name": name, "arg_type": t,
                                     "expected_type": "Column or str"})


def _positive_partitions(n: int | None) -> int | None:
    """Spark's requirement on a number of partitions (an IllegalArgumentException there)."""
    if n is not None and n <= 0:
        raise AnalysisError(f"requirement failed: Number of partitions ({n}) must be positive.")
    return n


# ---------------------------------------------------------------------------------------------
# GroupedData


_AGG_ALIASES = {"avg": "avg", "mean": "avg", "average": "avg", "sum": "sum", "min": "min",
                "max": "max", "count": "count", "size": "count", "first": "first",
                "last": "last", "count_if": "count_if"}



# -- Python map functions (mapInPandas / mapInArrow / applyInPandas: ember.udf) --------------


def _python_map_node(df: "DataFrame", func: Any, schema: Any, kind: int
                     ) -> tuple[PythonUDF, tuple[AttributeReference, ...]]:
    """The PythonUDF of a map function over ``df``'s columns, and its output attributes."""
    out_type = to_return_type(schema)
    if not isinstance(out_type, T.StructType):
        raise AnalysisError(f"[NOT_STRUCT] The schema must be a struct type, got "
                            f"{out_type.simple_string()}.", error_class="NOT_STRUCT")
    name = getattr(func, "__name__", type(func).__name__)
    call = PythonUDF(name, func, out_type, tuple(df._plan.output), kind)
    attrs = tuple(AttributeReference(f.name, f.data_type, f.nullable) for f in out_type.fields)
    return call, attrs


def _map_in(df: "DataFrame", func: Any, schema: Any, is_arrow: bool, barrier: bool
            ) -> "DataFrame":
    kind = (PythonEvalType.SQL_MAP_ARROW_ITER_UDF if is_arrow
            else PythonEvalType.SQL_MAP_PANDAS_ITER_UDF)
    call, attrs = _python_map_node(df, func, schema, kind)
    return df._new(MapInPandas(call, attrs, df._plan, is_arrow, barrier))


def _map_in_pandas(self: "DataFrame", func: Any, schema: Any, barrier: bool = False,
                   profile: Any = None) -> "DataFrame":
    """PySpark's ``mapInPandas``: ``func`` maps an iterator of the partition's pandas
    DataFrames to an iterator of pandas DataFrames of ``schema``."""
    return _map_in(self, func, schema, False, barrier)


def _map_in_arrow(self: "DataFrame", func: Any, schema: Any, barrier: bool = False,
                  profile: Any = None) -> "DataFrame":
    """PySpark's ``mapInArrow``: ``func`` maps an iterator of the partition's
    ``pyarrow.RecordBatch`` es to an iterator of RecordBatches of ``schema``."""
    return _map_in(self, func, schema, True, barrier)


DataFrame.mapInPandas = _map_in_pandas  # type: ignore[attr-defined]
DataFrame.mapInArrow = _map_in_arrow  # type: ignore[attr-defined]


class GroupedData:
    """The result of ``DataFrame.groupBy``: call ``agg`` or a shortcut to get a DataFrame."""

    __slots__ = ("_df", "_grouping", "_pivot", "_analytics")

    def __init__(self, df: DataFrame, grouping: tuple[Expression, ...],
                 pivot: tuple[Expression, tuple[Expression, ...]] | None = None,
                 analytics: Any = None) -> None:
        self._df = df
        self._grouping = grouping
        self._pivot = pivot
        #: ``rollup`` / ``cube``: Rollup or Cube; ``groupingSets``: the sets
        self._analytics = analytics

    def __getattr__(self, name: str) -> Any:
        raise missing_attribute("GroupedData", "GroupedData", name)

    def pivot(self, pivot_col: Any, values: Sequence[Any] | None = None) -> "GroupedData":
        """Pivot on ``pivot_col``: the aggregation that follows makes one column per value (per
        value and aggregate when there are several, named ``value_aggregate``).

        Without ``values``, Spark's: the column's distinct values, sorted, collected first
        (an error past ``spark.sql.pivotMaxValues`` of them).

        >>> df.groupBy("cat").pivot("yr", [2023, 2024]).sum("amt")   # doctest: +SKIP
        """

        if self._analytics is not None:
            raise UnsupportedError(
                "The feature is not supported: PIVOT clause following a GROUP BY clause. Consider "
                "pushing the GROUP BY into a subquery.",
                error_class="UNSUPPORTED_FEATURE.PIVOT_AFTER_GROUP_BY")
        if self._pivot is not None:
            raise UnsupportedError("The feature is not supported: Repeated PIVOTs.",
                                   error_class="UNSUPPORTED_FEATURE.REPEATED_PIVOT")
        col = _col_expr(pivot_col)
        if values is None:
            max_values = self._df._session.sql_conf.get(PIVOT_MAX_VALUES)
            distinct = self._df.select(Column(col)).distinct().limit(max_values + 1)
            attr = distinct._plan.output[0]
            rows = distinct.orderBy(Column(attr)).collect()
            if len(rows) > max_values:
                name = ".".join(attr.qualifier + (attr.name,))
                raise AnalysisError(
                    f"The pivot column {name} has more than {max_values} distinct values, this "
                    "could indicate an error. If this was intended, set spark.sql.pivotMaxValues "
                    "to at least the number of distinct values of the pivot column.",
                    error_class="_LEGACY_ERROR_TEMP_1324",
                    parameters={"pivotColumn": name, "maxValues": str(max_values)})
            exprs = tuple(Literal(r[0], attr.data_type) for r in rows)
        else:
            exprs = tuple(to_expr(v) if isinstance(v, Column) else literal_expr(v)
                          for v in values)
        return GroupedData(self._df, self._grouping, (col, exprs))

    def agg(self, *exprs: Any) -> DataFrame:
        """``agg(F.sum("b"), F.count("*").alias("n"))`` or ``agg({"b": "max", "*": "count"})``.
        The output has the grouping columns first, then the aggregates (as in PySpark)."""
        if len(exprs) == 1 and isinstance(exprs[0], dict):
            spec = exprs[0]
            aggs = [_named(_dict_agg(c, spec[c])) for c in jvm_map_order(spec)]
        else:
            if not exprs:
                raise AnalysisError("agg() needs at least one aggregate expression",
                                    error_class="_LEGACY_ERROR_TEMP_1313")
            aggs = [_named(to_expr(e)) for e in exprs]
            self._df._check_refs(*aggs)
        return self._aggregate(aggs)

    def _aggregate(self, aggs: Sequence[Expression]) -> DataFrame:
        grouping_out = [_named(g) for g in self._grouping]
        if self._pivot is not None:
            col, values = self._pivot
            return self._df._new(Pivot(tuple(grouping_out), (col,), tuple((v,) for v in values),
                                       (None,) * len(values), tuple(aggs), self._df._plan))
        plan = Aggregate(self._group_by(), tuple(grouping_out) + tuple(aggs), self._df._plan)
        return self._df._new(plan)

    def _group_by(self) -> tuple[Expression, ...]:
        """The Aggregate's GROUP BY (Spark's ``RelationalGroupedDataset.toDF``)."""
        kind = self._analytics
        if kind is None:
            return self._grouping
        if isinstance(kind, tuple):
            flat = tuple(e for s in kind for e in s)
            starts = [sum(len(s) for s in kind[:i]) for i in range(len(kind))]
            indexes = tuple(tuple(range(b, b + len(s))) for b, s in zip(starts, kind))
            return (GroupingSets(indexes, flat, self._grouping),)
        return (kind(tuple((i,) for i in range(len(self._grouping))), self._grouping),)

    def count(self) -> DataFrame:
        """Rows per group, in a column named ``count``."""
        return self._aggregate([Alias(UnresolvedFunction("count", (Literal(1, T.INT),)),
                                      "count")])

    def _numeric(self, fn: str, cols: tuple[str, ...]) -> DataFrame:
        if not cols:
            cols = tuple(a.name for a in self._df._plan.output if a.data_type.is_numeric)
        else:
            for c in cols:
                a = self._df._resolve(c)
                if not a.data_type.is_numeric:
                    raise AnalysisError(
                        f'"{c}" is not a numeric column. Aggregation function can only be applied '
                        "on a numeric column.", error_class="_LEGACY_ERROR_TEMP_1277")
        return self._aggregate([
            UnresolvedAlias(UnresolvedFunction(fn, (UnresolvedAttribute(parse_column_name(c)),)))
            for c in cols
        ])

    def sum(self, *cols: str) -> DataFrame:  # noqa: A003
        return self._numeric("sum", cols)

    def avg(self, *cols: str) -> DataFrame:
        return self._numeric("avg", cols)

    mean = avg

    def min(self, *cols: str) -> DataFrame:  # noqa: A003
        return self._numeric("min", cols)

    def max(self, *cols: str) -> DataFrame:  # noqa: A003
        return self._numeric("max", cols)


def _i32(x: int) -> int:
    x &= 0xFFFFFFFF
    return x - (1 << 32) if x >= 1 << 31 else x


def _java_string_hash(s: str) -> int:
    """Java's ``String.hashCode`` (over UTF-16 code units, 32-bit wrap-around)."""
    data = s.encode("utf-16-be")
    h = 0
    for i in range(0, len(data), 2):
        h = _i32(31 * h + ((data[i] << 8) | data[i + 1]))
    return h


def _scala_improve(h: int) -> int:
    """``scala.collection.Hashing.improve`` (the hash the immutable CHAMP ``HashMap`` uses)."""
    h = _i32(h + ~_i32(h << 9))
    h = _i32(h ^ ((h & 0xFFFFFFFF) >> 14))
    h = _i32(h + _i32(h << 4))
    return _i32(h ^ ((h & 0xFFFFFFFF) >> 10))


def _champ_order(items: list[tuple[str, int]], shift: int = 0) -> list[str]:
    """Iteration order of a Scala immutable ``HashMap`` (CHAMP trie): a node's single entries by
    5-bit hash slice, then its sub-nodes depth first."""
    if shift >= 32:
        return [k for k, _ in items]
    groups: dict[int, list[tuple[str, int]]] = {}
    for k, h in items:
        groups.setdefault(((h & 0xFFFFFFFF) >> shift) & 31, []).append((k, h))
    ordered = sorted(groups.items())
    out = [g[0][0] for _, g in ordered if len(g) == 1]
    for _, g in ordered:
        if len(g) > 1:
            out += _champ_order(g, shift + 5)
    return out


def jvm_map_order(spec: dict[str, Any]) -> list[str]:
    """The order in which Spark sees the keys of PySpark's ``agg({...})`` dict.

    PySpark hands the dict to the JVM as a ``java.util.HashMap`` (iterated by hash bucket), and
    ``GroupedData.agg`` turns it into a Scala immutable ``Map`` (insertion order up to 4 entries,
    a CHAMP hash trie beyond). The output columns follow that order, not the dict's.

    >>> jvm_map_order({"salary": "max", "id": "count"})
    ['id', 'salary']
    """
    keys = list(spec)
    cap = 16
    while len(keys) > cap * 0.75:
        cap *= 2

    def bucket(k: str) -> int:
        h = _java_string_hash(k)
        return (h ^ ((h & 0xFFFFFFFF) >> 16)) & (cap - 1)

    keys.sort(key=bucket)  # stable: a bucket's chain keeps insertion order
    if len(keys) <= 4:
        return keys
    return _champ_order([(k, _scala_improve(_java_string_hash(k))) for k in keys])


def _dict_agg(column: str, fn: str) -> Expression:
    name = _AGG_ALIASES.get(fn.lower(), fn.lower())
    if column == "*" and name == "count":
        return UnresolvedFunction("count", (Literal(1, T.INT),))
    return UnresolvedFunction(name, (UnresolvedAttribute(parse_column_name(column)),))


# ---------------------------------------------------------------------------------------------
# Expression helpers


def _select_expr(c: Any) -> Expression:
    if isinstance(c, str):
        return column_from_name(c).expr
    if isinstance(c, Column):
        return c.expr
    raise TypeError(f"select() takes column names or Columns, got {type(c).__name__}")


def _col_expr(c: Any) -> Expression:
    if isinstance(c, str):
        return column_from_name(c).expr
    return to_expr(c)


def _named(e: Expression) -> Expression:
    """A select-list item: named expressions and stars as they are, anything else wrapped in
    ``UnresolvedAlias`` so the analyzer names it after its SQL (``(a + 1)``, ``count(1)``)."""
    if isinstance(e, (NamedExpression, UnresolvedStar, MultiAlias)):
        return e
    # PySpark names ``col("a").cast("int")`` after the column (the cast is not user-visible SQL).
    if isinstance(e, Cast):
        child = e.child
        if isinstance(child, (UnresolvedAttribute, AttributeReference)):
            return Alias(e, child.name_parts[-1] if isinstance(child, UnresolvedAttribute)
                         else child.name)
    return UnresolvedAlias(e)


def _sort_orders(cols: tuple[Any, ...], ascending: bool | Sequence[bool] | None
                 ) -> tuple[SortOrder, ...]:
    if len(cols) == 1 and isinstance(cols[0], (list, tuple)):
        cols = tuple(cols[0])
    if not cols:
        raise AnalysisError("orderBy() needs at least one column",
                            error_class="_LEGACY_ERROR_TEMP_3067")
    if ascending is None:
        flags = [True] * len(cols)
    elif isinstance(ascending, (bool, int)):
        flags = [bool(ascending)] * len(cols)
    else:
        flags = [bool(x) for x in ascending]
        if len(flags) != len(cols):
            raise ValueError("ascending must have one entry per sort column")
    orders = []
    for c, asc in zip(cols, flags):
        e = _col_expr(c)
        if isinstance(e, SortOrder):
            orders.append(e if ascending is None or asc else e.copy(ascending=False,
                                                                    nulls_first=None))
        else:
            orders.append(SortOrder(e, asc, None))
    return tuple(orders)


def _dedup_right(left: LogicalPlan, right: LogicalPlan) -> tuple[LogicalPlan, dict[int, int]]:
    """A self-join's right side gets fresh attribute ids (Spark's DeduplicateRelations), so
    ``df.join(df, ...)`` has two distinguishable inputs. Returns the id mapping used."""
    if not (left.output_set & right.output_set):
        return right, {}

    mapping: dict[int, int] = {}
    return fresh_copy(right, mapping), mapping


def _self_join_ambiguous(mapping: dict[int, int], right: LogicalPlan) -> frozenset[int]:
    """Attribute ids a self-join makes ambiguous: those whose fresh copy the right side outputs
    (a column only the left side has stays unambiguous, as in Spark)."""
    if not mapping:
        return frozenset()
    right_ids = {a.id for a in right.output}
    return frozenset(old for old, new in mapping.items() if new in right_ids)


def _check_self_join_refs(exprs: Sequence[Expression], ambiguous: frozenset[int],
                          mapping: dict[int, int]) -> None:
    """Raise Spark's ``_LEGACY_ERROR_TEMP_1182`` for resolved Column references (``df["a"]``)
    to ambiguous self-join attributes. A trivially true ``df.k == df.k`` join condition is
    exempt (``join`` resolves it to both sides, as Spark's ``Dataset.join`` does)."""
    if not ambiguous:
        return

    found: dict[int, AttributeReference] = {}

    def visit(e: Expression) -> None:
        if (isinstance(e, (EqualTo, EqualNullSafe)) and isinstance(e.left, AttributeReference)
                and isinstance(e.right, AttributeReference) and e.left.id == e.right.id
                and e.left.id in mapping):
            return
        if isinstance(e, AttributeReference):
            if e.id in ambiguous:
                found.setdefault(e.id, e)
            return
        for c in e.children:
            visit(c)

    for e in exprs:
        visit(e)
    if found:
        cols = ", ".join(f"{a.name}#{a.id}" for a in found.values())
        raise AnalysisError(
            f"Column {cols} are ambiguous. It's probably because you joined several Datasets "
            "together, and some of these Datasets are the same. This column points to one of the "
            "Datasets but Spark is unable to figure out which one. Please alias the Datasets "
            "with different names via `Dataset.as` before joining them, and specify the column "
            'using qualified name, e.g. `df.as("a").join(df.as("b"), $"a.id" > $"b.id")`. You '
            "can also set spark.sql.analyzer.failAmbiguousSelfJoin to false to disable this "
            "check.", error_class="_LEGACY_ERROR_TEMP_1182")


def _fix_trivial_self_equality(cond: Expression, mapping: dict[int, int],
                               right: LogicalPlan) -> Expression:
    """``a.join(b, a.k == b.k)`` where ``b`` derives from ``a`` (same ids): as Spark's
    ``Dataset.join`` does, resolve the right side of such a trivially true equality to the
    right input."""
    if not mapping:
        return cond

    by_id = {a.id: a for a in right.output}

    def fix(e: Expression) -> Expression | None:
        if isinstance(e, (EqualTo, EqualNullSafe)):
            lhs, rhs = e.left, e.right
            if (isinstance(lhs, AttributeReference) and isinstance(rhs, AttributeReference)
                    and lhs.id == rhs.id and lhs.id in mapping):
                new = by_id.get(mapping[lhs.id])
                if new is not None:
                    return type(e)(lhs, new)
        return None

    return cond.transform_down(fix)


# ---------------------------------------------------------------------------------------------
# printSchema


_TYPE_NAMES = {
    T.IntegerType: "integer", T.LongType: "long", T.ShortType: "short", T.ByteType: "byte",
    T.FloatType: "float", T.DoubleType: "double", T.BooleanType: "boolean",
    T.StringType: "string", T.BinaryType: "binary", T.DateType: "date",
    T.TimestampType: "timestamp", T.NullType: "void", T.StructType: "struct",
    T.ArrayType: "array", T.MapType: "map",
}


def type_name(dt: T.DataType) -> str:
    """Spark's ``DataType.typeName`` (``integer``, ``long``, ``decimal(10,2)`` ...)."""
    if isinstance(dt, T.DecimalType):
        return dt.simple_string()
    return _TYPE_NAMES.get(type(dt), dt.simple_string())


def _schema_lines(lines: list[str], prefix: str, name: str, dt: T.DataType, null_text: str,
                  depth: int, max_depth: int | None) -> None:
    if max_depth is not None and depth > max_depth:
        return
    suffix = f" ({null_text})" if null_text else ""  # a map's key line has none
    lines.append(f"{prefix}-- {_escape(name)}: {type_name(dt)}{suffix}")
    inner = prefix + "    |"
    if isinstance(dt, T.StructType):
        for f in dt.fields:
            _schema_lines(lines, inner, f.name, f.data_type,
                          f"nullable = {str(f.nullable).lower()}", depth + 1, max_depth)
    elif isinstance(dt, T.ArrayType):
        _schema_lines(lines, inner, "element", dt.element_type,
                      f"containsNull = {str(dt.contains_null).lower()}", depth + 1, max_depth)
    elif isinstance(dt, T.MapType):
        _schema_lines(lines, inner, "key", dt.key_type, "", depth + 1, max_depth)
        _schema_lines(lines, inner, "value", dt.value_type,
                      f"valueContainsNull = {str(dt.value_contains_null).lower()}", depth + 1,
                      max_depth)


# ---------------------------------------------------------------------------------------------
# Results: Arrow -> Rows, and Spark's show() text


def _localize_timestamps(table: pa.Table, time_zone: str) -> pa.Table:
    """Timestamp columns as naive wall-clock times in ``time_zone`` (what PySpark returns)."""
    import pyarrow.compute as pc

    if not any(pa.types.is_timestamp(f.type) for f in table.schema):
        return table
    cols = []
    for col in table.columns:
        if pa.types.is_timestamp(col.type) and col.type.tz is not None:
            col = pc.local_timestamp(col.cast(pa.timestamp(col.type.unit, tz=time_zone)))
        cols.append(col)
    return pa.Table.from_arrays(cols, names=table.column_names)


def _struct_to_row(v: Any, dt: T.DataType) -> Any:
    if v is None:
        return None
    if isinstance(dt, T.StructType):
        return make_row(tuple(_struct_to_row(v.get(f.name), f.data_type) for f in dt.fields),
                        tuple(f.name for f in dt.fields))
    if isinstance(dt, T.ArrayType) and _has_struct(dt.element_type):
        return [_struct_to_row(x, dt.element_type) for x in v]
    if isinstance(dt, T.MapType):
        # Arrow gives a map as a list of (key, value) pairs; PySpark gives a dict
        return {_struct_to_row(k, dt.key_type): _struct_to_row(x, dt.value_type) for k, x in v}
    return v


def _has_struct(dt: T.DataType) -> bool:
    if isinstance(dt, T.StructType):
        return True
    if isinstance(dt, T.ArrayType):
        return _has_struct(dt.element_type)
    return isinstance(dt, T.MapType)


def python_local_time_zone() -> str:
    """The IANA name of this process's local time zone (``TZ``, else ``/etc/localtime``)."""
    import os

    tz = os.environ.get("TZ", "").lstrip(":")
    if tz:
        return tz
    try:
        target = os.path.realpath("/etc/localtime")
    except OSError:
        return "UTC"
    return target.split("zoneinfo/", 1)[1] if "zoneinfo/" in target else "UTC"


def _python_values(col: pa.ChunkedArray | pa.Array) -> list[Any]:
    """``col.to_pylist()``; a date or timestamp beyond Python's years 1-9999 (Spark's range is
    wider: ``date_add(DATE '9999-12-31', 1)`` is ``+10000-01-01``) fails with
    ``DATETIME_OVERFLOW`` instead of Python's OverflowError."""
    try:
        return col.to_pylist()
    except (OverflowError, ValueError) as e:
        raise ExecutionError(
            f"Datetime operation overflow: a {col.type} value outside Python's datetime range "
            f"(years 1-9999) cannot be returned as a Python value ({e}).",
            error_class="DATETIME_OVERFLOW",
            parameters={"operation": f"converting a {col.type} value to Python"}) from e


def _table_to_rows(table: pa.Table, time_zone: str) -> list[Row]:
    table = _localize_timestamps(table, time_zone)
    names = tuple(table.column_names)
    columns = []
    for f, col in zip(table.schema, table.columns):
        values = _python_values(col)
        dt = T.from_arrow(f.type)
        if _has_struct(dt):
            values = [_struct_to_row(v, dt) for v in values]
        columns.append(values)
    if not columns:
        return [make_row((), ()) for _ in range(table.num_rows)]
    return [make_row(vals, names) for vals in zip(*columns)]


_META = str.maketrans({"\n": "\\n", "\r": "\\r", "\t": "\\t", "\f": "\\f", "\b": "\\b",
                       "\v": "\\v", "\a": "\\a"})


def _escape(s: str) -> str:
    return s.translate(_META)


def java_double_string(v: float, single: bool = False) -> str:
    """Java's ``Double.toString`` / ``Float.toString`` (what Spark prints); see
    :func:`ember.formatting.java_double_str`."""
    return java_double_str(v, single)


def _fmt_ts(v: _dt.datetime) -> str:
    s = (f"{v.year:04d}-{v.month:02d}-{v.day:02d} "
         f"{v.hour:02d}:{v.minute:02d}:{v.second:02d}")
    if v.microsecond:
        s += f".{v.microsecond:06d}".rstrip("0")
    return s


def format_value(v: Any, dt: T.DataType, nested: bool = False) -> str:
    """One value as Spark's ``show()`` prints it (Spark 4: ``NULL`` for nulls)."""
    if v is None:
        return "NULL"
    match dt:
        case T.BooleanType():
            return "true" if v else "false"
        case T.DoubleType():
            return java_double_string(v)
        case T.FloatType():
            return java_double_string(v, single=True)
        case T.DecimalType():
            return format(v, "f")
        case T.DateType():
            return f"{v.year:04d}-{v.month:02d}-{v.day:02d}"
        case T.TimestampType() | T.TimestampNTZType():
            return _fmt_ts(v)
        case T.CalendarIntervalType():
            return interval_string(v.months, v.days, v.nanoseconds // 1000)
        case T.BinaryType():
            return "[" + " ".join(f"{b:02X}" for b in v) + "]"
        case T.DayTimeIntervalType() | T.YearMonthIntervalType():

            return python_interval_string(v, dt)
        case T.ArrayType(element_type=et):
            return "[" + ", ".join(format_value(x, et, True) for x in v) + "]"
        case T.StructType(fields=fields):
            return "{" + ", ".join(format_value(v.get(f.name), f.data_type, True)
                                   for f in fields) + "}"
        case T.MapType(key_type=kt, value_type=vt):
            return "{" + ", ".join(f"{format_value(k, kt, True)} -> {format_value(x, vt, True)}"
                                   for k, x in v) + "}"
        case _:
            return str(v)


def _half_width(s: str) -> int:
    """Display width: East Asian wide/full-width characters count twice (Spark's
    ``Utils.stringHalfWidth``)."""
    if s.isascii():
        return len(s)
    return sum(2 if unicodedata.east_asian_width(c) in ("W", "F") else 1 for c in s)


def show_string(table: pa.Table, types: Sequence[T.DataType], num_rows: int, truncate: int,
                vertical: bool, time_zone: str) -> str:
    """Spark's ``Dataset.showString`` over the first ``num_rows + 1`` rows in ``table``."""
    table = _localize_timestamps(table, time_zone)
    has_more = table.num_rows > num_rows
    table = table.slice(0, num_rows)
    names = table.column_names

    def cut(s: str) -> str:
        s = _escape(s)
        if truncate > 0 and len(s) > truncate:
            return s[:truncate] if truncate < 4 else s[: truncate - 3] + "..."
        return s

    header = [_escape(n) for n in names]  # Spark's getRows truncates the cells, not the names
    columns = [[cut(format_value(v, dt)) for v in _python_values(col)]
               for col, dt in zip(table.columns, types)]
    rows = [list(r) for r in zip(*columns)] if columns else [[] for _ in range(table.num_rows)]
    out: list[str] = []
    if not vertical:
        widths = [3] * len(header)
        for i, h in enumerate(header):
            widths[i] = max(widths[i], _half_width(h))
            for r in rows:
                widths[i] = max(widths[i], _half_width(r[i]))

        def pad(s: str, w: int) -> str:
            fill = " " * (w - _half_width(s))
            return fill + s if truncate > 0 else s + fill

        sep = "+" + "+".join("-" * w for w in widths) + "+"
        out.append(sep)
        out.append("|" + "|".join(pad(h, w) for h, w in zip(header, widths)) + "|")
        out.append(sep)
        for r in rows:
            out.append("|" + "|".join(pad(c, w) for c, w in zip(r, widths)) + "|")
        out.append(sep)
    else:
        name_w = max([3] + [_half_width(h) for h in header])
        data_w = max([3] + [_half_width(c) for r in rows for c in r])
        for i, r in enumerate(rows):
            out.append(f"-RECORD {i}".ljust(name_w + data_w + 5, "-"))
            for h, c in zip(header, r):
                out.append(" " + h + " " * (name_w - _half_width(h)) + " | " + c
                           + " " * (data_w - _half_width(c)) + " ")
        if not rows:
            out.append("(0 rows)")
    if has_more:
        out.append(f"only showing top {num_rows} {'row' if num_rows == 1 else 'rows'}")
    return "\n".join(out) + "\n"


def _apply_in(g: GroupedData, func: Any, schema: Any, is_arrow: bool) -> DataFrame:
    if g._pivot is not None or g._analytics is not None:
        raise UnsupportedError("applyInPandas after pivot, rollup or cube is not supported.",
                               error_class="UNSUPPORTED_FEATURE")
    df = g._df
    kind = (PythonEvalType.SQL_GROUPED_MAP_ARROW_UDF if is_arrow
            else PythonEvalType.SQL_GROUPED_MAP_PANDAS_UDF)
    call, attrs = _python_map_node(df, func, schema, kind)
    return df._new(FlatMapGroupsInPandas(g._grouping, call, attrs, df._plan, is_arrow))


def _apply_in_pandas(self: GroupedData, func: Any, schema: Any) -> DataFrame:
    """PySpark's ``applyInPandas``: ``func`` maps each group (a pandas DataFrame of all the
    columns; with two parameters, the group's key tuple first) to a pandas DataFrame of
    ``schema``."""
    return _apply_in(self, func, schema, False)


def _apply_in_arrow(self: GroupedData, func: Any, schema: Any) -> DataFrame:
    """PySpark's ``applyInArrow``: as ``applyInPandas`` over ``pyarrow.Table`` s."""
    return _apply_in(self, func, schema, True)


def _apply(self: GroupedData, udf: Any) -> DataFrame:
    """PySpark's deprecated ``apply``: a ``pandas_udf(f, schema, PandasUDFType.GROUPED_MAP)``
    applied as ``applyInPandas(f, schema)``."""
    if getattr(udf, "evalType", None) != PythonEvalType.SQL_GROUPED_MAP_PANDAS_UDF:
        raise AnalysisError(
            "Eval type for UDF must be SQL_GROUPED_MAP_PANDAS_UDF.",
            error_class="INVALID_UDF_EVAL_TYPE")
    return _apply_in(self, udf.func, udf.returnType, False)


GroupedData.apply = _apply  # type: ignore[attr-defined]
GroupedData.applyInPandas = _apply_in_pandas  # type: ignore[attr-defined]
GroupedData.applyInArrow = _apply_in_arrow  # type: ignore[attr-defined]


class PandasCogroupedOps:
    """``left.groupBy(k).cogroup(right.groupBy(k))`` (PySpark's ``PandasCogroupedOps``)."""

    __slots__ = ("_left", "_right")

    def __init__(self, left: GroupedData, right: GroupedData) -> None:
        self._left, self._right = left, right

    def applyInPandas(self, func: Any, schema: Any) -> DataFrame:  # noqa: N802
        """``func(left_pdf, right_pdf)`` (or ``func(key, left_pdf, right_pdf)``) per key of
        either side, returning a pandas DataFrame of ``schema``."""
        left, right = self._left._df, self._right._df
        out_type = to_return_type(schema)
        call, attrs = _python_map_node(left, func, out_type,
                                       PythonEvalType.SQL_COGROUPED_MAP_PANDAS_UDF)
        call = call.copy(arguments=tuple(left._plan.output) + tuple(right._plan.output))
        return left._new(FlatMapCoGroupsInPandas(_resolved(self._left), _resolved(self._right),
                                                 call, attrs, left._plan, right._plan))


def _resolved(g: GroupedData) -> tuple[Expression, ...]:
    """The grouping expressions resolved against their own DataFrame (a name would be
    ambiguous between the two sides of a cogroup)."""
    items = g._df.select(*(Column(e) for e in g._grouping))._plan.project_list
    return tuple(e.child if isinstance(e, Alias) else e for e in items)


def _cogroup(self: GroupedData, other: GroupedData) -> PandasCogroupedOps:
    """PySpark's ``cogroup``: the two grouped DataFrames, for ``applyInPandas``."""
    return PandasCogroupedOps(self, other)


GroupedData.cogroup = _cogroup  # type: ignore[attr-defined]
