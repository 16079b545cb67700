"""Run the 22 TPC-H queries on Ember and on DuckDB over the same Parquet files and compare.

Not a test (tests/tpch/test_tpch.py is).  Run:
``/work/venv/bin/python -m bench.tpch.compare [data_dir] [sf] [query numbers...]``.
"""

from __future__ import annotations

import datetime as _dt
import math
import sys
import time
from decimal import Decimal

from bench.tpch import datagen


def _norm(v):
    """A comparable, hashable value: numbers as float, everything else as is."""
    if isinstance(v, (Decimal, int, float)) and not isinstance(v, bool):
        return float(v)
    return v


def _key(row):
    return tuple((v is None, "" if v is None else (0, v) if isinstance(v, float) else (1, str(v)))
                 for v in row)


def rows_of(table) -> list[tuple]:
    """Rows of an Arrow table as tuples of normalized values."""
    cols = [c.to_pylist() for c in table.columns]
    return [tuple(_norm(v) for v in r) for r in zip(*cols)]


def _close(a, b, rel: float, abs_tol: float) -> bool:
    if isinstance(a, float) and isinstance(b, float):
        return a == b or math.isclose(a, b, rel_tol=rel, abs_tol=abs_tol)
    if isinstance(a, _dt.datetime) and isinstance(b, _dt.datetime):
        return a.replace(tzinfo=None) == b.replace(tzinfo=None)
    return a == b


def diff(ember_table, duck_table, rel: float = 1e-6) -> str | None:
    """None when the two Arrow tables hold the same rows as sorted lists, else why.

    Numbers compare as floats within ``rel`` (relative); an Ember DECIMAL(p, s) column also
    accepts a difference of one unit of its scale (Spark rounds decimal results, e.g. avg of
    DECIMAL(15,2) is DECIMAL(19,6), where DuckDB returns a double)."""
    import pyarrow as pa

    if ember_table.num_columns != duck_table.num_columns:
        return f"column count {ember_table.num_columns} (ember) != {duck_table.num_columns} (duckdb)"
    abs_tol = [10.0 ** -t.scale if pa.types.is_decimal(t) else 1e-9
               for t in ember_table.schema.types]
    ember_rows, duck_rows = rows_of(ember_table), rows_of(duck_table)
    if len(ember_rows) != len(duck_rows):
        return f"row count {len(ember_rows)} (ember) != {len(duck_rows)} (duckdb)"
    a, b = sorted(ember_rows, key=_key), sorted(duck_rows, key=_key)
    for i, (x, y) in enumerate(zip(a, b)):
        if not all(_close(p, q, rel, t) for p, q, t in zip(x, y, abs_tol)):
            return f"row {i}: ember {x} != duckdb {y}"
    return None


def main() -> None:
    import ember

    data = sys.argv[1] if len(sys.argv) > 1 else "/tmp/tpch001"
    sf = float(sys.argv[2]) if len(sys.argv) > 2 else 0.01
    only = [int(a) for a in sys.argv[3:]] or list(range(1, 23))
    import os

    if not os.path.exists(os.path.join(data, "lineitem.parquet")):
        datagen.generate(data, sf)
    paths = {t: os.path.join(data, f"{t}.parquet") for t in datagen.TABLES}
    s = ember.Session()
    datagen.register_ember(s, paths)
    con = datagen.connect()
    datagen.register_duckdb(con, paths)
    sq, dq = datagen.spark_queries(), datagen.duckdb_queries()
    for n in only:
        t0 = time.perf_counter()
        try:
            got = s.sql(sq[n]).to_arrow()
        except Exception as e:  # noqa: BLE001 - a report, not a test
            print(f"Q{n:02d} ERROR {type(e).__name__}: {str(e)[:300]}")
            continue
        dt = time.perf_counter() - t0
        want = con.execute(dq[n]).to_arrow_table()
        d = diff(got, want)
        print(f"Q{n:02d} {'OK  ' if d is None else 'DIFF'} {dt:7.2f}s rows={got.num_rows}" + ("" if d is None else f"  {d[:300]}"))


if __name__ == "__main__":
    main()
