"""Preparing expressions for repeated per-batch evaluation.

:func:`prepare` binds an expression to its input attributes (``bind_references``) and folds its
constant subtrees into :class:`~ember.expressions.base.Literal` s, evaluating each such subtree
once instead of once per batch.  The analyzer leaves implicit casts of literals in the plan
(``v > 0.5`` over a double ``v`` is ``v > cast(0.5 as double)``, a DECIMAL literal cast for every
row of every batch) and there is no ConstantFolding optimizer rule yet; folding here makes the
per-batch work independent of such casts.

Folding is semantics-preserving by construction:

- only ``foldable`` and ``deterministic`` subtrees of atomic, non-NULL-typed results are folded;
- a subtree whose one-row evaluation raises (``cast('x' as int)``, ``1/0`` under ANSI) is left as
  it is, so it still raises only when (and where) rows are evaluated, as in Spark;
- the folded literal must evaluate to exactly the same Arrow value as the subtree, else the subtree
  is kept.

Every literal of a prepared expression is then a :class:`CachedLiteral`: a ``Literal`` that keeps
the longest array it built, so a constant operand is materialised once rather than once per
batch.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import field
from typing import Any

import pyarrow as pa

from ember import types as T
from ember.expressions.base import Expression, Literal, bind_references
from ember.trees import node

__all__ = ["prepare", "fold_constants", "CachedLiteral"]


@node
class CachedLiteral(Literal):
    """A ``Literal`` remembering the longest array it built; shorter batches get a zero-copy
    slice of it (Arrow arrays are immutable, so sharing one across batches is safe).
    Executor-internal."""

    last: list[Any] = field(default_factory=list, compare=False)

    def eval(self, batch: pa.RecordBatch) -> pa.Array:
        n = batch.num_rows
        last = self.last
        if last and last[0] >= n:
            return last[1] if last[0] == n else last[1].slice(0, n)
        arr = Literal.eval(self, batch)
        last[:] = [n, arr]
        return arr


def prepare(expr: Expression, attrs: Sequence) -> Expression:
    """``expr`` bound to ``attrs`` with its constant subtrees folded (see module docstring)."""
    return fold_constants(bind_references(expr, attrs))


def fold_constants(expr: Expression) -> Expression:
    """``expr`` with every maximal foldable subtree replaced by its value as a ``Literal``
    (a :class:`CachedLiteral`, as is every literal already there)."""
    return expr.transform_down(_fold_one)


def _fold_one(e: Expression) -> Expression | None:
    if isinstance(e, CachedLiteral):
        return None
    if isinstance(e, Literal):
        return CachedLiteral(e.value, e.dtype)
    if not e.children:
        return None
    try:
        if not (e.foldable and e.deterministic):
            return None
        dt = e.data_type
    except Exception:  # noqa: BLE001 - an expression that cannot answer is simply not folded
        return None
    if not isinstance(dt, T.AtomicType) or isinstance(dt, T.NullType):
        return None
    try:
        one = pa.RecordBatch.from_struct_array(pa.array([{}], type=pa.struct([])))
        out = e.eval(one)
        if isinstance(out, pa.ChunkedArray):
            out = out.combine_chunks()
        if isinstance(out, pa.Scalar):
            out = pa.array([out.as_py()], type=out.type)
        at = dt.to_arrow()
        if len(out) != 1 or out.type != at:
            return None
        lit = CachedLiteral(out[0].as_py(), dt)
        check = lit.eval(one)
        if not check.equals(out):
            return None
    except Exception:  # noqa: BLE001 - it raises per row at run time instead, as in Spark
        return None
    return lit
