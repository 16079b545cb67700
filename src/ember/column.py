"""``Column``: a PySpark-style handle on an (unresolved or resolved) expression.

A Column only builds expression trees; the analyzer resolves and type-checks them when the
DataFrame that uses them is created, exactly as for SQL text.

>>> from ember.functions import col, lit
>>> (col("a") + 1).alias("a1")
Column<'(a + 1) AS a1'>
"""

from __future__ import annotations

import datetime as _dt
from decimal import Decimal
from typing import Any

from ember import types as T
from ember.expressions.base import (
    Alias, Expression, Literal, SortOrder, UnresolvedAttribute, UnresolvedStar, UnresolvedFunction,
)
from ember.errors import AnalysisError
from ember.expressions.generators import MultiAlias
from ember.pyspark_api import unsupported_method
from ember.expressions.windows import UnspecifiedFrame, WindowExpression, WindowSpecDefinition
from ember.sql import parse_data_type

__all__ = ["Column", "to_expr", "literal_expr", "parse_column_name", "column_from_name"]


# ---------------------------------------------------------------------------------------------
# Python values and names -> expressions


def literal_expr(value: Any) -> Literal:
    """The literal for a Python value, typed as PySpark's ``lit`` types it.

    ``int`` -> int (bigint when it does not fit), ``float`` -> double, ``str`` -> string,
    ``bool`` -> boolean, ``Decimal`` -> decimal(p, s), ``date``, ``datetime`` (naive = UTC),
    ``bytes`` -> binary, ``None`` -> void.
    """
    if value is None:
        return Literal(None, T.NULL)
    if isinstance(value, bool):
        return Literal(value, T.BOOLEAN)
    if isinstance(value, int):
        if T.INT.min_value <= value <= T.INT.max_value:
            return Literal(value, T.INT)
        if T.LONG.min_value <= value <= T.LONG.max_value:
            return Literal(value, T.LONG)
        d = Decimal(value)
        return Literal(d, _decimal_type_of(d))
    if isinstance(value, float):
        return Literal(value, T.DOUBLE)
    if isinstance(value, str):
        return Literal(value, T.STRING)
    if isinstance(value, (bytes, bytearray, memoryview)):
        return Literal(bytes(value), T.BINARY)
    if isinstance(value, Decimal):
        return Literal(value, _decimal_type_of(value))
    if isinstance(value, _dt.datetime):
        if value.tzinfo is None:
            value = value.replace(tzinfo=_dt.timezone.utc)
        return Literal(value.astimezone(_dt.timezone.utc), T.TIMESTAMP)
    if isinstance(value, _dt.date):
        return Literal(value, T.DATE)

    raise AnalysisError(
        f"The feature is not supported: literal for '{value!r}' of {type(value)}.",
        error_class="UNSUPPORTED_FEATURE.LITERAL_TYPE",
        parameters={"value": repr(value), "type": str(type(value))},
    )


def _decimal_type_of(d: Decimal) -> T.DecimalType:
    """Spark's ``DecimalType.fromDecimal``: precision and scale of the literal's digits."""
    sign, digits, exp = d.as_tuple()
    assert isinstance(exp, int)
    scale = max(0, -exp)
    precision = max(len(digits) + max(exp, 0), scale, 1)
    if precision < scale:
        precision = scale
    return T.DecimalType(min(precision, 38), min(scale, 38))


def parse_column_name(name: str) -> tuple[str, ...]:
    """``'t.a'`` -> ``('t', 'a')``; backquotes protect dots (```a.b``` -> ``('a.b',)``)."""
    parts: list[str] = []
    cur: list[str] = []
    i, n = 0, len(name)
    in_quote = False
    while i < n:
        c = name[i]
        if in_quote:
            if c == "`":
                if i + 1 < n and name[i + 1] == "`":
                    cur.append("`")
                    i += 2
                    continue
                in_quote = False
            else:
                cur.append(c)
        elif c == "`":
            in_quote = True
        elif c == ".":
            parts.append("".join(cur))
            cur = []
        else:
            cur.append(c)
        i += 1
    parts.append("".join(cur))
    return tuple(parts)


def column_from_name(name: str) -> "Column":
    """``col(name)``: ``*`` and ``t.*`` are stars, anything else an unresolved column."""
    if name == "*":
        return Column(UnresolvedStar(()))
    if name.endswith(".*"):
        return Column(UnresolvedStar(parse_column_name(name[:-2])))
    return Column(UnresolvedAttribute(parse_column_name(name)))


def to_expr(value: Any) -> Expression:
    """A Column's expression, or a literal for any other Python value."""
    if isinstance(value, Column):
        return value._expr
    if isinstance(value, Expression):
        return value
    return literal_expr(value)


def _col_or_name(value: Any) -> Expression:
    """Argument of functions that take a column *or a column name* (``sum("b")``)."""
    if isinstance(value, str):
        return column_from_name(value)._expr
    return to_expr(value)


def _cast_type(data_type: Any) -> T.DataType:
    data_type = T.as_ember_type(data_type)  # a PySpark type too
    if isinstance(data_type, T.DataType):
        return data_type
    if isinstance(data_type, str):
        return parse_data_type(data_type)
    raise TypeError(f"Cannot cast to {data_type!r}: expected a type string, an ember type or a "
                    "PySpark type")


# ---------------------------------------------------------------------------------------------


class Column:
    """A column expression, built with PySpark's operators and methods.

    >>> from ember.functions import col
    >>> ((col("a") > 1) & col("b").isNotNull()).expr.sql()
    '((a > 1) AND (b IS NOT NULL))'
    """

    __slots__ = ("_expr",)

    def __init__(self, expr: Expression) -> None:
        self._expr = expr

    @property
    def expr(self) -> Expression:
        """The expression tree this column stands for."""
        return self._expr

    # -- arithmetic ---------------------------------------------------------------------------
    def _bin(self, cls_name: str, module: str, other: Any, reverse: bool = False) -> "Column":
        cls = _expr_class(module, cls_name)
        left, right = self._expr, to_expr(other)
        if reverse:
            left, right = right, left
        return Column(cls(left, right))

    def __add__(self, other: Any) -> "Column":
        return self._bin("Add", "arithmetic", other)

    def __radd__(self, other: Any) -> "Column":
        return self._bin("Add", "arithmetic", other, True)

    def __sub__(self, other: Any) -> "Column":
        return self._bin("Subtract", "arithmetic", other)

    def __rsub__(self, other: Any) -> "Column":
        return self._bin("Subtract", "arithmetic", other, True)

    def __mul__(self, other: Any) -> "Column":
        return self._bin("Multiply", "arithmetic", other)

    def __rmul__(self, other: Any) -> "Column":
        return self._bin("Multiply", "arithmetic", other, True)

    def __truediv__(self, other: Any) -> "Column":
        return self._bin("Divide", "arithmetic", other)

    def __rtruediv__(self, other: Any) -> "Column":
        return self._bin("Divide", "arithmetic", other, True)

    def __mod__(self, other: Any) -> "Column":
        return self._bin("Remainder", "arithmetic", other)

    def __rmod__(self, other: Any) -> "Column":
        return self._bin("Remainder", "arithmetic", other, True)

    def __neg__(self) -> "Column":
        # PySpark's ``-col`` is the function ``negative`` (named ``negative(a)``, not ``(- a)``)
        return Column(_fn("negative", self._expr))

    def __pos__(self) -> "Column":
        return self

    # -- comparison ---------------------------------------------------------------------------
    def __eq__(self, other: Any) -> "Column":  # type: ignore[override]
        return self._bin("EqualTo", "predicates", other)

    def __ne__(self, other: Any) -> "Column":  # type: ignore[override]
        return Column(_expr_class("predicates", "Not")(self._bin("EqualTo", "predicates", other)._expr))

    def __lt__(self, other: Any) -> "Column":
        return self._bin("LessThan", "predicates", other)

    def __le__(self, other: Any) -> "Column":
        return self._bin("LessThanOrEqual", "predicates", other)

    def __gt__(self, other: Any) -> "Column":
        return self._bin("GreaterThan", "predicates", other)

    def __ge__(self, other: Any) -> "Column":
        return self._bin("GreaterThanOrEqual", "predicates", other)

    def eqNullSafe(self, other: Any) -> "Column":  # noqa: N802
        """``a <=> b``: equality where NULL equals NULL."""
        return self._bin("EqualNullSafe", "predicates", other)

    # -- boolean ------------------------------------------------------------------------------
    def __and__(self, other: Any) -> "Column":
        return self._bin("And", "predicates", other)

    def __rand__(self, other: Any) -> "Column":
        return self._bin("And", "predicates", other, True)

    def __or__(self, other: Any) -> "Column":
        return self._bin("Or", "predicates", other)

    def __ror__(self, other: Any) -> "Column":
        return self._bin("Or", "predicates", other, True)

    def __invert__(self) -> "Column":
        return Column(_expr_class("predicates", "Not")(self._expr))

    def __bool__(self) -> bool:
        raise ValueError(
            "Cannot convert column into bool: please use '&' for 'and', '|' for 'or', "
            "'~' for 'not' when building DataFrame boolean expressions."
        )

    __hash__ = None  # type: ignore[assignment]  # == builds an expression, as in PySpark

    def isNull(self) -> "Column":  # noqa: N802
        return Column(_expr_class("predicates", "IsNull")(self._expr))

    def isNotNull(self) -> "Column":  # noqa: N802
        return Column(_expr_class("predicates", "IsNotNull")(self._expr))

    def isin(self, *values: Any) -> "Column":
        """``a IN (v1, v2, ...)``; also accepts one list: ``isin([1, 2])``."""
        if len(values) == 1 and isinstance(values[0], (list, tuple, set, frozenset)):
            values = tuple(values[0])
        items = tuple(to_expr(v) for v in values)
        return Column(_expr_class("predicates", "In")(self._expr, items))

    def between(self, lower: Any, upper: Any) -> "Column":
        """``lower <= a AND a <= upper`` (what Spark parses ``BETWEEN`` into)."""
        ge = _expr_class("predicates", "GreaterThanOrEqual")(self._expr, to_expr(lower))
        le = _expr_class("predicates", "LessThanOrEqual")(self._expr, to_expr(upper))
        return Column(_expr_class("predicates", "And")(ge, le))

    def like(self, pattern: str) -> "Column":
        """SQL ``LIKE`` with ``%`` and ``_`` wildcards."""
        return Column(_expr_class("predicates", "Like")(self._expr, to_expr(pattern)))

    def ilike(self, pattern: str) -> "Column":
        return Column(_fn("ilike", self._expr, to_expr(pattern)))

    def rlike(self, pattern: str) -> "Column":
        return Column(_fn("rlike", self._expr, to_expr(pattern)))

    def startswith(self, other: Any) -> "Column":
        return Column(_fn("startswith", self._expr, to_expr(other)))

    def endswith(self, other: Any) -> "Column":
        return Column(_fn("endswith", self._expr, to_expr(other)))

    def contains(self, other: Any) -> "Column":
        return Column(_fn("contains", self._expr, to_expr(other)))

    def substr(self, startPos: Any, length: Any) -> "Column":  # noqa: N803
        return Column(_fn("substring", self._expr, to_expr(startPos), to_expr(length)))

    def bitwiseAND(self, other: Any) -> "Column":  # noqa: N802
        """``a & b``."""
        return self._bin("BitwiseAnd", "bitwise", other)

    def bitwiseOR(self, other: Any) -> "Column":  # noqa: N802
        """``a | b``."""
        return self._bin("BitwiseOr", "bitwise", other)

    def bitwiseXOR(self, other: Any) -> "Column":  # noqa: N802
        """``a ^ b``."""
        return self._bin("BitwiseXor", "bitwise", other)

    def isNaN(self) -> "Column":  # noqa: N802
        """``isnan(self)``: true where the value is NaN (false for NULL)."""
        return Column(_fn("isnan", self._expr))

    def transform(self, f: Any) -> "Column":
        """``f(self)``: a function of a Column applied to this one."""
        return f(self)

    # -- naming, typing, ordering -------------------------------------------------------------
    def alias(self, *alias: str, **kwargs: Any) -> "Column":
        """``expr AS name``; several names for a generator's columns
        (``explode(m).alias("k", "v")``, Spark's MultiAlias)."""
        if len(alias) > 1:
            return Column(MultiAlias(self._expr, tuple(alias)))
        if len(alias) != 1:
            raise ValueError("alias() needs a name")
        return Column(Alias(self._expr, alias[0]))

    name = alias

    def cast(self, dataType: Any) -> "Column":  # noqa: N803
        """``CAST(a AS type)``; ``dataType`` is a type string (``'decimal(10,2)'``) or an ember
        type."""
        cast_cls = _expr_class("cast", "Cast")
        return Column(cast_cls(self._expr, _cast_type(dataType)))

    astype = cast

    def try_cast(self, dataType: Any) -> "Column":  # noqa: N803
        cast_cls = _expr_class("cast", "Cast")
        return Column(cast_cls(self._expr, _cast_type(dataType), ansi=False))

    def asc(self) -> "Column":
        return Column(SortOrder(self._expr, True, None))

    def asc_nulls_first(self) -> "Column":
        return Column(SortOrder(self._expr, True, True))

    def asc_nulls_last(self) -> "Column":
        return Column(SortOrder(self._expr, True, False))

    def desc(self) -> "Column":
        return Column(SortOrder(self._expr, False, None))

    def desc_nulls_first(self) -> "Column":
        return Column(SortOrder(self._expr, False, True))

    def desc_nulls_last(self) -> "Column":
        return Column(SortOrder(self._expr, False, False))

    # -- windows ------------------------------------------------------------------------------
    def over(self, window: Any = None) -> "Column":
        """This aggregate or window function over ``window`` (an ``ember.window.WindowSpec``;
        none: the whole input, ``Window.partitionBy()``).

        >>> from ember.window import Window
        >>> from ember import functions as F
        >>> F.sum("x").over(Window.partitionBy("a")).expr.sql()
        'sum(x) OVER (PARTITION BY a )'
        """
        spec = WindowSpecDefinition((), (), UnspecifiedFrame()) if window is None else getattr(
            window, "expr", None)
        if not isinstance(spec, WindowSpecDefinition):
            raise TypeError(f"over() takes a WindowSpec, not {type(window).__name__}")
        return Column(WindowExpression(self._expr, spec))

    # -- CASE WHEN ----------------------------------------------------------------------------
    def when(self, condition: "Column", value: Any) -> "Column":
        """Add a branch to a ``when(...)`` chain."""
        case_cls = _expr_class("conditional", "CaseWhen")
        e = self._expr
        if not isinstance(e, case_cls) or e.else_value is not None:
            raise TypeError("when() can only be applied on a Column previously generated by "
                            "when() and before otherwise()")
        return Column(case_cls(e.conditions + (to_expr(condition),), e.values + (to_expr(value),),
                               None))

    def otherwise(self, value: Any) -> "Column":
        """The ELSE value of a ``when(...)`` chain."""
        case_cls = _expr_class("conditional", "CaseWhen")
        e = self._expr
        if not isinstance(e, case_cls) or e.else_value is not None:
            raise TypeError("otherwise() can only be applied on a Column previously generated "
                            "by when() and only once")
        return Column(case_cls(e.conditions, e.values, to_expr(value)))

    # -- display ------------------------------------------------------------------------------
    def __repr__(self) -> str:
        try:
            text = self._expr.sql()
        except Exception:  # unresolved nodes may not render as SQL; fall back to the tree form
            text = self._expr.simple_string()
        return f"Column<'{text}'>"

    def __iter__(self) -> Any:
        raise TypeError("Column is not iterable")

    def __getattr__(self, item: str) -> Any:
        # PySpark: ``col.field`` is ``col["field"]`` (names starting with ``_`` stay attributes)
        if item.startswith("_"):
            raise AttributeError(f"'Column' object has no attribute '{item}'")
        error = unsupported_method("Column", item)
        if error is not None:  # a PySpark Column method Ember leaves out, not a field
            raise error
        return self[item]

    def __getitem__(self, key: Any) -> "Column":
        """``c[0]``, ``c["k"]``, ``c["field"]`` (Spark's ``UnresolvedExtractValue``: array
        element, map value or struct field by the column's type); ``c[1:3]`` is
        ``substr(c, 1, 2)``, as in PySpark."""
        if isinstance(key, slice):
            if key.step is not None:
                raise ValueError("Slice with step is not supported.")
            return self.substr(key.start, key.stop)
        return Column(UnresolvedFunction("(extract_value)", (self._expr, to_expr(key))))

    def getItem(self, key: Any) -> "Column":  # noqa: N802
        """The element at ``key`` of an array (0-based) or the value under ``key`` of a map."""
        return self[key]

    def getField(self, name: Any) -> "Column":  # noqa: N802
        """The struct field ``name``."""
        return self[name]


def _expr_class(module: str, name: str) -> Any:
    """Expression classes live in modules owned by the expressions engineer; import lazily so the
    public API imports even while one of them is being rewritten."""
    import importlib

    mod = importlib.import_module(f"ember.expressions.{module}")
    return getattr(mod, name)


def _fn(name: str, *args: Expression, **kw: Any) -> Expression:
    return UnresolvedFunction(name, tuple(args), **kw)
