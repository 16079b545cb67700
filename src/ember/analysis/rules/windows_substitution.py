"""WindowsSubstitution: ``OVER w`` takes the specification of ``WINDOW w AS (...)``.

Before::  'WithWindowDefinition [w=windowspecdefinition('a, ...)]
            +- 'Project ['rank() windowspecreference(w) AS r]
After::   'Project ['rank() windowspecdefinition('a, ...) AS r]

Every window reference below the clause is substituted (a query in FROM without its own
WINDOW clause sees the outer one, as in Spark).  A name the clause does not define raises
``MISSING_WINDOW_SPECIFICATION``.
"""

from __future__ import annotations

from ember.errors import AnalysisError
from ember.expressions.base import Expression
from ember.expressions.windows import WindowExpression, WindowSpecReference
from ember.plans.logical.nodes import LogicalPlan, WithWindowDefinition

_DOC = "https://spark.apache.org/docs/latest"


def missing_window_specification(name: str) -> AnalysisError:
    return AnalysisError(
        f"Window specification is not defined in the WINDOW clause for {name}. For more "
        f"information about WINDOW clauses, please refer to '{_DOC}/sql-ref-syntax-qry-select-"
        "window.html'.", error_class="MISSING_WINDOW_SPECIFICATION",
        parameters={"windowName": name, "docroot": _DOC})


def windows_substitution(plan: LogicalPlan, ctx) -> LogicalPlan:
    """``plan`` with every ``WithWindowDefinition`` substituted into the window expressions
    below it and removed (see module doc)."""

    def rule(p: LogicalPlan) -> LogicalPlan:
        if not isinstance(p, WithWindowDefinition):
            return p
        defs = dict(p.window_definitions)

        def sub(e: Expression) -> Expression | None:
            if isinstance(e, WindowExpression) and isinstance(e.window_spec, WindowSpecReference):
                spec = defs.get(e.window_spec.name)
                if spec is None:
                    raise missing_window_specification(e.window_spec.name)
                return e.copy(window_spec=spec)
            return None

        return p.child.transform_up(lambda n: n.map_expressions(lambda e: e.transform_up(sub)))

    return plan.transform_up(rule)
