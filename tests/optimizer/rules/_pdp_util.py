"""Helpers shared by the push-down / infer-filters / column-pruning tests."""

from __future__ import annotations

import re
from collections import Counter

from ember import types as T
from ember.conf import SQLConf
from ember.expressions.base import LeafExpression, Literal
from ember.plans.logical.nodes import LogicalPlan
from ember.trees import node
from tests.local_run import run_plan


@node
class NonDet(LeafExpression):
    """A non-deterministic boolean (Spark's ``rand() > 0.5`` stand-in); never evaluated."""

    tag: int = 0

    @property
    def data_type(self):
        return T.BOOLEAN

    @property
    def deterministic(self) -> bool:
        return False

    def simple_string(self) -> str:
        return "nondet()"


def lit(v):
    """An INT literal."""
    return Literal(v, T.INT)


def rows(plan: LogicalPlan, batch_size: int = 65536) -> Counter:
    """The bag of rows ``plan`` returns."""
    t = run_plan(plan, SQLConf({"ember.execution.batchSize": batch_size}))
    cols = [c.to_pylist() for c in t.columns]
    return Counter(zip(*cols)) if cols else Counter({(): t.num_rows})


def same_rows(before: LogicalPlan, after: LogicalPlan) -> bool:
    """Both plans return the same rows (also at batch size 2)."""
    return rows(before) == rows(after) and rows(before, 2) == rows(after, 2)


def norm(plan: LogicalPlan) -> str:
    """``tree_string`` with ``#ids`` removed."""
    return re.sub(r"#\d+L?", "", plan.tree_string())
