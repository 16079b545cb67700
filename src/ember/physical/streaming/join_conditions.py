"""Splitting a stream-stream join's residual condition (Spark's ``JoinConditionSplitPredicates``).

The residual (every conjunct not used as an equi-join key) is split into:

- ``left_side_only``: AND of the deterministic conjuncts whose references are all left columns
  (a conjunct without references belongs to both "only" parts);
- ``right_side_only``: the same for the right side;
- ``both_sides``: AND of the other deterministic conjuncts plus every non-deterministic one.

``left_side_only`` / ``right_side_only`` are the pre-join filters of the sides, ``both_sides`` the
post-join filter evaluated on joined rows.  So an inequality between the two sides
(``l.t > r.t - 480``) is never a key: it is checked after the hash lookup.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from ember.expressions.base import Expression, and_all, split_conjuncts

__all__ = ["JoinConditionSplitPredicates"]


@dataclass(frozen=True, slots=True)
class JoinConditionSplitPredicates:
    left_side_only: Expression | None
    right_side_only: Expression | None
    both_sides: Expression | None
    full: Expression | None

    @staticmethod
    def of(condition: Expression | None, left_output: Sequence[Expression],
           right_output: Sequence[Expression]) -> "JoinConditionSplitPredicates":
        if condition is None:
            return JoinConditionSplitPredicates(None, None, None, None)
        left_ids = frozenset(a.expr_id for a in left_output)  # type: ignore[attr-defined]
        right_ids = frozenset(a.expr_id for a in right_output)  # type: ignore[attr-defined]
        conjuncts = split_conjuncts(condition)
        candidates = [c for c in conjuncts if c.deterministic]
        non_det = [c for c in conjuncts if not c.deterministic]
        left = [c for c in candidates if c.references <= left_ids]
        right = [c for c in candidates if c.references <= right_ids]
        both = [c for c in candidates
                if not any(c is x for x in left) and not any(c is x for x in right)]
        return JoinConditionSplitPredicates(and_all(left), and_all(right),
                                            and_all(both + non_det), condition)

    def __str__(self) -> str:
        def s(e: Expression | None) -> str:
            return "null" if e is None else e.simple_string()

        return (f"[ leftOnly = {s(self.left_side_only)}, rightOnly = {s(self.right_side_only)}, "
                f"both = {s(self.both_sides)}, full = {s(self.full)} ]")
