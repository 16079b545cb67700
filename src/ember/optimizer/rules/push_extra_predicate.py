"""PushExtraPredicateThroughJoin: filter a join's inputs with what its cross-side condition implies.

Spark 4's rule (batch "Push extra predicate through join", before PushDownPredicates).  A join
condition conjunct that reads both sides cannot be pushed down, but a weaker predicate over one
side often can: from ``(n1 = 'FRANCE' AND n2 = 'GERMANY') OR (n1 = 'GERMANY' AND n2 = 'FRANCE')``
the left side must satisfy ``n1 = 'FRANCE' OR n1 = 'GERMANY'``.  Those extra predicates filter the
inputs; the join keeps its whole condition (it is not rewritten, so it is never expanded)::

    Join Inner, ((a#1 = 1) AND (x#3 = 2)) OR (a#1 = 3)        Join Inner, <same condition>
    :- t1 (a)                                       ==>      :- Filter ((a#1 = 1) OR (a#1 = 3))
    +- t2 (x)                                                :  +- t1
                                                             +- t2

(the right side gets nothing here: ``a#1 = 3`` says nothing about ``x``).

For each deterministic conjunct that references both sides (and not only one),
:func:`extract_predicates_within_output_set` keeps, per side, the largest part of it over that
side's columns: of an ``And`` whichever operands extract; of an ``Or`` only when both branches
extract (``(a1 AND a2) OR (b1 AND b2)`` implies ``a1 OR b1``); any other expression only when
all its columns are the side's.  The extracts (And-ed) filter:

=====================================  ==============================
join type                              sides filtered
=====================================  ==============================
Inner, Cross, LeftSemi                 left and right
RightOuter                             left (the null-supplying side)
LeftOuter, LeftAnti, ExistenceJoin     right
FullOuter                              none (rule does not apply)
=====================================  ==============================

Valid because a row of a filtered side that fails its extra predicate can never satisfy the
join condition: for an inner/semi join it produces no output either way; for an outer join only
the null-supplying side is filtered (a preserved-side row without a match is still emitted,
NULL-padded), and LeftAnti / ExistenceJoin keep every left row and only look for matches on the
right.  Non-deterministic conjuncts are never used.  No configuration keys are read.

Termination (Spark's ``processedJoinConditionTag``): the batch runs this rule and
PushDownPredicates to a fixed point, and PushDownPredicates moves the new Filters away from the
join, so the rule would otherwise add them again on every iteration.  The new Join is marked with
``Join.processed_condition`` (a :class:`~ember.plans.logical.nodes.ProcessedJoinCondition` boxing
the condition).  Like Spark's tag, the mark survives ``copy`` / ``with_children`` (PushDownPredicates
rebuilds joins that way) and takes no part in plan equality; a join whose mark is semantically
equal to its condition is skipped, so the rule runs again only if the condition itself changes.

Fast path: the rule is a pure function of the subtree (the mark is a field of the node), so the
top-down pass runs through ``ember.trees.transform_down_memo``.
"""

from __future__ import annotations

from ember.expressions.base import Expression, and_all
from ember.expressions.predicate_helper import split_conjunctive_predicates
from ember.optimizer.rule_executor import Rule
from ember.plans.logical.join_type import BuildSide, JoinType
from ember.plans.logical.nodes import Filter, Join, LogicalPlan, ProcessedJoinCondition
from ember.trees import rewrite_bit, transform_down_memo
from ember.expressions.predicates import And, Or

__all__ = [
    "PushExtraPredicateThroughJoin",
    "extract_predicates_within_output_set",
    "push_extra_predicate_through_join",
]

def extract_predicates_within_output_set(
        condition: Expression, output_set: frozenset[int]) -> Expression | None:
    """Spark's ``PredicateHelper.extractPredicatesWithinOutputSet``: the strongest predicate
    implied by ``condition`` that reads only attributes in ``output_set`` (ids), or None.

    ``And``: the operands that extract (both: their ``And``); ``Or``: only when both branches
    extract; anything else: itself when deterministic and within ``output_set``.  ``Not`` is
    not looked into (BooleanSimplification has pushed it below And/Or)."""

    match condition:
        case And(left=l, right=r):
            le = extract_predicates_within_output_set(l, output_set)
            re_ = extract_predicates_within_output_set(r, output_set)
            if le is None:
                return re_
            if re_ is None:
                return le
            return And(le, re_)
        case Or(left=l, right=r):
            le = extract_predicates_within_output_set(l, output_set)
            if le is None:
                return None
            re_ = extract_predicates_within_output_set(r, output_set)
            return None if re_ is None else Or(le, re_)
        case _:
            if condition.deterministic and condition.references <= output_set:
                return condition
            return None


def _extras(conjuncts: list[Expression], output_set: frozenset[int]) -> Expression | None:
    extracted = [e for c in conjuncts
                 if (e := extract_predicates_within_output_set(c, output_set)) is not None]
    return and_all(extracted)


def _pushable_sides(jt: JoinType) -> tuple[bool, bool]:
    """(filter the left input, filter the right input): the sides whose unmatched rows never
    reach the output (Spark's ``canPushThrough`` and its per-type cases)."""
    return not jt.keeps_unmatched(BuildSide.LEFT), not jt.keeps_unmatched(BuildSide.RIGHT)


def push_extra_predicate_through_join(p: LogicalPlan) -> LogicalPlan | None:
    """The rule's rewrite of the single node ``p``; None when it does not apply."""
    match p:
        case Join(join_type=JoinType() as jt, condition=Expression() as cond, left=left,
                  right=right) if _pushable_sides(jt) != (False, False):
            mark = p.processed_condition
            if mark is not None and mark.condition.semantic_equals(cond):
                return None
            lids, rids = left.output_set, right.output_set
            both_sides = [c for c in split_conjunctive_predicates(cond)
                          if c.deterministic and c.references
                          and not c.references <= lids and not c.references <= rids]
            if not both_sides:
                return None
            push_left, push_right = _pushable_sides(jt)
            left_extra = _extras(both_sides, lids) if push_left else None
            right_extra = _extras(both_sides, rids) if push_right else None
            if left_extra is None and right_extra is None:
                return None
            return p.copy(
                left=left if left_extra is None else Filter(left_extra, left),
                right=right if right_extra is None else Filter(right_extra, right),
                processed_condition=ProcessedJoinCondition(cond))
        case _:
            return None


_BIT = rewrite_bit("PushExtraPredicateThroughJoin")


class PushExtraPredicateThroughJoin(Rule):
    """Spark's ``PushExtraPredicateThroughJoin`` (see the module docstring)."""

    rule_name = "PushExtraPredicateThroughJoin"

    def apply(self, plan: LogicalPlan, conf) -> LogicalPlan:
        return transform_down_memo(plan, push_extra_predicate_through_join, _BIT)
