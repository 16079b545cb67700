"""ResolveEvalMode: with ``spark.sql.ansi.enabled=false`` expressions evaluate in legacy mode.

Before::  Project [(a#1 / 0) AS q#2, CAST(s#3 AS INT) AS i#4]          (ANSI: raises)
After::   Project [(a#1 / 0) AS q#2, CAST(s#3 AS INT) AS i#4]          ansi=False / legacy=True

Spark fixes each expression's ``evalMode`` (``EvalMode.fromSQLConf``: ``ANSI`` or ``LEGACY``;
``TRY`` for ``try_*``) when the expression is built, from the session's configuration.  Ember's
parser and DataFrame API build every expression in ANSI mode, and this rule, which reads the key
once per query, switches the ones whose behaviour differs to legacy when ANSI is off:

- arithmetic (``+ - * / div % pmod``, unary minus, ``abs``): ``ansi=False`` (wrap, NULL);
- ``CAST`` (not ``try_cast``, which keeps ``TRY``): ``legacy=True`` (Spark's legacy Cast);
- ``sum``/``avg``: ``ansi=False`` (integral sums wrap, decimal overflow is NULL);
- scalar functions whose spec is ``ansi_aware`` (``to_date``, ``ceil``, ...): ``ansi=False``.

The fact then travels with the plan (pickled to Spark's Python workers on the Spark runtime).
It runs after TypeCoercion inside the Resolution batch, so the casts coercion inserts are
switched too, and before CheckAnalysis, so a cast only the legacy Cast allows (``date`` to
``int``) is accepted.  It descends into subquery plans.  With ANSI on it changes nothing.
ResolveInlineTables, which evaluates its rows earlier, switches them itself
(:func:`expression_in_eval_mode`).

Reads ``spark.sql.ansi.enabled``.  Always valid: it changes no types and no names.
"""

from __future__ import annotations

from ember.expressions.base import Expression
from ember.expressions.subquery import SubqueryExpression
from ember.plans.logical.nodes import LogicalPlan


def expression_in_eval_mode(e: Expression, ctx) -> Expression:
    """``e`` in the session's evaluation mode, for rules that evaluate expressions before this
    one runs (ResolveInlineTables folds its rows during resolution)."""
    if ctx.conf.ansi:
        return e
    return e.transform_down(lambda x: x.to_legacy_mode() if x.ansi_mode else None)


def resolve_eval_mode(plan: LogicalPlan, ctx) -> LogicalPlan:
    """``plan`` (and its subquery plans) with every ANSI-mode expression in legacy mode when
    ``spark.sql.ansi.enabled`` is false; the identical plan otherwise."""
    if ctx.conf.ansi:
        return plan

    def fix(e: Expression) -> Expression:
        """``e`` bottom-up in legacy mode; a node the analyzer marked as an implicit cast keeps
        the mark on its replacement, so generated names still omit it."""
        kids = e.children
        new_kids = tuple(fix(k) for k in kids)
        n = e if all(a is b for a, b in zip(kids, new_kids)) else e.with_children(new_kids)
        if isinstance(n, SubqueryExpression):
            new_plan = resolve_eval_mode(n.plan, ctx)
            n = n if new_plan is n.plan else n.with_plan(new_plan)
        elif n.ansi_mode:
            n = n.to_legacy_mode()
        if n is not e and id(e) in ctx.implicit_casts:
            ctx.mark_implicit(n)
        return n

    return plan.transform_up(lambda p: p.map_expressions(fix))
