"""Plan statistics: Spark's ``plan.stats``, read by the optimizer (star detection, cost-based join
reorder) and the physical planner (JoinSelection's broadcast choice).

- :mod:`.model`: what statistics are (``Statistics``, ``ColumnStat``, ``HintInfo``, the table
  statistics ``TableStats`` and the ``TableStatisticsSource`` a session provides), row widths,
  and the column statistics of Arrow data;
- :mod:`.size_estimation`: ``plan_stats`` and Spark's ``SizeInBytesOnlyStatsPlanVisitor``, with
  the leaves' own statistics;
- :mod:`.cbo_estimation`: Spark's ``BasicStatsPlanVisitor`` (FilterEstimation, JoinEstimation,
  AggregateEstimation, ProjectEstimation), used with ``spark.sql.cbo.enabled``.

The session catalog keeps the table statistics (``ember.analysis.table_statistics``); ANALYZE
TABLE runs as a command of the session (``ember.analyze_table``); automatic statistics are
gathered by ``ember.execution.auto_statistics``.
"""

from ember.plans.logical.statistics.cbo_estimation import condition_selectivity
from ember.plans.logical.statistics.model import (
    LONG_MAX,
    ColumnStat,
    HintInfo,
    Statistics,
    TableStatisticsSource,
    TableStats,
    bytes_to_string,
    column_size,
    compute_column_stats,
    default_size,
    output_size,
    size_per_row,
    stats_supported,
)
from ember.plans.logical.nodes import spark_range_elements
from ember.plans.logical.statistics.size_estimation import (
    plan_stats,
    relation_size_in_bytes,
    spark_frame_stats,
)

__all__ = [
    "LONG_MAX",
    "ColumnStat",
    "HintInfo",
    "Statistics",
    "TableStatisticsSource",
    "TableStats",
    "bytes_to_string",
    "column_size",
    "compute_column_stats",
    "condition_selectivity",
    "default_size",
    "output_size",
    "plan_stats",
    "relation_size_in_bytes",
    "size_per_row",
    "spark_frame_stats",
    "spark_range_elements",
    "stats_supported",
]
