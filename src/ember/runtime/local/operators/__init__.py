"""Local operators for the non-join physical nodes (importing a module registers its operators);
exchanges are in :mod:`ember.runtime.local.exchange`, joins in :mod:`ember.runtime.local.joins`,
the streaming nodes' (watermark, stream-stream join) in :mod:`.streaming`."""

from ember.runtime.local.operators import (  # noqa: F401
    aggregate, basic, generate, limits, python, sort, streaming, window, write,
)
