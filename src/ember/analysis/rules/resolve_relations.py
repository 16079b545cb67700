"""ResolveRelations: catalog lookups.

Before::  UnresolvedRelation [t]
After::   SubqueryAlias t (View (`t`, [a#7, b#8]) (<stored plan of t, fresh ids>))

Unknown names raise ``TABLE_OR_VIEW_NOT_FOUND`` (with the relation's position).
"""

from __future__ import annotations

from ember.analysis.catalog import table_not_found
from ember.analysis.resolution import to_origin
from ember.analysis.rules._util import transform_up_in_run
from ember.plans.logical.nodes import LogicalPlan, SubqueryAlias, UnresolvedRelation


def resolve_relations(plan: LogicalPlan, ctx) -> LogicalPlan:
    """``plan`` with every ``UnresolvedRelation`` replaced by the catalog's plan for its name
    (``TABLE_OR_VIEW_NOT_FOUND`` when there is none)."""
    def rule(p: LogicalPlan) -> LogicalPlan:
        match p:
            case UnresolvedRelation(name_parts=parts, origin=origin):
                found = ctx.catalog.try_lookup(parts)
                if found is None:
                    current = getattr(ctx.catalog, "current_database", None)
                    path = None if current is None else (
                        "[`system`.`builtin`, `system`.`session`, "
                        f"`spark_catalog`.`{current()}`]")
                    raise table_not_found(parts, to_origin(origin), search_path=path)
                if isinstance(found, SubqueryAlias) and len(found.identifier) == 1 \
                        and not ctx.case_sensitive:
                    # Spark names a temporary view as referenced, lower-cased (``testdata.a``);
                    # a persistent table by its identifier (``spark_catalog.default.t``)
                    found = found.copy(identifier=(parts[-1].lower(),))
                return found
            case _:
                return p

    return transform_up_in_run(plan, rule, ctx, "ResolveRelations")
