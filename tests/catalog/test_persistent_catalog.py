"""The persistent catalog on Ember alone: metadata survives the session and the process, two
processes share one warehouse safely, managed tables' files follow DROP / TRUNCATE / RENAME,
and ``spark.sql.catalogImplementation=in-memory`` keeps the metadata in the session.
(The outputs and errors are compared with PySpark in ``test_ddl_vs_spark.py``.)"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import ember
from ember.analysis.catalog import CatalogTable
from ember import types as T
from ember.errors import AnalysisError

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def session(warehouse, **conf) -> ember.Session:
    return ember.Session({"spark.sql.warehouse.dir": str(warehouse), **conf})


def rows(s, q):
    return [tuple(r) for r in s.sql(q).collect()]


def test_a_table_created_in_one_session_is_there_in_the_next(tmp_path):
    s1 = session(tmp_path)
    s1.sql("CREATE DATABASE sales COMMENT 'the sales'")
    s1.sql("CREATE TABLE sales.orders (id BIGINT COMMENT 'key', day DATE) USING parquet "
           "PARTITIONED BY (day) TBLPROPERTIES ('owner' = 'ops')")
    s1.sql("USE sales")
    s1.sql("CREATE VIEW recent AS SELECT id FROM orders WHERE day > DATE'2024-01-01'")
    s2 = session(tmp_path)
    assert rows(s2, "SHOW TABLES IN sales") == [("sales", "orders", False),
                                              ("sales", "recent", False)]
    t = s2.session_catalog.get_table(("sales", "orders"))
    assert (t.table_type, t.provider, t.partition_columns, t.properties) == (
        "MANAGED", "parquet", ("day",), {"owner": "ops"})
    assert t.location == os.path.join(str(tmp_path), "sales.db", "orders")
    assert t.column_comments == {"id": "key"}
    # the view's text is analyzed in its own database, whatever the current one
    assert rows(s2, "SELECT * FROM sales.recent") == []
    s2.sql("DROP TABLE sales.orders")
    assert rows(session(tmp_path), "SHOW TABLES IN sales") == [("sales", "recent", False)]
    s2.sql("CREATE TABLE sales.more (a INT) USING parquet")
    s2.sql("DROP DATABASE sales CASCADE")
    assert not os.path.exists(tmp_path / "sales.db")
    assert rows(session(tmp_path), "SHOW DATABASES") == [("default",)]


def test_catalog_api_contract_persists(tmp_path):
    cat = session(tmp_path).session_catalog
    schema = T.StructType((T.StructField("a", T.INT), T.StructField("p", T.STRING)))
    table = CatalogTable("default", "t", "EXTERNAL", "csv", schema, ("p",),
                         str(tmp_path / "ext"), {"header": "true"}, {"k": "v"}, "c")
    cat.create_table(table)
    with pytest.raises(AnalysisError) as e:
        cat.create_table(table)
    assert e.value.error_class == "TABLE_OR_VIEW_ALREADY_EXISTS"
    cat.create_table(table, ignore_if_exists=True)
    other = session(tmp_path).session_catalog
    got = other.get_table(("T",))
    assert (got.schema, got.options, got.properties, got.comment) == (
        schema, {"header": "true"}, {"k": "v"}, "c")
    assert other.qualify(("spark_catalog", "Default", "t")) == ("default", "t")
    assert other.default_location("default", "u") == os.path.join(str(tmp_path), "u")
    assert other.drop_table(("t",)).name == "t"
    assert cat.get_table(("t",)) is None
    assert cat.drop_table(("t",), if_exists=True) is None


def test_in_memory_catalog_keeps_metadata_in_the_session(tmp_path):
    s1 = session(tmp_path, **{"spark.sql.catalogImplementation": "in-memory"})
    s1.sql("CREATE TABLE t (a INT) USING parquet")
    assert rows(s1, "SHOW TABLES") == [("default", "t", False)]
    assert os.path.isdir(tmp_path / "t")  # the managed table's directory is in the warehouse
    assert not os.path.exists(tmp_path / ".ember_metastore.sqlite")
    assert rows(session(tmp_path, **{"spark.sql.catalogImplementation": "in-memory"}),
                "SHOW TABLES") == []
    with pytest.raises(AnalysisError) as e:
        s1.conf.set("spark.sql.warehouse.dir", "/elsewhere")
    assert e.value.error_class == "CANNOT_MODIFY_STATIC_CONFIG"


def test_a_session_that_touches_no_table_creates_no_warehouse(tmp_path):
    s = session(tmp_path / "wh")
    assert rows(s, "SHOW TABLES") == []
    with pytest.raises(AnalysisError):
        s.sql("SELECT * FROM nosuch")
    assert not os.path.exists(tmp_path / "wh")


def _write(path, table):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    pq.write_table(table, path)


def test_managed_files_follow_drop_truncate_and_rename(tmp_path):
    s = session(tmp_path)
    s.sql("CREATE TABLE m (a INT) USING parquet")
    _write(str(tmp_path / "m" / "part-0.parquet"), pa.table({"a": pa.array([1, 2], pa.int32())}))
    assert rows(s, "SELECT * FROM m") == [(1,), (2,)]
    s.sql("ALTER TABLE m RENAME TO n")
    assert not os.path.exists(tmp_path / "m") and os.path.isdir(tmp_path / "n")
    assert rows(s, "SELECT * FROM n") == [(1,), (2,)]
    s.sql("TRUNCATE TABLE n")
    assert rows(s, "SELECT * FROM n") == [] and os.path.isdir(tmp_path / "n")
    s.sql("DROP TABLE n")
    assert not os.path.exists(tmp_path / "n")
    # an external table's files stay
    ext = tmp_path / "outside"
    _write(str(ext / "f.parquet"), pa.table({"x": pa.array([7], pa.int64())}))
    s.sql(f"CREATE TABLE e USING parquet LOCATION '{ext}'")  # schema from the files
    assert rows(s, "SELECT * FROM e") == [(7,)]
    s.sql("DROP TABLE e")
    assert os.path.exists(ext / "f.parquet")
    # a managed table's directory must not already hold files
    _write(str(tmp_path / "stale" / "f.parquet"), pa.table({"x": [1]}))
    with pytest.raises(AnalysisError) as e:
        s.sql("CREATE TABLE stale (x BIGINT) USING parquet")
    assert e.value.error_class == "LOCATION_ALREADY_EXISTS"


@pytest.mark.parametrize("create", [
    "CREATE TABLE t (a INT, b STRING) USING parquet",
    "CREATE TABLE t (a INT, b STRING) USING csv LOCATION '{w}/absent'"])
def test_a_table_without_files_reads_no_rows_and_creates_nothing(tmp_path, create):
    s = session(tmp_path)
    s.sql(create.format(w=tmp_path))
    assert rows(s, "SELECT count(*), max(a) FROM t") == [(0, None)]
    assert not os.path.exists(tmp_path / "absent")


def test_temp_views_shadow_persistent_tables(tmp_path):
    s = session(tmp_path)
    s.sql("CREATE TABLE t (a INT) USING parquet")
    s.sql("CREATE TEMP VIEW t AS SELECT 'view' AS v")
    assert rows(s, "SELECT * FROM t") == [("view",)]
    assert rows(s, "SELECT * FROM default.t") == []
    s.sql("DROP TABLE t")  # drops the temporary view first, as Spark's DropTableCommand
    assert rows(s, "SELECT a FROM t") == []


_WORKER = textwrap.dedent("""
    import sys
    import ember
    from ember.errors import AnalysisError
    s = ember.Session({"spark.sql.warehouse.dir": sys.argv[1]})
    me = sys.argv[2]
    s.sql("CREATE DATABASE IF NOT EXISTS shared")
    for j in range(8):
        s.sql(f"CREATE TABLE shared.t_{me}_{j} (a INT) USING parquet")
        s.sql(f"ALTER TABLE shared.t_{me}_{j} SET TBLPROPERTIES ('by' = '{me}')")
    try:
        s.sql("CREATE TABLE shared.common (a INT) USING parquet")
        print("created")
    except AnalysisError as e:
        print(e.error_class)
""")


def test_two_processes_create_tables_concurrently_on_one_warehouse(tmp_path):
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([os.path.join(ROOT, "src"), ROOT])}
    procs = [subprocess.Popen([sys.executable, "-c", _WORKER, str(tmp_path), str(i)],
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
             for i in range(3)]
    outs = [p.communicate(timeout=300) for p in procs]
    assert all(p.returncode == 0 for p in procs), [err for _, err in outs]
    results = sorted(out.strip() for out, _ in outs)
    assert results == ["TABLE_OR_VIEW_ALREADY_EXISTS", "TABLE_OR_VIEW_ALREADY_EXISTS", "created"]
    s = session(tmp_path)
    names = {r[1] for r in rows(s, "SHOW TABLES IN shared")}
    assert names == {"common"} | {f"t_{i}_{j}" for i in range(3) for j in range(8)}
    assert all(s.session_catalog.get_table(("shared", f"t_{i}_{j}")).properties == {"by": str(i)}
               for i in range(3) for j in range(8))
