"""Differential test: random scalar expressions over random typed tables, Ember vs Spark.

``SELECT <expr> AS r FROM t`` must give, on Ember and on PySpark (ANSI on), the same result type
(``simpleString``) and values (floats with a 1e-12 relative tolerance, NaN == NaN), or, when Spark
raises, the same error class.  See :mod:`tests.differential.expr_generator` for the data and the
expression grammar.

* ``EMBER_DIFF_SEED`` (default 20240611) picks data and expressions; ``EMBER_DIFF_EXPRS``
  (default 400) how many expressions run.  Expression ``i`` runs over scenario ``i // 100``'s table,
  in the scenario's session time zone (``spark.sql.session.timeZone`` on both engines).
* Speed: expressions run 20 at a time as the columns of one SELECT on each engine.  The local
  runtime bisects a batch that raises until every expression has its own outcome; Spark and the
  Spark runtime then run the expressions that succeeded locally as one SELECT and each other one
  alone (``_run_guided``), which needs far fewer Spark jobs than bisecting again.
* Runtime errors: when both engines raise but with different classes (e.g. one row overflows and
  another has an invalid cast: Spark reports the first failing *row*, a vectorized engine the first
  failing *sub-expression*), Ember is rerun one row at a time and must raise Spark's class on one.
* Reproduce: ``EMBER_DIFF_SEED=3 python -m pytest tests/differential/test_random_expressions.py -k e0042``.
* ANSI off: :func:`test_random_expression_ansi_off` runs the same expressions with
  ``spark.sql.ansi.enabled=false`` on both engines (Spark's session too): the first 20 of each
  scenario by default, all of them with ``EMBER_DIFF_ANSI_OFF=all``.
* Runtimes: every expression on the local runtime; on the Spark runtime the first batch of each
  scenario (ANSI off: of every other scenario), every one with ``EMBER_SPARK_RUNTIME=all``.
"""

from __future__ import annotations

import datetime as _dt
import math
import os
import traceback
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

import pyarrow as pa
import pytest

from tests.conformance.ember_adapter import new_session, runtime_cases
from tests.differential.expr_generator import (
    describe_table, make_expression, make_table, referenced_columns, session_time_zone,
)

SEED = int(os.environ.get("EMBER_DIFF_SEED", "20240611"))
N_EXPRS = int(os.environ.get("EMBER_DIFF_EXPRS", "400"))
PER_SCENARIO = 100
BATCH = 20
ANSI_KEY = "spark.sql.ansi.enabled"
TIME_ZONE_KEY = "spark.sql.session.timeZone"
#: the expressions the ANSI-off variant runs (a sample: the first batch of each scenario)
ANSI_OFF_INDICES = [i for i in range(N_EXPRS)
                    if os.environ.get("EMBER_DIFF_ANSI_OFF") == "all" or i % PER_SCENARIO < BATCH]


@dataclass(slots=True)
class Outcome:
    kind: str  # "ok" | "error" | "crash"
    type: str | None = None
    values: list | None = None
    error_class: str | None = None
    message: str = ""

    def describe(self) -> str:
        if self.kind == "ok":
            return f"{self.type}: {self.values!r}"
        if self.kind == "error":
            return f"error [{self.error_class}] {self.message[:400]}"
        return f"CRASH {self.message}"


# ----------------------------------------------------------------------------------------------
# engines


def _for_ember(table: pa.Table) -> pa.Table:
    fields = [pa.field(f.name, pa.large_string() if f.type == pa.string() else f.type)
              for f in table.schema]
    return table.cast(pa.schema(fields))


def _values(col: pa.ChunkedArray) -> list:
    """Python values; dates and timestamps as their physical integers (days / microseconds since
    the epoch), which also covers years outside Python's ``datetime`` range."""
    if pa.types.is_date32(col.type):
        return col.cast(pa.int32()).to_pylist()
    if pa.types.is_timestamp(col.type):
        return col.cast(pa.timestamp("us", tz=col.type.tz)).cast(pa.int64()).to_pylist()
    return col.to_pylist()


def _select(exprs: list[str]) -> str:
    return "SELECT " + ", ".join(f"{e} AS c{i}" for i, e in enumerate(exprs)) + " FROM t"


def _spark_run(session: Any, exprs: list[str]) -> list[Outcome]:
    from pyspark.errors import PySparkException

    try:
        df = session.sql(_select(exprs))
        types = [f.dataType.simpleString() for f in df.schema.fields]
        table = df.toArrow()
        return [Outcome("ok", types[i], _values(table.column(i))) for i in range(len(exprs))]
    except PySparkException as e:
        if len(exprs) > 1:
            return _bisect(session, exprs, _spark_run)
        message = str(e).split("\n\nJVM stacktrace:")[0].strip()
        return [Outcome("error", error_class=e.getCondition(), message=message)]


def _ember_run(session: Any, exprs: list[str]) -> list[Outcome]:
    from ember.errors import EmberError

    try:
        df = session.sql(_select(exprs))
        types = [f.data_type.simple_string() for f in df.schema.fields]
        table = df.to_arrow()
        return [Outcome("ok", types[i], _values(table.column(i))) for i in range(len(exprs))]
    except Exception as e:  # noqa: BLE001 - crashes are reported as such
        if len(exprs) > 1:
            return _bisect(session, exprs, _ember_run)
        if isinstance(e, EmberError):
            return [Outcome("error", error_class=e.error_class, message=str(e))]
        return [Outcome("crash", message="".join(
            traceback.format_exception(e, chain=False)))]


def _bisect(session: Any, exprs: list[str], run) -> list[Outcome]:
    mid = len(exprs) // 2
    return run(session, exprs[:mid]) + run(session, exprs[mid:])


def _run_guided(session: Any, exprs: list[str], run, predicted: list[Outcome]) -> list[Outcome]:
    """``run``'s outcomes, with the local runtime's outcomes as a guide: the expressions predicted
    to succeed run as one SELECT (bisected if it raises after all), each other one alone.  Every
    expression still gets its own outcome from ``run``; the guide only saves the bisection's
    queries, each a Spark job, when several expressions of a batch raise."""
    outcomes: list[Outcome | None] = [None] * len(exprs)
    ok = [i for i, p in enumerate(predicted) if p.kind == "ok"]
    if ok:
        for i, outcome in zip(ok, run(session, [exprs[i] for i in ok])):
            outcomes[i] = outcome
    for i, p in enumerate(predicted):
        if p.kind != "ok":
            outcomes[i] = run(session, [exprs[i]])[0]
    return outcomes


# ----------------------------------------------------------------------------------------------
# comparison


def _norm(v: Any) -> Any:
    if isinstance(v, _dt.datetime) and v.tzinfo is not None:
        return v.astimezone(_dt.timezone.utc).replace(tzinfo=None)
    return v


def _same_value(a: Any, b: Any) -> bool:
    a, b = _norm(a), _norm(b)
    if a is None or b is None:
        return a is None and b is None
    if isinstance(a, float) and isinstance(b, float):
        if math.isnan(a) or math.isnan(b):
            return math.isnan(a) and math.isnan(b)
        if math.isinf(a) or math.isinf(b):
            return a == b
        return a == b or math.isclose(a, b, rel_tol=1e-12, abs_tol=0.0)
    if isinstance(a, Decimal) and isinstance(b, Decimal):
        return a == b and a.as_tuple().exponent == b.as_tuple().exponent
    if type(a) is not type(b) and not (isinstance(a, (int, float)) and isinstance(b, (int, float))):
        return False
    return a == b


def compare(expected: Outcome, actual: Outcome) -> str | None:
    """None if ``actual`` (Ember) conforms to ``expected`` (Spark), else a description."""
    if expected.kind == "error":
        if actual.kind == "error" and actual.error_class == expected.error_class:
            return None
        return f"Spark raised [{expected.error_class}], Ember: {actual.describe()}"
    if actual.kind != "ok":
        return f"Spark returned {expected.describe()}\nEmber: {actual.describe()}"
    if expected.type != actual.type:
        return f"type differs: Spark {expected.type}, Ember {actual.type}"
    bad = [i for i, (a, b) in enumerate(zip(expected.values, actual.values)) if not _same_value(a, b)]
    if bad or len(expected.values) != len(actual.values):
        return (f"values differ at rows {bad}:\n  Spark {expected.values!r}\n"
                f"  Ember {actual.values!r}")
    return None


# ----------------------------------------------------------------------------------------------
# per-seed state (tables, sessions, outcomes computed lazily one batch at a time)

_spark_sessions: dict[tuple[int, bool], Any] = {}
_ember_sessions: dict[tuple[int, str, bool], Any] = {}
_outcomes: dict[tuple[int, str, bool], tuple[Outcome, Outcome]] = {}
_expected: dict[tuple[int, bool], list[Outcome]] = {}  # Spark's, per batch start: both runtimes
_local: dict[tuple[int, bool], list[Outcome]] = {}  # the local runtime's, per batch start


def _spark_session(spark: Any, scenario: int, ansi: bool = True) -> Any:
    if (scenario, ansi) not in _spark_sessions:
        session = spark.newSession()
        session.conf.set("spark.sql.codegen.wholeStage", "false")
        session.conf.set(ANSI_KEY, str(ansi).lower())
        session.conf.set(TIME_ZONE_KEY, session_time_zone(SEED, scenario))
        session.createDataFrame(make_table(SEED, scenario)).createOrReplaceTempView("t")
        _spark_sessions[(scenario, ansi)] = session
    return _spark_sessions[(scenario, ansi)]


def _ember_session(scenario: int, table: pa.Table | None = None, runtime: str = "local",
                   ansi: bool = True) -> Any:
    if table is not None:
        conf = {TIME_ZONE_KEY: session_time_zone(SEED, scenario)}
        if not ansi:
            conf[ANSI_KEY] = "false"
        session = new_session(conf, runtime)
        session.createDataFrame(_for_ember(table)).createOrReplaceTempView("t")
        return session
    if (scenario, runtime, ansi) not in _ember_sessions:
        _ember_sessions[(scenario, runtime, ansi)] = _ember_session(
            scenario, make_table(SEED, scenario), runtime, ansi)
    return _ember_sessions[(scenario, runtime, ansi)]


def _outcome(spark: Any, index: int, runtime: str, ansi: bool = True) -> tuple[Outcome, Outcome]:
    if (index, runtime, ansi) not in _outcomes:
        start = index - index % BATCH
        stop = min(start + BATCH, N_EXPRS, (start // PER_SCENARIO + 1) * PER_SCENARIO)
        scenario = start // PER_SCENARIO
        exprs = [make_expression(SEED, i) for i in range(start, stop)]
        if (start, ansi) not in _local:
            _local[(start, ansi)] = _ember_run(_ember_session(scenario, ansi=ansi), exprs)
        local = _local[(start, ansi)]
        if (start, ansi) not in _expected:
            _expected[(start, ansi)] = _run_guided(
                _spark_session(spark, scenario, ansi), exprs, _spark_run, local)
        expected = _expected[(start, ansi)]
        actual = local if runtime == "local" else _run_guided(
            _ember_session(scenario, runtime=runtime, ansi=ansi), exprs, _ember_run, local)
        for k, (e, a) in enumerate(zip(expected, actual)):
            _outcomes[(start + k, runtime, ansi)] = (e, a)
    return _outcomes[(index, runtime, ansi)]


def _ember_row_errors(scenario: int, expr: str, ansi: bool = True) -> set[str]:
    """Error classes Ember raises for ``expr`` on each row of the scenario's table alone."""
    table = make_table(SEED, scenario)
    classes = set()
    for r in range(table.num_rows):
        out = _ember_run(_ember_session(scenario, table.slice(r, 1), ansi=ansi), [expr])[0]
        if out.kind == "error":
            classes.add(out.error_class)
    return classes


def _spark_batch(index: int) -> bool:
    """The Spark runtime's sample: the first batch of each scenario (its own session time zone and
    table), a fifth of the expressions; all of them with ``EMBER_SPARK_RUNTIME=all``."""
    return index % PER_SCENARIO < BATCH


@pytest.mark.spark
@pytest.mark.differential
@pytest.mark.parametrize(("index", "runtime"), runtime_cases(range(N_EXPRS), _spark_batch, "e"))
def test_random_expression(spark: Any, index: int, runtime: str) -> None:
    _check(spark, index, runtime, ansi=True)


@pytest.mark.spark
@pytest.mark.differential
@pytest.mark.parametrize(("index", "runtime"), runtime_cases(
    ANSI_OFF_INDICES, lambda i: _spark_batch(i) and i // PER_SCENARIO % 2 == 0, "e"))
def test_random_expression_ansi_off(spark: Any, index: int, runtime: str) -> None:
    """The same expressions with ``spark.sql.ansi.enabled=false`` on Spark and on Ember."""
    _check(spark, index, runtime, ansi=False)


def _check(spark: Any, index: int, runtime: str, ansi: bool) -> None:
    expected, actual = _outcome(spark, index, runtime, ansi)
    problem = compare(expected, actual)
    scenario = index // PER_SCENARIO
    expr = make_expression(SEED, index)
    if (problem is not None and expected.kind == "error" and actual.kind == "error"
            and not expected.error_class.startswith(("DATATYPE_MISMATCH", "UNRESOLVED"))
            and expected.error_class in _ember_row_errors(scenario, expr, ansi)):
        problem = None  # another row / sub-expression fails first in a vectorized engine
    if problem is not None:
        table = make_table(SEED, scenario)
        pytest.fail(
            f"EMBER_DIFF_SEED={SEED} expression {index} (scenario {scenario}, {runtime} runtime,"
            f" {ANSI_KEY}={str(ansi).lower()}, {TIME_ZONE_KEY}={session_time_zone(SEED, scenario)})"
            f" differs from Spark\n"
            f"SQL:\n  SELECT {expr} AS r FROM t\n\nData:\n"
            f"{describe_table(table, referenced_columns(expr) or None)}\n\n{problem}",
            pytrace=False,
        )


def test_generator_is_deterministic() -> None:
    assert make_expression(SEED, 17) == make_expression(SEED, 17)
    assert repr(make_table(SEED, 1).to_pylist()) == repr(make_table(SEED, 1).to_pylist())
    assert [make_expression(SEED, i) for i in range(5)] != [make_expression(SEED + 1, i) for i in range(5)]
