"""The local runtime: physical plans executed in process, partitions in parallel on threads.

- :mod:`.context`, :mod:`.node_state`: :class:`RunContext`, what operators receive (conf,
  memory, metrics, broadcast / exchange registries, per-node state)
- :mod:`.runtime`: :class:`LocalRuntime` (``execute`` / ``broadcast`` / ``collect``, metrics)
- :mod:`.registry`: ``@operator(NodeClass)`` and lookup
- :mod:`.scheduler`, :mod:`.progress`: the thread pool, stages, the console progress bar
- :mod:`.exchange`, :mod:`.hashing`: in-process shuffles, partition coalescing
- :mod:`.memory`: the memory budget and spill files
- :mod:`.operators`: scans, project, filter, sort, aggregate, limits, union, expand, set ops,
  windows
- :mod:`.joins`: the join operators
- :mod:`.explain`: EXPLAIN ANALYZE rendering
"""

from __future__ import annotations

from ember.runtime.local import exchange, joins, operators  # noqa: F401  (register operators)
from ember.runtime.local.context import RunContext
from ember.runtime.local.explain import explain_analyzed
from ember.runtime.local.registry import PartitionFn, operator
from ember.runtime.local.runtime import BroadcastValue, LocalRuntime

__all__ = ["LocalRuntime", "RunContext", "BroadcastValue", "PartitionFn", "operator",
           "explain_analyzed"]
