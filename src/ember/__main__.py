"""``python -m ember``: the same command line as the ``ember`` script."""

import sys

from ember.cli import main

sys.exit(main())
