"""Join conditions over candidate pairs: a condition evaluated on chunks of (left row, right row)
index pairs of two batches, and the TRUE-only mask of a predicate's result (NULL and FALSE fail,
as in SQL).  The join kernels of the local runtime use them for residual conditions and nested
loops.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from ember.execution.kernels.batches import make_batch, schema_of
from ember.expressions.base import AttributeReference, Expression, bind_references

__all__ = ["PairCondition", "true_mask"]


class PairCondition:
    """A join condition evaluated over chunks of (left_index, right_index) pairs.

    Only the referenced columns are gathered for each chunk.
    """

    def __init__(
        self,
        condition: Expression,
        left_attrs: Sequence[AttributeReference],
        right_attrs: Sequence[AttributeReference],
    ) -> None:
        refs = condition.references
        self.left_cols = [i for i, a in enumerate(left_attrs) if a.id in refs]
        self.right_cols = [i for i, a in enumerate(right_attrs) if a.id in refs]
        attrs = [left_attrs[i] for i in self.left_cols] + [right_attrs[i] for i in self.right_cols]
        self.bound = bind_references(condition, attrs)
        self.schema = schema_of(attrs)

    def mask(
        self, lb: pa.RecordBatch, rb: pa.RecordBatch, li: np.ndarray, ri: np.ndarray
    ) -> np.ndarray:
        """TRUE-only mask over the pairs."""
        li_a = pa.array(li)
        ri_a = pa.array(ri)
        cols = [lb.column(i).take(li_a) for i in self.left_cols]
        cols += [rb.column(i).take(ri_a) for i in self.right_cols]
        batch = make_batch(cols, self.schema, len(li))
        return true_mask(self.bound.eval(batch), len(li))


def true_mask(result: pa.Array | pa.ChunkedArray | pa.Scalar, n: int) -> np.ndarray:
    """numpy bool mask where a predicate's result is TRUE (NULL and FALSE -> False)."""
    if isinstance(result, pa.Scalar):
        return np.full(n, bool(result.as_py()), dtype=bool)
    if isinstance(result, pa.ChunkedArray):
        result = result.combine_chunks()
    if pa.types.is_null(result.type):
        return np.zeros(n, dtype=bool)
    if result.null_count:
        result = pc.fill_null(result, False)
    return np.asarray(result.to_numpy(zero_copy_only=False), dtype=bool)
