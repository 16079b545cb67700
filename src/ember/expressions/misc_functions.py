"""Miscellaneous functions of issue 22: ``raise_error`` / ``assert_true`` (Spark's RaiseError,
error class ``USER_RAISED_EXCEPTION``), the session constants ``current_user()`` /
``session_user()`` / ``user()`` and ``version()`` (``current_path()`` needs the catalog: the
analyzer's ResolveFunctions builds it beside ``current_database()``), and the seeded generators
``randstr`` / ``uniform`` (Spark's RandStr / Uniform over XORShiftRandom(seed + partition)).
"""

from __future__ import annotations

import getpass
import os
from dataclasses import field
from decimal import ROUND_HALF_UP, Decimal
from typing import Any
from importlib.metadata import PackageNotFoundError, version as _dist_version
from typing import Callable

import numpy as np
import pyarrow as pa

from ember import types as T
from ember.errors import AnalysisError, ExecutionError
from ember.expressions.base import Expression, Literal
from ember.expressions.cast import Cast
from ember.expressions.common import to_array, unexpected_input_type
from ember.expressions.conditional import If
from ember.expressions.misc import FunctionCall, to_pretty_sql
from ember.expressions.nondeterministic import XorShiftRandom, _Stateful, random_seed
from ember.trees import node

__all__ = ["RaiseError", "MISC_FUNCTIONS", "build_misc_function"]


class _Raising(Expression):
    """A VOID expression that may raise ``USER_RAISED_EXCEPTION``.  Never folded: not
    deterministic for the optimizer, so only rows that reach it raise
    (``if(c, raise_error('x'), v)``)."""

    __slots__ = ()
    may_fail_at_runtime = True

    @property
    def data_type(self) -> T.DataType:
        return T.NULL

    @property
    def deterministic(self) -> bool:
        return False


@node
class RaiseError(_Raising):
    """``raise_error(message)``: fails with ``USER_RAISED_EXCEPTION`` on the first row it is
    evaluated for (Spark's RaiseError, shown with its error class and the message parameter
    map)."""

    message: Expression

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
class _AssertTrue(_Raising):
    """The replacement of ``assert_true``: ``If(cond, NULL, RaiseError(msg))`` once ``cond``
    is BOOLEAN (type-checked here so the error names the condition as Spark does)."""

    cond: Expression
    message: Expression

    def check_input_types(self) -> str | None:
        if not isinstance(self.cond.data_type, (T.BooleanType, T.NullType)):
            return unexpected_input_type(1, '"BOOLEAN"', self.cond)
        return None

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


# -- randstr / uniform ------------------------------------------------------------------------

_POOL = np.frombuffer(b"0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ",
                      dtype=np.uint8)


def _constant_value(e: Expression) -> Any:
    batch = pa.record_batch({"_": pa.array([0], pa.int8())})
    return to_array(e.eval(batch), 1)[0].as_py()


def _non_foldable(name: str, kind: str, e: Expression) -> AnalysisError:
    q = f'"{to_pretty_sql(e)}"'
    return AnalysisError(
        f"Cannot resolve due to data type mismatch: the input `{name}` should be a foldable "
        f"{kind} expression; however, got {q}.",
        error_class="DATATYPE_MISMATCH.NON_FOLDABLE_INPUT",
        parameters={"inputName": f"`{name}`", "inputType": kind, "inputExpr": q})


def _seed(name: str, a: tuple[Expression, ...], i: int) -> int:
    if len(a) <= i:
        return random_seed()
    e = a[i]
    if not isinstance(e, Literal):
        raise _non_foldable("seed", "integer or floating-point", e)
    if not isinstance(e.data_type, (T.IntegralType, T.NullType)):
        raise AnalysisError(
            f'Cannot resolve "{name}" due to data type mismatch: The seed requires the '
            f'"INTEGRAL" type, however "{to_pretty_sql(e)}" has the type '
            f'"{e.data_type.simple_string().upper()}".',
            error_class="DATATYPE_MISMATCH.UNEXPECTED_INPUT_TYPE",
            parameters={"paramIndex": "third" if i == 2 else "second",
                        "requiredType": '"INTEGRAL"'})
    return int(e.value or 0)


def _shown(name: str, a: tuple[Expression, ...], seed: int, n: int) -> tuple[str, str]:
    parts = [to_pretty_sql(x) for x in a[:n]] + [str(seed)]
    sqls = [x.sql() for x in a[:n]] + [str(seed)]
    return f"{name}({', '.join(parts)})", f"{name}({', '.join(sqls)})"


@node
class RandStr(_Stateful):
    """``randstr(length, seed)``: ``length`` characters of 0-9a-zA-Z, each
    ``abs(nextInt() % 62)`` of Spark's XORShiftRandom(seed + partition index)."""

    length: int
    seed: int
    pretty: str = field(default="", compare=False)
    text: str = field(default="", compare=False)
    state: Any = field(default=None, compare=False)

    @property
    def data_type(self) -> T.DataType:
        return T.STRING

    def _fresh_state(self, partition_index: int) -> Any:
        return XorShiftRandom(self.seed + partition_index)

    def eval(self, batch: pa.RecordBatch) -> pa.Array:
        n, k = batch.num_rows, self.length
        states = self._state().states(n * k)
        ints = (states & np.uint64(0xFFFFFFFF)).astype(np.uint32).view(np.int32)
        chars = _POOL[np.abs(np.fmod(ints.astype(np.int64), 62))]
        offsets = np.arange(n + 1, dtype=np.int32) * k
        return pa.Array.from_buffers(pa.string(), n, [None, pa.py_buffer(offsets.tobytes()),
                                                      pa.py_buffer(chars.tobytes())])

    def simple_string(self) -> str:
        return self.text

    def sql(self) -> str:
        return self.text


def uniform_type(lo: T.DataType, hi: T.DataType) -> T.DataType:
    """Spark's Uniform result type: the wider integral type of two integral bounds, else
    DOUBLE / FLOAT when either is, a decimal bound's type (the wider of two), DOUBLE for a
    NULL bound."""
    types = (lo, hi)
    if any(isinstance(t, T.NullType) for t in types):
        return T.DOUBLE
    if all(isinstance(t, T.IntegralType) for t in types):
        for t in (T.LONG, T.INT, T.SHORT, T.BYTE):
            if t in types:
                return t
    for t in (T.DOUBLE, T.FLOAT):
        if t in types:
            return t
    decs = [t for t in types if isinstance(t, T.DecimalType)]
    if len(decs) == 2:
        scale = max(d.scale for d in decs)
        whole = max(d.precision - d.scale for d in decs)
        return T.DecimalType(min(whole + scale, 38), scale)
    return decs[0]


@node
class Uniform(_Stateful):
    """``uniform(min, max, seed)``: ``min + (max - min) * nextDouble()`` of Spark's
    XORShiftRandom(seed + partition index), cast to :func:`uniform_type` (integral results
    truncate, decimals round HALF_UP); NULL when a bound is NULL."""

    low: Any
    high: Any
    dtype: T.DataType
    seed: int
    pretty: str = field(default="", compare=False)
    text: str = field(default="", compare=False)
    state: Any = field(default=None, compare=False)

    @property
    def data_type(self) -> T.DataType:
        return self.dtype

    @property
    def nullable(self) -> bool:
        return False  # as Spark's Uniform reports, even for a NULL bound

    def _fresh_state(self, partition_index: int) -> Any:
        return XorShiftRandom(self.seed + partition_index)

    def eval(self, batch: pa.RecordBatch) -> pa.Array:
        n = batch.num_rows
        x = self._state().doubles(n)
        at = self.dtype.to_arrow()
        if self.low is None or self.high is None:
            return pa.nulls(n, at)
        lo, hi = float(self.low), float(self.high)
        v = lo + (hi - lo) * x
        t = self.dtype
        if isinstance(t, T.IntegralType):
            return pa.array(np.trunc(v).astype(np.int64)).cast(at, safe=False)
        if isinstance(t, T.DecimalType):
            step = Decimal(1).scaleb(-t.scale)
            return pa.array([Decimal(repr(float(y))).quantize(step, rounding=ROUND_HALF_UP)
                             for y in v], type=at)
        return pa.array(v).cast(at)

    def simple_string(self) -> str:
        return self.text

    def sql(self) -> str:
        return self.text


def _randstr(name, a):
    length = a[0]
    if not length.resolved or not isinstance(length.data_type, (T.IntegralType, T.NullType)) \
            or isinstance(length.data_type, T.LongType):
        raise AnalysisError(
            f'Cannot resolve "{name}" due to data type mismatch: The first parameter requires '
            'the "INT" type.', error_class="DATATYPE_MISMATCH.UNEXPECTED_INPUT_TYPE",
            parameters={"paramIndex": "first", "requiredType": '"INT"'})
    if not isinstance(length, Literal) and not (length.deterministic and not length.references):
        raise _non_foldable("length", "integer", length)
    n = _constant_value(length)
    n = 0 if n is None else int(n)
    if n < 0:
        raise AnalysisError(
            f"Cannot resolve \"{name}\" due to data type mismatch: The `length` must be between "
            f"[0, 2147483647] (current value = {n}).",
            error_class="DATATYPE_MISMATCH.VALUE_OUT_OF_RANGE",
            parameters={"exprName": "`length`", "valueRange": "[0, 2147483647]",
                        "currentValue": str(n)})
    seed = _seed(name, a, 1)
    pretty, text = _shown(name, a, seed, 1)
    shown = (a[0], a[1] if len(a) > 1 else Literal(seed, T.LONG))
    return FunctionCall.of(name, shown, RandStr(n, seed, pretty, text))


def _uniform(name, a):
    bounds = []
    for i, e in enumerate(a[:2]):
        t = e.data_type
        if not isinstance(t, (T.NumericType, T.NullType)):
            raise AnalysisError(
                f'Cannot resolve "{name}" due to data type mismatch: The '
                f'{"first" if i == 0 else "second"} parameter requires the "NUMERIC" type, '
                f'however "{to_pretty_sql(e)}" has the type "{t.simple_string().upper()}".',
                error_class="DATATYPE_MISMATCH.UNEXPECTED_INPUT_TYPE",
                parameters={"paramIndex": "first" if i == 0 else "second",
                            "requiredType": '"NUMERIC"'})
        if not (e.deterministic and not e.references):
            raise _non_foldable("min" if i == 0 else "max", "integer or floating-point", e)
        bounds.append(_constant_value(e))
    seed = _seed(name, a, 2)
    pretty, text = _shown(name, a, seed, 2)
    shown = (a[0], a[1], a[2] if len(a) > 2 else Literal(seed, T.LONG))
    return FunctionCall.of(name, shown, Uniform(
        bounds[0], bounds[1], uniform_type(a[0].data_type, a[1].data_type), seed, pretty, text))


#: SQL name -> (min args, max args, builder(name, args))
MISC_FUNCTIONS: dict[str, tuple[int, int, Callable]] = {
    "raise_error": (1, 1, _raise_error), "assert_true": (1, 2, _assert_true),
    "current_user": (0, 0, _constant(spark_user)), "session_user": (0, 0, _constant(spark_user)),
    "user": (0, 0, _constant(spark_user)), "version": (0, 0, _constant(ember_version_string)),
    "randstr": (1, 2, _randstr), "uniform": (2, 3, _uniform),
}


def build_misc_function(name: str, args: tuple[Expression, ...]) -> Expression:
    return MISC_FUNCTIONS[name][2](name, args)

