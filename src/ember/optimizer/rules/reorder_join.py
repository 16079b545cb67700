"""ReorderJoin: rebuild left-deep trees of inner/cross joins so each join has a condition.

Spark's heuristic (non-CBO) ``ReorderJoin``.  Walking the plan
top-down, at every node that ``ExtractFiltersAndInnerJoins`` matches
(:func:`ember.plans.logical.patterns.extract_filters_and_inner_joins`: consecutive Inner/Cross
joins without hints and Filters directly above them, flattened down the LEFT side only) and that
yields more than two items and at least one conjunct, the joins are rebuilt by
:func:`create_ordered_join` (greedy, left-deep)::

    Filter (a = c) AND (b = c)            Project [a, b, c]                FROM t1, t2, t3
    +- Join Inner                         +- Join Inner, (b = c)           t1(a) t2(b) t3(c)
       :- Join Inner              ==>        :- Join Inner, (a = c)
       :  :- t1                              :  :- t1
       :  +- t2                              :  +- t3
       +- t3                                 +- t2

- Three or more items: take the first; join it with the first later item that some conjunct
  *connects* with it (else the next item), under every conjunct the pair can evaluate and that
  may sit in a join (``can_evaluate_within_join``), with that item's recorded join type; repeat
  with the join as the new first item (typed Inner).  Quirk kept from Spark: a conjunct without
  references (a literal, ``row_number() = 2``) "connects" any pair, so the next item is taken.
- Two items: one join, Inner when both items are Inner, else Cross, under the conjuncts that may
  sit in a join; the others (non-deterministic, unevaluable, EXISTS / IN subqueries) in a Filter
  on top.
- Cross-joined items without a connecting condition therefore end up after the connected ones.
- When the rebuilt tree's output order differs, a Project restores the original order.

When ``spark.sql.cbo.starSchemaDetection`` is true and ``spark.sql.cbo.enabled`` false, the
items are first put in star order (:func:`ember.optimizer.rules.star_schema.reorder_star_joins`:
fact table, then selective dimensions by ascending size) -- a preference only, since the greedy
step still picks the first *connected* item.

Valid for Inner/Cross joins only (any order gives the same rows); outer, semi and anti joins and
hinted joins are never flattened.  Reads ``spark.sql.cbo.starSchemaDetection``,
``spark.sql.cbo.enabled`` (and through star detection ``spark.sql.cbo.starJoinFTRatio``,
``spark.sql.statistics.ndv.maxError``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ember.conf import CBO_ENABLED, CBO_STAR_SCHEMA_DETECTION
from ember.expressions.base import Expression, and_all
from ember.expressions.predicate_helper import can_evaluate, can_evaluate_within_join
from ember.optimizer.rule_executor import Rule
from ember.plans.logical.join_type import JoinType
from ember.plans.logical.nodes import Filter, Join, LogicalPlan, Project
from ember.plans.logical.patterns import extract_filters_and_inner_joins
from ember.errors import InternalError
from ember.optimizer.rules.star_schema import reorder_star_joins

if TYPE_CHECKING:  # pragma: no cover
    from ember.conf import SQLConf

__all__ = ["ReorderJoin", "create_ordered_join"]

Item = tuple[LogicalPlan, JoinType]


def create_ordered_join(items: list[Item], conditions: list[Expression]) -> LogicalPlan:
    """Spark's ``ReorderJoin.createOrderedJoin``: a left-deep join of ``items`` (``(plan,
    join_type)`` pairs, at least two) under ``conditions`` (conjuncts).

    >>> # [(t1, Inner), (t2, Cross)], [a = b, row_number() = 2, true]
    >>> #   -> Filter (row_number() = 2) <- Join Cross, ((a = b) AND true) (t1, t2)
    """
    if len(items) < 2:
        raise InternalError("ReorderJoin.createOrderedJoin needs at least two items")
    conds = list(conditions)
    items = list(items)
    while len(items) > 2:
        left = items[0][0]
        rest = items[1:]
        left_out = left.output_set
        chosen: Item | None = None
        for cand in rest:
            plan = cand[0]
            refs = left_out | plan.output_set
            if any(c.references <= refs for c in conds
                   if not (c.references and c.references <= left_out)
                   and not (c.references and can_evaluate(c, plan))):
                chosen = cand
                break
        right, join_type = chosen if chosen is not None else rest[0]
        joined_refs = left_out | right.output_set
        in_join = [c for c in conds if c.references <= joined_refs and can_evaluate_within_join(c)]
        conds = [c for c in conds
                 if not (c.references <= joined_refs and can_evaluate_within_join(c))]
        joined = Join(left, right, join_type, and_all(in_join))
        # "should not have reference to same logical plan": identity, not equality (Spark's eq)
        items = [(joined, JoinType.INNER)] + [it for it in rest if it[0] is not right]
    (left, left_type), (right, right_type) = items
    in_join = [c for c in conds if can_evaluate_within_join(c)]
    others = [c for c in conds if not can_evaluate_within_join(c)]
    jt = (JoinType.INNER if left_type is JoinType.INNER and right_type is JoinType.INNER
          else JoinType.CROSS)
    join = Join(left, right, jt, and_all(in_join))
    return Filter(and_all(others), join) if others else join  # type: ignore[arg-type]


def _star_detection_enabled(conf: "SQLConf") -> bool:
    return CBO_STAR_SCHEMA_DETECTION.read(conf) and not CBO_ENABLED.read(conf)


def _reorder(p: LogicalPlan, conf: "SQLConf") -> LogicalPlan:
    extracted = extract_filters_and_inner_joins(p)
    if extracted is None:
        return p
    items, conds = extracted
    if len(items) <= 2 or not conds:
        return p
    if _star_detection_enabled(conf):
        star = reorder_star_joins(items, conds, conf)
        if star:
            rest = [it for it in items if it not in star]
            reordered = create_ordered_join(list(star) + rest, conds)
        else:
            reordered = create_ordered_join(items, conds)
    else:
        reordered = create_ordered_join(items, conds)
    out, new_out = p.output, reordered.output
    if len(out) == len(new_out) and all(a.id == b.id for a, b in zip(out, new_out)):
        return reordered
    # Reordering changed the column order: restore it.
    return Project(out, reordered)


class ReorderJoin(Rule):
    """Spark's ``ReorderJoin`` (see the module docstring)."""

    rule_name = "ReorderJoin"
    patterns = (Join,)

    def apply(self, plan: LogicalPlan, conf: "SQLConf") -> LogicalPlan:
        if plan.find(lambda n: isinstance(n, Join) and isinstance(n.join_type, JoinType)
                     and n.join_type.is_inner_like) is None:
            return plan
        return plan.transform_down(lambda n: _reorder(n, conf))
