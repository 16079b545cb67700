"""Logical nodes that run Python functions (Spark's ``BatchEvalPython``, ``ArrowEvalPython``,
``MapInPandas``, ``FlatMapGroupsInPandas`` and their Arrow variants).

The optimizer's ExtractPythonUDFs puts the scalar Python UDF calls of a Project or Filter into
an eval node below it: the node's output is its child's columns followed by one column per
call (``pythonUDF0``, ``pythonUDF1``, ...), and the Project or Filter reads those columns
instead of the calls.  ``DataFrame.mapInPandas`` / ``mapInArrow`` and
``GroupedData.applyInPandas`` / ``applyInArrow`` build the map nodes directly; their ``func`` is
a :class:`~ember.expressions.python_udf.PythonUDF` over the child's columns whose return type is
the output schema.
"""

from __future__ import annotations

from ember.expressions.base import AttributeReference, Expression
from ember.expressions.python_udf import PythonUDF
from ember.plans.logical.nodes import LogicalPlan, UnaryNode, _attrs_str
from ember.trees import node

__all__ = ["BatchEvalPython", "ArrowEvalPython", "MapInPandas", "FlatMapGroupsInPandas"]


class _EvalPython(UnaryNode):
    """Output: the child's columns, then ``result_attrs`` (one per call of ``udfs``)."""

    __slots__ = ()

    def _compute_output(self) -> tuple[AttributeReference, ...]:
        return self.child.output + self.result_attrs  # type: ignore[attr-defined]

    @property
    def produced_attributes(self) -> frozenset[int]:
        return frozenset(a.id for a in self.result_attrs)  # type: ignore[attr-defined]


@node
class BatchEvalPython(_EvalPython):
    """Pickled Python UDFs (``SQL_BATCHED_UDF``): ``BatchEvalPython [f(a#1)#3], [pythonUDF0#4]``."""

    udfs: tuple[PythonUDF, ...]
    result_attrs: tuple[AttributeReference, ...]
    child: LogicalPlan

    def simple_string(self) -> str:
        return f"BatchEvalPython {_attrs_str(self.udfs)}, {_attrs_str(self.result_attrs)}"


@node
class ArrowEvalPython(_EvalPython):
    """Arrow-optimized Python UDFs and scalar pandas UDFs of one ``eval_type``:
    ``ArrowEvalPython [f(a#1)#3], [pythonUDF0#4], 200``."""

    udfs: tuple[PythonUDF, ...]
    result_attrs: tuple[AttributeReference, ...]
    child: LogicalPlan
    eval_type: int

    def simple_string(self) -> str:
        return (f"ArrowEvalPython {_attrs_str(self.udfs)}, {_attrs_str(self.result_attrs)}, "
                f"{self.eval_type}")


@node
class MapInPandas(UnaryNode):
    """``df.mapInPandas(f, schema)`` (``is_arrow``: ``mapInArrow``): ``func`` turns an iterator
    of the partition's batches (pandas DataFrames, or Arrow RecordBatches) into an iterator of
    batches of ``output_attrs``.  Prints ``MapInPandas f(a#1, b#2)#5, [x#6, y#7], false``."""

    func: PythonUDF
    output_attrs: tuple[AttributeReference, ...]
    child: LogicalPlan
    is_arrow: bool = False
    is_barrier: bool = False

    def _compute_output(self) -> tuple[AttributeReference, ...]:
        return self.output_attrs

    @property
    def produced_attributes(self) -> frozenset[int]:
        return frozenset(a.id for a in self.output_attrs)

    def simple_string(self) -> str:
        name = "MapInArrow" if self.is_arrow else "MapInPandas"
        return (f"{name} {self.func.simple_string()}, {_attrs_str(self.output_attrs)}, "
                f"{str(self.is_barrier).lower()}")


@node
class FlatMapGroupsInPandas(UnaryNode):
    """``df.groupBy(keys).applyInPandas(f, schema)`` (``is_arrow``: ``applyInArrow``): ``func``
    maps each group's rows (a pandas DataFrame, or an Arrow Table) to rows of
    ``output_attrs``; a function of two parameters gets the group's key first.  Prints
    ``FlatMapGroupsInPandas [k#1], f(k#1, v#2)#5, [x#6]``."""

    grouping: tuple[Expression, ...]
    func: PythonUDF
    output_attrs: tuple[AttributeReference, ...]
    child: LogicalPlan
    is_arrow: bool = False

    def _compute_output(self) -> tuple[AttributeReference, ...]:
        return self.output_attrs

    @property
    def produced_attributes(self) -> frozenset[int]:
        return frozenset(a.id for a in self.output_attrs)

    def simple_string(self) -> str:
        name = "FlatMapGroupsInArrow" if self.is_arrow else "FlatMapGroupsInPandas"
        return (f"{name} {_attrs_str(self.grouping)}, {self.func.simple_string()}, "
                f"{_attrs_str(self.output_attrs)}")
