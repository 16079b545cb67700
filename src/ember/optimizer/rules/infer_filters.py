"""InferFiltersFromConstraints: add the filters an operator's constraints imply.

Constraints come from :mod:`ember.optimizer.constraints` (Catalyst's constraint propagation).
Two rewrites, applied top-down::

    Filter (a#1 = 5)                         Filter (isnotnull(a#1) AND (a#1 = 5))
    +- t                            ==>      +- t

    Join Inner, (id#1 = sid#7)               Join Inner, (id#1 = sid#7)
    :- student                      ==>      :- Filter isnotnull(id#1)
    +- exam                                  :  +- student
                                             +- Filter isnotnull(sid#7)
                                                +- exam

- ``Filter``: the Filter's constraints minus its child's and its own conjuncts are ANDed in front
  of the condition.
- ``Join``: all constraints of both sides and the condition (+ transitivity) are filtered, per
  child, to those over that child's output and not already among its constraints, and put in a
  Filter over the child.  Which children may get filters depends on the join type: Inner, Cross,
  LeftSemi: both; RightOuter: left only; LeftOuter, LeftAnti: right only; FullOuter and
  ExistenceJoin: none (a filter there would drop preserved rows).

Non-deterministic predicates never become constraints.  Reads
``spark.sql.constraintPropagation.enabled`` (false: the rule does nothing).  Spark runs it once
("Infer Filters" batch): applied to its own output it may keep adding equivalent filters, so it
must not sit in a fixed-point batch without CombineFilters / PushDownPredicates around it.
"""

from __future__ import annotations

from ember.expressions.base import and_all
from ember.expressions.predicates import And
from ember.optimizer.constraints import (
    ConstraintPropagation,
    ExpressionSet,
    constraint_propagation_enabled,
    construct_is_not_null,
    infer_additional_constraints,
)
from ember.expressions.predicate_helper import split_conjunctive_predicates
from ember.optimizer.rule_executor import Rule
from ember.plans.logical.join_type import JoinType
from ember.plans.logical.nodes import Filter, Join, LogicalPlan

__all__ = ["InferFiltersFromConstraints", "infer_filters_from_constraints"]


class InferFiltersFromConstraints(Rule):
    """Spark's ``InferFiltersFromConstraints`` (see the module docstring)."""

    rule_name = "InferFiltersFromConstraints"

    def apply(self, plan: LogicalPlan, conf) -> LogicalPlan:
        if not constraint_propagation_enabled(conf):
            return plan
        return infer_filters_from_constraints(plan)


def infer_filters_from_constraints(plan: LogicalPlan) -> LogicalPlan:
    """``plan`` with inferred filters added; ``plan`` itself when there are none."""
    cp = ConstraintPropagation()

    def rule(p: LogicalPlan) -> LogicalPlan:
        match p:
            case Filter(condition=cond, child=child):
                new = cp.constraints(p) - (cp.constraints(child)
                                           | split_conjunctive_predicates(cond))
                if new:
                    return Filter(And(and_all(new), cond), child)
                return p
            case Join(left=left, right=right, join_type=JoinType() as jt, condition=cond):
                if jt in (JoinType.INNER, JoinType.CROSS, JoinType.LEFT_SEMI):
                    allc = _all_constraints(cp, left, right, cond)
                    new_left, new_right = _infer(cp, left, allc), _infer(cp, right, allc)
                elif jt is JoinType.RIGHT_OUTER:
                    new_left, new_right = _infer(cp, left, _all_constraints(cp, left, right, cond)), right
                elif jt in (JoinType.LEFT_OUTER, JoinType.LEFT_ANTI):
                    new_left, new_right = left, _infer(cp, right, _all_constraints(cp, left, right, cond))
                else:
                    return p
                return p.with_children((new_left, new_right))
            case _:
                return p

    return plan.transform_down(rule)


def _all_constraints(cp: ConstraintPropagation, left: LogicalPlan, right: LogicalPlan,
                     cond) -> ExpressionSet:
    base = cp.constraints(left) | cp.constraints(right) | split_conjunctive_predicates(cond)
    return base | infer_additional_constraints(base)


def _infer(cp: ConstraintPropagation, plan: LogicalPlan, constraints: ExpressionSet) -> LogicalPlan:
    out_ids = plan.output_set
    new = (constraints | construct_is_not_null(constraints, plan.output)).filter(
        lambda c: bool(c.references) and c.references <= out_ids and c.deterministic
    ) - cp.constraints(plan)
    if not new:
        return plan
    return Filter(and_all(new), plan)
