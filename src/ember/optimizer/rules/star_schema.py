"""StarSchemaDetection: find a fact table and its selective dimensions among joined items.

Spark's ``StarSchemaDetection``, used by ReorderJoin when
``spark.sql.cbo.starSchemaDetection`` is true and ``spark.sql.cbo.enabled`` false, and by
CostBasedJoinReorder's star filter (``spark.sql.cbo.joinReorder.dp.star.filter``).

:func:`find_star_joins` ``(plans, conds, conf)`` returns ``[fact, dim1, dim2, ...]`` or ``[]``:

1. every plan must be a *base table access* -- Projects / deterministic Filters / hints /
   aliases over a leaf whose statistics carry a row count;
2. the fact table is the one with the most rows (the leaf's row count; with CBO on, the plan's
   own estimate when it has one); when the second largest has more than
   ``spark.sql.cbo.starJoinFTRatio`` (0.9) times as many rows there is no star;
3. the fact joins are the plans with a binary comparison (``= <=> < <= > >=``) connecting them to
   the fact table; each needs a ``col <cmp> col`` condition whose two columns have column
   statistics;
4. a dimension is kept when some fact-join condition is an equality ``col = col`` whose
   dimension-side column is unique (no NULLs, ``|ndv / rows - 1| <= 2 *
   spark.sql.statistics.ndv.maxError``);
5. fewer than two dimensions: no star.

:func:`reorder_star_joins` ``(items, conds, conf)`` considers only items joined as Inner, and
returns ``[(fact, Inner)] + [(dim, Inner) ...]`` with dimensions by ascending cardinality, or
``[]`` when no star is found or no dimension is *selective* (has a local predicate other than
``isnotnull``, in ``conds`` or pushed into its base-table access).

Statistics come from ``ember.plans.logical.statistics.plan_stats(plan, conf)`` (Spark's
``plan.stats``); :data:`STATS_PROVIDER` can be replaced (tests) by any function with that
signature returning an object with ``row_count`` and ``attribute_stats`` (``{attr id:
ColumnStat}``).  Reads ``spark.sql.cbo.enabled``, ``spark.sql.cbo.starJoinFTRatio``,
``spark.sql.statistics.ndv.maxError``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from ember.conf import CBO_ENABLED, CBO_STAR_JOIN_FT_RATIO, NDV_MAX_ERROR
from ember.expressions.base import AttributeReference, Expression, split_conjuncts
from ember.expressions.predicate_helper import can_evaluate
from ember.plans.logical.join_type import JoinType
from ember.plans.logical.nodes import (
    Filter,
    LeafNode,
    LogicalPlan,
    Project,
    ResolvedHint,
    SubqueryAlias,
    View,
)
from ember.plans.logical.statistics import plan_stats
from ember.expressions.predicates import (
    EqualNullSafe, EqualTo, GreaterThan, GreaterThanOrEqual, LessThan, LessThanOrEqual, IsNotNull,
)

if TYPE_CHECKING:  # pragma: no cover
    from ember.conf import SQLConf

__all__ = [
    "find_star_joins",
    "reorder_star_joins",
    "reorder_star_join",
    "base_table_access",
    "STATS_PROVIDER",
    "plan_statistics",
]

def _default_stats(plan: LogicalPlan, conf: "SQLConf") -> Any:
    return plan_stats(plan, conf)


#: ``(plan, conf) -> Statistics``; replace to inject statistics (tests).
STATS_PROVIDER: Callable[[LogicalPlan, "SQLConf"], Any] = _default_stats


def plan_statistics(plan: LogicalPlan, conf: "SQLConf") -> Any:
    """The statistics of ``plan`` from :data:`STATS_PROVIDER`, or None when they cannot be
    computed (e.g. an unresolved test plan)."""
    try:
        return STATS_PROVIDER(plan, conf)
    except ImportError:
        return None
    except Exception:  # noqa: BLE001 -- no statistics means "no star", as in Spark
        return None


# ---------------------------------------------------------------------------------------------
# Base table access (Spark's PhysicalOperation over a LeafNode)


def base_table_access(plan: LogicalPlan) -> tuple[LeafNode, list[Expression]] | None:
    """``(leaf, pushed_predicates)`` when ``plan`` is Projects / deterministic Filters / hints /
    aliases over a leaf; else None."""
    preds: list[Expression] = []
    p = plan
    while True:
        match p:
            case LeafNode():
                return p, preds
            case Project(project_list=pl, child=child) if all(e.deterministic for e in pl):
                p = child
            case Filter(condition=cond, child=child) if cond.deterministic:

                preds.extend(split_conjuncts(cond))
                p = child
            case ResolvedHint(child=child) | SubqueryAlias(child=child) | View(child=child):
                p = child
            case _:
                return None


def _leaf_column(column: AttributeReference, plan: LogicalPlan) -> int | None:
    """The id of the leaf column ``column`` is a (renamed-free) pass-through of, or None."""
    p = plan
    while True:
        match p:
            case LeafNode():
                return column.id if column.id in p.output_set else None
            case Project(child=child):
                if column.id not in p.output_set:
                    return None
                p = child
            case Filter(child=child) | ResolvedHint(child=child) | SubqueryAlias(child=child) | \
                    View(child=child):
                p = child
            case _:
                return None


def _leaf_stats(plan: LogicalPlan, conf: "SQLConf") -> tuple[LeafNode, Any] | None:
    access = base_table_access(plan)
    if access is None:
        return None
    stats = plan_statistics(access[0], conf)
    if stats is None or getattr(stats, "row_count", None) is None:
        return None
    return access[0], stats


def _cardinality(plan: LogicalPlan, conf: "SQLConf") -> int | None:
    leaf = _leaf_stats(plan, conf)
    if leaf is None:
        return None
    if CBO_ENABLED.read(conf):
        own = plan_statistics(plan, conf)
        if own is not None and getattr(own, "row_count", None) is not None:
            return int(own.row_count)
    return int(leaf[1].row_count)


def _column_stat(column: AttributeReference, plan: LogicalPlan, conf: "SQLConf") -> Any:
    leaf = _leaf_stats(plan, conf)
    if leaf is None:
        return None
    col_id = _leaf_column(column, plan)
    if col_id is None:
        return None
    return (getattr(leaf[1], "attribute_stats", None) or {}).get(col_id)


def _is_unique(column: AttributeReference, plan: LogicalPlan, conf: "SQLConf") -> bool:
    leaf = _leaf_stats(plan, conf)
    cs = _column_stat(column, plan, conf)
    if leaf is None or cs is None:
        return False
    rows = leaf[1].row_count
    if rows < 0 or cs.distinct_count is None or cs.null_count is None or cs.null_count > 0:
        return False
    if rows == 0:
        return False
    return abs(cs.distinct_count / rows - 1.0) <= 2 * NDV_MAX_ERROR.read(conf)


def _binary_comparison_cols(c: Expression) -> tuple[Expression, Expression, bool] | None:
    """``(left, right, is_equality)`` of a binary comparison; None for anything else."""

    match c:
        case EqualTo(left=a, right=b) | EqualNullSafe(left=a, right=b):
            return a, b, True
        case GreaterThan(left=a, right=b) | GreaterThanOrEqual(left=a, right=b) | \
                LessThan(left=a, right=b) | LessThanOrEqual(left=a, right=b):
            return a, b, False
        case _:
            return None


def find_join_conditions(p1: LogicalPlan, p2: LogicalPlan,
                         conds: list[Expression]) -> list[Expression]:
    """Binary comparisons of ``conds`` that need both ``p1`` and ``p2`` (Spark's
    ``findJoinConditions``)."""
    refs = p1.output_set | p2.output_set
    return [c for c in conds if _binary_comparison_cols(c) is not None
            and not can_evaluate(c, p1) and not can_evaluate(c, p2) and c.references <= refs]


def find_star_joins(plans: list[LogicalPlan], conds: list[Expression],
                    conf: "SQLConf") -> list[LogicalPlan]:
    """``[fact] + eligible dimensions`` (dimensions in descending cardinality), or ``[]``."""
    if len(plans) < 2:
        return []
    cards: list[tuple[LogicalPlan, int]] = []
    for p in plans:
        card = _cardinality(p, conf)
        if card is None:
            return []
        cards.append((p, card))
    cards.sort(key=lambda pc: -pc[1])  # stable: ties keep input order, as Scala's sortBy
    if cards[1][1] > CBO_STAR_JOIN_FT_RATIO.read(conf) * cards[0][1]:
        return []
    fact = cards[0][0]
    fact_joins = [p for p, _ in cards[1:] if find_join_conditions(fact, p, conds)]
    fact_conds = [c for p in fact_joins for c in find_join_conditions(fact, p, conds)]

    def sides(c: Expression, dim: LogicalPlan) -> tuple[AttributeReference, AttributeReference,
                                                        bool] | None:
        bc = _binary_comparison_cols(c)
        if bc is None:
            return None
        lhs, rhs, is_eq = bc
        if not isinstance(lhs, AttributeReference) or not isinstance(rhs, AttributeReference):
            return None
        dim_col = lhs if lhs.id in dim.output_set else rhs
        fact_col = lhs if lhs.id in fact.output_set else rhs
        return dim_col, fact_col, is_eq

    for dim in fact_joins:
        ok = False
        for c in fact_conds:
            s = sides(c, dim)
            if s is not None and _column_stat(s[0], dim, conf) is not None \
                    and _column_stat(s[1], fact, conf) is not None:
                ok = True
                break
        if not ok:
            return []
    eligible = []
    for dim in fact_joins:
        for c in fact_conds:
            s = sides(c, dim)
            if s is not None and s[2] and _is_unique(s[0], dim, conf):
                eligible.append(dim)
                break
    if len(eligible) < 2:
        return []
    return [fact] + eligible


def _is_selective(dims: list[LogicalPlan], conds: list[Expression]) -> bool:
    for d in dims:
        access = base_table_access(d)
        if access is None:
            continue
        local = any(can_evaluate(c, d) for c in conds if not isinstance(c, IsNotNull))
        pushed = access[1]
        if local or (pushed and not all(isinstance(p, IsNotNull) for p in pushed)):
            return True
    return False


def reorder_star_joins(items: list[tuple[LogicalPlan, JoinType]], conds: list[Expression],
                       conf: "SQLConf") -> list[tuple[LogicalPlan, JoinType]]:
    """Spark's ``StarSchemaDetection.reorderStarJoins``: ``[(fact, Inner), (dim, Inner) ...]``
    with selective dimensions by ascending cardinality, or ``[]``.

    >>> # items [(d1, Inner), (f, Inner), (d2, Inner)] with f.k1 = d1.k, f.k2 = d2.k, d2.x = 1
    >>> #   -> [(f, Inner), (d2, Inner), (d1, Inner)]    (when d2 is smaller than d1)
    """
    eligible = [p for p, jt in items if jt is JoinType.INNER]
    star = find_star_joins(eligible, conds, conf)
    if not star:
        return []
    fact, dims = star[0], star[1:]
    if not _is_selective(dims, conds):
        return []
    keyed = [(d, _cardinality(d, conf) or 0) for d in dims]
    keyed.sort(key=lambda dc: dc[1])
    return [(fact, JoinType.INNER)] + [(d, JoinType.INNER) for d, _ in keyed]


#: The name used in the wave-1 contract.
reorder_star_join = reorder_star_joins
