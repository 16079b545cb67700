#!/usr/bin/env python
"""Regenerate tests/conformance/golden/*.json from PySpark (the oracle).

    /work/venv/bin/python tools/generate_goldens.py [substring-of-input-path ...]

See :mod:`tests.conformance.generate` for what is recorded.
"""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from tests.conformance.generate import main  # noqa: E402

if __name__ == "__main__":
    sys.exit(main())
