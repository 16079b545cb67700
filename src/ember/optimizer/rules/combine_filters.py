"""CombineFilters: two adjacent Filters merged into one.

Spark 4's rule (top-down)::

    Filter fc (Filter nc (child))  ==>  Filter (nc AND fc') (child)

where ``fc'`` is the deterministic conjuncts of ``fc`` not already (semantically) in ``nc``.
Non-deterministic conjuncts of ``fc`` stay in a Filter on top (their evaluation must still see
only the rows ``nc`` keeps).

NOT applied when the lower condition ``nc`` is non-deterministic: the optimizer does not
guarantee evaluation order inside one condition, so ``rand() < 0.5`` below must keep filtering
before anything above is evaluated.  No configuration keys are read.
"""

from __future__ import annotations

from ember.conf import SQLConf
from ember.expressions.base import and_all
from ember.expressions.predicate_helper import split_conjunctive_predicates
from ember.optimizer.rule_executor import Rule
from ember.plans.logical.nodes import Filter, LogicalPlan
from ember.expressions.predicates import And

__all__ = ["CombineFilters", "combine_filters"]


def _combine(plan: LogicalPlan) -> LogicalPlan:
    match plan:
        case Filter(condition=fc, child=Filter(condition=nc, child=grand_child) as nf) if (
                nc.deterministic):
            conjuncts = split_conjunctive_predicates(fc)
            candidates = [c for c in conjuncts if c.deterministic]
            non_det = [c for c in conjuncts if not c.deterministic]
            lower = split_conjunctive_predicates(nc)
            kept: list = []
            for c in candidates:
                if not any(c.semantic_equals(x) for x in lower + kept):
                    kept.append(c)
            added = and_all(kept)
            if added is None and len(non_det) == len(conjuncts):
                return plan  # nothing deterministic to move down
            merged = nf if added is None else Filter(And(nc, added), grand_child)
            top = and_all(non_det)
            return merged if top is None else Filter(top, merged)
        case _:
            return plan


def combine_filters(plan: LogicalPlan) -> LogicalPlan:
    """``plan`` with adjacent Filters combined (one top-down pass)."""
    return plan.transform_down(_combine)


class CombineFilters(Rule):
    """See the module docstring."""

    rule_name = "CombineFilters"

    def apply(self, plan: LogicalPlan, conf: SQLConf) -> LogicalPlan:
        return combine_filters(plan)
