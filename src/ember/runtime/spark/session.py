"""The SparkSession behind ``ember.Session(runtime="spark")``.

:func:`attach` creates a SparkSession for a master URL (``local[2]`` by default; any master
works: ``spark://host:7077``, ``yarn``, ``k8s://...``) or takes one the caller passes, and gives
Ember its own ``newSession()`` of it: Ember's ``spark.*`` settings then reach Spark
(:func:`push_conf`) without changing the caller's session.  Executors need the ember package;
with ``ember.spark.shipPackage`` (``auto``: any master but ``local``) it is zipped once per
SparkContext and shipped with ``SparkContext.addPyFile``.

A SparkSession Ember builds is quiet (:func:`_launch_quiet_jvm`): unless
``ember.spark.consoleLog`` is set, the JVM's console output (log4j's start-up lines and
warnings, the JVM's own warnings, executors' stack traces of failed tasks) goes to
``ember-spark-<pid>.log`` in the temporary directory (:func:`spark_log_path`), so a failed task
reaches the user once, as the Ember error the runtime raises on the driver.
"""

from __future__ import annotations

import os
import sys
import tempfile
import threading
import zipfile
from pathlib import Path
from typing import Any

from ember.conf import (
    SESSION_TIME_ZONE,
    SPARK_CONSOLE_LOG,
    SPARK_PYTHON_UNIX_SOCKET,
    SPARK_SHIP_PACKAGE,
    SPARK_SHOW_CONSOLE_PROGRESS,
    SPARK_STATIC_PREFIXES,
    SPARK_UI_ENABLED,
    SQLConf,
)

__all__ = ["attach", "push_conf", "ship_package", "spark_log_path", "DEFAULT_MASTER",
           "SPARK_DEFAULTS"]

DEFAULT_MASTER = "local[2]"

#: Settings Ember gives a SparkSession it builds (the caller's ``spark.*`` settings win), with
#: Ember's defaults (their docs say why).
SPARK_DEFAULTS: dict[str, str] = {
    e.key: e.string(e.default)
    for e in (SPARK_PYTHON_UNIX_SOCKET, SPARK_SHOW_CONSOLE_PROGRESS, SPARK_UI_ENABLED)}

_lock = threading.Lock()
_shipped: set[int] = set()
#: Where the JVM Ember launched writes its console output (None: Ember launched none quietly).
_log_path: str | None = None


def attach(conf: SQLConf, master: str | None = None, spark: Any = None) -> Any:
    """A SparkSession for Ember: a ``newSession()`` of ``spark``, or of the session built (or
    already running in this process) for ``master``."""
    if spark is None:
        os.environ["PYSPARK_PYTHON"] = sys.executable
        os.environ.setdefault("PYSPARK_DRIVER_PYTHON", sys.executable)
        from pyspark.sql import SparkSession

        builder = SparkSession.builder.master(master or DEFAULT_MASTER).appName("ember")
        settings = dict(SPARK_DEFAULTS)
        settings.update((k, v) for k, v in conf.items() if k.startswith("spark."))
        for k, v in settings.items():
            builder = builder.config(k, v)
        if not conf.get(SPARK_CONSOLE_LOG):
            _launch_quiet_jvm(settings, master or DEFAULT_MASTER)
        spark = builder.getOrCreate()
    session = spark.newSession()
    ship_package(session, conf)
    push_conf(session, conf)
    return session


def spark_log_path() -> str | None:
    """The file holding the console output of the JVM Ember launched quietly, if it did."""
    return _log_path


def _launch_quiet_jvm(settings: dict[str, str], master: str) -> None:
    """Start the JVM PySpark's session builder would start, with its stdout and stderr in
    ``ember-spark-<pid>.log`` (PySpark's ``launch_gateway`` takes the ``Popen`` arguments;
    ``SparkContext._ensure_initialized`` adopts the gateway, and the builder's
    ``getOrCreate`` then uses it).  Nothing to do when this process already runs a JVM."""
    global _log_path
    from pyspark import SparkConf, SparkContext
    from pyspark.java_gateway import launch_gateway

    with _lock:
        if SparkContext._gateway is not None or "PYSPARK_GATEWAY_PORT" in os.environ:
            return
        path = os.path.join(tempfile.gettempdir(), f"ember-spark-{os.getpid()}.log")
        spark_conf = SparkConf(loadDefaults=False).setMaster(master).setAppName("ember")
        spark_conf.setAll(settings.items())
        with open(path, "ab") as log:
            gateway = launch_gateway(spark_conf, popen_kwargs={"stdout": log, "stderr": log})
        SparkContext._ensure_initialized(gateway=gateway)
        _log_path = path


def push_conf(spark: Any, conf: SQLConf) -> None:
    """Give Spark's session Ember's runtime ``spark.*`` settings (and the session time zone,
    whose default differs: Ember's is UTC) -- those Spark can change at run time."""
    values = {k: v for k, v in conf.items() if k.startswith("spark.")
              and not k.startswith(SPARK_STATIC_PREFIXES)}
    values[SESSION_TIME_ZONE.key] = conf.get_string(SESSION_TIME_ZONE.key) or "UTC"
    pushed = getattr(spark, "_ember_pushed", None) or {}
    for k, v in values.items():
        if pushed.get(k) == v:
            continue
        try:
            spark.conf.set(k, v)
        except Exception:  # noqa: BLE001 - a static or unknown key stays Ember's own
            continue
        pushed[k] = v
    spark._ember_pushed = pushed


def ship_package(spark: Any, conf: SQLConf) -> None:
    """Ship the ember package to the executors (once per SparkContext) when configured."""
    sc = spark.sparkContext
    mode = conf.get(SPARK_SHIP_PACKAGE)
    master = sc.master or ""
    if mode == "false" or (mode == "auto" and master.startswith("local")):
        return
    key = id(sc._jsc)
    with _lock:
        if key in _shipped:
            return
        sc.addPyFile(str(package_zip()))
        _shipped.add(key)


def package_zip() -> Path:
    """A zip of the installed ember package: its sources, and next to each ``.py`` its
    bytecode for this interpreter (``.pyc``, unchecked-hash, which zipimport prefers: an
    executor's Python worker imports ember without compiling it, about 40% of the import; a
    worker on another Python version finds a foreign magic number and compiles the source)."""
    root = Path(__file__).resolve().parents[2]  # ember/runtime/spark/session.py -> ember
    tmp = Path(tempfile.mkdtemp(prefix="ember-pkg-"))
    out = tmp / "ember.zip"
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as z:
        for f in sorted(root.rglob("*")):
            if not f.is_file() or "__pycache__" in f.parts or f.suffix == ".pyc":
                continue
            name = Path("ember") / f.relative_to(root)
            z.write(f, name)
            if f.suffix == ".py":
                z.write(_bytecode(f, name, tmp / "code.pyc"), name.with_suffix(".pyc"))
    return out


def _bytecode(source: Path, name: Path, target: Path) -> Path:
    import py_compile

    return Path(py_compile.compile(str(source), cfile=str(target), dfile=str(name),
                                   doraise=True,
                                   invalidation_mode=py_compile.PycInvalidationMode.UNCHECKED_HASH))
