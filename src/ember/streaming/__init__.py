"""Structured streaming: micro-batch execution, sources and sinks, watermarks, versioned state
stores and stateful operators (stream-stream joins).

Public names (imported on first use): :class:`MemoryStream` (a stream fed by the program),
:class:`StreamingQuery`, :class:`StreamingQueryException`, :class:`DataStreamReader`,
:class:`DataStreamWriter`, :class:`StreamingQueryManager`.
"""

from typing import Any

__all__ = ["MemoryStream", "StreamingQuery", "StreamingQueryException", "DataStreamReader",
           "DataStreamWriter", "StreamingQueryManager"]

_EXPORTS = {
    "MemoryStream": "ember.streaming.memory",
    "StreamingQuery": "ember.streaming.api",
    "StreamingQueryException": "ember.streaming.execution",
    "DataStreamReader": "ember.streaming.api",
    "DataStreamWriter": "ember.streaming.api",
    "StreamingQueryManager": "ember.streaming.api",
}


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'ember.streaming' has no attribute {name!r}")
    import importlib

    return getattr(importlib.import_module(module), name)
