"""Python user-defined functions in expressions (Spark's ``PythonUDF``, ``PythonFuncExpression``).

A :class:`PythonUDF` is a call of a Python function on its argument columns.  Like Spark's it is
never folded nor evaluated at planning time (ConvertToLocalRelation leaves it alone): the
optimizer's ExtractPythonUDFs moves each call into a ``BatchEvalPython`` or ``ArrowEvalPython``
node, whose operator evaluates it over whole batches with :meth:`PythonUDF.eval_batches`.

``eval_type`` is PySpark's ``PythonEvalType``:

- ``SQL_BATCHED_UDF`` (``udf``) and ``SQL_ARROW_BATCHED_UDF`` (``udf(useArrow=True)``): the
  function is called once per row, on Python values; the argument columns are converted to
  Python values column by column (``pyarrow.Array.to_pylist``), the results back to one Arrow
  array of the return type.  A result that does not fit the return type is NULL for
  ``SQL_BATCHED_UDF`` (Spark's ``EvaluatePython.makeFromJava``);
- ``SQL_SCALAR_PANDAS_UDF``: called once per batch on ``pandas.Series`` (``pandas_udf``);
- ``SQL_SCALAR_PANDAS_ITER_UDF``: called once per partition on an iterator of ``Series`` (or of
  tuples of them), yielding one ``Series`` per input batch;
- ``SQL_GROUPED_AGG_PANDAS_UDF``: ``Series`` -> scalar, an aggregate
  (:class:`ember.expressions.aggregates.python.PythonUDAF`).

An exception raised by the user's function becomes :class:`ember.errors.PythonException`
carrying the Python traceback of the user's code only (Spark's ``PythonException``).
"""

from __future__ import annotations

import datetime
import decimal
import traceback
from collections.abc import Callable, Iterator
from dataclasses import field
from typing import Any

import pyarrow as pa

from ember import types as T
from ember.errors import EmberError, PythonException
from ember.expressions.base import Expression, new_expr_id
from ember.trees import node

__all__ = ["PythonEvalType", "PythonUDF", "python_exception", "to_arrow_result",
           "series_to_arrow", "arrow_to_pandas"]


class PythonEvalType:
    """PySpark's ``PythonEvalType`` codes (shown by EXPLAIN's ``ArrowEvalPython``)."""

    SQL_BATCHED_UDF = 100
    SQL_ARROW_BATCHED_UDF = 101
    SQL_SCALAR_PANDAS_UDF = 200
    SQL_GROUPED_MAP_PANDAS_UDF = 201
    SQL_GROUPED_AGG_PANDAS_UDF = 202
    SQL_WINDOW_AGG_PANDAS_UDF = 203
    SQL_SCALAR_PANDAS_ITER_UDF = 204
    SQL_MAP_PANDAS_ITER_UDF = 205
    SQL_COGROUPED_MAP_PANDAS_UDF = 206
    SQL_MAP_ARROW_ITER_UDF = 207
    SQL_GROUPED_MAP_ARROW_UDF = 209

    #: evaluated by ArrowEvalPython (the others of the scalar kinds by BatchEvalPython)
    ARROW_SCALAR = frozenset({SQL_ARROW_BATCHED_UDF, SQL_SCALAR_PANDAS_UDF,
                              SQL_SCALAR_PANDAS_ITER_UDF})
    SCALAR = frozenset({SQL_BATCHED_UDF}) | ARROW_SCALAR


def python_exception(e: BaseException, func: Callable[..., Any]) -> EmberError:
    """``e``, raised by the user's ``func``, as Spark's ``PythonException``: the traceback from
    the user's function down (Ember's frames above it are left out)."""
    if isinstance(e, EmberError):
        return e
    tb = e.__traceback__
    code = getattr(func, "__code__", None)
    # skip the frames of Ember's own evaluation: start at the user's function when it is there
    start = tb
    while start is not None and code is not None and start.tb_frame.f_code is not code:
        start = start.tb_next
    if start is None:  # the failing frame is not the function's (a builtin): keep the last one
        start = tb
        while start is not None and start.tb_next is not None:
            start = start.tb_next
    text = "".join(traceback.format_exception(type(e), e, start))
    return PythonException(
        "An exception was thrown from the Python worker:\n" + text.rstrip("\n"))


@node
class PythonUDF(Expression):
    """``name(args)``: a call of the Python function ``func`` (Spark's ``PythonUDF``).

    ``udf_deterministic`` is the user's flag (``asNondeterministic()`` clears it); the
    expression is deterministic when the flag is set and its arguments are.  ``result_id`` is
    the expression id Spark prints after the call (``f(a#1)#5``)."""

    name: str
    func: Any = field(compare=False)
    return_type: T.DataType
    arguments: tuple[Expression, ...]
    eval_type: int = PythonEvalType.SQL_BATCHED_UDF
    udf_deterministic: bool = True
    result_id: int = field(default_factory=new_expr_id)
    #: identifies the function: equal calls of one function compare equal (``func`` is not
    #: compared: two different lambdas may compare equal only through this id)
    func_id: int = 0

    @property
    def data_type(self) -> T.DataType:
        return self.return_type

    @property
    def nullable(self) -> bool:
        return True

    @property
    def deterministic(self) -> bool:
        return self.udf_deterministic and all(a.deterministic for a in self.arguments)

    @property
    def foldable(self) -> bool:
        return False

    @property
    def is_arrow(self) -> bool:
        return self.eval_type in PythonEvalType.ARROW_SCALAR

    def simple_string(self) -> str:
        return f"{self.name}({', '.join(a.simple_string() for a in self.arguments)})#{self.result_id}"

    def sql(self) -> str:
        return f"{self.name}({', '.join(a.sql() for a in self.arguments)})"

    # -- evaluation -------------------------------------------------------------------------
    def eval(self, batch: pa.RecordBatch) -> pa.Array:
        return next(self.eval_batches(iter([[a.eval(batch) for a in self.arguments]])))

    def eval_batches(self, args: Iterator[list[pa.Array]]) -> Iterator[pa.Array]:
        """The results for each batch of argument arrays (``args`` yields one list of arrays
        per batch; the function may see all of a partition's batches, for the iterator
        kind)."""
        if self.eval_type == PythonEvalType.SQL_SCALAR_PANDAS_ITER_UDF:
            yield from self._eval_iterator(args)
            return
        for arrays in args:
            n = len(arrays[0]) if arrays else 0
            if self.eval_type == PythonEvalType.SQL_SCALAR_PANDAS_UDF:
                yield self._eval_pandas(arrays, n)
            else:
                yield self._eval_rows(arrays, n)

    def _call(self, *args: Any) -> Any:
        try:
            return self.func(*args)
        except Exception as e:  # noqa: BLE001 - the user's error, with its traceback
            raise python_exception(e, self.func) from None

    def _eval_rows(self, arrays: list[pa.Array], n: int) -> pa.Array:
        func = self.func
        columns = [_to_array(a, n).to_pylist() for a in arrays]
        try:
            values = list(map(func, *columns)) if columns else [func() for _ in range(n)]
        except Exception as e:  # noqa: BLE001 - the user's error, with its traceback
            raise python_exception(e, func) from None
        return to_arrow_result(values, self.return_type,
                               lenient=self.eval_type == PythonEvalType.SQL_BATCHED_UDF)

    def _eval_pandas(self, arrays: list[pa.Array], n: int) -> pa.Array:
        series = [arrow_to_pandas(_to_array(a, n)) for a in arrays]
        out = self._call(*series)
        return series_to_arrow(out, self.return_type.to_arrow(), n, self.name)

    def _eval_iterator(self, args: Iterator[list[pa.Array]]) -> Iterator[pa.Array]:
        lengths: list[int] = []

        def inputs() -> Iterator[Any]:
            for arrays in args:
                n = len(arrays[0]) if arrays else 0
                lengths.append(n)
                series = [arrow_to_pandas(_to_array(a, n)) for a in arrays]
                yield series[0] if len(series) == 1 else tuple(series)

        results = self._call(inputs())
        while True:
            try:
                out = next(results)
            except StopIteration:
                break
            except Exception as e:  # noqa: BLE001 - the user's error, with its traceback
                raise python_exception(e, self.func) from None
            yield series_to_arrow(out, self.return_type.to_arrow(), lengths[-1] if lengths else len(out),
                                  self.name)


def _to_array(a: Any, n: int) -> pa.Array:
    if isinstance(a, pa.ChunkedArray):
        return a.combine_chunks()
    if isinstance(a, pa.Scalar):
        return pa.array([a.as_py()] * n, a.type)
    return a


# -- results ------------------------------------------------------------------------------------


def to_arrow_result(values: list[Any], dtype: T.DataType, lenient: bool) -> pa.Array:
    """Python values as an Arrow array of ``dtype``: in one conversion when they fit, else value
    by value, with a value of the wrong kind NULL when ``lenient`` (Spark's conversion of a
    batched UDF's results) or an error naming the value."""
    target = dtype.to_arrow()
    try:
        return pa.array(values, type=target)
    except (pa.ArrowInvalid, pa.ArrowTypeError, OverflowError, TypeError, ValueError):
        pass
    convert = _converter(dtype)
    out = []
    for v in values:
        c = convert(v)
        if c is _MISMATCH:
            if not lenient:
                raise PythonException(
                    f"[UDF_ARROW_TYPE_CONVERSION_ERROR] Cannot convert the output value of the "
                    f"UDF {v!r} to the declared return type {dtype.simple_string()}.",
                    error_class="PYTHON_EXCEPTION")
            c = None
        out.append(c)
    return pa.array(out, type=target)


_MISMATCH = object()


def _converter(dtype: T.DataType) -> Callable[[Any], Any]:
    """Spark's ``EvaluatePython.makeFromJava`` for one type: the value as the type's Python
    value, None for None, ``_MISMATCH`` when it is of another kind."""
    def ok(kinds: tuple[type, ...], exclude: tuple[type, ...] = ()) -> Callable[[Any], Any]:
        def conv(v: Any) -> Any:
            if v is None:
                return None
            if isinstance(v, kinds) and not isinstance(v, exclude):
                return v
            return _MISMATCH
        return conv

    if isinstance(dtype, T.BooleanType):
        return ok((bool,))
    if isinstance(dtype, T.IntegralType):
        bits = {T.ByteType: 8, T.ShortType: 16, T.IntegerType: 32, T.LongType: 64}[type(dtype)]
        lo, hi = -(1 << (bits - 1)), (1 << (bits - 1)) - 1

        def integral(v: Any) -> Any:
            if v is None:
                return None
            if isinstance(v, int) and not isinstance(v, bool):
                return v if lo <= v <= hi else None
            return _MISMATCH
        return integral
    if isinstance(dtype, (T.FloatType, T.DoubleType)):
        return ok((float,))
    if isinstance(dtype, T.DecimalType):
        return ok((decimal.Decimal,))
    if isinstance(dtype, T.StringType):
        def string(v: Any) -> Any:
            if v is None:
                return None
            if isinstance(v, bool):
                return "true" if v else "false"
            if isinstance(v, (bytes, bytearray)):
                return _MISMATCH
            return str(v)
        return string
    if isinstance(dtype, T.BinaryType):
        return ok((bytes, bytearray))
    if isinstance(dtype, T.DateType):
        return ok((datetime.date,), (datetime.datetime,))
    if isinstance(dtype, T.TimestampType):
        return ok((datetime.datetime,))
    return lambda v: v


def arrow_to_pandas(a: pa.Array) -> Any:
    """An Arrow column as the ``pandas.Series`` PySpark hands a pandas UDF (integers with NULLs
    become floats, as in PySpark)."""
    return a.to_pandas()


def series_to_arrow(out: Any, target: pa.DataType, n: int, name: str) -> pa.Array:
    """A pandas UDF's result (a ``Series``, or anything array-like) as an Arrow array of type
    ``target`` and length ``n`` (Spark's ``RESULT_LENGTH_MISMATCH_FOR_PANDAS_UDF`` otherwise)."""
    import pandas as pd  # imported here: pandas loads only when a pandas UDF runs

    if not isinstance(out, pd.Series):
        if isinstance(out, pd.DataFrame) or not hasattr(out, "__len__"):
            raise PythonException(
                f"[UDF_RETURN_TYPE] Return type of the user-defined function should be "
                f"pandas.Series, but is {type(out).__name__}.",
                error_class="PYTHON_EXCEPTION")
        out = pd.Series(out)
    if len(out) != n:
        raise PythonException(
            f"[RESULT_LENGTH_MISMATCH_FOR_PANDAS_UDF] Number of results of the pandas UDF "
            f"{name} must match the number of input rows: expected {n}, got {len(out)}.",
            error_class="PYTHON_EXCEPTION")
    try:
        return pa.Array.from_pandas(out, type=target, safe=True)
    except (pa.ArrowInvalid, pa.ArrowTypeError, TypeError, ValueError) as e:
        raise PythonException(
            f"Exception thrown when converting pandas.Series ({out.dtype}) with name "
            f"'{out.name}' to Arrow Array ({target}): {e}",
            error_class="PYTHON_EXCEPTION") from None
