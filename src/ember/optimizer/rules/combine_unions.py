"""CombineUnions: nested UNION ALLs become one ``Union`` (Spark's ``CombineUnions``, flattening
part)::

    Union (Union (a, b), c)      ==>  Union (a, b, c)

A chain of n ``UNION ALL`` branches parses as n - 1 nested binary unions; flattened, it runs as
one operator instead of n - 1 nested ones (each of which walked all partitions below it).

Valid: UNION ALL is associative, and a ``Union``'s output is its first input's attributes with
the widest nullability, which the flattened node computes the same.  Not applied to
``unionByName`` nodes (``by_name`` / ``allow_missing_columns``), whose inputs are matched by
name.  Spark's other parts of the rule (merging ``Distinct`` over unions, projections pushed
through) are not implemented.  No configuration keys are read.
"""

from __future__ import annotations

from ember.optimizer.rule_executor import Rule
from ember.plans.logical.nodes import LogicalPlan, Union

__all__ = ["CombineUnions", "combine_unions"]


def _positional(p: LogicalPlan) -> bool:
    return isinstance(p, Union) and not p.by_name and not p.allow_missing_columns


def _flatten(p: LogicalPlan) -> LogicalPlan:
    if not _positional(p) or not any(_positional(c) for c in p.inputs):  # type: ignore[attr-defined]
        return p
    inputs: list[LogicalPlan] = []
    for c in p.inputs:  # type: ignore[attr-defined]
        inputs.extend(c.inputs if _positional(c) else (c,))  # type: ignore[attr-defined]
    return p.copy(inputs=tuple(inputs))


def combine_unions(plan: LogicalPlan) -> LogicalPlan:
    """``plan`` with every nested positional ``Union`` merged into its parent."""
    return plan.transform_up(_flatten)


class CombineUnions(Rule):
    rule_name = "CombineUnions"
    patterns = (Union,)

    def apply(self, plan: LogicalPlan, conf: object) -> LogicalPlan:
        return combine_unions(plan)
