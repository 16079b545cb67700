"""The query planner: strategies with ``planLater``, then EnsureRequirements and
ReuseExchangeAndSubquery (Spark's ``SparkPlanner`` + ``QueryPlanner.plan`` + the
``EnsureRequirements`` and ``ReuseExchangeAndSubquery`` preparation rules, the latter in
:mod:`.reuse_exchange`).

A strategy maps one logical node to a physical operator whose children are *placeholders*:
``plan_later(child)`` here plans the child recursively right away (Spark's ``PlanLater`` is
replaced by the first candidate of the child's plan, which is the same thing when each strategy
returns one candidate).  Strategies, in Spark's order: the streaming strategies
(:mod:`.streaming`, IncrementalExecution's extra strategies), SpecialLimits (root only),
FileSourceStrategy, JoinSelection, Aggregation, Window / WindowGroupLimit (:mod:`.window`),
BasicOperators (FileSourceStrategy is tried after JoinSelection and Aggregation here: it only
matches Project/Filter/FileRelation shapes, which those never plan).  After EnsureRequirements,
RemoveRedundantWindowGroupLimits (:mod:`.window`) runs before exchange reuse.
"""

from __future__ import annotations

from collections.abc import Callable

from ember.conf import SQLConf
from ember.errors import InternalError
from ember.physical.nodes import SparkPlan
from ember.planning.aggregation import plan_aggregate
from ember.planning.basic import basic_operators, special_limits
from ember.planning.python import python_operators
from ember.planning.ensure_requirements import ensure_requirements
from ember.planning.file_source import file_source_strategy
from ember.planning.join_selection import JoinSelection, SizeOf
from ember.planning.reuse_exchange import reuse_exchange
from ember.planning.partition_pruning import partition_pruning
from ember.planning.streaming import streaming_operators
from ember.planning.window import remove_redundant_window_group_limits, window_operators
from ember.planning.writes import write_operators
from ember.plans.logical.nodes import Aggregate, LogicalPlan


class QueryPlanner:
    """Plans an optimized logical plan into a physical plan (before EnsureRequirements).

    ``links`` records, for every physical node a strategy created, the logical node it came from
    (Spark's ``logicalLink``): ``{id(physical): (physical, logical)}`` (the physical node is kept
    so that ids stay unique while planning).  Nodes a strategy creates below its top node (a
    partial aggregate, the Filter and scan of FileSourceStrategy) link to the same logical node
    unless the strategy linked them itself.
    """

    def __init__(self, conf: SQLConf, size_of: SizeOf | None = None) -> None:
        self.conf = conf
        self.join_selection = JoinSelection(conf, size_of)
        self.links: dict[int, tuple[SparkPlan, LogicalPlan]] = {}

    def plan(self, root: LogicalPlan) -> SparkPlan:
        p = special_limits(root, self.plan_later, self.conf)
        if p is None:
            return self.plan_later(root)
        self._link_new(p, root)
        return p

    def link(self, physical: SparkPlan, logical: LogicalPlan) -> None:
        """Record that ``physical`` was planned from ``logical`` (first link wins)."""
        self.links.setdefault(id(physical), (physical, logical))

    def _link_new(self, p: SparkPlan, logical: LogicalPlan) -> None:
        stack = [p]
        while stack:
            n = stack.pop()
            if id(n) in self.links:
                continue
            self.link(n, logical)
            stack.extend(n.children)

    def plan_later(self, plan: LogicalPlan) -> SparkPlan:
        p = streaming_operators(plan, self.plan_later)
        if p is None:
            p = write_operators(plan, self.plan_later)
        if p is None:
            p = self.join_selection.plan(plan, self.plan_later)
        if p is None and isinstance(plan, Aggregate):
            p = plan_aggregate(plan, self.plan_later)
        if p is None:
            p = file_source_strategy(plan, self.plan_later, self.link)
        if p is None:
            p = window_operators(plan, self.plan_later)
        if p is None:
            p = python_operators(plan, self.plan_later)
        if p is None:
            p = basic_operators(plan, self.plan_later, self.conf)
        if p is None:
            raise InternalError(f"No plan for {plan.simple_string()}")
        self._link_new(p, plan)
        return p


def plan_query(optimized: LogicalPlan, conf: SQLConf, *, size_of: SizeOf | None = None
               ) -> SparkPlan:
    """The executable physical plan of an optimized logical plan: strategies, then
    EnsureRequirements, then ReuseExchangeAndSubquery.  ``size_of`` overrides
    ``plan_stats(plan, conf).size_in_bytes``."""
    physical = QueryPlanner(conf, size_of).plan(optimized)
    prepared = remove_redundant_window_group_limits(ensure_requirements(physical, conf))
    return partition_pruning(reuse_exchange(prepared, conf), conf)


def plan_query_with_links(optimized: LogicalPlan, conf: SQLConf, *,
                          size_of: SizeOf | None = None,
                          prepare: Callable[[SparkPlan], SparkPlan] | None = None
                          ) -> tuple[SparkPlan, dict[int, LogicalPlan]]:
    """:func:`plan_query` plus each physical node's logical origin: ``{id(node): logical}`` for
    every node of the returned plan (valid while that plan is alive).  Exchanges and sorts that
    EnsureRequirements inserts link to the logical node of the child they wrap.  Pass the mapping
    as ``logical=`` to :func:`ember.runtime.local.explain.explain_analyzed` (estimated rows next
    to the actual ones) and as ``logical_links=`` to :class:`ember.runtime.local.LocalRuntime`
    (adaptive join conversion respects the logical join's hints).  ``prepare`` rewrites the
    planned tree before EnsureRequirements (the query's own preparation rules)."""
    planner = QueryPlanner(conf, size_of)
    physical = planner.plan(optimized)
    if prepare is not None:
        physical = prepare(physical)
    links = dict(planner.links)
    prepared = remove_redundant_window_group_limits(ensure_requirements(physical, conf, links),
                                                    links)
    final = partition_pruning(reuse_exchange(prepared, conf, links), conf, links)
    out: dict[int, LogicalPlan] = {}
    stack = [final]
    while stack:
        n = stack.pop()
        hit = links.get(id(n))
        if hit is not None and hit[0] is n:
            out[id(n)] = hit[1]
        stack.extend(n.children)
    return final, out
