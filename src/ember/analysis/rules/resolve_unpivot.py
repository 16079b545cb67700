"""ResolveUnpivot: an ``Unpivot`` becomes an ``Expand`` (Spark's ``Analyzer.ResolveUnpivot``
with ``TypeCoercion.UnpivotCoercion``).

``SELECT * FROM t UNPIVOT INCLUDE NULLS (v FOR c IN (c1, c2 AS two))`` over ``t(id, c1, c2)``::

    Expand [[id, c1, c1], [id, two, c2]], [id, c#5, v#6]
    +- t

Each input row gives one row per value set: the id columns, the set's name (its alias, else its
columns' names joined with ``_``) and its values, cast to the values' common type per value column
(the wider type without string promotion: ``int`` and ``decimal(2,1)`` give ``decimal(11,1)``).
Ids or values left out (None) are every other child column; that needs the given ones to be
columns. The name column is non-nullable; a value column is nullable if any of its inputs is.

Errors (Spark's): ``UNPIVOT_REQUIRES_ATTRIBUTES``, ``UNPIVOT_REQUIRES_VALUE_COLUMNS``,
``UNPIVOT_VALUE_SIZE_MISMATCH``, ``UNPIVOT_VALUE_DATA_TYPE_MISMATCH``.
"""

from __future__ import annotations

from ember import types as T
from ember.errors import AnalysisError
from ember.expressions.base import Alias, AttributeReference, Expression, Literal, NamedExpression
from ember.plans.logical.nodes import Expand, LogicalPlan, Unpivot
from ember.expressions.common import sql_type
from ember.coercion import find_wider_type
from ember.expressions.cast import Cast

__all__ = ["resolve_unpivot"]


def _resolved(es) -> bool:
    return es is not None and all(e.resolved and isinstance(e, NamedExpression) for e in es)


def _requires_attributes(given: str, missing: str, es) -> AnalysisError:
    bad = [e for e in es if not isinstance(e, AttributeReference)]
    shown = ", ".join(f'"{e.sql()}"' for e in bad)
    return AnalysisError(
        f"UNPIVOT requires all given {given} expressions to be columns when no {missing} "
        f"expressions are given. These are not columns: [{shown}].",
        error_class="UNPIVOT_REQUIRES_ATTRIBUTES",
        parameters={"given": given, "empty": missing, "expressions": shown})


def _complete(up: Unpivot) -> Unpivot | None:
    """``up`` with its ids or values filled in from the child's other columns, or None while
    something is unresolved."""
    if not up.child.resolved:
        return None
    if up.ids is not None and up.values is None:
        if not _resolved(up.ids):
            return None
        if not all(isinstance(e, AttributeReference) for e in up.ids):
            raise _requires_attributes("id", "value", up.ids)
        ids = {e.id for e in up.ids}
        return up.copy(values=tuple((a,) for a in up.child.output if a.id not in ids))
    if up.values is not None and up.ids is None:
        flat = [v for vs in up.values for v in vs]
        if not _resolved(flat):
            return None
        if not all(isinstance(e, AttributeReference) for e in flat):
            raise _requires_attributes("value", "id", flat)
        values = {e.id for e in flat}
        return up.copy(ids=tuple(a for a in up.child.output if a.id not in values))
    if up.ids is None or not _resolved(up.ids) or not _resolved(
            [v for vs in up.values for v in vs]):
        return None
    return up


def _type_mismatch(values) -> AnalysisError:
    """Spark's message: the values grouped by type (a set of several values as its struct),
    names sorted within a type."""

    by_type: dict[str, list[str]] = {}
    for vs in values:
        if len(vs) == 1:
            t, n = sql_type(vs[0].data_type), vs[0].name
        else:
            t = '"STRUCT<' + ", ".join(f"{v.name}: {v.data_type.simple_string().upper()}"
                                       for v in vs) + '>"'
            n = "_".join(v.name for v in vs)
        by_type.setdefault(t, []).append(f"`{n}`")
    types = ", ".join(f"{t} ({', '.join(sorted(ns))})" for t, ns in by_type.items())
    return AnalysisError(
        f"Unpivot value columns must share a least common type, some types do not: [{types}].",
        error_class="UNPIVOT_VALUE_DATA_TYPE_MISMATCH", parameters={"types": types})


def _expand(up: Unpivot) -> Expand:

    values = up.values
    width = len(up.value_column_names)
    if not values:
        raise AnalysisError(
            "At least one value column needs to be specified for UNPIVOT, all columns specified "
            "as ids.", error_class="UNPIVOT_REQUIRES_VALUE_COLUMNS")
    if any(len(vs) != width for vs in values):
        raise AnalysisError(
            "All unpivot value columns must have the same size as there are value column names "
            f"({width}).", error_class="UNPIVOT_VALUE_SIZE_MISMATCH",
            parameters={"names": str(width)})
    types = []
    for i in range(width):
        distinct: list[T.DataType] = []
        for vs in values:
            if vs[i].data_type not in distinct:
                distinct.append(vs[i].data_type)
        t = distinct[0] if len(distinct) == 1 else find_wider_type(distinct,
                                                                   string_promotion=False)
        if t is None:
            raise _type_mismatch(values)
        types.append(t)
    aliases = up.aliases if up.aliases is not None else (None,) * len(values)
    ids = tuple(i.to_attribute() for i in up.ids)
    id_exprs = tuple(i.child if isinstance(i, Alias) else i for i in up.ids)
    projections = []
    for vs, alias in zip(values, aliases):
        label = alias if alias is not None else "_".join(v.name for v in vs)
        cells = tuple(
            (v.child if isinstance(v, Alias) else v) if v.data_type == t
            else Cast(v.child if isinstance(v, Alias) else v, t)
            for v, t in zip(vs, types))
        projections.append(id_exprs + (Literal(label, T.STRING),) + cells)
    variable = AttributeReference(up.variable_column_name, T.STRING, False)
    value_attrs = tuple(
        AttributeReference(n, t, any(vs[i].nullable for vs in values))
        for i, (n, t) in enumerate(zip(up.value_column_names, types)))
    return Expand(tuple(projections), ids + (variable,) + value_attrs, up.child)


def resolve_unpivot(plan: LogicalPlan, ctx) -> LogicalPlan:
    """``plan`` with each resolvable ``Unpivot`` turned into an ``Expand`` (see module doc)."""
    def rule(p: LogicalPlan) -> LogicalPlan:
        if not isinstance(p, Unpivot):
            return p
        up = _complete(p)
        return p if up is None else _expand(up)

    return plan.transform_up(rule)
