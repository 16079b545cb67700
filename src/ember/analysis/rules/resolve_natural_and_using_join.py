"""ResolveNaturalAndUsingJoin: ``USING (k)`` / ``NATURAL`` joins -> equi-join + Project.

Before::  Join UsingJoin(LeftOuter, [k]) (nt1 [k#1, v1#2]) (nt2 [k#3, v2#4])
After::   Project [k#1, v1#2, v2#4]              (hidden: k#3, still reachable as nt2.k)
            (Join LeftOuter, (k#1 = k#3) (nt1) (nt2))

Output: the key columns first, then the other left columns, then the other right columns.  The
key is the left one for inner / left outer / semi / anti joins, the right one for right outer, and
``coalesce(l.k, r.k) AS k`` for full outer.  The dropped key columns stay reachable through a
qualifier (``nt1.k``, ``nt2.k``, ``nt2.*``) via :class:`UsingJoinProject`.  NATURAL joins use the
columns both sides share, in left order.  Unknown USING columns raise
``UNRESOLVED_USING_COLUMN_FOR_JOIN``.
"""

from __future__ import annotations

from ember.analysis.resolution import UsingJoinProject, find_candidates, quote, resolve_name
from ember.analysis.rules._util import transform_up_in_run
from ember.errors import AnalysisError
from ember.expressions.base import Alias, AttributeReference, and_all
from ember.plans.logical.join_type import UsingJoin
from ember.plans.logical.nodes import Join, LogicalPlan
from ember.expressions.conditional import Coalesce
from ember.expressions.predicates import EqualTo


def _using_error(col: str, side: str, attrs) -> AnalysisError:
    cols = ", ".join(quote(a.name) for a in attrs)
    return AnalysisError(
        f"USING column {quote(col)} cannot be resolved on the {side} side of the join. The "
        f"{side}-side columns: [{cols}].",
        error_class="UNRESOLVED_USING_COLUMN_FOR_JOIN",
        parameters={"colName": quote(col), "side": side, "suggestion": cols},
    )


def resolve_using(join: Join, ctx) -> LogicalPlan:
    """The equi-join plus :class:`UsingJoinProject` replacing ``join`` (a ``UsingJoin`` whose
    children are resolved and share no attribute ids).

    >>> # Join(nt1, nt2, UsingJoin(INNER, ('k',)))  ->  UsingJoinProject [k#1, v1#2, v2#4]
    """

    cs = ctx.case_sensitive
    uj: UsingJoin = join.join_type  # type: ignore[assignment]
    jt = uj.join_type
    left, right = join.left.output, join.right.output
    if uj.natural:
        names = [
            l.name for l in left
            if any((l.name == r.name) if cs else (l.name.lower() == r.name.lower()) for r in right)
        ]
    else:
        names = list(uj.using_columns)
    pairs = []
    for n in names:
        if not find_candidates((n,), left, cs):
            raise _using_error(n, "left", left)
        l = resolve_name((n,), left, cs)
        if not find_candidates((n,), right, cs):
            raise _using_error(n, "right", right)
        r = resolve_name((n,), right, cs)
        pairs.append((l, r))
    lkeys = [l for l, _ in pairs]
    rkeys = [r for _, r in pairs]
    lk_ids = {a.id for a in lkeys}
    rk_ids = {a.id for a in rkeys}
    l_rest = [a for a in left if a.id not in lk_ids]
    r_rest = [a for a in right if a.id not in rk_ids]

    def padded(attrs: list[AttributeReference], nullable: bool) -> list[AttributeReference]:
        return [a.with_nullability(True) for a in attrs] if nullable else list(attrs)

    # Spark's commonNaturalJoinProcessing; the key columns come from the side the join preserves.
    l_rest, r_rest = padded(l_rest, jt.left_nullable), padded(r_rest, jt.right_nullable)
    if not jt.outputs_right:  # LeftSemi, LeftAnti, ExistenceJoin
        items, hidden = lkeys + l_rest, []
    elif jt.preserves_left and jt.preserves_right:  # FullOuter: key = coalesce(l, r)
        keys = [
            Alias(Coalesce((l.with_nullability(True), r.with_nullability(True))), l.name)
            for l, r in pairs
        ]
        items = keys + l_rest + r_rest
        hidden = padded(lkeys, jt.left_nullable) + padded(rkeys, jt.right_nullable)
    elif jt.preserves_right:  # RightOuter
        items, hidden = rkeys + l_rest + r_rest, padded(lkeys, jt.left_nullable)
    else:  # Inner, Cross, LeftOuter
        items, hidden = lkeys + l_rest + r_rest, padded(rkeys, jt.right_nullable)
    conds = [EqualTo(l, r) for l, r in pairs]
    if join.condition is not None:
        conds.append(join.condition)
    new_join = join.copy(join_type=jt, condition=and_all(conds))
    return UsingJoinProject(tuple(items), new_join, tuple(hidden))


def resolve_natural_and_using_join(plan: LogicalPlan, ctx) -> LogicalPlan:
    """``plan`` with every resolvable ``USING`` / ``NATURAL`` join rewritten (see module doc)."""

    def rule(p: LogicalPlan) -> LogicalPlan:
        match p:
            case Join(join_type=UsingJoin(), left=left, right=right) if left.resolved and right.resolved:
                if left.output_set & right.output_set:
                    return p  # DeduplicateRelations first
                return resolve_using(p, ctx)
            case _:
                return p

    return transform_up_in_run(plan, rule, ctx, "ResolveNaturalAndUsingJoin")
