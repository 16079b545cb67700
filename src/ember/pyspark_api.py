"""PySpark's public methods that Ember's classes do not have, each with the reason.

Ember's ``DataFrame``, ``Column``, ``GroupedData``, ``DataFrameReader`` and ``Session`` follow
PySpark 4.3's ``pyspark.sql`` classes of the same names.  The methods listed here are the ones
they leave out: RDD-only ones (Ember has no RDDs), Spark Connect-only ones, and features not
built yet.  Calling one raises ``UNSUPPORTED_FEATURE`` with the reason (never a bare
``AttributeError``, which would read as a typo); ``tests/api/test_pyspark_coverage.py`` checks
this list against PySpark's classes, so it names every gap once.

>>> from ember.pyspark_api import unsupported_method
>>> unsupported_method("DataFrame", "rdd").error_class
'UNSUPPORTED_FEATURE.PYSPARK_METHOD'
"""

from __future__ import annotations

from ember.errors import UnsupportedError

__all__ = ["MISSING", "unsupported_method", "missing_attribute"]

_RDD = "it works on RDDs, which Ember does not have; use collect, toLocalIterator or toArrow"
_CONNECT = "it exists only for Spark Connect clients"
_STREAM = "a streaming feature Ember does not have yet"
_NESTED = "struct, array and map element access is not implemented yet (issue 23)"
_PANDAS = "pandas-on-Spark and plotting need pyspark.pandas, which Ember does not provide"

#: ``{PySpark class name: {method name: why Ember does not have it}}``
MISSING: dict[str, dict[str, str]] = {
    "DataFrame": {
        "rdd": _RDD,
        "foreach": _RDD,
        "foreachPartition": _RDD,
        "pandas_api": _PANDAS,
        "plot": _PANDAS,
        "executionInfo": _CONNECT,
        "asTable": "table arguments of Python UDTFs are not implemented",
        "lateralJoin": "lateral joins are not implemented yet",
        "metadataColumn": "metadata columns (_metadata) are not implemented yet",
        "mergeInto": "MERGE INTO needs a table format with row-level changes (Delta, Iceberg)",
        "nearestByJoin": "nearest-by joins are not implemented yet",
        "repartitionById": "partitioning by a partition id column is not implemented yet",
        "exists": "DataFrame subquery expressions are not implemented yet (use SQL EXISTS)",
        "scalar": "DataFrame subquery expressions are not implemented yet (use a SQL subquery)",
        "withMetadata": "Ember keeps no column metadata",
        "zip": "zip is not implemented yet",
        "zipWithIndex": "zipWithIndex is not implemented yet",
        "freqItems": "not implemented yet (Spark's answer keeps false positives in the order "
                     "of its hash maps)",
    },
    "Column": {
        "withField": _NESTED,
        "dropFields": _NESTED,
        "outer": "DataFrame subquery expressions are not implemented yet",
    },
    "GroupedData": {
        "applyInPandasWithState": _STREAM,
        "transformWithState": _STREAM,
        "transformWithStateInPandas": _STREAM,
    },
    "DataFrameReader": {
        "jdbc": "Ember has no JDBC source",
        "orc": "Ember has no ORC source",
        "xml": "Ember has no XML source",
        "changes": "change data feeds need a table format that records changes",
    },
    "SparkSession": {
        "sparkContext": _RDD,
        "dataSource": "Python data sources are not implemented",
        "profile": "Python UDF profiling needs Python UDFs (issue 22 item 3)",
        "addArtifact": _CONNECT,
        "addArtifacts": _CONNECT,
        "copyFromLocalToFs": _CONNECT,
        "client": _CONNECT,
        "registerProgressHandler": _CONNECT,
        "removeProgressHandler": _CONNECT,
        "clearProgressHandlers": _CONNECT,
        "addTag": _CONNECT,
        "removeTag": _CONNECT,
        "getTags": _CONNECT,
        "clearTags": _CONNECT,
        "interruptAll": _CONNECT,
        "interruptTag": _CONNECT,
        "interruptOperation": _CONNECT,
    },
}


class UnsupportedMethodError(UnsupportedError, AttributeError):
    """``UNSUPPORTED_FEATURE.PYSPARK_METHOD``: a PySpark method Ember leaves out.  Also an
    ``AttributeError``, so ``hasattr(df, "rdd")`` is False and ``getattr(df, "rdd", None)`` None,
    as Python's attribute protocol expects of a missing attribute."""


def unsupported_method(owner: str, name: str) -> UnsupportedMethodError | None:
    """The error for PySpark's ``owner.name`` when Ember leaves it out, else None."""
    reason = MISSING.get(owner, {}).get(name)
    if reason is None:
        return None
    return UnsupportedMethodError(
        f"The feature is not supported: {owner}.{name}: {reason}.",
        error_class="UNSUPPORTED_FEATURE.PYSPARK_METHOD",
        parameters={"method": f"{owner}.{name}", "reason": reason})


def missing_attribute(owner: str, type_name: str, name: str) -> Exception:
    """What ``__getattr__`` raises for ``name``: ``UNSUPPORTED_FEATURE`` for a PySpark method
    Ember leaves out, else the ``AttributeError`` of a misspelled name."""
    error = unsupported_method(owner, name)
    if error is not None:
        return error
    return AttributeError(f"'{type_name}' object has no attribute '{name}'")
