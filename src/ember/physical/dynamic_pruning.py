"""The dynamic partition pruning filter of a file scan (Spark's ``DynamicPruningExpression``
over an ``InSubqueryExec`` of a ``SubqueryBroadcastExec``): the scan's partition column
``child`` must be among the values of the build key ``key_index`` of the broadcast ``build``.

It is a partition filter only: the runtimes resolve it once the broadcast is built (the
partition directories whose value is not among the build keys are not read) and never evaluate
it row by row. Printed as Spark prints it: ``dynamicpruningexpression(k#1 IN dynamicpruning#9)``.
"""

from __future__ import annotations

from dataclasses import field
from typing import Any

from ember import types as T
from ember.expressions.base import Expression
from ember.trees import node

__all__ = ["DynamicPruningExpression"]


@node
class DynamicPruningExpression(Expression):
    child: Expression
    #: the ``BroadcastExchangeExec`` whose rows hold the filtering keys (not part of equality,
    #: never pickled: a task does not resolve it)
    build: Any = field(default=None, compare=False)
    key_index: int = 0
    pruning_id: int = 0

    @property
    def data_type(self) -> T.DataType:
        return T.BOOLEAN

    @property
    def nullable(self) -> bool:
        return False

    def simple_string(self) -> str:
        return (f"dynamicpruningexpression({self.child.simple_string()} IN "
                f"dynamicpruning#{self.pruning_id})")

    def sql(self) -> str:
        return self.simple_string()

    def __reduce__(self) -> tuple[Any, ...]:
        return (DynamicPruningExpression, (self.child, None, self.key_index, self.pruning_id))
