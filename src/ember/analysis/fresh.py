"""Fresh expression ids for a copy of an analyzed plan.

A view's stored plan is inlined each time the view is referenced. Every copy must carry its own
expression ids, otherwise ``SELECT * FROM v a JOIN v b`` would join two relations whose attributes
are the same objects (Spark's ``DeduplicateRelations`` / ``newInstance``). :func:`fresh_copy`
maps every id defined or used in the plan (attributes, aliases, aggregate and subquery ids) to a new
one, consistently across the whole tree, including subquery plans.
"""

from __future__ import annotations

from ember.expressions.base import Expression, new_expr_id
from ember.plans.logical.nodes import LogicalPlan
from ember.expressions.subquery import SubqueryExpression


def _has_id(e: Expression) -> bool:
    fields = getattr(type(e), "__dataclass_fields__", None)
    return fields is not None and "id" in fields and isinstance(getattr(e, "id", None), int)


def fresh_copy(plan: LogicalPlan, mapping: dict[int, int] | None = None) -> LogicalPlan:
    """``plan`` with every expression id replaced by a fresh one (same mapping everywhere)."""

    ids: dict[int, int] = {} if mapping is None else mapping

    def new_id(old: int) -> int:
        got = ids.get(old)
        if got is None:
            got = ids[old] = new_expr_id()
        return got

    def fix(e: Expression) -> Expression:
        if isinstance(e, SubqueryExpression):
            changes = {"plan": fresh_copy(e.plan, ids)}
            outer = getattr(e, "outer_attrs", None)
            if outer:
                changes["outer_attrs"] = tuple(x.transform_up(fix) for x in outer)
            if _has_id(e):
                changes["id"] = new_id(e.id)  # type: ignore[attr-defined]
            e = e.copy(**changes)
            return e
        if _has_id(e):
            return e.copy(id=new_id(e.id))  # type: ignore[attr-defined]
        return e

    return plan.transform_up(lambda p: p.map_expressions(lambda x: x.transform_up(fix)))
