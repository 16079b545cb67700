"""Differential test: random window functions, grouping analytics and library aggregates, Ember
vs Spark (queries from :mod:`tests.differential.analytics_generator`, over the same scenarios,
sessions and configuration switches as :mod:`tests.differential.test_random_joins`).

* Only the features switched on run (:func:`~tests.differential.analytics_generator.enabled_features`:
  ``ENABLED_FEATURES`` in the generator, or ``EMBER_DIFF_FEATURES=windows,grouping,aggregates``
  / ``all``); with none on, there is nothing to run.
* ``EMBER_DIFF_SEED`` (default 20240611) picks data and queries; ``EMBER_DIFF_ANALYTICS``
  (default 30, a small sample) how many queries run; the enabled features take turns.  Long
  sweep: ``EMBER_DIFF_FEATURES=all EMBER_DIFF_ANALYTICS=3000 python -m pytest
  tests/differential/test_random_analytics.py``.
* Reproduce one failure: ``EMBER_DIFF_SEED=7 python -m pytest
  tests/differential/test_random_analytics.py -k a0042``; the message prints the SQL and tables.
* Each query runs locally with the optimizer on and off and at batch size 2, and on the Spark
  runtime at the default and at batch size 2.
"""

from __future__ import annotations

import os
from typing import Any

import pytest

from tests.conformance.ember_adapter import RUNTIMES, check_outcome, run_sql
from tests.conformance.generate import run_statement
from tests.differential.analytics_generator import enabled_features, make_analytics_query
from tests.differential.generator import make_scenario
from tests.differential.test_random_joins import (SEED, VARIANTS, ember_session_for, scenario_conf,
                                                  spark_session_for)

FEATURES_ON = enabled_features()
N_QUERIES = int(os.environ.get("EMBER_DIFF_ANALYTICS", "30")) if FEATURES_ON else 0

#: Ember variants (keys of the join test's ``VARIANTS``) per runtime: windows and grouping sets
#: do not depend on the join strategy, but on the optimizer and on batch boundaries.
LOCAL_VARIANTS = ("default", "optimizer off", "broadcast, batch 2")
SPARK_VARIANTS = ("default", "broadcast, batch 2")

_expected: dict[int, object] = {}  # Spark's outcome per query: both runtimes


@pytest.mark.spark
@pytest.mark.differential
@pytest.mark.parametrize("runtime", RUNTIMES)
@pytest.mark.parametrize("index", range(N_QUERIES), ids=[f"a{i:04d}" for i in range(N_QUERIES)])
def test_random_analytics_query(spark: Any, index: int, runtime: str) -> None:
    scenario, sql = make_analytics_query(SEED, index, FEATURES_ON)
    if index not in _expected:
        _expected[index] = run_statement(spark_session_for(spark, scenario), sql)
    expected = _expected[index]
    for variant in LOCAL_VARIANTS if runtime == "local" else SPARK_VARIANTS:
        actual = run_sql(ember_session_for(scenario, variant, runtime), sql)
        problem = check_outcome(expected, actual, strict_zero_sign=False)
        if problem is not None:
            pytest.fail(
                f"EMBER_DIFF_SEED={SEED} EMBER_DIFF_FEATURES={','.join(sorted(FEATURES_ON))} "
                f"analytics query {index} (scenario {scenario}, Ember variant {variant!r}: "
                f"{VARIANTS[variant]}, {runtime} runtime; Spark and Ember configuration "
                f"{scenario_conf(scenario)}) differs from Spark\n"
                f"SQL:\n  {sql}\n\nTables:\n{make_scenario(SEED, scenario).describe()}\n\n{problem}",
                pytrace=False,
            )


def test_analytics_generator_is_deterministic_and_switchable() -> None:
    """Same seed and index -> same SQL; each switch only yields its own family."""
    every = frozenset({"windows", "grouping", "aggregates", "arrays"})
    assert make_analytics_query(SEED, 17, every) == make_analytics_query(SEED, 17, every)
    for i in range(30):
        windows = make_analytics_query(SEED, i, frozenset({"windows"}))[1].lower()
        assert " over " in windows or "over (" in windows
        grouping = make_analytics_query(SEED, i, frozenset({"grouping"}))[1].lower()
        assert "grouping sets" in grouping or "rollup(" in grouping or "cube(" in grouping
        assert " over " not in grouping
        aggregates = make_analytics_query(SEED, i, frozenset({"aggregates"}))[1].lower()
        assert " over " not in aggregates and "rollup" not in aggregates
    with pytest.raises(ValueError):
        make_analytics_query(SEED, 0, frozenset())
