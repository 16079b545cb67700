"""``QueryExecution``: one query's path through the pipeline, each stage computed once on demand.

    logical (parsed / built by the DataFrame API)
      -> analyzed    ember.analysis.analyzer.Analyzer(catalog, conf).analyze
      -> optimized   ember.optimizer.optimizer.Optimizer (Spark's batches; MinimalOptimizer when
                     ember.optimizer.enabled=false)
      -> physical    ember.planning.plan_query (strategies, JoinSelection, EnsureRequirements)
      -> Arrow       ember.runtime.local.LocalRuntime.collect

This module and :mod:`ember.session` are the only places that glue the stages together.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Literal

import pyarrow as pa

from ember.plans.logical.nodes import Aggregate, InMemoryRelation, LogicalPlan
from ember.cache_manager import CacheManager, CachedData
from ember.analysis.analyzer import Analyzer
from ember.conf import OPTIMIZER_ENABLED
from ember.errors import AnalysisError, InternalError, UnsupportedError
from ember.guard import run_stage
from ember.explain import format_rule_changes
from ember.optimizer.optimizer import MinimalOptimizer, Optimizer
from ember.optimizer.rule_executor import RuleMetrics, PlanChangeLog
from ember.planning import plan_query_with_links
from ember.runtime.local import LocalRuntime
from ember.runtime.local.explain import explain_analyzed
from ember.execution.file_commit import JobOutcome, run_write_job
from ember.execution.write import make_job, partition_directory
from ember.optimizer.rules.v1_writes import V1Writes
from ember.physical.writes import DataWritingCommandExec
from ember.plans.logical.writes import InsertIntoHadoopFsRelationCommand
from ember.plans.logical.observe import pending_metrics, strip_collect_metrics

if TYPE_CHECKING:  # pragma: no cover
    from ember.conf import SQLConf
    from ember.physical.nodes import SparkPlan
    from ember.session import Session

__all__ = ["QueryExecution", "ExplainMode"]

ExplainMode = Literal["simple", "extended", "codegen", "cost", "formatted", "rules", "analyze"]



class QueryExecution:
    """The plans of one query.

    >>> import ember
    >>> qe = ember.Session().sql("SELECT 1 AS a")._qe
    >>> qe.analyzed.output[0].name
    'a'
    """

    __slots__ = ("session", "logical", "_analyzed", "_optimized", "_executed", "_links",
                 "rule_metrics", "run_metrics", "sql_text", "cache_exclude")

    def __init__(self, session: "Session", logical_plan: LogicalPlan) -> None:
        self.session = session
        self.logical = logical_plan
        self._analyzed: LogicalPlan | None = None
        self._optimized: LogicalPlan | None = None
        self._executed = None
        #: ``{id(physical node): logical plan}`` for the executed plan (estimates, adaptive joins).
        self._links: dict = {}
        #: Actual rows, time and memory per physical operator of the last run (``to_arrow``).
        self.run_metrics = None
        #: Time and effective runs per optimizer rule (filled when ``optimized`` is computed).
        self.rule_metrics = RuleMetrics()
        #: The SQL statement this query came from, if any (named by internal errors).
        self.sql_text: str | None = None
        #: The cache entry this query computes (its own entry is not read from the cache).
        self.cache_exclude: CachedData | None = None

    def guard(self, phase: str, fn):  # type: ignore[no-untyped-def]
        """``fn()`` under :func:`ember.guard.run_stage` (deep input; no bare Python exception)."""
        return run_stage(phase, fn, self.sql_text)

    @property
    def conf(self) -> "SQLConf":
        """The configuration the query is optimized and planned with: the session's."""
        return self.session.sql_conf

    @property
    def analyzed(self) -> LogicalPlan:
        """The resolved, type-coerced, checked plan (raises ``AnalysisError``)."""
        if self._analyzed is None:
            analyzer = Analyzer(self.session.session_catalog, self.session.sql_conf)
            self._analyzed = self.guard("analysis", lambda: analyzer.analyze(self.logical))
        return self._analyzed

    @property
    def optimized(self) -> LogicalPlan:
        """The analyzed plan after the optimizer's batches (:mod:`ember.optimizer.optimizer`)."""
        if self._optimized is None:
            self._optimized = self.guard("optimization", self._optimize)
        return self._optimized

    def _optimize(self) -> LogicalPlan:
        conf = self.conf
        executor = Optimizer() if conf.get(OPTIMIZER_ENABLED) else MinimalOptimizer()
        # df.observe's CollectMetrics pass rows through; their metrics are computed after the
        # run (report_metrics)
        analyzed = strip_collect_metrics(self.with_cached_data())
        if isinstance(analyzed, InsertIntoHadoopFsRelationCommand):
            # a write optimizes its query as any query, then V1Writes wraps it
            query = executor.execute(analyzed.query, conf, metrics=self.rule_metrics)
            return V1Writes()(analyzed.copy(query=query), conf)
        return executor.execute(analyzed, conf, metrics=self.rule_metrics)

    def with_cached_data(self) -> LogicalPlan:
        """The analyzed plan with cached subtrees read from the session's cache (Spark's
        ``withCachedData``), each entry's rows computed the first time a query reads them."""
        manager: CacheManager | None = getattr(self.session, "cache_manager", None)
        if manager is None:
            return self.analyzed
        plan = manager.use_cached_data(self.analyzed, self.cache_exclude)
        for rel in plan.collect(lambda n: n if isinstance(n, InMemoryRelation) else None):
            entry = rel.cached
            with entry.lock:
                if entry.table is None and entry.frame is None:
                    qe = QueryExecution(self.session, entry.plan)
                    qe.cache_exclude = entry
                    entry.table = qe.to_arrow()
        return plan

    def rule_changes(self) -> list:
        """Every optimizer rule application that changed the plan, in order
        (:class:`ember.optimizer.rule_executor.PlanChange`)."""

        log = PlanChangeLog()
        Optimizer().execute(self.analyzed, self.session.sql_conf, changes=log)
        return log.changes

    @property
    def executed_plan(self):
        """The physical plan (:func:`ember.planning.plan_query`: strategies + EnsureRequirements)."""
        if self._executed is None:
            optimized = self.optimized
            self._executed, self._links = self.guard("planning", lambda: plan_query_with_links(
                optimized, self.conf, prepare=self.prepare_for_requirements))
        return self._executed

    def prepare_for_requirements(self, physical: "SparkPlan") -> "SparkPlan":
        """The preparation rules that run on the planned tree before EnsureRequirements (Spark's
        ``preparations`` ahead of it): none for a batch query; a micro-batch's
        ``IncrementalExecution`` gives its stateful operators their state and watermarks."""
        return physical

    def to_arrow(self) -> pa.Table:
        """Run the query on the local runtime; columns are named after the analyzed output
        (names may repeat)."""
        table = self.guard("execution", self._to_arrow)
        self.report_metrics()
        return table

    def report_metrics(self) -> None:
        """After a run: the metrics of the plan's ``df.observe`` nodes that have none yet, each
        an aggregate over the observed plan (``ember.observation``)."""
        for n in pending_metrics(self.analyzed):
            metrics = QueryExecution(self.session, Aggregate((), n.observed.metrics, n.child))
            n.observed.sink.set_metrics(metrics.to_arrow())

    def _to_arrow(self) -> pa.Table:
        out = self.analyzed.output
        if self.analyzed.is_streaming:
            raise AnalysisError(
                "Queries with streaming sources must be executed with writeStream.start(), or "
                "from a streaming table or flow definition within a Spark Declarative "
                "Pipeline.", error_class="_LEGACY_ERROR_TEMP_3102")
        plan = self.executed_plan
        if self.session.runtime == "spark":
            # imported here so that pyspark loads only when the Spark runtime runs
            from ember.runtime.spark import SparkRuntime
            # imported here so that pyspark loads only when the Spark runtime runs
            from ember.runtime.spark.session import push_conf

            push_conf(self.session.spark_session, self.session.sql_conf)
            with SparkRuntime(self.session.spark_session, self.session.sql_conf,
                              logical_links=self._links) as srt:
                table = srt.collect(plan)
        else:
            with LocalRuntime(self.session.sql_conf, logical_links=self._links) as rt:
                table = rt.collect(plan)
                self.run_metrics = rt.metrics
        names = [a.name for a in out]
        if table.num_columns != len(names):
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

    def execute_write(self) -> JobOutcome | None:
        """Run a write command (``InsertIntoHadoopFsRelationCommand``): the save mode's checks,
        the write tasks on the session's runtime, and the commit
        (:func:`ember.execution.file_commit.run_write_job`).  None when the mode skipped it."""
        cmd = self.analyzed
        if not isinstance(cmd, InsertIntoHadoopFsRelationCommand):
            raise InternalError(f"{cmd.node_name} is not a write command")
        plan = self.executed_plan
        write = plan.child
        static_prefix = partition_directory([k for k, _ in cmd.static_partitions],
                                            [v for _, v in cmd.static_partitions])
        if "://" in cmd.output_path:
            if self.session.runtime != "spark":
                raise UnsupportedError(f"The local runtime writes local paths only, not "
                                       f"{cmd.output_path} (the Spark runtime writes URIs).")
            # imported here so that pyspark loads only when the Spark runtime runs
            from ember.runtime.spark.writes import write_with_spark

            # a file system only the cluster sees: Spark's own commit protocol and save mode
            rows = write_with_spark(self.session.spark_session, self.session.sql_conf, cmd,
                                    write.child, cmd.output_path, str(cmd.mode))
            return JobOutcome([], rows)

        def run(directory: str, job_id: str) -> int | None:
            if self.session.runtime == "spark":
                # imported here so that pyspark loads only when the Spark runtime runs
                from ember.runtime.spark.writes import write_with_spark

                return write_with_spark(self.session.spark_session, self.session.sql_conf,
                                        cmd, write.child, directory)
            job = make_job(cmd, write.child.output, directory, job_id, self.conf)
            with LocalRuntime(self.session.sql_conf, logical_links=self._links) as rt:
                stats = rt.collect(write.copy(job=job))
                self.run_metrics = rt.metrics
            return sum(stats.column("num_rows").to_pylist())

        outcome = run_write_job(cmd.output_path, str(cmd.mode), run,
                                static_prefix=static_prefix,
                                dynamic_overwrite=cmd.dynamic_partition_overwrite,
                                if_partition_not_exists=cmd.if_partition_not_exists)
        self.report_metrics()
        return outcome

    # -- EXPLAIN ------------------------------------------------------------------------------
    def _stages(self) -> str:
        """On the Spark runtime: how the physical plan maps to Spark jobs and stages."""
        if self.session.runtime != "spark":
            return ""
        # imported here so that pyspark loads only when the Spark runtime runs
        from ember.runtime.spark.stages import describe_stages

        sc = self.session.spark_session.sparkContext
        plan, title = self.executed_plan, "collect the result"
        if isinstance(plan, DataWritingCommandExec):  # Spark's writer runs the query's stages
            plan, title = plan.child.child, "write files"
        return "\n\n" + describe_stages(plan, self.session.sql_conf, sc.defaultParallelism,
                                         title)

    def explain_string(self, mode: ExplainMode | str = "simple") -> str:
        """EXPLAIN text.

        ``simple`` (also ``formatted``): the physical plan.  ``extended`` (also ``cost`` /
        ``codegen``): parsed, analyzed (with its ``name: type`` schema line), optimized and
        physical plans, as Spark prints them.  Ember's own modes: ``rules`` lists every optimizer
        rule that changed the plan with the plan before and after (and per-rule timing);
        ``analyze`` runs the query and prints each physical operator with its actual rows, time
        and memory.
        """
        mode = mode.lower()
        if mode == "rules":
            changes = self.rule_changes()
            return format_rule_changes(changes, self.rule_metrics if self._optimized else None)
        if mode == "analyze":
            self.to_arrow()
            return "== Physical Plan (analyzed) ==\n" + explain_analyzed(
                self.executed_plan, self.run_metrics, logical=self._links,
                conf=self.session.sql_conf)
        if mode in ("simple", "formatted"):
            return "== Physical Plan ==\n" + self.executed_plan.tree_string() + self._stages()
        if mode in ("extended", "cost", "codegen"):
            analyzed = self.analyzed
            schema = ", ".join(f"{a.name}: {a.data_type.simple_string()}" for a in analyzed.output)
            parts = [
                "== Parsed Logical Plan ==\n" + self.logical.tree_string(),
                "== Analyzed Logical Plan ==\n" + (schema + "\n" if schema else "")
                + analyzed.tree_string(),
                "== Optimized Logical Plan ==\n" + self.optimized.tree_string(),
                "== Physical Plan ==\n" + self.executed_plan.tree_string() + self._stages(),
            ]
            return "\n".join(parts)
        raise ValueError(
            f"Unknown explain mode: {mode}. Accepted explain modes are 'simple', 'extended', "
            "'codegen', 'cost', 'formatted', 'rules', 'analyze'."
        )
