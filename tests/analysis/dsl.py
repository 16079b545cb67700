"""A tiny DSL for unresolved plans in analyzer tests."""

from __future__ import annotations

from ember.expressions.base import (
    Alias,
    Literal,
    SortOrder,
    UnresolvedAlias,
    UnresolvedAttribute,
    UnresolvedFunction,
    UnresolvedStar,
)
from ember import types as T
import pyarrow as pa
from ember.expressions.base import AttributeReference
from ember.plans.logical.nodes import LocalRelation


def local(**cols) -> LocalRelation:
    """A LocalRelation from ``name=(type, values)`` pairs."""
    attrs = tuple(AttributeReference(n, t) for n, (t, _) in cols.items())
    table = pa.table({n: pa.array(v, type=t.to_arrow()) for n, (t, v) in cols.items()})
    return LocalRelation(attrs, table)
from ember.plans.logical.nodes import Project, UnresolvedRelation


def col(name: str) -> UnresolvedAttribute:
    return UnresolvedAttribute(tuple(name.split(".")))


def star(target: str | None = None) -> UnresolvedStar:
    return UnresolvedStar(tuple(target.split(".")) if target else ())


def rel(name: str) -> UnresolvedRelation:
    return UnresolvedRelation((name,))


def ua(e):
    return UnresolvedAlias(e)


def fn(name: str, *args, distinct: bool = False, filter=None) -> UnresolvedFunction:
    return UnresolvedFunction(name, tuple(args), distinct, filter)


def lit(v, t=T.INT) -> Literal:
    return Literal(v, t)


def select(child, *items) -> Project:
    return Project(tuple(i if isinstance(i, (Alias, UnresolvedAlias)) or isinstance(i, UnresolvedStar) else UnresolvedAlias(i) for i in items), child)


def asc(e) -> SortOrder:
    return SortOrder(e, True, None)
