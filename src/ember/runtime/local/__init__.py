"""The local runtime: physical plans executed in process, partitions in parallel on threads.

- :mod:`.runtime`: :class:`LocalRuntime` (``execute`` / ``broadcast`` / ``collect``, metrics)
- :mod:`.registry`: ``@operator(NodeClass)`` and lookup
- :mod:`.scheduler`, :mod:`.progress`: the thread pool, stages, the console progress bar
- :mod:`.exchange`, :mod:`.hashing`: in-process shuffles, partition coalescing
- :mod:`.memory`: the memory budget and spill files
- :mod:`.operators`: scans, project, filter, sort, aggregate, limits, union, expand, set ops
- :mod:`.joins`: the join operators
- :mod:`.explain`: EXPLAIN ANALYZE rendering
"""

from __future__ import annotations

import importlib
import importlib.util

from ember.runtime.local import exchange, operators  # noqa: F401  (register operators)
from ember.runtime.local.explain import explain_analyzed
from ember.runtime.local.registry import PartitionFn, operator
from ember.runtime.local.runtime import BroadcastValue, LocalRuntime

__all__ = ["LocalRuntime", "BroadcastValue", "PartitionFn", "operator", "explain_analyzed"]

# The join operators register themselves when their modules are imported.
for _mod in ("hash_join", "sort_merge_join", "nested_loop_join", "cartesian"):
    _name = f"ember.runtime.local.joins.{_mod}"
    if importlib.util.find_spec(_name) is not None:
        importlib.import_module(_name)
