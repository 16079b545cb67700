"""The top-level guard of a query's stages: deep input without ``RecursionError``, and no bare
Python exception ever reaching the user.

:func:`run_stage` is how the session and ``QueryExecution`` run parsing, analysis, optimization,
planning and execution: Ember errors pass unchanged; a ``RecursionError`` that survives
:func:`call_deep` becomes ``FAILED_TO_PARSE_TOO_COMPLEX`` (Spark's class for a statement its
stack cannot hold); any other exception is a bug in Ember and becomes ``INTERNAL_ERROR`` naming
the phase, the exception and the query text, with a request to report it (Spark's
``QueryExecution.toInternalError``).

Deep input:

Ember's parser (sqlglot), AST builder, analyzer, optimizer and expression evaluation walk trees
recursively.  Python's default recursion limit (1,000 frames) is far below what generated SQL
needs: 500 ``UNION ALL`` branches, a 500-term ``a + a + ...``, 250 chained CTEs or a 168-way
join chain all run on Spark, whose JVM threads have deeper stacks.

:func:`call_deep` runs a stage as usual and, only when it raises ``RecursionError``, runs it
again on a fresh thread with a ``DEEP_STACK_BYTES`` stack while the interpreter's recursion limit
is raised to ``DEEP_RECURSION_LIMIT``; ordinary queries pay nothing.  The limit is
interpreter-wide, so it is raised only while a deep call runs (other threads keep their ordinary
stacks meanwhile; on CPython 3.11 Python-to-Python calls do not use the C stack, so only
recursion through C slots counts against it).  The stages re-run are pure (parsing, analysis,
optimization, planning, collecting a query's rows), so running one twice is safe.

When even the deep thread overflows, :func:`call_deep` raises the ``RecursionError`` on; the
caller turns it into Spark's error (the parser: ``FAILED_TO_PARSE_TOO_COMPLEX``).
"""

from __future__ import annotations

import contextvars
import sys
import threading
from collections.abc import Callable
from typing import Any, TypeVar

from ember.errors import EmberError, InternalError, ParseError

__all__ = ["call_deep", "run_stage", "too_complex", "DEEP_RECURSION_LIMIT", "DEEP_STACK_BYTES"]

T = TypeVar("T")

#: Recursion limit while a deep call runs (Python frames; enough for 5,000 nested parentheses
#: through sqlglot's ~20 frames per level).
DEEP_RECURSION_LIMIT = 150_000
#: Stack of the deep thread: address space only, pages are committed as recursion touches them.
DEEP_STACK_BYTES = 1 << 30

_lock = threading.Lock()
_active = 0  # deep calls running (the limit is restored when the last one ends)
_saved_limit = 0
_local = threading.local()


def _raise_limit() -> None:
    global _active, _saved_limit
    with _lock:
        if _active == 0:
            _saved_limit = sys.getrecursionlimit()
            sys.setrecursionlimit(max(_saved_limit, DEEP_RECURSION_LIMIT))
        _active += 1


def _restore_limit() -> None:
    global _active
    with _lock:
        _active -= 1
        if _active == 0:
            sys.setrecursionlimit(_saved_limit)


def call_deep(fn: Callable[..., T], *args: Any) -> T:
    """``fn(*args)``; if it overflows Python's recursion limit, ``fn(*args)`` again on a thread with
    a big stack and a high recursion limit (see the module docstring).  Within a deep thread it
    simply calls ``fn`` (its ``RecursionError`` propagates)."""
    if getattr(_local, "deep", False):
        return fn(*args)
    try:
        return fn(*args)
    except RecursionError:
        pass
    return _run_on_deep_thread(fn, args)


def _run_on_deep_thread(fn: Callable[..., T], args: tuple[Any, ...]) -> T:
    outcome: list[Any] = []
    context = contextvars.copy_context()  # the caller's context variables, as on its thread

    def target() -> None:
        _local.deep = True
        try:
            outcome.append((True, context.run(fn, *args)))
        except BaseException as e:  # handed to the caller's thread below
            outcome.append((False, e))

    _raise_limit()
    try:
        with _lock:  # threading.stack_size is process-wide: set it only around this start
            old = threading.stack_size(DEEP_STACK_BYTES)
            try:
                worker = threading.Thread(target=target, name="ember-deep", daemon=True)
                worker.start()
            finally:
                threading.stack_size(old)
        worker.join()
    finally:
        _restore_limit()
    ok, value = outcome[0]
    if ok:
        return value  # type: ignore[no-any-return]
    raise value


#: The end of every ``INTERNAL_ERROR`` message the guard raises.
BUG_REPORT_HINT = ("You hit a bug in Ember. Please report it with the query and the full stack "
                   "trace (the exception's __cause__).")


def too_complex() -> ParseError:
    """Spark's ``FAILED_TO_PARSE_TOO_COMPLEX``: a statement too deep for the stack."""
    return ParseError(
        "The statement, including potential SQL functions and referenced views, was too complex "
        "to parse.\nTo mitigate this error divide the statement into multiple, less complex "
        "chunks.", error_class="FAILED_TO_PARSE_TOO_COMPLEX", parameters={})


def run_stage(phase: str, fn: Callable[[], T], sql_text: str | None = None) -> T:
    """``fn()`` under the guard (module docstring); ``phase`` names the stage (``analysis``,
    ``optimization``, ``planning``, ``execution``) in the message of an internal error."""
    try:
        return call_deep(fn)
    except EmberError:
        raise
    except RecursionError as e:
        raise too_complex() from e
    except Exception as e:  # noqa: BLE001 - a bug in Ember: reported as one, with the query
        query = f"\nQuery: {sql_text}" if sql_text else ""
        raise InternalError(
            f"The Ember SQL phase {phase} failed with an internal error: "
            f"{type(e).__name__}: {e}. {BUG_REPORT_HINT}{query}",
            parameters={"message": f"{type(e).__name__}: {e}"}) from e
