"""EXPLAIN text helpers shared by :mod:`ember.query_execution`.

:func:`side_by_side` lays two plan trees next to each other the way Spark's ``PlanChangeLogger``
does (``sideBySide``): a line that differs is marked with ``!``.  :func:`format_rule_changes`
renders the Ember-only ``EXPLAIN RULES`` mode: every optimizer rule that changed the plan, with
its batch and the plan before and after, so a user can see why (for example) their joins were
reordered.
"""

from __future__ import annotations

from collections.abc import Sequence
from itertools import zip_longest
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # pragma: no cover
    from ember.optimizer.rule_executor import PlanChange, RuleMetrics

__all__ = ["side_by_side", "format_rule_changes"]


def side_by_side(left: str, right: str) -> list[str]:
    """Two multi-line texts in two columns; differing lines start with ``!``.

    >>> side_by_side("a\\nb", "a\\nc")
    [' a   a', '!b   c']
    """
    ls, rs = left.rstrip("\n").split("\n"), right.rstrip("\n").split("\n")
    width = max((len(x) for x in ls), default=0)
    out = []
    for a, b in zip_longest(ls, rs, fillvalue=""):
        mark = " " if a == b else "!"
        out.append(f"{mark}{a.ljust(width)}   {b}".rstrip())
    return out


def format_rule_changes(changes: Sequence["PlanChange"], metrics: "RuleMetrics | None" = None) -> str:
    """The ``rules`` explain mode: one section per effective rule application."""
    if not changes:
        return "== Optimizer Rules ==\nNo rule changed the analyzed plan.\n"
    parts = [f"== Optimizer Rules ({len(changes)} effective applications) =="]
    for i, c in enumerate(changes, 1):
        parts.append(f"=== {i}. Applying Rule {c.rule} (batch: {c.batch}) ===")
        parts.extend(side_by_side(c.before.tree_string(), c.after.tree_string()))
        parts.append("")
    if metrics is not None and metrics.stats:
        parts.append("== Rule Timing ==")
        parts.append(metrics.report())
    return "\n".join(parts) + "\n"
