"""Python user-defined table functions as generators (Spark's ``PythonUDTF``).

A :class:`PythonUDTF` is a call of a UDTF class (PySpark's ``@udtf``): a new instance per
partition, its ``eval(*args)`` called once per input row with the argument values as Python
values, every row it yields (a tuple, list or Row of the return type's width) generated for that
input row; then ``terminate()`` (if the class has one), whose rows follow the partition's other
rows.  UDTFs are row-at-a-time Python by nature: the calls are a loop per input row, while the
arguments' conversion to Python values and the results' to Arrow are one conversion per batch
and column.
"""

from __future__ import annotations

from dataclasses import field
from typing import Any

import numpy as np
import pyarrow as pa

from ember import types as T
from ember.errors import PythonException
from ember.expressions.base import Expression
from ember.expressions.generators import Generator
from ember.expressions.python_udf import python_exception, to_arrow_result
from ember.trees import node

__all__ = ["PythonUDTF"]


@node
class PythonUDTF(Generator):
    """``name(args)`` in FROM: the rows of the UDTF class ``handler_class`` (Spark's
    ``PythonUDTF``); ``handler`` is the instance of the running partition (see
    :meth:`for_partition`), None in plans."""

    name: str
    handler_class: Any = field(compare=False)
    return_type: T.StructType = field(compare=False)
    args: tuple[Expression, ...] = ()
    #: the UDTF's identity (two UDTFs of one name are different calls)
    udtf_id: int = 0
    deterministic_: bool = True
    handler: Any = field(default=None, compare=False)

    @property
    def element_schema(self) -> tuple[T.StructField, ...]:
        return self.return_type.fields

    @property
    def deterministic(self) -> bool:
        return self.deterministic_ and all(a.deterministic for a in self.args)

    def simple_string(self) -> str:
        return f"{self.name}({', '.join(a.simple_string() for a in self.args)})"

    def sql(self) -> str:
        return f"{self.name}({', '.join(a.sql() for a in self.args)})"

    def for_partition(self) -> "PythonUDTF":
        """This call with a new instance of the class, for one partition's rows."""
        try:
            return self.copy(handler=self.handler_class())
        except Exception as e:  # noqa: BLE001 - the user's __init__
            raise python_exception(e, self.handler_class.__init__) from None

    def generate(self, batch: pa.RecordBatch) -> tuple[np.ndarray, list[pa.Array]]:
        handler = self.handler if self.handler is not None else self.handler_class()
        n = batch.num_rows
        values = [_values(a.eval(batch), n) for a in self.args]
        rows: list[int] = []
        out: list[Any] = []
        for i in range(n):
            produced = self._call(handler.eval, [v[i] for v in values])
            rows.extend([i] * len(produced))
            out.extend(produced)
        return np.asarray(rows, dtype=np.int64), self._columns(out)

    def terminate(self) -> list[pa.Array] | None:
        """The rows of the partition's ``terminate()`` call (None without one)."""
        end = getattr(self.handler, "terminate", None)
        if end is None:
            return None
        return self._columns(self._call(end, []))

    def _call(self, fn: Any, args: list[Any]) -> list[Any]:
        width = len(self.return_type.fields)
        try:
            result = fn(*args)
            produced = [] if result is None else list(result)
        except PythonException:
            raise
        except Exception as e:  # noqa: BLE001 - the user's code
            raise python_exception(e, getattr(fn, "__func__", fn)) from None
        if width == 1:  # a one-column UDTF may yield bare values
            produced = [r if isinstance(r, (tuple, list)) else (r,) for r in produced]
        for r in produced:
            if not isinstance(r, (tuple, list)):
                raise PythonException(
                    "[UDTF_INVALID_OUTPUT_ROW_TYPE] The type of an individual output row in the "
                    f"'eval' method of the UDTF '{self.name}' is invalid: it must be a tuple, "
                    f"list, or a Row, but got '{type(r).__name__}'.",
                    error_class="PYTHON_EXCEPTION")
            if len(r) != width:
                raise PythonException(
                    "[UDTF_RETURN_SCHEMA_MISMATCH] The number of columns in the result does not "
                    f"match the specified schema. Expected column count: {width}, Actual column "
                    f"count: {len(r)}.", error_class="PYTHON_EXCEPTION")
        return produced

    def _columns(self, rows: list[Any]) -> list[pa.Array]:
        return [to_arrow_result([r[j] for r in rows], f.data_type, lenient=False)
                for j, f in enumerate(self.return_type.fields)]


def _values(v: Any, n: int) -> list[Any]:
    """An argument's values as Python values (a scalar repeated for every row)."""
    if isinstance(v, pa.Scalar):
        return [v.as_py()] * n
    if isinstance(v, pa.ChunkedArray):
        return v.to_pylist()
    return v.to_pylist()
