"""Logical operators other than joins, planned and run on the local runtime: relations,
Project/Filter, Sort, Limit/Offset, Distinct, Union, Intersect/Except (DISTINCT and ALL), Expand,
file scans, pass-through nodes."""

from __future__ import annotations

import math

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from ember import types as T
from ember.execution.context import ExecContext
from ember.expressions.base import Alias, AttributeReference as Attr, Expression, Literal, SortOrder
from ember.expressions.predicates import GreaterThan, IsNull
from ember.plans.logical.nodes import (
    Aggregate,
    Distinct,
    Except,
    Expand,
    FileRelation,
    Filter,
    Intersect,
    Limit,
    LocalRelation,
    Offset,
    OneRowRelation,
    Project,
    ResolvedHint,
    Sort,
    SubqueryAlias,
    Union,
    View,
)
from ember.trees import node

from .conftest import collect, bag, rows_of

NAN = float("nan")


def rel(names_types, rows):
    attrs = tuple(Attr(n, t) for n, t in names_types)
    cols = list(zip(*rows)) if rows else [[] for _ in attrs]
    data = pa.table([pa.array(list(c), type=a.data_type.to_arrow()) for c, a in zip(cols, attrs)],
                    names=[a.name for a in attrs])
    return LocalRelation(attrs, data)


@node
class _SmallString(Expression):
    """Test-only: returns its child as pa.string() (not the large_string of STRING)."""

    child: Expression

    @property
    def data_type(self):
        return T.STRING

    def eval(self, batch):
        return self.child.eval(batch).cast(pa.string())


# ---------------------------------------------------------------------------------------------
# Relations, Project, Filter


def test_empty_relation_collect_has_schema(ctx):
    r = rel([("a", T.INT), ("s", T.STRING)], [])
    t = collect(r, ctx)
    assert t.num_rows == 0
    assert t.schema.types == [pa.int32(), pa.large_string()]
    assert t.schema.names == ["a", "s"]
    none_data = LocalRelation((Attr("x", T.LONG),), None)
    assert collect(none_data, ctx).schema.types == [pa.int64()]


def test_one_row_relation_project(ctx):
    plan = Project((Alias(Literal(1, T.INT), "x"), Alias(Literal("s", T.STRING), "y")),
                   OneRowRelation())
    t = collect(plan, ctx)
    assert rows_of(t) == [(1, "s")]
    assert t.schema.types == [pa.int32(), pa.large_string()]


def test_project_casts_to_output_type(ctx):
    r = rel([("s", T.STRING)], [("a",), (None,), ("c",)])
    s = r.output[0]
    plan = Project((Alias(_SmallString(s), "t"), s), r)
    t = collect(plan, ctx)
    assert t.schema.types == [pa.large_string(), pa.large_string()]
    assert rows_of(t) == [("a", "a"), (None, None), ("c", "c")]


def test_filter_true_only(ctx):
    r = rel([("a", T.INT)], [(1,), (None,), (3,), (0,)])
    a = r.output[0]
    t = collect(Filter(GreaterThan(a, Literal(0, T.INT)), r), ctx)
    assert rows_of(t) == [(1,), (3,)]
    t = collect(Filter(IsNull(a), r), ctx)
    assert rows_of(t) == [(None,)]
    t = collect(Filter(Literal(None, T.BOOLEAN), r), ctx)
    assert t.num_rows == 0


def test_passthrough_nodes(ctx):
    r = rel([("a", T.INT)], [(1,), (2,)])
    plan = SubqueryAlias(("t",), View("v", ResolvedHint(("BROADCAST",), r)))
    assert rows_of(collect(plan, ctx)) == [(1,), (2,)]


# ---------------------------------------------------------------------------------------------
# Sort


def test_sort_spark_ordering(ctx):
    rows = [(1.0,), (NAN,), (None,), (-0.0,), (0.0,), (float("inf"),), (-1.0,)]
    r = rel([("x", T.DOUBLE)], rows)
    x = r.output[0]

    def run(asc, nulls_first):
        t = collect(Sort((SortOrder(x, asc, nulls_first),), True, r), ctx)
        return ["NaN" if isinstance(v, float) and math.isnan(v) else v
                for v in t.column(0).to_pylist()]

    # -0.0 == 0.0: stable, keeps input order (-0.0 first)
    assert run(True, None) == [None, -1.0, -0.0, 0.0, 1.0, float("inf"), "NaN"]
    assert run(True, False) == [-1.0, -0.0, 0.0, 1.0, float("inf"), "NaN", None]
    assert run(False, None) == ["NaN", float("inf"), 1.0, -0.0, 0.0, -1.0, None]
    assert run(False, True) == [None, "NaN", float("inf"), 1.0, -0.0, 0.0, -1.0]


def test_sort_multi_key(ctx):
    rows = [("b", 1), ("a", 2), (None, 3), ("a", None), ("b", 0), ("a", 1)]
    r = rel([("s", T.STRING), ("n", T.INT)], rows)
    s, n = r.output
    t = collect(Sort((SortOrder(s, True, False), SortOrder(n, False, None)), True, r), ctx)
    assert rows_of(t) == [("a", 2), ("a", 1), ("a", None), ("b", 1), ("b", 0), (None, 3)]


def test_sort_empty(ctx):
    r = rel([("a", T.INT)], [])
    assert collect(Sort((SortOrder(r.output[0]),), True, r), ctx).num_rows == 0


# ---------------------------------------------------------------------------------------------
# Limit / Offset


@pytest.mark.parametrize("n", [0, 1, 2, 3, 5, 10])
def test_limit(ctx, n):
    r = rel([("a", T.INT)], [(i,) for i in range(5)])
    assert rows_of(collect(Limit(Literal(n, T.INT), r), ctx)) == [(i,) for i in range(min(n, 5))]


@pytest.mark.parametrize("n", [0, 1, 2, 3, 5, 10])
def test_offset(ctx, n):
    r = rel([("a", T.INT)], [(i,) for i in range(5)])
    assert rows_of(collect(Offset(Literal(n, T.INT), r), ctx)) == [(i,) for i in range(n, 5)]


def test_limit_offset(ctx):
    r = rel([("a", T.INT)], [(i,) for i in range(7)])
    plan = Limit(Literal(3, T.INT), Offset(Literal(2, T.INT), r))
    assert rows_of(collect(plan, ctx)) == [(2,), (3,), (4,)]


# ---------------------------------------------------------------------------------------------
# Distinct / Union / Intersect / Except


def test_distinct_nulls_and_nan(ctx):
    rows = [(1.0, "a"), (None, "a"), (NAN, None), (None, "a"), (-0.0, "b"), (0.0, "b"),
            (float("nan"), None), (1.0, "a")]
    r = rel([("x", T.DOUBLE), ("s", T.STRING)], rows)
    t = collect(Distinct(r), ctx)
    assert bag(rows_of(t)) == bag([(1.0, "a"), (None, "a"), (NAN, None), (0.0, "b")])
    # first occurrence kept, in input order
    assert rows_of(t)[0] == (1.0, "a")
    # Spark outputs the normalised key: 0.0, not -0.0
    zero = [x for x, _ in rows_of(t) if x == 0.0][0]
    assert math.copysign(1.0, zero) == 1.0


def test_union_positional_cast(ctx):
    a = rel([("a", T.LONG)], [(1,), (2,)])
    b = rel([("b", T.INT)], [(3,), (None,)])
    plan = Union((a, b))
    t = collect(plan, ctx)
    assert t.schema.names == ["a"] and t.schema.types == [pa.int64()]
    assert rows_of(t) == [(1,), (2,), (3,), (None,)]
    assert sorted(rows_of(collect(Distinct(Union((a, a))), ctx))) == [(1,), (2,)]  # any order


L_ROWS = [(1, "a"), (1, "a"), (1, "a"), (2, None), (2, None), (3, "c"), (None, None)]
R_ROWS = [(1, "a"), (1, "a"), (2, None), (None, None), (None, None), (4, "d")]


def _setop_rels():
    return (rel([("n", T.INT), ("s", T.STRING)], L_ROWS),
            rel([("m", T.INT), ("t", T.STRING)], R_ROWS))


def test_intersect_distinct(ctx):
    l, r = _setop_rels()
    t = collect(Intersect(l, r, False), ctx)
    assert bag(rows_of(t)) == bag([(1, "a"), (2, None), (None, None)])


def test_intersect_all(ctx):
    l, r = _setop_rels()
    t = collect(Intersect(l, r, True), ctx)
    assert bag(rows_of(t)) == bag([(1, "a"), (1, "a"), (2, None), (None, None)])


def test_except_distinct(ctx):
    l, r = _setop_rels()
    assert bag(rows_of(collect(Except(l, r, False), ctx))) == bag([(3, "c")])
    assert bag(rows_of(collect(Except(r, l, False), ctx))) == bag([(4, "d")])


def test_except_all(ctx):
    l, r = _setop_rels()
    assert bag(rows_of(collect(Except(l, r, True), ctx))) == bag([(1, "a"), (2, None), (3, "c")])
    assert bag(rows_of(collect(Except(r, l, True), ctx))) == bag([(None, None), (4, "d")])


def test_setops_empty_sides(ctx):
    l, _ = _setop_rels()
    e = rel([("m", T.INT), ("t", T.STRING)], [])
    assert collect(Intersect(l, e, False), ctx).num_rows == 0
    assert collect(Intersect(e, l, True), ctx).num_rows == 0
    assert bag(rows_of(collect(Except(l, e, True), ctx))) == bag(L_ROWS)
    assert len(rows_of(collect(Except(l, e, False), ctx))) == 4


def test_setops_nan_and_negative_zero(ctx):
    l = rel([("x", T.DOUBLE)], [(NAN,), (-0.0,), (1.0,)])
    r = rel([("y", T.DOUBLE)], [(float("nan"),), (0.0,)])
    got = rows_of(collect(Intersect(l, r, False), ctx))
    assert bag(got) == bag([(NAN,), (0.0,)])
    assert all(math.copysign(1.0, x) == 1.0 for (x,) in got if x == 0.0)
    assert bag(rows_of(collect(Except(l, r, False), ctx))) == bag([(1.0,)])


# ---------------------------------------------------------------------------------------------
# Expand


def test_expand(ctx):
    r = rel([("a", T.INT), ("b", T.INT)], [(1, 10), (2, 20), (3, 30)])
    a, b = r.output
    ga, gb, gid = Attr("a", T.INT), Attr("b", T.INT), Attr("gid", T.INT, False)
    plan = Expand(((a, Literal(None, T.INT), Literal(1, T.INT)),
                   (Literal(None, T.INT), b, Literal(2, T.INT))), (ga, gb, gid), r)
    t = collect(plan, ctx)
    assert bag(rows_of(t)) == bag([(1, None, 1), (2, None, 1), (3, None, 1),
                                   (None, 10, 2), (None, 20, 2), (None, 30, 2)])


# ---------------------------------------------------------------------------------------------
# Aggregate delegation


# ---------------------------------------------------------------------------------------------
# Files


def test_parquet_scan(ctx, tmp_path):
    path = tmp_path / "t.parquet"
    pq.write_table(pa.table({"a": pa.array([1, 2, 3], pa.int32()), "s": ["x", None, "z"]}), path)
    attrs = (Attr("a", T.LONG), Attr("s", T.STRING))
    t = collect(FileRelation(attrs, "parquet", (str(path),)), ctx)
    assert t.schema.types == [pa.int64(), pa.large_string()]
    assert rows_of(t) == [(1, "x"), (2, None), (3, "z")]


def test_csv_scan(ctx, tmp_path):
    path = tmp_path / "t.csv"
    path.write_text("a;b\n1;x\n2;\n3;z\n")
    opts = (("header", "true"), ("inferSchema", "true"), ("sep", ";"))
    schema = [("a", T.LONG), ("b", T.STRING)]
    attrs = tuple(Attr(n, t) for n, t in schema)
    t = collect(FileRelation(attrs, "csv", (str(path),), opts), ctx)
    assert rows_of(t) == [(1, "x"), (2, None), (3, "z")]
    # no header, no inference: all strings named _c0, _c1
    schema = [("_c0", T.STRING), ("_c1", T.STRING)]
    attrs = tuple(Attr(n, t) for n, t in schema)
    t = collect(FileRelation(attrs, "csv", (str(path),), (("sep", ";"),)), ctx)
    assert rows_of(t)[0] == ("a", "b") and t.num_rows == 4


def test_struct_and_array_columns(ctx):
    st = T.StructType((T.StructField("x", T.INT), T.StructField("y", T.STRING)))
    arr = T.ArrayType(T.INT)
    rows = [({"x": 1, "y": None}, [1, None]), ({"x": 1, "y": None}, [1, None]), (None, None),
            ({"x": 0, "y": "b"}, []), (None, None), ({"x": None, "y": "a"}, [2])]
    r = rel([("s", st), ("l", arr)], rows)
    t = collect(Distinct(r), ctx)
    assert len(rows_of(t)) == 4
    s_attr = r.output[0]
    t = collect(Sort((SortOrder(s_attr, True, False),), True, r), ctx)
    xs = [v["x"] if v is not None else "NULL" for v in t.column(0).to_pylist()]
    # struct fields ascending with NULL fields first; NULL structs last (NULLS LAST)
    assert xs == [None, 0, 1, 1, "NULL", "NULL"]
