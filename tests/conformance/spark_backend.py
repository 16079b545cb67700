"""A stand-in for ``ember.Session`` that runs on PySpark (harness self-check only).

With ``EMBER_TEST_BACKEND=spark`` the conformance runner and the differential tests talk to this
class instead of Ember.  Every test must then pass: it checks the harness itself (statement
splitting, normalisation, comparison, error mapping), independently of Ember's progress::

    EMBER_TEST_BACKEND=spark python -m pytest tests/conformance tests/differential -q
"""

from __future__ import annotations

from typing import Any

import pyarrow as pa


class _Conf:
    def __init__(self, spark: Any) -> None:
        self._spark = spark

    def set(self, key: str, value: Any) -> None:
        self._spark.conf.set(key, str(value))


class SparkBackedDataFrame:
    def __init__(self, df: Any) -> None:
        self._df = df

    @property
    def schema(self) -> Any:
        return self._df.schema  # fields have .name and .dataType.simpleString()

    def to_arrow(self) -> pa.Table:
        if not self._df.schema.fields:
            self._df.collect()
            return pa.table({})
        return _wrap_errors(self._df.toArrow)

    def createOrReplaceTempView(self, name: str) -> None:  # noqa: N802 - PySpark's spelling
        self._df.createOrReplaceTempView(name)


def _wrap_errors(fn, *args):
    from pyspark.errors import PySparkException

    from ember.errors import EmberError

    try:
        return fn(*args)
    except PySparkException as e:
        raise EmberError(str(e).split("\n")[0], error_class=e.getCondition()) from None


class SparkBackedSession:
    """``ember.Session``'s contract, implemented by a fresh ``spark.newSession()``."""

    def __init__(self) -> None:
        from tests.spark_session import get_spark

        self._spark = get_spark().newSession()
        self.conf = _Conf(self._spark)

    def sql(self, text: str) -> SparkBackedDataFrame:
        return SparkBackedDataFrame(_wrap_errors(self._spark.sql, text))

    def createDataFrame(self, table: pa.Table) -> SparkBackedDataFrame:  # noqa: N802
        return SparkBackedDataFrame(self._spark.createDataFrame(table))
