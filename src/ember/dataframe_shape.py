"""DataFrame methods that reshape columns: ``df.to(schema)`` (Spark's ``Project.matchSchema``)
and ``df.transpose(indexColumn)`` (Spark's ``Transpose``).

>>> df.to(StructType.fromDDL("y double, x bigint"))    # doctest: +SKIP
>>> df.transpose("name")                              # doctest: +SKIP
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np
import pyarrow as pa

from ember import types as T
from ember.analysis.resolution import quote
from ember.analysis.table_insertion import can_ansi_store_assign
from ember.coercion import find_wider_type
from ember.column import Column
from ember.conf import TRANSPOSE_MAX_VALUES
from ember.errors import AnalysisError
from ember.expressions.base import Alias, AttributeReference, Expression, Literal
from ember.expressions.cast import Cast
from ember.expressions.collections import GetStructField
from ember.expressions.conditional import If
from ember.expressions.misc import CreateNamedStruct
from ember.expressions.predicates import IsNotNull, IsNull
from ember.plans.logical.nodes import Filter, LocalRelation, Project

if TYPE_CHECKING:  # pragma: no cover
    from ember.dataframe import DataFrame

__all__ = ["match_schema", "transpose"]


# ---------------------------------------------------------------------------------------------
# to(schema)


def match_schema(df: "DataFrame", schema: T.StructType) -> "DataFrame":
    """``df.to(schema)``: the columns of ``schema`` in its order, matched by name (the session's
    case sensitivity), cast where Spark's ANSI store assignment allows; a nullable column the
    DataFrame lacks reads as NULL (Spark's ``Project.matchSchema``)."""
    cs = df._session.sql_conf.case_sensitive
    fields = [(a.name, a) for a in df._plan.output]
    items = _reorder(fields, schema.fields, (), cs)
    return df._new(Project(tuple(items), df._plan))


def _reorder(fields: list[tuple[str, Expression]], expected: tuple[T.StructField, ...],
             path: tuple[str, ...], cs: bool) -> list[Alias]:
    out = []
    for f in expected:
        matched = [(n, e) for n, e in fields if (n == f.name if cs else n.lower() == f.name.lower())]
        if not matched:
            if not f.nullable:
                names = ", ".join(quote(n) for n, _ in fields)
                if not path:
                    raise AnalysisError(
                        f"A column, variable, or function parameter with name {quote(f.name)} "
                        f"cannot be resolved. Did you mean one of the following? [{names}].",
                        error_class="UNRESOLVED_COLUMN.WITH_SUGGESTION",
                        parameters={"objectName": quote(f.name), "proposal": names})
                field_path = ".".join(quote(p) for p in path)
                raise AnalysisError(
                    f"A field with name {quote(f.name)} cannot be resolved with the struct-type "
                    f"column {field_path}. Did you mean one of the following? [{names}].",
                    error_class="UNRESOLVED_FIELD.WITH_SUGGESTION",
                    parameters={"fieldName": quote(f.name), "columnPath": field_path,
                                "proposal": names})
            out.append(Alias(Literal(None, f.data_type), f.name))
            continue
        column_path = ".".join(quote(p) for p in path + (f.name,))
        if len(matched) > 1:
            raise AnalysisError(
                f"Column or field {column_path} is ambiguous and has {len(matched)} matches.",
                error_class="AMBIGUOUS_COLUMN_OR_FIELD",
                parameters={"name": column_path, "n": str(len(matched))})
        name, e = matched[0]
        out.append(Alias(_reconcile(e, path + (name,), f.data_type, f.nullable, cs), f.name))
    return out


def _reconcile(e: Expression, path: tuple[str, ...], dt: T.DataType, nullable: bool,
               cs: bool) -> Expression:
    """``e`` as a value of type ``dt`` (Spark's ``Project.reconcileColumnType``)."""
    column_path = ".".join(quote(p) for p in path)
    if e.nullable and not nullable:
        raise AnalysisError(
            f"Column or field {column_path} is nullable while it's required to be non-nullable.",
            error_class="NULLABLE_COLUMN_OR_FIELD", parameters={"name": column_path})
    have = e.data_type
    if isinstance(have, T.StructType) and isinstance(dt, T.StructType) and have != dt:
        fields = [(f.name, GetStructField(e, i, f.name)) for i, f in enumerate(have.fields)]
        items = _reorder(fields, dt.fields, path, cs)
        struct = CreateNamedStruct(tuple(i.name for i in items), tuple(i.child for i in items))
        return If(IsNull(e), Literal(None, struct.data_type), struct) if e.nullable else struct
    if have == dt:
        return e
    if can_ansi_store_assign(have, dt):
        return Cast(e, dt)
    raise AnalysisError(
        f"Column or field {column_path} is of type \"{have.sql()}\" while it's required to be "
        f"\"{dt.sql()}\".",
        error_class="INVALID_COLUMN_OR_FIELD_DATA_TYPE",
        parameters={"name": column_path, "type": f"\"{have.sql()}\"",
                    "expectedType": f"\"{dt.sql()}\""})


# ---------------------------------------------------------------------------------------------
# transpose


def transpose(df: "DataFrame", index: Any = None) -> "DataFrame":
    """``df.transpose(indexColumn)``: a row per non-index column (``key``: its name) and a
    column per row, named by its index value cast to a string, in ascending index order; rows
    whose index is NULL are left out (Spark's ``Transpose``, computed when called, as Spark
    does during analysis).  The non-index columns must share a least common type; the index
    column (default: the first) must be atomic."""
    out = df._plan.output
    if index is None:
        if not out:
            raise AnalysisError(
                "Invalid index column for TRANSPOSE because: Dataframe with no columns cannot "
                "be transposed.", error_class="TRANSPOSE_INVALID_INDEX_COLUMN",
                parameters={"reason": "Dataframe with no columns cannot be transposed."})
        idx: Expression = out[0]
    else:
        picked = df.select(index)._plan.output[0]
        found = [a for a in out if a.id == picked.id]
        if not found:
            raise AnalysisError(
                "Invalid index column for TRANSPOSE because: the index column must be a column "
                "of the DataFrame.", error_class="TRANSPOSE_INVALID_INDEX_COLUMN",
                parameters={"reason": "the index column must be a column of the DataFrame."})
        idx = found[0]
    if isinstance(idx.data_type, (T.ArrayType, T.MapType, T.StructType)):
        reason = f"Index column must be of atomic type, but found: {_scala_type(idx.data_type)}"
        raise AnalysisError(f"Invalid index column for TRANSPOSE because: {reason}",
                            error_class="TRANSPOSE_INVALID_INDEX_COLUMN",
                            parameters={"reason": reason})
    values = [a for a in out if a.id != idx.id]
    common = _common_type([a.data_type for a in values])
    limit = df._session.sql_conf.get(TRANSPOSE_MAX_VALUES)
    ordered = df._new(Filter(IsNotNull(idx), df._plan)).orderBy(Column(idx)).limit(limit + 1)
    table = ordered.select(Column(Alias(Cast(idx, T.STRING), "__name")),
                           *(Column(Alias(Cast(a, common), a.name)) for a in values)).to_arrow()
    if table.num_rows > limit:
        raise AnalysisError(
            f"Number of rows exceeds the allowed limit of {limit} for TRANSPOSE. If this was "
            f"intended, set {TRANSPOSE_MAX_VALUES.key} to at least the current row count.",
            error_class="TRANSPOSE_EXCEED_ROW_LIMIT",
            parameters={"maxValues": str(limit), "config": TRANSPOSE_MAX_VALUES.key})
    n, k = table.num_rows, len(values)
    names = table.column(0).to_pylist()
    at = common.to_arrow()
    # the value cells column-major (cell (column c, row j) at c * n + j); output column j takes
    # cells j, n + j, 2n + j ...
    cells = pa.concat_arrays([table.column(c + 1).combine_chunks().cast(at) for c in range(k)]) \
        if k else pa.array([], at)
    columns = [pa.array([a.name for a in values], pa.string())] + [
        cells.take(pa.array(np.arange(k, dtype=np.int64) * n + j)) for j in range(n)]
    attrs = (AttributeReference("key", T.STRING, False),) + tuple(
        AttributeReference(name, common, True) for name in names)
    data = pa.Table.from_arrays(columns, schema=pa.schema(
        [pa.field(a.name, a.data_type.to_arrow()) for a in attrs]))
    return df._new(LocalRelation(attrs, data))


def _common_type(types: list[T.DataType]) -> T.DataType:
    """The least common type of the non-index columns (no string promotion), else
    ``TRANSPOSE_NO_LEAST_COMMON_TYPE``."""
    common: T.DataType = T.STRING
    for i, t in enumerate(types):
        if i == 0:
            common = t
            continue
        wider = find_wider_type([common, t], string_promotion=False)
        if wider is None:
            raise AnalysisError(
                "Transpose requires non-index columns to share a least common type, but "
                f"\"{common.sql()}\" and \"{t.sql()}\" do not.",
                error_class="TRANSPOSE_NO_LEAST_COMMON_TYPE",
                parameters={"dt1": f"\"{common.sql()}\"", "dt2": f"\"{t.sql()}\""})
        common = wider
    return common


def _scala_type(dt: T.DataType) -> str:
    """A type as Scala prints Spark's ``DataType`` objects (``ArrayType(IntegerType,true)``)."""
    if isinstance(dt, T.ArrayType):
        return f"ArrayType({_scala_type(dt.element_type)},{str(dt.contains_null).lower()})"
    if isinstance(dt, T.MapType):
        return (f"MapType({_scala_type(dt.key_type)},{_scala_type(dt.value_type)},"
                f"{str(dt.value_contains_null).lower()})")
    if isinstance(dt, T.StructType):
        return "StructType(" + ",".join(
            f"StructField({f.name},{_scala_type(f.data_type)},{str(f.nullable).lower()})"
            for f in dt.fields) + ")"
    return type(dt).__name__
