"""JoinSelection over hand-built logical plans with injected sizes."""

from __future__ import annotations

import pytest

from ember import types as T
from ember.conf import SQLConf
from ember.expressions.base import AttributeReference
from ember.expressions.arithmetic import Divide
from ember.expressions.cast import Cast
from ember.expressions.predicates import (
    And,
    EqualNullSafe,
    EqualTo,
    GreaterThan,
    GreaterThanOrEqual,
    LessThan,
    LessThanOrEqual,
    Not,
)
from ember.physical.nodes import (
    BroadcastHashJoinExec,
    BroadcastNestedLoopJoinExec,
    BuildSide,
    CartesianProductExec,
    RangeJoinExec,
    ShuffledHashJoinExec,
    SortMergeJoinExec,
)
from ember.planning import plan_query
from ember.planning.join_selection import JoinSelection
from ember.plans.logical.join_type import JoinHint, JoinType
from ember.plans.logical.nodes import Join, LocalRelation
from ember.plans.logical.patterns import null_aware_anti_join_condition

MB = 1024 * 1024
J = JoinType
L, R = BuildSide.LEFT, BuildSide.RIGHT


def _rel(name: str) -> LocalRelation:
    return LocalRelation((AttributeReference(name, T.LongType()),
                          AttributeReference(name + "_v", T.LongType())))


def _plan(jt: JoinType, lsize: int, rsize: int, *, cond: str = "eq", hint: JoinHint = JoinHint(),
          conf: dict | None = None):
    left, right = _rel("a"), _rel("b")
    la, ra = left.output[0], right.output[0]
    condition = {"eq": EqualTo(la, ra), "nse": EqualNullSafe(la, ra), "lt": LessThan(la, ra),
                 "none": None, "naaj": null_aware_anti_join_condition(la, ra)}[cond]
    ex = AttributeReference("exists", T.BooleanType(), False) if jt is J.EXISTENCE else None
    j = Join(left, right, jt, condition, hint, ex)
    sizes = {id(left): lsize, id(right): rsize}
    sel = JoinSelection(SQLConf(conf or {}), lambda p: sizes[id(p)])
    return sel.plan(j, lambda p: plan_query(p, SQLConf(), size_of=lambda _: 1))


def _shape(p) -> tuple:
    name = type(p).__name__.removesuffix("Exec")
    side = getattr(p, "build_side", None)
    return (name, None if side is None else side.value, str(p.join_type))


ALL = [J.INNER, J.CROSS, J.LEFT_OUTER, J.RIGHT_OUTER, J.FULL_OUTER, J.LEFT_SEMI, J.LEFT_ANTI,
       J.EXISTENCE]
SMALL, BIG = 1 * MB, 100 * MB


# -- no hints, default configuration ------------------------------------------------------------

@pytest.mark.parametrize("jt,lsize,rsize,expected", [
    (J.INNER, SMALL, BIG, ("BroadcastHashJoin", "BuildLeft")),
    (J.INNER, BIG, SMALL, ("BroadcastHashJoin", "BuildRight")),
    (J.INNER, SMALL, SMALL, ("BroadcastHashJoin", "BuildRight")),      # ties build right
    (J.CROSS, SMALL, BIG, ("BroadcastHashJoin", "BuildLeft")),
    (J.LEFT_OUTER, SMALL, BIG, ("SortMergeJoin", None)),               # cannot build left
    (J.LEFT_OUTER, BIG, SMALL, ("BroadcastHashJoin", "BuildRight")),
    (J.RIGHT_OUTER, SMALL, BIG, ("BroadcastHashJoin", "BuildLeft")),
    (J.RIGHT_OUTER, BIG, SMALL, ("SortMergeJoin", None)),
    (J.FULL_OUTER, SMALL, SMALL, ("SortMergeJoin", None)),             # BHJ never full outer
    (J.LEFT_SEMI, BIG, SMALL, ("BroadcastHashJoin", "BuildRight")),
    (J.LEFT_SEMI, SMALL, BIG, ("SortMergeJoin", None)),
    (J.LEFT_ANTI, BIG, SMALL, ("BroadcastHashJoin", "BuildRight")),
    (J.EXISTENCE, BIG, SMALL, ("BroadcastHashJoin", "BuildRight")),
    (J.INNER, BIG, BIG, ("SortMergeJoin", None)),
])
def test_equi_default(jt, lsize, rsize, expected):
    p = _plan(jt, lsize, rsize)
    assert _shape(p)[:2] == expected
    assert str(p.join_type) == str(jt)


@pytest.mark.parametrize("jt", ALL)
def test_equi_broadcast_off_is_sort_merge(jt):
    p = _plan(jt, SMALL, BIG, conf={"spark.sql.autoBroadcastJoinThreshold": "-1"})
    assert isinstance(p, SortMergeJoinExec)


@pytest.mark.parametrize("jt,lsize,rsize,expected", [
    (J.INNER, SMALL, BIG, ("ShuffledHashJoin", "BuildLeft")),
    (J.INNER, BIG, SMALL, ("ShuffledHashJoin", "BuildRight")),
    (J.INNER, BIG, 2 * BIG // 3, ("SortMergeJoin", None)),             # not 3x smaller
    (J.LEFT_OUTER, SMALL, BIG, ("ShuffledHashJoin", "BuildLeft")),      # build-side outer
    (J.FULL_OUTER, BIG, SMALL, ("ShuffledHashJoin", "BuildRight")),
    (J.LEFT_SEMI, SMALL, BIG, ("SortMergeJoin", None)),                # cannot build left
    (J.LEFT_ANTI, BIG, SMALL, ("ShuffledHashJoin", "BuildRight")),
])
def test_equi_shuffled_hash_by_size(jt, lsize, rsize, expected):
    # threshold 2MB -> local hash map limit 2MB * 200 = 400MB; BHJ impossible above 2MB
    conf = {"spark.sql.autoBroadcastJoinThreshold": str(MB // 2),
            "spark.sql.join.preferSortMergeJoin": "false"}
    assert _shape(_plan(jt, lsize, rsize, conf=conf))[:2] == expected


def test_local_hash_map_limit_uses_shuffle_partitions():
    conf = {"spark.sql.autoBroadcastJoinThreshold": str(MB // 2),
            "spark.sql.join.preferSortMergeJoin": "false", "spark.sql.shuffle.partitions": "2"}
    # 1MB is not < 0.5MB * 2
    assert isinstance(_plan(J.INNER, SMALL, BIG, conf=conf), SortMergeJoinExec)


def test_shuffled_hash_join_factor():
    conf = {"spark.sql.autoBroadcastJoinThreshold": str(MB // 2),
            "spark.sql.join.preferSortMergeJoin": "false", "spark.sql.shuffledHashJoinFactor": "2"}
    assert isinstance(_plan(J.INNER, BIG, 2 * BIG // 3 - 1, conf=conf), SortMergeJoinExec)
    assert isinstance(_plan(J.INNER, BIG, BIG // 2, conf=conf), ShuffledHashJoinExec)


@pytest.mark.parametrize("jt", [J.INNER, J.LEFT_OUTER, J.FULL_OUTER, J.LEFT_ANTI])
def test_force_shuffled_hash_join(jt):
    conf = {"spark.sql.autoBroadcastJoinThreshold": "-1",
            "ember.join.forceApplyShuffledHashJoin": "true"}
    p = _plan(jt, BIG, SMALL, conf=conf)
    assert isinstance(p, ShuffledHashJoinExec) and p.build_side is R


# -- hints --------------------------------------------------------------------------------------

@pytest.mark.parametrize("jt,hint,expected", [
    (J.INNER, JoinHint(left=("BROADCAST",)), ("BroadcastHashJoin", "BuildLeft")),
    (J.INNER, JoinHint(left=("BROADCAST",), right=("BROADCAST",)), ("BroadcastHashJoin", "BuildRight")),
    (J.LEFT_OUTER, JoinHint(left=("BROADCAST",)), ("SortMergeJoin", None)),   # unsupported side
    (J.INNER, JoinHint(left=("SHUFFLE_MERGE",)), ("SortMergeJoin", None)),
    (J.INNER, JoinHint(left=("SHUFFLE_HASH",)), ("ShuffledHashJoin", "BuildLeft")),
    (J.FULL_OUTER, JoinHint(right=("SHUFFLE_HASH",)), ("ShuffledHashJoin", "BuildRight")),
    (J.LEFT_SEMI, JoinHint(left=("SHUFFLE_HASH",)), ("SortMergeJoin", None)),
    (J.INNER, JoinHint(left=("SHUFFLE_REPLICATE_NL",)), ("CartesianProduct", None)),
    (J.LEFT_OUTER, JoinHint(left=("SHUFFLE_REPLICATE_NL",)), ("SortMergeJoin", None)),
    # precedence BROADCAST > MERGE > SHUFFLE_HASH > SHUFFLE_REPLICATE_NL
    (J.INNER, JoinHint(left=("SHUFFLE_MERGE",), right=("BROADCAST",)), ("BroadcastHashJoin", "BuildRight")),
    (J.INNER, JoinHint(left=("SHUFFLE_HASH",), right=("SHUFFLE_MERGE",)), ("SortMergeJoin", None)),
    (J.INNER, JoinHint(left=("SHUFFLE_REPLICATE_NL",), right=("SHUFFLE_HASH",)), ("ShuffledHashJoin", "BuildRight")),
])
def test_equi_hints(jt, hint, expected):
    # both sides big: hints alone decide
    assert _shape(_plan(jt, BIG, BIG, hint=hint))[:2] == expected


def test_hint_broadcast_ignores_threshold():
    p = _plan(J.INNER, BIG, BIG, hint=JoinHint(right=("BROADCAST",)),
              conf={"spark.sql.autoBroadcastJoinThreshold": "-1"})
    assert isinstance(p, BroadcastHashJoinExec) and p.build_side is R


def test_null_safe_keys():
    p = _plan(J.INNER, BIG, SMALL, cond="nse")
    assert isinstance(p, BroadcastHashJoinExec)
    assert [k.simple_string() for k in p.left_keys] == [
        f"coalesce({p.left.output[0].simple_string()}, 0)",
        f"isnull({p.left.output[0].simple_string()})"]


def test_non_orderable_keys_fall_back():
    m = T.MapType(T.StringType(), T.LongType()) if hasattr(T, "MapType") else None
    if m is None:
        pytest.skip("Ember has no MAP type, the only key type Spark cannot order; JoinSelection's "
                    "hash-only fallback is unreachable until MAP exists")
    left = LocalRelation((AttributeReference("a", m),))
    right = LocalRelation((AttributeReference("b", m),))
    j = Join(left, right, J.INNER, EqualTo(left.output[0], right.output[0]))
    sel = JoinSelection(SQLConf({"spark.sql.autoBroadcastJoinThreshold": "-1"}), lambda p: BIG)
    assert isinstance(sel.plan(j, lambda p: plan_query(p, SQLConf(), size_of=lambda _: 1)),
                      CartesianProductExec)


# -- null-aware anti join -------------------------------------------------------------------------

@pytest.mark.parametrize("threshold", ["-1", "10485760"])
def test_null_aware_anti_join(threshold):
    p = _plan(J.LEFT_ANTI, SMALL, BIG, cond="naaj",
              conf={"spark.sql.autoBroadcastJoinThreshold": threshold})
    assert isinstance(p, BroadcastHashJoinExec)
    assert p.is_null_aware_anti_join and p.build_side is R and p.condition is None


def test_null_aware_anti_join_disabled():
    p = _plan(J.LEFT_ANTI, BIG, SMALL, cond="naaj",
              conf={"spark.sql.optimizeNullAwareAntiJoin": "false"})
    assert isinstance(p, BroadcastNestedLoopJoinExec) and p.build_side is R


# -- non-equi joins -------------------------------------------------------------------------------

@pytest.mark.parametrize("jt,lsize,rsize,conf,expected", [
    (J.INNER, SMALL, BIG, {}, ("BroadcastNestedLoopJoin", "BuildLeft")),
    (J.INNER, SMALL, SMALL, {}, ("BroadcastNestedLoopJoin", "BuildRight")),
    (J.LEFT_OUTER, SMALL, SMALL, {}, ("BroadcastNestedLoopJoin", "BuildRight")),
    (J.LEFT_OUTER, SMALL, BIG, {}, ("BroadcastNestedLoopJoin", "BuildLeft")),  # slow path
    (J.RIGHT_OUTER, SMALL, SMALL, {}, ("BroadcastNestedLoopJoin", "BuildLeft")),
    (J.FULL_OUTER, BIG, SMALL, {}, ("BroadcastNestedLoopJoin", "BuildRight")),
    (J.INNER, BIG, BIG, {}, ("CartesianProduct", None)),
    (J.CROSS, BIG, BIG, {}, ("CartesianProduct", None)),
    (J.LEFT_OUTER, BIG, BIG, {}, ("BroadcastNestedLoopJoin", "BuildRight")),
    (J.RIGHT_OUTER, BIG, BIG, {}, ("BroadcastNestedLoopJoin", "BuildLeft")),
    (J.FULL_OUTER, SMALL * 50, BIG, {}, ("BroadcastNestedLoopJoin", "BuildLeft")),
    (J.LEFT_SEMI, BIG, BIG, {}, ("BroadcastNestedLoopJoin", "BuildRight")),
    (J.EXISTENCE, BIG, BIG, {}, ("BroadcastNestedLoopJoin", "BuildRight")),
    (J.INNER, SMALL, SMALL, {"spark.sql.autoBroadcastJoinThreshold": "-1"}, ("CartesianProduct", None)),
])
def test_non_equi(jt, lsize, rsize, conf, expected):
    assert _shape(_plan(jt, lsize, rsize, cond="lt", conf=conf))[:2] == expected


def test_non_equi_hints():
    p = _plan(J.LEFT_OUTER, BIG, BIG, cond="lt", hint=JoinHint(left=("BROADCAST",)))
    assert isinstance(p, BroadcastNestedLoopJoinExec) and p.build_side is L
    p = _plan(J.INNER, SMALL, SMALL, cond="lt", hint=JoinHint(left=("SHUFFLE_REPLICATE_NL",)))
    assert isinstance(p, CartesianProductExec)
    # MERGE / SHUFFLE_HASH need keys: ignored
    p = _plan(J.INNER, SMALL, BIG, cond="lt", hint=JoinHint(left=("SHUFFLE_MERGE",)))
    assert isinstance(p, BroadcastNestedLoopJoinExec) and p.build_side is L


def test_no_condition_cross():
    p = _plan(J.CROSS, SMALL, BIG, cond="none")
    assert isinstance(p, BroadcastNestedLoopJoinExec) and p.build_side is L
    assert p.simple_string() == "BroadcastNestedLoopJoin BuildLeft, Cross"


# -- range joins (beyond Spark) -------------------------------------------------------------------

def _range_join(cond_of, lsize=SMALL, rsize=SMALL, jt=J.INNER, conf=None, types=None):
    """JoinSelection's choice for ``cond_of(left attrs, right attrs)``."""
    lt, rt = types or (T.LongType(), T.LongType())
    left = LocalRelation(tuple(AttributeReference(n, lt) for n in ("x", "y", "z")))
    right = LocalRelation(tuple(AttributeReference(n, rt) for n in ("lo", "hi", "w")))
    ex = AttributeReference("exists", T.BooleanType(), False) if jt is J.EXISTENCE else None
    j = Join(left, right, jt, cond_of(left.output, right.output), JoinHint(), ex)
    sizes = {id(left): lsize, id(right): rsize}
    sel = JoinSelection(SQLConf(conf or {}), lambda p: sizes[id(p)])
    return sel.plan(j, lambda p: plan_query(p, SQLConf(), size_of=lambda _: 1))


def _point(lo, hi):
    return And(GreaterThanOrEqual(lo[0], hi[0]), LessThanOrEqual(lo[0], hi[1]))


def test_range_join_replaces_nested_loop_and_cartesian():
    p = _range_join(_point, jt=J.LEFT_OUTER)
    assert type(p) is RangeJoinExec and p.build_side is R and p.join_type is J.LEFT_OUTER
    assert p.simple_string().startswith("RangeJoin [BroadcastNestedLoopJoin] BuildRight, "
                                        "LeftOuter, ((x#")
    p = _range_join(_point, BIG, BIG * 2)
    assert type(p) is RangeJoinExec and p.replaces == "CartesianProduct" and p.build_side is L
    assert p.simple_string().startswith("RangeJoin [CartesianProduct] BuildLeft, Inner")
    # overlap (strict), a band over different columns, a residual conjunct that cannot fail first
    for cond in (lambda l, r: And(LessThan(l[0], r[1]), LessThan(r[0], l[1])),
                 lambda l, r: And(GreaterThan(l[0], r[0]), LessThanOrEqual(l[1], r[1])),
                 lambda l, r: And(Not(EqualTo(l[2], r[2])), _point(l, r))):
        assert type(_range_join(cond)) is RangeJoinExec
    off = _range_join(_point, conf={"ember.join.rangeJoin.enabled": "false"})
    assert type(off) is BroadcastNestedLoopJoinExec


def test_range_join_needs_two_bounds_over_one_order():
    one_bound = lambda l, r: And(LessThan(l[0], r[0]), LessThan(l[1], r[1]))  # noqa: E731
    assert type(_range_join(one_bound)) is BroadcastNestedLoopJoinExec
    # doubles against longs, decimals: no common sort order of the values
    assert type(_range_join(_point, types=(T.DoubleType(), T.DoubleType()))) is RangeJoinExec
    assert type(_range_join(lambda l, r: And(GreaterThanOrEqual(l[0], r[0]), LessThanOrEqual(
        Cast(l[1], T.DoubleType()), Cast(r[1], T.DoubleType()))))) is BroadcastNestedLoopJoinExec
    dec = T.DecimalType(10, 2)
    assert type(_range_join(_point, types=(dec, dec))) is BroadcastNestedLoopJoinExec
    # a conjunct that may fail before a range conjunct is evaluated on pairs the range prunes
    fails_first = lambda l, r: And(GreaterThan(Divide(l[2], r[2]), l[1]), _point(l, r))  # noqa
    assert type(_range_join(fails_first)) is BroadcastNestedLoopJoinExec
    fails_last = lambda l, r: And(_point(l, r), GreaterThan(Divide(l[2], r[2]), l[1]))  # noqa
    assert type(_range_join(fails_last)) is RangeJoinExec
