"""The Spark runtime: Ember's physical plans executed on Apache Spark through PySpark.

- :mod:`.runtime`: :class:`SparkRuntime` cuts a plan into regions and builds its RDDs
  (shuffles, broadcasts, unions, zips), ``collect`` / ``rdd``
- :mod:`.worker`: what runs in Spark's Python workers (a region per task, sinks, blobs)
- :mod:`.sources`: files through Spark's readers, in-memory tables, ranges, DataFrames
- :mod:`.session`: creating or attaching to a SparkSession, shipping Ember to executors
- :mod:`.stages`: how a plan maps to Spark stages (EXPLAIN)
- :mod:`.errors`: task failures back as Ember errors
- :mod:`.interop`: ``DataFrame.to_spark`` (Ember results as lazy PySpark DataFrames)
"""

from __future__ import annotations

from ember.runtime.spark.runtime import SparkRuntime

__all__ = ["SparkRuntime"]
