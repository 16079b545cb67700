"""``array(...)`` widens its elements to their wider common type, as Spark's
FunctionArgumentConversion does with ``findWiderCommonType`` (decimal precision widening, integral
with decimal, NULLs, strings, nested arrays and structs), and the other constructs that use it
(coalesce, CASE, IN, greatest) over arrays and decimals; against PySpark 4.3 on both runtimes.
``percentile(x, array(0.1, 0.5))`` as users write it depends on it."""

from __future__ import annotations

import pytest

from tests.conformance.ember_adapter import RUNTIMES, new_session
from tests.differential.compare import Failed, sql_outcome

QUERIES = [
    "SELECT array(0, 0.75), array(0.1, 0.25), array(1, 1L, 0.5), array(1.5D, 0.25)",
    "SELECT array(CAST(1 AS DECIMAL(38,0)), 0.5), array(NULL, 1, 2L), array(1, '2'),"
    " array(DATE'2024-01-01', TIMESTAMP'2024-01-01 00:00:00')",
    "SELECT array(array(0.1), array(0.25)), array(array(1, NULL), NULL, array(0.5)),"
    " array(named_struct('a', 1), named_struct('a', 0.5))",
    "SELECT x, array(x, 0.5), coalesce(array(x), array(0.5)),"
    " CASE WHEN x > 1 THEN array(x) ELSE array(0.25) END, x IN (1, 0.5), greatest(x, 0.5, 2L)"
    " FROM VALUES (1), (2), (NULL) t(x)",
    "SELECT percentile(x, array(0, 0.75)), percentile_approx(x, array(0.1, 0.25, 1)),"
    " percentile(x, array(0.1, 0.5)) FROM VALUES (1), (2), (3) t(x)",
]
ERRORS = ["SELECT array(1, true)", "SELECT array(array(1), 2)"]


@pytest.fixture(scope="module", params=RUNTIMES)
def ember(request):
    return new_session(runtime=request.param)


@pytest.mark.parametrize("q", QUERIES)
def test_matches_spark(q, spark, ember):
    want = sql_outcome(spark.sql, q, is_spark=True)
    got = sql_outcome(ember.sql, q, is_spark=False)
    assert not isinstance(want, Failed), want
    assert got == want, f"{q}\nspark: {want}\nember: {got}"


@pytest.mark.parametrize("q", ERRORS)
def test_errors_match_spark(q, spark, ember):
    want = sql_outcome(spark.sql, q, is_spark=True)
    got = sql_outcome(ember.sql, q, is_spark=False)
    assert isinstance(want, Failed) and isinstance(got, Failed) and got.cls == want.cls, \
        f"{q}\nspark: {want}\nember: {got}"
