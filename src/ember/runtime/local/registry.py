"""Operator registry of the local runtime: physical node class -> function running it.

An operator is a function ``run(node, rt) -> list[PartitionFn]`` registered with
``@operator(NodeClass)``; it is called once per node and run, builds its partitions from its
children's (``rt.execute(child)``) and returns one lazy callable per output partition::

    @operator(ProjectExec)
    def run_project(node: ProjectExec, rt: RunContext) -> list[PartitionFn]:
        ...

Lookup walks the node's MRO, so an operator registered for a base class serves subclasses.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any, TypeVar

import pyarrow as pa

from ember.errors import InternalError

if TYPE_CHECKING:
    from ember.runtime.local.context import RunContext

__all__ = ["operator", "lookup", "PartitionFn", "OperatorFn", "registered"]

#: One output partition: calling it (once) yields that partition's record batches.
PartitionFn = Callable[[], Iterator[pa.RecordBatch]]
OperatorFn = Callable[[Any, "RunContext"], list[PartitionFn]]

_OPERATORS: dict[type, OperatorFn] = {}

F = TypeVar("F", bound=OperatorFn)


def operator(node_class: type) -> Callable[[F], F]:
    """Register the decorated function as the local operator for ``node_class``."""

    def register(fn: F) -> F:
        _OPERATORS[node_class] = fn
        return fn

    return register


def lookup(node: Any) -> OperatorFn:
    """The operator running ``node`` (InternalError naming the node when there is none)."""
    for cls in type(node).__mro__:
        fn = _OPERATORS.get(cls)
        if fn is not None:
            return fn
    raise InternalError(
        f"The local runtime has no operator for {type(node).__name__}: {node.simple_string()}")


def registered() -> frozenset[type]:
    """The node classes with a registered operator."""
    return frozenset(_OPERATORS)
