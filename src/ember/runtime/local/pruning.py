"""Which output columns of each physical node are read: joins and filters skip gathering the rest.

A ``ProjectExec`` right above a join usually drops the join keys and other columns, so gathering
them for every output row (``take`` over the build and stream sides) is wasted work.  Before a
run, :func:`read_columns` computes for every node of the physical plan the expr ids of its output
columns that its parents read (``None``: every column):

- a ``ProjectExec`` reads the references of its project list;
- a ``FilterExec`` reads its condition's references plus what its own parents read (its output
  rows are its child's);
- every other operator (exchanges, sorts, aggregates, joins, limits, unions, ...) is assumed to
  read every column of its children -- conservatively, so a node can only be pruned when all of
  its parents are Projects and Filters (through Filter chains);
- a node with several parents (a DAG) gets the union; the root's columns are all read.

The join operators (:class:`ember.runtime.local.joins.kernel.JoinLayout` ``keep``) and
``FilterExec`` (:func:`ember.runtime.local.operators.basic.filter_batch`) then put a
:func:`placeholder` instead of an unread column: an all-NULL array of the column's type (every
field of an operator schema is nullable, ``schema_of``), a zero-copy slice of one cached array
per type, so a placeholder costs nothing.  Record batches keep the operator's declared schema and
row count, so metrics (output rows) are unchanged; batch bytes only shrink.

Why no reader ever sees a placeholder: a placeholder sits only in a column its parents do not read,
and those parents are Projects (which evaluate only referenced columns) and Filters (which evaluate
their condition's columns and pass the other columns on to parents that do not read them either).
Project expressions are never skipped (an unread ``1/0`` must still raise).  Tests run the
conformance queries with :data:`POISON` set -- placeholders then hold non-NULL garbage -- and check
the results equal those of a run with pruning off (:data:`ENABLED`).

Adaptive join conversion (:mod:`.adaptive`) replaces a join during the run by a node with the same
output attributes and the same parents: :func:`needed_ids` answers for the replacement what it
answers for the node it replaced (``rt.metrics.replaced``).  Nodes created during the run that are
not replacements (new exchanges) read every column: they are unknown to the analysis.  Nodes below
an analysed node that adaptive conversion re-parents are children of exchanges / sorts, which read
every column, so the analysis never promised their columns away.

Runtime hook: ``LocalRuntime.collect`` stores ``read_columns(root)`` as ``rt.column_needs``
(:class:`~ember.runtime.local.context.RunContext`); without it (``rt.execute`` called directly,
kernel tests without a run context) nothing is pruned.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import numpy as np
import pyarrow as pa

from ember.expressions.base import BoundReference, Expression
from ember.runtime.local.node_state import NodeState
from ember.physical.nodes import FilterExec, ProjectExec

if TYPE_CHECKING:
    from ember.runtime.local.context import RunContext

__all__ = [
    "ENABLED",
    "POISON",
    "read_columns",
    "needed_ids",
    "output_mask",
    "placeholder",
    "stats",
]

#: Switch for tests and debugging: False = every column is gathered (no analysis is stored).
ENABLED = True
#: Debug mode for tests: placeholders hold non-NULL values, so a reader would change results.
POISON = False

#: Expr ids of a node's output columns that are read, or None (every column).
Needs = frozenset[int] | None


# ---------------------------------------------------------------------------------------------
# Analysis


def _reads_all(exprs: Sequence[Expression]) -> bool:
    """Expressions reading columns by position cannot be analysed by expr id."""
    return any(e.find(lambda x: isinstance(x, BoundReference)) is not None for e in exprs)


def _child_reads(parent: Any, needs: Needs) -> Needs:
    """The expr ids of its child's output that ``parent`` (read for ``needs``) reads."""

    if isinstance(parent, ProjectExec):
        if _reads_all(parent.project_list):
            return None
        out: set[int] = set()
        for e in parent.project_list:
            out |= e.references
        return frozenset(out)
    if isinstance(parent, FilterExec):
        if needs is None or _reads_all((parent.condition,)):
            return None
        return needs | parent.condition.references
    return None


def read_columns(root: Any) -> NodeState[Needs]:
    """The expr ids of ``node.output`` read by its parents (None: all), for every node of the
    physical plan ``root`` (see the module docstring)."""
    # parents per node (a node object reused under two parents is one node)
    parents: NodeState[int] = NodeState()
    parents[root] = 0
    stack = [root]
    while stack:
        n = stack.pop()
        for c in n.children:
            seen = c in parents
            parents[c] = parents.get(c, 0) + 1
            if not seen:
                stack.append(c)
    # top-down, a node once every parent has contributed (Kahn's order over the DAG)
    needs: NodeState[Needs] = NodeState()
    needs[root] = None
    ready = [root]
    while ready:
        n = ready.pop()
        mine = needs[n]
        for c in n.children:
            reads = _child_reads(n, mine)
            if c not in needs:
                needs[c] = reads
            else:
                prev = needs[c]
                needs[c] = None if prev is None or reads is None else prev | reads
            parents[c] -= 1
            if parents[c] == 0:
                ready.append(c)
    return needs


def needed_ids(rt: RunContext | None, node: Any) -> Needs:
    """The expr ids of ``node.output`` read by its parents in the run of ``rt`` (None: all, also
    without a run, when the run has no analysis or pruning is disabled)."""
    if not ENABLED or rt is None:
        return None
    table = rt.column_needs
    if not table:
        return None
    if node in table:
        return table[node]
    for old, new in rt.metrics.replaced.items():
        if new is node:  # an adaptive replacement has its predecessor's outputs and parents
            return table.get(old)
    return None


def output_mask(rt: RunContext | None, node: Any) -> tuple[bool, ...] | None:
    """Per position of ``node.output``: whether the column is read (None: every column is)."""
    ids = needed_ids(rt, node)
    if ids is None:
        return None
    mask = tuple(a.id in ids for a in node.output)
    return None if all(mask) else mask


# ---------------------------------------------------------------------------------------------
# Placeholders

#: Cached all-NULL arrays are at most this many rows (longer placeholders are fresh).
CACHE_ROWS = 1 << 16
#: ... and hold at most this many buffer bytes altogether (then placeholders are fresh).
CACHE_BYTES = 16 << 20

_cache: dict[pa.DataType, pa.Array] = {}
_cache_bytes = 0
_lock = threading.Lock()
_count = [0]


def stats() -> int:
    """Placeholders made so far in this process (for tests)."""
    return _count[0]


def placeholder(dtype: pa.DataType, n: int) -> pa.Array:
    """An ``n``-row array of ``dtype`` standing for a column nobody reads: all NULL, a slice of
    one cached array per type (non-NULL garbage under :data:`POISON`)."""
    global _cache_bytes
    _count[0] += 1
    if POISON:
        return _poison(dtype, n)
    if n > CACHE_ROWS:
        return pa.nulls(n, type=dtype)
    arr = _cache.get(dtype)
    if arr is None or len(arr) < n:
        size = min(CACHE_ROWS, max(n, 1024, 2 * (0 if arr is None else len(arr))))
        new = pa.nulls(size, type=dtype)
        with _lock:
            grow = new.get_total_buffer_size() - (0 if arr is None else arr.get_total_buffer_size())
            if _cache_bytes + grow <= CACHE_BYTES:
                _cache[dtype] = new
                _cache_bytes += grow
        arr = new
    return arr if len(arr) == n else arr.slice(0, n)


def _poison(dtype: pa.DataType, n: int) -> pa.Array:
    """Non-NULL values of ``dtype`` unlikely to equal real data (NULLs for types no cast reaches)."""
    base = pa.array((np.arange(n, dtype=np.int64) % 7) + 3)
    for src in (base, base.cast(pa.int32()), base.cast(pa.string())):
        try:
            return src.cast(dtype)
        except (pa.ArrowInvalid, pa.ArrowNotImplementedError, pa.ArrowTypeError):
            continue
    return pa.nulls(n, type=dtype)
