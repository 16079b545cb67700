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
    from tests.local_run import run_plan

    t = run_plan(plan, SQLConf({"ember.execution.batchSize": batch_size}))
    cols = [c.to_pylist() for c in t.columns]
    return list(zip(*cols)) if cols else [()] * t.num_rows


def fixed_point(rule, plan: LogicalPlan) -> LogicalPlan:
    """``rule`` applied to ``plan`` until it stops changing (``plan`` itself if it never does)."""
    from ember.optimizer.rule_executor import Batch, FixedPoint, RuleExecutor

    return RuleExecutor([Batch(rule.rule_name, FixedPoint(100), (rule,))]).execute(plan)


def rewrite_for_execution(plan: LogicalPlan) -> LogicalPlan:
    """The subquery rewrite, then BooleanSimplification, PushDownPredicates, ReorderJoin and
    PushDownPredicates again (each to a fixed point): a plan's subqueries become joins and its
    filters meet the joins they belong to, so ``FROM a, b, c WHERE ...`` does not stay a
    cartesian product."""
    from ember.optimizer.rules.boolean_simplification import BooleanSimplification
    from ember.optimizer.rules.push_down_predicates import PushDownPredicates
    from ember.optimizer.rules.reorder_join import ReorderJoin
    from ember.optimizer.rules.rewrite_subquery import rewrite_subqueries

    plan = rewrite_subqueries(plan)
    plan = fixed_point(BooleanSimplification(), plan)
    plan = fixed_point(PushDownPredicates(), plan)
    plan = ReorderJoin()(plan)
    return fixed_point(PushDownPredicates(), plan)


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
