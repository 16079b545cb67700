"""Scalar functions through the registry: values, Spark's result types and display names
(verified against PySpark 4 column names), arity/unknown-name errors."""

import datetime as dt
from decimal import Decimal

import pytest

from ember import types as T
from ember.errors import AnalysisError, ExecutionError
from ember.expressions.misc import to_pretty_sql
from .helpers import BATCH, analyze, col, ev, ev1, fn, lit

CASES = [
    # (expr, pretty name as PySpark names the column, type, values)
    (lambda: fn("upper", col("s")), "upper(s)", T.STRING, ["X", "HELLO", None]),
    (lambda: fn("ucase", col("s")), "ucase(s)", T.STRING, ["X", "HELLO", None]),
    (lambda: fn("lcase", col("s")), "lcase(s)", T.STRING, ["x", "hello", None]),
    (lambda: fn("length", col("s")), "length(s)", T.INT, [1, 5, None]),
    (lambda: fn("char_length", col("s")), "char_length(s)", T.INT, [1, 5, None]),
    (lambda: fn("substr", col("s"), lit(2)), "substr(s, 2, 2147483647)", T.STRING, ["", "ello", None]),
    (lambda: fn("substring", col("s"), lit(-3), lit(2)), "substring(s, -3, 2)", T.STRING, ["", "ll", None]),
    (lambda: fn("concat", col("s"), col("a")), "concat(s, a)", T.STRING, ["x1", None, None]),
    (lambda: fn("concat_ws", lit(","), col("s"), col("a")), "concat_ws(,, s, a)", T.STRING, ["x,1", "Hello", "3"]),
    (lambda: fn("lpad", col("s"), lit(3), lit("-")), "lpad(s, 3, -)", T.STRING, ["--x", "Hel", None]),
    (lambda: fn("rpad", col("s"), lit(3)), "rpad(s, 3,  )", T.STRING, ["x  ", "Hel", None]),
    (lambda: fn("replace", col("s"), lit("l"), lit("L")), "replace(s, l, L)", T.STRING, ["x", "HeLLo", None]),
    (lambda: fn("instr", col("s"), lit("l")), "instr(s, l)", T.INT, [0, 3, None]),
    (lambda: fn("locate", lit("l"), col("s")), "locate(l, s, 1)", T.INT, [0, 3, None]),
    (lambda: fn("locate", lit("l"), col("s"), lit(4)), "locate(l, s, 4)", T.INT, [0, 4, None]),
    (lambda: fn("startswith", col("s"), lit("H")), "startswith(s, H)", T.BOOLEAN, [False, True, None]),
    (lambda: fn("endswith", col("s"), lit("o")), "endswith(s, o)", T.BOOLEAN, [False, True, None]),
    (lambda: fn("contains", col("s"), lit("ll")), "contains(s, ll)", T.BOOLEAN, [False, True, None]),
    (lambda: fn("round", col("d")), "round(d, 0)", T.DOUBLE, [2.0, -3.0, None]),
    (lambda: fn("round", col("m"), lit(1)), "round(m, 1)", T.DecimalType(3, 1), [Decimal("2.5"), Decimal("-1.3"), None]),
    (lambda: fn("round", col("a")), "round(a, 0)", T.INT, [1, None, 3]),
    (lambda: fn("floor", col("d")), "FLOOR(d)", T.LONG, [1, -3, None]),
    (lambda: fn("ceil", col("m")), "CEIL(m)", T.DecimalType(2, 0), [Decimal("3"), Decimal("-1"), None]),
    (lambda: fn("floor", col("m")), "FLOOR(m)", T.DecimalType(2, 0), [Decimal("2"), Decimal("-2"), None]),
    (lambda: fn("ceiling", col("d")), "ceiling(d)", T.LONG, [2, -2, None]),
    (lambda: fn("floor", col("a")), "FLOOR(a)", T.LONG, [1, None, 3]),
    (lambda: fn("sqrt", col("a")), "SQRT(a)", T.DOUBLE, [1.0, None, 3 ** 0.5]),
    (lambda: fn("ln", col("d")), "ln(d)", T.DOUBLE, [0.4054651081081644, None, None]),
    (lambda: fn("log", col("a")), "LOG(E(), a)", T.DOUBLE, [0.0, None, 1.0986122886681098]),
    (lambda: fn("power", lit(2), col("a")), "POWER(2, a)", T.DOUBLE, [2.0, None, 8.0]),
    (lambda: fn("pow", col("a"), lit(2)), "pow(a, 2)", T.DOUBLE, [1.0, None, 9.0]),
    (lambda: fn("sign", col("d")), "sign(d)", T.DOUBLE, [1.0, -1.0, None]),
    (lambda: fn("signum", col("m")), "SIGNUM(m)", T.DOUBLE, [1.0, -1.0, None]),
    (lambda: fn("abs", col("m")), "abs(m)", T.DecimalType(3, 2), [Decimal("2.50"), Decimal("1.25"), None]),
    (lambda: fn("pmod", lit(-7), col("a")), "pmod(-7, a)", T.INT, [0, None, 2]),
    (lambda: fn("year", col("dt")), "year(dt)", T.INT, [2020, 2019, None]),
    (lambda: fn("month", col("dt")), "month(dt)", T.INT, [1, 12, None]),
    (lambda: fn("day", col("dt")), "day(dt)", T.INT, [31, 1, None]),
    (lambda: fn("dayofmonth", col("dt")), "dayofmonth(dt)", T.INT, [31, 1, None]),
    (lambda: fn("date_add", col("dt"), lit(1)), "date_add(dt, 1)", T.DATE, [dt.date(2020, 2, 1), dt.date(2019, 12, 2), None]),
    (lambda: fn("date_sub", col("dt"), lit(1)), "date_sub(dt, 1)", T.DATE, [dt.date(2020, 1, 30), dt.date(2019, 11, 30), None]),
    (lambda: fn("datediff", col("dt"), lit("2019-01-01")), "datediff(dt, 2019-01-01)", T.INT, [395, 334, None]),
    (lambda: fn("add_months", col("dt"), lit(1)), "add_months(dt, 1)", T.DATE, [dt.date(2020, 2, 29), dt.date(2020, 1, 1), None]),
    (lambda: fn("extract", lit("year"), col("dt")), "extract(year FROM dt)", T.INT, [2020, 2019, None]),
    (lambda: fn("date_format", col("ts"), lit("yyyy-MM-dd HH:mm:ss")), "date_format(ts, yyyy-MM-dd HH:mm:ss)", T.STRING, ["2020-01-02 03:04:05", "1999-12-31 23:59:59", None]),
    (lambda: fn("to_date", lit("01/02/2020"), lit("MM/dd/yyyy")), "to_date(01/02/2020, MM/dd/yyyy)", T.DATE, [dt.date(2020, 1, 2)] * 3),
    (lambda: fn("struct", col("a"), col("s")), "struct(a, s)", T.StructType((T.StructField("a", T.INT), T.StructField("s", T.STRING))), [{"a": 1, "s": "x"}, {"a": None, "s": "Hello"}, {"a": 3, "s": None}]),
    (lambda: fn("named_struct", lit("x"), col("a")), "named_struct(x, a)", T.StructType((T.StructField("x", T.INT),)), [{"x": 1}, {"x": None}, {"x": 3}]),
    (lambda: fn("array", col("a"), lit(1)), "array(a, 1)", T.ArrayType(T.INT), [[1, 1], [None, 1], [3, 1]]),
    (lambda: fn("isnull", col("a")), "(a IS NULL)", T.BOOLEAN, [False, True, False]),
    (lambda: fn("bigint", col("a")), "CAST(a AS BIGINT)", T.LONG, [1, None, 3]),
    (lambda: fn("string", col("d")), "CAST(d AS STRING)", T.STRING, ["1.5", "-2.5", None]),
]


@pytest.mark.parametrize("make, name, dtype, values", CASES, ids=[c[1] for c in CASES])
def test_function(make, name, dtype, values):
    e = make()
    assert to_pretty_sql(e) == name
    a = analyze(e)
    assert a.data_type == dtype
    assert ev(e) == values


def test_round_half_up():
    assert ev1(fn("round", lit(2.5))) == 3.0
    assert ev1(fn("round", lit(-2.5))) == -3.0
    assert ev1(fn("round", lit(1.25), lit(1))) == 1.3
    assert ev1(fn("round", lit(Decimal("2.5")))) == Decimal("3")
    assert analyze(fn("round", lit(Decimal("2.5")))).data_type == T.DecimalType(2, 0)


def test_current_date_and_cast_functions():
    assert isinstance(ev1(fn("current_date")), dt.date)
    assert ev1(fn("date", lit("2020-01-02"))) == dt.date(2020, 1, 2)
    assert ev1(fn("decimal", lit(3))) == Decimal("3")


def test_to_date_bad_input_raises():
    with pytest.raises(ExecutionError):
        ev1(fn("to_date", lit("xx/02/2020"), lit("MM/dd/yyyy")))


def test_unknown_and_arity_errors():
    with pytest.raises(AnalysisError) as e:
        fn("foo", lit(1))
    assert e.value.error_class == "UNRESOLVED_ROUTINE"
    assert e.value.parameters["routineName"] == "`foo`"
    with pytest.raises(AnalysisError) as e:
        fn("upper", lit("a"), lit("b"))
    assert e.value.error_class == "WRONG_NUM_ARGS.WITHOUT_SUGGESTION"
    with pytest.raises(AnalysisError) as e:
        fn("coalesce")
    assert e.value.error_class == "WRONG_NUM_ARGS.WITHOUT_SUGGESTION"


def test_case_insensitive_and_implicit_string_cast():
    e = analyze(fn("UPPER", col("a")))
    assert e.simple_string() == f"upper(cast(a#{col('a').id} as string))"
    assert ev(fn("Upper", col("a"))) == ["1", None, "3"]


def test_batch_of_two():
    b = BATCH.slice(1, 2)
    assert ev(fn("length", col("s")), b) == [5, None]
    assert ev(fn("year", col("dt")), b) == [2019, None]


def test_tuple_struct_display():
    # count((a, b)) is named count(named_struct(a, a, b, b)) by Spark 4
    assert fn("(tuple)", col("a"), col("b")).sql() == "named_struct(a, a, b, b)"
    assert fn("struct", col("a"), col("b")).sql() == "struct(a, b)"
