"""``spark.sql(query, args=...)`` and ``spark.sql("... {df} ...", df=df)``.

``args`` binds parameter markers (Spark's ``BindParameters``): a dict binds named markers
(``:name``), a list positional ones (``?``), each to a Python value (as PySpark's ``lit`` types
it) or a Column of literals (``F.array(F.lit(1))``).  Ember binds them in the text: each marker
outside string literals, quoted identifiers and comments is replaced by the value's SQL literal,
so the statement and its column names are the ones Spark's bound plan has (``SELECT :x`` with
``x=1`` is named ``1``).

Keyword arguments format the text first, as PySpark's ``SQLStringFormatter`` does: a DataFrame
becomes a temporary view named ``_pyspark_<uuid>`` (dropped after the statement is analyzed), a
Column a plain column reference, anything else its ``str``.

>>> bind_parameters("SELECT :a, ':a' -- :a", {"a": 1.5})
"SELECT 1.5D, ':a' -- :a"
"""

from __future__ import annotations

import datetime as _dt
import math
import re
import string
import uuid
from decimal import Decimal
from typing import Any, Callable

from ember.column import Column, literal_expr
from ember.errors import AnalysisError, ParseError
from ember.expressions.base import Alias, Literal, UnresolvedAttribute

__all__ = ["bind_parameters", "SQLStringFormatter"]

# Quoted text and comments (kept as they are), or a marker: ``:name`` (not ``::``) or ``?``.
_TOKENS = re.compile(
    r"'(?:\\.|[^'\\])*'|\"(?:\\.|[^\"\\])*\"|`(?:``|[^`])*`|--[^\n]*|/\*.*?\*/"
    r"|(?<![:\w]):([A-Za-z_][A-Za-z0-9_]*)|(\?)", re.S)


def _unbound(name: str) -> AnalysisError:
    return AnalysisError(
        f"Found the unbound parameter: {name}. Please, fix `args` and provide a mapping of the "
        "parameter to either a SQL literal or collection constructor functions such as `map()`, "
        "`array()`, `struct()`.", error_class="UNBOUND_SQL_PARAMETER",
        parameters={"name": name})


def python_literal_sql(value: Any) -> str:
    """SQL text of the literal PySpark's ``lit(value)`` makes (a naive datetime is the wall
    clock in the session time zone)."""
    if isinstance(value, float) and (math.isnan(value) or math.isinf(value)):
        text = "NaN" if math.isnan(value) else ("Infinity" if value > 0 else "-Infinity")
        return f"CAST('{text}' AS DOUBLE)"
    if isinstance(value, (bytes, bytearray)):
        return "X'" + bytes(value).hex().upper() + "'"
    if isinstance(value, _dt.datetime) and value.tzinfo is None:
        return f"TIMESTAMP '{value.isoformat(sep=' ')}'"
    if isinstance(value, (bool, int, float, str, Decimal, _dt.date, _dt.datetime)) or \
            value is None:
        return literal_expr(value).sql()
    raise AnalysisError(
        f"The feature is not supported: literal for '{value!r}' of {type(value)}.",
        error_class="UNSUPPORTED_FEATURE.LITERAL_TYPE",
        parameters={"value": repr(value), "type": str(type(value))})


def bind_parameters(text: str, args: Any,
                    column_sql: Callable[[Column], str] | None = None) -> str:
    """``text`` with its parameter markers replaced by the SQL of ``args`` (a dict: named
    markers; a list or tuple: positional ones).  ``column_sql`` renders a Column value."""
    def value_sql(v: Any) -> str:
        if isinstance(v, Column):
            if column_sql is None:
                raise TypeError("Column parameter values need a session")
            return column_sql(v)
        return python_literal_sql(v)

    named = isinstance(args, dict)
    if not named and not isinstance(args, (list, tuple)):
        raise AnalysisError(
            f"Argument `args` should be a dict or list, got {type(args).__name__}.",
            error_class="INVALID_TYPE", parameters={"arg_name": "args"})
    markers = [m for m in _TOKENS.finditer(text) if m.group(1) or m.group(2)]
    if any(m.group(1) for m in markers) and any(m.group(2) for m in markers):
        raise ParseError("Parameterized query must either use positional, or named parameters, "
                         "but not both.", error_class="INVALID_QUERY_MIXED_QUERY_PARAMETERS")
    out, pos, index = [], 0, 0
    for m in markers:
        name = m.group(1)
        if name is not None:
            if not named or name not in args:
                raise _unbound(name)
            value = args[name]
        else:
            if named or index >= len(args):
                raise _unbound(f"_{m.start()}")
            value = args[index]
            index += 1
        out.append(text[pos:m.start()])
        out.append(value_sql(value))
        pos = m.end()
    out.append(text[pos:])
    return "".join(out)


def _plain_reference(col: Column) -> str | None:
    e = col.expr
    if isinstance(e, Alias):
        e = e.child
    if isinstance(e, UnresolvedAttribute):
        return ".".join(p if re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", p)
                        else "`" + p.replace("`", "``") + "`" for p in e.name_parts)
    name = getattr(e, "name", None)
    if isinstance(name, str) and not isinstance(e, Literal) and hasattr(e, "qualifier"):
        return "`" + name.replace("`", "``") + "`"
    return None


class SQLStringFormatter(string.Formatter):
    """PySpark's ``SQLStringFormatter``: ``{df}`` a temporary view, ``{col}`` a column name."""

    def __init__(self, session: Any) -> None:
        super().__init__()
        self.session = session
        self.views: list[tuple[Any, str]] = []

    def get_field(self, field_name: str, args: Any, kwargs: Any) -> Any:
        obj, first = super().get_field(field_name, args, kwargs)
        return self._convert(obj, field_name), first

    def _convert(self, value: Any, field_name: str) -> Any:
        if isinstance(value, Column):
            ref = _plain_reference(value)
            if ref is None:
                raise AnalysisError(
                    f"Value `{value!r}` in `{field_name}` should be a plain column reference "
                    "such as `df.col` or `col('column')`.",
                    error_class="VALUE_NOT_PLAIN_COLUMN_REFERENCE",
                    parameters={"val": repr(value), "field_name": field_name})
            return ref
        if hasattr(value, "createOrReplaceTempView") and hasattr(value, "plan"):
            for df, name in self.views:
                if df is value:
                    return name
            name = "_pyspark_" + uuid.uuid4().hex
            self.views.append((value, name))
            value.createOrReplaceTempView(name)
            return name
        return value

    def clear(self) -> None:
        """Drop the temporary views this formatter made."""
        for _, name in self.views:
            self.session.session_catalog.drop_temp_view(name, if_exists=True)
        self.views = []
