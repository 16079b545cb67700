"""``spark.catalog``'s cache methods (isCached, cacheTable, uncacheTable, clearCache) answer as
PySpark's do for the same sequence of calls, on a temporary view and on a persistent table."""

from __future__ import annotations

from typing import Any

import pytest

from tests.conformance.ember_adapter import RUNTIMES, new_session

pytestmark = pytest.mark.spark


def _sequence(session: Any, error_type: type) -> list:
    """The answers of isCached along a fixed sequence of cache calls."""
    session.sql("CREATE OR REPLACE TEMPORARY VIEW cv AS SELECT 1 AS a")
    session.sql("DROP TABLE IF EXISTS cache_t")
    session.sql("CREATE TABLE cache_t (a INT) USING parquet")
    out = []
    for name in ("cv", "cache_t"):
        cat = session.catalog
        out.append(cat.isCached(name))
        cat.cacheTable(name)
        out.append(cat.isCached(name))
        cat.uncacheTable(name)
        out.append(cat.isCached(name))
        session.table(name).cache()
        out.append(cat.isCached(name))
        cat.clearCache()
        out.append(cat.isCached(name))
    try:
        session.catalog.isCached("no_such_table")
        out.append("no error")
    except error_type as e:
        out.append(e.getCondition() if hasattr(e, "getCondition") else e.error_class)
    session.sql("DROP TABLE cache_t")
    return out


@pytest.mark.parametrize("runtime", RUNTIMES)
def test_catalog_cache_calls_answer_as_pyspark(spark: Any, runtime: str) -> None:
    from pyspark.errors import AnalysisException

    from ember.errors import AnalysisError

    expected = _sequence(spark.newSession(), AnalysisException)
    actual = _sequence(new_session(runtime=runtime), AnalysisError)
    assert actual == expected
    assert expected[:5] == [False, True, False, True, False]
