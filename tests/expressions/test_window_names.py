"""Window expressions print as Spark 4.3 prints them: the ``simple_string`` of EXPLAIN and the
``sql()`` that names an unaliased column.  The expected strings are PySpark 4.3's, from
``spark.sql(q).explain(True)`` and ``spark.sql(q).columns`` over ``t(a INT, b INT, x DOUBLE)``."""

from __future__ import annotations

from ember import types as T
from ember.expressions.arithmetic import UnaryMinus
from ember.expressions.base import Alias, AttributeReference, Literal, SortOrder
from ember.expressions.windows import (
    RUNNING_ROWS_FRAME, CumeDist, CurrentRow, DenseRank, Lag, Lead, NTile, NthValue, PercentRank,
    Rank, RowNumber, UnboundedFollowing, UnboundedPreceding, WindowExpression,
    WindowSpecDefinition, range_frame, rows_frame,
)
from ember.plans.logical.nodes import LocalRelation, Window, WindowGroupLimit
from ember.physical.nodes import LocalTableScanExec, WindowExec, WindowGroupLimitExec, \
    WindowGroupLimitMode

A = AttributeReference("a", T.IntegerType(), True, id=6)
B = AttributeReference("b", T.IntegerType(), True, id=7)
X = AttributeReference("x", T.DoubleType(), True, id=8)
INT = T.IntegerType()


def _i(v: int) -> Literal:
    return Literal(v, INT)


def test_ranking_names() -> None:
    spec = WindowSpecDefinition((A,), (SortOrder(B),), RUNNING_ROWS_FRAME)
    rn = WindowExpression(RowNumber(), spec)
    assert rn.simple_string() == (
        "row_number() windowspecdefinition(a#6, b#7 ASC NULLS FIRST, "
        "specifiedwindowframe(RowFrame, unboundedpreceding$(), currentrow$()))")
    assert rn.sql() == ("row_number() OVER (PARTITION BY a ORDER BY b ASC NULLS FIRST ROWS "
                        "BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW)")
    desc = WindowSpecDefinition((A,), (SortOrder(B, False),), RUNNING_ROWS_FRAME)
    assert WindowExpression(DenseRank((B,)), desc).sql() == (
        "DENSE_RANK() OVER (PARTITION BY a ORDER BY b DESC NULLS LAST ROWS BETWEEN UNBOUNDED "
        "PRECEDING AND CURRENT ROW)")
    assert Rank((B,)).simple_string() == "rank(b#7)"
    assert PercentRank((B,)).sql() == "PERCENT_RANK()"
    assert NTile(_i(2)).sql() == "ntile(2)"
    cd = WindowSpecDefinition((), (SortOrder(B),), CumeDist().frame)
    assert WindowExpression(CumeDist(), cd).sql() == (
        "cume_dist() OVER (ORDER BY b ASC NULLS FIRST RANGE BETWEEN UNBOUNDED PRECEDING AND "
        "CURRENT ROW)")
    # nullability and types as PySpark's schema reports them
    for f, t in [(RowNumber(), INT), (Rank((B,)), INT), (DenseRank((B,)), INT),
                 (PercentRank((B,)), T.DoubleType()), (CumeDist(), T.DoubleType()),
                 (NTile(_i(2)), INT)]:
        assert f.data_type == t and not f.nullable


def test_offset_names() -> None:
    null = Literal(None, T.DoubleType())
    lag = Lag(X, _i(1), null, True)
    spec = WindowSpecDefinition((), (SortOrder(B),), lag.frame)
    assert WindowExpression(lag, spec).simple_string() == (
        "lag(x#8, -1, null) windowspecdefinition(b#7 ASC NULLS FIRST, "
        "specifiedwindowframe(RowFrame, -1, -1))")
    assert WindowExpression(lag, spec).sql() == (
        "lag(x, 1, NULL) OVER (ORDER BY b ASC NULLS FIRST ROWS BETWEEN -1 FOLLOWING AND "
        "-1 FOLLOWING)")
    lead = Lead(X, _i(2), null)
    assert lead.frame.sql() == "ROWS BETWEEN 2 FOLLOWING AND 2 FOLLOWING"
    nth = NthValue(X, _i(2), True)
    assert nth.simple_string() == "nth_value(x#8, 2, true)"
    assert nth.sql() == "nth_value(x, 2) ignore nulls"
    assert Lag(A, _i(1), _i(0)).nullable  # a is nullable


def test_frames() -> None:
    f = range_frame(UnaryMinus(_i(2)), _i(1))
    assert f.simple_string() == "specifiedwindowframe(RangeFrame, -2, 1)"
    assert f.sql() == "RANGE BETWEEN 2 PRECEDING AND 1 FOLLOWING"
    # the DataFrame API's rowsBetween(-3, 2) holds a negative literal
    assert rows_frame(_i(-3), _i(2)).sql() == "ROWS BETWEEN -3 FOLLOWING AND 2 FOLLOWING"
    whole = rows_frame(UnboundedPreceding(), UnboundedFollowing())
    assert whole.is_unbounded
    assert rows_frame(CurrentRow(), UnboundedFollowing()).sql() == (
        "ROWS BETWEEN CURRENT ROW AND UNBOUNDED FOLLOWING")
    assert WindowSpecDefinition((), (), whole).sql() == (
        "(ROWS BETWEEN UNBOUNDED PRECEDING AND UNBOUNDED FOLLOWING)")


def test_plan_nodes() -> None:
    spec = WindowSpecDefinition((A,), (SortOrder(B),), RUNNING_ROWS_FRAME)
    rn = Alias(WindowExpression(RowNumber(), spec), "rn")
    w = Window((rn,), (A,), (SortOrder(B),), LocalRelation((A, B)))
    assert w.resolved
    assert [a.name for a in w.output] == ["a", "b", "rn"]
    rn_id = w.output[2].id
    assert w.simple_string() == (
        "Window [row_number() windowspecdefinition(a#6, b#7 ASC NULLS FIRST, "
        "specifiedwindowframe(RowFrame, unboundedpreceding$(), currentrow$())) AS "
        f"rn#{rn_id}], [a#6], [b#7 ASC NULLS FIRST]")
    g = WindowGroupLimit((), (SortOrder(B),), Rank((B,)), 2, LocalRelation((A, B)))
    assert g.simple_string() == "WindowGroupLimit [b#7 ASC NULLS FIRST], rank(b#7), 2"
    ge = WindowGroupLimitExec((A,), (SortOrder(B),), RowNumber(), 2,
                              WindowGroupLimitMode.FINAL, _scan())
    assert ge.simple_string() == (
        "WindowGroupLimit [a#6], [b#7 ASC NULLS FIRST], row_number(), 2, Final")
    we = WindowExec((rn,), (), (SortOrder(B),), _scan())
    assert we.simple_string().endswith(f"AS rn#{rn_id}], [b#7 ASC NULLS FIRST]")
    assert [str(o) for o in we.required_child_ordering[0]] == ["b#7 ASC NULLS FIRST"]



def _scan() -> LocalTableScanExec:
    return LocalTableScanExec((A, B))
