"""Which sampled parts of the suite run in full.

The default run (README's test command, CI) samples its slowest sweeps so that it stays under
20 minutes; each sweep names an environment variable that runs all of it, and ``EMBER_FULL=1``
runs every sweep in full (do so before resolving an issue that touches them).  The sweeps are
listed in docs/ARCHITECTURE.md, "Tests".
"""

from __future__ import annotations

import os

#: ``EMBER_FULL=1``: every sampled sweep runs in full.
FULL = os.environ.get("EMBER_FULL") == "1"


def run_all(variable: str) -> bool:
    """Whether the sweep controlled by ``variable`` (set to ``1``) runs in full."""
    return FULL or os.environ.get(variable) == "1"
