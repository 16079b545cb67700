"""Expression tree: the base class and the nodes every layer needs.

Contract of an :class:`Expression`:

- ``data_type`` / ``nullable``: valid once ``resolved`` is true (unresolved nodes raise).
- ``references``: the :class:`ExprId` s of the attributes it reads (an ``AttributeSet``).
- ``deterministic`` / ``foldable``: as in Catalyst.
- ``eval(batch)``: vectorized evaluation over one ``pyarrow.RecordBatch`` returning a
  ``pyarrow.Array`` of ``len(batch)`` values, of Arrow type ``data_type.to_arrow()``.  Only *bound*
  expressions are evaluated: :func:`bind_references` replaces each ``AttributeReference`` with a
  ``BoundReference`` (column ordinal) against the operator's input attributes.
- ``__str__`` / ``simple_string()``: Catalyst's ``toString`` with ids, e.g. ``(a#1 + 1)``;
  ``sql()``: the id-free SQL Spark uses to name unaliased columns, e.g. ``(a + 1)``.
"""

from __future__ import annotations

import itertools
import re
import threading
from collections.abc import Iterable, Sequence
from dataclasses import field
from typing import Any, ClassVar

import pyarrow as pa

from ember import types as T
from ember.errors import AnalysisError, InternalError
from ember.trees import TreeNode, node
from ember.formatting import java_double_str

# ---------------------------------------------------------------------------------------------
# Expression ids


_id_lock = threading.Lock()
_id_counter = itertools.count(1)


def new_expr_id() -> int:
    """A fresh, process-unique expression id (Spark's ``NamedExpression.newExprId``)."""
    with _id_lock:
        return next(_id_counter)


# ---------------------------------------------------------------------------------------------
# Base classes


def is_resolved(n: Any) -> bool:
    """``n.resolved`` for an expression or plan, kept in the node's ``_res`` slot after the first
    call: nodes are immutable, so the answer cannot change, and asking again (the analyzer asks
    after every rule) does not re-walk the whole subtree."""
    try:
        return n._res  # type: ignore[no-any-return]
    except AttributeError:
        r = n.resolved
        try:
            object.__setattr__(n, "_res", r)
        except AttributeError:  # a node class without the slot
            pass
        return r


class Expression(TreeNode):
    """Base of all expressions.  Children are the fields holding expressions."""

    # Per-node caches (nodes are immutable): _res: ``resolved`` (see is_resolved); _det / _refs:
    # the base class's ``deterministic`` / ``references`` (recursive over the children, asked
    # again and again by the optimizer), computed on first use; _canon: ``canonicalized``.
    __slots__ = ("_res", "_det", "_refs", "_canon")
    child_base: ClassVar[type]  # set below to Expression

    # -- typing -----------------------------------------------------------------------------
    @property
    def data_type(self) -> T.DataType:
        raise AnalysisError(f"Invalid call to data_type on unresolved object {self}",
                            error_class="INTERNAL_ERROR")

    @property
    def nullable(self) -> bool:
        return True

    @property
    def resolved(self) -> bool:
        """True when this expression and all its children are resolved and type-check."""
        return all(is_resolved(c) for c in self.children) and self.check_input_types() is None

    def check_input_types(self) -> str | None:
        """None when the children's types are acceptable, else a message (Spark's
        ``checkInputDataTypes``).  The analyzer raises ``DATATYPE_MISMATCH`` with it."""
        return None

    @property
    def deterministic(self) -> bool:
        try:
            return self._det  # type: ignore[no-any-return]
        except AttributeError:
            det = all(c.deterministic for c in self.children)
            object.__setattr__(self, "_det", det)
            return det

    @property
    def foldable(self) -> bool:
        return False

    @property
    def references(self) -> frozenset[int]:
        """Expr ids of the attributes this expression reads."""
        try:
            return self._refs  # type: ignore[no-any-return]
        except AttributeError:
            pass
        out: set[int] = set()
        for c in self.children:
            out |= c.references
        refs = frozenset(out)
        object.__setattr__(self, "_refs", refs)
        return refs

    # -- canonical form (Spark's Expression.canonicalized / semanticEquals / semanticHash) ----
    @property
    def canonicalized(self) -> "Expression":
        """This expression with everything that does not change its result erased, so that two
        expressions computing the same thing are equal (Spark's ``Expression.canonicalized``):
        the children's canonical forms, then :meth:`canonicalize_node`.  Attributes keep only
        their id and type (names, qualifiers, nullability erased), aliases their child and id
        (the name erased), and commutative operators order their operands deterministically
        (``And``/``Or`` chains, ``Add``, ``Multiply``, ``=``, ``<=>``; ``b > a`` becomes ``a <
        b``, ``NOT (a > b)`` becomes ``a <= b``).  Computed once and kept on the node."""
        try:
            return self._canon  # type: ignore[no-any-return]
        except AttributeError:
            pass
        kids = self.children
        e = self.with_children(tuple(k.canonicalized for k in kids)) if kids else self
        out = e.canonicalize_node()
        object.__setattr__(self, "_canon", out)
        if out is not self:
            # a canonical form is its own canonical form
            object.__setattr__(out, "_canon", out)
        return out

    def canonicalize_node(self) -> "Expression":
        """This node, whose children are already canonical, in canonical form (the per-node
        step of Spark's ``Canonicalize``); itself unless the node's class overrides it."""
        return self

    def semantic_equals(self, other: "Expression") -> bool:
        """Spark's ``semanticEquals``: both deterministic and equal canonical forms.  A
        non-deterministic expression is never semantically equal to anything, itself included
        (two evaluations of ``rand()`` differ)."""
        if self is other or self == other:
            return self.deterministic
        return (self.deterministic and other.deterministic
                and self.canonicalized == other.canonicalized)

    def semantic_hash(self) -> int:
        """Spark's ``semanticHash``: equal for semantically equal expressions."""
        return hash(self.canonicalized)

    # -- evaluation mode (Spark's EvalMode, spark.sql.ansi.enabled) -------------------------
    @property
    def ansi_mode(self) -> bool:
        """True when this node evaluates in ANSI mode and has a legacy mode that behaves
        differently (Spark's ``evalMode == ANSI``); the analyzer's ResolveEvalMode then calls
        :meth:`to_legacy_mode` when ``spark.sql.ansi.enabled`` is false."""
        return False

    def to_legacy_mode(self) -> "Expression":
        """This node in Spark's ``EvalMode.LEGACY`` (children unchanged)."""
        return self

    # -- evaluation -------------------------------------------------------------------------
    def eval(self, batch: pa.RecordBatch) -> pa.Array:
        raise InternalError(f"{type(self).__name__} cannot be evaluated (it is {self})")

    # -- display ----------------------------------------------------------------------------
    @property
    def pretty_name(self) -> str:
        return type(self).__name__.lower()

    def simple_string(self) -> str:
        args = ", ".join(c.simple_string() for c in self.children)
        return f"{self.pretty_name}({args})"

    def sql(self) -> str:
        args = ", ".join(c.sql() for c in self.children)
        return f"{self.pretty_name}({args})"

    def __str__(self) -> str:
        return self.simple_string()

    def __repr__(self) -> str:
        return self.simple_string()


Expression.child_base = Expression


def out_of_canonical_order(left: Expression, right: Expression) -> bool:
    """Whether two canonical operands of a commutative operator must swap places: the order is
    by class name, then printed form (Spark orders by hash code; a printed form is the same in
    every process, so canonical forms are too)."""
    return _order_key(left) > _order_key(right)


def canonical_operand_order(items: Iterable[Expression]) -> list[Expression]:
    """Canonical operands of an associative and commutative chain, in canonical order."""
    return sorted(items, key=_order_key)


def _order_key(e: Expression) -> str:
    return type(e).__name__ + ":" + e.simple_string()


class LeafExpression(Expression):
    __slots__ = ()

    @property
    def children(self) -> tuple[Expression, ...]:
        return ()


class Unevaluable(Expression):
    """Marker: exists only before analysis/planning replaces it."""

    __slots__ = ()

    @property
    def resolved(self) -> bool:
        return False


class NamedExpression(Expression):
    """An expression with a name and an id: attributes and aliases."""

    __slots__ = ()

    @property
    def name(self) -> str:
        raise NotImplementedError

    @property
    def expr_id(self) -> int:
        raise NotImplementedError

    @property
    def qualifier(self) -> tuple[str, ...]:
        return ()

    def to_attribute(self) -> "AttributeReference":
        raise NotImplementedError


# ---------------------------------------------------------------------------------------------
# Attributes, aliases, literals


@node
class AttributeReference(NamedExpression, LeafExpression):
    """A resolved column: name, type, nullability, unique id and qualifier (``a#12``)."""

    attr_name: str
    dtype: T.DataType
    is_nullable: bool = True
    id: int = field(default_factory=new_expr_id)
    attr_qualifier: tuple[str, ...] = field(default=(), compare=False)
    # Spark's ``spark.watermarkDelayMs`` metadata: set on the event-time column by
    # ``withWatermark`` (EventTimeWatermark) and read by the streaming stateful operators.
    watermark_delay_ms: int | None = field(default=None, compare=False)

    @property
    def name(self) -> str:
        return self.attr_name

    @property
    def expr_id(self) -> int:
        return self.id

    @property
    def qualifier(self) -> tuple[str, ...]:
        return self.attr_qualifier

    @property
    def data_type(self) -> T.DataType:
        return self.dtype

    @property
    def nullable(self) -> bool:
        return self.is_nullable

    @property
    def resolved(self) -> bool:
        return True

    @property
    def references(self) -> frozenset[int]:
        return frozenset((self.id,))

    def to_attribute(self) -> "AttributeReference":
        return self

    def with_nullability(self, nullable: bool) -> "AttributeReference":
        return self if nullable == self.is_nullable else self.copy(is_nullable=nullable)

    def with_qualifier(self, qualifier: tuple[str, ...]) -> "AttributeReference":
        return self if qualifier == self.attr_qualifier else self.copy(attr_qualifier=qualifier)

    def with_name(self, name: str) -> "AttributeReference":
        return self if name == self.attr_name else self.copy(attr_name=name)

    def canonicalize_node(self) -> "AttributeReference":
        # Only the id and the type identify a column (Spark's Canonicalize.ignoreNamesTypes).
        return AttributeReference("none", self.dtype, True, self.id)

    def new_instance(self) -> "AttributeReference":
        """The same column with a fresh id (used to de-duplicate self-joins)."""
        return self.copy(id=new_expr_id())

    def simple_string(self) -> str:
        # Catalyst's typeSuffix: bigint attributes print as ``c#4L``.
        suffix = "L" if isinstance(self.dtype, T.LongType) else ""
        if self.watermark_delay_ms is not None:  # Spark's "-T<delay>ms" of event-time columns
            suffix += f"-T{self.watermark_delay_ms}ms"
        return f"{self.attr_name}#{self.id}{suffix}"

    def sql(self) -> str:
        return _quote_if_needed(self.attr_name)


@node
class Alias(NamedExpression):
    """``child AS name`` with its own id (``(a#1 + 1) AS x#5``)."""

    child: Expression
    alias_name: str
    id: int = field(default_factory=new_expr_id)
    alias_qualifier: tuple[str, ...] = field(default=(), compare=False)

    @property
    def name(self) -> str:
        return self.alias_name

    @property
    def expr_id(self) -> int:
        return self.id

    @property
    def qualifier(self) -> tuple[str, ...]:
        return self.alias_qualifier

    @property
    def data_type(self) -> T.DataType:
        return self.child.data_type

    @property
    def nullable(self) -> bool:
        return self.child.nullable

    @property
    def foldable(self) -> bool:
        return False

    @property
    def watermark_delay_ms(self) -> int | None:
        """Spark's Alias keeps a named child's metadata: an alias of an event-time column (or
        of an alias of one) is one."""
        child = self.child
        if isinstance(child, (AttributeReference, Alias)):
            return child.watermark_delay_ms
        return None

    def to_attribute(self) -> AttributeReference:
        child = self.child
        return AttributeReference(
            self.alias_name, child.data_type, child.nullable, self.id,
            self.alias_qualifier, self.watermark_delay_ms,
        )

    def canonicalize_node(self) -> "Alias":
        # The id names the value; the name is cosmetic.
        return self.copy(alias_name="none")

    def eval(self, batch: pa.RecordBatch) -> pa.Array:
        return self.child.eval(batch)

    def simple_string(self) -> str:
        delay = self.watermark_delay_ms
        suffix = "" if delay is None else f"-T{delay}ms"
        return f"{self.child.simple_string()} AS {self.alias_name}#{self.id}{suffix}"

    def sql(self) -> str:
        return f"{self.child.sql()} AS {_quote_if_needed(self.alias_name)}"


@node
class BoundReference(LeafExpression):
    """Column ``ordinal`` of the input batch (produced by :func:`bind_references`)."""

    ordinal: int
    dtype: T.DataType
    is_nullable: bool = True

    @property
    def data_type(self) -> T.DataType:
        return self.dtype

    @property
    def nullable(self) -> bool:
        return self.is_nullable

    def eval(self, batch: pa.RecordBatch) -> pa.Array:
        return batch.column(self.ordinal)

    def simple_string(self) -> str:
        return f"input[{self.ordinal}, {self.dtype.simple_string()}, {str(self.is_nullable).lower()}]"


@node
class Literal(LeafExpression):
    """A constant of a SQL type.  ``value`` is a Python value (None for NULL):
    int, float, bool, str, bytes, decimal.Decimal, datetime.date, datetime.datetime (UTC-aware)."""

    value: Any
    dtype: T.DataType

    @property
    def data_type(self) -> T.DataType:
        return self.dtype

    @property
    def nullable(self) -> bool:
        return self.value is None

    @property
    def foldable(self) -> bool:
        return True

    @property
    def resolved(self) -> bool:
        return True

    def eval(self, batch: pa.RecordBatch) -> pa.Array:
        n = batch.num_rows
        at = self.dtype.to_arrow()
        if self.value is None:
            return pa.nulls(n, type=at)
        return pa.repeat(pa.scalar(self.value, type=at), n)

    def scalar(self) -> pa.Scalar:
        return pa.scalar(self.value, type=self.dtype.to_arrow())

    def simple_string(self) -> str:
        return literal_to_string(self.value, self.dtype)

    def sql(self) -> str:
        return literal_to_sql(self.value, self.dtype)


def literal_to_string(value: Any, dtype: T.DataType) -> str:
    """Catalyst's ``Literal.toString``: ``1``, ``abc``, ``null``, ``1.5``, ``2001-01-01``."""
    if value is None:
        return "null"
    if isinstance(dtype, T.BooleanType):
        return "true" if value else "false"
    if isinstance(dtype, (T.FloatType, T.DoubleType)):
        return _float_str(float(value), isinstance(dtype, T.FloatType))
    if isinstance(dtype, (T.TimestampType, T.TimestampNTZType)):
        return value.strftime("%Y-%m-%d %H:%M:%S") + (
            f".{value.microsecond:06d}".rstrip("0") if value.microsecond else ""
        )
    return str(value)


def literal_to_sql(value: Any, dtype: T.DataType) -> str:
    """Catalyst's ``Literal.sql``: ``'abc'``, ``1L``, ``1.5D``, ``DATE '2001-01-01'``, ``NULL``."""
    if value is None:
        return "NULL"
    match dtype:
        case T.StringType():
            return "'" + str(value).replace("\\", "\\\\").replace("'", "\\'") + "'"
        case T.BooleanType():
            return "true" if value else "false"
        case T.LongType():
            return f"{value}L"
        case T.ShortType():
            return f"{value}S"
        case T.ByteType():
            return f"{value}Y"
        case T.DoubleType():
            return _float_str(float(value)) + "D"
        case T.FloatType():
            return _float_str(float(value), True) + "F"
        case T.DecimalType():
            return f"{value}BD"
        case T.DateType():
            return f"DATE '{value}'"
        case T.TimestampType():
            return f"TIMESTAMP '{literal_to_string(value, dtype)}'"
        case T.TimestampNTZType():
            return f"TIMESTAMP_NTZ '{literal_to_string(value, dtype)}'"
        case _:
            return str(value)


def _float_str(v: float, single: bool = False) -> str:
    """Java's ``Double.toString`` / ``Float.toString`` (see :mod:`ember.formatting`)."""

    return java_double_str(v, single)


_SIMPLE_IDENT_CHARS = set("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_")


def _quote_if_needed(name: str) -> str:
    if name and set(name) <= _SIMPLE_IDENT_CHARS and not name[0].isdigit():
        return name
    return "`" + name.replace("`", "``") + "`"


# ---------------------------------------------------------------------------------------------
# Unresolved expressions (produced by the SQL front end and the DataFrame API)


@node
class UnresolvedAttribute(Unevaluable, LeafExpression):
    """A column name not yet resolved: ``name_parts`` is e.g. ``('t', 'a')`` for ``t.a``.
    ``origin`` is (line, column) in the SQL text, for error positions."""

    name_parts: tuple[str, ...]
    origin: tuple[int, int] | None = field(default=None, compare=False)

    @property
    def name(self) -> str:
        return ".".join(self.name_parts)

    def simple_string(self) -> str:
        return "'" + ".".join(self.name_parts)

    def sql(self) -> str:
        return ".".join(_quote_if_needed(p) for p in self.name_parts)


@node
class UnresolvedStar(Unevaluable, LeafExpression):
    """``*`` or ``t.*`` (``target`` is the qualifier, empty for a bare ``*``)."""

    target: tuple[str, ...] = ()

    def simple_string(self) -> str:
        return ".".join(self.target + ("*",))

    def sql(self) -> str:
        return self.simple_string()


@node
class UnresolvedRegex(UnresolvedStar):
    """``df.colRegex("`a.*`")``: the columns whose names match ``pattern`` in full (of the
    relation ``target`` names, if any), expanded like ``*`` (Spark's ``UnresolvedRegex``);
    ``case_sensitive`` is the session's setting when the Column was made."""

    pattern: str = ""
    case_sensitive: bool = False

    def expand(self, output: Sequence["AttributeReference"]) -> list["AttributeReference"]:
        """The attributes of ``output`` the regex selects (none is not an error)."""
        flags = 0 if self.case_sensitive else re.IGNORECASE
        regex = re.compile(self.pattern, flags)
        if self.target:
            t = self.target[-1] if self.case_sensitive else self.target[-1].lower()
            output = [a for a in output if a.qualifier and (
                a.qualifier[-1] if self.case_sensitive else a.qualifier[-1].lower()) == t]
        return [a for a in output if regex.fullmatch(a.name)]

    def simple_string(self) -> str:
        return ".".join(self.target + (f"`{self.pattern}`",))


@node
class UnresolvedFunction(Unevaluable):
    """A function call by name, resolved by the analyzer through the function registry.
    ``filter`` is the aggregate ``FILTER (WHERE ...)`` clause; ``ignore_nulls`` is set for
    ``first(x) IGNORE NULLS`` style calls."""

    fn_name: str
    arguments: tuple[Expression, ...]
    is_distinct: bool = False
    filter: Expression | None = None
    ignore_nulls: bool = False
    origin: tuple[int, int] | None = field(default=None, compare=False)

    def simple_string(self) -> str:
        d = "distinct " if self.is_distinct else ""
        args = ", ".join(a.simple_string() for a in self.arguments)
        f = f" FILTER (WHERE {self.filter.simple_string()})" if self.filter is not None else ""
        return f"'{self.fn_name}({d}{args}){f}"


@node
class UnresolvedAlias(Unevaluable):
    """A select-list item without an alias; the analyzer names it after ``child.sql()``."""

    child: Expression

    def simple_string(self) -> str:
        return f"unresolvedalias({self.child.simple_string()})"


@node
class UnresolvedOrdinal(Unevaluable, LeafExpression):
    """``GROUP BY 1`` / ``ORDER BY 2``: a 1-based position in the select list."""

    ordinal: int

    def simple_string(self) -> str:
        return str(self.ordinal)


# ---------------------------------------------------------------------------------------------
# Sort order


class SortDirection:
    ASCENDING = "ASC"
    DESCENDING = "DESC"


class NullOrdering:
    NULLS_FIRST = "NULLS FIRST"
    NULLS_LAST = "NULLS LAST"


@node
class SortOrder(Expression):
    """``child ASC NULLS FIRST``.  Spark's defaults: ASC -> NULLS FIRST, DESC -> NULLS LAST."""

    child: Expression
    ascending: bool = True
    nulls_first: bool | None = None

    @property
    def effective_nulls_first(self) -> bool:
        return self.ascending if self.nulls_first is None else self.nulls_first

    @property
    def data_type(self) -> T.DataType:
        return self.child.data_type

    @property
    def nullable(self) -> bool:
        return self.child.nullable

    def check_input_types(self) -> str | None:
        """Spark's ``SortOrder.checkInputDataTypes``: a MAP cannot be sorted."""
        t = self.child.data_type
        if t.is_orderable:
            return None
        # imported here: expressions.common imports this module
        from ember.expressions.common import TypeCheckFailure, sql_type

        return TypeCheckFailure(
            f"The `sortorder` does not support ordering on type {sql_type(t)}.",
            "INVALID_ORDERING_TYPE", {"functionName": "`sortorder`", "dataType": sql_type(t)})

    def simple_string(self) -> str:
        d = "ASC" if self.ascending else "DESC"
        n = "NULLS FIRST" if self.effective_nulls_first else "NULLS LAST"
        return f"{self.child.simple_string()} {d} {n}"

    def sql(self) -> str:
        d = "ASC" if self.ascending else "DESC"
        n = "NULLS FIRST" if self.effective_nulls_first else "NULLS LAST"
        return f"{self.child.sql()} {d} {n}"


# ---------------------------------------------------------------------------------------------
# Helpers


def bind_references(expr: Expression, input_attrs: Iterable[NamedExpression]) -> Expression:
    """Replace every ``AttributeReference`` by a ``BoundReference`` to its position in
    ``input_attrs``.  Raises an internal error naming the attribute when it is missing."""
    attrs = list(input_attrs)
    index = {a.expr_id: i for i, a in enumerate(attrs)}

    def bind(e: Expression) -> Expression | None:
        if isinstance(e, AttributeReference):
            i = index.get(e.id)
            if i is None:
                raise InternalError(
                    f"Couldn't find {e} in [{', '.join(str(a) for a in attrs)}]"
                )
            a = attrs[i]
            return BoundReference(i, a.data_type, a.nullable)
        return None

    return expr.transform_up(bind)


def attribute_set(exprs: Iterable[Expression]) -> frozenset[int]:
    out: set[int] = set()
    for e in exprs:
        out |= e.references
    return frozenset(out)


def split_conjuncts(cond: Expression | None) -> list[Expression]:
    """``a AND (b AND c)`` -> ``[a, b, c]`` (order kept)."""
    if cond is None:
        return []
    # imported here: at module level it would close the import cycle
    # expressions.base -> expressions.predicates -> expressions.base
    from ember.expressions.predicates import And

    if isinstance(cond, And):
        return split_conjuncts(cond.left) + split_conjuncts(cond.right)
    return [cond]


def and_all(conds: Iterable[Expression]) -> Expression | None:
    """Left-deep AND of ``conds``; None when empty."""
    # imported here: at module level it would close the import cycle
    # expressions.base -> expressions.predicates -> expressions.base
    from ember.expressions.predicates import And

    result: Expression | None = None
    for c in conds:
        result = c if result is None else And(result, c)
    return result
