"""PIVOT / UNPIVOT in SQL (issue 18 item 5: both were dropped without a word, returning the input
rows): every query runs on PySpark and on Ember (both runtimes, optimizer on and off) and must
give the same column names, types, nullability and rows (a multiset unless ordered), or the same
error class.

The DataFrame forms (``groupBy().pivot()``, ``unpivot``, ``melt``) are programs of
``tests/differential/test_dataframe_api.py``.
"""

from __future__ import annotations

from typing import Any

import pytest

from tests.conformance.ember_adapter import RUNTIMES, new_session
from tests.differential.compare import Failed, sql_outcome

S = ("(SELECT * FROM VALUES ('a', 2023, 10), ('a', 2024, 20), ('b', 2024, 5), ('c', NULL, 7), "
     "('a', 2023, 1), ('b', 2025, NULL) AS s(cat, yr, amt))")
D = ("(SELECT * FROM VALUES ('x', DATE'2020-01-01', 1.5D, true), ('x', DATE'2020-01-02', NULL, "
     "false), ('y', DATE'2020-01-01', 2.5D, NULL) AS d(k, day, v, flag))")
U = ("(SELECT * FROM VALUES (1, 2, 3L, 'x', 1.5BD), (2, NULL, 5L, 'y', NULL), "
     "(3, NULL, NULL, 'z', 2.25BD) AS t(id, c1, c2, s, dec))")

#: name -> (query, ordered)
QUERIES: dict[str, tuple[str, bool]] = {
    # -- PIVOT ---------------------------------------------------------------------------
    "issue_repro": (f"SELECT * FROM {S} PIVOT (sum(amt) FOR yr IN (2023, 2024))", False),
    "value_aliases_absent_and_null_values":
        (f"SELECT * FROM {S} PIVOT (sum(amt) FOR yr IN (2023 AS y23, 2024, 2030, NULL))", False),
    "several_aggregates":
        (f"SELECT * FROM {S} PIVOT (sum(amt), count(amt) AS n, avg(amt) FOR yr IN "
         "(2023 AS y23, 2024))", False),
    "count_star_groups_by_every_other_column":
        (f"SELECT * FROM {S} PIVOT (count(*) FOR yr IN (2023, 2030))", False),
    "count_of_an_absent_value_is_null":
        (f"SELECT * FROM {S} PIVOT (count(amt) AS c, count_if(amt > 5) FOR cat IN ('a', 'z'))",
         False),
    "string_result_filters_each_aggregate":
        (f"SELECT * FROM (SELECT cat, yr FROM {S}) PIVOT (max(cat) AS m, min(cat) FOR yr IN "
         "(2023, 2024, 2030))", False),
    "first_last_skip_other_values":
        (f"SELECT * FROM (SELECT cat, yr, CAST(amt AS STRING) AS a FROM {S}) PIVOT "
         "(first(a), last(a) FOR cat IN ('a', 'b'))", False),
    "several_pivot_columns":
        (f"SELECT * FROM {S} PIVOT (sum(amt) FOR (cat, yr) IN (('a', 2023) AS a23, ('b', 2024), "
         "('c', NULL)))", False),
    "string_pivot_column": (f"SELECT * FROM {S} PIVOT (sum(amt) FOR cat IN ('a', 'b'))", False),
    "values_cast_to_the_column_type":
        (f"SELECT * FROM {S} PIVOT (max(amt) FOR yr IN ('2023', 2024L, 2025.5))", False),
    "date_pivot_column":
        (f"SELECT * FROM {D} PIVOT (sum(v) AS s, max(flag) FOR day IN (DATE'2020-01-01', "
         "DATE'2020-01-02' AS second))", False),
    "boolean_pivot_values": (f"SELECT * FROM {D} PIVOT (sum(v) FOR flag IN (true, false, NULL))",
                             False),
    "aggregate_filter_and_distinct":
        (f"SELECT * FROM {S} PIVOT (count(DISTINCT cat) AS dc, sum(amt) FILTER (WHERE amt > 5) "
         "AS big FOR yr IN (2023, 2024))", False),
    "pivot_then_where_order": (f"SELECT cat, `2023` FROM {S} PIVOT (sum(amt) FOR yr IN (2023)) "
                               "WHERE cat <> 'b' ORDER BY cat DESC", True),
    "pivot_alias": (f"SELECT pv.* FROM {S} PIVOT (sum(amt) FOR yr IN (2023)) AS pv", False),
    "pivot_over_join":
        (f"SELECT * FROM {S} JOIN (SELECT 'a' AS c2) ON cat = c2 PIVOT (sum(amt) FOR yr IN "
         "(2023, 2024))", False),
    "pivot_in_subquery_then_aggregate":
        (f"SELECT count(*), sum(`2024`) FROM (SELECT * FROM {S} PIVOT (sum(amt) FOR yr IN "
         "(2024)))", False),
    "expression_over_aggregates":
        (f"SELECT * FROM {S} PIVOT (sum(amt) + 1 AS p, max(amt) - min(amt) FOR yr IN (2023))",
         False),
    "column_outside_aggregate": (f"SELECT * FROM {S} PIVOT (amt FOR yr IN (2023))", False),
    "nan_and_signed_zero_values":
        ("SELECT * FROM VALUES ('a', CAST('NaN' AS DOUBLE), 1), ('a', -0.0D, 2), ('a', 0.0D, 4), "
         "('b', CAST('NaN' AS DOUBLE), 8) AS s(cat, f, amt) PIVOT (sum(amt) AS s, "
         "max(CAST(amt AS STRING)) AS m FOR f IN (CAST('NaN' AS DOUBLE) AS nan, 0.0D AS z, "
         "-0.0D AS nz))", False),
    "nan_value_string_aggregate":
        ("SELECT * FROM VALUES ('a', CAST('NaN' AS DOUBLE), 'x'), ('a', 1.0D, 'y') AS s(cat, f, v) "
         "PIVOT (max(v) FOR f IN (CAST('NaN' AS DOUBLE) AS nan, 1.0D))", False),
    "repeated_value": (f"SELECT * FROM {S} PIVOT (sum(amt) FOR yr IN (2023, 2023 AS again))",
                       False),
    "non_literal_value": (f"SELECT * FROM {S} PIVOT (sum(amt) FOR yr IN (yr))", False),
    "uncastable_value": (f"SELECT * FROM {S} PIVOT (sum(amt) FOR yr IN ('x'))", False),
    # Spark's Cast.canCast allows DATE to INT; the value evaluates to NULL
    "date_value_of_an_int_column": (f"SELECT * FROM {S} PIVOT (sum(amt) FOR yr IN "
                                    "(DATE'2020-01-01'))", False),
    "value_type_mismatch": (f"SELECT * FROM {D} PIVOT (sum(v) FOR day IN (true))", False),
    "unknown_pivot_column": (f"SELECT * FROM {S} PIVOT (sum(amt) FOR nope IN (1))", False),
    "pivot_then_unpivot": (f"SELECT * FROM {S} PIVOT (sum(amt) FOR yr IN (2023)) "
                           "UNPIVOT (v FOR c IN (cat))", False),
    # Spark 4's relationExtension: joins and pivots apply left to right within a FROM item
    "pivot_then_join": (f"SELECT * FROM {S} PIVOT (sum(amt) FOR yr IN (2024)) JOIN "
                        "(SELECT 'b' AS c2) ON cat = c2", False),
    "join_without_condition_then_pivot":
        (f"SELECT * FROM {S} JOIN (SELECT 1 AS one) PIVOT (sum(amt) FOR yr IN (2024))", False),
    "pivot_of_the_second_comma_item":
        (f"SELECT * FROM (SELECT 1 AS one), {S} PIVOT (sum(amt) FOR yr IN (2024))", False),
    # -- UNPIVOT -------------------------------------------------------------------------
    "unpivot_excludes_nulls": (f"SELECT * FROM {U} UNPIVOT (v FOR c IN (c1, c2))", False),
    "unpivot_include_nulls_aliases":
        (f"SELECT * FROM {U} UNPIVOT INCLUDE NULLS (v FOR c IN (c1 AS one, c2))", False),
    "unpivot_exclude_nulls_explicit":
        (f"SELECT * FROM {U} UNPIVOT EXCLUDE NULLS (v FOR c IN (c1, dec))", False),
    "unpivot_common_type_decimal":
        (f"SELECT * FROM {U} UNPIVOT INCLUDE NULLS (v FOR c IN (c2, dec))", False),
    "unpivot_common_type_timestamp":
        ("SELECT * FROM VALUES (1, DATE'2020-01-01', TIMESTAMP'2020-01-01 10:00:00') "
         "AS t(id, a, b) UNPIVOT (v FOR c IN (a, b))", False),
    "unpivot_several_values":
        (f"SELECT * FROM {U} UNPIVOT ((v1, v2) FOR c IN ((c1, c2) AS x, (id, c1)))", False),
    "unpivot_several_values_include_nulls":
        (f"SELECT * FROM {U} UNPIVOT INCLUDE NULLS ((v1, v2) FOR c IN ((c1, c2), (id, dec)))",
         False),
    "unpivot_names_as_written":
        (f"SELECT up.* FROM {U} UNPIVOT (v FOR c IN (C1, c2)) AS up ORDER BY id, c", True),
    "unpivot_then_aggregate":
        (f"SELECT c, sum(v) FROM {U} UNPIVOT (v FOR c IN (c1, c2)) GROUP BY c", False),
    "unpivot_type_mismatch": (f"SELECT * FROM {U} UNPIVOT (v FOR c IN (c1, s))", False),
    "unpivot_size_mismatch":
        (f"SELECT * FROM {U} UNPIVOT ((v1, v2) FOR c IN ((c1, c2, id) AS x))", False),
    "unpivot_unknown_column": (f"SELECT * FROM {U} UNPIVOT (v FOR c IN (c1, nope))", False),
    "unpivot_expression_is_a_syntax_error":
        (f"SELECT * FROM {U} UNPIVOT (v FOR c IN (c1 + 1, c2))", False),
}


@pytest.fixture(scope="module")
def spark_outcomes(spark: Any) -> dict[str, Any]:
    return {name: sql_outcome(spark.sql, sql, is_spark=True, ordered=ordered)
            for name, (sql, ordered) in QUERIES.items()}


@pytest.mark.differential
@pytest.mark.parametrize("runtime", RUNTIMES)
@pytest.mark.parametrize("name", sorted(QUERIES))
def test_query_matches_spark(spark_outcomes: dict[str, Any], name: str, runtime: str) -> None:
    sql, ordered = QUERIES[name]
    expected = spark_outcomes[name]
    for optimize in (True, False):
        session = new_session({"ember.optimizer.enabled": str(optimize).lower()}, runtime)
        actual = sql_outcome(session.sql, sql, is_spark=False, ordered=ordered)
        if isinstance(expected, Failed) or isinstance(actual, Failed):
            ok = isinstance(expected, Failed) and isinstance(actual, Failed) and (
                expected.cls == actual.cls)
        else:
            ok = expected == actual
        assert ok, (f"{name} ({runtime} runtime, optimizer {optimize}) differs from PySpark\n"
                    f"Spark: {expected!r}\nEmber: {actual!r}")


def test_expected_outcomes_are_not_all_errors(spark_outcomes: dict[str, Any]) -> None:
    # the oracle itself: the repro of the issue pivots (Spark's columns), errors stay errors
    repro = spark_outcomes["issue_repro"]
    assert not isinstance(repro, Failed)
    assert [c[0] for c in repro["schema"]] == ["cat", "2023", "2024"]
    assert isinstance(spark_outcomes["unpivot_type_mismatch"], Failed)
