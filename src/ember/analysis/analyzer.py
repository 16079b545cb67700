"""The analyzer: unresolved logical plan -> resolved, type-coerced, checked logical plan.

As in Catalyst, named batches of rules run to a fixed point, then :func:`check_analysis` reports
what is left unresolved or ill-typed with Spark's error class::

    Substitution (once)   CTESubstitution
    Hints (once)          ResolveHints (join strategy hints -> ResolvedHint)
    Resolution (fixed)    WindowsSubstitution, ResolveRelations, ResolveInlineTables,
                          ResolveTableValuedFunctions,
                          ResolveReferences (incl. DeduplicateRelations and star expansion),
                          ResolveOrdinals, ResolveMissingReferences, ResolveFunctions,
                          ResolveAliases, ResolveGroupingAnalytics, ResolvePivot,
                          ResolveUnpivot, ResolveSubquery,
                          ResolveWindowOrder, ResolveWindowFrame, ResolveNaturalAndUsingJoin,
                          GlobalAggregates, ResolveAggregateFunctions,
                          ExtractWindowExpressions (and QUALIFY; after HAVING is resolved),
                          TimeWindowing, AddMetadataColumns,
                          TypeCoercion, WindowFrameCoercion, ResolveEvalMode
    Remove TempResolvedColumn (once)  RemoveTempResolvedColumn (HAVING names; see
                          ResolveAggregateFunctions)
    ResolveTimeZone (once)
    Post-hoc (once)       EliminateResolvedHint (hints onto Join.hint), CleanupUsingJoinProject

Example::

    analyzed = Analyzer(catalog, conf).analyze(parse_statement("SELECT a FROM t"))

Analysis is deterministic: no timing, no randomness; expression ids come from the process-wide
counter only.

Fast path: each ``_run_batches`` call gives the context a fresh ``run_memo``; the rules that leave
everything but a few unresolved shapes alone walk the plan with
:func:`ember.analysis.rules._util.transform_up_in_run`, which skips subtrees the same rule left
unchanged earlier in that run (the fixed-point loop re-runs every rule until nothing changes).
The memo is dropped when the run ends.  Rules listed in ``RULE_PATTERNS`` are skipped on plans
holding none of the node kinds they rewrite.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from ember.conf import ANALYZER_EXCLUDED_RULES, SQLConf
from ember.errors import EmberError, InternalError
from ember.expressions.base import AttributeReference, UnresolvedOrdinal
from ember.expressions.subquery import SubqueryExpression
from ember.expressions.windows import WindowExpression, WindowSpecDefinition
from ember.plans.logical.nodes import (
    Command,
    CreateViewCommand,
    DescribeRelation,
    ExplainCommand,
    Join,
    LogicalPlan,
    Pivot,
    UnresolvedInlineTable,
    UnresolvedQualify,
    UnresolvedRelation,
    UnresolvedTableValuedFunction,
    Unpivot,
    WithWindowDefinition,
)
from ember.plans.logical.insert import InsertIntoStatement
from ember.analysis.checks import check_analysis
from ember.analysis.table_insertion import insert_command
from ember.analysis.resolution import remove_temp_resolved_columns
from ember.analysis.rules.add_metadata_columns import add_metadata_columns
from ember.analysis.rules.cte_substitution import cte_substitution
from ember.analysis.rules.finalize import finalize_plan
from ember.analysis.rules.extract_generator import extract_generator, resolve_generate
from ember.analysis.rules.global_aggregates import global_aggregates
from ember.analysis.rules.resolve_aggregate_functions import resolve_aggregate_functions
from ember.analysis.rules.resolve_aliases import resolve_aliases
from ember.analysis.rules.resolve_binary_arithmetic import resolve_binary_arithmetic
from ember.analysis.rules.resolve_eval_mode import resolve_eval_mode
from ember.analysis.rules.resolve_functions import resolve_functions
from ember.analysis.rules.resolve_grouping_analytics import resolve_grouping_analytics
from ember.analysis.rules.resolve_hints import resolve_hints
from ember.analysis.rules.resolve_inline_tables import resolve_inline_tables
from ember.analysis.rules.resolve_missing_references import resolve_missing_references
from ember.analysis.rules.resolve_natural_and_using_join import resolve_natural_and_using_join
from ember.analysis.rules.resolve_ordinals import resolve_ordinals
from ember.analysis.rules.resolve_pivot import resolve_pivot
from ember.analysis.rules.resolve_references import resolve_references
from ember.analysis.rules.resolve_relations import resolve_relations
from ember.analysis.rules.resolve_sql_on_file import resolve_sql_on_file
from ember.analysis.rules.resolve_table_valued_functions import (
    resolve_table_valued_functions,
)
from ember.analysis.rules.resolve_subquery import resolve_subquery, resolve_outer_references
from ember.analysis.rules.resolve_time_zone import resolve_time_zone
from ember.analysis.rules.resolve_unpivot import resolve_unpivot
from ember.analysis.rules.time_windowing import time_windowing
from ember.analysis.rules.type_coercion import type_coercion
from ember.analysis.rules.extract_window_expressions import extract_window_expressions
from ember.analysis.rules.resolve_window_frame import resolve_window_frame
from ember.analysis.rules.resolve_window_order import resolve_window_order
from ember.analysis.rules.window_frame_coercion import window_frame_coercion
from ember.analysis.rules.windows_substitution import windows_substitution

Rule = Callable[[LogicalPlan, "AnalysisContext"], LogicalPlan]


@dataclass
class AnalysisContext:
    """What rules may read: the catalog, the configuration, the analyzer (for subqueries) and the
    stack of enclosing queries' attributes (innermost last) used to resolve correlated columns."""

    catalog: object
    conf: SQLConf
    analyzer: "Analyzer"
    outer_scopes: list[tuple[AttributeReference, ...]] = field(default_factory=list)
    #: per entry of ``outer_scopes``: whether that subquery is a lateral one (whose ``t.*`` may
    #: name an outer relation)
    lateral_scopes: list[bool] = field(default_factory=list)
    implicit_casts: dict[int, object] = field(default_factory=dict)
    #: ``{rule name: {id(node): node}}``: subtrees a rule left unchanged during the current
    #: ``_run_batches`` call (``rules._util.transform_up_in_run``); None outside a run.
    run_memo: dict[str, dict[int, LogicalPlan]] | None = None

    @property
    def case_sensitive(self) -> bool:
        return self.conf.case_sensitive

    def mark_implicit(self, cast_expr):
        """Remember that the analyzer inserted ``cast_expr`` (hidden in generated names)."""
        self.implicit_casts[id(cast_expr)] = cast_expr
        return cast_expr


@dataclass(frozen=True)
class Batch:
    name: str
    max_iterations: int
    rules: tuple[tuple[str, Rule], ...]


#: ``{rule name: node classes}`` for the rules that rewrite only nodes of those classes (or
#: nodes holding such expressions): a rule is not run on a plan that holds none of them
#: anywhere, subquery plans included (Spark's rule pruning by tree patterns; see
#: ``ember.trees``).
RULE_PATTERNS: dict[str, tuple[type, ...]] = {
    "WindowsSubstitution": (WithWindowDefinition,),
    "ResolveRelations": (UnresolvedRelation,),
    "ResolveInlineTables": (UnresolvedInlineTable,),
    "ResolveTableValuedFunctions": (UnresolvedTableValuedFunction,),
    "ResolveOrdinals": (UnresolvedOrdinal,),
    "ResolvePivot": (Pivot,),
    "ResolveUnpivot": (Unpivot,),
    "ResolveSubquery": (SubqueryExpression,),
    "ResolveWindowOrder": (WindowExpression,),
    "ResolveWindowFrame": (WindowExpression,),
    "ResolveNaturalAndUsingJoin": (Join,),
    "ExtractWindowExpressions": (WindowExpression, UnresolvedQualify),
    "WindowFrameCoercion": (WindowSpecDefinition,),
}


def _batches() -> tuple[Batch, ...]:
    return (
        Batch("Hints", 1, (("ResolveHints", resolve_hints),)),
        Batch(
            "Resolution",
            100,
            (
                ("WindowsSubstitution", windows_substitution),
                ("ResolveSQLOnFile", resolve_sql_on_file),
                ("ResolveRelations", resolve_relations),
                ("ResolveInlineTables", resolve_inline_tables),
                ("ResolveTableValuedFunctions", resolve_table_valued_functions),
                ("ResolveReferences", resolve_references),
                ("ResolveOrdinals", resolve_ordinals),
                ("ResolveMissingReferences", resolve_missing_references),
                ("ResolveFunctions", resolve_functions),
                ("ResolveGenerate", resolve_generate),
                ("ExtractGenerator", extract_generator),
                ("ResolveBinaryArithmetic", resolve_binary_arithmetic),
                ("ResolveAliases", resolve_aliases),
                ("ResolveGroupingAnalytics", resolve_grouping_analytics),
                ("ResolvePivot", resolve_pivot),
                ("ResolveUnpivot", resolve_unpivot),
                ("ResolveSubquery", resolve_subquery),
                ("ResolveWindowOrder", resolve_window_order),
                ("ResolveWindowFrame", resolve_window_frame),
                ("ResolveNaturalAndUsingJoin", resolve_natural_and_using_join),
                ("GlobalAggregates", global_aggregates),
                ("ResolveAggregateFunctions", resolve_aggregate_functions),
                ("ExtractWindowExpressions", extract_window_expressions),
                ("TimeWindowing", time_windowing),
                ("AddMetadataColumns", add_metadata_columns),
                ("TypeCoercion", type_coercion),
                ("WindowFrameCoercion", window_frame_coercion),
                ("ResolveEvalMode", resolve_eval_mode),
            ),
        ),
        Batch("Remove TempResolvedColumn", 1,
              (("RemoveTempResolvedColumn", remove_temp_resolved_columns),)),
        Batch("ResolveTimeZone", 1, (("ResolveTimeZone", resolve_time_zone),)),
    )


class Analyzer:
    """Resolves a parsed plan against ``catalog`` under ``conf``.

    >>> Analyzer(Catalog(), SQLConf()).analyze(plan)  # doctest: +SKIP
    """

    def __init__(self, catalog, conf: SQLConf | None = None) -> None:
        self.catalog = catalog
        self.conf = conf if conf is not None else SQLConf()
        self._batches: tuple[Batch, ...] | None = None

    # -- public ---------------------------------------------------------------------------
    def analyze(self, plan: LogicalPlan) -> LogicalPlan:
        """The resolved, coerced and checked plan (raises ``AnalysisError`` otherwise).
        Commands are returned with their query analyzed."""
        match plan:
            case CreateViewCommand(query=q):
                return plan.copy(query=self.analyze(q))
            case ExplainCommand(query=q):
                return plan.copy(query=self.analyze(q))
            case DescribeRelation(query=q):
                return plan.copy(query=self.analyze(q))
            case InsertIntoStatement(query=q):
                return insert_command(plan, self.analyze(q), self.catalog, self.conf)
            case Command():
                return plan
            case _:
                pass
        ctx = AnalysisContext(self.catalog, self.conf, self)
        return self._analyze(plan, ctx)

    def execute(self, plan: LogicalPlan, ctx: "AnalysisContext | None" = None) -> LogicalPlan:
        """Run the rule batches only (no substitution of CTEs, no checks); for rule tests."""
        if ctx is None:
            ctx = AnalysisContext(self.catalog, self.conf, self)
        return self._run_batches(plan, ctx)

    # -- internals --------------------------------------------------------------------------
    def _analyze(self, plan: LogicalPlan, ctx: AnalysisContext) -> LogicalPlan:
        plan = cte_substitution(plan, ctx)
        plan = self._run_batches(plan, ctx)
        check_analysis(plan, ctx)
        return finalize_plan(plan, ctx)

    def _run_batches(self, plan: LogicalPlan, ctx: AnalysisContext) -> LogicalPlan:
        if self._batches is None:
            self._batches = _batches()
        excluded = {
            r.strip() for r in self.conf.get(ANALYZER_EXCLUDED_RULES).split(",")
            if r.strip()
        }
        saved_memo = ctx.run_memo
        ctx.run_memo = {}
        try:
            return self._run_batches_in(plan, ctx, excluded)
        finally:
            ctx.run_memo = saved_memo

    def _run_batches_in(self, plan: LogicalPlan, ctx: AnalysisContext,
                        excluded: set[str]) -> LogicalPlan:
        for batch in self._batches:  # type: ignore[union-attr]
            for _ in range(batch.max_iterations):
                before = plan
                for name, rule in batch.rules:
                    if name in excluded:
                        continue
                    patterns = RULE_PATTERNS.get(name)
                    if patterns is not None and not plan.contains_anywhere(*patterns):
                        continue
                    try:
                        plan = rule(plan, ctx)
                    except (EmberError, RecursionError):
                        raise
                    except Exception as e:  # noqa: BLE001 - a bug in the rule: wrap with its name
                        raise InternalError(f"Analyzer rule {name} failed: {type(e).__name__}: {e}") from e
                if plan is before or plan == before:
                    break
        return plan

    def analyze_subquery(
        self, plan: LogicalPlan, outer: tuple[AttributeReference, ...], ctx: AnalysisContext,
        lateral: bool = False,
    ) -> LogicalPlan:
        """Resolve a subquery's plan with ``outer`` as the enclosing scope (Spark's
        ``ResolveSubquery.resolveSubQuery``): resolve as far as possible alone, then turn the
        names still unresolved that the outer query provides into ``OuterReference`` s, repeat."""

        ctx.outer_scopes.append(outer)
        ctx.lateral_scopes.append(lateral)
        try:
            current = plan
            while True:
                previous = current
                current = self._run_batches(current, ctx)
                if not current.resolved:
                    current = resolve_outer_references(current, ctx)
                if current.resolved or current == previous:
                    return current
        finally:
            ctx.outer_scopes.pop()
            ctx.lateral_scopes.pop()
