"""Running a stage's tasks on the shared thread pool.

A *stage* is a list of tasks submitted together (an exchange's map side, a broadcast's input, the
final result).  Tasks run on one process-wide ``ThreadPoolExecutor`` of ``os.cpu_count()``
threads: the kernels (pyarrow.compute, numpy) release the GIL, so partitions progress in parallel.
A task that itself needs a stage (an exchange or broadcast first reached inside a running task)
runs that stage inline on its own thread, which cannot deadlock the pool.

Results come back in task order; when tasks fail, the error of the lowest-numbered failing task is
raised (unchanged, so ANSI errors keep their class), after the other tasks finished or were
cancelled -- results never depend on thread timing.

Ctrl-C (``KeyboardInterrupt`` in the thread waiting for a stage) cancels the query: tasks not
started are dropped, and the running ones are interrupted (``KeyboardInterrupt`` raised in their
threads at their next Python instruction, between two kernel calls), so the pool is free again
when the interrupt reaches the caller (the shell keeps running).
"""

from __future__ import annotations

import ctypes
import os
import threading
from collections.abc import Callable, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from typing import TypeVar

from ember.runtime.local.progress import ProgressBar

__all__ = ["run_stage", "default_parallelism", "in_worker"]

R = TypeVar("R")

_pool: ThreadPoolExecutor | None = None
_pool_lock = threading.Lock()
_local = threading.local()


def _interrupt(running: dict[int, int], lock: threading.Lock) -> None:
    """Raise ``KeyboardInterrupt`` in the threads running the stage's tasks."""
    with lock:
        for ident in running.values():
            ctypes.pythonapi.PyThreadState_SetAsyncExc(ctypes.c_ulong(ident),
                                                       ctypes.py_object(KeyboardInterrupt))


def default_parallelism() -> int:
    """Number of worker threads (the cores)."""
    return max(1, os.cpu_count() or 1)


def _get_pool() -> ThreadPoolExecutor:
    global _pool
    if _pool is None:
        with _pool_lock:
            if _pool is None:
                _pool = ThreadPoolExecutor(max_workers=default_parallelism(),
                                           thread_name_prefix="ember-task",
                                           initializer=_mark_worker)
    return _pool


def _mark_worker() -> None:
    _local.worker = True


def in_worker() -> bool:
    """Whether the current thread is a pool worker."""
    return getattr(_local, "worker", False)


def run_stage(name: str, tasks: Sequence[Callable[[], R]], progress: ProgressBar | None = None,
              parallel: bool = True) -> list[R]:
    """Run ``tasks`` (in parallel when possible) and return their results in order."""
    stage = progress.stage(name, len(tasks)) if progress is not None else None

    running: dict[int, int] = {}  # task number -> thread id, while the task runs
    lock = threading.Lock()

    def wrap(fn: Callable[[], R], number: int) -> Callable[[], R]:
        def run() -> R:
            with lock:
                running[number] = threading.get_ident()
            if stage is not None:
                progress.task_started(stage)
            try:
                return fn()
            finally:
                with lock:
                    running.pop(number, None)
                if stage is not None:
                    progress.task_finished(stage)

        return run

    try:
        if not parallel or len(tasks) <= 1 or in_worker():
            return [wrap(t, i)() for i, t in enumerate(tasks)]
        pool = _get_pool()
        futures: list[Future] = [pool.submit(wrap(t, i)) for i, t in enumerate(tasks)]
        results: list[R] = []
        first_error: BaseException | None = None
        for f in futures:
            if first_error is not None:
                f.cancel()
                continue
            try:
                results.append(f.result())
            except KeyboardInterrupt as e:  # Ctrl-C: cancel the query
                first_error = e
                _interrupt(running, lock)
            except BaseException as e:  # noqa: BLE001 - re-raised below, unchanged
                first_error = e
        if first_error is not None:
            for f in futures:  # let running tasks finish before the caller cleans up
                if not f.cancelled():
                    try:
                        f.result()
                    except BaseException:  # noqa: BLE001 - the first error wins
                        pass
            raise first_error
        return results
    finally:
        if stage is not None:
            progress.stage_done(stage)
