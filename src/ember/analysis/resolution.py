"""Name resolution shared by the analyzer rules (Spark's ``AttributeSeq.resolve`` /
``ColumnResolutionHelper``).

- :func:`resolve_name` finds the attribute a (possibly qualified) name refers to, raising
  ``AMBIGUOUS_REFERENCE`` when several distinct attributes match.
- :class:`UsingJoinProject` is the Project that ``ResolveNaturalAndUsingJoin`` puts over a
  ``USING``/``NATURAL`` join.  It remembers the join columns it hides (``hidden_output``) so that
  ``nt2.k`` still resolves above it (Spark's ``Project.hiddenOutputTag`` / metadata output).  It only
  exists during analysis; the analyzer turns it back into a plain ``Project``.
- :func:`metadata_output` is Spark's ``metadataOutput``: the hidden columns visible from a node.
- :func:`pretty_sql` is Spark's ``toPrettySQL``: the auto-generated name of an unaliased column.
- :func:`equal_ignoring_aliases` is how the analyzer matches an expression to a grouping
  expression: equal canonical forms (``Expression.canonicalized``) once aliases are trimmed.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ember import types as T
from ember.errors import AnalysisError, Origin
from ember.formatting import java_double_str  # noqa: F401 - re-exported
from ember.expressions.base import (
    Alias, AttributeReference, Expression, LeafExpression, Literal, UnresolvedAlias,
    UnresolvedAttribute,
    UnresolvedFunction, UnresolvedOrdinal, UnresolvedStar, NamedExpression,
)
from ember.plans.logical.nodes import (
    Aggregate,
    Distinct,
    Join,
    LogicalPlan,
    Project,
    SubqueryAlias,
    UnaryNode,
    View,
)
from ember.plans.logical.join_type import JoinType
from ember.trees import node
from ember.expressions.cast import Cast
from ember.expressions.collections import extract_value
from ember.expressions.misc import to_pretty_sql
from ember.expressions.subquery import SubqueryExpression


def quote(name: str) -> str:
    return "`" + name.replace("`", "``") + "`"


def quote_parts(parts: Sequence[str]) -> str:
    return ".".join(quote(p) for p in parts)


def _eq(a: str, b: str, case_sensitive: bool) -> bool:
    return a == b if case_sensitive else a.lower() == b.lower()


def _qualifier_matches(qualifier: tuple[str, ...], parts: Sequence[str], cs: bool) -> bool:
    """``parts`` is a suffix of ``qualifier`` (``t`` matches ``spark_catalog.default.t``)."""
    if len(parts) > len(qualifier):
        return False
    tail = qualifier[len(qualifier) - len(parts):]
    return all(_eq(a, b, cs) for a, b in zip(tail, parts))


def find_candidates(
    name_parts: Sequence[str], attrs: Sequence[AttributeReference], case_sensitive: bool
) -> list[AttributeReference]:
    """Attributes matching ``name_parts``: qualified matches first (longest qualifier), else by
    bare column name.  Duplicates (same id) are removed; order kept."""
    parts = tuple(name_parts)
    found: list[AttributeReference] = []
    if len(parts) > 1:
        # qualifier.name: try the longest qualifier first
        for n_q in range(len(parts) - 1, 0, -1):
            q, rest = parts[:n_q], parts[n_q:]
            if len(rest) != 1:
                continue  # nested struct fields are not supported
            for a in attrs:
                if a.qualifier and _qualifier_matches(a.qualifier, q, case_sensitive) and _eq(
                    a.name, rest[0], case_sensitive
                ):
                    found.append(a)
            if found:
                break
    else:
        for a in attrs:
            if _eq(a.name, parts[0], case_sensitive):
                found.append(a)
    seen: set[int] = set()
    out = []
    for a in found:
        if a.id not in seen:
            seen.add(a.id)
            out.append(a)
    return out


def resolve_name(
    name_parts: Sequence[str],
    attrs: Sequence[AttributeReference],
    case_sensitive: bool,
    origin: tuple[int, int] | None = None,
) -> AttributeReference | None:
    """The attribute ``name_parts`` refers to among ``attrs``; None when nothing matches."""
    cands = find_candidates(name_parts, attrs, case_sensitive)
    if not cands:
        return None
    if len(cands) > 1:
        names = ", ".join(sorted(quote_parts(a.qualifier + (a.name,)) for a in cands))
        name = quote_parts(name_parts)
        raise AnalysisError(
            f"Reference {name} is ambiguous, could be: [{names}].",
            error_class="AMBIGUOUS_REFERENCE",
            parameters={"name": name, "referenceNames": f"[{names}]"},
            origin=to_origin(origin),
        )
    return cands[0]


def resolve_nested_name(
    name_parts: Sequence[str],
    attrs: Sequence[AttributeReference],
    case_sensitive: bool,
    origin: tuple[int, int] | None = None,
) -> Expression | None:
    """``a.b.c`` as a column and struct fields (Spark's ``LogicalPlan.resolve``): the longest
    prefix that names a column (qualified names first, as :func:`resolve_name`), the rest
    extracted field by field; ``Alias(extraction, last part)``.  None when no prefix resolves."""
    for k in range(len(name_parts) - 1, 0, -1):
        found = resolve_name(name_parts[:k], attrs, case_sensitive, origin)
        if found is None:
            continue
        out: Expression = found
        for part in name_parts[k:]:
            out = extract_value(out, Literal(part, T.STRING), case_sensitive)
        return Alias(out, name_parts[-1])
    return None


def to_origin(origin: Any) -> Origin | None:
    if origin is None:
        return None
    if isinstance(origin, Origin):
        return origin
    try:
        line, col = origin
        return Origin(line=line, start_position=col)
    except (TypeError, ValueError):
        return None


# ---------------------------------------------------------------------------------------------
# Levenshtein ordering of suggestions (Spark's orderSuggestedIdentifiersBySimilarity)


def _levenshtein(a: str, b: str) -> int:
    prev = list(range(len(b) + 1))
    for i, ca in enumerate(a, 1):
        cur = [i]
        for j, cb in enumerate(b, 1):
            cur.append(min(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (ca != cb)))
        prev = cur
    return prev[-1]


def _quote_if_needed(part: str) -> str:
    import re

    return part if re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", part) else quote(part)


def suggestions(name_parts: Sequence[str], attrs: Sequence[AttributeReference]) -> list[str]:
    """Spark's ``orderSuggestedIdentifiersBySimilarity``: candidate names for an unresolved
    column, with a common qualifier stripped, closest first (Levenshtein), at most 5."""
    auto = "__auto_generated_subquery_name"
    cands: list[tuple[str, ...]] = []
    for a in attrs:
        c = a.qualifier + (a.name,)
        if c not in cands:
            cands.append(c)
    base = ".".join(_quote_if_needed(p) for p in name_parts)
    if len(name_parts) == 1 and len({c[:-1] for c in cands}) == 1:
        stripped = [c[-1:] for c in cands]
    elif len(name_parts) <= 2 and len({c[:-2] for c in cands}) == 1:
        stripped = [c[-2:] for c in cands]
    else:
        stripped = cands
    ranked = sorted(stripped, key=lambda c: _levenshtein(quote_parts(c), base))
    # the generated name of an unaliased FROM subquery is never shown (Spark's toSQLId)
    return [quote_parts(tuple(x for x in c[:-1] if x != auto) + c[-1:]) for c in ranked[:5]]


def unresolved_column_error(
    name_parts: Sequence[str], attrs: Sequence[AttributeReference], origin: Any = None
) -> AnalysisError:
    """Spark's ``UNRESOLVED_COLUMN.WITH_SUGGESTION`` (or ``WITHOUT_SUGGESTION``)."""
    name = quote_parts(name_parts)
    props = suggestions(name_parts, attrs)
    if not props:
        return AnalysisError(
            f"A column, variable, or function parameter with name {name} cannot be resolved.",
            error_class="UNRESOLVED_COLUMN.WITHOUT_SUGGESTION",
            parameters={"objectName": name},
            origin=to_origin(origin),
        )
    proposal = ", ".join(props)
    return AnalysisError(
        f"A column, variable, or function parameter with name {name} cannot be resolved. "
        f"Did you mean one of the following? [{proposal}].",
        error_class="UNRESOLVED_COLUMN.WITH_SUGGESTION",
        parameters={"objectName": name, "proposal": proposal},
        origin=to_origin(origin),
    )


# ---------------------------------------------------------------------------------------------
# USING-join projects and hidden (metadata) columns


@node
class UsingJoinProject(Project):
    """A Project over a USING/NATURAL join; ``hidden_output`` are the join's columns it drops
    (the duplicate key columns), reachable only through a qualified name (``nt2.k``)."""

    hidden_output: tuple[AttributeReference, ...] = ()


def metadata_output(plan: LogicalPlan) -> tuple[AttributeReference, ...]:
    """Hidden columns visible above ``plan`` (qualified access only)."""
    match plan:
        case UsingJoinProject(hidden_output=hidden, child=child):
            return hidden + metadata_output(child)
        case Project() | Aggregate() | SubqueryAlias() | View() | Distinct():
            return ()
        case Join(left=left, right=right, join_type=jt):
            if isinstance(jt, JoinType) and not jt.outputs_right:
                return metadata_output(left)
            return metadata_output(left) + metadata_output(right)
        case UnaryNode():
            return metadata_output(plan.children[0])
        case _:
            return ()


def children_metadata(plan: LogicalPlan) -> tuple[AttributeReference, ...]:
    out: tuple[AttributeReference, ...] = ()
    for c in plan.children:
        if c.resolved:
            out += metadata_output(c)
    return out


# ---------------------------------------------------------------------------------------------
# HAVING names resolved against the aggregate's input first (Spark's TempResolvedColumn)


@node
class TempResolvedColumn(Expression):
    """Spark's ``TempResolvedColumn``: a HAVING name resolved, for now, against the input of the
    Aggregate below (``child`` is that input column; ``name_parts`` the name as written).

    Columns in HAVING resolve against ``agg.child.output`` before the select-list aliases
    (SPARK-31519).  ResolveAggregateFunctions keeps the input column where it is an aggregate's
    argument or (part of) a grouping expression; elsewhere it sets ``has_tried`` and
    ResolveReferences resolves the name again, against the Aggregate's output (the aliases).
    :func:`remove_temp_resolved_columns` ends the Resolution batch: a column still tried becomes
    an ``UnresolvedAttribute`` again (CheckAnalysis reports it), any other its ``child``.

    It is resolved and typed as its child (type coercion sees the input column's type, as in
    Spark) and canonicalizes to it (:meth:`canonicalize_node`), so ``b`` matches ``GROUP BY b``.
    """

    child: Expression
    name_parts: tuple[str, ...]
    has_tried: bool = False

    @property
    def data_type(self) -> T.DataType:
        return self.child.data_type

    @property
    def nullable(self) -> bool:
        return self.child.nullable

    def canonicalize_node(self) -> Expression:
        return self.child  # Spark's TempResolvedColumn.canonicalized: the child's

    def simple_string(self) -> str:
        return f"tempresolvedcolumn({self.child.simple_string()})"

    def sql(self) -> str:
        return self.child.sql()


def trim_temp_resolved_columns(e: Expression) -> Expression:
    """``e`` with every :class:`TempResolvedColumn` replaced by its input column (Spark's
    ``trimTempResolvedColumn``)."""
    if not e.exists(lambda x: isinstance(x, TempResolvedColumn)):
        return e
    return e.transform_up(lambda x: x.child if isinstance(x, TempResolvedColumn) else None)


def has_tried_temp_column(e: Expression) -> bool:
    return e.exists(lambda x: isinstance(x, TempResolvedColumn) and x.has_tried)


def remove_temp_resolved_columns(plan: LogicalPlan, ctx: Any = None) -> LogicalPlan:
    """Spark's ``RemoveTempResolvedColumn`` (run once after the Resolution batch): a tried
    column that matched no alias is an ``UnresolvedAttribute`` again, any other its child."""

    def fix(x: Expression) -> Expression | None:
        if isinstance(x, TempResolvedColumn):
            return UnresolvedAttribute(x.name_parts) if x.has_tried else x.child
        return None

    def rule(p: LogicalPlan) -> LogicalPlan:
        if not any(e.contains(TempResolvedColumn) for e in p.expressions()):
            return p
        return p.map_expressions(lambda e: e.transform_up(fix))

    return plan.transform_up(rule)


# ---------------------------------------------------------------------------------------------
# Unresolved-ness


UNRESOLVED_EXPR_TYPES = (
    UnresolvedAttribute,
    UnresolvedStar,
    UnresolvedFunction,
    UnresolvedAlias,
    UnresolvedOrdinal,
)


def has_unresolved(e: Expression) -> bool:
    """True if ``e`` still holds an unresolved node (names, stars, functions, subquery plans).
    Unlike ``resolved`` this ignores type-check failures."""

    def bad(x: Expression) -> bool:
        if isinstance(x, UNRESOLVED_EXPR_TYPES):
            return True
        if isinstance(x, SubqueryExpression):
            return not x.plan.resolved
        return False

    return e.exists(bad)


# ---------------------------------------------------------------------------------------------
# Pretty names (Spark's toPrettySQL)


@node
class PrettyName(LeafExpression):
    """Stand-in used only while computing a column name: ``sql()`` is ``text`` verbatim."""

    text: str
    dtype: Any = None

    @property
    def data_type(self) -> T.DataType:
        return self.dtype

    @property
    def resolved(self) -> bool:
        return True

    def sql(self) -> str:
        return self.text

    def simple_string(self) -> str:
        return self.text


def pretty_sql(e: Expression, implicit_casts: dict[int, object] | None = None,
               time_zone: str = "UTC") -> str:
    """Auto-generated column name (Spark's ``toPrettySQL``): see
    :func:`ember.expressions.misc.to_pretty_sql`; never raises (falls back to ``e.sql()``)."""

    try:
        return to_pretty_sql(e, implicit_casts, time_zone)
    except Exception:  # noqa: BLE001 - naming must never break analysis
        return e.sql()


def auto_alias_name(e: Expression, implicit_casts: dict[int, object] | None = None,
                    time_zone: str = "UTC") -> str:
    """The name Spark's ``ResolveAliases`` gives an unaliased select item: a cast of a column
    keeps the column's name (``cast(a as string)``, ``try_cast(s as int)`` -> ``a``, ``s``),
    anything else :func:`pretty_sql` (omitting the casts in ``implicit_casts``, which the
    analyzer inserted: an ``IN (subquery)`` is only named after TypeCoercion has run); TIMESTAMP
    literals show in ``time_zone``, the session time zone."""

    if isinstance(e, Cast) and isinstance(e.child, NamedExpression):
        return e.child.name
    return pretty_sql(e, implicit_casts, time_zone)


def qualified_sql(e: Expression) -> str:
    """``e.sql()`` with attributes written ``qualifier.name`` (Spark's messages, e.g.
    ``count(testdata.a)``)."""

    def rule(x: Expression) -> Expression | None:
        if isinstance(x, AttributeReference):
            return PrettyName(".".join(x.qualifier + (x.name,)), x.data_type)
        return None

    try:
        return e.transform_up(rule).sql()
    except Exception:  # noqa: BLE001
        return e.sql()


# ---------------------------------------------------------------------------------------------
# Semantic equality


def equal_ignoring_aliases(a: Expression, b: Expression) -> bool:
    """Whether ``a`` and ``b`` are the same expression as the analyzer matches select-list,
    HAVING and ORDER BY expressions to grouping expressions: equal canonical forms
    (``Expression.canonicalized``) once every alias is trimmed (Spark's ``trimAliases``).
    Unlike ``Expression.semantic_equals`` this holds for non-deterministic expressions too:
    ``SELECT rand(1) ... GROUP BY rand(1)`` names the grouping expression (Spark's
    ``PullOutNondeterministic`` matches those by equality)."""
    return _trim_aliases(a).canonicalized == _trim_aliases(b).canonicalized


def _trim_aliases(e: Expression) -> Expression:
    if not e.exists(lambda x: isinstance(x, Alias)):
        return e
    return e.transform_up(lambda x: x.child if isinstance(x, Alias) else None)


def strip_alias(e: Expression) -> Expression:
    return e.child if isinstance(e, Alias) else e
