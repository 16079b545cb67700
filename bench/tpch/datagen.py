"""Generate TPC-H data with DuckDB's ``tpch`` extension, offline, and write one Parquet file per table.

Needs ``duckdb`` and ``duckdb-extension-tpch`` (the extension binary ships inside that wheel, so
nothing is downloaded).  Also gives the 22 queries in Spark SQL form (``queries/qNN.sql``) and
DuckDB's own text of them (the oracle used by the tests).

>>> from bench.tpch.datagen import generate                      # doctest: +SKIP
>>> paths = generate("/tmp/tpch_sf001", sf=0.01)                  # doctest: +SKIP
>>> paths["lineitem"]                                             # doctest: +SKIP
'/tmp/tpch_sf001/lineitem.parquet'
"""

from __future__ import annotations

import glob
import os
from pathlib import Path

TABLES = ("customer", "lineitem", "nation", "orders", "part", "partsupp", "region", "supplier")
QUERY_DIR = Path(__file__).resolve().parent / "queries"


def _extension_path(name: str = "tpch") -> str:
    """Path of DuckDB's ``name`` extension binary shipped by the ``duckdb-extension-<name>``
    wheel (tpch, tpcds)."""
    import importlib

    import duckdb

    base = os.path.dirname(importlib.import_module(f"duckdb_extension_{name}").__file__)
    binary = f"{name}.duckdb_extension"
    found = glob.glob(os.path.join(base, "extensions", f"v{duckdb.__version__}", binary))
    found = found or glob.glob(os.path.join(base, "extensions", "*", binary))
    if not found:
        raise RuntimeError(f"{binary} not found under {base}")
    return found[0]


def connect(extension: str = "tpch"):
    """A fresh in-memory DuckDB connection with the ``extension`` (tpch, tpcds) loaded
    (offline)."""
    import duckdb

    con = duckdb.connect()
    con.execute(f"LOAD '{_extension_path(extension)}'")
    return con


def generate(path: str | os.PathLike, sf: float = 0.01) -> dict[str, str]:
    """Generate TPC-H at scale factor ``sf`` and write ``<path>/<table>.parquet`` for each table.

    Returns ``{table: parquet_path}``.  Existing files are overwritten.
    """
    out = Path(path)
    out.mkdir(parents=True, exist_ok=True)
    con = connect()
    try:
        con.execute(f"CALL dbgen(sf={float(sf)})")
        paths = {}
        for t in TABLES:
            p = str(out / f"{t}.parquet")
            con.execute(f"COPY {t} TO '{p}' (FORMAT parquet)")
            paths[t] = p
        return paths
    finally:
        con.close()


def spark_queries() -> dict[int, str]:
    """The 22 queries in Spark SQL form, ``{n: sql}`` (trailing ';' stripped)."""
    return {n: (QUERY_DIR / f"q{n:02d}.sql").read_text().strip().rstrip(";") for n in range(1, 23)}


def duckdb_queries() -> dict[int, str]:
    """DuckDB's own text of the 22 queries (``tpch_queries()``), ``{n: sql}``."""
    con = connect()
    try:
        return {int(n): q for n, q in con.execute("SELECT query_nr, query FROM tpch_queries()").fetchall()}
    finally:
        con.close()


def register_ember(session, paths: dict[str, str]) -> None:
    """Register each table as an Ember (or PySpark) temp view over its Parquet file."""
    for t, p in paths.items():
        session.sql(f"CREATE OR REPLACE TEMP VIEW {t} USING parquet OPTIONS (path '{p}')")


def register_duckdb(con, paths: dict[str, str]) -> None:
    """Register each table as a DuckDB view over its Parquet file."""
    for t, p in paths.items():
        con.execute(f"CREATE OR REPLACE VIEW {t} AS SELECT * FROM read_parquet('{p}')")


if __name__ == "__main__":
    import sys

    dest = sys.argv[1] if len(sys.argv) > 1 else "/tmp/tpch_sf001"
    scale = float(sys.argv[2]) if len(sys.argv) > 2 else 0.01
    for table, file in generate(dest, scale).items():
        print(table, file)
