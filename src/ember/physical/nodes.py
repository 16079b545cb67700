"""Physical plan nodes (Spark's ``SparkPlan`` operators), pure data.

Every node is a frozen ``@node`` tree like the logical plans; it knows its ``output``, its
``output_partitioning`` / ``output_ordering`` and what it requires of its children
(``required_child_distribution`` / ``required_child_ordering``, one entry per child), and prints
its EXPLAIN line as Spark 4 does (``simple_string()``: the class name without ``Exec`` and Spark's
arguments).  Nodes do not execute: runtimes (``ember.runtime.local``) visit them.

Plan ids: Spark prints ``[plan_id=N]`` after exchanges, N being a per-JVM counter.  Ember's
exchanges take a fresh id from a process-wide counter when built (``plan_id`` field, excluded from
equality, kept by ``copy``/``with_children``), so ids are unique and stable within one plan but,
as in Spark, differ between runs.
"""

from __future__ import annotations

import itertools
from dataclasses import field
from enum import Enum
from typing import Any, ClassVar

import pyarrow as pa

from ember.errors import InternalError
from ember.expressions.base import (
    Alias, AttributeReference, Expression, NamedExpression, SortOrder, bind_references,
)
from ember.physical.partitioning import (
    AllTuples, BroadcastDistribution, BroadcastMode, BroadcastPartitioning, ClusteredDistribution,
    Distribution, HashedRelationBroadcastMode, HashPartitioning, OrderedDistribution, Partitioning,
    PartitioningCollection, RangePartitioning, SinglePartition, UnknownPartitioning,
    UnspecifiedDistribution, IdentityBroadcastMode, StatefulOpClusteredDistribution,
)
from ember.plans.logical.join_type import (  # BuildSide is also imported from here
    BuildSide,
    JoinType,
    join_output,
    join_type_string,
)
from ember.plans.logical.nodes import (
    FileRelation,
    sample_string,
    cached_output,
    window_args_string,
    intersect_output,
    node_expressions,
    union_output,
)
from ember.plans.query_plan import INPUT_ID, QueryPlan
from ember.trees import TreeNode, node, field_names

_plan_ids = itertools.count(1)


def new_plan_id() -> int:
    """A fresh exchange id (printed as ``[plan_id=N]``)."""
    return next(_plan_ids)


def _list(exprs: tuple[Expression, ...] | list[Expression]) -> str:
    return "[" + ", ".join(e.simple_string() for e in exprs) + "]"


def _list_compact(exprs: tuple[Expression, ...] | list[Expression]) -> str:
    return "[" + ",".join(e.simple_string() for e in exprs) + "]"


def _to_attribute(e: Expression) -> AttributeReference:
    if isinstance(e, NamedExpression):
        return e.to_attribute()
    raise InternalError(f"{e.simple_string()} is not a named expression")


class AggregateMode(Enum):
    """Spark's aggregate modes: which part of the aggregation an operator performs."""

    PARTIAL = "Partial"
    PARTIAL_MERGE = "PartialMerge"
    FINAL = "Final"
    COMPLETE = "Complete"

    def __str__(self) -> str:
        return self.value


class SparkPlan(QueryPlan):
    """Base of physical plan nodes."""

    __slots__ = ("_out",)
    child_base: ClassVar[type]

    # -- schema ---------------------------------------------------------------------------------
    @property
    def output(self) -> tuple[AttributeReference, ...]:
        return cached_output(self)

    def _compute_output(self) -> tuple[AttributeReference, ...]:
        kids = self.children
        if len(kids) == 1:
            return kids[0].output
        raise InternalError(f"{self.node_name}.output is not defined")

    @property
    def output_set(self) -> frozenset[int]:
        return frozenset(a.id for a in self.output)

    # -- physical properties --------------------------------------------------------------------
    @property
    def output_partitioning(self) -> Partitioning:
        return UnknownPartitioning(0)

    @property
    def output_ordering(self) -> tuple[SortOrder, ...]:
        return ()

    @property
    def required_child_distribution(self) -> tuple[Distribution, ...]:
        return tuple(UnspecifiedDistribution() for _ in self.children)

    @property
    def required_child_ordering(self) -> tuple[tuple[SortOrder, ...], ...]:
        return tuple(() for _ in self.children)

    # -- expressions ----------------------------------------------------------------------------
    def expressions(self) -> tuple[Expression, ...]:
        return node_expressions(self)

    # -- canonical form (QueryPlan) -------------------------------------------------------------
    def canonicalize_field(self, value: Any, normalize: Any) -> Any:
        # a partitioning, distribution or broadcast mode: its expressions normalized
        if isinstance(value, Partitioning | Distribution | BroadcastMode):
            return map_property_expressions(value, normalize)
        return QueryPlan.canonicalize_field(self, value, normalize)

    # -- display --------------------------------------------------------------------------------
    @property
    def node_name(self) -> str:
        name = type(self).__name__
        return name[:-4] if name.endswith("Exec") else name

    def simple_string(self) -> str:
        return self.node_name


SparkPlan.child_base = SparkPlan


# ---------------------------------------------------------------------------------------------
# Alias-aware partitioning / ordering (Spark's AliasAwareOutputExpression)


def _alias_map(project_list: tuple[Expression, ...]) -> dict[Any, AttributeReference]:
    """Canonical child expression -> output attribute, for aliased items of a projection."""
    m: dict[Any, AttributeReference] = {}
    for e in project_list:
        if isinstance(e, Alias):
            m.setdefault(e.child.canonicalized, e.to_attribute())
    return m


def _project_expr(e: Expression, project_list: tuple[Expression, ...],
                  out_ids: frozenset[int]) -> Expression | None:
    """``e`` (over the child's output) rewritten over the projection's output, or None."""
    aliases = _alias_map(project_list)
    hit = aliases.get(e.canonicalized)
    if hit is not None:
        return hit
    if e.references and e.references <= out_ids:
        return e
    return None


def project_partitioning(p: Partitioning, project_list: tuple[Expression, ...],
                         output: tuple[AttributeReference, ...]) -> Partitioning:
    """The child's partitioning seen through a projection: expressions that are projected (or
    aliased) survive; a hash/range partitioning on something not projected becomes unknown."""
    out_ids = frozenset(a.id for a in output)
    match p:
        case HashPartitioning(expressions=exprs, num_partitions=n):
            new = [_project_expr(e, project_list, out_ids) for e in exprs]
            if any(x is None for x in new):
                return UnknownPartitioning(n)
            return HashPartitioning(tuple(new), n)  # type: ignore[arg-type]
        case RangePartitioning(ordering=ordering, num_partitions=n):
            new_o = []
            for o in ordering:
                c = _project_expr(o.child, project_list, out_ids)
                if c is None:
                    return UnknownPartitioning(n)
                new_o.append(o.copy(child=c))
            return RangePartitioning(tuple(new_o), n)
        case PartitioningCollection(partitionings=ps):
            kept = tuple(q for q in (project_partitioning(x, project_list, output) for x in ps)
                         if not isinstance(q, UnknownPartitioning))
            if not kept:
                return UnknownPartitioning(p.num_partitions)
            return kept[0] if len(kept) == 1 else PartitioningCollection(kept)
        case _:
            return p


def project_ordering(ordering: tuple[SortOrder, ...], project_list: tuple[Expression, ...],
                     output: tuple[AttributeReference, ...]) -> tuple[SortOrder, ...]:
    """The longest prefix of the child's ordering expressible over the projection's output."""
    out_ids = frozenset(a.id for a in output)
    kept: list[SortOrder] = []
    for o in ordering:
        c = _project_expr(o.child, project_list, out_ids)
        if c is None:
            break
        kept.append(o.copy(child=c))
    return tuple(kept)


# ---------------------------------------------------------------------------------------------
# Leaves


class LeafExecNode(SparkPlan):
    __slots__ = ()


class UnaryExecNode(SparkPlan):
    __slots__ = ()

    @property
    def output_partitioning(self) -> Partitioning:
        return self.children[0].output_partitioning


class OrderPreservingUnaryExecNode(UnaryExecNode):
    """A unary operator that keeps its child's rows in order (filters, limits): it reports the
    child's ordering as its own."""

    __slots__ = ()

    @property
    def output_ordering(self) -> tuple[SortOrder, ...]:
        return self.children[0].output_ordering


@node
class LocalTableScanExec(LeafExecNode):
    """Rows held in memory (``LocalRelation``): ``LocalTableScan [a#1, b#2]``."""

    output: tuple[AttributeReference, ...] = field()  # type: ignore[assignment]
    data: pa.Table | None = field(default=None, compare=False)

    @property
    def output_partitioning(self) -> Partitioning:
        return UnknownPartitioning(0)

    def simple_string(self) -> str:
        if self.data is not None and self.data.num_rows == 0:
            return f"LocalTableScan <empty>, {_list(self.output)}"
        return f"LocalTableScan {_list(self.output)}"


@node
class InMemoryTableScanExec(LocalTableScanExec):
    """The cached rows of an ``InMemoryRelation`` (``df.cache()``) on the local runtime:
    ``InMemoryTableScan [a#1, b#2]``, scanned as a ``LocalTableScan``."""

    def simple_string(self) -> str:
        return f"InMemoryTableScan {_list(self.output)}"


@node
class FileSourceScanExec(LeafExecNode):
    """A Parquet/CSV scan: ``FileScan parquet [a#1,b#2] ...``."""

    relation: FileRelation
    output: tuple[AttributeReference, ...] = field()  # type: ignore[assignment]
    data_filters: tuple[Expression, ...] = ()
    #: predicates over the relation's partition columns only: the runtimes read only the files
    #: of the partition directories where they hold (``ember.execution.file_index``)
    partition_filters: tuple[Expression, ...] = ()

    @property
    def node_name(self) -> str:
        return f"FileScan {self.relation.format}"

    def canonical_inputs(self) -> tuple[AttributeReference, ...]:
        # A column read is numbered by its ordinal in the relation's full column list, so the
        # canonical form says which columns of which files are read (Spark's canonical
        # FileSourceScanExec keeps its relation and requiredSchema likewise): two scans of one
        # table reading other columns of the same types never match.
        return self.relation.attrs

    def canonicalize_field(self, value: Any, normalize: Any) -> Any:
        if isinstance(value, FileRelation):  # its names are the file columns: kept
            return value.copy(attrs=tuple(AttributeReference(a.name, a.dtype, True, INPUT_ID - i)
                                          for i, a in enumerate(value.attrs)))
        return SparkPlan.canonicalize_field(self, value, normalize)

    def simple_string(self) -> str:
        fmt = {"parquet": "Parquet", "csv": "CSV", "json": "JSON", "orc": "ORC"}.get(
            self.relation.format, self.relation.format)
        paths = len(self.relation.paths)
        parts = {a.id for a in self.relation.partition_attrs}
        schema = ",".join(f"{a.name}:{a.data_type.simple_string()}" for a in self.output
                          if a.id not in parts)
        batched = "false" if self.relation.format in ("csv", "json") else "true"
        return (f"FileScan {self.relation.format} {_list_compact(self.output)} "
                f"Batched: {batched}, "
                f"DataFilters: {_list(self.data_filters)}, Format: {fmt}, "
                f"Location: InMemoryFileIndex({paths} paths)"
                f"[{', '.join(self.relation.paths)}], "
                f"PartitionFilters: {_list(self.partition_filters)}, "
                f"ReadSchema: struct<{schema}>")


@node
class SparkDataFrameScanExec(LeafExecNode):
    """The rows of a PySpark DataFrame (``SparkDataFrameRelation``), ``output`` being the
    columns read (in the frame's column order; the planner prunes the columns a Project above
    does not use): ``Scan ExistingRDD[a#1,b#2]`` as Spark prints a ``LogicalRDD``.  ``frame`` takes no part in equality and is never pickled (it is a
    source: the Spark runtime turns it into an RDD on the driver)."""

    frame: Any = field(compare=False)
    output: tuple[AttributeReference, ...] = field()  # type: ignore[assignment]
    #: positions of ``output``'s columns in the frame (None: every column, in order)
    ordinals: tuple[int, ...] | None = None

    @property
    def output_partitioning(self) -> Partitioning:
        return UnknownPartitioning(0)

    @property
    def node_name(self) -> str:
        return "Scan ExistingRDD"

    def selected_frame(self) -> Any:
        """The PySpark DataFrame of exactly ``output``'s columns (positional: a frame may
        repeat a column name)."""
        frame = self.frame
        if self.ordinals is None:
            return frame
        names = [f"_{i}" for i in range(len(frame.columns))]
        return frame.toDF(*names).select(*[names[i] for i in self.ordinals])

    def __reduce__(self) -> tuple[Any, ...]:
        raise InternalError("SparkDataFrameScanExec (a PySpark DataFrame) cannot be pickled; "
                            "it is read on the driver only")

    def simple_string(self) -> str:
        return f"Scan ExistingRDD{_list_compact(self.output)}"



@node
class InMemorySparkScanExec(SparkDataFrameScanExec):
    """The cached rows of an ``InMemoryRelation`` on the Spark runtime: a PySpark DataFrame
    persisted with Spark's cache, read as the Spark job's source
    (``InMemoryTableScan [a#1, b#2]``)."""

    def simple_string(self) -> str:
        return f"InMemoryTableScan {_list(self.output)}"

@node
class RangeExec(LeafExecNode):
    """``spark.range(start, end, step, num_slices)``: ``Range (0, 10, step=1, splits=2)``."""

    start: int
    end: int
    step: int
    num_slices: int
    output: tuple[AttributeReference, ...] = field()  # type: ignore[assignment]

    @property
    def output_partitioning(self) -> Partitioning:
        if self.num_slices == 1 and self.end != self.start:
            return SinglePartition()
        return UnknownPartitioning(self.num_slices)

    def simple_string(self) -> str:
        return f"Range ({self.start}, {self.end}, step={self.step}, splits={self.num_slices})"


@node
class OneRowRelationExec(LeafExecNode):
    """One row, no columns (``SELECT 1``): ``Scan OneRowRelation[]``."""

    def _compute_output(self) -> tuple[AttributeReference, ...]:
        return ()

    def simple_string(self) -> str:
        return "Scan OneRowRelation[]"


# ---------------------------------------------------------------------------------------------
# Basic operators


@node
class ProjectExec(UnaryExecNode):
    """``Project [a#1, (b#2 + 1) AS c#3]``."""

    project_list: tuple[Expression, ...]
    child: SparkPlan

    def _compute_output(self) -> tuple[AttributeReference, ...]:
        return tuple(_to_attribute(e) for e in self.project_list)

    @property
    def output_partitioning(self) -> Partitioning:
        return project_partitioning(self.child.output_partitioning, self.project_list, self.output)

    @property
    def output_ordering(self) -> tuple[SortOrder, ...]:
        return project_ordering(self.child.output_ordering, self.project_list, self.output)

    def simple_string(self) -> str:
        return f"Project {_list(self.project_list)}"


@node
class FilterExec(OrderPreservingUnaryExecNode):
    """``Filter (a#1 > 1)``."""

    condition: Expression
    child: SparkPlan

    def simple_string(self) -> str:
        return f"Filter {self.condition.simple_string()}"


@node
class SortExec(UnaryExecNode):
    """``Sort [a#1 ASC NULLS FIRST], true, 0`` (global sorts require range partitioning)."""

    sort_order: tuple[SortOrder, ...]
    is_global: bool
    child: SparkPlan

    @property
    def output_ordering(self) -> tuple[SortOrder, ...]:
        return self.sort_order

    @property
    def required_child_distribution(self) -> tuple[Distribution, ...]:
        if self.is_global:
            return (OrderedDistribution(self.sort_order),)
        return (UnspecifiedDistribution(),)

    def simple_string(self) -> str:
        return f"Sort {_list(self.sort_order)}, {str(self.is_global).lower()}, 0"


@node
class HashAggregateExec(UnaryExecNode):
    """``HashAggregate(keys=[k#1], functions=[sum(v#2)], output=[k#1, sum(v)#3L])``.

    ``required_child_distribution_expressions``: None = no requirement (partial aggregates);
    ``()`` = all tuples in one partition; otherwise clustered on those expressions.

    ``aggregate_modes``: per aggregate expression, its mode when they differ (Spark's modes are
    per ``AggregateExpression``: the third operator of a one-distinct plan merges the regular
    buffers and runs the distinct functions in Partial mode); ``()`` = every one in ``mode``.
    ``initial_input_buffer_offset``: where the buffers of the merged aggregates start in the
    child's output (Spark's ``initialInputBufferOffset``).
    """

    mode: AggregateMode
    grouping_expressions: tuple[Expression, ...]
    aggregate_expressions: tuple[Expression, ...]
    result_expressions: tuple[Expression, ...]
    child: SparkPlan
    required_child_distribution_expressions: tuple[Expression, ...] | None = None
    aggregate_modes: tuple[AggregateMode, ...] = ()
    initial_input_buffer_offset: int = 0
    #: a streaming aggregation's operator (Spark's ``isStreaming``): its clustering is the
    #: state's, ``StatefulOpClusteredDistribution`` into this many partitions (0 until the
    #: micro-batch engine fixes them); None: a batch aggregation
    stateful_num_partitions: int | None = None

    @property
    def modes(self) -> tuple[AggregateMode, ...]:
        """The mode of each aggregate expression, in order."""
        return self.aggregate_modes or tuple(self.mode for _ in self.aggregate_expressions)

    def _compute_output(self) -> tuple[AttributeReference, ...]:
        return tuple(_to_attribute(e) for e in self.result_expressions)

    @property
    def output_partitioning(self) -> Partitioning:
        return project_partitioning(self.child.output_partitioning, self.result_expressions,
                                    self.output)

    @property
    def required_child_distribution(self) -> tuple[Distribution, ...]:
        req = self.required_child_distribution_expressions
        if req is None:
            return (UnspecifiedDistribution(),)
        if not req:
            return (AllTuples(),)
        if self.stateful_num_partitions:
            return (StatefulOpClusteredDistribution(req, self.stateful_num_partitions),)
        return (ClusteredDistribution(req),)

    def _function_string(self, e: Expression, mode: AggregateMode | None = None) -> str:
        s = e.simple_string()
        mode = self.mode if mode is None else mode
        if mode is AggregateMode.PARTIAL:
            return "partial_" + s
        if mode is AggregateMode.PARTIAL_MERGE:
            return "merge_" + s
        return s

    def simple_string(self) -> str:
        fns = ", ".join(self._function_string(e, m)
                        for e, m in zip(self.aggregate_expressions, self.modes))
        return (f"HashAggregate(keys={_list(self.grouping_expressions)}, functions=[{fns}], "
                f"output={_list(self.output)})")


@node
class ExpandExec(UnaryExecNode):
    """``Expand [[a#1, null, 0], [null, b#2, 1]], [a#3, b#4, gid#5]``."""

    projections: tuple[tuple[Expression, ...], ...]
    output: tuple[AttributeReference, ...] = field()  # type: ignore[assignment]
    child: SparkPlan

    @property
    def output_partitioning(self) -> Partitioning:
        return UnknownPartitioning(0)

    def simple_string(self) -> str:
        ps = ", ".join(_list(p) for p in self.projections)
        return f"Expand [{ps}], {_list(self.output)}"


@node
class GenerateExec(UnaryExecNode):
    """``Generate explode(a#1), [id#0], false, [col#5]`` (Spark's ``GenerateExec``): each input
    row followed by the rows its generator yields (``outer``: one NULL row when it yields none)."""

    generator: Expression
    outer: bool
    generator_output: tuple[AttributeReference, ...]
    child: SparkPlan

    def _compute_output(self) -> tuple[AttributeReference, ...]:
        return self.child.output + self.generator_output

    @property
    def output_partitioning(self) -> Partitioning:
        return UnknownPartitioning(0)

    def simple_string(self) -> str:
        return (f"Generate {self.generator.simple_string()}, {_list(self.child.output)}, "
                f"{str(self.outer).lower()}, {_list(self.generator_output)}")


def window_child_requirements(partition_spec: tuple[Expression, ...],
                              order_spec: tuple[SortOrder, ...]
                              ) -> tuple[tuple[Distribution, ...], tuple[tuple[SortOrder, ...], ...]]:
    """What Spark's ``WindowExecBase`` / ``WindowGroupLimitExec`` (Final) require of their
    child: clustered on the partition keys (all tuples in one partition without them), sorted
    by the partition keys ascending, then the order keys."""
    dist: Distribution = (ClusteredDistribution(partition_spec) if partition_spec
                          else AllTuples())
    order = tuple(SortOrder(e, True) for e in partition_spec) + tuple(order_spec)
    return (dist,), (order,)


@node
class WindowExec(UnaryExecNode):
    """``Window [f(x#1) windowspecdefinition(...) AS w#3], [a#1], [b#2 ASC NULLS FIRST]``
    (Spark's ``WindowExec``): appends one column per window expression to the child's rows,
    which arrive clustered on ``partition_spec`` and sorted by it and ``order_spec``."""

    window_expressions: tuple[Expression, ...]
    partition_spec: tuple[Expression, ...]
    order_spec: tuple[SortOrder, ...]
    child: SparkPlan

    def _compute_output(self) -> tuple[AttributeReference, ...]:
        return self.child.output + tuple(_to_attribute(e) for e in self.window_expressions)

    @property
    def output_ordering(self) -> tuple[SortOrder, ...]:
        return self.child.output_ordering

    @property
    def required_child_distribution(self) -> tuple[Distribution, ...]:
        return window_child_requirements(self.partition_spec, self.order_spec)[0]

    @property
    def required_child_ordering(self) -> tuple[tuple[SortOrder, ...], ...]:
        return window_child_requirements(self.partition_spec, self.order_spec)[1]

    def simple_string(self) -> str:
        return "Window " + window_args_string(
            self.window_expressions, self.partition_spec, self.order_spec)


class WindowGroupLimitMode(Enum):
    """Spark's ``WindowGroupLimitMode``: ``Partial`` runs before the shuffle on each input
    partition, ``Final`` after it on whole window partitions."""

    PARTIAL = "Partial"
    FINAL = "Final"

    def __str__(self) -> str:
        return self.value


@node
class WindowGroupLimitExec(OrderPreservingUnaryExecNode):
    """``WindowGroupLimit [a#1], [b#2 ASC NULLS FIRST], row_number(), 2, Final`` (Spark's
    ``WindowGroupLimitExec``): keeps the rows of each window partition whose rank-like function
    is at most ``limit``.  Both modes need their input sorted by the partition and order keys;
    only ``Final`` needs the partition's rows together."""

    partition_spec: tuple[Expression, ...]
    order_spec: tuple[SortOrder, ...]
    rank_like_function: Expression
    limit: int
    mode: WindowGroupLimitMode
    child: SparkPlan

    @property
    def required_child_distribution(self) -> tuple[Distribution, ...]:
        if self.mode is WindowGroupLimitMode.PARTIAL:
            return (UnspecifiedDistribution(),)
        return window_child_requirements(self.partition_spec, self.order_spec)[0]

    @property
    def required_child_ordering(self) -> tuple[tuple[SortOrder, ...], ...]:
        return window_child_requirements(self.partition_spec, self.order_spec)[1]

    def simple_string(self) -> str:
        args = window_args_string(self.partition_spec, self.order_spec)
        return (f"WindowGroupLimit {args + ', ' if args else ''}"
                f"{self.rank_like_function.simple_string()}, {self.limit}, {self.mode}")


@node
class UnionExec(SparkPlan):
    """``Union``: the children's rows, one after the other (output typed like the first child,
    nullable where any child is)."""

    inputs: tuple[SparkPlan, ...]

    def _compute_output(self) -> tuple[AttributeReference, ...]:
        return union_output(self.inputs)

    def simple_string(self) -> str:
        return "Union"


@node
class GlobalLimitExec(OrderPreservingUnaryExecNode):
    """``GlobalLimit 10, 0``: rows ``[offset, limit)`` of the single input partition (Spark:
    ``limit`` counts from the first row, i.e. SQL ``LIMIT l OFFSET o`` is ``limit = l + o``;
    -1 = no limit)."""

    limit: int
    child: SparkPlan
    offset: int = 0

    @property
    def required_child_distribution(self) -> tuple[Distribution, ...]:
        return (AllTuples(),)

    def simple_string(self) -> str:
        return f"GlobalLimit {self.limit}, {self.offset}"


@node
class LocalLimitExec(OrderPreservingUnaryExecNode):
    """``LocalLimit 10``: at most ``limit`` rows per partition."""

    limit: int
    child: SparkPlan

    def simple_string(self) -> str:
        return f"LocalLimit {self.limit}"


@node
class CollectLimitExec(UnaryExecNode):
    """``CollectLimit 10`` / ``CollectLimit 4, 1``: a limit at the root of the plan (gathers into
    one partition) keeping rows ``[offset, limit)`` -- ``limit`` counts from the first row (SQL
    ``LIMIT 3 OFFSET 1`` is ``limit=4, offset=1``); -1 means no limit (OFFSET alone)."""

    limit: int
    child: SparkPlan
    offset: int = 0

    @property
    def output_partitioning(self) -> Partitioning:
        return SinglePartition()

    def simple_string(self) -> str:
        if self.offset > 0:
            return f"CollectLimit {self.limit}, {self.offset}"
        return f"CollectLimit {self.limit}"


@node
class TakeOrderedAndProjectExec(UnaryExecNode):
    """``TakeOrderedAndProject(limit=10, orderBy=[a#1 ASC NULLS FIRST], output=[a#1,b#2])``:
    rows ``[offset, limit)`` of the input ordered by ``sort_order`` (``limit`` counts from the
    first row, as in Spark), then ``project_list``."""

    limit: int
    sort_order: tuple[SortOrder, ...]
    project_list: tuple[Expression, ...]
    child: SparkPlan
    offset: int = 0

    def _compute_output(self) -> tuple[AttributeReference, ...]:
        return tuple(_to_attribute(e) for e in self.project_list)

    @property
    def output_partitioning(self) -> Partitioning:
        return SinglePartition()

    @property
    def output_ordering(self) -> tuple[SortOrder, ...]:
        return self.sort_order

    def simple_string(self) -> str:
        off = f"offset={self.offset}, " if self.offset > 0 else ""
        return (f"TakeOrderedAndProject(limit={self.limit}, {off}orderBy={_list(self.sort_order)}, "
                f"output={_list_compact(self.project_list)})")


@node
class SetOperationExec(SparkPlan):
    """Ember-only: INTERSECT ALL / EXCEPT ALL (``kind`` ``"intersect"`` | ``"except"``), which
    Spark rewrites with a Generate operator that Ember lacks.  Runs on all rows of both sides."""

    kind: str
    is_all: bool
    left: SparkPlan
    right: SparkPlan

    def _compute_output(self) -> tuple[AttributeReference, ...]:
        if self.kind == "intersect":
            return intersect_output(self.left, self.right)
        return self.left.output

    @property
    def required_child_distribution(self) -> tuple[Distribution, ...]:
        return (AllTuples(), AllTuples())

    @property
    def output_partitioning(self) -> Partitioning:
        return SinglePartition()

    def simple_string(self) -> str:
        return f"SetOperation {self.kind}{' all' if self.is_all else ''}"


# ---------------------------------------------------------------------------------------------
# Exchanges


@node
class ShuffleExchangeExec(UnaryExecNode):
    """``Exchange hashpartitioning(k#1L, 200), ENSURE_REQUIREMENTS, [plan_id=5]``."""

    output_partitioning: Partitioning = field()  # type: ignore[assignment]
    child: SparkPlan
    shuffle_origin: str = "ENSURE_REQUIREMENTS"
    plan_id: int = field(default_factory=new_plan_id, compare=False)

    def simple_string(self) -> str:
        return (f"Exchange {self.output_partitioning.simple_string()}, {self.shuffle_origin}, "
                f"[plan_id={self.plan_id}]")


@node
class SampleExec(UnaryExecNode):
    """``Sample 0.0, 0.5, false, 42`` (Spark's ``SampleExec``; see the logical ``Sample``)."""

    lower_bound: float
    upper_bound: float
    with_replacement: bool
    seed: int
    child: SparkPlan

    def simple_string(self) -> str:
        return sample_string(self)


@node
class CoalesceExec(UnaryExecNode):
    """``Coalesce 2``: the child's partitions merged, adjacent ones together, into at most
    ``num_partitions`` without a shuffle (Spark's ``CoalesceExec``; an RDD ``coalesce`` on
    the Spark runtime)."""

    num_partitions: int
    child: SparkPlan

    @property
    def output_partitioning(self) -> Partitioning:
        if self.num_partitions == 1:
            return SinglePartition()
        return UnknownPartitioning(self.num_partitions)

    def simple_string(self) -> str:
        return f"Coalesce {self.num_partitions}"


@node
class BroadcastExchangeExec(UnaryExecNode):
    """``BroadcastExchange HashedRelationBroadcastMode(List(input[0, bigint, false]),false),
    [plan_id=7]``."""

    mode: BroadcastMode
    child: SparkPlan
    plan_id: int = field(default_factory=new_plan_id, compare=False)

    @property
    def output_partitioning(self) -> Partitioning:
        return BroadcastPartitioning(self.mode)

    def simple_string(self) -> str:
        return f"BroadcastExchange {self.mode.simple_string()}, [plan_id={self.plan_id}]"


# ---------------------------------------------------------------------------------------------
# Joins


class JoinExec(SparkPlan):
    """Shared parts of the join operators."""

    __slots__ = ()

    def _compute_output(self) -> tuple[AttributeReference, ...]:
        return join_output(self.join_type, self.left, self.right,  # type: ignore[attr-defined]
                           self.existence_attr)  # type: ignore[attr-defined]

    def _keys_and_type(self) -> list[str]:
        """Spark's leading arguments of an equi-join: ``[lk...], [rk...], JoinType``."""
        return [_list(self.left_keys), _list(self.right_keys),  # type: ignore[attr-defined]
                self._type_string()]

    def _type_string(self) -> str:
        return join_type_string(self.join_type, self.existence_attr)  # type: ignore[attr-defined]

    def _join_string(self, head: list[str], tail: tuple[str, ...] = ()) -> str:
        """``<NodeName> head..., condition (when there is one), tail...``."""
        cond = self.condition  # type: ignore[attr-defined]
        parts = head + ([cond.simple_string()] if cond is not None else []) + list(tail)
        return f"{self.node_name} " + ", ".join(parts)


def _broadcast_build(build_side: BuildSide, mode: BroadcastMode) -> tuple[Distribution, ...]:
    """Required child distributions of a broadcast join: ``mode`` on the build side."""
    if build_side is BuildSide.LEFT:
        return (BroadcastDistribution(mode), UnspecifiedDistribution())
    return (UnspecifiedDistribution(), BroadcastDistribution(mode))


class HashJoinExec(JoinExec):
    """Shared parts of broadcast and shuffled hash joins."""

    __slots__ = ()

    @property
    def build_plan(self) -> SparkPlan:
        return self.left if self.build_side is BuildSide.LEFT else self.right  # type: ignore

    @property
    def streamed_plan(self) -> SparkPlan:
        return self.right if self.build_side is BuildSide.LEFT else self.left  # type: ignore

    @property
    def build_keys(self) -> tuple[Expression, ...]:
        return self.left_keys if self.build_side is BuildSide.LEFT else self.right_keys  # type: ignore

    @property
    def streamed_keys(self) -> tuple[Expression, ...]:
        return self.right_keys if self.build_side is BuildSide.LEFT else self.left_keys  # type: ignore

    def _hash_join_partitioning(self) -> Partitioning:
        """Spark's HashJoin.outputPartitioning: the streamed side's partitioning for inner-like
        joins (and the semi/anti/existence/outer joins that stream their preserved side)."""
        jt: JoinType = self.join_type  # type: ignore[attr-defined]
        if jt.outputs_unpadded(self.build_side.other):  # type: ignore[attr-defined]
            return self.streamed_plan.output_partitioning
        return UnknownPartitioning(self.streamed_plan.output_partitioning.num_partitions)


@node
class BroadcastHashJoinExec(HashJoinExec):
    """``BroadcastHashJoin [k#1L], [k#7L], Inner, BuildRight, false, false``: the build side is
    broadcast as a hashed relation, the other side streams through it."""

    left_keys: tuple[Expression, ...]
    right_keys: tuple[Expression, ...]
    join_type: JoinType
    build_side: BuildSide
    condition: Expression | None
    left: SparkPlan
    right: SparkPlan
    is_null_aware_anti_join: bool = False
    existence_attr: AttributeReference | None = None

    @property
    def output_partitioning(self) -> Partitioning:
        return self._hash_join_partitioning()

    @property
    def required_child_distribution(self) -> tuple[Distribution, ...]:
        keys = tuple(bind_references(k, self.build_plan.output) for k in self.build_keys)
        return _broadcast_build(self.build_side,
                                HashedRelationBroadcastMode(keys, self.is_null_aware_anti_join))

    def simple_string(self) -> str:
        return self._join_string(self._keys_and_type() + [str(self.build_side)],
                                 (str(self.is_null_aware_anti_join).lower(), "false"))


@node
class ShuffledHashJoinExec(HashJoinExec):
    """``ShuffledHashJoin [k#1L], [k#7L], FullOuter, BuildLeft``: both sides hash-partitioned on
    the keys; each partition of the build side becomes a hashed relation."""

    left_keys: tuple[Expression, ...]
    right_keys: tuple[Expression, ...]
    join_type: JoinType
    build_side: BuildSide
    condition: Expression | None
    left: SparkPlan
    right: SparkPlan
    existence_attr: AttributeReference | None = None

    @property
    def output_partitioning(self) -> Partitioning:
        return shuffled_join_partitioning(self.join_type, self.left, self.right)

    @property
    def required_child_distribution(self) -> tuple[Distribution, ...]:
        return (ClusteredDistribution(self.left_keys), ClusteredDistribution(self.right_keys))

    def simple_string(self) -> str:
        return self._join_string(self._keys_and_type() + [str(self.build_side)])


def shuffled_join_partitioning(join_type: JoinType, left: SparkPlan,
                               right: SparkPlan) -> Partitioning:
    """Spark's ShuffledJoin.outputPartitioning: that of each side whose columns come out as
    they are."""
    kept = [p.output_partitioning for p, side in ((left, BuildSide.LEFT), (right, BuildSide.RIGHT))
            if join_type.outputs_unpadded(side)]
    if len(kept) == 2:
        return PartitioningCollection(tuple(kept))
    if kept:
        return kept[0]
    return UnknownPartitioning(left.output_partitioning.num_partitions)


@node
class SortMergeJoinExec(JoinExec):
    """``SortMergeJoin [k#1L], [k#7L], Inner, (v#2L > w#8L)``: both sides clustered and sorted
    on the keys."""

    left_keys: tuple[Expression, ...]
    right_keys: tuple[Expression, ...]
    join_type: JoinType
    condition: Expression | None
    left: SparkPlan
    right: SparkPlan
    existence_attr: AttributeReference | None = None

    @property
    def output_partitioning(self) -> Partitioning:
        return shuffled_join_partitioning(self.join_type, self.left, self.right)

    @property
    def required_child_distribution(self) -> tuple[Distribution, ...]:
        return (ClusteredDistribution(self.left_keys), ClusteredDistribution(self.right_keys))

    @property
    def required_child_ordering(self) -> tuple[tuple[SortOrder, ...], ...]:
        return (tuple(SortOrder(k, True) for k in self.left_keys),
                tuple(SortOrder(k, True) for k in self.right_keys))

    @property
    def output_ordering(self) -> tuple[SortOrder, ...]:
        jt = self.join_type
        if jt.outputs_unpadded(BuildSide.LEFT):
            return tuple(SortOrder(k, True) for k in self.left_keys)
        if jt.outputs_unpadded(BuildSide.RIGHT):
            return tuple(SortOrder(k, True) for k in self.right_keys)
        return ()

    def simple_string(self) -> str:
        return self._join_string(self._keys_and_type())


@node
class BroadcastNestedLoopJoinExec(JoinExec):
    """``BroadcastNestedLoopJoin BuildRight, LeftOuter, (a#1 < b#2)``: the build side is
    broadcast as is; every streamed row is compared with every built row."""

    left: SparkPlan
    right: SparkPlan
    build_side: BuildSide
    join_type: JoinType
    condition: Expression | None
    existence_attr: AttributeReference | None = None

    @property
    def output_partitioning(self) -> Partitioning:
        if self.join_type.outputs_unpadded(self.build_side.other):
            return (self.left if self.build_side is BuildSide.RIGHT else self.right
                    ).output_partitioning
        return UnknownPartitioning(0)

    @property
    def required_child_distribution(self) -> tuple[Distribution, ...]:
        return _broadcast_build(self.build_side, IdentityBroadcastMode())

    def simple_string(self) -> str:
        return self._join_string([str(self.build_side), self._type_string()])


@node
class RangeJoinExec(BroadcastNestedLoopJoinExec):
    """``RangeJoin [BroadcastNestedLoopJoin] BuildRight, Inner, ((x#1 >= lo#2) AND (x#1 <= hi#3))``
    (beyond Spark): a join whose condition bounds the sides both ways
    (:mod:`ember.physical.range_join`), planned where Spark plans the operator named in
    ``replaces`` (``BroadcastNestedLoopJoin`` or ``CartesianProduct``).  Shaped as a broadcast
    nested loop join (same distribution and output); the local runtime enumerates the pairs by
    sort-and-sweep (:mod:`ember.runtime.local.joins.range_join`) instead of every pair."""

    replaces: str = "BroadcastNestedLoopJoin"

    def simple_string(self) -> str:
        # ``RangeJoin [BroadcastNestedLoopJoin] BuildRight, Inner, cond``: a reader of Spark's
        # plans (tests/planning/test_join_selection_vs_spark.py) finds the operator it replaces
        return self._join_string([str(self.build_side), self._type_string()]).replace(
            self.node_name, f"{self.node_name} [{self.replaces}]", 1)


@node
class CartesianProductExec(JoinExec):
    """``CartesianProduct (a#1 < b#2)``: every pair of partitions (inner joins only)."""

    left: SparkPlan
    right: SparkPlan
    condition: Expression | None

    @property
    def join_type(self) -> JoinType:
        return JoinType.INNER

    @property
    def existence_attr(self) -> None:
        return None

    @property
    def output_partitioning(self) -> Partitioning:
        return UnknownPartitioning(self.left.output_partitioning.num_partitions
                                   * self.right.output_partitioning.num_partitions)

    def simple_string(self) -> str:
        if self.condition is None:
            return "CartesianProduct"
        return self._join_string([])


def aggregate_result_attribute(agg: Expression) -> AttributeReference:
    """The attribute holding an ``AggregateExpression``'s value in a ``HashAggregateExec``'s
    ``result_expressions`` (Spark's ``resultAttribute``: the aggregate's id, its type)."""
    return AttributeReference(agg.simple_string(), agg.data_type, agg.nullable,
                              agg.id)  # type: ignore[attr-defined]


# ---------------------------------------------------------------------------------------------
# Exchange reuse


def map_property_expressions(value: Any, fn: Any) -> Any:
    """``value`` -- a partitioning, distribution or broadcast mode, an expression, or a tuple of
    them -- with ``fn`` applied to every expression it holds (other fields unchanged; the same
    object when nothing changed)."""

    if isinstance(value, Expression):
        return fn(value)
    if isinstance(value, tuple):
        new = tuple(map_property_expressions(v, fn) for v in value)
        return value if all(a is b for a, b in zip(value, new)) else new
    if isinstance(value, Partitioning | Distribution | BroadcastMode):
        changes = {}
        for name in field_names(type(value)):
            old = getattr(value, name)
            new = map_property_expressions(old, fn)
            if new is not old:
                changes[name] = new
        return value.copy(**changes) if changes else value
    return value


@node
class ReusedExchangeExec(LeafExecNode):
    """A second reader of an exchange that an identical subtree already computes (Spark's
    ``ReusedExchangeExec``, made by :mod:`ember.planning.reuse_exchange`):
    ``ReusedExchange [l_orderkey#9L, sum#12, isEmpty#13], Exchange hashpartitioning(l_orderkey#2L,
    200), ENSURE_REQUIREMENTS, [plan_id=6]``.

    ``output`` holds the reusing side's attributes, position ``i`` standing for
    ``child.output[i]``.  As in Spark the node is a *leaf*: ``child`` (the shuffle or broadcast
    exchange that runs) is a field but not one of ``children``, so plan walks, EXPLAIN and
    rewrites see the exchange once, at its first place; runtimes read ``child`` explicitly."""

    output: tuple[AttributeReference, ...] = field()  # type: ignore[assignment]
    child: SparkPlan

    def __post_init__(self) -> None:
        TreeNode.__post_init__(self)
        if len(self.output) != len(self.child.output):
            raise InternalError(
                f"ReusedExchangeExec: {len(self.output)} output attributes for an exchange "
                f"with {len(self.child.output)}")

    @property
    def children(self) -> tuple[SparkPlan, ...]:  # type: ignore[override]
        return ()

    def do_canonicalize(self) -> SparkPlan:
        # the exchange it reads (so an exchange above a reused one still matches)
        return self.child.canonicalized

    def _remap(self, e: Expression) -> Expression:
        """``e`` over the exchange's output rewritten over this node's (Spark's updateAttr)."""
        by_id = {a.id: b for a, b in zip(self.child.output, self.output)}

        def swap(x: Expression) -> Expression | None:
            if isinstance(x, AttributeReference):
                return by_id.get(x.id, x)
            return None

        return e.transform_up(swap)

    @property
    def output_partitioning(self) -> Partitioning:
        return map_property_expressions(self.child.output_partitioning, self._remap)

    @property
    def shuffle_origin(self) -> str:
        """The reused shuffle's origin (a runtime re-shuffling this reader's rows keeps it)."""
        return getattr(self.child, "shuffle_origin", "ENSURE_REQUIREMENTS")

    @property
    def output_ordering(self) -> tuple[SortOrder, ...]:
        return tuple(self._remap(o) for o in self.child.output_ordering)  # type: ignore[misc]

    def simple_string(self) -> str:
        return f"ReusedExchange {_list(self.output)}, {self.child.simple_string()}"
