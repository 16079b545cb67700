"""CheckCartesianProducts: refuse implicit cartesian products when
``spark.sql.crossJoin.enabled`` is false.

Spark's rule, run once after join reordering and before the subquery rewrites (so the joins
that EXISTS / IN subqueries become are not checked)::

    Join(l, r, Inner | LeftOuter | RightOuter | FullOuter, cond)   no conjunct of cond reads
                                                                    both l and r
      ==>  _LEGACY_ERROR_TEMP_1211 "Detected implicit cartesian product ..."

A condition that is exactly ``false`` or ``NULL`` is no cartesian product (it matches nothing).
An explicit ``CROSS JOIN`` (join type Cross) and the existence joins are never refused; which
join types are checked is :attr:`JoinType.may_be_implicit_cartesian`.  Nor is the join Ember
makes of an uncorrelated scalar subquery (``Join.from_scalar_subquery``: Spark keeps that a
subquery expression).  The check sees the plan
after the optimizer pushed single-side conjuncts into the children, as Spark's does: ``JOIN b ON
a.x > 0`` is refused.  Reads ``spark.sql.crossJoin.enabled`` (default true: the rule does
nothing).  The plan is never changed.
"""

from __future__ import annotations

from ember import types as T
from ember.conf import CROSS_JOINS_ENABLED, SQLConf
from ember.errors import AnalysisError
from ember.expressions.base import Literal
from ember.expressions.predicate_helper import split_conjunctive_predicates
from ember.optimizer.rule_executor import Rule
from ember.plans.logical.join_type import JoinType
from ember.plans.logical.nodes import Join, LogicalPlan

__all__ = ["CheckCartesianProducts", "is_cartesian_product"]


def _never_true(conjuncts: list) -> bool:
    if len(conjuncts) != 1 or not isinstance(conjuncts[0], Literal):
        return False
    lit = conjuncts[0]
    return lit.value is False or (lit.value is None and isinstance(lit.data_type, T.BooleanType))


def is_cartesian_product(join: Join) -> bool:
    """No conjunct of the join's condition reads both sides (Spark's ``isCartesianProduct``)."""
    conjuncts = split_conjunctive_predicates(join.condition)
    if _never_true(conjuncts):
        return False
    left, right = join.left.output_set, join.right.output_set
    return not any(refs & left and refs & right for refs in (c.references for c in conjuncts))


def _check(plan: LogicalPlan) -> LogicalPlan:
    match plan:
        case Join(join_type=JoinType() as jt, from_scalar_subquery=False) if (
                jt.may_be_implicit_cartesian and is_cartesian_product(plan)):
            raise AnalysisError(
                f"Detected implicit cartesian product for {jt.sql} join between logical plans\n"
                f"{plan.left.tree_string()}\nand\n{plan.right.tree_string()}\n"
                "Join condition is missing or trivial.\nEither: use the CROSS JOIN syntax to "
                "allow cartesian products between these relations, or: enable implicit "
                "cartesian products by setting the configuration variable "
                "spark.sql.crossJoin.enabled=true",
                error_class="_LEGACY_ERROR_TEMP_1211",
                parameters={"joinType": jt.sql, "leftPlan": plan.left.tree_string(),
                            "rightPlan": plan.right.tree_string()})
        case _:
            return plan


class CheckCartesianProducts(Rule):
    """See the module docstring."""

    rule_name = "CheckCartesianProducts"
    patterns = (Join,)

    def apply(self, plan: LogicalPlan, conf: SQLConf) -> LogicalPlan:
        if conf.get(CROSS_JOINS_ENABLED):
            return plan
        plan.transform_down(_check)
        return plan
