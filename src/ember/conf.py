"""Session configuration with Spark's keys and typed defaults.

Every key Ember reads, Spark's (``spark.*``) and its own (``ember.*``), is registered here once, as
a :class:`ConfEntry` constant with its type, default and documentation (Spark's ``SQLConf`` /
``ConfigEntry``); the rest of the code reads a key only through its entry (``conf.get(ENTRY)``,
``ENTRY.read(conf)``), never by a string literal with a local default.  ``SET -v`` lists the
entries (:meth:`SQLConf.describe`).

``SQLConf`` stores every key as set by the user (``SET k=v``, ``session.conf.set``) and answers
typed reads for the registered keys.  Unknown keys are kept as strings, as Spark does, so that
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
import re
import warnings
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Callable

from ember.calendar_interval import parse_interval
from ember.errors import AnalysisError, EmberError, UnsupportedError
from ember.spark_sql_conf_keys import SPARK_SQL_CONF_KEYS, SPARK_VERSION

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


def _time_ms(v: Any) -> int:
    """A time string in milliseconds (Spark's ``timeConf``: ``10ms``, ``1s``, ``2min``, ``1h``; a
    bare number is milliseconds)."""
    m = re.fullmatch(r"\s*(\d+)\s*(ms|s|m|min|h)?\s*", str(v).lower())
    if m is None:
        raise AnalysisError(f"Invalid time string: {v}")
    return int(m.group(1)) * {"ms": 1, "s": 1000, "m": 60_000, "min": 60_000,
                              "h": 3_600_000}[m.group(2) or "ms"]


_TYPE_NAMES = {_bool: "boolean", int: "int", float: "double", str: "string", _bytes: "bytes",
               _time_ms: "time"}


@dataclass(frozen=True, slots=True)
class ConfEntry:
    """One configuration key: its typed default (None: undefined), the parser of a value set as
    a string, and its documentation (Spark's ``ConfigEntry``).  A ``spark.*`` key is Spark's (Ember
    implements it as Spark does, or as far as its doc says); an ``ember.*`` key is Ember's own."""

    key: str
    default: Any
    parse: Callable[[Any], Any]
    doc: str
    type_name: str = "string"

    @property
    def is_spark(self) -> bool:
        """Whether the key is Spark's (``spark.*``) rather than Ember's own (``ember.*``)."""
        return self.key.startswith("spark.")

    @property
    def version(self) -> str:
        """The Spark version that added a Spark SQL key (``SET -v``'s ``Since version``); empty
        for Ember's keys and Spark's core (non-SQL) keys."""
        spec = SPARK_SQL_CONF_KEYS.get(self.key)
        return spec[2] if spec is not None else ""

    def string(self, value: Any) -> str:
        """``value`` (typed or as set) as ``SET`` shows it; ``<undefined>`` for None."""
        if value is None:
            return "<undefined>"
        return str(value).lower() if isinstance(value, bool) else str(value)

    def read(self, conf: "SQLConf | Mapping[str, Any] | None") -> Any:
        """This key's typed value in ``conf``: a session's :class:`SQLConf`, a plain mapping of
        settings (as a Spark task receives them), or None (the default)."""
        if conf is None:
            return self.default
        if isinstance(conf, SQLConf):
            return conf.get(self)
        raw = conf.get(self.key)
        return self.default if raw is None else self.parse(raw)

    def read_spark(self, spark: Any) -> Any:
        """This key's typed value in a PySpark ``SparkSession``'s conf (the Spark runtime reads
        the settings Spark's own readers and Arrow transfer use).  An unset key reads Spark's own
        default (``spark.sql.session.timeZone`` is the JVM's zone there, not Ember's UTC); only a
        key Spark has no value for falls back to this entry's default."""
        try:
            raw = spark.conf.get(self.key)
        except Exception:  # noqa: BLE001 -- Spark raises for a key it has no value for
            raw = None
        return self.default if raw is None else self.parse(raw)


_ENTRIES: dict[str, ConfEntry] = {}


def _state_ttl(key: str) -> Callable[[Any], int | None]:
    """The parser of a state time-to-live key: an interval string (``'10 minutes'``,
    ``'1 hour 30 minutes'``, ``'500 milliseconds'``) or an int of milliseconds -> milliseconds;
    ``0`` = no TTL."""

    def parse(v: Any) -> int | None:
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


def _options(key: str, options: tuple[str, ...]) -> Callable[[Any], str]:
    """A parser accepting one of ``options`` in any case (Spark's ``checkValues`` on an
    upper-cased enumeration value)."""

    def parse(v: Any) -> str:
        value = str(v).upper()
        if value not in options:
            listed = ", ".join(options)
            raise AnalysisError(
                f"The value '{v}' in the config \"{key}\" is invalid. It should be one of "
                f"'{listed}'.", error_class="INVALID_CONF_VALUE.OUT_OF_RANGE_OF_OPTIONS",
                parameters={"confName": key, "confValue": str(v), "confOptions": listed})
        return value

    return parse


def _entry(key: str, default: Any, parse: Callable[[Any], Any], doc: str) -> ConfEntry:
    assert key not in _ENTRIES, f"{key} is registered twice"
    e = ConfEntry(key, default, parse, doc, _TYPE_NAMES.get(parse, "string"))
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
RANGE_JOIN_ENABLED = _entry(
    "ember.join.rangeJoin.enabled", True, _bool,
    "Beyond Spark: a join without equi-join keys whose condition bounds the sides both ways over "
    "one numeric, date or timestamp type (a.x BETWEEN b.lo AND b.hi, interval overlap a.s <= b.e "
    "AND b.s <= a.e) is planned as RangeJoin where Spark plans BroadcastNestedLoopJoin or "
    "CartesianProduct: the pairs are found by sort-and-sweep instead of comparing every pair. "
    "false keeps Spark's operators.")
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
EXECUTION_TIMEOUT = _entry("ember.execution.timeout", 0, _time_ms,
                           "Longest a query may run on the local runtime (a time string: 30s, "
                           "5min; 0: no limit).  Past it the query is cancelled between two "
                           "batches with OPERATION_CANCELED and the session stays usable.")
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
TRANSPOSE_MAX_VALUES = _entry("spark.sql.transposeMaxValues", 500, int,
                              "Most rows DataFrame.transpose turns into columns (more raise "
                              "TRANSPOSE_EXCEED_ROW_LIMIT).")
OPTIMIZER_MAX_ITERATIONS = _entry("spark.sql.optimizer.maxIterations", 100, int,
                                  "Max iterations of a fixed-point optimizer batch.")
WINDOW_GROUP_LIMIT_THRESHOLD = _entry(
    "spark.sql.optimizer.windowGroupLimitThreshold", 1000, int,
    "InferWindowGroupLimit inserts a WindowGroupLimit below a Window filtered by rank <= k only "
    "for k up to this; -1 disables the rule.")
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


def _catalog_implementation(v: Any) -> str:
    value = str(v).strip().lower()
    if value not in ("hive", "in-memory"):
        raise ValueError(f"spark.sql.catalogImplementation must be 'hive' or 'in-memory', not "
                         f"{v!r}")
    return value


WAREHOUSE_DIR = _entry(
    "spark.sql.warehouse.dir", "spark-warehouse", str,
    "Static: the directory of the managed databases and tables (relative to the working "
    "directory at session start, then kept absolute); the persistent catalog's metadata lives "
    "in it too.")
CATALOG_IMPLEMENTATION = _entry(
    "spark.sql.catalogImplementation", "hive", _catalog_implementation,
    "Static: 'hive' (Ember's default, unlike Spark's 'in-memory'): databases, tables and views "
    "persist in the warehouse (Ember's own SQLite metastore there, not a Hive metastore), so the "
    "next session sees them; 'in-memory': their metadata lives and dies with the session (as "
    "Spark without Hive support), the managed tables' files still go to the warehouse.")
#: keys fixed when a session starts (Spark's static SQL configuration)
STATIC_KEYS: frozenset[str] = frozenset({WAREHOUSE_DIR.key, CATALOG_IMPLEMENTATION.key})


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

# Analysis
ANALYZER_EXCLUDED_RULES = _entry("ember.analyzer.excludedRules", "", str,
                                 "Comma-separated analyzer rules to skip (for debugging).")
DEFAULT_DATA_SOURCE = _entry("spark.sql.sources.default", "parquet", str,
                             "The data source format of a read or stream without format().")


def _overwrite_mode(v: Any) -> str:
    mode = str(v).upper()
    if mode not in ("STATIC", "DYNAMIC"):
        raise ValueError(f"spark.sql.sources.partitionOverwriteMode must be STATIC or DYNAMIC, "
                         f"not {v}")
    return mode


PARTITION_OVERWRITE_MODE = _entry(
    "spark.sql.sources.partitionOverwriteMode", "STATIC", _overwrite_mode,
    "What an overwrite of a partitioned directory or table replaces: STATIC, every partition "
    "matching the PARTITION clause (all of them without one); DYNAMIC, only the partitions "
    "the written rows fall into.")
MAX_RECORDS_PER_FILE = _entry("spark.sql.files.maxRecordsPerFile", 0, int,
                              "Rows per written file at most (0: no limit).")
PARQUET_COMPRESSION = _entry("spark.sql.parquet.compression.codec", "snappy", str,
                             "The codec of written Parquet files (none, uncompressed, snappy, "
                             "gzip, zstd, lz4raw).")
JSON_IGNORE_NULL_FIELDS = _entry("spark.sql.jsonGenerator.ignoreNullFields", True, _bool,
                                 "Whether written JSON objects leave out NULL fields.")
# Optimizer rules
COLLAPSE_PROJECT_ALWAYS_INLINE = _entry(
    "spark.sql.optimizer.collapseProjectAlwaysInline", False, _bool,
    "CollapseProject merges adjacent projections even when it duplicates expensive expressions.")
PROPAGATE_DISTINCT_KEYS = _entry(
    "spark.sql.optimizer.propagateDistinctKeys.enabled", True, _bool,
    "Propagate the distinct keys of a plan (plan.distinctKeys) up the plan for the optimizer's "
    "rules that remove redundant aggregates and joins.")
CBO_JOIN_REORDER_ENABLED = _entry("spark.sql.cbo.joinReorder.enabled", False, _bool,
                                  "Cost-based join reordering (CostBasedJoinReorder) when "
                                  "spark.sql.cbo.enabled is true.")
CBO_JOIN_REORDER_DP_THRESHOLD = _entry("spark.sql.cbo.joinReorder.dp.threshold", 12, int,
                                       "Most joined items the join reordering's dynamic "
                                       "programming considers.")
CBO_JOIN_REORDER_CARD_WEIGHT = _entry("spark.sql.cbo.joinReorder.card.weight", 0.7, float,
                                      "Weight of the row count against the size in the cost of a "
                                      "join plan: rows * weight + size * (1 - weight).")
CBO_JOIN_REORDER_DP_STAR_FILTER = _entry("spark.sql.cbo.joinReorder.dp.star.filter", False,
                                         _bool, "Join reordering keeps a detected star join "
                                         "together (star-join filter heuristic).")
CBO_STAR_SCHEMA_DETECTION = _entry("spark.sql.cbo.starSchemaDetection", False, _bool,
                                   "Reorder star joins (fact table first, then its dimensions) "
                                   "found from table statistics when CBO is off.")
CBO_STAR_JOIN_FT_RATIO = _entry("spark.sql.cbo.starJoinFTRatio", 0.9, float,
                                "Largest ratio of the second largest table's rows to the fact "
                                "table's for a star join to be detected.")
NDV_MAX_ERROR = _entry("spark.sql.statistics.ndv.maxError", 0.05, float,
                       "Relative error of distinct-value counts; star detection treats a column "
                       "as a key when its count is within twice this of the row count.")
# The Spark runtime (settings handed to Spark's session)
SPARK_ARROW_MAX_RECORDS_PER_BATCH = _entry(
    "spark.sql.execution.arrow.maxRecordsPerBatch", 10000, int,
    "Rows per Arrow batch Spark hands to Python; the Spark runtime sets it to "
    "ember.spark.arrowBatchRows while it reads Ember's scans.")
SPARK_ARROW_LARGE_VAR_TYPES = _entry(
    "spark.sql.execution.arrow.useLargeVarTypes", False, _bool,
    "Spark's Arrow transfer uses large (64-bit offset) string and binary types; the Spark "
    "runtime reads it from Spark's session to type the batches it receives.")
SPARK_DEFAULT_PARALLELISM = _entry(
    "spark.default.parallelism", None, int,
    "Spark core: default number of partitions; the rate stream source's default "
    "numPartitions (unset: the number of cores).")
SPARK_PYTHON_UNIX_SOCKET = _entry(
    "spark.python.unix.domain.socket.enabled", True, _bool,
    "Spark core, given to a SparkSession the Spark runtime builds: Python workers talk to their "
    "executor over a Unix domain socket rather than TCP on loopback, where each Python task "
    "stalls about 45 ms before its function starts (Linux's delayed acknowledgement). A job of "
    "one Python task on one row took 55 ms over TCP and 13 ms over a Unix socket (PySpark 4.3, "
    "local[2]). Spark's default is false.")
SPARK_SHOW_CONSOLE_PROGRESS = _entry(
    "spark.ui.showConsoleProgress", False, _bool,
    "Spark core, given to a SparkSession the Spark runtime builds: Spark's console progress "
    "bar (Spark's default is true; Ember shows its own).")
SPARK_UI_ENABLED = _entry(
    "spark.ui.enabled", False, _bool,
    "Spark core, given to a SparkSession the Spark runtime builds: Spark's web UI (Spark's "
    "default is true; Ember's EXPLAIN ANALYZE and progress bar report on its queries, and a UI "
    "server per session costs start-up time and a port).")
SPARK_CONSOLE_LOG = _entry(
    "ember.spark.consoleLog", False, _bool,
    "Spark runtime: the JVM of a SparkSession Ember builds writes its console output (log4j "
    "lines, JVM warnings, executors' task-failure stack traces) to the terminal, as PySpark "
    "does. Off by default: it goes to ember-spark-<pid>.log in the temporary directory, and "
    "a failed task reaches the user once, as the Ember error it raised.")
PYTHON_UDF_ARROW_ENABLED = _entry(
    "spark.sql.execution.pythonUDF.arrow.enabled", True, _bool,
    "udf() without useArrow creates an Arrow-optimized Python UDF (evaluated by "
    "ArrowEvalPython, evalType 101) rather than a pickled one (BatchEvalPython); read from the "
    "active session when the UDF is created, as PySpark does.")
SPARK_TEST_KILL_WORKER_ONCE = _entry(
    "ember.spark.test.killWorkerOnce", None, str,
    "Testing, Spark runtime: a marker file path; the first task of partition 0 that finds no "
    "file there creates it and kills its own Python worker, as a crash would.")
# Structured streaming
STREAM_CHECKPOINT_LOCATION = _entry(
    "spark.sql.streaming.checkpointLocation", None, str,
    "Default directory of streaming queries' checkpoints (a query's own under its name).")
STREAM_POLLING_DELAY = _entry("spark.sql.streaming.pollingDelay", 10, _time_ms,
                              "Milliseconds a processing-time trigger waits before polling "
                              "its sources again when no data arrived.")
STREAM_RECENT_PROGRESS = _entry("spark.sql.streaming.numRecentProgressUpdates", 100, int,
                                "Progress reports a query keeps for recentProgress.")
STREAM_MIN_BATCHES_TO_RETAIN = _entry("spark.sql.streaming.minBatchesToRetain", 100, int,
                                      "Batches whose offsets, commits and state versions a "
                                      "checkpoint keeps.")
STREAM_NO_DATA_BATCHES = _entry("spark.sql.streaming.noDataMicroBatches.enabled", True, _bool,
                                "Run a micro-batch without new data when the watermark moved "
                                "and a stateful operator would emit or evict rows.")
STREAM_SCHEMA_INFERENCE = _entry("spark.sql.streaming.schemaInference", False, _bool,
                                 "File stream sources infer their schema from the files present "
                                 "at start (else a schema must be given).")
STREAM_FILE_SOURCE_LOG_COMPACT = _entry("spark.sql.streaming.fileSource.log.compactInterval",
                                        10, int, "Batches between compactions of a file "
                                        "stream source's metadata log.")
STREAM_FILE_SINK_LOG_COMPACT = _entry("spark.sql.streaming.fileSink.log.compactInterval", 10,
                                      int, "Batches between compactions of a file sink's "
                                      "metadata log.")
STREAM_MULTIPLE_WATERMARK_POLICY = _entry(
    "spark.sql.streaming.multipleWatermarkPolicy", "min", str,
    "How the global watermark follows several inputs' watermarks: min or max (pinned in the "
    "checkpoint).")
STREAM_STATE_PROVIDER = _entry(
    "spark.sql.streaming.stateStore.providerClass",
    "org.apache.spark.sql.execution.streaming.state.HDFSBackedStateStoreProvider", str,
    "State store of stateful operators: HDFSBackedStateStoreProvider (in memory, delta files) "
    "or RocksDBStateStoreProvider (pinned in the checkpoint).")
STREAM_STATE_MIN_DELTAS_FOR_SNAPSHOT = _entry(
    "spark.sql.streaming.stateStore.minDeltasForSnapshot", 10, int,
    "Delta files of a state store after which a snapshot is written.")
STREAM_STATE_COMPRESSION_CODEC = _entry(
    "spark.sql.streaming.stateStore.compression.codec", "lz4", str,
    "Codec of state store files (pinned in the checkpoint).")
STREAM_SKIP_NULLS_FOR_JOINS = _entry(
    "spark.sql.streaming.stateStore.skipNullsForStreamStreamJoins.enabled", False, _bool,
    "A stream-stream join's state skips null values when it scans a key's rows.")
STREAM_AGGREGATION_STATE_FORMAT = _entry(
    "spark.sql.streaming.aggregation.stateFormatVersion", 2, int,
    "Format of streaming aggregation state (pinned in the checkpoint).")
STREAM_FLAT_MAP_STATE_FORMAT = _entry(
    "spark.sql.streaming.flatMapGroupsWithState.stateFormatVersion", 2, int,
    "Format of flatMapGroupsWithState state (pinned in the checkpoint).")
STREAM_JOIN_STATE_FORMAT = _entry(
    "spark.sql.streaming.join.stateFormatVersion", 2, int,
    "Format of stream-stream join state (pinned in the checkpoint).")
STREAM_STRICT_DISTRIBUTION = _entry(
    "spark.sql.streaming.statefulOperator.useStrictDistribution", True, _bool,
    "Stateful operators require hash partitioning on exactly their keys (pinned in the "
    "checkpoint).")
STREAM_ALLOW_MULTIPLE_STATEFUL = _entry(
    "spark.sql.streaming.statefulOperator.allowMultiple", True, _bool,
    "Allow several stateful operators in one query (then a stream-stream join keeps its "
    "inputs' event times).")
STREAM_CHECK_CORRECTNESS = _entry(
    "spark.sql.streaming.statefulOperator.checkCorrectness.enabled", True, _bool,
    "Refuse queries whose stateful operators could emit rows later than the watermark allows "
    "(a non-append aggregation below another stateful operator).")
STREAM_JOIN_STATE_INSERT_TIMES = _entry(
    "ember.streaming.join.stateInsertTimes", None, _bool,
    "Internal: whether a stream-stream join's state stores rows' insertion times (needed by "
    "the state time-to-live); the micro-batch engine pins it per checkpoint (unset: whether a "
    "time-to-live is set).")

# -- file sources (ember.execution.file_index, ember.execution.json_source) --
COLUMN_NAME_OF_CORRUPT_RECORD = _entry(
    "spark.sql.columnNameOfCorruptRecord", "_corrupt_record", str,
    "The column of malformed JSON records' text (the reader's columnNameOfCorruptRecord "
    "option overrides it).")
PARTITION_TYPE_INFERENCE = _entry(
    "spark.sql.sources.partitionColumnTypeInference.enabled", True, _bool,
    "Infer the types of partition columns from their directory values (else strings).")
DYNAMIC_PARTITION_PRUNING = _entry(
    "spark.sql.optimizer.dynamicPartitionPruning.enabled", True, _bool,
    "Prune a file scan's partitions by a broadcast hash join's build-side keys (Spark's "
    "PartitionPruning; as with Spark's default reuseBroadcastOnly, only under a broadcast join).")
RUN_SQL_ON_FILES = _entry(
    "spark.sql.runSQLOnFiles", True, _bool,
    "Allow format.`path` in FROM to read the files at path (parquet, csv, json).")
FILES_MAX_PARTITION_BYTES = _entry(
    "spark.sql.files.maxPartitionBytes", 128 << 20, _bytes,
    "The most bytes of files packed into one scan partition (Spark's FilePartition).")
FILES_OPEN_COST = _entry(
    "spark.sql.files.openCostInBytes", 4 << 20, _bytes,
    "The estimated cost of opening a file, in bytes scanned (Spark's FilePartition).")
FILES_MIN_PARTITION_NUM = _entry(
    "spark.sql.files.minPartitionNum", None, int,
    "The suggested least number of scan partitions (unset: the default parallelism).")
STORE_ASSIGNMENT_POLICY = _entry(
    "spark.sql.storeAssignmentPolicy", "ANSI",
    _options("spark.sql.storeAssignmentPolicy", ("ANSI", "LEGACY", "STRICT")),
    "How INSERT and saveAsTable convert values to a table column's type: ANSI casts only "
    "between reasonable types and fails on overflow, LEGACY casts anything as a non-ANSI cast "
    "does, STRICT allows only casts that cannot lose information.")
TIMESTAMP_TYPE = _entry(
    "spark.sql.timestampType", "TIMESTAMP_LTZ",
    _options("spark.sql.timestampType", ("TIMESTAMP_LTZ", "TIMESTAMP_NTZ")),
    "What the type name TIMESTAMP (casts, DDL, TIMESTAMP '...' literals) and the inference of "
    "naive Python datetimes mean: TIMESTAMP_LTZ (an instant) or TIMESTAMP_NTZ (a wall-clock "
    "time without zone).")
ALLOW_NON_EMPTY_LOCATION_IN_CTAS = _entry(
    "spark.sql.legacy.allowNonEmptyLocationInCTAS", False, _bool,
    "Legacy: CREATE TABLE ... LOCATION ... AS SELECT may write into a directory that holds "
    "files (they are overwritten).")

#: Prefixes of Spark's settings that must be given before the SparkContext starts (the Spark
#: runtime passes them to the session builder, never to a running session's conf).
SPARK_STATIC_PREFIXES: tuple[str, ...] = (
    "spark.driver.", "spark.executor.", "spark.master", "spark.app.", "spark.ui.", "spark.jars",
    "spark.pyspark.", "spark.python.", "spark.cores.", "spark.task.", "spark.default.parallelism",
    "spark.serializer", "spark.local.dir", "spark.shuffle.", "spark.sql.warehouse.dir",
    "spark.memory.")

#: Spark SQL keys Ember does not read but accepts without a warning: the Spark runtime hands
#: them to Spark's session builder, which reads them.
IMPLEMENTED_ELSEWHERE: frozenset[str] = frozenset()


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
        """The value of ``key`` as set, else its registered default as a string (None when it
        has none)."""
        if key in self._values:
            return self._values[key]
        e = _ENTRIES.get(key)
        if e is None or e.default is None:
            return None
        return e.string(e.default)

    def is_set(self, key: str) -> bool:
        return key in self._values

    def items(self) -> list[tuple[str, str]]:
        """The keys set explicitly, with their values (``SET``)."""
        return sorted(self._values.items())

    def describe(self) -> list[tuple[str, str, str, str]]:
        """Every registered key with its value, its meaning and the Spark version that added it
        (``SET -v``: Spark's ``key``, ``value``, ``meaning``, ``Since version``), by key."""
        return [(e.key, e.string(self.get_string(e.key)), e.doc, e.version)
                for e in sorted(_ENTRIES.values(), key=lambda e: e.key)]

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
