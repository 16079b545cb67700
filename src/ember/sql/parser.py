"""Public entry points of the SQL front end.

>>> from ember.sql import parse_statement, parse_expression
>>> print(parse_statement("SELECT a FROM t WHERE a > 1").tree_string(), end="")
'Project [unresolvedalias('a)]
+- 'Filter ('a > 1)
   +- 'UnresolvedRelation [t], [], false

(exact text depends on the expression classes' ``simple_string``).

Errors: malformed SQL raises :class:`ember.errors.ParseError` with error class
``PARSE_SYNTAX_ERROR``, Spark's message (``Syntax error at or near 'FROM'.``) and an ``Origin``
pointing at the offending token.  Valid Spark SQL that Ember does not implement raises
:class:`ember.errors.UnsupportedError` naming the construct.
"""

from __future__ import annotations

import re

import sqlglot
from sqlglot import exp
from sqlglot.errors import ParseError as SqlglotParseError
from sqlglot.errors import TokenError

from ember import types as T
from ember.errors import Origin, ParseError, EmberError
from ember.guard import call_deep, too_complex
from ember.expressions.base import Expression
from ember.plans.logical.nodes import LogicalPlan
from ember.sql.ast_builder import AstBuilder
from ember.sql.datatypes import convert_data_type
from ember.sql.dialect import EmberSpark, EmberSparkLegacySetops
from ember.sql.splitter import strip_comments
from ember.sql.insert_statement import try_parse_insert
from ember.sql.statements import try_parse_command

__all__ = ["parse_statement", "parse_query", "parse_expression", "parse_data_type"]


def _strip_semicolons(text: str) -> str:
    """Drop trailing ``;`` (and whitespace/comments after them) without moving positions."""
    blanked = strip_comments(text)
    end = len(blanked.rstrip())
    while end > 0 and blanked[end - 1] == ";":
        end = len(blanked[: end - 1].rstrip())
    return text[:end] if end < len(text) else text


def _position(text: str, offset: int) -> tuple[int, int]:
    line = text.count("\n", 0, offset) + 1
    return line, offset - (text.rfind("\n", 0, offset) + 1)


def _syntax_error(text: str, line: int, col: int, near: str | None) -> ParseError:
    where = "end of input" if not near else f"'{near}'"
    return ParseError(
        f"Syntax error at or near {where}.",
        error_class="PARSE_SYNTAX_ERROR",
        parameters={"error": where, "hint": ""},
        origin=Origin(line, col, sql_text=text),
    )


def _translate(text: str, e: Exception) -> ParseError:
    """A sqlglot error as Spark's PARSE_SYNTAX_ERROR pointing at the offending token."""
    if isinstance(e, SqlglotParseError) and e.errors:
        err = e.errors[0]
        near = err.get("highlight") or None
        line = err.get("line") or 1
        col_end = err.get("col") or 0  # sqlglot: 1-based column of the token's last character
        col = max(col_end - len(near or ""), 0)
        if near and near.upper() == "SENTINEL":
            near = None
        return _syntax_error(text, line, col, near)
    # tokenizer errors: unterminated string/comment/identifier
    lines = text.splitlines() or [""]
    return _syntax_error(text, len(lines), len(lines[-1]), None)


_REPLACE_TABLE_AS = re.compile(r"\s*REPLACE\s+TABLE\b.*\bAS\s+(?:SELECT|WITH|VALUES|FROM|TABLE|\()",
                               re.IGNORECASE | re.DOTALL)
_STATEMENT_START = re.compile(r"\s*(SELECT|WITH|VALUES|FROM|TABLE)\b|\s*\(", re.IGNORECASE)


def _parse_tree(text: str, legacy_setops_precedence: bool) -> exp.Expr:
    dialect = EmberSparkLegacySetops if legacy_setops_precedence else EmberSpark
    blanked = strip_comments(text)
    if not blanked.strip():
        raise _syntax_error(text, 1, 0, None)
    if not _STATEMENT_START.match(blanked):
        # Spark reports an unknown statement at its first word (`selec 1` -> near 'selec').
        raise _syntax_error(text, *_first_token_pos(text), blanked.split()[0])
    try:
        trees = sqlglot.parse(text, read=dialect)
    except (SqlglotParseError, TokenError) as e:
        raise _translate(text, e) from e
    trees = [t for t in trees if t is not None]
    if len(trees) != 1:
        raise ParseError(
            "Expected exactly one statement, found several (split the script first).",
            error_class="PARSE_SYNTAX_ERROR",
            parameters={"error": "';'", "hint": ""},
        )
    tree = trees[0]
    if isinstance(tree, exp.Command):
        words = text.split()
        raise _syntax_error(text, *_first_token_pos(text), words[0] if words else None)
    return tree


def _first_token_pos(text: str) -> tuple[int, int]:
    blanked = strip_comments(text)
    offset = len(blanked) - len(blanked.lstrip())
    return _position(text, offset)


def parse_query(text: str, *, legacy_setops_precedence: bool = False,
                time_zone: str = "UTC") -> LogicalPlan:
    """Parse one query (SELECT / set operation / VALUES / parenthesised query).  ``time_zone`` is
    the session time zone TIMESTAMP literals without zone are read in.

    >>> parse_query("SELECT 1").children
    (OneRowRelation,)
    """
    body = _strip_semicolons(text)
    tree = _parse_tree(body, legacy_setops_precedence)
    builder = AstBuilder(text, time_zone=time_zone)
    if not AstBuilder._is_query(tree) and not isinstance(tree, exp.Subquery):
        raise _syntax_error(text, *_first_token_pos(text), text.split()[0])
    return _with_origin(text, lambda: builder.build(tree, builder.query))


def _with_origin(text: str, fn):  # type: ignore[no-untyped-def]
    try:
        return fn()
    except EmberError as e:
        # Re-raise the same error (keeping its cause and traceback) with a position if it had none.
        e.with_origin(Origin(*_first_token_pos(text), sql_text=text))
        raise


def _deep(text: str, fn, *args, **kwargs):  # type: ignore[no-untyped-def]
    """``fn(*args, **kwargs)`` without Python's recursion limit (:func:`ember.guard.call_deep`);
    too deep even so: ``FAILED_TO_PARSE_TOO_COMPLEX``."""
    try:
        return call_deep(lambda: fn(*args, **kwargs))
    except RecursionError:
        raise too_complex().with_origin(Origin(*_first_token_pos(text), sql_text=text)) from None


def parse_statement(text: str, *, legacy_setops_precedence: bool = False,
                    time_zone: str = "UTC") -> LogicalPlan:
    """Parse one statement (a trailing ``;`` is fine) into an unresolved logical plan.

    Queries give their plan; ``CREATE VIEW``, ``CREATE TEMP VIEW ... USING``, ``DROP VIEW``,
    ``SET``, ``EXPLAIN`` and ``DESCRIBE`` give command nodes.
    ``legacy_setops_precedence`` is ``spark.sql.legacy.setopsPrecedence.enabled``, ``time_zone``
    ``spark.sql.session.timeZone``.

    >>> parse_statement("DROP VIEW IF EXISTS v;")
    DropView v, True
    """
    return _deep(text, _parse_statement, text, legacy_setops_precedence=legacy_setops_precedence,
                 time_zone=time_zone)


def _parse_statement(text: str, *, legacy_setops_precedence: bool,
                     time_zone: str) -> LogicalPlan:
    body = _strip_semicolons(text)
    blanked = strip_comments(body)
    if _REPLACE_TABLE_AS.match(blanked):
        # REPLACE TABLE ... AS query: CREATE OR REPLACE TABLE's plan (Spark's ReplaceTableAsSelect;
        # its session catalog refuses both the same way, see ember.table_writes)
        return parse_statement("CREATE OR " + body.lstrip(),
                               legacy_setops_precedence=legacy_setops_precedence,
                               time_zone=time_zone)
    insert = try_parse_insert(
        body, blanked,
        lambda q: parse_query(q, legacy_setops_precedence=legacy_setops_precedence,
                              time_zone=time_zone),
    )
    if insert is not None:
        return insert
    command = try_parse_command(
        body, blanked,
        lambda q: parse_query(q, legacy_setops_precedence=legacy_setops_precedence,
                              time_zone=time_zone),
    )
    if command is not None:
        return command
    return parse_query(body, legacy_setops_precedence=legacy_setops_precedence,
                       time_zone=time_zone)


def parse_expression(text: str, time_zone: str = "UTC") -> Expression:
    """Parse a standalone expression (DataFrame ``expr("a + 1")``, ``where("a > 1")``);
    ``time_zone`` is the session time zone TIMESTAMP literals without zone are read in.

    >>> type(parse_expression("a + 1")).__name__
    'Add'
    """
    return _deep(text, _parse_expression, text, time_zone)


def _parse_expression(text: str, time_zone: str) -> Expression:
    wrapped = "SELECT " + text
    try:
        tree = sqlglot.parse_one(wrapped, read=EmberSpark)
    except (SqlglotParseError, TokenError) as e:
        err = _translate(wrapped, e)
        o = err.origin
        col = (o.start_position or 0) - (7 if o and o.line == 1 else 0)
        raise _syntax_error(text, o.line if o else 1, max(col, 0),
                            err.parameters.get("error", "").strip("'") or None) from e
    if not isinstance(tree, exp.Select) or len(tree.expressions) != 1 or any(
        tree.args.get(k) for k in ("from_", "from", "where", "group", "order", "limit")
    ):
        raise _syntax_error(text, 1, 0, text.split()[0] if text.split() else None)
    # Positions: the expression text starts 7 characters into line 1 of `wrapped`.
    builder = AstBuilder(wrapped, prefix_len=len("SELECT "), time_zone=time_zone)
    return _with_origin(text, lambda: builder.build(tree.expressions[0], builder.expr))


def parse_data_type(text: str) -> T.DataType:
    """Parse a Spark SQL type string.

    >>> parse_data_type("bigint")
    LongType()
    """
    try:
        dt = exp.DataType.build(text.strip(), dialect=EmberSpark)
    except (SqlglotParseError, TokenError, ValueError) as e:
        raise _syntax_error(text, 1, 0, text.split()[0] if text.split() else None) from e
    return convert_data_type(dt)
