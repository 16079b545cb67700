"""The DDL front end: catalog statements (``CREATE TABLE``, ``CREATE DATABASE``, ``USE``,
``DROP TABLE``, ``TRUNCATE``, ``ALTER TABLE``, ``MSCK REPAIR TABLE``, ``SHOW ...``,
``DESCRIBE DATABASE``) parsed with
Spark's grammar (``SqlBaseParser``'s ``createTable``, ``createNamespace``, ``showTables`` ...
rules) into the commands of :mod:`ember.plans.logical.ddl`.

sqlglot's Spark dialect models these statements loosely (most become an opaque ``Command``), so
they are parsed here by a small recursive-descent parser over a token list of the statement
(comments blanked, so offsets are the original text's); syntax errors are Spark's
``PARSE_SYNTAX_ERROR`` at the offending token. An embedded query (``CREATE TABLE ... AS
SELECT``) is handed to the query parser with the header blanked, so its positions stay right.

>>> from ember.sql import parse_statement
>>> parse_statement("CREATE TABLE t (a INT COMMENT 'x') USING parquet").provider
'parquet'
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

from sqlglot import exp
from sqlglot.errors import ParseError as SqlglotParseError
from sqlglot.errors import TokenError

from ember import types as T
from ember.errors import Origin, ParseError, UnsupportedError
from ember.plans.logical import ddl as D
from ember.plans.logical import nodes as L
from ember.sql.datatypes import convert_data_type
from ember.sql.dialect import EmberSpark

__all__ = ["try_parse_ddl", "try_parse_describe_partition", "parse_columns"]

_TOKEN = re.compile(
    r"(?P<ws>\s+)|(?P<qident>`(?:[^`]|``)*`)|(?P<str>'(?:[^'\\]|\\.)*'|\"(?:[^\"\\]|\\.)*\")"
    r"|(?P<word>[A-Za-z_0-9][A-Za-z_0-9]*)|(?P<op><>|<=|>=|!=|.)", re.DOTALL)

_STARTS = re.compile(
    r"^\s*(?:CREATE\s+(?:OR\s+REPLACE\s+)?(?:EXTERNAL\s+)?TABLE\b"
    r"|CREATE\s+(?:DATABASE|SCHEMA|NAMESPACE)\b|DROP\s+(?:TABLE|DATABASE|SCHEMA|NAMESPACE)\b"
    r"|USE\b|TRUNCATE\b|ALTER\s+(?:TABLE|VIEW|DATABASE|SCHEMA|NAMESPACE)\b|MSCK\b"
    r"|SHOW\s+(?:TABLES|TABLE|DATABASES|SCHEMAS|NAMESPACES|COLUMNS|CREATE|TBLPROPERTIES"
    r"|PARTITIONS)\b"
    r"|(?:DESC|DESCRIBE)\s+(?:DATABASE|SCHEMA|NAMESPACE)\b)", re.IGNORECASE)


@dataclass(frozen=True, slots=True)
class _Tok:
    kind: str     # "ident" (a word or `quoted`), "str", "op"
    text: str     # the token as written
    value: str    # identifier / string value (unquoted, unescaped)
    start: int
    quoted: bool = False

    def kw(self, *words: str) -> bool:
        return self.kind == "ident" and not self.quoted and self.text.upper() in words


def _unescape(s: str) -> str:
    body = s[1:-1]
    return re.sub(r"\\(.)", lambda m: {"n": "\n", "t": "\t", "r": "\r", "0": "\0"}.get(
        m.group(1), m.group(1)), body)


def _tokens(text: str) -> list[_Tok]:
    out = []
    for m in _TOKEN.finditer(text):
        kind = m.lastgroup
        s = m.group()
        if kind == "ws":
            continue
        if kind == "qident":
            out.append(_Tok("ident", s, s[1:-1].replace("``", "`"), m.start(), True))
        elif kind == "word":
            out.append(_Tok("ident", s, s, m.start()))
        elif kind == "str":
            out.append(_Tok("str", s, _unescape(s), m.start()))
        else:
            out.append(_Tok("op", s, s, m.start()))
    return out


class _Parser:
    def __init__(self, original: str, text: str,
                 parse_query: Callable[[str], L.LogicalPlan]) -> None:
        self.original = original
        self.toks = _tokens(text)
        self.i = 0
        self.parse_query = parse_query

    # -- token helpers ------------------------------------------------------------------------
    def peek(self, k: int = 0) -> _Tok | None:
        j = self.i + k
        return self.toks[j] if j < len(self.toks) else None

    def at_kw(self, *words: str) -> bool:
        t = self.peek()
        return t is not None and t.kw(*words)

    def at_op(self, op: str) -> bool:
        t = self.peek()
        return t is not None and t.kind == "op" and t.text == op

    def accept_kw(self, *words: str) -> bool:
        if self.at_kw(*words):
            self.i += 1
            return True
        return False

    def accept_kws(self, *words: str) -> bool:
        """Accept the keyword sequence ``words`` (all or nothing)."""
        for k, w in enumerate(words):
            t = self.peek(k)
            if t is None or not t.kw(w):
                return False
        self.i += len(words)
        return True

    def accept_op(self, op: str) -> bool:
        if self.at_op(op):
            self.i += 1
            return True
        return False

    def error(self) -> ParseError:
        t = self.peek()
        offset = t.start if t is not None else len(self.original.rstrip())
        line = self.original.count("\n", 0, offset) + 1
        col = offset - (self.original.rfind("\n", 0, offset) + 1)
        where = f"'{t.text}'" if t is not None else "end of input"
        return ParseError(f"Syntax error at or near {where}.",
                          error_class="PARSE_SYNTAX_ERROR", parameters={"error": where, "hint": ""},
                          origin=Origin(line, col, sql_text=self.original))

    def expect_kw(self, *words: str) -> None:
        if not self.accept_kw(*words):
            raise self.error()

    def expect_op(self, op: str) -> None:
        if not self.accept_op(op):
            raise self.error()

    def end(self) -> None:
        if self.peek() is not None:
            raise self.error()

    def position(self, tok: _Tok) -> tuple[int, int]:
        line = self.original.count("\n", 0, tok.start) + 1
        return line, tok.start - (self.original.rfind("\n", 0, tok.start) + 1)

    def ident(self) -> str:
        t = self.peek()
        if t is None or t.kind != "ident":
            raise self.error()
        self.i += 1
        return t.value

    def name(self) -> tuple[tuple[str, ...], tuple[int, int]]:
        """A (multi-part) name and the position of its first part."""
        t = self.peek()
        if t is None or t.kind != "ident":
            raise self.error()
        parts = [self.ident()]
        while self.at_op("."):
            self.i += 1
            parts.append(self.ident())
        return tuple(parts), self.position(t)

    def string(self) -> str:
        t = self.peek()
        if t is None or t.kind != "str":
            raise self.error()
        self.i += 1
        return t.value

    def property_key(self) -> str:
        t = self.peek()
        if t is not None and t.kind == "str":
            self.i += 1
            return t.value
        parts = [self.ident()]
        while self.accept_op("."):
            parts.append(self.ident())
        return ".".join(parts)

    def property_value(self) -> str:
        t = self.peek()
        if t is None:
            raise self.error()
        if t.kind == "str":
            self.i += 1
            return t.value
        if t.kind == "ident" and re.fullmatch(r"[0-9]+(\.[0-9]*)?|[A-Za-z_]\w*", t.text):
            self.i += 1
            v = t.text
            if t.kw("TRUE", "FALSE"):
                v = v.lower()
            return v
        if t.kind == "op" and t.text in "+-.":
            self.i += 1
            nxt = self.peek()
            if nxt is None or nxt.kind != "ident":
                raise self.error()
            self.i += 1
            return t.text + nxt.text
        raise self.error()

    def property_list(self, values: bool = True) -> tuple[tuple[str, str], ...]:
        """``(k [=] v, ...)`` (``values`` false: ``(k, ...)``, the values empty)."""
        self.expect_op("(")
        out = []
        while True:
            key = self.property_key()
            value = ""
            if values:
                self.accept_op("=")
                value = self.property_value()
            elif self.accept_op("="):  # ('k' = 'v') in UNSET: Spark rejects values
                raise self.error()
            out.append((key, value))
            if not self.accept_op(","):
                break
        self.expect_op(")")
        return tuple(out)

    # -- column definitions ---------------------------------------------------------------------
    def data_type(self) -> T.DataType:
        start_tok = self.peek()
        if start_tok is None or start_tok.kind != "ident":
            raise self.error()
        depth = 0
        j = self.i
        while j < len(self.toks):
            t = self.toks[j]
            if t.kind == "op" and t.text in "<(":
                depth += 1
            elif t.kind == "op" and t.text in ">)":
                if depth == 0:
                    break
                depth -= 1
            elif depth == 0 and (t.kind == "op" and t.text == "," or j > self.i and t.kw(
                    "NOT", "COMMENT", "DEFAULT", "GENERATED", "NULL", "COLLATE", "PRIMARY")):
                break
            j += 1
        end = self.toks[j - 1].start + len(self.toks[j - 1].text)
        text = self.original[start_tok.start:end]
        try:
            dt = exp.DataType.build(text, dialect=EmberSpark)
        except (SqlglotParseError, TokenError, ValueError):
            raise self.error() from None
        self.i = j
        return convert_data_type(dt)

    def column(self) -> D.ColumnDefinition:
        name = self.ident()
        self.accept_op(":")
        dt = self.data_type()
        nullable, comment, default = True, None, None
        while True:
            if self.accept_kws("NOT", "NULL"):
                nullable = False
            elif self.accept_kw("COMMENT"):
                comment = self.string()
            elif self.accept_kw("DEFAULT"):
                default = self.default_text()
            elif self.at_kw("GENERATED", "COLLATE", "PRIMARY"):
                raise UnsupportedError(
                    f"The column option {self.peek().text.upper()} is not supported yet",
                    error_class="UNSUPPORTED_FEATURE")
            else:
                break
        return D.ColumnDefinition(name, dt, nullable, comment, default)

    def default_text(self) -> str:
        """A ``DEFAULT`` expression's text as written: up to the next top-level ``,``, ``)``,
        ``COMMENT`` or ``NOT NULL``."""
        start = self.peek()
        if start is None:
            raise self.error()
        depth, j = 0, self.i
        while j < len(self.toks):
            t = self.toks[j]
            if t.kind == "op" and t.text == "(":
                depth += 1
            elif t.kind == "op" and t.text == ")":
                if depth == 0:
                    break
                depth -= 1
            elif depth == 0 and (t.kind == "op" and t.text == "," or t.kw("COMMENT", "NOT")):
                break
            j += 1
        if j == self.i:
            raise self.error()
        last = self.toks[j - 1]
        self.i = j
        return self.original[start.start:last.start + len(last.text)]

    def columns(self) -> tuple[D.ColumnDefinition, ...]:
        self.expect_op("(")
        cols = [self.column()]
        while self.accept_op(","):
            cols.append(self.column())
        self.expect_op(")")
        return tuple(cols)

    def ident_list(self) -> tuple[str, ...]:
        self.expect_op("(")
        out = [self.ident()]
        while self.accept_op(","):
            out.append(self.ident())
        self.expect_op(")")
        return tuple(out)

    def query_rest(self) -> L.LogicalPlan:
        t = self.peek()
        assert t is not None
        return self.parse_query(_blank(self.original[:t.start]) + self.original[t.start:])

    # -- statements -----------------------------------------------------------------------------
    def statement(self) -> L.Command:
        if self.accept_kw("CREATE"):
            replace = self.accept_kws("OR", "REPLACE")
            external = self.accept_kw("EXTERNAL")
            if self.accept_kw("TABLE"):
                return self.create_table(replace, external)
            self.expect_kw("DATABASE", "SCHEMA", "NAMESPACE")
            return self.create_database()
        if self.accept_kw("DROP"):
            if self.accept_kw("TABLE"):
                ie = self.accept_kws("IF", "EXISTS")
                parts, pos = self.name()
                self.accept_kw("PURGE")
                self.end()
                return D.DropTable(parts, ie, pos)
            self.expect_kw("DATABASE", "SCHEMA", "NAMESPACE")
            ie = self.accept_kws("IF", "EXISTS")
            parts, _ = self.name()
            cascade = self.accept_kw("CASCADE")
            if not cascade:
                self.accept_kw("RESTRICT")
            self.end()
            return D.DropDatabase(".".join(parts), ie, cascade)
        if self.accept_kw("USE"):
            self.accept_kw("DATABASE", "SCHEMA", "NAMESPACE")
            parts, _ = self.name()
            self.end()
            return D.UseDatabase(parts)
        if self.accept_kw("TRUNCATE"):
            self.expect_kw("TABLE")
            parts, pos = self.name()
            spec = self.partition_spec() if self.accept_kw("PARTITION") else None
            self.end()
            return D.TruncateTable(parts, pos, spec)
        if self.accept_kw("MSCK"):
            self.expect_kw("REPAIR")
            self.expect_kw("TABLE")
            parts, pos = self.name()
            if self.accept_kw("ADD", "DROP", "SYNC"):
                self.expect_kw("PARTITIONS")
            self.end()
            return D.RecoverPartitions(parts, "MSCK REPAIR TABLE", pos)
        if self.accept_kw("ALTER"):
            return self.alter()
        if self.accept_kw("SHOW"):
            return self.show()
        self.expect_kw("DESC", "DESCRIBE")
        self.expect_kw("DATABASE", "SCHEMA", "NAMESPACE")
        extended = self.accept_kw("EXTENDED")
        parts, _ = self.name()
        self.end()
        return D.DescribeDatabase(".".join(parts), extended)

    def create_table(self, replace: bool, external: bool) -> D.CreateTable:
        ine = self.accept_kws("IF", "NOT", "EXISTS")
        parts, pos = self.name()
        columns = self.columns() if self.at_op("(") and not self._query_in_parens() else None
        provider = None
        if self.accept_kw("USING"):
            provider = self.ident().lower()
        options: tuple[tuple[str, str], ...] = ()
        partitions: tuple[str, ...] = ()
        location = comment = None
        properties: tuple[tuple[str, str], ...] = ()
        bucket_spec = None
        seen: set[str] = set()
        while True:
            t = self.peek()
            if t is None:
                break
            clause = None
            if self.accept_kw("OPTIONS"):
                clause, options = "OPTIONS", self.property_list()
            elif self.accept_kws("PARTITIONED", "BY"):
                clause, partitions = "PARTITIONED BY", self.ident_list()
            elif self.accept_kw("LOCATION"):
                clause, location = "LOCATION", self.string()
            elif self.accept_kw("COMMENT"):
                clause, comment = "COMMENT", self.string()
            elif self.accept_kw("TBLPROPERTIES"):
                clause, properties = "TBLPROPERTIES", self.property_list()
            elif self.accept_kws("CLUSTERED", "BY"):
                clause, bucket_cols = "CLUSTERED BY", self.ident_list()
                sort_cols: tuple[str, ...] = ()
                if self.accept_kws("SORTED", "BY"):
                    sort_cols = self.sort_list()
                self.expect_kw("INTO")
                n = self.peek()
                if n is None or not n.text.isdigit():
                    raise self.error()
                self.i += 1
                self.expect_kw("BUCKETS")
                bucket_spec = (int(n.text), bucket_cols, sort_cols)
            elif t.kw("CLUSTER", "SORTED", "STORED", "ROW", "SKEWED"):
                raise UnsupportedError(f"CREATE TABLE ... {t.text.upper()} is not supported yet",
                                       error_class="UNSUPPORTED_FEATURE")
            else:
                break
            if clause in seen:
                raise ParseError(
                    f"Found duplicate clauses: {clause}.", error_class="DUPLICATE_CLAUSES",
                    parameters={"clauseName": clause},
                    origin=Origin(*self.position(t), sql_text=self.original))
            seen.add(clause)
        query = None
        if self.accept_kw("AS") or self.at_kw("SELECT", "WITH", "VALUES", "FROM", "TABLE") \
                or self.at_op("("):
            if self.peek() is None:
                raise self.error()
            query = self.query_rest()
        else:
            self.end()
        if external and location is None:
            raise ParseError(
                "Operation not allowed: CREATE EXTERNAL TABLE must be accompanied by LOCATION.",
                error_class="_LEGACY_ERROR_TEMP_0035",
                parameters={"message": "CREATE EXTERNAL TABLE must be accompanied by LOCATION"},
                origin=Origin(1, 0, sql_text=self.original))
        return D.CreateTable(parts, columns, provider, options, partitions, location, comment,
                             properties, ine, replace, external, query, pos, bucket_spec)

    def sort_list(self) -> tuple[str, ...]:
        self.expect_op("(")
        out = []
        while True:
            out.append(self.ident())
            if self.at_kw("DESC"):
                raise UnsupportedError("SORTED BY ... DESC is not supported",
                                       error_class="UNSUPPORTED_FEATURE")
            self.accept_kw("ASC")
            if not self.accept_op(","):
                break
        self.expect_op(")")
        return tuple(out)

    def partition_spec(self) -> tuple[tuple[str, str | None], ...]:
        """``PARTITION (k = v, ...)`` (the PARTITION keyword already read): values as strings,
        None for ``NULL``."""
        self.expect_op("(")
        out = []
        while True:
            key = self.ident()
            if not self.accept_op("="):
                raise ParseError(
                    f"Invalid SQL syntax: Partition key {quote_ident(key)} must set value.",
                    error_class="INVALID_SQL_SYNTAX.EMPTY_PARTITION_VALUE",
                    parameters={"partKey": quote_ident(key)},
                    origin=Origin(1, 0, sql_text=self.original))
            t = self.peek()
            if t is None:
                raise self.error()
            if t.kind == "ident" and self.peek(1) is not None and self.peek(1).kind == "str" \
                    and t.kw("TIMESTAMP", "DATE", "TIMESTAMP_NTZ", "TIMESTAMP_LTZ"):
                self.i += 1
            value = None if t.kw("NULL") else self.property_value()
            if value is None:
                self.i += 1
            out.append((key, value))
            if not self.accept_op(","):
                break
        self.expect_op(")")
        return tuple(out)

    def _query_in_parens(self) -> bool:
        t = self.peek(1)
        return t is not None and t.kw("SELECT", "WITH", "VALUES", "FROM")

    def create_database(self) -> D.CreateDatabase:
        ine = self.accept_kws("IF", "NOT", "EXISTS")
        parts, _ = self.name()
        location = comment = None
        properties: tuple[tuple[str, str], ...] = ()
        while self.peek() is not None:
            if self.accept_kw("COMMENT"):
                comment = self.string()
            elif self.accept_kw("LOCATION"):
                location = self.string()
            elif self.accept_kw("WITH"):
                self.expect_kw("DBPROPERTIES", "PROPERTIES")
                properties = self.property_list()
            elif self.at_kw("DEFAULT"):
                raise self.schema_collation()
            else:
                raise self.error()
        return D.CreateDatabase(".".join(parts), ine, location, comment, properties)

    def schema_collation(self) -> ParseError:
        return ParseError("The feature is not supported: Default collation for the specified "
                          "schema.", error_class="UNSUPPORTED_FEATURE.SCHEMA_LEVEL_COLLATIONS",
                          origin=Origin(1, 0, sql_text=self.original))

    def alter(self) -> L.Command:
        if self.accept_kw("DATABASE", "SCHEMA", "NAMESPACE"):
            self.name()
            if self.at_kw("DEFAULT"):
                raise self.schema_collation()
            t = self.peek()
            raise UnsupportedError(
                f"ALTER SCHEMA ... {t.text.upper() if t else ''} is not supported yet",
                error_class="UNSUPPORTED_FEATURE")
        is_view = self.accept_kw("VIEW")
        if not is_view:
            self.expect_kw("TABLE")
        parts, pos = self.name()
        if self.accept_kws("RENAME", "TO"):
            new, _ = self.name()
            self.end()
            return D.RenameTable(parts, new, is_view, pos)
        if not is_view and self.at_kw("ADD") and (
                self.peek(1) is not None and self.peek(1).kw("PARTITION", "IF")):
            self.i += 1
            ine = self.accept_kws("IF", "NOT", "EXISTS")
            specs = []
            while self.accept_kw("PARTITION"):
                specs.append(self.partition_spec())
                if self.at_kw("LOCATION"):
                    raise UnsupportedError("ADD PARTITION ... LOCATION is not supported yet",
                                           error_class="UNSUPPORTED_FEATURE")
            if not specs:
                raise self.error()
            self.end()
            return D.AddPartitions(parts, tuple(specs), ine, pos)
        if not is_view and self.at_kw("DROP") and self.peek(1) is not None and self.peek(1).kw(
                "PARTITION", "IF"):
            self.i += 1
            ie = self.accept_kws("IF", "EXISTS")
            self.expect_kw("PARTITION")
            specs = [self.partition_spec()]
            while self.accept_op(","):
                self.expect_kw("PARTITION")
                specs.append(self.partition_spec())
            self.accept_kw("PURGE")
            self.end()
            return D.DropPartitions(parts, tuple(specs), ie, pos)
        if not is_view and self.accept_kw("PARTITION"):
            spec = self.partition_spec()
            if self.accept_kws("RENAME", "TO"):
                self.expect_kw("PARTITION")
                new_spec = self.partition_spec()
                self.end()
                return D.RenamePartition(parts, spec, new_spec, pos)
            t = self.peek()
            raise UnsupportedError(
                f"ALTER TABLE ... PARTITION (...) {t.text.upper() if t else ''} is not supported "
                "yet (Ember's partitions are the directories under the table's location)",
                error_class="UNSUPPORTED_FEATURE")
        if not is_view and self.accept_kws("RECOVER", "PARTITIONS"):
            self.end()
            return D.RecoverPartitions(parts, "ALTER TABLE RECOVER PARTITIONS", pos)
        if not is_view and self.accept_kws("SET", "LOCATION"):
            location = self.string()
            self.end()
            return D.SetTableLocation(parts, location, pos)
        if not is_view and self.accept_kw("ALTER", "CHANGE"):
            return self.alter_column(parts, pos, hive=self.toks[self.i - 1].kw("CHANGE"))
        if not is_view and self.accept_kw("ADD"):
            self.expect_kw("COLUMN", "COLUMNS")
            if self.at_op("("):
                cols = self.columns()
            else:
                cols = [self.column()]
                while self.accept_op(","):
                    cols.append(self.column())
                cols = tuple(cols)
            self.end()
            return D.AddColumns(parts, cols, pos)
        if self.accept_kws("SET", "TBLPROPERTIES"):
            props = self.property_list()
            self.end()
            return D.SetTableProperties(parts, props, is_view, pos)
        if self.accept_kws("UNSET", "TBLPROPERTIES"):
            ie = self.accept_kws("IF", "EXISTS")
            keys = tuple(k for k, _ in self.property_list(values=False))
            self.end()
            return D.UnsetTableProperties(parts, keys, ie, is_view, pos)
        t = self.peek()
        raise UnsupportedError(
            f"ALTER {'VIEW' if is_view else 'TABLE'} ... {t.text.upper() if t else ''} is not "
            "supported yet", error_class="UNSUPPORTED_FEATURE")

    def alter_column(self, parts: tuple[str, ...], pos: tuple[int, int],
                     hive: bool) -> D.AlterColumn:
        """``ALTER|CHANGE [COLUMN] col ...`` (the ALTER/CHANGE keyword already read)."""
        self.accept_kw("COLUMN")
        column = ".".join(self.name()[0])
        new_name = data_type = comment = default = None
        not_null = False
        if hive and self.peek() is not None and self.peek().kind == "ident" and not self.at_kw(
                "TYPE", "COMMENT", "FIRST", "AFTER", "SET", "DROP"):
            new_name = self.ident()  # Hive's CHANGE col new_name type
            data_type = self.data_type()
        while self.peek() is not None:
            if self.accept_kw("TYPE"):
                data_type = self.data_type()
            elif self.accept_kw("COMMENT"):
                comment = self.string()
            elif self.accept_kws("SET", "NOT", "NULL") or self.accept_kws("DROP", "NOT", "NULL"):
                not_null = True
            elif self.accept_kws("SET", "DEFAULT"):
                default = self.default_text()
            elif self.accept_kws("DROP", "DEFAULT"):
                default = ""
            elif self.at_kw("FIRST", "AFTER"):
                raise UnsupportedError("ALTER TABLE ... ALTER COLUMN ... FIRST|AFTER is not "
                                       "supported yet", error_class="UNSUPPORTED_FEATURE")
            else:
                raise self.error()
        return D.AlterColumn(parts, column, new_name, data_type, comment, default, not_null, pos)

    def show(self) -> L.Command:
        if self.accept_kw("PARTITIONS"):
            parts, pos = self.name()
            spec = self.partition_spec() if self.accept_kw("PARTITION") else None
            self.end()
            return D.ShowPartitions(parts, spec, pos)
        if self.accept_kw("TABLE"):
            self.expect_kw("EXTENDED")
            db = None
            if self.accept_kw("FROM", "IN"):
                db, _ = self.name()
            self.expect_kw("LIKE")
            pattern = self.string()
            spec = self.partition_spec() if self.accept_kw("PARTITION") else None
            self.end()
            return D.ShowTables(db, pattern, True, spec)
        if self.accept_kw("TABLES"):
            db = None
            if self.accept_kw("FROM", "IN"):
                db, _ = self.name()
            pattern = self.show_pattern()
            return D.ShowTables(db, pattern)
        if self.accept_kw("DATABASES", "SCHEMAS", "NAMESPACES"):
            return D.ShowDatabases(self.show_pattern())
        if self.accept_kw("COLUMNS"):
            self.expect_kw("FROM", "IN")
            parts, pos = self.name()
            db = None
            if self.accept_kw("FROM", "IN"):
                db = ".".join(self.name()[0])
            self.end()
            return D.ShowColumns(parts, db, pos)
        if self.accept_kw("CREATE"):
            self.expect_kw("TABLE")
            parts, pos = self.name()
            serde = self.accept_kws("AS", "SERDE")
            self.end()
            return D.ShowCreateTable(parts, serde, pos)
        self.expect_kw("TBLPROPERTIES")
        parts, pos = self.name()
        key = None
        if self.at_op("("):
            self.i += 1
            key = self.property_key()
            self.expect_op(")")
        self.end()
        return D.ShowTableProperties(parts, key, pos)

    def show_pattern(self) -> str | None:
        self.accept_kw("LIKE")
        t = self.peek()
        if t is None:
            return None
        pattern = self.string()
        self.end()
        return pattern


def parse_columns(original: str, start: int) -> tuple[D.ColumnDefinition, ...]:
    """The column definitions ``(name type, ...)`` starting at offset ``start``."""
    return _Parser(original, _blank(original[:start]) + original[start:],
                   lambda q: None).columns()


def quote_ident(name: str) -> str:
    return "`" + name.replace("`", "``") + "`"


def try_parse_describe_partition(original: str, text: str, start: int,
                                 extended: bool) -> L.Command | None:
    """``DESC [TABLE] [EXTENDED] name PARTITION (...)`` (``start``: the offset of the name)."""
    if not re.search(r"\bPARTITION\s*\(", text[start:], re.IGNORECASE):
        return None
    p = _Parser(original, _blank(text[:start]) + text[start:], lambda q: None)
    parts, pos = p.name()
    p.expect_kw("PARTITION")
    spec = p.partition_spec()
    if p.at_kw("AS"):
        raise UnsupportedError("DESCRIBE ... AS JSON is not supported yet",
                               error_class="UNSUPPORTED_FEATURE")
    p.end()
    return D.DescribePartition(parts, spec, extended, pos)


def _blank(text: str) -> str:
    return "".join(ch if ch == "\n" else " " for ch in text)


def try_parse_ddl(original: str, text: str,
                  parse_query: Callable[[str], L.LogicalPlan]) -> L.Command | None:
    """The catalog command of statement ``text`` (comments blanked, same length as
    ``original``), or None when it is not one."""
    if not _STARTS.match(text):
        return None
    return _Parser(original, text, parse_query).statement()
