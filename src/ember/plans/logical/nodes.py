"""Logical plan nodes, named as in Catalyst, with Spark-like ``tree_string()`` output.

A plan's children are its fields holding plans; its *expressions* are the fields holding
expressions (or tuples of them).  ``output`` is the tuple of attributes the node produces; it is
computed once and cached.  Unresolved nodes (``UnresolvedRelation``, ``UnresolvedHint`` ...) exist
only between the parser and the analyzer.

Per-node caches (plans are immutable, so these are computed at most once per node object and a
rebuilt node starts empty): ``output`` (``_out``), ``output_set`` (``_outset``),
``expressions()`` (``_exprs``) and whether a child plan is ``resolved`` (``_res``, read through
:func:`~ember.expressions.base.is_resolved`, so that asking a plan whether it is resolved does not
re-walk every subtree each time the analyzer asks again).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field, fields
from typing import Any, ClassVar

import pyarrow as pa

from ember import types as T
from ember.errors import InternalError
from ember.expressions.base import (
    AttributeReference,
    Expression,
    NamedExpression,
    SortOrder,
    is_resolved,
)
from ember.plans.logical.join_type import (
    JoinHint,
    JoinType,
    UsingJoin,
    join_output,
    join_type_string,
)
from ember.plans.query_plan import QueryPlan
from ember.trees import TreeNode, field_names, node, pattern_mask
from ember.expressions.subquery import SubqueryExpression


def _attrs_str(attrs: tuple[Expression, ...] | list[Expression]) -> str:
    return "[" + ", ".join(a.simple_string() for a in attrs) + "]"


def _attrs_str_compact(attrs: tuple[Expression, ...] | list[Expression]) -> str:
    return "[" + ",".join(a.simple_string() for a in attrs) + "]"


class LogicalPlan(QueryPlan):
    """Base of logical plan nodes."""

    # _stats: plan_stats' cache (ember.plans.logical.statistics); _exprs: expressions();
    # _res: resolved (see is_resolved); _outset: output_set; _strm: is_streaming;
    # _dkeys: distinct keys (ember.plans.logical.distinct_keys); _abits: anywhere_bits
    __slots__ = ("_out", "_stats", "_exprs", "_res", "_outset", "_strm", "_dkeys", "_abits")
    child_base: ClassVar[type]

    # -- schema -----------------------------------------------------------------------------
    @property
    def output(self) -> tuple[AttributeReference, ...]:
        return cached_output(self)

    def _compute_output(self) -> tuple[AttributeReference, ...]:
        raise InternalError(f"{self.node_name}.output is not defined (unresolved?)")

    @property
    def output_set(self) -> frozenset[int]:
        try:
            return self._outset  # type: ignore[no-any-return]
        except AttributeError:
            out = frozenset(a.id for a in self.output)
            object.__setattr__(self, "_outset", out)
            return out

    @property
    def schema_names(self) -> list[str]:
        return [a.name for a in self.output]

    @property
    def is_streaming(self) -> bool:
        """Whether the plan reads a stream (Spark's ``isStreaming``): some leaf is a
        :class:`StreamingRelation` (or one micro-batch's :class:`StreamingBatchRelation`)."""
        try:
            return self._strm  # type: ignore[no-any-return]
        except AttributeError:
            v = self._own_streaming() or any(c.is_streaming for c in self.children)
            object.__setattr__(self, "_strm", v)
            return v

    def _own_streaming(self) -> bool:
        return False

    # -- resolution -------------------------------------------------------------------------
    @property
    def expressions_resolved(self) -> bool:
        return all(is_resolved(e) for e in self.expressions())

    @property
    def child_resolved(self) -> bool:
        return all(is_resolved(c) for c in self.children)

    @property
    def resolved(self) -> bool:
        return self.expressions_resolved and self.child_resolved

    @property
    def references(self) -> frozenset[int]:
        out: set[int] = set()
        for e in self.expressions():
            out |= e.references
        return frozenset(out)

    @property
    def missing_input(self) -> frozenset[int]:
        inputs: set[int] = set()
        for c in self.children:
            inputs |= c.output_set
        return self.references - inputs - self.produced_attributes

    @property
    def produced_attributes(self) -> frozenset[int]:
        return frozenset()

    # -- expressions ------------------------------------------------------------------------
    def expressions(self) -> tuple[Expression, ...]:
        """Every expression held directly by this node (flattening tuples of tuples)."""
        try:
            return self._exprs  # type: ignore[no-any-return]
        except AttributeError:
            out = node_expressions(self)
            object.__setattr__(self, "_exprs", out)
            return out

    def map_expressions(self, fn: Callable[[Expression], Expression]) -> "LogicalPlan":
        """This node with ``fn`` applied to each of its expressions; ``self`` if none changed."""
        changes: dict[str, Any] = {}
        for n in field_names(type(self)):
            value = getattr(self, n)
            new = _map_exprs(value, fn)
            if new is not value:
                changes[n] = new
        return self.copy(**changes) if changes else self

    def transform_expressions(self, rule: Callable[[Expression], Any]) -> "LogicalPlan":
        """Apply ``rule`` (pre-order) to every expression of this node only."""
        return self.map_expressions(lambda e: e.transform_down(rule))

    def transform_expressions_up(self, rule: Callable[[Expression], Any]) -> "LogicalPlan":
        return self.map_expressions(lambda e: e.transform_up(rule))

    def subqueries(self) -> list["LogicalPlan"]:
        """Plans of subquery expressions held by this node."""

        out: list[LogicalPlan] = []
        for e in self.expressions():
            e.foreach(lambda x: out.append(x.plan) if isinstance(x, SubqueryExpression) else None)
        return out

    def inner_children(self) -> tuple[TreeNode, ...]:
        return tuple(self.subqueries())

    def contains_anywhere(self, *classes: type) -> bool:
        """``contains(*classes)``, also inside the plans of subquery expressions (at any
        depth): whether a rule rewriting those node kinds can find anything to rewrite."""
        bits = self.anywhere_bits  # first: allocates the bits of the classes in the subqueries
        return bool(bits & pattern_mask(classes))

    @property
    def anywhere_bits(self) -> int:
        """``tree_bits`` or-ed with the ``anywhere_bits`` of the plans of the subquery
        expressions in this subtree (at any depth); kept in the ``_abits`` slot, so that asking
        again after a rule rebuilt part of the plan walks only the rebuilt nodes."""
        try:
            return self._abits  # type: ignore[no-any-return]
        except AttributeError:
            pass
        bits = self.tree_bits
        if bits & pattern_mask((SubqueryExpression,)):
            for e in self.expressions():
                if e.contains(SubqueryExpression):
                    for sub in e.collect(
                            lambda x: x.plan if isinstance(x, SubqueryExpression) else None):
                        bits |= sub.anywhere_bits
            for c in self.children:
                bits |= c.anywhere_bits
        object.__setattr__(self, "_abits", bits)
        return bits

    def state_prefix(self) -> str:
        """Catalyst marks unresolved nodes with a leading ``'`` in plan trees."""
        return "" if self.resolved else "'"

    def simple_string(self) -> str:
        args = []
        for f in fields(self):  # type: ignore[arg-type]
            v = getattr(self, f.name)
            if isinstance(v, LogicalPlan) or (
                isinstance(v, tuple) and v and all(isinstance(x, LogicalPlan) for x in v)
            ):
                continue
            if isinstance(v, tuple):
                args.append(_attrs_str(v) if all(isinstance(x, Expression) for x in v) else str(v))
            elif v is not None:
                args.append(str(v) if not isinstance(v, Expression) else v.simple_string())
        return f"{self.node_name} {', '.join(args)}".rstrip()


LogicalPlan.child_base = LogicalPlan


def cached_output(plan: Any) -> tuple[AttributeReference, ...]:
    """``plan._compute_output()`` computed once and kept in the plan's ``_out`` slot (the
    ``output`` of logical and physical plans alike)."""
    try:
        return plan._out
    except AttributeError:
        out = tuple(plan._compute_output())
        object.__setattr__(plan, "_out", out)
        return out


def node_expressions(plan: Any) -> tuple[Expression, ...]:
    """Every expression held directly in the fields of ``plan`` (a logical or physical node),
    flattening tuples of tuples."""
    out: list[Expression] = []
    for n in field_names(type(plan)):
        value = getattr(plan, n)
        if isinstance(value, Expression):
            out.append(value)
        elif isinstance(value, tuple):
            _collect_exprs(value, out)
    return tuple(out)



def _collect_exprs(value: Any, out: list[Expression]) -> None:
    if isinstance(value, Expression):
        out.append(value)
    elif isinstance(value, tuple):
        for v in value:
            _collect_exprs(v, out)


def _map_exprs(value: Any, fn: Callable[[Expression], Expression]) -> Any:
    if isinstance(value, Expression):
        return fn(value)
    if isinstance(value, tuple) and value:
        # ``value`` itself unless an item (an expression, or a nested tuple) changes.
        out: list[Any] | None = None
        for i, v in enumerate(value):
            if isinstance(v, Expression):
                nv = fn(v)
            elif isinstance(v, tuple):
                nv = _map_exprs(v, fn)
            else:
                continue
            if nv is not v:
                if out is None:
                    out = list(value[:i])
                    out.append(nv)
                    out.extend(value[i + 1:])
                else:
                    out[i] = nv
        return value if out is None else tuple(out)
    return value


class LeafNode(LogicalPlan):
    __slots__ = ()


class UnaryNode(LogicalPlan):
    __slots__ = ()

    @property
    def child_plan(self) -> LogicalPlan:
        return self.children[0]


# ---------------------------------------------------------------------------------------------
# Leaves


@node
class OneRowRelation(LeafNode):
    """``SELECT 1`` with no FROM: one row, no columns."""

    def _compute_output(self) -> tuple[AttributeReference, ...]:
        return ()

    def simple_string(self) -> str:
        return "OneRowRelation"


@node
class LocalRelation(LeafNode):
    """In-memory data (VALUES, createDataFrame).  ``data`` holds Arrow columns in ``attrs`` order."""

    attrs: tuple[AttributeReference, ...]
    data: pa.Table | None = field(default=None, compare=False)
    # True for createDataFrame of Python rows, which Spark plans as a LogicalRDD of unknown size
    # (statistics report spark.sql.defaultSizeInBytes, so it is never broadcast, as in Spark).
    unknown_size: bool = field(default=False, compare=False)

    def _compute_output(self) -> tuple[AttributeReference, ...]:
        return self.attrs

    @property
    def num_rows(self) -> int:
        return 0 if self.data is None else self.data.num_rows

    def simple_string(self) -> str:
        return f"LocalRelation {_attrs_str(self.attrs)}" if self.attrs else "LocalRelation"


#: FileRelation option listing the Hive partition columns (comma-separated), set by the reader.
PARTITION_OPTION = "__partition_columns"


@node
class FileRelation(LeafNode):
    """A Parquet, CSV or JSON source (Spark's ``Relation [cols] parquet``)."""

    attrs: tuple[AttributeReference, ...]
    format: str
    paths: tuple[str, ...]
    options: tuple[tuple[str, str], ...] = ()

    def _compute_output(self) -> tuple[AttributeReference, ...]:
        return self.attrs

    @property
    def partition_attrs(self) -> tuple[AttributeReference, ...]:
        """The attributes that are Hive partition columns (named by ``PARTITION_OPTION``)."""
        names: set[str] = set()
        for k, v in self.options:
            if k.lower() == PARTITION_OPTION:
                names = {n.lower() for n in v.split(",") if n}
        return tuple(a for a in self.attrs if a.name.lower() in names)

    def simple_string(self) -> str:
        return f"Relation {_attrs_str_compact(self.attrs)} {self.format}"


@node
class InMemoryRelation(LeafNode):
    """The rows of a cached plan (``df.cache()``), put in place of the subtree that computes
    them (Spark's ``InMemoryRelation``). ``cached`` is the session's cache entry
    (``ember.cache_manager.CachedData``: the plan, its storage level, the rows once computed);
    ``attrs`` are the output of the subtree it replaced."""

    attrs: tuple[AttributeReference, ...]
    cached: Any = field(compare=False)

    def _compute_output(self) -> tuple[AttributeReference, ...]:
        return self.attrs

    def simple_string(self) -> str:
        return (f"InMemoryRelation {_attrs_str(self.attrs)}, "
                f"{self.cached.storage_level.spark_string()}")


@node
class Range(LeafNode):
    """``spark.range(start, end, step, numPartitions)``: one ``id bigint`` column, generated
    lazily (Spark's ``Range``; prints ``Range (0, 10, step=1, splits=Some(2))``, or
    ``Range (0, 10, step=1)`` when ``num_slices`` is None, as SQL's ``range(10)``)."""

    start: int
    end: int
    step: int
    num_slices: int | None
    output: tuple[AttributeReference, ...]

    @property
    def num_elements(self) -> int:
        """Number of rows (Spark's ``Range.numElements``; 0 when the range is empty)."""
        span = self.end - self.start
        if span == 0 or (span > 0) != (self.step > 0):
            return 0
        q, r = divmod(abs(span), abs(self.step))
        return q + (1 if r else 0)

    def simple_string(self) -> str:
        splits = "" if self.num_slices is None else f", splits=Some({self.num_slices})"
        return f"Range ({self.start}, {self.end}, step={self.step}{splits})"


def spark_range_elements(start: int, end: int, step: int) -> int:
    """Spark's ``Range.numElements`` (Scala BigInt arithmetic, truncating division): negative for
    a range running against its step (``range(10, 0)`` -> -10), which Spark's statistics then
    report as they are."""
    span = end - start
    q = abs(span) // abs(step) * (1 if (span >= 0) == (step > 0) else -1)
    rem = abs(span) % abs(step)
    if rem == 0 or (end > start) != (step > 0):
        return q
    return q + 1


@node
class SparkDataFrameRelation(LeafNode):
    """An existing PySpark DataFrame used as an Ember relation (``session.createDataFrame(df)``),
    as Spark's ``LogicalRDD [a#1, b#2], false``.  ``frame`` is the ``pyspark.sql.DataFrame``; it
    takes no part in equality or hashing (``attrs`` carry unique ids) and is never pickled: the
    runtimes read it on the driver (``SparkDataFrameScanExec``)."""

    attrs: tuple[AttributeReference, ...]
    frame: Any = field(default=None, compare=False)

    def _compute_output(self) -> tuple[AttributeReference, ...]:
        return self.attrs

    def __reduce__(self) -> tuple[Any, ...]:
        raise InternalError("A plan over a PySpark DataFrame (SparkDataFrameRelation) cannot be "
                            "pickled; it is read on the driver only")

    def simple_string(self) -> str:
        return f"LogicalRDD {_attrs_str(self.attrs)}, false"


@node
class StreamingRelation(LeafNode):
    """A streaming source before a query starts (Spark's ``StreamingRelation``):
    ``StreamingRelation FileSource[/in], [k#0, t#1]``.  ``source_name`` is the format
    (``memory``, ``parquet``, ``rate`` ...); ``options`` / ``path`` are the reader's.  ``source``
    is a source object built by the caller (a ``MemoryStream``), else None: the micro-batch
    engine builds one from the format registry when the query starts.  Never executed: each
    micro-batch replaces it by a :class:`StreamingBatchRelation` holding the batch's rows."""

    source_name: str
    output: tuple[AttributeReference, ...]
    options: tuple[tuple[str, str], ...] = ()
    path: str | None = None
    source: Any = field(default=None, compare=False)

    def _own_streaming(self) -> bool:
        return True

    @property
    def description(self) -> str:
        """How Spark names the source in plans and progress (``FileSource[/in]``)."""
        if self.source is not None:
            return str(self.source)
        if self.path is not None:
            return f"FileSource[{self.path}]"
        return self.source_name

    def simple_string(self) -> str:
        return f"StreamingRelation {self.description}, {_attrs_str(self.output)}"


@node
class StreamingBatchRelation(LeafNode):
    """One micro-batch's rows of a streaming source (Spark's ``LocalRelation`` /
    ``LogicalRDD`` with ``isStreaming = true``), substituted for a :class:`StreamingRelation` by
    the micro-batch engine.  Still streaming, so the planner keeps stream-stream joins stateful.
    Its size is unknown to the statistics (never broadcast, and a plan's shape does not change
    with the batch's size); the optimizer's LocalRelation rules do not apply to it."""

    attrs: tuple[AttributeReference, ...]
    data: pa.Table | None = field(default=None, compare=False)
    source_description: str = ""

    def _compute_output(self) -> tuple[AttributeReference, ...]:
        return self.attrs

    def _own_streaming(self) -> bool:
        return True

    @property
    def num_rows(self) -> int:
        return 0 if self.data is None else self.data.num_rows

    def simple_string(self) -> str:
        return f"StreamingBatchRelation {_attrs_str(self.attrs)}, {self.source_description}"


@node
class UnresolvedRelation(LeafNode):
    """A table or view name to be looked up in the catalog."""

    name_parts: tuple[str, ...]
    origin: tuple[int, int] | None = field(default=None, compare=False)

    @property
    def resolved(self) -> bool:
        return False

    def simple_string(self) -> str:
        return f"UnresolvedRelation [{', '.join(self.name_parts)}], [], false"


@node
class UnresolvedTableValuedFunction(LeafNode):
    """A table-valued function in FROM (``range(10)``) before the analyzer builds its plan
    (Spark's ``UnresolvedTableValuedFunction``, with ``UnresolvedTVFAliases``' column names);
    ``lateral`` for ``LATERAL range(...)``."""

    name: str
    arguments: tuple[Expression, ...]
    lateral: bool = False
    #: ``range(3) AS t(x)``: the output column names
    column_aliases: tuple[str, ...] = ()
    origin: tuple[int, int] | None = field(default=None, compare=False)

    @property
    def resolved(self) -> bool:
        return False

    def simple_string(self) -> str:
        args = ", ".join(a.simple_string() for a in self.arguments)
        return f"UnresolvedTableValuedFunction [{self.name}], [{args}], false"


@node
class UnresolvedInlineTable(LeafNode):
    """``VALUES (1, 'a'), (2, 'b') AS t(a, b)`` before its rows are evaluated."""

    names: tuple[str, ...]
    rows: tuple[tuple[Expression, ...], ...]

    @property
    def resolved(self) -> bool:
        return False

    def simple_string(self) -> str:
        rows = ", ".join("[" + ", ".join(e.simple_string() for e in r) + "]" for r in self.rows)
        return f"UnresolvedInlineTable [{', '.join(self.names)}], [{rows}]"


# ---------------------------------------------------------------------------------------------
# Unary operators


@node
class Project(UnaryNode):
    """``SELECT list``: each item a NamedExpression once resolved (Spark's ``Project``)."""

    project_list: tuple[Expression, ...]
    child: LogicalPlan

    def _compute_output(self) -> tuple[AttributeReference, ...]:
        return tuple(e.to_attribute() for e in self.project_list)  # type: ignore[attr-defined]

    @property
    def resolved(self) -> bool:
        return LogicalPlan.resolved.fget(self) and all(isinstance(e, NamedExpression) for e in self.project_list)

    def simple_string(self) -> str:
        # an empty list is omitted, as Spark omits empty arguments (``Project`` below a window
        # that needs no column of its input)
        return f"Project {_attrs_str(self.project_list)}" if self.project_list else "Project"


@node
class Filter(UnaryNode):
    """Keeps the rows where ``condition`` is TRUE (NULL and FALSE drop the row)."""

    condition: Expression
    child: LogicalPlan

    def _compute_output(self) -> tuple[AttributeReference, ...]:
        return self.child.output

    def simple_string(self) -> str:
        return f"Filter {self.condition.simple_string()}"


@dataclass(frozen=True, slots=True)
class ProcessedJoinCondition:
    """PushExtraPredicateThroughJoin's mark on a :class:`Join` (Spark's
    ``processedJoinConditionTag``): the join condition whose extra predicates were already pushed
    into the join's children.  Boxed so that it is not one of the Join's expressions."""

    condition: Expression


@node
class Join(LogicalPlan):
    """A join.  ``join_type`` is a :class:`JoinType`, or a :class:`UsingJoin` before analysis.
    ``existence_attr`` is the boolean ``exists#N`` column of an ExistenceJoin.
    ``processed_condition`` and ``from_scalar_subquery`` are optimizer marks (see
    :class:`ProcessedJoinCondition`); like Spark tree-node tags they survive ``copy`` /
    ``with_children`` and take no part in equality, hashing or printing."""

    left: LogicalPlan
    right: LogicalPlan
    join_type: JoinType | UsingJoin
    condition: Expression | None = None
    hint: JoinHint = JoinHint()
    existence_attr: AttributeReference | None = None
    processed_condition: ProcessedJoinCondition | None = field(default=None, compare=False)
    #: Ember's join for an uncorrelated scalar subquery (RewriteCorrelatedScalarSubquery), which
    #: Spark keeps a subquery expression: CheckCartesianProducts does not see it as a product.
    #: (A correlated one is a join in Spark too, and is checked.)
    #: A mark like ``processed_condition``.
    from_scalar_subquery: bool = field(default=False, compare=False)

    @property
    def resolved(self) -> bool:
        return isinstance(self.join_type, JoinType) and LogicalPlan.resolved.fget(self)

    def _compute_output(self) -> tuple[AttributeReference, ...]:
        jt = self.join_type
        if not isinstance(jt, JoinType):
            raise InternalError(f"Join output requested before {jt} was resolved")
        return join_output(jt, self.left, self.right, self.existence_attr)

    def simple_string(self) -> str:
        parts = [f"Join {join_type_string(self.join_type, self.existence_attr)}"]
        if self.condition is not None:
            parts.append(self.condition.simple_string())
        if not self.hint.is_empty:
            parts.append(str(self.hint))
        return ", ".join(parts)


@node
class LateralJoin(LogicalPlan):
    """``left [LEFT] JOIN LATERAL (subquery) [ON condition]`` (Spark's ``LateralJoin``): the
    subquery (``right``, a ``LateralSubquery`` expression) is evaluated for each row of ``left``
    and may read its columns as outer references.  ``left`` is the only child; the condition
    reads both sides.  ``join_type`` is Inner or LeftOuter.  The optimizer's
    RewriteLateralSubquery turns it into a ``Join`` with the decorrelated subquery plan."""

    left: LogicalPlan
    right: Expression
    join_type: JoinType
    condition: Expression | None = None

    @property
    def resolved(self) -> bool:
        return (self.left.resolved and bool(self.right.resolved)  # type: ignore[attr-defined]
                and (self.condition is None or self.condition.resolved))

    @property
    def right_output(self) -> tuple[AttributeReference, ...]:
        """The subquery plan's columns, as the join outputs them."""
        out = self.right.plan.output  # type: ignore[attr-defined]
        if self.join_type.right_nullable:
            out = tuple(a.with_nullability(True) for a in out)
        return out

    @property
    def missing_input(self) -> frozenset[int]:
        have = self.left.output_set | frozenset(a.id for a in self.right_output)
        return self.references - have

    def _compute_output(self) -> tuple[AttributeReference, ...]:
        return self.left.output + self.right_output

    def simple_string(self) -> str:
        parts = [f"LateralJoin {self.right.simple_string()}", str(self.join_type)]
        if self.condition is not None:
            parts.append(self.condition.simple_string())
        return ", ".join(parts)


@node
class Aggregate(UnaryNode):
    """GROUP BY ``grouping_expressions``; ``aggregate_expressions`` are the output columns
    (aggregate functions and expressions over grouping expressions).  No grouping
    expressions: one row, even over empty input."""

    grouping_expressions: tuple[Expression, ...]
    aggregate_expressions: tuple[Expression, ...]
    child: LogicalPlan

    def _compute_output(self) -> tuple[AttributeReference, ...]:
        return tuple(e.to_attribute() for e in self.aggregate_expressions)  # type: ignore[attr-defined]

    @property
    def resolved(self) -> bool:
        return LogicalPlan.resolved.fget(self) and all(
            isinstance(e, NamedExpression) for e in self.aggregate_expressions
        )

    def simple_string(self) -> str:
        return (
            f"Aggregate {_attrs_str(self.grouping_expressions)}, "
            f"{_attrs_str(self.aggregate_expressions)}"
        )


@node
class EventTimeWatermark(UnaryNode):
    """``withWatermark(event_time, delay)`` (Spark's ``EventTimeWatermark``): rows pass through;
    the output marks ``event_time`` with the delay (``watermark_delay_ms``) and clears the mark
    of any other column (one event-time column per input).  ``delay_text`` is the
    delay as Spark prints it (``10 seconds``, ``1 hours 30 minutes``); ``node_id`` is Spark's
    node UUID.  ``withWatermark`` adds no node over a batch (non-streaming) plan, which Spark's
    EliminateEventTimeWatermark would remove."""

    event_time: AttributeReference
    delay_ms: int
    child: LogicalPlan
    delay_text: str = field(default="", compare=False)
    node_id: str = field(default="", compare=False)

    def _compute_output(self) -> tuple[AttributeReference, ...]:
        return watermark_output(self.child.output, self.event_time.id, self.delay_ms)

    def simple_string(self) -> str:
        head = f"{self.node_id}, " if self.node_id else ""
        delay = self.delay_text or f"{self.delay_ms} milliseconds"
        return (f"EventTimeWatermark {head}{self.event_time.simple_string()}: "
                f"{self.event_time.data_type.simple_string()}, {delay}")


def watermark_output(output: tuple[AttributeReference, ...], event_time_id: int,
                     delay_ms: int) -> tuple[AttributeReference, ...]:
    """``output`` with the event-time attribute marked with ``delay_ms`` and every other
    attribute's watermark mark removed (Spark's ``EventTimeWatermark.output``; shared by the
    logical and physical nodes)."""
    out = []
    for a in output:
        if a.id == event_time_id:
            a = a if a.watermark_delay_ms == delay_ms else a.copy(watermark_delay_ms=delay_ms)
        elif a.watermark_delay_ms is not None:
            a = a.copy(watermark_delay_ms=None)
        out.append(a)
    return tuple(out)


@node
class Expand(UnaryNode):
    """Emits ``len(projections)`` rows per input row, one per projection (used by
    RewriteDistinctAggregates and GROUPING SETS)."""

    projections: tuple[tuple[Expression, ...], ...]
    attrs: tuple[AttributeReference, ...]
    child: LogicalPlan

    def _compute_output(self) -> tuple[AttributeReference, ...]:
        return self.attrs

    @property
    def produced_attributes(self) -> frozenset[int]:
        return frozenset(a.id for a in self.attrs) - self.child.output_set

    def simple_string(self) -> str:
        projs = ", ".join(_attrs_str(p) for p in self.projections)
        return f"Expand [{projs}], {_attrs_str(self.attrs)}"


@node
class Generate(UnaryNode):
    """A generator's rows joined to their input row (Spark's ``Generate``): output is the
    child's columns, then ``generator_output``.  ``outer`` keeps an input row whose generator
    yields nothing, with NULLs (``explode_outer``, ``LATERAL VIEW OUTER``).  ``names`` are the
    user's column names (``LATERAL VIEW explode(a) t AS x``, ``explode(m) AS (k, v)``);
    ``generator_output`` is empty until the analyzer's ResolveGenerate has typed the generator."""

    generator: Expression
    outer: bool
    qualifier: tuple[str, ...]
    names: tuple[str, ...]
    generator_output: tuple[AttributeReference, ...]
    child: LogicalPlan

    def _compute_output(self) -> tuple[AttributeReference, ...]:
        return self.child.output + self.generator_output

    @property
    def resolved(self) -> bool:
        return LogicalPlan.resolved.fget(self) and bool(self.generator_output)  # type: ignore

    @property
    def produced_attributes(self) -> frozenset[int]:
        return frozenset(a.id for a in self.generator_output)

    def simple_string(self) -> str:
        return (f"Generate {self.generator.simple_string()}, {str(self.outer).lower()}, "
                f"{_attrs_str(self.generator_output)}")


@node
class Sort(UnaryNode):
    """ORDER BY (``is_global``) or SORT BY (per partition) on ``order``."""

    order: tuple[SortOrder, ...]
    is_global: bool
    child: LogicalPlan

    def _compute_output(self) -> tuple[AttributeReference, ...]:
        return self.child.output

    def simple_string(self) -> str:
        return f"Sort {_attrs_str(self.order)}, {str(self.is_global).lower()}"


@node
class Window(UnaryNode):
    """Window functions over one specification (Spark's ``Window``): each of
    ``window_expressions`` is ``Alias(WindowExpression(...))`` whose specification has this
    node's ``partition_spec`` and ``order_spec``.  Output: the child's columns, then one column
    per window expression.  Prints ``Window [...], [a#1], [b#2 ASC NULLS FIRST]`` (empty
    specifications omitted, as Spark omits empty argument lists)."""

    window_expressions: tuple[Expression, ...]
    partition_spec: tuple[Expression, ...]
    order_spec: tuple[SortOrder, ...]
    child: LogicalPlan

    @property
    def window_output(self) -> tuple[AttributeReference, ...]:
        return tuple(e.to_attribute() for e in self.window_expressions)  # type: ignore[attr-defined]

    def _compute_output(self) -> tuple[AttributeReference, ...]:
        return self.child.output + self.window_output

    @property
    def produced_attributes(self) -> frozenset[int]:
        return frozenset(a.id for a in self.window_output)

    @property
    def resolved(self) -> bool:
        return LogicalPlan.resolved.fget(self) and all(  # type: ignore[attr-defined]
            isinstance(e, NamedExpression) for e in self.window_expressions)

    def simple_string(self) -> str:
        return "Window " + window_args_string(
            self.window_expressions, self.partition_spec, self.order_spec)


def window_args_string(*lists: tuple[Expression, ...]) -> str:
    """The arguments of ``Window`` / ``WindowGroupLimit``: each non-empty list ``[e1, e2]``."""
    return ", ".join(_attrs_str(x) for x in lists if x)


@node
class WindowGroupLimit(UnaryNode):
    """Keeps, per partition of ``partition_spec`` ordered by ``order_spec``, the rows whose
    ``rank_like_function`` (``row_number()``, ``rank(...)`` or ``dense_rank(...)``) is at most
    ``limit`` (Spark's ``WindowGroupLimit``, inserted by InferWindowGroupLimit below a Window
    filtered on that function).  Prints ``WindowGroupLimit [a#1], [b#2 ASC NULLS FIRST],
    row_number(), 2``."""

    partition_spec: tuple[Expression, ...]
    order_spec: tuple[SortOrder, ...]
    rank_like_function: Expression
    limit: int
    child: LogicalPlan

    def _compute_output(self) -> tuple[AttributeReference, ...]:
        return self.child.output

    def simple_string(self) -> str:
        args = window_args_string(self.partition_spec, self.order_spec)
        return (f"WindowGroupLimit {args + ', ' if args else ''}"
                f"{self.rank_like_function.simple_string()}, {self.limit}")


@node
class RepartitionByExpression(UnaryNode):
    """``DISTRIBUTE BY e`` (and the repartition of ``CLUSTER BY``): rows hash-partitioned on
    ``partition_expressions`` into ``num_partitions`` partitions (None:
    ``spark.sql.shuffle.partitions``), Spark's ``RepartitionByExpression``. The rows are
    unchanged; a ``SORT BY`` above it sorts within those partitions."""

    partition_expressions: tuple[Expression, ...]
    child: LogicalPlan
    num_partitions: int | None = None

    def _compute_output(self) -> tuple[AttributeReference, ...]:
        return self.child.output

    def simple_string(self) -> str:
        n = self.num_partitions if self.num_partitions is not None else "None"
        return f"RepartitionByExpression {_attrs_str(self.partition_expressions)}, {n}"


@node
class Repartition(UnaryNode):
    """``df.repartition(n)`` (``shuffle``: rows dealt round-robin into ``n`` partitions) and
    ``df.coalesce(n)`` (no shuffle: adjacent partitions merged into at most ``n``), Spark's
    ``Repartition``. The rows are unchanged."""

    num_partitions: int
    shuffle: bool
    child: LogicalPlan

    def _compute_output(self) -> tuple[AttributeReference, ...]:
        return self.child.output

    def simple_string(self) -> str:
        return f"Repartition {self.num_partitions}, {str(self.shuffle).lower()}"


@node
class Sample(UnaryNode):
    """``df.sample`` / one split of ``df.randomSplit``: each row kept when a uniform draw falls
    in ``[lower_bound, upper_bound)`` (Bernoulli), or repeated a Poisson(``upper_bound -
    lower_bound``) number of times ``with_replacement``, the generator of partition ``i``
    seeded with ``seed + i`` (Spark's ``Sample``)."""

    lower_bound: float
    upper_bound: float
    with_replacement: bool
    seed: int
    child: LogicalPlan

    def _compute_output(self) -> tuple[AttributeReference, ...]:
        return self.child.output

    def simple_string(self) -> str:
        return sample_string(self)


def sample_string(node: Any) -> str:
    """``Sample 0.0, 0.5, false, 42``: how Spark prints ``Sample`` and ``SampleExec``."""
    return (f"Sample {node.lower_bound}, {node.upper_bound}, "
            f"{str(node.with_replacement).lower()}, {node.seed}")


@node
class Limit(UnaryNode):
    """``LIMIT n`` (Spark shows GlobalLimit over LocalLimit; Ember keeps one node)."""

    limit: Expression
    child: LogicalPlan

    def _compute_output(self) -> tuple[AttributeReference, ...]:
        return self.child.output

    def simple_string(self) -> str:
        return f"GlobalLimit {self.limit.simple_string()}"


@node
class Offset(UnaryNode):
    """``OFFSET n``: skips the first ``n`` rows."""

    offset: Expression
    child: LogicalPlan

    def _compute_output(self) -> tuple[AttributeReference, ...]:
        return self.child.output

    def simple_string(self) -> str:
        return f"Offset {self.offset.simple_string()}"


@node
class Distinct(UnaryNode):
    """SELECT DISTINCT / UNION DISTINCT: duplicate rows removed (NULLs equal, NaN canonical)."""

    child: LogicalPlan

    def _compute_output(self) -> tuple[AttributeReference, ...]:
        return self.child.output

    def simple_string(self) -> str:
        return "Distinct"


@node
class Deduplicate(UnaryNode):
    """``dropDuplicates(keys)`` of a streaming plan (Spark's ``Deduplicate``): the first row of
    each distinct ``keys`` value, over the whole stream (planned as
    ``StreamingDeduplicateExec``).  A batch ``dropDuplicates`` is an ``Aggregate`` instead."""

    keys: tuple[AttributeReference, ...]
    child: LogicalPlan

    def _compute_output(self) -> tuple[AttributeReference, ...]:
        return self.child.output

    def simple_string(self) -> str:
        return f"Deduplicate {_attrs_str(self.keys)}"


@node
class DeduplicateWithinWatermark(UnaryNode):
    """``dropDuplicatesWithinWatermark(keys)`` (Spark's ``DeduplicateWithinWatermark``): a
    duplicate is dropped while the first row's event time plus the watermark delay is ahead of
    the watermark (planned as ``StreamingDeduplicateWithinWatermarkExec``)."""

    keys: tuple[AttributeReference, ...]
    child: LogicalPlan

    def _compute_output(self) -> tuple[AttributeReference, ...]:
        return self.child.output

    def simple_string(self) -> str:
        return f"DeduplicateWithinWatermark {_attrs_str(self.keys)}"


@node
class SubqueryAlias(UnaryNode):
    """Names a relation: its output attributes get ``identifier`` as qualifier."""

    identifier: tuple[str, ...]
    child: LogicalPlan

    def _compute_output(self) -> tuple[AttributeReference, ...]:
        q = self.identifier
        return tuple(a.with_qualifier(q) for a in self.child.output)

    @property
    def alias(self) -> str:
        return self.identifier[-1]

    def simple_string(self) -> str:
        return f"SubqueryAlias {'.'.join(self.identifier)}"


@node
class View(UnaryNode):
    """A temporary view's analyzed plan, as Spark shows it: ``View (`t`, [a#1,b#2])``."""

    name: str
    child: LogicalPlan

    def _compute_output(self) -> tuple[AttributeReference, ...]:
        return self.child.output

    def simple_string(self) -> str:
        return f"View (`{self.name}`, {_attrs_str(self.output)})"


@node
class UnresolvedHint(UnaryNode):
    """``/*+ NAME(params) */`` before the analyzer resolves it."""

    name: str
    parameters: tuple[Any, ...]
    child: LogicalPlan

    @property
    def resolved(self) -> bool:
        return False

    def simple_string(self) -> str:
        return f"UnresolvedHint {self.name}, [{', '.join(map(str, self.parameters))}]"


@node
class UnresolvedHaving(UnaryNode):
    """``HAVING cond`` over an Aggregate, before the analyzer resolves aggregates in ``condition``."""

    condition: Expression
    child: LogicalPlan

    @property
    def resolved(self) -> bool:
        return False

    def simple_string(self) -> str:
        return f"UnresolvedHaving {self.condition.simple_string()}"


@node
class UnresolvedQualify(UnaryNode):
    """``QUALIFY cond`` over a select list (Spark's ``UnresolvedQualify``): a filter on window
    results, resolved by ExtractWindowExpressions into a ``Filter`` above the ``Window``."""

    condition: Expression
    child: LogicalPlan

    @property
    def resolved(self) -> bool:
        return False

    def simple_string(self) -> str:
        return f"UnresolvedQualify {self.condition.simple_string()}"


@node
class WithWindowDefinition(UnaryNode):
    """``WINDOW w AS (...), ...`` (Spark's ``WithWindowDefinition``): the named window
    specifications ``OVER w`` refers to, substituted by the analyzer's WindowsSubstitution."""

    window_definitions: tuple[tuple[str, Expression], ...]
    child: LogicalPlan

    @property
    def resolved(self) -> bool:
        return False

    def simple_string(self) -> str:
        defs = ", ".join(f"{n}={s.simple_string()}" for n, s in self.window_definitions)
        return f"WithWindowDefinition [{defs}], false"


@node
class ResolvedHint(UnaryNode):
    """A join strategy hint on the relation below it; moved onto Join nodes before planning."""

    strategies: tuple[str, ...]
    child: LogicalPlan

    def _compute_output(self) -> tuple[AttributeReference, ...]:
        return self.child.output

    def simple_string(self) -> str:
        return f"ResolvedHint (strategy={','.join(s.lower() for s in self.strategies)})"


@node
class UnresolvedWith(UnaryNode):
    """``WITH name AS (query), ...`` before CTE substitution."""

    child: LogicalPlan
    cte_names: tuple[str, ...]
    cte_plans: tuple[LogicalPlan, ...]

    @property
    def resolved(self) -> bool:
        return False

    def simple_string(self) -> str:
        return f"UnresolvedWith [{', '.join(self.cte_names)}]"


@node
class UnresolvedSubqueryColumnAliases(UnaryNode):
    """``FROM t AS x(c1, c2)`` / ``WITH x(c1, c2) AS (...)``: renames the child's output columns
    by position (Spark's ``UnresolvedSubqueryColumnAliases``); the parser puts it under the
    ``SubqueryAlias``.  The analyzer replaces it with a Project of Aliases."""

    output_column_names: tuple[str, ...]
    child: LogicalPlan

    @property
    def resolved(self) -> bool:
        return False

    def simple_string(self) -> str:
        return f"UnresolvedSubqueryColumnAliases [{', '.join(self.output_column_names)}]"


@node
class Pivot(UnaryNode):
    """``PIVOT (aggregates FOR pivot_columns IN (values))`` / ``groupBy(...).pivot(...)`` before
    ResolvePivot rewrites it into aggregates (Spark's ``Pivot``).

    ``group_by`` is None for SQL (the grouping columns are every child column the pivot columns
    and the aggregates do not read) and the DataFrame's grouping columns otherwise. Several pivot
    columns (``FOR (a, b) IN ((1, 'x'), ...)``) are Spark's struct of them: each value is then a
    tuple with one expression per pivot column. A value or an aggregate may be an ``Alias``
    (``IN (2023 AS y23)``, ``sum(x) AS s``), which names its output columns."""

    group_by: tuple[Expression, ...] | None
    pivot_columns: tuple[Expression, ...]
    pivot_values: tuple[tuple[Expression, ...], ...]
    value_aliases: tuple[str | None, ...]
    aggregates: tuple[Expression, ...]
    child: LogicalPlan

    @property
    def resolved(self) -> bool:
        return False

    def simple_string(self) -> str:
        values = ", ".join("(" + ", ".join(e.simple_string() for e in v) + ")"
                           for v in self.pivot_values)
        return (f"Pivot {_attrs_str(self.pivot_columns)}, [{values}], "
                f"{_attrs_str(self.aggregates)}")


@node
class Unpivot(UnaryNode):
    """``UNPIVOT (v FOR name IN (c1, c2 AS x))`` / ``DataFrame.unpivot`` before ResolveUnpivot
    turns it into an ``Expand`` (Spark's ``Unpivot``): per input row, one row per value column set
    with the id columns, the set's name in ``variable_column_name`` and its values in
    ``value_column_names``. ``ids`` None: every column that is not a value; ``values`` None:
    every column that is not an id (each value set then has one column). ``aliases`` name the
    value sets (None: the set's column names joined with ``_``)."""

    ids: tuple[Expression, ...] | None
    values: tuple[tuple[Expression, ...], ...] | None
    aliases: tuple[str | None, ...] | None
    variable_column_name: str
    value_column_names: tuple[str, ...]
    child: LogicalPlan

    @property
    def resolved(self) -> bool:
        return False

    def simple_string(self) -> str:
        ids = _attrs_str(self.ids) if self.ids is not None else "None"
        values = ("[" + ", ".join(_attrs_str(v) for v in self.values) + "]"
                  if self.values is not None else "None")
        return (f"Unpivot {ids}, {values}, {self.variable_column_name}, "
                f"[{', '.join(self.value_column_names)}]")


# ---------------------------------------------------------------------------------------------
# Set operations


def union_output(inputs: tuple[Any, ...]) -> tuple[AttributeReference, ...]:
    """A union's output (logical or physical ``inputs``): the first input's attributes, nullable
    where any input's column is."""
    first = inputs[0].output
    return tuple(
        a.with_nullability(any(c.output[i].nullable for c in inputs))
        for i, a in enumerate(first)
    )


def intersect_output(left: Any, right: Any) -> tuple[AttributeReference, ...]:
    """An intersection's output: the left attributes, nullable only where both sides are."""
    return tuple(
        a.with_nullability(a.nullable and b.nullable)
        for a, b in zip(left.output, right.output)
    )


@node
class Union(LogicalPlan):
    """UNION ALL of ``inputs`` (UNION DISTINCT is Distinct over Union). Output takes the first
    child's names and ids, with the widest nullability."""

    inputs: tuple[LogicalPlan, ...]
    by_name: bool = False
    allow_missing_columns: bool = False

    def _compute_output(self) -> tuple[AttributeReference, ...]:
        return union_output(self.inputs)

    def simple_string(self) -> str:
        return f"Union {str(self.by_name).lower()}, {str(self.allow_missing_columns).lower()}"


@node
class Intersect(LogicalPlan):
    """INTERSECT [ALL]: rows in both inputs (null-safe equality); ALL keeps min(countL, countR)
    copies of each row."""

    left: LogicalPlan
    right: LogicalPlan
    is_all: bool = False

    def _compute_output(self) -> tuple[AttributeReference, ...]:
        return intersect_output(self.left, self.right)

    def simple_string(self) -> str:
        return f"Intersect {str(self.is_all).lower()}"


@node
class Except(LogicalPlan):
    """EXCEPT/MINUS [ALL]: left rows absent from the right (null-safe equality); ALL keeps
    countL - countR copies of each row."""

    left: LogicalPlan
    right: LogicalPlan
    is_all: bool = False

    def _compute_output(self) -> tuple[AttributeReference, ...]:
        return self.left.output

    def simple_string(self) -> str:
        return f"Except {str(self.is_all).lower()}"


# ---------------------------------------------------------------------------------------------
# Commands (run by the session, not by the executor)


class Command(LogicalPlan):
    __slots__ = ()

    def _compute_output(self) -> tuple[AttributeReference, ...]:
        return ()


@node
class CreateViewCommand(Command):
    """``CREATE [OR REPLACE] [TEMP] VIEW name[(cols)] AS query``."""

    name: str
    query: LogicalPlan
    user_columns: tuple[str, ...] | None = None
    replace: bool = False
    temporary: bool = True
    if_not_exists: bool = False
    #: a persistent view's SQL text (the query after AS), its COMMENT and TBLPROPERTIES
    query_text: str | None = field(default=None, compare=False)
    comment: str | None = None
    properties: tuple[tuple[str, str], ...] = ()
    #: ``CREATE GLOBAL TEMP VIEW``: a view of the ``global_temp`` database
    global_temp: bool = False

    def simple_string(self) -> str:
        return f"CreateViewCommand `{self.name}`, {self.replace}, {self.temporary}"


@node
class CreateTempViewUsing(Command):
    """``CREATE [OR REPLACE] TEMP VIEW name USING parquet|csv OPTIONS (path '...')``."""

    name: str
    provider: str
    options: tuple[tuple[str, str], ...]
    replace: bool = False
    #: ``CREATE TEMP VIEW v (cols) USING ...``: the user's schema
    schema: T.StructType | None = None

    def simple_string(self) -> str:
        return f"CreateTempViewUsing [tableIdent:`{self.name}`] replace:{self.replace}, provider:{self.provider}"


@node
class DropView(Command):
    name: str
    if_exists: bool = False


@node
class SetCommand(Command):
    """``SET``, ``SET key``, ``SET key=value``; ``SET -v`` (``verbose``) adds each key's meaning
    and the Spark version that added it (Spark's ``SetCommand``)."""

    key: str | None = None
    value: str | None = None
    verbose: bool = False

    def _compute_output(self) -> tuple[AttributeReference, ...]:
        out = (
            AttributeReference("key", T.STRING, False),
            AttributeReference("value", T.STRING, False),
        )
        if self.verbose:
            out += (AttributeReference("meaning", T.STRING, False),
                    AttributeReference("Since version", T.STRING, False))
        return out


@node
class ExplainCommand(Command):
    """``EXPLAIN [EXTENDED|FORMATTED|CODEGEN|COST] query``; ``mode`` is lower case."""

    query: LogicalPlan
    mode: str = "simple"

    def _compute_output(self) -> tuple[AttributeReference, ...]:
        return (AttributeReference("plan", T.STRING, False),)


@node
class AnalyzeTableCommand(Command):
    """``ANALYZE TABLE name COMPUTE STATISTICS [NOSCAN | FOR COLUMNS c1, c2 | FOR ALL COLUMNS]``
    (Spark's AnalyzeTableCommand / AnalyzeColumnCommand; run by the session, see
    :mod:`ember.plans.logical.statistics`).  ``columns`` None: no column statistics."""

    name_parts: tuple[str, ...]
    no_scan: bool = False
    columns: tuple[str, ...] | None = None
    all_columns: bool = False

    def simple_string(self) -> str:
        if self.all_columns or self.columns is not None:
            cols = "None" if self.columns is None else f"Some(List({', '.join(self.columns)}))"
            return (f"AnalyzeColumnCommand `{'.'.join(self.name_parts)}`, {cols}, "
                    f"{str(self.all_columns).lower()}")
        return f"AnalyzeTableCommand `{'.'.join(self.name_parts)}`, {str(self.no_scan).lower()}"


@node
class DescribeRelation(Command):
    """``DESCRIBE [TABLE] name`` or ``DESCRIBE QUERY query``."""

    query: LogicalPlan
    extended: bool = False

    def _compute_output(self) -> tuple[AttributeReference, ...]:
        return (
            AttributeReference("col_name", T.STRING, False),
            AttributeReference("data_type", T.STRING, False),
            AttributeReference("comment", T.STRING, True),
        )
