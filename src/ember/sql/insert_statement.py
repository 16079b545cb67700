"""``INSERT INTO`` / ``INSERT OVERWRITE`` statements (Spark's ``insertInto`` grammar rules).

sqlglot does not keep Spark's INSERT forms apart (``BY NAME``, ``PARTITION (k)`` without a value,
``IF NOT EXISTS``), so the header is read here, clause by clause, over the statement text with
comments blanked; the query after it is blanked-padded and parsed as a query, so positions in
errors still point into the original text.  Spark's grammar::

    INSERT OVERWRITE [TABLE] name [PARTITION (spec) [IF NOT EXISTS]] [BY NAME | (cols)] query
    INSERT INTO [TABLE] name [PARTITION (spec)] [IF NOT EXISTS] [BY NAME | (cols)] query

>>> from ember.sql import parse_statement
>>> parse_statement("INSERT INTO t PARTITION (p = 'x', q) BY NAME SELECT 1 AS a").partition_spec
(('p', 'x'), ('q', None))
"""

from __future__ import annotations

import re
from collections.abc import Callable

from ember.errors import Origin, ParseError
from ember.plans.logical.insert import NULL_PARTITION_VALUE, InsertIntoStatement
from ember.plans.logical.nodes import ExplainCommand, LogicalPlan

__all__ = ["try_parse_insert"]

_IDENT = r"(?:`(?:[^`]|``)+`|[A-Za-z_0-9]+)"
_NAME = rf"{_IDENT}(?:\s*\.\s*{_IDENT})*"
_EXPLAIN = re.compile(
    r"^\s*EXPLAIN\s+(?:(?P<mode>EXTENDED|FORMATTED|CODEGEN|COST|LOGICAL|RULES|ANALYZE)\s+)?"
    r"(?=INSERT\b)", re.IGNORECASE)
_HEADER = re.compile(
    rf"^\s*INSERT\s+(?P<kind>INTO|OVERWRITE)\s+(?:TABLE\s+)?(?P<name>{_NAME})\s*",
    re.IGNORECASE | re.DOTALL,
)
_PARTITION = re.compile(r"PARTITION\s*\(", re.IGNORECASE)
_IF_NOT_EXISTS = re.compile(r"IF\s+NOT\s+EXISTS\b\s*", re.IGNORECASE)
_BY_NAME = re.compile(r"BY\s+NAME\b\s*", re.IGNORECASE)
_QUERY_START = re.compile(r"(?:SELECT|WITH|VALUES|FROM|TABLE|MAP|REDUCE)\b|\(", re.IGNORECASE)
_STRING = r"'(?:[^'\\]|\\.)*'|\"(?:[^\"\\]|\\.)*\""
_SPEC_ITEM = re.compile(
    rf"\s*(?P<key>{_IDENT})\s*(?:=\s*(?P<value>(?:{_STRING})(?:\s*(?:{_STRING}))*|[^\s,)]+))?\s*",
    re.DOTALL,
)


def _unquote_ident(name: str) -> str:
    name = name.strip()
    if name.startswith("`") and name.endswith("`"):
        return name[1:-1].replace("``", "`")
    return name


def _unescape(s: str) -> str:
    body = s[1:-1]
    return re.sub(r"\\(.)", lambda m: {"n": "\n", "t": "\t", "r": "\r", "0": "\0"}
                  .get(m.group(1), m.group(1)), body)


def _partition_value(raw: str) -> object:
    """Spark's ``visitStringConstant``: a string literal's value (adjacent literals joined),
    ``NULL`` as :data:`NULL_PARTITION_VALUE`, any other constant as written (``1``, ``true``)."""
    raw = raw.strip()
    if raw[0] in "'\"":
        return "".join(_unescape(m.group(0)) for m in re.finditer(_STRING, raw))
    if raw.upper() == "NULL":
        return NULL_PARTITION_VALUE
    return raw


def _line_col(text: str, offset: int) -> tuple[int, int]:
    return text.count("\n", 0, offset) + 1, offset - (text.rfind("\n", 0, offset) + 1)


def _error(text: str, offset: int, near: str | None) -> ParseError:
    line, col = _line_col(text, offset)
    where = f"'{near}'" if near else "end of input"
    return ParseError(f"Syntax error at or near {where}.", error_class="PARSE_SYNTAX_ERROR",
                      parameters={"error": where, "hint": ""},
                      origin=Origin(line, col, sql_text=text))


def _operation_not_allowed(text: str, message: str) -> ParseError:
    return ParseError(f"Operation not allowed: {message}.",
                      error_class="_LEGACY_ERROR_TEMP_0035",
                      parameters={"message": message},
                      origin=Origin(1, 0, sql_text=text))


def _word_at(text: str, pos: int) -> str | None:
    m = re.match(r"\s*(\w+|\S)", text[pos:])
    return m.group(1) if m else None


def _close_paren(text: str, open_pos: int) -> int:
    """The index of the ``)`` matching the ``(`` at ``open_pos`` (quotes respected), or -1."""
    depth, i, quote = 0, open_pos, None
    while i < len(text):
        ch = text[i]
        if quote:
            if ch == "\\":
                i += 1
            elif ch == quote:
                quote = None
        elif ch in "'\"`":
            quote = ch
        elif ch == "(":
            depth += 1
        elif ch == ")":
            depth -= 1
            if depth == 0:
                return i
        i += 1
    return -1


def try_parse_insert(
    original: str, text: str, parse_query: Callable[[str], LogicalPlan]
) -> InsertIntoStatement | ExplainCommand | None:
    """The ``InsertIntoStatement`` of ``text`` (comments blanked, same length as ``original``),
    or None when the statement is not an INSERT; ``EXPLAIN [mode] INSERT ...`` gives the
    ``ExplainCommand`` of one.  ``parse_query`` parses a padded query text."""
    if e := _EXPLAIN.match(text):
        pad = "".join(ch if ch == "\n" else " " for ch in original[:e.end()])
        stmt = try_parse_insert(pad + original[e.end():], pad + text[e.end():], parse_query)
        return ExplainCommand(stmt, (e.group("mode") or "simple").lower())
    m = _HEADER.match(text)
    if m is None:
        if re.match(r"^\s*INSERT\b", text, re.IGNORECASE):
            words = text.split()
            raise _error(original, text.index(words[1]) if len(words) > 1 else len(text),
                         words[1] if len(words) > 1 else None)
        return None
    overwrite = m.group("kind").upper() == "OVERWRITE"
    name_parts = tuple(_unquote_ident(p) for p in re.findall(_IDENT, m.group("name")))
    name_line, name_col = _line_col(original, m.start("name"))
    pos = m.end()

    spec: list[tuple[str, str | None]] = []
    if p := _PARTITION.match(text, pos):
        close = _close_paren(text, p.end() - 1)
        if close < 0:
            raise _error(original, len(text), None)
        body = text[p.end():close]
        start = 0
        while start < len(body):
            item = _SPEC_ITEM.match(body, start)
            if item is None or item.end() == start:
                raise _error(original, p.end() + start, _word_at(body, start))
            value = item.group("value")
            if any(k == _unquote_ident(item.group("key")) for k, _ in spec):
                dup = "`" + _unquote_ident(item.group("key")).replace("`", "``") + "`"
                raise ParseError(f"Found duplicate keys {dup}.", error_class="DUPLICATE_KEY",
                                 parameters={"keyColumn": dup},
                                 origin=Origin(*_line_col(original, p.start()), sql_text=original))
            spec.append((_unquote_ident(item.group("key")),
                         None if value is None else _partition_value(value)))
            start = item.end()
            if start < len(body):
                if body[start] != ",":
                    raise _error(original, p.end() + start, _word_at(body, start))
                start += 1
        pos = close + 1
        while pos < len(text) and text[pos].isspace():
            pos += 1

    if_not_exists = False
    if e := _IF_NOT_EXISTS.match(text, pos):
        if_not_exists = True
        pos = e.end()
        if not overwrite:
            raise _operation_not_allowed(original, "INSERT INTO ... IF NOT EXISTS")
        dynamic = [k for k, v in spec if v is None]
        if dynamic:
            raise _operation_not_allowed(
                original, "IF NOT EXISTS with dynamic partitions: " + ", ".join(dynamic))

    by_name = False
    cols: tuple[str, ...] = ()
    if b := _BY_NAME.match(text, pos):
        by_name = True
        pos = b.end()
    elif text.startswith("(", pos) and not _QUERY_START.match(text[pos + 1:].lstrip()):
        close = _close_paren(text, pos)
        if close < 0:
            raise _error(original, len(text), None)
        raw = [c.strip() for c in text[pos + 1:close].split(",")]
        if not all(re.fullmatch(_IDENT, c) for c in raw):
            bad = next(c for c in raw if not re.fullmatch(_IDENT, c))
            raise _error(original, pos + 1, bad.split()[0] if bad.split() else ")")
        cols = tuple(_unquote_ident(c) for c in raw)
        pos = close + 1
        while pos < len(text) and text[pos].isspace():
            pos += 1

    if not _QUERY_START.match(text, pos):
        raise _error(original, pos, _word_at(text, pos))
    padded = "".join(ch if ch == "\n" else " " for ch in original[:pos]) + original[pos:]
    query = parse_query(padded)
    return InsertIntoStatement(
        name_parts, query, tuple(spec), cols, overwrite, if_not_exists, by_name,
        origin=(name_line, name_col),
    )
