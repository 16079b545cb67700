"""Ember: Spark SQL's join and aggregation machinery in Python, over Apache Arrow.

Public surface (PySpark-shaped, so PySpark code runs after changing the import)::

    import ember
    from ember import functions as F

    spark = ember.Session()                       # or ember.Session.builder.getOrCreate()
    df = spark.sql("SELECT 1 AS a")               # SQL -> DataFrame
    df.groupBy("a").agg(F.count("*")).show()

Errors derive from :class:`ember.errors.EmberError` and carry Spark's error class.
"""

from ember import errors, functions
from ember.column import Column
from ember.dataframe import DataFrame, GroupedData
from ember.errors import AnalysisError, EmberError, ExecutionError, ParseError
from ember.observation import Observation
from ember.row import Row
from ember.session import Session
from ember.window import Window, WindowSpec

SparkSession = Session  # lets `from ember import SparkSession` stand in for PySpark's import

__all__ = [
    "Session",
    "SparkSession",
    "DataFrame",
    "GroupedData",
    "Column",
    "Row",
    "Window",
    "WindowSpec",
    "Observation",
    "functions",
    "errors",
    "EmberError",
    "ParseError",
    "AnalysisError",
    "ExecutionError",
]
