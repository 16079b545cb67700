"""sqlglot AST -> Ember's unresolved logical plan (Spark's ``AstBuilder``).

A SELECT is shaped exactly as Spark's parser shapes it::

    SELECT DISTINCT a, count(*) FROM t WHERE x GROUP BY a HAVING c ORDER BY 1 LIMIT 5

    Limit 5
    +- Sort [1 ASC NULLS FIRST], true
       +- Distinct
          +- UnresolvedHaving c
             +- Aggregate [a], [unresolvedalias('a), unresolvedalias('count(*))]
                +- Filter 'x
                   +- UnresolvedRelation [t]

Joins follow Spark's grammar: ``FROM a, b JOIN c`` is ``Join(a, Join(b, c))`` (each comma item is
its own join chain), comma and ``[INNER] JOIN`` without a condition are ``Inner``, ``CROSS JOIN``
is ``Cross``; ``USING``/``NATURAL`` give a :class:`UsingJoin`.

Every column reference carries ``origin=(line, column)`` (1-based line, 0-based column) of its
first identifier in the original SQL text, so the analyzer can point at it.
"""

from __future__ import annotations

import importlib
import re
from collections import deque
from collections.abc import Callable
from contextlib import contextmanager
from functools import partial
from typing import Any

from sqlglot import exp
from sqlglot.errors import SqlglotError

from ember import types as T
from ember.errors import AnalysisError, EmberError, ParseError, UnsupportedError, Origin
from ember.expressions.base import (
    Alias,
    Expression,
    Literal,
    SortOrder,
    UnresolvedAlias,
    UnresolvedAttribute,
    UnresolvedFunction,
    UnresolvedOrdinal,
    UnresolvedStar,
)
from ember.expressions import bitwise as _bitwise_module
from ember.expressions.grouping import BaseGroupingSets, Cube, GroupingSets, Rollup
from ember.expressions.generators import MultiAlias
from ember.expressions.higher_order import LambdaFunction, UnresolvedNamedLambdaVariable
from ember.expressions.json_functions import SchemaLiteral
from ember.expressions.registry import unresolved_routine
from ember.expressions.subquery import Exists, InSubquery, LateralSubquery, ScalarSubquery
from ember.expressions.windows import (
    CurrentRow,
    FrameType,
    SpecifiedWindowFrame,
    UnboundedFollowing,
    UnboundedPreceding,
    UnspecifiedFrame,
    WindowExpression,
    WindowSpecDefinition,
    WindowSpecReference,
)
from ember.plans.logical import nodes as L
from ember.plans.logical.join_type import JoinType, UsingJoin
from ember.sql.datatypes import convert_data_type
from ember.sql.dialect import EmberSpark, UnaryPlus
from ember.sql.literals import number_literal, typed_literal
from ember.expressions.intervals import interval_literal, multi_unit_interval

__all__ = ["AstBuilder", "AUTO_SUBQUERY_NAME"]

AUTO_SUBQUERY_NAME = "__auto_generated_subquery_name"

_TYPED_LITERAL_KEYWORD = re.compile(r"(?i)\b(date|timestamp|timestamp_ltz|timestamp_ntz)\s*$")


_MODULES = ("predicates", "arithmetic", "conditional", "cast")


class _Lazy:
    """``ember.expressions.<module>``, imported on first attribute access (those modules are
    owned by the expressions engineer and import the rest of the package)."""

    def __init__(self, name: str) -> None:
        self._name = name

    def __getattr__(self, attr: str) -> Any:
        module = importlib.import_module(f"ember.expressions.{self._name}")
        return getattr(module, attr)


_LAZY = tuple(_Lazy(m) for m in _MODULES)


#: Spark's generator table functions (``TableFunctionRegistry``): ``LATERAL gen(...)`` is a
#: lateral join with the generator's rows.
GENERATOR_TABLE_FUNCTIONS = frozenset({
    "explode", "explode_outer", "posexplode", "posexplode_outer", "inline", "inline_outer",
    "stack", "json_tuple"})


def _mods() -> tuple[Any, Any, Any, Any]:
    """(predicates, arithmetic, conditional, cast) modules, lazily imported."""
    return _LAZY  # type: ignore[return-value]


class _ReadArgs(dict):
    """A sqlglot node's ``args`` that records the keys the builder reads (``get``, ``[]``,
    ``in``), so that :meth:`AstBuilder.check_all_read` can refuse any clause sqlglot parsed and
    the builder never looked at (a clause dropped silently would return rows that ignore it)."""

    __slots__ = ("read",)

    def __init__(self, args: dict) -> None:
        super().__init__(args)
        self.read: set[str] = set()

    def get(self, key: str, default: Any = None) -> Any:
        self.read.add(key)
        return dict.get(self, key, default)

    def __getitem__(self, key: str) -> Any:
        self.read.add(key)
        return dict.__getitem__(self, key)

    def __contains__(self, key: object) -> bool:
        self.read.add(key)  # type: ignore[arg-type]
        return dict.__contains__(self, key)


#: Args that carry no meaning for Spark's AstBuilder: how an identifier was quoted, and the
#: output names sqlglot derives for a PIVOT in other dialects (Ember names them Spark's way).
_MEANINGLESS_ARGS: dict[type, frozenset[str]] = {
    exp.Identifier: frozenset({"quoted"}),
    # how sqlglot's Spark dialect would transpile ``/``, ``||`` and try_cast (Ember's Divide,
    # concat and TryCast carry Spark's semantics themselves)
    exp.Div: frozenset({"typed", "safe"}),
    exp.DPipe: frozenset({"safe"}),
    exp.TryCast: frozenset({"safe"}),
    # whether a type has parameters (``array<int>``): implied by its ``expressions``
    exp.DataType: frozenset({"nested"}),
    exp.Pivot: frozenset({"columns", "identify_pivot_strings", "prefixed_pivot_columns",
                          "pivot_column_naming"}),
}

#: How the guard names an unread arg in UNSUPPORTED_FEATURE (else ``<Node> <arg>``).
_CLAUSE_NAMES: dict[str, str] = {
    "sample": "TABLESAMPLE", "laterals": "LATERAL VIEW", "windows": "WINDOW clause",
    "qualify": "QUALIFY", "cluster": "CLUSTER BY", "distribute": "DISTRIBUTE BY",
    "sort": "SORT BY", "hint": "hints", "hints": "hints", "connect": "CONNECT BY",
    "prewhere": "PREWHERE", "into": "INTO", "locks": "FOR UPDATE", "settings": "SETTINGS",
    "options": "OPTIONS", "format": "FORMAT", "match": "MATCH_RECOGNIZE", "version": "time travel",
    "when": "time travel", "pivots": "PIVOT / UNPIVOT", "with_fill": "WITH FILL",
    "partition": "PARTITION", "ordinality": "WITH ORDINALITY", "operation_modifiers":
    "SELECT modifiers", "grouping_sets": "GROUP BY GROUPING SETS", "cube": "GROUP BY CUBE",
    "rollup": "GROUP BY ROLLUP", "totals": "WITH TOTALS", "all": "ALL",
    "except_": "* EXCEPT (columns)", "replace": "* REPLACE", "rename": "* RENAME",
}

#: Expressions sqlglot parses that Spark SQL has and Ember does not implement yet, by the name
#: UNSUPPORTED_FEATURE gives them.
_UNSUPPORTED_EXPRESSIONS: dict[type, str] = {
    exp.QueryTransform: "TRANSFORM ... USING (script transformation)",
    exp.Lateral: "LATERAL VIEW",
}


def _present(value: Any) -> bool:
    return value is not None and value is not False and value != []


#: functions whose second argument is a schema in DDL form, parsed here (Spark's fromDDL)
_SCHEMA_FUNCTIONS = frozenset({"from_json", "from_csv"})
#: ``timestampadd(UNIT, q, ts)`` / ``timestampdiff(UNIT, s, e)`` and their synonyms: the
#: registry's internal names for the forms whose first argument is a unit keyword
_UNIT_FUNCTIONS: dict[str, str] = {
    "timestampadd": "(timestampadd)", "dateadd": "(timestampadd)", "date_add": "(timestampadd)",
    "timestampdiff": "(timestampdiff)", "datediff": "(timestampdiff)",
    "date_diff": "(timestampdiff)",
}


class AstBuilder:
    """Converts one parsed statement.  ``source`` is the exact text sqlglot parsed (its token
    offsets index it); the first ``prefix_len`` characters of it (on line 1) are a wrapper added
    by the caller (``parse_expression`` parses ``"SELECT " + text``) and are not part of the
    user's text that positions and errors refer to.  ``time_zone`` is the session time zone at
    parse time (``spark.sql.session.timeZone``)."""

    def __init__(self, source: str, prefix_len: int = 0, time_zone: str = "UTC") -> None:
        self.source = source
        #: the session time zone TIMESTAMP literals without zone are read in
        self.time_zone = time_zone
        self.text = source[prefix_len:]
        self._prefix_len = prefix_len
        self._line_starts = [0] + [i + 1 for i, ch in enumerate(source) if ch == "\n"]
        #: the parameter names of the lambdas being built (innermost last)
        self._lambda_params: list[set[str]] = []

    # -- positions ------------------------------------------------------------------------------
    def position(self, offset: int) -> tuple[int, int]:
        """(1-based line, 0-based column) of character ``offset`` of the text."""
        lo, hi = 0, len(self._line_starts) - 1
        while lo < hi:
            mid = (lo + hi + 1) // 2
            if self._line_starts[mid] <= offset:
                lo = mid
            else:
                hi = mid - 1
        col = offset - self._line_starts[lo]
        if lo == 0:
            col = max(col - self._prefix_len, 0)
        return lo + 1, col

    def origin_of(self, node: exp.Expr | None) -> tuple[int, int] | None:
        """Position of the first token of ``node`` that sqlglot recorded."""
        if node is None:
            return None
        best: int | None = None
        for n in node.walk():
            start = n.meta.get("start") if n.meta else None
            if start is not None and (best is None or start < best):
                best = start
        return None if best is None else self.position(best)

    def unsupported(self, what: str, node: exp.Expr | None = None, *,
                    error_class: str | None = None, message: str | None = None
                    ) -> UnsupportedError:

        pos = self.origin_of(node)
        origin = Origin(pos[0], pos[1], sql_text=self.text) if pos else None
        return UnsupportedError(message or f"The SQL construct {what} is not supported by Ember.",
                                error_class=error_class,
                                parameters={"construct": what}, origin=origin)

    # -- the unread-clause guard ----------------------------------------------------------------
    def build(self, root: exp.Expr, convert: Callable[[exp.Expr], Any]) -> Any:
        """``convert(root)`` (``self.query`` / ``self.expr``), refusing any clause of ``root``
        it did not read (:meth:`check_all_read`)."""
        self.track_reads(root)
        out = convert(root)
        self.check_all_read(root)
        return out

    @staticmethod
    def track_reads(root: exp.Expr) -> None:
        """Make every node of ``root`` record which of its args are read (see :class:`_ReadArgs`).
        Call before building, then :meth:`check_all_read` after."""
        for n in root.walk():
            if not isinstance(n.args, _ReadArgs):
                n.args = _ReadArgs(n.args)

    def check_all_read(self, root: exp.Expr) -> None:
        """Raise UNSUPPORTED_FEATURE naming the first clause (outermost first) that sqlglot parsed
        and the builder never read: Ember either implements a clause or refuses it, it never
        returns rows that ignore it."""
        queue = deque([root])
        while queue:  # breadth first, not into the meaningless args
            n = queue.popleft()
            args = n.args
            ignored = _MEANINGLESS_ARGS.get(type(n), frozenset())
            for key, value in dict.items(args):
                if key in ignored or not _present(value):
                    continue
                if isinstance(args, _ReadArgs) and key not in args.read:
                    what = _CLAUSE_NAMES.get(key) or f"{type(n).__name__} {key}"
                    at = value if isinstance(value, exp.Expr) else (
                        value[0] if isinstance(value, list) and value
                        and isinstance(value[0], exp.Expr) else n)
                    raise self.unsupported(what, at)
                for v in value if isinstance(value, list) else (value,):
                    if isinstance(v, exp.Expr):
                        queue.append(v)

    @staticmethod
    def mark_read(node: exp.Expr) -> None:
        """Every arg of ``node`` counts as read (for code that reads them by iterating)."""
        if isinstance(node.args, _ReadArgs):
            node.args.read.update(node.args.keys())

    # ===========================================================================================
    # Queries

    def query(self, node: exp.Expr) -> L.LogicalPlan:
        """A query: SELECT, set operation, VALUES, or a parenthesised query."""
        match node:
            case exp.Select():
                plan = self.select(node)
            case exp.SetOperation():
                plan = self.set_operation(node)
            case exp.Values():
                plan = self.values(node)
            case exp.Subquery() if node.args.get("alias") is None and self._is_query(node.this):
                plan = self.query(node.this)
                plan = self.query_modifiers(node, plan)
            case exp.Table() if isinstance(node.this, exp.Identifier) and not node.args.get("joins"):
                # `TABLE t` or a bare table used as a query
                plan = self.relation(node)
            case _:
                raise self.unsupported(type(node).__name__.upper(), node)
        return self.with_ctes(node, plan)

    @staticmethod
    def _is_query(node: exp.Expr | None) -> bool:
        return isinstance(node, (exp.Select, exp.SetOperation, exp.Values)) or (
            isinstance(node, exp.Subquery)
            and node.args.get("alias") is None
            and AstBuilder._is_query(node.this)
        )

    def with_ctes(self, node: exp.Expr, plan: L.LogicalPlan) -> L.LogicalPlan:
        with_ = node.args.get("with_") or node.args.get("with")
        if not with_:
            return plan
        if with_.args.get("recursive"):
            raise self.unsupported("WITH RECURSIVE", with_)
        names, plans = [], []
        for cte in with_.expressions:
            alias = cte.args.get("alias")
            name = alias.name
            cte_plan = self.query(cte.this)
            cols = tuple(c.name for c in alias.columns) if alias.columns else ()
            if cols:
                cte_plan = L.UnresolvedSubqueryColumnAliases(cols, cte_plan)
            names.append(name)
            plans.append(L.SubqueryAlias((name,), cte_plan))
        return L.UnresolvedWith(plan, tuple(names), tuple(plans))

    def set_operation(self, node: exp.SetOperation) -> L.LogicalPlan:
        if node.args.get("by_name") or node.args.get("side") or node.args.get("kind"):
            raise self.unsupported(f"{node.key.upper()} BY NAME / CORRESPONDING", node)
        left = self.query(node.this)
        right = self.query(node.expression)
        distinct = node.args.get("distinct", True)
        match node:
            case exp.Union():
                plan: L.LogicalPlan = L.Union((left, right))
                if distinct:
                    plan = L.Distinct(plan)
            case exp.Intersect():
                plan = L.Intersect(left, right, is_all=not distinct)
            case exp.Except():
                plan = L.Except(left, right, is_all=not distinct)
            case _:  # pragma: no cover
                raise self.unsupported(node.key.upper(), node)
        return self.query_modifiers(node, plan)

    def select(self, node: exp.Select) -> L.LogicalPlan:
        for key in ("pivots", "connect", "prewhere", "into", "locks", "sample", "kind"):
            value = node.args.get(key)
            if value:
                at = value if isinstance(value, exp.Expr) else (
                    value[0] if isinstance(value, list) else node)
                raise self.unsupported(_CLAUSE_NAMES.get(key, key.upper()), at)
        if node.args.get("distinct") is not None and node.args["distinct"].args.get("on"):
            raise self.unsupported("DISTINCT ON", node)

        # FROM (+ hints over it)
        from_ = node.args.get("from_") or node.args.get("from")
        plan: L.LogicalPlan
        if from_ is None:
            plan = L.OneRowRelation()
            if node.args.get("joins"):
                raise self.unsupported("JOIN without FROM", node)
        else:
            plan = self.from_clause(from_.this, node.args.get("joins") or [])
        hint = node.args.get("hint")
        if hint is not None:
            plan = self.hints(hint, plan)
        for lateral in node.args.get("laterals") or []:
            plan = self.lateral_view(lateral, plan)

        where = node.args.get("where")
        if where is not None:
            plan = L.Filter(self.expr(where.this), plan)

        select_list = tuple(self.select_item(e) for e in node.expressions)
        group = node.args.get("group")
        having = node.args.get("having")
        if group is not None:
            plan = L.Aggregate(self.group_by(group), select_list, plan)
        elif having is not None:
            plan = L.Aggregate((), select_list, plan)
        else:
            plan = L.Project(select_list, plan)
        if having is not None:
            plan = L.UnresolvedHaving(self.having_condition(having.this), plan)
        qualify = node.args.get("qualify")
        if qualify is not None:
            plan = self.qualify(node, qualify, plan)
        if node.args.get("distinct") is not None:
            plan = L.Distinct(plan)
        windows = node.args.get("windows")
        if windows:
            plan = self.window_clause(windows, plan)
        return self.query_modifiers(node, plan)

    def group_by(self, group: exp.Group) -> tuple[Expression, ...]:
        """GROUP BY items (Spark's ``visitAggregationClause``): expressions and ordinals,
        ``CUBE`` / ``ROLLUP`` / ``GROUPING SETS`` (nested ones inside GROUPING SETS give their
        grouping sets), Hive's ``GROUP BY a, b WITH ROLLUP | WITH CUBE | GROUPING SETS (...)``,
        and ``GROUP BY ALL`` (the name ``ALL``, which the analyzer resolves)."""
        if group.args.get("totals"):
            raise self.unsupported("WITH TOTALS", group)
        if group.args.get("all"):
            groups: tuple[Expression, ...] = (UnresolvedAttribute(("ALL",), self.origin_of(group)),)
        else:
            groups = tuple(self.group_item(e) for e in group.expressions)
        hive = [(k, v) for k in ("rollup", "cube", "grouping_sets") for v in group.args.get(k) or []]
        if not hive:
            return groups
        if not groups and hive[0][0] != "grouping_sets":
            # Hive's WITH ROLLUP / WITH CUBE follow at least one expression in Spark's grammar
            raise self._syntax_error_at(group, f"GROUP BY WITH {hive[0][0].upper()} without "
                                               "expressions")
        cube_or_rollup = next((e for e in group.expressions
                               if isinstance(e, (exp.Cube, exp.Rollup))), None)
        if len(hive) == 1 and cube_or_rollup is not None:
            # before a Hive suffix the items are plain expressions: ``CUBE(a, b)`` is a call of
            # a function Spark does not have
            raise unresolved_routine(cube_or_rollup.key.upper())
        if len(hive) > 1 or any(isinstance(g, BaseGroupingSets) for g in groups):
            raise self._syntax_error_at(group, "one GROUPING SETS / WITH ROLLUP / WITH CUBE")
        kind, node = hive[0]
        self.mark_read(node)
        if kind == "grouping_sets":
            return (self._grouping_sets(node, groups),)
        indexes = tuple((i,) for i in range(len(groups)))
        return ((Rollup if kind == "rollup" else Cube)(indexes, groups),)

    def _grouping_set(self, e: exp.Expr) -> list[Expression]:
        """One element of CUBE / ROLLUP / GROUPING SETS: ``(a, b)``, ``(a)``, ``()`` or ``a``."""
        if isinstance(e, exp.Tuple):
            self.mark_read(e)
            return [self.ordinal_or_expr(x) for x in e.expressions]
        if isinstance(e, exp.Paren):
            self.mark_read(e)
            return [self.ordinal_or_expr(e.this)]
        return [self.ordinal_or_expr(e)]

    @staticmethod
    def _indexed(sets: list[list[Expression]]) -> tuple[tuple[tuple[int, ...], ...],
                                                         tuple[Expression, ...]]:
        flat: list[Expression] = []
        indexes = []
        for s in sets:
            indexes.append(tuple(range(len(flat), len(flat) + len(s))))
            flat += s
        return tuple(indexes), tuple(flat)

    def _grouping_sets(self, node: exp.GroupingSets, user_given: tuple[Expression, ...] = ()
                       ) -> GroupingSets:
        sets: list[list[Expression]] = []
        for e in node.expressions:
            if isinstance(e, (exp.Cube, exp.Rollup)):
                sets += self.group_item(e).selected_group_by_exprs
            else:
                sets.append(self._grouping_set(e))
        indexes, flat = self._indexed(sets)
        return GroupingSets(indexes, flat, user_given)

    def group_item(self, e: exp.Expr) -> Expression:
        """One GROUP BY item."""
        if isinstance(e, (exp.Cube, exp.Rollup)):
            self.mark_read(e)
            if not e.expressions:  # ``ROLLUP()`` is a function call to Spark's grammar
                raise unresolved_routine(e.key.lower())
            sets = [self._grouping_set(x) for x in e.expressions]
            if not all(sets):
                kind = e.key.upper()
                pos = self.origin_of(e)
                raise ParseError(f"Empty set in {kind} grouping sets is not supported.",
                                 error_class="_LEGACY_ERROR_TEMP_0051",
                                 parameters={"element": kind},
                                 origin=Origin(pos[0], pos[1], sql_text=self.text) if pos
                                 else None)
            indexes, flat = self._indexed(sets)
            return (Cube if isinstance(e, exp.Cube) else Rollup)(indexes, flat)
        if isinstance(e, exp.GroupingSets):
            self.mark_read(e)
            return self._grouping_sets(e)
        return self.ordinal_or_expr(e)
    # -- windows (Spark's withQualifyClause / withWindowClause / visitWindowDef) -----------------
    def qualify(self, node: exp.Select, qualify: exp.Qualify, plan: L.LogicalPlan
                ) -> L.LogicalPlan:
        """``QUALIFY cond``: an ``UnresolvedQualify`` over the select (below DISTINCT, as in
        Spark), which needs a window function in the select list or in the condition."""
        if not any(isinstance(n, exp.Window) for e in node.expressions + [qualify.this]
                   for n in e.walk()):
            raise AnalysisError(
                "The QUALIFY clause requires at least one window function in the current SELECT "
                "list or the QUALIFY condition.",
                error_class="QUALIFY_REQUIRES_WINDOW_FUNCTION", parameters={})
        return L.UnresolvedQualify(self.expr(qualify.this), plan)

    def window_clause(self, windows: list[exp.Window], plan: L.LogicalPlan) -> L.LogicalPlan:
        """``WINDOW w1 AS (...), w2 AS w1``: a ``WithWindowDefinition``; a definition naming
        another one takes its specification (Spark's ``withWindowClause``)."""
        base: dict[str, Expression] = {}
        for w in windows:
            name = w.this.name
            if name in base:
                raise self._parse_error(w, "INVALID_SQL_SYNTAX.REPETITIVE_WINDOW_DEFINITION",
                                        f"The definition of window `{name}` is repetitive.",
                                        {"windowName": f"`{name}`"})
            base[name] = self.window_spec(w)
        defs = []
        for name, spec in base.items():
            if isinstance(spec, WindowSpecReference):
                target = base.get(spec.name)
                if target is None:
                    raise self._parse_error(
                        windows[0], "INVALID_SQL_SYNTAX.CANNOT_RESOLVE_WINDOW_REFERENCE",
                        f"Cannot resolve window reference `{spec.name}`.",
                        {"windowName": f"`{spec.name}`"})
                if isinstance(target, WindowSpecReference):
                    raise self._parse_error(
                        windows[0], "INVALID_SQL_SYNTAX.INVALID_WINDOW_REFERENCE",
                        f"Window reference `{spec.name}` is not a window specification.",
                        {"windowName": f"`{spec.name}`"})
                spec = target
            defs.append((name, spec))
        return L.WithWindowDefinition(tuple(defs), plan)

    def window_spec(self, w: exp.Window) -> Expression:
        """The specification of ``OVER ...`` / ``WINDOW w AS ...``: a ``WindowSpecReference``
        (``OVER w``, ``OVER (w)``) or a ``WindowSpecDefinition``.  Spark's grammar has no
        ``OVER (w ORDER BY ...)``: a reference with more clauses is a syntax error there."""
        name = w.args.get("alias")
        partition = w.args.get("partition_by") or []
        order = w.args.get("order")
        frame = w.args.get("spec")
        w.args.get("over")
        if name is not None and (partition or order is not None or frame is not None):
            raise self._parse_error(w, "PARSE_SYNTAX_ERROR", "Syntax error at or near '('.",
                                    {"error": "'('", "hint": ""})
        if name is not None:
            return WindowSpecReference(name.name)
        return WindowSpecDefinition(
            tuple(self.expr(e) for e in partition),
            # an integer in a window's ORDER BY is a literal, not a position
            tuple(self.sort_order(o, ordinals=False)
                  for o in (order.expressions if order else [])),
            self.window_frame(frame) if frame is not None else UnspecifiedFrame())

    def window_frame(self, spec: exp.WindowSpec) -> Expression:
        """``ROWS|RANGE BETWEEN lower AND upper`` (or only ``lower``: ``... AND CURRENT ROW``);
        ``n PRECEDING`` is ``UnaryMinus(n)``, ``n FOLLOWING`` is ``n`` (Spark's
        ``visitFrameBound``)."""
        kind = spec.args.get("kind")
        frame_type = FrameType.ROWS if str(kind).upper() == "ROWS" else FrameType.RANGE
        lower = self._frame_bound(spec, spec.args.get("start"), spec.args.get("start_side"))
        end = spec.args.get("end")
        upper = (self._frame_bound(spec, end, spec.args.get("end_side")) if end is not None
                 else CurrentRow())
        return SpecifiedWindowFrame(frame_type, lower, upper)

    def _frame_bound(self, spec: exp.Expr, value: Any, side: Any) -> Expression:
        side = str(side or "").upper()
        if isinstance(value, str):
            if value.upper() == "CURRENT ROW":
                return CurrentRow()
            if value.upper() == "UNBOUNDED":
                return UnboundedPreceding() if side == "PRECEDING" else UnboundedFollowing()
            raise self.unsupported(f"frame boundary {value}", spec)
        e = self.expr(value)
        if e.exists(lambda x: isinstance(x, (UnresolvedAttribute, UnresolvedFunction,
                                             UnresolvedStar, ScalarSubquery, Exists))):
            raise self._parse_error(
                value, "INVALID_SQL_SYNTAX.INVALID_WINDOW_FRAME_BOUND",
                "Invalid SQL syntax: Frame bound value must be a literal.", {})
        return _mods()[1].UnaryMinus(e) if side == "PRECEDING" else e

    def _parse_error(self, node: exp.Expr, error_class: str, message: str,
                     parameters: dict[str, str]) -> ParseError:
        pos = self.origin_of(node)
        return ParseError(message, error_class=error_class, parameters=parameters,
                          origin=Origin(pos[0], pos[1], sql_text=self.text) if pos else None)

    def having_condition(self, node: exp.Expr) -> Any:
        """Spark's ``withHavingClause``: a HAVING condition that is not a predicate is cast to
        boolean (``HAVING sum(x)`` keeps the groups whose sum is not 0; ``HAVING 'x'`` fails
        with CAST_INVALID_INPUT), so a HAVING never ends in FILTER_NOT_BOOLEAN."""
        cond = self.expr(node)
        if isinstance(cond, (_mods()[0].Predicate, Exists, InSubquery)):
            return cond
        return _mods()[3].Cast(cond, T.BOOLEAN)

    def query_modifiers(self, node: exp.Expr, plan: L.LogicalPlan) -> L.LogicalPlan:
        """ORDER BY / SORT BY, OFFSET, LIMIT on a query (Spark: Limit over Offset over Sort)."""
        order, sort = node.args.get("order"), node.args.get("sort")
        cluster, distribute = node.args.get("cluster"), node.args.get("distribute")
        if sum(x is not None for x in (order, sort, cluster, distribute)) > 1 and not (
                distribute is not None and sort is not None and order is None
                and cluster is None):
            # Spark's withQueryResultClauses: only DISTRIBUTE BY ... SORT BY combine
            first = min((c for c in (order, sort, cluster, distribute) if c is not None),
                        key=lambda c: self.origin_of(c) or (0, 0))
            raise self.unsupported(
                "", first, error_class="UNSUPPORTED_FEATURE.COMBINATION_QUERY_RESULT_CLAUSES",
                message="The feature is not supported: Combination of ORDER BY/SORT BY/"
                        "DISTRIBUTE BY/CLUSTER BY.")
        if order is not None:
            plan = L.Sort(tuple(self.sort_order(o) for o in order.expressions), True, plan)
        elif cluster is not None:
            # CLUSTER BY e: DISTRIBUTE BY e SORT BY e ASC
            exprs = self._partition_exprs(cluster)
            plan = L.Sort(tuple(SortOrder(e, True, None) for e in exprs), False,
                          L.RepartitionByExpression(exprs, plan))
        else:
            if distribute is not None:
                plan = L.RepartitionByExpression(self._partition_exprs(distribute), plan)
            if sort is not None:
                plan = L.Sort(tuple(self.sort_order(o) for o in sort.expressions), False, plan)
        offset = node.args.get("offset")
        if offset is not None:
            plan = L.Offset(self.expr(offset.expression), plan)
        limit = node.args.get("limit")
        if limit is not None:
            if isinstance(limit, exp.Fetch) or limit.args.get("offset") is not None:
                raise self.unsupported("FETCH / LIMIT with offset", limit)
            if isinstance(limit.expression, exp.Var) and limit.expression.name.upper() == "ALL":
                return plan  # ``LIMIT ALL``: no limit (Spark's AstBuilder adds no Limit)
            plan = L.Limit(self.expr(limit.expression), plan)
        return plan

    def _partition_exprs(self, clause: exp.Expr) -> tuple[Expression, ...]:
        """The expressions of DISTRIBUTE BY / CLUSTER BY (sqlglot parses them as sort items;
        Spark's grammar has no direction there)."""
        out = []
        for e in clause.expressions:
            if isinstance(e, exp.Ordered):
                if e.args.get("desc") or e.args.get("with_fill") or e.meta.get("explicit_asc"):
                    raise self._syntax_error_at(e, "a sort direction in DISTRIBUTE/CLUSTER BY")
                self.mark_read(e)
                e = e.this
            out.append(self.expr(e))
        return tuple(out)

    def sort_order(self, o: exp.Expr, ordinals: bool = True) -> SortOrder:
        item = self.ordinal_or_expr if ordinals else self.expr
        if not isinstance(o, exp.Ordered):
            return SortOrder(item(o), True, None)
        ascending = not o.args.get("desc")
        nulls_first = bool(o.args.get("nulls_first"))
        # Spark's defaults (ASC NULLS FIRST, DESC NULLS LAST) are stored as None.
        nf = None if nulls_first == ascending else nulls_first
        return SortOrder(item(o.this), ascending, nf)

    def ordinal_or_expr(self, e: exp.Expr) -> Expression:
        """GROUP BY / ORDER BY item: an integer literal is a position (UnresolvedOrdinal)."""
        if isinstance(e, exp.Literal) and not e.is_string and e.this.isdigit():
            return UnresolvedOrdinal(int(e.this))
        return self.expr(e)

    def select_item(self, e: exp.Expr) -> Expression:
        match e:
            case exp.Alias():
                return Alias(self.expr(e.this), e.alias)
            case exp.Star():
                self._check_star(e)
                return UnresolvedStar(())
            case exp.Column() if isinstance(e.this, exp.Star):
                return UnresolvedStar(self.column_parts(e)[:-1])
            case exp.Aliases():
                # ``explode(m) AS (k, v)``: the generator's column names (Spark's MultiAlias)
                return MultiAlias(self.expr(e.this), tuple(i.name for i in e.expressions))
            case _:
                inner = self.expr(e)
                # Spark's parser leaves a plain column reference unwrapped (it is already a
                # named expression); everything else is named later by ResolveAliases.
                if isinstance(inner, UnresolvedAttribute):
                    return inner
                return UnresolvedAlias(inner)

    def lateral_view(self, lateral: exp.Lateral, plan: L.LogicalPlan) -> L.LogicalPlan:
        """``LATERAL VIEW [OUTER] gen(args) t [AS] c1, c2``: a ``Generate`` over ``plan``
        (typed by the analyzer's ResolveGenerate)."""
        if not lateral.args.get("view") or not isinstance(lateral.this, exp.Anonymous):
            raise self.unsupported("Lateral", lateral)
        alias = lateral.args.get("alias")
        qualifier: tuple[str, ...] = ()
        names: tuple[str, ...] = ()
        if alias is not None:
            if alias.this is not None and alias.this.name:
                qualifier = (alias.this.name,)
            names = tuple(c.name for c in alias.args.get("columns") or [])
        gen = self.expr(lateral.this)
        return L.Generate(gen, bool(lateral.args.get("outer")), qualifier, names, (), plan)

    def _check_star(self, e: exp.Star) -> None:
        for key in ("except_", "except", "replace", "rename"):
            if e.args.get(key):
                raise self.unsupported(_CLAUSE_NAMES.get(key, f"* {key.upper()}"), e)

    # ===========================================================================================
    # Relations

    def from_clause(self, first: exp.Expr, joins: list[exp.Join]) -> L.LogicalPlan:
        """``FROM r1 [JOIN ...], r2 [JOIN ...]``, Spark's way (``AstBuilder.visitFromClause``):
        each comma item is inner-joined to everything before it, and the joins that follow an
        item apply to that accumulated product, so ``FROM a, b RIGHT JOIN c ON ...`` is
        ``(a CROSS b) RIGHT JOIN c`` (not standard SQL's ``a CROSS (b RIGHT JOIN c)``)."""
        plan = self.relation(first)
        for j in joins:
            if j.meta.get("comma"):
                lateral = self.lateral_subquery(j.this)
                plan = (L.Join(plan, self.relation(j.this), JoinType.INNER) if lateral is None
                        else L.LateralJoin(plan, LateralSubquery(lateral), JoinType.INNER))
            else:
                plan = self.join(plan, j)
        return plan

    def pivots(self, node: exp.Expr, plan: L.LogicalPlan) -> L.LogicalPlan:
        """The ``PIVOT (...)`` / ``UNPIVOT (...)`` clauses sqlglot hung on ``node``, applied in
        order to ``plan``, the relation so far (Spark 4's ``relationExtension``: after a
        relation, joins and pivots apply left to right, ``t PIVOT (...) JOIN u UNPIVOT (...)``;
        Spark's ``withPivot`` / ``withUnpivot``)."""
        for p in node.args.get("pivots") or []:
            for key in ("this", "using", "group", "into", "with_", "default_on_null"):
                if p.args.get(key):
                    raise self.unsupported(f"PIVOT {key.upper()}", p)
            fields = p.args.get("fields") or []
            if len(fields) != 1 or not isinstance(fields[0], exp.In):
                raise self.unsupported("PIVOT with several FOR clauses", p)
            plan = (self.unpivot(p, fields[0], plan) if p.unpivot
                    else self.pivot(p, fields[0], plan))
            plan = self.aliased(plan, p.args.get("alias"))
        return plan

    def pivot(self, p: exp.Pivot, field: exp.In, plan: L.LogicalPlan) -> L.LogicalPlan:
        """``PIVOT (agg [AS a], ... FOR col IN (v [AS x], ...))``; ``FOR (c1, c2) IN ((v1, v2)
        [AS x], ...)`` pivots on several columns (Spark: on their struct)."""
        if field.args.get("query") or field.args.get("unnest") or field.args.get("field"):
            raise self.unsupported("PIVOT ... IN (subquery)", field)
        column = field.this
        columns = list(column.expressions) if isinstance(column, exp.Tuple) else [column]
        pivot_columns = tuple(self.expr(c) for c in columns)
        values, aliases = [], []
        for v in field.expressions:
            alias = None
            if isinstance(v, exp.PivotAlias):
                alias, v = v.alias, v.this
            if len(columns) > 1 and isinstance(v, exp.Tuple):
                values.append(tuple(self.expr(e) for e in v.expressions))
            else:
                values.append((self.expr(v),))
            aliases.append(alias)
        aggregates = tuple(self.select_item(e) for e in p.expressions)
        return L.Pivot(None, pivot_columns, tuple(values), tuple(aliases), aggregates, plan)

    def unpivot(self, p: exp.Pivot, field: exp.In, plan: L.LogicalPlan) -> L.LogicalPlan:
        """``UNPIVOT [INCLUDE | EXCLUDE NULLS] (v FOR name IN (c1 [AS x], ...))`` and the
        several-value form ``((v1, v2) FOR name IN ((c1, c2) [AS x], ...))``: Spark's Unpivot
        with the ids left to the analyzer (every other column); EXCLUDE NULLS (the default)
        drops the rows whose value columns are all NULL."""
        if p.args.get("value_columns_first"):
            raise self.unsupported("UNPIVOT with the value columns first", p)
        if len(p.expressions) != 1:  # `UNPIVOT (a, b FOR ...)`: Spark's grammar needs ((a, b))
            raise self._syntax_error_at(p, "several UNPIVOT value columns need parentheses")
        (names,) = p.expressions
        multi = isinstance(names, exp.Tuple)
        value_names = tuple(n.name for n in (names.expressions if multi else [names]))
        values, aliases = [], []
        for v in field.expressions:
            alias = None
            if isinstance(v, exp.PivotAlias):
                alias, v = v.alias, v.this
            items = v.expressions if isinstance(v, exp.Tuple) else [v]
            if isinstance(v, exp.Tuple) and not multi:
                raise self._syntax_error_at(v, "a column set in a single-value UNPIVOT")
            for c in items:
                if not isinstance(c, exp.Column):
                    raise self._syntax_error_at(c, "UNPIVOT takes column names")
            values.append(tuple(self.expr(c) for c in items))
            aliases.append(alias)
        plan = L.Unpivot(None, tuple(values), tuple(aliases), field.this.name, value_names, plan)
        if not p.args.get("include_nulls"):
            P = _mods()[0]
            coalesce = UnresolvedFunction(
                "coalesce", tuple(UnresolvedAttribute((n,)) for n in value_names))
            plan = L.Filter(P.IsNotNull(coalesce), plan)
        return plan

    def join(self, left: L.LogicalPlan, j: exp.Join) -> L.LogicalPlan:
        method = (j.args.get("method") or "").upper()
        side = (j.args.get("side") or "").upper()
        kind = (j.args.get("kind") or "").upper()
        if j.args.get("match_condition") or j.args.get("expressions"):
            raise self.unsupported("this join form", j)
        if kind in ("CROSS",) and not side:
            jt = JoinType.CROSS
        elif kind == "SEMI":
            jt = JoinType.LEFT_SEMI
            if side not in ("", "LEFT"):
                raise self.unsupported(f"{side} SEMI JOIN", j)
        elif kind == "ANTI":
            jt = JoinType.LEFT_ANTI
            if side not in ("", "LEFT"):
                raise self.unsupported(f"{side} ANTI JOIN", j)
        elif side == "LEFT" and kind in ("", "OUTER"):
            jt = JoinType.LEFT_OUTER
        elif side == "RIGHT" and kind in ("", "OUTER"):
            jt = JoinType.RIGHT_OUTER
        elif side == "FULL" and kind in ("", "OUTER"):
            jt = JoinType.FULL_OUTER
        elif not side and kind in ("", "INNER"):
            jt = JoinType.INNER
        elif not side and kind == "OUTER":  # bare OUTER JOIN is a full outer join in Spark
            jt = JoinType.FULL_OUTER
        else:
            raise self.unsupported(f"{side} {kind} JOIN".strip(), j)
        on, using = j.args.get("on"), j.args.get("using")
        # ``t JOIN u PIVOT (...)``: sqlglot hangs the PIVOT on ``u`` (on the join when there is
        # an ON clause); in Spark it follows the join and pivots ``t JOIN u``.
        lateral = self.lateral_subquery(j.this)
        if lateral is not None:
            return self.lateral_join(left, lateral, j, jt, method, on, using)
        late_pivots = j.this.args.get("pivots") if isinstance(j.this, exp.Expr) else None
        if late_pivots and (on is not None or using):
            raise self._syntax_error_at(late_pivots[0], "PIVOT before the join condition")
        right = self.relation(j.this, with_pivots=False)
        plan = self._joined(left, right, j, jt, method, on, using)
        if late_pivots:
            plan = self.pivots(j.this, plan)
        return self.pivots(j, plan)

    def _joined(self, left: L.LogicalPlan, right: L.LogicalPlan, j: exp.Join, jt: JoinType,
                method: str, on: exp.Expr | None, using: list | None) -> L.LogicalPlan:
        if method == "NATURAL":
            if on is not None or using:
                raise self._syntax_error_at(j, "NATURAL JOIN with a join condition")
            return L.Join(left, right, UsingJoin(jt, (), natural=True))
        if method:
            raise self.unsupported(f"{method} JOIN", j)
        if using:
            cols = tuple(c.name for c in using)
            return L.Join(left, right, UsingJoin(jt, cols))
        cond = self.expr(on) if on is not None else None
        return L.Join(left, right, jt, cond)

    def lateral_subquery(self, node: exp.Expr) -> L.LogicalPlan | None:
        """The plan of ``LATERAL (query) [alias]`` (aliased as any FROM subquery); None for any
        other FROM item."""
        if not isinstance(node, exp.Lateral) or node.args.get("view") or node.args.get("outer"):
            return None
        if isinstance(node.this, exp.Anonymous) and node.this.name.lower() in GENERATOR_TABLE_FUNCTIONS:
            # ``LATERAL explode(t.c) [t(x)]``: a generator over the preceding items' columns
            self.mark_read(node)
            return self.aliased(self.table_function(node.this, lateral=True),
                                node.args.get("alias"))
        if not isinstance(node.this, exp.Subquery):
            return None
        self.mark_read(node)
        plan = self.relation(node.this)
        alias = node.args.get("alias")
        if alias is not None:
            if isinstance(plan, L.SubqueryAlias) and plan.identifier == (AUTO_SUBQUERY_NAME,):
                plan = plan.child
            plan = self.aliased(plan, alias)
        return plan

    def lateral_join(self, left: L.LogicalPlan, right: L.LogicalPlan, j: exp.Join, jt: JoinType,
                     method: str, on: exp.Expr | None, using: list | None) -> L.LogicalPlan:
        """``left [INNER | CROSS | LEFT [OUTER]] JOIN LATERAL (query) [ON cond]`` (Spark's
        ``AstBuilder.withJoinRelation``): a ``LateralJoin``; other join types raise
        ``INVALID_LATERAL_JOIN_TYPE``, NATURAL and USING ``UNSUPPORTED_FEATURE``."""
        if method == "NATURAL":
            raise self._parse_error_at(j, "INCOMPATIBLE_JOIN_TYPES",
                                       "The join types LATERAL and NATURAL are incompatible.",
                                       {"joinType1": "LATERAL", "joinType2": "NATURAL"})
        if using:
            raise self._parse_error_at(j, "UNSUPPORTED_FEATURE.LATERAL_JOIN_USING",
                                       "The feature is not supported: JOIN USING with LATERAL "
                                       "correlation.", {})
        if jt not in (JoinType.INNER, JoinType.CROSS, JoinType.LEFT_OUTER):
            name = {JoinType.RIGHT_OUTER: "RIGHT OUTER", JoinType.FULL_OUTER: "FULL OUTER",
                    JoinType.LEFT_SEMI: "LEFT SEMI", JoinType.LEFT_ANTI: "LEFT ANTI"}.get(jt, str(jt))
            raise self._parse_error_at(
                j, "INVALID_LATERAL_JOIN_TYPE",
                f"The {name} JOIN with LATERAL correlation is not allowed because an OUTER "
                "subquery cannot correlate to its join partner. Remove the LATERAL correlation "
                "or use an INNER JOIN, or LEFT OUTER JOIN instead.", {"joinType": name})
        join_type = JoinType.LEFT_OUTER if jt is JoinType.LEFT_OUTER else JoinType.INNER
        cond = self.expr(on) if on is not None else None
        return L.LateralJoin(left, LateralSubquery(right), join_type, cond)

    def _parse_error_at(self, node: exp.Expr, error_class: str, message: str,
                        parameters: dict) -> ParseError:
        pos = self.origin_of(node)
        return ParseError(message, error_class=error_class, parameters=parameters,
                          origin=Origin(pos[0], pos[1], sql_text=self.text) if pos else None)

    def _syntax_error_at(self, node: exp.Expr, what: str) -> ParseError:
        pos = self.origin_of(node)
        return ParseError(f"Syntax error: {what}.", parameters={"error": what},
                          origin=Origin(pos[0], pos[1], sql_text=self.text) if pos else None)

    def relation(self, node: exp.Expr, with_pivots: bool = True) -> L.LogicalPlan:
        """A FROM item (``relationPrimary``) with its alias, the PIVOT / UNPIVOT clauses after it
        (unless ``with_pivots`` is false) and nested joins."""
        alias = node.args.get("alias")
        match node:
            case exp.Table() if isinstance(node.this, exp.Anonymous):
                # ``range(10) [AS] t(x)``: a table-valued function
                plan = self.table_function(node.this, lateral=False)
                if alias is not None and alias.columns:
                    plan = plan.copy(column_aliases=tuple(c.name for c in alias.columns))
                    alias = exp.TableAlias(this=alias.this) if alias.name else None
            case exp.Lateral() if isinstance(node.this, exp.Subquery) and not (
                    node.args.get("view") or node.args.get("outer")):
                # ``FROM LATERAL (query)`` as the first FROM item: a plain subquery, as in Spark
                plan = self.lateral_subquery(node)
                alias = None
            case exp.Lateral() if isinstance(node.this, exp.Anonymous) and not (
                    node.args.get("view") or node.args.get("outer")):
                self.mark_read(node)
                plan = self.table_function(node.this, lateral=True)
            case exp.Table():
                if not isinstance(node.this, exp.Identifier):
                    raise self.unsupported(f"table-valued expression {type(node.this).__name__}",
                                           node)
                for key in ("version", "when", "laterals", "hints"):
                    if node.args.get(key):
                        raise self.unsupported(_CLAUSE_NAMES.get(key, f"table {key}"), node)
                parts = tuple(p.name for p in node.parts)
                plan: L.LogicalPlan = L.UnresolvedRelation(parts, self.origin_of(node))
                plan = self.sample(node.args.get("sample"), plan)
            case exp.Subquery():
                if self._is_query(node.this):
                    plan = self.query(node.this)
                    plan = self.query_modifiers(node, plan)
                    plan = self.sample(node.args.get("sample"), plan)
                    if alias is None:
                        plan = L.SubqueryAlias((AUTO_SUBQUERY_NAME,), plan)
                else:
                    # parenthesised join relation: `(a JOIN b)`
                    plan = self.relation(node.this)
            case exp.Values():
                plan = self.values(node)
                if with_pivots:
                    plan = self.pivots(node, plan)
                for j in node.args.get("joins") or []:
                    plan = self.join(plan, j)
                return plan
            case _:
                raise self.unsupported(f"FROM item {type(node).__name__}", node)
        plan = self.aliased(plan, alias)
        if with_pivots:
            plan = self.pivots(node, plan)
        for j in node.args.get("joins") or []:
            plan = self.join(plan, j)
        return plan

    def table_function(self, call: exp.Anonymous, lateral: bool) -> L.LogicalPlan:
        """``name(args)`` in FROM (Spark's ``UnresolvedTableValuedFunction``)."""
        self.mark_read(call)
        return L.UnresolvedTableValuedFunction(
            call.name.lower(), tuple(self.expr(a) for a in call.expressions), lateral,
            origin=self.origin_of(call))

    def sample(self, sample: exp.TableSample | None, plan: L.LogicalPlan) -> L.LogicalPlan:
        """``TABLESAMPLE (n ROWS)`` is Spark's ``Limit(n)`` over the relation (AstBuilder's
        ``withSample``). PERCENT and BUCKET draw rows with Spark's per-partition random
        sampler, which Ember cannot reproduce: refused."""
        if sample is None:
            return plan
        size = sample.args.get("size")
        other = [k for k, v in sample.args.items() if v and k != "size"]
        end = size.meta.get("end") if size is not None and size.meta else None
        if size is not None and not other and end is not None and re.match(
                r"\s*ROWS\s*\)", self.source[end + 1:], re.IGNORECASE):
            self.mark_read(sample)
            return L.Limit(self.expr(size), plan)
        raise self.unsupported("TABLESAMPLE (PERCENT / BUCKET)", sample)

    def aliased(self, plan: L.LogicalPlan, alias: exp.TableAlias | None) -> L.LogicalPlan:
        """``plan AS name(c1, c2)`` -> SubqueryAlias(name, UnresolvedSubqueryColumnAliases)."""
        if alias is None:
            return plan
        cols = tuple(c.name for c in alias.columns) if alias.columns else ()
        if cols:
            plan = L.UnresolvedSubqueryColumnAliases(cols, plan)
        if alias.name:
            plan = L.SubqueryAlias((alias.name,), plan)
        return plan

    def values(self, node: exp.Values) -> L.LogicalPlan:
        """``VALUES (1, 'a'), (2, 'b') [AS] t(x, y)`` -> SubqueryAlias(t, UnresolvedInlineTable)."""
        rows = []
        alias = node.args.get("alias")
        last = node.expressions[-1] if node.expressions else None
        if (isinstance(last, exp.Tuple) and last.expressions
                and isinstance(last.expressions[-1], exp.Alias)
                and (alias is None or not alias.name)):
            # ``VALUES 0, 1, 2 AS t(id)``: sqlglot reads ``2 AS t`` as the last row's item;
            # in Spark the alias names the inline table
            named = last.expressions[-1]
            columns = alias.columns if alias is not None else []
            alias = exp.TableAlias(this=named.args["alias"], columns=columns)
            last.expressions[-1] = named.this
        for row in node.expressions:
            items = row.expressions if isinstance(row, exp.Tuple) else [row]
            rows.append(tuple(self.expr(e) for e in items))
        width = len(rows[0]) if rows else 0
        cols = tuple(c.name for c in alias.columns) if alias is not None and alias.columns else ()
        names = cols or tuple(f"col{i + 1}" for i in range(width))
        plan: L.LogicalPlan = L.UnresolvedInlineTable(names, tuple(rows))
        if alias is not None and alias.name:
            plan = L.SubqueryAlias((alias.name,), plan)
        return plan

    def hints(self, hint: exp.Hint, plan: L.LogicalPlan) -> L.LogicalPlan:
        """``/*+ A(x), B(y, z) */``: the first hint ends up outermost, as in Spark."""
        specs = []
        for h in hint.expressions:
            match h:
                case exp.JoinHint():
                    name = str(h.this)
                    params = tuple(self.hint_param(p) for p in h.expressions)
                case exp.Anonymous():
                    name = str(h.this)
                    params = tuple(self.hint_param(p) for p in h.expressions)
                case exp.Var() | exp.Column() | exp.Identifier():
                    name, params = h.name, ()
                case exp.Func():
                    self.mark_read(h)
                    name = h.sql_name()
                    params = tuple(self.hint_param(p) for p in h.args.values()
                                   if isinstance(p, exp.Expr))
                case _:
                    raise self.unsupported(f"hint {h.sql()}", hint)
            specs.append((name.upper(), params))
        for name, params in reversed(specs):
            plan = L.UnresolvedHint(name, params, plan)
        return plan

    def hint_param(self, p: exp.Expr) -> Expression:
        if isinstance(p, exp.Table):
            return UnresolvedAttribute(tuple(x.name for x in p.parts), self.origin_of(p))
        return self.expr(p)

    # ===========================================================================================
    # Expressions

    def column_parts(self, c: exp.Column) -> tuple[str, ...]:
        return tuple(p.name if not isinstance(p, exp.Star) else "*" for p in c.parts)

    def expr(self, node: exp.Expr) -> Expression:
        fn = self._DISPATCH.get(type(node))
        if fn is not None:
            return fn(self, node)
        if isinstance(node, exp.Func):
            return self.known_function(node)
        what = _UNSUPPORTED_EXPRESSIONS.get(type(node), f"expression {type(node).__name__}")
        raise self.unsupported(what, node)

    # -- leaves ---------------------------------------------------------------------------------
    def _column(self, node: exp.Column) -> Expression:
        if isinstance(node.this, exp.Star):
            return UnresolvedStar(self.column_parts(node)[:-1])
        return UnresolvedAttribute(self.column_parts(node), self.origin_of(node))

    def _dot(self, node: exp.Dot) -> Expression:
        parts: list[str] = []
        cur: exp.Expr = node
        while isinstance(cur, exp.Dot):
            parts.insert(0, cur.expression.name)
            cur = cur.this
        if not isinstance(cur, exp.Column):
            # ``f(x).a.b``: Spark's UnresolvedExtractValue, resolved once the base is typed
            out = self.expr(cur)
            for name in parts:
                out = UnresolvedFunction("(extract_value)", (out, Literal(name, T.STRING)),
                                         origin=self.origin_of(node))
            return out
        if parts and parts[-1] == "*":
            return UnresolvedStar(self.column_parts(cur) + tuple(parts[:-1]))
        return UnresolvedAttribute(self.column_parts(cur) + tuple(parts), self.origin_of(cur))

    def _bracket(self, node: exp.Bracket) -> Expression:
        """``a[0]``, ``m['k']`` (Spark's UnresolvedExtractValue)."""
        if len(node.expressions) != 1:
            raise self.unsupported("subscript with several indexes", node)
        return UnresolvedFunction("(extract_value)",
                                  (self.expr(node.this), self.expr(node.expressions[0])),
                                  origin=self.origin_of(node))

    def _lambda(self, node: exp.Lambda) -> Expression:
        """``(x, y) -> body``: the parameters are bound by the higher-order function."""
        names = tuple(i.name for i in node.expressions)
        self._lambda_params.append(set(n.lower() for n in names))
        try:
            body = self.expr(node.this)
        finally:
            self._lambda_params.pop()
        return LambdaFunction(body, tuple(UnresolvedNamedLambdaVariable(n) for n in names))

    def _identifier(self, node: exp.Identifier) -> Expression:
        # sqlglot writes a lambda parameter in the lambda's body as a bare identifier
        if any(node.name.lower() in ps for ps in self._lambda_params):
            return UnresolvedNamedLambdaVariable(node.name)
        return UnresolvedAttribute((node.name,), self.origin_of(node))

    def _transform(self, node: exp.Transform) -> Expression:
        return self.function_call("transform", [node.this, node.expression], node)

    def _literal(self, node: exp.Literal) -> Expression:
        if node.is_string:
            return Literal(node.this, T.STRING)
        return number_literal(node.this)

    def _star(self, node: exp.Star) -> Expression:
        self._check_star(node)
        return UnresolvedStar(())

    def _null(self, node: exp.Null) -> Expression:
        return Literal(None, T.NULL)

    def _boolean(self, node: exp.Boolean) -> Expression:
        return Literal(bool(node.this), T.BOOLEAN)

    def _paren(self, node: exp.Paren) -> Expression:
        return self.expr(node.this)

    def _tuple(self, node: exp.Tuple) -> Expression:
        # A bare tuple ``(a, b)`` is Spark's CreateNamedStruct named ``named_struct(a, a, b, b)``;
        # the registry's internal "(tuple)" entry builds exactly that (explicit struct() differs).
        return UnresolvedFunction("(tuple)", tuple(self.expr(e) for e in node.expressions))

    def _alias(self, node: exp.Alias) -> Expression:
        return Alias(self.expr(node.this), node.alias)

    # -- operators ------------------------------------------------------------------------------
    def _binary(cls_name: str, module: int) -> Callable[["AstBuilder", exp.Expr], Expression]:  # type: ignore[misc]
        def build(self: "AstBuilder", node: exp.Expr) -> Expression:
            cls = getattr(_mods()[module], cls_name)
            return cls(self.expr(node.this), self.expr(node.expression))

        return build

    def _logical(cls_name: str) -> Callable[["AstBuilder", exp.Expr], Expression]:  # type: ignore[misc]
        """AND / OR as Spark's ``AstBuilder.visitLogicalBinary`` builds them: the operands of a
        chain of the same operator (along its left spine, parentheses end it) combined as a
        balanced tree, so ``a AND b AND c AND d`` is ``((a AND b) AND (c AND d))`` and 500 ANDed
        predicates are 9 levels deep, not 500."""
        def build(self: "AstBuilder", node: exp.Expr) -> Expression:
            cls = getattr(_mods()[0], cls_name)
            operands = [node.expression]
            current = node.this
            while type(current) is type(node):
                self.mark_read(current)
                operands.append(current.expression)
                current = current.this
            operands.append(current)
            exprs = [self.expr(e) for e in reversed(operands)]

            def reduce(low: int, high: int) -> Expression:
                if low == high:
                    return exprs[low]
                if high - low == 1:
                    return cls(exprs[low], exprs[high])
                mid = low + (high - low) // 2
                return cls(reduce(low, mid), reduce(mid + 1, high))

            return reduce(0, len(exprs) - 1)

        return build

    def _neq(self, node: exp.NEQ) -> Expression:
        P = _mods()[0]
        return P.Not(P.EqualTo(self.expr(node.this), self.expr(node.expression)))

    def _null_safe_neq(self, node: exp.NullSafeNEQ) -> Expression:
        P = _mods()[0]
        return P.Not(P.EqualNullSafe(self.expr(node.this), self.expr(node.expression)))

    def _not(self, node: exp.Not) -> Expression:
        P = _mods()[0]
        inner = node.this
        while isinstance(inner, exp.Paren):
            inner = inner.this
        if isinstance(inner, exp.Is) and isinstance(inner.expression, exp.Null):
            return P.IsNotNull(self.expr(inner.this))
        return P.Not(self.expr(node.this))

    def _is(self, node: exp.Is) -> Expression:
        P = _mods()[0]
        target = node.expression
        if isinstance(target, exp.Null):
            return P.IsNull(self.expr(node.this))
        if isinstance(target, exp.Boolean):  # x IS TRUE -> x <=> true
            return P.EqualNullSafe(self.expr(node.this), self._boolean(target))
        raise self.unsupported(f"IS {target.sql()}", node)

    def _neg(self, node: exp.Neg) -> Expression:
        inner = node.this
        if isinstance(inner, exp.Literal) and not inner.is_string:
            return number_literal(inner.this, negate=True)
        return _mods()[1].UnaryMinus(self.expr(inner))

    def _unary_plus(self, node: UnaryPlus) -> Expression:
        return _mods()[1].UnaryPositive(self.expr(node.this))

    def _dpipe(self, node: exp.DPipe) -> Expression:
        return UnresolvedFunction("concat", (self.expr(node.this), self.expr(node.expression)))

    def _concat(self, node: exp.Concat) -> Expression:
        items = node.expressions
        if all(isinstance(e, exp.Literal) and e.is_string for e in items):
            # adjacent string literals: 'a' 'b' is 'ab' in Spark
            return Literal("".join(e.this for e in items), T.STRING)
        return UnresolvedFunction("concat", tuple(self.expr(e) for e in items))

    def _between(self, node: exp.Between) -> Expression:
        P = _mods()[0]
        if node.args.get("symmetric"):
            raise self.unsupported("BETWEEN SYMMETRIC", node)
        v = self.expr(node.this)
        return P.And(P.GreaterThanOrEqual(v, self.expr(node.args["low"])),
                     P.LessThanOrEqual(v, self.expr(node.args["high"])), from_between=True)

    def _in(self, node: exp.In) -> Expression:
        P = _mods()[0]
        query = node.args.get("query")
        if node.args.get("unnest") or node.args.get("field"):
            raise self.unsupported("IN UNNEST / IN field", node)
        if query is not None:
            q = query.this if isinstance(query, exp.Subquery) and query.args.get(
                "alias") is None else query
            values_node = node.this
            if isinstance(values_node, exp.Tuple):
                values = tuple(self.expr(e) for e in values_node.expressions)
            else:
                values = (self.expr(values_node),)
            return InSubquery(values, self.query(q))
        return P.In(self.expr(node.this), tuple(self.expr(e) for e in node.expressions))

    def _like(self, node: exp.Like) -> Expression:
        P = _mods()[0]
        escape = "\\"
        if node.args.get("escape") is not None:
            self.mark_read(node.args["escape"])
            escape = node.args["escape"].name
        result = P.Like(self.expr(node.this), self.expr(node.expression), escape)
        return P.Not(result) if node.args.get("negate") else result

    def _escape(self, node: exp.Escape) -> Expression:
        P = _mods()[0]
        like = node.this
        self.mark_read(node.expression)  # the escape character (a string literal)
        if isinstance(like, exp.ILike):
            result = UnresolvedFunction("ilike", (self.expr(like.this), self.expr(like.expression),
                                                  Literal(node.expression.name, T.STRING)))
            return P.Not(result) if like.args.get("negate") else result
        if not isinstance(like, exp.Like):
            raise self.unsupported("ESCAPE", node)
        result = P.Like(self.expr(like.this), self.expr(like.expression), node.expression.name)
        return P.Not(result) if like.args.get("negate") else result

    def _ilike(self, node: exp.ILike) -> Expression:
        result = UnresolvedFunction("ilike", (self.expr(node.this), self.expr(node.expression)))
        return _mods()[0].Not(result) if node.args.get("negate") else result

    def _case(self, node: exp.Case) -> Expression:
        C = _mods()[2]
        P = _mods()[0]
        subject = node.this
        conds, values = [], []
        for branch in node.args.get("ifs") or []:
            cond = self.expr(branch.this)
            if subject is not None:
                cond = P.EqualTo(self.expr(subject), cond)
            conds.append(cond)
            values.append(self.expr(branch.args["true"]))
        default = node.args.get("default")
        return C.CaseWhen(tuple(conds), tuple(values),
                          self.expr(default) if default is not None else None)

    def _cast(self, node: exp.Cast) -> Expression:
        if node.args.get("format") or node.args.get("default"):
            raise self.unsupported("CAST ... FORMAT / DEFAULT", node)
        to = node.args["to"]
        child = node.this
        if (
            isinstance(node, exp.Cast)
            and not isinstance(node, exp.TryCast)
            and isinstance(child, exp.Literal)
            and child.is_string
            and child.meta.get("start") is not None
        ):
            m = _TYPED_LITERAL_KEYWORD.search(self.source[: child.meta["start"]])
            if m is not None:
                self.mark_read(to)  # the keyword before the string is the type
                return self.typed(partial(typed_literal, time_zone=self.time_zone), m.group(1),
                                  child)
        target = convert_data_type(to)
        ansi = not isinstance(node, exp.TryCast)
        return _mods()[3].Cast(self.expr(child), target, ansi=ansi)

    def typed(self, fn: Callable[[str, str], Literal], kind: str, child: exp.Literal) -> Literal:
        try:
            return fn(kind, child.this)
        except ParseError as e:
            pos = self.origin_of(child)

            if pos is not None:
                e.with_origin(Origin(pos[0], pos[1], sql_text=self.text))
            raise

    def _arith(cls_name: str) -> Callable[["AstBuilder", exp.Expr], Expression]:  # type: ignore[misc]
        def build(self: "AstBuilder", node: exp.Expr) -> Expression:
            if node.meta and node.meta.get("multi_unit_interval"):
                return self._multi_unit_interval(node)
            cls = getattr(_mods()[1], cls_name)
            return cls(self.expr(node.this), self.expr(node.expression))

        return build

    def _bitwise(cls_name: str) -> Callable[["AstBuilder", exp.Expr], Expression]:  # type: ignore[misc]
        """``a & b`` / ``a | b`` / ``a ^ b`` (ember.expressions.bitwise)."""
        def build(self: "AstBuilder", node: exp.Expr) -> Expression:
            cls = getattr(_bitwise_module, cls_name)
            return cls(self.expr(node.this), self.expr(node.expression))

        return build

    # -- subqueries -----------------------------------------------------------------------------
    def _subquery(self, node: exp.Subquery) -> Expression:
        if not self._is_query(node.this):
            raise self.unsupported("parenthesised relation as an expression", node)
        return ScalarSubquery(self.query(node))

    def _exists(self, node: exp.Exists) -> Expression:
        q = node.this
        return Exists(self.query(q))

    # -- functions ------------------------------------------------------------------------------
    def _anonymous(self, node: exp.Anonymous) -> Expression:
        name = node.name.lower()
        args = list(node.expressions)
        unit_form = _UNIT_FUNCTIONS.get(name)
        if unit_form and len(args) == 3 and isinstance(args[0], exp.Literal) and \
                args[0].is_string:
            kind = unit_form.strip("()")
            raise ParseError(
                f"The value of parameter(s) `unit` in `{kind}` is invalid: expects one of the "
                "units without quotes YEAR, QUARTER, MONTH, WEEK, DAY, DAYOFYEAR, HOUR, MINUTE, "
                f"SECOND, MILLISECOND, MICROSECOND, but got the string literal '{args[0].name}'.",
                error_class="INVALID_PARAMETER_VALUE.DATETIME_UNIT",
                parameters={"parameter": "`unit`", "functionName": f"`{kind}`",
                            "invalidValue": f"'{args[0].name}'"})
        if unit_form and len(args) == 3 and isinstance(args[0], exp.Column) and not \
                args[0].table:
            # ``timestampadd(YEAR, 1, ts)``: the unit is a keyword (Spark's grammar), passed on
            # as a literal to a name SQL text cannot call
            unit = Literal(args[0].name, T.STRING)
            return UnresolvedFunction(unit_form, (unit,) + tuple(self.expr(a) for a in args[1:]),
                                      origin=self.origin_of(node))
        return self.function_call(name, args, node)

    def function_call(self, name: str, args: list[exp.Expr], node: exp.Expr,
                      is_distinct: bool = False) -> Expression:
        if args and isinstance(args[0], exp.Distinct):
            # count(DISTINCT a, b) -> Distinct([a, b]); f(DISTINCT a, 0.8) -> [Distinct([a]), 0.8]
            is_distinct = True
            args = list(args[0].expressions) + list(args[1:])
        out = []
        for a in args:
            if isinstance(a, exp.Distinct):
                raise self._syntax_error_at(a, "DISTINCT must be the first argument")
            out.append(self.expr(a))
        if name in _SCHEMA_FUNCTIONS and len(out) > 1 and isinstance(out[1], Literal) \
                and isinstance(out[1].value, str):
            out[1] = self._schema_literal(out[1].value, args[1])
        return UnresolvedFunction(name, tuple(out), is_distinct, None, False, self.origin_of(node))

    def _schema_literal(self, text: str, node: exp.Expr) -> SchemaLiteral:
        """A DDL schema argument (``'a INT, b STRING'``, ``'array<int>'``) parsed as Spark's
        ``DataType.fromDDL``: a type, else the fields of a struct."""
        for candidate in (text, f"STRUCT<{text}>"):
            try:
                dt = convert_data_type(exp.DataType.build(candidate, dialect=EmberSpark))
            except (EmberError, ValueError, SqlglotError):
                continue
            if not (isinstance(dt, T.StructType) and not dt.fields and text.strip()):
                return SchemaLiteral(dt, text)
        raise self._syntax_error_at(node, f"invalid schema {text!r}")

    def _filter(self, node: exp.Filter) -> Expression:
        func = self.expr(node.this)
        if not isinstance(func, UnresolvedFunction):
            raise self.unsupported("FILTER on a non-aggregate", node)
        where = node.expression
        cond = where.this if isinstance(where, exp.Where) else where
        return func.copy(filter=self.expr(cond))

    def _ignore_nulls(self, node: exp.IgnoreNulls) -> Expression:
        func = self.expr(node.this)
        if not isinstance(func, UnresolvedFunction):
            raise self.unsupported("IGNORE NULLS on a non-function", node)
        return func.copy(ignore_nulls=True)

    def _respect_nulls(self, node: exp.RespectNulls) -> Expression:
        return self.expr(node.this)

    def _window(self, node: exp.Window) -> Expression:
        """``f(...) [IGNORE | RESPECT NULLS] OVER spec``: a ``WindowExpression`` (Spark's
        ``UnresolvedWindowExpression`` for ``OVER w``: the reference is substituted by
        WindowsSubstitution)."""
        return WindowExpression(self.expr(node.this), self.window_spec(node))

    def _extract(self, node: exp.Extract) -> Expression:
        """``extract(field FROM source)`` -> the registry's ``extract`` (field as a string)."""
        return UnresolvedFunction("extract", (Literal(node.this.name.lower(), T.STRING),
                                              self.expr(node.expression)),
                                  origin=self.origin_of(node))

    def _interval(self, node: exp.Interval) -> Expression:
        """``INTERVAL '90' DAY`` / ``INTERVAL 8 MINUTES`` / ``INTERVAL '1 02:03:04.5' DAY TO
        SECOND`` / ``INTERVAL '1 day 2 hours'`` / ``INTERVAL -'1' HOUR``: an ANSI interval
        literal (ember.expressions.intervals; malformed forms raise Spark's ParseError)."""

        value, unit = node.this, node.args.get("unit")
        negate = False
        while isinstance(value, (exp.Neg, UnaryPlus)):  # INTERVAL -'1' DAY, INTERVAL +'1' DAY
            negate, value = negate != isinstance(value, exp.Neg), value.this
        if not isinstance(value, exp.Literal):
            raise self.unsupported("interval with a non-literal value", node)
        self.mark_read(value)  # ``INTERVAL '1' DAY`` and ``INTERVAL 1 DAY`` are the same
        text = value.name
        if negate:
            text = text[1:] if text.startswith("-") else "-" + text.lstrip("+")
        with self._interval_origin(node):
            if isinstance(unit, exp.IntervalSpan):
                if not value.is_string:  # INTERVAL 1 YEAR TO MONTH
                    raise ParseError("The value of from-to unit must be a string.",
                                     error_class="_LEGACY_ERROR_TEMP_0027")
                return interval_literal(text, unit.this.name, unit.expression.name)
            return interval_literal(text, unit.name if unit is not None else None)

    def _multi_unit_interval(self, node: exp.Add) -> Expression:
        """``INTERVAL 1 DAY 2 HOURS`` (sqlglot's Add of Intervals, marked by the dialect): one
        literal spanning the units given (``INTERVAL '1 02' DAY TO HOUR``)."""

        tail = node.expression
        if isinstance(tail, exp.Interval) and tail.args.get("unit") is None \
                and isinstance(tail.this, exp.Literal):
            # ``INTERVAL '1' HOUR + 1``: sqlglot took the number for another unit/value pair
            self.mark_read(tail)
            self.mark_read(tail.this)
            return _mods()[1].Add(self.expr(node.this), number_literal(tail.this.name))
        pairs: list[tuple[str, str]] = []
        part: exp.Expr | None = node
        while part is not None:
            item = part.this if isinstance(part, exp.Add) else part
            part = part.expression if isinstance(part, exp.Add) else None
            value, unit = item.this, item.args.get("unit")
            if not isinstance(item, exp.Interval) or not isinstance(value, exp.Literal) \
                    or unit is None or isinstance(unit, exp.IntervalSpan):
                raise self.unsupported("multi-unit interval of this shape", node)
            self.mark_read(value)
            pairs.append((value.name, unit.name))
        source = "INTERVAL " + " ".join(f"{v} {u}" for v, u in pairs)
        with self._interval_origin(node):
            return multi_unit_interval(pairs, source)

    @contextmanager
    def _interval_origin(self, node: exp.Expr):
        try:
            yield
        except EmberError as e:
            pos = self.origin_of(node)
            if pos is not None:
                e.with_origin(Origin(pos[0], pos[1], sql_text=self.text))
            raise

    def _within_group(self, node: exp.WithinGroup) -> Expression:
        """``f(args) WITHIN GROUP (ORDER BY o1, ...)``: the call with its orderings appended as
        ``SortOrder`` arguments (the aggregate lookup takes trailing ``SortOrder`` arguments as
        the WITHIN GROUP clause and refuses them for functions without one)."""
        func = self.expr(node.this)
        order = node.expression
        if not isinstance(func, UnresolvedFunction) or not isinstance(order, exp.Order):
            raise self.unsupported("WITHIN GROUP on a non-function", node)
        self.mark_read(order)
        orders = []
        for o in order.expressions:
            self.mark_read(o)
            ascending = not o.args.get("desc")
            nf = bool(o.args.get("nulls_first"))
            orders.append(SortOrder(self.expr(o.this), ascending, None if nf == ascending else nf))
        return func.copy(arguments=func.arguments + tuple(orders))

    def _approx_quantile(self, node: exp.ApproxQuantile) -> Expression:
        args = [node.this, node.args.get("quantile"), node.args.get("accuracy")]
        return self.function_call("percentile_approx", [a for a in args if a is not None], node)

    def known_function(self, node: exp.Func) -> Expression:
        """Function nodes sqlglot builds even with an empty FUNCTIONS table (no-paren functions
        and special forms).  Only argument-free or simple forms are mapped back to their Spark
        names; anything else is reported as unsupported rather than guessed."""
        self.mark_read(node)  # the forms below look at every arg
        simple = {
            exp.CurrentDate: "current_date",
            exp.CurrentTimestamp: "current_timestamp",
            exp.CurrentUser: "current_user",
        }
        for cls, name in simple.items():
            if isinstance(node, cls) and not any(node.args.values()):
                return UnresolvedFunction(name, (), origin=self.origin_of(node))
        # Special forms sqlglot parses itself: (Spark name, argument keys in Spark's order).
        forms: dict[type, tuple[str, tuple[str, ...]]] = {
            exp.If: ("if", ("this", "true", "false")),
            exp.Substring: ("substring", ("this", "start", "length")),
            exp.RegexpLike: ("rlike", ("this", "expression")),
            exp.StrPosition: ("position", ("substr", "this", "position")),
            exp.Trim: ("trim", ("this",)),
            exp.Ceil: ("ceil", ("this", "decimals")),
            exp.Floor: ("floor", ("this", "decimals")),
            exp.Overlay: ("overlay", ("this", "expression", "from_", "for_")),
        }
        form = forms.get(type(node))
        if form is not None:
            name, keys = form
            extra = set(k for k, v in node.args.items() if v is not None) - set(keys)
            if not extra:
                args = [node.args[k] for k in keys if node.args.get(k) is not None]
                return self.function_call(name, args, node)
        raise self.unsupported(f"function {node.sql_name()}", node)

    _DISPATCH: dict[type, Callable[["AstBuilder", Any], Expression]] = {}


_B = AstBuilder
_B._DISPATCH = {
    exp.Column: _B._column,
    exp.Dot: _B._dot,
    exp.Bracket: _B._bracket,
    exp.Lambda: _B._lambda,
    exp.Identifier: _B._identifier,
    exp.Transform: _B._transform,
    exp.Literal: _B._literal,
    exp.Star: _B._star,
    exp.Null: _B._null,
    exp.Boolean: _B._boolean,
    exp.Paren: _B._paren,
    exp.Tuple: _B._tuple,
    exp.Alias: _B._alias,
    exp.And: _B._logical("And"),
    exp.Or: _B._logical("Or"),
    exp.Not: _B._not,
    exp.EQ: _B._binary("EqualTo", 0),
    exp.NEQ: _B._neq,
    exp.NullSafeEQ: _B._binary("EqualNullSafe", 0),
    exp.NullSafeNEQ: _B._null_safe_neq,
    exp.GT: _B._binary("GreaterThan", 0),
    exp.GTE: _B._binary("GreaterThanOrEqual", 0),
    exp.LT: _B._binary("LessThan", 0),
    exp.LTE: _B._binary("LessThanOrEqual", 0),
    exp.Is: _B._is,
    exp.Between: _B._between,
    exp.In: _B._in,
    exp.Like: _B._like,
    exp.BitwiseNot: lambda self, node: self.function_call("~", [node.this], node),
    exp.BitwiseAnd: _B._bitwise("BitwiseAnd"),
    exp.BitwiseOr: _B._bitwise("BitwiseOr"),
    exp.BitwiseXor: _B._bitwise("BitwiseXor"),
    exp.ILike: _B._ilike,
    exp.Escape: _B._escape,
    exp.Case: _B._case,
    exp.Cast: _B._cast,
    exp.TryCast: _B._cast,
    exp.Add: _B._arith("Add"),
    exp.Sub: _B._arith("Subtract"),
    exp.Mul: _B._arith("Multiply"),
    exp.Div: _B._arith("Divide"),
    exp.Mod: _B._arith("Remainder"),
    exp.IntDiv: _B._arith("IntegralDivide"),
    exp.Neg: _B._neg,
    UnaryPlus: _B._unary_plus,
    exp.DPipe: _B._dpipe,
    exp.Concat: _B._concat,
    exp.Subquery: _B._subquery,
    exp.Exists: _B._exists,
    exp.Anonymous: _B._anonymous,
    exp.Filter: _B._filter,
    exp.IgnoreNulls: _B._ignore_nulls,
    exp.RespectNulls: _B._respect_nulls,
    exp.Window: _B._window,
    exp.ApproxQuantile: _B._approx_quantile,
    exp.WithinGroup: _B._within_group,
    exp.Extract: _B._extract,
    exp.Interval: _B._interval,
}
del _B
