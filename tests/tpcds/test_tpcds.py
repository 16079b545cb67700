"""The 99 TPC-DS queries (Spark SQL text, bench/tpcds/queries) on Ember, both runtimes, against
Spark's answers (``tests/tpcds/golden``, written by ``python -m tests.tpcds.generate``).

Data is generated once per run at the goldens' scale factor with DuckDB's tpcds extension
(offline: the binary ships in the ``duckdb-extension-tpcds`` wheel) into Parquet files.  Each
query's result must have the golden schema (names and Spark types) and rows: in the golden's
order when the query ends in a total ORDER BY, else as a multiset; floats within 1e-9 relative,
decimals, integers and strings exact.

The default run takes :data:`SAMPLE`; ``EMBER_TPCDS_ALL=1`` runs all 99 on both runtimes.
"""

from __future__ import annotations

import json
import os

import pytest

pytest.importorskip("duckdb")
pytest.importorskip("duckdb_extension_tpcds")

from bench.tpcds import datagen  # noqa: E402
from tests.conformance.ember_adapter import RUNTIMES, ember_schema, new_session  # noqa: E402
from tests.conformance.normalize import describe_diff, normalize_table, rows_equal  # noqa: E402
from tests.tpcds.generate import SF, golden_path  # noqa: E402

#: The default run: joins of many shapes, subqueries (scalar, correlated, EXISTS), INTERSECT /
#: EXCEPT, CASE-heavy aggregates, q72's inventory join, ROLLUP (q05), stddev_samp (q17), window
#: functions (q47) and a rank over a ROLLUP ordered by grouping() (q70).
SAMPLE = (1, 5, 6, 9, 16, 17, 23, 35, 38, 47, 64, 70, 72, 78, 95)

ALL = os.environ.get("EMBER_TPCDS_ALL") == "1"


def _params() -> list:
    out = []
    for n in (datagen.QUERIES if ALL else SAMPLE):
        # the Spark runtime needs the run's SparkSession: ``-m "not spark"`` skips it
        out += [pytest.param(n, rt, id=f"q{n:02d}-{rt}",
                             marks=[pytest.mark.spark] if rt == "spark" else [])
                for rt in RUNTIMES]
    return out


@pytest.fixture(scope="module")
def tpcds_paths(tmp_path_factory) -> dict[str, str]:
    return datagen.generate(tmp_path_factory.mktemp(f"tpcds_sf{SF}"), SF)


@pytest.fixture(scope="module")
def sessions(tpcds_paths):
    made: dict[str, object] = {}

    def get(runtime: str):
        if runtime not in made:
            made[runtime] = new_session(runtime=runtime)
            datagen.register(made[runtime], tpcds_paths)
        return made[runtime]

    return get


def test_query_files_and_goldens_exist():
    queries = datagen.spark_queries()
    assert sorted(queries) == list(datagen.QUERIES)
    assert all(q.strip() and golden_path(n).exists() for n, q in queries.items())


def test_query_files_are_the_rewritten_duckdb_text():
    duck = datagen.duckdb_queries()
    assert sorted(duck) == list(datagen.QUERIES)
    assert all(datagen.to_spark_sql(duck[n]) == (datagen.QUERY_DIR / f"q{n:02d}.sql").read_text()
               for n in datagen.QUERIES)


def test_to_spark_sql_rewrites():
    assert datagen.to_spark_sql('SELECT 1 AS "order count";\n') == "SELECT 1 AS `order count`\n"
    assert datagen.to_spark_sql('SELECT x AS "a""b`c" FROM t') == "SELECT x AS `a\"b``c` FROM t\n"


@pytest.mark.parametrize("n, runtime", _params())
def test_tpcds_query_matches_spark(n, runtime, sessions):
    golden = json.loads(golden_path(n).read_text())
    df = sessions(runtime).sql(datagen.spark_queries()[n])
    table = df.to_arrow()
    assert ember_schema(df, table) == golden["schema"], f"q{n} schema"
    rows = normalize_table(table)
    assert rows_equal(golden["rows"], rows, ordered=golden["ordered"]), (
        f"q{n} on {runtime}:\n" + describe_diff(golden["rows"], rows, ordered=golden["ordered"]))
