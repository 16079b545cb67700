"""The parsed form of ``INSERT INTO`` / ``INSERT OVERWRITE`` (Spark's ``InsertIntoStatement``).

The session analyzes it into the write engine's command once the target table is known
(:mod:`ember.analysis.table_insertion`, Spark's ``PreprocessTableInsertion`` and
``DataSourceAnalysis``).  The target is kept as a name, not as a child plan, so that the
analyzer never resolves it as a relation to read.
"""

from __future__ import annotations

from dataclasses import field

from ember.plans.logical.nodes import Command, LogicalPlan
from ember.trees import node

__all__ = ["InsertIntoStatement", "NULL_PARTITION_VALUE"]


class _NullPartitionValue:
    """The value of a static partition written ``PARTITION (p = NULL)`` (Spark's
    ``Some(null)``), told apart from a dynamic partition's None; one instance,
    :data:`NULL_PARTITION_VALUE`."""

    __slots__ = ()

    def __repr__(self) -> str:
        return "NULL_PARTITION_VALUE"

    def __reduce__(self) -> str:
        return "NULL_PARTITION_VALUE"


NULL_PARTITION_VALUE = _NullPartitionValue()


@node
class InsertIntoStatement(Command):
    """``INSERT {INTO | OVERWRITE} [TABLE] name [PARTITION (k = v, k2, ...)] [IF NOT EXISTS]
    [(c1, c2, ...) | BY NAME] query``.

    ``partition_spec`` keeps Spark's ``Map[String, Option[String]]`` as pairs in the written
    order: a static partition's value as a string (as Spark's parser gives it),
    :data:`NULL_PARTITION_VALUE` for ``p = NULL``, None for a dynamic one.  ``user_specified_cols`` is the column list (empty: none given)."""

    name_parts: tuple[str, ...]
    query: LogicalPlan
    partition_spec: tuple[tuple[str, "str | _NullPartitionValue | None"], ...] = ()
    user_specified_cols: tuple[str, ...] = ()
    overwrite: bool = False
    if_partition_not_exists: bool = False
    by_name: bool = False
    origin: tuple[int, int] | None = field(default=None, compare=False)

    def simple_string(self) -> str:
        spec = ""
        if self.partition_spec:
            spec = ", [" + ", ".join(
                k if v is None else f"{k}={'null' if v is NULL_PARTITION_VALUE else v}"
                for k, v in self.partition_spec) + "]"
        cols = f", [{', '.join(self.user_specified_cols)}]" if self.user_specified_cols else ""
        flags = ", ".join(str(b).lower() for b in (self.overwrite, self.if_partition_not_exists,
                                                   self.by_name))
        return (f"InsertIntoStatement 'UnresolvedRelation [{', '.join(self.name_parts)}]"
                f"{spec}{cols}, {flags}")
