"""Session configuration with Spark's keys and typed defaults.

``SQLConf`` stores every key as set by the user (``SET k=v``, ``session.conf.set``) and answers
typed reads for the keys Ember knows.  Unknown keys are kept as strings, as Spark does, so that
configuration meant for Spark passes through unchanged.

Setting a key (:meth:`SQLConf.set`):

- a key Ember implements (registered here, or in :data:`IMPLEMENTED_ELSEWHERE`): validated and
  stored;
- a key of Spark's SQL configuration (:mod:`ember.spark_sql_conf_keys`, generated from PySpark)
  that Ember does not implement: stored, with a warning (``UnimplementedConfWarning`` and the
  ``ember.conf`` logger) the first time each key is set -- unless it is a legacy switch (its name
  says ``legacy``): set to Spark's default (``false`` when Spark leaves it undefined) it is
  accepted silently (Ember behaves so); set otherwise it would change results in a way Ember does
  not reproduce, and is refused with ``EMBER_UNSUPPORTED_LEGACY_CONF`` (an Ember error class;
  Spark has none for a key it accepts) naming the key;
- any other key: stored silently, as Spark does.
"""

from __future__ import annotations

import logging
import warnings
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Callable
from ember.spark_sql_conf_keys import SPARK_SQL_CONF_KEYS, SPARK_VERSION
from ember.errors import UnsupportedError

if TYPE_CHECKING:
    from ember.plans.logical.statistics import TableStatisticsSource


def _bool(v: Any) -> bool:
    if isinstance(v, bool):
        return v
    s = str(v).strip().lower()
    if s in ("true", "1", "yes"):
        return True
    if s in ("false", "0", "no"):
        return False
    from ember.errors import AnalysisError

    raise AnalysisError(f"Invalid boolean value {v!r}", error_class="INVALID_CONF_VALUE.TYPE_MISMATCH")


def _bytes(v: Any) -> int:
    if isinstance(v, int):
        return v
    s = str(v).strip().lower()
    units = {"b": 1, "k": 1 << 10, "kb": 1 << 10, "m": 1 << 20, "mb": 1 << 20, "g": 1 << 30,
             "gb": 1 << 30, "t": 1 << 40, "tb": 1 << 40}
    for u in sorted(units, key=len, reverse=True):
        if s.endswith(u) and s[: -len(u)].strip().lstrip("-").isdigit():
            return int(s[: -len(u)]) * units[u]
    return int(s)


@dataclass(frozen=True, slots=True)
class ConfEntry:
    key: str
    default: Any
    parse: Callable[[Any], Any]
    doc: str


_ENTRIES: dict[str, ConfEntry] = {}


def _state_ttl(key: str) -> Callable[[Any], int | None]:
    """The parser of a state time-to-live key: an interval string (``'10 minutes'``,
    ``'1 hour 30 minutes'``, ``'500 milliseconds'``) or an int of milliseconds -> milliseconds;
    ``0`` = no TTL."""

    def parse(v: Any) -> int | None:
        from ember.errors import AnalysisError, EmberError
        from ember.expressions.calendar_interval import parse_interval

        if v is None:
            return None

        def bad(why: str) -> AnalysisError:
            return AnalysisError(
                f"The value '{v}' in the config \"{key}\" is invalid. {why}",
                error_class="INVALID_CONF_VALUE",
                parameters={"confValue": str(v), "confName": key})

        if isinstance(v, int) and not isinstance(v, bool):  # milliseconds (a parsed value)
            if v < 0:
                raise bad("The state time-to-live cannot be negative.")
            return v
        try:
            months, days, micros = parse_interval(str(v))
        except EmberError as e:
            raise bad("The state time-to-live must be a duration such as '10 minutes' "
                      f"(error class {e.error_class}).") from None
        if months:
            raise bad("The state time-to-live cannot use months or years (their length "
                      "varies); use days.")
        ms = (days * 86_400_000_000 + micros) // 1000
        if days * 86_400_000_000 + micros < 0:
            raise bad("The state time-to-live cannot be negative.")
        return ms

    return parse


def _entry(key: str, default: Any, parse: Callable[[Any], Any], doc: str) -> ConfEntry:
    e = ConfEntry(key, default, parse, doc)
    _ENTRIES[key] = e
    return e


ANSI_ENABLED = _entry("spark.sql.ansi.enabled", True, _bool, "ANSI SQL semantics (Spark 4 default).")
CASE_SENSITIVE = _entry("spark.sql.caseSensitive", False, _bool, "Case-sensitive name resolution.")
SESSION_TIME_ZONE = _entry("spark.sql.session.timeZone", "UTC", str,
                           "Time zone for timestamp display and parsing (Ember defaults to UTC).")
AUTO_BROADCAST_THRESHOLD = _entry("spark.sql.autoBroadcastJoinThreshold", 10 * 1024 * 1024, _bytes,
                                  "Max estimated size of a relation to broadcast; -1 disables.")
PREFER_SORT_MERGE_JOIN = _entry("spark.sql.join.preferSortMergeJoin", True, _bool,
                                "Prefer sort-merge over shuffled hash join.")
FORCE_SHUFFLED_HASH_JOIN = _entry("ember.join.forceApplyShuffledHashJoin", False, _bool,
                                  "Testing: always use shuffled hash join when possible (was "
                                  "spark.sql.join.forceApplyShuffledHashJoin, which Spark 4.3 "
                                  "does not have).")
SHUFFLE_PARTITIONS = _entry("spark.sql.shuffle.partitions", 200, int, "Partitions after a shuffle.")
CROSS_JOINS_ENABLED = _entry("spark.sql.crossJoin.enabled", True, _bool, "Allow implicit cross joins.")
OPTIMIZE_NULL_AWARE_ANTI_JOIN = _entry("spark.sql.optimizeNullAwareAntiJoin", True, _bool,
                                       "Plan single-column NOT IN as a null-aware anti join.")
ALLOW_PARAMETERLESS_COUNT = _entry("spark.sql.legacy.allowParameterlessCount", False, _bool,
                                   "Legacy: count() means count(*)")
ALLOW_STAR_IN_COUNT = _entry("spark.sql.legacy.allowStarWithSingleTableIdentifierInCount", False,
                             _bool, "Legacy: allow count(t.*).")
DECIMAL_ALLOW_PRECISION_LOSS = _entry(
    "spark.sql.decimalOperations.allowPrecisionLoss", True, _bool,
    "Decimal + - * / % whose exact type needs more than 38 digits give up fraction digits (at "
    "least 6 kept); false caps precision and scale at 38 instead (Spark's DecimalPrecision).")
SETOPS_PRECEDENCE_LEGACY = _entry("spark.sql.legacy.setopsPrecedence.enabled", False, _bool,
                                  "Legacy: all set operators have equal precedence.")
BATCH_SIZE = _entry("ember.execution.batchSize", 65536, int,
                    "Rows per Arrow record batch in the local runtime.")
MEMORY_BUDGET = _entry("ember.execution.memoryBudget", 4 << 30, _bytes,
                       "Bytes the local runtime's blocking operators (sort, exchange and join "
                       "buffers) may hold at once, over all running partitions; past it they spill "
                       "to disk (Arrow IPC files in a temporary directory).")
PROGRESS_ENABLED = _entry("ember.execution.progress.enabled", True, _bool,
                          "Show a progress bar on stderr (only when it is a terminal) for local "
                          "queries running longer than a second.")
COALESCE_PARTITIONS = _entry("ember.execution.coalescePartitions.enabled", True, _bool,
                             "Coalesce adjacent shuffle partitions after an exchange in the local "
                             "runtime (as Spark's adaptive execution does); EXPLAIN is unchanged.")
ADVISORY_PARTITION_SIZE = _entry("ember.execution.advisoryPartitionSizeInBytes", 64 << 20, _bytes,
                                 "Target size of a coalesced partition in the local runtime.")
COALESCE_MIN_PARTITION_SIZE = _entry("ember.execution.coalescePartitions.minPartitionSize",
                                     1 << 20, _bytes,
                                     "Smallest coalesced partition the local runtime creates to "
                                     "use every core (bytes).")
COALESCE_MAX_PARTITION_ROWS = _entry("ember.execution.coalescePartitions.maxPartitionRows",
                                     1 << 20, int,
                                     "Rows past which a coalesced partition is closed.")
ADAPTIVE_SHUFFLED_HASH_JOIN = _entry(
    "ember.execution.adaptive.shuffledHashJoin.enabled", True, _bool,
    "Beyond Spark: once both sides of a sort-merge join are shuffled, the local runtime runs it "
    "as a shuffled hash join (no sorts) when no operator above relies on its output ordering, "
    "the join carries no hint, and every coalesced partition of the side it builds holds at most "
    "memoryBudget / (2 x cores) bytes (spark.sql.adaptive.enabled must be true). EXPLAIN shows "
    "the planned SortMergeJoin; EXPLAIN ANALYZE the join that ran.")
PARTIAL_AGG_PASS_THROUGH = _entry(
    "ember.execution.partialAggregation.passThrough.enabled", True, _bool,
    "Beyond Spark (as DuckDB / Photon): a grouped partial HashAggregate whose first ~128K input "
    "rows of a partition hold more than minGroupRatio groups per row stops aggregating that "
    "partition and turns each further input row into its own aggregation buffer (the final "
    "aggregate merges them: same results). Only for functions whose buffers merge exactly "
    "(counts, decimal sums/averages below 29 digits, min/max, first/last, max_by/min_by, "
    "bool_and/bool_or); EXPLAIN ANALYZE metric extra 'partial_pass_through_rows'.")
PARTIAL_AGG_PASS_THROUGH_RATIO = _entry(
    "ember.execution.partialAggregation.passThrough.minGroupRatio", 0.5, float,
    "Groups per input row in a partition's first chunk above which a partial aggregate passes "
    "the partition's remaining rows through (see passThrough.enabled).")
EXCLUDED_RULES = _entry("spark.sql.optimizer.excludedRules", "", str,
                        "Comma-separated optimizer rules to disable.")
# Statistics (ember.plans.logical.statistics)
CBO_ENABLED = _entry("spark.sql.cbo.enabled", False, _bool,
                     "Cost-based estimation of plan statistics (row counts, column statistics); "
                     "enables CostBasedJoinReorder with spark.sql.cbo.joinReorder.enabled.")
PLAN_STATS_ENABLED = _entry("spark.sql.cbo.planStats.enabled", False, _bool,
                            "Use table row counts and column statistics (ANALYZE TABLE) in plan "
                            "statistics even when CBO is off.")
DEFAULT_SIZE_IN_BYTES = _entry("spark.sql.defaultSizeInBytes", (1 << 63) - 1, _bytes,
                               "Estimated size of a relation whose size is unknown "
                               "(Long.MaxValue: never broadcast).")
FILE_COMPRESSION_FACTOR = _entry("spark.sql.sources.fileCompressionFactor", 1.0, float,
                                 "Multiplier of on-disk file sizes in a file relation's "
                                 "estimated size.")
AUTO_STATS_ENABLED = _entry("ember.cbo.autoStats.enabled", False, _bool,
                            "Beyond Spark: gather table statistics automatically (row counts; "
                            "distinct counts, nulls, min/max) from in-memory relations (exact) and "
                            "scanned files (Parquet metadata and a sampled scan), so cost-based join "
                            "ordering and star detection work without ANALYZE TABLE. Cached per "
                            "table object / file path and modification time.")
JOIN_REORDER_ENHANCED = _entry(
    "ember.cbo.joinReorder.enhanced", None, _bool,
    "Beyond Spark: CostBasedJoinReorder uses Ember's join-order search (order-independent "
    "estimates with composite keys, multi-table predicates and sampled filters; DPccp / GOO+DP "
    "above spark.sql.cbo.joinReorder.dp.threshold; never costlier than the order as written) "
    "instead of Spark's DP. Unset: follows ember.cbo.autoStats.enabled.")
OPTIMIZER_ENABLED = _entry("ember.optimizer.enabled", True, _bool,
                           "False runs only the rewrites execution requires (subqueries to "
                           "joins): the unoptimized plan, for debugging and differential tests.")
PIVOT_MAX_VALUES = _entry("spark.sql.pivotMaxValues", 10000, int,
                          "Most distinct values GroupedData.pivot(col) collects when it is not "
                          "given the values (more raise an error).")
OPTIMIZER_MAX_ITERATIONS = _entry("spark.sql.optimizer.maxIterations", 100, int,
                                  "Max iterations of a fixed-point optimizer batch.")
CONSTRAINT_PROPAGATION_ENABLED = _entry(
    "spark.sql.constraintPropagation.enabled", True, _bool,
    "Infer constraints (isnotnull, equality transitivity) up the plan; InferFiltersFromConstraints "
    "adds them as filters.")
# Physical planning (ember.planning)
SHUFFLED_HASH_JOIN_FACTOR = _entry("spark.sql.shuffledHashJoinFactor", 3, int,
                                   "A side is 'much smaller' (shuffled hash join build candidate) "
                                   "when its size times this factor is at most the other's.")
ADAPTIVE_ENABLED = _entry("spark.sql.adaptive.enabled", True, _bool,
                          "Spark's adaptive execution.  Ember plans as Spark does with it off "
                          "(static JoinSelection, configured shuffle partitions in EXPLAIN); when "
                          "true, both runtimes re-plan shuffled joins at run time (broadcast or "
                          "shuffled hash join once a side's real size is known).")
REQUIRE_ALL_CLUSTER_KEYS_FOR_CO_PARTITION = _entry(
    "spark.sql.requireAllClusterKeysForCoPartition", True, _bool,
    "Co-partitioned join inputs must be hash-partitioned on all their join keys to be reused.")
TOP_K_SORT_FALLBACK_THRESHOLD = _entry(
    "spark.sql.execution.topKSortFallbackThreshold", 2147483632, int,
    "ORDER BY ... LIMIT n at the root plans TakeOrderedAndProject when n is below this.")
SPARK_COALESCE_PARTITIONS = _entry(
    "ember.spark.coalescePartitions.enabled", True, _bool,
    "Spark runtime: run the partitions of a shuffle as fewer Spark tasks, adjacent partitions "
    "grouped to ember.execution.advisoryPartitionSizeInBytes by the plan's size estimates "
    "(co-partitioned shuffles grouped alike); the partitioning EXPLAIN shows is unchanged.")
SPARK_ARROW_BATCH_ROWS = _entry(
    "ember.spark.arrowBatchRows", 65536, int,
    "Spark runtime: rows per Arrow batch Spark's readers hand to Ember's operators (Spark's "
    "spark.sql.execution.arrow.maxRecordsPerBatch, 10000 by default, applied to Ember's scans "
    "only); larger batches cut the per-batch cost of every operator above the scan.")
SPARK_DYNAMIC_FILTER_VALUES = _entry(
    "ember.spark.dynamicFilters.maxValues", 1_000_000, int,
    "Spark runtime: a broadcast hash join (inner, or left semi building right) whose build side "
    "has at most this many distinct integer or string keys filters the file scan feeding its "
    "stream side with them inside Spark (a broadcast left semi join), before the rows are "
    "converted to Arrow; the distinct join keys of a shuffled join's side measured by the "
    "adaptive conversion filter the other side's scan alike; 0 turns both off.")
SPARK_DYNAMIC_FILTER_MIN_SCAN = _entry(
    "ember.spark.dynamicFilters.minScanBytes", 128 << 20, _bytes,
    "Spark runtime: the smallest file scan (bytes of its files) a dynamic filter is applied to.")
SPARK_SHIP_PACKAGE = _entry(
    "ember.spark.shipPackage", "auto", lambda v: str(v).lower(),
    "Spark runtime: ship the ember package to the executors with SparkContext.addPyFile "
    "(true / false / auto = when the master is not local).")
EXCHANGE_REUSE_ENABLED = _entry(
    "spark.sql.exchange.reuse", True, _bool,
    "Identical exchanges of one plan run once: the later ones become ReusedExchange.")

STREAM_JOIN_STATE_TTL_LEFT = _entry(
    "ember.streaming.join.stateTtl.left", None,
    _state_ttl("ember.streaming.join.stateTtl.left"),
    "Beyond Spark: rows of the left side of a stream-stream join leave the state this long "
    "(processing time) after the micro-batch that stored them (unset or 0: no TTL).")
STREAM_JOIN_STATE_TTL_RIGHT = _entry(
    "ember.streaming.join.stateTtl.right", None,
    _state_ttl("ember.streaming.join.stateTtl.right"),
    "Beyond Spark: the right side's state time-to-live (see the left one).")
STREAM_SPARK_MAX_STATIC_SIDE = _entry(
    "ember.streaming.spark.maxStaticSideBytes", 256 << 20, _bytes,
    "Spark runtime, streaming: the largest static side of a stream-static join (Arrow bytes); "
    "it is read once when the query starts and broadcast to every task, a larger one is "
    "refused.")

#: Spark SQL keys Ember reads by name outside this module (streaming, statistics, the Spark
#: runtime's Arrow transfer, ...), implemented there.
IMPLEMENTED_ELSEWHERE: frozenset[str] = frozenset({
    "spark.sql.cbo.joinReorder.card.weight", "spark.sql.cbo.joinReorder.dp.star.filter",
    "spark.sql.cbo.joinReorder.dp.threshold", "spark.sql.cbo.joinReorder.enabled",
    "spark.sql.cbo.starJoinFTRatio", "spark.sql.cbo.starSchemaDetection",
    "spark.sql.statistics.ndv.maxError", "spark.sql.optimizer.collapseProjectAlwaysInline",
    "spark.sql.optimizer.propagateDistinctKeys.enabled", "spark.sql.sources.default",
    "spark.sql.warehouse.dir",
    # the Spark runtime hands them to Spark's session, which reads them
    "spark.sql.execution.arrow.maxRecordsPerBatch", "spark.sql.execution.arrow.useLargeVarTypes",
    "spark.sql.streaming.aggregation.stateFormatVersion",
    "spark.sql.streaming.checkpointLocation",
    "spark.sql.streaming.fileSink.log.compactInterval",
    "spark.sql.streaming.fileSource.log.compactInterval",
    "spark.sql.streaming.flatMapGroupsWithState.stateFormatVersion",
    "spark.sql.streaming.join.stateFormatVersion", "spark.sql.streaming.minBatchesToRetain",
    "spark.sql.streaming.multipleWatermarkPolicy", "spark.sql.streaming.noDataMicroBatches.enabled",
    "spark.sql.streaming.numRecentProgressUpdates", "spark.sql.streaming.pollingDelay",
    "spark.sql.streaming.schemaInference", "spark.sql.streaming.stateStore.compression.codec",
    "spark.sql.streaming.stateStore.minDeltasForSnapshot",
    "spark.sql.streaming.stateStore.providerClass",
    "spark.sql.streaming.stateStore.skipNullsForStreamStreamJoins.enabled",
    "spark.sql.streaming.statefulOperator.allowMultiple",
    "spark.sql.streaming.statefulOperator.checkCorrectness.enabled",
    "spark.sql.streaming.statefulOperator.useStrictDistribution",
})


class UnimplementedConfWarning(UserWarning):
    """A Spark SQL configuration key Ember accepts but whose behaviour it does not implement."""


_warned: set[str] = set()
_log = logging.getLogger("ember.conf")


def _is_default(value: Any, default: str) -> bool:
    v = str(value).strip().lower() if not isinstance(value, bool) else str(value).lower()
    if default.startswith("<"):  # <undefined> / <value of ...>: unset means off
        return v == "false"
    return v == default.strip().lower()


def _check_unimplemented(key: str, value: Any) -> None:
    """Warn about (once per key) or refuse a Spark SQL key Ember does not implement."""

    spec = SPARK_SQL_CONF_KEYS.get(key)
    if spec is None or key in IMPLEMENTED_ELSEWHERE:
        return
    if "legacy" in key.lower():
        if _is_default(value, spec[0]):
            return  # Ember behaves as Spark's default

        default = "false" if spec[0].startswith("<") else spec[0]

        raise UnsupportedError(
            f"The Spark configuration \"{key}\" = \"{value}\" restores a legacy behaviour "
            f"that Ember does not implement (Ember always behaves as with Spark's default, "
            f"{default}); refusing it rather than returning different results. Unset it or "
            "set it to its default.",
            error_class="EMBER_UNSUPPORTED_LEGACY_CONF",
            parameters={"confName": key, "confValue": str(value), "default": default})
    if key not in _warned:
        _warned.add(key)
        msg = (f"Spark {SPARK_VERSION} configuration \"{key}\" is accepted but not implemented "
               "by Ember: it has no effect on Ember's plans or results.")
        _log.warning(msg)
        warnings.warn(msg, UnimplementedConfWarning, stacklevel=4)


class SQLConf:
    """Mutable key/value configuration of one session."""

    def __init__(self, initial: dict[str, Any] | None = None) -> None:
        self._values: dict[str, str] = {}
        #: The session catalog's table statistics, which plan statistics read (set by the
        #: session; None: no table statistics).
        self.table_statistics: TableStatisticsSource | None = None
        for k, v in (initial or {}).items():
            self.set(k, v)

    def set(self, key: str, value: Any) -> None:
        """Set ``key`` (validated when Ember knows the key)."""
        entry = _ENTRIES.get(key)
        if entry is not None:
            entry.parse(value)  # validate now, not at first use
        elif key.startswith("spark.sql."):
            _check_unimplemented(key, value)
        self._values[key] = str(value).lower() if isinstance(value, bool) else str(value)

    def unset(self, key: str) -> None:
        self._values.pop(key, None)

    def get(self, key: str | ConfEntry, default: Any = None) -> Any:
        """Typed value for known keys; the raw string (or ``default``) otherwise."""
        if isinstance(key, ConfEntry):
            entry = key
        else:
            entry = _ENTRIES.get(key)
        if entry is not None:
            raw = self._values.get(entry.key)
            return entry.default if raw is None else entry.parse(raw)
        return self._values.get(key, default)

    def get_string(self, key: str) -> str | None:
        if key in self._values:
            return self._values[key]
        e = _ENTRIES.get(key)
        if e is None:
            return None
        return str(e.default).lower() if isinstance(e.default, bool) else str(e.default)

    def is_set(self, key: str) -> bool:
        return key in self._values

    def items(self) -> list[tuple[str, str]]:
        return sorted(self._values.items())

    def copy(self) -> "SQLConf":
        c = SQLConf()
        c._values = dict(self._values)
        c.table_statistics = self.table_statistics
        return c

    # typed shortcuts used on hot paths
    @property
    def case_sensitive(self) -> bool:
        return bool(self.get(CASE_SENSITIVE))

    @property
    def ansi(self) -> bool:
        return bool(self.get(ANSI_ENABLED))

    @property
    def batch_size(self) -> int:
        return int(self.get(BATCH_SIZE))

    @property
    def time_zone(self) -> str:
        return str(self.get(SESSION_TIME_ZONE))
