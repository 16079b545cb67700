"""CostBasedJoinReorder: order inner joins by estimated cost (Spark's DP, plus GOO beyond it).

Spark's ``CostBasedJoinReorder`` / ``JoinReorderDP`` (spark-behavior.md 3), run when both
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

Beyond Spark: above the DP threshold (where Spark leaves the joins as written), a greedy operator
ordering (GOO) merges, step by step, the two connected components whose join has the smallest
estimated cost until one tree remains (a cartesian product only when no connected pair is left).

Estimation: each item's row count, column NDVs (``distinct_count``) and average lengths come from
``plan_stats`` (Spark's ``plan.stats``; via :data:`ember.optimizer.rules.star_schema.STATS_PROVIDER`);
intermediate joins are estimated incrementally as Spark's ``JoinEstimation`` does for inner
equi-joins without histograms: ``rows = min over key pairs with NDVs of ceil(|L| * |R| /
max(ndv_l, ndv_r))`` (the cartesian product when no key has statistics), key NDV = min of the two,
other NDVs scaled down with the row count; bytes = rows * (8 + sum of column widths).  Items are
reordered recursively (joins inside items first).  A disconnected join graph, or an item without
row count, leaves the joins as written.  Conjuncts that no join can take (no references, e.g. a
literal -- Spark's DP silently loses them) are kept in a Filter on top.

Inner-join semantics make any order valid; outer/semi/anti and hinted joins are items, never
reordered through.  Reads the ``spark.sql.cbo.*`` keys above.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING

from ember import types as T
from ember.expressions.base import AttributeReference, Expression, and_all, split_conjuncts
from ember.optimizer.rule_executor import Rule
from ember.optimizer.rules.star_schema import (
    CARD_WEIGHT,
    CBO_ENABLED,
    DP_STAR_FILTER,
    DP_THRESHOLD,
    JOIN_REORDER_ENABLED,
    conf_flag,
    conf_float,
    conf_int,
    find_star_joins,
    plan_statistics,
)
from ember.plans.logical.join_type import JoinType
from ember.plans.logical.nodes import Filter, Join, LogicalPlan, Project

if TYPE_CHECKING:  # pragma: no cover
    from ember.conf import SQLConf

__all__ = ["CostBasedJoinReorder", "extract_inner_joins", "JoinOrderEstimate", "default_size"]


def default_size(t: T.DataType) -> int:
    """Spark's ``DataType.defaultSize`` (bytes per value used for size estimates)."""
    match t:
        case T.BooleanType() | T.ByteType() | T.NullType():
            return 1
        case T.ShortType():
            return 2
        case T.IntegerType() | T.FloatType() | T.DateType():
            return 4
        case T.LongType() | T.DoubleType() | T.TimestampType():
            return 8
        case T.DecimalType(precision=p):
            return 8 if p <= 18 else 16
        case T.StringType():
            return 20
        case T.BinaryType():
            return 100
        case T.StructType(fields=fs):
            return sum(default_size(f.data_type) for f in fs)
        case _:
            return 100 if type(t).__name__.startswith(("Array", "Map")) else 8


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
                if avg is not None:
                    self.width[a.id] = int(avg) + (12 if isinstance(a.data_type, T.StringType)
                                                   else 0)
                else:
                    self.width[a.id] = default_size(a.data_type)
            self.base.append(JoinOrderEstimate(int(rows), ndv))
            self.item_cols.append(tuple(a.id for a in it.output))
        self.cond_cols = frozenset(cond_cols)

    @staticmethod
    def _key_pair(c: Expression) -> tuple[int, int] | None:
        from ember.expressions.predicates import EqualNullSafe, EqualTo

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
    weight = conf_float(conf, CARD_WEIGHT)
    star: tuple[int, int] | None = None
    if conf_flag(conf, DP_STAR_FILTER):
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


def _goo(model: _Model, conf: "SQLConf") -> _Plan:
    """Greedy operator ordering: repeatedly join the pair of components whose join is cheapest
    (weighted rows/bytes of the result, as the DP's comparison), preferring connected pairs."""
    weight = conf_float(conf, CARD_WEIGHT)
    comps = _leaf_plans(model)
    while len(comps) > 1:
        best: _Plan | None = None
        best_key = None
        for i in range(len(comps)):
            for j in range(i + 1, len(comps)):
                cand = _build(model, comps[i], comps[j], None)
                if cand is None:
                    continue
                key = (cand.root_rows ** weight) * (cand.root_bytes ** (1 - weight))
                if best is None or key < best_key:
                    best, best_key = cand, key
        if best is None:  # disconnected: the smallest cartesian product
            i, j = min(((i, j) for i in range(len(comps)) for j in range(i + 1, len(comps))),
                       key=lambda ij: comps[ij[0]].est.rows * comps[ij[1]].est.rows)
            p1, p2 = comps[i], comps[j]
            left, right = (p1, p2) if p1.size_items >= p2.size_items else (p2, p1)
            est = model.estimate(left.est, left.mask, right.est, right.mask, [])
            u = p1.mask | p2.mask
            best = _Plan(u, p1.size_items + p2.size_items, left, right, (),
                         p1.collected | p2.collected, est,
                         p1.card + p1.root_rows + p2.card + p2.root_rows,
                         p1.bytes + p1.root_bytes + p2.bytes + p2.root_bytes, est.rows,
                         model.size(est.rows, model.needed_cols(u, p1.collected | p2.collected)))
        comps = [c for c in comps if c.mask & best.mask == 0] + [best]
    return comps[0]


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


def _reorder(plan: LogicalPlan, output: tuple, conf: "SQLConf") -> LogicalPlan:
    items, conds = extract_inner_joins(plan)
    items = [_visit(it, conf) for it in items]
    threshold = conf_int(conf, DP_THRESHOLD)
    if len(items) <= 2 or not conds:
        return _rebuild_items(plan, items)
    model = _Model(items, conds, output, conf)
    if not model.ok:
        return _rebuild_items(plan, items)
    best = _dp(model, conf) if len(items) <= threshold else _goo(model, conf)
    if best is None:
        return _rebuild_items(plan, items)
    result = _to_logical(model, best)
    leftover = [c for i, c in enumerate(conds) if i not in best.collected]
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


def _visit(p: LogicalPlan, conf: "SQLConf") -> LogicalPlan:
    match p:
        case Join() if _is_reorderable_join(p):
            return _reorder(p, p.output, conf)
        case Project(project_list=pl, child=child) if (
                _is_reorderable_join(child) and all(isinstance(e, AttributeReference) for e in pl)):
            return _reorder(p, p.output, conf)
        case _:
            kids = p.children
            if not kids:
                return p
            return p.with_children(tuple(_visit(k, conf) for k in kids))


class CostBasedJoinReorder(Rule):
    """Spark's ``CostBasedJoinReorder`` (DP up to the threshold, GOO above; module docstring)."""

    rule_name = "CostBasedJoinReorder"

    def apply(self, plan: LogicalPlan, conf: "SQLConf") -> LogicalPlan:
        if not (conf_flag(conf, CBO_ENABLED) and conf_flag(conf, JOIN_REORDER_ENABLED)):
            return plan
        return _visit(plan, conf)

