"""A small DSL to build analyzed plans by hand for the subquery-rewrite tests."""

from __future__ import annotations

from collections import Counter
from typing import Any

import pyarrow as pa

from ember import types as T
from ember.expressions.base import Alias, AttributeReference, Expression, Literal
from ember.expressions.subquery import OuterReference
from ember.plans.logical.nodes import LocalRelation, LogicalPlan, SubqueryAlias


def relation(name: str, columns: list[tuple[str, T.DataType]], rows: list[tuple]) -> SubqueryAlias:
    """``SubqueryAlias name (LocalRelation)`` with the given rows (a fresh id per column)."""
    attrs = tuple(AttributeReference(c, t, True, attr_qualifier=(name,)) for c, t in columns)
    arrays = [pa.array([r[i] for r in rows], type=t.to_arrow()) for i, (_, t) in enumerate(columns)]
    table = pa.Table.from_arrays(arrays, names=[c for c, _ in columns])
    return SubqueryAlias((name,), LocalRelation(attrs, table))


def col(plan: LogicalPlan, name: str) -> AttributeReference:
    for a in plan.output:
        if a.name == name:
            return a
    raise KeyError(name)


def outer(plan: LogicalPlan, name: str) -> OuterReference:
    return OuterReference(col(plan, name))


def lit(v: Any, t: T.DataType = T.INT) -> Literal:
    return Literal(v, t)


def alias(e: Expression, name: str) -> Alias:
    return Alias(e, name)


def run(plan: LogicalPlan, batch_size: int = 65536) -> list[tuple]:
    from ember.conf import SQLConf
    from ember.execution.context import ExecContext
    from ember.execution.executor import collect

    t = collect(plan, ExecContext(SQLConf({"ember.execution.batchSize": batch_size})))
    cols = [c.to_pylist() for c in t.columns]
    return list(zip(*cols)) if cols else [()] * t.num_rows


def bag(rows: list[tuple]) -> Counter:
    return Counter(tuple(r) for r in rows)


def has_subquery(plan: LogicalPlan) -> bool:
    from ember.expressions.subquery import OuterReference, SubqueryExpression

    return plan.find(lambda p: any(
        e.find(lambda x: isinstance(x, (SubqueryExpression, OuterReference))) is not None
        for e in p.expressions())) is not None


def resolved(plan: LogicalPlan) -> bool:
    """``plan.resolved`` and, node by node, every expression resolved."""
    return plan.resolved and plan.find(
        lambda p: not all(e.resolved for e in p.expressions())) is None
