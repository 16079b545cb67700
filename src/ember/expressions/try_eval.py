"""``try_add``, ``try_subtract``, ``try_multiply``, ``try_divide``, ``try_mod``: Spark's
``TryEval`` over the ANSI arithmetic (``EvalMode.TRY``), NULL where the ANSI operation would
raise (overflow, division by zero), shown as called (``try_add(a, b)``).

The child is evaluated on the whole batch; only when that raises is the batch split in halves
(recursively), so a batch with ``k`` failing rows costs ``O(k log n)`` vectorized evaluations
and the rows that fail on their own become NULL.
"""

from __future__ import annotations

import pyarrow as pa

from ember import types as T
from ember.errors import EmberError
from ember.expressions.base import Expression
from ember.expressions.common import to_array
from ember.trees import node

__all__ = ["TryEval"]


@node
class TryEval(Expression):
    """``child`` evaluated in ANSI mode with the rows that raise turned into NULL.  The direct
    child stays ANSI whatever ``spark.sql.ansi.enabled`` says (Spark's TRY mode); its own
    arguments follow the session's mode."""

    child: Expression

    @property
    def data_type(self) -> T.DataType:
        return self.child.data_type

    @property
    def nullable(self) -> bool:
        return True

    def _ansi_child(self) -> Expression:
        c = self.child
        if getattr(c, "ansi", True) is False:
            return c.copy(ansi=True)
        return c

    def eval(self, batch: pa.RecordBatch) -> pa.Array:
        return self._eval(self._ansi_child(), batch)

    def _eval(self, child: Expression, batch: pa.RecordBatch) -> pa.Array:
        n = batch.num_rows
        try:
            return to_array(child.eval(batch), n).cast(self.data_type.to_arrow())
        except (EmberError, ArithmeticError, pa.ArrowInvalid):
            if n <= 1:
                return pa.nulls(n, self.data_type.to_arrow())
        half = n // 2
        parts = [self._eval(child, batch.slice(0, half)), self._eval(child, batch.slice(half))]
        return pa.concat_arrays(parts)

    def simple_string(self) -> str:
        return f"tryeval({self.child.simple_string()})"

    def sql(self) -> str:
        return self.child.sql()
