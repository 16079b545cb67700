"""ReorderJoin, exactly as Spark's: flattenJoin examples, createOrderedJoin
examples, and the crossJoin-of-two-ranges example."""

from __future__ import annotations

from collections import Counter

import pyarrow as pa

from ember import types as T
from ember.expressions.base import AttributeReference, Literal
from ember.optimizer.rules.reorder_join import ReorderJoin, create_ordered_join
from ember.plans.logical.dsl import (
    and_,
    attr,
    col,
    eq,
    gt,
    lit,
    neq,
    relation,
    row_number,
    table,
)
from ember.plans.logical.join_type import JoinHint, JoinType
from ember.plans.logical.nodes import Filter, Join, LocalRelation, Project
from ember.plans.logical.patterns import flatten_join

INNER, CROSS = JoinType.INNER, JoinType.CROSS


def _strip_ids(s: str) -> str:
    import re

    return re.sub(r"#\d+L?", "", s)


# -- flattenJoin: the six examples of the seed ------------------------------------------------


def test_flatten_example1_one_cross_join():
    t1 = table("t1")
    plan = t1.join(t1, CROSS)
    assert plan.tree_string() == (
        "'Join Cross\n:- 'UnresolvedRelation t1\n+- 'UnresolvedRelation t1\n")
    plans, conditions = flatten_join(plan)
    assert len(plans) == 2 and len(conditions) == 0
    assert plans == [(t1, CROSS), (t1, CROSS)]


def test_flatten_example2_inner_join_with_filter():
    t1, t2 = table("t1"), table("t2")
    plan = t1.join(t2).where(eq(col("t1"), col("t2")))
    plans, conditions = flatten_join(plan)
    assert len(plans) == 2 and len(conditions) == 1


def test_flatten_example3_inner_and_cross_with_compound_filter():
    t1, t2 = table("t1"), table("t2")
    plan = t1.join(t1, CROSS).join(t2).where(
        and_(eq(col("t2.id"), col("t1.id")), gt(col("t1.id"), 10)))
    plans, conditions = flatten_join(plan)
    assert len(plans) == 3 and len(conditions) == 2
    # the bottom-left item inherits the type of the lowest join above it
    assert [jt for _, jt in plans] == [CROSS, CROSS, INNER]


def _example4_base():
    t1, t2, t3 = table("t1"), table("t2"), table("t3")
    return t1, t2, t3


def test_flatten_example4_four_plans_three_conditions():
    t1, t2, t3 = _example4_base()
    plan = (t1.join(t1, CROSS).join(t2)
            .where(and_(eq(col("t2.id"), col("t1.id")), gt(col("t1.id"), 10)))
            .join(t3.select(col("*")))
            .where(eq(col("t3.id"), col("t1.id"))))
    plans, conditions = flatten_join(plan)
    assert len(plans) == 4 and len(conditions) == 3


def test_flatten_example5_project_stops_flattening():
    t1, t2, t3 = _example4_base()
    plan = (t1.join(t1, CROSS).select(col("*")).join(t2)
            .where(and_(eq(col("t2.id"), col("t1.id")), gt(col("t1.id"), 10)))
            .join(t3.select(col("*")))
            .where(eq(col("t3.id"), col("t1.id"))))
    plans, conditions = flatten_join(plan)
    assert len(plans) == 3 and len(conditions) == 3  # one item less: the Project
    assert isinstance(plans[0][0], Project)


def test_flatten_example6_join_on_right_side_not_considered():
    t1, t2 = table("t1"), table("t2")
    rhs = t1.join(t2).where(and_(eq(col("t2.id"), col("t1.id")), gt(col("t1.id"), 10)))
    plan = t1.join(rhs, CROSS).join(t2).where(
        and_(eq(col("t2.id"), col("t1.id")), gt(col("t1.id"), 10)))
    plans, conditions = flatten_join(plan)
    assert len(plans) == 3 and len(conditions) == 2
    assert plans[1] == (rhs, CROSS)


def test_flatten_stops_at_hinted_join():
    t1, t2, t3 = table("t1"), table("t2"), table("t3")
    hinted = Join(t1, t2, INNER, None, JoinHint(right=("BROADCAST",)))
    plans, _ = flatten_join(Join(hinted, t3, INNER, eq(col("a"), col("b"))))
    assert [p for p, _ in plans] == [hinted, t3]


# -- createOrderedJoin ------------------------------------------------------------------------


def test_create_ordered_join_two_plans_unevaluable_condition_goes_to_filter():
    cond1 = eq(Literal("a", T.STRING), Literal("b", T.STRING))
    cond2 = eq(row_number(), lit(2))
    cond3 = Literal(True, T.BOOLEAN)
    t1, t2 = table("t1"), table("t2")
    plan = create_ordered_join([(t1, INNER), (t2, CROSS)], [cond1, cond2, cond3])
    assert plan.tree_string() == (
        "'Filter (row_number() = 2)\n"
        "+- 'Join Cross, ((a = b) AND true)\n"
        "   :- 'UnresolvedRelation t1\n"
        "   +- 'UnresolvedRelation t2\n")


def test_create_ordered_join_four_unresolved_plans_mixed_inner_cross():
    t1_id = AttributeReference("id", T.LONG, attr_qualifier=("t1",))
    t2_id = AttributeReference("id", T.LONG, attr_qualifier=("t2",))
    t4_id = AttributeReference("id", T.LONG, attr_qualifier=("t4",))
    cond1 = eq(t1_id, t2_id)
    cond2 = eq(row_number(), lit(2))
    cond3 = Literal(True, T.BOOLEAN)
    cond4 = eq(t4_id, t1_id)
    t1, t2, t3, t4 = table("t1"), table("t2"), table("t3"), table("t4")
    plan = create_ordered_join([(t1, INNER), (t2, INNER), (t3, CROSS), (t4, INNER)],
                               [cond1, cond2, cond3, cond4])
    # the literal quirk: `row_number() = 2` / `true` "connect" any pair, so t2 is taken next
    # (under `true`), then t3 (cross, nothing can go in), then t4 under both equalities
    assert plan == Filter(cond2, Join(Join(Join(t1, t2, INNER, cond3), t3, CROSS, None), t4,
                                      INNER, and_(cond1, cond4)))
    assert _strip_ids(plan.tree_string()) == (
        "'Filter (row_number() = 2)\n"
        "+- 'Join Inner, ((id = id) AND (id = id))\n"
        "   :- 'Join Cross\n"
        "   :  :- 'Join Inner, true\n"
        "   :  :  :- 'UnresolvedRelation t1\n"
        "   :  :  +- 'UnresolvedRelation t2\n"
        "   :  +- 'UnresolvedRelation t3\n"
        "   +- 'UnresolvedRelation t4\n")


def _seed_p_plans():
    from ember.expressions.arithmetic import Multiply
    from ember.expressions.base import Alias
    from ember.expressions.cast import Cast

    r1 = relation("t1", id="bigint", a="bigint", b="string")
    p1 = Project((attr(r1, "id"),),
                 Filter(neq(attr(r1, "id"), Cast(lit(0), T.LONG)), r1))
    p2 = relation("t2", id="bigint", b="bigint")
    r3 = relation("t3", id="bigint", a="string")
    r3_id = attr(r3, "id")
    p3 = Project((r3_id, Alias(Multiply(r3_id, Cast(lit(2), T.LONG)), "a")),
                 Filter(gt(r3_id, Cast(lit(0), T.LONG)), r3))
    return p1, p2, p3


def test_create_ordered_join_four_resolved_plans_exact_tree():
    p1, p2, p3 = _seed_p_plans()
    c1 = eq(p1.output[0], p3.output[0])
    c2 = eq(p2.output[1], p3.output[1])
    plan = create_ordered_join([(p1, CROSS), (p1, CROSS), (p2, INNER), (p3, INNER)], [c1, c2])
    expected = Join(Join(Join(p1, p3, INNER, c1), p2, INNER, c2), p1, CROSS, None)
    assert plan == expected
    # the same p1 object twice: only the chosen item is dropped (identity), the other p1 stays
    assert plan.right is p1 and plan.left.left.left is p1
    assert _strip_ids(plan.tree_string()) == (
        "Join Cross\n"
        ":- Join Inner, (b = a)\n"
        ":  :- Join Inner, (id = id)\n"
        ":  :  :- Project [id]\n"
        ":  :  :  +- Filter NOT (id = cast(0 as bigint))\n"
        ":  :  :     +- LocalRelation [id, a, b]\n"
        ":  :  +- Project [id, (id * cast(2 as bigint)) AS a]\n"
        ":  :     +- Filter (id > cast(0 as bigint))\n"
        ":  :        +- LocalRelation [id, a]\n"
        ":  +- LocalRelation [id, b]\n"
        "+- Project [id]\n"
        "   +- Filter NOT (id = cast(0 as bigint))\n"
        "      +- LocalRelation [id, a, b]\n")


def test_reorder_join_restores_output_order_with_project():
    # Spark's createOrderedJoin: [A, B, C] with A.x = C.x, B.y = C.y -> (A join C) join B
    a = relation("a", x="int")
    b = relation("b", y="int")
    c = relation("c", x="int", y="int")
    ax, by, cx, cy = attr(a, "x"), attr(b, "y"), attr(c, "x"), attr(c, "y")
    plan = a.join(b).join(c).where(and_(eq(ax, cx), eq(by, cy)))
    out = ReorderJoin()(plan)
    assert out == Project(plan.output, Join(Join(a, c, INNER, eq(ax, cx)), b, INNER, eq(by, cy)))


def test_reorder_join_does_not_fire_for_two_items_or_no_conditions():
    a, b, c = relation("a", x="int"), relation("b", y="int"), relation("c", z="int")
    two = a.join(b).where(eq(attr(a, "x"), attr(b, "y")))
    assert ReorderJoin()(two) is two
    no_conds = a.join(b, CROSS).join(c, CROSS)
    assert ReorderJoin()(no_conds) is no_conds


def test_reorder_join_keeps_join_types_and_fires_recursively_inside_items():
    a, b, c, d = (relation(n, **{n + "k": "int"}) for n in "abcd")
    ak, bk, ck, dk = attr(a, "ak"), attr(b, "bk"), attr(c, "ck"), attr(d, "dk")
    inner_tree = b.join(c).join(d).where(and_(eq(bk, dk), eq(ck, dk)))
    # the inner tree is on the RIGHT side: an item of the outer tree, reordered on its own
    plan = a.join(inner_tree, CROSS).join(relation("e", ek="int")).where(eq(ak, bk))
    out = ReorderJoin()(plan)
    found = out.find(lambda n: isinstance(n, Join) and n.condition == eq(bk, dk))
    assert found is not None and found.left == b and found.right == d


# -- the crossJoin-of-two-ranges example ------------------------------------------------------


def _range_plan(n: int) -> LocalRelation:
    # A few rows stand for the seed's ranges here: ReorderJoin sees only the plan's shape.
    # test_cross_join_of_two_ranges_through_the_dataframe_api uses session.range at the seed's sizes.
    attr_ = AttributeReference("id", T.LONG, False)
    return LocalRelation((attr_,), pa.table({"id": pa.array(range(n), pa.int64())}))


def test_cross_join_of_two_ranges_inner_join_moves_below_cross_join():
    below_broadcast = _range_plan(20)
    large = _range_plan(40)
    tiny = relation("tiny", [(1,), (2,), (3,), (4,), (5,)], id="int")
    from ember.expressions.cast import Cast

    cond = eq(below_broadcast.output[0], Cast(tiny.output[0], T.LONG))
    # the pre-optimized plan shape of the seed (after PushDownPredicate/PushPredicateThroughJoin)
    pre = Join(Join(below_broadcast, large, CROSS, None), tiny, INNER, cond)
    out = ReorderJoin()(pre)
    assert isinstance(out, Project)  # column order restored: belowBroadcast, large, tiny
    assert [a.id for a in out.output] == [a.id for a in pre.output]
    assert out.child == Join(Join(below_broadcast, tiny, INNER, cond), large, CROSS, None)
    from tests.local_run import run_plan

    rows = lambda p: Counter(map(tuple, run_plan(p).to_pylist()))  # noqa: E731
    assert rows(out) == rows(pre)


def test_cross_join_of_two_ranges_through_the_dataframe_api():
    import ember

    s = ember.Session()
    threshold = 10 * 1024 * 1024  # spark.sql.autoBroadcastJoinThreshold; Range is lazy
    below, large = s.range(threshold - 1), s.range(2 * (threshold - 1))
    tiny = s.createDataFrame([(1,), (2,), (3,), (4,), (5,)], ["id"])
    q = below.crossJoin(large).join(tiny).where(below["id"] == tiny["id"])
    analyzed = q._session._analyze(q._plan) if hasattr(q._session, "_analyze") else None
    if analyzed is None:
        from ember.query_execution import QueryExecution

        analyzed = QueryExecution(s, q._plan).analyzed
    from ember.optimizer.rules.push_down_predicates import PushDownPredicates
    from tests.optimizer.dsl import fixed_point

    pre = fixed_point(PushDownPredicates(), analyzed)
    out = ReorderJoin()(pre)
    cross = out.find(lambda n: isinstance(n, Join) and n.join_type is CROSS)
    assert cross is not None
    inner = cross.left
    while not (isinstance(inner, Join) and inner.join_type is INNER):
        inner = inner.children[0]
    assert inner.condition is not None
    assert tiny._plan.output[0].id in inner.output_set
    assert large._plan.output[0].id not in inner.output_set
    assert "Range (0, 20971518" in cross.right.simple_string()
