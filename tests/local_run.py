"""Running a logical plan in tests: planned by the physical planner and run on the local runtime,
the path every query takes after optimization (no optimizer rule is applied here, so a test can
run a plan exactly as a rule left it)."""

from __future__ import annotations

import pyarrow as pa

from ember.conf import SQLConf
from ember.planning import plan_query
from ember.plans.logical.nodes import LogicalPlan
from ember.runtime.local import LocalRuntime


def run_plan(plan: LogicalPlan, conf: SQLConf | None = None) -> pa.Table:
    """The rows of ``plan`` (columns in ``plan.output`` order) under ``conf``."""
    conf = SQLConf() if conf is None else conf.copy()
    conf.set("ember.execution.progress.enabled", "false")
    with LocalRuntime(conf) as rt:
        return rt.collect(plan_query(plan, conf))
