"""Decimal arithmetic result types and values against PySpark 4.3, with
``spark.sql.decimalOperations.allowPrecisionLoss`` true (the default) and false (issue 18).

A seeded random sweep: decimal columns of random precision and scale (one row each, in an Arrow
table registered on both engines, so nothing folds to a literal), combined pairwise by
``+ - * / % div pmod`` and ``try_*``; every result column's type and value is compared with
Spark's, on both of Ember's runtimes.  Queries that fail on Spark (a result out of its type's
range) are re-run one expression at a time and compared by error class.
"""

from __future__ import annotations

import random
from decimal import Decimal

import pyarrow as pa
import pytest

from tests.conformance.ember_adapter import RUNTIMES, new_session

KEY = "spark.sql.decimalOperations.allowPrecisionLoss"
SEED = 1806
OPS = ("+", "-", "*", "/", "%", "div", "pmod")


def _types(rng: random.Random, n: int) -> list[tuple[int, int]]:
    # the corners (38 digits, scale 0 or 38) next to random types
    out = [(38, 0), (38, 38), (38, 10), (1, 0), (10, 2), (20, 0)]
    while len(out) < n:
        p = rng.choice((rng.randint(1, 38), rng.randint(28, 38)))
        out.append((p, rng.randint(0, p)))
    return out


def _value(rng: random.Random, p: int, s: int) -> Decimal:
    """A non-zero value of decimal(p, s) with at most one integral digit, so that most results
    fit their type (the ones that do not are compared by error class)."""
    int_part = rng.randint(1, 9) if p > s else 0
    frac = "".join(str(rng.randint(0, 9)) for _ in range(s))
    if s and int_part == 0 and not frac.strip("0"):
        frac = frac[:-1] + "7"
    sign = rng.choice(("", "-"))
    return Decimal(f"{sign}{int_part}.{frac}" if s else f"{sign}{int_part}")


def _table(rng: random.Random) -> tuple[pa.Table, list[tuple[int, int]]]:
    types = _types(rng, 14)
    cols = {f"d{i}": pa.array([_value(rng, p, s)], pa.decimal128(p, s))
            for i, (p, s) in enumerate(types)}
    return pa.table(cols), types


def _expressions(rng: random.Random, n_cols: int, n: int) -> list[str]:
    out = []
    for _ in range(n):
        a, b = f"d{rng.randrange(n_cols)}", f"d{rng.randrange(n_cols)}"
        op = rng.choice(OPS)
        if op in ("pmod",) or op.startswith("try_"):
            out.append(f"{op}({a}, {b})")
        else:
            out.append(f"({a} {op} {b})")
    # nested: the type of an inner result feeds the outer one
    for _ in range(n // 4):
        a, b, c = (f"d{rng.randrange(n_cols)}" for _ in range(3))
        out.append(f"(({a} {rng.choice('+-*/')} {b}) {rng.choice('+-*/')} {c})")
    return out


def _spark_outcome(spark, sql: str):
    try:
        df = spark.sql(sql)
        return [f.dataType.simpleString() for f in df.schema.fields], list(df.collect()[0]), None
    except Exception as e:  # noqa: BLE001 - Spark's error class is the expected outcome
        return None, None, getattr(e, "getCondition", lambda: None)() or type(e).__name__


def _ember_outcome(session, sql: str):
    from ember.errors import EmberError

    try:
        df = session.sql(sql)
        rows = df.collect()
        return [f.data_type.simple_string() for f in df.schema.fields], list(rows[0]), None
    except EmberError as e:
        return None, None, e.error_class


@pytest.mark.parametrize("runtime", RUNTIMES)
@pytest.mark.parametrize("allow_loss", ["true", "false"])
def test_decimal_arithmetic_sweep_matches_spark(spark, runtime, allow_loss):
    rng = random.Random(SEED)
    table, _ = _table(rng)
    exprs = _expressions(rng, table.num_columns, 48)
    session = new_session({KEY: allow_loss}, runtime=runtime)
    session.createDataFrame(table).createOrReplaceTempView("dec_t")
    spark.createDataFrame(table).createOrReplaceTempView("dec_t")
    spark.conf.set(KEY, allow_loss)
    failures = []
    try:
        for start in range(0, len(exprs), 16):
            chunk = exprs[start:start + 16]
            sql = "SELECT " + ", ".join(f"{e} AS c{i}" for i, e in enumerate(chunk)) + " FROM dec_t"
            want = _spark_outcome(spark, sql)
            singles = [(sql, want)] if want[2] is None else [
                (q, _spark_outcome(spark, q)) for q in (f"SELECT {e} AS c0 FROM dec_t"
                                                        for e in chunk)]
            for q, expected in singles:
                got = _ember_outcome(session, q)
                if expected[2] is not None:
                    ok = got[2] is not None and got[2] == expected[2]
                else:
                    ok = got == expected
                if not ok:
                    failures.append(f"{q}\n  spark: {expected}\n  ember: {got}")
    finally:
        spark.conf.unset(KEY)
    assert not failures, f"seed {SEED}, {KEY}={allow_loss}:\n" + "\n".join(failures)


@pytest.mark.parametrize("runtime", RUNTIMES)
def test_issue_repro_divide_without_precision_loss(spark, runtime):
    """Issue 18: the division keeps 7 fraction digits (decimal(38,7)) without precision loss;
    a parent expression and an outer query see that type too."""
    sql = ("SELECT x, x * 2 AS y FROM (SELECT 1.0123456789012345678901234567890123456e31BD / 10.0 "
           "AS x)")
    spark.conf.set(KEY, "false")
    try:
        want = _spark_outcome(spark, sql)
    finally:
        spark.conf.unset(KEY)
    assert want[0] == ["decimal(38,7)", "decimal(38,7)"]
    session = new_session({KEY: "false"}, runtime=runtime)
    assert _ember_outcome(session, sql) == want
    # the default still loses precision, as Spark does
    assert _ember_outcome(new_session(runtime=runtime), sql) == _spark_outcome(spark, sql)


GROUPED = [
    "SELECT m * 2 AS x, count(*) AS n FROM dg GROUP BY m * 2 ORDER BY m * 2",
    "SELECT count(*) AS n FROM dg GROUP BY m * 2 HAVING m * 2 > 3",
    "SELECT m / 3 AS q, sum(k) AS s FROM dg GROUP BY m / 3 HAVING sum(k) > 1 ORDER BY m / 3 DESC",
    "SELECT max(m * m) AS x FROM dg GROUP BY k % 2 HAVING max(m / 7) > 0",
    "SELECT k % 2 AS g, max(m * m) AS x FROM dg GROUP BY k % 2 ORDER BY max(m * m)",
    "SELECT m * 2 AS x FROM dg ORDER BY m * 2 DESC, k",
]


@pytest.mark.parametrize("runtime", RUNTIMES)
@pytest.mark.parametrize("allow_loss", ["true", "false"])
def test_grouped_decimal_expressions_match_spark(spark, runtime, allow_loss):
    """HAVING / ORDER BY repeat a decimal GROUP BY expression: it must match the (coerced)
    grouping expression, whatever allowPrecisionLoss; results as Spark's."""
    view = ("CREATE OR REPLACE TEMP VIEW dg AS SELECT * FROM VALUES (1.50, 2), (2.25, 3), "
            "(1.50, 4) AS t(m, k)")
    session = new_session({KEY: allow_loss}, runtime=runtime)
    session.sql(view)
    spark.sql(view)
    spark.conf.set(KEY, allow_loss)
    try:
        for sql in GROUPED:
            assert _ember_outcome(session, sql) == _spark_outcome(spark, sql), sql
    finally:
        spark.conf.unset(KEY)
