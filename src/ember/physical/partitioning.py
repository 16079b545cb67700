"""Physical partitionings, required distributions and broadcast modes (Spark's
``org.apache.spark.sql.catalyst.plans.physical``).

A :class:`Partitioning` describes how an operator's output rows are split into partitions; a
:class:`Distribution` is what an operator requires of a child's rows.  ``EnsureRequirements``
(:mod:`ember.planning.ensure_requirements`) compares the two with :meth:`Partitioning.satisfies`
and inserts an exchange when a requirement is not met, building the new partitioning with
:meth:`Distribution.create_partitioning`.

These are frozen ``@node`` trees holding expressions (not children): two partitionings compare by
value, and they print as Spark prints them (``hashpartitioning(k#1L, 200)``, ``SinglePartition``,
``HashedRelationBroadcastMode(List(input[0, bigint, false]),false)``).
"""

from __future__ import annotations

from dataclasses import field
from typing import ClassVar

from ember.expressions.base import Expression, SortOrder
from ember.trees import TreeNode, node
from ember.errors import InternalError


def _contains_semantic(exprs: tuple[Expression, ...], e: Expression) -> bool:
    return any(x.semantic_equals(e) for x in exprs)


class _PhysicalProperty(TreeNode):
    """Base of partitionings, distributions and broadcast modes (childless nodes)."""

    __slots__ = ()
    child_base: ClassVar[type]

    def __str__(self) -> str:
        return self.simple_string()


_PhysicalProperty.child_base = _PhysicalProperty


# ---------------------------------------------------------------------------------------------
# Broadcast modes


class BroadcastMode(_PhysicalProperty):
    """How a broadcast relation is materialized on the receiving side."""

    __slots__ = ()


@node
class HashedRelationBroadcastMode(BroadcastMode):
    """Build a hashed relation on ``keys`` (expressions bound to the build side's output, i.e.
    ``BoundReference``s or expressions over them) -- the build side of a broadcast hash join."""

    keys: tuple[Expression, ...]
    is_null_aware: bool = False

    def simple_string(self) -> str:
        keys = ", ".join(k.simple_string() for k in self.keys)
        return f"HashedRelationBroadcastMode(List({keys}),{str(self.is_null_aware).lower()})"


@node
class IdentityBroadcastMode(BroadcastMode):
    """Broadcast the rows as they are (the build side of a broadcast nested loop join)."""

    def simple_string(self) -> str:
        return "IdentityBroadcastMode"


# ---------------------------------------------------------------------------------------------
# Distributions


class Distribution(_PhysicalProperty):
    """A requirement on how a child's rows are spread over partitions."""

    __slots__ = ()

    @property
    def required_num_partitions(self) -> int | None:
        return None

    def create_partitioning(self, num_partitions: int) -> "Partitioning":
        """A partitioning satisfying this distribution with ``num_partitions`` partitions
        (every concrete distribution overrides this)."""
        raise NotImplementedError(type(self).__name__)  # abstract


@node
class UnspecifiedDistribution(Distribution):
    """No requirement."""

    def create_partitioning(self, num_partitions: int) -> "Partitioning":
        # as Spark's IllegalStateException: EnsureRequirements never asks for one
        raise InternalError("UnspecifiedDistribution does not have default partitioning")


@node
class AllTuples(Distribution):
    """Every row in a single partition."""

    @property
    def required_num_partitions(self) -> int | None:
        return 1

    def create_partitioning(self, num_partitions: int) -> "Partitioning":
        return SinglePartition()


@node
class ClusteredDistribution(Distribution):
    """Rows with equal ``clustering`` values are in the same partition."""

    clustering: tuple[Expression, ...]
    required_num_partitions: int | None = field(default=None)  # type: ignore[assignment]

    def create_partitioning(self, num_partitions: int) -> "Partitioning":
        return HashPartitioning(self.clustering, num_partitions)

    def simple_string(self) -> str:
        c = ", ".join(e.simple_string() for e in self.clustering)
        return f"ClusteredDistribution([{c}], {self.required_num_partitions})"


@node
class StatefulOpClusteredDistribution(Distribution):
    """What a stateful streaming operator requires of each child (Spark's
    ``StatefulOpClusteredDistribution``): hash-partitioned on exactly ``expressions``, in order,
    into exactly ``num_partitions`` partitions, so a key's rows reach the partition holding its
    state in every micro-batch."""

    expressions: tuple[Expression, ...]
    num_partitions: int

    @property
    def required_num_partitions(self) -> int | None:
        return self.num_partitions

    def create_partitioning(self, num_partitions: int) -> "Partitioning":
        return HashPartitioning(self.expressions, self.num_partitions)

    def simple_string(self) -> str:
        c = ", ".join(e.simple_string() for e in self.expressions)
        return f"StatefulOpClusteredDistribution([{c}], {self.num_partitions})"


@node
class BroadcastDistribution(Distribution):
    """The whole relation available to every partition, materialized by ``mode``."""

    mode: BroadcastMode

    @property
    def required_num_partitions(self) -> int | None:
        return 1

    def create_partitioning(self, num_partitions: int) -> "Partitioning":
        return BroadcastPartitioning(self.mode)

    def simple_string(self) -> str:
        return f"BroadcastDistribution({self.mode.simple_string()})"


@node
class OrderedDistribution(Distribution):
    """Rows range-partitioned by ``ordering`` (partition i holds keys <= partition i+1's)."""

    ordering: tuple[SortOrder, ...]

    def create_partitioning(self, num_partitions: int) -> "Partitioning":
        return RangePartitioning(self.ordering, num_partitions)

    def simple_string(self) -> str:
        return f"OrderedDistribution([{', '.join(o.simple_string() for o in self.ordering)}])"


# ---------------------------------------------------------------------------------------------
# Partitionings


class Partitioning(_PhysicalProperty):
    """How an operator's output is split into partitions."""

    __slots__ = ()

    num_partitions: int  # a dataclass field or a property in each subclass

    def satisfies(self, required: Distribution) -> bool:
        """Spark's ``Partitioning.satisfies``: Unspecified always; AllTuples when there is one
        partition; otherwise the subclass's ``_satisfies0``."""
        if isinstance(required, UnspecifiedDistribution):
            return True
        if isinstance(required, AllTuples):
            return self.num_partitions == 1
        return self._satisfies0(required)

    def _satisfies0(self, required: Distribution) -> bool:
        return False


@node
class UnknownPartitioning(Partitioning):
    """``num_partitions`` partitions with no known relation between rows and partitions."""

    num_partitions: int = 0

    def simple_string(self) -> str:
        return f"UnknownPartitioning({self.num_partitions})"


@node
class RoundRobinPartitioning(Partitioning):
    """Rows dealt round-robin (``repartition(n)``)."""

    num_partitions: int

    def simple_string(self) -> str:
        return f"RoundRobinPartitioning({self.num_partitions})"


@node
class SinglePartition(Partitioning):
    """One partition holding every row."""

    @property
    def num_partitions(self) -> int:
        return 1

    def _satisfies0(self, required: Distribution) -> bool:
        if isinstance(required, StatefulOpClusteredDistribution):
            return required.num_partitions == 1
        return not isinstance(required, BroadcastDistribution)

    def simple_string(self) -> str:
        return "SinglePartition"


@node
class HashPartitioning(Partitioning):
    """Partition = pmod(murmur3(expressions), n)."""

    expressions: tuple[Expression, ...]
    num_partitions: int

    def _satisfies0(self, required: Distribution) -> bool:
        if isinstance(required, ClusteredDistribution):
            if required.required_num_partitions not in (None, self.num_partitions):
                return False
            return bool(self.expressions) and all(
                _contains_semantic(required.clustering, e) for e in self.expressions)
        if isinstance(required, StatefulOpClusteredDistribution):
            return (self.num_partitions == required.num_partitions
                    and len(self.expressions) == len(required.expressions)
                    and all(a.semantic_equals(b)
                            for a, b in zip(self.expressions, required.expressions)))
        return False

    def simple_string(self) -> str:
        exprs = ", ".join(e.simple_string() for e in self.expressions)
        return f"hashpartitioning({exprs}, {self.num_partitions})"


@node
class RangePartitioning(Partitioning):
    """Rows range-partitioned by ``ordering`` into ``n`` partitions (sampled bounds)."""

    ordering: tuple[SortOrder, ...]
    num_partitions: int

    def _satisfies0(self, required: Distribution) -> bool:
        if isinstance(required, OrderedDistribution):
            req = required.ordering
            m = min(len(req), len(self.ordering))
            return all(a.semantic_equals(b) for a, b in zip(req[:m], self.ordering[:m]))
        if isinstance(required, ClusteredDistribution):
            if required.required_num_partitions not in (None, self.num_partitions):
                return False
            return all(_contains_semantic(required.clustering, o.child) for o in self.ordering)
        return False

    def simple_string(self) -> str:
        o = ", ".join(x.simple_string() for x in self.ordering)
        return f"rangepartitioning({o}, {self.num_partitions})"


@node
class BroadcastPartitioning(Partitioning):
    """Every partition sees all rows, materialized by ``mode``."""

    mode: BroadcastMode

    @property
    def num_partitions(self) -> int:
        return 1

    def _satisfies0(self, required: Distribution) -> bool:
        return isinstance(required, BroadcastDistribution) and required.mode == self.mode

    def simple_string(self) -> str:
        return f"broadcast({self.mode.simple_string()})"


@node
class PartitioningCollection(Partitioning):
    """Several partitionings that all describe the output (an inner join's output is partitioned
    like both children)."""

    partitionings: tuple[Partitioning, ...]

    @property
    def num_partitions(self) -> int:
        return self.partitionings[0].num_partitions

    def satisfies(self, required: Distribution) -> bool:
        return any(p.satisfies(required) for p in self.partitionings)

    def simple_string(self) -> str:
        return "(" + " or ".join(p.simple_string() for p in self.partitionings) + ")"
