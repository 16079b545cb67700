"""Hash joins (LeftSemi / LeftAnti / ExistenceJoin, BuildRight) whose residual is one comparison
between a build column and a stream expression run on min / max bounds per key
(:mod:`ember.runtime.local.joins.residual_bounds`): same rows as the pair path (module flag off)
and as DuckDB's join of the same tables, for every comparison, both operand orders, every supported type,
NULL keys / build values / stream values, all-NULL groups, empty build, duplicates, batch size 2,
broadcast and shuffled, and a grace-spilled shuffled build."""

from __future__ import annotations

import datetime as dt
from decimal import Decimal

import numpy as np
import pyarrow as pa
import pytest

from ember import types as T
from ember.errors import ExecutionError
from ember.expressions.arithmetic import Add
from ember.expressions.base import AttributeReference, Literal
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
from ember.physical.nodes import BuildSide
from ember.plans.logical.join_type import JoinType
from ember.runtime.local.joins import residual_bounds as RB
from tests.runtime.joins.helpers import (
    Sides,
    assert_same_rows,
    attrs_of,
    logical_join,
    physical,
    reference,
    run,
)

J = JoinType
L, R = BuildSide.LEFT, BuildSide.RIGHT
JOIN_TYPES = (J.LEFT_SEMI, J.LEFT_ANTI, J.EXISTENCE)

# key groups of the build side: varied, all equal, all NULL, one NULL, single row; NULL keys;
# a key the stream never probes.  The stream probes every group with values below / at / between
# / above the bounds, NULL values, NULL keys and absent keys.
R_KEYS = [1, 1, 1, 2, 2, 3, 3, 4, 4, 5, None, None, 9, 1]
R_VALS = [5, 3, 5, 4, 4, None, None, 7, None, 2, 1, 9, 0, 4]
L_KEYS = [1, 1, 1, 1, 1, 2, 2, 2, 3, 3, 4, 4, 4, 5, 5, 5, 6, None, None, 1, 2, 4]
L_VALS = [2, 3, 4, 5, 6, 3, 4, 5, 1, None, 6, 7, 8, 1, 2, 3, 4, 5, None, None, None, 7]

STRS = ["", "a", "ab", "b", "z", "\u00e9", "\u00ff", "\U0001f600", "A", "zz"]


def _conv(kind: str, vals: list):
    """(SQL type, Arrow array) of ``vals`` mapped to ``kind``; the map is not monotone for
    strings / binary (ordering traps: multi-byte UTF-8, prefixes, case)."""
    def m(f):
        return [None if v is None else f(v) for v in vals]

    match kind:
        case "long":
            return T.LONG, pa.array(m(int), pa.int64())
        case "int":
            return T.INT, pa.array(m(lambda v: v - 4), pa.int32())
        case "date":
            return T.DATE, pa.array(m(lambda v: dt.date(2020, 1, 1) + dt.timedelta(days=v)),
                                    pa.date32())
        case "timestamp":
            return T.TIMESTAMP, pa.array(
                m(lambda v: dt.datetime(2020, 1, 1, tzinfo=dt.timezone.utc)
                  + dt.timedelta(seconds=v * 7)), pa.timestamp("us", tz="UTC"))
        case "decimal":
            return T.DecimalType(10, 2), pa.array(m(lambda v: Decimal(v - 3) / 4),
                                                  pa.decimal128(10, 2))
        case "string":
            return T.STRING, pa.array(m(lambda v: STRS[v % len(STRS)]), pa.large_string())
        case "binary":
            return T.BINARY, pa.array(m(lambda v: STRS[(v * 3) % len(STRS)].encode()),
                                      pa.large_binary())
        case "boolean":
            return T.BOOLEAN, pa.array(m(lambda v: v % 3 == 0), pa.bool_())
        case "double":  # not bounded (NaN order): the pair path runs
            return T.DOUBLE, pa.array(m(lambda v: float("nan") if v == 4 else v / 2.0),
                                      pa.float64())
    raise KeyError(kind)


KINDS = ("long", "int", "date", "timestamp", "decimal", "string", "binary", "boolean", "double")


def _sides(kind: str, build_rows: bool = True) -> Sides:
    dtype, lv = _conv(kind, L_VALS)
    _, rv = _conv(kind, R_VALS)
    lt = pa.table({"lk": pa.array(L_KEYS, pa.int64()), "lv": lv,
                   "lx": pa.array(range(len(L_KEYS)), pa.int64())})
    rt = pa.table({"rk": pa.array(R_KEYS, pa.int64()), "rv": rv})
    if not build_rows:
        rt = rt.slice(0, 0)
    types = {"lk": T.LONG, "lv": dtype, "lx": T.LONG, "rk": T.LONG, "rv": dtype}
    return Sides(lt, rt, attrs_of(lt, types), attrs_of(rt, types))


OPS = ("<>", "<", "<=", ">", ">=")


def _cmp(op: str, a, b):
    match op:
        case "<>":
            return Not(EqualTo(a, b))
        case "<":
            return LessThan(a, b)
        case "<=":
            return LessThanOrEqual(a, b)
        case ">":
            return GreaterThan(a, b)
        case _:
            return GreaterThanOrEqual(a, b)


def _conditions(s: Sides):
    """(name, full join condition) for every comparison in both operand orders."""
    c = s.col
    key = EqualTo(c("lk"), c("rk"))
    for op in OPS:
        yield f"rv {op} lv", And(key, _cmp(op, c("rv"), c("lv")))
        yield f"lv {op} rv", And(key, _cmp(op, c("lv"), c("rv")))


class _Spy:
    """Counts bounded probes (whether the fast path ran)."""

    def __init__(self, monkeypatch) -> None:
        self.calls = 0
        orig = RB.BoundedRelation.exists

        def exists(rel, *a, **k):
            self.calls += 1
            return orig(rel, *a, **k)

        monkeypatch.setattr(RB.BoundedRelation, "exists", exists)


def _run_both(monkeypatch, plan, batch_size, **kw):
    """(fast-path rows, pair-path rows, fast runtime)."""
    fast, rt = run(plan, batch_size, **kw)
    monkeypatch.setattr(RB, "ENABLED", False)
    try:
        slow, _ = run(plan, batch_size, **kw)
    finally:
        monkeypatch.setattr(RB, "ENABLED", True)
    return fast, slow, rt


@pytest.mark.parametrize("batch_size", (2, None))
@pytest.mark.parametrize("algo,build", [("shj", R), ("bhj", R), ("shj", L)], ids=str)
@pytest.mark.parametrize("jt", JOIN_TYPES, ids=str)
@pytest.mark.parametrize("kind", KINDS)
def test_bounded_residual_matches_pair_path_and_reference(monkeypatch, kind, jt, algo, build,
                                                          batch_size):
    s = _sides(kind)
    spy = _Spy(monkeypatch)
    for name, cond in _conditions(s):
        join = logical_join(s, jt, cond)
        expected = reference(join)
        plan = physical(algo, join, build, partitions=2)
        before = spy.calls
        fast, slow, _ = _run_both(monkeypatch, plan, batch_size, partitions=2)
        assert_same_rows(fast, expected)
        assert_same_rows(slow, expected)
        bounded = build is R and kind != "double"
        assert (spy.calls > before) == bounded, (name, spy.calls, before)


@pytest.mark.parametrize("algo", ("shj", "bhj"))
@pytest.mark.parametrize("jt", JOIN_TYPES, ids=str)
@pytest.mark.parametrize("kind", ("long", "string", "decimal"))
def test_bounded_residual_empty_build(monkeypatch, kind, jt, algo):
    s = _sides(kind, build_rows=False)
    for name, cond in _conditions(s):
        join = logical_join(s, jt, cond)
        fast, slow, _ = _run_both(monkeypatch, physical(algo, join, R, partitions=2), 2,
                                  partitions=2)
        expected = reference(join)
        assert_same_rows(fast, expected)
        assert_same_rows(slow, expected)
        if jt is J.LEFT_ANTI:
            assert fast.num_rows == s.ltable.num_rows, name


@pytest.mark.parametrize("jt", JOIN_TYPES, ids=str)
def test_bounded_residual_stream_expression(monkeypatch, jt):
    """A computed stream operand (not a plain column) and a literal one."""
    s = _sides("long")
    c = s.col
    key = EqualTo(c("lk"), c("rk"))
    spy = _Spy(monkeypatch)
    for cond in (And(key, LessThan(c("rv"), Add(c("lv"), c("lx")))),
                 And(key, Not(EqualTo(Add(c("lx"), Literal(-10, T.LONG)), c("rv")))),
                 And(key, GreaterThanOrEqual(c("rv"), Literal(5, T.LONG)))):
        join = logical_join(s, jt, cond)
        expected = reference(join)
        for algo in ("shj", "bhj"):
            fast, slow, _ = _run_both(monkeypatch, physical(algo, join, R, partitions=2), 2,
                                      partitions=2)
            assert_same_rows(fast, expected)
            assert_same_rows(slow, expected)
    assert spy.calls


def test_bounded_residual_ansi_errors_only_on_probed_rows(monkeypatch):
    """The stream operand overflows (ANSI) on a row whose key has no build rows: neither path
    fails; on a row whose key has build rows: both fail the same way."""
    big = 2**63 - 10
    lt = pa.table({"lk": pa.array([1, 6, None], pa.int64()),
                   "lv": pa.array([1, big, big], pa.int64())})
    rt = pa.table({"rk": pa.array([1, 1, 2], pa.int64()), "rv": pa.array([0, 3, 5], pa.int64())})
    types = {"lk": T.LONG, "lv": T.LONG, "rk": T.LONG, "rv": T.LONG}
    s = Sides(lt, rt, attrs_of(lt, types), attrs_of(rt, types))
    c = s.col
    cond = And(EqualTo(c("lk"), c("rk")), LessThan(c("rv"), Add(c("lv"), Literal(100, T.LONG))))
    for jt in JOIN_TYPES:
        join = logical_join(s, jt, cond)
        fast, slow, _ = _run_both(monkeypatch, physical("shj", join, R, partitions=1), 2,
                                  partitions=1)
        assert_same_rows(fast, slow)
        assert_same_rows(fast, reference(join))
    lt2 = pa.table({"lk": pa.array([1, 2], pa.int64()), "lv": pa.array([1, big], pa.int64())})
    s2 = Sides(lt2, rt, attrs_of(lt2, types), attrs_of(rt, types))
    c = s2.col
    cond = And(EqualTo(c("lk"), c("rk")), LessThan(c("rv"), Add(c("lv"), Literal(100, T.LONG))))
    join = logical_join(s2, J.LEFT_SEMI, cond)
    errors = []
    for enabled in (True, False):
        monkeypatch.setattr(RB, "ENABLED", enabled)
        with pytest.raises(ExecutionError) as e:
            run(physical("shj", join, R, partitions=1), 2, partitions=1)
        errors.append(e.value.error_class)
    monkeypatch.setattr(RB, "ENABLED", True)
    assert errors[0] == errors[1] == "ARITHMETIC_OVERFLOW"


def _spill_sides(seed: int, n: int = 12000, keys: int = 3000) -> Sides:
    rng = np.random.default_rng(seed)

    def table(prefix: str, s: int) -> pa.Table:
        r = np.random.default_rng(s)
        return pa.table({
            f"{prefix}k": pa.array(r.integers(0, keys, n), pa.int64(), mask=r.random(n) < 0.01),
            f"{prefix}s": pa.array([f"pad-{i % 97:03d}-" + "x" * 40 for i in range(n)]),
            f"{prefix}v": pa.array(r.integers(0, 6, n), pa.int64(), mask=r.random(n) < 0.05),
        })

    lt, rt = table("l", seed), table("r", int(rng.integers(1 << 30)))
    types = {"lk": T.LONG, "ls": T.STRING, "lv": T.LONG, "rk": T.LONG, "rs": T.STRING,
             "rv": T.LONG}
    return Sides(lt, rt, attrs_of(lt, types), attrs_of(rt, types))


@pytest.mark.parametrize("jt", JOIN_TYPES, ids=str)
@pytest.mark.parametrize("op", ("<>", "<", ">="))
def test_bounded_residual_grace_spill(monkeypatch, jt, op):
    s = _spill_sides(11)
    c = s.col
    join = logical_join(s, jt, And(EqualTo(c("lk"), c("rk")), _cmp(op, c("rv"), c("lv"))))
    expected = reference(join)
    plan = physical("shj", join, R, partitions=1)
    spy = _Spy(monkeypatch)
    budget = (s.ltable.nbytes + s.rtable.nbytes) // 3
    fast, slow, rt = _run_both(monkeypatch, plan, 2048, budget=budget, partitions=1)
    m = rt.metrics.get(plan)
    assert m is not None and m.spill_size > 0
    assert spy.calls
    assert_same_rows(fast, expected)
    assert_same_rows(slow, expected)


def test_analyze_residual_applies_only_to_bounded_shapes():
    s = _sides("long")
    c = s.col
    b, x = c("rv"), c("lv")
    build, stream = s.rattrs, s.lattrs

    def an(cond, jt=J.LEFT_SEMI, build_left=False, null_aware=False):
        return RB.analyze_residual(jt, build_left, null_aware, cond, build, stream)

    got = an(Not(EqualTo(x, b)))
    assert got is not None and got.op == "<>" and got.build_ordinal == 1 and got.stream_is_simple
    assert an(LessThan(x, b)).op == ">"          # x < b  ==  b > x
    assert an(GreaterThanOrEqual(b, x)).op == ">="
    assert an(LessThanOrEqual(Add(x, x), b)).stream_is_simple is False
    for jt in (J.INNER, J.LEFT_OUTER, J.FULL_OUTER):
        assert an(LessThan(b, x), jt=jt) is None
    assert an(LessThan(b, x), build_left=True) is None
    assert an(LessThan(b, x), jt=J.LEFT_ANTI, null_aware=True) is None
    assert an(EqualTo(b, x)) is None                      # membership, not a bound
    assert an(Not(EqualNullSafe(b, x))) is None
    assert an(And(LessThan(b, x), LessThan(b, x))) is None
    assert an(LessThan(Add(b, b), x)) is None             # build operand must be a column
    assert an(LessThan(b, c("rk"))) is None               # both operands from the build side
    assert an(LessThan(c("lk"), x)) is None               # no build column
    sd = _sides("double")
    assert RB.analyze_residual(J.LEFT_SEMI, False, False, LessThan(sd.col("rv"), sd.col("lv")),
                               sd.rattrs, sd.lattrs) is None
    other = AttributeReference("o", T.LONG)
    assert an(LessThan(b, other)) is None                 # operand from neither side


@pytest.mark.parametrize("jt", JOIN_TYPES, ids=str)
@pytest.mark.parametrize("algo", ("shj", "bhj"))
def test_bounded_residual_two_key_columns(monkeypatch, jt, algo):
    """Keys (long, string) with NULLs in either column; the bounds are per key pair."""
    s = _sides("long")
    lt = s.ltable.append_column("lt", pa.array(
        ["x" if i % 3 else ("y" if i % 2 else None) for i in range(s.ltable.num_rows)]))
    rt = s.rtable.append_column("rt", pa.array(
        ["x" if i % 4 else ("y" if i % 2 else None) for i in range(s.rtable.num_rows)]))
    types = {"lk": T.LONG, "lv": T.LONG, "lx": T.LONG, "lt": T.STRING, "rk": T.LONG,
             "rv": T.LONG, "rt": T.STRING}
    s = Sides(lt, rt, attrs_of(lt, types), attrs_of(rt, types))
    c = s.col
    spy = _Spy(monkeypatch)
    for op in OPS:
        cond = And(And(EqualTo(c("lk"), c("rk")), EqualTo(c("lt"), c("rt"))),
                   _cmp(op, c("lv"), c("rv")))
        join = logical_join(s, jt, cond)
        expected = reference(join)
        fast, slow, _ = _run_both(monkeypatch, physical(algo, join, R, partitions=2), 2,
                                  partitions=2)
        assert_same_rows(fast, expected)
        assert_same_rows(slow, expected)
    assert spy.calls


def test_bounded_residual_needs_value_grouped_keys():
    """Float keys (NaN, -0.0) or nested keys: Arrow's grouping is not the join's key equality."""
    s = _sides("long")
    b, x = s.col("rv"), s.col("lv")
    fkey = AttributeReference("f", T.DOUBLE)
    cond = LessThan(b, x)
    assert RB.analyze_residual(J.LEFT_SEMI, False, False, cond, s.rattrs, s.lattrs,
                               (s.col("rk"),)) is not None
    assert RB.analyze_residual(J.LEFT_SEMI, False, False, cond, s.rattrs, s.lattrs,
                               (s.col("rk"), fkey)) is None


def _sorted_run_sides(kind: str, seed: int, nulls: bool) -> Sides:
    """A build side stored in key order (runs of 1-6 equal keys), as key-ordered files give."""
    rng = np.random.default_rng(seed)
    rk = np.repeat(np.arange(0, 400, 2), rng.integers(1, 7, 200))
    rvals = [int(x) for x in rng.integers(0, 9, len(rk))]
    if nulls:
        rvals[5] = None
    dtype, rv = _conv(kind, rvals)
    lk = rng.integers(-2, 402, 1500)
    _, lv = _conv(kind, [int(x) for x in rng.integers(0, 9, 1500)])
    lt = pa.table({"lk": pa.array(lk, pa.int64()), "lv": lv,
                   "lx": pa.array(range(len(lk)), pa.int64())})
    rt = pa.table({"rk": pa.array(rk, pa.int64()), "rv": rv})
    types = {"lk": T.LONG, "lv": dtype, "lx": T.LONG, "rk": T.LONG, "rv": dtype}
    return Sides(lt, rt, attrs_of(lt, types), attrs_of(rt, types))


@pytest.mark.parametrize("nulls", (False, True))
@pytest.mark.parametrize("op", OPS)
@pytest.mark.parametrize("jt", JOIN_TYPES, ids=str)
@pytest.mark.parametrize("kind", ("long", "int", "date", "timestamp", "boolean"))
def test_bounded_residual_key_ordered_build_reduced_by_runs(monkeypatch, kind, jt, op, nulls):
    s = _sorted_run_sides(kind, 5, nulls)
    c = s.col
    join = logical_join(s, jt, And(EqualTo(c("lk"), c("rk")), _cmp(op, c("rv"), c("lv"))))
    expected = reference(join)
    reduced: list[bool] = []
    orig = RB._run_bounds

    def spy(*a):
        out = orig(*a)
        reduced.append(out is not None)
        return out

    monkeypatch.setattr(RB, "_run_bounds", spy)
    plan = physical("bhj", join, R)
    fast, slow, _ = _run_both(monkeypatch, plan, None)
    assert_same_rows(fast, expected)
    assert_same_rows(slow, expected)
    # the runs are used exactly when the build values hold no NULL
    assert reduced and all(r is not nulls for r in reduced)
