"""AddMetadataColumns: expose hidden USING-join columns that a query references.

Before::  Project [k#1, k#3] (UsingJoinProject [k#1, v1#2, v2#4] hidden [k#3] (Join ...))
After::   Project [k#1, k#3] (UsingJoinProject [k#1, v1#2, v2#4, k#3] (Join ...))

Every node on the way (Filter, Sort ...) passes the column up; if the referencing node's own output
would change, a Project restores it.
"""

from __future__ import annotations

from ember.analysis.resolution import UsingJoinProject, metadata_output
from ember.analysis.rules._util import transform_up_in_run
from ember.plans.logical.nodes import (
    Aggregate,
    Distinct,
    LogicalPlan,
    Project,
    SubqueryAlias,
    View,
)


def _add(plan: LogicalPlan, ids: set[int]) -> LogicalPlan:
    match plan:
        case UsingJoinProject(project_list=items, child=child):
            have = plan.output_set
            extra = []
            for a in metadata_output(plan):  # own hidden columns + those exposed from below
                if a.id not in have:
                    have = have | {a.id}
                    extra.append(a)
            extra = tuple(extra)
            return plan.copy(project_list=items + extra, child=_add(child, ids))
        case Project() | Aggregate() | SubqueryAlias() | View() | Distinct():
            return plan
        case _:
            if not plan.children:
                return plan
            return plan.with_children(tuple(_add(c, ids) for c in plan.children))


def add_metadata_columns(plan: LogicalPlan, ctx) -> LogicalPlan:
    """``plan`` with the hidden USING-join columns its operators reference added to the outputs
    below them (see module doc); ``plan`` itself when no operator reads one."""

    def rule(p: LogicalPlan) -> LogicalPlan:
        if not p.children or not all(c.resolved for c in p.children):
            return p
        inputs: set[int] = set()
        meta: set[int] = set()
        for c in p.children:
            inputs |= c.output_set
            meta |= {a.id for a in metadata_output(c)}
        needed = {i for i in p.references if i not in inputs and i in meta}
        if not needed:
            return p
        new = p.with_children(tuple(_add(c, needed) for c in p.children))
        if new.output != p.output:
            return Project(p.output, new)
        return new

    return transform_up_in_run(plan, rule, ctx, "AddMetadataColumns")
