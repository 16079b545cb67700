"""The commit protocol of file writes: a write is all or nothing, also when the writing process is
killed (SIGKILL) at any point.

Tasks write into a hidden staging directory; the commit moves the files into place.  Spark's
readers skip names starting with ``.`` or ``_``, so staging never shows in a listing.

- **New target** (the directory does not exist): tasks write into
  ``<parent>/.<name>.ember-staging-<job>/data``; the commit renames ``data`` to ``<target>``
  (one atomic ``rename``).  Before it, the target does not exist; after it, it holds everything.
- **Existing target**: tasks write into ``<target>/.ember-staging-<job>/data``.  The commit
  point is the atomic rename of a journal, ``<staging>/journal``, listing the files to delete
  (an overwrite's old files: all of them, those under the static partition prefix, or, with
  dynamic partition overwrite, those under the partition directories the job wrote) and the new
  files to move in.  Rolling forward deletes the old files, moves the new ones, writes
  ``_SUCCESS`` and removes the staging directory; each step can run again (a missing old file is
  already deleted, a missing staged file already moved), so an interrupted roll-forward is
  finished by the next one.

While a job runs, its process holds an exclusive ``flock`` on ``<staging>/.lock`` (released by
the kernel when the process dies, however it dies).  :func:`recover` -- which every Ember read
and write of a directory runs first -- looks for staging directories whose lock it can take:
their writer is dead, so it rolls forward one with a journal and deletes one without (and a dead
new-target staging directory beside the target).  Ember's readers therefore see either the old
or the new files.  (Spark's own readers do not run the recovery: a process killed in the middle
of a roll-forward shows them a mix until Ember next touches the directory.)
"""

from __future__ import annotations

import errno
import fcntl
import json
import os
import shutil
import uuid
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import IO

from ember.errors import AnalysisError

__all__ = ["FileCommit", "recover", "run_write_job", "STAGING_PREFIX", "SUCCESS_FILE",
           "JobOutcome"]

STAGING_PREFIX = ".ember-staging-"
#: a staging directory while its lock is taken (left alone by recovery)
_SETUP_PREFIX = ".ember-setup-"
SUCCESS_FILE = "_SUCCESS"
_JOURNAL = "journal"
_LOCK = ".lock"
_DATA = "data"

#: A point the protocol reports to a test hook (:func:`set_crash_hook`) before each step.
_crash_hook: Callable[[str], None] | None = None


def set_crash_hook(hook: Callable[[str], None] | None) -> None:
    """Test hook: ``hook(step)`` runs before each step of a commit (the kill test's points)."""
    global _crash_hook
    _crash_hook = hook


def _step(name: str) -> None:
    if _crash_hook is not None:
        _crash_hook(name)


def _try_lock(path: str) -> IO[bytes] | None:
    """The open, exclusively locked file ``path``; None when another process holds it."""
    try:
        f = open(path, "a+b")
    except FileNotFoundError:
        return None
    try:
        fcntl.flock(f.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError as e:
        f.close()
        if e.errno in (errno.EAGAIN, errno.EACCES, errno.EWOULDBLOCK):
            return None
        raise
    return f


def _sibling_prefix(target: str) -> str:
    return f".{os.path.basename(target)}{STAGING_PREFIX}"


def recover(target: str) -> None:
    """Finish or undo the writes to ``target`` whose process died (see the module docstring);
    writes still running are left alone."""
    target = os.path.abspath(target)
    parent = os.path.dirname(target)
    prefix = _sibling_prefix(target)
    if os.path.isdir(parent):
        for name in os.listdir(parent):
            if name.startswith(prefix.replace(STAGING_PREFIX, _SETUP_PREFIX)):
                _drop_dead_setup(os.path.join(parent, name))
            if name.startswith(prefix):
                staging = os.path.join(parent, name)
                lock = _try_lock(os.path.join(staging, _LOCK))
                if lock is not None or not os.path.exists(os.path.join(staging, _LOCK)):
                    shutil.rmtree(staging, ignore_errors=True)
                    if lock is not None:
                        lock.close()
    if not os.path.isdir(target):
        return
    for name in os.listdir(target):
        if name.startswith(_SETUP_PREFIX):
            _drop_dead_setup(os.path.join(target, name))
        if not name.startswith(STAGING_PREFIX):
            continue
        staging = os.path.join(target, name)
        lock = _try_lock(os.path.join(staging, _LOCK))
        if lock is None and os.path.exists(os.path.join(staging, _LOCK)):
            continue  # a live writer
        try:
            journal = os.path.join(staging, _JOURNAL)
            if os.path.exists(journal):
                with open(journal, encoding="utf-8") as f:
                    entries = json.load(f)
                _roll_forward(target, staging, entries)
            else:
                shutil.rmtree(staging, ignore_errors=True)
        finally:
            if lock is not None:
                lock.close()


def _drop_dead_setup(path: str) -> None:
    """Delete a job's directory killed during setup (its lock file made, the lock free); one
    without a lock file may be a job setting up now: left alone."""
    if not os.path.exists(os.path.join(path, _LOCK)):
        return
    lock = _try_lock(os.path.join(path, _LOCK))
    if lock is not None:
        shutil.rmtree(path, ignore_errors=True)
        lock.close()


def _visible_files(root: str, under: str = "") -> list[str]:
    """Every file below ``root/under`` (relative to ``root``), staging directories excepted."""
    out: list[str] = []
    start = os.path.join(root, under) if under else root
    if not os.path.isdir(start):
        return out
    for dirpath, dirs, files in os.walk(start):
        if dirpath == root:
            dirs[:] = [d for d in dirs if not d.startswith((STAGING_PREFIX, _SETUP_PREFIX))]
        rel = os.path.relpath(dirpath, root)
        for f in files:
            out.append(f if rel == "." else os.path.join(rel, f))
    return sorted(out)


def _data_files(root: str) -> list[str]:
    """The files a job staged (Spark's ``_SUCCESS`` and hidden ``.crc`` files left out)."""
    out = []
    for rel in _visible_files(root):
        base = os.path.basename(rel)
        if base == SUCCESS_FILE or base.startswith("."):
            continue
        out.append(rel)
    return out


def _remove_empty_dirs(target: str, rels: Iterable[str]) -> None:
    dirs = sorted({os.path.dirname(r) for r in rels if os.path.dirname(r)},
                  key=lambda d: -d.count(os.sep))
    for d in dirs:
        path = os.path.join(target, d)
        while path != target and os.path.isdir(path):
            try:
                os.rmdir(path)
            except OSError:
                break
            path = os.path.dirname(path)


def _roll_forward(target: str, staging: str, entries: dict) -> None:
    data = os.path.join(staging, _DATA)
    for i, rel in enumerate(entries["delete"]):
        _step("delete" if i == 0 else "deleting")
        try:
            os.unlink(os.path.join(target, rel))
        except FileNotFoundError:
            pass
    _remove_empty_dirs(target, entries["delete"])
    for i, rel in enumerate(entries["move"]):
        _step("move" if i == 0 else "moving")
        src = os.path.join(data, rel)
        if not os.path.exists(src):
            continue
        dst = os.path.join(target, rel)
        os.makedirs(os.path.dirname(dst), exist_ok=True)
        os.replace(src, dst)
    _step("success")
    with open(os.path.join(target, SUCCESS_FILE), "wb"):
        pass
    _step("cleanup")
    shutil.rmtree(staging, ignore_errors=True)


@dataclass
class JobOutcome:
    """What a committed job wrote: files (relative to the target) and rows (None: not counted,
    when Spark's writer wrote them)."""

    files: list[str]
    num_rows: int | None


class FileCommit:
    """One write job's staging directory and commit (see the module docstring).

    >>> job = FileCommit("/tmp/out")                              # doctest: +SKIP
    >>> write_tasks_into(job.setup())                            # doctest: +SKIP
    >>> job.commit(delete=job.old_files(overwrite=True))         # doctest: +SKIP
    """

    def __init__(self, target: str, job_id: str | None = None) -> None:
        self.target = os.path.abspath(target)
        self.job_id = job_id or str(uuid.uuid4())
        self.new_target = not os.path.exists(self.target)
        if self.new_target:
            self.staging = os.path.join(os.path.dirname(self.target),
                                        _sibling_prefix(self.target) + self.job_id)
        else:
            self.staging = os.path.join(self.target, STAGING_PREFIX + self.job_id)
        self._lock: IO[bytes] | None = None

    @property
    def data_dir(self) -> str:
        """Where the tasks write (the layout the target gets)."""
        return os.path.join(self.staging, _DATA)

    def setup(self) -> str:
        """Create the staging directory, holding its lock; returns :attr:`data_dir`.  It is
        made under a name :func:`recover` never touches and renamed once its lock is held, so
        a recovery running meanwhile cannot take a live job's directory for a dead one."""
        if self.new_target:
            os.makedirs(os.path.dirname(self.target), exist_ok=True)
        pending = os.path.join(os.path.dirname(self.staging), os.path.basename(
            self.staging).replace(STAGING_PREFIX, _SETUP_PREFIX))
        os.makedirs(pending)
        self._lock = _try_lock(os.path.join(pending, _LOCK))
        os.rename(pending, self.staging)
        _step("setup")
        return self.data_dir

    def staged_files(self) -> list[str]:
        return _data_files(self.data_dir)

    def old_files(self, prefix: str = "", directories: Iterable[str] | None = None) -> list[str]:
        """The target's files an overwrite replaces: all of them under ``prefix`` (a static
        partition path, '' for all), or only those in ``directories`` (dynamic overwrite)."""
        if self.new_target:
            return []
        if directories is None:
            return _visible_files(self.target, prefix)
        out: list[str] = []
        for d in sorted(set(directories)):
            out.extend(_visible_files(self.target, d))
        return out

    def commit(self, delete: list[str]) -> list[str]:
        """Make the staged files the target's (deleting ``delete`` first); returns the files
        moved in."""
        files = self.staged_files()
        if self.new_target:
            data = self.data_dir
            if not os.path.isdir(data):
                os.makedirs(data)
            with open(os.path.join(data, SUCCESS_FILE), "wb"):
                pass
            _step("rename")
            os.rename(data, self.target)
            _step("cleanup")
            self._release()
            shutil.rmtree(self.staging, ignore_errors=True)
            return files
        entries = {"delete": delete, "move": files}
        tmp = os.path.join(self.staging, _JOURNAL + ".tmp")
        _step("journal")
        with open(tmp, "w", encoding="utf-8") as f:
            json.dump(entries, f)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, os.path.join(self.staging, _JOURNAL))  # the commit point
        _roll_forward(self.target, self.staging, entries)
        self._release()
        return files

    def abort(self) -> None:
        """Drop everything the job staged."""
        shutil.rmtree(self.staging, ignore_errors=True)
        self._release()

    def _release(self) -> None:
        if self._lock is not None:
            self._lock.close()
            self._lock = None


def run_write_job(target: str, mode: str, write: Callable[[str, str], int | None], *,
                  static_prefix: str = "", dynamic_overwrite: bool = False,
                  if_partition_not_exists: bool = False,
                  job_id: str | None = None) -> JobOutcome | None:
    """Spark's ``InsertIntoHadoopFsRelationCommand.run`` for a local directory: recover
    ``target``, apply the save ``mode`` (``ErrorIfExists`` / ``Append`` / ``Overwrite`` /
    ``Ignore``), run ``write(directory, job_id)`` (the tasks; it returns the rows written), commit.  None when nothing was
    written (``Ignore`` on an existing path; ``if_partition_not_exists`` -- ``INSERT OVERWRITE
    ... PARTITION (...) IF NOT EXISTS`` -- when the static partition ``static_prefix`` exists)."""
    recover(target)
    exists = os.path.exists(target)
    if if_partition_not_exists and static_prefix and os.path.isdir(
            os.path.join(target, static_prefix)):
        return None
    if exists and mode == "ErrorIfExists":
        raise AnalysisError(f"[PATH_ALREADY_EXISTS] Path {_qualified(target)} already exists. "
                            "Set mode as \"overwrite\" to overwrite the existing path.",
                            error_class="PATH_ALREADY_EXISTS",
                            parameters={"outputPath": _qualified(target)})
    if exists and mode == "Ignore":
        return None
    if exists and not os.path.isdir(target):
        raise AnalysisError(f"Path {_qualified(target)} is not a directory.",
                            error_class="PATH_ALREADY_EXISTS",
                            parameters={"outputPath": _qualified(target)})
    job = FileCommit(target, job_id)
    directory = job.setup()
    try:
        rows = write(directory, job.job_id)
        staged = job.staged_files()
        if mode != "Overwrite":
            delete: list[str] = []
        elif dynamic_overwrite:
            delete = job.old_files(directories={os.path.dirname(f) for f in staged})
        else:
            delete = job.old_files(prefix=static_prefix)
        files = job.commit(delete)
    except BaseException:
        job.abort()
        raise
    return JobOutcome(files, rows)


def _qualified(path: str) -> str:
    return "file:" + os.path.abspath(path)
