"""The 22 TPC-H queries (Spark SQL text, bench/tpch/queries) on Ember vs DuckDB, SF 0.01.

Data is generated once per session with DuckDB's tpch extension (offline: the binary ships in the
``duckdb-extension-tpch`` wheel) into Parquet files that both engines read.  DuckDB runs its own
text of each query (``tpch_queries()``); rows are compared as sorted lists, numbers within 1e-6
relative, or one unit of the scale of Ember's DECIMAL column (Spark's decimal results are the
reference, e.g. avg(DECIMAL(15,2)) is DECIMAL(19,6) where DuckDB returns a double).
"""

from __future__ import annotations

import pytest

pytest.importorskip("duckdb")
pytest.importorskip("duckdb_extension_tpch")

from bench.tpch import datagen  # noqa: E402
from bench.tpch.compare import diff  # noqa: E402

SF = 0.01


@pytest.fixture(scope="session")
def tpch_paths(tmp_path_factory) -> dict[str, str]:
    return datagen.generate(tmp_path_factory.mktemp("tpch_sf001"), SF)


@pytest.fixture(scope="session")
def duckdb_results(tpch_paths):
    con = datagen.connect()
    try:
        datagen.register_duckdb(con, tpch_paths)
        return {n: con.execute(q).to_arrow_table() for n, q in datagen.duckdb_queries().items()}
    finally:
        con.close()


@pytest.fixture(scope="session")
def ember_session(tpch_paths):
    import ember

    s = ember.Session()
    datagen.register_ember(s, tpch_paths)
    return s


def test_query_files_exist():
    queries = datagen.spark_queries()
    assert sorted(queries) == list(range(1, 23))
    assert all(q.strip() for q in queries.values())


@pytest.mark.parametrize("n", range(1, 23), ids=lambda n: f"q{n:02d}")
def test_tpch_query_matches_duckdb(n, ember_session, duckdb_results):
    got = ember_session.sql(datagen.spark_queries()[n]).to_arrow()
    want = duckdb_results[n]
    assert got.num_rows > 0
    problem = diff(got, want)
    assert problem is None, f"Q{n}: {problem}"


def test_diff_detects_differences():
    import decimal

    import pyarrow as pa

    dec = pa.array([decimal.Decimal("0.050081")], pa.decimal128(19, 6))
    assert diff(pa.table({"a": dec}), pa.table({"a": [0.05008133906964238]})) is None
    assert diff(pa.table({"a": dec}), pa.table({"a": [0.0501]})) is not None
    assert diff(pa.table({"a": [1.0, 2.0]}), pa.table({"a": [2.0, 1.0]})) is None
    assert diff(pa.table({"a": [1.0, 2.0]}), pa.table({"a": [1.0]})) is not None
    assert diff(pa.table({"a": ["x"]}), pa.table({"a": ["y"]})) is not None
