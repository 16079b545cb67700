"""Miscellaneous functions of issue 22: ``raise_error`` / ``assert_true`` (Spark's RaiseError,
error class ``USER_RAISED_EXCEPTION``) and the session constants ``current_user()`` /
``session_user()`` / ``user()`` and ``version()`` (``current_path()`` needs the catalog: the
analyzer's ResolveFunctions builds it beside ``current_database()``).
"""

from __future__ import annotations

import getpass
import os
from importlib.metadata import PackageNotFoundError, version as _dist_version
from typing import Callable

import pyarrow as pa

from ember import types as T
from ember.errors import ExecutionError
from ember.expressions.base import Expression, Literal
from ember.expressions.cast import Cast
from ember.expressions.common import to_array, unexpected_input_type
from ember.expressions.conditional import If
from ember.expressions.misc import FunctionCall, to_pretty_sql
from ember.trees import node

__all__ = ["RaiseError", "MISC_FUNCTIONS", "build_misc_function"]


@node
class RaiseError(Expression):
    """``raise_error(message)``: fails with ``USER_RAISED_EXCEPTION`` on the first row it is
    evaluated for; its type is VOID (Spark's RaiseError, shown with its error class and the
    message parameter map).  Never folded: not deterministic for the optimizer, so only rows
    that reach it raise (``if(c, raise_error('x'), v)``)."""

    message: Expression
    may_fail_at_runtime = True

    @property
    def data_type(self) -> T.DataType:
        return T.NULL

    @property
    def deterministic(self) -> bool:
        return False

    def check_input_types(self) -> str | None:
        t = self.message.data_type
        if isinstance(t, (T.ArrayType, T.MapType, T.StructType)):
            return unexpected_input_type(1, '"STRING"', self.message)
        return None

    def eval(self, batch: pa.RecordBatch) -> pa.Array:
        n = batch.num_rows
        if n:
            msg = self.message
            text = msg if isinstance(msg.data_type, (T.StringType, T.NullType)) else Cast(
                msg, T.STRING)
            value = to_array(text.eval(batch), n)[0].as_py()
            shown = "null" if value is None else str(value)
            raise ExecutionError(shown, error_class="USER_RAISED_EXCEPTION",
                                 parameters={"errorMessage": shown})
        return pa.nulls(0)

    def _show(self, inner: str) -> str:
        return f"raise_error(USER_RAISED_EXCEPTION, map(errorMessage, {inner}))"

    def simple_string(self) -> str:
        return self._show(self.message.simple_string())

    def sql(self) -> str:
        return self._show(self.message.sql())


def _raise_error(name, a):
    return RaiseError(a[0])


def _assert_true(name, a):
    """``assert_true(cond[, message])``: ``if(cond, NULL, raise_error(message))``, shown as
    ``assert_true(cond, message)`` with Spark's default message ``'<cond>' is not true!``."""
    cond = a[0]
    msg = a[1] if len(a) > 1 else Literal(f"'{to_pretty_sql(cond)}' is not true!", T.STRING)
    return FunctionCall.of("assert_true", (cond, msg), _AssertTrue(cond, msg))


@node
class _AssertTrue(Expression):
    """The replacement of ``assert_true``: ``If(cond, NULL, RaiseError(msg))`` once ``cond``
    is BOOLEAN (type-checked here so the error names the condition as Spark does)."""

    cond: Expression
    message: Expression

    @property
    def data_type(self) -> T.DataType:
        return T.NULL

    @property
    def deterministic(self) -> bool:
        return False

    def check_input_types(self) -> str | None:
        if not isinstance(self.cond.data_type, (T.BooleanType, T.NullType)):
            return unexpected_input_type(1, '"BOOLEAN"', self.cond)
        return None

    may_fail_at_runtime = True

    def eval(self, batch: pa.RecordBatch) -> pa.Array:
        return If(self.cond, Literal(None, T.NULL), RaiseError(self.message)).eval(batch)

    def sql(self) -> str:
        return f"assert_true({self.cond.sql()}, {self.message.sql()})"


def spark_user() -> str:
    """The user Spark reports: ``SPARK_USER`` when set, else the OS user."""
    return os.environ.get("SPARK_USER") or getpass.getuser()


def ember_version_string() -> str:
    """``version()``: Ember's version and build, in Spark's ``<version> <revision>`` form."""
    try:
        v = _dist_version("ember")
    except PackageNotFoundError:  # a source tree
        v = "0+unknown"
    return f"{v} ember"


def _constant(value: Callable[[], str]):
    def build(name, a):
        return FunctionCall.of(name, (), Literal(value(), T.STRING))
    return build


#: SQL name -> (min args, max args, builder(name, args))
MISC_FUNCTIONS: dict[str, tuple[int, int, Callable]] = {
    "raise_error": (1, 1, _raise_error), "assert_true": (1, 2, _assert_true),
    "current_user": (0, 0, _constant(spark_user)), "session_user": (0, 0, _constant(spark_user)),
    "user": (0, 0, _constant(spark_user)), "version": (0, 0, _constant(ember_version_string)),
}


def build_misc_function(name: str, args: tuple[Expression, ...]) -> Expression:
    return MISC_FUNCTIONS[name][2](name, args)

