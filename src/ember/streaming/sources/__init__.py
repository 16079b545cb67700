"""Streaming sources by format (Spark's v1 ``Source``; contract 3 of the streaming design).

A source has ``schema`` (an Ember ``StructType``), ``latest_offset()`` (a JSON-able offset, or
None while it has no data), ``get_batch(start, end)`` (the rows in ``(start, end]`` as a
``pyarrow.Table``; ``start`` None = from the beginning), ``commit(end)`` and ``stop()``.  It is
built as ``Cls(session, schema, options, path, metadata_path=...)``, ``metadata_path`` being
``<checkpoint>/sources/<n>`` (where a source keeps its own log, e.g. the files it has seen).

Formats map to ``"module:Class"`` names, imported on first use, so reading one format never
imports another's dependencies.
"""

from __future__ import annotations

import importlib
from typing import Any

from ember.errors import AnalysisError

__all__ = ["SOURCES", "source_class", "is_source_format"]

#: format (lower case) -> "module:Class"
SOURCES: dict[str, str] = {
    "memory": "ember.streaming.memory:MemoryStream",
    "parquet": "ember.streaming.sources.file:FileStreamSource",
    "csv": "ember.streaming.sources.file:FileStreamSource",
    "json": "ember.streaming.sources.file:FileStreamSource",
    "rate": "ember.streaming.sources.rate:RateStreamSource",
}


def _load(spec: str) -> Any:
    module, _, name = spec.partition(":")
    return getattr(importlib.import_module(module), name)


def is_source_format(fmt: str) -> bool:
    return fmt.lower() in SOURCES


def source_class(fmt: str) -> type:
    """The source class of format ``fmt`` (Spark's ``DATA_SOURCE_NOT_FOUND`` otherwise)."""
    spec = SOURCES.get(fmt.lower())
    if spec is None:
        raise AnalysisError(
            f"Failed to find the data source: {fmt}. Make sure the provider name is correct and "
            "the package is properly registered and compatible with your Spark version.",
            error_class="DATA_SOURCE_NOT_FOUND", parameters={"provider": fmt})
    return _load(spec)
