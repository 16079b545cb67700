"""The optimizer rules around ``Window``: CollapseWindow, TransposeWindow, the Window case of
PushPredicateThroughNonJoin, ColumnPruning through a Window and InferWindowGroupLimit (Spark's
``CollapseWindowSuite``, ``TransposeWindowSuite``, ``FilterPushdownSuite`` window cases and
``InferWindowGroupLimitSuite`` shapes)."""

from __future__ import annotations

from ember import types as T
from ember.conf import SQLConf, WINDOW_GROUP_LIMIT_THRESHOLD
from ember.expressions.aggregates import AggregateExpression, Sum
from ember.expressions.base import Alias, SortOrder
from ember.expressions.predicates import And, EqualTo, GreaterThan, LessThan, LessThanOrEqual
from ember.expressions.windows import (
    CurrentRow, Rank, RowNumber, UnboundedFollowing, UnboundedPreceding, WindowExpression,
    WindowSpecDefinition, range_frame, rows_frame,
)
from ember.optimizer.rules.collapse_window import CollapseWindow
from ember.optimizer.rules.column_pruning import ColumnPruning
from ember.optimizer.rules.infer_window_group_limit import InferWindowGroupLimit
from ember.optimizer.rules.push_down_predicates import PushPredicateThroughNonJoin
from ember.optimizer.rules.transpose_window import TransposeWindow
from ember.plans.logical.nodes import Filter, Limit, LocalRelation, Project, Sort, Window, WindowGroupLimit

from ..dsl import col, lit, relation


def _rel() -> LocalRelation:
    return relation("t", [("a", T.INT), ("b", T.INT), ("c", T.INT)],
                    [(1, 1, 1), (1, 2, 3), (2, 1, 5)]).child


def _sum(r, name, parts, order=()):
    frame = range_frame(UnboundedPreceding(), CurrentRow()) if order else rows_frame(
        UnboundedPreceding(), UnboundedFollowing())
    spec = WindowSpecDefinition(parts, order, frame)
    return Alias(WindowExpression(AggregateExpression(Sum(col(r, "c"))), spec), name)


def _ranking(fn, name, parts, order):
    spec = WindowSpecDefinition(parts, order, rows_frame(UnboundedPreceding(), CurrentRow()))
    return Alias(WindowExpression(fn, spec), name)


def test_collapse_windows_with_the_same_spec():
    r = _rel()
    parts, order = (col(r, "a"),), (SortOrder(col(r, "b")),)
    s1, s2 = _sum(r, "s1", parts, order), _sum(r, "s2", parts, order)
    lower = Window((s1,), parts, order, r)
    upper = Window((s2,), parts, order, lower)
    assert CollapseWindow()(upper) == Window((s1, s2), parts, order, r)


def test_collapse_through_project_and_not_across_dependencies():
    r = _rel()
    parts = (col(r, "a"),)
    s1, s2 = _sum(r, "s1", parts), _sum(r, "s2", parts)
    lower = Window((s1,), parts, (), r)
    proj = Project(r.output + (s1.to_attribute(),), lower)
    upper = Window((s2,), parts, (), proj)
    out = CollapseWindow()(upper)
    assert out == Project(proj.project_list + (s2.to_attribute(),), Window((s1, s2), parts, (), r))
    # the upper window reads the lower one's column: not collapsed
    dependent = Alias(WindowExpression(AggregateExpression(Sum(s1.to_attribute())),
                                       s2.child.window_spec), "s3")
    upper2 = Window((dependent,), parts, (), lower)
    assert CollapseWindow()(upper2) is upper2
    # other partitioning: not collapsed
    other = Window((_sum(r, "s4", (col(r, "b"),)),), (col(r, "b"),), (), lower)
    assert CollapseWindow()(other) is other


def test_transpose_puts_the_narrower_partitioning_below():
    r = _rel()
    narrow, wide = (col(r, "a"),), (col(r, "a"), col(r, "b"))
    s_wide, s_narrow = _sum(r, "sw", wide), _sum(r, "sn", narrow)
    lower = Window((s_wide,), wide, (), r)
    upper = Window((s_narrow,), narrow, (), lower)
    out = TransposeWindow()(upper)
    assert out == Project(upper.output, Window((s_wide,), wide, (), Window((s_narrow,), narrow, (), r)))
    assert TransposeWindow()(Window((s_wide,), wide, (), Window((s_narrow,), narrow, (), r))) \
        == Window((s_wide,), wide, (), Window((s_narrow,), narrow, (), r))


def test_filter_on_partition_columns_goes_below_the_window():
    r = _rel()
    parts = (col(r, "a"),)
    s = _sum(r, "s", parts)
    w = Window((s,), parts, (), r)
    on_part = EqualTo(col(r, "a"), lit(1))
    on_result = GreaterThan(s.to_attribute(), lit(2, T.LONG))
    on_other = LessThan(col(r, "b"), lit(3))
    plan = Filter(And(And(on_part, on_result), on_other), w)
    out = PushPredicateThroughNonJoin()(plan)
    assert out == Filter(And(on_result, on_other), Window((s,), parts, (), Filter(on_part, r)))
    only_other = Filter(on_other, w)
    assert PushPredicateThroughNonJoin()(only_other) is only_other


def test_column_pruning_drops_unread_window_expressions():
    r = _rel()
    parts = (col(r, "a"),)
    s1, s2 = _sum(r, "s1", parts), _sum(r, "s2", parts)
    w = Window((s1, s2), parts, (), r)
    out = ColumnPruning()(Project((col(r, "a"), s2.to_attribute()), w))
    assert isinstance(out, Project) and isinstance(out.child, Window)
    assert out.child.window_expressions == (s2,)
    none_read = ColumnPruning()(Project((col(r, "a"),), w))
    assert not none_read.exists(lambda n: isinstance(n, Window))


def test_infer_window_group_limit():
    r = _rel()
    parts, order = (col(r, "a"),), (SortOrder(col(r, "b")),)
    rank = _ranking(Rank((col(r, "b"),)), "rk", parts, order)
    w = Window((rank,), parts, order, r)
    conf = SQLConf()
    out = InferWindowGroupLimit().apply(Filter(LessThanOrEqual(rank.to_attribute(), lit(2)), w), conf)
    assert out == Filter(LessThanOrEqual(rank.to_attribute(), lit(2)),
                         Window((rank,), parts, order,
                                WindowGroupLimit(parts, order, rank.child.window_function, 2, r)))
    # ``rk < 3`` is the same limit, ``rk = 1`` a limit of 1; the smallest wins
    both = Filter(And(LessThan(rank.to_attribute(), lit(3)), EqualTo(rank.to_attribute(), lit(1))), w)
    assert InferWindowGroupLimit().apply(both, conf).child.child.limit == 1
    # a row_number over the whole input becomes a top-n
    rn = _ranking(RowNumber(), "rn", (), order)
    top = Filter(LessThan(rn.to_attribute(), lit(3)), Window((rn,), (), order, r))
    assert InferWindowGroupLimit().apply(top, conf).child.child == Limit(lit(2), Sort(order, True, r))
    # a limit above the threshold, or the rule switched off: unchanged
    conf.set(WINDOW_GROUP_LIMIT_THRESHOLD.key, "1")
    big = Filter(LessThanOrEqual(rank.to_attribute(), lit(2)), w)
    assert InferWindowGroupLimit().apply(big, conf) is big
    small = Filter(EqualTo(rank.to_attribute(), lit(1)), w)
    assert InferWindowGroupLimit().apply(small, conf) is not small
    conf.set(WINDOW_GROUP_LIMIT_THRESHOLD.key, "-1")
    assert InferWindowGroupLimit().apply(small, conf) is small


def test_first_over_a_leading_rows_frame_becomes_nth_value():
    from ember.expressions.aggregates import First
    from ember.expressions.windows import NthValue
    from ember.optimizer.rules.optimize_window_functions import OptimizeWindowFunctions

    r = _rel()
    order = (SortOrder(col(r, "b")),)
    spec = WindowSpecDefinition((), order, rows_frame(UnboundedPreceding(), CurrentRow()))
    first = Alias(WindowExpression(AggregateExpression(First(col(r, "c"), True)), spec), "f")
    out = OptimizeWindowFunctions()(Window((first,), (), order, r))
    (e,) = out.window_expressions
    assert e.child.window_function == NthValue(col(r, "c"), lit(1), True)
    assert e.to_attribute() == first.to_attribute()
    # a RANGE frame (peers count as the frame's first row) is left alone
    ranged = WindowSpecDefinition((), order, range_frame(UnboundedPreceding(), CurrentRow()))
    w = Window((Alias(WindowExpression(AggregateExpression(First(col(r, "c"))), ranged), "g"),),
               (), order, r)
    assert OptimizeWindowFunctions()(w) is w


def test_constant_partition_expressions_are_dropped():
    from ember.optimizer.rules.eliminate_window_partitions import EliminateWindowPartitions

    r = _rel()
    parts = (lit(1), col(r, "a"))
    s = _sum(r, "s", parts)
    out = EliminateWindowPartitions()(Window((s,), parts, (), r))
    assert out.partition_spec == (col(r, "a"),)
    assert out.window_expressions[0].child.window_spec.partition_spec == (col(r, "a"),)
    assert out.window_expressions[0].to_attribute() == s.to_attribute()
