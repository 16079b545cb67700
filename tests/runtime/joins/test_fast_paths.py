"""The join operators' fast paths, each compared with DuckDB's join of the same data:

- unique build keys (``Candidates.match``: one gather per stream row, no pair expansion);
- range ("band") pruning of nested loop / cartesian candidates (:mod:`...joins.band`);
- intra-partition parallel probing (``map_batches_ordered``) keeping the stream order;
- the sort-merge scanner's sort-free codes for one integer-like key.
"""

from __future__ import annotations

import datetime as dt
import threading

import numpy as np
import pyarrow as pa
import pytest

from ember import types as T
from ember.errors import EmberError
from ember.expressions.arithmetic import Add, Subtract, UnaryMinus
from ember.expressions.base import AttributeReference, Literal, bind_references
from ember.expressions.predicates import (
    And,
    EqualTo,
    GreaterThan,
    GreaterThanOrEqual,
    LessThan,
    LessThanOrEqual,
)
from ember.physical.nodes import BuildSide
from ember.plans.logical.join_type import JoinType
from ember.plans.logical.nodes import Join, LocalRelation
from ember.runtime.local import LocalRuntime
from ember.runtime.local.joins.band import BandIndex, KeyedBand
from ember.runtime.local.joins.common import map_batches_ordered
from ember.runtime.local.joins.hashed_relation import HashedRelation
from ember.runtime.local.joins.sort_merge_join import joint_codes
from ember.expressions.base import BoundReference
from tests.runtime.joins.helpers import assert_same_rows, conf, physical, reference, run

J = JoinType
L, R = BuildSide.LEFT, BuildSide.RIGHT
ALL_TYPES = (J.INNER, J.CROSS, J.LEFT_OUTER, J.RIGHT_OUTER, J.FULL_OUTER, J.LEFT_SEMI, J.LEFT_ANTI,
             J.EXISTENCE)
NAN = float("nan")


def _join(lt: pa.Table, rt: pa.Table, ltypes, rtypes, jt, cond_fn) -> Join:
    la = tuple(AttributeReference(n, t) for n, t in zip(lt.column_names, ltypes))
    ra = tuple(AttributeReference(n, t) for n, t in zip(rt.column_names, rtypes))
    exists = AttributeReference("exists", T.BOOLEAN, False) if jt is J.EXISTENCE else None
    cond = cond_fn(la, ra)
    return Join(LocalRelation(la, lt), LocalRelation(ra, rt), jt, cond, existence_attr=exists)


def _check(algorithm, join, build, batch_size, partitions=3):
    expected = reference(join)
    actual, _ = run(physical(algorithm, join, build, partitions=partitions), batch_size,
                    partitions=partitions)
    assert_same_rows(actual, expected)
    return actual


# ---------------------------------------------------------------------------------------------
# Unique build keys


def _unique_tables():
    lt = pa.table({"lk": pa.array([1, 2, None, 4, 5, 9, 2, 1, 7], pa.int64()),
                   "lv": pa.array([5, 1, 3, 4, 0, 6, 7, 8, 2], pa.int64())})
    rt = pa.table({"rk": pa.array([2, 1, None, 5, 6, 9, 8], pa.int64()),
                   "rv": pa.array([3, 9, 1, 0, 2, 7, 4], pa.int64())})
    return lt, rt


def _eq(la, ra):
    return EqualTo(la[0], ra[0])


def _eq_residual(la, ra):
    return And(EqualTo(la[0], ra[0]), LessThan(la[1], ra[1]))


UNIQUE_BHJ = [(jt, R) for jt in (J.INNER, J.LEFT_OUTER, J.LEFT_SEMI, J.LEFT_ANTI, J.EXISTENCE)]
UNIQUE_BHJ += [(J.RIGHT_OUTER, L), (J.INNER, L)]
UNIQUE_SHJ = [(jt, R) for jt in ALL_TYPES] + [(jt, L) for jt in (J.INNER, J.LEFT_OUTER,
                                                                 J.RIGHT_OUTER, J.FULL_OUTER)]


@pytest.mark.parametrize("batch_size", (2, None))
@pytest.mark.parametrize("cond", (_eq, _eq_residual), ids=("eq", "residual"))
@pytest.mark.parametrize("algorithm,jt,build",
                         [("bhj", jt, b) for jt, b in UNIQUE_BHJ]
                         + [("shj", jt, b) for jt, b in UNIQUE_SHJ], ids=str)
def test_unique_build_keys(algorithm, jt, build, cond, batch_size):
    lt, rt = _unique_tables()
    if build is L:  # the build side must be the unique one
        lt, rt = rt.rename_columns(["lk", "lv"]), lt.rename_columns(["rk", "rv"])
    join = _join(lt, rt, (T.LONG, T.LONG), (T.LONG, T.LONG), jt, cond)
    _check(algorithm, join, build, batch_size)


def test_unique_relation_uses_direct_candidates():
    build = pa.table({"k": pa.array([3, 1, None, 2], pa.int64())})
    rel = HashedRelation.build(build, (BoundReference(0, T.LONG, True),), allows_null_key=False)
    cand = rel.lookup([pa.array([1, None, 7, 3, 3, -5], pa.int64())])
    assert cand.match is not None
    assert rel.batch.column(0).take(pa.array(cand.match[cand.match >= 0])).to_pylist() == [1, 3, 3]
    assert cand.counts.tolist() == [1, 0, 0, 1, 1, 0]


# ---------------------------------------------------------------------------------------------
# Band pruning


def _band_tables():
    lt = pa.table({
        "lt": pa.array([10, 3, None, 25, 7, 14, 0, 30, 12, 11], pa.int64()),
        "ld": pa.array([1.0, NAN, 2.5, None, -0.0, 7.0, 3.0, NAN, 0.0, 9.5]),
        "lday": pa.array([dt.date(2020, 1, d) for d in (1, 5, 9, 3, 7, 2, 30, 15, 4, 11)]),
        "lv": pa.array(range(10), pa.int64()),
    })
    rt = pa.table({
        "rt": pa.array([12, None, 5, 9, 28, 11, 0, 13], pa.int64()),
        "rd": pa.array([0.0, 2.0, NAN, None, 7.5, -1.0, 3.0, 9.0]),
        "rday": pa.array([dt.date(2020, 1, d) for d in (2, 6, 10, 29, 1, 8, 4, 12)]),
        "rv": pa.array(range(8), pa.int64()),
    })
    return lt, rt


LTYPES = (T.LONG, T.DOUBLE, T.DATE, T.LONG)
RTYPES = (T.LONG, T.DOUBLE, T.DATE, T.LONG)
FIVE = Literal(5, T.LONG)


def _between(la, ra):  # lt BETWEEN rt - 5 AND rt + 5
    return And(GreaterThanOrEqual(la[0], Subtract(ra[0], FIVE)),
               LessThanOrEqual(la[0], Add(ra[0], FIVE)))


def _strict_flipped(la, ra):  # rt - 2 < lt AND rt + 3 > lt, build expressions on the left
    return And(LessThan(Subtract(ra[0], Literal(2, T.LONG)), la[0]),
               GreaterThan(Add(ra[0], Literal(3, T.LONG)), la[0]))


def _double_band(la, ra):  # NaN, -0.0, NULL operands
    return And(GreaterThanOrEqual(la[1], ra[1]), LessThan(la[1], Add(ra[1], Literal(2.0, T.DOUBLE))))


def _date_band(la, ra):
    return And(GreaterThan(la[2], ra[2]), LessThan(la[3], ra[3]))


def _non_monotone(la, ra):  # the upper bound's build expression decreases: one bound prunes
    return And(GreaterThanOrEqual(la[0], ra[0]), LessThanOrEqual(la[0], UnaryMinus(ra[3])))


def _band_residual(la, ra):
    return And(_between(la, ra), EqualTo(la[3], la[3]))


BAND_CONDS = (_between, _strict_flipped, _double_band, _date_band, _non_monotone, _band_residual)


@pytest.mark.parametrize("batch_size", (2, None))
@pytest.mark.parametrize("cond", BAND_CONDS, ids=lambda f: f.__name__)
@pytest.mark.parametrize("jt,build", [(jt, s) for jt in ALL_TYPES for s in (L, R)], ids=str)
def test_band_nested_loop_join(jt, build, cond, batch_size):
    lt, rt = _band_tables()
    _check("bnlj", _join(lt, rt, LTYPES, RTYPES, jt, cond), build, batch_size)


@pytest.mark.parametrize("batch_size", (2, None))
@pytest.mark.parametrize("cond", BAND_CONDS, ids=lambda f: f.__name__)
def test_band_cartesian(cond, batch_size):
    lt, rt = _band_tables()
    _check("cartesian", _join(lt, rt, LTYPES, RTYPES, J.INNER, cond), None, batch_size)


def _keyed(band):
    """``band`` plus equal keys: lv % 3 = rv % 3 (many rows per key; the hash joins' case)."""
    def cond(la, ra):
        return And(EqualTo(la[4], ra[4]), band(la, ra))
    cond.__name__ = f"keyed{band.__name__}"
    return cond


def _keyed_tables():
    lt, rt = _band_tables()
    lk = [None if i == 4 else i % 3 for i in range(lt.num_rows)]
    return (lt.append_column("lk", pa.array(lk, pa.int64())),
            rt.append_column("rk", pa.array([i % 3 for i in range(rt.num_rows)], pa.int64())))


@pytest.mark.parametrize("batch_size", (2, None))
@pytest.mark.parametrize("cond", [_keyed(c) for c in BAND_CONDS], ids=lambda f: f.__name__)
@pytest.mark.parametrize("algorithm,jt,build",
                         [("bhj", jt, b) for jt, b in UNIQUE_BHJ]
                         + [("shj", jt, b) for jt, b in UNIQUE_SHJ], ids=str)
def test_keyed_band_hash_join(algorithm, jt, build, cond, batch_size):
    lt, rt = _keyed_tables()
    join = _join(lt, rt, LTYPES + (T.LONG,), RTYPES + (T.LONG,), jt, cond)
    _check(algorithm, join, build, batch_size)


def test_keyed_band_prunes_each_key_group():
    lt, rt = _keyed_tables()
    join = _join(lt, rt, LTYPES + (T.LONG,), RTYPES + (T.LONG,), J.INNER, _keyed(_between))
    la, ra = join.left.output, join.right.output
    rel = HashedRelation.build(rt, (BoundReference(4, T.LONG, False),), allows_null_key=False)
    band = KeyedBand.build(BandIndex.of(join.condition, la, ra), rel)
    assert band is not None
    keys = [lt.column(4).combine_chunks()]
    cand = band.candidates(rel, keys, lt.to_batches()[0])
    assert cand is not None
    full = rel.lookup(keys)
    # lt=10 (key 0) may meet rt in [5, 15] among key 0's rows rt 12, 9, 0: 12 and 9
    assert int(full.counts[0]) == 3 and int(cand.counts[0]) == 2
    assert sorted(rt.column(0).take(pa.array(cand.order[cand.lo[0]:cand.lo[0] + 2])).to_pylist()) \
        == [9, 12]
    assert int(cand.counts[2]) == 0  # a NULL stream value meets nothing
    assert (cand.counts <= full.counts).all() and cand.counts.sum() < full.counts.sum()


def test_band_index_prunes_candidates():
    lt, rt = _band_tables()
    join = _join(lt, rt, LTYPES, RTYPES, J.INNER, _between)
    la, ra = join.left.output, join.right.output
    idx = BandIndex.of(join.condition, la, ra)
    assert idx is not None and idx.lower is not None and idx.upper is not None
    build = rt.to_batches()[0]
    cand = idx.candidates(build, lt.to_batches()[0])
    assert cand is not None
    # lt=10 may meet rt in [5, 15]: 12, 5, 9, 11, 13; a NULL stream value meets nothing
    assert int(cand.counts[0]) == 5 and int(cand.counts[2]) == 0
    assert int(cand.counts.sum()) < lt.num_rows * rt.num_rows


def test_band_index_ignores_other_conditions():
    lt, rt = _band_tables()
    join = _join(lt, rt, LTYPES, RTYPES, J.INNER, lambda la, ra: EqualTo(la[0], ra[0]))
    assert BandIndex.of(join.condition, join.left.output, join.right.output) is None
    join = _join(lt, rt, LTYPES, RTYPES, J.INNER, lambda la, ra: LessThan(la[0], la[3]))
    assert BandIndex.of(join.condition, join.left.output, join.right.output) is None


def test_band_overflow_raises_like_the_full_comparison():
    lt, rt = _band_tables()
    big = Literal(2**63 - 1, T.LONG)
    join = _join(lt, rt, LTYPES, RTYPES, J.INNER,
                 lambda la, ra: And(GreaterThanOrEqual(la[0], Add(ra[0], big)),
                                    LessThan(la[0], ra[0])))
    # The full condition evaluated over every pair of rows raises ...
    li, ri = np.divmod(np.arange(lt.num_rows * rt.num_rows), rt.num_rows)
    pairs = pa.RecordBatch.from_arrays(
        [c.take(pa.array(li)).combine_chunks() for c in lt.columns]
        + [c.take(pa.array(ri)).combine_chunks() for c in rt.columns],
        names=lt.column_names + rt.column_names)
    with pytest.raises(EmberError) as ref_err:
        bind_references(join.condition, join.left.output + join.right.output).eval(pairs)
    with pytest.raises(EmberError) as err:  # ... and so does the pruned nested loop join
        run(physical("bnlj", join, R), None)
    assert type(err.value) is type(ref_err.value)


# ---------------------------------------------------------------------------------------------
# Intra-partition parallelism


def test_map_batches_ordered_keeps_order_and_raises():
    batches = [pa.record_batch({"x": pa.array([i], pa.int64())}) for i in range(50)]
    seen = set()

    def fn(b):
        seen.add(threading.get_ident())
        return [b, b]

    out = [b.column(0)[0].as_py() for b in map_batches_ordered(fn, batches, 3)]
    assert out == [i for i in range(50) for _ in (0, 1)]

    def bad(b):
        if b.column(0)[0].as_py() == 7:
            raise ValueError("boom")
        return [b]

    with pytest.raises(ValueError, match="boom"):
        list(map_batches_ordered(bad, batches, 2))


@pytest.mark.parametrize("algorithm,jt,build", [("bhj", J.LEFT_OUTER, R), ("bhj", J.INNER, R),
                                                ("bhj", J.LEFT_ANTI, R),
                                                ("bnlj", J.LEFT_OUTER, R)], ids=str)
def test_parallel_probe_keeps_stream_order(algorithm, jt, build):
    rng = np.random.default_rng(1)
    n = 3000
    lt = pa.table({"lk": pa.array(rng.integers(0, 50, n), pa.int64()),
                   "lv": pa.array(np.arange(n), pa.int64())})
    rt = pa.table({"rk": pa.array(np.arange(0, 100, 3), pa.int64()),
                   "rv": pa.array(np.arange(34), pa.int64())})
    cond = _eq if algorithm == "bhj" else (lambda la, ra: And(
        GreaterThanOrEqual(la[0], ra[0]), LessThanOrEqual(la[0], Add(ra[0], Literal(1, T.LONG)))))
    join = _join(lt, rt, (T.LONG, T.LONG), (T.LONG, T.LONG), jt, cond)
    plan = physical(algorithm, join, build, partitions=1)
    rtm = LocalRuntime(conf(batch_size=64, partitions=1), parallelism=4)
    try:
        actual = rtm.collect(plan)
    finally:
        rtm.close()
    assert_same_rows(actual, reference(join))
    lv = actual.column("lv").to_pylist()
    assert lv == sorted(lv)


# ---------------------------------------------------------------------------------------------
# Sort-merge scanner codes


@pytest.mark.parametrize("typ,vals_a,vals_b", [
    (pa.int64(), [-5, None, 3, 3, 2**62], [-(2**61), 3, None, 7]),
    (pa.int32(), [1, 2, 2], [0, 2, 5]),
    (pa.date32(), [dt.date(2020, 1, 2), None], [dt.date(1969, 12, 31), dt.date(2020, 1, 2)]),
])
def test_joint_codes_integer_like(typ, vals_a, vals_b):
    a, b = pa.array(vals_a, typ), pa.array(vals_b, typ)
    ca, cb = joint_codes([a], [b])
    both = vals_a + vals_b
    codes = list(ca) + list(cb)
    for v, c in zip(both, codes):
        assert (c == -1) == (v is None)
    pairs = [(v, c) for v, c in zip(both, codes) if v is not None]
    for v1, c1 in pairs:
        for v2, c2 in pairs:
            assert (v1 < v2) == (c1 < c2) and (v1 == v2) == (c1 == c2)


@pytest.mark.parametrize("batch_size", (2, None))
@pytest.mark.parametrize("jt", ALL_TYPES, ids=str)
def test_sort_merge_join_negative_and_date_keys(jt, batch_size):
    lt = pa.table({"lk": pa.array([-3, -1, None, 0, 5, -3, 9], pa.int64()),
                   "lday": pa.array([dt.date(2001, 1, d) for d in (1, 2, 3, 4, 5, 6, 7)]),
                   "lv": pa.array(range(7), pa.int64())})
    rt = pa.table({"rk": pa.array([-3, 0, None, 5, 5, 8], pa.int64()),
                   "rday": pa.array([dt.date(2001, 1, d) for d in (1, 4, 3, 9, 5, 7)]),
                   "rv": pa.array(range(6), pa.int64())})
    types = (T.LONG, T.DATE, T.LONG)
    for cond in (lambda la, ra: EqualTo(la[0], ra[0]), lambda la, ra: EqualTo(la[1], ra[1])):
        _check("smj", _join(lt, rt, types, types, jt, cond), None, batch_size)


# ---------------------------------------------------------------------------------------------
# NULL-padding gathers


@pytest.mark.parametrize("col", [
    pa.array([1, None, 3, 4]), pa.array(["a", None, "ccc", "d"]),
    pa.array([True, None, False, True]), pa.array([[1], [2, 3], None, []]),
    pa.array([{"x": 1}, None, {"x": 3}, {"x": 4}]),
    pa.array([1.5, None, 2.5, 3.5]).cast(pa.decimal128(10, 2)),
    pa.array(["a", "b", "a", None]).dictionary_encode(), pa.array([1, 2, 3, 4, 5])[1:],
    pa.array(["q", "r", "s", "t", "u"]).slice(1), pa.array([b"ab", b"cd", None, b"ef"], pa.binary(2)),
    pa.array(["a", "bb", None, "d"], pa.large_string()), pa.array([None] * 4, pa.null()),
    pa.array([1, 2, None, 4], pa.timestamp("us", tz="UTC")),
], ids=lambda c: str(c.type))
def test_take_nullable_matches_arrow(col):
    from ember.runtime.local.joins.kernel import take_nullable

    for idx in ([0, -1, 2, 1, -1], [1, 1, 3, 0], [-1, 0], [3, -1, -1, -1, 2, 2, 1, 0, -1]):
        i = np.array(idx, dtype=np.int64)
        expected = col.take(pa.array(i, mask=i < 0))
        got = take_nullable(col, i)
        got.validate(full=True)
        assert got.type == expected.type and got.to_pylist() == expected.to_pylist()
