"""The session catalog's table statistics: Spark's ``CatalogStatistics``, which the
``SessionCatalog`` keeps per table and ANALYZE TABLE (``AnalyzeTableCommand``,
``AnalyzeColumnCommand``) records.

Ember has views but no tables, so statistics are kept per underlying relation (the data object of
a LocalRelation, the files of a FileRelation, the bounds of a Range) and apply to every leaf over
it in the session.  Each :class:`~ember.analysis.catalog.Catalog` has its own, so sessions never
see each other's statistics.  It is the session's
:class:`~ember.plans.logical.statistics.TableStatisticsSource`: plan estimation reads it through
the session's configuration (``SQLConf.table_statistics``), together with the automatic
statistics (``ember.cbo.autoStats.enabled``) of the gatherer the session passes in.
"""

from __future__ import annotations

import threading
import weakref
from collections.abc import Callable, Mapping
from typing import Any

from ember.plans.logical.nodes import FileRelation, LocalRelation, LogicalPlan, Range
from ember.plans.logical.statistics import ColumnStat, TableStats

__all__ = ["TableStatistics", "AutomaticStatistics"]

#: Gathers a relation's statistics without ANALYZE: ``leaf -> (row count, column statistics by
#: lower-case name)``, None when it has none.
AutomaticStatistics = Callable[[LogicalPlan], "tuple[int, Mapping[str, ColumnStat]] | None"]


def _relation_key(leaf: LogicalPlan) -> tuple | None:
    match leaf:
        case FileRelation(format=fmt, paths=paths, options=opts):
            return ("file", fmt, tuple(paths), tuple(opts))
        case Range(start=s, end=e, step=st):
            return ("range", s, e, st)
    return None


class TableStatistics:
    """One session's table statistics (module docstring)."""

    def __init__(self, automatic: AutomaticStatistics | None = None) -> None:
        # LocalRelation data: id(table) -> (weakref to the table, stats)
        self._local: dict[int, tuple[Any, TableStats]] = {}
        # FileRelation / Range: a key of the relation -> stats
        self._keyed: dict[tuple, TableStats] = {}
        self._automatic = automatic
        self._epoch = 0
        self._lock = threading.RLock()

    @property
    def epoch(self) -> int:
        """Bumped whenever recorded statistics change: invalidates cached plan statistics."""
        return self._epoch

    def analyzed(self, leaf: LogicalPlan) -> TableStats | None:
        """The ANALYZE statistics recorded for the relation of ``leaf``, if any."""
        if isinstance(leaf, LocalRelation):
            if leaf.data is None:
                return None
            got = self._local.get(id(leaf.data))
            if got is not None and got[0]() is leaf.data:
                return got[1]
            return None
        key = _relation_key(leaf)
        return None if key is None else self._keyed.get(key)

    def automatic(self, leaf: LogicalPlan) -> tuple[int, Mapping[str, ColumnStat]] | None:
        """The automatic statistics of ``leaf``'s relation (None without a gatherer)."""
        return None if self._automatic is None else self._automatic(leaf)

    def record(self, leaf: LogicalPlan, stats: TableStats) -> None:
        """Record ANALYZE statistics for the relation of ``leaf`` (a LocalRelation, FileRelation
        or Range; other leaves are ignored)."""
        with self._lock:
            if isinstance(leaf, LocalRelation):
                data = leaf.data
                key = id(data)
                local = self._local

                def _drop(_ref: Any, key: int = key) -> None:
                    got = local.get(key)
                    if got is not None and got[0]() is None:
                        local.pop(key, None)

                local[key] = (weakref.ref(data, _drop), stats)
            else:
                key2 = _relation_key(leaf)
                if key2 is None:
                    return
                self._keyed[key2] = stats
            self._epoch += 1
