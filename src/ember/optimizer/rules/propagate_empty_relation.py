"""PropagateEmptyRelation: operators over empty LocalRelations replaced by empty relations.

Spark 4's rule (``PropagateEmptyRelationBase.commonApplyFunc``, bottom-up)::

    Union (empty, r, empty)            ==>  r  (Project aliasing r's ids to the Union's, if they
                                                 differ; no input left -> empty)
    Join Inner/Cross (empty, r)        ==>  empty        (also on a ``false`` join condition)
    Join LeftOuter (l, empty)          ==>  Project [l.*, null AS r.c ...] (l)
    Join RightOuter (empty, r)         ==>  Project [null AS l.c ..., r.*] (r)
    Join FullOuter (empty, empty)      ==>  empty;   one side empty -> the other, NULL-padded
    Join LeftSemi (l, empty | false)   ==>  empty;   LeftAnti (l, empty | false) ==> l
    Join LeftSemi (l, non-empty), no condition ==> l;   LeftAnti (l, non-empty), no condition ==>
        empty;   Join LeftOuter/Semi/Anti (empty, r) ==> empty
    Project/Filter/Sort/Limit/Offset/Expand/Distinct (empty)  ==>  empty
    Aggregate [k] (empty)  with grouping  ==>  empty   (without grouping it returns one row: kept)

"empty" is a ``LocalRelation`` without rows carrying the replaced node's output (same ids).
ExistenceJoin is left alone, and so is a join with a streaming child (Spark: a stateful
streaming join still has state to keep and evict when a batch or its condition is empty).  No
configuration keys are read.
"""

from __future__ import annotations

import pyarrow as pa

from ember import types as T
from ember.conf import SQLConf
from ember.expressions.base import Alias, Expression, Literal
from ember.optimizer.rule_executor import Rule
from ember.plans.logical.join_type import JoinType
from ember.plans.logical.nodes import (
    Aggregate,
    Distinct,
    Expand,
    Filter,
    Join,
    Limit,
    LocalRelation,
    LogicalPlan,
    Offset,
    Project,
    Sort,
    Union,
)

__all__ = ["PropagateEmptyRelation", "empty_relation", "is_empty_relation"]


def is_empty_relation(plan: LogicalPlan) -> bool:
    """A ``LocalRelation`` with no rows."""
    # unknown_size: Spark's LogicalRDD (createDataFrame of Python rows), never "empty" to Spark
    return isinstance(plan, LocalRelation) and plan.num_rows == 0 and not plan.unknown_size


def _non_empty(plan: LogicalPlan) -> bool:
    return isinstance(plan, LocalRelation) and plan.num_rows > 0 and not plan.unknown_size


def empty_relation(plan: LogicalPlan) -> LocalRelation:
    """An empty ``LocalRelation`` with ``plan``'s output."""
    attrs = plan.output
    schema = pa.schema([pa.field(f"c{i}", a.data_type.to_arrow()) for i, a in enumerate(attrs)])
    return LocalRelation(attrs, schema.empty_table())


def _nulls(plan: LogicalPlan) -> tuple[Expression, ...]:
    return tuple(Alias(Literal(None, a.data_type), a.name, a.id) for a in plan.output)


def _is_false(e: Expression | None) -> bool:
    return isinstance(e, Literal) and e.value is False and isinstance(e.dtype, T.BooleanType)


def _union(p: Union) -> LogicalPlan:
    kept = [c for c in p.inputs if not is_empty_relation(c)]
    if not kept:
        return empty_relation(p)
    new = p.copy(inputs=tuple(kept)) if len(kept) > 1 else kept[0]
    pairs = list(zip(new.output, p.output))
    if all(n.id == o.id for n, o in pairs):
        return new
    return Project(tuple(n if n.id == o.id else Alias(n, o.name, o.id) for n, o in pairs), new)


def _join(p: Join) -> LogicalPlan:  # noqa: C901 - Spark's case list
    jt, cond = p.join_type, p.condition
    left_empty, right_empty = is_empty_relation(p.left), is_empty_relation(p.right)
    false_cond = _is_false(cond)
    if left_empty or right_empty or false_cond:
        if jt.is_inner_like:
            return empty_relation(p)
        if jt in (JoinType.LEFT_OUTER, JoinType.LEFT_SEMI, JoinType.LEFT_ANTI) and left_empty:
            return empty_relation(p)
        if jt is JoinType.LEFT_SEMI and (right_empty or false_cond):
            return empty_relation(p)
        if jt is JoinType.LEFT_ANTI and (right_empty or false_cond):
            return p.left
        if jt is JoinType.FULL_OUTER and left_empty and right_empty:
            return empty_relation(p)
        if jt in (JoinType.LEFT_OUTER, JoinType.FULL_OUTER) and right_empty:
            return Project(p.left.output + _nulls(p.right), p.left)
        if jt is JoinType.RIGHT_OUTER and right_empty:
            return empty_relation(p)
        if jt in (JoinType.RIGHT_OUTER, JoinType.FULL_OUTER) and left_empty:
            return Project(_nulls(p.left) + p.right.output, p.right)
        if jt is JoinType.LEFT_OUTER and false_cond:
            return Project(p.left.output + _nulls(p.right), p.left)
        if jt is JoinType.RIGHT_OUTER and false_cond:
            return Project(_nulls(p.left) + p.right.output, p.right)
        return p
    if jt is JoinType.LEFT_SEMI and cond is None and _non_empty(p.right):
        return p.left
    if jt is JoinType.LEFT_ANTI and cond is None and _non_empty(p.right):
        return empty_relation(p)
    return p


def _propagate(p: LogicalPlan) -> LogicalPlan:
    match p:
        case Union(inputs=inputs) if any(map(is_empty_relation, inputs)):
            return _union(p)
        case Join(join_type=JoinType() as jt, left=l, right=r) if (
                jt is not JoinType.EXISTENCE and not (l.is_streaming or r.is_streaming)):
            return _join(p)
        case Project(child=c) | Filter(child=c) | Sort(child=c) | Limit(child=c) | \
                Offset(child=c) | Expand(child=c) | Distinct(child=c) if is_empty_relation(c):
            return empty_relation(p)
        case Aggregate(grouping_expressions=g, child=c) if g and is_empty_relation(c):
            return empty_relation(p)
        case _:
            return p


class PropagateEmptyRelation(Rule):
    """See the module docstring."""

    rule_name = "PropagateEmptyRelation"

    def apply(self, plan: LogicalPlan, conf: SQLConf) -> LogicalPlan:
        return plan.transform_up(_propagate)


