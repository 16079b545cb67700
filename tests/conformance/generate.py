"""Generate the conformance goldens from the PySpark oracle.

Usage (from the repository root)::

    python tools/generate_goldens.py              # every input file
    python tools/generate_goldens.py count.sql    # only files whose path contains "count.sql"
    python -m tests.conformance.generate          # same as the first line
    python -m pytest tests/conformance --regenerate-goldens   # regenerate, then run the suite

For each input file under :func:`~tests.conformance.sqlfile.input_roots` (Spark's copies, Ember's
own ``tests/conformance/inputs``, and any root in ``$EMBER_CONFORMANCE_INPUTS``), and for each of its
configuration sets (``--SET`` line x ``--CONFIG_DIM`` product), the statements run in order in a
fresh ``spark.newSession()`` (own SQL conf and temp views) after ``SET k=v`` for the config set.
Every statement's outcome is recorded: the result schema (``[name, simpleString]`` per field), the
rows in normal form (see :mod:`tests.conformance.normalize`; sorted unless Spark's test suite would
compare them in order), whether it is a command, or the error class/SQLSTATE/parameters/message.
The runs of all config sets must agree; if one does not, the statement keeps one result per
config set (``results_by_config``) and the generator prints a warning.

Output: ``tests/conformance/golden/<relative path>.json`` (checked in).
"""

from __future__ import annotations

import json
import re
import sys
import time
from pathlib import Path
from typing import Any

from tests.conformance.normalize import as_text_columns, normalize_table, rows_equal, sorted_rows
from tests.conformance.sqlfile import SqlTestFile, all_input_files, input_roots, parse_sql_file

GOLDEN_ROOT = Path(__file__).resolve().parent / "golden"

#: Logical plan nodes after which Spark's golden suite no longer trusts the row order.
_UNSORTING = {"Join", "Aggregate", "Generate", "Sample", "Distinct"}
#: Nodes PhysicalOperation looks through when looking for a top-level Sort.
_PASS_THROUGH = {"Project", "Filter", "ResolvedHint"}


def golden_path(name: str) -> Path:
    """Golden file for input file ``name`` (relative path, e.g. ``count.sql``)."""
    return GOLDEN_ROOT / f"{name}.json"


def _children(plan: Any) -> list[Any]:
    seq = plan.children()
    return [seq.apply(i) for i in range(seq.size())]


def _simple_name(plan: Any) -> str:
    return plan.getClass().getSimpleName()


def is_semantically_sorted(plan: Any) -> bool:
    """``SQLQueryTestHelper.isSemanticallySorted`` over a JVM analyzed plan (via py4j)."""
    name = _simple_name(plan)
    if name in _UNSORTING:
        return False
    if name.startswith("Describe"):
        return True
    node = plan
    while _simple_name(node) in _PASS_THROUGH:
        if _simple_name(node) != "ResolvedHint":
            exprs = node.expressions()
            if not all(exprs.apply(i).deterministic() for i in range(exprs.size())):
                break
        node = _children(node)[0]
    if _simple_name(node) == "Sort" and getattr(node, "global")():
        return True
    return any(is_semantically_sorted(c) for c in _children(plan))


def _is_command(session: Any, plan: Any) -> bool:
    jvm = session.sparkContext._jvm
    cls = jvm.java.lang.Class.forName(
        "org.apache.spark.sql.catalyst.plans.logical.Command", True,
        jvm.java.lang.Thread.currentThread().getContextClassLoader())
    return bool(cls.isInstance(plan)) or _simple_name(plan) == "CommandResult"


def run_statement(session: Any, sql: str) -> dict[str, Any]:
    """Run one statement on Spark and describe its outcome in golden form."""
    from pyspark.errors import PySparkException

    try:
        df = session.sql(sql)
        analyzed = df._jdf.queryExecution().analyzed()
        command = _is_command(session, analyzed)
        ordered = (not command) and is_semantically_sorted(analyzed)
        schema = [[f.name, f.dataType.simpleString()] for f in df.schema.fields]
        if schema:
            rows = normalize_table(as_text_columns(df, [t for _, t in schema]).toArrow())
        else:
            rows = [[] for _ in df.collect()]
    except PySparkException as e:
        return {"command": False, "error": _error_record(e)}
    except Exception as e:  # noqa: BLE001 - a JVM error PySpark does not convert
        record = _java_error_record(e) if type(e).__name__ == "Py4JJavaError" else None
        if record is None:
            raise
        return {"command": False, "error": record}
    return {
        "command": command,
        "ordered": ordered,
        "schema": schema,
        "rows": rows if ordered else sorted_rows(rows),
    }


def _error_record(e: Any) -> dict[str, Any]:
    message = str(e).split("\n\nJVM stacktrace:")[0].strip()
    params = e.getMessageParameters() or {}
    return {
        "error_class": e.getCondition(),
        "sqlstate": e.getSqlState(),
        "message_parameters": dict(sorted(params.items())),
        "message": message,
    }


def _java_error_record(e: Any) -> dict[str, Any] | None:
    """A JVM exception with an error class that PySpark leaves unconverted (e.g.
    ``SparkClassNotFoundException`` for DATA_SOURCE_NOT_FOUND): its class and SQLSTATE from its
    message. None for any other JVM error (a wrapped run-time error is the caller's to take)."""
    message = str(e.java_exception.getMessage())
    m = re.match(r"\[([A-Z_.]+)\] (.*?)(?: SQLSTATE: (\w+))?$", message, re.S)
    if m is None:
        return None
    return {
        "error_class": m.group(1),
        "sqlstate": m.group(3),
        "message_parameters": {},
        "message": message,
    }


def _same_outcome(a: dict[str, Any], b: dict[str, Any]) -> bool:
    if ("error" in a) != ("error" in b):
        return False
    if "error" in a:
        return a["error"]["error_class"] == b["error"]["error_class"]
    return (a["schema"] == b["schema"] and a["ordered"] == b["ordered"]
            and rows_equal(a["rows"], b["rows"], ordered=a["ordered"]))


def run_file(spark: Any, tf: SqlTestFile, log=print) -> dict[str, Any]:
    """All config-set runs of one file, merged into its golden document."""
    from tests.spark_session import drop_all_views

    configs = tf.config_sets()
    runs: list[list[dict[str, Any]]] = []
    for config in configs:
        session = spark.newSession()
        for k, v in config:
            session.sql(f"set {k}={v}")
        try:
            runs.append([run_statement(session, sql) for sql in tf.statements])
        finally:
            drop_all_views(session)
    statements = []
    for i, sql in enumerate(tf.statements):
        outcomes = [run[i] for run in runs]
        entry: dict[str, Any] = {"index": i, "sql": sql, **outcomes[0]}
        if not all(_same_outcome(outcomes[0], o) for o in outcomes[1:]):
            log(f"  WARNING {tf.name} statement {i}: config sets disagree; storing one result per set")
            entry["results_by_config"] = outcomes
        statements.append(entry)
    return {
        "file": tf.name,
        "source_sha256": tf.sha256,
        "spark_version": spark.version,
        "config_sets": [[list(kv) for kv in c] for c in configs],
        "statements": statements,
    }


def write_golden(doc: dict[str, Any]) -> Path:
    path = golden_path(doc["file"])
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(doc, indent=1, ensure_ascii=False) + "\n")
    return path


def generate_all(spark: Any, filters: list[str] | None = None, log=print) -> dict[str, int]:
    """Regenerate the goldens of every input file (or those whose path contains a filter)."""
    counts: dict[str, int] = {}
    for root, path in all_input_files():
        tf = parse_sql_file(path, root)
        if filters and not any(f in tf.name for f in filters):
            continue
        if tf.only_if is not None and "spark" not in tf.only_if:
            log(f"skip {tf.name} (ONLY_IF {','.join(tf.only_if)})")
            continue
        t0 = time.perf_counter()
        doc = run_file(spark, tf, log=log)
        write_golden(doc)
        n_err = sum(1 for s in doc["statements"] if "error" in s)
        counts[tf.name] = len(doc["statements"])
        log(f"{tf.name}: {len(doc['statements'])} statements ({n_err} errors) x "
            f"{len(doc['config_sets'])} config sets in {time.perf_counter() - t0:.1f}s")
    return counts


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    from tests.spark_session import get_spark

    t0 = time.perf_counter()
    spark = get_spark()
    t1 = time.perf_counter()
    print(f"SparkSession {spark.version} started in {t1 - t0:.1f}s")
    counts = generate_all(spark, argv or None)
    print(f"{sum(counts.values())} statements in {len(counts)} files; generation took "
          f"{time.perf_counter() - t1:.1f}s (+{t1 - t0:.1f}s Spark start-up); "
          f"inputs: {', '.join(map(str, input_roots()))}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
