"""Generate TPC-DS data with DuckDB's ``tpcds`` extension, offline, and write one Parquet file per
table; convert DuckDB's text of the 99 queries to Spark SQL.

Needs ``duckdb`` and ``duckdb-extension-tpcds`` (the extension binary ships inside that wheel, so
nothing is downloaded).  ``python -m bench.tpcds.datagen --queries`` rewrites ``queries/qNN.sql``
from DuckDB's ``tpcds_queries()`` through :func:`to_spark_sql`; Spark (the golden generator, the
benchmark) and Ember read those files.

>>> from bench.tpcds.datagen import generate                     # doctest: +SKIP
>>> paths = generate("/tmp/tpcds_sf001", sf=0.01)                 # doctest: +SKIP
>>> paths["store_sales"]                                          # doctest: +SKIP
'/tmp/tpcds_sf001/store_sales.parquet'
"""

from __future__ import annotations

import os
import re
import sys
from pathlib import Path

from bench.tpch import datagen as tpch_datagen

#: Register each table as an Ember (or PySpark) temp view / a DuckDB view over its Parquet file.
register, register_duckdb = tpch_datagen.register_ember, tpch_datagen.register_duckdb

TABLES = ("call_center", "catalog_page", "catalog_returns", "catalog_sales", "customer",
          "customer_address", "customer_demographics", "date_dim", "household_demographics",
          "income_band", "inventory", "item", "promotion", "reason", "ship_mode", "store",
          "store_returns", "store_sales", "time_dim", "warehouse", "web_page", "web_returns",
          "web_sales", "web_site")
QUERY_DIR = Path(__file__).resolve().parent / "queries"
QUERIES = tuple(range(1, 100))


def connect():
    """A fresh in-memory DuckDB connection with the tpcds extension loaded (offline)."""
    return tpch_datagen.connect("tpcds")


def paths_in(path: str | os.PathLike) -> dict[str, str]:
    """``{table: <path>/<table>.parquet}`` for the 24 tables."""
    return {t: os.path.join(path, f"{t}.parquet") for t in TABLES}


def generate(path: str | os.PathLike, sf: float = 0.01) -> dict[str, str]:
    """Generate TPC-DS at scale factor ``sf`` and write ``<path>/<table>.parquet`` for each table.

    Returns ``{table: parquet_path}``.  Existing files are overwritten.
    """
    Path(path).mkdir(parents=True, exist_ok=True)
    con = connect()
    try:
        con.execute(f"CALL dsdgen(sf={float(sf)})")
        paths = paths_in(path)
        for t, p in paths.items():
            con.execute(f"COPY {t} TO '{p}' (FORMAT parquet)")
        return paths
    finally:
        con.close()


def ensure(path: str | os.PathLike, sf: float) -> dict[str, str]:
    """The tables under ``path``, generated at ``sf`` first unless every file is there."""
    paths = paths_in(path)
    if not all(os.path.exists(p) for p in paths.values()):
        print(f"generating TPC-DS SF{sf} into {path} ...", file=sys.stderr, flush=True)
        generate(path, sf)
    return paths


_DOUBLE_QUOTED = re.compile(r'"((?:[^"]|"")*)"')


def to_spark_sql(duckdb_sql: str) -> str:
    """DuckDB's text of a TPC-DS query in Spark SQL: the only rewrites, applied to every query.

    1. ``"name"`` -> ```name```: DuckDB (like standard SQL) reads a double-quoted token as an
       identifier (the column aliases ``"order count"``, ``"30 days"`` ... of q16, q32, q50, q62,
       q92, q94, q95, q99); Spark reads it as a string literal unless
       ``spark.sql.ansi.doubleQuotedIdentifiers`` is on, which it is not by default.  The query
       texts hold no double-quoted string literal, so every double-quoted token is an identifier.
    2. The trailing ``;`` is dropped (``spark.sql`` takes one statement without it).

    Everything else (DuckDB's texts already spell dates as ``cast('...' AS date)``, orderings
    with explicit ``NULLS FIRST``, ``date + int``) is valid Spark SQL with the same meaning.
    """
    def backquoted(m: re.Match) -> str:
        return "`" + m.group(1).replace('""', '"').replace("`", "``") + "`"

    text = _DOUBLE_QUOTED.sub(backquoted, duckdb_sql)
    return text.strip().rstrip(";").rstrip() + "\n"


def duckdb_queries() -> dict[int, str]:
    """DuckDB's own text of the 99 queries (``tpcds_queries()``), ``{n: sql}``."""
    con = connect()
    try:
        rows = con.execute("SELECT query_nr, query FROM tpcds_queries()").fetchall()
        return {int(n): q for n, q in rows}
    finally:
        con.close()


def write_queries() -> None:
    """(Re)write ``queries/qNN.sql``: :func:`to_spark_sql` of DuckDB's text of each query."""
    QUERY_DIR.mkdir(exist_ok=True)
    for n, q in duckdb_queries().items():
        (QUERY_DIR / f"q{n:02d}.sql").write_text(to_spark_sql(q))


def spark_queries() -> dict[int, str]:
    """The 99 queries in Spark SQL form, ``{n: sql}``."""
    return {n: (QUERY_DIR / f"q{n:02d}.sql").read_text().strip() for n in QUERIES}


if __name__ == "__main__":
    if sys.argv[1:] == ["--queries"]:
        write_queries()
        print(f"wrote {len(QUERIES)} queries to {QUERY_DIR}")
    else:
        dest = sys.argv[1] if len(sys.argv) > 1 else "/tmp/tpcds_sf001"
        scale = float(sys.argv[2]) if len(sys.argv) > 2 else 0.01
        for table, file in generate(dest, scale).items():
            print(table, file)
