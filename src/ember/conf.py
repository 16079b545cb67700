"""Session configuration with Spark's keys and typed defaults.

``SQLConf`` stores every key as set by the user (``SET k=v``, ``session.conf.set``) and answers
typed reads for the keys Ember knows.  Unknown keys are kept as strings, as Spark does, so that
configuration meant for Spark passes through unchanged.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable


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
FORCE_SHUFFLED_HASH_JOIN = _entry("spark.sql.join.forceApplyShuffledHashJoin", False, _bool,
                                  "Testing: always use shuffled hash join when possible.")
SHUFFLE_PARTITIONS = _entry("spark.sql.shuffle.partitions", 200, int, "Partitions after a shuffle.")
CROSS_JOINS_ENABLED = _entry("spark.sql.crossJoin.enabled", True, _bool, "Allow implicit cross joins.")
OPTIMIZE_NULL_AWARE_ANTI_JOIN = _entry("spark.sql.optimizeNullAwareAntiJoin", True, _bool,
                                       "Plan single-column NOT IN as a null-aware anti join.")
ALLOW_PARAMETERLESS_COUNT = _entry("spark.sql.legacy.allowParameterlessCount", False, _bool,
                                   "Legacy: count() means count(*)")
ALLOW_STAR_IN_COUNT = _entry("spark.sql.legacy.allowStarWithSingleTableIdentifierInCount", False,
                             _bool, "Legacy: allow count(t.*).")
SETOPS_PRECEDENCE_LEGACY = _entry("spark.sql.legacy.setopsPrecedence.enabled", False, _bool,
                                  "Legacy: all set operators have equal precedence.")
BATCH_SIZE = _entry("ember.execution.batchSize", 65536, int,
                    "Rows per Arrow record batch in the local runtime.")
EXCLUDED_RULES = _entry("spark.sql.optimizer.excludedRules", "", str,
                        "Comma-separated optimizer rules to disable.")


class SQLConf:
    """Mutable key/value configuration of one session."""

    def __init__(self, initial: dict[str, Any] | None = None) -> None:
        self._values: dict[str, str] = {}
        for k, v in (initial or {}).items():
            self.set(k, v)

    def set(self, key: str, value: Any) -> None:
        """Set ``key`` (validated when Ember knows the key)."""
        entry = _ENTRIES.get(key)
        if entry is not None:
            entry.parse(value)  # validate now, not at first use
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
