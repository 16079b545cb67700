"""ExtractPythonUDFs: scalar Python UDF calls move out of Projects and Filters into eval nodes.

Spark's rule (its batch "Extract Python UDFs", after the other optimizer batches)::

    Project [f(a#1)#3 AS f(a)#4]                 Project [pythonUDF0#5 AS f(a)#4]
    +- child                          ==>        +- ArrowEvalPython [f(a#1)#3], [pythonUDF0#5], 101
                                                    +- child

    Filter (f(a#1)#3 > 1)                        Project [a#1]
    +- child                          ==>        +- Filter (pythonUDF0#5 > 1)
                                                    +- ArrowEvalPython [f(a#1)#3], [pythonUDF0#5], 101
                                                       +- child

The calls of one node are evaluated together, one eval node per kind: ``BatchEvalPython`` for
pickled UDFs (``SQL_BATCHED_UDF``), ``ArrowEvalPython`` per eval type for Arrow-optimized UDFs and
scalar pandas UDFs.  A call whose arguments hold another call is evaluated in a later eval node
above the one computing its arguments.  The result columns are numbered per eval node
(``pythonUDF0``, ``pythonUDF1``, ...).  The same call appearing twice (one node) is evaluated once.

Calls elsewhere (join conditions, aggregate arguments) are evaluated in place, batch by batch.
Non-deterministic UDFs need nothing here: the rules that move or merge expressions
(PushDownPredicates, CombineFilters, CollapseProject) already keep non-deterministic expressions
where they are.  No configuration keys are read.
"""

from __future__ import annotations

from ember.conf import SQLConf
from ember.expressions.base import AttributeReference, Expression
from ember.expressions.python_udf import PythonEvalType, PythonUDF
from ember.optimizer.rule_executor import Rule
from ember.plans.logical.nodes import Filter, LogicalPlan, Project
from ember.plans.logical.python import ArrowEvalPython, BatchEvalPython

__all__ = ["ExtractPythonUDFs", "extract_python_udfs"]


def _is_scalar_udf(e: Expression) -> bool:
    return isinstance(e, PythonUDF) and e.eval_type in PythonEvalType.SCALAR


def _has_udf(e: Expression) -> bool:
    return e.contains(PythonUDF) and e.find(_is_scalar_udf) is not None


def _innermost(exprs: tuple[Expression, ...]) -> list[PythonUDF]:
    """The scalar UDF calls of ``exprs`` whose arguments hold no other call, in order, once."""
    out: list[PythonUDF] = []

    def visit(e: Expression) -> None:
        if _is_scalar_udf(e) and not any(_has_udf(a) for a in e.children):
            if e not in out:
                out.append(e)  # type: ignore[arg-type]
            return
        for c in e.children:
            visit(c)

    for e in exprs:
        visit(e)
    return out


def _evaluate(exprs: tuple[Expression, ...], child: LogicalPlan
              ) -> tuple[tuple[Expression, ...], LogicalPlan]:
    """``exprs`` reading result columns instead of UDF calls, over eval nodes on ``child``."""
    while True:
        calls = _innermost(exprs)
        if not calls:
            return exprs, child
        groups: dict[int, list[PythonUDF]] = {}
        for c in calls:
            groups.setdefault(c.eval_type, []).append(c)
        replaced: dict[PythonUDF, AttributeReference] = {}
        for eval_type, udfs in groups.items():
            attrs = tuple(AttributeReference(f"pythonUDF{i}", u.return_type, True)
                          for i, u in enumerate(udfs))
            replaced.update(zip(udfs, attrs))
            if eval_type == PythonEvalType.SQL_BATCHED_UDF:
                child = BatchEvalPython(tuple(udfs), attrs, child)
            else:
                child = ArrowEvalPython(tuple(udfs), attrs, child, eval_type)
        exprs = tuple(e.transform_up(lambda x: replaced.get(x) if isinstance(x, PythonUDF)
                                     else None) for e in exprs)


def _extract(plan: LogicalPlan) -> LogicalPlan:
    match plan:
        case Project(project_list=items, child=child) if any(_has_udf(e) for e in items):
            new_items, new_child = _evaluate(items, child)
            return Project(new_items, new_child)
        case Filter(condition=cond, child=child) if _has_udf(cond):
            (new_cond,), new_child = _evaluate((cond,), child)
            return Project(child.output, Filter(new_cond, new_child))
        case _:
            return plan


def extract_python_udfs(plan: LogicalPlan) -> LogicalPlan:
    """``plan`` with the scalar Python UDF calls of its Projects and Filters in eval nodes."""
    return plan.transform_up(_extract)


class ExtractPythonUDFs(Rule):
    rule_name = "ExtractPythonUDFs"
    excludable = False
    patterns = (PythonUDF,)

    def apply(self, plan: LogicalPlan, conf: SQLConf) -> LogicalPlan:
        return extract_python_udfs(plan)
