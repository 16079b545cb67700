"""A partial ``HashAggregateExec`` directly over an ``ExpandExec`` (ROLLUP / CUBE / GROUPING SETS)
groups the Expand's input rows without materializing the Expand's output.

The Expand turns each input row into ``k`` rows (one per projection), which only differ in which
grouping columns are NULL and in the ``spark_grouping_id`` literal; materializing them copies
every grouping value -- often strings -- ``k`` times, interleaves them with a ``take`` and
concatenates them again before the aggregate encodes them.  When every grouping expression of
the aggregate is an output column of the Expand that each projection fills with either one and
the same input column or a literal (and a column filled from an input column only ever gets the
NULL literal), and some literal column differs in every projection, the aggregate instead
(:meth:`ExpandGrouping.read`):

1. groups the chunk's ``n`` input rows once by every key column (``group_ids``);
2. some literal position (``spark_grouping_id``) differs in every projection, so no two
   projections give equal keys: each projection's groups are those of the columns it keeps,
   found over one representative row per input group, and numbered by first appearance;
3. numbers the groups of all projections by their first row in the Expand's row order (every
   projection of a row before the next row), as ``group_ids`` numbers the materialized rows;
4. evaluates the aggregate's input slots over the projections' output (the grouping columns are
   references or literals there: no copy) and puts them in the Expand's row order with one
   ``take`` of those columns only;
5. builds each group's key values from its first row's input row and projection.

The group ids, first rows, key values and input columns are exactly those of the materialized
path, so results and their order are unchanged.  Chunking (``_CHUNK_ROWS`` output rows) sees one
:class:`ExpandedBatch` per input batch counting its ``k * n`` output rows, so chunks also end
where they did; other readers of the rows (the pass-through path) materialize them
(:meth:`ExpandGrouping.materialize`).  ``ENABLED`` (module flag) turns this off.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from ember.execution.aggregate import (_canonical_key, _conform, _dense_by_first, group_ids,
                                       read_inputs)
from ember.execution.kernels.batches import eval_projection, schema_of
from ember.execution.kernels.keys import encode_arrays
from ember.execution.prepare import prepare
from ember.expressions.base import AttributeReference, BoundReference, Expression, Literal
from ember.physical.nodes import ExpandExec
from ember.runtime.local.operators.basic import expand_batch

__all__ = ["ENABLED", "ExpandedBatch", "ExpandGrouping"]

#: switch for tests and same-process A/B runs: False materializes the Expand's rows as before
ENABLED = True


class ExpandedBatch:
    """One input batch of an ``ExpandExec`` standing for its ``k * n`` output rows."""

    __slots__ = ("batch", "k")

    def __init__(self, batch: pa.RecordBatch, k: int) -> None:
        self.batch = batch
        self.k = k

    @property
    def num_rows(self) -> int:
        return self.batch.num_rows * self.k


class ExpandGrouping:
    """An ``ExpandExec`` below a partial aggregate, compiled for :meth:`read` (module
    docstring)."""

    def __init__(self, expand: ExpandExec, bound: list[list[Expression]],
                 sources: list[tuple[int | None, dict[int, Any]]]) -> None:
        self.expand = expand
        self.k = len(bound)
        self.bound = bound
        self.schema = schema_of(expand.output)
        #: per grouping expression: (input column ordinal or None, {projection: literal value})
        self.sources = sources

    @classmethod
    def of(cls, expand: ExpandExec, bound_grouping: Sequence[Expression]
           ) -> "ExpandGrouping | None":
        """The compiled Expand when every grouping expression qualifies (module docstring)."""
        k = len(expand.projections)
        if not ENABLED or k < 2 or not bound_grouping:
            return None
        child_ids = [a.id for a in expand.child.output]
        sources: list[tuple[int | None, dict[int, Any]]] = []
        for g in bound_grouping:
            if not isinstance(g, BoundReference) or g.ordinal >= len(expand.output):
                return None
            column: int | None = None
            literals: dict[int, Any] = {}
            for p, proj in enumerate(expand.projections):
                e = proj[g.ordinal]
                if isinstance(e, AttributeReference) and e.id in child_ids:
                    ordinal = child_ids.index(e.id)
                    if column is not None and column != ordinal:
                        return None
                    column = ordinal
                elif isinstance(e, Literal) and (e.value is None or type(e.value) in (int, str)):
                    literals[p] = e.value
                else:
                    return None
            if column is not None and any(v is not None for v in literals.values()):
                return None
            sources.append((column, literals))
        if not any(c is None and len(_distinct(lits.values())) == k for c, lits in sources):
            return None  # no literal position tells every projection apart
        bound = [[prepare(e, expand.child.output) for e in p] for p in expand.projections]
        return cls(expand, bound, sources)

    def wrap(self, batches: Iterable[pa.RecordBatch]) -> Iterator[ExpandedBatch]:
        return (ExpandedBatch(b, self.k) for b in batches)

    def materialize(self, chunk: Iterable[ExpandedBatch]) -> Iterator[pa.RecordBatch]:
        """The Expand's output rows of ``chunk``, as the Expand itself emits them."""
        for eb in chunk:
            yield from expand_batch(self.bound, eb.batch, self.schema)

    def read(self, chunk: list[ExpandedBatch], bound_grouping: Sequence[Expression],
             slot_list: Sequence[tuple[Expression, Expression | None]]
             ) -> tuple[np.ndarray, int, list[pa.Array], list[pa.Array], int] | None:
        """``(group ids, group count, group key values, slot columns, row count)`` of the
        chunk's output rows, as ``read_inputs`` + ``assign_groups`` give them over the
        materialized rows; None for an empty chunk or no grouping column from the input
        (materialize instead)."""
        batches = [eb.batch for eb in chunk if eb.batch.num_rows]
        n = sum(b.num_rows for b in batches)
        k = self.k
        if n == 0:
            return None
        columns: dict[int, pa.Array] = {}
        for (column, _lits), g in zip(self.sources, bound_grouping):
            if column is not None and column not in columns:
                parts = [b.column(column) for b in batches]
                columns[column] = _canonical_key(_conform(
                    parts[0] if len(parts) == 1 else pa.concat_arrays(parts), g.data_type))
        if not columns:  # only literal grouping positions: nothing to group the input by
            return None
        ids, first = self._by_fine_groups(columns, n)
        # the input slots, evaluated per projection and interleaved
        outs = [eval_projection(p, b, self.schema) for b in batches for p in self.bound]
        _keys, slot_cols, n_rows = read_inputs(iter(outs), [], slot_list)
        if slot_cols and any(not isinstance(e, Literal) for e, _f in slot_list):
            order = _interleaving([b.num_rows for b in batches], k)
            slot_cols = [c if isinstance(e, Literal) else c.take(order)
                         for c, (e, _f) in zip(slot_cols, slot_list)]
        proj = first % k
        rows = pa.array(first // k, type=pa.int64())
        keys: list[pa.Array] = []
        for (column, lits), g in zip(self.sources, bound_grouping):
            typ = g.data_type.to_arrow()
            if column is not None:
                vals = columns[column].take(rows)
                nulled = np.isin(proj, list(lits))
                if nulled.any():
                    vals = pc.if_else(pa.array(nulled), pa.scalar(None, vals.type), vals)
            else:
                vals = pa.array([lits[p] for p in range(k)], type=typ).take(pa.array(proj))
            keys.append(_canonical_key(_conform(vals, g.data_type)))
        return ids, len(first), keys, slot_cols, n_rows


    def _kept(self, p: int) -> list[int]:
        """The input columns projection ``p`` puts into some grouping position."""
        return list(dict.fromkeys(c for c, lits in self.sources
                                  if c is not None and p not in lits))

    def _by_fine_groups(self, columns: dict[int, pa.Array], n: int
                        ) -> tuple[np.ndarray, np.ndarray]:
        """Group ids and first rows (in the Expand's row order; no two projections give equal
        keys, :meth:`of`): the input rows are grouped once by every key column
        (``group_ids``); each projection's groups are those of the columns it keeps, found
        over one representative row per fine group, numbered by first appearance (a coarser
        group first appears with its first fine group); the groups of all projections are
        then numbered by their first output row ``input row * k + projection``."""
        k = self.k
        order = list(columns)
        fid, ffirst = group_ids([columns[c] for c in order], n)
        reps = pa.array(ffirst, type=pa.int64())
        rep_cols = {c: columns[c].take(reps) for c in order}
        per: list[tuple[np.ndarray, np.ndarray]] = []  # (group of each fine group, first rows)
        for p in range(k):
            kept = self._kept(p)
            if kept:
                codes, card = encode_arrays([rep_cols[c] for c in kept], nulls_equal=True)
                pid, pfirst = _dense_by_first(codes, card)
            else:
                pid, pfirst = np.zeros(len(ffirst), dtype=np.int64), np.zeros(1, dtype=np.int64)
            per.append((pid, ffirst[pfirst]))
        starts = np.concatenate([rows * k + p for p, (_pid, rows) in enumerate(per)])
        by_start = np.argsort(starts, kind="stable")
        rank = np.empty(len(starts), dtype=np.int64)
        rank[by_start] = np.arange(len(starts), dtype=np.int64)
        ids = np.empty((n, k), dtype=np.int64)
        offset = 0
        for p, (pid, rows) in enumerate(per):
            ids[:, p] = rank[offset:offset + len(rows)][pid[fid]]
            offset += len(rows)
        return ids.ravel(), starts[by_start]


def _distinct(values: Iterable[Any]) -> list[Any]:
    out: list[Any] = []
    for v in values:
        if not any(_same(v, w) for w in out):
            out.append(v)
    return out


def _same(a: Any, b: Any) -> bool:
    return (a is None and b is None) or (a is not None and b is not None and type(a) is type(b)
                                         and a == b)


def _interleaving(sizes: list[int], k: int) -> pa.Array:
    """Positions, in the Expand's row order, of rows laid out batch by batch and within a batch
    projection by projection (``k`` projections of batches of ``sizes`` rows)."""
    parts = []
    offset = 0
    for n in sizes:
        parts.append(np.arange(n * k, dtype=np.int64).reshape(k, n).T.ravel() + offset)
        offset += n * k
    return pa.array(np.concatenate(parts) if len(parts) > 1 else parts[0])
