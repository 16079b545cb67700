"""The sqlglot dialect Ember parses Spark SQL with.

sqlglot's ``spark`` dialect is tuned for *transpiling*: it rewrites what it reads into canonical
forms (``CAST`` becomes ``TRY_CAST``, ``t1 JOIN t2`` gains ``ON TRUE``, comma joins become CROSS
joins, ``+x`` disappears, functions become typed nodes such as ``ApproxQuantile``).  Ember needs the
query *as written* so it can build Spark's own unresolved plan, so this dialect turns those rewrites
off:

- ``CAST`` / ``::`` parse to ``exp.Cast`` (Spark 4 runs with ANSI casts), ``try_cast`` to
  ``exp.TryCast``.
- Joins keep their written type: no implicit ``ON TRUE``; a comma join is marked with
  ``meta["comma"] = True`` and has no kind (Spark: an inner join without condition).
- Unary ``+`` is kept as :class:`UnaryPlus`.
- Every ``name(args)`` call is an ``exp.Anonymous`` carrying the name as written, so the analyzer's
  function registry (not sqlglot) decides what a name means.
- Suffixed numeric literals (``1L``, ``2.5BD``) stay one NUMBER token with the suffix in its text
  (sqlglot would turn them into casts); :mod:`ember.sql.literals` types them Spark's way.

``LEGACY_SETOPS`` is the same dialect with ``spark.sql.legacy.setopsPrecedence.enabled=true``
semantics: INTERSECT no longer binds tighter than UNION/EXCEPT.
"""

from __future__ import annotations

import typing as t

from sqlglot import exp
from sqlglot.dialects.spark import Spark
from sqlglot.tokens import Token, TokenType

__all__ = ["EmberSpark", "EmberSparkLegacySetops", "UnaryPlus"]


class UnaryPlus(exp.Unary):
    """``+x`` (Spark keeps it as ``UnaryPositive``)."""


# Functions whose sqlglot builders are needed for syntax (not semantics): keep none of them.
# Special forms (CAST, EXTRACT, TRIM ...) live in FUNCTION_PARSERS and are unaffected.
_KEEP_FUNCTIONS: frozenset[str] = frozenset()
# Spark aggregates sqlglot parses into its own nodes (``max_by`` -> ``ArgMax``, ``percentile`` ->
# ``Quantile`` losing the frequency argument, ``listagg`` / ``string_agg`` -> ``GroupConcat``,
# losing the name): plain calls, named and resolved by the registry.
_PLAIN_CALLS: frozenset[str] = frozenset({"MAX_BY", "MIN_BY", "PERCENTILE", "PERCENTILE_APPROX",
                                          "APPROX_PERCENTILE", "LISTAGG", "STRING_AGG",
                                          "CHAR", "CHR", "DECODE", "INITCAP"})


def _merge_suffixed_numbers(tokens: list[Token], sql: str) -> list[Token]:
    """Hive's tokenizer expands ``1L`` into ``1 :: BIGINT`` (three tokens over one span); put it
    back together as one NUMBER token whose text is the literal as written (``1L``)."""
    out: list[Token] = []
    i, n = 0, len(tokens)
    while i < n:
        tok = tokens[i]
        if (
            tok.token_type == TokenType.NUMBER
            and i + 2 < n
            and tokens[i + 1].token_type == TokenType.DCOLON
            and tokens[i + 1].start == tok.start
            and tokens[i + 1].end == tok.end
        ):
            out.append(
                Token(TokenType.NUMBER, sql[tok.start : tok.end + 1], tok.line, tok.col,
                      tok.start, tok.end, tok.comments)
            )
            i += 3
            continue
        out.append(tok)
        i += 1
    return out


class _WindowCallAware(frozenset):
    """Query modifier tokens without WINDOW when the token after it is ``(``."""

    def __new__(cls, tokens: t.Any, parser: t.Any) -> "_WindowCallAware":
        out = super().__new__(cls, tokens)
        out.parser = parser
        return out

    def __contains__(self, token_type: object) -> bool:
        nxt = self.parser._next
        if (token_type is TokenType.WINDOW and nxt is not None
                and nxt.token_type is TokenType.L_PAREN):
            return False
        return super().__contains__(token_type)


class EmberSpark(Spark):
    """Spark SQL as written (see module docstring)."""

    INTERSECT_BINDS_TIGHTER_THAN_UNION_AND_EXCEPT = True

    class Tokenizer(Spark.Tokenizer):
        # Spark 4: a doubled quote inside a string literal is an escaped quote ('a''b' is a'b)
        STRING_ESCAPES = ["\\", "'", '"']

        def tokenize(self, sql: str) -> list[Token]:
            return _merge_suffixed_numbers(super().tokenize(sql), sql)

    class Parser(Spark.Parser):
        STRICT_CAST = True
        ADD_JOIN_ON_TRUE = False
        JOINS_HAVE_EQUAL_PRECEDENCE = False

        FUNCTIONS = {k: v for k, v in Spark.Parser.FUNCTIONS.items() if k in _KEEP_FUNCTIONS}
        # Spark has no ``ARRAY[1, 2]`` constructor: ``array(1, 2)[0]`` is a subscript of a call
        ARRAY_CONSTRUCTORS: t.ClassVar = {}
        # ``substr(s, 1, 2)`` stays a plain call so that it keeps its name (Spark's column name is
        # ``substr(s, 1, 2)``); ``SUBSTRING(s FROM 1 FOR 2)`` still needs its special form.
        FUNCTION_PARSERS = {k: v for k, v in Spark.Parser.FUNCTION_PARSERS.items()
                            if k != "SUBSTR" and k not in _PLAIN_CALLS}
        # ``any(p)`` is Spark's bool_or aggregate, a plain call (sqlglot reads a quantifier)
        NO_PAREN_FUNCTION_PARSERS = {k: v for k, v in
                                     Spark.Parser.NO_PAREN_FUNCTION_PARSERS.items() if k != "ANY"}

        # Spark's precedence of the bitwise operators: ``&`` binds tighter than ``^``, which
        # binds tighter than ``|`` (sqlglot reads them at one level, left to right); the
        # operators are parsed by _parse_bitwise below, the base level keeps shifts and ``||``
        BITWISE: t.ClassVar = {}
        _BITWISE_LEVELS = ((TokenType.PIPE, exp.BitwiseOr), (TokenType.CARET, exp.BitwiseXor),
                           (TokenType.AMP, exp.BitwiseAnd))

        def _parse_bitwise(self, level: int = 0) -> exp.Expression | None:
            if level == len(self._BITWISE_LEVELS):
                return super()._parse_bitwise()
            this = self._parse_bitwise(level + 1)
            token, cls = self._BITWISE_LEVELS[level]
            while this is not None and self._match(token):
                this = self.expression(cls(this=this, expression=self._parse_bitwise(level + 1)))
            return this

        UNARY_PARSERS = {
            **Spark.Parser.UNARY_PARSERS,
            TokenType.PLUS: lambda self: self.expression(UnaryPlus(this=self._parse_unary())),
        }

        def _parse_group(self, *args: t.Any, **kwargs: t.Any) -> exp.Group | None:
            # ``GROUP BY window(t, '10 seconds')``: a WINDOW followed by ``(`` is the window
            # function, not a WINDOW clause ending the grouping list
            self.QUERY_MODIFIER_TOKENS = _WindowCallAware(type(self).QUERY_MODIFIER_TOKENS, self)
            try:
                return super()._parse_group(*args, **kwargs)
            finally:
                del self.QUERY_MODIFIER_TOKENS

        def _parse_interval(self, *args: t.Any, **kwargs: t.Any) -> exp.Expression | None:
            # ``INTERVAL 1 DAY 2 HOURS`` comes back as an Add of Intervals: mark it so the AST
            # builder makes one multi-unit literal of it (not ``INTERVAL 1 DAY + INTERVAL 2 HOURS``)
            result = super()._parse_interval(*args, **kwargs)
            if isinstance(result, exp.Add):
                result.meta["multi_unit_interval"] = True
            return result

        def _parse_pivot_aggregation(self) -> exp.Expression | None:
            # Spark's pivotClause takes a namedExpressionSeq (``sum(a) + 1``, even a bare column,
            # which the analyzer refuses by name); sqlglot would accept only a function call. The
            # item ends at the next top-level ``,`` or ``FOR`` (``a FOR y IN (1)`` would otherwise
            # parse as an array comprehension): parse with the token stream cut there.
            depth, end = 0, None
            for i in range(self._index, self._tokens_size):
                tt = self._tokens[i].token_type
                if tt == TokenType.L_PAREN:
                    depth += 1
                elif tt == TokenType.R_PAREN:
                    if depth == 0:
                        break
                    depth -= 1
                elif depth == 0 and tt in (TokenType.FOR, TokenType.COMMA):
                    end = i
                    break
            if end is None or end == self._index:
                return super()._parse_pivot_aggregation()
            size = self._tokens_size
            self._tokens_size = end
            self._advance(0)
            try:
                item = self._parse_expression()
                if self._index != end:
                    self.raise_error("Expecting FOR")
            finally:
                self._tokens_size = size
                self._advance(0)
            return item

        def _parse_join(self, *args: t.Any, **kwargs: t.Any) -> exp.Join | None:
            comma = self._curr is not None and self._curr.token_type == TokenType.COMMA
            join = super()._parse_join(*args, **kwargs)
            if join is not None and comma:
                join.meta["comma"] = True
            return join


class EmberSparkLegacySetops(EmberSpark):
    """:class:`EmberSpark` with all set operators at equal precedence, left to right."""

    INTERSECT_BINDS_TIGHTER_THAN_UNION_AND_EXCEPT = False

    class Tokenizer(EmberSpark.Tokenizer):
        pass

    class Parser(EmberSpark.Parser):
        pass
