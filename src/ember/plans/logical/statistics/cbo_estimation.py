"""Spark's cost-based estimation (``BasicStatsPlanVisitor``), used with ``spark.sql.cbo.enabled``:
FilterEstimation (``=``, ``<=>``, ``<``, ``<=``, ``>``, ``>=`` against a literal, ``IN`` of
literals, ``IS [NOT] NULL`` directly over a leaf, AND/OR/NOT; uniform distribution, no histograms,
column-to-column comparisons unsupported -> selectivity 1), JoinEstimation (inner/cross/outer
equi-joins: ``|L|*|R| / max(ndv)`` of the key pair with the largest NDV, at most ``|R|`` when the
left side is unique on its join keys, ``|L|`` when the right is (distinct keys), 0 for disjoint
key ranges, outer joins at least the preserved side; semi/anti = left; no equi keys = cartesian),
AggregateEstimation (product of the grouping columns' NDV, +1 per column with NULLs, capped by the
child's rows) and ProjectEstimation (column statistics follow aliases).

:func:`visit` returns None where Spark's visitor falls back to the size-only estimate
(:mod:`ember.plans.logical.statistics.size_estimation`), which also supplies each child's
statistics (:class:`ChildStats`).
"""

from __future__ import annotations

import datetime as _dt
import math
from collections.abc import Mapping
from dataclasses import replace
from decimal import Decimal
from types import MappingProxyType
from typing import Any, Protocol

from ember import types as T
from ember.expressions import predicates as P
from ember.expressions.base import Alias, AttributeReference, Expression, Literal
from ember.expressions.predicates import And, Not, Or
from ember.plans.logical.distinct_keys import unique_on_join_keys
from ember.plans.logical.join_type import JoinType
from ember.plans.logical.nodes import (
    Aggregate,
    Distinct,
    Filter,
    Intersect,
    Join,
    LeafNode,
    LogicalPlan,
    Project,
    ResolvedHint,
    SubqueryAlias,
    Union,
    View,
)
from ember.plans.logical.patterns import extract_equi_join_keys
from ember.plans.logical.statistics.model import (
    _RANGE_TYPES,
    ColumnStat,
    Statistics,
    _ceil,
    default_size,
    output_size,
    product_of,
)

__all__ = ["ChildStats", "visit", "condition_selectivity"]


class ChildStats(Protocol):
    """What the CBO estimators need of the estimation they run in: the statistics of a child
    plan, and whether distinct keys are propagated
    (``spark.sql.optimizer.propagateDistinctKeys.enabled``)."""

    distinct_keys: bool

    def stats(self, plan: LogicalPlan) -> Statistics: ...


def visit(p: LogicalPlan, f: ChildStats) -> Statistics | None:
    """``BasicStatsPlanVisitor``: None falls back to the size-only estimate."""
    match p:
        case LeafNode() | SubqueryAlias() | View() | ResolvedHint():
            return None
        case Filter():
            return _estimate_filter(p, f)
        case Project():
            return _estimate_project(p, f)
        case Aggregate():
            return _estimate_aggregate(p, f)
        case Join():
            return _estimate_join(p, f)
        case Union(inputs=inputs):
            stats = [f.stats(c) for c in inputs]
            rows = None if any(s.row_count is None for s in stats) else \
                sum(s.row_count for s in stats)  # type: ignore[misc]
            return Statistics(sum(s.size_in_bytes for s in stats), rows)
        case Intersect(left=l, right=r):
            stats = [f.stats(l), f.stats(r)]
            rows = None if any(s.row_count is None for s in stats) else \
                min(s.row_count for s in stats)  # type: ignore[type-var]
            return Statistics(min(s.size_in_bytes for s in stats), rows)
        case Distinct():
            return product_of([f.stats(p.child)], f.stats(p.child).hints, with_rows=True)
        case _:
            return None



# ---------------------------------------------------------------------------------------------
# Project, Aggregate, Filter, Join


def _output_map(stats: Mapping[int, ColumnStat], output) -> dict[int, ColumnStat]:
    return {a.id: stats[a.id] for a in output if a.id in stats}


def _alias_stats(exprs, stats: Mapping[int, ColumnStat]) -> dict[int, ColumnStat]:
    out: dict[int, ColumnStat] = {}
    for e in exprs:
        if isinstance(e, Alias) and isinstance(e.child, AttributeReference) and e.child.id in stats:
            out[e.id] = stats[e.child.id]
    return out


def _estimate_project(p: Project, f: ChildStats) -> Statistics | None:
    cs = f.stats(p.child)
    if cs.row_count is None:
        return None
    inputs = dict(cs.attribute_stats)
    inputs.update(_alias_stats(p.project_list, cs.attribute_stats))
    out = _output_map(inputs, p.output)
    return Statistics(output_size(p.output, cs.row_count, out), cs.row_count,
                      MappingProxyType(out), cs.hints)


def _estimate_aggregate(p: Aggregate, f: ChildStats) -> Statistics | None:
    cs = f.stats(p.child)
    if cs.row_count is None:
        return None
    rows = 1
    for g in p.grouping_expressions:
        st = cs.attribute_stats.get(g.id) if isinstance(g, AttributeReference) else None
        if st is None or not st.has_count_stats:
            return None
        rows *= st.distinct_count + (1 if st.null_count > 0 else 0)  # type: ignore[operator]
    rows = 1 if not p.grouping_expressions else min(rows, cs.row_count)
    inputs = dict(cs.attribute_stats)
    inputs.update(_alias_stats(p.aggregate_expressions, cs.attribute_stats))
    out = _output_map(inputs, p.output)
    return Statistics(output_size(p.output, rows, out), rows, MappingProxyType(out))


def _to_double(v: Any) -> float | None:
    """Spark's ``EstimationUtils.toDouble`` for min/max/literal values."""
    if v is None:
        return None
    if isinstance(v, bool):
        return 1.0 if v else 0.0
    if isinstance(v, (int, float, Decimal)):
        return float(v)
    if isinstance(v, _dt.datetime):
        if v.tzinfo is None:
            v = v.replace(tzinfo=_dt.timezone.utc)
        return (v - _dt.datetime(1970, 1, 1, tzinfo=_dt.timezone.utc)) / _dt.timedelta(
            microseconds=1)
    if isinstance(v, _dt.date):
        return float((v - _dt.date(1970, 1, 1)).days)
    return None


# The comparison with its operands swapped: ``lit < a`` is ``a > lit``.
_MIRRORED = {"<": ">", "<=": ">=", ">": "<", ">=": "<="}


class _FilterEstimation:
    """Spark's ``FilterEstimation`` without histograms (see the module docstring)."""

    def __init__(self, plan: Filter, child: Statistics) -> None:
        self.plan = plan
        self.child = child
        self.rows = child.row_count or 0
        self.original = dict(child.attribute_stats)
        self.updated: dict[int, ColumnStat] = {}
        self.child_is_leaf = isinstance(plan.child, LeafNode)

    def stat(self, attr: AttributeReference) -> ColumnStat | None:
        return self.updated.get(attr.id, self.original.get(attr.id))

    def estimate(self) -> Statistics:
        sel = self.selectivity(self.plan.condition, True)
        sel = 1.0 if sel is None else sel
        rows = _ceil(Decimal(self.rows) * Decimal(repr(sel)))
        if rows == 0:
            out: dict[int, ColumnStat] = {}
        else:
            out = {}
            for aid, ori in self.original.items():
                cs = self.updated.get(aid, ori)
                ndv = cs.distinct_count
                if ndv is not None and ndv > 1 and ori.distinct_count is not None:
                    ndv = _update_ndv(self.rows, rows, ori.distinct_count)
                out[aid] = replace(cs, distinct_count=ndv)
        out = _output_map(out, self.plan.output)
        return Statistics(output_size(self.plan.output, rows, out), rows, MappingProxyType(out),
                          self.child.hints)

    def selectivity(self, cond: Expression, update: bool) -> float | None:
        match cond:
            case And(left=a, right=b):
                p1 = self.selectivity(a, update)
                p2 = self.selectivity(b, update)
                return (1.0 if p1 is None else p1) * (1.0 if p2 is None else p2)
            case Or(left=a, right=b):
                p1 = self.selectivity(a, False)
                p2 = self.selectivity(b, False)
                p1 = 1.0 if p1 is None else p1
                p2 = 1.0 if p2 is None else p2
                return p1 + p2 - p1 * p2
            case Not(child=And(left=a, right=b)):
                return self.selectivity(Or(Not(a), Not(b)), False)
            case Not(child=Or(left=a, right=b)):
                return self.selectivity(And(Not(a), Not(b)), False)
            case Not(child=c):
                p = self.selectivity(c, False)
                return None if p is None else 1.0 - p
            case _:
                return self.single(cond, update)

    def single(self, cond: Expression, update: bool) -> float | None:
        match cond:
            case P.EqualTo(left=AttributeReference() as a, right=Literal() as lit) | \
                    P.EqualNullSafe(left=AttributeReference() as a, right=Literal() as lit) | \
                    P.EqualTo(left=Literal() as lit, right=AttributeReference() as a) | \
                    P.EqualNullSafe(left=Literal() as lit, right=AttributeReference() as a):
                return self.equality(a, lit, update)
            case P.LessThan() | P.LessThanOrEqual() | P.GreaterThan() | P.GreaterThanOrEqual():
                match cond:
                    case P.BinaryComparison(left=AttributeReference() as a,
                                            right=Literal() as lit):
                        return self.binary(cond.symbol, a, lit, update)
                    case P.BinaryComparison(left=Literal() as lit,
                                            right=AttributeReference() as a):
                        # ``lit < a`` is ``a > lit``
                        return self.binary(_MIRRORED[cond.symbol], a, lit, update)
                    case _:
                        return None
            case P.In(value=AttributeReference() as a, items=items) if all(
                    isinstance(i, Literal) for i in items):
                return self.in_set(a, [i.value for i in items], update)  # type: ignore[attr-defined]
            case P.IsNull(child=AttributeReference() as a) if self.child_is_leaf:
                return self.null_check(a, True, update)
            case P.IsNotNull(child=AttributeReference() as a) if self.child_is_leaf:
                return self.null_check(a, False, update)
            case _:
                return None

    def null_check(self, a: AttributeReference, is_null: bool, update: bool) -> float | None:
        cs = self.stat(a)
        if cs is None:
            return None
        null_pct = 0.0 if self.rows == 0 or cs.null_count is None else cs.null_count / self.rows
        if update:
            self.updated[a.id] = replace(cs, distinct_count=0, min=None, max=None) if is_null \
                else replace(cs, null_count=0)
        return null_pct if is_null else 1.0 - null_pct

    def equality(self, a: AttributeReference, lit: Literal, update: bool) -> float | None:
        cs = self.stat(a)
        if cs is None or cs.distinct_count is None:
            return None
        if lit.value is None:
            return 0.0
        is_str = isinstance(a.data_type, (T.StringType, T.BinaryType))
        if not is_str and isinstance(a.data_type, _RANGE_TYPES):
            if not cs.has_min_max:
                return 0.0  # Spark's NullValueInterval contains nothing
            v, lo, hi = _to_double(lit.value), _to_double(cs.min), _to_double(cs.max)
            if v is None or lo is None or hi is None or not (lo <= v <= hi):
                return 0.0
        if update:
            self.updated[a.id] = replace(cs, distinct_count=1, null_count=0) if is_str else \
                replace(cs, distinct_count=1, min=lit.value, max=lit.value, null_count=0)
        return 0.0 if cs.distinct_count == 0 else 1.0 / cs.distinct_count

    def in_set(self, a: AttributeReference, values: list, update: bool) -> float | None:
        cs = self.stat(a)
        if cs is None or cs.distinct_count is None:
            return None
        ndv = cs.distinct_count
        if isinstance(a.data_type, (T.StringType, T.BinaryType)):
            if ndv == 0:
                return 0.0
            new_ndv = min(ndv, len(set(values)))
            if update:
                self.updated[a.id] = replace(cs, distinct_count=new_ndv, null_count=0)
        elif isinstance(a.data_type, _RANGE_TYPES):
            if ndv == 0 or not cs.has_min_max:
                return 0.0
            lo, hi = _to_double(cs.min), _to_double(cs.max)
            valid = {v for v in values if v is not None
                     and lo <= (_to_double(v) or math.nan) <= hi}  # type: ignore[operator]
            if not valid:
                return 0.0
            new_ndv = min(ndv, len(valid))
            if update:
                self.updated[a.id] = replace(
                    cs, distinct_count=new_ndv, min=min(valid, key=_to_double),
                    max=max(valid, key=_to_double), null_count=0)
        else:
            return None
        return new_ndv / ndv

    def binary(self, op: str, a: AttributeReference, lit: Literal, update: bool) -> float | None:
        cs = self.stat(a)
        if cs is None or not isinstance(a.data_type, _RANGE_TYPES):
            return None
        if cs.distinct_count is None or not cs.has_min_max:
            return None
        if lit.value is None:
            return 0.0
        lo, hi, v = _to_double(cs.min), _to_double(cs.max), _to_double(lit.value)
        if lo is None or hi is None or v is None:
            return None
        ndv = float(cs.distinct_count)
        no_overlap, complete = {
            "<": (v <= lo, v > hi), "<=": (v < lo, v >= hi),
            ">": (v >= hi, v < lo), ">=": (v > hi, v <= lo),
        }[op]
        if no_overlap:
            return 0.0
        if complete:
            return 1.0
        if hi <= lo or ndv == 0:
            return 1.0
        if op == "<":
            pct = 1.0 - 1.0 / ndv if v == hi else (v - lo) / (hi - lo)
        elif op == "<=":
            pct = 1.0 / ndv if v == lo else (v - lo) / (hi - lo)
        elif op == ">":
            pct = 1.0 - 1.0 / ndv if v == lo else (hi - v) / (hi - lo)
        else:
            pct = 1.0 / ndv if v == hi else (hi - v) / (hi - lo)
        if update:
            new_min, new_max = (lit.value, cs.max) if op in (">", ">=") else (cs.min, lit.value)
            self.updated[a.id] = replace(cs, distinct_count=_ceil(ndv * pct), min=new_min,
                                         max=new_max, null_count=0)
        return pct


def condition_selectivity(cond: Expression, row_count: int,
                          attribute_stats: Mapping[int, ColumnStat]) -> float | None:
    """The selectivity FilterEstimation gives ``cond`` over rows described by
    ``attribute_stats`` (``row_count`` rows), without a plan: used by the join-order search for
    conditions spanning several tables (e.g. ``(n1.x = 'A' AND n2.x = 'B') OR ...``).  None when
    the condition is not supported (column-to-column comparisons, LIKE, ...)."""
    est = _FilterEstimation.__new__(_FilterEstimation)
    est.plan, est.child, est.rows = None, None, row_count  # type: ignore[assignment]
    est.original, est.updated, est.child_is_leaf = dict(attribute_stats), {}, True
    return est.selectivity(cond, False)


def _update_ndv(old_rows: int, new_rows: int, old_ndv: int) -> int:
    if new_rows < old_rows and old_rows > 0:
        return _ceil(Decimal(old_ndv) * Decimal(new_rows) / Decimal(old_rows))
    return old_ndv


def _estimate_filter(p: Filter, f: ChildStats) -> Statistics | None:
    cs = f.stats(p.child)
    if cs.row_count is None:
        return None
    return _FilterEstimation(p, cs).estimate()


def _estimate_join(p: Join, f: ChildStats) -> Statistics | None:
    jt = p.join_type
    ls, rs = f.stats(p.left), f.stats(p.right)
    if jt in (JoinType.LEFT_SEMI, JoinType.LEFT_ANTI):
        if ls.row_count is None:
            return None
        out = _output_map(ls.attribute_stats, p.output)
        return Statistics(output_size(p.output, ls.row_count, out), ls.row_count,
                          MappingProxyType(out))
    if not isinstance(jt, JoinType) or jt is JoinType.EXISTENCE:
        return None
    if ls.row_count is None or rs.row_count is None:
        return None
    lrows, rrows = ls.row_count, rs.row_count
    inputs = dict(ls.attribute_stats)
    inputs.update(rs.attribute_stats)
    keys = extract_equi_join_keys(p) if p.condition is not None else None
    if keys is None or not keys[0]:
        out = _output_map(inputs, p.output)
        rows = lrows * rrows
        return Statistics(output_size(p.output, rows, out), rows, MappingProxyType(out))
    # Spark normalizes floating-point keys (NormalizeFloatingNumbers wraps them in
    # knownfloatingpointnormalized(...)), so they never count as attribute keys there.
    pairs = [(lk, rk) for lk, rk in zip(keys[0], keys[1])
             if isinstance(lk, AttributeReference) and isinstance(rk, AttributeReference)
             and not isinstance(lk.data_type, (T.FloatType, T.DoubleType))
             and not isinstance(rk.data_type, (T.FloatType, T.DoubleType))
             and _has_counts(ls, lk) and _has_counts(rs, rk)]
    # Selectivity: 1 / the largest max(ndv) over the key pairs; 0 for disjoint ranges.
    denom = -1
    for lk, rk in pairs:
        lst, rst = ls.attribute_stats[lk.id], rs.attribute_stats[rk.id]
        if _intersects(lst, rst):
            denom = max(denom, max(lst.distinct_count, rst.distinct_count))  # type: ignore[type-var]
        else:
            denom = 0
            break
    # A side unique on its join keys (distinct keys) matches each row of the other at most once:
    # the estimate starts from the other side's rows (the smaller of both when both are unique).
    unique = unique_on_join_keys(p) if f.distinct_keys else None
    start = {(True, True): min(lrows, rrows), (True, False): rrows,
             (False, True): lrows}.get(unique or (False, False), lrows * rrows)
    if denom < 0:
        inner = start
    elif denom == 0:
        inner = 0
    else:
        inner = min(start, _ceil(Decimal(lrows * rrows) / Decimal(denom)))
    # A preserved side adds its unmatched rows: LeftOuter max(l, inner), RightOuter
    # max(r, inner), FullOuter max(l, inner) + max(r, inner) - inner.
    rows = inner
    if jt.preserves_left:
        rows += max(lrows, inner) - inner
    if jt.preserves_right:
        rows += max(rrows, inner) - inner
    # Column statistics of the output.
    key_stats: dict[int, ColumnStat] = {}
    if inner == 0:
        for lk, rk in pairs:
            if jt.preserves_left and jt.preserves_right:
                a, b = inputs[lk.id], inputs[rk.id]
                key_stats[lk.id] = replace(a, distinct_count=a.distinct_count + rrows)
                key_stats[rk.id] = replace(b, distinct_count=b.distinct_count + lrows)
            elif jt.preserves_left:
                key_stats[lk.id] = inputs[lk.id]
                key_stats[rk.id] = _null_stat(rk.data_type, lrows)
            elif jt.preserves_right:
                key_stats[rk.id] = inputs[rk.id]
                key_stats[lk.id] = _null_stat(lk.data_type, rrows)
    else:
        for lk, rk in pairs:
            a, b = inputs[lk.id], inputs[rk.id]
            if _intersects(a, b):
                ndv = min(a.distinct_count, b.distinct_count)  # type: ignore[type-var]
                lo, hi = _intersect_range(a, b)
                key_stats[lk.id] = replace(a, distinct_count=ndv, min=lo, max=hi, null_count=0)
                key_stats[rk.id] = replace(b, distinct_count=ndv, min=lo, max=hi, null_count=0)
    with_stats = [a for a in p.output if a.id in inputs]
    left_ids = p.left.output_set
    from_left = [a for a in with_stats if a.id in left_ids]
    from_right = [a for a in with_stats if a.id not in left_ids]

    def updated(attrs) -> dict[int, ColumnStat]:
        res: dict[int, ColumnStat] = {}
        if rows == lrows * rrows:
            return {a.id: inputs[a.id] for a in attrs}
        if rows == 0:
            return res
        lratio = Decimal(rows) / Decimal(lrows) if lrows else Decimal(0)
        rratio = Decimal(rows) / Decimal(rrows) if rrows else Decimal(0)
        for a in attrs:
            if a.id in key_stats:
                res[a.id] = key_stats[a.id]
                continue
            old = inputs[a.id]
            ndv = old.distinct_count
            if ndv is not None:
                if a.id in left_ids and lratio < 1:
                    ndv = _ceil(Decimal(ndv) * lratio)
                elif a.id not in left_ids and rratio < 1:
                    ndv = _ceil(Decimal(ndv) * rratio)
            res[a.id] = replace(old, distinct_count=ndv)
        return res

    # a preserved side's columns keep their statistics; the others scale with the rows kept
    out = {a.id: inputs[a.id] for a in from_left} if jt.preserves_left else updated(from_left)
    out.update({a.id: inputs[a.id] for a in from_right} if jt.preserves_right
               else updated(from_right))
    return Statistics(output_size(p.output, rows, out), rows, MappingProxyType(out))


def _has_counts(s: Statistics, a: AttributeReference) -> bool:
    cs = s.attribute_stats.get(a.id)
    return cs is not None and cs.has_count_stats


def _intersects(a: ColumnStat, b: ColumnStat) -> bool:
    """Spark's ``Range.isIntersected``: ranges unknown (strings, missing min/max) intersect."""
    if not (a.has_min_max and b.has_min_max):
        return True
    amin, amax, bmin, bmax = (_to_double(a.min), _to_double(a.max), _to_double(b.min),
                              _to_double(b.max))
    if None in (amin, amax, bmin, bmax):
        return True
    return not (amax < bmin or bmax < amin)  # type: ignore[operator]


def _intersect_range(a: ColumnStat, b: ColumnStat) -> tuple[Any, Any]:
    if not (a.has_min_max and b.has_min_max):
        return a.min, a.max
    lo = a.min if _to_double(a.min) >= _to_double(b.min) else b.min  # type: ignore[operator]
    hi = a.max if _to_double(a.max) <= _to_double(b.max) else b.max  # type: ignore[operator]
    return lo, hi


def _null_stat(t: T.DataType, rows: int) -> ColumnStat:
    d = default_size(t)
    return ColumnStat(0, None, None, rows, d, d)

