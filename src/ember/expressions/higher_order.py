"""Higher-order functions over arrays (Spark's ``higherOrderFunctions``): ``transform``,
``filter``, ``exists``, ``forall``, ``aggregate``/``reduce``, ``zip_with``.

A lambda ``x -> x + 1`` parses to :class:`LambdaFunction` over
:class:`UnresolvedNamedLambdaVariable` s; the function's builder binds it (Spark's
``HigherOrderFunction.bind``) once the array arguments are typed, replacing the variables by
typed :class:`NamedLambdaVariable` s.

Evaluation is vectorized over the flattened elements of the whole batch: the lambda body is
evaluated once over an *element batch* -- the input columns repeated per element
(``take(rows)``, so the body's bound references keep their positions) plus one column per lambda
variable -- never once per row.  ``aggregate`` is a fold: it loops over element *positions*
(at most the longest array's length), each step vectorized over every row still holding an
element.
"""

from __future__ import annotations

from dataclasses import field
from typing import ClassVar

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from ember import types as T
from ember.errors import AnalysisError
from ember.expressions.base import Expression, LeafExpression, Unevaluable, new_expr_id
from ember.expressions.collections import check_arrays, list_parts, lists_from_lengths
from ember.expressions.collections import _build_map
from ember.expressions.common import to_array, unexpected_input_type
from ember.trees import node

__all__ = ["UnresolvedNamedLambdaVariable", "NamedLambdaVariable", "LambdaFunction",
           "ArrayTransform", "ArrayFilter", "ArrayExists", "ArrayForAll", "ArrayAggregate",
           "ZipWith", "bind_lambda", "MapFilter", "TransformKeys", "TransformValues",
           "MapZipWith"]


@node
class UnresolvedNamedLambdaVariable(Unevaluable, LeafExpression):
    """A lambda parameter's name in the lambda body, before binding."""

    name: str

    def simple_string(self) -> str:
        return f"lambda '{self.name}"

    def sql(self) -> str:
        return self.name


@node
class NamedLambdaVariable(LeafExpression):
    """A bound lambda parameter (Spark's ``NamedLambdaVariable``): evaluates to the column the
    higher-order function adds to the element batch under :attr:`column_name`."""

    name: str
    dtype: T.DataType
    is_nullable: bool = True
    id: int = field(default_factory=new_expr_id)

    @property
    def data_type(self) -> T.DataType:
        return self.dtype

    @property
    def nullable(self) -> bool:
        return self.is_nullable

    @property
    def foldable(self) -> bool:
        return False

    @property
    def resolved(self) -> bool:
        return True

    @property
    def column_name(self) -> str:
        return f"__lambda_{self.id}"

    def eval(self, batch: pa.RecordBatch) -> pa.Array:
        return batch.column(batch.schema.get_field_index(self.column_name))

    def simple_string(self) -> str:
        return f"lambda {self.name}#{self.id}"

    def sql(self) -> str:
        return "namedlambdavariable()"


@node
class LambdaFunction(Expression):
    """``(x, y) -> body`` (Spark's ``LambdaFunction``)."""

    function: Expression
    arguments: tuple[Expression, ...]

    @property
    def data_type(self) -> T.DataType:
        return self.function.data_type

    @property
    def nullable(self) -> bool:
        return self.function.nullable

    @property
    def foldable(self) -> bool:
        return False

    @property
    def bound(self) -> bool:
        return all(isinstance(a, NamedLambdaVariable) for a in self.arguments)

    def eval(self, batch: pa.RecordBatch) -> pa.Array:
        return self.function.eval(batch)

    def simple_string(self) -> str:
        args = ", ".join(a.simple_string() for a in self.arguments)
        return f"lambdafunction({self.function.simple_string()}, {args})"

    def sql(self) -> str:
        args = ", ".join(a.sql() for a in self.arguments)
        return f"lambdafunction({self.function.sql()}, {args})"


def bind_lambda(fn_name: str, f: Expression, params: list[tuple[T.DataType, bool]]
                ) -> LambdaFunction:
    """``f`` (a lambda) with its parameters typed by ``params`` (type, nullable); a lambda
    taking fewer parameters binds the first ones (Spark allows ``transform(a, x -> ...)`` and
    ``transform(a, (x, i) -> ...)``)."""
    if not isinstance(f, LambdaFunction):
        raise AnalysisError(f"The {fn_name} function requires a lambda function argument.",
                            error_class="DATATYPE_MISMATCH.UNEXPECTED_INPUT_TYPE")
    if f.bound:
        return f
    names = [a.name for a in f.arguments]  # type: ignore[attr-defined]
    if len(set(n.lower() for n in names)) != len(names):
        raise AnalysisError(
            f"Invalid lambda function call. The lambda function has duplicate arguments "
            f"{', '.join('`' + n + '`' for n in names)}.",
            error_class="INVALID_LAMBDA_FUNCTION_CALL.DUPLICATE_ARG_NAMES",
            parameters={"args": ", ".join(f"`{n}`" for n in names),
                        "caseSensitiveConfig": '"spark.sql.caseSensitive"'})
    if len(names) > len(params):
        # Spark's message puts the lambda's count as "expects", the function's as "got"
        raise AnalysisError(
            f"Invalid lambda function call. A higher order function expects {len(names)} "
            f"arguments, but got {len(params)}.",
            error_class="INVALID_LAMBDA_FUNCTION_CALL.NUM_ARGS_MISMATCH",
            parameters={"expectedNumArgs": str(len(names)), "actualNumArgs": str(len(params))})
    bound = [NamedLambdaVariable(n, t, nl) for n, (t, nl) in zip(names, params)]
    by_name = {v.name.lower(): v for v in bound}

    def sub(x: Expression) -> Expression | None:
        if isinstance(x, UnresolvedNamedLambdaVariable):
            return by_name.get(x.name.lower())
        return None

    return LambdaFunction(f.function.transform_up(sub), tuple(bound))


# ---------------------------------------------------------------------------------------------
# Element batches


class _Elements:
    """The flattened elements of ``arr`` with the batch's columns repeated per element."""

    def __init__(self, arr: pa.Array, batch: pa.RecordBatch) -> None:
        starts, lens, valid = list_parts(arr)
        self.valid = valid
        self.lens = np.where(valid, lens, 0)
        self.rows = np.repeat(np.arange(len(arr)), self.lens)
        first = np.repeat(np.cumsum(self.lens) - self.lens, self.lens)
        self.within = np.arange(int(self.lens.sum())) - first
        self.take = pa.array(np.repeat(starts, self.lens) + self.within, pa.int64())
        # a map's elements are its values (its keys: _MapEntries.keys)
        child = arr.items if isinstance(arr, pa.MapArray) else arr.values
        self.values = pc.take(child, self.take)
        self.batch = batch

    def eval(self, fn: LambdaFunction, columns: list[pa.Array],
             rows: np.ndarray | None = None) -> pa.Array:
        """``fn``'s body over the elements (``rows``: the input row of each element, default
        all), the lambda variables taking ``columns``."""
        rows = self.rows if rows is None else rows
        base = self.batch.take(pa.array(rows, pa.int64())) if self.batch.num_columns else None
        arrays = list(base.columns) if base is not None else []
        names = list(base.schema.names) if base is not None else []
        for v, c in zip(fn.arguments, columns):
            arrays.append(c)
            names.append(v.column_name)  # type: ignore[attr-defined]
        if not arrays:
            arrays, names = [pa.nulls(len(rows))], ["__rows"]
        eb = pa.RecordBatch.from_arrays(arrays, names=names)
        return to_array(fn.function.eval(eb), len(rows))


_lists = lists_from_lengths


class _ArrayHOF(Expression):
    """A higher-order function of one array and one lambda."""

    __slots__ = ()
    fn_name = "?"

    def _array_check(self) -> str | None:
        a = self.argument  # type: ignore[attr-defined]
        if not isinstance(a.data_type, (T.ArrayType, T.NullType)):
            return unexpected_input_type(1, '"ARRAY"', a)
        return None

    def check_input_types(self) -> str | None:
        return self._array_check()

    def _elements(self, batch: pa.RecordBatch) -> tuple[pa.Array, _Elements]:
        arr = to_array(self.argument.eval(batch), batch.num_rows)  # type: ignore[attr-defined]
        return arr, _Elements(arr, batch)

    def _index_columns(self, el: _Elements) -> list[pa.Array]:
        cols = [el.values]
        if len(self.function.arguments) > 1:  # type: ignore[attr-defined]
            cols.append(pa.array(el.within.astype(np.int32)))
        return cols

    def simple_string(self) -> str:
        return (f"{self.fn_name}({self.argument.simple_string()}, "  # type: ignore[attr-defined]
                f"{self.function.simple_string()})")  # type: ignore[attr-defined]

    def sql(self) -> str:
        return (f"{self.fn_name}({self.argument.sql()}, "  # type: ignore[attr-defined]
                f"{self.function.sql()})")  # type: ignore[attr-defined]


def _element_params(t: T.DataType, with_index: bool = True) -> list[tuple[T.DataType, bool]]:
    et = t.element_type if isinstance(t, T.ArrayType) else T.NULL  # type: ignore[attr-defined]
    cn = t.contains_null if isinstance(t, T.ArrayType) else True  # type: ignore[attr-defined]
    return [(et, cn)] + ([(T.INT, False)] if with_index else [])


@node
class ArrayTransform(_ArrayHOF):
    """``transform(array, x -> f(x))`` / ``(x, i) -> ...`` (Spark's ``ArrayTransform``)."""

    argument: Expression
    function: Expression
    fn_name = "transform"

    @property
    def data_type(self) -> T.DataType:
        return T.ArrayType(self.function.data_type, self.function.nullable)

    def eval(self, batch: pa.RecordBatch) -> pa.Array:
        arr, el = self._elements(batch)
        out = el.eval(self.function, self._index_columns(el))  # type: ignore[arg-type]
        return _lists(el.lens, out, el.valid, self.data_type.to_arrow())


@node
class ArrayFilter(_ArrayHOF):
    """``filter(array, x -> pred)`` / ``(x, i) -> ...`` (Spark's ``ArrayFilter``)."""

    argument: Expression
    function: Expression
    fn_name = "filter"

    @property
    def data_type(self) -> T.DataType:
        return self.argument.data_type

    def check_input_types(self) -> str | None:
        return self._array_check() or _boolean_lambda(self.function)

    def eval(self, batch: pa.RecordBatch) -> pa.Array:
        arr, el = self._elements(batch)
        keep = pc.fill_null(el.eval(self.function, self._index_columns(el)), False)  # type: ignore[arg-type]
        k = keep.to_numpy(zero_copy_only=False).astype(bool)
        lens = np.bincount(el.rows[k], minlength=len(arr))
        return _lists(lens, el.values.filter(keep), el.valid, self.data_type.to_arrow())


def _boolean_lambda(f: Expression) -> str | None:
    if not isinstance(f.data_type, (T.BooleanType, T.NullType)):
        return unexpected_input_type(2, '"BOOLEAN"', f)
    return None


@node
class ArrayExists(_ArrayHOF):
    """``exists(array, x -> pred)`` (Spark's ``ArrayExists``, three-valued: TRUE if any element
    satisfies it, else NULL if any gave NULL, else FALSE)."""

    argument: Expression
    function: Expression
    fn_name = "exists"
    #: TRUE decides (exists); ArrayForAll: FALSE decides
    any_true: ClassVar[bool] = True

    @property
    def data_type(self) -> T.DataType:
        return T.BOOLEAN

    def check_input_types(self) -> str | None:
        return self._array_check() or _boolean_lambda(self.function)

    def eval(self, batch: pa.RecordBatch) -> pa.Array:
        arr, el = self._elements(batch)
        res = el.eval(self.function, [el.values])  # type: ignore[arg-type]
        return _three_valued(res, el, len(arr), any_true=self.any_true)


@node
class ArrayForAll(ArrayExists):
    """``forall(array, x -> pred)`` (Spark's ``ArrayForAll``: FALSE if any element fails it,
    else NULL if any gave NULL, else TRUE)."""

    argument: Expression
    function: Expression
    fn_name = "forall"
    any_true: ClassVar[bool] = False


def _three_valued(res: pa.Array, el: _Elements, n: int, any_true: bool) -> pa.Array:
    null = pc.is_null(res).to_numpy(zero_copy_only=False)
    val = pc.fill_null(res, not any_true).to_numpy(zero_copy_only=False).astype(bool)
    decisive = val if any_true else ~val
    hit = np.bincount(el.rows[decisive & ~null], minlength=n) > 0
    has_null = np.bincount(el.rows[null], minlength=n) > 0
    out = hit if any_true else ~hit
    return pa.array(out, pa.bool_(), mask=~el.valid | (~hit & has_null))


@node
class ArrayAggregate(Expression):
    """``aggregate(array, zero, (acc, x) -> merge[, acc -> finish])`` (Spark's
    ``ArrayAggregate``; ``reduce`` is the same): a left fold per row, vectorized per element
    position."""

    argument: Expression
    zero: Expression
    merge: Expression
    finish: Expression
    fn_name: str = field(default="aggregate", compare=False)

    @property
    def data_type(self) -> T.DataType:
        return self.finish.data_type

    def check_input_types(self) -> str | None:
        if not isinstance(self.argument.data_type, (T.ArrayType, T.NullType)):
            return unexpected_input_type(1, '"ARRAY"', self.argument)
        if self.merge.data_type != self.zero.data_type and not isinstance(
                self.merge.data_type, T.NullType):
            return unexpected_input_type(3, f'"{self.zero.data_type.sql()}"', self.merge)
        return None

    def eval(self, batch: pa.RecordBatch) -> pa.Array:
        n = batch.num_rows
        arr = to_array(self.argument.eval(batch), n)
        el = _Elements(arr, batch)
        acc_t = self.zero.data_type.to_arrow()
        acc = to_array(self.zero.eval(batch), n)
        acc = acc if acc.type == acc_t else acc.cast(acc_t)
        first = np.cumsum(el.lens) - el.lens
        merge = self.merge
        assert isinstance(merge, LambdaFunction)
        for k in range(int(el.lens.max()) if n and len(el.lens) else 0):
            rows = np.flatnonzero(el.lens > k)
            x = el.values.take(pa.array(first[rows] + k, pa.int64()))
            cur = acc.take(pa.array(rows, pa.int64()))
            new = el.eval(merge, [cur, x], rows)
            if new.type != acc_t:
                new = new.cast(acc_t)
            mask = np.zeros(n, bool)
            mask[rows] = True
            scatter = np.zeros(n, np.int64)
            scatter[rows] = np.arange(len(rows))
            acc = pc.if_else(pa.array(mask), new.take(pa.array(scatter)), acc)
        finish = self.finish
        assert isinstance(finish, LambdaFunction)
        out = el.eval(finish, [acc], np.arange(n))
        return pc.if_else(pa.array(el.valid), out, pa.scalar(None, out.type))

    def simple_string(self) -> str:
        return (f"{self.fn_name}({self.argument.simple_string()}, {self.zero.simple_string()}, "
                f"{self.merge.simple_string()}, {self.finish.simple_string()})")

    def sql(self) -> str:
        return (f"{self.fn_name}({self.argument.sql()}, {self.zero.sql()}, {self.merge.sql()}, "
                f"{self.finish.sql()})")


@node
class ZipWith(Expression):
    """``zip_with(a, b, (x, y) -> f)`` (Spark's ``ZipWith``): the shorter array is padded with
    NULLs."""

    left: Expression
    right: Expression
    function: Expression

    @property
    def data_type(self) -> T.DataType:
        return T.ArrayType(self.function.data_type, self.function.nullable)

    def check_input_types(self) -> str | None:
        return check_arrays(self.left, self.right)

    def eval(self, batch: pa.RecordBatch) -> pa.Array:
        n = batch.num_rows
        la = to_array(self.left.eval(batch), n)
        ra = to_array(self.right.eval(batch), n)
        left, right = _Elements(la, batch), _Elements(ra, batch)
        valid = left.valid & right.valid
        lens = np.where(valid, np.maximum(left.lens, right.lens), 0)
        rows = np.repeat(np.arange(n), lens)
        within = np.arange(int(lens.sum())) - np.repeat(np.cumsum(lens) - lens, lens)

        def side(e: _Elements) -> pa.Array:
            starts = np.cumsum(e.lens) - e.lens
            ok = within < e.lens[rows]
            return pc.take(e.values, pa.array(np.where(ok, starts[rows] + within, 0), mask=~ok)) \
                if len(e.values) else pa.nulls(len(rows), e.values.type)

        f = self.function
        assert isinstance(f, LambdaFunction)
        out = left.eval(f, [side(left), side(right)], rows)
        return _lists(lens, out, valid, self.data_type.to_arrow())

    def simple_string(self) -> str:
        return (f"zip_with({self.left.simple_string()}, {self.right.simple_string()}, "
                f"{self.function.simple_string()})")

    def sql(self) -> str:
        return f"zip_with({self.left.sql()}, {self.right.sql()}, {self.function.sql()})"


# ---------------------------------------------------------------------------------------------
# Map higher-order functions: map_filter, transform_keys, transform_values, map_zip_with


class _MapEntries(_Elements):
    """The flattened entries of a map array: ``keys`` and ``values`` (the items)."""

    def __init__(self, arr: pa.Array, batch: pa.RecordBatch) -> None:
        _Elements.__init__(self, arr, batch)
        self.keys = pc.take(arr.keys, self.take)


def _offsets(lens: np.ndarray) -> np.ndarray:
    return np.concatenate([[0], np.cumsum(lens)]).astype(np.int64)


class _MapHOF(_ArrayHOF):
    """A higher-order function of one map and a ``(key, value) -> ...`` lambda."""

    __slots__ = ()

    def check_input_types(self) -> str | None:
        a = self.argument  # type: ignore[attr-defined]
        if not isinstance(a.data_type, (T.MapType, T.NullType)):
            return unexpected_input_type(1, '"MAP"', a)
        return None

    @property
    def nullable(self) -> bool:
        return self.argument.nullable  # type: ignore[attr-defined]

    def _entries(self, batch: pa.RecordBatch) -> tuple[_MapEntries, pa.Array]:
        f = self.function  # type: ignore[attr-defined]
        arr = to_array(self.argument.eval(batch), batch.num_rows)  # type: ignore[attr-defined]
        el = _MapEntries(arr, batch)
        return el, el.eval(f, [el.keys, el.values])


@node
class MapFilter(_MapHOF):
    """``map_filter(m, (k, v) -> pred)`` (Spark's ``MapFilter``)."""

    argument: Expression
    function: Expression
    fn_name = "map_filter"

    @property
    def data_type(self) -> T.DataType:
        return self.argument.data_type

    def check_input_types(self) -> str | None:
        return _MapHOF.check_input_types(self) or _boolean_lambda(self.function)

    def eval(self, batch: pa.RecordBatch) -> pa.Array:
        el, res = self._entries(batch)
        keep = pc.fill_null(res, False)
        k = keep.to_numpy(zero_copy_only=False).astype(bool)
        lens = np.bincount(el.rows[k], minlength=len(el.valid))
        at = self.data_type.to_arrow()
        return pa.MapArray.from_arrays(pa.array(_offsets(lens).astype(np.int32)),
                                       el.keys.filter(keep).cast(at.key_type),
                                       el.values.filter(keep).cast(at.item_type), type=at,
                                       mask=pa.array(~el.valid))


@node
class TransformValues(_MapHOF):
    """``transform_values(m, (k, v) -> v2)`` (Spark's ``TransformValues``)."""

    argument: Expression
    function: Expression
    fn_name = "transform_values"

    @property
    def data_type(self) -> T.DataType:
        kt = getattr(self.argument.data_type, "key_type", T.NULL)
        return T.MapType(kt, self.function.data_type, self.function.nullable)

    def eval(self, batch: pa.RecordBatch) -> pa.Array:
        el, res = self._entries(batch)
        at = self.data_type.to_arrow()
        return pa.MapArray.from_arrays(pa.array(_offsets(el.lens).astype(np.int32)),
                                       el.keys.cast(at.key_type), res.cast(at.item_type),
                                       type=at, mask=pa.array(~el.valid))


@node
class TransformKeys(_MapHOF):
    """``transform_keys(m, (k, v) -> k2)`` (Spark's ``TransformKeys``): a NULL or repeated new
    key fails as the map constructors do."""

    argument: Expression
    function: Expression
    fn_name = "transform_keys"

    @property
    def data_type(self) -> T.DataType:
        mt = self.argument.data_type
        return T.MapType(self.function.data_type, getattr(mt, "value_type", T.NULL),
                         getattr(mt, "value_contains_null", True))

    def eval(self, batch: pa.RecordBatch) -> pa.Array:
        el, res = self._entries(batch)
        return _build_map(res, el.values, _offsets(el.lens), ~el.valid, self.data_type)


@node
class MapZipWith(Expression):
    """``map_zip_with(m1, m2, (k, v1, v2) -> v)`` (Spark's ``MapZipWith``): over the union of
    the keys (``m1``'s in order, then ``m2``'s others), a side's value NULL where it lacks the
    key."""

    left: Expression
    right: Expression
    function: Expression

    @property
    def data_type(self) -> T.DataType:
        kt = getattr(self.left.data_type, "key_type", T.NULL)
        return T.MapType(kt, self.function.data_type, self.function.nullable)

    @property
    def nullable(self) -> bool:
        return self.left.nullable or self.right.nullable

    def check_input_types(self) -> str | None:
        for i, a in enumerate((self.left, self.right), 1):
            if not isinstance(a.data_type, (T.MapType, T.NullType)):
                return unexpected_input_type(i, '"MAP"', a)
        return None

    def eval(self, batch: pa.RecordBatch) -> pa.Array:
        n = batch.num_rows
        lm = _MapEntries(to_array(self.left.eval(batch), n), batch)
        rm = _MapEntries(to_array(self.right.eval(batch), n), batch)
        valid = lm.valid & rm.valid
        kt = self.data_type.key_type.to_arrow()  # type: ignore[attr-defined]
        nl = len(lm.rows)
        t = pa.table({"r": pa.array(np.concatenate([lm.rows, rm.rows]).astype(np.int64)),
                      "k": pa.concat_arrays([lm.keys.cast(kt), rm.keys.cast(kt)]),
                      "i": pa.array(np.arange(nl + len(rm.rows)), pa.int64()),
                      "l": pa.array(np.concatenate([np.arange(nl), np.full(len(rm.rows), -1)]),
                                    pa.int64()),
                      "rr": pa.array(np.concatenate([np.full(nl, -1),
                                                     np.arange(len(rm.rows))]), pa.int64())})
        t = t.filter(pa.array(valid[t.column("r").to_numpy()]))
        g = t.group_by(["r", "k"], use_threads=False).aggregate(
            [("i", "min"), ("l", "max"), ("rr", "max")]).sort_by([("r", "ascending"),
                                                                  ("i_min", "ascending")])
        rows = g.column("r").to_numpy()
        li, ri = g.column("l_max").to_numpy(), g.column("rr_max").to_numpy()
        v1 = lm.values.take(pa.array(np.where(li >= 0, li, 0), mask=li < 0)) if nl else \
            pa.nulls(len(rows), lm.values.type)
        v2 = rm.values.take(pa.array(np.where(ri >= 0, ri, 0), mask=ri < 0)) if len(rm.rows) \
            else pa.nulls(len(rows), rm.values.type)
        f = self.function
        assert isinstance(f, LambdaFunction)
        keys = g.column("k").combine_chunks()
        out = lm.eval(f, [keys, v1, v2], rows)
        lens = np.bincount(rows, minlength=n)
        at = self.data_type.to_arrow()
        return pa.MapArray.from_arrays(pa.array(_offsets(lens).astype(np.int32)), keys,
                                       out.cast(at.item_type), type=at, mask=pa.array(~valid))

    def simple_string(self) -> str:
        return (f"map_zip_with({self.left.simple_string()}, {self.right.simple_string()}, "
                f"{self.function.simple_string()})")

    def sql(self) -> str:
        return f"map_zip_with({self.left.sql()}, {self.right.sql()}, {self.function.sql()})"
