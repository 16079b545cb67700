"""``QueryExecution``: one query's path through the pipeline, each stage computed once on demand.

    logical (parsed / built by the DataFrame API)
      -> analyzed    ember.analysis.analyzer.Analyzer(catalog, conf).analyze
      -> optimized   ember.optimizer.prepare_for_execution   (required rewrites only, for now)
      -> Arrow       ember.execution.executor.collect

This module and :mod:`ember.session` are the only places that glue the stages together.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Literal

import pyarrow as pa

from ember.plans.logical.nodes import LogicalPlan

if TYPE_CHECKING:  # pragma: no cover
    from ember.session import Session

__all__ = ["QueryExecution", "ExplainMode"]

ExplainMode = Literal["simple", "extended", "codegen", "cost", "formatted"]

_NO_PHYSICAL = (
    "(Ember has no physical planner yet: the local runtime executes the optimized logical plan "
    "above directly.)\n"
)


class QueryExecution:
    """The plans of one query.

    >>> import ember
    >>> qe = ember.Session().sql("SELECT 1 AS a")._qe
    >>> qe.analyzed.output[0].name
    'a'
    """

    __slots__ = ("session", "logical", "_analyzed", "_optimized")

    def __init__(self, session: "Session", logical_plan: LogicalPlan) -> None:
        self.session = session
        self.logical = logical_plan
        self._analyzed: LogicalPlan | None = None
        self._optimized: LogicalPlan | None = None

    @property
    def analyzed(self) -> LogicalPlan:
        """The resolved, type-coerced, checked plan (raises ``AnalysisError``)."""
        if self._analyzed is None:
            from ember.analysis.analyzer import Analyzer

            self._analyzed = Analyzer(self.session.session_catalog, self.session.sql_conf).analyze(
                self.logical
            )
        return self._analyzed

    @property
    def optimized(self) -> LogicalPlan:
        """The analyzed plan after the rewrites execution requires (subqueries -> joins ...)."""
        if self._optimized is None:
            from ember.optimizer import prepare_for_execution

            self._optimized = prepare_for_execution(self.analyzed)
        return self._optimized

    def to_arrow(self) -> pa.Table:
        """Run the query; columns are named after the analyzed output (names may repeat)."""
        from ember.execution.context import ExecContext
        from ember.execution.executor import collect

        out = self.analyzed.output
        table = collect(self.optimized, ExecContext(self.session.sql_conf))
        names = [a.name for a in out]
        if table.num_columns != len(names):
            from ember.errors import InternalError

            raise InternalError(
                f"executor returned {table.num_columns} columns for a plan with {len(names)} "
                f"output attributes ({', '.join(names)})"
            )
        # Names may repeat (SELECT a, a); build the schema explicitly so Arrow keeps them, and
        # make sure each column has its attribute's Arrow type.
        fields = [pa.field(n, a.data_type.to_arrow(), nullable=a.nullable) for n, a in
                  zip(names, out)]
        columns = []
        for col, f in zip(table.columns, fields):
            columns.append(col if col.type == f.type else col.cast(f.type))
        return pa.Table.from_arrays(columns, schema=pa.schema(
            [pa.field(f.name, f.type) for f in fields]))

    # -- EXPLAIN ------------------------------------------------------------------------------
    def explain_string(self, mode: ExplainMode | str = "simple") -> str:
        """EXPLAIN text.

        ``simple``: the optimized logical plan (there is no physical plan yet, and printing the
        logical plan under Spark's ``== Physical Plan ==`` header would mislead). ``extended``
        (also ``cost``/``codegen``): parsed, analyzed (with its ``name: type`` schema line) and
        optimized plans, as Spark prints them. ``formatted`` is treated as ``simple``.
        """
        mode = mode.lower()
        if mode in ("simple", "formatted"):
            return "== Optimized Logical Plan ==\n" + self.optimized.tree_string() + _NO_PHYSICAL
        if mode in ("extended", "cost", "codegen"):
            analyzed = self.analyzed
            schema = ", ".join(f"{a.name}: {a.data_type.simple_string()}" for a in analyzed.output)
            parts = [
                "== Parsed Logical Plan ==\n" + self.logical.tree_string(),
                "== Analyzed Logical Plan ==\n" + (schema + "\n" if schema else "")
                + analyzed.tree_string(),
                "== Optimized Logical Plan ==\n" + self.optimized.tree_string(),
                "== Physical Plan ==\n" + _NO_PHYSICAL,
            ]
            return "\n".join(parts)
        raise ValueError(
            f"Unknown explain mode: {mode}. Accepted explain modes are 'simple', 'extended', "
            "'codegen', 'cost', 'formatted'."
        )
