"""Spark SQL golden files, replayed on Ember.

Every statement of every golden file (``tests/conformance/golden/**.json``, generated from
PySpark by ``python tools/generate_goldens.py``) is one test, for every run variant of its file:

* each distinct configuration set of the file (``--SET`` line x ``--CONFIG_DIM`` product; sets
  that differ only in keys Ember ignores, ``spark.sql.codegen.*``, are run once), and
* each of those on both runtimes (``RUNTIMES``: local, and the Spark runtime on the run's
  SparkSession, ids ending ``@spark``; the Spark runtime runs :data:`SPARK_VARIANTS`; files
  without joins run fewer variants, :func:`variants_for`), and
* each of those under every entry of :data:`VARIANTS`: the default batch size and
  ``ember.execution.batchSize=2``; the optimizer off (``ember.optimizer.enabled=false``: only the
  rewrites execution requires), so optimized and unoptimized plans give the same rows; and each
  forced join strategy (sort-merge with broadcasting off, shuffled hash forced, broadcast
  everything), each at both batch sizes.

The default suite runs every file's core variants (local at both batch sizes, the Spark runtime
at the default) and a rotating share of its other variants: each runs on every other file
locally and on every fourth on the Spark runtime (:func:`variants_for`);
``EMBER_CONFORMANCE_ALL=1`` runs them all.

A variant runs all statements of the file in order in one fresh ``ember.Session()`` (views
persist within the file); the run happens once, on the first test that needs it, and each test then
checks its statement's outcome against the golden: same column names and types, same rows (sorted
unless Spark's suite compares in order; floats within 1e-9 relative, NaN == NaN), or an
``EmberError`` with the same ``error_class``.  Statements listed in ``exclusions.toml`` are skipped
with their reason.

Run: ``python -m pytest tests/conformance -q`` (``-k count.sql`` for one file,
``-k "bs2"`` for the batch-size-2 variants).
"""

from __future__ import annotations

import json
import re
import tomllib
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

import pytest

from tests.conformance.ember_adapter import (BATCH_SIZE_KEY, RUNTIMES, Outcome, check_outcome,
                                            new_session, run_sql)
from tests.full_run import run_all

HERE = Path(__file__).resolve().parent
GOLDEN_ROOT = HERE / "golden"
EXCLUSIONS_FILE = HERE / "exclusions.toml"

#: Configuration keys that cannot change Ember's results; config sets differing only in them run once.
IGNORED_CONF_PREFIXES = ("spark.sql.codegen.",)


KEEP_SMJ = "ember.execution.adaptive.shuffledHashJoin.enabled"

#: Run variants: name suffix -> configuration added to the file's own.
VARIANTS: dict[str, dict[str, str]] = {
    "": {},
    "-bs2": {BATCH_SIZE_KEY: "2"},
    "-noopt": {"ember.optimizer.enabled": "false"},
    # broadcasting off: equi-joins become sort-merge joins, others cartesian / nested loop (and
    # the runtime keeps sort-merge joins instead of running them as shuffled hash joins)
    "-smj": {"spark.sql.autoBroadcastJoinThreshold": "-1", KEEP_SMJ: "false"},
    "-smj-bs2": {"spark.sql.autoBroadcastJoinThreshold": "-1", KEEP_SMJ: "false",
                 BATCH_SIZE_KEY: "2"},
    # shuffled hash join wherever the join type allows it
    "-shj": {"spark.sql.autoBroadcastJoinThreshold": "-1",
             "ember.join.forceApplyShuffledHashJoin": "true"},
    "-shj-bs2": {"spark.sql.autoBroadcastJoinThreshold": "-1",
                 "ember.join.forceApplyShuffledHashJoin": "true", BATCH_SIZE_KEY: "2"},
    # everything small enough to broadcast: broadcast hash / broadcast nested loop joins
    "-bhj": {"spark.sql.autoBroadcastJoinThreshold": str(2**62)},
    "-bhj-bs2": {"spark.sql.autoBroadcastJoinThreshold": str(2**62), BATCH_SIZE_KEY: "2"},
}


#: Variants also run on the Spark runtime: every plan shape (optimizer on and off, each forced
#: join strategy).  The batch-size-2 variants stress the local kernels' batch boundaries, which
#: both runtimes share; one of them stays, for the Spark runtime's own batch handling (shuffle
#: pieces, blobs), and the rest would only double the suite's Spark time.
SPARK_VARIANTS = ("", "-noopt", "-smj", "-smj-bs2", "-shj", "-bhj")

#: Files about windows, grouping analytics, aggregates, the catalog and inserts (name prefixes),
#: whose statements have (almost) no joins: the join-strategy variants would only run the same
#: plans again.  They run :data:`JOIN_FREE_VARIANTS` locally and :data:`JOIN_FREE_SPARK_VARIANTS`
#: on the Spark runtime.
JOIN_FREE_FILES = ("window.sql", "group-analytics.sql", "grouping_set.sql", "ember/",
                   "show-tables.sql", "describe.sql", "null-handling.sql",
                   "decimalArithmeticOperations.sql", "postgreSQL/select_having.sql",
                   "postgreSQL/insert.sql", "interval.sql", "timestamp-ntz.sql",
                   "join-lateral.sql", "subquery/exists-subquery/exists-aggregate.sql")
JOIN_FREE_VARIANTS = ("", "-bs2", "-noopt")
JOIN_FREE_SPARK_VARIANTS = ("", "-bs2")


#: Variants every file runs in the default suite; the others are sampled (:func:`variants_for`).
CORE_VARIANTS = {"local": ("", "-bs2"), "spark": ("",)}

#: In the default suite a sampled variant runs on one file in ``SAMPLE_STRIDE[runtime]``: every
#: other file locally, every fourth on the Spark runtime, where each statement is a Spark job.
SAMPLE_STRIDE = {"local": 2, "spark": 4}

#: ``EMBER_CONFORMANCE_ALL=1`` (or ``EMBER_FULL=1``) runs every variant of every file.
ALL_VARIANTS = run_all("EMBER_CONFORMANCE_ALL")


def variants_for(file: str, runtime: str, position: int) -> tuple[str, ...]:
    """The run variants (``VARIANTS`` keys) of ``file`` on ``runtime``.

    In the default suite each file runs :data:`CORE_VARIANTS` and a rotating share of its other
    variants (by ``position`` among the golden files): each of them runs on one file in
    :data:`SAMPLE_STRIDE` of its kind, and any stride of neighbouring files together run all of
    them; ``EMBER_CONFORMANCE_ALL=1`` runs every variant of every file.
    """
    if file.startswith(JOIN_FREE_FILES):
        variants = JOIN_FREE_SPARK_VARIANTS if runtime == "spark" else JOIN_FREE_VARIANTS
    else:
        variants = SPARK_VARIANTS if runtime == "spark" else tuple(VARIANTS)
    if ALL_VARIANTS:
        return variants
    core = CORE_VARIANTS[runtime]
    rest = [v for v in variants if v not in core]
    return tuple(v for v in variants
                 if v in core or (position + rest.index(v)) % SAMPLE_STRIDE[runtime] == 0)


@dataclass(frozen=True, slots=True)
class Case:
    file: str
    index: int
    variant: str
    config_index: int
    extra: str = ""
    runtime: str = "local"

    @property
    def id(self) -> str:
        suffix = "" if self.runtime == "local" else f"@{self.runtime}"
        return f"{self.file}:{self.index:02d}:{self.variant}{suffix}"


@lru_cache(maxsize=None)
def load_golden(file: str) -> dict[str, Any]:
    return json.loads((GOLDEN_ROOT / f"{file}.json").read_text())


def golden_files() -> list[str]:
    return sorted(p.relative_to(GOLDEN_ROOT).as_posix().removesuffix(".json")
                  for p in GOLDEN_ROOT.rglob("*.json"))


def distinct_config_indexes(config_sets: list[list[list[str]]]) -> list[int]:
    """First index of each config set, ignoring keys that do not affect Ember."""
    seen: dict[tuple, int] = {}
    for i, cs in enumerate(config_sets):
        key = tuple((k, v) for k, v in cs if not k.startswith(IGNORED_CONF_PREFIXES))
        seen.setdefault(key, i)
    return sorted(seen.values())


def all_cases() -> list[Case]:
    cases = []
    for position, file in enumerate(golden_files()):
        doc = load_golden(file)
        for ci in distinct_config_indexes(doc["config_sets"]):
            for extra in VARIANTS:
                for runtime in RUNTIMES:
                    if extra not in variants_for(file, runtime, position):
                        continue
                    cases.extend(Case(file, s["index"], f"c{ci}{extra}", ci, extra, runtime)
                                 for s in doc["statements"])
    return cases


def _squash(sql: str) -> str:
    return re.sub(r"\s+", " ", sql).strip().lower()


@lru_cache(maxsize=1)
def load_exclusions() -> tuple[dict[str, Any], ...]:
    if not EXCLUSIONS_FILE.exists():
        return ()
    entries = tomllib.loads(EXCLUSIONS_FILE.read_text()).get("exclude", [])
    for e in entries:
        if "file" not in e or "reason" not in e or ("index" not in e and "sql_prefix" not in e):
            raise ValueError(f"bad exclusion entry {e!r}: needs file, reason and index or sql_prefix")
    return tuple(entries)


def exclusion_reason(file: str, index: int, sql: str) -> str | None:
    for e in load_exclusions():
        if e["file"] != file:
            continue
        if "index" in e and e["index"] == index:
            return e["reason"]
        if "sql_prefix" in e and _squash(sql).startswith(_squash(e["sql_prefix"])):
            return e["reason"]
    return None


_RUNS: dict[tuple[str, int, str, str], list[Outcome]] = {}


def run_file_on_ember(file: str, config_index: int, extra: str = "",
                      runtime: str = "local") -> list[Outcome]:
    """All statements of ``file`` in order, in one fresh Ember session on ``runtime`` (cached
    per variant and runtime)."""
    key = (file, config_index, extra, runtime)
    if key not in _RUNS:
        doc = load_golden(file)
        conf = {k: v for k, v in doc["config_sets"][config_index]}
        conf.update(VARIANTS[extra])
        try:
            session = new_session(conf, runtime)
        except Exception as e:  # noqa: BLE001 - e.g. Ember's Session does not exist yet
            raise RuntimeError(f"cannot start an Ember session with {conf}: {e!r}") from e
        _RUNS[key] = [run_sql(session, s["sql"]) for s in doc["statements"]]
    return _RUNS[key]


def expected_for(stmt: dict[str, Any], config_index: int) -> dict[str, Any]:
    """The golden outcome of a statement under a config set (usually the same for all)."""
    per_config = stmt.get("results_by_config")
    return per_config[config_index] if per_config else stmt


CASES = all_cases()


@pytest.mark.conformance
@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_statement(case: Case) -> None:
    doc = load_golden(case.file)
    stmt = doc["statements"][case.index]
    reason = exclusion_reason(case.file, case.index, stmt["sql"])
    if reason is not None:
        pytest.skip(f"excluded: {reason}")
    actual = run_file_on_ember(case.file, case.config_index, case.extra, case.runtime)[case.index]
    problem = check_outcome(expected_for(stmt, case.config_index), actual)
    if problem is not None:
        config = doc["config_sets"][case.config_index]
        pytest.fail(
            f"{case.file} statement {case.index} [{case.variant}, {case.runtime} runtime]"
            f" config={config}"
            f" + {VARIANTS[case.extra]}\n"
            f"SQL:\n{stmt['sql']}\n\n{problem}",
            pytrace=False,
        )
