"""ReuseExchangeAndSubquery: identical exchanges run once (Spark's preparation rule of that name,
exchange part; Ember plans no subquery execs -- subqueries are rewritten to joins before
planning -- so there is no subquery part).

After EnsureRequirements, bottom-up and left to right, every exchange (shuffle or broadcast)
whose *canonical form* equals an earlier one's is replaced by
``ReusedExchangeExec(its output, child=that earlier exchange)``::

    SortMergeJoin [k#1L], [k#7L], Inner                SortMergeJoin [k#1L], [k#7L], Inner
    :- ... Exchange hashpartitioning(k#1L, 200) [id=3] :- ... Exchange hashpartitioning(k#1L, 200) [id=3]
    :       +- HashAggregate(partial ...) #1 #2       :       +- HashAggregate(partial ...) #1 #2
    +- ... Exchange hashpartitioning(k#7L, 200) [id=5] +- ... ReusedExchange [k#7L, sum#8, isEmpty#9],
            +- HashAggregate(partial ...) #7 #8              Exchange hashpartitioning(k#1L, 200) [id=3]

The reusing side keeps its own attribute ids: ``output[i]`` stands for the reused exchange's
``output[i]``.  Runtimes run the exchange once and let both readers read it
(:mod:`ember.runtime.local.exchange`).

Canonical form (Spark's ``QueryPlan.canonicalized`` / ``normalizeExpressions``): per node, an
attribute of the children's output becomes its ordinal in that output; an expression defining a
new attribute at the top of a field (an ``Alias``, an output attribute not read from a child)
gets the next id of a per-node counter; names, qualifiers and nullability are erased and
commutative operands ordered (Catalyst's expression canonicalization,
``ember.optimizer.constraints.canonicalize``); plan ids are ignored.  A leaf normalizes against
its own output, except a file scan: its output and data filters normalize against its
relation's columns, and the relation keeps its column names (only ids are erased), so the form
says which columns of which files are read -- Spark's canonical ``FileSourceScanExec`` keeps its
relation and ``requiredSchema`` likewise.  Two scans of one table reading other columns of the
same types (``avg(a)`` and ``avg(b)`` over the same filter) never match.  A
``ReusedExchangeExec`` canonicalizes as its exchange (so an exchange above one still
matches).  Not reused, beyond Spark: subtrees with
non-deterministic expressions (Ember's random functions may carry no seed), and local tables
other than the very same ``pa.Table`` object (their rows take no part in node equality), and
scans of PySpark DataFrames other than the very same frame object.

Not valid when: the two subtrees differ anywhere (filters, partition counts, partitioning
expressions, scanned files) -- then the canonical forms differ.  Configuration:
``spark.sql.exchange.reuse`` (default true).
"""

from __future__ import annotations

from typing import Any

from ember.conf import EXCHANGE_REUSE_ENABLED, SQLConf
from ember.expressions.base import Alias, AttributeReference, Expression
from ember.physical.nodes import (
    BroadcastExchangeExec,
    FileSourceScanExec,
    LocalTableScanExec,
    ReusedExchangeExec,
    ShuffleExchangeExec,
    SparkDataFrameScanExec,
    SparkPlan,
    map_property_expressions,
)
from ember.physical.partitioning import BroadcastMode, Distribution, Partitioning
from ember.plans.logical.nodes import FileRelation
from ember.trees import TreeNode, field_names

__all__ = ["reuse_exchange", "canonicalize_plan"]

#: Normalized ids: an input attribute at ordinal ``i`` is ``_REF - i``; the ``k``-th attribute a
#: node defines is ``_NEW - k`` (both negative: real expression ids are positive).
_REF = -1
_NEW = -(1 << 40)


def reuse_exchange(plan: SparkPlan, conf: SQLConf,
                   links: dict[int, tuple[SparkPlan, Any]] | None = None) -> SparkPlan:
    """``plan`` with every exchange equal (canonically) to an earlier one replaced by a
    ``ReusedExchangeExec`` of that one (see the module docstring); ``plan`` itself when reuse is
    disabled or nothing is reused.

    ``links`` (``{id(node): (node, logical)}``, see ``QueryPlanner.links``) is updated in place:
    a rebuilt node keeps its original's logical link, a ``ReusedExchangeExec`` takes the link of
    the exchange it replaces."""
    if not conf.get(EXCHANGE_REUSE_ENABLED):
        return plan
    seen: dict[Any, SparkPlan] = {}
    canon = _Canonicalizer()

    def relink(old: SparkPlan, new: SparkPlan) -> None:
        if links is None or new is old:
            return
        hit = links.get(id(old))
        if hit is not None and hit[0] is old:
            links[id(new)] = (new, hit[1])

    def walk(n: SparkPlan) -> SparkPlan:
        kids = n.children
        new = n
        if kids:
            new = n.with_children(tuple(walk(c) for c in kids))
            relink(n, new)
        if isinstance(new, ShuffleExchangeExec | BroadcastExchangeExec):
            key = canon.key(new)
            if key is None:
                return new
            first = seen.setdefault(key, new)
            if first is not new:
                reused = ReusedExchangeExec(new.output, first)
                relink(n, reused)
                return reused
        return new

    return walk(plan)


def canonicalize_plan(plan: SparkPlan) -> SparkPlan:
    """The canonical form of ``plan`` (see the module docstring): two plans computing the same
    rows in the same partitions up to attribute ids and names have equal canonical forms."""
    return _Canonicalizer().plan(plan)


class _Canonicalizer:
    """Canonical forms of the nodes of one plan, memoized by node identity."""

    def __init__(self) -> None:
        self._memo: dict[int, tuple[SparkPlan, SparkPlan]] = {}

    def key(self, plan: SparkPlan) -> Any:
        """A hashable key equal for canonically equal plans; None when ``plan`` must not be
        reused (non-deterministic expressions)."""
        c = self.plan(plan)
        if _has_nondeterministic(plan):
            return None
        # local rows (and PySpark DataFrames) are not part of node equality: the very same
        # table / frame object is required
        payloads = tuple(c.collect(
            lambda x: id(x.data) if isinstance(x, LocalTableScanExec) else
            id(x.frame) if isinstance(x, SparkDataFrameScanExec) else None))
        return c, payloads

    def plan(self, plan: SparkPlan) -> SparkPlan:
        hit = self._memo.get(id(plan))
        if hit is not None and hit[0] is plan:
            return hit[1]
        if isinstance(plan, ReusedExchangeExec):
            out = self.plan(plan.child)
        else:
            out = self._node(plan)
        self._memo[id(plan)] = (plan, out)
        return out

    def _node(self, plan: SparkPlan) -> SparkPlan:
        kids = plan.children
        if isinstance(plan, FileSourceScanExec):
            inputs = plan.relation.attrs  # a column read is its ordinal in the relation
        else:
            inputs = plan.output if not kids else tuple(a for c in kids for a in c.output)
        index: dict[int, int] = {}
        for i, a in enumerate(inputs):
            index.setdefault(a.id, i)
        counter = [0]

        def norm(e: Expression) -> Expression:
            from ember.optimizer.constraints import canonicalize

            def swap(x: Expression) -> Expression | None:
                if isinstance(x, AttributeReference):
                    i = index.get(x.id)
                    return x if i is None else x.copy(id=_REF - i)
                return None

            return canonicalize(e.transform_up(swap))

        def top(e: Expression) -> Expression:
            if isinstance(e, Alias):
                k = counter[0]
                counter[0] += 1
                return norm(e.copy(child=e.child, id=_NEW - k))
            if isinstance(e, AttributeReference) and e.id not in index:
                k = counter[0]
                counter[0] += 1
                return AttributeReference("none", e.dtype, True, _NEW - k)
            return norm(e)

        def value(v: Any) -> Any:
            if isinstance(v, SparkPlan):
                return self.plan(v)
            if isinstance(v, Expression):
                return top(v)
            if isinstance(v, Partitioning | Distribution | BroadcastMode):
                return map_property_expressions(v, norm)
            if isinstance(v, FileRelation):  # its names are the file columns: kept
                return v.copy(attrs=tuple(AttributeReference(a.name, a.dtype, True, _REF - i)
                                          for i, a in enumerate(v.attrs)))
            if isinstance(v, tuple):
                return tuple(value(x) for x in v)
            return v

        changes = {n: value(getattr(plan, n)) for n in _compare_fields(type(plan))}
        return plan.copy(**changes)


def _compare_fields(cls: type) -> tuple[str, ...]:
    import dataclasses

    names = set(f.name for f in dataclasses.fields(cls) if f.compare)  # type: ignore[arg-type]
    return tuple(n for n in field_names(cls) if n in names)


def _has_nondeterministic(plan: SparkPlan) -> bool:
    """Whether an expression of ``plan``'s subtree (through reused exchanges) is
    non-deterministic."""
    stack: list[TreeNode] = [plan]
    while stack:
        n = stack.pop()
        if isinstance(n, ReusedExchangeExec):
            stack.append(n.child)
            continue
        if any(not e.deterministic for e in _expressions(n)):
            return True
        stack.extend(n.children)
    return False


def _expressions(n: SparkPlan) -> list[Expression]:
    out: list[Expression] = []

    def add(v: Any) -> None:
        if isinstance(v, Expression):
            out.append(v)
        elif isinstance(v, tuple):
            for x in v:
                add(x)
        elif isinstance(v, Partitioning | Distribution | BroadcastMode):
            map_property_expressions(v, lambda e: out.append(e) or e)

    for name in field_names(type(n)):
        add(getattr(n, name))
    return out
