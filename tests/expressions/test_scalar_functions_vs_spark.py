"""Issue 22's scalar functions against PySpark 4.3 on both runtimes: column names, types,
nullability and rows over a random table with NULLs and extremes (each family's expressions in
one query, so one Spark call checks dozens of functions), plus error classes (one query each).

``EMBER_FUNCTIONS_SWEEP=1`` runs every family over more rows and several seeds, with ANSI on
and off.
"""

from __future__ import annotations

import math
import os
import random
from typing import Any

import pytest

from tests.conformance.ember_adapter import RUNTIMES, new_session
from tests.differential.compare import Failed, sql_outcome

SWEEP = os.environ.get("EMBER_FUNCTIONS_SWEEP") == "1"
SEEDS = (1, 2, 3, 4) if SWEEP else (1,)
ROWS = 200 if SWEEP else 40

#: no 'ß': Java upper-cases it to 'SS' (full case mapping), Arrow's utf8_upper to 'ẞ' (a known
#: difference of upper/initcap, listed in the registry's docstring)
_STRINGS = ["", " ", "a", "ab cd", "hELLo wORLD", "x,y,z", "a.b.c.d", "é", "naïve café",
            "日本語", "  padded  ", "it's", "Ωmega", "1a2b", "AbC-dEf", "tab\tsep", "0x1F",
            "😀 smile", "a..b", "z", "9", "Long " * 5]
_DOUBLES = [0.0, -0.0, 1.5, -2.5, 0.5, 1e-300, 1e300, -1e300, 3.14159, 2.675, -7.5, 1e10,
            float("nan"), float("inf"), float("-inf"), 0.1, 0.99999, -1.0, 1.0, 123.456]
_INTS = [0, 1, -1, 2, 7, -8, 31, 32, 33, 63, 64, 100, 2147483647, -2147483648, 20, 21, 5]
_LONGS = [0, 1, -1, 9223372036854775807, -9223372036854775808, 1583298367, -86401, 4096,
          123456789012]


def _sql_double(v: float) -> str:
    if math.isnan(v):
        return "CAST('NaN' AS DOUBLE)"
    if math.isinf(v):
        return f"CAST('{'-' if v < 0 else ''}Infinity' AS DOUBLE)"
    return f"CAST({v!r} AS DOUBLE)"


def _sql_str(v: str) -> str:
    return "'" + v.replace("\\", "\\\\").replace("'", "\\'") + "'"


def table_sql(seed: int, rows: int = ROWS) -> str:
    """A temporary view ``t`` of ``rows`` random rows (every column has NULLs)."""
    rnd = random.Random(seed)

    def maybe(text: str) -> str:
        return "NULL" if rnd.random() < 0.12 else text

    values = []
    for k in range(rows):
        ts_us = rnd.randrange(-2_000_000_000, 4_000_000_000) * 1_000_000 + rnd.randrange(10**6)
        values.append("(" + ", ".join([
            str(k),
            maybe(_sql_double(rnd.choice(_DOUBLES) if rnd.random() < 0.5 else
                              rnd.uniform(-1000, 1000))),
            maybe(f"CAST({rnd.choice(_INTS) if rnd.random() < 0.6 else rnd.randrange(-10**6, 10**6)} AS INT)"),
            maybe(f"CAST({rnd.choice(_LONGS)} AS BIGINT)"),
            maybe(_sql_str(rnd.choice(_STRINGS))),
            maybe(f"CAST({rnd.uniform(-10**6, 10**6):.3f} AS DECIMAL(10, 3))"),
            maybe(f"timestamp_micros({ts_us})"),
            maybe(f"DATE'{1900 + rnd.randrange(200):04d}-{rnd.randrange(1, 13):02d}-"
                  f"{rnd.randrange(1, 29):02d}'"),
            maybe(f"CAST({rnd.randrange(-128, 128)} AS TINYINT)"),
            maybe(str(rnd.randrange(-3, 12))),
        ]) + ")")
    return ("CREATE OR REPLACE TEMPORARY VIEW t AS SELECT * FROM VALUES " + ", ".join(values)
            + " AS t(k, d, i, l, s, dec, ts, dt, b, n)")


#: family -> select list (every function once or more; no expression that can raise on the data)
FAMILIES: dict[str, list[str]] = {
    "math": [
        "acos(d)", "asin(d)", "atan(d)", "cos(d)", "sin(d)", "tan(d)", "cosh(d)", "sinh(d)",
        "tanh(d)", "acosh(d)", "asinh(d)", "atanh(d)", "cot(d)", "sec(d)", "csc(d)",
        "degrees(d)", "radians(d)", "expm1(d)", "log1p(d)", "rint(d)", "atan2(d, i)",
        "hypot(d, n)", "bround(d)", "bround(d, 1)", "bround(dec, 2)", "bround(dec, -2)",
        "bround(i % 1000, -1)", "bround(b, 0)", "factorial(n)", "factorial(i)",
        "width_bucket(d, 0, 100, 5)", "width_bucket(d, 100, -100, n)", "isnan(d)",
        "nanvl(d, CAST(n AS DOUBLE))", "sin(i)", "degrees(dec)",
    ],
    "bitwise": [
        "shiftleft(i, n)", "shiftleft(l, n)", "shiftright(i, n)", "shiftright(l, 65)",
        "shiftrightunsigned(i, n)", "shiftrightunsigned(l, n)", "shiftleft(b, 3)",
        "bit_count(i)", "bit_count(l)", "bit_count(b)", "bit_count(i > 0)", "bit_get(i, 3)",
        "getbit(l, 63)", "getbit(b, 7)", "~i", "~l", "~b",
    ],
    "string": [
        "initcap(s)", "left(s, n)", "right(s, n)", "left(s, 2)", "repeat(s, n)",
        "space(n)", "reverse(s)", "ascii(s)", "chr(i)", "char(n + 60)", "octet_length(s)",
        "bit_length(s)", "base64(s)", "unbase64(base64(s))", "encode(s, 'UTF-8')",
        "encode(s, 'UTF-16BE')", "decode(encode(s, 'utf-16le'), 'UTF-16LE')",
        "decode(encode(s, 'UTF-8'), 'UTF-8')", "translate(s, 'aeé ', 'xY')",
        "substring_index(s, '.', n - 4)", "substring_index(s, 'a', 1)",
        "substring_index(s, ' ', -1)", "quote(s)", "find_in_set(s, 'a,x,y,z,ab cd')",
        "find_in_set('b', s)", "elt(pmod(n, 3) + 1, s, 'x', upper(s))", "overlay(s, 'XY', n)",
        "overlay(s PLACING '_' FROM 2 FOR 3)", "btrim(s)", "btrim(s, ' a')",
        "decode(n, 1, 'one', 2, 'two', NULL, 'none', 'other')", "typeof(s)", "typeof(dec)",
        "typeof(ts)",
    ],
    "datetime": [
        "date_trunc('YEAR', ts)", "date_trunc('quarter', ts)", "date_trunc('MM', ts)",
        "date_trunc('week', ts)", "date_trunc('DAY', ts)", "date_trunc('hour', ts)",
        "date_trunc('minute', ts)", "date_trunc('second', ts)",
        "date_trunc('millisecond', ts)", "date_trunc('bogus', ts)", "trunc(dt, 'year')",
        "trunc(dt, 'MM')", "trunc(dt, 'week')", "trunc(dt, 'quarter')", "trunc(dt, 'day')",
        "unix_timestamp(ts)", "unix_timestamp(dt)", "to_unix_timestamp(ts)",
        "unix_timestamp(CAST(dt AS STRING), 'yyyy-MM-dd')", "from_unixtime(l % 100000000000)",
        "from_unixtime(i, 'yyyy/MM/dd HH')", "try_to_timestamp(s)", "try_to_date(s)",
    ],
    "try": [
        "try_add(i, n)", "try_add(i, 2147483600)", "try_subtract(i, 2147483600)",
        "try_multiply(i, i)", "try_multiply(l, n)", "try_divide(i, n)", "try_divide(dec, n)",
        "try_divide(d, n)", "try_mod(i, n)", "try_mod(l, n - 3)", "try_add(d, dec)",
        "try_add(l, l)",
    ],
    "hash": [
        "hash(d)", "hash(i)", "hash(l)", "hash(s)", "hash(dec)", "hash(ts)", "hash(dt)",
        "hash(b)", "hash(i > 0)", "hash(CAST(d AS FLOAT))", "hash(CAST(dec AS DECIMAL(30, 5)))",
        "hash(CAST(b AS SMALLINT))", "hash(encode(s, 'UTF-8'))", "hash(d, i, l, s, dec, ts, dt, b)",
        "hash(NULL)", "hash(-0.0D)", "xxhash64(d)", "xxhash64(i)", "xxhash64(l)", "xxhash64(s)",
        "xxhash64(dec)", "xxhash64(ts)", "xxhash64(dt)", "xxhash64(CAST(d AS FLOAT))",
        "xxhash64(CAST(dec AS DECIMAL(30, 5)))", "xxhash64(repeat(s, 9))",
        "xxhash64(d, i, l, s, dec, ts, dt, b)", "md5(s)", "sha1(s)", "sha(s)", "sha2(s, 0)",
        "sha2(s, 224)", "sha2(s, 256)", "sha2(s, 384)", "sha2(s, 512)", "sha2(s, 1)",
        "crc32(s)", "crc32(repeat(s, 3))", "md5(encode(s, 'UTF-16LE'))",
    ],
}

#: queries that must fail with Spark's error class (checked one by one)
ERRORS: dict[str, str] = {
    "bit_get_range": "SELECT bit_get(i, 40) FROM t",
    "elt_ansi": "SELECT elt(n + 10, s) FROM t WHERE n IS NOT NULL",
    "charset": "SELECT encode(s, 'latin-9') FROM t",
    "bround_overflow": "SELECT bround(2147483647 + k * 0, -1) FROM t",
    "unix_ts_parse": "SELECT unix_timestamp(s, 'yyyy-MM-dd') FROM t WHERE s = 'ab cd'",
}


def family_query(family: str) -> str:
    return f"SELECT k, {', '.join(FAMILIES[family])} FROM t"


#: the default run checks every family in one query (one Spark call per case); the sweep runs
#: them one by one, so a failure names its family
QUERIES = {f: family_query(f) for f in FAMILIES} if SWEEP else {
    "all": f"SELECT k, {', '.join(e for f in FAMILIES.values() for e in f)} FROM t"}
#: partition-dependent functions over inputs both engines split alike (``range`` with an explicit
#: number of partitions): Spark's XORShiftRandom seeded with seed + partition index
QUERIES["partitioned"] = (
    "SELECT id, rand(7), randn(7), rand(-3L), random(0), randn(9223372036854775807L), "
    "monotonically_increasing_id(), spark_partition_id(), uuid() IS NOT NULL "
    f"FROM range(0, {3000 if SWEEP else 300}, 1, 3)")


def _outcomes(session: Any, seed: int, is_spark: bool, ansi: bool,
              errors: bool = True) -> dict[str, Any]:
    """The outcome of every query (and, with ``errors`` and ANSI on, of the error queries)."""
    session.sql(table_sql(seed))
    session.conf.set("spark.sql.ansi.enabled", "true" if ansi else "false")
    out = {f: sql_outcome(session.sql, q, is_spark=is_spark) for f, q in QUERIES.items()}
    if ansi and errors:
        out.update({f"error:{name}": sql_outcome(session.sql, q, is_spark=is_spark)
                    for name, q in ERRORS.items()})
    return out


CASES = [(seed, ansi) for seed in SEEDS for ansi in ((True, False) if SWEEP else (True,))]


@pytest.fixture(scope="module")
def spark_outcomes(spark: Any) -> dict[tuple[int, bool], dict[str, Any]]:
    session = spark.newSession()
    return {case: _outcomes(session, case[0], is_spark=True, ansi=case[1]) for case in CASES}


def _compare(expected: Any, actual: Any, label: str) -> None:
    if isinstance(expected, Failed) or isinstance(actual, Failed):
        assert isinstance(expected, Failed) and isinstance(actual, Failed), (label, expected,
                                                                             actual)
        assert expected.cls == actual.cls, (label, expected, actual)
        return
    assert expected["schema"] == actual["schema"], (label, expected["schema"], actual["schema"])
    for e_row, a_row in zip(expected["rows"], actual["rows"]):
        assert e_row == a_row, (label, [(name, e, a) for (name, *_), e, a in zip(
            expected["schema"], e_row, a_row) if e != a])
    assert len(expected["rows"]) == len(actual["rows"]), label


@pytest.mark.differential
@pytest.mark.parametrize("runtime", RUNTIMES)
@pytest.mark.parametrize("case", CASES, ids=lambda c: f"seed{c[0]}-{'ansi' if c[1] else 'legacy'}")
def test_scalar_functions_match_spark(spark_outcomes, case, runtime: str) -> None:
    session = new_session(runtime=runtime)
    # the error classes are the local runtime's (the Spark runtime runs the same kernels)
    actual = _outcomes(session, case[0], is_spark=False, ansi=case[1],
                       errors=runtime == "local" or SWEEP)
    for label, result in actual.items():
        _compare(spark_outcomes[case][label], result, label)


def test_oracle_raises_the_expected_errors(spark_outcomes) -> None:
    """The error queries fail on Spark (so the comparison above checks an error class) and the
    function queries do not (so it compares rows)."""
    outcomes = spark_outcomes[CASES[0]]
    assert not [q for q in QUERIES if isinstance(outcomes[q], Failed)], outcomes
    assert all(isinstance(outcomes[f"error:{n}"], Failed) for n in ERRORS), {
        n: outcomes[f"error:{n}"] for n in ERRORS if not isinstance(outcomes[f"error:{n}"],
                                                                    Failed)}


@pytest.mark.parametrize("runtime", RUNTIMES)
def test_uuid_values_are_distinct_version_4(runtime: str) -> None:
    """``uuid()`` is random in both engines: distinct RFC 4122 version-4 strings."""
    import re

    session = new_session(runtime=runtime)
    rows = session.sql("SELECT uuid() AS u FROM range(0, 2000, 1, 3)").collect()
    values = [r[0] for r in rows]
    assert len(set(values)) == 2000
    pattern = re.compile(r"^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$")
    assert all(pattern.match(v) for v in values), values[:3]
