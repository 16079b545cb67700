"""Python operators (part of Spark's ``BasicOperators``): each logical node of
:mod:`ember.plans.logical.python` becomes its ``*Exec`` node of :mod:`ember.physical.python`."""

from __future__ import annotations

from collections.abc import Callable

from ember.physical import python as P
from ember.physical.nodes import SparkPlan
from ember.plans.logical import python as L
from ember.plans.logical.nodes import LogicalPlan

__all__ = ["python_operators"]


def python_operators(plan: LogicalPlan, plan_later: Callable[[LogicalPlan], SparkPlan]
                     ) -> SparkPlan | None:
    match plan:
        case L.BatchEvalPython(udfs=udfs, result_attrs=attrs, child=c):
            return P.BatchEvalPythonExec(udfs, attrs, plan_later(c))
        case L.ArrowEvalPython(udfs=udfs, result_attrs=attrs, child=c, eval_type=t):
            return P.ArrowEvalPythonExec(udfs, attrs, plan_later(c), t)
        case L.MapInPandas(func=f, output_attrs=out, child=c, is_arrow=a, is_barrier=b):
            return P.MapInPandasExec(f, out, plan_later(c), a, b)
        case L.FlatMapGroupsInPandas(grouping=g, func=f, output_attrs=out, child=c, is_arrow=a):
            return P.FlatMapGroupsInPandasExec(g, f, out, plan_later(c), a)
    return None
