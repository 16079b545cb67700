"""Arithmetic with Spark 4 ANSI semantics.

- Operands have the same type after coercion (:mod:`ember.coercion`).  Integral ``+ - *`` and
  unary minus/abs raise ``ARITHMETIC_OVERFLOW`` instead of wrapping; float arithmetic follows
  IEEE.
- ``/`` takes double or decimal operands (integers are cast to double by coercion); ``div``
  takes bigint or decimal and returns bigint, truncating toward zero; ``%`` keeps the sign of the
  dividend (Java semantics), ``pmod`` is always non-negative for a positive divisor.
- A zero divisor (with a non-NULL dividend) raises ``DIVIDE_BY_ZERO`` for ``/`` and ``div``,
  ``REMAINDER_BY_ZERO`` for ``%``, ``mod`` and ``pmod`` -- for doubles too.
- Decimal results use DecimalPrecision's types (see :mod:`ember.coercion`), exact arithmetic and
  HALF_UP rounding; a result that does not fit raises ``NUMERIC_VALUE_OUT_OF_RANGE``.  The
  decimal operators carry ``allow_precision_loss`` (Spark's BinaryArithmetic reads
  ``spark.sql.decimalOperations.allowPrecisionLoss`` when it computes its type); TypeCoercion
  sets it from the session's configuration, and until then an operator over two decimals is
  unresolved, so that no parent sees a type the configuration would change.  Operators built
  after analysis (None) allow precision loss, Spark's default.

``ansi=False`` (``spark.sql.ansi.enabled=false``, set by the analyzer's ResolveEvalMode as Spark
builds these with ``EvalMode.LEGACY``) is Spark's legacy arithmetic: integral ``+ - *``, unary
minus, ``abs`` and ``div`` wrap (Java two's complement), a zero divisor gives NULL (``/ div % mod
pmod``), a decimal result that does not fit gives NULL.
"""

from __future__ import annotations

import functools
from typing import ClassVar

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from ember import types as T
from ember.errors import ArithmeticError_
from ember.expressions import decimals as D
from ember.expressions.base import Expression, out_of_canonical_order
from ember.expressions.common import (
    TypeCheckFailure, diff_types, sql_type, to_array, unexpected_input_type, eval_null_intolerant,
)
from ember.trees import node

__all__ = [
    "BinaryArithmetic", "Add", "Subtract", "Multiply", "Divide", "Remainder", "IntegralDivide",
    "Pmod", "UnaryMinus", "UnaryPositive", "Abs", "overflow_error", "divide_by_zero_error",
]


def overflow_error(try_fn: str | None = None, message: str = "overflow") -> ArithmeticError_:
    alt = f" Use '{try_fn}' to tolerate overflow and return NULL instead." if try_fn else ""
    return ArithmeticError_(
        f"{message}.{alt} If necessary set \"spark.sql.ansi.enabled\" to \"false\" to bypass this "
        "error.",
        error_class="ARITHMETIC_OVERFLOW",
        parameters={"message": message, "alternative": alt, "config": '"spark.sql.ansi.enabled"'},
    )


def divide_by_zero_error(remainder: bool = False) -> ArithmeticError_:
    if remainder:
        return ArithmeticError_(
            "Remainder by zero. Use `try_mod` to tolerate divisor being 0 and return NULL instead. "
            'If necessary set "spark.sql.ansi.enabled" to "false" to bypass this error.',
            error_class="REMAINDER_BY_ZERO", parameters={"config": '"spark.sql.ansi.enabled"'})
    return ArithmeticError_(
        "Division by zero. Use `try_divide` to tolerate divisor being 0 and return NULL instead. "
        'If necessary set "spark.sql.ansi.enabled" to "false" to bypass this error.',
        error_class="DIVIDE_BY_ZERO", parameters={"config": '"spark.sql.ansi.enabled"'})


_SYMBOLS = {"add_checked": "+", "subtract_checked": "-", "multiply_checked": "*"}
#: the wrapping (Java two's complement) kernel of each checked one, for ``ansi=False``
_WRAPPING = {"add_checked": pc.add, "subtract_checked": pc.subtract,
             "multiply_checked": pc.multiply, "negate_checked": pc.negate, "abs_checked": pc.abs}


def _checked(fn, try_fn: str | None, *args: pa.Array, ansi: bool = True) -> pa.Array:
    if not ansi:
        return _WRAPPING[fn.__name__](*args)
    try:
        return fn(*args)
    except pa.ArrowInvalid as e:
        if "overflow" in str(e).lower():
            symbol = _SYMBOLS.get(getattr(fn, "__name__", ""))
            if symbol is not None and args[0].type in (pa.int8(), pa.int16()):
                raise _small_int_overflow(fn, symbol, try_fn, *args) from e
            raise overflow_error(try_fn) from e
        raise


def _small_int_overflow(fn, symbol: str, try_fn: str | None, left: pa.Array,
                        right: pa.Array) -> ArithmeticError_:
    """Spark's ``BINARY_ARITHMETIC_OVERFLOW`` for tinyint/smallint ``+ - *`` (MathUtils)."""
    wide = fn(left.cast(pa.int64()), right.cast(pa.int64()))
    info = np.iinfo(left.type.to_pandas_dtype())
    bad = pc.or_(pc.greater(wide, info.max), pc.less(wide, info.min))
    i = pc.index(pc.fill_null(bad, False), True).as_py()
    suffix = "Y" if left.type == pa.int8() else "S"
    v1, v2 = f"{left[i].as_py()}{suffix}", f"{right[i].as_py()}{suffix}"
    alt = f"Use '{try_fn}' to tolerate overflow and return NULL instead." if try_fn else ""
    return ArithmeticError_(
        f"{v1} {symbol} {v2} caused overflow. {alt} If necessary set \"spark.sql.ansi.enabled\" "
        "to \"false\" to bypass this error.",
        error_class="BINARY_ARITHMETIC_OVERFLOW",
        parameters={"value1": v1, "symbol": symbol, "value2": v2,
                    "functionName": f"`{try_fn}`" if try_fn else "",
                    "config": '"spark.sql.ansi.enabled"'})


def _np_filled(arr: pa.Array, fill) -> np.ndarray:
    if arr.null_count:
        arr = pc.fill_null(arr, fill)
    return arr.to_numpy(zero_copy_only=False)


def _validity(*arrs: pa.Array) -> np.ndarray:
    n = len(arrs[0])
    valid = np.ones(n, dtype=bool)
    for a in arrs:
        if a.null_count:
            valid &= a.is_valid().to_numpy(zero_copy_only=False)
    return valid


def _from_numpy(values: np.ndarray, valid: np.ndarray, at: pa.DataType) -> pa.Array:
    mask = None if valid.all() else ~valid
    return pa.array(values, type=at, mask=mask)


# ---------------------------------------------------------------------------------------------
# Binary arithmetic


@functools.lru_cache(maxsize=1024)
def _result_type(e: "BinaryArithmetic") -> T.DataType:
    """``e``'s result type, remembered for recently asked nodes: the type of ``a + a + ... + a``
    asks its left operand's, recursively, and analysis asks every level's type many times, so
    without this a 500-term sum costs O(n^2) type computations per rule (nodes are immutable
    and equal nodes have equal types, so a remembered answer is always right)."""
    return e._result_type()


class BinaryArithmetic(Expression):
    """Base of ``+ - * / % div pmod``.  Subclasses set ``symbol`` and implement the kernels."""

    __slots__ = ()
    symbol: ClassVar[str] = "?"
    try_fn: ClassVar[str | None] = None
    may_fail_at_runtime: ClassVar[bool] = True

    left: Expression
    right: Expression
    #: Spark's ``EvalMode.ANSI`` (raise) vs ``LEGACY`` (wrap / NULL); see the module docstring
    ansi: bool

    @property
    def nullable(self) -> bool:
        return self.left.nullable or self.right.nullable or not self.ansi

    def _input_ok(self, t: T.DataType) -> bool:
        return t.is_numeric

    def _expected(self) -> str:
        return '"NUMERIC"'

    @property
    def resolved(self) -> bool:
        if not super().resolved:
            return False
        # over two decimals, the type waits for allowPrecisionLoss (TypeCoercion sets it)
        return getattr(self, "allow_precision_loss", False) is not None or not (
            isinstance(self.left.data_type, T.DecimalType)
            and isinstance(self.right.data_type, T.DecimalType))

    @property
    def ansi_mode(self) -> bool:
        return self.ansi

    def to_legacy_mode(self) -> Expression:
        return self.copy(ansi=False)

    def check_input_types(self) -> str | None:
        lt, rt = self.left.data_type, self.right.data_type
        if lt != rt and not (isinstance(lt, T.DecimalType) and isinstance(rt, T.DecimalType)):
            if not isinstance(lt, T.NullType) and not isinstance(rt, T.NullType):
                return diff_types(self.left, self.right)
        t = rt if isinstance(lt, T.NullType) else lt
        if not self._input_ok(t) and not isinstance(t, T.NullType):
            return TypeCheckFailure(
                f"the binary operator requires the input type {self._expected()}, not "
                f"{sql_type(t)}.",
                "BINARY_OP_WRONG_TYPE",
                {"inputType": self._expected(), "actualDataType": sql_type(t)},
            )
        return None

    @property
    def data_type(self) -> T.DataType:
        return _result_type(self)

    def _result_type(self) -> T.DataType:
        lt, rt = self.left.data_type, self.right.data_type
        if isinstance(lt, T.DecimalType) and isinstance(rt, T.DecimalType):
            return self._decimal_type(lt, rt)
        return rt if isinstance(lt, T.NullType) else lt

    def _decimal_type(self, l: T.DecimalType, r: T.DecimalType) -> T.DataType:
        raise NotImplementedError

    #: Spark's DivModLike evaluates the divisor first (and the dividend only where it is non-NULL)
    right_first: ClassVar[bool] = False

    def _operands(self, batch: pa.RecordBatch) -> list[pa.Array]:
        return eval_null_intolerant((self.left, self.right), batch,
                                    (1, 0) if self.right_first else None)

    def eval(self, batch: pa.RecordBatch) -> pa.Array:
        n = batch.num_rows
        left, right = self._operands(batch)
        out_type = self.data_type
        if pa.types.is_null(left.type) or pa.types.is_null(right.type):
            return pa.nulls(n, out_type.to_arrow())
        lt = self.left.data_type
        if isinstance(lt, T.DecimalType):
            return self._eval_decimal(left, right, out_type)  # type: ignore[arg-type]
        return self._eval(left, right, lt)

    def _eval(self, left: pa.Array, right: pa.Array, t: T.DataType) -> pa.Array:
        raise NotImplementedError

    def _eval_decimal(self, left: pa.Array, right: pa.Array, out: T.DecimalType) -> pa.Array:
        raise NotImplementedError

    def simple_string(self) -> str:
        return f"({self.left.simple_string()} {self.symbol} {self.right.simple_string()})"

    def sql(self) -> str:
        return f"({self.left.sql()} {self.symbol} {self.right.sql()})"


def _dec_operands(left: pa.Array, right: pa.Array):
    lv, lvalid = D.unscaled(left)
    rv, rvalid = D.unscaled(right)
    return lv, rv, lvalid & rvalid, left.type.scale, right.type.scale


@node
class Add(BinaryArithmetic):
    """``left + right``."""

    left: Expression
    right: Expression
    allow_precision_loss: bool | None = None
    ansi: bool = True
    symbol: ClassVar[str] = "+"
    try_fn: ClassVar[str | None] = "try_add"

    def canonicalize_node(self) -> Expression:
        # Only the two operands are ordered: re-associating a chain would change result types.
        l, r = self.left, self.right
        return self.copy(left=r, right=l) if out_of_canonical_order(l, r) else self

    def _decimal_type(self, l, r):
        # imported here: at module level it would close the import cycle
        # expressions.arithmetic -> coercion -> expressions.arithmetic
        from ember.coercion import decimal_add_type

        return decimal_add_type(l, r, self.allow_precision_loss is not False)

    def _eval(self, left, right, t):
        if t.is_integral:
            return _checked(pc.add_checked, self.try_fn, left, right, ansi=self.ansi)
        return pc.add(left, right)

    def _eval_decimal(self, left, right, out):
        fast = D.int64_add_sub("+", left, right, out)
        if fast is None:
            fast = D.arrow_binary("+", left, right, out)
        if fast is not None:
            return fast
        lv, rv, valid, ls, rs = _dec_operands(left, right)
        s = max(ls, rs)
        res = D.rescale(lv, ls, s) + D.rescale(rv, rs, s)
        return D.from_unscaled(D.rescale(res, s, out.scale), valid, out,
                               overflow_null=not self.ansi)


@node
class Subtract(BinaryArithmetic):
    """``left - right``."""

    left: Expression
    right: Expression
    allow_precision_loss: bool | None = None
    ansi: bool = True
    symbol: ClassVar[str] = "-"
    try_fn: ClassVar[str | None] = "try_subtract"

    def _decimal_type(self, l, r):
        # imported here: at module level it would close the import cycle
        # expressions.arithmetic -> coercion -> expressions.arithmetic
        from ember.coercion import decimal_add_type

        return decimal_add_type(l, r, self.allow_precision_loss is not False)

    def _eval(self, left, right, t):
        if t.is_integral:
            return _checked(pc.subtract_checked, self.try_fn, left, right, ansi=self.ansi)
        return pc.subtract(left, right)

    def _eval_decimal(self, left, right, out):
        fast = D.int64_add_sub("-", left, right, out)
        if fast is None:
            fast = D.arrow_binary("-", left, right, out)
        if fast is not None:
            return fast
        lv, rv, valid, ls, rs = _dec_operands(left, right)
        s = max(ls, rs)
        res = D.rescale(lv, ls, s) - D.rescale(rv, rs, s)
        return D.from_unscaled(D.rescale(res, s, out.scale), valid, out,
                               overflow_null=not self.ansi)


@node
class Multiply(BinaryArithmetic):
    """``left * right``."""

    left: Expression
    right: Expression
    allow_precision_loss: bool | None = None
    ansi: bool = True
    symbol: ClassVar[str] = "*"
    try_fn: ClassVar[str | None] = "try_multiply"

    def canonicalize_node(self) -> Expression:
        # Only the two operands are ordered: re-associating a chain would change result types.
        l, r = self.left, self.right
        return self.copy(left=r, right=l) if out_of_canonical_order(l, r) else self

    def _decimal_type(self, l, r):
        # imported here: at module level it would close the import cycle
        # expressions.arithmetic -> coercion -> expressions.arithmetic
        from ember.coercion import decimal_multiply_type

        return decimal_multiply_type(l, r, self.allow_precision_loss is not False)

    def _eval(self, left, right, t):
        if t.is_integral:
            return _checked(pc.multiply_checked, self.try_fn, left, right, ansi=self.ansi)
        return pc.multiply(left, right)

    def _eval_decimal(self, left, right, out):
        fast = D.int64_multiply(left, right, out)
        if fast is None:
            fast = D.arrow_binary("*", left, right, out)
        if fast is not None:
            return fast
        lv, rv, valid, ls, rs = _dec_operands(left, right)
        res = lv * rv
        return D.from_unscaled(D.rescale(res, ls + rs, out.scale), valid, out,
                               overflow_null=not self.ansi)


def _check_zero(left: pa.Array, right: pa.Array, remainder: bool, ansi: bool = True) -> pa.Array:
    """The divisor to use: ANSI raises when a non-NULL dividend meets a zero divisor; legacy
    (``ansi=False``) makes zero divisors NULL, so those rows are NULL (Spark's DivModLike)."""
    if pa.types.is_decimal(right.type):
        from decimal import Decimal

        zero = pc.equal(right, pa.scalar(Decimal(0), right.type))
    else:
        zero = pc.equal(right, pa.scalar(0, right.type))
    if not ansi:
        if pc.any(zero).as_py():
            return pc.if_else(pc.fill_null(zero, False), pa.scalar(None, right.type), right)
        return right
    zero = pc.and_kleene(zero, pc.is_valid(left))
    if pc.any(zero).as_py():
        raise divide_by_zero_error(remainder)
    return right


@node
class Divide(BinaryArithmetic):
    """``left / right`` (double or decimal)."""

    right_first: ClassVar[bool] = True

    left: Expression
    right: Expression
    allow_precision_loss: bool | None = None
    ansi: bool = True
    symbol: ClassVar[str] = "/"
    try_fn: ClassVar[str | None] = "try_divide"

    def _input_ok(self, t):
        return isinstance(t, (T.DoubleType, T.DecimalType))

    def _expected(self) -> str:
        return '("DOUBLE" or "DECIMAL")'

    def _decimal_type(self, l, r):
        # imported here: at module level it would close the import cycle
        # expressions.arithmetic -> coercion -> expressions.arithmetic
        from ember.coercion import decimal_divide_type

        return decimal_divide_type(l, r, self.allow_precision_loss is not False)

    def _eval(self, left, right, t):
        right = _check_zero(left, right, False, self.ansi)
        return pc.divide(left, right)

    def _eval_decimal(self, left, right, out):
        right = _check_zero(left, right, False, self.ansi)
        fast = D.int64_divide(left, right, out)
        if fast is not None:
            return fast
        lv, rv, valid, ls, rs = _dec_operands(left, right)
        # q = l / r at scale out.scale: (lv * 10^(out.scale + rs - ls)) / rv, HALF_UP.
        shift = out.scale + rs - ls
        num = lv * (10 ** shift) if shift >= 0 else lv
        den = rv if shift >= 0 else rv * (10 ** (-shift))
        den = np.where(valid & (den != 0), den, 1)
        return D.from_unscaled(D.div_half_up(num, den), valid, out, overflow_null=not self.ansi)


@node
class IntegralDivide(BinaryArithmetic):
    """``left div right``: bigint quotient truncated toward zero."""

    right_first: ClassVar[bool] = True

    left: Expression
    right: Expression
    ansi: bool = True
    symbol: ClassVar[str] = "div"
    try_fn: ClassVar[str | None] = None

    def _input_ok(self, t):
        return isinstance(t, (T.LongType, T.DecimalType))

    def _expected(self) -> str:
        return '("BIGINT" or "DECIMAL")'

    @property
    def data_type(self) -> T.DataType:
        return T.LONG

    def eval(self, batch: pa.RecordBatch) -> pa.Array:
        n = batch.num_rows
        left, right = self._operands(batch)
        if pa.types.is_null(left.type) or pa.types.is_null(right.type):
            return pa.nulls(n, pa.int64())
        right = _check_zero(left, right, False, self.ansi)
        if pa.types.is_decimal(left.type):
            lv, rv, valid, ls, rs = _dec_operands(left, right)
            s = max(ls, rs)
            a, b = D.rescale(lv, ls, s), D.rescale(rv, rs, s)
            b = np.where(valid & (b != 0), b, 1)
            q = np.abs(a) // np.abs(b)
            q = np.where((a < 0) ^ (b < 0), -q, q)
            over = valid & ((q > (1 << 63) - 1) | (q < -(1 << 63)))
            if over.any() and not self.ansi:  # legacy: the quotient's low 64 bits (toLong)
                q = ((q + (1 << 63)) % (1 << 64)) - (1 << 63)
            elif over.any():
                raise overflow_error()
            return _from_numpy(np.where(valid, q, 0).astype(np.int64), valid, pa.int64())
        left, right = left.cast(pa.int64()), right.cast(pa.int64())
        valid = _validity(left, right)
        a, b = _np_filled(left, 0), _np_filled(right, 1)
        b = np.where(valid & (b != 0), b, 1)
        if self.ansi and ((a == np.iinfo(np.int64).min) & (b == -1) & valid).any():
            raise overflow_error()
        q = np.abs(a) // np.abs(b)  # truncation toward zero
        q = np.where((a < 0) ^ (b < 0), -q, q)
        return _from_numpy(q.astype(np.int64), valid, pa.int64())


def _java_mod(a: np.ndarray, b: np.ndarray, integral: bool) -> np.ndarray:
    """``a % b`` with the sign of the dividend (Java/Spark)."""
    if integral:
        b = np.where(b == -1, 1, b)  # MIN % -1 == 0; avoid the hardware trap
        return np.fmod(a, b)
    with np.errstate(invalid="ignore"):
        return np.fmod(a, b)


@node
class Remainder(BinaryArithmetic):
    """``left % right`` (and ``mod(left, right)``)."""

    right_first: ClassVar[bool] = True

    left: Expression
    right: Expression
    allow_precision_loss: bool | None = None
    ansi: bool = True
    symbol: ClassVar[str] = "%"
    try_fn: ClassVar[str | None] = "try_mod"

    def _decimal_type(self, l, r):
        # imported here: at module level it would close the import cycle
        # expressions.arithmetic -> coercion -> expressions.arithmetic
        from ember.coercion import decimal_remainder_type

        return decimal_remainder_type(l, r, self.allow_precision_loss is not False)

    def _eval(self, left, right, t):
        right = _check_zero(left, right, True, self.ansi)
        valid = _validity(left, right)
        a, b = _np_filled(left, 0), _np_filled(right, 1)
        b = np.where(valid & (b != 0), b, 1).astype(a.dtype)
        return _from_numpy(_java_mod(a, b, t.is_integral), valid, t.to_arrow())

    def _eval_decimal(self, left, right, out):
        right = _check_zero(left, right, True, self.ansi)
        lv, rv, valid, ls, rs = _dec_operands(left, right)
        s = max(ls, rs)
        a, b = D.rescale(lv, ls, s), D.rescale(rv, rs, s)
        b = np.where(valid & (b != 0), b, 1)
        r = np.abs(a) % np.abs(b)
        r = np.where(a < 0, -r, r)
        return D.from_unscaled(D.rescale(r, s, out.scale), valid, out, overflow_null=not self.ansi)


@node
class Pmod(BinaryArithmetic):
    """``pmod(left, right)``: positive modulus."""

    right_first: ClassVar[bool] = True

    left: Expression
    right: Expression
    allow_precision_loss: bool | None = None
    ansi: bool = True
    symbol: ClassVar[str] = "pmod"
    try_fn: ClassVar[str | None] = None

    def _decimal_type(self, l, r):
        # imported here: at module level it would close the import cycle
        # expressions.arithmetic -> coercion -> expressions.arithmetic
        from ember.coercion import decimal_remainder_type

        return decimal_remainder_type(l, r, self.allow_precision_loss is not False)

    def _eval(self, left, right, t):
        right = _check_zero(left, right, True, self.ansi)
        valid = _validity(left, right)
        a, b = _np_filled(left, 0), _np_filled(right, 1)
        b = np.where(valid & (b != 0), b, 1).astype(a.dtype)
        r = _java_mod(a, b, t.is_integral)
        neg = r < 0
        if neg.any():
            # Java promotes byte/short to int for ``r + n`` (no wrap); int/long wrap.
            wide = np.int32 if t.is_integral and a.dtype.itemsize < 4 else a.dtype
            rw, bw = r.astype(wide), b.astype(wide)
            with np.errstate(over="ignore"):
                r = np.where(neg, _java_mod(rw + bw, bw, t.is_integral), rw).astype(a.dtype)
        return _from_numpy(r, valid, t.to_arrow())

    def _eval_decimal(self, left, right, out):
        right = _check_zero(left, right, True, self.ansi)
        lv, rv, valid, ls, rs = _dec_operands(left, right)
        s = max(ls, rs)
        a, b = D.rescale(lv, ls, s), D.rescale(rv, rs, s)
        b = np.where(valid & (b != 0), b, 1)
        r = np.abs(a) % np.abs(b)
        r = np.where(a < 0, -r, r)
        r2 = (r + b)
        r2m = np.abs(r2) % np.abs(b)
        r2m = np.where(r2 < 0, -r2m, r2m)
        r = np.where(r < 0, r2m, r)
        return D.from_unscaled(D.rescale(r, s, out.scale), valid, out, overflow_null=not self.ansi)

    def simple_string(self) -> str:
        return f"pmod({self.left.simple_string()}, {self.right.simple_string()})"

    def sql(self) -> str:
        return f"pmod({self.left.sql()}, {self.right.sql()})"


# ---------------------------------------------------------------------------------------------
# Unary


class _UnaryNumeric(Expression):
    __slots__ = ()
    may_fail_at_runtime: ClassVar[bool] = True
    child: Expression

    @property
    def ansi_mode(self) -> bool:
        return getattr(self, "ansi", False)

    def to_legacy_mode(self) -> Expression:
        return self.copy(ansi=False) if self.ansi_mode else self

    @property
    def data_type(self) -> T.DataType:
        return self.child.data_type

    @property
    def nullable(self) -> bool:
        return self.child.nullable

    def check_input_types(self) -> str | None:
        t = self.child.data_type
        if not t.is_numeric and not isinstance(t, T.NullType):
            return unexpected_input_type(1, '"NUMERIC"', self.child)
        return None


@node
class UnaryMinus(_UnaryNumeric):
    """``-child`` (overflow-checked for integers). ``function_name`` is ``"negative"`` when built
    by the function ``negative(x)`` (and PySpark's ``-col``), which Spark names
    ``negative(x)`` instead of ``(- x)``."""

    child: Expression
    function_name: str | None = None
    ansi: bool = True

    def eval(self, batch: pa.RecordBatch) -> pa.Array:
        arr = to_array(self.child.eval(batch), batch.num_rows)
        t = self.child.data_type
        if pa.types.is_null(arr.type):
            return arr
        if isinstance(t, T.DecimalType):
            v, valid = D.unscaled(arr)
            return D.from_unscaled(-v, valid, t)
        if t.is_integral:
            return _checked(pc.negate_checked, None, arr, ansi=self.ansi)
        return pc.negate(arr)

    def simple_string(self) -> str:
        return f"-{self.child.simple_string()}"

    def sql(self) -> str:
        if self.function_name:
            return f"{self.function_name}({self.child.sql()})"
        return f"(- {self.child.sql()})"


@node
class UnaryPositive(_UnaryNumeric):
    """``+child`` (identity)."""

    child: Expression
    may_fail_at_runtime: ClassVar[bool] = False

    def eval(self, batch: pa.RecordBatch) -> pa.Array:
        return to_array(self.child.eval(batch), batch.num_rows)

    def check_input_types(self) -> str | None:
        # Spark's UnaryPositive takes NumericAndInterval: the ANSI and calendar intervals too
        if isinstance(self.child.data_type, (T.DayTimeIntervalType, T.YearMonthIntervalType,
                                             T.CalendarIntervalType)):
            return None
        return _UnaryNumeric.check_input_types(self)

    def simple_string(self) -> str:
        return f"positive({self.child.simple_string()})"

    def sql(self) -> str:
        return f"(+ {self.child.sql()})"


@node
class Abs(_UnaryNumeric):
    """``abs(child)`` (overflow-checked for integers)."""

    child: Expression
    ansi: bool = True

    def eval(self, batch: pa.RecordBatch) -> pa.Array:
        arr = to_array(self.child.eval(batch), batch.num_rows)
        t = self.child.data_type
        if pa.types.is_null(arr.type):
            return arr
        if isinstance(t, T.DecimalType):
            v, valid = D.unscaled(arr)
            return D.from_unscaled(np.abs(v), valid, t)
        if t.is_integral:
            return _checked(pc.abs_checked, None, arr, ansi=self.ansi)
        return pc.abs(arr)

    def simple_string(self) -> str:
        return f"abs({self.child.simple_string()})"

    def sql(self) -> str:
        return f"abs({self.child.sql()})"
