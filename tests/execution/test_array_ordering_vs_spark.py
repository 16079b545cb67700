"""ORDER BY over ARRAY values follows Spark's array order (element by element, a NULL element
first, a list that is a prefix of another first, -0.0 equal to 0.0 and NaN above every number),
ascending and descending with either NULL placement, including an array an aggregate returns;
against PySpark 4.3 on both runtimes (found by the random analytics generator, seed 1234 a0088:
``ORDER BY percentile(k, array(...))`` raised UNSUPPORTED_FEATURE)."""

from __future__ import annotations

import pytest

from tests.conformance.ember_adapter import RUNTIMES, new_session
from tests.differential.compare import Failed, sql_outcome

_ARRAYS = ("SELECT x, y FROM VALUES (array(1, 2), 1), (array(1), 2), (array(1, NULL), 3),"
           " (NULL, 4), (array(0, 5), 5), (array(2), 6), (array(1, 2), 7) t(x, y)")
_DOUBLES = ("SELECT x, y FROM VALUES (array(0.0D, 1.0D), 1), (array(-0.0D, 0.5D), 2),"
            " (array(CAST('NaN' AS DOUBLE)), 3), (array(1.0D), 4), (array(-1.0D, 2.0D), 5) t(x, y)")
QUERIES = [
    _ARRAYS + " ORDER BY x, y",
    _ARRAYS + " ORDER BY x DESC, y",
    _ARRAYS + " ORDER BY x ASC NULLS LAST, y DESC",
    _ARRAYS + " ORDER BY x DESC NULLS FIRST, y",
    _DOUBLES + " ORDER BY x, y",
    _DOUBLES + " ORDER BY x DESC, y",
    "SELECT k, percentile(k, array(0.1, 0.0)) AS p, var_pop(k) AS v"
    " FROM VALUES (1), (0), (NULL) a(k) GROUP BY CUBE(k) ORDER BY 1 ASC, 2 DESC, 3 DESC",
]


@pytest.fixture(scope="module", params=RUNTIMES)
def ember(request):
    return new_session(runtime=request.param)


@pytest.mark.parametrize("q", QUERIES)
def test_order_by_arrays_matches_spark(q, spark, ember):
    want = sql_outcome(spark.sql, q, is_spark=True, ordered=True)
    got = sql_outcome(ember.sql, q, is_spark=False, ordered=True)
    assert not isinstance(want, Failed), want
    assert got == want, f"{q}\nspark: {want}\nember: {got}"
