"""ReorderJoin: order a tree of inner joins so each join has a condition when one exists.

Spark's ``ReorderJoin`` (the non-CBO one) with ``ExtractFiltersAndInnerJoins``: a left-deep tree
of Inner/Cross joins without hints (and Filters directly above them) is flattened into items (the
right sides and the bottom-left plan, in FROM order) and conjuncts; the joins are rebuilt greedily
from the first item, each time taking the first remaining item that some conjunct connects with
what is already joined (or the next item when none does), with the conjuncts that the pair can
evaluate as the join condition::

    Filter (a = c) AND (b = c)            Join Inner, (b = c)          FROM t1, t2, t3
    +- Join Inner                         :- Join Inner, (a = c)       t1(a) t2(b) t3(c)
       :- Join Inner              ==>     :  :- t1
       :  :- t1                           :  +- t3
       :  +- t2                           +- t2
       +- t3

Conjuncts that read one item only are left in a Filter above, for PushDownPredicates to push
down again (run it before and after this rule).  When the output order of the rebuilt tree
differs, a Project restores it.  Applies only to trees of more than two items with at least one
conjunct; non-deterministic Filters and joins with hints stop the flattening.  Inner-join
semantics make any order valid.  No configuration keys are read.
"""

from __future__ import annotations

from ember.expressions.base import Expression, and_all, split_conjuncts
from ember.plans.logical.join_type import JoinType
from ember.plans.logical.nodes import Filter, Join, LogicalPlan, Project

__all__ = ["reorder_join"]


def _is_flattenable_join(p: LogicalPlan) -> bool:
    return (isinstance(p, Join) and isinstance(p.join_type, JoinType)
            and p.join_type.is_inner_like and p.hint.is_empty)


def _flatten(p: LogicalPlan) -> tuple[list[LogicalPlan], list[Expression]]:
    """Spark's ``ExtractFiltersAndInnerJoins.flattenJoin``: (items, conjuncts)."""
    match p:
        case Join(left=left, right=right, condition=cond) if _is_flattenable_join(p):
            items, conds = _flatten(left)
            return items + [right], conds + split_conjuncts(cond)
        case Filter(condition=cond, child=child) if (cond.deterministic
                                                     and _is_flattenable_join(child)):
            items, conds = _flatten(child)
            return items, conds + split_conjuncts(cond)
        case _:
            return [p], []


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
    """``plan`` with each inner-join tree reordered (same output); ``plan`` itself if none."""
    if _is_flattenable_join(plan) or (isinstance(plan, Filter) and _is_flattenable_join(plan.child)):
        items, conds = _flatten(plan)
        if len(items) > 2 and conds:
            new_items = [reorder_join(i) for i in items]
            out = _ordered_join(new_items, conds)
            if [a.id for a in out.output] != [a.id for a in plan.output]:
                out = Project(plan.output, out)
            return out
    new_children = tuple(reorder_join(c) for c in plan.children)
    if all(a is b for a, b in zip(new_children, plan.children)):
        return plan
    return plan.with_children(new_children)
