"""Writes on the Spark runtime: the rows go through Spark's own file writers.

The write's query (the ``WriteFilesExec`` child of Ember's physical plan) becomes a lazy PySpark
DataFrame over its RDD of Arrow blobs (as ``DataFrame.to_spark``: :mod:`.interop`), its columns
named as the command names them, and Spark writes it with
``DataFrameWriter.format(...).options(...).partitionBy(...).save(directory)``: its tasks run in
parallel on the cluster, each writes its files, and Spark's commit protocol
(``FileOutputCommitter``) commits them into ``directory`` -- the job's staging directory, from
which Ember's commit (:mod:`ember.execution.file_commit`) moves them into the target.  Spark
formats the values, names the files and lays out the partition directories itself.
"""

from __future__ import annotations

import functools
from typing import Any

from ember.conf import SQLConf
from ember.physical.nodes import SparkPlan
from ember.plans.logical.writes import PARTITION_COLUMNS_OPTION
from ember.runtime.spark import worker
from ember.runtime.spark.errors import task_errors
from ember.runtime.spark.interop import _as_row, _spark_arrow_schema, spark_ddl
from ember.runtime.spark.runtime import SparkRuntime, prepare_for_spark
from ember.runtime.spark.session import push_conf

__all__ = ["write_with_spark"]


class _Renamed:
    """``attrs`` under other names, for the Spark DDL of the written columns."""

    def __init__(self, name: str, attr: Any) -> None:
        self.name = name
        self.data_type = attr.data_type
        self.nullable = attr.nullable


def _counted(schema: Any, rows: Any, batches: Any) -> Any:
    """``worker.blobs_to_arrow``, adding each batch's rows to the accumulator ``rows`` (the
    write job's tasks are its result tasks, whose updates Spark applies once)."""
    for b in worker.blobs_to_arrow(schema, batches):
        rows.add(b.num_rows)
        yield b


def write_with_spark(spark: Any, conf: SQLConf, cmd: Any, plan: SparkPlan,
                     directory: str, mode: str = "ErrorIfExists") -> int:
    """Write ``plan``'s rows (the command's query, planned) under ``directory`` with Spark's
    writer for ``cmd``'s format, options and partition columns (``mode``: Spark's save mode;
    a staging directory is new, so the default); the number of rows written."""
    push_conf(spark, conf)
    names = list(cmd.column_names)
    attrs = [_Renamed(n, a) for n, a in zip(names, plan.output)]
    ddl = spark_ddl(attrs)
    rt = SparkRuntime(spark, conf)
    try:
        rdd = rt.rdd(prepare_for_spark(plan))
        schema, arrow = _spark_arrow_schema(spark, ddl)
        blobs = spark.createDataFrame(rdd.map(_as_row), "b binary")
        rows = spark.sparkContext.accumulator(0)
        frame = blobs.mapInArrow(functools.partial(_counted, arrow, rows), schema)
        options = {k: v for k, v in cmd.options
                   if k.lower() not in ("path", PARTITION_COLUMNS_OPTION)}
        by_id = {a.id: n for a, n in zip(plan.output, names)}
        writer = frame.write.format(cmd.file_format).options(**options)
        if cmd.partition_columns:
            writer = writer.partitionBy(*[by_id[a.id] for a in cmd.partition_columns])
        with task_errors("writing files"):
            writer.mode(mode.lower()).save(directory)
        return rows.value
    finally:
        rt.close()
