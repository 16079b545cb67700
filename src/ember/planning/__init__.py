"""Physical planning: optimized logical plan -> ``SparkPlan`` (:func:`plan_query`).

Modules: :mod:`.planner` (QueryPlanner, strategies with planLater), :mod:`.join_selection`
(JoinSelection and its support matrix), :mod:`.aggregation`, :mod:`.basic` (BasicOperators,
SpecialLimits), :mod:`.ensure_requirements` (exchanges and sorts).  Ember plans as Spark 4 does
with ``spark.sql.adaptive.enabled=false``.
"""

from ember.planning.planner import QueryPlanner, plan_query, plan_query_with_links

__all__ = ["QueryPlanner", "plan_query", "plan_query_with_links"]
