"""BooleanSimplification: Spark 4's rule simplifying AND / OR / NOT.

Applied bottom-up to the expressions of every plan node (subquery plans are not entered)::

    true AND e  ==>  e          false AND e ==> false     (and the OR duals, either side)
    a AND NOT a ==>  if(isnull(a), null, false)          a OR NOT a ==> if(isnull(a), null, true)
    a AND a     ==>  a          a OR a ==> a
    a AND (NOT a OR c) ==> a AND c       (a not nullable; the three other forms and OR duals)
    (a OR b) AND (a OR c)  ==>  a OR (b AND c)            (common disjuncts; absorption)
    (a AND b) OR (a AND c) ==>  a AND (b OR c)            (common conjuncts; TPC-H q19's join key)
    (a AND b) AND a        ==>  a AND b                   (duplicates, rebuilt balanced)
    NOT true ==> false;  NOT (a > b) ==> a <= b (and <, <=, >=);  NOT (a OR b) ==> NOT a AND NOT b;
    NOT (a AND b) ==> NOT a OR NOT b;  NOT NOT e ==> e;  NOT isnull(e) ==> isnotnull(e) (and dual)

Expressions are compared *semantically* (``Expression.semantic_equals``): deterministic, equal
up to attribute names/nullability and the order of commutative operands.  Non-deterministic
expressions are never equal to anything, so they are never merged or dropped.  The NOT pushdown
over comparisons is valid in three-valued logic (NULL stays NULL) and also for NaN under Spark's
total float order.  No configuration keys are read.

Fast path: the rewrite is a pure function of each expression, so it runs through
``ember.trees.transform_up_memo``: expressions and plan subtrees a previous run left unchanged
are not walked again in later iterations of the fixed-point batch.  :func:`simplify_boolean`
is the rewrite of one expression.
"""

from __future__ import annotations

from ember import types as T
from ember.conf import SQLConf
from ember.expressions.base import Expression, Literal
from ember.optimizer.constraints import ExpressionSet
from ember.optimizer.rule_executor import Rule
from ember.expressions.predicate_helper import (
    split_conjunctive_predicates,
    split_disjunctive_predicates,
)
from ember.plans.logical.nodes import LogicalPlan
from ember.trees import rewrite_bit, transform_up_memo
from ember.expressions.conditional import If
from ember.expressions.predicates import (
    And, GreaterThan, GreaterThanOrEqual, IsNotNull, IsNull, LessThan, LessThanOrEqual, Not, Or,
)

__all__ = [
    "BooleanSimplification",
    "simplify_boolean",
    "build_balanced_predicate",
]

TRUE = Literal(True, T.BOOLEAN)
FALSE = Literal(False, T.BOOLEAN)


def _contains(items: list[Expression], e: Expression) -> bool:
    return any(e.semantic_equals(x) for x in items)


def _distinct(items: list[Expression]) -> list[Expression]:
    """Catalyst's ``ExpressionSet``: first occurrence of each semantically distinct
    deterministic expression, every non-deterministic one kept."""
    return list(ExpressionSet(items))


def build_balanced_predicate(exprs: list[Expression], op: type) -> Expression:
    """Catalyst's ``buildBalancedPredicate``: pairs combined level by level."""
    current = list(exprs)
    while len(current) > 1:
        nxt = []
        for i in range(0, len(current), 2):
            nxt.append(op(current[i], current[i + 1]) if i + 1 < len(current) else current[i])
        current = nxt
    return current[0]


def _reduce(exprs: list[Expression], op: type) -> Expression:
    out = exprs[0]
    for e in exprs[1:]:
        out = op(out, e)
    return out


# ---------------------------------------------------------------------------------------------
# The rewrite


def _is_true(e: Expression) -> bool:
    return isinstance(e, Literal) and e.value is True and isinstance(e.dtype, T.BooleanType)


def _is_false(e: Expression) -> bool:
    return isinstance(e, Literal) and e.value is False and isinstance(e.dtype, T.BooleanType)


def _simplify(e: Expression) -> Expression | None:  # noqa: C901 - one case per Spark case
    def neg_eq(a: Expression, b: Expression) -> bool:
        """``Not(a)`` semantically equals ``b``."""
        return Not(a).semantic_equals(b)

    match e:
        case And(left=l, right=r) if _is_true(l):
            return r
        case And(left=l, right=r) if _is_true(r):
            return l
        case Or(left=l, right=r) if _is_false(l):
            return r
        case Or(left=l, right=r) if _is_false(r):
            return l
        case And(left=l, right=r) if _is_false(l) or _is_false(r):
            return FALSE
        case Or(left=l, right=r) if _is_true(l) or _is_true(r):
            return TRUE
        case And(left=a, right=b) if neg_eq(a, b):
            return If(IsNull(a), Literal(None, T.BOOLEAN), FALSE)
        case And(left=a, right=b) if a.semantic_equals(Not(b)):
            return If(IsNull(b), Literal(None, T.BOOLEAN), FALSE)
        case Or(left=a, right=b) if neg_eq(a, b):
            return If(IsNull(a), Literal(None, T.BOOLEAN), TRUE)
        case Or(left=a, right=b) if a.semantic_equals(Not(b)):
            return If(IsNull(b), Literal(None, T.BOOLEAN), TRUE)
        case And(left=a, right=b) if a.semantic_equals(b):
            return a
        case Or(left=a, right=b) if a.semantic_equals(b):
            return a
        # The following need non-nullable operands (three-valued logic differs on NULL).
        case And(left=l, right=r) if (out := _drop_complement(l, r, And, Or)) is not None:
            return out
        case Or(left=l, right=r) if (out := _drop_complement(l, r, Or, And)) is not None:
            return out
        case And(left=l, right=r):
            return _factor(e, l, r, split_disjunctive_predicates, split_conjunctive_predicates,
                           Or, And)
        case Or(left=l, right=r):
            return _factor(e, l, r, split_conjunctive_predicates, split_disjunctive_predicates,
                           And, Or)
        case Not(child=c) if _is_true(c):
            return FALSE
        case Not(child=c) if _is_false(c):
            return TRUE
        case Not(child=GreaterThan(left=a, right=b)):
            return LessThanOrEqual(a, b)
        case Not(child=GreaterThanOrEqual(left=a, right=b)):
            return LessThan(a, b)
        case Not(child=LessThan(left=a, right=b)):
            return GreaterThanOrEqual(a, b)
        case Not(child=LessThanOrEqual(left=a, right=b)):
            return GreaterThan(a, b)
        case Not(child=Or(left=a, right=b)):
            return And(Not(a), Not(b))
        case Not(child=And(left=a, right=b)):
            return Or(Not(a), Not(b))
        case Not(child=Not(child=c)):
            return c
        case Not(child=IsNull(child=c)):
            return IsNotNull(c)
        case Not(child=IsNotNull(child=c)):
            return IsNull(c)
        case _:
            return None


def _drop_complement(left: Expression, right: Expression, outer_op: type,
                     inner_op: type) -> Expression | None:
    """Spark's four cases of ``left <outer_op> right`` where one side is an ``inner_op`` with a
    term that is the negation of the other, non-nullable, side (which is then dropped), in Spark's
    order; with ``outer_op``/``inner_op`` And/Or (``a AND (NOT a OR c)`` is ``a AND c``) or Or/And
    (``a OR (NOT a AND c)`` is ``a OR c``).  None when no case applies."""

    if isinstance(right, inner_op) and not left.nullable:
        if Not(left).semantic_equals(right.left):
            return outer_op(left, right.right)
        if Not(left).semantic_equals(right.right):
            return outer_op(left, right.left)
    if isinstance(left, inner_op) and not right.nullable:
        if left.left.semantic_equals(Not(right)):
            return outer_op(left.right, right)
        if left.right.semantic_equals(Not(right)):
            return outer_op(left.left, right)
    return None


def _factor(e, left, right, split_inner, split_outer, inner_op, outer_op):
    """Common-factor elimination for ``e = left <outer_op> right`` where each side is split by
    ``split_inner`` into ``inner_op`` terms (Spark's two ``Common factor elimination`` cases)."""
    lhs, rhs = split_inner(left), split_inner(right)
    common = [x for x in lhs if _contains(rhs, x)]
    if common:
        ldiff = [x for x in lhs if not _contains(common, x)]
        rdiff = [x for x in rhs if not _contains(common, x)]
        if not ldiff or not rdiff:
            return _reduce(common, inner_op)
        return _reduce(common + [outer_op(_reduce(ldiff, inner_op), _reduce(rdiff, inner_op))],
                       inner_op)
    every = split_outer(left) + split_outer(right)
    distinct = _distinct(every)
    if len(distinct) == len(every):
        return None
    return build_balanced_predicate(distinct, outer_op)


def simplify_boolean(e: Expression) -> Expression:
    """``e`` with the rewrites of the module docstring applied bottom-up."""
    return transform_up_memo(e, _simplify, _EXPR_BIT)


_EXPR_BIT = rewrite_bit("BooleanSimplification.expression")
_PLAN_BIT = rewrite_bit("BooleanSimplification.plan")


def _simplify_node(p: LogicalPlan) -> LogicalPlan:
    return p.map_expressions(simplify_boolean)


class BooleanSimplification(Rule):
    """See the module docstring."""

    rule_name = "BooleanSimplification"

    def apply(self, plan: LogicalPlan, conf: SQLConf) -> LogicalPlan:
        return transform_up_memo(plan, _simplify_node, _PLAN_BIT)
