"""Runtimes: visitors that execute physical plans (:mod:`ember.physical`).

- :mod:`ember.runtime.local` runs a plan in process, partitions in parallel on a thread pool,
  exchanges in memory (spilling to disk past a memory budget).

Physical nodes are pure data; everything that happens while a plan runs (buffers, spill files,
metrics, the thread pool) belongs to a runtime.
"""

from __future__ import annotations

__all__ = ["LocalRuntime"]


def __getattr__(name: str):
    # Lazy: importing ``ember.runtime`` must not import every operator module.
    if name == "LocalRuntime":
        from ember.runtime.local.runtime import LocalRuntime

        return LocalRuntime
    raise AttributeError(name)
