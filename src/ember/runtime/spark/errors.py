"""Task failures back on the driver: the Ember error a task raised, not a Java stack trace.

A failing task raises :class:`ember.runtime.spark.worker.TaskFailure`, whose message carries the
original exception, pickled and base64-encoded between ``EMBER_TASK_ERROR[`` and ``]``.  Spark
wraps it (Python traceback inside a Java exception inside a Py4J error); :func:`task_errors`
finds the payload in that text and raises the original error, with the operator that raised it
as a note (and ``error.ember_operator``).
"""

from __future__ import annotations

import base64
import pickle
import re
from collections.abc import Iterator
from contextlib import contextmanager

from ember.errors import EmberError, ExecutionError
from ember.runtime.spark.session import spark_log_path

__all__ = ["task_errors", "original_error"]

_PAYLOAD = re.compile(r"EMBER_TASK_ERROR\[([A-Za-z0-9+/=]+)\]")
#: A Spark exception with an error class: ``SparkException: [FAILED_READ_FILE.NO_HINT] ...``
_SPARK_ERROR = re.compile(r"Spark[A-Za-z]*Exception: \[([A-Z][A-Z0-9_]*(?:\.[A-Z0-9_]+)*)\] ([^\n]*)")


def original_error(exc: BaseException) -> BaseException | None:
    """The Ember error carried by a failed Spark job's exception, if any."""
    m = _PAYLOAD.search(str(exc))
    if m is None:
        return None
    err = pickle.loads(base64.b64decode(m.group(1)))
    op = getattr(err, "ember_operator", None)
    task = getattr(err, "ember_task", None)
    where = " in ".join(x for x in (f"operator {op}" if op else "",
                                    f"Spark task of {task}" if task else "") if x)
    if where:
        err.add_note(f"Raised by {where} (Ember on the Spark runtime).")
    return err


@contextmanager
def task_errors(action: str) -> Iterator[None]:
    """Run a Spark action; a failure becomes the Ember error of the task that failed, an
    ``ExecutionError`` with Spark's error class and message when Spark itself failed (a file
    reader), or else an ``ExecutionError`` holding the first line of Spark's message."""
    try:
        yield
    except EmberError:
        raise
    except Exception as e:  # noqa: BLE001 - py4j / pyspark errors of any kind
        err = original_error(e)
        if err is not None:
            raise err from None
        text = str(e)
        spark_error = _SPARK_ERROR.search(text)
        if spark_error is not None:  # Spark's own failure (a reader's, say): keep its class
            raise ExecutionError(spark_error.group(2).strip(),
                                 error_class=spark_error.group(1)) from None
        first = next((ln for ln in text.splitlines() if ln.strip()), type(e).__name__)
        err = ExecutionError(f"Spark job failed while {action}: {first}")
        if spark_log_path() is not None:
            err.add_note(f"Spark's log: {spark_log_path()}")
        raise err from e
