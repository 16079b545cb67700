"""Aggregation buffers: the operator's side of Spark's two-phase (partial / merge / final) form.

Spark computes an aggregate function in three steps over an *aggregation buffer* (its
``aggBufferAttributes``): **update** folds raw input rows into per-group buffers (Partial mode,
the only place FILTER applies), **merge** folds buffers into buffers (PartialMerge / Final), and
**evaluate** turns a buffer into the result (Final).  Each function declares its buffer and
implements the three steps as grouped, vectorized kernels over integer group ids (``gids``,
``0 <= gid < n_groups``): see :class:`~ember.expressions.aggregates.AggregateFunction`.

This module applies what is the operator's, not the function's: the FILTER mask, and the
shortcut when every row is its own group (a partial aggregate passing rows through, or a merge
of unique keys), which takes the function's ``update_identity`` / ``merge_identity``.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pyarrow as pa

from ember.expressions.aggregates import AggregateFunction

__all__ = ["update_buffers", "merge_buffers"]


def update_buffers(func: AggregateFunction, args: Sequence[pa.Array], mask: np.ndarray | None,
                   gids: np.ndarray, n_groups: int) -> list[pa.Array]:
    """Per-group buffers of ``func`` over raw argument columns ``args`` (one per child of
    ``func``, one value per row); ``mask`` (FILTER) selects the rows that count, None = all.

    DISTINCT is not handled here: the one-distinct plan feeds distinct functions rows that are
    already unique per group.
    """
    args = list(args)
    if mask is not None:
        rows = np.flatnonzero(mask)
        if len(rows) != len(gids):
            idx = pa.array(rows, type=pa.int64())
            args = [a.take(idx) for a in args]
            gids = gids[rows]
    if _is_identity(gids, n_groups):
        fast = func.update_identity(args)
        if fast is not None:
            return fast
    return func.update(args, gids, n_groups)


def merge_buffers(func: AggregateFunction, buffers: Sequence[pa.Array], gids: np.ndarray,
                  n_groups: int) -> list[pa.Array]:
    """Per-group buffers of ``func`` merged from input buffer rows (``buffers``: one column per
    buffer field), in row order."""
    buffers = list(buffers)
    if _is_identity(gids, n_groups):
        fast = func.merge_identity(buffers)
        if fast is not None:
            return fast
    return func.merge(buffers, gids, n_groups)


def _is_identity(gids: np.ndarray, n_groups: int) -> bool:
    """Whether row ``i`` is group ``i`` for every row (every row its own group, in order: a
    partial aggregate passing rows through, or a merge of unique keys)."""
    n = len(gids)
    if n != n_groups or n < 2:
        return False
    if int(gids[0]) != 0 or int(gids[-1]) != n - 1:
        return False
    return bool((np.diff(gids) == 1).all())
