"""How the test suites talk to Ember (the contract: ``ember.Session``, ``session.sql``,
``session.conf.set``, ``session.createDataFrame``, ``DataFrame.to_arrow`` / ``.schema``).

Keeping this in one module means a change in Ember's public API is fixed here once, for both the
conformance runner and the differential tests.
"""

from __future__ import annotations

import atexit
import os
import shutil
import tempfile
import traceback
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

import pyarrow as pa
import pytest

from tests.conformance.normalize import (
    as_text_columns, describe_diff, mask_not_included, normalize_table, rows_equal,
)
from tests.full_run import FULL

BATCH_SIZE_KEY = "ember.execution.batchSize"


@dataclass(slots=True)
class Outcome:
    """What one statement did on Ember: a result, an EmberError, or a crash (any other exception)."""

    schema: list[list[str]] | None = None
    rows: list[list[Any]] | None = None
    error_class: str | None = None
    error: BaseException | None = None
    crash: str | None = None  # formatted traceback of a non-Ember exception
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def ok(self) -> bool:
        return self.error is None and self.crash is None

    def describe(self) -> str:
        if self.crash is not None:
            return f"Ember crashed (not an EmberError):\n{self.crash}"
        if self.error is not None:
            return f"Ember raised {type(self.error).__name__} [{self.error_class}]: {self.error}"
        return f"Ember returned schema {self.schema} with {len(self.rows or [])} rows"


#: The runtimes every conformance and differential test runs on: Ember's local runtime, and
#: Ember's physical plans executed on the test run's SparkSession (``ember.runtime.spark``).
RUNTIMES = ("local", "spark")

#: ``EMBER_SPARK_RUNTIME=all`` (or ``EMBER_FULL=1``) runs every case of the sampled
#: differential sweeps on the Spark runtime too (see :func:`runtime_cases`).
SPARK_RUNTIME_ALL = os.environ.get("EMBER_SPARK_RUNTIME") == "all" or FULL


def runtime_cases(indices: Iterable[int], on_spark: Callable[[int], bool],
                  prefix: str) -> list[Any]:
    """``pytest.param(index, runtime)`` for a random sweep: every index on the local runtime, and
    the indices ``on_spark`` picks on the Spark runtime (all of them with
    ``EMBER_SPARK_RUNTIME=all``).  The Spark runtime runs the local runtime's operators inside
    Spark tasks, so a deterministic sample covers what it adds (exchanges, stages, broadcasts,
    task serialization) while the local runtime carries every case's semantics.  Ids are
    ``<prefix><index:04d>-<runtime>``, so ``-k <prefix>0042`` selects both runtimes of a case."""
    return [pytest.param(i, rt, id=f"{prefix}{i:04d}-{rt}")
            for i in indices for rt in RUNTIMES
            if rt == "local" or SPARK_RUNTIME_ALL or on_spark(i)]


def fresh_warehouse() -> dict[str, str]:
    """A session's configuration with a new empty warehouse directory (removed at exit), so a
    file's persistent tables and views never meet another file's, nor the working tree."""
    warehouse = tempfile.mkdtemp(prefix="ember-warehouse-")
    atexit.register(shutil.rmtree, warehouse, True)
    return {"spark.sql.warehouse.dir": warehouse}


def new_session(conf: dict[str, str] | None = None, runtime: str = "local") -> Any:
    """A fresh Ember session on ``runtime`` with ``conf`` applied (``session.conf.set(k, v)``).
    The Spark runtime attaches to the run's one SparkSession (:mod:`tests.spark_session`).

    ``EMBER_TEST_BACKEND=spark`` substitutes a PySpark-backed stand-in (harness self-check).
    """
    if os.environ.get("EMBER_TEST_BACKEND", "ember") == "spark":
        from tests.conformance.spark_backend import SparkBackedSession

        session = SparkBackedSession()
    elif runtime == "spark":
        import ember
        from tests.spark_session import get_spark

        session = ember.Session(fresh_warehouse(), runtime="spark", spark=get_spark())
    else:
        import ember

        session = ember.Session(fresh_warehouse())
    for k, v in (conf or {}).items():
        session.conf.set(k, v)
    return session


_ARROW_TO_SPARK = {
    pa.bool_(): "boolean", pa.int8(): "tinyint", pa.int16(): "smallint", pa.int32(): "int",
    pa.int64(): "bigint", pa.float32(): "float", pa.float64(): "double", pa.string(): "string",
    pa.large_string(): "string", pa.binary(): "binary", pa.large_binary(): "binary",
    pa.date32(): "date", pa.null(): "void",
}


def arrow_type_to_simple_string(t: pa.DataType) -> str:
    """Spark's ``simpleString`` of the SQL type an Arrow type represents (fallback only)."""
    if t in _ARROW_TO_SPARK:
        return _ARROW_TO_SPARK[t]
    if pa.types.is_decimal(t):
        return f"decimal({t.precision},{t.scale})"
    if pa.types.is_timestamp(t):
        return "timestamp" if t.tz else "timestamp_ntz"
    if pa.types.is_struct(t):
        return "struct<" + ",".join(
            f"{t.field(i).name}:{arrow_type_to_simple_string(t.field(i).type)}"
            for i in range(t.num_fields)) + ">"
    if pa.types.is_list(t) or pa.types.is_large_list(t):
        return f"array<{arrow_type_to_simple_string(t.value_type)}>"
    if pa.types.is_map(t):
        return f"map<{arrow_type_to_simple_string(t.key_type)},{arrow_type_to_simple_string(t.item_type)}>"
    return str(t)


def _type_string(dt: Any) -> str:
    for attr in ("simple_string", "simpleString"):
        fn = getattr(dt, attr, None)
        if callable(fn):
            return fn()
    return str(dt)


def ember_schema(df: Any, table: pa.Table | None) -> list[list[str]]:
    """``[[name, simpleString], ...]`` of an Ember DataFrame (``df.schema``), else of its Arrow table."""
    schema = getattr(df, "schema", None)
    if callable(schema):
        schema = schema()
    fields = getattr(schema, "fields", None)
    if fields is not None:
        out = []
        for f in fields:
            dt = getattr(f, "data_type", None)
            if dt is None:
                dt = getattr(f, "dataType", None)
            out.append([f.name, _type_string(dt)])
        return out
    if table is None:
        return []
    return [[f.name, arrow_type_to_simple_string(f.type)] for f in table.schema]


def to_arrow(df: Any) -> pa.Table:
    for attr in ("to_arrow", "toArrow"):
        fn = getattr(df, attr, None)
        if callable(fn):
            return fn()
    raise TypeError(f"{type(df).__name__} has no to_arrow()")


def run_sql(session: Any, sql: str) -> Outcome:
    """Run one statement on Ember and capture its outcome (never raises)."""
    from ember.errors import EmberError

    try:
        df = session.sql(sql)
        if df is None:  # a command that returns nothing
            return Outcome(schema=[], rows=[])
        schema = ember_schema(df, None)
        table = to_arrow(as_text_columns(df, [t for _, t in schema]) if schema else df)
        return Outcome(schema=schema or ember_schema(df, table), rows=normalize_table(table))
    except EmberError as e:
        return Outcome(error_class=e.error_class, error=e)
    except Exception:  # noqa: BLE001 - a crash is a test failure, reported with its traceback
        return Outcome(crash=traceback.format_exc())


def register_table(session: Any, name: str, table: pa.Table) -> None:
    """``session.createDataFrame(table).createOrReplaceTempView(name)``."""
    session.createDataFrame(table).createOrReplaceTempView(name)


def check_outcome(expected: dict[str, Any], actual: Outcome, *,
                  strict_zero_sign: bool = True) -> str | None:
    """None if ``actual`` conforms to ``expected`` (a golden-form outcome), else the difference.

    ``strict_zero_sign=False`` lets ``-0.0`` match ``0.0`` in ordered results (Spark's sort treats
    them as equal, so rows differing only there may come in either order).
    """
    if "error" in expected:
        want = expected["error"]["error_class"]
        if actual.ok:
            return (f"expected error {want} ({expected['error']['message'][:300]}), "
                    f"but {actual.describe()}")
        if actual.crash is not None:
            return f"expected error {want}, but {actual.describe()}"
        if actual.error_class != want:
            return f"expected error {want}, got {actual.error_class}: {actual.error}"
        return None
    if not actual.ok:
        return actual.describe()
    if expected["command"] and not expected["schema"]:
        # CREATE VIEW / DROP VIEW ...: Spark returns an empty result
        if actual.rows:
            return f"command should return no rows, got {actual.rows[:5]}"
        return None
    if actual.schema != expected["schema"]:
        return f"schema differs:\n  expected {expected['schema']}\n  actual   {actual.schema}"
    want, got = mask_not_included(expected["rows"]), mask_not_included(actual.rows or [])
    if not rows_equal(want, got, ordered=expected["ordered"],
                      strict_zero_sign=strict_zero_sign or not expected["ordered"]):
        return "rows differ: " + describe_diff(want, got, ordered=expected["ordered"])
    return None
