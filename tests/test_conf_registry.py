"""Every configuration key Ember reads is registered once, in ``ember.conf``.

- no module of ``src/ember`` but ``conf.py`` (and the generated ``spark_sql_conf_keys.py``) holds a
  string that names a configuration key: code reads a key through its ``ConfEntry``
  (``conf.get(ENTRY)``, ``ENTRY.read(conf)``), never by a literal with a local default;
- every registered entry is read somewhere (no dead keys);
- ``SET -v``, ``SET`` and ``session.conf.getAll`` list the keys as PySpark 4 does.
"""

from __future__ import annotations

import ast
import importlib.util
import pathlib
import re

import pytest

import ember
from ember import conf as C
from ember.spark_sql_conf_keys import SPARK_SQL_CONF_KEYS

SRC = pathlib.Path(C.__file__).resolve().parent
_KEYLIKE = re.compile(r"(spark|ember)\.[A-Za-z][A-Za-z0-9_]*(\.[A-Za-z0-9_-]+)*")

#: ``spark.*`` / ``ember.*`` strings in the sources that are not configuration keys
NOT_KEYS = {
    "spark.watermarkDelayMs": "Spark's column metadata key of an event-time watermark "
                              "(EventTimeWatermark.delayKey)",
    "ember.runtime": "a stream writer option choosing the runtime of one query",
    "ember.zip": "the file name of the package shipped to Spark's executors",
}


def _names_a_key(text: str) -> bool:
    if text in C._ENTRIES or text in SPARK_SQL_CONF_KEYS:
        return True
    if not _KEYLIKE.fullmatch(text) or text in NOT_KEYS:
        return False
    return not (text.startswith("ember.") and _is_module(text))


def _is_module(name: str) -> bool:
    try:
        return importlib.util.find_spec(name) is not None
    except ModuleNotFoundError:  # its parent is no package
        return False


def _modules() -> list[pathlib.Path]:
    return [p for p in sorted(SRC.rglob("*.py"))
            if p.name not in ("conf.py", "spark_sql_conf_keys.py") or p.parent != SRC]


def test_no_key_literal_outside_conf():
    found = []
    for path in _modules():
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Constant) and isinstance(node.value, str) \
                    and _names_a_key(node.value):
                found.append(f"{path.relative_to(SRC)}:{node.lineno}: {node.value}")
    assert found == [], "register these keys in ember/conf.py and read them through their entry"


def test_the_check_sees_a_literal_key():
    assert _names_a_key("spark.sql.shuffle.partitions")
    assert _names_a_key("ember.execution.batchSize")
    assert _names_a_key("spark.sql.someFutureKey")
    assert _names_a_key("ember.some.newSetting")
    assert not _names_a_key("ember.streaming.api")  # a module
    assert not _names_a_key("spark.app.")  # a prefix


def test_every_entry_is_registered_once_and_read():
    entries = {n: v for n, v in vars(C).items() if isinstance(v, C.ConfEntry)}
    assert sorted(e.key for e in entries.values()) == sorted(C._ENTRIES)
    used: set[str] = set()
    for path in sorted(SRC.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load):
                used.add(node.id)
    assert sorted(set(entries) - used) == []


def test_every_entry_has_a_doc_a_typed_default_and_an_owner():
    for e in C._ENTRIES.values():
        assert e.doc, e.key
        assert e.key.startswith(("spark.", "ember.")), e.key
        assert e.is_spark == e.key.startswith("spark.")
        if e.default is not None:
            assert e.parse(e.string(e.default)) == e.default, e.key
        if e.key in SPARK_SQL_CONF_KEYS:
            assert e.version == SPARK_SQL_CONF_KEYS[e.key][2]


def test_spark_runtime_batch_rows_follow_the_registered_batch_size():
    """The Spark runtime's shuffle pieces merge up to 8 batches of ``ember.execution.batchSize``
    rows (the registered default, 65536: its reader's old fallback 8192 was never used)."""
    from ember.runtime.spark.runtime import SparkRuntime

    rt = SparkRuntime.__new__(SparkRuntime)
    rt.conf = C.SQLConf()
    assert rt._piece_rows() == 65536 * 8
    rt.conf = C.SQLConf({C.BATCH_SIZE.key: 1000})
    assert rt._piece_rows() == 8000


# -- listing -------------------------------------------------------------------------------------

def test_set_v_lists_every_registered_key_with_its_meaning():
    s = ember.Session({"spark.sql.shuffle.partitions": "7"})
    df = s.sql("SET -v")
    assert df.columns == ["key", "value", "meaning", "Since version"]
    rows = {r[0]: r for r in df.collect()}
    assert sorted(rows) == sorted(C._ENTRIES)
    assert tuple(rows["spark.sql.shuffle.partitions"]) == (
        "spark.sql.shuffle.partitions", "7", C.SHUFFLE_PARTITIONS.doc, "1.1.0")
    assert rows["ember.cbo.joinReorder.enhanced"][1] == "<undefined>"
    assert rows["spark.sql.ansi.enabled"][1] == "true"
    assert rows["ember.execution.batchSize"][3] == ""


def test_set_lists_the_keys_set():
    s = ember.Session({"spark.sql.shuffle.partitions": "7"})
    s.sql("SET my.key=x")
    assert [tuple(r) for r in s.sql("SET").collect()] == [
        ("my.key", "x"), ("spark.sql.shuffle.partitions", "7")]
    assert [tuple(r) for r in s.sql("SET ember.cbo.joinReorder.enhanced").collect()] == [
        ("ember.cbo.joinReorder.enhanced", "<undefined>")]


def test_runtime_config_get_all_is_a_property_dict():
    s = ember.Session({"spark.sql.shuffle.partitions": "7"})
    s.conf.set("my.key", "x")
    assert s.conf.getAll == {"spark.sql.shuffle.partitions": "7", "my.key": "x"}


@pytest.mark.spark
def test_listing_matches_pyspark(spark):
    """The columns of ``SET -v`` / ``SET`` and the type of ``conf.getAll`` are PySpark's, and a
    Spark key's ``Since version`` is Spark's."""
    s = ember.Session()
    assert s.sql("SET -v").columns == spark.sql("SET -v").columns
    assert s.sql("SET").columns == spark.sql("SET").columns
    assert isinstance(spark.conf.getAll, dict) and isinstance(s.conf.getAll, dict)
    theirs = {r[0]: r[3] for r in spark.sql("SET -v").collect()}
    ours = {r[0]: r[3] for r in s.sql("SET -v").collect()}
    common = set(theirs) & set(ours)
    assert len(common) > 20
    assert {k: ours[k] for k in common} == {k: theirs[k] for k in common}
    key = "spark.sql.cbo.joinReorder.dp.threshold"
    assert spark.sql(f"SET {key}").collect()[0][1] == s.sql(f"SET {key}").collect()[0][1]


def test_reading_spark_s_conf_falls_back_to_spark_s_own_default(spark):
    # an unset Spark key reads Spark's built-in default (the session time zone is the JVM's
    # zone there, whatever Ember's own default is); a key Spark has no value for falls back to
    # the entry's default
    assert C.SESSION_TIME_ZONE.read_spark(spark) == spark.conf.get("spark.sql.session.timeZone")
    assert C.SPARK_ARROW_LARGE_VAR_TYPES.read_spark(spark) is (
        spark.conf.get("spark.sql.execution.arrow.useLargeVarTypes") == "true")

    class NoValue:
        class conf:  # noqa: N801 -- PySpark's attribute name
            @staticmethod
            def get(key: str) -> str:
                raise RuntimeError(f"[SQL_CONF_NOT_FOUND] {key}")

    assert C.SESSION_TIME_ZONE.read_spark(NoValue) == C.SESSION_TIME_ZONE.default
