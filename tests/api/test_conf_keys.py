"""Which ``spark.*`` keys Ember accepts, and what it does with each (issue 18, item 4).

- a key Ember implements: validated and stored (no warning);
- a Spark SQL key (``ember.spark_sql_conf_keys``, generated from PySpark) Ember does not
  implement: stored with a warning, once per key;
- a legacy switch set to a value other than Spark's default: refused with
  ``EMBER_UNSUPPORTED_LEGACY_CONF`` naming the key (set to the default: accepted silently);
- any other key: stored silently, as Spark does.
"""

from __future__ import annotations

import ast
import logging
import pathlib
import warnings

import pytest

import ember
from ember import conf as C
from ember.errors import EmberError
from ember.spark_sql_conf_keys import SPARK_SQL_CONF_KEYS
from tests.conformance.ember_adapter import RUNTIMES, new_session

SRC = pathlib.Path(C.__file__).resolve().parent

EXISTS_COUNT = "spark.sql.optimizer.decorrelateExistsSubqueryLegacyIncorrectCountHandling.enabled"
NULL_IN_EMPTY = "spark.sql.legacy.nullInEmptyListBehavior"


def test_every_registered_spark_key_is_a_spark_key():
    """(Spark's core settings, given to the SparkContext before it starts, are not SQL keys.)"""
    registered = [k for k in C._ENTRIES if k.startswith("spark.")
                  and not k.startswith(C.SPARK_STATIC_PREFIXES)]
    assert registered
    assert [k for k in registered if k not in SPARK_SQL_CONF_KEYS] == []
    assert sorted(C.IMPLEMENTED_ELSEWHERE - SPARK_SQL_CONF_KEYS.keys()) == []


def test_every_spark_sql_key_read_in_the_sources_is_implemented():
    """A string literal that is a Spark SQL key anywhere in ember's sources names a key Ember
    reads: it must be registered or listed in IMPLEMENTED_ELSEWHERE (else setting it would
    warn that it does nothing)."""
    found: dict[str, str] = {}
    for path in SRC.rglob("*.py"):
        if path.name == "spark_sql_conf_keys.py":
            continue
        for node in ast.walk(ast.parse(path.read_text())):
            if (isinstance(node, ast.Constant) and isinstance(node.value, str)
                    and node.value in SPARK_SQL_CONF_KEYS):
                found.setdefault(node.value, str(path.relative_to(SRC)))
    assert len(found) > 30
    missing = {k: p for k, p in found.items()
               if k not in C._ENTRIES and k not in C.IMPLEMENTED_ELSEWHERE}
    assert missing == {}


@pytest.fixture()
def fresh_warnings(monkeypatch):
    monkeypatch.setattr(C, "_warned", set())


def _set(session, key, value):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        session.conf.set(key, value)
    return [w for w in caught if issubclass(w.category, C.UnimplementedConfWarning)]


def test_implemented_key_no_warning(fresh_warnings, caplog):
    s = ember.Session()
    with caplog.at_level(logging.WARNING, logger="ember.conf"):
        assert _set(s, "spark.sql.decimalOperations.allowPrecisionLoss", "false") == []
        assert _set(s, "spark.sql.streaming.pollingDelay", "5ms") == []  # read elsewhere
    assert caplog.records == []
    assert s.conf.get("spark.sql.decimalOperations.allowPrecisionLoss") == "false"


def test_unimplemented_spark_key_warns_once_naming_it(fresh_warnings, caplog):
    s = ember.Session()
    key = "spark.sql.orc.compression.codec"  # Ember has no ORC source
    assert key in SPARK_SQL_CONF_KEYS and key not in C._ENTRIES
    with caplog.at_level(logging.WARNING, logger="ember.conf"):
        first = _set(s, key, "zlib")
        again = _set(s, key, "lz4")
        s2 = ember.Session()
        elsewhere = _set(s2, key, "zstd")  # once per key, not per session
    assert len(first) == 1 and key in str(first[0].message)
    assert "not implemented" in str(first[0].message)
    assert again == [] and elsewhere == []
    assert [r.getMessage() for r in caplog.records] == [str(first[0].message)]
    assert s.conf.get(key) == "lz4"  # stored, as Spark does
    # SQL SET takes the same path
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        s.sql("SET spark.sql.orc.filterPushdown=false")
    assert [str(w.message) for w in caught if "orc.filterPushdown" in str(w.message)]


def test_unknown_keys_are_accepted_silently(fresh_warnings, caplog):
    s = ember.Session()
    with caplog.at_level(logging.WARNING, logger="ember.conf"):
        assert _set(s, "spark.sql.notASparkKey.at.all", "x") == []
        assert _set(s, "spark.executor.memory", "2g") == []
        assert _set(s, "my.own.key", "1") == []
    assert caplog.records == []
    assert s.conf.get("spark.sql.notASparkKey.at.all") == "x"


@pytest.mark.parametrize("key", [EXISTS_COUNT, NULL_IN_EMPTY,
                                 "spark.sql.legacy.timeParserPolicy"])
def test_legacy_switch_refused_unless_default(fresh_warnings, key):
    s = ember.Session()
    value = "LEGACY" if key.endswith("timeParserPolicy") else "true"
    with pytest.raises(EmberError) as e:
        s.conf.set(key, value)
    assert e.value.error_class == "EMBER_UNSUPPORTED_LEGACY_CONF"
    assert key in str(e.value)
    with pytest.raises(EmberError) as e:
        s.sql(f"SET {key}={value}")
    assert e.value.error_class == "EMBER_UNSUPPORTED_LEGACY_CONF"
    assert s.conf.get(key) is None
    default = "CORRECTED" if key.endswith("timeParserPolicy") else "false"
    assert _set(s, key, default) == []  # Ember behaves as the default: no warning
    assert s.conf.get(key) == default


# The two switches of issue 18 against PySpark: Spark's answer changes under the switch (so
# accepting it and ignoring it would be a wrong answer), Ember refuses it, and without it Ember
# gives Spark's answer.
LEGACY_CASES = [
    (EXISTS_COUNT,
     ["CREATE OR REPLACE TEMP VIEW t1 AS SELECT * FROM VALUES (1), (2) AS t1(c1)",
      "CREATE OR REPLACE TEMP VIEW t2 AS SELECT * FROM VALUES (1) AS t2(c1)"],
     "SELECT * FROM t1 WHERE EXISTS (SELECT count(*) FROM t2 WHERE t2.c1 = t1.c1) ORDER BY c1"),
    (NULL_IN_EMPTY,
     ["CREATE OR REPLACE TEMP VIEW v_empty AS SELECT e FROM VALUES (1) AS v(e) WHERE e > 1"],
     "SELECT null IN (SELECT e FROM v_empty) AS r"),
]


@pytest.fixture(scope="module")
def oracle():
    """The PySpark oracle (this directory's ``spark`` fixture is an Ember session)."""
    from tests.spark_session import get_spark

    return get_spark()


@pytest.mark.parametrize("runtime", RUNTIMES)
@pytest.mark.parametrize("key,setup,query", LEGACY_CASES, ids=["exists_count", "null_in_empty"])
def test_legacy_switches_against_spark(oracle, runtime, key, setup, query):
    spark = oracle
    for stmt in setup:
        spark.sql(stmt)
    default_rows = [tuple(r) for r in spark.sql(query).collect()]
    spark.conf.set(key, "true")
    try:
        legacy_rows = [tuple(r) for r in spark.sql(query).collect()]
    finally:
        spark.conf.unset(key)
    assert legacy_rows != default_rows  # the switch changes Spark's answer

    session = new_session(runtime=runtime)
    for stmt in setup:
        session.sql(stmt)
    assert [tuple(r) for r in session.sql(query).collect()] == default_rows
    with pytest.raises(EmberError) as e:
        session.conf.set(key, "true")
    assert e.value.error_class == "EMBER_UNSUPPORTED_LEGACY_CONF" and key in str(e.value)
