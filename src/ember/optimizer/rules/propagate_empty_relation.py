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
from ember.plans.logical.join_type import ExistenceOutput, JoinType
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


def _join(p: Join) -> LogicalPlan:
    """Spark's per-join-type cases, read off the join type: with an empty input or a false
    condition no pair matches, so the output is the unmatched rows of the non-empty inputs the
    join keeps (NULL-padded, or as they are for LeftAnti); without a condition, a LeftSemi /
    LeftAnti over a non-empty right side keeps every / no left row."""
    jt, cond = p.join_type, p.condition
    left_empty, right_empty = is_empty_relation(p.left), is_empty_relation(p.right)
    false_cond = _is_false(cond)
    if left_empty or right_empty or false_cond:
        left_rows = jt.keeps_unmatched_left and not left_empty
        right_rows = jt.keeps_unmatched_right and not right_empty
        if not left_rows and not right_rows:
            return empty_relation(p)
        if left_rows and right_rows:  # FullOuter with a false condition: a union, not rewritten
            return p
        if left_rows:
            return Project(p.left.output + _nulls(p.right), p.left) if jt.outputs_right \
                else p.left
        return Project(_nulls(p.left) + p.right.output, p.right)
    if cond is None and _non_empty(p.right):
        if jt.existence_output is ExistenceOutput.MATCHED:
            return p.left
        if jt.existence_output is ExistenceOutput.UNMATCHED:
            return empty_relation(p)
    return p


def _propagate(p: LogicalPlan) -> LogicalPlan:
    match p:
        case Union(inputs=inputs) if any(map(is_empty_relation, inputs)):
            return _union(p)
        case Join(join_type=JoinType() as jt, left=l, right=r) if (
                jt.existence_output is not ExistenceOutput.FLAGGED
                and not (l.is_streaming or r.is_streaming)):
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
    patterns = (LocalRelation,)

    def apply(self, plan: LogicalPlan, conf: SQLConf) -> LogicalPlan:
        return plan.transform_up(_propagate)


