"""Runtimes: visitors that execute physical plans (:mod:`ember.physical`).

- :mod:`ember.runtime.local` runs a plan in process, partitions in parallel on a thread pool,
  exchanges in memory (spilling to disk past a memory budget).

Physical nodes are pure data; everything that happens while a plan runs (buffers, spill files,
metrics, the thread pool) belongs to a runtime.
"""

from __future__ import annotations

from ember.runtime.local.runtime import LocalRuntime

__all__ = ["LocalRuntime"]
