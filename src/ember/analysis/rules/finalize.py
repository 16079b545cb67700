"""Post-hoc steps after resolution: EliminateResolvedHint and CleanupUsingJoinProject.

- Join strategy hints move onto ``Join.hint`` (Spark does this at the start of optimization; Ember
  does it here so every later stage sees one shape); other ``ResolvedHint`` nodes are removed.
- :class:`UsingJoinProject` (analysis-only) becomes a plain ``Project``, in subquery plans too.
"""

from __future__ import annotations

from ember.analysis.resolution import UsingJoinProject
from ember.analysis.rules._util import map_subquery_plans
from ember.analysis.rules.resolve_hints import eliminate_resolved_hint
from ember.plans.logical.nodes import LogicalPlan, Project


def cleanup_using_join_project(plan: LogicalPlan) -> LogicalPlan:
    """``plan`` (and its subquery plans) with every ``UsingJoinProject`` made a plain
    ``Project``."""
    def rule(p: LogicalPlan) -> LogicalPlan:
        p = p.map_expressions(lambda e: map_subquery_plans(e, cleanup_using_join_project))
        if isinstance(p, UsingJoinProject):
            return Project(p.project_list, p.child)
        return p

    return plan.transform_up(rule)


def finalize_plan(plan: LogicalPlan, ctx) -> LogicalPlan:
    """The last step of analysis, after CheckAnalysis (see module doc)."""
    def hints(p: LogicalPlan) -> LogicalPlan:
        p = eliminate_resolved_hint(p)
        return p.transform_up(
            lambda n: n.map_expressions(lambda e: map_subquery_plans(e, hints))
        )

    plan = hints(plan)
    return cleanup_using_join_project(plan)
