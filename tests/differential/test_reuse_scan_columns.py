"""Exchange and broadcast reuse never joins two scans of one Parquet table that read different
columns (issue 18, item 1; planning/reuse_exchange.py): each query runs on PySpark and on Ember
(both runtimes, default and without broadcasts) and must give Spark's rows and schema.

The table is a small ``store_sales`` with several columns of each type, so that two reads of it
with the same filter differ only in the columns they read -- the shape of TPC-DS q9, whose five
``avg`` subqueries came back as one value when the canonical form of a file scan forgot its
columns.  The last queries read the same columns twice: there Spark reuses the exchange, and so
must Ember.
"""

from __future__ import annotations

from decimal import Decimal
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from tests.conformance.ember_adapter import RUNTIMES, check_outcome, new_session, run_sql
from tests.conformance.generate import run_statement

pytestmark = [pytest.mark.spark, pytest.mark.differential]

N = 240


def _store_sales() -> pa.Table:
    q = [None if i % 37 == 0 else 1 + (i * 7) % 40 for i in range(N)]
    return pa.table({
        "ss_item_sk": pa.array([i % 23 for i in range(N)], pa.int32()),
        "ss_customer_sk": pa.array([None if i % 11 == 0 else (i * 5) % 19 for i in range(N)],
                                   pa.int32()),
        "ss_quantity": pa.array(q, pa.int32()),
        "ss_ext_discount_amt": pa.array([Decimal((i * 13) % 500) / 4 for i in range(N)],
                                        pa.decimal128(7, 2)),
        "ss_net_paid": pa.array([Decimal((i * 29) % 900) / 4 for i in range(N)],
                                pa.decimal128(7, 2)),
        "ss_list_price": pa.array([((i * 3) % 50) / 2 for i in range(N)], pa.float64()),
        "ss_sales_price": pa.array([((i * 17) % 60) / 4 for i in range(N)], pa.float64()),
    })


@pytest.fixture(scope="module")
def views(tmp_path_factory) -> list[str]:
    """The statements registering ``store_sales`` (three files) on either engine."""
    d = tmp_path_factory.mktemp("reuse_columns") / "store_sales"
    d.mkdir()
    t = _store_sales()
    for i in range(3):
        pq.write_table(t.slice(i * 80, 80), str(d / f"part-{i}.parquet"))
    return [f"CREATE TEMPORARY VIEW store_sales USING parquet OPTIONS (path '{d}')"]


#: name -> (SQL, whether Spark reuses an exchange in it)
QUERIES: dict[str, tuple[str, bool]] = {
    # the minimal form: same filter, other column, same buffer types
    "scalar_avgs": ("""
        SELECT (SELECT avg(ss_ext_discount_amt) FROM store_sales
                WHERE ss_quantity BETWEEN 1 AND 20) a,
               (SELECT avg(ss_net_paid) FROM store_sales WHERE ss_quantity BETWEEN 1 AND 20) b""",
                    False),
    # TPC-DS q9's shape
    "q9_buckets": ("""
        SELECT CASE WHEN (SELECT count(*) FROM store_sales WHERE ss_quantity BETWEEN 1 AND 20) > 10
                    THEN (SELECT avg(ss_ext_discount_amt) FROM store_sales
                          WHERE ss_quantity BETWEEN 1 AND 20)
                    ELSE (SELECT avg(ss_net_paid) FROM store_sales
                          WHERE ss_quantity BETWEEN 1 AND 20) END bucket1,
               CASE WHEN (SELECT count(*) FROM store_sales WHERE ss_quantity BETWEEN 21 AND 40) > 1000
                    THEN (SELECT avg(ss_ext_discount_amt) FROM store_sales
                          WHERE ss_quantity BETWEEN 21 AND 40)
                    ELSE (SELECT avg(ss_net_paid) FROM store_sales
                          WHERE ss_quantity BETWEEN 21 AND 40) END bucket2,
               (SELECT max(ss_list_price) FROM store_sales WHERE ss_quantity > 5) m1,
               (SELECT max(ss_sales_price) FROM store_sales WHERE ss_quantity > 5) m2""", False),
    "scalar_counts_of_twins": ("""
        SELECT (SELECT count(DISTINCT ss_item_sk) FROM store_sales WHERE ss_quantity > 3) a,
               (SELECT count(DISTINCT ss_customer_sk) FROM store_sales WHERE ss_quantity > 3) b""",
                               False),
    "in_subqueries": ("""
        SELECT ss_quantity, count(*) n FROM store_sales
        WHERE ss_quantity IN (SELECT ss_item_sk FROM store_sales WHERE ss_list_price > 10)
          AND ss_quantity NOT IN (SELECT ss_customer_sk FROM store_sales
                                  WHERE ss_list_price > 10 AND ss_customer_sk IS NOT NULL)
        GROUP BY ss_quantity""", False),
    "exists_subqueries": ("""
        SELECT count(*) FROM store_sales o
        WHERE EXISTS (SELECT 1 FROM store_sales i WHERE i.ss_item_sk = o.ss_quantity
                      AND i.ss_sales_price < 5)
          AND NOT EXISTS (SELECT 1 FROM store_sales i WHERE i.ss_customer_sk = o.ss_quantity
                          AND i.ss_sales_price < 5)""", False),
    "self_join_other_columns": ("""
        SELECT x.ss_item_sk, x.ss_list_price, y.ss_customer_sk, y.ss_sales_price
        FROM (SELECT ss_item_sk, ss_list_price FROM store_sales WHERE ss_quantity > 30) x
        JOIN (SELECT ss_customer_sk, ss_sales_price FROM store_sales WHERE ss_quantity > 30) y
          ON x.ss_item_sk = y.ss_customer_sk""", False),
    "self_union_grouped": ("""
        SELECT ss_item_sk g, sum(ss_list_price) v FROM store_sales GROUP BY ss_item_sk
        UNION ALL
        SELECT ss_customer_sk g, sum(ss_sales_price) v FROM store_sales GROUP BY ss_customer_sk""",
                           False),
    "except_twins": ("""
        SELECT ss_item_sk FROM store_sales WHERE ss_quantity < 10
        EXCEPT SELECT ss_customer_sk FROM store_sales WHERE ss_quantity < 10""", False),
    # the same columns read twice: Spark reuses, and so does Ember
    "self_join_same_columns": ("""
        WITH a AS (SELECT ss_item_sk k, sum(ss_net_paid) s FROM store_sales GROUP BY ss_item_sk)
        SELECT x.k, x.s, y.s FROM a x JOIN a y ON x.k = y.k + 1""", True),
}

#: Ember configurations (Spark runs its defaults): broadcast reuse, then shuffle reuse
CONFS = {"default": {}, "no_broadcast": {"spark.sql.autoBroadcastJoinThreshold": "-1"}}

_expected: dict[str, dict[str, Any]] = {}


def _spark_outcome(spark: Any, views: list[str], name: str) -> dict[str, Any]:
    if name not in _expected:
        session = spark.newSession()
        for v in views:
            session.sql(v)
        _expected[name] = run_statement(session, QUERIES[name][0])
    return _expected[name]


@pytest.mark.parametrize("conf", list(CONFS))
@pytest.mark.parametrize("runtime", RUNTIMES)
@pytest.mark.parametrize("name", list(QUERIES))
def test_reads_of_other_columns_are_not_reused(spark, views, name, runtime, conf):
    expected = _spark_outcome(spark, views, name)
    assert "error" not in expected and expected["rows"], expected
    session = new_session(CONFS[conf], runtime)
    for v in views:
        session.sql(v)
    sql, reused = QUERIES[name]
    problem = check_outcome(expected, run_sql(session, sql))
    assert problem is None, f"{name} ({runtime} runtime, {conf}):\n{sql}\n{problem}"
    if conf == "no_broadcast":  # a shuffle is reused exactly where Spark reuses one
        plan = session.sql(sql)._qe.explain_string("simple")
        assert ("ReusedExchange" in plan) == reused, plan
