"""Automatic table statistics (beyond Spark; ``ember.cbo.autoStats.enabled``, default false):
statistics gathered without ANALYZE TABLE, so star detection and cost-based join reordering work
without it.

- In-memory relations: exact row counts, distinct counts (``pyarrow.compute.count_distinct``),
  NULL counts and min/max, computed once per Arrow table object.
- Parquet files: the row count and the NULL counts / min / max of the footers, and distinct counts
  from a scan of the first rows (the GEE estimator), once per file path, size and modification
  time.

An :class:`AutoStatistics` belongs to one session: the session hands it to its catalog's table
statistics (``ember.analysis.table_statistics``), which plan estimation reads.
"""

from __future__ import annotations

import datetime as _dt
import math
import os
import threading
import weakref
from collections.abc import Mapping
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from ember import types as T
from ember.plans.logical.nodes import FileRelation, LocalRelation, LogicalPlan
from ember.plans.logical.statistics import ColumnStat, compute_column_stats, stats_supported

__all__ = ["AutoStatistics", "AUTO_STATS_SAMPLE_ROWS"]

#: Rows read per Parquet relation to estimate distinct counts.
AUTO_STATS_SAMPLE_ROWS = 100_000


class AutoStatistics:
    """One session's automatic statistics (module docstring), cached per Arrow table object and
    per Parquet file signature for the life of the session."""

    def __init__(self) -> None:
        self._local: dict[int, tuple[Any, tuple[int, dict[str, ColumnStat]]]] = {}
        self._files: dict[tuple, tuple[int | None, dict[str, ColumnStat]]] = {}
        self._lock = threading.RLock()

    def __call__(self, leaf: LogicalPlan) -> tuple[int, Mapping[str, ColumnStat]] | None:
        match leaf:
            case LocalRelation(data=data) if data is not None:
                return self._local_relation(leaf)
            case FileRelation(format="parquet"):
                got = self._parquet(leaf)
                if got is None or got[0] is None:
                    return None
                return got  # type: ignore[return-value]
        return None

    def _local_relation(self, leaf: LocalRelation) -> tuple[int, Mapping[str, ColumnStat]]:
        data = leaf.data
        assert data is not None
        key = id(data)
        cache = self._local
        got = cache.get(key)
        if got is not None and got[0]() is data:
            return got[1]
        cols: dict[str, ColumnStat] = {}
        for a, col in zip(leaf.attrs, data.columns):
            if stats_supported(a.data_type):
                cols[a.name.lower()] = compute_column_stats(col, a.data_type)
        result = (data.num_rows, cols)
        with self._lock:
            def _drop(_ref: Any, key: int = key) -> None:
                g = cache.get(key)
                if g is not None and g[0]() is None:
                    cache.pop(key, None)

            cache[key] = (weakref.ref(data, _drop), result)
        return result

    def _parquet(self, leaf: FileRelation) -> tuple[int | None, dict[str, ColumnStat]] | None:
        key = (_file_signature(tuple(leaf.paths)), tuple((a.name, str(a.data_type))
                                                          for a in leaf.attrs))
        got = self._files.get(key)
        if got is not None:
            return got
        result = _parquet_stats(leaf)
        if len(self._files) > 256:
            self._files.clear()
        self._files[key] = result
        return result


def _file_signature(paths: tuple[str, ...]) -> tuple:
    sig = []
    for p in paths:
        try:
            st = os.stat(p)
            sig.append((p, st.st_size, st.st_mtime_ns))
        except OSError:
            sig.append((p, -1, -1))
    return tuple(sig)


def _gee_ndv(sample: pa.ChunkedArray | pa.Array, total_rows: int) -> int:
    """Distinct count of a column from a sample: exact when the sample is the whole column, else
    the GEE estimator ``sqrt(N/n) * f1 + sum(f_j, j >= 2)`` (f1: values seen once)."""
    valid = pc.drop_null(sample)
    n = len(valid)
    if n == 0:
        return 0
    counts = pc.value_counts(valid).field("counts")
    d = len(counts)
    if n >= total_rows:
        return d
    f1 = pc.sum(pc.equal(counts, 1)).as_py() or 0
    est = math.sqrt(total_rows / n) * f1 + (d - f1)
    return int(min(max(d, round(est)), total_rows))


def _parquet_stats(leaf: FileRelation) -> tuple[int | None, dict[str, ColumnStat]]:
    """Row count and NULL counts / min / max from the footers, distinct counts from the first
    :data:`AUTO_STATS_SAMPLE_ROWS` rows (GEE); ``(None, {})`` when a footer cannot be read."""
    total = 0
    nulls: dict[str, int] = {}
    mins: dict[str, Any] = {}
    maxs: dict[str, Any] = {}
    no_minmax: set[str] = set()
    sample_tables = []
    sampled = 0
    try:
        for path in leaf.paths:
            pf = pq.ParquetFile(path)
            md = pf.metadata
            total += md.num_rows
            names = [md.schema.column(i).path for i in range(md.num_columns)]
            for rg in range(md.num_row_groups):
                g = md.row_group(rg)
                for i, nm in enumerate(names):
                    s = g.column(i).statistics
                    key_nm = nm.lower()
                    if s is None or not s.has_null_count:
                        nulls[key_nm] = -(1 << 62)
                    else:
                        nulls[key_nm] = nulls.get(key_nm, 0) + s.null_count
                    if s is None or not s.has_min_max:
                        no_minmax.add(key_nm)
                    else:
                        try:
                            lo, hi = s.min, s.max
                            mins[key_nm] = lo if key_nm not in mins else min(mins[key_nm], lo)
                            maxs[key_nm] = hi if key_nm not in maxs else max(maxs[key_nm], hi)
                        except TypeError:
                            no_minmax.add(key_nm)
            if sampled < AUTO_STATS_SAMPLE_ROWS:
                for batch in pf.iter_batches(batch_size=min(65536, AUTO_STATS_SAMPLE_ROWS)):
                    sample_tables.append(pa.Table.from_batches([batch]))
                    sampled += batch.num_rows
                    if sampled >= AUTO_STATS_SAMPLE_ROWS:
                        break
    except Exception:  # noqa: BLE001 -- unreadable footers: no automatic statistics
        return (None, {})
    sample = pa.concat_tables(sample_tables, promote_options="permissive") if sample_tables \
        else None
    cols: dict[str, ColumnStat] = {}
    sample_names = {n.lower(): n for n in (sample.column_names if sample is not None else [])}
    for a in leaf.attrs:
        nm = a.name.lower()
        if not stats_supported(a.data_type) or nm not in sample_names:
            continue
        col = sample.column(sample_names[nm])  # type: ignore[union-attr]
        nc = nulls.get(nm)
        null_count = nc if nc is not None and nc >= 0 else None
        ndv = _gee_ndv(col, total)
        if null_count is not None:
            ndv = min(ndv, total - null_count)
        lo = hi = None
        if (nm not in no_minmax and nm in mins and isinstance(
                a.data_type, (T.IntegralType, T.FloatType, T.DoubleType, T.DateType))):
            lo, hi = mins[nm], maxs[nm]
            if isinstance(a.data_type, T.DateType) and isinstance(lo, int):
                lo = _dt.date(1970, 1, 1) + _dt.timedelta(days=lo)
                hi = _dt.date(1970, 1, 1) + _dt.timedelta(days=hi)
        base = compute_column_stats(col, a.data_type)
        cols[nm] = ColumnStat(ndv, lo, hi, null_count, base.avg_len, base.max_len)
    return (total, cols)