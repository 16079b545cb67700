"""A console progress bar for local runs (Spark's ``ConsoleProgressBar``).

Shown on stderr only when stderr is a terminal, only once the query has run for
``min_duration`` (1 s) -- short queries print nothing -- and only when
``ember.execution.progress.enabled`` is true.  One line, redrawn in place, lists the stages still
running as ``[Stage 2: 37/200 tasks]`` with a bar; the line is erased when the query ends.
"""

from __future__ import annotations

import sys
import threading
import time
from dataclasses import dataclass
from typing import TextIO

__all__ = ["ProgressBar", "StageProgress"]


@dataclass(slots=True, eq=False)
class StageProgress:
    """Task counts of one stage (a set of tasks submitted together)."""

    stage_id: int
    name: str
    total: int
    finished: int = 0
    running: int = 0
    done: bool = False


class ProgressBar:
    """Tracks stages and, when active, redraws a status line on ``stream`` from a daemon thread."""

    def __init__(self, enabled: bool = True, stream: TextIO | None = None,
                 min_duration: float = 1.0, interval: float = 0.2, width: int = 80) -> None:
        self.stream = stream if stream is not None else sys.stderr
        self.enabled = enabled and _is_tty(self.stream)
        self.min_duration = min_duration
        self.interval = interval
        self.width = width
        self._stages: list[StageProgress] = []
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._t0 = 0.0
        self._drawn = False
        self._depth = 0

    # -- stage tracking (always on: cheap) ------------------------------------------------------
    def stage(self, name: str, total: int) -> StageProgress:
        with self._lock:
            s = StageProgress(len(self._stages), name, total)
            self._stages.append(s)
            return s

    def task_started(self, s: StageProgress) -> None:
        with self._lock:
            s.running += 1

    def task_finished(self, s: StageProgress) -> None:
        with self._lock:
            s.running -= 1
            s.finished += 1

    def stage_done(self, s: StageProgress) -> None:
        with self._lock:
            s.done = True

    @property
    def stages(self) -> list[StageProgress]:
        return list(self._stages)

    # -- display ---------------------------------------------------------------------------------
    def __enter__(self) -> "ProgressBar":
        self._depth += 1
        if self._depth == 1 and self.enabled:
            self._t0 = time.monotonic()
            self._stop.clear()
            self._thread = threading.Thread(target=self._loop, name="ember-progress", daemon=True)
            self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._depth -= 1
        if self._depth == 0 and self._thread is not None:
            self._stop.set()
            self._thread.join()
            self._thread = None
            if self._drawn:
                self._write("\r" + " " * self.width + "\r")
                self._drawn = False

    def _loop(self) -> None:
        if self._stop.wait(self.min_duration):
            return
        while not self._stop.is_set():
            self._write("\r" + self.render())
            self._drawn = True
            self._stop.wait(self.interval)

    def render(self) -> str:
        """The status line (the running stages; the last stage when none is running)."""
        with self._lock:
            active = [s for s in self._stages if not s.done] or self._stages[-1:]
            parts = [(s.stage_id, s.total, s.finished, s.running) for s in active]
        if not parts:
            return ""
        bar_w = max(10, (self.width - 4) // len(parts) - 24)
        out = []
        for sid, total, fin, run in parts:
            filled = bar_w * fin // max(1, total)
            bar = "=" * filled + (">" if filled < bar_w else "") + " " * max(0, bar_w - filled - 1)
            out.append(f"[Stage {sid}:{bar}({fin} + {run}) / {total}]")
        return "".join(out)[: self.width]

    def _write(self, text: str) -> None:
        try:
            self.stream.write(text)
            self.stream.flush()
        except (OSError, ValueError):  # closed stream: progress is best effort
            pass


def _is_tty(stream: TextIO) -> bool:
    try:
        return bool(stream.isatty())
    except (AttributeError, ValueError):
        return False
