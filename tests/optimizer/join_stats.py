"""Exact statistics for small test plans, injected into the join-order rules through
``ember.optimizer.rules.star_schema.STATS_PROVIDER`` (the statistics engineer's ``plan_stats`` is
the production provider)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import pyarrow.compute as pc


@dataclass(frozen=True)
class ColStat:
    distinct_count: int | None = None
    min: Any = None
    max: Any = None
    null_count: int | None = None
    avg_len: int | None = None
    max_len: int | None = None


@dataclass(frozen=True)
class Stats:
    size_in_bytes: int
    row_count: int | None = None
    attribute_stats: dict = field(default_factory=dict)


def exact_stats(plan, conf=None) -> Stats:
    """Row count and per-column NDV / null count of ``plan``, by running it."""
    from tests.local_run import run_plan

    cache = exact_stats.__dict__.setdefault("_cache", {})
    key = id(plan)
    hit = cache.get(key)
    if hit is not None and hit[0] is plan:
        return hit[1]
    t = run_plan(plan)
    attrs = {}
    for a, c in zip(plan.output, t.columns):
        attrs[a.id] = ColStat(distinct_count=pc.count_distinct(c).as_py(),
                              null_count=c.null_count)
    st = Stats(max(1, t.nbytes), t.num_rows, attrs)
    cache[key] = (plan, st)
    return st


def no_column_stats(plan, conf=None) -> Stats:
    st = exact_stats(plan, conf)
    return Stats(st.size_in_bytes, st.row_count, {})
