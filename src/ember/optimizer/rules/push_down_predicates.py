"""PushDownPredicates: move filter conjuncts as close to the relations as their columns allow.

Spark's CombineFilters + PushPredicateThroughNonJoin + PushPredicateThroughJoin, for the shapes
Ember's executor needs (comma joins must become equi-joins, or TPC-H style queries run as
cartesian products)::

    Filter (a#1 = b#2) AND (x#3 > 1)           Join Inner, (a#1 = b#2)
    +- Join Inner                      ==>     :- Filter (x#3 > 1)
       :- t1 (a, x)                            :  +- t1
       +- t2 (b)                               +- t2

- ``Filter`` over ``Filter``: one Filter (inner condition first).
- ``Filter`` over ``Project``: deterministic conjuncts go below, aliases substituted, when every
  projected expression is deterministic.
- ``Filter`` over ``Join``: conjuncts reading one side only go to that side when the join type
  does not NULL-pad it (``JoinType.left_nullable`` / ``right_nullable``; Inner/Cross: both sides;
  LeftOuter, LeftSemi, LeftAnti, ExistenceJoin: left; RightOuter: right; FullOuter: none).  For
  Inner/Cross the other conjuncts become part of the join condition (Cross with a condition
  becomes Inner).
- A join's own condition: conjuncts reading one side only go to that side when the join type
  drops that side's unmatched rows (``JoinType.keeps_unmatched_left`` / ``keeps_unmatched_right``;
  right: Inner, Cross, LeftOuter, LeftSemi, LeftAnti, ExistenceJoin; left: Inner, Cross,
  RightOuter, LeftSemi).

Not valid for non-deterministic conjuncts (they stay where they are, and nothing is pushed past
them); conjuncts holding subquery expressions are not pushed (this rule runs after the subquery
rewrite, so there should be none).  No configuration keys are read.
"""

from __future__ import annotations

from ember.expressions.base import Alias, AttributeReference, Expression, and_all, split_conjuncts
from ember.plans.logical.join_type import JoinType
from ember.plans.logical.nodes import Filter, Join, LogicalPlan, Project

__all__ = ["push_down_predicates"]


def _pushable(e: Expression) -> bool:
    from ember.expressions.subquery import SubqueryExpression

    return e.deterministic and not e.exists(lambda x: isinstance(x, SubqueryExpression))


def _filter(conjuncts: list[Expression], child: LogicalPlan) -> LogicalPlan:
    return Filter(and_all(conjuncts), child) if conjuncts else child


def _split(conjuncts: list[Expression], left: LogicalPlan, right: LogicalPlan):
    """(left-only, right-only, other) conjuncts, keeping order; nothing is pushed past the first
    non-pushable conjunct."""
    lids, rids = left.output_set, right.output_set
    lo: list[Expression] = []
    ro: list[Expression] = []
    rest: list[Expression] = []
    blocked = False
    for c in conjuncts:
        if blocked or not _pushable(c):
            blocked = blocked or not c.deterministic
            rest.append(c)
        elif c.references <= lids:
            lo.append(c)
        elif c.references <= rids:
            ro.append(c)
        else:
            rest.append(c)
    return lo, ro, rest


def _push_into_join(f: Filter, conjuncts: list[Expression], j: Join) -> LogicalPlan:
    jt = j.join_type
    lo, ro, rest = _split(conjuncts, j.left, j.right)
    # A Filter above the join sees a side's columns NULL-padded when that side is nullable.
    if jt.left_nullable:
        rest, lo = lo + rest, []
    if jt.right_nullable or not jt.outputs_right:
        rest, ro = ro + rest, []
    if not lo and not ro and not (jt.is_inner_like and rest):
        return f
    left, right = _filter(lo, j.left), _filter(ro, j.right)
    if jt.is_inner_like:
        cond = and_all(split_conjuncts(j.condition) + rest)
        return j.copy(left=left, right=right, condition=cond,
                      join_type=JoinType.INNER if cond is not None else jt)
    return _filter(rest, j.copy(left=left, right=right))


def _push_join_condition(j: Join) -> LogicalPlan:
    jt = j.join_type
    if j.condition is None or not isinstance(jt, JoinType):
        return j
    lo, ro, rest = _split(split_conjuncts(j.condition), j.left, j.right)
    # A condition conjunct may filter a side only when that side's unmatched rows are dropped.
    if jt.keeps_unmatched_left:
        rest, lo = lo + rest, []
    if jt.keeps_unmatched_right:
        rest, ro = ro + rest, []
    if not lo and not ro:
        return j
    return j.copy(left=_filter(lo, j.left), right=_filter(ro, j.right), condition=and_all(rest))


def _substitute(e: Expression, aliases: dict[int, Expression]) -> Expression:
    def rule(x: Expression) -> Expression | None:
        if isinstance(x, AttributeReference) and x.id in aliases:
            return aliases[x.id]
        return None

    return e.transform_up(rule)


def _push_filter(f: Filter) -> LogicalPlan:
    conjuncts = split_conjuncts(f.condition)
    match f.child:
        case Filter(condition=inner, child=grand) if inner.deterministic:
            return _push_filter(Filter(and_all(split_conjuncts(inner) + conjuncts), grand))
        case Project(project_list=items, child=grand) if all(e.deterministic for e in items):
            aliases = {a.id: a.child for a in items if isinstance(a, Alias)}
            down = [_substitute(c, aliases) for c in conjuncts if _pushable(c)]
            if len(down) != len(conjuncts) or not down:
                return f
            return f.child.copy(child=_push_filter(Filter(and_all(down), grand)))
        case Join(join_type=JoinType()) as j:
            return _push_into_join(f, conjuncts, j)
        case _:
            return f


def push_down_predicates(plan: LogicalPlan) -> LogicalPlan:
    """``plan`` with filters pushed down (same output); ``plan`` itself if nothing moved."""

    def rule(p: LogicalPlan) -> LogicalPlan:
        match p:
            case Filter():
                return _push_filter(p)
            case Join(join_type=JoinType()):
                return _push_join_condition(p)
            case _:
                return p

    for _ in range(100):
        new = plan.transform_down(rule)
        if new is plan or new == plan:
            return plan
        plan = new
    return plan
