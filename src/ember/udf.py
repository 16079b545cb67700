"""User-defined Python functions: PySpark's ``udf``, ``pandas_udf``, ``UserDefinedFunction`` and
``spark.udf`` (``UDFRegistration``).

A :class:`UserDefinedFunction` called on columns builds a
:class:`~ember.expressions.python_udf.PythonUDF` expression (a new result id per call, as
Spark's).  ``spark.udf.register(name, f, returnType)`` makes it callable from SQL: the session
catalog keeps it, and the analyzer's ResolveFunctions looks registered names up before the
built-in functions (Spark's session function registry).

>>> from ember import functions as F
>>> plus_one = F.udf(lambda v: v + 1, "int")
>>> plus_one.returnType
IntegerType()
"""

from __future__ import annotations

import functools
import inspect
import itertools
import typing
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any

from ember import types as T
from ember.column import Column, _col_or_name
from ember.conf import PYTHON_UDF_ARROW_ENABLED
from ember.errors import AnalysisError, UnsupportedError
from ember.expressions.aggregates.base import AggregateExpression
from ember.expressions.aggregates.python import PythonUDAF
from ember.expressions.base import Expression
from ember.expressions.python_udf import PythonEvalType, PythonUDF
from ember.sql import parse_data_type
from ember.sql.schema_ddl import parse_ddl_schema

if TYPE_CHECKING:  # pragma: no cover
    from ember.session import Session

__all__ = ["UserDefinedFunction", "UDFRegistration", "PandasUDFType", "udf", "pandas_udf",
           "to_return_type"]

_func_ids = itertools.count(1)


class PandasUDFType:
    """PySpark's ``PandasUDFType`` (the ``functionType`` of ``pandas_udf``)."""

    SCALAR = PythonEvalType.SQL_SCALAR_PANDAS_UDF
    SCALAR_ITER = PythonEvalType.SQL_SCALAR_PANDAS_ITER_UDF
    GROUPED_MAP = PythonEvalType.SQL_GROUPED_MAP_PANDAS_UDF
    GROUPED_AGG = PythonEvalType.SQL_GROUPED_AGG_PANDAS_UDF


def to_return_type(value: Any) -> T.DataType:
    """A return type given as an Ember or PySpark ``DataType`` or a DDL string (``"int"``,
    ``"a int, b string"``)."""
    if isinstance(value, T.DataType):
        return value
    if T.is_pyspark_type(value):
        return T.from_pyspark(value)
    if isinstance(value, str):
        try:
            return parse_data_type(value)
        except Exception:  # noqa: BLE001 - a field list: "a int, b string"
            return parse_ddl_schema(value)
    raise AnalysisError(
        f"[NOT_DATATYPE_OR_STR] Argument `returnType` should be a DataType or str, got "
        f"{type(value).__name__}.", error_class="NOT_DATATYPE_OR_STR")


class UserDefinedFunction:
    """A Python function usable on columns (PySpark's ``UserDefinedFunction``)."""

    def __init__(self, func: Callable[..., Any], returnType: Any = T.StringType(),  # noqa: N803
                 name: str | None = None, evalType: int = PythonEvalType.SQL_BATCHED_UDF,  # noqa: N803
                 deterministic: bool = True) -> None:
        if not callable(func):
            raise AnalysisError(
                f"[NOT_CALLABLE] Argument `func` should be a callable, got "
                f"{type(func).__name__}.", error_class="NOT_CALLABLE")
        self.func = func
        self.returnType = to_return_type(returnType)  # noqa: N815
        self._name = name or getattr(func, "__name__", type(func).__name__)
        self.evalType = evalType  # noqa: N815
        self.deterministic = deterministic
        self._id = next(_func_ids)
        self.__doc__ = getattr(func, "__doc__", None)

    @property
    def __name__(self) -> str:  # noqa: PLW3201 - PySpark's UDFs expose the function's name
        return self._name

    def asNondeterministic(self) -> "UserDefinedFunction":  # noqa: N802
        """This UDF marked non-deterministic: the optimizer neither moves nor merges its calls,
        and no two calls are taken for one."""
        self.deterministic = False
        return self

    def expression(self, args: tuple[Any, ...]) -> Expression:
        """The call of this UDF on ``args`` (Columns, names or expressions): a ``PythonUDF``, or
        for a grouped aggregate pandas UDF an aggregate of a ``PythonUDAF``.  A GROUPED_MAP
        pandas UDF is no column function: it goes to ``GroupedData.apply``."""
        if self.evalType == PythonEvalType.SQL_GROUPED_MAP_PANDAS_UDF:
            raise AnalysisError(
                "Eval type for UDF must be SQL_BATCHED_UDF, "
                "SQL_ARROW_BATCHED_UDF, SQL_SCALAR_PANDAS_UDF, SQL_SCALAR_ARROW_UDF, "
                "SQL_SCALAR_PANDAS_ITER_UDF, SQL_SCALAR_ARROW_ITER_UDF, SQL_GROUPED_AGG_PANDAS_UDF "
                "or SQL_GROUPED_AGG_ARROW_UDF.", error_class="INVALID_UDF_EVAL_TYPE")
        if self.evalType == PythonEvalType.SQL_GROUPED_AGG_PANDAS_UDF:
            return AggregateExpression(PythonUDAF(
                self._name, self.func, self.returnType, tuple(_col_or_name(a) for a in args),
                self.deterministic, func_id=self._id))
        return PythonUDF(self._name, self.func, self.returnType,
                         tuple(_col_or_name(a) for a in args), self.evalType,
                         self.deterministic, func_id=self._id)

    def __call__(self, *cols: Any) -> Column:
        return Column(self.expression(cols))

    def __repr__(self) -> str:
        return f"UserDefinedFunction({self._name}, {self.returnType.simple_string()})"


def active_session() -> "Session | None":
    """The active session (PySpark's ``SparkSession.getActiveSession``)."""
    # imported here: ember.session imports this module (spark.udf)
    from ember.session import Session

    return Session.getActiveSession()


def _arrow_default() -> bool:
    active = active_session()
    conf = active.sql_conf if active is not None else None
    return bool(conf.get(PYTHON_UDF_ARROW_ENABLED)) if conf is not None else bool(
        PYTHON_UDF_ARROW_ENABLED.default)


def udf(f: Any = None, returnType: Any = T.StringType(), *,  # noqa: N803
        useArrow: bool | None = None) -> Any:  # noqa: N803
    """PySpark's ``udf``: ``udf(f, "int")``, ``udf(f, IntegerType())``, or as a decorator
    ``@udf``, ``@udf("int")``, ``@udf(returnType=..., useArrow=True)``.  Without ``useArrow``,
    ``spark.sql.execution.pythonUDF.arrow.enabled`` of the active session decides."""
    if f is None or isinstance(f, (str, T.DataType)) or T.is_pyspark_type(f):
        rt = returnType if f is None else f
        return functools.partial(_make_udf, returnType=rt, useArrow=useArrow)
    return _make_udf(f, returnType, useArrow)


def _make_udf(f: Callable[..., Any], returnType: Any, useArrow: bool | None  # noqa: N803
              ) -> UserDefinedFunction:
    arrow = _arrow_default() if useArrow is None else useArrow
    kind = PythonEvalType.SQL_ARROW_BATCHED_UDF if arrow else PythonEvalType.SQL_BATCHED_UDF
    return UserDefinedFunction(f, returnType, evalType=kind)


def pandas_udf(f: Any = None, returnType: Any = None, functionType: int | None = None  # noqa: N803
               ) -> Any:
    """PySpark's ``pandas_udf``: a scalar ``Series -> Series`` function, an iterator of
    ``Series`` (or of tuples of them) to an iterator of ``Series``, chosen from the type hints
    (or ``functionType``); as a decorator ``@pandas_udf("long")`` or called
    ``pandas_udf(f, "long")``."""
    if f is None or isinstance(f, (str, T.DataType)) or T.is_pyspark_type(f):
        rt = returnType if f is None else f
        ft = functionType
        if f is not None and isinstance(returnType, int):
            ft = returnType
        return functools.partial(_make_pandas_udf, returnType=rt, functionType=ft)
    return _make_pandas_udf(f, returnType, functionType)


def _make_pandas_udf(f: Callable[..., Any], returnType: Any,  # noqa: N803
                     functionType: int | None) -> UserDefinedFunction:  # noqa: N803
    if returnType is None:
        raise AnalysisError("[CANNOT_BE_NONE] Argument `returnType` cannot be None.",
                            error_class="CANNOT_BE_NONE")
    kind = functionType if functionType is not None else _kind_from_hints(f)
    return UserDefinedFunction(f, returnType, evalType=kind)


def _kind_from_hints(f: Callable[..., Any]) -> int:
    """The pandas UDF kind of ``f``'s type hints (PySpark's ``infer_eval_type``):
    ``Iterator[...] -> Iterator[...]``: scalar iterator; ``... -> Series``: scalar; ``Series ->
    scalar``: grouped aggregate."""
    try:
        hints = typing.get_type_hints(f)
    except Exception:  # noqa: BLE001 - unresolvable annotations: the default kind
        hints = {}
    ret = hints.get("return")
    if ret is None:
        return PythonEvalType.SQL_SCALAR_PANDAS_UDF
    origin = typing.get_origin(ret)
    if origin in (Iterator, typing.Iterator) or ret in (Iterator, typing.Iterator):
        return PythonEvalType.SQL_SCALAR_PANDAS_ITER_UDF
    name = getattr(ret, "__name__", "")
    if name in ("Series", "DataFrame"):
        return PythonEvalType.SQL_SCALAR_PANDAS_UDF
    params = [p for p in inspect.signature(f).parameters.values()]
    if params:
        return PythonEvalType.SQL_GROUPED_AGG_PANDAS_UDF
    return PythonEvalType.SQL_SCALAR_PANDAS_UDF


class UDFRegistration:
    """``spark.udf`` (PySpark's ``UDFRegistration``)."""

    def __init__(self, session: "Session") -> None:
        self._session = session

    def register(self, name: str, f: Any, returnType: Any = None  # noqa: N803
                 ) -> UserDefinedFunction:
        """Register ``f`` (a Python function, or a UDF made by ``udf`` / ``pandas_udf``) as the
        SQL function ``name``; returns the UDF, usable on columns too.  A UDF keeps its own
        return type (PySpark refuses a second one: ``CANNOT_SPECIFY_RETURN_TYPE_FOR_UDF``)."""
        if isinstance(f, UserDefinedFunction):
            if returnType is not None:
                raise AnalysisError(
                    f"[CANNOT_SPECIFY_RETURN_TYPE_FOR_UDF] returnType can not be specified when "
                    f"`f` is a user-defined function, but got {returnType}.",
                    error_class="CANNOT_SPECIFY_RETURN_TYPE_FOR_UDF")
            registered = UserDefinedFunction(f.func, f.returnType, name, f.evalType,
                                             f.deterministic)
        else:
            rt = T.StringType() if returnType is None else returnType
            registered = UserDefinedFunction(f, rt, name, _make_udf(f, rt, None).evalType)
        self._session.session_catalog.register_python_function(name, registered.expression(()))
        return registered

    def registerJavaFunction(self, *args: Any, **kwargs: Any) -> None:  # noqa: N802
        raise UnsupportedError("Java UDFs need a JVM; Ember has none on the local runtime.",
                               error_class="UNSUPPORTED_FEATURE")
