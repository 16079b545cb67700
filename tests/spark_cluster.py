"""A real Spark standalone cluster on loopback, for tests that need executors in other processes.

``local[N]`` runs every task inside the driver JVM; a standalone cluster runs them in executor JVMs
started by a Worker, each with its own Python workers. This module starts such a cluster from the
scripts bundled with the pip ``pyspark`` package (``pyspark/bin/spark-class``; the pip package has
no ``sbin/start-master.sh``): one Master and one Worker (2 cores, 2g), each a separate JVM in its
own process group, bound to 127.0.0.1 only, logs and work dirs in a temporary directory.

Only one SparkContext may exist per Python process, and the test suite already owns one (the
``local[2]`` oracle of :mod:`tests.spark_session`). So the driver of a cluster-backed session runs
in a fresh interpreter: :func:`run_on_cluster` starts a cluster, runs a script (text) with
``sys.executable`` and ``MASTER_URL`` in its environment, and returns the finished process.

Example::

    from tests.spark_cluster import run_on_cluster
    proc = run_on_cluster('''
    import os
    from tests.spark_cluster import cluster_session
    spark = cluster_session(os.environ["MASTER_URL"], "demo")
    print(spark.range(10).count())
    spark.stop()
    ''')
    assert proc.stdout.strip().splitlines()[-1] == "10"

    with StandaloneCluster() as cluster:   # several scripts against one cluster
        cluster.run_script(script_a)
        cluster.run_script(script_b)
"""

from __future__ import annotations

import atexit
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import textwrap
import time
import urllib.request
from pathlib import Path
from typing import IO, Any

#: Repository root (the parent of ``tests/``): put on ``PYTHONPATH`` of driver scripts so they can
#: ``from tests.spark_cluster import cluster_session``.
REPO_ROOT = Path(__file__).resolve().parent.parent

#: JVM options of Master and Worker (small daemons, fast start-up).
DAEMON_JAVA_OPTS = "-XX:+UseSerialGC -XX:TieredStopAtLevel=1"

#: Configuration of a cluster-backed session (see :func:`cluster_session`).
CLUSTER_SESSION_CONF: dict[str, str] = {
    "spark.ui.enabled": "false",
    "spark.ui.showConsoleProgress": "false",
    "spark.sql.shuffle.partitions": "2",
    "spark.sql.session.timeZone": "UTC",
    "spark.executor.memory": "1g",
    "spark.cores.max": "2",
    "spark.driver.host": "127.0.0.1",
    "spark.driver.bindAddress": "127.0.0.1",
    # small, short-lived JVMs: C1 only and the serial GC start (and finish) noticeably faster
    "spark.driver.extraJavaOptions": DAEMON_JAVA_OPTS,
    "spark.executor.extraJavaOptions": DAEMON_JAVA_OPTS,
}


class ClusterError(RuntimeError):
    """The cluster did not come up (or a daemon died); the message holds the tail of both logs."""


def pyspark_home() -> Path:
    """The directory of the installed ``pyspark`` package (it doubles as ``SPARK_HOME``)."""
    import importlib.util

    spec = importlib.util.find_spec("pyspark")
    if spec is None or spec.origin is None:
        raise ClusterError("pyspark is not installed in this interpreter")
    return Path(spec.origin).resolve().parent


def java_home() -> str | None:
    """``JAVA_HOME`` if set, else derived from the ``java`` on ``PATH`` (None if there is none)."""
    if os.environ.get("JAVA_HOME"):
        return os.environ["JAVA_HOME"]
    java = shutil.which("java")
    if java is None:
        return None
    return str(Path(java).resolve().parent.parent)


def free_port() -> int:
    """A TCP port on 127.0.0.1 that was free a moment ago."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def spark_env(work_dir: Path | None = None) -> dict[str, str]:
    """The environment for spark-class daemons and for driver scripts.

    ``SPARK_HOME`` = the pyspark package, ``JAVA_HOME`` derived from ``java`` if unset,
    ``SPARK_LOCAL_IP`` / ``SPARK_LOCAL_HOSTNAME`` = loopback, ``PYSPARK_PYTHON`` /
    ``PYSPARK_DRIVER_PYTHON`` = this interpreter, and (with ``work_dir``) an empty
    ``SPARK_CONF_DIR`` (no stray ``spark-env.sh`` / ``spark-defaults.conf``) plus
    ``SPARK_LOG_DIR`` / ``SPARK_WORKER_DIR`` / ``SPARK_PID_DIR`` under it. Variables that would
    point Spark elsewhere (``SPARK_MASTER_*``, ``PYSPARK_SUBMIT_ARGS``, ``PYSPARK_GATEWAY_*``,
    Hadoop/YARN conf) are removed.
    """
    env = dict(os.environ)
    for key in list(env):
        if key.startswith(("SPARK_MASTER", "SPARK_WORKER", "SPARK_DAEMON", "SPARK_ENV")) or key in (
            "PYSPARK_SUBMIT_ARGS",
            "PYSPARK_GATEWAY_PORT",  # would attach the driver to this process's JVM
            "PYSPARK_GATEWAY_SECRET",
            "_PYSPARK_DRIVER_CONN_INFO_PATH",
            "SPARK_CONF_DIR",
            "HADOOP_CONF_DIR",
            "YARN_CONF_DIR",
            "SPARK_REMOTE",
            "SPARK_CONNECT_MODE_ENABLED",
            "MASTER",
        ):
            del env[key]
    env["SPARK_HOME"] = str(pyspark_home())
    jh = java_home()
    if jh is not None:
        env["JAVA_HOME"] = jh
    env["SPARK_LOCAL_IP"] = "127.0.0.1"
    env["SPARK_LOCAL_HOSTNAME"] = "localhost"
    env["PYSPARK_PYTHON"] = sys.executable
    env["PYSPARK_DRIVER_PYTHON"] = sys.executable
    env.setdefault("PYARROW_IGNORE_TIMEZONE", "1")
    if work_dir is not None:
        conf_dir = work_dir / "conf"
        conf_dir.mkdir(exist_ok=True)
        env["SPARK_CONF_DIR"] = str(conf_dir)
        env["SPARK_LOG_DIR"] = str(work_dir / "logs")
        env["SPARK_WORKER_DIR"] = str(work_dir / "worker")
        env["SPARK_PID_DIR"] = str(work_dir)
    return env


def _tail(path: Path, lines: int = 40) -> str:
    try:
        text = path.read_text(errors="replace")
    except OSError as e:
        return f"<cannot read {path}: {e}>"
    return "\n".join(text.splitlines()[-lines:])


def _proc_table() -> dict[int, tuple[int, int, str]]:
    """``pid -> (ppid, pgid, state)`` of every process, from ``/proc`` (empty off Linux)."""
    table: dict[int, tuple[int, int, str]] = {}
    try:
        entries = os.listdir("/proc")
    except OSError:
        return table
    for entry in entries:
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
        except (OSError, IndexError):
            continue
        table[int(entry)] = (int(fields[1]), int(fields[2]), fields[0])
    return table


def live_processes(root: int, pgid: int | None = None) -> list[int]:
    """Non-zombie processes of process group ``pgid`` (default ``root``) or descended from ``root``
    (``root=-1``: the group only).

    Descendants matter because ``pyspark.daemon`` moves itself into a process group of its own.
    Zombies are ignored: orphans are reparented to PID 1, which may reap them only a second later.
    """
    pgid = root if pgid is None else pgid
    table = _proc_table()
    children: dict[int, list[int]] = {}
    for pid, (ppid, _, _) in table.items():
        children.setdefault(ppid, []).append(pid)
    found = {pid for pid, (_, g, _) in table.items() if g == pgid}
    stack = [root]
    while stack:
        for child in children.get(stack.pop(), ()):
            if child not in found:
                found.add(child)
                stack.append(child)
    return sorted(pid for pid in found if pid in table and table[pid][2] != "Z")


def _kill_group(proc: subprocess.Popen, grace: float = 5.0) -> None:
    """Stop ``proc`` (leader of its own session) with everything it started.

    SIGTERM to its process group (JVMs run their shutdown hooks: a Worker kills its executors),
    then SIGKILL to that group and to the groups of any surviving descendant (``pyspark.daemon``
    uses its own group), and wait until none of them is alive.
    """
    own_group = os.getpgrp()
    # Once ``proc`` is reaped its pid may be reused: then follow its process group only (a pid is
    # never reused while it names a live group).
    tree = live_processes(proc.pid) if proc.poll() is None else live_processes(-1, proc.pid)
    if proc.poll() is None:
        try:
            os.killpg(proc.pid, signal.SIGTERM)
        except ProcessLookupError:
            pass
        try:
            proc.wait(timeout=grace)
        except subprocess.TimeoutExpired:
            pass
    table = _proc_table()
    groups = {proc.pid} | {table[p][1] for p in tree if p in table}
    for group in groups - {own_group, 0, 1}:
        try:
            os.killpg(group, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
    try:
        proc.wait(timeout=grace)
    except subprocess.TimeoutExpired:  # pragma: no cover - unkillable process
        pass
    deadline = time.monotonic() + grace
    while time.monotonic() < deadline:
        table = _proc_table()
        if not any(p in table and table[p][2] != "Z" for p in tree) and not live_processes(
            -1, proc.pid
        ):
            return
        time.sleep(0.05)


class StandaloneCluster:
    """A Spark standalone Master plus one Worker on 127.0.0.1 (each its own JVM and process group).

    Use as a context manager (``with StandaloneCluster() as c: c.master_url``), or call
    :meth:`start` / :meth:`stop`. :meth:`start` returns once the Worker has registered with the
    Master (``aliveworkers >= 1`` on the Master's ``/json/`` endpoint), or raises
    :class:`ClusterError` with the tail of both logs after ``start_timeout`` seconds.
    :meth:`stop` kills both process groups (executor JVMs and their Python workers included);
    it is idempotent and also runs on errors and KeyboardInterrupt inside the ``with`` block.
    Logs go to ``<work_dir>/master.log`` and ``<work_dir>/worker.log``; the temporary work dir is
    deleted on stop unless ``keep_work_dir`` is true.
    """

    def __init__(
        self,
        cores: int = 2,
        memory: str = "2g",
        start_timeout: float = 60.0,
        keep_work_dir: bool = False,
    ) -> None:
        self.cores = cores
        self.memory = memory
        self.start_timeout = start_timeout
        self.keep_work_dir = keep_work_dir
        self.work_dir: Path | None = None
        self.port: int | None = None
        self.webui_port: int | None = None
        self.master: subprocess.Popen | None = None
        self.worker: subprocess.Popen | None = None
        self._log_files: list[IO[bytes]] = []

    # ------------------------------------------------------------------ lifecycle

    @property
    def master_url(self) -> str:
        """``spark://127.0.0.1:<port>`` (only valid after :meth:`start`)."""
        if self.port is None:
            raise ClusterError("cluster not started")
        return f"spark://127.0.0.1:{self.port}"

    @property
    def master_log(self) -> Path:
        assert self.work_dir is not None
        return self.work_dir / "master.log"

    @property
    def worker_log(self) -> Path:
        assert self.work_dir is not None
        return self.work_dir / "worker.log"

    def __enter__(self) -> StandaloneCluster:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def start(self) -> StandaloneCluster:
        """Start Master and Worker and wait until the Worker is registered (see class doc)."""
        if self.master is not None:
            raise ClusterError("cluster already started")
        if java_home() is None:
            raise ClusterError("no Java found (set JAVA_HOME or put java on PATH)")
        self.work_dir = Path(tempfile.mkdtemp(prefix="ember-spark-cluster-"))
        for sub in ("logs", "worker"):
            (self.work_dir / sub).mkdir()
        try:
            self._start_daemons()
            self._wait_for_worker()
        except BaseException:
            self.stop()
            raise
        return self

    def stop(self) -> None:
        """Kill Worker (with its executors) then Master; close logs; remove the work dir."""
        for proc in (self.worker, self.master):
            if proc is not None:
                _kill_group(proc)
        for f in self._log_files:
            f.close()
        self._log_files = []
        if self.work_dir is not None and not self.keep_work_dir:
            shutil.rmtree(self.work_dir, ignore_errors=True)

    # ------------------------------------------------------------------ internals

    def _spark_class(self, args: list[str], log: Path) -> subprocess.Popen:
        assert self.work_dir is not None
        env = spark_env(self.work_dir)
        env["SPARK_DAEMON_JAVA_OPTS"] = DAEMON_JAVA_OPTS
        env["SPARK_DAEMON_MEMORY"] = "512m"
        f = open(log, "wb")  # noqa: SIM115 - closed in stop()
        self._log_files.append(f)
        return subprocess.Popen(
            [str(pyspark_home() / "bin" / "spark-class"), *args],
            env=env,
            cwd=self.work_dir,
            stdin=subprocess.DEVNULL,
            stdout=f,
            stderr=subprocess.STDOUT,
            start_new_session=True,  # own process group: killpg reaches executors and workers
        )

    def _start_daemons(self) -> None:
        assert self.work_dir is not None
        self.port, self.webui_port = free_port(), free_port()
        self.master = self._spark_class(
            [
                "org.apache.spark.deploy.master.Master",
                "--host", "127.0.0.1",
                "--port", str(self.port),
                "--webui-port", str(self.webui_port),
            ],
            self.master_log,
        )  # fmt: skip
        self.worker = self._spark_class(
            [
                "org.apache.spark.deploy.worker.Worker",
                "--host", "127.0.0.1",
                "--cores", str(self.cores),
                "--memory", self.memory,
                "--webui-port", str(free_port()),
                "--work-dir", str(self.work_dir / "worker"),
                self.master_url,
            ],
            self.worker_log,
        )  # fmt: skip

    def master_state(self) -> dict[str, Any] | None:
        """The Master's ``/json/`` state, or None while its web UI is not up."""
        try:
            with urllib.request.urlopen(
                f"http://127.0.0.1:{self.webui_port}/json/", timeout=2
            ) as r:
                return json.load(r)
        except (OSError, ValueError):
            return None

    def _wait_for_worker(self) -> None:
        assert self.master is not None and self.worker is not None
        deadline = time.monotonic() + self.start_timeout
        state: dict[str, Any] | None = None
        while time.monotonic() < deadline:
            for name, proc in (("Master", self.master), ("Worker", self.worker)):
                if proc.poll() is not None:
                    raise ClusterError(f"{name} exited with code {proc.returncode}\n" + self.logs())
            state = self.master_state()
            if state is not None and int(state.get("aliveworkers", 0)) >= 1:
                return
            time.sleep(0.2)
        raise ClusterError(
            f"worker did not register with {self.master_url} within {self.start_timeout:.0f} s "
            f"(last master state: {state})\n" + self.logs()
        )

    def logs(self, lines: int = 40) -> str:
        """The tail of the Master and Worker logs (for error messages)."""
        return (
            f"--- master log ({self.master_log}) ---\n{_tail(self.master_log, lines)}\n"
            f"--- worker log ({self.worker_log}) ---\n{_tail(self.worker_log, lines)}"
        )

    # ------------------------------------------------------------------ drivers

    def run_script(
        self, script: str, timeout: float = 120.0, check: bool = True
    ) -> subprocess.CompletedProcess[str]:
        """Run ``script`` (Python source) with ``sys.executable`` as a driver against this cluster.

        The script sees ``MASTER_URL`` and the environment of :func:`spark_env`; it runs in the
        cluster's work dir with the repository root on ``PYTHONPATH`` (so ``tests.spark_cluster``
        imports). The
        driver runs in its own process group, killed on timeout or interrupt. With ``check``, a
        non-zero exit raises :class:`ClusterError` with the script's output and the daemon logs.
        """
        assert self.work_dir is not None
        env = spark_env()
        env["MASTER_URL"] = self.master_url
        env["EMBER_CLUSTER_WORK_DIR"] = str(self.work_dir)  # cluster_session's warehouse goes here
        env["PYTHONPATH"] = os.pathsep.join(
            p for p in (str(REPO_ROOT), env.get("PYTHONPATH", "")) if p
        )
        path = Path(tempfile.mkstemp(prefix="driver-", suffix=".py", dir=self.work_dir)[1])
        path.write_text(textwrap.dedent(script))
        proc = subprocess.Popen(
            [sys.executable, str(path)],
            env=env,
            cwd=self.work_dir,  # stray files (spark-warehouse, derby.log) stay out of the repo
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            start_new_session=True,  # the driver JVM (spark-submit) is in this group too
        )
        try:
            out, err = proc.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            _kill_group(proc)
            out, err = proc.communicate()
            raise ClusterError(
                f"driver script timed out after {timeout:.0f} s\n--- stdout ---\n{out}\n"
                f"--- stderr ---\n{err[-5000:]}\n" + self.logs()
            ) from None
        except BaseException:
            _kill_group(proc)
            raise
        finally:
            _kill_group(proc)  # leftover driver JVM / python workers, if any
        result = subprocess.CompletedProcess(proc.args, proc.returncode, out, err)
        if check and result.returncode != 0:
            raise ClusterError(
                f"driver script failed with code {result.returncode}\n--- stdout ---\n{out}\n"
                f"--- stderr ---\n{err[-5000:]}\n" + self.logs()
            )
        return result


def run_on_cluster(
    script: str, timeout: float = 120.0, check: bool = True
) -> subprocess.CompletedProcess[str]:
    """Start a :class:`StandaloneCluster`, run ``script`` as a driver on it, stop the cluster.

    See :meth:`StandaloneCluster.run_script`; returns the finished process (``.stdout``).
    """
    with StandaloneCluster() as cluster:
        return cluster.run_script(script, timeout=timeout, check=check)


def cluster_session(master_url: str, app_name: str = "ember-cluster") -> Any:
    """A ``pyspark.sql.SparkSession`` against ``master_url`` (call it in a driver subprocess).

    Configured with :data:`CLUSTER_SESSION_CONF`; driver and executors use ``sys.executable``
    (``PYSPARK_PYTHON``, ``spark.pyspark.python``, ``spark.executorEnv.PYSPARK_PYTHON``).
    """
    os.environ["PYSPARK_PYTHON"] = sys.executable
    os.environ["PYSPARK_DRIVER_PYTHON"] = sys.executable
    os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
    os.environ.setdefault("PYARROW_IGNORE_TIMEZONE", "1")
    from pyspark.sql import SparkSession

    builder = SparkSession.builder.master(master_url).appName(app_name)
    for k, v in CLUSTER_SESSION_CONF.items():
        builder = builder.config(k, v)
    builder = (
        builder.config("spark.pyspark.python", sys.executable)
        .config("spark.pyspark.driver.python", sys.executable)
        .config("spark.executorEnv.PYSPARK_PYTHON", sys.executable)
        .config("spark.executorEnv.PYARROW_IGNORE_TIMEZONE", "1")
    )
    work_dir = os.environ.get("EMBER_CLUSTER_WORK_DIR")
    if work_dir:  # under run_script: removed with the cluster, even if the driver is killed
        warehouse = tempfile.mkdtemp(prefix="warehouse-", dir=work_dir)
    else:
        warehouse = tempfile.mkdtemp(prefix="ember-cluster-warehouse-")
        atexit.register(shutil.rmtree, warehouse, True)
    builder = builder.config("spark.sql.warehouse.dir", warehouse)
    spark = builder.getOrCreate()
    spark.sparkContext.setLogLevel("ERROR")
    return spark
