"""Distinct keys of a logical plan: Spark's ``LogicalPlan.distinctKeys`` (``DistinctKeyVisitor``,
Spark 4.3), read by the size-only join estimate in :mod:`ember.plans.logical.statistics`.

A *distinct key* of a plan is a set of its output columns whose values never repeat across the
plan's rows.  ``distinct_keys(plan, conf)`` returns the set of such key sets (each a frozenset of
attribute ids); an empty result means nothing is known.  Propagation, as Spark's visitor:

* ``Aggregate``: its grouping expressions (merged with the child's keys: a child key that is a
  subset of the grouping set makes the grouping set redundant, and grouping sets replace the
  child keys containing them), then projected through the aggregate list like a ``Project``.  A
  global aggregate (no grouping) has the empty key (one row).
* ``Project``: a key survives when every member is an output column, or is the child expression
  of an alias (deterministic, compared canonically: attribute ids, not names) -- both the aliased
  and the unaliased survivors are kept.
* ``Distinct``, ``INTERSECT`` / ``EXCEPT`` (not ALL): the whole output.
* ``Limit`` of at most one row (``LIMIT 0|1``, an ``OFFSET`` leaving at most one row of a child
  whose ``maxRows`` is known): every output column alone; otherwise the child's keys.
* ``Filter``, ``Sort``: the child's keys.  LeftSemi / LeftAnti joins: the left's.
* Inner / outer equi-joins (``ExtractEquiJoinKeys``; ``<=>`` keys are ``coalesce``/``isnull``
  pairs, never a distinct key): an inner join unique on both sides' join keys keeps both sides'
  keys; one unique on the right join keys (inner, left outer) keeps the left's; one unique on
  the left keys (inner, right outer) keeps the right's; anything else none.
* Everything else (leaves, ``Union``, ``Expand``, ``EventTimeWatermark``, other joins): none.

``SubqueryAlias``, ``View`` and ``ResolvedHint`` pass their child's keys through: Spark's
optimizer removes them before statistics are asked for, so the optimized plans compare equal.

``spark.sql.optimizer.propagateDistinctKeys.enabled`` (default true) turns propagation off
(every plan then has no distinct keys).  Keys are computed once per node (``_dkeys`` slot).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ember.conf import PROPAGATE_DISTINCT_KEYS
from ember.expressions.base import Alias, AttributeReference, Expression, Literal
from ember.plans.logical.join_type import JoinType
from ember.plans.logical.nodes import (
    Aggregate,
    Distinct,
    Except,
    Expand,
    Filter,
    Intersect,
    Join,
    Limit,
    LocalRelation,
    LogicalPlan,
    Offset,
    OneRowRelation,
    Project,
    Range,
    ResolvedHint,
    Sort,
    SubqueryAlias,
    Union,
    View,
    spark_range_elements,
)
from ember.plans.logical.patterns import extract_equi_join_keys

if TYPE_CHECKING:
    from ember.conf import SQLConf

__all__ = ["DistinctKeys", "distinct_keys", "max_rows",
           "propagate_distinct_keys", "unique_on_join_keys"]

#: A set of key sets, each a frozenset of attribute ids.
DistinctKeys = frozenset[frozenset[int]]
_NONE: DistinctKeys = frozenset()


def propagate_distinct_keys(conf: "SQLConf | None") -> bool:
    """``spark.sql.optimizer.propagateDistinctKeys.enabled``."""
    return PROPAGATE_DISTINCT_KEYS.read(conf)


def distinct_keys(plan: LogicalPlan, conf: "SQLConf | None" = None) -> DistinctKeys:
    """Spark's ``plan.distinctKeys``: the sets of output attribute ids unique over the rows of
    ``plan`` (empty when propagation is disabled).

    >>> # distinct_keys(Aggregate((k#1,), (k#1, sum(x) AS s#5), t))  ->  {{1}}
    """
    if not propagate_distinct_keys(conf):
        return _NONE
    return _keys(plan)


def unique_on_join_keys(join: Join) -> tuple[bool, bool] | None:
    """For an equi-join: whether some distinct key of the left (right) child is a subset of the
    left (right) join keys, i.e. each row of that side matches at most one row of the other;
    None when the join has no equi-join keys.  Assumes propagation is enabled."""
    extracted = extract_equi_join_keys(join)
    if extracted is None:
        return None
    left_keys, right_keys, _ = extracted
    return (_covered(_keys(join.left), left_keys), _covered(_keys(join.right), right_keys))


def _covered(keys: DistinctKeys, join_keys: tuple[Expression, ...]) -> bool:
    # A distinct key holds only attributes, so only the join keys that are attributes can
    # contain one (``ExpressionSet.subsetOf`` compares canonical forms: the ids).
    if not keys:
        return False
    ids = frozenset(k.id for k in join_keys if isinstance(k, AttributeReference))
    return any(k <= ids for k in keys)


def _keys(plan: LogicalPlan) -> DistinctKeys:
    try:
        return plan._dkeys  # type: ignore[attr-defined,no-any-return]
    except AttributeError:
        pass
    keys = _visit(plan)
    try:
        object.__setattr__(plan, "_dkeys", keys)
    except (AttributeError, TypeError):  # a node class without the cache slot
        pass
    return keys


def _visit(p: LogicalPlan) -> DistinctKeys:
    match p:
        case Aggregate(grouping_expressions=groups, aggregate_expressions=aggs, child=c):
            return _project(_add_key(_keys(c), tuple(groups)), aggs)
        case Project(project_list=items, child=c):
            child_keys = _keys(c)
            return _project(child_keys, items) if child_keys else _NONE
        case Distinct():
            return frozenset({p.output_set})
        case Intersect(is_all=False) | Except(is_all=False):
            return frozenset({p.output_set})
        case Filter(child=c) | Sort(child=c):
            return _keys(c)
        case SubqueryAlias(child=c) | View(child=c) | ResolvedHint(child=c):
            return _keys(c)
        case Limit(limit=n, child=c):
            limit = _int_literal(n)
            return _each_column(p) if limit is not None and limit <= 1 else _keys(c)
        case Offset(child=c):
            rows = max_rows(p)
            return _each_column(p) if rows is not None and rows <= 1 else _keys(c)
        case Join(join_type=jt, left=left) if jt in (JoinType.LEFT_SEMI, JoinType.LEFT_ANTI):
            return _keys(left)
        case Join():
            return _visit_join(p)
        case _:
            return _NONE


def _visit_join(p: Join) -> DistinctKeys:
    lkeys, rkeys = _keys(p.left), _keys(p.right)
    if not lkeys and not rkeys:
        return _NONE
    unique = unique_on_join_keys(p)
    if unique is None:
        return _NONE
    left_unique, right_unique = unique
    jt = p.join_type
    if jt is JoinType.INNER and left_unique and right_unique:
        return lkeys | rkeys
    if jt in (JoinType.INNER, JoinType.LEFT_OUTER) and right_unique:
        return lkeys
    if jt in (JoinType.INNER, JoinType.RIGHT_OUTER) and left_unique:
        return rkeys
    return _NONE


def _each_column(p: LogicalPlan) -> DistinctKeys:
    """At most one row: every output column alone is a key."""
    return frozenset(frozenset({a.id}) for a in p.output)


def _add_key(keys: DistinctKeys, group: tuple[Expression, ...]) -> frozenset[frozenset[Any]]:
    """Spark's ``addDistinctKey``: the grouping set joins the child's keys unless a child key is
    already a subset of it; child keys containing it are dropped.  Members are attribute ids
    (child keys only hold attributes) or, for other grouping expressions, their canonical form
    until :func:`_project` maps them through the aliases."""
    new = frozenset(e.id if isinstance(e, AttributeReference) else e.canonicalized for e in group)
    if any(k <= new for k in keys):
        return frozenset(keys)
    return frozenset(k for k in keys if not new <= k) | {new}


def _project(keys: frozenset[frozenset[Any]], items: tuple[Expression, ...]) -> DistinctKeys:
    """Spark's ``projectDistinctKeys``: the keys whose members are all output columns, plus the
    keys rewritten through the aliases (alias child -> alias attribute; the last alias of an
    expression wins, as Spark's ``toMap``) whose members then all are."""
    output = frozenset(e.to_attribute().id for e in items)  # type: ignore[attr-defined]
    aliases: dict[Any, int] = {}
    for e in items:
        if isinstance(e, Alias) and e.child.deterministic:
            c = e.child
            aliases[c.id if isinstance(c, AttributeReference) else c.canonicalized] = e.id
    out: set[frozenset[int]] = set()
    for key in keys:
        if all(isinstance(m, int) and m in output for m in key):
            out.add(frozenset(key))
        if aliases:
            mapped = [aliases.get(m, m) for m in key]
            if all(isinstance(m, int) and m in output for m in mapped):
                out.add(frozenset(mapped))
    return frozenset(out)


def _int_literal(e: Expression) -> int | None:
    if isinstance(e, Literal) and isinstance(e.value, int) and not isinstance(e.value, bool):
        return e.value
    return None


def max_rows(p: LogicalPlan) -> int | None:
    """Spark's ``maxRows`` (an upper bound of the row count, None when unbounded) for the nodes
    Ember has; used for ``OFFSET``'s distinct keys."""
    match p:
        case OneRowRelation():
            return 1
        case LocalRelation():
            return None if getattr(p, "unknown_size", False) else p.num_rows
        case Range():
            return spark_range_elements(p.start, p.end, p.step)
        case Limit(limit=n):
            return _int_literal(n)
        case Offset(offset=n, child=c):
            off, rows = _int_literal(n), max_rows(c)
            return None if off is None or rows is None else max(rows - off, 0)
        case Aggregate(grouping_expressions=()):
            return 1
        case Project(child=c) | Filter(child=c) | Sort(child=c) | Distinct(child=c) | \
                Aggregate(child=c) | SubqueryAlias(child=c) | View(child=c) | \
                ResolvedHint(child=c) | Except(left=c):
            return max_rows(c)
        case Union() | Intersect():
            counts = [max_rows(c) for c in p.children]
            if any(n is None for n in counts):
                return None
            known = [n for n in counts if n is not None]
            return min(known) if isinstance(p, Intersect) else _valid_long(sum(known))
        case Expand(projections=projs, child=c):
            rows = max_rows(c)
            return None if rows is None else _valid_long(rows * len(projs))
        case Join(join_type=jt, left=left) if jt in (JoinType.LEFT_SEMI, JoinType.LEFT_ANTI):
            return max_rows(left)
        case Join(join_type=jt, left=left, right=right) if jt in (
                JoinType.INNER, JoinType.CROSS, JoinType.LEFT_OUTER, JoinType.RIGHT_OUTER,
                JoinType.FULL_OUTER):
            lrows, rrows = max_rows(left), max_rows(right)
            if lrows is None or rrows is None:
                return None
            floor = {JoinType.LEFT_OUTER: lrows, JoinType.RIGHT_OUTER: rrows,
                     JoinType.FULL_OUTER: lrows + rrows}.get(jt, 0)
            return _valid_long(max(lrows * rrows, floor))
        case _:
            return None


def _valid_long(n: int) -> int | None:
    return n if -(1 << 63) <= n < (1 << 63) else None
