"""The window analysis rules one at a time: WindowsSubstitution, ResolveWindowOrder,
ResolveWindowFrame, WindowFrameCoercion, ExtractWindowExpressions (the Spark-facing names,
plans and error classes are checked against PySpark in tests/differential/test_windows_sql.py)."""

from __future__ import annotations

import pytest

from ember import types as T
from ember.errors import AnalysisError
from ember.expressions.base import Alias
from ember.expressions.cast import Cast
from ember.expressions.windows import (
    CurrentRow, Rank, UnboundedFollowing, UnboundedPreceding, WindowExpression, range_frame,
    rows_frame,
)
from ember.plans.logical.nodes import Aggregate, Filter, Project, Window
from ember.sql import parse_statement


def _analyze(analyzer, sql: str):
    return analyzer.analyze(parse_statement(sql))


def _windows(plan) -> list[Window]:
    return plan.collect(lambda n: n if isinstance(n, Window) else None)


def _window_exprs(plan) -> list[WindowExpression]:
    return [e.child for w in _windows(plan) for e in w.window_expressions]


def test_default_frames(analyzer):
    plan = _analyze(analyzer, "SELECT sum(a) OVER (ORDER BY b), sum(a) OVER (PARTITION BY b), "
                              "row_number() OVER (ORDER BY a) FROM testData")
    frames = sorted(((type(we.window_function).__name__, bool(we.spec.partition_spec),
                      we.spec.frame) for we in _window_exprs(plan)), key=repr)
    assert frames == sorted([
        ("RowNumber", False, rows_frame(UnboundedPreceding(), CurrentRow())),
        ("AggregateExpression", False, range_frame(UnboundedPreceding(), CurrentRow())),
        ("AggregateExpression", True, rows_frame(UnboundedPreceding(), UnboundedFollowing())),
    ], key=repr)


def test_rank_takes_the_order_expressions(analyzer):
    plan = _analyze(analyzer, "SELECT rank() OVER (PARTITION BY a ORDER BY b DESC, a) FROM testData")
    (we,) = _window_exprs(plan)
    assert isinstance(we.window_function, Rank)
    assert [c.name for c in we.window_function.order] == ["b", "a"]


def test_one_window_per_specification_and_helper_columns(analyzer):
    plan = _analyze(analyzer, "SELECT a, sum(b + 1) OVER (PARTITION BY a % 2), "
                              "max(b) OVER (PARTITION BY a % 2), b - rank() OVER (ORDER BY b) "
                              "FROM testData")
    windows = _windows(plan)
    assert len(windows) == 2
    assert sorted(len(w.window_expressions) for w in windows) == [1, 2]
    below = windows[-1].child
    assert isinstance(below, Project)
    # ``a % 2`` is computed once below the windows, ``b + 1`` as the sum's input
    assert [e.name for e in below.project_list if isinstance(e, Alias)] == ["_w0", "_w1"]


def test_named_windows_and_references_between_them(analyzer):
    plan = _analyze(analyzer, "SELECT sum(a) OVER w2, rank() OVER w FROM testData "
                              "WINDOW w AS (PARTITION BY a ORDER BY b), w2 AS w")
    (window,) = _windows(plan)
    assert len(window.window_expressions) == 2
    with pytest.raises(AnalysisError) as e:
        _analyze(analyzer, "SELECT sum(a) OVER w3 FROM testData WINDOW w AS (ORDER BY b)")
    assert e.value.error_class == "MISSING_WINDOW_SPECIFICATION"


def test_range_bounds_are_cast_to_the_order_type(analyzer):
    plan = _analyze(analyzer, "SELECT sum(a) OVER (ORDER BY CAST(b AS BIGINT) RANGE BETWEEN 1 "
                              "PRECEDING AND 2 FOLLOWING) FROM testData")
    (we,) = _window_exprs(plan)
    frame = we.spec.frame
    assert isinstance(frame.lower, Cast) and frame.lower.data_type == T.LONG
    assert isinstance(frame.upper, Cast) and frame.upper.data_type == T.LONG


def test_window_over_aggregate_keeps_having_below_the_window(analyzer):
    plan = _analyze(analyzer, "SELECT a, sum(sum(b)) OVER (ORDER BY a) FROM testData GROUP BY a "
                              "HAVING count(*) > 0")
    (window,) = _windows(plan)
    node = window.child
    assert isinstance(node, Filter) and isinstance(node.child, Aggregate)
    assert [e.name for e in node.child.aggregate_expressions if e.name.startswith("_w")] == ["_w0"]


def test_qualify_filters_above_the_window(analyzer):
    plan = _analyze(analyzer, "SELECT a FROM testData QUALIFY row_number() OVER (ORDER BY b) = 1")
    assert isinstance(plan, Project) and [a.name for a in plan.output] == ["a"]
    assert isinstance(plan.child, Filter)
    assert _windows(plan)


def test_sum_over_nothing_is_not_a_global_aggregate(analyzer):
    plan = _analyze(analyzer, "SELECT a, sum(b) OVER () FROM testData")
    assert not plan.exists(lambda n: isinstance(n, Aggregate))


@pytest.mark.parametrize("sql, error_class", [
    ("SELECT a FROM testData WHERE row_number() OVER (ORDER BY a) = 1",
     "WINDOW_FUNCTION_NOT_ALLOWED_IN_CLAUSE"),
    ("SELECT rank() FROM testData", "WINDOW_FUNCTION_WITHOUT_OVER_CLAUSE"),
    ("SELECT lead(a) OVER (PARTITION BY b) FROM testData", "WINDOW_FUNCTION_FRAME_NOT_ORDERED"),
    ("SELECT abs(a) OVER () FROM testData", "UNSUPPORTED_EXPR_FOR_WINDOW"),
    ("SELECT sum(DISTINCT a) OVER () FROM testData", "DISTINCT_WINDOW_FUNCTION_UNSUPPORTED"),
    ("SELECT sum(a) OVER (ORDER BY a ROWS BETWEEN 2 FOLLOWING AND 1 FOLLOWING) FROM testData",
     "DATATYPE_MISMATCH.SPECIFIED_WINDOW_FRAME_WRONG_COMPARISON"),
    ("SELECT lag(a, 1, 0, 'x') OVER (ORDER BY a) FROM testData", "_LEGACY_ERROR_TEMP_1210"),
])
def test_errors(analyzer, sql: str, error_class: str):
    with pytest.raises(AnalysisError) as e:
        _analyze(analyzer, sql)
    assert e.value.error_class == error_class
