"""Ember results as PySpark DataFrames (``ember.DataFrame.to_spark``).

The other direction, a PySpark DataFrame as an Ember table, is a source
(``SparkDataFrameScanExec``: :func:`ember.runtime.spark.sources.spark_dataframe` on the Spark
runtime, ``DataFrame.toArrow`` on the local one).

- Spark runtime: nothing is collected.  The query's output partitions are the RDD of Arrow
  blobs :meth:`SparkRuntime.rdd` builds; ``spark.createDataFrame(rdd of (blob,), "b binary")``
  wraps it and ``mapInArrow(blobs_to_arrow)`` decodes each blob into Spark's Arrow types for the
  result's schema.  The returned DataFrame is as lazy as any other: every action on it (or on a
  DataFrame derived from it) runs the Ember plan again as part of Spark's job.  The runtime's
  persisted RDDs and broadcasts are unpersisted (not destroyed: Spark recomputes / re-sends
  them if still needed) only when the returned DataFrame is garbage collected.
- Local runtime: the result is computed in process and handed to the active SparkSession as an
  Arrow table (``spark.createDataFrame(table, schema)``).
"""

from __future__ import annotations

import functools
import weakref
from typing import TYPE_CHECKING, Any

import pyarrow as pa

from ember.conf import SESSION_TIME_ZONE, SPARK_ARROW_LARGE_VAR_TYPES
from ember.errors import UnsupportedError
from ember.execution.kernels.batches import conform_batch
from ember.runtime.spark import worker
from ember.runtime.spark.runtime import SparkRuntime, prepare_for_spark
from ember.runtime.spark.session import push_conf
from ember.runtime.spark.sources import spark_ddl as ddl

if TYPE_CHECKING:  # pragma: no cover
    from ember.query_execution import QueryExecution

__all__ = ["to_spark", "spark_ddl"]


def spark_ddl(attrs: Any) -> str:
    """The Spark DDL schema of ``attrs`` (names as given, may repeat; every column nullable)."""

    return ddl(attrs)


def to_spark(qe: "QueryExecution") -> Any:
    """The result of ``qe`` as a PySpark DataFrame (lazy on the Spark runtime)."""
    session = qe.session
    out = qe.analyzed.output
    if not out:
        raise UnsupportedError("to_spark() needs at least one column (PySpark DataFrames "
                               "without columns cannot carry rows through Arrow)")
    ddl = spark_ddl(out)
    if session.runtime == "spark":
        return _lazy_frame(qe, ddl)
    from pyspark.sql import SparkSession

    spark = SparkSession.getActiveSession()
    if spark is None:
        raise UnsupportedError("to_spark() on the local runtime needs an active SparkSession "
                               "(start one, or use ember.Session(runtime='spark'))")
    table = qe.to_arrow()
    return spark.createDataFrame(_spark_arrow(table, spark, ddl), ddl)


def _spark_arrow_schema(spark: Any, ddl: str) -> tuple[Any, pa.Schema]:
    """The Spark schema of ``ddl`` and the Arrow schema Spark expects for it (its own string /
    binary widths and the session time zone on timestamps)."""
    from pyspark.sql.pandas.types import to_arrow_schema
    from pyspark.sql.types import DataType

    schema = DataType.fromDDL(ddl)
    arrow = to_arrow_schema(schema, timezone=SESSION_TIME_ZONE.read_spark(spark),
                            prefers_large_types=SPARK_ARROW_LARGE_VAR_TYPES.read_spark(spark))
    return schema, arrow


def _spark_arrow(table: pa.Table, spark: Any, ddl: str) -> pa.Table:
    """``table`` cast to Spark's Arrow types for ``ddl`` (positional: names may repeat)."""

    _, arrow = _spark_arrow_schema(spark, ddl)
    batches = [conform_batch(b, arrow) for b in table.to_batches() if b.num_rows]
    return pa.Table.from_batches(batches, schema=arrow)


def _lazy_frame(qe: "QueryExecution", ddl: str) -> Any:
    session = qe.session
    spark = session.spark_session
    push_conf(spark, session.sql_conf)
    rt = SparkRuntime(spark, session.sql_conf)
    rdd = rt.rdd(prepare_for_spark(qe.executed_plan))
    schema, arrow = _spark_arrow_schema(spark, ddl)
    blobs = spark.createDataFrame(rdd.map(_as_row), "b binary")
    df = blobs.mapInArrow(functools.partial(worker.blobs_to_arrow, arrow), schema)
    # Keep the runtime's persisted RDDs / broadcasts while the DataFrame is alive.
    weakref.finalize(df, rt.close)
    return df


def _as_row(item: Any) -> tuple[bytes]:
    """One RDD element as a row of the ``b binary`` frame: a blob, or a record batch that a
    source hands over in process (:func:`worker.spark_arrow_batches`) encoded as one."""
    if isinstance(item, pa.RecordBatch):
        return (worker.encode(item),)
    return (item,)
