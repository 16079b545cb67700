"""ReorderJoin: order a tree of inner joins so each join has a condition when one exists.

Spark's ``ReorderJoin`` (the non-CBO one): a left-deep tree of Inner/Cross joins without hints
(and deterministic Filters directly above them) is flattened by ``ExtractFiltersAndInnerJoins``
(:mod:`ember.plans.logical.patterns`) into items (the bottom-left plan and the right sides, in
FROM order) and conjuncts; the joins are rebuilt greedily from the first item, each time taking
the first remaining item that some conjunct connects with what is already joined (or the next
item when none does), with every remaining conjunct the pair can evaluate as the join
condition (Spark's ``createOrderedJoin``)::

    Filter (a = c) AND (b = c)            Project [a, b, c]                FROM t1, t2, t3
    +- Join Inner                         +- Join Inner, (b = c)           t1(a) t2(b) t3(c)
       :- Join Inner              ==>        :- Join Inner, (a = c)
       :  :- t1                              :  :- t1
       :  +- t2                              :  +- t3
       +- t3                                 +- t2

A conjunct that reads one item only lands in the condition of the first join holding that item;
PushDownPredicates (run before and after this rule) pushes it back into the item.  When the
output order of the rebuilt tree differs, a Project restores it.  Applies only to trees of more
than two items with at least one conjunct; non-deterministic Filters and joins with hints stop
the flattening.  Inner-join semantics make any order valid (not so for outer, semi or anti
joins, which are never flattened).  No configuration keys are read.
"""

from __future__ import annotations

from ember.expressions.base import Expression, and_all
from ember.plans.logical.join_type import JoinType
from ember.plans.logical.nodes import Filter, Join, LogicalPlan, Project
from ember.plans.logical.patterns import extract_filters_and_inner_joins

__all__ = ["reorder_join"]


def _evaluable(e: Expression, p: LogicalPlan) -> bool:
    return bool(e.references) and e.references <= p.output_set


def _ordered_join(items: list[LogicalPlan], conds: list[Expression]) -> LogicalPlan:
    """Spark's ``createOrderedJoin`` (all joins Inner)."""
    left = items[0]
    rest = items[1:]
    while rest:
        nxt = None
        if len(rest) > 1:
            for cand in rest:
                refs = left.output_set | cand.output_set
                if any(c.references <= refs for c in conds
                       if not _evaluable(c, left) and not _evaluable(c, cand)):
                    nxt = cand
                    break
        right = nxt if nxt is not None else rest[0]
        joined_refs = left.output_set | right.output_set
        here = [c for c in conds if c.references <= joined_refs]
        conds = [c for c in conds if not c.references <= joined_refs]
        left = Join(left, right, JoinType.INNER, and_all(here))
        rest = [r for r in rest if r is not right]
    return Filter(and_all(conds), left) if conds else left


def reorder_join(plan: LogicalPlan) -> LogicalPlan:
    """``plan`` with each inner-join tree reordered (same output); ``plan`` itself if none.

    >>> # Filter(a = c, Join(Join(t1, t2), t3))  ->  Join(Join(t1, t3, a = c), t2)
    """
    flattened = extract_filters_and_inner_joins(plan)
    if flattened is not None:
        items, conds = flattened
        if len(items) > 2 and conds:
            out = _ordered_join([reorder_join(i) for i in items], conds)
            if [a.id for a in out.output] != [a.id for a in plan.output]:
                out = Project(plan.output, out)
            return out
    new_children = tuple(reorder_join(c) for c in plan.children)
    if all(a is b for a, b in zip(new_children, plan.children)):
        return plan
    return plan.with_children(new_children)
