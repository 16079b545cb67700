"""Test-only crash points of the streaming engine (for the crash-recovery tests; never set in
production, like ``ember.spark.test.killWorkerOnce`` of the Spark runtime).

``EMBER_STREAMING_TEST_CRASH_AT=<point>[@<n>]`` in the environment makes the process exit at once
with ``os._exit(137)`` -- as a SIGKILL would: no ``finally`` blocks, no buffers flushed, no
temporary file removed -- the ``n``-th time (default 1) this process reaches ``<point>``.  While
the variable is set every point's hits are counted (:func:`hits`), so a test can run once with
a point that never fires (e.g. ``none``) to learn how often each point is reached.  Unset,
:func:`crash_point` is one environment lookup.

The points, in the order a micro-batch reaches them:

=====================  ====================================================================
``before_offsets_log``  the sources have taken the batch's new data (a file source has written
                        its own log entry); ``offsets/<batchId>`` not yet written
``after_offsets_log``   ``offsets/<batchId>`` written, the batch not run
``state_commit``        one state store's new version is in place, before its maintenance
                        (snapshot, cleanup); other stores of the batch may not be committed
``sink_files_written``  the file sink's data files are in place, ``_spark_metadata/<batchId>``
                        not yet written
``after_sink``          the sink committed the batch, ``commits/<batchId>`` not yet written
``after_commit_log``    ``commits/<batchId>`` written, the sources not yet told to commit
=====================  ====================================================================
"""

from __future__ import annotations

import os
import threading

__all__ = ["CRASH_AT_ENV", "CRASH_POINTS", "crash_point", "hits"]

CRASH_AT_ENV = "EMBER_STREAMING_TEST_CRASH_AT"
CRASH_POINTS = ("before_offsets_log", "after_offsets_log", "state_commit", "sink_files_written",
                "after_sink", "after_commit_log")

_hits: dict[str, int] = {}
_lock = threading.Lock()


def crash_point(name: str) -> None:
    """Exit the process here if the test hook names this point and hit (see the module doc)."""
    spec = os.environ.get(CRASH_AT_ENV)
    if not spec:
        return
    point, _, nth = spec.partition("@")
    with _lock:  # state commits run on several task threads
        n = _hits[name] = _hits.get(name, 0) + 1
    if point == name and n == int(nth or 1):
        os._exit(137)


def hits() -> dict[str, int]:
    """How often each point was reached in this process (counted only while the hook is set)."""
    with _lock:
        return dict(_hits)
