"""The ``ember`` command line.

::

    ember sql "SELECT 1 AS a; SELECT 2 AS b"     run statements, print results like show()
    ember run script.sql                          run every statement of a file
    ember shell                                   interactive; statements end with ';', .quit
    ember --conf spark.sql.caseSensitive=true --batch-size 1024 sql "..."
    ember --runtime spark --master local[2] run script.sql    run the plans on Apache Spark

Errors print as ``Error: [ERROR_CLASS] message`` on stderr and the exit code is 1.  EXPLAIN
prints its plan as plain text.

The shell (see ``.help``): Ctrl-C cancels the running query (or clears a half-typed
statement) and keeps the shell, Ctrl-D or ``.quit`` leaves it; ``.tables``, ``.schema
TABLE``, ``.timer on|off``, ``.mode table|csv|json|markdown``, ``.read FILE.sql``, ``.output
[FILE]``; Tab completes keywords, table names and column names (readline).
"""

from __future__ import annotations

import argparse
import csv
import io
import json
import os
import re
import sys
import time
from collections.abc import Sequence
from typing import Any, TextIO

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


_MODES = ("table", "csv", "json", "markdown")

HELP = """\
.help                      this text
.tables                    list the tables and views
.schema TABLE              the columns of TABLE
.timer on|off              print each statement's wall time
.mode table|csv|json|markdown   how results print
.read FILE.sql             run the statements of a file
.output [FILE]             send results to FILE (no FILE: back to the terminal)
.quit / .exit              leave (also Ctrl-D); Ctrl-C cancels the running query
Statements end with ';'.
"""

KEYWORDS = (
    "SELECT FROM WHERE GROUP BY ORDER HAVING LIMIT OFFSET JOIN LEFT RIGHT FULL OUTER INNER CROSS "
    "SEMI ANTI ON USING AS WITH UNION INTERSECT EXCEPT ALL DISTINCT CASE WHEN THEN ELSE END AND OR "
    "NOT NULL IS IN EXISTS BETWEEN LIKE CAST CREATE TEMPORARY TEMP VIEW TABLE DROP INSERT INTO "
    "OVERWRITE VALUES SHOW TABLES DATABASES COLUMNS DESCRIBE EXPLAIN EXTENDED ANALYZE COMPUTE "
    "STATISTICS SET USE DATABASE PARTITION PARTITIONED OVER WINDOW ROWS RANGE PRECEDING FOLLOWING "
    "CURRENT ROW UNBOUNDED ASC DESC NULLS FIRST LAST TRUE FALSE PIVOT UNPIVOT LATERAL QUALIFY"
).split()


class _Shell:
    """State of one shell: output mode, timer, output file, the session (for completion)."""

    def __init__(self, session, args: argparse.Namespace) -> None:
        self.session = session
        self.args = args
        self.mode = "table"
        self.timer = False
        self.out: TextIO = sys.stdout
        self.status = 0

    # -- statements ---------------------------------------------------------------------------
    def run_text(self, text: str) -> None:
        """Run every statement of ``text``; errors print and the next statement runs."""
        for stmt in split_statements(text):
            start = time.perf_counter()
            try:
                _run_statement(self.session, stmt, self.args, self.mode, self.out)
            except EmberError as e:
                print(f"Error: {e}", file=sys.stderr)
                self.status = 1
            except KeyboardInterrupt:
                print("Query cancelled.", file=sys.stderr)
                return
            if self.timer:
                print(f"Time: {time.perf_counter() - start:.3f} s")

    # -- dot commands -------------------------------------------------------------------------
    def command(self, line: str) -> bool:
        """Run a dot command; False when it asks to leave."""
        parts = line.split(None, 1)
        name, arg = parts[0].lower(), (parts[1].strip() if len(parts) > 1 else "")
        if name in (".quit", ".exit"):
            return False
        if name == ".help":
            print(HELP, end="", file=self.out)
        elif name == ".tables":
            for t in self.session.catalog.listTables():
                print(t.name, file=self.out)
        elif name == ".schema":
            if not arg:
                print("Usage: .schema TABLE", file=sys.stderr)
            else:
                self.run_text(f"DESCRIBE {arg}")
        elif name == ".timer":
            if arg.lower() not in ("on", "off"):
                print("Usage: .timer on|off", file=sys.stderr)
            else:
                self.timer = arg.lower() == "on"
        elif name == ".mode":
            if arg.lower() not in _MODES:
                print(f"Usage: .mode {'|'.join(_MODES)}", file=sys.stderr)
            else:
                self.mode = arg.lower()
        elif name == ".read":
            try:
                text = open(os.path.expanduser(arg), encoding="utf-8").read()
            except OSError as e:
                print(f"Error: cannot read {arg}: {e.strerror}", file=sys.stderr)
                self.status = 1
            else:
                self.run_text(text)
        elif name == ".output":
            if self.out is not sys.stdout:
                self.out.close()
            self.out = sys.stdout
            if arg:
                try:
                    self.out = open(os.path.expanduser(arg), "w", encoding="utf-8")
                except OSError as e:
                    print(f"Error: cannot write {arg}: {e.strerror}", file=sys.stderr)
        else:
            print(f"Unknown command {name}; .help lists the commands.", file=sys.stderr)
        return True

    # -- completion -----------------------------------------------------------------------------
    def candidates(self, text: str) -> list[str]:
        """Keywords, table names and column names starting with ``text`` (case-insensitive;
        keywords keep the case typed)."""
        low = text.lower()
        words = [k if text[:1].isupper() or not text else k.lower() for k in KEYWORDS]
        try:
            tables = [t.name for t in self.session.catalog.listTables()]
            columns = [c.name for t in tables for c in self.session.catalog.listColumns(t)]
        except EmberError:
            tables, columns = [], []
        seen: list[str] = []
        for w in [*tables, *columns, *words]:
            if w.lower().startswith(low) and w not in seen:
                seen.append(w)
        return seen

    def close(self) -> None:
        if self.out is not sys.stdout:
            self.out.close()


def _is_explain(text: str) -> bool:
    body = re.sub(r"^(\s|--[^\n]*\n|/\*.*?\*/)*", "", text, flags=re.S)
    return body[:7].upper() == "EXPLAIN"


def _run_statement(session, text: str, args: argparse.Namespace, mode: str = "table",
                   out: TextIO | None = None) -> None:
    """Run one statement and print its result (nothing for results without columns)."""
    out = out or sys.stdout
    df = session.sql(text)
    if not df.columns:
        return
    if _is_explain(text) and df.columns == ["plan"]:
        out.write("".join(str(r[0]) for r in df.collect()).rstrip("\n") + "\n\n")
        out.flush()
        return
    if mode == "table":
        truncate = 0 if args.no_truncate else 20
        out.write(df._show_string(args.max_rows, truncate) + "\n")
    else:
        out.write(_format(df.limit(args.max_rows).collect(), df.columns, mode))
    out.flush()


def _cell(v: Any) -> str:
    if v is None:
        return "NULL"
    if isinstance(v, bool):
        return "true" if v else "false"
    return str(v)


def _format(rows: list, columns: list[str], mode: str) -> str:
    """Rows as CSV (header line first), JSON lines or a Markdown table."""
    if mode == "csv":
        buf = io.StringIO()
        w = csv.writer(buf, lineterminator="\n")
        w.writerow(columns)
        w.writerows([["" if v is None else _cell(v) for v in r] for r in rows])
        return buf.getvalue()
    if mode == "json":
        return "".join(json.dumps(dict(zip(columns, r)), default=str) + "\n" for r in rows)
    lines = ["| " + " | ".join(columns) + " |", "|" + "|".join("---" for _ in columns) + "|"]
    lines += ["| " + " | ".join(_cell(v).replace("|", "\\|") for v in r) + " |" for r in rows]
    return "\n".join(lines) + "\n\n"


def _run_script(session, text: str, args: argparse.Namespace) -> int:
    for stmt in split_statements(text):
        try:
            _run_statement(session, stmt, args)
        except EmberError as e:
            print(f"Error: {e}", file=sys.stderr)
            return 1
    return 0


def _shell(session, args: argparse.Namespace) -> int:
    shell = _Shell(session, args)
    try:
        import readline
    except ImportError:  # pragma: no cover - e.g. Windows without pyreadline
        readline = None  # type: ignore[assignment]
    if readline is not None:
        try:
            readline.read_history_file(HISTORY_FILE)
        except OSError:
            pass
        matches: list[str] = []

        def complete(text: str, state: int) -> str | None:
            if state == 0:
                matches[:] = shell.candidates(text)
            return matches[state] if state < len(matches) else None

        readline.set_completer(complete)
        readline.set_completer_delims(" \t\n(),;.=<>+-*/'\"")
        readline.parse_and_bind("tab: complete")
    interactive = sys.stdin.isatty()
    if interactive:
        print("Ember SQL shell. Statements end with ';'. .help for commands, .quit to exit.")
    buffer: list[str] = []
    try:
        while True:
            prompt = "ember> " if not buffer else "   ...> "
            try:
                line = input(prompt if interactive else "")
            except EOFError:
                break
            except KeyboardInterrupt:  # Ctrl-C at the prompt: drop the half-typed statement
                print()
                buffer = []
                continue
            if not buffer and line.strip() in ("quit", "exit"):
                break
            if not buffer and line.strip().startswith("."):
                if not shell.command(line.strip()):
                    break
                continue
            buffer.append(line)
            text = "\n".join(buffer)
            if not text.rstrip().endswith(";"):
                continue
            buffer = []
            shell.run_text(text)
    finally:
        if readline is not None:
            try:
                readline.write_history_file(HISTORY_FILE)
            except OSError:
                pass
    if buffer and "".join(buffer).strip():
        shell.run_text("\n".join(buffer))
    shell.close()
    return shell.status


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
