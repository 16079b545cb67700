"""InferWindowGroupLimit: a filter keeping the first ``k`` ranks of each window partition lets
the rows beyond them be dropped before the Window (Spark 3.5's rule)::

    Filter (rn#5 <= 2)                            Filter (rn#5 <= 2)
    +- Window [row_number() ... AS rn#5],  ==>    +- Window [row_number() ... AS rn#5], [a#1], [b#2 ASC]
       [a#1], [b#2 ASC]                              +- WindowGroupLimit [a#1], [b#2 ASC], row_number(), 2
       +- child                                         +- child

Applies when every window expression of the Window is ``row_number``, ``rank`` or
``dense_rank`` over ``ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW`` with an ORDER BY, and
the filter has a conjunct ``f = k``, ``f < k``, ``f <= k`` (or mirrored, ``k`` an INT literal)
on one of them: the limit is the smallest such ``k`` (``k - 1`` for ``<``), ``row_number``'s
first.  Not when the limit is above ``spark.sql.optimizer.windowGroupLimitThreshold`` (-1:
never), nor when the child has at most ``limit`` rows, nor twice.  A limit of 0 or less
leaves no row: an empty relation.  A ``row_number`` over an unpartitioned window under
``spark.sql.execution.topKSortFallbackThreshold`` becomes a top-n (Limit over a global Sort)
instead.
"""

from __future__ import annotations

from ember import types as T
from ember.conf import TOP_K_SORT_FALLBACK_THRESHOLD, WINDOW_GROUP_LIMIT_THRESHOLD, SQLConf
from ember.expressions.base import Alias, Expression, Literal
from ember.expressions.predicate_helper import split_conjunctive_predicates
from ember.expressions.predicates import (
    EqualTo, GreaterThan, GreaterThanOrEqual, LessThan, LessThanOrEqual,
)
from ember.expressions.windows import (
    CurrentRow, DenseRank, FrameType, Rank, RowNumber, SpecifiedWindowFrame, UnboundedPreceding,
    WindowExpression, WindowSpecDefinition,
)
from ember.optimizer.rule_executor import Rule
from ember.plans.logical.distinct_keys import max_rows
from ember.plans.logical.nodes import (
    Filter, Limit, LogicalPlan, Sort, Window, WindowGroupLimit,
)
from ember.optimizer.rules.propagate_empty_relation import empty_relation

__all__ = ["InferWindowGroupLimit", "extract_limits"]

_RANK_LIKE = (Rank, DenseRank, RowNumber)


def _int(e: Expression) -> int | None:
    if isinstance(e, Literal) and isinstance(e.dtype, T.IntegerType) and e.value is not None:
        return int(e.value)
    return None


def extract_limits(condition: Expression, attr: Expression) -> int | None:
    """The smallest limit the conjuncts of ``condition`` put on ``attr``, else None."""
    limits = []
    for c in split_conjunctive_predicates(condition):
        match c:
            case EqualTo(left=l, right=r) if _int(l) is not None and r.semantic_equals(attr):
                limits.append(_int(l))
            case EqualTo(left=l, right=r) if _int(r) is not None and l.semantic_equals(attr):
                limits.append(_int(r))
            case LessThan(left=l, right=r) if _int(r) is not None and l.semantic_equals(attr):
                limits.append(_int(r) - 1)
            case GreaterThan(left=l, right=r) if _int(l) is not None and r.semantic_equals(attr):
                limits.append(_int(l) - 1)
            case LessThanOrEqual(left=l, right=r) if (
                    _int(r) is not None and l.semantic_equals(attr)):
                limits.append(_int(r))
            case GreaterThanOrEqual(left=l, right=r) if (
                    _int(l) is not None and r.semantic_equals(attr)):
                limits.append(_int(l))
            case _:
                pass
    return min(limits) if limits else None


def _expanding(e: Expression) -> bool:
    match e:
        case Alias(child=WindowExpression(window_function=fn, window_spec=WindowSpecDefinition(
                frame_specification=SpecifiedWindowFrame(
                    frame_type=FrameType.ROWS, lower=UnboundedPreceding(), upper=CurrentRow())))):
            return isinstance(fn, _RANK_LIKE)
        case _:
            return False


def infer_window_group_limit(plan: LogicalPlan, conf: SQLConf) -> LogicalPlan:
    threshold = int(conf.get(WINDOW_GROUP_LIMIT_THRESHOLD))
    if threshold == -1:
        return plan
    top_k = int(conf.get(TOP_K_SORT_FALLBACK_THRESHOLD))

    def rule(p: LogicalPlan) -> LogicalPlan | None:
        match p:
            case Filter(condition=cond, child=Window(
                    window_expressions=exprs, partition_spec=parts, order_spec=order,
                    child=child) as window) if (
                    not isinstance(child, WindowGroupLimit) and order
                    and all(_expanding(e) for e in exprs)):
                limits = []
                for e in exprs:
                    limit = extract_limits(cond, e.to_attribute())
                    if limit is not None:
                        limits.append((limit, e.child.window_function))
                if not limits:
                    return None
                row_numbers = [x for x in limits if isinstance(x[1], RowNumber)]
                limit, fn = min(row_numbers or limits, key=lambda x: x[0])
                rows = max_rows(child)
                if limit > threshold or (rows is not None and rows <= limit):
                    return None
                if limit <= 0:
                    return empty_relation(p)
                if isinstance(fn, RowNumber) and not parts and limit < top_k:
                    below: LogicalPlan = Limit(Literal(limit, T.INT), Sort(order, True, child))
                else:
                    below = WindowGroupLimit(parts, order, fn, limit, child)
                return p.copy(child=window.copy(child=below))
            case _:
                return None

    return plan.transform_down(rule)


class InferWindowGroupLimit(Rule):
    """See the module docstring."""

    rule_name = "InferWindowGroupLimit"
    patterns = (Window,)

    def apply(self, plan: LogicalPlan, conf: SQLConf) -> LogicalPlan:
        return infer_window_group_limit(plan, conf)
