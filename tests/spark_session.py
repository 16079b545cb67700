"""The PySpark oracle: one local SparkSession configured the way every Ember test expects.

Used by the ``spark`` fixture in ``tests/conftest.py`` and by the golden generator
(``python tools/generate_goldens.py``), so both see the same Spark configuration.

Example::

    from tests.spark_session import get_spark
    spark = get_spark()
    spark.sql("select 1").collect()
"""

from __future__ import annotations

import atexit
import os
import shutil
import sys
import tempfile
from typing import Any

#: Configuration of the oracle session (Spark's ANSI mode is on by default in Spark 4).
SPARK_CONF: dict[str, str] = {
    "spark.ui.enabled": "false",
    "spark.sql.shuffle.partitions": "2",
    "spark.sql.session.timeZone": "UTC",
    "spark.driver.memory": "2g",
    "spark.ui.showConsoleProgress": "false",
    "spark.sql.adaptive.enabled": "true",
    # keep the driver start-up lean: tiny data only
    "spark.default.parallelism": "2",
    "spark.sql.execution.arrow.pyspark.enabled": "true",
    "spark.driver.extraJavaOptions": "-XX:+UseSerialGC -XX:TieredStopAtLevel=1",
    # as ember.Session(runtime="spark") builds its session: Python workers over a Unix socket
    # (over TCP each Python task stalls ~45 ms; ember.runtime.spark.session.SPARK_DEFAULTS)
    "spark.python.unix.domain.socket.enabled": "true",
}

_SPARK: Any = None


def get_spark(master: str = "local[2]") -> Any:
    """Start (or return the already running) oracle SparkSession.

    ``PYSPARK_PYTHON`` is set to this interpreter before the JVM starts so Python workers match
    the driver; logs are reduced to errors.
    """
    os.environ["PYSPARK_PYTHON"] = sys.executable
    os.environ["PYSPARK_DRIVER_PYTHON"] = sys.executable
    os.environ.setdefault("PYARROW_IGNORE_TIMEZONE", "1")
    from pyspark.sql import SparkSession

    global _SPARK
    # Not getActiveSession(): that may return a newSession() whose SQL conf a test changed.
    if _SPARK is not None and _SPARK.sparkContext._jsc is not None:
        return _SPARK
    builder = SparkSession.builder.master(master).appName("ember-oracle")
    for k, v in SPARK_CONF.items():
        builder = builder.config(k, v)
    # Keep the warehouse (permanent views of some golden files) out of the working tree.
    warehouse = tempfile.mkdtemp(prefix="ember-spark-warehouse-")
    atexit.register(shutil.rmtree, warehouse, True)
    builder = builder.config("spark.sql.warehouse.dir", warehouse)
    spark = builder.getOrCreate()
    spark.sparkContext.setLogLevel("ERROR")
    quiet_pyspark_loggers()
    _SPARK = spark
    return spark


def quiet_pyspark_loggers() -> None:
    """Silence PySpark's Python-side loggers that dump a JVM stack trace for every expected error."""
    import logging

    from pyspark.logger import PySparkLogger

    for name in ("SQLQueryContextLogger", "DataFrameQueryContextLogger"):
        PySparkLogger.getLogger(name).setLevel(logging.CRITICAL + 1)


def drop_all_views(spark: Any) -> None:
    """Drop every temporary view and every view/table in the default database."""
    for t in spark.catalog.listTables():
        if t.isTemporary:
            spark.catalog.dropTempView(t.name)
        else:
            kind = "VIEW" if (t.tableType or "").upper() == "VIEW" else "TABLE"
            spark.sql(f"DROP {kind} IF EXISTS `{t.name}`")
