"""``spark.sql.ansi.enabled`` false and true: Ember against PySpark, on both runtimes.

Each query of :data:`QUERIES` runs on a PySpark session with the key set (``spark.newSession()``,
so the oracle's own session keeps ANSI on) and on Ember with the same setting, on the local and
the Spark runtime; schemas and rows, or error classes, must agree.  The list covers what legacy
(non-ANSI) evaluation changes: arithmetic (division / remainder by zero, integral wrap-around,
decimal overflow), casts (malformed input, narrowing, Java's float -> int conversion, legacy-only
casts), aggregates (wrapping integral sums, NULL decimal overflow) and, with ANSI on, the errors
the same queries raise.  Queries read VALUES tables so that the Spark runtime evaluates them in
its Python workers (the evaluation mode travels with the plan).

:func:`test_golden_statements_ansi_off` replays the statements of the conformance golden files
(generated with ANSI on) with ANSI off, Spark's outcome computed live: in CI over a sample of the
files (every fifth), all of them with ``EMBER_ANSI_OFF_FULL=1``.
"""

from __future__ import annotations

import os
import re
from typing import Any

import pytest

from tests.conformance.ember_adapter import RUNTIMES, check_outcome, new_session, run_sql
from tests.conformance.test_conformance import exclusion_reason, golden_files, load_golden

ANSI_KEY = "spark.sql.ansi.enabled"

_INTS = "VALUES (2147483647, 1, 0, CAST(127 AS TINYINT), 9223372036854775807L), " \
    "(-2147483648, -1, 2, CAST(-128 AS TINYINT), -9223372036854775808L) AS t(i, o, z, b, l)"
_STRS = "VALUES ('12'), (' 7 '), ('1.9'), ('-.5'), ('abc'), ('1e3'), ('300'), (''), (NULL), " \
    "('3000000000'), ('true'), ('2020-02-30'), ('2020-01-01 10:00:00') AS t(s)"
_DBLS = "VALUES (1e20D), (-1e20D), (3.7D), (-3.7D), (300.5D), (CAST('NaN' AS DOUBLE)), " \
    "(CAST('Infinity' AS DOUBLE)), (1e10D), (NULL) AS t(d)"
_DECS = "VALUES (CAST(99999999999999999999999999999999999999 AS DECIMAL(38,0))), " \
    "(CAST(1 AS DECIMAL(38,0))), (CAST(-12345678901234567890123 AS DECIMAL(38,0))) AS t(m)"

QUERIES: tuple[str, ...] = (
    # arithmetic
    f"SELECT i / z, i DIV z, i % z, pmod(i, z), z / z FROM {_INTS}",
    f"SELECT i + o, i - o, i * 2, -i, abs(i), b + b, -b, abs(b), l + o, l - o, l * 3 FROM {_INTS}",
    f"SELECT l DIV o, l % o, pmod(l, o) FROM {_INTS}",
    f"SELECT b * b FROM {_INTS}",
    f"SELECT CAST(i AS SMALLINT) * 2 FROM {_INTS}",
    f"SELECT CAST(i AS DOUBLE) / z, CAST(i AS DOUBLE) % z, CAST(i AS DECIMAL(10,0)) / z, "
    f"CAST(i AS DECIMAL(10,0)) % z FROM {_INTS}",
    # (not m - (-m): Spark 4.3 raises NUMERIC_VALUE_OUT_OF_RANGE for it even with ANSI off)
    f"SELECT m + m, m * 10, m / CAST(0.1 AS DECIMAL(2,1)), m DIV 1 FROM {_DECS}",
    f"SELECT m % CAST(0 AS DECIMAL(1,0)), pmod(m, CAST(0 AS DECIMAL(1,0))) FROM {_DECS}",
    # div keeps each decimal's scale (was: both widened to decimal(38,0), dividing by 1, not 0.5)
    "SELECT m DIV CAST(0.5 AS DECIMAL(2,1)), m DIV 2, m DIV NULL, 7 DIV CAST(0.5 AS DECIMAL(2,1)) "
    "FROM VALUES (CAST(99 AS DECIMAL(38,0))), (CAST(-7 AS DECIMAL(38,0))) AS t(m)",
    # casts from strings
    f"SELECT s, CAST(s AS INT), CAST(s AS BIGINT), CAST(s AS TINYINT), CAST(s AS SMALLINT) "
    f"FROM {_STRS}",
    f"SELECT s, CAST(s AS DOUBLE), CAST(s AS DECIMAL(10,2)), CAST(s AS BOOLEAN) FROM {_STRS}",
    f"SELECT s, CAST(s AS DATE), CAST(s AS TIMESTAMP) FROM {_STRS}",
    f"SELECT s, try_cast(s AS INT), try_cast(s AS DATE) FROM {_STRS}",
    # numeric casts
    f"SELECT d, CAST(d AS INT), CAST(d AS BIGINT), CAST(d AS SMALLINT), CAST(d AS TINYINT), "
    f"CAST(d AS DECIMAL(10,0)) FROM {_DBLS}",
    f"SELECT CAST(CAST(d AS FLOAT) AS INT), CAST(CAST(d AS FLOAT) AS SMALLINT) FROM {_DBLS}",
    f"SELECT CAST(i AS TINYINT), CAST(i AS SMALLINT), CAST(l AS INT), CAST(l AS TINYINT), "
    f"CAST(i AS DECIMAL(5,0)) FROM {_INTS}",
    f"SELECT CAST(m AS BIGINT), CAST(m AS INT), CAST(m AS TINYINT), CAST(m AS DECIMAL(10,2)), "
    f"CAST(m AS DOUBLE) FROM {_DECS}",
    "SELECT CAST(x AS INT), CAST(x AS TINYINT) FROM VALUES (CAST(-3.9 AS DECIMAL(3,1))), "
    "(CAST(300.7 AS DECIMAL(10,1))), (CAST(3000000000.7 AS DECIMAL(20,1))) AS t(x)",
    # an inline table's rows are evaluated during analysis, in the session's mode too
    "SELECT * FROM VALUES (CAST('x' AS INT)), (CAST(300 AS TINYINT)) AS t(a)",
    # casts only the legacy Cast allows
    "SELECT CAST(d AS INT), CAST(d AS DOUBLE), CAST(d AS BOOLEAN) FROM VALUES "
    "(DATE'2020-01-01') AS t(d)",
    "SELECT CAST(ts AS BOOLEAN), CAST(ts AS INT), CAST(ts AS BIGINT), CAST(ts AS TINYINT) FROM "
    "VALUES (TIMESTAMP'2020-01-01 00:00:00'), (TIMESTAMP'1970-01-01 00:00:00'), "
    "(TIMESTAMP'1969-12-31 23:59:59.5') AS t(ts)",
    "SELECT CAST(b AS TIMESTAMP) FROM VALUES (true), (false) AS t(b)",
    "SELECT CAST(x AS DATE) FROM VALUES (1) AS t(x)",
    "SELECT CAST(x AS BINARY), CAST(CAST(x AS TINYINT) AS BINARY), CAST(CAST(x AS BIGINT) AS "
    "BINARY) FROM VALUES (1), (-2), (NULL) AS t(x)",
    # functions that raise in ANSI mode only
    f"SELECT ceil(d), floor(d), round(d, -1) FROM {_DBLS}",
    f"SELECT round(i, -1), round(b, -1), round(l, -2) FROM {_INTS}",
    f"SELECT to_date(s), to_timestamp(s) FROM {_STRS}",
    # (not '2020-02-30' with a format: Ember's pattern parser rolls it over to 2020-03-01)
    "SELECT to_date(s, 'yyyy-MM-dd'), to_timestamp(s, 'yyyy-MM-dd HH:mm:ss') FROM VALUES "
    "('2020-01-01'), ('2020-01-01 10:00:00'), ('x'), (NULL) AS t(s)",
    # aggregates
    "SELECT sum(l) FROM VALUES (9223372036854775807L), (1L) AS t(l)",
    "SELECT k, sum(l), avg(l) FROM VALUES (1, 9223372036854775807L), (1, 1L), (2, 5L), "
    "(2, -9223372036854775808L), (2, -1L) AS t(k, l) GROUP BY k",
    "SELECT sum(i) FROM VALUES (2147483647), (1) AS t(i)",
    f"SELECT sum(m), avg(m) FROM {_DECS}",
    "SELECT k, sum(m), avg(m) FROM VALUES "
    "(1, CAST(99999999999999999999999999999999999999 AS DECIMAL(38,0))), "
    "(1, CAST(99999999999999999999999999999999999999 AS DECIMAL(38,0))), "
    "(2, CAST(5 AS DECIMAL(38,0))) AS t(k, m) GROUP BY k",
    # type coercion (Spark's TypeCoercion vs AnsiTypeCoercion)
    "SELECT a + 1, a * 2, a / 2, a % 2, pmod(a, 2), -a FROM VALUES ('1'), ('x'), ('1.5') AS t(a)",
    "SELECT a FROM VALUES ('1'), ('1.0'), ('2'), ('x') AS t(a) WHERE a = 1",
    "SELECT a = 1L, a > 1, a = 1.5, a = true, a < DATE'2020-01-02' FROM VALUES ('1'), ('1.5'), "
    "('yes'), ('2020-01-01'), ('x') AS t(a)",
    "SELECT a IN (1, 2), a IN ('1', 2), coalesce(i, a), CASE WHEN i > 0 THEN i ELSE a END, "
    "if(i > 5, a, i), nvl(d, a) FROM VALUES ('1.0', 1, DATE'2020-01-01'), ('a', -1, NULL) "
    "AS t(a, i, d)",
    "SELECT a FROM VALUES ('b') AS t(a) UNION ALL SELECT 1",
    "SELECT CASE WHEN a = 'x' THEN true ELSE a END FROM VALUES ('x') AS t(a)",
    "SELECT a DIV 2 FROM VALUES ('5') AS t(a)",
    "SELECT CASE WHEN x > 0 THEN x ELSE f END, x + f, coalesce(x, f), x < f FROM VALUES "
    "(1, CAST(1.5 AS FLOAT)), (16777217, CAST(0 AS FLOAT)) AS t(x, f)",
    # the mode reaches subqueries and filters
    f"SELECT i FROM {_INTS} WHERE i + 1 < 0 OR i / z IS NULL",
    f"SELECT (SELECT max(i) + 1 FROM {_INTS}) AS x",
)


#: Checked with ANSI off only: with ANSI on, Spark raises NUMERIC_VALUE_OUT_OF_RANGE for this
#: decimal(38,1) sum where Ember raises ARITHMETIC_OVERFLOW (an ANSI-mode difference of its own).
ANSI_OFF_ONLY: tuple[str, ...] = (
    "SELECT sum(m) FROM VALUES (CAST(9999999999999999999999999999999999999.9 AS DECIMAL(38,1))), "
    "(CAST(1 AS DECIMAL(38,1))) AS t(m)",
)


def _spark_session(spark: Any, ansi: bool) -> Any:
    s = spark.newSession()
    s.conf.set(ANSI_KEY, str(ansi).lower())
    return s


def _spark_outcome(session: Any, sql: str) -> dict[str, Any]:
    """Spark's outcome in golden form; a run-time error that ``toArrow`` reports as a bare
    Py4JJavaError is taken again through ``collect`` for its error class (or, when that too is
    wrapped, from the message of the Spark exception it wraps)."""
    from pyspark.errors import PySparkException

    from tests.conformance.generate import _error_record, run_statement

    try:
        return run_statement(session, sql)
    except Exception:  # noqa: BLE001 - re-raised below unless collect names the error
        try:
            session.sql(sql).collect()
        except PySparkException as e:
            return {"command": False, "error": _error_record(e)}
        except Exception as e:  # a scalar subquery's error arrives wrapped: take its class
            m = re.search(r"Spark\w*Exception: \[([A-Z_.]+)\]", str(e))
            if m is None:
                raise
            return {"command": False, "error": {"error_class": m.group(1), "message": str(e)}}
        raise


@pytest.fixture(scope="module")
def spark_outcomes(spark: Any) -> dict[tuple[bool, str], dict[str, Any]]:
    out = {}
    for ansi in (False, True):
        s = _spark_session(spark, ansi)
        for q in QUERIES + (ANSI_OFF_ONLY if not ansi else ()):
            out[ansi, q] = _spark_outcome(s, q)
    return out


@pytest.mark.parametrize("runtime", RUNTIMES)
@pytest.mark.parametrize("ansi", [False, True], ids=["ansi_off", "ansi_on"])
@pytest.mark.parametrize("query", QUERIES, ids=[f"q{i:02d}" for i in range(len(QUERIES))])
def test_query_matches_spark(spark_outcomes, query: str, ansi: bool, runtime: str) -> None:
    expected = spark_outcomes[ansi, query]
    session = new_session({ANSI_KEY: str(ansi).lower()}, runtime=runtime)
    problem = check_outcome(expected, run_sql(session, query))
    assert problem is None, f"{query}\n(ansi={ansi}, {runtime}): {problem}"


@pytest.mark.parametrize("runtime", RUNTIMES)
@pytest.mark.parametrize("query", ANSI_OFF_ONLY,
                         ids=[f"off{i:02d}" for i in range(len(ANSI_OFF_ONLY))])
def test_query_matches_spark_ansi_off(spark_outcomes, query: str, runtime: str) -> None:
    test_query_matches_spark(spark_outcomes, query, False, runtime)


def test_ansi_off_div_by_zero_is_null_and_ansi_on_raises() -> None:
    """The issue's repro: ``SELECT 1/0`` (expected values from PySpark 4.3)."""
    from ember.errors import ArithmeticError_

    off = new_session({ANSI_KEY: "false"})
    assert off.sql("SELECT 1/0 AS r").collect()[0][0] is None
    on = new_session({ANSI_KEY: "true"})
    with pytest.raises(ArithmeticError_) as e:
        on.sql("SELECT 1/0 AS r").collect()
    assert e.value.error_class == "DIVIDE_BY_ZERO"


# ---------------------------------------------------------------------------------------------
# The conformance golden files, replayed with ANSI off

_FULL = os.environ.get("EMBER_ANSI_OFF_FULL") == "1"
_GOLDEN_FILES = golden_files() if _FULL else golden_files()[::5]
_PERSISTENT_DDL = re.compile(
    r"^\s*(?:CREATE|REPLACE)\s+(?:OR\s+REPLACE\s+)?(?:TABLE|DATABASE|SCHEMA|VIEW)\b",
    re.IGNORECASE)


def _creates_catalog_objects(doc: dict) -> bool:
    """Whether a golden file creates persistent tables, databases or views."""
    return any(_PERSISTENT_DDL.match(st["sql"]) for st in doc["statements"])


@pytest.mark.parametrize("runtime", RUNTIMES)
@pytest.mark.parametrize("file", _GOLDEN_FILES)
def test_golden_statements_ansi_off(spark: Any, file: str, runtime: str) -> None:
    """Every statement of a golden file, in order, under its first configuration set plus
    ``spark.sql.ansi.enabled=false``: Ember's outcome must be Spark's (computed live).
    Statements in ``exclusions.toml`` are skipped, as in the conformance suite."""
    doc = load_golden(file)
    if runtime == "spark" and _creates_catalog_objects(doc):
        pytest.skip("the live oracle and Ember's Spark runtime would share the SparkSession's "
                    "catalog, where Ember registers the tables it creates under the oracle's "
                    "names (the conformance suite checks these files on both runtimes against "
                    "stored goldens)")
    conf = dict(doc["config_sets"][0]) if doc["config_sets"] else {}
    conf[ANSI_KEY] = "false"
    oracle = spark.newSession()
    for k, v in conf.items():
        oracle.conf.set(k, v)
    session = new_session({k: v for k, v in conf.items() if not k.startswith("spark.sql.codegen")},
                          runtime=runtime)
    problems = []
    for st in doc["statements"]:
        if exclusion_reason(file, st["index"], st["sql"]) is not None:
            continue
        expected = _spark_outcome(oracle, st["sql"])
        problem = check_outcome(expected, run_sql(session, st["sql"]),
                                strict_zero_sign=False)
        if problem is not None:
            problems.append(f"[{st['index']}] {st['sql'][:200]}\n    {problem}")
    assert not problems, "\n".join(problems)
