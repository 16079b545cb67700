"""Statement front-ends that do not go through sqlglot's query parser.

sqlglot parses ``SET``, ``CREATE VIEW ... USING``, ``EXPLAIN`` and ``DESCRIBE`` loosely or not at
all, so these are recognised here with small regular expressions over the statement text (comments
blanked out first).  When a statement embeds a query (``CREATE VIEW v AS <query>``, ``EXPLAIN
<query>``), the header is replaced by spaces (newlines kept) and the result is parsed as a query, so
positions in errors and ``origin`` s still refer to the original text.

>>> from ember.sql import parse_statement
>>> parse_statement("SET spark.sql.shuffle.partitions = 4").value
'4'
"""

from __future__ import annotations

import re
from collections.abc import Callable

from ember.errors import Origin, ParseError
from ember.plans.logical import ddl as D
from ember.plans.logical import nodes as L
from ember import types as T
from ember.sql.ddl import parse_columns, try_parse_ddl, try_parse_describe_partition

__all__ = ["try_parse_command"]

_IDENT = r"(?:`(?:[^`]|``)+`|[A-Za-z_0-9]+)"
_NAME = rf"{_IDENT}(?:\s*\.\s*{_IDENT})*"

_SET = re.compile(r"^\s*SET\b(?P<rest>.*)$", re.IGNORECASE | re.DOTALL)
_CREATE_VIEW = re.compile(
    r"^\s*CREATE\s+(?P<replace>OR\s+REPLACE\s+)?(?P<global>GLOBAL\s+)?"
    r"(?P<temp>TEMP(?:ORARY)?\s+)?VIEW\s+(?P<ine>IF\s+NOT\s+EXISTS\s+)?"
    rf"(?P<name>{_NAME})\s*(?P<cols>\((?:[^()]|\([^()]*\))*\))?\s*",
    re.IGNORECASE | re.DOTALL,
)
_USING = re.compile(
    r"USING\s+(?P<provider>[A-Za-z_][\w.]*)\s*(?:OPTIONS\s*\((?P<options>.*)\))?\s*$",
    re.IGNORECASE | re.DOTALL,
)
_AS = re.compile(r"AS\b", re.IGNORECASE)
_VIEW_CLAUSE = re.compile(
    r"(?:COMMENT\s+(?P<comment>'(?:[^'\\]|\\.)*'|\"(?:[^\"\\]|\\.)*\")"
    r"|TBLPROPERTIES\s*\((?P<props>(?:[^()'\"]|'(?:[^'\\]|\\.)*'|\"(?:[^\"\\]|\\.)*\")*)\))\s*",
    re.IGNORECASE | re.DOTALL,
)
_DROP_VIEW = re.compile(
    rf"^\s*DROP\s+VIEW\s+(?P<ie>IF\s+EXISTS\s+)?(?P<name>{_NAME})\s*$", re.IGNORECASE | re.DOTALL
)
_EXPLAIN = re.compile(
    r"^\s*EXPLAIN\s+(?:(?P<mode>EXTENDED|FORMATTED|CODEGEN|COST|LOGICAL|RULES|ANALYZE)\s+)?",
    re.IGNORECASE,
)
_DESCRIBE = re.compile(
    r"^\s*(?:DESCRIBE|DESC)\s+(?:(?P<kind>QUERY|TABLE)\s+)?(?:(?P<ext>EXTENDED|FORMATTED)\s+)?",
    re.IGNORECASE,
)
_ANALYZE = re.compile(
    rf"^\s*ANALYZE\s+TABLE\s+(?P<name>{_NAME})\s+COMPUTE\s+STATISTICS"
    r"(?:\s+(?P<noscan>NOSCAN)|\s+FOR\s+(?P<all>ALL\s+COLUMNS)|\s+FOR\s+COLUMNS\s+(?P<cols>.+?))?"
    r"\s*;?\s*$",
    re.IGNORECASE | re.DOTALL,
)
_QUERY_START = re.compile(r"^\s*(?:SELECT|WITH|VALUES|FROM|TABLE|\()", re.IGNORECASE)
_OPTION = re.compile(
    r"\s*(?P<key>'(?:[^'\\]|\\.)*'|\"(?:[^\"\\]|\\.)*\"|[A-Za-z_][\w.]*)\s*=?\s*"
    r"(?P<value>'(?:[^'\\]|\\.)*'|\"(?:[^\"\\]|\\.)*\"|[^\s,]+)\s*(?:,|$)",
    re.DOTALL,
)


def _blank(text: str) -> str:
    return "".join(ch if ch == "\n" else " " for ch in text)


def _unquote_ident(name: str) -> str:
    name = name.strip()
    if name.startswith("`") and name.endswith("`"):
        return name[1:-1].replace("``", "`")
    return name


def _name(raw: str) -> str:
    parts = re.findall(_IDENT, raw)
    return ".".join(_unquote_ident(p) for p in parts)


def _unquote_string(s: str) -> str:
    if len(s) >= 2 and s[0] == s[-1] and s[0] in "'\"":
        body = s[1:-1]
        return re.sub(r"\\(.)", lambda m: {"n": "\n", "t": "\t"}.get(m.group(1), m.group(1)), body)
    return s


def _syntax_error(text: str, offset: int, near: str | None) -> ParseError:
    line = text.count("\n", 0, offset) + 1
    col = offset - (text.rfind("\n", 0, offset) + 1)
    where = f"'{near}'" if near else "end of input"
    return ParseError(f"Syntax error at or near {where}.", parameters={"error": where, "hint": ""},
                      origin=Origin(line, col, sql_text=text))


def try_parse_command(
    original: str, text: str, parse_query: Callable[[str], L.LogicalPlan]
) -> L.LogicalPlan | None:
    """The command for statement ``text`` (comments blanked, same length as ``original``), or
    None when it is not one of the commands handled here.  ``parse_query`` parses a padded query
    text."""
    if (ddl := try_parse_ddl(original, text, parse_query)) is not None:
        return ddl
    if m := _SET.match(text):
        rest = m.group("rest").strip()
        if not rest:
            return L.SetCommand()
        if rest == "-v":
            return L.SetCommand(verbose=True)
        if "=" in rest:
            key, _, value = rest.partition("=")
            return L.SetCommand(key.strip(), value.strip())
        return L.SetCommand(rest)

    if m := _CREATE_VIEW.match(text):
        name = _name(m.group("name"))
        cols_raw = m.group("cols")
        cols = None
        if cols_raw:
            cols = tuple(
                _unquote_ident(c.strip().split()[0]) for c in cols_raw.strip()[1:-1].split(",")
                if c.strip()
            )
        replace = bool(m.group("replace"))
        temporary = bool(m.group("temp")) or bool(m.group("global"))
        tail_start = m.end()
        comment, props = None, ()
        while c := _VIEW_CLAUSE.match(text, tail_start):
            if c.group("comment") is not None:
                comment = _unquote_string(c.group("comment"))
            else:
                props = tuple((_unquote_string(o.group("key")), _unquote_string(o.group("value")))
                              for o in _OPTION.finditer(c.group("props")))
            tail_start = c.end()
        tail = text[tail_start:]
        if u := _USING.match(tail):
            options = tuple(
                (_unquote_string(o.group("key")), _unquote_string(o.group("value")))
                for o in _OPTION.finditer(u.group("options") or "")
            )
            schema = None
            if cols_raw and re.search(r"\w\s+\w", cols_raw):  # (name type, ...)
                schema = T.StructType(tuple(
                    T.StructField(c.name, c.data_type, c.nullable)
                    for c in parse_columns(original, m.start("cols"))))
            return L.CreateTempViewUsing(name, u.group("provider").lower(), options, replace,
                                         schema)
        if a := _AS.match(tail):
            q_start = tail_start + a.end()
            query = parse_query(_blank(original[:q_start]) + original[q_start:])
            return L.CreateViewCommand(name, query, cols, replace, temporary,
                                       bool(m.group("ine")), original[q_start:], comment, props,
                                       bool(m.group("global")))
        near = tail.split()[0] if tail.split() else None
        raise _syntax_error(original, tail_start, near)

    if m := _DROP_VIEW.match(text):
        return L.DropView(_name(m.group("name")), bool(m.group("ie")))

    if m := _EXPLAIN.match(text):
        mode = (m.group("mode") or "simple").lower()
        q_start = m.end()
        blank = _blank(original[:q_start])
        if _DESCRIBE.match(blank + text[q_start:]):  # EXPLAIN of a DESCRIBE command
            command = try_parse_command(blank + original[q_start:], blank + text[q_start:],
                                        parse_query)
            if command is not None:
                return L.ExplainCommand(command, mode)
        return L.ExplainCommand(parse_query(_blank(original[:q_start]) + original[q_start:]), mode)

    if re.match(r"^\s*ANALYZE\b", text, re.IGNORECASE):
        m = _ANALYZE.match(text)
        if m is None:
            words = text.split()
            near = words[min(len(words) - 1, 3)] if words else None
            raise _syntax_error(original, len(original) - len(original.lstrip()), near)
        parts = tuple(_unquote_ident(p) for p in re.findall(_IDENT, m.group("name")))
        cols: tuple[str, ...] | None = None
        if m.group("cols"):
            raw = [c.strip() for c in m.group("cols").split(",")]
            if not all(re.fullmatch(_IDENT, c) for c in raw):
                raise _syntax_error(original, m.start("cols"), raw[0] or None)
            cols = tuple(_unquote_ident(c) for c in raw)
        return L.AnalyzeTableCommand(parts, bool(m.group("noscan")), cols, bool(m.group("all")))

    if m := _DESCRIBE.match(text):
        rest = text[m.end():]
        extended = bool(m.group("ext"))
        if (m.group("kind") or "").upper() == "QUERY" or _QUERY_START.match(rest):
            q_start = m.end()
            query = parse_query(_blank(original[:q_start]) + original[q_start:])
            return L.DescribeRelation(query, extended)
        name = rest.strip()
        if json_tail := re.search(r"\s+AS\s+JSON\s*$", name, re.IGNORECASE):
            name = name[:json_tail.start()]
            if re.fullmatch(rf"(?P<name>{_NAME})\s+(?P<col>{_NAME})", name):
                raise ParseError(
                    "The feature is not supported: DESC TABLE COLUMN AS JSON not supported for "
                    "individual columns.", error_class="UNSUPPORTED_FEATURE.DESC_TABLE_COLUMN_JSON",
                    origin=Origin(1, 0, sql_text=original))
            if not extended:
                raise ParseError(
                    "DESCRIBE TABLE ... AS JSON only supported when [EXTENDED|FORMATTED] is "
                    f"specified.\nFor example: DESCRIBE EXTENDED {name} AS JSON is supported but "
                    f"DESCRIBE {name} AS JSON is not.", error_class="DESCRIBE_JSON_NOT_EXTENDED",
                    parameters={"tableName": name}, origin=Origin(1, 0, sql_text=original))
            if (part := try_parse_describe_partition(original, text, m.end(), True)) is not None:
                return part
            if not re.fullmatch(_NAME, name):
                raise _syntax_error(original, m.end(), name.split()[0] if name else None)
            line = original.count("\n", 0, m.end()) + 1
            col = m.end() - (original.rfind("\n", 0, m.end()) + 1)
            return D.DescribeTableJson(tuple(_unquote_ident(p) for p in re.findall(_IDENT, name)),
                                       None, (line, col))
        if (part := try_parse_describe_partition(original, text, m.end(), extended)) is not None:
            return part
        if col := re.fullmatch(rf"(?P<name>{_NAME})\s+(?P<col>{_NAME})", name):
            line = original.count("\n", 0, m.end()) + 1
            col_pos = m.end() - (original.rfind("\n", 0, m.end()) + 1)
            return D.DescribeColumn(
                tuple(_unquote_ident(p) for p in re.findall(_IDENT, col.group("name"))),
                tuple(_unquote_ident(p) for p in re.findall(_IDENT, col.group("col"))),
                extended, (line, col_pos))
        if not re.fullmatch(_NAME, name):
            raise _syntax_error(original, m.end(), name.split()[0] if name else None)
        parts = tuple(_unquote_ident(p) for p in re.findall(_IDENT, name))
        line = original.count("\n", 0, m.end()) + 1
        col = m.end() - (original.rfind("\n", 0, m.end()) + 1)
        return L.DescribeRelation(L.UnresolvedRelation(parts, (line, col)), extended)
    return None
