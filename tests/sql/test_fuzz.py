"""The mutation fuzzer (``tests/sql/fuzz.py``): a fixed-seed sample, every outcome a result or
an Ember error with a class other than INTERNAL_ERROR, no statement over the timeout.
``EMBER_FUZZ_COUNT=10000`` runs that many statements (``EMBER_FUZZ_SEED`` picks the seed)."""

from __future__ import annotations

import os

from tests.sql.fuzz import run

COUNT = int(os.environ.get("EMBER_FUZZ_COUNT", "15"))
SEED = int(os.environ.get("EMBER_FUZZ_SEED", "24"))


def test_fuzz_sample() -> None:
    counts, failures = run(COUNT, SEED, timeout=30.0)
    assert sum(counts.values()) == COUNT
    assert not failures, "\n".join(f"{k} {c.conf}: {c.sql[:300]}\n{d}" for k, c, d in failures)
