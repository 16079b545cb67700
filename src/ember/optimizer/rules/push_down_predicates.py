"""PushDownPredicates: move filter conjuncts as close to the relations as their columns allow.

Spark's ``PushPredicateThroughNonJoin`` and ``PushPredicateThroughJoin``, and their composite
``PushDownPredicates``, which on every node, top-down, tries CombineFilters' rewrite (the
CombineFilters module's), then the first, then the second, as Spark's does::

    Filter (a#1 = b#2) AND (x#3 > 1)           Join Inner, (a#1 = b#2)
    +- Join Inner                      ==>     :- Filter (x#3 > 1)
       :- t1 (a, x)                            :  +- t1
       +- t2 (b)                               +- t2

PushPredicateThroughNonJoin, for ``Filter`` over:

- ``Project`` whose items are all deterministic: the whole condition goes below, aliases replaced
  by their expressions (not when a subquery in the condition reads the Project's input); a
  conjunct whose correlated subquery reads one of the Project's aliases stays above it.
- ``Aggregate`` with grouping expressions and deterministic items: conjuncts that are
  deterministic, reference something, and after alias replacement read only the child's output
  (so: over grouping columns, never over aggregate results) go below; the rest stay above.
- ``Union``: deterministic conjuncts go into every input, attributes renamed by position.
- ``Distinct``, ``Sort``, ``Expand`` (Spark's ``canPushThrough``) with deterministic expressions:
  deterministic conjuncts over the child's output go below.
- ``EventTimeWatermark``: deterministic conjuncts that do not read the event-time column go below
  (so the watermark's event-time statistics see only the rows that survive them, as in Spark).
- ``Window`` partitioned by columns only: deterministic conjuncts that read only partition
  columns go below (a filtered partition is dropped whole, so the other rows' window values do
  not change); the rest stay above.
  Not through Limit/Offset (they pick rows) or leaf nodes.

PushPredicateThroughJoin (which sides a predicate may filter; ``JoinType.outputs_unpadded`` and
``JoinType.keeps_unmatched`` decide it):

================  ===============================  ====================================
join type         Filter above: pushed to          join condition conjuncts pushed to
================  ===============================  ====================================
Inner, Cross      left, right; the rest (if it     left, right
                  can be evaluated in a join)
                  joins the condition
LeftSemi          left                             left, right
LeftOuter         left                             right
LeftAnti          left                             right
ExistenceJoin     left                             right
RightOuter        right                            left
FullOuter         nothing                          nothing
================  ===============================  ====================================

Non-deterministic conjuncts are never pushed into a join's inputs.  No configuration keys.

Fast path: each step is a pure function of the subtree it rewrites, so the top-down pass runs
through ``ember.trees.transform_down_memo``: subtrees an earlier run of the same steps left
unchanged are not walked again.
"""

from __future__ import annotations

from ember.expressions.base import Alias, AttributeReference, Expression, and_all
from ember.expressions.predicate_helper import can_evaluate_within_join, split_conjunctive_predicates
from ember.optimizer.rule_executor import Rule
from ember.optimizer.rules.combine_filters import _combine
from ember.plans.logical.join_type import BuildSide, JoinType
from ember.plans.logical.nodes import (
    Window,
    Aggregate,
    Distinct,
    EventTimeWatermark,
    Expand,
    Filter,
    Join,
    LogicalPlan,
    Project,
    Sort,
    Union,
)
from ember.trees import rewrite_bit, transform_down_memo
from ember.expressions.aggregates import AggregateExpression
from ember.expressions.subquery import SubqueryExpression

__all__ = [
    "PushDownPredicates",
    "PushPredicateThroughNonJoin",
    "PushPredicateThroughJoin",
]


# ---------------------------------------------------------------------------------------------
# Helpers


def _alias_map(items) -> dict[int, Expression]:
    """Output attribute id -> aliased expression (Spark's ``getAliasMap``)."""
    return {a.id: a.child for a in items if isinstance(a, Alias)}


def _agg_alias_map(agg: Aggregate) -> dict[int, Expression]:
    """As :func:`_alias_map`, only for items holding no aggregate function."""

    return {a.id: a.child for a in agg.aggregate_expressions
            if isinstance(a, Alias)
            and not a.child.exists(lambda x: isinstance(x, AggregateExpression))}


def _replace_alias(e: Expression, aliases: dict[int, Expression]) -> Expression:
    if not aliases:
        return e

    def rule(x: Expression) -> Expression | None:
        if isinstance(x, AttributeReference) and x.id in aliases:
            return aliases[x.id]
        return None

    return e.transform_up(rule)


def _filter(conds: list[Expression], child: LogicalPlan) -> LogicalPlan:
    return Filter(and_all(conds), child) if conds else child


def _can_push_through_condition(plan: LogicalPlan, condition: Expression) -> bool:
    """No subquery in ``condition`` outputs an attribute of ``plan`` (same-source subquery)."""

    ids = plan.output_set
    return not condition.exists(
        lambda x: isinstance(x, SubqueryExpression) and bool(x.plan.output_set & ids))


def _correlated_on(condition: Expression, aliases: dict[int, Expression]) -> bool:
    """Whether a correlated subquery in ``condition`` reads one of ``aliases`` as an outer
    column.  Such a conjunct stays above the Project defining the alias: the subquery plan's
    ``OuterReference`` names the alias, which does not exist below it (Spark pulls the
    correlated predicates out of the subquery first, PullupCorrelatedPredicates, and then
    rewrites them like any other expression; Ember decorrelates only when the subquery becomes
    a join)."""

    if not aliases:
        return False
    return condition.exists(lambda x: isinstance(x, SubqueryExpression) and any(
        a.references & aliases.keys() for a in getattr(x, "outer_attrs", ())))


def _push_down(f: Filter, grandchild: LogicalPlan, insert) -> LogicalPlan:
    """Spark's ``pushDownPredicate``: deterministic conjuncts over ``grandchild``'s output go
    below (``insert(cond)`` builds the new child), the rest stay on top."""
    conjuncts = split_conjunctive_predicates(f.condition)
    ids = grandchild.output_set
    down = [c for c in conjuncts if c.deterministic and c.references <= ids]
    if not down:
        return f
    stay = ([c for c in conjuncts if c.deterministic and not c.references <= ids]
            + [c for c in conjuncts if not c.deterministic])
    return _filter(stay, insert(and_all(down)))


# ---------------------------------------------------------------------------------------------
# PushPredicateThroughNonJoin


def push_predicate_through_non_join(p: LogicalPlan) -> LogicalPlan | None:
    """One top-down step of PushPredicateThroughNonJoin on ``p``; None when no case applies."""
    match p:
        case Filter(condition=cond, child=Project(project_list=items, child=grand) as proj) if (
                all(e.deterministic for e in items) and _can_push_through_condition(grand, cond)):
            aliases = _alias_map(items)
            down: list[Expression] = []
            stay: list[Expression] = []
            for c in split_conjunctive_predicates(cond):
                (stay if _correlated_on(c, aliases) else down).append(c)
            if not down:
                return None
            return _filter(stay, proj.copy(child=Filter(_replace_alias(and_all(down), aliases),
                                                        grand)))
        case Filter(condition=cond, child=Aggregate() as agg) if (
                agg.grouping_expressions
                and all(e.deterministic for e in agg.aggregate_expressions)):
            aliases = _agg_alias_map(agg)
            child_ids = agg.child.output_set
            down: list[Expression] = []
            stay: list[Expression] = []
            for c in split_conjunctive_predicates(cond):
                if (c.deterministic and c.references
                        and _replace_alias(c, aliases).references <= child_ids):
                    down.append(c)
                else:
                    stay.append(c)
            if not down:
                return None
            new_agg = agg.copy(child=Filter(_replace_alias(and_all(down), aliases), agg.child))
            return _filter(stay, new_agg)
        case Filter(condition=cond, child=Union(inputs=inputs) as union):
            conjuncts = split_conjunctive_predicates(cond)
            down = [c for c in conjuncts if c.deterministic]
            if not down:
                return None
            stay = [c for c in conjuncts if not c.deterministic]
            down_cond = and_all(down)
            positions = {a.id: i for i, a in enumerate(union.output)}
            new_inputs = []
            for child in inputs:
                out = child.output

                def rename(x: Expression, out=out) -> Expression | None:
                    if isinstance(x, AttributeReference) and x.id in positions:
                        return out[positions[x.id]]
                    return None

                new_inputs.append(Filter(down_cond.transform_up(rename), child))
            return _filter(stay, union.copy(inputs=tuple(new_inputs)))
        case Filter(condition=cond, child=Window(partition_spec=parts) as w) if all(
                isinstance(e, AttributeReference) for e in parts):
            # only conjuncts over the partition columns: they drop whole partitions, so every
            # window value of the rows left is unchanged
            part_ids = frozenset(e.id for e in parts)
            conjuncts = split_conjunctive_predicates(cond)
            below = [c.deterministic and c.references <= part_ids for c in conjuncts]
            if not any(below):
                return None
            down = [c for c, b in zip(conjuncts, below) if b]
            stay = [c for c, b in zip(conjuncts, below) if not b]
            return _filter(stay, w.copy(child=Filter(and_all(down), w.child)))
        case Filter(condition=cond, child=EventTimeWatermark(event_time=et) as w):
            conjuncts = split_conjunctive_predicates(cond)
            below = [c.deterministic and et.id not in c.references for c in conjuncts]
            if not any(below):
                return None
            down = [c for c, b in zip(conjuncts, below) if b]
            stay = [c for c, b in zip(conjuncts, below) if not b]
            return _filter(stay, w.copy(child=Filter(and_all(down), w.child)))
        case Filter(child=Distinct() | Sort() | Expand() as u) if all(
                e.deterministic for e in u.expressions()):
            result = _push_down(p, u.child, lambda c: u.copy(child=Filter(c, u.child)))
            return None if result is p else result
        case _:
            return None


# ---------------------------------------------------------------------------------------------
# PushPredicateThroughJoin

def _split(conds: list[Expression], left: LogicalPlan, right: LogicalPlan):
    """(left-only, right-only, common + non-deterministic), Spark's ``split``."""
    det = [c for c in conds if c.deterministic]
    nondet = [c for c in conds if not c.deterministic]
    lids, rids = left.output_set, right.output_set
    lo = [c for c in det if c.references <= lids]
    rest = [c for c in det if not c.references <= lids]
    ro = [c for c in rest if c.references <= rids]
    common = [c for c in rest if not c.references <= rids]
    return lo, ro, common + nondet


def push_predicate_through_join(p: LogicalPlan) -> LogicalPlan | None:
    """One top-down step of PushPredicateThroughJoin on ``p``; None when no case applies."""
    match p:
        case Filter(condition=fcond, child=Join(join_type=JoinType() as jt) as j):
            # a side's conjuncts go below when its columns come out unpadded
            push_l = jt.outputs_unpadded(BuildSide.LEFT)
            push_r = jt.outputs_unpadded(BuildSide.RIGHT)
            if not push_l and not push_r:
                return None
            lo, ro, common = _split(split_conjunctive_predicates(fcond), j.left, j.right)
            children = _pushed(j, lo if push_l else None, ro if push_r else None)
            if jt.is_inner_like:
                into_join = [c for c in common if can_evaluate_within_join(c)]
                others = [c for c in common if not can_evaluate_within_join(c)]
                cond = and_all(into_join + split_conjunctive_predicates(j.condition))
                return _filter(others, j.copy(**children, condition=cond))
            stay = ([] if push_l else lo) + ([] if push_r else ro) + common
            return _filter(stay, j.copy(**children))
        case Join(join_type=JoinType() as jt, condition=jcond) as j if jcond is not None:
            # a side's conjuncts go below when its unmatched rows never reach the output
            push_l = not jt.keeps_unmatched(BuildSide.LEFT)
            push_r = not jt.keeps_unmatched(BuildSide.RIGHT)
            if not push_l and not push_r:
                return None
            lo, ro, common = _split(split_conjunctive_predicates(jcond), j.left, j.right)
            if not (push_l and lo) and not (push_r and ro):
                return None
            stay = ([] if push_l else lo) + ([] if push_r else ro) + common
            return j.copy(**_pushed(j, lo if push_l else None, ro if push_r else None),
                          condition=and_all(stay))
        case _:
            return None


def _pushed(j: Join, lo: list[Expression] | None, ro: list[Expression] | None
            ) -> dict[str, LogicalPlan]:
    """``j``'s children with ``lo`` / ``ro`` filtering them (None: that child unchanged)."""
    out: dict[str, LogicalPlan] = {}
    if lo is not None:
        out["left"] = _filter(lo, j.left)
    if ro is not None:
        out["right"] = _filter(ro, j.right)
    return out


# ---------------------------------------------------------------------------------------------
# CombineFilters (part of Spark's PushDownPredicates composite)


def _combine_filters(p: LogicalPlan) -> LogicalPlan | None:
    """CombineFilters' rewrite on ``p``; None when it does not apply."""
    out = _combine(p)
    return None if out is p else out


# ---------------------------------------------------------------------------------------------
# Rules


def _run(plan: LogicalPlan, steps) -> LogicalPlan:
    def rule(p: LogicalPlan) -> LogicalPlan:
        for step in steps:
            out = step(p)
            if out is not None:
                return p if out == p else out
        return p

    bit = rewrite_bit("PushDownPredicates:" + ",".join(s.__qualname__ for s in steps))
    new = transform_down_memo(plan, rule, bit)
    return plan if new == plan else new


class PushPredicateThroughNonJoin(Rule):
    """Spark's ``PushPredicateThroughNonJoin`` (see the module docstring)."""

    rule_name = "PushPredicateThroughNonJoin"

    def apply(self, plan: LogicalPlan, conf) -> LogicalPlan:
        return _run(plan, (push_predicate_through_non_join,))


class PushPredicateThroughJoin(Rule):
    """Spark's ``PushPredicateThroughJoin`` (see the module docstring)."""

    rule_name = "PushPredicateThroughJoin"

    def apply(self, plan: LogicalPlan, conf) -> LogicalPlan:
        return _run(plan, (push_predicate_through_join,))


_PUSH_DOWN_STEPS = (_combine_filters, push_predicate_through_non_join, push_predicate_through_join)


class PushDownPredicates(Rule):
    """Spark's ``PushDownPredicates``: on every node, top-down, CombineFilters orElse
    PushPredicateThroughNonJoin orElse PushPredicateThroughJoin."""

    rule_name = "PushDownPredicates"

    def apply(self, plan: LogicalPlan, conf) -> LogicalPlan:
        return _run(plan, _PUSH_DOWN_STEPS)
