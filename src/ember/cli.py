"""The ``ember`` command line.

::

    ember sql "SELECT 1 AS a; SELECT 2 AS b"     run statements, print results like show()
    ember run script.sql                          run every statement of a file
    ember shell                                   interactive; statements end with ';', .quit
    ember --conf spark.sql.caseSensitive=true --batch-size 1024 sql "..."
    ember --runtime spark --master local[2] run script.sql    run the plans on Apache Spark

Errors print as ``Error: [ERROR_CLASS] message`` on stderr and the exit code is 1.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence

from ember.conf import BATCH_SIZE
from ember.errors import EmberError
from ember.session import Session
from ember.sql import split_statements

__all__ = ["main"]

HISTORY_FILE = os.path.join(os.path.expanduser("~"), ".ember_history")
_MAX_ROWS = 10_000


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="ember", description="Spark SQL over Apache Arrow, in-process.")
    p.add_argument("--conf", action="append", default=[], metavar="KEY=VALUE",
                   help="session configuration (repeatable), e.g. spark.sql.caseSensitive=true")
    p.add_argument("--batch-size", type=int, default=None,
                   help="rows per Arrow batch in the local runtime (ember.execution.batchSize)")
    p.add_argument("--runtime", choices=("local", "spark"), default="local",
                   help="where plans run: in process (local, default) or on a SparkSession "
                        "through PySpark (spark)")
    p.add_argument("--master", default=None, metavar="URL",
                   help="Spark master URL for --runtime spark (default local[2]; e.g. "
                        "spark://host:7077)")
    p.add_argument("--max-rows", type=int, default=_MAX_ROWS,
                   help=f"rows printed per result (default {_MAX_ROWS})")
    p.add_argument("--no-truncate", action="store_true",
                   help="print full cell values (default: truncate at 20 characters, as show())")
    sub = p.add_subparsers(dest="command", required=True)
    s = sub.add_parser("sql", help="run SQL statements given on the command line")
    s.add_argument("query", help="one or more statements separated by ';'")
    r = sub.add_parser("run", help="run every statement of a SQL file")
    r.add_argument("file", help="path of the .sql file ('-' for stdin)")
    sub.add_parser("shell", help="interactive SQL shell")
    return p


def _session(args: argparse.Namespace):  # -> ember.Session
    conf: dict[str, str] = {}
    for item in args.conf:
        if "=" not in item:
            raise SystemExit(f"ember: --conf expects KEY=VALUE, got {item!r}")
        k, v = item.split("=", 1)
        conf[k.strip()] = v.strip()
    if args.batch_size is not None:
        conf[BATCH_SIZE.key] = str(args.batch_size)
    if args.master is not None and args.runtime != "spark":
        raise SystemExit("ember: --master needs --runtime spark")
    return Session(conf, runtime=args.runtime, master=args.master)


def _run_statement(session, text: str, args: argparse.Namespace) -> None:
    """Run one statement and print its result (nothing for results without columns)."""
    df = session.sql(text)
    if not df.columns:
        return
    truncate = 0 if args.no_truncate else 20
    sys.stdout.write(df._show_string(args.max_rows, truncate) + "\n")
    sys.stdout.flush()


def _run_script(session, text: str, args: argparse.Namespace) -> int:
    for stmt in split_statements(text):
        try:
            _run_statement(session, stmt, args)
        except EmberError as e:
            print(f"Error: {e}", file=sys.stderr)
            return 1
    return 0


def _shell(session, args: argparse.Namespace) -> int:
    try:
        import readline
    except ImportError:  # pragma: no cover - e.g. Windows without pyreadline
        readline = None  # type: ignore[assignment]
    if readline is not None:
        try:
            readline.read_history_file(HISTORY_FILE)
        except OSError:
            pass
    interactive = sys.stdin.isatty()
    if interactive:
        print("Ember SQL shell. Statements end with ';'. Type .quit to exit.")
    buffer: list[str] = []
    status = 0
    try:
        while True:
            prompt = "ember> " if not buffer else "   ...> "
            try:
                line = input(prompt if interactive else "")
            except EOFError:
                break
            if not buffer and line.strip() in (".quit", ".exit", "quit", "exit"):
                break
            buffer.append(line)
            text = "\n".join(buffer)
            if not text.rstrip().endswith(";"):
                continue
            buffer = []
            for stmt in split_statements(text):
                try:
                    _run_statement(session, stmt, args)
                except EmberError as e:
                    print(f"Error: {e}", file=sys.stderr)
                    status = 1
    except KeyboardInterrupt:
        print()
    finally:
        if readline is not None:
            try:
                readline.write_history_file(HISTORY_FILE)
            except OSError:
                pass
    if buffer and "".join(buffer).strip():
        status = _run_script(session, "\n".join(buffer), args) or status
    return status


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``ember`` script; returns the process exit code."""
    args = _parser().parse_args(argv)
    try:
        session = _session(args)
    except EmberError as e:
        print(f"Error: {e}", file=sys.stderr)
        return 1
    if args.command == "sql":
        return _run_script(session, args.query, args)
    if args.command == "run":
        try:
            text = sys.stdin.read() if args.file == "-" else open(args.file, encoding="utf-8").read()
        except OSError as e:
            print(f"Error: cannot read {args.file}: {e.strerror}", file=sys.stderr)
            return 1
        return _run_script(session, text, args)
    return _shell(session, args)


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
