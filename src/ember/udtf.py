"""Python user-defined table functions: PySpark's ``udtf``, ``UserDefinedTableFunction`` and
``spark.udtf`` (``UDTFRegistration``).

A UDTF is a class with ``eval(self, *args)`` yielding rows (tuples) and optionally
``terminate(self)`` yielding more once a partition's rows are done; ``returnType`` (a DDL string
or StructType) names and types its columns.  Called on columns it is a DataFrame
(``Squares(lit(1), lit(3))``); registered with ``spark.udtf.register("squares", Squares)`` it is
a table function of SQL: ``SELECT * FROM squares(1, 3)`` (ResolveTableValuedFunctions).  Both are
a ``Generate`` of :class:`~ember.expressions.python_udtf.PythonUDTF` over one row.

>>> from ember.functions import udtf
>>> @udtf(returnType="num int, sq int")
... class Squares:
...     def eval(self, start, end):
...         for n in range(start, end + 1):
...             yield n, n * n
>>> Squares.returnType.simple_string()
'struct<num:int,sq:int>'
"""

from __future__ import annotations

import functools
import itertools
from typing import TYPE_CHECKING, Any

from ember import types as T
from ember.column import _col_or_name
from ember.dataframe import DataFrame
from ember.errors import AnalysisError
from ember.expressions.base import Expression
from ember.expressions.python_udtf import PythonUDTF
from ember.plans.logical.nodes import Generate, OneRowRelation
from ember.udf import active_session, to_return_type

if TYPE_CHECKING:  # pragma: no cover
    from ember.session import Session

__all__ = ["UserDefinedTableFunction", "UDTFRegistration", "udtf"]

_udtf_ids = itertools.count(1)


class UserDefinedTableFunction:
    """A UDTF class made callable on columns (PySpark's ``UserDefinedTableFunction``)."""

    def __init__(self, func: type, returnType: Any, name: str | None = None,  # noqa: N803
                 deterministic: bool = True) -> None:
        if not isinstance(func, type):
            raise AnalysisError(
                f"Invalid user defined table function: the function handler must be a class, "
                f"but got '{type(func).__name__}'. Please provide a class as the function "
                "handler.", error_class="INVALID_UDTF_HANDLER_TYPE")
        if not hasattr(func, "eval"):
            raise AnalysisError(
                f"Failed to execute the user defined table function because it has not "
                f"implemented the 'eval' method. Please add the 'eval' method and try the "
                f"query again.", error_class="INVALID_UDTF_NO_EVAL")
        if returnType is None:
            raise AnalysisError(
                f"Failed to evaluate the user-defined table function '{func.__name__}' because "
                "the function arguments did not match the expected signature of the static "
                "'analyze' method: Ember needs the UDTF's returnType (an 'analyze' method is "
                "not supported).", error_class="INVALID_UDTF_RETURN_TYPE")
        rt = to_return_type(returnType)
        if not isinstance(rt, T.StructType):
            raise AnalysisError(
                f"The return type of the user-defined table function '{func.__name__}' must be a "
                f"'StructType', but got '{type(rt).__name__}'. Please make sure the return type "
                "is a StructType.", error_class="INVALID_UDTF_RETURN_TYPE")
        self.func = func
        self.returnType = rt  # noqa: N815
        self._name = name or func.__name__
        self.deterministic = deterministic
        self._id = next(_udtf_ids)

    @property
    def __name__(self) -> str:  # noqa: PLW3201 - PySpark's UDTFs expose the class's name
        return self._name

    def asDeterministic(self) -> "UserDefinedTableFunction":  # noqa: N802
        """PySpark's: UDTFs are non-deterministic unless marked (Ember keeps the flag)."""
        self.deterministic = True
        return self

    def call(self, args: tuple[Expression, ...]) -> PythonUDTF:
        """The generator calling this UDTF on ``args``."""
        return PythonUDTF(self._name, self.func, self.returnType, args, self._id,
                          self.deterministic)

    def __call__(self, *cols: Any) -> DataFrame:
        session = active_session()
        if session is None:
            raise AnalysisError("No active session: create one with ember.Session().",
                                error_class="NO_ACTIVE_SESSION")
        gen = self.call(tuple(_col_or_name(c) for c in cols))
        return session._dataframe(Generate(gen, False, (), (), (), OneRowRelation()))

    def __repr__(self) -> str:
        return f"UserDefinedTableFunction({self._name}, {self.returnType.simple_string()})"


def udtf(cls: type | None = None, *, returnType: Any = None,  # noqa: N803
         useArrow: bool | None = None) -> Any:  # noqa: N803
    """PySpark's ``udtf``: ``udtf(MyClass, returnType="a int")`` or the decorator
    ``@udtf(returnType="a int, b string")`` (``useArrow`` changes nothing in Ember: arguments and
    results cross as Arrow either way)."""
    if cls is None:
        return functools.partial(UserDefinedTableFunction, returnType=returnType)
    return UserDefinedTableFunction(cls, returnType)


class UDTFRegistration:
    """``spark.udtf`` (PySpark's ``UDTFRegistration``)."""

    def __init__(self, session: "Session") -> None:
        self._session = session

    def register(self, name: str, f: UserDefinedTableFunction) -> UserDefinedTableFunction:
        """Make the UDTF ``f`` the SQL table function ``name`` (``SELECT * FROM name(...)``)."""
        if not isinstance(f, UserDefinedTableFunction):
            raise AnalysisError(
                "Invalid UDTF: Expected a UDTF created with the udtf decorator, got "
                f"{type(f).__name__}.", error_class="CANNOT_REGISTER_UDTF",
                parameters={"name": name})
        registered = UserDefinedTableFunction(f.func, f.returnType, name, f.deterministic)
        self._session.session_catalog.register_python_table_function(name, registered)
        return registered
