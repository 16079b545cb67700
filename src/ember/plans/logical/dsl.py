"""A small plan DSL for rule tests, in the spirit of Catalyst's ``dsl.plans`` / ``dsl.expressions``.

Importing this module adds three builder methods to every :class:`LogicalPlan` (Catalyst adds
them with an implicit conversion; Python has no such thing, so they are attached to the class
once, and only when no method of that name exists): ``plan.join(other, join_type=JoinType.INNER,
condition=None)``, ``plan.where(cond)`` and ``plan.select(*exprs)``.  The Catalyst spelling
``table("t1").join(table("t2"), Cross)`` becomes::

    >>> from ember.plans.logical.dsl import table, col, eq, lit, and_, gt
    >>> from ember.plans.logical.join_type import JoinType
    >>> t1, t2 = table("t1"), table("t2")
    >>> p = t1.join(t1, JoinType.CROSS).join(t2).where(and_(eq(col("t2.id"), col("t1.id")),
    ...                                                    gt(col("t1.id"), lit(10))))
    >>> print(p.tree_string(), end="")
    'Filter (('t2.id = 't1.id) AND ('t1.id > 10))
    +- 'Join Inner
       :- 'Join Cross
       :  :- 'UnresolvedRelation t1
       :  +- 'UnresolvedRelation t1
       +- 'UnresolvedRelation t2

Leaves:

- :func:`table` -- an unresolved, column-less relation (Catalyst's ``table("t1")``): enough for
  tests of rules that only look at the plan's shape (its ``output`` is empty).
- :func:`relation` -- a resolved ``LocalRelation`` with typed, ``name``-qualified columns
  (``relation("t1", id="bigint", b="string")``), optionally with rows.
  :func:`attr` finds one of its attributes: ``attr(t1, "id")``.

Expressions: :func:`col` (an unresolved ``'t2.id``), :func:`lit` (type inferred from the Python
value), comparison builders :func:`eq` ``neq`` ``gt`` ``ge`` ``lt`` ``le`` ``eq_null_safe``,
:func:`and_` / :func:`or_` / :func:`not_`, :func:`is_not_null` / :func:`is_null`, :func:`alias`
and :func:`row_number` (an unevaluable expression, Catalyst's ``RowNumber()``).  Builders accept
plain Python values where an expression is expected and turn them into literals.

No analysis is run: the DSL builds exactly the tree it is told to build.
"""

from __future__ import annotations

import datetime
import decimal
from collections.abc import Sequence
from typing import Any

import pyarrow as pa

from ember import types as T
from ember.expressions.base import (
    Alias,
    AttributeReference,
    Expression,
    LeafExpression,
    Literal,
    Unevaluable,
    UnresolvedAttribute,
)
from ember.plans.logical.join_type import JoinType
from ember.plans.logical.nodes import (
    Filter,
    Join,
    LocalRelation,
    LogicalPlan,
    Project,
    SubqueryAlias,
    UnresolvedRelation,
)
from ember.trees import node
from ember.expressions import predicates
from ember.expressions.predicates import And, Or, Not, IsNull, IsNotNull

__all__ = [
    "DslRelation",
    "RowNumber",
    "table",
    "relation",
    "attr",
    "col",
    "lit",
    "alias",
    "eq",
    "eq_null_safe",
    "neq",
    "gt",
    "ge",
    "lt",
    "le",
    "and_",
    "or_",
    "not_",
    "is_null",
    "is_not_null",
    "row_number",
    "join",
    "where",
    "select",
]


# ---------------------------------------------------------------------------------------------
# Leaves


@node
class DslRelation(UnresolvedRelation):
    """Catalyst's DSL ``table("t1")``: an unresolved relation whose output is empty (so rules that
    ask for ``output`` / ``output_set`` can run over it).  Prints as ``'UnresolvedRelation t1``."""

    def _compute_output(self) -> tuple[AttributeReference, ...]:
        return ()

    def simple_string(self) -> str:
        return f"UnresolvedRelation {'.'.join(self.name_parts)}"


def table(name: str) -> DslRelation:
    """An unresolved, column-less leaf named ``name`` (``'UnresolvedRelation t1``).

    >>> table("t1").simple_string()
    'UnresolvedRelation t1'
    """
    return DslRelation(tuple(name.split(".")))


def _parse_type(t: str | T.DataType) -> T.DataType:
    if isinstance(t, T.DataType):
        return t
    name = t.strip().lower()
    if "(" in name:
        base, rest = name.split("(", 1)
        params = tuple(int(p) for p in rest.rstrip(")").split(","))
        return T.parse_type_name(base.strip(), params)
    return T.parse_type_name(name)


def relation(name: str, rows: Sequence[Sequence[Any]] | None = None, *,
             nullable: bool = True, **columns: str | T.DataType) -> LocalRelation:
    """A resolved ``LocalRelation`` named ``name`` (its attributes carry the qualifier ``name``).

    ``columns`` maps column names to types (``"bigint"``, ``"string"``, ``"decimal(10,2)"`` or an
    ember ``DataType``), in keyword order; ``rows`` (tuples in column order) become its data.

    >>> t = relation("t1", id="bigint", b="string")
    >>> [a.simple_string().split("#")[0] for a in t.output]
    ['id', 'b']
    """
    attrs = tuple(AttributeReference(c, _parse_type(t), nullable, attr_qualifier=(name,))
                  for c, t in columns.items())
    data: pa.Table | None = None
    if rows is not None:
        arrays = [pa.array([r[i] for r in rows], type=a.data_type.to_arrow())
                  for i, a in enumerate(attrs)]
        data = pa.Table.from_arrays(arrays, names=[a.name for a in attrs])
    else:
        data = pa.Table.from_arrays(
            [pa.array([], type=a.data_type.to_arrow()) for a in attrs],
            names=[a.name for a in attrs])
    return LocalRelation(attrs, data)


def attr(plan: LogicalPlan, name: str) -> AttributeReference:
    """The output attribute of ``plan`` called ``name`` (``"t1.id"`` checks the qualifier too)."""
    parts = name.split(".")
    for a in plan.output:
        if a.name == parts[-1] and (len(parts) == 1 or tuple(a.qualifier[-1:]) == tuple(parts[-2:-1])):
            return a
    raise KeyError(f"{name} not in {[a.simple_string() for a in plan.output]}")


# ---------------------------------------------------------------------------------------------
# Expressions


@node
class RowNumber(Unevaluable, LeafExpression):
    """Catalyst's ``RowNumber()``: a window function, unevaluable outside a Window (so it can never
    sit in a join condition).  Used by the ReorderJoin seed examples."""

    @property
    def data_type(self) -> T.DataType:
        return T.INT

    @property
    def nullable(self) -> bool:
        return False

    def simple_string(self) -> str:
        return "row_number()"

    def sql(self) -> str:
        return "row_number()"


def row_number() -> RowNumber:
    """An unevaluable expression (``row_number()``)."""
    return RowNumber()


def col(name: str) -> UnresolvedAttribute:
    """An unresolved column reference: ``col("t2.id")`` prints as ``'t2.id``."""
    return UnresolvedAttribute(tuple(name.split(".")))


def lit(value: Any, dtype: T.DataType | str | None = None) -> Literal:
    """A literal; the type is inferred from the Python value unless given (int -> int, or bigint
    when it does not fit; float -> double; str -> string; bool; Decimal; date; datetime)."""
    if isinstance(value, Literal):
        return value
    if dtype is not None:
        return Literal(value, _parse_type(dtype))
    match value:
        case None:
            t: T.DataType = T.NULL
        case bool():
            t = T.BOOLEAN
        case int():
            t = T.INT if -(2 ** 31) <= value < 2 ** 31 else T.LONG
        case float():
            t = T.DOUBLE
        case str():
            t = T.STRING
        case bytes():
            t = T.BINARY
        case decimal.Decimal():
            digits = value.as_tuple()
            scale = max(0, -int(digits.exponent))
            t = T.DecimalType(max(len(digits.digits), scale, 1), scale)
        case datetime.datetime():
            t = T.TIMESTAMP
        case datetime.date():
            t = T.DATE
        case _:
            raise TypeError(f"lit: unsupported value {value!r}")
    return Literal(value, t)


def _e(x: Any) -> Expression:
    return x if isinstance(x, Expression) else lit(x)


def alias(e: Any, name: str) -> Alias:
    """``e AS name``."""
    return Alias(_e(e), name)


def _cmp(cls_name: str, a: Any, b: Any) -> Expression:
    return getattr(predicates, cls_name)(_e(a), _e(b))


def eq(a: Any, b: Any) -> Expression:
    """``a = b`` (Catalyst's ``===``)."""
    return _cmp("EqualTo", a, b)


def eq_null_safe(a: Any, b: Any) -> Expression:
    """``a <=> b``."""
    return _cmp("EqualNullSafe", a, b)


def neq(a: Any, b: Any) -> Expression:
    """``NOT (a = b)`` (Catalyst's ``=!=``)."""
    return not_(eq(a, b))


def gt(a: Any, b: Any) -> Expression:
    """``a > b``."""
    return _cmp("GreaterThan", a, b)


def ge(a: Any, b: Any) -> Expression:
    """``a >= b``."""
    return _cmp("GreaterThanOrEqual", a, b)


def lt(a: Any, b: Any) -> Expression:
    """``a < b``."""
    return _cmp("LessThan", a, b)


def le(a: Any, b: Any) -> Expression:
    """``a <= b``."""
    return _cmp("LessThanOrEqual", a, b)


def and_(*conds: Any) -> Expression:
    """Left-deep ``c1 AND c2 AND ...`` (Catalyst's ``&&``)."""

    if not conds:
        raise ValueError("and_ needs at least one condition")
    out = _e(conds[0])
    for c in conds[1:]:
        out = And(out, _e(c))
    return out


def or_(*conds: Any) -> Expression:
    """Left-deep ``c1 OR c2 OR ...``."""

    if not conds:
        raise ValueError("or_ needs at least one condition")
    out = _e(conds[0])
    for c in conds[1:]:
        out = Or(out, _e(c))
    return out


def not_(c: Any) -> Expression:
    """``NOT c``."""

    return Not(_e(c))


def is_null(c: Any) -> Expression:
    """``isnull(c)``."""

    return IsNull(_e(c))


def is_not_null(c: Any) -> Expression:
    """``isnotnull(c)``."""

    return IsNotNull(_e(c))


# ---------------------------------------------------------------------------------------------
# Plan builders (also attached to LogicalPlan as methods)


def join(left: LogicalPlan, right: LogicalPlan, join_type: JoinType = JoinType.INNER,
         condition: Expression | None = None) -> Join:
    """``Join(left, right, join_type, condition)`` without hints (Catalyst's ``join``; its
    default join type is Inner, as here)."""
    return Join(left, right, join_type, condition)


def where(child: LogicalPlan, condition: Any) -> Filter:
    """``Filter(condition, child)``."""
    return Filter(_e(condition), child)


def select(child: LogicalPlan, *exprs: Any) -> Project:
    """``Project(exprs, child)``; a ``str`` item names a column of ``child`` (resolved when the
    child is, else an unresolved ``'name``)."""
    items: list[Expression] = []
    for e in exprs:
        if isinstance(e, str):
            try:
                items.append(attr(child, e))
            except Exception:  # an unresolved child, or an unknown name: keep it unresolved
                items.append(col(e))
        else:
            items.append(_e(e))
    return Project(tuple(items), child)


def subquery_alias(child: LogicalPlan, name: str) -> SubqueryAlias:
    """``SubqueryAlias name`` over ``child`` (Catalyst's ``.as("name")``)."""
    return SubqueryAlias((name,), child)


for _name, _fn in (("join", join), ("where", where), ("select", select),
                   ("subquery_alias", subquery_alias)):
    if not hasattr(LogicalPlan, _name):
        setattr(LogicalPlan, _name, _fn)
del _name, _fn
