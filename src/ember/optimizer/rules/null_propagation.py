"""NullPropagation: simplifications driven by NULL literals and non-nullable inputs.

Spark 4's rule of the same name, applied bottom-up to the expressions of every plan node::

    count(NULL)                  ==>  CAST(0 AS BIGINT)     (every argument a NULL literal)
    count(a)  (a not nullable)   ==>  count(1)              (not for count(DISTINCT ...))
    isnull(a) (a not nullable)   ==>  false;   isnotnull(a) ==> true
    NULL <=> a                   ==>  isnull(a)
    coalesce(NULL, a, b, c)      ==>  coalesce(a, b, c)     (cut after the first non-nullable item;
                                                              one item -> the item; none -> NULL)
    NULL IN (...)                ==>  NULL
    f(NULL, a)                   ==>  NULL                  (f null-intolerant: + - * / =, <,
                                                              NOT, CAST, LIKE, most functions)

Valid regardless of determinism (the NULL comes from a literal, not from evaluation).  Subquery
plans are not entered (Spark optimizes them separately).  No configuration keys are read.
Fast path: the rewrite is a pure function of each expression, so it runs through
``ember.trees.transform_up_memo`` (subtrees left unchanged by an earlier run are not walked
again).

:func:`is_null_intolerant` and :func:`scan_null_intolerant_attributes` (Catalyst's
``NullIntolerant`` trait and ``scanNullIntolerantAttribute``) are shared with EliminateOuterJoin.
"""

from __future__ import annotations

from ember import types as T
from ember.conf import SQLConf
from ember.expressions.base import AttributeReference, Expression, Literal
from ember.optimizer.rule_executor import Rule
from ember.plans.logical.nodes import LogicalPlan
from ember.trees import rewrite_bit, transform_up_memo
from ember.expressions.aggregates import AggregateExpression, Count
from ember.expressions.arithmetic import BinaryArithmetic, _UnaryNumeric
from ember.expressions.cast import Cast
from ember.expressions.conditional import Coalesce
from ember.expressions.misc import ScalarFunction, _EAGER_ARGUMENTS
from ember.expressions.predicates import (
    BinaryComparison, EqualNullSafe, Like, Not, In, IsNotNull, IsNull,
)

__all__ = ["NullPropagation", "is_null_intolerant", "scan_null_intolerant_attributes",
           "is_null_literal"]


def is_null_literal(e: Expression) -> bool:
    """``e`` is a NULL ``Literal`` (of any type)."""
    return isinstance(e, Literal) and e.value is None


def is_null_intolerant(e: Expression) -> bool:
    """Catalyst's ``NullIntolerant``: the result is NULL whenever any child is NULL."""

    match e:
        case EqualNullSafe():
            return False
        case BinaryComparison() | BinaryArithmetic() | _UnaryNumeric() | Not() | Cast() | Like():
            return bool(e.children)
        case ScalarFunction():

            try:
                # concat evaluates every argument (an error in one after a NULL is raised), as
                # Spark's Concat, which is not NullIntolerant.
                return (bool(e.arguments) and e.spec.null_intolerant
                        and e.spec.key not in _EAGER_ARGUMENTS)
            except KeyError:
                return False
        case _:
            return False


def scan_null_intolerant_attributes(e: Expression) -> list[AttributeReference]:
    """Attributes reached from ``e`` through null-intolerant expressions only: when ``e`` is not
    NULL, none of them is NULL (Catalyst's ``scanNullIntolerantAttribute``)."""
    if isinstance(e, AttributeReference):
        return [e]
    if is_null_intolerant(e):
        out: list[AttributeReference] = []
        for c in e.children:
            out.extend(scan_null_intolerant_attributes(c))
        return out
    return []


def _propagate(e: Expression) -> Expression | None:
    match e:
        case AggregateExpression(func=Count(items=items)) if all(map(is_null_literal, items)):
            return Cast(Literal(0, T.LONG), e.data_type)
        case AggregateExpression(func=Count(items=items) as cnt, is_distinct=False) if (
                not any(i.nullable for i in items)
                and items != (Literal(1, T.INT),)):
            return e.copy(func=cnt.copy(items=(Literal(1, T.INT),)))
        case IsNull(child=c) if not c.nullable:
            return Literal(False, T.BOOLEAN)
        case IsNotNull(child=c) if not c.nullable:
            return Literal(True, T.BOOLEAN)
        case EqualNullSafe(left=left, right=right) if is_null_literal(left):
            return IsNull(right)
        case EqualNullSafe(left=left, right=right) if is_null_literal(right):
            return IsNull(left)
        case Coalesce(items=items):
            kept = tuple(i for i in items if not is_null_literal(i))
            if not kept:
                return Literal(None, e.data_type)
            if len(kept) == 1:
                return kept[0]
            idx = next((i for i, x in enumerate(kept) if not x.nullable), -1)
            if idx > -1:
                kept = kept[: idx + 1]
            if len(kept) == 1:
                return kept[0]
            return None if kept == items else Coalesce(kept)
        case In(value=value) if is_null_literal(value):
            return Literal(None, T.BOOLEAN)
        case _ if is_null_intolerant(e) and any(map(is_null_literal, e.children)):
            return Literal(None, e.data_type)
        case _:
            return None


def null_propagation_expr(e: Expression) -> Expression:
    """``e`` with the rewrites of the module docstring applied bottom-up."""
    return transform_up_memo(e, _propagate, _EXPR_BIT)


_EXPR_BIT = rewrite_bit("NullPropagation.expression")
_PLAN_BIT = rewrite_bit("NullPropagation.plan")


def _propagate_node(p: LogicalPlan) -> LogicalPlan:
    return p.map_expressions(null_propagation_expr)


class NullPropagation(Rule):
    """See the module docstring."""

    rule_name = "NullPropagation"

    def apply(self, plan: LogicalPlan, conf: SQLConf) -> LogicalPlan:
        return transform_up_memo(plan, _propagate_node, _PLAN_BIT)
