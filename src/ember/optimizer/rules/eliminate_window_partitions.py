"""EliminateWindowPartitions: constant partition expressions split nothing and are dropped.

Spark's rule::

    Window [sum(x) windowspecdefinition(1, a#2, ...) AS s], [1, a#2]
    ==>
    Window [sum(x) windowspecdefinition(a#2, ...) AS s], [a#2]

(``PARTITION BY 'x'`` becomes no partitioning: the window spans the whole input.)  The column
keeps its name.  No configuration keys.
"""

from __future__ import annotations

from ember.conf import SQLConf
from ember.expressions.base import Expression
from ember.expressions.windows import WindowExpression, WindowSpecDefinition
from ember.optimizer.rule_executor import Rule
from ember.plans.logical.nodes import LogicalPlan, Window

__all__ = ["EliminateWindowPartitions"]


def _spec(e: Expression) -> Expression | None:
    if isinstance(e, WindowExpression) and isinstance(e.window_spec, WindowSpecDefinition) and any(
            p.foldable for p in e.window_spec.partition_spec):
        spec = e.window_spec
        return e.copy(window_spec=spec.copy(
            partition_spec=tuple(p for p in spec.partition_spec if not p.foldable)))
    return None


def _rule(p: LogicalPlan) -> LogicalPlan | None:
    match p:
        case Window(window_expressions=exprs, partition_spec=parts) if any(
                e.foldable for e in parts):
            return p.copy(window_expressions=tuple(e.transform_up(_spec) for e in exprs),
                          partition_spec=tuple(e for e in parts if not e.foldable))
        case _:
            return None


class EliminateWindowPartitions(Rule):
    """See the module docstring."""

    rule_name = "EliminateWindowPartitions"
    patterns = (Window,)

    def apply(self, plan: LogicalPlan, conf: SQLConf) -> LogicalPlan:
        return plan.transform_down(_rule)
