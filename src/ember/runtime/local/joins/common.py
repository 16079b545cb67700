"""Glue shared by the join operators: binding a physical join node to kernels, metrics access."""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from typing import Any

import pyarrow as pa

from ember.execution.kernels.batches import conform_batch, schema_of
from ember.execution.prepare import prepare
from ember.expressions.base import AttributeReference, Expression
from ember.runtime.local.joins.kernel import JoinLayout


def bind_all(exprs: Sequence[Expression], attrs: Sequence[AttributeReference]) -> tuple[Expression, ...]:
    """``exprs`` bound to (and constant-folded over) ``attrs``."""
    return tuple(prepare(e, attrs) for e in exprs)


def layout_of(node: Any, batch_size: int, *, build_left: bool,
              condition: Expression | None = None, use_condition: bool = True) -> JoinLayout:
    """The :class:`JoinLayout` of a physical join node (``node.output`` order)."""
    cond = node.condition if use_condition and condition is None else condition
    return JoinLayout.of(node.join_type, build_left, node.left.output, node.right.output,
                         node.output, cond, batch_size)


def conformed(batches: Iterable[pa.RecordBatch], attrs: Sequence[AttributeReference]
              ) -> Iterator[pa.RecordBatch]:
    """``batches`` relabelled to ``attrs``' schema (children may name columns differently)."""
    schema = schema_of(attrs)
    for b in batches:
        yield conform_batch(b, schema)


class NodeMetricsSink:
    """Where an operator partition reports build size / time / spill size; a no-op without a
    runtime (kernel-level tests)."""

    def __init__(self, rt: Any = None, node: Any = None) -> None:
        self._m = None
        if rt is not None and node is not None:
            try:
                self._m = rt.metrics.node(node)
            except AttributeError:
                self._m = None

    def add(self, **counts: int) -> None:
        if self._m is not None:
            self._m.add(**counts)

    def record_memory(self, nbytes: int) -> None:
        if self._m is not None:
            self._m.record_memory(nbytes)


def runtime_memory(rt: Any):
    """The run's MemoryManager and SpillDir (fresh ones, budget from the default conf, without a
    runtime)."""
    from ember.runtime.local.memory import MemoryManager, SpillDir

    mem = getattr(rt, "memory", None)
    sd = getattr(rt, "spill_dir", None)
    if mem is None:
        from ember.conf import MEMORY_BUDGET, SQLConf

        mem = MemoryManager(int(SQLConf().get(MEMORY_BUDGET)))
    if sd is None:
        sd = SpillDir()
    return mem, sd
