"""CASE/IF/COALESCE/GREATEST/LEAST/NULLIF.  Verified against PySpark 4 (ANSI)."""

from decimal import Decimal

import pytest

from ember import types as T
from ember.errors import ArithmeticError_
from ember.expressions.arithmetic import Divide
from ember.expressions.conditional import CaseWhen, Coalesce, Greatest, If, Least
from ember.expressions.misc import to_pretty_sql
from ember.expressions.predicates import EqualTo, IsNull
from .helpers import BATCH, analyze, col, ev, ev1, fn, lit


def test_case_when():
    e = CaseWhen((EqualTo(col("a"), lit(1)), EqualTo(col("a"), lit(3))), (lit("one"), lit("three")))
    assert ev(e) == ["one", None, "three"]
    e = CaseWhen((EqualTo(col("a"), lit(1)),), (lit("one"),), lit("other"))
    assert ev(e) == ["one", "other", "other"]
    assert to_pretty_sql(e) == "CASE WHEN (a = 1) THEN one ELSE other END"
    assert e.simple_string() == f"CASE WHEN (a#{col('a').id} = 1) THEN one ELSE other END"
    # branches widen: int and decimal(3,2) -> decimal(12,2)
    e = analyze(CaseWhen((col("bo"),), (col("a"),), col("m")))
    assert e.data_type == T.DecimalType(12, 2)
    assert ev(e) == [Decimal("1.00"), Decimal("-1.25"), None]


def test_case_when_skips_untaken_branches():
    e = CaseWhen((EqualTo(col("z"), lit(0)),), (lit(None, T.NULL),), Divide(col("a"), col("z")))
    assert ev(e) == [None, None, None]
    with pytest.raises(ArithmeticError_):
        ev(Divide(col("a"), col("z")))


def test_if_and_coalesce_lazy():
    assert ev(If(IsNull(col("a")), lit(0), col("a"))) == [1, 0, 3]
    e = If(EqualTo(col("z"), lit(0)), lit(-1.0), Divide(col("a"), col("z")))
    assert ev(e) == [-1.0, None, -1.0]
    assert If(col("bo"), lit(1), lit(2)).sql() == "(IF(bo, 1, 2))"
    assert ev(Coalesce((col("a"), col("b"), lit(9)))) == [1, 5, 3]
    assert analyze(Coalesce((col("a"), col("b")))).data_type == T.LONG
    # coalesce only evaluates later items where needed: 1/z never runs where a is not NULL
    assert ev(Coalesce((col("a"), Divide(lit(1), col("z"))))) == [1.0, 0.5, 3.0]


def test_greatest_least():
    assert ev(Greatest((col("a"), col("b")))) == [2, 5, 3]
    assert ev(Least((col("a"), col("b")))) == [1, 5, 3]
    assert analyze(Greatest((col("a"), col("b"), col("m")))).data_type == T.DecimalType(22, 2)
    assert ev1(Greatest((lit(float("nan")), lit(1.0)))) != ev1(Greatest((lit(float("nan")), lit(1.0))))
    # no string promotion for greatest (Spark: DATA_DIFF_TYPES)
    e = Greatest((col("a"), col("s"))).transform_up(__import__("ember.coercion").coercion.coerce_expression)
    assert e.check_input_types().sub_class == "DATA_DIFF_TYPES"


def test_nullif_nvl_family():
    e = fn("nullif", col("a"), lit(1))
    assert ev(e) == [None, None, 3]
    assert e.sql() == "nullif(a, 1)" and analyze(e).data_type == T.INT
    assert ev(fn("nvl", col("a"), lit(2))) == [1, 2, 3]
    assert ev(fn("ifnull", col("a"), col("b"))) == [1, 5, 3]
    assert ev(fn("nvl2", col("a"), lit(1), lit(2))) == [1, 2, 1]
    assert fn("nvl2", col("a"), lit(1), lit(2)).sql() == "nvl2(a, 1, 2)"


def test_batch_of_two():
    b = BATCH.slice(1, 2)
    assert ev(Coalesce((col("a"), lit(0))), b) == [0, 3]
    assert ev(CaseWhen((IsNull(col("a")),), (lit(1),), lit(2)), b) == [1, 2]
