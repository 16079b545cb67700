"""ColumnPruning: only the columns some operator above reads flow up the plan.

Spark's ``ColumnPruning``, applied top-down, then ``removeProjectBeforeFilter`` bottom-up::

    Project [name#11, score#28]                    Project [name#11, score#28]
    +- Join Inner, (id#10 = sid#29)                +- Join Inner, (id#10 = sid#29)
       :- student [id, name, age]        ==>          :- Project [id#10, name#11]
       +- exam [cid, gid, score, sid]                 :  +- student
                                                      +- Project [score#28, sid#29]
                                                         +- exam

Cases (in this order):

- ``Project`` over ``Project`` / ``Aggregate``: the child's items nobody reads are dropped.
- ``Project`` over ``Expand``: unread Expand columns dropped from its output and projections.
- ``Aggregate`` / ``Expand``: a Project below them keeps only the child columns they read.
- ``Join`` LeftSemi / LeftAnti / ExistenceJoin: the right side keeps only the columns the
  condition reads.
- ``Project`` over ``Window``: the window expressions nobody reads are dropped (the Window
  itself when none is left).
- ``Project`` over Intersect / Except / Distinct: untouched (every column is compared).
- ``Project`` over ``Union``: every input keeps the columns at the positions the Project reads
  (pruned per the first input).
- ``Project`` over a leaf: untouched.
- ``Project`` over any other node (Filter, Join, Sort, Limit, SubqueryAlias ...): a Project over
  each grandchild keeps the columns read by the Project or by that node.

A Project is added only when it drops a column ("prunedChild").  Finally an attribute-only
Project directly below a Filter that is itself below a Project is removed (it would fight
PushPredicateThroughNonJoin).  The plan's own output never changes.  No configuration keys.

Fast path: both passes are pure functions of the subtree they rewrite, so they run through
``ember.trees.transform_down_memo`` / ``transform_up_memo``: subtrees an earlier run (in the
fixed-point batch) left unchanged are not walked again.
"""

from __future__ import annotations

from ember.expressions.base import AttributeReference, attribute_set
from ember.optimizer.rule_executor import Rule
from ember.plans.logical.join_type import JoinType
from ember.plans.logical.nodes import (
    Aggregate,
    Distinct,
    Except,
    Expand,
    Filter,
    Intersect,
    Join,
    LeafNode,
    LogicalPlan,
    Project,
    Union,
    Window,
)
from ember.trees import rewrite_bit, transform_down_memo, transform_up_memo
from ember.expressions.subquery import SubqueryExpression

__all__ = ["ColumnPruning", "column_pruning"]


def _pruned_child(c: LogicalPlan, refs: frozenset[int]) -> LogicalPlan:
    """``c`` under a Project of the columns in ``refs``, when it outputs any other column."""
    if c.output_set <= refs:
        return c
    return Project(tuple(a for a in c.output if a.id in refs), c)


def _named_ids(items) -> frozenset[int]:
    return frozenset(a.to_attribute().id for a in items)


def _references(p: LogicalPlan) -> frozenset[int]:
    """``p.references``, computed directly for the hot node types."""
    match p:
        case Project(project_list=items):
            return attribute_set(items)
        case Aggregate(grouping_expressions=g, aggregate_expressions=a):
            return attribute_set(g) | attribute_set(a)
        case Expand(projections=projs):
            return attribute_set(e for proj in projs for e in proj)
        case Join(condition=cond):
            return frozenset() if cond is None else cond.references
        case _:
            return p.references


def _prune(p: LogicalPlan) -> LogicalPlan:
    if not isinstance(p, (Project, Aggregate, Expand, Join)):
        return p
    refs = _references(p)
    match p:
        case Project(child=Project() as p2) if not p2.output_set <= refs:
            return p.copy(child=p2.copy(
                project_list=tuple(e for e in p2.project_list if e.to_attribute().id in refs)))
        case Project(child=Aggregate() as a) if not a.output_set <= refs:
            return p.copy(child=a.copy(aggregate_expressions=tuple(
                e for e in a.aggregate_expressions if e.to_attribute().id in refs)))
        case Project(child=Expand() as e) if not e.output_set <= refs:
            keep = [i for i, a in enumerate(e.attrs) if a.id in refs]
            return p.copy(child=Expand(
                tuple(tuple(proj[i] for i in keep) for proj in e.projections),
                tuple(e.attrs[i] for i in keep), e.child))
        case Aggregate(child=child) if not child.output_set <= refs:
            return p.copy(child=_pruned_child(child, refs))
        case Expand(child=child) if not child.output_set <= refs:
            return p.copy(child=_pruned_child(child, refs))
        case Join(join_type=JoinType() as jt, right=right) if jt.is_left_existence:
            new_right = _pruned_child(right, refs)
            return p if new_right is right else p.copy(right=new_right)
        case Project(child=Window() as w) if not w.produced_attributes <= refs:
            keep = tuple(e for e in w.window_expressions if e.to_attribute().id in refs)
            return p.copy(child=w.copy(window_expressions=keep) if keep else w.child)
        case Project(child=Intersect() | Except() | Distinct()):
            return p
        case Project(child=Union(inputs=inputs) as u):
            if u.output_set <= refs:
                return p
            first = inputs[0]
            kept = {a.id for a in _pruned_child(first, refs).output}
            positions = [i for i, a in enumerate(first.output) if a.id in kept]
            new_inputs = tuple(Project(tuple(c.output[i] for i in positions), c) for c in inputs)
            return p.copy(child=u.copy(inputs=new_inputs))
        case Project(child=LeafNode()):
            return p
        case Project(child=child) if not isinstance(child, Project):
            required = _references(child) | refs
            input_ids: set[int] = set()
            for c in child.children:
                input_ids |= c.output_set
            if input_ids <= required:
                return p
            return p.copy(child=child.with_children(
                tuple(_pruned_child(c, required) for c in child.children)))
        case _:
            return p


def _remove_project_before_filter(p: LogicalPlan) -> LogicalPlan:
    match p:
        case Project(child=Filter(child=Project(project_list=items, child=grand) as p2) as f) if (
                p2.output_set <= grand.output_set
                and all(isinstance(e, AttributeReference) for e in items)
                and not _conflicts_with_subquery(f.condition, grand)):
            return p.copy(child=f.copy(child=grand))
        case _:
            return p


def _conflicts_with_subquery(cond, plan: LogicalPlan) -> bool:
    ids = plan.output_set
    return cond.exists(
        lambda x: isinstance(x, SubqueryExpression) and bool(x.plan.output_set & ids))


def column_pruning(plan: LogicalPlan) -> LogicalPlan:
    """``plan`` with unread columns pruned; ``plan`` itself when nothing changed."""
    new = transform_up_memo(transform_down_memo(plan, _prune, _PRUNE_BIT),
                            _remove_project_before_filter, _REMOVE_BIT)
    return plan if new == plan else new


_PRUNE_BIT = rewrite_bit("ColumnPruning.prune")
_REMOVE_BIT = rewrite_bit("ColumnPruning.removeProjectBeforeFilter")


class ColumnPruning(Rule):
    """Spark's ``ColumnPruning`` (see the module docstring)."""

    rule_name = "ColumnPruning"

    def apply(self, plan: LogicalPlan, conf) -> LogicalPlan:
        return column_pruning(plan)
