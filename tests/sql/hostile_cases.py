"""Statements of issue 24's failure table (deep nesting, LIMIT/OFFSET, join conditions, type
parameters, date/time overflow, set operations over nested types, absurd string sizes), shared
by ``tests/sql/test_hostile_input.py`` and its golden generator
``python -m tests.sql.hostile_cases`` (runs them on PySpark 4.3, writes
``tests/sql/golden/hostile_input.json``).

``DEEP`` statements take seconds each on Ember and run only with ``EMBER_HOSTILE_DEEP=1``.
"""

from __future__ import annotations

import datetime
import decimal
import json
import sys
from pathlib import Path
from typing import Any

GOLDEN = Path(__file__).parent / "golden" / "hostile_input.json"

SETUP = (
    "CREATE OR REPLACE TEMP VIEW ti AS SELECT * FROM VALUES (1, 10), (2, 20) AS t(id, a)",
    "CREATE OR REPLACE TEMP VIEW ts AS SELECT * FROM VALUES (1, 'x'), (2, 'y') AS t(id, s)",
)


def _chain(n: int, sep: str, item: str) -> str:
    return sep.join([item] * n)


CASES: dict[str, str] = {
    "paren_50": "SELECT " + "(" * 50 + "1" + ")" * 50,
    "paren_1000": "SELECT " + "(" * 1000 + "1" + ")" * 1000,
    "plus_100": "SELECT " + _chain(100, " + ", "a") + " FROM VALUES (1) AS t(a)",
    "and_500": "SELECT count(*) FROM VALUES (1) AS t(a) WHERE "
               + " AND ".join(f"a < {i + 2}" for i in range(500)),
    "and_or_names": "SELECT a > 0 AND a > 1 AND a > 2 AND a > 3, a = 1 OR a = 2 OR (a = 3 OR a = 4)"
                    " OR a = 5 FROM VALUES (1) AS t(a)",
    "union_100": "SELECT count(*), sum(x) FROM ("
                 + " UNION ALL ".join(f"SELECT {i} AS x" for i in range(100)) + ")",
    "on_int": "SELECT * FROM ti JOIN ts ON ti.a",
    "on_string": "SELECT * FROM ti JOIN ts ON s",
    "on_concat": "SELECT * FROM ti JOIN ts ON ti.id || ts.id",
    "on_sum": "SELECT * FROM ti JOIN ts ON sum(ti.a) > 0",
    "on_window": "SELECT * FROM ti JOIN ts ON row_number() OVER (ORDER BY ti.id) = 1",
    "limit_true": "SELECT 1 LIMIT true",
    "limit_string": "SELECT 1 LIMIT 'a'",
    "limit_column": "SELECT a FROM VALUES (1) AS t(a) LIMIT a + 1",
    "limit_negative": "SELECT 1 LIMIT -1",
    "limit_null": "SELECT 1 LIMIT null",
    "limit_null_int": "SELECT 1 LIMIT CAST(NULL AS INT)",
    "limit_bigint": "SELECT 1 LIMIT 3000000000",
    "limit_folded": "SELECT 1 LIMIT 1 + 1",
    "offset_true": "SELECT 1 OFFSET true",
    "offset_negative": "SELECT 1 OFFSET -1",
    "offset_null": "SELECT 1 OFFSET null",
    "offset_column": "SELECT a FROM VALUES (1) AS t(a) OFFSET a",
    "decimal_word": "SELECT CAST(1 AS DECIMAL(ARR))",
    "decimal_precision": "SELECT CAST(1 AS DECIMAL(40, 2))",
    "decimal_scale": "SELECT CAST(1 AS DECIMAL(5, 7))",
    "date_overflow": "SELECT date_add(DATE '9999-12-31', 1)",
    "timestamp_overflow": "SELECT TIMESTAMP '9999-12-31 23:59:59' + INTERVAL 1 DAY",
    "intersect_array": "SELECT array(1) AS v INTERSECT SELECT array(1)",
    "except_array": "SELECT array(1) AS v EXCEPT SELECT array(2)",
    "intersect_struct": "SELECT named_struct('a', 1) AS v INTERSECT SELECT named_struct('a', 1)",
    "lpad_huge": "SELECT lpad('a', 2147483647, 'b')",
    "repeat_huge": "SELECT repeat('ab', 2000000000)",
    "space_huge": "SELECT space(2147483647)",
    "sequence_huge": "SELECT sequence(1, 3000000000)",
    "sequence_huge_step": "SELECT sequence(0L, 9000000000000000000L, 2L)",
    "array_repeat_huge": "SELECT array_repeat(1, 2147483647)",
    "outer_in_select": "SELECT c, (SELECT c) FROM VALUES (1), (2) AS t(c)",
    "outer_expression": "SELECT c, (SELECT c + 1 AS d) FROM VALUES (1), (NULL) AS t(c)",
    "outer_in_where": "SELECT c FROM VALUES (1), (2) AS t(c) WHERE (SELECT c) > 1",
}

#: Slow on Ember (seconds each): only with EMBER_HOSTILE_DEEP=1.
DEEP: dict[str, str] = {
    "plus_500": "SELECT " + _chain(500, " + ", "a") + " FROM VALUES (1) AS t(a)",
    "union_500": "SELECT count(*), sum(x) FROM ("
                 + " UNION ALL ".join(f"SELECT {i} AS x" for i in range(500)) + ")",
    "join_168": "SELECT count(*) FROM (SELECT 1 AS k0) t0 " + " ".join(
        f"JOIN (SELECT 1 AS k{i}) t{i} ON t{i - 1}.k{i - 1} = t{i}.k{i}" for i in range(1, 168)),
}


def normalize(v: Any) -> Any:
    """A collected value as JSON (PySpark's and Ember's Row, dates, decimals)."""
    if hasattr(v, "asDict"):
        return [normalize(x) for x in v]
    if isinstance(v, (list, tuple)):
        return [normalize(x) for x in v]
    if isinstance(v, dict):
        return {k: normalize(x) for k, x in v.items()}
    if isinstance(v, (datetime.date, decimal.Decimal)):
        return str(v)
    return v


def _spark_outcome(spark: Any, sql: str) -> dict[str, Any]:
    try:
        df = spark.sql(sql)
        return {"columns": df.columns, "rows": normalize(df.collect())}
    except Exception as e:  # noqa: BLE001 - recorded: its class, or that it has none
        cond = getattr(e, "getCondition", lambda: None)()
        out: dict[str, Any] = {"error_class": cond}
        if cond is None:
            out["spark_exception"] = f"{type(e).__name__}: {str(e).splitlines()[0][:200]}"
            if "StackOverflowError" in str(e)[:300]:
                out["spark_exception"] = "java.lang.StackOverflowError"
            elif "OutOfMemoryError" in str(e)[:300]:
                out["spark_exception"] = "java.lang.OutOfMemoryError"
        return out


def main() -> None:
    sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
    from tests.spark_session import get_spark

    spark = get_spark()
    for s in SETUP:
        spark.sql(s)
    golden = {}
    for name, sql in {**CASES, **DEEP}.items():
        golden[name] = {"sql": sql, **_spark_outcome(spark, sql)}
        print(name, {k: v for k, v in golden[name].items() if k != "sql"}, flush=True)
    GOLDEN.parent.mkdir(exist_ok=True)
    GOLDEN.write_text(json.dumps(golden, indent=1) + "\n")


if __name__ == "__main__":
    main()
