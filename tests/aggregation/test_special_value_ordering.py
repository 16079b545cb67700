"""Aggregates that order or rank values, over NaN, infinities, ``-0.0`` and non-numeric
inputs, against PySpark 4.3 on both runtimes (conformance findings of issue 20).

- ``min_by`` / ``max_by`` / ``min`` / ``max`` with a struct or array ordering: Spark's
  ``PhysicalStructType`` / ``PhysicalArrayType`` orderings put NaN above every double (also
  inside a struct or array) and treat ``-0.0`` as ``0.0``; arrays compare element by element,
  NULL elements first, a prefix first.
- ``percentile_approx`` of DATE and TIMESTAMP columns: the result has the input's type.

The view is a UNION ALL of three inline tables, so the aggregates run as Partial -> Final over
several partitions; the local runtime also runs at batch size 2.
"""

from __future__ import annotations

import pytest

from tests.conformance.ember_adapter import BATCH_SIZE_KEY, RUNTIMES, new_session
from tests.differential.compare import Failed, sql_outcome

_NAN, _INF = "CAST('NaN' AS DOUBLE)", "CAST('inf' AS DOUBLE)"
_PARTS = [
    f"SELECT * FROM VALUES (1, {_NAN}, 'a', 1), (1, -0.0D, 'c', 20), (2, {_NAN}, 'a', -5)"
    " AS t(k, d, s, x)",
    f"SELECT * FROM VALUES (1, {_INF}, 'c', 3), (1, 2.0D, 'a', NULL), (2, {_INF}, 'c', 7),"
    " (3, NULL, 'z', 0) AS t(k, d, s, x)",
    f"SELECT * FROM VALUES (1, -0.0D, 'b', 4), (3, CAST('-inf' AS DOUBLE), 'y', 2), (3, 0.0D, 'x', -1),"
    " (4, NULL, NULL, NULL) AS t(k, d, s, x)",
]
_VIEW = "CREATE OR REPLACE TEMP VIEW sv AS " + " UNION ALL ".join(_PARTS)

QUERIES = {
    "by_struct_key": "SELECT k, min_by(s, named_struct('o', d, 'v', s)),"
                     " max_by(s, named_struct('o', d, 'v', s)), min_by(x, named_struct('o', d)),"
                     " max_by(x, named_struct('a', named_struct('o', d), 'v', s)) FROM sv GROUP BY k",
    "extremum_struct": "SELECT k, min(named_struct('o', d, 'v', s)), max(named_struct('o', d, 'v', s)),"
                       " min(named_struct('o', CAST(d AS FLOAT))), max(named_struct('o', CAST(d AS FLOAT)))"
                       " FROM sv GROUP BY k",
    "extremum_array": "SELECT k, min(array(d)), max(array(d, 1.0D)),"
                      " min(CASE WHEN s > 'b' THEN array(d) ELSE array(d, d) END),"
                      " max(CASE WHEN s > 'b' THEN array(s) WHEN s = 'a' THEN array() ELSE array(s, s) END),"
                      " min(array(NULL, s)), max(array(s, NULL)) FROM sv GROUP BY k",
    "by_array_key": "SELECT k, min_by(s, array(d, d)), max_by(s, array(named_struct('x', d))),"
                    " min(CASE WHEN s = 'c' THEN NULL ELSE array(array(d), array(d)) END)"
                    " FROM sv GROUP BY k",
    "percentile_approx_date": "SELECT k, percentile_approx(date_add(DATE'2024-01-01', x), 0.5),"
                              " percentile_approx(date_add(DATE'1960-01-01', x), array(0.1D, 0.9D), 100)"
                              " FROM sv GROUP BY k",
    "percentile_approx_timestamp": "SELECT k, percentile_approx(TIMESTAMP'2024-01-01 00:00:00'"
                                   " + x * INTERVAL '1' HOUR, 0.5), percentile_approx(TIMESTAMP"
                                   "'1969-12-31 23:59:59' + x * INTERVAL '1' SECOND, array(0.0D, 1.0D))"
                                   " FROM sv GROUP BY k",
    "percentile_approx_date_global": "SELECT percentile_approx(date_add(DATE'2024-01-01', x), 0.5)"
                                     " FROM sv",
}

_CONFIGS = [(rt, None) for rt in RUNTIMES] + [("local", 2)]


@pytest.fixture(scope="module")
def spark_view(spark):
    spark.sql(_VIEW)
    return spark


@pytest.fixture(scope="module", params=_CONFIGS, ids=[f"{rt}-batch{b or 'default'}"
                                                       for rt, b in _CONFIGS])
def ember_session(request):
    rt, batch = request.param
    conf = {"spark.sql.shuffle.partitions": "3"}
    if batch is not None:
        conf[BATCH_SIZE_KEY] = str(batch)
    s = new_session(conf, runtime=rt)
    s.sql(_VIEW)
    return s


@pytest.mark.parametrize("name", sorted(QUERIES))
def test_matches_spark(name, spark_view, ember_session):
    q = QUERIES[name]
    want = sql_outcome(spark_view.sql, q, is_spark=True)
    got = sql_outcome(ember_session.sql, q, is_spark=False)
    assert not isinstance(want, Failed), want
    assert got == want, f"{q}\nspark: {want}\nember: {got}"
