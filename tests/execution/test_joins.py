"""Logical joins of every type, planned and run on the local runtime, against a small,
obviously-correct pure-Python reference.

Matrix: join type x condition (equi, equi + residual, non-equi, null-safe) x data (empty left,
empty right, NULL keys, duplicates, NaN / -0.0 keys) x batch size (2, default).
"""

from __future__ import annotations

import math

import numpy as np
import pyarrow as pa
import pytest

from ember import types as T
from ember.conf import SQLConf
from ember.execution.context import ExecContext
from ember.expressions.base import AttributeReference as Attr
from ember.expressions.base import Literal
from ember.expressions.predicates import (
    And,
    EqualNullSafe,
    EqualTo,
    GreaterThan,
    IsNull,
    LessThan,
    Or,
)
from ember.plans.logical.join_type import JoinType
from ember.plans.logical.nodes import Join, LocalRelation

from .conftest import collect, bag, rows_of

NAN = float("nan")

# ---------------------------------------------------------------------------------------------
# Reference semantics of Spark's join types, row at a time, used only here.


def _is_nan(x):
    return isinstance(x, float) and math.isnan(x)


def sql_eq(x, y):
    """Spark '=' on doubles/ints: NULL if either is NULL; NaN = NaN; -0.0 = 0.0."""
    if x is None or y is None:
        return None
    if _is_nan(x) or _is_nan(y):
        return _is_nan(x) and _is_nan(y)
    return x == y


def sql_eq_ns(x, y):
    if x is None or y is None:
        return x is None and y is None
    return sql_eq(x, y)


def sql_lt(x, y):
    if x is None or y is None:
        return None
    return x < y


def sql_and(p, q):
    if p is False or q is False:
        return False
    if p is None or q is None:
        return None
    return True


def sql_or(p, q):
    if p is True or q is True:
        return True
    if p is None or q is None:
        return None
    return False


def reference_join(jt, left, right, cond):
    """``left``/``right``: lists of tuples; ``cond(l, r)`` -> True/False/None."""
    nl = len(left[0]) if left else None
    nr_width = 2
    out = []
    lmatched = [False] * len(left)
    rmatched = [False] * len(right)
    pairs = []
    for i, l in enumerate(left):
        for j, r in enumerate(right):
            if cond(l, r) is True:
                pairs.append((i, j))
                lmatched[i] = True
                rmatched[j] = True
    if jt in (JoinType.INNER, JoinType.CROSS, JoinType.LEFT_OUTER, JoinType.RIGHT_OUTER,
              JoinType.FULL_OUTER):
        out = [left[i] + right[j] for i, j in pairs]
        if jt in (JoinType.LEFT_OUTER, JoinType.FULL_OUTER):
            out += [l + (None,) * nr_width for l, m in zip(left, lmatched) if not m]
        if jt in (JoinType.RIGHT_OUTER, JoinType.FULL_OUTER):
            out += [(None,) * 2 + r for r, m in zip(right, rmatched) if not m]
    elif jt is JoinType.LEFT_SEMI:
        out = [l for l, m in zip(left, lmatched) if m]
    elif jt is JoinType.LEFT_ANTI:
        out = [l for l, m in zip(left, lmatched) if not m]
    else:
        out = [l + (m,) for l, m in zip(left, lmatched)]
    del nl
    return out


# ---------------------------------------------------------------------------------------------
# Data

LEFT_ROWS = [
    (1.0, 10), (2.0, 20), (2.0, 21), (None, 30), (NAN, 40), (-0.0, 50), (3.0, 60), (NAN, 41),
    (7.0, 70),
]
RIGHT_ROWS = [
    (2.0, 5), (2.0, 25), (None, 35), (NAN, 45), (0.0, 55), (4.0, 65), (1.0, 1), (None, 36),
    (0.0, 56),
]
DATASETS = {
    "rich": (LEFT_ROWS, RIGHT_ROWS),
    "empty_left": ([], RIGHT_ROWS),
    "empty_right": (LEFT_ROWS, []),
    "both_empty": ([], []),
    "all_null_keys": ([(None, 1), (None, 2)], [(None, 1), (None, 3)]),
    "dups": ([(1.0, 1), (1.0, 1), (1.0, 2)], [(1.0, 1), (1.0, 1), (1.0, 3)]),
}


_ATTRS = (Attr("k", T.DOUBLE), Attr("v", T.INT), Attr("k2", T.DOUBLE), Attr("w", T.INT))


def relations():
    return _ATTRS


def make_rel(attrs, rows):
    cols = list(zip(*rows)) if rows else [[] for _ in attrs]
    data = pa.table(
        [pa.array(list(c), type=a.data_type.to_arrow()) for c, a in zip(cols, attrs)],
        names=[a.name for a in attrs],
    )
    return LocalRelation(tuple(attrs), data)


def conditions():
    k, v, k2, w = relations()
    return {
        "equi": (EqualTo(k, k2), lambda l, r: sql_eq(l[0], r[0])),
        "equi_residual": (
            And(EqualTo(k2, k), LessThan(v, w)),  # written right = left on purpose
            lambda l, r: sql_and(sql_eq(l[0], r[0]), sql_lt(l[1], r[1])),
        ),
        "non_equi": (LessThan(v, w), lambda l, r: sql_lt(l[1], r[1])),
        "null_safe": (EqualNullSafe(k, k2), lambda l, r: sql_eq_ns(l[0], r[0])),
        "null_safe_residual": (
            And(EqualNullSafe(k, k2), GreaterThan(w, v)),
            lambda l, r: sql_and(sql_eq_ns(l[0], r[0]), sql_lt(l[1], r[1])),
        ),
        "none": (None, lambda l, r: True),
        "not_in": (
            Or(EqualTo(k, k2), IsNull(EqualTo(k, k2))),
            lambda l, r: sql_or(sql_eq(l[0], r[0]), sql_eq(l[0], r[0]) is None),
        ),
    }


ALL_TYPES = list(JoinType)


def _d(days):
    import datetime

    return datetime.date(1970, 1, 1) + datetime.timedelta(days=days)


def build_join(jt, cond_expr, left_rows, right_rows):
    k, v, k2, w = relations()
    left = make_rel((k, v), left_rows)
    right = make_rel((k2, w), right_rows)
    exists = Attr("exists", T.BOOLEAN, False) if jt is JoinType.EXISTENCE else None
    return Join(left, right, jt, cond_expr, existence_attr=exists)


@pytest.mark.parametrize("jt", ALL_TYPES, ids=str)
@pytest.mark.parametrize("cond_name", list(conditions()))
@pytest.mark.parametrize("data_name", list(DATASETS))
def test_join_matches_reference(jt, cond_name, data_name, ctx):
    cond_expr, cond_fn = conditions()[cond_name]
    left_rows, right_rows = DATASETS[data_name]
    plan = build_join(jt, cond_expr, left_rows, right_rows)
    got = collect(plan, ctx)
    expected = reference_join(jt, left_rows, right_rows, cond_fn)
    assert bag(rows_of(got)) == bag(expected)
    assert got.schema.types == [a.data_type.to_arrow() for a in plan.output]
    assert got.schema.names == [a.name for a in plan.output]


# ---------------------------------------------------------------------------------------------
# Null-aware anti join (single-column NOT IN) fast path vs nested loop


@pytest.mark.parametrize("naaj_fast_path", [True, False])
@pytest.mark.parametrize(
    "left_keys,right_keys,expected",
    [
        ([1, 2, None], [], [1, 2, None]),  # empty subquery: every row, even NULL
        ([1, 2, None], [2, None], []),  # NULL in subquery: nothing
        ([1, 2, None, 3], [2, 5], [1, 3]),  # NULL left key dropped
        ([], [1], []),
    ],
)
def test_not_in(naaj_fast_path, left_keys, right_keys, expected):
    a = Attr("a", T.INT)
    b = Attr("b", T.INT)
    left = LocalRelation((a,), pa.table({"a": pa.array(left_keys, pa.int32())}))
    right = LocalRelation((b,), pa.table({"b": pa.array(right_keys, pa.int32())}))
    cond = Or(EqualTo(a, b), IsNull(EqualTo(a, b)))
    plan = Join(left, right, JoinType.LEFT_ANTI, cond)
    conf = SQLConf({"ember.execution.batchSize": 2,
                    "spark.sql.optimizeNullAwareAntiJoin": naaj_fast_path})
    got = collect(plan, ExecContext(conf))
    assert sorted(got.column(0).to_pylist(), key=lambda x: (x is None, x)) == sorted(
        expected, key=lambda x: (x is None, x))


def test_not_in_reversed_equality_uses_fast_path():
    a = Attr("a", T.INT)
    b = Attr("b", T.INT)
    left = LocalRelation((a,), pa.table({"a": pa.array([1, None], pa.int32())}))
    right = LocalRelation((b,), pa.table({"b": pa.array([], pa.int32())}))
    plan = Join(left, right, JoinType.LEFT_ANTI, Or(EqualTo(b, a), IsNull(EqualTo(b, a))))
    assert collect(plan, ExecContext()).column(0).to_pylist() == [1, None]


# ---------------------------------------------------------------------------------------------
# Key types


@pytest.mark.parametrize(
    "arrow_type,sql_type,lvals,rvals",
    [
        (pa.large_string(), T.STRING, ["a", "b", None, "a"], ["a", "c", None]),
        (pa.int64(), T.LONG, [1, 2**40, None], [2**40, 3, None]),
        (pa.bool_(), T.BOOLEAN, [True, False, None], [True, None]),
        (pa.date32(), T.DATE, [_d(0), _d(1), None], [_d(1), _d(1)]),
        (pa.decimal128(10, 2), T.DecimalType(10, 2), None, None),
        (pa.float32(), T.FLOAT, [NAN, -0.0, 1.5], [NAN, 0.0, 2.5]),
    ],
)
def test_key_types(arrow_type, sql_type, lvals, rvals, ctx):
    import decimal

    if lvals is None:
        lvals = [decimal.Decimal("1.10"), decimal.Decimal("2.00"), None]
        rvals = [decimal.Decimal("1.1"), None]
    a = Attr("a", sql_type)
    b = Attr("b", sql_type)
    left = LocalRelation((a,), pa.table({"a": pa.array(lvals, arrow_type)}))
    right = LocalRelation((b,), pa.table({"b": pa.array(rvals, arrow_type)}))
    for cond, fn in [(EqualTo(a, b), sql_eq), (EqualNullSafe(a, b), sql_eq_ns)]:
        got = collect(Join(left, right, JoinType.INNER, cond), ctx)
        expected = reference_join(JoinType.INNER, [(x,) for x in lvals], [(y,) for y in rvals],
                                  lambda l, r: fn(l[0], r[0]))
        # reference_join pads to width 2; inner never pads
        assert bag(rows_of(got)) == bag(expected)


def test_multi_column_keys_with_nulls(ctx):
    a1, a2, b1, b2 = (Attr(n, T.INT) for n in ("a1", "a2", "b1", "b2"))
    lrows = [(1, 1), (1, None), (None, 1), (2, 2), (1, 1)]
    rrows = [(1, 1), (1, None), (None, 1), (2, 3)]

    def rel(attrs, rows):
        return LocalRelation(tuple(attrs), pa.table(
            {x.name: pa.array([r[i] for r in rows], pa.int32()) for i, x in enumerate(attrs)}))

    left, right = rel((a1, a2), lrows), rel((b1, b2), rrows)
    cond = And(EqualTo(a1, b1), EqualNullSafe(a2, b2))
    got = collect(Join(left, right, JoinType.INNER, cond), ctx)
    exp = [l + r for l in lrows for r in rrows
           if sql_eq(l[0], r[0]) is True and sql_eq_ns(l[1], r[1])]
    assert bag(rows_of(got)) == bag(exp)
    assert len(exp) == 3


def test_literal_only_condition_is_not_a_key(ctx):
    k, v, k2, w = relations()
    plan = build_join(JoinType.INNER, And(EqualTo(v, Literal(10, T.INT)), EqualTo(k, k2)),
                      LEFT_ROWS, RIGHT_ROWS)
    got = collect(plan, ctx)
    assert bag(rows_of(got)) == bag([(1.0, 10, 1.0, 1)])


def test_cross_join_with_zero_column_side(ctx):
    from ember.plans.logical.nodes import OneRowRelation

    k, v, k2, w = relations()
    left = make_rel((k, v), [(1.0, 1), (2.0, 2)])
    plan = Join(left, OneRowRelation(), JoinType.CROSS, None)
    assert bag(rows_of(collect(plan, ctx))) == bag([(1.0, 1), (2.0, 2)])


def test_large_equi_join_counts():
    """Vectorized path at a realistic size: counts checked against numpy."""
    rng = np.random.default_rng(1)
    lk = rng.integers(0, 1000, 20000)
    rk = rng.integers(0, 1000, 3000)
    a, b = Attr("a", T.LONG), Attr("b", T.LONG)
    left = LocalRelation((a,), pa.table({"a": lk}))
    right = LocalRelation((b,), pa.table({"b": rk}))
    ctx = ExecContext(SQLConf({"ember.execution.batchSize": 4096}))
    counts = np.bincount(rk, minlength=1000)
    got = collect(Join(left, right, JoinType.INNER, EqualTo(a, b)), ctx)
    assert got.num_rows == int(counts[lk].sum())
    semi = collect(Join(left, right, JoinType.LEFT_SEMI, EqualTo(a, b)), ctx)
    assert semi.num_rows == int((counts[lk] > 0).sum())
