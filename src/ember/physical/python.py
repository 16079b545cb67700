"""Physical operators that run Python functions: Spark's ``BatchEvalPythonExec``,
``ArrowEvalPythonExec``, ``MapInPandasExec`` / ``MapInArrowExec`` and
``FlatMapGroupsInPandasExec`` / ``FlatMapGroupsInArrowExec`` (the logical nodes of
:mod:`ember.plans.logical.python`, planned one to one).  They print as Spark's do.

A grouped map requires its input clustered by the grouping keys and sorted by them (Spark's
``requiredChildDistribution`` / ``requiredChildOrdering``); without keys, all rows in one
partition.
"""

from __future__ import annotations

from ember.expressions.base import AttributeReference, Expression, SortOrder
from ember.expressions.python_udf import PythonUDF
from ember.physical.nodes import SparkPlan, UnaryExecNode, _list
from ember.physical.partitioning import (
    AllTuples,
    ClusteredDistribution,
    Distribution,
    Partitioning,
    UnknownPartitioning,
)
from ember.trees import node

__all__ = ["BatchEvalPythonExec", "ArrowEvalPythonExec", "MapInPandasExec",
           "FlatMapGroupsInPandasExec"]


class _EvalPythonExec(UnaryExecNode):
    __slots__ = ()

    def _compute_output(self) -> tuple[AttributeReference, ...]:
        return self.child.output + self.result_attrs  # type: ignore[attr-defined]

    @property
    def output_ordering(self) -> tuple[SortOrder, ...]:
        return self.children[0].output_ordering


@node
class BatchEvalPythonExec(_EvalPythonExec):
    """``BatchEvalPython [f(a#1)#3], [pythonUDF0#4]``."""

    udfs: tuple[PythonUDF, ...]
    result_attrs: tuple[AttributeReference, ...]
    child: SparkPlan

    def simple_string(self) -> str:
        return f"BatchEvalPython {_list(self.udfs)}, {_list(self.result_attrs)}"


@node
class ArrowEvalPythonExec(_EvalPythonExec):
    """``ArrowEvalPython [f(a#1)#3], [pythonUDF0#4], 200``."""

    udfs: tuple[PythonUDF, ...]
    result_attrs: tuple[AttributeReference, ...]
    child: SparkPlan
    eval_type: int

    def simple_string(self) -> str:
        return (f"ArrowEvalPython {_list(self.udfs)}, {_list(self.result_attrs)}, "
                f"{self.eval_type}")


@node
class MapInPandasExec(UnaryExecNode):
    """``MapInPandas f(a#1, b#2)#5, [x#6, y#7], false`` (``MapInArrow`` for mapInArrow)."""

    func: PythonUDF
    output_attrs: tuple[AttributeReference, ...]
    child: SparkPlan
    is_arrow: bool = False
    is_barrier: bool = False

    def _compute_output(self) -> tuple[AttributeReference, ...]:
        return self.output_attrs

    @property
    def output_partitioning(self) -> Partitioning:
        return UnknownPartitioning(0)

    def simple_string(self) -> str:
        name = "MapInArrow" if self.is_arrow else "MapInPandas"
        return (f"{name} {self.func.simple_string()}, {_list(self.output_attrs)}, "
                f"{str(self.is_barrier).lower()}")


@node
class FlatMapGroupsInPandasExec(UnaryExecNode):
    """``FlatMapGroupsInPandas [k#1], f(k#1, v#2)#5, [x#6]`` (``FlatMapGroupsInArrow``)."""

    grouping: tuple[Expression, ...]
    func: PythonUDF
    output_attrs: tuple[AttributeReference, ...]
    child: SparkPlan
    is_arrow: bool = False

    def _compute_output(self) -> tuple[AttributeReference, ...]:
        return self.output_attrs

    @property
    def output_partitioning(self) -> Partitioning:
        return UnknownPartitioning(0)

    @property
    def required_child_distribution(self) -> tuple[Distribution, ...]:
        return (ClusteredDistribution(self.grouping),) if self.grouping else (AllTuples(),)

    @property
    def required_child_ordering(self) -> tuple[tuple[SortOrder, ...], ...]:
        return (tuple(SortOrder(g) for g in self.grouping),)

    def simple_string(self) -> str:
        name = "FlatMapGroupsInArrow" if self.is_arrow else "FlatMapGroupsInPandas"
        return (f"{name} {_list(self.grouping)}, {self.func.simple_string()}, "
                f"{_list(self.output_attrs)}")
