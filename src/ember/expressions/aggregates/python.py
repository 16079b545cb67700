"""Grouped aggregate pandas UDFs (``pandas_udf`` of ``Series -> scalar``, PySpark's
``SQL_GROUPED_AGG_PANDAS_UDF``; Spark's ``PythonUDAF`` evaluated by ``ArrowAggregatePython``).

The function is called once per group (the definition of the UDF kind), on the group's argument
values as ``pandas.Series``, and returns one value; the results become one Arrow column of the
return type (NaN is NULL, as PySpark converts pandas results).  It has no aggregation buffer (Spark cannot merge a pandas UDF's partial results
either), so the planner keeps one COMPLETE aggregate after the shuffle; as a window function
it sees each row's frame.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import field
from typing import Any

import numpy as np
import pyarrow as pa

from ember import types as T
from ember.expressions.aggregates.base import AggregateFunction
from ember.expressions.base import Expression, new_expr_id
from ember.expressions.python_udf import arrow_to_pandas, python_exception, to_arrow_result
from ember.trees import node

__all__ = ["PythonUDAF"]


@node
class PythonUDAF(AggregateFunction):
    """``name(args)``: a grouped aggregate pandas UDF call."""

    name: str
    func: Any = field(compare=False)
    return_type: T.DataType
    arguments: tuple[Expression, ...]
    udf_deterministic: bool = True
    result_id: int = field(default_factory=new_expr_id)
    func_id: int = 0

    @property
    def pretty_name(self) -> str:
        return self.name

    @property
    def data_type(self) -> T.DataType:
        return self.return_type

    @property
    def deterministic(self) -> bool:
        return self.udf_deterministic and all(a.deterministic for a in self.arguments)

    def aggregate(self, args: Sequence[pa.Array], g: np.ndarray, n_groups: int) -> pa.Array:
        series = [arrow_to_pandas(a.combine_chunks() if isinstance(a, pa.ChunkedArray) else a)
                  for a in args]
        order = np.argsort(g, kind="stable")
        bounds = np.concatenate(([0], np.cumsum(np.bincount(g, minlength=n_groups))))
        values = []
        for i in range(n_groups):  # one call per group: what a grouped aggregate UDF is
            rows = order[bounds[i]:bounds[i + 1]]
            try:
                out = self.func(*(s.iloc[rows].reset_index(drop=True) for s in series))
            except Exception as e:  # noqa: BLE001 - the user's error, with its traceback
                raise python_exception(e, self.func) from None
            values.append(out.item() if isinstance(out, np.generic) else out)
        return to_arrow_result(values, self.return_type, lenient=False, from_pandas=True)
