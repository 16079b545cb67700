"""Spark's SQL golden-test input files: header directives and statement splitting.

A faithful re-implementation of what ``SQLQueryTestSuite`` / ``SQLQueryTestHelper`` do with an
``inputs/<path>.sql`` file (independent of Ember's own parser, so a parser bug cannot hide here):

* Lines whose trimmed text starts with ``--`` (except ``--QUERY-DELIMITER...``) are comments; the
  rest is code.  Directives are read from comment lines starting exactly with them:
  ``--SET k=v,k2=v2``, ``--CONFIG_DIM<n> k=v,...``, ``--IMPORT other.sql``, ``--ONLY_IF dbms,...``.
* Code lines are joined with ``\\n`` and split with the Java regex ``(?<=[^\\\\]);`` (a ``;`` not
  preceded by a backslash, anywhere in a line); every piece is trimmed, empty pieces dropped, then
  lines starting with ``--`` removed again (a comment that trailed the previous statement's ``;``),
  and trimmed again.  Inline ``-- ...`` comments after code on the same line stay in the statement
  (Spark's parser skips them).
* ``--QUERY-DELIMITER-START`` / ``--QUERY-DELIMITER-END`` bracket one statement that may contain
  semicolons.

Config sets: Spark merges all ``--SET`` lines into one list of settings when it generates golden
files, and runs the Cartesian product of the ``--CONFIG_DIM`` dimensions (on top of the settings)
when it checks them.  Ember's goldens are computed once per ``--SET`` line (the file header
describes the lines as alternative configurations) times every ``--CONFIG_DIM`` combination, and
all runs must agree; see :func:`config_sets`.
"""

from __future__ import annotations

import hashlib
import itertools
import os
import re
from dataclasses import dataclass
from pathlib import Path

#: Where the copies of Spark's input files live.
INPUTS_ROOT = Path("/work/shared/conformance/spark-sql-tests/inputs")

#: Ember's own input files (checked in; their names start with ``ember/``).
EMBER_INPUTS_ROOT = Path(__file__).resolve().parent / "inputs"

#: Environment variable naming further input roots (``os.pathsep``-separated), e.g. copies of
#: Spark files not yet under :data:`INPUTS_ROOT`; generation reads them like the others.
EXTRA_INPUTS_ENV = "EMBER_CONFORMANCE_INPUTS"

_SPLIT_RE = re.compile(r"(?<=[^\\]);")

Config = tuple[tuple[str, str], ...]


@dataclass(frozen=True, slots=True)
class SqlTestFile:
    """One parsed input file."""

    name: str                    # path relative to the inputs root, e.g. "subquery/x/y.sql"
    statements: tuple[str, ...]
    settings: tuple[Config, ...]  # one entry per --SET line
    config_dims: tuple[tuple[Config, ...], ...]  # one tuple of alternatives per dimension
    only_if: tuple[str, ...] | None
    sha256: str

    def config_sets(self) -> tuple[Config, ...]:
        """Every configuration the file runs under (SET line x CONFIG_DIM product)."""
        return config_sets(self.settings, self.config_dims)


def _is_comment(line: str) -> bool:
    s = line.strip()
    return s.startswith("--") and not s.startswith("--QUERY-DELIMITER")


def split_comments_and_code(text: str) -> tuple[list[str], list[str]]:
    """Spark's ``splitCommentsAndCodes``: (comment lines, code lines), original text kept."""
    lines = text.split("\n")
    comments = [ln for ln in lines if _is_comment(ln)]
    code = [ln for ln in lines if not _is_comment(ln)]
    return comments, code


def _split_with_semicolon(lines: list[str]) -> list[str]:
    return _SPLIT_RE.split("\n".join(lines))


def split_statements(code: list[str]) -> list[str]:
    """Spark's ``getQueries`` applied to code lines (imports already prepended)."""
    if any(c.strip().startswith("--QUERY-DELIMITER") for c in code):
        queries: list[str] = []
        other: list[str] = []
        temp = ""
        started = False
        for c in code:
            if c.strip().startswith("--QUERY-DELIMITER-START"):
                started = True
                queries.extend(_split_with_semicolon(other))
                other = []
            elif c.strip().startswith("--QUERY-DELIMITER-END"):
                started = False
                queries.append("\n" + temp.removesuffix(";"))
                temp = ""
            elif started:
                temp += "\n" + c
            else:
                other.append(c)
        if other:
            queries.extend(_split_with_semicolon(other))
    else:
        queries = _split_with_semicolon(code)
    out = []
    for q in queries:
        q = q.strip()
        if not q:
            continue
        q = "\n".join(ln for ln in q.split("\n") if not ln.startswith("--")).strip()
        if q:
            out.append(q)
    return out


def _parse_kvs(text: str) -> Config:
    """``k=v,k2=v2`` -> ((k, v), ...); keys trimmed, values kept as written (Spark's rule)."""
    pairs = []
    for kv in text.split(","):
        key, eq, value = kv.partition("=")
        if not eq:
            raise ValueError(f"bad config directive {text!r}")
        pairs.append((key.strip(), value))
    return tuple(pairs)


def config_sets(settings: tuple[Config, ...], dims: tuple[tuple[Config, ...], ...]) -> tuple[Config, ...]:
    """Each --SET line (or none) followed by each combination of the CONFIG_DIM dimensions."""
    set_lines: tuple[Config, ...] = settings or ((),)
    combos = [sum(combo, ()) for combo in itertools.product(*dims)] if dims else [()]
    return tuple(s + c for s in set_lines for c in combos)


def parse_sql_file(path: Path, root: Path = INPUTS_ROOT) -> SqlTestFile:
    """Parse one input file (``--IMPORT``ed files are resolved relative to ``root``)."""
    text = path.read_text()
    comments, code = split_comments_and_code(text)
    imported: list[str] = []
    for c in comments:
        if c.startswith("--IMPORT "):
            _, other_code = split_comments_and_code((root / c[len("--IMPORT "):].strip()).read_text())
            imported.extend(other_code)
    statements = split_statements(imported + code)
    settings = tuple(_parse_kvs(c[len("--SET "):]) for c in comments if c.startswith("--SET "))
    dims: dict[str, list[Config]] = {}
    for c in comments:
        if c.startswith("--CONFIG_DIM"):
            rest = c[len("--CONFIG_DIM"):]
            dim, _, kvs = rest.partition(" ")
            dims.setdefault(dim, []).append(_parse_kvs(kvs))
    only_if = None
    for c in comments:
        if c.startswith("--ONLY_IF "):
            only_if = tuple(x.strip().lower() for x in c[len("--ONLY_IF "):].split(","))
    return SqlTestFile(
        name=path.relative_to(root).as_posix(),
        statements=tuple(statements),
        settings=settings,
        config_dims=tuple(tuple(v) for _, v in sorted(dims.items())),
        only_if=only_if,
        sha256=hashlib.sha256(text.encode()).hexdigest(),
    )


def list_input_files(root: Path = INPUTS_ROOT) -> list[Path]:
    """All ``*.sql`` input files under ``root``, sorted by relative path."""
    return sorted(root.rglob("*.sql"), key=lambda p: p.relative_to(root).as_posix())


def input_roots() -> list[Path]:
    """Every existing input root: Spark's copies, Ember's own files, then ``$EMBER_CONFORMANCE_INPUTS``."""
    extra = [Path(p) for p in os.environ.get(EXTRA_INPUTS_ENV, "").split(os.pathsep) if p]
    return [r for r in (INPUTS_ROOT, EMBER_INPUTS_ROOT, *extra) if r.is_dir()]


def all_input_files() -> list[tuple[Path, Path]]:
    """``(root, path)`` of every input file under every :func:`input_roots` root."""
    return [(root, path) for root in input_roots() for path in list_input_files(root)]


_LEADING_COMMAND = re.compile(
    r"^\s*(create|drop|set|reset|use|cache|uncache|refresh|insert|alter|analyze|add|msck|truncate)\b",
    re.IGNORECASE,
)


def looks_like_command(sql: str) -> bool:
    """Heuristic used only when no Spark plan is at hand (the golden says the truth)."""
    return bool(_LEADING_COMMAND.match(sql))
