"""EXPLAIN ANALYZE for the local runtime (beyond Spark, which has none).

:func:`explain_analyzed` prints the physical plan as EXPLAIN does, each operator's line followed
by what actually happened in the run::

    Sort [a#1 ASC NULLS FIRST], true, 0  (rows=1000 est=1200, time=2.1 ms, partitions=2, peak=31.2 KiB)
    +- Exchange rangepartitioning(a#1 ASC NULLS FIRST, 200), ...  (rows=1000, time=0.9 ms, ...)

``rows`` are the output rows, ``est`` the optimizer's estimate when known (from ``estimates`` or,
given the logical plan each physical node came from -- ``logical``, the mapping
``ember.planning.plan_query_with_links`` returns -- ``plan_stats(...).row_count``; then also
``est_size``, the estimated ``sizeInBytes``), ``time`` the
operator's own time (its inclusive time minus its children's, summed over partitions), ``peak``
the most bytes it held in buffers; ``build`` and ``spill`` appear when non-zero.  Operators that
did not run show ``(not executed)``.  The last line gives the run's peak Arrow memory.
A join the runtime re-planned adaptively (:mod:`.adaptive`) prints as the join that actually
ran, prefixed ``[adaptive: was SortMergeJoin]``.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from ember.runtime.local.metrics import RunMetrics
from ember.conf import SQLConf
from ember.plans.logical.statistics import plan_stats

__all__ = ["explain_analyzed", "format_bytes", "format_ns"]


def format_bytes(n: int) -> str:
    units = ["B", "KiB", "MiB", "GiB", "TiB"]
    v = float(n)
    for u in units:
        if v < 1024 or u == units[-1]:
            return f"{int(v)} {u}" if u == "B" else f"{v:.1f} {u}"
        v /= 1024
    return f"{n} B"  # pragma: no cover


def format_ns(ns: int) -> str:
    if ns < 1_000_000:
        return f"{ns / 1000:.1f} us"
    if ns < 1_000_000_000:
        return f"{ns / 1e6:.1f} ms"
    return f"{ns / 1e9:.2f} s"


def _estimate(node: Any, estimates: Any, logical: Mapping[int, Any] | None,
              conf: Any, cache: dict[int, Any] | None = None) -> tuple[int | None, int | None]:
    """(estimated rows, estimated size in bytes) of ``node`` (None when unknown)."""
    if estimates is not None:
        if callable(estimates):
            return estimates(node), None
        v = estimates.get(id(node))
        if v is None:
            try:
                v = estimates.get(node)
            except TypeError:
                v = None
        return v, None
    if logical is not None:
        plan = logical.get(id(node))
        if plan is not None:
            key = id(plan)
            if cache is not None and key in cache:
                return cache[key]
            try:
                st = plan_stats(plan, conf if conf is not None else SQLConf())
                out = (st.row_count, st.size_in_bytes)
            except Exception:  # noqa: BLE001 - estimates are informative only
                out = (None, None)
            if cache is not None:
                cache[key] = out
            return out
    return None, None


def explain_analyzed(plan: Any, metrics: RunMetrics, *,
                     estimates: Mapping[Any, int | None] | Callable[[Any], int | None] | None = None,
                     logical: Mapping[int, Any] | None = None, conf: Any = None) -> str:
    """The physical ``plan``'s tree with each operator's actual rows, time and memory (from the
    run's ``metrics``) next to its estimated row count (see module docstring)."""
    lines: list[str] = []
    cache: dict[int, Any] = {}

    def annotate(node: Any) -> str:
        m = metrics.get(node)
        est, est_size = _estimate(node, estimates, logical, conf, cache)
        est_s = f" est={est}" if est is not None else ""
        if est_size is not None:
            est_s += f" est_size={format_bytes(est_size)}"
        if m is None:
            return f"  (not executed{',' + est_s if est_s else ''})"
        parts = [f"rows={m.output_rows}{est_s}", f"time={format_ns(metrics.self_time_ns(node))}",
                 f"partitions={m.num_partitions}", f"peak={format_bytes(m.peak_memory)}"]
        if m.build_size:
            parts.append(f"build={format_bytes(m.build_size)}")
        if m.spill_size:
            parts.append(f"spill={format_bytes(m.spill_size)}")
        return "  (" + ", ".join(parts) + ")"

    replaced = metrics.replaced

    def visit(node: Any, last: list[bool]) -> None:
        head = ""
        if last:
            head = "".join("   " if x else ":  " for x in last[:-1])
            head += "+- " if last[-1] else ":- "
        new = replaced.get(node)
        if new is not None:  # adaptive re-planning: print what ran instead
            lines.append(head + f"[adaptive: was {node.node_name}] ")
            node = new
            lines[-1] += node.simple_string() + annotate(node)
            kids = node.children
            for i, c in enumerate(kids):
                visit(c, last + [i == len(kids) - 1])
            return
        lines.append(head + node.simple_string() + annotate(node))
        kids = node.children
        for i, c in enumerate(kids):
            visit(c, last + [i == len(kids) - 1])

    visit(plan, [])
    lines.append(f"Peak memory: {format_bytes(metrics.peak_memory)} (Arrow), budget in use at "
                 f"peak {format_bytes(metrics.peak_budget_used)}, spilled "
                 f"{format_bytes(metrics.spill_size)}")
    return "\n".join(lines) + "\n"
