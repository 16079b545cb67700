"""Shared helpers of the tests that run logical plans on the local runtime (planned by the physical
planner, no optimizer rule applied): contexts at batch size 2 and the default, row comparison."""

from __future__ import annotations

import math
from collections import Counter

import pytest

from ember.conf import SQLConf
from ember.execution.context import ExecContext
from tests.local_run import run_plan


@pytest.fixture(params=[2, 65536], ids=["bs2", "bsdefault"])
def ctx(request) -> ExecContext:
    return ExecContext(SQLConf({"ember.execution.batchSize": request.param}))


def collect(plan, ctx: ExecContext | None = None):
    """The rows of the logical ``plan`` as a ``pyarrow.Table``, run on the local runtime with
    ``ctx``'s configuration."""
    return run_plan(plan, None if ctx is None else ctx.conf)


def canon(v):
    """A hashable, comparable stand-in for a value (NaN -> 'NaN')."""
    if isinstance(v, float) and math.isnan(v):
        return "NaN"
    if isinstance(v, dict):
        return tuple(sorted((k, canon(x)) for k, x in v.items()))
    return v


def bag(rows) -> Counter:
    """Rows (tuples or dicts) as a multiset for order-insensitive comparison."""
    out = Counter()
    for r in rows:
        vals = r.values() if isinstance(r, dict) else r
        out[tuple(canon(v) for v in vals)] += 1
    return out


def rows_of(table) -> list[tuple]:
    cols = [c.to_pylist() for c in table.columns]
    return list(zip(*cols)) if cols else [()] * table.num_rows
