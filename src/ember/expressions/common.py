"""Helpers shared by the scalar expression modules (not part of the public contract).

- :class:`TypeCheckFailure`: the ``str`` that ``check_input_types`` returns, carrying Spark's
  ``DATATYPE_MISMATCH`` sub-class and message parameters so the analyzer can raise exactly
  Spark's error (``DATATYPE_MISMATCH.BINARY_OP_DIFF_TYPES`` ...).
- Row-wise short-circuit emulation: Spark evaluates ``AND``/``OR``/``CASE``/``IF``/``COALESCE``
  branches row by row and never evaluates a branch for rows that do not take it, so
  ``CASE WHEN b = 0 THEN NULL ELSE a / b END`` never raises ``DIVIDE_BY_ZERO``.  Ember evaluates
  whole batches, so a branch that *may fail* (see :func:`may_fail`) is evaluated only on the
  selected rows (:func:`eval_where`) and scattered back.
- Small Arrow utilities (:func:`full_null`, :func:`to_mask`, :func:`sql_type`).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from ember import types as T
from ember.expressions.base import Expression


class TypeCheckFailure(str):
    """A ``check_input_types`` failure: the message, plus Spark's error sub-class and
    parameters (``sub_class='BINARY_OP_DIFF_TYPES'``, ``parameters={'left': '"INT"', ...}``).

    >>> f = TypeCheckFailure("types differ", "BINARY_OP_DIFF_TYPES", {"left": '"INT"'})
    >>> f.error_class
    'DATATYPE_MISMATCH.BINARY_OP_DIFF_TYPES'
    """

    sub_class: str
    parameters: dict[str, str]

    def __new__(cls, message: str, sub_class: str = "", parameters: dict[str, str] | None = None):
        s = super().__new__(cls, message)
        s.sub_class = sub_class
        s.parameters = dict(parameters or {})
        return s

    @property
    def error_class(self) -> str:
        return "DATATYPE_MISMATCH" + (f".{self.sub_class}" if self.sub_class else "")


def sql_type(t: T.DataType) -> str:
    """Spark's quoted type in messages: ``"INT"``, ``"DECIMAL(10,2)"``."""
    return '"' + t.sql() + '"'


def quoted_sql(e: Expression) -> str:
    """Spark's quoted expression in messages: ``"(a + 1)"``."""
    return '"' + e.sql() + '"'


def diff_types(left: Expression, right: Expression) -> TypeCheckFailure:
    lt, rt = sql_type(left.data_type), sql_type(right.data_type)
    return TypeCheckFailure(
        f"the left and right operands of the binary operator have incompatible types ({lt} and {rt}).",
        "BINARY_OP_DIFF_TYPES",
        {"left": lt, "right": rt},
    )


def wrong_type(symbol: str, expected: str, actual: T.DataType) -> TypeCheckFailure:
    at = sql_type(actual)
    return TypeCheckFailure(
        f'the binary operator requires the input type {expected}, not {at}.',
        "BINARY_OP_WRONG_TYPE",
        {"inputType": expected, "actualDataType": at},
    )


def unexpected_input_type(index: int, required: str, e: Expression) -> TypeCheckFailure:
    """``UNEXPECTED_INPUT_TYPE``: parameter ``index`` (1-based) has the wrong type."""
    return TypeCheckFailure(
        f'The {_ordinal(index)} parameter requires the {required} type, however '
        f'{quoted_sql(e)} has the type {sql_type(e.data_type)}.',
        "UNEXPECTED_INPUT_TYPE",
        {"paramIndex": _ordinal(index), "requiredType": required, "inputSql": quoted_sql(e),
         "inputType": sql_type(e.data_type)},
    )


def _ordinal(i: int) -> str:
    return {1: "first", 2: "second", 3: "third", 4: "fourth", 5: "fifth"}.get(i, f"{i}th")


# ---------------------------------------------------------------------------------------------
# Arrow helpers


def full_null(n: int, dtype: T.DataType) -> pa.Array:
    return pa.nulls(n, type=dtype.to_arrow())


def to_array(value: Any, n: int) -> pa.Array:
    """Arrays pass through; chunked arrays are combined; scalars are repeated ``n`` times."""
    if isinstance(value, pa.ChunkedArray):
        return value.combine_chunks()
    if isinstance(value, pa.Scalar):
        return pa.repeat(value, n) if value.is_valid else pa.nulls(n, type=value.type)
    return value


def to_mask(arr: pa.Array) -> np.ndarray:
    """A boolean array as a numpy mask, NULL counting as false."""
    if arr.null_count:
        arr = pc.fill_null(arr, False)
    return arr.to_numpy(zero_copy_only=False).astype(bool, copy=False)


def is_float_type(t: T.DataType) -> bool:
    return isinstance(t, (T.FloatType, T.DoubleType))


# ---------------------------------------------------------------------------------------------
# Row-wise short-circuit emulation


def may_fail(e: Expression) -> bool:
    """True when evaluating ``e`` may raise a runtime (ANSI) error for some rows, so it must only
    see the rows Spark would evaluate it on.  Expression classes opt in with
    ``may_fail_at_runtime = True``; unknown classes are assumed safe."""
    return e.find(lambda n: getattr(n, "may_fail_at_runtime", False) is True) is not None


def eval_where(e: Expression, batch: pa.RecordBatch, mask: np.ndarray | None) -> pa.Array:
    """``e`` evaluated on the rows where ``mask`` is true; other rows are NULL.

    ``mask=None`` means all rows.  When ``e`` cannot fail it is simply evaluated on the whole
    batch (its values on unselected rows are then ignored by the caller)."""
    n = batch.num_rows
    if mask is None or not may_fail(e):
        return to_array(e.eval(batch), n)
    count = int(mask.sum())
    if count == n:
        return to_array(e.eval(batch), n)
    if count == 0:
        return full_null(n, e.data_type)
    sub = to_array(e.eval(batch.filter(pa.array(mask))), count)
    # Scatter back: position i takes sub[rank(i)] when selected, NULL otherwise.
    positions = np.cumsum(mask) - 1
    idx = pa.array(positions, mask=~mask)
    return pc.take(sub, idx)


def eval_null_intolerant(children, batch: pa.RecordBatch,
                         order: tuple[int, ...] | None = None) -> list[pa.Array]:
    """The children of a NULL-intolerant expression evaluated as Spark does row by row: in
    ``order`` (default left to right), each child only on the rows where every child evaluated
    before it is non-NULL (Spark's ``BinaryExpression.nullSafeEval`` never evaluates the right
    child of a row whose left value is NULL, so ``NULL + (i + 1)`` cannot overflow; division
    evaluates the divisor first).  Rows not evaluated are NULL."""
    out: list[pa.Array | None] = [None] * len(children)
    mask: np.ndarray | None = None
    for i in (order if order is not None else range(len(children))):
        a = eval_where(children[i], batch, mask)
        out[i] = a
        if a.null_count:
            valid = to_mask(pc.is_valid(a))
            mask = valid if mask is None else mask & valid
    return out  # type: ignore[return-value]
