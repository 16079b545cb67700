"""The session catalog: temporary views (and views created with ``CREATE VIEW``) by name.

Names are case-insensitive (Spark's default). A view is stored as its *analyzed* plan; every
lookup returns a copy with fresh expression ids (:func:`fresh_copy`), so a view referenced twice in
one query (a self-join) yields two relations with distinct attributes, as Spark's
``DeduplicateRelations`` guarantees.

Example::

    cat = Catalog()
    cat.create_temp_view("t", analyzed_plan)
    cat.lookup(("t",))   # -> SubqueryAlias(('t',), View('t', <copy of plan, fresh ids>))
"""

from __future__ import annotations

from dataclasses import dataclass

from ember.errors import AnalysisError
from ember.expressions.base import Alias, AttributeReference, Expression
from ember.plans.logical.nodes import LogicalPlan, Project, SubqueryAlias, View
from ember.analysis.fresh import fresh_copy
from ember.analysis.table_statistics import AutomaticStatistics, TableStatistics

_DEFAULT_PREFIXES = ((), ("default",), ("spark_catalog", "default"))


@dataclass(slots=True)
class _Entry:
    name: str
    plan: LogicalPlan
    temporary: bool


def _quote(name: str) -> str:
    return "`" + name.replace("`", "``") + "`"


class Catalog:
    """Temporary views by case-insensitive name and the session's table statistics (Spark's
    ``SessionCatalog`` subset).  ``automatic_statistics`` gathers statistics without ANALYZE
    (``ember.cbo.autoStats.enabled``)."""

    def __init__(self, automatic_statistics: AutomaticStatistics | None = None) -> None:
        self._views: dict[str, _Entry] = {}
        #: Spark's ``CatalogStatistics`` of the session's relations (ANALYZE TABLE).
        self.table_statistics = TableStatistics(automatic_statistics)

    # -- views ------------------------------------------------------------------------------
    def create_temp_view(
        self,
        name: str,
        plan: LogicalPlan,
        replace: bool = False,
        user_columns: tuple[str, ...] | None = None,
        *,
        temporary: bool = True,
        if_not_exists: bool = False,
    ) -> None:
        """Register ``plan`` (already analyzed) as view ``name``.

        ``user_columns`` renames the columns (``CREATE VIEW v(a1, a2) AS ...``). Raises
        ``TEMP_TABLE_OR_VIEW_ALREADY_EXISTS`` when the name exists and ``replace`` is false.
        """
        key = name.lower()
        if key in self._views and not replace:
            if if_not_exists:
                return
            if temporary:
                raise AnalysisError(
                    f"Cannot create the temporary view {_quote(name)} because it already exists.\n"
                    "Choose a different name, drop or replace the existing view,  or add the IF "
                    "NOT EXISTS clause to tolerate pre-existing views.",
                    error_class="TEMP_TABLE_OR_VIEW_ALREADY_EXISTS",
                    parameters={"relationName": _quote(name)},
                )
            full = f"`spark_catalog`.`default`.{_quote(name)}"
            raise AnalysisError(
                f"Cannot create view {full} because it already exists.\n"
                "Choose a different name, drop or replace the existing object, or add the IF NOT "
                "EXISTS clause to tolerate pre-existing objects.",
                error_class="TABLE_OR_VIEW_ALREADY_EXISTS",
                parameters={"relationName": full},
            )
        if user_columns is not None:
            plan = with_user_columns(name, plan, tuple(user_columns))
        self._views[key] = _Entry(name, plan, temporary)

    def register_relation(self, name: str, plan: LogicalPlan, replace: bool = True) -> None:
        """Register a resolved relation (e.g. a ``FileRelation``) under ``name``."""
        self.create_temp_view(name, plan, replace=replace)

    def drop_temp_view(self, name: str, if_exists: bool = False) -> bool:
        """Drop view ``name``; returns whether it existed. Raises ``TABLE_OR_VIEW_NOT_FOUND``
        when it does not exist and ``if_exists`` is false."""
        key = name.lower()
        if key in self._views:
            del self._views[key]
            return True
        if not if_exists:
            raise table_not_found((name,))
        return False

    drop_view = drop_temp_view

    def exists(self, name: str) -> bool:
        return name.lower() in self._views

    def list_views(self) -> list[str]:
        return sorted(e.name for e in self._views.values())

    def get_plan(self, name: str) -> LogicalPlan | None:
        """The stored plan of view ``name`` (shared ids; use :meth:`lookup` inside queries)."""
        e = self._views.get(name.lower())
        return None if e is None else e.plan

    # -- lookup -----------------------------------------------------------------------------
    def lookup(self, name_parts: tuple[str, ...]) -> LogicalPlan:
        """``SubqueryAlias((name,), View(name, plan))`` with fresh ids, or raises
        ``TABLE_OR_VIEW_NOT_FOUND``."""
        plan = self.try_lookup(name_parts)
        if plan is None:
            raise table_not_found(name_parts)
        return plan

    def try_lookup(self, name_parts: tuple[str, ...]) -> LogicalPlan | None:
        parts = tuple(name_parts)
        if not parts:
            return None
        prefix = tuple(p.lower() for p in parts[:-1])
        if prefix not in _DEFAULT_PREFIXES:
            return None
        e = self._views.get(parts[-1].lower())
        if e is None:
            return None
        body = fresh_copy(e.plan)
        return SubqueryAlias((e.name,), View(e.name, body))


def table_not_found(name_parts: tuple[str, ...], origin=None) -> AnalysisError:
    """Spark's ``TABLE_OR_VIEW_NOT_FOUND`` error for ``name_parts``."""
    rel = ".".join(_quote(p) for p in name_parts)
    return AnalysisError(
        f"The table or view {rel} cannot be found. Verify the spelling and correctness of the "
        "schema and catalog.\nSearch path: [`system`.`builtin`, `system`.`session`, "
        "`spark_catalog`.`default`].\nIf you did not qualify the name with a schema, verify the "
        "current_schema() output, or qualify the name with the correct schema and catalog.\n"
        "To tolerate the error on drop use DROP VIEW IF EXISTS or DROP TABLE IF EXISTS.",
        error_class="TABLE_OR_VIEW_NOT_FOUND",
        parameters={
            "relationName": rel,
            "searchPath": "[`system`.`builtin`, `system`.`session`, `spark_catalog`.`default`]",
        },
        origin=origin,
    )


def with_user_columns(name: str, plan: LogicalPlan, names: tuple[str, ...]) -> LogicalPlan:
    """``CREATE VIEW v(a1, a2) AS q``: rename q's columns with a Project of Aliases."""
    out = plan.output
    if len(names) != len(out):
        cls = (
            "CREATE_VIEW_COLUMN_ARITY_MISMATCH.NOT_ENOUGH_DATA_COLUMNS"
            if len(out) < len(names)
            else "CREATE_VIEW_COLUMN_ARITY_MISMATCH.TOO_MANY_DATA_COLUMNS"
        )
        cols = ", ".join(_quote(n) for n in names)
        data = ", ".join(_quote(a.name) for a in out)
        raise AnalysisError(
            f"Cannot create view `spark_catalog`.`default`.{_quote(name)}, the reason is "
            f"{'not enough' if len(out) < len(names) else 'too many'} data columns:\n"
            f"View columns: {cols}.\nData columns: {data}.",
            error_class=cls,
            parameters={"viewName": f"`spark_catalog`.`default`.{_quote(name)}",
                        "viewColumns": cols, "dataColumns": data},
        )
    items: list[Expression] = [Alias(a, n) for a, n in zip(out, names)]
    return Project(tuple(items), plan)


__all__ = ["Catalog", "table_not_found", "with_user_columns", "AttributeReference"]
