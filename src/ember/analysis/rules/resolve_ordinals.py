"""ResolveOrdinalInOrderByAndGroupBy: ``ORDER BY 2`` / ``GROUP BY 1`` -> select-list items.

Before::  Sort [2 ASC], true (Project [a#1, b#2] ...)
After::   Sort [b#2 ASC], true (...)

``GROUP BY n`` takes the n-th select expression without its alias (it must not be an aggregate:
``GROUP_BY_POS_AGGREGATE``).  Out-of-range positions raise ``ORDER_BY_POS_OUT_OF_RANGE`` /
``GROUP_BY_POS_OUT_OF_RANGE``.
"""

from __future__ import annotations

from ember.analysis.resolution import has_unresolved, pretty_sql, strip_alias
from ember.analysis.rules._util import contains_aggregate, transform_up_in_run
from ember.errors import AnalysisError
from ember.expressions.base import Expression, SortOrder, UnresolvedOrdinal
from ember.expressions.grouping import BaseGroupingSets
from ember.plans.logical.nodes import Aggregate, LogicalPlan, Sort


def _has_ordinal(exprs) -> bool:
    return any(e.exists(lambda x: isinstance(x, UnresolvedOrdinal)) for e in exprs)


def _range_error(kind: str, index: int, size: int) -> AnalysisError:
    return AnalysisError(
        f"{kind} BY position {index} is not in select list (valid range is [1, {size}]).",
        error_class=f"{kind}_BY_POS_OUT_OF_RANGE",
        parameters={"index": str(index), "size": str(size)},
    )


def resolve_ordinals(plan: LogicalPlan, ctx) -> LogicalPlan:
    """``plan`` with ``ORDER BY`` / ``GROUP BY`` ordinals replaced by the select items they
    number (see module doc)."""
    def rule(p: LogicalPlan) -> LogicalPlan:
        match p:
            case Sort(order=order, child=child) if child.resolved and _has_ordinal(order):
                out = child.output

                def sub(o: SortOrder) -> SortOrder:
                    if isinstance(o.child, UnresolvedOrdinal):
                        i = o.child.ordinal
                        if not 1 <= i <= len(out):
                            raise _range_error("ORDER", i, len(out))
                        return o.copy(child=out[i - 1])
                    return o

                return p.copy(order=tuple(sub(o) for o in order))
            case Aggregate(grouping_expressions=groups, aggregate_expressions=items) if (
                _has_ordinal(groups) and not any(has_unresolved(e) for e in items)
            ):
                def sub_g(g: Expression) -> Expression:
                    if isinstance(g, UnresolvedOrdinal):
                        i = g.ordinal
                        if not 1 <= i <= len(items):
                            raise _range_error("GROUP", i, len(items))
                        target = strip_alias(items[i - 1])
                        if contains_aggregate(target):
                            raise AnalysisError(
                                f"GROUP BY {i} refers to an expression {pretty_sql(target)} that "
                                "contains an aggregate function. Aggregate functions are not "
                                "allowed in GROUP BY.",
                                error_class="GROUP_BY_POS_AGGREGATE",
                                parameters={"index": str(i), "aggExpr": pretty_sql(target)},
                            )
                        return target
                    if isinstance(g, BaseGroupingSets):  # GROUP BY ROLLUP(1, 2)
                        return g.with_children(tuple(sub_g(k) for k in g.children))
                    return g

                return p.copy(grouping_expressions=tuple(sub_g(g) for g in groups))
            case _:
                return p

    return transform_up_in_run(plan, rule, ctx, "ResolveOrdinals")
