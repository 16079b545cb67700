"""Streaming sinks by format (Spark's v1 ``Sink``; contract 4 of the streaming design).

A sink has ``add_batch(batch_id, data)`` taking one micro-batch's output as a
``pyarrow.Table``; it is idempotent where Spark's is (a batch id it already committed is
ignored, which makes a re-run batch after a restart exactly-once).  It is built as
``Cls(session, options, path)``.

Formats map to ``"module:Class"`` names, imported on first use.
"""

from __future__ import annotations

import importlib
from typing import Any

from ember.errors import AnalysisError

__all__ = ["SINKS", "sink_class"]

#: format (lower case) -> "module:Class"
SINKS: dict[str, str] = {
    "memory": "ember.streaming.memory:MemorySink",
    "foreachbatch": "ember.streaming.sinks.foreach_batch:ForeachBatchSink",
    "parquet": "ember.streaming.sinks.file:FileStreamSink",
    "console": "ember.streaming.sinks.console:ConsoleSink",
}


def sink_class(fmt: str) -> type:
    """The sink class of format ``fmt`` (Spark's ``DATA_SOURCE_NOT_FOUND`` otherwise)."""
    spec = SINKS.get(fmt.lower())
    if spec is None:
        raise AnalysisError(
            f"Failed to find the data source: {fmt}. Make sure the provider name is correct and "
            "the package is properly registered and compatible with your Spark version.",
            error_class="DATA_SOURCE_NOT_FOUND", parameters={"provider": fmt})
    module, _, name = spec.partition(":")
    cls: Any = getattr(importlib.import_module(module), name)
    return cls
