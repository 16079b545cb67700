"""The ``foreachBatch`` sink (Spark's ``ForeachBatchSink``): ``fn(batch_df, batch_id)`` for every
micro-batch, with the batch's output as a (non-streaming) DataFrame over its rows.

As in Spark it is called for every batch that runs, empty and no-data batches included, and again
for a batch re-run after a restart: the function sees each batch id at least once and makes its
own writes idempotent by ``batch_id`` if it needs exactly-once output.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import pyarrow as pa

from ember import types as T
from ember.errors import AnalysisError
from ember.expressions.base import AttributeReference
from ember.dataframe import DataFrame
from ember.plans.logical.nodes import LocalRelation

if TYPE_CHECKING:  # pragma: no cover
    from ember.session import Session

__all__ = ["ForeachBatchSink"]


class ForeachBatchSink:
    """Calls ``fn(DataFrame, batch_id)`` per batch (``writeStream.foreachBatch(fn)``)."""

    def __init__(self, session: "Session", options: dict[str, str] | None, path: str | None = None,
                 *, fn: Callable[[Any, int], Any] | None = None) -> None:
        if fn is None or not callable(fn):
            raise AnalysisError("foreachBatch needs a function of (DataFrame, batch id)",
                                error_class="_LEGACY_ERROR_TEMP_1300")
        self.session = session
        self.fn = fn

    def add_batch(self, batch_id: int, data: pa.Table) -> None:
        attrs = tuple(AttributeReference(f.name, T.from_arrow(f.type), f.nullable)
                      for f in data.schema)
        self.fn(DataFrame(self.session, LocalRelation(attrs, data)), batch_id)

    def __str__(self) -> str:
        return "ForeachBatchSink"
