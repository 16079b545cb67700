"""Performance paths give the same answers as the general ones: constant folding and cached
literals (``execution.prepare``), and plans whose columns are pruned (Project over Join / Filter /
Project) run on the local runtime."""

from __future__ import annotations

import pyarrow as pa
import pytest

from ember import types as T
from ember.errors import ExecutionError
from ember.execution.prepare import CachedLiteral, fold_constants, prepare
from ember.expressions.base import Alias, AttributeReference as Attr, Literal
from ember.expressions.cast import Cast
from ember.expressions.predicates import And, EqualTo, GreaterThan, IsNull, LessThan
from ember.plans.logical.join_type import JoinType
from ember.plans.logical.nodes import Filter, Join, LocalRelation, Project, Sort, SubqueryAlias
from ember.expressions.base import SortOrder

from .conftest import collect, bag, rows_of


def rel(names_types, rows):
    attrs = tuple(Attr(n, t) for n, t in names_types)
    cols = list(zip(*rows)) if rows else [[] for _ in attrs]
    data = pa.table([pa.array(list(c), type=a.data_type.to_arrow()) for c, a in zip(cols, attrs)],
                    names=[a.name for a in attrs])
    return LocalRelation(attrs, data)


# ---------------------------------------------------------------------------------------------
# prepare: constant folding, cached literals


def test_cast_of_literal_is_folded_once():
    e = GreaterThan(Attr("v", T.DOUBLE), Cast(Literal(__import__("decimal").Decimal("0.5"),
                                                      T.DecimalType(1, 1)), T.DOUBLE))
    folded = fold_constants(e)
    assert isinstance(folded.right, CachedLiteral)
    assert folded.right.value == 0.5 and folded.right.dtype == T.DOUBLE


def test_failing_constant_is_not_folded_and_fails_only_with_rows(ctx):
    bad = Cast(Literal("x", T.STRING), T.INT)
    assert isinstance(fold_constants(bad), Cast)
    r = rel([("a", T.INT)], [])
    plan = Project((Alias(bad, "b"),), r)
    assert collect(plan, ctx).num_rows == 0  # no row, no error (as in Spark)
    with pytest.raises(ExecutionError):
        collect(Project((Alias(bad, "b"),), rel([("a", T.INT)], [(1,)])), ctx)


def test_cached_literal_serves_every_batch_length(ctx):
    r = rel([("a", T.LONG)], [(i,) for i in range(7)] + [(None,)])
    cond = LessThan(r.output[0], Cast(Literal(5, T.INT), T.LONG))
    plan = Project((Alias(And(cond, IsNull(Literal(None, T.LONG))), "x"), r.output[0]),
                   Filter(GreaterThan(r.output[0], Literal(1, T.LONG)), r))
    assert bag(rows_of(collect(plan, ctx))) == bag([(i < 5, i) for i in range(2, 7)])
    lit = prepare(Literal(3, T.INT), ())
    one, three = (pa.record_batch([pa.array([0] * n)], names=["z"]) for n in (1, 3))
    assert lit.eval(three).to_pylist() == [3, 3, 3]
    assert lit.eval(one).to_pylist() == [3]


# ---------------------------------------------------------------------------------------------
# Column pruning


def _sides():
    left = rel([("k", T.LONG), ("x", T.STRING), ("y", T.DOUBLE)],
               [(1, "a", 1.0), (2, "b", 2.0), (None, "c", 3.0), (3, "d", 4.0), (1, "e", 5.0)])
    right = rel([("id", T.LONG), ("w", T.INT), ("z", T.STRING)],
                [(1, 10, "p"), (3, 30, "q"), (4, 40, "r"), (None, 0, "s")])
    return left, right


@pytest.mark.parametrize("jt", [JoinType.INNER, JoinType.LEFT_OUTER, JoinType.RIGHT_OUTER,
                                JoinType.FULL_OUTER, JoinType.LEFT_SEMI, JoinType.LEFT_ANTI])
def test_project_over_join_reads_only_needed_columns(jt, ctx):
    left, right = _sides()
    k, x, y = left.output
    idc, w, z = right.output
    join = Join(SubqueryAlias("l", left), right, jt, EqualTo(k, idc))
    full = rows_of(collect(join, ctx))
    names = [a.name for a in join.output]
    if jt in (JoinType.LEFT_SEMI, JoinType.LEFT_ANTI):
        want = [y]
    else:
        want = [y, w]
    plan = Project(tuple(want), join)
    got = rows_of(collect(plan, ctx))
    expect = [tuple(r[names.index(a.name)] for a in want) for r in full]
    assert bag(got) == bag(expect)


def test_pruned_project_keeps_items_that_may_fail(ctx):
    r = rel([("a", T.INT)], [(1,)])
    inner = Project((r.output[0], Alias(Cast(Literal("x", T.STRING), T.INT), "b")), r)
    with pytest.raises(ExecutionError):
        collect(Project((inner.output[0],), inner), ctx)


def test_filter_under_pruned_project_and_sort(ctx):
    left, right = _sides()
    k, x, y = left.output
    idc, w, z = right.output
    filt = Filter(GreaterThan(y, Literal(1.5, T.DOUBLE)), left)
    join = Join(filt, right, JoinType.LEFT_OUTER, EqualTo(k, idc))
    plan = Project((x, w), Sort((SortOrder(y, True, True),), True, join))
    assert rows_of(collect(plan, ctx)) == [("b", None), ("c", None), ("d", 30), ("e", 10)]


def test_count_star_over_join_without_columns(ctx):
    left, right = _sides()
    k, _, _ = left.output
    idc, _, _ = right.output
    join = Join(left, right, JoinType.INNER, EqualTo(k, idc))
    plan = Project((Alias(Literal(1, T.INT), "one"),), join)
    assert rows_of(collect(plan, ctx)) == [(1,), (1,), (1,)]
