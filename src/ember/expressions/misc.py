"""Structs, function-call display wrappers, the generic scalar function node, and the
"pretty" SQL Spark uses to name unaliased columns.

- :class:`CreateNamedStruct` ``named_struct('x', a, ...)``, also ``struct(a, b)`` and ``(a, b)``.
- :class:`FunctionCall` keeps how the user wrote a function whose implementation is another
  expression (Spark's RuntimeReplaceable): ``nullif(a, 1)`` is evaluated as
  ``If(EqualTo(a, 1), NULL, a)`` but displays and names itself ``nullif(a, 1)``.
- :class:`ScalarFunction` is one node for every table-driven built-in (``upper``, ``SQRT``,
  ``date_add`` ...); its behaviour lives in a :class:`FunctionSpec` (argument coercion, result
  type, vectorized kernel) registered by ``strings``/``mathfuncs``/``datetime``.
- :func:`to_pretty_sql` is Spark's ``toPrettySQL``: like ``sql()`` but literals print without
  quotes/suffixes (``(s = x)``, ``(m * 1)``) -- use it to name unaliased select items.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, ClassVar

import pyarrow as pa
import pyarrow.compute as pc

from ember import types as T
from ember.expressions.base import (
    Expression, LeafExpression, Literal, literal_to_string, AttributeReference,
)
from ember.expressions.common import (
    TypeCheckFailure, sql_type, to_array, unexpected_input_type, eval_null_intolerant,
)
from ember.trees import node
from ember.coercion import coerce_all, implicit_cast
from ember.expressions.arithmetic import UnaryMinus
from ember.expressions.subquery import OuterReference

__all__ = ["CreateNamedStruct", "FunctionCall", "ScalarFunction", "FunctionSpec",
           "PrettyAttribute", "to_pretty_sql", "FUNCTION_SPECS", "register"]


@node
class CreateNamedStruct(Expression):
    """A struct value from ``names`` and ``values`` (``fn_name`` is ``struct`` for
    ``struct(a, b)``/``(a, b)``, which displays only the values)."""

    names: tuple[str, ...]
    values: tuple[Expression, ...]
    fn_name: str = field(default="named_struct", compare=False)

    @property
    def data_type(self) -> T.DataType:
        return T.StructType(tuple(T.StructField(n, v.data_type, v.nullable)
                                  for n, v in zip(self.names, self.values)))

    @property
    def nullable(self) -> bool:
        return False

    def eval(self, batch: pa.RecordBatch) -> pa.Array:
        n = batch.num_rows
        arrays = [to_array(v.eval(batch), n) for v in self.values]
        at = self.data_type.to_arrow()
        arrays = [a if a.type == f.type else a.cast(f.type) for a, f in zip(arrays, at)]
        if not arrays:
            return pa.StructArray.from_arrays([], fields=[]) if n == 0 else pa.array(
                [{}] * n, type=at)
        return pa.StructArray.from_arrays(arrays, fields=list(at))

    def simple_string(self) -> str:
        if self.fn_name == "struct":
            inner = ", ".join(f"{n}, {v.simple_string()}" for n, v in zip(self.names, self.values))
            return f"struct({inner})"
        inner = ", ".join(f"{n}, {v.simple_string()}" for n, v in zip(self.names, self.values))
        return f"named_struct({inner})"

    def sql(self) -> str:
        if self.fn_name == "struct":
            return f"struct({', '.join(v.sql() for v in self.values)})"
        # Spark names the column ``named_struct(x, a)`` (field names unquoted).
        inner = ", ".join(f"{n}, {v.sql()}" for n, v in zip(self.names, self.values))
        return f"named_struct({inner})"


@node
class FunctionCall(Expression):
    """A function evaluated as ``replacement`` but shown as ``fn_name(args)``.

    ``arg_sql``/``arg_strings`` are the argument renderings captured at construction (Spark's
    ``InheritAnalysisRules`` also shows the original, un-coerced parameters)."""

    fn_name: str
    replacement: Expression
    arg_sql: tuple[str, ...] = field(default=(), compare=False)
    arg_strings: tuple[str, ...] = field(default=(), compare=False)
    arg_pretty: tuple[str, ...] = field(default=(), compare=False)

    @staticmethod
    def of(fn_name: str, args: tuple[Expression, ...], replacement: Expression) -> "FunctionCall":
        return FunctionCall(fn_name, replacement, tuple(a.sql() for a in args),
                            tuple(a.simple_string() for a in args),
                            tuple(to_pretty_sql(a) for a in args))

    @property
    def data_type(self) -> T.DataType:
        return self.replacement.data_type

    @property
    def nullable(self) -> bool:
        return self.replacement.nullable

    @property
    def foldable(self) -> bool:
        return self.replacement.foldable

    def eval(self, batch: pa.RecordBatch) -> pa.Array:
        return self.replacement.eval(batch)

    def simple_string(self) -> str:
        return f"{self.fn_name}({', '.join(self.arg_strings)})"

    def sql(self) -> str:
        return f"{self.fn_name}({', '.join(self.arg_sql)})"


# ---------------------------------------------------------------------------------------------
# Table-driven scalar functions


Kernel = Callable[[list[pa.Array], "ScalarFunction", pa.RecordBatch], pa.Array]


@dataclass(frozen=True)
class FunctionSpec:
    """How one built-in behaves.

    ``inputs(arg_types)`` returns the type each argument is implicitly cast to (None: leave it;
    the whole result None: the argument types are unacceptable -> ``check_input_types`` fails);
    ``result(arg_types)`` the result type; ``kernel(arrays, node, batch)`` computes it.
    """

    key: str
    inputs: Callable[[tuple[T.DataType, ...]], tuple[T.DataType | None, ...] | None]
    result: Callable[[tuple[T.DataType, ...]], T.DataType]
    kernel: Kernel
    may_fail: bool = False
    null_intolerant: bool = True
    expected: str = '"ANY"'
    node_result: Callable[["ScalarFunction"], T.DataType] | None = None
    check: Callable[["ScalarFunction"], str | None] | None = None
    #: reads the session time zone from ``node.options[0]`` (set by the analyzer's
    #: ResolveTimeZone, as Spark's TimeZoneAwareExpression.timeZoneId)
    time_zone_aware: bool = False
    #: the kernel reads ``node.ansi`` (Spark's evalMode / failOnError; switched to False by the
    #: analyzer's ResolveEvalMode when ``spark.sql.ansi.enabled`` is false)
    ansi_aware: bool = False
    #: the node's nullability (None: always nullable), e.g. ``hash(...)`` is never NULL, and
    #: :func:`nullable_from_arguments` for a result NULL only for a NULL argument
    nullable: Callable[["ScalarFunction"], bool] | None = None


def nullable_from_arguments(node: "ScalarFunction") -> bool:
    """A :attr:`FunctionSpec.nullable`: NULL exactly when an argument may be."""
    return any(a.nullable for a in node.arguments)


FUNCTION_SPECS: dict[str, FunctionSpec] = {}

#: NULL-returning functions whose arguments Spark still evaluates all (no short-circuit after a
#: NULL argument), so an error in a later argument is raised: ``concat(NULL, CAST('x' AS INT))``.
_EAGER_ARGUMENTS = frozenset({"concat"})


def register(spec: FunctionSpec) -> FunctionSpec:
    FUNCTION_SPECS[spec.key] = spec
    return spec


@node
class ScalarFunction(Expression):
    """A built-in scalar function: ``fn_name`` is how Spark displays it (``upper``, ``SQRT``,
    ``ceiling``), ``key`` selects its :class:`FunctionSpec`."""

    fn_name: str
    arguments: tuple[Expression, ...]
    key: str = ""
    options: tuple[Any, ...] = ()
    #: ANSI (True) or legacy evaluation, for specs that are ``ansi_aware``
    ansi: bool = True

    @property
    def ansi_mode(self) -> bool:
        return self.ansi and self.spec.ansi_aware

    def to_legacy_mode(self) -> Expression:
        return self.copy(ansi=False)

    @property
    def spec(self) -> FunctionSpec:
        key = self.key or self.fn_name.lower()
        hit = FUNCTION_SPECS.get(key)
        if hit is None:
            # The specs register when their modules load (through the function registry);
            # a process that only unpickled a plan (a Spark executor) loads them here.
            # imported here: at module level it would close the import cycle
            # expressions.misc -> expressions.registry -> expressions.misc
            import ember.expressions.registry  # noqa: F401

            hit = FUNCTION_SPECS[key]
        return hit

    @property
    def arg_types(self) -> tuple[T.DataType, ...]:
        return tuple(a.data_type for a in self.arguments)

    @property
    def data_type(self) -> T.DataType:
        spec = self.spec
        if spec.node_result is not None:
            return spec.node_result(self)
        return spec.result(self.arg_types)

    @property
    def nullable(self) -> bool:
        spec = self.spec
        return True if spec.nullable is None else spec.nullable(self)

    @property
    def deterministic(self) -> bool:
        return self.key not in ("current_date", "current_timestamp") and all(
            a.deterministic for a in self.arguments)

    def check_input_types(self) -> str | None:
        targets = self.spec.inputs(self.arg_types)
        if targets is None:
            for i, a in enumerate(self.arguments, 1):
                return unexpected_input_type(i, self.spec.expected, a)
            return TypeCheckFailure("bad arguments", "UNEXPECTED_INPUT_TYPE")
        for i, (a, t) in enumerate(zip(self.arguments, targets), 1):
            if t is not None and a.data_type != t and not isinstance(a.data_type, T.NullType):
                return unexpected_input_type(i, sql_type(t), a)
        if self.spec.check is not None:
            return self.spec.check(self)
        return None

    def coerce_children(self) -> Expression:
        """Implicit casts of the arguments to the spec's input types (called by coercion)."""

        targets = self.spec.inputs(self.arg_types)
        if targets is None:
            return self
        new = []
        changed = False
        for a, t in zip(self.arguments, targets):
            if t is not None and a.data_type != t:
                c = implicit_cast(a, t)
                if c is not None:
                    new.append(c)
                    changed = True
                    continue
            new.append(a)
        return self.copy(arguments=tuple(new)) if changed else self

    def eval(self, batch: pa.RecordBatch) -> pa.Array:
        n = batch.num_rows
        if self.spec.null_intolerant and self.spec.key not in _EAGER_ARGUMENTS:
            arrays = eval_null_intolerant(self.arguments, batch)
        else:
            arrays = [to_array(a.eval(batch), n) for a in self.arguments]
        out_type = self.data_type.to_arrow()
        if self.spec.null_intolerant and any(pa.types.is_null(a.type) for a in arrays):
            return pa.nulls(n, out_type)
        out = to_array(self.spec.kernel(arrays, self, batch), n)
        return out if out.type == out_type else out.cast(out_type)

    @property
    def may_fail_at_runtime(self) -> bool:  # type: ignore[override]
        return self.spec.may_fail

    def simple_string(self) -> str:
        return f"{self.fn_name}({', '.join(a.simple_string() for a in self.arguments)})"

    def sql(self) -> str:
        return f"{self.fn_name}({', '.join(a.sql() for a in self.arguments)})"


# ---------------------------------------------------------------------------------------------
# Pretty SQL (column names)


@node
class PrettyAttribute(LeafExpression):
    """Placeholder printing ``text`` in both renderings (Spark's PrettyAttribute)."""

    text: str
    dtype: T.DataType

    @property
    def data_type(self) -> T.DataType:
        return self.dtype

    @property
    def resolved(self) -> bool:
        return True

    def simple_string(self) -> str:
        return self.text

    def sql(self) -> str:
        return self.text


def to_pretty_sql(e: Expression, implicit_casts: dict[int, object] | None = None,
                  time_zone: str = "UTC") -> str:
    """Spark's ``toPrettySQL`` (``usePrettyExpression``): the auto-generated name of an unaliased
    select item and the expression text of error messages.  Like ``sql()`` but attributes print
    their bare name, string literals unquoted, numeric literals without suffix (``1.5``, not
    ``1.5D``), NULL as ``NULL``, functions shown as called (:class:`FunctionCall` with its
    arguments' pretty forms), and the casts the analyzer inserted (``implicit_casts``: ids of
    those ``Cast`` nodes) omitted.  A TIMESTAMP literal shows its wall time in ``time_zone`` (the
    session time zone: Spark's ``Literal.toString``).

    >>> from ember.expressions.predicates import EqualTo
    >>> to_pretty_sql(EqualTo(Literal("a", T.STRING), Literal(1, T.LONG)))
    '(a = 1)'
    """

    def pretty(x: Expression) -> Expression:
        if implicit_casts and id(x) in implicit_casts and hasattr(x, "child"):
            inner = pretty(x.child)  # type: ignore[attr-defined]
            if isinstance(inner, UnaryMinus) or getattr(inner, "is_unary_minus", False):
                # Spark shows the cast's child as text: a cast RANGE bound ``-1`` is
                # ``(- 1) FOLLOWING``, not ``1 PRECEDING`` (WindowFrameCoercion; also an
                # interval bound on a numeric key: ``(- INTERVAL '1' DAY) FOLLOWING``)
                return PrettyAttribute(inner.sql(), x.data_type)
            return inner
        match x:
            case AttributeReference(attr_name=name, dtype=dt):
                return PrettyAttribute(name, dt)
            case OuterReference(attr=a):
                return PrettyAttribute(x.sql(), a.data_type)
            case Literal(value=None, dtype=dt):
                return PrettyAttribute("NULL", dt)
            case Literal(value=v, dtype=T.StringType() as dt):
                return PrettyAttribute(str(v), dt)
            case Literal(value=v, dtype=dt) if dt.is_numeric:
                return PrettyAttribute(literal_to_string(v, dt), dt)
            case Literal(value=v, dtype=T.TimestampType() as dt):
                return PrettyAttribute(f"TIMESTAMP '{literal_to_string(_wall(v, time_zone), dt)}'",
                                       dt)
            case FunctionCall(fn_name=fn, arg_pretty=args, arg_sql=sql_args):
                return PrettyAttribute(f"{fn}({', '.join(args or sql_args)})", x.data_type)
            case _:
                kids = x.children
                if kids:
                    return x.with_children(tuple(pretty(k) for k in kids))
                return x

    return pretty(e).sql()


def _wall(utc: Any, time_zone: str) -> Any:
    """The wall time (naive datetime) of an aware UTC datetime in ``time_zone``."""
    ts = pa.array([utc.replace(tzinfo=None)], pa.timestamp("us")).cast(pa.timestamp("us", "UTC"))
    return pc.local_timestamp(ts.cast(pa.timestamp("us", tz=time_zone)))[0].as_py()


_ = (pc, ClassVar)


@node
class CreateArray(Expression):
    """``array(e1, e2, ...)`` (elements must share one type)."""

    items: tuple[Expression, ...]

    @property
    def data_type(self) -> T.DataType:
        et: T.DataType = T.NULL
        for i in self.items:
            if not isinstance(i.data_type, T.NullType):
                et = i.data_type
                break
        return T.ArrayType(et, any(i.nullable for i in self.items))

    @property
    def nullable(self) -> bool:
        return False

    @property
    def foldable(self) -> bool:
        return all(i.foldable for i in self.items)  # ``array()`` too, as Catalyst's

    def coerce_arguments(self, legacy: bool) -> Expression:
        """The elements cast to their wider common type (Spark's FunctionArgumentConversion:
        ``findWiderCommonType``, so ``array(0, 0.75)`` is ``array<decimal(12,2)>``); unchanged
        when there is none (then :meth:`check_input_types` reports DATA_DIFF_TYPES)."""
        items = coerce_all(self.items, legacy=legacy)
        if items is None or all(a is b for a, b in zip(items, self.items)):
            return self
        return self.copy(items=items)

    def check_input_types(self) -> str | None:
        types = [i.data_type for i in self.items if not isinstance(i.data_type, T.NullType)]
        if any(t != types[0] for t in types):
            listed = ", ".join(sql_type(i.data_type) for i in self.items)
            return TypeCheckFailure(
                f"Input to `array` should all be the same type, but it's [{listed}].",
                "DATA_DIFF_TYPES", {"functionName": "`array`", "dataType": f"[{listed}]"})
        return None

    def eval(self, batch: pa.RecordBatch) -> pa.Array:
        import numpy as np

        n, k = batch.num_rows, len(self.items)
        et = self.data_type.element_type.to_arrow()  # type: ignore[attr-defined]
        arrays = [to_array(i.eval(batch), n) for i in self.items]
        arrays = [a if a.type == et else a.cast(et) for a in arrays]
        offsets = pa.array(np.arange(0, n * k + 1, k if k else 1)[: n + 1] if k else
                           np.zeros(n + 1, dtype=np.int64), type=pa.int64())
        if k == 0:
            return pa.LargeListArray.from_arrays(offsets, pa.array([], type=et))
        combined = pa.concat_arrays(arrays)
        order = (np.arange(k)[None, :] * n + np.arange(n)[:, None]).reshape(-1)
        values = pc.take(combined, pa.array(order))
        return pa.LargeListArray.from_arrays(offsets, values)

    def simple_string(self) -> str:
        return f"array({', '.join(i.simple_string() for i in self.items)})"

    def sql(self) -> str:
        return f"array({', '.join(i.sql() for i in self.items)})"


def _e_kernel(a, node, batch):
    import math

    return pa.repeat(pa.scalar(math.e if node.key == "e" else math.pi), batch.num_rows)


register(FunctionSpec("e", lambda t: (), lambda t: T.DOUBLE, _e_kernel, null_intolerant=False))
register(FunctionSpec("pi", lambda t: (), lambda t: T.DOUBLE, _e_kernel, null_intolerant=False))


def _typeof_kernel(a, node, batch):
    return pa.repeat(pa.scalar(node.arguments[0].data_type.simple_string(), pa.string()),
                     batch.num_rows)


#: ``typeof(x)``: the catalog string of ``x``'s type (Spark's TypeOf), never NULL
register(FunctionSpec("typeof", lambda t: (None,), lambda t: T.STRING, _typeof_kernel,
                      null_intolerant=False, nullable=lambda n: False))
