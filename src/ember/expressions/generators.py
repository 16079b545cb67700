"""Generators: expressions that turn one input row into zero or more output rows (Spark's
``Generator``), run by the ``Generate`` plan node.

- :class:`Explode` ``explode(array)`` -> ``col``; ``explode(map)`` -> ``key``, ``value``
  (``explode_outer`` is the same generator under an outer ``Generate``);
  ``posexplode`` adds ``pos`` (0-based) first.
- :class:`Inline` ``inline(array<struct>)`` -> one column per struct field.
- :class:`Stack` ``stack(n, e1, ..., ek)`` -> ``n`` rows of ``ceil(k / n)`` columns ``col0`` ...

A generator never evaluates as a scalar: :meth:`Generator.generate` returns, for a batch, the
input row of every output row and the generated columns, computed over the flattened list values
(offsets -> row indices with NumPy), not row by row.  The analyzer's ExtractGenerator rule turns
``SELECT explode(a) ...`` into a ``Generate``; anywhere else a generator is an error.
"""

from __future__ import annotations

from dataclasses import field
from typing import ClassVar

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from ember import types as T
from ember.errors import AnalysisError
from ember.expressions.base import Expression, Literal, Unevaluable
from ember.expressions.collections import list_parts
from ember.expressions.common import TypeCheckFailure, sql_type, to_array, unexpected_input_type
from ember.trees import node

__all__ = ["Generator", "Explode", "Inline", "Stack", "MultiAlias", "flat_positions"]


def flat_positions(starts: np.ndarray, lens: np.ndarray) -> tuple[np.ndarray, np.ndarray,
                                                                  np.ndarray]:
    """For lists at ``starts`` with ``lens`` elements: per output element its input row, its
    position in the flattened values and its index within its list."""
    rows = np.repeat(np.arange(len(lens)), lens)
    first = np.repeat(np.cumsum(lens) - lens, lens)
    within = np.arange(int(lens.sum())) - first
    return rows, np.repeat(starts, lens) + within, within


class Generator(Expression):
    """Base of generators: ``element_schema`` names and types the generated columns."""

    __slots__ = ()
    fn_name: ClassVar[str] = "?"

    @property
    def element_schema(self) -> tuple[T.StructField, ...]:
        raise NotImplementedError

    @property
    def data_type(self) -> T.DataType:
        return T.StructType(self.element_schema)

    @property
    def foldable(self) -> bool:
        return False

    @property
    def is_outer(self) -> bool:
        """Called as ``explode_outer`` & co (Spark's ``GeneratorOuter``)."""
        return getattr(self, "display", "").endswith("_outer")

    def simple_string(self) -> str:
        name = getattr(self, "display", self.fn_name)  # as called: explode_outer, inline, ...
        return f"{name}({', '.join(e.simple_string() for e in self.children)})"

    def sql(self) -> str:
        name = getattr(self, "display", self.fn_name)
        return f"{name}({', '.join(e.sql() for e in self.children)})"

    def generate(self, batch: pa.RecordBatch) -> tuple[np.ndarray, list[pa.Array]]:
        """``(rows, columns)``: the input row of each output row (ascending) and the
        generated columns."""
        raise NotImplementedError

    def eval(self, batch: pa.RecordBatch) -> pa.Array:
        raise AnalysisError(
            f"The generator is not supported: outside the SELECT clause, found: {self.sql()}.",
            error_class="UNSUPPORTED_GENERATOR.OUTSIDE_SELECT",
            parameters={"plan": self.sql()})


@node
class Explode(Generator):
    """``explode``/``posexplode`` (``position``) of an array or map (Spark's ``Explode`` /
    ``PosExplode``); ``display`` is the name as called (``explode_outer`` ...)."""

    child: Expression
    position: bool = False
    display: str = field(default="explode", compare=False)

    def check_input_types(self) -> str | None:
        if not isinstance(self.child.data_type, (T.ArrayType, T.MapType)):
            return unexpected_input_type(1, '("ARRAY" or "MAP")', self.child)
        return None

    @property
    def element_schema(self) -> tuple[T.StructField, ...]:
        dt = self.child.data_type
        pos = (T.StructField("pos", T.INT, False),) if self.position else ()
        if isinstance(dt, T.MapType):
            return pos + (T.StructField("key", dt.key_type, False),
                          T.StructField("value", dt.value_type, dt.value_contains_null))
        if isinstance(dt, T.ArrayType):
            return pos + (T.StructField("col", dt.element_type, dt.contains_null),)
        return pos + (T.StructField("col", T.NULL, True),)

    def generate(self, batch: pa.RecordBatch) -> tuple[np.ndarray, list[pa.Array]]:
        arr = to_array(self.child.eval(batch), batch.num_rows)
        if pa.types.is_null(arr.type):
            return np.zeros(0, np.int64), [pa.array([], f.data_type.to_arrow())
                                           for f in self.element_schema]
        starts, lens, ok = list_parts(arr)
        lens = np.where(ok, lens, 0)
        rows, positions, within = flat_positions(starts, lens)
        take = pa.array(positions)
        if isinstance(self.child.data_type, T.MapType):
            cols = [pc.take(arr.keys, take), pc.take(arr.items, take)]
        else:
            cols = [pc.take(arr.values, take)]
        if self.position:
            cols.insert(0, pa.array(within.astype(np.int32)))
        return rows, cols


@node
class Inline(Generator):
    """``inline(array<struct>)`` (Spark's ``Inline``): one row per element, one column per
    field (a NULL element gives a row of NULLs)."""

    child: Expression
    display: str = field(default="inline", compare=False)

    def check_input_types(self) -> str | None:
        dt = self.child.data_type
        if not (isinstance(dt, T.ArrayType) and isinstance(dt.element_type, T.StructType)):
            return unexpected_input_type(1, '"ARRAY<STRUCT>"', self.child)
        return None

    @property
    def element_schema(self) -> tuple[T.StructField, ...]:
        st = self.child.data_type.element_type  # type: ignore[attr-defined]
        return tuple(T.StructField(f.name, f.data_type, True) for f in st.fields)

    def generate(self, batch: pa.RecordBatch) -> tuple[np.ndarray, list[pa.Array]]:
        arr = to_array(self.child.eval(batch), batch.num_rows)
        starts, lens, ok = list_parts(arr)
        lens = np.where(ok, lens, 0)
        rows, positions, _ = flat_positions(starts, lens)
        structs = pc.take(arr.values, pa.array(positions))
        null = pc.is_null(structs)
        cols = []
        for i, f in enumerate(self.element_schema):
            v = pc.struct_field(structs, [i])
            cols.append(pc.if_else(null, pa.scalar(None, v.type), v) if structs.null_count else v)
        return rows, cols


@node
class Stack(Generator):
    """``stack(n, e1, ..., ek)`` (Spark's ``Stack``): ``n`` rows per input row, the values
    filled row-major into ``ceil(k / n)`` columns ``col0`` ... (missing ones NULL).  A column's
    values must share one type; only NULLs take the column's type (Spark's StackCoercion)."""

    fn_name: ClassVar[str] = "stack"

    children_: tuple[Expression, ...]

    @property
    def _n(self) -> int:
        first = self.children_[0]
        return int(first.value) if isinstance(first, Literal) and first.value is not None else 0

    @property
    def _width(self) -> int:
        n = self._n
        return -(-(len(self.children_) - 1) // n) if n > 0 else 0

    def _column(self, j: int) -> list[Expression]:
        n, w, vals = self._n, self._width, self.children_[1:]
        return [vals[i * w + j] for i in range(n) if i * w + j < len(vals)]

    def check_input_types(self) -> str | None:
        first = self.children_[0]
        if not (isinstance(first, Literal) and first.data_type == T.INT):
            return TypeCheckFailure(
                f"The first parameter requires the \"INT\" type, however {first.sql()} has the "
                f"type {sql_type(first.data_type)}.", "NON_FOLDABLE_INPUT"
                if not isinstance(first, Literal) else "UNEXPECTED_INPUT_TYPE",
                {"inputName": "`n`", "inputType": '"INT"', "inputExpr": first.sql()})
        if self._n <= 0:
            return TypeCheckFailure(
                f"The number of rows must be a positive constant integer, but got {self._n}.",
                "VALUE_OUT_OF_RANGE", {})
        w = self._width
        for j in range(w):
            # (index among the arguments, type) of the column's non-NULL values
            typed = [(1 + i * w + j, self.children_[1 + i * w + j].data_type)
                     for i in range(self._n) if 1 + i * w + j < len(self.children_)]
            typed = [(k, t) for k, t in typed if not isinstance(t, T.NullType)]
            bad = next(((k, t) for k, t in typed if t != typed[0][1]), None)
            if bad is not None:
                (lk, lt), (rk, rt) = typed[0], bad
                return TypeCheckFailure(
                    f"The data type of the column ({j}) do not have the same type: "
                    f"{sql_type(lt)} ({lk}) <> {sql_type(rt)} ({rk}).", "STACK_COLUMN_DIFF_TYPES",
                    {"columnIndex": str(j), "leftParamIndex": str(lk), "leftType": sql_type(lt),
                     "rightParamIndex": str(rk), "rightType": sql_type(rt)})
        return None

    @property
    def element_schema(self) -> tuple[T.StructField, ...]:
        out = []
        for j in range(self._width):
            types = [e.data_type for e in self._column(j)
                     if not isinstance(e.data_type, T.NullType)]
            out.append(T.StructField(f"col{j}", types[0] if types else T.NULL, True))
        return tuple(out)

    def generate(self, batch: pa.RecordBatch) -> tuple[np.ndarray, list[pa.Array]]:
        n_in, n = batch.num_rows, self._n
        rows = np.repeat(np.arange(n_in), n)
        cols = []
        for j, f in enumerate(self.element_schema):
            at = f.data_type.to_arrow()
            parts = []
            for i in range(n):
                k = i * self._width + j + 1
                if k < len(self.children_):
                    a = to_array(self.children_[k].eval(batch), n_in)
                    parts.append(a if a.type == at else a.cast(at))
                else:
                    parts.append(pa.nulls(n_in, at))
            # row-major: the n values of input row r are consecutive
            stacked = pa.concat_arrays(parts) if parts else pa.array([], at)
            order = (np.arange(n)[None, :] * n_in + np.arange(n_in)[:, None]).reshape(-1)
            cols.append(pc.take(stacked, pa.array(order)))
        return rows, cols


@node
class MultiAlias(Unevaluable):
    """``explode(m) AS (k, v)``: names for a generator's columns (Spark's ``MultiAlias``);
    the analyzer's ExtractGenerator consumes it."""

    child: Expression
    names: tuple[str, ...]

    @property
    def resolved(self) -> bool:
        return False

    @property
    def data_type(self) -> T.DataType:
        return self.child.data_type

    def simple_string(self) -> str:
        return f"{self.child.simple_string()} AS ({', '.join(self.names)})"

    def sql(self) -> str:
        return f"{self.child.sql()} AS ({', '.join(self.names)})"
