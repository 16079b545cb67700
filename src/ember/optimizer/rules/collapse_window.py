"""CollapseWindow: two adjacent Windows with the same partitioning and ordering become one.

Spark's rule (bottom-up)::

    Window [rank(b) ... AS r], [a], [b ASC]               Window [sum(c) ... AS s, rank(b) ... AS r], [a], [b ASC]
    +- Window [sum(c) ... AS s], [a], [b ASC]     ==>     +- child
       +- child

Also through a Project between them (the Project keeps its list plus the upper Window's
columns) when the upper Window reads only the lower one's input.  Not when the upper Window
reads a column the lower one computes, nor when either is empty.  No configuration keys.
"""

from __future__ import annotations

from ember.conf import SQLConf
from ember.expressions.base import Expression
from ember.optimizer.rule_executor import Rule
from ember.plans.logical.nodes import LogicalPlan, Project, Window

__all__ = ["CollapseWindow", "same_expressions"]


def same_expressions(a: tuple[Expression, ...], b: tuple[Expression, ...]) -> bool:
    """Equal lists of expressions (element-wise, by canonical form)."""
    return len(a) == len(b) and all(x.canonicalized == y.canonicalized for x, y in zip(a, b))


def _compatible(w1: Window, w2: Window) -> bool:
    return (same_expressions(w1.partition_spec, w2.partition_spec)
            and same_expressions(w1.order_spec, w2.order_spec)
            and not (w1.references & w2.produced_attributes)
            and bool(w1.window_expressions) and bool(w2.window_expressions))


def _collapse(p: LogicalPlan) -> LogicalPlan | None:
    match p:
        case Window(window_expressions=we1, child=Window(window_expressions=we2,
                                                        child=grand) as w2) if _compatible(p, w2):
            return p.copy(window_expressions=we2 + we1, child=grand)
        case Window(window_expressions=we1, child=Project(project_list=pl, child=Window(
                window_expressions=we2, child=grand) as w2)) if (
                _compatible(p, w2) and p.references <= grand.output_set):
            return Project(pl + p.window_output, p.copy(window_expressions=we2 + we1, child=grand))
        case _:
            return None


class CollapseWindow(Rule):
    """See the module docstring."""

    rule_name = "CollapseWindow"
    patterns = (Window,)

    def apply(self, plan: LogicalPlan, conf: SQLConf) -> LogicalPlan:
        return plan.transform_up(_collapse)
