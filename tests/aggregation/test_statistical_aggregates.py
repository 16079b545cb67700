"""Statistical and bitwise aggregates (stddev / variance / skewness / kurtosis, covar / corr, the
regr_* functions, bit_and / bit_or / bit_xor) and the boolean / by / count_if aggregates, against
PySpark 4.3 in the same run, on both runtimes.

Each query runs once on Spark and on Ember at the default batch size over one partition, and at
batch size 2 over three partitions (a UNION ALL of slices, so the Partial -> Final plan merges
several buffers per group).  Names, types, nullability and NULLs must be Spark's; doubles equal
Spark's to 1e-12 (relative, or absolute near 0: Spark updates row by row, Ember per group, so
the last bits differ), everything else exactly.  The data has groups of one row, all-NULL and
constant groups, NaN and infinity, integers, decimals, doubles and numeric strings.

Without Spark: update -> merge -> evaluate over random partitions equals the COMPLETE result,
the moments are exact on constant groups and stable far from 0, bit operations are exact.
"""

from __future__ import annotations

import math
import re
from decimal import Decimal
from fractions import Fraction
from functools import reduce
from typing import Any

import numpy as np
import pyarrow as pa
import pytest

from ember import types as T
from ember.execution.aggregate_buffers import merge_buffers, update_buffers
from ember.expressions.aggregates import (
    BitAndAgg,
    BitOrAgg,
    BitXorAgg,
    Corr,
    CovSample,
    Kurtosis,
    RegrAvgX,
    RegrIntercept,
    RegrR2,
    RegrSlope,
    RegrSXY,
    Skewness,
    StddevPop,
    VarianceSamp,
    lookup_aggregate,
)
from ember.expressions.base import AttributeReference
from ember.physical.nodes import AggregateMode, HashAggregateExec
from ember.planning import plan_query
from tests.conformance.ember_adapter import RUNTIMES, new_session
from tests.differential.compare import Failed, sql_outcome

NAN, INF = float("nan"), float("inf")
SCHEMA = "k int, i int, l bigint, t tinyint, d double, e double, m decimal(10,2), s string, b boolean"


def _rows() -> list[tuple]:
    rng = np.random.default_rng(20)
    rows = []
    for n in range(48):
        k = int(rng.integers(0, 5))
        null = rng.random(8) < 0.12
        rows.append((
            k,
            None if null[0] else int(rng.integers(-50, 50)),
            None if null[1] else int(n * 7919 - 150000 + rng.integers(0, 7)),  # distinct
            None if null[2] else int(rng.integers(-128, 128)),
            None if null[3] else round(float(rng.normal(3, 10)), 3),
            None if null[4] else round(float(rng.uniform(-5, 5)), 4),
            None if null[5] else Decimal(int(rng.integers(-99999, 99999))).scaleb(-2),
            None if null[6] else str(round(float(rng.uniform(0, 100)), 2)),
            None if null[7] else bool(rng.random() < 0.6),
        ))
    rows += [
        (5, 4, 40, 4, 2.5, 1.5, Decimal("2.50"), "7", True),  # one row
        (6, None, None, None, None, None, None, None, None),  # every value NULL
        (6, None, None, None, None, None, None, None, None),
        (7, 3, 77, 12, 0.1, 0.1, Decimal("1.10"), "0.1", True),  # constant
        (7, 3, 78, 12, 0.1, 0.1, Decimal("1.10"), "0.1", True),
        (7, 3, 79, 12, 0.1, 0.1, Decimal("1.10"), "0.1", True),
        (8, 1, 81, 1, NAN, 2.0, Decimal("1.00"), "NaN", False),  # NaN
        (8, 2, 82, 2, 1.0, NAN, Decimal("2.00"), "1", False),
        (8, 5, 83, 3, 4.0, 3.0, Decimal("3.00"), "2", None),
        (9, 1, 91, -1, 1.0, 1.0, Decimal("1.00"), "Infinity", True),  # infinity (not in e)
        (9, 2, 92, -2, INF, 2.0, Decimal("5.00"), "2", True),
        (9, 7, 93, -3, 3.0, 4.0, Decimal("9.00"), "3", False),
        (None, 8, 1, 5, -1.25, 0.5, Decimal("0.75"), "4", None),  # NULL key
        (None, 9, 2, 6, 6.5, -0.5, Decimal("-0.75"), "5", True),
    ]
    return rows


ROWS = _rows()

#: infinity only in d (Spark's co-moment of an infinite value depends on the row order: covar,
#: regr_sxy and regr_slope/intercept with an infinite y read e, which has none)
STATISTICAL = [
    "stddev(d)", "std(i)", "stddev_samp(m)", "stddev_pop(l)", "variance(e)", "var_samp(s)",
    "var_pop(d)", "skewness(d)", "kurtosis(e)", "skewness(i)", "kurtosis(m)", "stddev_pop(t)",
    "corr(d, i)", "corr(e, m)", "covar_pop(e, l)", "covar_samp(i, e)", "covar_samp(s, m)",
    "regr_count(e, i)", "regr_count(s, m)", "regr_avgx(m, i)", "regr_avgy(m, i)",
    "regr_avgx(e, d)", "regr_sxx(e, d)", "regr_syy(e, i)", "regr_sxy(e, l)",
    "regr_slope(e, i)", "regr_intercept(e, i)", "regr_slope(i, d)", "regr_intercept(m, d)",
    "regr_r2(d, e)", "regr_r2(e, i)",
    "stddev(DISTINCT i)", "var_pop(e) FILTER (WHERE i > 0)", "corr(d, e) FILTER (WHERE b)",
]
BITWISE = ["bit_and(t)", "bit_or(i)", "bit_xor(l)", "bit_and(l)", "bit_xor(t)", "bit_or(t)",
           "bit_and(cast(k AS smallint))", "bit_xor(i) FILTER (WHERE b)"]
BOOLEAN_AND_BY = ["bool_and(b)", "every(b)", "bool_or(b)", "some(b)", "any(b)", "count_if(b)",
                  "count_if(i > 0)", "bool_and(i > -40)", "max_by(s, l)", "min_by(d, l)",
                  "max_by(l, m)"]
ALL = STATISTICAL + BITWISE + BOOLEAN_AND_BY

QUERIES = {
    "grouped": f"SELECT k, {', '.join(ALL)} FROM t GROUP BY k",
    "global": f"SELECT {', '.join(ALL)} FROM t",
    "empty_global": f"SELECT {', '.join(ALL)} FROM t WHERE k > 100",
    "empty_grouped": f"SELECT k, {', '.join(ALL)} FROM t WHERE k > 100 GROUP BY k",
    "having": "SELECT k, stddev(d) AS sd FROM t GROUP BY k HAVING var_samp(e) > 0.5",
    "order_by": "SELECT k, kurtosis(e) FROM t GROUP BY k ORDER BY corr(e, i), k",
}

#: (query, why): bad argument types and values; Ember must raise Spark's error class with
#: Spark's type-mismatch message
ERRORS = [
    "SELECT stddev(b) FROM t", "SELECT var_pop(CAST(k AS DATE)) FROM VALUES (1) AS t(k)",
    "SELECT skewness(INTERVAL 1 DAY)", "SELECT corr(b, d) FROM t", "SELECT covar_pop(d, b) FROM t",
    "SELECT regr_count(b, i) FROM t", "SELECT regr_avgx(i, b) FROM t",
    "SELECT regr_sxx(b, d) FROM t", "SELECT regr_slope(d, b) FROM t", "SELECT regr_r2(b, d) FROM t",
    "SELECT bit_and(d) FROM t", "SELECT bit_or(s) FROM t", "SELECT bit_xor(m) FROM t",
    "SELECT bit_and(b) FROM t", "SELECT bool_and(i) FROM t", "SELECT count_if(i) FROM t",
    "SELECT stddev(d, e) FROM t", "SELECT corr(d) FROM t", "SELECT max_by(d) FROM t",
    "SELECT stddev(x) FROM VALUES ('1'), ('abc') AS v(x)",
    "SELECT bool_or(x) FROM VALUES ('true'), ('maybe') AS v(x)",
    # a product of two tiny non-zero moments underflows: Spark's Divide raises under ANSI
    "SELECT corr(x, y) FROM VALUES (1e-160D, 1e-160D), (2e-160D, 2e-160D) AS v(x, y)",
]

#: with ``spark.sql.ansi.enabled=false``: legacy casts (a bad string is NULL), Divide (a zero
#: divisor is NULL), decimal averages (NULL on overflow) and type coercion (no string -> BOOLEAN)
LEGACY = [
    "SELECT sum(x), stddev(x), var_pop(x), regr_avgx(x, x), regr_count(x, x) "
    "FROM VALUES ('1'), ('abc'), ('3') AS v(x)",
    "SELECT corr(x, y), skewness(x), kurtosis(y) "
    "FROM VALUES (1e-160D, 1e-160D), (2e-160D, 2e-160D) AS v(x, y)",
    "SELECT regr_avgx(y, x), regr_avgy(y, x) FROM VALUES "
    "(99999999999999999999999999999999999.9BD, 1BD), "
    "(99999999999999999999999999999999999.9BD, 1BD) AS v(y, x)",
    "SELECT count_if(x) FROM VALUES ('true') AS v(x)",
    "SELECT bool_or(x) FROM VALUES ('true') AS v(x)",
    "SELECT bool_or(NULL), count_if(NULL), stddev(NULL), bit_and(NULL), sum(NULL)",
]


# -- comparison ----------------------------------------------------------------------------------


def _same(a: Any, b: Any, tol: float = 1e-12) -> bool:
    if isinstance(a, float) and isinstance(b, float):
        if math.isnan(a) or math.isnan(b):
            return math.isnan(a) and math.isnan(b)
        return a == b or math.isclose(a, b, rel_tol=tol, abs_tol=tol)
    return type(a) is type(b) and a == b


def _outcome(run, sql: str, *, is_spark: bool) -> Any:
    """The schema and the rows (sorted, values as returned) or a :class:`Failed`."""
    return sql_outcome(run, sql, is_spark=is_spark, normalize=False)


def _assert_same(expected: Any, actual: Any, what: str, tol: float = 1e-12) -> None:
    if isinstance(expected, Failed) or isinstance(actual, Failed):
        assert isinstance(expected, Failed) and isinstance(actual, Failed), \
            f"{what}\nSpark: {expected}\nEmber: {actual}"
        assert expected.cls == actual.cls, f"{what}\nSpark: {expected}\nEmber: {actual}"
        detail = re.compile(r"data type mismatch: (.*?\.)( |$)")
        want = detail.search(expected.message)
        if want is not None:
            got = detail.search(actual.message)
            assert got is not None and got.group(1) == want.group(1), (want.group(1), actual)
        return
    s_schema, s_rows = expected["schema"], expected["rows"]
    assert actual["schema"] == s_schema, what
    e_rows = actual["rows"]
    assert len(e_rows) == len(s_rows), f"{what}\nSpark: {s_rows}\nEmber: {e_rows}"
    for sr, er in zip(s_rows, e_rows):
        bad = [(name, s, e) for (name, _, _), s, e in zip(s_schema, sr, er)
               if not _same(s, e, tol)]
        assert not bad, f"{what}: row {sr[:1]}: (column, Spark, Ember) {bad}"


# -- differential tests -------------------------------------------------------------------------


def _arrow_table() -> pa.Table:
    cols = list(zip(*ROWS))
    types = [pa.int32(), pa.int32(), pa.int64(), pa.int8(), pa.float64(), pa.float64(),
             pa.decimal128(10, 2), pa.string(), pa.bool_()]
    names = [c.split()[0] for c in SCHEMA.split(", ")]
    return pa.table({n: pa.array(c, t) for n, c, t in zip(names, cols, types)})


@pytest.fixture(scope="module")
def spark_results(spark: Any) -> dict[str, Any]:
    session = spark.newSession()
    session.createDataFrame(ROWS, SCHEMA).createOrReplaceTempView("t")
    out = {q: _outcome(session.sql, sql, is_spark=True) for q, sql in QUERIES.items()}
    out.update({sql: _outcome(session.sql, sql, is_spark=True) for sql in ERRORS})
    return out


def _ember(runtime: str, n_parts: int, batch_size: int | None) -> Any:
    conf = {"spark.sql.shuffle.partitions": "3"}
    if batch_size is not None:
        conf["ember.execution.batchSize"] = str(batch_size)
    s = new_session(conf, runtime=runtime)
    table = _arrow_table()
    bounds = [(i * table.num_rows) // n_parts for i in range(n_parts + 1)]
    for i in range(n_parts):
        s.createDataFrame(table.slice(bounds[i], bounds[i + 1] - bounds[i])) \
            .createOrReplaceTempView(f"p{i}")
    s.sql(" UNION ALL ".join(f"SELECT * FROM p{i}" for i in range(n_parts))) \
        .createOrReplaceTempView("t")
    return s


_LAYOUTS = {"one_partition": (1, None), "three_partitions_batch_2": (3, 2)}


@pytest.mark.differential
@pytest.mark.parametrize("layout", sorted(_LAYOUTS))
@pytest.mark.parametrize("runtime", RUNTIMES)
@pytest.mark.parametrize("query", sorted(QUERIES))
def test_matches_spark(spark_results: dict[str, Any], query: str, runtime: str,
                       layout: str) -> None:
    s = _ember(runtime, *_LAYOUTS[layout])
    _assert_same(spark_results[query], _outcome(s.sql, QUERIES[query], is_spark=False),
                 f"{query} on {runtime}, {layout}")


@pytest.mark.differential
@pytest.mark.parametrize("sql", ERRORS)
def test_errors_match_spark(spark_results: dict[str, Any], sql: str) -> None:
    for runtime in RUNTIMES:
        _assert_same(spark_results[sql], _outcome(_ember(runtime, 1, None).sql, sql,
                                                  is_spark=False), f"{sql} on {runtime}")


@pytest.mark.differential
def test_legacy_mode_matches_spark(spark: Any) -> None:
    session = spark.newSession()
    session.conf.set("spark.sql.ansi.enabled", "false")
    for sql in LEGACY:
        expected = _outcome(session.sql, sql, is_spark=True)
        for runtime in RUNTIMES:
            s = new_session({"spark.sql.ansi.enabled": "false"}, runtime=runtime)
            _assert_same(expected, _outcome(s.sql, sql, is_spark=False), f"{sql} on {runtime}")


def test_two_phase_plan() -> None:
    """Every function of the list runs as Partial -> Final (it has aggregation buffers)."""
    s = _ember("local", 3, None)
    for fn in STATISTICAL[:-3] + BITWISE[:-1] + BOOLEAN_AND_BY:
        plan = plan_query(s.sql(f"SELECT k, {fn} FROM t GROUP BY k")._qe.optimized, s.sql_conf)
        modes = plan.collect(lambda n: n.mode if isinstance(n, HashAggregateExec) else None)
        assert modes == [AggregateMode.FINAL, AggregateMode.PARTIAL], fn


@pytest.mark.differential
def test_dataframe_api_matches_spark(spark: Any) -> None:
    from pyspark.sql import functions as SF

    import ember.functions as EF

    def program(s: Any, F: Any) -> Any:
        df = s.createDataFrame([(r[0], r[1], r[4], r[5], r[8]) for r in ROWS],
                               "k int, i int, d double, e double, b boolean")
        return df.groupBy("k").agg(
            F.stddev("d"), F.std("i"), F.stddev_samp("e"), F.stddev_pop("d"), F.variance("i"),
            F.var_samp("e"), F.var_pop("d"), F.skewness("e"), F.kurtosis("i"),
            F.corr("d", "i"), F.covar_samp("e", "i"), F.covar_pop("i", "e"),
            F.regr_count("e", "i"), F.regr_avgx("e", "i"), F.regr_avgy("e", "i"),
            F.regr_sxx("e", "d"), F.regr_syy("e", "i"), F.regr_sxy("i", "e"),
            F.regr_slope("e", "i"), F.regr_intercept("e", "i"), F.regr_r2("d", "e"),
            F.bit_and("i"), F.bit_or("i"), F.bit_xor("k"), F.bool_and("b"), F.bool_or("b"),
            F.every("b"), F.some("b"), F.count_if("b"), F.max_by("i", "e"), F.min_by("d", "e"))

    expected = _outcome(lambda _: program(spark, SF), "", is_spark=True)
    for runtime in RUNTIMES:
        actual = _outcome(lambda _: program(new_session(runtime=runtime), EF), "",
                          is_spark=False)
        _assert_same(expected, actual, f"DataFrame API on {runtime}")


@pytest.mark.differential
def test_stable_far_from_zero(spark: Any) -> None:
    """Values around 1e5 with a spread of 1 (the naive sum of squares would keep 4 digits).
    Spark's own result is good to about 1e-11 here (Welford rounds its running mean at every
    row), hence the tolerance; Ember's COMPLETE result is exact to rounding
    (:func:`test_moments_exact_on_known_values`)."""
    rng = np.random.default_rng(7)
    n = 3000
    x = 1e5 + np.round(rng.random(n), 6)
    y = -2e4 + 3.0 * (x - 1e5) + np.round(rng.normal(0, 0.1, n), 6)
    k = rng.integers(0, 3, n)
    rows = [(int(a), float(b), float(c)) for a, b, c in zip(k, x, y)]
    sql = ("SELECT k, var_samp(x), stddev_pop(x), skewness(x), kurtosis(x), covar_samp(x, y), "
           "corr(x, y), regr_slope(y, x), regr_intercept(y, x), regr_r2(y, x) FROM t GROUP BY k")
    session = spark.newSession()
    session.createDataFrame(rows, "k int, x double, y double").createOrReplaceTempView("t")
    expected = _outcome(session.sql, sql, is_spark=True)
    table = pa.table({"k": pa.array(k, pa.int32()), "x": pa.array(x), "y": pa.array(y)})
    for runtime in RUNTIMES:
        s = new_session({"ember.execution.batchSize": "500"}, runtime=runtime)
        s.createDataFrame(table).createOrReplaceTempView("t")
        _assert_same(expected, _outcome(s.sql, sql, is_spark=False), f"stability, {runtime}",
                     tol=1e-9)


# -- kernels, without Spark ---------------------------------------------------------------------

X = AttributeReference("x", T.DOUBLE)
Y = AttributeReference("y", T.DOUBLE)
L8 = AttributeReference("l", T.LONG)
DEC = AttributeReference("m", T.DecimalType(12, 3))


def _two_phase(func, columns: list[pa.Array], g: np.ndarray, n_groups: int, cuts: list[int]
               ) -> pa.Array:
    """update per partition (rows ``cuts``), then merge the concatenated buffers in two levels
    (PartialMerge of the first two partitions' buffers, then Final), then evaluate."""
    bounds = [0, *cuts, len(g)]
    parts = [update_buffers(func, [c.slice(lo, hi - lo) for c in columns], None, g[lo:hi],
                            n_groups) for lo, hi in zip(bounds, bounds[1:])]
    ident = np.arange(n_groups, dtype=np.int64)
    first = merge_buffers(func, [pa.concat_arrays([p[i] for p in parts[:2]])
                                 for i in range(len(parts[0]))],
                          np.concatenate([ident, ident]), n_groups)
    rest = [first, *parts[2:]]
    bufs = [pa.concat_arrays([p[i] for p in rest]) for i in range(len(parts[0]))]
    return func.evaluate(merge_buffers(func, bufs, np.tile(ident, len(rest)), n_groups))


@pytest.mark.parametrize("seed", range(3))
def test_partitions_merge_to_the_complete_result(seed: int) -> None:
    rng = np.random.default_rng(seed)
    n, n_groups = 600, 23
    g = rng.integers(0, n_groups, n)
    g[g == 7] = 8  # an empty group
    x = np.round(rng.normal(50, 20, n), 3)
    y = 0.5 * x + np.round(rng.normal(0, 5, n), 3)
    x[g == 3] = 2.5  # a constant group
    cols = [pa.array(x, mask=rng.random(n) < 0.1), pa.array(y, mask=rng.random(n) < 0.1)]
    funcs = [StddevPop(X), VarianceSamp(X), Skewness(X), Kurtosis(Y), CovSample(X, Y),
             Corr(X, Y), RegrSXY(Y, X), RegrSlope(Y, X), RegrIntercept(Y, X), RegrR2(Y, X)]
    cuts = sorted(rng.choice(np.arange(1, n), 4, replace=False).tolist())
    for f in funcs:
        args = cols[:len(f.children)] if f.children[0] is X else cols[::-1][:len(f.children)]
        complete = f.aggregate(args, g, n_groups).to_pylist()
        merged = _two_phase(f, args, g, n_groups, cuts).to_pylist()
        assert [v is None for v in complete] == [v is None for v in merged], f
        assert all(a is None or _same(a, b) for a, b in zip(complete, merged)), \
            (f, complete, merged)
        assert complete[7] is None
    # the constant group: moments exactly 0 in both paths
    for f in (VarianceSamp(X), Skewness(X)):
        want = 0.0 if isinstance(f, VarianceSamp) else None
        assert f.aggregate(cols[:1], g, n_groups).to_pylist()[3] == want
        assert _two_phase(f, cols[:1], g, n_groups, cuts).to_pylist()[3] == want


def test_regr_avgx_of_decimals_keeps_the_average_buffers() -> None:
    f = RegrAvgX(L8, DEC)
    assert f.data_type == T.DecimalType(16, 7)
    assert [b.name for b in f.buffer_fields()] == ["sum", "count"]
    y = pa.array([1, None, 3, 4], pa.int64())
    x = pa.array([Decimal("1.5"), Decimal("2.0"), None, Decimal("0.25")], pa.decimal128(12, 3))
    g = np.array([0, 0, 0, 1])
    got = _two_phase(f, [y, x], g, 2, [1, 3])
    assert got.to_pylist() == [Decimal("1.5000000"), Decimal("0.2500000")]


def test_moments_exact_on_known_values() -> None:
    """Against exact rational arithmetic, far from 0 (1e9 + [0, 1)): the COMPLETE path keeps
    the mean to twice double precision, so every moment is right to rounding.  Merged buffers
    hold the mean as a double (Spark's ``avg``), whose rounding (ulp(1e9) = 1.2e-7) bounds what
    any merge can keep: about 1e-8 relative here, as in Spark."""
    rng = np.random.default_rng(3)
    x = 1e9 + np.round(rng.random(500), 6)
    g = np.zeros(500, dtype=np.int64)
    xs = [Fraction(v) for v in x.tolist()]
    mean = sum(xs) / len(xs)
    m2 = sum((v - mean) ** 2 for v in xs)
    m3 = sum((v - mean) ** 3 for v in xs)
    m4 = sum((v - mean) ** 4 for v in xs)
    arr = [pa.array(x)]
    assert math.isclose(VarianceSamp(X).aggregate(arr, g, 1)[0].as_py(), float(m2 / 499),
                        rel_tol=1e-12)
    assert math.isclose(Skewness(X).aggregate(arr, g, 1)[0].as_py(),
                        math.sqrt(500) * float(m3) / float(m2) ** 1.5, rel_tol=1e-11)
    assert math.isclose(Kurtosis(X).aggregate(arr, g, 1)[0].as_py(),
                        float(500 * m4 / (m2 * m2)) - 3, rel_tol=1e-12)
    cuts = [100, 101, 350]
    assert math.isclose(_two_phase(VarianceSamp(X), arr, g, 1, cuts)[0].as_py(),
                        float(m2 / 499), rel_tol=5e-8)


@pytest.mark.parametrize("cls, op", [(BitAndAgg, lambda a, b: a & b),
                                     (BitOrAgg, lambda a, b: a | b),
                                     (BitXorAgg, lambda a, b: a ^ b)])
@pytest.mark.parametrize("arrow_type", [pa.int8(), pa.int16(), pa.int32(), pa.int64()])
def test_bit_operations_exact(cls, op, arrow_type) -> None:
    rng = np.random.default_rng(1)
    bits = arrow_type.bit_width
    n, n_groups = 300, 9
    v = rng.integers(-(1 << (bits - 1)), 1 << (bits - 1), n, dtype=np.int64)
    nulls = rng.random(n) < 0.2
    g = rng.integers(0, n_groups, n)
    g[g == 4] = 5
    arr = pa.array(v, arrow_type, mask=nulls)
    func = cls(AttributeReference("v", T.from_arrow(arrow_type)))
    want = [reduce(op, [int(a) for a, gg, nl in zip(v, g, nulls) if gg == j and not nl], 0 if
                   cls is not BitAndAgg else -1) if ((g == j) & ~nulls).any() else None
            for j in range(n_groups)]
    got = func.aggregate([arr], g, n_groups)
    assert got.type == arrow_type and got.to_pylist() == want
    assert _two_phase(func, [arr], g, n_groups, [50, 51, 200]).to_pylist() == want


def test_names_types_and_lookup() -> None:
    i = AttributeReference("i", T.INT)
    cases = {
        ("stddev", (X,)): ("stddev(x)", "StddevSamp"), ("std", (X,)): ("std(x)", "StddevSamp"),
        ("variance", (X,)): ("variance(x)", "VarianceSamp"),
        ("regr_slope", (Y, X)): ("regr_slope(y, x)", "RegrSlope"),
        ("bit_xor", (i,)): ("bit_xor(i)", "BitXorAgg"),
    }
    for (name, args), (sql, cls) in cases.items():
        e = lookup_aggregate(name, args)
        assert e.sql() == sql and type(e.func).__name__ == cls
    assert lookup_aggregate("bit_and", (i,)).data_type == T.INT
    assert lookup_aggregate("regr_count", (X, Y)).func.nullable is False
    assert [b.name for b in lookup_aggregate("regr_slope", (Y, X)).func.buffer_fields()] == \
        ["n", "xAvg", "yAvg", "ck", "n", "avg", "m2"]
    assert [b.name for b in lookup_aggregate("kurtosis", (X,)).func.buffer_fields()] == \
        ["n", "avg", "m2", "m3", "m4"]
    assert RegrR2(Y, X).implicit_cast_targets() == (None, None)
    assert Corr(i, AttributeReference("s", T.STRING)).implicit_cast_targets() == \
        (T.DOUBLE, T.DOUBLE)
    assert BitAndAgg(AttributeReference("s", T.STRING)).implicit_cast_targets() == (None,)


@pytest.mark.parametrize("text, name", [("any(b)", "any"), ("ANY(DISTINCT b)", "any"),
                                        ("max_by(a, b)", "max_by"), ("MIN_BY(a, b)", "min_by")])
def test_parsed_as_plain_calls(text: str, name: str) -> None:
    """sqlglot reads ``any`` as a quantifier and ``max_by`` as its ArgMax; Ember's dialect keeps
    them calls the registry resolves (and names as written)."""
    from ember.expressions.base import UnresolvedFunction
    from ember.sql import parse_expression

    e = parse_expression(text)
    assert isinstance(e, UnresolvedFunction) and e.fn_name.lower() == name


#: Spark's row-by-row update overflows ``x - avg`` (1e308 then -1e308 in one partition): its
#: m2 is NaN, so every moment is; where only a product overflows, the variance is Infinity.
#: Results that do not depend on how Spark splits the VALUES rows into partitions.
OVERFLOW = ("SELECT stddev(x), var_samp(x), var_pop(x), skewness(x), kurtosis(x), corr(x, x),"
            " covar_samp(x, x) FROM VALUES {} AS t(x)")
OVERFLOW_ROWS = ["(1e308), (-1e308), (1e308)", "(1e308), (0D), (-1e308)", "(1e200), (-1e200)",
                 "(1.7e308), (-1.7e308), (0D), (0D)"]


@pytest.mark.differential
@pytest.mark.parametrize("runtime", RUNTIMES)
def test_update_overflow_matches_spark(spark: Any, runtime: str) -> None:
    s = new_session(runtime=runtime)
    for rows in OVERFLOW_ROWS:
        q = OVERFLOW.format(rows)
        want = sql_outcome(spark.sql, q, is_spark=True)
        assert sql_outcome(s.sql, q, is_spark=False) == want, q
