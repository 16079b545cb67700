"""Generate the TPC-DS goldens from the PySpark oracle.

Usage (from the repository root)::

    python -m tests.tpcds.generate            # all 99 queries
    python -m tests.tpcds.generate 5 72       # only these

The tables are generated at :data:`SF` with DuckDB's tpcds extension (``bench.tpcds.datagen``)
into a temporary directory; Spark SQL (``tests.spark_session.get_spark()``, ANSI on) runs each
query of ``bench/tpcds/queries`` over them.  Output: ``tests/tpcds/golden/qNN.json`` (checked in)
holding the result schema (``[name, simpleString]`` per field), the rows in the normal form of
:mod:`tests.conformance.normalize`, and ``ordered``: whether the rows must come in this order,
i.e. the query ends in a global sort whose keys are all output columns and whose key values are
distinct in the result (a total order).  Otherwise the rows are stored sorted and compared as a
multiset.
"""

from __future__ import annotations

import json
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from bench.tpcds import datagen
from tests.conformance.normalize import normalize_table, sorted_rows

#: The scale factor of the test data (1.9 s to generate; 72 of the 99 queries have rows).
SF = 0.01
GOLDEN_DIR = Path(__file__).resolve().parent / "golden"

#: Nodes between the root and the query's final sort that keep its row order and its output.
_ABOVE_SORT = {"GlobalLimit", "LocalLimit", "Limit"}


def golden_path(n: int) -> Path:
    return GOLDEN_DIR / f"q{n:02d}.json"


def _simple_name(plan: Any) -> str:
    return plan.getClass().getSimpleName()


def _seq(seq: Any) -> list[Any]:
    return [seq.apply(i) for i in range(seq.size())]


def total_order_keys(analyzed: Any) -> list[int] | None:
    """Output column positions of the final global sort's keys, or None when the plan does not
    end in a global sort (below limits only) or a key is not an output column."""
    node = analyzed
    while _simple_name(node) in _ABOVE_SORT:
        node = _seq(node.children())[0]
    if _simple_name(node) != "Sort" or not getattr(node, "global")():
        return None
    out_ids = [a.exprId().id() for a in _seq(analyzed.output())]
    keys = []
    for order in _seq(node.order()):
        child = order.child()
        if _simple_name(child) != "AttributeReference" or child.exprId().id() not in out_ids:
            return None
        keys.append(out_ids.index(child.exprId().id()))
    return keys


def run_query(spark: Any, sql: str) -> dict[str, Any]:
    """Run one query on Spark and describe its result in golden form."""
    df = spark.sql(sql)
    keys = total_order_keys(df._jdf.queryExecution().analyzed())
    schema = [[f.name, f.dataType.simpleString()] for f in df.schema.fields]
    rows = normalize_table(df.toArrow())
    ordered = keys is not None and len({tuple(repr(r[k]) for k in keys) for r in rows}) == len(rows)
    return {"schema": schema, "ordered": ordered, "rows": rows if ordered else sorted_rows(rows)}


def main(argv: list[str]) -> None:
    from tests.spark_session import get_spark

    only = [int(a) for a in argv] or list(datagen.QUERIES)
    spark = get_spark()
    queries = datagen.spark_queries()
    GOLDEN_DIR.mkdir(exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="tpcds_golden_") as tmp:
        datagen.register(spark, datagen.generate(tmp, SF))
        for n in only:
            t0 = time.perf_counter()
            golden = run_query(spark, queries[n])
            text = json.dumps(golden, separators=(",", ":"))
            golden_path(n).write_text(text.replace("],[", "],\n[") + "\n")
            print(f"q{n:02d} {len(golden['rows']):4d} rows ordered={golden['ordered']} "
                  f"{time.perf_counter() - t0:6.2f}s", flush=True)


if __name__ == "__main__":
    main(sys.argv[1:])
