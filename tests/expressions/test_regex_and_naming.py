"""Regex functions, ``locate`` with NULLs, string -> timestamp/date/decimal casts, column names of
calls with literal arguments, and Java double formatting.

Every expectation (column name, values, or error class) was produced by PySpark 4.3 (ANSI on,
UTC session time zone) and is encoded as a literal; no SparkSession is needed here.
"""

from __future__ import annotations

import datetime as dt
from decimal import Decimal

import pytest

import ember
from ember import functions as F
from ember.errors import EmberError
from ember.expressions.regex import java_replacement, translate
from ember.formatting import java_double_str

UTC = dt.timezone.utc


@pytest.fixture(scope="module")
def session():
    s = ember.Session()
    s.sql("create temp view t as select * from values ('abc', 1, 1.5D, date'2020-01-01') "
          "as t(s, a, x, d)")
    return s


def one(session, sql: str):
    df = session.sql(sql)
    rows = df.collect()
    return df.columns, [tuple(r) for r in rows]


def error_class(session, sql: str) -> str:
    with pytest.raises(EmberError) as ei:
        session.sql(sql).collect()
    return ei.value.error_class


# -- regex functions ---------------------------------------------------------------------------

@pytest.mark.parametrize("sql, name, value", [
    ("select s rlike 'b' from t", "RLIKE(s, b)", True),
    ("select s regexp 'b' from t", "RLIKE(s, b)", True),
    ("select s not rlike 'b' from t", "(NOT RLIKE(s, b))", False),
    ("select rlike(s, 'b') from t", "RLIKE(s, b)", True),
    ("select regexp_like(s, 'b') from t", "REGEXP_LIKE(s, b)", True),
    ("select regexp(s, 'b') from t", "REGEXP(s, b)", True),
    ("select s ilike 'A%' from t", "ilike(s, A%)", True),
    ("select s not ilike 'A%' from t", "(NOT ilike(s, A%))", False),
    ("select ilike(s, 'A|%', '|') from t", "ilike(s, A|%)", False),
    ("select s ilike 'A|%' escape '|' from t", "ilike(s, A|%)", False),
    ("select regexp_extract(s, 'a(b)', 1) from t", "regexp_extract(s, a(b), 1)", "b"),
    ("select regexp_extract(s, 'a(b)') from t", "regexp_extract(s, a(b), 1)", "b"),
    ("select regexp_extract(s, 'a(x)?', 1) from t", "regexp_extract(s, a(x)?, 1)", ""),
    ("select regexp_extract(s, 'z', 0) from t", "regexp_extract(s, z, 0)", ""),
    ("select regexp_extract(s, 'a(b)', 1L) from t", "regexp_extract(s, a(b), 1)", "b"),
    ("select regexp_extract('xyz', 'a(b)', 2)", "regexp_extract(xyz, a(b), 2)", ""),
    ("select regexp_replace(s, 'b', 'x') from t", "regexp_replace(s, b, x, 1)", "axc"),
    ("select regexp_replace(s, 'b', 'x', 2) from t", "regexp_replace(s, b, x, 2)", "axc"),
    ("select regexp_replace(s, 'b', 'x', 10) from t", "regexp_replace(s, b, x, 10)", "abc"),
    ("select regexp_replace(s, '(b)', '$1$1') from t", "regexp_replace(s, (b), $1$1, 1)",
     "abbc"),
    ("select regexp_replace(s, '(b)', '\\\\$1') from t", "regexp_replace(s, (b), \\$1, 1)",
     "a$1c"),
    ("select regexp_replace(s, '', '-') from t", "regexp_replace(s, , -, 1)", "-a-b-c-"),
    ("select regexp_replace('aaa', 'a*', 'X')", "regexp_replace(aaa, a*, X, 1)", "XX"),
    ("select regexp_replace('abc', 'a*', 'X')", "regexp_replace(abc, a*, X, 1)", "XXbXcX"),
    ("select regexp_replace('abc', '(b)', '$10')", "regexp_replace(abc, (b), $10, 1)", "ab0c"),
    ("select regexp_replace(s, 'b', 'x', null) from t", "regexp_replace(s, b, x, NULL)", None),
    ("select s rlike null from t", "RLIKE(s, NULL)", None),
    ("select regexp_extract(s, 'a', null) from t", "regexp_extract(s, a, NULL)", None),
    ("select 1234 rlike '23'", "RLIKE(1234, 23)", True),
    ("select regexp_replace(1234, '2', 'x')", "regexp_replace(1234, 2, x, 1)", "1x34"),
    ("select regexp_extract('xAAb', '(?i)(a+)b', 1)", "regexp_extract(xAAb, (?i)(a+)b, 1)", "AA"),
    ("select regexp_extract('aXbX', '(?<n>X)', 1)", "regexp_extract(aXbX, (?<n>X), 1)", "X"),
    ("select 'ABC' ilike 'a%'", "ilike(ABC, a%)", True),
])
def test_regex_functions(session, sql, name, value):
    assert one(session, sql) == ([name], [(value,)])


def test_java_regex_dialect(session):
    # Java: '.' excludes \r, \s includes \x0B, POSIX \p{Upper}, \w is ASCII
    _, rows = one(session, "select rlike('a\\rb', 'a.b'), rlike('a\\u000Bb', 'a\\\\sb'), "
                           "rlike('ABC', '\\\\p{Upper}+'), rlike('é', '\\\\w'), "
                           "rlike('ab', '^b'), rlike('a\\nb', 'a.b')")
    assert rows == [(False, True, True, False, False, False)]


def test_regex_fallback_features(session):
    # look-ahead / back-references are not RE2: Python's re runs them
    _, rows = one(session, "select rlike('abab', '(ab)\\\\1'), regexp_extract('foo1', "
                           "'o(?=1)', 0), regexp_replace('aab', 'a++b', 'X')")
    assert rows == [(True, "o", "X")]


@pytest.mark.parametrize("sql, cls", [
    ("select regexp_extract(s, 'a(b)', 2) from t", "INVALID_PARAMETER_VALUE.REGEX_GROUP_INDEX"),
    ("select regexp_extract(s, 'a(b)', -1) from t", "INVALID_PARAMETER_VALUE.REGEX_GROUP_INDEX"),
    ("select regexp_replace('abc', '[', 'X')", "INVALID_PARAMETER_VALUE.PATTERN"),
    ("select 'abc' rlike '['", "INVALID_PARAMETER_VALUE.PATTERN"),
    ("select regexp_extract('abc', '(', 1)", "INVALID_PARAMETER_VALUE.PATTERN"),
    ("select regexp_replace(s, 'b', 'x', 0) from t", "DATATYPE_MISMATCH.VALUE_OUT_OF_RANGE"),
    ("select regexp_replace('abc', 'b', '$2')", "INVALID_REGEXP_REPLACE"),
])
def test_regex_errors(session, sql, cls):
    assert error_class(session, sql) == cls


def test_regex_column_patterns(session):
    df = session.sql("select s, p, s rlike p as m, regexp_replace(s, p, r, pos) as rr, "
                     "regexp_extract(s, p, 0) as e from values "
                     "('abc', 'b', 'X', 1), ('abc', 'c$', '', 2), ('xyz', null, 'Q', 1), "
                     "('aaa', 'a', 'b', 2), (null, 'a', 'b', 1) as v(s, p, r, pos)")
    got = [(r.m, r.rr, r.e) for r in df.collect()]
    assert got == [(True, "aXc", "b"), (True, "ab", "c"), (None, None, None),
                   (True, "abb", "a"), (None, None, None)]


def test_regex_dataframe_api(session):
    df = session.sql("select * from t")
    out = df.select(df.s.rlike("^a"), df.s.ilike("A%"), F.regexp_extract("s", "(b)(c)", 2),
                    F.regexp_replace("s", "[ac]", "_"))
    assert out.collect() == [tuple([True, True, "c", "_b_"])]


def test_translate_and_replacement():
    tr = translate(r"(?<y>\d{4})-(\d)")
    assert tr.groups == 2 and tr.names == ("y", None)
    assert tr.re2 == r"(?P<y>\d{4})-(\d)"
    assert translate(r"a++").re2 is None  # possessive: Python fallback
    assert java_replacement(r"$1-${y}\$", ("y", None), 2) == (r"\1-\1$", r"\g<1>-\g<1>$")


# -- locate --------------------------------------------------------------------------------------

def test_locate_null_position(session):
    cols, rows = one(session, "select locate('a', 'abc', null), locate(null, 'abc', 1), "
                              "locate('a', null, 1), locate(null, null, null), "
                              "locate('a', null, null), locate(null, 'abc', null), "
                              "locate(null, 'abc'), locate('a', null), "
                              "position('b', 'abc', null)")
    assert rows == [(0, None, None, 0, 0, 0, None, None, 0)]
    assert cols[0] == "locate(a, abc, NULL)" and cols[6] == "locate(NULL, abc, 1)"


def test_locate_null_position_column(session):
    df = session.sql("select locate(x, y, p) as l from values ('a', 'abc', 1), ('a', 'abc', null), "
                     "(null, 'abc', null), (null, 'abc', 2), ('c', 'abc', 2) as v(x, y, p)")
    assert [r.l for r in df.collect()] == [1, 0, 0, None, 3]


# -- string -> timestamp / date / decimal ------------------------------------------------------

def _today():
    return dt.datetime.now(UTC).date()


@pytest.mark.parametrize("text, hms", [
    ("00:00", (0, 0, 0, 0)), ("T12:00", (12, 0, 0, 0)), ("12:00", (12, 0, 0, 0)),
    ("1:2", (1, 2, 0, 0)), ("1:2:3", (1, 2, 3, 0)), ("T1", (1, 0, 0, 0)), ("T12", (12, 0, 0, 0)),
    ("12:00:00.123456789", (12, 0, 0, 123456)), (" 12:00", (12, 0, 0, 0)),
    ("12:00:00.5 ", (12, 0, 0, 500000)), ("12:00:00Z", (12, 0, 0, 0)),
    ("T12:00:00+0100", (11, 0, 0, 0)),
])
def test_cast_time_only_string_to_timestamp(session, text, hms):
    before = _today()
    (value,), = one(session, f"select cast('{text}' as timestamp)")[1]
    after = _today()
    assert value.date() in (before, after)
    assert (value.hour, value.minute, value.second, value.microsecond) == hms


@pytest.mark.parametrize("text, expected", [
    ("2020-1-1", (2020, 1, 1, 0, 0)), ("2020-01-01T10:00:00Z", (2020, 1, 1, 10, 0)),
    ("2020-01-01 10:00:00+01:00", (2020, 1, 1, 9, 0)), (" 2020-01-01 ", (2020, 1, 1, 0, 0)),
    ("2020", (2020, 1, 1, 0, 0)), ("2020-01", (2020, 1, 1, 0, 0)),
    ("2020-01-01 10", (2020, 1, 1, 10, 0)), ("2020-01-01 10:00:00+1", (2020, 1, 1, 9, 0)),
    ("2020-01-01 10:00:00+0130", (2020, 1, 1, 8, 30)),
    ("2020-01-01 10:00:00-1:30", (2020, 1, 1, 11, 30)),
    ("2020-01-01 10:00:00 UTC", (2020, 1, 1, 10, 0)),
    ("2020-01-01 10:00:00 +01:00", (2020, 1, 1, 9, 0)),
    ("2020-01-01 10:00:00GMT+01:00", (2020, 1, 1, 9, 0)),
    ("2020-01-01 10:00:00UTC+01:00", (2020, 1, 1, 9, 0)),
    ("2020-01-01 10:00:00 America/New_York", (2020, 1, 1, 15, 0)),
    ("2020-01-01 10:00:00 Europe/Paris", (2020, 1, 1, 9, 0)),
    ("2020-01-01 10:00:00CET", (2020, 1, 1, 9, 0)),
    ("2020-01-01T10:00:00 Z", (2020, 1, 1, 10, 0)),
    ("2020-01-01T10:00:00+18:00", (2019, 12, 31, 16, 0)),
    ("+2020-01-01", (2020, 1, 1, 0, 0)),
])
def test_cast_string_to_timestamp(session, text, expected):
    (value,), = one(session, f"select cast('{text}' as timestamp)")[1]
    assert (value.year, value.month, value.day, value.hour, value.minute) == expected


@pytest.mark.parametrize("text", [
    "12", "12:00Z", "12:00 UTC", "12:00+01:00", "T12:00Z", "001:02", "1:002", "2020-01-01T",
    "2020-01-01 10:", "2020-01-01 24:00:00", "2020-01-01 10:60", "2020-01-01  10:00",
    "2020-01-01 10:00:00 utc", "2020-01-01 10:00:00 Foo/Bar", "2020-01-01T10:00:00+19:00",
    "2020-01-01 10:00:00Z+01:00",
])
def test_cast_string_to_timestamp_invalid(session, text):
    assert error_class(session, f"select cast('{text}' as timestamp)") == "CAST_INVALID_INPUT"


@pytest.mark.parametrize("text", [
    "2020-1-1", "2020-01-01T10:00:00Z", "2020-01-01 10:00:00+01:00", " 2020-01-01 ", "2020",
    "2020-01", "2020-01-01 xyz", "2020-01-01Tabc", "2020-01-01T", "+2020-01-01",
])
def test_cast_string_to_date(session, text):
    assert one(session, f"select cast('{text}' as date)")[1] == [(dt.date(2020, 1, 1),)]


@pytest.mark.parametrize("text", ["00:00", "T12:00", "020-01-01", "2020-02-30"])
def test_cast_string_to_date_invalid(session, text):
    assert error_class(session, f"select cast('{text}' as date)") == "CAST_INVALID_INPUT"


@pytest.mark.parametrize("text, to, cls", [
    ("123456789012345678901234567890123456789", "decimal(38,0)",
     "NUMERIC_OUT_OF_SUPPORTED_RANGE"),
    ("1234567890123456789012345678901234567890.5", "decimal(38,2)",
     "NUMERIC_OUT_OF_SUPPORTED_RANGE"),
    ("123456789012345678901234567890123456789", "decimal(10,0)",
     "NUMERIC_OUT_OF_SUPPORTED_RANGE"),
    ("1e39", "decimal(38,0)", "NUMERIC_OUT_OF_SUPPORTED_RANGE"),
    ("99999999999999999999999999999999999999.5", "decimal(38,0)",
     "NUMERIC_VALUE_OUT_OF_RANGE.WITH_SUGGESTION"),
])
def test_cast_huge_string_to_decimal(session, text, to, cls):
    assert error_class(session, f"select cast('{text}' as {to})") == cls


def test_cast_huge_string_to_decimal_ok_and_try(session):
    assert one(session, "select cast('0.000000000000000000000000000000000000001' as "
                        "decimal(38,0)), try_cast('123456789012345678901234567890123456789' as "
                        "decimal(38,0))")[1] == [(Decimal("0"), None)]


# -- column names --------------------------------------------------------------------------------

def test_column_names_with_literal_arguments(session):
    cols, _ = one(session, "select round(a, 2), substr(s, 1, 2), coalesce(a, 1), nullif(a, 1L), "
                           "concat(s, 'x'), date_add(d, 1), a + 1.5D, a between 1 and 2, "
                           "round(x, 1) between 1 and 2.5 from t")
    assert cols == ["round(a, 2)", "substr(s, 1, 2)", "coalesce(a, 1)", "nullif(a, 1)",
                    "concat(s, x)", "date_add(d, 1)", "(a + 1.5)", "between(a, 1, 2)",
                    "between(round(x, 1), 1, 2.5)"]


def test_column_names_of_replaced_functions(session):
    assert one(session, "select nullif(9223372036854775807L, 1.5D)")[0] == [
        "nullif(9223372036854775807, 1.5)"]
    cols, _ = one(session, "select nullif(1Y, 2S), coalesce(1.5BD, 2), round(1.25D, 1), "
                           "concat('a', 'b'), ifnull(a, 2L), nvl2(a, 1D, 2F), nvl(a, 1L), "
                           "nvl2(a, 1D, 2L), nullif(x, 1.0E10D), coalesce(x, 1.0E10D), "
                           "x + 1.0E-5D from t")
    assert cols == ["nullif(1, 2)", "coalesce(1.5, 2)", "round(1.25, 1)", "concat(a, b)",
                    "ifnull(a, 2)", "nvl2(a, 1.0, 2.0)", "nvl(a, 1)", "nvl2(a, 1.0, 2)",
                    "nullif(x, 1.0E10)", "coalesce(x, 1.0E10)", "(x + 1.0E-5)"]


# -- Java's Double.toString ----------------------------------------------------------------------

@pytest.mark.parametrize("v, text", [
    (1.5, "1.5"), (1e10, "1.0E10"), (1e-4, "1.0E-4"), (1234567.0, "1234567.0"), (1e7, "1.0E7"),
    (0.001, "0.001"), (-0.0, "-0.0"), (float("nan"), "NaN"), (float("-inf"), "-Infinity"),
    (123456789.123, "1.23456789123E8"),
])
def test_java_double_str(v, text):
    assert java_double_str(v) == text


def test_one_double_formatter_everywhere():
    from ember.analysis import resolution
    from ember.dataframe import java_double_string
    from ember.expressions import cast
    from ember.expressions.base import Literal, literal_to_sql
    from ember import types as T

    assert cast.java_double_str is java_double_str
    assert resolution.java_double_str is java_double_str
    assert java_double_string(1e10) == "1.0E10"
    assert java_double_string(0.1, single=True) == "0.1"
    assert Literal(1e10, T.DOUBLE).sql() == "1.0E10D"
    assert literal_to_sql(1.100000023841858, T.FLOAT) == "1.1F"
