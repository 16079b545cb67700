"""Range join conditions: a join condition with a lower and an upper bound between the sides.

A condition such as ``a.x BETWEEN b.lo AND b.hi`` (point in interval), ``a.s <= b.e AND b.s <=
a.e`` (interval overlap) or ``a.x >= b.t - 5 AND a.y <= b.t + 5`` (a band over different
columns) has two conjuncts comparing the sides in opposite directions:

- ``A``: ``l_small <= r_big`` (or ``<``), with ``l_small`` over the left side, ``r_big`` over the
  right side;
- ``B``: ``r_small <= l_big`` (or ``<``).

:func:`range_condition` finds such a pair (the planner turns a
``BroadcastNestedLoopJoin`` or ``CartesianProduct`` with one into a ``RangeJoin``,
:class:`~ember.physical.nodes.RangeJoinExec`); the local runtime's sort-and-sweep
(:mod:`ember.runtime.local.joins.range_join`) enumerates the pairs satisfying both conjuncts
without comparing every pair.  The four expressions must be deterministic and order as numbers
(integral, float, double, date, timestamp), each conjunct over one type and the two conjuncts
over comparable ones (integral with integral, float/double with float/double, else the same
type), so that their values compare in one sort order.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from ember import types as T
from ember.expressions.base import AttributeReference, Expression, Literal, split_conjuncts
from ember.expressions.predicates import (
    And,
    BinaryComparison,
    GreaterThan,
    GreaterThanOrEqual,
    IsNotNull,
    IsNull,
    LessThan,
    LessThanOrEqual,
    Not,
    Or,
)

__all__ = ["RangeCondition", "range_condition"]

_ORDERED = (T.ByteType, T.ShortType, T.IntegerType, T.LongType, T.FloatType, T.DoubleType,
            T.DateType, T.TimestampType)


@dataclass(frozen=True, slots=True)
class RangeCondition:
    """The two conjuncts of a range join: ``l_small <= r_big`` (``<`` when ``a_strict``) and
    ``r_small <= l_big`` (``<`` when ``b_strict``), and the other conjuncts (``residual``)."""

    l_small: Expression
    r_big: Expression
    a_strict: bool
    r_small: Expression
    l_big: Expression
    b_strict: bool
    residual: Expression | None

    def simple_string(self) -> str:
        return (f"{self.l_small.simple_string()} <= {self.r_big.simple_string()}, "
                f"{self.r_small.simple_string()} <= {self.l_big.simple_string()}")


def _ordered(t: T.DataType) -> bool:
    return isinstance(t, _ORDERED)


def _comparable(a: T.DataType, b: T.DataType) -> bool:
    """Whether values of ``a`` and ``b`` compare as numbers of one kind (integral types all as
    64-bit integers, float and double as doubles)."""
    if a == b:
        return True
    if isinstance(a, T.IntegralType) and isinstance(b, T.IntegralType):
        return True
    return isinstance(a, (T.FloatType, T.DoubleType)) and isinstance(b, (T.FloatType,
                                                                          T.DoubleType))


_SAFE = (AttributeReference, Literal, BinaryComparison, And, Or, Not, IsNull, IsNotNull)


def _cannot_fail(e: Expression) -> bool:
    """Whether evaluating ``e`` can raise no error (columns, literals, comparisons, logic)."""
    return isinstance(e, _SAFE) and all(_cannot_fail(c) for c in e.children)


def range_condition(condition: Expression | None, left: Sequence[AttributeReference],
                    right: Sequence[AttributeReference]) -> RangeCondition | None:
    """The range conjuncts of ``condition`` between ``left`` and ``right`` (None when it has no
    lower and upper bound between the sides over one ordered type)."""
    if condition is None:
        return None
    lids = {a.id for a in left}
    rids = {a.id for a in right}
    # (conjunct index, small expr, big expr, strict)
    left_small: list[tuple[int, Expression, Expression, bool]] = []   # small over the left
    right_small: list[tuple[int, Expression, Expression, bool]] = []  # small over the right
    conjuncts = split_conjuncts(condition)
    for i, c in enumerate(conjuncts):
        if isinstance(c, (LessThan, LessThanOrEqual)):
            small, big = c.left, c.right
        elif isinstance(c, (GreaterThan, GreaterThanOrEqual)):
            small, big = c.right, c.left
        else:
            continue
        sr, br = small.references, big.references
        if not (sr and br and small.deterministic and big.deterministic):
            continue
        if not _ordered(small.data_type) or small.data_type != big.data_type:
            continue
        strict = isinstance(c, (LessThan, GreaterThan))
        if sr <= lids and br <= rids:
            left_small.append((i, small, big, strict))
        elif sr <= rids and br <= lids:
            right_small.append((i, small, big, strict))
    for ia, ls, rb, sa in left_small:
        for ib, rs, lb, sb in right_small:
            # A conjunct before a range conjunct is evaluated on every pair where the ones before
            # it hold (AND skips the rest where one is false): only the pairs satisfying both
            # range conjuncts are compared, so such a conjunct must be unable to fail.
            first = max(ia, ib)
            if _comparable(ls.data_type, rs.data_type) and all(
                    _cannot_fail(c) for i, c in enumerate(conjuncts[:first]) if i not in (ia, ib)):
                rest = [c for i, c in enumerate(conjuncts) if i not in (ia, ib)]
                residual = rest[0] if rest else None
                for c in rest[1:]:
                    residual = And(residual, c)
                return RangeCondition(ls, rb, sa, rs, lb, sb, residual)
    return None
