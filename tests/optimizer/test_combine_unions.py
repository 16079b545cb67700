"""CombineUnions: nested positional UNION ALLs flattened into one Union (Spark's optimized plan
of ``SELECT 0 UNION ALL SELECT 1 UNION ALL SELECT 2`` is one ``Union false, false`` over three
projects); ``unionByName`` unions are left nested; the rows do not change."""

from __future__ import annotations

import ember
from ember.optimizer.rules.combine_unions import combine_unions
from ember.plans.logical.nodes import Union


def _unions(plan) -> list[Union]:  # type: ignore[no-untyped-def]
    return plan.collect(lambda p: p if isinstance(p, Union) else None)


def test_chain_flattened() -> None:
    s = ember.Session()
    df = s.sql(" UNION ALL ".join(f"SELECT {i} AS x" for i in range(4)))
    unions = _unions(df._qe.optimized)
    assert len(unions) == 1 and len(unions[0].inputs) == 4
    assert df._qe.optimized.output == df._qe.analyzed.output
    assert [r.x for r in df.collect()] == [0, 1, 2, 3]


def test_union_distinct_and_by_name_kept() -> None:
    s = ember.Session()
    a, b, c = (s.sql(f"SELECT {i} AS x, {i} AS y")._qe.analyzed for i in range(3))
    by_name = Union((Union((a, b), by_name=True), c), by_name=True)
    assert combine_unions(by_name) is by_name  # matched by name: not flattened
    positional = Union((Union((a, b)), c))
    assert combine_unions(positional) == Union((a, b, c))
    mixed = s.sql("SELECT 1 AS x UNION SELECT 2 UNION ALL SELECT 1")
    assert sorted(r.x for r in mixed.collect()) == [1, 1, 2]
