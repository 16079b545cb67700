"""Streaming queries on the Spark runtime (issue 6, item 6): the same query run by Spark
Structured Streaming, its stream-stream join Ember's symmetric hash join held in Spark's state
store (``transformWithStateInPandas`` with RocksDB).

``writeStream.start()`` on a session whose runtime is Spark (or with
``option("ember.runtime", "spark")``) builds a :class:`~.query.SparkStreamExecution`:
:mod:`.plan` turns the query's Ember plan into a streaming PySpark DataFrame (Spark's sources,
watermarks and sinks; Ember's operators in ``mapInArrow``; the join in a stateful processor),
:mod:`.worker` holds what runs in Spark's Python workers.
"""

from ember.streaming.spark.query import RUNTIME_OPTION, SparkStreamExecution, streaming_runtime

__all__ = ["SparkStreamExecution", "streaming_runtime", "RUNTIME_OPTION"]
