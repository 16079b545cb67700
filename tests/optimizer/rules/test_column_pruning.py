"""ColumnPruning, and seed 001 (column pruning + inferred isnotnull filters pushed below a join)."""

from __future__ import annotations

import pytest

from ember import types as T
from ember.expressions.aggregates import AggregateExpression, Count, Max, Sum
from ember.expressions.base import Alias, AttributeReference, Literal, SortOrder
from ember.expressions.predicates import EqualTo, GreaterThan
from ember.optimizer.rule_executor import ONCE, Batch, FixedPoint, RuleExecutor
from ember.optimizer.rules.column_pruning import ColumnPruning
from ember.optimizer.rules.infer_filters import InferFiltersFromConstraints
from ember.optimizer.rules.push_down_predicates import PushDownPredicates
from ember.plans.logical.dsl import attr, relation
from ember.plans.logical.join_type import JoinType
from ember.plans.logical.nodes import (
    Aggregate,
    Distinct,
    Expand,
    Filter,
    Join,
    LocalRelation,
    Project,
    Sort,
    Union,
)

from ._pdp_util import norm, same_rows


def lit(v):
    return Literal(v, T.INT)


@pytest.fixture
def t():
    return relation("t", [(1, 1, "x"), (2, None, "y"), (None, 3, None), (4, 4, "z"), (2, 5, "y")],
                    a="int", b="int", c="string")


@pytest.fixture
def u():
    return relation("u", [(1, 1, "x"), (2, None, "y"), (None, 3, None), (5, 4, "w"), (2, 2, "q")],
                    x="int", y="int", z="string")


def _pipeline() -> RuleExecutor:
    """Spark's shape: operator optimization, Infer Filters once, operator optimization again."""
    ops = (PushDownPredicates(), ColumnPruning())
    return RuleExecutor([
        Batch("Operator Optimization before Inferring Filters", FixedPoint(100), ops),
        Batch("Infer Filters", ONCE, (InferFiltersFromConstraints(),)),
        Batch("Operator Optimization after Inferring Filters", FixedPoint(100), ops),
    ])


def test_seed_001_student_exam():
    student = relation("student", [("1", "ann", "20"), (None, "bob", "21"), ("3", "cy", None)],
                       ID="string", NAME="string", AGE="string")
    exam = relation("exam", [("c1", "g1", "90", "1"), ("c1", "g1", "80", None),
                             ("c2", "g2", "70", "3"), ("c3", "g3", "60", "9")],
                    CLASSID="string", GRADEID="string", SCORE="string", STUDENTID="string")
    join = Join(student, exam, JoinType.INNER,
                EqualTo(attr(student, "ID"), attr(exam, "STUDENTID")))
    plan = Project((attr(student, "NAME"), attr(exam, "SCORE")), join)
    out = _pipeline().execute(plan)
    assert norm(out) == (
        "Project [NAME, SCORE]\n"
        "+- Join Inner, (ID = STUDENTID)\n"
        "   :- Project [ID, NAME]\n"
        "   :  +- Filter isnotnull(ID)\n"
        "   :     +- LocalRelation [ID, NAME, AGE]\n"
        "   +- Project [SCORE, STUDENTID]\n"
        "      +- Filter isnotnull(STUDENTID)\n"
        "         +- LocalRelation [CLASSID, GRADEID, SCORE, STUDENTID]\n")
    assert out.output == plan.output
    assert same_rows(plan, out)


def test_spark_join_with_one_side_conditions(t, u):
    """select t.b, u.y from t join u on t.a = u.x and t.b > 1 and u.y < 3 (Spark 4 plan)."""
    a, b, x, y = attr(t, "a"), attr(t, "b"), attr(u, "x"), attr(u, "y")
    from ember.expressions.predicates import And, LessThan

    cond = And(And(EqualTo(a, x), GreaterThan(b, lit(1))), LessThan(y, lit(3)))
    plan = Project((b, y), Join(t, u, JoinType.INNER, cond))
    out = _pipeline().execute(plan)
    assert norm(out) == (
        "Project [b, y]\n"
        "+- Join Inner, (a = x)\n"
        "   :- Project [a, b]\n"
        "   :  +- Filter ((isnotnull(b) AND (b > 1)) AND isnotnull(a))\n"
        "   :     +- LocalRelation [a, b, c]\n"
        "   +- Project [x, y]\n"
        "      +- Filter ((isnotnull(y) AND (y < 3)) AND isnotnull(x))\n"
        "         +- LocalRelation [x, y, z]\n")
    assert same_rows(plan, out)


def test_project_over_project(t):
    a, b = attr(t, "a"), attr(t, "b")
    bb = Alias(GreaterThan(b, lit(1)), "bb")
    plan = Project((a,), Project((a, bb, attr(t, "c")), t))
    out = ColumnPruning()(plan)
    assert norm(out) == "Project [a]\n+- Project [a]\n   +- LocalRelation [a, b, c]\n"
    assert same_rows(plan, out)


def test_project_over_aggregate_prunes_outputs(t):
    a, b = attr(t, "a"), attr(t, "b")
    s = Alias(AggregateExpression(Sum(b)), "s")
    m = Alias(AggregateExpression(Max(b)), "m")
    plan = Project((s.to_attribute(),), Aggregate((a,), (a, s, m), t))
    out = ColumnPruning()(plan)
    # Spark 4: Aggregate [a], [sum(b) AS s] <- Project [a, b] (CollapseProject then drops the top)
    assert norm(out) == (
        "Project [s]\n"
        "+- Aggregate [a], [sum(b) AS s]\n"
        "   +- Project [a, b]\n"
        "      +- LocalRelation [a, b, c]\n")
    assert same_rows(plan, out)


def test_aggregate_child_pruned_to_nothing(t):
    cnt = Alias(AggregateExpression(Count((lit(1),))), "count(1)")
    plan = Aggregate((), (cnt,), t)
    out = ColumnPruning()(plan)
    assert norm(out) == ("Aggregate [], [count(1) AS count(1)]\n+- Project\n"
                         "   +- LocalRelation [a, b, c]\n")
    assert same_rows(plan, out)


def test_project_over_union(t, u):
    union = Union((t, u))
    a, _, c = union.output
    plan = Project((a, c), union)
    out = ColumnPruning()(plan)
    assert norm(out) == (
        "Project [a, c]\n"
        "+- Union false, false\n"
        "   :- Project [a, c]\n"
        "   :  +- LocalRelation [a, b, c]\n"
        "   +- Project [x, z]\n"
        "      +- LocalRelation [x, y, z]\n")
    assert same_rows(plan, out)


def test_left_semi_right_side_pruned(t, u):
    plan = Join(t, u, JoinType.LEFT_SEMI, EqualTo(attr(t, "a"), attr(u, "x")))
    out = ColumnPruning()(plan)
    assert norm(out.right) == "Project [x]\n+- LocalRelation [x, y, z]\n"
    assert out.left is t
    assert same_rows(plan, out)


def test_expand_pruned(t):
    a, b = attr(t, "a"), attr(t, "b")
    ea = AttributeReference("a", T.INT)
    eb = AttributeReference("b", T.INT)
    gid = AttributeReference("gid", T.INT, False)
    expand = Expand(((a, Literal(None, T.INT), lit(0)), (Literal(None, T.INT), b, lit(1))),
                    (ea, eb, gid), t)
    plan = Project((ea, gid), expand)
    out = ColumnPruning()(plan)
    assert norm(out) == (
        "Project [a, gid]\n"
        "+- Expand [[a, 0], [null, 1]], [a, gid]\n"
        "   +- Project [a]\n"
        "      +- LocalRelation [a, b, c]\n")
    assert same_rows(plan, out)


def test_project_over_filter_over_leaf_unchanged(t):
    plan = Project((attr(t, "a"),), Filter(GreaterThan(attr(t, "b"), lit(1)), t))
    assert ColumnPruning()(plan) is plan


def test_project_over_distinct_and_sort(t):
    a, b = attr(t, "a"), attr(t, "b")
    plan = Project((a,), Distinct(t))
    assert ColumnPruning()(plan) is plan
    plan = Project((a,), Sort((SortOrder(b, True, True),), True, t))
    out = ColumnPruning()(plan)
    assert norm(out) == (
        "Project [a]\n"
        "+- Sort [b ASC NULLS FIRST], true\n"
        "   +- Project [a, b]\n"
        "      +- LocalRelation [a, b, c]\n")
    assert same_rows(plan, out)


def test_project_over_join_prunes_both_sides(t, u):
    plan = Project((attr(t, "c"),), Join(t, u, JoinType.LEFT_OUTER,
                                          EqualTo(attr(t, "a"), attr(u, "x"))))
    out = ColumnPruning()(plan)
    assert norm(out) == (
        "Project [c]\n"
        "+- Join LeftOuter, (a = x)\n"
        "   :- Project [a, c]\n"
        "   :  +- LocalRelation [a, b, c]\n"
        "   +- Project [x]\n"
        "      +- LocalRelation [x, y, z]\n")
    assert same_rows(plan, out)
    assert ColumnPruning()(out) is out


def test_local_relation_never_pruned_itself(t):
    plan = Project((attr(t, "a"),), t)
    assert ColumnPruning()(plan) is plan
    assert isinstance(plan.child, LocalRelation)
