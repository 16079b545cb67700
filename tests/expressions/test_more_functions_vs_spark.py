"""Issue 22's further functions (``ember.expressions.text_functions``, ``misc_functions``,
``timestamp_functions`` ...) against PySpark 4.3 on both runtimes: column names, types,
nullability and rows over the random table of :mod:`test_scalar_functions_vs_spark` (NULLs and
extreme values), every family in one query (one Spark call), plus the error classes.

``EMBER_FUNCTIONS_SWEEP=1`` runs each family on its own over more rows and seeds, ANSI on and
off.
"""

from __future__ import annotations

from typing import Any

import pytest

from tests.conformance.ember_adapter import RUNTIMES, new_session
from tests.differential.compare import Failed, sql_outcome
from tests.expressions.test_scalar_functions_vs_spark import (
    CASES, SWEEP, _compare, table_sql,
)

_URL = ("concat('https://user:pw@h', k, '.example.com:8080/p/', url_encode(s), '?q=', "
        "url_encode(s), '&k=', coalesce(i, 0), '#f', k)")

#: family -> select list (no expression that can raise on the data)
FAMILIES: dict[str, list[str]] = {
    "format_string": [
        "format_string('%s|%d|%.3f|%10s|%-6d|%x|%e', s, i, d, s, n, l, d)",
        "printf('%s %s %S', dec, ts, s)", "format_string('%b %c|%5b', s, n + 60, i > 0)",
        "format_string('%08.2f|%,d|%+.1e|%g|%(,.2f', d, l, d, d, d)",
        "format_string('%2$s-%1$s|%3$o|%4$X|%5$#x', s, k, b, l, i)", "format_string(s, i)",
        "format_string('%.1f %s', CAST(d AS FLOAT), CAST(d AS FLOAT))",
        "format_string('%s %s', dt, b)", "printf(NULL, s)", "format_string('%%|%n|%5.2s|', s)",
    ],
    "conv": [
        "conv(substr(s, 1, 5), 36, 10)", "conv(CAST(i AS STRING), 10, -16)", "conv(l, 10, 2)",
        "conv(hex(l), 16, -10)", "conv(i, 10, 36)", "conv(b, 10, -2)", "conv(n, 10, 16)",
        "conv(CAST(l AS STRING), n + 5, 10)", "conv(s, 16, 10)",
    ],
    "binary": [
        "to_binary(hex(s))", "to_binary(s, 'utf-8')", "to_binary(base64(s), 'BASE64')",
        "try_to_binary(s, 'hex')", "try_to_binary(s, 'base64')", "try_to_binary(s)",
        "to_binary(substr(hex(s), 2), 'hex')", "to_base32(s)", "from_base32(to_base32(s))",
        "from_base32(s)", "to_base32(encode(s, 'UTF-16LE'))", "hmac(concat('k', s), 'k')",
        "hmac('key', s, 'SHA-512')", "hmac(concat(s, 'k'), s, 'md5')",
        "hmac(encode(s || 'x', 'UTF-8'), 'm', "
        "'sha1')",
    ],
    "mask_url": [
        "mask(s)", "mask(s, 'U', 'l', '#', '*')", "mask(s, NULL, 'z')", "mask(s, 'Q', NULL)",
        f"parse_url({_URL}, 'HOST')", f"parse_url({_URL}, 'PATH')",
        f"parse_url({_URL}, 'QUERY')", f"parse_url({_URL}, 'QUERY', 'k')",
        f"parse_url({_URL}, 'REF')", f"parse_url({_URL}, 'PROTOCOL')",
        f"parse_url({_URL}, 'FILE')", f"parse_url({_URL}, 'AUTHORITY')",
        f"parse_url({_URL}, 'USERINFO')", f"parse_url({_URL}, 'QUERY', 'q')",
        "try_parse_url(concat('http://', s), 'HOST')", "try_parse_url(s, 'PATH')",
        "try_parse_url(concat('ftp://', s, '/x?', s), 'QUERY')",
    ],
    "similarity_utf8": [
        "jaro_winkler_similarity(s, 'ab cd')", "jaro_winkler_similarity(s, upper(s))",
        "jaro_winkler_similarity(s, reverse(s))", "jaro_winkler_similarity(initcap(s), s)",
        "is_valid_utf8(s)", "make_valid_utf8(s)", "validate_utf8(s)", "try_validate_utf8(s)",
        "is_valid_utf8(unhex(concat(hex(s), 'FF')))",
        "make_valid_utf8(unhex(concat(hex(s), 'C3')))",
        "try_validate_utf8(unhex(concat('80', hex(s))))",
    ],
    "bitwise": [
        "i & l", "i | n", "b ^ n", "l & l", "i | 2 & n ^ b", "(i ^ n) = 0", "b & b", "b | NULL",
        "CAST(n AS SMALLINT) ^ b",
    ],
    "datetime_patterns": [
        "date_format(ts, 'G GGGG yyyyy L LL LLL LLLL QQQ QQQQ q qq qqq F K KK k kk')",
        "date_format(ts, 'VV O OOOO X XX XXX x xx xxx Z ZZ ZZZ ZZZZ ZZZZZ')",
        "date_format(dt, 'yyyyyy-LL F k')",
    ],
    "misc": [
        "assert_true(k >= 0)", "assert_true(k >= 0, 'never')", "if(k < 0, raise_error(s), k)",
        "typeof(assert_true(k >= 0))", "current_user()", "session_user()", "user()",
        "current_path()", "coalesce(s, if(k < 0, raise_error('x'), 'no s'))",
    ],
    "timestamp": [
        "make_timestamp(1900 + abs(n) * 13, pmod(i, 12) + 1, pmod(k, 28) + 1, pmod(k, 24), "
        "pmod(i, 60), pmod(dec, 60))",
        "try_make_timestamp(year(dt), month(dt), n + 20, pmod(i, 30), n * 6, pmod(dec, 62))",
        "make_timestamp(year(ts2037), 3, pmod(k, 28) + 1, pmod(i, 24), 30, 0, 'America/New_York')",
        "try_make_timestamp(year(ts2037), month(ts2037), n + 20, 2, 30, pmod(d, 61), "
        "'Europe/Paris')",
        "make_timestamp(2020, 3, 8, 2, 30, 0, 'America/New_York')",
        "make_timestamp(2020, 11, 1, 1, 30, 60, 'America/New_York')",
        "make_timestamp(2001, 1, 1, 0, 0, CAST(pmod(n, 60) AS DOUBLE) + 0.5)",
        "timestampadd(YEAR, n, ts)", "timestampadd(QUARTER, n, dt)", "timestampadd(MONTH, n * 7, ts)",
        "dateadd(WEEK, n, ts)", "date_add(DAY, n * 100, ts)", "timestampadd(DAYOFYEAR, n, dt)",
        "timestampadd(HOUR, i % 100000, ts)", "timestampadd(MINUTE, i % 1000000, ts)", "timestampadd(SECOND, i, ts)",
        "timestampadd(MILLISECOND, i, ts)", "timestampadd(MICROSECOND, l % 1000000000000, ts)",
        "timestampadd(MONTH, 1, last_day(dt))", "timestampadd(month, n, dt)", "datediff(Day, dt, ts)",
        "timestampdiff(YEAR, ts, dt)", "timestampdiff(QUARTER, dt, ts)", "timestampdiff(MONTH, ts, ts2037)",
        "datediff(WEEK, dt, ts)", "date_diff(DAY, ts, dt)", "timestampdiff(HOUR, dt, ts)",
        "timestampdiff(MINUTE, ts, ts2037)", "timestampdiff(SECOND, dt, ts)",
        "timestampdiff(MILLISECOND, ts, dt)", "timestampdiff(MICROSECOND, ts2037, ts)",
        "timestampdiff(MONTH, TIMESTAMP'2020-01-31 10:00:00', timestampadd(MONTH, n, "
        "TIMESTAMP'2020-01-31 09:00:00'))",
    ],
}

#: queries that must fail with Spark's error class
ERRORS: dict[str, str] = {
    "conv_overflow": "SELECT conv(repeat('z', 20 + k * 0), 36, 10) FROM t",
    "to_binary_hex": "SELECT to_binary(s, 'hex') FROM t WHERE s = 'ab cd'",
    "to_binary_base64": "SELECT to_binary('!' || s, 'base64') FROM t",
    "to_binary_format": "SELECT to_binary(s, 'bogus') FROM t",
    "to_binary_fmt_column": "SELECT to_binary(s, s) FROM t",
    "parse_url": "SELECT parse_url(concat('http://h/', s, ' x'), 'PATH') FROM t",
    "validate_utf8": "SELECT validate_utf8(unhex(concat('FF', hex(s)))) FROM t",
    "hmac_algorithm": "SELECT hmac('key', s, 'SHA-999') FROM t",
    "mask_size": "SELECT mask(s, 'XY') FROM t",
    "mask_foldable": "SELECT mask(s, s) FROM t",
    "to_base32_type": "SELECT to_base32(i) FROM t",
    "hmac_empty_key": "SELECT hmac(s, s) FROM t",
    "bitwise_type": "SELECT d | i FROM t",
    "pattern_week_year": "SELECT date_format(ts, 'YYYY') FROM t",
    "pattern_week_day": "SELECT date_format(ts, 'e') FROM t",
    "pattern_length": "SELECT date_format(ts, 'GGGGG') FROM t",
    "randstr_length": "SELECT randstr(-1, 0) FROM t",
    "randstr_foldable": "SELECT randstr(k, 0) FROM t",
    "uniform_seed": "SELECT uniform(1, 2, k) FROM t",
    "uniform_type": "SELECT uniform(s, 2, 0) FROM t",
    "assert_true": "SELECT assert_true(k < 3) FROM t",
    "assert_true_type": "SELECT assert_true(k) FROM t",
    "raise_error": "SELECT raise_error(concat('boom ', k)) FROM t",
    "make_timestamp_day": "SELECT make_timestamp(2020, 2, 30 + k * 0, 0, 0, 0) FROM t",
    "make_timestamp_hour": "SELECT make_timestamp(2020, 1, 1, 24 + k, 0, 0) FROM t",
    "make_timestamp_fraction": "SELECT make_timestamp(2020, 1, 1, 0, 0, 60.5 + k) FROM t",
    "timestampadd_string_unit": "SELECT timestampadd('YEAR', 1, ts) FROM t",
    "timestampadd_overflow": "SELECT timestampadd(HOUR, 9223372036854775807, ts) FROM t "
                             "WHERE ts IS NOT NULL",
    "timestampadd_day_overflow": "SELECT timestampadd(DAY, 2147483647, ts) FROM t "
                                 "WHERE ts IS NOT NULL",
}

QUERIES = {f: f"SELECT k, {', '.join(e)} FROM t" for f, e in FAMILIES.items()} if SWEEP else {
    "all": f"SELECT k, {', '.join(e for f in FAMILIES.values() for e in f)} FROM t"}
#: aggregates (try_sum, try_avg), over the whole table and per group (``product`` is no SQL
#: function: test_product_matches_pyspark)
_BIG = "(CAST(dec AS DECIMAL(38, 3)) + 90000000000000000000000000000000000.000)"
_AGGREGATES = ("try_sum(i), try_sum(l), try_sum(b), try_sum(dec), try_sum(d), try_avg(i), "
               f"try_avg(l % 1000000), try_avg(dec), try_avg(d), try_avg(b), try_sum({_BIG}), "
               f"try_avg({_BIG}), try_sum(CAST(i AS BIGINT) * 4294967296)")
QUERIES["aggregates"] = f"SELECT {_AGGREGATES} FROM t"
#: the seeded generators over inputs both engines split alike: XORShiftRandom(seed + partition)
QUERIES["generators"] = (
    "SELECT id, randstr(5, 0), randstr(CAST(2 AS TINYINT), -7L), uniform(10, 20, 0), "
    "uniform(5.5, 10.5, 3), uniform(-5L, 20, 1), uniform(1.5D, 2, 2), uniform(CAST(1 AS "
    "SMALLINT), CAST(9 AS TINYINT), 0), uniform(1.5F, 9, 4), uniform(1, 2, NULL), "
    "randstr(NULL, 0), uniform(NULL, 1, 0), uniform(10, 0, 5), uniform(0, 2.5, 9) "
    f"FROM range(0, {3000 if SWEEP else 300}, 1, 3)")
QUERIES["grouped_aggregates"] = f"SELECT k < 20, {_AGGREGATES} FROM t GROUP BY k < 20"


#: the queries the Spark runtime also runs by default (the kernels are the local runtime's; the
#: sweep runs them all there)
_SPARK_RUNTIME_QUERIES = ("all", "generators")


def _outcomes(session: Any, seed: int, is_spark: bool, ansi: bool,
              errors: bool = True, only: tuple[str, ...] | None = None) -> dict[str, Any]:
    session.sql(table_sql(seed))
    session.conf.set("spark.sql.ansi.enabled", "true" if ansi else "false")
    out = {f: sql_outcome(session.sql, q, is_spark=is_spark) for f, q in QUERIES.items()
           if only is None or f in only}
    if ansi and errors:
        out.update({f"error:{name}": sql_outcome(session.sql, q, is_spark=is_spark)
                    for name, q in ERRORS.items()})
    return out


@pytest.fixture(scope="module")
def spark_outcomes(spark: Any) -> dict[tuple[int, bool], dict[str, Any]]:
    session = spark.newSession()
    return {case: _outcomes(session, case[0], is_spark=True, ansi=case[1]) for case in CASES}


@pytest.mark.differential
@pytest.mark.parametrize("runtime", RUNTIMES)
@pytest.mark.parametrize("case", CASES, ids=lambda c: f"seed{c[0]}-{'ansi' if c[1] else 'legacy'}")
def test_more_functions_match_spark(spark_outcomes, case, runtime: str) -> None:
    session = new_session(runtime=runtime)
    actual = _outcomes(session, case[0], is_spark=False, ansi=case[1],
                       errors=runtime == "local" or SWEEP,
                       only=None if runtime == "local" or SWEEP else _SPARK_RUNTIME_QUERIES)
    for label, result in actual.items():
        _compare(spark_outcomes[case][label], result, label)


def test_oracle_raises_the_expected_errors(spark_outcomes) -> None:
    outcomes = spark_outcomes[CASES[0]]
    assert not [q for q in QUERIES if isinstance(outcomes[q], Failed)], outcomes
    assert all(isinstance(outcomes[f"error:{n}"], Failed) for n in ERRORS), {
        n: outcomes[f"error:{n}"] for n in ERRORS if not isinstance(outcomes[f"error:{n}"],
                                                                    Failed)}


#: the same calls through pyspark.sql.functions and ember.functions (PySpark's signatures:
#: which arguments are literals, which column names)
_SOURCE = ("SELECT 'ab cd' AS s, 7 AS n, 255L AS l, 'http://h.com/p?q=1' AS url, "
           "TIMESTAMP'2020-01-31 10:00:00' AS ts, 2.5D AS d")
_CALLS = [
    lambda F: F.format_string("%s-%d", "s", "n"), lambda F: F.printf(F.lit("%x"), "l"),
    lambda F: F.conv("s", 16, 10), lambda F: F.to_binary("s", F.lit("utf-8")),
    lambda F: F.try_to_binary("s"), lambda F: F.to_base32("s"), lambda F: F.hmac("s", "s"),
    lambda F: F.mask("s"), lambda F: F.mask("s", F.lit("U"), F.lit("l")),
    lambda F: F.parse_url("url", F.lit("QUERY"), F.lit("q")), lambda F: F.try_parse_url(
        "url", F.lit("HOST")), lambda F: F.jaro_winkler_similarity("s", F.lit("ab")),
    lambda F: F.is_valid_utf8("s"), lambda F: F.make_valid_utf8("s"),
    lambda F: F.assert_true(F.col("n") > 0), lambda F: F.assert_true(F.col("n") > 0, "bad"),
    lambda F: F.current_user(), lambda F: F.make_timestamp(F.lit(2020), "n", "n", "n", "n", "d"),
    lambda F: F.try_make_timestamp(F.lit(2020), "n", "n", "n", "n", "d", F.lit("Asia/Tokyo")),
    lambda F: F.timestamp_add("month", "n", "ts"), lambda F: F.timestamp_diff("DAY", "ts", "ts"),
    lambda F: F.randstr(4, 1), lambda F: F.uniform(1, 9, 2), lambda F: F.uniform(F.lit(1.5), 2, F.lit(3)),
]
_AGG_CALLS = [lambda F: F.product("n"), lambda F: F.product("d"), lambda F: F.try_sum("l"),
              lambda F: F.try_avg("d"), lambda F: F.approxCountDistinct("s")]


@pytest.mark.differential
@pytest.mark.filterwarnings("ignore:Deprecated in 2.1:FutureWarning")
@pytest.mark.parametrize("runtime", RUNTIMES)
def test_python_calls_match_pyspark(spark: Any, runtime: str) -> None:
    import pyspark.sql.functions as P

    import ember.functions as E

    for calls in (_CALLS, _AGG_CALLS):
        expected = sql_outcome(lambda q: spark.sql(q).select(*[c(P) for c in calls]), _SOURCE,
                               is_spark=True)
        actual = sql_outcome(lambda q: new_session(runtime=runtime).sql(q).select(
            *[c(E) for c in calls]), _SOURCE, is_spark=False)
        _compare(expected, actual, "python calls")


_ZONE_PATTERN = ("SELECT date_format(ts, 'yyyy-MM-dd HH:mm VV O OOOO X XX XXX x xx xxx Z ZZZZ "
                 "ZZZZZ k K F') FROM t")


@pytest.mark.differential
@pytest.mark.parametrize("runtime", RUNTIMES if SWEEP else ("local",))
def test_zone_offset_patterns_match_spark(spark: Any, runtime: str) -> None:
    """Offset and zone letters under session time zones with DST and a half-hour offset."""
    ember = new_session(runtime=runtime)
    oracle = spark.newSession()
    for session in (ember, oracle):
        session.sql(table_sql(2))
    for zone in ("America/New_York", "Asia/Kolkata"):
        oracle.conf.set("spark.sql.session.timeZone", zone)
        ember.conf.set("spark.sql.session.timeZone", zone)
        _compare(sql_outcome(oracle.sql, _ZONE_PATTERN.replace("ts", "ts2037"), is_spark=True),
                 sql_outcome(ember.sql, _ZONE_PATTERN.replace("ts", "ts2037"), is_spark=False),
                 zone)
