"""BooleanSimplification (the part that factors common conjuncts out of a disjunction).

Spark's rule of the same name rewrites ``(a AND b) OR (a AND c)`` to ``a AND (b OR c)``.  For
joins this matters: TPC-H q19 writes the join key inside each branch of an OR::

    Filter ((p = l) AND x) OR ((p = l) AND y)     ==>     Filter (p = l) AND (x OR y)

and only the rewritten form exposes ``p = l`` as an equi-join key to PushDownPredicates.  When
one side has no other conjunct, the result is just the common part (``(a AND b) OR a`` -> ``a``,
absorption).  Valid in three-valued logic (AND/OR distribute over each other with NULL); applied
only to deterministic disjunctions.  Conjuncts are matched by value (same attribute ids), not up
to commutativity.  Applies to the expressions of every plan node, bottom-up.  No configuration
keys are read.
"""

from __future__ import annotations

from ember.expressions.base import Expression, and_all, split_conjuncts
from ember.plans.logical.nodes import LogicalPlan

__all__ = ["boolean_simplification", "factor_common_conjuncts"]


def factor_common_conjuncts(e: Expression) -> Expression:
    """``e`` with every ``(a AND b) OR (a AND c)`` rewritten to ``a AND (b OR c)``."""
    from ember.expressions.predicates import Or

    def rule(x: Expression) -> Expression | None:
        match x:
            case Or(left=left, right=right) if x.deterministic:
                lhs, rhs = split_conjuncts(left), split_conjuncts(right)
                common = [c for c in lhs if c in rhs]
                if not common:
                    return None
                ldiff = [c for c in lhs if c not in common]
                rdiff = [c for c in rhs if c not in common]
                if not ldiff or not rdiff:
                    return and_all(common)
                return and_all(common + [Or(and_all(ldiff), and_all(rdiff))])
            case _:
                return None

    return e.transform_up(rule)


def boolean_simplification(plan: LogicalPlan) -> LogicalPlan:
    """``plan`` with common conjuncts factored out of disjunctions; ``plan`` if none."""

    def rule(p: LogicalPlan) -> LogicalPlan:
        return p.map_expressions(factor_common_conjuncts)

    return plan.transform_up(rule)
