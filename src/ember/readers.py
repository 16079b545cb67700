"""File sources: ``session.read`` (PySpark's DataFrameReader) and ``CREATE TEMP VIEW ... USING``.

Both build a :class:`~ember.plans.logical.nodes.FileRelation` whose attributes come from the files'
schema: Parquet's own schema, or for CSV the header (``header``, else ``_c0``, ``_c1`` ...) and,
with ``inferSchema``, types inferred from the data the way Spark does for the common cases
(``int`` when every value fits 32 bits, else ``bigint``; ``double``; ``boolean``; ``date``;
``timestamp``; ``string`` otherwise); for JSON, Spark's ``JsonInferSchema``
(``ember.execution.json_source``). Hive-style ``key=value`` directories add typed partition
columns (``ember.execution.file_index``). The executor (``ember.execution.scan``) reads the files
and casts the columns to those types.

>>> df = session.read.csv("people.csv", header=True, inferSchema=True)   # doctest: +SKIP
>>> df = session.read.format("parquet").load("orders/")                  # doctest: +SKIP
>>> df = session.read.json("events/", primitivesAsString=True)           # doctest: +SKIP
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ember import types as T
from ember.dataframe import DataFrame
from ember.errors import AnalysisError
from ember.file_relations import expand_paths, file_relation, infer_file_schema, option_string
from ember.pyspark_api import missing_attribute
from ember.sql.schema_ddl import parse_ddl_schema

if TYPE_CHECKING:  # pragma: no cover
    from ember.session import Session

__all__ = ["DataFrameReader", "file_relation", "infer_file_schema", "expand_paths"]


def _schema_of(schema: Any) -> T.StructType:
    """A user schema: a DDL string (``"a int, b string"``) or a ``StructType`` (Ember's or
    PySpark's, converted by :func:`ember.types.from_pyspark`)."""
    schema = T.as_ember_type(schema)
    if isinstance(schema, T.StructType):
        return schema
    if isinstance(schema, str):
        return parse_ddl_schema(schema)
    raise AnalysisError(
        f"The schema must be a DDL string or a StructType, not {type(schema).__name__}.",
        error_class="NOT_STR_OR_STRUCT",
        parameters={"arg_name": "schema", "arg_type": type(schema).__name__},
    )


class DataFrameReader:
    """``session.read``: ``.parquet(path)``, ``.csv(path, header=..., inferSchema=...)``,
    ``.format(f).option(k, v).load(path)``.

    >>> session.read.option("header", True).csv("data.csv")   # doctest: +SKIP
    """

    def __init__(self, session: "Session") -> None:
        self._session = session
        self._format = "parquet"
        self._options: dict[str, str] = {}
        self._schema: T.StructType | None = None

    def format(self, source: str) -> "DataFrameReader":
        self._format = source.lower()
        return self

    def option(self, key: str, value: Any) -> "DataFrameReader":
        self._options[key.lower()] = option_string(value)
        return self

    def options(self, **options: Any) -> "DataFrameReader":
        for k, v in options.items():
            if v is not None:
                self.option(k, v)
        return self

    def schema(self, schema: Any) -> "DataFrameReader":
        """Use ``schema`` (a DDL string or a StructType) instead of inferring one. CSV columns
        are matched by position, Parquet columns by name (missing ones read as NULL)."""
        self._schema = _schema_of(schema)
        return self

    def load(self, path: str | list[str] | None = None, format: str | None = None,  # noqa: A002
             **options: Any) -> "DataFrame":
        if format is not None:
            self.format(format)
        self.options(**options)
        if path is None:
            path = self._options.get("path")
        if path is None:
            raise AnalysisError("'path' is not specified", error_class="UNABLE_TO_INFER_SCHEMA")
        paths = [path] if isinstance(path, str) else list(path)

        return DataFrame(self._session, file_relation(self._format, paths, self._options,
                                                      self._schema, self._session.sql_conf))

    def parquet(self, *paths: str, **options: Any) -> "DataFrame":
        """Read Parquet files or directories."""
        return self.format("parquet").load(list(paths), **options)

    def json(self, path: str | list[str], schema: Any = None, **options: Any) -> "DataFrame":
        """Read JSON Lines files (``multiLine=True``: one JSON value per file), the schema
        inferred as Spark's ``JsonInferSchema`` unless given (``ember.execution.json_source``)."""
        if schema is not None:
            self.schema(schema)
        self.options(**options)
        return self.format("json").load(path)

    def csv(self, path: str | list[str], schema: Any = None, sep: str | None = None,
            header: bool | str | None = None, inferSchema: bool | str | None = None,  # noqa: N803
            **options: Any) -> "DataFrame":
        """Read CSV files (Spark's defaults: no header, every column a string)."""
        if schema is not None:
            self.schema(schema)
        self.options(sep=sep, header=header, inferSchema=inferSchema, **options)
        return self.format("csv").load(path)

    def text(self, paths: str | list[str], wholetext: bool = False,
             lineSep: str | None = None, **options: Any) -> "DataFrame":  # noqa: N803
        """Read text files: a string column ``value`` with a row per line (``lineSep``: the line
        separator; default ``\\n``, ``\\r\\n`` or ``\\r``), or per file with ``wholetext``
        (``ember.execution.text_source``)."""
        self.options(wholetext=wholetext, lineSep=lineSep, **options)
        return self.format("text").load(paths)

    def table(self, tableName: str) -> "DataFrame":  # noqa: N803
        """The table or view ``tableName`` (PySpark's ``spark.read.table``, as ``spark.table``)."""
        return self._session.table(tableName)

    def __getattr__(self, name: str) -> Any:
        raise missing_attribute("DataFrameReader", "DataFrameReader", name)
