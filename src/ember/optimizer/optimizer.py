"""The logical optimizer: Spark 4's batches, in Spark's order, over the rules Ember has.

``Optimizer().execute(plan, conf)`` runs (names as in Spark's ``Optimizer.defaultBatches``; rules
Ember does not implement are simply absent from a batch, batches left empty are dropped)::

    Finish Analysis                       Once        EliminateResolvedHint, EliminateSubqueryAliases
    Union                                 FixedPoint  RemoveNoopOperators, CombineUnions
    LocalRelation early                   FixedPoint  ConvertToLocalRelation, PropagateEmptyRelation
    Subquery                              FixedPoint(1) OptimizeSubqueries (this whole optimizer on
                                                      each subquery plan)
    Replace Operators                     FixedPoint  ReplaceIntersectWithSemiJoin,
                                                      ReplaceExceptWithAntiJoin,
                                                      ReplaceDistinctWithAggregate
    Operator Optimization before          FixedPoint  the operator optimization rule set (below)
      Inferring Filters
    Infer Filters                         Once        InferFiltersFromConstraints
    Operator Optimization after           FixedPoint  the operator optimization rule set
      Inferring Filters
    Push extra predicate through join     FixedPoint  PushExtraPredicateThroughJoin,
                                                      PushDownPredicates
    Infer window group limit              Once        InferWindowGroupLimit, ConstantFolding
    Join Reorder                          FixedPoint(1) CostBasedJoinReorder
    Distinct Aggregate Rewrite            Once        RewriteDistinctAggregates
    LocalRelation                         FixedPoint  ConvertToLocalRelation, PropagateEmptyRelation
    Check Cartesian Products              Once        CheckCartesianProducts
    RewriteSubquery                       Once        RewritePredicateSubquery,
                                                      PushPredicateThroughJoin, ColumnPruning,
                                                      CollapseProject, RemoveRedundantAliases,
                                                      RemoveNoopOperators
    Extract Python UDFs                   Once        ExtractPythonUDFs, then (on plans it
                                                      changed) ColumnPruning, PushDownPredicates,
                                                      RemoveNoopOperators; ExtractPythonUDFs
                                                      alone in the minimal optimizer

The operator optimization rule set, in Spark's order: ReorderJoin, EliminateOuterJoin,
PushDownPredicates, ColumnPruning, CollapseProject, OptimizeWindowFunctions, CollapseWindow,
EliminateWindowPartitions, TransposeWindow, NullPropagation, ConstantFolding,
BooleanSimplification, RewriteCorrelatedScalarSubquery, RemoveRedundantAliases,
RemoveNoopOperators (CombineFilters runs inside PushDownPredicates, as in Spark).  FixedPoint is
``spark.sql.optimizer.maxIterations`` (100).

Spark's PullupCorrelatedPredicates is folded into the two subquery rewrites (Ember's subquery
expressions have no join-condition field to pull predicates into; see
``rules/rewrite_subquery.py``), so "Pullup Correlated Expressions" is absent.  For the same
reason OptimizeSubqueries optimizes a correlated subquery plan only below its correlated
operators (see ``rules/optimize_subqueries.py``).

:func:`minimal_batches` is what execution cannot do without (the subquery rewrites): running only
those gives the "unoptimized" plan the differential tests compare the optimized one against.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ember.optimizer.rule_executor import ONCE, Batch, FixedPoint, Rule, RuleExecutor
from ember.conf import OPTIMIZER_MAX_ITERATIONS
from ember.optimizer.rules.boolean_simplification import BooleanSimplification
from ember.optimizer.rules.check_cartesian_products import CheckCartesianProducts
from ember.optimizer.rules.collapse_project import (
    CollapseProject, RemoveNoopOperators, RemoveRedundantAliases,
)
from ember.optimizer.rules.column_pruning import ColumnPruning
from ember.optimizer.rules.combine_unions import CombineUnions
from ember.optimizer.rules.constant_folding import ConstantFolding
from ember.optimizer.rules.convert_to_local_relation import ConvertToLocalRelation
from ember.optimizer.rules.cost_based_join_reorder import CostBasedJoinReorder
from ember.optimizer.rules.eliminate_outer_join import EliminateOuterJoin
from ember.optimizer.rules.extract_python_udfs import ExtractPythonUDFs
from ember.optimizer.rules.eliminate_subquery_aliases import (
    EliminateResolvedHint, EliminateSubqueryAliases,
)
from ember.optimizer.rules.infer_filters import InferFiltersFromConstraints
from ember.optimizer.rules.infer_window_group_limit import InferWindowGroupLimit
from ember.optimizer.rules.collapse_window import CollapseWindow
from ember.optimizer.rules.transpose_window import TransposeWindow
from ember.optimizer.rules.eliminate_window_partitions import EliminateWindowPartitions
from ember.optimizer.rules.optimize_window_functions import OptimizeWindowFunctions
from ember.optimizer.rules.null_propagation import NullPropagation
from ember.optimizer.rules.optimize_subqueries import OptimizeSubqueries
from ember.optimizer.rules.propagate_empty_relation import PropagateEmptyRelation
from ember.optimizer.rules.push_down_predicates import PushDownPredicates, PushPredicateThroughJoin
from ember.optimizer.rules.push_extra_predicate import PushExtraPredicateThroughJoin
from ember.optimizer.rules.reorder_join import ReorderJoin
from ember.optimizer.rules.replace_operators import (
    ReplaceDistinctWithAggregate, ReplaceExceptWithAntiJoin, ReplaceIntersectWithSemiJoin,
)
from ember.optimizer.rules.decorrelate_inner_query import RewriteLateralSubquery
from ember.optimizer.rules.rewrite_distinct_aggregates import RewriteDistinctAggregates
from ember.optimizer.rules.rewrite_subquery import (
    RewriteCorrelatedScalarSubquery, RewritePredicateSubquery,
)

if TYPE_CHECKING:  # pragma: no cover
    from ember.conf import SQLConf

__all__ = ["Optimizer", "MinimalOptimizer", "default_batches", "minimal_batches"]


def _max_iterations(conf: "SQLConf") -> FixedPoint:
    return FixedPoint(int(conf.get(OPTIMIZER_MAX_ITERATIONS)))


def _operator_optimization_rules() -> tuple[Rule, ...]:
    return (
        ReorderJoin(),
        EliminateOuterJoin(),
        PushDownPredicates(),
        ColumnPruning(),
        CollapseProject(),
        OptimizeWindowFunctions(),
        CollapseWindow(),
        EliminateWindowPartitions(),
        TransposeWindow(),
        NullPropagation(),
        ConstantFolding(),
        BooleanSimplification(),
        RewriteCorrelatedScalarSubquery(),
        RemoveRedundantAliases(),
        RemoveNoopOperators(),
    )


def default_batches(conf: "SQLConf") -> list[Batch]:
    """Spark's optimizer batches (see the module docstring) under ``conf``."""

    fixed = _max_iterations(conf)
    op_rules = _operator_optimization_rules()
    return [
        Batch("Finish Analysis", ONCE, (EliminateResolvedHint(), EliminateSubqueryAliases(),
                                         RewriteLateralSubquery())),
        Batch("Union", fixed, (RemoveNoopOperators(), CombineUnions())),
        Batch("LocalRelation early", fixed, (ConvertToLocalRelation(), PropagateEmptyRelation())),
        Batch("Subquery", FixedPoint(1), (OptimizeSubqueries(),)),
        Batch("Replace Operators", fixed, (
            ReplaceIntersectWithSemiJoin(),
            ReplaceExceptWithAntiJoin(),
            ReplaceDistinctWithAggregate(),
        )),
        Batch("Operator Optimization before Inferring Filters", fixed, op_rules),
        Batch("Infer Filters", ONCE, (InferFiltersFromConstraints(),)),
        Batch("Operator Optimization after Inferring Filters", fixed, op_rules),
        Batch("Push extra predicate through join", fixed, (
            PushExtraPredicateThroughJoin(), PushDownPredicates())),
        Batch("Infer window group limit", ONCE, (InferWindowGroupLimit(), ConstantFolding())),
        Batch("Join Reorder", FixedPoint(1), (CostBasedJoinReorder(),)),
        Batch("Distinct Aggregate Rewrite", ONCE, (RewriteDistinctAggregates(),)),
        Batch("LocalRelation", fixed, (ConvertToLocalRelation(), PropagateEmptyRelation())),
        Batch("Check Cartesian Products", ONCE, (CheckCartesianProducts(),)),
        Batch("RewriteSubquery", ONCE, (
            RewritePredicateSubquery(),
            PushPredicateThroughJoin(),
            ColumnPruning(),
            CollapseProject(),
            RemoveRedundantAliases(),
            RemoveNoopOperators(),
        )),
        Batch("Extract Python UDFs", ONCE, (ExtractPythonUDFs(tidy=True),)),
    ]


def minimal_batches(conf: "SQLConf") -> list[Batch]:
    """Only the rewrites execution requires: subquery expressions become joins."""

    return [
        Batch("RewriteLateralSubquery", ONCE, (RewriteLateralSubquery(),)),
        Batch("RewriteSubquery", ONCE, (
            RewriteCorrelatedScalarSubquery(), RewritePredicateSubquery())),
        Batch("Extract Python UDFs", ONCE, (ExtractPythonUDFs(),)),
    ]


class Optimizer(RuleExecutor):
    """Spark's logical optimizer (``default_batches``)."""

    def batches(self, conf: "SQLConf") -> list[Batch]:
        return default_batches(conf)


class MinimalOptimizer(RuleExecutor):
    """Only what execution requires (``minimal_batches``): the "unoptimized" plan."""

    def batches(self, conf: "SQLConf") -> list[Batch]:
        return minimal_batches(conf)
