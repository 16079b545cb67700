"""SIGKILL during writes: a writer process killed at random points (random delays, and random
steps of the commit protocol) always leaves a directory Ember reads as exactly the rows before
the write or exactly the rows after it (``tests/writes/kill_writer.py`` runs the rounds).

The default run does a few rounds; ``EMBER_KILL_ROUNDS=500`` runs a long sweep
(``EMBER_KILL_SEED`` replays a failing seed)."""

from __future__ import annotations

import json
import os
import random
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def test_killed_writes_leave_old_or_new_rows(tmp_path):
    rounds = int(os.environ.get("EMBER_KILL_ROUNDS", "6"))
    seed = int(os.environ.get("EMBER_KILL_SEED", random.randrange(1 << 30)))
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([os.path.join(ROOT, "src"), ROOT]))
    proc = subprocess.run([sys.executable, "-m", "tests.writes.kill_writer",
                           str(tmp_path / "table"), str(rounds), str(seed)],
                          capture_output=True, text=True, cwd=ROOT, env=env,
                          timeout=60 + 10 * rounds)
    last = (proc.stdout.strip().splitlines() or ["{}"])[-1]
    assert proc.returncode == 0, f"seed {seed}: {last}\n{proc.stderr[-3000:]}"
    result = json.loads(last)
    assert result["rounds"] == rounds
    assert result.get("old", 0) + result.get("new", 0) == rounds
