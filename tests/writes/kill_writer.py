"""The kill test's driver, run as its own process (``python -m tests.writes.kill_writer DIR N
SEED``): it imports Ember once, then for each of N rounds forks a writer that overwrites DIR
and kills it with SIGKILL -- after a random delay, or at a random step of the commit protocol
(``ember.execution.file_commit.set_crash_hook``) -- and forks a reader that reads DIR back with
Ember's reader.  The rows read must be exactly the rows before the write or exactly the rows
after it, every time.  Prints one JSON line: ``{"rounds": N, "old": a, "new": b}`` (which state
each round saw), or exits 1 naming the round that saw neither.

The directory is partitioned by ``k``; a write is one of: a full overwrite (every partition,
``partitionOverwriteMode`` STATIC), a dynamic overwrite of some partitions, an append.  Each
write stamps its rows with a fresh version number, so a read tells which write each row came
from.  Children are forked (the driver never runs a query itself, so it forks a single-threaded
process).
"""

from __future__ import annotations

import json
import os
import random
import signal
import sys
import time
from collections import Counter

ROWS = 40  # rows per partition per write
STEPS = ("setup", "journal", "delete", "deleting", "move", "moving", "success", "cleanup",
         "rename")


def _write(path: str, kind: str, parts: list[int], version: int, crash_step: str | None,
           crash_skip: int) -> None:
    import ember
    from ember.execution import file_commit

    if crash_step is not None:
        seen = Counter()

        def hook(step: str) -> None:
            seen[step] += 1
            if step == crash_step and seen[step] > crash_skip:
                os.kill(os.getpid(), signal.SIGKILL)

        file_commit.set_crash_hook(hook)
    session = ember.Session()
    if kind == "dynamic":
        session.conf.set("spark.sql.sources.partitionOverwriteMode", "DYNAMIC")
    values = ", ".join(f"({k}, {version}, {i})" for k in parts for i in range(ROWS))
    df = session.sql(f"SELECT * FROM VALUES {values} AS t(k, v, i) DISTRIBUTE BY i")
    mode = "append" if kind == "append" else "overwrite"
    df.write.mode(mode).partitionBy("k").option("maxRecordsPerFile", 7).parquet(path)


def _read(path: str) -> dict[str, int]:
    import ember

    if not os.path.exists(path):
        return {}
    rows = ember.Session().read.parquet(path).collect()
    return dict(Counter(f"{r.k}:{r.v}" for r in rows))


def _fork(fn, *args) -> int:
    pid = os.fork()
    if pid == 0:
        code = 0
        try:
            fn(*args)
        except BaseException:  # noqa: BLE001 - report and exit the child
            import traceback

            traceback.print_exc()
            code = 2
        os._exit(code)
    return pid


def _wait(pid: int) -> None:
    """Wait for a writer: killed or exited cleanly; an error in it fails the run."""
    _, status = os.waitpid(pid, 0)
    if os.WIFEXITED(status) and os.WEXITSTATUS(status) != 0:
        raise SystemExit(f"a writer failed (exit status {os.WEXITSTATUS(status)})")


def _read_in_child(path: str) -> dict[str, int]:
    r, w = os.pipe()

    def child() -> None:
        os.close(r)
        with os.fdopen(w, "w") as out:
            out.write(json.dumps(_read(path)))

    pid = _fork(child)
    os.close(w)
    with os.fdopen(r) as f:
        text = f.read()
    _, status = os.waitpid(pid, 0)
    if status != 0:
        raise SystemExit(f"the reader failed (status {status})")
    return json.loads(text)


def _after(state: dict[str, int], kind: str, parts: list[int], version: int) -> dict[str, int]:
    """The rows a completed write leaves (``k:v`` -> rows)."""
    new = {f"{k}:{version}": ROWS for k in parts}
    if kind == "full":
        return new
    if kind == "dynamic":
        kept = {key: n for key, n in state.items() if int(key.split(":")[0]) not in parts}
        return {**kept, **new}
    return {**state, **new}


def main(path: str, rounds: int, seed: int) -> None:
    # imported before the first fork so that each child starts with Ember loaded
    import ember  # noqa: F401
    import ember.readers  # noqa: F401

    rng = random.Random(seed)
    _wait(_fork(_write, path, "full", [0, 1, 2, 3], 0, None, 0))
    state = _read_in_child(path)
    # how long an uninterrupted write takes: the random delays span it
    t0 = time.perf_counter()
    _wait(_fork(_write, path, "full", [0, 1, 2, 3], 1, None, 0))
    span = time.perf_counter() - t0
    state = _read_in_child(path)
    seen = Counter()
    for n in range(rounds):
        version = n + 2
        kind = rng.choice(("full", "dynamic", "append"))
        parts = sorted(rng.sample(range(6), rng.randint(1, 4)))
        step, skip = (rng.choice(STEPS), rng.randint(0, 3)) if rng.random() < 0.5 else (None, 0)
        pid = _fork(_write, path, kind, parts, version, step, skip)
        if step is None:
            time.sleep(rng.uniform(0, span * 1.1))
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        _wait(pid)
        got = _read_in_child(path)
        after = _after(state, kind, parts, version)
        if got == state:
            seen["old"] += 1
        elif got == after:
            seen["new"] += 1
            state = after
        else:
            print(json.dumps({"round": n, "kind": kind, "parts": parts, "step": step,
                              "old": state, "new": after, "read": got}))
            sys.exit(1)
    print(json.dumps({"rounds": rounds, **seen}))


if __name__ == "__main__":
    main(sys.argv[1], int(sys.argv[2]), int(sys.argv[3]))
