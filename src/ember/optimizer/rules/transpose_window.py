"""TransposeWindow: of two adjacent Windows, the one with fewer partition columns (a subset of
the other's) goes below, so both can run over one shuffle.

Spark's rule (bottom-up)::

    Window [... AS x], [a]                        Project [..., x, y]
    +- Window [... AS y], [a, b]          ==>     +- Window [... AS y], [a, b]
       +- child                                      +- Window [... AS x], [a]
                                                        +- child

Only when the upper Window does not read the lower one's columns and every expression of both
is deterministic; also through a Project between them when the upper Window reads only the
lower one's input.  No configuration keys.
"""

from __future__ import annotations

from ember.conf import SQLConf
from ember.expressions.base import Expression
from ember.optimizer.rule_executor import Rule
from ember.plans.logical.nodes import LogicalPlan, Project, Window

__all__ = ["TransposeWindow"]


def _compatible_partitions(ps1: tuple[Expression, ...], ps2: tuple[Expression, ...]) -> bool:
    return len(ps1) < len(ps2) and all(any(e1.semantic_equals(e2) for e2 in ps2) for e1 in ps1)


def _compatible(w1: Window, w2: Window) -> bool:
    return (not (w1.references & w2.produced_attributes)
            and all(e.deterministic for e in w1.expressions())
            and all(e.deterministic for e in w2.expressions())
            and _compatible_partitions(w1.partition_spec, w2.partition_spec))


def _transpose(p: LogicalPlan) -> LogicalPlan | None:
    match p:
        case Window(child=Window(child=grand) as w2) if _compatible(p, w2):
            return Project(p.output, w2.copy(child=p.copy(child=grand)))
        case Window(child=Project(project_list=pl, child=Window(child=grand) as w2)) if (
                _compatible(p, w2) and p.references <= grand.output_set):
            return Project(pl + p.window_output, w2.copy(child=p.copy(child=grand)))
        case _:
            return None


class TransposeWindow(Rule):
    """See the module docstring."""

    rule_name = "TransposeWindow"
    patterns = (Window,)

    def apply(self, plan: LogicalPlan, conf: SQLConf) -> LogicalPlan:
        return plan.transform_up(_transpose)
