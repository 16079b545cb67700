"""ResolvePivot: a ``Pivot`` becomes aggregates (Spark's ``Analyzer.ResolvePivot``).

SQL ``SELECT * FROM s PIVOT (sum(amt) FOR yr IN (2023, 2024 AS y24))`` over ``s(cat, yr, amt)``
groups by every column neither the pivot column nor the aggregates read (``cat``; the DataFrame's
``groupBy(...).pivot(...)`` names them) and makes one column per pivot value (and aggregate).
When every aggregate's result type is one ``PivotFirst`` supports (numeric or boolean), Spark
aggregates twice, and so does Ember::

    Aggregate [cat], [cat, first(if ((yr <=> 2023), sum(amt), null), true) AS 2023,
    |                      first(if ((yr <=> 2024), sum(amt), null), true) AS y24]
    +- Aggregate [cat, yr], [cat, yr, sum(amt) AS sum(amt)]
       +- s

(Spark's second aggregate is ``PivotFirst``, which keeps, per group, the value of the one row of
each pivot value; ``first(..., ignoreNulls)`` over the rows of one group keeps the same value.) So a
pivot value with no row gives NULL, even for ``count``. Otherwise each aggregate function reads
its arguments only on the rows of its pivot value, in one aggregate::

    Aggregate [cat], [cat, max(if ((yr <=> 2023), name, null)) AS 2023, ...]

(``first``/``last`` then skip NULLs). Pivot values are cast to the pivot column's type when the plan
is built (``CAST_INVALID_INPUT`` for ``'x'`` against an int column); the output names are the value
cast to string (``null`` for NULL, ``{a, 2023}`` for several pivot columns) or its alias, followed
by ``_`` and the aggregate's name when there are several aggregates.

Errors (Spark's): ``NON_LITERAL_PIVOT_VALUES``, ``PIVOT_VALUE_DATA_TYPE_MISMATCH``,
``_LEGACY_ERROR_TEMP_1006`` (a column outside any aggregate).
"""

from __future__ import annotations

import pyarrow as pa

from ember import types as T
from ember.analysis.resolution import qualified_sql
from ember.errors import AnalysisError
from ember.expressions.aggregates import (
    AggregateExpression,
    First,
    Last,
)
from ember.expressions.base import (
    Alias,
    AttributeReference,
    Expression,
    Literal,
    NamedExpression,
    new_expr_id,
)
from ember.plans.logical.nodes import Aggregate, LogicalPlan, Pivot
from ember.coercion import can_cast
from ember.expressions.cast import Cast
from ember.errors import CastError
from ember.expressions.common import sql_type
from ember.expressions.predicates import And, EqualNullSafe
from ember.expressions.conditional import If

__all__ = ["resolve_pivot"]

_ONE_ROW = pa.RecordBatch.from_arrays([pa.array([0], pa.int8())], names=["_"])


def _pivot_first_type(t: T.DataType) -> bool:
    """``PivotFirst.supportsDataType``: the types its buffer updates in place."""
    return isinstance(t, (T.BooleanType, T.ByteType, T.ShortType, T.IntegerType, T.LongType,
                          T.FloatType, T.DoubleType, T.DecimalType))


def _strip(e: Expression) -> Expression:
    return e.child if isinstance(e, Alias) else e


def _check_aggregate(e: Expression) -> None:
    """Spark's ``checkValidAggregateExpression``: columns only inside aggregate functions."""
    match e:
        case AggregateExpression():
            return
        case AttributeReference():
            raise AnalysisError(
                f"Aggregate expression required for pivot, but '{qualified_sql(e)}' did not "
                "appear in any aggregate function.",
                error_class="_LEGACY_ERROR_TEMP_1006", parameters={"sql": qualified_sql(e)})
        case _:
            for c in e.children:
                _check_aggregate(c)


def _foldable(e: Expression) -> bool:
    if isinstance(e, Literal):
        return True
    if isinstance(e, (AttributeReference, NamedExpression, AggregateExpression)) or not e.children:
        return False
    return e.deterministic and all(_foldable(c) for c in e.children)


def _evaluate(e: Expression, to: T.DataType, tz: str):
    """``Cast(e, to).eval(EmptyRow)`` (its errors are Spark's cast errors). A cast only the
    legacy rules allow (``DATE`` to ``INT``) is evaluated by them, as Spark's Cast does (NULL)."""


    ansi = can_cast(e.data_type, to)
    try:
        out = (e if e.data_type == to else Cast(e, to, ansi, time_zone=tz)).eval(_ONE_ROW)
    except CastError as err:
        if ansi or not err.error_class.startswith("DATATYPE_MISMATCH"):
            raise
        return None  # e.g. Spark's castToInt of a DATE: NULL

    if isinstance(out, pa.ChunkedArray):
        out = out.combine_chunks()
    return out[0].as_py() if isinstance(out, pa.Array) else out.as_py()


def _value_name(value: tuple[Expression, ...], tz: str) -> str:
    """A pivot value cast to string (``Cast(value, StringType)``): ``null`` for NULL, a struct's
    fields as ``{a, 2023}``."""
    parts = []
    for v in value:
        s = _evaluate(v, T.STRING, tz)
        parts.append("null" if s is None else s)
    return parts[0] if len(value) == 1 else "{" + ", ".join(parts) + "}"


def _type_mismatch(value: tuple[Expression, ...], columns: tuple[Expression, ...]) -> AnalysisError:

    def sql(es: tuple[Expression, ...]) -> str:
        return es[0].sql() if len(es) == 1 else "named_struct(" + ", ".join(
            f"'col{i + 1}', {e.sql()}" for i, e in enumerate(es)) + ")"

    def typ(es: tuple[Expression, ...]) -> str:
        if len(es) == 1:
            return sql_type(es[0].data_type)
        return '"STRUCT<' + ", ".join(
            f"{getattr(e, 'name', f'col{i + 1}')}: {e.data_type.simple_string().upper()}"
            for i, e in enumerate(es)) + '>"'

    return AnalysisError(
        f"Invalid pivot value '{sql(value)}': value data type {typ(value)} does not match pivot "
        f"column data type {typ(columns)}.",
        error_class="PIVOT_VALUE_DATA_TYPE_MISMATCH",
        parameters={"value": sql(value), "valueType": typ(value), "pivotType": typ(columns)})


def _pivot_values(p: Pivot, tz: str) -> list[tuple[object, ...]]:
    """Each pivot value, checked and cast to the pivot columns' types (Spark's
    ``evalPivotValues``)."""

    out = []
    for value in p.pivot_values:
        for v in value:
            if not _foldable(v):
                raise AnalysisError(
                    f'Literal expressions required for pivot values, found "{v.sql()}".',
                    error_class="NON_LITERAL_PIVOT_VALUES", parameters={"expression": f'"{v.sql()}"'})
        if len(value) != len(p.pivot_columns) or not all(
            can_cast(v.data_type, c.data_type, ansi=False)  # Spark's Cast.canCast
            for v, c in zip(value, p.pivot_columns)
        ):
            raise _type_mismatch(value, p.pivot_columns)
        out.append(tuple(_evaluate(v, c.data_type, tz) for v, c in zip(value, p.pivot_columns)))
    return out


def _matches(columns: tuple[Expression, ...], value: tuple[object, ...],
             pivot_first: bool = False) -> Expression:
    """``pivot <=> value`` (struct equality for several columns: field by field, NULLs equal).
    ``pivot_first``: PivotFirst looks the value up in a Scala map, whose ``==`` never matches a
    NaN (``EqualNullSafe`` would)."""

    if pivot_first and len(value) == 1 and isinstance(value[0], float) and value[0] != value[0]:
        return Literal(False, T.BOOLEAN)

    cond: Expression | None = None
    for c, v in zip(columns, value):
        eq = EqualNullSafe(c, Literal(v, c.data_type))
        cond = eq if cond is None else And(cond, eq)
    assert cond is not None
    return cond


def _if(cond: Expression, e: Expression) -> Expression:

    return If(cond, e, Literal(None, e.data_type))


def _filtered(agg: Expression, cond: Expression) -> Expression:
    """The aggregate reading its arguments only where ``cond`` holds (Spark's transformDown over
    the aggregate functions: every argument wrapped in ``if(cond, arg, null)``; ``first`` and
    ``last`` then ignore NULLs), each aggregate call with a new result id."""

    def rule(x: Expression) -> Expression | None:
        if isinstance(x, AggregateExpression):
            func = x.func
            if isinstance(func, (First, Last)):
                func = func.copy(child=_if(cond, func.child), ignore_nulls=True)
            else:
                func = func.with_children(tuple(_if(cond, c) for c in func.children))
            return x.copy(func=func, id=new_expr_id())
        return None

    return agg.transform_down(rule)


def _rewrite(p: Pivot, ctx) -> LogicalPlan:
    tz = ctx.conf.time_zone
    for a in p.aggregates:
        _check_aggregate(_strip(a))
    values = _pivot_values(p, tz)
    child = p.child
    if p.group_by is None:
        used: set[int] = set()
        for e in p.pivot_columns + p.aggregates:
            used |= e.references
        group_by: tuple[Expression, ...] = tuple(a for a in child.output if a.id not in used)
    else:
        group_by = p.group_by
    named_groups = tuple(g if isinstance(g, NamedExpression) else Alias(g, g.sql())
                         for g in group_by)
    group_exprs = tuple(_strip(g) for g in named_groups)
    single = len(p.aggregates) == 1

    def name(i: int, agg: Expression) -> str:
        alias = p.value_aliases[i]
        head = alias if alias is not None else _value_name(p.pivot_values[i], tz)
        if single:
            return head
        return f"{head}_{agg.name if isinstance(agg, NamedExpression) else agg.sql()}"

    if all(_pivot_first_type(a.data_type) for a in p.aggregates):
        named_cols = tuple(c if isinstance(c, NamedExpression) else Alias(c, "__pivot_col")
                           for c in p.pivot_columns)
        named_aggs = tuple(Alias(_strip(a), _strip(a).sql()) for a in p.aggregates)
        first = Aggregate(group_exprs + tuple(_strip(c) for c in named_cols),
                          named_groups + named_cols + named_aggs, child)
        group_attrs = tuple(g.to_attribute() for g in named_groups)
        col_attrs = tuple(c.to_attribute() for c in named_cols)
        outputs = []
        for i, value in enumerate(values):
            cond = _matches(col_attrs, value, pivot_first=True)
            for agg, named in zip(p.aggregates, named_aggs):
                attr = named.to_attribute()
                picked = AggregateExpression(First(_if(cond, attr), True))
                outputs.append(Alias(picked, name(i, agg)))
        return Aggregate(group_attrs, group_attrs + tuple(outputs), first)
    outputs = []
    for i, value in enumerate(values):
        cond = _matches(p.pivot_columns, value)
        for agg in p.aggregates:
            outputs.append(Alias(_filtered(_strip(agg), cond), name(i, agg)))
    return Aggregate(group_exprs, named_groups + tuple(outputs), child)


def _ready(p: Pivot) -> bool:
    exprs = (p.group_by or ()) + p.pivot_columns + p.aggregates + tuple(
        v for value in p.pivot_values for v in value)
    return p.child.resolved and all(e.resolved for e in exprs) and all(
        isinstance(a, NamedExpression) for a in p.aggregates)


def resolve_pivot(plan: LogicalPlan, ctx) -> LogicalPlan:
    """``plan`` with each ``Pivot`` whose child and expressions are resolved rewritten into
    aggregates (see module doc)."""
    def rule(p: LogicalPlan) -> LogicalPlan:
        if isinstance(p, Pivot) and _ready(p):
            return _rewrite(p, ctx)
        return p

    return plan.transform_up(rule)
