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

Two exchanges match when their canonical forms are equal (``SparkPlan.canonicalized``, Spark's
``QueryPlan.canonicalized``: attribute ids numbered by position, names erased, commutative
operands ordered; a file scan numbers its columns by its relation's full column list, so two
scans of one table reading other columns never match; a ``ReusedExchangeExec`` is its
exchange, so an exchange above one still matches).  Not reused, beyond Spark: subtrees with
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
from ember.expressions.base import Expression
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
from ember.trees import TreeNode, field_names

__all__ = ["reuse_exchange"]


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
    # Exchanges by a cheap key that equal canonical forms share (the class and the output's
    # data types), each with its reuse key computed on demand: canonical forms are computed only
    # for exchanges that meet another of the same shape (most meet none).
    seen: dict[Any, list[list[Any]]] = {}

    def relink(old: SparkPlan, new: SparkPlan) -> None:
        if links is None or new is old:
            return
        hit = links.get(id(old))
        if hit is not None and hit[0] is old:
            links[id(new)] = (new, hit[1])

    # A structural signature of every walked node, by id (the entry keeps the node alive):
    # node classes in tree shape over the canonical forms of the leaves (a file scan: the parts
    # of its canonical form that need no rebuilding).  Equal canonical forms
    # have equal signatures (canonicalizing keeps each node's class and children; a reused
    # exchange stands for the exchange it reads), so an exchange is canonicalized only when it
    # meets another of the same signature -- the same tables read through the same operators.
    sigs: dict[int, tuple[SparkPlan, int]] = {}  # id -> (node, kept alive; signature)

    def signature(n: SparkPlan) -> int:
        hit = sigs.get(id(n))
        if hit is not None and hit[0] is n:
            return hit[1]
        if isinstance(n, ReusedExchangeExec):
            sig = signature(n.child)
        elif n.children:
            sig = hash((type(n), tuple(signature(k) for k in n.children)))
        elif isinstance(n, FileSourceScanExec):
            # what a scan's canonical form keeps as it is (format, files, output arity), without
            # building that form: most scans meet no exchange of their shape
            sig = hash((type(n), n.relation.format, n.relation.paths, len(n.output)))
        else:
            sig = hash(n.canonicalized)
        sigs[id(n)] = (n, sig)
        return sig

    def walk(n: SparkPlan) -> SparkPlan:
        kids = n.children
        new = n
        if kids:
            new = n.with_children(tuple(walk(c) for c in kids))
            relink(n, new)
        sig = signature(new)
        if isinstance(new, ShuffleExchangeExec | BroadcastExchangeExec):
            shape = (type(new), tuple(a.data_type for a in new.output), sig)
            earlier = seen.get(shape)
            if earlier is None:
                seen[shape] = [[new, _UNSET]]
                return new
            key = _reuse_key(new)
            if key is None:
                return new
            for entry in earlier:
                if entry[1] is _UNSET:
                    entry[1] = _reuse_key(entry[0])
                if entry[1] is not None and entry[1] == key:
                    reused = ReusedExchangeExec(new.output, entry[0])
                    relink(n, reused)
                    sigs[id(reused)] = (reused, sig)
                    return reused
            earlier.append([new, key])
        return new

    return walk(plan)


_UNSET = object()


def _reuse_key(plan: SparkPlan) -> Any:
    """A hashable key equal for exchanges one may reuse for the other; None when ``plan`` must
    not be reused (non-deterministic expressions)."""
    if _has_nondeterministic(plan):
        return None
    c = plan.canonicalized
    # local rows (and PySpark DataFrames) are not part of node equality: the very same
    # table / frame object is required
    payloads = tuple(c.collect(
        lambda x: id(x.data) if isinstance(x, LocalTableScanExec) else
        id(x.frame) if isinstance(x, SparkDataFrameScanExec) else None))
    return c, payloads


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
