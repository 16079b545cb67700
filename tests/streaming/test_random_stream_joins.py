"""Random stream-stream joins, Ember vs Spark Structured Streaming, batch by batch, on both
runtimes.

Each case is one scenario of :mod:`tests.streaming.stream_join_generator` (extra conjuncts over
one side, both sides and the time columns; outputs that repeat column names; range, time-key and
``window()`` conditions; every join type).  Spark runs it over memory streams; Ember's local
runtime over memory streams; Ember's Spark runtime over Parquet directories (it refuses a
``MemoryStream``) with the state rows read from its checkpoint.  Compared after every step: the
rows, the micro-batches, their watermarks, the state rows and the late rows
(:func:`~tests.streaming.spark_harness.assert_same`).  A query Spark refuses must be refused by
Ember with the same error classes (of the exception and of a failed query's cause).

The suite runs a sample: the first ``EMBER_STREAM_JOINS_LOCAL`` scenarios (default 4, ~10 s
each) on the local runtime and the first ``EMBER_STREAM_JOINS_SPARK`` (default 1) on the Spark
runtime (a Spark-runtime query starts Python workers of its own: ~30 s per scenario), all from
seed ``EMBER_STREAM_JOINS_SEED`` (default 18).  Each failure names its seed and index; re-run
one with ``EMBER_STREAM_JOINS_SEED=<seed> ... -k 'local-<index>'``.

Issue 18 (item 9): before the fix the state value watermark substituted the watermark for every
column of the other side, so a conjunct like ``l.ln + r.rn >= 5`` gave each side a candidate far
below the range's and the state was never evicted.  Seed 18 found it at the indexes in
``FOUND_ITEM_9`` (10 of 120 scenarios: more state rows than Spark's in inner joins, outer rows
never emitted in outer joins); the default sample of seed 18 includes 16 (state) and 40 (a right
outer join's lost outer row).  With the fix the 120 scenarios of seed 18 match Spark on the
local runtime, and 21 of them on the Spark runtime.

Run: ``python -m pytest -q tests/streaming/test_random_stream_joins.py``.
"""

from __future__ import annotations

import os
from typing import Any

import pytest

from tests.streaming.spark_harness import (
    EmberEngine,
    EmberFileEngine,
    SparkEngine,
    assert_same,
    cause_class,
    error_class,
    run_scenario,
)
from tests.streaming.stream_join_generator import make_scenario

pytestmark = [pytest.mark.spark, pytest.mark.differential]

SEED = int(os.environ.get("EMBER_STREAM_JOINS_SEED", "18"))
N_LOCAL = int(os.environ.get("EMBER_STREAM_JOINS_LOCAL", "4"))
N_SPARK = int(os.environ.get("EMBER_STREAM_JOINS_SPARK", "1"))
CONF = {"spark.sql.shuffle.partitions": "2", "spark.sql.session.timeZone": "UTC"}
#: seed 18's scenarios that found issue 18 item 9 on the unfixed code
FOUND_ITEM_9 = (16, 35, 40, 48, 51, 61, 72, 99, 106, 113)


def outcome(engine: Any, index: int, checkpoint: str) -> tuple:
    """``("ok", step results)`` or ``("error", class, cause class)``."""
    try:
        return ("ok", run_scenario(engine, make_scenario(SEED, index), checkpoint))
    except Exception as e:  # noqa: BLE001 - the refusal is the result
        return ("error", error_class(e), cause_class(e), str(e).split("\n", 1)[0][:300])


@pytest.fixture(scope="module")
def spark_outcome(spark: Any, tmp_path_factory: pytest.TempPathFactory):
    engine = SparkEngine(spark)
    cache: dict[int, tuple] = {}

    def get(index: int) -> tuple:
        if index not in cache:
            cache[index] = outcome(engine, index, str(tmp_path_factory.mktemp("spark")))
        return cache[index]

    return get


def _compare(index: int, spark: tuple, ember: tuple) -> None:
    scenario = make_scenario(SEED, index)
    if spark[0] == "error" or ember[0] == "error":
        assert ember[:3] == spark[:3], (
            f"{scenario.name}\nspark: {spark if spark[0] == 'error' else 'ran'}\n"
            f"ember: {ember if ember[0] == 'error' else 'ran'}")
        return
    assert_same(scenario, spark[1], ember[1])


def _ids(runtime: str, n: int, extra: tuple[int, ...] = ()) -> list[Any]:
    indexes = sorted(set(range(n)) | set(extra if SEED == 18 else ()))
    return [pytest.param(i, id=f"{runtime}-{i}") for i in indexes]


@pytest.mark.parametrize("index", _ids("local", N_LOCAL, (16, 40)))
def test_local_runtime_matches_spark(spark_outcome: Any, index: int, tmp_path: Any) -> None:
    import ember

    engine = EmberEngine(ember.Session(dict(CONF)))
    _compare(index, spark_outcome(index), outcome(engine, index, str(tmp_path / "ck")))


@pytest.mark.parametrize("index", _ids("spark", N_SPARK))
def test_spark_runtime_matches_spark(spark: Any, spark_outcome: Any, index: int,
                                     tmp_path: Any) -> None:
    import ember

    engine = EmberFileEngine(ember.Session(dict(CONF), runtime="spark", spark=spark),
                             str(tmp_path))
    _compare(index, spark_outcome(index), outcome(engine, index, str(tmp_path / "ck")))
