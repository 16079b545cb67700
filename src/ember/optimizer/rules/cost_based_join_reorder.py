"""CostBasedJoinReorder: order inner joins by estimated cost (Spark's DP, plus GOO beyond it).

Spark's ``CostBasedJoinReorder`` / ``JoinReorderDP``, run when both
``spark.sql.cbo.enabled`` and ``spark.sql.cbo.joinReorder.enabled`` are true.  Walking top-down,
at an Inner/Cross join with a condition and no hint (or a Project of plain attributes over one),
``extract_inner_joins`` collects the items (through both sides: bushy, left- and right-deep
trees; a join without condition or with a hint, or anything else, is an item) and the
de-duplicated conjuncts.  With ``2 < #items <= spark.sql.cbo.joinReorder.dp.threshold`` (12),
at least one conjunct, and a row count for every item, the DP searches left-deep-leaning bushy
plans level by level exactly as Spark::

    Join Inner, (a = c)              Project [a, b, c]
    :- Join Inner, (a = b)           +- Join Inner, (a = b)
    :  :- big_a          ==>            :- Join Inner, (a = c)
    :  +- big_b                         :  :- big_a
    +- tiny_c                           :  +- tiny_c
                                        +- big_b

- a candidate joins two disjoint item sets connected by at least one conjunct (cartesian products
  are never generated); the deeper side goes left; columns no longer needed are pruned by a
  Project;
- cost of a plan = sum over its intermediate joins (not the root) of (rows, bytes); a new plan
  replaces the one found for the same item set when ``(rows'/rows)^w * (bytes'/bytes)^(1-w) <
  1`` with ``w = spark.sql.cbo.joinReorder.card.weight`` (0.7);
- ``spark.sql.cbo.joinReorder.dp.star.filter``: the star block (StarSchemaDetection) is built
  before any other table is attached.

Two modes:

* **Spark mode** (default; plain ``spark.sql.cbo.*`` settings, with ANALYZE statistics): exactly
  Spark's choice -- the DP above, nothing done above the threshold (Spark leaves the joins as
  written), Spark's estimates.  Estimation: each item's row count, column NDVs
  (``distinct_count``) and average lengths come from ``plan_stats`` (Spark's ``plan.stats``; via
  :data:`ember.optimizer.rules.star_schema.STATS_PROVIDER`); intermediate joins are estimated
  incrementally as Spark's ``JoinEstimation`` does for inner equi-joins without histograms:
  ``rows = min over key pairs with NDVs of ceil(|L| * |R| / max(ndv_l, ndv_r))`` (the cartesian
  product when no key has statistics), key NDV = min of the two, other NDVs scaled down with
  the row count; bytes = rows * (8 + sum of column widths).
* **Enhanced mode** (beyond Spark; ``ember.cbo.joinReorder.enhanced``, which defaults to
  ``ember.cbo.autoStats.enabled``, so users who opt in to automatic statistics get it):
  order-independent estimates (:class:`_CardModel`: equivalence classes of join columns,
  composite keys, multi-table predicates such as an ``OR`` across two tables, Yao's formula for
  NDVs of filtered tables, filtered in-memory tables measured on a sample); cost = sum of the
  estimated rows of the intermediate joins (C_out); search = exact DP over connected
  subgraphs (DPccp) when it has at most :data:`DP_MAX_UNITS` items and
  :data:`DP_PAIR_BUDGET` pairs, else the cheapest pairs are merged greedily first (GOO, then
  DP over the components: IDP); plain GOO and greedy left-deep orders from every item are
  candidates too; and, as a safety net, the order as written (ReorderJoin's) is kept unless
  the found order is estimated strictly cheaper.  Any number of items (16 tables plan in a
  few tens of ms); a disconnected graph gets cartesian products last (smallest first).

In both modes items are reordered recursively (joins inside items first), an item without row
count leaves the joins as written, and conjuncts that no join can take (no references, e.g. a
literal -- Spark's DP silently loses them) are kept in a Filter on top.  In Spark mode a
disconnected join graph leaves the joins as written.

Inner-join semantics make any order valid; outer/semi/anti and hinted joins are items, never
reordered through.  Reads the ``spark.sql.cbo.*`` keys above.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING

from ember.conf import (
    AUTO_STATS_ENABLED,
    CBO_ENABLED,
    CBO_JOIN_REORDER_CARD_WEIGHT,
    CBO_JOIN_REORDER_DP_STAR_FILTER,
    CBO_JOIN_REORDER_DP_THRESHOLD,
    CBO_JOIN_REORDER_ENABLED,
    JOIN_REORDER_ENHANCED,
)
from ember.expressions.base import AttributeReference, Expression, and_all, split_conjuncts
from ember.optimizer.rule_executor import Rule
from ember.optimizer.rules.star_schema import (
    find_star_joins, plan_statistics, _leaf_column, base_table_access,
)
from ember.plans.logical.join_type import JoinType
from ember.plans.logical.local_evaluation import evaluate_local
from ember.plans.logical.nodes import Filter, Join, LogicalPlan, Project, LocalRelation
from ember.plans.logical.statistics import column_size, condition_selectivity, default_size
from ember.expressions import predicates as P
from ember.expressions.cast import Cast
from ember.expressions.predicates import EqualNullSafe, EqualTo, Like

if TYPE_CHECKING:  # pragma: no cover
    from ember.conf import SQLConf

__all__ = ["CostBasedJoinReorder", "extract_inner_joins", "JoinOrderEstimate", "default_size",
           "enhanced_mode", "enhanced_search", "yao_ndv"]


# ---------------------------------------------------------------------------------------------
# Item extraction


def _is_reorderable_join(p: LogicalPlan) -> bool:
    return (isinstance(p, Join) and isinstance(p.join_type, JoinType)
            and p.join_type.is_inner_like and p.condition is not None and p.hint.is_empty)


def extract_inner_joins(plan: LogicalPlan) -> tuple[list[LogicalPlan], list[Expression]]:
    """Spark's ``extractInnerJoins``: ``(items, conjuncts)`` through both sides of Inner/Cross
    joins that have a condition and no hint (and Projects of plain attributes over them);
    conjuncts de-duplicated, in first-seen order."""
    items: list[LogicalPlan] = []
    conds: dict[Expression, None] = {}

    def go(p: LogicalPlan) -> None:
        match p:
            case Join(left=left, right=right, condition=cond) if _is_reorderable_join(p):
                go(left)
                go(right)
                for c in split_conjuncts(cond):
                    conds.setdefault(c, None)
            case Project(project_list=pl, child=child) if (
                    _is_reorderable_join(child)
                    and all(isinstance(e, AttributeReference) for e in pl)):
                go(child)
            case _:
                items.append(p)

    go(plan)
    return items, list(conds)


# ---------------------------------------------------------------------------------------------
# Estimation


@dataclass(slots=True)
class JoinOrderEstimate:
    """Estimated statistics of a (partial) join: rows and the NDV of each condition column."""

    rows: int
    ndv: dict[int, int]


class _Model:
    """Statistics of the items and of the conjuncts, shared by the DP and GOO."""

    def __init__(self, items: list[LogicalPlan], conds: list[Expression], output: tuple,
                 conf: "SQLConf") -> None:
        self.items = items
        self.conds = conds
        self.n = len(items)
        self.output_ids = frozenset(a.id for a in output)
        self.ok = True
        owner: dict[int, int] = {}
        for i, it in enumerate(items):
            for a in it.output:
                owner.setdefault(a.id, i)
        self.owner = owner
        # each conjunct: bitmask of the items it reads (0 = no references, never a join cond)
        self.cond_mask: list[int] = []
        for c in conds:
            m = 0
            for r in c.references:
                i = owner.get(r)
                if i is None:
                    m = -1
                    break
                m |= 1 << i
            self.cond_mask.append(m)
        # join-graph adjacency (items sharing a conjunct), for the enhanced search
        self.adj: list[int] = [0] * self.n
        for m in self.cond_mask:
            if m > 0 and m & (m - 1):
                for i in range(self.n):
                    if m >> i & 1:
                        self.adj[i] |= m & ~(1 << i)
        # equi-key pairs per conjunct (attribute ids), for the estimator
        self.cond_keys: list[tuple[int, int] | None] = [self._key_pair(c) for c in conds]
        key_cols = {k for kp in self.cond_keys if kp for k in kp}
        self.cond_refs: list[frozenset[int]] = [c.references for c in conds]
        cond_cols: set[int] = set()
        for r in self.cond_refs:
            cond_cols |= r
        self.base: list[JoinOrderEstimate] = []
        self.width: dict[int, int] = {}
        self.item_cols: list[tuple[int, ...]] = []
        for it in items:
            st = plan_statistics(it, conf)
            rows = None if st is None else getattr(st, "row_count", None)
            if rows is None:
                self.ok = False
                return
            attr_stats = getattr(st, "attribute_stats", None) or {}
            ndv: dict[int, int] = {}
            for a in it.output:
                cs = attr_stats.get(a.id)
                if a.id in key_cols and cs is not None and cs.distinct_count is not None:
                    ndv[a.id] = int(cs.distinct_count)
                avg = None if cs is None else getattr(cs, "avg_len", None)
                self.width[a.id] = column_size(a.data_type, None if avg is None else int(avg))
            self.base.append(JoinOrderEstimate(int(rows), ndv))
            self.item_cols.append(tuple(a.id for a in it.output))
        self.cond_cols = frozenset(cond_cols)

    @staticmethod
    def _key_pair(c: Expression) -> tuple[int, int] | None:
        match c:
            case EqualTo(left=AttributeReference() as a, right=AttributeReference() as b) | \
                    EqualNullSafe(left=AttributeReference() as a, right=AttributeReference() as b):
                return a.id, b.id
            case _:
                return None

    def mask_of(self, ids: int) -> list[int]:
        return [i for i in range(self.n) if ids >> i & 1]

    def join_conds(self, m1: int, m2: int) -> list[int]:
        """Indices of the conjuncts joining item sets ``m1`` and ``m2`` (Spark's test: not
        evaluable on either side, evaluable on both)."""
        u = m1 | m2
        return [i for i, cm in enumerate(self.cond_mask)
                if cm > 0 and cm & u == cm and cm & m1 != cm and cm & m2 != cm]

    def estimate(self, e1: JoinOrderEstimate, m1: int, e2: JoinOrderEstimate, m2: int,
                 conds: list[int]) -> JoinOrderEstimate:
        """Spark's inner-join estimate by NDV (no histograms, no value intervals)."""
        card = e1.rows * e2.rows
        keys: list[tuple[int, int]] = []
        for ci in conds:
            kp = self.cond_keys[ci]
            if kp is None:
                continue
            a, b = kp
            if a in e1.ndv and b in e2.ndv:
                keys.append((a, b))
            elif b in e1.ndv and a in e2.ndv:
                keys.append((b, a))
        new_ndv: dict[int, int] = {}
        for a, b in keys:
            na, nb = e1.ndv[a], e2.ndv[b]
            c = math.ceil(e1.rows * e2.rows / max(na, nb, 1))
            if c < card:
                card = c
            new_ndv[a] = new_ndv[b] = min(na, nb)
        for side in (e1, e2):
            for col, v in side.ndv.items():
                if col in new_ndv:
                    continue
                new_ndv[col] = math.ceil(v * card / side.rows) if card < side.rows else v
        for col in new_ndv:
            if new_ndv[col] > card:
                new_ndv[col] = card
        return JoinOrderEstimate(int(card), new_ndv)

    def size(self, rows: int, cols: list[int]) -> int:
        width = 8 + sum(self.width.get(c, 8) for c in cols)
        return rows * width if rows > 0 else 1

    def needed_cols(self, mask: int, collected: frozenset[int]) -> list[int]:
        """Output columns of a join over ``mask`` that later joins or the final output need."""
        needed = set(self.output_ids)
        for i, r in enumerate(self.cond_refs):
            if i not in collected:
                needed |= r
        return [col for i in self.mask_of(mask) for col in self.item_cols[i] if col in needed]


@dataclass(slots=True)
class _Plan:
    """A JoinPlan of the search: item set, children (None for an item), conjuncts used."""

    mask: int
    size_items: int
    left: "_Plan | None"
    right: "_Plan | None"
    conds: tuple[int, ...]           # conjuncts of this join
    collected: frozenset[int]        # all conjuncts used in this subtree
    est: JoinOrderEstimate
    card: int                        # cost: sum of intermediate rows
    bytes: int                       # cost: sum of intermediate sizes
    root_rows: int                   # this plan's own output rows / bytes (0 for an item)
    root_bytes: int

    def better_than(self, other: "_Plan", weight: float) -> bool:
        if other.card == 0 or other.bytes == 0:
            return False
        rel_rows = self.card / other.card
        rel_size = self.bytes / other.bytes
        return rel_rows ** weight * rel_size ** (1 - weight) < 1


def _build(model: _Model, p1: _Plan, p2: _Plan, star: tuple[int, int] | None) -> _Plan | None:
    m1, m2 = p1.mask, p2.mask
    if m1 & m2:
        return None
    u = m1 | m2
    if star is not None:
        s, ns = star
        if not (u & s == u or s & u == s or u & ns == u):
            return None
    conds = model.join_conds(m1, m2)
    if not conds:
        return None
    left, right = (p1, p2) if p1.size_items >= p2.size_items else (p2, p1)
    collected = p1.collected | p2.collected | frozenset(conds)
    est = model.estimate(left.est, left.mask, right.est, right.mask, conds)
    rows = est.rows
    nbytes = model.size(rows, model.needed_cols(u, collected))
    return _Plan(u, p1.size_items + p2.size_items, left, right, tuple(conds), collected, est,
                 p1.card + p1.root_rows + p2.card + p2.root_rows,
                 p1.bytes + p1.root_bytes + p2.bytes + p2.root_bytes, rows, nbytes)


def _leaf_plans(model: _Model) -> list[_Plan]:
    return [_Plan(1 << i, 1, None, None, (), frozenset(), model.base[i], 0, 0, 0, 0)
            for i in range(model.n)]


def _dp(model: _Model, conf: "SQLConf") -> _Plan | None:
    weight = CBO_JOIN_REORDER_CARD_WEIGHT.read(conf)
    star: tuple[int, int] | None = None
    if CBO_JOIN_REORDER_DP_STAR_FILTER.read(conf):
        star_plans = find_star_joins(model.items, model.conds, conf)
        if star_plans:
            s = 0
            for sp in star_plans:
                # Spark maps plans to indexes with a Map (equality; duplicates -> last index)
                idx = [i for i, it in enumerate(model.items) if it == sp]
                s |= 1 << idx[-1]
            ns = ((1 << model.n) - 1) & ~s
            if s and ns:
                star = (s, ns)
    levels: list[dict[int, _Plan]] = [{p.mask: p for p in _leaf_plans(model)}]
    while len(levels) < model.n and len(levels[-1]) > 0:
        lev = len(levels) - 1
        nxt: dict[int, _Plan] = {}
        k = 0
        while k <= lev - k:
            one = list(levels[k].values())
            other_all = list(levels[lev - k].values())
            for i, p1 in enumerate(one):
                others = one[i:] if k == lev - k else other_all
                m1 = p1.mask
                for p2 in others:
                    if m1 & p2.mask:
                        continue
                    new = _build(model, p1, p2, star)
                    if new is None:
                        continue
                    old = nxt.get(new.mask)
                    if old is None or new.better_than(old, weight):
                        nxt[new.mask] = new
            k += 1
        levels.append(nxt)
    if len(levels) != model.n or len(levels[-1]) != 1:
        return None
    return next(iter(levels[-1].values()))


def _to_logical(model: _Model, p: _Plan) -> LogicalPlan:
    if p.left is None:
        return model.items[p.mask.bit_length() - 1]
    left = _to_logical(model, p.left)
    right = _to_logical(model, p.right)  # type: ignore[arg-type]
    cond = and_all(model.conds[i] for i in p.conds)
    join = Join(left, right, JoinType.INNER if cond is not None else JoinType.CROSS, cond)
    needed = set(model.needed_cols(p.mask, p.collected))
    out = join.output
    if any(a.id not in needed for a in out):
        return Project(tuple(a for a in out if a.id in needed), join)
    return join


def _reorder(plan: LogicalPlan, output: tuple, conf: "SQLConf",
             measured: "_Measured") -> LogicalPlan:
    items, conds = extract_inner_joins(plan)
    items = [_visit(it, conf, measured) for it in items]
    threshold = CBO_JOIN_REORDER_DP_THRESHOLD.read(conf)
    if len(items) <= 2 or not conds:
        return _rebuild_items(plan, items)
    enhanced = enhanced_mode(conf)
    if not enhanced and len(items) > threshold:  # Spark leaves the joins as written
        return _rebuild_items(plan, items)
    model = _Model(items, conds, output, conf)
    if not model.ok:
        return _rebuild_items(plan, items)
    if enhanced:
        cm = _CardModel(model, conf, measured)
        if not cm.ok:
            return _rebuild_items(plan, items)
        best_unit = enhanced_search(cm)
        input_cost, _ = _tree_cost(cm, _input_tree(plan))
        if input_cost <= best_unit.cost:  # safety net: the order as written is as cheap
            return _rebuild_items(plan, items)
        result, _, collected = _tree_to_logical(model, cm, best_unit.tree)
    else:
        best = _dp(model, conf)
        if best is None:
            return _rebuild_items(plan, items)
        result, collected = _to_logical(model, best), best.collected
    leftover = [c for i, c in enumerate(conds) if i not in collected]
    if leftover:
        result = Filter(and_all(leftover), result)  # type: ignore[arg-type]
    match result:
        case Project(project_list=pl, child=Join() as j) if tuple(pl) != tuple(output):
            return Project(tuple(output), j)
        case _ if [a.id for a in result.output] != [a.id for a in output]:
            return Project(tuple(output), result)
        case _:
            return result


def _rebuild_items(plan: LogicalPlan, new_items: list[LogicalPlan]) -> LogicalPlan:
    """``plan`` with its items (in extraction order) replaced by ``new_items``."""
    it = iter(new_items)

    def go(p: LogicalPlan) -> LogicalPlan:
        match p:
            case Join(left=left, right=right) if _is_reorderable_join(p):
                nl = go(left)
                nr = go(right)
                return p.with_children((nl, nr))
            case Project(child=child) if (_is_reorderable_join(child) and all(
                    isinstance(e, AttributeReference) for e in p.project_list)):
                return p.with_children((go(child),))
            case _:
                return next(it)

    return go(plan)


def _visit(p: LogicalPlan, conf: "SQLConf", measured: "_Measured") -> LogicalPlan:
    match p:
        case Join() if _is_reorderable_join(p):
            return _reorder(p, p.output, conf, measured)
        case Project(project_list=pl, child=child) if (
                _is_reorderable_join(child) and all(isinstance(e, AttributeReference) for e in pl)):
            return _reorder(p, p.output, conf, measured)
        case _:
            kids = p.children
            if not kids:
                return p
            return p.with_children(tuple(_visit(k, conf, measured) for k in kids))


class CostBasedJoinReorder(Rule):
    """Spark's ``CostBasedJoinReorder`` (its DP up to the threshold), or Ember's enhanced
    search when ``ember.cbo.joinReorder.enhanced`` / automatic statistics are on (module
    docstring)."""

    rule_name = "CostBasedJoinReorder"

    def apply(self, plan: LogicalPlan, conf: "SQLConf") -> LogicalPlan:
        if not (CBO_ENABLED.read(conf) and CBO_JOIN_REORDER_ENABLED.read(conf)):
            return plan
        return _visit(plan, conf, _Measured())



# ---------------------------------------------------------------------------------------------
# Beyond Spark: the enhanced search (ember.cbo.joinReorder.enhanced, default = auto statistics)

#: Max csg-cmp pairs the exact enhanced DP (DPccp) may enumerate before it falls back to
#: merging the cheapest components greedily first (IDP).
DP_PAIR_BUDGET = 6000
#: At most this many units enter the exact DP (more items are first merged by GOO).
DP_MAX_UNITS = 10
#: Default selectivities of multi-table conditions FilterEstimation does not support.
_RANGE_SEL, _OTHER_SEL = 1.0 / 3.0, 0.9


def enhanced_mode(conf: "SQLConf | None") -> bool:
    """Whether the beyond-Spark join-order search is used: ``ember.cbo.joinReorder.enhanced``
    when set, else ``ember.cbo.autoStats.enabled`` (off: exactly Spark's DP)."""
    v = JOIN_REORDER_ENHANCED.read(conf)
    return bool(AUTO_STATS_ENABLED.read(conf) if v is None else v)


def yao_ndv(ndv: float, rows: float, kept: float) -> float:
    """Distinct values left when ``kept`` of ``rows`` rows (with ``ndv`` distinct values, evenly
    spread) are picked at random (Cardenas/Yao): ``ndv * (1 - (1 - kept/rows)^(rows/ndv))``.
    Spark scales NDVs proportionally (``ndv * kept / rows``), far too low for non-key columns."""
    if ndv <= 0 or rows <= 0 or kept >= rows:
        return float(min(ndv, max(kept, 0.0))) if kept < ndv else float(ndv)
    if kept <= 0:
        return 0.0
    q = kept / rows
    est = ndv * -math.expm1((rows / ndv) * math.log1p(-q)) if q < 1 else ndv
    return max(1.0, min(est, kept, ndv))


class _Measured:
    """What the enhanced search measured on in-memory tables during one rule application
    (exact distinct counts of column combinations, filtered row counts from a sample), so each
    is measured once per query.  Kept per application, not per process: the tables belong to a
    Session, and a process-wide cache would keep answers (and, through the plans in its keys,
    tables) after it ends.  Keys hold ``id`` of a table the plan being reordered keeps alive."""

    __slots__ = ("composite_ndv", "sampled_rows")

    def __init__(self) -> None:
        self.composite_ndv: dict[tuple[int, tuple[int, ...]], int] = {}
        self.sampled_rows: dict[tuple[int, LogicalPlan], float] = {}


def _data_composite_ndv(leaf: LogicalPlan, col_ids: tuple[int, ...],
                        measured: _Measured) -> int | None:
    """Exact distinct count of a column combination of an in-memory relation (automatic
    statistics: Ember holds the data), measured once per rule application."""

    if not isinstance(leaf, LocalRelation) or leaf.data is None:
        return None
    pos = {a.id: i for i, a in enumerate(leaf.output)}
    if any(c not in pos for c in col_ids):
        return None
    idx = tuple(sorted(pos[c] for c in col_ids))
    key = (id(leaf.data), idx)
    hit = measured.composite_ndv.get(key)
    if hit is not None:
        return hit
    t = leaf.data.select(list(idx))
    t = t.rename_columns([f"c{i}" for i in range(len(idx))])
    n = t.group_by(t.column_names, use_threads=False).aggregate([]).num_rows
    measured.composite_ndv[key] = n
    return n


#: Rows of an in-memory table on which a filtered table access's predicates are evaluated
#: (automatic statistics) to measure their selectivity; default selectivity of LIKE otherwise.
SAMPLE_ROWS = 4000
_LIKE_SEL = 0.1


def _is_like(e: Expression) -> bool:
    return isinstance(e, Like)


def _sampled_rows(item: LogicalPlan, leaf: LogicalPlan, conf: "SQLConf",
                  measured: _Measured) -> float | None:
    """Estimated rows of a filtered access to an in-memory table: its predicates evaluated on
    (a random sample of at most :data:`SAMPLE_ROWS` rows of) the data -- exact for small
    tables, and right for predicates FilterEstimation cannot estimate (LIKE, column
    comparisons) or whose columns are correlated."""
    import numpy as np


    if not isinstance(leaf, LocalRelation) or leaf.data is None:
        return None
    data = leaf.data
    key = (id(data), item)
    hit = measured.sampled_rows.get(key)
    if hit is not None:
        return hit
    try:
        total = data.num_rows
        if total <= SAMPLE_ROWS:
            sample = data
        else:
            idx = np.sort(np.random.default_rng(0).choice(total, SAMPLE_ROWS, replace=False))
            sample = data.take(idx)
        small = LocalRelation(leaf.attrs, sample)
        plan = item.transform_up(lambda p: small if p is leaf else p)
        out = evaluate_local(plan, conf.batch_size).num_rows
    except Exception:  # noqa: BLE001 -- fall back to the statistics' estimate
        return None
    rows = float(out) if total <= SAMPLE_ROWS else max(out, 0.5) * total / sample.num_rows
    measured.sampled_rows[key] = rows
    return rows


def _strip_cast(e: Expression) -> Expression:
    while isinstance(e, Cast):
        e = e.child
    return e


class _CardModel:
    """Order-independent cardinality of every item set, for the enhanced search.

    ``card(S) = prod(rows_i) * prod(selectivities of the conditions inside S)`` where
    - the equi-join columns form equivalence classes; a class's columns connected inside ``S``
      (``c1 = c2 = ... = cm``) have selectivity ``min(ndv) / prod(ndv)`` (containment: ``1 /
      max(ndv)`` for two columns) -- with Spark's per-join ``min`` over key pairs a join on two
      keys of different tables (TPC-H q05's ``c_nationkey = s_nationkey`` next to ``l_suppkey
      = s_suppkey``) is estimated as the less selective key alone;
    - a composite key between two items (``l_partkey = ps_partkey AND l_suppkey = ps_suppkey``)
      is not independent: its selectivity is ``1 / max(ndv_A(K), ndv_B(K))`` with the
      combination's distinct count (exact from the data with automatic statistics, else the
      product of the NDVs capped by the rows, each capped by the other side's base-table
      count -- containment), kept between the product and the minimum of the single keys';
    - any other condition over several items by FilterEstimation's rules on the items' column
      statistics (an ``OR`` of per-table equalities, as TPC-H q07's nation pair), else 1/3 for a
      range comparison, 0.9 otherwise;
    - item NDVs: the item's statistics, except that a non-filtered column of a filtered base
      table whose NDV was scaled proportionally is re-estimated with :func:`yao_ndv`.
    """

    def __init__(self, graph: "_Model", conf: "SQLConf",
                 measured: _Measured | None = None) -> None:

        self.g = graph
        n = graph.n
        self.ok = True
        self.rows: list[float] = []
        self.measured = _Measured() if measured is None else measured
        stats = []
        bases: list[tuple | None] = []
        auto = AUTO_STATS_ENABLED.read(conf)
        for it in graph.items:
            st = plan_statistics(it, conf)
            r = None if st is None else getattr(st, "row_count", None)
            if r is None:
                self.ok = False
                return
            self.rows.append(max(float(r), 0.0))
            stats.append(getattr(st, "attribute_stats", None) or {})
            access = base_table_access(it)
            base = None
            if access is not None:
                leaf, preds = access
                lst = plan_statistics(leaf, conf)
                if lst is not None and getattr(lst, "row_count", None) is not None:
                    filtered: set[int] = set()
                    for pr in preds:
                        filtered |= pr.references
                    base = (leaf, lst, filtered)
            bases.append(base)
        self.sampled = [False] * n
        for i, base in enumerate(bases):
            if base is None or not base[2]:
                continue
            leaf, lst, _ = base
            got = _sampled_rows(graph.items[i], leaf, conf, self.measured) if auto else None
            if got is not None:
                self.rows[i] = got
                self.sampled[i] = True
            else:  # FilterEstimation has no rule for LIKE: a default instead of 1
                for pr in base_table_access(graph.items[i])[1]:  # type: ignore[index]
                    if _is_like(pr):
                        self.rows[i] *= _LIKE_SEL
        self.auto = auto
        self.stats, self.bases = stats, bases
        attr_of = {a.id: a for it in graph.items for a in it.output}
        self.attr_of = attr_of
        self._leaf_column = _leaf_column
        self._ndv_cache: dict[int, float] = {}
        # equivalence classes of equi-join columns (union-find over attribute ids)
        parent: dict[int, int] = {}

        def find(x: int) -> int:
            while parent.setdefault(x, x) != x:
                parent[x] = parent[parent[x]]
                x = parent[x]
            return x

        self.edges: list[tuple[int, int, int, int]] = []  # (col_a, item_a, col_b, item_b)
        self.complex: list[tuple[int, float]] = []        # (item mask, selectivity)
        for ci, c in enumerate(graph.conds):
            m = graph.cond_mask[ci]
            if m <= 0 or m & (m - 1) == 0:
                continue  # no join condition (leftover filter)
            pair = self._equi_cols(c)
            if pair is not None:
                a, b = pair
                ia, ib = graph.owner[a], graph.owner[b]
                if ia != ib:
                    self.edges.append((a, ia, b, ib))
                    parent[find(a)] = find(b)
                    continue
            self.complex.append((m, self._complex_sel(c, m)))
        classes: dict[int, list[int]] = {}
        for k, (a, _, b, _) in enumerate(self.edges):
            classes.setdefault(find(a), []).append(k)
        self.classes = list(classes.values())
        self.full = (1 << n) - 1
        self._card: dict[int, float] = {}
        self._comp_cache: dict[tuple, float] = {}
        self._prepare()

    # -- statistics ----------------------------------------------------------------------------

    def _equi_cols(self, c: Expression) -> tuple[int, int] | None:
        if isinstance(c, (EqualTo, EqualNullSafe)):
            a, b = _strip_cast(c.left), _strip_cast(c.right)
            if isinstance(a, AttributeReference) and isinstance(b, AttributeReference) \
                    and a.id in self.g.owner and b.id in self.g.owner:
                return a.id, b.id
        return None

    def ndv(self, col: int) -> float:
        """Distinct values of column ``col`` in its item (>= 1 unless the item is empty)."""
        got = self._ndv_cache.get(col)
        if got is not None:
            return got
        i = self.g.owner[col]
        rows = self.rows[i]
        cs = self.stats[i].get(col)
        ndv = None if cs is None else getattr(cs, "distinct_count", None)
        base = self.bases[i]
        if base is not None and col in base[2] and self.sampled[i] and ndv is not None:
            ndv = min(float(ndv), rows)
        elif base is not None and col not in base[2]:
            leaf, lst, _ = base
            leaf_col = self._leaf_column(self.attr_of[col], self.g.items[i])
            bcs = None if leaf_col is None else \
                (getattr(lst, "attribute_stats", None) or {}).get(leaf_col)
            bndv = None if bcs is None else getattr(bcs, "distinct_count", None)
            brows = float(lst.row_count)
            if bndv is not None and brows > 0:
                prop = math.ceil(bndv * rows / brows) if rows < brows else bndv
                if ndv is None or abs(ndv - prop) <= 1 or self.sampled[i]:
                    ndv = yao_ndv(float(bndv), brows, rows)
        if ndv is None:
            ndv = rows  # unknown: assume a key
        v = float(max(min(float(ndv), rows), 1.0 if rows >= 1 else 0.0))
        self._ndv_cache[col] = v
        return v

    def _composite(self, i: int, cols: list[int]) -> tuple[float, float]:
        """(distinct combinations of ``cols`` in item ``i``, in its base table)."""
        rows = self.rows[i]
        prod = 1.0
        for c in cols:
            prod *= max(self.ndv(c), 1.0)
        item = min(prod, rows)
        base_n = item
        base = self.bases[i]
        if base is not None:
            leaf, lst, filtered = base
            brows = float(lst.row_count)
            leaf_cols = [self._leaf_column(self.attr_of[c], self.g.items[i]) for c in cols]
            bprod = 1.0
            for lc in leaf_cols:
                bcs = None if lc is None else \
                    (getattr(lst, "attribute_stats", None) or {}).get(lc)
                bn = None if bcs is None else getattr(bcs, "distinct_count", None)
                bprod *= brows if bn is None else max(float(bn), 1.0)
            base_n = max(min(bprod, brows), item)
            if self.auto and None not in leaf_cols:
                exact = _data_composite_ndv(leaf, tuple(leaf_cols),  # type: ignore[arg-type]
                                            self.measured)
                if exact is not None:
                    base_n = float(exact)
                    scaled = yao_ndv(base_n, brows, rows)
                    item = min(item, scaled) if any(c in filtered for c in cols) else scaled
        return max(item, 1.0 if rows >= 1 else 0.0), max(base_n, 1.0)

    def _complex_sel(self, c: Expression, mask: int) -> float:
        merged: dict = {}
        rows = 1
        for i in range(self.g.n):
            if mask >> i & 1:
                merged.update(self.stats[i])
                rows = max(rows, int(self.rows[i]))
        sel = None
        try:
            sel = condition_selectivity(c, rows, merged)
        except Exception:  # noqa: BLE001 -- unusual statistics: use the default
            sel = None
        if sel is None:
            rng = (P.LessThan, P.LessThanOrEqual, P.GreaterThan, P.GreaterThanOrEqual)
            sel = _RANGE_SEL if isinstance(c, rng) else _OTHER_SEL
        return min(max(float(sel), 0.0), 1.0)

    # -- cardinality ---------------------------------------------------------------------------

    def card(self, mask: int) -> float:
        """Estimated rows of joining the items of ``mask`` (whatever the order)."""
        got = self._card.get(mask)
        if got is not None:
            return got
        c = 1.0
        for i in range(self.g.n):
            if mask >> i & 1:
                c *= self.rows[i]
        if c > 0:
            c *= self._selectivity(mask)
        self._card[mask] = c
        return c

    def _prepare(self) -> None:
        """Per class: its edges as ``(both items' bits, col_a, col_b, 1 / max(ndv))``."""
        self._cls: list[tuple[int, list[tuple[int, int, int, float]]]] = []
        for cls in self.classes:
            edges = []
            items = 0
            for k in cls:
                a, ia, b, ib = self.edges[k]
                both = (1 << ia) | (1 << ib)
                items |= both
                edges.append((both, a, b, 1.0 / max(self.ndv(a), self.ndv(b), 1.0)))
            self._cls.append((items, edges))
        # classes of a single equality (the common case), flattened for speed
        owner = self.g.owner
        self._simple: list[tuple[int, tuple[int, int], int, int, float]] = []
        multi = []
        for items, edges in self._cls:
            if len(edges) == 1:
                both, a, b, s = edges[0]
                ia, ib = owner[a], owner[b]
                self._simple.append((both, (ia, ib) if ia < ib else (ib, ia),
                                     a if ia < ib else b, b if ia < ib else a, s))
            else:
                multi.append((items, edges))
        self._cls = multi

    def _selectivity(self, mask: int) -> float:
        sel = 1.0
        pair_keys: dict[tuple[int, int], list[tuple[int, int, float]]] = {}
        owner = self.g.owner
        for both, key, a, b, s in self._simple:
            if both & mask == both:
                sel *= s
                got = pair_keys.get(key)
                if got is None:
                    pair_keys[key] = [(a, b, s)]
                else:
                    got.append((a, b, s))
        for items, edges in self._cls:
            if items & mask == 0:
                continue
            inside = [e for e in edges if e[0] & mask == e[0]]
            if not inside:
                continue
            if len(inside) == 1:
                _, a, b, s = inside[0]
                ia, ib = owner[a], owner[b]
                key = (ia, ib) if ia < ib else (ib, ia)
                pair_keys.setdefault(key, []).append((a, b, s) if ia < ib else (b, a, s))
                sel *= s
                continue
            # components of this class's equalities inside `mask`
            parent: dict[int, int] = {}

            def find(x: int) -> int:
                while parent.setdefault(x, x) != x:
                    x = parent[x]
                return x

            for _, a, b, _ in inside:
                parent[find(a)] = find(b)
            comps: dict[int, list[int]] = {}
            for col in list(parent):
                comps.setdefault(find(col), []).append(col)
            for cols in comps.values():
                if len(cols) < 2:
                    continue
                ndvs = sorted(self.ndv(col) for col in cols)
                s = 1.0
                for v in ndvs[1:]:
                    s /= max(v, 1.0)
                sel *= s
                # each pair of items this component links: one key of that pair
                by_item: dict[int, int] = {}
                for col in cols:
                    by_item.setdefault(owner[col], col)
                its = sorted(by_item)
                for x in range(len(its)):
                    for y in range(x + 1, len(its)):
                        a, b = by_item[its[x]], by_item[its[y]]
                        pair_keys.setdefault((its[x], its[y]), []).append(
                            (a, b, 1.0 / max(self.ndv(a), self.ndv(b), 1.0)))
        for key, keys in pair_keys.items():
            if len(keys) == 1:
                continue
            # a composite key: the keys of one pair of items are not independent
            prod = 1.0
            for _, _, s in keys:
                prod *= s
            comp = self._pair_composite(key[0], key[1], keys)
            sel *= min(max(comp, prod), min(s for _, _, s in keys)) / prod
        for m, s in self.complex:
            if m & mask == m:
                sel *= s
        return sel

    def _pair_composite(self, ia: int, ib: int, keys: list) -> float:
        ck = (ia, ib, tuple(sorted((a, b) for a, b, _ in keys)))
        cache = self._comp_cache
        got = cache.get(ck)
        if got is None:
            na, ba = self._composite(ia, [k[0] for k in keys])
            nb, bb = self._composite(ib, [k[1] for k in keys])
            got = cache[ck] = 1.0 / max(min(na, bb), min(nb, ba), 1.0)
        return got


@dataclass(slots=True)
class _Unit:
    """A component of the enhanced search: item set, estimated cost (sum of the estimated
    rows of its intermediate joins), tree (an item index or a pair of trees)."""

    mask: int
    cost: float
    tree: object


def _merge(cm: _CardModel, a: _Unit, b: _Unit) -> _Unit:
    cost = a.cost + b.cost
    if a.mask & (a.mask - 1):
        cost += cm.card(a.mask)
    if b.mask & (b.mask - 1):
        cost += cm.card(b.mask)
    return _Unit(a.mask | b.mask, cost, (a.tree, b.tree))


def _neighbors(g: "_Model", mask: int) -> int:
    nb = 0
    m = mask
    while m:
        low = m & -m
        nb |= g.adj[low.bit_length() - 1]
        m ^= low
    return nb & ~mask


def _goo_units(cm: _CardModel, units: list[_Unit], target: int) -> list[_Unit]:
    """GOO: merge the connected pair with the smallest estimated result (then the smaller
    cost) until ``target`` units are left; a cartesian product only when nothing connects."""
    g = cm.g
    units = list(units)
    while len(units) > target:
        best = None
        best_key = None
        for i in range(len(units)):
            nb = _neighbors(g, units[i].mask)
            for j in range(i + 1, len(units)):
                if not nb & units[j].mask:
                    continue
                u = _merge(cm, units[i], units[j])
                key = (cm.card(u.mask), u.cost)
                if best_key is None or key < best_key:
                    best, best_key = (i, j, u), key
        if best is None:
            pairs = [(cm.card(units[i].mask) * cm.card(units[j].mask), i, j)
                     for i in range(len(units)) for j in range(i + 1, len(units))]
            _, i, j = min(pairs)
            best = (i, j, _merge(cm, units[i], units[j]))
        i, j, u = best
        units = [x for k, x in enumerate(units) if k not in (i, j)] + [u]
    return units


def _greedy_left_deep(cm: _CardModel, start: int) -> _Unit | None:
    """Left-deep from item ``start``, each step adding the connected item giving the smallest
    result."""
    g = cm.g
    cur = _Unit(1 << start, 0.0, start)
    while cur.mask != cm.full:
        nb = _neighbors(g, cur.mask)
        if not nb:
            return None
        best = None
        m = nb
        while m:
            low = m & -m
            m ^= low
            c = cm.card(cur.mask | low)
            if best is None or c < best[0]:
                best = (c, low)
        low = best[1]  # type: ignore[index]
        cur = _merge(cm, cur, _Unit(low, 0.0, low.bit_length() - 1))
    return cur


def _dp_units(cm: _CardModel, units: list[_Unit], budget: int) -> _Unit | None:
    """Exact DP over connected unit sets (DPccp: each connected subgraph / connected
    complement pair once); None when disconnected or above ``budget`` pairs."""
    k = len(units)
    g = cm.g
    item_mask = [u.mask for u in units]
    uadj = [0] * k
    for i in range(k):
        nb = _neighbors(g, item_mask[i])
        for j in range(k):
            if j != i and nb & item_mask[j]:
                uadj[i] |= 1 << j
    best: dict[int, _Unit] = {1 << i: units[i] for i in range(k)}
    count = [0]

    def nbrs(s: int) -> int:
        nb = 0
        m = s
        while m:
            low = m & -m
            nb |= uadj[low.bit_length() - 1]
            m ^= low
        return nb & ~s

    def subsets(n: int):
        sub = n
        while sub:
            yield sub
            sub = (sub - 1) & n

    def csg_rec(s: int, x: int, out: list) -> None:
        n = nbrs(s) & ~x
        if not n:
            return
        subs = list(subsets(n))
        for sp in subs:
            out.append(s | sp)
        for sp in subs:
            csg_rec(s | sp, x | n, out)

    def emit(s1: int, s2: int) -> bool:
        count[0] += 1
        if count[0] > budget:
            return False
        p1, p2 = best.get(s1), best.get(s2)
        if p1 is None or p2 is None:
            return True
        u = _merge(cm, p1, p2)
        s = s1 | s2
        old = best.get(s)
        if old is None or u.cost < old.cost:
            best[s] = u
        return True

    def cmp_of(s1: int) -> list[int]:
        low = (s1 & -s1).bit_length() - 1
        x = ((1 << (low + 1)) - 1) | s1
        n = nbrs(s1) & ~x
        out: list[int] = []
        for i in range(k - 1, -1, -1):
            if n >> i & 1:
                v = 1 << i
                out.append(v)
                rec: list[int] = []
                csg_rec(v, x | (n & ((1 << (i + 1)) - 1)), rec)
                out.extend(rec)
        return out

    for i in range(k - 1, -1, -1):
        v = 1 << i
        csgs = [v]
        csg_rec(v, (1 << (i + 1)) - 1, csgs)
        for s1 in csgs:
            for s2 in cmp_of(s1):
                if not emit(s1, s2):
                    return None
    return best.get((1 << k) - 1)


def _tree_cost(cm: _CardModel, tree: object) -> tuple[float, int]:
    """(estimated cost, item mask) of a tree (intermediate joins, the root excluded)."""
    def go(t: object) -> tuple[float, int]:
        if isinstance(t, int):
            return 0.0, 1 << t
        c1, m1 = go(t[0])  # type: ignore[index]
        c2, m2 = go(t[1])  # type: ignore[index]
        c = c1 + c2
        if m1 & (m1 - 1):
            c += cm.card(m1)
        if m2 & (m2 - 1):
            c += cm.card(m2)
        return c, m1 | m2

    return go(tree)


def _input_tree(plan: LogicalPlan) -> object:
    """The join tree of ``plan`` over its items' indexes (extraction order)."""
    counter = iter(range(1 << 30))

    def go(p: LogicalPlan) -> object:
        match p:
            case Join(left=left, right=right) if _is_reorderable_join(p):
                lt = go(left)
                return (lt, go(right))
            case Project(child=child) if (_is_reorderable_join(child) and all(
                    isinstance(e, AttributeReference) for e in p.project_list)):
                return go(child)
            case _:
                return next(counter)

    return go(plan)


def enhanced_search(cm: _CardModel) -> _Unit:
    """Best of: exact DP (DPccp) over the items, or -- above :data:`DP_PAIR_BUDGET` pairs --
    over the components left after GOO merged the cheapest pairs (IDP); plain GOO; greedy
    left-deep orders from every item."""
    n = cm.g.n
    leaves = [_Unit(1 << i, 0.0, i) for i in range(n)]
    cands: list[_Unit] = []
    if _connected(cm.g):
        target = min(n, DP_MAX_UNITS)
        while target >= 2:
            units = _goo_units(cm, leaves, target)
            got = _dp_units(cm, units, DP_PAIR_BUDGET)
            if got is not None:
                cands.append(got)
                break
            target -= 1
        for s in range(n):
            ld = _greedy_left_deep(cm, s)
            if ld is not None:
                cands.append(ld)
    cands.append(_goo_units(cm, leaves, 1)[0])
    return min(cands, key=lambda u: u.cost)


def _connected(g: "_Model") -> bool:
    seen = 1
    frontier = 1
    while frontier:
        nb = _neighbors(g, seen)
        frontier = nb & ~seen
        seen |= nb
    return seen == (1 << g.n) - 1


def _tree_to_logical(g: "_Model", cm: _CardModel, tree: object) -> tuple[LogicalPlan, int,
                                                                         frozenset[int]]:
    """(plan, item mask, conjuncts used) of a tree; the larger estimated side on the left;
    columns no longer needed pruned as in the DP."""
    if isinstance(tree, int):
        return g.items[tree], 1 << tree, frozenset()
    lp, lm, lc = _tree_to_logical(g, cm, tree[0])  # type: ignore[index]
    rp, rm, rc = _tree_to_logical(g, cm, tree[1])  # type: ignore[index]
    if cm.card(rm) > cm.card(lm):
        lp, lm, rp, rm = rp, rm, lp, lm
    conds = g.join_conds(lm, rm)
    collected = lc | rc | frozenset(conds)
    cond = and_all(g.conds[i] for i in conds)
    join = Join(lp, rp, JoinType.INNER if cond is not None else JoinType.CROSS, cond)
    u = lm | rm
    needed = set(g.needed_cols(u, collected))
    out = join.output
    plan: LogicalPlan = join
    if any(a.id not in needed for a in out):
        plan = Project(tuple(a for a in out if a.id in needed), join)
    return plan, u, collected
