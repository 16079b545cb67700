"""Per-query limits of the local runtime: ``ember.execution.timeout`` cancels a query between
two batches with Spark's ``OPERATION_CANCELED``, and Ctrl-C (``KeyboardInterrupt``) cancels a
running ``collect()``; either way the session stays usable (issue 24).  The Spark runtime's
timeout (its job group cancelled) runs with ``EMBER_LIMITS_SPARK=1``."""

from __future__ import annotations

import _thread
import threading
import time

import pytest

import ember
from ember.errors import ExecutionError
from tests.full_run import run_all
from tests.spark_session import get_spark

# minutes of work, one batch at a time: cancelled long before it ends
SLOW = ("SELECT count(*) FROM range(4000) a CROSS JOIN range(4000) b CROSS JOIN range(400) c "
        "WHERE a.id + b.id + c.id > 5")


def test_timeout_cancels_the_query_and_the_session_stays_usable():
    s = ember.Session()
    s.conf.set("ember.execution.timeout", "300ms")
    t0 = time.monotonic()
    with pytest.raises(ExecutionError) as e:
        s.sql(SLOW).collect()
    assert e.value.error_class == "OPERATION_CANCELED"
    assert "ember.execution.timeout (300 ms)" in str(e.value)
    assert time.monotonic() - t0 < 60
    # a query within the limit still runs, and with the limit off the session is as before
    assert s.sql("SELECT count(*) FROM range(1000)").collect()[0][0] == 1000
    s.conf.set("ember.execution.timeout", "0")
    assert s.sql("SELECT sum(id) FROM range(10) a").collect()[0][0] == 45


def test_keyboard_interrupt_cancels_collect_and_the_session_stays_usable():
    s = ember.Session()
    timer = threading.Timer(0.5, _thread.interrupt_main)
    timer.start()
    try:
        with pytest.raises(KeyboardInterrupt):
            s.sql(SLOW).collect()
    finally:
        timer.cancel()
    assert s.sql("SELECT count(*) FROM range(1000) a JOIN range(1000) b ON a.id = b.id"
                 ).collect()[0][0] == 1000


@pytest.mark.skipif(not run_all("EMBER_LIMITS_SPARK"),
                    reason="a minute on a busy machine: EMBER_LIMITS_SPARK=1")
def test_timeout_on_the_spark_runtime():
    """The Spark runtime cancels the query's job group: past the timeout the query fails with
    OPERATION_CANCELED, and the session (and its SparkContext) keeps running queries."""

    s = ember.Session(runtime="spark", spark=get_spark())
    s.conf.set("ember.execution.timeout", "2s")
    with pytest.raises(ExecutionError) as e:
        s.sql(SLOW).collect()
    assert e.value.error_class == "OPERATION_CANCELED"
    s.conf.set("ember.execution.timeout", "0")
    assert s.sql("SELECT count(*) FROM range(1000)").collect()[0][0] == 1000
