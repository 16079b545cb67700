"""Shared fixtures for the per-rule tests."""

from __future__ import annotations

from ember import types as T
from ember.plans.logical.nodes import LocalRelation

from ..dsl import bag, relation, run


def t1() -> LocalRelation:
    """LocalRelation t1(a INT, b INT) with NULLs."""
    return relation("t1", [("a", T.INT), ("b", T.INT)],
                    [(1, 10), (2, 20), (3, None), (None, 40), (2, 20)]).child


def t2() -> LocalRelation:
    return relation("t2", [("c", T.INT), ("d", T.STRING)],
                    [(1, "x"), (2, "y"), (5, None), (None, "z")]).child


def empty(name: str = "e") -> LocalRelation:
    return relation(name, [("e1", T.INT), ("e2", T.STRING)], []).child


def same_rows(before, after) -> bool:
    """Both plans return the same bag of rows (at two batch sizes) and the same output ids."""
    assert [a.id for a in before.output] == [a.id for a in after.output]
    expected = bag(run(before))
    return bag(run(after)) == expected and bag(run(after, batch_size=2)) == expected
