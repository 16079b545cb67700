"""Regression tests for divergences found by tests/differential/test_random_expressions.py.

Every expectation (result type, values, or error class) was produced by PySpark 4.3 (ANSI on,
UTC) and is encoded as a literal; no SparkSession is needed here.
"""

from __future__ import annotations

import datetime as dt
import math
from decimal import Decimal

import pytest

import ember
from ember.errors import EmberError

UTC = dt.timezone.utc
NAN = float("nan")


@pytest.fixture(scope="module")
def session():
    return ember.Session()


def run(session, sql: str):
    df = session.sql(sql)
    types = [f.data_type.simple_string() for f in df.schema.fields]
    table = df.to_arrow()
    return types, [table.column(i).to_pylist() for i in range(table.num_columns)]


def same(a, b) -> bool:
    if isinstance(a, float) and isinstance(b, float) and math.isnan(a):
        return math.isnan(b)
    return a == b and type(a) is type(b)


# (sql, [spark simpleString per column], [first-row value per column])
RESULTS = [
    # CEIL/FLOOR are parsed (sqlglot builds exp.Ceil/exp.Floor nodes)
    ("SELECT ceil(5), floor(5S), floor(1.5), ceil(-1.5BD), ceil(2.5D), CEILING(2.1)",
     ["bigint", "bigint", "decimal(2,0)", "decimal(2,0)", "bigint", "decimal(2,0)"],
     [5, 5, Decimal("1"), Decimal("-1"), 3, Decimal("3")]),
    ("SELECT floor(-9.2233720368547758E18D), ceil(CAST('NaN' AS DOUBLE)), ceil(-0.5D)",
     ["bigint", "bigint", "bigint"], [-9223372036854775808, 0, 0]),
    # Java Math.pow: pow(+-1, NaN or +-Infinity) is NaN
    ("SELECT pow(1.0, CAST('NaN' AS DOUBLE)), pow(CAST('NaN' AS DOUBLE), 0.0), "
     "pow(-1, CAST('-Infinity' AS DOUBLE)), pow(1.0, CAST('Infinity' AS DOUBLE)), "
     "pow(2, CAST('-Infinity' AS DOUBLE))",
     ["double"] * 5, [NAN, 1.0, NAN, NAN, 0.0]),
    # round(decimal): one more integral digit; negative scale -> max(p - s + 1, -d + 1)
    ("SELECT round(CAST(5 AS DECIMAL(10,0)), 0), round(CAST(5 AS DECIMAL(3,0)), -5), "
     "round(CAST(5.55 AS DECIMAL(3,2)), 1), round(CAST(5.55 AS DECIMAL(3,2)), 5), "
     "round(CAST(999 AS DECIMAL(3,0)), -1)",
     ["decimal(11,0)", "decimal(6,0)", "decimal(3,1)", "decimal(4,2)", "decimal(4,0)"],
     [Decimal("5"), Decimal("0"), Decimal("5.6"), Decimal("5.55"), Decimal("1000")]),
    # round(double) rounds the double's shortest decimal representation HALF_UP
    ("SELECT round(2.675D, 2), round(1.005D, 2), round(-1.005D, 2), round(1e308D, 2), "
     "round(CAST(2.675 AS FLOAT), 2), round(-0.5D)",
     ["double", "double", "double", "double", "float", "double"],
     [2.68, 1.01, -1.01, 1e308, 2.6700000762939453, -1.0]),
    # bigint -> double rounds like Java instead of failing the Arrow safe cast
    ("SELECT nullif(9223372036854775807L, 1.5D), CAST(9223372036854775807L AS DOUBLE)",
     ["bigint", "double"], [9223372036854775807, 9.223372036854776e18]),
    # NaN / Infinity -> decimal is NULL even with ANSI on
    ("SELECT CAST(CAST('NaN' AS DOUBLE) AS DECIMAL(10,2)), "
     "CAST(CAST('-Infinity' AS FLOAT) AS DECIMAL(10,2))",
     ["decimal(10,2)", "decimal(10,2)"], [None, None]),
    # timestamp -> decimal is seconds since the epoch
    ("SELECT CAST(TIMESTAMP'2020-01-01 00:00:01.5' AS DECIMAL(20,2)), "
     "CAST(TIMESTAMP'1969-12-31 23:59:59.5' AS DECIMAL(20,1))",
     ["decimal(20,2)", "decimal(20,1)"], [Decimal("1577836801.50"), Decimal("-0.5")]),
    # greatest/least over dates and timestamps
    ("SELECT greatest(TIMESTAMP'2020-01-01 00:00:00', NULL, TIMESTAMP'2021-01-01 00:00:00'), "
     "least(DATE'2020-01-01', DATE'2019-01-01', NULL), "
     "least(DATE'2020-01-01', TIMESTAMP'2019-01-01 10:00:00')",
     ["timestamp", "date", "timestamp"],
     [dt.datetime(2021, 1, 1, tzinfo=UTC), dt.date(2019, 1, 1),
      dt.datetime(2019, 1, 1, 10, tzinfo=UTC)]),
    # concat_ws skips NULLs (and keeps every row)
    ("SELECT concat_ws('-', 'a', NULL, 'b'), concat_ws(',', CAST(NULL AS STRING)), "
     "concat_ws(NULL, 'a'), concat_ws('日', 'é', '', 'c'), concat_ws(',')",
     ["string"] * 5, ["a-b", "", None, "é日日c", ""]),
    # to_date of a non-string, non-datetime value parses its string form
    ("SELECT to_date(20200101, 'yyyyMMdd'), to_date(2020, 'yyyy'), to_date(NULL)",
     ["date", "date", "date"], [dt.date(2020, 1, 1), dt.date(2020, 1, 1), None]),
    # NULL-intolerant expressions do not evaluate later operands of a row with a NULL operand
    ("SELECT (a + 1) / b, b + (a + 1), b < (a + 1), date_add(CAST(s AS DATE), a + 1) "
     "FROM VALUES (2147483647, CAST(NULL AS INT), CAST(NULL AS STRING)) t(a, b, s)",
     ["double", "int", "boolean", "date"], [None, None, None, None]),
    ("SELECT a / b, a % b, a div b, pmod(a, b) FROM VALUES (CAST(NULL AS INT), 0) t(a, b)",
     ["double", "int", "bigint", "int"], [None, None, None, None]),
    # IN evaluates its items in order, none for a NULL value and none after a match
    ("SELECT a IN (b div 0, 2), a IN (1, NULL), c IN (1, c div 0) "
     "FROM VALUES (CAST(NULL AS INT), 1, 1) t(a, b, c)",
     ["boolean", "boolean", "boolean"], [None, None, True]),
    # date_format: non-padded fields, fraction of second, day of year, quarter, quoted text
    ("SELECT date_format(TIMESTAMP'2020-03-05 13:02:03.045678', "
     "'M/d/yy h:m:s a D DD DDD Q QQ SS SSSSSS'), date_format(DATE'2020-12-31', 'D'), "
     "date_format(TIMESTAMP'2020-03-05 00:02:03', 'h hh H yyyy-MM-dd EEE EEEE MMM MMMM'), "
     "date_format(DATE'2020-01-01', 'yyyy''T''MM'), "
     "date_format(TIMESTAMP'1969-12-31 23:59:59.999', 'SSS ss')",
     ["string"] * 5,
     ["3/5/20 1:2:3 PM 65 65 065 1 01 04 045678", "366",
      "12 12 0 2020-03-05 Thu Thursday Mar March", "2020T01", "999 59"]),
    # a doubled quote inside a string literal is an escaped quote
    ("""SELECT 'a''b', 'a' 'b', "c""d", ''''""", ["string"] * 4, ["a'b", "ab", 'c"d', "'"]),
    # wider decimal keeps integral digits (boundedPreferIntegralDigits); 38-digit strings parse
    ("SELECT CAST(1 AS DECIMAL(38,18)) <= "
     "CAST('9999999999999999999999999999.9999999999' AS DECIMAL(38,10)), "
     "CAST('12345678901234567890123456789012345678' AS DECIMAL(38,0)), "
     "coalesce(CAST(1 AS DECIMAL(38,18)), CAST(1 AS DECIMAL(38,10)))",
     ["boolean", "decimal(38,0)", "decimal(38,10)"],
     [True, Decimal("12345678901234567890123456789012345678"), Decimal("1.0000000000")]),
    # locate: an empty substring is found at 1 for any start >= 1
    ("SELECT locate('', 'abc', 5), locate('', 'abc', 0), locate('', '', 3), instr('abc', '')",
     ["int"] * 4, [1, 0, 1, 1]),
    # a leading '+' is accepted by string -> integral casts
    ("SELECT CAST('+8' AS INT), CAST(' +0012 ' AS BIGINT), CAST('+8' AS TINYINT)",
     ["int", "bigint", "tinyint"], [8, 12, 8]),
    # pmod on tinyint/smallint: Java computes (r + n) % n in int, no 16-bit wrap (seed 7 e0011)
    ("SELECT pmod(CAST(-128 AS TINYINT), CAST(-32768 AS SMALLINT)), "
     "pmod(CAST(-128 AS TINYINT), CAST(-128 AS TINYINT)), pmod(-2147483648, -2147483647), "
     "pmod(CAST(-100 AS TINYINT), CAST(127 AS TINYINT))",
     ["smallint", "tinyint", "int", "tinyint"], [-128, 0, -1, 27]),
    # DecimalType.fromLiteral: a tinyint literal is decimal(3,0), not its digits (seed 8 e0167)
    ("SELECT 2Y % CAST(1.5 AS DECIMAL(18,6)), -2Y % CAST(1.5 AS DECIMAL(18,6)), "
     "2S % CAST(1.5 AS DECIMAL(18,6)), -2 % CAST(1.5 AS DECIMAL(18,6))",
     ["decimal(9,6)", "decimal(9,6)", "decimal(7,6)", "decimal(7,6)"],
     [Decimal("0.500000"), Decimal("-0.500000"), Decimal("0.500000"), Decimal("-0.500000")]),
    # ... while IF(NULL, ..) and CASE x WHEN NULL are fine
    ("SELECT if(NULL, 1, 2), CASE 1 WHEN NULL THEN 1 END", ["int", "int"], [2, None]),
    # ceil/floor keep a scale-0 decimal's type (seed 7 e0125)
    ("SELECT ceil(CAST(7 AS DECIMAL(10,0))), round(ceil(CAST(7 AS DECIMAL(10,0))), -1), "
     "floor(CAST(-7 AS DECIMAL(38,0))), round(ceil(CAST(7 AS DECIMAL(10,1))), -1)",
     ["decimal(10,0)", "decimal(11,0)", "decimal(38,0)", "decimal(11,0)"],
     [Decimal("7"), Decimal("10"), Decimal("-7"), Decimal("10")]),
    # date_add/date_sub add Java ints: the day number wraps around (seed 14 e0146)
    ("SELECT date_sub(DATE'2020-01-01', -2147483648) < DATE'2020-01-01', "
     "date_add(DATE'2020-01-01', 2147483647) > DATE'2020-01-01'",
     ["boolean", "boolean"], [True, False]),
    ("SELECT DATE'2020-01-01' + (-2147483648) < DATE'2020-01-01', DATE'2020-01-01' + 1",
     ["boolean", "date"], [True, dt.date(2020, 1, 2)]),
    # JDK 17 Double/Float.toString of subnormals is not shortest round trip (seed 10 e0065)
    ("SELECT CAST(4.9E-324D AS STRING), CAST(1.0E-323D AS STRING), CAST(-4.9E-323D AS STRING), "
     "CAST(6.32E-322D AS STRING), CAST(CAST(1.4E-45 AS FLOAT) AS STRING), "
     "CAST(CAST(3E-45 AS FLOAT) AS STRING), CAST(CAST(2.24E-44 AS FLOAT) AS STRING), "
     "concat('x', 4.9E-324D)",
     ["string"] * 8,
     ["4.9E-324", "1.0E-323", "-4.9E-323", "6.32E-322", "1.4E-45", "2.8E-45", "2.24E-44",
      "x4.9E-324"]),
]


@pytest.mark.parametrize("sql, types, values", RESULTS, ids=[r[0][:60] for r in RESULTS])
def test_results(session, sql, types, values):
    got_types, cols = run(session, sql)
    assert got_types == types
    got = [c[0] for c in cols]
    assert all(same(v, g) for v, g in zip(values, got)), (values, got)


ERRORS = [
    ("SELECT ceil(9.2233720368547758E18D)", "ARITHMETIC_OVERFLOW"),
    ("SELECT floor(CAST('Infinity' AS DOUBLE))", "ARITHMETIC_OVERFLOW"),
    ("SELECT round(127Y, -1)", "ARITHMETIC_OVERFLOW"),
    ("SELECT CAST(DATE'2020-01-01' AS BOOLEAN)", "DATATYPE_MISMATCH.CAST_WITH_CONF_SUGGESTION"),
    ("SELECT CAST(TIMESTAMP'2020-01-01 00:00:00' AS BOOLEAN)",
     "DATATYPE_MISMATCH.CAST_WITH_CONF_SUGGESTION"),
    ("SELECT CAST(TRUE AS TIMESTAMP)", "DATATYPE_MISMATCH.CAST_WITH_CONF_SUGGESTION"),
    ("SELECT CAST(DATE'2020-01-01' AS INT)", "DATATYPE_MISMATCH.CAST_WITH_FUNC_SUGGESTION"),
    ("SELECT CAST(1 AS DATE)", "DATATYPE_MISMATCH.CAST_WITH_FUNC_SUGGESTION"),
    ("SELECT CAST(TRUE AS DATE)", "DATATYPE_MISMATCH.CAST_WITHOUT_SUGGESTION"),
    ("SELECT to_date('1')", "CAST_INVALID_INPUT"),
    ("SELECT to_timestamp('1')", "CAST_INVALID_INPUT"),
    ("SELECT to_date(1)", "CAST_INVALID_INPUT"),
    ("SELECT to_date(TRUE, 'yyyy')", "CANNOT_PARSE_TIMESTAMP"),
    ("SELECT pmod(-1, 99999999999999999999.99)", "NUMERIC_VALUE_OUT_OF_RANGE.WITH_SUGGESTION"),
    # the left operand is evaluated first: its overflow is raised even though b is NULL
    ("SELECT (a + 1) + b FROM VALUES (2147483647, CAST(NULL AS INT)) t(a, b)",
     "ARITHMETIC_OVERFLOW"),
    # tinyint/smallint + - * overflow has its own error class
    ("SELECT 100Y * 2Y", "BINARY_ARITHMETIC_OVERFLOW"),
    ("SELECT CAST(30000 AS SMALLINT) + 30000S", "BINARY_ARITHMETIC_OVERFLOW"),
    # div: a decimal next to a double/string becomes a double, which div rejects
    ("SELECT 0.3 div 1.5D", "DATATYPE_MISMATCH.BINARY_OP_WRONG_TYPE"),
    ("SELECT 0.3 div '1'", "DATATYPE_MISMATCH.BINARY_OP_WRONG_TYPE"),
    ("SELECT 0.3 div CAST(2.5 AS FLOAT)", "DATATYPE_MISMATCH.BINARY_OP_DIFF_TYPES"),
    ("SELECT a IN (2, a div 0) FROM VALUES (1) t(a)", "DIVIDE_BY_ZERO"),
    # concat evaluates every argument, even after a NULL one
    ("SELECT concat(CAST(NULL AS STRING), CAST(CAST(s AS INT) AS STRING)) "
     "FROM VALUES ('x') t(s)", "CAST_INVALID_INPUT"),
    # CASE WHEN NULL: the VOID condition is not cast to boolean (IF(NULL, ..) is; seed 11 e0004)
    ("SELECT CASE WHEN NULL THEN 1 ELSE 2 END", "DATATYPE_MISMATCH.UNEXPECTED_INPUT_TYPE"),
    ("SELECT CASE WHEN true THEN 1 WHEN NULL THEN 2 END",
     "DATATYPE_MISMATCH.UNEXPECTED_INPUT_TYPE"),
    # a wrapped-around date cast to timestamp: Java's bare "long overflow" (no error class)
    ("SELECT greatest(date_sub(DATE'2020-01-01', -2147483648), TIMESTAMP'2020-01-31 10:00:00')",
     None),
]


@pytest.mark.parametrize("sql, error_class", ERRORS, ids=[e[0][:60] for e in ERRORS])
def test_errors(session, sql, error_class):
    with pytest.raises(EmberError) as e:
        run(session, sql)
    assert e.value.error_class == error_class
